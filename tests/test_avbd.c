/* test_avbd.c — the AVBD solver in maximal coordinates (issue 5), in the precision this file is
 * compiled for (-DRL_REAL_F64 / -DRL_REAL_F32).  Every test prints the figures it checks, so they
 * can be quoted:  build-avbd/tests/test_avbd_f64 --verbose  (or ninja -C build-avbd test). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "pair.h"
#include "rl_avbd.h"

#define SCENE(name) SRCDIR "/experiments/scenes/" name
#define MODEL(name) SRCDIR "/tests/models/" name
#if defined(RL_REAL_F64)
#define TOL(f64, f32) (f64)
#else
#define TOL(f64, f32) (f32)
#endif

/* load a MuJoCo + rigidlab pair (one optional --opt) or fail the test */
static void load(rl_pair *p, const char *model, const char *opt) {
  rl_common_args c = {0};
  char err[1024];
  c.model = model;
  if (opt) c.opts[c.nopts++] = opt;
  cr_assert_eq(rl_pair_load(p, &c, 0, err, sizeof err), 0, "%s", err);
}

static rl_avbd *build(const rl_model *m) {
  char err[256];
  rl_avbd *am = rl_avbd_build(m, err, sizeof err);
  cr_assert_not_null(am, "%s", err);
  return am;
}

/* ------------------------------------------------------------------ build checks */

Test(avbd, refuses_massless_body_by_name) {
  rl_pair p;
  load(&p, SCENE("double_pendulum.xml"), NULL);
  char err[256] = "";
  p.m->body_mass[2] = 0;
  rl_avbd *am = rl_avbd_build(p.m, err, sizeof err);
  printf("avbd build with body 2 massless: %s\n", err);
  cr_expect_null(am);
  cr_expect(strstr(err, rl_model_name(p.m, p.m->name_bodyadr[2])) != NULL, "error does not name the body: %s", err);
  p.m->body_mass[2] = 1;
  p.m->body_inertia[3 * 2 + 1] = 0;
  am = rl_avbd_build(p.m, err, sizeof err);
  cr_expect_null(am, "zero inertia accepted");
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* generalized → maximal → generalized is the identity (free, hinge; random state) */
Test(avbd, generalized_maximal_round_trip) {
  rl_pair p;
  load(&p, SCENE("microduck.xml"), NULL);
  rl_avbd *am = build(p.m);
  rl_data *d = rl_data_alloc(p.m);
  unsigned seed = 7;
  for (int i = 0; i < p.m->nq; i++) {
    seed = seed * 1103515245u + 12345u;
    d->qpos[i] += (real)(0.4 * ((seed >> 8) / 16777216.0 - 0.5));
  }
  for (int i = 0; i < p.m->nv; i++) {
    seed = seed * 1103515245u + 12345u;
    d->qvel[i] = (real)(2.0 * ((seed >> 8) / 16777216.0 - 0.5));
  }
  double qn = 0;
  for (int i = 3; i < 7; i++) qn += (double)d->qpos[i] * d->qpos[i];
  for (int i = 3; i < 7; i++) d->qpos[i] /= (real)sqrt(qn);
  real q0[64], v0[64];
  memcpy(q0, d->qpos, sizeof(real) * (size_t)p.m->nq);
  memcpy(v0, d->qvel, sizeof(real) * (size_t)p.m->nv);
  rl_avbd_from_generalized(am, p.m, d);
  memset(d->qvel, 0, sizeof(real) * (size_t)p.m->nv);
  rl_avbd_to_generalized(am, p.m, d);
  double eq = 0, ev = 0;
  for (int i = 0; i < p.m->nq; i++) eq = fmax(eq, fabs((double)d->qpos[i] - q0[i]));
  for (int i = 0; i < p.m->nv; i++) ev = fmax(ev, fabs((double)d->qvel[i] - v0[i]));
  printf("avbd round trip microduck (%s): max |dqpos| %.3e, max |dqvel| %.3e\n", RL_PREC_NAME, eq, ev);
  cr_expect_leq(eq, TOL(1e-13, 2e-6));
  cr_expect_leq(ev, TOL(1e-12, 2e-5));
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* ------------------------------------------------------------------ free fall */

/* No constraints: the step is x_{n+1} = x_n + h v_n + h² g, v_{n+1} = v_n + h g, so after N steps
   v = v₀ + N h g and x = x₀ + N h v₀ + h² g N(N+1)/2, to round-off; ω stays constant. */
Test(avbd, free_fall_exact) {
  rl_pair p;
  load(&p, MODEL("avbd_freefall.xml"), NULL);
  rl_avbd *am = build(p.m);
  rl_data *d = rl_data_alloc(p.m);
  d->qvel[0] = (real)0.3; d->qvel[1] = (real)-0.2; d->qvel[2] = (real)1.5;
  rl_avbd_from_generalized(am, p.m, d);
  real x0[3], v0[3];
  memcpy(x0, am->pose[0].x, sizeof x0);
  memcpy(v0, am->vel, sizeof v0);
  const int N = 1000;
  double h = p.m->opt.timestep, ex = 0, ev = 0;
  int iters = 0;
  for (int n = 0; n < N; n++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    iters += am->stat.iterations;
  }
  for (int k = 0; k < 3; k++) {
    double g = p.m->opt.gravity[k];
    double v = v0[k] + N * h * g, x = x0[k] + N * h * v0[k] + h * h * g * N * (N + 1) / 2.0;
    ex = fmax(ex, fabs(am->pose[0].x[k] - x));
    ev = fmax(ev, fabs(am->vel[k] - v));
  }
  printf("avbd free fall (%s) 1000 steps: |x - x_exact| %.3e m, |v - v_exact| %.3e m/s, %d sweeps\n", RL_PREC_NAME, ex, ev,
         iters);
  cr_expect_leq(ex, TOL(1e-12, 2e-5));
  cr_expect_leq(ev, TOL(1e-12, 1e-4));
  cr_expect_eq(iters, N, "a constraint-free step should converge in one sweep");
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* ------------------------------------------------- agreement with the smooth engine as h → 0 */

/* run MODEL with AVBD at step h for T seconds from qpos0 (rest): final qpos in q; the worst anchor
   error and the count of budget-exhausted steps are returned through the pointers */
static void avbd_run(const char *model, double h, double T, real *q, double *anchor, long *exhausted, double *iters) {
  rl_pair p;
  load(&p, model, NULL);
  p.m->opt.timestep = (real)h;
  rl_avbd *am = build(p.m);
  rl_data *d = rl_data_alloc(p.m);
  rl_avbd_from_generalized(am, p.m, d);
  long n = lround(T / h), it = 0;
  double an = 0;
  for (long k = 0; k < n; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    an = fmax(an, am->stat.anchor_err);
    it += am->stat.iterations;
  }
  rl_avbd_to_generalized(am, p.m, d);
  memcpy(q, d->qpos, sizeof(real) * (size_t)p.m->nq);
  if (anchor) *anchor = an;
  if (exhausted) *exhausted = am->exhausted;
  if (iters) *iters = (double)it / (double)n;
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* reference: the generalized-coordinate smooth engine (RK4, h = 1e-4) — valid because the scene has
   no constraint rows (checked with rl_constraint_free) */
static int smooth_ref(const char *model, double T, real *q) {
  rl_pair p;
  char why[256];
  load(&p, model, "integrator=rk4");
  cr_assert(rl_constraint_free(&p, why, sizeof why), "%s has constraints: %s", model, why);
  p.m->opt.timestep = (real)1e-4;
  rl_data *d = rl_data_alloc(p.m);
  rl_forward_smooth(p.m, d);
  for (long k = 0; k < lround(T / 1e-4); k++) rl_step_smooth(p.m, d);
  memcpy(q, d->qpos, sizeof(real) * (size_t)p.m->nq);
  int nq = p.m->nq;
  rl_data_free(d);
  rl_pair_free(&p);
  return nq;
}

/* error at T = 0.5 s for h = 4, 2, 1, 0.5 ms; order = least-squares slope of log err vs log h.
   f32: the solver tolerance (5e-6 rad per step) accumulates to ~5e-2 rad over 0.5 s at the small steps,
   above the O(h) error, so only h = 4 and 2 ms enter the fit there (all errors printed). */
static double convergence_order(const char *model, const char *name) {
  const double hs[4] = {4e-3, 2e-3, 1e-3, 5e-4}, T = 0.5;
  real ref[64], q[64];
  int nq = smooth_ref(model, T, ref);
  double lx[4], ly[4], sx = 0, sy = 0;
  printf("avbd vs smooth engine, %s (%s), T = %.1f s:", name, RL_PREC_NAME, T);
  for (int i = 0; i < 4; i++) {
    double an, it;
    avbd_run(model, hs[i], T, q, &an, NULL, &it);
    double e = 0;
    for (int k = 0; k < nq; k++) e = fmax(e, fabs((double)q[k] - ref[k]));
    printf(" h=%.1e err=%.3e (anchor %.1e, %.1f sweeps/step);", hs[i], e, an, it);
    lx[i] = log(hs[i]);
    ly[i] = log(e);
    sx += lx[i];
    sy += ly[i];
  }
#if defined(RL_REAL_F32)
  const int nfit = 2;
  sx = lx[0] + lx[1];
  sy = ly[0] + ly[1];
#else
  const int nfit = 4;
#endif
  double num = 0, den = 0;
  for (int i = 0; i < nfit; i++) {
    num += (lx[i] - sx / nfit) * (ly[i] - sy / nfit);
    den += (lx[i] - sx / nfit) * (lx[i] - sx / nfit);
  }
  printf(" fitted order %.3f\n", num / den);
  return num / den;
}

Test(avbd, pendulum_converges_to_smooth_engine_first_order) {
  double o = convergence_order(SCENE("pendulum.xml"), "pendulum");
  cr_expect(o > TOL(0.8, 0.5) && o < TOL(1.3, 1.6), "order %.3f", o);
}
Test(avbd, double_pendulum_converges_to_smooth_engine_first_order) {
  double o = convergence_order(SCENE("double_pendulum.xml"), "double_pendulum");
  cr_expect(o > TOL(0.8, 0.5) && o < TOL(1.3, 1.6), "order %.3f", o);
}
Test(avbd, chain8_converges_to_smooth_engine_first_order) {
  double o = convergence_order(SCENE("chain8.xml"), "chain8");
  cr_expect(o > TOL(0.8, 0.5) && o < TOL(1.3, 1.6), "order %.3f", o);
}

/* ------------------------------------------------------------ mass ratio, limits, dry friction */

/* 50-link chain, 1 g links and a 50 kg last link (50 000:1), 1 s at h = 1 ms */
Test(avbd, chain50_mass_ratio_anchor_error) {
  real q[128];
  double an, it;
  long ex;
  avbd_run(MODEL("avbd_chain50.xml"), 1e-3, 1.0, q, &an, &ex, &it);
  printf("avbd chain50 50000:1 (%s), 1000 steps at 1 ms: max anchor error %.3e m, %.1f sweeps/step, %ld budget-exhausted "
         "steps\n", RL_PREC_NAME, an, it, ex);
  /* measured 7e-5 m with 970 of 1000 steps exhausting the budget: the 1 g links cannot carry the 490 N
     tension at ρ₀ = m_light/h² within the budget (see the report); this bounds the current behaviour */
  cr_expect_leq(an, 5e-4);
}

/* hinge hits its upper limit (0.5 rad) at 8 rad/s in zero gravity: the limit holds (violation beyond
   the stabilized residual ≤ tolerance), the joint stops, and never crosses the lower limit */
Test(avbd, joint_limit_hit_at_speed) {
  rl_pair p;
  load(&p, MODEL("avbd_limit.xml"), NULL);
  rl_avbd *am = build(p.m);
  rl_data *d = rl_data_alloc(p.m);
  d->qvel[0] = 8;
  rl_avbd_from_generalized(am, p.m, d);
  double qmax = -1, qmin = 1, vend = 0;
  long exhausted = 0;
  for (int k = 0; k < 500; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    rl_avbd_to_generalized(am, p.m, d);
    qmax = fmax(qmax, d->qpos[0]);
    qmin = fmin(qmin, d->qpos[0]);
    vend = d->qvel[0];
    exhausted += !am->stat.converged;
  }
  printf("avbd limit at 8 rad/s (%s): max q %.9f (limit 0.5, violation %.3e rad), min q %.4f, final qvel %.3e, "
         "%ld budget-exhausted steps\n", RL_PREC_NAME, qmax, qmax - 0.5, qmin, vend, exhausted);
  cr_expect_leq(qmax - 0.5, TOL(1e-6, 1e-4));
  cr_expect_geq(qmin, -0.5);
  /* at rest on the limit up to velocity noise ~ tol/h (f32: tol_ang 5e-6 rad per 1 ms step) */
  cr_expect_leq(fabs(vend), TOL(1e-4, 2e-2), "the joint should rest on its limit (inelastic)");
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* pendulum released 60° from hanging, gravity torque 1.2744 N m: frictionloss 1.5 holds it (drift over
   1 s below tolerance), frictionloss 1.0 lets it slip */
static double dry_run(real frictionloss, double *resid) {
  rl_pair p;
  load(&p, MODEL("avbd_dry.xml"), NULL);
  p.m->dof_frictionloss[0] = frictionloss;
  rl_avbd *am = build(p.m);
  rl_data *d = rl_data_alloc(p.m);
  rl_avbd_from_generalized(am, p.m, d);
  real q0 = d->qpos[0];
  double r = 0;
  for (int k = 0; k < 1000; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    r = fmax(r, am->stat.dry_residual);
  }
  rl_avbd_to_generalized(am, p.m, d);
  double drift = fabs((double)d->qpos[0] - q0);
  *resid = r;
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
  return drift;
}

Test(avbd, dry_friction_holds_below_budget_slips_above) {
  double r1, r2;
  double hold = dry_run((real)1.5, &r1), slip = dry_run((real)1.0, &r2);
  printf("avbd dry friction (%s), gravity torque 1.2744 N m: budget 1.5 -> drift %.3e rad (r_f %.1e); budget 1.0 -> "
         "moved %.3f rad (r_f %.1e)\n", RL_PREC_NAME, hold, r1, slip, r2);
  /* Δφ is measured from each step's start (seed 001), so a stuck joint drifts by at most the per-step
     tolerance: 1000 steps × tol_ang (1e-8 f64, 5e-6 f32) */
  cr_expect_leq(hold, TOL(5e-5, 1e-2));
  cr_expect_gt(slip, 20 * hold);
  cr_expect_geq(slip, 0.1);
}

/* ------------------------------------------------------------------------ contacts */

/* a cube resting on the floor (own ground contacts: 4 corners) for 2 s */
Test(avbd, box_rests_on_ground) {
  rl_pair p;
  load(&p, MODEL("avbd_box.xml"), NULL);
  rl_avbd *am = build(p.m);
  rl_data *d = rl_data_alloc(p.m);
  rl_avbd_from_generalized(am, p.m, d);
  double pen = 0, kkt = 0;
  long exhausted = 0;
  for (int k = 0; k < 2000; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    pen = fmax(pen, am->stat.penetration);
    kkt = fmax(kkt, fmax(am->stat.kkt_cone, am->stat.kkt_normal_sign));
    exhausted += !am->stat.converged;
  }
  rl_avbd_to_generalized(am, p.m, d);
  double v = 0;
  for (int i = 0; i < 6; i++) v = fmax(v, fabs(d->qvel[i]));
  printf("avbd box on ground (%s), 2 s: z %.9f (0.05), max penetration %.3e m, final |qvel| %.3e, %d contacts, "
         "cone/sign violation %.1e, %ld budget-exhausted steps\n", RL_PREC_NAME, d->qpos[2], pen, v, am->stat.ncon, kkt,
         exhausted);
  cr_expect_leq(fabs(d->qpos[2] - 0.05), TOL(1e-6, 1e-4));
  cr_expect_leq(fabs(d->qpos[0]) + fabs(d->qpos[1]), TOL(1e-9, 1e-5));
  cr_expect_leq(v, TOL(1e-6, 1e-3));
  cr_expect_eq(am->stat.ncon, 4);
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* a block on a 20° incline, μ = 0.7 > tan 20°: static friction holds it (no creep over 2 s) */
Test(avbd, incline_sticks) {
  rl_pair p;
  load(&p, SCENE("incline.xml"), NULL);
  rl_avbd *am = build(p.m);
  rl_data *d = rl_data_alloc(p.m);
  rl_avbd_from_generalized(am, p.m, d);
  real x0[3];
  memcpy(x0, d->qpos, sizeof x0);
  long exhausted = 0;
  for (int k = 0; k < 1000; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    exhausted += !am->stat.converged;
  }
  rl_avbd_to_generalized(am, p.m, d);
  double dx = fabs((double)d->qpos[0] - x0[0]) + fabs((double)d->qpos[1] - x0[1]);
  printf("avbd incline (%s), 2 s at 2 ms: downhill creep %.3e m, %d contacts, stick friction KKT cone %.1e, %ld "
         "budget-exhausted steps\n", RL_PREC_NAME, dx, am->stat.ncon, am->stat.kkt_cone, exhausted);
  cr_expect_leq(dx, TOL(1e-6, 1e-4));
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* ------------------------------------------------------------------------ microduck */

/* standing on its position servos (ctrl = 0) for 10 s at h = 1 ms */
Test(avbd, microduck_stands_10s, .timeout = 600) {
  rl_pair p;
  load(&p, SCENE("microduck.xml"), NULL);
  p.m->opt.timestep = (real)1e-3;
  rl_avbd *am = build(p.m);
  rl_data *d = rl_data_alloc(p.m);
  rl_avbd_from_generalized(am, p.m, d);
  double an = 0, ax = 0, pen = 0, it = 0;
  int maxit = 0;
  for (int k = 0; k < 10000; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    an = fmax(an, am->stat.anchor_err);
    ax = fmax(ax, am->stat.axis_err);
    pen = fmax(pen, am->stat.penetration);
    it += am->stat.iterations;
    if (am->stat.iterations > maxit) maxit = am->stat.iterations;
  }
  rl_avbd_to_generalized(am, p.m, d);
  printf("avbd microduck (%s) 10 s at 1 ms: trunk z %.5f, max anchor error %.3e m, max axis error %.3e rad, max "
         "penetration %.3e m, %.1f sweeps/step (max %d), %ld of %ld steps budget-exhausted, %d contacts, %d colors\n",
         RL_PREC_NAME, d->qpos[2], an, ax, pen, it / 10000, maxit, am->exhausted, am->steps, am->stat.ncon, am->stat.ncolor);
  cr_expect_leq(an, TOL(1e-6, 1e-5));
  cr_expect_eq(am->exhausted, 0);
  cr_expect_gt(d->qpos[2], 0.25, "fell");
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}
