/* rl_solver.h — the soft-constraint solvers (issue 4): Newton and CG with exact line search on
 * the piecewise-quadratic cost, pyramidal and elliptic cones, convex and signorini resolution.
 *
 * The problem (MuJoCo 2.2.2's primal formulation, docs: MuJoCo's computation chapter):
 *
 *   minimize over a   cost(a) = ½(a − a₀)ᵀM(a − a₀) + s(J·a − aref),   a₀ = qacc_smooth
 *
 * with s a sum over rows (jar = J·a − aref) of:
 *   equality            ½·D·jar²                                  (always QUADRATIC)
 *   friction (dof)      ½·D·jar² for |jar| < R·f, else f·|jar| − ½·R·f²   (QUADRATIC / LINEARNEG / LINEARPOS)
 *   limit, frictionless and pyramidal contact rows: ½·D·jar² for jar < 0, else 0 (QUADRATIC / SATISFIED)
 *   elliptic contact (dim rows, U = (μ·jar₀, fric_j·jar_j), N = U₀, T = ‖U₁..‖):
 *        top      N ≥ μT            0                                  SATISFIED
 *        bottom   μN + T ≤ 0        ½·Σ D_j·jar_j²                      QUADRATIC
 *        middle   otherwise         ½·D₀/(μ²(1+μ²))·(N − μT)²           CONE
 *
 * Signorini resolution (rigidlab's own, contact_resolution = signorini, elliptic + Newton only): each
 * elliptic contact keeps a latch b ≥ 0, the normal force it is allowed to develop friction against.
 * The normal row becomes a one-sided row (½·D·jar² for jar < 0) and the friction rows a disc of
 * radius b in the scaled space u_j = fric_j·jar_j (R_j·fric_j² is the same for all friction rows of
 * a contact, so with k = D_1/fric_1² the disc is isotropic):
 *        k‖u‖ ≤ b     ½·k·‖u‖²              QUADRATIC (friction rows)
 *        k‖u‖ > b     b‖u‖ − b²/(2k)        CONE      (friction rows; Hessian b·∇²‖u‖)
 * i.e. Coulomb's law |f_t| ≤ μ·f_n with f_n the latch, not a convex cone coupling.  Once per Newton
 * iteration the latch moves to the iterate's normal force f_n = max(0, −D₀·jar₀); when the gap
 * f_n − b changed sign since the last iteration without shrinking, it moves by half the gap only.
 * The cost changes with the latch, so the Hessian is refactored every iteration; the solve has
 * converged when Newton's test holds and every gap is below tolerance (relative to the largest
 * normal force).
 */
#ifndef RL_SOLVER_H
#define RL_SOLVER_H

#include "rl_data.h"

/* Solve for qacc given qacc_smooth, M (qM, qLD), qfrc_smooth and the rows in d->efc_*, starting
   from the cheaper of d->qacc (the warm start: the previous step's qacc) and qacc_smooth (qacc_smooth
   only when RL_DSBL_WARMSTART); writes qacc, efc_force, efc_state, qfrc_constraint, solver[],
   solver_iter, solver_converged.  Dispatches on m->opt.solver: RL_SOLVER_NEWTON, RL_SOLVER_CG;
   RL_SOLVER_PGS is solved by Newton (same optimum; rl_solver_check_options accepts it). */
void rl_constraint_solve(const rl_model *m, rl_data *d);

/* arena reals the solvers may take */
size_t rl_solver_arena(const rl_model *m);

/* 0 if the solver options are consistent; else −1 and a one-line message: signorini resolution
   needs the elliptic cone and the Newton solver; iterations ≥ 1 … (to be called at build). */
int rl_solver_check_options(const rl_model *m, char *err, int errlen);

/* the resolution actually used: RL_RES_CONVEX or RL_RES_SIGNORINI (AUTO → signorini iff elliptic cone
   and Newton solver) */
int rl_solver_resolution(const rl_model *m);

/* MuJoCo's stat.meaninertia: mean of diag(M) at qpos0 (= mean dof_M0) */
real rl_solver_meaninertia(const rl_model *m);

/* The factorization the Newton solver uses for the current rows: RL_FACTOR_DENSE or
   RL_FACTOR_SKYLINE (AUTO: skyline when its envelope is at most half the dense triangle). */
int rl_solver_factor_kind(const rl_model *m, const rl_data *d);

/* cost(a) for any a (uses d's rows, M, qacc_smooth; does not touch efc_force/efc_state).  For signorini
   resolution the latches are those given (latch[i] at each contact's first row), NULL: convex cost. */
real rl_solver_cost(const rl_model *m, rl_data *d, const real *qacc, const real *latch);

/* An observer of the Newton iterations (reference checks): called once per Newton system solved,
   with jar = J·a − aref, the latches (NULL under convex resolution), the gradient and the solution
   x = H⁻¹·grad the solver computed. */
typedef struct rl_solver_observer {
  void (*newton_system)(void *user, const rl_model *m, rl_data *d, const real *jar, const real *latch,
                        const real *grad, const real *x);
  void *user;
} rl_solver_observer;
void rl_constraint_solve_observed(const rl_model *m, rl_data *d, const rl_solver_observer *obs);

/* Dense Hessian H = M + Σ_quadratic D_i·J_iᵀJ_i + Σ_cone J_cᵀ·H_c·J_c at jar (row-major nv×nv), the
   matrix the Newton solver factors; latch as in rl_solver_cost.  Takes its scratch from the arena. */
void rl_solver_hessian_dense(const rl_model *m, rl_data *d, const real *jar, const real *latch, real *H);

/* ------------------------------------------------------------------------------------------------
 * Envelope (skyline) Cholesky, the Newton solver's factorization.  Row i of the lower triangle holds
 * columns first[i]…i (first[i] = 0 for every row: the dense case), stored row after row at adr[i].
 * By the envelope theorem the factor L (A = L·Lᵀ) has no entry outside the envelope of A, and neither
 * does a rank-1 update A ± v·vᵀ whose pairs (i, j), v_i·v_j ≠ 0, lie inside it. */
typedef struct rl_hfactor {
  int n;
  const int *first; /* n: first stored column of each row */
  int *adr;         /* n + 1: row starts; adr[n] = stored entries */
  real *L;          /* adr[n] entries */
} rl_hfactor;

/* adr from first; returns the number of stored entries */
size_t rl_hfactor_layout(rl_hfactor *f, int n, const int *first, int *adr);
/* in-place Cholesky of the lower triangle held in f->L (entries below mindiag are raised to it and
   count as rank loss); returns the rank */
int rl_hfactor_factor(rl_hfactor *f, real mindiag);
/* x ← (L·Lᵀ)⁻¹·x */
void rl_hfactor_solve(const rl_hfactor *f, real *x);
/* L·Lᵀ ← L·Lᵀ + v·vᵀ (plus) or − v·vᵀ (downdate); v is overwritten; returns the rank (< n: accuracy
   lost, refactor) */
int rl_hfactor_update(rl_hfactor *f, real *v, int plus);

#endif
