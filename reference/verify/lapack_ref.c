/* lapack_ref.c — LAPACK references for the soft-constraint problem (see lapack_ref.h).
 *
 * Written independently of engine/solver.c: double arrays, the cone Hessian from ∇φ∇φᵀ + φ∇²φ (φ = N − μT)
 * rather than MuJoCo's expanded form, H = M + Jᵀ·C·J assembled with CHOLMOD's sparse products (M, J and the
 * block-diagonal C kept sparse: a 3000-dof model with 4000 contact rows would need 400 MB dense), Newton
 * systems by LAPACKE_dposv on H made dense up to RL_REF_DENSE_NV dofs and by CHOLMOD's supernodal Cholesky
 * beyond, and a derivative root-finder as line search. */
#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <suitesparse/cholmod.h>
#include "lapack_ref.h"

/* LAPACK's 1-norm estimator (reverse communication; the one dpocon uses), for κ₁ of a CHOLMOD factor */
void dlacn2_(const int *n, double *v, double *x, int *isgn, double *est, int *kase, int *isave);

/* H is made dense and solved by LAPACKE_dposv up to this many dofs (rl_ref_problem.dense_max_nv), by CHOLMOD
   beyond: at 400 dofs a dense Cholesky is ~2e7 flops, while the dense H of MuJoCo's 3000-dof particle sample
   alone is 72 MB per Newton system */
#define RL_REF_DENSE_NV 400

/* the problem's sparse matrices (CHOLMOD): M (nv × nv, both triangles), J (nefc × nv) and Jᵀ */
struct rl_ref_sparse {
  cholmod_common c;
  cholmod_sparse *M, *J, *Jt;
};

enum {
  ST_SAT = RL_CNSTRSTATE_SATISFIED,
  ST_QUAD = RL_CNSTRSTATE_QUADRATIC,
  ST_LNEG = RL_CNSTRSTATE_LINEARNEG,
  ST_LPOS = RL_CNSTRSTATE_LINEARPOS,
  ST_CONE = RL_CNSTRSTATE_CONE
};

/* a CHOLMOD sparse matrix from triplets (duplicates summed) */
static cholmod_sparse *sparse_from(cholmod_triplet *T, cholmod_common *c) {
  cholmod_sparse *A = T ? cholmod_triplet_to_sparse(T, 0, c) : NULL;
  cholmod_free_triplet(&T, c);
  return A;
}

int rl_ref_problem_make(rl_ref_problem *p, const rl_model *m, const rl_data *d) {
  memset(p, 0, sizeof *p);
  int nv = m->nv, ne = d->nefc;
  p->nv = nv;
  p->nefc = ne;
  p->ne = d->ne;
  p->nf = d->nf;
  p->dense_max_nv = RL_REF_DENSE_NV;
  p->a0 = calloc((size_t)nv + 1, sizeof(double));
  p->D = calloc((size_t)ne + 1, sizeof(double));
  p->R = calloc((size_t)ne + 1, sizeof(double));
  p->aref = calloc((size_t)ne + 1, sizeof(double));
  p->floss = calloc((size_t)ne + 1, sizeof(double));
  p->mu = calloc((size_t)ne + 1, sizeof(double));
  p->fric = calloc(5 * (size_t)ne + 1, sizeof(double));
  p->type = calloc((size_t)ne + 1, sizeof(int));
  p->dim = calloc((size_t)ne + 1, sizeof(int));
  p->blk = calloc((size_t)ne + 1, sizeof(int));
  p->sp = calloc(1, sizeof *p->sp);
  if (!p->a0 || !p->D || !p->R || !p->aref || !p->floss || !p->mu || !p->fric || !p->type || !p->dim || !p->blk ||
      !p->sp) {
    rl_ref_problem_free(p);
    return -1;
  }
  struct rl_ref_sparse *sp = p->sp;
  cholmod_start(&sp->c);
  sp->c.print = 0;
  /* M from the dof tree (qM: row i holds M_ij for j = i and its ancestors), both triangles */
  cholmod_triplet *T = cholmod_allocate_triplet((size_t)nv, (size_t)nv, 2 * (size_t)m->nM + 1, 0, CHOLMOD_REAL, &sp->c);
  for (int i = 0; T && i < nv; i++) {
    int a = m->dof_Madr[i];
    for (int j = i; j >= 0; j = m->dof_parentid[j], a++) {
      int *ti = T->i, *tj = T->j;
      double *tx = T->x;
      ti[T->nnz] = i, tj[T->nnz] = j, tx[T->nnz++] = (double)d->qM[a];
      if (j != i) ti[T->nnz] = j, tj[T->nnz] = i, tx[T->nnz++] = (double)d->qM[a];
    }
    p->a0[i] = (double)d->qacc_smooth[i];
  }
  sp->M = sparse_from(T, &sp->c);
  T = cholmod_allocate_triplet((size_t)ne, (size_t)nv, (size_t)d->nnzJ + 1, 0, CHOLMOD_REAL, &sp->c);
  for (int r = 0; T && r < ne; r++)
    for (int k = 0; k < d->efc_J_rownnz[r]; k++) {
      int *ti = T->i, *tj = T->j;
      double *tx = T->x;
      ti[T->nnz] = r, tj[T->nnz] = d->efc_J_colind[d->efc_J_rowadr[r] + k];
      tx[T->nnz++] = (double)d->efc_J[d->efc_J_rowadr[r] + k];
    }
  sp->J = sparse_from(T, &sp->c);
  sp->Jt = sp->J ? cholmod_transpose(sp->J, 1, &sp->c) : NULL;
  if (!sp->M || !sp->J || !sp->Jt) {
    rl_ref_problem_free(p);
    return -1;
  }
  for (int r = 0; r < ne; r++) {
    p->D[r] = d->efc_D[r];
    p->R[r] = d->efc_R[r];
    p->aref[r] = d->efc_aref[r];
    p->floss[r] = d->efc_frictionloss[r];
    p->type[r] = d->efc_type[r];
    if (d->efc_type[r] == RL_CNSTR_CONTACT_ELLIPTIC) {
      const rl_contact *con = d->contact + d->efc_id[r];
      p->dim[r] = con->dim;
      p->mu[r] = con->mu;
      for (int k = 0; k < 5; k++) p->fric[5 * r + k] = con->friction[k];
    }
  }
  /* each row's block of the row Hessian: an elliptic contact's dim rows, else the row alone */
  for (int r = 0; r < ne;) {
    int n = p->type[r] == RL_CNSTR_CONTACT_ELLIPTIC && p->dim[r] > 0 ? p->dim[r] : 1;
    for (int k = 0; k < n && r + k < ne; k++) p->blk[r + k] = r;
    r += n;
  }
  return 0;
}

void rl_ref_problem_free(rl_ref_problem *p) {
  if (p->sp) {
    cholmod_free_sparse(&p->sp->M, &p->sp->c);
    cholmod_free_sparse(&p->sp->J, &p->sp->c);
    cholmod_free_sparse(&p->sp->Jt, &p->sp->c);
    cholmod_finish(&p->sp->c);
    free(p->sp);
  }
  free(p->a0);
  free(p->D);
  free(p->R);
  free(p->aref);
  free(p->floss);
  free(p->mu);
  free(p->fric);
  free(p->type);
  free(p->dim);
  free(p->blk);
  memset(p, 0, sizeof *p);
}

/* y = A·x (A sparse, x and y dense vectors of A's sizes), by CHOLMOD's cholmod_sdmult */
static void spmv(const cholmod_sparse *A, const double *x, double *y, cholmod_common *c) {
  double one[2] = {1, 0}, zero[2] = {0, 0};
  cholmod_dense X = {.nrow = A->ncol, .ncol = 1, .nzmax = A->ncol, .d = A->ncol, .x = (void *)x,
                     .xtype = CHOLMOD_REAL, .dtype = CHOLMOD_DOUBLE};
  cholmod_dense Y = {.nrow = A->nrow, .ncol = 1, .nzmax = A->nrow, .d = A->nrow, .x = y,
                     .xtype = CHOLMOD_REAL, .dtype = CHOLMOD_DOUBLE};
  if (A->nrow == 0) return;
  if (A->ncol == 0) {
    memset(y, 0, sizeof(double) * A->nrow);
    return;
  }
  cholmod_sdmult((cholmod_sparse *)A, 0, one, zero, &X, &Y, c);
}

/* Row costs at jar: forces f = −∂s/∂jar, states, and (C != NULL) the block-diagonal row Hessian, 6 entries per
   row (zeroed by the caller): C[6i + k] = ∂²s/∂jar_i∂jar_(b+k), b = blk[i] the first row of row i's block. */
static double rows_eval(const rl_ref_problem *p, const double *jar, double *f, int *state, double *C) {
  int ne = p->nefc;
  double s = 0;
  for (int i = 0; i < ne; i++) {
    double x = jar[i], D = p->D[i];
    int st;
    if (i < p->ne) {
      st = ST_QUAD;
    } else if (i < p->ne + p->nf) {
      double b = p->R[i] * p->floss[i];
      st = x <= -b ? ST_LNEG : x >= b ? ST_LPOS : ST_QUAD;
      if (st != ST_QUAD) {
        double sg = st == ST_LNEG ? -1 : 1;
        s += p->floss[i] * (sg * x) - 0.5 * p->R[i] * p->floss[i] * p->floss[i];
        f[i] = -sg * p->floss[i];
        state[i] = st;
        continue;
      }
    } else if (p->type[i] != RL_CNSTR_CONTACT_ELLIPTIC) {
      st = x < 0 ? ST_QUAD : ST_SAT;
    } else {
      /* elliptic contact: φ = N − μT with N = μ·x₀, T = ‖(fric_j·x_j)‖ */
      int dim = p->dim[i];
      double mu = p->mu[i], w[6] = {0}, U[6] = {0}, T = 0;
      const double *fr = p->fric + 5 * i;
      w[0] = mu;
      for (int j = 1; j < dim; j++) w[j] = fr[j - 1];
      for (int j = 0; j < dim; j++) U[j] = w[j] * jar[i + j];
      for (int j = 1; j < dim; j++) T += U[j] * U[j];
      T = sqrt(T);
      double N = U[0];
      if (N >= mu * T) {
        st = ST_SAT;
        for (int j = 0; j < dim; j++) f[i + j] = 0;
      } else if (mu * N + T <= 0) {
        st = ST_QUAD;
        for (int j = 0; j < dim; j++) {
          s += 0.5 * p->D[i + j] * jar[i + j] * jar[i + j];
          f[i + j] = -p->D[i + j] * jar[i + j];
          if (C) C[6 * (size_t)(i + j) + j] = p->D[i + j];
        }
      } else {
        st = ST_CONE;
        double Dm = p->D[i] / (mu * mu * (1 + mu * mu)), phi = N - mu * T, g[6];
        s += 0.5 * Dm * phi * phi;
        g[0] = 1;
        for (int j = 1; j < dim; j++) g[j] = -mu * U[j] / T;
        for (int j = 0; j < dim; j++) f[i + j] = -Dm * phi * g[j] * w[j];
        if (C)
          for (int a = 0; a < dim; a++)
            for (int b = 0; b < dim; b++) {
              double hphi = 0; /* ∇²φ in U space: −μ(δ/T − U Uᵀ/T³) on the tangent block */
              if (a > 0 && b > 0) hphi = -mu * ((a == b ? 1 / T : 0) - U[a] * U[b] / (T * T * T));
              C[6 * (size_t)(i + a) + b] = Dm * (g[a] * g[b] + phi * hphi) * w[a] * w[b];
            }
      }
      for (int j = 0; j < dim; j++) state[i + j] = st;
      i += dim - 1;
      continue;
    }
    state[i] = st;
    if (st == ST_QUAD) {
      s += 0.5 * D * x * x;
      f[i] = -D * x;
      if (C) C[6 * (size_t)i] = D;
    } else {
      f[i] = 0;
    }
  }
  return s;
}

/* jar = J·a − aref */
static void make_jar(const rl_ref_problem *p, const double *a, double *jar) {
  if (!p->nefc) return;
  spmv(p->sp->J, a, jar, &p->sp->c);
  for (int i = 0; i < p->nefc; i++) jar[i] -= p->aref[i];
}

double rl_ref_cost(const rl_ref_problem *p, const double *a, double *grad, int *state) {
  int nv = p->nv, ne = p->nefc;
  double *jar = malloc(sizeof(double) * (size_t)(ne + 1)), *f = malloc(sizeof(double) * (size_t)(ne + 1));
  int *st = state ? state : malloc(sizeof(int) * (size_t)(ne + 1));
  double *da = malloc(sizeof(double) * (size_t)nv + 8), *Mda = malloc(sizeof(double) * (size_t)nv + 8);
  double *Jf = malloc(sizeof(double) * (size_t)nv + 8);
  make_jar(p, a, jar);
  double s = rows_eval(p, jar, f, st, NULL);
  for (int i = 0; i < nv; i++) da[i] = a[i] - p->a0[i];
  spmv(p->sp->M, da, Mda, &p->sp->c);
  s += 0.5 * cblas_ddot(nv, da, 1, Mda, 1);
  if (grad) {
    /* g = M(a − a₀) − Jᵀf */
    memcpy(grad, Mda, sizeof(double) * (size_t)nv);
    if (ne) {
      spmv(p->sp->Jt, f, Jf, &p->sp->c);
      for (int i = 0; i < nv; i++) grad[i] -= Jf[i];
    }
  }
  free(jar);
  free(f);
  if (!state) free(st);
  free(da);
  free(Mda);
  free(Jf);
  return s;
}

/* The magnitude the cost is formed from, scale(a) = ½aᵀMa + ½a₀ᵀMa₀ + s(J·a − aref) ≥ ½|cost(a)|:
   cost = ½aᵀMa − aᵀMa₀ + ½a₀ᵀMa₀ + s, so rounding in any of its terms is relative to this, not to the
   cost itself, which nearly vanishes wherever the constrained optimum is close to the unconstrained one
   (a ≈ a₀, with |a| possibly large). */
double rl_ref_cost_scale(const rl_ref_problem *p, const double *a) {
  int nv = p->nv, ne = p->nefc;
  double *jar = malloc(sizeof(double) * (size_t)(ne + 1)), *f = malloc(sizeof(double) * (size_t)(ne + 1));
  int *st = malloc(sizeof(int) * (size_t)(ne + 1));
  double *Mx = malloc(sizeof(double) * (size_t)nv + 8);
  make_jar(p, a, jar);
  double s = fabs(rows_eval(p, jar, f, st, NULL));
  spmv(p->sp->M, a, Mx, &p->sp->c);
  s += 0.5 * fabs(cblas_ddot(nv, a, 1, Mx, 1));
  spmv(p->sp->M, p->a0, Mx, &p->sp->c);
  s += 0.5 * fabs(cblas_ddot(nv, p->a0, 1, Mx, 1));
  free(jar);
  free(f);
  free(st);
  free(Mx);
  return s;
}

double rl_ref_cost_real(const rl_ref_problem *p, const real *a) {
  double *x = malloc(sizeof(double) * (size_t)p->nv + 8);
  for (int i = 0; i < p->nv; i++) x[i] = (double)a[i];
  double s = rl_ref_cost(p, x, NULL, NULL);
  free(x);
  return s;
}

double rl_ref_gap(const rl_ref_problem *p, const real *a, double cost_star) {
  return rl_ref_cost_real(p, a) - cost_star;
}

/* H = M + Jᵀ·C(jar)·J, sparse with both triangles (stype 0), by CHOLMOD's products; C is the row Hessian's
   block-diagonal matrix (rows_eval).  f, state: nefc scratch.  NULL when out of memory. */
static cholmod_sparse *hessian_at(const rl_ref_problem *p, const double *jar, double *f, int *state) {
  struct rl_ref_sparse *sp = p->sp;
  int ne = p->nefc;
  if (!ne) return cholmod_copy_sparse(sp->M, &sp->c);
  double *C = calloc(6 * (size_t)ne, sizeof(double));
  cholmod_triplet *T = cholmod_allocate_triplet((size_t)ne, (size_t)ne, 6 * (size_t)ne, 0, CHOLMOD_REAL, &sp->c);
  if (!C || !T) {
    free(C);
    cholmod_free_triplet(&T, &sp->c);
    return NULL;
  }
  rows_eval(p, jar, f, state, C);
  for (int i = 0; i < ne; i++)
    for (int k = 0; k < 6; k++) {
      if (C[6 * (size_t)i + k] == 0) continue;
      int *ti = T->i, *tj = T->j;
      double *tx = T->x;
      ti[T->nnz] = i, tj[T->nnz] = p->blk[i] + k, tx[T->nnz++] = C[6 * (size_t)i + k];
    }
  free(C);
  cholmod_sparse *Cs = sparse_from(T, &sp->c), *CJ = NULL, *JtCJ = NULL, *H = NULL;
  if (Cs) CJ = cholmod_ssmult(Cs, sp->J, 0, 1, 0, &sp->c);
  if (CJ) JtCJ = cholmod_ssmult(sp->Jt, CJ, 0, 1, 0, &sp->c);
  double one[2] = {1, 0};
  if (JtCJ) H = cholmod_add(sp->M, JtCJ, one, one, 1, 1, &sp->c);
  cholmod_free_sparse(&Cs, &sp->c);
  cholmod_free_sparse(&CJ, &sp->c);
  cholmod_free_sparse(&JtCJ, &sp->c);
  return H;
}

/* Solves H·x = b (x holds b on entry) for H from hessian_at (both triangles; not modified): LAPACKE_dposv on H made
   dense up to p->dense_max_nv dofs, CHOLMOD's supernodal Cholesky beyond.  kappa (may be NULL) receives κ₁(H) =
   ‖H‖₁·‖H⁻¹‖₁, the inverse's norm estimated by LAPACK from the factor (dpocon; dlacn2 with CHOLMOD's solves), or
   INFINITY when the estimate fails.  0, or −1 when H is not positive definite (or out of memory). */
static int spd_solve_sparse(const rl_ref_problem *p, cholmod_sparse *H, double *x, double *kappa) {
  cholmod_common *c = &p->sp->c;
  int n = p->nv;
  double anorm = cholmod_norm_sparse(H, 1, c);
  if (kappa) *kappa = INFINITY;
  if (n <= p->dense_max_nv) {
    cholmod_dense *Hd = cholmod_sparse_to_dense(H, c);
    if (!Hd) return -1;
    double *A = Hd->x, rcond = 0; /* column-major; symmetric, so either order */
    int bad = LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', n, 1, A, n, x, n) != 0;
    if (!bad && kappa && LAPACKE_dpocon(LAPACK_COL_MAJOR, 'L', n, A, n, anorm, &rcond) == 0 && rcond > 0)
      *kappa = 1 / rcond;
    cholmod_free_dense(&Hd, c);
    return bad ? -1 : 0;
  }
  H->stype = -1; /* the lower triangle of the symmetric H */
  int supernodal = c->supernodal;
  c->supernodal = CHOLMOD_SUPERNODAL; /* LLᵀ: a pivot ≤ 0 stops it (not positive definite) */
  cholmod_factor *L = cholmod_analyze(H, c);
  int bad = !L || !cholmod_factorize(H, L, c) || c->status == CHOLMOD_NOT_POSDEF || L->minor < L->n;
  c->supernodal = supernodal;
  cholmod_dense B = {.nrow = (size_t)n, .ncol = 1, .nzmax = (size_t)n, .d = (size_t)n, .x = x,
                     .xtype = CHOLMOD_REAL, .dtype = CHOLMOD_DOUBLE};
  cholmod_dense *X = bad ? NULL : cholmod_solve(CHOLMOD_A, L, &B, c);
  if (X) memcpy(x, X->x, sizeof(double) * (size_t)n);
  bad |= !X;
  cholmod_free_dense(&X, c);
  if (!bad && kappa) {
    /* ‖H⁻¹‖₁ by LAPACK's estimator, each product H⁻¹·v (H symmetric: also H⁻ᵀ·v) a solve with the factor */
    double *v = malloc(sizeof(double) * (size_t)n), *w = malloc(sizeof(double) * (size_t)n), est = 0;
    int *isgn = malloc(sizeof(int) * (size_t)n), kase = 0, isave[3] = {0, 0, 0}, ok = v && w && isgn;
    while (ok) {
      dlacn2_(&n, v, w, isgn, &est, &kase, isave);
      if (!kase) break;
      cholmod_dense W = {.nrow = (size_t)n, .ncol = 1, .nzmax = (size_t)n, .d = (size_t)n, .x = w,
                         .xtype = CHOLMOD_REAL, .dtype = CHOLMOD_DOUBLE};
      cholmod_dense *Y = cholmod_solve(CHOLMOD_A, L, &W, c);
      if (!Y) ok = 0;
      else memcpy(w, Y->x, sizeof(double) * (size_t)n);
      cholmod_free_dense(&Y, c);
    }
    if (ok && est > 0) *kappa = anorm * est;
    free(v);
    free(w);
    free(isgn);
  }
  H->stype = 0;
  cholmod_free_factor(&L, c);
  return bad ? -1 : 0;
}

/* φ'(α) along v from a: (a − a₀ + αv)ᵀMv − f(jar + α·Jv)·Jv */
static double line_deriv(const rl_ref_problem *p, double alpha, double gM0, double vMv, const double *jar,
                         const double *Jv, double *jt, double *f, int *state) {
  for (int i = 0; i < p->nefc; i++) jt[i] = jar[i] + alpha * Jv[i];
  rows_eval(p, jt, f, state, NULL);
  double s = gM0 + alpha * vMv;
  for (int i = 0; i < p->nefc; i++) s -= f[i] * Jv[i];
  return s;
}

/* exact line search: root of the (continuous, increasing) derivative, bracket by doubling, then
   Illinois regula falsi to rounding */
static double line_search(const rl_ref_problem *p, const double *a, const double *v, double *jar, double *Jv,
                          double *jt, double *f, int *state, double *Mv) {
  int nv = p->nv;
  make_jar(p, a, jar);
  if (p->nefc) spmv(p->sp->J, v, Jv, &p->sp->c);
  spmv(p->sp->M, v, Mv, &p->sp->c);
  double gM0 = 0, vMv = cblas_ddot(nv, v, 1, Mv, 1);
  for (int i = 0; i < nv; i++) gM0 += (a[i] - p->a0[i]) * Mv[i];
  double lo = 0, dlo = line_deriv(p, 0, gM0, vMv, jar, Jv, jt, f, state);
  if (!(dlo < 0)) return 0;
  double hi = 1, dhi = line_deriv(p, hi, gM0, vMv, jar, Jv, jt, f, state);
  for (int k = 0; dhi < 0 && k < 80; k++) {
    lo = hi;
    dlo = dhi;
    hi *= 2;
    dhi = line_deriv(p, hi, gM0, vMv, jar, Jv, jt, f, state);
  }
  if (dhi <= 0) return hi;
  int side = 0;
  for (int k = 0; k < 300; k++) {
    double x = (lo * dhi - hi * dlo) / (dhi - dlo);
    if (!(x > lo && x < hi)) x = 0.5 * (lo + hi);
    double dx = line_deriv(p, x, gM0, vMv, jar, Jv, jt, f, state);
    if (dx == 0) return x;
    if (dx < 0) {
      lo = x;
      dlo = dx;
      if (side == -1) dhi *= 0.5;
      side = -1;
    } else {
      hi = x;
      dhi = dx;
      if (side == 1) dlo *= 0.5;
      side = 1;
    }
    if (hi - lo <= 4 * DBL_EPSILON * hi) break;
  }
  return -dlo < dhi ? lo : hi;
}

int rl_ref_optimum(const rl_ref_problem *p, double *astar, double *cost, int *iters) {
  int nv = p->nv, ne = p->nefc, ok = 1;
  memcpy(astar, p->a0, sizeof(double) * (size_t)nv);
  if (iters) *iters = 0;
  if (ne == 0) {
    if (cost) *cost = 0;
    return 0;
  }
  double *g = malloc(sizeof(double) * (size_t)nv), *v = malloc(sizeof(double) * (size_t)nv);
  double *Mv = malloc(sizeof(double) * (size_t)nv);
  double *jar = malloc(sizeof(double) * (size_t)ne), *Jv = malloc(sizeof(double) * (size_t)ne);
  double *jt = malloc(sizeof(double) * (size_t)ne), *f = malloc(sizeof(double) * (size_t)ne);
  int *st = malloc(sizeof(int) * (size_t)ne), *st_old = malloc(sizeof(int) * (size_t)ne);
  int it, settled = 0;
  for (it = 0; it < 200 && !settled; it++) {
    rl_ref_cost(p, astar, g, st_old);
    make_jar(p, astar, jar);
    cholmod_sparse *H = hessian_at(p, jar, f, st);
    for (int i = 0; i < nv; i++) v[i] = -g[i];
    int bad = !H || spd_solve_sparse(p, H, v, NULL) != 0;
    cholmod_free_sparse(&H, &p->sp->c);
    if (bad) {
      ok = 0;
      break;
    }
    double alpha = line_search(p, astar, v, jar, Jv, jt, f, st, Mv);
    double step = 0, amax = 0;
    for (int i = 0; i < nv; i++) {
      astar[i] += alpha * v[i];
      if (fabs(alpha * v[i]) > step) step = fabs(alpha * v[i]);
      if (fabs(astar[i]) > amax) amax = fabs(astar[i]);
    }
    make_jar(p, astar, jar);
    rows_eval(p, jar, f, st, NULL);
    int same = !memcmp(st, st_old, sizeof(int) * (size_t)ne);
    settled = same && (alpha == 0 || step <= 1e-14 * (amax > 0 ? amax : 1));
  }
  if (iters) *iters = it;
  if (cost) *cost = rl_ref_cost(p, astar, NULL, NULL);
  free(g);
  free(v);
  free(Mv);
  free(jar);
  free(Jv);
  free(jt);
  free(f);
  free(st);
  free(st_old);
  return ok && settled ? 0 : -1;
}

/* observer: H·y = grad re-solved (LAPACKE_dposv, or CHOLMOD beyond p->dense_max_nv dofs), compared with the
   engine's x */
static void newton_system(void *user, const rl_model *m, rl_data *d, const real *jar, const real *latch,
                          const real *grad, const real *x) {
  rl_ref_newton_check *chk = user;
  const rl_ref_problem *p = chk->p;
  int nv = p->nv, ne = p->nefc, bad = 0;
  double *y = malloc(sizeof(double) * (size_t)nv + 8), kappa = INFINITY;
  for (int i = 0; i < nv; i++) y[i] = (double)grad[i];
  if (latch) { /* signorini: the engine's dense H (small test models only) */
    double *H = malloc(sizeof(double) * (size_t)nv * nv + 8), rcond = 0;
    real *Hr = malloc(sizeof(real) * (size_t)nv * nv + 8);
    rl_solver_hessian_dense(m, d, jar, latch, Hr);
    for (long k = 0; k < (long)nv * nv; k++) H[k] = (double)Hr[k];
    free(Hr);
    double anorm = LAPACKE_dlansy(LAPACK_COL_MAJOR, '1', 'L', nv, H, nv); /* symmetric: either order */
    bad = LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', nv, 1, H, nv, y, nv) != 0;
    if (!bad && LAPACKE_dpocon(LAPACK_COL_MAJOR, 'L', nv, H, nv, anorm, &rcond) == 0 && rcond > 0) kappa = 1 / rcond;
    free(H);
  } else {
    double *jd = malloc(sizeof(double) * ((size_t)ne + 1)), *f = malloc(sizeof(double) * ((size_t)ne + 1));
    int *st = malloc(sizeof(int) * ((size_t)ne + 1));
    for (int i = 0; i < ne; i++) jd[i] = (double)jar[i];
    cholmod_sparse *H = hessian_at(p, jd, f, st);
    bad = !H || spd_solve_sparse(p, H, y, &kappa) != 0;
    cholmod_free_sparse(&H, &p->sp->c);
    free(jd);
    free(f);
    free(st);
  }
  if (bad) {
    chk->failed++;
  } else {
    double err = 0, mag = 0;
    for (int i = 0; i < nv; i++) {
      double e = fabs((double)x[i] - y[i]);
      if (!(e <= err)) err = e;
      if (fabs(y[i]) > mag) mag = fabs(y[i]);
    }
    double rel = err / (mag > 0 ? mag : 1);
    if (!(rel <= chk->max_rel)) chk->max_rel = rel;
    /* κ₁(H) from the factor: a backward-stable factorization in working precision has forward error ≲ c·κ·ε,
       so rel/(κ·ε) is the implementation's figure, free of the problem's conditioning */
    if (isfinite(kappa)) {
      double scaled = rel / (kappa * (double)RL_EPS);
      if (!(scaled <= chk->max_rel_cond)) chk->max_rel_cond = scaled;
    }
  }
  chk->nsystems++;
  free(y);
}

rl_solver_observer rl_ref_observer(rl_ref_newton_check *chk) {
  rl_solver_observer o = {newton_system, chk};
  return o;
}

double rl_ref_spd_solve(const real *A, const double *b, int n, double *x) {
  if (n <= 0) return 1;
  /* kd: the bandwidth of A's lower triangle (a dof tree's M: how far a dof's ancestors lie before it) */
  int kd = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i - kd; j++)
      if (A[(size_t)i * n + j] != 0) {
        kd = i - j;
        break;
      }
  size_t lg = 2 * (size_t)kd + 1, ls = (size_t)kd + 1;
  double *AG = calloc(lg * (size_t)n, sizeof *AG), *AB = calloc(ls * (size_t)n, sizeof *AB);
  double kappa = INFINITY, rcond = 0;
  if (!AG || !AB) {
    free(AG);
    free(AB);
    return INFINITY;
  }
  /* LAPACK's band storage, column-major: general AG[(kd + i − j) + j·lg] = A_ij for |i − j| ≤ kd (its 1-norm),
     symmetric lower AB[(i − j) + j·ls] = A_ij for j ≤ i ≤ j + kd (the factorization) */
  for (int j = 0; j < n; j++)
    for (int i = j - kd > 0 ? j - kd : 0; i < n && i <= j + kd; i++) {
      double a = (double)A[(size_t)i * n + j];
      AG[(size_t)(kd + i - j) + (size_t)j * lg] = a;
      if (i >= j) AB[(size_t)(i - j) + (size_t)j * ls] = a;
    }
  memcpy(x, b, sizeof *x * (size_t)n);
  double anorm = LAPACKE_dlangb(LAPACK_COL_MAJOR, '1', n, kd, kd, AG, (int)lg);
  if (LAPACKE_dpbsv(LAPACK_COL_MAJOR, 'L', n, kd, 1, AB, (int)ls, x, n) == 0 &&
      LAPACKE_dpbcon(LAPACK_COL_MAJOR, 'L', n, kd, AB, (int)ls, anorm, &rcond) == 0 && rcond > 0)
    kappa = 1 / rcond;
  free(AG);
  free(AB);
  return kappa;
}

/* MuJoCo's extracted problem → rigidlab's data; −1 if it exceeds rigidlab's capacities */
int rl_ref_copy_mujoco(const mjModel *mjm, const mjData *mjd, const rl_model *m, rl_data *d) {
  int nv = m->nv, nefc = mjd->nefc, sparse = mj_isSparse(mjm);
  if (nefc > m->nefcmax || mjd->ncon > m->nconmax) return -1;
  long nnz = 0;
  for (int r = 0; r < nefc; r++) {
    if (sparse) nnz += mjd->efc_J_rownnz[r];
    else
      for (int k = 0; k < nv; k++) nnz += mjd->efc_J[(size_t)r * nv + k] != 0;
  }
  if (nnz > m->njmax) return -1;
  for (int k = 0; k < m->nM; k++) d->qM[k] = (real)mjd->qM[k];
  rl_factor_m(m, d);
  for (int i = 0; i < nv; i++) {
    d->qacc_smooth[i] = (real)mjd->qacc_smooth[i];
    d->qfrc_smooth[i] = (real)mjd->qfrc_smooth[i];
  }
  d->ncon = mjd->ncon;
  for (int k = 0; k < mjd->ncon; k++) {
    const mjContact *src = mjd->contact + k;
    rl_contact *dst = d->contact + k;
    memset(dst, 0, sizeof *dst);
    dst->dim = src->dim;
    dst->mu = (real)src->mu;
    for (int j = 0; j < 5; j++) dst->friction[j] = (real)src->friction[j];
    dst->efc_address = src->efc_address;
    dst->geom1 = src->geom1;
    dst->geom2 = src->geom2;
  }
  d->ne = mjd->ne;
  d->nf = mjd->nf;
  d->nefc = nefc;
  int adr = 0;
  for (int r = 0; r < nefc; r++) {
    d->efc_type[r] = mjd->efc_type[r];
    d->efc_id[r] = mjd->efc_id[r];
    d->efc_D[r] = (real)mjd->efc_D[r];
    d->efc_R[r] = (real)mjd->efc_R[r];
    d->efc_aref[r] = (real)mjd->efc_aref[r];
    d->efc_frictionloss[r] = (real)mjd->efc_frictionloss[r];
    d->efc_J_rowadr[r] = adr;
    int n = 0;
    if (sparse) {
      int a = mjd->efc_J_rowadr[r];
      for (int k = 0; k < mjd->efc_J_rownnz[r]; k++, n++) {
        d->efc_J_colind[adr + n] = mjd->efc_J_colind[a + k];
        d->efc_J[adr + n] = (real)mjd->efc_J[a + k];
      }
    } else {
      for (int k = 0; k < nv; k++) {
        double v = mjd->efc_J[(size_t)r * nv + k];
        if (v == 0) continue;
        d->efc_J_colind[adr + n] = k;
        d->efc_J[adr + n] = (real)v;
        n++;
      }
    }
    d->efc_J_rownnz[r] = n;
    adr += n;
  }
  d->nnzJ = adr;
  return 0;
}
