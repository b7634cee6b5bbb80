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

/* ------------------------------------------------------------------------------------------------
 * Tree Cholesky: H = Lᵀ·L with L(k, i) ≠ 0 only for i = k or i an ancestor of k in the tree `parent`, row k
 * at adr[k]: L(k,k), L(k,parent(k)), L(k,parent(parent(k))), … (for the dof tree: qM's layout).  It is the
 * dense Cholesky of H with every dof eliminated before its ancestors (order), which creates no fill in a matrix
 * whose entries pair a dof with its ancestors only, so every operation on a structural zero is skipped. */

/* entries of row k: k and its ancestors */
static int trow_len(const rl_tfactor *f, int k) { return f->adr[k + 1] - f->adr[k]; }

/* row i −= l·(row k's tail): the ancestor i's row and the tail of row k holding the same columns (i and its
   ancestors) are disjoint stretches of L */
static void trow_sub_scaled(real *restrict rowi, const real *restrict tail, real l, int n) {
  for (int s = 0; s < n; s++) rowi[s] -= l * tail[s];
}

/* From the leaves (in order): L(k,k) = sqrt(max(mindiag, H(k,k))), L(k,i) = H(k,i)·(1/L(k,k)) for the ancestors
   i of k, then the Schur complement H(i,j) −= L(k,i)·L(k,j) for every ancestor pair j of i (j = i included);
   inv(k) = 1/L(k,k) for the solves. */
int rl_tfactor_factor(rl_tfactor *f, real mindiag) {
  int rank = f->n;
  real *L = f->L;
  for (int o = 0; o < f->n; o++) {
    int k = f->order[o];
    int a = f->adr[k], len = trow_len(f, k);
    real s = L[a];
    if (s < mindiag) {
      s = mindiag;
      rank--;
    }
    real lkk = rl_sqrt(s), inv = 1 / lkk;
    L[a] = lkk;
    f->inv[k] = inv;
    for (int t = 1; t < len; t++) L[a + t] *= inv;
    for (int t = 1; t < len; t++) trow_sub_scaled(L + f->adr[f->col[a + t]], L + a + t, L[a + t], len - t);
  }
  return rank;
}

/* Lᵀ·y = x from the leaves (y_k = x_k·inv(k), then x_i −= L(k,i)·y_k for the ancestors i), then L·x = y from
   the root (x_k = (y_k − Σ_i L(k,i)·x_i)·inv(k)); inv(k) = 1/L(k,k) */
void rl_tfactor_solve(const rl_tfactor *f, real *x) {
  const real *L = f->L;
  const int *col = f->col;
  for (int o = 0; o < f->n; o++) {
    int k = f->order[o];
    real xk = x[k] *= f->inv[k];
    if (xk == 0) continue;
    for (int a = f->adr[k] + 1, end = f->adr[k + 1]; a < end; a++) x[col[a]] -= L[a] * xk;
  }
  for (int o = f->n - 1; o >= 0; o--) {
    int k = f->order[o];
    real s = x[k];
    for (int a = f->adr[k] + 1, end = f->adr[k + 1]; a < end; a++) s -= L[a] * x[col[a]];
    x[k] = s * f->inv[k];
  }
}

/* The rotations of rl_hfactor_update in the reverse order, column k = the dofs from `last` to the root:
   r = sqrt(L_kk² ± v_k²), c = r/L_kk, s = v_k/L_kk;  L_kk = r, inv(k) = 1/r;  L(k,i) = (L(k,i) ± s·v_i)/c,
   v_i = c·v_i − s·L(k,i) for the ancestors i of k.  v (nonzero only on last's chain) is zero on return. */
int rl_tfactor_update(rl_tfactor *f, real *v, int last, int plus) {
  int rank = f->n;
  const real minval = (real)1e-15;
  real *L = f->L;
  for (int k = last; k >= 0; k = f->parent[k]) {
    if (v[k] == 0) continue;
    real *Lk = L + f->adr[k];
    real tmp = plus ? Lk[0] * Lk[0] + v[k] * v[k] : Lk[0] * Lk[0] - v[k] * v[k];
    if (tmp < minval) {
      tmp = minval;
      rank--;
    }
    real r = rl_sqrt(tmp), c = r / Lk[0], cinv = 1 / c, s = v[k] / Lk[0];
    Lk[0] = r;
    f->inv[k] = 1 / r;
    v[k] = 0;
    const int *col = f->col + f->adr[k];
    for (int t = 1, len = trow_len(f, k); t < len; t++) rotate_entry(Lk + t, v + col[t], c, cinv, s, plus);
  }
  return rank;
}
