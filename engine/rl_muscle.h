/* rl_muscle.h — MuJoCo 2.2.2's muscle curves, activation rates and activation update as scalar formulas, header-only so that
 * the generalized-coordinate actuation (actuation.c) and the AVBD step (also compiled by nvcc in
 * engine/cuda/) share one source. */
#ifndef RL_MUSCLE_H
#define RL_MUSCLE_H
#include "rl_engine.h"

/* MuJoCo's mjMINVAL: the floor of every divisor below */
#define RL_MUSCLE_MINVAL ((real)1e-15)

RL_HD real rl_muscle_clamp(real x, real lo, real hi) { return x < lo ? lo : (x > hi ? hi : x); }
RL_HD real rl_muscle_maxr(real a, real b) { return a >= b ? a : b; }

/* normalized muscle length L = range₀ + (l − lr₀)/L₀ with the optimal length L₀ = (lr₁ − lr₀)/(range₁ − range₀)
   (prm = range[2], force, scale, lmin, lmax, vmax, fpmax, fvmax; lr the actuator's lengthrange) */
RL_HD real rl_muscle_l0(const real lr[2], const real *prm) { return (lr[1] - lr[0]) / rl_muscle_maxr(RL_MUSCLE_MINVAL, prm[1] - prm[0]); }

/* peak force: prm force, or scale / acc0 when force < 0 */
RL_HD real rl_muscle_peak(real acc0, const real *prm) { return prm[2] < 0 ? prm[3] / rl_muscle_maxr(RL_MUSCLE_MINVAL, acc0) : prm[2]; }

/* the force-length curve FL of the muscle gain (MuJoCo's mju_muscleGain): half-quadratics rising on
   [lmin, a], falling from 1 at L = 1 to 0 at lmax through b, a = (lmin + 1)/2, b = (1 + lmax)/2 */
RL_HD real rl_muscle_fl(real L, real lmin, real lmax) {
  real a = (real)0.5 * (lmin + 1), b = (real)0.5 * (1 + lmax), x;
  if (L >= lmin && L <= a) {
    x = (L - lmin) / rl_muscle_maxr(RL_MUSCLE_MINVAL, a - lmin);
    return (real)0.5 * x * x;
  }
  if (L <= 1) {
    x = (1 - L) / rl_muscle_maxr(RL_MUSCLE_MINVAL, 1 - a);
    return 1 - (real)0.5 * x * x;
  }
  if (L <= b) {
    x = (L - 1) / rl_muscle_maxr(RL_MUSCLE_MINVAL, b - 1);
    return 1 - (real)0.5 * x * x;
  }
  if (L <= lmax) {
    x = (lmax - L) / rl_muscle_maxr(RL_MUSCLE_MINVAL, lmax - b);
    return (real)0.5 * x * x;
  }
  return 0;
}

/* active force-length-velocity gain (MuJoCo's mju_muscleGain), negative (a muscle pulls):
   FL as rl_muscle_fl; FV: 0 for V ≤ −1, (V + 1)² up to 0, fvmax − (y − V)²/y up to y = fvmax − 1, then fvmax;
   V = l̇ / (L₀·vmax);  gain = −F·FL·FV. */
RL_HD real rl_muscle_gain(real len, real vel, const real lr[2], real acc0, const real *prm) {
  real vmax = prm[6], fvmax = prm[8], force = rl_muscle_peak(acc0, prm), L0 = rl_muscle_l0(lr, prm);
  real L = prm[0] + (len - lr[0]) / rl_muscle_maxr(RL_MUSCLE_MINVAL, L0), V = vel / rl_muscle_maxr(RL_MUSCLE_MINVAL, L0 * vmax);
  real FL = rl_muscle_fl(L, prm[4], prm[5]);
  real FV, y = fvmax - 1;
  if (V <= -1) FV = 0;
  else if (V <= 0) FV = (V + 1) * (V + 1);
  else if (V <= y) FV = fvmax - (y - V) * (y - V) / rl_muscle_maxr(RL_MUSCLE_MINVAL, y);
  else FV = fvmax;
  return -force * FL * FV;
}

/* passive muscle force (MuJoCo's mju_muscleBias): 0 for L ≤ 1, −F·fpmax·x²/2 up to b = (1 + lmax)/2
   (x = (L − 1)/(b − 1)), then linear −F·fpmax·(½ + (L − b)/(b − 1)) */
RL_HD real rl_muscle_bias(real len, const real lr[2], real acc0, const real *prm) {
  real lmax = prm[5], fpmax = prm[7], force = rl_muscle_peak(acc0, prm);
  real L0 = rl_muscle_l0(lr, prm), L = prm[0] + (len - lr[0]) / rl_muscle_maxr(RL_MUSCLE_MINVAL, L0), b = (real)0.5 * (1 + lmax);
  if (L <= 1) return 0;
  if (L <= b) {
    real x = (L - 1) / rl_muscle_maxr(RL_MUSCLE_MINVAL, b - 1);
    return -force * fpmax * (real)0.5 * x * x;
  }
  real x = (L - b) / rl_muscle_maxr(RL_MUSCLE_MINVAL, b - 1);
  return -force * fpmax * ((real)0.5 + x);
}

/* ∂(passive force)/∂l of rl_muscle_bias: 0 for L ≤ 1, −F·fpmax·x/((b − 1)·L₀) up to b, then −F·fpmax/((b − 1)·L₀)
   (≤ 0: the passive force pulls harder as the muscle lengthens) */
RL_HD real rl_muscle_bias_len(real len, const real lr[2], real acc0, const real *prm) {
  real lmax = prm[5], fpmax = prm[7], force = rl_muscle_peak(acc0, prm);
  real L0 = rl_muscle_l0(lr, prm), L = prm[0] + (len - lr[0]) / rl_muscle_maxr(RL_MUSCLE_MINVAL, L0), b = (real)0.5 * (1 + lmax);
  real w = rl_muscle_maxr(RL_MUSCLE_MINVAL, b - 1) * rl_muscle_maxr(RL_MUSCLE_MINVAL, L0);
  if (L <= 1) return 0;
  if (L <= b) return -force * fpmax * ((L - 1) / rl_muscle_maxr(RL_MUSCLE_MINVAL, b - 1)) / w;
  return -force * fpmax / w;
}

/* muscle activation dynamics (MuJoCo's mju_muscleDynamics, Millard et al. 2013): u, a clamped to [0, 1],
   τ = τ_act·(½ + 3a/2) when u > act, else τ_deact/(½ + 3a/2);  ȧ = (u − act)/τ */
RL_HD real rl_muscle_dynamics(real ctrl, real act, const real *prm) {
  real uc = rl_muscle_clamp(ctrl, 0, 1), ac = rl_muscle_clamp(act, 0, 1);
  real tau = uc > act ? prm[0] * ((real)0.5 + (real)1.5 * ac) : prm[1] / ((real)0.5 + (real)1.5 * ac);
  return (uc - act) / rl_muscle_maxr(RL_MUSCLE_MINVAL, tau);
}

/* ȧ of actuator u with activation a and (clamped) control c: integrator c, filter (c − a)/τ, muscle */
RL_HD real rl_act_rate(const rl_model *m, int u, real c, real a) {
  const real *p = m->actuator_dynprm + RL_NDYN * u;
  switch (m->actuator_dyntype[u]) {
  case RL_DYN_INTEGRATOR: return c;
  case RL_DYN_FILTER: return (c - a) / rl_muscle_maxr(RL_MUSCLE_MINVAL, p[0]);
  default: return rl_muscle_dynamics(c, a, p);
  }
}

/* act ← act + h·rate for the na activations (the last na actuators), clamped to actrange where actlimited */
RL_HD void rl_act_euler(const rl_model *m, real *act, const real *rate, real h) {
  for (int a = 0; a < m->na; a++) {
    int u = a + m->nu - m->na;
    act[a] += h * rate[a];
    if (m->actuator_actlimited[u]) act[a] = rl_muscle_clamp(act[a], m->actuator_actrange[2 * u], m->actuator_actrange[2 * u + 1]);
  }
}
#endif
