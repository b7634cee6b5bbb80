/* solver_factor.c — envelope (skyline) Cholesky with rank-1 updates (see rl_solver.h).
 *
 * With first[i] = 0 for all rows this is the dense lower-triangular Cholesky MuJoCo's Newton solver
 * uses (mju_cholFactor / mju_cholUpdate); with first[i] = the lowest column row i can ever couple to
 * (its dof-tree root, or the lowest column of any constraint row touching dof i) it is a skyline
 * factorization whose work is Σ width² instead of n³/3. */
#include "rl_engine.h"

#define AT(f, i, j) ((f)->L[(f)->adr[i] + (j) - (f)->first[i]])

/* adr[i] = Σ_{r<i} (r − first_r + 1); colend[k] = max{ j : first_j ≤ k } (prefix max of the last row
   starting at each column), the last row whose envelope holds column k. */
size_t rl_hfactor_layout(rl_hfactor *f, int n, const int *first, int *adr) {
  f->n = n;
  f->first = first;
  f->adr = adr;
  int *colend = adr + n + 1;
  f->colend = colend;
  f->cadr = f->crow = NULL;
  adr[0] = 0;
  for (int i = 0; i < n; i++) {
    adr[i + 1] = adr[i] + (i - first[i] + 1);
    colend[i] = i;
  }
  for (int j = 0; j < n; j++)
    if (colend[first[j]] < j) colend[first[j]] = j;
  for (int k = 1; k < n; k++)
    if (colend[k] < colend[k - 1]) colend[k] = colend[k - 1];
  return (size_t)adr[n];
}

/* Column lists of the envelope: column k holds row j > k exactly when first[j] ≤ k.  Counted per column,
   prefix-summed into cadr, then filled with the rows in ascending order. */
void rl_hfactor_columns(rl_hfactor *f, int *cadr, int *crow) {
  int n = f->n;
  for (int k = 0; k <= n; k++) cadr[k] = 0;
  for (int j = 0; j < n; j++)
    for (int k = f->first[j]; k < j; k++) cadr[k + 1]++;
  for (int k = 0; k < n; k++) cadr[k + 1] += cadr[k];
  for (int j = 0; j < n; j++)
    for (int k = f->first[j]; k < j; k++) crow[cadr[k]++] = j;
  for (int k = n; k > 0; k--) cadr[k] = cadr[k - 1];
  cadr[0] = 0;
  f->cadr = cadr;
  f->crow = crow;
}

/* Row-oriented Cholesky restricted to the envelope:
   L(i,j) = (A(i,j) − Σ_{k=max(first_i, first_j)}^{j−1} L(i,k)·L(j,k)) / L(j,j),
   L(i,i) = sqrt(max(mindiag, A(i,i) − Σ_{k<i} L(i,k)²)). */
int rl_hfactor_factor(rl_hfactor *f, real mindiag) {
  int rank = f->n;
  for (int i = 0; i < f->n; i++) {
    int fi = f->first[i];
    real *Li = f->L + f->adr[i] - fi;
    for (int j = fi; j <= i; j++) {
      int fj = f->first[j];
      const real *Lj = f->L + f->adr[j] - fj;
      int k0 = fi > fj ? fi : fj;
      real s = Li[j];
      for (int k = k0; k < j; k++) s -= Li[k] * Lj[k];
      if (j < i) {
        Li[j] = s / Lj[j];
      } else {
        if (s < mindiag) {
          s = mindiag;
          rank--;
        }
        Li[i] = rl_sqrt(s);
      }
    }
  }
  return rank;
}

/* L·y = x (forward), Lᵀ·x = y (backward, column sweep over the rows' envelopes) */
void rl_hfactor_solve(const rl_hfactor *f, real *x) {
  int n = f->n;
  for (int i = 0; i < n; i++) {
    const real *Li = f->L + f->adr[i] - f->first[i];
    real s = x[i];
    for (int k = f->first[i]; k < i; k++) s -= Li[k] * x[k];
    x[i] = s / Li[i];
  }
  for (int i = n - 1; i >= 0; i--) {
    const real *Li = f->L + f->adr[i] - f->first[i];
    x[i] /= Li[i];
    real xi = x[i];
    for (int k = f->first[i]; k < i; k++) x[k] -= Li[k] * xi;
  }
}

/* one entry of the rotation below: L_jk = (L_jk ± s·v_j)/c, then v_j = c·v_j − s·L_jk */
static inline void rotate_entry(real *Ljk, real *vj, real c, real cinv, real s, int plus) {
  *Ljk = plus ? (*Ljk + s * *vj) * cinv : (*Ljk - s * *vj) * cinv;
  *vj = c * *vj - s * *Ljk;
}

/* Rank-1 update by rotations (LINPACK dchud/dchdd as MuJoCo's mju_cholUpdate), column k:
   r = sqrt(L_kk² ± v_k²), c = r/L_kk, s = v_k/L_kk;  L_kk = r;
   L_jk = (L_jk ± s·v_j)/c,  v_j = c·v_j − s·L_jk   for j > k inside the envelope. */
int rl_hfactor_update(rl_hfactor *f, real *v, int plus) {
  int n = f->n, rank = n;
  const real minval = (real)1e-15;
  for (int k = 0; k < n; k++) {
    if (v[k] == 0) continue;
    real Lkk = AT(f, k, k);
    real tmp = plus ? Lkk * Lkk + v[k] * v[k] : Lkk * Lkk - v[k] * v[k];
    if (tmp < minval) {
      tmp = minval;
      rank--;
    }
    real r = rl_sqrt(tmp), c = r / Lkk, cinv = 1 / c, s = v[k] / Lkk;
    AT(f, k, k) = r;
    if (f->crow) {
      for (int p = f->cadr[k], end = f->cadr[k + 1]; p < end; p++)
        rotate_entry(&AT(f, f->crow[p], k), &v[f->crow[p]], c, cinv, s, plus);
      continue;
    }
    for (int j = k + 1, end = f->colend[k]; j <= end; j++) {
      if (f->first[j] > k) continue;
      rotate_entry(&AT(f, j, k), &v[j], c, cinv, s, plus);
    }
  }
  return rank;
}
