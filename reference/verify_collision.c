/* verify_collision.c — verify stage 'collision' (see verify.h). */
#include "verify.h"

static void state(rl_vctx *c, rl_vq *q) { (void)c; (void)q; }
const rl_vmodule rl_vmod_collision = {.stage = RL_STAGE_COLLISION, .nq = 0, .names = NULL, .state = state};
