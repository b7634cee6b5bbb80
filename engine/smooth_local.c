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
#include "rl_engine.h"
#include "rl_spatial.h"

#define MINVAL ((real)1e-15) /* MuJoCo's mjMINVAL: the smallest pivot */

/* The local frames' geometry, all from link-sized terms (xpos_rel, xanchor_rel, c_b = R_b·ipos_b = q_b − x_b):
     body_shift_b = q_b − q_parent = xpos_rel_b + c_b − c_parent            (the world's c is 0)
     weld_shift_b = q_b − q_w, w the weld root of b's parent: body_shift_b, plus weld_shift_parent when
                    the parent has no dofs (a dofless body's offset from the body it is welded to, and a
                    body with dofs' offset from the body of its parent dof)
     cdof_local: rl_joint_dofs at q_b.  Uses 3·nbody arena reals while it runs. */
void rl_local_frames(const rl_model *m, rl_data *d) {
  size_t mark = rl_arena_mark(d);
  real *c = rl_arena_take(d, 3 * (size_t)m->nbody);
  if (!c) return; /* not reached: arena_reals covers it */
  rl_v3_zero(c);
  for (int b = 1; b < m->nbody; b++) rl_m3_mulv(c + 3 * b, d->xmat + 9 * b, m->body_ipos + 3 * b);
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
  /* cdof_local: the dofs at q_b, lever q_b − anchor = c_b − xanchor_rel_j */
  for (int j = 0; j < m->njnt; j++) {
    real off[3];
    rl_v3_sub(off, c + 3 * m->jnt_bodyid[j], d->xanchor_rel + 3 * j);
    rl_joint_dofs(m, d, j, off, d->cdof_local + 6 * m->jnt_dofadr[j]);
  }
  rl_arena_release(d, mark);
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

/* body b's spatial inertia about its own COM (10 numbers, h = 0): R·diag(J)·Rᵀ, m */
static void local_inertia(const rl_model *m, const rl_data *d, int b, real c[10]) {
  static const real zero[3] = {0, 0, 0};
  rl_sp_inert_com(c, m->body_inertia + 3 * b, d->ximat + 9 * b, zero, m->body_mass[b]);
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
    real I[10], t[6];
    local_body_motion(m, d, b, v, a);
    local_inertia(m, d, b, I);
    rl_sp_inert_mul(f + 6 * b, I, a + 6 * b);
    rl_sp_inert_cross(t, I, v + 6 * b);
    for (int k = 0; k < 6; k++) f[6 * b + k] += t[k];
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
    rl_sp_inert_com(c, m->body_inertia + 3 * b, d->ximat + 9 * b, w == b ? zero : d->weld_shift + 3 * b,
                    m->body_mass[b]);
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

/* f_parent = Xᵀ·f = [n + r × f; f], in place */
static void local_shift_force(real f[6], const real r[3]) {
  real c[3];
  rl_v3_cross(c, r, f + 3);
  for (int i = 0; i < 3; i++) f[i] += c[i];
}

/* The LᵀDL factor of M (qLD's layout: row k holds D_k, then L_k,i for its ancestor dofs i, parent first)
   read off the elimination: after the dofs below k are eliminated, M's entry (k, i) is s_iᵀ·X_{k→i}ᵀ·IA_k·s_k
   = s_iᵀ·(U_k moved to i's point), so  L_k,i = s_iᵀ·(X_{k→i}ᵀ·U_k) / D_k,  1/D_k into diaginv.
   U_k is carried up the dof tree by the force shift (local_dof_offset), link-sized lever arms only. */
static void local_factor_rows(const rl_model *m, const rl_data *d, const real *U, const real *Dinv, const real *D,
                              real *LD, real *diaginv) {
  for (int k = 0; k < m->nv; k++) {
    int a = m->dof_Madr[k];
    LD[a++] = D[k];
    diaginv[k] = Dinv[k];
    real f[6];
    memcpy(f, U + 6 * k, sizeof f);
    for (int j = k, i = m->dof_parentid[k]; i >= 0; j = i, i = m->dof_parentid[i]) {
      const real *r = local_dof_offset(m, d, j);
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
  local_assemble(m, d, IA);
  local_eliminate(m, d, IA, U, Dinv, D, 0, NULL);
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
  if (!Dinv) {
    rl_arena_release(d, mark);
    return -1;
  }
  local_assemble(m, d, IA);
  local_eliminate(m, d, IA, U, Dinv, NULL, h, b);
  local_substitute(m, d, U, Dinv, P, x);
  rl_arena_release(d, mark);
  return 0;
}

/* arena reals the local routines take at most: rl_solve_m_local 49·nv + 4 (rl_factor_m_local 44·nv + 4),
   rl_rne 18·nbody,
   rl_local_frames 3·nbody */
size_t rl_local_arena(const rl_model *m) {
  size_t solve = 49 * (size_t)m->nv + 4, rne = 18 * (size_t)m->nbody;
  return (solve > rne ? solve : rne) + 16;
}
