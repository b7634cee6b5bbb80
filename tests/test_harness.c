/* test_harness.c — `rigidlab run | merge | check` end to end on experiments/smoke.ini:
 * the smoke study passes the gate against reports/baselines/smoke; a planted regression (every solver
 * capped at one iteration) fails it naming the metric; bad specs exit 2 naming file:line; --jobs 1 and
 * --jobs 2, and two shards merged, give byte-identical metrics.csv; --resume finishes a partial run; check and
 * report find every study below the top of a results tree.
 * The study kinds (refinement, fp32, residuals, convergence, lockstep): each bundled spec passes its gate, its key
 * figure is sane, and a planted change fails the gate naming the metric; every kind runs AVBD too (convergence: against
 * the dense KKT reference, experiments/convergence_avbd.ini).  Kind device: without a CUDA engine the cuda points
 * are absent (no rows, no files) and meta.csv and `check` say why.  The default study's kinds (verify, agreement,
 * contact, bench): each writes the study file `rigidlab report` reads, its metrics are sane, a merge of shards
 * rebuilds the study file byte for byte, and their own keys and axes are checked. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rl_test_cli.h"

static void setup(void) { rl_cli_mkdtemp("harness"); }
static void teardown(void) { rl_cli_teardown(); }
#define rl        rl_cli_run
#define metric_of rl_cli_metric

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *t = malloc((size_t)n + 1);
  size_t r = fread(t, 1, (size_t)n, f);
  t[r] = 0;
  fclose(f);
  return t;
}

static void same_file(const char *a, const char *b) {
  char *x = slurp(a), *y = slurp(b);
  cr_assert_not_null(x, "%s missing", a);
  cr_assert_not_null(y, "%s missing", b);
  cr_expect_str_eq(x, y, "%s and %s differ", a, b);
  free(x);
  free(y);
}

#define SMOKE SRCDIR "/experiments/smoke.ini"
#define BASE  SRCDIR "/reports/baselines"
static char out[1 << 16];

TestSuite(harness, .init = setup, .fini = teardown, .timeout = 240);

Test(harness, smoke_passes_the_gate_and_jobs_do_not_matter) {
  char a[1024], p1[512], p2[512];
  snprintf(a, sizeof a, "run %s --out %s/j1 --jobs 1", SMOKE, tmpdir);
  cr_assert_eq(rl(a, out, sizeof out), 0, "%s", out);
  snprintf(a, sizeof a, "run %s --out %s/j2 --jobs 2", SMOKE, tmpdir);
  cr_assert_eq(rl(a, out, sizeof out), 0, "%s", out);
  snprintf(p1, sizeof p1, "%s/j1/smoke/metrics.csv", tmpdir);
  snprintf(p2, sizeof p2, "%s/j2/smoke/metrics.csv", tmpdir);
  same_file(p1, p2);
  snprintf(a, sizeof a, "check %s/j2 --baseline %s", tmpdir, BASE);
  int st = rl(a, out, sizeof out);
  cr_expect_eq(st, 0, "smoke study outside its baseline bands (exit %d):\n%s", st, out);
}

Test(harness, planted_regression_fails_the_gate_naming_the_metric) {
  char a[1024];
  snprintf(a, sizeof a, "run %s --out %s/r --jobs 2 --opt iterations=1", SMOKE, tmpdir);
  cr_assert_eq(rl(a, out, sizeof out), 0, "%s", out);
  snprintf(a, sizeof a, "check %s/r/smoke --baseline %s", tmpdir, BASE);
  int st = rl(a, out, sizeof out);
  cr_expect_eq(st, 1, "check exit %d (want 1):\n%s", st, out);
  cr_expect_not_null(strstr(out, "smoke box_stack.cg.f64.cone=pyramidal iterations_mean = 1 outside band ratio 1.5"),
                     "no line naming study, point, metric, value and band:\n%s", out);
  cr_expect_not_null(strstr(out, "out of band from step"), "no first step:\n%s", out);
}

Test(harness, shards_merge_to_the_full_run_and_resume_completes) {
  char a[1024], p1[512], p2[512];
  snprintf(a, sizeof a, "run %s --out %s/full --jobs 2", SMOKE, tmpdir);
  cr_assert_eq(rl(a, out, sizeof out), 0, "%s", out);
  for (int i = 1; i <= 2; i++) {
    snprintf(a, sizeof a, "run %s --out %s/s%d --jobs 1 --shard %d/2", SMOKE, tmpdir, i, i);
    cr_assert_eq(rl(a, out, sizeof out), 0, "%s", out);
  }
  snprintf(a, sizeof a, "merge %s/s1 %s/s2 --out %s/merged", tmpdir, tmpdir, tmpdir);
  cr_assert_eq(rl(a, out, sizeof out), 0, "%s", out);
  snprintf(p1, sizeof p1, "%s/full/smoke/metrics.csv", tmpdir);
  snprintf(p2, sizeof p2, "%s/merged/smoke/metrics.csv", tmpdir);
  same_file(p1, p2);
  /* an interrupted run: a trajectory and the metrics gone; --resume redoes just that point */
  snprintf(a, sizeof a, "%s/full/smoke/traj_microduck.cg.f64.cone=elliptic.csv", tmpdir);
  cr_assert_eq(unlink(a), 0);
  snprintf(a, sizeof a, "%s/full/smoke/metrics.csv", tmpdir);
  char *before = slurp(a);
  cr_assert_eq(unlink(a), 0);
  snprintf(a, sizeof a, "run %s --out %s/full --jobs 2 --resume", SMOKE, tmpdir);
  cr_assert_eq(rl(a, out, sizeof out), 0, "%s", out);
  cr_expect_not_null(strstr(out, "11 of 12 points already done"), "%s", out);
  char *after = slurp(p1);
  cr_assert_not_null(after);
  cr_expect_str_eq(before, after);
  free(before);
  free(after);
}

/* lines in OUT */
static int lines_of(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

/* `check` and `report` take the top of any results tree: the studies are found wherever they are below it
   (tools/run's layout TREE/studies/NAME, a study folder itself); a tree without one: exit 2, one line saying
   where it looked */
Test(harness, check_and_report_find_every_study_in_a_results_tree) {
  char a[1024], p[512];
  snprintf(a, sizeof a, "run %s --out %s/tree/studies --jobs 2", SMOKE, tmpdir);
  cr_assert_eq(rl(a, out, sizeof out), 0, "%s", out);
  const char *tops[] = {"tree", "tree/studies", "tree/studies/smoke"};
  for (int i = 0; i < 3; i++) {
    snprintf(a, sizeof a, "check %s/%s --baseline %s", tmpdir, tops[i], BASE);
    int st = rl(a, out, sizeof out);
    cr_expect_eq(st, 0, "check %s: exit %d:\n%s", tops[i], st, out);
    cr_expect_not_null(strstr(out, "check: 84 metric(s) compared, 0 outside their bands"), "check %s:\n%s", tops[i],
                       out);
  }
  snprintf(a, sizeof a, "report %s/tree", tmpdir);
  cr_assert_eq(rl(a, out, sizeof out), 0, "report of a tree with studies only: %s", out);
  snprintf(p, sizeof p, "%s/tree/summary.md", tmpdir);
  char *sum = slurp(p);
  cr_assert_not_null(sum, "%s not written", p);
  cr_expect_not_null(strstr(sum, "### smoke"), "the smoke study is not in the summary:\n%s", sum);
  free(sum);
  snprintf(p, sizeof p, "%s/tree/plots/study_smoke.svg", tmpdir);
  cr_expect_eq(access(p, F_OK), 0, "%s not written", p);
  /* a tree without studies, and a folder that is not there */
  snprintf(a, sizeof a, "mkdir -p %s/empty/a/b", tmpdir);
  cr_assert_eq(system(a), 0);
  const char *cmds[] = {"check", "report", "merge"};
  for (int i = 0; i < 3; i++) {
    snprintf(a, sizeof a, "%s %s/empty%s", cmds[i], tmpdir, i == 2 ? " --out x" : "");
    int st = rl(a, out, sizeof out);
    cr_expect_eq(st, 2, "%s of a tree without studies: exit %d (want 2): %s", cmds[i], st, out);
    cr_expect_eq(lines_of(out), 1, "%s: not one line: %s", cmds[i], out);
    cr_expect_not_null(strstr(out, "/empty: no results"), "%s: does not name the folder: %s", cmds[i], out);
    cr_expect_not_null(strstr(out, "metrics.csv in it or in the 2 folder(s) below it"),
                       "%s: does not say where it looked: %s", cmds[i], out);
  }
  snprintf(a, sizeof a, "check %s/nowhere", tmpdir);
  cr_expect_eq(rl(a, out, sizeof out), 2, "check of a missing folder: %s", out);
  cr_expect_not_null(strstr(out, "/nowhere: cannot read"), "%s", out);
}

/* a spec with LINE5 from its fifth line must exit 2 with one line holding every WANT */
static void bad_spec(const char *line5, const char *want1, const char *want2) {
  char spec[512], a[1024];
  rl_cli_write(spec, sizeof spec, "bad.ini",
               "[experiment]\nname = bad\nscene = %s/experiments/scenes/box_stack.xml\nsteps = 5\n%s\n", SRCDIR, line5);
  snprintf(a, sizeof a, "run %s --out %s/out", spec, tmpdir);
  int st = rl(a, out, sizeof out);
  cr_expect_eq(st, 2, "'%s': exit %d (want 2): %s", line5, st, out);
  int lines = 0;
  for (char *c = out; *c; c++) lines += *c == '\n';
  cr_expect_eq(lines, 1, "'%s': %d lines (want 1): %s", line5, lines, out);
  cr_expect_not_null(strstr(out, want1), "'%s': no '%s' in: %s", line5, want1, out);
  cr_expect_not_null(strstr(out, want2), "'%s': no '%s' in: %s", line5, want2, out);
  snprintf(a, sizeof a, "%s/out", tmpdir);
  cr_expect_neq(access(a, F_OK), 0, "'%s': output written for a bad spec", line5);
}

Test(harness, bad_specs_exit_2_naming_file_and_line) {
  bad_spec("colour = red", "bad.ini:5:", "unknown key 'colour'");
  bad_spec("duration = -4", "bad.ini:5:", "duration: bad value '-4'");
  bad_spec("[sweep]\nengine = newton, physx", "bad.ini:6:", "allowed: newton, cg, avbd, mujoco");
  bad_spec("[sweep]\ncone = round", "bad.ini:6:", "pyramidal");
  bad_spec("[sweep]\nwobble = 1", "bad.ini:6:", "unknown key 'wobble'");
  bad_spec("[check]\niterations_mean = ratio 0.5", "bad.ini:6:", "below 1");
  bad_spec("[check]\nspeed = abs 1", "bad.ini:6:", "unknown metric 'speed'");
  bad_spec("[reference]\nuse = lapack", "bad.ini:6:", "unknown reference 'lapack'");
  bad_spec("[reference]\nuse = gsl_ode",
           "bad.ini:6:", "'gsl_ode' is not a reference of kind = trajectory (allowed: mujoco_free)");
  bad_spec("kind = speed\n[reference]\nuse = mujoco_free", "bad.ini:7:", "not a reference of kind = speed");
  bad_spec("kind = convergence\n[reference]\nuse = dense_kkt\n[sweep]\nengine = newton",
           "bad.ini:9:", "'newton' needs the reference 'lapack_optimum'");
  bad_spec("[metrics]\nnames = speed", "bad.ini:6:", "allowed: final_qpos_err");
}

/* `rigidlab run experiments/STUDY.ini --out tmpdir/DIR --jobs 2 EXTRA` (must succeed), then `check` of its output
   against the baselines, expecting exit WANT (0: in band; 1: a metric out of band, named in `out`);
   metrics (when not NULL) ← the path of its metrics.csv */
static void run_and_check(const char *study, const char *dir, const char *extra, int want, char *metrics, size_t n) {
  char a[1024];
  snprintf(a, sizeof a, "run %s/experiments/%s.ini --out %s/%s --jobs 2%s%s", SRCDIR, study, tmpdir, dir,
           *extra ? " " : "", extra);
  cr_assert_eq(rl(a, out, sizeof out), 0, "%s", out);
  snprintf(a, sizeof a, "check %s/%s/%s --baseline %s", tmpdir, dir, study, BASE);
  cr_expect_eq(rl(a, out, sizeof out), want, "%s", out);
  if (metrics) snprintf(metrics, n, "%s/%s/%s/metrics.csv", tmpdir, dir, study);
}

/* `rigidlab run SPEC --out tmpdir/DIR --jobs 1` must succeed; metrics ← tmpdir/DIR/NAME/metrics.csv */
static void run_spec(const char *spec, const char *dir, const char *name, char *metrics, size_t n) {
  char a[1024];
  snprintf(a, sizeof a, "run %s --out %s/%s --jobs 1", spec, tmpdir, dir);
  cr_assert_eq(rl(a, out, sizeof out), 0, "%s", out);
  snprintf(metrics, n, "%s/%s/%s/metrics.csv", tmpdir, dir, name);
}

Test(harness, kind_refinement_fits_first_order_and_gates) {
  char p[512];
  run_and_check("refinement", "ref", "", 0, p, sizeof p);
  double o = metric_of(p, "pendulum.newton.f64.dt0.004", "order");
  cr_expect(o > 0.95 && o < 1.05, "semi-implicit Euler: order %g (want 1)", o);
  /* against the GSL ODE reference (contact-free scenes only) the order is 1 too, and Richardson's
     estimate of the finest run's error matches its error against the reference */
  double oo = metric_of(p, "pendulum.newton.f64.dt0.004", "order_ode");
  cr_expect(fabs(oo - 1) < 0.1, "semi-implicit Euler vs the ODE reference: order %g (want 1)", oo);
  double re = metric_of(p, "pendulum.newton.f64.dt0.004", "richardson_err"),
         eo = metric_of(p, "pendulum.newton.f64.dt0.004", "ode_err_L4");
  cr_expect(re > 0.5 * eo && re < 2 * eo, "Richardson error estimate %g vs ODE reference error %g", re, eo);
  cr_expect(isnan(metric_of(p, "box_stack.newton.f64.dt0.004", "order_ode")),
            "box_stack has contacts: no ODE reference");
  /* AVBD (segments restarted from the generalized state) is first order against the ODE reference too */
  double ao = metric_of(p, "pendulum.avbd.f64.dt0.004", "order_ode"),
         co = metric_of(p, "chain8.avbd.f64.dt0.004", "order_ode");
  cr_expect(fabs(ao - 1) < 0.05 && fabs(co - 1) < 0.1, "avbd vs the ODE reference: order %g (pendulum), %g (chain8)",
            ao, co);
  cr_expect(!isnan(metric_of(p, "chain8.avbd.f64.dt0.004", "err_seg_L0")), "avbd restarts the segments");
  /* RK4 is fourth order: the gate must name the order */
  run_and_check("refinement", "rk", "--opt integrator=rk4", 1, p, sizeof p);
  o = metric_of(p, "pendulum.newton.f64.dt0.004", "order");
  cr_expect(o > 3.8 && o < 4.2, "RK4: order %g (want 4)", o);
  cr_expect_not_null(strstr(out, "refinement pendulum.newton.f64.dt0.004 order = 4"), "%s", out);
}

Test(harness, kind_fp32_measures_divergence_and_gates) {
  char p[512];
  run_and_check("fp32", "fp", "", 0, p, sizeof p);
  double e = metric_of(p, "microduck.newton.f64", "onestep_rel_max");
  cr_expect(e > 1e-9 && e < 1e-4, "f32 one-step error %g (want float round-off)", e);
  double t6 = metric_of(p, "microduck.newton.f64", "diverge_time_1e-06"),
         t3 = metric_of(p, "microduck.newton.f64", "diverge_time_0.001");
  cr_expect(t6 > 0 && t6 <= t3 && t3 <= 1 + 1e-9, "divergence times %g, %g", t6, t3);
  /* AVBD's one step restarts from the generalized state; f32 stops at its looser sweep tolerance (5e-6 rad), so
     the velocity error is that over h: ~1e-3, far above float round-off but bounded */
  double ea = metric_of(p, "microduck.avbd.f64", "onestep_rel_max");
  cr_expect(ea > 1e-9 && ea < 1e-2, "avbd f32 one-step error %g", ea);
}

Test(harness, kind_residuals_gate_and_name_a_sloppy_solver) {
  run_and_check("residuals", "res", "", 0, NULL, 0);
  run_and_check("residuals", "res1", "--opt iterations=1", 1, NULL, 0);
  cr_expect_not_null(strstr(out, "residuals box_stack.cg.f64 signorini_max = "), "%s", out);
  /* AVBD's multipliers as forces: box_stack (rl_collision's contacts, the boxes stay stacked) penetrates less
     than 1 mm, its friction forces stay in the cone */
  char p[512];
  snprintf(p, sizeof p, "%s/res/residuals/metrics.csv", tmpdir);
  double pen = metric_of(p, "box_stack.avbd.f64", "penetration_max"),
         cou = metric_of(p, "box_stack.avbd.f64", "coulomb_max");
  cr_expect(pen >= 0 && pen < 1e-3, "avbd box_stack penetration %g", pen);
  cr_expect(cou >= 0 && cou < 1e-9, "avbd box_stack Coulomb residual %g", cou);
  cr_expect(!isnan(metric_of(p, "microduck.avbd.f64", "signorini_max")), "avbd microduck residuals");
  bad_spec("kind = sideways", "bad.ini:5:", "allowed: trajectory, refinement, fp32, residuals");
}

Test(harness, kind_convergence_gaps_to_the_lapack_optimum_and_gates) {
  char p[512];
  run_and_check("convergence", "cv", "", 0, p, sizeof p);
  static const char *const pts[] = {"box_stack.newton.f64.cone=pyramidal", "box_stack.newton.f64.cone=elliptic",
                                    "microduck.newton.f64.cone=pyramidal", "microduck.newton.f64.cone=elliptic"};
  for (int i = 0; i < 4; i++) {
    double it = metric_of(p, pts[i], "iters_to_1e-10_gap"), fg = metric_of(p, pts[i], "final_gap");
    cr_expect(it >= 1 && it <= 5, "%s: Newton reaches a 1e-10 gap at iteration %g", pts[i], it);
    cr_expect(fabs(fg) < 1e-12, "%s: final gap %g", pts[i], fg);
    cr_expect(metric_of(p, pts[i], "grad_it1") > 0 && !isnan(metric_of(p, pts[i], "mj_grad_it1")), "%s", pts[i]);
  }
  double cg = metric_of(p, "microduck.cg.f64.cone=elliptic", "final_gap");
  cr_expect(cg >= 0 && cg < 1e-7, "microduck cg final gap %g", cg);
  cr_expect(!isnan(metric_of(p, "box_stack.cg.f64.cone=pyramidal", "gap_it30")), "per-iteration rows");
  /* a crippled CG line search (2 iterations) leaves the CG gaps far from the optimum: the gate names them */
  run_and_check("convergence", "cv2", "--opt ls_iterations=2", 1, NULL, 0);
  cr_expect_not_null(strstr(out, "convergence microduck.cg.f64.cone=elliptic final_gap = "), "%s", out);
  bad_spec("kind = convergence\n[sweep]\nengine = mujoco", "bad.ini:7:", "not available for kind = convergence");
  bad_spec("kind = convergence\n[sweep]\nprecision = f32", "bad.ini:7:", "allowed: f64");
  /* f32 only where every engine is avbd (its dense reference solves in double from either precision's state) */
  bad_spec("kind = convergence\n[reference]\nuse = dense_kkt, lapack_optimum\n[sweep]\nengine = avbd, newton\n"
           "precision = f64, f32",
           "bad.ini:10:", "f32 too when every engine is avbd");
  bad_spec("states = 3", "bad.ini:5:", "states is for kind = convergence only");
  bad_spec("kind = convergence\nstates = 0", "bad.ini:6:", "states: bad value '0'");
}

Test(harness, kind_lockstep_matches_mujoco_on_the_pendulum_and_gates) {
  char p[512];
  run_and_check("lockstep", "ls", "", 0, p, sizeof p);
  /* contact-free: Newton's one step from MuJoCo's state is MuJoCo's step to round-off */
  double qp = metric_of(p, "pendulum.newton.f64", "lockstep_qpos_max"),
         qv = metric_of(p, "pendulum.newton.f64", "lockstep_qvel_max");
  cr_expect(qp <= 1e-12, "pendulum newton lock-step qpos error %g (want <= 1e-12)", qp);
  cr_expect(qv <= 1e-12, "pendulum newton lock-step qvel error %g (want <= 1e-12)", qv);
  /* AVBD is a different (hard) model: its one-step difference is far above round-off */
  double av = metric_of(p, "pendulum.avbd.f64", "lockstep_qvel_max");
  cr_expect(av > 1e-8, "pendulum avbd lock-step qvel difference %g (a different model: want > 1e-8)", av);
  double t6 = metric_of(p, "box_stack.newton.f64", "free_diverge_time_1e-06");
  cr_expect(t6 > 0 && t6 <= 0.4 + 1e-9, "free-running divergence time %g", t6);
  snprintf(p, sizeof p, "%s/ls/lockstep/traj_pendulum.newton.f64.lock.csv", tmpdir);
  char *t = slurp(p);
  cr_assert_not_null(t, "%s missing", p);
  int rows = 0;
  for (char *c = t; *c; c++) rows += *c == '\n';
  cr_expect_eq(rows, 201, "%s: %d lines (want the header and 200 steps)", p, rows);
  const char *hdr = "step,time,err_qpos,err_qvel,ncon,mj_ncon,iter,converged,mj_iter,mj_converged\n";
  cr_expect_eq(strncmp(t, hdr, strlen(hdr)), 0, "%s", t);
  free(t);
  /* a solver capped at one iteration: the gate names the metric */
  run_and_check("lockstep", "ls1", "--opt iterations=1", 1, NULL, 0);
  cr_expect_not_null(strstr(out, "lockstep box_stack.newton.f64 free_qpos_err_max = "), "%s", out);
  bad_spec("kind = lockstep\n[sweep]\nengine = mujoco", "bad.ini:7:", "not available for kind = lockstep");
  bad_spec("[sweep]\ndevice = cpu, cuda", "bad.ini:6:", "device is for kind = device only");
}

/* a 'max T' band bounds the value itself, whatever the baseline: iterations over MuJoCo's on a box pyramid's
   first 7 steps (a landing step takes 1 more than MuJoCo under signorini) pass 'max 10' and fail 'max 0'
   against the very results written as the baseline */
Test(harness, max_band_bounds_the_value_whatever_the_baseline) {
  char a[2048], spec[512];
  for (int k = 0; k < 2; k++) {
    snprintf(spec, sizeof spec, "%s/max%d.ini", tmpdir, k);
    FILE *f = fopen(spec, "w");
    cr_assert_not_null(f);
    fprintf(f,
            "[experiment]\nname = maxband\nkind = lockstep\nscene = %s/experiments/scenes/box_pyramid.xml\n"
            "duration = 0.014\n[sweep]\nengine = newton\nprecision = f64\ncone = elliptic\n"
            "contact_resolution = signorini\n[reference]\nuse = mujoco_lockstep\n[metrics]\n"
            "names = iterations_excess_max\n[check]\niterations_excess_max = max %d\n",
            SRCDIR, k ? 0 : 10);
    fclose(f);
    snprintf(a, sizeof a, "run %s --out %s/mb%d", spec, tmpdir, k);
    cr_assert_eq(rl(a, out, sizeof out), 0, "%s", out);
    snprintf(a, sizeof a, "check %s/mb%d --baseline %s/mbbase%d --update-baseline", tmpdir, k, tmpdir, k);
    cr_assert_eq(rl(a, out, sizeof out), 0, "%s", out);
    snprintf(a, sizeof a, "check %s/mb%d --baseline %s/mbbase%d", tmpdir, k, tmpdir, k);
    int st = rl(a, out, sizeof out);
    cr_expect_eq(st, k, "max %d: check exit %d (want %d):\n%s", k ? 0 : 10, st, k, out);
    if (k) cr_expect_not_null(strstr(out, "iterations_excess_max = 1 outside band max 0 (baseline 1)"), "%s", out);
  }
}

Test(harness, kind_device_without_cuda_writes_no_cuda_rows_and_says_why) {
  char a[1024], p[512];
  run_and_check("device", "dv", "", 0, NULL, 0);
  cr_expect_not_null(strstr(out, "device: cuda rows absent: rigidlab's device study has no CUDA worker yet"), "%s", out);
  snprintf(p, sizeof p, "%s/dv/device/meta.csv", tmpdir);
  char *meta = slurp(p);
  cr_assert_not_null(meta, "%s missing", p);
  cr_expect_not_null(strstr(meta, "\ncuda_rows,absent\n"), "%s", meta);
  cr_expect_not_null(strstr(meta, "\ncuda_reason,rigidlab's device study has no CUDA worker yet"), "%s", meta);
  free(meta);
  snprintf(p, sizeof p, "%s/dv/device/metrics.csv", tmpdir);
  char *m = slurp(p);
  cr_assert_not_null(m, "%s missing", p);
  cr_expect_null(strstr(m, "cuda"), "a cuda row in %s: %s", p, m);
  free(m);
  /* the cpu trajectories are there, no cuda file at all */
  snprintf(p, sizeof p, "%s/dv/device/traj_microduck.avbd.f64.cpu.csv", tmpdir);
  cr_expect_eq(access(p, F_OK), 0, "%s missing", p);
  snprintf(a, sizeof a, "ls %s/dv/device | grep -c cuda > %s/n.txt", tmpdir, tmpdir);
  if (system(a)) {}
  snprintf(p, sizeof p, "%s/n.txt", tmpdir);
  char *n = slurp(p);
  cr_expect(n && atoi(n) == 0, "files naming cuda: %s", n ? n : "?");
  free(n);
  bad_spec("kind = device\n[sweep]\ndevice = cpu", "bad.ini:7:", "compares cpu with cuda");
  bad_spec("kind = device\n[sweep]\ndevice = gpu", "bad.ini:7:", "allowed: cpu, cuda");
  bad_spec("kind = device", "bad.ini:5:", "needs the sweep axis 'device = cpu, cuda'");
}

/* engine = avbd: the distance of AVBD's iterate after k sweeps to the dense KKT reference of the same step */
Test(harness, kind_convergence_avbd_distance_to_the_dense_reference_and_gates) {
  char p[512];
  run_and_check("convergence_avbd", "ca", "", 0, p, sizeof p);
  static const char *const pts[] = {"chain8.avbd.f64.avbd_block=body.avbd_stop=update",
                                    "double_pendulum.avbd.f64.avbd_block=body.avbd_stop=update",
                                    "chain8.avbd.f64.avbd_block=articulation.avbd_stop=distance",
                                    "double_pendulum.avbd.f64.avbd_block=articulation.avbd_stop=distance"};
  for (int i = 0; i < 4; i++) {
    double d1 = metric_of(p, pts[i], "avbd_dist_m_it1"), dn = metric_of(p, pts[i], "avbd_final_dist_m"),
           r1 = metric_of(p, pts[i], "avbd_dist_rad_it1"), rn = metric_of(p, pts[i], "avbd_final_dist_rad"),
           it = metric_of(p, pts[i], "avbd_iters_to_1e-6_dist");
    if (i < 2) { /* body sweeps: a first sweep far from the solution, 200 close */
      cr_expect(d1 > 1e-7 && dn < 1e-7 && dn < 1e-2 * d1, "%s: distance %g m after 1 sweep, %g m after 200", pts[i],
                d1, dn);
      cr_expect(r1 > 1e-7 && rn < 1e-7, "%s: %g rad after 1 sweep, %g rad after 200", pts[i], r1, rn);
      cr_expect(it >= 1 && it <= 200, "%s: 1e-6 reached at sweep %g", pts[i], it);
      cr_expect(metric_of(p, pts[i], "avbd_stat_force_it200") < metric_of(p, pts[i], "avbd_stat_force_it1"), "%s",
                pts[i]);
    } else { /* articulation blocks: one Newton step of the tree's KKT system (measured 2.8e-10 m, 2.5e-9 rad on
                chain8), then round-off */
      cr_expect(d1 < 1e-6 && dn < 1e-12, "%s: distance %g m after 1 sweep, %g m after 200", pts[i], d1, dn);
      cr_expect(r1 < 1e-6 && rn < 1e-12, "%s: %g rad after 1 sweep, %g rad after 200", pts[i], r1, rn);
      cr_expect(it >= 1 && it <= 2, "%s: 1e-6 reached at sweep %g", pts[i], it);
      /* with the distance test: no state's step flagged converged farther than it claims */
      cr_expect_eq(metric_of(p, pts[i], "avbd_false_stop_frac"), 0, "%s", pts[i]);
      /* and none along AVBD's own trajectory, every one of its 250 steps flagged and checked */
      cr_expect_eq(metric_of(p, pts[i], "avbd_own_false_stop_frac"), 0, "%s", pts[i]);
      cr_expect_eq(metric_of(p, pts[i], "avbd_own_checked_steps"), 250, "%s", pts[i]);
      cr_expect(metric_of(p, pts[i], "avbd_own_worst_ratio") < 1, "%s", pts[i]);
    }
  }
  /* the own-trajectory judgement finds false stops where there are some: the update test with body sweeps on
     chain8 claims its last update as the distance (measured: all 250 steps farther, up to 12×) */
  double fu = metric_of(p, pts[0], "avbd_own_false_stop_frac"), wu = metric_of(p, pts[0], "avbd_own_worst_ratio");
  cr_expect(fu > 0.5 && wu > 2, "%s: own false-stop fraction %g, worst ratio %g", pts[0], fu, wu);
  /* a coarser step (dt 4 ms) converges slower: the gate names it */
  run_and_check("convergence_avbd", "ca2", "--opt timestep=0.004", 1, NULL, 0);
  cr_expect_not_null(
      strstr(out, "convergence_avbd double_pendulum.avbd.f64.avbd_block=body.avbd_stop=update avbd_iters_to_1e-6_dist = "),
      "%s", out);
  /* not applicable: box_stack's steps have contacts, which the dense reference leaves out: no rows */
  char spec[512];
  rl_cli_write(spec, sizeof spec, "na.ini",
               "[experiment]\nname = na\nkind = convergence\nscene = %s/experiments/scenes/box_stack.xml\nsteps = 5\n"
               "states = 2\n[sweep]\nengine = avbd\n",
               SRCDIR);
  run_spec(spec, "na", "na", p, sizeof p);
  cr_expect(isnan(metric_of(p, "box_stack.avbd.f64", "avbd_dist_m_it1")), "box_stack: rows without a reference");
  /* f32: the same judgement of the float engine, its reference solved in double (avbd_robots_f32.ini: quadruped12
     has every own step checked, none farther than claimed, worst 0.22× over 500 steps) */
  rl_cli_write(spec, sizeof spec, "f32.ini",
               "[experiment]\nname = f32\nkind = convergence\nscene = %s/experiments/scenes/quadruped12.xml\n"
               "steps = 5\nstates = 2\n[sweep]\nengine = avbd\nprecision = f32\n[metrics]\n"
               "names = avbd_own_false_stop_frac, avbd_own_checked_steps, avbd_own_worst_ratio\n",
               SRCDIR);
  run_spec(spec, "f32", "f32", p, sizeof p);
  double n32 = metric_of(p, "quadruped12.avbd.f32", "avbd_own_checked_steps");
  double f32f = metric_of(p, "quadruped12.avbd.f32", "avbd_own_false_stop_frac");
  double w32 = metric_of(p, "quadruped12.avbd.f32", "avbd_own_worst_ratio");
  cr_expect(n32 == 10 && f32f == 0 && w32 > 0 && w32 < 1, "quadruped12 f32: %g checked, false %g, worst %g", n32, f32f,
            w32);
  /* avbd_stop = certified refuses the distance test's stops where the contacts' problem linearized at that sweep
     would still move the poses farther than claimed: on Gymnasium's walker2d the distance test's stance stops on
     MuJoCo's states are false (3 of 15), the certified ones are not, on fewer flagged steps (the refused ones run on).
     (A Test of its own made criterion's parallel runner leak 48 bytes under LeakSanitizer with 22 tests at 2 jobs.) */
  char cspec[768];
  rl_cli_write(cspec, sizeof cspec, "cert.ini",
               "[experiment]\nname = cert\nkind = convergence\nscene = %s/tests/public/gym_walker2d.xml\nsteps = 25\n"
               "states = 20\nseed = 1\n[sweep]\nengine = avbd\navbd_stop = distance, certified\n[reference]\n"
               "use = dense_kkt\n[metrics]\nnames = avbd_false_stop_frac, avbd_flagged_steps\n",
               SRCDIR);
  run_spec(cspec, "cert", "cert", p, sizeof p);
  double fd = metric_of(p, "gym_walker2d.avbd.f64.avbd_stop=distance", "avbd_false_stop_frac");
  double fc = metric_of(p, "gym_walker2d.avbd.f64.avbd_stop=certified", "avbd_false_stop_frac");
  double nd = metric_of(p, "gym_walker2d.avbd.f64.avbd_stop=distance", "avbd_flagged_steps");
  double nc = metric_of(p, "gym_walker2d.avbd.f64.avbd_stop=certified", "avbd_flagged_steps");
  cr_expect(fd > 0, "distance test: false fraction %g of %g flagged (the known false stance stops)", fd, nd);
  cr_expect(fc == 0 && nc > 0 && nc <= nd, "certified: false fraction %g of %g flagged (distance: %g)", fc, nc, nd);
}

/* along AVBD's own trajectory a non-finite step is `sim`'s case: undone by the step, counted in column nonfinite and
   metric avbd_own_nonfinite_steps, and the trajectory goes on (MuJoCo's hammock sample: the sweeps run away on most
   steps from the fifth on, tests/test_avbd_cover.c) */
Test(harness, kind_convergence_avbd_own_nonfinite_steps_are_counted, .timeout = 300) {
  char spec[512], p[512];
  rl_cli_write(spec, sizeof spec, "nf.ini",
               "[experiment]\nname = nf\nkind = convergence\nscene = /usr/share/mujoco/model/hammock/hammock.xml\n"
               "steps = 12\nstates = 1\n[sweep]\nengine = avbd\n[reference]\nuse = dense_kkt\n[metrics]\n"
               "names = avbd_own_nonfinite_steps, avbd_own_checked_steps\n");
  run_spec(spec, "nf", "nf", p, sizeof p);
  double nf = metric_of(p, "hammock.avbd.f64", "avbd_own_nonfinite_steps");
  cr_expect(nf >= 4 && nf <= 12, "hammock: %g of 12 own steps non-finite", nf);
  /* one row per step, 14 columns, as many rows with nonfinite = 1 as the metric counts */
  snprintf(p, sizeof p, "%s/nf/nf/traj_hammock.avbd.f64.own.csv", tmpdir);
  char *own = slurp(p);
  cr_assert_not_null(own, "%s missing", p);
  static const char hdr[] = "step,sweeps,converged,checked,basis,omitted,ref_unconverged,dist_m,dist_rad,claim_m,"
                            "claim_rad,ratio,stop_false,nonfinite\n";
  cr_expect_eq(strncmp(own, hdr, strlen(hdr)), 0, "%.130s", own);
  int rows = 0, ones = 0;
  for (char *l = own + strlen(hdr), *e; *l; l = e + 1, rows++) {
    e = strchr(l, '\n');
    cr_assert_not_null(e, "unterminated row %d", rows + 1);
    int commas = 0;
    for (char *c = l; c < e; c++) commas += *c == ',';
    cr_expect_eq(commas, 13, "row %d: %d columns", rows + 1, commas + 1);
    ones += e - l >= 2 && !strncmp(e - 2, ",1", 2);
  }
  cr_expect_eq(rows, 12);
  cr_expect_eq(ones, (int)nf, "rows with nonfinite = 1: %d, metric %g", ones, nf);
  free(own);
}

/* [reference] use: a refinement study without the ODE reference solves no ODE and has no ode metrics; the
   Richardson estimate stays; meta.csv lists the references */
Test(harness, reference_section_selects_what_a_study_compares_against) {
  char spec[512], p[512];
  rl_cli_write(spec, sizeof spec, "ref.ini",
               "[experiment]\nname = ref\nkind = refinement\nlevels = 4\nscene = %s/experiments/scenes/pendulum.xml\n"
               "duration = 0.1\n[sweep]\nengine = newton\ndt = 0.004\n[reference]\nuse = richardson\n",
               SRCDIR);
  run_spec(spec, "ref", "ref", p, sizeof p);
  cr_expect(isnan(metric_of(p, "pendulum.newton.f64.dt0.004", "order_ode")), "order_ode without the gsl_ode reference");
  cr_expect(metric_of(p, "pendulum.newton.f64.dt0.004", "richardson_err") > 0, "richardson_err missing");
  snprintf(p, sizeof p, "%s/ref/ref/meta.csv", tmpdir);
  char *meta = slurp(p);
  cr_assert_not_null(meta, "%s missing", p);
  cr_expect_not_null(strstr(meta, "\nreferences,richardson\n"), "%s", meta);
  free(meta);
  /* the default: the kind's own references, the ODE included */
  rl_cli_write(spec, sizeof spec, "ref.ini",
               "[experiment]\nname = ref\nkind = refinement\nlevels = 4\nscene = %s/experiments/scenes/pendulum.xml\n"
               "duration = 0.1\n[sweep]\nengine = newton\ndt = 0.004\n",
               SRCDIR);
  run_spec(spec, "ref2", "ref", p, sizeof p);
  double o = metric_of(p, "pendulum.newton.f64.dt0.004", "order_ode");
  cr_expect(o > 0.9 && o < 1.1, "order_ode %g with the default references", o);
}

/* the line of CSV PATH that starts with PREFIX, NULL when none (a static buffer) */
static const char *line_of(const char *path, const char *prefix) {
  static char line[4096];
  FILE *f = fopen(path, "r");
  const char *r = NULL;
  while (f && !r && fgets(line, sizeof line, f))
    if (!strncmp(line, prefix, strlen(prefix))) r = line;
  if (f) fclose(f);
  return r;
}

/* kind = verify: verify.csv holds every point's rows (model column MODEL.xml@cone), the metrics count the failed
   rows per precision, and a rows_only scene has only the collision and constraint stages */
Test(harness, kind_verify_writes_verify_csv_and_counts_failed_rows) {
  char spec[512], p[512];
  rl_cli_write(spec, sizeof spec, "v.ini",
               "[experiment]\nname = v\nkind = verify\nscene = %s/experiments/scenes/pendulum.xml, "
               "%s/experiments/scenes/box_stack.xml\nrows_only = box_stack\n[sweep]\ncone = pyramidal, elliptic\n",
               SRCDIR, SRCDIR);
  run_spec(spec, "v", "v", p, sizeof p);
  cr_expect_eq(metric_of(p, "pendulum.newton.f64.cone=pyramidal", "verify_failed_rows_f64"), 0);
  double w = metric_of(p, "pendulum.newton.f64.cone=elliptic", "verify_worst_ratio_f64");
  cr_expect(w > 0 && w < 1, "pendulum f64: worst error / tolerance %g (want in (0, 1))", w);
  cr_expect(metric_of(p, "box_stack.newton.f64.cone=pyramidal", "verify_failed_rows_f32") >= 0);
  snprintf(p, sizeof p, "%s/v/v/verify.csv", tmpdir);
  cr_expect_not_null(line_of(p, "model,precision,stage,quantity,max_abs_err,max_rel_err,tolerance,pass"), "%s", p);
  cr_expect_not_null(line_of(p, "pendulum.xml@elliptic,f32,solve,"), "pendulum's f32 solve rows");
  cr_expect_not_null(line_of(p, "box_stack.xml@pyramidal,f64,collision,"), "box_stack's collision rows");
  cr_expect_null(line_of(p, "box_stack.xml@pyramidal,f64,kinematics,"), "box_stack is rows_only");
  bad_spec("rows_only = box_stack", "bad.ini:5:", "rows_only is for kind = verify only (kind is trajectory)");
  bad_spec("kind = verify\nrows_only = nowhere", "bad.ini:6:", "'nowhere' is not one of the spec's scenes");
  bad_spec("kind = verify\n[sweep]\nengine = cg", "bad.ini:7:", "kind = verify sweeps model and solver options only");
}

/* kind = agreement: newton against the mujoco point, traj_compare.csv (one row per newton point), and the same file
   from two shards merged as from one run */
Test(harness, kind_agreement_matches_mujoco_without_constraints_and_merges) {
  char spec[512], p[512], a[1024];
  rl_cli_write(spec, sizeof spec, "ag.ini",
               "[experiment]\nname = ag\nkind = agreement\nscene = %s/experiments/scenes/pendulum.xml, "
               "%s/experiments/scenes/tumbling.xml\nsteps = 200\n[sweep]\nintegrator = euler, rk4\nengine = newton, "
               "mujoco\n",
               SRCDIR, SRCDIR);
  run_spec(spec, "ag", "ag", p, sizeof p);
  double e = metric_of(p, "tumbling.newton.f64.integrator=rk4", "traj_rel_err_max");
  cr_expect(e >= 0 && e < 1e-12, "tumbling (from its keyframe), rk4: newton vs mujoco %g", e);
  snprintf(p, sizeof p, "%s/ag/ag/traj_compare.csv", tmpdir);
  cr_expect_not_null(line_of(p, "scene,integrator,steps,max_rel_err_qpos_qvel\n"), "%s header", p);
  cr_expect_not_null(line_of(p, "pendulum,euler,200,"), "pendulum euler row");
  cr_expect_not_null(line_of(p, "tumbling,rk4,200,"), "tumbling rk4 row");
  for (int i = 1; i <= 2; i++) {
    snprintf(a, sizeof a, "run %s --out %s/sh%d --jobs 1 --shard %d/2", spec, tmpdir, i, i);
    cr_assert_eq(rl(a, out, sizeof out), 0, "%s", out);
  }
  snprintf(a, sizeof a, "merge %s/sh1 %s/sh2 --out %s/merged", tmpdir, tmpdir, tmpdir);
  cr_assert_eq(rl(a, out, sizeof out), 0, "%s", out);
  char m[512];
  snprintf(m, sizeof m, "%s/merged/ag/traj_compare.csv", tmpdir);
  same_file(p, m);
  bad_spec("kind = agreement\n[reference]\nuse = gsl_ode", "bad.ini:7:", "not a reference of kind = agreement");
}

/* kind = contact: the trajectory metrics, and contact_<scene>_<engine>.csv is the point's trajectory */
Test(harness, kind_contact_links_the_report_names) {
  char spec[512], p[512], t[512];
  rl_cli_write(spec, sizeof spec, "c.ini",
               "[experiment]\nname = c\nkind = contact\nscene = %s/experiments/scenes/box_stack.xml\nduration = 0.1\n"
               "[sweep]\nengine = newton, mujoco\n",
               SRCDIR);
  run_spec(spec, "c", "c", p, sizeof p);
  cr_expect(metric_of(p, "box_stack.newton.f64", "final_qpos_err") < 1e-3, "newton vs mujoco on the box stack");
  snprintf(p, sizeof p, "%s/c/c/contact_box_stack_newton.csv", tmpdir);
  snprintf(t, sizeof t, "%s/c/c/traj_box_stack.newton.f64.csv", tmpdir);
  same_file(p, t);
  bad_spec("kind = contact\n[sweep]\ncone = elliptic", "bad.ini:7:", "kind = contact sweeps the engine only");
}

/* kind = bench: synthetic chains (scene = chain:N1+N2+…), the scaling fit in metrics.csv, bench_chains.csv.  The
   exponent itself is a timing (medians of 7 repetitions of 200 steps; 3 of 10 gave −0.32 once on a 2-core host
   loaded by two other builds, and a CI run beside a fresh-machine build −0.14), so only that a finite fit was
   written is checked here: speed is a benchmark, not a test */
Test(harness, kind_bench_times_chains_and_fits_the_exponent) {
  char spec[512], p[512];
  rl_cli_write(spec, sizeof spec, "b.ini",
               "[experiment]\nname = b\nkind = bench\nscene = chain:4+8+16\nreps = 7\nsteps = 200\n");
  run_spec(spec, "b", "b", p, sizeof p);
  double e = metric_of(p, "chain_4+8+16.newton.f64", "chain_exponent");
  cr_expect(isfinite(e) && fabs(e) < 10, "chain exponent %g", e);
  cr_expect(metric_of(p, "chain_4+8+16.newton.f64", "ratio_chain8") > 0, "chain8's ratio");
  snprintf(p, sizeof p, "%s/b/b/bench_chains.csv", tmpdir);
  cr_expect_not_null(line_of(p, "chain16,newton,f64,step,"), "%s: chain16 row", p);
  bad_spec("scene = chain:8+16", "bad.ini:5:", "synthetic chains are for kind = bench only");
  bad_spec("kind = bench\nstages = sideways", "bad.ini:6:", "stages: bad value 'sideways'");
  bad_spec("kind = bench\n[sweep]\nengine = cg", "bad.ini:7:", "kind = bench sweeps the precision only");
}

/* worst |Δ| over the qpos columns of two `rigidlab sim` CSVs (same header, same rows) */
static double sim_qpos_diff(const char *a, const char *b) {
  FILE *fa = fopen(a, "r"), *fb = fopen(b, "r");
  cr_assert(fa && fb, "%s or %s missing", a, b);
  static char la[1 << 15], lb[1 << 15];
  double worst = 0;
  int nq = -1, rows = 0;
  while (fgets(la, sizeof la, fa) && fgets(lb, sizeof lb, fb)) {
    if (nq < 0) { /* header: step,time,qpos_0 … qpos_{nq−1},qvel_… */
      nq = 0;
      for (char *p = strstr(la, "qpos_"); p; p = strstr(p + 1, "qpos_")) nq++;
      continue;
    }
    char *pa = la, *pb = lb;
    for (int c = 0; c < 2 + nq; c++) {
      double x = strtod(pa, &pa), y = strtod(pb, &pb);
      if (c >= 2 && !(fabs(x - y) <= worst)) worst = fabs(x - y);
      pa += *pa == ',';
      pb += *pb == ',';
    }
    rows++;
  }
  fclose(fa);
  fclose(fb);
  cr_assert_gt(rows, 10);
  return worst;
}

/* `sim --engine mujoco` steps MuJoCo as a plain mj_step loop: the forward pass that fills a row's columns
   must not leave its q̈ as the next step's warm start.  MuJoCo's projected Gauss–Seidel (a PGS model,
   50 sweeps, not converged) depends on that start: with the row's pass leaking, MuJoCo's own trajectory
   moved by 7.8e-8 in qpos after one step against rigidlab's PGS; without, the two agree to rounding. */
/* `rigidlab sim MODEL --engine ENGINE --steps STEPS EXTRA` into tmpdir/NAME (path ← its path); must succeed */
static void sim_run(char *path, size_t n, const char *name, const char *model, const char *engine, int steps,
                    const char *extra) {
  char args[2048];
  snprintf(path, n, "%s/%s", tmpdir, name);
  snprintf(args, sizeof args, "sim %s --engine %s --steps %d %s --csv %s", model, engine, steps, extra, path);
  cr_assert_eq(rl_cli_run(args, out, sizeof out), 0, "%s", out);
}

Test(harness, sim_pgs_matches_mujocos_pgs_step_by_step) {
  char a[512], b[512];
  const char *model = SRCDIR "/tests/public/gym_humanoidstandup.xml";
  sim_run(a, sizeof a, "pgs.csv", model, "pgs", 15, "");
  sim_run(b, sizeof b, "mj.csv", model, "mujoco", 15, "");
  double dq = sim_qpos_diff(a, b);
  printf("sim pgs vs mujoco pgs, 15 steps: max |dqpos| %.3e\n", dq);
  cr_expect_leq(dq, 1e-12, "pgs vs mujoco: %g", dq);
  /* the comparison can fail: rigidlab's Newton on the same model differs from MuJoCo's PGS by far more */
  sim_run(a, sizeof a, "pgs.csv", model, "newton", 15, "");
  cr_expect_gt(sim_qpos_diff(a, b), 1e-9, "the comparison cannot tell two solvers apart");
}

/* the first K qpos of row 0 of a sim CSV (the start state) */
static void sim_start_qpos(const char *path, double *q, int k) {
  char *t = slurp(path);
  cr_assert_not_null(t, "%s missing", path);
  char *p = strchr(t, '\n');
  cr_assert_not_null(p);
  p++;
  strtod(p, &p); /* step */
  p += *p == ',';
  strtod(p, &p); /* time */
  for (int i = 0; i < k; i++) {
    p += *p == ',';
    q[i] = strtod(p, &p);
  }
  free(t);
}

/* `sim --perturb EPS` moves the start qpos by EPS·max(|qpos_i|, 1), − on even i, + on odd i, the same start for
   every engine: rigidlab's Newton and MuJoCo from the moved start still agree to rounding, and each differs from its
   unmoved run from row 0 on (double_pendulum) */
Test(harness, sim_perturb_moves_the_start_for_every_engine) {
  char a[512], b[512], c[512];
  const char *model = SRCDIR "/experiments/scenes/double_pendulum.xml";
  double q0[2], qp[2], qn[2];
  sim_run(a, sizeof a, "mj.csv", model, "mujoco", 20, "");
  sim_run(b, sizeof b, "mj_perturbed.csv", model, "mujoco", 20, "--perturb 1e-6");
  sim_run(c, sizeof c, "newton_perturbed.csv", model, "newton", 20, "--perturb 1e-6");
  sim_start_qpos(a, q0, 2);
  sim_start_qpos(b, qp, 2);
  sim_start_qpos(c, qn, 2);
  for (int i = 0; i < 2; i++) {
    double mag = fabs(q0[i]) > 1 ? fabs(q0[i]) : 1, want = q0[i] + (i % 2 ? 1e-6 : -1e-6) * mag;
    cr_expect(fabs(qp[i] - want) <= 1e-15 && qn[i] == qp[i], "qpos_%d: start %.17g, moved %.17g (want %.17g), newton %.17g",
              i, q0[i], qp[i], want, qn[i]);
  }
  double dpert = sim_qpos_diff(a, b), dsame = sim_qpos_diff(b, c);
  cr_expect(dpert >= 0.9e-6, "the moved run differs from the unmoved one by %.3g", dpert);
  cr_expect_leq(dsame, 1e-12, "newton vs mujoco from the same moved start: %g", dsame);
}
