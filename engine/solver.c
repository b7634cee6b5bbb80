/* solver.c — Newton and CG on MuJoCo 2.2.2's primal soft-constraint cost (see rl_solver.h).
 *
 * Stage order of one solve (rl_constraint_solve):
 *   warm start   a ← argmin{cost(qacc_warmstart), cost(qacc_smooth)}
 *   update       jar = J·a − aref → states, forces, cost, cone Hessians
 *   Hessian      H = M + JᵀD_qJ (+ cone blocks), Cholesky; rank-1 up/downdates
 *   direction    Newton: −H⁻¹g;  CG: −M⁻¹g + β·previous (Polak–Ribière, β ≥ 0)
 *   line search  exact, Newton's method on the 1-D piecewise quadratic
 *   stop         improvement or gradient < tolerance·meaninertia·max(1, nv)
 * The arithmetic follows MuJoCo's mj_solNewton / mj_solCG (engine_solver.c) and mj_constraintUpdate
 * (engine_core_constraint.c) step for step, so that an extracted MuJoCo problem solved here stops at
 * the same iterate. */
#include <string.h>
#include "rl_engine.h"

#define MINVAL ((real)1e-15) /* MuJoCo's mjMINVAL */

/* ------------------------------------------------------------------ options */

int rl_solver_resolution(const rl_model *m) {
  if (m->opt.contact_resolution == RL_RES_SIGNORINI) return RL_RES_SIGNORINI;
  if (m->opt.contact_resolution == RL_RES_CONVEX) return RL_RES_CONVEX;
  return (m->opt.cone == RL_CONE_ELLIPTIC && m->opt.solver == RL_SOLVER_NEWTON) ? RL_RES_SIGNORINI : RL_RES_CONVEX;
}

static int check_fail(char *err, int errlen, const char *msg) {
  if (err && errlen > 0) {
    strncpy(err, msg, (size_t)errlen - 1);
    err[errlen - 1] = 0;
  }
  return -1;
}

int rl_solver_check_options(const rl_model *m, char *err, int errlen) {
  const rl_option *o = &m->opt;
  if (o->solver != RL_SOLVER_NEWTON && o->solver != RL_SOLVER_CG && o->solver != RL_SOLVER_PGS)
    return check_fail(err, errlen, "solver must be newton, cg or pgs");
  if (o->contact_resolution == RL_RES_SIGNORINI && o->cone != RL_CONE_ELLIPTIC)
    return check_fail(err, errlen, "contact_resolution=signorini needs cone=elliptic");
  if (o->contact_resolution == RL_RES_SIGNORINI && o->solver != RL_SOLVER_NEWTON)
    return check_fail(err, errlen, "contact_resolution=signorini needs solver=newton");
  if (o->contact_resolution < RL_RES_AUTO || o->contact_resolution > RL_RES_SIGNORINI)
    return check_fail(err, errlen, "contact_resolution must be auto, convex or signorini");
  if (o->newton_factor < RL_FACTOR_AUTO || o->newton_factor > RL_FACTOR_TREE)
    return check_fail(err, errlen, "newton_factor must be auto, dense, skyline, aba, sparse or tree");
  if (o->iterations < 0 || o->ls_iterations < 1)
    return check_fail(err, errlen, "iterations must be >= 0 and ls_iterations >= 1");
  if (!(o->tolerance >= 0) || !(o->ls_tolerance > 0))
    return check_fail(err, errlen, "tolerance must be >= 0 and ls_tolerance > 0");
  return 0;
}

/* meaninertia = Σ_i M0_ii / nv (MuJoCo's mj_setConst at qpos0) */
real rl_solver_meaninertia(const rl_model *m) {
  if (m->nv == 0) return 1;
  real s = 0;
  for (int i = 0; i < m->nv; i++) s += m->dof_M0[i];
  return s / m->nv;
}

/* the recursive path's extra: CG's M⁻¹ workspace and rl_mul_m_recursive's scratch (12·nbody) */
static size_t rec_arena(const rl_model *m) { return rl_aba_arena(m) + 12 * (size_t)m->nbody + 64; }

/* the most sliding contacts one coupled signorini step takes */
#define RL_COUPLED_MAX 128
/* a coupled step may open or close at most 1/RL_COUPLED_FLIPS of the elliptic contacts */
#define RL_COUPLED_FLIPS 16

/* rows: nv and nefc vectors, two envelope or tree factors (at most dense triangles), their index arrays and
   tree, the ABA workspace */
size_t rl_solver_arena(const rl_model *m) {
  size_t nv = (size_t)m->nv, ne = (size_t)m->nefcmax;
  size_t pgs = m->opt.solver == RL_SOLVER_PGS || m->opt.noslip_iterations > 0 ? rl_pgs_arena(m) : 0;
  size_t coupled = rl_solver_resolution(m) == RL_RES_SIGNORINI
                       ? RL_COUPLED_MAX * (nv + RL_COUPLED_MAX + 2) + 5 * ne + 2 * nv + 64
                       : 0;
  size_t treecol = (nv * (nv + 1) / 2 * sizeof(int) + sizeof(real) - 1) / sizeof(real); /* a re-hung tree's columns */
  return nv * (nv + 1) + treecol + 42 * nv + 25 * ne + 1024 + rl_aba_arena(m) + rec_arena(m) + pgs + coupled;
}

/* ------------------------------------------------------------- row products */

/* A row group: consecutive rows with one column list (a contact's rows, an equality's: add_rows writes them so),
   at most GROUP_ROWS of them.  The products take a group's rows together, so that each column index, vector entry
   and factor address is read once for the group; every sum is still formed term by term in the order of the
   one-row loops (a row's dot product along its columns, an entry of Jᵀf or of H over the rows in row order), so
   the results are the same to the bit.  gnext[r] = the first row after r's group (gnext = NULL: one row each). */
#define GROUP_ROWS 4

/* 1 when rows a and b have the same columns */
static int same_columns(const rl_data *d, int a, int b) {
  int n = d->efc_J_rownnz[a];
  if (d->efc_J_rownnz[b] != n) return 0;
  const int *ca = d->efc_J_colind + d->efc_J_rowadr[a], *cb = d->efc_J_colind + d->efc_J_rowadr[b];
  for (int k = 0; k < n; k++)
    if (ca[k] != cb[k]) return 0;
  return 1;
}

/* gnext for d's rows: a group runs on while a row has its predecessor's columns, up to GROUP_ROWS rows */
static void row_groups(const rl_data *d, int *gnext) {
  for (int r0 = 0, r = 0; r0 < d->nefc; r0 = r) {
    for (r = r0 + 1; r < d->nefc && r - r0 < GROUP_ROWS && same_columns(d, r - 1, r); r++) {}
    for (int k = r0; k < r; k++) gnext[k] = r;
  }
}

/* the first row after r's group */
static int group_end(const int *gnext, int r) { return gnext ? gnext[r] : r + 1; }

/* res_k = J_{rows_k}·v (k < n) for rows of one column list col[0 … nnz): Σ_q J_k,q·v_{col_q}, q ascending */
static inline void rows_mul(const rl_data *d, const int *rows, int n, const int *col, int nnz, real *res,
                            const real *v) {
  const real *J[GROUP_ROWS];
  real s[GROUP_ROWS];
  for (int k = 0; k < n; k++) {
    J[k] = d->efc_J + d->efc_J_rowadr[rows[k]];
    s[k] = 0;
  }
  for (int q = 0; q < nnz; q++) {
    real x = v[col[q]];
    for (int k = 0; k < n; k++) s[k] += J[k][q] * x;
  }
  for (int k = 0; k < n; k++) res[rows[k]] = s[k];
}

/* res += Σ_k J_{rows_k}ᵀ·f_{rows_k} (k < n, one column list): each entry's terms added in row order */
static inline void rows_tmul(const rl_data *d, const int *rows, int n, const int *col, int nnz, real *res,
                             const real *f) {
  const real *J[GROUP_ROWS];
  real fk[GROUP_ROWS];
  for (int k = 0; k < n; k++) {
    J[k] = d->efc_J + d->efc_J_rowadr[rows[k]];
    fk[k] = f[rows[k]];
  }
  for (int q = 0; q < nnz; q++) {
    real a = res[col[q]];
    for (int k = 0; k < n; k++) a += J[k][q] * fk[k];
    res[col[q]] = a;
  }
}

/* rows_mul (tmul = 0) or rows_tmul (1) with the row count n as a constant, so that each count gets its own loop
   with the sums in registers */
static void rows_apply(const rl_data *d, const int *rows, int n, real *res, const real *v, int tmul) {
  int nnz = d->efc_J_rownnz[rows[0]];
  const int *col = d->efc_J_colind + d->efc_J_rowadr[rows[0]];
  switch (n) {
  case 4: tmul ? rows_tmul(d, rows, 4, col, nnz, res, v) : rows_mul(d, rows, 4, col, nnz, res, v); break;
  case 3: tmul ? rows_tmul(d, rows, 3, col, nnz, res, v) : rows_mul(d, rows, 3, col, nnz, res, v); break;
  case 2: tmul ? rows_tmul(d, rows, 2, col, nnz, res, v) : rows_mul(d, rows, 2, col, nnz, res, v); break;
  default: tmul ? rows_tmul(d, rows, 1, col, nnz, res, v) : rows_mul(d, rows, 1, col, nnz, res, v); break;
  }
}

/* res = J·v (CSR) */
static void jac_mul(const rl_data *d, const int *gnext, real *res, const real *v) {
  int rows[GROUP_ROWS];
  for (int r = 0, e; r < d->nefc; r = e) {
    e = group_end(gnext, r);
    if (e == r + 1) { /* a row alone */
      const real *J = d->efc_J + d->efc_J_rowadr[r];
      const int *col = d->efc_J_colind + d->efc_J_rowadr[r];
      real s = 0;
      for (int k = 0, nnz = d->efc_J_rownnz[r]; k < nnz; k++) s += J[k] * v[col[k]];
      res[r] = s;
      continue;
    }
    for (int k = r; k < e; k++) rows[k - r] = k;
    rows_apply(d, rows, e - r, res, v, 0);
  }
}

/* res = Jᵀ·f (rows with f = 0 skipped) */
static void jac_tmul(const rl_model *m, const rl_data *d, const int *gnext, real *res, const real *f) {
  int rows[GROUP_ROWS];
  memset(res, 0, sizeof(real) * (size_t)m->nv);
  for (int r = 0, e; r < d->nefc; r = e) {
    e = group_end(gnext, r);
    if (e == r + 1) { /* a row alone */
      if (f[r] == 0) continue;
      const real *J = d->efc_J + d->efc_J_rowadr[r];
      const int *col = d->efc_J_colind + d->efc_J_rowadr[r];
      for (int k = 0, nnz = d->efc_J_rownnz[r]; k < nnz; k++) res[col[k]] += J[k] * f[r];
      continue;
    }
    int n = 0;
    for (int k = r; k < e; k++)
      if (f[k] != 0) rows[n++] = k;
    if (n) rows_apply(d, rows, n, res, f, 1);
  }
}

static real dot(const real *a, const real *b, int n) {
  real s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

/* ---------------------------------------------------------- constraint update */

/* signorini: contact rows i (normal), i+1… (friction); k = D₁/fric₁² makes the friction disc isotropic */
static real disc_k(const rl_data *d, const rl_contact *con, int i) {
  return d->efc_D[i + 1] / (con->friction[0] * con->friction[0]);
}

/* One-sided row i: cost ½·D·jar² (force −D·jar, already set) while jar < 0, else satisfied, force 0;
   returns the cost */
static real one_sided(int i, const real *jar, const real *D, real *force, int *state) {
  if (jar[i] >= 0) {
    force[i] = 0;
    state[i] = RL_CNSTRSTATE_SATISFIED;
    return 0;
  }
  state[i] = RL_CNSTRSTATE_QUADRATIC;
  return (real)0.5 * D[i] * jar[i] * jar[i];
}

static real constraint_update(const rl_model *m, const rl_data *d, const real *jar, const real *latch, real *force,
                              int *state, real *coneH, int hess);

/* the convex problem's forces and states at jar (mj_constraintUpdate); returns the row cost */
real rl_solver_primal_forces(const rl_model *m, const rl_data *d, const real *jar, real *force, int *state) {
  return constraint_update(m, d, jar, NULL, force, state, NULL, 0);
}

/* Forces, states and cost s(jar) of every row (mj_constraintUpdate); with hess, the dim×dim Hessian of
   each row block in the CONE state is written at coneH + 6·(its first row).  latch != NULL: signorini. */
static real constraint_update(const rl_model *m, const rl_data *d, const real *jar, const real *latch, real *force,
                              int *state, real *coneH, int hess) {
  (void)m;
  int ne = d->ne, nf = d->nf, nefc = d->nefc;
  const real *D = d->efc_D, *R = d->efc_R, *fl = d->efc_frictionloss;
  real s = 0;
  for (int i = 0; i < nefc; i++) force[i] = -D[i] * jar[i];
  /* equality: ½·D·jar² */
  for (int i = 0; i < ne; i++) {
    s += (real)0.5 * D[i] * jar[i] * jar[i];
    state[i] = RL_CNSTRSTATE_QUADRATIC;
  }
  /* friction loss: Huber, bound R·f */
  for (int i = ne; i < ne + nf; i++) {
    if (jar[i] <= -R[i] * fl[i]) {
      s += (real)-0.5 * R[i] * fl[i] * fl[i] - fl[i] * jar[i];
      force[i] = fl[i];
      state[i] = RL_CNSTRSTATE_LINEARNEG;
    } else if (jar[i] >= R[i] * fl[i]) {
      s += (real)-0.5 * R[i] * fl[i] * fl[i] + fl[i] * jar[i];
      force[i] = -fl[i];
      state[i] = RL_CNSTRSTATE_LINEARPOS;
    } else {
      s += (real)0.5 * D[i] * jar[i] * jar[i];
      state[i] = RL_CNSTRSTATE_QUADRATIC;
    }
  }
  for (int i = ne + nf; i < nefc; i++) {
    if (d->efc_type[i] != RL_CNSTR_CONTACT_ELLIPTIC) {
      s += one_sided(i, jar, D, force, state);
      continue;
    }
    const rl_contact *con = d->contact + d->efc_id[i];
    int dim = con->dim;
    const real *fr = con->friction;
    real mu = con->mu;
    if (latch) {
      /* signorini: one-sided normal row, friction disc of radius latch */
      s += one_sided(i, jar, D, force, state);
      real u[6], T = 0, k = disc_k(d, con, i), b = latch[i];
      for (int j = 1; j < dim; j++) {
        u[j] = jar[i + j] * fr[j - 1];
        T += u[j] * u[j];
      }
      T = rl_sqrt(T);
      if (k * T <= b) {
        for (int j = 1; j < dim; j++) {
          s += (real)0.5 * D[i + j] * jar[i + j] * jar[i + j];
          state[i + j] = RL_CNSTRSTATE_QUADRATIC;
        }
      } else {
        /* b‖u‖ − b²/(2k); f_j = −fric_j·b·u_j/‖u‖; Hessian fric_j·fric_l·b·(δ_jl/T − u_j·u_l/T³) */
        s += b * T - b * b / (2 * k);
        for (int j = 1; j < dim; j++) {
          force[i + j] = -fr[j - 1] * b * u[j] / T;
          state[i + j] = RL_CNSTRSTATE_CONE;
        }
        if (hess) {
          int n = dim - 1;
          real *H = coneH + 6 * (i + 1);
          for (int a = 0; a < n; a++)
            for (int c = 0; c < n; c++)
              H[a * n + c] = fr[a] * fr[c] * b * ((a == c ? 1 / T : 0) - u[a + 1] * u[c + 1] / (T * T * T));
        }
      }
      i += dim - 1;
      continue;
    }
    /* elliptic cone: U = (μ·jar₀, fric_j·jar_j), N = U₀, T = ‖U_t‖ */
    real U[6], T = 0;
    U[0] = jar[i] * mu;
    for (int j = 1; j < dim; j++) {
      U[j] = jar[i + j] * fr[j - 1];
      T += U[j] * U[j];
    }
    T = rl_sqrt(T);
    real N = U[0];
    int st;
    if (N >= mu * T || (T <= 0 && N >= 0)) {
      for (int j = 0; j < dim; j++) force[i + j] = 0;
      st = RL_CNSTRSTATE_SATISFIED;
    } else if (mu * N + T <= 0 || (T <= 0 && N < 0)) {
      for (int j = 0; j < dim; j++) s += (real)0.5 * D[i + j] * jar[i + j] * jar[i + j];
      st = RL_CNSTRSTATE_QUADRATIC;
    } else {
      /* ½·Dm·(N − μT)², Dm = D₀/(μ²(1+μ²)); f = −∂s/∂jar */
      real Dm = D[i] / (mu * mu * (1 + mu * mu)), NmT = N - mu * T;
      s += (real)0.5 * Dm * NmT * NmT;
      force[i] = -Dm * NmT * mu;
      for (int j = 1; j < dim; j++) force[i + j] = -force[i] / T * U[j] * fr[j - 1];
      st = RL_CNSTRSTATE_CONE;
      if (hess) {
        /* in U space: Dm·[(1, −μU/T)ᵀ(1, −μU/T) + (μ² − μN/T)·I_t + μN/T³·U_tU_tᵀ], then scaled by
           diag(μ, fric) on both sides */
        real *H = coneH + 6 * i;
        H[0] = 1;
        for (int j = 1; j < dim; j++) H[j] = -mu / T * U[j];
        for (int a = 1; a < dim; a++)
          for (int c = a; c < dim; c++) H[a * dim + c] = mu * N / (T * T * T) * U[c] * U[a];
        for (int j = 1; j < dim; j++) H[j * (dim + 1)] += mu * mu - mu * N / T;
        for (int a = 0; a < dim; a++) {
          real sa = Dm * (a == 0 ? mu : fr[a - 1]);
          for (int c = a; c < dim; c++) H[a * dim + c] *= sa * (c == 0 ? mu : fr[c - 1]);
        }
        for (int a = 0; a < dim; a++)
          for (int c = a + 1; c < dim; c++) H[c * dim + a] = H[a * dim + c];
      }
    }
    for (int j = 0; j < dim; j++) state[i + j] = st;
    i += dim - 1;
  }
  return s;
}

/* the row block a CONE-state row starts: (first row, size) — convex elliptic: the whole contact;
   signorini: the friction rows */
static int cone_block(const rl_data *d, int r, int signorini, int *n) {
  const rl_contact *con = d->contact + d->efc_id[r];
  *n = signorini ? con->dim - 1 : con->dim;
  return r;
}

/* signorini latch start: b = f_n = max(0, −D₀·jar₀) of every elliptic contact */
static void latch_init(const rl_data *d, const real *jar, real *latch, real *gapprev) {
  for (int i = d->ne + d->nf; i < d->nefc; i++) {
    latch[i] = gapprev[i] = 0;
    if (d->efc_type[i] != RL_CNSTR_CONTACT_ELLIPTIC) continue;
    latch[i] = jar[i] < 0 ? -d->efc_D[i] * jar[i] : 0;
    i += d->contact[d->efc_id[i]].dim - 1;
  }
}

/* Latch step: g = f_n − b;  b += g/2 when g changed sign since the last step without shrinking,
   else b = f_n (*exact = 0 when any was halved).  Returns max|g| / max(f_n) (0 without contacts). */
static real latch_step(const rl_data *d, const real *jar, real *latch, real *gapprev, int *exact) {
  real gmax = 0, fmax = 0;
  *exact = 1;
  for (int i = d->ne + d->nf; i < d->nefc; i++) {
    if (d->efc_type[i] != RL_CNSTR_CONTACT_ELLIPTIC) continue;
    real fn = jar[i] < 0 ? -d->efc_D[i] * jar[i] : 0, g = fn - latch[i];
    if (g * gapprev[i] < 0 && rl_fabs(g) >= rl_fabs(gapprev[i])) {
      latch[i] += g / 2;
      *exact = 0;
    } else {
      latch[i] = fn;
    }
    gapprev[i] = g;
    if (rl_fabs(g) > gmax) gmax = rl_fabs(g);
    if (fn > fmax) fmax = fn;
    i += d->contact[d->efc_id[i]].dim - 1;
  }
  return gmax > 0 ? gmax / (fmax > RL_TINY ? fmax : RL_TINY) : 0;
}

/* ------------------------------------------------------------------ context */

/* The tree the tree Cholesky eliminates along (rl_tfactor): the dof tree, with the subtree of one chain hung below
   the deepest dof of another wherever a row (an elliptic contact: its rows together) would couple two chains —
   a body–body contact, a loop-closing connect, a tendon or joint equality across branches.  Re-hanging a subtree
   below a descendant of its old parent keeps every ancestor an ancestor, so M's entries and the rows already on
   chains stay on chains. */
typedef struct vtree {
  int *parent;  /* nv: each dof's parent (−1: a root) */
  int *depth;   /* nv: its number of ancestors */
  int *adr;     /* nv + 1: the rows' starts (row k: k, then its ancestors), in dof order */
  int *order;   /* nv: the elimination order, every dof after its descendants */
  int *rowlast; /* nefc: the deepest column of each row's chain (an elliptic contact's: of its rows together) */
  int *dofchain; /* nefc: 1 when the row (the contact) lies on one chain of the dof tree itself */
  int *mark;    /* nv scratch: chain marks */
  int *path;    /* nv scratch: the columns of an elliptic contact's rows */
  int *walk;    /* nv scratch: the stack of a re-hung subtree's walk */
  int *child, *sibling; /* nv each: each dof's first child and next sibling in the tree (−1: none) */
  int stamp, merged;
  int linked;   /* child, sibling, mark and work made (vtree_links) */
  double work;  /* Σ_k row_k², the Cholesky's work */
  double limit; /* vtree_build gives up (work = ∞) once the work exceeds it */
} vtree;

typedef struct solver_ctx {
  const rl_model *m;
  rl_data *d;
  int nv, nefc, newton, signorini;
  int rec; /* the recursive path: no qM/qLD, M·v and M⁻¹·v by recursions (minv: CG's M⁻¹) */
  rl_aba minv;
  real scale; /* meaninertia · max(1, nv) */
  real *Jaref, *Jv, *Ma, *Mv, *grad, *Mgrad, *search, *quad, *coneH, *latch, *gapprev, *vec, *local;
  int *oldstate;
  int *gnext; /* nefc: the row groups (see GROUP_ROWS) */
  real quadGauss[3], cost;
  real gterms; /* ‖|Ma| + |qfrc_smooth| + |qfrc_constraint|‖ at the last gradient */
  int nactive, ncone, nupdate;
  /* line search diagnostics */
  int LSiter, LSresult;
  real LSslope, LScost; /* LScost: the returned point's cost as ls_eval gives it (f32: its change from α = 0) */
  /* Newton factorization: H and H with cone blocks (dense, skyline), or the articulated-body solve */
  int *first, kind, aba_cone; /* aba_cone: the last ABA (or sparse) factorization included cone blocks */
  int *adrH, *adrC;           /* the envelope factors' index arrays (taken before the choice) */
  rl_hfactor H, Hc;
  rl_tfactor T, Tc; /* the tree factors (H and H with cone blocks) */
  vtree vt;         /* their tree */
  int *blockcol;    /* nv: a cone block's columns */
  int *obase, *odep; /* nv: add_outers' row bases and column terms */
  real *blockw;     /* nv: a cone block's vector on them */
  rl_aba aba;
  const rl_solver_observer *obs;
} solver_ctx;

/* r = M·v: the sparse qM, or on the recursive path the composite-body recursion (its arena room was
   checked by ctx_alloc) */
static void ctx_mul_m(solver_ctx *c, real *r, const real *v) {
  if (c->rec) rl_mul_m_recursive(c->m, c->d, r, v);
  else rl_mul_m(c->m, c->d, r, v);
}

/* x = M⁻¹·b: qLD's LᵀDL, or on the recursive path the articulated-body solve prepared in minv */
static void ctx_solve_m(solver_ctx *c, real *x, const real *b) {
  if (!c->rec) {
    rl_solve_m(c->m, c->d, x, b, 1);
    return;
  }
  memcpy(x, b, sizeof(real) * (size_t)c->nv);
  rl_aba_solve(&c->minv, c->m, c->d, x);
}

static real *take(rl_data *d, size_t n) {
  real *p = rl_arena_take(d, n ? n : 1);
  return p;
}

/* envelope: first[i] = the root of i's dof chain, lowered to the first column of every row touching i;
   dense: first[i] = 0 (no chain walk) */
static void envelope(const rl_model *m, const rl_data *d, int *first, int dense) {
  int nv = m->nv;
  if (dense) {
    memset(first, 0, sizeof(int) * (size_t)nv);
    return;
  }
  for (int i = 0; i < nv; i++) first[i] = m->dof_parentid[i] < 0 ? i : first[m->dof_parentid[i]]; /* parents first */
  for (int r = 0; r < d->nefc; r++) {
    int nnz = d->efc_J_rownnz[r];
    const int *c = d->efc_J_colind + d->efc_J_rowadr[r];
    int lo = nv;
    for (int k = 0; k < nnz; k++)
      if (c[k] < lo) lo = c[k];
    for (int k = 0; k < nnz; k++)
      if (first[c[k]] > lo) first[c[k]] = lo;
  }
}

static size_t envelope_size(int n, const int *first) {
  size_t s = 0;
  for (int i = 0; i < n; i++) s += (size_t)(i - first[i] + 1);
  return s;
}

/* Σ_i w_i², w_i = i − first_i + 1: the envelope Cholesky's work (and a rank-1 update's, per row) */
static double envelope_work(int n, const int *first) {
  double s = 0;
  for (int i = 0; i < n; i++) s += (double)(i - first[i] + 1) * (i - first[i] + 1);
  return s;
}

/* ABA pays when the envelope Cholesky's work Σw² exceeds ABA_WORK·nv (the recursion's cost per dof).
   Measured (whole step, f64, ns): chain24 (Σw²/nv 204) skyline 20428 / ABA 20339, chain32 (357) 36966 /
   36061, humanoid (257) 25448 / 25905, humanoid100 (257 per tree) 704195 / 746123: ABA from ~300. */
#define ABA_WORK 300.0
static int aba_pays(int nv, const int *first) { return envelope_work(nv, first) > ABA_WORK * nv; }

/* Σ_k len_k², len_k = dof k's row of qM (itself and its ancestors; the rows are stored consecutively from
   dof_Madr): the work of M's LᵀDL and of the tree Cholesky of H (rl_tfactor), which on a chain is the
   envelope Cholesky itself, so ABA_WORK weighs it against the recursion as it does Σw² */
static double tree_work(const rl_model *m) {
  double w = 0;
  for (int k = 0; k < m->nv; k++) {
    int len = (k + 1 < m->nv ? m->dof_Madr[k + 1] : m->nM) - m->dof_Madr[k];
    w += (double)len * len;
  }
  return w;
}

/* Sparse pays when H is large (nv ≥ SPARSE_MIN_NV, and the envelope's mean squared row width above
   SPARSE_SCREEN, so that trees coupled only through the ground, e.g. humanoid100 at Σw²/nv ≈ 257, never pay
   for an analysis) and the supernodal factorization's flop count fl (CHOLMOD's analysis, after the
   fill-reducing ordering) is below 1/SPARSE_MARGIN of the envelope Cholesky's work Σw² (the cheaper of
   skyline and dense); the margin pays for what the envelope path does not do each solve: the pattern, its
   analysis when it changed, and a numeric refactorization at every iteration whose states change instead
   of rank-1 updates.  Measured (whole Newton step, f64, 2-core host, ms): 125-sphere pile (Σw² 1.4e7,
   fl 3.5e6) skyline 130 / sparse 31; 250 spheres skyline 1641 / sparse 63. */
#define SPARSE_MIN_NV 150
#define SPARSE_MARGIN 2.0
#define SPARSE_SCREEN 1000.0
static int sparse_pays(const rl_model *m, rl_data *d, double envwork) {
  double fl;
  if (m->nv < SPARSE_MIN_NV || envwork < SPARSE_SCREEN * m->nv) return 0;
  return rl_sparse_analyse(m, d, &fl) == 0 && SPARSE_MARGIN * fl < envwork;
}

/* The work beyond which vtree_build gives up the re-hung tree: it pays only below half the dense work
   (nv³/6, see choose_kind), and from SPARSE_MIN_NV dofs only below SPARSE_SCREEN per dof, where the sparse
   factorization is weighed instead.  A pile's contacts close loops through every body, so its re-hanging
   merges chains until the work passes the limit: with nv³/6 alone that walk took 8 % of the 1000-sphere
   pile's step (callgrind, 3 steps); humanoid100's re-hung trees, the largest kept, stay below 120 per dof. */
static double tree_limit(int nv) {
  double dense = (double)nv * nv * nv / 6;
  return nv >= SPARSE_MIN_NV && SPARSE_SCREEN * nv < dense ? SPARSE_SCREEN * nv : dense;
}

/* ------------------------------------------------------------- chains */

/* ints a vtree takes from the arena */
static size_t vtree_ints(int nv, int nefc) { return 9 * (size_t)nv + 1 + 2 * (size_t)nefc; }

static int vtree_take(rl_data *d, vtree *t, int nv, int nefc) {
  int *p = (int *)(void *)take(d, vtree_ints(nv, nefc));
  if (!p) return -1;
  t->parent = p;
  t->depth = p + nv;
  t->mark = p + 2 * nv;
  t->path = p + 3 * nv;
  t->order = p + 4 * nv;
  t->rowlast = p + 5 * nv;
  t->adr = p + 5 * nv + nefc;
  t->walk = p + 6 * nv + 1 + nefc;
  t->dofchain = p + 7 * nv + 1 + nefc;
  t->child = p + 7 * nv + 1 + 2 * nefc;
  t->sibling = p + 8 * nv + 1 + 2 * nefc;
  return 0;
}

/* Hang z (and its subtree) below x: z leaves its old parent's child list, and the depths of z's subtree and the work
   Σ_k (depth_k + 1)² follow, visiting that subtree only (integers, exact in double: the same values as recounting
   every dof's depth) */
static void vtree_rehang(vtree *t, int z, int x) {
  int p = t->parent[z];
  if (p >= 0) {
    int *at = &t->child[p];
    while (*at != z) at = &t->sibling[*at];
    *at = t->sibling[z];
  }
  t->parent[z] = x;
  t->sibling[z] = t->child[x];
  t->child[x] = z;
  int delta = t->depth[x] + 1 - t->depth[z], n = 0;
  t->walk[n++] = z;
  while (n > 0) {
    int w = t->walk[--n];
    double d0 = t->depth[w] + 1, d1 = d0 + delta;
    t->work += d1 * d1 - d0 * d0;
    t->depth[w] += delta;
    for (int c = t->child[w]; c >= 0; c = t->sibling[c]) t->walk[n++] = c;
  }
}

/* Put the columns col[0 … n) on one chain: x = the deepest column; while a column y is off x's chain, the
   topmost dof z of y's chain below the point where it meets x's chain (or y's root) is hung below x.  Returns
   x, the chain's deepest dof (−1 for no columns), or −2 once the work exceeds t->limit (the tree cannot pay). */
static int vtree_chain(vtree *t, const int *col, int n) {
  for (;;) {
    int x = -1, y = -1;
    for (int k = 0; k < n; k++)
      if (x < 0 || t->depth[col[k]] > t->depth[x]) x = col[k];
    if (x < 0) return -1;
    t->stamp++;
    for (int j = x; j >= 0; j = t->parent[j]) t->mark[j] = t->stamp;
    for (int k = 0; k < n; k++)
      if (t->mark[col[k]] != t->stamp && (y < 0 || t->depth[col[k]] > t->depth[y])) y = col[k];
    if (y < 0) return x;
    int z = y;
    while (t->parent[z] >= 0 && t->mark[t->parent[z]] != t->stamp) z = t->parent[z];
    vtree_rehang(t, z, x);
    t->merged = 1;
    if (t->work > t->limit) return -2;
  }
}

/* 1 when the columns of rows r … r + n − 1 (each row's ascending) lie on the chain of `last` in the dof tree:
   walking up from last, every column is met in descending order (the dof tree numbers parents first); with
   dof_treeend, each column's subtree holds last */
static int on_dof_chain(const rl_model *m, const rl_data *d, int r, int n, int last) {
  const int *end = m->dof_treeend;
  if (end[0] >= 0) { /* each column is last or an ancestor of last: col ≤ last ≤ the end of col's subtree */
    for (int k = 0; k < n; k++) {
      const int *col = d->efc_J_colind + d->efc_J_rowadr[r + k];
      for (int q = 0, nnz = d->efc_J_rownnz[r + k]; q < nnz; q++)
        if (col[q] > last || last > end[col[q]]) return 0;
    }
    return 1;
  }
  for (int k = 0; k < n; k++) {
    const int *col = d->efc_J_colind + d->efc_J_rowadr[r + k];
    int j = last;
    for (int q = d->efc_J_rownnz[r + k] - 1; q >= 0; q--) {
      while (j > col[q]) j = m->dof_parentid[j];
      if (j != col[q]) return 0;
    }
  }
  return 1;
}

/* the dof tree's child and sibling lists, cleared marks and its work Σ_k (depth_k + 1)², made at the first row that
   needs them (one off its dof chain: marks and re-hanging); the rows along chains need none of them */
static void vtree_links(vtree *t, int nv) {
  if (t->linked) return;
  t->linked = 1;
  t->work = 0;
  for (int i = 0; i < nv; i++) {
    t->work += (double)(t->depth[i] + 1) * (t->depth[i] + 1);
    t->mark[i] = 0;
    t->child[i] = -1;
  }
  for (int i = nv - 1; i >= 0; i--)
    if (t->parent[i] >= 0) {
      t->sibling[i] = t->child[t->parent[i]];
      t->child[t->parent[i]] = i;
    }
}

/* The tree for d's rows: rowlast, adr, order and work (see vtree).  Without a re-hung subtree it is the dof tree
   in qM's layout, eliminated from the last dof to the first (rl_factor_ld's order); else by decreasing depth. */
static void vtree_build(vtree *t, const rl_model *m, const rl_data *d) {
  int nv = m->nv;
  memcpy(t->parent, m->dof_parentid, sizeof(int) * (size_t)nv);
  memcpy(t->depth, m->dof_depth, sizeof(int) * (size_t)nv);
  t->linked = 0;
  t->stamp = t->merged = 0;
  for (int r = 0; r < d->nefc; r++) {
    int n = d->efc_type[r] == RL_CNSTR_CONTACT_ELLIPTIC ? d->contact[d->efc_id[r]].dim : 1, last = -1;
    for (int k = 0; k < n; k++) {
      int nnz = d->efc_J_rownnz[r + k], lk = nnz > 0 ? d->efc_J_colind[d->efc_J_rowadr[r + k] + nnz - 1] : -1;
      if (lk > last) last = lk;
    }
    int dofchain = on_dof_chain(m, d, r, n, last);
    if (dofchain) {
      /* the common case, rows along one chain of the dof tree (still one chain below re-hung subtrees): no marks */
    } else if (n == 1) {
      vtree_links(t, nv);
      last = vtree_chain(t, d->efc_J_colind + d->efc_J_rowadr[r], d->efc_J_rownnz[r]);
    } else {
      vtree_links(t, nv);
      /* the rows' columns merged in path (the block's outer products pair columns of different rows) */
      int nc = 0;
      t->stamp++;
      for (int k = 0; k < n; k++) {
        const int *ck = d->efc_J_colind + d->efc_J_rowadr[r + k];
        for (int q = 0; q < d->efc_J_rownnz[r + k]; q++)
          if (t->mark[ck[q]] != t->stamp) {
            t->mark[ck[q]] = t->stamp;
            t->path[nc++] = ck[q];
          }
      }
      last = vtree_chain(t, t->path, nc);
    }
    if (last == -2) {
      t->work = HUGE_VAL;
      return;
    }
    for (int k = 0; k < n; k++) {
      t->rowlast[r + k] = last;
      t->dofchain[r + k] = dofchain;
    }
    r += n - 1;
  }
  t->adr[0] = 0;
  t->work = 0;
  for (int i = 0; i < nv; i++) {
    t->adr[i + 1] = t->adr[i] + t->depth[i] + 1;
    t->work += (double)(t->depth[i] + 1) * (t->depth[i] + 1);
  }
  if (!t->merged) {
    for (int k = 0; k < nv; k++) t->order[k] = nv - 1 - k;
    return;
  }
  /* counting sort by decreasing depth (mark: the count of each depth, then its first slot) */
  for (int i = 0; i < nv; i++) t->mark[i] = 0;
  for (int i = 0; i < nv; i++) t->mark[nv - 1 - t->depth[i]]++;
  for (int k = 0, at = 0; k < nv; k++) {
    int cnt = t->mark[k];
    t->mark[k] = at;
    at += cnt;
  }
  for (int i = nv - 1; i >= 0; i--) t->order[t->mark[nv - 1 - t->depth[i]]++] = i;
  t->stamp = 0;
  for (int i = 0; i < nv; i++) t->mark[i] = 0;
}

/* The factorization for d's rows (see rl_solver_factor_kind); aba is initialized (rows classified) unless
   the choice is forced dense or skyline; first (nv) receives the skyline envelope; a sparse choice leaves
   d->sparse analysed for d's rows. */
static int choose_kind(const rl_model *m, rl_data *d, int *first, rl_aba *aba, vtree *t) {
  int opt = m->opt.newton_factor;
  if (opt == RL_FACTOR_DENSE || opt == RL_FACTOR_SKYLINE) return opt;
  if (opt == RL_FACTOR_SPARSE && rl_sparse_analyse(m, d, NULL) == 0) return RL_FACTOR_SPARSE;
  int tree = opt == RL_FACTOR_AUTO || opt == RL_FACTOR_TREE;
  if (tree) {
    t->limit = opt == RL_FACTOR_TREE ? HUGE_VAL : tree_limit(m->nv);
    vtree_build(t, m, d);
    if (opt == RL_FACTOR_TREE || (!t->merged && t->work <= ABA_WORK * m->nv)) return RL_FACTOR_TREE;
    /* below the sparse size a re-hung tree within the limit is taken without the envelope's analysis, and at any
       size one within ABA_WORK per dof (the bound that takes the dof tree itself: sparse is then never weighed, its
       screen being SPARSE_SCREEN per dof; humanoid100's re-hung trees, 15–23 k for 627 dofs, skip the envelope) */
    if (t->merged && t->work <= t->limit && (m->nv < SPARSE_MIN_NV || t->work <= ABA_WORK * m->nv))
      return RL_FACTOR_TREE;
  }
  envelope(m, d, first, 0);
  /* a row that couples two chains (re-hung subtrees) is not tree-expressible for ABA either */
  int aba_open = opt == RL_FACTOR_ABA || !tree || !t->merged;
  if (aba_open && (opt == RL_FACTOR_ABA || aba_pays(m->nv, first)) && rl_aba_init(aba, m, d) == 0)
    return RL_FACTOR_ABA;
  if (tree && !t->merged) return RL_FACTOR_TREE;
  size_t dense = (size_t)m->nv * (m->nv + 1) / 2;
  int kind = 2 * envelope_size(m->nv, first) <= dense ? RL_FACTOR_SKYLINE : RL_FACTOR_DENSE;
  double work = kind == RL_FACTOR_SKYLINE ? envelope_work(m->nv, first) : (double)m->nv * m->nv * m->nv / 3;
  /* Re-hung subtrees lengthen the rows below them: the tree pays while its work stays below half the dense
     Cholesky's (whose row-oriented inner products are cheaper per entry than the tree's column updates) or below
     the skyline's (which walks column lists for its updates too).  Measured (callgrind, instructions per step
     ours / mj_step, forced tree / dense or skyline): panda_like (nv 15, tree work 376, dense 1125) 0.661 / 0.629;
     cassie_like (32, 4081 / 10923) 0.710 / 0.798; hand_grasp (22, 1000–3000 / 3549) 0.943 / 1.011; humanoid100
     (627, 15–23 k / skyline 23–680 k) 0.833 / 1.155. */
  if (tree && t->work < (kind == RL_FACTOR_DENSE ? work / 2 : work)) {
    kind = RL_FACTOR_TREE;
    work = t->work;
  }
  if (opt == RL_FACTOR_AUTO && sparse_pays(m, d, work)) return RL_FACTOR_SPARSE;
  return kind;
}

int rl_solver_factor_kind(const rl_model *m, const rl_data *d) {
  if (m->opt.newton_factor == RL_FACTOR_DENSE) return RL_FACTOR_DENSE;
  if (m->opt.newton_factor == RL_FACTOR_SKYLINE) return RL_FACTOR_SKYLINE;
  rl_data *dd = (rl_data *)d; /* arena scratch only */
  size_t mark = rl_arena_mark(dd);
  int *first = (int *)(void *)take(dd, (size_t)m->nv);
  rl_aba aba;
  vtree t;
  int kind = first && !vtree_take(dd, &t, m->nv, d->nefc) ? choose_kind(m, dd, first, &aba, &t) : RL_FACTOR_DENSE;
  rl_arena_release(dd, mark);
  return kind;
}

/* ----------------------------------------------------------------- Hessian */

/* Under signorini every iteration refactors (the latches change the cost): the cone blocks are assembled into H
   with the rows, where the convex solve keeps H without them for its rank-1 updates and adds them to a copy
   (hessian_cone) */
static int cones_assembled(const solver_ctx *c) { return c->signorini; }

/* the dense, skyline or tree solve reads the copy with the cone blocks */
static int cone_factor(const solver_ctx *c) { return c->ncone && !cones_assembled(c); }

/* tree: s·J_r added into v, which is zero off the rows' chains (the tree update leaves it zero) */
static void add_row(const rl_data *d, int r, real s, real *v) {
  const real *J = d->efc_J + d->efc_J_rowadr[r];
  const int *col = d->efc_J_colind + d->efc_J_rowadr[r];
  for (int k = 0; k < d->efc_J_rownnz[r]; k++) v[col[k]] += s * J[k];
}

/* scatter s·J_r into the dense vector v (zeroed) */
static void scatter_row(const rl_data *d, int r, real s, real *v, int nv) {
  memset(v, 0, sizeof(real) * (size_t)nv);
  const real *J = d->efc_J + d->efc_J_rowadr[r];
  const int *col = d->efc_J_colind + d->efc_J_rowadr[r];
  for (int k = 0; k < d->efc_J_rownnz[r]; k++) v[col[k]] += s * J[k];
}

/* small dense Cholesky of a cone block (mju_cholFactor with mjMINVAL) */
static void chol_small(real *A, int n) {
  for (int j = 0; j < n; j++) {
    real t = A[j * n + j];
    for (int k = 0; k < j; k++) t -= A[j * n + k] * A[j * n + k];
    if (t < MINVAL) t = MINVAL;
    A[j * n + j] = rl_sqrt(t);
    for (int i = j + 1; i < n; i++) {
      real s = A[i * n + j];
      for (int k = 0; k < j; k++) s -= A[i * n + k] * A[j * n + k];
      A[i * n + j] = s / A[j * n + j];
    }
  }
}

/* H(i, j) += Σ_k s_k·w_k,p·w_k,q (k < nw ≤ GROUP_ROWS) over the pairs p ≥ q of col (ascending): the outer products
   of nw rows or vectors on one column list added to the lower triangle in the storage of the factor being assembled
   — the tree's (entry (i, j), j = i or an ancestor of i, at adr[i] + depth(i) − depth(j)) or the envelope's rows
   (adr[i] + j − first[i]); both are base_p − dep_q with base_p = adr + depth or adr − first of col_p and dep_q =
   depth or −col_q.  An entry's terms are added in the order k = 0 … nw − 1, the sums of nw one-vector calls made one
   after another.  dofchain: the columns lie on one chain of the dof tree, where ascending columns put each ancestor
   first (in a re-hung tree too); else, on a re-hung tree, the deeper of the two columns holds the entry. */
static inline void add_outers(solver_ctx *c, real *L, const int *col, int n, const real *const *w, const real *s,
                              int nw, int dofchain) {
  const vtree *t = &c->vt;
  int *base = c->obase, *dep = c->odep, tree = c->kind == RL_FACTOR_TREE;
  for (int p = 0; p < n; p++) {
    int j = col[p];
    dep[p] = tree ? t->depth[j] : -j;
    base[p] = tree ? t->adr[j] + t->depth[j] : c->H.adr[j] - c->H.first[j];
  }
  real wp[GROUP_ROWS];
  if (!tree || dofchain) {
    for (int p = 0; p < n; p++) {
      for (int k = 0; k < nw; k++) wp[k] = s[k] * w[k][p];
      real *Lp = L + base[p];
      for (int q = 0; q <= p; q++) {
        real a = Lp[-dep[q]];
        for (int k = 0; k < nw; k++) a += wp[k] * w[k][q];
        Lp[-dep[q]] = a;
      }
    }
    return;
  }
  for (int p = 0; p < n; p++) {
    for (int k = 0; k < nw; k++) wp[k] = s[k] * w[k][p];
    for (int q = 0; q <= p; q++) {
      int e = dep[p] >= dep[q] ? base[p] - dep[q] : base[q] - dep[p];
      real a = L[e];
      for (int k = 0; k < nw; k++) a += wp[k] * w[k][q];
      L[e] = a;
    }
  }
}

/* add_outers with the vector count nw as a constant (a loop of its own per count, the terms in registers) */
static void add_outers_n(solver_ctx *c, real *L, const int *col, int n, const real *const *w, const real *s, int nw,
                         int dofchain) {
  switch (nw) {
  case 4: add_outers(c, L, col, n, w, s, 4, dofchain); break;
  case 3: add_outers(c, L, col, n, w, s, 3, dofchain); break;
  case 2: add_outers(c, L, col, n, w, s, 2, dofchain); break;
  default: add_outers(c, L, col, n, w, s, 1, dofchain); break;
  }
}

/* H(i, j) += scale·w_p·w_q over the pairs p ≥ q of col: one vector's outer product (add_outers) */
static void add_outer(solver_ctx *c, real *L, const int *col, const real *w, int n, real scale, int dofchain) {
  add_outers_n(c, L, col, n, &w, &scale, 1, dofchain);
}

/* H += Σ_k D_k·J_kᵀJ_k over the rows rows[0 … nw) of one group (one column list) */
static void add_rows_outer(solver_ctx *c, real *L, const int *rows, int nw) {
  const rl_data *d = c->d;
  const real *w[GROUP_ROWS];
  real s[GROUP_ROWS];
  for (int k = 0; k < nw; k++) {
    w[k] = d->efc_J + d->efc_J_rowadr[rows[k]];
    s[k] = d->efc_D[rows[k]];
  }
  int adr = d->efc_J_rowadr[rows[0]];
  add_outers_n(c, L, d->efc_J_colind + adr, d->efc_J_rownnz[rows[0]], w, s, nw,
               c->kind == RL_FACTOR_TREE && c->vt.dofchain[rows[0]]);
}

/* the columns of rows r … r + n − 1 merged (ascending, each once) into col; returns their number */
static int block_columns(solver_ctx *c, int r, int n, int *col) {
  const rl_data *d = c->d;
  int nc = 0;
  for (int k = 0; k < n; k++) {
    const int *ck = d->efc_J_colind + d->efc_J_rowadr[r + k];
    for (int q = 0; q < d->efc_J_rownnz[r + k]; q++) {
      int j = ck[q], at = nc;
      while (at > 0 && col[at - 1] > j) at--;
      if (at > 0 && col[at - 1] == j) continue;
      memmove(col + at + 1, col + at, sizeof(int) * (size_t)(nc - at));
      col[at] = j;
      nc++;
    }
  }
  return nc;
}

/* H += J_cᵀ·H_c·J_c for the cone block of rows s … s + n − 1 (H_c at coneH + 6s): with H_c = L_c·L_cᵀ, the outer
   products of the n vectors w_k = Σ_{row ≥ k} L_c(row, k)·J_{s+row} over the block's columns */
static void add_cone_block(solver_ctx *c, real *L, int s, int n) {
  rl_data *d = c->d;
  int *col = c->blockcol;
  int nc = block_columns(c, s, n, col);
  memcpy(c->local, c->coneH + 6 * s, sizeof(real) * (size_t)(n * n));
  chol_small(c->local, n);
  for (int k = 0; k < n; k++) {
    for (int row = k; row < n; row++) add_row(d, s + row, c->local[row * n + k], c->vec);
    for (int q = 0; q < nc; q++) {
      c->blockw[q] = c->vec[col[q]];
      c->vec[col[q]] = 0;
    }
    add_outer(c, L, col, c->blockw, nc, 1, c->kind == RL_FACTOR_TREE && c->vt.dofchain[s]);
  }
}

/* H = M + Σ_{QUADRATIC rows} D_i·J_iᵀJ_i (+ the cone blocks when they are assembled, under signorini) into the
   tree's or the envelope's storage, then its Cholesky (mindiag mjMINVAL) */
static int hessian_assemble_factor(solver_ctx *c) {
  const rl_model *m = c->m;
  rl_data *d = c->d;
  int tree = c->kind == RL_FACTOR_TREE;
  real *L = tree ? c->T.L : c->H.L;
  if (tree && !c->vt.merged) {
    memcpy(L, d->qM, sizeof(real) * (size_t)m->nM);
  } else if (tree) {
    const vtree *t = &c->vt;
    memset(L, 0, sizeof(real) * (size_t)t->adr[m->nv]);
    for (int i = 0; i < m->nv; i++) {
      int a = m->dof_Madr[i];
      for (int j = i; j >= 0; j = m->dof_parentid[j], a++) L[t->adr[i] + t->depth[i] - t->depth[j]] = d->qM[a];
    }
  } else {
    rl_hfactor *f = &c->H;
    memset(L, 0, sizeof(real) * (size_t)f->adr[m->nv]);
    for (int i = 0; i < m->nv; i++) {
      int a = m->dof_Madr[i];
      for (int j = i; j >= 0; j = m->dof_parentid[j], a++) L[f->adr[i] + j - f->first[i]] = d->qM[a];
    }
  }
  /* the QUADRATIC rows of one group are added together (add_rows_outer), flushed before a cone block so that every
     entry still takes its terms in row order */
  int rows[GROUP_ROWS], nq = 0;
  for (int r = 0; r < d->nefc; r++) {
    if (d->efc_state[r] == RL_CNSTRSTATE_QUADRATIC) {
      if (nq && c->gnext[rows[0]] != c->gnext[r]) {
        add_rows_outer(c, L, rows, nq);
        nq = 0;
      }
      rows[nq++] = r;
    } else if (d->efc_state[r] == RL_CNSTRSTATE_CONE && cones_assembled(c)) {
      if (nq) add_rows_outer(c, L, rows, nq);
      nq = 0;
      int n, s = cone_block(d, r, c->signorini, &n);
      add_cone_block(c, L, s, n);
      r += n - 1;
    }
  }
  if (nq) add_rows_outer(c, L, rows, nq);
  return tree ? rl_tfactor_factor(&c->T, MINVAL) : rl_hfactor_factor(&c->H, MINVAL);
}

/* Hcone = H + Σ_cone J_cᵀ·H_c·J_c as rank-1 updates with the rows of L_cᵀ·J_c (H_c = L_c·L_cᵀ) */
static void hessian_cone(solver_ctx *c) {
  rl_data *d = c->d;
  int nv = c->nv, tree = c->kind == RL_FACTOR_TREE;
  if (tree) {
    memcpy(c->Tc.L, c->T.L, sizeof(real) * (size_t)c->vt.adr[nv]);
    memcpy(c->Tc.inv, c->T.inv, sizeof(real) * (size_t)nv);
  }
  else memcpy(c->Hc.L, c->H.L, sizeof(real) * (size_t)c->H.adr[nv]);
  for (int r = 0; r < d->nefc; r++) {
    if (d->efc_state[r] != RL_CNSTRSTATE_CONE) continue;
    int n, s = cone_block(d, r, c->signorini, &n);
    memcpy(c->local, c->coneH + 6 * s, sizeof(real) * (size_t)(n * n));
    chol_small(c->local, n);
    for (int col = 0; col < n; col++) {
      /* (L_cᵀJ)_col = Σ_{row ≥ col} L_c(row, col)·J_{s+row} */
      if (!tree) memset(c->vec, 0, sizeof(real) * (size_t)nv);
      for (int row = col; row < n; row++) add_row(d, s + row, c->local[row * n + col], c->vec);
      if (tree) rl_tfactor_update(&c->Tc, c->vec, c->vt.rowlast[s], 1);
      else rl_hfactor_update(&c->Hc, c->vec, 1);
    }
    c->nupdate += n;
    r += n - 1;
  }
}

/* ABA: the articulated inertias of H (with the cone blocks) at the current states */
static void hessian_aba(solver_ctx *c) {
  c->aba_cone = c->ncone > 0;
  rl_aba_prepare(&c->aba, c->m, c->d, c->d->efc_state, c->ncone ? c->coneH : NULL, c->signorini);
}

static void hessian_direct(solver_ctx *c);
static int ctx_take_envelope(solver_ctx *c, int kind);

/* The envelope factorization takes over from a sparse one CHOLMOD refused (not positive definite, out of
   memory): the cheaper of skyline and dense, for the rest of the solve.  0, or −1 arena too small. */
static int sparse_fallback(solver_ctx *c) {
  size_t dense = (size_t)c->nv * (c->nv + 1) / 2;
  envelope(c->m, c->d, c->first, 0);
  int kind = 2 * envelope_size(c->nv, c->first) <= dense ? RL_FACTOR_SKYLINE : RL_FACTOR_DENSE;
  if (ctx_take_envelope(c, kind)) return -1;
  hessian_direct(c);
  return 0;
}

/* Sparse: H = M + Σ_QUADRATIC D_i·J_iᵀJ_i + Σ_CONE J_cᵀ·H_c·J_c assembled into CHOLMOD's matrix, then its
   numeric factorization (the pattern's analysis was made when the kind was chosen) */
static void hessian_sparse(solver_ctx *c) {
  rl_data *d = c->d;
  int fail = 0;
  rl_sparse_begin(c->m, d);
  for (int r = 0; r < d->nefc && !fail; r++) {
    if (d->efc_state[r] == RL_CNSTRSTATE_QUADRATIC) {
      fail = rl_sparse_add_row(d, r, d->efc_D[r]);
    } else if (d->efc_state[r] == RL_CNSTRSTATE_CONE) {
      int n, s = cone_block(d, r, c->signorini, &n);
      fail = rl_sparse_add_block(d, s, n, c->coneH + 6 * s);
      r += n - 1;
    }
  }
  c->aba_cone = c->ncone > 0;
  c->nupdate = c->nefc + c->ncone;
  if ((fail || rl_sparse_factor(d)) && sparse_fallback(c)) d->warning[RL_WARN_BADQACC]++;
}

/* Rank-1 updates pay over CHOLMOD's supernodal refactorization when at most one row per 100 dofs changed
   state (callgrind on the 1000-sphere pile, nv 6000: an update ≈ 3 M instructions, a refactorization
   ≈ 180 M, so ~60 updates cost one) */
static int sparse_updown_pays(int nv, int nchange) { return 100 * nchange <= nv; }

/* the sparse factor updated for the rows that entered (+√D·J) and left (−√D·J) the QUADRATIC state since
   oldstate; 0, or −1 (arena, or CHOLMOD refused: the caller refactors) */
static int hessian_sparse_updown(solver_ctx *c, const int *oldstate, int nchange) {
  rl_data *d = c->d;
  size_t mark = rl_arena_mark(d);
  int *rows = (int *)(void *)take(d, (size_t)nchange); /* entering rows from the front, leaving from the back */
  if (!rows) return -1;
  int nadd = 0, ndel = 0;
  for (int r = 0; r < d->nefc; r++) {
    int was = oldstate[r] == RL_CNSTRSTATE_QUADRATIC, is = d->efc_state[r] == RL_CNSTRSTATE_QUADRATIC;
    if (is && !was) rows[nadd++] = r;
    if (was && !is) rows[nchange - ++ndel] = r;
  }
  int st = rl_sparse_updown(d, rows, nadd, rows + nchange - ndel, ndel);
  rl_arena_release(d, mark);
  return st;
}

static void hessian_direct(solver_ctx *c) {
  if (c->kind == RL_FACTOR_SPARSE) {
    hessian_sparse(c);
    return;
  }
  if (c->kind == RL_FACTOR_ABA) {
    hessian_aba(c);
    c->nupdate = c->nefc + c->ncone;
    return;
  }
  hessian_assemble_factor(c);
  c->nupdate = c->nefc;
  if (c->ncone && !cones_assembled(c)) hessian_cone(c);
}

/* rows entering the QUADRATIC state: +√D·J_i, leaving it: −√D·J_i; rank loss → refactor */
static void hessian_incremental(solver_ctx *c, const int *oldstate) {
  rl_data *d = c->d;
  c->nupdate = 0;
  if (c->kind == RL_FACTOR_ABA) {
    /* O(nv) re-preparation instead of rank-1 updates; nupdate counts what the Cholesky would update */
    for (int r = 0; r < d->nefc; r++)
      c->nupdate += (oldstate[r] == RL_CNSTRSTATE_QUADRATIC) != (d->efc_state[r] == RL_CNSTRSTATE_QUADRATIC);
    /* no row changed and no cone block now or at the last preparation: H is unchanged */
    if (c->nupdate || c->ncone || c->aba_cone) hessian_aba(c);
    c->nupdate += c->ncone;
    return;
  }
  if (c->kind == RL_FACTOR_SPARSE) {
    /* few rows changed state and no cone block now or at the last factorization: rank-1 updates of the
       factor (sparse_updown_pays); else a numeric refactorization */
    int nchange = 0;
    for (int r = 0; r < d->nefc; r++)
      nchange += (oldstate[r] == RL_CNSTRSTATE_QUADRATIC) != (d->efc_state[r] == RL_CNSTRSTATE_QUADRATIC);
    c->nupdate = nchange + c->ncone;
    if (!nchange && !c->ncone && !c->aba_cone) return;
    if (c->ncone || c->aba_cone || !sparse_updown_pays(c->nv, nchange) || hessian_sparse_updown(c, oldstate, nchange))
      hessian_sparse(c);
    return;
  }
  int tree = c->kind == RL_FACTOR_TREE;
  for (int r = 0; r < d->nefc; r++) {
    int was = oldstate[r] == RL_CNSTRSTATE_QUADRATIC, is = d->efc_state[r] == RL_CNSTRSTATE_QUADRATIC;
    if (was == is) continue;
    int rank;
    if (tree) {
      add_row(d, r, rl_sqrt(d->efc_D[r]), c->vec);
      rank = rl_tfactor_update(&c->T, c->vec, c->vt.rowlast[r], is);
    } else {
      scatter_row(d, r, rl_sqrt(d->efc_D[r]), c->vec, c->nv);
      rank = rl_hfactor_update(&c->H, c->vec, is);
    }
    c->nupdate++;
    if (rank < c->nv) {
      hessian_direct(c);
      return;
    }
  }
  if (c->ncone) hessian_cone(c);
}

/* ------------------------------------------------------- state and gradient */

/* forces, states, cost = s(jar) + ½(Ma − qfrc_smooth)·(a − a₀), qfrc_constraint = Jᵀf */
static void update_constraint(solver_ctx *c) {
  rl_data *d = c->d;
  c->cost = constraint_update(c->m, d, c->Jaref, c->signorini ? c->latch : NULL, d->efc_force, d->efc_state, c->coneH,
                              c->newton);
  jac_tmul(c->m, d, c->gnext, d->qfrc_constraint, d->efc_force);
  c->nactive = c->ncone = 0;
  for (int i = 0; i < c->nefc; i++) {
    c->nactive += d->efc_state[i] != RL_CNSTRSTATE_SATISFIED;
    c->ncone += d->efc_state[i] == RL_CNSTRSTATE_CONE;
  }
  real gauss = 0;
  for (int i = 0; i < c->nv; i++)
    gauss += (real)0.5 * (c->Ma[i] - d->qfrc_smooth[i]) * (d->qacc[i] - d->qacc_smooth[i]);
  c->quadGauss[0] = gauss;
  c->cost += gauss;
}

/* x ← H⁻¹x with the current Newton factorization (a sparse solve CHOLMOD refused, out of memory: the
   envelope factorization takes over) */
static void hessian_solve(solver_ctx *c, real *x) {
  rl_data *d = c->d;
  if (c->kind == RL_FACTOR_SPARSE && rl_sparse_solve(d, x) && sparse_fallback(c)) d->warning[RL_WARN_BADQACC]++;
  if (c->kind == RL_FACTOR_ABA) rl_aba_solve(&c->aba, c->m, d, x);
  else if (c->kind == RL_FACTOR_TREE) rl_tfactor_solve(cone_factor(c) ? &c->Tc : &c->T, x);
  else if (c->kind != RL_FACTOR_SPARSE) rl_hfactor_solve(cone_factor(c) ? &c->Hc : &c->H, x);
}

/* g = Ma − qfrc_smooth − qfrc_constraint, and in the same pass its terms' size for the stopping test,
   gterms = ‖|Ma| + |qfrc_smooth| + |qfrc_constraint|‖ (see RL_GRAD_ULPS) */
static void update_grad(solver_ctx *c) {
  const real *fs = c->d->qfrc_smooth, *fc = c->d->qfrc_constraint;
  real s = 0;
  for (int i = 0; i < c->nv; i++) {
    c->grad[i] = c->Ma[i] - fs[i] - fc[i];
    real t = rl_fabs(c->Ma[i]) + rl_fabs(fs[i]) + rl_fabs(fc[i]);
    s += t * t;
  }
  c->gterms = rl_sqrt(s);
}

/* Newton: Mgrad = H⁻¹g;  CG: Mgrad = M⁻¹g */
static void update_mgrad(solver_ctx *c) {
  rl_data *d = c->d;
  if (c->newton) {
    memcpy(c->Mgrad, c->grad, sizeof(real) * (size_t)c->nv);
    hessian_solve(c, c->Mgrad);
    if (c->obs && c->obs->newton_system)
      c->obs->newton_system(c->obs->user, c->m, d, c->Jaref, c->signorini ? c->latch : NULL, c->grad, c->Mgrad);
  } else {
    ctx_solve_m(c, c->Mgrad, c->grad);
  }
}

/* ------------------------------------------------------------- line search */

/* Quadratic pieces along a + α·v: Gauss ½α²·vᵀMv + α·vᵀ(Ma − qfrc_smooth) + quadGauss[0]; per row
   ½D(jar + α·Jv)² as (½D·jar², D·jar·Jv, ½D·Jv²); elliptic contacts keep (U₀, V₀, UU, UV, VV, Dm)
   in quad[3i+3…] (dim ≥ 3 leaves room); signorini contacts keep the normal row's quadratic and
   (UU, UV, VV, k, b) of the friction disc at quad[3(i+1)…]. */
static void ls_prepare(solver_ctx *c) {
  rl_data *d = c->d;
  const real *v = c->search;
  c->quadGauss[1] = dot(v, c->Ma, c->nv) - dot(v, d->qfrc_smooth, c->nv);
  c->quadGauss[2] = (real)0.5 * dot(v, c->Mv, c->nv);
  for (int i = 0; i < c->nefc; i++) {
    const real *Jv = c->Jv + i, *Jaref = c->Jaref + i, *D = d->efc_D + i;
    real *q = c->quad + 3 * i;
    real DJ0 = D[0] * Jaref[0];
    q[0] = Jaref[0] * DJ0;
    q[1] = Jv[0] * DJ0;
    q[2] = Jv[0] * D[0] * Jv[0];
    if (d->efc_type[i] == RL_CNSTR_CONTACT_ELLIPTIC) {
      const rl_contact *con = d->contact + d->efc_id[i];
      int dim = con->dim;
      const real *fr = con->friction;
      real mu = con->mu, UU = 0, UV = 0, VV = 0;
      if (c->signorini) {
        for (int j = 1; j < dim; j++) {
          real U = Jaref[j] * fr[j - 1], V = Jv[j] * fr[j - 1];
          UU += U * U;
          UV += U * V;
          VV += V * V;
        }
        real *t = q + 3;
        t[0] = UU;
        t[1] = UV;
        t[2] = VV;
        t[3] = disc_k(d, con, i);
        t[4] = c->latch[i];
      } else {
        for (int j = 1; j < dim; j++) {
          real DJj = D[j] * Jaref[j];
          q[0] += Jaref[j] * DJj;
          q[1] += Jv[j] * DJj;
          q[2] += Jv[j] * D[j] * Jv[j];
        }
        real U0 = Jaref[0] * mu, V0 = Jv[0] * mu;
        for (int j = 1; j < dim; j++) {
          real U = Jaref[j] * fr[j - 1], V = Jv[j] * fr[j - 1];
          UU += U * U;
          UV += U * V;
          VV += V * V;
        }
        q[3] = U0;
        q[4] = V0;
        q[5] = UU;
        q[6] = UV;
        q[7] = VV;
        q[8] = D[0] / (mu * mu * (1 + mu * mu));
      }
      q[0] *= (real)0.5;
      q[2] *= (real)0.5;
      i += dim - 1;
      continue;
    }
    q[0] *= (real)0.5;
    q[2] *= (real)0.5;
  }
}

/* The change of the cost along the line, φ(α) − φ(0), summed term by term so that no term's value at 0 is
   subtracted from its value at α when both lie on the same piece (RL_LINE_COST_CHANGE, f32):
     a quadratic piece q₀ + q₁t + q₂t² (Gauss, equality rows, active rows, a cone's bottom zone) changes by
       α·(q₁ + α·q₂);
     a friction-loss row on one linear side by ±f·Jv·α;
     an elliptic cone's middle zone ½Dm(N − μT)² by ½Dm·Δ·S, Δ = α·V₀ − μ(T_α − T₀), S = (N_α − μT_α) + (N₀ − μT₀),
       with T_α − T₀ = α(2UV + α·VV)/(T_α + T₀);
     a signorini friction disc by ½k·α(2UV + α·VV) (quadratic zone) or b(T_α − T₀) (linear zone);
   a term that changes piece adds its value at α minus its value at 0.  φ itself is a sum of terms as large as
   ½D·jar² of a row far outside its constraint (2e10 on a Panda-class arm at a random state, where float resolves
   2048), so the difference of two whole costs is rounding noise wherever the step's gain is small against them;
   the change itself is exact to rounding of its own size.  Zone rules and coefficients: ls_prepare, ls_eval. */
static real quad_at(const real *q, real t) { return q[0] + t * (q[1] + t * q[2]); }

/* a quadratic piece's change from 0 to α when both ends lie on it: α·(q₁ + α·q₂) */
static real same_piece(const real *q, real alpha) { return alpha * (q[1] + alpha * q[2]); }

/* the change of a one-sided row (quadratic while x < 0, zero otherwise) from start to x = start + α·dir;
   0 for a row off at both ends (the caller then adds nothing) */
static real one_sided_change(const real *q, real start, real x, real alpha) {
  if (start < 0) return x < 0 ? same_piece(q, alpha) : -q[0];
  return x < 0 ? quad_at(q, alpha) : 0;
}

/* friction-loss row: 0 quadratic (|x| < R·f), 1 linear below, 2 linear above; *v its cost at x */
static int friction_piece(const rl_data *d, int i, const real *q, real x, real t, real *v) {
  real f = d->efc_frictionloss[i], Rf = d->efc_R[i] * f;
  if (-Rf < x && x < Rf) {
    *v = quad_at(q, t);
    return 0;
  }
  *v = x <= -Rf ? f * ((real)-0.5 * Rf - x) : f * (x - (real)0.5 * Rf);
  return x <= -Rf ? 1 : 2;
}

/* elliptic cone (convex): 0 top (no cost), 1 bottom (the rows' quadratic), 2 middle; *v its cost, *T the
   tangential norm at α */
static int cone_piece(const real *q, real mu, real alpha, real *v, real *T) {
  real U0 = q[3], V0 = q[4], UU = q[5], UV = q[6], VV = q[7], Dm = q[8];
  real N = U0 + alpha * V0, Tsqr = UU + alpha * (2 * UV + alpha * VV);
  *T = Tsqr > 0 ? rl_sqrt(Tsqr) : 0;
  *v = 0;
  if (Tsqr <= 0 ? N >= 0 : N >= mu * *T) return 0;
  if (Tsqr <= 0 || mu * N + *T <= 0) {
    *v = quad_at(q, alpha);
    return 1;
  }
  *v = (real)0.5 * Dm * (N - mu * *T) * (N - mu * *T);
  return 2;
}

/* signorini friction disc: 0 none (T = 0), 1 quadratic (k·T ≤ b), 2 linear; *v its cost, *T at α */
static int disc_piece(const real *t, real alpha, real *v, real *T) {
  real UU = t[0], UV = t[1], VV = t[2], k = t[3], b = t[4];
  real Tsqr = UU + alpha * (2 * UV + alpha * VV);
  *v = *T = 0;
  if (!(Tsqr > 0)) return 0;
  *T = rl_sqrt(Tsqr);
  if (k * *T <= b) {
    *v = (real)0.5 * k * Tsqr;
    return 1;
  }
  *v = b * *T - b * b / (2 * k);
  return 2;
}

/* a friction-loss row's change from start to x = start + α·dir: within one linear side ±f·Jv·α, on the quadratic
   piece α(q₁ + αq₂), across pieces its value at α minus its value at 0 */
static real friction_change(const rl_data *d, int i, const real *q, real start, real dir, real x, real alpha) {
  real v0, v1, f = d->efc_frictionloss[i];
  int z0 = friction_piece(d, i, q, start, 0, &v0), z1 = friction_piece(d, i, q, x, alpha, &v1);
  return z0 != z1 ? v1 - v0 : z0 == 0 ? same_piece(q, alpha) : z0 == 1 ? -f * dir * alpha : f * dir * alpha;
}

/* ch plus an elliptic contact's change from 0 to α (its block of dim rows starting at row i), added term by term:
   signorini: the normal row's one-sided change, then the friction disc's ½k(T_α² − T₀²) (quadratic zone) or
   b(T_α − T₀) = b(T_α² − T₀²)/(T_α + T₀) (linear zone);
   cone: the bottom zone's quadratic change, or the middle zone's ½Dm·Δ·S with Δ = α·V₀ − μ(T_α − T₀),
   S = (N_α − μT_α) + (N₀ − μT₀) */
static real add_elliptic_change(const solver_ctx *c, int i, real alpha, real ch) {
  const rl_data *d = c->d;
  const real *q = c->quad + 3 * i;
  real start = c->Jaref[i], x = start + alpha * c->Jv[i], v0, v1, T0, T1, dT;
  if (c->signorini) {
    if (start < 0 || x < 0) ch += one_sided_change(q, start, x, alpha);
    const real *t = q + 3;
    int z0 = disc_piece(t, 0, &v0, &T0), z1 = disc_piece(t, alpha, &v1, &T1);
    dT = alpha * (2 * t[1] + alpha * t[2]); /* T_α² − T₀² */
    return ch + (z0 != z1 ? v1 - v0 : z0 == 1 ? (real)0.5 * t[3] * dT : z0 == 2 ? t[4] * dT / (T1 + T0) : 0);
  }
  real mu = d->contact[d->efc_id[i]].mu;
  int z0 = cone_piece(q, mu, 0, &v0, &T0), z1 = cone_piece(q, mu, alpha, &v1, &T1);
  if (z0 != z1) return ch + (v1 - v0);
  if (z0 == 1) return ch + same_piece(q, alpha);
  if (z0 != 2) return ch;
  dT = alpha * (2 * q[6] + alpha * q[7]) / (T1 + T0);
  real N0 = q[3], N1 = q[3] + alpha * q[4];
  return ch + (real)0.5 * q[8] * (alpha * q[4] - mu * dT) * ((N1 - mu * T1) + (N0 - mu * T0));
}

/* the Gauss term's change α(q₁ + α·q₂) */
static real gauss_change(const solver_ctx *c, real alpha) { return alpha * (c->quadGauss[1] + alpha * c->quadGauss[2]); }

typedef struct ls_point {
  real alpha, cost, deriv[2];
} ls_point;

static void add3(real *a, const real *b) {
  a[0] += b[0];
  a[1] += b[1];
  a[2] += b[2];
}

/* cost(a + α·v) and its first two derivatives in α (CGeval).  With RL_LINE_COST_CHANGE the point's cost is the
   change φ(α) − φ(0) instead, summed term by term in row order in the same pass (same_piece, friction_change,
   one_sided_change, add_elliptic_change; the Gauss term first) */
static void ls_point_eval(const solver_ctx *c, ls_point *p) {
  const rl_data *d = c->d;
  int ne = d->ne, nf = d->nf;
  real cost = 0, alpha = p->alpha, der[2] = {0, 0}, qt[3], ch = RL_LINE_COST_CHANGE ? gauss_change(c, alpha) : 0;
  qt[0] = c->quadGauss[0];
  qt[1] = c->quadGauss[1];
  qt[2] = c->quadGauss[2];
  for (int i = 0; i < ne; i++) {
    add3(qt, c->quad + 3 * i);
    if (RL_LINE_COST_CHANGE) ch += same_piece(c->quad + 3 * i, alpha);
  }
  for (int i = ne; i < ne + nf; i++) {
    real start = c->Jaref[i], dir = c->Jv[i], x = start + alpha * dir;
    real f = d->efc_frictionloss[i], Rf = d->efc_R[i] * f;
    if (RL_LINE_COST_CHANGE) ch += friction_change(d, i, c->quad + 3 * i, start, dir, x, alpha);
    if (-Rf < x && x < Rf) {
      add3(qt, c->quad + 3 * i);
    } else if (x <= -Rf) {
      real qf[3] = {f * ((real)-0.5 * Rf - start), -f * dir, 0};
      add3(qt, qf);
    } else {
      real qf[3] = {f * ((real)-0.5 * Rf + start), f * dir, 0};
      add3(qt, qf);
    }
  }
  for (int i = ne + nf; i < c->nefc; i++) {
    if (d->efc_type[i] != RL_CNSTR_CONTACT_ELLIPTIC) {
      real start = c->Jaref[i], x = start + alpha * c->Jv[i];
      if (x < 0) add3(qt, c->quad + 3 * i);
      if (RL_LINE_COST_CHANGE && (start < 0 || x < 0)) ch += one_sided_change(c->quad + 3 * i, start, x, alpha);
      continue;
    }
    const rl_contact *con = d->contact + d->efc_id[i];
    const real *q = c->quad + 3 * i;
    int dim = con->dim;
    if (RL_LINE_COST_CHANGE) ch = add_elliptic_change(c, i, alpha, ch);
    if (c->signorini) {
      if (c->Jaref[i] + alpha * c->Jv[i] < 0) add3(qt, q);
      const real *t = q + 3;
      real UU = t[0], UV = t[1], VV = t[2], k = t[3], b = t[4];
      real Tsqr = UU + alpha * (2 * UV + alpha * VV);
      if (Tsqr > 0) {
        real T = rl_sqrt(Tsqr);
        if (k * T <= b) {
          cost += (real)0.5 * k * Tsqr;
          der[0] += k * (UV + alpha * VV);
          der[1] += k * VV;
        } else {
          real T1 = (UV + alpha * VV) / T, T2 = VV / T - (UV + alpha * VV) * T1 / (T * T);
          cost += b * T - b * b / (2 * k);
          der[0] += b * T1;
          der[1] += b * T2;
        }
      }
      i += dim - 1;
      continue;
    }
    real mu = con->mu, U0 = q[3], V0 = q[4], UU = q[5], UV = q[6], VV = q[7], Dm = q[8];
    real N = U0 + alpha * V0, Tsqr = UU + alpha * (2 * UV + alpha * VV);
    if (Tsqr <= 0) {
      if (N < 0) add3(qt, q);
    } else {
      real T = rl_sqrt(Tsqr);
      if (N >= mu * T) {
        /* top zone */
      } else if (mu * N + T <= 0) {
        add3(qt, q);
      } else {
        real N1 = V0, T1 = (UV + alpha * VV) / T, T2 = VV / T - (UV + alpha * VV) * T1 / (T * T);
        cost += (real)0.5 * Dm * (N - mu * T) * (N - mu * T);
        der[0] += Dm * (N - mu * T) * (N1 - mu * T1);
        der[1] += Dm * ((N1 - mu * T1) * (N1 - mu * T1) + (N - mu * T) * (-mu * T2));
      }
    }
    i += dim - 1;
  }
  cost += alpha * alpha * qt[2] + alpha * qt[1] + qt[0];
  der[0] += 2 * alpha * qt[2] + qt[1];
  der[1] += 2 * qt[2];
  if (der[1] <= 0) der[1] = MINVAL; /* not convex: SHOULD NOT OCCUR */
  p->cost = RL_LINE_COST_CHANGE ? ch : cost; /* compared only with other points of this line */
  p->deriv[0] = der[0];
  p->deriv[1] = der[1];
}

/* a line-search evaluation (ls_point_eval), counted */
static void ls_eval(solver_ctx *c, ls_point *p) {
  ls_point_eval(c, p);
  c->LSiter++;
}

/* φ(α) − φ(0) along the current line (read only with RL_LINE_COST_CHANGE, where ls_point_eval's cost is it) */
static real ls_change(const solver_ctx *c, real alpha) {
  ls_point p = {.alpha = alpha};
  ls_point_eval(c, &p);
  return p.cost;
}

/* move a bracket end to the best candidate with the same derivative sign (updateBracket) */
static int ls_bracket(solver_ctx *c, ls_point *p, const ls_point cand[3], ls_point *next) {
  int flag = 0;
  for (int i = 0; i < 3; i++) {
    if (p->deriv[0] < 0 && cand[i].deriv[0] < 0 && p->deriv[0] < cand[i].deriv[0]) {
      *p = cand[i];
      flag = 1;
    } else if (p->deriv[0] > 0 && cand[i].deriv[0] > 0 && p->deriv[0] > cand[i].deriv[0]) {
      *p = cand[i];
      flag = 2;
    }
  }
  if (flag) {
    next->alpha = p->alpha - p->deriv[0] / p->deriv[1];
    ls_eval(c, next);
  }
  return flag;
}

/* the line search's answer p: its slope |φ'(α)|/(‖v‖·scale) and its cost kept for the caller; returns α */
static real ls_take(solver_ctx *c, const ls_point *p, real slopescl) {
  c->LSslope = rl_fabs(p->deriv[0]) * slopescl;
  c->LScost = p->cost;
  return p->alpha;
}

/* Exact line search (CGsearch): Newton steps on the 1-D cost until |φ'| < gtol =
   tolerance·ls_tolerance·‖v‖·meaninertia·max(1,nv); one-sided Newton until the sign of φ' flips, then
   a bracketed search with Newton candidates and the midpoint.  Returns α (0: no improvement). */
static real ls_search(solver_ctx *c) {
  const rl_model *m = c->m;
  rl_data *d = c->d;
  ls_point p0, p1, p2, pmid, p1next, p2next;
  int maxiter = m->opt.ls_iterations;
  c->LSiter = 0;
  c->LSresult = 0;
  c->LSslope = 1;
  real snorm = rl_sqrt(dot(c->search, c->search, c->nv));
  c->LScost = 0;
  if (snorm < MINVAL) {
    c->LSresult = 1;
    return 0;
  }
  real gtol = m->opt.tolerance * m->opt.ls_tolerance * snorm * c->scale;
  real slopescl = 1 / (snorm * c->scale);
  ctx_mul_m(c, c->Mv, c->search);
  jac_mul(d, c->gnext, c->Jv, c->search);
  ls_prepare(c);
  p0.alpha = 0;
  ls_eval(c, &p0);
  p1.alpha = p0.alpha - p0.deriv[0] / p0.deriv[1];
  ls_eval(c, &p1);
  if (p0.cost < p1.cost) p1 = p0;
  if (rl_fabs(p1.deriv[0]) < gtol) {
    c->LSresult = p1.alpha == 0 ? 2 : 0;
    return ls_take(c, &p1, slopescl);
  }
  int dir = p1.deriv[0] < 0 ? 1 : -1, p2update = 0;
  while (p1.deriv[0] * dir <= -gtol && c->LSiter < maxiter) {
    p2 = p1;
    p2update = 1;
    p1.alpha -= p1.deriv[0] / p1.deriv[1];
    ls_eval(c, &p1);
    if (rl_fabs(p1.deriv[0]) < gtol) {
      return ls_take(c, &p1, slopescl);
    }
  }
  if (c->LSiter >= maxiter) {
    c->LSresult = 3;
    return ls_take(c, &p1, slopescl);
  }
  if (!p2update) {
    c->LSresult = 6;
    return ls_take(c, &p1, slopescl);
  }
  p2next = p1;
  p1next.alpha = p1.alpha - p1.deriv[0] / p1.deriv[1];
  ls_eval(c, &p1next);
  while (c->LSiter < maxiter) {
    pmid.alpha = (real)0.5 * (p1.alpha + p2.alpha);
    ls_eval(c, &pmid);
    ls_point cand[3] = {p1next, p2next, pmid};
    real best = 0;
    int bi = -1;
    for (int i = 0; i < 3; i++)
      if (rl_fabs(cand[i].deriv[0]) < gtol && (bi == -1 || cand[i].cost < best)) {
        best = cand[i].cost;
        bi = i;
      }
    if (bi >= 0) {
      return ls_take(c, &cand[bi], slopescl);
    }
    int b1 = ls_bracket(c, &p1, cand, &p1next);
    int b2 = ls_bracket(c, &p2, cand, &p2next);
    if (!b1 && !b2) {
      c->LSresult = pmid.cost < p0.cost ? 0 : 7;
      return ls_take(c, &pmid, slopescl);
    }
  }
  if (p1.cost <= p2.cost && p1.cost < p0.cost) {
    c->LSresult = 4;
    return ls_take(c, &p1, slopescl);
  }
  if (p2.cost <= p1.cost && p2.cost < p0.cost) {
    c->LSresult = 4;
    return ls_take(c, &p2, slopescl);
  }
  c->LSresult = 5;
  return 0;
}

/* ---------------------------------------------------------------- warm start */

/* ------------------------------------------- signorini: the coupled Newton step */

/* r-th row of J times v */
static real row_dot(const rl_data *d, int r, const real *v) {
  const real *J = d->efc_J + d->efc_J_rowadr[r];
  const int *col = d->efc_J_colind + d->efc_J_rowadr[r];
  real s = 0;
  for (int k = 0; k < d->efc_J_rownnz[r]; k++) s += J[k] * v[col[k]];
  return s;
}

/* Sliding contact (friction rows in the CONE state, normal row active: jar₀ < 0) with its latch at the
   normal force b = −D₀·jar₀: the friction force −f_j = fric_j·b·u_j/‖u‖ depends on jar₀ through b, so the
   Jacobian of the residual g(a) = Ma − qfrc_smooth − Jᵀf(Ja − aref) is not H (the symmetric Hessian with
   the latch held) but H + Σ_c U_c·J₀ᵀ with U_c = Σ_j k_j·J_jᵀ, k_j = ∂(−f_j)/∂jar₀ = −D₀·fric_j·u_j/‖u‖.
   Writes U_c (nv each) and the normal row of each into rows; returns their count, −1 above max. */
static int coupled_columns(solver_ctx *c, real *U, int *rows, int max) {
  rl_data *d = c->d;
  int n = 0, nv = c->nv;
  for (int i = d->ne + d->nf; i < d->nefc; i++) {
    if (d->efc_type[i] != RL_CNSTR_CONTACT_ELLIPTIC) continue;
    const rl_contact *con = d->contact + d->efc_id[i];
    int dim = con->dim;
    if (dim > 1 && c->Jaref[i] < 0 && d->efc_state[i + 1] == RL_CNSTRSTATE_CONE) {
      if (n == max) return -1;
      real u[6], T = 0, *col = U + (size_t)n * (size_t)nv;
      for (int j = 1; j < dim; j++) {
        u[j] = c->Jaref[i + j] * con->friction[j - 1];
        T += u[j] * u[j];
      }
      T = rl_sqrt(T);
      memset(col, 0, sizeof(real) * (size_t)nv);
      for (int j = 1; j < dim; j++) {
        real k = -d->efc_D[i] * con->friction[j - 1] * u[j] / T;
        const real *J = d->efc_J + d->efc_J_rowadr[i + j];
        const int *ci = d->efc_J_colind + d->efc_J_rowadr[i + j];
        for (int q = 0; q < d->efc_J_rownnz[i + j]; q++) col[ci[q]] += k * J[q];
      }
      rows[n++] = i;
    }
    i += dim - 1;
  }
  return n;
}

/* x ← H⁻¹x with the current factorization, no fallback (it would take arena room): 0, or −1 refused */
static int hessian_solve_plain(solver_ctx *c, real *x) {
  if (c->kind == RL_FACTOR_SPARSE) return rl_sparse_solve(c->d, x) ? -1 : 0;
  if (c->kind == RL_FACTOR_ABA) rl_aba_solve(&c->aba, c->m, c->d, x);
  else if (c->kind == RL_FACTOR_TREE) rl_tfactor_solve(cone_factor(c) ? &c->Tc : &c->T, x);
  else rl_hfactor_solve(cone_factor(c) ? &c->Hc : &c->H, x);
  return 0;
}

/* A·x = b (n×n row-major, b overwritten by x) by Gaussian elimination with partial pivoting; −1 on a
   pivot below RL_TINY·max|A| */
static int solve_small(real *A, real *b, int n) {
  real amax = 0;
  for (int i = 0; i < n * n; i++) amax = rl_fabs(A[i]) > amax ? rl_fabs(A[i]) : amax;
  for (int k = 0; k < n; k++) {
    int p = k;
    for (int i = k + 1; i < n; i++)
      if (rl_fabs(A[i * n + k]) > rl_fabs(A[p * n + k])) p = i;
    if (!(rl_fabs(A[p * n + k]) > RL_TINY * amax)) return -1;
    if (p != k) {
      for (int j = 0; j < n; j++) {
        real t = A[k * n + j];
        A[k * n + j] = A[p * n + j];
        A[p * n + j] = t;
      }
      real t = b[k];
      b[k] = b[p];
      b[p] = t;
    }
    for (int i = k + 1; i < n; i++) {
      real f = A[i * n + k] / A[k * n + k];
      for (int j = k; j < n; j++) A[i * n + j] -= f * A[k * n + j];
      b[i] -= f * b[k];
    }
  }
  for (int k = n - 1; k >= 0; k--) {
    for (int j = k + 1; j < n; j++) b[k] -= A[k * n + j] * b[j];
    b[k] /= A[k * n + k];
  }
  return 0;
}

/* The coupled Newton direction x = −(H + U·Vᵀ)⁻¹g (V: the sliding contacts' normal rows of J) by the
   Woodbury identity from H's factor: y = H⁻¹g, Z = H⁻¹U, (I + VᵀZ)·w = Vᵀy, x = −(y − Z·w).
   0, or −1 when refused (no room, a refused solve, a singular I + VᵀZ). */
static int coupled_direction(solver_ctx *c, real *x) {
  rl_data *d = c->d;
  int nv = c->nv;
  real *U = take(d, (size_t)RL_COUPLED_MAX * (size_t)nv), *S = take(d, RL_COUPLED_MAX * RL_COUPLED_MAX);
  real *w = take(d, RL_COUPLED_MAX);
  int *rows = (int *)(void *)take(d, RL_COUPLED_MAX);
  if (!rows) return -1;
  int n = coupled_columns(c, U, rows, RL_COUPLED_MAX);
  if (n < 0) return -1;
  memcpy(x, c->Mgrad, sizeof(real) * (size_t)nv);
  for (int a = 0; a < n; a++)
    if (hessian_solve_plain(c, U + (size_t)a * (size_t)nv)) return -1;
  for (int a = 0; a < n; a++) {
    for (int b = 0; b < n; b++) S[a * n + b] = (a == b) + row_dot(d, rows[a], U + (size_t)b * (size_t)nv);
    w[a] = row_dot(d, rows[a], x);
  }
  if (n && solve_small(S, w, n)) return -1;
  for (int b = 0; b < n; b++)
    for (int i = 0; i < nv; i++) x[i] -= U[(size_t)b * (size_t)nv + i] * w[b];
  for (int i = 0; i < nv; i++) x[i] = -x[i];
  return 0;
}

/* Whether the step to jar stays (nearly) on the piece of the residual where the coupled Newton direction
   was linearised: the normal rows that change between active (jar₀ < 0) and inactive are at most
   1/RL_COUPLED_FLIPS of the elliptic contacts.  A step that opens or closes more has left the region where
   the linearisation holds even when it lowers ‖g‖ (measured on a 148-contact box pyramid landing: such a
   step took that solve to 8 iterations where MuJoCo took 3; refused, to 4). */
static int same_contact_set(const solver_ctx *c, const real *jar) {
  const rl_data *d = c->d;
  int flips = 0, ncon = 0;
  for (int i = d->ne + d->nf; i < d->nefc; i++) {
    if (d->efc_type[i] != RL_CNSTR_CONTACT_ELLIPTIC) continue;
    flips += (c->Jaref[i] < 0) != (jar[i] < 0);
    ncon++;
    i += d->contact[d->efc_id[i]].dim - 1;
  }
  return flips * RL_COUPLED_FLIPS <= ncon;
}

/* The coupled step a + x (a Newton step on the residual of the Coulomb equations), tried at every iteration:
   taken when its residual φ(1) = ‖g(a + x)‖², each latch at its normal force there, is at most φ(0)/4
   (φ(0) = ‖g(a)‖², the latches as held)
   — a quarter: a full step that only just lowers φ is usually one that changed stick/slip states and is
   followed by a cycle — and it keeps the contact set (same_contact_set).  Shorter steps α·x judged by φ
   are not tried (measured: backtracking α = ½ … 2⁻⁵ raised the iterations).  Taken: search = x,
   Mv = M·x, Jv = J·x for the caller's update; returns 1.  Else 0, and the caller runs the exact line
   search on the latch-held convex cost, along x when x keeps the contact set and is downhill for that
   cost (gᵀx < 0; search = x), else along −H⁻¹g (search untouched). */
static int coupled_step(solver_ctx *c) {
  rl_data *d = c->d;
  int nv = c->nv, nefc = c->nefc, ok = 0;
  size_t mark = rl_arena_mark(d);
  real *x = take(d, (size_t)nv), *jar = take(d, (size_t)nefc), *lt = take(d, (size_t)nefc);
  real *gp = take(d, (size_t)nefc), *force = take(d, (size_t)nefc), *qf = take(d, (size_t)nv);
  int *state = (int *)(void *)take(d, (size_t)nefc);
  if (state && !coupled_direction(c, x)) {
    ctx_mul_m(c, c->Mv, x);
    jac_mul(d, c->gnext, c->Jv, x);
    real phi0 = dot(c->grad, c->grad, nv), phi = 0;
    for (int i = 0; i < nefc; i++) jar[i] = c->Jaref[i] + c->Jv[i];
    latch_init(d, jar, lt, gp);
    constraint_update(c->m, d, jar, lt, force, state, NULL, 0);
    jac_tmul(c->m, d, c->gnext, qf, force);
    for (int i = 0; i < nv; i++) {
      real g = c->Ma[i] + c->Mv[i] - d->qfrc_smooth[i] - qf[i];
      phi += g * g;
    }
    int same = same_contact_set(c, jar);
    ok = phi <= (real)0.25 * phi0 && same;
    /* refused on the same contact set but downhill for the latch-held cost (gᵀx < 0): the caller's line
       search runs along x instead of −H⁻¹g */
    if (ok || (same && dot(c->grad, x, nv) < 0)) memcpy(c->search, x, sizeof(real) * (size_t)nv);
  }
  rl_arena_release(d, mark);
  return ok;
}

/* cost of a candidate a: s(J·a − aref) + ½(a − a₀)ᵀM(a − a₀) (latches from the candidate itself); the Gauss
   term is skipped for a = a₀ itself (gauss = 0: no M·0 is formed) */
static real candidate_cost(solver_ctx *c, const real *a, int gauss, real *jar, real *force, int *state, real *tmp) {
  rl_data *d = c->d;
  jac_mul(d, c->gnext, jar, a);
  for (int i = 0; i < c->nefc; i++) jar[i] -= d->efc_aref[i];
  if (c->signorini) latch_init(d, jar, c->latch, c->gapprev);
  real s = constraint_update(c->m, d, jar, c->signorini ? c->latch : NULL, force, state, NULL, 0);
  if (!gauss) return s;
  for (int i = 0; i < c->nv; i++) tmp[c->nv + i] = a[i] - d->qacc_smooth[i];
  ctx_mul_m(c, tmp, tmp + c->nv);
  return s + (real)0.5 * dot(tmp, tmp + c->nv, c->nv);
}

/* qacc ← the cheaper of the warm start (d->qacc on entry) and qacc_smooth (as mj_fwdConstraint).  The warm
   start is costed last, so when it is kept c->Jaref already holds J·qacc − aref: returns 1 then, else 0. */
static int warm_start(solver_ctx *c) {
  rl_data *d = c->d;
  int nv = c->nv, ok = !(c->m->opt.disableflags & RL_DSBL_WARMSTART);
  for (int i = 0; i < nv && ok; i++)
    if (!rl_isfinite(d->qacc[i])) ok = 0;
  if (ok) {
    size_t mark = rl_arena_mark(d);
    real *tmp = take(d, 2 * (size_t)nv);
    real cs = candidate_cost(c, d->qacc_smooth, 0, c->Jaref, d->efc_force, d->efc_state, tmp);
    real cw = candidate_cost(c, d->qacc, 1, c->Jaref, d->efc_force, d->efc_state, tmp);
    if (cw > cs) ok = 0;
    rl_arena_release(d, mark);
  }
  if (!ok) memcpy(d->qacc, d->qacc_smooth, sizeof(real) * (size_t)nv);
  return ok;
}

/* ------------------------------------------------------------------ driver */

static void save_stats(rl_data *d, int iter, real improvement, real gradient, real slope, int nactive, int nchange,
                       int neval, int nupdate) {
  if (iter >= RL_NSOLVER) return;
  rl_solver_stat *s = d->solver + iter;
  s->improvement = improvement;
  s->gradient = gradient;
  s->lineslope = slope;
  s->nactive = nactive;
  s->nchange = nchange;
  s->neval = neval;
  s->nupdate = nupdate;
}

/* the recursive path's solver workspace: Newton's ABA with the rows (−2 when a row is not
   tree-expressible), CG's M⁻¹; and room for rl_mul_m_recursive on top of the deepest take (warm start) */
static int ctx_alloc_rec(solver_ctx *c, const rl_model *m, rl_data *d) {
  size_t mark = rl_arena_mark(d);
  if (!take(d, 12 * (size_t)m->nbody + 2 * (size_t)m->nv + 64)) return -1;
  rl_arena_release(d, mark);
  if (!c->newton) {
    if (rl_aba_init_m(&c->minv, m, d)) return -1;
    rl_aba_prepare_m(&c->minv, m, d, 0, NULL);
    return 0;
  }
  c->kind = RL_FACTOR_ABA;
  int bad = rl_aba_init_recursive(&c->aba, m, d);
  return bad == 0 ? 0 : bad < 0 ? -1 : -2;
}

/* the two envelope factors (H and H with cone blocks) of the dense or skyline kind, from the arena */
static int ctx_take_envelope(solver_ctx *c, int kind) {
  envelope(c->m, c->d, c->first, kind == RL_FACTOR_DENSE);
  size_t sz = rl_hfactor_layout(&c->H, c->nv, c->first, c->adrH);
  rl_hfactor_layout(&c->Hc, c->nv, c->first, c->adrC);
  c->H.L = take(c->d, sz);
  c->Hc.L = take(c->d, sz);
  if (!c->Hc.L) return -1;
  if (kind == RL_FACTOR_SKYLINE) {
    /* column lists for the rank-1 updates (a dense factor's columns are full: no lists); a forced skyline
       wider than the arena's room for them updates without */
    size_t mark = rl_arena_mark(c->d);
    int *cadr = (int *)(void *)take(c->d, (size_t)c->nv + 1), *crow = (int *)(void *)take(c->d, sz);
    if (crow) {
      rl_hfactor_columns(&c->H, cadr, crow);
      c->Hc.cadr = c->H.cadr;
      c->Hc.crow = c->H.crow;
    } else {
      rl_arena_release(c->d, mark);
    }
  }
  c->kind = kind;
  return 0;
}

/* the two tree factors (H and H with cone blocks) in the layout of c->vt, from the arena */
static int ctx_take_tree(solver_ctx *c) {
  const rl_model *m = c->m;
  const vtree *vt = &c->vt;
  size_t sz = (size_t)vt->adr[m->nv];
  rl_tfactor t = {.n = m->nv, .parent = vt->parent, .adr = vt->adr, .order = vt->order, .L = NULL, .inv = NULL};
  if (vt->merged) { /* the re-hung tree's columns (else qM's layout: M_colind) */
    int *col = (int *)(void *)take(c->d, (sz * sizeof(int) + sizeof(real) - 1) / sizeof(real));
    if (!col) return -1;
    for (int i = 0; i < m->nv; i++)
      for (int j = i, a = vt->adr[i]; j >= 0; j = vt->parent[j]) col[a++] = j;
    t.col = col;
  } else {
    t.col = m->M_colind;
  }
  c->T = c->Tc = t;
  c->T.L = take(c->d, sz);
  c->Tc.L = take(c->d, sz);
  c->T.inv = take(c->d, (size_t)m->nv);
  c->Tc.inv = take(c->d, (size_t)m->nv);
  if (!c->Tc.inv) return -1;
  c->kind = RL_FACTOR_TREE;
  return 0;
}

static int ctx_alloc(solver_ctx *c, const rl_model *m, rl_data *d, int newton, const rl_solver_observer *obs, int rec) {
  memset(c, 0, sizeof *c);
  c->rec = rec;
  int nv = m->nv, nefc = d->nefc;
  c->m = m;
  c->d = d;
  c->nv = nv;
  c->nefc = nefc;
  c->newton = newton;
  c->signorini = newton && rl_solver_resolution(m) == RL_RES_SIGNORINI;
  c->scale = rl_solver_meaninertia(m) * (nv > 1 ? nv : 1);
  c->obs = obs;
  size_t n = (size_t)nv, e = (size_t)nefc;
  c->Jaref = take(d, e);
  c->Jv = take(d, e);
  c->quad = take(d, 3 * e);
  c->coneH = take(d, 6 * e);
  c->latch = take(d, e);
  c->gapprev = take(d, e);
  c->oldstate = (int *)(void *)take(d, e);
  c->gnext = (int *)(void *)take(d, e);
  c->Ma = take(d, n);
  c->Mv = take(d, n);
  c->grad = take(d, n);
  c->Mgrad = take(d, n);
  c->search = take(d, n);
  c->vec = take(d, n);
  c->blockw = take(d, n);
  c->blockcol = (int *)(void *)take(d, n);
  c->obase = (int *)(void *)take(d, n);
  c->odep = (int *)(void *)take(d, n);
  c->local = take(d, 36);
  if (!c->local) return -1;
  memset(c->vec, 0, sizeof(real) * n); /* the tree updates and add_cone_block leave it zero */
  row_groups(d, c->gnext);
  if (rec) return ctx_alloc_rec(c, m, d);
  if (newton) {
    c->first = (int *)(void *)take(d, n);
    c->adrH = (int *)(void *)take(d, 2 * n + 1); /* adr + colend */
    c->adrC = (int *)(void *)take(d, 2 * n + 1);
    if (!c->adrC) return -1;
    if (vtree_take(d, &c->vt, nv, nefc)) return -1;
    int kind = c->kind = choose_kind(m, d, c->first, &c->aba, &c->vt);
    if (kind == RL_FACTOR_ABA || kind == RL_FACTOR_SPARSE) return 0;
    if (kind == RL_FACTOR_TREE) return ctx_take_tree(c);
    return ctx_take_envelope(c, kind);
  }
  return 0;
}

/* The rounding the gradient g = Ma − qfrc_smooth − qfrc_constraint carries, in the stopping test's units:
   ε·‖|Ma| + |qfrc_smooth| + |qfrc_constraint|‖₂ / scale (each term rounded once, summed component by component;
   the norm is taken by update_grad).  Below a few times that, g is rounding noise: a step along it gains only the
   noise's ½gᵀH⁻¹g. */
static real gradient_rounding(const solver_ctx *c) { return RL_EPS * c->gterms / c->scale; }

/* Newton: an improvement within RL_COST_ULPS·RL_EPS·|cost| is rounding, not progress, and counts as none
   (improvement 0) unless tolerance is 0 (run the whole budget).  In float the gradient test cannot reach the default
   tolerance 1e-8, so the solve stops on the improvement test; near the optimum the line search then follows the
   rounding of the cost: slider_ball.xml (f32, verify seed 7) took steps α = 4.97, 1.01, 4.97, … each lowering the
   computed cost (0.9017) by one or two units in its last place, to the 100-iteration limit, where MuJoCo took 3.
   In double the bound is 1e-15·|cost|, far below tolerance·scale.  Not for CG, whose steps near the optimum lower
   the cost by less than that while still reducing the error (fp32 study, microduck cg: the f32 one-step error
   1.2e-4 rose to 3.9e-4 with the bound). */
#define RL_COST_ULPS 4

/* Likewise (Newton) a gradient g = Ma − qfrc_smooth − qfrc_constraint within the rounding of its terms,
   ‖RL_GRAD_ULPS·RL_EPS·(|Ma| + |qfrc_smooth| + |qfrc_constraint|)‖/scale, is zero to the working precision.
   In float a full Newton step with no row changing state leaves ‖g‖/scale at ~3e-7 on the humanoid (the terms'
   rounding), above the tolerance 1e-8, and the solve took one more iteration whose line search moved the cost by
   nothing (2.38 iterations per step over 400 steps, 1.52 in double); in double the bound is ~1e-15 of the forces. */
#define RL_GRAD_ULPS 8

/* 1 when the step α·v moves no component of q̈ by more than one unit of rounding of ‖q̈‖∞:
   max_i |α·v_i| ≤ ε·max_i |q̈_i| (a NaN component is passed over, as fmax does) */
static int rounding_only_step(int nv, real alpha, const real *v, const real *qacc) {
  real stepmax = 0, accmax = 0;
  for (int i = 0; i < nv; i++) {
    real s = rl_fabs(alpha * v[i]), a = rl_fabs(qacc[i]);
    if (s > stepmax) stepmax = s;
    if (a > accmax) accmax = a;
  }
  return stepmax <= RL_EPS * accmax;
}

/* Newton (newton = 1) or CG (0): mj_solCGNewton with rigidlab's signorini latch; rec: the recursive
   path (returns −1, d untouched, when its workspace or rows refuse it) */
static int solve_primal(const rl_model *m, rl_data *d, int newton, const rl_solver_observer *obs, int rec) {
  size_t mark = rl_arena_mark(d);
  solver_ctx c;
  int nv = m->nv, nefc = d->nefc, maxiter = m->opt.iterations;
  int fail = ctx_alloc(&c, m, d, newton, obs, rec);
  if (fail && rec) {
    rl_arena_release(d, mark);
    return -1;
  }
  d->solver_iter = 0;
  d->solver_converged = 0;
  if (fail) {
    /* arena too small (cannot happen when sized by rl_solver_arena): unconstrained answer, flagged */
    rl_arena_release(d, mark);
    memcpy(d->qacc, d->qacc_smooth, sizeof(real) * (size_t)nv);
    memset(d->qfrc_constraint, 0, sizeof(real) * (size_t)nv);
    d->warning[RL_WARN_BADQACC]++;
    return 0;
  }
  real *gradold = take(d, (size_t)nv), *Mgradold = take(d, (size_t)nv), *Mgraddif = take(d, (size_t)nv);
  int jar_done = warm_start(&c);
  ctx_mul_m(&c, c.Ma, d->qacc);
  if (!jar_done) {
    jac_mul(d, c.gnext, c.Jaref, d->qacc);
    for (int i = 0; i < nefc; i++) c.Jaref[i] -= d->efc_aref[i];
  }
  if (c.signorini) latch_init(d, c.Jaref, c.latch, c.gapprev);
  update_constraint(&c);
  if (newton) hessian_direct(&c);
  update_grad(&c);
  update_mgrad(&c);
  for (int i = 0; i < nv; i++) c.search[i] = -c.Mgrad[i];
  real tol = m->opt.tolerance, gaptol = tol > 10 * RL_EPS ? tol : 10 * RL_EPS;
  int iter = 0;
  while (iter < maxiter) {
    int coupled = c.signorini && coupled_step(&c);
    real alpha = coupled ? 1 : ls_search(&c);
    if (alpha == 0 && !c.signorini) {
      d->solver_converged = c.LSresult == 1 || c.LSresult == 2;
      break;
    }
    /* CG in f32 (RL_LINE_COST_CHANGE): the step's improvement is its cost change along the line (ls_change, taken
       before the line moves) instead of the difference of two whole costs, and two more stops for float: a step
       that moves q̈ by less than one unit of rounding of ‖q̈‖∞, and a gradient within 4× its own rounding
       (gradient_rounding); either leaves only rounding noise to chase.  Newton keeps MuJoCo's test: its step lands
       at the optimum when the active set holds, and reading the exact change it chased the noise of its gradient
       for up to 8 iterations beyond MuJoCo's (light_arm.xml, fourbar.xml) */
    int line = RL_LINE_COST_CHANGE && !newton;
    real change = !line ? 0 : coupled ? ls_change(&c, alpha) : c.LScost;
    int rounding_step = line && rounding_only_step(nv, alpha, c.search, d->qacc);
    for (int i = 0; i < nv; i++) d->qacc[i] += alpha * c.search[i];
    for (int i = 0; i < nv; i++) c.Ma[i] += alpha * c.Mv[i];
    for (int i = 0; i < nefc; i++) c.Jaref[i] += alpha * c.Jv[i];
    if (!newton) {
      memcpy(gradold, c.grad, sizeof(real) * (size_t)nv);
      memcpy(Mgradold, c.Mgrad, sizeof(real) * (size_t)nv);
    }
    memcpy(c.oldstate, d->efc_state, sizeof(int) * (size_t)nefc);
    real oldcost = c.cost, gap = 0;
    int exact = 1;
    update_constraint(&c);
    real improvement = (line ? -change : oldcost - c.cost) / c.scale;
    if (newton && tol > 0 && improvement * c.scale <= RL_COST_ULPS * RL_EPS * rl_fabs(oldcost)) improvement = 0;
    if (c.signorini) {
      /* latch step at the new iterate, then the cost it defines (the factorization is rebuilt) */
      if (coupled) memset(c.gapprev, 0, sizeof(real) * (size_t)nefc);
      gap = latch_step(d, c.Jaref, c.latch, c.gapprev, &exact);
      update_constraint(&c);
    }
    update_grad(&c);
    int nchange = 0;
    for (int i = 0; i < nefc; i++) nchange += d->efc_state[i] != c.oldstate[i];
    real gradient = rl_sqrt(dot(c.grad, c.grad, nv)) / c.scale;
    /* Newton: a gradient within RL_GRAD_ULPS roundings is zero; CG in float: within 4 (noise_gradient) */
    real gtol = newton && tol > 0 ? rl_fmax(tol, RL_GRAD_ULPS * gradient_rounding(&c)) : tol;
    int noise_gradient = line && gradient <= 4 * gradient_rounding(&c);
    /* signorini: with every latch at its normal force (exact), g is the residual of the Coulomb equations */
    int converged = ((improvement < tol || gradient < gtol || rounding_step || noise_gradient) && gap < gaptol) ||
                    (c.signorini && exact && gradient < gtol);
    /* the next direction's factorization and solve, unless this was the last iteration */
    c.nupdate = 0;
    if (!converged && iter + 1 < maxiter) {
      if (c.signorini) hessian_direct(&c);
      else if (newton) hessian_incremental(&c, c.oldstate);
      update_mgrad(&c);
    }
    save_stats(d, iter, improvement, gradient, c.LSslope, c.nactive, nchange, c.LSiter, c.nupdate);
    iter++;
    if (converged) {
      d->solver_converged = 1;
      break;
    }
    if (newton) {
      for (int i = 0; i < nv; i++) c.search[i] = -c.Mgrad[i];
    } else {
      /* Polak–Ribière: β = gᵀ(M⁻¹g − M⁻¹g_old) / g_oldᵀM⁻¹g_old, restart when β < 0 */
      for (int i = 0; i < nv; i++) Mgraddif[i] = c.Mgrad[i] - Mgradold[i];
      real den = dot(gradold, Mgradold, nv);
      real beta = dot(c.grad, Mgraddif, nv) / (den > MINVAL ? den : MINVAL);
      if (beta < 0) beta = 0;
      for (int i = 0; i < nv; i++) c.search[i] = -c.Mgrad[i] + beta * c.search[i];
    }
  }
  d->solver_iter = iter;
  rl_arena_release(d, mark);
  return 0;
}

/* no rows: qacc = qacc_smooth */
static void solve_unconstrained(const rl_model *m, rl_data *d) {
  memcpy(d->qacc, d->qacc_smooth, sizeof(real) * (size_t)m->nv);
  memset(d->qfrc_constraint, 0, sizeof(real) * (size_t)m->nv);
  d->solver_iter = 0;
  d->solver_converged = 1;
}

void rl_constraint_solve_observed(const rl_model *m, rl_data *d, const rl_solver_observer *obs) {
  if (d->nefc == 0) {
    solve_unconstrained(m, d);
    return;
  }
  if (m->opt.solver == RL_SOLVER_PGS)
    rl_solve_pgs(m, d);
  else
    solve_primal(m, d, m->opt.solver != RL_SOLVER_CG, obs, 0);
  if (m->opt.noslip_iterations > 0) rl_solve_noslip(m, d);
}

int rl_constraint_solve_recursive(const rl_model *m, rl_data *d) {
  if (d->nefc == 0) {
    solve_unconstrained(m, d);
    return 0;
  }
  if (m->opt.solver == RL_SOLVER_PGS || m->opt.noslip_iterations > 0) return -1;
  return solve_primal(m, d, m->opt.solver != RL_SOLVER_CG, NULL, 1);
}

/* The recursive path pays when the sparse LᵀDL's work W = Σ_k len_k² (len_k: dof k's row of qM, itself
   and its ancestors; the rows are stored consecutively from dof_Madr) exceeds RL_REC_WORK·nv: forming
   M (≈ 6·nM), factoring it (≈ W/2 multiply-adds) and the O(nM) products against the recursions' O(nv)
   with 6×6 blocks (measurements in forward.c's file comment). */
#define RL_REC_WORK 150.0
int rl_recursive_pays(const rl_model *m) { return tree_work(m) > RL_REC_WORK * m->nv; }

void rl_constraint_solve(const rl_model *m, rl_data *d) { rl_constraint_solve_observed(m, d, NULL); }

/* ------------------------------------------------------ reference helpers */

real rl_solver_cost(const rl_model *m, rl_data *d, const real *qacc, const real *latch) {
  size_t mark = rl_arena_mark(d);
  size_t e = (size_t)d->nefc, n = (size_t)m->nv;
  real *jar = take(d, e), *force = take(d, e), *tmp = take(d, 2 * n);
  int *state = (int *)(void *)take(d, e);
  jac_mul(d, NULL, jar, qacc);
  for (int i = 0; i < d->nefc; i++) jar[i] -= d->efc_aref[i];
  real s = constraint_update(m, d, jar, latch, force, state, NULL, 0);
  for (int i = 0; i < m->nv; i++) tmp[n + i] = qacc[i] - d->qacc_smooth[i];
  rl_mul_m(m, d, tmp, tmp + n);
  s += (real)0.5 * dot(tmp, tmp + n, m->nv);
  rl_arena_release(d, mark);
  return s;
}

void rl_solver_hessian_dense(const rl_model *m, rl_data *d, const real *jar, const real *latch, real *H) {
  size_t mark = rl_arena_mark(d);
  size_t e = (size_t)d->nefc;
  int nv = m->nv;
  real *force = take(d, e), *coneH = take(d, 6 * e);
  int *state = (int *)(void *)take(d, e);
  constraint_update(m, d, jar, latch, force, state, coneH, 1);
  rl_full_m(m, d, H);
  for (int r = 0; r < d->nefc; r++) {
    int na = d->efc_J_rownnz[r];
    const real *Ja = d->efc_J + d->efc_J_rowadr[r];
    const int *ca = d->efc_J_colind + d->efc_J_rowadr[r];
    if (state[r] == RL_CNSTRSTATE_QUADRATIC) {
      for (int p = 0; p < na; p++)
        for (int q = 0; q < na; q++) H[ca[p] * nv + ca[q]] += d->efc_D[r] * Ja[p] * Ja[q];
    } else if (state[r] == RL_CNSTRSTATE_CONE) {
      int n, s = cone_block(d, r, latch != NULL, &n);
      const real *Hc = coneH + 6 * s;
      for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
          int ra = s + a, rb = s + b;
          const real *JA = d->efc_J + d->efc_J_rowadr[ra], *JB = d->efc_J + d->efc_J_rowadr[rb];
          const int *cA = d->efc_J_colind + d->efc_J_rowadr[ra], *cB = d->efc_J_colind + d->efc_J_rowadr[rb];
          for (int p = 0; p < d->efc_J_rownnz[ra]; p++)
            for (int q = 0; q < d->efc_J_rownnz[rb]; q++) H[cA[p] * nv + cB[q]] += JA[p] * Hc[a * n + b] * JB[q];
        }
      r += n - 1;
    }
  }
  rl_arena_release(d, mark);
}
