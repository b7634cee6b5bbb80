/* test_solver.c — Newton and CG (engine/solver.c) on MuJoCo 2.2.2's extracted constraint problems,
 * against the dense LAPACK references (reference/lapack_ref.c).  Compiled per precision (-DRL_REAL_F64 /
 * -DRL_REAL_F32); every numerical assertion has an f64 and an f32 tolerance. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lapack_ref.h"
#include "pair.h"
#include "states.h"

#define SCENE(name) SRCDIR "/experiments/scenes/" name
#define HUMANOID "/usr/share/mujoco/model/humanoid/humanoid.xml"
#define HUMANOID100 "/usr/share/mujoco/model/humanoid100/humanoid100.xml"

#if defined(RL_REAL_F32)
#define TOL(f64, f32) (f32)
#else
#define TOL(f64, f32) (f64)
#endif

/* one extracted problem per state: a model pair, MuJoCo's data, our data */
typedef struct fixture {
  rl_pair p;
  mjData *mjd;
  rl_data *d;
  rl_states S;
} fixture;

static int fixture_open(fixture *f, const char *model, const char *const *opts, int nopts, int nstates) {
  rl_common_args a;
  memset(&a, 0, sizeof a);
  a.model = model;
  for (int i = 0; i < nopts; i++) a.opts[a.nopts++] = opts[i];
  char err[512];
  if (rl_pair_load(&f->p, &a, 0, err, sizeof err)) {
    cr_log_error("%s", err);
    return -1;
  }
  f->mjd = mj_makeData(f->p.mjm);
  f->d = rl_data_alloc(f->p.m);
  rl_states_draw(f->p.mjm, nstates, 11, &f->S);
  return 0;
}

static void fixture_close(fixture *f) {
  rl_states_free(&f->S);
  rl_data_free(f->d);
  mj_deleteData(f->mjd);
  rl_pair_free(&f->p);
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

/* Solve every state's problem with `solver` to tolerance 1e-15 (convex resolution) and compare with
   the LAPACK optimum; Newton systems re-solved by dposv; cost never rises between iterations. */
static void check_model(const char *model, const char *cone, int solver, int nstates) {
  const char *opts[1] = {cone};
  fixture f;
  cr_assert_eq(fixture_open(&f, model, opts, cone ? 1 : 0, nstates), 0);
  rl_model mt = *f.p.m;
  mt.opt.solver = solver;
  mt.opt.contact_resolution = RL_RES_CONVEX;
  mt.opt.tolerance = (real)1e-15;
  mt.opt.iterations = solver == RL_SOLVER_CG ? 1000 : 100;
  real scale = rl_solver_meaninertia(f.p.m) * (real)(f.p.m->nv > 1 ? f.p.m->nv : 1);
  double *astar = calloc((size_t)f.p.m->nv + 1, sizeof(double));
  int nsolved = 0;
  for (int s = 0; s < f.S.n; s++) {
    if (fixture_state(&f, s)) continue;
    rl_ref_problem ref;
    cr_assert_eq(rl_ref_problem_make(&ref, f.p.m, f.d), 0);
    double cstar;
    cr_expect_eq(rl_ref_optimum(&ref, astar, &cstar, NULL), 0, "%s state %d: LAPACK reference did not settle", model, s);
    rl_ref_newton_check chk = {.p = &ref};
    rl_solver_observer obs = rl_ref_observer(&chk);
    memset(f.d->qacc, 0, sizeof(real) * (size_t)f.p.m->nv);
    double c0 = rl_ref_cost_real(&ref, f.d->qacc_smooth);
    rl_constraint_solve_observed(&mt, f.d, &obs);
    double e = rel_err(f.d->qacc, astar, f.p.m->nv);
    /* CG's line search works on cost differences, which resolve a only to ~√eps·cond: 1e-6 (f64) */
    double tol = solver == RL_SOLVER_CG ? TOL(1e-6, 1e-2) : TOL(1e-9, 1e-4);
    cr_expect(e <= tol, "%s %s solver %d state %d: qacc vs LAPACK optimum rel %.3g", model,
              cone ? cone : "", solver, s, e);
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
  cr_assert_eq(fixture_open(&f, SCENE("box_stack.xml"), NULL, 0, 12), 0);
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
  cr_assert_eq(fixture_open(&f, SCENE("box_stack.xml"), NULL, 0, 12), 0);
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
  cr_assert_eq(fixture_open(&f, SCENE("box_stack.xml"), NULL, 0, 12), 0);
  rl_model mm = *f.p.m;
  mm.opt.contact_resolution = RL_RES_CONVEX;
  for (int s = 0; s < f.S.n; s++) {
    if (fixture_state(&f, s)) continue;
    memcpy(f.d->qacc, f.d->qacc_smooth, sizeof(real) * (size_t)f.p.m->nv);
    rl_constraint_solve(&mm, f.d);
    int cold = f.d->solver_iter;
    rl_constraint_solve(&mm, f.d); /* qacc now holds the solution */
    /* f32 cannot meet tolerance 1e-8 by the gradient test: it stops on a zero improvement, one step later */
    cr_expect_leq(f.d->solver_iter, cold > TOL(1, 2) ? TOL(1, 2) : cold, "state %d: warm %d iterations, cold %d", s, f.d->solver_iter, cold);
    mm.opt.disableflags |= RL_DSBL_WARMSTART;
    rl_constraint_solve(&mm, f.d);
    cr_expect_eq(f.d->solver_iter, cold, "state %d: warm start disabled must equal the cold start", s);
    mm.opt.disableflags &= ~RL_DSBL_WARMSTART;
  }
  fixture_close(&f);
}

/* skyline = dense on humanoid100 (many trees coupled only by contacts), and AUTO picks the skyline */
Test(solver, skyline_equals_dense_humanoid100, .timeout = 300) {
  if (access(HUMANOID100, R_OK)) cr_skip_test("libmujoco-samples not installed");
  fixture f;
  cr_assert_eq(fixture_open(&f, HUMANOID100, NULL, 0, 6), 0);
  int nv = f.p.m->nv, nsky = 0;
  real *qd = calloc((size_t)nv, sizeof(real));
  for (int s = 0; s < f.S.n; s++) {
    if (fixture_state(&f, s)) continue;
    rl_model mm = *f.p.m;
    mm.opt.contact_resolution = RL_RES_CONVEX;
    mm.opt.newton_factor = RL_FACTOR_AUTO;
    nsky += rl_solver_factor_kind(&mm, f.d) == RL_FACTOR_SKYLINE;
    mm.opt.newton_factor = RL_FACTOR_DENSE;
    memset(f.d->qacc, 0, sizeof(real) * (size_t)nv);
    rl_constraint_solve(&mm, f.d);
    memcpy(qd, f.d->qacc, sizeof(real) * (size_t)nv);
    int itd = f.d->solver_iter;
    mm.opt.newton_factor = RL_FACTOR_SKYLINE;
    memset(f.d->qacc, 0, sizeof(real) * (size_t)nv);
    rl_constraint_solve(&mm, f.d);
    double e = 0, mg = 0;
    for (int i = 0; i < nv; i++) {
      e = fmax(e, fabs((double)f.d->qacc[i] - qd[i]));
      mg = fmax(mg, fabs((double)qd[i]));
    }
    cr_expect(e <= TOL(1e-10, 1e-3) * mg, "state %d: skyline vs dense rel %.3g", s, e / mg);
    cr_expect_eq(f.d->solver_iter, itd);
  }
  cr_expect(nsky >= 1, "AUTO never chose the skyline factorization on humanoid100");
  free(qd);
  fixture_close(&f);
}

/* envelope Cholesky with rank-1 updates and downdates vs refactoring, on a random SPD arrow matrix */
Test(solver, hfactor_update_downdate) {
  enum { N = 9 };
  int first[N] = {0, 0, 1, 1, 0, 4, 4, 2, 7}, adr[N + 1];
  rl_hfactor f, g;
  size_t sz = rl_hfactor_layout(&f, N, first, adr);
  int adr2[N + 1];
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
  cr_assert_eq(fixture_open(&f, SCENE("incline.xml"), NULL, 0, 1), 0);
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
  cr_assert_eq(fixture_open(&f, SCENE("incline.xml"), opts, 1, 1), 0);
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
