/* rl_names_solver.h — precision-carrying names of the solver module (see rl_names.h). */
#ifndef RL_NAMES_SOLVER_H
#define RL_NAMES_SOLVER_H

#define rl_solver_check_options RL_NAME(solver_check_options)
#define rl_solver_resolution RL_NAME(solver_resolution)
#define rl_solver_meaninertia RL_NAME(solver_meaninertia)
#define rl_solver_factor_kind RL_NAME(solver_factor_kind)
#define rl_solver_cost RL_NAME(solver_cost)
#define rl_solver_observer RL_NAME(solver_observer)
#define rl_constraint_solve_observed RL_NAME(constraint_solve_observed)
#define rl_solver_hessian_dense RL_NAME(solver_hessian_dense)
#define rl_hfactor RL_NAME(hfactor)
#define rl_hfactor_layout RL_NAME(hfactor_layout)
#define rl_hfactor_factor RL_NAME(hfactor_factor)
#define rl_hfactor_solve RL_NAME(hfactor_solve)
#define rl_hfactor_update RL_NAME(hfactor_update)
#define rl_aba RL_NAME(aba)
#define rl_aba_arena RL_NAME(aba_arena)
#define rl_aba_init RL_NAME(aba_init)
#define rl_aba_prepare RL_NAME(aba_prepare)
#define rl_aba_solve RL_NAME(aba_solve)
#define rl_aba_init_recursive RL_NAME(aba_init_recursive)
#define rl_aba_init_m RL_NAME(aba_init_m)
#define rl_aba_prepare_m RL_NAME(aba_prepare_m)
#define rl_smooth_acc_recursive RL_NAME(smooth_acc_recursive)
#define rl_euler_recursive RL_NAME(euler_recursive)
#define rl_mul_m_recursive RL_NAME(mul_m_recursive)
#define rl_constraint_solve_recursive RL_NAME(constraint_solve_recursive)
#define rl_recursive_pays RL_NAME(recursive_pays)
#define rl_forward_path RL_NAME(forward_path)
#define rl_step_path RL_NAME(step_path)

#endif
