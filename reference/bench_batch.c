/* bench_batch.c — `rigidlab bench MODEL --device cpu --envs N1,N2,…`: throughput of the batch API
 * (rl_batch.h) per number of environments, with the accuracy of the same run.
 *
 * For each N: N environments from qpos0 plus a small seeded perturbation of every hinge/slide coordinate
 * (so the environments differ), `warm` untimed steps, then `steps` timed batch steps on `threads` OpenMP
 * threads.  Printed and written per N: env-steps/s = N·steps / wall time, the largest joint anchor error
 * of any environment after any timed step (AVBD; the soft engine's joints are exact by construction and
 * report 0), the env-steps whose solver stopped on its budget, and the resets by the divergence policy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "csv.h"
#include "harness.h"
#include "pair.h"
#include "rl_batch.h"

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

/* one row: N environments timed */
static int bench_one(const rl_pair *p, int engine, int n, int threads, long steps, rl_csv *w, const char *label,
                     int quiet) {
  char err[512];
  rl_batch *b = rl_batch_create(p->m, n, engine, NULL, err, sizeof err);
  if (!b) {
    rl_errorf("bench: %s: %s", label, err);
    return RL_EXIT_BADINPUT;
  }
  real *q = malloc(sizeof(real) * (size_t)p->m->nq + 8);
  for (int e = 0; e < n; e++) {
    perturbed_start(p->m, e, q);
    rl_batch_set_reset_state(b, e, q, NULL);
  }
  free(q);
  rl_batch_reset(b, NULL);
  for (int k = 0; k < 10; k++) rl_batch_step(b, threads);
  long unconv0 = 0, resets0 = 0;
  for (int e = 0; e < n; e++) unconv0 += b->unconverged[e], resets0 += b->resets[e];
  double anchor = 0, t = 0;
  for (long k = 0; k < steps; k++) {
    double t0 = wall_s();
    rl_batch_step(b, threads);
    t += wall_s() - t0;
    if (engine == RL_BATCH_AVBD)
      for (int e = 0; e < n; e++)
        if (!((double)b->am[e]->stat.anchor_err <= anchor)) anchor = (double)b->am[e]->stat.anchor_err;
  }
  long unconv = -unconv0, resets = -resets0;
  for (int e = 0; e < n; e++) unconv += b->unconverged[e], resets += b->resets[e];
  double rate = (double)n * (double)steps / t;
  const char *en = engine == RL_BATCH_AVBD ? "avbd" : engine == RL_BATCH_CG ? "cg" : "newton";
  if (!quiet)
    printf("%-7s %-4s %-4s %7d %7d %14.0f %12.3e %12ld %7ld\n", en, RL_PREC_NAME, "cpu", n, threads, rate, anchor,
           unconv, resets);
  if (w) {
    rl_csv_str(w, label);
    rl_csv_str(w, en);
    rl_csv_str(w, RL_PREC_NAME);
    rl_csv_str(w, "cpu");
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
  if (a->device && strcmp(a->device, "cpu")) {
    rl_errorf("bench: --device '%s': this build has the CPU batch backend only (allowed: cpu)", a->device);
    return RL_EXIT_BADINPUT;
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
    st = bench_one(&p, engine, a->envs[k], threads, steps, w, label, a->c.quiet);
  rl_pair_free(&p);
  return st;
}
