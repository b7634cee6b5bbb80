/* report_studies.h — the `rigidlab run` studies in a results tree (every folder under DIR holding
 * metrics.csv, meta.csv and spec.ini, as the runner writes them: DIR/studies/<name>/ after tools/run, DIR/<name>/
 * after `rigidlab run --out DIR` or `rigidlab merge`, or DIR itself): loaded and checked, then plotted
 * (one plot per study after its kind; see report_studies.c), summarised in summary.md and tabulated in
 * tables.tex.  A tree without studies has none (not an error). */
#ifndef RL_REPORT_STUDIES_H
#define RL_REPORT_STUDIES_H

#include "report_core.h"

typedef struct {
  char name[128], kind[32], description[512], dir[4400];
  table m, meta;
  int has_meta;
  int c_point, c_engine, c_prec, c_dt, c_metric, c_value;
} rs_study;

typedef struct {
  rs_study *s;
  int n;
} rs_studies;

/* every study folder (metrics.csv) in the tree under DIR, DIR included; *nsearched the folders looked in.
   0 (none is not an error), or 2 with the error line (rp_fail) */
int rs_load(const char *dir, rs_studies *S, int *nsearched);
void rs_free(rs_studies *S);
/* the study plots into PDIR (names study_<name>[_steps], added to MADE); 0 or 2 */
int rs_plots(const rs_studies *S, const char *pdir, strlist *made);
void rs_summary(const rs_studies *S, FILE *f, const strlist *plots);
void rs_tex(const rs_studies *S, FILE *f);

#endif
