/* runner.h — `rigidlab run | merge | check`: expand experiment specs (spec.h) into points, run each
 * point's trajectory in forked workers, compute tidy per-point metrics, and gate them against
 * baselines.  Layout of a results folder OUT/STUDY/: spec.ini (the spec's text), meta.csv (key,value),
 * traj_<point-id>.csv (the `sim --csv` columns), metrics.csv
 * (study,point,engine,precision,dt,metric,value,step,index). */
#ifndef RL_RUNNER_H
#define RL_RUNNER_H

#include "csv.h"
#include "harness.h"

#define RL_RUN_MAXSPECS 64

typedef struct rl_run_args {
  const char *specs[RL_RUN_MAXSPECS];
  int nspec;
  const char *out;               /* results root (default "results") */
  int jobs;                      /* worker processes (0: all cores) */
  int shard_i, shard_n;          /* run points with index % n == i − 1 (n = 0: all) */
  int resume;                    /* skip points whose trajectory CSV is already whole */
  const char *opts[RL_MAX_OPTS]; /* extra --opt KEY=VALUE for every point (after the sweep's) */
  int nopts;
} rl_run_args;

typedef struct rl_check_args {
  const char *results;  /* OUT or OUT/STUDY */
  const char *baseline; /* default reports/baselines */
  int update;           /* rewrite the baselines from RESULTS */
} rl_check_args;

int rl_run(const rl_run_args *a);
/* merge shard results DIRS (each OUT or OUT/STUDY) into OUT/STUDY */
int rl_merge(const char *out, const char *const *dirs, int ndirs);
int rl_check(const rl_check_args *a);

/* a trajectory CSV in memory */
typedef struct rl_traj {
  int nrow, ncol;
  double *v; /* nrow × ncol */
  int c_step, c_qpos, nq, c_iter, c_conv, c_pen, c_anchor, c_energy;
} rl_traj;
int rl_traj_read(const char *path, rl_traj *t, char *err, int errlen);
/* (numeric CSVs: csv.h's rl_numcsv_read) */
/* mkdir -p PATH; 0 or −1 (errno) */
int rl_mkdirs(const char *path);
void rl_traj_free(rl_traj *t);
/* running value r[0..nrow−1] of METRIC (the metric is r[nrow−1]); ref is needed by the qpos errors.
   Returns 0, or −1 when the metric cannot be computed (no reference). */
int rl_metric_series(int metric, const rl_traj *t, const rl_traj *ref, double *r);
/* the step the metric's value refers to (argmax for running maxima, the last step otherwise) */
long rl_metric_step(int metric, const rl_traj *t, const double *r);

#endif
