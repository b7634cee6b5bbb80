/* speed.c — kind = speed (spec.h): steps per second of rigidlab's whole step per engine and precision,
 * and of MuJoCo's mj_step on the same scene, in one process.
 *   Worker: traj_ID.speed.csv — rep,steps,ns_per_step,mujoco_ns_per_step: SPEED_REPS repetitions, each `steps`
 *   steps (the spec's steps, or duration/dt) of ours then the same of mj_step, both from bench's contact-rich
 *   state (bench.c, rl_bench_step_reps), timed in this thread's CPU time (CLOCK_THREAD_CPUTIME_ID: time slices
 *   the scheduler gives to other processes are not counted; in wall time single repetitions jumped 5× on a
 *   loaded machine).  Header only when the engine cannot run the scene (AVBD's model
 *   limits, e.g. two joints on a body); the reason goes to stderr and the point has no metrics.
 *   Metrics: steps_per_s = 1e9 / median(ns_per_step), mujoco_steps_per_s = 1e9 / median(mujoco_ns_per_step),
 *   time_ratio = median(ns_per_step) / median(mujoco_ns_per_step) (< 1: rigidlab is faster); step = the
 *   steps per repetition.
 *   The runner runs speed points one at a time whatever --jobs says (runner.c), so that points do not
 *   compete for cores; the ratio is measured alternately in one process either way.  Timings depend on the
 *   machine and its load: the spec's bands are wide and catch order-of-magnitude regressions only. */
#include <errno.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "csv.h"
#include "runner.h"
#include "spec.h"
#include "kinds.h"
#include "study_speed.h"

#define SPEED_REPS 11

static void speed_path(char *p, size_t n, const char *dir, const rl_point *q) {
  rl_snprintf(p, n, "%s/traj_%s.speed.csv", dir, q->id);
}

static int speed_run(const char *dir, const rl_spec *s, const rl_point *q, rl_sim_args *sa) {
  char path[4096], err[1024], why[512] = "";
  long n = rl_study_point_steps(s, q, err, sizeof err);
  if (n < 0) {
    rl_errorf("%s", err);
    return RL_EXIT_BADINPUT;
  }
  double tr[SPEED_REPS], tm[SPEED_REPS];
  int st = q->f32 ? rl32_bench_step_reps(sa, SPEED_REPS, n, tr, tm, why, sizeof why)
                  : rl64_bench_step_reps(sa, SPEED_REPS, n, tr, tm, why, sizeof why);
  if (st > 0) return st;
  if (st < 0) fprintf(stderr, "run %s: %s: not timed: %s\n", s->name, q->id, why);
  speed_path(path, sizeof path, dir, q);
  rl_csv w;
  if (rl_csv_open(&w, path, 0, err, sizeof err)) {
    rl_errorf("%s", err);
    return RL_EXIT_BADINPUT;
  }
  const char *cols[] = {"rep", "steps", "ns_per_step", "mujoco_ns_per_step"};
  for (int c = 0; c < 4; c++) rl_csv_str(&w, cols[c]);
  rl_csv_end_row(&w);
  for (int r = 0; r < SPEED_REPS && st == 0; r++) {
    rl_csv_int(&w, r);
    rl_csv_int(&w, n);
    rl_csv_num(&w, tr[r]);
    rl_csv_num(&w, tm[r]);
    rl_csv_end_row(&w);
  }
  if (rl_csv_close(&w, err, sizeof err)) {
    rl_errorf("%s", err);
    return RL_EXIT_BADINPUT;
  }
  return 0;
}

/* median of x[0..n−1] (sorted in place; gsl: the mean of the two middle values when n is even) */
static double median(double *x, size_t n) {
  gsl_sort(x, 1, n);
  return gsl_stats_median_from_sorted_data(x, 1, n);
}

static int speed_metrics(rl_csv *w, const char *dir, const rl_spec *s, const rl_point *pts, const rl_point *q,
                         char *err, int errlen) {
  (void)pts;
  char path[4096], *hdr;
  speed_path(path, sizeof path, dir, q);
  int nrow, ncol;
  double *v, tr[SPEED_REPS], tm[SPEED_REPS];
  if (rl_numcsv_read(path, &hdr, &nrow, &ncol, &v, err, errlen)) return -1;
  int bad = strcmp(hdr, "rep,steps,ns_per_step,mujoco_ns_per_step") || nrow > SPEED_REPS, at = 0;
  long steps = 0;
  size_t n = 0;
  for (int r = 0; r < nrow && !bad; r++, n++) {
    steps = (long)v[4 * r + 1];
    tr[n] = v[4 * r + 2];
    tm[n] = v[4 * r + 3];
    if (!(tr[n] > 0) || !(tm[n] > 0)) bad = 1, at = r + 2;
  }
  free(hdr);
  free(v);
  if (bad) {
    rl_snprintf(err, (size_t)errlen, "%s:%d: malformed (rep,steps,ns_per_step,mujoco_ns_per_step)", path, at ? at : 1);
    return -1;
  }
  if (!n) return 0; /* the engine cannot run this scene: no metrics */
  double dt = rl_study_point_dt(q, err, errlen);
  if (isnan(dt)) return -1;
  double ours = median(tr, n), theirs = median(tm, n);
  if (s->metrics >> RL_MET_STEPS_PER_S & 1) rl_study_row(w, s, q, dt, "steps_per_s", 1e9 / ours, steps);
  if (s->metrics >> RL_MET_MUJOCO_STEPS_PER_S & 1) rl_study_row(w, s, q, dt, "mujoco_steps_per_s", 1e9 / theirs, steps);
  if (s->metrics >> RL_MET_TIME_RATIO & 1) rl_study_row(w, s, q, dt, "time_ratio", ours / theirs, steps);
  return 0;
}

/* mj_step is timed beside every point: no mujoco points */
static int speed_check(rl_spec *s, char *err, int errlen) {
  return rl_study_ban_engines(s, "mujoco", "newton, cg, avbd (mj_step is timed beside every point)", err, errlen);
}

const rl_study_kind rl_kind_speed = {
    .name = "speed",
    .refs = 1u << RL_REF_MUJOCO_TIMING,
    .refs_required = 1u << RL_REF_MUJOCO_TIMING,
    .flags = RL_KIND_SERIAL,
    .check = speed_check,
    .run = speed_run,
    .done = ".speed",
    .metrics = speed_metrics,
};
