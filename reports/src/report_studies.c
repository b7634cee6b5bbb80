/* report_studies.c — the `rigidlab run` studies of a results directory (DIR/studies/<name>/, see
 * report_studies.h): plots, a summary.md section and LaTeX tables from each study's metrics.csv (tidy:
 * study,point,engine,precision,dt,metric,value,step,index), meta.csv and spec.ini, plus the per-point CSVs a
 * plot needs (the fp32 trajectories, the lock-step errors).  The plot follows the study's kind:
 *   convergence  residual vs iteration, log y: one panel per metric family NAME_it<k> (k on x)
 *   refinement   error vs step size, log–log: families NAME_L<k> against their dt, with the fitted slope
 *   fp32, device divergence vs time: max |Δqpos| between the two runs of a point per row, log y
 *   lockstep     one-step error vs time (traj_ID.lock.csv), log y; and the maxima as bars
 *   speed        time per step rigidlab/MuJoCo as bars per scene, parity line at 1
 *   scale        time per step vs N, log–log, one line per solver with its fitted exponent (scale_*.csv)
 *   residuals, analytic, trajectory   the metrics as bars per scene, log y
 * Values ≤ 0 on a log axis are drawn at the axis floor (1e-17) and said so in the key. */
#include "report_studies.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_FLOOR        1e-17
#define MAX_ROWS_PLOTTED 400

/* the study kind from spec.ini's `kind = …` line (trajectory when absent) */
static void read_kind(const char *dir, char *kind, size_t n, char *desc, size_t dn) {
  char p[4400], line[1024];
  snprintf(kind, n, "trajectory");
  desc[0] = 0;
  rp_path_in(p, sizeof p, dir, "spec.ini");
  FILE *f = fopen(p, "r");
  if (!f) return;
  while (fgets(line, sizeof line, f)) {
    char key[64], val[900];
    if (line[0] == ';' || line[0] == '#') continue;
    if (sscanf(line, " %63[a-z_] = %899[^\r\n]", key, val) != 2) continue;
    if (!strcmp(key, "kind")) snprintf(kind, n, "%.*s", (int)n - 1, val);
    else if (!strcmp(key, "description")) snprintf(desc, dn, "%.*s", (int)dn - 1, val);
  }
  fclose(f);
}

static int load_one(rs_study *s, const char *dir) {
  memset(s, 0, sizeof *s);
  const char *name = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
  snprintf(s->name, sizeof s->name, "%s", name);
  snprintf(s->dir, sizeof s->dir, "%s", dir);
  read_kind(s->dir, s->kind, sizeof s->kind, s->description, sizeof s->description);
  char p[4400];
  rp_path_in(p, sizeof p, s->dir, "metrics.csv");
  int st = rp_table_load(&s->m, p);
  if (st) return st;
  const char *need[] = {"point", "engine", "precision", "dt", "metric", "value"};
  int *cols[] = {&s->c_point, &s->c_engine, &s->c_prec, &s->c_dt, &s->c_metric, &s->c_value};
  for (int i = 0; i < 6; i++)
    if ((st = rp_need_col(&s->m, need[i], cols[i]))) return st;
  for (int r = 0; r < s->m.nrow; r++) {
    double x;
    if ((st = rp_num(&s->m, r, s->c_value, &x)) || (st = rp_num(&s->m, r, s->c_dt, &x))) return st;
  }
  rp_path_in(p, sizeof p, s->dir, "meta.csv");
  if (!access(p, F_OK)) {
    if ((st = rp_table_load(&s->meta, p))) return st;
    if (s->meta.ncol < 2 || rp_col(&s->meta, "key") != 0 || rp_col(&s->meta, "value") != 1)
      return rp_fail("%s: header is not key,value", p);
    s->has_meta = 1;
  }
  return 0;
}

/* every study folder in the tree under DIR (csv.h: rl_results_find), by path */
int rs_load(const char *dir, rs_studies *S, int *nsearched) {
  memset(S, 0, sizeof *S);
  char **dirs, err[4400];
  int n = rl_results_find(dir, &dirs, nsearched, err, sizeof err);
  if (n < 0) return rp_fail("%s", err);
  S->s = rp_xrealloc(NULL, sizeof *S->s * (size_t)(n + 1));
  int st = 0;
  for (int i = 0; i < n && !st; i++) {
    st = load_one(&S->s[i], dirs[i]);
    S->n = i + 1;
    for (int j = 0; j < i && !st; j++) /* plots are named after the study */
      if (!strcmp(S->s[j].name, S->s[i].name))
        st = rp_fail("%s and %s: two studies named '%s' in one report (merge shards first: rigidlab merge)",
                     S->s[j].dir, S->s[i].dir, S->s[i].name);
  }
  rl_results_free(dirs, n);
  return st;
}

void rs_free(rs_studies *S) {
  for (int i = 0; i < S->n; i++) {
    rp_table_free(&S->s[i].m);
    rp_table_free(&S->s[i].meta);
  }
  free(S->s);
  memset(S, 0, sizeof *S);
}

/* ---------- the metrics of a study ---------- */

static const char *M(const rs_study *s, int r, int c) { return rp_cell(&s->m, r, c); }
static double V(const rs_study *s, int r) { return strtod(M(s, r, s->c_value), NULL); }

/* NAME<digits> at the end after SEP ("_it", "_L"): the family NAME and the index; 0 when not */
static int family_of(const char *metric, const char *sep, char *fam, size_t n, int *k) {
  const char *p = strstr(metric, sep);
  if (!p) return 0;
  const char *last = p;
  while ((p = strstr(p + 1, sep))) last = p;
  const char *d = last + strlen(sep);
  if (!*d) return 0;
  for (const char *c = d; *c; c++)
    if (*c < '0' || *c > '9') return 0;
  snprintf(fam, n, "%.*s", (int)(last - metric), metric);
  *k = atoi(d);
  return 1;
}

/* a metric that is one number per point (not a member of a per-iteration or per-level family) */
static int scalar_metric(const char *metric) {
  char fam[128];
  int k;
  return !family_of(metric, "_it", fam, sizeof fam, &k) && !family_of(metric, "it", fam, sizeof fam, &k) &&
         !family_of(metric, "_L", fam, sizeof fam, &k);
}

/* the scene of a point id (its first dot-separated field) and the rest (the label within a scene) */
static void split_point(const char *id, char *scene, size_t ns, char *rest, size_t nr) {
  const char *dot = strchr(id, '.');
  if (!dot) {
    snprintf(scene, ns, "%s", id);
    snprintf(rest, nr, "%s", id);
    return;
  }
  snprintf(scene, ns, "%.*s", (int)(dot - id), id);
  snprintf(rest, nr, "%s", dot + 1);
}

/* the short key label of LABEL among the labels of its panel (rp_short_label) */
static const char *short_of(const char *label, const strlist *panel, char *buf, size_t n) {
  rp_short_label(label, (const char *const *)panel->s, panel->n, buf, n);
  return buf;
}

static void lists_of(const rs_study *s, strlist *points, strlist *scenes, strlist *scalars) {
  char sc[256], rest[512];
  for (int r = 0; r < s->m.nrow; r++) {
    rp_sl_add(points, M(s, r, s->c_point));
    split_point(M(s, r, s->c_point), sc, sizeof sc, rest, sizeof rest);
    rp_sl_add(scenes, sc);
    if (scalar_metric(M(s, r, s->c_metric))) rp_sl_add(scalars, M(s, r, s->c_metric));
  }
}

/* the row of POINT × METRIC, −1 when absent */
static int find_row(const rs_study *s, const char *point, const char *metric) {
  for (int r = 0; r < s->m.nrow; r++)
    if (!strcmp(M(s, r, s->c_point), point) && !strcmp(M(s, r, s->c_metric), metric)) return r;
  return -1;
}

static double on_log(double v) { return v > LOG_FLOOR ? v : LOG_FLOOR; }

/* ---------- plots ---------- */

typedef struct {
  const rs_study *s;
  const char *base;
} plot_arg;

/* what a per-iteration family measures (the runner's names, study_run.c / study_kinds.h): a panel title, and
   a short one for panels that also name their scene */
static const char *family_title_of(const char *fam, int brief) {
  static const char *const known[][3] = {
      {"gap", "relative cost gap (cost(a_k) - cost(a*)) / |cost(a*)|, a* = LAPACK optimum",
       "relative cost gap to the LAPACK optimum"},
      {"grad", "rigidlab scaled gradient", "rigidlab scaled gradient"},
      {"mj_grad", "MuJoCo's scaled gradient (mjSolverStat)", "MuJoCo's scaled gradient"},
      {"avbd_dist_m", "AVBD iterate's distance to the dense KKT reference step, positions (m)",
       "distance to the KKT step, positions (m)"},
      {"avbd_dist_rad", "the same, orientations (rad)", "distance to the KKT step, orientations (rad)"},
      {"avbd_stat_force", "AVBD KKT stationarity, force rows (N)", "KKT stationarity, force rows (N)"},
      {"avbd_stat_torque", "AVBD KKT stationarity, torque rows (N m)", "KKT stationarity, torque rows (N m)"},
      {"avbd_primal_m", "AVBD primal residual, length rows (m)", "primal residual, length rows (m)"},
      {"avbd_primal_rad", "AVBD primal residual, angle rows (rad)", "primal residual, angle rows (rad)"}};
  for (size_t i = 0; i < sizeof known / sizeof *known; i++)
    if (!strcmp(fam, known[i][0])) return known[i][brief ? 2 : 1];
  return fam;
}
static const char *family_title(const char *fam) { return family_title_of(fam, 0); }

/* the most series one panel carries before a plot is split into one panel per scene */
#define MAX_SERIES_PER_PANEL 6

/* convergence: families NAME_it<k> (value vs k, log y).  One panel per family with a line per point; when
   that would be more than MAX_SERIES_PER_PANEL lines, one panel per family and scene (rows: families,
   columns: scenes).  Colour: engine; dash: precision and cone; marker: the family. */
static void body_iter(const void *ctx, FILE *f, const void *arg) {
  (void)ctx;
  const plot_arg *a = arg;
  const rs_study *s = a->s;
  strlist fams = {0}, points = {0}, scenes = {0};
  char fam[128], sc[256], rest[512];
  int k;
  for (int r = 0; r < s->m.nrow; r++)
    if (family_of(M(s, r, s->c_metric), "_it", fam, sizeof fam, &k)) {
      rp_sl_add(&fams, fam);
      rp_sl_add(&points, M(s, r, s->c_point));
      split_point(M(s, r, s->c_point), sc, sizeof sc, rest, sizeof rest);
      rp_sl_add(&scenes, sc);
    }
  int split = points.n > MAX_SERIES_PER_PANEL && scenes.n > 1;
  rp_gp_begin(f, a->base, "residual vs iteration");
  for (int fi = 0; fi < fams.n; fi++)
    for (int p = 0; p < points.n; p++) {
      fprintf(f, "$d%d_%d << EOD\n", fi, p);
      int any = 0;
      for (int r = 0; r < s->m.nrow; r++)
        if (!strcmp(M(s, r, s->c_point), points.s[p]) && family_of(M(s, r, s->c_metric), "_it", fam, sizeof fam, &k) &&
            !strcmp(fam, fams.s[fi])) {
          fprintf(f, "%d ", k);
          rp_gp_num(f, on_log(V(s, r)));
          fputc('\n', f);
          any = 1;
        }
      if (!any) fprintf(f, "NaN NaN\n");
      fprintf(f, "EOD\n");
    }
  int npanel = split ? fams.n * scenes.n : fams.n;
  int cols = split ? scenes.n : fams.n > 1 ? 2 : 1, rows = npanel ? (npanel + cols - 1) / cols : 1;
  rp_gp_loop(f, a->base, split ? 700 * cols : 1400, 520 * rows + 60);
  fprintf(f,
          "set multiplot layout %d,%d title \"%s: residual vs iteration (max over the states of each point; <= %g "
          "drawn at %g)\"\n",
          rows, cols, s->name, LOG_FLOOR, LOG_FLOOR);
  /* the key under each panel (two columns, bottom margin sized to it), so the panels keep their width */
  fprintf(f, "set logscale y\nset format y \"1e%%L\"\nset key outside below center box opaque font \",10\" maxcols 2\n");
  for (int fi = 0; fi < fams.n; fi++)
    for (int c = 0; c < (split ? scenes.n : 1); c++) {
      if (split) fprintf(f, "set title \"%s: %s\"\n", scenes.s[c], family_title_of(fams.s[fi], 1));
      else fprintf(f, "set title \"%s\"\n", family_title(fams.s[fi]));
      fprintf(f, "set xlabel \"iteration k\"\nset ylabel \"%s (log scale)\"\n", fams.s[fi]);
      strlist panel = {0};
      for (int p = 0; p < points.n; p++) {
        split_point(points.s[p], sc, sizeof sc, rest, sizeof rest);
        if (!split || !strcmp(sc, scenes.s[c])) rp_sl_add(&panel, split ? rest : points.s[p]);
      }
      fprintf(f, "set bmargin %d\n", 6 + (panel.n + 1) / 2);
      int j = 0;
      for (int p = 0; p < points.n; p++) {
        split_point(points.s[p], sc, sizeof sc, rest, sizeof rest);
        if (split && strcmp(sc, scenes.s[c])) continue;
        char sh[256];
        const char *lab = split ? rest : points.s[p];
        int dup = rp_dup_rank(lab, (const char *const *)panel.s, panel.n);
        fprintf(f, "%s $d%d_%d using 1:2 with linespoints lw 1.5 pt %d ps 0.7 lc rgb \"%s\" dt %d title \"%s\"",
                j ? ", \\\n    " : "plot", fi, p, rp_measure_point_dup(fams.s[fi], dup), rp_series_color(points.s[p]),
                rp_line_dash_dup(rp_variant(points.s[p]), dup), short_of(lab, &panel, sh, sizeof sh));
        j++;
      }
      rp_sl_free(&panel);
      if (!j) fprintf(f, "plot NaN notitle");
      fprintf(f, "\n");
    }
  if (!fams.n) fprintf(f, "plot NaN notitle\n");
  fprintf(f, "unset multiplot\n");
  rp_gp_end(f);
  rp_sl_free(&fams);
  rp_sl_free(&points);
  rp_sl_free(&scenes);
}

/* the points of scene's panel (the rest of each series' point id, "POINT\tMEASURE"), each once, into *panel;
   returns the panel's series count */
static int refine_panel(const strlist *series, const char *scene, strlist *panel) {
  int n = 0;
  for (int i = 0; i < series->n; i++) {
    char pt[512], sc[256], rest[512];
    sscanf(series->s[i], "%511[^\t]", pt);
    split_point(pt, sc, sizeof sc, rest, sizeof rest);
    if (!strcmp(sc, scene)) rp_sl_add(panel, rest), n++;
  }
  return n;
}

/* 1 if the panel has one point whose name is too long for the key (over 24 characters: it names the panel
   instead, refine_panel_title) */
static int refine_lone_long(const strlist *panel) { return panel->n == 1 && strlen(panel->s[0]) > 24; }

/* legend title of a fitted series: "SHORT MEASURE, fit slope S" (no slope where the fit failed; no SHORT where
   the panel's title names its one point) */
static void study_fit_title(char *title, size_t n, const strlist *panel, const char *rest, const char *fm,
                            double slope) {
  char sh[256] = "";
  if (!refine_lone_long(panel)) short_of(rest, panel, sh, sizeof sh);
  int k = snprintf(title, n, "%s%s%s", sh, sh[0] ? " " : "", fm);
  if (isfinite(slope) && k >= 0 && (size_t)k < n) snprintf(title + k, n - (size_t)k, ", fit slope %.3f", slope);
}

/* a refinement panel's title: its scene, and its one point where that name is too long for the key */
static void refine_panel_title(FILE *f, const char *scene, const strlist *panel) {
  if (refine_lone_long(panel)) fprintf(f, "set title \"%s: %s\"\n", scene, panel->s[0]);
  else fprintf(f, "set title \"%s\"\n", scene);
}

/* refinement: families NAME_L<k> vs their dt, log–log, one panel per scene; per point and family the
   measured errors (colour: engine, marker: the family) and the least-squares power law through them
   (gsl_fit_linear on log10; its slope, the observed order, in the key) */
static void body_refine(const void *ctx, FILE *f, const void *arg) {
  (void)ctx;
  const plot_arg *a = arg;
  const rs_study *s = a->s;
  strlist series = {0}, scenes = {0};
  char fam[128], key[700], sc[256], rest[512];
  int k;
  for (int r = 0; r < s->m.nrow; r++)
    if (family_of(M(s, r, s->c_metric), "_L", fam, sizeof fam, &k)) {
      snprintf(key, sizeof key, "%s\t%s", M(s, r, s->c_point), fam);
      rp_sl_add(&series, key);
      split_point(M(s, r, s->c_point), sc, sizeof sc, rest, sizeof rest);
      rp_sl_add(&scenes, sc);
    }
  rp_gp_begin(f, a->base, "error vs step size");
  double *sl = rp_xrealloc(NULL, sizeof(double) * (size_t)(series.n + 1)),
         *ic = rp_xrealloc(NULL, sizeof(double) * (size_t)(series.n + 1));
  double hmin = INFINITY, hmax = 0;
  strlist hs = {0}; /* the step sizes, as the x tics */
  for (int i = 0; i < series.n; i++) {
    double x[64], y[64];
    int n = 0;
    fprintf(f, "$s%d << EOD\n", i);
    for (int r = 0; r < s->m.nrow && n < 64; r++) {
      if (!family_of(M(s, r, s->c_metric), "_L", fam, sizeof fam, &k)) continue;
      snprintf(key, sizeof key, "%s\t%s", M(s, r, s->c_point), fam);
      if (strcmp(key, series.s[i])) continue;
      x[n] = strtod(M(s, r, s->c_dt), NULL);
      y[n] = V(s, r);
      if (x[n] > 0 && x[n] < hmin) hmin = x[n];
      if (x[n] > hmax) hmax = x[n];
      rp_sl_add(&hs, M(s, r, s->c_dt));
      fprintf(f, "%.9g ", x[n]);
      rp_gp_num(f, on_log(y[n]));
      fputc('\n', f);
      n++;
    }
    fprintf(f, "EOD\n");
    double r2;
    rp_fit(x, y, n, &sl[i], &ic[i], &r2);
  }
  int cols = scenes.n > 3 ? 3 : scenes.n ? scenes.n : 1, rows = scenes.n ? (scenes.n + cols - 1) / cols : 1;
  rp_gp_loop(f, a->base, 660 * cols, 700 * rows + 60);
  fprintf(f,
          "set multiplot layout %d,%d title \"%s: error vs step size h (log-log); lines: least-squares power law, "
          "slope = observed order\"\n",
          rows, cols, s->name);
  fprintf(f, "set xlabel \"step size h (ms, log scale)\"\nset ylabel \"error max |q - q_ref| (m or rad, "
             "log scale)\"\n");
  /* the key under each panel (two columns), so the panels keep the width; ticks at the step sizes, in ms */
  fprintf(f,
          "set logscale xy\nset format y \"1e%%L\"\nset key outside below center box opaque font \",10\" maxcols 2\n");
  /* the bottom margin holds the tick labels, the x label and the key: two columns where the longest title fits
     twice in the 660-pixel panel (≈ 6.5 px a character at font 10, 60 px of sample and gap), else one; the same
     margin on every panel so their axes line up (gnuplot's own estimate left an opaque key over the x label) */
  int nmax = 1;
  size_t lmax = 0;
  for (int c = 0; c < scenes.n; c++) {
    strlist panel = {0};
    int n_in = refine_panel(&series, scenes.s[c], &panel);
    for (int i = 0; i < series.n; i++) {
      char pt[512], fm[128], title[800];
      sscanf(series.s[i], "%511[^\t]\t%127s", pt, fm);
      split_point(pt, sc, sizeof sc, rest, sizeof rest);
      if (strcmp(sc, scenes.s[c])) continue;
      study_fit_title(title, sizeof title, &panel, rest, fm, sl[i]);
      if (strlen(title) > lmax) lmax = strlen(title);
    }
    if (n_in > nmax) nmax = n_in;
    rp_sl_free(&panel);
  }
  int kcols = 2 * (6.5 * (double)lmax + 60) <= 640 ? 2 : 1;
  fprintf(f, "set key maxcols %d\nset bmargin %d\n", kcols, 5 + (nmax + kcols - 1) / kcols);
  if (hmax > 0) fprintf(f, "set xrange [%g:%g]\n", hmin / 1.5, hmax * 1.5);
  /* three significant digits: eight halvings from 4 ms give labels like 0.0156 that still fit side by side */
  if (hs.n) {
    fprintf(f, "set xtics (");
    for (int i = 0; i < hs.n; i++) {
      double h = strtod(hs.s[i], NULL);
      fprintf(f, "%s\"%.3g\" %.9g", i ? ", " : "", h * 1e3, h);
    }
    fprintf(f, ")\n");
  }
  rp_sl_free(&hs);
  for (int c = 0; c < scenes.n; c++) {
    strlist panel = {0};
    refine_panel(&series, scenes.s[c], &panel);
    refine_panel_title(f, scenes.s[c], &panel);
    int j = 0;
    for (int i = 0; i < series.n; i++) {
      char pt[512], fm[128];
      sscanf(series.s[i], "%511[^\t]\t%127s", pt, fm);
      split_point(pt, sc, sizeof sc, rest, sizeof rest);
      if (strcmp(sc, scenes.s[c])) continue;
      const char *col = rp_series_color(pt);
      char title[800];
      study_fit_title(title, sizeof title, &panel, rest, fm, sl[i]);
      int dup = rp_dup_rank(rest, (const char *const *)panel.s, panel.n);
      fprintf(f, "%s $s%d using 1:2 with points pt %d ps 1.4 lc rgb \"%s\" title \"%s\"", j ? ", \\\n    " : "plot", i,
              rp_measure_point_dup(fm, dup), col, title);
      if (isfinite(sl[i]))
        fprintf(f, ", \\\n    10**(%.9g)*x**(%.9g) with lines lw 1.5 dt %d lc rgb \"%s\" notitle", ic[i], sl[i],
                rp_line_dash_dup(rp_variant(pt), dup), col);
      j++;
    }
    fprintf(f, "%s\n", j ? "" : "plot NaN notitle");
    rp_sl_free(&panel);
  }
  if (!scenes.n) fprintf(f, "plot NaN notitle\n");
  fprintf(f, "unset multiplot\n");
  rp_gp_end(f);
  free(sl);
  free(ic);
  rp_sl_free(&series);
  rp_sl_free(&scenes);
}

/* per-row series of a point's per-step CSV files, subsampled to ≤ MAX_ROWS_PLOTTED rows */
typedef struct {
  char label[512];
  int n;
  double *t, *y;
} series_t;

static void series_free(series_t *v, int n) {
  for (int i = 0; i < n; i++) {
    free(v[i].t);
    free(v[i].y);
  }
  free(v);
}

/* the divergence of a point's two trajectories (traj_ID.csv vs traj_ID.SUFFIX.csv): max_i |qpos_i − qpos'_i| per row */
static int divergence(const rs_study *s, const char *point, const char *suffix, series_t *out) {
  char p1[4700], p2[4700], nm[800];
  snprintf(nm, sizeof nm, "traj_%s.csv", point);
  rp_path_in(p1, sizeof p1, s->dir, nm);
  snprintf(nm, sizeof nm, "traj_%s.%s.csv", point, suffix);
  rp_path_in(p2, sizeof p2, s->dir, nm);
  if (access(p1, F_OK) || access(p2, F_OK)) return 1;
  table a, b;
  int st = rp_table_load(&a, p1);
  if (st) return st;
  if ((st = rp_table_load(&b, p2))) {
    rp_table_free(&a);
    return st;
  }
  int ct = rp_col(&a, "time");
  if (ct < 0) st = rp_fail("%s: no column 'time'", p1);
  int n = a.nrow < b.nrow ? a.nrow : b.nrow,
      stride = n > MAX_ROWS_PLOTTED ? (n + MAX_ROWS_PLOTTED - 1) / MAX_ROWS_PLOTTED : 1;
  out->t = rp_xrealloc(NULL, sizeof(double) * (size_t)(n / stride + 2));
  out->y = rp_xrealloc(NULL, sizeof(double) * (size_t)(n / stride + 2));
  out->n = 0;
  double worst = 0; /* the largest difference since the last drawn row: subsampling keeps the envelope */
  for (int r = 0; r < n && !st; r++) {
    for (int c = 0; c < a.ncol; c++) {
      if (strncmp(a.hdr[c], "qpos_", 5)) continue;
      int cb = rp_col(&b, a.hdr[c]);
      double x, y;
      if (cb < 0) {
        st = rp_fail("%s: no column '%s'", p2, a.hdr[c]);
        break;
      }
      if ((st = rp_num(&a, r, c, &x)) || (st = rp_num(&b, r, cb, &y))) break;
      double d = fabs(x - y);
      if (!(d <= worst)) worst = d;
    }
    if (st) break;
    if (r % stride == 0 || r == n - 1) {
      double t;
      if ((st = rp_num(&a, r, ct, &t))) break;
      out->t[out->n] = t;
      out->y[out->n++] = worst;
      worst = 0;
    }
  }
  rp_table_free(&a);
  rp_table_free(&b);
  return st;
}

/* a column of a point's per-step file traj_ID.SUFFIX.csv vs its time column (the largest value over each
   subsampled stretch) */
static int column_series(const rs_study *s, const char *point, const char *suffix, const char *colname, series_t *out) {
  char p[4700], nm[800];
  snprintf(nm, sizeof nm, "traj_%s.%s.csv", point, suffix);
  rp_path_in(p, sizeof p, s->dir, nm);
  if (access(p, F_OK)) return 1;
  table a;
  int st = rp_table_load(&a, p), ct, cy;
  if (st) return st;
  if ((st = rp_need_col(&a, "time", &ct)) || (st = rp_need_col(&a, colname, &cy))) {
    rp_table_free(&a);
    return st;
  }
  int n = a.nrow, stride = n > MAX_ROWS_PLOTTED ? (n + MAX_ROWS_PLOTTED - 1) / MAX_ROWS_PLOTTED : 1;
  out->t = rp_xrealloc(NULL, sizeof(double) * (size_t)(n / stride + 2));
  out->y = rp_xrealloc(NULL, sizeof(double) * (size_t)(n / stride + 2));
  out->n = 0;
  double worst = 0;
  for (int r = 0; r < n && !st; r++) {
    double y, t;
    if ((st = rp_num(&a, r, cy, &y))) break;
    if (!(y <= worst)) worst = y;
    if (r % stride == 0 || r == n - 1) {
      if ((st = rp_num(&a, r, ct, &t))) break;
      out->t[out->n] = t;
      out->y[out->n++] = worst;
      worst = 0;
    }
  }
  rp_table_free(&a);
  return st;
}

typedef struct {
  const rs_study *s;
  const char *base, *title, *ylabel;
  series_t *v;
  int n;
  const double *hlines; /* thresholds drawn as dashed lines (NaN-terminated), may be NULL */
} time_arg;

/* one panel per scene (the first dot-separated field of the series labels), one line per series */
static void body_time(const void *ctx, FILE *f, const void *arg) {
  (void)ctx;
  const time_arg *a = arg;
  strlist scenes = {0};
  char sc[256], rest[512];
  rp_gp_begin(f, a->base, a->title);
  for (int i = 0; i < a->n; i++) {
    split_point(a->v[i].label, sc, sizeof sc, rest, sizeof rest);
    rp_sl_add(&scenes, sc);
    fprintf(f, "$t%d << EOD\n", i);
    for (int k = 0; k < a->v[i].n; k++) {
      fprintf(f, "%.9g ", a->v[i].t[k]);
      rp_gp_num(f, on_log(a->v[i].y[k]));
      fputc('\n', f);
    }
    if (!a->v[i].n) fprintf(f, "NaN NaN\n");
    fprintf(f, "EOD\n");
  }
  int cols = scenes.n > 1 ? 2 : 1, rows = scenes.n ? (scenes.n + cols - 1) / cols : 1;
  rp_gp_loop(f, a->base, 1400, 430 * rows + 80);
  fprintf(f, "set multiplot layout %d,%d title \"%s: %s (<= %g drawn at %g)\"\n", rows, cols, a->s->name, a->title,
          LOG_FLOOR, LOG_FLOOR);
  fprintf(f, "set autoscale xfix\nset xlabel \"simulated time (s)\"\nset ylabel \"%s (log scale)\"\n", a->ylabel);
  /* the key under each panel (two columns, bottom margin sized to it), so the panels keep their width */
  fprintf(f, "set logscale y\nset format y \"1e%%L\"\nset key outside below center box opaque font \",10\" maxcols 2\n");
  for (int c = 0; c < scenes.n; c++) {
    fprintf(f, "set title \"%s\"\n", scenes.s[c]);
    strlist panel = {0};
    for (int i = 0; i < a->n; i++) {
      split_point(a->v[i].label, sc, sizeof sc, rest, sizeof rest);
      if (!strcmp(sc, scenes.s[c])) rp_sl_add(&panel, rest);
    }
    int j = 0;
    for (int i = 0; i < a->n; i++) {
      char sh[256];
      split_point(a->v[i].label, sc, sizeof sc, rest, sizeof rest);
      if (strcmp(sc, scenes.s[c])) continue;
      int dup = rp_dup_rank(rest, (const char *const *)panel.s, panel.n);
      fprintf(f, "%s $t%d using 1:2 with lines lw 1.5 lc rgb \"%s\" dt %d title \"%s\"", j ? ", \\\n    " : "plot", i,
              rp_series_color(rest), rp_line_dash_dup(rp_variant(rest), dup), short_of(rest, &panel, sh, sizeof sh));
      j++;
    }
    rp_sl_free(&panel);
    for (int h = 0; a->hlines && !isnan(a->hlines[h]); h++)
      fprintf(f, ", \\\n    %g with lines lw 1 dt %d lc rgb \"black\" title \"threshold %g\"", a->hlines[h], 2 + h,
              a->hlines[h]);
    fprintf(f, "\n");
  }
  if (!scenes.n) fprintf(f, "plot NaN notitle\n");
  fprintf(f, "unset multiplot\n");
  rp_gp_end(f);
  rp_sl_free(&scenes);
}

/* bars: one panel per metric (one quantity, so one unit, per axis); x = the scenes that have it, one bar
   per series (a point id without its scene: engine, precision, options) */
typedef struct {
  const rs_study *s;
  const char *base;
  const strlist *metrics; /* one panel each */
  int ratio;              /* time ratios: log y from 0.1 with a parity line at 1 (else errors: log y from 1e-17) */
  const char *title;
  int linear;             /* counts and fractions: linear y from 0 (no log axis, no 1e-17 floor) */
} bar_arg;

/* the unit of a bar metric (the y label of its panel) */
static const char *metric_unit(const char *m) {
  static const char *const units[][2] = {{"signorini_max", "W"},
                                         {"mdp_max", "W"},
                                         {"coulomb_max", "N"},
                                         {"ncp_max", "N or m/s"},
                                         {"penetration_max", "m"},
                                         {"anchor_err_max", "m"},
                                         {"incline_creep", "m/s"},
                                         {"free_qpos_err_max", "m or rad"},
                                         {"final_qpos_err", "m or rad"},
                                         {"qpos_err_max", "m or rad"},
                                         {"time_ratio", "rigidlab / MuJoCo"},
                                         {"avbd_false_stop_frac", "fraction of flagged steps"},
                                         {"avbd_flagged_steps", "steps"},
                                         {"avbd_own_false_stop_frac", "fraction of checked steps"},
                                         {"avbd_own_checked_steps", "steps"},
                                         {"avbd_own_unconverged_steps", "steps"}};
  for (size_t i = 0; i < sizeof units / sizeof *units; i++)
    if (!strcmp(m, units[i][0])) return units[i][1];
  return "relative"; /* the other error metrics are relative errors and drifts */
}

/* the scenes and the series (ids without the scene) that have metric M, in first-seen order */
static void metric_axes(const rs_study *s, const strlist *points, const char *m, strlist *scenes, strlist *series) {
  char sc[256], rest[512];
  for (int p = 0; p < points->n; p++) {
    if (find_row(s, points->s[p], m) < 0) continue;
    split_point(points->s[p], sc, sizeof sc, rest, sizeof rest);
    rp_sl_add(scenes, sc);
    rp_sl_add(series, rest);
  }
}

static void body_bars(const void *ctx, FILE *f, const void *arg) {
  (void)ctx;
  const bar_arg *a = arg;
  const rs_study *s = a->s;
  strlist points = {0}, allsc = {0}, unused = {0};
  lists_of(s, &points, &allsc, &unused);
  rp_sl_free(&unused);
  rp_sl_free(&allsc);
  char id[800];
  const double floor_v = a->linear ? 0 : a->ratio ? 0.1 : LOG_FLOOR;
  rp_gp_begin(f, a->base, "metrics per quantity");
  for (int m = 0; m < a->metrics->n; m++) {
    strlist scenes = {0}, series = {0};
    metric_axes(s, &points, a->metrics->s[m], &scenes, &series);
    double w = 0.8 / (series.n ? series.n : 1);
    for (int k = 0; k < series.n; k++) {
      fprintf(f, "$b%d_%d << EOD\n", m, k);
      for (int c = 0; c < scenes.n; c++) {
        snprintf(id, sizeof id, "%s.%s", scenes.s[c], series.s[k]);
        int r = find_row(s, id, a->metrics->s[m]);
        if (r < 0 && !strcmp(scenes.s[c], series.s[k]))
          r = find_row(s, scenes.s[c], a->metrics->s[m]); /* an id without dots */
        if (r < 0) continue;
        double x = c + 1 + (k - (series.n - 1) / 2.0) * w;
        fprintf(f, "%g ", x);
        double v = V(s, r);
        rp_gp_num(f, a->ratio || a->linear ? v : on_log(v));
        fprintf(f, " %g %g\n", x - w / 2 * 0.95, x + w / 2 * 0.95);
      }
      fprintf(f, "NaN NaN NaN NaN\nEOD\n");
    }
    rp_sl_free(&scenes);
    rp_sl_free(&series);
  }
  int n = a->metrics->n, cols = n > 1 ? 2 : 1, rows = n ? (n + cols - 1) / cols : 1;
  rp_gp_loop(f, a->base, n > 1 ? 1400 : 900, 430 * rows + 80);
  fprintf(f, "set multiplot layout %d,%d title \"%s: %s%s\"\n", rows, cols, s->name, a->title,
          a->ratio ? " (dashed: parity)" : a->linear ? "" : " (values <= 1e-17 drawn at 1e-17)");
  fprintf(f, "set key %s box opaque font \",10\"\n%s\n", a->linear ? "outside below horizontal maxcols 2" : "outside right top",
          a->linear ? "unset logscale y" : "set logscale y");
  fprintf(f, a->ratio || a->linear ? "set format y \"%%g\"\n" : "set format y \"1e%%L\"\n");
  for (int m = 0; m < n; m++) {
    strlist scenes = {0}, series = {0};
    metric_axes(s, &points, a->metrics->s[m], &scenes, &series);
    if (a->linear) { /* from 0 to above the tallest bar (a fraction: to 1 at least) */
      double top = 1;
      for (int r = 0; r < s->m.nrow; r++)
        if (!strcmp(M(s, r, s->c_metric), a->metrics->s[m]) && isfinite(V(s, r)) && V(s, r) > top) top = V(s, r);
      fprintf(f, "unset label 2\nset yrange [0:%g]\n", 1.1 * top);
    } else if (a->ratio) { /* from 0.1 to above both the tallest bar and the parity line */
      double top = 2;
      for (int r = 0; r < s->m.nrow; r++)
        if (!strcmp(M(s, r, s->c_metric), a->metrics->s[m]) && isfinite(V(s, r)) && 1.5 * V(s, r) > top)
          top = 1.5 * V(s, r);
      fprintf(f, "set yrange [0.1:%g]\n", top);
    } else { /* room above the tallest bar; a metric that is 0 everywhere gets a frame that says so */
      double top = 0;
      for (int r = 0; r < s->m.nrow; r++)
        if (!strcmp(M(s, r, s->c_metric), a->metrics->s[m]) && isfinite(V(s, r)) && V(s, r) > top) top = V(s, r);
      if (top > floor_v) fprintf(f, "unset label 2\nset yrange [%g:*]\nset offsets 0, 0, graph 0.05, 0\n", floor_v);
      else
        fprintf(f, "set yrange [%g:%g]\nset label 2 \"every value <= %g\" at graph 0.5,0.8 center\n", floor_v / 10,
                floor_v * 100, floor_v);
    }
    if (a->linear) /* the panel title names the metric: the axis says its unit */
      fprintf(f, "set title \"%s\"\nunset xlabel\nset ylabel \"%s\"\n", a->metrics->s[m],
              metric_unit(a->metrics->s[m]));
    else
      fprintf(f, "set title \"%s\"\nset xlabel \"scene\"\nset ylabel \"%s (%s, log scale)\"\n", a->metrics->s[m],
              a->ratio ? "time per step" : a->metrics->s[m], metric_unit(a->metrics->s[m]));
    /* more than three scene names side by side in a half-width panel overlap: slanted then */
    fprintf(f, "set xrange [0.4:%d.6]\nset xtics %s (", scenes.n ? scenes.n : 1,
            scenes.n > 3 && n > 1 ? "rotate by 25 right" : "rotate by 0");
    for (int c = 0; c < scenes.n; c++) fprintf(f, "%s\"%s\" %d", c ? ", " : "", scenes.s[c], c + 1);
    fprintf(f, ")\n");
    for (int k = 0; k < series.n; k++) {
      char sh[256];
      const char *col = rp_engine_color(series.s[k]);
      fprintf(
          f, "%s $b%d_%d using 1:2:3:4:(%g):2 with boxxyerror fs %s border lc rgb \"%s\" lc rgb \"%s\" title \"%s\"",
          k ? ", \\\n    " : "plot", m, k, floor_v,
          rp_bar_fill_dup(rp_variant(series.s[k]), rp_dup_rank(series.s[k], (const char *const *)series.s, series.n)),
          col, col, short_of(series.s[k], &series, sh, sizeof sh));
    }
    if (!series.n) fprintf(f, "plot NaN notitle");
    if (a->ratio) fprintf(f, ", \\\n    1 with lines lw 2 dt 2 lc rgb \"black\" title \"parity (1)\"");
    fprintf(f, "\n");
    rp_sl_free(&scenes);
    rp_sl_free(&series);
  }
  if (!n) fprintf(f, "plot NaN notitle\n");
  fprintf(f, "unset multiplot\n");
  rp_gp_end(f);
  rp_sl_free(&points);
}

/* an error, drift or residual (drawn as bars on a log axis); not a time (s), a count or a context value */
static int error_metric(const char *m) {
  if (strstr(m, "time")) return 0;
  return strstr(m, "err") || strstr(m, "drift") || strstr(m, "creep") || strstr(m, "_max") || strstr(m, "median") ||
         strstr(m, "resid");
}

/* the per-point time plots of fp32 / device / lockstep studies */
static int plot_time(const rs_study *s, const char *pdir, const char *base, int lockstep, strlist *made) {
  strlist points = {0}, scenes = {0}, scalars = {0};
  lists_of(s, &points, &scenes, &scalars);
  series_t *v = rp_xrealloc(NULL, sizeof *v * (size_t)(points.n + 1));
  int n = 0, st = 0;
  for (int p = 0; p < points.n && !st; p++) {
    memset(&v[n], 0, sizeof v[n]);
    int r = lockstep ? column_series(s, points.s[p], "lock", "err_qvel", &v[n])
                     : divergence(s, points.s[p], strcmp(s->kind, "device") ? "f32" : "cuda", &v[n]);
    if (r == 1) continue; /* that point has no such files */
    if (r) {
      st = r;
      n++;
      break;
    }
    snprintf(v[n].label, sizeof v[n].label, "%s", points.s[p]);
    n++;
  }
  static const double thr[] = {1e-6, 1e-3, NAN};
  time_arg a = {s,
                base,
                lockstep                    ? "one-step error vs MuJoCo along MuJoCo's trajectory (max over stretches)"
                : strcmp(s->kind, "device") ? "f32 vs f64 divergence, free running"
                                            : "CUDA vs CPU divergence, free running",
                lockstep ? "max |dqvel| / max(|qvel|, 1)" : "max_i |qpos_i(a) - qpos_i(b)| (rad or m)",
                v,
                n,
                lockstep ? NULL : thr};
  if (!st && n) st = rp_plot(NULL, pdir, base, body_time, &a, made);
  series_free(v, n);
  rp_sl_free(&points);
  rp_sl_free(&scenes);
  rp_sl_free(&scalars);
  return st;
}

/* kind = scale: one scale_<family>_<precision>.csv (the solvers' rows, status ok timed) */
typedef struct scale_arg {
  const table *t;
  const char *base, *title;
} scale_arg;

/* ms per step vs N, log–log: one series per solver (rows with status ok), the least-squares line of each
   (rp_fit on log10) and its slope in the key */
static void body_scale(const void *ctx, FILE *f, const void *arg) {
  (void)ctx;
  const scale_arg *a = arg;
  const table *t = a->t;
  int cn = rp_col(t, "n"), cs = rp_col(t, "solver"), cm = rp_col(t, "ms_per_step"), cst = rp_col(t, "status");
  strlist sol = {0}, ns = {0};
  for (int r = 0; r < t->nrow; r++)
    if (rp_sl_find(&sol, rp_cell(t, r, cs)) < 0) rp_sl_add(&sol, rp_cell(t, r, cs));
  rp_gp_begin(f, a->base, a->title);
  double *x = malloc(sizeof(double) * (size_t)(t->nrow + 1)), *y = malloc(sizeof(double) * (size_t)(t->nrow + 1));
  double slope[64], inter[64], r2[64], nlo = INFINITY, nhi = 0;
  for (int k = 0; k < sol.n && k < 64; k++) {
    int n = 0;
    fprintf(f, "$s%d << EOD\n", k);
    for (int r = 0; r < t->nrow; r++) {
      double ms = strtod(rp_cell(t, r, cm), NULL);
      if (strcmp(rp_cell(t, r, cs), sol.s[k]) || strcmp(rp_cell(t, r, cst), "ok") || !(ms > 0)) continue;
      x[n] = strtod(rp_cell(t, r, cn), NULL);
      y[n++] = ms;
      fprintf(f, "%g %.9g\n", x[n - 1], ms);
      if (rp_sl_find(&ns, rp_cell(t, r, cn)) < 0) rp_sl_add(&ns, rp_cell(t, r, cn));
      if (x[n - 1] > 0 && x[n - 1] < nlo) nlo = x[n - 1];
      if (x[n - 1] > nhi) nhi = x[n - 1];
    }
    fprintf(f, "EOD\n");
    slope[k] = NAN;
    if (n >= 2) rp_fit(x, y, n, &slope[k], &inter[k], &r2[k]);
  }
  rp_gp_loop(f, a->base, 900, 600);
  /* the N axis spans the measured sizes (a factor 1.3 of room each side), not gnuplot's decades */
  if (nhi > 0) fprintf(f, "set xrange [%g:%g]\n", nlo / 1.3, nhi * 1.3);
  /* a tick at every measured N */
  for (int i = 0; i < ns.n; i++) fprintf(f, "%s\"%s\" %s", i ? ", " : "set xtics (", ns.s[i], ns.s[i]);
  if (ns.n) fprintf(f, ")\n");
  fprintf(f, "set title \"%s\"\nset xlabel \"N (bodies, log scale)\"\nset ylabel \"time per step (ms, log scale)\"\n",
          a->title);
  fprintf(f, "set logscale xy\nset key outside right top box opaque\n");
  for (int k = 0; k < sol.n && k < 64; k++) {
    const char *c = rp_colors[k % RP_NCOLORS];
    /* one key entry per solver: its points, titled with the fitted exponent; the fit line has no entry */
    char title[300];
    if (isfinite(slope[k])) snprintf(title, sizeof title, "%s (exponent %.2f)", sol.s[k], slope[k]);
    else snprintf(title, sizeof title, "%s", sol.s[k]);
    fprintf(f, "%s $s%d using 1:2 with points pt 7 ps 1.3 lc rgb \"%s\" title \"%s\"", k ? ", \\\n    " : "plot", k, c,
            title);
    if (isfinite(slope[k]))
      fprintf(f, ", \\\n    10**(%.9g)*x**(%.9g) with lines lw 2 lc rgb \"%s\" notitle", inter[k], slope[k], c);
  }
  if (!sol.n) fprintf(f, "plot NaN notitle");
  fprintf(f, "\n");
  rp_gp_end(f);
  free(x);
  free(y);
  rp_sl_free(&sol);
  rp_sl_free(&ns);
}

/* every scale_*.csv of the study: one plot each */
static int plot_scale(const rs_study *s, const char *pdir, const char *base, strlist *made) {
  strlist files = {0};
  int st = rp_list_files(s->dir, "scale_", &files);
  for (int i = 0; i < files.n && !st; i++) {
    char p[4400], b[400], title[300];
    rp_path_in(p, sizeof p, s->dir, files.s[i]);
    table t;
    if ((st = rp_table_load(&t, p))) break;
    if (rp_col(&t, "n") < 0 || rp_col(&t, "solver") < 0 || rp_col(&t, "ms_per_step") < 0 || rp_col(&t, "status") < 0) {
      st = rp_fail("%s: not a scale CSV (model,n,nv,solver,ms_per_step,...,status)", p);
      rp_table_free(&t);
      break;
    }
    char stem[200];
    snprintf(stem, sizeof stem, "%s", files.s[i] + 6);
    char *dot = strstr(stem, ".csv");
    if (dot) *dot = 0;
    snprintf(b, sizeof b, "%s_%s", base, stem);
    snprintf(title, sizeof title, "scale %s: time per step vs N (fit a*N^p, log10 least squares)", stem);
    scale_arg sa = {&t, b, title};
    st = rp_plot(NULL, pdir, b, body_scale, &sa, made);
    rp_table_free(&t);
  }
  rp_sl_free(&files);
  return st;
}

/* 1 if the study has a residual-per-iteration family (a metric NAME_it<k>) */
static int has_iter_family(const rs_study *s) {
  char fam[128];
  int k;
  for (int r = 0; r < s->m.nrow; r++)
    if (family_of(M(s, r, s->c_metric), "_it", fam, sizeof fam, &k)) return 1;
  return 0;
}

int rs_plots(const rs_studies *S, const char *pdir, strlist *made) {
  int st = 0;
  for (int i = 0; i < S->n && !st; i++) {
    const rs_study *s = &S->s[i];
    if (!s->m.nrow) continue;
    char base[300];
    snprintf(base, sizeof base, "study_%s", s->name);
    plot_arg pa = {s, base};
    strlist points = {0}, scenes = {0}, scalars = {0};
    lists_of(s, &points, &scenes, &scalars);
    if (!strcmp(s->kind, "convergence") && !has_iter_family(s)) {
      /* a convergence study of the stopping test only (no residual-per-iteration series): its scalars */
      strlist stop = {0};
      rp_sl_add(&stop, "avbd_false_stop_frac");
      rp_sl_add(&stop, "avbd_flagged_steps");
      int own = 0; /* the same judgement along AVBD's own trajectory, where the study has it */
      for (int r = 0; r < s->m.nrow && !own; r++) own = !strcmp(M(s, r, s->c_metric), "avbd_own_false_stop_frac");
      int unc = 0; /* and the own steps that used their budget, where the study counts them */
      for (int r = 0; r < s->m.nrow && !unc; r++) unc = !strcmp(M(s, r, s->c_metric), "avbd_own_unconverged_steps");
      if (own) {
        rp_sl_add(&stop, "avbd_own_false_stop_frac");
        rp_sl_add(&stop, "avbd_own_checked_steps");
      }
      if (own && unc) rp_sl_add(&stop, "avbd_own_unconverged_steps");
      bar_arg ba = {s, base, &stop, 0,
                    own && unc ? "false stops on MuJoCo's states (top), along the own trajectory (middle); own steps "
                                 "at the budget (bottom)"
                    : own      ? "stopping test per point: false stops and their base, on MuJoCo's states (top) and "
                                 "along AVBD's own trajectory (bottom)"
                               : "stopping test per point: false-stop fraction and steps flagged converged",
                    1};
      st = rp_plot(NULL, pdir, base, body_bars, &ba, made);
      rp_sl_free(&stop);
    } else if (!strcmp(s->kind, "convergence")) st = rp_plot(NULL, pdir, base, body_iter, &pa, made);
    else if (!strcmp(s->kind, "refinement")) st = rp_plot(NULL, pdir, base, body_refine, &pa, made);
    else if (!strcmp(s->kind, "fp32") || !strcmp(s->kind, "device")) st = plot_time(s, pdir, base, 0, made);
    else if (!strcmp(s->kind, "scale")) st = plot_scale(s, pdir, base, made);
    else if (!strcmp(s->kind, "speed")) {
      strlist one = {0};
      rp_sl_add(&one, "time_ratio");
      bar_arg ba = {s, base, &one, 1, "time per step, rigidlab / MuJoCo, below 1: rigidlab faster", 0};
      st = rp_plot(NULL, pdir, base, body_bars, &ba, made);
      rp_sl_free(&one);
    } else {
      if (!strcmp(s->kind, "lockstep")) {
        char b2[320];
        snprintf(b2, sizeof b2, "%s_steps", base);
        st = plot_time(s, pdir, b2, 1, made);
      }
      strlist errs = {0};
      for (int m = 0; m < scalars.n; m++)
        if (error_metric(scalars.s[m])) rp_sl_add(&errs, scalars.s[m]); /* the other values are in the table */
      bar_arg ba = {s, base, &errs, 0, "errors, residuals and drifts, one panel per metric", 0};
      if (!st && errs.n) st = rp_plot(NULL, pdir, base, body_bars, &ba, made);
      rp_sl_free(&errs);
    }
    rp_sl_free(&points);
    rp_sl_free(&scenes);
    rp_sl_free(&scalars);
  }
  return st;
}

/* ---------- summary.md and tables.tex ---------- */

static void fmt_g(char *b, size_t n, double v) {
  if (isnan(v)) snprintf(b, n, "nan");
  else if (v == 0) snprintf(b, n, "0");
  else if (fabs(v) >= 1e-3 && fabs(v) < 1e5) snprintf(b, n, "%.4g", v);
  else snprintf(b, n, "%.3e", v);
}

void rs_summary(const rs_studies *S, FILE *f, const strlist *plots) {
  fprintf(f, "\n## Studies (studies/*/metrics.csv)\n\n");
  if (!S->n) {
    fprintf(f, "No studies/ directory: the INI studies were not run.\n");
    return;
  }
  fprintf(f, "Each study: its spec (studies/NAME/spec.ini), one row per point with its scalar metrics "
             "(per-iteration and per-level values are in metrics.csv and the plot), and the gate: "
             "`rigidlab check DIR/studies/NAME`.\n");
  for (int i = 0; i < S->n; i++) {
    const rs_study *s = &S->s[i];
    fprintf(f, "\n### %s (kind %s)\n\n", s->name, s->kind);
    if (s->description[0]) fprintf(f, "%s.\n\n", s->description);
    for (int r = 0; s->has_meta && r < s->meta.nrow; r++) {
      const char *k = rp_cell(&s->meta, r, 0);
      size_t n = strlen(k);
      if ((n > 7 && !strcmp(k + n - 7, "_reason")) || (n > 5 && !strcmp(k + n - 5, "_rows")))
        fprintf(f, "- meta `%s`: %s\n", k, rp_cell(&s->meta, r, 1));
    }
    strlist points = {0}, scenes = {0}, scalars = {0};
    lists_of(s, &points, &scenes, &scalars);
    if (!points.n) fprintf(f, "No rows in metrics.csv.\n");
    else {
      fprintf(f, "| point |");
      for (int m = 0; m < scalars.n; m++) fprintf(f, " %s |", scalars.s[m]);
      fprintf(f, "\n|---|");
      for (int m = 0; m < scalars.n; m++) fprintf(f, "---:|");
      fprintf(f, "\n");
      for (int p = 0; p < points.n; p++) {
        fprintf(f, "| %s |", points.s[p]);
        for (int m = 0; m < scalars.n; m++) {
          int r = find_row(s, points.s[p], scalars.s[m]);
          char b[64] = "";
          if (r >= 0) fmt_g(b, sizeof b, V(s, r));
          fprintf(f, " %s |", r >= 0 ? b : "–");
        }
        fprintf(f, "\n");
      }
    }
    char base[300];
    for (int k = 0; k < 2; k++) {
      snprintf(base, sizeof base, k ? "study_%s_steps" : "study_%s", s->name);
      if (rp_sl_find(plots, base) >= 0) fprintf(f, "\n![%s](plots/%s.svg) ([PNG](plots/%s.png))\n", base, base, base);
    }
    rp_sl_free(&points);
    rp_sl_free(&scenes);
    rp_sl_free(&scalars);
  }
}

void rs_tex(const rs_studies *S, FILE *f) {
  for (int i = 0; i < S->n; i++) {
    const rs_study *s = &S->s[i];
    strlist points = {0}, scenes = {0}, scalars = {0};
    lists_of(s, &points, &scenes, &scalars);
    if (points.n && scalars.n) {
      fprintf(f, "\n\\begin{table}[tbp]\n\\centering\n\\caption{Study %s (kind %s)%s%s.}\n\\label{tab:study-%s}\n",
              rp_tex(s->name), rp_tex(s->kind), s->description[0] ? ": " : "", rp_tex(s->description), rp_tex(s->name));
      fprintf(f, "\\resizebox{\\textwidth}{!}{%%\n\\begin{tabular}{l");
      for (int m = 0; m < scalars.n; m++) fprintf(f, "r");
      fprintf(f, "}\n\\toprule\npoint");
      for (int m = 0; m < scalars.n; m++) fprintf(f, " & %s", rp_tex(scalars.s[m]));
      fprintf(f, " \\\\\n\\midrule\n");
      for (int p = 0; p < points.n; p++) {
        fprintf(f, "%s", rp_tex(points.s[p]));
        for (int m = 0; m < scalars.n; m++) {
          int r = find_row(s, points.s[p], scalars.s[m]);
          fprintf(f, " & %s", r >= 0 ? rp_tex_num(V(s, r), 0) : "--");
        }
        fprintf(f, " \\\\\n");
      }
      fprintf(f, "\\bottomrule\n\\end{tabular}}\n\\end{table}\n");
    }
    rp_sl_free(&points);
    rp_sl_free(&scenes);
    rp_sl_free(&scalars);
  }
}
