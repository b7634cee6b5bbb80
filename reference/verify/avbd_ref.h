/* avbd_ref.h — the dense global reference of one AVBD step, compiled per precision,
 * solved in double whatever the precision of the engine.
 *
 * The step problem of rl_avbd (prediction, inertia energy, augmented rows, joints) for all bodies at once:
 *
 *   min over the body poses (x_i, q_i)   Σ_i  m_i/(2h²)‖x_i − x_p,i‖² + 1/(2h²) θ_iᵀ I₀,i θ_i ,
 *                                        θ_i = Log(q_i q_p,i⁻¹),  I₀ = R⁰ diag(I) R⁰ᵀ (frozen at the step start)
 *                                      + Σ_joints  b/(2h)(φ − φⁿ)² + k_s/2 (φ − φ_spring)² + a/(2h²)(φ − φⁿ − hφ̇ⁿ)²
 *   subject to  C_r(x, q) = α·C_r⁰  for every two-sided row r (the stabilized target of C̃ = C − α C⁰)
 *
 * with the prediction x_p = x + hv + h²(g + f/m), q_p = Exp(h ω')·q (ω' from the implicit gyroscopic
 * step, as avbd.c), and the rows of rl_avbd_body.h rebuilt in double from the joint geometry stored in
 * rl_avbd (anchors r_A, r_B; axes; q_rel0): hinge = 3 anchor + 2 axis rows, slide = 2 lateral + 3
 * rotation, ball/connect = 3 anchor, weld = 3 anchor + 3 rotation.
 *
 * Solved by Newton on the KKT saddle-point system
 *     [ H  Jᵀ ] [δz]     [ g          ]
 *     [ J  0  ] [λ ] = − [ C − α C⁰   ]      (LAPACKE_dsysv, symmetric indefinite)
 * (H: inertia Hessian with the SO(3) log Jacobian, Gauss–Newton in the rows; the fixed point is the
 * exact KKT point: g + Jᵀλ = 0, C = αC⁰), poses updated x += δx, q ← Exp(δθ)·q, until ‖δz‖∞ ≤ 1e-14.
 *
 * Compound joints (a body with several joints to its parent): their coordinates q are unknowns of the
 * problem and the six rows C = (x_B − x_T(A, q), Log(q_B q_T(A, q)⁻¹)) tie B to the pose the components
 * compose (avbd_ref.c: cmp_rows) — the same manifold as the engine's 6 − dof rows, written independently.
 * Joint-space terms on every hinge/slide coordinate (own joint or compound component): damping,
 * stiffness, armature, MuJoCo's PD position servo (as the engine applies it, implicit in φ̇ = (φ − φⁿ)/h).
 *
 * The one-sided and bounded rows (rl_avbd_ref_finish, called after the step on the same rl_avbd) in two
 * phases.  First the active set of the engine's final iterate as equalities: a limit row with λ < 0 is the
 * equality C = α·min(C⁰, 0); a dry-friction row inside its budget (|λ_f| < τ_f) the equality φ = φⁿ, one on its
 * bound a constant force λ_f on φ; a contact with λ_n < 0 has its normal row C_n = α·min(C⁰_n, 0) (through the
 * centres of curvature, as the engine) and, sticking, its tangent rows C_t = α·C⁰_t, or, slipping, the
 * constant tangent force λ_t of the engine's iterate; inactive rows left out.  Then, from that solution, the
 * step's own complementarity conditions with every limit side, dry row and contact row of the step as an
 * unknown: semismooth Newton on λ = Π(λ + rC̃) (Alart–Curnier; Π: λ ≤ 0 for normals and limits, the Coulomb
 * disc ‖λ_t‖ ≤ μ|λ_n| for a tangent pair, |λ_f| ≤ τ_f for dry friction), each row's state (pressing / open,
 * sticking / slipping) re-decided every iteration.  The engine's active set is thus where the reference
 * starts, not what it assumes: where rows are nearly dependent (a straight-kneed stance closes a loop of rows
 * through both feet, the legs and the torso) the equalities of a right active set can still pick a split of
 * the load that pulls on a contact, and the second phase finds the solution the conditions allow
 * (rl_avbd_ref.refined counts the rows whose state differs from the engine's).  The C⁰ are re-evaluated here
 * at the stored step-start poses. Not rebuilt (counted in rl_avbd_ref.omitted): contact spin/roll
 * rows (condim 4/6), the BAM servo model, and what avbd_ref.c's unmodelled_terms lists (acting tendons, actuators
 * other than one PD servo per hinge/slide coordinate — those on sites, ball and free joints and bodies included —,
 * fluid forces, rows on scalar coordinates, the dof terms, friction loss and cone limit of ball and free joints).
 *
 * Usage: rl_avbd_ref_begin(&ref, am, m, d) before rl_avbd_step (d: the step-start generalized state, as
 * after rl_avbd_from_generalized or a step), rl_avbd_ref_finish(&ref, am, m, d) after it, then
 * rl_avbd_ref_distance(&ref, am, &dx, &dth) (avbd_judge.h: rl_avbd_step_judged does this around one step and
 * classifies its stop).  rl_avbd_ref_solve = begin + finish before the step with no
 * active set (limits, dry friction and contacts counted in omitted): the contact-free step. */
#ifndef RL_AVBD_REF_H
#define RL_AVBD_REF_H

#include "rl_avbd.h"

#define rl_avbd_ref          RL_NAME(avbd_ref)
#define rl_avbd_ref_solve    RL_NAME(avbd_ref_solve)
#define rl_avbd_ref_begin    RL_NAME(avbd_ref_begin)
#define rl_avbd_ref_finish   RL_NAME(avbd_ref_finish)
#define rl_avbd_ref_distance RL_NAME(avbd_ref_distance)
#define rl_avbd_ref_free     RL_NAME(avbd_ref_free)

#define RL_AVBD_REF_NEWTON_CAP 100             /* Newton iterations per solve */
#define RL_AVBD_REF_COMPLEMENTARITY_MAX 400    /* the second phase's largest system (unknowns + rows) */
#define RL_AVBD_REF_COMPLEMENTARITY_CAP 40     /* and its semismooth Newton iterations */

/* what the reference's solution rests on (rl_avbd_ref.basis; 0: not converged) */
enum {
  RL_AVBD_REF_ADMISSIBLE = 1, /* the engine's active set, and its solution meets the step's conditions */
  RL_AVBD_REF_SOLVED,         /* the step's complementarity conditions, solved (second phase) */
  RL_AVBD_REF_GIVEN           /* the engine's active set and slipping forces taken as given: the second phase
                                 did not converge or the system is larger than RL_AVBD_REF_COMPLEMENTARITY_MAX */
};

typedef struct rl_avbd_ref {
  int nb, nrow;           /* bodies, two-sided rows */
  double *x, *q;          /* solution poses [nb×3], [nb×4] (COM frames) */
  double *xp, *qp;        /* the prediction [nb×3], [nb×4] */
  double *lambda;         /* multipliers [nrow] (force/torque, sign of avbd.c: g + Jᵀλ = 0) */
  int iterations;         /* Newton iterations */
  int converged;          /* the last Newton step ≤ 1e-12 (m, rad) and primal ≤ 1e-10: the solution is trusted */
  int info;               /* LAPACKE_dsysv info of the last solve (0: ok) */
  double step;            /* ‖δz‖∞ of the last Newton step */
  double stationarity[2]; /* ‖g + Jᵀλ‖∞ at the solution: [0] force rows (N), [1] torque rows (N m) */
  double primal;          /* ‖C − αC⁰‖∞ at the solution (m, rad) */
  int omitted;            /* terms of the AVBD step not in the reference (see above) */
  int active;             /* rows taken as equalities from the active set (limits, dry friction, contact normals) */
  int slipping;           /* slipping dry-friction rows and contacts (their forces taken from the engine) */
  int basis;              /* RL_AVBD_REF_ADMISSIBLE, _SOLVED, _GIVEN (see above), 0 when not converged */
  int refined;            /* limits, dry-friction rows, contact normals and tangent pairs whose state at the
                             solution differs from the engine's active set (see above) */
  void *pb;               /* the step-start problem (rl_avbd_ref_begin) */
} rl_avbd_ref;

/* Solve the step problem from am's current (step-start) state; am is not modified.
   Returns 0, or −1 (allocation failure, a singular KKT matrix: ref->info). */
int rl_avbd_ref_solve(rl_avbd_ref *ref, const rl_avbd *am, const rl_model *m, const rl_data *d);
/* The step start (prediction, inertia, coordinates) from am's current state and d's generalized one. */
int rl_avbd_ref_begin(rl_avbd_ref *ref, const rl_avbd *am, const rl_model *m, const rl_data *d);
/* After the step: the active set and contacts from am's final iterate, then the Newton solve. */
int rl_avbd_ref_finish(rl_avbd_ref *ref, const rl_avbd *am, const rl_model *m, const rl_data *d);
/* Distance of am's poses to the reference solution: max_i ‖x_i − x_i*‖ (m) and max_i ‖Log(q_i q_i*⁻¹)‖ (rad). */
void rl_avbd_ref_distance(const rl_avbd_ref *ref, const rl_avbd *am, double *dx, double *dtheta);
void rl_avbd_ref_free(rl_avbd_ref *ref);

#endif
