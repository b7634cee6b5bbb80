/* rl_batch.h — one model, N environments stepped together.
 *
 * Each environment has its own state (rl_data: qpos, qvel, act-free controls, contacts, solver warm
 * start), its own AVBD state when the engine is AVBD (multiplier and penalty caches, contact cache,
 * coloring), its own reset state and its own counters.  The model is shared: an environment's model
 * is a shallow copy of the batch's until a parameter of it is changed (rl_batch_env_model, copy on
 * first write), so N environments cost N states, not N models.  Joint ranges are per environment in
 * two ways: d->jnt_range (state: a reset restores the environment model's) and the environment model's
 * jnt_range (kept over resets).
 *
 *   b = rl_batch_create(m, N, RL_BATCH_AVBD, NULL, err, n);
 *   loop { write b->d[e]->ctrl …; rl_batch_step(b, threads); read b->d[e]->qpos … }
 *
 * CPU backend: the environments are split over `threads` OpenMP threads (when the engine is built with
 * OpenMP).  Environments share no mutable data, so every environment's trajectory is the one the
 * single-environment engine computes from the same state, bit for bit, at any thread count.
 *
 * Divergence policy: an environment whose step fails (AVBD: non-finite update, the step undone), whose
 * engine met a bad qpos, qvel or qacc in the step (its warning counters moved: the engine's own reset,
 * docs/reliability.md) or that ends with a non-finite or huge qpos/qvel (the soft engine's rl_check_state
 * bounds) is reset to its reset
 * state (qpos0 and zero velocity unless rl_batch_set_reset_state gave another), its counter resets[e]
 * is incremented, and no other environment is touched. */
#ifndef RL_BATCH_H
#define RL_BATCH_H
#include "rl_engine.h"
#include "rl_avbd.h"

enum { RL_BATCH_NEWTON = 0, RL_BATCH_CG = 1, RL_BATCH_AVBD = 2 };

typedef struct rl_batch {
  const rl_model *base; /* the model every environment starts from (not owned) */
  int n;                /* environments */
  int engine;           /* RL_BATCH_* */
  rl_avbd_param prm;    /* AVBD parameters of every environment (prm.threads forced to 1) */
  rl_model **m;         /* [n] each environment's model: base's shallow copy, or an own copy */
  int *own;             /* [n] 1 when m[e] is an own deep copy */
  rl_data **d;          /* [n] */
  rl_avbd **am;         /* [n] AVBD states (engine AVBD), else NULL entries */
  real *reset_qpos;     /* [n × nq] reset states */
  real *reset_qvel;     /* [n × nv] */
  long *resets;         /* [n] resets by the divergence policy */
  long *unconverged;    /* [n] steps whose solver did not meet its stopping test */
  long steps;           /* rl_batch_step calls */
  void *dev;            /* the CUDA backend's images (engine/cuda/rl_batch_cuda.h), NULL on the CPU */
} rl_batch;

/* N environments of model m at qpos0; engine RL_BATCH_*; prm: AVBD parameters (NULL: the model's
   defaults).  NULL with a one-line err on a refused model or a failed allocation. */
rl_batch *rl_batch_create(const rl_model *m, int n, int engine, const rl_avbd_param *prm, char *err, int errlen);
void rl_batch_free(rl_batch *b);

/* Step every environment once (threads ≤ 1: serial). */
void rl_batch_step(rl_batch *b, int threads);
/* the threads rl_batch_step can use: OpenMP's default team size, 1 when the engine is built without OpenMP */
int rl_batch_max_threads(void);

/* Environments e with mask[e] != 0 (mask NULL: all) back to their reset state, solver caches cleared. */
void rl_batch_reset(rl_batch *b, const unsigned char *mask);

/* Environment e's state (qpos nq, qvel nv), solver caches cleared as by a reset; a non-finite state is
   not refused here: the next rl_batch_step applies the divergence policy to it. */
void rl_batch_set_state(rl_batch *b, int e, const real *qpos, const real *qvel);

/* The reset state of environment e (qpos nq, qvel nv; qvel NULL: zero). */
void rl_batch_set_reset_state(rl_batch *b, int e, const real *qpos, const real *qvel);

/* Environment e's own model, copied from the shared one on first call, for per-environment parameters
   (geom_friction, body_mass, body_inertia, dof_damping, …); NULL when the copy cannot be allocated.
   After changing masses or inertias call rl_batch_env_rebuild. */
rl_model *rl_batch_env_model(rl_batch *b, int e);

/* Re-derive environment e after its model changed: subtree masses, and (AVBD) the solver state rebuilt
   from the current qpos/qvel.  0, or −1 with a one-line err (e.g. a mass made zero). */
int rl_batch_env_rebuild(rl_batch *b, int e, char *err, int errlen);

/* A deep copy of m (every array, the options, the names); NULL when it cannot be allocated. */
rl_model *rl_model_copy(const rl_model *m);

#endif
