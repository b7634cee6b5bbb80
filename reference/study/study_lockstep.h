/* study_lockstep.h — the runner's study kinds `lockstep` (engines vs MuJoCo) and `device` (CPU vs
 * CUDA): spec checks, the worker side, the metrics and the meta.csv notes (study_lockstep.c), and the
 * per-precision lock-step run (study_lockstep_prec.c, compiled into rl64_… and rl32_…). */
#ifndef RL_STUDY_LOCKSTEP_H
#define RL_STUDY_LOCKSTEP_H

#include <stddef.h>
#include "harness.h"

struct rl_spec;
struct rl_point;
struct rl_csv;

/* kind = lockstep, one point: MuJoCo's trajectory of a->c.model from its reset state (qpos0, qvel 0, ctrl 0,
   as `sim`), for a->steps (or a->duration) steps at a->dt (0: the model's).  Before MuJoCo's step k → k+1 its
   state (qpos, qvel, time, ctrl; for newton/cg also qacc_warmstart) is loaded into rigidlab, which takes ONE
   step with a->engine (newton | cg | avbd); the result is compared with MuJoCo's state k+1.  Per step to
   a->c.out: step,time,err_qpos,err_qvel,ncon,mj_ncon with err_qpos = ‖Δqpos‖∞/max(‖qpos‖∞, 1), err_qvel
   likewise (qpos, qvel: MuJoCo's at k+1), ncon the engine's contacts of the step (avbd: its own contact
   points), mj_ncon MuJoCo's.  AVBD enters each step through rl_avbd_from_generalized, with its own
   multipliers of the previous step carried over (row λ, ρ of joints/equalities and the contact cache
   that rl_avbd_step matches by key); it is a hard model, so its errors measure a model difference.
   Returns 0 or RL_EXIT_BADINPUT (one-line message on stderr). */
int rl64_study_lockstep(const rl_sim_args *a);
int rl32_study_lockstep(const rl_sim_args *a);

/* the kinds' constraints on a spec (device axis, engines); 0 or −1 with a one-line err "FILE:LINE: …" */
int rl_lockstep_kind_check(const struct rl_spec *s, char *err, int errlen);
/* 1 when point Q cannot be run on this build (kind = device, device = cuda without a CUDA engine), with the
   reason in WHY (may be NULL); 0 otherwise */
int rl_study_point_absent(const struct rl_spec *s, const struct rl_point *q, char *why, size_t whylen);
/* the study's extra meta.csv rows (key,value) from all its points PTS[0..n−1] (every shard writes the same):
   cuda_rows,absent, cuda_reason,"…" and cuda_points_not_run,N when the study has points this build cannot run */
void rl_study_meta_rows(struct rl_csv *w, const struct rl_spec *s, const struct rl_point *pts, int n);
/* from DIR/meta.csv: "cuda rows absent: REASON" into NOTE and 1 when the study left rows out; else 0 */
int rl_study_absent_note(const char *dir, char *note, size_t n);
/* worker, done-file and metrics of the two kinds (study_run.c dispatches here) */
int rl_lockstep_run_point(const char *dir, const struct rl_spec *s, const struct rl_point *q, rl_sim_args *sa);
void rl_lockstep_done_path(char *p, size_t n, const char *dir, const struct rl_spec *s, const struct rl_point *q);
int rl_lockstep_metrics(struct rl_csv *w, const char *dir, const struct rl_spec *s, const struct rl_point *q, char *err,
                        int errlen);

#endif
