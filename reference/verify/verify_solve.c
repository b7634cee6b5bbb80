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
 *                                  (with noslip on, over the rows that act on some dof: see force_rows;
 *                                  immobile_rows_J checks that the rows left out act on none,
 *                                  left_out_rows_immobile counts them);
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
#include <stdio.h>
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
  S_QACC_PGS,
  S_FORCE_PGS,
  S_ITER_PGS,
  S_LEFT_IMMOBILE,
  S_LEFT_ROWS_IMMOBILE,
  S_NQ
};

static const char *const names[S_NQ] = {"qacc_newton",        "efc_force_newton",  "iter_newton",
                                        "cost_newton_excess", "qacc_newton_opt",   "cost_gap_newton",
                                        "qacc_mujoco_opt",    "qacc_cg",           "qacc_cg_opt",
                                        "newton_dposv",       "newton_dposv_cond", "left_out_capacity",
                                        "qacc_pgs",           "efc_force_pgs",     "iter_pgs", "immobile_rows_J",
                                        "left_out_rows_immobile"};
/* 0: the stage tolerance (tolerances.h: f64 1e-9, f32 1e-3).  CG's line search works on cost differences,
   which resolve a only to about √eps·cond: measured up to 2.3e-7 (f64) against a* on box_stack and
   humanoid, so qacc_cg_opt gets 1e-6 (f64) and 1e-2 (f32).  qacc_cg compares two CG iterates stopped at
   the model's tolerance or iteration cap: on humanoid100 both hit the 100-iteration cap unconverged, where
   rounding differences (MuJoCo's dense vs our CSR products) are amplified, measured 5.1e-5: 1e-3.
   newton_dposv in f32 compares a float factorization with the exact double solve, a difference bounded by
   cond(H)·eps_f32 (measured 6.4e-3 on humanoid100 and incline, 0.12 on box_pyramid's stiff stacked
   contacts, 0.70 on contact_pair's elliptic cone, where κ₁(H)·ε_f32 = 1.7e-2 and the tree factorization of H
   gives 42 of it, the dense one 29): in f32 it must only stay below 1 (a solve that is not rounding-bounded
   garbage, which newton_dposv_cond would also catch), and newton_dposv_cond — the same error divided by
   κ₁(H)·ε (LAPACK dpocon) — carries the accuracy claim in both precisions: ≤ 100 (a single backward-
   stable factorization gives a few units; the Newton factor is also carried through rank-1 updates
   and downdates, which accumulate: measured 2.3 in f64 and 64 in f32 on incline).  efc_force_newton in f32: incline's
   stiff contacts (solimp 0.995) give D ≈ 200·diagApprox⁻¹, f = −D·jar amplifies float rounding (measured
   1.0e-3): 5e-3.  PGS in f64: the same sweeps on the same rows in the same order, 1e-12 (measured
   1.6e-14 on box_stack, 4.7e-15 on humanoid); in f32 its stopping test compares a float improvement
   with the tolerance, so the sweep counts part (measured up to 98 of 100 on box_stack with the elliptic
   cone: iter_pgs is not a row in f32) and the forces differ by what the extra sweeps move (measured
   9.8e-4): 1e-2. */
#if defined(RL_REAL_F32)
static const double tols[S_NQ] = {
    [S_ITER_NEWTON] = 3, [S_FORCE_NEWTON] = 5e-3, [S_QACC_CG] = 1e-2,     [S_QACC_CG_OPT] = 1e-2,
    [S_DPOSV] = 1,       [S_DPOSV_COND] = 100,    [S_LEFT_CAPACITY] = 0.1, [S_QACC_PGS] = 1e-2,
    [S_FORCE_PGS] = 1e-2, [S_LEFT_IMMOBILE] = 1e-12, [S_LEFT_ROWS_IMMOBILE] = 1};
#else
static const double tols[S_NQ] = {
    [S_ITER_NEWTON] = 1,    [S_COST_EXCESS] = 1e-12, [S_COST_GAP] = 1e-12,   [S_QACC_CG] = 1e-3,
    [S_QACC_CG_OPT] = 1e-6, [S_DPOSV_COND] = 100,    [S_LEFT_CAPACITY] = 0.1, [S_QACC_PGS] = 1e-12,
    [S_FORCE_PGS] = 1e-12,  [S_ITER_PGS] = 0.5,      [S_LEFT_IMMOBILE] = 1e-12, [S_LEFT_ROWS_IMMOBILE] = 1};
#endif
static const int absolute[S_NQ] = {[S_ITER_NEWTON] = 1, [S_ITER_PGS] = 1};
static const int last[S_NQ] = {[S_LEFT_CAPACITY] = 1, [S_LEFT_ROWS_IMMOBILE] = 1};

typedef struct own {
  mjModel *newton, *tight, *cg, *pgs;
  mjData *dn, *dt, *dc, *dp; /* verify's scratch data (rl_vscratch): dn, and dt = dc = dp */
  double *astar, *buf;
  real *warm;
  int states, left; /* states with rows; of them left out (capacity) */
  long rows, immobile; /* rows compared by efc_force_newton so far; of them left out as immobile */
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
  o->tight->opt.noslip_iterations = 0; /* the optimum rows check the main solver; noslip: qacc_newton, qacc_cg */
  o->cg = mj_copyModel(NULL, mjm);
  o->cg->opt.solver = mjSOL_CG;
  /* verify's scratch data: dn holds MuJoCo's Newton answer until its rows are compared; the tight, CG and PGS
     runs come after and share one */
  o->dn = rl_vq_scratch(c->scratch, 0);
  o->dt = o->dc = o->dp = rl_vq_scratch(c->scratch, 1);
  if (mjm->opt.solver == mjSOL_PGS) o->pgs = mj_copyModel(NULL, mjm);
  o->astar = calloc((size_t)mjm->nv + 1, sizeof(double));
  o->buf = calloc((size_t)mjm->nv + 1, sizeof(double));
  o->warm = calloc((size_t)mjm->nv + 1, sizeof(real));
  return o->dn && o->dt && o->dc && o->astar && o->buf && o->warm ? 0 : -1;
}

static void fini(rl_vctx *c) {
  own *o = c->own;
  if (!o) return;
  if (o->immobile)
    fprintf(stderr, "verify solve: %ld of %ld rows left out of efc_force_newton: noslip force on a row that acts on no dof "
                    "(A_ii below MuJoCo's 1e-10 clamp; see immobile_rows_J)\n", o->immobile, o->rows);
  if (o->pgs) mj_deleteModel(o->pgs);
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

/* PGS (a model that asks for it), model options, against MuJoCo's PGS from the same warm start: the
   state's qacc_warmstart as mj_run hands it to MuJoCo (each mj_forward overwrites its own copy with the
   qacc it found, so dn's is Newton's answer, which would start PGS at the optimum), or zero (cold:
   the primal force at q̈ = 0, many sweeps) */
/* em = (‖ours − ref‖∞, ‖ref‖∞) */
static void inf_diff(const real *ours, const double *ref, int n, double *em) {
  em[0] = em[1] = 0;
  for (int i = 0; i < n; i++) {
    double e = fabs((double)ours[i] - ref[i]);
    if (!(e <= em[0])) em[0] = e;
    if (fabs(ref[i]) > em[1]) em[1] = fabs(ref[i]);
  }
}

/* em: qacc (err, mag), efc_force (err, mag), |iteration difference| */
static void pgs_compare(rl_vctx *c, const rl_model *mm, int cold, double *em) {
  own *o = c->own;
  const mjModel *mjm = c->p->mjm;
  rl_data *d = c->d;
  int nv = mjm->nv;
  mjData *src = c->mjd;
  double *keep = o->buf;
  memcpy(keep, src->qacc_warmstart, sizeof(double) * (size_t)nv);
  if (cold) memset(src->qacc_warmstart, 0, sizeof(double) * (size_t)nv);
  mj_run(o->pgs, o->dp, src, mjm->nq, nv, mjm->nu);
  rl_model mp = *mm;
  mp.opt.solver = RL_SOLVER_PGS;
  for (int i = 0; i < nv; i++) d->qacc[i] = (real)src->qacc_warmstart[i];
  memcpy(src->qacc_warmstart, keep, sizeof(double) * (size_t)nv);
  rl_constraint_solve(&mp, d);
  inf_diff(d->qacc, o->dp->qacc, nv, em);
  inf_diff(d->efc_force, o->dp->efc_force, d->nefc, em + 2);
  em[4] = fabs((double)d->solver_iter - o->dp->solver_iter);
}

/* the worse (by err/mag) of two (err, mag) pairs */
static const double *worse(const double *a, const double *b) {
  double ra = a[0] / (a[1] > 0 ? a[1] : 1), rb = b[0] / (b[1] > 0 ? b[1] : 1);
  return rb > ra || rb != rb ? b : a;
}

/* the PGS rows: the worse of the warm and the cold start, one record per state */
static void pgs_rows(rl_vctx *c, rl_vq *q, const rl_model *mm) {
  double w[5], z[5];
  pgs_compare(c, mm, 0, w);
  pgs_compare(c, mm, 1, z);
  const double *a = worse(w, z), *f = worse(w + 2, z + 2);
  rl_vq_record(&q[S_QACC_PGS], a[0], a[1]);
  rl_vq_record(&q[S_FORCE_PGS], f[0], f[1]);
  rl_vq_record(&q[S_ITER_PGS], w[4] > z[4] ? w[4] : z[4], 1);
}

/* row i's diagonal of MuJoCo's A = AR − R (dense or sparse efc_AR) */
static double mj_a_diag(const mjModel *mjm, const mjData *mjd, int i) {
  if (!mj_isSparse(mjm)) return mjd->efc_AR[(size_t)i * (mjd->nefc + 1)] - mjd->efc_R[i];
  int adr = mjd->efc_AR_rowadr[i];
  for (int k = 0; k < mjd->efc_AR_rownnz[i]; k++)
    if (mjd->efc_AR_colind[adr + k] == i) return mjd->efc_AR[adr + k] - mjd->efc_R[i];
  return -mjd->efc_R[i];
}

/* max |row i of MuJoCo's efc_J| */
static double mj_j_rownorm(const mjModel *mjm, const mjData *mjd, int i) {
  double r = 0;
  if (mj_isSparse(mjm)) {
    int adr = mjd->efc_J_rowadr[i];
    for (int k = 0; k < mjd->efc_J_rownnz[i]; k++) r = fmax(r, fabs(mjd->efc_J[adr + k]));
  } else {
    for (int k = 0; k < mjm->nv; k++) r = fmax(r, fabs(mjd->efc_J[(size_t)i * mjm->nv + k]));
  }
  return r;
}

/* efc_force_newton over the rows, and immobile_rows_J.  With noslip on, a row whose A_ii = (J·M⁻¹·Jᵀ)_ii is
   below MuJoCo's clamp 1e-10 gets from the noslip sweep the force −(rounding residue of b + AR·f − R·f)/1e-10.
   Where its Jacobian row is zero to rounding (the out-of-plane friction direction of a planar model) that force
   acts on no dof and is rounding noise times 1e10: measured 5.6e-7 N apart on dm_stacker_noslip, J row 4e-17,
   while MuJoCo's own sweep transcribed and rerun on MuJoCo's data agrees with MuJoCo to 1.5e-15.  Such rows are
   left out of efc_force_newton and counted (left_out_rows_immobile: the running fraction of the rows, a tally
   with tolerance 1, and stderr at the end); immobile_rows_J is the largest |J row|∞ among them relative to ‖J‖∞
   and must stay at rounding level, so a clamped row that does act on a dof fails there; qacc_newton still
   checks the forces' effect. */
static void force_rows(own *o, const mjModel *mjm, const rl_data *d, rl_vq *qf, rl_vq *qj, rl_vq *qn) {
  const mjData *mjd = o->dn;
  double err = 0, mag = 0, jleft = 0, jmax = 0;
  for (int i = 0; i < d->nefc; i++) jmax = fmax(jmax, mj_j_rownorm(mjm, mjd, i));
  for (int i = 0; i < d->nefc; i++) {
    o->rows++;
    if (mjm->opt.noslip_iterations > 0 && mj_a_diag(mjm, mjd, i) < 1e-10) {
      o->immobile++;
      jleft = fmax(jleft, mj_j_rownorm(mjm, mjd, i));
      continue;
    }
    double e = fabs((double)d->efc_force[i] - mjd->efc_force[i]);
    if (!(e <= err)) err = e;
    if (fabs(mjd->efc_force[i]) > mag) mag = fabs(mjd->efc_force[i]);
  }
  rl_vq_record(qf, err, mag);
  rl_vq_record(qj, jleft, jmax);
  rl_vq_record(qn, (double)o->immobile / (double)o->rows, 1);
}

static void state(rl_vctx *c, rl_vq *q) {
  own *o = c->own;
  const rl_pair *p = c->p;
  rl_data *d = c->d;
  const mjModel *mjm = p->mjm;
  int nv = mjm->nv;
  q[S_QACC_PGS].absent = q[S_FORCE_PGS].absent = !o->pgs;
  q[S_ITER_PGS].absent = !o->pgs || sizeof(real) == sizeof(float);
  q[S_LEFT_IMMOBILE].absent = q[S_LEFT_ROWS_IMMOBILE].absent = mjm->opt.noslip_iterations == 0;
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
  force_rows(o, mjm, d, &q[S_FORCE_NEWTON], &q[S_LEFT_IMMOBILE], &q[S_LEFT_ROWS_IMMOBILE]);
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
  mt.opt.noslip_iterations = 0;
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
  mc.opt.noslip_iterations = 0;
  memcpy(d->qacc, o->warm, sizeof(real) * (size_t)nv);
  rl_constraint_solve(&mc, d);
  compare_opt(&q[S_QACC_CG_OPT], d->qacc, o->astar, nv);
  rl_ref_problem_free(&ref);

  if (o->pgs) pgs_rows(c, q, &mm);
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
