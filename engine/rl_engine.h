/* rl_engine.h — the public engine API (one precision per compilation, see rl_prec.h).
 *
 * Every pipeline stage is a public function f(const rl_model *m, rl_data *d) so that
 * tests and `rigidlab verify` can run and compare one stage at a time.  Stages read
 * only what earlier stages wrote, in this order:
 *
 *   position: rl_kinematics → rl_com_pos → rl_crb → rl_factor_m_step
 *   velocity: rl_com_vel → rl_passive → rl_rne (qfrc_bias)
 *   actuation: rl_actuation
 *   acceleration: rl_smooth_acc (qfrc_smooth, qacc_smooth)
 *   integration: rl_euler | rl_rk4
 */
#ifndef RL_ENGINE_H
#define RL_ENGINE_H

#include "rl_data.h"
#include "rl_arena.h"
#include "rl_collide.h"
#include "rl_constraint.h"
#include "rl_solver.h"

/* Status codes (never exit() from the library). */
typedef enum { RL_OK = 0, RL_ERR_INPUT = 2, RL_ERR_UNSUPPORTED = 3, RL_ERR_NUMERIC = 4 } rl_status;

/* --- position stages --- */
/* Forward kinematics: body frames x = x_parent + R_parent·pos, q = q_parent ⊗ quat ⊗ joint motions;
   joint anchors/axes in world; inertial frames; geom frames. */
void rl_kinematics(const rl_model *m, rl_data *d);
/* subtree centres of mass, composite-frame inertias cinert (about the root subtree COM) and
   motion subspaces cdof = [ω; v] of every dof at that point. */
void rl_com_pos(const rl_model *m, rl_data *d);
/* Composite rigid body algorithm: M_ij = cdof_iᵀ·crb_(body i)·cdof_j along the dof tree, + armature. */
void rl_crb(const rl_model *m, rl_data *d);
/* Sparse LᵀDL factorization of qM along the dof tree (no fill-in): qLD, qLDiagInv. */
void rl_factor_m(const rl_model *m, rl_data *d);
/* qLD, qLDiagInv as the pipeline makes them (rl_fwd_position): f64 rl_factor_m; f32 (RL_LOCAL_FRAMES) reads
   the factor off the articulated-body elimination at each body's COM (rl_factor_m_local), which keeps the
   accuracy that a factor of M formed in float loses (needs rl_com_pos) */
void rl_factor_m_step(const rl_model *m, rl_data *d);
/* In-place LᵀDL factorization of a matrix stored in qM's sparse layout (LD), with 1/D in diaginv. */
void rl_factor_ld(const rl_model *m, real *LD, real *diaginv);
/* x ← (LᵀDL)⁻¹·x for a factor made by rl_factor_ld. */
void rl_solve_ld(const rl_model *m, const real *LD, const real *diaginv, real *x);
/* x = M⁻¹·b for n right-hand sides (stride nv), using qLD (x may alias b). */
void rl_solve_m(const rl_model *m, const rl_data *d, real *x, const real *b, int n);
/* r = M·v using the sparse qM. */
void rl_mul_m(const rl_model *m, const rl_data *d, real *r, const real *v);
/* dense nv×nv copy of M (row-major) from qM. */
void rl_full_m(const rl_model *m, const rl_data *d, real *dense);
/* Translational (jacp, 3×nv) and rotational (jacr, 3×nv) Jacobians of world point p attached
   to body b (either may be NULL). */
void rl_jac_point(const rl_model *m, const rl_data *d, real *jacp, real *jacr, const real p[3], int b);

/* --- velocity stages --- */
/* cvel (spatial velocity of each body at the root subtree COM) and cdof_dot = cvel ×ₘ cdof. */
void rl_com_vel(const rl_model *m, rl_data *d);
/* Joint springs −k(q − q_spring) (quaternion difference for ball/free) and dof damping −b·q̇. */
void rl_passive(const rl_model *m, rl_data *d);
/* Recursive Newton–Euler with q̈ = 0: qfrc_bias = C(q,q̇)q̇ + g(q).  rl_rne_com in f64, rl_rne_local in
   f32 (RL_LOCAL_FRAMES in rl_prec.h). */
void rl_rne(const rl_model *m, rl_data *d);
/* in MuJoCo's com frame (needs cvel) */
void rl_rne_com(const rl_model *m, rl_data *d);
/* with every body's quantities at its own COM (smooth_local.c; needs rl_com_pos, not cvel): equal in exact
   arithmetic, link-sized numbers in float */
void rl_rne_local(const rl_model *m, rl_data *d);

/* --- actuation (actuation.c) --- */
/* Transmissions (joint: hinge/slide length = gear·q, ball/free; slider-crank; site), activation rates
   act_dot (integrator, filter, muscle), force = gain·(act or ctrl) + bias (fixed, affine, muscle; clamped),
   qfrc_actuator = Σ momentᵀ·force. */
void rl_actuation(const rl_model *m, rl_data *d);
/* ∂(muscle gain)/∂(actuator velocity) at length len, velocity vel (MuJoCo 2.2.2's mjd_muscleGain_vel) */
real rl_muscle_gain_vel(real len, real vel, const real lr[2], real acc0, const real *prm);
/* act += h·rate, clamped to actrange where the actuator is actlimited */
void rl_act_advance(const rl_model *m, rl_data *d, const real *rate, real h);
/* fluid forces of MuJoCo 2.2.2's inertia-box model added to qfrc_passive (fluid.c; rl_passive calls it) */
void rl_fluid(const rl_model *m, rl_data *d);
/* 1 if body b has a geom of the ellipsoid fluid model (then every geom of b uses it, fluid.c) */
int rl_fluid_ellipsoid_body(const rl_model *m, int b);
/* semi-axes of geom g's fluid ellipsoid (MuJoCo's mju_geomSemiAxes) */
void rl_geom_semiaxes(const rl_model *m, int g, real s[3]);
/* the sides of body b's equivalent inertia box (the inertia-box fluid model) */
void rl_fluid_box(const rl_model *m, int b, real box[3]);
/* body b's angular and linear velocity at point x, minus the wind, in frame R (the fluid models' local velocity) */
void rl_fluid_velocity(const rl_model *m, const rl_data *d, int b, const real x[3], const real R[9], real w[3],
                       real v[3]);

/* --- acceleration --- */
/* qfrc_smooth = qfrc_passive − qfrc_bias + qfrc_actuator + qfrc_applied; qacc_smooth = M⁻¹·qfrc_smooth
   by qLD (rl_factor_m_step). */
void rl_smooth_acc(const rl_model *m, rl_data *d);
/* the same without qLD (recursive path): rl_solve_m_local in both precisions; −1 when the arena is too
   small */
int rl_smooth_acc_recursive(const rl_model *m, rl_data *d);

/* motion subspaces of joint j's dofs at the point anchor + off (rl_com_pos's axes), 6 reals per dof into s */
void rl_joint_dofs(const rl_model *m, const rl_data *d, int j, const real off[3], real *s);
/* the same at two points at once (anchor + off into s, anchor + off2 into s2) */
void rl_joint_dofs2(const rl_model *m, const rl_data *d, int j, const real off[3], const real off2[3], real *s,
                    real *s2);
/* the local-frame geometry (cdof_local, body_shift, weld_shift; smooth_local.c) that rl_rne_local and
   rl_solve_m_local read (with inert_local): called by the recursive path in f64; rl_com_pos makes the same in
   f32 (RL_LOCAL_FRAMES) with body_shift and weld_shift from rl_local_shifts and cdof_local beside cdof */
void rl_local_frames(const rl_model *m, rl_data *d);
void rl_local_shifts(const rl_model *m, rl_data *d);
/* x = (M + h·diag(b))⁻¹·x (b NULL: M⁻¹) by the articulated-body recursion at each body's COM
   (smooth_local.c); −1 when the arena is too small (x unchanged). */
int rl_solve_m_local(const rl_model *m, rl_data *d, real *x, real h, const real *b);
/* qLD, qLDiagInv by the same recursion's elimination (M is not factored; f32 rl_factor_m_step); −1 when the
   arena is too small (qLD unchanged) */
int rl_factor_m_local(const rl_model *m, rl_data *d);
/* arena reals rl_rne_local and rl_solve_m_local take at most */
size_t rl_local_arena(const rl_model *m);

/* --- groups --- */
/* tendon lengths, dense Jacobians ten_J and path points (wrap_xpos, wrap_obj, ten_wrapadr/num); needs
   site_xpos (rl_kinematics) and cdof/subtree_com (rl_com_pos) */
void rl_tendon(const rl_model *m, rl_data *d);
/* ten_velocity = ten_J · qvel */
void rl_tendon_velocity(const rl_model *m, rl_data *d);
/* qfrc_passive += J_k·(−k_k·(L_k − L_spring,k) − b_k·L̇_k) over the tendons (called by rl_passive) */
void rl_tendon_passive(const rl_model *m, rl_data *d);
void rl_fwd_position(const rl_model *m, rl_data *d);
void rl_fwd_velocity(const rl_model *m, rl_data *d);
/* All smooth stages; qacc = qacc_smooth (no constraints). */
void rl_forward_smooth(const rl_model *m, rl_data *d);
/* The bad-state checks (MuJoCo's mj_checkPos/Vel/Acc and its ctrl test).  A value is bad when it is not
   finite or |x| > RL_MAXVAL.  Policy (docs/reliability.md): bad qpos or qvel (at the step's start) or bad
   qacc (after the forward pass) → warning[BADQPOS|BADQVEL|BADQACC] counted and the state reset to qpos0
   with zero qvel, ctrl, qfrc_applied and warm start (time and the counters kept); a bad control after
   clamping to ctrlrange → warning[BADCTRL] counted and the actuators driven by zero controls for that
   evaluation (d->ctrl left as set, as MuJoCo).  Each returns 1 when nothing was bad, 0 after acting. */
#define RL_MAXVAL 1e10
int rl_state_ok(const real *x, int n);
/* rl_state_ok's test, header-only for engine/cuda/'s device code: every x_i finite and |x_i| ≤ RL_MAXVAL */
RL_HD int rl_state_ok_hd(const real *x, int n) {
  for (int i = 0; i < n; i++)
    if (!rl_isfinite(x[i]) || rl_fabs(x[i]) > (real)RL_MAXVAL) return 0;
  return 1;
}
void rl_reset_bad(const rl_model *m, rl_data *d, int which);
int rl_check_state(const rl_model *m, rl_data *d);
int rl_check_acc(const rl_model *m, rl_data *d);
int rl_check_ctrl(const rl_model *m, rl_data *d);
real rl_ctrl_clamped(const rl_model *m, const rl_data *d, int u);
/* control u clamped to its ctrlrange when ctrllimited (and clamping is not disabled): c = clip(ctrl_u, lo, hi);
   the formula of rl_ctrl_clamped, header-only so that engine/cuda/'s device code shares it */
RL_HD real rl_ctrl_clamp(const rl_model *m, const rl_data *d, int u) {
  real c = d->ctrl[u];
  const real *cr = m->actuator_ctrlrange + 2 * u;
  if (m->actuator_ctrllimited[u] && !(m->opt.disableflags & RL_DSBL_CLAMPCTRL))
    c = c < cr[0] ? cr[0] : (c > cr[1] ? cr[1] : c);
  return c;
}
/* 1 if every qpos and qvel entry is finite with |x| ≤ 1e10 (the bounds of rl_check_state), else 0 */
int rl_state_finite(const rl_model *m, const rl_data *d);

/* --- integration --- */
/* qpos ← qpos ⊕ h·qvel (quaternion exponential on ball/free joints, body-frame angular velocity). */
void rl_integrate_pos(const rl_model *m, real *qpos, const real *qvel, real h);
/* Semi-implicit Euler as MuJoCo's mj_Euler: with dof damping, (M + h·diag(b))·qacc = qfrc; then
   qvel += h·qacc, qpos ⊕= h·qvel. */
void rl_euler(const rl_model *m, rl_data *d);
/* q̇ ← q̇ + h·q̈, q ← q ⊕ h·q̇, act ← act + h·act_dot (clamped), t += h: the update every Euler-type step ends with */
void rl_advance(const rl_model *m, rl_data *d, const real *qacc);
/* D = ∂(qfrc_passive + qfrc_actuator − qfrc_bias)/∂q̇ (MuJoCo 2.2.2's qDeriv), dense nv×nv row-major, zero
   outside the dof-tree pattern (implicit.c).  Needs the position and velocity stages and the actuation.
   0, or −1 when the arena is too small (the model's integrator is not implicit). */
int rl_qderiv(const rl_model *m, rl_data *d, real *D);
/* MuJoCo 2.2.2's implicit step: (M − h·D)·q̈' = qfrc_smooth + qfrc_constraint, then rl_advance.  Needs qM.
   0, or −1 (nothing advanced) on a zero pivot or a too small arena. */
int rl_implicit(const rl_model *m, rl_data *d);
/* rl_euler without qM (recursive path, and f32): (M + h·diag(b))⁻¹ by rl_solve_m_local; −1 when the arena is
   too small (nothing advanced). */
int rl_euler_recursive(const rl_model *m, rl_data *d);
/* Classic RK4 on (qpos, qvel) as MuJoCo's mj_RungeKutta(…, 4); d must hold a forward pass at the start. */
void rl_rk4(const rl_model *m, rl_data *d);
/* RK4 with another forward function at the stages (rl_forward for constrained dynamics). */
void rl_rk4_with(const rl_model *m, rl_data *d, void (*forward)(const rl_model *, rl_data *));
/* One step of the smooth (constraint-free) dynamics: forward + integrator from m->opt. */
void rl_step_smooth(const rl_model *m, rl_data *d);

/* --- the whole pipeline with constraints (forward.c) --- */
/* position stages → rl_collision → velocity stages → actuation → smooth acceleration →
   rl_make_constraint → rl_constraint_solve (warm start: qacc_warmstart).  On a deep tree the pass may take
   the recursive path (see forward.c), which never forms crb/qM/qLD: callers that read them after
   rl_forward / rl_step call rl_crb and rl_factor_m_step themselves. */
void rl_forward(const rl_model *m, rl_data *d);
/* One step: state check, rl_forward, the model's integrator (RK4 stages use rl_forward);
   qacc_warmstart ← qacc for the next step. */
void rl_step(const rl_model *m, rl_data *d);
/* rl_forward / rl_step with the path chosen: AUTO (rl_forward's choice), FACTORED (always M and its LᵀDL),
   RECURSIVE (the recursive path whenever the options and rows allow it, else factored).  rl_forward_path
   returns the path taken; RK4's stages use rl_forward. */
enum { RL_PATH_AUTO = 0, RL_PATH_FACTORED = 1, RL_PATH_RECURSIVE = 2 };
int rl_forward_path(const rl_model *m, rl_data *d, int path);
void rl_step_path(const rl_model *m, rl_data *d, int path);

#endif
