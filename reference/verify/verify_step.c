/* verify_step.c — verify stage 'step': one whole constrained step (collision, rows, solver,
 * integrator) of rigidlab against mj_step from the same state with identical options.
 *
 * Both sides start from a zero warm start (qacc_warmstart = 0), so the solver's start is the same
 * choice between 0 and qacc_smooth on both.  rigidlab runs MuJoCo-compatible: collision mode mujoco
 * (one MPR point per convex pair) and convex contact resolution (MuJoCo has no signorini); the cone,
 * solver, iterations and tolerance are the model's (set them with --opt).  Rows: qpos and qvel after
 * the step, the step's qacc, and ncon/nefc mismatches (absolute).
 *
 * States left out: a solver that stops on a tolerance is a discontinuous map near its stopping test,
 * and a contact at its activation boundary switches on or off with the last bit of qpos, so a state
 * where MuJoCo's own step moves by more than 1e-10 (relative qvel), changes its contact or row count, or
 * moves one of its contacts by more than 1e-6 of the pair's size when qpos is perturbed by 1e-13 and
 * qvel by 1e-15 (relative, alternating signs) has no reproducible answer at 1e-8 for any
 * implementation (measured: MuJoCo's CG on tests/models/equality.xml moves 6e-5 under that
 * perturbation, Newton 3e-14).  A state where either side's contact buffer is full has no reference.
 * Both are left out of the comparison and counted, each reason in its own row (left_out_sensitive,
 * left_out_capacity: running fractions of the states) and together in left_out; more than 10 % left
 * out fails, since the comparison then says too little.  Only MuJoCo's own sensitivity can leave a
 * state out: a contact or row count that differs between rigidlab and MuJoCo is a failure of the
 * ncon / nefc rows, except where MuJoCo's mj_collision on rigidlab's frames (the same kinematics to ~1e-16)
 * finds rigidlab's count and on its own frames another one (left_out_sensitive: MuJoCo's count is not
 * reproducible at that state), and a contact that differs in place shows in qpos, qvel and qacc.  */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tolerances.h"
#include "verify.h"

enum { S_QPOS, S_QVEL, S_QACC, S_NCON, S_NEFC, S_LEFT, S_LEFT_SENSITIVE, S_LEFT_CAPACITY, NS };
static const char *const names[NS] = {
    "qpos", "qvel", "qacc", "ncon", "nefc", "left_out", "left_out_sensitive", "left_out_capacity"};
static const int absolute[NS] = {[S_NCON] = 1, [S_NEFC] = 1};
static const int last[NS] = {[S_LEFT] = 1, [S_LEFT_SENSITIVE] = 1, [S_LEFT_CAPACITY] = 1};
static const double tol[NS] = {
    [S_NCON] = 0.5, [S_NEFC] = 0.5, [S_LEFT] = 0.1, [S_LEFT_SENSITIVE] = 0.1, [S_LEFT_CAPACITY] = 0.1};

typedef struct own {
  mjData *mjd, *pert;              /* MuJoCo's side of the step, and at the perturbed state */
  mjData *onours;                  /* MuJoCo's collision on rigidlab's frames of the same state */
  int states, sensitive, capacity; /* states seen; left out by MuJoCo's sensitivity, by a full contact buffer */
} own;

static int init(rl_vctx *c) {
  own *o = calloc(1, sizeof *o);
  if (!o) return -1;
  o->mjd = mj_makeData(c->p->mjm);
  o->pert = mj_makeData(c->p->mjm);
  o->onours = mj_makeData(c->p->mjm);
  c->own = o;
  return o->mjd && o->pert && o->onours ? 0 : -1;
}

static void fini(rl_vctx *c) {
  own *o = c->own;
  if (!o) return;
  mj_deleteData(o->mjd);
  mj_deleteData(o->pert);
  mj_deleteData(o->onours);
  free(o);
  c->own = NULL;
}

/* 1 if a contact of MuJoCo's collision at the perturbed state (B) differs from its contact at the state (A) by
   more than 1e-6 of its pair's size (distance or position): a branch point of a collision routine (MPR on a deep
   polytope overlap, coincident box edges), where the two kinematics' 1e-16 differences decide the branch. */
static int contacts_jumped(const mjModel *mjm, const mjData *a, const mjData *b) {
  if (a->ncon != b->ncon) return 1;
  for (int i = 0; i < a->ncon; i++) {
    const mjContact *mc = a->contact + i;
    double scale = mjm->geom_rbound[mc->geom1] + mjm->geom_rbound[mc->geom2], best = INFINITY;
    if (!(scale > 0)) scale = 1;
    for (int j = 0; j < b->ncon; j++) {
      const mjContact *pc = b->contact + j;
      if (!((pc->geom1 == mc->geom1 && pc->geom2 == mc->geom2) || (pc->geom1 == mc->geom2 && pc->geom2 == mc->geom1)))
        continue;
      double e = fabs(pc->dist - mc->dist);
      for (int k = 0; k < 3; k++) e = fmax(e, fabs(pc->pos[k] - mc->pos[k]));
      best = fmin(best, e);
    }
    if (!(best <= 1e-6 * scale)) return 1;
  }
  return 0;
}

/* the running fractions of left-out states, per reason and together */
static void record_left_out(const own *o, rl_vq *q) {
  double n = o->states;
  rl_vq_record(&q[S_LEFT], (o->sensitive + o->capacity) / n, 1);
  rl_vq_record(&q[S_LEFT_SENSITIVE], o->sensitive / n, 1);
  rl_vq_record(&q[S_LEFT_CAPACITY], o->capacity / n, 1);
}

/* the step's rows: contact and row counts (absolute), qpos, qvel and qacc against MuJoCo's */
static void record_step(const rl_model *m, const rl_data *d, const mjData *mjd, rl_vq *q) {
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
      fprintf(stderr, "  ours g%d-g%d dim %d dist %.6g incl %.6g | mj g%d-g%d dim %d dist %.6g incl %.6g\n",
              d->contact[i].geom1, d->contact[i].geom2, d->contact[i].dim, (double)d->contact[i].dist,
              (double)d->contact[i].includemargin, i < mjd->ncon ? mjd->contact[i].geom1 : -1,
              i < mjd->ncon ? mjd->contact[i].geom2 : -1, i < mjd->ncon ? mjd->contact[i].dim : -1,
              i < mjd->ncon ? mjd->contact[i].dist : 0, i < mjd->ncon ? mjd->contact[i].includemargin : 0);
    for (int i = 0; i < mjd->ncon; i++)
      fprintf(stderr, "  mj contact %d exclude %d efc_address %d\n", i, mjd->contact[i].exclude,
              mjd->contact[i].efc_address);
  }
  rl_vq_compare(&q[S_QPOS], d->qpos, mjd->qpos, m->nq);
  rl_vq_compare(&q[S_QVEL], d->qvel, mjd->qvel, m->nv);
  rl_vq_compare(&q[S_QACC], d->qacc, mjd->qacc, m->nv);
}

/* 1 if rigidlab's step equals MuJoCo's at TOL: the same contact and row counts, qpos and qvel within TOL·max(‖·‖∞, 1) */
static int step_agrees(const rl_model *m, const rl_data *d, const mjData *mjd, double tol) {
  if (d->ncon != mjd->ncon || d->nefc != mjd->nefc) return 0;
  double ep = 0, mp = 1, ev = 0, mv = 1;
  for (int i = 0; i < m->nq; i++)
    ep = fmax(ep, fabs((double)d->qpos[i] - mjd->qpos[i])), mp = fmax(mp, fabs(mjd->qpos[i]));
  for (int i = 0; i < m->nv; i++)
    ev = fmax(ev, fabs((double)d->qvel[i] - mjd->qvel[i])), mv = fmax(mv, fabs(mjd->qvel[i]));
  return ep <= tol * mp && ev <= tol * mv;
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
  rl_kinematics(m, d);
  rl_vq_mj_collision_on(c->p->mjm, o->onours, c->mjd->qpos, d);
  int warn0 = d->warning[RL_WARN_CONTACTFULL];
  mj_step(c->p->mjm, mjd);
  rl_step(m, d);
  mw->opt.collision = coll;
  mw->opt.contact_resolution = res;
  o->states++;
  if (d->warning[RL_WARN_CONTACTFULL] != warn0 || mjd->ncon >= c->p->mjm->nconmax) { /* no reference */
    o->capacity++;
    record_left_out(o, q);
    return;
  }
  const mjModel *mjm = c->p->mjm;
  if (step_agrees(m, d, mjd, rl_verify_tolerance(RL_STAGE_STEP, RL_IS_F32))) { /* nothing to excuse */
    record_left_out(o, q);
    record_step(m, d, mjd, q);
    return;
  }
  /* a disagreement: a contact or row count that differs is a failure, unless MuJoCo's own collision disagrees
     with itself: on rigidlab's frames (equal to its own to ~1e-16, the kinematics rows) it finds rigidlab's count,
     on its own frames another (measured on panda_like: parallel finger-pad boxes, where MuJoCo's box-box
     clipping adds a fifth point that duplicates a corner to 1e-12 on one set of frames and not on the other,
     frames 5.6e-16 apart) — a count MuJoCo cannot reproduce is left out as sensitive; any other disagreement is
     left out only where MuJoCo's own step is not reproducible at this state */
  if (d->ncon != mjd->ncon || d->nefc != mjd->nefc) {
    int own_tie = d->ncon != mjd->ncon && o->onours->ncon == d->ncon;
    o->sensitive += own_tie;
    record_left_out(o, q);
    if (!own_tie) record_step(m, d, mjd, q);
    return;
  }
  mjData *pt = o->pert;
  for (int i = 0; i < mjm->nq; i++)
    pt->qpos[i] = c->mjd->qpos[i] + (i % 2 ? 1e-13 : -1e-13) * fmax(fabs(c->mjd->qpos[i]), 1);
  for (int i = 0; i < mjm->nv; i++) pt->qvel[i] = c->mjd->qvel[i] * (1 + (i % 2 ? 1e-15 : -1e-15));
  mju_copy(pt->ctrl, c->mjd->ctrl, mjm->nu);
  rl_mj_copy_inputs(mjm, pt, c->mjd);
  mju_zero(pt->qacc_warmstart, mjm->nv);
  pt->time = 0;
  mj_step(mjm, pt);
  double dv = 0, mag = 1;
  for (int i = 0; i < mjm->nv; i++) {
    dv = fmax(dv, fabs(pt->qvel[i] - mjd->qvel[i]));
    mag = fmax(mag, fabs(mjd->qvel[i]));
  }
  int sensitive = !(dv <= 1e-10 * mag) || pt->ncon != mjd->ncon || pt->nefc != mjd->nefc ||
                  contacts_jumped(mjm, mjd, pt) || contacts_jumped(mjm, mjd, o->onours);
  o->sensitive += sensitive;
  record_left_out(o, q);
  if (!sensitive) record_step(m, d, mjd, q);
}

/* f64 only: a float step through stiff soft contacts flips contact counts and amplifies rounding far
   beyond any fixed bar (measured: qvel differences up to 0.4 relative on humanoid100 states), so f32
   one-step accuracy is measured from identical f64 states by the FP32-vs-FP64 study instead. */
#if defined(RL_REAL_F32)
#define RL_STEP_ROWS 0
#else
#define RL_STEP_ROWS NS
#endif
const rl_vmodule rl_vmod_step = {.stage = RL_STAGE_STEP,
                                 .nq = RL_STEP_ROWS,
                                 .names = names,
                                 .tol = tol,
                                 .absolute = absolute,
                                 .last = last,
                                 .init = init,
                                 .state = state,
                                 .fini = fini};
