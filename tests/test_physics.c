/* test_physics.c — analytic and physical checks of the full constrained step, f64:
 *   incline slide: under convex resolution rigidlab reproduces MuJoCo's own acceleration (per cone);
 *     under signorini it is within 1 % of g(sin θ − μ cos θ);
 *   incline stick (experiments/scenes/incline.xml, μ = 0.7 > tan 20°): creep below 1e-3 m/s;
 *   a cube sliding at 6 m/s, μ = 0.5: signorini keeps it on the plane (height gain < 1 mm), convex lifts it;
 *   a spinning sphere stops under torsional friction, a rolling ball under rolling friction;
 *   a four-bar linkage (connect equality) keeps its closure.
 * Each figure is printed so that it can be quoted. */
#define _DEFAULT_SOURCE /* M_PI */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>
#include "pair.h"
#include "states.h"

#define MODEL(name) SRCDIR "/tests/models/" name
#define SCENE(name) SRCDIR "/experiments/scenes/" name

static void load(rl_pair *p, const char *model, const char *const *opts) {
  rl_common_args c = {0};
  char err[1024];
  c.model = model;
  for (int i = 0; opts && opts[i]; i++) c.opts[c.nopts++] = opts[i];
  cr_assert_eq(rl_pair_load(p, &c, 0, err, sizeof err), 0, "%s", err);
  cr_assert_eq(rl_solver_check_options(p->m, err, sizeof err), 0, "%s", err);
}

/* velocity of the free body's centre along dir */
static double along(const double *v, const double dir[3]) { return v[0] * dir[0] + v[1] * dir[1] + v[2] * dir[2]; }

/* Acceleration along the slope of the incline_slide box, from the velocity at steps 100 and 400,
   for rigidlab (ours) and MuJoCo (mj) under the given options. */
static void incline_accel(const char *const *opts, double *ours, double *mj) {
  rl_pair p;
  load(&p, MODEL("incline_slide.xml"), opts);
  mjData *mjd = mj_makeData(p.mjm);
  rl_data *d = rl_data_alloc(p.m);
  rl_set_state(&p, d, mjd, mjd->qpos, mjd->qvel, mjd->ctrl);
  double th = 20 * M_PI / 180, dir[3] = {cos(th), 0, -sin(th)}, v1[2] = {0, 0}, v2[2] = {0, 0};
  for (int i = 0; i < 400; i++) {
    rl_step(p.m, d);
    mj_step(p.mjm, mjd);
    double vo[3] = {d->qvel[0], d->qvel[1], d->qvel[2]};
    if (i == 99) v1[0] = along(vo, dir), v1[1] = along(mjd->qvel, dir);
    if (i == 399) v2[0] = along(vo, dir), v2[1] = along(mjd->qvel, dir);
  }
  double T = 300 * p.mjm->opt.timestep;
  *ours = (v2[0] - v1[0]) / T;
  *mj = (v2[1] - v1[1]) / T;
  rl_data_free(d);
  mj_deleteData(mjd);
  rl_pair_free(&p);
}

static const double g_analytic_incline = 9.81 * (0.34202014332566871 - 0.3 * 0.93969262078590843);

Test(physics, incline_convex_reproduces_mujoco_per_cone) {
  const char *cones[2] = {"cone=pyramidal", "cone=elliptic"};
  for (int c = 0; c < 2; c++) {
    const char *opts[] = {cones[c], "solver=newton", "contact_resolution=convex", NULL};
    double ours, mj;
    incline_accel(opts, &ours, &mj);
    double dev = (ours - g_analytic_incline) / g_analytic_incline;
    printf("incline convex %-15s a = %.6f (MuJoCo %.6f, analytic %.6f): deviation from analytic %+.2f %%, from MuJoCo "
           "%.2e\n",
           cones[c], ours, mj, g_analytic_incline, 100 * dev, fabs(ours - mj) / fabs(mj));
    cr_expect(fabs(ours - mj) <= 1e-6 * fabs(mj), "%s: a = %.9f, MuJoCo %.9f", cones[c], ours, mj);
  }
}

Test(physics, incline_signorini_within_1_percent) {
  const char *opts[] = {"cone=elliptic", "solver=newton", "contact_resolution=signorini", NULL};
  double ours, mj;
  incline_accel(opts, &ours, &mj);
  double dev = (ours - g_analytic_incline) / g_analytic_incline;
  printf("incline signorini a = %.6f analytic %.6f deviation %+.3f %% (MuJoCo convex elliptic %.6f)\n", ours,
         g_analytic_incline, 100 * dev, mj);
  cr_expect(fabs(dev) <= 0.01, "signorini incline deviation %.3f %%", 100 * dev);
}

/* creep speed of the sticking incline box over the last second of 3 s */
Test(physics, incline_sticks) {
  const char *res[2] = {"contact_resolution=convex", "contact_resolution=signorini"};
  for (int r = 0; r < 2; r++) {
    const char *opts[] = {"cone=elliptic", "solver=newton", res[r], NULL};
    rl_pair p;
    load(&p, SCENE("incline.xml"), opts);
    rl_data *d = rl_data_alloc(p.m);
    double x0 = 0;
    for (int i = 0; i < 1500; i++) {
      rl_step(p.m, d);
      if (i == 999) x0 = d->qpos[0];
    }
    double creep = (d->qpos[0] - x0) / (500 * p.m->opt.timestep);
    printf("incline stick %-28s creep %.3e m/s\n", res[r], creep);
    cr_expect(fabs(creep) < 1e-3, "%s: creep %.3e m/s", res[r], creep);
    rl_data_free(d);
    rl_pair_free(&p);
  }
}

/* highest centre height reached by the launched cube over 1.4 s, minus its resting height */
static double cube_lift(const char *resolution) {
  const char *opts[] = {"cone=elliptic", "solver=newton", resolution, NULL};
  rl_pair p;
  load(&p, MODEL("slide_cube.xml"), opts);
  rl_data *d = rl_data_alloc(p.m);
  mjData *mjd = mj_makeData(p.mjm);
  mj_resetDataKeyframe(p.mjm, mjd, 0);
  rl_set_state(&p, d, NULL, mjd->qpos, mjd->qvel, mjd->ctrl);
  double zmax = 0;
  for (int i = 0; i < 700; i++) {
    rl_step(p.m, d);
    if (d->qpos[2] > zmax) zmax = d->qpos[2];
  }
  mj_deleteData(mjd);
  rl_data_free(d);
  rl_pair_free(&p);
  return zmax - 0.05;
}

Test(physics, sliding_cube_stays_on_plane_under_signorini) {
  double sig = cube_lift("contact_resolution=signorini"), cvx = cube_lift("contact_resolution=convex");
  printf("sliding cube height gain: signorini %.4f mm, convex %.4f mm\n", 1e3 * sig, 1e3 * cvx);
  cr_expect(sig < 1e-3, "signorini lifts the cube by %.4f mm", 1e3 * sig);
  cr_expect(cvx > sig, "convex (%.4f mm) should lift more than signorini (%.4f mm)", 1e3 * cvx, 1e3 * sig);
}

/* run a keyframed model for n steps and return qvel[k] */
static double spin_down(const char *model, int n, int k, double *start) {
  const char *opts[] = {"solver=newton", NULL};
  rl_pair p;
  load(&p, model, opts);
  rl_data *d = rl_data_alloc(p.m);
  mjData *mjd = mj_makeData(p.mjm);
  mj_resetDataKeyframe(p.mjm, mjd, 0);
  rl_set_state(&p, d, NULL, mjd->qpos, mjd->qvel, mjd->ctrl);
  *start = d->qvel[k];
  for (int i = 0; i < n; i++) rl_step(p.m, d);
  double v = d->qvel[k];
  mj_deleteData(mjd);
  rl_data_free(d);
  rl_pair_free(&p);
  return v;
}

Test(physics, torsional_and_rolling_friction_stop_the_sphere) {
  double w0, v0;
  double w = spin_down(MODEL("spin_sphere.xml"), 2500, 5, &w0);
  double v = spin_down(MODEL("roll_ball.xml"), 5000, 0, &v0);
  printf("spinning sphere: w_z %.3f -> %.2e rad/s after 5 s; rolling ball: v_x %.3f -> %.2e m/s after 10 s\n", w0, w,
         v0, v);
  cr_expect(fabs(w) < 1e-2 * fabs(w0), "spin not stopped: %.3e", w);
  cr_expect(fabs(v) < 1e-2 * fabs(v0), "rolling not stopped: %.3e", v);
}

Test(physics, fourbar_keeps_closure) {
  const char *opts[] = {"solver=newton", NULL};
  rl_pair p;
  load(&p, MODEL("fourbar.xml"), opts);
  rl_data *d = rl_data_alloc(p.m);
  mjData *mjd = mj_makeData(p.mjm);
  double worst = 0, worst_mj = 0;
  for (int i = 0; i < 3000; i++) {
    rl_step(p.m, d);
    mj_step(p.mjm, mjd);
    double e = 0, emj = 0;
    for (int k = 0; k < 3 && k < d->nefc; k++) e += (double)d->efc_pos[k] * d->efc_pos[k];
    for (int k = 0; k < 3 && k < mjd->nefc; k++) emj += mjd->efc_pos[k] * mjd->efc_pos[k];
    worst = fmax(worst, sqrt(e));
    worst_mj = fmax(worst_mj, sqrt(emj));
  }
  printf("four-bar closure over 3 s: max %.3e m (MuJoCo %.3e m)\n", worst, worst_mj);
  cr_expect(worst < 2e-2 && worst <= 1.05 * worst_mj + 1e-6, "closure error %.3e m (MuJoCo %.3e)", worst, worst_mj);
  mj_deleteData(mjd);
  rl_data_free(d);
  rl_pair_free(&p);
}

/* a suction gripper: a weld to the world switched off and on at run time through d->eq_active */
Test(physics, suction_weld_switched_at_run_time) {
  const char *opts[] = {"solver=newton", NULL};
  rl_pair p;
  load(&p, MODEL("suction.xml"), opts);
  rl_data *d = rl_data_alloc(p.m);
  for (int i = 0; i < 250; i++) rl_step(p.m, d); /* held: 0.5 s */
  double z_held = d->qpos[2];
  d->eq_active[0] = 0; /* release */
  double z0 = d->qpos[2], v0 = d->qvel[2];
  for (int i = 0; i < 150; i++) rl_step(p.m, d); /* 0.3 s of free fall */
  /* semi-implicit Euler's exact free fall: z drops by −v₀·t + g·h²·n(n+1)/2 after n steps */
  double h = p.m->opt.timestep, t = 150 * h, drop = z0 - d->qpos[2], expect = -v0 * t + 9.81 * h * h * 150 * 151 / 2;
  d->eq_active[0] = 1; /* grip again */
  for (int i = 0; i < 1000; i++) rl_step(p.m, d);
  printf(
      "suction: held at z %.5f (1 m), fell %.5f m in %.1f s (discrete free fall %.5f), re-gripped at z %.5f v %.2e\n",
      z_held, drop, t, expect, d->qpos[2], d->qvel[2]);
  cr_expect(fabs(z_held - 1) < 2e-3, "weld did not hold: z %.5f", z_held);
  cr_expect(fabs(drop - expect) < 1e-9, "release is not free fall: %.9f vs %.9f", drop, expect);
  cr_expect(fabs(d->qpos[2] - 1) < 2e-3 && fabs(d->qvel[2]) < 1e-2, "re-grip did not hold: z %.5f v %.3g", d->qpos[2],
            d->qvel[2]);
  rl_data_free(d);
  rl_pair_free(&p);
}

/* The implicit step on a damped slide that touches nothing (the adhesion gripper's arm lifted clear of the
   box, which hangs above the floor): its dof is its own tree, so (M − h·D) is diagonal there with D = −b, and the step must give
   v₁ = v₀ + h·f/(m + h·b) exactly (f = qfrc_smooth + qfrc_constraint).  And the arena holds the implicit
   step on a 27-dof humanoid (rl_implicit returns 0: no fall-back to Euler). */
Test(physics, implicit_damped_slide_and_arena) {
  static const char *const opts[] = {"integrator=implicit", NULL};
  rl_pair p;
  load(&p, MODEL("adhesion_gripper.xml"), opts);
  rl_data *d = rl_data_alloc(p.m);
  mjData *mjd = mj_makeData(p.mjm);
  mjd->qpos[0] = 0.1;
  mjd->qvel[0] = 0.7;
  rl_set_state(&p, d, NULL, mjd->qpos, mjd->qvel, mjd->ctrl);
  rl_forward(p.m, d);
  double h = p.m->opt.timestep, b = p.m->dof_damping[0], M = d->qM[p.m->dof_Madr[0]];
  double f = d->qfrc_smooth[0] + d->qfrc_constraint[0], v0 = d->qvel[0];
  cr_assert_eq(d->ncon, 0, "the arm touches nothing (ncon %d)", d->ncon);
  cr_assert_eq(rl_implicit(p.m, d), 0, "implicit step refused");
  double want = v0 + h * f / (M + h * b);
  cr_expect(fabs(d->qvel[0] - want) <= 1e-14 * fabs(want), "v1 %.17g, want %.17g", d->qvel[0], want);
  rl_data_free(d);
  mj_deleteData(mjd);
  rl_pair_free(&p);
  const char *hum = "/usr/share/mujoco/model/humanoid/humanoid.xml";
  if (access(hum, R_OK)) return;
  load(&p, hum, opts);
  d = rl_data_alloc(p.m);
  rl_forward(p.m, d);
  cr_expect_eq(rl_implicit(p.m, d), 0, "humanoid: implicit step refused (arena)");
  rl_data_free(d);
  rl_pair_free(&p);
}
