/* test_batch_cuda.c — the CUDA batch backend's environment step run on the host (RL_CUDA_HOST: the same
 * images, pointers rebased, and the same step function the kernel runs, compiled by nvcc as host code),
 * against the CPU batch (rl_batch_step, the C engine): every environment's state after every step must be
 * the CPU's bit for bit, including a per-environment friction and mass, and the divergence policy must reset
 * and count a failing environment as the CPU batch does.  No GPU needed: a logic error of the kernel's
 * environment step, of the image layout or of the divergence policy fails here. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include "rl_batch_cuda.h"
#include "rl_test_pair.h"

#define SCENE(f) SRCDIR "/experiments/scenes/" f

/* environment e's start: hinge/slide coordinates shifted by 0.01·(e+1)·(−1)^j, a small velocity */
static void start_state(const rl_model *m, int e, real *qpos, real *qvel) {
  memcpy(qpos, m->qpos0, sizeof(real) * (size_t)m->nq);
  for (int j = 0; j < m->njnt; j++)
    if (m->jnt_type[j] == RL_JNT_HINGE || m->jnt_type[j] == RL_JNT_SLIDE)
      qpos[m->jnt_qposadr[j]] += (real)(0.01 * (e + 1) * (j % 2 ? -1 : 1));
  for (int i = 0; i < m->nv; i++) qvel[i] = (real)(0.01 * (e + 1) * (i % 3 - 1));
}

static rl_batch *batch_open(const rl_model *m, int n) {
  char err[256];
  rl_batch *b = rl_batch_create(m, n, RL_BATCH_AVBD, NULL, err, sizeof err);
  cr_assert_not_null(b, "%s", err);
  real *q = malloc(sizeof(real) * (size_t)(m->nq + m->nv + 1));
  for (int e = 0; e < n; e++) {
    start_state(m, e, q, q + m->nq);
    rl_batch_set_reset_state(b, e, q, q + m->nq);
  }
  free(q);
  rl_batch_reset(b, NULL);
  return b;
}

/* cpu and the host-emulated cuda batch agree on every environment's state hash, counters and time */
static void expect_same(rl_batch *cpu, rl_batch *cu, const char *what, int step) {
  for (int e = 0; e < cpu->n; e++) {
    cr_expect_eq(rl_state_hash(cu->m[e], cu->d[e]), rl_state_hash(cpu->m[e], cpu->d[e]),
                 "%s: env %d after step %d is not the CPU batch's", what, e, step);
    cr_expect_eq(cu->resets[e], cpu->resets[e], "%s: env %d resets", what, e);
    cr_expect_eq(cu->unconverged[e], cpu->unconverged[e], "%s: env %d unconverged steps", what, e);
    cr_expect_eq(cu->d[e]->time, cpu->d[e]->time, "%s: env %d time", what, e);
  }
}

/* STEPS steps of N environments of MODEL on both backends, compared after every step */
static void check_model(const char *model, int n, int steps) {
  rl_pair p;
  load(&p, model, NULL);
  rl_batch *cpu = batch_open(p.m, n), *cu = batch_open(p.m, n);
  char err[256];
  cr_assert_eq(rl_batch_cuda_attach(cu, RL_CUDA_HOST, err, sizeof err), 0, "%s", err);
  cr_assert(rl_batch_cuda_emulated(cu));
  for (int k = 0; k < steps; k++) {
    rl_batch_step(cpu, 1);
    rl_batch_cuda_step(cu);
    rl_batch_cuda_sync(cu);
    expect_same(cpu, cu, model, k);
  }
  for (int e = 1; e < n; e++)
    cr_expect_neq(rl_state_hash(cpu->m[e], cpu->d[e]), rl_state_hash(cpu->m[0], cpu->d[0]), "environments should differ");
  rl_batch_cuda_detach(cu);
  rl_batch_free(cu);
  rl_batch_free(cpu);
  rl_pair_free(&p);
}

Test(batch_cuda, host_emulation_microduck_bit_identical) { check_model(SCENE("microduck.xml"), 4, 40); }
Test(batch_cuda, host_emulation_quadruped_bit_identical) { check_model(SCENE("quadruped12.xml"), 3, 30); }
Test(batch_cuda, host_emulation_incline_bit_identical) { check_model(SCENE("incline.xml"), 3, 60); }

/* per-environment friction and mass (environment 1's own model, rebuilt): the same on both backends, and
   environment 1 then differs from environment 0 run from the same start */
Test(batch_cuda, host_emulation_per_environment_parameters) {
  rl_pair p;
  load(&p, SCENE("microduck.xml"), NULL);
  enum { N = 3, STEPS = 30 };
  rl_batch *cpu = batch_open(p.m, N), *cu = batch_open(p.m, N);
  rl_batch *bs[2] = {cpu, cu};
  real *q = malloc(sizeof(real) * (size_t)(p.m->nq + p.m->nv + 1));
  for (int i = 0; i < 2; i++) {
    char err[256];
    rl_model *em = rl_batch_env_model(bs[i], 1);
    cr_assert_not_null(em);
    for (int g = 0; g < em->ngeom; g++) em->geom_friction[3 * g] *= (real)0.3;
    em->body_mass[1] *= (real)1.5;
    cr_assert_eq(rl_batch_env_rebuild(bs[i], 1, err, sizeof err), 0, "%s", err);
    start_state(p.m, 0, q, q + p.m->nq); /* environment 1 from environment 0's start */
    rl_batch_set_reset_state(bs[i], 1, q, q + p.m->nq);
    rl_batch_reset(bs[i], NULL);
  }
  char err[256];
  cr_assert_eq(rl_batch_cuda_attach(cu, RL_CUDA_HOST, err, sizeof err), 0, "%s", err);
  for (int k = 0; k < STEPS; k++) {
    rl_batch_step(cpu, 1);
    rl_batch_cuda_step(cu);
  }
  rl_batch_cuda_sync(cu);
  expect_same(cpu, cu, "per-environment parameters", STEPS);
  cr_expect_neq(rl_state_hash(cu->m[1], cu->d[1]), rl_state_hash(cu->m[0], cu->d[0]),
                "environment 1's friction and mass had no effect");
  free(q);
  rl_batch_cuda_detach(cu);
  rl_batch_free(cu);
  rl_batch_free(cpu);
  rl_pair_free(&p);
}

/* an environment whose AVBD velocity turns non-finite: the step fails, that environment is reset and counted
   (CPU: the step's bad-state test; cuda: the step undone, reset on the host); the others are untouched and
   everything after is the CPU batch's again */
Test(batch_cuda, host_emulation_divergence_policy) {
  rl_pair p;
  load(&p, SCENE("microduck.xml"), NULL);
  enum { N = 3, STEPS = 12 };
  rl_batch *cpu = batch_open(p.m, N), *cu = batch_open(p.m, N);
  char err[256];
  cr_assert_eq(rl_batch_cuda_attach(cu, RL_CUDA_HOST, err, sizeof err), 0, "%s", err);
  for (int k = 0; k < STEPS; k++) {
    if (k == 4) {
      cpu->am[1]->vel[0] = (real)NAN;
      rl_batch_cuda_sync(cu);
      cu->am[1]->vel[0] = (real)NAN;
      rl_batch_cuda_put(cu, 1);
    }
    rl_batch_step(cpu, 1);
    rl_batch_cuda_step(cu);
    rl_batch_cuda_sync(cu);
    for (int e = 0; e < N; e++) {
      cr_expect_eq(cu->resets[e], cpu->resets[e], "env %d resets", e);
      if (e != 1 || k != 4) /* the failed step itself: cpu resets before, cuda after the step; both then reset */
        cr_expect_eq(rl_state_hash(cu->m[e], cu->d[e]), rl_state_hash(cpu->m[e], cpu->d[e]), "env %d step %d", e, k);
    }
  }
  cr_expect_eq(cu->resets[1], 1, "the failing environment reset %ld times (want 1)", cu->resets[1]);
  cr_expect_eq(cu->resets[0] + cu->resets[2], 0);
  rl_batch_cuda_detach(cu);
  rl_batch_free(cu);
  rl_batch_free(cpu);
  rl_pair_free(&p);
}

/* a model with contacts between dynamic bodies (box_stack) is refused with one line; no GPU here or there:
   the GPU mode is refused with "no CUDA device" exactly when the runtime finds none */
Test(batch_cuda, refusals) {
  rl_pair p;
  load(&p, SCENE("box_stack.xml"), NULL);
  rl_batch *b = batch_open(p.m, 2);
  char err[256] = "";
  cr_expect_eq(rl_batch_cuda_attach(b, RL_CUDA_HOST, err, sizeof err), -1);
  cr_expect(strstr(err, "no pair collision") && !strchr(err, '\n'), "refusal: %s", err);
  rl_batch_free(b);
  rl_pair_free(&p);
  load(&p, SCENE("microduck.xml"), NULL);
  b = batch_open(p.m, 2);
  char why[256];
  int ndev = rl_cuda_devices(why, sizeof why);
  int r = rl_batch_cuda_attach(b, RL_CUDA_GPU, err, sizeof err);
  if (ndev == 0) {
    cr_expect_eq(r, -1);
    cr_expect(!strncmp(err, "no CUDA device", 14), "without a device: %s", err);
  } else {
    cr_expect_eq(r, 0, "%s", err);
    rl_batch_cuda_detach(b);
  }
  rl_batch_free(b);
  rl_pair_free(&p);
}
