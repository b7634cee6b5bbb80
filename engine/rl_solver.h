/* rl_solver.h — the soft-constraint solvers: Newton and CG with exact line search on
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
   solver_iter, solver_converged.  Dispatches on m->opt.solver: RL_SOLVER_NEWTON, RL_SOLVER_CG (primal,
   solver.c), RL_SOLVER_PGS (dual projected Gauss–Seidel, solver_pgs.c). */
void rl_constraint_solve(const rl_model *m, rl_data *d);

/* MuJoCo 2.2.2's PGS (mj_solPGS with its warm start) on the rows in d: efc_force, efc_state, qacc,
   qfrc_constraint, solver[] (improvement, nactive, nchange), solver_iter, solver_converged (the
   improvement fell below tolerance).  −1 when the arena lacks rl_pgs_arena reals: qacc = qacc_smooth,
   RL_WARN_BADQACC counted. */
int rl_solve_pgs(const rl_model *m, rl_data *d);
/* MuJoCo 2.2.2's noslip post-solve (mj_solNoSlip), run after the main solver when noslip_iterations > 0:
   projected Gauss–Seidel over the friction rows only (friction loss, pyramid edge pairs with their sum
   fixed, the elliptic friction block with its normal fixed) on A = AR − diag(R), i.e. without the
   regularizer that lets soft friction slip; noslip_tolerance and noslip_iterations stop it.  Appends its
   sweeps to solver[] and solver_iter; rewrites efc_force, efc_state, qfrc_constraint, qacc.  −1 when the
   arena lacks rl_pgs_arena reals (d unchanged but RL_WARN_BADQACC counted). */
int rl_solve_noslip(const rl_model *m, rl_data *d);
/* arena reals rl_solve_pgs (and rl_solve_noslip) takes: the dense nefc×nefc dual matrix and an nefc×nv workspace */
size_t rl_pgs_arena(const rl_model *m);
/* forces and states of the convex problem at jar = J·qacc − aref (MuJoCo's mj_constraintUpdate);
   returns the rows' cost */
real rl_solver_primal_forces(const rl_model *m, const rl_data *d, const real *jar, real *force, int *state);

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

/* The factorization the Newton solver uses for the current rows: RL_FACTOR_DENSE, RL_FACTOR_SKYLINE,
   RL_FACTOR_ABA, RL_FACTOR_SPARSE or RL_FACTOR_TREE.  AUTO: TREE when every row's columns lie on one dof
   chain (then H has M's pattern, see rl_tfactor) and its Cholesky costs less than the O(nv) recursion; else
   ABA when every row is tree-expressible (rl_aba_init) and the envelope Cholesky would cost more than the
   recursion (see solver.c, aba_pays); else TREE when the rows lie on chains; else the cheaper
   envelope (skyline when its envelope is at most half the dense triangle, else dense), unless H is
   large and its sparse Cholesky's work (CHOLMOD's flop count after a fill-reducing ordering) is well
   below that envelope's (see solver.c, sparse_pays): then sparse.  ABA or sparse forced but refused (a
   body–body contact, a weld, a ball limit, … for ABA; CHOLMOD out of memory for sparse; a row off one
   chain for tree): the AUTO choice between skyline and dense. */
int rl_solver_factor_kind(const rl_model *m, const rl_data *d);

/* cost(a) for any a (uses d's rows, M, qacc_smooth; does not touch efc_force/efc_state).  For signorini
   resolution the latches are those given (latch[i] at each contact's first row), NULL: convex cost. */
real rl_solver_cost(const rl_model *m, rl_data *d, const real *qacc, const real *latch);

/* An observer of the Newton iterations (reference checks): called once per Newton system solved,
   with jar = J·a − aref, the latches (NULL under convex resolution), the gradient and the solution
   x = H⁻¹·grad the solver computed. */
typedef struct rl_solver_observer {
  void (*newton_system)(void *user, const rl_model *m, rl_data *d, const real *jar, const real *latch, const real *grad,
                        const real *x);
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
  const int *first;  /* n: first stored column of each row */
  int *adr;          /* n + 1: row starts; adr[n] = stored entries (the caller gives 2n + 1: colend follows) */
  const int *colend; /* n: the last row whose envelope holds column k (bounds the rank-1 update) */
  const int *cadr;   /* NULL, or n + 1: column k's rows below the diagonal are crow[cadr[k] … cadr[k+1]) */
  const int *crow;   /* the rows j > k with first[j] ≤ k, ascending, column by column (adr[n] − n entries) */
  real *L;           /* adr[n] entries */
} rl_hfactor;

/* adr from first; returns the number of stored entries (no column lists: f->cadr = NULL) */
size_t rl_hfactor_layout(rl_hfactor *f, int n, const int *first, int *adr);
/* the envelope's column lists (cadr n + 1 ints, crow adr[n] − n ints) into f, so that a rank-1 update visits
   only the stored entries of each column instead of every row up to colend */
void rl_hfactor_columns(rl_hfactor *f, int *cadr, int *crow);
/* in-place Cholesky of the lower triangle held in f->L (entries below mindiag are raised to it and
   count as rank loss); returns the rank */
int rl_hfactor_factor(rl_hfactor *f, real mindiag);
/* x ← (L·Lᵀ)⁻¹·x */
void rl_hfactor_solve(const rl_hfactor *f, real *x);
/* L·Lᵀ ← L·Lᵀ + v·vᵀ (plus) or − v·vᵀ (downdate); v is overwritten; returns the rank (< n: accuracy
   lost, refactor) */
int rl_hfactor_update(rl_hfactor *f, real *v, int plus);

/* ------------------------------------------------------------------------------------------------
 * Tree Cholesky (solver_factor.c), the Newton factorization for rows that lie on chains of a tree of the dofs.
 * When every row's columns lie on one chain of the dof tree (a dof and some of its ancestors: contacts and
 * connects against the world, joint limits, dof friction), D·JᵀJ adds only ancestor pairs and H = M + JᵀDJ has
 * M's pattern; a row that couples two chains is put on one by hanging the subtree of one below the other's
 * deepest dof (solver.c, vtree).  H = Lᵀ·L with L(k,i) ≠ 0 only for i = k or an ancestor of k, row k at adr[k]
 * (k, then its ancestors up to the root; for the dof tree qM's layout): the dense Cholesky of H with every dof
 * eliminated before its ancestors, which fills nothing, at the cost of Σ_k row_k². */
typedef struct rl_tfactor {
  int n;
  const int *parent; /* n: the tree (dof_parentid, or the tree with re-hung subtrees) */
  const int *adr;    /* n + 1: row starts, adr[n] = stored entries */
  const int *col;    /* adr[n]: each entry's column (row k: k, then its ancestors parent first) */
  const int *order;  /* n: the elimination order, every dof after all its descendants */
  real *L;           /* adr[n] entries */
  real *inv;         /* n: 1/L(k,k) */
} rl_tfactor;

/* in-place Cholesky of H held in f->L in qM's layout (pivots below mindiag are raised to it and count as
   rank loss), f->inv set; returns the rank */
int rl_tfactor_factor(rl_tfactor *f, real mindiag);
/* x ← (Lᵀ·L)⁻¹·x */
void rl_tfactor_solve(const rl_tfactor *f, real *x);
/* Lᵀ·L ← Lᵀ·L ± v·vᵀ for v nonzero only on dof `last` and its ancestors; v is zero on return; returns the
   rank (< n: accuracy lost, refactor) */
int rl_tfactor_update(rl_tfactor *f, real *v, int last, int plus);

/* ------------------------------------------------------------------------------------------------
 * Sparse Cholesky (solver_sparse.c): H = L·Lᵀ by SuiteSparse CHOLMOD (supernodal or simplicial, its choice) after a
 * fill-reducing ordering (AMD, METIS when AMD fills much).  The state (pattern, symbolic analysis, factor)
 * lives in d->sparse between solves, so a solve whose pattern equals the last one's skips the analysis.
 * CHOLMOD computes in double; the f32 engine converts its float rows and rounds the solution. */
typedef struct rl_sparse rl_sparse;
typedef struct rl_sparse_info {
  long analyses, factorizations; /* since d was allocated */
  long updowns;                  /* rank-1 updates and downdates of the factor (cholmod_updown), since then */
  long nnz_H, nnz_L;             /* the upper triangle of H's pattern; the factor's entries */
  double peak_bytes;             /* the most memory CHOLMOD held at once */
} rl_sparse_info;
/* Row blocks and pattern of H for d's rows (M's tree entries ∪ every row block's column pairs, whatever
   the rows' states), and the symbolic analysis when the pattern changed; flops (may be NULL): the
   factorization's flop count.  0, or −1 out of memory (d->sparse then unusable until the next call). */
int rl_sparse_analyse(const rl_model *m, rl_data *d, double *flops);
/* H ← upper triangle of M (after rl_sparse_analyse) */
void rl_sparse_begin(const rl_model *m, rl_data *d);
/* H += scale·J_rᵀJ_r; 0 or −1 out of memory */
int rl_sparse_add_row(rl_data *d, int r, real scale);
/* H += Σ_{a,b<n} Hc(a,b)·J_{r0+a}ᵀJ_{r0+b} for n rows of one row block (Hc row-major n×n, n ≤ 6) */
int rl_sparse_add_block(rl_data *d, int r0, int n, const real *Hc);
/* numeric factorization H = L·Lᵀ; 0, or −1 (not positive definite, out of memory) */
int rl_sparse_factor(rl_data *d);
/* x ← H⁻¹·x with the last factorization; 0 or −1 out of memory */
int rl_sparse_solve(rl_data *d, real *x);
/* the factor of H + Σ_add D_r·J_rᵀJ_r − Σ_del D_r·J_rᵀJ_r from the last one by CHOLMOD's rank-1 updates and
   downdates (cholmod_updown, on a simplicial LDLᵀ copy of the factor; the next rl_sparse_factor starts again
   from the supernodal one); 0, or −1 (refused, out of memory or not positive definite: refactor) */
int rl_sparse_updown(rl_data *d, const int *add, int nadd, const int *del, int ndel);
/* counters and sizes of d's sparse factorization (zeros when none was made) */
void rl_sparse_stats(const rl_data *d, rl_sparse_info *info);
/* release d->sparse (rl_data_free does) */
void rl_sparse_free(rl_data *d);

/* ------------------------------------------------------------------------------------------------
 * O(nv) solves with the Newton Hessian for tree-structured rows (solver_aba.c).
 *
 * H = M + Σ_rows D_r·J_rᵀJ_r (+ cone blocks J_cᵀ·H_c·J_c).  A row whose Jacobian has one column k
 * adds D·J² to H_kk, like armature; a row whose Jacobian is a_rᵀ·(the com-frame Jacobian of one
 * moving body b, i.e. J_r,k = a_rᵀ·cdof_k on every dof ancestor k of b, 0 elsewhere) adds
 * D·a_r·a_rᵀ to b's spatial inertia.  H is then the joint-space inertia of the same tree with those
 * inertias and armatures, and H·x = r is solved by the articulated-body recursion at zero velocity.
 * Every dof is its own 1-dof link (dof_parentid is the tree); a body's inertia sits at its last dof.
 * Rows coupling two moving bodies (body–body contacts, connect between two bodies), welds and ball
 * limits are not expressible: rl_aba_init counts them and the solver uses a Cholesky instead. */
typedef struct rl_aba {
  int nv, nefc, nbad; /* rl_aba_init's answer (0: ABA usable) */
  int *rowdof;        /* nefc: the dof carrying row r (armature dof, or the last dof of its body) */
  int *rowbody;       /* nefc: 1 if row r is a body row (rowa valid), 0 if a one-dof row, −1 if neither */
  real *rowa;         /* 6·nefc: body rows' a_r ([ω; v], com frame) */
  real *IA;           /* 36·nv: articulated inertias (row-major 6×6) */
  real *U;            /* 6·nv: IA_k·cdof_k */
  real *Dinv;         /* nv: 1 / (cdof_kᵀ·U_k + armature_k) */
  real *arm;          /* nv: armature + Σ one-dof rows */
  real *acc;          /* 6·nv: solve scratch */
} rl_aba;

/* arena reals rl_aba_init takes */
size_t rl_aba_arena(const rl_model *m);
/* Take the workspace from d's arena and classify d's rows; returns a->nbad: 0 when ABA is usable, the
   number of rows not expressible, −1 arena too small, −2 qM's diagonal disagrees with cdof/crb (an M
   copied in without rl_com_pos/rl_crb at the same state: the recursion would solve another system). */
int rl_aba_init(rl_aba *a, const rl_model *m, rl_data *d);
/* Articulated inertias of H at the given row states (rows QUADRATIC, and CONE blocks with their
   Hessians at coneH + 6·(first row) when coneH != NULL; signorini: blocks are the friction rows).
   O(nv + nbody + active rows).  Requires a->nbad == 0. */
void rl_aba_prepare(rl_aba *a, const rl_model *m, const rl_data *d, const int *state, const real *coneH, int signorini);
/* x ← H⁻¹·x, O(nv) */
void rl_aba_solve(rl_aba *a, const rl_model *m, const rl_data *d, real *x);

/* ------------------------------------------------------------------------------------------------
 * The recursive (M-free) path (rl_forward, forward.c): when a deep tree makes forming and factoring M
 * cost more than O(nv) recursions, the step never forms qM/qLD/crb; every product with M or M⁻¹ is a
 * recursion on cinert/cdof (rl_com_pos's output). */

/* rl_aba_init without the qM consistency check (the recursive path has no qM) */
int rl_aba_init_recursive(rl_aba *a, const rl_model *m, rl_data *d);
/* the tree part of the workspace only (no rows): for rl_aba_prepare_m; 0, or −1 arena too small */
int rl_aba_init_m(rl_aba *a, const rl_model *m, rl_data *d);
/* articulated inertias of M + h·diag(b) (b NULL: M), O(nv + nbody) */
void rl_aba_prepare_m(rl_aba *a, const rl_model *m, const rl_data *d, real h, const real *b);
/* r = M·v by the composite-body recursion (zero velocity and gravity), O(nv + nbody); −1 arena too small */
int rl_mul_m_recursive(const rl_model *m, rl_data *d, real *r, const real *v);
/* rl_constraint_solve on the recursive path: Newton's H by ABA (every row tree-expressible, whatever
   m->opt.newton_factor says), CG's M⁻¹ by ABA, every M·v by rl_mul_m_recursive.  Returns 0 when solved;
   −1 when refused (Newton with a row ABA cannot carry, or the arena too small), d's outputs untouched. */
int rl_constraint_solve_recursive(const rl_model *m, rl_data *d);
/* 1 when the tree is deep enough that the recursive path pays: the sparse LᵀDL's work Σ_k depth_k²
   (depth_k = dof k's row length in qM) exceeds RL_REC_WORK·nv (see solver.c) */
int rl_recursive_pays(const rl_model *m);

#endif
