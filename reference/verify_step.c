/* verify_step.c — verify stage 'step': one whole constrained step (collision, rows, solver,
 * integrator) of rigidlab against mj_step from the same state with identical options.
 *
 * Both sides start from a zero warm start (qacc_warmstart = 0), so the solver's start is the same
 * choice between 0 and qacc_smooth on both.  rigidlab runs MuJoCo-compatible: collision mode mujoco
 * (one MPR point per convex pair) and convex contact resolution (MuJoCo has no signorini); the cone,
 * solver, iterations and tolerance are the model's (set them with --opt).  Rows: qpos and qvel after
 * the step, the step's qacc, and ncon/nefc mismatches (absolute). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "verify.h"

enum { S_QPOS, S_QVEL, S_QACC, S_NCON, S_NEFC, NS };
static const char *const names[NS] = {"qpos", "qvel", "qacc", "ncon", "nefc"};
static const int absolute[NS] = {[S_NCON] = 1, [S_NEFC] = 1};
/* qpos/qvel/qacc: the stage tolerance (1e-8 f64) for Newton.  CG stops on a cost-difference line
   search that resolves q̈ only to about √ε·cond, so two correct CGs (or one CG and the exact optimum)
   differ far above 1e-8: measured, MuJoCo 2.2.2's own CG vs its own Newton over one humanoid step
   differs by up to 4.5e-5 in qvel (microduck 9.6e-6).  With the CG solver these rows get 1e-4 (set in
   init); docs/verify.md has the figures. */
static double tol[NS] = {[S_NCON] = 0.5, [S_NEFC] = 0.5};

typedef struct own {
  mjData *mjd; /* MuJoCo's side of the step */
} own;

static int init(rl_vctx *c) {
  double t = c->p->m->opt.solver == RL_SOLVER_CG ? 1e-4 : 0;
  tol[S_QPOS] = tol[S_QVEL] = tol[S_QACC] = t;
  own *o = calloc(1, sizeof *o);
  if (!o) return -1;
  o->mjd = mj_makeData(c->p->mjm);
  c->own = o;
  return o->mjd ? 0 : -1;
}

static void fini(rl_vctx *c) {
  own *o = c->own;
  if (!o) return;
  mj_deleteData(o->mjd);
  free(o);
  c->own = NULL;
}

static void state(rl_vctx *c, rl_vq *q) {
  own *o = c->own;
  const rl_model *m = c->p->m;
  rl_data *d = c->d;
  mjData *mjd = o->mjd;
  rl_model *mw = (rl_model *)m; /* MuJoCo-compatible modes for this comparison, restored below */
  int coll = mw->opt.collision, res = mw->opt.contact_resolution;
  mw->opt.collision = RL_COLL_MUJOCO;
  mw->opt.contact_resolution = RL_RES_CONVEX;
  rl_set_state(c->p, d, mjd, c->qpos, c->qvel, c->ctrl);
  memset(d->qacc_warmstart, 0, sizeof(real) * (size_t)m->nv);
  mju_zero(mjd->qacc_warmstart, c->p->mjm->nv);
  d->time = 0;
  mjd->time = 0;
  int warn0 = d->warning[RL_WARN_CONTACTFULL];
  mj_step(c->p->mjm, mjd);
  rl_step(m, d);
  mw->opt.collision = coll;
  mw->opt.contact_resolution = res;
  if (d->warning[RL_WARN_CONTACTFULL] != warn0 || mjd->ncon >= c->p->mjm->nconmax) return; /* no reference */
  rl_vq_compare(&q[S_QPOS], d->qpos, mjd->qpos, m->nq);
  rl_vq_compare(&q[S_QVEL], d->qvel, mjd->qvel, m->nv);
  rl_vq_compare(&q[S_QACC], d->qacc, mjd->qacc, m->nv);
  rl_vq_record(&q[S_NCON], fabs((double)d->ncon - mjd->ncon), 0);
  rl_vq_record(&q[S_NEFC], fabs((double)d->nefc - mjd->nefc), 0);
}

/* f64 only: a float step through stiff soft contacts flips contact counts and amplifies rounding far
   beyond any fixed bar (measured: qvel differences up to 0.4 relative on humanoid100 states), so f32
   one-step accuracy is measured from identical f64 states by the FP32-vs-FP64 study instead. */
#if defined(RL_REAL_F32)
#define RL_STEP_ROWS 0
#else
#define RL_STEP_ROWS NS
#endif
const rl_vmodule rl_vmod_step = {.stage = RL_STAGE_STEP, .nq = RL_STEP_ROWS, .names = names, .tol = tol, .absolute = absolute,
                                 .init = init, .state = state, .fini = fini};
