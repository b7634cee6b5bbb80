/* avbd_compound.c — a body with several joints to its parent (any sequence of hinges, slides and balls, as
 * MuJoCo composes them) as one joint between the two bodies (rl_avbd_compound): its check and geometry at
 * build, the coordinates of a relative pose (Gauss–Newton on the joint's forward map), its 6 − dof rows
 * and their Jacobians, the coordinate gradients that carry the joint-space terms, and the mapping to and
 * from MuJoCo's qpos/qvel.
 *
 * Frames.  F0 (zero frame, fixed to A) and the body frame F of B; E = F0⁻¹F.  T(q) = T_1(q_1)···T_n(q_n)
 * (rl_avbd_compound).  A twist of E is ξ = (v, ω) in F's own frame (v: velocity of F's origin), and
 * E = T(q)·Exp(e) defines the residual e = (R_Tᵀ(p_E − p_T), Log(R_Tᵀ R_E)).  The motion subspace S(q)
 * (6 × ndof, columns in F's frame) is MuJoCo's dof layout: hinge (ω × (o − c), ω) with ω its axis and c
 * its anchor after the components before it; slide (a, 0); ball: F's own axes e_i about its anchor.
 *
 * Coordinates: q ← q + (SᵀS)⁻¹Sᵀe until the step is below rounding (ball: q_k ← q_k ⊗ Exp(R_after δ_k),
 * R_after the rotation of the components after it).  On the manifold e = 0 and q is exact.
 *
 * Rows (wrenches w = (f, τ) in F's frame with w·S = 0, so C = w·e vanishes exactly on the manifold):
 *   angle rows (3 − nrot): pure torques τ ⊥ every rotational axis (one hinge: its two ⊥ vectors; two
 *     hinges: ω₁ × ω₂; no rotation: the axes of F0), C in rad;
 *   length rows (3 − nslide): unit forces f ⊥ every slide direction (one slide: its two ⊥ vectors; two:
 *     v₁ × v₂; none: the axes of F0) with the torque τ = Σ c_l ω_l that makes w·S = 0 on the rotational
 *     columns (Gram system Σ_l (ω_k·ω_l) c_l = −f·v_k), C in m.
 * With o the body origin of B, a row's Jacobian on the COM increments (δx, δθ) (world) is
 *   J_B = [f_w, (o − x_B) × f_w + τ_w],   J_A = −[f_w, (o − x_A) × f_w + τ_w],   (f_w, τ_w) = R_F (f, τ)
 * (ξ = R_Fᵀ(δx_B + δθ_B × (o − x_B) − δx_A − δθ_A × (o − x_A), δθ_B − δθ_A)), and a coordinate's
 * gradient has the same form with (f, τ) a row of (SᵀS)⁻¹Sᵀ. */
#include <string.h>
#include "avbd_internal.h"

/* F0 and F of B at the poses A, B (COM frames): rotations (quaternion), origins (world) */
RL_HDFN static void cmp_frames(const rl_avbd_compound *c, const rl_avbd_pose *A, const rl_avbd_pose *B, real Q0[4], real o0[3],
                       real QF[4], real oF[3]) {
  real t[3];
  rl_q_mul(Q0, A->q, c->xq);
  rl_q_normalize(Q0);
  rl_m3_mulv(t, A->R, c->xp);
  rl_v3_add(o0, A->x, t);
  rl_q_mul(QF, B->q, c->yq);
  rl_q_normalize(QF);
  rl_m3_mulv(t, B->R, c->yp);
  rl_v3_add(oF, B->x, t);
}

/* Forward map T(q) = (Q, p) in F0 and the motion subspace S (S[d] = (v, ω) of dof d in T's frame); Qa[k]:
 * the rotation right after component k (for the ball update). */
RL_HDFN static void cmp_fk(const rl_avbd_compound *c, const real q[][4], real Q[4], real p[3], real S[6][6],
                   real Qa[RL_AVBD_MAXCOMP][4]) {
  real anchor[RL_AVBD_MAXCOMP][3], ax[RL_AVBD_MAXCOMP][3], R[9], t[3];
  rl_q_identity(Q);
  rl_v3_zero(p);
  for (int k = 0; k < c->n; k++) {
    rl_q_rotate(t, Q, c->pos[k]);
    rl_v3_add(anchor[k], p, t);
    rl_q_rotate(ax[k], Q, c->axis[k]);
    if (c->type[k] == RL_JNT_SLIDE) rl_v3_addscl(p, ax[k], q[k][0] - c->qpos0[k]);
    else {
      real ql[4];
      if (c->type[k] == RL_JNT_BALL) rl_q_copy(ql, q[k]);
      else rl_q_from_axis_angle(ql, c->axis[k], q[k][0] - c->qpos0[k]);
      rl_q_normalize(ql);
      rl_q_mul(Q, Q, ql);
      rl_q_normalize(Q);
      rl_q_rotate(t, Q, c->pos[k]);
      rl_v3_sub(p, anchor[k], t);
    }
    rl_q_copy(Qa[k], Q);
  }
  rl_q_to_mat(R, Q);
  for (int k = 0; k < c->n; k++) {
    real *s = S[c->dof[k]], w[3], dv[3], o[3];
    rl_v3_sub(o, p, anchor[k]);
    switch (c->type[k]) {
    case RL_JNT_SLIDE:
      rl_m3_tmulv(s, R, ax[k]);
      rl_v3_zero(s + 3);
      break;
    case RL_JNT_HINGE:
      rl_v3_cross(dv, ax[k], o);
      rl_m3_tmulv(s, R, dv);
      rl_m3_tmulv(s + 3, R, ax[k]);
      break;
    default: /* ball: F's axes e_i about the anchor */
      rl_m3_tmulv(w, R, o);
      for (int i = 0; i < 3; i++) {
        real e[3] = {0, 0, 0};
        e[i] = 1;
        rl_v3_cross(S[c->dof[k] + i], e, w);
        rl_v3_copy(S[c->dof[k] + i] + 3, e);
      }
    }
  }
}

/* Cholesky factor A = L Lᵀ of an n×n SPD matrix in place (lower triangle; a pivot below tiny is floored) */
RL_HDFN static void cmp_chol_factor(real *A, int n) {
  for (int j = 0; j < n; j++) {
    real s = A[n * j + j];
    for (int k = 0; k < j; k++) s -= A[n * j + k] * A[n * j + k];
    s = s > RL_TINY ? s : RL_TINY;
    A[n * j + j] = rl_sqrt(s);
    for (int i = j + 1; i < n; i++) {
      real t = A[n * i + j];
      for (int k = 0; k < j; k++) t -= A[n * i + k] * A[n * j + k];
      A[n * i + j] = t / A[n * j + j];
    }
  }
}

/* x ← L⁻ᵀ L⁻¹ x with the factor of cmp_chol_factor (forward, then back substitution) */
RL_HDFN static void cmp_chol_subst(const real *A, real *x, int n) {
  for (int i = 0; i < n; i++) {
    real t = x[i];
    for (int k = 0; k < i; k++) t -= A[n * i + k] * x[k];
    x[i] = t / A[n * i + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    real t = x[i];
    for (int k = i + 1; k < n; k++) t -= A[n * k + i] * x[k];
    x[i] = t / A[n * i + i];
  }
}

/* cmp_chol_subst on the six columns of X (n × 6) at once: the same operations on each column, in the same
 * order, the columns innermost:
 *   X_i ← (X_i − Σ_{k<i} L_ik X_k) / L_ii (i ascending),  X_i ← (X_i − Σ_{k>i} L_ki X_k) / L_ii (descending) */
RL_HDFN static void cmp_chol_subst6(const real *A, real X[6][6], int n) {
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < i; k++)
      for (int c = 0; c < 6; c++) X[i][c] -= A[n * i + k] * X[k][c];
    for (int c = 0; c < 6; c++) X[i][c] /= A[n * i + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    for (int k = i + 1; k < n; k++)
      for (int c = 0; c < 6; c++) X[i][c] -= A[n * k + i] * X[k][c];
    for (int c = 0; c < 6; c++) X[i][c] /= A[n * i + i];
  }
}

/* Cholesky solve of the n×n SPD system A x = b (A overwritten by its factor) */
RL_HDFN static void cmp_chol(real *A, real *x, int n) {
  cmp_chol_factor(A, n);
  cmp_chol_subst(A, x, n);
}

/* P = (SᵀS)⁻¹Sᵀ (ndof × 6): P[d] the least-squares coordinate rate of a twist */
RL_HDFN static void cmp_pinv(int nd, const real S[6][6], real P[6][6]) {
  real G[36];
  for (int a = 0; a < nd; a++)
    for (int b = 0; b < nd; b++) {
      real s = 0;
      for (int i = 0; i < 6; i++) s += S[a][i] * S[b][i];
      G[nd * a + b] = s;
    }
  cmp_chol_factor(G, nd); /* one factor for the six right sides, the columns of Sᵀ */
  for (int a = 0; a < nd; a++)
    for (int i = 0; i < 6; i++) P[a][i] = S[a][i];
  cmp_chol_subst6(G, P, nd);
}

/* e = (R_Tᵀ(p_E − p_T), Log(Q_T⁻¹ Q_E)) */
RL_HDFN static void cmp_residual(const real QT[4], const real pT[3], const real QE[4], const real pE[3], real e[6]) {
  real t[3], c[4];
  rl_v3_sub(t, pE, pT);
  rl_q_conj(c, QT);
  rl_q_rotate(e, c, t);
  rl_q_sub_local(e + 3, QE, QT);
}

/* apply the coordinate step δ (per dof) to q: hinge, slide q += δ; ball q_k ← q_k ⊗ Exp(R_after δ_k) with
   R_after = R(Qa_k)ᵀ R(Q) (F's axes seen from the frame right after the ball) */
RL_HDFN static void cmp_apply(const rl_avbd_compound *c, real q[][4], const real *dlt, const real Q[4],
                      real Qa[RL_AVBD_MAXCOMP][4]) {
  for (int k = 0; k < c->n; k++) {
    const real *dk = dlt + c->dof[k];
    if (c->type[k] != RL_JNT_BALL) {
      q[k][0] += dk[0];
      continue;
    }
    real r[4], ca[4], w[3], e[4];
    rl_q_conj(ca, Qa[k]);
    rl_q_mul(r, ca, Q);
    rl_q_rotate(w, r, dk);
    rl_so3_exp_quat(e, w);
    rl_q_mul(q[k], q[k], e);
    rl_q_normalize(q[k]);
  }
}

/* Coordinates of the relative pose (QE, pE) from the guess in q (in place), with T's rotation Q, the
 * motion subspace S and the residual e at the result.  Gauss–Newton, at most 12 steps, until a step is
 * below 8ε(1 + |q|). */
RL_HDFN static void cmp_solve(const rl_avbd_compound *c, real q[][4], const real QE[4], const real pE[3], real Q[4],
                      real S[6][6], real e[6]) {
  real p[3], Qa[RL_AVBD_MAXCOMP][4];
  int nd = c->ndof;
  for (int it = 0;; it++) {
    cmp_fk(c, q, Q, p, S, Qa);
    cmp_residual(Q, p, QE, pE, e);
    if (it == 12 || nd == 0) return;
    real G[36], x[6], big = 0;
    for (int a = 0; a < nd; a++) {
      x[a] = 0;
      for (int i = 0; i < 6; i++) x[a] += S[a][i] * e[i];
      for (int b = 0; b < nd; b++) {
        real s = 0;
        for (int i = 0; i < 6; i++) s += S[a][i] * S[b][i];
        G[nd * a + b] = s;
      }
    }
    cmp_chol(G, x, nd);
    for (int a = 0; a < nd; a++) big = rl_avbd_max(big, rl_fabs(x[a]));
    cmp_apply(c, q, x, Q, Qa);
    real sc = 1;
    for (int k = 0; k < c->n; k++)
      if (c->type[k] != RL_JNT_BALL) sc = rl_avbd_max(sc, 1 + rl_fabs(q[k][0]));
    if (big <= 8 * RL_EPS * sc) {
      cmp_fk(c, q, Q, p, S, Qa);
      cmp_residual(Q, p, QE, pE, e);
      return;
    }
  }
}

/* Row wrenches (f, τ) in F's frame (rl_avbd_compound: length rows then angle rows) from S and the
   coordinates q at the solution (the rotation before a single hinge or slide turns its ⊥ vectors) */
RL_HDFN static void cmp_rows_local(const rl_avbd_compound *c, const real q[][4], const real S[6][6], const real Q[4],
                           real w[6][6]) {
  real cq[4], f[3][3], rot[3][6];
  int nf = 0, nr = 0, kr = -1, ks = -1, sl[3], nsl = 0;
  rl_q_conj(cq, Q);
  for (int k = 0; k < c->n; k++) {
    if (c->type[k] == RL_JNT_SLIDE) {
      ks = k;
      sl[nsl++] = c->dof[k];
    } else {
      kr = k;
      for (int i = 0; i < (c->type[k] == RL_JNT_BALL ? 3 : 1); i++)
        memcpy(rot[nr++], S[c->dof[k] + i], sizeof(real) * 6);
    }
  }
  /* forces ⊥ the slide directions */
  if (c->nslide == 0) {
    for (int i = 0; i < 3; i++) {
      real e[3] = {0, 0, 0};
      e[i] = 1;
      rl_q_rotate(f[nf++], cq, e);
    }
  } else if (c->nslide == 1) {
    real Qb[4] = {1, 0, 0, 0}, r[4];
    /* the ⊥ vectors in the frame of the slide: F0 rotated by the rotations before it */
    for (int k = 0; k < ks; k++) {
      real ql[4];
      if (c->type[k] == RL_JNT_SLIDE) continue;
      if (c->type[k] == RL_JNT_BALL) rl_q_copy(ql, q[k]);
      else rl_q_from_axis_angle(ql, c->axis[k], q[k][0] - c->qpos0[k]);
      rl_q_normalize(ql);
      rl_q_mul(Qb, Qb, ql);
    }
    rl_q_mul(r, cq, Qb);
    for (int i = 0; i < 2; i++) rl_q_rotate(f[nf++], r, c->perp[ks][i]);
  } else if (c->nslide == 2) {
    rl_v3_cross(f[0], S[sl[0]], S[sl[1]]);
    rl_v3_normalize(f[0]);
    nf = 1;
  }
  real G[9];
  for (int a = 0; a < nr; a++)
    for (int b = 0; b < nr; b++) G[nr * a + b] = rl_v3_dot(rot[a] + 3, rot[b] + 3);
  if (nr > 0) cmp_chol_factor(G, nr); /* one factor for the nf right sides */
  for (int i = 0; i < nf; i++) {
    real x[3];
    for (int a = 0; a < nr; a++) x[a] = -rl_v3_dot(f[i], rot[a]);
    if (nr > 0) cmp_chol_subst(G, x, nr);
    rl_v3_copy(w[i], f[i]);
    rl_v3_zero(w[i] + 3);
    for (int a = 0; a < nr; a++) rl_v3_addscl(w[i] + 3, rot[a] + 3, x[a]);
  }
  /* torques ⊥ the rotational axes */
  real *t = NULL;
  int n = nf;
  if (c->nrot == 0) {
    for (int i = 0; i < 3; i++, n++) {
      real e[3] = {0, 0, 0};
      e[i] = 1;
      rl_v3_zero(w[n]);
      rl_q_rotate(w[n] + 3, cq, e);
    }
  } else if (c->nrot == 1) {
    /* the hinge's ⊥ vectors in the frame before it (fixed to A's side, like a single hinge's axis rows) */
    real Qb[4] = {1, 0, 0, 0}, r[4];
    for (int k = 0; k < kr; k++) {
      real ql[4];
      if (c->type[k] == RL_JNT_SLIDE) continue;
      rl_q_from_axis_angle(ql, c->axis[k], q[k][0] - c->qpos0[k]);
      rl_q_mul(Qb, Qb, ql);
    }
    rl_q_mul(r, cq, Qb);
    for (int i = 0; i < 2; i++, n++) {
      rl_v3_zero(w[n]);
      rl_q_rotate(w[n] + 3, r, c->perp[kr][i]);
    }
  } else if (c->nrot == 2) {
    t = w[n];
    rl_v3_zero(t);
    rl_v3_cross(t + 3, rot[0] + 3, rot[1] + 3);
    rl_v3_normalize(t + 3);
  }
}

/* v = the joint at the poses A, B: coordinates from the guess c->q, rows C = w·e with their world
   wrenches, coordinate gradients, lever arms */
RL_HDFN void avbd_compound_eval(const rl_avbd_compound *c, const rl_avbd_pose *A, const rl_avbd_pose *B,
                        rl_avbd_compound_val *v) {
  real Q0[4], o0[3], QF[4], oF[3], QE[4], pE[3], c0[4], t[3], Q[4], S[6][6], e[6], P[6][6], w[6][6], RF[9];
  cmp_frames(c, A, B, Q0, o0, QF, oF);
  rl_q_conj(c0, Q0);
  rl_q_mul(QE, c0, QF);
  rl_q_normalize(QE);
  rl_v3_sub(t, oF, o0);
  rl_q_rotate(pE, c0, t);
  memcpy(v->q, c->q, sizeof v->q);
  cmp_solve(c, v->q, QE, pE, Q, S, e);
  /* rows in F's frame (the ⊥ vectors of a single hinge/slide use the coordinates just found) */
  cmp_rows_local(c, (const real(*)[4])v->q, S, Q, w);
  rl_q_to_mat(RF, QF);
  int nrow = c->nlin + c->nang;
  for (int r = 0; r < nrow; r++) {
    v->C[r] = 0;
    for (int i = 0; i < 6; i++) v->C[r] += w[r][i] * e[i];
    rl_m3_mulv(v->w[r], RF, w[r]);
    rl_m3_mulv(v->w[r] + 3, RF, w[r] + 3);
  }
  if (c->ndof > 0) cmp_pinv(c->ndof, S, P);
  for (int dd = 0; dd < c->ndof; dd++) {
    rl_m3_mulv(v->pg[dd], RF, P[dd]);
    rl_m3_mulv(v->pg[dd] + 3, RF, P[dd] + 3);
  }
  rl_v3_sub(v->rA, oF, A->x);
  rl_v3_sub(v->rB, oF, B->x);
}

/* Side `side`'s Jacobian row of a wrench w (world (f, τ)): J_B = [f, r_B × f + τ], J_A = −[f, r_A × f + τ] */
RL_HDFN void avbd_compound_jac(const rl_avbd_compound_val *v, const real w[6], int side, real J[6]) {
  real x[3];
  rl_v3_cross(x, side ? v->rB : v->rA, w);
  real sg = side ? 1 : -1;
  for (int i = 0; i < 3; i++) {
    J[i] = sg * w[i];
    J[3 + i] = sg * (x[i] + w[3 + i]);
  }
}

/* rate of a wrench-form gradient w from the body velocities (v_com, ω) of A and B: J_A·vel_A + J_B·vel_B */
RL_HDFN real avbd_compound_rate(const rl_avbd *am, const rl_avbd_joint *jt, const rl_avbd_compound_val *v, const real w[6]) {
  real J[6], r = 0;
  avbd_compound_jac(v, w, 1, J);
  for (int i = 0; i < 6; i++) r += J[i] * am->vel[6 * jt->b + i];
  if (jt->a >= 0) {
    avbd_compound_jac(v, w, 0, J);
    for (int i = 0; i < 6; i++) r += J[i] * am->vel[6 * jt->a + i];
  }
  return r;
}

/* ------------------------------------------------------------------------ build */

/* dofs, rotational dofs and slides of body b's joints; 0 and a one-line err when AVBD cannot represent
   them (a free joint among others; more than 3 rotational or 3 sliding dofs; dependent axes at qpos0) */
int avbd_compound_check(const rl_model *m, int b, int *ndof, int *nrow, char *err, int errlen) {
  int j0 = m->body_jntadr[b], jn = m->body_jntnum[b], nrot = 0, nsl = 0, nscalar = 0;
  const char *name = rl_model_name(m, m->name_bodyadr[b]);
  char list[256] = "";
  for (int j = j0; j < j0 + jn; j++) {
    size_t L = strlen(list);
    snprintf(list + L, sizeof list - L, "%s'%s'", j > j0 ? ", " : "", rl_model_name(m, m->name_jntadr[j]));
  }
  for (int j = j0; j < j0 + jn; j++) {
    int t = m->jnt_type[j];
    if (t == RL_JNT_FREE) {
      snprintf(err, (size_t)errlen, "avbd: body '%s' combines a free joint with other joints (%s)", name, list);
      return 0;
    }
    if (t == RL_JNT_BALL) nrot += 3;
    else if (t == RL_JNT_HINGE) nrot++, nscalar++;
    else nsl++, nscalar++;
  }
  if (nrot > 3 || nsl > 3) {
    snprintf(err, (size_t)errlen,
             "avbd: body '%s' has %d rotational and %d sliding dofs to its parent (%s): more than 3 of a kind do "
             "not determine the relative pose",
             name, nrot, nsl, list);
    return 0;
  }
  /* axes at qpos0 (each in the frame before it): rotational axes and slide directions independent */
  real Q[4] = {1, 0, 0, 0}, ra[3][3], sa[3][3];
  int nr = 0, ns = 0;
  for (int j = j0; j < j0 + jn; j++) {
    const real *a = m->jnt_axis + 3 * j;
    if (m->jnt_type[j] == RL_JNT_SLIDE) rl_q_rotate(sa[ns++], Q, a);
    else if (m->jnt_type[j] == RL_JNT_HINGE) rl_q_rotate(ra[nr++], Q, a);
    else {
      for (int i = 0; i < 3; i++) {
        real e[3] = {0, 0, 0};
        e[i] = 1;
        rl_q_rotate(ra[nr++], Q, e);
      }
      real ql[4];
      rl_q_copy(ql, m->qpos0 + m->jnt_qposadr[j]);
      rl_q_normalize(ql);
      rl_q_mul(Q, Q, ql);
    }
  }
  real dr = nr == 1 ? 1 : 0, ds = ns == 1 ? 1 : 0, c[3];
  if (nr == 2) rl_v3_cross(c, ra[0], ra[1]), dr = rl_v3_norm(c);
  if (nr == 3) rl_v3_cross(c, ra[0], ra[1]), dr = rl_fabs(rl_v3_dot(c, ra[2]));
  if (ns == 2) rl_v3_cross(c, sa[0], sa[1]), ds = rl_v3_norm(c);
  if (ns == 3) rl_v3_cross(c, sa[0], sa[1]), ds = rl_fabs(rl_v3_dot(c, sa[2]));
  if ((nr > 0 && dr < (real)1e-6) || (ns > 0 && ds < (real)1e-6)) {
    snprintf(err, (size_t)errlen,
             "avbd: body '%s': the %s axes of its joints (%s) are dependent, so the coordinates do not determine "
             "the relative pose",
             name, (nr > 0 && dr < (real)1e-6) ? "rotational" : "slide", list);
    return 0;
  }
  *ndof = nrot + nsl;
  *nrow = 6 - (nrot + nsl) + 3 * nscalar;
  return 1;
}

/* Geometry and rows of the compound joint jt (body b, parent slot jt->a) from the kinematics d at qpos0:
   F0 = F(qpos0)·T(qpos0)⁻¹; rows: nlin length, nang angle rows, then per hinge/slide component its limit
   lo, hi and dry-friction rows. */
RL_HDFN void avbd_compound_init(rl_avbd *am, const rl_model *m, const rl_data *d, rl_avbd_joint *jt, rl_avbd_compound *c, int b,
                        int *rowtop) {
  memset(c, 0, sizeof *c);
  int j0 = m->body_jntadr[b];
  c->n = m->body_jntnum[b];
  for (int k = 0, dof = 0; k < c->n; k++) {
    int j = j0 + k;
    c->type[k] = m->jnt_type[j];
    c->jnt[k] = j;
    c->dof[k] = dof;
    dof += c->type[k] == RL_JNT_BALL ? 3 : 1;
    rl_v3_copy(c->axis[k], m->jnt_axis + 3 * j);
    if (c->type[k] == RL_JNT_BALL) c->axis[k][0] = 1, c->axis[k][1] = c->axis[k][2] = 0;
    rl_v3_normalize(c->axis[k]);
    rl_v3_copy(c->pos[k], m->jnt_pos + 3 * j);
    avbd_perp(c->perp[k][0], c->perp[k][1], c->axis[k]);
    int qa = m->jnt_qposadr[j];
    if (c->type[k] == RL_JNT_BALL) {
      rl_q_copy(c->q[k], m->qpos0 + qa);
      c->nrot += 3;
    } else {
      c->qpos0[k] = m->qpos0[qa];
      c->q[k][0] = m->qpos0[qa];
      if (c->type[k] == RL_JNT_HINGE) c->nrot++;
      else c->nslide++;
    }
    c->ndof = dof;
  }
  c->nlin = 3 - c->nslide;
  c->nang = 3 - c->nrot;
  /* frames at qpos0: F = the body frame, F0 = F·T(qpos0)⁻¹ */
  rl_avbd_pose A = avbd_world, B;
  if (jt->a >= 0) {
    int ba = am->body[jt->a];
    rl_v3_copy(A.x, d->xipos + 3 * ba);
    rl_q_mul(A.q, d->xquat + 4 * ba, m->body_iquat + 4 * ba);
    rl_avbd_pose_sync(&A);
  }
  rl_v3_copy(B.x, d->xipos + 3 * b);
  rl_q_mul(B.q, d->xquat + 4 * b, m->body_iquat + 4 * b);
  rl_avbd_pose_sync(&B);
  real QT[4], pT[3], S[6][6], Qa[RL_AVBD_MAXCOMP][4], QF0[4], cT[4], t[3], oF0[3], cA[4], cB[4];
  cmp_fk(c, (const real(*)[4])c->q, QT, pT, S, Qa);
  rl_q_conj(cT, QT);
  rl_q_mul(QF0, d->xquat + 4 * b, cT);
  rl_q_normalize(QF0);
  rl_q_rotate(t, QF0, pT);
  rl_v3_sub(oF0, d->xpos + 3 * b, t);
  rl_q_conj(cA, A.q);
  rl_q_mul(c->xq, cA, QF0);
  rl_q_normalize(c->xq);
  rl_v3_sub(t, oF0, A.x);
  rl_m3_tmulv(c->xp, A.R, t);
  rl_q_conj(cB, B.q);
  rl_q_mul(c->yq, cB, d->xquat + 4 * b);
  rl_q_normalize(c->yq);
  rl_v3_sub(t, d->xpos + 3 * b, B.x);
  rl_m3_tmulv(c->yp, B.R, t);
  /* rows */
  jt->row = *rowtop;
  jt->neq = c->nlin + c->nang;
  jt->lo_row = jt->hi_row = jt->dry_row = -1;
  int r = jt->row;
  for (int i = 0; i < jt->neq; i++) am->row[r++].kind = i < c->nlin ? RL_AVBD_ROW_LIN : RL_AVBD_ROW_ANG;
  for (int k = 0; k < c->n; k++) {
    rl_avbd_joint *s = c->sub + k;
    memset(s, 0, sizeof *s);
    s->cmp = -1;
    s->eq = -1;
    s->act = -1;
    s->a = jt->a;
    s->b = jt->b;
    s->jnt = c->jnt[k];
    s->lo_row = s->hi_row = s->dry_row = -1;
    if (c->type[k] == RL_JNT_BALL) {
      s->kind = RL_AVBD_BALL;
      continue;
    }
    int j = c->jnt[k], dof = m->jnt_dofadr[j];
    s->kind = c->type[k] == RL_JNT_HINGE ? RL_AVBD_HINGE : RL_AVBD_SLIDE;
    s->qpos0 = c->qpos0[k];
    s->range[0] = m->jnt_range[2 * j];
    s->range[1] = m->jnt_range[2 * j + 1];
    s->armature = m->dof_armature[dof];
    s->damping = m->dof_damping[dof];
    s->frictionloss = m->dof_frictionloss[dof];
    s->stiffness = m->jnt_stiffness[j];
    s->spring = m->qpos_spring[m->jnt_qposadr[j]];
    for (int u = 0; u < m->nu; u++)
      if (avbd_joint_trn(m, u, j)) {
        if (s->act < 0) s->act = u;
        s->act_end = u + 1;
      }
    s->phi = s->phi_n = c->q[k][0];
    s->lo_row = r;
    s->hi_row = r + 1;
    s->dry_row = r + 2;
    am->row[r].kind = RL_AVBD_ROW_LIMLO;
    am->row[r + 1].kind = RL_AVBD_ROW_LIMHI;
    am->row[r + 2].kind = RL_AVBD_ROW_DRY;
    r += 3;
  }
  jt->nrow = r - jt->row;
  *rowtop = r;
}

/* ------------------------------------------------------- generalized ↔ maximal */

/* coordinates from d->qpos (the guess of the next evaluation) and the components' φ */
RL_HDFN void avbd_compound_from_qpos(rl_avbd_compound *c, const rl_model *m, const rl_data *d) {
  for (int k = 0; k < c->n; k++) {
    int qa = m->jnt_qposadr[c->jnt[k]];
    if (c->type[k] == RL_JNT_BALL) {
      rl_q_copy(c->q[k], d->qpos + qa);
      rl_q_normalize(c->q[k]);
    } else {
      c->q[k][0] = d->qpos[qa];
      c->sub[k].phi = d->qpos[qa];
    }
  }
}

/* qpos and qvel of jt's components from the poses and velocities: the coordinates (avbd_compound_eval),
   a ball's quaternion sign kept nearest d->qpos; qvel = (SᵀS)⁻¹Sᵀ ξ of the relative twist ξ */
RL_HDFN void avbd_compound_to_generalized(const rl_avbd *am, const rl_model *m, rl_data *d, const rl_avbd_joint *jt) {
  const rl_avbd_compound *c = am->cmp + jt->cmp;
  rl_avbd_compound_val v;
  avbd_compound_eval(c, avbd_pose_of(am, jt->a), avbd_pose_of(am, jt->b), &v);
  for (int k = 0; k < c->n; k++) {
    int j = c->jnt[k], qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
    if (c->type[k] == RL_JNT_BALL) {
      real *q = d->qpos + qa, s = 1;
      if (v.q[k][0] * q[0] + v.q[k][1] * q[1] + v.q[k][2] * q[2] + v.q[k][3] * q[3] < 0) s = -1;
      for (int i = 0; i < 4; i++) q[i] = s * v.q[k][i];
      for (int i = 0; i < 3; i++) d->qvel[da + i] = avbd_compound_rate(am, jt, &v, v.pg[c->dof[k] + i]);
    } else {
      d->qpos[qa] = v.q[k][0];
      d->qvel[da] = avbd_compound_rate(am, jt, &v, v.pg[c->dof[k]]);
    }
  }
}
