/* rl_data.h — the mutable simulation data (MuJoCo's mjData counterpart).
 *
 * One allocation per rl_data: all arrays and a scratch arena used by the stages
 * for temporaries (no malloc inside a step).  Arrays are declared by one X-macro
 * list (the "field registry"): X(name, count, width) with count a model size.  The
 * same list produces allocation, the state hash, CSV columns and field-by-field
 * diffs, so a divergence always names the field.
 */
#ifndef RL_DATA_H
#define RL_DATA_H

#include <stddef.h>
#include <stdint.h>
#include "rl_model.h"

/* state: what a step reads and writes (what the hash covers) */
#define RL_DATA_STATE(X) \
  X(qpos, nq, 1)         \
  X(qvel, nv, 1)         \
  X(ctrl, nu, 1)         \
  X(qfrc_applied, nv, 1)

/* derived quantities, recomputed by the stages */
#define RL_DATA_DERIVED(X)  \
  X(qacc, nv, 1)            \
  X(xpos, nbody, 3)         \
  X(xquat, nbody, 4)        \
  X(xmat, nbody, 9)         \
  X(xipos, nbody, 3)        \
  X(ximat, nbody, 9)        \
  X(xanchor, njnt, 3)       \
  X(xaxis, njnt, 3)         \
  X(geom_xpos, ngeom, 3)    \
  X(geom_xmat, ngeom, 9)    \
  X(subtree_com, nbody, 3)  \
  X(cinert, nbody, 10)      \
  X(cdof, nv, 6)            \
  X(crb, nbody, 10)         \
  X(qM, nM, 1)              \
  X(qLD, nM, 1)             \
  X(qLDiagInv, nv, 1)       \
  X(cvel, nbody, 6)         \
  X(cdof_dot, nv, 6)        \
  X(qfrc_bias, nv, 1)       \
  X(qfrc_passive, nv, 1)    \
  X(actuator_length, nu, 1) \
  X(actuator_velocity, nu, 1) \
  X(actuator_force, nu, 1)  \
  X(qfrc_actuator, nv, 1)   \
  X(qfrc_smooth, nv, 1)     \
  X(qacc_smooth, nv, 1)     \
  X(qfrc_constraint, nv, 1)

/* warning counters (MuJoCo's warning[]): counted, never fatal */
enum { RL_WARN_BADQPOS, RL_WARN_BADQVEL, RL_WARN_BADQACC, RL_WARN_CONTACTFULL, RL_WARN_BADCTRL, RL_NWARN };

typedef struct rl_data {
  real time;
  int warning[RL_NWARN];
#define RL_X_DATA(name, count, width) real *name;
  RL_DATA_STATE(RL_X_DATA)
  RL_DATA_DERIVED(RL_X_DATA)
#undef RL_X_DATA
  /* scratch arena: a stack of reals, reset at the start of each public stage */
  real *arena;
  size_t arena_size;  /* in reals */
  size_t arena_top;   /* in reals */
  size_t arena_high;  /* high-water mark, in reals */
  void *buffer;       /* the single allocation */
} rl_data;

/* Allocate data for model m, state set to qpos0, zero velocity and controls. */
rl_data *rl_data_alloc(const rl_model *m);
void rl_data_free(rl_data *d);
/* Reset the state to qpos0, zero qvel/ctrl/qfrc_applied, time 0, warnings 0. */
void rl_data_reset(const rl_model *m, rl_data *d);
/* Take n reals from the arena (NULL on overflow: the arena is sized at allocation). */
real *rl_arena_take(rl_data *d, size_t n);
/* Arena mark/release: every stage releases what it took. */
size_t rl_arena_mark(const rl_data *d);
void rl_arena_release(rl_data *d, size_t mark);
/* FNV-1a hash of the state fields (bit patterns), per precision. */
uint64_t rl_state_hash(const rl_model *m, const rl_data *d);

#endif
