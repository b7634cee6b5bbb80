/* verify.c — kind = verify (spec.h): `rigidlab verify --precision both` on each point's scene with the
 * point's options (e.g. the sweep's cone), against MuJoCo on the same states.
 *   Worker: traj_ID.verify.csv, verify's rows (model,precision,stage,quantity,max_abs_err,max_rel_err,
 *   tolerance,pass), f64 then f32: 100 states, every stage, seed = the spec's seed.  A scene named in
 *   rows_only (e.g. the 1000-sphere pile, whose dense 6000-dof M comparison and solve take seconds per state)
 *   covers only the collision stage, on 10 states, solved by CG with 1 iteration (its smooth stages are free
 *   bodies, checked on the other scenes; its constraint rows cannot be compared: MuJoCo 2.2.2 allocates
 *   njmax × nv and njmax² arrays, so the scene's njmax stays below the rows of its states and verify counts
 *   every such state in left_out_capacity — the contact rows are compared on the other contact scenes).
 *   Metrics: verify_failed_rows_f64 / _f32 (the rows outside their tolerance, pass = 0) and
 *   verify_worst_ratio_f64 / _f32 (the largest max_rel_err / tolerance over the rows that bound something: a
 *   fraction row whose tolerance is 1, such as step compared_at_optimum, is a tally and bounds nothing); step =
 *   the states verified.
 *   Study file: verify.csv, every point's rows with the model column MODEL.xml@V1@V2… (the values of the
 *   point's option axes, e.g. box_stack.xml@elliptic), what `rigidlab report` draws. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "csv.h"
#include "kinds.h"
#include "quantities.h"

#define VERIFY_STATES    100
#define ROWS_ONLY_STATES 10

static int rows_only(const rl_spec *s, const rl_point *q) {
  for (int i = 0; i < s->nrows_only; i++)
    if (!strcmp(s->rows_only[i], q->scene_name)) return 1;
  return 0;
}

/* both precisions into one CSV, as `verify --precision both` writes it; exit 1 (rows outside their tolerance)
   is a result, not a failure of the point */
static int verify_run(const char *dir, const rl_spec *s, const rl_point *q, rl_sim_args *sa) {
  char path[4096];
  rl_verify_args a;
  memset(&a, 0, sizeof a);
  a.c = sa->c;
  a.c.quiet = 1;
  a.states = VERIFY_STATES;
  a.seed = s->seed;
  a.stages = (1u << RL_NSTAGE) - 1;
  if (rows_only(s, q)) {
    a.states = ROWS_ONLY_STATES;
    a.stages = 1u << RL_STAGE_COLLISION;
    if (a.c.nopts + 2 <= RL_MAX_OPTS) {
      a.c.opts[a.c.nopts++] = "solver=cg";
      a.c.opts[a.c.nopts++] = "iterations=1";
    }
  }
  rl_study_file(path, sizeof path, dir, q, ".verify");
  rl_csv w;
  rl_sim_args tmp = *sa;
  if (rl_study_open_csv(&w, path, 0, &tmp)) return RL_EXIT_BADINPUT;
  a.c.out = &w;
  a.c.csv = path;
  int r = rl64_cmd_verify(&a);
  if (r != RL_EXIT_BADINPUT) {
    int r2 = rl32_cmd_verify(&a);
    if (r2 > r) r = r2;
  }
  return rl_study_finish_csv(&w, r == RL_EXIT_BADINPUT ? r : 0);
}

/* per precision: the failed rows and the largest max_rel_err / tolerance */
static int verify_metrics(rl_csv *w, const char *dir, const rl_spec *s, const rl_point *pts, const rl_point *q,
                          char *err, int errlen) {
  (void)pts;
  char path[4096];
  rl_table t;
  rl_study_file(path, sizeof path, dir, q, ".verify");
  if (rl_table_load(&t, path, err, errlen)) return -1;
  int cp = rl_table_col(&t, "precision"), cr = rl_table_col(&t, "max_rel_err");
  int ct = rl_table_col(&t, "tolerance"), cs = rl_table_col(&t, "pass"), cq = rl_table_col(&t, "quantity");
  if (cp < 0 || cr < 0 || ct < 0 || cs < 0 || cq < 0) {
    rl_snprintf(err, (size_t)errlen, "%s: not a verify CSV (model,precision,stage,quantity,...,pass)", path);
    rl_table_free(&t);
    return -1;
  }
  double failed[2] = {0, 0}, worst[2] = {0, 0};
  for (int r = 0; r < t.nrow; r++) {
    int p = !strcmp(rl_table_cell(&t, r, cp), "f32");
    double rel = strtod(rl_table_cell(&t, r, cr), NULL), tol = strtod(rl_table_cell(&t, r, ct), NULL);
    failed[p] += !strcmp(rl_table_cell(&t, r, cs), "0");
    const rl_vq_info *info = rl_vq_info_find(rl_table_cell(&t, r, cq));
    int tally = info && info->kind == RL_VQK_FRACTION && tol >= 1;
    if (tol > 0 && !tally && (rel / tol > worst[p] || isnan(rel))) worst[p] = rel / tol;
  }
  rl_table_free(&t);
  double dt = rl_study_point_dt(q, err, errlen);
  if (isnan(dt)) return -1;
  long states = rows_only(s, q) ? ROWS_ONLY_STATES : VERIFY_STATES;
  static const int mf[2] = {RL_MET_VERIFY_FAILED_F64, RL_MET_VERIFY_FAILED_F32};
  static const int mw[2] = {RL_MET_VERIFY_WORST_F64, RL_MET_VERIFY_WORST_F32};
  for (int p = 0; p < 2; p++) {
    if (rl_study_wants(s, mf[p])) rl_study_row(w, s, q, dt, rl_metric_names[mf[p]], failed[p], states);
    if (rl_study_wants(s, mw[p])) rl_study_row(w, s, q, dt, rl_metric_names[mw[p]], worst[p], states);
  }
  return 0;
}

/* DIR/verify.csv: the header once, then each point's rows with MODEL.xml@V1@V2… in the model column */
static int verify_collect(const char *dir, const rl_spec *s, const rl_point *pts, const int *mine, int n, char *err,
                          int errlen) {
  (void)s;
  char path[4096];
  rl_csv w;
  rl_snprintf(path, sizeof path, "%s/verify.csv", dir);
  if (rl_csv_open(&w, path, 0, err, errlen)) return -1;
  for (int k = 0; k < n; k++) {
    const rl_point *q = &pts[mine[k]];
    rl_table t;
    char p[4096], model[1024];
    rl_study_file(p, sizeof p, dir, q, ".verify");
    if (rl_table_load(&t, p, err, errlen)) {
      rl_csv_abort(&w);
      return -1;
    }
    for (int r = k ? 0 : -1; r < t.nrow; r++) { /* r = −1: the header */
      char **row = r < 0 ? t.hdr : t.cell + (size_t)r * (size_t)t.ncol;
      for (int c = 0; c < t.ncol; c++) {
        if (c == 0 && r >= 0) {
          rl_snprintf(model, sizeof model, "%s", row[0]);
          for (int o = 0; o < q->nopts; o++) {
            const char *eq = strchr(q->opts[o], '=');
            rl_snprintf(model + strlen(model), sizeof model - strlen(model), "@%s", eq ? eq + 1 : q->opts[o]);
          }
          rl_csv_str(&w, model);
        } else rl_csv_str(&w, row[c]);
      }
      rl_csv_end_row(&w);
    }
    rl_table_free(&t);
  }
  return rl_csv_close(&w, err, errlen);
}

/* rows_only names scenes of the spec; MuJoCo is the reference of every point (engine is not an axis here) */
static int verify_check(rl_spec *s, char *err, int errlen) {
  int line = 0;
  if (rl_spec_axis_find(s, "engine", &line) >= 0 || rl_spec_axis_find(s, "precision", &line) >= 0 ||
      rl_spec_axis_find(s, "dt", &line) >= 0) {
    rl_snprintf(err, (size_t)errlen,
                "%s:%d: [sweep] kind = verify sweeps model and solver options only (it checks "
                "every stage in f64 and f32 against MuJoCo at the model's time step)",
                s->path, line);
    return -1;
  }
  for (int i = 0; i < s->nrows_only; i++) {
    int found = 0;
    for (int k = 0; k < s->nscene && !found; k++) {
      const char *b = strrchr(s->scene[k], '/');
      b = b ? b + 1 : s->scene[k];
      size_t l = strlen(s->rows_only[i]);
      found = !strncmp(b, s->rows_only[i], l) && (!strcmp(b + l, ".xml") || !b[l]);
    }
    if (!found) {
      rl_snprintf(err, (size_t)errlen,
                  "%s:%d: rows_only: '%s' is not one of the spec's scenes (a scene's file name "
                  "without .xml)",
                  s->path, s->rows_only_line, s->rows_only[i]);
      return -1;
    }
  }
  return 0;
}

const rl_study_kind rl_kind_verify = {
    .name = "verify",
    .keys = RL_KEY_ROWS_ONLY,
    .flags = RL_KIND_BOTH_PRECISIONS | RL_KIND_NO_LENGTH,
    .check = verify_check,
    .run = verify_run,
    .done = ".verify",
    .metrics = verify_metrics,
    .collect = verify_collect,
};
