/* study_lockstep.h — the per-precision half of kind = lockstep (study_lockstep_prec.c, compiled into rl64_…
 * and rl32_…; the runner's half is lockstep.c), and the note the gate reads from a kind = device study
 * (device.c). */
#ifndef RL_STUDY_LOCKSTEP_H
#define RL_STUDY_LOCKSTEP_H

#include <stddef.h>
#include "harness.h"

/* kind = lockstep, one point: MuJoCo's trajectory of a->c.model from its reset state (qpos0, qvel 0, ctrl 0,
   as `sim`), for a->steps (or a->duration) steps at a->dt (0: the model's).  Before MuJoCo's step k → k+1 its
   state (qpos, qvel, time, ctrl; for newton/cg also qacc_warmstart) is loaded into rigidlab, which takes ONE
   step with a->engine (newton | cg | avbd); the result is compared with MuJoCo's state k+1.  Per step to
   a->c.out: step,time,err_qpos,err_qvel,ncon,mj_ncon,iter,converged,mj_iter,mj_converged (iterations and
   converged flags of the step; avbd: NaN) with err_qpos = ‖Δqpos‖∞/max(‖qpos‖∞, 1), err_qvel
   likewise (qpos, qvel: MuJoCo's at k+1), ncon the engine's contacts of the step (avbd: its own contact
   points), mj_ncon MuJoCo's.  AVBD enters each step through rl_avbd_from_generalized, with its own
   multipliers of the previous step carried over (row λ, ρ of joints/equalities and the contact cache
   that rl_avbd_step matches by key); it is a hard model, so its errors measure a model difference.
   Returns 0 or RL_EXIT_BADINPUT (one-line message on stderr). */
int rl64_study_lockstep(const rl_sim_args *a);
int rl32_study_lockstep(const rl_sim_args *a);

/* from DIR/meta.csv (kind = device, device.c): "cuda rows absent: REASON" into NOTE and 1 when the study left
   rows out; else 0 */
int rl_study_absent_note(const char *dir, char *note, size_t n);

#endif
