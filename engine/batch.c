/* batch.c — N environments of one model (see rl_batch.h): the CPU backend. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rl_batch.h"
#ifdef _OPENMP
#include <omp.h>
#endif

rl_model *rl_model_copy(const rl_model *m) {
  rl_model *c = rl_model_alloc(m);
  if (!c) return NULL;
  c->opt = m->opt;
#define RL_X_FIELD(type, name, count, width) \
  if (m->count) memcpy(c->name, m->name, sizeof(type) * (size_t)m->count * (width));
  RL_MODEL_FIELDS(RL_X_FIELD)
#undef RL_X_FIELD
  return c;
}

/* subtree mass of body b = its mass + its descendants' (children have larger ids than their parent) */
static void subtree_masses(rl_model *m) {
  for (int b = 0; b < m->nbody; b++) m->body_subtreemass[b] = m->body_mass[b];
  for (int b = m->nbody - 1; b > 0; b--) m->body_subtreemass[m->body_parentid[b]] += m->body_subtreemass[b];
}

static rl_avbd *build_avbd(const rl_batch *b, int e, rl_data *d, char *err, int errlen) {
  rl_avbd *am = rl_avbd_build(b->m[e], &b->prm, err, errlen);
  if (am) rl_avbd_from_generalized(am, b->m[e], d);
  return am;
}

rl_batch *rl_batch_create(const rl_model *m, int n, int engine, const rl_avbd_param *prm, char *err, int errlen) {
  if (n < 1 || engine < RL_BATCH_NEWTON || engine > RL_BATCH_AVBD) {
    snprintf(err, (size_t)errlen, "batch: %d environments of engine %d (need ≥ 1 and newton, cg or avbd)", n, engine);
    return NULL;
  }
  rl_batch *b = calloc(1, sizeof *b);
  if (!b) goto oom;
  b->base = m;
  b->n = n;
  b->engine = engine;
  b->prm = prm ? *prm : rl_avbd_default_param(m);
  b->prm.threads = 1; /* the batch's threads run environments, not bodies */
  b->m = calloc((size_t)n, sizeof *b->m);
  b->own = calloc((size_t)n, sizeof *b->own);
  b->d = calloc((size_t)n, sizeof *b->d);
  b->am = calloc((size_t)n, sizeof *b->am);
  b->reset_qpos = calloc((size_t)n * (size_t)m->nq + 1, sizeof(real));
  b->reset_qvel = calloc((size_t)n * (size_t)m->nv + 1, sizeof(real));
  b->resets = calloc((size_t)n, sizeof *b->resets);
  b->unconverged = calloc((size_t)n, sizeof *b->unconverged);
  if (!b->m || !b->own || !b->d || !b->am || !b->reset_qpos || !b->reset_qvel || !b->resets || !b->unconverged)
    goto oom;
  for (int e = 0; e < n; e++) {
    b->m[e] = malloc(sizeof(rl_model));
    if (!b->m[e]) goto oom;
    *b->m[e] = *m; /* shallow: the shared arrays */
    b->m[e]->opt.solver = engine == RL_BATCH_CG ? RL_SOLVER_CG : RL_SOLVER_NEWTON;
    b->d[e] = rl_data_alloc(m);
    if (!b->d[e]) goto oom;
    memcpy(b->reset_qpos + (size_t)e * m->nq, m->qpos0, sizeof(real) * (size_t)m->nq);
    if (engine == RL_BATCH_AVBD && !(b->am[e] = build_avbd(b, e, b->d[e], err, errlen))) {
      rl_batch_free(b);
      return NULL;
    }
  }
  return b;
oom:
  snprintf(err, (size_t)errlen, "batch: cannot allocate %d environments", n);
  rl_batch_free(b);
  return NULL;
}

void rl_batch_free(rl_batch *b) {
  if (!b) return;
  for (int e = 0; e < b->n; e++) {
    if (b->am) rl_avbd_free(b->am[e]);
    if (b->d) rl_data_free(b->d[e]);
    if (b->m && b->m[e]) {
      if (b->own && b->own[e]) rl_model_free(b->m[e]);
      else free(b->m[e]);
    }
  }
  free(b->m);
  free(b->own);
  free(b->d);
  free(b->am);
  free(b->reset_qpos);
  free(b->reset_qvel);
  free(b->resets);
  free(b->unconverged);
  free(b);
}

/* environment e to its reset state; solver caches (warm start, AVBD multipliers/contacts) cleared and
   d->jnt_range, d->eq_active back to the environment's model (per-environment ranges that must survive a
   reset belong in rl_batch_env_model's jnt_range) */
static void reset_env(rl_batch *b, int e) {
  const rl_model *m = b->m[e];
  rl_data *d = b->d[e];
  int w[RL_NWARN];
  memcpy(w, d->warning, sizeof w);
  rl_data_reset(m, d);
  memcpy(d->warning, w, sizeof w);
  memcpy(d->qpos, b->reset_qpos + (size_t)e * m->nq, sizeof(real) * (size_t)m->nq);
  memcpy(d->qvel, b->reset_qvel + (size_t)e * m->nv, sizeof(real) * (size_t)m->nv);
  if (b->am[e]) rl_avbd_from_generalized(b->am[e], m, d);
}

/* one environment's step, then the divergence policy */
static void step_env(rl_batch *b, int e) {
  const rl_model *m = b->m[e];
  rl_data *d = b->d[e];
  int ok, converged;
  if (b->am[e]) {
    ok = rl_avbd_step(b->am[e], m, d) == RL_OK;
    converged = b->am[e]->stat.converged;
  } else {
    int before = d->warning[RL_WARN_BADQPOS] + d->warning[RL_WARN_BADQVEL];
    rl_step(m, d);
    ok = d->warning[RL_WARN_BADQPOS] + d->warning[RL_WARN_BADQVEL] == before; /* rl_step's own reset */
    converged = d->solver_converged;
  }
  if (!converged) b->unconverged[e]++;
  if (!ok || !rl_state_finite(m, d)) {
    b->resets[e]++;
    reset_env(b, e);
  }
}

void rl_batch_step(rl_batch *b, int threads) {
#ifdef _OPENMP
  if (threads > 1) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int e = 0; e < b->n; e++) step_env(b, e);
  } else
#endif
    for (int e = 0; e < b->n; e++) step_env(b, e);
  b->steps++;
}

int rl_batch_max_threads(void) {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void rl_batch_reset(rl_batch *b, const unsigned char *mask) {
  for (int e = 0; e < b->n; e++)
    if (!mask || mask[e]) reset_env(b, e);
}

void rl_batch_set_state(rl_batch *b, int e, const real *qpos, const real *qvel) {
  const rl_model *m = b->m[e];
  rl_data *d = b->d[e];
  memcpy(d->qpos, qpos, sizeof(real) * (size_t)m->nq);
  memcpy(d->qvel, qvel, sizeof(real) * (size_t)m->nv);
  memset(d->qacc_warmstart, 0, sizeof(real) * (size_t)m->nv);
  if (b->am[e]) rl_avbd_from_generalized(b->am[e], m, d);
}

void rl_batch_set_reset_state(rl_batch *b, int e, const real *qpos, const real *qvel) {
  const rl_model *m = b->m[e];
  memcpy(b->reset_qpos + (size_t)e * m->nq, qpos, sizeof(real) * (size_t)m->nq);
  if (qvel) memcpy(b->reset_qvel + (size_t)e * m->nv, qvel, sizeof(real) * (size_t)m->nv);
  else memset(b->reset_qvel + (size_t)e * m->nv, 0, sizeof(real) * (size_t)m->nv);
}

rl_model *rl_batch_env_model(rl_batch *b, int e) {
  if (b->own[e]) return b->m[e];
  rl_model *c = rl_model_copy(b->m[e]);
  if (!c) return NULL;
  free(b->m[e]);
  b->m[e] = c;
  b->own[e] = 1;
  return c;
}

int rl_batch_env_rebuild(rl_batch *b, int e, char *err, int errlen) {
  if (b->own[e]) subtree_masses(b->m[e]);
  if (!b->am[e]) return 0;
  rl_avbd *am = rl_avbd_build(b->m[e], &b->prm, err, errlen);
  if (!am) return -1;
  rl_avbd_free(b->am[e]);
  b->am[e] = am;
  rl_avbd_from_generalized(am, b->m[e], b->d[e]);
  return 0;
}
