/* check.c — `rigidlab check RESULTS [--baseline DIR] [--update-baseline]`: every metric of every
 * study in RESULTS against its baseline (BASELINE/STUDY/metrics.csv) and the band the study's spec
 * sets in [check]:
 *   abs T    |v − b| ≤ T
 *   rel T    |v − b| ≤ T·|b|
 *   ratio R  b/R ≤ v ≤ R·b  (b = 0: v = 0)
 * The bands are two-sided: a metric that moves either way has moved.  Each violation is one line
 * naming study, point, metric, value, band and the first step from which the metric's running value
 * (runner.h: rl_metric_series) stays outside the band.  Exit 1 on any violation. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "runner.h"
#include "spec.h"
#include "study_lockstep.h"

typedef struct mrow {
  char point[512], metric[64];
  double value;
} mrow;

/* metrics.csv → rows (point, metric, value); −1 on error */
static int read_metrics(const char *path, mrow **rows, int *n, char *err, int errlen) {
  FILE *f = fopen(path, "r");
  *rows = NULL;
  *n = 0;
  if (!f) {
    rl_snprintf(err, (size_t)errlen, "%s: cannot read: %s", path, strerror(errno));
    return -1;
  }
  char *line = NULL;
  size_t cap = 0;
  int capr = 0, lineno = 0;
  while (getline(&line, &cap, f) > 0) {
    if (lineno++ == 0) {
      if (strncmp(line, "study,point,engine,precision,dt,metric,value,step", 49)) goto bad;
      continue;
    }
    char *fld[10];
    int k = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, ",\n", &save); t && k < 10; t = strtok_r(NULL, ",\n", &save)) fld[k++] = t;
    if (k < 8) goto bad;
    if (*n == capr) *rows = realloc(*rows, sizeof **rows * (size_t)(capr = capr ? 2 * capr : 256));
    mrow *r = &(*rows)[(*n)++];
    rl_snprintf(r->point, sizeof r->point, "%s", fld[1]);
    rl_snprintf(r->metric, sizeof r->metric, "%s", fld[5]);
    r->value = strtod(fld[6], NULL);
  }
  free(line);
  fclose(f);
  return 0;
bad:
  free(line);
  fclose(f);
  free(*rows);
  *rows = NULL;
  rl_snprintf(err, (size_t)errlen, "%s:%d: not a metrics.csv (study,point,engine,precision,dt,metric,value,step)", path,
           lineno);
  return -1;
}

static int inside(const rl_band *b, double base, double v) {
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
  case RL_BAND_ABS: rl_snprintf(s, n, "abs %g of baseline %.6g = [%.6g, %.6g]", b->tol, base, base - b->tol, base + b->tol); break;
  case RL_BAND_REL:
    rl_snprintf(s, n, "rel %g of baseline %.6g = [%.6g, %.6g]", b->tol, base, base - b->tol * fabs(base), base + b->tol * fabs(base));
    break;
  default:
    rl_snprintf(s, n, "ratio %g of baseline %.6g = [%.6g, %.6g]", b->tol, base, base >= 0 ? base / b->tol : base * b->tol,
             base >= 0 ? base * b->tol : base / b->tol);
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


static int update_baseline(const char *dir, const char *bdir, const char *name) {
  char from[4200], to[4200], tmp[4300], d[4200];
  rl_snprintf(d, sizeof d, "%s/%s", bdir, name);
  if (rl_mkdirs(d)) {
    rl_errorf("check: %s: cannot create: %s", d, strerror(errno));
    return RL_EXIT_BADINPUT;
  }
  rl_snprintf(from, sizeof from, "%s/metrics.csv", dir);
  rl_snprintf(to, sizeof to, "%s/metrics.csv", d);
  rl_snprintf(tmp, sizeof tmp, "%s.tmp.%ld", to, (long)getpid());
  FILE *in = fopen(from, "rb"), *out = in ? fopen(tmp, "wb") : NULL;
  char buf[65536];
  size_t k;
  int bad = !in || !out;
  while (!bad && (k = fread(buf, 1, sizeof buf, in)) > 0) bad = fwrite(buf, 1, k, out) != k;
  if (in) fclose(in);
  if (out && fclose(out)) bad = 1;
  if (bad || rename(tmp, to)) {
    unlink(tmp);
    rl_errorf("check: %s: cannot write the baseline from %s", to, from);
    return RL_EXIT_BADINPUT;
  }
  fprintf(stderr, "check %s: baseline rewritten: %s\n", name, to);
  return 0;
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
  if (n < 0 || read_metrics(p, &res, &nres, err, sizeof err)) {
    rl_errorf("check: %s", err);
    st = RL_EXIT_BADINPUT;
    goto out;
  }
  rl_snprintf(p, sizeof p, "%s/%s/metrics.csv", a->baseline, name);
  if (read_metrics(p, &base, &nbase, err, sizeof err)) {
    rl_errorf("check: %s (create it with 'rigidlab check %s --update-baseline')", err, a->results);
    st = RL_EXIT_BADINPUT;
    goto out;
  }
  for (int i = 0; i < nbase; i++) {
    int m = rl_metric_find(base[i].metric);
    const rl_band *b = m >= 0 ? rl_spec_band(&s, m) : NULL;
    if (!b) continue;
    int j = 0;
    while (j < nres && (strcmp(res[j].point, base[i].point) || strcmp(res[j].metric, base[i].metric))) j++;
    if (j == nres) {
      printf("%s %s %s: missing from the results (baseline %.6g)\n", name, base[i].point, base[i].metric, base[i].value);
      ++*nviol;
      continue;
    }
    ++*nchecked;
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
    int m = rl_metric_find(res[j].metric), i = 0;
    if (m < 0 || !rl_spec_band(&s, m)) continue;
    while (i < nbase && (strcmp(res[j].point, base[i].point) || strcmp(res[j].metric, base[i].metric))) i++;
    if (i == nbase) {
      printf("%s %s %s = %.6g: not in the baseline (new configuration? --update-baseline)\n", name, res[j].point,
             res[j].metric, res[j].value);
      ++*nviol;
    }
  }
out:
  free(res);
  free(base);
  if (pts) rl_spec_free_points(pts, n);
  rl_spec_free(&s);
  return st;
}

static int cmp_str(const void *x, const void *y) { return strcmp(x, y); }

int rl_check(const rl_check_args *a) {
  char p[4200];
  rl_snprintf(p, sizeof p, "%s/metrics.csv", a->results);
  struct stat sb;
  static char dirs[256][4096];
  int nd = 0;
  if (!stat(p, &sb)) rl_snprintf(dirs[nd++], 4096, "%s", a->results);
  else {
    /* RESULTS holds study folders */
    DIR *d = opendir(a->results);
    struct dirent *e;
    while (d && (e = readdir(d)) && nd < 256) {
      if (e->d_name[0] == '.') continue;
      rl_snprintf(p, sizeof p, "%s/%s/metrics.csv", a->results, e->d_name);
      if (!stat(p, &sb)) rl_snprintf(dirs[nd++], 4096, "%s/%s", a->results, e->d_name);
    }
    if (d) closedir(d);
    qsort(dirs, (size_t)nd, sizeof dirs[0], cmp_str);
  }
  if (nd <= 0) {
    rl_errorf("check: %s: no results (no metrics.csv in it or its subfolders)", a->results);
    return RL_EXIT_BADINPUT;
  }
  int nviol = 0, nchecked = 0;
  for (int i = 0; i < nd; i++) {
    int st = check_study(dirs[i], a, &nviol, &nchecked);
    if (st) return st;
  }
  fflush(stdout);
  if (a->update) return 0;
  fprintf(stderr, "check: %d metric(s) compared, %d outside their bands\n", nchecked, nviol);
  return nviol ? RL_EXIT_FAIL : 0;
}
