/* report_core.h — the pieces `rigidlab report` is built from (report_core.c): the error line, a checked
 * RFC 4180 CSV reader (csv.h's, reporting through rp_fail), string lists, number formatting for Markdown and LaTeX, output files under temporary
 * names renamed on commit, and gnuplot scripts run into SVG and PNG.  Errors: every rp_ function that can fail
 * returns 2 (bad input) after writing one line into the buffer given to rp_set_err. */
#ifndef RL_REPORT_CORE_H
#define RL_REPORT_CORE_H

#include <stddef.h>
#include <stdio.h>

#include "csv.h"

#define RP_BADINPUT 2
#define RP_NCOLORS  10

typedef rl_table table;

typedef struct {
  char **s;
  int n;
} strlist;

typedef rl_file outfile;

/* where rp_fail writes its one-line message */
void rp_set_err(char *err, int errlen);
int rp_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* the body of a gnuplot script: datablocks, then rp_gp_loop … rp_gp_end */
typedef void (*rp_gp_body)(const void *ctx, FILE *f, const void *arg);
extern const char *const rp_colors[RP_NCOLORS];

/* The one style table of every plot: a colour per engine (newton, cg, avbd, mujoco, cuda; "rigidlab" for
 * rows that are not one engine's), a shade per precision (f64 full, f32 light), the elliptic cone hatched
 * (bars) or dashed (lines), a marker per measure.  A label is a dot-separated point id such as
 * "box_stack.newton.f32.cone=elliptic"; its engine and variant are found among its fields. */
const char *rp_engine_color(const char *label);
/* 0: f64 (and pyramidal or no cone), 1: f32, 2: elliptic cone, 3: f32 and elliptic */
int rp_variant(const char *label);
/* gnuplot fill style of a bar of that variant ("solid 0.85", "solid 0.35", "pattern 4", ...) */
const char *rp_bar_fill(int variant);
/* gnuplot dash type of a line of that variant: 1 solid, 2 dashed for the elliptic cone (f32 lines are
 * told apart by colour, rp_series_color: dashes break up noisy curves) */
int rp_line_dash(int variant);
/* the colour of a line series: its engine's, lightened half-way to white for f32 (as the f32 bars) */
const char *rp_series_color(const char *label);
/* LABEL without the dot-separated fields every label of ALL shares (a field starting with a digit belongs
 * to the one before it: "dt0.004" is one field), fields joined by spaces, "cone=" dropped: the key of a panel
 * says only what differs between its series ("newton.f64.cone=elliptic" → "newton elliptic") */
void rp_short_label(const char *label, const char *const *all, int nall, char *out, size_t n);
/* how many of the panel's labels before LABEL (ALL[0..n), LABEL among them) share its engine and variant:
 * 0 for the first; a later one is told apart by a pattern fill (bars), a dash (lines) and an open marker */
int rp_dup_rank(const char *label, const char *const *all, int n);
/* the fill of a bar: rp_bar_fill of its variant, or for dup rank d > 0 a pattern */
const char *rp_bar_fill_dup(int variant, int dup);
/* the dash of a line: rp_line_dash of its variant, or for dup rank d > 0 dash type 3 + d */
int rp_line_dash_dup(int variant, int dup);
/* the marker: rp_measure_point of the measure, the open form of the same shape for odd dup ranks */
int rp_measure_point_dup(const char *measure, int dup);
/* gnuplot point type of a measure (err_final, err_seg, ode_err, ...; 7 filled circle otherwise) */
int rp_measure_point(const char *measure);

void *rp_xrealloc(void *p, size_t n);
char *rp_xstrdup(const char *s);
void rp_table_free(table *t);
int rp_table_load(table *t, const char *path);
const char *rp_cell(const table *t, int r, int c);
int rp_col(const table *t, const char *name);
int rp_need_col(const table *t, const char *name, int *c);
int rp_num(const table *t, int r, int c, double *v);
int rp_sl_find(const strlist *l, const char *s);
int rp_sl_add(strlist *l, const char *s);
void rp_sl_free(strlist *l);
int rp_worse(double a, double b);
void rp_fmt_e(char *buf, size_t n, double v);
const char *rp_tex(const char *s);
const char *rp_tex_num(double v, int bold);
void rp_path_in(char *out, size_t n, const char *dir, const char *name);
int rp_cmp_str(const void *a, const void *b);
int rp_list_files(const char *dir, const char *prefix, strlist *out);
void rp_fit(const double *x, const double *y, int n, double *slope, double *inter, double *r2);
int rp_out_open(outfile *o, const char *dir, const char *name);
int rp_out_close(outfile *o);
int rp_out_commit(outfile *o);
void rp_out_drop(outfile *o);
void rp_rm_flat_dir(const char *dir);
void rp_gp_begin(FILE *f, const char *base, const char *what);
void rp_gp_loop(FILE *f, const char *base, int w, int h);
void rp_gp_end(FILE *f);
void rp_gp_num(FILE *f, double v);
int rp_run_gnuplot(const char *dir, const char *script);
int rp_plot(const void *R, const char *pdir, const char *base, rp_gp_body body, const void *arg, strlist *made);

#endif
