/* pair.h — a model loaded twice: MuJoCo's mjModel and the rigidlab model built from it, with
 * the same --opt overrides applied to both (compiled per precision). */
#ifndef RL_PAIR_H
#define RL_PAIR_H

#include "harness.h"
#include "rl_import.h"

#define rl_pair            RL_NAME(pair)
#define rl_pair_load       RL_NAME(pair_load)
#define rl_pair_load_capacity RL_NAME(pair_load_capacity)
#define rl_pair_free       RL_NAME(pair_free)
#define rl_set_state       RL_NAME(set_state)
#define rl_constraint_free RL_NAME(constraint_free)
#define rl_round           RL_NAME(round)
#define rl_mj_copy_inputs  RL_NAME(mj_copy_inputs)
#define rl_pair_data       RL_NAME(pair_data)

typedef struct rl_pair {
  mjModel *mjm;
  rl_model *m;
  const char *path; /* the MJCF, for messages */
  /* the inputs of the state rl_set_state puts next, besides qpos/qvel/ctrl (NULL: act 0, mocap poses as the
     model places them): activations (na), mocap positions (3 nmocap) and quaternions (4 nmocap) */
  const double *act, *mocap_pos, *mocap_quat;
} rl_pair;

/* Load, apply options, import.  Returns RL_EXIT_OK or RL_EXIT_BADINPUT with a one-line err. */
int rl_pair_load(rl_pair *p, const rl_common_args *c, double dt, char *err, int errlen);
/* rl_pair_load with MuJoCo's contact capacity raised to nconmax when that is more than the model's (0: as the
   model says); then MuJoCo's njmax to rigidlab's row capacity for those contacts (rl_model.nefcmax) and its
   nstack to MuJoCo's own default heuristic for that njmax, where those are more than the model's.  rigidlab's
   contact capacity follows MuJoCo's nconmax as always. */
int rl_pair_load_capacity(rl_pair *p, const rl_common_args *c, double dt, int nconmax, char *err, int errlen);
void rl_pair_free(rl_pair *p);
/* rl_data_alloc for the pair's model, checked: when the memory is not there, one line on stderr naming the
   model and its capacities, every temporary CSV removed, and exit with RL_EXIT_BADINPUT (as MuJoCo's own
   allocation failures end the process through its error handler); never returns NULL */
rl_data *rl_pair_data(const rl_pair *p);
/* Put a double-precision state into rigidlab data (rounded to real) and, rounded the same way,
   into MuJoCo's data (mjd may be NULL), so both start from the identical state; act and the mocap poses
   from p->act, p->mocap_pos, p->mocap_quat (see rl_pair). */
void rl_set_state(const rl_pair *p, rl_data *d, mjData *mjd, const double *qpos, const double *qvel,
                  const double *ctrl);
/* copy the inputs besides qpos/qvel/ctrl (act, mocap poses) from one mjData to another */
void rl_mj_copy_inputs(const mjModel *mjm, mjData *dst, const mjData *src);
/* x rounded to the working precision and back */
double rl_round(double x);
/* 1 if the model, under its disable flags, can never produce a constraint row; else 0 and
   a description of the first element that can ("joint 'knee' is limited"). */
int rl_constraint_free(const rl_pair *p, char *why, int whylen);

#endif
