/* bench.c — kind = bench (spec.h): `rigidlab bench` on each point's scene and precision: each smooth-dynamics
 * stage, collision and the whole constrained step of rigidlab against MuJoCo's equivalent, alternating in one
 * process (../bench.c).  The spec's stages, engines, reps and steps are bench's --stages, --engines, --reps and
 * --steps (bench's defaults where not given); scene = chain:N1+N2+… times the synthetic hinge chains of
 * `bench chain:N1,N2,…` and fits the scaling exponent.  Points run one at a time (timings).
 *   Worker: traj_ID.bench.csv, bench's rows (model,engine,precision,stage,ns_per_step,mujoco_ns_per_step,ratio).
 *   Metrics: ratio_<stage>_<engine> per row (chains: ratio_<chain>); chains also chain_exponent,
 *   mujoco_chain_exponent and their _stderr: the least-squares slope p of log t vs log links (time ∝ links^p,
 *   gsl_fit_linear, as bench prints it), for rigidlab and MuJoCo.  Timings: the bands are wide.
 *   Study file: bench_<scene>.csv per scene (bench_chains.csv for chains), the scene's points' rows in point
 *   order, what `rigidlab report` draws. */
#include <gsl/gsl_fit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "csv.h"
#include "kinds.h"

static int is_chain(const rl_point *q) { return !strncmp(q->scene, "chain:", 6); }

static int bench_run(const char *dir, const rl_spec *s, const rl_point *q, rl_sim_args *sa) {
  char path[4096], model[1024];
  rl_bench_args a;
  memset(&a, 0, sizeof a);
  a.c = sa->c;
  a.c.quiet = 1;
  /* chain:8+16 is bench's chain:8,16 (a spec's scene list is comma-separated) */
  rl_snprintf(model, sizeof model, "%s", q->scene);
  for (char *c = model; *c; c++)
    if (*c == '+') *c = ',';
  a.c.model = model;
  a.steps = s->steps > 0 ? s->steps : 0;
  a.reps = s->reps;
  a.engines = s->engines[0] ? s->engines : NULL;
  a.stages = s->stages[0] ? s->stages : NULL;
  rl_study_file(path, sizeof path, dir, q, ".bench");
  rl_csv w;
  rl_sim_args tmp = *sa;
  if (rl_study_open_csv(&w, path, 0, &tmp)) return RL_EXIT_BADINPUT;
  a.c.out = &w;
  a.c.csv = path;
  int r = q->f32 ? rl32_cmd_bench(&a) : rl64_cmd_bench(&a);
  return rl_study_finish_csv(&w, r);
}

/* slope p and its standard error of log y vs log x (n ≥ 3), else NaN */
static void fit_exponent(const double *x, const double *y, int n, double *p, double *se) {
  double c0, c1, cov00, cov01, cov11, sumsq;
  *p = *se = NAN;
  if (n < 3) return;
  gsl_fit_linear(x, 1, y, 1, (size_t)n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
  *p = c1;
  *se = sqrt(cov11);
}

static int bench_metrics(rl_csv *w, const char *dir, const rl_spec *s, const rl_point *pts, const rl_point *q,
                         char *err, int errlen) {
  (void)pts;
  char path[4096], name[256];
  rl_table t;
  rl_study_file(path, sizeof path, dir, q, ".bench");
  if (rl_table_load(&t, path, err, errlen)) return -1;
  int cm = rl_table_col(&t, "model"), ce = rl_table_col(&t, "engine"), cs = rl_table_col(&t, "stage"),
      co = rl_table_col(&t, "ns_per_step"), cj = rl_table_col(&t, "mujoco_ns_per_step"), cr = rl_table_col(&t, "ratio");
  if (cm < 0 || ce < 0 || cs < 0 || co < 0 || cj < 0 || cr < 0) {
    rl_snprintf(err, (size_t)errlen, "%s: not a bench CSV (model,engine,precision,stage,ns_per_step,...)", path);
    rl_table_free(&t);
    return -1;
  }
  double dt = 0; /* a synthetic chain has no MJCF time step */
  if (!is_chain(q) && isnan(dt = rl_study_point_dt(q, err, errlen))) {
    rl_table_free(&t);
    return -1;
  }
  int chain = is_chain(q), n = 0;
  double *lx = malloc(sizeof(double) * (size_t)(t.nrow + 1)), *lo = malloc(sizeof(double) * (size_t)(t.nrow + 1)),
         *lm = malloc(sizeof(double) * (size_t)(t.nrow + 1));
  for (int r = 0; r < t.nrow; r++) {
    char **row = t.cell + (size_t)r * (size_t)t.ncol;
    if (chain) rl_snprintf(name, sizeof name, "ratio_%s", row[cm]);
    else rl_snprintf(name, sizeof name, "ratio_%s_%s", row[cs], row[ce]);
    rl_study_row(w, s, q, dt, name, strtod(row[cr], NULL), r + 1); /* the step column: the CSV line after the header */
    if (chain && !strncmp(row[cm], "chain", 5)) {
      lx[n] = log(strtod(row[cm] + 5, NULL));
      lo[n] = log(strtod(row[co], NULL));
      lm[n++] = log(strtod(row[cj], NULL));
    }
  }
  if (chain) {
    double p, se, pm, sem;
    fit_exponent(lx, lo, n, &p, &se);
    fit_exponent(lx, lm, n, &pm, &sem);
    if (rl_study_wants(s, RL_MET_CHAIN_EXPONENT)) rl_study_row(w, s, q, dt, "chain_exponent", p, n);
    rl_study_row(w, s, q, dt, "chain_exponent_stderr", se, n);
    if (rl_study_wants(s, RL_MET_MUJOCO_CHAIN_EXPONENT)) rl_study_row(w, s, q, dt, "mujoco_chain_exponent", pm, n);
    rl_study_row(w, s, q, dt, "mujoco_chain_exponent_stderr", sem, n);
  }
  free(lx);
  free(lo);
  free(lm);
  rl_table_free(&t);
  return 0;
}

/* DIR/bench_<scene>.csv (bench_chains.csv): the header once, the scene's points' rows in point order */
static int bench_collect(const char *dir, const rl_spec *s, const rl_point *pts, const int *mine, int n, char *err,
                         int errlen) {
  (void)s;
  for (int k = 0; k < n; k++) {
    const rl_point *q = &pts[mine[k]];
    int first = 1;
    for (int j = 0; j < k; j++) first &= pts[mine[j]].scene != q->scene;
    if (!first) continue;
    char path[4096];
    rl_csv w;
    rl_snprintf(path, sizeof path, "%s/bench_%s.csv", dir, is_chain(q) ? "chains" : q->scene_name);
    if (rl_csv_open(&w, path, 0, err, errlen)) return -1;
    for (int j = k, hdr = 1; j < n; j++) {
      const rl_point *p = &pts[mine[j]];
      if (p->scene != q->scene) continue;
      rl_table t;
      char in[4096];
      rl_study_file(in, sizeof in, dir, p, ".bench");
      if (rl_table_load(&t, in, err, errlen)) {
        rl_csv_abort(&w);
        return -1;
      }
      for (int r = hdr ? -1 : 0; r < t.nrow; r++) { /* r = −1: the header */
        for (int c = 0; c < t.ncol; c++) rl_csv_str(&w, r < 0 ? t.hdr[c] : rl_table_cell(&t, r, c));
        rl_csv_end_row(&w);
      }
      hdr = 0;
      rl_table_free(&t);
    }
    if (rl_csv_close(&w, err, errlen)) return -1;
  }
  return 0;
}

/* bench times rigidlab against MuJoCo itself: no mujoco points, no dt or option axes (bench's own state) */
static int bench_check(rl_spec *s, char *err, int errlen) {
  for (int a = 0; a < s->naxes; a++)
    if (strcmp(s->axis[a].key, "precision")) {
      rl_snprintf(err, (size_t)errlen,
                  "%s:%d: [sweep] %s: kind = bench sweeps the precision only (engines = and "
                  "stages = in [experiment] choose what it times)",
                  s->path, s->axis[a].line, s->axis[a].key);
      return -1;
    }
  return 0;
}

const rl_study_kind rl_kind_bench = {
    .name = "bench",
    .keys = RL_KEY_STAGES | RL_KEY_ENGINES | RL_KEY_REPS,
    .flags = RL_KIND_SERIAL | RL_KIND_NO_LENGTH | RL_KIND_CHAIN_SCENES,
    .check = bench_check,
    .run = bench_run,
    .done = ".bench",
    .metrics = bench_metrics,
    .collect = bench_collect,
};
