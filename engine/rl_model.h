/* rl_model.h — the const model (MuJoCo's mjModel counterpart).
 *
 * The model is built once (by import/mjcf_import.c from MuJoCo's compiled mjModel)
 * and never changes during a step.  Its arrays are declared by X-macro lists so that
 * allocation, import, hashing and printing all come from the one list:
 *   X(type, name, count, width)   →   type *name;   (count × width entries)
 * Names, meaning and layout follow MuJoCo 2.2.2 where the concept is the same, so a
 * field-by-field comparison with MuJoCo needs no translation table.
 */
#ifndef RL_MODEL_H
#define RL_MODEL_H

#include "rl_names.h"

/* joint types (values as mjtJoint) */
enum { RL_JNT_FREE = 0, RL_JNT_BALL = 1, RL_JNT_SLIDE = 2, RL_JNT_HINGE = 3 };
/* geom types (values as mjtGeom) */
enum {
  RL_GEOM_PLANE = 0,
  RL_GEOM_HFIELD = 1,
  RL_GEOM_SPHERE = 2,
  RL_GEOM_CAPSULE = 3,
  RL_GEOM_ELLIPSOID = 4,
  RL_GEOM_CYLINDER = 5,
  RL_GEOM_BOX = 6,
  RL_GEOM_MESH = 7
};
/* equality types (values as mjtEq) */
enum { RL_EQ_CONNECT = 0, RL_EQ_WELD = 1, RL_EQ_JOINT = 2, RL_EQ_TENDON = 3 };
/* tendon path elements (values as mjtWrap) */
enum {
  RL_WRAP_NONE = 0,
  RL_WRAP_JOINT = 1,
  RL_WRAP_PULLEY = 2,
  RL_WRAP_SITE = 3,
  RL_WRAP_SPHERE = 4,
  RL_WRAP_CYLINDER = 5
};
/* actuator transmissions (values as mjtTrn) */
enum {
  RL_TRN_JOINT = 0,
  RL_TRN_JOINTINPARENT = 1,
  RL_TRN_SLIDERCRANK = 2,
  RL_TRN_TENDON = 3,
  RL_TRN_SITE = 4,
  RL_TRN_BODY = 5
};
/* actuator gain/bias types (values as mjtGain / mjtBias) */
enum { RL_GAIN_FIXED = 0, RL_GAIN_AFFINE = 1, RL_GAIN_MUSCLE = 2 };
enum { RL_BIAS_NONE = 0, RL_BIAS_AFFINE = 1, RL_BIAS_MUSCLE = 2 };
/* actuator activation dynamics (values as mjtDyn) */
enum { RL_DYN_NONE = 0, RL_DYN_INTEGRATOR = 1, RL_DYN_FILTER = 2, RL_DYN_MUSCLE = 3 };
/* integrators (values as mjtIntegrator) */
enum { RL_INT_EULER = 0, RL_INT_RK4 = 1, RL_INT_IMPLICIT = 2 };
/* friction cones and solvers (values as mjtCone / mjtSolver) */
enum { RL_CONE_PYRAMIDAL = 0, RL_CONE_ELLIPTIC = 1 };
enum { RL_SOLVER_PGS = 0, RL_SOLVER_CG = 1, RL_SOLVER_NEWTON = 2 };
/* disable flags (bits as mjtDisableBit) */
enum {
  RL_DSBL_CONSTRAINT = 1 << 0,
  RL_DSBL_EQUALITY = 1 << 1,
  RL_DSBL_FRICTIONLOSS = 1 << 2,
  RL_DSBL_LIMIT = 1 << 3,
  RL_DSBL_CONTACT = 1 << 4,
  RL_DSBL_PASSIVE = 1 << 5,
  RL_DSBL_GRAVITY = 1 << 6,
  RL_DSBL_CLAMPCTRL = 1 << 7,
  RL_DSBL_WARMSTART = 1 << 8,
  RL_DSBL_FILTERPARENT = 1 << 9,
  RL_DSBL_ACTUATION = 1 << 10,
  RL_DSBL_REFSAFE = 1 << 11
};

/* MuJoCo's enable flags (mjtEnableBit) that change the dynamics: override replaces every contact's margin, solref
   and solimp by o_margin, o_solref, o_solimp; multiccd adds points to a convex pair's single MPR contact */
enum { RL_ENBL_OVERRIDE = 1 << 0, RL_ENBL_MULTICCD = 1 << 4 };

#define RL_NREF    2
#define RL_NIMP    5
#define RL_NEQDATA 11
#define RL_NGAIN   10
#define RL_NBIAS   10
#define RL_NDYN    10
#define RL_NFLUID  12 /* geom_fluid: interaction, blunt, slender, angular drag, Kutta, Magnus, added mass (3), inertia (3) */

/* physics and solver options: MuJoCo's mjOption subset and rigidlab's own.  Every field a user can set
   is one row of import/options.h (`--opt KEY=VALUE`), which also documents its range and default. */
typedef struct rl_option {
  real timestep;
  real gravity[3];
  real impratio;
  real tolerance;
  real noslip_tolerance;
  real ls_tolerance;
  real mpr_tolerance;
  real o_margin;           /* contact margin under the override flag */
  real o_solref[2];        /* contact solref under the override flag */
  real o_solimp[5];        /* contact solimp under the override flag */
  int pair_source;         /* MuJoCo's <option collision>: RL_PAIRS_ALL, _PREDEFINED (explicit pairs only), _DYNAMIC
                              (filtered geom pairs only) */
  int integrator; /* RL_INT_* */
  int cone;       /* RL_CONE_* */
  int solver;     /* RL_SOLVER_* */
  int iterations;
  int ls_iterations;
  int noslip_iterations;
  int mpr_iterations;
  int disableflags; /* RL_DSBL_* bits */
  int enableflags;
  real density;   /* fluid density (kg/m³) of the inertia-box drag model; 0: none */
  real viscosity; /* fluid viscosity (Pa·s) of the inertia-box viscous model; 0: none */
  real wind[3];   /* fluid velocity (m/s) */
  /* rigidlab's own options (not in MuJoCo 2.2.2) */
  int collision;          /* RL_COLL_MANIFOLD (default) | RL_COLL_MUJOCO (one MPR point per convex pair, 2.2.2 rules) */
  int contact_resolution; /* RL_RES_AUTO | RL_RES_CONVEX | RL_RES_SIGNORINI */
  int newton_factor;      /* RL_FACTOR_AUTO | _DENSE | _SKYLINE | _ABA | _SPARSE | _TREE */
  int max_contacts; /* contact capacity asked for (0: the model's nconmax, else max(256, 8·ngeom)); sizes nconmax */
  /* AVBD parameters set by options (0: the engine's precision default) */
  int avbd_iterations; /* sweep budget */
  real avbd_tolerance; /* tol_lin (m); tol_ang scales with it by the default ratio */
  real avbd_cheb_rho;  /* Chebyshev acceleration of the joint multipliers (0: off) */
  int avbd_stop;       /* RL_AVBD_STOP_DISTANCE (default) | RL_AVBD_STOP_UPDATE (rl_avbd_param.stop) */
  int avbd_block;      /* RL_AVBD_BLOCK_ARTICULATION (default) | RL_AVBD_BLOCK_BODY (rl_avbd_param.block) */
  int avbd_rest_overlaps; /* RL_AVBD_REST_OVERLAPS_DROP (default) | _KEEP (rl_avbd_param.rest_overlaps) */
  real avbd_slop;      /* rl_avbd_param.slop (m or rad); 0: the default */
} rl_option;

enum { RL_COLL_MANIFOLD = 0, RL_COLL_MUJOCO = 1 };
/* which pairs collide (MuJoCo's mjtCollision): both kinds, the explicit <contact><pair>s only, the filtered geom pairs
   only */
enum { RL_PAIRS_ALL = 0, RL_PAIRS_PREDEFINED = 1, RL_PAIRS_DYNAMIC = 2 };
/* added to the narrow phase's mode argument (never stored in the option): MuJoCo's multiccd flag is set */
#define RL_COLL_MULTICCD 0x100
enum { RL_RES_AUTO = 0, RL_RES_CONVEX = 1, RL_RES_SIGNORINI = 2 };
enum {
  RL_FACTOR_AUTO = 0,
  RL_FACTOR_DENSE = 1,
  RL_FACTOR_SKYLINE = 2,
  RL_FACTOR_ABA = 3,
  RL_FACTOR_SPARSE = 4,
  RL_FACTOR_TREE = 5
};

/* sizes: every array count below is one of these.
   nconmax: contact capacity (option max_contacts); nefcmax: constraint-row capacity (all equality,
   friction and limit rows + 10 per contact, the pyramidal condim-6 worst case); njmax: capacity of
   the sparse constraint Jacobian (nefcmax × the widest possible row).
   Meshes: mesh_vert holds only the convex-hull vertices (in MuJoCo's hull order, vert_globalid);
   mesh_graphadr[k] is the start of mesh k's hull adjacency in mesh_graph (−1: none, brute-force
   support), laid out as  adr[nvert] | neighbour lists:  the neighbours of hull vertex i (indices into
   the mesh's hull vertices, in MuJoCo's edge order) are mesh_graph[a + mesh_graph[a + i] + j],
   j = 0, 1, … up to a −1 terminator, a = mesh_graphadr[k].
   body_fluidbox[3b..3b+2]: the sides of body b's equivalent inertia box (MuJoCo's inertia-box fluid model,
   rl_fluid_box_sides), formed by the importer in double from MuJoCo's inertia and held in real: a thin body's side
   is a difference of its principal moments, which formed from moments already rounded to float loses ε·I_max/I_min
   (MuJoCo's dm_control fish: its 1 mm fins).
   Derived at build by rl_model_derive (not read from MuJoCo): geom_collide[g] = 1 if geom g can pass the
   contype/conaffinity filter with some geom of the model, 0 if it can never collide (a visual geom: the
   collision stage skips it entirely); geom_hext[3g..3g+2] = for a mesh geom, the half-extents about the
   geom origin of its hull's box in the geom frame, max_i |v_i,c| per axis c (0 for other types, whose
   extents follow from geom_size); M_colind[a] = the column (dof) of qM's entry a, so that row i's entries
   dof_Madr[i] … are the columns i, then its dof ancestors parent first (the loops over a row read them there
   instead of walking dof_parentid).  dof_depth[i] = the number of dof ancestors of i; dof_treeend[i] = the last dof
   of i's subtree when the subtree is the dofs i … dof_treeend[i] (MuJoCo numbers bodies, and so dofs, depth first,
   parents first), else −1 for every dof (then nothing may assume it): j is i or an ancestor of i iff
   j ≤ i ≤ dof_treeend[j].
   body_sameframe[b] = 1 where body b's inertial frame is its body frame (ipos = 0, iquat = 1);
   geom_sameframe[g], site_sameframe[s] = 1 where the frame is its body's (pos = 0, quat = 1), else 2 where it is
   its body's inertial frame (pos = ipos, quat = iquat), else 0 (MuJoCo's *_sameframe): kinematics copies those
   frames instead of composing them.  geom_xpos0, geom_xmat0: the frame of a geom on the world body (constant; the
   same arithmetic as kinematics on the world's frame x = 0, q = 1, R = I), which kinematics copies; 0 for others.
   dof_simplenum[i] (MuJoCo's): the number of consecutive dofs from i on that belong to simple bodies — a body
   whose M block is diagonal and constant (a free or slide-jointed body with its inertial frame at the joint, as
   MuJoCo's compiler decides): their rows of qM are dof_M0 on the diagonal and exact zeros elsewhere, as MuJoCo's.
   Sites and tendons (RL_MODEL_SIZES_TENDON, RL_MODEL_FIELDS_TENDON): tendon k's path is wrap elements
   tendon_adr[k] … + tendon_num[k] − 1 (a fixed tendon: joints with their coefficients in wrap_prm; a spatial
   tendon: sites, wrap geoms whose wrap_prm is the side site or −1, and pulleys whose wrap_prm is the divisor,
   as MuJoCo 2.2.2).  nwrappnt = 2·nwrap bounds the points of all paths (wrap_xpos); ntenJ = ntendon·nv and
   nmoment = nu·nv size the dense tendon Jacobian and actuator moment arms. */
#define RL_MODEL_SIZES(X)                                                                                       \
  X(nq)                                                                                                         \
  X(nv)                                                                                                         \
  X(nu)                                                                                                         \
  X(nbody)                                                                                                      \
  X(njnt) X(ngeom) X(nmesh) X(nmeshvert) X(nmeshgraph) X(neq) X(nM) X(nexclude) X(nnames) X(nconmax) X(nefcmax) \
      X(njmax) RL_MODEL_SIZES_TENDON(X) X(na) X(nmocap) X(npair) X(nhfield) X(nhfielddata)
#define RL_MODEL_SIZES_TENDON(X) X(nsite) X(ntendon) X(nwrap) X(nwrappnt) X(ntenJ) X(nmoment)

/* X(type, name, count, width) */
#define RL_MODEL_FIELDS(X)                \
  X(real, qpos0, nq, 1)                   \
  X(real, qpos_spring, nq, 1)             \
  X(int, body_parentid, nbody, 1)         \
  X(int, body_rootid, nbody, 1)           \
  X(int, body_weldid, nbody, 1)           \
  X(int, body_jntnum, nbody, 1)           \
  X(int, body_jntadr, nbody, 1)           \
  X(int, body_dofnum, nbody, 1)           \
  X(int, body_dofadr, nbody, 1)           \
  X(int, body_geomnum, nbody, 1)          \
  X(int, body_geomadr, nbody, 1)          \
  X(real, body_pos, nbody, 3)             \
  X(real, body_quat, nbody, 4)            \
  X(real, body_ipos, nbody, 3)            \
  X(real, body_iquat, nbody, 4)           \
  X(real, body_mass, nbody, 1)            \
  X(real, body_subtreemass, nbody, 1)     \
  X(real, body_inertia, nbody, 3)         \
  X(real, body_invweight0, nbody, 2)      \
  X(real, body_fluidbox, nbody, 3)        \
  X(int, jnt_type, njnt, 1)               \
  X(int, jnt_qposadr, njnt, 1)            \
  X(int, jnt_dofadr, njnt, 1)             \
  X(int, jnt_bodyid, njnt, 1)             \
  X(int, jnt_limited, njnt, 1)            \
  X(real, jnt_solref, njnt, RL_NREF)      \
  X(real, jnt_solimp, njnt, RL_NIMP)      \
  X(real, jnt_pos, njnt, 3)               \
  X(real, jnt_axis, njnt, 3)              \
  X(real, jnt_stiffness, njnt, 1)         \
  X(real, jnt_range, njnt, 2)             \
  X(real, jnt_margin, njnt, 1)            \
  X(int, dof_bodyid, nv, 1)               \
  X(int, dof_jntid, nv, 1)                \
  X(int, dof_parentid, nv, 1)             \
  X(int, dof_Madr, nv, 1)                 \
  X(real, dof_solref, nv, RL_NREF)        \
  X(real, dof_solimp, nv, RL_NIMP)        \
  X(real, dof_frictionloss, nv, 1)        \
  X(real, dof_armature, nv, 1)            \
  X(real, dof_damping, nv, 1)             \
  X(real, dof_invweight0, nv, 1)          \
  X(real, dof_M0, nv, 1)                  \
  X(int, dof_simplenum, nv, 1)            \
  X(int, M_colind, nM, 1)                 \
  X(int, dof_depth, nv, 1)                \
  X(int, dof_treeend, nv, 1)              \
  X(int, geom_type, ngeom, 1)             \
  X(int, geom_contype, ngeom, 1)          \
  X(int, geom_conaffinity, ngeom, 1)      \
  X(int, geom_condim, ngeom, 1)           \
  X(int, geom_bodyid, ngeom, 1)           \
  X(int, geom_dataid, ngeom, 1)           \
  X(int, geom_priority, ngeom, 1)         \
  X(real, geom_solmix, ngeom, 1)          \
  X(real, geom_solref, ngeom, RL_NREF)    \
  X(real, geom_solimp, ngeom, RL_NIMP)    \
  X(real, geom_size, ngeom, 3)            \
  X(real, geom_rbound, ngeom, 1)          \
  X(real, geom_pos, ngeom, 3)             \
  X(real, geom_quat, ngeom, 4)            \
  X(real, geom_friction, ngeom, 3)        \
  X(real, geom_margin, ngeom, 1)          \
  X(real, geom_gap, ngeom, 1)             \
  X(real, geom_fluid, ngeom, RL_NFLUID)   \
  X(int, geom_collide, ngeom, 1)          \
  X(real, geom_hext, ngeom, 3)            \
  X(int, body_sameframe, nbody, 1)        \
  X(int, geom_sameframe, ngeom, 1)        \
  X(real, geom_xpos0, ngeom, 3)           \
  X(real, geom_xmat0, ngeom, 9)           \
  X(int, mesh_vertadr, nmesh, 1)          \
  X(int, mesh_vertnum, nmesh, 1)          \
  X(real, mesh_vert, nmeshvert, 3)        \
  X(int, mesh_graphadr, nmesh, 1)         \
  X(int, mesh_graph, nmeshgraph, 1)       \
  X(int, exclude_signature, nexclude, 1)  \
  X(int, eq_type, neq, 1)                 \
  X(int, eq_obj1id, neq, 1)               \
  X(int, eq_obj2id, neq, 1)               \
  X(int, eq_active, neq, 1)               \
  X(real, eq_solref, neq, RL_NREF)        \
  X(real, eq_solimp, neq, RL_NIMP)        \
  X(real, eq_data, neq, RL_NEQDATA)       \
  X(int, actuator_gaintype, nu, 1)        \
  X(int, actuator_biastype, nu, 1)        \
  X(int, actuator_trntype, nu, 1)         \
  X(int, actuator_trnid, nu, 2)           \
  X(int, actuator_ctrllimited, nu, 1)     \
  X(int, actuator_forcelimited, nu, 1)    \
  X(real, actuator_gainprm, nu, RL_NGAIN) \
  X(real, actuator_biasprm, nu, RL_NBIAS) \
  X(real, actuator_ctrlrange, nu, 2)      \
  X(real, actuator_forcerange, nu, 2)     \
  X(real, actuator_gear, nu, 1)           \
  X(int, body_mocapid, nbody, 1)          \
  X(int, actuator_dyntype, nu, 1)         \
  X(int, actuator_actlimited, nu, 1)      \
  X(real, actuator_dynprm, nu, RL_NDYN)   \
  X(real, actuator_actrange, nu, 2)       \
  X(real, actuator_gearvec, nu, 6)        \
  X(real, actuator_cranklength, nu, 1)    \
  X(real, actuator_acc0, nu, 1)           \
  X(real, actuator_lengthrange, nu, 2)    \
  X(int, pair_dim, npair, 1)              \
  X(int, pair_geom1, npair, 1)            \
  X(int, pair_geom2, npair, 1)            \
  X(real, pair_solref, npair, RL_NREF)    \
  X(real, pair_solimp, npair, RL_NIMP)    \
  X(real, pair_margin, npair, 1)          \
  X(real, pair_gap, npair, 1)             \
  X(real, pair_friction, npair, 5)        \
  X(int, name_bodyadr, nbody, 1)          \
  X(int, name_jntadr, njnt, 1)            \
  X(int, name_geomadr, ngeom, 1)          \
  X(int, name_eqadr, neq, 1)              \
  X(int, name_actuatoradr, nu, 1)         \
  X(char, names, nnames, 1)               \
  RL_MODEL_FIELDS_TENDON(X)               \
  RL_MODEL_FIELDS_HFIELD(X)

/* sites, tendon paths and tendon parameters (MuJoCo 2.2.2's names and layout) */
#define RL_MODEL_FIELDS_TENDON(X)              \
  X(int, site_bodyid, nsite, 1)                \
  X(real, site_pos, nsite, 3)                  \
  X(real, site_quat, nsite, 4)                 \
  X(int, site_sameframe, nsite, 1)             \
  X(int, tendon_adr, ntendon, 1)               \
  X(int, tendon_num, ntendon, 1)               \
  X(int, tendon_limited, ntendon, 1)           \
  X(real, tendon_solref_lim, ntendon, RL_NREF) \
  X(real, tendon_solimp_lim, ntendon, RL_NIMP) \
  X(real, tendon_solref_fri, ntendon, RL_NREF) \
  X(real, tendon_solimp_fri, ntendon, RL_NIMP) \
  X(real, tendon_range, ntendon, 2)            \
  X(real, tendon_margin, ntendon, 1)           \
  X(real, tendon_stiffness, ntendon, 1)        \
  X(real, tendon_damping, ntendon, 1)          \
  X(real, tendon_frictionloss, ntendon, 1)     \
  X(real, tendon_lengthspring, ntendon, 1)     \
  X(real, tendon_length0, ntendon, 1)          \
  X(real, tendon_invweight0, ntendon, 1)       \
  X(int, wrap_type, nwrap, 1)                  \
  X(int, wrap_objid, nwrap, 1)                 \
  X(real, wrap_prm, nwrap, 1)                  \
  X(int, name_siteadr, nsite, 1)               \
  X(int, name_tendonadr, ntendon, 1)

/* height fields (MuJoCo 2.2.2's names and layout): hfield k spans x ∈ [−size₀, size₀], y ∈ [−size₁, size₁] of its
   geom's frame over an nrow × ncol grid (row-major, row r at y = −size₁ + 2 size₁ r/(nrow − 1), column c at
   x = −size₀ + 2 size₀ c/(ncol − 1)); elevation z = size₂ · data (data normalized to [0, 1] by MuJoCo's compiler),
   solid down to the base z = −size₃.  Values of data are MuJoCo's floats, held exactly in either precision. */
#define RL_MODEL_FIELDS_HFIELD(X)      \
  X(real, hfield_size, nhfield, 4)     \
  X(int, hfield_nrow, nhfield, 1)      \
  X(int, hfield_ncol, nhfield, 1)      \
  X(int, hfield_adr, nhfield, 1)       \
  X(real, hfield_data, nhfielddata, 1)

typedef struct rl_model {
#define RL_X_SIZE(n) int n;
  RL_MODEL_SIZES(RL_X_SIZE)
#undef RL_X_SIZE
  rl_option opt;
#define RL_X_FIELD(type, name, count, width) type *name;
  RL_MODEL_FIELDS(RL_X_FIELD)
#undef RL_X_FIELD
  void *buffer; /* the single allocation that holds every array */
} rl_model;

/* Sizes for rl_model_alloc: all RL_MODEL_SIZES, other fields ignored. */
rl_model *rl_model_alloc(const rl_model *sizes);
void rl_model_free(rl_model *m);
/* The derived fields (geom_collide, geom_hext) from the others: call once after filling the model. */
void rl_model_derive(rl_model *m);
/* Name of element `adr` (an offset into m->names), "" when unnamed. */
const char *rl_model_name(const rl_model *m, int adr);

#endif
