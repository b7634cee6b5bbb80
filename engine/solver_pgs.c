/* solver_pgs.c — projected Gauss–Seidel on the dual of MuJoCo 2.2.2's soft-constraint problem (mj_solPGS).
 *
 * The dual problem over the row forces f:
 *   minimize  ½·fᵀ·AR·f + fᵀ·b,   AR = J·M⁻¹·Jᵀ + diag(R),   b = J·qacc_smooth − aref,
 * with f in the rows' admissible sets: equality rows free, friction-loss rows |f| ≤ frictionloss,
 * limit / frictionless / pyramidal contact rows f ≥ 0, elliptic contacts (f₀, f_t) in the cone
 * Σ_j (f_j / fric_j)² ≤ f₀².  Then qacc = qacc_smooth + M⁻¹·Jᵀ·f.
 *
 * One sweep visits the rows in order.  A scalar row moves to its unconstrained minimum along its own
 * coordinate and is clamped to its set.  An elliptic contact block first moves along the ray through
 * its current force (or, with no normal force, along the normal alone), then minimizes over its
 * friction forces with the normal force fixed: a quadratic program on the ellipse (qcqp below).  A
 * block step that raises the cost by more than 1e-10 is undone.  The sweep's improvement (the cost
 * decrease, divided by meaninertia·max(1, nv)) below `tolerance` stops the solve, as do `iterations`
 * sweeps.  The warm start is the primal force at qacc_warmstart, or zero where that force's dual cost
 * is positive.  The arithmetic follows MuJoCo's step for step, so the same problem stops at the same
 * iterate. */
#include <string.h>
#include "rl_engine.h"

#define MINVAL ((real)1e-15) /* MuJoCo's mjMINVAL */

size_t rl_pgs_arena(const rl_model *m) {
  size_t nv = (size_t)m->nv, ne = (size_t)m->nefcmax;
  return ne * ne + ne * nv + 4 * ne + 2 * nv + 64;
}

static real pgs_dot(const real *a, const real *b, int n) {
  real s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

/* AR = J·M⁻¹·Jᵀ + diag(R): X row i = M⁻¹·J_iᵀ (dense, nv), AR_ij = J_i·X_j on the lower triangle,
   mirrored */
static void dual_matrix(const rl_model *m, const rl_data *d, real *AR, real *X) {
  int nv = m->nv, nefc = d->nefc;
  memset(X, 0, sizeof(real) * (size_t)nefc * (size_t)nv);
  for (int i = 0; i < nefc; i++) {
    const real *J = d->efc_J + d->efc_J_rowadr[i];
    const int *c = d->efc_J_colind + d->efc_J_rowadr[i];
    for (int k = 0; k < d->efc_J_rownnz[i]; k++) X[(size_t)i * nv + c[k]] = J[k];
  }
  rl_solve_m(m, d, X, X, nefc);
  for (int i = 0; i < nefc; i++) {
    const real *J = d->efc_J + d->efc_J_rowadr[i];
    const int *c = d->efc_J_colind + d->efc_J_rowadr[i];
    for (int j = 0; j <= i; j++) {
      const real *x = X + (size_t)j * nv;
      real s = 0;
      for (int k = 0; k < d->efc_J_rownnz[i]; k++) s += J[k] * x[c[k]];
      AR[(size_t)i * nefc + j] = AR[(size_t)j * nefc + i] = s;
    }
    AR[(size_t)i * (nefc + 1)] += d->efc_R[i];
  }
}

/* b = J·qacc_smooth − aref */
static void dual_bias(const rl_data *d, real *b) {
  for (int i = 0; i < d->nefc; i++) {
    const real *J = d->efc_J + d->efc_J_rowadr[i];
    const int *c = d->efc_J_colind + d->efc_J_rowadr[i];
    real s = 0;
    for (int k = 0; k < d->efc_J_rownnz[i]; k++) s += J[k] * d->qacc_smooth[c[k]];
    b[i] = s - d->efc_aref[i];
  }
}

/* dual cost ½·fᵀ·AR·f + fᵀ·b */
static real dual_cost(const real *AR, const real *b, const real *f, int nefc) {
  real s = pgs_dot(f, b, nefc), q = 0;
  for (int i = 0; i < nefc; i++) q += f[i] * pgs_dot(AR + (size_t)i * nefc, f, nefc);
  return s + (real)0.5 * q;
}

/* warm start: f = the primal force at jar = J·qacc_warmstart − aref (MuJoCo's mj_constraintUpdate),
   replaced by 0 when its dual cost is positive (worse than f = 0); f = 0 without warm start */
static void warm_start_dual(const rl_model *m, rl_data *d, const real *AR, const real *b, real *jar) {
  int nefc = d->nefc, ok = !(m->opt.disableflags & RL_DSBL_WARMSTART);
  for (int i = 0; i < m->nv && ok; i++)
    if (!rl_isfinite(d->qacc[i])) ok = 0;
  if (ok) {
    for (int i = 0; i < nefc; i++) {
      const real *J = d->efc_J + d->efc_J_rowadr[i];
      const int *c = d->efc_J_colind + d->efc_J_rowadr[i];
      real s = 0;
      for (int k = 0; k < d->efc_J_rownnz[i]; k++) s += J[k] * d->qacc[c[k]];
      jar[i] = s - d->efc_aref[i];
    }
    rl_solver_primal_forces(m, d, jar, d->efc_force, d->efc_state);
    if (dual_cost(AR, b, d->efc_force, nefc) > 0) ok = 0;
  }
  if (!ok) memset(d->efc_force, 0, sizeof(real) * (size_t)nefc);
}

/* dual states (MuJoCo's dualState): equality QUADRATIC; friction LINEARPOS at f ≤ −loss, LINEARNEG at
   f ≥ loss, else QUADRATIC; one-sided rows SATISFIED at f ≤ 0, else QUADRATIC; an elliptic contact in
   regular-cone space (N = f₀/μ, T = ‖f_j/fric_j‖) SATISFIED when μN ≥ T, QUADRATIC when N + μT ≤ 0,
   else CONE.  Returns the active row count (equality, friction and non-SATISFIED rows). */
static int dual_state(const rl_data *d) {
  int ne = d->ne, nf = d->nf, nefc = d->nefc, nactive = ne + nf;
  const real *f = d->efc_force, *fl = d->efc_frictionloss;
  int *st = d->efc_state;
  for (int i = 0; i < ne; i++) st[i] = RL_CNSTRSTATE_QUADRATIC;
  for (int i = ne; i < ne + nf; i++)
    st[i] = f[i] <= -fl[i]  ? RL_CNSTRSTATE_LINEARPOS
            : f[i] >= fl[i] ? RL_CNSTRSTATE_LINEARNEG
                            : RL_CNSTRSTATE_QUADRATIC;
  for (int i = ne + nf; i < nefc; i++) {
    if (d->efc_type[i] != RL_CNSTR_CONTACT_ELLIPTIC) {
      if (f[i] <= 0) {
        st[i] = RL_CNSTRSTATE_SATISFIED;
      } else {
        st[i] = RL_CNSTRSTATE_QUADRATIC;
        nactive++;
      }
      continue;
    }
    const rl_contact *con = d->contact + d->efc_id[i];
    int dim = con->dim, result;
    real mu = con->mu, N = f[i] / mu, T = 0;
    for (int j = 1; j < dim; j++) {
      real t = f[i + j] / con->friction[j - 1];
      T += t * t;
    }
    T = rl_sqrt(T);
    if (mu * N >= T) {
      result = RL_CNSTRSTATE_SATISFIED;
    } else if (N + mu * T <= 0) {
      result = RL_CNSTRSTATE_QUADRATIC;
      nactive += dim;
    } else {
      result = RL_CNSTRSTATE_CONE;
      nactive += dim;
    }
    for (int j = 0; j < dim; j++) st[i + j] = result;
    i += dim - 1;
  }
  return nactive;
}

/* residual of rows i…i+dim−1: res = b + AR·f */
static void residual(const real *AR, const real *b, const real *f, int nefc, int i, int dim, real *res) {
  for (int j = 0; j < dim; j++) res[j] = b[i + j] + pgs_dot(AR + (size_t)(i + j) * nefc, f, nefc);
}

/* cost change of a block step δ = f − f_old: ½·δᵀ·A·δ + δᵀ·res; a rise above 1e-10 undoes the step
   (returns 0) */
static real cost_change(const real *A, real *f, const real *fold, const real *res, int dim) {
  real delta[6], change;
  if (dim == 1) {
    delta[0] = f[0] - fold[0];
    change = (real)0.5 * delta[0] * delta[0] * A[0] + delta[0] * res[0];
  } else {
    for (int j = 0; j < dim; j++) delta[j] = f[j] - fold[j];
    real q = 0;
    for (int j = 0; j < dim; j++) q += delta[j] * pgs_dot(A + j * dim, delta, dim);
    change = (real)0.5 * q + pgs_dot(delta, res, dim);
  }
  if (change > (real)1e-10) {
    memcpy(f, fold, sizeof(real) * (size_t)dim);
    change = 0;
  }
  return change;
}

/* In-place Cholesky L·Lᵀ of the n×n matrix a (lower triangle), pivots below mindiag raised to it;
   returns the rank (n minus the raised pivots) */
static int chol_rank(real *a, int n, real mindiag) {
  int rank = n;
  for (int j = 0; j < n; j++) {
    real t = a[j * (n + 1)] - pgs_dot(a + j * n, a + j * n, j);
    if (t < mindiag) {
      t = mindiag;
      rank--;
    }
    a[j * (n + 1)] = rl_sqrt(t);
    t = 1 / a[j * (n + 1)];
    for (int i = j + 1; i < n; i++) a[i * n + j] = (a[i * n + j] - pgs_dot(a + i * n, a + j * n, j)) * t;
  }
  return rank;
}

/* x = (L·Lᵀ)⁻¹·y */
static void chol_solve(real *x, const real *L, const real *y, int n) {
  for (int i = 0; i < n; i++) x[i] = (y[i] - pgs_dot(L + i * n, x, i)) / L[i * (n + 1)];
  for (int i = n - 1; i >= 0; i--) {
    real s = x[i];
    for (int j = i + 1; j < n; j++) s -= L[j * n + i] * x[j];
    x[i] = s / L[i * (n + 1)];
  }
}

/* The friction subproblem:  minimize ½·xᵀ·A·x + xᵀ·b  subject to  Σ (x_i/d_i)² ≤ r².  With y_i = x_i/d_i
   the set is the ball ‖y‖ ≤ r; y(λ) = −(Â + λI)⁻¹·b̂ (Â = D·A·D, b̂ = D·b) and Newton's method on
   ‖y(λ)‖² − r² = 0 from λ = 0 (derivative −2·yᵀ(Â + λI)⁻¹y), at most 20 steps, stopping when the
   residual or the step is below 1e-10.  Returns 1 when the ellipse constrains (λ > 0).  n = 2 and 3 use
   the explicit inverse (MuJoCo's mju_QCQP2/3), larger n a Cholesky factor (mju_QCQP). */
static int qcqp2(real *res, const real *Ain, const real *bin, const real *d, real r) {
  real b1 = bin[0] * d[0], b2 = bin[1] * d[1];
  real A11 = Ain[0] * d[0] * d[0], A22 = Ain[3] * d[1] * d[1], A12 = Ain[1] * d[0] * d[1];
  real la = 0, v1 = 0, v2 = 0;
  for (int iter = 0; iter < 20; iter++) {
    real det = (A11 + la) * (A22 + la) - A12 * A12;
    if (det < (real)1e-10) {
      res[0] = res[1] = 0;
      return 0;
    }
    real detinv = 1 / det, P11 = (A22 + la) * detinv, P22 = (A11 + la) * detinv, P12 = -A12 * detinv;
    v1 = -P11 * b1 - P12 * b2;
    v2 = -P12 * b1 - P22 * b2;
    real val = v1 * v1 + v2 * v2 - r * r;
    if (val < (real)1e-10) break;
    real deriv = (real)-2.0 * (P11 * v1 * v1 + (real)2.0 * P12 * v1 * v2 + P22 * v2 * v2);
    real delta = -val / deriv;
    if (delta < (real)1e-10) break;
    la += delta;
  }
  res[0] = v1 * d[0];
  res[1] = v2 * d[1];
  return la != 0;
}

static int qcqp3(real *res, const real *Ain, const real *bin, const real *d, real r) {
  real b1 = bin[0] * d[0], b2 = bin[1] * d[1], b3 = bin[2] * d[2];
  real A11 = Ain[0] * d[0] * d[0], A22 = Ain[4] * d[1] * d[1], A33 = Ain[8] * d[2] * d[2];
  real A12 = Ain[1] * d[0] * d[1], A13 = Ain[2] * d[0] * d[2], A23 = Ain[5] * d[1] * d[2];
  real la = 0, v1 = 0, v2 = 0, v3 = 0;
  for (int iter = 0; iter < 20; iter++) {
    real P11 = (A22 + la) * (A33 + la) - A23 * A23;
    real P22 = (A11 + la) * (A33 + la) - A13 * A13;
    real P33 = (A11 + la) * (A22 + la) - A12 * A12;
    real P12 = A13 * A23 - A12 * (A33 + la);
    real P13 = A12 * A23 - A13 * (A22 + la);
    real P23 = A12 * A13 - A23 * (A11 + la);
    real det = (A11 + la) * P11 + A12 * P12 + A13 * P13;
    if (det < (real)1e-10) {
      res[0] = res[1] = res[2] = 0;
      return 0;
    }
    real detinv = 1 / det;
    P11 *= detinv;
    P22 *= detinv;
    P33 *= detinv;
    P12 *= detinv;
    P13 *= detinv;
    P23 *= detinv;
    v1 = -P11 * b1 - P12 * b2 - P13 * b3;
    v2 = -P12 * b1 - P22 * b2 - P23 * b3;
    v3 = -P13 * b1 - P23 * b2 - P33 * b3;
    real val = v1 * v1 + v2 * v2 + v3 * v3 - r * r;
    if (val < (real)1e-10) break;
    real deriv = (real)-2.0 * (P11 * v1 * v1 + P22 * v2 * v2 + P33 * v3 * v3) -
                 (real)4.0 * (P12 * v1 * v2 + P13 * v1 * v3 + P23 * v2 * v3);
    real delta = -val / deriv;
    if (delta < (real)1e-10) break;
    la += delta;
  }
  res[0] = v1 * d[0];
  res[1] = v2 * d[1];
  res[2] = v3 * d[2];
  return la != 0;
}

static int qcqpn(real *res, const real *Ain, const real *bin, const real *d, real r, int n) {
  real A[25], Ala[25], b[5], tmp[5], la = 0;
  for (int i = 0; i < n; i++) {
    b[i] = bin[i] * d[i];
    for (int j = 0; j < n; j++) A[j + i * n] = Ain[j + i * n] * d[i] * d[j];
  }
  for (int iter = 0; iter < 20; iter++) {
    memcpy(Ala, A, sizeof(real) * (size_t)(n * n));
    for (int i = 0; i < n; i++) Ala[i * (n + 1)] += la;
    if (chol_rank(Ala, n, (real)1e-10) < n) {
      memset(res, 0, sizeof(real) * (size_t)n);
      return 0;
    }
    chol_solve(res, Ala, b, n);
    for (int i = 0; i < n; i++) res[i] = -res[i];
    real val = pgs_dot(res, res, n) - r * r;
    if (val < (real)1e-10) break;
    chol_solve(tmp, Ala, res, n);
    real deriv = (real)-2.0 * pgs_dot(res, tmp, n);
    real delta = -val / deriv;
    if (delta < (real)1e-10) break;
    la += delta;
  }
  for (int i = 0; i < n; i++) res[i] *= d[i];
  return la != 0;
}

/* scalar row i: f ← f − res/AR_ii, clamped to [−loss, loss] (friction) or [0, ∞) (limits, contacts) */
static void scalar_step(const rl_data *d, const real *ARinv, int i, real res) {
  real *f = d->efc_force;
  int ne = d->ne, nf = d->nf;
  f[i] -= res * ARinv[i];
  if (i >= ne && i < ne + nf) {
    real fl = d->efc_frictionloss[i];
    if (f[i] < -fl)
      f[i] = -fl;
    else if (f[i] > fl)
      f[i] = fl;
  } else if (i >= ne + nf && f[i] < 0) {
    f[i] = 0;
  }
}

/* elliptic contact block at row i (dim rows, Athis its AR block): the normal or ray step, then the
   friction step with the normal force fixed */
static void cone_step(const rl_data *d, const real *ARinv, const real *Athis, const real *res, const real *fold,
                      int i, int dim) {
  real *f = d->efc_force;
  const real *mu = d->contact[d->efc_id[i]].friction;
  real v[6], v1[6], Ac[25], bc[5];
  if (f[i] < MINVAL) {
    /* no normal force: the normal row's own minimum, friction cleared */
    f[i] -= res[0] * ARinv[i];
    if (f[i] < 0) f[i] = 0;
    for (int j = 1; j < dim; j++) f[i + j] = 0;
  } else {
    /* ray through the current force: f ← f + x·f, x = −fᵀres / fᵀA f, the normal kept ≥ 0 */
    memcpy(v, f + i, sizeof(real) * (size_t)dim);
    for (int j = 0; j < dim; j++) v1[j] = pgs_dot(Athis + j * dim, v, dim);
    real denom = pgs_dot(v, v1, dim);
    if (denom >= MINVAL) {
      real x = -pgs_dot(v, res, dim) / denom;
      if (f[i] + x * v[0] < 0) x = -v[0] / f[i];
      for (int j = 0; j < dim; j++) f[i + j] += x * v[j];
    }
  }
  /* friction: Ac = A_tt, bc = res_t − A_tt·f_t,old + A_tn·(f_n − f_n,old) */
  int n = dim - 1;
  memcpy(bc, res + 1, sizeof(real) * (size_t)n);
  for (int j = 0; j < n; j++) {
    memcpy(Ac + j * n, Athis + (j + 1) * dim + 1, sizeof(real) * (size_t)n);
    bc[j] -= pgs_dot(Ac + j * n, fold + 1, n);
    bc[j] += Athis[(j + 1) * dim] * (f[i] - fold[0]);
  }
  if (f[i] < MINVAL) {
    for (int j = 1; j < dim; j++) f[i + j] = 0;
    return;
  }
  int active = dim == 3 ? qcqp2(v, Ac, bc, mu, f[i]) : dim == 4 ? qcqp3(v, Ac, bc, mu, f[i]) : qcqpn(v, Ac, bc, mu, f[i], n);
  if (active) {
    /* on the ellipse: rescale v onto it (the QCQP's λ iteration is approximate) */
    real s = 0;
    for (int j = 0; j < n; j++) s += v[j] * v[j] / (mu[j] * mu[j]);
    s = f[i] * f[i] / (s > MINVAL ? s : MINVAL);
    s = rl_sqrt(s);
    for (int j = 0; j < n; j++) v[j] *= s;
  }
  memcpy(f + i + 1, v, sizeof(real) * (size_t)n);
}

/* one Gauss–Seidel sweep over the rows; returns the cost decrease */
static real sweep(const rl_data *d, const real *AR, const real *b, const real *ARinv) {
  int nefc = d->nefc;
  real *f = d->efc_force, improvement = 0;
  real Athis[36], res[6], fold[6];
  for (int i = 0; i < nefc; i++) {
    int ell = d->efc_type[i] == RL_CNSTR_CONTACT_ELLIPTIC;
    int dim = ell ? d->contact[d->efc_id[i]].dim : 1;
    residual(AR, b, f, nefc, i, dim, res);
    memcpy(fold, f + i, sizeof(real) * (size_t)dim);
    if (!ell) {
      scalar_step(d, ARinv, i, res[0]);
      Athis[0] = 1 / ARinv[i];
    } else {
      for (int j = 0; j < dim; j++) memcpy(Athis + j * dim, AR + (size_t)(i + j) * nefc + i, sizeof(real) * (size_t)dim);
      cone_step(d, ARinv, Athis, res, fold, i, dim);
    }
    improvement -= cost_change(Athis, f + i, fold, res, dim);
    i += dim - 1;
  }
  return improvement;
}

/* qfrc_constraint = Jᵀ·f, qacc = qacc_smooth + M⁻¹·qfrc_constraint */
static void dual_finish(const rl_model *m, rl_data *d) {
  int nv = m->nv;
  memset(d->qfrc_constraint, 0, sizeof(real) * (size_t)nv);
  for (int r = 0; r < d->nefc; r++) {
    const real *J = d->efc_J + d->efc_J_rowadr[r];
    const int *c = d->efc_J_colind + d->efc_J_rowadr[r];
    for (int k = 0; k < d->efc_J_rownnz[r]; k++) d->qfrc_constraint[c[k]] += J[k] * d->efc_force[r];
  }
  rl_solve_m(m, d, d->qacc, d->qfrc_constraint, 1);
  for (int i = 0; i < nv; i++) d->qacc[i] += d->qacc_smooth[i];
}

int rl_solve_pgs(const rl_model *m, rl_data *d) {
  int nv = m->nv, nefc = d->nefc, maxiter = m->opt.iterations;
  size_t mark = rl_arena_mark(d);
  real *AR = rl_arena_take(d, (size_t)nefc * (size_t)nefc);
  real *X = rl_arena_take(d, (size_t)nefc * (size_t)nv);
  real *b = rl_arena_take(d, (size_t)nefc);
  real *ARinv = rl_arena_take(d, (size_t)nefc);
  int *oldstate = (int *)(void *)rl_arena_take(d, (size_t)nefc);
  if (!oldstate) {
    /* arena too small (cannot happen when sized by rl_solver_arena): unconstrained answer, flagged */
    rl_arena_release(d, mark);
    memcpy(d->qacc, d->qacc_smooth, sizeof(real) * (size_t)nv);
    memset(d->qfrc_constraint, 0, sizeof(real) * (size_t)nv);
    d->solver_iter = 0;
    d->solver_converged = 0;
    d->warning[RL_WARN_BADQACC]++;
    return -1;
  }
  dual_matrix(m, d, AR, X);
  dual_bias(d, b);
  for (int i = 0; i < nefc; i++) ARinv[i] = 1 / AR[(size_t)i * (nefc + 1)];
  warm_start_dual(m, d, AR, b, X);
  dual_state(d);
  real scale = rl_solver_meaninertia(m) * (nv > 1 ? nv : 1);
  int iter = 0;
  d->solver_converged = 0;
  while (iter < maxiter) {
    real improvement = sweep(d, AR, b, ARinv);
    memcpy(oldstate, d->efc_state, sizeof(int) * (size_t)nefc);
    int nactive = dual_state(d), nchange = 0;
    for (int i = 0; i < nefc; i++) nchange += oldstate[i] != d->efc_state[i];
    improvement /= scale;
    if (iter < RL_NSOLVER) {
      rl_solver_stat *s = d->solver + iter;
      memset(s, 0, sizeof *s);
      s->improvement = improvement;
      s->nactive = nactive;
      s->nchange = nchange;
    }
    iter++;
    if (improvement < m->opt.tolerance) {
      d->solver_converged = 1;
      break;
    }
  }
  d->solver_iter = iter;
  dual_finish(m, d);
  rl_arena_release(d, mark);
  return 0;
}

/* ------------------------------------------------------------------ noslip */

/* the n×n block of A = AR − diag(R) at rows i…, its diagonal raised to at least 1e-10 */
static void block_noR(const rl_data *d, const real *AR, int i, int n, real *Ac) {
  int nefc = d->nefc;
  for (int j = 0; j < n; j++) memcpy(Ac + j * n, AR + (size_t)(i + j) * nefc + i, sizeof(real) * (size_t)n);
  for (int j = 0; j < n; j++) {
    Ac[j * (n + 1)] -= d->efc_R[i + j];
    if (Ac[j * (n + 1)] < (real)1e-10) Ac[j * (n + 1)] = (real)1e-10;
  }
}

/* residual without the regularizer: res = b + (AR − diag(R))·f on rows i…i+n−1 */
static void residual_noR(const rl_data *d, const real *AR, const real *b, int i, int n, real *res) {
  residual(AR, b, d->efc_force, d->nefc, i, n, res);
  for (int j = 0; j < n; j++) res[j] -= d->efc_R[i + j] * d->efc_force[i + j];
}

/* one noslip pair of opposing pyramid edges j, j+1 with the sum f_j + f_{j+1} = 2·mid fixed:
   f = (mid + y, mid − y), y minimizing K1·y²/2 + K0·y on [−mid, mid] */
static real pyramid_pair(rl_data *d, const real *AR, const real *b, int j) {
  real *f = d->efc_force, res[2], fold[2], Ac[4], bc[2];
  residual_noR(d, AR, b, j, 2, res);
  fold[0] = f[j];
  fold[1] = f[j + 1];
  block_noR(d, AR, j, 2, Ac);
  for (int k = 0; k < 2; k++) bc[k] = res[k] - pgs_dot(Ac + k * 2, fold, 2);
  real mid = (real)0.5 * (f[j] + f[j + 1]);
  real K1 = Ac[0] + Ac[3] - Ac[1] - Ac[2], K0 = mid * (Ac[0] - Ac[3]) + bc[0] - bc[1];
  if (K1 < MINVAL) {
    f[j] = f[j + 1] = mid;
  } else {
    real y = -K0 / K1;
    if (y < -mid) {
      f[j] = 0;
      f[j + 1] = 2 * mid;
    } else if (y > mid) {
      f[j] = 2 * mid;
      f[j + 1] = 0;
    } else {
      f[j] = mid + y;
      f[j + 1] = mid - y;
    }
  }
  return cost_change(Ac, f + j, fold, res, 2);
}

/* the friction rows i+1… of an elliptic contact with its normal force fixed: the QCQP on the ellipse */
static real ellipse_friction(rl_data *d, const real *AR, const real *b, int i) {
  real *f = d->efc_force, res[5], fold[5], Ac[25], bc[5], v[5];
  const rl_contact *con = d->contact + d->efc_id[i];
  int n = con->dim - 1;
  const real *mu = con->friction;
  residual_noR(d, AR, b, i + 1, n, res);
  memcpy(fold, f + i + 1, sizeof(real) * (size_t)n);
  block_noR(d, AR, i + 1, n, Ac);
  for (int j = 0; j < n; j++) bc[j] = res[j] - pgs_dot(Ac + j * n, fold, n);
  if (f[i] < MINVAL) {
    for (int j = 0; j < n; j++) f[i + 1 + j] = 0;
  } else {
    int active = n == 2 ? qcqp2(v, Ac, bc, mu, f[i]) : n == 3 ? qcqp3(v, Ac, bc, mu, f[i]) : qcqpn(v, Ac, bc, mu, f[i], n);
    if (active) {
      real s = 0;
      for (int j = 0; j < n; j++) s += v[j] * v[j] / (mu[j] * mu[j]);
      s = rl_sqrt(f[i] * f[i] / (s > MINVAL ? s : MINVAL));
      for (int j = 0; j < n; j++) v[j] *= s;
    }
    memcpy(f + i + 1, v, sizeof(real) * (size_t)n);
  }
  return cost_change(Ac, f + i + 1, fold, res, n);
}

int rl_solve_noslip(const rl_model *m, rl_data *d) {
  int nv = m->nv, nefc = d->nefc, ne = d->ne, nf = d->nf, maxiter = m->opt.noslip_iterations;
  size_t mark = rl_arena_mark(d);
  real *AR = rl_arena_take(d, (size_t)nefc * (size_t)nefc);
  real *X = rl_arena_take(d, (size_t)nefc * (size_t)nv);
  real *b = rl_arena_take(d, (size_t)nefc);
  real *Ainv = rl_arena_take(d, (size_t)nefc);
  int *oldstate = (int *)(void *)rl_arena_take(d, (size_t)nefc);
  if (!oldstate) {
    rl_arena_release(d, mark);
    d->warning[RL_WARN_BADQACC]++;
    return -1;
  }
  real *f = d->efc_force;
  dual_matrix(m, d, AR, X);
  dual_bias(d, b);
  for (int i = 0; i < nefc; i++) {
    real a = AR[(size_t)i * (nefc + 1)] - d->efc_R[i];
    Ainv[i] = 1 / (a > MINVAL ? a : MINVAL);
  }
  dual_state(d);
  real scale = rl_solver_meaninertia(m) * (nv > 1 ? nv : 1);
  int iter = 0, base = d->solver_iter;
  while (iter < maxiter) {
    real improvement = 0;
    /* the first sweep's cost also loses the regularizer's ½·R·f² */
    if (iter == 0)
      for (int i = 0; i < nefc; i++) improvement += (real)0.5 * f[i] * f[i] * d->efc_R[i];
    /* dry friction rows: scalar steps on A = AR − R, clamped to ±loss */
    for (int i = ne; i < ne + nf; i++) {
      real res, fold = f[i];
      residual_noR(d, AR, b, i, 1, &res);
      f[i] -= res * Ainv[i];
      real fl = d->efc_frictionloss[i];
      if (f[i] < -fl)
        f[i] = -fl;
      else if (f[i] > fl)
        f[i] = fl;
      real delta = f[i] - fold;
      improvement -= (real)0.5 * delta * delta / Ainv[i] + delta * res;
    }
    /* contact friction: pyramid edge pairs, or the elliptic friction block */
    for (int i = ne + nf; i < nefc; i++) {
      if (d->efc_type[i] == RL_CNSTR_CONTACT_PYRAMIDAL) {
        int dim = d->contact[d->efc_id[i]].dim;
        for (int j = i; j < i + 2 * (dim - 1); j += 2) improvement -= pyramid_pair(d, AR, b, j);
        i += 2 * (dim - 1) - 1;
      } else if (d->efc_type[i] == RL_CNSTR_CONTACT_ELLIPTIC) {
        improvement -= ellipse_friction(d, AR, b, i);
        i += d->contact[d->efc_id[i]].dim - 1;
      }
    }
    memcpy(oldstate, d->efc_state, sizeof(int) * (size_t)nefc);
    int nactive = dual_state(d), nchange = 0;
    for (int i = 0; i < nefc; i++) nchange += oldstate[i] != d->efc_state[i];
    improvement /= scale;
    if (base + iter < RL_NSOLVER) {
      rl_solver_stat *st = d->solver + base + iter;
      memset(st, 0, sizeof *st);
      st->improvement = improvement;
      st->nactive = nactive;
      st->nchange = nchange;
    }
    iter++;
    if (improvement < m->opt.noslip_tolerance) break;
  }
  d->solver_iter = base + iter;
  dual_finish(m, d);
  rl_arena_release(d, mark);
  return 0;
}
