/* test_analytic.c — `rigidlab run` study kinds analytic and speed, end to end.
 * analytic: experiments/analytic.ini passes its gate; the closed-form errors are small for every engine
 * (slide acceleration within 1 %, free fall to round-off in f64, MuJoCo's numbers recorded beside); the
 * expectations follow the model as run (RK4 by --opt: free fall still exact); a planted change (twice the
 * time step) fails the gate naming the tumbling drift; a scene without a declared check exits 2 naming file:line.
 * speed: a small spec writes 11 raw repetitions per point and the three metrics, consistent with each other;
 * an engine AVBD cannot run is reported and has no metrics; mujoco as an engine exits 2.  bench --engines
 * avbd: its sweep statistics count every timed step and agree with the timed row.  No timing is asserted
 * (speed is never a pass/fail test). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rl_test_cli.h"

static char out[1 << 16];

static void setup(void) { rl_cli_mkdtemp("analytic"); }
static void teardown(void) { rl_cli_teardown(); }
static int rl(const char *args) { return rl_cli_run(args, out, sizeof out); }
#define metric_of rl_cli_metric

static int count_lines(const char *path) {
  FILE *f = fopen(path, "r");
  int n = 0, c;
  if (!f) return -1;
  while ((c = fgetc(f)) != EOF) n += c == '\n';
  fclose(f);
  return n;
}

#define BASE   SRCDIR "/reports/baselines"
#define SCENES SRCDIR "/experiments/scenes"

TestSuite(analytic, .init = setup, .fini = teardown, .timeout = 240);

Test(analytic, closed_form_errors_are_small_and_gate) {
  char a[1024], p[512];
  snprintf(a, sizeof a, "run %s/experiments/analytic.ini --out %s/an --jobs 2", SRCDIR, tmpdir);
  cr_assert_eq(rl(a), 0, "%s", out);
  snprintf(a, sizeof a, "check %s/an/analytic --baseline %s", tmpdir, BASE);
  cr_expect_eq(rl(a), 0, "%s", out);
  snprintf(p, sizeof p, "%s/an/analytic/metrics.csv", tmpdir);
  static const char *const eng[4] = {"newton", "cg", "avbd", "mujoco"};
  for (int e = 0; e < 4; e++) {
    char pt[128];
    snprintf(pt, sizeof pt, "incline_slide.%s.f64", eng[e]);
    double ra = metric_of(p, pt, "incline_accel_rel_err");
    cr_expect(ra >= 0 && ra < 0.01, "%s: slide acceleration rel err %g (want < 1 %%)", pt, ra);
    cr_expect(metric_of(p, pt, "incline_tan_over_mu") > 1, "%s: tan θ > μ (slides)", pt);
    snprintf(pt, sizeof pt, "incline.%s.f64", eng[e]);
    double c = metric_of(p, pt, "incline_creep");
    cr_expect(c >= 0 && c < 1e-3, "%s: creep %g m/s on the sticking incline", pt, c);
    cr_expect(metric_of(p, pt, "incline_tan_over_mu") < 1, "%s: tan θ < μ (sticks)", pt);
    snprintf(pt, sizeof pt, "freefall.%s.f64", eng[e]);
    double ff = metric_of(p, pt, "freefall_err"), fc = metric_of(p, pt, "freefall_err_continuous");
    cr_expect(ff >= 0 && ff < 1e-12, "%s: free fall rel err %g (want round-off)", pt, ff);
    /* the ½ g t dt term of semi-implicit Euler is real: without it the error is O(dt) */
    cr_expect(fc > 1e-4 && fc < 1e-2, "%s: error against the continuous solution %g", pt, fc);
    snprintf(pt, sizeof pt, "tumbling.%s.f64", eng[e]);
    double md = metric_of(p, pt, "momentum_drift"), ed = metric_of(p, pt, "kinetic_energy_drift");
    cr_expect(md > 0 && md < 1e-2 && ed > 0 && ed < 1e-2, "%s: drift |ΔL|/|L| %g, ΔT/T %g", pt, md, ed);
  }
  /* f32: the free fall to float round-off */
  double f32 = metric_of(p, "freefall.newton.f32", "freefall_err");
  cr_expect(f32 > 1e-9 && f32 < 1e-4, "f32 free fall rel err %g", f32);
  /* rigidlab's soft engines take MuJoCo's step: the same drift to many digits */
  double mn = metric_of(p, "tumbling.newton.f64", "momentum_drift"),
         mm = metric_of(p, "tumbling.mujoco.f64", "momentum_drift");
  cr_expect(fabs(mn - mm) <= 1e-6 * mm, "tumbling drift newton %g vs MuJoCo %g", mn, mm);

  /* the expectations follow the model as run: RK4 by --opt makes the free fall exact without the dt term */
  snprintf(a, sizeof a, "run %s/experiments/analytic.ini --out %s/rk --jobs 2 --opt integrator=rk4", SRCDIR, tmpdir);
  cr_assert_eq(rl(a), 0, "%s", out);
  snprintf(p, sizeof p, "%s/rk/analytic/metrics.csv", tmpdir);
  double rk = metric_of(p, "freefall.newton.f64", "freefall_err"),
         rka = metric_of(p, "freefall.avbd.f64", "freefall_err");
  cr_expect(rk >= 0 && rk < 1e-12, "RK4 free fall rel err %g", rk);
  cr_expect(rka >= 0 && rka < 1e-12, "AVBD ignores the integrator: free fall rel err %g", rka);

  /* a planted change: twice the time step quadruples the tumbling drift, and the gate names it */
  snprintf(a, sizeof a, "run %s/experiments/analytic.ini --out %s/dt --jobs 2 --opt timestep=0.004", SRCDIR, tmpdir);
  cr_assert_eq(rl(a), 0, "%s", out);
  snprintf(a, sizeof a, "check %s/dt/analytic --baseline %s", tmpdir, BASE);
  cr_expect_eq(rl(a), 1, "%s", out);
  cr_expect_not_null(strstr(out, "analytic tumbling.newton.f64 momentum_drift = "), "%s", out);
}

Test(analytic, a_scene_without_a_check_exits_2_naming_file_and_line) {
  char spec[512], a[1024];
  rl_cli_write(spec, sizeof spec, "bad.ini",
               "[experiment]\nname = bad\nkind = analytic\nscene = %s/freefall.xml, %s/pendulum.xml\nsteps = 5\n",
               SCENES, SCENES);
  snprintf(a, sizeof a, "run %s --out %s/out", spec, tmpdir);
  cr_expect_eq(rl(a), 2, "%s", out);
  cr_expect_not_null(strstr(out, "bad.ini:4:"), "%s", out);
  cr_expect_not_null(strstr(out, "pendulum.xml: kind = analytic needs <custom><text name=\"rigidlab_check\""), "%s",
                     out);
  snprintf(a, sizeof a, "%s/out", tmpdir);
  cr_expect_neq(access(a, F_OK), 0, "output written for a bad spec");
}

/* `rigidlab bench --engines avbd`: the AVBD line's mean sweeps per step and time per body-sweep agree with
   the timed row (ns per step = ns per body-sweep × sweeps/step × bodies) and count every timed step */
Test(analytic, bench_avbd_reports_sweeps_and_time_per_body_sweep) {
  char a[1024];
  snprintf(a, sizeof a, "bench %s/chain8.xml --stages step --engines avbd --precision f64 --reps 3 --steps 10", SCENES);
  cr_assert_eq(rl(a), 0, "%s", out);
  double ours, theirs, ratio, sweeps, ns;
  int nb, last, exh, steps;
  const char *row = strstr(out, "\nstep ");
  cr_assert_not_null(row, "%s", out);
  cr_assert_eq(sscanf(row, "\nstep avbd f64 %lf %lf %lf", &ours, &theirs, &ratio), 3, "%s", out);
  const char *line = strstr(out, "(avbd: own ground contacts, ");
  cr_assert_not_null(line, "%s", out);
  cr_assert_eq(sscanf(line,
                      "(avbd: own ground contacts, %d bodies, %lf sweeps/step (last %d), %lf ns per body-sweep, "
                      "%*d contacts, %d of %d steps budget-exhausted)",
                      &nb, &sweeps, &last, &ns, &exh, &steps),
               6, "%s", out);
  cr_expect_eq(nb, 8, "%s", out);
  cr_expect_eq(steps, 30, "%s", out);
  cr_expect(sweeps >= 1 && sweeps <= 500 && last >= 1 && last <= 500, "%s", out);
  cr_expect(fabs(ns * sweeps * nb - ours) <= 0.02 * ours,
            "%g ns per body-sweep × %g sweeps × %d bodies vs %g ns per step", ns, sweeps, nb, ours);
}

Test(analytic, speed_writes_raw_repetitions_and_consistent_metrics) {
  char spec[512], a[1024], p[512];
  rl_cli_write(spec, sizeof spec, "speed.ini",
               "[experiment]\nname = sp\nkind = speed\nscene = %s/box_stack.xml, %s\nsteps = 3\n[sweep]\n"
               "engine = newton, avbd\nprecision = f64\n",
               SCENES, SRCDIR "/tests/models/fluid_ellipsoid.xml");
  snprintf(a, sizeof a, "run %s --out %s/sp --jobs 2", spec, tmpdir);
  cr_assert_eq(rl(a), 0, "%s", out);
  cr_expect_not_null(strstr(out, "runs one point at a time"), "%s", out);
  cr_expect_not_null(strstr(out, "fluid_ellipsoid.avbd.f64: not timed: avbd: body"), "%s", out);
  snprintf(p, sizeof p, "%s/sp/sp/traj_box_stack.avbd.f64.speed.csv", tmpdir);
  cr_expect_eq(count_lines(p), 12, "%s: header + 11 repetitions", p);
  snprintf(p, sizeof p, "%s/sp/sp/traj_fluid_ellipsoid.avbd.f64.speed.csv", tmpdir);
  cr_expect_eq(count_lines(p), 1, "%s: header only (not timed)", p);
  snprintf(p, sizeof p, "%s/sp/sp/metrics.csv", tmpdir);
  static const char *const pts[3] = {"box_stack.newton.f64", "box_stack.avbd.f64", "fluid_ellipsoid.newton.f64"};
  for (int i = 0; i < 3; i++) {
    double s = metric_of(p, pts[i], "steps_per_s"), m = metric_of(p, pts[i], "mujoco_steps_per_s"),
           r = metric_of(p, pts[i], "time_ratio");
    cr_expect(s > 0 && m > 0 && fabs(r - m / s) <= 1e-12 * r, "%s: %g steps/s, MuJoCo %g, ratio %g", pts[i], s, m, r);
  }
  cr_expect(isnan(metric_of(p, "fluid_ellipsoid.avbd.f64", "steps_per_s")), "fluid_ellipsoid.avbd has no metrics");
  /* mj_step is timed beside every point: mujoco is no engine of kind = speed */
  rl_cli_write(spec, sizeof spec, "speed.ini",
               "[experiment]\nname = sp\nkind = speed\nscene = %s/box_stack.xml\nsteps = 3\n[sweep]\nengine = mujoco\n",
               SCENES);
  snprintf(a, sizeof a, "run %s --out %s/sp2", spec, tmpdir);
  cr_expect_eq(rl(a), 2, "%s", out);
  cr_expect_not_null(strstr(out, "speed.ini:7: [sweep] engine: 'mujoco' is not available for kind = speed"), "%s", out);
}
