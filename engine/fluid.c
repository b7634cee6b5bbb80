/* fluid.c — lift, drag and viscous forces of a body moving through a fluid (MuJoCo 2.2.2's inertia-box
 * model, the default when no geom asks for the ellipsoid model).
 *
 * Each body with mass is replaced by the uniform box with its mass and principal inertia; the forces act
 * at its COM, in its inertia frame, from the velocity relative to the wind:
 *   box_i = √(6·max(ε, I_j + I_k − I_i)/m)                              (i, j, k a cyclic permutation)
 *   viscous (Stokes, sphere of diameter d = mean box side, viscosity β):  τ = −π d³ β ω,  f = −3π d β v
 *   quadratic drag (density ρ):  f_i = −½ ρ box_j box_k |v_i| v_i,  τ_i = −ρ box_i (box_j⁴ + box_k⁴) |ω_i| ω_i / 64
 * and enter qfrc_passive as J_pᵀ f + J_rᵀ τ at the COM.
 */
#include <string.h>
#include "rl_engine.h"
#include "rl_so3.h"

#define MINVAL ((real)1e-15)
#define RL_PI  ((real)3.14159265358979323846)

/* the sides of body b's equivalent inertia box */
static void inertia_box(const rl_model *m, int b, real box[3]) {
  const real *I = m->body_inertia + 3 * b;
  real mass = m->body_mass[b], s[3] = {I[1] + I[2] - I[0], I[0] + I[2] - I[1], I[0] + I[1] - I[2]};
  for (int i = 0; i < 3; i++) box[i] = rl_sqrt((s[i] > MINVAL ? s[i] : MINVAL) / mass * 6);
}

/* body b's velocity at its COM in its inertia frame, minus the wind: (ω, v − w) with
   v = v_c − (x_i − c) × ω from cvel at the root's subtree COM c */
static void local_velocity(const rl_model *m, const rl_data *d, int b, real w[3], real v[3]) {
  const real *cv = d->cvel + 6 * b, *R = d->ximat + 9 * b;
  real dif[3], t[3], lin[3], wind[3];
  rl_v3_sub(dif, d->xipos + 3 * b, d->subtree_com + 3 * m->body_rootid[b]);
  rl_v3_cross(t, dif, cv);
  rl_v3_sub(lin, cv + 3, t);
  rl_m3_tmulv(w, R, cv);
  rl_m3_tmulv(v, R, lin);
  rl_m3_tmulv(wind, R, m->opt.wind);
  rl_v3_sub(v, v, wind);
}

/* the local force and torque of the inertia-box model (file comment) */
static void box_forces(const rl_option *o, const real box[3], const real w[3], const real v[3], real tau[3],
                       real f[3]) {
  rl_v3_zero(tau);
  rl_v3_zero(f);
  if (o->viscosity > 0) {
    real diam = (box[0] + box[1] + box[2]) / 3;
    for (int i = 0; i < 3; i++) tau[i] = w[i] * (-RL_PI * diam * diam * diam * o->viscosity);
    for (int i = 0; i < 3; i++) f[i] = v[i] * (-3 * RL_PI * diam * o->viscosity);
  }
  if (o->density > 0) {
    real rho = o->density;
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

/* qfrc += J_pᵀ f + J_rᵀ τ for the point p on body b (MuJoCo's mj_applyFT, in its summation order) */
static void apply_ft(const rl_model *m, rl_data *d, const real f[3], const real tau[3], const real p[3], int b,
                     real *jp, real *jr) {
  int nv = m->nv;
  rl_jac_point(m, d, jp, jr, p, b);
  for (int j = 0; j < nv; j++) {
    real x = 0;
    for (int k = 0; k < 3; k++) x += jp[k * nv + j] * f[k];
    d->qfrc_passive[j] += x;
  }
  for (int j = 0; j < nv; j++) {
    real x = 0;
    for (int k = 0; k < 3; k++) x += jr[k * nv + j] * tau[k];
    d->qfrc_passive[j] += x;
  }
}

void rl_fluid(const rl_model *m, rl_data *d) {
  size_t mark = rl_arena_mark(d);
  real *jp = rl_arena_take(d, 3 * (size_t)m->nv), *jr = rl_arena_take(d, 3 * (size_t)m->nv);
  for (int b = 1; b < m->nbody; b++) {
    if (m->body_mass[b] < MINVAL) continue;
    real box[3], w[3], v[3], tau[3], f[3], wf[3], wt[3];
    inertia_box(m, b, box);
    local_velocity(m, d, b, w, v);
    box_forces(&m->opt, box, w, v, tau, f);
    rl_m3_mulv(wt, d->ximat + 9 * b, tau);
    rl_m3_mulv(wf, d->ximat + 9 * b, f);
    apply_ft(m, d, wf, wt, d->xipos + 3 * b, b, jp, jr);
  }
  rl_arena_release(d, mark);
}
