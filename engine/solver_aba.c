/* solver_aba.c — O(nv) solves with the Newton Hessian H = M + JᵀDJ for tree-structured rows (see
 * rl_solver.h, rl_aba).
 *
 * In MuJoCo's com frame every spatial quantity of a tree is expressed at one point (its root's subtree
 * COM) with world axes, so the articulated-body recursion needs no frame transforms: with s_k = cdof_k,
 * I_k the spatial inertia carried by dof k (the bodies whose last dof is k, plus their row terms) and
 * a_k the spatial acceleration of dof k's link,
 *   H·x = r   ⇔   s_kᵀ·Σ_{j ∈ subtree(k)} I_j·a_j + arm_k·x_k = r_k,   a_k = a_parent(k) + s_k·x_k,
 * which is exactly M's formula M_ij = cdof_iᵀ·crb·cdof_j with the modified inertias.  The recursion is
 * an LᵀDL factorization of H in the dof-tree order, so it matches a Cholesky of the dense H to rounding.
 */
#include <string.h>
#include "rl_engine.h"
#include "rl_spatial.h"

#define MINVAL ((real)1e-15) /* MuJoCo's mjMINVAL: the smallest pivot, as the Cholesky's mindiag */

enum { ROW_NONE = -1, ROW_DOF = 0, ROW_BODY = 1 };

/* ------------------------------------------------------------------ arena */

/* IA 36, U 6, acc 6, Dinv, arm per dof;  rowa 6 and rowdof, rowbody (ints in real slots) per row */
size_t rl_aba_arena(const rl_model *m) { return 50 * (size_t)m->nv + 8 * (size_t)m->nefcmax + 16; }

/* last dof of body b (b has dofs) */
static int last_dof(const rl_model *m, int b) { return m->body_dofadr[b] + m->body_dofnum[b] - 1; }

/* ------------------------------------------------------- row classification */

/* a = s·[off × f ; f]: the row fᵀ·(v_k + ω_k × off) of a point at off (com frame) along f */
static void lin_dir(real a[6], const real off[3], const real f[3], real s) {
  rl_v3_cross(a, off, f);
  for (int i = 0; i < 3; i++) {
    a[i] *= s;
    a[3 + i] = s * f[i];
  }
}

/* a = s·[f ; 0]: the row fᵀ·ω_k */
static void rot_dir(real a[6], const real f[3], real s) {
  for (int i = 0; i < 3; i++) {
    a[i] = s * f[i];
    a[3 + i] = 0;
  }
}

/* Contact row r against the world: J = frame·(J(p on b2) − J(p on b1)) with one side static, so
   J_r = a_rᵀ·cdof with base_j = ±[off × f_j; f_j] (j < 3), ±[f_{j−3}; 0] (j ≥ 3) and
   frictionless: a = base_0;  pyramidal pair k: base_0 ± μ_k·base_k;  elliptic: a = base_j.
   Returns the moving body (0: both bodies move, not expressible). */
static int contact_dir(const rl_model *m, const rl_data *d, int r, real a[6], real *offn) {
  const rl_contact *con = d->contact + d->efc_id[r];
  int b1 = m->geom_bodyid[con->geom1], b2 = m->geom_bodyid[con->geom2];
  int w1 = m->body_weldid[b1], w2 = m->body_weldid[b2];
  if ((w1 > 0) == (w2 > 0) || con->efc_address < 0) return 0;
  int b = w2 > 0 ? b2 : b1, j = r - con->efc_address, k = j;
  real s = w2 > 0 ? 1 : -1, off[3], base0[6], basek[6];
  rl_v3_sub(off, con->pos, d->subtree_com + 3 * m->body_rootid[b]);
  *offn = rl_sqrt(rl_v3_dot(off, off));
  if (d->efc_type[r] == RL_CNSTR_CONTACT_PYRAMIDAL) k = j / 2 + 1;
  else if (d->efc_type[r] == RL_CNSTR_CONTACT_FRICTIONLESS) k = 0;
  if (k < 3) lin_dir(basek, off, con->frame + 3 * k, s);
  else rot_dir(basek, con->frame + 3 * (k - 3), s);
  if (d->efc_type[r] != RL_CNSTR_CONTACT_PYRAMIDAL) {
    memcpy(a, basek, sizeof(real) * 6);
  } else {
    real mu = con->friction[k - 1] * (j % 2 ? -1 : 1);
    lin_dir(base0, off, con->frame, s);
    for (int i = 0; i < 6; i++) a[i] = base0[i] + mu * basek[i];
  }
  return m->body_weldid[b];
}

/* Connect row r with one side static: J = J(p0 on body1) − J(p1 on body2), row e_c (c = 0, 1, 2):
   a = ±[off × e_c; e_c] at the moving body's point.  Returns the moving body (0: not expressible). */
static int connect_dir(const rl_model *m, const rl_data *d, int r, real a[6], real *offn) {
  int e = d->efc_id[r], c = 0;
  while (c < 2 && r - c - 1 >= 0 && d->efc_type[r - c - 1] == RL_CNSTR_EQUALITY && d->efc_id[r - c - 1] == e) c++;
  int b0 = m->eq_obj1id[e], b1 = m->eq_obj2id[e];
  int w0 = m->body_weldid[b0], w1 = m->body_weldid[b1];
  if ((w0 > 0) == (w1 > 0)) return 0;
  int b = w0 > 0 ? b0 : b1;
  const real *local = m->eq_data + RL_NEQDATA * e + (w0 > 0 ? 0 : 3);
  real p[3], off[3], f[3] = {0, 0, 0};
  rl_m3_mulv(p, d->xmat + 9 * b, local);
  rl_v3_add(p, p, d->xpos + 3 * b);
  rl_v3_sub(off, p, d->subtree_com + 3 * m->body_rootid[b]);
  *offn = rl_sqrt(rl_v3_dot(off, off));
  f[c] = 1;
  lin_dir(a, off, f, w0 > 0 ? 1 : -1);
  return m->body_weldid[b];
}

/* 1 if row r's columns lie on the dof path from `last` to its root and, with J_r,k = 0 for path dofs
   not stored, |J_r,k − a·cdof_k| ≤ 256·eps·((‖a‖ + ‖off‖·‖a_v‖)·‖cdof_k‖ + |J_r,k|) on the whole path */
static int row_matches(const rl_model *m, const rl_data *d, int r, int last, const real a[6], real offn) {
  int adr = d->efc_J_rowadr[r], i = d->efc_J_rownnz[r] - 1;
  const real *J = d->efc_J + adr;
  const int *col = d->efc_J_colind + adr;
  real an = rl_sqrt(rl_sp_dot(a, a)), avn = rl_sqrt(rl_v3_dot(a + 3, a + 3)), tol = 256 * RL_EPS;
  for (int k = last; k >= 0; k = m->dof_parentid[k]) {
    real Jk = 0;
    if (i >= 0 && col[i] == k) Jk = J[i--];
    const real *s = d->cdof + 6 * k;
    real v = rl_sp_dot(a, s), sn = rl_sqrt(rl_sp_dot(s, s));
    if (rl_fabs(Jk - v) > tol * ((an + offn * avn) * sn + rl_fabs(Jk))) return 0;
  }
  return i < 0;
}

/* classify row r: body row (with a_r; tried first for contacts and connects), one-dof row, or neither */
static void classify_row(rl_aba *a, const rl_model *m, const rl_data *d, int r) {
  int nnz = d->efc_J_rownnz[r], t = d->efc_type[r], b = 0;
  real *ar = a->rowa + 6 * r, offn = 0;
  if (t == RL_CNSTR_CONTACT_FRICTIONLESS || t == RL_CNSTR_CONTACT_PYRAMIDAL || t == RL_CNSTR_CONTACT_ELLIPTIC)
    b = contact_dir(m, d, r, ar, &offn);
  else if (t == RL_CNSTR_EQUALITY && m->eq_type[d->efc_id[r]] == RL_EQ_CONNECT) b = connect_dir(m, d, r, ar, &offn);
  if (b > 0 && row_matches(m, d, r, last_dof(m, b), ar, offn)) {
    a->rowbody[r] = ROW_BODY;
    a->rowdof[r] = last_dof(m, b);
  } else if (nnz == 1) {
    a->rowbody[r] = ROW_DOF;
    a->rowdof[r] = d->efc_J_colind[d->efc_J_rowadr[r]];
  } else {
    a->rowbody[r] = ROW_NONE;
  }
}

/* an elliptic contact's rows may form one cone block: they must share kind and dof, else none is usable */
static void unify_cone(rl_aba *a, int r, int dim) {
  int same = 1;
  for (int j = 1; j < dim; j++) same = same && a->rowbody[r + j] == a->rowbody[r] && a->rowdof[r + j] == a->rowdof[r];
  if (!same)
    for (int j = 0; j < dim; j++) a->rowbody[r + j] = ROW_NONE;
}

/* 1 if M's diagonal is the one of cdof and crb: qM_kk = cdof_kᵀ·crb_{body(k)}·cdof_k + armature_k to
   64·eps (an M copied in from elsewhere, with cdof/crb of another state, must not reach the recursion) */
static int m_consistent(const rl_model *m, const rl_data *d) {
  for (int k = 0; k < m->nv; k++) {
    real f[6], mk = d->qM[m->dof_Madr[k]];
    rl_sp_inert_mul(f, d->crb + 10 * m->dof_bodyid[k], d->cdof + 6 * k);
    real v = rl_sp_dot(d->cdof + 6 * k, f) + m->dof_armature[k];
    if (!(rl_fabs(v - mk) <= 64 * RL_EPS * rl_fabs(mk))) return 0;
  }
  return 1;
}

/* the tree part of the workspace (IA, U, acc, Dinv, arm); 0, or −1 when the arena is too small */
static int take_tree(rl_aba *a, const rl_model *m, rl_data *d) {
  size_t nv = (size_t)m->nv;
  memset(a, 0, sizeof *a);
  a->nv = m->nv;
  a->IA = rl_arena_take(d, 36 * nv + 1);
  a->U = rl_arena_take(d, 6 * nv + 1);
  a->acc = rl_arena_take(d, 6 * nv + 1);
  a->Dinv = rl_arena_take(d, nv + 1);
  a->arm = rl_arena_take(d, nv + 1);
  return a->arm ? 0 : -1;
}

/* workspace and row classification; check_m: refuse a qM whose diagonal is not cdof/crb's */
static int aba_init(rl_aba *a, const rl_model *m, rl_data *d, int check_m) {
  size_t ne = (size_t)d->nefc;
  if (take_tree(a, m, d)) return a->nbad = -1;
  a->nefc = d->nefc;
  a->rowa = rl_arena_take(d, 6 * ne + 1);
  a->rowdof = (int *)(void *)rl_arena_take(d, ne + 1);
  a->rowbody = (int *)(void *)rl_arena_take(d, ne + 1);
  if (!a->rowbody) return a->nbad = -1;
  if (check_m && !m_consistent(m, d)) return a->nbad = -2;
  for (int r = 0; r < d->nefc; r++) classify_row(a, m, d, r);
  for (int r = 0; r < d->nefc; r++) {
    if (d->efc_type[r] != RL_CNSTR_CONTACT_ELLIPTIC) continue;
    int dim = d->contact[d->efc_id[r]].dim;
    if (r + dim <= d->nefc) unify_cone(a, r, dim);
    r += dim - 1;
  }
  for (int r = 0; r < d->nefc; r++) a->nbad += a->rowbody[r] == ROW_NONE;
  return a->nbad;
}

int rl_aba_init(rl_aba *a, const rl_model *m, rl_data *d) { return aba_init(a, m, d, 1); }

int rl_aba_init_recursive(rl_aba *a, const rl_model *m, rl_data *d) { return aba_init(a, m, d, 0); }

int rl_aba_init_m(rl_aba *a, const rl_model *m, rl_data *d) { return take_tree(a, m, d); }

/* ---------------------------------------------------------------- prepare */

/* cone block from row r: Σ_{p,q} Hc_pq·J_pᵀJ_q — one-dof rows: arm += Σ Hc_pq·J_p·J_q;
   body rows: I += Σ Hc_pq·a_p·a_qᵀ */
static void add_cone(rl_aba *a, const rl_data *d, int r, int n, const real *Hc) {
  int k = a->rowdof[r];
  for (int p = 0; p < n; p++)
    for (int q = 0; q < n; q++) {
      if (a->rowbody[r] == ROW_BODY)
        rl_sp_outer_add(a->IA + 36 * k, Hc[p * n + q], a->rowa + 6 * (r + p), a->rowa + 6 * (r + q));
      else a->arm[k] += Hc[p * n + q] * d->efc_J[d->efc_J_rowadr[r + p]] * d->efc_J[d->efc_J_rowadr[r + q]];
    }
}

/* the tree's own inertias and armatures: I_k = Σ cinert of the bodies welded to the body whose last dof
   is k;  arm_k = armature_k */
static void assemble_tree(rl_aba *a, const rl_model *m, const rl_data *d) {
  memset(a->IA, 0, sizeof(real) * 36 * (size_t)m->nv);
  memcpy(a->arm, m->dof_armature, sizeof(real) * (size_t)m->nv);
  for (int b = 1; b < m->nbody; b++) {
    int w = m->body_weldid[b];
    if (w > 0) rl_sp_inert_add6(a->IA + 36 * last_dof(m, w), d->cinert + 10 * b);
  }
}

/* inertias and armatures of H: the tree's + Σ_quadratic body rows D·a·aᵀ + cone blocks (inertias);
   + Σ_quadratic one-dof rows D·J² (armatures) */
static void assemble(rl_aba *a, const rl_model *m, const rl_data *d, const int *state, const real *coneH,
                     int signorini) {
  assemble_tree(a, m, d);
  for (int r = 0; r < d->nefc; r++) {
    int k = a->rowdof[r];
    if (state[r] == RL_CNSTRSTATE_QUADRATIC) {
      if (a->rowbody[r] == ROW_BODY) {
        rl_sp_outer_add(a->IA + 36 * k, d->efc_D[r], a->rowa + 6 * r, a->rowa + 6 * r);
      } else {
        real j = d->efc_J[d->efc_J_rowadr[r]];
        a->arm[k] += d->efc_D[r] * j * j;
      }
    } else if (state[r] == RL_CNSTRSTATE_CONE && coneH) {
      int n = d->contact[d->efc_id[r]].dim - (signorini ? 1 : 0);
      add_cone(a, d, r, n, coneH + 6 * r);
      r += n - 1;
    }
  }
}

/* leaves to root: U_k = IA_k·s_k,  D_k = max(MINVAL, s_kᵀU_k + arm_k),
   IA_parent += IA_k − U_k·U_kᵀ/D_k */
static void eliminate(rl_aba *a, const rl_model *m, const rl_data *d) {
  for (int k = m->nv - 1; k >= 0; k--) {
    const real *s = d->cdof + 6 * k, *I = a->IA + 36 * k;
    real *U = a->U + 6 * k;
    for (int i = 0; i < 6; i++) U[i] = rl_sp_dot(I + 6 * i, s);
    real Dk = rl_sp_dot(s, U) + a->arm[k];
    if (Dk < MINVAL) Dk = MINVAL;
    a->Dinv[k] = 1 / Dk;
    int p = m->dof_parentid[k];
    if (p < 0) continue;
    real *Ip = a->IA + 36 * p;
    for (int i = 0; i < 36; i++) Ip[i] += I[i];
    rl_sp_outer_add(Ip, -a->Dinv[k], U, U);
  }
}

void rl_aba_prepare(rl_aba *a, const rl_model *m, const rl_data *d, const int *state, const real *coneH,
                    int signorini) {
  assemble(a, m, d, state, coneH, signorini);
  eliminate(a, m, d);
}

/* M + h·diag(b): the tree's inertias, arm_k = armature_k + h·b_k */
void rl_aba_prepare_m(rl_aba *a, const rl_model *m, const rl_data *d, real h, const real *b) {
  assemble_tree(a, m, d);
  if (b)
    for (int k = 0; k < m->nv; k++) a->arm[k] += h * b[k];
  eliminate(a, m, d);
}

/* ------------------------------------------------------------------ solve */

/* backward: u_k = r_k − s_kᵀ·p_k,  p_parent += p_k + U_k·u_k/D_k   (p: articulated bias forces);
   forward:  x_k = (u_k − U_kᵀ·a_parent)/D_k,  a_k = a_parent + s_k·x_k   (a: link accelerations) */
void rl_aba_solve(rl_aba *a, const rl_model *m, const rl_data *d, real *x) {
  int nv = m->nv;
  real *P = a->acc;
  memset(P, 0, sizeof(real) * 6 * (size_t)nv);
  for (int k = nv - 1; k >= 0; k--) {
    real *pk = P + 6 * k;
    x[k] -= rl_sp_dot(d->cdof + 6 * k, pk);
    int p = m->dof_parentid[k];
    if (p < 0) continue;
    real *pp = P + 6 * p, w = x[k] * a->Dinv[k];
    const real *U = a->U + 6 * k;
    for (int i = 0; i < 6; i++) pp[i] += pk[i] + U[i] * w;
  }
  for (int k = 0; k < nv; k++) {
    int p = m->dof_parentid[k];
    real *ak = P + 6 * k;
    const real *s = d->cdof + 6 * k;
    if (p < 0) {
      x[k] *= a->Dinv[k];
      for (int i = 0; i < 6; i++) ak[i] = s[i] * x[k];
    } else {
      const real *ap = P + 6 * p;
      x[k] = (x[k] - rl_sp_dot(a->U + 6 * k, ap)) * a->Dinv[k];
      for (int i = 0; i < 6; i++) ak[i] = ap[i] + s[i] * x[k];
    }
  }
}

/* ------------------------------------------------------------ M·v without M */

/* r = M·v by composite-body recursion (RNEA at zero velocity and gravity):
   v_b = v_parent + Σ_{dofs k of b} cdof_k·v_k,  f_b = cinert_b·v_b,  f_parent += f_b (leaves to root),
   r_k = cdof_kᵀ·f_{body(k)} + armature_k·v_k.  O(nbody + nv); 12·nbody arena reals. */
int rl_mul_m_recursive(const rl_model *m, rl_data *d, real *r, const real *v) {
  size_t mark = rl_arena_mark(d);
  real *vel = rl_arena_take(d, 6 * (size_t)m->nbody), *frc = rl_arena_take(d, 6 * (size_t)m->nbody);
  if (!frc) {
    rl_arena_release(d, mark);
    return -1;
  }
  memset(vel, 0, sizeof(real) * 6);
  memset(frc, 0, sizeof(real) * 6);
  for (int b = 1; b < m->nbody; b++) {
    real *vb = vel + 6 * b;
    const real *vp = vel + 6 * m->body_parentid[b];
    int da = m->body_dofadr[b];
    for (int i = 0; i < 6; i++) vb[i] = vp[i];
    for (int k = da; k < da + m->body_dofnum[b]; k++)
      for (int i = 0; i < 6; i++) vb[i] += d->cdof[6 * k + i] * v[k];
    rl_sp_inert_mul(frc + 6 * b, d->cinert + 10 * b, vb);
  }
  for (int b = m->nbody - 1; b > 0; b--) {
    int p = m->body_parentid[b];
    if (p > 0)
      for (int i = 0; i < 6; i++) frc[6 * p + i] += frc[6 * b + i];
  }
  for (int k = 0; k < m->nv; k++)
    r[k] = rl_sp_dot(d->cdof + 6 * k, frc + 6 * m->dof_bodyid[k]) + m->dof_armature[k] * v[k];
  rl_arena_release(d, mark);
  return 0;
}
