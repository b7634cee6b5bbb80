/* constraint.c — constraint rows (see rl_constraint.h). */
#include "rl_engine.h"

size_t rl_constraint_arena(const rl_model *m) { (void)m; return 0; }
