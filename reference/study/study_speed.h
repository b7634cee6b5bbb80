/* study_speed.h — the runner's study kinds speed and analytic (spec.h: kind = speed | analytic):
 * the per-precision timing in bench.c and the runner's side in study_speed.c and study_analytic.c. */
#ifndef RL_STUDY_SPEED_H
#define RL_STUDY_SPEED_H

#include <stddef.h>
#include "harness.h"

/* kind = speed: the whole step of a->engine (newton | cg | avbd) and mj_step on a->c.model (options a->c.opts,
   time step a->dt, 0: the model's), timed alternately in this thread's CPU time as `rigidlab bench --stages step`
   does in wall time:
   REPS repetitions, each N steps of ours then N of MuJoCo's from bench's contact-rich state; ns per step of
   repetition r into tr[r] (ours) and tm[r] (MuJoCo), in run order.  Returns 0; −1 with a one-line WHY when
   the engine cannot run the model (AVBD's model limits); RL_EXIT_BADINPUT (message on stderr). */
int rl64_bench_step_reps(const rl_sim_args *a, int reps, long n, double *tr, double *tm, char *why, int whylen);
int rl32_bench_step_reps(const rl_sim_args *a, int reps, long n, double *tr, double *tm, char *why, int whylen);

struct rl_spec;
struct rl_point;
struct rl_csv;
/* the workers: the point's files (study_speed.c: traj_ID.speed.csv; study_analytic.c: traj_ID.csv) */
int rl_study_speed_run(const char *dir, const struct rl_spec *s, const struct rl_point *q, rl_sim_args *sa);
int rl_study_analytic_run(const char *dir, const struct rl_spec *s, const struct rl_point *q, rl_sim_args *sa);
/* the parent: the point's metrics rows into W; 0 or −1 with err */
int rl_study_speed_metrics(struct rl_csv *w, const char *dir, const struct rl_spec *s, const struct rl_point *q,
                           char *err, int errlen);
int rl_study_analytic_metrics(struct rl_csv *w, const char *dir, const struct rl_spec *s, const struct rl_point *q,
                              char *err, int errlen);
/* kind = analytic, at spec load: 0 when SCENE declares a check it satisfies (study_analytic.c), else −1 with a
   one-line err naming the scene */
int rl_study_analytic_check_scene(const char *scene, char *err, int errlen);
/* the point's time step: q->dt, else the scene's; NAN with err when the scene does not load */
double rl_study_point_dt(const struct rl_point *q, char *err, int errlen);

#endif
