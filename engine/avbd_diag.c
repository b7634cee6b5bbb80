/* avbd_diag.c — what AVBD reports after a step: the diagnostics and KKT residuals of the step's
 * problem (rl_avbd_stat) and the joint-space loads of every joint (rl_avbd_load). */
#include <string.h>
#include "avbd_internal.h"

/* ------------------------------------------------------------------ diagnostics */

/* primal residual r of one row into kkt_primal and its length (m) or angle (rad) part:
 * kkt_primal = max(kkt_primal_lin, kkt_primal_ang) */
RL_HDFN static void avbd_primal_add(rl_avbd_stat *st, int angular, real r) {
  if (angular) st->kkt_primal_ang = rl_avbd_max(st->kkt_primal_ang, r);
  else st->kkt_primal_lin = rl_avbd_max(st->kkt_primal_lin, r);
  st->kkt_primal = rl_avbd_max(st->kkt_primal, r);
}

/* limit rows of hinge or slide jt into the primal, sign and complementarity residuals */
RL_HDFN static void avbd_limit_diag(rl_avbd_stat *st, const rl_avbd *am, const rl_avbd_joint *jt) {
  for (int side = 0; side < 2; side++) {
    const rl_avbd_row *w = am->row + (side ? jt->hi_row : jt->lo_row);
    avbd_primal_add(st, jt->kind == RL_AVBD_HINGE, -w->c);
    st->kkt_normal_sign = rl_avbd_max(st->kkt_normal_sign, w->lambda);
    st->kkt_complementarity = rl_avbd_max(st->kkt_complementarity, rl_fabs(w->lambda * w->c));
  }
}

/* compound joint jt: the norm of its length rows (m) into anchor_err, of its angle rows (rad) into
   axis_err, its rows' residuals and its components' limits */
RL_HDFN static void avbd_compound_diagnostics(rl_avbd *am, const rl_model *m, const rl_data *d, const rl_avbd_joint *jt) {
  rl_avbd_stat *st = &am->stat;
  const rl_avbd_compound *c = am->cmp + jt->cmp;
  if (avbd_joint_on(m, d, jt)) {
    const rl_avbd_compound_val *v = avbd_compound_value(am, jt);
    real lin = 0, ang = 0;
    for (int r = 0; r < jt->neq; r++) {
      const rl_avbd_row *w = am->row + jt->row + r;
      if (w->kind == RL_AVBD_ROW_ANG) ang += v->C[r] * v->C[r];
      else lin += v->C[r] * v->C[r];
      avbd_primal_add(st, w->kind == RL_AVBD_ROW_ANG, rl_fabs(w->c));
    }
    st->anchor_err = rl_avbd_max(st->anchor_err, rl_sqrt(lin));
    st->axis_err = rl_avbd_max(st->axis_err, rl_sqrt(ang));
  }
  for (int k = 0; k < c->n; k++)
    if (c->sub[k].kind != RL_AVBD_BALL && m->jnt_limited[c->sub[k].jnt]) avbd_limit_diag(st, am, c->sub + k);
}

/* Diagnostics after the step: anchor/axis errors from the raw rows, penetration, and the KKT
 * residuals of the step problem with the final multipliers. */
RL_HDFN void avbd_diagnostics(rl_avbd *am, const rl_model *m, const rl_data *d, real h) {
  rl_avbd_stat *st = &am->stat;
  st->anchor_err = st->axis_err = st->penetration = 0;
  st->kkt_stationarity_force = st->kkt_stationarity_torque = 0;
  st->kkt_primal = st->kkt_normal_sign = st->kkt_cone = st->kkt_complementarity = 0;
  st->kkt_primal_lin = st->kkt_primal_ang = 0;
  for (int j = 0; j < am->njoint; j++) {
    const rl_avbd_joint *jt = am->joint + j;
    if (jt->kind == RL_AVBD_COMPOUND) {
      avbd_compound_diagnostics(am, m, d, jt);
      continue;
    }
    if (!avbd_joint_on(m, d, jt)) continue;
    /* the rows' values only: the cached ones (the same C as rl_avbd_joint_rows) where the joint has them */
    real Cr[6], JA[6][6], JB[6][6];
    const real *C = Cr;
    int n;
    if (rl_avbd_joint_val_ok(jt)) {
      const rl_avbd_joint_val *v = avbd_joint_value(am, j);
      C = v->C;
      n = v->n;
    } else n = rl_avbd_joint_rows(jt, avbd_pose_of(am, jt->a), avbd_pose_of(am, jt->b), Cr, JA, JB);
    real lin = 0, ang = 0;
    for (int r = 0; r < n; r++) {
      const rl_avbd_row *w = am->row + jt->row + r;
      if (w->kind == RL_AVBD_ROW_ANG) ang += C[r] * C[r];
      else lin += C[r] * C[r];
      avbd_primal_add(st, w->kind == RL_AVBD_ROW_ANG, rl_fabs(w->c));
    }
    st->anchor_err = rl_avbd_max(st->anchor_err, rl_sqrt(lin));
    st->axis_err = rl_avbd_max(st->axis_err, rl_sqrt(ang));
    if ((jt->kind == RL_AVBD_HINGE || jt->kind == RL_AVBD_SLIDE) && m->jnt_limited[jt->jnt])
      avbd_limit_diag(st, am, jt);
  }
  for (int k = 0; k < am->nmdof; k++) { /* ball cone limits */
    const rl_avbd_row *w = am->row + am->mdof[k].lim_row;
    if (!avbd_mdof_limit_on(m, am->mdof + k)) continue;
    avbd_primal_add(st, 1, -w->c);
    st->kkt_normal_sign = rl_avbd_max(st->kkt_normal_sign, w->lambda);
    st->kkt_complementarity = rl_avbd_max(st->kkt_complementarity, rl_fabs(w->lambda * w->c));
  }
  for (int i = 0; i < am->ncon; i++) {
    const rl_avbd_contact *c = am->con + i;
    real C[3];
    avbd_contact_c(am, c, C);
    st->penetration = rl_avbd_max(st->penetration, -C[0]);
    avbd_primal_add(st, 0, -c->c[0]);
    st->kkt_normal_sign = rl_avbd_max(st->kkt_normal_sign, c->lambda[0]);
    st->kkt_cone = rl_avbd_max(st->kkt_cone, rl_sqrt(c->lambda[1] * c->lambda[1] + c->lambda[2] * c->lambda[2]) +
                                                 c->mu * c->lambda[0]);
    st->kkt_complementarity = rl_avbd_max(st->kkt_complementarity, rl_fabs(c->lambda[0] * c->c[0]));
  }
  for (int s = 0; s < am->nb; s++) {
    real H[36], g[6];
    avbd_assemble(am, m, d, s, h, 1, NULL, H, g);
    for (int i = 0; i < 3; i++) {
      st->kkt_stationarity_force = rl_avbd_max(st->kkt_stationarity_force, rl_fabs(g[i]));
      st->kkt_stationarity_torque = rl_avbd_max(st->kkt_stationarity_torque, rl_fabs(g[3 + i]));
    }
  }
}

/* Wrench of contact c on its body on side `side` (0: A, 1: B) with the final multipliers, world, at the
 * body's COM: −Σ λ_r J_r over the rows of avbd_assemble, J_r = ±[w_r, l_r × w_r] (w = n, t1, t2; lever
 * l to the centre of curvature for n, to the material point for t) and the spin/roll rows ±[0, frame_k]:
 *   F = ∓Σ_r λ_r w_r,   τ = ∓(Σ_r λ_r l_r × w_r + Σ_k λ_k^ang frame_k)   (upper sign: B). */
RL_HDFN static void avbd_contact_wrench(const rl_avbd *am, const rl_avbd_contact *c, int side, real F[3], real tau[3]) {
  real pA[3], pB[3], uA[3], uB[3], vA[3], vB[3], x[3];
  avbd_contact_points(am, c, pA, uA, pB, uB);
  avbd_contact_centres(am, c, pA, vA, pB, vB);
  real sg = side ? -1 : 1;
  rl_v3_zero(F);
  rl_v3_zero(tau);
  for (int r = 0; r < 3; r++) {
    const real *w = c->frame + 3 * r;
    rl_v3_cross(x, r == 0 ? (side ? vB : vA) : (side ? uB : uA), w);
    rl_v3_addscl(F, w, sg * c->lambda[r]);
    rl_v3_addscl(tau, x, sg * c->lambda[r]);
    rl_v3_addscl(tau, w, sg * c->alam[r]);
  }
}

/* Contact load on tree joint jt (rl_avbd_load.contact): with a the world axis and p the anchor,
 *   hinge τ = a·Σ ((x_s − p) × F_s + τ_s),  slide τ = a·Σ F_s,
 * over every contact side s on a body of the subtree below jt (F_s, τ_s: avbd_contact_wrench at the COM x_s). */
RL_HDFN static real avbd_contact_load(const rl_avbd *am, const rl_model *m, const rl_avbd_joint *jt, const real a[3],
                              const real p[3]) {
  if (jt->eq >= 0 || jt->jnt < 0) return 0;
  int top = am->body[jt->b];
  real tot = 0;
  for (int i = 0; i < am->ncon; i++) {
    const rl_avbd_contact *c = am->con + i;
    for (int side = 0; side < 2; side++) {
      int s = side ? c->b : c->a;
      if (s < 0 || !avbd_in_subtree(m, am->body[s], top)) continue;
      real F[3], tau[3], arm[3], t[3];
      avbd_contact_wrench(am, c, side, F, tau);
      if (jt->kind == RL_AVBD_SLIDE) {
        tot += rl_v3_dot(a, F);
        continue;
      }
      rl_v3_sub(arm, am->pose[s].x, p);
      rl_v3_cross(t, arm, F);
      rl_v3_add(t, t, tau);
      tot += rl_v3_dot(a, t);
    }
  }
  return tot;
}

/* Joint-space loads (rl_avbd_load) with the final multipliers and coordinate:
 *   servo = avbd_servo(φ),  limit = −(λ_lo − λ_hi),  friction = −λ_f,
 *   reaction on B: F = −Σ λ_r J_B,r[0:3],  τ_p = −Σ λ_r J_B,r[3:6] + (x_B − p) × F,  p = x_B + R_B r_B,
 *   axial = a·τ_p (hinge) or a·F (slide), a the joint axis in the world,
 *   contact = avbd_contact_load (tree joints). */
RL_HDFN void avbd_loads(rl_avbd *am, const rl_model *m, const rl_data *d, real h) {
  int dis = m->opt.disableflags;
  for (int j = 0; j < am->njoint; j++) {
    const rl_avbd_joint *jt = am->joint + j;
    rl_avbd_load *L = am->load + j;
    memset(L, 0, sizeof *L);
    const rl_avbd_pose *A = avbd_pose_of(am, jt->a), *B = avbd_pose_of(am, jt->b);
    if (jt->kind == RL_AVBD_COMPOUND) { /* reaction only: F = −Σ λ_r J_B,r[0:3], τ about B's body origin o */
      if (!avbd_joint_on(m, d, jt)) continue;
      const rl_avbd_compound_val *v = avbd_compound_value(am, jt);
      real J[6], t[3], arm[3];
      for (int r = 0; r < jt->neq; r++) {
        avbd_compound_jac(v, v->w[r], 1, J);
        for (int i = 0; i < 6; i++) L->reaction[i] -= am->row[jt->row + r].lambda * J[i];
      }
      rl_v3_scale(arm, v->rB, -1);
      rl_v3_cross(t, arm, L->reaction);
      rl_v3_add(L->reaction + 3, L->reaction + 3, t);
      continue;
    }
    if (avbd_joint_on(m, d, jt)) {
      real C[6], JA[6][6], JB[6][6], t[3], arm[3];
      int n = rl_avbd_joint_rows(jt, A, B, C, JA, JB);
      for (int r = 0; r < n; r++)
        for (int i = 0; i < 6; i++) L->reaction[i] -= am->row[jt->row + r].lambda * JB[r][i];
      rl_m3_mulv(arm, B->R, jt->rB);
      rl_v3_scale(arm, arm, -1);
      rl_v3_cross(t, arm, L->reaction);
      rl_v3_add(L->reaction + 3, L->reaction + 3, t);
    }
    if (jt->kind != RL_AVBD_HINGE && jt->kind != RL_AVBD_SLIDE) continue;
    real a[3], k, p[3], u[3];
    rl_m3_mulv(a, A->R, jt->axA);
    L->axial = rl_v3_dot(a, L->reaction + (jt->kind == RL_AVBD_HINGE ? 3 : 0));
    rl_avbd_point(p, u, B, jt->rB);
    L->contact = avbd_contact_load(am, m, jt, a, p);
    L->servo = avbd_servo(am, m, d, jt, jt->phi, h, &k);
    if (m->jnt_limited[jt->jnt] && !(dis & (RL_DSBL_LIMIT | RL_DSBL_CONSTRAINT)))
      L->limit = -(am->row[jt->lo_row].lambda - am->row[jt->hi_row].lambda);
    if (avbd_dry_budget(am, m, jt) > 0 && !(dis & (RL_DSBL_FRICTIONLOSS | RL_DSBL_CONSTRAINT)))
      L->friction = -am->row[jt->dry_row].lambda;
  }
}
