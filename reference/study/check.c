/* check.c — `rigidlab check RESULTS [--baseline DIR] [--update-baseline]`: every metric of every
 * study in RESULTS against its baseline (BASELINE/STUDY/metrics.csv) and the band the study's spec
 * sets in [check]:
 *   abs T    |v − b| ≤ T
 *   rel T    |v − b| ≤ T·|b|
 *   ratio R  b/R ≤ v ≤ R·b  (b = 0: v = 0)
 * The bands are two-sided: a metric that moves either way has moved.  Each violation is one line
 * naming study, point, metric, value, band and the first step from which the metric's running value
 * (runner.h: rl_metric_series) stays outside the band.  Exit 1 on any violation. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "csv.h"
#include "runner.h"
#include "spec.h"
#include "study_lockstep.h"

typedef struct mrow {
  char point[512], metric[64], text[64]; /* text: the value as written */
  double value;
  int line;
} mrow;

/* metrics.csv (csv.h's reader) → rows (point, metric, value); −1 on error.  Every value must be a number
   (the whole cell); with FINITE also finite (a baseline, or a file about to become one). */
static int read_metrics(const char *path, int finite, mrow **rows, int *n, char *err, int errlen) {
  static const char *const cols[8] = {"study", "point", "engine", "precision", "dt", "metric", "value", "step"};
  *rows = NULL;
  *n = 0;
  rl_table t;
  if (rl_table_load(&t, path, err, errlen)) return -1;
  for (int c = 0; c < 8; c++)
    if (c >= t.ncol || strcmp(t.hdr[c], cols[c])) {
      rl_table_free(&t);
      rl_snprintf(err, (size_t)errlen, "%s:1: not a metrics.csv (study,point,engine,precision,dt,metric,value,step)",
                  path);
      return -1;
    }
  *rows = malloc(sizeof **rows * (size_t)(t.nrow ? t.nrow : 1));
  for (int r = 0; r < t.nrow; r++) {
    mrow *m = &(*rows)[(*n)++];
    rl_snprintf(m->point, sizeof m->point, "%s", rl_table_cell(&t, r, 1));
    rl_snprintf(m->metric, sizeof m->metric, "%s", rl_table_cell(&t, r, 5));
    rl_snprintf(m->text, sizeof m->text, "%s", rl_table_cell(&t, r, 6));
    m->line = t.line[r];
    int bad = rl_table_num(&t, r, 6, &m->value, err, errlen);
    if (!bad && finite && !isfinite(m->value)) {
      rl_snprintf(err, (size_t)errlen, "%s:%d: column 'value': '%s' is not a finite number (point %s, metric %s)", path,
                  m->line, m->text, m->point, m->metric);
      bad = 1;
    }
    if (bad) {
      free(*rows);
      *rows = NULL;
      *n = 0;
      rl_table_free(&t);
      return -1;
    }
  }
  rl_table_free(&t);
  return 0;
}

static int exists_file(const char *p) {
  struct stat sb;
  return !stat(p, &sb);
}

static int inside(const rl_band *b, double base, double v) {
  if (b->kind == RL_BAND_MAX) return v <= b->tol; /* false for NaN */
  if (isnan(base) || isnan(v)) return isnan(base) && isnan(v);
  double d = fabs(v - base);
  switch (b->kind) {
  case RL_BAND_ABS: return d <= b->tol;
  case RL_BAND_REL: return d <= b->tol * fabs(base);
  default:
    if (base == 0) return v == 0;
    return v / base >= 1 / b->tol && v / base <= b->tol;
  }
}

static void describe(char *s, size_t n, const rl_band *b, double base) {
  switch (b->kind) {
  case RL_BAND_ABS:
    rl_snprintf(s, n, "abs %g of baseline %.6g = [%.6g, %.6g]", b->tol, base, base - b->tol, base + b->tol);
    break;
  case RL_BAND_MAX: rl_snprintf(s, n, "max %g (baseline %.6g)", b->tol, base); break;
  case RL_BAND_REL:
    rl_snprintf(s, n, "rel %g of baseline %.6g = [%.6g, %.6g]", b->tol, base, base - b->tol * fabs(base),
                base + b->tol * fabs(base));
    break;
  default:
    rl_snprintf(s, n, "ratio %g of baseline %.6g = [%.6g, %.6g]", b->tol, base,
                base >= 0 ? base / b->tol : base * b->tol, base >= 0 ? base * b->tol : base / b->tol);
  }
}

/* the first step from which the running metric stays outside the band; −1 when unknown */
static long first_step(const char *dir, const rl_point *pts, int n, const char *point, int metric, const rl_band *b,
                       double base) {
  int i = 0;
  while (i < n && strcmp(pts[i].id, point)) i++;
  if (i == n) return -1;
  char p[4200], err[1024];
  rl_traj t, ref;
  rl_snprintf(p, sizeof p, "%s/traj_%s.csv", dir, pts[i].id);
  if (rl_traj_read(p, &t, err, sizeof err)) return -1;
  int have_ref = 0;
  if (pts[i].ref >= 0) {
    rl_snprintf(p, sizeof p, "%s/traj_%s.csv", dir, pts[pts[i].ref].id);
    have_ref = !rl_traj_read(p, &ref, err, sizeof err);
  }
  double *r = malloc(sizeof(double) * (size_t)t.nrow);
  long step = -1;
  if (!rl_metric_series(metric, &t, have_ref ? &ref : NULL, r)) {
    /* the side it left on (above or below the band), then back while the running value stays beyond it */
    int k = t.nrow, above = r[k - 1] > base;
    while (k > 0 && !inside(b, base, r[k - 1]) && (isnan(r[k - 1]) || (r[k - 1] > base) == above)) k--;
    if (k < t.nrow) step = (long)t.v[(size_t)k * (size_t)t.ncol + (size_t)t.c_step];
  }
  free(r);
  rl_traj_free(&t);
  if (have_ref) rl_traj_free(&ref);
  return step;
}

/* BASELINE/NAME/metrics.csv ← DIR/metrics.csv, whole (csv.h: through a temporary, renamed) */
static int update_baseline(const char *dir, const char *bdir, const char *name) {
  char from[4200], to[4200], d[4200], err[8600];
  rl_snprintf(d, sizeof d, "%s/%s", bdir, name);
  rl_snprintf(from, sizeof from, "%s/metrics.csv", dir);
  rl_snprintf(to, sizeof to, "%s/metrics.csv", d);
  /* a baseline holds numbers only: a corrupt or non-finite value is refused before anything is written */
  mrow *rows;
  int nrows;
  if (read_metrics(from, 1, &rows, &nrows, err, sizeof err)) {
    rl_errorf("check: --update-baseline: %s (baseline not written)", err);
    return RL_EXIT_BADINPUT;
  }
  free(rows);
  if (rl_mkdirs(d)) {
    rl_errorf("check: %s: cannot create: %s", d, strerror(errno));
    return RL_EXIT_BADINPUT;
  }
  size_t n;
  char *text = rl_file_read(from, &n, err, sizeof err);
  if (!text || rl_file_write(to, text, n, err, sizeof err)) {
    free(text);
    rl_errorf("check: %s (the baseline from %s)", err, from);
    return RL_EXIT_BADINPUT;
  }
  free(text);
  fprintf(stderr, "check %s: baseline rewritten: %s\n", name, to);
  return 0;
}

/* order of (point, metric): rows sorted by it are found by bisection (a point × metric pair is unique) */
static int cmp_key(const mrow *x, const char *point, const char *metric) {
  int c = strcmp(x->point, point);
  return c ? c : strcmp(x->metric, metric);
}
static int cmp_mrow(const void *a, const void *b) {
  const mrow *y = b;
  return cmp_key(a, y->point, y->metric);
}

/* index of the row with (point, metric) in rows sorted by cmp_mrow, −1 when absent: O(log n) */
static int find_row(const mrow *rows, int n, const char *point, const char *metric) {
  int lo = 0, hi = n - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2, c = cmp_key(&rows[mid], point, metric);
    if (!c) return mid;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

static int check_study(const char *dir, const rl_check_args *a, int *nviol, int *nchecked) {
  char p[4200], err[1024];
  const char *name = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
  rl_spec s;
  rl_snprintf(p, sizeof p, "%s/spec.ini", dir);
  if (rl_spec_load_text_only(p, &s, err, sizeof err)) {
    rl_errorf("check: %s", err);
    return RL_EXIT_BADINPUT;
  }
  name = s.name;
  if (a->update) {
    int st = update_baseline(dir, a->baseline, name);
    rl_spec_free(&s);
    return st;
  }
  char note[1200];
  if (rl_study_absent_note(dir, note, sizeof note)) printf("%s: %s (not compared)\n", name, note);
  rl_point *pts = NULL;
  int n = rl_spec_expand(&s, &pts, err, sizeof err);
  mrow *res = NULL, *base = NULL;
  int nres, nbase, st = 0;
  rl_snprintf(p, sizeof p, "%s/metrics.csv", dir);
  if (n < 0 || read_metrics(p, 0, &res, &nres, err, sizeof err)) {
    rl_errorf("check: %s", err);
    st = RL_EXIT_BADINPUT;
    goto out;
  }
  rl_snprintf(p, sizeof p, "%s/%s/metrics.csv", a->baseline, name);
  if (!exists_file(p)) {
    rl_errorf("check: %s: no baseline (create it with 'rigidlab check %s --update-baseline')", p, a->results);
    st = RL_EXIT_BADINPUT;
    goto out;
  }
  if (read_metrics(p, 1, &base, &nbase, err, sizeof err)) {
    rl_errorf("check: baseline %s", err);
    st = RL_EXIT_BADINPUT;
    goto out;
  }
  /* both sides sorted by (point, metric), so matching is n log n; the report keeps the baseline's order */
  if (nres > 1) qsort(res, (size_t)nres, sizeof *res, cmp_mrow);
  mrow *base_sorted = malloc(sizeof *base * (size_t)(nbase > 0 ? nbase : 1));
  if (!base_sorted) {
    rl_errorf("check: out of memory for %d baseline rows", nbase);
    st = RL_EXIT_BADINPUT;
    goto out;
  }
  if (nbase > 0) memcpy(base_sorted, base, sizeof *base * (size_t)nbase);
  if (nbase > 1) qsort(base_sorted, (size_t)nbase, sizeof *base, cmp_mrow);
  for (int i = 0; i < nbase; i++) {
    int m = rl_metric_find(base[i].metric);
    const rl_band *b = m >= 0 ? rl_spec_band(&s, m) : NULL;
    if (!b) continue;
    int j = find_row(res, nres, base[i].point, base[i].metric);
    if (j < 0) {
      printf("%s %s %s: missing from the results (baseline %.6g)\n", name, base[i].point, base[i].metric,
             base[i].value);
      ++*nviol;
      continue;
    }
    ++*nchecked;
    if (!isfinite(res[j].value)) {
      printf("%s %s %s = %s (%s/metrics.csv:%d): not a finite number\n", name, base[i].point, base[i].metric,
             res[j].text, dir, res[j].line);
      ++*nviol;
      continue;
    }
    if (inside(b, base[i].value, res[j].value)) continue;
    char band[256];
    describe(band, sizeof band, b, base[i].value);
    long step = first_step(dir, pts, n, base[i].point, m, b, base[i].value);
    char where[64] = "";
    if (step >= 0) rl_snprintf(where, sizeof where, "; out of band from step %ld", step);
    printf("%s %s %s = %.6g outside band %s%s\n", name, base[i].point, base[i].metric, res[j].value, band, where);
    ++*nviol;
  }
  /* configurations the baseline does not know */
  for (int j = 0; j < nres; j++) {
    int m = rl_metric_find(res[j].metric);
    if (m < 0 || !rl_spec_band(&s, m)) continue;
    if (find_row(base_sorted, nbase, res[j].point, res[j].metric) < 0) {
      printf("%s %s %s = %.6g: not in the baseline (new configuration? --update-baseline)\n", name, res[j].point,
             res[j].metric, res[j].value);
      ++*nviol;
    }
  }
  free(base_sorted);
out:
  free(res);
  free(base);
  if (pts) rl_spec_free_points(pts, n);
  rl_spec_free(&s);
  return st;
}

int rl_check(const rl_check_args *a) {
  /* every study folder in the tree under RESULTS (RESULTS itself when it is one) */
  char **dirs, err[4400];
  int nsearched, nd = rl_results_find(a->results, &dirs, &nsearched, err, sizeof err);
  if (nd < 0) {
    rl_errorf("check: %s", err);
    return RL_EXIT_BADINPUT;
  }
  if (nd == 0) {
    rl_errorf("check: %s: no results: no metrics.csv in it or in the %d folder(s) below it", a->results, nsearched - 1);
    return RL_EXIT_BADINPUT;
  }
  int nviol = 0, nchecked = 0;
  for (int i = 0; i < nd; i++) {
    int st = check_study(dirs[i], a, &nviol, &nchecked);
    if (st) {
      rl_results_free(dirs, nd);
      return st;
    }
  }
  rl_results_free(dirs, nd);
  fflush(stdout);
  if (a->update) return 0;
  fprintf(stderr, "check: %d metric(s) compared, %d outside their bands\n", nchecked, nviol);
  return nviol ? RL_EXIT_FAIL : 0;
}
