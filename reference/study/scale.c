/* scale.c — kind = scale (spec.h): the whole step of every solver on the synthetic scenes of scale_scene.h
 * (scene = spheres:N1+N2+…, boxes:…, links:…) as N grows, with MuJoCo's mj_step beside (../scale.c).
 * The spec's engines = picks the solvers (newton_dense, newton_skyline, newton_sparse, newton_auto, cg, avbd,
 * mujoco; default all), steps = the steps timed per solver and N.  Points run one at a time (timings).
 *   Worker: traj_ID.scale.csv (model,n,nv,solver,ms_per_step,nefc_max,iter_mean,arena_bytes,cholmod_bytes,
 *   qacc_rel_dense,status), one row per N and solver; a solver skipped or refused has its reason in status.
 *   Metrics: exponent_<solver> and _stderr: the least-squares slope p of log(ms/step) vs log N over the
 *   solver's timed sizes (≥ 3, gsl_fit_linear); scale_exponent_newton (= newton_auto's), scale_exponent_cg;
 *   ms_<solver>_N<n>, arena_bytes_<solver>_N<n>; sparse_dense_qacc_rel: the worst relative q̈ difference of the
 *   sparse and dense factorizations over the sizes where both ran (f64; f32: sparse_dense_qacc_rel_f32, not
 *   gated: the sparse factor is in double there); scale_nefc_max: the most rows
 *   newton_auto's steps made at the largest N.  Timings are not reproducible: only the exponents (wide
 *   bands) and the deterministic q̈ agreement and row count are gated.
 *   Study file: scale_<family>.csv per scene, what `rigidlab report` draws. */
#include <gsl/gsl_fit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "csv.h"
#include "kinds.h"
#include "scale_scene.h"

/* the nv caps of the dense factorizations (rigidlab's dense Newton, MuJoCo 2.2.2's): O(nv³) per factorization,
   seconds per step from ~1500 dofs on; MuJoCo's memory cap for its njmax-sized arrays */
#define SCALE_DENSE_MAX_NV  1500
#define SCALE_MUJOCO_MAX_NV 3000
#define SCALE_MUJOCO_MAX_GB 4.0

static int scale_run(const char *dir, const rl_spec *s, const rl_point *q, rl_sim_args *sa) {
  char path[4096];
  rl_scale_args a;
  memset(&a, 0, sizeof a);
  a.c = sa->c;
  a.c.quiet = 1;
  a.c.model = q->scene;
  a.steps = s->steps > 0 ? s->steps : 0;
  a.solvers = s->engines[0] ? s->engines : NULL;
  a.dense_max_nv = SCALE_DENSE_MAX_NV;
  a.mujoco_max_nv = SCALE_MUJOCO_MAX_NV;
  a.mujoco_max_gb = SCALE_MUJOCO_MAX_GB;
  rl_study_file(path, sizeof path, dir, q, ".scale");
  rl_csv w;
  rl_sim_args tmp = *sa;
  if (rl_study_open_csv(&w, path, 0, &tmp)) return RL_EXIT_BADINPUT;
  a.c.out = &w;
  a.c.csv = path;
  int r = q->f32 ? rl32_cmd_scale(&a) : rl64_cmd_scale(&a);
  return rl_study_finish_csv(&w, r);
}

static const char *const solvers[] = {"newton_dense", "newton_skyline", "newton_sparse", "newton_auto",
                                      "cg",           "avbd",           "mujoco"};
#define NSOLVERS (int)(sizeof solvers / sizeof solvers[0])

/* slope p and its standard error of log y vs log x (n ≥ 3), else NaN */
static void fit_exponent(const double *x, const double *y, int n, double *p, double *se) {
  double c0, c1, cov00, cov01, cov11, sumsq;
  *p = *se = NAN;
  if (n < 3) return;
  gsl_fit_linear(x, 1, y, 1, (size_t)n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
  *p = c1;
  *se = sqrt(cov11);
}

static int scale_metrics(rl_csv *w, const char *dir, const rl_spec *s, const rl_point *pts, const rl_point *q,
                         char *err, int errlen) {
  (void)pts;
  char path[4096], name[256];
  rl_table t;
  rl_study_file(path, sizeof path, dir, q, ".scale");
  if (rl_table_load(&t, path, err, errlen)) return -1;
  int cn = rl_table_col(&t, "n"), cs = rl_table_col(&t, "solver"), cm = rl_table_col(&t, "ms_per_step"),
      ce = rl_table_col(&t, "nefc_max"), ca = rl_table_col(&t, "arena_bytes"), cq = rl_table_col(&t, "qacc_rel_dense"),
      cst = rl_table_col(&t, "status");
  if (cn < 0 || cs < 0 || cm < 0 || ce < 0 || ca < 0 || cq < 0 || cst < 0) {
    rl_snprintf(err, (size_t)errlen, "%s: not a scale CSV (model,n,nv,solver,ms_per_step,...)", path);
    rl_table_free(&t);
    return -1;
  }
  double *lx = malloc(sizeof(double) * (size_t)(t.nrow + 1)), *ly = malloc(sizeof(double) * (size_t)(t.nrow + 1));
  double qrel = NAN, nefc = NAN, nmax = 0;
  for (int k = 0; k < NSOLVERS; k++) {
    int n = 0;
    for (int r = 0; r < t.nrow; r++) {
      if (strcmp(rl_table_cell(&t, r, cs), solvers[k])) continue;
      double N = strtod(rl_table_cell(&t, r, cn), NULL), ms = strtod(rl_table_cell(&t, r, cm), NULL);
      double ar = strtod(rl_table_cell(&t, r, ca), NULL), qr = strtod(rl_table_cell(&t, r, cq), NULL);
      int ok = !strcmp(rl_table_cell(&t, r, cst), "ok") && ms > 0;
      if (ok) {
        rl_snprintf(name, sizeof name, "ms_%s_N%.0f", solvers[k], N);
        rl_study_row(w, s, q, 0, name, ms, r + 1);
        rl_snprintf(name, sizeof name, "arena_bytes_%s_N%.0f", solvers[k], N);
        rl_study_row(w, s, q, 0, name, ar, r + 1);
        lx[n] = log(N);
        ly[n++] = log(ms);
      }
      if (!isnan(qr)) qrel = isnan(qrel) ? qr : fmax(qrel, qr);
      if (!strcmp(solvers[k], "newton_auto") && ok && N >= nmax) {
        nmax = N;
        nefc = strtod(rl_table_cell(&t, r, ce), NULL);
      }
    }
    double p, se;
    fit_exponent(lx, ly, n, &p, &se);
    if (n == 0) continue;
    rl_snprintf(name, sizeof name, "exponent_%s", solvers[k]);
    rl_study_row(w, s, q, 0, name, p, n);
    rl_snprintf(name, sizeof name, "exponent_%s_stderr", solvers[k]);
    rl_study_row(w, s, q, 0, name, se, n);
    if (!strcmp(solvers[k], "newton_auto") && rl_study_wants(s, RL_MET_SCALE_EXPONENT_NEWTON))
      rl_study_row(w, s, q, 0, "scale_exponent_newton", p, n);
    if (!strcmp(solvers[k], "cg") && rl_study_wants(s, RL_MET_SCALE_EXPONENT_CG))
      rl_study_row(w, s, q, 0, "scale_exponent_cg", p, n);
  }
  /* f32: the sparse factor is in double, the dense one in float: their difference is f32's, not gated */
  if (!isnan(qrel) && q->f32) rl_study_row(w, s, q, 0, "sparse_dense_qacc_rel_f32", qrel, 0);
  else if (!isnan(qrel) && rl_study_wants(s, RL_MET_SPARSE_DENSE_QACC_REL))
    rl_study_row(w, s, q, 0, "sparse_dense_qacc_rel", qrel, 0);
  if (!isnan(nefc) && rl_study_wants(s, RL_MET_SCALE_NEFC_MAX)) rl_study_row(w, s, q, 0, "scale_nefc_max", nefc, 0);
  free(lx);
  free(ly);
  rl_table_free(&t);
  return 0;
}

/* DIR/scale_<family>_<precision>.csv: the point's rows (what the report draws) */
static int scale_collect(const char *dir, const rl_spec *s, const rl_point *pts, const int *mine, int n, char *err,
                         int errlen) {
  (void)s;
  for (int k = 0; k < n; k++) {
    const rl_point *q = &pts[mine[k]];
    char in[4096], out[4096], family[32];
    rl_snprintf(family, sizeof family, "%s", q->scene);
    char *colon = strchr(family, ':');
    if (colon) *colon = 0;
    rl_study_file(in, sizeof in, dir, q, ".scale");
    rl_snprintf(out, sizeof out, "%s/scale_%s_%s.csv", dir, family, q->f32 ? "f32" : "f64");
    rl_table t;
    if (rl_table_load(&t, in, err, errlen)) return -1;
    rl_csv w;
    if (rl_csv_open(&w, out, 0, err, errlen)) {
      rl_table_free(&t);
      return -1;
    }
    for (int r = -1; r < t.nrow; r++) { /* r = −1: the header */
      for (int c = 0; c < t.ncol; c++) rl_csv_str(&w, r < 0 ? t.hdr[c] : rl_table_cell(&t, r, c));
      rl_csv_end_row(&w);
    }
    rl_table_free(&t);
    if (rl_csv_close(&w, err, errlen)) return -1;
  }
  return 0;
}

/* scale scenes only; the precision is the only axis (every solver is timed inside a point) */
static int scale_check(rl_spec *s, char *err, int errlen) {
  for (int i = 0; i < s->nscene; i++)
    if (!rl_scale_is_scene(s->scene[i])) {
      rl_snprintf(err, (size_t)errlen,
                  "%s:%d: scene '%s': kind = scale takes spheres:N1+N2+..., boxes:... or links:...", s->path,
                  s->scene_line, s->scene[i]);
      return -1;
    }
  for (int a = 0; a < s->naxes; a++)
    if (strcmp(s->axis[a].key, "precision")) {
      rl_snprintf(err, (size_t)errlen,
                  "%s:%d: [sweep] %s: kind = scale sweeps the precision only (engines = in [experiment] picks the "
                  "solvers)",
                  s->path, s->axis[a].line, s->axis[a].key);
      return -1;
    }
  if (s->engines[0]) {
    char buf[512];
    rl_snprintf(buf, sizeof buf, "%s", s->engines);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
      int ok = 0;
      for (int k = 0; k < NSOLVERS; k++) ok |= !strcmp(t, solvers[k]);
      if (!ok) {
        rl_snprintf(err, (size_t)errlen,
                    "%s:%d: engines: '%s' is not a scale solver (allowed: newton_dense, newton_skyline, newton_sparse, "
                    "newton_auto, cg, avbd, mujoco)",
                    s->path, s->engines_line, t);
        return -1;
      }
    }
  }
  return 0;
}

const rl_study_kind rl_kind_scale = {
    .name = "scale",
    .keys = RL_KEY_ENGINES,
    .flags = RL_KIND_SERIAL | RL_KIND_NO_LENGTH | RL_KIND_SCALE_SCENES,
    .check = scale_check,
    .run = scale_run,
    .done = ".scale",
    .metrics = scale_metrics,
    .collect = scale_collect,
};
