/* test_badstate.c — the bad-state policy (rl_engine.h, docs/reliability.md) of every engine in the
 * precision this file is compiled for (-DRL_REAL_F64 / -DRL_REAL_F32): a NaN, an infinity or a value
 * beyond RL_MAXVAL fed into qpos, qvel, ctrl or a model parameter is detected, counted in d->warning and
 * handled by the policy:
 *   bad qpos/qvel  → warning BADQPOS/BADQVEL, reset to qpos0: the step is then the step of fresh data
 *                    (bit for bit: the reset state is the fresh state);
 *   bad ctrl       → (after clamping to ctrlrange) warning BADCTRL, the actuators driven by zero
 *                    controls: the step is that of ctrl = 0 (d->ctrl is left as set, as in MuJoCo);
 *   bad qacc       → (a bad model parameter) soft engines: warning BADQACC, reset, and the state held at
 *                    qpos0 while the acceleration stays bad; AVBD: the step undone, warning BADQACC.
 * After every step the state is finite.  The soft engines' warnings are also checked against MuJoCo 2.2.2
 * fed the same values (mj_step's mj_checkPos/mj_checkVel/mj_checkAcc and its ctrl test). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include "pair.h"
#include "rl_avbd.h"
#include "rl_test_pair.h"

#define SCENE(name) SRCDIR "/experiments/scenes/" name

/* MuJoCo's warnings (printed and appended to MUJOCO_LOG.TXT by default) are counted, not printed */
static void quiet_warning(const char *msg) { (void)msg; }
static void quiet(void) { mju_user_warning = quiet_warning; }
TestSuite(badstate, .init = quiet);

enum { NEWTON, CG, AVBD };
static const char *const engine_name[3] = {"newton", "cg", "avbd"};

/* one engine on a loaded model: its data, and for AVBD its solver state */
typedef struct run {
  rl_pair p;
  rl_data *d;
  rl_avbd *am;
  int engine;
} run;

static void run_open(run *r, const char *model, int engine) {
  memset(r, 0, sizeof *r);
  load(&r->p, model, NULL);
  r->engine = engine;
  if (engine != AVBD) r->p.m->opt.solver = engine == CG ? RL_SOLVER_CG : RL_SOLVER_NEWTON;
  r->d = rl_data_alloc(r->p.m);
  cr_assert_not_null(r->d);
  if (engine == AVBD) {
    char err[256];
    rl_avbd_param prm = rl_avbd_default_param(r->p.m);
    r->am = rl_avbd_build(r->p.m, &prm, err, sizeof err);
    cr_assert_not_null(r->am, "%s", err);
    rl_avbd_from_generalized(r->am, r->p.m, r->d);
  }
}

/* the state in d is the one the engine steps from (AVBD: loaded into its maximal-coordinate state) */
static void run_load(run *r) {
  if (r->am) rl_avbd_from_generalized(r->am, r->p.m, r->d);
}

static void run_step(run *r) {
  if (r->am) rl_avbd_step(r->am, r->p.m, r->d);
  else rl_step(r->p.m, r->d);
}

static void run_close(run *r) {
  rl_avbd_free(r->am);
  rl_data_free(r->d);
  rl_pair_free(&r->p);
}

static int finite_state(const run *r) {
  for (int i = 0; i < r->p.m->nq; i++)
    if (!isfinite((double)r->d->qpos[i])) return 0;
  for (int i = 0; i < r->p.m->nv; i++)
    if (!isfinite((double)r->d->qvel[i])) return 0;
  return 1;
}

static int warnings(const rl_data *d) {
  int n = 0;
  for (int k = 0; k < RL_NWARN; k++) n += d->warning[k];
  return n;
}

/* qpos/qvel of A and B bit for bit */
static void expect_same_state(const run *a, const run *b, const char *what) {
  for (int i = 0; i < a->p.m->nq; i++)
    cr_expect_eq(memcmp(&a->d->qpos[i], &b->d->qpos[i], sizeof(real)), 0, "%s %s: qpos[%d] %.17g, fresh %.17g", what,
                 engine_name[a->engine], i, (double)a->d->qpos[i], (double)b->d->qpos[i]);
  for (int i = 0; i < a->p.m->nv; i++)
    cr_expect_eq(memcmp(&a->d->qvel[i], &b->d->qvel[i], sizeof(real)), 0, "%s %s: qvel[%d] %.17g, fresh %.17g", what,
                 engine_name[a->engine], i, (double)a->d->qvel[i], (double)b->d->qvel[i]);
}

/* Feed VALUE into element I of qpos (field 0), qvel (1) or ctrl (2) of a running simulation (two steps
   taken), step once and check the warning WANT, a finite state and the policy's result: the step of
   fresh data (qpos/qvel: reset to qpos0) or of the same state with ctrl = 0 (ctrl). */
static void feed(const char *model, int engine, int field, int i, double value, int want) {
  run r, ref;
  run_open(&r, model, engine);
  run_open(&ref, model, engine);
  int nu = r.p.m->nu;
  for (int u = 0; u < nu; u++) r.d->ctrl[u] = ref.d->ctrl[u] = (real)0.1;
  if (field < 2) {
    run_step(&r);
    run_step(&r);
  }
  real *x = field == 0 ? r.d->qpos : field == 1 ? r.d->qvel : r.d->ctrl;
  int w0 = r.d->warning[want];
  x[i] = (real)value;
  run_load(&r); /* AVBD: a bad qpos/qvel is caught as it is loaded, the soft engines catch it in the step */
  run_step(&r);
  const char *fname = field == 0 ? "qpos" : field == 1 ? "qvel" : "ctrl";
  cr_expect_eq(r.d->warning[want], w0 + 1, "%s %s[%d] = %g: warning %d counted %d times", engine_name[engine], fname, i,
               value, want, r.d->warning[want] - w0);
  cr_expect(finite_state(&r), "%s %s[%d] = %g: the state is not finite after the step", engine_name[engine], fname, i,
            value);
  for (int u = 0; u < nu; u++) ref.d->ctrl[u] = 0; /* the reset zeroes ctrl; a bad ctrl acts as zero */
  run_step(&ref);
  char what[96];
  snprintf(what, sizeof what, "%s[%d] = %g", fname, i, value);
  expect_same_state(&r, &ref, what);
  if (field == 2) {
    cr_expect(isnan(value) ? isnan((double)r.d->ctrl[i]) : r.d->ctrl[i] == (real)value, "%s: ctrl changed", what);
    r.d->ctrl[i] = (real)0.1; /* a good control again */
  }
  /* and it goes on: ten more steps, no further warning */
  int w = warnings(r.d);
  for (int k = 0; k < 10; k++) run_step(&r);
  cr_expect_eq(warnings(r.d), w, "%s %s: warnings after the reset", engine_name[engine], what);
  cr_expect(finite_state(&r));
  run_close(&r);
  run_close(&ref);
}

static const double bad_values[] = {NAN, INFINITY, -INFINITY, 1e11};

static void feed_all(int engine) {
  const char *duck = SCENE("microduck.xml");
  for (int k = 0; k < 4; k++) {
    double v = bad_values[k];
    feed(duck, engine, 0, 0, v, RL_WARN_BADQPOS); /* the floating base's x */
    feed(duck, engine, 0, 3, v, RL_WARN_BADQPOS); /* its quaternion */
    feed(duck, engine, 0, 9, v, RL_WARN_BADQPOS); /* a leg joint */
    feed(duck, engine, 1, 2, v, RL_WARN_BADQVEL);
    feed(duck, engine, 1, 8, v, RL_WARN_BADQVEL);
  }
  /* every ctrl of microduck is limited: only NaN stays bad after the clamp (inf, 1e11 are clamped) */
  feed(duck, engine, 2, 1, NAN, RL_WARN_BADCTRL);
  feed(duck, engine, 2, 5, NAN, RL_WARN_BADCTRL);
}

Test(badstate, newton_qpos_qvel_ctrl) { feed_all(NEWTON); }
Test(badstate, cg_qpos_qvel_ctrl) { feed_all(CG); }
Test(badstate, avbd_qpos_qvel_ctrl) { feed_all(AVBD); }

/* A bad model parameter (SET changes the loaded model): every step warns BADQACC and the state stays
   finite; the soft engines hold it at qpos0 with zero velocity. */
static void bad_model(int engine, void (*set)(rl_model *m, double v), double v, const char *what) {
  run r;
  run_open(&r, SCENE("microduck.xml"), engine);
  set(r.p.m, v);
  if (r.am) { /* AVBD bakes masses and gains in at build: rebuild on the changed model */
    char err[256];
    rl_avbd_free(r.am);
    rl_avbd_param prm = rl_avbd_default_param(r.p.m);
    r.am = rl_avbd_build(r.p.m, &prm, err, sizeof err);
    cr_assert_not_null(r.am, "%s", err);
    rl_avbd_from_generalized(r.am, r.p.m, r.d);
  }
  for (int u = 0; u < r.p.m->nu; u++) r.d->ctrl[u] = (real)0.1;
  for (int k = 0; k < 5; k++) {
    run_step(&r);
    cr_expect(finite_state(&r), "%s %s = %g: state not finite after step %d", engine_name[engine], what, v, k + 1);
  }
  cr_expect_eq(r.d->warning[RL_WARN_BADQACC], 5, "%s %s = %g: BADQACC counted %d times in 5 steps", engine_name[engine],
               what, v, r.d->warning[RL_WARN_BADQACC]);
  if (engine != AVBD) {
    for (int i = 0; i < r.p.m->nq; i++)
      cr_expect_eq(r.d->qpos[i], r.p.m->qpos0[i], "%s %s: qpos[%d] not held at qpos0", engine_name[engine], what, i);
    for (int i = 0; i < r.p.m->nv; i++) cr_expect_eq(r.d->qvel[i], 0, "%s %s: qvel[%d]", engine_name[engine], what, i);
  }
  cr_expect(fabs((double)r.d->time - 5 * (double)r.p.m->opt.timestep) < 1e-6, "%s %s: time %g after 5 steps",
            engine_name[engine], what, (double)r.d->time);
  run_close(&r);
}

static void set_gravity(rl_model *m, double v) { m->opt.gravity[2] = (real)v; }
static void set_gear(rl_model *m, double v) { m->actuator_gear[0] = (real)v; }

static void bad_models(int engine) {
  bad_model(engine, set_gravity, NAN, "gravity_z");
  bad_model(engine, set_gravity, INFINITY, "gravity_z");
  bad_model(engine, set_gear, NAN, "actuator_gear[0]");
}

Test(badstate, newton_model) { bad_models(NEWTON); }
Test(badstate, cg_model) { bad_models(CG); }
Test(badstate, avbd_model) { bad_models(AVBD); }

/* The independent reference: MuJoCo 2.2.2 warns the same way for the same values in the same fields
   (bad qpos, qvel; ctrl after its clamp: NaN warns, inf and 1e11 on a limited actuator do not), and
   without limits on the controls (clamping disabled) every bad value warns in both. */
Test(badstate, mujoco_warns_alike) {
  run r;
  run_open(&r, SCENE("microduck.xml"), NEWTON);
  mjData *mjd = mj_makeData(r.p.mjm);
  static const int mjw[3] = {mjWARN_BADQPOS, mjWARN_BADQVEL, mjWARN_BADCTRL};
  static const int rlw[3] = {RL_WARN_BADQPOS, RL_WARN_BADQVEL, RL_WARN_BADCTRL};
  for (int field = 0; field < 3; field++)
    for (int k = 0; k < 4; k++) {
      mj_resetData(r.p.mjm, mjd);
      rl_data_reset(r.p.m, r.d);
      double *xm = field == 0 ? mjd->qpos : field == 1 ? mjd->qvel : mjd->ctrl;
      real *xr = field == 0 ? r.d->qpos : field == 1 ? r.d->qvel : r.d->ctrl;
      xm[1] = bad_values[k];
      xr[1] = (real)bad_values[k];
      mj_step(r.p.mjm, mjd);
      rl_step(r.p.m, r.d);
      cr_expect_eq(r.d->warning[rlw[field]], mjd->warning[mjw[field]].number,
                   "field %d = %g: rigidlab counted %d, MuJoCo %d", field, bad_values[k], r.d->warning[rlw[field]],
                   mjd->warning[mjw[field]].number);
      if (field < 2) /* a control is clamped first: only NaN stays bad on microduck's limited actuators */
        cr_expect_eq(mjd->warning[mjw[field]].number, 1, "MuJoCo did not warn for field %d = %g", field, bad_values[k]);
    }
  r.p.mjm->opt.disableflags |= mjDSBL_CLAMPCTRL;
  r.p.m->opt.disableflags |= RL_DSBL_CLAMPCTRL;
  for (int k = 0; k < 4; k++) {
    mj_resetData(r.p.mjm, mjd);
    rl_data_reset(r.p.m, r.d);
    mjd->ctrl[2] = bad_values[k];
    r.d->ctrl[2] = (real)bad_values[k];
    mj_step(r.p.mjm, mjd);
    rl_step(r.p.m, r.d);
    cr_expect_eq(mjd->warning[mjWARN_BADCTRL].number, 1, "MuJoCo, no clamp: ctrl = %g did not warn", bad_values[k]);
    cr_expect_eq(r.d->warning[RL_WARN_BADCTRL], mjd->warning[mjWARN_BADCTRL].number,
                 "no clamp: ctrl = %g: rigidlab counted %d, MuJoCo %d", bad_values[k], r.d->warning[RL_WARN_BADCTRL],
                 mjd->warning[mjWARN_BADCTRL].number);
  }
  mj_deleteData(mjd);
  run_close(&r);
}
