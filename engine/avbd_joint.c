/* avbd_joint.c — the terms a joint coordinate adds to its bodies' local solve: whether the joint's rows
 * are on, the position servo (MuJoCo's PD servo or the BAM motor model), and the coordinate's damping,
 * armature, stiffness, servo, limit and dry-friction terms. */
#include "avbd_internal.h"
#include "rl_muscle.h"

/* ------------------------------------------------- joint coordinate terms of the local solve */

/* 1 if the two-sided rows of joint jt are enforced (equalities can be switched off) */
RL_HDFN int avbd_joint_on(const rl_model *m, const rl_data *d, const rl_avbd_joint *jt) {
  if (m->opt.disableflags & RL_DSBL_CONSTRAINT) return jt->eq < 0; /* joints are structure, not constraints */
  if (jt->eq < 0) return 1;
  return !(m->opt.disableflags & RL_DSBL_EQUALITY) && d->eq_active[jt->eq];
}

/* Actuator u's force as MuJoCo models it, F = gain·w + bias clamped to forcerange, w the control u (or the
 * activation act at the step start for actuators with dynamics), at the actuator length L and velocity V, the gain
 * explicit at the step-start length Lⁿ and velocity Vⁿ:
 *   gain: fixed g₀; affine g₀ + g₁Lⁿ + g₂Vⁿ; muscle −F₀·FL(Lⁿ)·FV(Vⁿ)
 *   bias: affine b₀ + b₁L + b₂V; muscle passive force FP(L)
 * with its slopes *dFdL, *dFdV (affine b₁, b₂; muscle FP′(L), 0), both 0 when the force is clamped. */
RL_HDFN real avbd_actuator_law(const rl_model *m, int u, real w, real L, real V, real Ln, real Vn, real *dFdL,
                               real *dFdV) {
  const real *fr = m->actuator_forcerange + 2 * u, *lr = m->actuator_lengthrange + 2 * u;
  const real *gp = m->actuator_gainprm + RL_NGAIN * u, *bp = m->actuator_biasprm + RL_NBIAS * u;
  real acc0 = m->actuator_acc0[u], gain = gp[0];
  if (m->actuator_gaintype[u] == RL_GAIN_AFFINE) gain += gp[1] * Ln + gp[2] * Vn;
  else if (m->actuator_gaintype[u] == RL_GAIN_MUSCLE) gain = rl_muscle_gain(Ln, Vn, lr, acc0, gp);
  real F = gain * w;
  *dFdL = *dFdV = 0;
  if (m->actuator_biastype[u] == RL_BIAS_AFFINE) {
    *dFdL = bp[1];
    *dFdV = bp[2];
    F += bp[0] + *dFdL * L + *dFdV * V;
  } else if (m->actuator_biastype[u] == RL_BIAS_MUSCLE) {
    F += rl_muscle_bias(L, lr, acc0, bp);
    *dFdL = rl_muscle_bias_len(L, lr, acc0, bp);
  }
  if (m->actuator_forcelimited[u] && (F < fr[0] || F > fr[1])) {
    F = F < fr[0] ? fr[0] : fr[1];
    *dFdL = *dFdV = 0;
  }
  return F;
}

/* avbd_actuator_law along a scalar coordinate φ (a joint's, a fixed tendon's length, a crank length) with gear g:
 * L = gφ, implicit V = g(φ − φⁿ)/h (φⁿ, φ̇ⁿ the step-start value and rate); force along φ τ = g·F, curvature
 * −∂τ/∂φ = −g²(∂F/∂L + ∂F/∂V/h) (≥ 0: affine b₁ + b₂/h, muscle FP′(L); 0 when clamped). */
RL_HDFN static real avbd_actuator_force(const rl_model *m, int u, real w, real phi, real phi_n, real dphi_n, real h,
                                        real *k) {
  real g = m->actuator_gear[u], dFdL, dFdV;
  real F = avbd_actuator_law(m, u, w, g * phi, g * (phi - phi_n) / h, g * phi_n, g * dphi_n, &dFdL, &dFdV);
  *k = rl_avbd_max(-g * g * (dFdL + dFdV / h), 0);
  return g * F;
}

/* BAM servo (rl_avbd_bam), implicit in q̇ = g(φ − φⁿ)/h and in the error e = u − gφ:
 *   duty = clip(kp·e_g·e, ±d_max),  τ_m = kt(duty·V_s − kt·q̇)/R − b_v·q̇,  joint force τ = g·τ_m
 *   curvature −∂τ/∂φ = g²(kt·V_s·kp·e_g/R [duty unsaturated] + (kt²/R + b_v)/h)
 * (Coulomb friction and armature enter through avbd_dry_budget and avbd_armature.) */
RL_HDFN static real avbd_servo_bam(const rl_avbd_bam *b, const rl_model *m, const rl_avbd_joint *jt, int u, real c, real phi,
                           real h, real *k) {
  real g = m->actuator_gear[u];
  real qd = g * (phi - jt->phi_n) / h;
  real slope = b->kp * b->error_gain, duty = slope * (c - g * phi);
  int sat = 0;
  if (duty > b->max_duty) {
    duty = b->max_duty;
    sat = 1;
  }
  if (duty < -b->max_duty) {
    duty = -b->max_duty;
    sat = 1;
  }
  real damp = b->kt * b->kt / b->R + b->viscous;
  real tau = b->kt * duty * b->supply / b->R - damp * qd;
  *k = g * g * ((sat ? 0 : b->kt * b->supply * slope / b->R) + damp / h);
  return g * tau;
}

/* control of actuator u clamped to ctrlrange, zero after a bad one (rl_avbd_step) */
RL_HDFN static real avbd_ctrl(const rl_avbd *am, const rl_model *m, const rl_data *d, int u) {
  return am->ctrl_zero ? 0 : rl_ctrl_clamp(m, d, u);
}

/* input of actuator u: its control (avbd_ctrl), or the step-start activation for an actuator with activation
   dynamics */
RL_HDFN real avbd_actuator_input(const rl_avbd *am, const rl_model *m, const rl_data *d, int u) {
  if (m->actuator_dyntype[u] != RL_DYN_NONE) return d->act[u - (m->nu - m->na)];
  return avbd_ctrl(am, m, d, u);
}

/* Joint force of the actuators on jt at coordinate φ (0 without one or with actuation disabled): the sum over
 * every actuator whose transmission is jt's joint (jt->act the first) of the BAM model (jt->act, when on) or
 * avbd_actuator_force, with the control clamped to ctrlrange (zero after a bad one) or, for actuators with
 * activation dynamics, the step-start activation; *k the sum of their curvatures −∂τ/∂φ. */
RL_HDFN real avbd_servo(const rl_avbd *am, const rl_model *m, const rl_data *d, const rl_avbd_joint *jt, real phi, real h,
                real *k) {
  int dis = m->opt.disableflags;
  *k = 0;
  if (jt->act < 0 || (dis & RL_DSBL_ACTUATION)) return 0;
  real tau = 0;
  for (int u = jt->act; u < jt->act_end; u++) {
    if (!avbd_joint_trn(m, u, jt->jnt)) continue;
    real ku, w = avbd_actuator_input(am, m, d, u);
    if (u == jt->act && avbd_bam_on(am, m, jt)) tau += avbd_servo_bam(&am->prm.bam, m, jt, u, w, phi, h, &ku);
    else tau += avbd_actuator_force(m, u, w, phi, jt->phi_n, jt->dphi_n, h, &ku);
    *k += ku;
  }
  return tau;
}

/* Activation update after the step, as MuJoCo's Euler step: ȧ = rate(u, act) at the step start (integrator u,
 * filter (u − act)/τ, muscle dynamics; u the clamped control, zero after a bad one), act ← act + h·ȧ clamped to
 * actrange; with actuation disabled ȧ = 0. */
RL_HDFN void avbd_act_advance(const rl_avbd *am, const rl_model *m, rl_data *d, real h) {
  int off = m->nu - m->na;
  for (int a = 0; a < m->na; a++)
    d->act_dot[a] = (m->opt.disableflags & RL_DSBL_ACTUATION)
                        ? 0
                        : rl_act_rate(m, off + a, avbd_ctrl(am, m, d, off + a), d->act[a]);
  rl_act_euler(m, d->act, d->act_dot, h);
}

/* the maximal-coordinate joint that carries model joint j (a compound joint's component included), NULL if none */
RL_HDFN const rl_avbd_joint *avbd_joint_of(const rl_avbd *am, int j) {
  for (int i = 0; i < am->njoint; i++) {
    const rl_avbd_joint *jt = am->joint + i;
    if (jt->kind != RL_AVBD_COMPOUND) {
      if (jt->jnt == j) return jt;
      continue;
    }
    const rl_avbd_compound *c = am->cmp + jt->cmp;
    for (int k = 0; k < c->n; k++)
      if (c->sub[k].jnt == j) return c->sub + k;
  }
  return NULL;
}

/* Force of tendon t along its length at L (step-start Lⁿ, rate L̇ⁿ), the energy gradient
 *   F_L = k_T(L − L_s) + b_T(L − Lⁿ)/h − Σ_u τ_u   (spring, damper, the actuators on the tendon, avbd_actuator_force)
 * with curvature *kL = k_T + b_T/h + Σ_u k_u (passive terms off with passive forces disabled, actuators off with
 * actuation disabled).  t = −1 − u: actuator u's slider-crank transmission, L its crank length l (MuJoCo's actuator
 * length is gear·l; no passive terms, F_L = −τ_u); for another transmission of u (a wrench on body poses) L is its
 * displacement over the step and the force avbd_wrench_force's. */
RL_HDFN real avbd_tendon_force(const rl_avbd *am, const rl_model *m, const rl_data *d, int t, real L, real Ln, real dLn,
                               real h, real *kL) {
  if (t < 0 && m->actuator_trntype[-1 - t] != RL_TRN_SLIDERCRANK) return avbd_wrench_force(am, m, d, -1 - t, L, h, kL);
  int dis = m->opt.disableflags;
  real F = 0;
  *kL = 0;
  if (t >= 0 && !(dis & RL_DSBL_PASSIVE)) {
    F += m->tendon_stiffness[t] * (L - m->tendon_lengthspring[t]) + m->tendon_damping[t] * (L - Ln) / h;
    *kL += m->tendon_stiffness[t] + m->tendon_damping[t] / h;
  }
  int u0 = t >= 0 ? 0 : -1 - t, u1 = t >= 0 ? m->nu : u0 + 1;
  if (!(dis & RL_DSBL_ACTUATION))
    for (int u = u0; u < u1; u++) {
      if (t >= 0 && (m->actuator_trntype[u] != RL_TRN_TENDON || m->actuator_trnid[2 * u] != t)) continue;
      real ku;
      F -= avbd_actuator_force(m, u, avbd_actuator_input(am, m, d, u), L, Ln, dLn, h, &ku);
      *kL += ku;
    }
  return F;
}

/* Fixed tendons through jt's joint (coefficient c there): length L = Σ cᵢφᵢ with jt's φ the argument and the other
 * joints' φᵢ (avbd_fixed_length), step-start Lⁿ = Σ cᵢφᵢⁿ and rate L̇ⁿ = Σ cᵢφ̇ᵢⁿ; the force F_L along L
 * (avbd_tendon_force) returned as the joint's G = c·F_L, with curvature k = c²·k_L.  A tendon over several joints that
 * an articulation block solves as a loop row (avbd_loop_row) reads the other joints at the current poses, as the
 * block's other readers do, and leaves its curvature to the block. */
RL_HDFN static real avbd_tendon_terms(const rl_avbd *am, const rl_model *m, const rl_data *d, const rl_avbd_joint *jt,
                                      real phi, real h, real *k) {
  real G = 0;
  *k = 0;
  for (int t = 0; t < m->ntendon; t++) {
    int w0 = m->tendon_adr[t], nw = m->tendon_num[t];
    if (m->wrap_type[w0] != RL_WRAP_JOINT) continue;
    real c = 0;
    for (int w = w0; w < w0 + nw; w++) /* jt's coefficient first: the lookups below only for its tendons */
      if (m->wrap_objid[w] == jt->jnt) c += m->wrap_prm[w];
    if (c == 0) continue;
    int loop = avbd_loop_row(am, am->ftloop[t]);
    real Ln, dLn, L = avbd_fixed_length(am, m, t, jt, phi, loop, &Ln, &dLn);
    real kL, F = avbd_tendon_force(am, m, d, t, L, Ln, dLn, h, &kL);
    G += c * F;
    if (!loop) *k += c * c * kL;
  }
  return G;
}

/* Joint-space terms on the coordinate φ of joint jt (motors, damping, armature, limits, dry friction): energy gradient G = ∂E/∂φ, curvature k.
 *   limit lo   C = φ − lo ≥ 0:  f = min(λ + ρ C̃, 0),  C̃ = C − T(C⁰) (rl_avbd_one_sided_target);  G += f
 *   limit hi   C = hi − φ ≥ 0:  same, G −= f
 *   dry        Δφ = φ − φⁿ:     f = clip(λ + ρΔφ, ±τ_f);  G += f  (k = ρ inside the budget)
 *   damping    G += b(φ − φⁿ)/h            k += b/h
 *   stiffness  G += k_s(φ − φ_spring)      k += k_s
 *   armature   G += a(φ − φⁿ − hφ̇ⁿ)/h²     k += a/h²
 *   servo      τ = avbd_servo (PD: g·F, F = g·u + b₀ + b₁·gφ + b₂·g(φ − φⁿ)/h clamped to forcerange;
 *              BAM: avbd_servo_bam),  G −= τ,  k += −∂τ/∂φ
 * (armature and the dry budget τ_f include the BAM rotor armature and Coulomb friction)
 * Curvature of the bounded rows is conservative (never below the true one): ρ while the row is
 * active or its multiplier is still nonzero, and ρ for dry friction even when clipped.  A single
 * Newton step on the exact piecewise-quadratic curvature overshoots the kink and can cycle
 * between the two sides (observed: a limit hit at 8 rad/s settling into a period-2 cycle).
 * Articulation blocks weigh a clipped dry-friction row (|t| > τ_f, t = λ + ρΔφ) by the secant ρ·τ_f/|t|
 * instead: its energy is a Huber function of t/ρ, the clipped force τ_f·sign(t) is that weight times t/ρ,
 * and the quadratic with that weight touches the energy there and lies above it, so the step still cannot
 * overshoot the kink; with ρ a slipping joint moved |t|/τ_f times too little per iteration (standing
 * microduck at the bench state, a slipping step: a linear contraction of 0.63 per iteration, 22 → 5 iterations).
 *   coordinate rows  G += f·∂C/∂φ over the tendon limits and joint/tendon equalities through φ (avbd_crow_coord_terms)
 * With kkt set, the bounded rows contribute their multipliers λ (for the stationarity residual). */
RL_HDFN void avbd_coord_terms(const rl_avbd *am, const rl_model *m, const rl_data *d, const rl_avbd_joint *jt, real phi, real h,
                      int kkt, real *G, real *k) {
  const rl_avbd_param *pr = &am->prm;
  int dis = m->opt.disableflags;
  *G = 0;
  *k = 0;
  if (m->jnt_limited[jt->jnt] && !(dis & (RL_DSBL_LIMIT | RL_DSBL_CONSTRAINT))) {
    for (int side = 0; side < 2; side++) {
      const rl_avbd_row *r = am->row + (side ? jt->hi_row : jt->lo_row);
      real C = avbd_limit_c(m, d, jt->jnt, side, phi);
      real Ct = C - rl_avbd_one_sided_target(r->c0, pr->alpha, pr->slop);
      real f = kkt ? r->lambda : rl_avbd_proj_neg(r->lambda + r->rho * Ct);
      *G += side ? -f : f;
      if (f < 0 || r->lambda < 0) *k += r->rho;
    }
  }
  real tf = avbd_dry_budget(am, m, jt);
  if (tf > 0 && !(dis & (RL_DSBL_FRICTIONLOSS | RL_DSBL_CONSTRAINT))) {
    const rl_avbd_row *r = am->row + jt->dry_row;
    real t = r->lambda + r->rho * (phi - jt->phi_n);
    *G += kkt ? r->lambda : rl_avbd_clip(t, tf);
    *k += am->prm.block == RL_AVBD_BLOCK_ARTICULATION && rl_fabs(t) > tf ? r->rho * tf / rl_fabs(t) : r->rho;
  }
  if (!(dis & RL_DSBL_PASSIVE)) {
    *G += jt->damping * (phi - jt->phi_n) / h + jt->stiffness * (phi - jt->spring);
    *k += jt->damping / h + jt->stiffness;
  }
  real arm = avbd_armature(am, m, jt), ks;
  *G += arm * (phi - jt->phi_n - h * jt->dphi_n) / (h * h);
  *k += arm / (h * h);
  *G -= avbd_servo(am, m, d, jt, phi, h, &ks);
  *k += ks;
  if (m->ntendon > 0) {
    *G += avbd_tendon_terms(am, m, d, jt, phi, h, &ks);
    *k += ks;
  }
  if (am->ncrow > 0) {
    *G += avbd_crow_coord_terms(am, m, d, jt, phi, kkt, &ks);
    *k += kkt ? 0 : ks;
  }
}
