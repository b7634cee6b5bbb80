/* lapack_ref.c — dense LAPACK references for the soft-constraint problem (see lapack_ref.h).
 *
 * Written independently of engine/solver.c: dense double arrays, the cone Hessian from
 * ∇φ∇φᵀ + φ∇²φ (φ = N − μT) rather than MuJoCo's expanded form, H = M + Jᵀ·C·J with one BLAS
 * product, Newton systems by LAPACKE_dposv, and a derivative root-finder as line search. */
#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "lapack_ref.h"

enum {
  ST_SAT = RL_CNSTRSTATE_SATISFIED,
  ST_QUAD = RL_CNSTRSTATE_QUADRATIC,
  ST_LNEG = RL_CNSTRSTATE_LINEARNEG,
  ST_LPOS = RL_CNSTRSTATE_LINEARPOS,
  ST_CONE = RL_CNSTRSTATE_CONE
};

int rl_ref_problem_make(rl_ref_problem *p, const rl_model *m, const rl_data *d) {
  memset(p, 0, sizeof *p);
  int nv = m->nv, ne = d->nefc;
  p->nv = nv;
  p->nefc = ne;
  p->ne = d->ne;
  p->nf = d->nf;
  size_t n2 = (size_t)nv * nv, nj = (size_t)ne * nv;
  p->M = calloc(n2 + 1, sizeof(double));
  p->a0 = calloc((size_t)nv + 1, sizeof(double));
  p->J = calloc(nj + 1, sizeof(double));
  p->D = calloc((size_t)ne + 1, sizeof(double));
  p->R = calloc((size_t)ne + 1, sizeof(double));
  p->aref = calloc((size_t)ne + 1, sizeof(double));
  p->floss = calloc((size_t)ne + 1, sizeof(double));
  p->mu = calloc((size_t)ne + 1, sizeof(double));
  p->fric = calloc(5 * (size_t)ne + 1, sizeof(double));
  p->type = calloc((size_t)ne + 1, sizeof(int));
  p->dim = calloc((size_t)ne + 1, sizeof(int));
  p->work = calloc(2 * n2 + nj + 8 * (size_t)nv + 8 * (size_t)ne + 64, sizeof(double));
  if (!p->M || !p->a0 || !p->J || !p->D || !p->R || !p->aref || !p->floss || !p->mu || !p->fric || !p->type ||
      !p->dim || !p->work) {
    rl_ref_problem_free(p);
    return -1;
  }
  for (int i = 0; i < nv; i++) {
    int a = m->dof_Madr[i];
    for (int j = i; j >= 0; j = m->dof_parentid[j], a++) p->M[i * nv + j] = p->M[j * nv + i] = (double)d->qM[a];
    p->a0[i] = (double)d->qacc_smooth[i];
  }
  for (int r = 0; r < ne; r++) {
    for (int k = 0; k < d->efc_J_rownnz[r]; k++)
      p->J[(size_t)r * nv + d->efc_J_colind[d->efc_J_rowadr[r] + k]] += (double)d->efc_J[d->efc_J_rowadr[r] + k];
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
  return 0;
}

void rl_ref_problem_free(rl_ref_problem *p) {
  free(p->M);
  free(p->a0);
  free(p->J);
  free(p->D);
  free(p->R);
  free(p->aref);
  free(p->floss);
  free(p->mu);
  free(p->fric);
  free(p->type);
  free(p->dim);
  free(p->work);
  memset(p, 0, sizeof *p);
}

/* Row costs at jar: forces f = −∂s/∂jar, states, and (C != NULL) the block-diagonal row Hessian
   C (nefc × nefc, zeroed by the caller). */
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
          if (C) C[(size_t)(i + j) * ne + i + j] = p->D[i + j];
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
              C[(size_t)(i + a) * ne + i + b] = Dm * (g[a] * g[b] + phi * hphi) * w[a] * w[b];
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
      if (C) C[(size_t)i * ne + i] = D;
    } else {
      f[i] = 0;
    }
  }
  return s;
}

/* jar = J·a − aref */
static void make_jar(const rl_ref_problem *p, const double *a, double *jar) {
  if (!p->nefc) return;
  cblas_dgemv(CblasRowMajor, CblasNoTrans, p->nefc, p->nv, 1.0, p->J, p->nv, a, 1, 0.0, jar, 1);
  for (int i = 0; i < p->nefc; i++) jar[i] -= p->aref[i];
}

double rl_ref_cost(const rl_ref_problem *p, const double *a, double *grad, int *state) {
  int nv = p->nv, ne = p->nefc;
  double *jar = malloc(sizeof(double) * (size_t)(ne + 1)), *f = malloc(sizeof(double) * (size_t)(ne + 1));
  int *st = state ? state : malloc(sizeof(int) * (size_t)(ne + 1));
  double *da = malloc(sizeof(double) * (size_t)nv + 8), *Mda = malloc(sizeof(double) * (size_t)nv + 8);
  make_jar(p, a, jar);
  double s = rows_eval(p, jar, f, st, NULL);
  for (int i = 0; i < nv; i++) da[i] = a[i] - p->a0[i];
  cblas_dgemv(CblasRowMajor, CblasNoTrans, nv, nv, 1.0, p->M, nv, da, 1, 0.0, Mda, 1);
  s += 0.5 * cblas_ddot(nv, da, 1, Mda, 1);
  if (grad) {
    /* g = M(a − a₀) − Jᵀf */
    memcpy(grad, Mda, sizeof(double) * (size_t)nv);
    if (ne) cblas_dgemv(CblasRowMajor, CblasTrans, ne, nv, -1.0, p->J, nv, f, 1, 1.0, grad, 1);
  }
  free(jar);
  free(f);
  if (!state) free(st);
  free(da);
  free(Mda);
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
  cblas_dgemv(CblasRowMajor, CblasNoTrans, nv, nv, 1.0, p->M, nv, a, 1, 0.0, Mx, 1);
  s += 0.5 * fabs(cblas_ddot(nv, a, 1, Mx, 1));
  cblas_dgemv(CblasRowMajor, CblasNoTrans, nv, nv, 1.0, p->M, nv, p->a0, 1, 0.0, Mx, 1);
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

/* H = M + Jᵀ·C(jar)·J (dense, both triangles) */
static void hessian_at(const rl_ref_problem *p, const double *jar, double *H, double *C, double *CJ, double *f,
                       int *state) {
  int nv = p->nv, ne = p->nefc;
  memcpy(H, p->M, sizeof(double) * (size_t)nv * nv);
  if (!ne) return;
  memset(C, 0, sizeof(double) * (size_t)ne * ne);
  rows_eval(p, jar, f, state, C);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ne, nv, ne, 1.0, C, ne, p->J, nv, 0.0, CJ, nv);
  cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, nv, nv, ne, 1.0, p->J, nv, CJ, nv, 1.0, H, nv);
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
  if (p->nefc) cblas_dgemv(CblasRowMajor, CblasNoTrans, p->nefc, nv, 1.0, p->J, nv, v, 1, 0.0, Jv, 1);
  cblas_dgemv(CblasRowMajor, CblasNoTrans, nv, nv, 1.0, p->M, nv, v, 1, 0.0, Mv, 1);
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
  double *H = malloc(sizeof(double) * (size_t)nv * nv), *C = malloc(sizeof(double) * (size_t)ne * ne);
  double *CJ = malloc(sizeof(double) * (size_t)ne * nv);
  double *g = malloc(sizeof(double) * (size_t)nv), *v = malloc(sizeof(double) * (size_t)nv);
  double *Mv = malloc(sizeof(double) * (size_t)nv);
  double *jar = malloc(sizeof(double) * (size_t)ne), *Jv = malloc(sizeof(double) * (size_t)ne);
  double *jt = malloc(sizeof(double) * (size_t)ne), *f = malloc(sizeof(double) * (size_t)ne);
  int *st = malloc(sizeof(int) * (size_t)ne), *st_old = malloc(sizeof(int) * (size_t)ne);
  int it, settled = 0;
  for (it = 0; it < 200 && !settled; it++) {
    rl_ref_cost(p, astar, g, st_old);
    make_jar(p, astar, jar);
    hessian_at(p, jar, H, C, CJ, f, st);
    for (int i = 0; i < nv; i++) v[i] = -g[i];
    if (LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', nv, 1, H, nv, v, 1) != 0) {
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
  free(H);
  free(C);
  free(CJ);
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

/* observer: H·y = grad by dposv, compared with the engine's x */
static void newton_system(void *user, const rl_model *m, rl_data *d, const real *jar, const real *latch,
                          const real *grad, const real *x) {
  rl_ref_newton_check *chk = user;
  const rl_ref_problem *p = chk->p;
  int nv = p->nv, ne = p->nefc;
  double *H = malloc(sizeof(double) * (size_t)nv * nv), *y = malloc(sizeof(double) * (size_t)nv + 8);
  if (latch) {
    real *Hr = malloc(sizeof(real) * (size_t)nv * nv);
    rl_solver_hessian_dense(m, d, jar, latch, Hr);
    for (long k = 0; k < (long)nv * nv; k++) H[k] = (double)Hr[k];
    free(Hr);
  } else {
    double *C = malloc(sizeof(double) * ((size_t)ne * ne + 1)), *CJ = malloc(sizeof(double) * ((size_t)ne * nv + 1));
    double *jd = malloc(sizeof(double) * ((size_t)ne + 1)), *f = malloc(sizeof(double) * ((size_t)ne + 1));
    int *st = malloc(sizeof(int) * ((size_t)ne + 1));
    for (int i = 0; i < ne; i++) jd[i] = (double)jar[i];
    hessian_at(p, jd, H, C, CJ, f, st);
    free(C);
    free(CJ);
    free(jd);
    free(f);
    free(st);
  }
  for (int i = 0; i < nv; i++) y[i] = (double)grad[i];
  double anorm = LAPACKE_dlansy(LAPACK_ROW_MAJOR, '1', 'L', nv, H, nv), rcond = 0;
  if (LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', nv, 1, H, nv, y, 1) != 0) {
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
    /* κ₁(H) from the factor dposv left in H: a backward-stable factorization in working precision has
       forward error ≲ c·κ·ε, so rel/(κ·ε) is the implementation's figure, free of the problem's conditioning */
    if (LAPACKE_dpocon(LAPACK_ROW_MAJOR, 'L', nv, H, nv, anorm, &rcond) == 0 && rcond > 0) {
      double scaled = rel * rcond / (double)RL_EPS;
      if (!(scaled <= chk->max_rel_cond)) chk->max_rel_cond = scaled;
    }
  }
  chk->nsystems++;
  free(H);
  free(y);
}

rl_solver_observer rl_ref_observer(rl_ref_newton_check *chk) {
  rl_solver_observer o = {newton_system, chk};
  return o;
}

double rl_ref_spd_solve(const double *A, const double *b, int n, double *x) {
  if (n <= 0) return 1;
  double *F = malloc(sizeof *F * (size_t)n * (size_t)n), kappa = INFINITY, rcond = 0;
  if (!F) return INFINITY;
  memcpy(F, A, sizeof *F * (size_t)n * (size_t)n);
  memcpy(x, b, sizeof *x * (size_t)n);
  double anorm = LAPACKE_dlansy(LAPACK_ROW_MAJOR, '1', 'L', n, F, n);
  if (LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', n, 1, F, n, x, 1) == 0 &&
      LAPACKE_dpocon(LAPACK_ROW_MAJOR, 'L', n, F, n, anorm, &rcond) == 0 && rcond > 0)
    kappa = 1 / rcond;
  free(F);
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
