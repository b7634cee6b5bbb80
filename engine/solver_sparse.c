/* solver_sparse.c — Newton's Hessian H = M + JᵀDJ (+ cone blocks) by CHOLMOD's sparse Cholesky
 * (see rl_solver.h, "Sparse Cholesky").
 *
 * Pattern: the upper triangle of H holds M's entries (every dof with each of its ancestors) and, for every
 * row block (an elliptic contact's rows; any other row alone), every pair of the columns its rows touch.
 * The pattern therefore does not depend on the rows' states: it is built once per solve, and CHOLMOD's
 * symbolic analysis (fill-reducing ordering, elimination tree, supernodes) is redone only when it differs
 * from the last solve's.  Values are assembled through a position table built with the pattern, then
 * factored numerically (H = L·Lᵀ).  CHOLMOD chooses the kernel from its analysis: supernodal (BLAS-3 on
 * dense column blocks) when the flop count per factor entry is at least its supernodal_switch (40), the
 * simplicial row factorization otherwise; on a few hundred dofs coupled by sparse contact rows (100
 * humanoids piled) the supernodal kernels' per-supernode overhead cost 3× the simplicial factorization.
 *
 * CHOLMOD 3 computes in double only: the f32 engine assembles its float rows into the double matrix and
 * rounds the solution back to float (the factor is more accurate than f32 would be, never less). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <suitesparse/cholmod.h>
#include "rl_engine.h"
#ifdef __GLIBC__
#include <malloc.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

/* the analyses that order by NESDIS alone after it was kept over AMD, before both are compared again */
#define SPARSE_NESDIS_KEEP 7

/* one row block: rows r0 … r0+nrow−1, the u sorted columns they touch at col[cadr…], the positions in A->x
   of the upper-triangle pairs (a ≤ b) of those columns at pos[padr…], packed column by column */
typedef struct sp_block {
  int r0, nrow, u, cadr;
  size_t padr;
} sp_block;

struct rl_sparse {
  cholmod_common c;
  cholmod_sparse *A;            /* upper triangle of H (stype 1) */
  cholmod_factor *L;            /* the analysis of A's pattern; numeric after a factorization */
  cholmod_factor *Lu;           /* NULL, or L's values as a simplicial LDLᵀ with rank-1 updates since (solves use it) */
  cholmod_dense *B, *X, *Y, *E; /* solve workspace */
  int n;
  int *mark;             /* n: scratch map column → slot */
  int *Mpos;             /* nM: position of qM's entries in A->x */
  int nblock, *rowblock; /* rowblock[r]: the block of row r */
  sp_block *block;
  int *col; /* the blocks' columns */
  int *pos; /* the blocks' pair positions */
  size_t cap_rows, cap_block, cap_col, cap_pos, cap_M;
  double *w; /* n: a row block expanded onto its columns (nrow × u) */
  size_t cap_w;
  int nesdis_kept; /* 0, or 1 + the analyses since NESDIS was last kept over AMD (analyze_ordered) */
  long analyses, factorizations, updowns;
};

/* grow *p to hold n items of size sz; 0 or −1 out of memory */
static int grow(void **p, size_t *cap, size_t n, size_t sz) {
  if (n <= *cap) return 0;
  size_t c = n + n / 2 + 16;
  void *q = realloc(*p, c * sz);
  if (!q) return -1;
  *p = q;
  *cap = c;
  return 0;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Freed memory stays in the process.  CHOLMOD allocates its supernodal update workspace (MBs) on every
   numeric factorization, and the simplicial copy that rank-1 updates work on (tens of MB) after it; glibc
   gives a freed block above its mmap threshold, and a free heap top above its trim threshold, back to the
   kernel, so every factorization faulted the same pages in again (the 1000-sphere pile: a third of the
   factorization's time in the kernel's page-fault handler).  Set once per process, when the first sparse
   factorization is set up (mallopt is process-wide; glibc only). */
static void allocator_keep_freed_memory(void) {
#ifdef __GLIBC__
  static _Atomic int done;
  if (done++) return;
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

/* Relaxed supernodes: CHOLMOD merges a column into its parent's supernode (storing some zeros as entries) when
   the merged supernode has < nrelax[0] columns, or < nrelax[1] columns and zeros ≤ zrelax[0], < nrelax[2] and
   ≤ zrelax[1], any size and ≤ zrelax[2].  Raising the size bounds from CHOLMOD's 4, 16, 48 to 6, 24, 64 gives the
   BLAS fewer, larger blocks: a pile's factorization −5.7 % (500 spheres), −4.0 % (1000), −2.0 % (2000)
   instructions (callgrind, one factorization of a step's H, NESDIS ordering); 8, 32, 96 with zrelax 0.8, 0.2, 0.1
   and 16, 64, 128 with 0.8, 0.3, 0.1 store more zeros than they save (1000 spheres +1.4 %, +10 %). */
static void supernodes_relaxed(cholmod_common *c) {
  c->nrelax[0] = 6;
  c->nrelax[1] = 24;
  c->nrelax[2] = 64;
}

static rl_sparse *sparse_get(rl_data *d, int n) {
  rl_sparse *s = d->sparse;
  if (s && s->n == n) return s;
  rl_sparse_free(d);
  s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->n = n;
  s->mark = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
  if (!s->mark) {
    free(s);
    return NULL;
  }
  for (int i = 0; i < n; i++) s->mark[i] = -1;
  allocator_keep_freed_memory();
  cholmod_start(&s->c);
  s->c.print = 0;
  s->c.error_handler = NULL;
  s->c.supernodal = CHOLMOD_AUTO; /* supernodal only where the supernodes are dense enough to pay */
  supernodes_relaxed(&s->c);
  s->c.final_ll = 1;
  d->sparse = s;
  return s;
}

void rl_sparse_free(rl_data *d) {
  rl_sparse *s = d->sparse;
  if (!s) return;
  cholmod_free_sparse(&s->A, &s->c);
  cholmod_free_factor(&s->L, &s->c);
  cholmod_free_factor(&s->Lu, &s->c);
  cholmod_free_dense(&s->B, &s->c);
  cholmod_free_dense(&s->X, &s->c);
  cholmod_free_dense(&s->Y, &s->c);
  cholmod_free_dense(&s->E, &s->c);
  cholmod_finish(&s->c);
  free(s->mark);
  free(s->Mpos);
  free(s->rowblock);
  free(s->block);
  free(s->col);
  free(s->pos);
  free(s->w);
  free(s);
  d->sparse = NULL;
}

/* 1 when rows a and b of J have the same column list (a pyramidal contact's rows, for one) */
static int same_columns(const rl_data *d, int a, int b) {
  int n = d->efc_J_rownnz[a];
  return n == d->efc_J_rownnz[b] &&
         !memcmp(d->efc_J_colind + d->efc_J_rowadr[a], d->efc_J_colind + d->efc_J_rowadr[b], sizeof(int) * (size_t)n);
}

/* Row blocks of d's rows and their sorted column unions (an elliptic contact: its dim rows; a run of rows
   with the same column list, such as a pyramidal contact's: one block, whose pairs are then built once) */
static int blocks_build(rl_sparse *s, const rl_data *d) {
  int nefc = d->nefc;
  if (grow((void **)&s->rowblock, &s->cap_rows, (size_t)nefc, sizeof(int)) ||
      grow((void **)&s->block, &s->cap_block, (size_t)nefc, sizeof(sp_block)))
    return -1;
  s->nblock = 0;
  int ncol = 0;
  for (int r = 0; r < nefc;) {
    int elliptic = d->efc_type[r] == RL_CNSTR_CONTACT_ELLIPTIC;
    int nr = elliptic ? d->contact[d->efc_id[r]].dim : 1;
    if (r + nr > nefc) nr = nefc - r;
    if (!elliptic && s->nblock > 0 && same_columns(d, s->block[s->nblock - 1].r0, r) &&
        d->efc_type[s->block[s->nblock - 1].r0] != RL_CNSTR_CONTACT_ELLIPTIC) {
      s->rowblock[r] = s->nblock - 1;
      s->block[s->nblock - 1].nrow++;
      r++;
      continue;
    }
    sp_block *b = &s->block[s->nblock];
    b->r0 = r;
    b->nrow = nr;
    b->cadr = ncol;
    b->u = 0;
    for (int k = 0; k < nr; k++) {
      int rr = r + k, adr = d->efc_J_rowadr[rr];
      s->rowblock[rr] = s->nblock;
      if (grow((void **)&s->col, &s->cap_col, (size_t)(ncol + b->u + d->efc_J_rownnz[rr]), sizeof(int))) return -1;
      for (int p = 0; p < d->efc_J_rownnz[rr]; p++) {
        int cidx = d->efc_J_colind[adr + p];
        if (s->mark[cidx] == s->nblock) continue;
        s->mark[cidx] = s->nblock;
        s->col[ncol + b->u++] = cidx;
      }
    }
    for (int k = 0; k < b->u; k++) s->mark[s->col[ncol + k]] = -1;
    qsort(s->col + ncol, (size_t)b->u, sizeof(int), cmp_int);
    ncol += b->u;
    s->nblock++;
    r += nr;
  }
  return 0;
}

/* the upper-triangle pattern of H as a CHOLMOD matrix (triplets → sorted, duplicates merged) */
static cholmod_sparse *pattern_build(rl_sparse *s, const rl_model *m) {
  size_t nt = (size_t)m->nM;
  for (int k = 0; k < s->nblock; k++) nt += (size_t)s->block[k].u * (size_t)(s->block[k].u + 1) / 2;
  cholmod_triplet *T = cholmod_allocate_triplet((size_t)s->n, (size_t)s->n, nt, 1, CHOLMOD_PATTERN, &s->c);
  if (!T) return NULL;
  int *ti = T->i, *tj = T->j;
  size_t t = 0;
  for (int i = 0; i < m->nv; i++)
    for (int j = i; j >= 0; j = m->dof_parentid[j]) ti[t] = j, tj[t++] = i;
  for (int k = 0; k < s->nblock; k++) {
    const int *c = s->col + s->block[k].cadr;
    for (int b = 0; b < s->block[k].u; b++)
      for (int a = 0; a <= b; a++) ti[t] = c[a], tj[t++] = c[b];
  }
  T->nnz = t;
  cholmod_sparse *A = cholmod_triplet_to_sparse(T, 0, &s->c);
  cholmod_free_triplet(&T, &s->c);
  if (!A) return NULL;
  /* a pattern matrix cannot be factored: give it its values */
  if (!cholmod_sparse_xtype(CHOLMOD_REAL, A, &s->c)) {
    cholmod_free_sparse(&A, &s->c);
    return NULL;
  }
  return A;
}

/* 1 when A and B have the same pattern */
static int same_pattern(const cholmod_sparse *A, const cholmod_sparse *B) {
  if (!A || !B || A->ncol != B->ncol) return 0;
  const int *pa = A->p, *pb = B->p;
  size_t n = A->ncol;
  if (memcmp(pa, pb, sizeof(int) * (n + 1))) return 0;
  return !memcmp(A->i, B->i, sizeof(int) * (size_t)pa[n]);
}

/* positions in A->x of qM's entries and of every block's column pairs: column j's rows scattered into
   mark, then looked up */
static int positions_build(rl_sparse *s, const rl_model *m) {
  const int *Ap = s->A->p, *Ai = s->A->i;
  size_t np = 0;
  for (int k = 0; k < s->nblock; k++) {
    s->block[k].padr = np;
    np += (size_t)s->block[k].u * (size_t)(s->block[k].u + 1) / 2;
  }
  if (grow((void **)&s->pos, &s->cap_pos, np, sizeof(int)) ||
      grow((void **)&s->Mpos, &s->cap_M, (size_t)m->nM, sizeof(int)))
    return -1;
  for (int i = 0; i < m->nv; i++) {
    for (int p = Ap[i]; p < Ap[i + 1]; p++) s->mark[Ai[p]] = p;
    int a = m->dof_Madr[i];
    for (int j = i; j >= 0; j = m->dof_parentid[j]) s->Mpos[a++] = s->mark[j];
    for (int p = Ap[i]; p < Ap[i + 1]; p++) s->mark[Ai[p]] = -1;
  }
  for (int k = 0; k < s->nblock; k++) {
    const sp_block *b = &s->block[k];
    const int *c = s->col + b->cadr;
    int *pos = s->pos + b->padr;
    for (int q = 0; q < b->u; q++) {
      int j = c[q];
      for (int p = Ap[j]; p < Ap[j + 1]; p++) s->mark[Ai[p]] = p;
      for (int a = 0; a <= q; a++) *pos++ = s->mark[c[a]];
      for (int p = Ap[j]; p < Ap[j + 1]; p++) s->mark[Ai[p]] = -1;
    }
  }
  return 0;
}

/* CHOLMOD's analysis of A with its nested dissection ordering alone (NESDIS: METIS bisection with a constrained
   minimum degree on the parts) */
static cholmod_factor *analyze_nesdis(rl_sparse *s) {
  int nmethods = s->c.nmethods;
  struct cholmod_method_struct m0 = s->c.method[0];
  s->c.nmethods = 1;
  s->c.method[0].ordering = CHOLMOD_NESDIS;
  cholmod_factor *N = cholmod_analyze(s->A, &s->c);
  s->c.nmethods = nmethods;
  s->c.method[0] = m0;
  return N;
}

/* Symbolic analysis of A's pattern with the cheaper of two fill-reducing orderings.  CHOLMOD's default
   strategy orders by AMD (minimum degree), and by METIS too only when AMD's fill is large.  When AMD's
   factorization would take ≥ 5e7 flops, NESDIS is tried as well and the ordering with fewer flops kept:
   its analysis costs ~2× AMD's, and on piles of spheres it cuts the flops by 18 % (500 spheres) and 25 %
   (1000; 4.0e8 → 3.0e8), each analysis being followed by several numeric factorizations (callgrind, 3
   steps: the step's instructions −6 % and −11 %; at 250 spheres, 1.5e7 flops, it would cost +4 %).
   A pile's pattern changes at every step (new contact pairs) but not its character: once NESDIS was kept,
   the next SPARSE_NESDIS_KEEP analyses order by NESDIS alone, without AMD's (a third of the analysis on the
   1000-sphere pile), and the one after compares both again.  Leaves s->c.fl and s->c.lnz at the kept
   ordering's counts. */
static cholmod_factor *analyze_ordered(rl_sparse *s) {
  if (s->nesdis_kept > 0 && s->nesdis_kept <= SPARSE_NESDIS_KEEP) {
    cholmod_factor *N = analyze_nesdis(s);
    s->nesdis_kept++;
    if (N) return N;
  }
  s->nesdis_kept = 0;
  cholmod_factor *L = cholmod_analyze(s->A, &s->c);
  if (!L || s->c.fl < 5e7) return L;
  double fl = s->c.fl, lnz = s->c.lnz;
  cholmod_factor *N = analyze_nesdis(s);
  if (N && s->c.fl < fl) {
    cholmod_free_factor(&L, &s->c);
    s->nesdis_kept = 1;
    return N;
  }
  cholmod_free_factor(&N, &s->c);
  s->c.fl = fl;
  s->c.lnz = lnz;
  return L;
}

int rl_sparse_analyse(const rl_model *m, rl_data *d, double *flops) {
  rl_sparse *s = sparse_get(d, m->nv);
  if (!s || blocks_build(s, d)) return -1;
  cholmod_sparse *A = pattern_build(s, m);
  if (!A) return -1;
  if (same_pattern(A, s->A) && s->L) {
    cholmod_free_sparse(&A, &s->c);
  } else {
    cholmod_free_sparse(&s->A, &s->c);
    cholmod_free_factor(&s->L, &s->c);
    cholmod_free_factor(&s->Lu, &s->c);
    s->A = A;
    s->L = analyze_ordered(s);
    if (!s->L) return -1;
    s->analyses++;
  }
  if (positions_build(s, m)) return -1;
  /* the numeric factorization's flop count, Σ_j (column count of L_j)² (CHOLMOD's analysis) */
  if (flops) *flops = s->c.fl;
  return 0;
}

/* A->x ← the upper triangle of M (qM through Mpos) */
void rl_sparse_begin(const rl_model *m, rl_data *d) {
  rl_sparse *s = d->sparse;
  double *x = s->A->x;
  memset(x, 0, sizeof(double) * (size_t)((int *)s->A->p)[s->n]);
  for (int a = 0; a < m->nM; a++) x[s->Mpos[a]] += (double)d->qM[a];
}

/* w (nrow × u) ← the rows r0 … r0+nrow−1 of J expanded onto the block's columns */
static int block_expand(rl_sparse *s, const rl_data *d, const sp_block *b, int r0, int nrow) {
  size_t need = (size_t)nrow * (size_t)b->u + (size_t)b->u * (size_t)b->u;
  if (grow((void **)&s->w, &s->cap_w, need, sizeof(double))) return -1;
  const int *c = s->col + b->cadr;
  for (int k = 0; k < b->u; k++) s->mark[c[k]] = k;
  memset(s->w, 0, sizeof(double) * (size_t)nrow * (size_t)b->u);
  for (int k = 0; k < nrow; k++) {
    int r = r0 + k, adr = d->efc_J_rowadr[r];
    for (int p = 0; p < d->efc_J_rownnz[r]; p++)
      s->w[(size_t)k * (size_t)b->u + (size_t)s->mark[d->efc_J_colind[adr + p]]] += (double)d->efc_J[adr + p];
  }
  for (int k = 0; k < b->u; k++) s->mark[c[k]] = -1;
  return 0;
}

/* H += scale·J_rᵀJ_r:  A(c_a, c_b) += scale·w_a·w_b for a ≤ b */
int rl_sparse_add_row(rl_data *d, int r, real scale) {
  rl_sparse *s = d->sparse;
  const sp_block *b = &s->block[s->rowblock[r]];
  if (block_expand(s, d, b, r, 1)) return -1;
  double *x = s->A->x, sc = (double)scale;
  const int *pos = s->pos + b->padr;
  const double *w = s->w;
  for (int q = 0; q < b->u; q++) {
    double wq = sc * w[q];
    for (int a = 0; a <= q; a++) x[*pos++] += w[a] * wq;
  }
  return 0;
}

/* H += Σ_{a,b} Hc(a,b)·J_{r0+a}ᵀJ_{r0+b} (Hc n×n row-major, rows r0 … r0+n−1 of one block):
   G = Wᵀ·Hc·W on the block's columns, then its upper triangle into A */
int rl_sparse_add_block(rl_data *d, int r0, int n, const real *Hc) {
  rl_sparse *s = d->sparse;
  const sp_block *b = &s->block[s->rowblock[r0]];
  if (block_expand(s, d, b, r0, n)) return -1;
  int u = b->u;
  double *x = s->A->x;
  const double *w = s->w;
  const int *pos = s->pos + b->padr;
  for (int q = 0; q < u; q++) {
    /* h_i = Σ_j Hc(i,j)·w_j,q: column q of Hc·W */
    double h[6] = {0};
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) h[i] += (double)Hc[i * n + j] * w[(size_t)j * (size_t)u + (size_t)q];
    for (int a = 0; a <= q; a++) {
      double t = 0;
      for (int i = 0; i < n; i++) t += w[(size_t)i * (size_t)u + (size_t)a] * h[i];
      x[*pos++] += t;
    }
  }
  return 0;
}

/* L·Lᵀ = A on the calling thread alone.  CHOLMOD 3's supernodal factorization opens OpenMP regions of a fixed
   4 threads (CHOLMOD_OMP_NUM_THREADS, compiled into the library) to clear and assemble each supernode (~6 600
   regions per factorization on the 1000-sphere pile); the work in them is a memset and copies, and where fewer
   than 4 cores are free the teams' start, wake-ups and spin-waits cost more than it (that pile on 2 cores:
   ~8 ms per factorization).  With dynamic adjustment on, the OpenMP runtime
   may give a region fewer threads than its num_threads clause asks, at most the calling thread's
   nthreads-var: both are set to one thread for the call and restored after (they belong to this thread's
   data environment, so other threads are untouched; inside a parallel region the nested team is one
   thread anyway). */
static int factorize_one_thread(rl_sparse *s) {
#ifdef _OPENMP
  int dyn = omp_get_dynamic(), nt = omp_get_max_threads();
  omp_set_dynamic(1);
  omp_set_num_threads(1);
#endif
  int ok = cholmod_factorize(s->A, s->L, &s->c);
#ifdef _OPENMP
  omp_set_num_threads(nt);
  omp_set_dynamic(dyn);
#endif
  return ok;
}

int rl_sparse_factor(rl_data *d) {
  rl_sparse *s = d->sparse;
  s->factorizations++;
  cholmod_free_factor(&s->Lu, &s->c);
  if (!factorize_one_thread(s)) return -1;
  return s->c.status == CHOLMOD_OK ? 0 : -1;
}

int rl_sparse_solve(rl_data *d, real *x) {
  rl_sparse *s = d->sparse;
  if (!s->B && !(s->B = cholmod_allocate_dense((size_t)s->n, 1, (size_t)s->n, CHOLMOD_REAL, &s->c))) return -1;
  double *b = s->B->x;
  for (int i = 0; i < s->n; i++) b[i] = (double)x[i];
  if (!cholmod_solve2(CHOLMOD_A, s->Lu ? s->Lu : s->L, s->B, NULL, &s->X, NULL, &s->Y, &s->E, &s->c)) return -1;
  const double *r = s->X->x;
  for (int i = 0; i < s->n; i++) x[i] = (real)r[i];
  return 0;
}

/* C (n × nrow, sorted columns, rows in L's permuted order): column k = √D_{rows[k]}·J_{rows[k]}ᵀ */
static cholmod_sparse *updown_columns(rl_sparse *s, const rl_data *d, const int *rows, int nrow) {
  size_t nz = 0;
  for (int k = 0; k < nrow; k++) nz += (size_t)d->efc_J_rownnz[rows[k]];
  cholmod_sparse *C = cholmod_allocate_sparse((size_t)s->n, (size_t)nrow, nz, 0, 1, 0, CHOLMOD_REAL, &s->c);
  if (!C) return NULL;
  int *Cp = C->p, *Ci = C->i;
  double *Cx = C->x;
  size_t q = 0;
  for (int k = 0; k < nrow; k++) {
    int r = rows[k], adr = d->efc_J_rowadr[r];
    double w = sqrt((double)d->efc_D[r]);
    Cp[k] = (int)q;
    for (int e = 0; e < d->efc_J_rownnz[r]; e++, q++) {
      Ci[q] = d->efc_J_colind[adr + e];
      Cx[q] = w * (double)d->efc_J[adr + e];
    }
  }
  Cp[nrow] = (int)q;
  /* rows into L's order: C(P, :), sorted */
  cholmod_sparse *CP = cholmod_submatrix(C, s->L->Perm, (long)s->n, NULL, -1, 1, 1, &s->c);
  cholmod_free_sparse(&C, &s->c);
  return CP;
}

int rl_sparse_updown(rl_data *d, const int *add, int nadd, const int *del, int ndel) {
  rl_sparse *s = d->sparse;
  if (!s->Lu) {
    s->Lu = cholmod_copy_factor(s->L, &s->c);
    /* LLᵀ (supernodal or simplicial) → simplicial LDLᵀ, the form cholmod_updown works on (values kept) */
    if (!s->Lu || !cholmod_change_factor(CHOLMOD_REAL, 0, 0, 1, 1, s->Lu, &s->c)) {
      cholmod_free_factor(&s->Lu, &s->c);
      return -1;
    }
  }
  for (int pass = 0; pass < 2; pass++) {
    int n = pass ? ndel : nadd;
    if (!n) continue;
    cholmod_sparse *C = updown_columns(s, d, pass ? del : add, n);
    int ok = C && cholmod_updown(pass ? 0 : 1, C, s->Lu, &s->c) && s->c.status == CHOLMOD_OK;
    cholmod_free_sparse(&C, &s->c);
    if (!ok) return -1;
  }
  s->updowns += nadd + ndel;
  /* a downdate that lost positive definiteness leaves a pivot ≤ 0 */
  const int *Lp = s->Lu->p;
  const double *Lx = s->Lu->x;
  for (int j = 0; j < s->n; j++)
    if (!(Lx[Lp[j]] > 0)) return -1;
  return 0;
}

void rl_sparse_stats(const rl_data *d, rl_sparse_info *info) {
  memset(info, 0, sizeof *info);
  const rl_sparse *s = d->sparse;
  if (!s) return;
  info->analyses = s->analyses;
  info->factorizations = s->factorizations;
  info->updowns = s->updowns;
  info->nnz_H = s->A ? (long)((int *)s->A->p)[s->n] : 0;
  info->nnz_L = s->L ? (long)s->c.lnz : 0;
  info->peak_bytes = (double)s->c.memory_usage;
}
