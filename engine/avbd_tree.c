/* avbd_tree.c — articulations as blocks: one AVBD iteration solves the Newton system of all bodies of an
 * articulation at once, factored along the tree.
 *
 * An articulation is a set of dynamic bodies joined by tree joints (the joint of a body to its parent:
 * hinge, slide, ball, weld, compound), rooted at a body whose parent is the world (joint or free joint).
 * The AVBD incremental potential of its bodies, every row outside the tree at its current multiplier and
 * penalty,
 *   E(z) = Σ_s ½‖z_s − z_s^p‖²_M + Σ_rows (λ C + ½ρ C²) + joint-space terms + contact rows,
 * is minimized subject to the tree joints' two-sided rows C_j(z) = 0 (and a root's joint to the world): the
 * block's step is the Newton step of the Lagrangian,
 *   [H Jᵀ; J 0] [δ; −λ⁺] = [−g; −C̃],
 * H the Gauss–Newton matrix of E plus the geometric stiffness of the joints' forces λ, whose diagonal blocks
 * H_ss, g_s are those of the per-body sweep without the tree joints' rows (avbd_assemble) and whose
 * off-diagonal blocks join a child s to its parent p only through the coordinate terms of their joint
 * (limits, dry friction, damping, stiffness, armature, servos: H_sp = Σ_k k_k ∂φ_k/∂z_s (∂φ_k/∂z_p)ᵀ), and λ⁺
 * the rows' new multipliers (the dual update takes them).  Ordered leaves first, each body followed by its
 * joint to the parent, the system's LDLᵀ factor has no fill (Baraff 1996, "Linear-time dynamics using
 * Lagrange multipliers"; the ordering of Featherstone's articulated-body recursion): O(bodies) 6×6
 * operations (avbd_tree_factor, avbd_tree_subst), in double precision in both builds.  Loop rows — the rows
 * of an equality constraint between two bodies of one articulation and the acting spatial paths (tendons,
 * slider cranks, implicit wrench actuators) through two or more of its bodies — couple bodies the tree does
 * not join; they are taken out of the tree factor and added back exactly by Sherman–Morrison–Woodbury
 * (avbd_tree_loop_step: one r × r capacitance solve, r ≤ AVBD_LOOP_MAX).  The other rows outside the tree
 * (contacts, loop rows beyond the capacity) stay in the diagonal blocks, each an augmented row seen from each
 * body as in the sweep, a row over k ≥ 2 bodies of the block weighed k-fold there (avbd_split_put); the
 * articulations are visited one after the other (block Gauss–Seidel between them), each reading the others'
 * current poses. */
#include <float.h>
#include <math.h>
#include <string.h>
#include "avbd_internal.h"

/* union–find over slots (scratch p): the representative of s's set */
RL_HDFN static int avbd_tree_find(int *p, int s) {
  while (p[s] != s) s = p[s] = p[p[s]];
  return s;
}

/* Grows the blocks from the articulations (scratch: rep the union–find parents, rows each set's loop rows):
 * each loop item in order joins the blocks of its slots when the joined block then holds at most
 * AVBD_LOOP_MAX loop rows (item->block = its representative slot), else it stays outside (−1).  A coordinate
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
    int total = it->rows, first = -1;
    for (int e = am->lsadr[i]; e < am->lsadr[i + 1]; e++) { /* each distinct block once */
      int r = avbd_tree_find(rep, am->lslot[e]), seen = 0;
      for (int f = am->lsadr[i]; f < e; f++) seen |= avbd_tree_find(rep, am->lslot[f]) == r;
      if (!seen) total += rows[r];
      if (first < 0) first = r;
    }
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
  for (int i = 0; i < am->ncrow; i++) am->crow[i].loop = 0;
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
  for (int s = 0; s < nb; s++) am->tsj[s] = am->tjoint[s];
  for (int j = 0; j < am->njoint; j++) { /* a root's joint to the world (the first, where it has several) */
    const rl_avbd_joint *jt = am->joint + j;
    if (jt->eq < 0 && jt->a < 0 && jt->b >= 0 && jt->neq > 0 && am->tparent[jt->b] < 0 && am->tsj[jt->b] < 0)
      am->tsj[jt->b] = j;
  }
  am->tlever = (real)1e30;
  for (int s = 0; s < nb; s++) {
    const rl_avbd_joint *jt = am->tsj[s] >= 0 ? am->joint + am->tsj[s] : NULL;
    if (!jt) continue;
    /* a compound joint's rows hold B's body origin: F0 in A's COM frame (xp), B's frame in B's COM frame (yp).
       Counted in double only: in float the rule's angle bound 4ε·X/ℓ then exceeds the claimed tolerance on
       small bodies, and the iterate went on moving after such a stop by up to 30× the claim (MuJoCo's loop and
       cloth samples: 1.3e-5 m and 3.2e-4 rad, claim 2e-6 m and 2e-5 rad) */
#if defined(RL_REAL_F64)
    const rl_avbd_compound *cp = jt->kind == RL_AVBD_COMPOUND ? am->cmp + jt->cmp : NULL;
#else
    if (jt->kind == RL_AVBD_COMPOUND) continue;
    const rl_avbd_compound *cp = NULL;
#endif
    real la = jt->a < 0 ? 0 : rl_v3_norm(cp ? cp->xp : jt->rA), lb = rl_v3_norm(cp ? cp->yp : jt->rB);
    if (la > 0) am->tlever = rl_avbd_min(am->tlever, la);
    if (lb > 0) am->tlever = rl_avbd_min(am->tlever, lb);
  }
  for (int s = 0; s < nb; s++) am->tmass[s] = 0;
  for (int s = 0; s < nb; s++) am->tmass[avbd_tree_root(am, s)] += am->mass[s];
  for (int s = 0; s < nb; s++) am->tmass[s] = am->tmass[avbd_tree_root(am, s)];
}

/* The pivot floor of the guarded Cholesky factors (that of rl_avbd_chol_solve6, in double precision):
 *   floor = 64ε·dmax + tiny,  dmax the largest |diagonal entry| */
RL_HDFN static double avbd_tree_pivot_floor(double dmax) { return 64 * DBL_EPSILON * dmax + RL_TINY; }

/* Guarded Cholesky D = L Lᵀ of the leading n×n block of a symmetric 6×6 (row stride 6) in place (reads and
 * writes that block's lower triangle only): a pivot below avbd_tree_pivot_floor is replaced by it.  The
 * diagonal keeps 1/L_jj (what the substitutions multiply by), the strict lower triangle L.  Returns the
 * guarded pivots. */
RL_HDFN static inline int avbd_tree_chol_n(double L[36], int n) {
  double dmax = 0;
  int guarded = 0;
  RL_AVBD_UNROLL
  for (int i = 0; i < n; i++) dmax = L[7 * i] > dmax ? L[7 * i] : (-L[7 * i] > dmax ? -L[7 * i] : dmax);
  double floor_ = avbd_tree_pivot_floor(dmax);
  RL_AVBD_UNROLL
  for (int j = 0; j < n; j++) {
    double s = L[7 * j];
    RL_AVBD_UNROLL
    for (int k = 0; k < j; k++) s -= L[6 * j + k] * L[6 * j + k];
    if (!(s > floor_)) {
      s = floor_;
      guarded++;
    }
    double il = 1 / sqrt(s);
    L[7 * j] = il;
    RL_AVBD_UNROLL
    for (int i = j + 1; i < n; i++) {
      double t = L[6 * i + j];
      RL_AVBD_UNROLL
      for (int k = 0; k < j; k++) t -= L[6 * i + k] * L[6 * j + k];
      L[6 * i + j] = t * il;
    }
  }
  return guarded;
}

/* avbd_tree_chol_n of the whole 6×6 */
RL_HDFN static int avbd_tree_chol(double L[36]) { return avbd_tree_chol_n(L, 6); }

/* avbd_tree_chol_n of the leading 5×5 (a hinge's S) */
RL_HDFN static int avbd_tree_chol5(double L[36]) { return avbd_tree_chol_n(L, 5); }

/* y = L⁻¹ b in place over the leading n entries (forward substitution with the factor of avbd_tree_chol_n),
 * where b_k = 0 for k < i0 (so y_k = 0 there: those entries are left as they are and their terms skipped):
 *   y_i = (b_i − Σ_{i0≤k<i} L_ik y_k) / L_ii,  i0 ≤ i < n */
RL_HDFN static inline void avbd_tree_fwd_n(const double L[36], double y[6], int n, int i0) {
  RL_AVBD_UNROLL
  for (int i = i0; i < n; i++) {
    double t = y[i];
    RL_AVBD_UNROLL
    for (int k = i0; k < i; k++) t -= L[6 * i + k] * y[k];
    y[i] = t * L[7 * i];
  }
}

/* x = L⁻ᵀ y in place over the leading n entries (back substitution):
 *   x_i = (y_i − Σ_{i<k<n} L_ki x_k) / L_ii */
RL_HDFN static inline void avbd_tree_bwd_n(const double L[36], double x[6], int n) {
  RL_AVBD_UNROLL
  for (int i = n - 1; i >= 0; i--) {
    double t = x[i];
    RL_AVBD_UNROLL
    for (int k = i + 1; k < n; k++) t -= L[6 * k + i] * x[k];
    x[i] = t * L[7 * i];
  }
}

/* The rows of a hinge (and of any joint whose rows are three anchor rows, then angular rows): the child's
 * anchor row k is J_B,k = [−e_k, −u_B × e_k], whose entries before k are exact zeros, and an angular row is
 * [0, ·].  The first entry of row k that may be nonzero, in J_B and in X_k = L⁻¹J_B,kᵀ (L lower triangular
 * keeps leading zeros):
 *   lead(k) = k (k < 3),  3 (k ≥ 3) */
RL_HDFN static inline int avbd_tree_row_lead(int k) { return k < 3 ? k : 3; }

/* The parent's side of the same rows: J_A,k = [e_k, ·] (anchor) and [0, ·] (angular), and the hinge's
 * rank-one coupling changes only the angular columns of B = J_A − XᵀY, so linear column c < 3 of B is e_c's
 * column: zero in the rows above c; B̃ = L_S⁻¹B (lower triangular) keeps that.  The first row of column c
 * that may be nonzero:
 *   clead(c) = c (c < 3),  0 (c ≥ 3) */
RL_HDFN static inline int avbd_tree_col_lead(int c) { return c < 3 ? c : 0; }

/* Y = L⁻¹ C in place for the first n rows of a 6-column C (row-major), all six columns at once: row i of Y is
 *   Y_i = (C_i − Σ_{k<i} L_ik Y_k) / L_ii;
 * lead: C is a hinge's B (column b zero above row avbd_tree_col_lead(b)), whose zero entries stay zero and
 * are skipped */
RL_HDFN static inline void avbd_tree_fwd_rows(const double L[36], double Y[36], int n, int lead) {
  RL_AVBD_UNROLL
  for (int i = 0; i < n; i++) {
    double *yi = Y + 6 * i;
    RL_AVBD_UNROLL
    for (int k = 0; k < i; k++) {
      double l = L[6 * i + k];
      const double *yk = Y + 6 * k;
      RL_AVBD_UNROLL
      for (int b = 0; b < 6; b++)
        if (!lead || k >= avbd_tree_col_lead(b)) yi[b] -= l * yk[b];
    }
    RL_AVBD_UNROLL
    for (int b = 0; b < 6; b++)
      if (!lead || i >= avbd_tree_col_lead(b)) yi[b] *= L[7 * i];
  }
}

/* The Gram matrix of the first n rows of X (row-major, 6 columns), lower triangle:
 *   S_ab = Σ_c X_ac X_bc  (b ≤ a < n);
 * lead: X holds a hinge's rows (row a zero before avbd_tree_row_lead(a)), the sum starts at the later lead.
 * Returns max_a S_aa */
RL_HDFN static inline double avbd_tree_gram(const double X[36], double S[36], int n, int lead) {
  double smax = 0;
  RL_AVBD_UNROLL
  for (int a = 0; a < n; a++) {
    RL_AVBD_UNROLL
    for (int b = 0; b <= a; b++) {
      double t = 0;
      int c0 = lead ? avbd_tree_row_lead(a) : 0; /* row_lead(a) ≥ row_lead(b) */
      RL_AVBD_UNROLL
      for (int c = c0; c < 6; c++) t += X[6 * a + c] * X[6 * b + c];
      S[6 * a + b] = t;
    }
    smax = S[7 * a] > smax ? S[7 * a] : smax;
  }
  return smax;
}

/* The rows r … 5 of a symmetric 6×6 S (lower triangle) padded: S_kk = d, S_kb = 0 (b < k) */
RL_HDFN static void avbd_tree_pad(double S[36], int r, double d) {
  for (int k = r; k < 6; k++) {
    for (int b = 0; b < k; b++) S[6 * k + b] = 0;
    S[7 * k] = d;
  }
}

/* D ± BᵀB over the first n rows of B (row-major, 6 columns), lower triangle of D (sub: minus):
 *   D_ab ± Σ_{k<n} B_ka B_kb  (b ≤ a);
 * lead: B is a hinge's B̃ (column c zero above row avbd_tree_col_lead(c)), the sum starts at the later lead */
RL_HDFN static inline void avbd_tree_gram_t_add(double D[36], const double B[36], int n, int sub, int lead) {
  RL_AVBD_UNROLL
  for (int a = 0; a < 6; a++)
    RL_AVBD_UNROLL
    for (int b = 0; b <= a; b++) {
      double u = 0;
      int ca = avbd_tree_col_lead(a), cb = avbd_tree_col_lead(b), k0 = lead ? (ca > cb ? ca : cb) : 0;
      RL_AVBD_UNROLL
      for (int k = k0; k < n; k++) u += B[6 * k + a] * B[6 * k + b];
      D[6 * a + b] = sub ? D[6 * a + b] - u : D[6 * a + b] + u;
    }
}

/* The first entry of a 6-vector that may be nonzero, 3 when its linear part (0, 1, 2) is zero (a hinge's
 * rank-one coupling (0, a): the terms of its zero entries are exact zeros and are skipped) */
RL_HDFN static int avbd_tree_first_nz(const double v[6]) { return v[0] == 0 && v[1] == 0 && v[2] == 0 ? 3 : 0; }

/* C += w·u vᵀ (6×6, row-major: C[6i + j] += w u_i v_j) */
RL_HDFN static void avbd_outer_add(real C[36], const real u[6], const real v[6], real w) {
  if (w == 0) return;
  RL_AVBD_UNROLL
  for (int i = 0; i < 6; i++) {
    RL_AVBD_UNROLL
    for (int j = 0; j < 6; j++) C[6 * i + j] += w * u[i] * v[j];
  }
}

/* avbd_outer_add into a block of the articulation factor (double precision) */
RL_HDFN static void avbd_outer_add_t(double C[36], const real u[6], const real v[6], real w) {
  if (w == 0) return;
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) C[6 * i + j] += (double)w * u[i] * v[j];
}

/* The coordinate terms of tree joint j's components when it is a compound joint (nothing for a ball, connect
 * or weld): H_sp += Σ_k k_k ∂φ_k/∂z_B (∂φ_k/∂z_A)ᵀ over its hinge and slide components (limits, dry friction,
 * damping, stiffness, armature, servo curvature of avbd_coord_terms), child s = jt->b (side B), parent
 * p = jt->a (side A); the same terms and weights avbd_assemble puts on the two diagonal blocks. */
RL_HDFN static void avbd_tree_coupling_compound(rl_avbd *am, const rl_model *m, const rl_data *d, int j, real h,
                                                real C[36]) {
  const rl_avbd_joint *jt = am->joint + j;
  if (jt->kind != RL_AVBD_COMPOUND) return;
  const rl_avbd_compound_val *v = avbd_compound_value(am, jt);
  const rl_avbd_compound *c = am->cmp + jt->cmp;
  real JA[6], JB[6];
  for (int k = 0; k < c->n; k++) {
    const rl_avbd_joint *sj = c->sub + k;
    if (sj->kind == RL_AVBD_BALL) continue;
    real G, kk;
    avbd_coord_terms(am, m, d, sj, v->q[k][0], h, 0, &G, &kk);
    avbd_compound_jac(v, v->pg[c->dof[k]], 0, JA);
    avbd_compound_jac(v, v->pg[c->dof[k]], 1, JB);
    avbd_outer_add(C, JB, JA, kk);
  }
}

/* Both sides' Jacobians of the rows of a hinge, ball or connect (rl_avbd_joint_val_ok) from its values v, written
 * into the work slot's rows (6 doubles each) without a real-typed copy: the entries of rl_avbd_joint_val_jac,
 *   anchor k:  J_A,k = [e_k, u_A × e_k],  J_B,k = −[e_k, u_B × e_k]  (u × e_0 = (0, u_2, −u_1),
 *              u × e_1 = (−u_2, 0, u_0), u × e_2 = (u_1, −u_0, 0));
 *   axis k (hinge):  J_A,k = [0, t_k × a],  J_B,k = −J_A,k */
RL_HDFN static void avbd_tree_val_rows(const rl_avbd_joint *jt, const rl_avbd_joint_val *v, double *JA, double *JB) {
  const real *uA = v->arms.uA, *uB = v->arms.uB;
  for (int i = 0; i < 18; i++) JA[i] = JB[i] = 0;
  for (int k = 0; k < 3; k++) {
    JA[7 * k] = 1;
    JB[7 * k] = -1;
  }
  const int at[6] = {4, 5, 9, 11, 15, 16}, ui[6] = {2, 1, 2, 0, 1, 0}; /* (row k, column 3 + i) ← ±u entry */
  const real sg[6] = {1, -1, -1, 1, 1, -1};
  RL_AVBD_UNROLL
  for (int e = 0; e < 6; e++) {
    JA[at[e]] = sg[e] * uA[ui[e]];
    JB[at[e]] = -sg[e] * uB[ui[e]];
  }
  if (jt->kind != RL_AVBD_HINGE) return;
  for (int k = 0; k < 2; k++) {
    real c[3];
    double *a = JA + 6 * (3 + k), *b = JB + 6 * (3 + k);
    rl_v3_cross(c, v->arms.t[k], v->arms.a);
    for (int i = 0; i < 3; i++) {
      a[i] = b[i] = 0;
      a[3 + i] = c[i];
      b[3 + i] = -c[i];
    }
  }
}

/* The two-sided rows of slot s's constraint-space joint (rl_avbd.tsj) into its work slot w: the child side's
 * Jacobians J_B,k at AVBD_TW_X, the parent side's J_A,k at AVBD_TW_B (6 reals per row) and the rows' values
 * C̃_k = C_k − α_j C⁰_k at AVBD_TW_F; rows r … 5 zero (avbd_tree_factor pads them).  Returns the number of rows r
 * (0: no such joint, or it is off). */
RL_HDFN static int avbd_tree_rows(rl_avbd *am, const rl_model *m, const rl_data *d, int s, double *w) {
  int j = am->tsj[s];
  if (j < 0) return 0;
  const rl_avbd_joint *jt = am->joint + j;
  if (!avbd_joint_on(m, d, jt)) return 0;
  double *JB = w + AVBD_TW_X, *JA = w + AVBD_TW_B;
  real C[6], J0[6][6], J1[6][6];
  const real *Cv = C;
  int n, direct = 0;
  if (jt->kind == RL_AVBD_COMPOUND) {
    const rl_avbd_compound_val *v = avbd_compound_value(am, jt);
    n = jt->neq;
    for (int r = 0; r < n; r++) {
      avbd_compound_jac(v, v->w[r], 0, J0[r]);
      avbd_compound_jac(v, v->w[r], 1, J1[r]);
    }
    Cv = v->C;
  } else if (rl_avbd_joint_val_ok(jt)) {
    const rl_avbd_joint_val *v = avbd_joint_value(am, j);
    n = v->n;
    avbd_tree_val_rows(jt, v, JA, JB);
    Cv = v->C;
    direct = 1;
  } else n = rl_avbd_joint_rows(jt, avbd_pose_of(am, jt->a), avbd_pose_of(am, jt->b), C, J0, J1);
  for (int r = 0; r < n; r++) {
    w[AVBD_TW_F + r] = Cv[r] - am->prm.alpha_joint * am->row[jt->row + r].c0;
    if (direct) continue;
    RL_AVBD_UNROLL
    for (int c = 0; c < 6; c++) {
      JA[6 * r + c] = J0[r][c];
      JB[6 * r + c] = J1[r][c];
    }
  }
  for (int r = n; r < 6; r++) {
    w[AVBD_TW_F + r] = 0;
    RL_AVBD_UNROLL
    for (int c = 0; c < 6; c++) JA[6 * r + c] = JB[6 * r + c] = 0;
  }
  return n;
}

/* The coupling block of tree joint j into slot w of its child: its coordinates (avbd_tree_coupling_compound) and the
 * terms on the dofs of a ball it holds, Σ_ij K_ij pg[B][i] pg[A][j]ᵀ (avbd_mdof_coupling), dense at AVBD_TW_Y;
 * a hinge's or slide's alone is of rank one, −k_φ (0, a)(0, a)ᵀ or k d_B d_Aᵀ, kept as w u vᵀ (AVBD_TW_RK = 1) for
 * avbd_tree_factor. */
RL_HDFN static void avbd_tree_coupling(rl_avbd *am, const rl_model *m, const rl_data *d, int j, real h, double *w) {
  const rl_avbd_joint *jt = am->joint + j;
  double *u = w + AVBD_TW_U, *v = w + AVBD_TW_V;
  w[AVBD_TW_RK] = jt->kind == RL_AVBD_HINGE || jt->kind == RL_AVBD_SLIDE; /* neither holds a ball's dofs */
  if (jt->kind == RL_AVBD_HINGE) {
    const real *a = avbd_joint_value(am, j)->arms.a;
    for (int i = 0; i < 3; i++) {
      u[i] = v[i] = 0;
      u[3 + i] = v[3 + i] = a[i];
    }
    w[AVBD_TW_W] = -w[AVBD_TW_GK + 1];
  } else if (jt->kind == RL_AVBD_SLIDE) {
    real dA[6], dB[6], G, k;
    real phi = rl_avbd_joint_coord(jt, avbd_pose_of(am, jt->a), avbd_pose_of(am, jt->b), jt->phi, dA, dB);
    avbd_coord_terms(am, m, d, jt, phi, h, 0, &G, &k);
    for (int i = 0; i < 6; i++) {
      u[i] = dB[i];
      v[i] = dA[i];
    }
    w[AVBD_TW_W] = k;
  } else {
    real C[36];
    for (int i = 0; i < 36; i++) C[i] = 0;
    avbd_tree_coupling_compound(am, m, d, j, h, C);
    if (am->jmdof[j] >= 0) avbd_mdof_coupling(am, m, d, am->jmdof[j], h, C);
    for (int i = 0; i < 36; i++) w[AVBD_TW_Y + i] = C[i];
  }
}

/* 1 when slot s's rows are those of a hinge (r = 5: three anchor rows, two axis rows, avbd_tree_row_lead) and,
 * when it has a parent, its coupling is the hinge's rank-one c u vᵀ with u = v = (0, a) */
RL_HDFN static inline int avbd_tree_is_hinge(const rl_avbd *am, int s, int r) {
  return r == 5 && am->joint[am->tsj[s]].kind == RL_AVBD_HINGE;
}

/* avbd_tree_factor's step for a hinge slot (avbd_tree_is_hinge), the zeros of its structure skipped (a skipped
 * term is a product with an exact zero, so every entry is the one the general step computes) and S kept
 * 5 × 5 (the general step's padded sixth row carries nothing; its pivot, max_a S_aa, is guarded when that is
 * below avbd_tree_pivot_floor of itself, and counted here the same way):
 *   X_k = L⁻¹J_B,kᵀ from entry lead(k) on,  S_ab = Σ_{c ≥ lead(a)} X_ac X_bc (b ≤ a),  S = L_S L_Sᵀ;
 * with a parent (Dp its block):
 *   y = L⁻¹u from entry 3 on,  B_k −= c (X_k · y) v,  D_p −= c²‖y‖² v vᵀ  (angular entries only),
 *   B̃ = L_S⁻¹B,  D_p += B̃ᵀB̃  (column c of B̃ zero above row clead(c)).
 * Returns the guarded pivots of L_S. */
RL_HDFN static int avbd_tree_factor_hinge(double *w, double *Dp) {
  double *L = w + AVBD_TW_D, *X = w + AVBD_TW_X, *Bt = w + AVBD_TW_B, *S = w + AVBD_TW_S;
  RL_AVBD_UNROLL
  for (int k = 0; k < 5; k++) avbd_tree_fwd_n(L, X + 6 * k, 6, avbd_tree_row_lead(k));
  double smax = avbd_tree_gram(X, S, 5, 1);
  int guarded = avbd_tree_chol5(S) + !(smax > avbd_tree_pivot_floor(smax));
  if (!Dp) return guarded;
  double *y1 = w + AVBD_TW_U, *v = w + AVBD_TW_V, c = w[AVBD_TW_W], yy = 0;
  avbd_tree_fwd_n(L, y1, 6, 3); /* u ← L⁻¹u, read again by avbd_tree_subst */
  RL_AVBD_UNROLL
  for (int a = 3; a < 6; a++) yy += y1[a] * y1[a];
  RL_AVBD_UNROLL
  for (int k = 0; k < 5; k++) {
    double t = 0;
    RL_AVBD_UNROLL
    for (int a = 3; a < 6; a++) t += X[6 * k + a] * y1[a];
    t *= c;
    RL_AVBD_UNROLL
    for (int b = 3; b < 6; b++) Bt[6 * k + b] -= t * v[b];
  }
  yy *= c * c;
  RL_AVBD_UNROLL
  for (int a = 3; a < 6; a++)
    RL_AVBD_UNROLL
    for (int b = 3; b <= a; b++) Dp[6 * a + b] -= yy * v[a] * v[b];
  avbd_tree_fwd_rows(S, Bt, 5, 1);
  avbd_tree_gram_t_add(Dp, Bt, 5, 0, 1);
  return guarded;
}

/* Factor of the articulation (list, n) with the two-sided rows of each slot's joint as hard constraints.
 * Each slot s has its block D_s (inertia, the rows outside the tree, coordinate terms, the geometric stiffness
 * of its joints' forces λ: no tree joint's rows), the coupling H_sp to its parent p (coordinate terms only) and
 * the r rows of its joint (avbd_tree_rows), linearized as C̃ + J_A δ_p + J_B δ_s.  The block's Newton step is
 * that of the Lagrangian, [D Jᵀ; J 0] [x; ν] = [v; C̃] with x = −δ and the rows' new multipliers λ = −ν
 * (Baraff 1996, "Linear-time dynamics using Lagrange multipliers": ordered leaves first, body then its joint
 * to the parent, the factor has no fill).  The rows never enter a pivot as stiff penalty terms: eliminating a
 * hinge's anchor rows from ρJᵀJ leaves the free rotation's pivot I/h² as a difference of ρ-sized terms, which
 * single precision loses.  Leaves first, with D_s = L Lᵀ (D_s already holding its children's eliminations):
 *   X = L⁻¹J_Bᵀ,  S = XᵀX = L_S L_Sᵀ  (r × r, positive definite: a tree joint's rows are independent),
 *   Y = L⁻¹H_sp,  B = J_A − XᵀY,  B̃ = L_S⁻¹B,
 *   D_p ← D_p − YᵀY + B̃ᵀB̃,
 * the Schur complement of s and its rows.  avbd_tree_subst then runs the right side through.  Adds the guarded
 * pivots to am->guard. */
RL_HDFN static void avbd_tree_factor(rl_avbd *am, const int *list, int n) {
  double *W = am->twork;
  for (int i = n - 1; i >= 0; i--) {
    int s = list[i], p = am->tparent[s];
    double *w = W + AVBD_TW * s, *L = w + AVBD_TW_D, *X = w + AVBD_TW_X, *Bt = w + AVBD_TW_B, *S = w + AVBD_TW_S;
    int r = (int)w[AVBD_TW_R];
    am->guard[s] = avbd_tree_chol(L);
    if (avbd_tree_is_hinge(am, s, r)) {
      am->guard[s] += avbd_tree_factor_hinge(w, p >= 0 ? W + AVBD_TW * p + AVBD_TW_D : NULL);
      continue;
    }
    if (r > 0) {
      /* the rows padded to six: a zero row k ≥ r gets S_kk = max diag of the others, so that S stays positive
         definite, its pivot guard sees the same scale, and the row carries nothing (X_k = B̃_k = ẽ_k = 0).  The
         products of the zero rows are exact zeros: only the r rows' X and S are computed, the loops whose
         inner sums run over the rows (the factor of S, B̃ᵀB̃, the substitutions) stay six long */
      RL_AVBD_UNROLL
      for (int k = 0; k < r; k++) avbd_tree_fwd_n(L, X + 6 * k, 6, 0);
      double smax = avbd_tree_gram(X, S, r, 0);
      avbd_tree_pad(S, r, smax);
      am->guard[s] += avbd_tree_chol(S);
    }
    if (p < 0) continue;
    double *Y = w + AVBD_TW_Y, *Dp = W + AVBD_TW * p + AVBD_TW_D;
    if (w[AVBD_TW_RK] != 0) {
      /* H_sp = c u vᵀ: Y = c (L⁻¹u) vᵀ, YᵀY = c²‖L⁻¹u‖² v vᵀ, XᵀY = c (X L⁻¹u) vᵀ */
      double *y1 = w + AVBD_TW_U, *v = w + AVBD_TW_V, c = w[AVBD_TW_W], yy = 0;
      int v0 = avbd_tree_first_nz(v);
      avbd_tree_fwd_n(L, y1, 6, 0); /* u ← L⁻¹u, read again by avbd_tree_subst */
      RL_AVBD_UNROLL
      for (int a = 0; a < 6; a++) yy += y1[a] * y1[a];
      RL_AVBD_UNROLL
      for (int k = 0; k < r; k++) {
        double t = 0;
        RL_AVBD_UNROLL
        for (int a = 0; a < 6; a++) t += X[6 * k + a] * y1[a];
        t *= c;
        RL_AVBD_UNROLL
        for (int b = v0; b < 6; b++) Bt[6 * k + b] -= t * v[b];
      }
      yy *= c * c;
      RL_AVBD_UNROLL
      for (int a = v0; a < 6; a++)
        RL_AVBD_UNROLL
        for (int b = v0; b <= a; b++) Dp[6 * a + b] -= yy * v[a] * v[b];
    } else {
      avbd_tree_fwd_rows(L, Y, 6, 0);
      RL_AVBD_UNROLL
      for (int k = 0; k < r; k++) /* B = J_A − XᵀY, row k */
        RL_AVBD_UNROLL
        for (int b = 0; b < 6; b++) {
          double t = Bt[6 * k + b];
          RL_AVBD_UNROLL
          for (int a = 0; a < 6; a++) t -= X[6 * k + a] * Y[6 * a + b];
          Bt[6 * k + b] = t;
        }
      avbd_tree_gram_t_add(Dp, Y, 6, 1, 0); /* D_p −= YᵀY */
    }
    if (r > 0) {
      avbd_tree_fwd_rows(S, Bt, r, 0);     /* B̃ = L_S⁻¹ B */
      avbd_tree_gram_t_add(Dp, Bt, 6, 0, 0); /* D_p += B̃ᵀB̃ (rows r … 5 zero) */
    }
  }
}

/* A hinge coupling's scalar with a slot vector z: c (p · z) for p = L⁻¹u (off = AVBD_TW_U) or v (AVBD_TW_V),
 * over the angular entries (the linear ones of both are zero) */
RL_HDFN static inline double avbd_tree_hinge_dot(const double *w, int off, const double z[6]) {
  double t = 0;
  RL_AVBD_UNROLL
  for (int c = 3; c < 6; c++) t += w[off + c] * z[c];
  return t * w[AVBD_TW_W];
}

/* avbd_tree_subst's leaves-first step for a hinge slot (avbd_tree_is_hinge), y = L⁻¹v_s formed, the zeros of
 * avbd_tree_factor_hinge skipped:
 *   ẽ = L_S⁻¹(c − X y)  (row k of X from entry lead(k); c = 0 unless with_c),
 *   v_p ← v_p − c (L⁻¹u · y) v + B̃ᵀẽ  (u, v angular; column a of B̃ from row clead(a); vp NULL: no parent) */
RL_HDFN static void avbd_tree_subst_up_hinge(double *w, const double y[6], double *vp, int with_c) {
  const double *X = w + AVBD_TW_X, *Bt = w + AVBD_TW_B;
  double *e = w + AVBD_TW_E;
  RL_AVBD_UNROLL
  for (int k = 0; k < 5; k++) {
    double t = with_c ? w[AVBD_TW_F + k] : 0;
    RL_AVBD_UNROLL
    for (int c = avbd_tree_row_lead(k); c < 6; c++) t -= X[6 * k + c] * y[c];
    e[k] = t;
  }
  e[5] = 0;
  avbd_tree_fwd_n(w + AVBD_TW_S, e, 5, 0);
  if (!vp) return;
  double ty = avbd_tree_hinge_dot(w, AVBD_TW_U, y);
  RL_AVBD_UNROLL
  for (int a = 0; a < 6; a++) {
    double t = a < 3 ? 0 : ty * w[AVBD_TW_V + a];
    RL_AVBD_UNROLL
    for (int k = avbd_tree_col_lead(a); k < 5; k++) t -= Bt[6 * k + a] * e[k];
    vp[a] -= t;
  }
}

/* avbd_tree_subst's root-first step for a hinge slot, before x_s ← L⁻ᵀx_s, the same zeros skipped:
 *   ν = L_S⁻ᵀ(B̃ x_p − ẽ)  (row k < 3 of B̃ zero in the linear columns after k; x_p = 0 without a parent),
 *   x_s ← x_s − X ν − c (v · x_p) L⁻¹u;
 * nu: ν, its sixth entry 0 */
RL_HDFN static void avbd_tree_subst_down_hinge(const double *w, const double *xp, double x[6], double nu[6]) {
  const double *e = w + AVBD_TW_E, *X = w + AVBD_TW_X, *Bt = w + AVBD_TW_B;
  RL_AVBD_UNROLL
  for (int k = 0; k < 5; k++) {
    double t = -e[k];
    if (xp) {
      RL_AVBD_UNROLL
      for (int b = 0; b < 6; b++)
        if (k >= avbd_tree_col_lead(b)) t += Bt[6 * k + b] * xp[b];
    }
    nu[k] = t;
  }
  nu[5] = 0;
  avbd_tree_bwd_n(w + AVBD_TW_S, nu, 5);
  RL_AVBD_UNROLL
  for (int k = 0; k < 5; k++) {
    RL_AVBD_UNROLL
    for (int c = avbd_tree_row_lead(k); c < 6; c++) x[c] -= X[6 * k + c] * nu[k];
  }
  if (!xp) return;
  double t = avbd_tree_hinge_dot(w, AVBD_TW_V, xp);
  RL_AVBD_UNROLL
  for (int a = 3; a < 6; a++) x[a] -= t * w[AVBD_TW_U + a];
}

/* The rows' multipliers from ν at AVBD_TW_NU (r rows, the rest 0): λ = −ν (nu_out = 1), λ −= ν (nu_out = 2: the
 * part of a further right side), nothing (0) */
RL_HDFN static void avbd_tree_nu_out(double *w, const double nu[6], int r, int nu_out) {
  if (nu_out == 1)
    for (int k = 0; k < 6; k++) w[AVBD_TW_NU + k] = k < r ? -nu[k] : 0;
  else if (nu_out == 2)
    for (int k = 0; k < r; k++) w[AVBD_TW_NU + k] -= nu[k];
}

/* x of [D Jᵀ; J 0] [x; ν] = [v; c] in place for the factored articulation (list, n) of avbd_tree_factor, v six
 * reals per slot at stride ld, c the rows' C̃ (with_c) or 0.  Leaves first:
 *   y_s = L⁻¹v_s,  ẽ = L_S⁻¹(c − Xᵀy_s),  v_p ← v_p − Yᵀy_s + B̃ᵀẽ;
 * then root first:
 *   ν = L_S⁻ᵀ(B̃ x_p − ẽ)  (x_p = 0 for a joint to the world),  x_s = L⁻ᵀ(y_s − Y x_p − X ν).
 * For the step (v = g, c = C̃; δ = −x) −ν are the rows' multipliers, kept at AVBD_TW_NU (nu_out = 1), or added
 * there (nu_out = 2: the multipliers' part of a further right side). */
RL_HDFN static void avbd_tree_subst(rl_avbd *am, const int *list, int n, double *v, size_t ld, int with_c, int nu_out) {
  double *W = am->twork;
  for (int i = n - 1; i >= 0; i--) {
    int s = list[i], p = am->tparent[s];
    double *w = W + AVBD_TW * s, *e = w + AVBD_TW_E, *y = v + ld * (size_t)s;
    const double *L = w + AVBD_TW_D, *X = w + AVBD_TW_X, *Bt = w + AVBD_TW_B, *Y = w + AVBD_TW_Y;
    int r = (int)w[AVBD_TW_R];
    avbd_tree_fwd_n(L, y, 6, 0);
    if (avbd_tree_is_hinge(am, s, r)) {
      avbd_tree_subst_up_hinge(w, y, p >= 0 ? v + ld * (size_t)p : NULL, with_c);
      continue;
    }
    if (r > 0) {
      RL_AVBD_UNROLL
      for (int k = 0; k < r; k++) {
        double t = with_c ? w[AVBD_TW_F + k] : 0;
        RL_AVBD_UNROLL
        for (int c = 0; c < 6; c++) t -= X[6 * k + c] * y[c];
        e[k] = t;
      }
      for (int k = r; k < 6; k++) e[k] = 0; /* a padded row's ẽ */
      avbd_tree_fwd_n(w + AVBD_TW_S, e, 6, 0);
    }
    if (p < 0) continue;
    double *vp = v + ld * (size_t)p, ty = 0;
    int rk = w[AVBD_TW_RK] != 0;
    if (rk) { /* Yᵀy = c (L⁻¹u · y) v */
      RL_AVBD_UNROLL
      for (int c = 0; c < 6; c++) ty += w[AVBD_TW_U + c] * y[c];
      ty *= w[AVBD_TW_W];
    }
    RL_AVBD_UNROLL
    for (int a = 0; a < 6; a++) {
      double t = 0;
      if (rk) t = ty * w[AVBD_TW_V + a];
      else
        RL_AVBD_UNROLL
        for (int c = 0; c < 6; c++) t += Y[6 * c + a] * y[c];
      if (r > 0) {
        RL_AVBD_UNROLL
        for (int k = 0; k < 6; k++) t -= Bt[6 * k + a] * e[k];
      }
      vp[a] -= t;
    }
  }
  for (int i = 0; i < n; i++) {
    int s = list[i], p = am->tparent[s];
    double *w = W + AVBD_TW * s;
    const double *e = w + AVBD_TW_E, *L = w + AVBD_TW_D, *X = w + AVBD_TW_X, *Bt = w + AVBD_TW_B, *Y = w + AVBD_TW_Y;
    const double *xp = p >= 0 ? v + ld * (size_t)p : NULL;
    double *x = v + ld * (size_t)s;
    int r = (int)w[AVBD_TW_R];
    if (avbd_tree_is_hinge(am, s, r)) {
      double nu[6];
      avbd_tree_subst_down_hinge(w, xp, x, nu);
      avbd_tree_nu_out(w, nu, r, nu_out);
      avbd_tree_bwd_n(L, x, 6);
      continue;
    }
    if (r > 0) {
      double nu[6];
      RL_AVBD_UNROLL
      for (int k = 0; k < r; k++) {
        double t = -e[k];
        if (xp) {
          RL_AVBD_UNROLL
          for (int b = 0; b < 6; b++) t += Bt[6 * k + b] * xp[b];
        }
        nu[k] = t;
      }
      for (int k = r; k < 6; k++) nu[k] = 0; /* a padded row's ν */
      avbd_tree_bwd_n(w + AVBD_TW_S, nu, 6);
      avbd_tree_nu_out(w, nu, r, nu_out);
      RL_AVBD_UNROLL
      for (int k = 0; k < r; k++) {
        RL_AVBD_UNROLL
        for (int c = 0; c < 6; c++) x[c] -= X[6 * k + c] * nu[k];
      }
    }
    if (xp && w[AVBD_TW_RK] != 0) { /* Y x_p = c (v · x_p) L⁻¹u */
      double t = 0;
      RL_AVBD_UNROLL
      for (int b = 0; b < 6; b++) t += w[AVBD_TW_V + b] * xp[b];
      t *= w[AVBD_TW_W];
      RL_AVBD_UNROLL
      for (int a = 0; a < 6; a++) x[a] -= t * w[AVBD_TW_U + a];
    } else if (xp) {
      RL_AVBD_UNROLL
      for (int a = 0; a < 6; a++) {
        RL_AVBD_UNROLL
        for (int b = 0; b < 6; b++) x[a] -= Y[6 * a + b] * xp[b];
      }
    }
    avbd_tree_bwd_n(L, x, 6);
  }
}

/* v ← H'⁻¹ v for the factored articulation (list, n), v six reals per slot (avbd_tree_subst with c = 0: the
 * block's matrix on the tree joints' constraint manifold; in double precision through rl_avbd.tvec) */
RL_HDFN static void avbd_tree_solve(rl_avbd *am, const int *list, int n, real *v) {
  for (int i = 0; i < n; i++)
    for (int c = 0; c < 6; c++) am->tvec[6 * list[i] + c] = v[6 * list[i] + c];
  avbd_tree_subst(am, list, n, am->tvec, 6, 0, 0);
  for (int i = 0; i < n; i++)
    for (int c = 0; c < 6; c++) v[6 * list[i] + c] = (real)am->tvec[6 * list[i] + c];
}

/* Adds loop row r (weight w, its Jacobian J on slot s) to U: column r of U gets J at s, and D_s loses w J Jᵀ, so
 * that the factored matrix H' = H − U diag(w) Uᵀ holds no part of the row (the rows whose curvature avbd_assemble
 * put on the diagonal blocks: equality joints, spatial paths) */
RL_HDFN static void avbd_loop_put(rl_avbd *am, int r, int s, const real J[6], real w) {
  size_t ld = 6 * ((size_t)am->nb + 1);
  real *u = am->tloop + ld * (size_t)r + 6 * (size_t)s;
  for (int c = 0; c < 6; c++) u[c] += J[c];
  avbd_outer_add_t(am->twork + AVBD_TW * s, J, J, -w);
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

/* 1 if entry e of loop item i's slot list is a slot of block k not listed before it in the item */
RL_HDFN static int avbd_item_slot_new_in(const rl_avbd *am, int i, int e, int k) {
  int s = am->lslot[e];
  if (am->tblock[s] != k) return 0;
  for (int f = am->lsadr[i]; f < e; f++)
    if (am->lslot[f] == s) return 0;
  return 1;
}

/* Number of distinct slots of loop item i in block k */
RL_HDFN static int avbd_item_slots_in(const rl_avbd *am, int i, int k) {
  int n = 0;
  for (int e = am->lsadr[i]; e < am->lsadr[i + 1]; e++) n += avbd_item_slot_new_in(am, i, e, k);
  return n;
}

/* A row that couples bodies of the block but is not one of its loop rows (the block's loop rows are full) stays
 * on the diagonal blocks, where avbd_assemble put w J_s J_sᵀ for each of its bodies s as if the others stood
 * still; but the block moves them together, and the row's curvature w (Σ_s J_s δ_s)² then reaches k times what
 * the diagonal holds (k its bodies in the block) where all of them move to close it: the block's Newton step
 * overshoots that mode up to k-fold and, with w large against the bodies' inertia, the iteration diverges.
 * By Cauchy–Schwarz (Σ_s a_s)² ≤ k Σ_s a_s², so the weight k w on each side majorizes the row and the step
 * cannot overshoot it; this adds the missing (k − 1) w J_s J_sᵀ to D_s (the gradient is unchanged, and so is
 * the fixed point). */
RL_HDFN static void avbd_split_put(rl_avbd *am, int s, const real J[6], real w) {
  avbd_outer_add_t(am->twork + AVBD_TW * s, J, J, w);
}

/* avbd_split_put for loop item i of block k that is not a loop row there (e = k' − 1, k' its bodies in the block):
 * equality joint rows (w = ρ), an acting spatial path (w = k_L), a coordinate row over a spatial path (w = its
 * curvature k_r; u: a scratch column, six reals per slot).  Fixed tendons and coordinate rows over joint
 * coordinates act on the joints' coordinate terms, not on the diagonal blocks, and are left as they are. */
RL_HDFN static void avbd_tree_split_item(rl_avbd *am, const rl_model *m, const rl_data *d, int i, int k, real e,
                                         const int *list, int n, real *u, real h) {
  const rl_avbd_litem *it = am->litem + i;
  if (it->kind == RL_AVBD_LOOP_EQ) {
    const rl_avbd_joint *jt = am->joint + it->id;
    if (!avbd_joint_on(m, d, jt)) return;
    real Cv[6], JA[6][6], JB[6][6];
    int nr = rl_avbd_joint_rows(jt, avbd_pose_of(am, jt->a), avbd_pose_of(am, jt->b), Cv, JA, JB);
    for (int q = 0; q < nr; q++) {
      real w = e * am->row[jt->row + q].rho;
      avbd_split_put(am, jt->a, JA[q], w);
      avbd_split_put(am, jt->b, JB[q], w);
    }
  } else if (it->kind == RL_AVBD_LOOP_PATH) {
    int p = it->id;
    real kL, L = avbd_spat_length(am, m, am->spat[p], -1, NULL, NULL);
    avbd_tendon_force(am, m, d, am->spat[p], L, am->spat_n[2 * p], am->spat_n[2 * p + 1], h, &kL);
    if (!(kL > 0)) return;
    for (int f = am->lsadr[i]; f < am->lsadr[i + 1]; f++) {
      if (!avbd_item_slot_new_in(am, i, f, k)) continue;
      real J[6] = {0, 0, 0, 0, 0, 0};
      avbd_spat_length(am, m, am->spat[p], am->lslot[f], J, NULL);
      avbd_split_put(am, am->lslot[f], J, e * kL);
    }
  } else if (it->kind == RL_AVBD_LOOP_CROW && am->crow[it->id].spatial && !am->crow[it->id].joints) {
    for (int a = 0; a < n; a++)
      for (int c = 0; c < 6; c++) u[6 * list[a] + c] = 0;
    real w = avbd_crow_loop(am, m, d, it->id, u);
    if (!(w > 0)) return;
    for (int f = am->lsadr[i]; f < am->lsadr[i + 1]; f++)
      if (avbd_item_slot_new_in(am, i, f, k)) avbd_split_put(am, am->lslot[f], u + 6 * (size_t)am->lslot[f], e * w);
  }
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
 * carries it.  A row of weight 0 (an inactive limit, a path without force) is not kept.  The items and contact rows
 * over two or more bodies of the block that find no room stay on the diagonal blocks, majorized there
 * (avbd_split_put, avbd_tree_split_item).  Returns the number of rows. */
RL_HDFN static int avbd_tree_loops(rl_avbd *am, const rl_model *m, const rl_data *d, int k, const int *list, int n,
                                   real h) {
  int r = 0;
  size_t ld = 6 * ((size_t)am->nb + 1);
  real *scratch = am->tloop + ld * (size_t)am->nloop; /* Z's first column, free until avbd_tree_loop_step */
  for (int i = 0; i < am->nlitem; i++) {
    const rl_avbd_litem *it = am->litem + i;
    if (it->block != k || r + it->rows > am->nloop) {
      int nk = avbd_item_slots_in(am, i, k);
      if (nk >= 2) avbd_tree_split_item(am, m, d, i, k, (real)(nk - 1), list, n, scratch, h);
      continue;
    }
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
  for (int i = 0; i < am->ncon; i++) { /* contacts between two bodies of the block: loop rows while there is room */
    const rl_avbd_contact *c = am->con + i;
    if (c->a < 0 || am->tblock[c->a] != k || am->tblock[c->b] != k) continue;
    const rl_avbd_contact_val *v = avbd_contact_value(am, i);
    real f[3], wt[3];
    rl_avbd_contact_fw(c, v, am->prm.alpha, 0, 1, f, wt);
    for (int q = 0; q < 3; q++) {
      if (!(wt[q] > 0)) continue;
      real JA[6], JB[6];
      rl_avbd_contact_jac(c, v, q, 0, JA);
      rl_avbd_contact_jac(c, v, q, 1, JB);
      if (r == am->nloop) {
        avbd_split_put(am, c->a, JA, wt[q]);
        avbd_split_put(am, c->b, JB, wt[q]);
        continue;
      }
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
      for (int c = 0; c < 6; c++) ta += ua[6 * list[i] + c] * am->twork[AVBD_TW * list[i] + AVBD_TW_DZ + c];
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
  /* Z t = H'⁻¹(U t) by one more substitution (in double precision, where Z is stored in the build's), which also
     gives the tree rows' multipliers of the corrected step: those of the right side U t added (the solve is
     linear) */
  for (int i = 0; i < n; i++)
    for (int c = 0; c < 6; c++) {
      double x = 0;
      for (int a = 0; a < r; a++) x += (double)U[ld * (size_t)a + 6 * (size_t)list[i] + c] * t[a];
      am->tvec[6 * list[i] + c] = x;
    }
  avbd_tree_subst(am, list, n, am->tvec, 6, 0, 2);
  for (int i = 0; i < n; i++)
    for (int c = 0; c < 6; c++) am->twork[AVBD_TW * list[i] + AVBD_TW_DZ + c] -= am->tvec[6 * list[i] + c];
  return 1;
}

/* One articulation k as one block: every body's diagonal block and gradient (avbd_assemble, lower
 * triangle, without the rows of the joints solved as constraints), the couplings to the parents and those
 * joints' rows (avbd_tree_rows), the factor (avbd_tree_factor) and the step with the rows' multipliers
 * (avbd_tree_subst), the loop rows' correction (which corrects the multipliers too), then every body moved by
 * its clamped step. */
RL_HDFN static void avbd_tree_block(rl_avbd *am, const rl_model *m, const rl_data *d, int k, real h) {
  const int *list = am->tlist + am->tadr[k];
  int n = am->tadr[k + 1] - am->tadr[k], items = 0;
  for (int i = 0; i < am->nlitem; i++) items |= am->litem[i].block == k;
  for (int i = 0; i < am->ncon && !items && n > 1; i++)
    items = am->con[i].a >= 0 && am->tblock[am->con[i].a] == k && am->tblock[am->con[i].b] == k;
  am->tfac[k] = 0;
  if (n == 1 && !items && am->tsj[list[0]] < 0) { /* a lone free body: the block is its own */
    avbd_block_update(am, m, d, list[0], h);
    return;
  }
  double *W = am->twork;
  for (int i = 0; i < n; i++) { /* each tree hinge's coordinate terms, once for its three readers */
    int s = list[i], j = am->tjoint[s];
    real G = 0, kk = 0;
    if (j >= 0 && am->joint[j].kind == RL_AVBD_HINGE) {
      const rl_avbd_joint *jt = am->joint + j;
      avbd_coord_terms(am, m, d, jt, rl_avbd_unwrap(avbd_joint_value(am, j)->phi_raw, jt->phi), h, 0, &G, &kk);
    }
    W[AVBD_TW * s + AVBD_TW_GK] = G;
    W[AVBD_TW * s + AVBD_TW_GK + 1] = kk;
  }
  for (int i = 0; i < n; i++) {
    int s = list[i];
    double *w = W + AVBD_TW * s;
    real H[36], g[6];
    avbd_assemble(am, m, d, s, h, 0, W, H, g);
    RL_AVBD_UNROLL
    for (int a = 0; a < 6; a++) /* the lower triangle: the factor reads no other part of D */
      RL_AVBD_UNROLL
      for (int b = 0; b <= a; b++) w[AVBD_TW_D + 6 * a + b] = H[6 * a + b];
    for (int a = 0; a < 6; a++) w[AVBD_TW_G + a] = g[a];
    if (am->tparent[s] >= 0) avbd_tree_coupling(am, m, d, am->tjoint[s], h, w);
    w[AVBD_TW_R] = avbd_tree_rows(am, m, d, s, w);
  }
  int nl = items ? avbd_tree_loops(am, m, d, k, list, n, h) : 0;
  avbd_tree_factor(am, list, n);
  avbd_tree_subst(am, list, n, W + AVBD_TW_G, AVBD_TW, 1, 1);
  for (int i = 0; i < n; i++) {
    double *w = W + AVBD_TW * list[i];
    for (int a = 0; a < 6; a++) w[AVBD_TW_DZ + a] = -w[AVBD_TW_G + a];
  }
  if (nl > 0 && !avbd_tree_loop_step(am, list, n, nl)) am->guard[list[0]]++;
  am->tfac[k] = nl == 0;
  for (int i = 0; i < n; i++) {
    int s = list[i];
    real dz[6];
    for (int a = 0; a < 6; a++) dz[a] = (real)W[AVBD_TW * s + AVBD_TW_DZ + a];
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

/* States of a contact in the certificate's linear model (avbd_tree_contact_certify) */
enum { AVBD_CERT_OPEN = 0, AVBD_CERT_STICK = 1, AVBD_CERT_SLIDE = 2 };

/* The rows of block k's linear contact model: each contact between a body of the block and a static body (a < 0) that
 * presses or may press (λ_n < 0, or its ascent trial λ_n + ρ_n C̃_n < 0), its normal row and, with friction (μ > 0),
 * its two tangent rows: row p is am->cdrow[p] = 3i + r of contact i, its Jacobian on the block's body into J (6
 * doubles a row).  Returns the number of rows (at most AVBD_CERT_MAX: further contacts are left out). */
RL_HDFN static int avbd_cert_rows(rl_avbd *am, int k, double *J) {
  int nr = 0;
  for (int i = 0; i < am->ncon; i++) {
    const rl_avbd_contact *c = am->con + i;
    if (c->a >= 0 || am->tblock[c->b] != k) continue;
    const real *lam = am->clam + 3 * i;
    if (!(lam[0] < 0 || lam[0] + c->rho[0] * c->c[0] < 0)) continue;
    int rows = c->mu > 0 ? 3 : 1;
    if (nr + rows > AVBD_CERT_MAX) break;
    const rl_avbd_contact_val *v = avbd_contact_value(am, i);
    for (int r = 0; r < rows; r++) {
      real Jr[6];
      rl_avbd_contact_jac(c, v, r, 1, Jr);
      for (int a = 0; a < 6; a++) J[6 * nr + a] = Jr[a];
      am->cdrow[nr++] = 3 * i + r;
    }
  }
  return nr;
}

/* The symmetric A = J H⁻¹ Jᵀ over the nr rows (row stride AVBD_CERT_MAX), each row's J on body b of its contact, H
 * the block's factored matrix on the tree joints' constraint manifold: column q from one solve H⁻¹ J_qᵀ
 * (avbd_tree_subst, the right side nonzero on that body only), then A_pq = A_qp = J_p · (H⁻¹ J_qᵀ)_{b(p)}, p ≥ q. */
RL_HDFN static void avbd_cert_matrix(rl_avbd *am, const int *list, int n, const double *J, int nr, double *A) {
  double *v = am->tvec;
  for (int q = 0; q < nr; q++) {
    for (int i = 0; i < n; i++)
      for (int c = 0; c < 6; c++) v[6 * list[i] + c] = 0;
    int sq = am->con[am->cdrow[q] / 3].b;
    for (int c = 0; c < 6; c++) v[6 * sq + c] = J[6 * q + c];
    avbd_tree_subst(am, list, n, v, 6, 0, 0);
    for (int p = q; p < nr; p++) {
      const double *x = v + 6 * am->con[am->cdrow[p] / 3].b;
      double a = 0;
      for (int c = 0; c < 6; c++) a += J[6 * p + c] * x[c];
      A[AVBD_CERT_MAX * p + q] = A[AVBD_CERT_MAX * q + p] = a;
    }
  }
}

/* The pivot below which an unknown of the linear contact model counts as dependent on those before it: under
 * AVBD_CERT_DEP times the largest entry of its column.  The four corners of a flat foot on the floor give three
 * independent normal rows: the fourth's pivot is rounding (~1e-16 of its column in double, ~1e-13 from float poses),
 * and its multiplier is not determined by the poses. */
#define AVBD_CERT_DEP 1e-9

/* Of the solutions y = y₀ + N z of an eliminated system (avbd_cert_solve: the upper triangle in R's pivot rows piv[j],
 * the nd dependent columns dcol, y₀ with the dependent unknowns 0), the one with the least ‖l0 + y‖: N's column for
 * dependent unknown d is 1 at d, the pivoted unknowns before d from the triangle (the later ones 0), and
 *   NᵀN z = −Nᵀ(l0 + y₀)
 * (Cholesky; NᵀN is positive definite, each column having its own unit entry).  y₀ in y, replaced; R's leading
 * nd × nd block and N (nd columns of AVBD_CERT_MAX) are overwritten. */
RL_HDFN static void avbd_cert_least_forces(double *R, const int *piv, const int *dcol, int nd, int nu, const double *l0,
                                           double *N, double *y) {
  /* N's columns (column e at N + AVBD_CERT_MAX·e, nu entries), then G = NᵀN (lower) and g = −Nᵀ(l0 + y₀) */
  double g[AVBD_CERT_MAX];
  for (int e = 0; e < nd; e++) {
    double *n = N + AVBD_CERT_MAX * e;
    int d = dcol[e];
    for (int c = 0; c < nu; c++) n[c] = c == d;
    for (int j = d - 1; j >= 0; j--) {
      if (piv[j] < 0) continue;
      const double *P = R + AVBD_CERT_MAX * piv[j];
      double t = -P[d];
      for (int c = j + 1; c < d; c++) t -= P[c] * n[c];
      n[j] = t / P[j];
    }
  }
  /* NᵀN into R (row stride AVBD_CERT_MAX; the triangle is no longer needed) */
  for (int e = 0; e < nd; e++) {
    const double *ne = N + AVBD_CERT_MAX * e;
    double t = 0;
    for (int c = 0; c < nu; c++) t -= ne[c] * (l0[c] + y[c]);
    g[e] = t;
    for (int f = 0; f <= e; f++) {
      const double *nf = N + AVBD_CERT_MAX * f;
      double m = 0;
      for (int c = 0; c < nu; c++) m += ne[c] * nf[c];
      R[AVBD_CERT_MAX * e + f] = m;
    }
  }
  for (int e = 0; e < nd; e++) { /* Cholesky of NᵀN (positive definite: each column has its own unit entry) */
    double *Le = R + AVBD_CERT_MAX * e, x = Le[e];
    for (int f = 0; f < e; f++) x -= Le[f] * Le[f];
    Le[e] = sqrt(x);
    for (int i = e + 1; i < nd; i++) {
      double *Li = R + AVBD_CERT_MAX * i, t = Li[e];
      for (int f = 0; f < e; f++) t -= Li[f] * Le[f];
      Li[e] = t / Le[e];
    }
  }
  for (int e = 0; e < nd; e++) {
    for (int f = 0; f < e; f++) g[e] -= R[AVBD_CERT_MAX * e + f] * g[f];
    g[e] /= R[AVBD_CERT_MAX * e + e];
  }
  for (int e = nd - 1; e >= 0; e--) {
    for (int f = e + 1; f < nd; f++) g[e] -= R[AVBD_CERT_MAX * f + e] * g[f];
    g[e] /= R[AVBD_CERT_MAX * e + e];
  }
  for (int e = 0; e < nd; e++)
    for (int c = 0; c < nu; c++) y[c] += N[AVBD_CERT_MAX * e + c] * g[e];
}

/* Gaussian elimination of R y = b (nu × nu, row stride AVBD_CERT_MAX, in place) with row pivoting, and of all its
 * solutions the one with the least ‖l0 + y‖ (l0: the unknowns' multipliers before the step, so the least forces
 * after it: avbd_cert_least_forces).  Column j takes the remaining equation with the largest |entry|; a column whose best pivot is at most
 * AVBD_CERT_DEP times its largest original entry is dependent on the columns before it, and no equation is spent on it
 * (the equations left over at the end are consequences of the others, up to that tolerance: an inconsistent part of
 * the right side is dropped).  A dependent row's multiplier is not determined by the poses (three pressing corners of a box
 * foot fix its six rows' forces up to three combinations), and its C̃ need not vanish with the others' (two contacts
 * at the ends of a planar foot have the same tangent row but their own targets α·C⁰).  Holding such a multiplier
 * where it was kept a sliding wrist cap of ur5_like pressing where the contact had to open.  y overwrites b; N
 * (nu × nu) is scratch.  Returns the number of dependent unknowns. */
RL_HDFN static int avbd_cert_solve(double *R, double *b, const double *l0, int nu, double *N) {
  int piv[AVBD_CERT_MAX], dcol[AVBD_CERT_MAX], used = 0, nd = 0; /* piv[j]: the equation column j was solved from */
  double cmax[AVBD_CERT_MAX], y[AVBD_CERT_MAX];
  for (int j = 0; j < nu; j++) {
    cmax[j] = 0;
    for (int i = 0; i < nu; i++) cmax[j] = fmax(cmax[j], fabs(R[AVBD_CERT_MAX * i + j]));
  }
  for (int j = 0; j < nu; j++) {
    int best = -1;
    for (int i = used; i < nu; i++)
      if (best < 0 || fabs(R[AVBD_CERT_MAX * i + j]) > fabs(R[AVBD_CERT_MAX * best + j])) best = i;
    piv[j] = -1;
    if (best < 0 || !(fabs(R[AVBD_CERT_MAX * best + j]) > AVBD_CERT_DEP * cmax[j])) {
      dcol[nd++] = j;
      continue;
    }
    if (best != used) { /* the pivot equation to position `used` */
      for (int c = 0; c < nu; c++) {
        double t = R[AVBD_CERT_MAX * best + c];
        R[AVBD_CERT_MAX * best + c] = R[AVBD_CERT_MAX * used + c];
        R[AVBD_CERT_MAX * used + c] = t;
      }
      double t = b[best];
      b[best] = b[used];
      b[used] = t;
    }
    const double *P = R + AVBD_CERT_MAX * used;
    for (int i = used + 1; i < nu; i++) {
      double *Ri = R + AVBD_CERT_MAX * i, f = Ri[j] / P[j];
      if (f == 0) continue;
      for (int c = j; c < nu; c++) Ri[c] -= f * P[c];
      b[i] -= f * b[used];
    }
    piv[j] = used++;
  }
  for (int j = nu - 1; j >= 0; j--) { /* y₀: back substitution over the pivoted columns */
    y[j] = 0;
    if (piv[j] < 0) continue;
    const double *P = R + AVBD_CERT_MAX * piv[j];
    double t = b[piv[j]];
    for (int c = j + 1; c < nu; c++) t -= P[c] * y[c];
    y[j] = t / P[j];
  }
  if (nd > 0) avbd_cert_least_forces(R, piv, dcol, nd, nu, l0, N, y);
  for (int j = 0; j < nu; j++) b[j] = y[j];
  return nd;
}

/* The step Δλ of every row of the linear model in the contacts' states st (tangent direction th of a sliding
 * contact, 2 per contact): with w = C̃ − A Δλ the rows' values after the step (a force Δλ more along a row moves the
 * poses by −H⁻¹JᵀΔλ),
 *   open:  Δλ = −λ (no force);
 *   stick: w = 0 on its three rows (two-sided);
 *   slide: w_n = 0, the tangent force μ(−λ_n⁺) t̂:  Δλ_t = −μ t̂ (λ_n + Δλ_n) − λ_t,
 * one linear system in the unknowns (stick rows, sliding normals), solved with the least forces where it leaves
 * some free (avbd_cert_solve).  A: the rows' J H⁻¹ Jᵀ; R, N: scratch (AVBD_CERT_MAX² each).  Δλ into dl. */
RL_HDFN static int avbd_cert_model(const rl_avbd *am, const double *A, int nr, const int *st, const double *th,
                                   double *R, double *N, double *dl) {
  double known[AVBD_CERT_MAX], coef[AVBD_CERT_MAX], b[AVBD_CERT_MAX], l0[AVBD_CERT_MAX];
  int unk[AVBD_CERT_MAX], col[AVBD_CERT_MAX], nu = 0; /* row q's unknown column (its normal's when sliding), or −1 */
  for (int q = 0; q < nr; q++) {
    int i = am->cdrow[q] / 3, r = am->cdrow[q] % 3, p0 = q - r;
    const rl_avbd_contact *c = am->con + i;
    known[q] = coef[q] = 0;
    col[q] = -1;
    const real *lam = am->clam + 3 * i;
    if (st[p0] == AVBD_CERT_OPEN) known[q] = -lam[r];
    else if (st[p0] == AVBD_CERT_STICK || r == 0) {
      col[q] = nu;
      unk[nu++] = q;
      coef[q] = 1;
    } else { /* a sliding contact's tangent row, tied to its normal (row p0, whose unknown came first) */
      double t = th[2 * p0 + r - 1];
      col[q] = col[p0];
      coef[q] = -c->mu * t;
      known[q] = -c->mu * t * lam[0] - lam[r];
    }
  }
  for (int a = 0; a < nu; a++) { /* equations of the unknown rows: Σ_q A_uq (known_q + coef_q y_col(q)) = C̃_u */
    int u = unk[a];
    const double *Au = A + AVBD_CERT_MAX * u;
    double rhs = am->con[am->cdrow[u] / 3].c[am->cdrow[u] % 3];
    for (int v = 0; v < nu; v++) R[AVBD_CERT_MAX * a + v] = 0;
    for (int q = 0; q < nr; q++) {
      rhs -= Au[q] * known[q];
      if (col[q] >= 0) R[AVBD_CERT_MAX * a + col[q]] += Au[q] * coef[q];
    }
    b[a] = rhs;
  }
  for (int a = 0; a < nu; a++) l0[a] = am->clam[am->cdrow[unk[a]]];
  int nd = avbd_cert_solve(R, b, l0, nu, N);
  for (int q = 0; q < nr; q++) dl[q] = known[q] + (col[q] >= 0 ? coef[q] * b[col[q]] : 0);
  return nd;
}

/* The states of the contacts after a step dl of the linear model (λ⁺ = λ + Δλ, w = C̃ − A Δλ), each contact by its
 * first row p0 in st and th: a pressing contact whose λ⁺_n ≥ 0 opens, and so does one the step leaves with a gap
 * w_n > gap (a row dependent on others whose targets it cannot meet with them: pressing across a gap is not a
 * contact force; ur5_like's wrist cap held 1.5 N across 3.6e-10 m, its poses 3.8e-7 rad from the exact step); a sticking one whose ‖λ⁺_t‖ exceeds μ(−λ⁺_n)
 * slides along λ⁺_t; a sliding one sticks when its trial λ⁺_t + ρ_t w_t falls inside the disc μ(−λ⁺_n) and otherwise
 * slides along that trial; an open contact whose w_n < 0 (it would penetrate) presses, sticking.  Returns the number
 * of contacts whose state changed; *turn the largest change |Δt̂|₁ of a sliding direction. */
RL_HDFN static int avbd_cert_states(const rl_avbd *am, const double *A, int nr, const double *dl, double gap, int *st,
                                    double *th, double *turn) {
  int changed = 0;
  *turn = 0;
  for (int p0 = 0; p0 < nr; p0++) {
    if (am->cdrow[p0] % 3 != 0) continue;
    const rl_avbd_contact *c = am->con + am->cdrow[p0] / 3;
    int fr = c->mu > 0, s0 = st[p0];
    double w[3], lp[3];
    for (int r = 0; r < (fr ? 3 : 1); r++) {
      const double *Ap = A + AVBD_CERT_MAX * (p0 + r);
      w[r] = c->c[r];
      for (int q = 0; q < nr; q++) w[r] -= Ap[q] * dl[q];
      lp[r] = am->clam[am->cdrow[p0] + r] + dl[p0 + r];
    }
    if (s0 == AVBD_CERT_OPEN) {
      if (w[0] < 0) st[p0] = AVBD_CERT_STICK;
    } else if (!(lp[0] < 0) || w[0] > gap) st[p0] = AVBD_CERT_OPEN;
    else if (fr) {
      double rad = c->mu * -lp[0], t[2] = {lp[1], lp[2]};
      if (s0 == AVBD_CERT_SLIDE) {
        t[0] += c->rho[1] * w[1];
        t[1] += c->rho[2] * w[2];
      }
      double tn = sqrt(t[0] * t[0] + t[1] * t[1]);
      if (tn > rad * (1 + 1e-12) && tn > 0) {
        double u0 = t[0] / tn, u1 = t[1] / tn;
        if (s0 != AVBD_CERT_SLIDE) changed++;
        else *turn = fmax(*turn, fabs(u0 - th[2 * p0]) + fabs(u1 - th[2 * p0 + 1]));
        st[p0] = AVBD_CERT_SLIDE;
        th[2 * p0] = u0;
        th[2 * p0 + 1] = u1;
        continue;
      }
      st[p0] = AVBD_CERT_STICK;
    }
    changed += st[p0] != s0;
  }
  return changed;
}

/* Most passes of the linear model's active-set iteration per block (avbd_tree_contact_certify), and the
 * change of a sliding direction |Δt̂|₁ below which the states agree: the direction is a fixed point of the passes, not
 * a discrete state, and the sweeps that follow refine it */
#define AVBD_CERT_PASSES 8
#define AVBD_CERT_TURN   1e-3

/* The poses' move −H⁻¹Jᵀ Δλ that a change dl of the nr rows' multipliers (Jacobians J on the contacts' bodies) makes in
 * the block's linear model (H its factored matrix, avbd_tree_subst): the largest ‖δx‖ and ‖δθ‖ over its bodies
 * into mv[0], mv[1] (raised, not reset). */
RL_HDFN static void avbd_cert_move(rl_avbd *am, const int *list, int n, const double *J, const double *dl, int nr,
                                   double mv[2]) {
  double *v = am->tvec;
  for (int i = 0; i < n; i++)
    for (int c = 0; c < 6; c++) v[6 * list[i] + c] = 0;
  for (int p = 0; p < nr; p++) {
    int s = am->con[am->cdrow[p] / 3].b;
    for (int c = 0; c < 6; c++) v[6 * s + c] += J[6 * p + c] * dl[p];
  }
  avbd_tree_subst(am, list, n, v, 6, 0, 0);
  for (int i = 0; i < n; i++) {
    const double *x = v + 6 * list[i];
    mv[0] = fmax(mv[0], sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]));
    mv[1] = fmax(mv[1], sqrt(x[3] * x[3] + x[4] * x[4] + x[5] * x[5]));
  }
}

/* The certificate of a stop (RL_AVBD_STOP_CERTIFIED): for each block whose factor holds its whole matrix (am->tfac)
 * and whose contacts with static bodies carry or may carry load, the contact problem linearized at this sweep is
 * solved.  The augmented Lagrangian's dual function ψ(λ) = min_z L_ρ(z, λ) has gradient C̃(z(λ)) and Hessian
 * −J H⁻¹ Jᵀ (H the Hessian of L_ρ in z, the penalties ρJᵀJ included): after a change Δλ the rows' values are, to
 * first order, w = C̃ − A Δλ with A = J H⁻¹ Jᵀ, and the poses move by −H⁻¹JᵀΔλ.  The model's states (open, sticking,
 * sliding along t̂) start from the ascent's trial; its step in those states (avbd_cert_model) and the states
 * the step implies (avbd_cert_states) alternate until they agree (a primal–dual active-set iteration, at
 * most AVBD_CERT_PASSES passes; A from one factor, each pass one dense solve).  Where they agree, the move that
 * step makes (avbd_cert_move) is a distance of the iterate from the step's exact solution that the sweep
 * updates do not show: the ascent removes 1 − 1/(1 + ρσ) of a mode per sweep, σ an eigenvalue of J M̃⁻¹ Jᵀ (M̃ the
 * block's matrix without the rows), and load shared by nearly redundant contacts of a stiff chain moves at 1 − 1e-4
 * per sweep while the updates look converged (ur5_like lying on the floor: 4.6e-7 rad from the exact step after a
 * stop claiming 4e-8).  Blocks where the states do not agree give no figure (counted: the return value).  The
 * largest move into mv[0] (m), mv[1] (rad).  H is the factor of the block's last step, at the poses before it:
 * exact where the rows are linear.  The model only judges: taking its multipliers as the next iterate was tried and
 * made new false stops (gym_humanoidstandup, up to 4e3×), the tail estimate being blind to a jump followed by the
 * ascent's slow modes. */
RL_HDFN int avbd_tree_contact_certify(rl_avbd *am, real mv_out[2]) {
  double *A = am->cdual, *R = A + AVBD_CERT_MAX * AVBD_CERT_MAX, *N = R + AVBD_CERT_MAX * AVBD_CERT_MAX;
  double *J = N + AVBD_CERT_MAX * AVBD_CERT_MAX, *dl = J + 6 * AVBD_CERT_MAX, *th = dl + AVBD_CERT_MAX;
  double mv[2] = {0, 0};
  int st[AVBD_CERT_MAX], undecided = 0;
  /* a gap the poses resolve: 16ε·max(max_i ‖x_i‖∞, 1 m) */
  double xm = 1;
  for (int s = 0; s < am->nb; s++)
    for (int i = 0; i < 3; i++) xm = fmax(xm, fabs((double)am->pose[s].x[i]));
  double gap = 16 * RL_EPS * xm;
  for (int k = 0; k < am->ntree; k++) {
    if (!am->tfac[k]) continue;
    const int *list = am->tlist + am->tadr[k];
    int n = am->tadr[k + 1] - am->tadr[k], nr = avbd_cert_rows(am, k, J);
    if (nr == 0) continue;
    avbd_cert_matrix(am, list, n, J, nr, A);
    for (int p = 0; p < nr; p++) st[p] = AVBD_CERT_STICK;
    for (int p0 = 0; p0 < nr; p0++) { /* the states of the ascent's trial */
      if (am->cdrow[p0] % 3 != 0) continue;
      const rl_avbd_contact *c = am->con + am->cdrow[p0] / 3;
      const real *lam = am->clam + am->cdrow[p0];
      real fn = rl_avbd_proj_neg(lam[0] + c->rho[0] * c->c[0]);
      st[p0] = fn < 0 ? AVBD_CERT_STICK : AVBD_CERT_OPEN;
      if (fn < 0 && c->mu > 0) {
        double t[2] = {lam[1] + c->rho[1] * c->c[1], lam[2] + c->rho[2] * c->c[2]};
        double tn = sqrt(t[0] * t[0] + t[1] * t[1]);
        if (tn > c->mu * -fn && tn > 0) {
          st[p0] = AVBD_CERT_SLIDE;
          th[2 * p0] = t[0] / tn;
          th[2 * p0 + 1] = t[1] / tn;
        }
      }
    }
    int agreed = 0;
    for (int pass = 0; pass < AVBD_CERT_PASSES && !agreed; pass++) {
      double turn;
      avbd_cert_model(am, A, nr, st, th, R, N, dl);
      agreed = avbd_cert_states(am, A, nr, dl, gap, st, th, &turn) == 0 && turn <= AVBD_CERT_TURN;
    }
    if (!agreed) {
      undecided++;
      continue;
    }
    avbd_cert_move(am, list, n, J, dl, nr, mv);
  }
  mv_out[0] = (real)mv[0];
  mv_out[1] = (real)mv[1];
  return undecided;
}
