/* test_batch.c — the batch API (rl_batch.h), CPU backend: each environment's trajectory is the
 * single-environment engine's, bit for bit, at any thread count; a diverging environment is reset and
 * counted without touching the others; per-environment parameters act on their environment only. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include "rl_batch.h"
#include "rl_test_pair.h"

#define SCENE(f) SRCDIR "/experiments/scenes/" f

/* environment e's start: qpos0 with every hinge/slide coordinate shifted by 0.01·(e+1)·(−1)^i and a small
   velocity, so the environments differ */
static void start_state(const rl_model *m, int e, real *qpos, real *qvel) {
  memcpy(qpos, m->qpos0, sizeof(real) * (size_t)m->nq);
  for (int j = 0; j < m->njnt; j++)
    if (m->jnt_type[j] == RL_JNT_HINGE || m->jnt_type[j] == RL_JNT_SLIDE)
      qpos[m->jnt_qposadr[j]] += (real)(0.01 * (e + 1) * (j % 2 ? -1 : 1));
  for (int i = 0; i < m->nv; i++) qvel[i] = (real)(0.01 * (e + 1) * (i % 3 - 1));
}

/* the reference: environment e alone, with the single-environment engine, for `steps` steps */
static uint64_t single_env_hash(const rl_model *m, int engine, int e, int steps) {
  rl_model mm = *m;
  mm.opt.solver = engine == RL_BATCH_CG ? RL_SOLVER_CG : RL_SOLVER_NEWTON;
  rl_data *d = rl_data_alloc(&mm);
  start_state(&mm, e, d->qpos, d->qvel);
  rl_avbd *am = NULL;
  if (engine == RL_BATCH_AVBD) {
    rl_avbd_param prm = rl_avbd_default_param(&mm);
    char err[256];
    am = rl_avbd_build(&mm, &prm, err, sizeof err);
    cr_assert_not_null(am, "%s", err);
    rl_avbd_from_generalized(am, &mm, d);
  }
  for (int k = 0; k < steps; k++) {
    if (am) rl_avbd_step(am, &mm, d);
    else rl_step(&mm, d);
  }
  uint64_t h = rl_state_hash(&mm, d);
  rl_avbd_free(am);
  rl_data_free(d);
  return h;
}

static rl_batch *batch_open(const rl_model *m, int n, int engine) {
  char err[256];
  rl_batch *b = rl_batch_create(m, n, engine, NULL, err, sizeof err);
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

static void check_bit_identity(const char *model, int engine, int steps) {
  rl_pair p;
  load(&p, model, NULL);
  enum { N = 5 };
  uint64_t ref[N];
  for (int e = 0; e < N; e++) ref[e] = single_env_hash(p.m, engine, e, steps);
  if (rl_batch_max_threads() < 2 && !rl_avbd_openmp())
    cr_log_warn("engine built without OpenMP: every thread count ran serially");
  const int threads[] = {1, 2, 3, 4};
  for (int t = 0; t < 4; t++) {
    rl_batch *b = batch_open(p.m, N, engine);
    for (int k = 0; k < steps; k++) rl_batch_step(b, threads[t]);
    for (int e = 0; e < N; e++) {
      cr_expect_eq(rl_state_hash(b->m[e], b->d[e]), ref[e],
                   "%s engine %d env %d at %d threads: not the single engine's", model, engine, e, threads[t]);
      cr_expect_eq(b->resets[e], 0, "%s env %d reset", model, e);
    }
    for (int e = 1; e < N; e++) cr_expect_neq(ref[e], ref[0], "environments should differ");
    rl_batch_free(b);
  }
  rl_pair_free(&p);
}

Test(batch, avbd_microduck_bit_identical_any_threads) { check_bit_identity(SCENE("microduck.xml"), RL_BATCH_AVBD, 30); }
Test(batch, newton_box_stack_bit_identical_any_threads) {
  check_bit_identity(SCENE("box_stack.xml"), RL_BATCH_NEWTON, 40);
}
Test(batch, cg_chain8_bit_identical_any_threads) { check_bit_identity(SCENE("chain8.xml"), RL_BATCH_CG, 40); }

/* a NaN velocity in one environment: that one is reset to its reset state and counted; the others run on
   exactly as without it */
static void check_nan_isolated(int engine) {
  rl_pair p;
  load(&p, SCENE("microduck.xml"), NULL);
  enum { N = 4, STEPS = 10 };
  rl_batch *clean = batch_open(p.m, N, engine), *b = batch_open(p.m, N, engine);
  real *q = malloc(sizeof(real) * (size_t)(p.m->nq + p.m->nv + 1));
  memcpy(q, b->d[2]->qpos, sizeof(real) * (size_t)p.m->nq);
  memcpy(q + p.m->nq, b->d[2]->qvel, sizeof(real) * (size_t)p.m->nv);
  q[p.m->nq] = (real)NAN;
  rl_batch_set_state(b, 2, q, q + p.m->nq);
  free(q);
  for (int k = 0; k < STEPS; k++) {
    rl_batch_step(clean, 2);
    rl_batch_step(b, 2);
  }
  cr_expect_eq(b->resets[2], 1, "engine %d: the NaN environment reset %ld times (want 1)", engine, b->resets[2]);
  for (int e = 0; e < N; e++) {
    cr_expect(rl_state_finite(b->m[e], b->d[e]), "env %d not finite", e);
    if (e != 2) {
      cr_expect_eq(b->resets[e], 0);
      cr_expect_eq(rl_state_hash(b->m[e], b->d[e]), rl_state_hash(clean->m[e], clean->d[e]), "env %d disturbed", e);
    }
  }
  /* after its reset the NaN environment runs from its reset state: STEPS − 1 steps behind the clean one,
     it is where a fresh environment is after the steps it has run since the reset */
  rl_batch *fresh = batch_open(p.m, N, engine);
  int after = (int)(b->d[2]->time / p.m->opt.timestep + 0.5);
  for (int k = 0; k < after; k++) rl_batch_step(fresh, 1);
  cr_expect_eq(rl_state_hash(b->m[2], b->d[2]), rl_state_hash(fresh->m[2], fresh->d[2]),
               "engine %d: the reset environment is not a fresh one after %d steps", engine, after);
  rl_batch_free(fresh);
  rl_batch_free(clean);
  rl_batch_free(b);
  rl_pair_free(&p);
}
Test(batch, nan_environment_reset_and_isolated_avbd) { check_nan_isolated(RL_BATCH_AVBD); }
Test(batch, nan_environment_reset_and_isolated_newton) { check_nan_isolated(RL_BATCH_NEWTON); }

/* per-environment parameters: friction of one environment's geoms and the mass of one body change that
   environment only; the shared model is untouched */
Test(batch, per_environment_parameters) {
  rl_pair p;
  load(&p, SCENE("box_stack.xml"), NULL);
  enum { N = 3, STEPS = 60 };
  const int engines[] = {RL_BATCH_NEWTON, RL_BATCH_AVBD};
  for (int ei = 0; ei < 2; ei++) {
    int engine = engines[ei];
    rl_batch *a = batch_open(p.m, N, engine), *b = batch_open(p.m, N, engine);
    real f0 = p.m->geom_friction[0], m1 = p.m->body_mass[1];
    rl_model *em = rl_batch_env_model(b, 1);
    cr_assert_not_null(em);
    for (int g = 0; g < em->ngeom; g++) em->geom_friction[3 * g] *= (real)0.1;
    em->body_mass[1] *= 2;
    char err[256];
    cr_assert_eq(rl_batch_env_rebuild(b, 1, err, sizeof err), 0, "%s", err);
    rl_batch_reset(b, NULL);
    cr_expect_eq(p.m->geom_friction[0], f0, "shared model changed");
    cr_expect_eq(p.m->body_mass[1], m1, "shared model changed");
    cr_expect(fabs((double)(em->body_subtreemass[0] - p.m->body_subtreemass[0] - m1)) < 1e-5 * (double)m1,
              "subtree mass not re-derived: %g vs %g + %g", (double)em->body_subtreemass[0],
              (double)p.m->body_subtreemass[0], (double)m1);
    for (int k = 0; k < STEPS; k++) {
      rl_batch_step(a, 2);
      rl_batch_step(b, 2);
    }
    for (int e = 0; e < N; e++) {
      uint64_t ha = rl_state_hash(a->m[e], a->d[e]), hb = rl_state_hash(b->m[e], b->d[e]);
      if (e == 1) cr_expect_neq(ha, hb, "engine %d: changed parameters had no effect", engine);
      else cr_expect_eq(ha, hb, "engine %d: env %d affected by env 1's parameters", engine, e);
    }
    rl_batch_free(a);
    rl_batch_free(b);
  }
  rl_pair_free(&p);
}

Test(batch, bad_arguments_refused) {
  rl_pair p;
  load(&p, SCENE("chain8.xml"), NULL);
  char err[256] = "";
  cr_expect_null(rl_batch_create(p.m, 0, RL_BATCH_AVBD, NULL, err, sizeof err));
  cr_expect_neq(strstr(err, "environments"), NULL, "%s", err);
  cr_expect_null(rl_batch_create(p.m, 2, 7, NULL, err, sizeof err));
  rl_pair_free(&p);
}
