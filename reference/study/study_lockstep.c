/* study_lockstep.c — the study kinds `lockstep` and `device` (issue 6, studies 5 and 4); see spec.h and
 * study_lockstep.h.
 *   lockstep  engines vs MuJoCo, per point (scene × engine newton|cg|avbd × precision × options):
 *             traj_ID.csv      the engine's own free-running trajectory from the model's reset state (`sim`);
 *             traj_ID.mj.csv   MuJoCo's free-running trajectory from the same state (f64);
 *             traj_ID.lock.csv lock-step: step,time,err_qpos,err_qvel,ncon,mj_ncon (study_lockstep.h), one
 *                              engine step from each of MuJoCo's states against MuJoCo's next state.
 *             Metrics: lockstep_qpos_max, lockstep_qvel_max (maxima over steps, step = argmax),
 *             lockstep_qvel_median (gsl_stats_median_from_sorted_data over steps, step = the last),
 *             free_qpos_err_max (runner.h: the qpos_err_max series of traj_ID.csv against traj_ID.mj.csv),
 *             free_diverge_time_1e-06 (the first time that max |Δqpos| vs MuJoCo exceeds 1e-6, from the
 *             final_qpos_err series; the final time if never).  AVBD is a hard maximal-coordinate model and
 *             MuJoCo a soft one: AVBD's figures are a model difference, not an error of either engine.
 *             ctrl stays at MuJoCo's reset value (0), as in `sim` and kind = trajectory; nothing is random,
 *             the seed is only recorded.
 *   device    CPU vs CUDA at equal precision, per scene × engine × precision × device = cpu | cuda: cpu points
 *             write traj_ID.csv (the reference of the cuda twin); no metrics, a cpu point has nothing to be
 *             compared with.  rigidlab has no CUDA engine yet (engine/cuda/ is empty; AVBD on CUDA is
 *             feature A19), so cuda points are not run, no rows are written for them, and meta.csv says
 *             cuda_rows,absent and cuda_reason,… .  A CUDA build must replace rl_study_point_absent's
 *             reason by a device check (cudaGetDeviceCount), write the cuda point's trajectory with its
 *             engine and compare it with the cpu twin as kind = fp32 compares f32 with f64. */
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
#include "study_kinds.h"
#include "study_lockstep.h"

#ifdef RL_HAVE_CUDA
#error "a CUDA engine needs its device check in rl_study_point_absent and its worker in rl_lockstep_run_point"
#endif

static const char *const no_cuda_reason =
    "rigidlab was built without a CUDA engine (engine/cuda/ has no sources; AVBD on CUDA is feature A19)";

static int has_axis(const rl_spec *s, const char *key, int *line) {
  for (int a = 0; a < s->naxes; a++)
    if (!strcmp(s->axis[a].key, key)) {
      if (line) *line = s->axis[a].line;
      return a;
    }
  return -1;
}

int rl_lockstep_kind_check(const rl_spec *s, char *err, int errlen) {
  int line = 0, dev = has_axis(s, "device", &line);
  if (dev >= 0 && s->kind != RL_KIND_DEVICE) {
    rl_snprintf(err, (size_t)errlen, "%s:%d: [sweep] device is for kind = device only (kind is %s)", s->path, line,
                rl_kind_names[s->kind]);
    return -1;
  }
  if (s->kind == RL_KIND_DEVICE) {
    int cpu = 0, cuda = 0;
    for (int i = 0; dev >= 0 && i < s->axis[dev].nval; i++) {
      cpu |= !strcmp(s->axis[dev].val[i], "cpu");
      cuda |= !strcmp(s->axis[dev].val[i], "cuda");
    }
    if (!cpu || !cuda || s->axis[dev].nval != 2) {
      if (dev < 0)
        rl_snprintf(err, (size_t)errlen, "%s:%d: [experiment] kind = device needs the sweep axis 'device = cpu, cuda'",
                    s->path, s->kind_line);
      else rl_snprintf(err, (size_t)errlen, "%s:%d: [sweep] device: kind = device compares cpu with cuda (allowed: "
                       "device = cpu, cuda, each once)", s->path, line);
      return -1;
    }
  }
  if (s->kind != RL_KIND_LOCKSTEP && s->kind != RL_KIND_DEVICE) return 0;
  int e = has_axis(s, "engine", &line);
  for (int i = 0; e >= 0 && i < s->axis[e].nval; i++)
    if (!strcmp(s->axis[e].val[i], "mujoco")) {
      rl_snprintf(err, (size_t)errlen, "%s:%d: [sweep] engine: 'mujoco' is not available for kind = %s (allowed: newton, "
                  "cg, avbd%s)", s->path, line, rl_kind_names[s->kind],
                  s->kind == RL_KIND_LOCKSTEP ? "; MuJoCo is the reference of every point" : "; MuJoCo has no CUDA build");
      return -1;
    }
  return 0;
}

int rl_study_point_absent(const rl_spec *s, const rl_point *q, char *why, size_t whylen) {
  if (s->kind != RL_KIND_DEVICE || strcmp(q->device, "cuda")) return 0;
  if (why) rl_snprintf(why, whylen, "%s", no_cuda_reason);
  return 1;
}

void rl_study_meta_rows(rl_csv *w, const rl_spec *s, const rl_point *pts, int n) {
  char why[512] = "", buf[32];
  int absent = 0;
  for (int k = 0; k < n; k++) absent += rl_study_point_absent(s, &pts[k], why, sizeof why);
  if (!absent) return;
  rl_csv_str(w, "cuda_rows");
  rl_csv_str(w, "absent");
  rl_csv_end_row(w);
  rl_csv_str(w, "cuda_reason");
  rl_csv_str(w, why);
  rl_csv_end_row(w);
  rl_snprintf(buf, sizeof buf, "%d", absent);
  rl_csv_str(w, "cuda_points_not_run");
  rl_csv_str(w, buf);
  rl_csv_end_row(w);
}

/* the next CSV field of *P (quoted fields with "" escapes); its end of record in *eor; NULL at the end */
static char *csv_field(char **p, int *eor) {
  char *s = *p, *o = s, *start = s;
  if (!*s) return NULL;
  if (*s == '"') {
    start = o = ++s;
    while (*s) {
      if (*s == '"' && s[1] == '"') *o++ = '"', s += 2;
      else if (*s == '"') {
        s++;
        break;
      } else *o++ = *s++;
    }
  } else
    while (*s && *s != ',' && *s != '\n') *o++ = *s++;
  *eor = *s != ',';
  if (*s) s++;
  *o = 0;
  *p = s;
  return start;
}

int rl_study_absent_note(const char *dir, char *note, size_t n) {
  char path[4200];
  rl_snprintf(path, sizeof path, "%s/meta.csv", dir);
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *t = malloc((size_t)(len > 0 ? len : 0) + 1), *p = t;
  size_t r = fread(t, 1, (size_t)(len > 0 ? len : 0), f);
  t[r] = 0;
  fclose(f);
  int absent = 0, eor;
  char reason[1024] = "unknown reason";
  for (;;) {
    char *key = csv_field(&p, &eor);
    if (!key || eor) break;
    char *val = csv_field(&p, &eor);
    if (!val) break;
    if (!strcmp(key, "cuda_rows")) absent = !strcmp(val, "absent");
    if (!strcmp(key, "cuda_reason")) rl_snprintf(reason, sizeof reason, "%s", val);
    while (!eor && csv_field(&p, &eor)) {}
  }
  free(t);
  if (absent) rl_snprintf(note, n, "cuda rows absent: %s", reason);
  return absent;
}

static void kind_path(char *p, size_t n, const char *dir, const rl_point *q, const char *suffix) {
  rl_snprintf(p, n, "%s/traj_%s%s.csv", dir, q->id, suffix);
}

void rl_lockstep_done_path(char *p, size_t n, const char *dir, const rl_spec *s, const rl_point *q) {
  kind_path(p, n, dir, q, s->kind == RL_KIND_LOCKSTEP ? ".lock" : "");
}

static int run_lockstep(const char *dir, const rl_point *q, rl_sim_args *sa) {
  char path[4096];
  kind_path(path, sizeof path, dir, q, "");
  int st = rl_study_sim_to(sa, q->f32, path);
  if (st) return st;
  rl_sim_args mj = *sa;
  mj.engine = "mujoco";
  kind_path(path, sizeof path, dir, q, ".mj");
  if ((st = rl_study_sim_to(&mj, 0, path))) return st;
  kind_path(path, sizeof path, dir, q, ".lock");
  rl_csv w;
  if (rl_study_open_csv(&w, path, 0, sa)) return RL_EXIT_BADINPUT;
  st = q->f32 ? rl32_study_lockstep(sa) : rl64_study_lockstep(sa);
  return rl_study_finish_csv(&w, st);
}

int rl_lockstep_run_point(const char *dir, const rl_spec *s, const rl_point *q, rl_sim_args *sa) {
  char path[4096], why[512];
  if (s->kind == RL_KIND_LOCKSTEP) return run_lockstep(dir, q, sa);
  if (rl_study_point_absent(s, q, why, sizeof why)) { /* the runner does not launch these */
    rl_errorf("run: %s: %s", q->id, why);
    return RL_EXIT_BADINPUT;
  }
  kind_path(path, sizeof path, dir, q, "");
  return rl_study_sim_to(sa, q->f32, path);
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

static int metrics_lockstep(rl_csv *w, const char *dir, const rl_spec *s, const rl_point *q, char *err, int errlen) {
  char path[4096];
  int nrow, ncol;
  double *v;
  kind_path(path, sizeof path, dir, q, ".lock");
  if (rl_numcsv_read(path, NULL, &nrow, &ncol, &v, err, errlen)) return -1;
  rl_traj t, ref;
  kind_path(path, sizeof path, dir, q, "");
  if (rl_traj_read(path, &t, err, errlen)) {
    free(v);
    return -1;
  }
  kind_path(path, sizeof path, dir, q, ".mj");
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
  free(r);
  free(v);
  rl_traj_free(&t);
  rl_traj_free(&ref);
  return 0;
}

int rl_lockstep_metrics(rl_csv *w, const char *dir, const rl_spec *s, const rl_point *q, char *err, int errlen) {
  if (s->kind == RL_KIND_LOCKSTEP) return metrics_lockstep(w, dir, s, q, err, errlen);
  return 0; /* device: a cpu point has nothing to be compared with; cuda points are absent on this build */
}
