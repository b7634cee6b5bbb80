/* rl_names.h — precision-carrying names for every public engine symbol.
 *
 * Sources are written with plain names (rl_model, rl_kinematics, …); this header
 * renames them to rl64_… or rl32_… according to the precision being compiled
 * (see rl_prec.h).  Every public type and function must be listed here: a missing
 * entry shows up as a duplicate-symbol link error when both libraries are linked.
 */
#ifndef RL_NAMES_H
#define RL_NAMES_H

#include "rl_prec.h"

/* types */
#define rl_model       RL_NAME(model)
#define rl_data        RL_NAME(data)
#define rl_option      RL_NAME(option)
#define rl_contact     RL_NAME(contact)
#define rl_solver_stat RL_NAME(solver_stat)
#define rl_geomview    RL_NAME(geomview)

/* model and data */
#define rl_model_alloc   RL_NAME(model_alloc)
#define rl_model_free    RL_NAME(model_free)
#define rl_model_copy    RL_NAME(model_copy)
#define rl_batch                   RL_NAME(batch)
#define rl_batch_create            RL_NAME(batch_create)
#define rl_batch_free              RL_NAME(batch_free)
#define rl_batch_step              RL_NAME(batch_step)
#define rl_batch_max_threads       RL_NAME(batch_max_threads)
#define rl_batch_reset             RL_NAME(batch_reset)
#define rl_batch_set_reset_state   RL_NAME(batch_set_reset_state)
#define rl_batch_set_state         RL_NAME(batch_set_state)
#define rl_batch_env_model         RL_NAME(batch_env_model)
#define rl_batch_env_rebuild       RL_NAME(batch_env_rebuild)
#define rl_model_name    RL_NAME(model_name)
#define rl_model_derive  RL_NAME(model_derive)
#define rl_data_alloc    RL_NAME(data_alloc)
#define rl_data_free     RL_NAME(data_free)
#define rl_data_reset    RL_NAME(data_reset)
#define rl_arena_reals   RL_NAME(arena_reals)
#define rl_arena_take    RL_NAME(arena_take)
#define rl_arena_mark    RL_NAME(arena_mark)
#define rl_arena_release RL_NAME(arena_release)
#define rl_state_hash    RL_NAME(state_hash)

/* smooth dynamics stages */
#define rl_kinematics     RL_NAME(kinematics)
#define rl_com_pos        RL_NAME(com_pos)
#define rl_crb            RL_NAME(crb)
#define rl_factor_m       RL_NAME(factor_m)
#define rl_factor_ld      RL_NAME(factor_ld)
#define rl_solve_ld       RL_NAME(solve_ld)
#define rl_solve_m        RL_NAME(solve_m)
#define rl_mul_m          RL_NAME(mul_m)
#define rl_full_m         RL_NAME(full_m)
#define rl_com_vel        RL_NAME(com_vel)
#define rl_rne            RL_NAME(rne)
#define rl_rne_com        RL_NAME(rne_com)
#define rl_rne_local      RL_NAME(rne_local)
#define rl_solve_m_local  RL_NAME(solve_m_local)
#define rl_local_arena    RL_NAME(local_arena)
#define rl_local_frames   RL_NAME(local_frames)
#define rl_joint_dofs     RL_NAME(joint_dofs)
#define rl_passive        RL_NAME(passive)
#define rl_actuation      RL_NAME(actuation)
#define rl_smooth_acc     RL_NAME(smooth_acc)
#define rl_fwd_position   RL_NAME(fwd_position)
#define rl_fwd_velocity   RL_NAME(fwd_velocity)
#define rl_forward_smooth RL_NAME(forward_smooth)
#define rl_jac_point      RL_NAME(jac_point)
#define rl_check_state    RL_NAME(check_state)
#define rl_state_finite   RL_NAME(state_finite)

/* tendons */
#define rl_tendon          RL_NAME(tendon)
#define rl_tendon_velocity RL_NAME(tendon_velocity)
#define rl_tendon_passive  RL_NAME(tendon_passive)

/* integration */
#define rl_integrate_pos RL_NAME(integrate_pos)
#define rl_euler         RL_NAME(euler)
#define rl_rk4           RL_NAME(rk4)
#define rl_step_smooth   RL_NAME(step_smooth)
#define rl_rk4_with      RL_NAME(rk4_with)
#define rl_forward       RL_NAME(forward)
#define rl_step          RL_NAME(step)

/* collision (engine/collide*.c) */
#define rl_collide_function  RL_NAME(collide_function)
#define rl_geom_view         RL_NAME(geom_view)
#define rl_make_frame        RL_NAME(make_frame)
#define rl_geom_pair_allowed RL_NAME(geom_pair_allowed)
#define rl_contact_params    RL_NAME(contact_params)
#define rl_collision         RL_NAME(collision)
#define rl_collision_arena   RL_NAME(collision_arena)

/* constraint rows (engine/constraint.c) */
#define rl_make_constraint      RL_NAME(make_constraint)
#define rl_constraint_arena     RL_NAME(constraint_arena)
#define rl_make_impedance       RL_NAME(make_impedance)
#define rl_reference_constraint RL_NAME(reference_constraint)
#define rl_solimp_impedance     RL_NAME(solimp_impedance)
#define rl_solref_kb            RL_NAME(solref_kb)

/* solvers (engine/solver*.c) */
#define rl_constraint_solve           RL_NAME(constraint_solve)
#define rl_solver_arena               RL_NAME(solver_arena)
#define rl_solver_check_options       RL_NAME(solver_check_options)
#define rl_solver_resolution          RL_NAME(solver_resolution)
#define rl_solver_meaninertia         RL_NAME(solver_meaninertia)
#define rl_solver_factor_kind         RL_NAME(solver_factor_kind)
#define rl_solver_cost                RL_NAME(solver_cost)
#define rl_solver_observer            RL_NAME(solver_observer)
#define rl_constraint_solve_observed  RL_NAME(constraint_solve_observed)
#define rl_solver_hessian_dense       RL_NAME(solver_hessian_dense)
#define rl_hfactor                    RL_NAME(hfactor)
#define rl_hfactor_layout             RL_NAME(hfactor_layout)
#define rl_hfactor_factor             RL_NAME(hfactor_factor)
#define rl_hfactor_solve              RL_NAME(hfactor_solve)
#define rl_hfactor_update             RL_NAME(hfactor_update)
#define rl_aba                        RL_NAME(aba)
#define rl_aba_arena                  RL_NAME(aba_arena)
#define rl_aba_init                   RL_NAME(aba_init)
#define rl_aba_prepare                RL_NAME(aba_prepare)
#define rl_aba_solve                  RL_NAME(aba_solve)
#define rl_aba_init_recursive         RL_NAME(aba_init_recursive)
#define rl_aba_init_m                 RL_NAME(aba_init_m)
#define rl_aba_prepare_m              RL_NAME(aba_prepare_m)
#define rl_smooth_acc_recursive       RL_NAME(smooth_acc_recursive)
#define rl_euler_recursive            RL_NAME(euler_recursive)
#define rl_mul_m_recursive            RL_NAME(mul_m_recursive)
#define rl_constraint_solve_recursive RL_NAME(constraint_solve_recursive)
#define rl_recursive_pays             RL_NAME(recursive_pays)
#define rl_forward_path               RL_NAME(forward_path)
#define rl_step_path                  RL_NAME(step_path)

/* AVBD (engine/avbd*.c) */
/* types */
#define rl_avbd              RL_NAME(avbd)
#define rl_avbd_param        RL_NAME(avbd_param)
#define rl_avbd_row          RL_NAME(avbd_row)
#define rl_avbd_contact      RL_NAME(avbd_contact)
#define rl_avbd_stat         RL_NAME(avbd_stat)
#define rl_avbd_pose         RL_NAME(avbd_pose)
#define rl_avbd_joint        RL_NAME(avbd_joint)
#define rl_avbd_bam          RL_NAME(avbd_bam)
#define rl_avbd_load         RL_NAME(avbd_load)
#define rl_avbd_compound     RL_NAME(avbd_compound)
#define rl_avbd_compound_val RL_NAME(avbd_compound_val)
/* functions */
#define rl_avbd_build            RL_NAME(avbd_build)
#define rl_avbd_free             RL_NAME(avbd_free)
#define rl_avbd_from_generalized RL_NAME(avbd_from_generalized)
#define rl_avbd_to_generalized   RL_NAME(avbd_to_generalized)
#define rl_avbd_load_contacts    RL_NAME(avbd_load_contacts)
#define rl_avbd_step             RL_NAME(avbd_step)
#define rl_avbd_step_maximal     RL_NAME(avbd_step_maximal)
#define rl_avbd_default_param    RL_NAME(avbd_default_param)
#define rl_avbd_dynamic_pairs    RL_NAME(avbd_dynamic_pairs)
#define rl_avbd_openmp           RL_NAME(avbd_openmp)

#endif
