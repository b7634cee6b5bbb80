/* agreement.c — kind = agreement (spec.h): rigidlab's free-running trajectory against MuJoCo's on the same
 * scene, options and time step (reference mujoco_free: the mujoco point of the sweep), from the scene's first
 * keyframe when it has one (else qpos0).
 *   Worker: traj_ID.csv (as `rigidlab sim --csv`; mujoco points too).
 *   Metric: traj_rel_err_max = max over the rows n of ‖x_n − x̂_n‖∞ / max(‖x̂_n‖∞, 1), x = (qpos, qvel) of the
 *   point, x̂ = MuJoCo's (step = the first row that attains it).
 *   Study file: traj_compare.csv — scene,AXES,steps,max_rel_err_qpos_qvel, one row per non-mujoco point with
 *   the metric in %.6e (AXES: the option axes' keys joined by '+', e.g. integrator, their values in the rows),
 *   what `rigidlab report` tabulates. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "csv.h"
#include "kinds.h"
#include "mj_load.h"
#include "runner.h"

/* the first keyframe ("0") when the scene has one */
static int agreement_run(const char *dir, const rl_spec *s, const rl_point *q, rl_sim_args *sa) {
  (void)s;
  char path[4096], err[1024];
  mjModel *m = rl_mj_load(q->scene, err, sizeof err);
  if (!m) {
    rl_errorf("%s", err);
    return RL_EXIT_BADINPUT;
  }
  sa->key = m->nkey > 0 ? "0" : NULL;
  mj_deleteModel(m);
  rl_study_file(path, sizeof path, dir, q, "");
  return rl_study_sim_to(sa, q->f32, path);
}

/* max_n ‖x_n − x̂_n‖∞ / max(‖x̂_n‖∞, 1) over the rows both trajectories have; its row into *AT */
static double rel_err_max(const rl_traj *t, const rl_traj *ref, int *at) {
  int nx = t->nq + RL_TRAJ_NV(t), n = t->nrow < ref->nrow ? t->nrow : ref->nrow;
  double worst = 0;
  *at = 0;
  for (int r = 0; r < n; r++) {
    double e = 0, mag = 1;
    for (int k = 0; k < nx; k++) {
      double d = fabs(RL_QP(t, r, k) - RL_QP(ref, r, k)), a = fabs(RL_QP(ref, r, k));
      if (d > e) e = d;
      if (a > mag) mag = a;
    }
    if (e / mag > worst) worst = e / mag, *at = r;
  }
  return worst;
}

/* the point's error against its mujoco point: 0, 1 (no reference: a mujoco point), −1 with err */
static int point_error(const char *dir, const rl_spec *s, const rl_point *pts, const rl_point *q, double *e, long *step,
                       long *last, char *err, int errlen) {
  if (q->ref < 0 || !strcmp(q->engine, "mujoco") || !rl_spec_uses(s, RL_REF_MUJOCO_FREE)) return 1;
  char path[4096];
  rl_traj t, ref;
  rl_study_file(path, sizeof path, dir, q, "");
  if (rl_traj_read(path, &t, err, errlen)) return -1;
  rl_study_file(path, sizeof path, dir, &pts[q->ref], "");
  if (rl_traj_read(path, &ref, err, errlen)) {
    rl_traj_free(&t);
    return -1;
  }
  int at;
  *e = rel_err_max(&t, &ref, &at);
  *step = (long)RL_TV(&t, at, t.c_step);
  *last = (long)RL_TV(&t, t.nrow - 1, t.c_step);
  rl_traj_free(&t);
  rl_traj_free(&ref);
  return 0;
}

static int agreement_metrics(rl_csv *w, const char *dir, const rl_spec *s, const rl_point *pts, const rl_point *q,
                             char *err, int errlen) {
  double e;
  long step, last;
  int r = point_error(dir, s, pts, q, &e, &step, &last, err, errlen);
  if (r) return r < 0 ? -1 : 0;
  double dt = rl_study_point_dt(q, err, errlen);
  if (isnan(dt)) return -1;
  if (rl_study_wants(s, RL_MET_TRAJ_REL_ERR_MAX)) rl_study_row(w, s, q, dt, "traj_rel_err_max", e, step);
  return 0;
}

/* 1 when sweep axis KEY is a model/solver option (not engine, precision, dt, device) */
static int option_axis(const char *key) {
  return strcmp(key, "engine") && strcmp(key, "precision") && strcmp(key, "dt") && strcmp(key, "device");
}

/* DIR/traj_compare.csv */
static int agreement_collect(const char *dir, const rl_spec *s, const rl_point *pts, const int *mine, int n, char *err,
                             int errlen) {
  char path[4096], axes[256] = "", num[64];
  for (int a = 0; a < s->naxes; a++)
    if (option_axis(s->axis[a].key))
      rl_snprintf(axes + strlen(axes), sizeof axes - strlen(axes), "%s%s", axes[0] ? "+" : "", s->axis[a].key);
  rl_csv w;
  rl_snprintf(path, sizeof path, "%s/traj_compare.csv", dir);
  if (rl_csv_open(&w, path, 0, err, errlen)) return -1;
  rl_csv_str(&w, "scene");
  rl_csv_str(&w, axes[0] ? axes : "options");
  rl_csv_str(&w, "steps");
  rl_csv_str(&w, "max_rel_err_qpos_qvel");
  rl_csv_end_row(&w);
  for (int k = 0; k < n; k++) {
    const rl_point *q = &pts[mine[k]];
    double e;
    long step, last;
    int r = point_error(dir, s, pts, q, &e, &step, &last, err, errlen);
    if (r < 0) {
      rl_csv_abort(&w);
      return -1;
    }
    if (r) continue;
    char vals[512] = "";
    for (int o = 0; o < q->nopts; o++) {
      const char *eq = strchr(q->opts[o], '=');
      rl_snprintf(vals + strlen(vals), sizeof vals - strlen(vals), "%s%s", o ? "+" : "", eq ? eq + 1 : q->opts[o]);
    }
    rl_csv_str(&w, q->scene_name);
    rl_csv_str(&w, vals[0] ? vals : "default");
    rl_csv_int(&w, last);
    rl_snprintf(num, sizeof num, "%.6e", e);
    rl_csv_str(&w, num);
    rl_csv_end_row(&w);
  }
  return rl_csv_close(&w, err, errlen);
}

const rl_study_kind rl_kind_agreement = {
    .name = "agreement",
    .refs = 1u << RL_REF_MUJOCO_FREE,
    .refs_required = 1u << RL_REF_MUJOCO_FREE,
    .run = agreement_run,
    .done = "",
    .metrics = agreement_metrics,
    .collect = agreement_collect,
};
