/* fp32.c — kind = fp32 (spec.h): the worker side (which files a point writes) and the metrics the parent
 * computes from those files.
 *   fp32        traj_ID.csv (f64), traj_ID.f32.csv (f32) free running from qpos0; traj_ID.onestep.csv:
 *               one step in f64 and in f32 from 20 f64 states along the f64 trajectory (newton, cg, avbd: each
 *               restarted from the generalized state, study_onestep).
 *               Metrics: onestep_rel_max = max over states of max(‖Δqpos‖∞/max(‖qpos‖∞,1),
 *               ‖Δqvel‖∞/max(‖qvel‖∞,1)); diverge_time_1e-06, diverge_time_0.001: the first time
 *               max |Δqpos| exceeds the threshold (the final time if never). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "csv.h"
#include "kinds.h"
#include "runner.h"
#include "study_kinds.h"

#define NONESTEP 20

static int fp32_run(const char *dir, const rl_spec *s, const rl_point *q, rl_sim_args *sa) {
  (void)s;
  char path[4096], err[1024];
  rl_study_file(path, sizeof path, dir, q, "");
  int st = rl_study_sim_to(sa, 0, path);
  if (!st) {
    char p32[4096];
    rl_study_file(p32, sizeof p32, dir, q, ".f32");
    st = rl_study_sim_to(sa, 1, p32);
  }
  if (st) return st;
  rl_traj t;
  if (rl_traj_read(path, &t, err, sizeof err)) {
    rl_errorf("%s", err);
    return RL_EXIT_BADINPUT;
  }
  /* qvel columns follow qpos: count them from the column layout (step,time,qpos…,qvel…,iterations…) */
  int nq = t.nq, nv = RL_TRAJ_NV(&t);
  rl_csv w;
  rl_study_file(path, sizeof path, dir, q, ".onestep");
  if (rl_csv_open(&w, path, 0, err, sizeof err)) {
    rl_errorf("%s", err);
    rl_traj_free(&t);
    return RL_EXIT_BADINPUT;
  }
  const char *cols[] = {"step", "rel_qpos", "rel_qvel"};
  for (int c = 0; c < 3; c++) rl_csv_str(&w, cols[c]);
  rl_csv_end_row(&w);
  if (rl_study_restartable(q->engine) && t.nrow > 1) {
    int n = NONESTEP < t.nrow - 1 ? NONESTEP : t.nrow - 1;
    long row[NONESTEP];
    for (int i = 0; i < n; i++) row[i] = (long)i * (t.nrow - 1) / n;
    size_t sq = (size_t)n * (size_t)nq, sv = (size_t)n * (size_t)nv;
    double *qp = malloc(sizeof(double) * sq), *qv = malloc(sizeof(double) * (sv + 1));
    double *p64 = malloc(sizeof(double) * sq), *v64 = malloc(sizeof(double) * (sv + 1));
    double *p32 = malloc(sizeof(double) * sq), *v32 = malloc(sizeof(double) * (sv + 1));
    rl_study_states_at(&t, row, n, nv, qp, qv);
    sa->dt = q->dt;
    st = rl64_study_onestep(sa, 1, n, nq, nv, qp, qv, p64, v64);
    if (!st) st = rl32_study_onestep(sa, 1, n, nq, nv, qp, qv, p32, v32);
    for (int i = 0; i < n && !st; i++) {
      double ep = 0, mp = 1, ev = 0, mv = 1;
      for (int k = 0; k < nq; k++) {
        ep = fmax(ep, fabs(p32[(size_t)i * (size_t)nq + (size_t)k] - p64[(size_t)i * (size_t)nq + (size_t)k]));
        mp = fmax(mp, fabs(p64[(size_t)i * (size_t)nq + (size_t)k]));
      }
      for (int k = 0; k < nv; k++) {
        ev = fmax(ev, fabs(v32[(size_t)i * (size_t)nv + (size_t)k] - v64[(size_t)i * (size_t)nv + (size_t)k]));
        mv = fmax(mv, fabs(v64[(size_t)i * (size_t)nv + (size_t)k]));
      }
      rl_csv_int(&w, (long long)RL_TV(&t, row[i], t.c_step));
      rl_csv_num(&w, ep / mp);
      rl_csv_num(&w, ev / mv);
      rl_csv_end_row(&w);
    }
    free(qp);
    free(qv);
    free(p64);
    free(v64);
    free(p32);
    free(v32);
  }
  rl_traj_free(&t);
  return rl_study_finish_csv(&w, st);
}

static int fp32_metrics(rl_csv *w, const char *dir, const rl_spec *s, const rl_point *pts, const rl_point *q, char *err,
                        int errlen) {
  (void)pts;
  char path[4096];
  rl_traj a, b;
  rl_numtable os;
  rl_study_file(path, sizeof path, dir, q, "");
  if (rl_traj_read(path, &a, err, errlen)) return -1;
  rl_study_file(path, sizeof path, dir, q, ".f32");
  if (rl_traj_read(path, &b, err, errlen)) {
    rl_traj_free(&a);
    return -1;
  }
  rl_study_file(path, sizeof path, dir, q, ".onestep");
  if (rl_numtable_read(path, &os, err, errlen)) {
    rl_traj_free(&a);
    rl_traj_free(&b);
    return -1;
  }
  double dt = rl_study_point_dt(q, err, errlen);
  if (isnan(dt)) {
    free(os.v);
    rl_traj_free(&a);
    rl_traj_free(&b);
    return -1;
  }
  if (os.nrow && rl_study_wants(s, RL_MET_ONESTEP_REL_MAX)) {
    double mx = -1;
    long at = 0;
    for (int r = 0; r < os.nrow; r++) {
      double x = fmax(RL_TV(&os, r, 1), RL_TV(&os, r, 2));
      if (x > mx) mx = x, at = (long)RL_TV(&os, r, 0);
    }
    rl_study_row(w, s, q, dt, "onestep_rel_max", mx, at);
  }
  static const double thr[2] = {1e-6, 1e-3};
  static const int met[2] = {RL_MET_DIVERGE_1EM6, RL_MET_DIVERGE_1EM3};
  int n = a.nrow < b.nrow ? a.nrow : b.nrow;
  for (int j = 0; j < 2; j++) {
    if (!rl_study_wants(s, met[j])) continue;
    int r = 0;
    for (; r < n; r++) {
      double e = 0;
      for (int i = 0; i < a.nq; i++) e = fmax(e, fabs(RL_QP(&a, r, i) - RL_QP(&b, r, i)));
      if (!(e <= thr[j])) break;
    }
    int at = r < n ? r : n - 1;
    rl_study_row(w, s, q, dt, rl_metric_names[met[j]], RL_TV(&a, at, 1), (long)RL_TV(&a, at, a.c_step));
  }
  free(os.v);
  rl_traj_free(&a);
  rl_traj_free(&b);
  return 0;
}

/* f64 and f32 are the study itself: no precision axis; MuJoCo is f64 only */
static int fp32_check(rl_spec *s, char *err, int errlen) {
  int line = 0;
  if (rl_spec_axis_find(s, "precision", &line) >= 0) {
    rl_snprintf(err, (size_t)errlen, "%s:%d: [sweep] precision: kind = fp32 runs f64 and f32 itself (drop the axis)",
                s->path, line);
    return -1;
  }
  return rl_study_ban_engines(s, "mujoco", "newton, cg, avbd (MuJoCo is f64 only)", err, errlen);
}

const rl_study_kind rl_kind_fp32 = {
    .name = "fp32",
    .flags = RL_KIND_BOTH_PRECISIONS,
    .check = fp32_check,
    .run = fp32_run,
    .done = ".onestep",
    .metrics = fp32_metrics,
};
