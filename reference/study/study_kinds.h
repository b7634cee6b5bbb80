/* study_kinds.h — the per-precision halves of the study kinds refinement, fp32, residuals and convergence
 * (refinement.c, fp32.c, residuals.c, convergence.c hold the runner's halves), compiled into rl64_… and
 * rl32_… (study_prec.c).  The table of kinds is kinds.h. */
#ifndef RL_STUDY_KINDS_H
#define RL_STUDY_KINDS_H

#include "harness.h"

/* NSTEPS steps of engine a->engine (newton | cg | avbd) from each of the N f64 states (qpos[N×nq], qvel[N×nv]),
   at a->dt (0: the model's), each from a zero warm start (avbd: rl_avbd_from_generalized, fresh multipliers); the stepped states into qpos_out[N×nq], qvel_out[N×nv].  nq/nv must
   match the model.  Returns 0 or RL_EXIT_BADINPUT (one-line message on stderr). */
int rl64_study_onestep(const rl_sim_args *a, long nsteps, int n, int nq, int nv, const double *qpos, const double *qvel,
                       double *qpos_out, double *qvel_out);
int rl32_study_onestep(const rl_sim_args *a, long nsteps, int n, int nq, int nv, const double *qpos, const double *qvel,
                       double *qpos_out, double *qvel_out);

/* kind = refinement, the ODE reference: a->c.model from the initial state (QPOS0[nq], QVEL0[nq]) integrated to
   TFINAL as the ODE q̈ = M⁻¹(q)·qfrc_smooth(q, q̇) (rigidlab's forward_smooth; gsl_odeiv2 rk8pd, abs/rel
   tolerance 1e-12); the final qpos into qpos_out[nq].  Returns 0; 1 when the model can make constraint
   rows (rl_constraint_free) or is not hinge-only (nq != nv), with the reason in WHY; −1 on failure
   (one-line message on stderr). */
int rl64_study_ode(const rl_sim_args *a, double tfinal, int nq, const double *qpos0, const double *qvel0,
                   double *qpos_out, char *why, int whylen);
int rl32_study_ode(const rl_sim_args *a, double tfinal, int nq, const double *qpos0, const double *qvel0,
                   double *qpos_out, char *why, int whylen);

/* Run a->engine (newton | cg | mujoco | avbd) and write per step to a->c.out the physical residuals
   of the step's contact forces f and the post-step contact velocities v = J·qvel⁺ (J: the step's
   contact Jacobian, i.e. at the state the forces were solved at):
   step,time,signorini,coulomb,mdp,ncp,penetration,ncon with, over the step's contacts,
     signorini = max |v_n f_n|, coulomb = max(‖f_t‖ − μ f_n, 0), mdp = max(f_t·v_t + ‖f_t‖‖v_t‖),
     ncp = max |min(f_n, v_n)|, penetration = max(−dist).  Pyramidal rows are mapped back to
   f_n = Σ edges, f_t,j = μ_j (f_j+ − f_j−), v_n = (v_j+ + v_j−)/2, v_t,j = (v_j+ − v_j−)/(2μ_j).
   avbd (its own contacts, as `sim` runs it): f = −λ per contact (normal, t1, t2; N), v = the relative velocity of
   the contact points from the recovered post-step body velocities, dist = the normal gap at the step's end
   (AVBD solves its forces at the end-of-step poses); ncon = AVBD's contact points. */
int rl64_study_residuals(const rl_sim_args *a);
int rl32_study_residuals(const rl_sim_args *a);

/* kind = convergence: NSTATES states of a MuJoCo trajectory of a->c.model from qpos0, STRIDE steps apart
   (state s after (s+1)·STRIDE steps); per state MuJoCo's problem (mj_forward, solver = a->engine, no warm
   start, tolerance 0, NITER iterations) is copied in (rl_ref_copy_mujoco) and rigidlab's a->engine run
   from qacc_smooth with iterations = 1..NITER (convex resolution, tolerance 0): per iteration to a->c.out
   state,step,iter,gap,rel_gap,grad,mj_grad,nefc with gap = cost(a_it) − cost(a*) (the LAPACK optimum,
   lapack_ref.h), rel_gap = gap/|cost(a*)|, grad = rigidlab's scaled gradient (solver[it−1].gradient of the
   NITER run), mj_grad = MuJoCo's mjSolverStat gradient (0 past the solver's last iteration). */
int rl64_study_convergence(const rl_sim_args *a, int nstates, long stride, int niter);
int rl32_study_convergence(const rl_sim_args *a, int nstates, long stride, int niter);

/* kind = convergence, engine = avbd: the same NSTATES states of MuJoCo's trajectory, each loaded into AVBD
   (rl_avbd_from_generalized) and its step solved by the dense global reference (avbd_ref.h); per sweep budget
   it = 1..NITER (tolerance 0, fresh multipliers: the iterate after exactly `it` sweeps) to a->c.out
   state,step,iter,dist_m,dist_rad,stat_force,stat_torque,primal_m,primal_rad,sweeps with dist_m / dist_rad =
   max over bodies of the COM distance (m) and rotation angle (rad) to the reference solution, stat_force /
   stat_torque = AVBD's stationarity residual with its final multipliers, translational (N) and rotational
   (N m) rows apart, primal_m / primal_rad = max |C̃| of its length (m) and angle (rad) rows, sweeps = the
   sweeps the step used; then stop_flagged, stop_false (the step under the point's own stopping test, judged
   against the reference solved after it with AVBD's final active set: rl_avbd_ref_begin / _finish) and
   ref_unconverged (that reference's Newton did not converge: left out of the fraction).  A state whose step
   has contacts, joint limits or dry friction (no active set is known before the step) gets no per-sweep rows,
   only one row with iter = 0 carrying sweeps, the verdict and the stop's distance. */
int rl64_study_convergence_avbd(const rl_sim_args *a, int nstates, long stride, int niter);
int rl32_study_convergence_avbd(const rl_sim_args *a, int nstates, long stride, int niter);
/* kind = convergence, engine = avbd: AVBD along its own trajectory (not reloaded from MuJoCo's states: each step
   carries its warm start — multipliers, contact cache, static-friction anchors — as a simulation does), NSTEPS
   steps from MuJoCo's reset state under the point's parameters; each step's dense reference (avbd_ref.h) is set
   up at its start and solved after it, and one row per step goes to a->c.out:
   step,sweeps,converged,checked,basis,omitted,ref_unconverged,dist_m,dist_rad,claim_m,claim_rad,ratio,stop_false,
   nonfinite
   with checked = flagged converged, the reference converged and covering every term of the step; basis =
   rl_avbd_ref.basis; dist_* the iterate's distance to the reference solution (nan unless checked), claim_* the
   distance the stopping test claims (stat.tol_lin m, stat.tol_ang rad), ratio = max(dist_m/claim_m,
   dist_rad/claim_rad), stop_false = checked and ratio > 1 (avbd_judge.h: the same judgement as
   tools/avbd-own-stops).  A step that ends non-finite is undone by rl_avbd_step (as in `sim`) and the trajectory
   goes on: its row has nonfinite = 1, checked, basis, omitted, ref_unconverged and stop_false 0, dist_* and ratio
   nan. */
int rl64_study_own_stops_avbd(const rl_sim_args *a, long nsteps);
int rl32_study_own_stops_avbd(const rl_sim_args *a, long nsteps);

#endif
