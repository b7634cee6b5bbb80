/* trajectory.c — kind = trajectory (the default): each point's free-running trajectory from qpos0, as
 * `rigidlab sim` writes it (traj_ID.csv), and the metrics of its running series (runner.h: rl_metric_series):
 * final_qpos_err and qpos_err_max against the mujoco point of the same scene, dt and options (reference
 * mujoco_free), penetration_max, anchor_err_max, energy_drift, iterations_mean, converged_frac. */
#include <math.h>
#include <stdlib.h>
#include "csv.h"
#include "kinds.h"
#include "runner.h"

/* the worker: the point's trajectory → DIR/traj_ID.csv */
int rl_trajectory_run(const char *dir, const rl_spec *s, const rl_point *q, rl_sim_args *sa) {
  (void)s;
  char path[4096];
  rl_study_file(path, sizeof path, dir, q, "");
  return rl_study_sim_to(sa, q->f32, path);
}

/* per wanted metric: the last value of its running series, at the step rl_metric_step names */
int rl_trajectory_metrics(rl_csv *w, const char *dir, const rl_spec *s, const rl_point *pts, const rl_point *q,
                          char *err, int errlen) {
  char path[4096];
  rl_traj t, ref;
  int have_ref = 0;
  rl_study_file(path, sizeof path, dir, q, "");
  if (rl_traj_read(path, &t, err, errlen)) return -1;
  if (q->ref >= 0 && rl_spec_uses(s, RL_REF_MUJOCO_FREE)) {
    rl_study_file(path, sizeof path, dir, &pts[q->ref], "");
    if (rl_traj_read(path, &ref, err, errlen)) {
      rl_traj_free(&t);
      return -1;
    }
    have_ref = 1;
  }
  double dt = rl_study_point_dt(q, err, errlen);
  double *r = malloc(sizeof(double) * (size_t)t.nrow);
  for (int m = 0; m < RL_NMET && !isnan(dt); m++) {
    if (!rl_study_wants(s, m) || rl_metric_series(m, &t, have_ref ? &ref : NULL, r)) continue;
    rl_study_row(w, s, q, dt, rl_metric_names[m], r[t.nrow - 1], rl_metric_step(m, &t, r));
  }
  free(r);
  rl_traj_free(&t);
  if (have_ref) rl_traj_free(&ref);
  return isnan(dt) ? -1 : 0;
}

const rl_study_kind rl_kind_trajectory = {
    .name = "trajectory",
    .refs = 1u << RL_REF_MUJOCO_FREE,
    .run = rl_trajectory_run,
    .done = "",
    .metrics = rl_trajectory_metrics,
};
