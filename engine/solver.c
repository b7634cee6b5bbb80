/* solver.c — Newton and CG (see rl_solver.h). */
#include "rl_engine.h"

size_t rl_solver_arena(const rl_model *m) { (void)m; return 0; }
