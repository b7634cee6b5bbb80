/* rl_solver.h — the soft-constraint solvers (issue 4): Newton and CG with exact line search on
 * the piecewise-quadratic cost, pyramidal and elliptic cones, convex and signorini resolution. */
#ifndef RL_SOLVER_H
#define RL_SOLVER_H

#include "rl_data.h"

/* Solve for qacc given qacc_smooth, M (qM, qLD) and the rows in d->efc_*; writes qacc, efc_force,
   efc_state, qfrc_constraint, solver statistics.  Dispatches on m->opt.solver. */
void rl_constraint_solve(const rl_model *m, rl_data *d);

/* arena reals the solvers may take */
size_t rl_solver_arena(const rl_model *m);

#endif
