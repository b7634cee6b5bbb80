/* rl_fluid_box.h — MuJoCo 2.2.2's inertia-box fluid model for one body as scalar formulas, header-only so
 * that the generalized-coordinate passive forces (fluid.c) and the AVBD step (also compiled by nvcc in
 * engine/cuda/) share one source.  The body is replaced by the uniform box with its mass and principal
 * inertia; the forces act at its COM, in its inertia frame, from the velocity relative to the wind. */
#ifndef RL_FLUID_BOX_H
#define RL_FLUID_BOX_H
#include <math.h>
#include "rl_engine.h"

/* the box sides box_i = √(6·max(ε, I_j + I_k − I_i)/m) (i, j, k a cyclic permutation; ε = 1e-15), in double in
   both precisions: a thin body's side is a difference of its principal moments, which moments rounded to float
   would carry as ε·I_max/I_min.  The importer forms them once from MuJoCo's inertia (rl_model.body_fluidbox). */
static inline void rl_fluid_box_sides(const double I[3], double mass, double box[3]) {
  double s[3] = {I[1] + I[2] - I[0], I[0] + I[2] - I[1], I[0] + I[1] - I[2]};
  for (int i = 0; i < 3; i++) box[i] = sqrt((s[i] > 1e-15 ? s[i] : 1e-15) / mass * 6);
}

/* local torque τ and force f of the box at local angular velocity w and linear velocity v (wind removed):
 *   viscous (Stokes, sphere of diameter d = mean box side, viscosity β):  τ = −π d³ β ω,  f = −3π d β v
 *   quadratic drag (density ρ):  f_i = −½ ρ box_j box_k |v_i| v_i,  τ_i = −ρ box_i (box_j⁴ + box_k⁴) |ω_i| ω_i / 64 */
RL_HD void rl_fluid_box_forces(real density, real viscosity, const real box[3], const real w[3], const real v[3],
                               real tau[3], real f[3]) {
  const real pi = (real)3.14159265358979323846;
  for (int i = 0; i < 3; i++) tau[i] = f[i] = 0;
  if (viscosity > 0) {
    real diam = (box[0] + box[1] + box[2]) / 3;
    for (int i = 0; i < 3; i++) tau[i] = w[i] * (-pi * diam * diam * diam * viscosity);
    for (int i = 0; i < 3; i++) f[i] = v[i] * (-3 * pi * diam * viscosity);
  }
  if (density > 0) {
    real rho = density;
    f[0] -= (real)0.5 * rho * box[1] * box[2] * rl_fabs(v[0]) * v[0];
    f[1] -= (real)0.5 * rho * box[0] * box[2] * rl_fabs(v[1]) * v[1];
    f[2] -= (real)0.5 * rho * box[0] * box[1] * rl_fabs(v[2]) * v[2];
    real b4[3];
    for (int i = 0; i < 3; i++) b4[i] = box[i] * box[i] * box[i] * box[i];
    tau[0] -= rho * box[0] * (b4[1] + b4[2]) * rl_fabs(w[0]) * w[0] / 64;
    tau[1] -= rho * box[1] * (b4[0] + b4[2]) * rl_fabs(w[1]) * w[1] / 64;
    tau[2] -= rho * box[2] * (b4[0] + b4[1]) * rl_fabs(w[2]) * w[2] / 64;
  }
}
#endif
