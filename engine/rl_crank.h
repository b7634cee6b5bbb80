/* rl_crank.h — a slider-crank transmission's length and its derivatives as MuJoCo 2.2.2 computes them,
 * header-only so that the generalized-coordinate actuation (actuation.c) and the AVBD step (also compiled by
 * nvcc in engine/cuda/) share one source. */
#ifndef RL_CRANK_H
#define RL_CRANK_H
#include "rl_engine.h"
#include "rl_math.h"

/* Crank length for crank pin c, slider site s with unit axis a (its z) and rod length ρ, v = c − s:
     l = a·v − √det,  det = (a·v)² + ρ² − v·v   (det ≤ 0, a rod too short: l = a·v, ∂l/∂v = a, ∂l/∂a = v)
     ∂l/∂v = (1 − a·v/√det)·a + v/√det,  ∂l/∂a = (1 − a·v/√det)·v
   returns l, fills dldv and dlda. */
RL_HD real rl_crank_length(const real a[3], const real v[3], real rod, real dldv[3], real dlda[3]) {
  real av = rl_v3_dot(a, v), det = av * av + rod * rod - rl_v3_dot(v, v);
  if (det <= 0) {
    rl_v3_copy(dldv, a);
    rl_v3_copy(dlda, v);
    return av;
  }
  real sdet = rl_sqrt(det), k = 1 - av / sdet;
  for (int i = 0; i < 3; i++) {
    dldv[i] = k * a[i] + v[i] * (1 / sdet); /* MuJoCo's order of operations */
    dlda[i] = k * v[i];
  }
  return av - sdet;
}

#endif
