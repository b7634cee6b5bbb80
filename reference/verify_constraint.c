/* verify_constraint.c — verify stage 'constraint' (see verify.h). */
#include "verify.h"

static void state(rl_vctx *c, rl_vq *q) { (void)c; (void)q; }
const rl_vmodule rl_vmod_constraint = {.stage = RL_STAGE_CONSTRAINT, .nq = 0, .names = NULL, .state = state};
