/* study_prec.h — what the per-precision parts of the study kinds share (compiled into rl64_… and rl32_…;
 * include only from files built once per precision). */
#ifndef RL_STUDY_PREC_H
#define RL_STUDY_PREC_H

#include "harness.h"
#include "pair.h"
#include "rl_avbd.h"

#define study_load_engine RL_NAME(study_load_engine)

/* The engine of a study point: a->engine among newton, cg and (where ALLOW_MUJOCO / ALLOW_AVBD) mujoco and
   avbd; the pair loaded, the soft solver set and checked, AVBD built into *AM with rl_avbd_default_param's
   contact rule (NULL for the other engines), *MUJOCO set for mujoco.  0, or RL_EXIT_BADINPUT after one
   line on stderr (nothing left to free). */
int study_load_engine(rl_pair *p, const rl_sim_args *a, int allow_mujoco, int allow_avbd, int *mujoco, rl_avbd **am);

#endif
