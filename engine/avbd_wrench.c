/* avbd_wrench.c — actuators whose transmission acts on body poses as a wrench (rl_avbd_wrench): a site, a ball or
 * free joint, a body (adhesion).  Their moment is MuJoCo 2.2.2's at the step start, written as a wrench J_s on each
 * slot's COM increments δz_s = (δx, δθ) (world), so that the actuator velocity is V = Σ_s J_s·(v_s, ω_s):
 *   site   f = R_site·gear[0:3] at the site p, torque t = R_site·gear[3:6]:  J_s = (f, (p − x_s) × f + t)   (length 0)
 *   joint  a ball or free joint's moment m on its dofs (rl_trn_joint_moment), through the dofs' gradients
 *          (rl_avbd_mdof):  J_side = Σ_i m_i pg[side][i]   (length: a ball's Log(q)·g', a free joint's 0)
 *   body   for each of the n contacts c of the body that count (rl_trn_adhesion_contact), normal n_c from geom1's
 *          body to geom2's, at the contact point p_c:  J_{b2} −= (n_c, (p_c − x_{b2}) × n_c)/n,
 *          J_{b1} += (n_c, (p_c − x_{b1}) × n_c)/n   (length 0)
 * An explicit actuator's force F (gain and bias at the step-start length and velocity) becomes F·J_s in each body's
 * external wrench (avbd_external_wrench, the prediction); an implicit one is a path entry whose displacement over the
 * step is ℓ = Σ_s J_s·δz_s: L = Lⁿ + ℓ (ball joints), V = ℓ/h, the force F(L, V) at the iterate (avbd_tendon_force). */
#include <string.h>
#include "avbd_internal.h"
#include "rl_trn.h"

/* 1 if actuator u's transmission is a site, a body, or a joint that is a ball or free joint */
RL_HDFN int avbd_wrench_trn(const rl_model *m, int u) {
  int t = m->actuator_trntype[u];
  if (t == RL_TRN_SITE || t == RL_TRN_BODY) return 1;
  if (t != RL_TRN_JOINT && t != RL_TRN_JOINTINPARENT) return 0;
  int jt = m->jnt_type[m->actuator_trnid[2 * u]];
  return jt == RL_JNT_BALL || jt == RL_JNT_FREE;
}

/* 1 if wrench actuator u has a length that changes with the poses (a ball joint transmission) */
RL_HDFN int avbd_wrench_lengthful(const rl_model *m, int u) {
  int t = m->actuator_trntype[u];
  return (t == RL_TRN_JOINT || t == RL_TRN_JOINTINPARENT) && m->jnt_type[m->actuator_trnid[2 * u]] == RL_JNT_BALL;
}

/* 1 if wrench actuator u's force depends on the iterate: an affine bias with a velocity term (or a length term
   on a ball joint), a muscle bias on a ball joint (the gain is explicit, at the step-start length and velocity) */
RL_HDFN int avbd_wrench_implicit(const rl_model *m, int u) {
  const real *bp = m->actuator_biasprm + RL_NBIAS * u;
  int len = avbd_wrench_lengthful(m, u);
  if (m->actuator_biastype[u] == RL_BIAS_AFFINE) return bp[2] != 0 || (len && bp[1] != 0);
  return m->actuator_biastype[u] == RL_BIAS_MUSCLE && len;
}

/* J[6] += w·(f, (p − x) × f + t) for a force f at the world point p and a torque t on a body at x */
RL_HDFN static void avbd_wrench_add(real J[6], const real x[3], const real p[3], const real f[3], const real t[3],
                                    real w) {
  real r[3], c[3];
  rl_v3_sub(r, p, x);
  rl_v3_cross(c, r, f);
  for (int i = 0; i < 3; i++) {
    J[i] += w * f[i];
    J[3 + i] += w * (c[i] + (t ? t[i] : 0));
  }
}

/* the site transmission's moment into J (nb × 6): the wrench of the site frame's gear on the site's body */
RL_HDFN static void avbd_wrench_site(const rl_avbd *am, const rl_model *m, int u, real *J) {
  int i = m->actuator_trnid[2 * u], s = am->slot[m->site_bodyid[i]];
  if (s < 0) return; /* a site on a static body: no dof moves it, the moment is zero */
  const rl_avbd_pose *P = am->pose + s;
  const real *g = m->actuator_gearvec + 6 * u;
  real Rs[9], R[9], p[3], f[3], t[3];
  rl_q_to_mat(Rs, am->squat + 4 * i);
  rl_m3_mul(R, P->R, Rs);
  rl_m3_mulv(p, P->R, am->spos + 3 * i);
  rl_v3_add(p, p, P->x);
  rl_m3_mulv(f, R, g);
  rl_m3_mulv(t, R, g + 3);
  avbd_wrench_add(J + 6 * s, P->x, p, f, t, 1);
}

/* the body transmission's moment into J (nb × 6) from the contacts in d (the step start's collision) */
RL_HDFN static void avbd_wrench_body(const rl_avbd *am, const rl_model *m, const rl_data *d, int u, real *J) {
  int id = m->actuator_trnid[2 * u], n = 0;
  for (int c = 0; c < d->ncon; c++) n += rl_trn_adhesion_contact(m, d->contact + c, id);
  if (n == 0) return;
  for (int c = 0; c < d->ncon; c++) {
    const rl_contact *con = d->contact + c;
    if (!rl_trn_adhesion_contact(m, con, id)) continue;
    int s1 = am->slot[m->geom_bodyid[con->geom1]], s2 = am->slot[m->geom_bodyid[con->geom2]];
    if (s2 >= 0) avbd_wrench_add(J + 6 * s2, am->pose[s2].x, con->pos, con->frame, NULL, -(real)1 / (real)n);
    if (s1 >= 0) avbd_wrench_add(J + 6 * s1, am->pose[s1].x, con->pos, con->frame, NULL, (real)1 / (real)n);
  }
}

/* the ball or free joint transmission's moment into J (nb × 6) through the joint's dof gradients; returns the
   length */
RL_HDFN static real avbd_wrench_joint(rl_avbd *am, const rl_model *m, int u, int k, real *J) {
  const rl_avbd_mdof *f = am->mdof + k;
  int free_joint = f->type == RL_JNT_FREE;
  real q[4], mom[6];
  avbd_mdof_quat(am, f, q);
  real L = rl_trn_joint_moment(free_joint, m->actuator_trntype[u] == RL_TRN_JOINTINPARENT, m->actuator_gearvec + 6 * u,
                               q, mom);
  for (int side = 0; side < 2; side++) {
    int s = side ? f->b : f->a;
    if (s < 0) continue;
    for (int i = 0; i < f->nd; i++)
      for (int c = 0; c < 6; c++) J[6 * s + c] += mom[i] * f->pg[side][i][c];
  }
  return L;
}

/* Step start (after the ball and free joints' gradients, avbd_mdof_begin): every wrench actuator's moment J at the
   step-start poses, its length Lⁿ and velocity Vⁿ = Σ_s J_s·(v_s, ω_s); the explicit ones' forces F·J_s summed
   into fext (zero with actuation disabled), the implicit ones' J kept in wj. */
RL_HDFN void avbd_wrench_begin(rl_avbd *am, const rl_model *m, const rl_data *d) {
  int nb = am->nb;
  for (int i = 0; i < 6 * nb; i++) am->fext[i] = 0;
  for (int k = 0; k < am->nwrench; k++) {
    rl_avbd_wrench *w = am->wrench + k;
    int u = w->u;
    real *J = am->wj + w->jadr;
    for (int i = 0; i < 6 * nb; i++) J[i] = 0;
    w->Ln = 0;
    if (m->actuator_trntype[u] == RL_TRN_SITE) avbd_wrench_site(am, m, u, J);
    else if (m->actuator_trntype[u] == RL_TRN_BODY) avbd_wrench_body(am, m, d, u, J);
    else w->Ln = avbd_wrench_joint(am, m, u, w->mdof, J);
    real V = 0;
    for (int s = 0; s < nb; s++)
      for (int c = 0; c < 6; c++) V += J[6 * s + c] * am->vel[6 * s + c];
    w->Vn = V;
    if (w->spat >= 0 || (m->opt.disableflags & RL_DSBL_ACTUATION)) continue;
    real dL, dV, F = avbd_actuator_law(m, u, avbd_actuator_input(am, m, d, u), w->Ln, w->Vn, w->Ln, w->Vn, &dL, &dV);
    for (int i = 0; i < 6 * nb; i++) am->fext[i] += F * J[i];
  }
}

/* Entry −1 − u of the acting path list for wrench actuator u at the current poses: ℓ = Σ_s J_s·δz_s over the entry's
   slots; J += J_s for slot s (J non-NULL, s ≥ 0); *rate += Σ_s J_s·(v_s, ω_s) (rate non-NULL) */
RL_HDFN real avbd_wrench_length(const rl_avbd *am, int u, int s, real J[6], real *rate) {
  const rl_avbd_wrench *w = am->wrench + am->uwrench[u];
  const real *Jn = am->wj + w->jadr;
  real l = 0;
  for (int x = am->spsadr[w->spat]; x < am->spsadr[w->spat + 1]; x++) {
    int o = am->spslot[x];
    if (o < 0) continue;
    real dz[6];
    avbd_disp(am, o, dz);
    for (int c = 0; c < 6; c++) {
      l += Jn[6 * o + c] * dz[c];
      if (rate) *rate += Jn[6 * o + c] * am->vel[6 * o + c];
    }
  }
  if (J && s >= 0)
    for (int c = 0; c < 6; c++) J[c] += Jn[6 * s + c];
  return l;
}

/* Force of implicit wrench actuator u along its displacement ℓ (the energy gradient −F) with curvature *kL:
   F = avbd_actuator_law at L = Lⁿ + ℓ (ball joints; Lⁿ otherwise), V = ℓ/h, the gain at (Lⁿ, Vⁿ);
   *kL = −(∂F/∂L·[ball] + ∂F/∂V/h) ≥ 0 (0 with actuation disabled or a clamped force) */
RL_HDFN real avbd_wrench_force(const rl_avbd *am, const rl_model *m, const rl_data *d, int u, real l, real h,
                               real *kL) {
  const rl_avbd_wrench *w = am->wrench + am->uwrench[u];
  *kL = 0;
  if (m->opt.disableflags & RL_DSBL_ACTUATION) return 0;
  int len = avbd_wrench_lengthful(m, u);
  real dL, dV,
      F = avbd_actuator_law(m, u, avbd_actuator_input(am, m, d, u), w->Ln + (len ? l : 0), l / h, w->Ln, w->Vn, &dL,
                            &dV);
  *kL = rl_avbd_max(-((len ? dL : 0) + dV / h), 0);
  return -F;
}
