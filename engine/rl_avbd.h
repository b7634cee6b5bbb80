/* rl_avbd.h — the AVBD solver in maximal coordinates.
 *
 * Every dynamic body is a rigid body at its COM (mass, principal inertia, orientation of its
 * inertial frame).  Joints and equalities become augmented-Lagrangian rows between bodies; joint
 * limits, dry friction (frictionloss), damping, armature, stiffness and position servos act on the
 * joint coordinate inside each body's local 6×6 solve.  The step:
 *
 *   rl_avbd_step:  contacts (rl_collision's, loaded from d, or the own ground contacts) → servo targets
 *                  → cache matching + graph coloring → save / warm-start decay / predict → colored block
 *                  sweeps + dual update → residual test or budget → velocity recovery, diagnostics →
 *                  qpos/qvel written back
 *
 * Usage:  prm = rl_avbd_default_param(m);  prm.… = …;  am = rl_avbd_build(m, &prm, err, n);
 *         rl_avbd_from_generalized(am, m, d);
 *         loop { d->ctrl = …; rl_avbd_step(am, m, d); }      (d->qpos, d->qvel, d->time current after each)
 * The AVBD state (body poses and velocities) lives in rl_avbd and is the one the step integrates;
 * rl_avbd_step writes qpos/qvel/time back (rl_avbd_to_generalized), so after it d holds the stepped
 * state as after rl_step.  Besides the contacts it reads d->ctrl (servo targets), d->jnt_range and
 * d->eq_active.  Bad state (rl_engine.h's test: non-finite or |x| > RL_MAXVAL): at the step's start a bad
 * clamped ctrl makes the step's servos act on zero controls (warning BADCTRL) and a bad pose or velocity resets d to qpos0 and the AVBD state from it
 * (warning BADQPOS or BADQVEL), as rl_avbd_from_generalized does for a bad d->qpos/qvel; a step that
 * ends bad is undone (the step-start poses, zero velocity; its time passes), counted once in
 * d->warning[RL_WARN_BADQACC] and returns RL_ERR_NUMERIC.
 *
 * Contacts (prm.contacts; rl_avbd_default_param picks by the model): RL_AVBD_CONTACTS_DATA takes every
 * contact from rl_collision: before each step rl_avbd_step writes qpos from the AVBD poses and runs
 * rl_kinematics, rl_collision and rl_avbd_load_contacts, so the contacts describe the step-start poses
 * (the default when two geoms on different dynamic bodies pass the contype/conaffinity filter, e.g. the
 * boxes of box_stack, a height field can touch a geom of another body, or a static geom that is not a
 * plane, such as a box or capsule used as terrain, can touch a geom of a dynamic body, a geom fixed to a mocap
 * body can touch one, or the model lists explicit <contact><pair> elements).  Their normal row has its zero at
 * dist = includemargin (margin − gap), as MuJoCo's contact row.  RL_AVBD_CONTACTS_GROUND (the default otherwise) builds ground contacts from the
 * AVBD poses at the step start: distributed support points (box corners, sphere centres, capsule end
 * caps) of every geom on a dynamic body against every plane on a static body that passes the
 * contype/conaffinity filter and is not an <exclude> pair, within a detection margin; each pair takes MuJoCo's
 * condim and friction (priority, else the larger) and its normal row the zero dist = margin − gap of the two
 * geoms, as rl_collision's contacts; it cannot see a dynamic–dynamic pair.
 * RL_AVBD_CONTACTS_NONE: no contacts.
 *
 * Mocap bodies: static bodies placed anew at each step start from d->mocap_pos/mocap_quat
 * (rl_avbd_mocap_frames; the caller sets them before the step, as for rl_step).
 *
 * rl_avbd_step_maximal is the step of the AVBD state alone (no collision, d's qpos/qvel left as they
 * were): for a caller that loads its own contacts (rl_avbd_load_contacts) and reads the step in
 * maximal coordinates only, e.g. a convergence study run from one loaded step start.
 */
#ifndef RL_AVBD_H
#define RL_AVBD_H

#include "rl_engine.h"
#include "rl_avbd_body.h"

enum { RL_AVBD_CONTACTS_GROUND = 0, RL_AVBD_CONTACTS_DATA = 1, RL_AVBD_CONTACTS_NONE = 2 };
/* servo model of every position actuator (biastype affine with b₁ < 0, one per joint) */
enum { RL_AVBD_SERVO_PD = 0, RL_AVBD_SERVO_BAM = 1 };
/* stopping test of a step (rl_avbd_param.stop; the distance test is the default, value 0) */
enum { RL_AVBD_STOP_DISTANCE = 0, RL_AVBD_STOP_UPDATE = 1, RL_AVBD_STOP_CERTIFIED = 2 };
/* block of one iteration (rl_avbd_param.block) */
enum { RL_AVBD_BLOCK_ARTICULATION = 0, RL_AVBD_BLOCK_BODY = 1 };
/* geom pairs of one articulation that overlap at qpos0 (rl_avbd_param.rest_overlaps) */
enum { RL_AVBD_REST_OVERLAPS_DROP = 0, RL_AVBD_REST_OVERLAPS_KEEP = 1 };
/* most such pairs left out (rl_avbd.rest) */
#define RL_AVBD_MAXREST 64

/* BAM-style servo (Rhoban BAM, model "M1"; defaults: the published Feetech STS3215 fit).  With the
 * target q* = ctrl (clamped to ctrlrange), gear g, coordinate φ, its rate q̇ = g(φ − φⁿ)/h (implicit,
 * the same discretization as damping) and e = q* − gφ:
 *   duty = clip(kp·error_gain·e, ±max_duty)       (firmware P controller, voltage-limited)
 *   V    = duty·supply                            (motor voltage, V)
 *   i    = (V − kt·q̇)/R                           (current with back EMF, A)
 *   τ    = kt·i − viscous·q̇                       (motor torque, N m; joint force g·τ)
 * plus Coulomb friction |τ_f| ≤ friction as a bounded dry-friction row on φ (its budget is added to
 * the joint's frictionloss) and the rotor armature added to the joint armature.  Static balance
 * against a load τ_L: kt·supply·kp·error_gain·e/R = τ_L (unsaturated, friction-free); no-load speed
 * with duty saturated: ω = (kt·supply·max_duty/R − friction)/(kt²/R + viscous). */
typedef struct rl_avbd_bam {
  real kt;         /* torque constant (N m/A) */
  real R;          /* winding resistance (ohm) */
  real armature;   /* rotor inertia reflected to the joint (kg m²) */
  real friction;   /* Coulomb friction budget (N m) */
  real viscous;    /* viscous friction (N m s/rad) */
  real supply;     /* supply voltage (V) */
  real kp;         /* firmware proportional gain */
  real error_gain; /* duty per (kp·rad) */
  real max_duty;   /* duty limit */
} rl_avbd_bam;

/* Joint-space loads of one joint after the step, on the joint coordinate φ (hinge: N m, slide:
 * N; positive drives φ up), and the two-sided rows' reaction on the child body B. */
typedef struct rl_avbd_load {
  real servo;       /* actuator force applied (PD: g·F, BAM: g·τ) at the final iterate */
  real limit;       /* limit rows: −(λ_lo − λ_hi) */
  real friction;    /* dry-friction row (frictionloss + BAM Coulomb): −λ_f */
  real axial;       /* two-sided rows projected on the joint axis: a·τ_p (hinge, N m) or a·F (slide, N);
                        ≈ 0 for an ideal joint */
  real contact;     /* contact forces projected on the joint through the tree, τ = Σ J_jᵀ f over the
                        contacts on bodies of the subtree below the joint (tree joints only): hinge
                        a·Σ ((x_c − p) × f_c + τ_c) about the anchor p, slide a·Σ f_c, with each
                        contact's wrench (f_c at x_c, spin/roll torque τ_c) from its final multipliers.
                        At rest: servo + limit + friction + contact + axial = qfrc_bias (RNEA gravity) */
  real reaction[6]; /* two-sided rows' force (N) and torque about the anchor p (N m) on B, world:
                        F = −Σ λ_r J_B,r[0:3], τ_p = −Σ λ_r J_B,r[3:6] + (x_B − p) × F */
} rl_avbd_load;

/* Solver parameters.  rl_avbd_default_param(m) gives the defaults below (per precision), the model's
   contact source and the model's overrides (rl_option avbd_iterations, avbd_tolerance, avbd_cheb_rho;
   `--opt avbd_*`); set fields on it, then rl_avbd_build(m, &prm, …) copies it to am->prm.  am->prm is
   read at every step, so a field may also change between steps (e.g. a sweep budget per run). */
typedef struct rl_avbd_param {
  int iterations;      /* sweep budget per step */
  int contacts;        /* RL_AVBD_CONTACTS_* */
  int force_overflow;  /* debug: every body in the overflow (serial) color */
  int threads;         /* > 1: the bodies of one color are updated by that many OpenMP threads (when the
                          engine is built with OpenMP; results are bit-identical at any count, see
                          avbd_sweep); ≤ 1: serial (default) */
  real alpha;          /* stabilization: contacts and limits push out 1 − α of their penetration beyond the slop
                          per step, contact tangents C̃ = C − α·C⁰ */
  real alpha_joint;    /* the same for the two-sided joint/equality rows (steady gap ≈ tol/(1 − α)) */
  real slop;           /* penetration (m, or rad for an angle) a contact or limit row keeps; 1 − α of the part beyond
                          it is pushed out per step (rl_avbd_one_sided_target) */
  real gamma;          /* warm start λ ·= αγ (dry-friction rows keep λ), ρ ·= γ */
  int adaptive_start;  /* 1: a jointless body in contact starts its sweeps at x + hv + h²(ã + f/m), ã the
                          last step's acceleration (clamped to ‖g‖), instead of the prediction */
  int coarse;          /* k > 0: a rigid-motion step of each free articulated component after every k-th
                          sweep (avbd_coarse; body sweeps only, an articulation block moves its rigid modes
                          itself); 0: none */
  real beta;           /* penalty growth ρ ← min(ρ + β·ρ₀·|C̃|/ℓ, ρ_max), ℓ = 1 mm or 1 mrad */
  real rho_init;       /* ρ₀ = rho_init · m_eff/h² (m_eff: the lighter body's mass or inertia) */
  real rho_max;        /* ρ_max = rho_max · ρ₀ */
  real rho_tree;       /* RL_AVBD_BLOCK_ARTICULATION: the loop rows a block solves exactly (equality joints,
                          equality coordinate rows) start each step at ρ ≥ rho_tree · ρ₀ (avbd_tree_stiffen;
                          default 1e4) */
  real tol_lin;        /* convergence: residual of length rows (m) and translation updates, at h ≤ 1 ms;
                          f64: × (h/1 ms)² above (the same acceleration error tol/(1 ms)²) */
  real tol_ang;        /* convergence: residual of angle rows (rad) and rotation updates, likewise */
  real max_dx;         /* clamp of one translation update (m) */
  real max_dtheta;     /* clamp of one rotation update (rad) */
  real contact_margin; /* ground contact detection margin (m), added to h·‖v‖·2 */
  int servo_model;     /* RL_AVBD_SERVO_PD (default: the MuJoCo position servo) or RL_AVBD_SERVO_BAM */
  rl_avbd_bam bam;     /* BAM parameters (defaults: STS3215 "M1") */
  real cheb_rho;       /* Chebyshev semi-iterative acceleration of the joint/equality multipliers
                          (avbd_cheb_dual): the estimated spectral radius ρ of one sweep + dual update,
                          0: off (default).  0.93: microduck 1.9× (f64) / 1.4× (f32) fewer sweeps, chain8
                          1.6–2.3×; at 0.97 chain8's converged runs slow down 3×, at 0.99 they diverge.
                          Not for budget-exhausting mass-ratio chains (chain50 50 000:1 loses its anchors,
                          2e-3 m, at ρ ≥ 0.9) */
  int cheb_start;      /* dual updates before the acceleration starts (default 3) */
  int stop;            /* RL_AVBD_STOP_DISTANCE (default, both precisions): the iterate's estimated distance to
                          the step's exact solution ≤ tol_lin·(h/1 ms)² (m), tol_ang·(h/1 ms)² (rad) at every
                          h, never below the rounding of the poses, and the residuals too
                          (avbd_distance_tolerance, avbd_tail_distance); RL_AVBD_STOP_UPDATE: the last sweep's
                          update and the rows' residuals ≤ tol (tol scaled by (h/1 ms)² above 1 ms in f64,
                          avbd_step_tolerance), which can pass far from the exact step (a slow dual ascent
                          makes small updates: false stops on every robot scene of avbd_robots.ini);
                          RL_AVBD_STOP_CERTIFIED: the distance test, and with articulation blocks each of its stops
                          certified by the contacts' problem linearized there (avbd_tree_contact_certify): refused
                          where that problem's step moves the poses farther than claimed.  Chosen at build (its
                          scratch is sized then: set after the build it acts as RL_AVBD_STOP_DISTANCE) */
  int block;           /* RL_AVBD_BLOCK_ARTICULATION (default): one iteration solves each articulation (bodies
                          joined by tree joints) as one block, the Newton system of all its bodies factored
                          along the tree with the joints' rows in constraint space (avbd_tree.c), the
                          articulations one after the other; RL_AVBD_BLOCK_BODY: one iteration is a colored
                          sweep of 6×6 body blocks (the seed's method) */
  int rest_overlaps;   /* RL_AVBD_REST_OVERLAPS_DROP (default): rl_collision's contacts between two geoms of one
                          articulation (bodies with the same root) that overlap at qpos0 are left out (rl_avbd.rest:
                          a modelling overlap of neighbouring links, which the joints usually hold at a gap no hard
                          contact can open); RL_AVBD_REST_OVERLAPS_KEEP: every contact, as MuJoCo */
} rl_avbd_param;

/* A body joined to its parent by several joints (MuJoCo composes them in order: a slide moves the body
 * frame along its axis, a hinge or ball turns it about its anchor), as one joint between the two bodies.
 * With F0 the zero frame (the body frame when every coordinate is at its zero: hinge and slide at qpos0,
 * ball at the identity) and the body frame F = F0·T(q), T(q) = T_1(q_1)···T_n(q_n),
 *   slide  T_k = Trans(a_k (q_k − q0_k)),   hinge T_k = Trans(p_k) Rot(a_k, q_k − q0_k) Trans(−p_k),
 *   ball   T_k = Trans(p_k) Rot(q_k) Trans(−p_k)   (a_k, p_k: jnt_axis, jnt_pos in the body frame),
 * the coordinates q of the relative pose E = F0⁻¹F are found by Gauss–Newton on ‖Log(T(q)⁻¹E)‖ from
 * the last ones (exact on the joint's manifold), and the joint has 6 − dof two-sided rows that vanish
 * exactly there (avbd_compound.c).  Each hinge or slide component carries its limits, damping,
 * armature, stiffness, frictionloss and position servo through its coordinate (sub[k]). */
#define RL_AVBD_MAXCOMP 6
typedef struct rl_avbd_compound {
  int n;                              /* component joints, in the model's order */
  int ndof;                           /* Σ dofs (hinge, slide 1; ball 3) */
  int nrot, nslide;                   /* rotational dofs (hinge 1, ball 3; ≤ 3), slides (≤ 3) */
  int nlin, nang;                     /* two-sided rows: length rows (3 − nslide), angle rows (3 − nrot) */
  int type[RL_AVBD_MAXCOMP];          /* RL_JNT_HINGE, RL_JNT_SLIDE, RL_JNT_BALL */
  int jnt[RL_AVBD_MAXCOMP];           /* model joint ids */
  int dof[RL_AVBD_MAXCOMP];           /* first dof of component k within the joint (0 … ndof) */
  real axis[RL_AVBD_MAXCOMP][3];      /* a_k, unit (body frame) */
  real pos[RL_AVBD_MAXCOMP][3];       /* p_k (body frame) */
  real perp[RL_AVBD_MAXCOMP][2][3];   /* two unit vectors ⊥ a_k */
  real qpos0[RL_AVBD_MAXCOMP];        /* hinge, slide: qpos0 */
  real xp[3], xq[4];                  /* F0 in A's COM frame (the world frame for the world) */
  real yp[3], yq[4];                  /* B's body frame in B's COM frame */
  real q[RL_AVBD_MAXCOMP][4];         /* coordinates: hinge, slide q[k][0]; ball the quaternion */
  rl_avbd_joint sub[RL_AVBD_MAXCOMP]; /* hinge and slide components as coordinate carriers: kind, jnt,
                                              limit and dry rows, parameters, φ, φⁿ, φ̇ⁿ, act (avbd_coord_terms) */
} rl_avbd_compound;

/* A compound joint evaluated at one pair of poses (avbd_compound_eval). */
typedef struct rl_avbd_compound_val {
  real C[6];         /* rows: nlin length rows (m), then nang angle rows (rad) */
  real w[6][6];      /* each row's (f, τ) in the world: J_B = [f, r_B × f + τ], J_A = −[f, r_A × f + τ] */
  real pg[6][6];     /* each dof's coordinate gradient, the same form */
  real rA[3], rB[3]; /* o − x_A, o − x_B: B's body origin o from the COMs */
  real q[RL_AVBD_MAXCOMP][4]; /* coordinates at these poses */
} rl_avbd_compound_val;

/* rl_avbd_row (one augmented-Lagrangian row) and rl_avbd_contact (one contact point) are in
 * rl_avbd_body.h, beside the per-body math that reads them. */

/* Per-step diagnostics and KKT residuals of the step's optimization problem. */
typedef struct rl_avbd_stat {
  int iterations;    /* sweeps used */
  int converged;     /* 1: residual test met before the budget */
  int ncon;          /* contact points */
  int ncolor;        /* colors used (the overflow color not counted) */
  int noverflow;     /* bodies in the overflow color */
  int guarded;       /* guarded Cholesky pivots in the step */
  real anchor_err;   /* max ‖anchor gap‖ over joints/equalities (m), after the step */
  real axis_err;     /* max axis/rotation misalignment (rad) */
  real penetration;  /* max penetration (m) */
  real dry_residual; /* max r_f = |λ_f − clip(λ_f + ρ_f Δφ, ±τ_f)|/ρ_f (rad or m) */
  real update;       /* last sweep's largest ‖δx‖ */
  /* stationarity ∇E_i + Σ Jᵀλ of body i's block with the final multipliers, reported as two numbers
     because its rows have two units: the force part (rows δx, N) and the torque part (rows δθ about
     the COM, N m).  (A single norm mixed N with N m; scaling the torque by a characteristic length was
     not chosen: no one length fits 1 mm links and 1 m links alike, and the split keeps the units.) */
  real kkt_stationarity_force;  /* max_i ‖(∇E_i + Σ Jᵀλ)[0:3]‖∞ (N) */
  real kkt_stationarity_torque; /* max_i ‖(∇E_i + Σ Jᵀλ)[3:6]‖∞ (N m) */
  real kkt_primal;              /* max |C̃| of two-sided rows, max(−C̃, 0) of one-sided rows */
  real kkt_primal_lin;          /* its length rows: anchors, lateral, contact normals, slide limits (m) */
  real kkt_primal_ang;          /* its angle rows: axes, rotations, hinge limits (rad) */
  real kkt_normal_sign;         /* max(λ_n, 0) over contact normals and limits (0: right sign) */
  real kkt_cone;                /* max(‖λ_t‖ − μ(−λ_n), 0) */
  real kkt_complementarity;     /* max |λ·C̃| over contacts and limits */
  real tol_lin, tol_ang;        /* the distance the stopping test claimed (RL_AVBD_STOP_DISTANCE) or the
                                   update bound it used (m, rad) at this step's h */
  real dist_lin, dist_ang;      /* RL_AVBD_STOP_DISTANCE: the estimated distance to the exact solution at the
                                   stop (m, rad) */
  real cert_lin, cert_ang;      /* RL_AVBD_STOP_CERTIFIED: the largest move of the contacts' linearized problem
                                   found at a candidate stop of this step (m, rad; avbd_tree_contact_certify) */
  int refused;                  /* candidate stops the certificate refused in this step */
} rl_avbd_stat;

/* A joint or equality whose static side (a = −1) is a mocap body or a body fixed to one: that side is a
 * static body whose pose moves with time.  Its A-side geometry is kept in the mocap body's frame M (taken
 * at the build's reference configuration, where the mocap body sits at body_pos/body_quat) and mapped to
 * the world at every step start from M = (mocap_pos, mocap_quat/‖·‖):
 *   r_A = x_M + R_M r̂_A,  a_A = R_M â_A,  t_kA = R_M t̂_kA,  q_rel0 = q_M ⊗ q̂_rel0,
 *   compound F0: x_F0 = x_M + R_M x̂_F0, q_F0 = q_M ⊗ q̂_F0,
 * so the rows see a static body at the step-start mocap pose (rl_avbd_mocap_frames). */
typedef struct rl_avbd_moving {
  int joint;                                    /* index into rl_avbd.joint */
  int mocap;                                    /* mocap id of the moving side */
  real rA[3], axA[3], t1A[3], t2A[3], qrel0[4]; /* A-side geometry in M */
  real xp[3], xq[4];                            /* compound joints: F0 in M */
} rl_avbd_moving;

/* A constraint row on scalar coordinates: a tendon length limit, or an equality that couples two joint
 * coordinates or two tendon lengths by a quartic.  Its scalars S_a, S_b are joint coordinates, fixed-tendon
 * lengths Σ cᵢφᵢ or spatial-tendon path lengths (avbd_tendon.c). */
enum { RL_AVBD_CROW_LO = 0, RL_AVBD_CROW_HI = 1, RL_AVBD_CROW_EQ = 2, RL_AVBD_CROW_FRIC = 3 };
enum { RL_AVBD_SC_JOINT = 0, RL_AVBD_SC_FIXED = 1, RL_AVBD_SC_SPATIAL = 2 };
typedef struct rl_avbd_crow {
  int type;           /* RL_AVBD_CROW_* */
  int eq;             /* the model equality (type EQ), else −1 */
  int kind[2], id[2]; /* the scalars (RL_AVBD_SC_*; joint or tendon id), id[1] = −1: no second one */
  real ref[2];        /* their values at qpos0 (qpos0, tendon_length0) */
  real bound;         /* the limit (LO: range₀, HI: range₁), the friction loss (FRIC) */
  int row;            /* its multiplier and penalty: rl_avbd.row[row] */
  int joints;         /* 1 if a scalar is a joint coordinate or a fixed tendon (the row enters coordinate terms) */
  int ang;            /* 1 if every scalar is a hinge angle or a fixed tendon of hinges (residual in rad) */
  int spatial;        /* 1 if a scalar is a spatial tendon (the row enters body terms, avbd_crow_assemble) */
  int loop;           /* articulation blocks: 1 if solved as a loop row of its block (its curvature goes through
                         the block's Woodbury step, not the coordinate terms), −1 if it could not be (its block
                         full; the bodies it reads then leave their articulations, avbd_tree_build), 0 otherwise */
} rl_avbd_crow;

/* A joint whose dofs turn one body as a whole (MuJoCo 2.2.2's dof layout): a ball joint, 3 rotational dofs (the
 * relative angular velocity in the body frame), on a body of its own or as a component of a compound joint; a
 * free joint, 3 translational dofs (the world velocity of the body origin) then 3 rotational ones (the angular
 * velocity in the body frame).  Its joint-space terms act on those dofs as MuJoCo's do (avbd_mdof.c): damping,
 * armature, friction loss (one row per dof), the spring to qpos_spring, the ball's cone limit on the rotation
 * angle; and an actuator acting through the joint applies its gear on them.  A dof's displacement over the step
 * is taken to first order from the body increments, Δ_i = Σ_side pg[side][i]·δz_side (δz = (x − x⁰, Log(q q⁰⁻¹))),
 * with the gradients pg of the step-start poses: q̇_i = Σ_side pg[side][i]·(v, ω)_side at the step start. */
typedef struct rl_avbd_mdof {
  int jnt;          /* model joint id */
  int type;         /* RL_JNT_BALL or RL_JNT_FREE */
  int nd;           /* dofs: 3 (ball) or 6 (free) */
  int a, b;         /* slots of the parent (−1: static) and of the body */
  int joint;        /* the rl_avbd.joint entry holding a ball (its own, or the compound joint); −1 for a free joint */
  int comp;         /* the ball's component in that compound joint, −1 otherwise */
  int lim_row;      /* the ball's cone-limit row (one-sided: C = max(range) − ‖Log q‖ ≥ 0) */
  int dry_row;      /* the first of nd dry-friction rows (C_i = Δ_i) */
  int terms;        /* 1 if it has damping, stiffness, armature, friction loss or a limit */
  int used;         /* 1 if it has terms or an actuator acts through the joint (its gradients are needed) */
  real pg[2][6][6]; /* step start: ∂Δ_i/∂δz on the parent side (0; zero for a static parent) and on the body (1) */
  real vn[6];       /* dof rates at the step start: the last step's Δ/h, or the loaded state's q̇ */
  real un[3];       /* the ball's rotation axis θ/‖θ‖ at the step start (its cone limit's normal on the step) */
} rl_avbd_mdof;

/* An actuator whose transmission moves body poses as a wrench rather than along a joint coordinate or a path
 * length: a site (force gear[0:3] and torque gear[3:6] in the site frame, at the site), a ball or free joint
 * (gear on its dofs, rl_avbd_mdof), a body (adhesion: minus the mean over the body's contacts of the contact
 * normal's relative point Jacobian).  The moment is MuJoCo 2.2.2's at the step start (J_s: a wrench on each
 * slot s, at the COM); its displacement over the step ℓ = Σ_s J_s·δz_s gives the velocity V = ℓ/h, and a ball
 * joint's length L = Lⁿ + ℓ.  An actuator whose force does not depend on L or V is explicit: F·J_s joins each
 * body's external wrench in the prediction.  One that does (a velocity bias, a length bias on a ball joint) is
 * an entry −1 − u of the acting path list, its force F(L, V) at the iterate with curvature (avbd_wrench.c). */
typedef struct rl_avbd_wrench {
  int u;       /* actuator */
  int mdof;    /* ball or free joint transmission: its rl_avbd_mdof, else −1 */
  int spat;    /* its entry in the acting path list when its force depends on the iterate, −1: explicit */
  int jadr;    /* its step-start moment at rl_avbd.wj + jadr, a wrench (six reals) per slot */
  real Ln, Vn; /* MuJoCo's actuator_length and actuator_velocity at the step start */
} rl_avbd_wrench;

/* A row group that couples bodies the tree joints do not join, solved exactly inside an articulation block
 * (avbd_tree.c): an equality joint between two dynamic bodies, an acting spatial path through two or more
 * of them, a coordinate row or a fixed tendon's spring/damper/actuator term over two or more joint
 * coordinates.  Listed at build in the order the blocks are grown (avbd_tree_build). */
enum { RL_AVBD_LOOP_CROW = 0, RL_AVBD_LOOP_EQ = 1, RL_AVBD_LOOP_FIXED = 2, RL_AVBD_LOOP_PATH = 3 };
typedef struct rl_avbd_litem {
  int kind;  /* RL_AVBD_LOOP_* */
  int id;    /* crow index, joint index, model tendon id, acting path index (rl_avbd.spat) */
  int rows;  /* rows it adds to its block's Woodbury step (an equality joint's two-sided rows, else 1) */
  int block; /* its block (index into tadr), −1 when it stays outside the block solves */
} rl_avbd_litem;

/* The AVBD model and state (one allocation, sized at build). */
typedef struct rl_avbd {
  rl_avbd_param prm;
  int nrest;                     /* geom pairs of one articulation overlapping at qpos0, left out (rest_overlaps) */
  int nrest_kept;                /* such pairs beyond RL_AVBD_MAXREST, kept */
  int rest[RL_AVBD_MAXREST][2];  /* their geoms, the lower id first */
  int nb;               /* dynamic bodies (slots 0..nb) */
  int *body;            /* slot → model body id */
  int *slot;            /* model body id → slot, −1 static */
  real *mass, *inertia; /* [nb], [nb×3] principal inertia of the COM frame */
  real *iquat;          /* [nb×4] model inertial frame (COM frame in the body frame) */
  real *ipos;           /* [nb×3] */
  rl_avbd_pose *pose;   /* [nb] current */
  real *vel;            /* [nb×6] world (v_com, ω) */
  real *x0, *q0;        /* step start [nb×3], [nb×4] */
  real *xp, *qp;        /* prediction */
  real *dx;             /* [nb×3] x − x⁰ accumulated from the updates (v = dx/h without cancellation) */
  real *dq;             /* [nb×4] q (q⁰)⁻¹ accumulated from the updates (ω = Log(dq)/h, likewise) */
  real *I0;             /* [nb×9] frozen world inertia */
  real *xfrc;           /* [nb×6] external force and torque at the COM (world), set by the user */
  int njoint;
  rl_avbd_joint *joint;
  int nrow;
  rl_avbd_row *row;
  int *jadr, *jnum, *jlist; /* body slot → joints (CSR) */
  /* contacts */
  int maxcon, ncon, nprev;
  rl_avbd_contact *con, *prev;
  int *cadr, *cnum, *clist; /* body slot → contacts (CSR) */
  /* ground contact generation: geom views relative to the COM frame */
  real *gpos, *gquat; /* [ngeom×3], [ngeom×4] */
  /* coloring */
  int ncolor;
  int *color; /* [nb] color of each slot (ncolor = overflow) */
  int *order; /* [nb] slots in sweep order */
  /* statistics */
  rl_avbd_stat stat;     /* last step */
  long steps, exhausted; /* steps taken, steps that used the whole budget */
  long sweeps;           /* sweeps of all steps taken (mean per step: sweeps/steps) */
  rl_avbd_load *load;    /* [njoint] joint-space loads after the last step; zero for ball/weld/
                               connect except reaction */
  int servo_scaled;      /* servo model the row scales (ρ₀ of armature) were computed for */
  real time;
  real *vprev; /* [nb×3] v_com at the previous step start (adaptive initial guess) */
  int *comp;   /* [nb] component root slot for the coarse step, −1 if none */
  real *cwork; /* [nb×46] coarse-step sums */
  real *upd;   /* [nb×2] last sweep's update sizes ‖δx‖, ‖δθ‖ per slot */
  int *guard;  /* [nb] last sweep's guarded pivots per slot */
  long step0;  /* steps at the last rl_avbd_from_generalized (no previous velocity before) */
  real *chl;   /* [nrow×2] Chebyshev history (prm.cheb_rho > 0): each row's λ after the dual
                               updates k−1 (first nrow) and k−2 (second nrow) */
  /* evaluation cache: a joint's or contact's values at the current poses, reused by every reader until
     one of its bodies moves (avbd_joint_val, avbd_contact_val) */
  unsigned long long *ver;   /* [nb] pose version of each slot, raised on every move */
  rl_avbd_joint_val *jval;   /* [njoint] values of rl_avbd_joint_val_ok joints */
  unsigned long long *jver;  /* [njoint×2] versions of bodies a, b the values were taken at */
  rl_avbd_contact_val *cval; /* [maxcon] contact values */
  unsigned long long *cver;  /* [maxcon×2] */
  int ncmp;                  /* compound joints (bodies with several joints) */
  rl_avbd_compound *cmp;     /* [ncmp] */
  rl_avbd_compound_val *cmpval;
  unsigned long long *cmpver; /* [ncmp×2] pose versions of cmpval */
  void *buffer;
  int ctrl_zero; /* the step's controls failed the bad-state test: the servos act on zero controls */
  /* articulations (avbd_tree.c): each body's tree parent and the joint to it, and the bodies grouped by
     articulation, parents before children */
  int *tparent;  /* [nb] parent slot in the articulation, −1 for its root */
  int *tjoint;   /* [nb] joint to the parent, −1 for a root */
  int *tsj;      /* [nb] the joint whose two-sided rows the articulation block eliminates in constraint space with
                    the slot (avbd_tree_factor): its joint to the parent, or for a root its joint to the world; −1 */
  int ntree;     /* blocks: articulations, those joined by loop items one block (avbd_tree_build) */
  int *tadr;     /* [nb+1] first entry of block k in tlist */
  int *tlist;    /* [nb] slots by block, parents first */
  real *tmass;   /* [nb] mass of each slot's articulation (kg) */
  real tlever;   /* the shortest lever of a block's constraint joint: its nonzero anchor arms (m, avbd_tree_build) */
  int *tblock;   /* [nb] block of each slot (index into tadr) */
  int nlitem;    /* loop items (candidates, in the order the blocks are grown) */
  rl_avbd_litem *litem; /* [nlitem] */
  int *lsadr;           /* [nlitem+1] first entry of item i in lslot */
  int *lslot;           /* the distinct slots each item reads (−1 for static bodies) */
  int *ftloop;          /* [ntendon] 1 if fixed tendon t's joint-space term is a loop item of its block */
  double *twork; /* [nb×AVBD_TW] per slot, in double precision in both builds (articulation blocks, layout AVBD_TW_*): block D (36), coupling to the
                    parent (36), right side (6), step (6), coordinate terms of the tree hinge (2), and the rows of
                    the slot's joint in constraint space (avbd_tree_factor) */
  double *tvec;  /* [6·(nb+1)] a right side of the articulation factor (avbd_tree_solve) */
  int *tfac;     /* [nb] 1 when block k's factor in twork is its whole matrix H after the last sweep (no lone free
                    body, no loop rows): the stop's certificate can use it */
  int ncert;     /* the certificate's row capacity: AVBD_CERT_MAX when built with RL_AVBD_STOP_CERTIFIED, else 0 */
  double *cdual; /* [ncert × (3·ncert + 9)] the certificate's J H⁻¹ Jᵀ, two scratch, J, Δλ, t̂ */
  int *cdrow;    /* [ncert] the certificate's rows: 3·contact + row */
  real *clam;    /* [3·maxcon] the contacts' multipliers before the last dual update (only where ncert > 0) */
  int nloop;     /* loop rows one articulation block couples exactly (at most AVBD_LOOP_MAX) */
  real *tloop;   /* [nloop×(12·nb + nloop + 1) + nloop] loop rows' Jacobians over the slots U, Z = H'⁻¹U, the
                    capacitance matrix and the weights (avbd_tree_loops) */
  int nmoving;            /* joints and equalities to a body that moves with a mocap body */
  rl_avbd_moving *moving; /* [nmoving] */
  int nmocap;             /* the model's mocap bodies */
  int *ride;              /* [nb] mocap id of the mocap body a slot hangs from through tree joints, −1 if none */
  real *mocap_last;       /* [nmocap×7] the mocap poses (pos, quat as given) the AVBD state was last moved to */
  real *mocap_prev;       /* [nmocap×7] the pose before that move */
  long *mocap_moved;      /* [nmocap] am->steps when the mocap body last moved (−1: not since the start) */
  /* spatial tendons that exert a force (avbd_tendon.c) */
  real *spos;   /* [nsite×3] each site in its body's COM frame (dynamic) or in the world (static) */
  real *szax;   /* [nsite×3] each site's z axis in the same frame (a slider-crank's slider axis) */
  int nspat;    /* acting spatial tendons, slider-crank transmissions and implicit wrench actuators (lengths on body
                   poses: rl_avbd_wrench) */
  int *spat;    /* [nspat] their model tendon ids, or −1 − u for actuator u's slider-crank or wrench transmission */
  real *spat_n; /* [nspat×2] length Lⁿ and rate L̇ⁿ at the step start (a wrench actuator's displacement: 0, Vⁿ) */
  int *spsadr;  /* [nspat+1] first entry of tendon i in spslot */
  int *spslot;  /* the distinct slots on each tendon's path, −1 once if it touches a static body */
  int *spadr;   /* [nb+1] first entry of slot s in splist */
  int *splist;  /* the acting spatial tendons (index into spat) through each slot */
  int ncrow;          /* constraint rows on scalar coordinates (tendon limits, joint and tendon equalities) */
  rl_avbd_crow *crow; /* [ncrow] */
  int *crsadr;        /* [ncrow+1] first entry of row i in crslot */
  int *crslot;        /* the distinct slots each row depends on: its spatial tendons' paths, the two bodies of
                         each joint coordinate in it (−1 once for static bodies) */
  int *cradr;         /* [nb+1] first entry of slot s in crlist */
  int *crlist;        /* the coordinate rows that depend on each slot (edges of the coloring) */
  int *cjadr;         /* [njnt+1] first entry of model joint j in cjlist */
  int *cjlist;        /* the coordinate rows whose scalars move with each model joint's coordinate (the joint
                         itself or a fixed tendon through it), ascending (avbd_crow_coord_terms visits only these) */
  /* ball and free joints (avbd_mdof.c) */
  int nmdof;
  rl_avbd_mdof *mdof; /* [nmdof] */
  int *jmdof;         /* [njoint] the ball of each joint (a compound joint holds at most one), −1 if none */
  int *smdof;         /* [nb] the free joint of each slot, −1 if none */
  /* actuators acting as wrenches on body poses (avbd_wrench.c) */
  int nwrench;
  rl_avbd_wrench *wrench; /* [nwrench] */
  int *uwrench;           /* [nu] each actuator's wrench entry, −1 if none */
  real *wj;               /* the wrench actuators' step-start moments, [nb×6] each */
  real *fext;             /* [nb×6] the explicit actuator wrenches of this step (world, at the COM) */
  real *squat;            /* [nsite×4] each site's frame in its body's COM frame (dynamic bodies) */
} rl_avbd;

/* 1 if two geoms on different dynamic bodies pass the contype/conaffinity filter */
int rl_avbd_dynamic_pairs(const rl_model *m);
/* The documented defaults (see rl_avbd_param) for model m: the precision's values, prm.contacts =
   RL_AVBD_CONTACTS_DATA if rl_avbd_dynamic_pairs(m), a height field or a static non-plane geom can be touched, else
   RL_AVBD_CONTACTS_GROUND, then m->opt's
   avbd_* overrides (0 keeps the default; avbd_tolerance sets tol_lin and scales tol_ang with it). */
rl_avbd_param rl_avbd_default_param(const rl_model *m);
/* Build from the model with parameters PRM (copied): refuses (NULL + one-line err) zero-mass or
   non-positive-inertia dynamic bodies (naming the body), a body whose joints do not determine its pose
   (a free joint among others, more than 3 rotational or 3 sliding dofs, dependent axes; naming the body
   and its joints), unsupported equality types. */
rl_avbd *rl_avbd_build(const rl_model *m, const rl_avbd_param *prm, char *err, int errlen);
void rl_avbd_free(rl_avbd *am);
/* Body COM poses and world velocities from d->qpos/qvel (rl_kinematics, rl_com_pos, rl_com_vel);
   resets the multipliers and the contact cache. */
void rl_avbd_from_generalized(rl_avbd *am, const rl_model *m, rl_data *d);
/* Joint coordinates and velocities from relative poses (hinge angle unwrapped to the branch nearest
   the current d->qpos, quaternion sign kept continuous); also writes d->time. */
void rl_avbd_to_generalized(const rl_avbd *am, const rl_model *m, rl_data *d);
/* Copy d->contact[0..ncon) into the AVBD contact list (RL_AVBD_CONTACTS_DATA). */
void rl_avbd_load_contacts(rl_avbd *am, const rl_model *m, const rl_data *d);
/* One whole step of size m->opt.timestep (contacts per am->prm.contacts, the step, qpos/qvel/time
   written back); returns RL_OK or RL_ERR_NUMERIC (non-finite state: the step is undone, d holds the
   step-start state).  Diagnostics in am->stat. */
rl_status rl_avbd_step(rl_avbd *am, const rl_model *m, rl_data *d);
/* The step of the AVBD state only: the contacts last loaded (RL_AVBD_CONTACTS_DATA) or the own ground
   contacts, d->qpos/qvel untouched (d->time advances); status as rl_avbd_step. */
rl_status rl_avbd_step_maximal(rl_avbd *am, const rl_model *m, rl_data *d);
/* Mocap bodies at the poses in d (d->mocap_pos, d->mocap_quat), with MuJoCo's semantics (a mocap body is a
   static body placed anew each step; the bodies hanging from it through tree joints keep their joint
   coordinates and velocities, carried along without inertial forces, as MuJoCo's relative coordinates are):
   the bodies that hang from a moved mocap body are moved rigidly with it (poses and world velocities by the
   mocap body's displacement since the last call), and the A-side geometry of every joint or equality to a
   mocap-driven static body is mapped to the world (rl_avbd_moving).  rl_avbd_step and rl_avbd_step_maximal
   call it at the step start (rl_avbd_from_generalized takes the poses as they are); a caller that moves the
   mocap bodies only sets d->mocap_pos/mocap_quat before the step. */
void rl_avbd_mocap_frames(rl_avbd *am, const rl_data *d);
/* 1 if this engine build runs prm.threads > 1 on OpenMP threads (built with OpenMP), else 0 */
int rl_avbd_openmp(void);

#endif
