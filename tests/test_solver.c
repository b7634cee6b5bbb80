/* test_solver.c — Newton and CG (engine/solver.c) on MuJoCo 2.2.2's extracted constraint problems,
 * against the dense LAPACK references (reference/verify/lapack_ref.c).  Compiled per precision (-DRL_REAL_F64 /
 * -DRL_REAL_F32); every numerical assertion has an f64 and an f32 tolerance. */
#define _DEFAULT_SOURCE /* mkstemps */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "lapack_ref.h"
#include "pair.h"
#include "rl_test_pair.h"
#include "scale_scene.h"
#include "states.h"

#define SCENE(name) SRCDIR "/experiments/scenes/" name
#define HUMANOID    "/usr/share/mujoco/model/humanoid/humanoid.xml"
#define HUMANOID100 "/usr/share/mujoco/model/humanoid100/humanoid100.xml"

#if defined(RL_REAL_F32)
#define TOL(f64, f32) (f32)
#else
#define TOL(f64, f32) (f64)
#endif

/* the fixture with this suite's seed (rl_test_pair.h; a load error fails the test) */
static void fixture_open(fixture *f, const char *model, const char *const *opts, int nopts, int nstates) {
  fixture_open_seeded(f, model, opts, nopts, nstates, 11);
}

/* state s → MuJoCo's problem in f->d; 0 if it has rows */
static int fixture_state(fixture *f, int s) {
  const rl_states *S = &f->S;
  rl_set_state(&f->p, f->d, f->mjd, S->qpos + (size_t)s * S->nq, S->qvel + (size_t)s * S->nv,
               S->ctrl + (size_t)s * S->nu);
  mj_forward(f->p.mjm, f->mjd);
  if (f->mjd->nefc == 0) return -1;
  return rl_ref_copy_mujoco(f->p.mjm, f->mjd, f->p.m, f->d);
}

static double rel_err(const real *x, const double *ref, int n) {
  double e = 0, m = 0;
  for (int i = 0; i < n; i++) {
    if (!(fabs(x[i] - ref[i]) <= e)) e = fabs(x[i] - ref[i]);
    if (fabs(ref[i]) > m) m = fabs(ref[i]);
  }
  return e / (m > 1e-300 ? m : 1);
}

/* the fixture of MODEL (--opt CONE when not NULL) and *mt: its model with SOLVER at tolerance 1e-15 (CG 1000
   iterations, Newton 100), convex resolution */
static void fixture_open_tight(fixture *f, rl_model *mt, const char *model, const char *cone, int solver, int nstates) {
  const char *opts[1] = {cone};
  fixture_open(f, model, opts, cone ? 1 : 0, nstates);
  *mt = *f->p.m;
  mt->opt.solver = solver;
  mt->opt.contact_resolution = RL_RES_CONVEX;
  mt->opt.tolerance = (real)1e-15;
  mt->opt.iterations = solver == RL_SOLVER_CG ? 1000 : 100;
}

/* Solve every state's problem with `solver` to tolerance 1e-15 (convex resolution) and compare with
   the LAPACK optimum; Newton systems re-solved by dposv; cost never rises between iterations. */
static void check_model(const char *model, const char *cone, int solver, int nstates) {
  fixture f;
  rl_model mt;
  fixture_open_tight(&f, &mt, model, cone, solver, nstates);
  real scale = rl_solver_meaninertia(f.p.m) * (real)(f.p.m->nv > 1 ? f.p.m->nv : 1);
  double *astar = calloc((size_t)f.p.m->nv + 1, sizeof(double));
  int nsolved = 0;
  for (int s = 0; s < f.S.n; s++) {
    if (fixture_state(&f, s)) continue;
    rl_ref_problem ref;
    cr_assert_eq(rl_ref_problem_make(&ref, f.p.m, f.d), 0);
    double cstar;
    cr_expect_eq(rl_ref_optimum(&ref, astar, &cstar, NULL), 0, "%s state %d: LAPACK reference did not settle", model,
                 s);
    rl_ref_newton_check chk = {.p = &ref};
    rl_solver_observer obs = rl_ref_observer(&chk);
    memset(f.d->qacc, 0, sizeof(real) * (size_t)f.p.m->nv);
    double c0 = rl_ref_cost_real(&ref, f.d->qacc_smooth);
    rl_constraint_solve_observed(&mt, f.d, &obs);
    double e = rel_err(f.d->qacc, astar, f.p.m->nv);
    /* CG's line search works on cost differences, which resolve a only to ~√eps·cond: 1e-6 (f64) */
    double tol = solver == RL_SOLVER_CG ? TOL(1e-6, 1e-2) : TOL(1e-9, 1e-4);
    cr_expect(e <= tol, "%s %s solver %d state %d: qacc vs LAPACK optimum rel %.3g", model, cone ? cone : "", solver, s,
              e);
    double gap = rl_ref_gap(&ref, f.d->qacc, cstar);
    /* f32: CG's cost-based line search stops at relative cost resolution ~1e-5 (measured 3.2e-6) */
    double gtol = solver == RL_SOLVER_CG ? TOL(1e-12, 1e-4) : TOL(1e-12, 1e-6);
    cr_expect(gap >= -gtol * fabs(cstar) && gap <= gtol * fabs(cstar) + 1e-300,
              "%s state %d: objective gap %.3g (cost* %.6g)", model, s, gap, cstar);
    if (solver == RL_SOLVER_NEWTON) {
      cr_expect(chk.nsystems >= 1 && chk.failed == 0, "state %d: no Newton system checked", s);
      /* f32: a float factorization vs the exact double solve differs by ~cond(H)·eps_f32 (measured 6.5e-3) */
      cr_expect(chk.max_rel <= TOL(1e-9, 3e-2), "%s state %d: Newton system vs dposv rel %.3g", model, s, chk.max_rel);
    }
    /* stats: monotone cost, sane counters */
    cr_expect(f.d->solver_iter >= 1 && f.d->solver_iter <= mt.opt.iterations);
    for (int k = 0; k < f.d->solver_iter && k < RL_NSOLVER; k++) {
      const rl_solver_stat *st = f.d->solver + k;
      cr_expect(st->improvement * scale >= -TOL(1e-10, 1e-4) * (c0 + 1e-300), "state %d iter %d: cost rose by %.3g", s,
                k, -(double)st->improvement * scale);
      cr_expect(st->gradient >= 0 && st->nactive >= 0 && st->nactive <= f.d->nefc && st->neval >= 1 &&
                st->nchange >= 0 && st->nchange <= f.d->nefc);
    }
    rl_ref_problem_free(&ref);
    nsolved++;
  }
  cr_expect(nsolved >= 1, "%s: no state with constraint rows", model);
  free(astar);
  fixture_close(&f);
}

/* The reference's two factorizations of the same Newton systems: LAPACKE_dposv on H made dense (the default up to
   400 dofs) and CHOLMOD's supernodal Cholesky of H sparse (beyond), each forced through dense_max_nv.  On every
   state with rows of box_stack (both cones), MuJoCo's humanoid and tests/models/particle_box.xml (450 dofs, 150
   spheres): the optima agree to 1e-12, and the engine's Newton
   systems re-solved by CHOLMOD agree with the engine as the dposv ones must (newton_dposv ≤ 1e-9, 3e-2 in f32; its
   κ₁-scaled form ≤ 100, κ₁ from LAPACK's estimator dlacn2 on CHOLMOD's factor). */
static void reference_paths_agree(const char *model, const char *cone, int nstates, int dense_default) {
  fixture f;
  rl_model mt;
  fixture_open_tight(&f, &mt, model, cone, RL_SOLVER_NEWTON, nstates);
  int nv = f.p.m->nv, nsolved = 0;
  double *a_dense = calloc((size_t)nv + 1, sizeof(double)), *a_sparse = calloc((size_t)nv + 1, sizeof(double));
  real *warm = calloc((size_t)nv + 1, sizeof(real));
  for (int s = 0; s < f.S.n; s++) {
    if (fixture_state(&f, s)) continue;
    rl_ref_problem ref;
    cr_assert_eq(rl_ref_problem_make(&ref, f.p.m, f.d), 0);
    cr_assert_eq(ref.dense_max_nv >= nv, dense_default, "%s: %d dofs should take the %s path by default", model, nv,
                 dense_default ? "dense" : "CHOLMOD");
    double c_dense, c_sparse;
    rl_ref_newton_check chk_dense = {.p = &ref}, chk_sparse = {.p = &ref};
    memcpy(warm, f.d->qacc_smooth, sizeof(real) * (size_t)nv);
    for (int path = 0; path < 2; path++) { /* 0: dense, 1: CHOLMOD */
      ref.dense_max_nv = path ? 0 : nv;
      cr_expect_eq(rl_ref_optimum(&ref, path ? a_sparse : a_dense, path ? &c_sparse : &c_dense, NULL), 0,
                   "%s state %d: %s reference did not settle", model, s, path ? "CHOLMOD" : "dense");
      rl_solver_observer obs = rl_ref_observer(path ? &chk_sparse : &chk_dense);
      memcpy(f.d->qacc, warm, sizeof(real) * (size_t)nv);
      rl_constraint_solve_observed(&mt, f.d, &obs);
    }
    double e = 0, m = 0;
    for (int i = 0; i < nv; i++) e = fmax(e, fabs(a_dense[i] - a_sparse[i])), m = fmax(m, fabs(a_dense[i]));
    cr_expect(e <= 1e-12 * (m > 0 ? m : 1), "%s %s state %d: optimum dense vs CHOLMOD rel %.3g", model,
              cone ? cone : "", s, e / (m > 0 ? m : 1));
    cr_expect(chk_dense.nsystems >= 1 && chk_sparse.nsystems == chk_dense.nsystems && !chk_dense.failed &&
                  !chk_sparse.failed,
              "%s state %d: Newton systems checked %d dense, %d CHOLMOD (failed %d, %d)", model, s, chk_dense.nsystems,
              chk_sparse.nsystems, chk_dense.failed, chk_sparse.failed);
    cr_expect(chk_sparse.max_rel <= TOL(1e-9, 3e-2) && chk_sparse.max_rel_cond <= 100,
              "%s state %d: Newton systems vs CHOLMOD rel %.3g (%.3g κ₁ε)", model, s, chk_sparse.max_rel,
              chk_sparse.max_rel_cond);
    rl_ref_problem_free(&ref);
    nsolved++;
  }
  cr_expect(nsolved >= 1, "%s: no state with constraint rows", model);
  free(a_dense);
  free(a_sparse);
  free(warm);
  fixture_close(&f);
}

Test(solver, reference_dense_and_cholmod_paths_agree) {
  reference_paths_agree(SCENE("box_stack.xml"), NULL, 10, 1);
  reference_paths_agree(SCENE("box_stack.xml"), "cone=elliptic", 10, 1);
  if (!access(HUMANOID, R_OK)) reference_paths_agree(HUMANOID, NULL, 10, 1);
  reference_paths_agree(SRCDIR "/tests/models/particle_box.xml", NULL, 10, 0); /* 450 dofs: CHOLMOD by default */
}

Test(solver, newton_scenes_pyramidal) {
  check_model(SCENE("box_stack.xml"), NULL, RL_SOLVER_NEWTON, 12);
  check_model(SCENE("incline.xml"), NULL, RL_SOLVER_NEWTON, 12);
  check_model(SCENE("microduck.xml"), NULL, RL_SOLVER_NEWTON, 12);
}
Test(solver, newton_scenes_elliptic) {
  check_model(SCENE("box_stack.xml"), "cone=elliptic", RL_SOLVER_NEWTON, 12);
  check_model(SCENE("incline.xml"), "cone=elliptic", RL_SOLVER_NEWTON, 12);
}
Test(solver, cg_scenes_both_cones) {
  check_model(SCENE("box_stack.xml"), NULL, RL_SOLVER_CG, 8);
  check_model(SCENE("box_stack.xml"), "cone=elliptic", RL_SOLVER_CG, 8);
}
Test(solver, humanoid_both_solvers_both_cones, .timeout = 300) {
  if (access(HUMANOID, R_OK)) cr_skip_test("libmujoco-samples not installed");
  check_model(HUMANOID, NULL, RL_SOLVER_NEWTON, 16);
  check_model(HUMANOID, "cone=elliptic", RL_SOLVER_NEWTON, 16);
  check_model(HUMANOID, NULL, RL_SOLVER_CG, 8);
  check_model(HUMANOID, "cone=elliptic", RL_SOLVER_CG, 8);
}

/* Same algorithm, same arithmetic order: with MuJoCo's default tolerance we stop where MuJoCo stops. */
Test(solver, newton_matches_mujoco_iterate) {
  fixture f;
  fixture_open(&f, SCENE("box_stack.xml"), NULL, 0, 12);
  rl_model mm = *f.p.m;
  mm.opt.contact_resolution = RL_RES_CONVEX;
  for (int s = 0; s < f.S.n; s++) {
    if (fixture_state(&f, s)) continue;
    for (int i = 0; i < f.p.m->nv; i++) f.d->qacc[i] = (real)f.mjd->qacc_warmstart[i];
    rl_constraint_solve(&mm, f.d);
    double e = rel_err(f.d->qacc, f.mjd->qacc, f.p.m->nv);
    cr_expect(e <= TOL(1e-9, 1e-3), "state %d: qacc vs MuJoCo rel %.3g", s, e);
    cr_expect_eq(f.d->solver_converged, 1, "state %d: default tolerance not met", s);
  }
  fixture_close(&f);
}

/* iterations = 1 with an unreachable tolerance: recorded as not converged, never fatal, still a descent */
Test(solver, forced_nonconvergence_is_recorded) {
  fixture f;
  fixture_open(&f, SCENE("box_stack.xml"), NULL, 0, 12);
  rl_model mm = *f.p.m;
  mm.opt.iterations = 1;
  mm.opt.tolerance = 0;
  int seen = 0;
  for (int s = 0; s < f.S.n; s++) {
    if (fixture_state(&f, s)) continue;
    rl_ref_problem ref;
    rl_ref_problem_make(&ref, f.p.m, f.d);
    memset(f.d->qacc, 0, sizeof(real) * (size_t)f.p.m->nv);
    double c0 = rl_ref_cost_real(&ref, f.d->qacc_smooth), cz = rl_ref_cost_real(&ref, f.d->qacc);
    rl_constraint_solve(&mm, f.d);
    cr_expect_eq(f.d->solver_converged, 0, "state %d", s);
    cr_expect_leq(f.d->solver_iter, 1);
    for (int i = 0; i < f.p.m->nv; i++) cr_expect(isfinite((double)f.d->qacc[i]));
    double c1 = rl_ref_cost_real(&ref, f.d->qacc);
    cr_expect(c1 <= fmin(c0, cz) * (1 + TOL(1e-12, 1e-5)), "state %d: one iteration raised the cost", s);
    rl_ref_problem_free(&ref);
    seen++;
  }
  cr_expect(seen > 0);
  fixture_close(&f);
}

/* the warm start is used when it is cheaper: solving from the optimum takes no more than one iteration */
Test(solver, warm_start_from_optimum) {
  fixture f;
  fixture_open(&f, SCENE("box_stack.xml"), NULL, 0, 12);
  rl_model mm = *f.p.m;
  mm.opt.contact_resolution = RL_RES_CONVEX;
  for (int s = 0; s < f.S.n; s++) {
    if (fixture_state(&f, s)) continue;
    memcpy(f.d->qacc, f.d->qacc_smooth, sizeof(real) * (size_t)f.p.m->nv);
    rl_constraint_solve(&mm, f.d);
    int cold = f.d->solver_iter;
    rl_constraint_solve(&mm, f.d); /* qacc now holds the solution */
    /* f32 cannot meet tolerance 1e-8 by the gradient test: it stops on a zero improvement, one step later */
    cr_expect_leq(f.d->solver_iter, cold > TOL(1, 2) ? TOL(1, 2) : cold, "state %d: warm %d iterations, cold %d", s,
                  f.d->solver_iter, cold);
    mm.opt.disableflags |= RL_DSBL_WARMSTART;
    rl_constraint_solve(&mm, f.d);
    cr_expect_eq(f.d->solver_iter, cold, "state %d: warm start disabled must equal the cold start", s);
    mm.opt.disableflags &= ~RL_DSBL_WARMSTART;
  }
  fixture_close(&f);
}

/* skyline = dense and tree = dense on humanoid100 (many trees coupled only by contacts: the tree re-hangs the
   humanoids that touch one below another), and AUTO picks the tree */
/* Newton on d's rows with the dense factorization, then with factorization KIND (m's options otherwise), both
   from a zero warm start: *err = max|q̈_kind − q̈_dense|, *mag = max|q̈_dense|, and both iteration counts. */
static void factor_vs_dense(const rl_model *m, rl_data *d, int kind, real *qd, double *err, double *mag, int *it_dense,
                            int *it_kind) {
  int nv = m->nv;
  rl_model mm = *m;
  mm.opt.newton_factor = RL_FACTOR_DENSE;
  memset(d->qacc, 0, sizeof(real) * (size_t)nv);
  rl_constraint_solve(&mm, d);
  memcpy(qd, d->qacc, sizeof(real) * (size_t)nv);
  *it_dense = d->solver_iter;
  mm.opt.newton_factor = kind;
  memset(d->qacc, 0, sizeof(real) * (size_t)nv);
  rl_constraint_solve(&mm, d);
  *it_kind = d->solver_iter;
  double e = 0, mg = 0;
  for (int i = 0; i < nv; i++) {
    e = fmax(e, fabs((double)d->qacc[i] - qd[i]));
    mg = fmax(mg, fabs((double)qd[i]));
  }
  *err = e;
  *mag = mg;
}

Test(solver, skyline_and_tree_equal_dense_humanoid100, .timeout = 300) {
  if (access(HUMANOID100, R_OK)) cr_skip_test("libmujoco-samples not installed");
  fixture f;
  fixture_open(&f, HUMANOID100, NULL, 0, 6);
  int nv = f.p.m->nv, ntree = 0;
  real *qd = calloc((size_t)nv, sizeof(real));
  for (int s = 0; s < f.S.n; s++) {
    if (fixture_state(&f, s)) continue;
    rl_model mm = *f.p.m;
    mm.opt.contact_resolution = RL_RES_CONVEX;
    mm.opt.newton_factor = RL_FACTOR_AUTO;
    ntree += rl_solver_factor_kind(&mm, f.d) == RL_FACTOR_TREE;
    for (int kind = RL_FACTOR_SKYLINE; kind <= RL_FACTOR_TREE; kind += RL_FACTOR_TREE - RL_FACTOR_SKYLINE) {
      double e, mg;
      int itd, its;
      factor_vs_dense(&mm, f.d, kind, qd, &e, &mg, &itd, &its);
      cr_expect(e <= TOL(1e-10, 1e-3) * mg, "state %d: factorization %d vs dense rel %.3g", s, kind, e / mg);
      /* f32: the stopping test can flip by one iteration on the tree's other rounding */
      cr_expect(abs(its - itd) <= (kind == RL_FACTOR_TREE ? TOL(0, 1) : 0), "state %d: factorization %d: %d iterations, "
                "dense %d", s, kind, its, itd);
    }
  }
  cr_expect(ntree >= 1, "AUTO never chose the tree factorization on humanoid100");
  free(qd);
  fixture_close(&f);
}

/* Newton with factorization KIND (CHOLMOD's sparse Cholesky, the tree Cholesky) against the dense factorization
   on every state of `model` (MuJoCo's extracted problem, the cone and resolution given): q̈ to 1e-12 relative in
   f64 (f32: the sparse factor is in double, the dense one in float, and the tree one eliminates in another
   order: 1e-3, as skyline vs dense), the same iteration count in f64.  Returns the worst relative difference;
   *nauto counts the states where AUTO chose KIND; sparse_updowns adds the sparse factor's rank-1 updates
   (cholmod_updown) made on the way. */
static long sparse_updowns;
static double kind_vs_dense(const char *model, const char *cone, int resolution, int kind, int nstates, int *nauto) {
  const char *opts[1] = {cone};
  fixture f;
  fixture_open(&f, model, opts, cone ? 1 : 0, nstates);
  int nv = f.p.m->nv, nsolved = 0;
  double worst = 0;
  real *qd = calloc((size_t)nv, sizeof(real));
  for (int s = 0; s < f.S.n; s++) {
    if (fixture_state(&f, s)) continue;
    rl_model mm = *f.p.m;
    mm.opt.solver = RL_SOLVER_NEWTON;
    mm.opt.contact_resolution = resolution;
    mm.opt.newton_factor = RL_FACTOR_AUTO;
    if (nauto) *nauto += rl_solver_factor_kind(&mm, f.d) == kind;
    mm.opt.newton_factor = kind;
    cr_expect_eq(rl_solver_factor_kind(&mm, f.d), kind, "%s state %d: factorization %d refused", model, s, kind);
    double e, mg;
    int itd, its;
    factor_vs_dense(&mm, f.d, kind, qd, &e, &mg, &itd, &its);
    if (resolution == RL_RES_SIGNORINI && !f.d->solver_converged) {
      /* an iteration that cycles to the limit is not a function of rounding: nothing to compare */
      cr_log_info("%s state %d: signorini unconverged after %d iterations, not compared", model, s, its);
      continue;
    }
    double rel = e / (mg > 0 ? mg : 1);
    worst = fmax(worst, rel);
    /* signorini's coupled step is taken when it quarters the residual: a threshold that rounding can move
       by an iteration, so its answers agree to the solver tolerance, not to rounding */
    double tol = resolution == RL_RES_SIGNORINI ? TOL(1e-6, 1e-3) : TOL(1e-12, 1e-3);
    cr_expect(rel <= tol, "%s %s state %d: factorization %d vs dense q̈ rel %.3g", model, cone ? cone : "", s, kind,
              rel);
    if (TOL(1, 0) && resolution != RL_RES_SIGNORINI)
      cr_expect_eq(its, itd, "%s state %d: iterations %d vs dense %d", model, s, its, itd);
    if (TOL(1, 0) && resolution == RL_RES_SIGNORINI)
      cr_expect(abs(its - itd) <= 2, "%s state %d: iterations %d vs dense %d", model, s, its, itd);
    nsolved++;
  }
  cr_expect(nsolved >= 1, "%s: no state with constraint rows", model);
  rl_sparse_info info;
  rl_sparse_stats(f.d, &info);
  sparse_updowns += info.updowns;
  free(qd);
  fixture_close(&f);
  return worst;
}

static double sparse_vs_dense(const char *model, const char *cone, int resolution, int nstates, int *nauto) {
  return kind_vs_dense(model, cone, resolution, RL_FACTOR_SPARSE, nstates, nauto);
}

/* every bundled scene whose sampled states have constraint rows (pendulum, double_pendulum, chain8, freefall and
   tumbling have none at this seed), but the 1000-sphere pile (dense: ~40 s per solve; the scale study
   compares the piles at sizes dense can run), both cones, convex and signorini resolution */
Test(solver, sparse_equals_dense_scenes, .timeout = 600) {
  const char *scenes[] = {"box_pyramid.xml", "box_stack.xml", "incline.xml", "incline_slide.xml", "microduck.xml"};
  double worst = 0;
  for (size_t k = 0; k < sizeof scenes / sizeof scenes[0]; k++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/experiments/scenes/%s", SRCDIR, scenes[k]);
    worst = fmax(worst, sparse_vs_dense(path, NULL, RL_RES_CONVEX, 6, NULL));
    worst = fmax(worst, sparse_vs_dense(path, "cone=elliptic", RL_RES_CONVEX, 6, NULL));
    worst = fmax(worst, sparse_vs_dense(path, "cone=elliptic", RL_RES_SIGNORINI, 6, NULL));
  }
  cr_log_info("sparse vs dense, bundled scenes: worst q̈ rel %.3g", worst);
}

/* MuJoCo's humanoid and humanoid100 (many trees coupled by contacts) */
Test(solver, sparse_equals_dense_humanoids, .timeout = 600) {
  if (access(HUMANOID100, R_OK)) cr_skip_test("libmujoco-samples not installed");
  double worst = sparse_vs_dense(HUMANOID, NULL, RL_RES_CONVEX, 8, NULL);
  worst = fmax(worst, sparse_vs_dense(HUMANOID, "cone=elliptic", RL_RES_SIGNORINI, 8, NULL));
  worst = fmax(worst, sparse_vs_dense(HUMANOID100, NULL, RL_RES_CONVEX, 3, NULL));
  cr_log_info("sparse vs dense, humanoids: worst q̈ rel %.3g", worst);
}

/* the tree Cholesky of H against the dense one, both cones and both resolutions: robots against the ground (every
   row on one dof chain), and with subtrees re-hung: the humanoid's states with contacts between two limbs,
   cassie_like's loop-closing connects, panda_like's finger equality, hand_grasp's ball between the fingers */
Test(solver, tree_equals_dense_robots, .timeout = 600) {
  const char *scenes[] = {"experiments/scenes/microduck.xml", "experiments/scenes/go1_like.xml",
                          "experiments/scenes/quadruped12.xml", "experiments/scenes/biped.xml",
                          "tests/public/cassie_like.xml", "tests/public/panda_like.xml", "tests/models/hand_grasp.xml"};
  double worst = 0;
  int nauto = 0, nexp = 0;
  for (size_t k = 0; k < sizeof scenes / sizeof scenes[0]; k++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", SRCDIR, scenes[k]);
    worst = fmax(worst, kind_vs_dense(path, NULL, RL_RES_CONVEX, RL_FACTOR_TREE, 6, &nauto));
    worst = fmax(worst, kind_vs_dense(path, "cone=elliptic", RL_RES_CONVEX, RL_FACTOR_TREE, 6, &nauto));
    worst = fmax(worst, kind_vs_dense(path, "cone=elliptic", RL_RES_SIGNORINI, RL_FACTOR_TREE, 6, &nauto));
    nexp += 18;
  }
  if (!access(HUMANOID, R_OK)) {
    worst = fmax(worst, kind_vs_dense(HUMANOID, NULL, RL_RES_CONVEX, RL_FACTOR_TREE, 8, &nauto));
    worst = fmax(worst, kind_vs_dense(HUMANOID, "cone=elliptic", RL_RES_SIGNORINI, RL_FACTOR_TREE, 8, &nauto));
    nexp += 16;
  }
  /* states without rows are skipped, so AUTO is counted on at most nexp states */
  cr_expect(nauto >= nexp / 2, "AUTO chose the tree factorization on %d of %d states", nauto, nexp);
  cr_log_info("tree vs dense, robots: worst q̈ rel %.3g, AUTO tree on %d of %d states", worst, nauto, nexp);
}

/* Tree Cholesky with rank-1 updates and downdates vs refactoring, on a random SPD matrix whose entries pair each dof
   with its ancestors, the update vector on one chain.  Two trees: the dof tree 0 ← 1 ← {2 ← 3, 4 ← 5 ← 6},
   0 ← 7 ← 8 (rows in qM's layout, eliminated from the last dof), and the same with the subtree of 2 hung below
   8 as a row between 3 and 8 would (parent 8 > 2: eliminated by decreasing depth). */
static void tfactor_case(const int *parent, int last, const int *chainv) {
  enum { N = 9 };
  int adr[N + 1], depth[N], order[N];
  for (int i = 0; i < N; i++) { /* depth by walking up (parents may follow their children) */
    depth[i] = 0;
    for (int j = parent[i]; j >= 0; j = parent[j]) depth[i]++;
  }
  adr[0] = 0;
  for (int i = 0; i < N; i++) adr[i + 1] = adr[i] + depth[i] + 1;
  int nM = adr[N], no = 0;
  for (int dd = N; dd >= 0; dd--)
    for (int i = N - 1; i >= 0; i--)
      if (depth[i] == dd) order[no++] = i;
  real *A = calloc((size_t)nM, sizeof(real)), *L = calloc((size_t)nM, sizeof(real)), *L2 = calloc((size_t)nM, sizeof(real));
  unsigned seed = 3;
  for (int i = 0; i < N; i++)
    for (int j = i, a = adr[i]; j >= 0; j = parent[j], a++) {
      seed = seed * 1103515245u + 12345u;
      A[a] = i == j ? 10 : (real)((seed >> 16) % 1000) / 1000 - (real)0.5;
    }
  real inv[N], inv2[N];
  int *col = calloc((size_t)nM, sizeof(int));
  for (int i = 0; i < N; i++)
    for (int j = i, a = adr[i]; j >= 0; j = parent[j]) col[a++] = j;
  rl_tfactor f = {.n = N, .parent = parent, .adr = adr, .col = col, .order = order, .L = L, .inv = inv}, g = f;
  g.L = L2;
  g.inv = inv2;
  memcpy(L, A, (size_t)nM * sizeof(real));
  cr_assert_eq(rl_tfactor_factor(&f, (real)1e-15), N);
  real v[N] = {0}, w[N] = {0};
  for (int i = 0; i < N; i++) v[i] = chainv[i];
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < N; i++) w[i] = v[i] / 10;
    cr_assert_eq(rl_tfactor_update(&f, w, last, pass == 0), N);
    for (int i = 0; i < N; i++) cr_expect_eq(w[i], 0, "update vector not cleared at %d", i);
    for (int i = 0; i < N; i++)
      for (int j = i, a = adr[i]; j >= 0; j = parent[j], a++) A[a] += (pass == 0 ? 1 : -1) * v[i] * v[j] / 100;
    memcpy(L2, A, (size_t)nM * sizeof(real));
    rl_tfactor_factor(&g, (real)1e-15);
    for (int k = 0; k < nM; k++)
      cr_expect(fabs((double)L[k] - L2[k]) <= TOL(1e-13, 1e-5), "%s entry %d", pass ? "downdate" : "update", k);
    for (int k = 0; k < N; k++) cr_expect(fabs((double)inv[k] * L[adr[k]] - 1) <= TOL(1e-15, 1e-6), "inverse %d", k);
  }
  /* solve: A·x = b (A symmetric, stored as its lower triangle along the tree) */
  real b[N], x[N];
  for (int i = 0; i < N; i++) b[i] = x[i] = (real)(i + 1);
  rl_tfactor_solve(&f, x);
  double r[N];
  for (int i = 0; i < N; i++) r[i] = -b[i];
  for (int i = 0; i < N; i++)
    for (int j = i, a = adr[i]; j >= 0; j = parent[j], a++) {
      r[i] += A[a] * x[j];
      if (j != i) r[j] += A[a] * x[i];
    }
  for (int i = 0; i < N; i++) cr_expect(fabs(r[i]) <= TOL(1e-12, 1e-4), "residual row %d %.3g", i, r[i]);
  free(A);
  free(L);
  free(L2);
  free(col);
}

Test(solver, tfactor_update_downdate) {
  /* v on the chain of dof 6 (6, 5, 4, 1, 0), zero at 5 */
  const int parent[9] = {-1, 0, 1, 2, 1, 4, 5, 0, 7}, v6[9] = {9, 4, 0, 0, -11, 0, 7, 0, 0};
  tfactor_case(parent, 6, v6);
  /* 2's subtree below 8: the chain of 3 is 3, 2, 8, 7, 0 */
  const int rehung[9] = {-1, 0, 8, 2, 1, 4, 5, 0, 7}, v3[9] = {5, 0, -6, 8, 0, 0, 0, 3, 2};
  tfactor_case(rehung, 3, v3);
}

/* a 125-sphere pile (the scale study's scene): one coupled system of 750 dofs, where AUTO picks sparse */
Test(solver, sparse_equals_dense_pile, .timeout = 600) {
  char path[] = "/tmp/rigidlab-test-pile-XXXXXX.xml", err[256];
  int fd = mkstemps(path, 4);
  cr_assert(fd >= 0);
  close(fd);
  cr_assert_eq(rl_scale_scene_write(path, "spheres", 125, 4000, err, sizeof err), 0, "%s", err);
  int nauto = 0;
  sparse_updowns = 0;
  double worst = sparse_vs_dense(path, NULL, RL_RES_CONVEX, 2, &nauto);
  /* the late Newton iterations change few rows: the factor is updated, not refactored, and q̈ still agrees */
  cr_expect(sparse_updowns >= 1, "125-sphere pile: no rank-1 update of the sparse factor");
  worst = fmax(worst, sparse_vs_dense(path, "cone=elliptic", RL_RES_SIGNORINI, 2, &nauto));
  remove(path);
  cr_expect(nauto >= 1, "AUTO never chose the sparse factorization on the 125-sphere pile");
  cr_log_info("sparse vs dense, 125-sphere pile: worst q̈ rel %.3g", worst);
}

/* envelope Cholesky with rank-1 updates and downdates vs refactoring, on a random SPD arrow matrix */
Test(solver, hfactor_update_downdate) {
  enum { N = 9 };
  int first[N] = {0, 0, 1, 1, 0, 4, 4, 2, 7}, adr[2 * N + 1]; /* adr + colend */
  rl_hfactor f, g;
  size_t sz = rl_hfactor_layout(&f, N, first, adr);
  int adr2[2 * N + 1];
  rl_hfactor_layout(&g, N, first, adr2);
  real *A = calloc(sz, sizeof(real)), *L = calloc(sz, sizeof(real)), *L2 = calloc(sz, sizeof(real));
  unsigned seed = 3;
  for (int i = 0; i < N; i++)
    for (int j = first[i]; j <= i; j++) {
      seed = seed * 1103515245u + 12345u;
      A[adr[i] + j - first[i]] = i == j ? 10 : (real)((seed >> 16) % 1000) / 1000 - (real)0.5;
    }
  memcpy(L, A, sz * sizeof(real));
  f.L = L;
  cr_assert_eq(rl_hfactor_factor(&f, (real)1e-15), N);
  /* v inside the envelope: nonzero at 4, 5, 6 (first = 4, 4 and row 6 starts at 4) */
  real v[N] = {0}, w[N] = {0};
  v[4] = (real)0.7;
  v[5] = (real)-1.1;
  v[6] = (real)0.4;
  memcpy(w, v, sizeof v);
  cr_assert_eq(rl_hfactor_update(&f, w, 1), N);
  for (int i = 0; i < N; i++)
    for (int j = first[i]; j <= i; j++) A[adr[i] + j - first[i]] += v[i] * v[j];
  memcpy(L2, A, sz * sizeof(real));
  g.L = L2;
  rl_hfactor_factor(&g, (real)1e-15);
  for (size_t k = 0; k < sz; k++) cr_expect(fabs((double)L[k] - L2[k]) <= TOL(1e-13, 1e-5), "update entry %zu", k);
  memcpy(w, v, sizeof v);
  rl_hfactor_update(&f, w, 0);
  for (int i = 0; i < N; i++)
    for (int j = first[i]; j <= i; j++) A[adr[i] + j - first[i]] -= v[i] * v[j];
  memcpy(L2, A, sz * sizeof(real));
  rl_hfactor_factor(&g, (real)1e-15);
  for (size_t k = 0; k < sz; k++) cr_expect(fabs((double)L[k] - L2[k]) <= TOL(1e-13, 1e-5), "downdate entry %zu", k);
  /* solve: A·x = b */
  real b[N], x[N];
  for (int i = 0; i < N; i++) b[i] = x[i] = (real)(i + 1);
  rl_hfactor_solve(&f, x);
  for (int i = 0; i < N; i++) {
    double r = -b[i];
    for (int j = 0; j < N; j++) {
      int hi = i > j ? i : j, lo = i > j ? j : i;
      if (lo >= first[hi]) r += A[adr[hi] + lo - first[hi]] * x[j];
    }
    cr_expect(fabs(r) <= TOL(1e-12, 1e-4), "residual row %d %.3g", i, r);
  }
  free(A);
  free(L);
  free(L2);
}

Test(solver, options_checked_at_build) {
  fixture f;
  fixture_open(&f, SCENE("incline.xml"), NULL, 0, 1);
  rl_model mm = *f.p.m;
  char err[256];
  mm.opt.cone = RL_CONE_PYRAMIDAL;
  mm.opt.solver = RL_SOLVER_NEWTON;
  mm.opt.contact_resolution = RL_RES_SIGNORINI;
  cr_expect_neq(rl_solver_check_options(&mm, err, sizeof err), 0);
  cr_expect(strstr(err, "elliptic") != NULL, "%s", err);
  mm.opt.cone = RL_CONE_ELLIPTIC;
  mm.opt.solver = RL_SOLVER_CG;
  cr_expect_neq(rl_solver_check_options(&mm, err, sizeof err), 0);
  mm.opt.solver = RL_SOLVER_NEWTON;
  cr_expect_eq(rl_solver_check_options(&mm, err, sizeof err), 0);
  mm.opt.contact_resolution = RL_RES_AUTO;
  cr_expect_eq(rl_solver_resolution(&mm), RL_RES_SIGNORINI);
  mm.opt.solver = RL_SOLVER_CG;
  cr_expect_eq(rl_solver_resolution(&mm), RL_RES_CONVEX);
  mm.opt.cone = RL_CONE_PYRAMIDAL;
  mm.opt.solver = RL_SOLVER_NEWTON;
  cr_expect_eq(rl_solver_resolution(&mm), RL_RES_CONVEX);
  fixture_close(&f);
}

/* Signorini on the extracted incline problem: with μ = 0.2 < tan 20° the box slides; the slope
   acceleration must be g(sin θ − μ cos θ) within 1 %, Coulomb's |f_t| ≤ μ f_n must hold per contact
   (with equality when sliding), and every Newton system must agree with dposv. */
Test(solver, signorini_incline_slides_at_coulomb_rate) {
  const char *opts[1] = {"cone=elliptic"};
  fixture f;
  fixture_open(&f, SCENE("incline.xml"), opts, 1, 1);
  const mjModel *mjm = f.p.mjm;
  real mu = (real)0.2;
  for (int g = 0; g < mjm->ngeom; g++) f.p.mjm->geom_friction[3 * g] = mu;
  mj_resetData(mjm, f.mjd);
  mj_forward(mjm, f.mjd);
  cr_assert_gt(f.mjd->nefc, 0, "box not touching the incline");
  cr_assert_eq(rl_ref_copy_mujoco(mjm, f.mjd, f.p.m, f.d), 0);
  rl_model mm = *f.p.m;
  mm.opt.contact_resolution = RL_RES_SIGNORINI;
  mm.opt.solver = RL_SOLVER_NEWTON;
  cr_assert_eq(rl_solver_check_options(&mm, NULL, 0), 0);
  rl_ref_problem ref;
  rl_ref_problem_make(&ref, f.p.m, f.d);
  rl_ref_newton_check chk = {.p = &ref};
  rl_solver_observer obs = rl_ref_observer(&chk);
  memset(f.d->qacc, 0, sizeof(real) * (size_t)mm.nv);
  rl_constraint_solve_observed(&mm, f.d, &obs);
  cr_expect_eq(f.d->solver_converged, 1, "signorini did not converge in %d iterations", f.d->solver_iter);
  cr_expect(chk.max_rel <= TOL(1e-9, 3e-2), "signorini Newton system vs dposv rel %.3g", chk.max_rel);
  double th = 20 * 3.14159265358979323846 / 180, g = 9.81;
  double along = f.d->qacc[0] * cos(th) - f.d->qacc[2] * sin(th); /* downhill (cos20, 0, −sin20) */
  double expect = g * (sin(th) - mu * cos(th));
  cr_expect(fabs(along - expect) <= 0.01 * expect, "slope acceleration %.6g, Coulomb %.6g (%.3g %%)", along, expect,
            100 * fabs(along - expect) / expect);
  for (int k = 0; k < f.d->ncon; k++) {
    int i = f.d->contact[k].efc_address;
    double fn = f.d->efc_force[i], ft = hypot(f.d->efc_force[i + 1], f.d->efc_force[i + 2]);
    cr_expect(ft <= mu * fn * (1 + TOL(1e-6, 1e-3)) + 1e-12, "contact %d: |f_t| %.6g > mu f_n %.6g", k, ft, mu * fn);
    cr_expect(ft >= mu * fn * (1 - TOL(1e-6, 1e-3)), "contact %d sliding below the Coulomb bound", k);
  }
  /* the convex (MuJoCo) cone on the same problem, for the record */
  mm.opt.contact_resolution = RL_RES_CONVEX;
  memset(f.d->qacc, 0, sizeof(real) * (size_t)mm.nv);
  rl_constraint_solve(&mm, f.d);
  double along_convex = f.d->qacc[0] * cos(th) - f.d->qacc[2] * sin(th);
  cr_log_info("incline mu=0.2: signorini %.6g, convex %.6g, Coulomb %.6g m/s^2", along, along_convex, expect);
  rl_ref_problem_free(&ref);
  fixture_close(&f);
}

/* ------------------------------------------------------------------ ABA (solver_aba.c) */

/* write `xml` to a fresh /tmp file; path receives its name */
static int write_tmp_model(char path[64], const char *xml) {
  strcpy(path, "/tmp/rigidlab-aba-XXXXXX.xml");
  int fd = mkstemps(path, 4);
  if (fd < 0) return -1;
  FILE *fp = fdopen(fd, "w");
  if (!fp) return -1;
  fputs(xml, fp);
  return fclose(fp);
}

/* an n-link hinge chain with limits ±0.3 rad (the bench's chain) */
static void chain_xml(char *buf, size_t len, int n) {
  size_t k =
      (size_t)snprintf(buf, len,
                       "<mujoco><option solver=\"Newton\"/><default><joint type=\"hinge\" axis=\"0 1 0\" "
                       "limited=\"true\" range=\"-0.3 0.3\" damping=\"0.01\"/><geom type=\"capsule\" size=\"0.01\" "
                       "fromto=\"0 0 0 0.1 0 0\" mass=\"0.1\" contype=\"0\" conaffinity=\"0\"/></default><worldbody>");
  for (int i = 0; i < n; i++)
    k += (size_t)snprintf(buf + k, len - k, "<body pos=\"%s 0 0\"><joint/><geom/>", i ? "0.1" : "0");
  for (int i = 0; i < n; i++) k += (size_t)snprintf(buf + k, len - k, "</body>");
  snprintf(buf + k, len - k, "</worldbody></mujoco>");
}

/* a branching tree (slide, hinges, two hinges on one body, a ball) with frictionloss on most dofs */
static const char FRICTION_TREE[] =
    "<mujoco><default><geom contype=\"0\" conaffinity=\"0\"/></default><worldbody>"
    "<body><joint type=\"slide\" axis=\"1 0 0\" frictionloss=\"0.5\"/><geom type=\"sphere\" size=\"0.1\" mass=\"1\"/>"
    " <body pos=\"0 0 -0.3\"><joint type=\"hinge\" axis=\"0 1 0\" frictionloss=\"0.2\" limited=\"true\" range=\"-0.5 "
    "0.5\"/>"
    "  <geom type=\"capsule\" fromto=\"0 0 0 0 0 -0.3\" size=\"0.03\"/>"
    "  <body pos=\"0 0 -0.3\"><joint type=\"hinge\" axis=\"1 0 0\" frictionloss=\"0.1\"/><joint type=\"hinge\" "
    "axis=\"0 1 1\" "
    "frictionloss=\"0.05\"/><geom type=\"box\" size=\"0.05 0.1 0.02\" pos=\"0.02 0 -0.05\"/></body></body>"
    " <body pos=\"0.2 0 0.3\"><joint type=\"ball\" frictionloss=\"0.3\"/><geom type=\"capsule\" fromto=\"0 0 0 0.2 0.1 "
    "0.1\" size=\"0.02\"/>"
    "  <body pos=\"0.2 0.1 0.1\"><joint type=\"hinge\" axis=\"0 0 1\"/><geom type=\"sphere\" "
    "size=\"0.04\"/></body></body>"
    "</body></worldbody></mujoco>";

/* x ← A⁻¹x for a dense SPD A (n×n, double, overwritten by its Cholesky factor) */
static void dense_spd_solve(double *A, double *x, int n) {
  for (int j = 0; j < n; j++) {
    double t = A[j * n + j];
    for (int k = 0; k < j; k++) t -= A[j * n + k] * A[j * n + k];
    A[j * n + j] = sqrt(t);
    for (int i = j + 1; i < n; i++) {
      double s = A[i * n + j];
      for (int k = 0; k < j; k++) s -= A[i * n + k] * A[j * n + k];
      A[i * n + j] = s / A[j * n + j];
    }
  }
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < i; k++) x[i] -= A[i * n + k] * x[k];
    x[i] /= A[i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    for (int k = i + 1; k < n; k++) x[i] -= A[k * n + i] * x[k];
    x[i] /= A[i * n + i];
  }
}

/* errors of x as a solution of H·x = r, H from rl_solver_hessian_dense at jar (latch as there):
   forward ‖x − H⁻¹r‖∞ / ‖H⁻¹r‖∞ (H⁻¹r by a double Cholesky and two steps of iterative refinement with
   long-double residuals, exact to ~eps; a plain double Cholesky is itself off by ~cond(H)·eps, 4e-12 on a
   24-link chain) and, in *bw, the normwise backward error ‖H·x − r‖∞ / (‖H‖∞·‖x‖∞) */
static double dense_check(const rl_model *m, rl_data *d, const real *jar, const real *latch, const real *r,
                          const real *x, double *bw) {
  int nv = m->nv;
  real *H = malloc(sizeof(real) * (size_t)nv * nv);
  double *A = malloc(sizeof(double) * (size_t)nv * nv), *y = malloc(sizeof(double) * (size_t)nv),
         *res = malloc(sizeof(double) * (size_t)nv);
  rl_solver_hessian_dense(m, d, jar, latch, H);
  for (int i = 0; i < nv * nv; i++) A[i] = H[i];
  for (int i = 0; i < nv; i++) y[i] = r[i];
  dense_spd_solve(A, y, nv); /* A now holds the factor: refine with it */
  for (int it = 0; it < 2; it++) {
    for (int i = 0; i < nv; i++) {
      long double t = r[i];
      for (int k = 0; k < nv; k++) t -= (long double)H[i * nv + k] * y[k];
      res[i] = (double)t;
    }
    for (int i = 0; i < nv; i++) {
      for (int k = 0; k < i; k++) res[i] -= A[i * nv + k] * res[k];
      res[i] /= A[i * nv + i];
    }
    for (int i = nv - 1; i >= 0; i--) {
      for (int k = i + 1; k < nv; k++) res[i] -= A[k * nv + i] * res[k];
      res[i] /= A[i * nv + i];
    }
    for (int i = 0; i < nv; i++) y[i] += res[i];
  }
  double e = rel_err(x, y, nv), hn = 0, xn = 0, rn = 0;
  for (int i = 0; i < nv; i++) {
    long double t = -(long double)r[i];
    double rs = 0;
    for (int k = 0; k < nv; k++) {
      t += (long double)H[i * nv + k] * x[k];
      rs += fabs((double)H[i * nv + k]);
    }
    rn = fmax(rn, fabs((double)t));
    hn = fmax(hn, rs);
    xn = fmax(xn, fabs((double)x[i]));
  }
  *bw = rn / (hn * xn + 1e-300);
  free(H);
  free(A);
  free(y);
  free(res);
  return e;
}

/* our own pipeline (rows, M, cdof and crb at one state) at state s */
static void own_state(fixture *f, int s) {
  const rl_states *S = &f->S;
  rl_set_state(&f->p, f->d, NULL, S->qpos + (size_t)s * S->nq, S->qvel + (size_t)s * S->nv,
               S->ctrl + (size_t)s * S->nu);
  rl_forward(f->p.m, f->d);
  rl_crb(f->p.m, f->d); /* M for the reference checks: rl_forward's recursive path does not form it */
  rl_factor_m(f->p.m, f->d);
}

/* rl_aba_solve vs the dense Hessian at jar = J·a − aref for a = qacc (the optimum) and a = qacc_smooth, states
   by the convex cost's rules (no elliptic rows); returns the states checked, −1 if ABA refused a state */
static int aba_vs_dense(fixture *f, double *emax, double *bwmax, int *nrows) {
  const rl_model *m = f->p.m;
  rl_data *d = f->d;
  int nv = m->nv, nchecked = 0;
  for (int s = 0; s < f->S.n; s++) {
    own_state(f, s);
    if (d->nefc == 0) continue;
    size_t mark = rl_arena_mark(d);
    rl_aba a;
    int bad = rl_aba_init(&a, m, d);
    if (bad) {
      rl_arena_release(d, mark);
      return -1;
    }
    real *jar = malloc(sizeof(real) * (size_t)d->nefc), *r = malloc(sizeof(real) * (size_t)nv),
         *x = malloc(sizeof(real) * (size_t)nv);
    int *state = malloc(sizeof(int) * (size_t)d->nefc);
    for (int pass = 0; pass < 2; pass++) {
      const real *acc = pass ? d->qacc_smooth : d->qacc;
      for (int i = 0; i < d->nefc; i++) {
        real v = -d->efc_aref[i];
        for (int k = 0; k < d->efc_J_rownnz[i]; k++)
          v += d->efc_J[d->efc_J_rowadr[i] + k] * acc[d->efc_J_colind[d->efc_J_rowadr[i] + k]];
        jar[i] = v;
        real Rf = d->efc_R[i] * d->efc_frictionloss[i];
        int q = i < d->ne ? 1 : i < d->ne + d->nf ? (-Rf < v && v < Rf) : v < 0;
        state[i] = q ? RL_CNSTRSTATE_QUADRATIC : RL_CNSTRSTATE_SATISFIED;
        *nrows += q;
      }
      rl_aba_prepare(&a, m, d, state, NULL, 0);
      for (int i = 0; i < nv; i++) r[i] = x[i] = (real)sin(1.0 + 3.7 * i + s + pass);
      rl_aba_solve(&a, m, d, x);
      double bw, e = dense_check(m, d, jar, NULL, r, x, &bw);
      *emax = fmax(*emax, e);
      *bwmax = fmax(*bwmax, bw);
    }
    free(jar);
    free(r);
    free(x);
    free(state);
    rl_arena_release(d, mark);
    nchecked++;
  }
  return nchecked;
}

/* H·x = r by ABA equals the dense solve on hinge chains whose limits engage: to 1e-12 on 10 links; on 24
   links H's condition (pivots 7e-5…4.6) limits every solver's forward error (a plain double Cholesky's:
   up to 4e-12, ABA's up to 1.2e-11), so there the test is the backward error, which is below eps */
Test(solver, aba_equals_dense_chain) {
  char path[64], xml[16384];
  fixture f;
  for (int len = 10; len <= 24; len += 14) {
    chain_xml(xml, sizeof xml, len);
    cr_assert_eq(write_tmp_model(path, xml), 0);
    fixture_open(&f, path, NULL, 0, 8);
    unlink(path);
    double e = 0, bw = 0;
    int nrows = 0, n = aba_vs_dense(&f, &e, &bw, &nrows);
    cr_expect(n >= 4, "chain%d: %d states checked (ABA refused: -1)", len, n);
    cr_expect(nrows >= 8, "chain%d: only %d quadratic rows", len, nrows);
    cr_expect(e <= (len <= 10 ? TOL(1e-12, 1e-3) : TOL(1e-10, 5e-2)), "chain%d: ABA vs dense rel %.3g", len, e);
    cr_expect(bw <= TOL(1e-15, 1e-6), "chain%d: ABA backward error %.3g", len, bw);
    cr_log_info("aba chain%d: %d states, %d quadratic rows, forward rel %.3g, backward %.3g", len, n, nrows, e, bw);
    fixture_close(&f);
  }
  /* AUTO picks ABA on a 40-link chain (limits only: Σw²/nv = 553 > ABA_WORK), and the Newton optimum is the
     skyline's */
  chain_xml(xml, sizeof xml, 40);
  cr_assert_eq(write_tmp_model(path, xml), 0);
  fixture_open(&f, path, NULL, 0, 8);
  unlink(path);
  rl_model mm = *f.p.m;
  for (int s = 0; s < f.S.n; s++) {
    own_state(&f, s);
    if (f.d->nefc >= 8) break;
  }
  cr_assert_geq(f.d->nefc, 8, "chain40: no state with 8 limit rows");
  cr_expect_eq(rl_solver_factor_kind(&mm, f.d), RL_FACTOR_ABA);
  real *q0 = malloc(sizeof(real) * (size_t)mm.nv);
  mm.opt.newton_factor = RL_FACTOR_SKYLINE;
  memset(f.d->qacc, 0, sizeof(real) * (size_t)mm.nv);
  rl_constraint_solve(&mm, f.d);
  memcpy(q0, f.d->qacc, sizeof(real) * (size_t)mm.nv);
  int it = f.d->solver_iter;
  mm.opt.newton_factor = RL_FACTOR_ABA;
  memset(f.d->qacc, 0, sizeof(real) * (size_t)mm.nv);
  rl_constraint_solve(&mm, f.d);
  double mg = 0, dq = 0;
  for (int i = 0; i < mm.nv; i++) {
    dq = fmax(dq, fabs((double)f.d->qacc[i] - q0[i]));
    mg = fmax(mg, fabs((double)q0[i]));
  }
  cr_expect(dq <= TOL(1e-9, 5e-2) * mg, "chain40: ABA vs skyline optimum rel %.3g", dq / mg);
  cr_log_info("aba chain40: Newton optimum ABA vs skyline rel %.3g, %d iterations", dq / mg, it);
  /* f32: the stopping test can flip by one iteration on rounding */
  cr_expect(abs(f.d->solver_iter - it) <= TOL(0, 1), "chain40: %d iterations with ABA, %d with skyline",
            f.d->solver_iter, it);
  free(q0);
  fixture_close(&f);
}

/* … on a branching tree with frictionloss rows (one-dof rows in every state, a ball, two hinges on a body) */
Test(solver, aba_equals_dense_frictionloss_tree) {
  char path[64];
  cr_assert_eq(write_tmp_model(path, FRICTION_TREE), 0);
  fixture f;
  fixture_open(&f, path, NULL, 0, 8);
  double e = 0, bw = 0;
  int nrows = 0, n = aba_vs_dense(&f, &e, &bw, &nrows);
  cr_expect(n >= 4, "tree: %d states checked (ABA refused: -1)", n);
  cr_expect(nrows >= 8, "tree: only %d quadratic rows", nrows);
  cr_expect(e <= TOL(1e-12, 1e-3), "tree: ABA vs dense rel %.3g", e);
  cr_expect(bw <= TOL(1e-15, 1e-6), "tree: ABA backward error %.3g", bw);
  cr_log_info("aba friction tree: %d states, %d quadratic rows, forward rel %.3g, backward %.3g", n, nrows, e, bw);
  fixture_close(&f);
  unlink(path);
}

/* observer: every Newton system the solver solved with ABA agrees with the dense Hessian's solve */
typedef struct aba_obs {
  double emax, bwmax;
  int n;
} aba_obs;

static void aba_obs_system(void *user, const rl_model *m, rl_data *d, const real *jar, const real *latch,
                           const real *grad, const real *x) {
  aba_obs *o = user;
  double bw, e = dense_check(m, d, jar, latch, grad, x, &bw);
  o->emax = fmax(o->emax, e);
  o->bwmax = fmax(o->bwmax, bw);
  o->n++;
}

/* microduck (free base, hinge legs, frictionloss) on the floor: rows against the world only, so the
   contact rows are body rows; the pyramidal rows by the direct check, elliptic (convex and signorini,
   cone blocks) through the solver's own systems */
Test(solver, aba_equals_dense_microduck_contacts, .timeout = 120) {
  const char *cones[3] = {NULL, "cone=elliptic", "cone=elliptic"};
  for (int c = 0; c < 3; c++) {
    fixture f;
    fixture_open(&f, SCENE("microduck.xml"), cones + c, cones[c] ? 1 : 0, 10);
    const rl_model *m = f.p.m;
    if (c == 0) {
      double e = 0, bw = 0;
      int nrows = 0, n = aba_vs_dense(&f, &e, &bw, &nrows);
      cr_expect(n >= 3, "microduck: %d states checked (ABA refused: -1)", n);
      cr_expect(e <= TOL(1e-12, 1e-3), "microduck pyramidal: ABA vs dense rel %.3g", e);
      cr_expect(bw <= TOL(1e-15, 1e-6), "microduck pyramidal: ABA backward error %.3g", bw);
      cr_log_info("aba microduck pyramidal: %d states, %d quadratic rows, forward rel %.3g, backward %.3g", n, nrows, e,
                  bw);
    }
    rl_model mm = *m;
    mm.opt.newton_factor = RL_FACTOR_ABA;
    mm.opt.contact_resolution = c == 1 ? RL_RES_CONVEX : RL_RES_AUTO;
    aba_obs o = {0, 0, 0};
    rl_solver_observer obs = {aba_obs_system, &o};
    int ncontact = 0;
    for (int s = 0; s < f.S.n; s++) {
      own_state(&f, s);
      if (f.d->nefc == 0) continue;
      cr_expect_eq(rl_solver_factor_kind(&mm, f.d), RL_FACTOR_ABA, "microduck state %d: ABA refused", s);
      ncontact += f.d->ncon > 0;
      memset(f.d->qacc, 0, sizeof(real) * (size_t)mm.nv);
      rl_constraint_solve_observed(&mm, f.d, &obs);
    }
    cr_expect(ncontact >= 3, "microduck: only %d states with contacts", ncontact);
    cr_expect(o.n >= 3 && o.emax <= TOL(1e-12, 1e-3) && o.bwmax <= TOL(1e-15, 1e-6),
              "microduck %s res %d: %d systems, ABA vs dense rel %.3g, backward %.3g",
              cones[c] ? cones[c] : "pyramidal", mm.opt.contact_resolution, o.n, o.emax, o.bwmax);
    cr_log_info("aba microduck %s res %d: %d Newton systems, forward rel %.3g, backward %.3g",
                cones[c] ? cones[c] : "pyramidal", mm.opt.contact_resolution, o.n, o.emax, o.bwmax);
    fixture_close(&f);
  }
}

/* a contact between two moving bodies cannot enter a body inertia: ABA refused, the solver falls back */
Test(solver, aba_refused_body_body_contact_tree_rehangs) {
  fixture f;
  fixture_open(&f, SCENE("box_stack.xml"), NULL, 0, 1);
  const rl_model *m = f.p.m;
  rl_data_reset(m, f.d);
  int found = 0;
  for (int step = 0; step < 400 && !found; step++) {
    rl_step(m, f.d);
    for (int k = 0; k < f.d->ncon && !found; k++) {
      const rl_contact *con = f.d->contact + k;
      found = con->efc_address >= 0 && m->body_weldid[m->geom_bodyid[con->geom1]] > 0 &&
              m->body_weldid[m->geom_bodyid[con->geom2]] > 0;
    }
  }
  cr_assert(found, "box_stack: no body-body contact in 400 steps");
  rl_forward(m, f.d);
  rl_crb(m, f.d);
  rl_factor_m(m, f.d);
  size_t mark = rl_arena_mark(f.d);
  rl_aba a;
  cr_expect_gt(rl_aba_init(&a, m, f.d), 0, "ABA accepted a body-body contact");
  rl_arena_release(f.d, mark);
  rl_model mm = *m;
  mm.opt.newton_factor = RL_FACTOR_ABA;
  int kind = rl_solver_factor_kind(&mm, f.d);
  cr_expect(kind == RL_FACTOR_DENSE || kind == RL_FACTOR_SKYLINE, "forced ABA not refused: kind %d", kind);
  mm.opt.newton_factor = RL_FACTOR_AUTO;
  cr_expect_neq(rl_solver_factor_kind(&mm, f.d), RL_FACTOR_ABA);
  /* the contact couples two dof chains: the tree factorization hangs one box's dofs below the other's and
     gives the dense optimum */
  mm.opt.newton_factor = RL_FACTOR_TREE;
  cr_expect_eq(rl_solver_factor_kind(&mm, f.d), RL_FACTOR_TREE);
  {
    real *qd = malloc(sizeof(real) * (size_t)m->nv);
    double e, mg;
    int itd, itt;
    factor_vs_dense(&mm, f.d, RL_FACTOR_TREE, qd, &e, &mg, &itd, &itt);
    cr_expect(e <= TOL(1e-12, 1e-3) * mg, "box_stack: tree (re-hung) vs dense q̈ rel %.3g", e / mg);
    cr_expect_eq(itt, itd);
    free(qd);
  }
  mm.opt.newton_factor = RL_FACTOR_AUTO;
  /* the forced-ABA solve is the fallback's (skyline or dense) solve */
  mm.opt.newton_factor = RL_FACTOR_ABA;
  mm.opt.newton_factor = rl_solver_factor_kind(&mm, f.d);
  real *q0 = malloc(sizeof(real) * (size_t)m->nv);
  memset(f.d->qacc, 0, sizeof(real) * (size_t)m->nv);
  rl_constraint_solve(&mm, f.d);
  memcpy(q0, f.d->qacc, sizeof(real) * (size_t)m->nv);
  mm.opt.newton_factor = RL_FACTOR_ABA;
  memset(f.d->qacc, 0, sizeof(real) * (size_t)m->nv);
  rl_constraint_solve(&mm, f.d);
  cr_expect_eq(memcmp(q0, f.d->qacc, sizeof(real) * (size_t)m->nv), 0);
  free(q0);
  fixture_close(&f);
}

/* an M copied in without cdof/crb of the same state must not reach the recursion */
Test(solver, aba_refuses_foreign_m) {
  char path[64], xml[4096];
  chain_xml(xml, sizeof xml, 12);
  cr_assert_eq(write_tmp_model(path, xml), 0);
  fixture f;
  fixture_open(&f, path, NULL, 0, 4);
  int n = 0;
  for (int s = 0; s < f.S.n; s++) {
    if (fixture_state(&f, s)) continue; /* MuJoCo's problem: our cdof/crb were never computed */
    size_t mark = rl_arena_mark(f.d);
    rl_aba a;
    cr_expect_eq(rl_aba_init(&a, f.p.m, f.d), -2);
    rl_arena_release(f.d, mark);
    n++;
  }
  cr_expect(n >= 1);
  fixture_close(&f);
  unlink(path);
}

/* max_i |a_i − b_i| / max_i |b_i| */
static double rel_diff(const real *a, const real *b, int n) {
  double e = 0, s = 0;
  for (int i = 0; i < n; i++) {
    e = fmax(e, fabs((double)a[i] - (double)b[i]));
    s = fmax(s, fabs((double)b[i]));
  }
  return e / (s > 0 ? s : 1);
}

/* x = M⁻¹·f in long double (dense Gaussian elimination with partial pivoting on rl_full_m's copy of qM);
   returns max_i |y_i − x_i| / max_i |x_i| for y */
static double m_solve_error(const rl_model *m, const rl_data *d, const real *f, const real *y) {
  int n = m->nv;
  real *Md = malloc(sizeof(real) * (size_t)n * n);
  long double *A = malloc(sizeof(long double) * (size_t)n * (n + 1));
  rl_full_m(m, d, Md);
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) A[i * (n + 1) + j] = Md[i * n + j];
    A[i * (n + 1) + n] = f[i];
  }
  for (int c = 0; c < n; c++) {
    int p = c;
    for (int r = c + 1; r < n; r++)
      if (fabsl(A[r * (n + 1) + c]) > fabsl(A[p * (n + 1) + c])) p = r;
    for (int j = 0; j <= n; j++) {
      long double t = A[c * (n + 1) + j];
      A[c * (n + 1) + j] = A[p * (n + 1) + j];
      A[p * (n + 1) + j] = t;
    }
    for (int r = c + 1; r < n; r++) {
      long double l = A[r * (n + 1) + c] / A[c * (n + 1) + c];
      for (int j = c; j <= n; j++) A[r * (n + 1) + j] -= l * A[c * (n + 1) + j];
    }
  }
  double e = 0, s = 0;
  for (int i = n - 1; i >= 0; i--) {
    long double t = A[i * (n + 1) + n];
    for (int j = i + 1; j < n; j++) t -= A[i * (n + 1) + j] * A[j * (n + 1) + n];
    A[i * (n + 1) + n] = t / A[i * (n + 1) + i];
    e = fmax(e, fabs((double)(y[i] - A[i * (n + 1) + n])));
    s = fmax(s, fabs((double)A[i * (n + 1) + n]));
  }
  free(A);
  free(Md);
  return e / (s > 0 ? s : 1);
}

/* The recursive path (forward.c: no M, every M product a recursion, Euler's damping by ABA) equals the
   factored path on a 30-link chain whose limits engage: qacc_smooth by ABA vs M⁻¹·qfrc_smooth by qLD, and
   one rl_step (qpos, qvel, qacc) from the same state */
Test(solver, recursive_path_equals_factored_chain30) {
  char path[64], xml[16384];
  chain_xml(xml, sizeof xml, 30);
  cr_assert_eq(write_tmp_model(path, xml), 0);
  fixture f;
  fixture_open(&f, path, NULL, 0, 8);
  unlink(path);
  const rl_model *m = f.p.m;
  const rl_states *S = &f.S;
  rl_data *e = rl_data_alloc(m);
  cr_assert(e);
  double es = 0, eq = 0, ev = 0, ea = 0, ea_aba = 0, ea_ld = 0;
  int nrows = 0;
  for (int s = 0; s < S->n; s++) {
    rl_data *dd[2] = {f.d, e};
    for (int k = 0; k < 2; k++) {
      rl_set_state(&f.p, dd[k], NULL, S->qpos + (size_t)s * S->nq, S->qvel + (size_t)s * S->nv,
                   S->ctrl + (size_t)s * S->nu);
      memset(dd[k]->qacc_warmstart, 0, sizeof(real) * (size_t)m->nv);
    }
    cr_expect_eq(rl_forward_path(m, f.d, RL_PATH_RECURSIVE), RL_PATH_RECURSIVE, "state %d: recursive path refused", s);
    cr_expect_eq(rl_forward_path(m, e, RL_PATH_FACTORED), RL_PATH_FACTORED);
    es = fmax(es, rel_diff(f.d->qacc_smooth, e->qacc_smooth, m->nv));
    ea_aba = fmax(ea_aba, m_solve_error(m, e, e->qfrc_smooth, f.d->qacc_smooth));
    ea_ld = fmax(ea_ld, m_solve_error(m, e, e->qfrc_smooth, e->qacc_smooth));
    nrows += f.d->nefc;
    rl_step_path(m, f.d, RL_PATH_RECURSIVE);
    rl_step_path(m, e, RL_PATH_FACTORED);
    eq = fmax(eq, rel_diff(f.d->qpos, e->qpos, m->nq));
    ev = fmax(ev, rel_diff(f.d->qvel, e->qvel, m->nv));
    ea = fmax(ea, rel_diff(f.d->qacc, e->qacc, m->nv));
  }
  cr_expect(nrows >= 8, "chain30: only %d limit rows over %d states", nrows, S->n);
  /* M's condition on 30 armature-free links puts every solver's forward error near 4e-11 (qLD's, measured
     against a long double solve), so 1e-12 between the two is out of reach: ABA must be as accurate as
     qLD against the long double answer (to 1e-12 or 2× qLD's error), and within 1e-10 of it */
  cr_expect(ea_aba <= fmax(TOL(1e-12, 1e-5), 2 * ea_ld), "chain30: ABA qacc_smooth error %.3g, qLD's %.3g", ea_aba,
            ea_ld);
  cr_expect(es <= TOL(1e-10, 5e-2), "chain30: ABA qacc_smooth vs M⁻¹qfrc_smooth rel %.3g", es);
  cr_expect(eq <= TOL(1e-10, 5e-2) && ev <= TOL(1e-10, 5e-2) && ea <= TOL(1e-10, 5e-2),
            "chain30: recursive vs factored step rel qpos %.3g qvel %.3g qacc %.3g", eq, ev, ea);
  cr_log_info("recursive chain30: qacc_smooth vs long double M⁻¹f: ABA %.3g, qLD %.3g", ea_aba, ea_ld);
  cr_log_info("recursive chain30: %d rows, qacc_smooth rel %.3g, step rel qpos %.3g qvel %.3g qacc %.3g", nrows, es, eq,
              ev, ea);
  rl_data_free(e);
  fixture_close(&f);
}

/* ------------------------------------------------ local frames (smooth_local.c) */

/* ‖a − b‖∞ / max(‖b‖∞, floor) */
static double rel_diff_floor(const real *a, const real *b, int n, double floor) {
  double e = 0, g = 0;
  for (int i = 0; i < n; i++) {
    e = fmax(e, fabs((double)a[i] - (double)b[i]));
    g = fmax(g, fabs((double)b[i]));
  }
  return e / fmax(g, floor);
}

/* The local-frame recursions against the com-frame ones in the same precision, 20 states per model:
   qfrc_bias (rl_rne_local vs rl_rne_com), M⁻¹·qfrc_smooth (rl_solve_m_local vs the LᵀDL of qM) and
   (M + h·diag(b))⁻¹ (vs the LᵀDL of qM + h·diag(b)).  Equal in exact arithmetic: f64 to 1e-12 relative;
   f32 to what the com frame itself keeps (its own error, 2e-5 on the humanoid), 1e-4. */
Test(local_frames, equal_to_the_com_frame_recursions, .timeout = 120) {
  const char *models[] = {SCENE("chain8.xml"),
                          SCENE("microduck.xml"),
                          SCENE("tumbling.xml"),
                          SRCDIR "/tests/models/slider_ball.xml",
                          SRCDIR "/tests/models/nocontact_tree.xml",
                          SRCDIR "/tests/models/weld_torquescale.xml",
                          HUMANOID,
                          NULL};
  double worst[3] = {0, 0, 0};
  for (int k = 0; models[k]; k++) {
    if (access(models[k], R_OK)) continue;
    fixture f;
    fixture_open(&f, models[k], NULL, 0, 20);
    const rl_model *m = f.p.m;
    rl_data *d = f.d;
    int nv = m->nv;
    real *com = calloc((size_t)nv, sizeof(real)), *x = calloc((size_t)nv, sizeof(real));
    real *H = calloc((size_t)m->nM + 1, sizeof(real)), *hd = calloc((size_t)nv, sizeof(real));
    for (int s = 0; s < f.S.n; s++) {
      rl_set_state(&f.p, d, f.mjd, f.S.qpos + (size_t)s * f.S.nq, f.S.qvel + (size_t)s * f.S.nv,
                   f.S.ctrl + (size_t)s * f.S.nu);
      rl_forward_smooth(m, d); /* kinematics … crb, factor, cvel */
      rl_local_frames(m, d);   /* (rl_com_pos does it in f32 only) */
      rl_rne_com(m, d);
      memcpy(com, d->qfrc_bias, sizeof(real) * (size_t)nv);
      rl_rne_local(m, d);
      double e0 = rel_diff_floor(d->qfrc_bias, com, nv, 1e-3);
      /* M⁻¹·f with f = qfrc_smooth */
      rl_solve_m(m, d, com, d->qfrc_smooth, 1);
      memcpy(x, d->qfrc_smooth, sizeof(real) * (size_t)nv);
      cr_assert_eq(rl_solve_m_local(m, d, x, 0, NULL), 0);
      double e1 = rel_diff_floor(x, com, nv, 1e-3);
      /* (M + h·diag(b))⁻¹·f */
      real h = m->opt.timestep;
      memcpy(H, d->qM, sizeof(real) * (size_t)m->nM);
      for (int i = 0; i < nv; i++) H[m->dof_Madr[i]] += h * m->dof_damping[i];
      rl_factor_ld(m, H, hd);
      memcpy(com, d->qfrc_smooth, sizeof(real) * (size_t)nv);
      rl_solve_ld(m, H, hd, com);
      memcpy(x, d->qfrc_smooth, sizeof(real) * (size_t)nv);
      cr_assert_eq(rl_solve_m_local(m, d, x, h, m->dof_damping), 0);
      double e2 = rel_diff_floor(x, com, nv, 1e-3);
      worst[0] = fmax(worst[0], e0);
      worst[1] = fmax(worst[1], e1);
      worst[2] = fmax(worst[2], e2);
      cr_expect(e0 <= TOL(1e-12, 1e-4), "%s state %d: qfrc_bias local vs com %.3e", models[k], s, e0);
      cr_expect(e1 <= TOL(1e-12, 1e-4), "%s state %d: M⁻¹ local vs LᵀDL %.3e", models[k], s, e1);
      cr_expect(e2 <= TOL(1e-12, 1e-4), "%s state %d: (M + hB)⁻¹ local vs LᵀDL %.3e", models[k], s, e2);
    }
    free(com);
    free(x);
    free(H);
    free(hd);
    fixture_close(&f);
  }
  printf("local vs com frame (%s): qfrc_bias %.2e, M^-1 %.2e, (M + hB)^-1 %.2e\n", RL_PREC_NAME, worst[0], worst[1],
         worst[2]);
}

/* this thread's CPU time in ns (the step profile's clock in this test: another process's time slices are
   not counted) */
static double thread_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}

/* The step profile (rl_data.prof_clock, what `rigidlab bench` prints): profiling changes no result bit, every
   stage of a contact step gets time, and the parts add up to no more than the whole step timed around it
   (RK4's inner forward passes are not counted twice) and to most of it. */
Test(solver, step_profile_accounts_for_the_step) {
  const char *opts[] = {NULL, "integrator=rk4"};
  for (int o = 0; o < 2; o++) {
    rl_pair p;
    load(&p, SCENE("box_stack.xml"), opts[o]);
    rl_data *a = rl_data_alloc(p.m), *b = rl_data_alloc(p.m);
    b->prof_clock = thread_ns;
    double parts = 0, whole = 0;
    for (int i = 0; i < 50; i++) {
      rl_step(p.m, a);
      double t0 = thread_ns();
      rl_step(p.m, b);
      whole += thread_ns() - t0;
    }
    for (int k = 0; k < RL_NPROF; k++) parts += b->prof[k];
    cr_expect_eq(rl_state_hash(p.m, a), rl_state_hash(p.m, b), "%s: profiling changed the state",
                 opts[o] ? opts[o] : "euler");
    cr_assert_gt(b->ncon, 0);
    for (int k = 0; k < RL_NPROF; k++)
      if (k != RL_PROF_ACTUATION) /* box_stack has no actuators: its stage may take under a clock tick */
        cr_expect_gt(b->prof[k], 0, "%s: stage %d got no time", opts[o] ? opts[o] : "euler", k);
    cr_expect_leq(parts, whole, "%s: parts %.0f ns exceed the whole %.0f ns", opts[o] ? opts[o] : "euler", parts,
                  whole);
    cr_expect_geq(parts, 0.7 * whole, "%s: parts %.0f ns, under 70%% of the whole %.0f ns", opts[o] ? opts[o] : "euler",
                  parts, whole);
    rl_data_free(a);
    rl_data_free(b);
    rl_pair_free(&p);
  }
}
