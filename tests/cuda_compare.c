/* cuda_compare.c — CPU vs CUDA at equal precision on a GPU: `cuda_compare_f64|f32 MODEL N STEPS [CSV [K=V]]`
 * (K=V: one model option, as --opt).
 *
 * N environments of MODEL (AVBD, seeded perturbed starts) on the GPU.  At every one of STEPS steps the images
 * as they are (the device's state) are stepped once on the host by the same environment step
 * (rl_batch_cuda_host_twin: the C engine's AVBD step, bit-identical to rl_batch_step by test_batch_cuda) and
 * once by the kernel; the two results are compared per field (qpos, qvel): the largest relative difference
 * |gpu − cpu| / max(|cpu|, 1), the share of entries bit-identical and the largest ULP distance.  Printed as one
 * table row per field (and written to CSV when given).  Exit 0 when the largest relative difference is
 * ≤ 1e-12 (f64) or ≤ 1e-5 (f32), 1 otherwise, 77 (meson's skip) when no CUDA device is present, 2 on bad
 * input. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pair.h"
#include "rl_batch_cuda.h"

#if defined(RL_REAL_F64)
#define REL_TOL 1e-12
typedef int64_t sint;
#else
#define REL_TOL 1e-5
typedef int32_t sint;
#endif

/* ULP distance of two reals of the same precision (bit patterns as a signed-magnitude ordering) */
static double ulps(real a, real b) {
  sint ia, ib;
  memcpy(&ia, &a, sizeof a);
  memcpy(&ib, &b, sizeof b);
  if (ia < 0) ia = (sint)((sint)1 << (8 * sizeof(sint) - 1)) - ia;
  if (ib < 0) ib = (sint)((sint)1 << (8 * sizeof(sint) - 1)) - ib;
  double d = (double)ia - (double)ib;
  return d < 0 ? -d : d;
}

typedef struct field_cmp {
  double rel, ulp;
  long same, total;
} field_cmp;

static void compare(field_cmp *f, const real *cpu, const real *gpu, size_t n) {
  for (size_t i = 0; i < n; i++) {
    double c = (double)cpu[i], g = (double)gpu[i];
    double r = fabs(g - c) / (fabs(c) > 1 ? fabs(c) : 1);
    if (!(r <= f->rel)) f->rel = r;
    double u = ulps(cpu[i], gpu[i]);
    if (u > f->ulp) f->ulp = u;
    f->same += !memcmp(cpu + i, gpu + i, sizeof(real));
    f->total++;
  }
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: cuda_compare MODEL N STEPS [CSV [K=V]]\n");
    return 2;
  }
  char why[256], err[1024];
  if (!rl_cuda_devices(why, sizeof why)) {
    printf("SKIP: %s: the CPU/CUDA comparison needs a GPU\n", why);
    return 77;
  }
  int n = atoi(argv[2]), steps = atoi(argv[3]);
  if (n < 1 || steps < 1) {
    fprintf(stderr, "cuda_compare: N and STEPS must be ≥ 1\n");
    return 2;
  }
  rl_common_args c;
  memset(&c, 0, sizeof c);
  c.model = argv[1];
  if (argc > 5) c.opts[c.nopts++] = argv[5];
  rl_pair p;
  if (rl_pair_load(&p, &c, 0, err, sizeof err)) {
    fprintf(stderr, "%s\n", err);
    return 2;
  }
  const rl_model *m = p.m;
  rl_batch *b = rl_batch_create(m, n, RL_BATCH_AVBD, NULL, err, sizeof err);
  if (!b) {
    fprintf(stderr, "cuda_compare: %s\n", err);
    return 2;
  }
  real *q = malloc(sizeof(real) * (size_t)m->nq + 8);
  for (int e = 0; e < n; e++) {
    memcpy(q, m->qpos0, sizeof(real) * (size_t)m->nq);
    for (int j = 0; j < m->njnt; j++)
      if (m->jnt_type[j] == RL_JNT_HINGE || m->jnt_type[j] == RL_JNT_SLIDE)
        q[m->jnt_qposadr[j]] += (real)(0.02 * (((e * 7 + j * 13) % 17) / 17.0 - 0.5));
    rl_batch_set_reset_state(b, e, q, NULL);
  }
  free(q);
  rl_batch_reset(b, NULL);
  if (rl_batch_cuda_attach(b, RL_CUDA_GPU, err, sizeof err)) {
    fprintf(stderr, "cuda_compare: %s\n", err);
    return 2;
  }
  real *hq = malloc(sizeof(real) * ((size_t)n * (size_t)(m->nq + m->nv) + 1)), *hv = hq + (size_t)n * m->nq;
  field_cmp fq = {0}, fv = {0};
  for (int k = 0; k < steps; k++) {
    rl_batch_cuda_sync(b);
    if (rl_batch_cuda_host_twin(b, hq, hv)) {
      fprintf(stderr, "cuda_compare: out of memory\n");
      return 2;
    }
    rl_batch_cuda_step(b);
    rl_batch_cuda_sync(b);
    for (int e = 0; e < n; e++) {
      compare(&fq, hq + (size_t)e * m->nq, b->d[e]->qpos, (size_t)m->nq);
      compare(&fv, hv + (size_t)e * m->nv, b->d[e]->qvel, (size_t)m->nv);
    }
  }
  FILE *csv = argc > 4 && strcmp(argv[4], "-") ? fopen(argv[4], "w") : NULL;
  if (csv) fprintf(csv, "model,precision,device,envs,steps,field,max_rel_err,share_bit_identical,max_ulp\n");
  printf("%-5s %-6s %7s %6s %12s %10s %12s\n", "prec", "field", "envs", "steps", "max rel err", "bit-ident", "max ULP");
  const char *names[2] = {"qpos", "qvel"};
  field_cmp *fs[2] = {&fq, &fv};
  double worst = 0;
  for (int i = 0; i < 2; i++) {
    double share = (double)fs[i]->same / (double)fs[i]->total;
    printf("%-5s %-6s %7d %6d %12.3e %10.4f %12.0f\n", RL_PREC_NAME, names[i], n, steps, fs[i]->rel, share, fs[i]->ulp);
    if (csv)
      fprintf(csv, "%s,%s,cuda,%d,%d,%s,%.6e,%.6f,%.0f\n", argv[1], RL_PREC_NAME, n, steps, names[i], fs[i]->rel, share,
              fs[i]->ulp);
    if (!(fs[i]->rel <= worst)) worst = fs[i]->rel;
  }
  if (csv) fclose(csv);
  free(hq);
  rl_batch_cuda_detach(b);
  rl_batch_free(b);
  rl_pair_free(&p);
  if (!(worst <= REL_TOL)) {
    printf("FAIL: one-step CPU/CUDA difference %.3e > %.0e\n", worst, REL_TOL);
    return 1;
  }
  return 0;
}
