/* lockstep.c — kind = lockstep (spec.h): engines vs MuJoCo, one step at a time and free running; the
 * per-precision lock-step run is study_lockstep_prec.c (study_lockstep.h).
 *   lockstep  engines vs MuJoCo, per point (scene × engine newton|cg|avbd × precision × options):
 *             traj_ID.csv      the engine's own free-running trajectory from the model's reset state (`sim`);
 *             traj_ID.mj.csv   MuJoCo's free-running trajectory from the same state (f64);
 *             traj_ID.lock.csv lock-step: step,time,err_qpos,err_qvel,ncon,mj_ncon,iter,converged,mj_iter,
 *                              mj_converged (study_lockstep.h; avbd: the last four NaN), one
 *                              engine step from each of MuJoCo's states against MuJoCo's next state.
 *             Metrics: lockstep_qpos_max, lockstep_qvel_max (maxima over steps, step = argmax),
 *             lockstep_qvel_median (gsl_stats_median_from_sorted_data over steps, step = the last),
 *             free_qpos_err_max (runner.h: the qpos_err_max series of traj_ID.csv against traj_ID.mj.csv),
 *             iterations_excess_max, unconverged_where_mujoco_converged (newton, cg: the lock-step's
 *             iterations against MuJoCo's from the same state and warm start, lockstep_iterations below),
 *             free_diverge_time_1e-06 (the first time that max |Δqpos| vs MuJoCo exceeds 1e-6, from the
 *             final_qpos_err series; the final time if never).  AVBD is a hard maximal-coordinate model and
 *             MuJoCo a soft one: AVBD's figures are a model difference, not an error of either engine.
 *             ctrl stays at MuJoCo's reset value (0), as in `sim` and kind = trajectory; nothing is random,
 *             the seed is only recorded. */
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "csv.h"
#include "kinds.h"
#include "runner.h"
#include "study_lockstep.h"

static int lockstep_run(const char *dir, const rl_spec *s, const rl_point *q, rl_sim_args *sa) {
  (void)s;
  char path[4096];
  rl_study_file(path, sizeof path, dir, q, "");
  int st = rl_study_sim_to(sa, q->f32, path);
  if (st) return st;
  rl_sim_args mj = *sa;
  mj.engine = "mujoco";
  rl_study_file(path, sizeof path, dir, q, ".mj");
  if ((st = rl_study_sim_to(&mj, 0, path))) return st;
  rl_study_file(path, sizeof path, dir, q, ".lock");
  rl_csv w;
  if (rl_study_open_csv(&w, path, 0, sa)) return RL_EXIT_BADINPUT;
  st = q->f32 ? rl32_study_lockstep(sa) : rl64_study_lockstep(sa);
  return rl_study_finish_csv(&w, st);
}

/* max over rows of column C (NaN wins), its row in *at */
static double column_max(const double *v, int nrow, int ncol, int c, int *at) {
  double mx = -INFINITY;
  *at = 0;
  for (int r = 0; r < nrow; r++) {
    double x = v[(size_t)r * (size_t)ncol + (size_t)c];
    if (x > mx || isnan(x)) {
      mx = x;
      *at = r;
      if (isnan(x)) break;
    }
  }
  return mx;
}

/* From the same state and warm start each step (columns iter, converged, mj_iter, mj_converged):
   iterations_excess_max = max over steps of (rigidlab's iterations − MuJoCo's), step = the argmax;
   unconverged_where_mujoco_converged = the steps rigidlab ended unconverged where MuJoCo converged,
   step = the first (0 when none) */
static void lockstep_iterations(rl_csv *w, const rl_spec *s, const rl_point *q, double dt, const double *v, int nrow,
                                int ncol) {
  double excess = -INFINITY;
  long at = 0, first = 0;
  int bad = 0;
  for (int r = 0; r < nrow; r++) {
    const double *row = v + (size_t)r * (size_t)ncol;
    if (row[6] - row[8] > excess) excess = row[6] - row[8], at = (long)row[0];
    if (row[7] == 0 && row[9] == 1 && !bad++) first = (long)row[0];
  }
  if (s->metrics >> RL_MET_ITERATIONS_EXCESS_MAX & 1)
    rl_study_row(w, s, q, dt, rl_metric_names[RL_MET_ITERATIONS_EXCESS_MAX], excess, at);
  if (s->metrics >> RL_MET_UNCONVERGED_WHERE_MJ_CONVERGED & 1)
    rl_study_row(w, s, q, dt, rl_metric_names[RL_MET_UNCONVERGED_WHERE_MJ_CONVERGED], bad, first);
}

static int lockstep_metrics(rl_csv *w, const char *dir, const rl_spec *s, const rl_point *pts, const rl_point *q,
                            char *err, int errlen) {
  (void)pts;
  char path[4096];
  int nrow, ncol;
  double *v;
  rl_study_file(path, sizeof path, dir, q, ".lock");
  if (rl_numcsv_read(path, NULL, &nrow, &ncol, &v, err, errlen)) return -1;
  rl_traj t, ref;
  rl_study_file(path, sizeof path, dir, q, "");
  if (rl_traj_read(path, &t, err, errlen)) {
    free(v);
    return -1;
  }
  rl_study_file(path, sizeof path, dir, q, ".mj");
  if (rl_traj_read(path, &ref, err, errlen)) {
    free(v);
    rl_traj_free(&t);
    return -1;
  }
  /* times from MuJoCo's f64 trajectory (an f32 trajectory's time column is rounded) */
  double dt = q->dt > 0 ? q->dt : ref.nrow > 1 ? ref.v[(size_t)ref.ncol + 1] - ref.v[1] : 0;
  /* columns: step,time,err_qpos,err_qvel,ncon,mj_ncon */
  static const int met[2] = {RL_MET_LOCKSTEP_QPOS_MAX, RL_MET_LOCKSTEP_QVEL_MAX};
  int lock = rl_spec_uses(s, RL_REF_MUJOCO_LOCKSTEP), free_ = rl_spec_uses(s, RL_REF_MUJOCO_FREE);
  for (int j = 0; j < 2 && nrow && lock; j++) {
    if (!(s->metrics >> met[j] & 1)) continue;
    int at;
    double mx = column_max(v, nrow, ncol, 2 + j, &at);
    rl_study_row(w, s, q, dt, rl_metric_names[met[j]], mx, (long)v[(size_t)at * (size_t)ncol]);
  }
  if (nrow && lock && s->metrics >> RL_MET_LOCKSTEP_QVEL_MEDIAN & 1) {
    double *e = malloc(sizeof(double) * (size_t)nrow);
    int nan = 0;
    for (int r = 0; r < nrow; r++) nan |= isnan(e[r] = v[(size_t)r * (size_t)ncol + 3]);
    gsl_sort(e, 1, (size_t)nrow);
    double med = nan ? NAN : gsl_stats_median_from_sorted_data(e, 1, (size_t)nrow);
    rl_study_row(w, s, q, dt, rl_metric_names[RL_MET_LOCKSTEP_QVEL_MEDIAN], med,
                 (long)v[(size_t)(nrow - 1) * (size_t)ncol]);
    free(e);
  }
  /* free running: the runner's qpos-error series of the engine's trajectory against MuJoCo's */
  double *r = malloc(sizeof(double) * (size_t)t.nrow);
  if (free_ && s->metrics >> RL_MET_FREE_QPOS_ERR_MAX & 1 && !rl_metric_series(RL_MET_QPOS_ERR_MAX, &t, &ref, r))
    rl_study_row(w, s, q, dt, rl_metric_names[RL_MET_FREE_QPOS_ERR_MAX], r[t.nrow - 1],
                 rl_metric_step(RL_MET_QPOS_ERR_MAX, &t, r));
  if (free_ && s->metrics >> RL_MET_FREE_DIVERGE_1EM6 & 1 && !rl_metric_series(RL_MET_FINAL_QPOS_ERR, &t, &ref, r)) {
    int k = 0, last = (t.nrow < ref.nrow ? t.nrow : ref.nrow) - 1;
    while (k < last && r[k] <= 1e-6) k++;
    rl_study_row(w, s, q, dt, rl_metric_names[RL_MET_FREE_DIVERGE_1EM6], ref.v[(size_t)k * (size_t)ref.ncol + 1],
                 (long)t.v[(size_t)k * (size_t)t.ncol + (size_t)t.c_step]);
  }
  if (nrow && lock && ncol >= 10 && !isnan(v[6])) lockstep_iterations(w, s, q, dt, v, nrow, ncol);
  free(r);
  free(v);
  rl_traj_free(&t);
  rl_traj_free(&ref);
  return 0;
}

/* MuJoCo is the reference of every point, not a point of its own */
static int lockstep_check(rl_spec *s, char *err, int errlen) {
  return rl_study_ban_engines(s, "mujoco", "newton, cg, avbd; MuJoCo is the reference of every point", err, errlen);
}

const rl_study_kind rl_kind_lockstep = {
    .name = "lockstep",
    .refs = 1u << RL_REF_MUJOCO_LOCKSTEP | 1u << RL_REF_MUJOCO_FREE,
    .check = lockstep_check,
    .run = lockstep_run,
    .done = ".lock",
    .metrics = lockstep_metrics,
};
