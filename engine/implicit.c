/* implicit.c — MuJoCo 2.2.2's implicit-in-velocity integrator (mj_implicit).
 *
 * The smooth force f(q, q̇) = qfrc_passive + qfrc_actuator − qfrc_bias is linearised in q̇ about the
 * current velocity, D = ∂f/∂q̇, and the step solves
 *   (M − h·D)·q̈' = qfrc_smooth + qfrc_constraint,   q̇ ← q̇ + h·q̈',   q ← q ⊕ h·q̇
 * (activations as Euler).  D is MuJoCo's qDeriv: the sum of
 *   dof damping                −diag(b)
 *   tendon damping             −b_k·J_kᵀJ_k
 *   fluid forces               inertia box: Jᵀ·R·diag(∂F_local/∂v_local)·Rᵀ·J at each body's COM;
 *                              ellipsoid model: Jᵀ·B·J per geom, B the 6×6 ∂(τ, f)/∂(ω, v) in geom axes
 *   actuators                  (bias_vel + gain_vel·input)·m_uᵀm_u: affine bias biasprm[2], affine gain
 *                              gainprm[2] or the muscle gain's ∂/∂l̇, input ctrl (or act with dynamics)
 *   −∂qfrc_bias/∂q̇             forward-mode derivative of the recursive Newton–Euler pass
 * kept only where MuJoCo's derivative sparsity has entries: (i, j) with j = i, an ancestor or a descendant
 * of i in the dof tree (MuJoCo adds J'BJ terms only there, so a tendon across two branches loses its
 * cross terms).  M − h·D is factored without pivoting in reverse dof order (eliminating a leaf touches only
 * its ancestors, so the tree pattern has no fill-in), as MuJoCo's mju_factorLUSparse.  Cost: O(nv²·nbody)
 * for the Newton–Euler derivative (dense columns, as MuJoCo 2.2.2's), O(Σ depth²) for the factor. */
#include <string.h>
#include "rl_arena.h"
#include "rl_engine.h"
#include "rl_spatial.h"

#define MINVAL ((real)1e-15)
#define RL_PI  ((real)3.14159265358979323846)

size_t rl_implicit_arena(const rl_model *m) {
  if (m->opt.integrator != RL_INT_IMPLICIT) return 0;
  size_t nv = (size_t)m->nv, nb = (size_t)m->nbody;
  /* rl_implicit: D, M − hD, the force (2nv² + nv); rl_qderiv inside it: Dcvel/Dcacc/Dcfrc (18·nb·nv), Dcdofdot
     (18nv), the two point Jacobians (6nv), the pattern copy (nv²) */
  return 3 * nv * nv + 18 * nb * nv + 25 * nv + 64;
}

/* D += s·aᵀa for a dense row a of length nv (restricted to the pattern later) */
static void add_outer(int nv, real *D, const real *a, real s) {
  for (int i = 0; i < nv; i++) {
    if (a[i] == 0) continue;
    real ai = s * a[i];
    for (int j = 0; j < nv; j++) D[(size_t)i * nv + j] += ai * a[j];
  }
}

/* ∂qfrc_passive/∂q̇ of the joint and tendon dampers: −diag(b) − Σ_k b_k J_kᵀJ_k */
static void damping_deriv(const rl_model *m, const rl_data *d, real *D) {
  int nv = m->nv;
  for (int i = 0; i < nv; i++) D[(size_t)i * nv + i] -= m->dof_damping[i];
  for (int k = 0; k < m->ntendon; k++)
    if (m->tendon_damping[k] > 0) add_outer(nv, D, d->ten_J + (size_t)k * nv, -m->tendon_damping[k]);
}

/* ---- the ellipsoid fluid model's velocity derivative (MuJoCo 2.2.2's mjd_ellipsoidFluid).  Per geom, B is
   the 6×6 ∂(τ, f)/∂(ω, v) of the local forces of fluid.c (row-major, B[6i + j] = ∂lf_i/∂lv_j), and
   D += Jᵀ B J with J = [Rᵀ J_r; Rᵀ J_p] the geom-frame Jacobian at the geom centre. */

static real sq(real x) { return x * x; }

/* B's 3×3 block (force block r, velocity block c) += M (row-major) */
static void add_block(real B[36], const real M[9], int r, int c) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) B[6 * (3 * r + i) + 3 * c + j] += M[3 * i + j];
}

/* ∂(a × b)/∂a = −[b]× (Da) and ∂(a × b)/∂b = [a]× (Db), row-major */
static void cross_deriv(const real a[3], const real b[3], real Da[9], real Db[9]) {
  real da[9] = {0, b[2], -b[1], -b[2], 0, b[0], b[1], -b[0], 0};
  real db[9] = {0, -a[2], a[1], a[2], 0, -a[0], -a[1], a[0], 0};
  memcpy(Da, da, sizeof da);
  memcpy(Db, db, sizeof db);
}

/* added mass: τ += L × ω + p × v, f += p × ω with p = ρ m_v∘v, L = ρ I_v∘ω */
static void added_mass_deriv(real B[36], const real w[3], const real v[3], real rho, const real vm[3],
                             const real vi[3]) {
  real p[3], L[3], Da[9], Db[9];
  for (int i = 0; i < 3; i++) p[i] = rho * vm[i] * v[i], L[i] = rho * vi[i] * w[i];
  cross_deriv(L, w, Da, Db); /* ∂(L × ω)/∂ω = Da·diag(ρ I_v) + Db */
  add_block(B, Db, 0, 0);
  for (int k = 0; k < 9; k++) Da[k] *= rho * vi[k % 3];
  add_block(B, Da, 0, 0);
  cross_deriv(p, v, Da, Db); /* ∂(p × v)/∂v */
  add_block(B, Db, 0, 1);
  for (int k = 0; k < 9; k++) Da[k] *= rho * vm[k % 3];
  add_block(B, Da, 0, 1);
  cross_deriv(p, w, Da, Db); /* ∂(p × ω)/∂ω = Db, ∂/∂v = Da·diag(ρ m_v) */
  add_block(B, Db, 1, 0);
  for (int k = 0; k < 9; k++) Da[k] *= rho * vm[k % 3];
  add_block(B, Da, 1, 1);
}

/* Magnus: f = k ω × v, k = c_M ρ V */
static void magnus_deriv(real B[36], const real w[3], const real v[3], real rho, const real s[3], real cm) {
  real k = cm * rho * (real)4 / 3 * RL_PI * s[0] * s[1] * s[2], kw[3], kv[3], Da[9], Db[9];
  for (int i = 0; i < 3; i++) kw[i] = k * w[i], kv[i] = k * v[i];
  cross_deriv(kw, kv, Da, Db);
  add_block(B, Da, 1, 0);
  add_block(B, Db, 1, 1);
}

/* Kutta lift f = c_K ρ cos α A_proj ((n × v) × v): with a, b, c = (s₁s₂)², (s₂s₀)², (s₀s₁)², P = a v₀² + b v₁² + c v₂²,
   Q = a² v₀² + b² v₁² + c² v₂², |v|²: ∂f/∂v = π c_K ρ / √(Q P |v|²) · ( (2P (c_j − c_i) + g_i t_j) v_i v_j − δ_ij g_i P ),
   g = (v₁²(a−b) + v₂²(a−c), v₀²(b−a) + v₂²(b−c), v₀²(c−a) + v₁²(c−b)), t_j = c_j² P/Q − c_j + P/|v|² */
static void kutta_deriv(real M[9], const real v[3], real rho, const real s[3], real ck) {
  real cf[3] = {sq(s[1] * s[2]), sq(s[2] * s[0]), sq(s[0] * s[1])};
  real xx = v[0] * v[0], yy = v[1] * v[1], zz = v[2] * v[2];
  real Q = cf[0] * cf[0] * xx + cf[1] * cf[1] * yy + cf[2] * cf[2] * zz, P = cf[0] * xx + cf[1] * yy + cf[2] * zz;
  real n2 = xx + yy + zz, r = rl_sqrt(Q * P * n2);
  real scale = RL_PI * ck * rho / (r > MINVAL ? r : MINVAL);
  real g[3] = {yy * (cf[0] - cf[1]) + zz * (cf[0] - cf[2]), xx * (cf[1] - cf[0]) + zz * (cf[1] - cf[2]),
               xx * (cf[2] - cf[0]) + yy * (cf[2] - cf[1])};
  real pq = P / (Q > MINVAL ? Q : MINVAL), pn = P / (n2 > MINVAL ? n2 : MINVAL), t[3];
  for (int j = 0; j < 3; j++) t[j] = cf[j] * cf[j] * pq - cf[j] + pn;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      real e = (2 * P * (cf[j] - cf[i]) + g[i] * t[j]) * v[i] * v[j];
      if (i == j) e -= g[i] * P;
      M[3 * i + j] = scale * e;
    }
}

/* drag f = −(3πDβ + ρ|v|(c_b A_proj + c_s (A_max − A_proj))) v:
   ∂f/∂v = −q (v vᵀ + |v|² I)/|v| − v (∂(ρ|v|(c_b − c_s) A_proj)/∂v)ᵀ − 3πDβ I, q = ρ(c_b A_proj + c_s(A_max − A_proj)) */
static void drag_deriv(real M[9], const real v[3], real rho, real beta, const real s[3], real cb, real cs) {
  real dmax = s[0] > s[1] ? s[0] : s[1], dmin = s[0] < s[1] ? s[0] : s[1];
  dmax = dmax > s[2] ? dmax : s[2];
  dmin = dmin < s[2] ? dmin : s[2];
  real dmid = s[0] + s[1] + s[2] - dmax - dmin, D = (real)2 / 3 * (s[0] + s[1] + s[2]), Amax = RL_PI * dmax * dmid;
  real a = sq(s[1] * s[2]), b = sq(s[2] * s[0]), c = sq(s[0] * s[1]);
  real x = v[0], y = v[1], z = v[2], xx = x * x, yy = y * y, zz = z * z;
  real den = a * a * xx + b * b * yy + c * c * zz, num = a * xx + b * yy + c * zz;
  real r = rl_sqrt(num * num * num * den), dA = RL_PI / (r > MINVAL ? r : MINVAL);
  real Aproj = RL_PI * rl_sqrt(den / (num > MINVAL ? num : MINVAL));
  real norm = rl_sqrt(xx + yy + zz), inv = 1 / (norm > MINVAL ? norm : MINVAL);
  real lin = beta * 3 * RL_PI * D, quad = rho * (Aproj * cb + cs * (Amax - Aproj)), ac = rho * norm * (cb - cs);
  real dAp[3] = {ac * dA * a * x * (b * yy * (a - b) + c * zz * (a - c)),
                 ac * dA * b * y * (a * xx * (b - a) + c * zz * (b - c)),
                 ac * dA * c * z * (a * xx * (c - a) + b * yy * (c - b))};
  real inner = xx + yy + zz;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      real e = v[i] * v[j] + (i == j ? inner : 0);
      M[3 * i + j] = e * (-quad * inv) - v[i] * dAp[j] - (i == j ? lin : 0);
    }
}

/* angular drag τ = −(πD³β + ρ|μ∘ω|) ω, μ_i = c_a I_i + c_s(I_max − I_i):
   ∂τ/∂ω = (Σ_k ω_k m_k − πD³β) I + m ωᵀ,  m_k = −ρ ω_k μ_k² / |μ∘ω| */
static void torque_deriv(real M[9], const real w[3], real rho, real beta, const real s[3], real cs, real ca) {
  real dmax = s[0] > s[1] ? s[0] : s[1], dmin = s[0] < s[1] ? s[0] : s[1];
  dmax = dmax > s[2] ? dmax : s[2];
  dmin = dmin < s[2] ? dmin : s[2];
  real dmid = s[0] + s[1] + s[2] - dmax - dmin, D = (real)2 / 3 * (s[0] + s[1] + s[2]);
  real Imax = (real)8 / 15 * RL_PI * dmid * sq(dmax) * sq(dmax), mu[3], mv[3], mm[3];
  for (int i = 0; i < 3; i++) {
    real e = s[(i + 1) % 3] > s[(i + 2) % 3] ? s[(i + 1) % 3] : s[(i + 2) % 3];
    real Ii = (real)8 / 15 * RL_PI * s[i] * sq(sq(e));
    mu[i] = ca * Ii + cs * (Imax - Ii);
    mv[i] = w[i] * mu[i];
  }
  real nm = rl_sqrt(rl_v3_dot(mv, mv)), dens = rho / (nm > MINVAL ? nm : MINVAL);
  for (int i = 0; i < 3; i++) mm[i] = -dens * w[i] * mu[i] * mu[i];
  real diag = w[0] * mm[0] + w[1] * mm[1] + w[2] * mm[2] - beta * RL_PI * D * D * D;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) M[3 * i + j] = (i == j ? diag : 0) + mm[j] * w[i];
}

/* D += Σ_geoms Jᵀ B J for body b under the ellipsoid model */
static void ellipsoid_deriv(const rl_model *m, rl_data *d, real *Dq, int b, real *jp, real *jr) {
  int nv = m->nv;
  for (int k = 0; k < m->body_geomnum[b]; k++) {
    int g = m->body_geomadr[b] + k;
    const real *fl = m->geom_fluid + RL_NFLUID * g, *R = d->geom_xmat + 9 * g;
    if (fl[0] == 0) continue;
    real s[3], w[3], v[3], B[36] = {0}, M[9];
    rl_geom_semiaxes(m, g, s);
    rl_fluid_velocity(m, d, b, d->geom_xpos + 3 * g, R, w, v);
    real rho = m->opt.density, beta = m->opt.viscosity;
    magnus_deriv(B, w, v, rho, s, fl[5]);
    kutta_deriv(M, v, rho, s, fl[4]);
    add_block(B, M, 1, 1);
    drag_deriv(M, v, rho, beta, s, fl[1], fl[2]);
    add_block(B, M, 1, 1);
    torque_deriv(M, w, rho, beta, s, fl[2], fl[3]);
    add_block(B, M, 0, 0);
    added_mass_deriv(B, w, v, rho, fl + 6, fl + 9);
    for (int i = 0; i < 36; i++) B[i] *= fl[0];
    rl_jac_point(m, d, jp, jr, d->geom_xpos + 3 * g, b);
    real *J = jr; /* J: 6 rows [Rᵀ J_r; Rᵀ J_p]; jr and jp hold 3 rows each, contiguous (jp = jr + 3 nv) */
    for (int pass = 0; pass < 2; pass++) {
      real *X = pass ? jp : jr, row[3];
      for (int c = 0; c < nv; c++) {
        for (int a = 0; a < 3; a++) row[a] = R[a] * X[c] + R[3 + a] * X[nv + c] + R[6 + a] * X[2 * nv + c];
        for (int a = 0; a < 3; a++) X[a * nv + c] = row[a];
      }
    }
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < 6; j++) {
        real bij = B[6 * i + j];
        if (bij == 0) continue;
        const real *Ji = J + (size_t)i * nv, *Jj = J + (size_t)j * nv;
        for (int r = 0; r < nv; r++) {
          if (Ji[r] == 0) continue;
          real x = Ji[r] * bij;
          for (int c = 0; c < nv; c++) Dq[(size_t)r * nv + c] += x * Jj[c];
        }
      }
  }
}

/* ∂F/∂q̇ of the inertia-box fluid model (fluid.c): per body with mass, the local force and torque depend on
   the local COM velocity v = Rᵀ(J_p q̇) − wind and ω = Rᵀ(J_r q̇) only through their own component, so
     ∂τ_i/∂ω_i = −πd³β − 2ρ box_i (box_j⁴ + box_k⁴)|ω_i|/64,   ∂f_i/∂v_i = −3πdβ − ρ box_j box_k |v_i|
   and D += J_rᵀ R diag(∂τ/∂ω) Rᵀ J_r + J_pᵀ R diag(∂f/∂v) Rᵀ J_p. */
static void fluid_deriv(const rl_model *m, rl_data *d, real *D, real *jp, real *jr) {
  int nv = m->nv;
  real beta = m->opt.viscosity, rho = m->opt.density;
  for (int b = 1; b < m->nbody; b++) {
    if (m->body_mass[b] < MINVAL) continue;
    if (rl_fluid_ellipsoid_body(m, b)) {
      ellipsoid_deriv(m, d, D, b, jp, jr);
      continue;
    }
    const real *R = d->ximat + 9 * b;
    real box[3], w[3], v[3];
    rl_fluid_box(m, b, box);
    rl_fluid_velocity(m, d, b, d->xipos + 3 * b, R, w, v);
    real dtau[3] = {0, 0, 0}, df[3] = {0, 0, 0};
    if (beta > 0) {
      real diam = (box[0] + box[1] + box[2]) / 3;
      for (int i = 0; i < 3; i++) {
        dtau[i] = -RL_PI * diam * diam * diam * beta;
        df[i] = -3 * RL_PI * diam * beta;
      }
    }
    if (rho > 0) {
      real b4[3];
      for (int i = 0; i < 3; i++) b4[i] = box[i] * box[i] * box[i] * box[i];
      for (int i = 0; i < 3; i++) {
        int j = (i + 1) % 3, k = (i + 2) % 3;
        df[i] -= rho * box[j] * box[k] * rl_fabs(v[i]);
        dtau[i] -= 2 * rho * box[i] * (b4[j] + b4[k]) * rl_fabs(w[i]) / 64;
      }
    }
    rl_jac_point(m, d, jp, jr, d->xipos + 3 * b, b);
    /* rows of Rᵀ J in place: local axis a is Σ_c R[c][a]·J_c */
    for (int pass = 0; pass < 2; pass++) {
      real *J = pass ? jp : jr, *g = pass ? df : dtau, row[3];
      for (int c = 0; c < nv; c++) {
        for (int a = 0; a < 3; a++) row[a] = R[a] * J[c] + R[3 + a] * J[nv + c] + R[6 + a] * J[2 * nv + c];
        for (int a = 0; a < 3; a++) J[a * nv + c] = row[a];
      }
      for (int a = 0; a < 3; a++) add_outer(nv, D, J + a * nv, g[a]);
    }
  }
}

/* ∂qfrc_actuator/∂q̇: (bias_vel + gain_vel·input)·m_uᵀm_u with bias_vel = biasprm[2] (affine bias),
   gain_vel = gainprm[2] (affine gain) or ∂(muscle gain)/∂l̇, input = ctrl (MuJoCo 2.2.2 reads it unclamped
   here) or act for an actuator with dynamics */
static void actuator_deriv(const rl_model *m, const rl_data *d, real *D) {
  int nv = m->nv;
  for (int u = 0; u < m->nu; u++) {
    real bias_vel = 0, gain_vel = 0;
    if (m->actuator_biastype[u] == RL_BIAS_AFFINE) bias_vel = m->actuator_biasprm[RL_NBIAS * u + 2];
    if (m->actuator_gaintype[u] == RL_GAIN_AFFINE) gain_vel = m->actuator_gainprm[RL_NGAIN * u + 2];
    else if (m->actuator_gaintype[u] == RL_GAIN_MUSCLE)
      gain_vel = rl_muscle_gain_vel(d->actuator_length[u], d->actuator_velocity[u], m->actuator_lengthrange + 2 * u,
                                    m->actuator_acc0[u], m->actuator_gainprm + RL_NGAIN * u);
    if (gain_vel != 0)
      bias_vel += gain_vel * (m->actuator_dyntype[u] == RL_DYN_NONE ? d->ctrl[u] : d->act[u - (m->nu - m->na)]);
    if (bias_vel != 0) add_outer(nv, D, d->actuator_moment + (size_t)u * nv, bias_vel);
  }
}

/* D −= ∂qfrc_bias/∂q̇ by forward-mode differentiation of the Newton–Euler pass in the com frame, column c
   of each 6×nv block being the derivative along q̇_c:
     cvel_b = cvel_p + Σ cdof_j q̇_j          ∂: Dcvel_b = Dcvel_p + cdof_j e_jᵀ
     cdof_dot_j = cvel ×ₘ cdof_j              ∂: Dcdofdot_j[:,c] = Dcvel[:,c] ×ₘ cdof_j (cvel before j's own motion)
     cacc_b = cacc_p + Σ cdof_dot_j q̇_j      ∂: Dcacc_b = Dcacc_p + Σ (cdof_dot_j e_jᵀ + q̇_j Dcdofdot_j)
     cfrc_b = I cacc_b + cvel_b ×* (I cvel_b) ∂: I Dcacc + Dcvel ×* (I cvel) + cvel ×* (I Dcvel)
   then cfrc accumulates to the parents and qfrc_bias_i = cdof_i · cfrc_{body(i)}. */
static void rne_deriv(const rl_model *m, const rl_data *d, real *D, real *Dcvel, real *Dcacc, real *Dcfrc,
                      real *Dcdd) {
  int nv = m->nv, nb = m->nbody;
  size_t bs = 6 * (size_t)nv; /* one body's block: nv columns of 6 */
  memset(Dcvel, 0, sizeof(real) * bs);
  memset(Dcacc, 0, sizeof(real) * bs);
  for (int b = 1; b < nb; b++) {
    int p = m->body_parentid[b];
    real *V = Dcvel + bs * b, *A = Dcacc + bs * b, *F = Dcfrc + bs * b;
    memcpy(V, Dcvel + bs * p, sizeof(real) * bs);
    memcpy(A, Dcacc + bs * p, sizeof(real) * bs);
    int da = m->body_dofadr[b], de = da + m->body_dofnum[b];
    for (int j = da; j < de; j++) {
      int jt = m->jnt_type[m->dof_jntid[j]], n = 1;
      if (jt == RL_JNT_FREE) { /* translation: cdof_dot = 0 */
        for (int k = 0; k < 3; k++)
          for (int r = 0; r < 6; r++) V[6 * (j + k) + r] += d->cdof[6 * (j + k) + r];
        j += 3;
        n = 3;
      } else if (jt == RL_JNT_BALL) {
        n = 3;
      }
      for (int k = 0; k < n; k++) { /* Dcdofdot from the velocity before this joint's rotation */
        const real *cd = d->cdof + 6 * (j + k);
        for (int c = 0; c < nv; c++) rl_sp_cross_motion(Dcdd + 6 * ((size_t)k * nv + c), V + 6 * c, cd);
      }
      for (int k = 0; k < n; k++) {
        for (int r = 0; r < 6; r++) V[6 * (j + k) + r] += d->cdof[6 * (j + k) + r];
        for (int r = 0; r < 6; r++) A[6 * (j + k) + r] += d->cdof_dot[6 * (j + k) + r];
        real qv = d->qvel[j + k];
        for (size_t c = 0; c < bs; c++) A[c] += qv * Dcdd[(size_t)k * bs + c];
      }
      j += n - 1;
    }
    const real *I = d->cinert + 10 * b, *cv = d->cvel + 6 * b;
    real Icv[6], t1[6], t2[6], Iv[6];
    rl_sp_inert_mul(Icv, I, cv);
    for (int c = 0; c < nv; c++) {
      rl_sp_inert_mul(F + 6 * c, I, A + 6 * c);
      rl_sp_cross_force(t1, V + 6 * c, Icv);
      rl_sp_inert_mul(Iv, I, V + 6 * c);
      rl_sp_cross_force(t2, cv, Iv);
      for (int r = 0; r < 6; r++) F[6 * c + r] += t1[r] + t2[r];
    }
  }
  for (int b = nb - 1; b > 1; b--) {
    int p = m->body_parentid[b];
    if (p == 0) continue;
    for (size_t c = 0; c < bs; c++) Dcfrc[bs * p + c] += Dcfrc[bs * b + c];
  }
  for (int i = 0; i < nv; i++) {
    const real *cd = d->cdof + 6 * i, *F = Dcfrc + bs * m->dof_bodyid[i];
    for (int c = 0; c < nv; c++) {
      real s = 0;
      for (int r = 0; r < 6; r++) s += cd[r] * F[6 * c + r];
      D[(size_t)i * nv + c] -= s;
    }
  }
}

/* zero every entry of the dense D outside the tree pattern (j = i, an ancestor or a descendant of i) */
static void keep_tree_pattern(const rl_model *m, real *D, real *tmp) {
  int nv = m->nv;
  memcpy(tmp, D, sizeof(real) * (size_t)nv * nv);
  memset(D, 0, sizeof(real) * (size_t)nv * nv);
  for (int i = 0; i < nv; i++) {
    D[(size_t)i * nv + i] = tmp[(size_t)i * nv + i];
    for (int a = m->dof_parentid[i]; a >= 0; a = m->dof_parentid[a]) {
      D[(size_t)i * nv + a] = tmp[(size_t)i * nv + a];
      D[(size_t)a * nv + i] = tmp[(size_t)a * nv + i];
    }
  }
}

int rl_qderiv(const rl_model *m, rl_data *d, real *D) {
  int nv = m->nv;
  size_t mark = rl_arena_mark(d), bs = 6 * (size_t)nv * (size_t)m->nbody;
  real *Dcvel = rl_arena_take(d, bs), *Dcacc = rl_arena_take(d, bs), *Dcfrc = rl_arena_take(d, bs);
  real *Dcdd = rl_arena_take(d, 18 * (size_t)nv + 1), *jr = rl_arena_take(d, 6 * (size_t)nv + 1);
  real *jp = jr ? jr + 3 * (size_t)nv : NULL, *tmp = rl_arena_take(d, (size_t)nv * nv + 1);
  if (!tmp) {
    rl_arena_release(d, mark);
    return -1;
  }
  memset(D, 0, sizeof(real) * (size_t)nv * nv);
  if (!(m->opt.disableflags & RL_DSBL_ACTUATION)) actuator_deriv(m, d, D);
  if (!(m->opt.disableflags & RL_DSBL_PASSIVE)) {
    damping_deriv(m, d, D);
    if (m->opt.density > 0 || m->opt.viscosity > 0) fluid_deriv(m, d, D, jp, jr);
  }
  rne_deriv(m, d, D, Dcvel, Dcacc, Dcfrc, Dcdd);
  keep_tree_pattern(m, D, tmp);
  rl_arena_release(d, mark);
  return 0;
}

/* A = M − h·D on the tree pattern (dense storage), from qM's lower triangle (row i: i and its ancestors) */
static void form_system(const rl_model *m, const rl_data *d, const real *D, real h, real *A) {
  int nv = m->nv;
  memset(A, 0, sizeof(real) * (size_t)nv * nv);
  for (int i = 0; i < nv; i++) {
    int adr = m->dof_Madr[i];
    A[(size_t)i * nv + i] = d->qM[adr] - h * D[(size_t)i * nv + i];
    for (int a = m->dof_parentid[i]; a >= 0; a = m->dof_parentid[a]) {
      real mij = d->qM[++adr];
      A[(size_t)i * nv + a] = mij - h * D[(size_t)i * nv + a];
      A[(size_t)a * nv + i] = mij - h * D[(size_t)a * nv + i];
    }
  }
}

/* Reverse-order elimination A = (I + U)·L: for k = nv−1 … 0 and each ancestor i of k, l_ik = A_ik / A_kk
   (stored in A_ik) and A_ij −= l_ik·A_kj for the ancestors j of k; what remains at or left of the diagonal
   is L.  Returns −1 on a zero pivot. */
static int factor_ul(const rl_model *m, real *A) {
  int nv = m->nv;
  for (int k = nv - 1; k >= 0; k--) {
    real piv = A[(size_t)k * nv + k];
    if (piv == 0 || !rl_isfinite(piv)) return -1;
    for (int i = m->dof_parentid[k]; i >= 0; i = m->dof_parentid[i]) {
      real l = A[(size_t)i * nv + k] / piv;
      A[(size_t)i * nv + k] = l;
      for (int j = m->dof_parentid[k]; j >= 0; j = m->dof_parentid[j]) A[(size_t)i * nv + j] -= l * A[(size_t)k * nv + j];
    }
  }
  return 0;
}

/* x = A⁻¹·x with A = (I + U)·L from factor_ul: y = (I + U)⁻¹x (k descending: x_i −= l_ik x_k), then L x = y
   (k ascending) */
static void solve_ul(const rl_model *m, const real *A, real *x) {
  int nv = m->nv;
  for (int k = nv - 1; k >= 0; k--)
    for (int i = m->dof_parentid[k]; i >= 0; i = m->dof_parentid[i]) x[i] -= A[(size_t)i * nv + k] * x[k];
  for (int k = 0; k < nv; k++) {
    real s = x[k];
    for (int j = m->dof_parentid[k]; j >= 0; j = m->dof_parentid[j]) s -= A[(size_t)k * nv + j] * x[j];
    x[k] = s / A[(size_t)k * nv + k];
  }
}

int rl_implicit(const rl_model *m, rl_data *d) {
  int nv = m->nv;
  real h = m->opt.timestep;
  size_t mark = rl_arena_mark(d);
  real *D = rl_arena_take(d, (size_t)nv * nv + 1), *A = rl_arena_take(d, (size_t)nv * nv + 1);
  real *acc = rl_arena_take(d, (size_t)nv + 1);
  int ok = acc && rl_qderiv(m, d, D) == 0;
  if (ok) {
    form_system(m, d, D, h, A);
    ok = factor_ul(m, A) == 0;
  }
  if (ok) {
    for (int i = 0; i < nv; i++) acc[i] = d->qfrc_smooth[i] + d->qfrc_constraint[i];
    solve_ul(m, A, acc);
    rl_advance(m, d, acc);
  }
  rl_arena_release(d, mark);
  return ok ? 0 : -1;
}
