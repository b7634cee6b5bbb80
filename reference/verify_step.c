/* verify_step.c — verify stage 'step' (see verify.h). */
#include "verify.h"

static void state(rl_vctx *c, rl_vq *q) { (void)c; (void)q; }
const rl_vmodule rl_vmod_step = {.stage = RL_STAGE_STEP, .nq = 0, .names = NULL, .state = state};
