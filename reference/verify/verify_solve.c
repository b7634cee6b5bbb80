/* verify_solve.c — verify stage 'solve' (see verify.h): rigidlab's Newton and CG on MuJoCo 2.2.2's own
 * constraint problems, against MuJoCo and against the dense LAPACK optimum (lapack_ref.h).
 *
 * Per state, MuJoCo runs mj_forward with the model's options, but with solver=Newton (model copy
 * `newton`), and its extracted problem is copied into rigidlab's data: M (qM, the same tree layout;
 * factored by rl_factor_m), qacc_smooth, qfrc_smooth, the rows (type, id, D, R, aref, frictionloss,
 * J dense or sparse → CSR), the contacts' dim, mu (MuJoCo's regularized-cone mu) and friction, and
 * the warm start MuJoCo used (qacc_warmstart).  So this stage checks the solver alone.
 *
 * Comparisons (rows of the table):
 *   qacc_newton, efc_force_newton  ours vs MuJoCo, both Newton with the model's tolerance/iterations
 *                                  from the same warm start: the same algorithm must stop at the same
 *                                  iterate (stage tolerance);
 *   iter_newton                    |our iterations − MuJoCo's| (absolute, ≤ 1);
 *   cost_newton_excess             max(0, cost(ours) − cost(MuJoCo)) relative to the magnitude of the
 *                                  cost's terms at MuJoCo's iterate (rl_ref_cost_scale; the cost itself
 *                                  nearly vanishes where a ≈ a₀): ours is never worse beyond rounding;
 *   qacc_newton_opt, cost_gap_newton  ours with tolerance 1e-15 (copy of the options) vs the LAPACK
 *                                  optimum a*: the meaningful accuracy check (the problem is strictly
 *                                  convex, a* is unique; a solver stopped at tolerance 1e-8 is not);
 *   qacc_mujoco_opt                MuJoCo with tolerance 1e-15 vs a*: validates the reference and the
 *                                  extraction against MuJoCo's own solver;
 *   qacc_cg                        ours vs MuJoCo, both CG with the model's options (1e-3: see tols);
 *   qacc_cg_opt                    ours CG with tolerance 1e-15 (1000 iterations) vs a* (1e-6: CG's
 *                                  cost-based line search resolves a to about √eps·cond);
 *   newton_dposv                   every Newton system H·x = g our solver factored (with rank-1
 *                                  updates), re-solved by LAPACKE_dposv from an independently built H.
 * Rigidlab's resolution is forced to convex here (MuJoCo has no signorini; it is tested in
 * tests/test_solver.c).  A state whose rows exceed rigidlab's capacities (or whose dense reference cannot be
 * allocated) is left out and counted: left_out_capacity, the running fraction of the states, fails above 10 %.
 * A state without rows has nothing to solve and is not a comparison. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "lapack_ref.h"
#include "verify.h"

enum {
  S_QACC_NEWTON,
  S_FORCE_NEWTON,
  S_ITER_NEWTON,
  S_COST_EXCESS,
  S_QACC_NEWTON_OPT,
  S_COST_GAP,
  S_QACC_MUJOCO_OPT,
  S_QACC_CG,
  S_QACC_CG_OPT,
  S_DPOSV,
  S_DPOSV_COND,
  S_LEFT_CAPACITY,
  S_NQ
};

static const char *const names[S_NQ] = {"qacc_newton",        "efc_force_newton",  "iter_newton",
                                        "cost_newton_excess", "qacc_newton_opt",   "cost_gap_newton",
                                        "qacc_mujoco_opt",    "qacc_cg",           "qacc_cg_opt",
                                        "newton_dposv",       "newton_dposv_cond", "left_out_capacity"};
/* 0: the stage tolerance (tolerances.h: f64 1e-9, f32 1e-3).  CG's line search works on cost differences,
   which resolve a only to about √eps·cond: measured up to 2.3e-7 (f64) against a* on box_stack and
   humanoid, so qacc_cg_opt gets 1e-6 (f64) and 1e-2 (f32).  qacc_cg compares two CG iterates stopped at
   the model's tolerance or iteration cap: on humanoid100 both hit the 100-iteration cap unconverged, where
   rounding differences (MuJoCo's dense vs our CSR products) are amplified, measured 5.1e-5: 1e-3.
   newton_dposv in f32 compares a float factorization with the exact double solve, a difference bounded by
   cond(H)·eps_f32 (measured 6.4e-3 on humanoid100 and incline, 0.12 on box_pyramid's stiff stacked
   contacts): in f32 it must only stay below 0.5, and newton_dposv_cond — the same error divided by
   κ₁(H)·ε (LAPACK dpocon) — carries the accuracy claim in both precisions: ≤ 100 (a single backward-
   stable factorization gives a few units; the Newton factor is also carried through rank-1 updates
   and downdates, which accumulate: measured 2.3 in f64 and 64 in f32 on incline).  efc_force_newton in f32: incline's
   stiff contacts (solimp 0.995) give D ≈ 200·diagApprox⁻¹, f = −D·jar amplifies float rounding (measured
   1.0e-3): 5e-3. */
#if defined(RL_REAL_F32)
static const double tols[S_NQ] = {
    [S_ITER_NEWTON] = 3, [S_FORCE_NEWTON] = 5e-3, [S_QACC_CG] = 1e-2,     [S_QACC_CG_OPT] = 1e-2,
    [S_DPOSV] = 0.5,     [S_DPOSV_COND] = 100,    [S_LEFT_CAPACITY] = 0.1};
#else
static const double tols[S_NQ] = {
    [S_ITER_NEWTON] = 1,    [S_COST_EXCESS] = 1e-12, [S_COST_GAP] = 1e-12,   [S_QACC_CG] = 1e-3,
    [S_QACC_CG_OPT] = 1e-6, [S_DPOSV_COND] = 100,    [S_LEFT_CAPACITY] = 0.1};
#endif
static const int absolute[S_NQ] = {[S_ITER_NEWTON] = 1};
static const int last[S_NQ] = {[S_LEFT_CAPACITY] = 1};

typedef struct own {
  mjModel *newton, *tight, *cg;
  mjData *dn, *dt, *dc;
  double *astar, *buf;
  real *warm;
  int states, left; /* states with rows; of them left out (capacity) */
} own;

static int init(rl_vctx *c) {
  own *o = calloc(1, sizeof *o);
  if (!o) return -1;
  c->own = o;
  const mjModel *mjm = c->p->mjm;
  o->newton = mj_copyModel(NULL, mjm);
  o->newton->opt.solver = mjSOL_NEWTON;
  o->tight = mj_copyModel(NULL, o->newton);
  o->tight->opt.tolerance = 1e-15;
  o->tight->opt.iterations = 100;
  o->cg = mj_copyModel(NULL, mjm);
  o->cg->opt.solver = mjSOL_CG;
  o->dn = mj_makeData(o->newton);
  o->dt = mj_makeData(o->tight);
  o->dc = mj_makeData(o->cg);
  o->astar = calloc((size_t)mjm->nv + 1, sizeof(double));
  o->buf = calloc((size_t)mjm->nv + 1, sizeof(double));
  o->warm = calloc((size_t)mjm->nv + 1, sizeof(real));
  return o->dn && o->dt && o->dc && o->astar && o->buf && o->warm ? 0 : -1;
}

static void fini(rl_vctx *c) {
  own *o = c->own;
  if (!o) return;
  if (o->dn) mj_deleteData(o->dn);
  if (o->dt) mj_deleteData(o->dt);
  if (o->dc) mj_deleteData(o->dc);
  if (o->newton) mj_deleteModel(o->newton);
  if (o->tight) mj_deleteModel(o->tight);
  if (o->cg) mj_deleteModel(o->cg);
  free(o->astar);
  free(o->buf);
  free(o->warm);
  free(o);
  c->own = NULL;
}

/* mj_forward of model mm at the state held by src (qpos, qvel, ctrl, act, warm start) */
static void mj_run(const mjModel *mm, mjData *dst, const mjData *src, int nq, int nv, int nu) {
  memcpy(dst->qpos, src->qpos, sizeof(double) * (size_t)nq);
  memcpy(dst->qvel, src->qvel, sizeof(double) * (size_t)nv);
  memcpy(dst->ctrl, src->ctrl, sizeof(double) * (size_t)nu);
  memcpy(dst->qacc_warmstart, src->qacc_warmstart, sizeof(double) * (size_t)nv);
  memcpy(dst->qfrc_applied, src->qfrc_applied, sizeof(double) * (size_t)nv);
  rl_mj_copy_inputs(mm, dst, src);
  mj_forward(mm, dst);
}

/* err = ‖ours − a*‖∞, mag = ‖a*‖∞ */
static void compare_opt(rl_vq *q, const real *ours, const double *astar, int nv) { rl_vq_compare(q, ours, astar, nv); }

static void state(rl_vctx *c, rl_vq *q) {
  own *o = c->own;
  const rl_pair *p = c->p;
  rl_data *d = c->d;
  const mjModel *mjm = p->mjm;
  int nv = mjm->nv;
  mj_run(o->newton, o->dn, c->mjd, mjm->nq, nv, mjm->nu);
  if (o->dn->nefc == 0) return; /* nothing to solve in this state */
  o->states++;
  int copied = rl_ref_copy_mujoco(o->newton, o->dn, p->m, d) == 0;
  rl_model mm = *p->m; /* shallow copy: same arrays, own options */
  mm.opt.contact_resolution = RL_RES_CONVEX;
  mm.opt.solver = RL_SOLVER_NEWTON;
  rl_ref_problem ref;
  if (!copied || rl_ref_problem_make(&ref, p->m, d)) {
    o->left++;
    rl_vq_record(&q[S_LEFT_CAPACITY], (double)o->left / o->states, 1);
    return;
  }
  rl_vq_record(&q[S_LEFT_CAPACITY], (double)o->left / o->states, 1);
  double cost_star = 0;
  rl_ref_optimum(&ref, o->astar, &cost_star, NULL);
  /* the warm start MuJoCo's solve began from: the state's (mj_forward overwrites o->dn's with its answer) */
  for (int i = 0; i < nv; i++) o->warm[i] = (real)c->mjd->qacc_warmstart[i];

  /* Newton, model options, every system re-solved by dposv */
  rl_ref_newton_check chk = {.p = &ref};
  rl_solver_observer obs = rl_ref_observer(&chk);
  memcpy(d->qacc, o->warm, sizeof(real) * (size_t)nv);
  rl_constraint_solve_observed(&mm, d, &obs);
  rl_vq_compare(&q[S_QACC_NEWTON], d->qacc, o->dn->qacc, nv);
  rl_vq_compare(&q[S_FORCE_NEWTON], d->efc_force, o->dn->efc_force, d->nefc);
  rl_vq_record(&q[S_ITER_NEWTON], fabs((double)d->solver_iter - o->dn->solver_iter), 1);
  double c_ours = rl_ref_cost_real(&ref, d->qacc);
  for (int i = 0; i < nv; i++) o->buf[i] = o->dn->qacc[i];
  double c_mj = rl_ref_cost(&ref, o->buf, NULL, NULL);
  rl_vq_record(&q[S_COST_EXCESS], c_ours > c_mj ? c_ours - c_mj : 0, rl_ref_cost_scale(&ref, o->buf));
  rl_vq_record(&q[S_DPOSV], chk.failed ? INFINITY : chk.max_rel, 1);
  rl_vq_record(&q[S_DPOSV_COND], chk.failed ? INFINITY : chk.max_rel_cond, 1);

  /* Newton to tolerance 1e-15 vs the LAPACK optimum */
  rl_model mt = mm;
  mt.opt.tolerance = (real)1e-15;
  mt.opt.iterations = 100;
  memcpy(d->qacc, o->warm, sizeof(real) * (size_t)nv);
  rl_constraint_solve(&mt, d);
  compare_opt(&q[S_QACC_NEWTON_OPT], d->qacc, o->astar, nv);
  rl_vq_record(&q[S_COST_GAP], fabs(rl_ref_gap(&ref, d->qacc, cost_star)), rl_ref_cost_scale(&ref, o->astar));

  /* MuJoCo to tolerance 1e-15 vs the optimum */
  mj_run(o->tight, o->dt, c->mjd, mjm->nq, nv, mjm->nu);
  {
    double err = 0, mag = 0;
    for (int i = 0; i < nv; i++) {
      double e = fabs(o->dt->qacc[i] - o->astar[i]);
      if (!(e <= err)) err = e;
      if (fabs(o->astar[i]) > mag) mag = fabs(o->astar[i]);
    }
    rl_vq_record(&q[S_QACC_MUJOCO_OPT], err, mag);
  }

  /* CG, model options, vs MuJoCo's CG; then CG to tolerance 1e-15 vs the optimum */
  mj_run(o->cg, o->dc, c->mjd, mjm->nq, nv, mjm->nu);
  rl_model mc = mm;
  mc.opt.solver = RL_SOLVER_CG;
  memcpy(d->qacc, o->warm, sizeof(real) * (size_t)nv);
  rl_constraint_solve(&mc, d);
  rl_vq_compare(&q[S_QACC_CG], d->qacc, o->dc->qacc, nv);
  mc.opt.tolerance = (real)1e-15;
  mc.opt.iterations = 1000;
  memcpy(d->qacc, o->warm, sizeof(real) * (size_t)nv);
  rl_constraint_solve(&mc, d);
  compare_opt(&q[S_QACC_CG_OPT], d->qacc, o->astar, nv);
  rl_ref_problem_free(&ref);
}

const rl_vmodule rl_vmod_solve = {.stage = RL_STAGE_SOLVE,
                                  .nq = S_NQ,
                                  .names = names,
                                  .tol = tols,
                                  .absolute = absolute,
                                  .last = last,
                                  .init = init,
                                  .state = state,
                                  .fini = fini};
