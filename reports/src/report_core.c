/* report_core.c — see report_core.h. */
#include "report_core.h"

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

enum { BADINPUT = RP_BADINPUT };

/* ---------- errors ---------- */

static char *g_err;
static int g_errlen;

void rp_set_err(char *err, int errlen) {
  g_err = err;
  g_errlen = errlen;
}

int rp_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_err, (size_t)g_errlen, fmt, ap);
  va_end(ap);
  for (char *c = g_err; *c; c++)
    if (*c == '\n' || *c == '\r') *c = ' ';
  return BADINPUT;
}

void *rp_xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) {
    fputs("rigidlab: out of memory\n", stderr);
    exit(BADINPUT);
  }
  return q;
}

char *rp_xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  return memcpy(rp_xrealloc(NULL, n), s, n);
}

/* ---------- the CSV reader (csv.h), errors through rp_fail's buffer ---------- */

void rp_table_free(table *t) { rl_table_free(t); }

int rp_table_load(table *t, const char *path) { return rl_table_load(t, path, g_err, g_errlen) ? BADINPUT : 0; }

const char *rp_cell(const table *t, int r, int c) { return rl_table_cell(t, r, c); }

int rp_col(const table *t, const char *name) { return rl_table_col(t, name); }

int rp_need_col(const table *t, const char *name, int *c) {
  if ((*c = rp_col(t, name)) < 0) return rp_fail("%s: no column '%s'", t->path, name);
  return 0;
}

/* a number, nan or [-]inf */
int rp_num(const table *t, int r, int c, double *v) { return rl_table_num(t, r, c, v, g_err, g_errlen) ? BADINPUT : 0; }

/* ---------- small helpers ---------- */

int rp_sl_find(const strlist *l, const char *s) {
  for (int i = 0; i < l->n; i++)
    if (!strcmp(l->s[i], s)) return i;
  return -1;
}
int rp_sl_add(strlist *l, const char *s) {
  int i = rp_sl_find(l, s);
  if (i >= 0) return i;
  l->s = rp_xrealloc(l->s, sizeof *l->s * (size_t)(l->n + 1));
  l->s[l->n] = rp_xstrdup(s);
  return l->n++;
}
void rp_sl_free(strlist *l) {
  for (int i = 0; i < l->n; i++) free(l->s[i]);
  free(l->s);
  l->s = NULL;
  l->n = 0;
}

/* "worse" for errors: NaN beats everything, then larger */
int rp_worse(double a, double b) {
  if (isnan(b)) return 0;
  if (isnan(a)) return 1;
  return a > b;
}

void rp_fmt_e(char *buf, size_t n, double v) {
  if (isnan(v)) snprintf(buf, n, "nan");
  else if (isinf(v)) snprintf(buf, n, v > 0 ? "inf" : "-inf");
  else snprintf(buf, n, "%.3e", v);
}

/* LaTeX-escape into a static ring of buffers (enough for one fprintf call) */
const char *rp_tex(const char *s) {
  static char ring[8][512];
  static int k;
  char *o = ring[k = (k + 1) % 8], *e = o + sizeof ring[0] - 8;
  for (; *s && o < e; s++) {
    if (strchr("_&%$#{}", *s)) *o++ = '\\';
    *o++ = *s;
  }
  *o = 0;
  return ring[k];
}

/* a number for LaTeX: 1.23e-16 → $1.23\times10^{-16}$ */
const char *rp_tex_num(double v, int bold) {
  static char ring[8][96];
  static int k;
  char *o = ring[k = (k + 1) % 8];
  if (!isfinite(v)) {
    snprintf(o, sizeof ring[0], "%s%s%s", bold ? "\\textbf{" : "", isnan(v) ? "nan" : "inf", bold ? "}" : "");
    return o;
  }
  if (v == 0) {
    snprintf(o, sizeof ring[0], "%s", bold ? "\\textbf{0}" : "0");
    return o;
  }
  int ex = (int)floor(log10(fabs(v)));
  double m = v / pow(10, ex);
  if (fabs(m) >= 9.995) {
    m /= 10;
    ex++;
  }
  snprintf(o, sizeof ring[0], "$%s%.2f\\times10^{%d}%s$", bold ? "\\mathbf{" : "", m, ex, bold ? "}" : "");
  return o;
}

void rp_path_in(char *out, size_t n, const char *dir, const char *name) { snprintf(out, n, "%s/%s", dir, name); }

int rp_cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* sorted names in DIR with this prefix and suffix */
int rp_list_files(const char *dir, const char *prefix, strlist *out) {
  DIR *d = opendir(dir);
  if (!d) return rp_fail("%s: cannot read directory: %s", dir, strerror(errno));
  struct dirent *e;
  size_t np = strlen(prefix);
  while ((e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n > np + 4 && !strncmp(e->d_name, prefix, np) && !strcmp(e->d_name + n - 4, ".csv") &&
        !strstr(e->d_name, ".tmp."))
      rp_sl_add(out, e->d_name);
  }
  closedir(d);
  if (out->n > 1) qsort(out->s, (size_t)out->n, sizeof *out->s, rp_cmp_str); /* none found: out->s is NULL */
  return 0;
}

void rp_fit(const double *x, const double *y, int n, double *slope, double *inter, double *r2) {
  *slope = *inter = *r2 = NAN;
  if (n < 2) return;
  double *lx = rp_xrealloc(NULL, sizeof(double) * (size_t)n), *ly = rp_xrealloc(NULL, sizeof(double) * (size_t)n);
  int m = 0;
  for (int i = 0; i < n; i++)
    if (x[i] > 0 && y[i] > 0 && isfinite(y[i])) {
      lx[m] = log10(x[i]);
      ly[m++] = log10(y[i]);
    }
  double c00, c01, c11, ss;
  if (m >= 2 && !gsl_fit_linear(lx, 1, ly, 1, (size_t)m, inter, slope, &c00, &c01, &c11, &ss)) {
    double mean = 0, tot = 0;
    for (int i = 0; i < m; i++) mean += ly[i] / m;
    for (int i = 0; i < m; i++) tot += (ly[i] - mean) * (ly[i] - mean);
    *r2 = tot > 0 ? 1 - ss / tot : 1;
  }
  free(lx);
  free(ly);
}

/* ---------- output files: temporary name, renamed on commit (csv.h: rl_file) ---------- */

int rp_out_open(outfile *o, const char *dir, const char *name) {
  char p[4096];
  rp_path_in(p, sizeof p, dir, name);
  return rl_file_open(o, p, g_err, g_errlen) ? BADINPUT : 0;
}
/* close (keep the temporary name); renamed later by rp_out_commit */
int rp_out_close(outfile *o) { return rl_file_close(o, g_err, g_errlen) ? BADINPUT : 0; }
int rp_out_commit(outfile *o) { return rl_file_commit(o, g_err, g_errlen) ? BADINPUT : 0; }
void rp_out_drop(outfile *o) { rl_file_drop(o); }

/* the flat folder and its entries (csv.h) */
void rp_rm_flat_dir(const char *dir) { rl_dir_remove_flat(dir); }
/* ---------- gnuplot ---------- */

/* the shared preamble: a comment (datablocks follow it: gnuplot cannot define them inside a loop),
 * then gp_loop opens one loop that draws into SVG, then PNG (pngcairo when built in, else png) */
void rp_gp_begin(FILE *f, const char *base, const char *what) {
  fprintf(f, "# %s -- generated by `rigidlab report`; rerun with: cd plots && gnuplot %s.gp\n", what, base);
}
void rp_gp_loop(FILE *f, const char *base, int w, int h) {
  fprintf(f,
          "do for [fmt in \"svg png\"] {\n"
          "if (fmt eq \"svg\") {\n"
          "  set terminal svg size %d,%d dynamic noenhanced font \"Sans,14\" background \"white\"\n"
          "  set output \"%s.svg\"\n"
          "} else {\n"
          "  if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
          "    set terminal pngcairo size %d,%d noenhanced font \"Sans,12\" background \"white\"\n"
          "  } else {\n"
          "    set terminal png size %d,%d noenhanced\n"
          "  }\n"
          "  set output \"%s.png\"\n"
          "}\n"
          "reset\n"
          "set encoding utf8\n"
          "set grid ytics\n"
          "set key outside right top box opaque\n"
          "set key spacing 1.1 samplen 2 width 1\n",
          w, h, base, w, h, w, h, base);
}
void rp_gp_end(FILE *f) { fprintf(f, "set output\n}\n"); }

void rp_gp_num(FILE *f, double v) {
  if (isnan(v)) fputs("NaN", f);
  else fprintf(f, "%.9g", v);
}

const char *const rp_colors[RP_NCOLORS] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                           "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

/* ---------- the style table ---------- */

static const char *const engine_colors[][2] = {{"newton", "#1f77b4"}, {"cg", "#d62728"},   {"avbd", "#2ca02c"},
                                               {"mujoco", "#ff7f0e"}, {"cuda", "#9467bd"}, {"rigidlab", "#4d4d4d"}};

/* 1 if FIELD is one of LABEL's dot-separated fields (or the whole of a space-separated word) */
static int has_field(const char *label, const char *field) {
  size_t n = strlen(field);
  for (const char *p = label; (p = strstr(p, field)); p++) {
    int start = p == label || p[-1] == '.' || p[-1] == ' ';
    int end = p[n] == 0 || p[n] == '.' || p[n] == ' ';
    if (start && end) return 1;
  }
  return 0;
}

const char *rp_engine_color(const char *label) {
  for (size_t i = 0; i < sizeof engine_colors / sizeof *engine_colors; i++)
    if (has_field(label, engine_colors[i][0])) return engine_colors[i][1];
  if (!strncmp(label, "MuJoCo", 6)) return "#ff7f0e";
  return "#7f7f7f";
}

int rp_variant(const char *label) { return has_field(label, "f32") + 2 * (strstr(label, "cone=elliptic") != NULL); }

const char *rp_bar_fill(int variant) {
  static const char *const fill[4] = {"solid 0.85", "solid 0.35", "pattern 4", "pattern 5"};
  return fill[variant & 3];
}

int rp_line_dash(int variant) { return variant & 2 ? 2 : 1; }

const char *rp_series_color(const char *label) {
  const char *c = rp_engine_color(label);
  if (!(rp_variant(label) & 1)) return c;
  /* f32: the engine's colour mixed half-way with white (as the light bars) */
  static char buf[8][16];
  static int next;
  unsigned rgb = (unsigned)strtoul(c + 1, NULL, 16), out = 0;
  for (int sh = 0; sh <= 16; sh += 8) {
    unsigned v = (rgb >> sh) & 0xFF;
    out |= ((v + 255) / 2) << sh;
  }
  char *b = buf[next++ & 7];
  snprintf(b, 16, "#%06x", out & 0xFFFFFFu);
  return b;
}

int rp_dup_rank(const char *label, const char *const *all, int n) {
  int d = 0;
  for (int i = 0; i < n && strcmp(all[i], label); i++)
    d += !strcmp(rp_engine_color(all[i]), rp_engine_color(label)) && rp_variant(all[i]) == rp_variant(label);
  return d;
}

const char *rp_bar_fill_dup(int variant, int dup) {
  static const char *const pat[4] = {"pattern 1", "pattern 2", "pattern 6", "pattern 7"};
  return dup ? pat[(dup - 1) & 3] : rp_bar_fill(variant);
}

int rp_line_dash_dup(int variant, int dup) { return dup ? 3 + dup : rp_line_dash(variant); }

int rp_measure_point_dup(const char *measure, int dup) {
  int pt = rp_measure_point(measure); /* filled shapes are odd (5, 7, 9): the open form is one less */
  return (dup & 1) && (pt & 1) ? pt - 1 : pt;
}

/* the fields of a label (see rp_short_label): up to 16, each up to 127 characters */
static int label_fields(const char *label, char f[16][128]) {
  int n = 0;
  const char *p = label;
  while (*p && n < 16) {
    const char *q = p;
    for (;;) {
      const char *dot = strchr(q, '.');
      if (!dot) {
        q = p + strlen(p);
        break;
      }
      if (dot[1] >= '0' && dot[1] <= '9') { /* a decimal point: the field goes on */
        q = dot + 1;
        continue;
      }
      q = dot;
      break;
    }
    snprintf(f[n++], 128, "%.*s", (int)(q - p), p);
    p = *q ? q + 1 : q;
  }
  return n;
}

void rp_short_label(const char *label, const char *const *all, int nall, char *out, size_t n) {
  char mine[16][128], other[16][128];
  int nm = label_fields(label, mine);
  size_t len = 0;
  out[0] = 0;
  for (int i = 0; i < nm; i++) {
    int common = nall > 1;
    for (int j = 0; j < nall && common; j++) {
      int no = label_fields(all[j], other), found = 0;
      for (int k = 0; k < no; k++) found |= !strcmp(other[k], mine[i]);
      common = found;
    }
    if (common) continue;
    const char *t = strncmp(mine[i], "cone=", 5) ? mine[i] : mine[i] + 5;
    len += (size_t)snprintf(out + len, len < n ? n - len : 0, "%s%s", len ? " " : "", t);
  }
  if (!out[0]) snprintf(out, n, "%s", label); /* every field shared: keep it whole */
}

int rp_measure_point(const char *measure) {
  static const struct {
    const char *m;
    int pt;
  } pts[] = {{"err_final", 5}, {"err_seg", 7}, {"ode_err", 9}, {"gap", 7}, {"grad", 5}, {"mj_grad", 9}};
  for (size_t i = 0; i < sizeof pts / sizeof *pts; i++)
    if (!strcmp(measure, pts[i].m)) return pts[i].pt;
  return 7;
}

int rp_run_gnuplot(const char *dir, const char *script) {
  pid_t pid = fork();
  if (pid < 0) return rp_fail("%s/%s: cannot start gnuplot: %s", dir, script, strerror(errno));
  if (pid == 0) {
    if (chdir(dir)) _exit(126);
    int fd = open("gnuplot.log", O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execlp("gnuplot", "gnuplot", script, (char *)NULL);
    _exit(127);
  }
  int ws;
  while (waitpid(pid, &ws, 0) < 0)
    if (errno != EINTR) return rp_fail("%s/%s: waitpid: %s", dir, script, strerror(errno));
  if (!WIFEXITED(ws) || WEXITSTATUS(ws)) {
    int code = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    if (code == 127) return rp_fail("%s/%s: gnuplot not found (install gnuplot-nox)", dir, script);
    /* the last line of the log says why */
    char lp[4200], last[512] = "", buf[512];
    snprintf(lp, sizeof lp, "%s/gnuplot.log", dir);
    FILE *lf = fopen(lp, "r");
    if (lf) {
      while (fgets(buf, sizeof buf, lf))
        if (buf[0] != '\n' && buf[0] != ' ') snprintf(last, sizeof last, "%s", buf);
      fclose(lf);
    }
    return rp_fail("%s: gnuplot failed (exit %d): %s", script, code, last);
  }
  return 0;
}

/* write DIR/NAME.gp with the body writer, run it, check both outputs exist */
int rp_plot(const void *R, const char *pdir, const char *base, rp_gp_body body, const void *arg, strlist *made) {
  char p[4300];
  snprintf(p, sizeof p, "%s/%s.gp", pdir, base);
  FILE *f = fopen(p, "w");
  if (!f) return rp_fail("%s: cannot write: %s", p, strerror(errno));
  body(R, f, arg);
  int bad = ferror(f);
  bad |= fclose(f) != 0;
  if (bad) return rp_fail("%s: write failed", p);
  char script[300];
  snprintf(script, sizeof script, "%s.gp", base);
  int st = rp_run_gnuplot(pdir, script);
  if (st) return st;
  const char *ext[2] = {"svg", "png"};
  for (int i = 0; i < 2; i++) {
    struct stat sb;
    snprintf(p, sizeof p, "%s/%s.%s", pdir, base, ext[i]);
    if (stat(p, &sb) || sb.st_size == 0) return rp_fail("%s.gp: gnuplot wrote no %s.%s", base, base, ext[i]);
  }
  rp_sl_add(made, base);
  return 0;
}
