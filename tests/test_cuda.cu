/* test_cuda.cu — the per-body AVBD math of engine/rl_avbd_body.h run on the GPU and on the CPU from the same
 * inputs (CPU and CUDA share one source of scalar math).  Compiled once per precision (-DRL_REAL_F64 |
 * -DRL_REAL_F32) by nvcc with fused multiply–add off and IEEE division/square root, so the two sides run the
 * same operations in the same order; what may still differ is the last bit of the transcendental functions
 * (sin, cos, atan2, acos of CUDA's device libm vs glibc).
 *
 * NCASE random blocks, each one body's whole block update as avbd.c's sweep does it:
 *   rl_avbd_inertia (prediction energy) + rl_avbd_joint_assemble (a hinge to a neighbour: 3 anchor rows,
 *   2 axis rows) + rl_avbd_contact_assemble (condim 6: normal through the centre of curvature, Coulomb
 *   tangents, spin and roll rows) + the geometric-stiffness diagonal, then rl_avbd_body_update
 *   (guarded Cholesky, clamps, x ← x⁰ + dx, q ← Exp(δθ)·q).
 * Every output (H, g, K, the new pose, dx, dq, the update sizes, the guard count) is compared: the
 * largest difference in units of the precision's epsilon relative to max(|cpu|, 1) must be ≤ MAX_ULPS, and
 * the counts must agree.  The fraction of bit-identical outputs is printed.
 * Exit 0 pass, 1 fail, 77 (meson's skip) when no CUDA device is present. */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#include "rl_avbd_body.h"

#define NCASE    4096
#define MAX_ULPS 64

typedef struct block_in {
  rl_avbd_pose A, B;   /* neighbour (joint parent and contact side A) and the body solved (side B) */
  real x0[3], q0[4];   /* the body's step-start pose */
  real dx0[3], dq0[4]; /* its accumulated increment before this sweep */
  real xp[3], qp[4];   /* prediction */
  real m, I0[9], h;
  real dqA[4], dqB[4]; /* Δq of both bodies since the step start (spin/roll rows) */
  rl_avbd_joint jt;
  rl_avbd_row rows[5];
  rl_avbd_contact c;
} block_in;

typedef struct block_out {
  real H[36], g[6], K[3];
  rl_avbd_pose P;
  real dx[3], dq[4];
  real ndx, ndth;
  int guarded;
} block_out;

/* one body's block, exactly the sequence of avbd.c's sweep (side 1: the body is B of the joint and contact) */
RL_HD void block_update(const block_in *in, block_out *out) {
  real *H = out->H, *g = out->g, *K = out->K;
  rl_avbd_inertia(H, g, in->m, in->I0, &in->B, in->xp, in->qp, in->h);
  K[0] = K[1] = K[2] = 0;
  rl_avbd_joint_assemble(H, g, K, &in->jt, in->rows, &in->A, &in->B, 1, (real)0.5, 0);
  rl_avbd_contact_assemble(H, g, K, &in->c, &in->A, &in->B, in->dqA, in->dqB, 1, (real)0.95, 0);
  for (int i = 0; i < 3; i++) H[7 * (3 + i)] += K[i];
  real Hs[36];
  for (int i = 0; i < 36; i++) Hs[i] = H[i];
  out->P = in->B;
  for (int i = 0; i < 3; i++) out->dx[i] = in->dx0[i];
  for (int i = 0; i < 4; i++) out->dq[i] = in->dq0[i];
  out->guarded = rl_avbd_body_update(&out->P, out->dx, out->dq, in->x0, in->q0, Hs, g, (real)0.05, (real)0.5, &out->ndx,
                                     &out->ndth);
}

__global__ void block_kernel(const block_in *in, block_out *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) block_update(in + i, out + i);
}

/* ---------------------------------------------------------------- random inputs (host) */

static unsigned long long rng_state = 0x9E3779B97F4A7C15ull;
/* uniform in [lo, hi) from a 64-bit xorshift* generator (deterministic, no library state) */
static real uni(double lo, double hi) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  double u = (double)((rng_state * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
  return (real)(lo + (hi - lo) * u);
}
static void rand_unit(real v[3]) {
  for (int i = 0; i < 3; i++) v[i] = uni(-1, 1);
  real n = rl_v3_norm(v);
  for (int i = 0; i < 3; i++) v[i] /= n;
}
static void rand_quat(real q[4]) {
  for (int i = 0; i < 4; i++) q[i] = uni(-1, 1);
  rl_q_normalize(q);
}
static void rand_pose(rl_avbd_pose *p, double span) {
  for (int i = 0; i < 3; i++) p->x[i] = uni(-span, span);
  rand_quat(p->q);
  rl_avbd_pose_sync(p);
}
/* a small rotation increment Exp(θ), ‖θ‖ ≤ s */
static void small_quat(real q[4], double s) {
  real th[3];
  for (int i = 0; i < 3; i++) th[i] = uni(-s, s);
  real one[4] = {1, 0, 0, 0};
  rl_q_boxplus(q, th, one);
}

static void make_case(block_in *in) {
  memset(in, 0, sizeof *in);
  rand_pose(&in->A, 1);
  rand_pose(&in->B, 1);
  real d[3];
  for (int i = 0; i < 3; i++) d[i] = uni(-1e-3, 1e-3);
  rl_v3_sub(in->x0, in->B.x, d);
  small_quat(in->dq0, 1e-3);
  real dqi[4] = {in->dq0[0], -in->dq0[1], -in->dq0[2], -in->dq0[3]};
  rl_q_mul(in->q0, dqi, in->B.q);
  rl_q_normalize(in->q0);
  for (int i = 0; i < 3; i++) in->dx0[i] = d[i];
  for (int i = 0; i < 3; i++) in->xp[i] = in->B.x[i] + uni(-1e-3, 1e-3);
  real dp[4];
  small_quat(dp, 1e-3);
  rl_q_mul(in->qp, dp, in->B.q);
  in->m = uni(0.01, 5);
  real e[3] = {uni(1e-4, 1e-2), uni(1e-4, 1e-2), uni(1e-4, 1e-2)}, R[9], q[4];
  rand_quat(q);
  rl_q_to_mat(R, q);
  for (int i = 0; i < 3; i++) /* I0 = R diag(e) Rᵀ, symmetric positive definite */
    for (int j = 0; j < 3; j++) {
      real s = 0;
      for (int k = 0; k < 3; k++) s += R[3 * i + k] * e[k] * R[3 * j + k];
      in->I0[3 * i + j] = s;
    }
  in->h = uni(5e-4, 4e-3);
  small_quat(in->dqA, 1e-3);
  small_quat(in->dqB, 1e-3);
  /* a hinge from A to B: anchors, an axis in both frames, two unit vectors ⊥ the axis in A's frame */
  rl_avbd_joint *jt = &in->jt;
  jt->kind = RL_AVBD_HINGE;
  jt->a = 0;
  jt->b = 1;
  jt->jnt = jt->eq = jt->act = -1;
  jt->row = 0;
  jt->nrow = jt->neq = 5;
  jt->lo_row = jt->hi_row = jt->dry_row = -1;
  for (int i = 0; i < 3; i++) {
    jt->rA[i] = uni(-0.2, 0.2);
    jt->rB[i] = uni(-0.2, 0.2);
  }
  rand_unit(jt->axA);
  real aw[3], tmp[3];
  rl_m3_mulv(aw, in->A.R, jt->axA);
  rl_m3_tmulv(jt->axB, in->B.R, aw); /* the same world axis seen from B */
  for (int i = 0; i < 3; i++) jt->axB[i] += uni(-1e-3, 1e-3);
  rand_unit(tmp);
  rl_v3_cross(jt->t1A, jt->axA, tmp);
  real n1 = rl_v3_norm(jt->t1A);
  for (int i = 0; i < 3; i++) jt->t1A[i] /= n1;
  rl_v3_cross(jt->t2A, jt->axA, jt->t1A);
  jt->qrel0[0] = 1;
  for (int r = 0; r < 5; r++) {
    rl_avbd_row *w = &in->rows[r];
    w->kind = r < 3 ? RL_AVBD_ROW_LIN : RL_AVBD_ROW_ANG;
    w->lambda = uni(-10, 10);
    w->rho = uni(1e3, 1e6);
    w->c0 = uni(-1e-4, 1e-4);
  }
  /* a condim-6 contact, sphere (radius 0.05) on B against A's flat face */
  rl_avbd_contact *c = &in->c;
  c->a = 0;
  c->b = 1;
  c->key[0] = c->key[1] = c->key[2] = -1;
  for (int i = 0; i < 3; i++) {
    c->rA[i] = uni(-0.2, 0.2);
    c->rB[i] = uni(-0.2, 0.2);
  }
  real n[3], t1[3], t2[3];
  rand_unit(n);
  rand_unit(tmp);
  rl_v3_cross(t1, n, tmp);
  real nt = rl_v3_norm(t1);
  for (int i = 0; i < 3; i++) t1[i] /= nt;
  rl_v3_cross(t2, n, t1);
  for (int i = 0; i < 3; i++) {
    c->frame[i] = n[i];
    c->frame[3 + i] = t1[i];
    c->frame[6 + i] = t2[i];
  }
  c->mu = uni(0.2, 1);
  c->lambda[0] = uni(-20, -0.1);
  c->lambda[1] = uni(-5, 5);
  c->lambda[2] = uni(-5, 5);
  for (int r = 0; r < 3; r++) {
    c->rho[r] = uni(1e3, 1e6);
    c->c0[r] = uni(-1e-4, 1e-4);
  }
  c->target_n = rl_avbd_one_sided_target(c->c0[0], (real)0.95, (real)1e-7);
  c->dim = 6;
  c->mu_spin = uni(1e-3, 1e-2);
  c->mu_roll = uni(1e-4, 1e-3);
  for (int r = 0; r < 3; r++) {
    c->alam[r] = uni(-0.01, 0.01);
    c->arho[r] = uni(10, 1e3);
  }
  c->rad[0] = 0;
  c->rad[1] = (real)0.05;
  real nb[3];
  rl_m3_tmulv(nb, in->B.R, n); /* B's centre: its contact point moved rad against the normal, in B's frame */
  for (int i = 0; i < 3; i++) {
    c->cA[i] = c->rA[i];
    c->cB[i] = c->rB[i] + c->rad[1] * nb[i];
  }
}

/* ---------------------------------------------------------------- comparison */

/* |a − b| in units of eps·max(|a|, 1); NaN on either side counts as infinitely far unless both are NaN */
static double ulps(real a, real b) {
  if (a != a || b != b) return (a != a && b != b) ? 0 : 1e300;
  double d = (double)a - (double)b, s = (double)(a < 0 ? -a : a);
  if (d < 0) d = -d;
  return d / ((double)RL_EPS * (s > 1 ? s : 1));
}

/* non-finite outputs of one block (the inputs are well-posed: every output must be finite) */
static int nonfinite(const block_out *a) {
  const real *v[] = {a->H, a->g, a->K, a->P.x, a->P.q, a->P.R, a->dx, a->dq, &a->ndx, &a->ndth};
  const int len[] = {36, 6, 3, 3, 4, 9, 3, 4, 1, 1};
  int n = 0;
  for (int k = 0; k < 10; k++)
    for (int j = 0; j < len[k]; j++) n += !(v[k][j] - v[k][j] == 0);
  return n;
}

int main(void) {
  block_in *in = (block_in *)malloc(sizeof(block_in) * NCASE);
  block_out *cpu = (block_out *)calloc(NCASE, sizeof(block_out)), *gpu = (block_out *)calloc(NCASE, sizeof(block_out));
  for (int i = 0; i < NCASE; i++) make_case(&in[i]);
  long finite_bad = 0, guarded = 0;
  for (int i = 0; i < NCASE; i++) {
    block_update(&in[i], &cpu[i]);
    finite_bad += nonfinite(&cpu[i]);
    guarded += cpu[i].guarded;
  }
  /* the host side runs without a GPU too: the header compiled as CUDA C++ gives finite blocks */
  if (finite_bad) {
    printf("test_cuda_%s: FAIL: %ld non-finite outputs on the CPU side\n", RL_PREC_NAME, finite_bad);
    return 1;
  }
  int ndev = 0;
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev == 0) {
    printf("test_cuda_%s: CPU side: %d blocks finite (%ld guarded pivots); GPU side skipped: no CUDA device (%s)\n",
           RL_PREC_NAME, NCASE, guarded, e == cudaSuccess ? "0 devices" : cudaGetErrorString(e));
    return 77;
  }
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  block_in *din;
  block_out *dout;
  if (cudaMalloc(&din, sizeof(block_in) * NCASE) != cudaSuccess ||
      cudaMalloc(&dout, sizeof(block_out) * NCASE) != cudaSuccess) {
    printf("test_cuda_%s: FAIL: cudaMalloc\n", RL_PREC_NAME);
    return 1;
  }
  cudaMemcpy(din, in, sizeof(block_in) * NCASE, cudaMemcpyHostToDevice);
  block_kernel<<<(NCASE + 127) / 128, 128>>>(din, dout, NCASE);
  e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaMemcpy(gpu, dout, sizeof(block_out) * NCASE, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) {
    printf("test_cuda_%s: FAIL: kernel: %s\n", RL_PREC_NAME, cudaGetErrorString(e));
    return 1;
  }
  double worst = 0;
  long same = 0, total = 0, guard_diff = 0;
  int worst_case = -1;
  for (int i = 0; i < NCASE; i++) {
    const block_out *a = &cpu[i], *b = &gpu[i];
    const real *va[] = {a->H, a->g, a->K, a->P.x, a->P.q, a->P.R, a->dx, a->dq, &a->ndx, &a->ndth};
    const real *vb[] = {b->H, b->g, b->K, b->P.x, b->P.q, b->P.R, b->dx, b->dq, &b->ndx, &b->ndth};
    const int len[] = {36, 6, 3, 3, 4, 9, 3, 4, 1, 1};
    for (int k = 0; k < 10; k++)
      for (int j = 0; j < len[k]; j++) {
        double u = ulps(va[k][j], vb[k][j]);
        same += !memcmp(&va[k][j], &vb[k][j], sizeof(real));
        total++;
        if (u > worst) worst = u, worst_case = i;
      }
    guard_diff += a->guarded != b->guarded;
  }
  printf(
      "test_cuda_%s: %s (sm_%d%d), %d blocks: %ld of %ld outputs bit-identical (%.2f %%), largest difference %.3g eps "
      "(block %d), guard counts differ in %ld\n",
      RL_PREC_NAME, prop.name, prop.major, prop.minor, NCASE, same, total, 100.0 * (double)same / (double)total, worst,
      worst_case, guard_diff);
  int ok = worst <= MAX_ULPS && guard_diff == 0;
  printf("test_cuda_%s: %s (limit %d eps)\n", RL_PREC_NAME, ok ? "PASS" : "FAIL", MAX_ULPS);
  cudaFree(din);
  cudaFree(dout);
  free(in);
  free(cpu);
  free(gpu);
  return ok ? 0 : 1;
}
