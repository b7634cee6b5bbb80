/* fluid.c — lift, drag and viscous forces of a body moving through a fluid: MuJoCo 2.2.2's inertia-box model
 * (the default) and, for a body with a geom of fluidshape="ellipsoid", its ellipsoid model on each geom.
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
#include "rl_fluid_box.h"

#define MINVAL ((real)1e-15)
#define RL_PI  ((real)3.14159265358979323846)

/* the sides of body b's equivalent inertia box (rl_fluid_box_sides, formed at import in double: body_fluidbox) */
void rl_fluid_box(const rl_model *m, int b, real box[3]) {
  for (int i = 0; i < 3; i++) box[i] = m->body_fluidbox[3 * b + i];
}

/* body b's velocity at point x in frame R, minus the wind, in that frame: (Rᵀω, Rᵀ(v_c − (x − c) × ω − wind))
   from cvel = (ω, v_c) at the root's subtree COM c */
void rl_fluid_velocity(const rl_model *m, const rl_data *d, int b, const real x[3], const real R[9], real w[3],
                       real v[3]) {
  const real *cv = d->cvel + 6 * b;
  real dif[3], t[3], lin[3], wind[3];
  rl_v3_sub(dif, x, d->subtree_com + 3 * m->body_rootid[b]);
  rl_v3_cross(t, dif, cv);
  rl_v3_sub(lin, cv + 3, t);
  rl_m3_tmulv(w, R, cv);
  rl_m3_tmulv(v, R, lin);
  rl_m3_tmulv(wind, R, m->opt.wind);
  rl_v3_sub(v, v, wind);
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

/* ---- the ellipsoid model: per geom with interaction coefficient c ≠ 0, semi-axes s of the geom's
 * ellipsoid, the local velocity (ω, v) at the geom centre in geom axes (v minus the wind), density ρ, viscosity β:
 *   added mass        τ += (ρ m_v∘v) × v + (ρ I_v∘ω) × ω,   f += (ρ m_v∘v) × ω
 *   Magnus            f += c_M ρ V (ω × v),   V = 4π s₀s₁s₂/3
 *   Kutta lift        f += c_K ρ cos α A_proj ((n × v) × v),  n = ((s₁s₂)²v₀, (s₂s₀)²v₁, (s₀s₁)²v₂),
 *                     A_proj = π √(Σ(s_j s_k)⁴ v_i² / Σ(s_j s_k v_i)²),  cos α = Σ(s_j s_k v_i)² / (|v| Σ(s_j s_k)⁴ v_i²)
 *   drag              f −= (3πDβ + ρ|v|(c_b A_proj + c_s (A_max − A_proj))) v,  D = 2(s₀+s₁+s₂)/3, A_max = π d_max d_mid
 *   angular drag      τ −= (πD³β + ρ|μ∘ω|) ω,  μ_i = c_a I_i + c_s (I_max − I_i),
 *                     I_i = 8π s_i max(s_j, s_k)⁴/15,  I_max = 8π d_mid d_max⁴/15
 * all scaled by c, rotated to world axes and applied at the geom centre (MuJoCo's mj_ellipsoidFluidModel). */

static real pow2(real x) { return x * x; }
static real pow4(real x) { return (x * x) * (x * x); }

/* the semi-axes of geom g's ellipsoid (MuJoCo's mju_geomSemiAxes): sphere r,r,r; capsule r,r,h+r; cylinder
   r,r,h; otherwise the three sizes */
void rl_geom_semiaxes(const rl_model *m, int g, real s[3]) {
  const real *z = m->geom_size + 3 * g;
  switch (m->geom_type[g]) {
  case RL_GEOM_SPHERE: s[0] = s[1] = s[2] = z[0]; break;
  case RL_GEOM_CAPSULE: s[0] = s[1] = z[0], s[2] = z[1] + z[0]; break;
  case RL_GEOM_CYLINDER: s[0] = s[1] = z[0], s[2] = z[1]; break;
  default: s[0] = z[0], s[1] = z[1], s[2] = z[2]; break;
  }
}

/* 1 if a geom of body b asks for the ellipsoid model (its interaction coefficient is positive) */
int rl_fluid_ellipsoid_body(const rl_model *m, int b) {
  for (int j = 0; j < m->body_geomnum[b]; j++)
    if (m->geom_fluid[RL_NFLUID * (m->body_geomadr[b] + j)] > 0) return 1;
  return 0;
}

/* added-mass force and torque of the potential flow moving with the geom (the qacc term is left out, as in
   MuJoCo) */
static void added_mass(const real w[3], const real v[3], real rho, const real vm[3], const real vi[3], real lf[6]) {
  real p[3], L[3], f[3], t1[3], t2[3];
  for (int i = 0; i < 3; i++) p[i] = rho * vm[i] * v[i], L[i] = rho * vi[i] * w[i];
  rl_v3_cross(f, p, w);
  rl_v3_cross(t1, p, v);
  rl_v3_cross(t2, L, w);
  for (int i = 0; i < 3; i++) lf[i] += t1[i], lf[i] += t2[i], lf[3 + i] += f[i];
}

/* Magnus and Kutta lift, linear and quadratic drag and angular drag (the block comment above) */
static void viscous_forces(const real w[3], const real v[3], real rho, real beta, const real s[3], const real *fl,
                           real lf[6]) {
  real cb = fl[1], cs = fl[2], ca = fl[3], ck = fl[4], cm = fl[5];
  real volume = (real)4 / 3 * RL_PI * s[0] * s[1] * s[2];
  real dmax = s[0] > s[1] ? s[0] : s[1], dmin = s[0] < s[1] ? s[0] : s[1];
  dmax = dmax > s[2] ? dmax : s[2];
  dmin = dmin < s[2] ? dmin : s[2];
  real dmid = s[0] + s[1] + s[2] - dmax - dmin, Amax = RL_PI * dmax * dmid;
  real magnus[3];
  rl_v3_cross(magnus, w, v);
  for (int i = 0; i < 3; i++) magnus[i] *= cm * rho * volume;
  real den = pow4(s[1] * s[2]) * pow2(v[0]) + pow4(s[2] * s[0]) * pow2(v[1]) + pow4(s[0] * s[1]) * pow2(v[2]);
  real num = pow2(s[1] * s[2] * v[0]) + pow2(s[2] * s[0] * v[1]) + pow2(s[0] * s[1] * v[2]);
  real Aproj = RL_PI * rl_sqrt(den / (num > MINVAL ? num : MINVAL));
  real n[3] = {pow2(s[1] * s[2]) * v[0], pow2(s[2] * s[0]) * v[1], pow2(s[0] * s[1]) * v[2]};
  real vn = rl_sqrt(rl_v3_dot(v, v)), cden = vn * den;
  real cosa = num / (cden > MINVAL ? cden : MINVAL), circ[3], kutta[3];
  rl_v3_cross(circ, n, v);
  for (int i = 0; i < 3; i++) circ[i] *= ck * rho * cosa * Aproj;
  rl_v3_cross(kutta, circ, v);
  real D = (real)2 / 3 * (s[0] + s[1] + s[2]);
  real Imax = (real)8 / 15 * RL_PI * dmid * pow4(dmax), mom[3];
  for (int i = 0; i < 3; i++) {
    real a = s[(i + 1) % 3] > s[(i + 2) % 3] ? s[(i + 1) % 3] : s[(i + 2) % 3];
    real Ii = (real)8 / 15 * RL_PI * s[i] * pow4(a);
    mom[i] = w[i] * (ca * Ii + cs * (Imax - Ii));
  }
  real lin = beta * 3 * RL_PI * D + rho * vn * (Aproj * cb + cs * (Amax - Aproj));
  real ang = beta * RL_PI * D * D * D + rho * rl_sqrt(rl_v3_dot(mom, mom));
  for (int i = 0; i < 3; i++) {
    lf[i] -= ang * w[i];
    lf[3 + i] += magnus[i] + kutta[i] - lin * v[i];
  }
}

/* the ellipsoid model on every geom of body b with a non-zero interaction coefficient */
static void ellipsoid_body(const rl_model *m, rl_data *d, int b, real *jp, real *jr) {
  for (int j = 0; j < m->body_geomnum[b]; j++) {
    int g = m->body_geomadr[b] + j;
    const real *fl = m->geom_fluid + RL_NFLUID * g, *R = d->geom_xmat + 9 * g;
    if (fl[0] == 0) continue;
    real s[3], w[3], v[3], lf[6] = {0, 0, 0, 0, 0, 0};
    rl_geom_semiaxes(m, g, s);
    rl_fluid_velocity(m, d, b, d->geom_xpos + 3 * g, R, w, v);
    added_mass(w, v, m->opt.density, fl + 6, fl + 9, lf);
    viscous_forces(w, v, m->opt.density, m->opt.viscosity, s, fl, lf);
    for (int i = 0; i < 6; i++) lf[i] *= fl[0];
    real wt[3], wf[3];
    rl_m3_mulv(wt, R, lf);
    rl_m3_mulv(wf, R, lf + 3);
    apply_ft(m, d, wf, wt, d->geom_xpos + 3 * g, b, jp, jr);
  }
}

void rl_fluid(const rl_model *m, rl_data *d) {
  size_t mark = rl_arena_mark(d);
  real *jp = rl_arena_take(d, 3 * (size_t)m->nv), *jr = rl_arena_take(d, 3 * (size_t)m->nv);
  for (int b = 1; b < m->nbody; b++) {
    if (m->body_mass[b] < MINVAL) continue;
    if (rl_fluid_ellipsoid_body(m, b)) {
      ellipsoid_body(m, d, b, jp, jr);
      continue;
    }
    real box[3], w[3], v[3], tau[3], f[3], wf[3], wt[3];
    rl_fluid_box(m, b, box);
    rl_fluid_velocity(m, d, b, d->xipos + 3 * b, d->ximat + 9 * b, w, v);
    rl_fluid_box_forces(m->opt.density, m->opt.viscosity, box, w, v, tau, f);
    rl_m3_mulv(wt, d->ximat + 9 * b, tau);
    rl_m3_mulv(wf, d->ximat + 9 * b, f);
    apply_ft(m, d, wf, wt, d->xipos + 3 * b, b, jp, jr);
  }
  rl_arena_release(d, mark);
}
