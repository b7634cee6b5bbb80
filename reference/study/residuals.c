/* residuals.c — kind = residuals (spec.h): the worker side (which files a point writes) and the metrics the parent
 * computes from those files.
 *   residuals   traj_ID.res.csv (study_kinds.h: study_residuals); metrics signorini_max, coulomb_max,
 *               mdp_max, ncp_max, penetration_max: maxima over steps (step = the argmax). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "csv.h"
#include "kinds.h"
#include "runner.h"
#include "study_kinds.h"

static int residuals_run(const char *dir, const rl_spec *s, const rl_point *q, rl_sim_args *sa) {
  (void)s;
  char path[4096];
  rl_study_file(path, sizeof path, dir, q, ".res");
  rl_csv w;
  if (rl_study_open_csv(&w, path, q->f32, sa)) return RL_EXIT_BADINPUT;
  int st = q->f32 ? rl32_study_residuals(sa) : rl64_study_residuals(sa);
  return rl_study_finish_csv(&w, st);
}

static int residuals_metrics(rl_csv *w, const char *dir, const rl_spec *s, const rl_point *pts, const rl_point *q,
                             char *err, int errlen) {
  (void)pts;
  char path[4096];
  rl_numtable t;
  rl_study_file(path, sizeof path, dir, q, ".res");
  if (rl_numtable_read(path, &t, err, errlen)) return -1;
  double dt = rl_study_point_dt(q, err, errlen);
  if (isnan(dt)) {
    free(t.v);
    return -1;
  }
  static const int met[5] = {RL_MET_SIGNORINI_MAX, RL_MET_COULOMB_MAX, RL_MET_MDP_MAX, RL_MET_NCP_MAX,
                             RL_MET_PENETRATION_MAX};
  for (int j = 0; j < 5; j++) {
    if (!rl_study_wants(s, met[j])) continue;
    double mx = 0;
    long at = 0;
    for (int r = 0; r < t.nrow; r++)
      if (RL_TV(&t, r, 2 + j) > mx || isnan(RL_TV(&t, r, 2 + j))) {
        mx = RL_TV(&t, r, 2 + j);
        at = (long)RL_TV(&t, r, 0);
        if (isnan(mx)) break;
      }
    rl_study_row(w, s, q, dt, rl_metric_names[met[j]], mx, at);
  }
  free(t.v);
  return 0;
}

const rl_study_kind rl_kind_residuals = {
    .name = "residuals",
    .run = residuals_run,
    .done = ".res",
    .metrics = residuals_metrics,
};
