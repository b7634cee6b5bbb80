/* avbd_internal.h — what the AVBD sources (engine/avbd_*.c) share: constants, the world pose, small pose
 * helpers, and the functions one file defines and another calls, precision-named like the public API (see rl_names.h).  Private to engine/;
 * callers use rl_avbd.h. */
#ifndef AVBD_INTERNAL_H
#define AVBD_INTERNAL_H

#include <stdio.h>
#include "rl_avbd.h"

#define AVBD_MAXCOLOR       32
#define AVBD_LIN_SCALE      ((real)1e-3) /* ℓ of the penalty growth: 1 mm */
#define AVBD_ANG_SCALE      ((real)1e-3) /* 1 mrad */
#define AVBD_PAIR_RHO_CARRY ((real)2)    /* most ρ/ρ₀ a body–body contact carries to the next step */
#define AVBD_SIDE_RATIO     ((real)100)  /* supported-side mass / lighter body above which ρ₀ uses the side */
#define AVBD_TREE_CONTACT_MASS ((real)10) /* articulation blocks: contact ρ₀ mass ≤ this × the lighter body's */
/* doubles of rl_avbd.twork per slot (articulation blocks; their factor runs in double precision in both builds:
   on a chain of light links under a heavy body, eliminating the heavy body leaves the light links' free rotations
   as differences of the heavy body's terms, ~m_heavy/m_light·ε relative, which single precision does not resolve) */
#define AVBD_TW_D  0   /* block D (then its factor L) */
#define AVBD_TW_Y  36  /* dense coupling to the parent H_sp (then Y = L⁻¹H_sp) */
#define AVBD_TW_G  72  /* right side */
#define AVBD_TW_DZ 78  /* step */
#define AVBD_TW_GK 84  /* coordinate terms G, k of the slot's hinge to its parent */
#define AVBD_TW_X  86  /* the rows of the slot's joint (avbd_tree_rows, r ≤ 6): child Jacobians J_B (then X = L⁻¹J_Bᵀ) */
#define AVBD_TW_B  122 /* parent Jacobians J_A (then B̃) */
#define AVBD_TW_S  158 /* S = XᵀX (then its factor) */
#define AVBD_TW_F  194 /* the rows' C̃ */
#define AVBD_TW_E  200 /* reduced right side ẽ */
#define AVBD_TW_R  206 /* r */
#define AVBD_TW_NU 207 /* the rows' multipliers of the step (avbd_tree_subst) */
#define AVBD_TW_U  213 /* a coupling of rank one, H_sp = w u vᵀ (avbd_tree_coupling): u (then L⁻¹u) */
#define AVBD_TW_V  219 /* v */
#define AVBD_TW_W  225 /* w */
#define AVBD_TW_RK 226 /* 1: the coupling is w u vᵀ (AVBD_TW_Y unused), 0: dense */
#define AVBD_TW    227
/* most loop rows (equality constraints and spatial paths between bodies of one articulation) an articulation
   block solves with their coupling exact (avbd_tree_loops); further ones are seen body by body */
#define AVBD_LOOP_MAX       24
/* most contact rows of one articulation in the stop's certificate (avbd_tree_contact_certify) */
#define AVBD_CERT_MAX      48
#define AVBD_TOL_H          ((real)1e-3) /* step at which tol_lin/tol_ang apply as given (avbd_step_tolerance) */

/* the world's pose (nvcc's device pass: the same constant in device memory) */
#if defined(__CUDA_ARCH__)
__device__ static const rl_avbd_pose avbd_world = {{0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0, 1, 0, 0, 0, 1}};
#else
static const rl_avbd_pose avbd_world = {{0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0, 1, 0, 0, 0, 1}};
#endif

/* pose of slot s, the world for s < 0 */
RL_HDFN static inline const rl_avbd_pose *avbd_pose_of(const rl_avbd *am, int s) { return s < 0 ? &avbd_world : am->pose + s; }

/* pose version of slot s (the world never moves: 0).  Versions start at 1 with the first prediction
   and rise on every move (avbd_moved), so a cached value taken at versions (v_a, v_b) is the value at
   the current poses exactly while both still hold. */
RL_HDFN static inline unsigned long long avbd_ver(const rl_avbd *am, int s) { return s < 0 ? 0 : am->ver[s]; }

/* 1 (and v ← the current versions) when a value cached at pose versions v of slots a, b is stale */
RL_HDFN static inline int avbd_stale(const rl_avbd *am, int a, int b, unsigned long long v[2]) {
  unsigned long long va = avbd_ver(am, a), vb = avbd_ver(am, b);
  if (v[0] == va && v[1] == vb) return 0;
  v[0] = va;
  v[1] = vb;
  return 1;
}

/* Values of hinge, ball or connect joint j (rl_avbd_joint_val_ok) at the current poses: the cached ones while
   neither body has moved since they were taken, else evaluated now (inline: the articulation blocks read
   them several times per body and sweep).  A block update reads the joints of its own body only, and no two
   bodies of one color share a joint, so the bodies of one color never touch the same entry (the OpenMP sweep
   stays race-free and bit-identical). */
RL_HDFN static inline const rl_avbd_joint_val *avbd_joint_value(rl_avbd *am, int j) {
  const rl_avbd_joint *jt = am->joint + j;
  if (avbd_stale(am, jt->a, jt->b, am->jver + 2 * j))
    rl_avbd_joint_val_eval(am->jval + j, jt, avbd_pose_of(am, jt->a), avbd_pose_of(am, jt->b));
  return am->jval + j;
}

/* mass of slot s, "infinite" for the world */
RL_HDFN static inline real avbd_mass(const rl_avbd *am, int s) { return s < 0 ? (real)1e30 : am->mass[s]; }

/* mass of the articulation of slot s (avbd_tree_build), "infinite" for the world */
RL_HDFN static inline real avbd_tree_mass(const rl_avbd *am, int s) { return s < 0 ? (real)1e30 : am->tmass[s]; }

/* the root slot of slot s's articulation (avbd_tree_build) */
RL_HDFN static inline int avbd_tree_root(const rl_avbd *am, int s) {
  while (am->tparent[s] >= 0) s = am->tparent[s];
  return s;
}

/* Δq = q (q⁰)⁻¹ of slot s, NULL for the world */
RL_HDFN static inline const real *avbd_dq_of(const rl_avbd *am, int s) { return s < 0 ? NULL : am->dq + 4 * s; }

/* 1 if actuator u acts through joint j (a joint or joint-in-parent transmission) */
RL_HDFN static inline int avbd_joint_trn(const rl_model *m, int u, int j) {
  int t = m->actuator_trntype[u];
  return (t == RL_TRN_JOINT || t == RL_TRN_JOINTINPARENT) && m->actuator_trnid[2 * u] == j;
}

/* 1 if a row with loop flag `loop` (rl_avbd_crow.loop, rl_avbd.ftloop) is solved as a loop row of its articulation
   block: its curvature then goes through the block's Woodbury step (avbd_tree_loops) and the coordinate terms leave
   it out */
RL_HDFN static inline int avbd_loop_row(const rl_avbd *am, int loop) {
  return loop > 0 && am->prm.block == RL_AVBD_BLOCK_ARTICULATION;
}

/* penalty growth ρ ← min(ρ + β·ρ₀·|C̃|/ℓ, ρ_max) */
RL_HDFN static inline real avbd_grow(const rl_avbd_param *pr, real rho, real rho0, real c, real ell) {
  return rl_avbd_min(rho + pr->beta * rho0 * rl_fabs(c) / ell, pr->rho_max * rho0);
}

/* Dual update of a one-sided row (a limit) at its new value c̃: λ ← min(λ + ρc̃, 0), ρ grown while the row
 * holds (length scale ell); returns the residual |λ − min(λ + ρc̃, 0)|/ρ.  A row the primal step left off — λ = 0
 * and c̃ ≥ 0 where the step linearized (the row's last value): no force and no curvature in that step — and
 * found violated keeps λ = 0 one more iteration: the violation is the overshoot of a step that did not see the
 * row, and λ = ρc̃ would be ρ/S times the force that holds it (S the system's stiffness along the row); the next
 * primal step takes the row with its curvature ρ, and the dual update after it the force.  Without this a limit
 * reached with ρ ≫ S cycles: off and overshot by v, λ = −ρv, back inside by ≈ v, λ ≈ −2Sv, off again
 * (MuJoCo's humanoid at 5 ms, shoulder limits at −90°: 78 of 401 steps at the budget in 2 s, 27 with the rule). */
RL_HDFN static inline real avbd_one_sided_dual(const rl_avbd_param *pr, rl_avbd_row *w, real c, real ell) {
  int left_off = w->lambda == 0 && !(w->c < 0);
  w->c = c;
  real nl = rl_avbd_proj_neg(w->lambda + w->rho * c);
  real r = rl_fabs(w->lambda - nl) / w->rho;
  w->lambda = left_off ? 0 : nl;
  if (w->lambda < 0) w->rho = avbd_grow(pr, w->rho, w->rho0, c, ell);
  return r;
}

#define avbd_perp                    RL_NAME(avbd_perp)
#define avbd_nfeature                RL_NAME(avbd_nfeature)
#define avbd_pair_filter             RL_NAME(avbd_pair_filter)
#define avbd_mocap_of                RL_NAME(avbd_mocap_of)
#define avbd_bam_on                  RL_NAME(avbd_bam_on)
#define avbd_armature                RL_NAME(avbd_armature)
#define avbd_dry_budget              RL_NAME(avbd_dry_budget)
#define avbd_mean_inertia            RL_NAME(avbd_mean_inertia)
#define avbd_in_subtree              RL_NAME(avbd_in_subtree)
#define avbd_row_scales              RL_NAME(avbd_row_scales)
#define avbd_to_local                RL_NAME(avbd_to_local)
#define avbd_components              RL_NAME(avbd_components)
#define avbd_coord_rate              RL_NAME(avbd_coord_rate)
#define avbd_ground_contacts         RL_NAME(avbd_ground_contacts)
#define avbd_contact_points          RL_NAME(avbd_contact_points)
#define avbd_contact_centres         RL_NAME(avbd_contact_centres)
#define avbd_contact_c               RL_NAME(avbd_contact_c)
#define avbd_contact_warmstart       RL_NAME(avbd_contact_warmstart)
#define avbd_contact_lists           RL_NAME(avbd_contact_lists)
#define avbd_joint_on                RL_NAME(avbd_joint_on)
#define avbd_servo                   RL_NAME(avbd_servo)
#define avbd_act_advance             RL_NAME(avbd_act_advance)
#define avbd_coord_terms             RL_NAME(avbd_coord_terms)
#define avbd_assemble                RL_NAME(avbd_assemble)
#define avbd_diagnostics             RL_NAME(avbd_diagnostics)
#define avbd_compound_eval           RL_NAME(avbd_compound_eval)
#define avbd_compound_jac            RL_NAME(avbd_compound_jac)
#define avbd_compound_rate           RL_NAME(avbd_compound_rate)
#define avbd_compound_check          RL_NAME(avbd_compound_check)
#define avbd_compound_init           RL_NAME(avbd_compound_init)
#define avbd_compound_from_qpos      RL_NAME(avbd_compound_from_qpos)
#define avbd_compound_to_generalized RL_NAME(avbd_compound_to_generalized)
#define avbd_compound_value          RL_NAME(avbd_compound_value)
#define avbd_loads                   RL_NAME(avbd_loads)
#define avbd_tree_build              RL_NAME(avbd_tree_build)
#define avbd_tree_sweep              RL_NAME(avbd_tree_sweep)
#define avbd_tree_contact_certify    RL_NAME(avbd_tree_contact_certify)
#define avbd_block_update            RL_NAME(avbd_block_update)
#define avbd_contact_value           RL_NAME(avbd_contact_value)
#define avbd_tendon_force            RL_NAME(avbd_tendon_force)
#define avbd_tendon_path             RL_NAME(avbd_tendon_path)
#define avbd_spat_length             RL_NAME(avbd_spat_length)
#define avbd_tendon_begin            RL_NAME(avbd_tendon_begin)
#define avbd_tendon_assemble         RL_NAME(avbd_tendon_assemble)
#define avbd_joint_of                RL_NAME(avbd_joint_of)
#define avbd_crow_coord_terms        RL_NAME(avbd_crow_coord_terms)
#define avbd_scalar_dphi             RL_NAME(avbd_scalar_dphi)
#define avbd_crow_begin              RL_NAME(avbd_crow_begin)
#define avbd_crow_dual               RL_NAME(avbd_crow_dual)
#define avbd_ball_quat               RL_NAME(avbd_ball_quat)
#define avbd_body_quat               RL_NAME(avbd_body_quat)
#define avbd_actuator_law            RL_NAME(avbd_actuator_law)
#define avbd_actuator_input          RL_NAME(avbd_actuator_input)
#define avbd_disp                    RL_NAME(avbd_disp)
#define avbd_mdof_quat               RL_NAME(avbd_mdof_quat)
#define avbd_mdof_scales             RL_NAME(avbd_mdof_scales)
#define avbd_mdof_limit_on           RL_NAME(avbd_mdof_limit_on)
#define avbd_mdof_assemble           RL_NAME(avbd_mdof_assemble)
#define avbd_mdof_coupling           RL_NAME(avbd_mdof_coupling)
#define avbd_mdof_begin              RL_NAME(avbd_mdof_begin)
#define avbd_mdof_dual               RL_NAME(avbd_mdof_dual)
#define avbd_wrench_trn              RL_NAME(avbd_wrench_trn)
#define avbd_wrench_lengthful        RL_NAME(avbd_wrench_lengthful)
#define avbd_wrench_implicit         RL_NAME(avbd_wrench_implicit)
#define avbd_wrench_begin            RL_NAME(avbd_wrench_begin)
#define avbd_wrench_length           RL_NAME(avbd_wrench_length)
#define avbd_wrench_force            RL_NAME(avbd_wrench_force)
#define avbd_crow_loop               RL_NAME(avbd_crow_loop)
#define avbd_fixed_loop              RL_NAME(avbd_fixed_loop)
#define avbd_fixed_length            RL_NAME(avbd_fixed_length)
#define avbd_coord_jac               RL_NAME(avbd_coord_jac)

/* Limit row `side` (0 lower, 1 upper) of joint j at coordinate φ, as MuJoCo's limit row: its zero lies the
   joint's margin inside the range, C = φ − (lo + margin) or (hi − margin) − φ (ranges from d->jnt_range). */
RL_HDFN static inline real avbd_limit_c(const rl_model *m, const rl_data *d, int j, int side, real phi) {
  return side ? d->jnt_range[2 * j + 1] - m->jnt_margin[j] - phi : phi - d->jnt_range[2 * j] - m->jnt_margin[j];
}

/* avbd_build.c */
RL_HDFN void avbd_perp(real t1[3], real t2[3], const real n[3]);
RL_HDFN int avbd_nfeature(const rl_model *m, int g);
RL_HDFN int avbd_pair_filter(const rl_model *m, int g1, int g2);
RL_HDFN int avbd_mocap_of(const rl_model *m, int b);
RL_HDFN int avbd_bam_on(const rl_avbd *am, const rl_model *m, const rl_avbd_joint *jt);
RL_HDFN real avbd_armature(const rl_avbd *am, const rl_model *m, const rl_avbd_joint *jt);
RL_HDFN real avbd_dry_budget(const rl_avbd *am, const rl_model *m, const rl_avbd_joint *jt);
RL_HDFN real avbd_mean_inertia(const rl_avbd *am, const rl_model *m, int s);
RL_HDFN int avbd_in_subtree(const rl_model *m, int b, int top);
RL_HDFN void avbd_row_scales(rl_avbd *am, const rl_model *m, const rl_avbd_joint *jt);
RL_HDFN void avbd_to_local(real r[3], const rl_avbd_pose *p, const real w[3]);
RL_HDFN void avbd_components(rl_avbd *am);
RL_HDFN real avbd_coord_rate(const rl_avbd *am, const rl_avbd_joint *jt);
/* the relative rotation of ball joint jt as MuJoCo's qpos (not normalized), and slot s's body-frame quaternion */
RL_HDFN void avbd_ball_quat(const rl_avbd *am, const rl_avbd_joint *jt, real q[4]);
RL_HDFN void avbd_mdof_scales(rl_avbd *am, const rl_model *m, const rl_avbd_mdof *f);
RL_HDFN void avbd_body_quat(const rl_avbd *am, int s, real q[4]);

/* avbd_contact.c */
RL_HDFN void avbd_ground_contacts(rl_avbd *am, const rl_model *m, real h);
RL_HDFN void avbd_contact_points(const rl_avbd *am, const rl_avbd_contact *k, real pA[3], real uA[3], real pB[3], real uB[3]);
RL_HDFN void avbd_contact_centres(const rl_avbd *am, const rl_avbd_contact *k, real cA[3], real vA[3], real cB[3], real vB[3]);
RL_HDFN void avbd_contact_c(const rl_avbd *am, const rl_avbd_contact *k, real C[3]);
RL_HDFN void avbd_contact_warmstart(rl_avbd *am, const rl_model *m, real h);
RL_HDFN void avbd_contact_lists(rl_avbd *am);

/* avbd_joint.c (avbd_joint_of: the maximal-coordinate joint carrying model joint j, a compound's component
   included; NULL for a joint of a static body) */
RL_HDFN const rl_avbd_joint *avbd_joint_of(const rl_avbd *am, int j);
RL_HDFN int avbd_joint_on(const rl_model *m, const rl_data *d, const rl_avbd_joint *jt);
RL_HDFN real avbd_servo(const rl_avbd *am, const rl_model *m, const rl_data *d, const rl_avbd_joint *jt, real phi, real h,
                real *k);
RL_HDFN void avbd_act_advance(const rl_avbd *am, const rl_model *m, rl_data *d, real h);
RL_HDFN real avbd_tendon_force(const rl_avbd *am, const rl_model *m, const rl_data *d, int t, real L, real Ln, real dLn,
                               real h, real *kL);
RL_HDFN void avbd_coord_terms(const rl_avbd *am, const rl_model *m, const rl_data *d, const rl_avbd_joint *jt, real phi, real h,
                      int kkt, real *G, real *k);
RL_HDFN real avbd_actuator_law(const rl_model *m, int u, real w, real L, real V, real Ln, real Vn, real *dFdL,
                               real *dFdV);
RL_HDFN real avbd_actuator_input(const rl_avbd *am, const rl_model *m, const rl_data *d, int u);

/* avbd_mdof.c: ball and free joints' joint-space terms */
RL_HDFN void avbd_disp(const rl_avbd *am, int s, real dz[6]);
RL_HDFN void avbd_mdof_quat(rl_avbd *am, const rl_avbd_mdof *f, real q[4]);
RL_HDFN int avbd_mdof_limit_on(const rl_model *m, const rl_avbd_mdof *f);
RL_HDFN void avbd_mdof_assemble(rl_avbd *am, const rl_model *m, const rl_data *d, int k, int side, real h, int kkt,
                                real H[36], real g[6]);
RL_HDFN void avbd_mdof_coupling(rl_avbd *am, const rl_model *m, const rl_data *d, int k, real h, real C[36]);
RL_HDFN void avbd_mdof_begin(rl_avbd *am, const rl_model *m, const rl_data *d, real h);
RL_HDFN void avbd_mdof_dual(rl_avbd *am, const rl_model *m, const rl_data *d, real res[2]);

/* avbd_wrench.c: actuators acting as wrenches on body poses (site, ball and free joint, body transmissions) */
RL_HDFN int avbd_wrench_trn(const rl_model *m, int u);
RL_HDFN int avbd_wrench_lengthful(const rl_model *m, int u);
RL_HDFN int avbd_wrench_implicit(const rl_model *m, int u);
RL_HDFN void avbd_wrench_begin(rl_avbd *am, const rl_model *m, const rl_data *d);
RL_HDFN real avbd_wrench_length(const rl_avbd *am, int u, int s, real J[6], real *rate);
RL_HDFN real avbd_wrench_force(const rl_avbd *am, const rl_model *m, const rl_data *d, int u, real l, real h, real *kL);

/* avbd_sweep.c */
RL_HDFN void avbd_assemble(rl_avbd *am, const rl_model *m, const rl_data *d, int s, real h, int kkt, const double *tw,
                           real H[36], real g[6]);

/* avbd_compound.c */
RL_HDFN void avbd_compound_eval(const rl_avbd_compound *c, const rl_avbd_pose *A, const rl_avbd_pose *B,
                        rl_avbd_compound_val *v);
RL_HDFN void avbd_compound_jac(const rl_avbd_compound_val *v, const real w[6], int side, real J[6]);
RL_HDFN real avbd_compound_rate(const rl_avbd *am, const rl_avbd_joint *jt, const rl_avbd_compound_val *v, const real w[6]);
int avbd_compound_check(const rl_model *m, int b, int *ndof, int *nrow, char *err, int errlen);
RL_HDFN void avbd_compound_init(rl_avbd *am, const rl_model *m, const rl_data *d, rl_avbd_joint *jt, rl_avbd_compound *c, int b,
                        int *rowtop);
RL_HDFN void avbd_compound_from_qpos(rl_avbd_compound *c, const rl_model *m, const rl_data *d);
RL_HDFN void avbd_compound_to_generalized(const rl_avbd *am, const rl_model *m, rl_data *d, const rl_avbd_joint *jt);

/* avbd_sweep.c: values of compound joint jt at the current poses (cached until A or B moves) */
RL_HDFN const rl_avbd_compound_val *avbd_compound_value(rl_avbd *am, const rl_avbd_joint *jt);

/* avbd_sweep.c: values of contact i at the current poses (cached until a or b moves) */
RL_HDFN const rl_avbd_contact_val *avbd_contact_value(rl_avbd *am, int i);

/* avbd_sweep.c: one body's block update (assemble, solve, move) */
RL_HDFN void avbd_block_update(rl_avbd *am, const rl_model *m, const rl_data *d, int s, real h);

/* avbd_tree.c */
RL_HDFN void avbd_tree_build(rl_avbd *am);
RL_HDFN void avbd_tree_sweep(rl_avbd *am, const rl_model *m, const rl_data *d, real h, real *ux, real *uth);
RL_HDFN int avbd_tree_contact_certify(rl_avbd *am, real mv[2]);

/* avbd_tendon.c */
RL_HDFN real avbd_tendon_path(const rl_avbd *am, const rl_model *m, int t, int s, real J[6], real *rate);
RL_HDFN real avbd_spat_length(const rl_avbd *am, const rl_model *m, int id, int s, real J[6], real *rate);
RL_HDFN void avbd_tendon_begin(rl_avbd *am, const rl_model *m);
/* avbd_tendon.c: ∂S/∂φ_j of a row's scalar (kind, id) along model joint j's coordinate (0: S does not read it) */
RL_HDFN real avbd_scalar_dphi(const rl_model *m, int kind, int id, int j);
RL_HDFN real avbd_crow_coord_terms(const rl_avbd *am, const rl_model *m, const rl_data *d, const rl_avbd_joint *jt, real phi,
                                   int kkt, real *k);
RL_HDFN void avbd_crow_begin(rl_avbd *am, const rl_model *m, const rl_data *d);
RL_HDFN void avbd_crow_dual(rl_avbd *am, const rl_model *m, const rl_data *d, real res[2]);
RL_HDFN void avbd_tendon_assemble(const rl_avbd *am, const rl_model *m, const rl_data *d, int s, real h, int kkt,
                                  real H[36], real g[6]);
RL_HDFN real avbd_fixed_length(const rl_avbd *am, const rl_model *m, int t, const rl_avbd_joint *jt, real phi, int now,
                               real *Ln, real *dLn);
RL_HDFN void avbd_coord_jac(rl_avbd *am, int j, real c, real *u);
RL_HDFN real avbd_crow_loop(rl_avbd *am, const rl_model *m, const rl_data *d, int i, real *u);
RL_HDFN real avbd_fixed_loop(rl_avbd *am, const rl_model *m, const rl_data *d, int t, real h, real *u);

/* avbd_diag.c */
RL_HDFN void avbd_diagnostics(rl_avbd *am, const rl_model *m, const rl_data *d, real h);
RL_HDFN void avbd_loads(rl_avbd *am, const rl_model *m, const rl_data *d, real h);

#endif
