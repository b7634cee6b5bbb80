/* rl_arena.h — the scratch arena of rl_data: one block of reals, sized at rl_data_alloc for the largest
 * temporary any stage needs (rl_arena_reals), used as a stack: a stage takes what it needs and releases
 * it to the mark it started at (engine/arena.c). */
#ifndef RL_ARENA_H
#define RL_ARENA_H

#include "rl_data.h"

/* Reals the arena of model m holds: the largest of the stages' needs (integrators, local-frame
   recursions, collision, constraint rows, solvers) plus a per-body margin. */
size_t rl_arena_reals(const rl_model *m);
/* the share of rl_arena_reals the actuation and fluid stages add (0 without them) */
size_t rl_actuation_arena(const rl_model *m);
/* the implicit integrator's share (rl_implicit, rl_qderiv; 0 under the other integrators) */
size_t rl_implicit_arena(const rl_model *m);
/* Take n reals from the arena (NULL on overflow: the arena is sized at allocation). */
real *rl_arena_take(rl_data *d, size_t n);
/* Arena mark/release: every stage releases what it took. */
size_t rl_arena_mark(const rl_data *d);
void rl_arena_release(rl_data *d, size_t mark);

#endif
