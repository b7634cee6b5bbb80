/* states.h — reproducible test states for stage-by-stage comparison (precision-free).
 *
 * Half are drawn at random (qpos within joint ranges, unit quaternions, Gaussian qvel,
 * ctrl within ctrlrange, activations within actrange, mocap poses near the model's), half are sampled along a MuJoCo trajectory from the model's
 * initial state under random piecewise-constant controls, with small perturbations, so
 * that contact-rich states are covered.  Seeded GSL mt19937: same seed, same states. */
#ifndef RL_STATES_H
#define RL_STATES_H

#include <mujoco/mujoco.h>

typedef struct rl_states {
  int n, nq, nv, nu, na, nmocap;
  double *qpos, *qvel, *ctrl;           /* n × nq, n × nv, n × nu */
  double *act, *mocap_pos, *mocap_quat; /* n × na, n × 3 nmocap, n × 4 nmocap */
} rl_states;

int rl_states_draw(const mjModel *m, int n, unsigned long seed, rl_states *out);
/* rl_states_draw with D (MuJoCo data of m, or of a model with m's sizes) for the trajectory half: the caller's
   scratch, overwritten (NULL: made and freed here; a model with a large nstack makes that cost seconds) */
int rl_states_draw_on(const mjModel *m, mjData *d, int n, unsigned long seed, rl_states *out);
/* point the pair's act/mocap inputs (rl_pair) at state k's */
#define rl_states_inputs(S, p, k)                                                                              \
  ((p)->act = (S)->act + (size_t)(k) * (S)->na, (p)->mocap_pos = (S)->mocap_pos + (size_t)(k)*3 * (S)->nmocap, \
   (p)->mocap_quat = (S)->mocap_quat + (size_t)(k)*4 * (S)->nmocap)
void rl_states_free(rl_states *s);

/* Start state from a keyframe given by name or index; −1 if not found. */
int rl_find_key(const mjModel *m, const char *key);

#endif
