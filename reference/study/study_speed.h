/* study_speed.h — the per-precision half of kind = speed: its timing, in ../bench.c (compiled into rl64_… and
 * rl32_…; the runner's half is speed.c). */
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

#endif
