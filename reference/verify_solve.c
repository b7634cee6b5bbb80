/* verify_solve.c — verify stage 'solve' (see verify.h). */
#include "verify.h"

static void state(rl_vctx *c, rl_vq *q) { (void)c; (void)q; }
const rl_vmodule rl_vmod_solve = {.stage = RL_STAGE_SOLVE, .nq = 0, .names = NULL, .state = state};
