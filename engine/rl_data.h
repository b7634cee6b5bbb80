/* rl_data.h — the mutable simulation data (MuJoCo's mjData counterpart).
 *
 * One allocation per rl_data: all arrays and a scratch arena used by the stages
 * for temporaries (no malloc inside a step).  Arrays are declared by one X-macro
 * list (the "field registry"): X(name, count, width, unit, meaning) with count a
 * model size.  The same list produces the struct, its allocation, the state hash, the
 * field reference docs/fields.md (`rigidlab fields --markdown`) and the names and
 * units of verify's quantity table.
 */
#ifndef RL_DATA_H
#define RL_DATA_H

#include <stddef.h>
#include <stdint.h>
#include "rl_model.h"

/* Every registry entry is X(name, count, width, unit, meaning) — or X(type, name, count, width, unit,
   meaning) for the typed lists — with count × width elements of type real (or type): count names a model
   size (rl_model.h), width the elements per item.  unit is the SI unit of one element ("1": dimensionless;
   "index", "enum" and "flag" for integers); "N or N·m" means N for a slide/free translational dof and N·m
   for a hinge/ball/free rotational dof, and likewise for the other "or" units.  A spatial 6-vector
   (rot:lin) holds its rotational part first.  `rigidlab fields --markdown` prints this list as
   docs/fields.md. */

/* state: what a step reads and writes (what the hash covers) */
#define RL_DATA_STATE(X)                                                                                          \
  X(qpos, nq, 1, "m or rad", "joint positions (free and ball joints: position, then unit quaternion w x y z)")    \
  X(qvel, nv, 1, "m/s or rad/s", "joint velocities")                                                              \
  X(ctrl, nu, 1, "actuator input", "controls (units of the actuator's gain: N, N·m, m or rad)")                   \
  X(qfrc_applied, nv, 1, "N or N·m", "applied generalized force")                                                 \
  X(act, na, 1, "actuator input", "actuator activations (the last na actuators, those with activation dynamics)") \
  X(mocap_pos, nmocap, 3, "m", "prescribed world position of each mocap body")                                    \
  X(mocap_quat, nmocap, 4, "1", "prescribed world orientation of each mocap body (quaternion w x y z)")

/* derived quantities, recomputed by the stages.  xpos_rel = xpos − xpos_parent and xanchor_rel = xanchor −
   xpos_body, formed by rl_kinematics from link-sized terms (not as differences of world positions): the
   local-frame recursions (smooth_local.c) take their lever arms from them.  cdof_local, body_shift and
   weld_shift are those recursions' geometry (rl_local_frames, called by rl_com_pos): motion subspaces at
   each dof's body COM, q_b − q_parent, and q_b − q_w with w the weld root of b's parent. */
#define RL_DATA_DERIVED(X)                                                                                      \
  X(qacc, nv, 1, "m/s² or rad/s²", "joint accelerations (after the constraint solve)")                          \
  X(xpos, nbody, 3, "m", "Cartesian position of each body frame")                                               \
  X(xquat, nbody, 4, "1", "Cartesian orientation of each body frame (unit quaternion w x y z)")                 \
  X(xmat, nbody, 9, "1", "Cartesian orientation of each body frame (rotation matrix, row-major)")               \
  X(xipos, nbody, 3, "m", "Cartesian position of each body's centre of mass")                                   \
  X(ximat, nbody, 9, "1", "Cartesian orientation of each body's inertia frame (rotation matrix, row-major)")    \
  X(xanchor, njnt, 3, "m", "Cartesian position of each joint's anchor")                                         \
  X(xaxis, njnt, 3, "1", "Cartesian direction of each joint's axis (unit vector)")                              \
  X(xpos_rel, nbody, 3, "m", "xpos minus the parent body's xpos, formed from link-sized terms")                 \
  X(xanchor_rel, njnt, 3, "m", "xanchor minus the joint's body xpos, formed from link-sized terms")             \
  X(xipos_rel, nbody, 3, "m", "R·ipos = xipos − xpos from link-sized terms (f32 kinematics, f64 local frames)") \
  X(geom_xpos, ngeom, 3, "m", "Cartesian position of each geom")                                                \
  X(geom_xmat, ngeom, 9, "1", "Cartesian orientation of each geom (rotation matrix, row-major)")                \
  X(site_xpos, nsite, 3, "m", "Cartesian position of each site")                                                \
  X(site_xmat, nsite, 9, "1", "Cartesian orientation of each site (rotation matrix, row-major)")                \
  X(subtree_com, nbody, 3, "m", "centre of mass of each body's subtree")                                        \
  X(cinert, nbody, 10, "kg·m², kg·m, kg",                                                                       \
    "body inertia about the subtree COM of the root, in world axes: I (xx yy zz xy xz yz), m·c (x y z), m")     \
  X(inert_local, nbody, 6, "kg·m²", "R·diag(J)·Rᵀ about the body's own COM, world axes (xx yy zz xy xz yz)")    \
  X(cdof, nv, 6, "1 (rot), m (lin)", "motion axis of each dof at the root's subtree COM (rot:lin)")             \
  X(cdof_local, nv, 6, "1 (rot), m (lin)", "motion axis of each dof at its own body's COM (rot:lin)")           \
  X(body_shift, nbody, 3, "m", "q_b − q_parent (the local-frame recursions' lever arms)")                       \
  X(weld_shift, nbody, 3, "m", "q_b − q_w, w the weld root of b's parent")                                      \
  X(ten_length, ntendon, 1, "m or rad", "tendon lengths (a fixed tendon: Σ coef·q over its joints)")            \
  X(ten_J, ntenJ, 1, "1 or m", "tendon Jacobian ∂length/∂q, dense (ntendon rows of nv)")                        \
  X(wrap_xpos, nwrappnt, 3, "m", "points of every spatial tendon path (sites, tangent points; 0 at a pulley)")  \
  X(crb, nbody, 10, "kg·m², kg·m, kg", "composite rigid-body inertia of each subtree (layout as cinert)")       \
  X(qM, nM, 1, "kg, kg·m or kg·m²", "joint-space inertia matrix M, sparse lower triangle (MuJoCo's qM layout)") \
  X(qLD, nM, 1, "kg, kg·m or kg·m²", "L'DL factor of M (D on the diagonal, L below it; layout as qM)")          \
  X(qLDiagInv, nv, 1, "1/kg or 1/(kg·m²)", "1 / D, the inverse diagonal of the L'DL factor")                    \
  X(cvel, nbody, 6, "rad/s (rot), m/s (lin)", "velocity of each body at the root's subtree COM (rot:lin)")      \
  X(cdof_dot, nv, 6, "rad/s (rot), m/s (lin)", "time derivative of cdof (per unit dof velocity)")               \
  X(ten_velocity, ntendon, 1, "m/s or rad/s", "tendon velocities ten_J · qvel")                                 \
  X(qfrc_bias, nv, 1, "N or N·m", "bias force c(qpos, qvel): Coriolis, centrifugal and gravitational")          \
  X(qfrc_passive, nv, 1, "N or N·m", "passive force: joint and tendon springs and dampers")                     \
  X(actuator_length, nu, 1, "m or rad", "actuator length (of its transmission)")                                \
  X(actuator_moment, nmoment, 1, "1 or m", "actuator moment arms ∂length/∂q, dense (nu rows of nv)")            \
  X(actuator_velocity, nu, 1, "m/s or rad/s", "actuator velocity")                                              \
  X(actuator_force, nu, 1, "N or N·m", "actuator force (in the transmission's units)")                          \
  X(qfrc_actuator, nv, 1, "N or N·m", "actuator force in joint space")                                          \
  X(qfrc_smooth, nv, 1, "N or N·m", "net unconstrained force: passive + actuator + applied − bias")             \
  X(qacc_smooth, nv, 1, "m/s² or rad/s²", "unconstrained acceleration M⁻¹ · qfrc_smooth")                       \
  X(qfrc_constraint, nv, 1, "N or N·m", "constraint force in joint space, Jᵀ · efc_force")                      \
  X(qacc_warmstart, nv, 1, "m/s² or rad/s²", "acceleration the constraint solver starts from")                  \
  X(act_dot, na, 1, "actuator input / s", "time derivative of act")

/* constraint rows (MuJoCo 2.2.2's efc_* arrays; nefc rows used of nefcmax), typed X(type, name, count, width,
   unit, meaning).  The Jacobian is row-sparse (CSR): row i has efc_J_rownnz[i] entries at efc_J_rowadr[i] in
   efc_J / efc_J_colind (columns ascending).  "row" units: those of the row's constraint coordinate (m or rad
   for its position, N or N·m for its force). */
#define RL_DATA_EFC(X)                                                                                           \
  X(int, efc_type, nefcmax, 1, "enum", "row type (RL_CNSTR_*, as MuJoCo's mjtConstraint)")                       \
  X(int, efc_id, nefcmax, 1, "index", "the equality, dof, joint or contact that made the row")                   \
  X(int, efc_J_rownnz, nefcmax, 1, "count", "non-zero entries in the row's Jacobian")                            \
  X(int, efc_J_rowadr, nefcmax, 1, "index", "the row's first entry in efc_J and efc_J_colind")                   \
  X(int, efc_J_colind, njmax, 1, "index", "the dof (column) of each Jacobian entry")                             \
  X(int, efc_state, nefcmax, 1, "enum", "the row's solver state (RL_CNSTRSTATE_*, as mjtConstraintState)")       \
  X(real, efc_J, njmax, 1, "row unit per dof unit", "constraint Jacobian entries (CSR)")                         \
  X(real, efc_pos, nefcmax, 1, "m or rad", "constraint position: equality violation, limit or contact distance") \
  X(real, efc_margin, nefcmax, 1, "m or rad", "inclusion margin of limit and contact rows")                      \
  X(real, efc_frictionloss, nefcmax, 1, "N or N·m", "friction loss of friction rows")                            \
  X(real, efc_diagApprox, nefcmax, 1, "1/kg or 1/(kg·m²)", "approximate diagonal of A = J M⁻¹ Jᵀ")               \
  X(real, efc_KBIP, nefcmax, 4, "1/s², 1/s, 1, 1/m",                                                             \
    "reference stiffness K, damping B, impedance I and impedance slope P of the row")                            \
  X(real, efc_D, nefcmax, 1, "kg or kg·m²", "constraint mass D = 1/R")                                           \
  X(real, efc_R, nefcmax, 1, "1/kg or 1/(kg·m²)", "regularizer R = (1 − I)/I · diagApprox")                      \
  X(real, efc_vel, nefcmax, 1, "m/s or rad/s", "constraint velocity J · qvel")                                   \
  X(real, efc_aref, nefcmax, 1, "m/s² or rad/s²", "reference acceleration −B · vel − K · I · (pos − margin)")    \
  X(real, efc_force, nefcmax, 1, "N or N·m", "constraint force (row space)")

/* run-time switches that a step reads (initialized from the model by rl_data_reset; change them
   between steps): equality constraints on/off (a suction gripper's weld), joint limit ranges. */
#define RL_DATA_RUNTIME(X)                                                                   \
  X(int, eq_active, neq, 1, "flag", "1: the equality constraint is active, 0: switched off") \
  X(real, jnt_range, njnt, 2, "m or rad", "joint limits (lower, upper) in force this step")

/* tendon paths (typed X(type, name, count, width, unit, meaning)): tendon k's points are wrap_xpos rows
   ten_wrapadr[k] … + ten_wrapnum[k] − 1, each tagged by wrap_obj (a geom id for the two tangent points of a
   wrap, −1 for a site, −2 for a pulley) */
#define RL_DATA_PATH(X)                                                             \
  X(int, ten_wrapadr, ntendon, 1, "index", "the tendon's first point in wrap_xpos") \
  X(int, ten_wrapnum, ntendon, 1, "count", "points in the tendon's path")           \
  X(int, wrap_obj, nwrappnt, 1, "index", "per path point: the wrap geom, −1 (a site) or −2 (a pulley)")

/* constraint row types (values as mjtConstraint) and solver states (as mjtConstraintState) */
enum {
  RL_CNSTR_EQUALITY = 0,
  RL_CNSTR_FRICTION_DOF = 1,
  RL_CNSTR_FRICTION_TENDON = 2,
  RL_CNSTR_LIMIT_JOINT = 3,
  RL_CNSTR_LIMIT_TENDON = 4,
  RL_CNSTR_CONTACT_FRICTIONLESS = 5,
  RL_CNSTR_CONTACT_PYRAMIDAL = 6,
  RL_CNSTR_CONTACT_ELLIPTIC = 7
};
enum {
  RL_CNSTRSTATE_SATISFIED = 0,
  RL_CNSTRSTATE_QUADRATIC = 1,
  RL_CNSTRSTATE_LINEARNEG = 2,
  RL_CNSTRSTATE_LINEARPOS = 3,
  RL_CNSTRSTATE_CONE = 4
};

/* One contact (MuJoCo 2.2.2's mjContact without the H field).  frame rows: normal (from geom1
   toward geom2), tangent 1, tangent 2.  dist < 0 is penetration; pos is midway between the surfaces. */
typedef struct rl_contact {
  real dist;
  real pos[3];
  real frame[9];
  real includemargin; /* margin − gap: the row is active when dist < includemargin */
  real friction[5];   /* slide, slide, spin, roll, roll */
  real solref[RL_NREF];
  real solimp[RL_NIMP];
  real mu; /* friction used for the cone (friction[0]) */
  int dim; /* condim 1, 3, 4 or 6 */
  int geom1, geom2;
  int exclude;     /* 0: include (MuJoCo's convention) */
  int efc_address; /* first constraint row, −1 if none */
} rl_contact;

/* Per-iteration solver statistics (MuJoCo's mjSolverStat). */
typedef struct rl_solver_stat {
  real improvement; /* cost reduction, scaled by 1/(mean inertia · max(1, nv)) */
  real gradient;    /* scaled gradient norm */
  real lineslope;   /* scaled directional derivative at the line-search start */
  int nactive;      /* active constraint rows */
  int nchange;      /* rows whose state changed */
  int neval;        /* cost evaluations in the line search */
  int nupdate;      /* Cholesky rank-1 updates (rows refactored) for the next direction: 0 on the last iteration */
} rl_solver_stat;
#define RL_NSOLVER 1000

/* warning counters (MuJoCo's warning[]): counted, never fatal */
enum {
  RL_WARN_BADQPOS,
  RL_WARN_BADQVEL,
  RL_WARN_BADQACC,
  RL_WARN_CONTACTFULL,
  RL_WARN_BADCTRL,
  RL_WARN_BADGEOM,
  RL_WARN_IMPLICIT, /* the implicit integrator's factor of M − h·qDeriv failed (zero pivot): Euler step taken */
  RL_NWARN
};

/* stages of the step profile (rl_data.prof): position (kinematics, com, composite inertia, M's factor),
   collision, velocity (com velocities, passive and bias forces), actuation, smooth (unconstrained q̈),
   constraint (rows: Jacobians, impedance, reference acceleration), solve (the constrained q̈), integrate
   (the time step: Euler's damped update or RK4's stages beyond their forward passes) */
enum {
  RL_PROF_POSITION,
  RL_PROF_COLLISION,
  RL_PROF_VELOCITY,
  RL_PROF_ACTUATION,
  RL_PROF_SMOOTH,
  RL_PROF_CONSTRAINT,
  RL_PROF_SOLVE,
  RL_PROF_INTEGRATE,
  RL_NPROF
};

typedef struct rl_data {
  real time;
  int warning[RL_NWARN];
  /* contacts (collision stage) */
  int ncon;
  rl_contact *contact; /* nconmax entries */
  /* constraint rows: ne equality rows, then nf friction rows, then limits and contacts */
  int ne, nf, nefc, nnzJ;
  /* solver */
  int solver_iter;                   /* iterations used in the last solve */
  int solver_converged;              /* 1 if the last solve met its tolerance */
  rl_solver_stat solver[RL_NSOLVER]; /* first min(solver_iter, RL_NSOLVER) entries valid */
#define RL_X_EFC(type, name, count, width, unit, meaning) type *name;
  RL_DATA_EFC(RL_X_EFC)
  RL_DATA_RUNTIME(RL_X_EFC)
  RL_DATA_PATH(RL_X_EFC)
#undef RL_X_EFC
#define RL_X_DATA(name, count, width, unit, meaning) real *name;
  RL_DATA_STATE(RL_X_DATA)
  RL_DATA_DERIVED(RL_X_DATA)
#undef RL_X_DATA
  /* scratch arena: a stack of reals, reset at the start of each public stage */
  real *arena;
  size_t arena_size; /* in reals */
  size_t arena_top;  /* in reals */
  size_t arena_high; /* high-water mark, in reals */
  void *buffer;      /* the single allocation */
  /* stage profile, off unless prof_clock is set: then rl_forward and rl_step add each stage's elapsed
     prof_clock() (the caller's clock and unit) into prof[RL_PROF_*]; the caller zeroes prof */
  double (*prof_clock)(void);
  double prof[RL_NPROF];
  /* Newton's sparse Cholesky (rl_sparse, solver_sparse.c): pattern, analysis and factor kept between
     solves, allocated on first use by CHOLMOD (outside the arena), released by rl_data_free */
  struct rl_sparse *sparse;
} rl_data;

/* Allocate data for model m, state set to qpos0, zero velocity and controls. */
rl_data *rl_data_alloc(const rl_model *m);
void rl_data_free(rl_data *d);
/* Reset the state to qpos0, zero qvel/ctrl/qfrc_applied, time 0, warnings 0. */
void rl_data_reset(const rl_model *m, rl_data *d);
/* Mocap poses reset to where the model places the mocap bodies (body_pos, body_quat). */
void rl_mocap_reset(const rl_model *m, rl_data *d);
/* FNV-1a hash of the state fields (bit patterns), per precision. */
uint64_t rl_state_hash(const rl_model *m, const rl_data *d);

#endif
