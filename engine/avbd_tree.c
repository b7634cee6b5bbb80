/* avbd_tree.c — articulations as blocks: one AVBD iteration solves the Newton system of all bodies of an
 * articulation at once, factored along the tree.
 *
 * An articulation is a set of dynamic bodies joined by tree joints (the joint of a body to its parent:
 * hinge, slide, ball, weld, compound), rooted at a body whose parent is the world (joint or free joint).
 * The AVBD incremental potential of its bodies, with every row at its current multiplier and penalty,
 *   E(z) = Σ_s ½‖z_s − z_s^p‖²_M + Σ_rows (λ C + ½ρ C²) + joint-space terms + contact rows,
 * has the Gauss–Newton system H δ = −g whose diagonal blocks H_ss, g_s are exactly those of the per-body
 * sweep (avbd_assemble: inertia, every row of s, geometric stiffness) and whose off-diagonal blocks join
 * a child s to its parent p only through their joint:
 *   H_sp = Σ_r w_r J_s,r J_p,rᵀ        (w_r: ρ of a two-sided row, the curvature k of a coordinate term),
 * J_s,r, J_p,r the row's Jacobians on the two sides.  On a tree this matrix has the sparsity of the tree,
 * and a block LDLᵀ that eliminates leaves first creates no fill (Baraff 1996, "Linear-time dynamics
 * using Lagrange multipliers"; the same ordering as Featherstone's articulated-body recursion):
 *   leaves → root:  D_s = H_ss − Σ_c H_cs ᵀ D_c⁻¹ H_cs,   g̃_s = g_s − Σ_c H_csᵀ D_c⁻¹ g̃_c   (c: children)
 *   root → leaves:  δ_s = −D_s⁻¹ (g̃_s + H_sp δ_p),
 * O(bodies) 6×6 operations.  Loop rows — the rows of an equality constraint between two bodies of one
 * articulation and the acting spatial paths (tendons, slider cranks, implicit wrench actuators) through two or more
 * of its bodies —
 * couple bodies the tree does not join; they are taken out of the tree factor and added back exactly by
 * Sherman–Morrison–Woodbury (avbd_tree_loop_step: one r × r capacitance solve, r ≤ AVBD_LOOP_MAX).  The
 * other rows outside the tree (contacts, joints to the world, loop rows beyond the capacity) stay in the
 * diagonal blocks, each an augmented row seen from each body as in the sweep; the articulations are
 * visited one after the other (block Gauss–Seidel between them), each reading the others' current
 * poses.  The dual update after the iteration is unchanged. */
#include <string.h>
#include "avbd_internal.h"

/* union–find over slots (scratch p): the representative of s's set */
RL_HDFN static int avbd_tree_find(int *p, int s) {
  while (p[s] != s) s = p[s] = p[p[s]];
  return s;
}

/* Grows the blocks from the articulations (scratch: rep the union–find parents, rows each set's loop rows):
 * each loop item in order joins the blocks of its slots when the joined block then holds at most
 * AVBD_LOOP_MAX loop rows (item->block = its representative slot), else it stays outside (−1); in single
 * precision an item joins no two blocks (it stays outside unless its slots already share one).  A coordinate
 * row refused so is marked crow->loop = −1 and returns 1 (its bodies then leave their articulations). */
RL_HDFN static int avbd_tree_grow(rl_avbd *am, int *rep, int *rows) {
  int cut = 0;
  for (int s = 0; s < am->nb; s++) {
    rep[s] = avbd_tree_root(am, s);
    rows[s] = 0;
  }
  for (int i = 0; i < am->nlitem; i++) {
    rl_avbd_litem *it = am->litem + i;
    rl_avbd_crow *cr = it->kind == RL_AVBD_LOOP_CROW ? am->crow + it->id : NULL;
    it->block = -1;
    if (cr && cr->loop < 0) continue;
    int total = it->rows, first = -1, joins = 0;
    for (int e = am->lsadr[i]; e < am->lsadr[i + 1]; e++) { /* each distinct block once */
      int r = avbd_tree_find(rep, am->lslot[e]), seen = 0;
      for (int f = am->lsadr[i]; f < e; f++) seen |= avbd_tree_find(rep, am->lslot[f]) == r;
      if (!seen) total += rows[r];
      if (first < 0) first = r;
      joins |= r != first;
    }
    /* single precision: an item that would join two blocks stays outside (MuJoCo's active_adhesion, a winch
       hinged to the world and a free sphere on one pulley tendon, joined: 157 of 250 steps unconverged at the
       budget, the sphere 3 cm low; outside: 0 of 250, 43 sweeps/step; robotiq_like 14.6 sweeps/step joined, 14.9 outside) */
    if (joins && !AVBD_COORD_LOOPS) continue;
    if (total > AVBD_LOOP_MAX) {
      if (cr && cr->joints) {
        cr->loop = -1;
        cut = 1;
      }
      continue;
    }
    for (int e = am->lsadr[i]; e < am->lsadr[i + 1]; e++) rep[avbd_tree_find(rep, am->lslot[e])] = first;
    rows[first] = total;
    it->block = first;
  }
  return cut;
}

/* Tree structure from the joints: each body's parent slot and joint (model tree joints only, eq < 0, both bodies
 * dynamic, neither read by a coordinate row that could not be a loop item), the articulations (connected sets of
 * them), the blocks (articulations joined by loop items: avbd_tree_grow) and their bodies in slot order (a
 * parent's slot is below its child's: MuJoCo lists parents first), each loop item's block and each coordinate
 * row's crow->loop. */
RL_HDFN void avbd_tree_build(rl_avbd *am) {
  int nb = am->nb;
  int *root = (int *)am->twork, *idx = root + nb, *fill = idx + nb, *rows = fill + nb; /* scratch */
  for (int i = 0; i < am->ncrow; i++) am->crow[i].loop = !AVBD_COORD_LOOPS && am->crow[i].joints ? -1 : 0;
  for (;;) {
    for (int s = 0; s < nb; s++) am->tparent[s] = am->tjoint[s] = -1;
    for (int j = 0; j < am->njoint; j++) {
      const rl_avbd_joint *jt = am->joint + j;
      if (jt->eq >= 0 || jt->a < 0 || am->tjoint[jt->b] >= 0 || jt->a >= jt->b) continue;
      am->tparent[jt->b] = jt->a;
      am->tjoint[jt->b] = j;
    }
    /* a coordinate row over several joint coordinates that no block can hold as a loop row (too many loop rows)
       would be seen only through the diagonal blocks of the joints it reads (one block Jacobi step per
       iteration: the stiff row j2 = 1.5·j3 diverged, j1 18 rad where the rigid arm turns 2.3): the bodies it
       reads leave their articulation, their joints to the parent become rows on the diagonal blocks, solved
       body by body */
    for (int i = 0; i < am->ncrow; i++)
      if (am->crow[i].loop < 0 && am->crow[i].joints)
        for (int e = am->crsadr[i]; e < am->crsadr[i + 1]; e++) {
          int s = am->crslot[e];
          if (s >= 0) am->tparent[s] = am->tjoint[s] = -1;
        }
    if (!avbd_tree_grow(am, idx, rows)) break;
  }
  for (int i = 0; i < am->nlitem; i++) {
    rl_avbd_litem *it = am->litem + i;
    if (it->block >= 0) it->block = avbd_tree_find(idx, it->block);
    if (it->kind == RL_AVBD_LOOP_CROW && it->block >= 0) am->crow[it->id].loop = 1;
  }
  for (int s = 0; s < nb; s++) root[s] = avbd_tree_find(idx, s); /* the block's representative slot */
  int n = 0;
  for (int s = 0; s < nb; s++)
    if (root[s] == s) fill[s] = n++;
  for (int s = 0; s < nb; s++) am->tblock[s] = idx[s] = fill[root[s]]; /* block of each slot */
  for (int i = 0; i < am->nlitem; i++)
    if (am->litem[i].block >= 0) am->litem[i].block = idx[am->litem[i].block];
  am->ntree = n;
  for (int k = 0; k <= n; k++) am->tadr[k] = 0;
  for (int s = 0; s < nb; s++) am->tadr[idx[s] + 1]++;
  for (int k = 0; k < n; k++) {
    am->tadr[k + 1] += am->tadr[k];
    fill[k] = am->tadr[k];
  }
  for (int s = 0; s < nb; s++) am->tlist[fill[idx[s]]++] = s;
  for (int s = 0; s < nb; s++) am->tmass[s] = 0;
  for (int s = 0; s < nb; s++) am->tmass[avbd_tree_root(am, s)] += am->mass[s];
  for (int s = 0; s < nb; s++) am->tmass[s] = am->tmass[avbd_tree_root(am, s)];
}

/* Guarded Cholesky D = L Lᵀ of a symmetric 6×6 in place (reads and writes the lower triangle only), the
 * pivot guard of rl_avbd_chol_solve6: a pivot below 64ε·max diag + tiny is replaced by it.  The diagonal
 * keeps 1/L_jj (what the substitutions multiply by), the strict lower triangle L.  Returns the guarded
 * pivots. */
RL_HDFN static int avbd_tree_chol(real L[36]) {
  real dmax = 0;
  int guarded = 0;
  RL_AVBD_UNROLL
  for (int i = 0; i < 6; i++) dmax = rl_avbd_max(dmax, rl_fabs(L[7 * i]));
  real floor_ = 64 * RL_EPS * dmax + RL_TINY;
  RL_AVBD_UNROLL
  for (int j = 0; j < 6; j++) {
    real s = L[7 * j];
    RL_AVBD_UNROLL
    for (int k = 0; k < j; k++) s -= L[6 * j + k] * L[6 * j + k];
    if (!(s > floor_)) {
      s = floor_;
      guarded++;
    }
    real il = 1 / rl_sqrt(s);
    L[7 * j] = il;
    RL_AVBD_UNROLL
    for (int i = j + 1; i < 6; i++) {
      real t = L[6 * i + j];
      RL_AVBD_UNROLL
      for (int k = 0; k < j; k++) t -= L[6 * i + k] * L[6 * j + k];
      L[6 * i + j] = t * il;
    }
  }
  return guarded;
}

/* y = L⁻¹ b in place (forward substitution with the factor of avbd_tree_chol) */
RL_HDFN static void avbd_tree_fwd(const real L[36], real y[6]) {
  RL_AVBD_UNROLL
  for (int i = 0; i < 6; i++) {
    real t = y[i];
    RL_AVBD_UNROLL
    for (int k = 0; k < i; k++) t -= L[6 * i + k] * y[k];
    y[i] = t * L[7 * i];
  }
}

/* x = L⁻ᵀ y in place (back substitution) */
RL_HDFN static void avbd_tree_bwd(const real L[36], real x[6]) {
  RL_AVBD_UNROLL
  for (int i = 5; i >= 0; i--) {
    real t = x[i];
    RL_AVBD_UNROLL
    for (int k = i + 1; k < 6; k++) t -= L[6 * k + i] * x[k];
    x[i] = t * L[7 * i];
  }
}

/* Y = L⁻¹ C in place for a 6×6 C (row-major), all six columns at once: row i of Y is
 * (C_i − Σ_{k<i} L_ik Y_k)/L_ii */
RL_HDFN static void avbd_tree_fwd6(const real L[36], real Y[36]) {
  RL_AVBD_UNROLL
  for (int i = 0; i < 6; i++) {
    real *yi = Y + 6 * i;
    RL_AVBD_UNROLL
    for (int k = 0; k < i; k++) {
      real l = L[6 * i + k];
      const real *yk = Y + 6 * k;
      RL_AVBD_UNROLL
      for (int b = 0; b < 6; b++) yi[b] -= l * yk[b];
    }
    RL_AVBD_UNROLL
    for (int b = 0; b < 6; b++) yi[b] *= L[7 * i];
  }
}

/* C += w·u vᵀ (6×6, row-major: C[6i + j] += w u_i v_j) */
RL_HDFN static void avbd_outer_add(real C[36], const real u[6], const real v[6], real w) {
  if (w == 0) return;
  RL_AVBD_UNROLL
  for (int i = 0; i < 6; i++) {
    RL_AVBD_UNROLL
    for (int j = 0; j < 6; j++) C[6 * i + j] += w * u[i] * v[j];
  }
}

/* the angular block only: C[3+i][3+j] += w·u_i v_j (rows whose Jacobians have no translation part) */
RL_HDFN static void avbd_outer_add_ang(real C[36], const real u[3], const real v[3], real w) {
  if (w == 0) return;
  RL_AVBD_UNROLL
  for (int i = 0; i < 3; i++) {
    RL_AVBD_UNROLL
    for (int j = 0; j < 3; j++) C[6 * (3 + i) + 3 + j] += w * u[i] * v[j];
  }
}

/* Coupling of a hinge, ball or connect joint from its cached values v (rl_avbd_joint_val at the current
 * poses), the same rows as rl_avbd_joint_val_jac without forming them.  Anchor row k: J_A = [e_k, a_k],
 * J_B = −[e_k, b_k] with a_k = u_A × e_k, b_k = u_B × e_k, so ρ_k J_B J_Aᵀ adds −ρ_k to C[k][k], −ρ_k a_kᵀ to
 * row k of the upper right block, −ρ_k b_k to column k of the lower left one and −ρ_k b_k a_kᵀ to the
 * angular block; axis row k (J_A = [0, c_k], J_B = −[0, c_k], c_k = t_k × a): −ρ c_k c_kᵀ; the hinge
 * coordinate (∂φ/∂δθ_A = −a, ∂φ/∂δθ_B = a) with curvature k_φ: −k_φ a aᵀ. */
RL_HDFN static void avbd_tree_coupling_val(const rl_avbd_joint *jt, const rl_avbd_row *rows, const rl_avbd_joint_val *v,
                                           int on, real kphi, real C[36]) {
  if (on) {
    const real *uA = v->arms.uA, *uB = v->arms.uB;
    for (int k = 0; k < 3; k++) {
      real rho = rows[k].rho, e[3] = {0, 0, 0}, ak[3], bk[3];
      e[k] = 1;
      rl_v3_cross(ak, uA, e);
      rl_v3_cross(bk, uB, e);
      C[7 * k] -= rho;
      for (int i = 0; i < 3; i++) {
        C[6 * k + 3 + i] -= rho * ak[i];
        C[6 * (3 + i) + k] -= rho * bk[i];
      }
      avbd_outer_add_ang(C, bk, ak, -rho);
    }
    if (jt->kind == RL_AVBD_HINGE)
      for (int k = 0; k < 2; k++) {
        real c[3];
        rl_v3_cross(c, v->arms.t[k], v->arms.a);
        avbd_outer_add_ang(C, c, c, -rows[3 + k].rho);
      }
  }
  if (jt->kind == RL_AVBD_HINGE) avbd_outer_add_ang(C, v->arms.a, v->arms.a, -kphi);
}

/* Coupling block of tree joint jt between child s = jt->b (side B) and parent p = jt->a (side A):
 *   H_sp = Σ_r ρ_r J_B,r J_A,rᵀ  over its two-sided rows (when the joint is on)
 *        + Σ_k k_k ∂φ_k/∂z_B (∂φ_k/∂z_A)ᵀ  over its coordinates (limits, dry friction, damping,
 *          stiffness, armature, servo curvature of avbd_coord_terms),
 * the same rows and weights that avbd_assemble puts on the two diagonal blocks, from the same cached
 * joint values (avbd_joint_value) where the joint has them; C starts at zero. */
RL_HDFN static void avbd_tree_coupling_rows(rl_avbd *am, const rl_model *m, const rl_data *d, int j, real h,
                                            real C[36]) {
  const rl_avbd_joint *jt = am->joint + j;
  int on = avbd_joint_on(m, d, jt);
  if (rl_avbd_joint_val_ok(jt)) { /* a hinge's coordinate curvature: avbd_tree_block put it in the slot */
    avbd_tree_coupling_val(jt, am->row + jt->row, avbd_joint_value(am, j), on, am->twork[AVBD_TW * jt->b + 85], C);
    return;
  }
  const rl_avbd_pose *A = avbd_pose_of(am, jt->a), *B = avbd_pose_of(am, jt->b);
  if (jt->kind == RL_AVBD_COMPOUND) {
    const rl_avbd_compound_val *v = avbd_compound_value(am, jt);
    const rl_avbd_compound *c = am->cmp + jt->cmp;
    real JA[6], JB[6];
    if (on)
      for (int r = 0; r < jt->neq; r++) {
        avbd_compound_jac(v, v->w[r], 0, JA);
        avbd_compound_jac(v, v->w[r], 1, JB);
        avbd_outer_add(C, JB, JA, am->row[jt->row + r].rho);
      }
    for (int k = 0; k < c->n; k++) {
      const rl_avbd_joint *sj = c->sub + k;
      if (sj->kind == RL_AVBD_BALL) continue;
      real G, kk;
      avbd_coord_terms(am, m, d, sj, v->q[k][0], h, 0, &G, &kk);
      avbd_compound_jac(v, v->pg[c->dof[k]], 0, JA);
      avbd_compound_jac(v, v->pg[c->dof[k]], 1, JB);
      avbd_outer_add(C, JB, JA, kk);
    }
    return;
  }
  if (on) {
    real Cv[6], JA[6][6], JB[6][6];
    int n = rl_avbd_joint_rows(jt, A, B, Cv, JA, JB);
    for (int r = 0; r < n; r++) avbd_outer_add(C, JB[r], JA[r], am->row[jt->row + r].rho);
  }
  if (jt->kind == RL_AVBD_SLIDE) {
    real dA[6], dB[6], G, k;
    real phi = rl_avbd_joint_coord(jt, A, B, jt->phi, dA, dB);
    avbd_coord_terms(am, m, d, jt, phi, h, 0, &G, &k);
    avbd_outer_add(C, dB, dA, k);
  }
}

/* The coupling block of tree joint j: its rows and coordinates (avbd_tree_coupling_rows), and the terms on the dofs
 * of a ball it holds, Σ_ij K_ij pg[B][i] pg[A][j]ᵀ (avbd_mdof_coupling) */
RL_HDFN static void avbd_tree_coupling(rl_avbd *am, const rl_model *m, const rl_data *d, int j, real h, real C[36]) {
  for (int i = 0; i < 36; i++) C[i] = 0;
  avbd_tree_coupling_rows(am, m, d, j, h, C);
  if (am->jmdof[j] >= 0) avbd_mdof_coupling(am, m, d, am->jmdof[j], h, C);
}

/* v ← H'⁻¹ v for the factored articulation (list, n) of avbd_tree_block, v six reals per slot: the leaves-first
 * elimination y_s = L_s⁻¹ v_s, v_p −= Y_sᵀ y_s, then the back substitution x_s = L_s⁻ᵀ (y_s − Y_s x_p). */
RL_HDFN static void avbd_tree_solve(const rl_avbd *am, const int *list, int n, real *v) {
  const real *W = am->twork;
  for (int i = n - 1; i >= 0; i--) {
    int s = list[i], p = am->tparent[s];
    const real *D = W + AVBD_TW * s, *Y = D + 36;
    real *y = v + 6 * s;
    avbd_tree_fwd(D, y);
    if (p < 0) continue;
    real *vp = v + 6 * p;
    for (int a = 0; a < 6; a++) {
      real t = 0;
      for (int c = 0; c < 6; c++) t += Y[6 * c + a] * y[c];
      vp[a] -= t;
    }
  }
  for (int i = 0; i < n; i++) {
    int s = list[i], p = am->tparent[s];
    const real *D = W + AVBD_TW * s, *Y = D + 36;
    real *x = v + 6 * s;
    if (p >= 0) {
      const real *xp = v + 6 * p;
      for (int a = 0; a < 6; a++)
        for (int b = 0; b < 6; b++) x[a] -= Y[6 * a + b] * xp[b];
    }
    avbd_tree_bwd(D, x);
  }
}

/* Adds loop row r (weight w, its Jacobian J on slot s) to U: column r of U gets J at s, and D_s loses w J Jᵀ, so
 * that the factored matrix H' = H − U diag(w) Uᵀ holds no part of the row (the rows whose curvature avbd_assemble
 * put on the diagonal blocks: equality joints, spatial paths) */
RL_HDFN static void avbd_loop_put(rl_avbd *am, int r, int s, const real J[6], real w) {
  size_t ld = 6 * ((size_t)am->nb + 1);
  real *u = am->tloop + ld * (size_t)r + 6 * (size_t)s;
  for (int c = 0; c < 6; c++) u[c] += J[c];
  avbd_outer_add(am->twork + AVBD_TW * s, J, J, -w);
}

/* Column r of U, zero on the articulation's slots (six reals per slot) */
RL_HDFN static real *avbd_loop_col(rl_avbd *am, const int *list, int n, int r) {
  size_t ld = 6 * ((size_t)am->nb + 1);
  real *u = am->tloop + ld * (size_t)r;
  for (int i = 0; i < n; i++)
    for (int c = 0; c < 6; c++) u[6 * list[i] + c] = 0;
  return u;
}

/* Keeps loop row r with weight w; returns r + 1 */
RL_HDFN static int avbd_loop_keep(rl_avbd *am, int r, real w) {
  size_t ld = 6 * ((size_t)am->nb + 1);
  am->tloop[2 * ld * (size_t)am->nloop + (size_t)am->nloop * (size_t)am->nloop + (size_t)r] = w;
  return r + 1;
}

/* The loop rows of block k (list, n) from its loop items (avbd_tree_build), each row's Jacobian J = (J_s)_s over the
 * slots into a column of U and its weight w:
 *   equality joint between two of its bodies: each two-sided row, w = ρ;
 *   acting spatial path (tendon, slider crank) through two or more of its bodies: w = the Gauss–Newton curvature
 *     k_L of avbd_tendon_force;
 *   coordinate row over several joint coordinates or a spatial path (avbd_crow_loop): w = its curvature k_r;
 *   fixed tendon with a spring, damper or actuator over several joints (avbd_fixed_loop): w = k_L;
 *   then, while rows remain, each active row of a contact between two bodies of the block: w its weight of
 *     rl_avbd_contact_fw (ρ, the tangents' scaled once sliding), J its rl_avbd_contact_jac on both sides.
 * The equality joints, paths and contacts put their curvature on the diagonal blocks in avbd_assemble, so their
 * w J_s J_sᵀ leave D (avbd_loop_put); the coordinate rows and fixed tendons leave their curvature out of the joints'
 * coordinate terms in articulation blocks (their cross terms between joints have no place there), so U alone
 * carries it.  A row of weight 0 (an inactive
 * limit, a path without force) is not kept.  Returns the number of rows. */
RL_HDFN static int avbd_tree_loops(rl_avbd *am, const rl_model *m, const rl_data *d, int k, const int *list, int n,
                                   real h) {
  int r = 0;
  for (int i = 0; i < am->nlitem; i++) {
    const rl_avbd_litem *it = am->litem + i;
    if (it->block != k || r + it->rows > am->nloop) continue;
    if (it->kind == RL_AVBD_LOOP_EQ) {
      const rl_avbd_joint *jt = am->joint + it->id;
      if (!avbd_joint_on(m, d, jt)) continue;
      real Cv[6], JA[6][6], JB[6][6];
      int nr = rl_avbd_joint_rows(jt, avbd_pose_of(am, jt->a), avbd_pose_of(am, jt->b), Cv, JA, JB);
      for (int q = 0; q < nr; q++) {
        real w = am->row[jt->row + q].rho;
        avbd_loop_col(am, list, n, r);
        avbd_loop_put(am, r, jt->a, JA[q], w);
        avbd_loop_put(am, r, jt->b, JB[q], w);
        r = avbd_loop_keep(am, r, w);
      }
    } else if (it->kind == RL_AVBD_LOOP_PATH) {
      int p = it->id;
      real kL, L = avbd_spat_length(am, m, am->spat[p], -1, NULL, NULL);
      avbd_tendon_force(am, m, d, am->spat[p], L, am->spat_n[2 * p], am->spat_n[2 * p + 1], h, &kL);
      if (!(kL > 0)) continue;
      avbd_loop_col(am, list, n, r);
      for (int e = am->lsadr[i]; e < am->lsadr[i + 1]; e++) {
        real J[6] = {0, 0, 0, 0, 0, 0};
        avbd_spat_length(am, m, am->spat[p], am->lslot[e], J, NULL);
        avbd_loop_put(am, r, am->lslot[e], J, kL);
      }
      r = avbd_loop_keep(am, r, kL);
    } else {
      real *u = avbd_loop_col(am, list, n, r);
      real w =
          it->kind == RL_AVBD_LOOP_CROW ? avbd_crow_loop(am, m, d, it->id, u) : avbd_fixed_loop(am, m, d, it->id, h, u);
      if (w > 0) r = avbd_loop_keep(am, r, w);
    }
  }
  for (int i = 0; i < am->ncon; i++) { /* contacts between two bodies of the block, while there is room */
    const rl_avbd_contact *c = am->con + i;
    if (c->a < 0 || am->tblock[c->a] != k || am->tblock[c->b] != k) continue;
    const rl_avbd_contact_val *v = avbd_contact_value(am, i);
    real f[3], wt[3];
    rl_avbd_contact_fw(c, v, am->prm.alpha, 0, 1, f, wt);
    for (int q = 0; q < 3 && r < am->nloop; q++) {
      if (!(wt[q] > 0)) continue;
      real JA[6], JB[6];
      rl_avbd_contact_jac(c, v, q, 0, JA);
      rl_avbd_contact_jac(c, v, q, 1, JB);
      avbd_loop_col(am, list, n, r);
      avbd_loop_put(am, r, c->a, JA, wt[q]);
      avbd_loop_put(am, r, c->b, JB, wt[q]);
      r = avbd_loop_keep(am, r, wt[q]);
    }
  }
  return r;
}

/* The step with the loop rows exact (Sherman–Morrison–Woodbury): with H = H' + U W Uᵀ, W = diag(w), and
 * δ' = −H'⁻¹ g the tree solve's step,
 *   δ = −H⁻¹ g = δ' − Z S⁻¹ Uᵀ δ',   Z = H'⁻¹ U,   S = W⁻¹ + Uᵀ Z   (r × r, symmetric positive definite),
 * S factored by Cholesky.  S ⪰ W⁻¹, so every pivot of its factor is at least 1/max w; a pivot below half
 * of that means rounding has taken over (rows nearly dependent under very large weights) and the step stays
 * δ' for this iteration.  dz: the tree step in the slots' work arrays, corrected in place.  Returns 1 when
 * the correction was applied, 0 when it was not. */
RL_HDFN static int avbd_tree_loop_step(rl_avbd *am, const int *list, int n, int r) {
  size_t ld = 6 * ((size_t)am->nb + 1), K = (size_t)am->nloop;
  real *U = am->tloop, *Z = U + ld * K, *S = Z + ld * K, *w = S + K * K, *t = w + K;
  for (int a = 0; a < r; a++) {
    real *z = Z + ld * (size_t)a, *u = U + ld * (size_t)a;
    for (int i = 0; i < n; i++)
      for (int c = 0; c < 6; c++) z[6 * list[i] + c] = u[6 * list[i] + c];
    avbd_tree_solve(am, list, n, z);
  }
  for (int a = 0; a < r; a++) { /* S = W⁻¹ + UᵀZ (lower triangle), t = Uᵀ δ' */
    const real *ua = U + ld * (size_t)a;
    real ta = 0;
    for (int i = 0; i < n; i++)
      for (int c = 0; c < 6; c++) ta += ua[6 * list[i] + c] * am->twork[AVBD_TW * list[i] + 78 + c];
    t[a] = ta;
    for (int b = 0; b <= a; b++) {
      const real *zb = Z + ld * (size_t)b;
      real x = 0;
      for (int i = 0; i < n; i++)
        for (int c = 0; c < 6; c++) x += ua[6 * list[i] + c] * zb[6 * list[i] + c];
      S[(size_t)r * a + b] = x + (a == b ? 1 / w[a] : 0);
    }
  }
  real wmax = 0;
  for (int a = 0; a < r; a++) wmax = rl_avbd_max(wmax, w[a]);
  for (int j = 0; j < r; j++) { /* S = L Lᵀ, t ← L⁻ᵀ L⁻¹ t */
    real x = S[(size_t)r * j + j];
    for (int k = 0; k < j; k++) x -= S[(size_t)r * j + k] * S[(size_t)r * j + k];
    if (!(x * wmax >= (real)0.5)) return 0;
    real ljj = rl_sqrt(x);
    S[(size_t)r * j + j] = ljj;
    for (int i = j + 1; i < r; i++) {
      real y = S[(size_t)r * i + j];
      for (int k = 0; k < j; k++) y -= S[(size_t)r * i + k] * S[(size_t)r * j + k];
      S[(size_t)r * i + j] = y / ljj;
    }
  }
  for (int i = 0; i < r; i++) {
    for (int k = 0; k < i; k++) t[i] -= S[(size_t)r * i + k] * t[k];
    t[i] /= S[(size_t)r * i + i];
  }
  for (int i = r - 1; i >= 0; i--) {
    for (int k = i + 1; k < r; k++) t[i] -= S[(size_t)r * k + i] * t[k];
    t[i] /= S[(size_t)r * i + i];
  }
  for (int a = 0; a < r; a++) {
    const real *z = Z + ld * (size_t)a;
    for (int i = 0; i < n; i++)
      for (int c = 0; c < 6; c++) am->twork[AVBD_TW * list[i] + 78 + c] -= z[6 * list[i] + c] * t[a];
  }
  return 1;
}

/* One articulation k as one block: every body's diagonal block and gradient (avbd_assemble, lower
 * triangle), the couplings to the parents, the leaves-first elimination and the back substitution, then
 * every body moved by its clamped step.  With D_s = L_s L_sᵀ the elimination of child s from its parent p
 * needs only forward substitutions:
 *   Y_s = L_s⁻¹ H_sp,  y_s = L_s⁻¹ g̃_s,   D_p −= Y_sᵀ Y_s,  g̃_p −= Y_sᵀ y_s,
 * and the back substitution δ_s = −D_s⁻¹(g̃_s + H_sp δ_p) = −L_s⁻ᵀ(y_s + Y_s δ_p).  Y_s and y_s overwrite
 * H_sp and g̃_s. */
RL_HDFN static void avbd_tree_block(rl_avbd *am, const rl_model *m, const rl_data *d, int k, real h) {
  const int *list = am->tlist + am->tadr[k];
  int n = am->tadr[k + 1] - am->tadr[k], items = 0;
  for (int i = 0; i < am->nlitem; i++) items |= am->litem[i].block == k;
  for (int i = 0; i < am->ncon && !items && n > 1; i++)
    items = am->con[i].a >= 0 && am->tblock[am->con[i].a] == k && am->tblock[am->con[i].b] == k;
  if (n == 1 && !items) { /* a lone body: the block is its own */
    avbd_block_update(am, m, d, list[0], h);
    return;
  }
  real *W = am->twork;
  for (int i = 0; i < n; i++) { /* each tree hinge's coordinate terms, once for its three readers */
    int s = list[i], j = am->tjoint[s];
    real *Gk = W + AVBD_TW * s + 84;
    Gk[0] = Gk[1] = 0;
    if (j >= 0 && am->joint[j].kind == RL_AVBD_HINGE) {
      const rl_avbd_joint *jt = am->joint + j;
      avbd_coord_terms(am, m, d, jt, rl_avbd_unwrap(avbd_joint_value(am, j)->phi_raw, jt->phi), h, 0, Gk, Gk + 1);
    }
  }
  for (int i = 0; i < n; i++) {
    int s = list[i];
    real *D = W + AVBD_TW * s, *g = D + 72;
    avbd_assemble(am, m, d, s, h, 0, W, D, g);
    if (am->tparent[s] >= 0) avbd_tree_coupling(am, m, d, am->tjoint[s], h, D + 36);
  }
  int nl = items ? avbd_tree_loops(am, m, d, k, list, n, h) : 0;
  /* leaves → root */
  for (int i = n - 1; i >= 0; i--) {
    int s = list[i], p = am->tparent[s];
    real *D = W + AVBD_TW * s, *Y = D + 36, *y = D + 72;
    am->guard[s] = avbd_tree_chol(D);
    avbd_tree_fwd(D, y);
    if (p < 0) continue;
    real *Dp = W + AVBD_TW * p, *gp = Dp + 72;
    avbd_tree_fwd6(D, Y);
    RL_AVBD_UNROLL
    for (int a = 0; a < 6; a++) { /* D_p −= Yᵀ Y (lower triangle),  g̃_p −= Yᵀ y */
      real t = 0;
      RL_AVBD_UNROLL
      for (int c = 0; c < 6; c++) t += Y[6 * c + a] * y[c];
      gp[a] -= t;
      RL_AVBD_UNROLL
      for (int b = 0; b <= a; b++) {
        real u = 0;
        RL_AVBD_UNROLL
        for (int c = 0; c < 6; c++) u += Y[6 * c + a] * Y[6 * c + b];
        Dp[6 * a + b] -= u;
      }
    }
  }
  /* root → leaves */
  for (int i = 0; i < n; i++) {
    int s = list[i], p = am->tparent[s];
    real *D = W + AVBD_TW * s, *Y = D + 36, *y = D + 72, *dz = D + 78;
    for (int a = 0; a < 6; a++) dz[a] = y[a];
    if (p >= 0) {
      const real *dp = W + AVBD_TW * p + 78;
      RL_AVBD_UNROLL
      for (int a = 0; a < 6; a++) {
        RL_AVBD_UNROLL
        for (int b = 0; b < 6; b++) dz[a] += Y[6 * a + b] * dp[b];
      }
    }
    avbd_tree_bwd(D, dz);
    for (int a = 0; a < 6; a++) dz[a] = -dz[a];
  }
  if (nl > 0 && !avbd_tree_loop_step(am, list, n, nl)) am->guard[list[0]]++;
  for (int i = 0; i < n; i++) {
    int s = list[i];
    real dz[6];
    memcpy(dz, W + AVBD_TW * s + 78, sizeof dz);
    rl_avbd_body_apply(am->pose + s, am->dx + 3 * s, am->dq + 4 * s, am->x0 + 3 * s, am->q0 + 4 * s, dz,
                       am->prm.max_dx, am->prm.max_dtheta, am->upd + 2 * s, am->upd + 2 * s + 1);
    am->ver[s]++; /* moved: its cached joint and contact values are stale */
  }
}

/* One iteration of RL_AVBD_BLOCK_ARTICULATION: every articulation as one block (avbd_tree_block), in
 * the order of their roots.  Returns max ‖δx‖, max ‖δθ‖ over the bodies and adds the guarded pivots. */
RL_HDFN void avbd_tree_sweep(rl_avbd *am, const rl_model *m, const rl_data *d, real h, real *ux, real *uth) {
  for (int k = 0; k < am->ntree; k++) avbd_tree_block(am, m, d, k, h);
  *ux = *uth = 0;
  for (int s = 0; s < am->nb; s++) {
    *ux = rl_avbd_max(*ux, am->upd[2 * s]);
    *uth = rl_avbd_max(*uth, am->upd[2 * s + 1]);
    am->stat.guarded += am->guard[s];
  }
}
