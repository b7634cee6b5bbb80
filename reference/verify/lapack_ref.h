/* lapack_ref.h — LAPACK references for the soft-constraint solvers (compiled per precision).
 *
 * The problem of d (rows, M, qacc_smooth) is copied into double precision and solved independently
 * of the engine's code:
 *   rl_ref_cost      cost(a) = ½(a − a₀)ᵀM(a − a₀) + s(J·a − aref) and its gradient, in double;
 *   rl_ref_optimum   the minimizer a* to machine precision: Newton (Hessian M + JᵀD_qJ + cone blocks,
 *                    assembled sparse by CHOLMOD, solved with LAPACKE_dposv on it made dense up to 400
 *                    dofs, by CHOLMOD's supernodal Cholesky beyond) with an exact line search (regula
 *                    falsi on the derivative), iterated until the row states and cone zones stop changing
 *                    and the step is at rounding level;
 *   rl_ref_cost_scale  the magnitude of the cost's terms, the scale of relative cost differences;
 *   rl_ref_gap       cost(a) − cost(a*) of any iterate (the objective-gap certificate);
 *   rl_ref_newton_check  re-solves a Newton system of the engine the same way (an rl_solver_observer).
 * Convex resolution only (signorini is a fixed point, not a minimization: see rl_solver.h). */
#ifndef RL_LAPACK_REF_H
#define RL_LAPACK_REF_H

#include "harness.h"
#include <mujoco/mujoco.h>
#include "rl_engine.h"

#define rl_ref_problem      RL_NAME(ref_problem)
#define rl_ref_problem_make RL_NAME(ref_problem_make)
#define rl_ref_problem_free RL_NAME(ref_problem_free)
#define rl_ref_cost         RL_NAME(ref_cost)
#define rl_ref_cost_real    RL_NAME(ref_cost_real)
#define rl_ref_cost_scale   RL_NAME(ref_cost_scale)
#define rl_ref_optimum      RL_NAME(ref_optimum)
#define rl_ref_gap          RL_NAME(ref_gap)
#define rl_ref_newton_check RL_NAME(ref_newton_check)
#define rl_ref_observer     RL_NAME(ref_observer)
#define rl_ref_copy_mujoco  RL_NAME(ref_copy_mujoco)
#define rl_ref_spd_solve    RL_NAME(ref_spd_solve)

typedef struct rl_ref_problem {
  int nv, nefc, ne, nf;
  struct rl_ref_sparse *sp; /* M (nv × nv) and J (nefc × nv) as CHOLMOD sparse matrices (lapack_ref.c) */
  double *a0;               /* qacc_smooth */
  double *D, *R, *aref, *floss;
  int *type;
  int *dim;     /* elliptic rows: the contact's dim at its first row */
  int *blk;     /* each row's block of the row Hessian: its first row (an elliptic contact's dim rows) */
  double *mu;   /* elliptic first rows */
  double *fric; /* 5 per row (elliptic first rows) */
  int dense_max_nv; /* Newton systems up to this many dofs by LAPACKE_dposv on H made dense, beyond by CHOLMOD
                       (rl_ref_problem_make sets 400; a test may move it to compare the two) */
} rl_ref_problem;

/* copy d's problem (after the rows and M are in place); 0 on success */
int rl_ref_problem_make(rl_ref_problem *p, const rl_model *m, const rl_data *d);
void rl_ref_problem_free(rl_ref_problem *p);

/* cost at a (double); grad (nv) may be NULL; state (nefc) may be NULL */
double rl_ref_cost(const rl_ref_problem *p, const double *a, double *grad, int *state);
/* the same at a working-precision vector */
double rl_ref_cost_real(const rl_ref_problem *p, const real *a);
/* ½aᵀMa + ½a₀ᵀMa₀ + s(J·a − aref): the scale of the terms the cost is formed from (≥ ½|cost(a)|), the
   denominator of relative cost differences (the cost itself can nearly vanish while its terms are large) */
double rl_ref_cost_scale(const rl_ref_problem *p, const double *a);

/* minimizer to machine precision, from a₀; returns 0 when the active set settled (else iterations ran out);
   cost (may be NULL) receives cost(a*), iters (may be NULL) the Newton iterations */
int rl_ref_optimum(const rl_ref_problem *p, double *astar, double *cost, int *iters);

/* cost(a) − cost* for a working-precision iterate */
double rl_ref_gap(const rl_ref_problem *p, const real *a, double cost_star);

/* Newton-system check state: the worst ‖x − x_dposv‖∞ / ‖x_dposv‖∞ over the systems seen */
typedef struct rl_ref_newton_check {
  const rl_ref_problem *p;
  double max_rel;
  double max_rel_cond; /* max over systems of rel / (κ₁(H)·ε_real): forward error against conditioning */
  int nsystems;
  int failed; /* dposv refused (H not positive definite) */
} rl_ref_newton_check;

/* an engine observer that re-solves each Newton system H·x = g with LAPACKE_dposv; H is built by the
   reference from jar (convex), or by rl_solver_hessian_dense when latches are given (signorini) */
rl_solver_observer rl_ref_observer(rl_ref_newton_check *chk);

/* x = A⁻¹b in double for a symmetric positive definite A (n × n, row-major, in working precision) by LAPACK's
   banded Cholesky (LAPACKE_dpbsv with kd = A's bandwidth: a dof tree's M has the profile of its dofs' ancestors,
   so a model of many small trees solves in O(n·kd²), not O(n³)), and κ₁(A) = ‖A‖₁‖A⁻¹‖₁ (‖A‖₁ by
   LAPACKE_dlangb, ‖A⁻¹‖₁ estimated by LAPACKE_dpbcon from that factor).  Returns κ₁, or INFINITY when A is not
   positive definite or out of memory (x is then left unset).  A is not modified. */
double rl_ref_spd_solve(const real *A, const double *b, int n, double *x);

/* MuJoCo's extracted problem (mj_forward done) → rigidlab's data: qM (same tree layout, then
   rl_factor_m), qacc_smooth, qfrc_smooth, contacts (dim, mu, friction, efc_address), rows (type, id, D,
   R, aref, frictionloss, J dense or sparse → CSR).  −1 if it exceeds m's capacities. */
int rl_ref_copy_mujoco(const mjModel *mjm, const mjData *mjd, const rl_model *m, rl_data *d);

#endif
