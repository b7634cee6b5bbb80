/* rl_names_solver.h — precision-carrying names of the solver module (see rl_names.h). */
#ifndef RL_NAMES_SOLVER_H
#define RL_NAMES_SOLVER_H

#endif
