/* report.c — plots and tables from a results directory's CSVs (see report.h).
 *
 * Shape: load (parse + check every CSV into memory; any error → exit 2 before a byte is
 * written) → aggregate (worst errors per stage, per model × stage, contact statistics, bench
 * matrix, chain fits with gsl_fit_linear) → emit (.gp scripts into DIR/plots.tmp.PID, run
 * gnuplot there, summary.md and tables.tex to temporary names) → commit (rename everything into
 * place).  The .gp scripts carry their data inline (datablocks), except the contact plots,
 * which read ../contact_*.csv directly, so every script can be rerun by hand from DIR/plots/. */
#include "report.h"
#include "report_core.h"
#include "report_studies.h"
#include "quantities.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gsl/gsl_fit.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---------- the data ---------- */

typedef struct {
  table t;
  strlist models, stages;
  int nm, ns;
  /* per stage × precision (0 f64, 1 f32): worst max_rel_err row (−1: none) */
  int *worst_row;
  /* per model × stage × precision: worst rel err, failed count, present */
  double *mworst;
  int *mfail, *mhas;
  int c_model, c_prec, c_stage, c_qty, c_abs, c_rel, c_tol, c_pass;
  int nfail;
} verify_data;

typedef struct {
  char scene[256], engine[64], file[512];
  table t;
  int c_time, c_pen, c_it, c_en, c_conv; /* −1 when absent */
  double pen_max, it_mean, it_max, e0, e1;
  long nonconv;
} contact_run;

typedef struct {
  char model[256], engine[64], prec[16], stage[64];
  double ours, mj, ratio;
} bench_row;

typedef struct {
  char engine[64], prec[16];
  int n;
  double *links, *ours, *mj;
  double slope, inter, r2, mslope, minter, mr2;
} chain_series;

typedef struct {
  const char *dir;
  FILE *log;
  verify_data v;
  table traj;
  int tc_scene, tc_integ, tc_steps, tc_err;
  contact_run *runs;
  int nrun;
  bench_row *bench;
  int nbench;
  strlist bench_files;
  chain_series *chains;
  int nchain;
  int have_chains;
  table meta;
  int have_meta;
  int have_verify; /* DIR holds a verify run's outputs (not only studies) */
  rs_studies studies;
} report;

/* Where a results tree keeps its data files: DIR itself, else its folders DIR/NAME/ in name order
   (`rigidlab run` writes the default study's verify.csv, traj_compare.csv, contact_*.csv and bench_*.csv
   into its study folders): "" and the folder names into SUBS */
static void data_dirs(const char *dir, strlist *subs) {
  rp_sl_add(subs, "");
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    char p[4400];
    struct stat sb;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    if (e->d_name[0] != '.' && !stat(p, &sb) && S_ISDIR(sb.st_mode)) rp_sl_add(subs, e->d_name);
  }
  if (d) closedir(d);
  qsort(subs->s + 1, (size_t)subs->n - 1, sizeof *subs->s, rp_cmp_str);
}

/* strcmp of two paths' file names */
static int cmp_base(const void *a, const void *b) {
  const char *x = *(char *const *)a, *y = *(char *const *)b, *sx = strrchr(x, '/'), *sy = strrchr(y, '/');
  return strcmp(sx ? sx + 1 : x, sy ? sy + 1 : y);
}

/* the files named PREFIX*.csv (in file-name order), as paths relative to DIR, of the first data folder that has any (ALL: of
   every data folder) into FILES */
static int data_files(const char *dir, const char *prefix, int all, strlist *files) {
  strlist subs = {0};
  data_dirs(dir, &subs);
  int st = 0;
  for (int i = 0; i < subs.n && !st && (all || !files->n); i++) {
    char sd[4400], rel[4400];
    strlist f = {0};
    snprintf(sd, sizeof sd, "%s%s%s", dir, i ? "/" : "", subs.s[i]);
    if (!(st = rp_list_files(sd, prefix, &f)))
      for (int k = 0; k < f.n; k++) {
        snprintf(rel, sizeof rel, "%s%s%s", subs.s[i], i ? "/" : "", f.s[k]);
        rp_sl_add(files, rel);
      }
    rp_sl_free(&f);
  }
  rp_sl_free(&subs);
  if (files->n > 1) qsort(files->s, (size_t)files->n, sizeof *files->s, cmp_base); /* none: files->s is NULL */
  return st;
}

/* the path of data file NAME in the first data folder that has it; DIR/NAME when none has */
static void data_path(const char *dir, const char *name, char *p, size_t n) {
  strlist subs = {0};
  data_dirs(dir, &subs);
  int found = 0;
  for (int i = 0; i < subs.n && !found; i++) {
    snprintf(p, n, "%s/%s%s%s", dir, subs.s[i], i ? "/" : "", name);
    found = !access(p, F_OK);
  }
  if (!found) rp_path_in(p, n, dir, name);
  rp_sl_free(&subs);
}

/* what a verify row measures (reference/verify/quantities.c); a name verify no longer reports counts as a
   relative error, the kind of nearly all rows */
static const char *vcell(const verify_data *v, int r, int c) { return rp_cell(&v->t, r, c); }

static rl_vq_kind vkind(const char *quantity) {
  const rl_vq_info *q = rl_vq_info_find(quantity);
  return q ? q->kind : RL_VQK_REL;
}

static int load_verify(report *R) {
  verify_data *v = &R->v;
  char p[4096];
  data_path(R->dir, "verify.csv", p, sizeof p);
  int st;
  if ((st = rp_table_load(&v->t, p))) return st;
  table *t = &v->t;
  if ((st = rp_need_col(t, "model", &v->c_model)) || (st = rp_need_col(t, "precision", &v->c_prec)) ||
      (st = rp_need_col(t, "stage", &v->c_stage)) || (st = rp_need_col(t, "quantity", &v->c_qty)) ||
      (st = rp_need_col(t, "max_abs_err", &v->c_abs)) || (st = rp_need_col(t, "max_rel_err", &v->c_rel)) ||
      (st = rp_need_col(t, "tolerance", &v->c_tol)) || (st = rp_need_col(t, "pass", &v->c_pass)))
    return st;
  if (!t->nrow) return rp_fail("%s: no rows", p);
  for (int r = 0; r < t->nrow; r++) {
    double x;
    const char *pr = rp_cell(t, r, v->c_prec), *ps = rp_cell(t, r, v->c_pass);
    if (strcmp(pr, "f64") && strcmp(pr, "f32"))
      return rp_fail("%s:%d: precision '%s' (want f64 or f32)", p, t->line[r], pr);
    if (strcmp(ps, "0") && strcmp(ps, "1")) return rp_fail("%s:%d: pass '%s' (want 0 or 1)", p, t->line[r], ps);
    if (!rp_cell(t, r, v->c_model)[0] || !rp_cell(t, r, v->c_stage)[0])
      return rp_fail("%s:%d: empty model or stage", p, t->line[r]);
    if ((st = rp_num(t, r, v->c_abs, &x)) || (st = rp_num(t, r, v->c_rel, &x)) || (st = rp_num(t, r, v->c_tol, &x)))
      return st;
    rp_sl_add(&v->models, rp_cell(t, r, v->c_model));
    rp_sl_add(&v->stages, rp_cell(t, r, v->c_stage));
  }
  v->nm = v->models.n;
  v->ns = v->stages.n;
  v->worst_row = rp_xrealloc(NULL, sizeof(int) * (size_t)v->ns * 2);
  for (int i = 0; i < v->ns * 2; i++) v->worst_row[i] = -1;
  size_t nmx = (size_t)v->nm * (size_t)v->ns * 2;
  v->mworst = rp_xrealloc(NULL, sizeof(double) * nmx);
  v->mfail = calloc(nmx, sizeof(int));
  v->mhas = calloc(nmx, sizeof(int));
  if (!v->mfail || !v->mhas) return rp_fail("out of memory");
  for (int r = 0; r < t->nrow; r++) {
    int s = rp_sl_find(&v->stages, rp_cell(t, r, v->c_stage)), m = rp_sl_find(&v->models, rp_cell(t, r, v->c_model));
    int pr = !strcmp(rp_cell(t, r, v->c_prec), "f32");
    double rel = strtod(rp_cell(t, r, v->c_rel), NULL);
    int *w = &v->worst_row[s * 2 + pr];
    int failed = !strcmp(rp_cell(t, r, v->c_pass), "0");
    v->nfail += failed;
    /* per stage and precision: the relative-error row nearest (or furthest beyond) its own tolerance,
       rel/tol; counts, fractions and scaled rows are summarised per quantity (worst_other) */
    if (vkind(rp_cell(t, r, v->c_qty)) != RL_VQK_REL) continue;
    double tol_r = strtod(rp_cell(t, r, v->c_tol), NULL);
    if (*w < 0 ||
        rp_worse(rel / tol_r, strtod(rp_cell(t, *w, v->c_rel), NULL) / strtod(rp_cell(t, *w, v->c_tol), NULL)))
      *w = r;
    size_t k = ((size_t)m * (size_t)v->ns + (size_t)s) * 2 + (size_t)pr;
    if (!v->mhas[k] || rp_worse(rel, v->mworst[k])) v->mworst[k] = rel;
    v->mhas[k] = 1;
    v->mfail[k] += failed;
  }
  return 0;
}

static int load_traj(report *R) {
  char p[4096];
  data_path(R->dir, "traj_compare.csv", p, sizeof p);
  int st;
  table *t = &R->traj;
  if ((st = rp_table_load(t, p))) return st;
  if ((st = rp_need_col(t, "scene", &R->tc_scene)) || (st = rp_need_col(t, "integrator", &R->tc_integ)) ||
      (st = rp_need_col(t, "steps", &R->tc_steps)) || (st = rp_need_col(t, "max_rel_err_qpos_qvel", &R->tc_err)))
    return st;
  for (int r = 0; r < t->nrow; r++) {
    double x;
    if ((st = rp_num(t, r, R->tc_steps, &x)) || (st = rp_num(t, r, R->tc_err, &x))) return st;
  }
  return 0;
}

static int engine_rank(const char *e) {
  static const char *order[] = {"newton", "cg", "avbd", "mujoco"};
  for (int i = 0; i < 4; i++)
    if (!strcmp(e, order[i])) return i;
  return 4;
}
static int cmp_run(const void *a, const void *b) {
  const contact_run *x = a, *y = b;
  int c = strcmp(x->scene, y->scene);
  if (c) return c;
  c = engine_rank(x->engine) - engine_rank(y->engine);
  return c ? c : strcmp(x->engine, y->engine);
}

static int load_contact(report *R) {
  strlist files = {0};
  int st = data_files(R->dir, "contact_", 0, &files);
  if (st) return st;
  R->runs = rp_xrealloc(NULL, sizeof *R->runs * (size_t)(files.n + 1));
  for (int i = 0; i < files.n; i++) {
    contact_run *c = &R->runs[R->nrun];
    memset(c, 0, sizeof *c);
    const char *base = strrchr(files.s[i], '/'), *name = (base ? base + 1 : files.s[i]) + strlen("contact_");
    const char *us = strrchr(name, '_');
    size_t ln = strlen(name) - 4; /* minus .csv */
    if (!us || us == name) {
      st = rp_fail("%s/%s: name is not contact_<scene>_<engine>.csv", R->dir, files.s[i]);
      rp_sl_free(&files);
      return st;
    }
    snprintf(c->scene, sizeof c->scene, "%.*s", (int)(us - name), name);
    snprintf(c->engine, sizeof c->engine, "%.*s", (int)(name + ln - us - 1), us + 1);
    snprintf(c->file, sizeof c->file, "%s", files.s[i]);
    char p[4096];
    rp_path_in(p, sizeof p, R->dir, files.s[i]);
    R->nrun++;
    if ((st = rp_table_load(&c->t, p))) break;
    table *t = &c->t;
    if ((st = rp_need_col(t, "time", &c->c_time))) break;
    if (!t->nrow) {
      st = rp_fail("%s: no rows", p);
      break;
    }
    c->c_pen = rp_col(t, "penetration_max");
    c->c_it = rp_col(t, "iterations");
    c->c_en = rp_col(t, "energy");
    c->c_conv = rp_col(t, "converged");
    c->pen_max = c->it_max = c->e0 = c->e1 = NAN;
    double itsum = 0;
    long itn = 0;
    for (int r = 0; r < t->nrow && !st; r++) {
      double x;
      for (int k = 0; k < t->ncol && !st; k++) st = rp_num(t, r, k, &x); /* sim CSVs are all numbers */
      if (st || (st = rp_num(t, r, c->c_time, &x))) break;
      if (c->c_pen >= 0) {
        if ((st = rp_num(t, r, c->c_pen, &x))) break;
        if (!isnan(x) && (isnan(c->pen_max) || x > c->pen_max)) c->pen_max = x;
      }
      if (c->c_it >= 0) {
        if ((st = rp_num(t, r, c->c_it, &x))) break;
        if (!isnan(x)) {
          itsum += x;
          itn++;
          if (isnan(c->it_max) || x > c->it_max) c->it_max = x;
        }
      }
      if (c->c_en >= 0) {
        if ((st = rp_num(t, r, c->c_en, &x))) break;
        if (r == 0) c->e0 = x;
        c->e1 = x;
      }
      if (c->c_conv >= 0) {
        if ((st = rp_num(t, r, c->c_conv, &x))) break;
        if (x == 0) c->nonconv++;
      }
    }
    c->it_mean = itn ? itsum / (double)itn : NAN;
    if (st) break;
  }
  rp_sl_free(&files);
  if (!st && R->nrun > 1) qsort(R->runs, (size_t)R->nrun, sizeof *R->runs, cmp_run);
  return st;
}

/* trailing digits of a model name: chain32 → 32 */
static int links_of(const char *model, double *n) {
  size_t k = strlen(model);
  const char *m = model;
  char tmp[256];
  snprintf(tmp, sizeof tmp, "%s", model);
  if (k > 4 && !strcmp(tmp + k - 4, ".xml")) tmp[k -= 4] = 0;
  m = tmp;
  size_t j = k;
  while (j > 0 && m[j - 1] >= '0' && m[j - 1] <= '9') j--;
  if (j == k) return -1;
  *n = atof(m + j);
  return 0;
}

static int load_bench(report *R) {
  strlist files = {0};
  int st = data_files(R->dir, "bench_", 1, &files);
  if (st) return st;
  for (int i = 0; i < files.n && !st; i++) {
    char p[4096];
    rp_path_in(p, sizeof p, R->dir, files.s[i]);
    table t;
    if ((st = rp_table_load(&t, p))) {
      rp_table_free(&t);
      break;
    }
    int cm, ce, cp, cs, co, cj, cr;
    if ((st = rp_need_col(&t, "model", &cm)) || (st = rp_need_col(&t, "engine", &ce)) ||
        (st = rp_need_col(&t, "precision", &cp)) || (st = rp_need_col(&t, "stage", &cs)) ||
        (st = rp_need_col(&t, "ns_per_step", &co)) || (st = rp_need_col(&t, "mujoco_ns_per_step", &cj)) ||
        (st = rp_need_col(&t, "ratio", &cr))) {
      rp_table_free(&t);
      break;
    }
    const char *base = strrchr(files.s[i], '/');
    int chains = !strcmp(base ? base + 1 : files.s[i], "bench_chains.csv");
    if (chains) R->have_chains = 1;
    else rp_sl_add(&R->bench_files, files.s[i]);
    for (int r = 0; r < t.nrow; r++) {
      double o, j, ra, nl = 0;
      if ((st = rp_num(&t, r, co, &o)) || (st = rp_num(&t, r, cj, &j)) || (st = rp_num(&t, r, cr, &ra))) break;
      if (chains) {
        if (links_of(rp_cell(&t, r, cm), &nl)) {
          st = rp_fail("%s:%d: model '%s' does not end in a link count", p, t.line[r], rp_cell(&t, r, cm));
          break;
        }
        int k;
        for (k = 0; k < R->nchain; k++)
          if (!strcmp(R->chains[k].engine, rp_cell(&t, r, ce)) && !strcmp(R->chains[k].prec, rp_cell(&t, r, cp))) break;
        if (k == R->nchain) {
          R->chains = rp_xrealloc(R->chains, sizeof *R->chains * (size_t)(++R->nchain));
          memset(&R->chains[k], 0, sizeof R->chains[k]);
          snprintf(R->chains[k].engine, sizeof R->chains[k].engine, "%s", rp_cell(&t, r, ce));
          snprintf(R->chains[k].prec, sizeof R->chains[k].prec, "%s", rp_cell(&t, r, cp));
        }
        chain_series *c = &R->chains[k];
        c->links = rp_xrealloc(c->links, sizeof(double) * (size_t)(c->n + 1));
        c->ours = rp_xrealloc(c->ours, sizeof(double) * (size_t)(c->n + 1));
        c->mj = rp_xrealloc(c->mj, sizeof(double) * (size_t)(c->n + 1));
        c->links[c->n] = nl;
        c->ours[c->n] = o;
        c->mj[c->n++] = j;
      } else {
        R->bench = rp_xrealloc(R->bench, sizeof *R->bench * (size_t)(R->nbench + 1));
        bench_row *b = &R->bench[R->nbench++];
        snprintf(b->model, sizeof b->model, "%s", rp_cell(&t, r, cm));
        snprintf(b->engine, sizeof b->engine, "%s", rp_cell(&t, r, ce));
        snprintf(b->prec, sizeof b->prec, "%s", rp_cell(&t, r, cp));
        snprintf(b->stage, sizeof b->stage, "%s", rp_cell(&t, r, cs));
        b->ours = o;
        b->mj = j;
        b->ratio = ra;
      }
    }
    rp_table_free(&t);
  }
  rp_sl_free(&files);
  for (int k = 0; k < R->nchain && !st; k++) {
    chain_series *c = &R->chains[k];
    rp_fit(c->links, c->ours, c->n, &c->slope, &c->inter, &c->r2);
    rp_fit(c->links, c->mj, c->n, &c->mslope, &c->minter, &c->mr2);
  }
  return st;
}

/* 1 if data file NAME is in DIR or one of its data folders (data_dirs) */
static int data_has(const char *dir, const char *name) {
  char p[4096];
  data_path(dir, name, p, sizeof p);
  return !access(p, F_OK);
}

/* a verify run's outputs in DIR or its data folders (verify.csv, traj_compare.csv, contact_*.csv, bench_*.csv):
   then verify.csv is required (traj_compare.csv is drawn when present); a tree with studies only (`rigidlab run
   --out`, one study of the INI kinds) has none */
static int has_verify_outputs(const char *dir) {
  if (data_has(dir, "verify.csv") || data_has(dir, "traj_compare.csv")) return 1;
  const char *prefix[2] = {"contact_", "bench_"};
  int n = 0;
  for (int i = 0; i < 2 && !n; i++) {
    strlist l = {0};
    if (!data_files(dir, prefix[i], 0, &l)) n = l.n;
    rp_sl_free(&l);
  }
  return n > 0;
}

static int load_meta(report *R) {
  char p[4096];
  data_path(R->dir, "meta.csv", p, sizeof p);
  if (access(p, F_OK)) return 0;
  int st = rp_table_load(&R->meta, p);
  if (st) return st;
  if (R->meta.ncol < 2 || rp_col(&R->meta, "key") != 0 || rp_col(&R->meta, "value") != 1)
    return rp_fail("%s: header is not key,value", p);
  R->have_meta = 1;
  return 0;
}

static const char *meta(const report *R, const char *key) {
  if (!R->have_meta) return NULL;
  for (int r = 0; r < R->meta.nrow; r++)
    if (!strcmp(rp_cell(&R->meta, r, 0), key)) return rp_cell(&R->meta, r, 1);
  return NULL;
}

/* the verify rows that are not relative errors (counts, fractions, scaled errors): one entry per stage and
   quantity, with the row of each precision whose judged value (max_rel_err; for counts it repeats
   max_abs_err) is nearest its tolerance */
typedef struct {
  char label[160];
  rl_vq_kind kind;
  int row[2]; /* f64, f32; −1: none */
} other_q;

static int other_rows(const verify_data *v, other_q **out) {
  other_q *o = NULL;
  int n = 0;
  char label[160];
  for (int r = 0; r < v->t.nrow; r++) {
    rl_vq_kind k = vkind(vcell(v, r, v->c_qty));
    if (k == RL_VQK_REL) continue;
    snprintf(label, sizeof label, "%s (%s)", vcell(v, r, v->c_qty), vcell(v, r, v->c_stage));
    int i = 0;
    while (i < n && strcmp(o[i].label, label)) i++;
    if (i == n) {
      o = rp_xrealloc(o, sizeof *o * (size_t)(n + 1));
      snprintf(o[n].label, sizeof o[n].label, "%s", label);
      o[n].kind = k;
      o[n].row[0] = o[n].row[1] = -1;
      n++;
    }
    int pr = !strcmp(vcell(v, r, v->c_prec), "f32"), *w = &o[i].row[pr];
    double q = strtod(vcell(v, r, v->c_rel), NULL) / strtod(vcell(v, r, v->c_tol), NULL);
    if (*w < 0 || rp_worse(q, strtod(vcell(v, *w, v->c_rel), NULL) / strtod(vcell(v, *w, v->c_tol), NULL))) *w = r;
  }
  *out = o;
  return n;
}

/* one bar datablock: "x value x_lo x_hi y_lo tol" per entry (values at or below FLOOR drawn at it) */
static void verify_block(FILE *f, const char *name, const double *x, const double *val, const double *tol, int n,
                         double floor_v) {
  fprintf(f, "$%s << EOD\n", name);
  for (int i = 0; i < n; i++) {
    if (!isfinite(val[i])) continue;
    fprintf(f, "%g %.6g %g %g %g %.6g\n", x[i], val[i] > floor_v ? val[i] : floor_v, x[i] - 0.19, x[i] + 0.19, floor_v,
            tol[i]);
  }
  fprintf(f, "NaN NaN NaN NaN NaN NaN\nEOD\n");
}

/* the bars of one panel: f64 and f32 values with their tolerances as bar-wide dashes; the key on the
   first panel only (the style is the same in all) */
static void verify_bars(FILE *f, const char *blk, int key) {
  const char *c = rp_engine_color("rigidlab");
  fprintf(f,
          "plot $%s64 using 1:2:3:4:5:2 with boxxyerror fs %s border lc rgb \"%s\" lc rgb \"%s\" %s, \\\n"
          "     $%s32 using 1:2:3:4:5:2 with boxxyerror fs %s border lc rgb \"%s\" lc rgb \"%s\" %s, \\\n"
          "     $%s64 using 3:6:($4-$3):(0) with vectors nohead lw 3 lc rgb \"black\" %s, \\\n"
          "     $%s32 using 3:6:($4-$3):(0) with vectors nohead lw 3 dt 2 lc rgb \"black\" %s\n",
          blk, rp_bar_fill(0), c, c, key ? "title \"f64 (worst row)\"" : "notitle", blk, rp_bar_fill(1), c, c,
          key ? "title \"f32 (worst row)\"" : "notitle", blk, key ? "title \"f64 tolerance\"" : "notitle", blk,
          key ? "title \"f32 tolerance\"" : "notitle");
}

/* 1. verify: relative errors per stage (log axis) on top; below, on axes of their own, the count rows,
   the fraction rows and the scaled rows, per quantity — a count never shares an axis with an error */
static void body_verify(const void *ctx, FILE *f, const void *arg) {
  const report *R = ctx;
  const verify_data *v = &R->v;
  const double floor_v = 1e-18, scaled_floor = 1e-6;
  rp_gp_begin(f, "verify", "verify: worst relative error per stage; counts, fractions and scaled errors per quantity");
  int cap = v->ns + v->t.nrow + 1;
  double *x = rp_xrealloc(NULL, sizeof(double) * (size_t)cap), *val = rp_xrealloc(NULL, sizeof(double) * (size_t)cap),
         *tol = rp_xrealloc(NULL, sizeof(double) * (size_t)cap);
  for (int pr = 0; pr < 2; pr++) {
    int n = 0;
    for (int s = 0; s < v->ns; s++) {
      int r = v->worst_row[s * 2 + pr];
      if (r < 0) continue;
      x[n] = s + 1 + (pr ? 0.2 : -0.2);
      val[n] = strtod(vcell(v, r, v->c_rel), NULL);
      tol[n++] = strtod(vcell(v, r, v->c_tol), NULL);
    }
    verify_block(f, pr ? "rel32" : "rel64", x, val, tol, n, floor_v);
  }
  other_q *o;
  int no = other_rows(v, &o);
  static const rl_vq_kind kinds[3] = {RL_VQK_COUNT, RL_VQK_FRACTION, RL_VQK_SCALED};
  static const char *const blk[3] = {"cnt", "frac", "scal"};
  int nk[3] = {0, 0, 0};
  for (int k = 0; k < 3; k++)
    for (int pr = 0; pr < 2; pr++) {
      int n = 0, j = 0;
      for (int i = 0; i < no; i++) {
        if (o[i].kind != kinds[k]) continue;
        j++;
        int r = o[i].row[pr];
        if (r < 0) continue;
        x[n] = j + (pr ? 0.2 : -0.2);
        val[n] = strtod(vcell(v, r, v->c_rel), NULL);
        tol[n++] = strtod(vcell(v, r, v->c_tol), NULL);
      }
      nk[k] = j;
      char name[16];
      snprintf(name, sizeof name, "%s%s", blk[k], pr ? "32" : "64");
      verify_block(f, name, x, val, tol, n, kinds[k] == RL_VQK_SCALED ? scaled_floor : 0);
    }
  rp_gp_loop(f, "verify", 1400, 1300);
  fprintf(f, "set multiplot title \"verify against MuJoCo 2.2.2: %d rows over %d model and cone runs, %d failed\"\n",
          v->t.nrow, v->nm, v->nfail);
  /* top: relative errors */
  fprintf(f, "set origin 0,0.52\nset size 1,0.45\nset offsets 0, 0, graph 0.06, 0\n");
  fprintf(f, "set title \"relative errors: per stage, the row nearest its tolerance (0 drawn at %g)\"\n", floor_v);
  fprintf(f, "set xlabel \"stage\"\nset ylabel \"relative error (log scale)\"\n");
  fprintf(f, "set logscale y\nset format y \"1e%%L\"\nset ytics 100\nset yrange [%g:*]\nset xrange [0.4:%d.6]\n",
          floor_v, v->ns ? v->ns : 1);
  fprintf(f, "set xtics rotate by -35 (");
  for (int s = 0; s < v->ns; s++) fprintf(f, "%s\"%s\" %d", s ? ", " : "", v->stages.s[s], s + 1);
  fprintf(f, ")\n");
  verify_bars(f, "rel", 1);
  /* bottom: counts (linear), fractions (linear), scaled errors (log) */
  static const char *const title[3] = {"counts: |rigidlab - MuJoCo|, mismatches, iterations",
                                       "fractions of pairs or states", "errors in units of a bound"};
  static const char *const ylab[3] = {"count", "fraction", "error / bound (κ₁·ε or float floor; log scale)"};
  static const double ox[3] = {0, 0.47, 0.74}, sx[3] = {0.47, 0.27, 0.24};
  fprintf(f, "unset key\nset ytics autofreq\n");
  for (int k = 0; k < 3; k++) {
    fprintf(f,
            "set origin %g,0\nset size %g,0.52\nset title \"%s\"\nset xlabel \"quantity (stage)\"\nset ylabel \"%s\"\n",
            ox[k], sx[k], title[k], ylab[k]);
    if (kinds[k] == RL_VQK_SCALED)
      fprintf(f, "set logscale y\nset format y \"1e%%L\"\nset yrange [%g:*]\n", scaled_floor);
    else fprintf(f, "unset logscale y\nset format y \"%%g\"\nset yrange [0:*]\n");
    /* vertical tick labels: slanted ones would run into the next panel */
    fprintf(f, "set xrange [0.4:%d.6]\nset xtics %s (", nk[k] ? nk[k] : 1,
            nk[k] > 1 ? "rotate by 90 right" : "norotate center");
    int j = 0;
    for (int i = 0; i < no; i++)
      if (o[i].kind == kinds[k]) fprintf(f, "%s\"%s\" %d", j ? ", " : "", o[i].label, j + 1), j++;
    fprintf(f, ")\n");
    if (!nk[k]) /* an empty frame that says so (gnuplot refuses a plot with no defined point) */
      fprintf(f, "unset logscale y\nset format y \"%%g\"\nset yrange [0:1]\nset xrange [0:1]\nunset xtics\nset label 1 "
                 "\"no such rows\" at graph 0.5,0.5 center\n"
                 "plot -1 notitle\nunset label 1\nset xtics\n");
    else {
      char b[16];
      snprintf(b, sizeof b, "%s", blk[k]);
      verify_bars(f, b, 0);
    }
  }
  fprintf(f, "unset multiplot\n");
  rp_gp_end(f);
  free(o);
  free(x);
  free(val);
  free(tol);
}

/* 2. contact scene: penetration, iterations, energy vs time per engine (reads ../contact_*.csv) */
static void body_contact(const void *ctx, FILE *f, const void *arg) {
  const report *R = ctx;
  const char *scene = arg;
  char base[300];
  snprintf(base, sizeof base, "contact_%s", scene);
  rp_gp_begin(f, base, "contact trajectories");
  rp_gp_loop(f, base, 900, 1150);
  fprintf(f, "set datafile separator \",\"\nset datafile missing \"nan\"\n");
  fprintf(f, "set multiplot layout 3,1 title \"contact scene %s: one line per engine\"\n", scene);
  const char *what[3] = {"penetration", "iterations", "energy"};
  const char *ylab[3] = {"max penetration (m)", "iterations per step (log scale)", "total energy (J)"};
  for (int k = 0; k < 3; k++) {
    fprintf(f, "set autoscale xfix\nset title \"%s: %s vs time\"\nset xlabel \"time (s)\"\nset ylabel \"%s\"\n", scene,
            what[k], ylab[k]);
    /* iterations span 1 to the cap (hundreds): a log axis shows every engine's (a step with 0 is not drawn) */
    if (k == 1) fprintf(f, "set logscale y\nset yrange [0.8:*]\nset format y \"%%g\"\n");
    else fprintf(f, "unset logscale y\nset yrange [*:*]\nset format y \"%%g\"\n");
    int first = 1;
    /* MuJoCo first, wide, as the reference the others are drawn over (where they coincide both show) */
    for (int pass = 0; pass < 2; pass++)
      for (int i = 0; i < R->nrun; i++) {
        const contact_run *c = &R->runs[i];
        if (strcmp(c->scene, scene) || (!strcmp(c->engine, "mujoco")) != !pass) continue;
        int cc = k == 0 ? c->c_pen : k == 1 ? c->c_it : c->c_en;
        const char *color = rp_engine_color(c->engine);
        if (cc < 0) continue;
        fprintf(f, "%s '../%s' skip 1 using %d:%d with lines lw %s lc rgb \"%s\" title \"%s\"",
                first ? "plot" : ", \\\n    ", c->file, c->c_time + 1, cc + 1, pass ? "1.5" : "4", color, c->engine);
        first = 0;
      }
    if (first)
      fprintf(f, "set label 1 \"no %s column in any run\" at graph 0.5,0.5 center\nplot NaN notitle\nunset label 1",
              what[k]);
    fprintf(f, "\n");
  }
  fprintf(f, "unset multiplot\n");
  rp_gp_end(f);
}

/* models, stages and (engine, precision) series of the bench rows */
typedef struct {
  strlist models, stages, series; /* series = "engine precision" */
} bench_axes;

static void bench_axes_of(const report *R, bench_axes *a) {
  memset(a, 0, sizeof *a);
  char buf[256];
  for (int i = 0; i < R->nbench; i++) {
    const bench_row *b = &R->bench[i];
    rp_sl_add(&a->models, b->model);
    rp_sl_add(&a->stages, b->stage);
    snprintf(buf, sizeof buf, "%s %s", b->engine, b->prec);
    rp_sl_add(&a->series, buf);
  }
}
static void bench_axes_free(bench_axes *a) {
  rp_sl_free(&a->models);
  rp_sl_free(&a->stages);
  rp_sl_free(&a->series);
}

/* 3a. bench ratios: one panel per model; x = stage, one bar per engine and precision (colour: engine,
   shade: precision), log y with the parity line */
static void body_bench(const void *ctx, FILE *f, const void *arg) {
  const report *R = ctx;
  bench_axes a;
  bench_axes_of(R, &a);
  double w = 0.8 / (a.series.n ? a.series.n : 1);
  char buf[256];
  rp_gp_begin(f, "bench_ratio", "bench ratios");
  for (int m = 0; m < a.models.n; m++)
    for (int k = 0; k < a.series.n; k++) {
      fprintf(f, "$b%d_%d << EOD\n", m, k);
      for (int i = 0; i < R->nbench; i++) {
        const bench_row *b = &R->bench[i];
        snprintf(buf, sizeof buf, "%s %s", b->engine, b->prec);
        if (strcmp(b->model, a.models.s[m]) || strcmp(buf, a.series.s[k]) || !isfinite(b->ratio) || !(b->ratio > 0))
          continue;
        double x = rp_sl_find(&a.stages, b->stage) + 1 + (k - (a.series.n - 1) / 2.0) * w;
        fprintf(f, "%g %.6g %g %g\n", x, b->ratio, x - w / 2 * 0.95, x + w / 2 * 0.95);
      }
      fprintf(f, "NaN NaN NaN NaN\nEOD\n");
    }
  int cols = a.models.n > 1 ? 2 : 1, rows = (a.models.n + cols - 1) / cols;
  rp_gp_loop(f, "bench_ratio", 1500, 480 * (rows ? rows : 1) + 60);
  fprintf(f,
          "set multiplot layout %d,%d title \"bench: time per step, rigidlab / MuJoCo 2.2.2 (below 1 = rigidlab "
          "faster)\"\n",
          rows ? rows : 1, cols);
  fprintf(
      f,
      "set logscale y\nset yrange [0.05:*]\nset format y \"%%g\"\nset key outside right top box opaque font \",11\"\n");
  for (int m = 0; m < a.models.n; m++) {
    fprintf(f, "set title \"%s\"\nset xlabel \"stage\"\nset ylabel \"time ratio rigidlab / MuJoCo (log scale)\"\n",
            a.models.s[m]);
    fprintf(f, "set xrange [0.4:%d.6]\nset xtics rotate by -35 (", a.stages.n);
    for (int c = 0; c < a.stages.n; c++) fprintf(f, "%s\"%s\" %d", c ? ", " : "", a.stages.s[c], c + 1);
    fprintf(f, ")\n");
    for (int k = 0; k < a.series.n; k++) {
      const char *c = rp_engine_color(a.series.s[k]);
      fprintf(f,
              "%s $b%d_%d using 1:2:3:4:(0.05):2 with boxxyerror fs %s border lc rgb \"%s\" lc rgb \"%s\" title \"%s\"",
              k ? ", \\\n    " : "plot", m, k, rp_bar_fill(rp_variant(a.series.s[k])), c, c, a.series.s[k]);
    }
    fprintf(f, ", \\\n    1 with lines lw 2 dt 2 lc rgb \"black\" title \"parity (1)\"\n");
  }
  fprintf(f, "unset multiplot\n");
  rp_gp_end(f);
  bench_axes_free(&a);
}

/* 3b. chain scaling, log–log, with the fitted power laws */
static void body_chains(const void *ctx, FILE *f, const void *arg) {
  const report *R = ctx;
  rp_gp_begin(f, "chains", "hinge-chain scaling");
  for (int k = 0; k < R->nchain; k++) {
    const chain_series *c = &R->chains[k];
    fprintf(f, "$c%d << EOD\n", k);
    for (int i = 0; i < c->n; i++) {
      fprintf(f, "%g ", c->links[i]);
      rp_gp_num(f, c->ours[i]);
      fputc(' ', f);
      rp_gp_num(f, c->mj[i]);
      fputc('\n', f);
    }
    fprintf(f, "EOD\n");
  }
  rp_gp_loop(f, "chains", 900, 600);
  fprintf(
      f,
      "set title \"hinge-chain scaling: time per step vs links (fit ns = a*links^slope, gsl_fit_linear on log10)\"\n");
  fprintf(f, "set xlabel \"links (count, log scale)\"\nset ylabel \"time per step (ns, log scale)\"\n");
  fprintf(f, "set logscale xy\nset key inside left top box opaque\n");
  double lo = INFINITY, hi = 0;
  for (int k = 0; k < R->nchain; k++)
    for (int i = 0; i < R->chains[k].n; i++) {
      if (R->chains[k].links[i] < lo) lo = R->chains[k].links[i];
      if (R->chains[k].links[i] > hi) hi = R->chains[k].links[i];
    }
  if (hi > 0) fprintf(f, "set xrange [%g:%g]\n", lo / 1.2, hi * 1.2);
  int first = 1;
  for (int k = 0; k < R->nchain; k++) {
    const chain_series *c = &R->chains[k];
    /* colour: the engine (rigidlab's, or MuJoCo's); marker: the measure, time per step, the same for both */
    const char *c1 = rp_engine_color(c->engine), *c2 = rp_engine_color("mujoco");
    int pt = rp_measure_point("ns_per_step"), dt = rp_line_dash(rp_variant(c->prec));
    fprintf(f, "%s $c%d using 1:2 with points pt %d ps 1.5 lc rgb \"%s\" title \"rigidlab %s %s\"",
            first ? "plot" : ", \\\n    ", k, pt, c1, c->engine, c->prec);
    fprintf(f, ", \\\n    $c%d using 1:3 with points pt %d ps 1.5 lc rgb \"%s\" title \"MuJoCo (%s run, %s)\"", k, pt,
            c2, c->engine, c->prec);
    if (isfinite(c->slope))
      fprintf(f,
              ", \\\n    10**(%.9g)*x**(%.9g) with lines lw 2 dt %d lc rgb \"%s\" title \"rigidlab fit: slope %.2f "
              "(R^2 %.3f)\"",
              c->inter, c->slope, dt, c1, c->slope, c->r2);
    if (isfinite(c->mslope))
      fprintf(f,
              ", \\\n    10**(%.9g)*x**(%.9g) with lines lw 2 dt %d lc rgb \"%s\" title \"MuJoCo fit: slope %.2f (R^2 "
              "%.3f)\"",
              c->minter, c->mslope, dt, c2, c->mslope, c->mr2);
    first = 0;
  }
  if (first) fprintf(f, "plot NaN notitle");
  fprintf(f, "\n");
  rp_gp_end(f);
}

/* ---------- summary.md ---------- */

static void write_summary(const report *R, FILE *f, const strlist *plots, const strlist *scenes) {
  const verify_data *v = &R->v;
  char a[64], b[64];
  fprintf(f, "# rigidlab report: %s\n\n", R->dir);
  fprintf(f, "Generated by `rigidlab report` from the CSVs in this directory (no simulation).\n");
  if (R->have_meta) {
    const char *keys[] = {"git_hash", "git_dirty", "mujoco_version", "compiler", "machine", "start_time", "seed"};
    fprintf(f, "\n| meta | value |\n|---|---|\n");
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
      const char *m = meta(R, keys[i]);
      if (m) fprintf(f, "| %s | %s |\n", keys[i], m);
    }
  } else {
    fprintf(f, "\n(no meta.csv)\n");
  }
  if (!R->have_verify) { /* studies only */
    rs_summary(&R->studies, f, plots);
    fprintf(f, "\nLaTeX tables: [tables.tex](tables.tex) (needs \\usepackage{booktabs,graphicx}).\n");
    return;
  }

  /* headline: errors only, each against its tolerance — per precision the relative-error row nearest (or
     furthest beyond) its tolerance; counts, fractions, scaled rows and timings follow under "Other figures" */
  int wr[2] = {-1, -1};
  for (int r = 0; r < v->t.nrow; r++) {
    if (vkind(vcell(v, r, v->c_qty)) != RL_VQK_REL) continue;
    double tol = strtod(vcell(v, r, v->c_tol), NULL), rel = strtod(vcell(v, r, v->c_rel), NULL);
    int p = !strcmp(vcell(v, r, v->c_prec), "f32");
    if (wr[p] < 0 ||
        rp_worse(rel / tol, strtod(vcell(v, wr[p], v->c_rel), NULL) / strtod(vcell(v, wr[p], v->c_tol), NULL)))
      wr[p] = r;
  }
  fprintf(f, "\n## Headline\n\nErrors against their tolerances: per precision, the verify relative error nearest its "
             "tolerance.\n\n");
  for (int p = 0; p < 2; p++) {
    if (wr[p] < 0) {
      fprintf(f, "- %s verify: no relative-error rows\n", p ? "f32" : "f64");
      continue;
    }
    double e = strtod(vcell(v, wr[p], v->c_rel), NULL), t = strtod(vcell(v, wr[p], v->c_tol), NULL);
    rp_fmt_e(a, sizeof a, e);
    rp_fmt_e(b, sizeof b, t);
    fprintf(f,
            "- %s verify error row nearest its tolerance: **%s** (max_rel_err; tolerance %s, %.2g of it) — %s, stage "
            "%s, %s\n",
            p ? "f32" : "f64", a, b, e / t, vcell(v, wr[p], v->c_model), vcell(v, wr[p], v->c_stage),
            vcell(v, wr[p], v->c_qty));
  }
  fprintf(f, "\n## Other figures\n\nCounts, agreement without a tolerance, and timings.\n\n");
  fprintf(f, "- verify rows failed: **%d** of %d\n", v->nfail, v->t.nrow);
  double tw = NAN;
  int twr = -1;
  for (int r = 0; r < R->traj.nrow; r++) {
    double e = strtod(rp_cell(&R->traj, r, R->tc_err), NULL);
    if (twr < 0 || rp_worse(e, tw)) tw = e, twr = r;
  }
  if (twr >= 0) {
    rp_fmt_e(a, sizeof a, tw);
    fprintf(f,
            "- constraint-free trajectory agreement (rigidlab newton vs MuJoCo, no tolerance): worst **%s** (%s, %s, "
            "%s steps)\n",
            a, rp_cell(&R->traj, twr, R->tc_scene), rp_cell(&R->traj, twr, R->tc_integ),
            rp_cell(&R->traj, twr, R->tc_steps));
  }
  for (int i = 0; i < R->nbench; i++)
    if (!strcmp(R->bench[i].stage, "step"))
      fprintf(f, "- whole-step time ratio %s %s %s: **%.3f** (%.0f ns vs MuJoCo %.0f ns)\n", R->bench[i].model,
              R->bench[i].engine, R->bench[i].prec, R->bench[i].ratio, R->bench[i].ours, R->bench[i].mj);
  for (int k = 0; k < R->nchain; k++)
    fprintf(f, "- chain scaling exponent (%s %s): rigidlab **%.2f**, MuJoCo **%.2f**\n", R->chains[k].engine,
            R->chains[k].prec, R->chains[k].slope, R->chains[k].mslope);

  /* verify */
  fprintf(f, "\n## Verify (verify.csv)\n\nPer stage and precision, the relative-error row nearest its tolerance "
             "(largest max_rel_err / tolerance) over all models and cones.\n\n");
  fprintf(f, "| stage | worst f64 | model | quantity | tol f64 | worst f32 | model | quantity | tol f32 |\n");
  fprintf(f, "|---|---:|---|---|---:|---:|---|---|---:|\n");
  for (int s = 0; s < v->ns; s++) {
    fprintf(f, "| %s ", v->stages.s[s]);
    for (int p = 0; p < 2; p++) {
      int r = v->worst_row[s * 2 + p];
      if (r < 0) {
        fprintf(f, "| – | | | ");
        continue;
      }
      rp_fmt_e(a, sizeof a, strtod(vcell(v, r, v->c_rel), NULL));
      rp_fmt_e(b, sizeof b, strtod(vcell(v, r, v->c_tol), NULL));
      fprintf(f, "| %s%s%s | %s | %s | %s ", vcell(v, r, v->c_pass)[0] == '0' ? "**" : "", a,
              vcell(v, r, v->c_pass)[0] == '0' ? "**" : "", vcell(v, r, v->c_model), vcell(v, r, v->c_qty), b);
    }
    fprintf(f, "|\n");
  }
  /* the rows that are not relative errors, per quantity */
  other_q *o;
  int no = other_rows(v, &o);
  if (no) {
    fprintf(f, "\nCounts, fractions and scaled errors (reference/verify/quantities.c), per quantity the row nearest "
               "its tolerance:\n\n");
    fprintf(f, "| quantity (stage) | kind | worst f64 | model | tol f64 | worst f32 | model | tol f32 "
               "|\n|---|---|---:|---|---:|---:|---|---:|\n");
    for (int i = 0; i < no; i++) {
      fprintf(f, "| %s | %s ", o[i].label, rl_vq_kind_name(o[i].kind));
      for (int p = 0; p < 2; p++) {
        int r = o[i].row[p];
        if (r < 0) {
          fprintf(f, "| – | | ");
          continue;
        }
        int bad = vcell(v, r, v->c_pass)[0] == '0';
        double val = strtod(vcell(v, r, v->c_rel), NULL), tol = strtod(vcell(v, r, v->c_tol), NULL);
        if (o[i].kind == RL_VQK_COUNT) { /* whole numbers; tolerances are half-integers */
          snprintf(a, sizeof a, "%g", val);
          snprintf(b, sizeof b, "%g", tol);
        } else {
          rp_fmt_e(a, sizeof a, val);
          rp_fmt_e(b, sizeof b, tol);
        }
        fprintf(f, "| %s%s%s | %s | %s ", bad ? "**" : "", a, bad ? "**" : "", vcell(v, r, v->c_model), b);
      }
      fprintf(f, "|\n");
    }
  }
  free(o);
  fprintf(f, "\nFailed rows (pass = 0): %d\n\n", v->nfail);
  if (v->nfail) {
    fprintf(f, "| model | precision | stage | quantity | max_rel_err | tolerance |\n|---|---|---|---|---:|---:|\n");
    for (int r = 0; r < v->t.nrow; r++)
      if (vcell(v, r, v->c_pass)[0] == '0') {
        rp_fmt_e(a, sizeof a, strtod(vcell(v, r, v->c_rel), NULL));
        rp_fmt_e(b, sizeof b, strtod(vcell(v, r, v->c_tol), NULL));
        fprintf(f, "| %s | %s | %s | %s | %s | %s |\n", vcell(v, r, v->c_model), vcell(v, r, v->c_prec),
                vcell(v, r, v->c_stage), vcell(v, r, v->c_qty), a, b);
      }
  }
  if (rp_sl_find(plots, "verify") >= 0)
    fprintf(
        f,
        "\n![verify: worst error per stage](plots/verify.svg) ([PNG](plots/verify.png), [script](plots/verify.gp))\n");

  /* trajectories */
  fprintf(f, "\n## Constraint-free trajectories (traj_compare.csv)\n\n");
  fprintf(f, "max over steps of ‖newton − mujoco‖∞ / max(‖mujoco‖∞, 1) over qpos and qvel.\n\n");
  fprintf(f, "| scene | integrator | steps | max rel err |\n|---|---|---:|---:|\n");
  for (int r = 0; r < R->traj.nrow; r++) {
    rp_fmt_e(a, sizeof a, strtod(rp_cell(&R->traj, r, R->tc_err), NULL));
    fprintf(f, "| %s | %s | %s | %s |\n", rp_cell(&R->traj, r, R->tc_scene), rp_cell(&R->traj, r, R->tc_integ),
            rp_cell(&R->traj, r, R->tc_steps), a);
  }

  /* contact */
  fprintf(f, "\n## Contact trajectories (contact_*.csv)\n\n");
  if (!R->nrun) fprintf(f, "No contact_<scene>_<engine>.csv files.\n");
  else {
    fprintf(f, "| scene | engine | steps | max penetration (m) | mean iterations | max iterations | non-converged "
               "steps | energy first → last (J) |\n");
    fprintf(f, "|---|---|---:|---:|---:|---:|---:|---|\n");
    for (int i = 0; i < R->nrun; i++) {
      const contact_run *c = &R->runs[i];
      rp_fmt_e(a, sizeof a, c->pen_max);
      fprintf(f, "| %s | %s | %d | %s | %.2f | %.0f | %ld | %.6g → %.6g |\n", c->scene, c->engine, c->t.nrow, a,
              c->it_mean, c->it_max, c->nonconv, c->e0, c->e1);
    }
    fprintf(f, "\n");
    for (int s = 0; s < scenes->n; s++)
      fprintf(f, "![contact %s](plots/contact_%s.svg) ([PNG](plots/contact_%s.png))\n\n", scenes->s[s], scenes->s[s],
              scenes->s[s]);
  }

  /* bench */
  fprintf(f, "\n## Bench (bench_*.csv)\n\nratio = rigidlab / MuJoCo time per step (below 1: rigidlab faster); medians "
             "of alternating repetitions.\n\n");
  if (!R->nbench) fprintf(f, "No bench_*.csv files other than bench_chains.csv.\n");
  else {
    fprintf(f, "| model | engine | precision | stage | rigidlab ns/step | MuJoCo ns/step | ratio "
               "|\n|---|---|---|---|---:|---:|---:|\n");
    for (int i = 0; i < R->nbench; i++) {
      const bench_row *b = &R->bench[i];
      fprintf(f, "| %s | %s | %s | %s | %.0f | %.0f | %.3f |\n", b->model, b->engine, b->prec, b->stage, b->ours, b->mj,
              b->ratio);
    }
    fprintf(f, "\n![bench ratios](plots/bench_ratio.svg) ([PNG](plots/bench_ratio.png))\n");
  }
  fprintf(f, "\n## Chain scaling (bench_chains.csv)\n\n");
  if (!R->have_chains) fprintf(f, "No bench_chains.csv.\n");
  else {
    fprintf(f, "Power law ns/step = a·links^slope fitted by least squares on log10 (gsl_fit_linear).\n\n");
    fprintf(f, "| engine | precision | points | rigidlab slope | R² | MuJoCo slope | R² "
               "|\n|---|---|---:|---:|---:|---:|---:|\n");
    for (int k = 0; k < R->nchain; k++) {
      const chain_series *c = &R->chains[k];
      fprintf(f, "| %s | %s | %d | %.3f | %.4f | %.3f | %.4f |\n", c->engine, c->prec, c->n, c->slope, c->r2, c->mslope,
              c->mr2);
    }
    fprintf(f, "\n![chain scaling](plots/chains.svg) ([PNG](plots/chains.png))\n");
  }
  rs_summary(&R->studies, f, plots);
  fprintf(f, "\nLaTeX tables: [tables.tex](tables.tex) (needs \\usepackage{booktabs,graphicx}).\n");
}

/* ---------- tables.tex ---------- */

static void write_tex(const report *R, FILE *f) {
  const verify_data *v = &R->v;
  fprintf(f, "%% rigidlab report tables — generated by `rigidlab report %s`; needs \\usepackage{booktabs,graphicx}\n",
          rp_tex(R->dir));
  if (!R->have_verify) { /* studies only */
    rs_tex(&R->studies, f);
    return;
  }
  for (int p = 0; p < 2; p++) {
    int any = 0;
    for (size_t k = (size_t)p; k < (size_t)v->nm * (size_t)v->ns * 2; k += 2) any |= v->mhas[k];
    if (!any) continue;
    fprintf(f,
            "\n\\begin{table}[tbp]\n\\centering\n\\caption{Verification against MuJoCo 2.2.2, %s: worst relative error "
            "per model and stage "
            "(relative-error rows only; bold: outside tolerance; --: not "
            "checked).}\n\\label{tab:verify-%s}\n\\resizebox{\\textwidth}{!}{%%\n\\begin{tabular}{l",
            p ? "FP32" : "FP64", p ? "f32" : "f64");
    for (int s = 0; s < v->ns; s++) fprintf(f, "r");
    fprintf(f, "}\n\\toprule\nmodel");
    for (int s = 0; s < v->ns; s++) fprintf(f, " & %s", rp_tex(v->stages.s[s]));
    fprintf(f, " \\\\\n\\midrule\n");
    for (int m = 0; m < v->nm; m++) {
      fprintf(f, "%s", rp_tex(v->models.s[m]));
      for (int s = 0; s < v->ns; s++) {
        size_t k = ((size_t)m * (size_t)v->ns + (size_t)s) * 2 + (size_t)p;
        fprintf(f, " & %s", v->mhas[k] ? rp_tex_num(v->mworst[k], v->mfail[k] > 0) : "--");
      }
      fprintf(f, " \\\\\n");
    }
    fprintf(f, "\\bottomrule\n\\end{tabular}}\n\\end{table}\n");
  }

  fprintf(f, "\n\\begin{table}[tbp]\n\\centering\n\\caption{Constraint-free trajectories: rigidlab vs MuJoCo, worst "
             "relative state "
             "difference over the run.}\n\\label{tab:traj}\n\\begin{tabular}{llrr}\n\\toprule\nscene & integrator & "
             "steps & max rel.\\ error \\\\\n\\midrule\n");
  for (int r = 0; r < R->traj.nrow; r++)
    fprintf(f, "%s & %s & %s & %s \\\\\n", rp_tex(rp_cell(&R->traj, r, R->tc_scene)),
            rp_tex(rp_cell(&R->traj, r, R->tc_integ)), rp_tex(rp_cell(&R->traj, r, R->tc_steps)),
            rp_tex_num(strtod(rp_cell(&R->traj, r, R->tc_err), NULL), 0));
  fprintf(f, "\\bottomrule\n\\end{tabular}\n\\end{table}\n");

  if (R->nbench) {
    /* rows: model × precision × engine; columns: stages */
    strlist stages = {0}, rows = {0};
    char buf[512];
    for (int i = 0; i < R->nbench; i++) {
      rp_sl_add(&stages, R->bench[i].stage);
      snprintf(buf, sizeof buf, "%s\t%s\t%s", R->bench[i].model, R->bench[i].prec, R->bench[i].engine);
      rp_sl_add(&rows, buf);
    }
    fprintf(f, "\n\\begin{table}[tbp]\n\\centering\n\\caption{Time per step relative to MuJoCo 2.2.2 (rigidlab / "
               "MuJoCo; below 1 is faster). "
               "Medians of alternating "
               "repetitions.}\n\\label{tab:bench}\n\\resizebox{\\textwidth}{!}{%%\n\\begin{tabular}{lll");
    for (int s = 0; s < stages.n; s++) fprintf(f, "r");
    fprintf(f, "}\n\\toprule\nmodel & precision & engine");
    for (int s = 0; s < stages.n; s++) fprintf(f, " & %s", rp_tex(stages.s[s]));
    fprintf(f, " \\\\\n\\midrule\n");
    for (int r = 0; r < rows.n; r++) {
      char m[256], p[16], e[64];
      sscanf(rows.s[r], "%255[^\t]\t%15[^\t]\t%63s", m, p, e);
      fprintf(f, "%s & %s & %s", rp_tex(m), rp_tex(p), rp_tex(e));
      for (int s = 0; s < stages.n; s++) {
        int found = -1;
        for (int i = 0; i < R->nbench; i++)
          if (!strcmp(R->bench[i].model, m) && !strcmp(R->bench[i].prec, p) && !strcmp(R->bench[i].engine, e) &&
              !strcmp(R->bench[i].stage, stages.s[s]))
            found = i;
        if (found < 0) fprintf(f, " & --");
        else fprintf(f, " & %.2f", R->bench[found].ratio);
      }
      fprintf(f, " \\\\\n");
    }
    fprintf(f, "\\bottomrule\n\\end{tabular}}\n\\end{table}\n");
    rp_sl_free(&stages);
    rp_sl_free(&rows);
  }
  if (R->nchain) {
    fprintf(f,
            "\n\\begin{table}[tbp]\n\\centering\n\\caption{Hinge-chain scaling: exponent $b$ of the fitted power law "
            "$t = a\\,n^b$ (time per step vs links, least squares on $\\log_{10}$).}\n\\label{tab:chains}\n"
            "\\begin{tabular}{llrrr}\n\\toprule\nengine & precision & points & rigidlab $b$ & MuJoCo $b$ "
            "\\\\\n\\midrule\n");
    for (int k = 0; k < R->nchain; k++)
      fprintf(f, "%s & %s & %d & %.2f & %.2f \\\\\n", rp_tex(R->chains[k].engine), rp_tex(R->chains[k].prec),
              R->chains[k].n, R->chains[k].slope, R->chains[k].mslope);
    fprintf(f, "\\bottomrule\n\\end{tabular}\n\\end{table}\n");
  }
  rs_tex(&R->studies, f);
}

/* ---------- driver ---------- */

static void report_free(report *R) {
  verify_data *v = &R->v;
  rp_table_free(&v->t);
  rp_sl_free(&v->models);
  rp_sl_free(&v->stages);
  free(v->worst_row);
  free(v->mworst);
  free(v->mfail);
  free(v->mhas);
  rp_table_free(&R->traj);
  for (int i = 0; i < R->nrun; i++) rp_table_free(&R->runs[i].t);
  free(R->runs);
  free(R->bench);
  rp_sl_free(&R->bench_files);
  for (int k = 0; k < R->nchain; k++) {
    free(R->chains[k].links);
    free(R->chains[k].ours);
    free(R->chains[k].mj);
  }
  free(R->chains);
  rp_table_free(&R->meta);
  rs_free(&R->studies);
}

int rl_report(const char *dir, FILE *log, char *err, int errlen) {
  rp_set_err(err, errlen);
  err[0] = 0;
  report R;
  memset(&R, 0, sizeof R);
  R.dir = dir;
  R.log = log;
  struct stat sb;
  if (stat(dir, &sb) || !S_ISDIR(sb.st_mode)) return rp_fail("%s: not a results directory", dir);

  int st = 0, nsearched = 0;
  R.have_verify = has_verify_outputs(dir);
  if (R.have_verify) st = load_verify(&R);
  if (!st && R.have_verify && data_has(dir, "traj_compare.csv")) st = load_traj(&R);
  if (!st) st = load_contact(&R);
  if (!st) st = load_bench(&R);
  if (!st) st = load_meta(&R);
  if (!st) st = rs_load(dir, &R.studies, &nsearched);
  if (!st && !R.have_verify && !R.studies.n)
    st = rp_fail("%s: no results: no verify.csv, traj_compare.csv, contact_*.csv or bench_*.csv in it, and no "
                 "metrics.csv in it or in the %d folder(s) below it",
                 dir, nsearched - 1);
  if (st) {
    report_free(&R);
    return st;
  }

  char pdir[4200], final[4200], old[4300];
  snprintf(pdir, sizeof pdir, "%s/plots.tmp.%ld", dir, (long)getpid());
  snprintf(final, sizeof final, "%s/plots", dir);
  snprintf(old, sizeof old, "%s/plots.old.%ld", dir, (long)getpid());
  rp_rm_flat_dir(pdir);
  rl_tmp_register(pdir, 1); /* removed with its plots on any exit or signal until renamed into place */
  if (mkdir(pdir, 0755)) {
    st = rp_fail("%s: cannot create: %s", pdir, strerror(errno));
    report_free(&R);
    return st;
  }
  strlist plots = {0}, scenes = {0};
  outfile sum = {0}, tx = {0};
  for (int i = 0; i < R.nrun; i++) rp_sl_add(&scenes, R.runs[i].scene);

  if (R.have_verify) st = rp_plot(&R, pdir, "verify", body_verify, NULL, &plots);
  for (int s = 0; s < scenes.n && !st; s++) {
    char base[300];
    snprintf(base, sizeof base, "contact_%s", scenes.s[s]);
    st = rp_plot(&R, pdir, base, body_contact, scenes.s[s], &plots);
  }
  if (!st && R.nbench) st = rp_plot(&R, pdir, "bench_ratio", body_bench, NULL, &plots);
  if (!st && R.nchain) st = rp_plot(&R, pdir, "chains", body_chains, NULL, &plots);
  if (!st) st = rs_plots(&R.studies, pdir, &plots);
  if (!st) st = rp_out_open(&sum, dir, "summary.md");
  if (!st) {
    write_summary(&R, sum.f, &plots, &scenes);
    st = rp_out_close(&sum);
  }
  if (!st) st = rp_out_open(&tx, dir, "tables.tex");
  if (!st) {
    write_tex(&R, tx.f);
    st = rp_out_close(&tx);
  }
  /* commit: old plots aside, new plots in, then the two files */
  if (!st) {
    int had_old = !stat(final, &sb);
    if (had_old && rename(final, old)) st = rp_fail("%s: cannot replace: %s", final, strerror(errno));
    else if (rename(pdir, final)) {
      st = rp_fail("%s: cannot rename into place: %s", final, strerror(errno));
      if (had_old) rename(old, final);
    } else {
      rl_tmp_forget(pdir);
      if (had_old) rp_rm_flat_dir(old);
      st = rp_out_commit(&sum);
      if (!st) st = rp_out_commit(&tx);
    }
  }
  if (st) {
    rp_out_drop(&sum);
    rp_out_drop(&tx);
    rp_rm_flat_dir(pdir);
    rl_tmp_forget(pdir);
  } else if (log) {
    fprintf(log, "wrote %s/summary.md, %s/tables.tex and %d plots (SVG + PNG) in %s/\n", dir, dir, plots.n, final);
  }
  rp_sl_free(&plots);
  rp_sl_free(&scenes);
  report_free(&R);
  return st;
}
