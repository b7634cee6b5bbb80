/* collide.c — collision stage: broad phase, pair filters, contact parameters (see rl_collide.h). */
#include "rl_engine.h"
#include "rl_narrow.h"

size_t rl_collision_arena(const rl_model *m) { (void)m; return 0; }
