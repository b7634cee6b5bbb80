/* rl_data.h — the mutable simulation data (MuJoCo's mjData counterpart).
 *
 * One allocation per rl_data: all arrays and a scratch arena used by the stages
 * for temporaries (no malloc inside a step).  Arrays are declared by one X-macro
 * list (the "field registry"): X(name, count, width) with count a model size.  The
 * same list produces allocation, the state hash, CSV columns and field-by-field
 * diffs, so a divergence always names the field.
 */
#ifndef RL_DATA_H
#define RL_DATA_H

#include <stddef.h>
#include <stdint.h>
#include "rl_model.h"

/* state: what a step reads and writes (what the hash covers) */
#define RL_DATA_STATE(X) \
  X(qpos, nq, 1)         \
  X(qvel, nv, 1)         \
  X(ctrl, nu, 1)         \
  X(qfrc_applied, nv, 1)

/* derived quantities, recomputed by the stages.  xpos_rel = xpos − xpos_parent and xanchor_rel = xanchor −
   xpos_body, formed by rl_kinematics from link-sized terms (not as differences of world positions): the
   local-frame recursions (smooth_local.c) take their lever arms from them.  cdof_local, body_shift and
   weld_shift are those recursions' geometry (rl_local_frames, called by rl_com_pos): motion subspaces at
   each dof's body COM, q_b − q_parent, and q_b − q_w with w the weld root of b's parent. */
#define RL_DATA_DERIVED(X)  \
  X(qacc, nv, 1)            \
  X(xpos, nbody, 3)         \
  X(xquat, nbody, 4)        \
  X(xmat, nbody, 9)         \
  X(xipos, nbody, 3)        \
  X(ximat, nbody, 9)        \
  X(xanchor, njnt, 3)       \
  X(xaxis, njnt, 3)         \
  X(xpos_rel, nbody, 3)     \
  X(xanchor_rel, njnt, 3)   \
  X(geom_xpos, ngeom, 3)    \
  X(geom_xmat, ngeom, 9)    \
  X(subtree_com, nbody, 3)  \
  X(cinert, nbody, 10)      \
  X(cdof, nv, 6)            \
  X(cdof_local, nv, 6)      \
  X(body_shift, nbody, 3)   \
  X(weld_shift, nbody, 3)   \
  X(crb, nbody, 10)         \
  X(qM, nM, 1)              \
  X(qLD, nM, 1)             \
  X(qLDiagInv, nv, 1)       \
  X(cvel, nbody, 6)         \
  X(cdof_dot, nv, 6)        \
  X(qfrc_bias, nv, 1)       \
  X(qfrc_passive, nv, 1)    \
  X(actuator_length, nu, 1) \
  X(actuator_velocity, nu, 1) \
  X(actuator_force, nu, 1)  \
  X(qfrc_actuator, nv, 1)   \
  X(qfrc_smooth, nv, 1)     \
  X(qacc_smooth, nv, 1)     \
  X(qfrc_constraint, nv, 1) \
  X(qacc_warmstart, nv, 1)

/* constraint rows (MuJoCo 2.2.2's efc_* arrays; nefc rows used of nefcmax), typed X(type, name, count, width).
   The Jacobian is row-sparse (CSR): row i has efc_J_rownnz[i] entries at efc_J_rowadr[i] in
   efc_J / efc_J_colind (columns ascending). */
#define RL_DATA_EFC(X)                 \
  X(int, efc_type, nefcmax, 1)         \
  X(int, efc_id, nefcmax, 1)           \
  X(int, efc_J_rownnz, nefcmax, 1)     \
  X(int, efc_J_rowadr, nefcmax, 1)     \
  X(int, efc_J_colind, njmax, 1)       \
  X(int, efc_state, nefcmax, 1)        \
  X(real, efc_J, njmax, 1)             \
  X(real, efc_pos, nefcmax, 1)         \
  X(real, efc_margin, nefcmax, 1)      \
  X(real, efc_frictionloss, nefcmax, 1) \
  X(real, efc_diagApprox, nefcmax, 1)  \
  X(real, efc_KBIP, nefcmax, 4)        \
  X(real, efc_D, nefcmax, 1)           \
  X(real, efc_R, nefcmax, 1)           \
  X(real, efc_vel, nefcmax, 1)         \
  X(real, efc_aref, nefcmax, 1)        \
  X(real, efc_force, nefcmax, 1)

/* run-time switches that a step reads (initialized from the model by rl_data_reset; change them
   between steps): equality constraints on/off (a suction gripper's weld), joint limit ranges. */
#define RL_DATA_RUNTIME(X)      \
  X(int, eq_active, neq, 1)     \
  X(real, jnt_range, njnt, 2)

/* constraint row types (values as mjtConstraint) and solver states (as mjtConstraintState) */
enum { RL_CNSTR_EQUALITY = 0, RL_CNSTR_FRICTION_DOF = 1, RL_CNSTR_FRICTION_TENDON = 2, RL_CNSTR_LIMIT_JOINT = 3,
       RL_CNSTR_LIMIT_TENDON = 4, RL_CNSTR_CONTACT_FRICTIONLESS = 5, RL_CNSTR_CONTACT_PYRAMIDAL = 6,
       RL_CNSTR_CONTACT_ELLIPTIC = 7 };
enum { RL_CNSTRSTATE_SATISFIED = 0, RL_CNSTRSTATE_QUADRATIC = 1, RL_CNSTRSTATE_LINEARNEG = 2,
       RL_CNSTRSTATE_LINEARPOS = 3, RL_CNSTRSTATE_CONE = 4 };

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
  real mu;            /* friction used for the cone (friction[0]) */
  int dim;            /* condim 1, 3, 4 or 6 */
  int geom1, geom2;
  int exclude;        /* 0: include (MuJoCo's convention) */
  int efc_address;    /* first constraint row, −1 if none */
} rl_contact;

/* Per-iteration solver statistics (MuJoCo's mjSolverStat). */
typedef struct rl_solver_stat {
  real improvement; /* cost reduction, scaled by 1/(mean inertia · max(1, nv)) */
  real gradient;    /* scaled gradient norm */
  real lineslope;   /* scaled directional derivative at the line-search start */
  int nactive;      /* active constraint rows */
  int nchange;      /* rows whose state changed */
  int neval;        /* cost evaluations in the line search */
  int nupdate;      /* Cholesky rank-1 updates */
} rl_solver_stat;
#define RL_NSOLVER 1000

/* warning counters (MuJoCo's warning[]): counted, never fatal */
enum { RL_WARN_BADQPOS, RL_WARN_BADQVEL, RL_WARN_BADQACC, RL_WARN_CONTACTFULL, RL_WARN_BADCTRL, RL_WARN_BADGEOM,
       RL_NWARN };

typedef struct rl_data {
  real time;
  int warning[RL_NWARN];
  /* contacts (collision stage) */
  int ncon;
  rl_contact *contact;   /* nconmax entries */
  /* constraint rows: ne equality rows, then nf friction rows, then limits and contacts */
  int ne, nf, nefc, nnzJ;
  /* solver */
  int solver_iter;                    /* iterations used in the last solve */
  int solver_converged;               /* 1 if the last solve met its tolerance */
  rl_solver_stat solver[RL_NSOLVER];  /* first min(solver_iter, RL_NSOLVER) entries valid */
#define RL_X_EFC(type, name, count, width) type *name;
  RL_DATA_EFC(RL_X_EFC)
  RL_DATA_RUNTIME(RL_X_EFC)
#undef RL_X_EFC
#define RL_X_DATA(name, count, width) real *name;
  RL_DATA_STATE(RL_X_DATA)
  RL_DATA_DERIVED(RL_X_DATA)
#undef RL_X_DATA
  /* scratch arena: a stack of reals, reset at the start of each public stage */
  real *arena;
  size_t arena_size;  /* in reals */
  size_t arena_top;   /* in reals */
  size_t arena_high;  /* high-water mark, in reals */
  void *buffer;       /* the single allocation */
} rl_data;

/* Allocate data for model m, state set to qpos0, zero velocity and controls. */
rl_data *rl_data_alloc(const rl_model *m);
void rl_data_free(rl_data *d);
/* Reset the state to qpos0, zero qvel/ctrl/qfrc_applied, time 0, warnings 0. */
void rl_data_reset(const rl_model *m, rl_data *d);
/* FNV-1a hash of the state fields (bit patterns), per precision. */
uint64_t rl_state_hash(const rl_model *m, const rl_data *d);

#endif
