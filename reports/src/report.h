/* report.h — `rigidlab report DIR`: plots (gnuplot, SVG + PNG) and tables (Markdown, LaTeX
 * booktabs) from the CSVs of a results directory alone; nothing is simulated.
 *
 * Reads DIR/verify.csv and DIR/traj_compare.csv (required when DIR holds any of a verify run's CSVs),
 * every DIR/bench_*.csv, DIR/contact_<scene>_<engine>.csv and DIR/meta.csv (optional: a section says
 * when they are absent), and every `rigidlab run` study in the tree under DIR (each folder holding
 * metrics.csv, with meta.csv and spec.ini: DIR/studies/<name>/, DIR/<name>/ or DIR itself; report_studies.h:
 * one plot per study after its kind, a summary section and a LaTeX table each).  A DIR with neither is
 * an error that says where it looked.  Every CSV read is checked (header, field count, numbers) before anything is written.
 * Writes DIR/plots/ (the generated .gp scripts next to their .svg and .png outputs, and
 * gnuplot.log), DIR/summary.md and DIR/tables.tex.  Everything is first written under temporary
 * names (DIR/plots.tmp.PID, *.tmp.PID) and renamed into place at the end, so a failure never
 * leaves a half-written report. */
#ifndef RL_REPORT_H
#define RL_REPORT_H

#include <stdio.h>

/* Returns 0, or 2 (bad input: a missing or malformed CSV, an unwritable directory, gnuplot
 * failing) with a one-line message in err naming the file (and line).  Progress lines go to log
 * (may be NULL). */
int rl_report(const char *dir, FILE *log, char *err, int errlen);

#endif
