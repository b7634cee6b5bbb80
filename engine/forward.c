/* forward.c — the whole pipeline with constraints (see rl_engine.h).
 *
 * Two paths give the same q̈ to rounding:
 *   factored   rl_fwd_position (… rl_crb → rl_factor_m_step) → collision → velocity → actuation → rl_smooth_acc
 *              (qLD) → rows → solver with qM/qLD;  Euler's damping by an LᵀDL of M + h·diag(b).
 *   recursive  kinematics → com_pos → collision → velocity → actuation → rows → qacc_smooth by the
 *              articulated-body recursion → solver with every M·v / M⁻¹·v / H⁻¹·v a recursion on
 *              cinert/cdof (Newton's H by ABA) → Euler's damping by ABA with armature + h·b.  O(nv) per
 *              product: M (crb, qM, qLD) is never formed, and those fields keep stale values.
 * The recursive path runs when the options allow it (CG, or Newton not forced to a Cholesky by
 * newton_factor = dense | skyline | sparse | tree) and either newton_factor = aba forces it or the tree is deep enough
 * that it pays (rl_recursive_pays: Σ_k depth_k² > 150·nv).  Measured f64 step, ns, factored / recursive
 * (limits active, 2-core host, ±15 % noise): chain8 (Σ depth²/nv 25) 4180 / 5950, chain16 (94) 10700 /
 * 11900, chain24 (204) 28600 / 26700, chain32 (358) 39400 / 25100; humanoid (96) 26600 / 24100 and
 * microduck (61) 21400 / 21600 are near even, so they, humanoid100 (19) and chains up to ~20 links stay
 * factored.  When the solve refuses the recursive path (a row ABA cannot carry under Newton) the step
 * falls back to the factored path at the same state. */
#include <string.h>
#include "rl_engine.h"

/* the stage profile (rl_data.prof): prof_start reads the clock (0 when profiling is off); prof_lap adds the
   time since *t to stage k and restarts *t */
static double prof_start(const rl_data *d) { return d->prof_clock ? d->prof_clock() : 0; }
static void prof_lap(rl_data *d, int k, double *t) {
  if (!d->prof_clock) return;
  double now = d->prof_clock();
  d->prof[k] += now - *t;
  *t = now;
}
static double prof_total(const rl_data *d) {
  double s = 0;
  for (int k = 0; k < RL_NPROF; k++) s += d->prof[k];
  return s;
}

/* 1 if the options let the recursive path run (a Newton solve forced to a Cholesky needs qM) */
static int recursive_allowed(const rl_model *m) {
  int f = m->opt.newton_factor;
  return m->opt.solver == RL_SOLVER_CG ||
         (f != RL_FACTOR_DENSE && f != RL_FACTOR_SKYLINE && f != RL_FACTOR_SPARSE && f != RL_FACTOR_TREE);
}

/* 1 if the pass should try the recursive path: forced by path or newton_factor = aba, else by cost */
static int recursive_wanted(const rl_model *m, int path) {
  if (path == RL_PATH_FACTORED || !recursive_allowed(m)) return 0;
  if (path == RL_PATH_RECURSIVE || m->opt.newton_factor == RL_FACTOR_ABA) return 1;
  return rl_recursive_pays(m);
}

/* the solve after the rows, warm started from qacc_warmstart (no rows: qacc = qacc_smooth) */
static void solve_factored(const rl_model *m, rl_data *d) {
  memcpy(d->qacc, d->qacc_warmstart, sizeof(real) * (size_t)m->nv);
  if (d->nefc == 0) {
    memcpy(d->qacc, d->qacc_smooth, sizeof(real) * (size_t)m->nv);
    memset(d->qfrc_constraint, 0, sizeof(real) * (size_t)m->nv);
    d->solver_iter = 0;
    d->solver_converged = 1;
    return;
  }
  rl_constraint_solve(m, d);
}

/* the recursive path (see the file comment); falls back to the factored tail when refused */
static int forward_recursive(const rl_model *m, rl_data *d) {
  double t = prof_start(d);
  rl_kinematics(m, d);
  rl_com_pos(m, d);
  rl_tendon(m, d);
  if (!RL_LOCAL_FRAMES) rl_local_frames(m, d); /* the recursive M⁻¹ (rl_solve_m_local) in f64 too */
  prof_lap(d, RL_PROF_POSITION, &t);
  rl_collision(m, d);
  prof_lap(d, RL_PROF_COLLISION, &t);
  rl_fwd_velocity(m, d);
  prof_lap(d, RL_PROF_VELOCITY, &t);
  rl_actuation(m, d);
  prof_lap(d, RL_PROF_ACTUATION, &t);
  rl_make_constraint(m, d);
  prof_lap(d, RL_PROF_CONSTRAINT, &t);
  memcpy(d->qacc, d->qacc_warmstart, sizeof(real) * (size_t)m->nv);
  int smooth = rl_smooth_acc_recursive(m, d);
  prof_lap(d, RL_PROF_SMOOTH, &t);
  int solved = smooth == 0 && rl_constraint_solve_recursive(m, d) == 0;
  prof_lap(d, RL_PROF_SOLVE, &t);
  if (solved) return RL_PATH_RECURSIVE;
  rl_crb(m, d);
  rl_factor_m_step(m, d);
  prof_lap(d, RL_PROF_POSITION, &t);
  rl_smooth_acc(m, d);
  prof_lap(d, RL_PROF_SMOOTH, &t);
  solve_factored(m, d);
  prof_lap(d, RL_PROF_SOLVE, &t);
  return RL_PATH_FACTORED;
}

/* q̈ = argmin ½‖q̈ − q̈_smooth‖²_M + s(J q̈ − a_ref): every stage in pipeline order, the solver warm
   started from the previous step's q̈ (qacc_warmstart). */
int rl_forward_path(const rl_model *m, rl_data *d, int path) {
  if (recursive_wanted(m, path)) return forward_recursive(m, d);
  double t = prof_start(d);
  rl_fwd_position(m, d);
  prof_lap(d, RL_PROF_POSITION, &t);
  rl_collision(m, d);
  prof_lap(d, RL_PROF_COLLISION, &t);
  rl_fwd_velocity(m, d);
  prof_lap(d, RL_PROF_VELOCITY, &t);
  rl_actuation(m, d);
  prof_lap(d, RL_PROF_ACTUATION, &t);
  rl_smooth_acc(m, d);
  prof_lap(d, RL_PROF_SMOOTH, &t);
  rl_make_constraint(m, d);
  prof_lap(d, RL_PROF_CONSTRAINT, &t);
  solve_factored(m, d);
  prof_lap(d, RL_PROF_SOLVE, &t);
  return RL_PATH_FACTORED;
}

void rl_forward(const rl_model *m, rl_data *d) { rl_forward_path(m, d, RL_PATH_AUTO); }

/* Euler after a pass on `used`: the recursive damping solve, or (factored, or its arena refused) the LᵀDL
   of M + h·diag(b) with M formed here if the pass did not */
static void euler_after(const rl_model *m, rl_data *d, int used) {
  if (used == RL_PATH_RECURSIVE && rl_euler_recursive(m, d) == 0) return;
  if (used == RL_PATH_RECURSIVE) rl_crb(m, d);
  rl_euler(m, d);
}

/* the implicit step after a pass on `used` (M formed here if the recursive pass did not); Euler where
   M − h·D has a zero pivot or the arena is too small */
static void implicit_after(const rl_model *m, rl_data *d, int used) {
  if (used == RL_PATH_RECURSIVE) rl_crb(m, d);
  if (rl_implicit(m, d)) {
    d->warning[RL_WARN_IMPLICIT]++;
    rl_euler(m, d);
  }
}

/* A step the bad-state policy ends: a qacc still bad after the reset and a second forward pass (the model
   itself, not the state, is bad) is not integrated: the state stays the reset one, time advances by h. */
static void hold_reset_state(const rl_model *m, rl_data *d) {
  memset(d->qacc, 0, sizeof(real) * (size_t)m->nv);
  d->time += m->opt.timestep;
}

void rl_step_path(const rl_model *m, rl_data *d, int path) {
  rl_check_state(m, d);
  int used = rl_forward_path(m, d, path);
  if (!rl_check_acc(m, d)) {
    used = rl_forward_path(m, d, path);
    if (!rl_state_ok(d->qacc, m->nv)) {
      hold_reset_state(m, d);
      return;
    }
  }
  double t = prof_start(d), inner = d->prof_clock ? prof_total(d) : 0;
  if (m->opt.integrator == RL_INT_RK4) rl_rk4_with(m, d, rl_forward);
  else if (m->opt.integrator == RL_INT_IMPLICIT) implicit_after(m, d, used);
  else euler_after(m, d, used);
  /* integrate: the time step less the forward passes inside it (RK4's stages, profiled as their stages) */
  if (d->prof_clock) {
    double now = d->prof_clock();
    d->prof[RL_PROF_INTEGRATE] += (now - t) - (prof_total(d) - inner);
  }
  memcpy(d->qacc_warmstart, d->qacc, sizeof(real) * (size_t)m->nv);
}

void rl_step(const rl_model *m, rl_data *d) { rl_step_path(m, d, RL_PATH_AUTO); }
