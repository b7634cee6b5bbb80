/* avbd_mdof.c — ball and free joints in maximal coordinates: the joint-space terms MuJoCo 2.2.2 puts on their
 * dofs (damping, armature, the spring to qpos_spring, friction loss per dof, the ball's cone limit on the rotation
 * angle), as the hinge and slide coordinates carry theirs (avbd_joint.c: avbd_coord_terms).
 *
 * A record (rl_avbd_mdof) holds the dofs' gradients pg[side][i] at the step-start poses, so that the dof
 * displacement over the step is Δ_i = Σ_side pg[side][i]·δz_side, δz = (x − x⁰, Log(q q⁰⁻¹)) of each body:
 *   ball alone      pg[B][i] = (0, R_B e_i), pg[A][i] = −pg[B][i]       (R_B: B's body frame; q̇ = R_Bᵀ(ω_B − ω_A))
 *   ball component  the compound joint's coordinate gradients of its three dofs (avbd_compound_jac)
 *   free            pg[B][i] = (e_i, (o − x_B) × e_i), pg[B][3 + i] = (0, R_B e_i)   (o: the body origin)
 * The terms are an energy gradient G and curvature K on the dofs, with ρ, λ of the record's rows:
 *   damping    G_i += b_i Δ_i/h,                 K_ii += b_i/h
 *   armature   G_i += a_i (Δ_i − h vⁿ_i)/h²,      K_ii += a_i/h²      (vⁿ: the step-start dof rates)
 *   spring     rotation G += k·Log(q_s⁻¹ q) (MuJoCo's mju_subQuat, q the joint's quaternion, q_s its spring
 *              reference), free translation G_i += k (o_i − o_s,i);  K += k·I
 *   friction   C_i = Δ_i:  t = λ_i + ρ_i Δ_i,  G_i += clip(t, ±F_i),  K_ii += ρ_i (articulation blocks: the secant
 *              ρ_i F_i/|t| once |t| > F_i, as a hinge's dry friction)
 *   cone limit C = r − ‖θ‖ ≥ 0 (θ = Log q, r = max(range)):  f = min(λ + ρ(C − T(C⁰)), 0),  G += −f·uⁿ with
 *              uⁿ = θⁿ/‖θⁿ‖ at the step start (MuJoCo's row −u on the dofs),  K += ρ uⁿuⁿᵀ while f < 0 or λ < 0,
 *              T the one-sided target (rl_avbd_one_sided_target)
 * and act on body `side` as the wrench Σ_i G_i pg[side][i] with curvature Σ_ij K_ij pg[side][i] pg[side][j]ᵀ (the
 * spring through the gradients at the current poses; kkt: the bounded rows contribute their λ, for the stationarity
 * residual). */
#include <string.h>
#include "avbd_internal.h"

/* the joint's quaternion at the current poses: a ball of its own its relative rotation (avbd_ball_quat), a
   compound's ball its component coordinate, a free joint the body frame */
RL_HDFN void avbd_mdof_quat(rl_avbd *am, const rl_avbd_mdof *f, real q[4]) {
  if (f->type == RL_JNT_FREE) avbd_body_quat(am, f->b, q);
  else if (f->comp < 0) avbd_ball_quat(am, am->joint + f->joint, q);
  else rl_q_copy(q, avbd_compound_value(am, am->joint + f->joint)->q[f->comp]);
  rl_q_normalize(q);
}

/* the body origin o = x_B − R_body·ipos of slot s at the current pose */
RL_HDFN static void avbd_body_origin(const rl_avbd *am, int s, real o[3]) {
  real qb[4], R[9], off[3];
  avbd_body_quat(am, s, qb);
  rl_q_to_mat(R, qb);
  rl_m3_mulv(off, R, am->ipos + 3 * s);
  rl_v3_sub(o, am->pose[s].x, off);
}

/* δz_s = (x − x⁰, Log(q q⁰⁻¹)) of slot s, the increments accumulated since the step start */
RL_HDFN void avbd_disp(const rl_avbd *am, int s, real dz[6]) {
  rl_v3_copy(dz, am->dx + 3 * s);
  rl_so3_log_quat(dz + 3, am->dq + 4 * s);
}

/* Δ_i = Σ_side pg[side][i]·δz_side with the record's gradients */
RL_HDFN static void avbd_mdof_disp(const rl_avbd *am, const rl_avbd_mdof *f, real D[6]) {
  real za[6], zb[6];
  avbd_disp(am, f->b, zb);
  if (f->a >= 0) avbd_disp(am, f->a, za);
  for (int i = 0; i < f->nd; i++) {
    real s = 0;
    for (int c = 0; c < 6; c++) s += f->pg[1][i][c] * zb[c];
    if (f->a >= 0)
      for (int c = 0; c < 6; c++) s += f->pg[0][i][c] * za[c];
    D[i] = s;
  }
}

/* the dof gradients pg of record f at the current poses (the table at the top of this file) */
RL_HDFN static void avbd_mdof_grad(rl_avbd *am, const rl_avbd_mdof *f, real pg[2][6][6]) {
  memset(pg, 0, sizeof(real) * 72);
  real qb[4], R[9];
  if (f->comp >= 0) {
    const rl_avbd_joint *jt = am->joint + f->joint;
    const rl_avbd_compound_val *v = avbd_compound_value(am, jt);
    int dof = am->cmp[jt->cmp].dof[f->comp];
    for (int i = 0; i < 3; i++) {
      avbd_compound_jac(v, v->pg[dof + i], 1, pg[1][i]);
      if (f->a >= 0) avbd_compound_jac(v, v->pg[dof + i], 0, pg[0][i]);
    }
    return;
  }
  avbd_body_quat(am, f->b, qb);
  rl_q_to_mat(R, qb);
  int r0 = f->type == RL_JNT_FREE ? 3 : 0;
  if (f->type == RL_JNT_FREE) {
    real o[3], arm[3];
    avbd_body_origin(am, f->b, o);
    rl_v3_sub(arm, o, am->pose[f->b].x);
    for (int i = 0; i < 3; i++) {
      real e[3] = {0, 0, 0};
      e[i] = 1;
      rl_v3_copy(pg[1][i], e);
      rl_v3_cross(pg[1][i] + 3, arm, e);
    }
  }
  for (int i = 0; i < 3; i++)
    for (int c = 0; c < 3; c++) {
      pg[1][r0 + i][3 + c] = R[3 * c + i];
      if (f->a >= 0) pg[0][r0 + i][3 + c] = -R[3 * c + i];
    }
}

/* 1 if the ball's cone limit is enforced */
RL_HDFN int avbd_mdof_limit_on(const rl_model *m, const rl_avbd_mdof *f) {
  return f->type == RL_JNT_BALL && m->jnt_limited[f->jnt] &&
         !(m->opt.disableflags & (RL_DSBL_LIMIT | RL_DSBL_CONSTRAINT));
}

/* 1 if dof i's friction loss row is enforced */
RL_HDFN static int avbd_mdof_dry_on(const rl_model *m, const rl_avbd_mdof *f, int i) {
  return m->dof_frictionloss[m->jnt_dofadr[f->jnt] + i] > 0 &&
         !(m->opt.disableflags & (RL_DSBL_FRICTIONLOSS | RL_DSBL_CONSTRAINT));
}

/* the cone limit's C = r − margin − ‖θ‖ at the joint quaternion q (its zero the joint's margin inside the cone,
   as MuJoCo's limit row), u = θ/‖θ‖ ((1, 0, 0) at θ = 0, as MuJoCo's mju_normalize3) */
RL_HDFN static real avbd_mdof_cone(const rl_model *m, const rl_data *d, const rl_avbd_mdof *f, const real q[4],
                                   real u[3]) {
  const real *range = d->jnt_range + 2 * f->jnt;
  rl_so3_log_quat(u, q);
  real ang = rl_v3_norm(u);
  if (ang < RL_MINVAL) {
    u[0] = 1;
    u[1] = u[2] = 0;
  } else rl_v3_scale(u, u, 1 / ang);
  return rl_avbd_max(range[0], range[1]) - m->jnt_margin[f->jnt] - ang;
}

/* The terms of record k at the current poses (the table at the top) in two parts: those on the dof displacement Δ
 * (damping, armature, friction loss) and the cone limit (Gv, Kv), mapped through the step-start gradients of which
 * Δ is the linear function, and the spring on the joint's configuration (Gc, Kc), mapped through the gradients at
 * the current poses.  The cone limit takes C = r − ‖θ‖ at the iterate and its normal −uⁿ at the step start (frozen
 * within the step, as a contact's normal; the normal at the iterate gave the same on the swirling pendulum of
 * avbd_ball_limit.xml, 184 instead of 180 of 1000 steps unconverged in body blocks).  With C linearized on the step
 * as well, C⁰ − uⁿ·Δ, the curvature of ‖θ‖ along the rim was left to the next step and that pendulum exceeded its
 * cone by 2.1·10⁻⁴ rad at 1 ms (1.0·10⁻⁸ now).  Returns 1 if the spring is present. */
RL_HDFN static int avbd_mdof_terms(rl_avbd *am, const rl_model *m, const rl_data *d, int k, real h, int kkt, real Gv[6],
                                   real Kv[36], real Gc[6], real Kc[36]) {
  const rl_avbd_mdof *f = am->mdof + k;
  int nd = f->nd, dof = m->jnt_dofadr[f->jnt], qa = m->jnt_qposadr[f->jnt];
  int r0 = f->type == RL_JNT_FREE ? 3 : 0, dis = m->opt.disableflags;
  real D[6], q[4], ks = dis & RL_DSBL_PASSIVE ? 0 : m->jnt_stiffness[f->jnt];
  int lim = avbd_mdof_limit_on(m, f), cfg = ks != 0;
  for (int i = 0; i < 36; i++) Kv[i] = Kc[i] = 0;
  for (int i = 0; i < 6; i++) Gc[i] = 0;
  avbd_mdof_disp(am, f, D);
  if (cfg || lim) avbd_mdof_quat(am, f, q);
  for (int i = 0; i < nd; i++) {
    real a = m->dof_armature[dof + i];
    Gv[i] = a * (D[i] - h * f->vn[i]) / (h * h);
    Kv[7 * i] = a / (h * h);
  }
  if (!(dis & RL_DSBL_PASSIVE))
    for (int i = 0; i < nd; i++) {
      real b = m->dof_damping[dof + i];
      Gv[i] += b * D[i] / h;
      Kv[7 * i] += b / h;
    }
  for (int i = 0; i < nd; i++) {
    if (!avbd_mdof_dry_on(m, f, i)) continue;
    const rl_avbd_row *r = am->row + f->dry_row + i;
    real F = m->dof_frictionloss[dof + i], t = r->lambda + r->rho * D[i];
    Gv[i] += kkt ? r->lambda : rl_avbd_clip(t, F);
    Kv[7 * i] += am->prm.block == RL_AVBD_BLOCK_ARTICULATION && rl_fabs(t) > F ? r->rho * F / rl_fabs(t) : r->rho;
  }
  if (ks != 0) {
    real w[3];
    if (f->type == RL_JNT_FREE) {
      real o[3];
      avbd_body_origin(am, f->b, o);
      for (int i = 0; i < 3; i++) Gc[i] += ks * (o[i] - m->qpos_spring[qa + i]);
    }
    rl_q_sub_local(w, q, m->qpos_spring + qa + r0);
    for (int i = 0; i < 3; i++) Gc[r0 + i] += ks * w[i];
    for (int i = 0; i < nd; i++) Kc[7 * i] += ks;
  }
  if (lim) {
    const rl_avbd_row *r = am->row + f->lim_row;
    real u[3], C = avbd_mdof_cone(m, d, f, q, u);
    real Ct = C - rl_avbd_one_sided_target(r->c0, am->prm.alpha, am->prm.slop);
    real fl = kkt ? r->lambda : rl_avbd_proj_neg(r->lambda + r->rho * Ct);
    for (int i = 0; i < 3; i++) Gv[i] -= fl * f->un[i];
    if (fl < 0 || r->lambda < 0)
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) Kv[6 * i + j] += r->rho * f->un[i] * f->un[j];
  }
  return cfg;
}

/* g += Σ_i G_i P_i and, unless kkt, H += Σ_ij K_ij P_i P_jᵀ (lower triangle), P the nd dof gradients of one side */
RL_HDFN static void avbd_mdof_map(int nd, const real P[6][6], const real G[6], const real K[36], int kkt, real H[36],
                                  real g[6]) {
  real M[6][6];
  for (int i = 0; i < nd; i++)
    for (int c = 0; c < 6; c++) g[c] += G[i] * P[i][c];
  if (kkt) return;
  for (int i = 0; i < nd; i++) /* M = K P (nd × 6) */
    for (int c = 0; c < 6; c++) {
      real s = 0;
      for (int j = 0; j < nd; j++) s += K[6 * i + j] * P[j][c];
      M[i][c] = s;
    }
  for (int a = 0; a < 6; a++)
    for (int b = 0; b <= a; b++) {
      real s = 0;
      for (int i = 0; i < nd; i++) s += P[i][a] * M[i][b];
      H[6 * a + b] += s;
    }
}

/* The terms of record k on its body of side `side` (1: the body, 0: the parent): the displacement terms through the
   step-start gradients, the configuration terms through the current ones (avbd_mdof_terms, avbd_mdof_map) */
RL_HDFN void avbd_mdof_assemble(rl_avbd *am, const rl_model *m, const rl_data *d, int k, int side, real h, int kkt,
                                real H[36], real g[6]) {
  const rl_avbd_mdof *f = am->mdof + k;
  if (!f->terms) return;
  real Gv[6], Kv[36], Gc[6], Kc[36];
  int cfg = avbd_mdof_terms(am, m, d, k, h, kkt, Gv, Kv, Gc, Kc);
  avbd_mdof_map(f->nd, f->pg[side], Gv, Kv, kkt, H, g);
  if (!cfg) return;
  real pg[2][6][6];
  avbd_mdof_grad(am, f, pg);
  avbd_mdof_map(f->nd, pg[side], Gc, Kc, kkt, H, g);
}

/* Coupling of record k's terms between its body (B) and its parent (A) for the articulation block:
   C += Σ_ij K_ij pg[B][i] pg[A][j]ᵀ (C row-major, the child's rows), each part through its gradients */
RL_HDFN void avbd_mdof_coupling(rl_avbd *am, const rl_model *m, const rl_data *d, int k, real h, real C[36]) {
  const rl_avbd_mdof *f = am->mdof + k;
  if (f->a < 0 || !f->terms) return;
  real Gv[6], Kv[36], Gc[6], Kc[36], pg[2][6][6];
  int cfg = avbd_mdof_terms(am, m, d, k, h, 0, Gv, Kv, Gc, Kc);
  if (cfg) avbd_mdof_grad(am, f, pg);
  for (int part = 0; part < 1 + cfg; part++) {
    const real *K = part ? Kc : Kv;
    const real(*P)[6][6] = part ? pg : f->pg;
    for (int i = 0; i < f->nd; i++)
      for (int j = 0; j < f->nd; j++) {
        real w = K[6 * i + j];
        if (w == 0) continue;
        for (int a = 0; a < 6; a++)
          for (int b = 0; b < 6; b++) C[6 * a + b] += w * P[1][i][a] * P[0][j][b];
      }
  }
}

/* Step start of every record: the dof rates vⁿ (after a step the last step's Δ/h with its gradients, the velocity
   the armature term's difference quotient needs; after rl_avbd_from_generalized the rates of the loaded
   velocities), the gradients at the step-start poses, C⁰ of the cone limit. */
RL_HDFN void avbd_mdof_begin(rl_avbd *am, const rl_model *m, const rl_data *d, real h) {
  int hist = am->steps > am->step0;
  for (int k = 0; k < am->nmdof; k++) {
    rl_avbd_mdof *f = am->mdof + k;
    if (!f->used) continue;
    real D[6];
    if (hist) {
      avbd_mdof_disp(am, f, D);
      for (int i = 0; i < f->nd; i++) f->vn[i] = D[i] / h;
    }
    avbd_mdof_grad(am, f, f->pg);
    if (!hist)
      for (int i = 0; i < f->nd; i++) {
        real s = 0;
        for (int c = 0; c < 6; c++) s += f->pg[1][i][c] * am->vel[6 * f->b + c];
        if (f->a >= 0)
          for (int c = 0; c < 6; c++) s += f->pg[0][i][c] * am->vel[6 * f->a + c];
        f->vn[i] = s;
      }
    if (avbd_mdof_limit_on(m, f)) {
      real q[4];
      avbd_mdof_quat(am, f, q);
      am->row[f->lim_row].c0 = avbd_mdof_cone(m, d, f, q, f->un);
    }
  }
}

/* Dual update of the records' rows after a sweep: friction λ_i ← clip(λ_i + ρΔ_i, ±F_i) (ρ grows while it sticks),
   cone limit λ ← min(λ + ρC̃, 0) (ρ grows while active); residuals |λ − λ_new|/ρ into res[1] (rotational dofs,
   rad) or res[0] (a free joint's translational dofs, m).  Rows that are off keep λ = 0. */
RL_HDFN void avbd_mdof_dual(rl_avbd *am, const rl_model *m, const rl_data *d, real res[2]) {
  const rl_avbd_param *pr = &am->prm;
  for (int k = 0; k < am->nmdof; k++) {
    const rl_avbd_mdof *f = am->mdof + k;
    if (!f->terms) continue;
    int r0 = f->type == RL_JNT_FREE ? 3 : 0, dof = m->jnt_dofadr[f->jnt], dry = 0;
    real D[6];
    for (int i = 0; i < f->nd; i++) dry |= avbd_mdof_dry_on(m, f, i);
    if (dry) avbd_mdof_disp(am, f, D);
    for (int i = 0; i < f->nd; i++) {
      rl_avbd_row *w = am->row + f->dry_row + i;
      if (!avbd_mdof_dry_on(m, f, i)) {
        w->lambda = 0;
        continue;
      }
      int ang = i >= r0;
      real F = m->dof_frictionloss[dof + i];
      w->c = D[i];
      real t = w->lambda + w->rho * w->c, nl = rl_avbd_clip(t, F), rf = rl_fabs(w->lambda - nl) / w->rho;
      res[ang] = rl_avbd_max(res[ang], rf);
      am->stat.dry_residual = rl_avbd_max(am->stat.dry_residual, rf);
      w->lambda = nl;
      if (rl_fabs(t) < F) w->rho = avbd_grow(pr, w->rho, w->rho0, w->c, ang ? AVBD_ANG_SCALE : AVBD_LIN_SCALE);
    }
    if (f->type != RL_JNT_BALL) continue;
    rl_avbd_row *w = am->row + f->lim_row;
    if (!avbd_mdof_limit_on(m, f)) {
      w->lambda = 0;
      continue;
    }
    real q[4], u[3];
    avbd_mdof_quat(am, f, q);
    real c = avbd_mdof_cone(m, d, f, q, u) - rl_avbd_one_sided_target(w->c0, pr->alpha, pr->slop);
    res[1] = rl_avbd_max(res[1], avbd_one_sided_dual(pr, w, c, AVBD_ANG_SCALE));
  }
}
