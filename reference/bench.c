/* bench.c — `rigidlab bench`: pipeline stages, rigidlab vs MuJoCo's equivalents, timed
 * alternately in one process (ours, MuJoCo, ours, …) on the same state; per stage the median
 * over repetitions of ns per call, and ratio = ours / MuJoCo (below 1 is faster).
 *
 * Smooth stages (kinematics … smooth, step_smooth) run on the constraint-free model on both sides.
 * collision (rl_collision vs mj_collision) and step (the whole constrained step, per engine: newton,
 * cg — rigidlab's solver set accordingly, MuJoCo with the same solver) run on the full model at a
 * contact-rich state: the model's initial state if it already has contacts, else MuJoCo's
 * trajectory from it after the first contacts appear (+100 steps).
 * Engine avbd (step stage only): rl_avbd_step per step (contacts, the step, qpos/qvel written back, as
 * mj_step leaves them), the AVBD state set from the same generalized state by rl_avbd_from_generalized
 * before each timed run (not timed), vs mj_step with the model's own solver.  Contacts: AVBD's own ground
 * contacts when no two dynamic bodies can collide (contype/conaffinity), else the mapping the data
 * contacts need is timed too (rl_avbd_to_generalized, rl_kinematics, rl_collision, rl_avbd_load_contacts).
 *
 * Where the step's time goes (engines newton, cg): after the timed runs, a profiled pass from the same
 * state (rl_data.prof_clock on our side, MuJoCo's mjcb_time timers on its side, both off while timing) splits
 * the step into position (kinematics, com, composite inertia, M's factor), collision, velocity, actuation,
 * smooth (unconstrained q̈), constraint (rows), solve, integrate and other (the rest: state checks, copies).
 * MuJoCo's timers map as position = POS_KINEMATICS + POS_INERTIA, collision = POS_COLLISION, velocity,
 * actuation, smooth = ACCELERATION, constraint = POS_MAKE + POS_PROJECT, solve = CONSTRAINT, integrate =
 * STEP − FORWARD.  Printed under the step row (ns per step, share of the step, ratio) and written as CSV rows
 * of stage step/<part>: per part the median over the profiled steps (robust to another process taking the
 * core for one step), the shares (share, mujoco_share columns) of the sum of those medians. */
#define _DEFAULT_SOURCE /* mkstemps */
#include <math.h>
#include <stdio.h>
#include <unistd.h>
#include <gsl/gsl_fit.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "csv.h"
#include "rl_avbd.h"
#include "rl_collide.h"
#include "scale_scene.h"
#include "pair.h"
#include "states.h"
#include "study_speed.h"
#include "tolerances.h"

#define rl_cmd_bench       RL_NAME(cmd_bench)
#define rl_bench_step_reps RL_NAME(bench_step_reps)
#define rl_bench_batch     RL_NAME(bench_batch)
/* the batch bench (bench_batch.c) */
int rl_bench_batch(const rl_bench_args *a);

/* ns on CLOCK (CLOCK_MONOTONIC: wall time; CLOCK_THREAD_CPUTIME_ID: this thread's CPU time) */
static double clock_ns(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}
static double now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

enum { B_KIN, B_COM, B_INERTIA, B_BIAS, B_PASSIVE, B_ACT, B_SMOOTH, B_STEP_SMOOTH, B_COLLISION, B_STEP, NB };
static const char *const bench_stage[NB] = {"kinematics", "com",    "inertia",     "bias",      "passive",
                                            "actuation",  "smooth", "step_smooth", "collision", "step"};

typedef struct ctx {
  rl_pair *p;
  mjModel *mjfree;       /* constraint-free copy (smooth stages) */
  const mjModel *mjfull; /* the model as loaded (collision, step) */
  rl_data *d;
  mjData *mjd, *mjdfull;
  const double *qpos, *qvel, *ctrl;
  double *cqpos, *cqvel, *cctrl; /* the contact-rich state */
  rl_avbd *am;                   /* non-NULL: the step stage runs AVBD */
  clockid_t clock;               /* bench_time_stage's clock (CLOCK_MONOTONIC unless set) */
} ctx;

static void run_ours(ctx *c, int stage, long n) {
  const rl_model *m = c->p->m;
  rl_data *d = c->d;
  for (long i = 0; i < n; i++) switch (stage) {
    case B_KIN: rl_kinematics(m, d); break;
    case B_COM: rl_com_pos(m, d); break;
    case B_INERTIA:
      rl_crb(m, d);
      rl_factor_m_step(m, d);
      break;
    case B_BIAS:
      rl_com_vel(m, d);
      rl_rne(m, d);
      break;
    case B_PASSIVE: rl_passive(m, d); break;
    case B_ACT: rl_actuation(m, d); break;
    case B_SMOOTH: rl_smooth_acc(m, d); break;
    case B_STEP_SMOOTH: rl_step_smooth(m, d); break;
    case B_COLLISION: rl_collision(m, d); break;
    default:
      if (c->am) rl_avbd_step(c->am, m, d);
      else rl_step(m, d);
      break;
    }
}

static void run_mujoco(ctx *c, int stage, long n) {
  const mjModel *m = stage >= B_COLLISION ? c->mjfull : c->mjfree;
  mjData *d = stage >= B_COLLISION ? c->mjdfull : c->mjd;
  for (long i = 0; i < n; i++) switch (stage) {
    case B_KIN: mj_kinematics(m, d); break;
    case B_COM: mj_comPos(m, d); break;
    case B_INERTIA:
      mj_crb(m, d);
      mj_factorM(m, d);
      break;
    case B_BIAS:
      mj_comVel(m, d);
      mj_rne(m, d, 0, d->qfrc_bias);
      break;
    case B_PASSIVE: mj_passive(m, d); break;
    case B_ACT:
      mj_transmission(m, d);
      mj_fwdActuation(m, d);
      break;
    case B_SMOOTH: mj_fwdAcceleration(m, d); break;
    case B_STEP_SMOOTH: mj_step(m, d); break;
    case B_COLLISION: mj_collision(m, d); break;
    default: mj_step(m, d); break;
    }
}

/* The contact-rich state (see the header): qpos0 if it has contacts, else MuJoCo's trajectory from it
   (constant controls from the drawn state) until the first contacts, then 100 steps more (at most 2000). */
static void contact_state(const mjModel *m, const double *ctrl, double *qpos, double *qvel, double *qctrl) {
  mjData *d = mj_makeData(m);
  if (ctrl) memcpy(d->ctrl, ctrl, sizeof(double) * (size_t)m->nu);
  mj_forward(m, d);
  int extra = -1;
  for (int i = 0; i < 2000 && extra != 0; i++) {
    if (extra < 0 && d->ncon > 0) extra = i == 0 ? 0 : 100;
    if (extra == 0) break;
    mj_step(m, d);
    if (extra > 0) extra--;
  }
  memcpy(qpos, d->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(qvel, d->qvel, sizeof(double) * (size_t)m->nv);
  memcpy(qctrl, d->ctrl, sizeof(double) * (size_t)m->nu);
  mj_deleteData(d);
}

/* ---------------------------------------------------------------- the step's profile */

enum { PROF_OTHER = RL_NPROF, NPROF_ROWS };
static const char *const prof_name[NPROF_ROWS] = {"position",   "collision", "velocity",  "actuation", "smooth",
                                                  "constraint", "solve",     "integrate", "other"};

static double prof_clock_ns(void) { return now_ns(); }

/* MuJoCo's timer sums for our stage k (see the header), in the clock's unit */
static double mj_prof_stage(const mjData *d, int k) {
  const mjTimerStat *t = d->timer;
  switch (k) {
  case RL_PROF_POSITION: return t[mjTIMER_POS_KINEMATICS].duration + t[mjTIMER_POS_INERTIA].duration;
  case RL_PROF_COLLISION: return t[mjTIMER_POS_COLLISION].duration;
  case RL_PROF_VELOCITY: return t[mjTIMER_VELOCITY].duration;
  case RL_PROF_ACTUATION: return t[mjTIMER_ACTUATION].duration;
  case RL_PROF_SMOOTH: return t[mjTIMER_ACCELERATION].duration;
  case RL_PROF_CONSTRAINT: return t[mjTIMER_POS_MAKE].duration + t[mjTIMER_POS_PROJECT].duration;
  case RL_PROF_SOLVE: return t[mjTIMER_CONSTRAINT].duration;
  default: return t[mjTIMER_STEP].duration - t[mjTIMER_FORWARD].duration;
  }
}

/* PASSES runs of N steps from the contact-rich state with both sides' stage timers on: ours[k], mj[k] = ns per
   step in part k (k < NPROF_ROWS, the last the rest of the step), each the median over the single steps of
   all passes (a step during which another process ran is an outlier in one part, not a share of the mean);
   ours[NPROF_ROWS], mj[NPROF_ROWS] = their sum, so that the shares add up to one */
static void bench_step_profile(ctx *c, int passes, long n, double *ours, double *mj) {
  const rl_pair *p = c->p;
  enum { W = NPROF_ROWS };
  size_t ns = (size_t)passes * (size_t)n;
  double *po = malloc(sizeof(double) * W * ns), *pm = malloc(sizeof(double) * W * ns),
         *col = malloc(sizeof(double) * ns);
  const mjTimerStat *tm = c->mjdfull->timer;
  for (int r = 0; r < passes; r++) {
    rl_set_state(p, c->d, c->mjdfull, c->cqpos, c->cqvel, c->cctrl);
    memset(c->d->qacc_warmstart, 0, sizeof(real) * (size_t)p->m->nv);
    mju_zero(c->mjdfull->qacc_warmstart, p->mjm->nv);
    rl_forward(p->m, c->d);
    mj_forward(c->mjfull, c->mjdfull);
    c->d->prof_clock = prof_clock_ns;
    for (long i = 0; i < n; i++) {
      double *o = po + ((size_t)r * (size_t)n + (size_t)i) * W, sum = 0;
      memset(c->d->prof, 0, sizeof c->d->prof);
      double t0 = now_ns();
      rl_step(p->m, c->d);
      double t1 = now_ns();
      for (int k = 0; k < RL_NPROF; k++) sum += o[k] = c->d->prof[k];
      o[PROF_OTHER] = (t1 - t0) - sum;
    }
    c->d->prof_clock = NULL;
    mjcb_time = prof_clock_ns;
    for (long i = 0; i < n; i++) {
      double *o = pm + ((size_t)r * (size_t)n + (size_t)i) * W, sum = 0;
      memset(c->mjdfull->timer, 0, sizeof c->mjdfull->timer);
      mj_step(c->mjfull, c->mjdfull);
      for (int k = 0; k < RL_NPROF; k++) sum += o[k] = mj_prof_stage(c->mjdfull, k);
      o[PROF_OTHER] = tm[mjTIMER_STEP].duration - sum;
    }
    mjcb_time = NULL;
  }
  ours[W] = mj[W] = 0;
  for (int side = 0; side < 2; side++)
    for (int k = 0; k < W; k++) {
      const double *src = side ? pm : po;
      for (size_t i = 0; i < ns; i++) col[i] = src[i * W + k];
      qsort(col, ns, sizeof(double), cmp_double);
      (side ? mj : ours)[k] = col[ns / 2];
      (side ? mj : ours)[W] += col[ns / 2];
    }
  free(col);
  free(po);
  free(pm);
}

/* one CSV row of the bench contract: model, engine, precision, stage, ns, MuJoCo ns, ratio, share, mujoco_share
   (shares NaN where they do not apply) */
static void bench_csv_row(rl_csv *w, const char *label, const char *engine, const char *stage, double ours,
                          double theirs, double share, double mjshare) {
  rl_csv_str(w, label);
  rl_csv_str(w, engine);
  rl_csv_str(w, RL_PREC_NAME);
  rl_csv_str(w, stage);
  rl_csv_num(w, ours);
  rl_csv_num(w, theirs);
  rl_csv_num(w, ours / theirs);
  rl_csv_num(w, share);
  rl_csv_num(w, mjshare);
  rl_csv_end_row(w);
}

/* the profile of ENGINE's step: printed under its step row and written as step/<part> rows */
static void bench_profile_rows(ctx *c, const char *engine, int reps, long n, rl_csv *w, const char *label, int quiet) {
  double ours[NPROF_ROWS + 1], mj[NPROF_ROWS + 1];
  bench_step_profile(c, reps, n, ours, mj);
  if (!quiet)
    printf("  where the step goes (%s %s, median step):   ns ours  share   ns mujoco  share   ratio\n", engine,
           RL_PREC_NAME);
  for (int k = 0; k < NPROF_ROWS; k++) {
    double sh = ours[k] / ours[NPROF_ROWS], mjsh = mj[k] / mj[NPROF_ROWS];
    if (!quiet)
      printf("    %-42s %10.1f %5.1f%% %11.1f %5.1f%% %7.3f\n", prof_name[k], ours[k], 100 * sh, mj[k], 100 * mjsh,
             ours[k] / mj[k]);
    if (w) {
      char stage[64];
      snprintf(stage, sizeof stage, "step/%s", prof_name[k]);
      bench_csv_row(w, label, engine, stage, ours[k], mj[k], sh, mjsh);
    }
  }
}

#define BENCH_AVBD 1000 /* engine_solver: not a solver of rl_step */

/* engine name → solver for the constrained step (BENCH_AVBD for avbd); -1 if not a bench engine */
static int engine_solver(const char *e) {
  if (!strcmp(e, "newton")) return RL_SOLVER_NEWTON;
  if (!strcmp(e, "cg")) return RL_SOLVER_CG;
  if (!strcmp(e, "avbd")) return BENCH_AVBD;
  return -1;
}

/* REPS repetitions of N calls of one stage, ours then MuJoCo's, both from the same state each time:
   tr[r], tm[r] = ns per call of repetition r (run order) */
static void bench_time_stage(ctx *c, int stage, int reps, long n, double *tr, double *tm) {
  const rl_pair *p = c->p;
  for (int r = 0; r < reps; r++) {
    /* same state for both, full forward first so every stage has its inputs */
    if (stage == B_COLLISION) { /* collision reads the geom frames only */
      rl_set_state(p, c->d, c->mjdfull, c->cqpos, c->cqvel, c->cctrl);
      rl_kinematics(p->m, c->d);
      mj_kinematics(c->mjfull, c->mjdfull);
    } else if (stage > B_COLLISION) {
      rl_set_state(p, c->d, c->mjdfull, c->cqpos, c->cqvel, c->cctrl);
      memset(c->d->qacc_warmstart, 0, sizeof(real) * (size_t)p->m->nv);
      mju_zero(c->mjdfull->qacc_warmstart, p->mjm->nv);
      rl_forward(p->m, c->d);
      mj_forward(c->mjfull, c->mjdfull);
      if (c->am && stage == B_STEP) rl_avbd_from_generalized(c->am, p->m, c->d);
    } else {
      rl_set_state(p, c->d, c->mjd, c->qpos, c->qvel, c->ctrl);
      rl_forward_smooth(p->m, c->d);
      mj_forward(c->mjfree, c->mjd);
    }
    double t0 = clock_ns(c->clock);
    run_ours(c, stage, n);
    double t1 = clock_ns(c->clock);
    run_mujoco(c, stage, n);
    double t2 = clock_ns(c->clock);
    tr[r] = (t1 - t0) / (double)n;
    tm[r] = (t2 - t1) / (double)n;
  }
}

/* time one stage (both sides, alternating) and report the medians and their ratio */
static void bench_stage_row(ctx *c, int stage, const char *engine, int reps, long n, double *tr, double *tm, rl_csv *w,
                            const char *label, int quiet) {
  bench_time_stage(c, stage, reps, n, tr, tm);
  qsort(tr, (size_t)reps, sizeof(double), cmp_double);
  qsort(tm, (size_t)reps, sizeof(double), cmp_double);
  double ours = tr[reps / 2], theirs = tm[reps / 2];
  if (!quiet)
    printf("%-12s %-7s %-4s %14.1f %14.1f %8.3f\n", bench_stage[stage], engine, RL_PREC_NAME, ours, theirs,
           ours / theirs);
  if (w)
    bench_csv_row(w, label, engine, bench_stage[stage], ours, theirs, stage == B_STEP ? 1 : NAN,
                  stage == B_STEP ? 1 : NAN);
}

/* The timing context of a loaded pair: the constraint-free copy for the smooth stages, both datas, the
   smooth stages' state (the second of rl_states_draw(seed 12345, 2)) and the contact-rich state
   (contact_state) for collision and step.  Release with bench_ctx_close. */
static void bench_ctx_open(ctx *c, rl_pair *p, rl_states *S) {
  memset(c, 0, sizeof *c);
  c->clock = CLOCK_MONOTONIC;
  c->p = p;
  c->mjfree = mj_copyModel(NULL, p->mjm);
  c->mjfree->opt.disableflags |= mjDSBL_CONSTRAINT;
  c->mjfull = p->mjm;
  c->d = rl_pair_data(p);
  c->mjd = mj_makeData(c->mjfree);
  c->mjdfull = mj_makeData(p->mjm);
  rl_states_draw(p->mjm, 2, 12345, S);
  c->qpos = S->qpos + S->nq;
  c->qvel = S->qvel + S->nv;
  c->ctrl = S->ctrl + S->nu;
  double *cs = calloc((size_t)(p->mjm->nq + p->mjm->nv + p->mjm->nu + 3), sizeof(double));
  c->cqpos = cs;
  c->cqvel = cs + p->mjm->nq + 1;
  c->cctrl = cs + p->mjm->nq + p->mjm->nv + 2;
  contact_state(p->mjm, c->ctrl, c->cqpos, c->cqvel, c->cctrl);
}

static void bench_ctx_close(ctx *c, rl_states *S) {
  free(c->cqpos);
  rl_data_free(c->d);
  mj_deleteData(c->mjd);
  mj_deleteData(c->mjdfull);
  mj_deleteModel(c->mjfree);
  rl_states_free(S);
}

/* The step stage's engine: newton | cg set as the solver of both sides; avbd builds the AVBD model (data
   contacts when dynamic bodies can collide) and leaves both solvers as the model's, MuJoCo's then being the
   comparison.  0, or −1 with a one-line WHY when AVBD cannot represent the model. */
static int bench_engine_begin(ctx *c, const char *engine, int solver0, int mjsolver0, char *why, int whylen) {
  rl_pair *p = c->p;
  if (engine_solver(engine) == BENCH_AVBD) {
    p->m->opt.solver = solver0;
    p->mjm->opt.solver = mjsolver0;
    rl_avbd_param prm = rl_avbd_default_param(p->m); /* contacts: rl_collision's where dynamic bodies can touch */
    c->am = rl_avbd_build(p->m, &prm, why, whylen);
    if (!c->am) return -1;
    return 0;
  }
  p->m->opt.solver = engine_solver(engine);
  p->mjm->opt.solver = p->m->opt.solver == RL_SOLVER_CG ? mjSOL_CG : mjSOL_NEWTON;
  return 0;
}

static void bench_engine_end(ctx *c, int solver0, int mjsolver0) {
  rl_pair *p = c->p;
  rl_avbd_free(c->am);
  c->am = NULL;
  p->m->opt.solver = solver0;
  p->mjm->opt.solver = mjsolver0;
}

/* kind = speed (study_speed.h): the step stage of a->engine vs mj_step, REPS repetitions of N steps, timed in
   this thread's CPU time */
int rl_bench_step_reps(const rl_sim_args *a, int reps, long n, double *tr, double *tm, char *why, int whylen) {
  char err[1024];
  rl_pair p;
  int st = rl_pair_load(&p, &a->c, a->dt, err, sizeof err);
  if (st) {
    rl_errorf("%s", err);
    return st;
  }
  if (engine_solver(a->engine) < 0) {
    rl_errorf("speed: engine '%s' (allowed: newton, cg, avbd)", a->engine);
    rl_pair_free(&p);
    return RL_EXIT_BADINPUT;
  }
  if (rl_solver_check_options(p.m, err, sizeof err)) {
    rl_errorf("%s: %s", a->c.model, err);
    rl_pair_free(&p);
    return RL_EXIT_BADINPUT;
  }
  ctx c;
  rl_states S;
  bench_ctx_open(&c, &p, &S);
  c.clock = CLOCK_THREAD_CPUTIME_ID; /* time slices given to other processes are not counted */
  int solver0 = p.m->opt.solver, mjsolver0 = p.mjm->opt.solver;
  st = bench_engine_begin(&c, a->engine, solver0, mjsolver0, why, whylen);
  if (!st) bench_time_stage(&c, B_STEP, reps, n, tr, tm);
  bench_engine_end(&c, solver0, mjsolver0);
  bench_ctx_close(&c, &S);
  rl_pair_free(&p);
  return st;
}

/* ---------------------------------------------------------------- chain scaling */

/* An n-link planar hinge chain (capsules 0.1 m, 0.1 kg, no contacts) with joint limits ±0.3 rad that
   gravity drives into, started bent at 0.25 rad per joint so the limits engage from the first steps. */
static int write_chain(const char *path, int n) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "<mujoco model=\"chain%d\">\n  <option timestep=\"0.002\" solver=\"Newton\"/>\n", n);
  fprintf(f, "  <default><joint type=\"hinge\" axis=\"0 1 0\" limited=\"true\" range=\"-0.3 0.3\" damping=\"0.01\"/>\n"
             "    <geom type=\"capsule\" size=\"0.01\" fromto=\"0 0 0 0.1 0 0\" mass=\"0.1\" contype=\"0\" "
             "conaffinity=\"0\"/></default>\n"
             "  <worldbody>\n");
  for (int i = 0; i < n; i++) fprintf(f, "%*s<body pos=\"%s 0 0\"><joint/><geom/>\n", 2 + i % 40, "", i ? "0.1" : "0");
  for (int i = 0; i < n; i++) fputs("</body>", f);
  fprintf(f, "\n  </worldbody>\n  <keyframe><key name=\"bent\" qpos=\"");
  for (int i = 0; i < n; i++) fprintf(f, "%s0.25", i ? " " : "");
  fprintf(f, "\"/></keyframe>\n</mujoco>\n");
  return fclose(f);
}

/* `rigidlab bench chain:N1,N2,…`: whole Newton step of rigidlab and MuJoCo (alternating) on hinge chains
   of N links; fits time ∝ N^p (least squares on logs, GSL) for both and prints p with its standard
   error.  CSV rows as the bench contract, model chainN, stage step. */
static int bench_chains(const rl_bench_args *a, const char *list) {
  int ns[32], nn = 0;
  for (const char *t = list; *t && nn < 32;) {
    char tok[32];
    const char *end = strchr(t, ',');
    if (!end) end = t + strlen(t);
    long v;
    snprintf(tok, sizeof tok, "%.*s", (int)(end - t < 31 ? end - t : 31), t);
    if (end - t > 31 || rl_parse_long(tok, 2, 95, &v)) {
      rl_errorf("bench: chain:LIST needs comma-separated link counts between 2 and 95 (MuJoCo 2.2.2's XML nesting "
                "limit), got '%s'",
                list);
      return RL_EXIT_BADINPUT;
    }
    ns[nn++] = (int)v;
    t = *end ? end + 1 : end;
  }
  if (nn < 2) {
    rl_errorf("bench: chain:LIST needs at least two link counts to fit an exponent");
    return RL_EXIT_BADINPUT;
  }
  char path[] = "/tmp/rigidlab-chain-XXXXXX.xml";
  int fd = mkstemps(path, 4);
  if (fd < 0) {
    rl_errorf("bench: cannot create a temporary model file");
    return RL_EXIT_BADINPUT;
  }
  close(fd);
  int reps = a->reps > 0 ? a->reps : 9;
  long n = a->steps > 0 ? a->steps : 100;
  double lx[32], ly_ours[32], ly_mj[32];
  double *tr = malloc(sizeof(double) * (size_t)reps), *tm = malloc(sizeof(double) * (size_t)reps);
  rl_csv *w = a->c.out;
  if (w && w->rows == 0) {
    const char *hdr[] = {"model", "engine", "precision", "stage", "ns_per_step", "mujoco_ns_per_step", "ratio"};
    for (int k = 0; k < 7; k++) rl_csv_str(w, hdr[k]);
    rl_csv_end_row(w);
  }
  if (!a->c.quiet) printf("%-10s %-4s %14s %14s %8s\n", "chain", "prec", "ns/step ours", "ns/step mujoco", "ratio");
  int st = RL_EXIT_OK;
  for (int k = 0; k < nn && st == RL_EXIT_OK; k++) {
    char err[1024];
    rl_pair p;
    rl_common_args c = a->c;
    c.model = path;
    if (write_chain(path, ns[k]) || (st = rl_pair_load(&p, &c, 0, err, sizeof err))) {
      rl_errorf("bench: chain of %d links: %s", ns[k], st ? err : "cannot write the model");
      st = RL_EXIT_BADINPUT;
      break;
    }
    p.m->opt.solver = RL_SOLVER_NEWTON;
    p.mjm->opt.solver = mjSOL_NEWTON;
    mjData *mjd = mj_makeData(p.mjm);
    rl_data *d = rl_pair_data(&p);
    mj_resetDataKeyframe(p.mjm, mjd, 0);
    double *q0 = malloc(sizeof(double) * (size_t)(p.mjm->nq + p.mjm->nv));
    memcpy(q0, mjd->qpos, sizeof(double) * (size_t)p.mjm->nq);
    memset(q0 + p.mjm->nq, 0, sizeof(double) * (size_t)p.mjm->nv);
    for (int r = 0; r < reps; r++) {
      rl_set_state(&p, d, mjd, q0, q0 + p.mjm->nq, NULL);
      memset(d->qacc_warmstart, 0, sizeof(real) * (size_t)p.m->nv);
      mju_zero(mjd->qacc_warmstart, p.mjm->nv);
      double t0 = now_ns();
      for (long i = 0; i < n; i++) rl_step(p.m, d);
      double t1 = now_ns();
      for (long i = 0; i < n; i++) mj_step(p.mjm, mjd);
      double t2 = now_ns();
      tr[r] = (t1 - t0) / (double)n;
      tm[r] = (t2 - t1) / (double)n;
    }
    qsort(tr, (size_t)reps, sizeof(double), cmp_double);
    qsort(tm, (size_t)reps, sizeof(double), cmp_double);
    double ours = tr[reps / 2], theirs = tm[reps / 2];
    lx[k] = log((double)ns[k]);
    ly_ours[k] = log(ours);
    ly_mj[k] = log(theirs);
    char label[32];
    snprintf(label, sizeof label, "chain%d", ns[k]);
    if (!a->c.quiet)
      printf("%-10s %-4s %14.1f %14.1f %8.3f   (nefc %d)\n", label, RL_PREC_NAME, ours, theirs, ours / theirs, d->nefc);
    if (w) {
      rl_csv_str(w, label);
      rl_csv_str(w, "newton");
      rl_csv_str(w, RL_PREC_NAME);
      rl_csv_str(w, "step");
      rl_csv_num(w, ours);
      rl_csv_num(w, theirs);
      rl_csv_num(w, ours / theirs);
      rl_csv_end_row(w);
    }
    free(q0);
    rl_data_free(d);
    mj_deleteData(mjd);
    rl_pair_free(&p);
  }
  if (st == RL_EXIT_OK && !a->c.quiet) {
    double c0, c1, cov00, cov01, cov11, sumsq;
    gsl_fit_linear(lx, 1, ly_ours, 1, (size_t)nn, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
    printf("fitted exponent p (time ∝ links^p, %s): rigidlab %.3f ± %.3f", RL_PREC_NAME, c1, sqrt(cov11));
    gsl_fit_linear(lx, 1, ly_mj, 1, (size_t)nn, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
    printf(", MuJoCo %.3f ± %.3f\n", c1, sqrt(cov11));
  }
  remove(path);
  free(tr);
  free(tm);
  return st;
}

int rl_cmd_bench(const rl_bench_args *a) {
  char err[1024];
  rl_pair p;
  if (!strncmp(a->c.model, "chain:", 6)) return bench_chains(a, a->c.model + 6);
  if (a->nenvs > 0 || a->device) return rl_bench_batch(a);
  if (rl_scale_is_scene(a->c.model)) {
    /* the scale study's scenes: every solver's step as N grows (scale.c) */
    rl_scale_args s = {.c = a->c,
                       .steps = a->steps,
                       .solvers = a->engines,
                       .dense_max_nv = 1500,
                       .mujoco_max_nv = 3000,
                       .mujoco_max_gb = 4};
    return RL_NAME(cmd_scale)(&s);
  }
  int st = rl_pair_load(&p, &a->c, 0, err, sizeof err);
  if (st) {
    rl_errorf("%s", err);
    return st;
  }
  /* engines: comma-separated newton,cg (default newton) */
  char elist[256];
  snprintf(elist, sizeof elist, "%s", a->engines ? a->engines : "newton");
  const char *engines[8];
  int ne = 0;
  for (char *t = strtok(elist, ","); t && ne < 8; t = strtok(NULL, ",")) {
    if (engine_solver(t) < 0) {
      rl_errorf("bench: --engines '%s' (allowed: newton, cg, avbd)", t);
      rl_pair_free(&p);
      return RL_EXIT_BADINPUT;
    }
    engines[ne++] = t;
  }
  /* stages: comma-separated names of bench_stage (default all) */
  unsigned want = 0;
  if (a->stages) {
    char sl[256];
    snprintf(sl, sizeof sl, "%s", a->stages);
    for (char *t = strtok(sl, ","); t; t = strtok(NULL, ",")) {
      int k = 0;
      while (k < NB && strcmp(bench_stage[k], t)) k++;
      if (k == NB) {
        rl_errorf("bench: --stages '%s' (allowed: "
                  "kinematics,com,inertia,bias,passive,actuation,smooth,step_smooth,collision,step)",
                  t);
        rl_pair_free(&p);
        return RL_EXIT_BADINPUT;
      }
      want |= 1u << k;
    }
  } else want = (1u << NB) - 1;
  if (rl_solver_check_options(p.m, err, sizeof err)) {
    rl_errorf("%s: %s", a->c.model, err);
    rl_pair_free(&p);
    return RL_EXIT_BADINPUT;
  }
  rl_csv *w = a->c.out;
  ctx c;
  rl_states S;
  bench_ctx_open(&c, &p, &S);
  int reps = a->reps > 0 ? a->reps : 15;
  long n = a->steps > 0 ? a->steps : 200;
  double *tr = malloc(sizeof(double) * (size_t)reps), *tm = malloc(sizeof(double) * (size_t)reps);
  const char *label = strrchr(a->c.model, '/') ? strrchr(a->c.model, '/') + 1 : a->c.model;
  if (!a->c.quiet)
    printf("%-12s %-7s %-4s %14s %14s %8s\n", "stage", "engine", "prec", "ns/call ours", "ns/call mujoco", "ratio");
  if (w && w->rows == 0) {
    const char *hdr[] = {"model", "engine", "precision",   "stage", "ns_per_step", "mujoco_ns_per_step",
                         "ratio", "share",  "mujoco_share"};
    for (int k = 0; k < 9; k++) rl_csv_str(w, hdr[k]);
    rl_csv_end_row(w);
  }
  for (int stage = 0; stage < B_STEP; stage++)
    if (want & (1u << stage)) bench_stage_row(&c, stage, "newton", reps, n, tr, tm, w, label, a->c.quiet);
  int solver0 = p.m->opt.solver, mjsolver0 = p.mjm->opt.solver;
  for (int e = 0; e < ne && (want & (1u << B_STEP)); e++) {
    if (bench_engine_begin(&c, engines[e], solver0, mjsolver0, err, sizeof err)) {
      rl_errorf("bench: %s: %s", a->c.model, err);
      st = RL_EXIT_BADINPUT;
      continue;
    }
    bench_stage_row(&c, B_STEP, engines[e], reps, n, tr, tm, w, label, a->c.quiet);
    if (!c.am) bench_profile_rows(&c, engines[e], reps, n, w, label, a->c.quiet);
    if (c.am && !a->c.quiet) {
      /* the step's time per sweep and body: median ns/step ÷ mean sweeps/step ÷ dynamic bodies (collision
         and the per-step work included, so an upper bound on the cost of one body update) */
      double sweeps = c.am->steps ? (double)c.am->sweeps / (double)c.am->steps : 0;
      printf("  (avbd: %s contacts, %d bodies, %.1f sweeps/step (last %d), %.0f ns per body-sweep, %d contacts, "
             "%ld of %ld steps budget-exhausted, %d geom pairs overlapping at qpos0 left out)\n",
             c.am->prm.contacts == RL_AVBD_CONTACTS_DATA ? "rl_collision" : "own ground", c.am->nb, sweeps,
             c.am->stat.iterations, sweeps > 0 ? tr[reps / 2] / sweeps / c.am->nb : 0, c.am->stat.ncon, c.am->exhausted,
             c.am->steps, c.am->nrest);
    }
    bench_engine_end(&c, solver0, mjsolver0);
  }
  free(tr);
  free(tm);
  bench_ctx_close(&c, &S);
  rl_pair_free(&p);
  return st;
}
