/* bench_batch.c — `rigidlab bench MODEL --device cpu --envs N1,N2,…`: throughput of the batch API
 * (rl_batch.h) per number of environments, with the accuracy of the same run.
 *
 * For each N: N environments from qpos0 plus a small seeded perturbation of every hinge/slide coordinate
 * (so the environments differ), `warm` untimed steps, then `steps` timed batch steps on `threads` OpenMP
 * threads.  Printed and written per N: env-steps/s = N·steps / wall time, the largest joint anchor error
 * of any environment after any timed step (AVBD; the soft engine's joints are exact by construction and
 * report 0), the env-steps whose solver stopped on its budget, and the resets by the divergence policy.
 * --device cuda (a build with engine/cuda/ and a GPU): the same environments on the device
 * (rl_batch_cuda.h); the time of a step includes the kernel and the one-integer read of its failure count;
 * the anchor error is the largest over the environments after the last timed step (reading every step's
 * would time the copies, not the step). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "csv.h"
#include "harness.h"
#include "pair.h"
#include "rl_batch.h"
#ifdef RL_HAVE_CUDA
#include "rl_batch_cuda.h"
#endif

#define rl_bench_batch RL_NAME(bench_batch)
int rl_bench_batch(const rl_bench_args *a);

static double wall_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* environment e's start: qpos0, hinge/slide coordinates shifted by a deterministic ±0.02·u, u in [0, 1) */
static void perturbed_start(const rl_model *m, int e, real *qpos) {
  memcpy(qpos, m->qpos0, sizeof(real) * (size_t)m->nq);
  unsigned long s = 2654435761ul * (unsigned long)(e + 1);
  for (int j = 0; j < m->njnt; j++)
    if (m->jnt_type[j] == RL_JNT_HINGE || m->jnt_type[j] == RL_JNT_SLIDE) {
      s = s * 6364136223846793005ul + 1442695040888963407ul;
      qpos[m->jnt_qposadr[j]] += (real)(0.02 * ((double)(s >> 11) / 9007199254740992.0 - 0.5));
    }
}

static int batch_engine(const char *e) {
  if (!e || !strcmp(e, "avbd")) return RL_BATCH_AVBD;
  if (!strcmp(e, "newton")) return RL_BATCH_NEWTON;
  if (!strcmp(e, "cg")) return RL_BATCH_CG;
  return -1;
}

#ifdef RL_HAVE_CUDA
/* the device's batch step (threads unused) */
static void cuda_step(rl_batch *b, int threads) {
  (void)threads;
  rl_batch_cuda_step(b);
}
#endif

/* one row: N environments timed */
static int bench_one(const rl_pair *p, int engine, int n, int threads, long steps, rl_csv *w, const char *label,
                     int quiet, int cuda) {
  char err[512];
  rl_batch *b = rl_batch_create(p->m, n, engine, NULL, err, sizeof err);
  if (!b) {
    rl_errorf("bench: %s: %s", label, err);
    return RL_EXIT_BADINPUT;
  }
  void (*step)(rl_batch *, int) = rl_batch_step;
  real *q = malloc(sizeof(real) * (size_t)p->m->nq + 8);
  for (int e = 0; e < n; e++) {
    perturbed_start(p->m, e, q);
    rl_batch_set_reset_state(b, e, q, NULL);
  }
  free(q);
  rl_batch_reset(b, NULL);
#ifdef RL_HAVE_CUDA
  if (cuda) {
    if (rl_batch_cuda_attach(b, RL_CUDA_GPU, err, sizeof err)) {
      rl_errorf("bench: %s: %s", label, err);
      rl_batch_free(b);
      return RL_EXIT_BADINPUT;
    }
    step = cuda_step;
    threads = 0;
  }
#endif
  for (int k = 0; k < 10; k++) step(b, threads);
  long unconv0 = 0, resets0 = 0;
  for (int e = 0; e < n; e++) unconv0 += b->unconverged[e], resets0 += b->resets[e];
  double anchor = 0, t = 0;
  for (long k = 0; k < steps; k++) {
    double t0 = wall_s();
    step(b, threads);
    t += wall_s() - t0;
    if (engine == RL_BATCH_AVBD && !cuda)
      for (int e = 0; e < n; e++)
        if (!((double)b->am[e]->stat.anchor_err <= anchor)) anchor = (double)b->am[e]->stat.anchor_err;
  }
#ifdef RL_HAVE_CUDA
  if (cuda) {
    rl_batch_cuda_sync(b);
    for (int e = 0; e < n; e++)
      if (!((double)b->am[e]->stat.anchor_err <= anchor)) anchor = (double)b->am[e]->stat.anchor_err;
    rl_batch_cuda_detach(b);
  }
#endif
  long unconv = -unconv0, resets = -resets0;
  for (int e = 0; e < n; e++) unconv += b->unconverged[e], resets += b->resets[e];
  double rate = (double)n * (double)steps / t;
  const char *en = engine == RL_BATCH_AVBD ? "avbd" : engine == RL_BATCH_CG ? "cg" : "newton";
  if (!quiet)
    printf("%-7s %-4s %-4s %7d %7d %14.0f %12.3e %12ld %7ld\n", en, RL_PREC_NAME, cuda ? "cuda" : "cpu", n, threads, rate, anchor,
           unconv, resets);
  if (w) {
    rl_csv_str(w, label);
    rl_csv_str(w, en);
    rl_csv_str(w, RL_PREC_NAME);
    rl_csv_str(w, cuda ? "cuda" : "cpu");
    rl_csv_int(w, n);
    rl_csv_int(w, threads);
    rl_csv_int(w, steps);
    rl_csv_num(w, rate);
    rl_csv_num(w, anchor);
    rl_csv_int(w, unconv);
    rl_csv_int(w, resets);
    rl_csv_end_row(w);
  }
  rl_batch_free(b);
  return 0;
}

int rl_bench_batch(const rl_bench_args *a) {
  int cuda = a->device && !strcmp(a->device, "cuda");
  if (a->device && strcmp(a->device, "cpu") && !cuda) {
    rl_errorf("bench: --device '%s' (allowed: cpu, cuda)", a->device);
    return RL_EXIT_BADINPUT;
  }
  if (cuda) {
#ifdef RL_HAVE_CUDA
    char why[256];
    if (!rl_cuda_devices(why, sizeof why)) {
      rl_errorf("bench: %s", why);
      return RL_EXIT_BADINPUT;
    }
#else
    rl_errorf("bench: no CUDA device (this build has no CUDA backend: nvcc not found or -Dcuda=disabled)");
    return RL_EXIT_BADINPUT;
#endif
  }
  int engine = batch_engine(a->engines);
  if (engine < 0) {
    rl_errorf("bench: --engines '%s' with --envs (allowed: one of avbd, newton, cg)", a->engines);
    return RL_EXIT_BADINPUT;
  }
  int threads = a->threads > 0 ? a->threads : rl_batch_max_threads();
  char err[1024];
  rl_pair p;
  int st = rl_pair_load(&p, &a->c, 0, err, sizeof err);
  if (st) {
    rl_errorf("%s", err);
    return st;
  }
  const char *label = strrchr(a->c.model, '/') ? strrchr(a->c.model, '/') + 1 : a->c.model;
  rl_csv *w = a->c.out;
  if (w && w->rows == 0) {
    const char *hdr[] = {"model", "engine",          "precision",      "device",      "envs",  "threads",
                         "steps", "env_steps_per_s", "max_anchor_err", "unconverged", "resets"};
    for (int k = 0; k < 11; k++) rl_csv_str(w, hdr[k]);
    rl_csv_end_row(w);
  }
  if (!a->c.quiet)
    printf("%-7s %-4s %-4s %7s %7s %14s %12s %12s %7s\n", "engine", "prec", "dev", "envs", "threads", "env-steps/s",
           "anchor (m)", "unconverged", "resets");
  long steps = a->steps > 0 ? a->steps : 50;
  for (int k = 0; k < a->nenvs && !st; k++)
    st = bench_one(&p, engine, a->envs[k], threads, steps, w, label, a->c.quiet, cuda);
  rl_pair_free(&p);
  return st;
}
