/* smooth_local.c — bias forces and M⁻¹ with every quantity at its own body's COM.
 *
 * MuJoCo's com frame (smooth.c) expresses the spatial quantities of a whole tree at one point, its root's
 * subtree COM c_r, with world axes.  A light body far from c_r (a hand, a foot, a small floating part)
 * then carries its own rotational inertia J as the difference of terms m·‖x − c_r‖², and its joint
 * torques as differences of moments about c_r: in float J keeps only ε·m·‖x − c_r‖²/J of relative
 * accuracy, and M⁻¹ amplifies what is lost (humanoid, f32: qacc_smooth 2e-5 relative to MuJoCo, while
 * rounding the state itself to float moves it by 2e-7).
 *
 * Here body b's quantities are expressed at q_b = xipos_b (world axes): its inertia is R·diag(J)·Rᵀ with
 * no offset, its dofs' motion subspaces carry lever arms q_b − anchor of one link, and the recursions
 * move motion and force vectors between bodies by the COM-to-COM offset r = q_child − q_parent only:
 *   motion  a_child = X·a_parent = [ω; v + ω × r],   force  f_parent = Xᵀ·f_child = [n + r × f; f].
 * The frames are fixed at this instant, so X commutes with the spatial cross products and the recursions
 * are the com-frame ones in other coordinates: link-sized numbers, the same results in exact arithmetic.
 * Both the bias forces and the solve use the same subspaces (local_dofs), so e.g. gravity on a free body
 * gives no angular acceleration to rounding in either precision.
 */
#include <string.h>
#include <stdint.h>
#include "rl_engine.h"
#include "rl_spatial.h"

#define MINVAL ((real)1e-15) /* MuJoCo's mjMINVAL: the smallest pivot */

/* The local frames' geometry, all from link-sized terms (xpos_rel, xanchor_rel, c_b = xipos_rel_b = R_b·ipos_b
   = q_b − x_b):
     body_shift_b = q_b − q_parent = xpos_rel_b + c_b − c_parent            (the world's c is 0)
     weld_shift_b = q_b − q_w, w the weld root of b's parent: body_shift_b, plus weld_shift_parent when
                    the parent has no dofs (a dofless body's offset from the body it is welded to, and a
                    body with dofs' offset from the body of its parent dof) */
void rl_local_shifts(const rl_model *m, rl_data *d) {
  const real *c = d->xipos_rel;
  rl_v3_zero(d->body_shift);
  rl_v3_zero(d->weld_shift);
  for (int b = 1; b < m->nbody; b++) {
    int p = m->body_parentid[b];
    real *cr = d->body_shift + 3 * b, *up = d->weld_shift + 3 * b;
    rl_v3_add(cr, d->xpos_rel + 3 * b, c + 3 * b);
    rl_v3_sub(cr, cr, c + 3 * p);
    if (p > 0 && m->body_weldid[p] != p) rl_v3_add(up, d->weld_shift + 3 * p, cr);
    else rl_v3_copy(up, cr);
  }
}

/* rl_local_shifts, and cdof_local: rl_joint_dofs at q_b, lever q_b − anchor = c_b − xanchor_rel_j.  f64 (whose
   rl_kinematics and rl_com_pos do not keep them) first makes xipos_rel_b = R_b·ipos_b and inert_local_b. */
void rl_local_frames(const rl_model *m, rl_data *d) {
  if (!RL_LOCAL_FRAMES)
    for (int b = 1; b < m->nbody; b++) {
      rl_m3_mulv(d->xipos_rel + 3 * b, d->xmat + 9 * b, m->body_ipos + 3 * b);
      rl_sp_inert_rot(d->inert_local + 6 * b, m->body_inertia + 3 * b, d->ximat + 9 * b);
    }
  rl_local_shifts(m, d);
  for (int j = 0; j < m->njnt; j++) {
    real off[3];
    rl_v3_sub(off, d->xipos_rel + 3 * m->jnt_bodyid[j], d->xanchor_rel + 3 * j);
    rl_joint_dofs(m, d, j, off, d->cdof_local + 6 * m->jnt_dofadr[j]);
  }
}

/* a_child = X·a_parent = [ω; v + ω × r] */
static void local_shift_motion(real out[6], const real a[6], const real r[3]) {
  real c[3];
  rl_v3_cross(c, a, r);
  for (int i = 0; i < 3; i++) {
    out[i] = a[i];
    out[3 + i] = a[3 + i] + c[i];
  }
}

/* f_parent += Xᵀ·f_child = [n + r × f; f] */
static void local_shift_force_add(real out[6], const real f[6], const real r[3]) {
  real c[3];
  rl_v3_cross(c, r, f + 3);
  for (int i = 0; i < 3; i++) {
    out[i] += f[i] + c[i];
    out[3 + i] += f[3 + i];
  }
}

/* f_parent = Xᵀ·f = [n + r × f; f], in place */
static void local_shift_force(real f[6], const real r[3]) {
  real c[3];
  rl_v3_cross(c, r, f + 3);
  for (int i = 0; i < 3; i++) f[i] += c[i];
}

/* out += Xᵀ·I·X for a symmetric 6×6 I = [[A, B], [Bᵀ, C]] and X = [[E, 0], [−R, E]], R = [r]×:
     P = B·R (row i: B_i × r),  Q = R·C (column j: r × C_j),
     A' = A − P − Pᵀ − Q·R (row i of Q·R: Q_i × r),  B' = B + Q,  C' = C */
static void local_shift_inertia_add(real *out, const real *I, const real r[3]) {
  real P[3][3], Q[3][3], QR[3][3];
  for (int i = 0; i < 3; i++) {
    real bi[3] = {I[6 * i + 3], I[6 * i + 4], I[6 * i + 5]},
         cj[3] = {I[6 * (3 + i) + 3], I[6 * (3 + i) + 4], I[6 * (3 + i) + 5]};
    real q[3];
    rl_v3_cross(P[i], bi, r);
    rl_v3_cross(q, r, cj); /* column i of Q (C symmetric: its column i is its row i) */
    for (int k = 0; k < 3; k++) Q[k][i] = q[k];
  }
  for (int i = 0; i < 3; i++) rl_v3_cross(QR[i], Q[i], r);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      real bq = I[6 * i + 3 + j] + Q[i][j];
      out[6 * i + j] += I[6 * i + j] - P[i][j] - P[j][i] - QR[i][j];
      out[6 * i + 3 + j] += bq;
      out[6 * (3 + j) + i] += bq;
      out[6 * (3 + i) + 3 + j] += I[6 * (3 + i) + 3 + j];
    }
}

/* f = I·a + v ×* (I·v) for a body's inertia about its own COM (h = 0: I = [Ic, 0; 0, m·E], Ic = inert_local):
     f = [Ic·α + ω × (Ic·ω);  m·a_lin + m·(ω × v_lin)]
   (rl_sp_inert_mul + rl_sp_inert_cross with their h terms, all exactly zero, left out) */
static void local_body_force(real f[6], const real Ic[6], real mass, const real a[6], const real v[6]) {
  real na[3], nv[3], c[3], wu[3];
  na[0] = Ic[0] * a[0] + Ic[3] * a[1] + Ic[4] * a[2];
  na[1] = Ic[3] * a[0] + Ic[1] * a[1] + Ic[5] * a[2];
  na[2] = Ic[4] * a[0] + Ic[5] * a[1] + Ic[2] * a[2];
  nv[0] = Ic[0] * v[0] + Ic[3] * v[1] + Ic[4] * v[2];
  nv[1] = Ic[3] * v[0] + Ic[1] * v[1] + Ic[5] * v[2];
  nv[2] = Ic[4] * v[0] + Ic[5] * v[1] + Ic[2] * v[2];
  rl_v3_cross(c, v, nv);
  rl_v3_cross(wu, v, v + 3);
  for (int k = 0; k < 3; k++) {
    f[k] = na[k] + c[k];
    f[3 + k] = mass * a[3 + k] + mass * wu[k];
  }
}

/* ------------------------------------------------------------- bias forces */

/* body b's velocity and velocity-product acceleration over its joints, rl_com_vel's order in local
   coordinates: v ← X·v_parent, a ← X·a_parent;  per joint, a += v ×ₘ (S_j·q̇_j) with v taken before the
   joint's own contribution (free: the translation part first, with no acceleration term), v += S_j·q̇_j */
static void local_body_motion(const rl_model *m, const rl_data *d, int b, real *v, real *a) {
  int p = m->body_parentid[b];
  real *vb = v + 6 * b, *ab = a + 6 * b;
  local_shift_motion(vb, v + 6 * p, d->body_shift + 3 * b);
  local_shift_motion(ab, a + 6 * p, d->body_shift + 3 * b);
  for (int j = m->body_jntadr[b]; j < m->body_jntadr[b] + m->body_jntnum[b]; j++) {
    int da = m->jnt_dofadr[j], n = 1;
    real s[6], t[6];
    if (m->jnt_type[j] == RL_JNT_FREE) {
      rl_sp_mul_dof(s, d->cdof_local + 6 * da, d->qvel + da, 3);
      for (int k = 0; k < 6; k++) vb[k] += s[k];
      da += 3;
    }
    if (m->jnt_type[j] == RL_JNT_FREE || m->jnt_type[j] == RL_JNT_BALL) n = 3;
    rl_sp_mul_dof(s, d->cdof_local + 6 * da, d->qvel + da, n);
    rl_sp_cross_motion(t, vb, s);
    for (int k = 0; k < 6; k++) {
      ab[k] += t[k];
      vb[k] += s[k];
    }
  }
}

/* Recursive Newton–Euler with q̈ = 0 in local frames (gravity as the base acceleration [0; −g]):
   f_b = I_b·a_b + v_b ×* (I_b·v_b);  f_parent += Xᵀ·f_b;  qfrc_bias_k = s_kᵀ·f_{body(k)}.
   For ball/free joints a is formed from the same rounded s_j·q̇_j that enters v: for a free body,
   m·(v×ω) from a and m·(ω×v) in the velocity product (rl_sp_inert_cross) are bitwise negatives and
   cancel exactly.  Needs rl_com_pos (rl_local_frames), not cvel.  The data arena is sized for it
   (rl_local_arena). */
void rl_rne_local(const rl_model *m, rl_data *d) {
  size_t mark = rl_arena_mark(d), nb = (size_t)m->nbody;
  real *v = rl_arena_take(d, 6 * nb), *a = rl_arena_take(d, 6 * nb), *f = rl_arena_take(d, 6 * nb);
  if (!f) { /* not reached: arena_reals covers rl_local_arena */
    rl_arena_release(d, mark);
    return;
  }
  memset(v, 0, sizeof(real) * 6);
  memset(a, 0, sizeof(real) * 6);
  if (!(m->opt.disableflags & RL_DSBL_GRAVITY))
    for (int k = 0; k < 3; k++) a[3 + k] = -m->opt.gravity[k];
  for (int b = 1; b < m->nbody; b++) {
    local_body_motion(m, d, b, v, a);
    local_body_force(f + 6 * b, d->inert_local + 6 * b, m->body_mass[b], a + 6 * b, v + 6 * b);
  }
  for (int b = m->nbody - 1; b > 0; b--) {
    int p = m->body_parentid[b];
    if (p > 0) local_shift_force_add(f + 6 * p, f + 6 * b, d->body_shift + 3 * b);
  }
  for (int k = 0; k < m->nv; k++) d->qfrc_bias[k] = rl_sp_dot(d->cdof_local + 6 * k, f + 6 * m->dof_bodyid[k]);
  rl_arena_release(d, mark);
}

/* ------------------------------------------------------------------ M⁻¹ */

/* IA_k = Σ_{b welded to body(k)} I_b about q_{body(k)} for the last dof k of each body with dofs
   (a welded body sits at up_b from it) */
static void local_assemble(const rl_model *m, const rl_data *d, real *IA) {
  static const real zero[3] = {0, 0, 0};
  memset(IA, 0, sizeof(real) * 36 * (size_t)m->nv);
  for (int b = 1; b < m->nbody; b++) {
    int w = m->body_weldid[b];
    if (w <= 0) continue;
    real c[10];
    rl_sp_inert_offset(c, d->inert_local + 6 * b, w == b ? zero : d->weld_shift + 3 * b, m->body_mass[b]);
    rl_sp_inert_add6(IA + 36 * (m->body_dofadr[w] + m->body_dofnum[w] - 1), c);
  }
}

/* offset of dof k's point from its parent dof's: NULL within one body (no shift), else weld_shift of k's body */
static const real *local_dof_offset(const rl_model *m, const rl_data *d, int k) {
  int b = m->dof_bodyid[k];
  return b == m->dof_bodyid[m->dof_parentid[k]] ? NULL : d->weld_shift + 3 * b;
}

/* leaves to root: U_k = IA_k·s_k,  D_k = max(MINVAL, s_kᵀU_k + armature_k + h·b_k) (into D unless NULL),
   IA_parent += Xᵀ·(IA_k − U_k·U_kᵀ/D_k)·X */
static void local_eliminate(const rl_model *m, const rl_data *d, real *IA, real *U, real *Dinv, real *D, real h,
                            const real *b) {
  for (int k = m->nv - 1; k >= 0; k--) {
    const real *s = d->cdof_local + 6 * k;
    real *I = IA + 36 * k, *u = U + 6 * k;
    for (int i = 0; i < 6; i++) u[i] = rl_sp_dot(I + 6 * i, s);
    real Dk = rl_sp_dot(s, u) + m->dof_armature[k] + (b ? h * b[k] : 0);
    if (Dk < MINVAL) Dk = MINVAL;
    Dinv[k] = 1 / Dk;
    if (D) D[k] = Dk;
    int p = m->dof_parentid[k];
    if (p < 0) continue;
    rl_sp_outer_add(I, -Dinv[k], u, u);
    const real *r = local_dof_offset(m, d, k);
    if (r) local_shift_inertia_add(IA + 36 * p, I, r);
    else
      for (int i = 0; i < 36; i++) IA[36 * p + i] += I[i];
  }
}

/* The same elimination with each IA_k held as its 21 distinct numbers (IA is symmetric), the form the f32
   pipeline runs: [A (xx yy zz xy xz yz) | B (row-major 3×3) | C (xx yy zz xy xz yz)] for IA = [[A, B], [Bᵀ, C]].
   f64 keeps the 36-number form above, whose rounding its recursive path has always had. */
#define PK 21

/* u = IA·s:  u_top = A·s_top + B·s_bot,  u_bot = Bᵀ·s_top + C·s_bot */
static void pk_mul(real *restrict u, const real *restrict I, const real *restrict s) {
  const real *A = I, *B = I + 6, *C = I + 15, *t = s, *b = s + 3;
  u[0] = A[0] * t[0] + A[3] * t[1] + A[4] * t[2] + B[0] * b[0] + B[1] * b[1] + B[2] * b[2];
  u[1] = A[3] * t[0] + A[1] * t[1] + A[5] * t[2] + B[3] * b[0] + B[4] * b[1] + B[5] * b[2];
  u[2] = A[4] * t[0] + A[5] * t[1] + A[2] * t[2] + B[6] * b[0] + B[7] * b[1] + B[8] * b[2];
  u[3] = B[0] * t[0] + B[3] * t[1] + B[6] * t[2] + C[0] * b[0] + C[3] * b[1] + C[4] * b[2];
  u[4] = B[1] * t[0] + B[4] * t[1] + B[7] * t[2] + C[3] * b[0] + C[1] * b[1] + C[5] * b[2];
  u[5] = B[2] * t[0] + B[5] * t[1] + B[8] * t[2] + C[4] * b[0] + C[5] * b[1] + C[2] * b[2];
}

/* The 21 entries of w·u·uᵀ subtracted from IA's: OUTER(APPLY) calls APPLY(e, i, j) for entry e = (row i, column j) */
#define OUTER(APPLY)                                                                                                \
  APPLY(0, 0, 0), APPLY(1, 1, 1), APPLY(2, 2, 2), APPLY(3, 0, 1), APPLY(4, 0, 2), APPLY(5, 1, 2), APPLY(6, 0, 3),  \
      APPLY(7, 0, 4), APPLY(8, 0, 5), APPLY(9, 1, 3), APPLY(10, 1, 4), APPLY(11, 1, 5), APPLY(12, 2, 3),          \
      APPLY(13, 2, 4), APPLY(14, 2, 5), APPLY(15, 3, 3), APPLY(16, 4, 4), APPLY(17, 5, 5), APPLY(18, 3, 4),        \
      APPLY(19, 3, 5), APPLY(20, 4, 5)

/* out += IA − w·u·uᵀ */
static void pk_add_sub_outer(real *restrict out, const real *restrict I, real w, const real *restrict u) {
  real wu[6];
  for (int i = 0; i < 6; i++) wu[i] = w * u[i];
#define ADDSUB(e, i, j) out[e] += I[e] - wu[i] * u[j]
  OUTER(ADDSUB);
#undef ADDSUB
}

/* out += Xᵀ·IA·X (local_shift_inertia_add on the 21 numbers): P = B·R (row i: B_i × r), Q = R·C (column j:
   r × C_j), A' = A − P − Pᵀ − Q·R (row i of Q·R: Q_i × r; symmetric, its upper half taken), B' = B + Q, C' = C */
static void pk_shift_add(real *restrict out, const real *restrict I, const real *restrict r) {
  const real *A = I, *B = I + 6, *C = I + 15;
  real P[3][3], Q[3][3], cj[3][3] = {{C[0], C[3], C[4]}, {C[3], C[1], C[5]}, {C[4], C[5], C[2]}};
  for (int i = 0; i < 3; i++) {
    real q[3];
    rl_v3_cross(P[i], B + 3 * i, r);
    rl_v3_cross(q, r, cj[i]); /* column i of Q */
    for (int k = 0; k < 3; k++) Q[k][i] = q[k];
  }
  real qr00 = Q[0][1] * r[2] - Q[0][2] * r[1], qr01 = Q[0][2] * r[0] - Q[0][0] * r[2],
       qr02 = Q[0][0] * r[1] - Q[0][1] * r[0], qr11 = Q[1][2] * r[0] - Q[1][0] * r[2],
       qr12 = Q[1][0] * r[1] - Q[1][1] * r[0], qr22 = Q[2][0] * r[1] - Q[2][1] * r[0];
  out[0] += A[0] - P[0][0] - P[0][0] - qr00;
  out[1] += A[1] - P[1][1] - P[1][1] - qr11;
  out[2] += A[2] - P[2][2] - P[2][2] - qr22;
  out[3] += A[3] - P[0][1] - P[1][0] - qr01;
  out[4] += A[4] - P[0][2] - P[2][0] - qr02;
  out[5] += A[5] - P[1][2] - P[2][1] - qr12;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) out[6 + 3 * i + j] += B[3 * i + j] + Q[i][j];
  for (int i = 0; i < 6; i++) out[15 + i] += C[i];
}

/* a simple body (dof_simplenum, MuJoCo's): no child bodies, its parent the world or welded to it, its M block
   diagonal and constant (dof_M0, armature included) — every dof of it a tree of its own in the elimination */
static int local_simple_body(const rl_model *m, int b) {
  return m->body_dofnum[b] > 0 && m->dof_simplenum[m->body_dofadr[b]] > 0;
}

/* X_k = 0 (w reals per dof) for every dof k, or with simple set for every dof not of a simple body (runs of
   dof_simplenum skipped: their rows are never read) */
static void local_zero_rows(const rl_model *m, real *X, int w, const int *simple) {
  if (!simple) {
    memset(X, 0, sizeof(real) * (size_t)w * (size_t)m->nv);
    return;
  }
  for (int k = 0; k < m->nv;) {
    int n = 0;
    while (k + n < m->nv && !simple[k + n]) n++;
    if (n) memset(X + (size_t)w * k, 0, sizeof(real) * (size_t)w * (size_t)n);
    k += n;
    if (k < m->nv) k += simple[k];
  }
}

/* local_assemble on the 21 numbers: a body at its weld root adds [Ic, 0; 0, m·E]; a welded one, at
   up_b = weld_shift_b, adds its 10-number inertia about that point (rl_sp_inert_offset) */
static void pk_assemble(const rl_model *m, const rl_data *d, real *IA) {
  local_zero_rows(m, IA, PK, m->dof_simplenum);
  for (int b = 1; b < m->nbody; b++) {
    int w = m->body_weldid[b];
    if (w <= 0) continue;
    if (local_simple_body(m, w)) continue; /* pivoted on dof_M0 (pk_eliminate) */
    real *A = IA + PK * (m->body_dofadr[w] + m->body_dofnum[w] - 1), *B = A + 6, *C = A + 15, mb = m->body_mass[b];
    const real *Ic = d->inert_local + 6 * b;
    if (w == b) {
      for (int i = 0; i < 6; i++) A[i] += Ic[i];
    } else {
      real c[10];
      const real *h = c + 6;
      rl_sp_inert_offset(c, Ic, d->weld_shift + 3 * b, mb);
      for (int i = 0; i < 6; i++) A[i] += c[i];
      B[1] -= h[2], B[2] += h[1], B[3] += h[2], B[5] -= h[0], B[6] -= h[1], B[7] += h[0];
    }
    C[0] += mb, C[1] += mb, C[2] += mb;
  }
}

/* J = IA − w·u·uᵀ */
static void pk_sub_outer(real *restrict J, const real *restrict I, real w, const real *restrict u) {
  real wu[6];
  for (int i = 0; i < 6; i++) wu[i] = w * u[i];
#define SUB(e, i, j) J[e] = I[e] - wu[i] * u[j]
  OUTER(SUB);
#undef SUB
}

/* local_eliminate on the 21 numbers.  Where dof k's parent is on another body, U keeps Ũ_k = Xᵀ·U_k (U_k moved
   to the parent dof's point, for pk_substitute and local_factor_rows); the update into the parent stays
   Xᵀ·(IA_k − U_k·U_kᵀ/D_k)·X, shifted after the cancellation (shifting IA_k and Ũ_k apart, Xᵀ·IA_k·X −
   Ũ_k·Ũ_kᵀ/D_k, doubled cassie_like's f32 qacc_smooth error).  A simple body's dof couples to no other dof
   (M_kk = dof_M0_k, M_ki = 0): D_k = max(MINVAL, dof_M0_k + h·b_k), U_k and the parent update left out
   (pk_substitute skips it). */
static void pk_eliminate(const rl_model *m, const rl_data *d, real *IA, real *U, real *Dinv, real *D, real h,
                         const real *b) {
  for (int k = m->nv - 1; k >= 0; k--) {
    const real *s = d->cdof_local + 6 * k;
    real *I = IA + PK * k, *u = U + 6 * k;
    int simple = m->dof_simplenum[k] > 0;
    real Dk;
    if (simple) {
      Dk = m->dof_M0[k] + (b ? h * b[k] : 0);
    } else {
      pk_mul(u, I, s);
      Dk = rl_sp_dot(s, u) + m->dof_armature[k] + (b ? h * b[k] : 0);
    }
    if (Dk < MINVAL) Dk = MINVAL;
    Dinv[k] = 1 / Dk;
    if (D) D[k] = Dk;
    int p = m->dof_parentid[k];
    if (p < 0 || simple) continue;
    const real *r = local_dof_offset(m, d, k);
    if (r) {
      real J[PK];
      pk_sub_outer(J, I, Dinv[k], u);
      pk_shift_add(IA + PK * p, J, r);
      local_shift_force(u, r);
    } else {
      pk_add_sub_outer(IA + PK * p, I, Dinv[k], u);
    }
  }
}

/* backward: u_k = x_k − s_kᵀ·p_k,  p_parent += Xᵀ·(p_k + U_k·u_k/D_k);
   forward:  a'_k = X·a_parent,  x_k = (u_k − U_kᵀ·a'_k)/D_k,  a_k = a'_k + s_k·x_k */
static void local_substitute(const rl_model *m, const rl_data *d, const real *U, const real *Dinv, real *P, real *x) {
  int nv = m->nv;
  memset(P, 0, sizeof(real) * 6 * (size_t)nv);
  for (int k = nv - 1; k >= 0; k--) {
    real *pk = P + 6 * k;
    x[k] -= rl_sp_dot(d->cdof_local + 6 * k, pk);
    int p = m->dof_parentid[k];
    if (p < 0) continue;
    real w = x[k] * Dinv[k], pa[6];
    for (int i = 0; i < 6; i++) pa[i] = pk[i] + U[6 * k + i] * w;
    const real *r = local_dof_offset(m, d, k);
    if (r) local_shift_force_add(P + 6 * p, pa, r);
    else
      for (int i = 0; i < 6; i++) P[6 * p + i] += pa[i];
  }
  for (int k = 0; k < nv; k++) {
    int p = m->dof_parentid[k];
    real *ak = P + 6 * k;
    const real *r = p < 0 ? NULL : local_dof_offset(m, d, k);
    if (p < 0) memset(ak, 0, sizeof(real) * 6);
    else if (r) local_shift_motion(ak, P + 6 * p, r);
    else memcpy(ak, P + 6 * p, sizeof(real) * 6);
    x[k] = (x[k] - rl_sp_dot(U + 6 * k, ak)) * Dinv[k];
    for (int i = 0; i < 6; i++) ak[i] += d->cdof_local[6 * k + i] * x[k];
  }
}

/* local_substitute on pk_eliminate's output, whose U_k is Ũ_k = Xᵀ·U_k where dof k's parent is on another
   body (U_k·(X·a) = Ũ_k·a):
   backward: u_k = x_k − s_kᵀ·p_k,  p_parent += Xᵀ·p_k + Ũ_k·u_k/D_k;
   forward:  x_k = (u_k − Ũ_kᵀ·a_parent)/D_k,  a_k = X·a_parent + s_k·x_k.
   The backward pass gathers the forces p in double (Pd, 6 per dof; u_k rounded once): a root's p sums the whole
   tree's, which cancel (MuJoCo's rope sample, Euler's damping solve: qvel at 4.3 float floors at 5 states, seed 3,
   with p in float; 2.4 so), as in rl_solve_ld's leaves-to-root pass.
   A simple body's dof is x_k = x_k/D_k alone: no p or a reaches it from another dof, and none leaves it. */
static void pk_substitute(const rl_model *m, const rl_data *d, const real *U, const real *Dinv, double *Pd, real *P,
                          real *x) {
  int nv = m->nv;
  const int *simple = m->dof_simplenum;
  memset(Pd, 0, sizeof(double) * 6 * (size_t)nv);
  for (int k = nv - 1; k >= 0; k--) {
    int p = m->dof_parentid[k];
    if (simple[k]) continue;
    double *pk = Pd + 6 * k, u = x[k];
    const real *s = d->cdof_local + 6 * k;
    for (int i = 0; i < 6; i++) u -= (double)s[i] * pk[i];
    x[k] = (real)u;
    if (p < 0) continue;
    double w = u * Dinv[k], *pp = Pd + 6 * p;
    const real *r = local_dof_offset(m, d, k);
    if (r) { /* Xᵀ·p_k = [n + r × f; f] */
      double c0 = r[1] * pk[5] - r[2] * pk[4], c1 = r[2] * pk[3] - r[0] * pk[5], c2 = r[0] * pk[4] - r[1] * pk[3];
      pk[0] += c0, pk[1] += c1, pk[2] += c2;
    }
    for (int i = 0; i < 6; i++) pp[i] += pk[i] + U[6 * k + i] * w;
  }
  for (int k = 0; k < nv; k++) {
    int p = m->dof_parentid[k];
    if (simple[k] || p < 0) {
      x[k] *= Dinv[k];
      if (!simple[k]) rl_sp_mul_dof(P + 6 * k, d->cdof_local + 6 * k, x + k, 1);
      continue;
    }
    real *ak = P + 6 * k;
    const real *ap = P + 6 * p, *r = local_dof_offset(m, d, k);
    x[k] = (x[k] - rl_sp_dot(U + 6 * k, ap)) * Dinv[k];
    if (r) local_shift_motion(ak, ap, r);
    else memcpy(ak, ap, sizeof(real) * 6);
    for (int i = 0; i < 6; i++) ak[i] += d->cdof_local[6 * k + i] * x[k];
  }
}

/* The LᵀDL factor of M (qLD's layout: row k holds D_k, then L_k,i for its ancestor dofs i, parent first)
   read off the elimination: after the dofs below k are eliminated, M's entry (k, i) is s_iᵀ·X_{k→i}ᵀ·IA_k·s_k
   = s_iᵀ·(U_k moved to i's point), so  L_k,i = s_iᵀ·(X_{k→i}ᵀ·U_k) / D_k,  1/D_k into diaginv.
   U_k is carried up the dof tree by the force shift (local_dof_offset), link-sized lever arms only; pk_eliminate
   leaves it as Ũ_k, its first shift made.  A simple
   body's row is D_k and exact zeros (pk_eliminate), as rl_factor_ld leaves it. */
static void local_factor_rows(const rl_model *m, const rl_data *d, const real *U, const real *Dinv, const real *D,
                              real *LD, real *diaginv) {
  for (int k = 0; k < m->nv; k++) {
    int a = m->dof_Madr[k];
    LD[a++] = D[k];
    diaginv[k] = Dinv[k];
    if (m->dof_simplenum[k]) {
      for (int i = m->dof_parentid[k]; i >= 0; i = m->dof_parentid[i]) LD[a++] = 0;
      continue;
    }
    real f[6];
    memcpy(f, U + 6 * k, sizeof f); /* Ũ_k: already at its parent dof's point (pk_eliminate) */
    for (int j = k, i = m->dof_parentid[k]; i >= 0; j = i, i = m->dof_parentid[i]) {
      const real *r = j == k ? NULL : local_dof_offset(m, d, j);
      if (r) local_shift_force(f, r);
      LD[a++] = rl_sp_dot(d->cdof_local + 6 * i, f) * Dinv[k];
    }
  }
}

/* qLD, qLDiagInv: M's LᵀDL factor from the articulated-body elimination in local frames (armature on the
   pivots), so that every later M⁻¹ is a sparse substitution (rl_solve_ld) with the recursion's accuracy;
   M itself is never factored.  −1 when the arena is too small (qLD unchanged). */
int rl_factor_m_local(const rl_model *m, rl_data *d) {
  size_t mark = rl_arena_mark(d), nv = (size_t)m->nv;
  real *IA = rl_arena_take(d, 36 * nv + 1), *U = rl_arena_take(d, 6 * nv + 1);
  real *Dinv = rl_arena_take(d, nv + 1), *D = rl_arena_take(d, nv + 1);
  if (!D) {
    rl_arena_release(d, mark);
    return -1;
  }
  pk_assemble(m, d, IA);
  pk_eliminate(m, d, IA, U, Dinv, D, 0, NULL);
  local_factor_rows(m, d, U, Dinv, D, d->qLD, d->qLDiagInv);
  rl_arena_release(d, mark);
  return 0;
}

/* x = (M + h·diag(b))⁻¹·x by the articulated-body recursion in local frames (b NULL: M⁻¹); O(nv);
   −1 when the arena is too small (x unchanged) */
int rl_solve_m_local(const rl_model *m, rl_data *d, real *x, real h, const real *b) {
  size_t mark = rl_arena_mark(d), nv = (size_t)m->nv;
  real *IA = rl_arena_take(d, 36 * nv + 1), *U = rl_arena_take(d, 6 * nv + 1);
  real *P = rl_arena_take(d, 6 * nv + 1), *Dinv = rl_arena_take(d, nv + 1);
  /* f32: pk_substitute's forces in double, 8-byte aligned within 12·nv + 2 reals */
  real *Pw = RL_LOCAL_FRAMES ? rl_arena_take(d, 12 * nv + 2) : P;
  if (!Dinv || !Pw) {
    rl_arena_release(d, mark);
    return -1;
  }
  if (RL_LOCAL_FRAMES) {
    pk_assemble(m, d, IA);
    pk_eliminate(m, d, IA, U, Dinv, NULL, h, b);
  } else {
    local_assemble(m, d, IA);
    local_eliminate(m, d, IA, U, Dinv, NULL, h, b);
  }
  if (RL_LOCAL_FRAMES) pk_substitute(m, d, U, Dinv, (double *)(void *)(((uintptr_t)Pw + 7) & ~(uintptr_t)7), P, x);
  else local_substitute(m, d, U, Dinv, P, x);
  rl_arena_release(d, mark);
  return 0;
}

/* arena reals the local routines take at most: rl_solve_m_local 49·nv + 4, in f32 61·nv + 6 (rl_factor_m_local
   44·nv + 4), rl_rne 18·nbody */
size_t rl_local_arena(const rl_model *m) {
  size_t solve = (RL_LOCAL_FRAMES ? 61 : 49) * (size_t)m->nv + 6, rne = 18 * (size_t)m->nbody;
  return (solve > rne ? solve : rne) + 16;
}
