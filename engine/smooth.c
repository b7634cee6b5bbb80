/* smooth.c — smooth (constraint-free) dynamics in generalized coordinates.
 *
 * Kinematics, composite rigid body inertia, sparse LᵀDL of M along the dof tree,
 * recursive Newton–Euler bias forces, passive and actuator forces, qacc_smooth.
 * Formulas follow Featherstone's spatial algebra in the "com" frame used by MuJoCo
 * (every spatial quantity of a body is expressed at its root subtree's COM, with
 * world-aligned axes), which is what makes a 1e-12 stage-by-stage comparison with
 * MuJoCo meaningful.
 */
#include <string.h>
#include "rl_engine.h"
#include "rl_spatial.h"
#include "rl_so3.h"

/* ---------------------------------------------------------------- kinematics */

/* A frame that is its body's frame (sameframe 1: x = x_b, R = R_b) or its body's inertial frame (2: x = x_i,
   R = R_i) is a copy of it in f64 (as in MuJoCo), as is a geom's on the world body in both precisions (its
   constant frame made at build, geom_xpos0 and geom_xmat0: x0 and R0 NULL for sites); else rl_frame_to_global.
   f32 composes the copies too: rl_frame_to_global renormalizes there, and the copies of the once-normalized body
   frames moved box_pyramid's f32 contact distances (elliptic cones, verify) from 4.6e-4 to 1.3e-3 of MuJoCo's,
   over the 1e-3 tolerance; composed, f32's frames are those its bars were measured with. */
static void frame_pose(const rl_data *d, real xpos[3], real xmat[9], int b, const real pos[3], const real quat[4],
                       int sameframe, const real *x0, const real *R0) {
  if (RL_LOCAL_FRAMES && b > 0) sameframe = 0;
  if (sameframe == 1) {
    rl_v3_copy(xpos, d->xpos + 3 * b);
    memcpy(xmat, d->xmat + 9 * b, 9 * sizeof(real));
  } else if (sameframe == 2) {
    rl_v3_copy(xpos, d->xipos + 3 * b);
    memcpy(xmat, d->ximat + 9 * b, 9 * sizeof(real));
  } else if (b == 0 && x0) {
    rl_v3_copy(xpos, x0);
    memcpy(xmat, R0, 9 * sizeof(real));
  } else {
    rl_frame_to_global(xpos, xmat, d->xpos + 3 * b, d->xquat + 4 * b, d->xmat + 9 * b, pos, quat, NULL);
  }
}

/* Body pose from its parent and its joints:
   mocap: x = mocap_pos, q = mocap_quat/‖·‖ (world frame)
   free:  x = qpos[0:3], q = qpos[3:7]/‖·‖ (world frame)
   else:  x = x_p + R_p·pos_b, q = q_p ⊗ quat_b, then per joint (anchor a = x + R·pos_j, axis n = R·axis_j)
          slide: x += n·(q_j − q0_j);  hinge/ball: q ← q ⊗ q_loc, x = a − R(q)·pos_j;
   then q ← q/‖q‖ for every body (the mocap and free ones' a second time), mj_kinematics' order: its frames, and
   the frames that copy them (sameframe), are MuJoCo's to the bit.  f32 normalizes each q once (the mocap and
   free ones right after they are read): normalizing a float quaternion that is already unit rounds the root's
   orientation a second time, which alone moved cassie_like's f32 q̈_smooth from 8.4e-6 to 1.2e-5 of MuJoCo's.
   Beside x and a, the same recursion on δ = x − x_p and a − x_p from the link-sized terms alone gives
   xpos_rel = δ and xanchor_rel = (a − x_p) − δ without the rounding of world positions. */
static void body_pose(const rl_model *m, rl_data *d, int b) {
  real *xpos = d->xpos + 3 * b, *xquat = d->xquat + 4 * b, *rel = d->xpos_rel + 3 * b;
  const real *qpos = d->qpos;
  int jadr = m->body_jntadr[b], jnum = m->body_jntnum[b], k = m->body_mocapid[b];
  if (k >= 0) { /* mocap: the prescribed world pose (a child of the world without joints) */
    rl_v3_copy(xpos, d->mocap_pos + 3 * k);
    rl_q_copy(xquat, d->mocap_quat + 4 * k);
    rl_q_normalize(xquat);
    rl_v3_sub(rel, xpos, d->xpos + 3 * m->body_parentid[b]);
  } else if (jnum > 0 && m->jnt_type[jadr] == RL_JNT_FREE) {
    int a = m->jnt_qposadr[jadr];
    rl_v3_copy(xpos, qpos + a);
    rl_q_copy(xquat, qpos + a + 3);
    rl_q_normalize(xquat);
    rl_v3_copy(d->xanchor + 3 * jadr, xpos);
    rl_v3_copy(d->xaxis + 3 * jadr, m->jnt_axis + 3 * jadr);
    rl_v3_sub(rel, xpos, d->xpos + 3 * m->body_parentid[b]);
    rl_v3_zero(d->xanchor_rel + 3 * jadr);
  } else {
    int p = m->body_parentid[b];
    real t[3];
    rl_m3_mulv(t, d->xmat + 9 * p, m->body_pos + 3 * b);
    rl_v3_add(xpos, d->xpos + 3 * p, t);
    rl_v3_copy(rel, t);
    rl_q_mul(xquat, d->xquat + 4 * p, m->body_quat + 4 * b);
    for (int j = jadr; j < jadr + jnum; j++) {
      int a = m->jnt_qposadr[j];
      real *anchor = d->xanchor + 3 * j, *axis = d->xaxis + 3 * j, *arel = d->xanchor_rel + 3 * j;
      rl_q_rotate(axis, xquat, m->jnt_axis + 3 * j);
      rl_q_rotate(t, xquat, m->jnt_pos + 3 * j);
      rl_v3_add(anchor, xpos, t);
      rl_v3_add(arel, rel, t); /* a − x_p for now */
      int type = m->jnt_type[j];
      if (type == RL_JNT_SLIDE) {
        rl_v3_addscl(xpos, axis, qpos[a] - m->qpos0[a]);
        rl_v3_addscl(rel, axis, qpos[a] - m->qpos0[a]);
      } else {
        real qloc[4];
        if (type == RL_JNT_BALL) {
          rl_q_copy(qloc, qpos + a);
          rl_q_normalize(qloc);
        } else {
          rl_q_from_axis_angle(qloc, m->jnt_axis + 3 * j, qpos[a] - m->qpos0[a]);
        }
        rl_q_mul(xquat, xquat, qloc);
        rl_q_rotate(t, xquat, m->jnt_pos + 3 * j);
        rl_v3_sub(xpos, anchor, t);
        rl_v3_sub(rel, arel, t);
      }
    }
    for (int j = jadr; j < jadr + jnum; j++) rl_v3_sub(d->xanchor_rel + 3 * j, d->xanchor_rel + 3 * j, rel);
    if (RL_LOCAL_FRAMES) rl_q_normalize(xquat);
  }
  if (!RL_LOCAL_FRAMES) rl_q_normalize(xquat); /* f64: every body's q, as mj_kinematics */
  rl_q_to_mat(d->xmat + 9 * b, xquat);
}

void rl_kinematics(const rl_model *m, rl_data *d) {
  rl_v3_zero(d->xpos);
  rl_v3_zero(d->xpos_rel);
  rl_q_identity(d->xquat);
  rl_m3_identity(d->xmat);
  rl_v3_zero(d->xipos);
  rl_v3_zero(d->xipos_rel);
  rl_m3_identity(d->ximat);
  for (int b = 1; b < m->nbody; b++) {
    body_pose(m, d, b);
    if (m->body_sameframe[b] && !RL_LOCAL_FRAMES) { /* x_i = x_b, R_i = R_b (f64, as frame_pose) */
      rl_v3_copy(d->xipos + 3 * b, d->xpos + 3 * b);
      memcpy(d->ximat + 9 * b, d->xmat + 9 * b, 9 * sizeof(real));
      continue;
    }
    rl_frame_to_global(d->xipos + 3 * b, d->ximat + 9 * b, d->xpos + 3 * b, d->xquat + 4 * b, d->xmat + 9 * b,
                       m->body_ipos + 3 * b, m->body_iquat + 4 * b,
                       RL_LOCAL_FRAMES ? d->xipos_rel + 3 * b : NULL); /* f32's local frames read it */
  }
  for (int g = 0; g < m->ngeom; g++)
    frame_pose(d, d->geom_xpos + 3 * g, d->geom_xmat + 9 * g, m->geom_bodyid[g], m->geom_pos + 3 * g,
               m->geom_quat + 4 * g, m->geom_sameframe[g], m->geom_xpos0 + 3 * g, m->geom_xmat0 + 9 * g);
  for (int s = 0; s < m->nsite; s++)
    frame_pose(d, d->site_xpos + 3 * s, d->site_xmat + 9 * s, m->site_bodyid[s], m->site_pos + 3 * s,
               m->site_quat + 4 * s, m->site_sameframe[s], NULL, NULL);
}

/* ------------------------------------------------------------------ com frame */

/* Motion subspaces of joint j's dofs (6 numbers each) at a reference point p, off = p − anchor:
   hinge [a; a × off], slide [0; a], ball [R_k; R_k × off] for the body axes R_k, free: [0; e_k] (world
   translation) then the ball part about the body origin. */
void rl_joint_dofs(const rl_model *m, const rl_data *d, int j, const real off[3], real *s) {
  switch (m->jnt_type[j]) {
  case RL_JNT_FREE:
    for (int k = 0; k < 3; k++) {
      real e[3] = {0, 0, 0};
      e[k] = 1;
      rl_sp_dof(s + 6 * k, e, NULL);
    }
    s += 18;
    /* fall through */
  case RL_JNT_BALL:
    for (int k = 0; k < 3; k++) {
      const real *R = d->xmat + 9 * m->jnt_bodyid[j];
      real col[3] = {R[k], R[3 + k], R[6 + k]}; /* body axis k in world */
      rl_sp_dof(s + 6 * k, col, off);
    }
    break;
  case RL_JNT_SLIDE: rl_sp_dof(s, d->xaxis + 3 * j, NULL); break;
  default: rl_sp_dof(s, d->xaxis + 3 * j, off); break;
  }
}

void rl_joint_dofs2(const rl_model *m, const rl_data *d, int j, const real off[3], const real off2[3], real *s,
                    real *s2) {
  switch (m->jnt_type[j]) {
  case RL_JNT_FREE:
    for (int k = 0; k < 3; k++) {
      real e[3] = {0, 0, 0};
      e[k] = 1;
      rl_sp_dof(s + 6 * k, e, NULL);
      rl_sp_dof(s2 + 6 * k, e, NULL);
    }
    s += 18;
    s2 += 18;
    /* fall through */
  case RL_JNT_BALL:
    for (int k = 0; k < 3; k++) {
      const real *R = d->xmat + 9 * m->jnt_bodyid[j];
      real col[3] = {R[k], R[3 + k], R[6 + k]};
      rl_sp_dof(s + 6 * k, col, off);
      rl_sp_dof(s2 + 6 * k, col, off2);
    }
    break;
  case RL_JNT_SLIDE:
    rl_sp_dof(s, d->xaxis + 3 * j, NULL);
    rl_sp_dof(s2, d->xaxis + 3 * j, NULL);
    break;
  default:
    rl_sp_dof(s, d->xaxis + 3 * j, off);
    rl_sp_dof(s2, d->xaxis + 3 * j, off2);
    break;
  }
}

/* subtree COM c_b = Σ_{i∈subtree(b)} m_i·xipos_i / M_b (c_b = xipos_b exactly when M_b = m_b: the mean of
   one mass point, e.g. a free body alone, is that point, not (m·x)/m rounded);
   cinert_b = spatial inertia about c_root(b);  cdof = motion subspace at c_root.  f32 (RL_LOCAL_FRAMES) keeps
   inert_local_b = R_b·diag(J_b)·R_bᵀ (about the body's own COM) on the way to cinert_b, and makes the local
   frames (rl_local_frames) here. */
void rl_com_pos(const rl_model *m, rl_data *d) {
  int nb = m->nbody;
  for (int b = 0; b < nb; b++) rl_v3_scale(d->subtree_com + 3 * b, d->xipos + 3 * b, m->body_mass[b]);
  for (int b = nb - 1; b > 0; b--)
    rl_v3_add(d->subtree_com + 3 * m->body_parentid[b], d->subtree_com + 3 * m->body_parentid[b],
              d->subtree_com + 3 * b);
  for (int b = 0; b < nb; b++) {
    real sm = m->body_subtreemass[b];
    if (sm < RL_TINY || sm == m->body_mass[b]) rl_v3_copy(d->subtree_com + 3 * b, d->xipos + 3 * b);
    else rl_v3_scale(d->subtree_com + 3 * b, d->subtree_com + 3 * b, 1 / sm);
  }
  memset(d->cinert, 0, sizeof(real) * 10);
  for (int b = 1; b < nb; b++) {
    real off[3];
    rl_v3_sub(off, d->xipos + 3 * b, d->subtree_com + 3 * m->body_rootid[b]);
    if (RL_LOCAL_FRAMES) {
      rl_sp_inert_rot(d->inert_local + 6 * b, m->body_inertia + 3 * b, d->ximat + 9 * b);
      rl_sp_inert_offset(d->cinert + 10 * b, d->inert_local + 6 * b, off, m->body_mass[b]);
    } else {
      rl_sp_inert_com(d->cinert + 10 * b, m->body_inertia + 3 * b, d->ximat + 9 * b, off, m->body_mass[b]);
    }
  }
  if (RL_LOCAL_FRAMES) { /* f32 evaluates bias forces and M⁻¹ in local frames (rl_local_frames, made here) */
    rl_local_shifts(m, d);
    for (int j = 0; j < m->njnt; j++) {
      real off[3], offl[3];
      rl_v3_sub(off, d->subtree_com + 3 * m->body_rootid[m->jnt_bodyid[j]], d->xanchor + 3 * j);
      rl_v3_sub(offl, d->xipos_rel + 3 * m->jnt_bodyid[j], d->xanchor_rel + 3 * j);
      int a = 6 * m->jnt_dofadr[j];
      rl_joint_dofs2(m, d, j, off, offl, d->cdof + a, d->cdof_local + a);
    }
    return;
  }
  for (int j = 0; j < m->njnt; j++) {
    real off[3];
    rl_v3_sub(off, d->subtree_com + 3 * m->body_rootid[m->jnt_bodyid[j]], d->xanchor + 3 * j);
    rl_joint_dofs(m, d, j, off, d->cdof + 6 * m->jnt_dofadr[j]);
  }
}

/* ------------------------------------------------------------- mass matrix */

/* number of entries of row i of the sparse M: i and its dof ancestors (the rows are stored one after the
   other from dof_Madr) */
static int m_rowlen(const rl_model *m, int i) { return (i + 1 < m->nv ? m->dof_Madr[i + 1] : m->nM) - m->dof_Madr[i]; }

/* crb_b = cinert_b + Σ_children crb_c;  M(i,j) = cdof_jᵀ·(crb_{body(i)}·cdof_i) for j ancestor of i;
   M(i,i) += armature_i.  A simple body's dof (dof_simplenum): M(i,i) = dof_M0_i, its other entries 0 (its M block
   is diagonal and constant; MuJoCo 2.2.2 writes the same). */
void rl_crb(const rl_model *m, rl_data *d) {
  memcpy(d->crb, d->cinert, sizeof(real) * 10 * (size_t)m->nbody);
  for (int b = m->nbody - 1; b > 0; b--) {
    int p = m->body_parentid[b];
    if (p > 0)
      for (int k = 0; k < 10; k++) d->crb[10 * p + k] += d->crb[10 * b + k];
  }
  for (int i = 0; i < m->nv; i++) {
    if (m->dof_simplenum[i]) {
      int a = m->dof_Madr[i];
      d->qM[a] = m->dof_M0[i];
      for (int j = m->dof_parentid[i]; j >= 0; j = m->dof_parentid[j]) d->qM[++a] = 0;
      continue;
    }
    real f[6];
    rl_sp_inert_mul(f, d->crb + 10 * m->dof_bodyid[i], d->cdof + 6 * i);
    for (int a = m->dof_Madr[i], end = a + m_rowlen(m, i); a < end; a++)
      d->qM[a] = rl_sp_dot(d->cdof + 6 * m->M_colind[a], f);
    d->qM[m->dof_Madr[i]] += m->dof_armature[i];
  }
}

/* row i −= t·(row k's tail from entry aki): the ancestor i's row and the tail of row k (the same columns: i and
   its ancestors) are disjoint stretches of LD */
static void row_sub_scaled(real *restrict rowi, const real *restrict tail, real t, int n) {
  for (int s = 0; s < n; s++) rowi[s] -= t * tail[s];
}

/* In-place sparse factorization M = Lᵀ·D·L (L unit lower, nonzeros only at dof ancestors),
   eliminating from the leaves: for k = nv−1…0, for ancestors i of k:
   L(k,i) = M(k,i)/M(k,k);  M(i,j) −= L(k,i)·M(k,j) for j ∈ {i} ∪ ancestors(i).
   A simple body's dof has only zeros beside its diagonal (rl_crb): L(k,·) = 0, nothing to eliminate. */
void rl_factor_ld(const rl_model *m, real *LD, real *diaginv) {
  const int *col = m->M_colind;
  for (int k = m->nv - 1; k >= 0; k--) {
    int akk = m->dof_Madr[k];
    if (LD[akk] < RL_TINY) LD[akk] = RL_TINY;
    if (m->dof_simplenum[k]) continue;
    /* the ancestor i at entry aki has a row of end − aki entries (one less at each ancestor up) */
    for (int aki = akk + 1, end = akk + m_rowlen(m, k); aki < end; aki++) {
      real t = LD[aki] / LD[akk];
      row_sub_scaled(LD + m->dof_Madr[col[aki]], LD + aki, t, end - aki);
      LD[aki] = t;
    }
  }
  for (int i = 0; i < m->nv; i++) diaginv[i] = 1 / LD[m->dof_Madr[i]];
}

void rl_factor_m(const rl_model *m, rl_data *d) {
  memcpy(d->qLD, d->qM, sizeof(real) * (size_t)m->nM);
  rl_factor_ld(m, d->qLD, d->qLDiagInv);
}

/* the pipeline's factor: f64 qM's (rl_factor_m, MuJoCo's); f32 (RL_LOCAL_FRAMES) read off the local-frame
   recursion (rl_factor_m_local; its arena room is in arena_reals) */
void rl_factor_m_step(const rl_model *m, rl_data *d) {
  if (RL_LOCAL_FRAMES && rl_factor_m_local(m, d) == 0) return;
  rl_factor_m(m, d);
}

/* The leaves-to-root pass x_j ← b_j − Σ_k L_kj·x_k over the dofs k of j's subtree (k > j), each sum gathered at j
   in double and rounded once, with the dofs numbered depth first (dof_treeend): row k holds its ancestor j at
   dof_Madr[k] + depth(k) − depth(j).  A product of two floats is exact in double and each addition rounds at 2⁻⁵³, so
   x_j is the exact sum rounded to float to within a few units of 2⁻⁵³·Σ|terms|.  The root's sums gather the whole
   tree's terms, which cancel: on MuJoCo's cloth sample (162 hinges under a free root, κ(M) ≈ 5e6) the float pass put
   qacc_smooth at 6–11× the error of M and the forces rounded to float once; gathered so, at it.  (A compensated
   float sum, rl_dot2's error-free products and additions, gives the same figures but is a serial chain of four
   additions per term: 2.3× this pass's time.) */
static void solve_ld_up_gathered(const rl_model *m, const real *LD, real *x) {
  const int *simple = m->dof_simplenum, *depth = m->dof_depth;
  for (int j = m->nv - 1; j >= 0; j--) {
    if (simple[j]) continue;
    const real *Lj = LD - depth[j];
    double s = x[j];
    for (int k = j + 1; k <= m->dof_treeend[j]; k++) s -= (double)Lj[m->dof_Madr[k] + depth[k]] * (double)x[k];
    x[j] = (real)s;
  }
}

/* x = (LᵀDL)⁻¹ b:  x ← L⁻ᵀ b (leaves to root), x ← D⁻¹x, x ← L⁻¹x (root to leaves).  A simple body's rows of a
   factor are zero beside the diagonal (rl_factor_ld; in f32 rl_factor_m_local, which pivots them on dof_M0) and
   are skipped.  f32 (RL_GATHERED_SOLVE) gathers each leaves-to-root sum in double where the dofs are numbered depth
   first (solve_ld_up_gathered). */
void rl_solve_ld(const rl_model *m, const real *LD, const real *diaginv, real *x) {
  const int *simple = m->dof_simplenum, *col = m->M_colind;
  if (RL_GATHERED_SOLVE && m->nv > 0 && m->dof_treeend[0] >= 0) solve_ld_up_gathered(m, LD, x);
  else
    for (int i = m->nv - 1; i >= 0; i--) {
      real xi = x[i];
      if (xi == 0 || simple[i]) continue;
      for (int a = m->dof_Madr[i] + 1, end = m->dof_Madr[i] + m_rowlen(m, i); a < end; a++) x[col[a]] -= LD[a] * xi;
    }
  for (int i = 0; i < m->nv; i++) x[i] *= diaginv[i];
  for (int i = 0; i < m->nv; i++) {
    if (simple[i]) continue;
    real xi = x[i];
    for (int a = m->dof_Madr[i] + 1, end = m->dof_Madr[i] + m_rowlen(m, i); a < end; a++) xi -= LD[a] * x[col[a]];
    x[i] = xi;
  }
}

void rl_solve_m(const rl_model *m, const rl_data *d, real *x, const real *b, int n) {
  for (int c = 0; c < n; c++) {
    real *xc = x + (size_t)c * m->nv;
    if (xc != b + (size_t)c * m->nv) memcpy(xc, b + (size_t)c * m->nv, sizeof(real) * (size_t)m->nv);
    rl_solve_ld(m, d->qLD, d->qLDiagInv, xc);
  }
}

/* r = M·v with M stored as its lower triangle along the dof tree (symmetric).  Row i's own sum is kept in a
   register: its descendants (higher indices) add to r[i] only after row i is done, so the order of the
   additions is r_i = M_ii·v_i + Σ_ancestors j M_ij·v_j + Σ_descendants k M_ki·v_k in increasing k. */
void rl_mul_m(const rl_model *m, const rl_data *d, real *r, const real *v) {
  const real *M = d->qM;
  const int *col = m->M_colind;
  for (int i = 0; i < m->nv; i++) r[i] = M[m->dof_Madr[i]] * v[i];
  for (int i = 0; i < m->nv; i++) {
    if (m->dof_simplenum[i]) continue; /* a simple body's dof: diagonal only (rl_crb) */
    real ri = r[i], vi = v[i];
    for (int a = m->dof_Madr[i] + 1, end = m->dof_Madr[i] + m_rowlen(m, i); a < end; a++) {
      int j = col[a];
      ri += M[a] * v[j];
      r[j] += M[a] * vi;
    }
    r[i] = ri;
  }
}

void rl_full_m(const rl_model *m, const rl_data *d, real *dense) {
  int nv = m->nv;
  memset(dense, 0, sizeof(real) * (size_t)nv * nv);
  for (int i = 0; i < nv; i++) {
    int a = m->dof_Madr[i];
    for (int j = i; j >= 0; j = m->dof_parentid[j], a++) {
      dense[i * nv + j] = d->qM[a];
      dense[j * nv + i] = d->qM[a];
    }
  }
}

/* Columns of J for the dofs that move body b: jacr_i = ω_i, jacp_i = v_i + ω_i × (p − c_root). */
void rl_jac_point(const rl_model *m, const rl_data *d, real *jacp, real *jacr, const real p[3], int b) {
  int nv = m->nv;
  if (jacp) memset(jacp, 0, sizeof(real) * 3 * (size_t)nv);
  if (jacr) memset(jacr, 0, sizeof(real) * 3 * (size_t)nv);
  int w = m->body_weldid[b]; /* first body at or above b that has dofs; 0 (world) if none */
  if (w <= 0) return;
  real off[3];
  rl_v3_sub(off, p, d->subtree_com + 3 * m->body_rootid[b]);
  for (int i = m->body_dofadr[w] + m->body_dofnum[w] - 1; i >= 0; i = m->dof_parentid[i]) {
    const real *c = d->cdof + 6 * i;
    if (jacr) {
      jacr[i] = c[0];
      jacr[nv + i] = c[1];
      jacr[2 * nv + i] = c[2];
    }
    if (jacp) {
      real t[3];
      rl_v3_cross(t, c, off);
      jacp[i] = c[3] + t[0];
      jacp[nv + i] = c[4] + t[1];
      jacp[2 * nv + i] = c[5] + t[2];
    }
  }
}

/* --------------------------------------------------------------- velocities */

/* One body's velocity recursion over its joints, in MuJoCo's mj_comVel order:
   cvel ← cvel_parent;  per joint j with joint velocity s_j = S_j·q̇_j (free: the translation part
   s = [0; v] first, then the rotation part as a ball joint):
     cdof_dot_i = cvel ×ₘ cdof_i for the dofs i of j, with cvel taken before s_j (free translation: 0);
     acc += Σ_i cdof_dot_i·q̇_i, for ball/free rotation evaluated as cvel ×ₘ s_j (equal by linearity);
     cvel += s_j.
   cdof_dot (the model's nv×6 array) and acc may be NULL.  For ball/free, acc is formed from the same
   rounded s_j = [ω; ω×off] that enters cvel: for a free body at its COM, m·(v×ω) from acc and m·(ω×v)
   in the velocity product (rl_sp_inert_cross) are then bitwise negatives and cancel exactly (the sum
   Σ_k (v×R_k)·ω_k leaves ~ε·m|v||ω|).  Hinge and slide keep MuJoCo's (cvel ×ₘ cdof)·q̇. */
static void body_velocity(const rl_model *m, const rl_data *d, int b, real cvel[6], real *cdof_dot, real acc[6]) {
  memcpy(cvel, d->cvel + 6 * m->body_parentid[b], sizeof(real) * 6);
  if (acc) memset(acc, 0, sizeof(real) * 6);
  for (int j = m->body_jntadr[b]; j < m->body_jntadr[b] + m->body_jntnum[b]; j++) {
    int da = m->jnt_dofadr[j], n = 1;
    real s[6], t[6];
    switch (m->jnt_type[j]) {
    case RL_JNT_FREE:
      if (cdof_dot) memset(cdof_dot + 6 * da, 0, sizeof(real) * 18);
      rl_sp_mul_dof(s, d->cdof + 6 * da, d->qvel + da, 3);
      for (int k = 0; k < 6; k++) cvel[k] += s[k];
      da += 3;
      /* fall through */
    case RL_JNT_BALL: n = 3; break;
    default: break;
    }
    if (cdof_dot)
      for (int k = 0; k < n; k++) rl_sp_cross_motion(cdof_dot + 6 * (da + k), cvel, d->cdof + 6 * (da + k));
    rl_sp_mul_dof(s, d->cdof + 6 * da, d->qvel + da, n);
    if (acc) {
      if (n == 1) { /* hinge/slide: (cvel ×ₘ cdof)·q̇, MuJoCo's cdof_dot·q̇ */
        rl_sp_cross_motion(t, cvel, d->cdof + 6 * da);
        for (int k = 0; k < 6; k++) acc[k] += t[k] * d->qvel[da];
      } else {
        rl_sp_cross_motion(t, cvel, s);
        for (int k = 0; k < 6; k++) acc[k] += t[k];
      }
    }
    for (int k = 0; k < 6; k++) cvel[k] += s[k];
  }
}

/* cvel_b = cvel_parent + Σ cdof·q̇ over b's joints;  cdof_dot = cvel ×ₘ cdof with cvel taken before the
   joint's own contribution (free: translation dofs have cdof_dot = 0, rotation uses cvel after the
   translation part), exactly the recursion MuJoCo evaluates. */
void rl_com_vel(const rl_model *m, rl_data *d) {
  memset(d->cvel, 0, sizeof(real) * 6);
  for (int b = 1; b < m->nbody; b++) body_velocity(m, d, b, d->cvel + 6 * b, d->cdof_dot, NULL);
}

/* body_velocity's acc for a body whose joints are all hinges and slides: Σ_j cdof_dot_j·q̇_j in joint order, with
   cdof_dot as rl_com_vel stored it (the same cvel ×ₘ cdof, so the same numbers) instead of the velocity recursion
   again; −1 (acc untouched) for a body with a ball or free joint, whose acc body_velocity forms per joint */
static int body_bias_acc(const rl_model *m, const rl_data *d, int b, real acc[6]) {
  int j0 = m->body_jntadr[b], j1 = j0 + m->body_jntnum[b];
  for (int j = j0; j < j1; j++)
    if (m->jnt_type[j] == RL_JNT_FREE || m->jnt_type[j] == RL_JNT_BALL) return -1;
  memset(acc, 0, sizeof(real) * 6);
  for (int j = j0; j < j1; j++) {
    int da = m->jnt_dofadr[j];
    for (int k = 0; k < 6; k++) acc[k] += d->cdof_dot[6 * da + k] * d->qvel[da];
  }
  return 0;
}

/* Recursive Newton–Euler with q̈ = 0 in MuJoCo's com frame (gravity as a base acceleration −g):
   a_b = a_parent + Σ cdof_dot·q̇ (evaluated per joint as Σ_j cvel_{<j} ×ₘ S_j·q̇_j, see body_velocity);
   f_b = I_b·a_b + v_b ×* (I_b·v_b);  f_parent += f_child;  qfrc_bias_i = cdof_iᵀ·f_{body(i)}.
   Needs cvel and cdof_dot (rl_com_vel). */
void rl_rne_com(const rl_model *m, rl_data *d) {
  size_t mark = rl_arena_mark(d);
  real *cacc = rl_arena_take(d, 6 * (size_t)m->nbody);
  real *cfrc = rl_arena_take(d, 6 * (size_t)m->nbody);
  memset(cacc, 0, sizeof(real) * 6);
  if (!(m->opt.disableflags & RL_DSBL_GRAVITY))
    for (int k = 0; k < 3; k++) cacc[3 + k] = -m->opt.gravity[k];
  memset(cfrc, 0, sizeof(real) * 6);
  for (int b = 1; b < m->nbody; b++) {
    real tmp[6], cvel[6];
    if (body_bias_acc(m, d, b, tmp)) body_velocity(m, d, b, cvel, NULL, tmp);
    for (int k = 0; k < 6; k++) cacc[6 * b + k] = cacc[6 * m->body_parentid[b] + k] + tmp[k];
    rl_sp_inert_mul(cfrc + 6 * b, d->cinert + 10 * b, cacc + 6 * b);
    rl_sp_inert_cross(tmp, d->cinert + 10 * b, d->cvel + 6 * b);
    for (int k = 0; k < 6; k++) cfrc[6 * b + k] += tmp[k];
  }
  for (int b = m->nbody - 1; b > 0; b--) {
    int p = m->body_parentid[b];
    if (p > 0)
      for (int k = 0; k < 6; k++) cfrc[6 * p + k] += cfrc[6 * b + k];
  }
  for (int i = 0; i < m->nv; i++) d->qfrc_bias[i] = rl_sp_dot(d->cdof + 6 * i, cfrc + 6 * m->dof_bodyid[i]);
  rl_arena_release(d, mark);
}

/* qfrc_bias: rl_rne_com in f64 (MuJoCo's algorithm), rl_rne_local in f32 (RL_LOCAL_FRAMES, rl_prec.h) */
void rl_rne(const rl_model *m, rl_data *d) {
  if (RL_LOCAL_FRAMES) rl_rne_local(m, d);
  else rl_rne_com(m, d);
}

/* ------------------------------------------------------------ applied forces */

/* qfrc_passive = −k·(q − q_spring) (ball/free rotation: −k·Log(q_spring⁻¹ ⊗ q)) − b·q̇, then the tendon
   spring-dampers (rl_tendon_passive) and the fluid forces (rl_fluid) */
void rl_passive(const rl_model *m, rl_data *d) {
  memset(d->qfrc_passive, 0, sizeof(real) * (size_t)m->nv);
  if (m->opt.disableflags & RL_DSBL_PASSIVE) return;
  for (int j = 0; j < m->njnt; j++) {
    real k = m->jnt_stiffness[j];
    if (k == 0) continue;
    int pa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
    switch (m->jnt_type[j]) {
    case RL_JNT_FREE:
      for (int c = 0; c < 3; c++) d->qfrc_passive[da + c] = -k * (d->qpos[pa + c] - m->qpos_spring[pa + c]);
      pa += 3;
      da += 3;
      /* fall through */
    case RL_JNT_BALL: {
      real w[3];
      rl_q_sub_local(w, d->qpos + pa, m->qpos_spring + pa);
      for (int c = 0; c < 3; c++) d->qfrc_passive[da + c] = -k * w[c];
      break;
    }
    default: d->qfrc_passive[da] = -k * (d->qpos[pa] - m->qpos_spring[pa]); break;
    }
  }
  for (int i = 0; i < m->nv; i++)
    if (m->dof_damping[i] != 0) d->qfrc_passive[i] -= m->dof_damping[i] * d->qvel[i];
  rl_tendon_passive(m, d);
  if (m->opt.density > 0 || m->opt.viscosity > 0) rl_fluid(m, d);
}

/* qfrc_smooth = qfrc_passive − qfrc_bias + qfrc_actuator + qfrc_applied */
static void smooth_force(const rl_model *m, rl_data *d) {
  for (int i = 0; i < m->nv; i++)
    d->qfrc_smooth[i] = d->qfrc_passive[i] - d->qfrc_bias[i] + d->qfrc_actuator[i] + d->qfrc_applied[i];
}

/* qacc_smooth = M⁻¹·qfrc_smooth by the LᵀDL factor qLD (rl_factor_m_step: in f32 read off the local-frame
   recursion) */
void rl_smooth_acc(const rl_model *m, rl_data *d) {
  smooth_force(m, d);
  rl_solve_m(m, d, d->qacc_smooth, d->qfrc_smooth, 1);
}

/* qacc_smooth without qLD (the recursive path, and f32): the articulated-body recursion at each body's COM;
   −1 when the arena is too small (qacc_smooth not set) */
int rl_smooth_acc_recursive(const rl_model *m, rl_data *d) {
  smooth_force(m, d);
  memcpy(d->qacc_smooth, d->qfrc_smooth, sizeof(real) * (size_t)m->nv);
  return rl_solve_m_local(m, d, d->qacc_smooth, 0, NULL);
}

/* ---------------------------------------------------------------- groups */

void rl_fwd_position(const rl_model *m, rl_data *d) {
  rl_kinematics(m, d);
  rl_com_pos(m, d);
  rl_tendon(m, d);
  rl_crb(m, d);
  rl_factor_m_step(m, d);
}

void rl_fwd_velocity(const rl_model *m, rl_data *d) {
  rl_com_vel(m, d);
  rl_tendon_velocity(m, d);
  rl_passive(m, d);
  rl_rne(m, d);
}

void rl_forward_smooth(const rl_model *m, rl_data *d) {
  /* constraint-free: no contacts (a body transmission sees none, as under MuJoCo's disabled constraints) */
  d->ncon = 0;
  rl_fwd_position(m, d);
  rl_fwd_velocity(m, d);
  rl_actuation(m, d);
  rl_smooth_acc(m, d);
  memset(d->qfrc_constraint, 0, sizeof(real) * (size_t)m->nv);
  memcpy(d->qacc, d->qacc_smooth, sizeof(real) * (size_t)m->nv);
}

/* 1 if every x_i is finite and |x_i| ≤ RL_MAXVAL (MuJoCo's mju_isBad, negated) */
int rl_state_ok(const real *x, int n) { return rl_state_ok_hd(x, n); }

int rl_state_finite(const rl_model *m, const rl_data *d) {
  return rl_state_ok(d->qpos, m->nq) && rl_state_ok(d->qvel, m->nv);
}

/* the reset of the bad-state policy: qpos0, zero qvel/ctrl/qfrc_applied/qacc (rl_data_reset), with time and
   the warning counters kept, and warning[WHICH] counted */
void rl_reset_bad(const rl_model *m, rl_data *d, int which) {
  int w[RL_NWARN];
  real t = d->time;
  memcpy(w, d->warning, sizeof w);
  rl_data_reset(m, d);
  memcpy(d->warning, w, sizeof w);
  d->warning[which]++;
  d->time = t;
}

/* |x| > RL_MAXVAL or non-finite in qpos or qvel → warning and reset (MuJoCo's mj_checkPos/mj_checkVel) */
int rl_check_state(const rl_model *m, rl_data *d) {
  int bad = !rl_state_ok(d->qpos, m->nq) ? RL_WARN_BADQPOS : !rl_state_ok(d->qvel, m->nv) ? RL_WARN_BADQVEL : -1;
  if (bad < 0) return 1;
  rl_reset_bad(m, d, bad);
  return 0;
}

/* a bad qacc → warning and reset (MuJoCo's mj_checkAcc); the caller runs the forward pass again */
int rl_check_acc(const rl_model *m, rl_data *d) {
  if (rl_state_ok(d->qacc, m->nv)) return 1;
  rl_reset_bad(m, d, RL_WARN_BADQACC);
  return 0;
}

/* control u clamped to its ctrlrange (when ctrllimited and clamping is not disabled) */
real rl_ctrl_clamped(const rl_model *m, const rl_data *d, int u) { return rl_ctrl_clamp(m, d, u); }

/* MuJoCo's ctrl test: a clamped control that is bad → one warning, and the caller acts on zero controls
   (d->ctrl itself is left as the user set it) */
int rl_check_ctrl(const rl_model *m, rl_data *d) {
  for (int u = 0; u < m->nu; u++) {
    real c = rl_ctrl_clamped(m, d, u);
    if (!rl_state_ok(&c, 1)) {
      d->warning[RL_WARN_BADCTRL]++;
      return 0;
    }
  }
  return 1;
}
