/* actuation.c — actuators as MuJoCo 2.2.2 models them: transmission (length and moment arm), activation
 * dynamics, gain and bias (fixed, affine, muscle), the force in joint space, and the activations' time
 * integration.
 *
 * An actuator u has a moment row r_u (dq → d length): length l_u, velocity l̇_u = r_u·q̇, and its force f_u
 * enters qfrc_actuator as r_uᵀ f_u.  Activations: the last na actuators (those with dynamics) own act[u −
 * (nu − na)], and their force is gain·act + bias instead of gain·ctrl + bias.
 */
#include <string.h>
#include "rl_engine.h"
#include "rl_so3.h"
#include "rl_muscle.h"
#include "rl_crank.h"
#include "rl_trn.h"

/* ------------------------------------------------------------ transmissions */

/* 1 if actuator u is a scalar joint transmission (hinge or slide): length g·q, moment g on one dof */
static int scalar_joint(const rl_model *m, int u) {
  int t = m->actuator_trntype[u], j = m->actuator_trnid[2 * u];
  return (t == RL_TRN_JOINT || t == RL_TRN_JOINTINPARENT) &&
         (m->jnt_type[j] == RL_JNT_HINGE || m->jnt_type[j] == RL_JNT_SLIDE);
}

/* ball or free joint: length and moment on the joint's dofs by rl_trn_joint_moment (ball: Log(q)·g', moment g';
   free: length 0, moment (g_lin, g'_rot)) */
static real joint_nd(const rl_model *m, const rl_data *d, int u, real *r) {
  int j = m->actuator_trnid[2 * u], free_joint = m->jnt_type[j] == RL_JNT_FREE;
  int inparent = m->actuator_trntype[u] == RL_TRN_JOINTINPARENT;
  const real *q = d->qpos + m->jnt_qposadr[j] + (free_joint ? 3 : 0);
  return rl_trn_joint_moment(free_joint, inparent, m->actuator_gearvec + 6 * u, q, r + m->jnt_dofadr[j]);
}

/* Slider-crank: crank pin c (cranksite), slider s with axis a (slidersite's z), rod length ρ, v = c − s,
   l and ∂l/∂v, ∂l/∂a from rl_crank_length;
   moment = gear · (dl/da · J_a + dl/dv · (J_c − J_s)), with J_a the Jacobian of the slider axis. */
static real slider_crank(const rl_model *m, rl_data *d, int u, real *r) {
  int nv = m->nv, c = m->actuator_trnid[2 * u], s = m->actuator_trnid[2 * u + 1];
  real rod = m->actuator_cranklength[u], g = m->actuator_gearvec[6 * u];
  const real *sm = d->site_xmat + 9 * s;
  real a[3] = {sm[2], sm[5], sm[8]}, v[3], dlda[3], dldv[3];
  rl_v3_sub(v, d->site_xpos + 3 * c, d->site_xpos + 3 * s);
  real len = rl_crank_length(a, v, rod, dldv, dlda);
  size_t mark = rl_arena_mark(d);
  real *jc = rl_arena_take(d, 3 * (size_t)nv), *js = rl_arena_take(d, 3 * (size_t)nv);
  real *jr = rl_arena_take(d, 3 * (size_t)nv);
  rl_jac_point(m, d, js, jr, d->site_xpos + 3 * s, m->site_bodyid[s]);
  rl_jac_point(m, d, jc, NULL, d->site_xpos + 3 * c, m->site_bodyid[c]);
  for (int j = 0; j < nv; j++) {
    real w[3] = {jr[j], jr[nv + j], jr[2 * nv + j]}, ja[3];
    rl_v3_cross(ja, w, a); /* d a / d q_j = ω_j × a */
    real x = 0;
    for (int k = 0; k < 3; k++) x += dlda[k] * ja[k] + dldv[k] * (jc[k * nv + j] - js[k * nv + j]);
    r[j] = x * g;
  }
  rl_arena_release(d, mark);
  return len * g;
}

/* Site: length 0; the wrench (R_site·g_lin, R_site·g_rot) through the site's Jacobians,
   moment = J_pᵀ R g_lin + J_rᵀ R g_rot. */
static real site_wrench(const rl_model *m, rl_data *d, int u, real *r) {
  int nv = m->nv, s = m->actuator_trnid[2 * u];
  const real *g = m->actuator_gearvec + 6 * u;
  real wt[3], wr[3];
  rl_m3_mulv(wt, d->site_xmat + 9 * s, g);
  rl_m3_mulv(wr, d->site_xmat + 9 * s, g + 3);
  size_t mark = rl_arena_mark(d);
  real *jp = rl_arena_take(d, 3 * (size_t)nv), *jr = rl_arena_take(d, 3 * (size_t)nv);
  rl_jac_point(m, d, jp, jr, d->site_xpos + 3 * s, m->site_bodyid[s]);
  for (int j = 0; j < nv; j++) {
    real x = 0, y = 0;
    for (int k = 0; k < 3; k++) x += jp[k * nv + j] * wt[k];
    for (int k = 0; k < 3; k++) y += jr[k * nv + j] * wr[k];
    r[j] = x + y;
  }
  rl_arena_release(d, mark);
  return 0;
}

/* Tendon: length = g·L_tendon, moment = g·J_tendon */
static real tendon_row(const rl_model *m, const rl_data *d, int u, real *r) {
  int id = m->actuator_trnid[2 * u], nv = m->nv;
  real g = m->actuator_gear[u];
  const real *J = d->ten_J + (size_t)id * nv;
  for (int i = 0; i < nv; i++) r[i] = J[i] * g;
  return d->ten_length[id] * g;
}

/* Body (adhesion): length 0; the moment is minus the mean contact-normal Jacobian over the contacts of
   body b from this pass's collision (MuJoCo 2.2.2 runs the transmission after collision):
     r = −(1/n) Σ_c n_cᵀ (J_p(b2_c, pos_c) − J_p(b1_c, pos_c)),
   over the contacts c touching b that are active or in the margin gap and whose pair has a dof
   (rl_trn_adhesion_contact); n_c points from geom1 to geom2, so a
   positive force pulls the bodies together.  No contact: r = 0. */
static real body_adhesion(const rl_model *m, rl_data *d, int u, real *r) {
  int nv = m->nv, id = m->actuator_trnid[2 * u], n = 0;
  size_t mark = rl_arena_mark(d);
  real *j1 = rl_arena_take(d, 3 * (size_t)nv), *j2 = rl_arena_take(d, 3 * (size_t)nv);
  for (int c = 0; c < d->ncon; c++) {
    const rl_contact *con = d->contact + c;
    int b1 = m->geom_bodyid[con->geom1], b2 = m->geom_bodyid[con->geom2];
    if (!rl_trn_adhesion_contact(m, con, id)) continue;
    n++;
    rl_jac_point(m, d, j1, NULL, con->pos, b1);
    rl_jac_point(m, d, j2, NULL, con->pos, b2);
    for (int j = 0; j < nv; j++) {
      real x = 0;
      for (int k = 0; k < 3; k++) x += con->frame[k] * (j2[k * nv + j] - j1[k * nv + j]);
      r[j] += x;
    }
  }
  if (n)
    for (int j = 0; j < nv; j++) r[j] *= -(real)1 / (real)n;
  rl_arena_release(d, mark);
  return 0;
}

/* length of actuator u and its moment row r (nv entries, zeroed here) for the non-scalar transmissions */
static real transmission_row(const rl_model *m, rl_data *d, int u, real *r) {
  memset(r, 0, sizeof(real) * (size_t)m->nv);
  switch (m->actuator_trntype[u]) {
  case RL_TRN_TENDON: return tendon_row(m, d, u, r);
  case RL_TRN_SLIDERCRANK: return slider_crank(m, d, u, r);
  case RL_TRN_SITE: return site_wrench(m, d, u, r);
  case RL_TRN_BODY: return body_adhesion(m, d, u, r);
  default: return joint_nd(m, d, u, r);
  }
}

/* ------------------------------------------------------------ muscles (curves: rl_muscle.h) */

/* ∂gain/∂l̇ of rl_muscle_gain (MuJoCo 2.2.2's mjd_muscleGain_vel): −F·FL·FV′(V)/(L₀·vmax) with
   FV′ = 0 (V ≤ −1), 2V + 2 (V ≤ 0), (2y − 2V)/y (V ≤ y), 0 beyond */
real rl_muscle_gain_vel(real len, real vel, const real lr[2], real acc0, const real *prm) {
  real vmax = prm[6], fvmax = prm[8], force = rl_muscle_peak(acc0, prm), L0 = rl_muscle_l0(lr, prm);
  real L = prm[0] + (len - lr[0]) / rl_muscle_maxr(RL_MUSCLE_MINVAL, L0), V = vel / rl_muscle_maxr(RL_MUSCLE_MINVAL, L0 * vmax);
  real FL = rl_muscle_fl(L, prm[4], prm[5]);
  real dFV, y = fvmax - 1;
  if (V <= -1) dFV = 0;
  else if (V <= 0) dFV = 2 * V + 2;
  else if (V <= y) dFV = (-2 * V + 2 * y) / rl_muscle_maxr(RL_MUSCLE_MINVAL, y);
  else dFV = 0;
  return -force * FL * dFV / rl_muscle_maxr(RL_MUSCLE_MINVAL, L0 * vmax);
}

/* ------------------------------------------------------------ forces */

/* gain·input + bias of actuator u (fixed, affine or muscle gain; none, affine or muscle bias):
     gain = g₀ (fixed), g₀ + g₁·length + g₂·velocity (affine) or the muscle curve;
     bias = 0, b₀ + b₁·length + b₂·velocity (affine) or the muscle curve.
   With RL_COMPENSATED_SUMS (f32) the affine sums and gain·input + bias are one compensated dot product each
   (rl_dot2), so a servo whose gain·ctrl and b₁·q cancel loses nothing to their separate roundings. */
static real actuator_force(const rl_model *m, const rl_data *d, int u, real input) {
  const real *gp = m->actuator_gainprm + RL_NGAIN * u, *bp = m->actuator_biasprm + RL_NBIAS * u;
  const real *lr = m->actuator_lengthrange + 2 * u;
  real len = d->actuator_length[u], vel = d->actuator_velocity[u], acc0 = m->actuator_acc0[u];
  real gain = gp[0];
  if (m->actuator_gaintype[u] == RL_GAIN_AFFINE) {
    const real x[3] = {1, len, vel};
    gain = RL_COMPENSATED_SUMS ? rl_dot2(gp, x, 3) : gain + (gp[1] * len + gp[2] * vel);
  } else if (m->actuator_gaintype[u] == RL_GAIN_MUSCLE) gain = rl_muscle_gain(len, vel, lr, acc0, gp);
  if (m->actuator_biastype[u] == RL_BIAS_AFFINE) {
    if (!RL_COMPENSATED_SUMS) return gain * input + (bp[0] + bp[1] * len + bp[2] * vel);
    const real a[4] = {gain, bp[0], bp[1], bp[2]}, x[4] = {input, 1, len, vel};
    return rl_dot2(a, x, 4);
  }
  real bias = m->actuator_biastype[u] == RL_BIAS_MUSCLE ? rl_muscle_bias(len, lr, acc0, bp) : 0;
  return gain * input + bias;
}

/* Transmissions, then per actuator: control u clamped to ctrlrange (all 0 when one is not finite); with dynamics ȧ = act_rate and the
   input is act, else u; force = gain·input + bias, clamped to forcerange; qfrc_actuator = Σ r_uᵀ force_u.
   Hinge/slide joints: length g·q, velocity g·q̇, force on one dof.  Every moment row is kept in
   actuator_moment (dense nu × nv). */
void rl_actuation(const rl_model *m, rl_data *d) {
  int nv = m->nv, nu = m->nu;
  memset(d->qfrc_actuator, 0, sizeof(real) * (size_t)nv);
  for (int u = 0; u < nu; u++) {
    real *r = d->actuator_moment + (size_t)u * (size_t)nv, v = 0;
    if (scalar_joint(m, u)) {
      int j = m->actuator_trnid[2 * u];
      real g = m->actuator_gear[u];
      memset(r, 0, sizeof(real) * (size_t)nv);
      r[m->jnt_dofadr[j]] = g;
      d->actuator_length[u] = g * d->qpos[m->jnt_qposadr[j]];
      d->actuator_velocity[u] = g * d->qvel[m->jnt_dofadr[j]];
      continue;
    }
    d->actuator_length[u] = transmission_row(m, d, u, r);
    for (int i = 0; i < nv; i++) v += r[i] * d->qvel[i];
    d->actuator_velocity[u] = v;
  }
  if (m->opt.disableflags & RL_DSBL_ACTUATION) {
    memset(d->actuator_force, 0, sizeof(real) * (size_t)nu);
    memset(d->act_dot, 0, sizeof(real) * (size_t)m->na);
    return;
  }
  int ctrl_ok = rl_check_ctrl(m, d); /* a bad control zeroes them all (counted warning) */
  for (int u = 0; u < nu; u++) {
    real c = ctrl_ok ? rl_ctrl_clamped(m, d, u) : 0;
    const real *fr = m->actuator_forcerange + 2 * u;
    real input = c;
    if (m->actuator_dyntype[u] != RL_DYN_NONE) {
      int a = u - (nu - m->na);
      d->act_dot[a] = rl_act_rate(m, u, c, d->act[a]);
      input = d->act[a];
    }
    real f = actuator_force(m, d, u, input);
    if (m->actuator_forcelimited[u]) f = f < fr[0] ? fr[0] : (f > fr[1] ? fr[1] : f);
    d->actuator_force[u] = f;
    if (scalar_joint(m, u)) {
      d->qfrc_actuator[m->jnt_dofadr[m->actuator_trnid[2 * u]]] += m->actuator_gear[u] * f;
      continue;
    }
    const real *r = d->actuator_moment + (size_t)u * (size_t)nv;
    for (int i = 0; i < nv; i++)
      if (r[i] != 0) d->qfrc_actuator[i] += r[i] * f;
  }
}

/* act ← act + h·rate (the integrators' activation update), clamped to actrange where actlimited */
void rl_act_advance(const rl_model *m, rl_data *d, const real *rate, real h) { rl_act_euler(m, d->act, rate, h); }
