/* verify_step.c — verify stage 'step': one whole constrained step (collision, rows, solver,
 * integrator) of rigidlab against mj_step from the same state with identical options.
 *
 * Both sides start from a zero warm start (qacc_warmstart = 0), so the solver's start is the same
 * choice between 0 and qacc_smooth on both.  rigidlab runs MuJoCo-compatible: collision mode mujoco
 * (one MPR point per convex pair) and convex contact resolution (MuJoCo has no signorini); the cone,
 * solver, iterations and tolerance are the model's (set them with --opt).  Rows: qpos and qvel after
 * the step, the step's qacc, and ncon/nefc mismatches (absolute).
 *
 * Reproducibility.  A solver that stops on a tolerance is a discontinuous map near its stopping test,
 * and a contact at its activation boundary switches on or off with the last bit of qpos, so where the
 * two steps disagree verify asks whether MuJoCo's own step is reproducible: it steps MuJoCo again with
 * qpos perturbed by 1e-13 and qvel by 1e-15 (relative, alternating signs).  Measured: MuJoCo's CG on
 * tests/models/equality.xml moves 6e-5 under that perturbation, Newton 3e-14.
 *   - The contacts or rows change (count, or a contact moves by more than 1e-6 of its pair's size) —
 *     a collision branch point: no implementation has a reproducible answer; the state is left out
 *     (left_out_sensitive).
 *   - Only qvel moves (more than 1e-10 relative), with the same contacts and rows: the solver's stopping
 *     point.  Both sides then step the same state again with the solver at the optimum (Newton,
 *     tolerance 1e-15, 100 iterations, no noslip; the same collision, rows and integrator), and MuJoCo's
 *     optimum is stepped from the perturbed state too.  If that one is reproducible (≤ 1e-10), the state
 *     is compared at the optimum — its rows go into qpos/qvel/qacc/ncon/nefc like every other state's,
 *     and compared_at_optimum counts them: the collision, rows and integration of the state are
 *     verified, only the model solver's stopping point is not (the solve stage checks that on MuJoCo's
 *     own problems: qacc_cg, qacc_newton, qacc_pgs).  If the optimum is not reproducible either, the
 *     state is left out as sensitive.
 * A state where either side's contact buffer, or MuJoCo's row buffer (njmax: it then drops the rows of the
 * contacts that do not fit), is full has no reference (left_out_capacity).  Each reason
 * is a row (running fractions of the states) and left_out is their sum; more than 10 % left out fails,
 * since the comparison then says too little.  Only MuJoCo's own sensitivity can leave a state out: a
 * contact or row count that differs between rigidlab and MuJoCo is a failure of the ncon / nefc rows,
 * except where MuJoCo's mj_collision on rigidlab's frames (the same kinematics to ~1e-16) finds
 * rigidlab's count and on its own frames another one (a contact tie: MuJoCo's count is not reproducible at
 * that state; measured on boxes resting face to face, where its box-box clipping adds a fifth point that
 * duplicates a corner to 1e-12 on one set of frames and not on the other).  Such a state is compared with
 * MuJoCo's own step taken on the contacts its collision finds on rigidlab's frames (its pipeline run stage by
 * stage with that contact list, compared_at_contact_tie counts them; at the optimum where that step is not
 * reproducible); only RK4 and implicit models, whose stages MuJoCo's API does not expose, leave it out
 * (left_out_sensitive).  A contact that differs in place shows in qpos, qvel and qacc.  */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tolerances.h"
#include "verify.h"

enum { S_QPOS, S_QVEL, S_QACC, S_NCON, S_NEFC, S_LEFT, S_LEFT_SENSITIVE, S_LEFT_CAPACITY, S_OPTIMUM, S_TIE, NS };
static const char *const names[NS] = {"qpos",     "qvel",          "qacc",
                                      "ncon",     "nefc",          "left_out",
                                      "left_out_sensitive", "left_out_capacity", "compared_at_optimum",
                                      "compared_at_contact_tie"};
static const int absolute[NS] = {[S_NCON] = 1, [S_NEFC] = 1};
static const int last[NS] = {[S_LEFT] = 1, [S_LEFT_SENSITIVE] = 1, [S_LEFT_CAPACITY] = 1, [S_OPTIMUM] = 1,
                             [S_TIE] = 1};
/* compared_at_optimum and compared_at_contact_tie count how the states were compared, not a shortfall: any
   fraction passes */
static const double tol[NS] = {[S_NCON] = 0.5,           [S_NEFC] = 0.5,           [S_LEFT] = 0.1,
                               [S_LEFT_SENSITIVE] = 0.1, [S_LEFT_CAPACITY] = 0.1, [S_OPTIMUM] = 1,
                               [S_TIE] = 1};

/* the solver at the optimum: Newton, tolerance 1e-15, 100 iterations, no noslip post-solve */
#define OPT_TOLERANCE  1e-15
#define OPT_ITERATIONS 100

typedef struct own {
  mjModel *optimum;                /* MuJoCo's model with the solver at the optimum (OPT_*) */
  mjData *mjd, *pert;              /* MuJoCo's side of the step, and at the perturbed state (verify's scratch) */
  mjData *onours;                  /* MuJoCo's collision on rigidlab's frames of the same state (verify's scratch) */
  int states, sensitive, capacity; /* states seen; left out by MuJoCo's sensitivity, by a full contact buffer */
  int at_optimum;                  /* states compared with both solvers at the optimum */
  int at_tie;                      /* states compared on MuJoCo's contacts at rigidlab's frames (a contact tie) */
} own;

static int init(rl_vctx *c) {
  own *o = calloc(1, sizeof *o);
  if (!o) return -1;
  c->own = o;
  o->optimum = mj_copyModel(NULL, c->p->mjm);
  if (!o->optimum) return -1;
  o->optimum->opt.solver = mjSOL_NEWTON;
  o->optimum->opt.tolerance = OPT_TOLERANCE;
  o->optimum->opt.iterations = OPT_ITERATIONS;
  o->optimum->opt.noslip_iterations = 0;
  o->mjd = rl_vq_scratch(c->scratch, 0);
  o->pert = rl_vq_scratch(c->scratch, 1);
  o->onours = rl_vq_scratch(c->scratch, 2);
  return o->mjd && o->pert && o->onours ? 0 : -1;
}

static void fini(rl_vctx *c) {
  own *o = c->own;
  if (!o) return;
  if (o->optimum) mj_deleteModel(o->optimum);
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
  rl_vq_record(&q[S_OPTIMUM], o->at_optimum / n, 1);
  rl_vq_record(&q[S_TIE], o->at_tie / n, 1);
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

/* 1 if rigidlab's step equals MuJoCo's at TOL: the same contact and row counts, qpos, qvel and qacc each within
   TOL·max(‖·‖∞, 1) */
static int step_agrees(const rl_model *m, const rl_data *d, const mjData *mjd, double tol) {
  if (d->ncon != mjd->ncon || d->nefc != mjd->nefc) return 0;
  double ep = 0, mp = 1, ev = 0, mv = 1, ea = 0, ma = 1;
  for (int i = 0; i < m->nq; i++)
    ep = fmax(ep, fabs((double)d->qpos[i] - mjd->qpos[i])), mp = fmax(mp, fabs(mjd->qpos[i]));
  for (int i = 0; i < m->nv; i++) {
    ev = fmax(ev, fabs((double)d->qvel[i] - mjd->qvel[i])), mv = fmax(mv, fabs(mjd->qvel[i]));
    ea = fmax(ea, fabs((double)d->qacc[i] - mjd->qacc[i])), ma = fmax(ma, fabs(mjd->qacc[i]));
  }
  return ep <= tol * mp && ev <= tol * mv && ea <= tol * ma;
}

/* Loads the verify state of C into DST for model MM: qpos and qvel as rigidlab gets them, rounded to the working
   precision; ctrl, act and mocap poses from C's mjd; zero warm start, time 0; PERTURB: qpos_i moved by
   1e-13·max(|qpos_i|, 1) and qvel_i by 1e-15·qvel_i, alternating signs.  (Not C's mjd->qpos: MuJoCo's mj_forward
   normalizes the quaternions in qpos in place, 1 ulp away from the state rigidlab steps.) */
static void mj_load_state(const mjModel *mm, mjData *dst, const rl_vctx *c, int perturb) {
  for (int i = 0; i < mm->nq; i++) {
    double x = rl_round(c->qpos[i]);
    dst->qpos[i] = x + (perturb ? (i % 2 ? 1e-13 : -1e-13) * fmax(fabs(x), 1) : 0);
  }
  for (int i = 0; i < mm->nv; i++) dst->qvel[i] = rl_round(c->qvel[i]) * (1 + (perturb ? (i % 2 ? 1e-15 : -1e-15) : 0));
  mju_copy(dst->ctrl, c->mjd->ctrl, mm->nu);
  rl_mj_copy_inputs(mm, dst, c->mjd);
  mju_zero(dst->qacc_warmstart, mm->nv);
  dst->time = 0;
}

/* MuJoCo's step of model MM into DST from the verify state of C (mj_load_state) */
static void mj_step_from(const mjModel *mm, mjData *dst, const rl_vctx *c, int perturb) {
  mj_load_state(mm, dst, c, perturb);
  mj_step(mm, dst);
}

/* 1 if the two steps' qvel differ by more than 1e-10·max(‖qvel_a‖∞, 1): the step is not reproducible */
static int qvel_moved(int nv, const mjData *a, const mjData *b) {
  double dv = 0, mag = 1;
  for (int i = 0; i < nv; i++) {
    dv = fmax(dv, fabs(b->qvel[i] - a->qvel[i]));
    mag = fmax(mag, fabs(a->qvel[i]));
  }
  return !(dv <= 1e-10 * mag);
}

/* 1 if MuJoCo's collision and rows are not reproducible at the state: the perturbed step PT has another contact
   or row count or a contact that jumped, or MuJoCo's collision on rigidlab's frames (ONOURS) a contact that jumped */
static int collision_sensitive(const mjModel *mjm, const mjData *mjd, const mjData *pt, const mjData *onours) {
  return pt->ncon != mjd->ncon || pt->nefc != mjd->nefc || contacts_jumped(mjm, mjd, pt) ||
         contacts_jumped(mjm, mjd, onours);
}

/* rigidlab's step of the verify state, MuJoCo-compatible (collision mujoco, convex resolution), zero warm start;
   OPTIMUM: with the solver at the optimum (Newton, OPT_TOLERANCE, OPT_ITERATIONS, no noslip).  The model's
   options are restored after the step. */
static void rl_step_from(rl_vctx *c, int optimum) {
  const rl_model *m = c->p->m;
  rl_data *d = c->d;
  rl_model *mw = (rl_model *)m;
  rl_option keep = mw->opt;
  mw->opt.collision = RL_COLL_MUJOCO;
  mw->opt.contact_resolution = RL_RES_CONVEX;
  if (optimum) {
    mw->opt.solver = RL_SOLVER_NEWTON;
    mw->opt.tolerance = (real)OPT_TOLERANCE;
    mw->opt.iterations = OPT_ITERATIONS;
    mw->opt.noslip_iterations = 0;
  }
  rl_set_state(c->p, d, NULL, c->qpos, c->qvel, c->ctrl);
  memset(d->qacc_warmstart, 0, sizeof(real) * (size_t)m->nv);
  d->time = 0;
  rl_step(m, d);
  mw->opt = keep;
}

/* A state whose MuJoCo step is not reproducible while its contacts and rows are: both sides step it again with
   the solver at the optimum, and MuJoCo's optimum from the perturbed state too.  1 (and the rows recorded) when
   MuJoCo's optimum is reproducible; 0 when it is not (the caller leaves the state out).  Reuses o->mjd and o->pert. */
static int compare_at_optimum(rl_vctx *c, rl_vq *q) {
  own *o = c->own;
  mj_step_from(o->optimum, o->mjd, c, 0);
  mj_step_from(o->optimum, o->pert, c, 1);
  if (qvel_moved(o->optimum->nv, o->mjd, o->pert) || collision_sensitive(o->optimum, o->mjd, o->pert, o->onours))
    return 0;
  rl_step_from(c, 1);
  o->at_optimum++;
  record_left_out(o, q);
  record_step(c->p->m, c->d, o->mjd, q);
  return 1;
}

/* MuJoCo's Euler step (as mj_step_from) with its contact list replaced by CON (MuJoCo's collision at the state
   on rigidlab's frames): mj_fwdPosition, then the contacts swapped in and the rows, the transmission and the
   projection made again, then the velocity, actuation, acceleration and constraint stages and mj_Euler, the
   order of MuJoCo 2.2.2's mj_step without its sensors and energies.  0 (nothing stepped) for RK4 or the implicit
   integrator, whose stages MuJoCo's API does not expose, or contacts that would not fit. */
static int mj_step_on_contacts(const mjModel *mm, mjData *dst, const rl_vctx *c, int perturb, const mjData *con) {
  if (mm->opt.integrator != mjINT_EULER || con->ncon > mm->nconmax) return 0;
  mj_load_state(mm, dst, c, perturb);
  mj_checkPos(mm, dst);
  mj_checkVel(mm, dst);
  mj_fwdPosition(mm, dst);
  dst->ncon = con->ncon;
  memcpy(dst->contact, con->contact, sizeof(mjContact) * (size_t)con->ncon);
  mj_makeConstraint(mm, dst);
  mj_transmission(mm, dst);
  mj_projectConstraint(mm, dst);
  mj_fwdVelocity(mm, dst);
  mj_fwdActuation(mm, dst);
  mj_fwdAcceleration(mm, dst);
  mj_fwdConstraint(mm, dst);
  mj_checkAcc(mm, dst);
  mj_Euler(mm, dst);
  return 1;
}

/* A contact tie: rigidlab's contact count differs from MuJoCo's step's, and MuJoCo's own collision on rigidlab's
   frames (equal to its own to ~1e-16) finds rigidlab's count.  The state is then compared with MuJoCo's step taken
   on those contacts (mj_step_on_contacts); where that step is not reproducible under the perturbation of the top
   of the file, both sides at the optimum, as compare_at_optimum.  1 with the rows recorded (a disagreement there is
   a failure of the step rows); 0 where MuJoCo's API cannot take such a step (the caller leaves the state out). */
static int compare_at_contact_tie(rl_vctx *c, rl_vq *q) {
  own *o = c->own;
  const mjModel *mjm = c->p->mjm;
  if (!mj_step_on_contacts(mjm, o->mjd, c, 0, o->onours)) return 0;
  o->at_tie++;
  record_left_out(o, q);
  if (!step_agrees(c->p->m, c->d, o->mjd, rl_verify_tolerance(RL_STAGE_STEP, RL_IS_F32))) {
    mj_step_on_contacts(mjm, o->pert, c, 1, o->onours);
    if (qvel_moved(mjm->nv, o->mjd, o->pert)) { /* the model solver's stopping point: both at the optimum */
      mj_step_on_contacts(o->optimum, o->mjd, c, 0, o->onours);
      rl_step_from(c, 1);
    }
  }
  record_step(c->p->m, c->d, o->mjd, q);
  return 1;
}

static void state(rl_vctx *c, rl_vq *q) {
  own *o = c->own;
  const rl_model *m = c->p->m;
  rl_data *d = c->d;
  mjData *mjd = o->mjd;
  const mjModel *mjm = c->p->mjm;
  /* MuJoCo's collision on rigidlab's frames of the state, then both steps with the model's solver */
  rl_set_state(c->p, d, NULL, c->qpos, c->qvel, c->ctrl);
  rl_kinematics(m, d);
  rl_vq_mj_collision_on(mjm, o->onours, c->mjd->qpos, d);
  int warn0 = d->warning[RL_WARN_CONTACTFULL], rows0 = mjd->warning[mjWARN_CNSTRFULL].number;
  mj_step_from(mjm, mjd, c, 0);
  rl_step_from(c, 0);
  o->states++;
  if (d->warning[RL_WARN_CONTACTFULL] != warn0 || mjd->ncon >= mjm->nconmax ||
      mjd->warning[mjWARN_CNSTRFULL].number != rows0) { /* no reference */
    o->capacity++;
    record_left_out(o, q);
    return;
  }
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
     excused only where MuJoCo's own step is not reproducible at this state (see the top of the file) */
  if (d->ncon != mjd->ncon || d->nefc != mjd->nefc) {
    int own_tie = d->ncon != mjd->ncon && o->onours->ncon == d->ncon;
    if (own_tie && compare_at_contact_tie(c, q)) return;
    o->sensitive += own_tie;
    record_left_out(o, q);
    if (!own_tie) record_step(m, d, mjd, q);
    return;
  }
  mjData *pt = o->pert;
  mj_step_from(mjm, pt, c, 1);
  if (collision_sensitive(mjm, mjd, pt, o->onours)) {
    o->sensitive++;
    record_left_out(o, q);
    return;
  }
  if (!qvel_moved(mjm->nv, mjd, pt)) { /* MuJoCo reproduces its step: the disagreement is ours */
    record_left_out(o, q);
    record_step(m, d, mjd, q);
    return;
  }
  if (compare_at_optimum(c, q)) return; /* the model solver's stopping point alone */
  o->sensitive++;
  record_left_out(o, q);
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
