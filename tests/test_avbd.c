/* test_avbd.c — the AVBD solver in maximal coordinates, in the precision this file is
 * compiled for (-DRL_REAL_F64 / -DRL_REAL_F32).  Every test prints the figures it checks, so they
 * can be quoted:  build-avbd/tests/test_avbd_f64 --verbose  (or ninja -C build-avbd test). */
#include <criterion/criterion.h>
#include <time.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_odeiv2.h>
#include "avbd_ref.h"
#include "pair.h"
#include "rl_test_pair.h"
#include "rl_avbd.h"
#include "rl_collide.h"
#include "rl_test_avbd.h"
#include "avbd_internal.h"

#define SCENE(name) SRCDIR "/experiments/scenes/" name
#define MODEL(name) SRCDIR "/tests/models/" name


/* MODEL loaded at time step h (h ≤ 0: the model's); its default AVBD parameters */
static rl_avbd_param avbd_load(rl_pair *p, const char *model, double h) {
  load(p, model, NULL);
  if (h > 0) p->m->opt.timestep = (real)h;
  return rl_avbd_default_param(p->m);
}

/* the loaded model in AVBD with parameters PRM from its initial state; *d its data */
static rl_avbd *avbd_start(rl_pair *p, const rl_avbd_param *prm, rl_data **d) {
  rl_avbd *am = build_prm(p->m, prm);
  *d = rl_data_alloc(p->m);
  rl_avbd_from_generalized(am, p->m, *d);
  return am;
}

/* MODEL in AVBD with its default parameters from its initial state, at time step h (h ≤ 0: the model's) */
static rl_avbd *avbd_open(rl_pair *p, const char *model, double h, rl_data **d) {
  rl_avbd_param prm = avbd_load(p, model, h);
  return avbd_start(p, &prm, d);
}

/* ------------------------------------------------------------------ build checks */

Test(avbd, refuses_massless_body_by_name) {
  rl_pair p;
  load(&p, SCENE("double_pendulum.xml"), NULL);
  char err[256] = "";
  p.m->body_mass[2] = 0;
  rl_avbd_param prm = rl_avbd_default_param(p.m);
  rl_avbd *am = rl_avbd_build(p.m, &prm, err, sizeof err);
  printf("avbd build with body 2 massless: %s\n", err);
  cr_expect_null(am);
  cr_expect(strstr(err, rl_model_name(p.m, p.m->name_bodyadr[2])) != NULL, "error does not name the body: %s", err);
  p.m->body_mass[2] = 1;
  p.m->body_inertia[3 * 2 + 1] = 0;
  am = rl_avbd_build(p.m, &prm, err, sizeof err);
  cr_expect_null(am, "zero inertia accepted");
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* generalized → maximal → generalized is the identity (free, hinge; random state) */
Test(avbd, generalized_maximal_round_trip) {
  rl_pair p;
  load(&p, SCENE("microduck.xml"), NULL);
  rl_avbd *am = build(p.m);
  rl_data *d = rl_data_alloc(p.m);
  unsigned seed = 7;
  for (int i = 0; i < p.m->nq; i++) {
    seed = seed * 1103515245u + 12345u;
    d->qpos[i] += (real)(0.4 * ((seed >> 8) / 16777216.0 - 0.5));
  }
  for (int i = 0; i < p.m->nv; i++) {
    seed = seed * 1103515245u + 12345u;
    d->qvel[i] = (real)(2.0 * ((seed >> 8) / 16777216.0 - 0.5));
  }
  double qn = 0;
  for (int i = 3; i < 7; i++) qn += (double)d->qpos[i] * d->qpos[i];
  for (int i = 3; i < 7; i++) d->qpos[i] /= (real)sqrt(qn);
  real q0[64], v0[64];
  memcpy(q0, d->qpos, sizeof(real) * (size_t)p.m->nq);
  memcpy(v0, d->qvel, sizeof(real) * (size_t)p.m->nv);
  rl_avbd_from_generalized(am, p.m, d);
  memset(d->qvel, 0, sizeof(real) * (size_t)p.m->nv);
  rl_avbd_to_generalized(am, p.m, d);
  double eq = 0, ev = 0;
  for (int i = 0; i < p.m->nq; i++) eq = fmax(eq, fabs((double)d->qpos[i] - q0[i]));
  for (int i = 0; i < p.m->nv; i++) ev = fmax(ev, fabs((double)d->qvel[i] - v0[i]));
  printf("avbd round trip microduck (%s): max |dqpos| %.3e, max |dqvel| %.3e\n", RL_PREC_NAME, eq, ev);
  cr_expect_leq(eq, TOL(1e-13, 2e-6));
  cr_expect_leq(ev, TOL(1e-12, 2e-5));
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* Bodies with several joints (compound joints): qpos/qvel → poses and velocities → qpos/qvel.  Random
   coordinates around qpos0 (balls: a random unit quaternion) and random rates; the round trip is exact to
   rounding: the coordinates are found by Gauss–Newton from the last ones (here: the same) and the rates by
   the joint's motion subspace, MuJoCo's dof layout. */
static void compound_round_trip(const char *model, const char *name) {
  rl_pair p;
  load(&p, model, NULL);
  rl_avbd *am = build(p.m);
  cr_assert_gt(am->ncmp, 0, "%s has no compound joint", name);
  rl_data *d = rl_data_alloc(p.m);
  unsigned seed = 11;
  for (int i = 0; i < p.m->nq; i++) {
    seed = seed * 1103515245u + 12345u;
    d->qpos[i] += (real)(0.6 * ((seed >> 8) / 16777216.0 - 0.5));
  }
  for (int j = 0; j < p.m->njnt; j++) {
    int t = p.m->jnt_type[j], a = p.m->jnt_qposadr[j] + (t == RL_JNT_FREE ? 3 : 0);
    if (t != RL_JNT_BALL && t != RL_JNT_FREE) continue;
    double n = 0;
    for (int i = 0; i < 4; i++) n += (double)d->qpos[a + i] * d->qpos[a + i];
    for (int i = 0; i < 4; i++) d->qpos[a + i] = (real)(d->qpos[a + i] / sqrt(n));
  }
  for (int i = 0; i < p.m->nv; i++) {
    seed = seed * 1103515245u + 12345u;
    d->qvel[i] = (real)(2.0 * ((seed >> 8) / 16777216.0 - 0.5));
  }
  real q0[128], v0[128];
  cr_assert_leq(p.m->nq, 128);
  memcpy(q0, d->qpos, sizeof(real) * (size_t)p.m->nq);
  memcpy(v0, d->qvel, sizeof(real) * (size_t)p.m->nv);
  rl_avbd_from_generalized(am, p.m, d);
  memset(d->qvel, 0, sizeof(real) * (size_t)p.m->nv);
  rl_avbd_to_generalized(am, p.m, d);
  double eq = 0, ev = 0;
  for (int i = 0; i < p.m->nq; i++) eq = fmax(eq, fabs((double)d->qpos[i] - q0[i]));
  for (int i = 0; i < p.m->nv; i++) ev = fmax(ev, fabs((double)d->qvel[i] - v0[i]));
  printf("avbd round trip %s (%s, %d compound joints): max |dqpos| %.3e, max |dqvel| %.3e\n", name, RL_PREC_NAME,
         am->ncmp, eq, ev);
  cr_expect_leq(eq, TOL(1e-14, 2e-6));
  cr_expect_leq(ev, TOL(1e-14, 2e-5));
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

Test(avbd, compound_joints_round_trip) {
  compound_round_trip(MODEL("compound_joints.xml"), "compound_joints");
  compound_round_trip(SCENE("planar_walker.xml"), "planar_walker");
  compound_round_trip(SCENE("biped.xml"), "biped");
}

/* Robot-like scenes with compound joints standing on flat ground, 2 s from qpos0 at the model's time step
   (2 ms), default parameters under the update stopping test (update_stop; the distance test exhausts the
   body sweeps here, avbd_robots.ini): no step exhausts the budget, anchors (length rows of every joint, compound
   rows included) ≤ 1 µm (f64) / 20 µm (f32); prints sweeps per step and the base height. */
static void robot_stands(const char *model, const char *name, int zi, double z0) {
  rl_pair p;
  rl_data *d;
  rl_avbd_param prm = avbd_load(&p, model, 0);
  update_stop(&prm);
  rl_avbd *am = avbd_start(&p, &prm, &d);
  long n = lround(2.0 / (double)p.m->opt.timestep);
  double an = 0, zmin = 1e9, zmax = -1e9;
  for (long k = 0; k < n; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    an = fmax(an, am->stat.anchor_err);
    zmin = fmin(zmin, z0 + d->qpos[zi]);
    zmax = fmax(zmax, z0 + d->qpos[zi]);
  }
  printf("avbd %s (%s) 2 s: %ld of %ld steps exhausted, %.1f sweeps/step, max anchor %.2e m, base height %.4f "
         "(range %.4f .. %.4f) m\n",
         name, RL_PREC_NAME, am->exhausted, n, (double)am->sweeps / (double)am->steps, an, z0 + d->qpos[zi], zmin,
         zmax);
  cr_expect_eq(am->exhausted, 0);
  /* f32: 2e-5 (quadruped12 reaches 1.1e-5 m, the target of 1e-5 is missed by 10 %) */
  cr_expect_leq(an, TOL(1e-6, 2e-5));
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

Test(avbd, compound_robot_scenes_stand, .timeout = 600) {
  robot_stands(SCENE("quadruped12.xml"), "quadruped12", 2, 0);
  robot_stands(SCENE("biped.xml"), "biped", 2, 0);
  robot_stands(SCENE("planar_walker.xml"), "planar_walker", 1, 1.25); /* rootz slide from 1.25 m */
}

/* A joint layout that does not determine the relative pose is refused at build, naming the body and
   its joints: two hinges about parallel axes, a hinge with a ball (4 rotational dofs), two slides along
   nearly the same axis. */
Test(avbd, refuses_redundant_joint_layouts_by_name) {
  static const char *xml[3] = {
      "<mujoco><worldbody><body name='b'><joint name='h1' axis='0 1 0'/><joint name='h' axis='0 2 0' pos='0 0 "
      "1'/><geom size='0.1'/></body></worldbody></mujoco>",
      "<mujoco><worldbody><body name='b'><joint name='h' axis='0 1 0'/><joint name='k' type='ball'/><geom "
      "size='0.1'/></body></worldbody></mujoco>",
      "<mujoco><worldbody><body name='b'><joint name='s' type='slide' axis='1 0 0'/><joint name='h' "
      "axis='0 1 0'/><joint name='s2' type='slide' axis='2 0 0.0000001'/><geom "
      "size='0.1'/></body></worldbody></mujoco>"};
  for (int i = 0; i < 3; i++) {
    char path[] = "/tmp/avbd_layoutXXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, xml[i], strlen(xml[i])), (ssize_t)strlen(xml[i]));
    close(fd);
    rl_pair p;
    load(&p, path, NULL);
    unlink(path);
    char err[512] = "";
    rl_avbd_param prm = rl_avbd_default_param(p.m);
    rl_avbd *am = rl_avbd_build(p.m, &prm, err, sizeof err);
    printf("avbd build of layout %d: %s\n", i, err);
    cr_expect_null(am);
    cr_expect(strstr(err, "'b'") && strstr(err, "'h'"), "error does not name the body and joints: %s", err);
    rl_avbd_free(am);
    rl_pair_free(&p);
  }
}

/* ------------------------------------------------------------------ free fall */

/* No constraints: the step is x_{n+1} = x_n + h v_n + h² g, v_{n+1} = v_n + h g, so after N steps
   v = v₀ + N h g and x = x₀ + N h v₀ + h² g N(N+1)/2, to round-off; ω stays constant. */
Test(avbd, free_fall_exact) {
  rl_pair p;
  load(&p, MODEL("avbd_freefall.xml"), NULL);
  rl_avbd *am = build(p.m);
  rl_data *d = rl_data_alloc(p.m);
  d->qvel[0] = (real)0.3;
  d->qvel[1] = (real)-0.2;
  d->qvel[2] = (real)1.5;
  rl_avbd_from_generalized(am, p.m, d);
  real x0[3], v0[3];
  memcpy(x0, am->pose[0].x, sizeof x0);
  memcpy(v0, am->vel, sizeof v0);
  const int N = 1000;
  double h = p.m->opt.timestep, ex = 0, ev = 0;
  int iters = 0;
  for (int n = 0; n < N; n++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    iters += am->stat.iterations;
  }
  for (int k = 0; k < 3; k++) {
    double g = p.m->opt.gravity[k];
    double v = v0[k] + N * h * g, x = x0[k] + N * h * v0[k] + h * h * g * N * (N + 1) / 2.0;
    ex = fmax(ex, fabs(am->pose[0].x[k] - x));
    ev = fmax(ev, fabs(am->vel[k] - v));
  }
  printf("avbd free fall (%s) 1000 steps: |x - x_exact| %.3e m, |v - v_exact| %.3e m/s, %d sweeps\n", RL_PREC_NAME, ex,
         ev, iters);
  cr_expect_leq(ex, TOL(1e-12, 2e-5));
  cr_expect_leq(ev, TOL(1e-12, 1e-4));
  cr_expect_eq(iters, N, "a constraint-free step should converge in one sweep");
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* ------------------------------------------------- agreement with the smooth engine as h → 0 */

/* controls held during avbd_run_stop's and smooth_ref's runs (NULL: all zero) */
static const double *run_ctrl;
/* the reference of convergence_order_stop (NULL: smooth_ref) */
static int (*run_ref)(const char *model, double T, real *q);
/* block mode for avbd_run_stop's runs (−1: the default), and the unconverged steps of its last run */
static int run_block = -1;
static long run_unconverged;

static void set_run_ctrl(const rl_model *m, rl_data *d) {
  if (run_ctrl)
    for (int u = 0; u < m->nu; u++) d->ctrl[u] = (real)run_ctrl[u];
}

/* run MODEL with AVBD at step h for T seconds from qpos0 (rest): final qpos in q; the worst anchor
   error and the count of budget-exhausted steps are returned through the pointers */
static void avbd_run_stop(const char *model, double h, double T, int stop, real *q, double *anchor, long *exhausted,
                          double *iters) {
  rl_pair p;
  rl_data *d;
  rl_avbd_param prm = avbd_load(&p, model, h);
  prm.stop = stop;
  if (run_block >= 0) prm.block = run_block;
  rl_avbd *am = avbd_start(&p, &prm, &d);
  set_run_ctrl(p.m, d);
  long n = lround(T / h), it = 0;
  long unconverged = 0;
  double an = 0;
  for (long k = 0; k < n; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    an = fmax(an, am->stat.anchor_err);
    it += am->stat.iterations;
    unconverged += !am->stat.converged;
  }
  run_unconverged = unconverged;
  memcpy(q, d->qpos, sizeof(real) * (size_t)p.m->nq);
  if (anchor) *anchor = an;
  if (exhausted) *exhausted = am->exhausted;
  if (iters) *iters = (double)it / (double)n;
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* avbd_run_stop with the default stopping test */
static void avbd_run(const char *model, double h, double T, real *q, double *anchor, long *exhausted, double *iters) {
  avbd_run_stop(model, h, T, RL_AVBD_STOP_UPDATE, q, anchor, exhausted, iters);
}

/* reference: the generalized-coordinate smooth engine (RK4, h = 1e-4) — valid because the scene has
   no constraint rows (checked with rl_constraint_free) */
static int smooth_ref(const char *model, double T, real *q) {
  rl_pair p;
  char why[256];
  load(&p, model, "integrator=rk4");
  cr_assert(rl_constraint_free(&p, why, sizeof why), "%s has constraints: %s", model, why);
  p.m->opt.timestep = (real)1e-4;
  rl_data *d = rl_data_alloc(p.m);
  set_run_ctrl(p.m, d);
  rl_forward_smooth(p.m, d);
  for (long k = 0; k < lround(T / 1e-4); k++) rl_step_smooth(p.m, d);
  memcpy(q, d->qpos, sizeof(real) * (size_t)p.m->nq);
  int nq = p.m->nq;
  rl_data_free(d);
  rl_pair_free(&p);
  return nq;
}

/* error at T = 0.5 s for h = 4, 2, 1, 0.5 ms; order = least-squares slope of log err vs log h.
   f32: the solver tolerance (5e-6 rad per step) accumulates to ~5e-2 rad over 0.5 s at the small steps,
   above the O(h) error, so only h = 4 and 2 ms enter the fit there (all errors printed). */
static double convergence_order_stop(const char *model, const char *name, int stop) {
  const double hs[4] = {4e-3, 2e-3, 1e-3, 5e-4}, T = 0.5;
  real ref[64], q[64];
  int nq = (run_ref ? run_ref : smooth_ref)(model, T, ref);
  double lx[4], ly[4], sx = 0, sy = 0;
  printf("avbd vs smooth engine, %s (%s%s), T = %.1f s:", name, RL_PREC_NAME,
         run_block == RL_AVBD_BLOCK_ARTICULATION ? ", articulation blocks" : "", T);
  for (int i = 0; i < 4; i++) {
    double an, it;
    avbd_run_stop(model, hs[i], T, stop, q, &an, NULL, &it);
    double e = 0;
    for (int k = 0; k < nq; k++) e = fmax(e, fabs((double)q[k] - ref[k]));
    printf(" h=%.1e err=%.3e (anchor %.1e, %.1f sweeps/step);", hs[i], e, an, it);
    lx[i] = log(hs[i]);
    ly[i] = log(e);
    sx += lx[i];
    sy += ly[i];
  }
#if defined(RL_REAL_F32)
  const int nfit = 2;
  sx = lx[0] + lx[1];
  sy = ly[0] + ly[1];
#else
  const int nfit = 4;
#endif
  double num = 0, den = 0;
  for (int i = 0; i < nfit; i++) {
    num += (lx[i] - sx / nfit) * (ly[i] - sy / nfit);
    den += (lx[i] - sx / nfit) * (lx[i] - sx / nfit);
  }
  printf(" fitted order %.3f\n", num / den);
  return num / den;
}

static double convergence_order(const char *model, const char *name) {
  return convergence_order_stop(model, name, RL_AVBD_STOP_UPDATE);
}

Test(avbd, pendulum_converges_to_smooth_engine_first_order) {
  double o = convergence_order(SCENE("pendulum.xml"), "pendulum");
  cr_expect(o > TOL(0.8, 0.5) && o < TOL(1.3, 1.6), "order %.3f", o);
}
Test(avbd, double_pendulum_converges_to_smooth_engine_first_order) {
  double o = convergence_order(SCENE("double_pendulum.xml"), "double_pendulum");
  cr_expect(o > TOL(0.8, 0.5) && o < TOL(1.3, 1.6), "order %.3f", o);
}
Test(avbd, compound_joints_converge_to_smooth_engine_first_order) {
  double o = convergence_order_stop(MODEL("compound_joints.xml"), "compound_joints", RL_AVBD_STOP_DISTANCE);
  cr_expect(o > TOL(0.8, 0.5) && o < TOL(1.3, 1.6), "order %.3f", o);
}
Test(avbd, chain8_converges_to_smooth_engine_first_order) {
  double o = convergence_order(SCENE("chain8.xml"), "chain8");
  cr_expect(o > TOL(0.8, 0.5) && o < TOL(1.3, 1.6), "order %.3f", o);
}

/* Muscles, a filter and an integrator servo on the joints, two or three actuators per joint, controls held:
   AVBD converges to the smooth engine (same gains, biases and activation rates) at order 1, and its
   activations after every step are the smooth engine's Euler update of the same rates, bit for bit (ȧ
   depends on the control and the activation only). */
Test(avbd, activation_muscles_converge_to_smooth_engine_first_order) {
  static const double u[6] = {0.5, 0.8, 0.3, 0.6, 0.7, 0.02};
  const char *model = MODEL("avbd_muscle_arm.xml");
  run_ctrl = u;
  double o = convergence_order_stop(model, "avbd_muscle_arm", RL_AVBD_STOP_DISTANCE);
  rl_pair p, ps;
  rl_data *d;
  rl_avbd_param prm = avbd_load(&p, model, 2e-3);
  rl_avbd *am = avbd_start(&p, &prm, &d);
  set_run_ctrl(p.m, d);
  load(&ps, model, "integrator=euler");
  rl_data *ds = rl_data_alloc(ps.m);
  set_run_ctrl(ps.m, ds);
  cr_assert_eq(p.m->na, 5);
  int differ = 0;
  for (int k = 0; k < 100; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    rl_step_smooth(ps.m, ds);
    for (int a = 0; a < p.m->na; a++) differ += d->act[a] != ds->act[a];
  }
  printf("avbd_muscle_arm: act after 100 steps %.6f %.6f %.6f %.6f %.6f, %d entries differ from the smooth engine's\n",
         (double)d->act[0], (double)d->act[1], (double)d->act[2], (double)d->act[3], (double)d->act[4], differ);
  cr_expect_eq(differ, 0);
  cr_expect_gt(d->act[3], 0.4, "the filter's activation rises toward its control (0.7, clamped at 0.5)");
  run_ctrl = NULL;
  rl_data_free(ds);
  rl_pair_free(&ps);
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
  cr_expect(o > TOL(0.8, 0.5) && o < TOL(1.3, 1.6), "order %.3f", o);
}

/* A three-link swimmer (free root, two motors held at 0.7 and −0.5) in a dense viscous fluid with a cross-current:
   the inertia-box fluid force on each body, at the step-start velocity, is all that moves the root.  AVBD
   converges to the smooth engine (the same force in qfrc_passive) at order 1. */
Test(avbd, fluid_swimmer_converges_to_smooth_engine_first_order) {
  static const double u[2] = {0.7, -0.5};
  run_ctrl = u;
  double o = convergence_order_stop(MODEL("swimmer_fluid.xml"), "swimmer_fluid", RL_AVBD_STOP_DISTANCE);
  run_ctrl = NULL;
  cr_expect(o > TOL(0.8, 0.5) && o < TOL(1.3, 1.6), "order %.3f", o);
}

/* Fixed tendons on a three-link arm swinging under gravity: a damped spring with a spring length, a motor and a
   filtered position servo on tendons (controls held), an inert tendon.  Each joint coordinate carries the
   tendons' force along L = Σ cᵢφᵢ; AVBD converges to the smooth engine at order 1. */
Test(avbd, fixed_tendons_converge_to_smooth_engine_first_order) {
  static const double u[2] = {0.4, 0.6};
  run_ctrl = u;
  double o = convergence_order_stop(MODEL("avbd_fixed_tendon.xml"), "avbd_fixed_tendon", RL_AVBD_STOP_DISTANCE);
  run_ctrl = NULL;
  cr_expect(o > TOL(0.8, 0.5) && o < TOL(1.3, 1.6), "order %.3f", o);
}

/* Spatial tendons on a two-link arm swinging under gravity and a free box on a spring (tests/models/
   avbd_spatial_tendon.xml): a damped spring wrapping a cylinder with a side site, a two-branch pulley cable with
   a motor and a filtered servo (controls held), a spring from a world site.  Each body on a path carries the
   tendon's force F_L·∂L/∂z; AVBD converges to the smooth engine (MuJoCo's ten_length/ten_J path) at order 1. */
Test(avbd, spatial_tendons_converge_to_smooth_engine_first_order) {
  static const double u[2] = {-1.5, 0.2};
  run_ctrl = u;
  double o = convergence_order_stop(MODEL("avbd_spatial_tendon.xml"), "avbd_spatial_tendon", RL_AVBD_STOP_DISTANCE);
  run_ctrl = NULL;
  cr_expect(o > TOL(0.8, 0.5) && o < TOL(1.3, 1.6), "order %.3f", o);
}

/* Σ_s ∂L/∂z_s · (v_s, ω_s) over the bodies for entry id of AVBD's acting path list (a spatial tendon, or −1 − u for
   actuator u's slider crank): the gradients the local solves use, applied to the body twists, which must equal L̇ */
static double avbd_gradient_twist(const rl_avbd *am, const rl_model *m, int id) {
  double jv = 0;
  for (int b = 0; b < am->nb; b++) {
    real J[6] = {0, 0, 0, 0, 0, 0};
    avbd_spat_length(am, m, id, b, J, NULL);
    for (int c = 0; c < 6; c++) jv += (double)J[c] * (double)am->vel[6 * b + c];
  }
  return jv;
}

/* Loads a model, holds controls u, steps AVBD 60 times at 2 ms and sets the body poses and the smooth engine's
   position and velocity stages from the resulting qpos, qvel (joint rows exact), for comparing AVBD's path lengths
   with the smooth engine's at one state */
static rl_avbd *avbd_after_60_steps(rl_pair *p, rl_data **d, const char *model, const double *u) {
  rl_avbd_param prm = avbd_load(p, model, 2e-3);
  rl_avbd *am = avbd_start(p, &prm, d);
  run_ctrl = u;
  set_run_ctrl(p->m, *d);
  run_ctrl = NULL;
  for (int k = 0; k < 60; k++) cr_assert_eq(rl_avbd_step(am, p->m, *d), RL_OK);
  rl_avbd_from_generalized(am, p->m, *d);
  rl_fwd_position(p->m, *d);
  rl_fwd_velocity(p->m, *d);
  return am;
}

/* The spatial tendons' lengths and rates AVBD evaluates at its body poses and velocities (avbd_tendon_path) equal
   the smooth engine's ten_length and ten_velocity = ten_J·qvel (MuJoCo's, verified in verify_tendon) at the same
   state (the poses set from qpos, qvel), and so do the per-body gradients ∂L/∂z_s applied to the body twists,
   after 60 swinging steps (the flexor wraps its cylinder, the cable runs through its pulley). */
Test(avbd, spatial_tendon_lengths_and_rates_match_smooth_engine) {
  static const double u[2] = {-1.5, 0.2};
  rl_pair p;
  rl_data *d;
  rl_avbd *am = avbd_after_60_steps(&p, &d, MODEL("avbd_spatial_tendon.xml"), u);
  cr_assert_eq(am->nspat, 3);
  double el = 0, er = 0, ej = 0, ws = 0;
  for (int i = 0; i < am->nspat; i++) {
    int t = am->spat[i];
    real rate = 0, L = avbd_tendon_path(am, p.m, t, -1, NULL, &rate);
    el = fmax(el, fabs((double)L - (double)d->ten_length[t]) / fmax(1, fabs((double)d->ten_length[t])));
    er = fmax(er, fabs((double)rate - (double)d->ten_velocity[t]) / fmax(1, fabs((double)d->ten_velocity[t])));
    ws += fabs((double)d->ten_velocity[t]);
    double jv = avbd_gradient_twist(am, p.m, t);
    ej = fmax(ej, fabs(jv - (double)d->ten_velocity[t]) / fmax(1, fabs((double)d->ten_velocity[t])));
  }
  int wrapped = 0;
  for (int k = d->ten_wrapadr[0]; k < d->ten_wrapadr[0] + d->ten_wrapnum[0]; k++) wrapped += d->wrap_obj[k] >= 0;
  printf("avbd spatial tendons (%s) after 60 steps: length error %.2e, rate error %.2e, gradient·twist error %.2e "
         "(relative, max of 3; Σ|L̇| %.3f m/s), flexor path points on the cylinder %d\n",
         RL_PREC_NAME, el, er, ej, ws, wrapped);
  cr_expect_eq(wrapped, 2, "the flexor should wrap the elbow cylinder");
  cr_expect_gt(ws, 0.05, "the tendons should be moving");
  cr_expect_leq(el, TOL(1e-12, 1e-5));
  cr_expect_leq(er, TOL(1e-12, 1e-5));
  cr_expect_leq(ej, TOL(1e-12, 1e-5));
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* Slider-crank transmissions (tests/models/avbd_slider_crank.xml: a forward crank from a world slider site, a
   backward one whose slider site rides on the child body, and a "broken" one, det < 0 at the start): at the state
   after 60 steps, gear·l, gear·l̇ and the per-body gradients applied to the body twists equal the smooth engine's
   actuator_length and actuator_velocity = moment·qvel (MuJoCo's slider-crank, verified in verify_f64's
   mocap_crank_muscle_samples); then AVBD converges to the smooth engine at order 1. */
Test(avbd, slider_crank_lengths_and_rates_match_smooth_engine) {
  static const double u[3] = {0.03, -0.02, 0.4};
  rl_pair p;
  rl_data *d;
  rl_avbd *am = avbd_after_60_steps(&p, &d, MODEL("avbd_slider_crank.xml"), u);
  rl_actuation(p.m, d);
  cr_assert_eq(am->nspat, 3);
  double el = 0, er = 0, ej = 0, ws = 0;
  int broken = 0;
  for (int i = 0; i < am->nspat; i++) {
    int a = -1 - am->spat[i];
    cr_assert(a >= 0 && a < p.m->nu);
    double g = (double)p.m->actuator_gear[a], L0 = (double)d->actuator_length[a], V0 = (double)d->actuator_velocity[a];
    real rate = 0, l = avbd_spat_length(am, p.m, am->spat[i], -1, NULL, &rate);
    el = fmax(el, fabs(g * (double)l - L0) / fmax(1, fabs(L0)));
    er = fmax(er, fabs(g * (double)rate - V0) / fmax(1, fabs(V0)));
    ws += fabs(V0);
    double jv = avbd_gradient_twist(am, p.m, am->spat[i]);
    ej = fmax(ej, fabs(g * jv - V0) / fmax(1, fabs(V0)));
    /* the broken crank: its rod too short for the slider, det ≤ 0 (length a·v) */
    const real *sx = d->site_xpos + 3 * p.m->actuator_trnid[2 * a + 1], *sm = d->site_xmat + 9 * p.m->actuator_trnid[2 * a + 1];
    const real *cx = d->site_xpos + 3 * p.m->actuator_trnid[2 * a];
    double v[3] = {cx[0] - sx[0], cx[1] - sx[1], cx[2] - sx[2]}, ax[3] = {sm[2], sm[5], sm[8]};
    double av = v[0] * ax[0] + v[1] * ax[1] + v[2] * ax[2], rod = p.m->actuator_cranklength[a];
    broken += av * av + rod * rod - (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) <= 0;
  }
  printf("avbd slider-crank transmissions (%s) after 60 steps: length error %.2e, rate error %.2e, gradient·twist "
         "error %.2e (relative, max of 3; Σ|l̇| %.3f m/s), broken cranks %d\n",
         RL_PREC_NAME, el, er, ej, ws, broken);
  cr_expect_eq(broken, 1, "the third crank should still be broken (det <= 0)");
  cr_expect_gt(ws, 0.01, "the cranks should be moving");
  cr_expect_leq(el, TOL(1e-12, 1e-5));
  cr_expect_leq(er, TOL(1e-12, 1e-5));
  cr_expect_leq(ej, TOL(1e-12, 1e-5));
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

Test(avbd, slider_crank_converges_to_smooth_engine_first_order) {
  static const double u[3] = {0.03, -0.02, 0.4};
  run_ctrl = u;
  double o = convergence_order_stop(MODEL("avbd_slider_crank.xml"), "avbd_slider_crank", RL_AVBD_STOP_DISTANCE);
  run_ctrl = NULL;
  cr_expect(o > TOL(0.8, 0.5) && o < TOL(1.3, 1.6), "order %.3f", o);
}

/* ------------------------------------------------ transmissions on body poses, ball and free joints */

/* Errors of AVBD's wrench actuators (site, ball and free joint, body transmissions) at the state in d: AVBD state
   from qpos, qvel; the smooth engine's position, collision, velocity and actuation stages; AVBD's step-start
   moments (avbd_mdof_begin, avbd_wrench_begin).  e[0]: length Lⁿ vs actuator_length, e[1]: Vⁿ = Σ_s J_s·(v_s, ω_s)
   vs actuator_velocity, e[2]: the moment mapped to the dofs, Σ_s J_s·(∂x_s/∂q, ∂θ_s/∂q) (the point and rotation
   Jacobians at each COM), vs the actuator_moment row, e[3]: the force F(Lⁿ, Vⁿ) vs actuator_force; each relative
   to max(1, |reference|), max over the actuators (*n of them); *vel Σ|actuator_velocity|. */
static void wrench_errors(rl_avbd *am, rl_pair *p, rl_data *d, double e[4], int *n, double *vel) {
  const rl_model *m = p->m;
  int nv = m->nv;
  rl_avbd_from_generalized(am, m, d);
  rl_fwd_position(m, d);
  rl_collision(m, d);
  rl_fwd_velocity(m, d);
  rl_actuation(m, d);
  avbd_mdof_begin(am, m, d, m->opt.timestep);
  avbd_wrench_begin(am, m, d);
  real *jp = malloc(sizeof(real) * 3 * (size_t)nv), *jr = malloc(sizeof(real) * 3 * (size_t)nv);
  double *row = malloc(sizeof(double) * (size_t)nv);
  e[0] = e[1] = e[2] = e[3] = 0;
  *n = 0;
  *vel = 0;
  for (int k = 0; k < am->nwrench; k++) {
    const rl_avbd_wrench *w = am->wrench + k;
    int u = w->u;
    const real *J = am->wj + w->jadr, *r = d->actuator_moment + (size_t)u * nv;
    for (int j = 0; j < nv; j++) row[j] = 0;
    for (int s = 0; s < am->nb; s++) {
      rl_jac_point(m, d, jp, jr, am->pose[s].x, am->body[s]);
      for (int j = 0; j < nv; j++)
        for (int c = 0; c < 3; c++)
          row[j] += (double)J[6 * s + c] * jp[c * nv + j] + (double)J[6 * s + 3 + c] * jr[c * nv + j];
    }
    double rm = 1, dr = 0;
    for (int j = 0; j < nv; j++) {
      rm = fmax(rm, fabs((double)r[j]));
      dr = fmax(dr, fabs(row[j] - (double)r[j]));
    }
    real dL, dV, F = avbd_actuator_law(m, u, avbd_actuator_input(am, m, d, u), w->Ln, w->Vn, w->Ln, w->Vn, &dL, &dV);
    double L0 = d->actuator_length[u], V0 = d->actuator_velocity[u], F0 = d->actuator_force[u];
    e[0] = fmax(e[0], fabs((double)w->Ln - L0) / fmax(1, fabs(L0)));
    e[1] = fmax(e[1], fabs((double)w->Vn - V0) / fmax(1, fabs(V0)));
    e[2] = fmax(e[2], dr / rm);
    e[3] = fmax(e[3], fabs((double)F - F0) / fmax(1, fabs(F0)));
    *vel += fabs(V0);
    (*n)++;
  }
  free(jp);
  free(jr);
  free(row);
}

/* Site, ball and free joint, and body transmissions (tests/models/transmissions.xml: every transmission on one tree;
   avbd_site_drive.xml, avbd_ball_drive.xml, avbd_adhesion_pad.xml with its adhesion contacts in the gap band,
   adhesion_gripper.xml with the pad pressing on the box): after 60 steps with the controls held, AVBD's step-start
   lengths, velocities, moments (mapped to the dofs) and forces equal the smooth engine's actuator_length,
   actuator_velocity, actuator_moment and actuator_force (MuJoCo 2.2.2's, verified in verify_f64) at the same state. */
Test(avbd, wrench_transmissions_match_smooth_engine) {
  static const double u_trn[8] = {0.1, 0.3, -0.2, 0.4, 0.5, -0.3, 0.2, 0.1};
  static const double u_site[4] = {0.5, 0.2, 9.0, 0.3}, u_ball[7] = {0.4, 0.2, -0.3, 0.5, 12.0, 0.3, 0.1};
  static const double u_pad[2] = {0.004, 0.5}, u_grip[3] = {-0.1, 1.0, 0.5};
  const struct {
    const char *model;
    const double *u;
  } cases[] = {{MODEL("transmissions.xml"), u_trn},
               {MODEL("avbd_site_drive.xml"), u_site},
               {MODEL("avbd_ball_drive.xml"), u_ball},
               {MODEL("avbd_adhesion_pad.xml"), u_pad},
               {MODEL("adhesion_gripper.xml"), u_grip}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    rl_pair p;
    rl_data *d;
    rl_avbd *am = avbd_after_60_steps(&p, &d, cases[c].model, cases[c].u);
    double e[4], vel;
    int n;
    wrench_errors(am, &p, d, e, &n, &vel);
    int ncon = 0;
    for (int i = 0; i < d->ncon; i++) ncon += d->contact[i].exclude <= 1;
    printf("avbd wrench transmissions (%s) %s after 60 steps: %d actuators, length %.2e, velocity %.2e, moment %.2e, "
           "force %.2e (relative, max; Σ|V| %.3f; %d contacts)\n",
           RL_PREC_NAME, strrchr(cases[c].model, '/') + 1, n, e[0], e[1], e[2], e[3], vel, ncon);
    double qv = 0;
    for (int i = 0; i < p.m->nv; i++) qv += fabs((double)d->qvel[i]);
    cr_expect_gt(n, 0);
    /* the adhesion gripper's pad may hold the box (f32, articulation blocks: both at 0.067 m/s, the adhesion
       actuators' contact-normal rates 0): there the bodies must move */
    if (c == 4) cr_expect_gt(qv, 0.01, "the gripper should be moving");
    else cr_expect_gt(vel, 0.01, "the transmissions should be moving");
    for (int i = 0; i < 4; i++) cr_expect_leq(e[i], TOL(1e-14, 1e-5), "%s: error %d %.2e", cases[c].model, i, e[i]);
    rl_data_free(d);
    rl_avbd_free(am);
    rl_pair_free(&p);
  }
}

/* convergence_order_stop under the distance test in body (o[0]) and articulation (o[1]) blocks, controls u held */
static void convergence_both_blocks(const char *model, const char *name, const double *u, double o[2]) {
  run_ctrl = u;
  for (int b = 0; b < 2; b++) {
    run_block = b ? RL_AVBD_BLOCK_ARTICULATION : RL_AVBD_BLOCK_BODY;
    o[b] = convergence_order_stop(model, name, RL_AVBD_STOP_DISTANCE);
  }
  run_block = -1;
  run_ctrl = NULL;
}

/* A two-link arm pushed at its tip site and a free drone driven through sites (avbd_site_drive.xml: explicit motors,
   a velocity servo and an affine velocity damper on sites), controls held: AVBD converges to the smooth engine at
   order 1 in both block modes. */
Test(avbd, site_transmissions_converge_to_smooth_engine_first_order) {
  static const double u[4] = {0.5, 0.2, 9.0, 0.3};
  double o[2];
  convergence_both_blocks(MODEL("avbd_site_drive.xml"), "avbd_site_drive", u, o);
  for (int b = 0; b < 2; b++) cr_expect(o[b] > 0.9 && o[b] < TOL(1.3, 1.6), "blocks %d: order %.3f", b, o[b]);
}

/* Ball and free joints with damping, springs and armature on their dofs and actuators acting through them
   (avbd_ball_drive.xml: motors, jointinparent motors, velocity servos, a position servo on a ball's length),
   controls held: AVBD converges to the smooth engine at order 1 in both block modes.  f32 articulation blocks are
   held to a lower bound: the stiffened anchor rows of the ball joints (rho_tree) make the largest diagonal entry of a
   link's 6×6 block 3·10⁸ at 4 ms, so the factor's pivot floor 64ε·max diag is 2400 in float, above one rotational
   pivot of the block after elimination (640): that pivot is replaced by the floor at every iteration (5 guarded
   pivots per sweep, 186 sweeps/step; f64: none, 5.6 sweeps/step) — a precision floor of the articulation factor in
   float, not of the ball's terms (compound_joints.xml, whose ball has none, ends 0.04 rad from its f64 run at
   0.5 ms in f32 articulation blocks). */
Test(avbd, ball_and_free_joints_converge_to_smooth_engine_first_order) {
  static const double u[7] = {0.4, 0.2, -0.3, 0.5, 12.0, 0.3, 0.1};
  double o[2];
  convergence_both_blocks(MODEL("avbd_ball_drive.xml"), "avbd_ball_drive", u, o);
  cr_expect(o[0] > 0.9 && o[0] < TOL(1.3, 1.6), "body blocks: order %.3f", o[0]);
  cr_expect(o[1] > TOL(0.9, 0.6) && o[1] < TOL(1.3, 1.6), "articulation blocks: order %.3f", o[1]);
}

/* Reference for a model whose contacts all stay in the margin gap band (they make no constraint row): the whole
   pipeline (rl_step: collision, the body transmissions' contacts, constraint rows) in RK4 at 0.1 ms from qpos0 with
   the controls held, which is the smooth dynamics while no row exists.  Fails the test at a step with a constraint
   row or without a gap contact. */
static int gap_ref(const char *model, double T, real *q) {
  rl_pair p;
  load(&p, model, "integrator=rk4");
  p.m->opt.timestep = (real)1e-4;
  rl_data *d = rl_data_alloc(p.m);
  set_run_ctrl(p.m, d);
  int maxefc = 0, mincon = 1 << 30;
  for (long k = 0; k < lround(T / 1e-4); k++) {
    rl_step(p.m, d);
    maxefc = d->nefc > maxefc ? d->nefc : maxefc;
    mincon = d->ncon < mincon ? d->ncon : mincon;
  }
  cr_assert_eq(maxefc, 0, "%s: the reference run made %d constraint rows", model, maxefc);
  cr_assert_gt(mincon, 0, "%s: a reference step had no gap contact", model);
  memcpy(q, d->qpos, sizeof(real) * (size_t)p.m->nq);
  int nq = p.m->nq;
  rl_data_free(d);
  rl_pair_free(&p);
  return nq;
}

/* A gripper with an adhesion pad (avbd_adhesion_pad.xml: a position servo closes the finger, the adhesion pulls the
   pad toward the floor and the ball beside it through contacts in the gap band), controls held: AVBD converges to
   the smooth engine (the same contacts, no constraint row at any step) at order 1 in both block modes. */
Test(avbd, adhesion_pad_converges_to_smooth_engine_first_order) {
  static const double u[2] = {0.004, 0.5};
  double o[2];
  run_ref = gap_ref;
  convergence_both_blocks(MODEL("avbd_adhesion_pad.xml"), "avbd_adhesion_pad", u, o);
  run_ref = NULL;
  for (int b = 0; b < 2; b++) cr_expect(o[b] > 0.9 && o[b] < TOL(1.3, 1.6), "blocks %d: order %.3f", b, o[b]);
}

/* rotation angle of a unit quaternion, θ ∈ [0, π] */
static double quat_angle(const real *q) {
  double s = sqrt((double)q[1] * q[1] + (double)q[2] * q[2] + (double)q[3] * q[3]);
  return 2 * atan2(s, fabs((double)q[0]));
}

/* avbd_ball_limit.xml for 1 s at 1 ms with the torque tau on the ball and hinge twins (about y), block mode
   `block`, the cone pendulum started tilted 0.5 rad about y and swirling at 8 rad/s about the vertical: the largest
   |θ_ball − φ_hinge| (θ the ball's angle about y, 2·atan2(q_y, q_w)) and off-plane rotation of the ball (|q_x|,
   |q_z|), the largest ball and hinge angles, the cone pendulum's largest rotation angle and the azimuth its rod swept,
   the steps its limit row was active, the unconverged steps */
typedef struct ball_limit_run {
  double dtwin, offplane, maxball, maxhinge, maxcone, sweep, sweeps;
  int active;
  long unconverged;
} ball_limit_run;

static ball_limit_run ball_limit(double tau, int block) {
  rl_pair p;
  rl_data *d;
  rl_avbd_param prm = avbd_load(&p, MODEL("avbd_ball_limit.xml"), 0);
  prm.block = block;
  rl_avbd *am = build_prm(p.m, &prm);
  d = rl_data_alloc(p.m);
  d->ctrl[0] = d->ctrl[1] = (real)tau;
  /* the cone pendulum: q = (cos 0.25, 0, sin 0.25, 0), body-frame ω = Rᵀ(0, 0, 8) */
  real *qc = d->qpos + 5, *wc = d->qvel + 4;
  qc[0] = (real)cos(0.25), qc[1] = 0, qc[2] = (real)sin(0.25), qc[3] = 0;
  wc[0] = (real)(-8 * sin(0.5)), wc[1] = 0, wc[2] = (real)(8 * cos(0.5));
  rl_avbd_from_generalized(am, p.m, d);
  ball_limit_run r = {0};
  int cone = -1;
  for (int k = 0; k < am->nmdof; k++)
    if (am->mdof[k].jnt == 2) cone = k;
  cr_assert_geq(cone, 0);
  double az0 = 0, azp = 0, az = 0;
  for (int k = 0; k < 1000; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    const real *qb = d->qpos;
    double tb = 2 * atan2((double)qb[2], (double)qb[0]);
    r.dtwin = fmax(r.dtwin, fabs(tb - (double)d->qpos[4]));
    r.offplane = fmax(r.offplane, fmax(fabs((double)qb[1]), fabs((double)qb[3])));
    r.maxball = fmax(r.maxball, quat_angle(qb));
    r.maxhinge = fmax(r.maxhinge, fabs((double)d->qpos[4]));
    r.maxcone = fmax(r.maxcone, quat_angle(qc));
    r.active += am->row[am->mdof[cone].lim_row].lambda < 0;
    r.unconverged += !am->stat.converged;
    r.sweeps += am->stat.iterations / 1000.0;
    /* the cone rod's direction R(q)·(0, 0, −1): its azimuth about z, unwrapped */
    double w = qc[0], x = qc[1], y = qc[2], z = qc[3];
    double a = atan2(-2 * (y * z - w * x), -2 * (x * z + w * y));
    if (k == 0) az0 = azp = az = a;
    double da = a - azp;
    da -= 2 * M_PI * floor((da + M_PI) / (2 * M_PI));
    az += da;
    azp = a;
  }
  r.sweep = fabs(az - az0);
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
  return r;
}

/* A ball joint's cone limit and friction loss (avbd_ball_limit.xml).  Torque 0.04 N m about y, below the friction
   loss 0.05: the ball and hinge twins hold (their angles stay within the stopping tolerance per step × steps).  Torque
   2 N m: both slip to their limit at 0.6 rad and stay there, the ball's motion in the x–z plane equal to the hinge's
   (the same rows on the same angle).  The cone pendulum, swirling around the vertical, presses into its cone and
   slides along the rim: its rotation angle never exceeds 0.6 rad beyond the tolerance while its rod sweeps the
   azimuth. */
Test(avbd, ball_cone_limit_and_friction_as_hinge) {
  for (int block = 0; block < 2; block++) {
    int bm = block ? RL_AVBD_BLOCK_ARTICULATION : RL_AVBD_BLOCK_BODY;
    ball_limit_run h = ball_limit(0.04, bm), s = ball_limit(2, bm);
    printf(
        "avbd ball cone limit and friction (%s, %s blocks), 1 s at 1 ms: torque 0.04 < friction 0.05: ball %.2e rad, "
        "hinge %.2e rad; torque 2: ball max %.9f rad, hinge max %.9f rad (limit 0.6), |ball − hinge| %.2e rad, "
        "off-plane %.1e; cone pendulum max angle %.9f rad, azimuth swept %.2f rad, limit active %d/1000 steps; "
        "unconverged %ld + %ld, %.1f + %.1f sweeps/step\n",
        RL_PREC_NAME, block ? "articulation" : "body", h.maxball, h.maxhinge, s.maxball, s.maxhinge, s.dtwin,
        s.offplane, s.maxcone, s.sweep, s.active, h.unconverged, s.unconverged, h.sweeps, s.sweeps);
    cr_expect_leq(h.maxball, TOL(1e-5, 5e-3), "the friction loss should hold the ball");
    cr_expect_leq(h.maxhinge, TOL(1e-5, 5e-3));
    cr_expect_geq(s.maxball, 0.6 - 1e-3, "the ball should reach its cone");
    cr_expect_leq(s.maxball - 0.6, TOL(1e-6, 1e-4));
    cr_expect_leq(s.maxhinge - 0.6, TOL(1e-6, 1e-4));
    cr_expect_leq(s.dtwin, TOL(1e-4, 1e-2), "the planar ball should follow the hinge");
    cr_expect_leq(s.offplane, TOL(1e-8, 1e-4));
    cr_expect_leq(s.maxcone - 0.6, TOL(1e-6, 1e-4), "the cone limit should hold off the plane");
    cr_expect_gt(s.sweep, 1.0, "the cone pendulum should slide around its rim");
    cr_expect_gt(s.active, 500);
  }
}

/* A fixed overlap (tests/public/panda_like.xml from qpos0: the base capsule and the first link's overlap by 0.107 m
   along the first hinge's axis, which no joint motion changes; MuJoCo keeps the overlap): AVBD leaves the contact out
   (avbd_fixed_gap: its normal force does no work) instead of pushing it out against the hinge, which diverged (qpos
   1e6 after 2 s, every step unconverged).  0.3 s with articulation blocks: the arm stays near qpos0, the joints closed, the overlap held. */
Test(avbd, fixed_overlap_held_not_pushed_out) {
  real q[32];
  double an, it;
  run_block = RL_AVBD_BLOCK_ARTICULATION;
  avbd_run_stop(SRCDIR "/tests/public/panda_like.xml", 2e-3, 0.3, RL_AVBD_STOP_DISTANCE, q, &an, NULL, &it);
  run_block = -1;
  double qmax = 0;
  for (int i = 0; i < 7; i++) qmax = fmax(qmax, fabs((double)q[i]));
  printf("avbd panda_like (%s) 0.3 s from qpos0: max |arm joint| %.3f rad, anchor %.1e m, %.1f sweeps/step, %ld of "
         "150 steps unconverged\n", RL_PREC_NAME, qmax, an, it, run_unconverged);
  cr_expect_lt(qmax, 0.3, "the arm should stay near qpos0 (servos at 0)");
  cr_expect_leq(an, TOL(1e-6, 1e-4));
  cr_expect_leq(run_unconverged, 75);
}

/* STEPS AVBD steps of MODEL (contacts off if NOCONTACT) from qpos0 in articulation blocks: *unconverged ← the steps
   that ended unconverged, *anchor ← the largest anchor error, *sweeps ← the mean sweeps per step; returns the largest
   |qpos| at the end */
static double articulation_run(const char *model, int nocontact, int steps, long *unconverged, double *anchor,
                               double *sweeps) {
  rl_pair p;
  rl_data *d;
  rl_avbd_param prm = avbd_load(&p, model, 0);
  if (nocontact) p.m->opt.disableflags |= RL_DSBL_CONTACT;
  prm.block = RL_AVBD_BLOCK_ARTICULATION;
  rl_avbd *am = avbd_start(&p, &prm, &d);
  cr_assert_gt(am->nloop, 0);
  long it = 0;
  *unconverged = 0;
  *anchor = 0;
  for (int k = 0; k < steps; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    *anchor = fmax(*anchor, am->stat.anchor_err);
    it += am->stat.iterations;
    *unconverged += !am->stat.converged;
  }
  *sweeps = (double)it / steps;
  double qmax = 0;
  for (int i = 0; i < p.m->nq; i++) qmax = fmax(qmax, fabs((double)d->qpos[i]));
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
  return qmax;
}

/* Loops inside an articulation (tests/public/cassie_like.xml, contacts off: in each leg a connect equality closes
   the four-bar between shin, tarsus and heel spring, and a spatial tendon couples the knee to the foot, all between
   bodies of the one articulation the floating pelvis roots).  Seen body by body (block Jacobi beside the tree
   solve) the connect and tendon rows together drove the legs apart (anchor 0.5 m, qpos 1e6 within 0.1 s); in the
   block with their coupling exact (Sherman–Morrison–Woodbury on the tree factor) 100 steps from qpos0 all
   converge with the loops closed. */
Test(avbd, loops_in_an_articulation_solved_exactly) {
  long unconverged;
  double an, sweeps;
  double qmax = articulation_run(SRCDIR "/tests/public/cassie_like.xml", 1, 100, &unconverged, &an, &sweeps);
  printf("avbd cassie_like loops in the articulation block (%s), contacts off, 100 steps: %ld unconverged, anchor "
         "%.1e m, %.1f sweeps/step, max |qpos| %.2f\n", RL_PREC_NAME, unconverged, an, sweeps, qmax);
  cr_expect_eq(unconverged, 0);
  cr_expect_leq(an, TOL(1e-8, 1e-4));
  cr_expect_lt(qmax, 3);
}

/* Loops closed through coordinate rows (tests/public/robotiq_like.xml from qpos0: in each finger a connect equality
   closes the four-bar between follower and coupler, a joint equality ties the two drivers, an actuator drives them
   through a fixed tendon over both).  With the bodies those rows read taken out of the articulation, the rows
   coupled separate blocks and converged as a slow dual ascent (495 sweeps/step, every step unconverged); with the
   bodies kept in their articulation and the rows exact in the block's Woodbury step, 50 steps (0.1 s) all converge
   with the loops closed.  (Single precision keeps the former split, AVBD_COORD_LOOPS; its looser tolerance is met.) */
Test(avbd, coordinate_row_loops_in_an_articulation_converge) {
  long unconverged;
  double an, sweeps;
  articulation_run(SRCDIR "/tests/public/robotiq_like.xml", 0, 50, &unconverged, &an, &sweeps);
  printf("avbd robotiq_like loops through coordinate rows in the articulation block (%s), 50 steps: %ld unconverged, "
         "anchor %.1e m, %.1f sweeps/step\n", RL_PREC_NAME, unconverged, an, sweeps);
  cr_expect_eq(unconverged, 0);
  cr_expect_leq(an, TOL(1e-6, 1e-4));
  cr_expect_leq(sweeps, 100);
}

/* Coordinate rows alone hold a three-link arm's elbow and wrist straight (avbd_coord_rows.xml: a joint equality
   j2 = 1.5·j3 and a spatial tendon's length held at its qpos0 value); the exact motion is the rigid arm's
   (avbd_coord_rows_rigid.xml, the smooth engine at RK4 0.1 ms).  Error: max(|j1 − j1_rigid|, |j2|, |j3|) at
   0.5 s; AVBD converges to it at order 1. */
Test(avbd, coordinate_rows_converge_to_rigid_arm_first_order) {
  const double hs[4] = {4e-3, 2e-3, 1e-3, 5e-4}, T = 0.5;
  real ref[4], q[4];
  smooth_ref(MODEL("avbd_coord_rows_rigid.xml"), T, ref);
  double lx[4], ly[4];
  printf("avbd coordinate rows vs the rigid arm (%s), T = %.1f s:", RL_PREC_NAME, T);
  for (int i = 0; i < 4; i++) {
    double an, it;
    avbd_run_stop(MODEL("avbd_coord_rows.xml"), hs[i], T, RL_AVBD_STOP_DISTANCE, q, &an, NULL, &it);
    double e = fmax(fabs((double)q[0] - ref[0]), fmax(fabs((double)q[1]), fabs((double)q[2])));
    printf(" h=%.1e err=%.3e (j1 %.4f, j2 %.1e, j3 %.1e; %.1f sweeps/step);", hs[i], e, (double)q[0], (double)q[1],
           (double)q[2], it);
    lx[i] = log(hs[i]);
    ly[i] = log(e);
  }
  int nfit = TOL(4, 2);
  double sx = 0, sy = 0, num = 0, den = 0;
  for (int i = 0; i < nfit; i++) {
    sx += lx[i];
    sy += ly[i];
  }
  for (int i = 0; i < nfit; i++) {
    num += (lx[i] - sx / nfit) * (ly[i] - sy / nfit);
    den += (lx[i] - sx / nfit) * (lx[i] - sx / nfit);
  }
  printf(" fitted order %.3f (rigid j1 %.4f)\n", num / den, (double)ref[0]);
  /* articulation blocks: the rows are loop rows of the arm's block (avbd_tree_build), solved exactly in its step
     (single precision: the bodies the rows read leave the articulation instead, AVBD_COORD_LOOPS) */
  double eb = exp(ly[1]);
  run_block = RL_AVBD_BLOCK_ARTICULATION;
  double an, it;
  avbd_run_stop(MODEL("avbd_coord_rows.xml"), hs[1], T, RL_AVBD_STOP_DISTANCE, q, &an, NULL, &it);
  run_block = -1;
  double ea = fmax(fabs((double)q[0] - ref[0]), fmax(fabs((double)q[1]), fabs((double)q[2])));
  printf("  articulation blocks, h = 2 ms: err %.3e (body blocks %.3e), %.1f sweeps/step, %ld unconverged\n", ea, eb, it,
         run_unconverged);
  cr_expect_leq(fabs(ea - eb), 0.05 * eb, "articulation and body blocks solve the same steps");
  cr_expect_eq(run_unconverged, 0);
  cr_expect(fabs((double)ref[0]) > 0.5, "the arm should swing");
  cr_expect(num / den > TOL(0.8, 0.5) && num / den < TOL(1.3, 1.6), "order %.3f", num / den);
}

/* Tendon length limits hold (avbd_tendon_limits.xml): a ball thrown sideways on a 0.3 m string (spatial tendon,
   range 0..0.3) and a pendulum stopped at j = 0.5 by its fixed tendon 2·j ≤ 1.  Over 1 s at 2 ms, in block mode
   `block`: the string becomes taut and never stretches beyond the tolerance, the pendulum never passes its stop.
   The stop's ρ₀ is scaled by the inertia along L = 2j (I/4): scaled by I, as before, the articulation blocks
   cycled on and off the stop (11 of 500 steps at the budget, the stop passed by 6.9e-5 rad). */
static void tendon_limits_run(int block) {
  rl_pair p;
  rl_data *d;
  rl_avbd_param prm = avbd_load(&p, MODEL("avbd_tendon_limits.xml"), 2e-3);
  prm.block = block;
  rl_avbd *am = avbd_start(&p, &prm, &d);
  d->qvel[0] = 1; /* the ball's sideways throw */
  rl_avbd_from_generalized(am, p.m, d);
  double lmax = 0, jmax = -1;
  int taut = 0;
  for (int k = 0; k < 500; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    rl_fwd_position(p.m, d);
    lmax = fmax(lmax, (double)d->ten_length[0]);
    jmax = fmax(jmax, (double)d->qpos[7]);
    taut += d->ten_length[0] > 0.3 - 1e-4;
  }
  printf("avbd tendon limits (%s, %s blocks), 1 s: string length max %.9f (limit 0.3, excess %.2e m; taut %d of 500 "
         "steps), pendulum max %.9f (stop 0.5, excess %.2e rad)\n",
         RL_PREC_NAME, block ? "articulation" : "body", lmax, lmax - 0.3, taut, jmax, jmax - 0.5);
  cr_expect_gt(taut, 100, "the string should be taut for a good part of the run");
  cr_expect_leq(lmax - 0.3, TOL(1e-6, 1e-4));
  cr_expect_leq(jmax - 0.5, TOL(1e-6, 1e-4));
  cr_expect_gt(jmax, 0.49, "the pendulum should reach its stop");
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

Test(avbd, tendon_limits_hold) {
  tendon_limits_run(RL_AVBD_BLOCK_BODY);
  tendon_limits_run(RL_AVBD_BLOCK_ARTICULATION);
}

/* ------------------------------------------------------------ mass ratio, limits, dry friction */

/* 50-link chain, 1 g links and a 50 kg last link (50 000:1), 1 s at h = 1 ms */
Test(avbd, chain50_mass_ratio_anchor_error) {
  real q[128];
  double an, it;
  long ex;
  avbd_run(MODEL("avbd_chain50.xml"), 1e-3, 1.0, q, &an, &ex, &it);
  printf(
      "avbd chain50 50000:1 (%s), 1000 steps at 1 ms: max anchor error %.3e m, %.1f sweeps/step, %ld budget-exhausted "
      "steps\n",
      RL_PREC_NAME, an, it, ex);
  /* with the supported-mass penalty scale (avbd_row_scales): measured 4.3e-9 m f64 (alpha_joint 0.5; 4.3e-8
     at 0.95) / 1.5e-6 m f32 — no visible stretching; most steps still use the whole sweep budget (the angle
     rows' residual stays ~5e-5 rad, the light links' rotation updates ~3e-8 rad per sweep), which is
     reported, not asserted */
  cr_expect_leq(an, TOL(1e-6, 3e-6));
}

/* hinge hits its upper limit (0.5 rad) at 8 rad/s in zero gravity: the limit holds (violation beyond
   the stabilized residual ≤ tolerance), the joint stops, and never crosses the lower limit */
Test(avbd, joint_limit_hit_at_speed) {
  rl_pair p;
  load(&p, MODEL("avbd_limit.xml"), NULL);
  rl_avbd *am = build(p.m);
  rl_data *d = rl_data_alloc(p.m);
  d->qvel[0] = 8;
  rl_avbd_from_generalized(am, p.m, d);
  double qmax = -1, qmin = 1, vend = 0;
  long exhausted = 0;
  for (int k = 0; k < 500; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    qmax = fmax(qmax, d->qpos[0]);
    qmin = fmin(qmin, d->qpos[0]);
    vend = d->qvel[0];
    exhausted += !am->stat.converged;
  }
  printf("avbd limit at 8 rad/s (%s): max q %.9f (limit 0.5, violation %.3e rad), min q %.4f, final qvel %.3e, "
         "%ld budget-exhausted steps\n",
         RL_PREC_NAME, qmax, qmax - 0.5, qmin, vend, exhausted);
  cr_expect_leq(qmax - 0.5, TOL(1e-6, 1e-4));
  cr_expect_geq(qmin, -0.5);
  /* at rest on the limit up to velocity noise ~ tol/h (f32: tol_ang 5e-6 rad per 1 ms step) */
  cr_expect_leq(fabs(vend), TOL(1e-4, 2e-2), "the joint should rest on its limit (inelastic)");
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* avbd_limit_margin (see the model): a slide, a hinge, a ball cone and a fixed tendon each rest on the upper end of
   their range with a limit margin; MuJoCo's limit row has its zero the margin inside the range, so after 3 s the
   hard limits hold at 0.45 m, 0.4 rad, a 0.5 rad tilt and 0.25 m.  Without the margin AVBD held them at the range
   (0.5, 0.5, 0.6, 0.3).  f32: a limit row at rest keeps the steady gap tol/(1 − α) of the stabilization (measured
   1.1e-5 m, 1.9e-4 rad, with and without the margin). */
Test(avbd, limits_hold_their_margin_inside_the_range) {
  rl_pair p;
  rl_data *d;
  rl_avbd *am = avbd_open(&p, MODEL("avbd_limit_margin.xml"), 0, &d);
  for (int k = 0; k < 1500; k++) cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
  const real *q = d->qpos;
  double tilt = 2 * atan2(sqrt(q[3] * q[3] + q[4] * q[4] + q[5] * q[5]), q[2]);
  printf("avbd limits with margin (%s): slide %.9f m (0.45), hinge %.9f rad (0.4), ball tilt %.9f rad (0.5), tendon "
         "%.9f m (0.25)\n",
         RL_PREC_NAME, (double)q[0], (double)q[1], tilt, (double)q[6]);
  cr_expect_leq(fabs(q[0] - 0.45), TOL(1e-6, 1e-4), "slide %.9f", (double)q[0]);
  cr_expect_leq(fabs(q[1] - 0.4), TOL(1e-6, 5e-4), "hinge %.9f", (double)q[1]);
  cr_expect_leq(fabs(tilt - 0.5), TOL(1e-6, 5e-4), "ball tilt %.9f", tilt);
  cr_expect_leq(fabs(q[6] - 0.25), TOL(1e-6, 1e-4), "tendon %.9f", (double)q[6]);
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* pendulum released 60° from hanging, gravity torque 1.2744 N m: frictionloss 1.5 holds it (drift over
   1 s below tolerance), frictionloss 1.0 lets it slip */
static double dry_run_q(const char *model, real frictionloss, double *resid, double *q) {
  rl_pair p;
  load(&p, model, NULL);
  if (p.m->ntendon > 0) p.m->tendon_frictionloss[0] = frictionloss;
  else p.m->dof_frictionloss[0] = frictionloss;
  rl_avbd *am = build(p.m);
  rl_data *d = rl_data_alloc(p.m);
  rl_avbd_from_generalized(am, p.m, d);
  real q0 = d->qpos[0];
  double r = 0;
  for (int k = 0; k < 1000; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    r = fmax(r, am->stat.dry_residual);
    if (q) q[k] = (double)d->qpos[0];
  }
  double drift = fabs((double)d->qpos[0] - q0);
  *resid = r;
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
  return drift;
}

static double dry_run(real frictionloss, double *resid) { return dry_run_q(MODEL("avbd_dry.xml"), frictionloss, resid, NULL); }

Test(avbd, dry_friction_holds_below_budget_slips_above) {
  double r1, r2;
  double hold = dry_run((real)1.5, &r1), slip = dry_run((real)1.0, &r2);
  printf("avbd dry friction (%s), gravity torque 1.2744 N m: budget 1.5 -> drift %.3e rad (r_f %.1e); budget 1.0 -> "
         "moved %.3f rad (r_f %.1e)\n",
         RL_PREC_NAME, hold, r1, slip, r2);
  /* Δφ is measured from each step's start, so a stuck joint drifts by at most the per-step
     tolerance: 1000 steps × tol_ang (1e-8 f64, 5e-6 f32) */
  cr_expect_leq(hold, TOL(5e-5, 1e-2));
  cr_expect_gt(slip, 20 * hold);
  cr_expect_geq(slip, 0.1);
}

/* A tendon's friction loss is a bounded-force row on its length: on L = 2φ, friction F holds the pendulum as a joint
   friction 2F does (F = 0.75: budget 1.5 N m above the gravity torque 1.2744) and lets it slip as 2F does
   (F = 0.5); the trajectories agree with the joint-friction ones to the stopping tolerance. */
Test(avbd, tendon_friction_loss_acts_as_joint_friction) {
  double *qt = calloc(1000, sizeof(double)), *qj = calloc(1000, sizeof(double));
  static const double F[2] = {0.75, 0.5};
  for (int c = 0; c < 2; c++) {
    double rt, rj;
    double mt = dry_run_q(MODEL("avbd_dry_tendon.xml"), (real)F[c], &rt, qt);
    double mj = dry_run_q(MODEL("avbd_dry.xml"), (real)(2 * F[c]), &rj, qj);
    double e = 0;
    for (int k = 0; k < 1000; k++) e = fmax(e, fabs(qt[k] - qj[k]));
    printf("avbd tendon friction loss (%s), L = 2·hinge, F = %.2f: moved %.3e rad (joint friction %.2f: %.3e), max "
           "|q_tendon − q_joint| %.2e rad over 1 s, r_f %.1e\n",
           RL_PREC_NAME, F[c], mt, 2 * F[c], mj, e, rt);
    if (c == 0) cr_expect_leq(mt, TOL(5e-5, 1e-2), "F = 0.75 should hold the pendulum");
    else cr_expect_geq(mt, 0.1, "F = 0.5 should let it slip");
    /* f32: a step may stop with the stick still slipping at the angle tolerance 5e-6 rad (articulation blocks:
       the joint version creeps 4.9e-6 rad per step, the tendon version 2.4e-6), up to 1000·5e-6 over 1 s */
    cr_expect_leq(e, TOL(1e-5, 5e-3), "tendon and joint friction should give one motion");
  }
  free(qt);
  free(qj);
}

/* Friction loss 0.5 N on all three spatial tendons of avbd_spatial_tendon.xml (a wrapped flexor, a two-branch pulley
   cable under a motor and a servo, a box hanging on a spring tendon), articulation blocks, 0.3 s: every step
   converges and every row's penalty stays a penalty (ρ ≥ 0: the friction rows had no storage of their own and
   overlapped the next rows — 69 of 151 steps at the budget, ρ < 0 on a row). */
Test(avbd, spatial_tendon_friction_loss_converges) {
  rl_pair p;
  rl_data *d;
  rl_avbd_param prm = avbd_load(&p, MODEL("avbd_spatial_tendon.xml"), 0);
  for (int t = 0; t < p.m->ntendon; t++) p.m->tendon_frictionloss[t] = (real)0.5;
  prm.block = RL_AVBD_BLOCK_ARTICULATION;
  rl_avbd *am = avbd_start(&p, &prm, &d);
  long unconverged = 0, it = 0, n = lround(0.3 / (double)p.m->opt.timestep);
  for (long k = 0; k < n; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    it += am->stat.iterations;
    unconverged += !am->stat.converged;
  }
  int bad = 0;
  for (int r = 0; r < am->nrow; r++) bad += !(am->row[r].rho >= 0 && am->row[r].rho < (real)1e30);
  printf("avbd spatial tendon friction loss (%s), 3 tendons, %ld steps: %ld unconverged, %.1f sweeps/step\n", RL_PREC_NAME,
         n, unconverged, (double)it / (double)n);
  cr_expect_eq(bad, 0, "%d rows with a penalty that is not one", bad);
  cr_expect_leq(unconverged, TOL(0, 5));
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* ------------------------------------------------------------------------ contacts */

/* The push-out rule of a contact's normal row: a cube set into the floor by p (own ground contacts, 4 corners, at
   rest, gravity pressing it down, so the row ends the step on its target) rises in one step to the depth
   p − (1 − α)·max(p − s, 0), s the slop: a penetration within the slop is kept as it is, 1 − α of the rest pushed
   out (a rule that pushed out every penetration would lift the cube by (1 − α)p also at p < s). */
Test(avbd, penetration_beyond_the_slop_is_pushed_out) {
  const double depth[2] = {1e-3, 0.5}; /* metres; the second a fraction of the slop */
  for (int k = 0; k < 2; k++) {
    rl_pair p;
    rl_data *d;
    rl_avbd *am = avbd_open(&p, MODEL("avbd_box.xml"), 0, &d);
    double a = (double)am->prm.alpha, s = (double)am->prm.slop, p0 = k ? depth[k] * s : depth[k];
    cr_expect_leq(fabs(s / TOL(1e-7, 1e-6) - 1), 1e-6, "the documented default slop: %g", s);
    d->qpos[2] = (real)(0.05 - p0);
    rl_avbd_from_generalized(am, p.m, d);
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    double p1 = 0.05 - (double)d->qpos[2], want = p0 - (1 - a) * fmax(p0 - s, 0);
    printf("avbd push-out (%s): cube set %.3e m into the floor (slop %.1e m, alpha %.2f): %.6e m after one step, "
           "rule %.6e m (converged %d)\n",
           RL_PREC_NAME, p0, s, a, p1, want, am->stat.converged);
    cr_expect(am->stat.converged);
    cr_expect_leq(fabs(p1 - want), TOL(2e-9, 2e-7), "depth %.6e m, rule %.6e m", p1, want);
    rl_data_free(d);
    rl_avbd_free(am);
    rl_pair_free(&p);
  }
}

/* a cube resting on the floor (own ground contacts: 4 corners) for 2 s */
Test(avbd, box_rests_on_ground) {
  rl_pair p;
  rl_data *d;
  rl_avbd *am = avbd_open(&p, MODEL("avbd_box.xml"), 0, &d);
  double pen = 0, kkt = 0;
  long exhausted = 0;
  for (int k = 0; k < 2000; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    pen = fmax(pen, am->stat.penetration);
    kkt = fmax(kkt, fmax(am->stat.kkt_cone, am->stat.kkt_normal_sign));
    exhausted += !am->stat.converged;
  }
  double v = 0;
  for (int i = 0; i < 6; i++) v = fmax(v, fabs(d->qvel[i]));
  printf("avbd box on ground (%s), 2 s: z %.9f (0.05), max penetration %.3e m, final |qvel| %.3e, %d contacts, "
         "cone/sign violation %.1e, %ld budget-exhausted steps\n",
         RL_PREC_NAME, d->qpos[2], pen, v, am->stat.ncon, kkt, exhausted);
  cr_expect_leq(fabs(d->qpos[2] - 0.05), TOL(1e-6, 1e-4));
  cr_expect_leq(fabs(d->qpos[0]) + fabs(d->qpos[1]), TOL(1e-9, 1e-5));
  cr_expect_leq(v, TOL(1e-6, 1e-3));
  cr_expect_eq(am->stat.ncon, 4);
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* a block on a 20° incline, μ = 0.7 > tan 20°: static friction holds it (no creep over 2 s) */
Test(avbd, incline_sticks) {
  rl_pair p;
  rl_data *d;
  rl_avbd *am = avbd_open(&p, SCENE("incline.xml"), 0, &d);
  real x0[3];
  memcpy(x0, d->qpos, sizeof x0);
  long exhausted = 0;
  for (int k = 0; k < 1000; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    exhausted += !am->stat.converged;
  }
  double dx = fabs((double)d->qpos[0] - x0[0]) + fabs((double)d->qpos[1] - x0[1]);
  printf("avbd incline (%s), 2 s at 2 ms: downhill creep %.3e m, %d contacts, stick friction KKT cone %.1e, %ld "
         "budget-exhausted steps\n",
         RL_PREC_NAME, dx, am->stat.ncon, am->stat.kkt_cone, exhausted);
  cr_expect_leq(dx, TOL(1e-6, 1e-4));
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* ------------------------------------------------------------------------ microduck */

/* the microduck at h = 1 ms in AVBD from its initial state (ctrl = 0: standing on its servos), with the
   default parameters under the update stopping test (update_stop) changed by SET (NULL: none) */
static rl_avbd *microduck_1ms_with(rl_pair *p, rl_data **d, void (*set)(rl_avbd_param *, real), real v) {
  rl_avbd_param prm = avbd_load(p, SCENE("microduck.xml"), 1e-3);
  update_stop(&prm);
  if (set) set(&prm, v);
  return avbd_start(p, &prm, d);
}
static rl_avbd *microduck_1ms(rl_pair *p, rl_data **d) { return microduck_1ms_with(p, d, NULL, 0); }

/* standing on its position servos (ctrl = 0) for 10 s at h = 1 ms */
Test(avbd, microduck_stands_10s, .timeout = 600) {
  rl_pair p;
  rl_data *d;
  rl_avbd *am = microduck_1ms(&p, &d);
  double an = 0, ax = 0, pen = 0, it = 0;
  int maxit = 0;
  for (int k = 0; k < 10000; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    an = fmax(an, am->stat.anchor_err);
    ax = fmax(ax, am->stat.axis_err);
    pen = fmax(pen, am->stat.penetration);
    it += am->stat.iterations;
    if (am->stat.iterations > maxit) maxit = am->stat.iterations;
  }
  printf("avbd microduck (%s) 10 s at 1 ms: trunk z %.5f, max anchor error %.3e m, max axis error %.3e rad, max "
         "penetration %.3e m, %.1f sweeps/step (max %d), %ld of %ld steps budget-exhausted, %d contacts, %d colors\n",
         RL_PREC_NAME, d->qpos[2], an, ax, pen, it / 10000, maxit, am->exhausted, am->steps, am->stat.ncon,
         am->stat.ncolor);
  cr_expect_leq(an, TOL(1e-6, 1e-5));
  cr_expect_eq(am->exhausted, 0);
  cr_expect_gt(d->qpos[2], 0.25, "fell");
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* Contact projection onto joints: the microduck standing still on its PD servos (ctrl = 0, 1 s at 1 ms) is in
   static balance, so on every hinge the reported loads carry the gravity load of the subtree:
   servo + limit + friction + contact + axial = qfrc_bias (rl_rne at the AVBD pose, independent of
   the AVBD rows).  The residual left is the inertial/damping load of the remaining motion and the multipliers'
   distance to convergence: f64 9.2e-6 N m (0.03 % of max |rne|; body blocks 4.6e-5); f32 2.7e-3 N m (7.8 %, on
   head_pitch, which carries no contact: its dry-friction multiplier where the step stops at the f32 angle tolerance
   5e-6 rad, 3 sweeps/step; body blocks 7.2e-4 N m at 10.7 sweeps/step); without the contact term it is
   4.2e-2 N m. */
Test(avbd, microduck_joint_loads_balance_gravity, .timeout = 300) {
  rl_pair p;
  rl_data *d;
  rl_avbd *am = microduck_1ms(&p, &d);
  for (int k = 0; k < 1000; k++) cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
  rl_kinematics(p.m, d);
  rl_com_pos(p.m, d);
  rl_com_vel(p.m, d);
  rl_rne(p.m, d);
  double rmax = 0, gmax = 0, cmax = 0, rnoc = 0, vmax = 0;
  int nh = 0;
  for (int j = 0; j < am->njoint; j++) {
    const rl_avbd_joint *jt = am->joint + j;
    if (jt->kind != RL_AVBD_HINGE) continue;
    const rl_avbd_load *L = am->load + j;
    int dof = p.m->jnt_dofadr[jt->jnt];
    double bias = d->qfrc_bias[dof], sum = L->servo + L->limit + L->friction + L->axial;
    printf("  %-12s servo %8.4f limit %8.4f friction %8.4f contact %8.4f axial %9.2e | rne %8.4f residual %9.2e\n",
           rl_model_name(p.m, p.m->name_jntadr[jt->jnt]), L->servo, L->limit, L->friction, L->contact, L->axial, bias,
           sum + L->contact - bias);
    rmax = fmax(rmax, fabs(sum + L->contact - bias));
    rnoc = fmax(rnoc, fabs(sum - bias));
    gmax = fmax(gmax, fabs(bias));
    cmax = fmax(cmax, fabs(L->contact));
    vmax = fmax(vmax, fabs(d->qvel[dof]));
    nh++;
  }
  printf(
      "avbd microduck joint loads (%s, %d hinges, t = 1 s): max |servo + limit + friction + contact + axial - rne| "
      "%.3e N m (without contact %.3e), max |rne| %.4f, max |contact| %.4f N m, max |qvel| %.1e rad/s, %d contacts\n",
      RL_PREC_NAME, nh, rmax, rnoc, gmax, cmax, vmax, am->stat.ncon);
  cr_expect_gt(nh, 0);
  cr_expect_gt(cmax, 0.1 * gmax, "contacts carry no joint load");
  cr_expect_leq(rmax, TOL(1e-2, 1e-1) * gmax);
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* Contact projection onto joints, analytic: avbd_arm_press at rest (1 s).  The shoulder carries no servo, limit or
   friction, so its contact load is minus the gravity torque of the whole arm about the shoulder axis,
   −Σ m_i g (x_i − p)_x from the AVBD body poses; the elbow's servo + contact loads balance the forearm's.
   Through the tree: the contact is on the forearm, two bodies below the shoulder. */
Test(avbd, arm_press_contact_load_balances_gravity) {
  rl_pair p;
  rl_data *d;
  rl_avbd_param prm = avbd_load(&p, MODEL("avbd_arm_press.xml"), 0);
  prm.contacts = RL_AVBD_CONTACTS_GROUND; /* the press only: the links could touch each other, so not the default */
  rl_avbd *am = avbd_start(&p, &prm, &d);
  for (int k = 0; k < 500; k++) cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
  cr_assert_eq(am->njoint, 2);
  double worst = 0, ref[2];
  for (int j = 0; j < 2; j++) {
    const rl_avbd_joint *jt = am->joint + j;
    const rl_avbd_pose *B = am->pose + jt->b;
    double px = B->x[0] + B->R[0] * jt->rB[0] + B->R[1] * jt->rB[1] + B->R[2] * jt->rB[2], tg = 0;
    for (int s = jt->b; s < am->nb; s++) tg += am->mass[s] * 9.81 * (am->pose[s].x[0] - px); /* subtree: slots ≥ b */
    const rl_avbd_load *L = am->load + j;
    double sum = L->servo + L->limit + L->friction + L->contact + L->axial;
    ref[j] = -tg;
    worst = fmax(worst, fabs(sum + tg) / tg);
    printf(
        "avbd arm_press (%s) %-8s: contact %.5f N m, servo %.5f, axial %.1e, gravity %.5f: |sum + gravity| / gravity "
        "%.2e\n",
        RL_PREC_NAME, rl_model_name(p.m, p.m->name_jntadr[jt->jnt]), L->contact, L->servo, L->axial, tg,
        fabs(sum + tg) / tg);
  }
  /* measured |sum + gravity| / gravity: f64 6.5e-6 (shoulder), f32 2.8e-3 (shoulder; not analysed further) */
  cr_expect_leq(fabs(am->load[0].contact - ref[0]), TOL(1e-4, 1e-2) * fabs(ref[0]));
  cr_expect_leq(worst, TOL(1e-4, 1e-2));
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* ======================================================= references (GSL ODE, dense KKT) */

/* least-squares slope of log y vs log x over the first n points (gsl_fit_linear) */
static double fit_order(const double *h, const double *e, int n) {
  double lx[8], ly[8], c0, c1, c00, c01, c11, ss;
  for (int i = 0; i < n; i++) {
    lx[i] = log(h[i]);
    ly[i] = log(e[i]);
  }
  gsl_fit_linear(lx, 1, ly, 1, (size_t)n, &c0, &c1, &c00, &c01, &c11, &ss);
  return c1;
}

/* --- (a) torque-free tumbling body vs GSL rk8pd on Euler's equations + quaternion kinematics */

/* y = (ω_b[3], q[4]) in the COM (principal) frame: I ω̇ = (Iω) × ω, q̇ = ½ q ⊗ (0, ω) */
static int euler_rhs(double t, const double y[], double f[], void *par) {
  (void)t;
  const double *I = par, *w = y, *q = y + 3;
  double L[3] = {I[0] * w[0], I[1] * w[1], I[2] * w[2]};
  f[0] = (L[1] * w[2] - L[2] * w[1]) / I[0];
  f[1] = (L[2] * w[0] - L[0] * w[2]) / I[1];
  f[2] = (L[0] * w[1] - L[1] * w[0]) / I[2];
  f[3] = 0.5 * (-q[1] * w[0] - q[2] * w[1] - q[3] * w[2]);
  f[4] = 0.5 * (q[0] * w[0] + q[2] * w[2] - q[3] * w[1]);
  f[5] = 0.5 * (q[0] * w[1] - q[1] * w[2] + q[3] * w[0]);
  f[6] = 0.5 * (q[0] * w[2] + q[1] * w[1] - q[2] * w[0]);
  return GSL_SUCCESS;
}

static void qrot(double r[3], const double q[4], const double v[3]) { /* R(q) v, q unit */
  double w = q[0], x = q[1], y = q[2], z = q[3];
  double R[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                 2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                 2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
  for (int i = 0; i < 3; i++) r[i] = R[3 * i] * v[0] + R[3 * i + 1] * v[1] + R[3 * i + 2] * v[2];
}

/* world energy and angular momentum of slot s of am (L = I_w ω, I_w = R diag(I) Rᵀ) */
static void avbd_EL(const rl_avbd *am, int s, double *E, double L[3]) {
  const real *R = am->pose[s].R, *I = am->inertia + 3 * s, *w = am->vel + 6 * s + 3;
  double wb[3];
  for (int i = 0; i < 3; i++) wb[i] = (double)R[i] * w[0] + (double)R[3 + i] * w[1] + (double)R[6 + i] * w[2];
  *E = 0;
  for (int i = 0; i < 3; i++) *E += 0.5 * I[i] * wb[i] * wb[i];
  for (int i = 0; i < 3; i++)
    L[i] = R[3 * i] * I[0] * wb[0] + R[3 * i + 1] * I[1] * wb[1] + R[3 * i + 2] * I[2] * wb[2];
}

Test(avbd, tumbling_energy_momentum_vs_gsl_rk8pd) {
  const double hs[4] = {4e-3, 2e-3, 1e-3, 5e-4}, T = 1.0;
  double eE[4], eL[4], eR[4], Eref = 0, Lref[3] = {0, 0, 0};
  for (int k = 0; k < 4; k++) {
    rl_pair p;
    load(&p, SCENE("tumbling.xml"), NULL);
    cr_assert_gt(p.mjm->nkey, 0);
    p.m->opt.timestep = (real)hs[k];
    rl_avbd *am = build(p.m);
    rl_data *d = rl_data_alloc(p.m);
    for (int i = 0; i < p.m->nv; i++) d->qvel[i] = (real)p.mjm->key_qvel[i]; /* keyframe "spin" */
    rl_avbd_from_generalized(am, p.m, d);
    /* reference from the AVBD initial state (COM frame), rk8pd at 1e-12 */
    double I[3] = {am->inertia[0], am->inertia[1], am->inertia[2]}, y[7];
    const real *R = am->pose[0].R, *w = am->vel + 3;
    for (int i = 0; i < 3; i++) y[i] = (double)R[i] * w[0] + (double)R[3 + i] * w[1] + (double)R[6 + i] * w[2];
    for (int i = 0; i < 4; i++) y[3 + i] = am->pose[0].q[i];
    gsl_odeiv2_system sys = {euler_rhs, NULL, 7, I};
    gsl_odeiv2_driver *drv = gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rk8pd, 1e-6, 1e-12, 1e-12);
    double t = 0;
    cr_assert_eq(gsl_odeiv2_driver_apply(drv, &t, T, y), GSL_SUCCESS);
    gsl_odeiv2_driver_free(drv);
    double Lb[3] = {I[0] * y[0], I[1] * y[1], I[2] * y[2]}, qn = 0;
    for (int i = 3; i < 7; i++) qn += y[i] * y[i];
    for (int i = 3; i < 7; i++) y[i] /= sqrt(qn);
    qrot(Lref, y + 3, Lb);
    Eref = 0.5 * (I[0] * y[0] * y[0] + I[1] * y[1] * y[1] + I[2] * y[2] * y[2]);
    long n = lround(T / hs[k]);
    for (long i = 0; i < n; i++) cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    double E, L[3], dL = 0, nL = 0;
    avbd_EL(am, 0, &E, L);
    for (int i = 0; i < 3; i++) {
      dL += (L[i] - Lref[i]) * (L[i] - Lref[i]);
      nL += Lref[i] * Lref[i];
    }
    eE[k] = fabs(E - Eref) / Eref;
    eL[k] = sqrt(dL / nL);
    /* attitude error vs the reference: angle of q_avbd q_ref⁻¹ */
    double qa[4] = {am->pose[0].q[0], am->pose[0].q[1], am->pose[0].q[2], am->pose[0].q[3]}, qc[4], qe[4];
    qc[0] = y[3];
    qc[1] = -y[4];
    qc[2] = -y[5];
    qc[3] = -y[6];
    qe[0] = qa[0] * qc[0] - qa[1] * qc[1] - qa[2] * qc[2] - qa[3] * qc[3];
    qe[1] = qa[0] * qc[1] + qa[1] * qc[0] + qa[2] * qc[3] - qa[3] * qc[2];
    qe[2] = qa[0] * qc[2] - qa[1] * qc[3] + qa[2] * qc[0] + qa[3] * qc[1];
    qe[3] = qa[0] * qc[3] + qa[1] * qc[2] - qa[2] * qc[1] + qa[3] * qc[0];
    eR[k] = 2 * atan2(sqrt(qe[1] * qe[1] + qe[2] * qe[2] + qe[3] * qe[3]), fabs(qe[0]));
    rl_data_free(d);
    rl_avbd_free(am);
    rl_pair_free(&p);
  }
  printf("avbd tumbling (%s) vs GSL rk8pd (1e-12), T = %.1f s, E_ref %.10f J, |L_ref| %.10f:", RL_PREC_NAME, T, Eref,
         sqrt(Lref[0] * Lref[0] + Lref[1] * Lref[1] + Lref[2] * Lref[2]));
  for (int k = 0; k < 4; k++) printf(" h=%.1e |dE|/E=%.3e |dL|/|L|=%.3e att=%.3e rad;", hs[k], eE[k], eL[k], eR[k]);
  double oE = fit_order(hs, eE, 4), oL = fit_order(hs, eL, 4), oR = fit_order(hs, eR, 4);
  printf(" fitted order energy %.3f, momentum %.3f, attitude %.3f\n", oE, oL, oR);
#if defined(RL_REAL_F64)
  cr_expect(oE > 0.8 && oE < 1.3, "energy order %.3f", oE);
  cr_expect(oL > 0.8 && oL < 1.3, "momentum order %.3f", oL);
  cr_expect_leq(eE[3], 1e-6);
  cr_expect_leq(eL[3], 3e-5);
#else
  /* f32: round-off of the poses and velocities (ε ≈ 6e-8 per step, 250–2000 steps) dominates the O(h) error
     at every h here (measured: the errors grow as h shrinks, 1e-4 → 9e-4), so no order is asserted; the
     bound is the measured worst (9.4e-4 energy, 4.7e-4 momentum) × 2 */
  for (int k = 0; k < 4; k++) {
    cr_expect_leq(eE[k], 2e-3);
    cr_expect_leq(eL[k], 1e-3);
  }
#endif
}

/* --- (b) pendulum vs GSL rk8pd on I_p φ̈ = −m g d sin φ (φ = qpos, 0 hanging) */

static int pend_rhs(double t, const double y[], double f[], void *par) {
  (void)t;
  f[0] = y[1];
  f[1] = -*(const double *)par * sin(y[0]);
  return GSL_SUCCESS;
}

Test(avbd, pendulum_vs_gsl_ode_first_order) {
  rl_pair p;
  load(&p, SCENE("pendulum.xml"), NULL);
  const rl_model *m = p.m;
  /* hinge at the body origin, axis y: I_p = I_com about the axis + m d² */
  double mass = m->body_mass[1], ip[3] = {m->body_ipos[3], m->body_ipos[4], m->body_ipos[5]}, ax[3], ay[3] = {0, 1, 0};
  double iq[4] = {m->body_iquat[4], -m->body_iquat[5], -m->body_iquat[6], -m->body_iquat[7]}; /* inertial ← body */
  qrot(ax, iq, ay);
  double Ia =
      m->body_inertia[3] * ax[0] * ax[0] + m->body_inertia[4] * ax[1] * ax[1] + m->body_inertia[5] * ax[2] * ax[2];
  double dd = sqrt(ip[0] * ip[0] + ip[2] * ip[2]), k = mass * 9.81 * dd / (Ia + mass * dd * dd);
  double y[2] = {m->qpos0[0], 0}, t = 0, T = 0.5;
  gsl_odeiv2_system sys = {pend_rhs, NULL, 2, &k};
  gsl_odeiv2_driver *drv = gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rk8pd, 1e-6, 1e-12, 1e-12);
  cr_assert_eq(gsl_odeiv2_driver_apply(drv, &t, T, y), GSL_SUCCESS);
  gsl_odeiv2_driver_free(drv);
  rl_pair_free(&p);
  const double hs[4] = {4e-3, 2e-3, 1e-3, 5e-4};
  double e[4];
  printf("avbd pendulum (%s) vs GSL rk8pd, k = m g d/I_p = %.6f 1/s^2, phi_ref(%.1f s) = %.12f:", RL_PREC_NAME, k, T,
         y[0]);
  for (int i = 0; i < 4; i++) {
    real q[8];
    double an, it;
    avbd_run(SCENE("pendulum.xml"), hs[i], T, q, &an, NULL, &it);
    e[i] = fabs((double)q[0] - y[0]);
    printf(" h=%.1e err=%.3e (%.1f sweeps);", hs[i], e[i], it);
  }
#if defined(RL_REAL_F32)
  const int nfit = 2; /* f32: per-step tolerance accumulates above the O(h) error at small h (see above) */
#else
  const int nfit = 4;
#endif
  double o = fit_order(hs, e, nfit);
  printf(" fitted order (%d points) %.3f\n", nfit, o);
  cr_expect(o > TOL(0.8, 0.5) && o < TOL(1.3, 1.6), "order %.3f", o);
}

/* --- (c) the dense global KKT reference vs AVBD's converged step */

/* The stopping test against the exact step: for every step, the dense KKT reference solves the same step
   problem from the same start, and a step the test flags converged whose poses are farther from that
   solution than the tolerance the test claimed (am->stat.tol_lin m, tol_ang rad) counts as a false stop.
   Returns the fraction of false stops among the flagged steps over NSTEP steps at time step h. */
static double false_stop_fraction(const char *model, double h, int stop, int block, int nstep, int *flagged,
                                  double *worst) {
  rl_pair p;
  rl_data *d;
  rl_avbd_param prm = avbd_load(&p, model, h);
  prm.stop = stop;
  prm.block = block;
  rl_avbd *am = avbd_start(&p, &prm, &d);
  int bad = 0;
  *flagged = 0;
  *worst = 0;
  for (int k = 0; k < nstep; k++) {
    rl_avbd_ref ref;
    cr_assert_eq(rl_avbd_ref_solve(&ref, am, p.m, d), 0, "dense KKT solve failed (info %d)", ref.info);
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    double dx, dth;
    rl_avbd_ref_distance(&ref, am, &dx, &dth);
    rl_avbd_ref_free(&ref);
    if (!am->stat.converged) continue;
    (*flagged)++;
    double r = fmax(dx / (double)am->stat.tol_lin, dth / (double)am->stat.tol_ang);
    *worst = fmax(*worst, r);
    bad += r > 1;
  }
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
  return *flagged ? (double)bad / *flagged : 0;
}

/* The distance stopping test is honest at every h from 10 ms to 10 µs: no step it flags converged is
   farther from the dense solution than the distance it claims.  The update test's figures are printed
   beside it (below 1 ms its fixed 1e-8 bound is far looser than the error a first-order step may make). */
Test(avbd, distance_stop_honest_vs_dense_kkt, .timeout = 600) {
  static const char *scene[3] = {SCENE("pendulum.xml"), SCENE("double_pendulum_swing.xml"), SCENE("chain8.xml")};
  static const double hs[4] = {1e-2, 1e-3, 1e-4, 1e-5};
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 4; k++) {
      int fd, fu;
      double wd, wu;
      double xd = false_stop_fraction(scene[i], hs[k], RL_AVBD_STOP_DISTANCE, RL_AVBD_BLOCK_BODY, 40, &fd, &wd);
      double xu = false_stop_fraction(scene[i], hs[k], RL_AVBD_STOP_UPDATE, RL_AVBD_BLOCK_BODY, 40, &fu, &wu);
      printf("avbd stopping test vs dense KKT (%s) %s h=%.0e: distance test %d/40 flagged, false %.3f, worst "
             "distance/claim %.2f; update test %d/40 flagged, false %.3f, worst %.2f\n",
             RL_PREC_NAME, strrchr(scene[i], '/') + 1, hs[k], fd, xd, wd, fu, xu, wu);
      cr_expect_eq(xd, 0, "false stops %.3f", xd);
    }
}

/* Articulation blocks under the same test: at every h from 10 ms to 10 µs no step the distance test flags
   converged is farther from the dense KKT solution than it claims, and the update test's figures beside it. */
Test(avbd, articulation_distance_stop_honest_vs_dense_kkt, .timeout = 600) {
  static const char *scene[3] = {SCENE("pendulum.xml"), SCENE("double_pendulum_swing.xml"), SCENE("chain8.xml")};
  static const double hs[4] = {1e-2, 1e-3, 1e-4, 1e-5};
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 4; k++) {
      int fd, fu;
      double wd, wu;
      double xd = false_stop_fraction(scene[i], hs[k], RL_AVBD_STOP_DISTANCE, RL_AVBD_BLOCK_ARTICULATION, 40, &fd, &wd);
      double xu = false_stop_fraction(scene[i], hs[k], RL_AVBD_STOP_UPDATE, RL_AVBD_BLOCK_ARTICULATION, 40, &fu, &wu);
      printf("avbd articulation blocks vs dense KKT (%s) %s h=%.0e: distance test %d/40 flagged, false %.3f, worst "
             "distance/claim %.2f; update test %d/40 flagged, false %.3f, worst %.2f\n",
             RL_PREC_NAME, strrchr(scene[i], '/') + 1, hs[k], fd, xd, wd, fu, xu, wu);
      cr_expect_eq(xd, 0, "false stops %.3f", xd);
      cr_expect_geq(fd, TOL(36, 30), "distance test flagged %d/40", fd);
    }
}

/* One step of MODEL after WARM steps in both block modes from the same state (the distance test, tolerance
   1e-8 m·(h/1 ms)²): both within the tolerance they claim of the dense KKT solution of that step, hence within
   twice that of each other; the articulation blocks in fewer iterations. */
static void block_modes_agree(const char *model, const char *name, int warm) {
  double x[2], th[2], tol[2][2];
  int it[2];
  real *pos[2];
  int nb = 0;
  for (int mode = 0; mode < 2; mode++) {
    rl_pair p;
    rl_data *d;
    rl_avbd_param prm = avbd_load(&p, model, 0);
    prm.stop = RL_AVBD_STOP_DISTANCE;
    prm.block = RL_AVBD_BLOCK_BODY; /* the warm steps in body blocks for both modes: one state */
    rl_avbd *am = avbd_start(&p, &prm, &d);
    for (int k = 0; k < warm; k++) cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    am->prm.block = mode ? RL_AVBD_BLOCK_ARTICULATION : RL_AVBD_BLOCK_BODY;
    rl_avbd_ref ref;
    cr_assert_eq(rl_avbd_ref_solve(&ref, am, p.m, d), 0, "dense KKT solve failed (info %d)", ref.info);
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    rl_avbd_ref_distance(&ref, am, x + mode, th + mode);
    rl_avbd_ref_free(&ref);
    /* f32 body sweeps may exhaust the budget under the distance test (its slow tail) */
    if (mode || TOL(1, 0)) cr_expect(am->stat.converged, "%s mode %d not converged", name, mode);
    it[mode] = am->stat.iterations;
    tol[mode][0] = am->stat.tol_lin;
    tol[mode][1] = am->stat.tol_ang;
    nb = am->nb;
    pos[mode] = malloc(sizeof(real) * 3 * (size_t)nb);
    for (int s = 0; s < nb; s++) memcpy(pos[mode] + 3 * s, am->pose[s].x, sizeof(real) * 3);
    rl_data_free(d);
    rl_avbd_free(am);
    rl_pair_free(&p);
  }
  double dd = 0;
  for (int i = 0; i < 3 * nb; i++) dd = fmax(dd, fabs((double)pos[0][i] - (double)pos[1][i]));
  printf("avbd block modes (%s) %s step %d: body %d iterations, distance to dense KKT %.2e m / %.2e rad (claim "
         "%.1e); articulation %d iterations, %.2e m / %.2e rad (claim %.1e); body vs articulation %.2e m\n",
         RL_PREC_NAME, name, warm + 1, it[0], x[0], th[0], tol[0][0], it[1], x[1], th[1], tol[1][0], dd);
  for (int mode = 0; mode < 2; mode++) {
    cr_expect_leq(x[mode], tol[mode][0], "%s mode %d: %.2e m from the dense solution", name, mode, x[mode]);
    cr_expect_leq(th[mode], tol[mode][1], "%s mode %d: %.2e rad", name, mode, th[mode]);
  }
  cr_expect_leq(dd, tol[0][0] + tol[1][0]);
  cr_expect_lt(it[1], it[0], "articulation %d iterations, body %d", it[1], it[0]);
  free(pos[0]);
  free(pos[1]);
}

Test(avbd, articulation_blocks_agree_with_body_sweep, .timeout = 300) {
  block_modes_agree(SCENE("double_pendulum_swing.xml"), "double_pendulum_swing", 50);
  block_modes_agree(SCENE("chain8.xml"), "chain8", 0);
  block_modes_agree(SCENE("chain8.xml"), "chain8", 100);
}

/* An N-link hinge chain (capsules 22 mm, 50 g, hinges on y, released 27° below the horizontal; 64 links reach
   1.4 m, where f32's rounding of the poses stays below its 5e-7 m tolerance), written to a
   temporary file; loaded into p at time step 1 ms. */
static void chain_model(rl_pair *p, int n) {
  char path[] = "/tmp/rl_avbd_chainXXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  FILE *f = fdopen(fd, "w");
  fprintf(f, "<mujoco><option timestep=\"0.001\"/><worldbody>\n");
  for (int i = 0; i < n; i++)
    fprintf(f, "<body pos=\"%s\"><joint type=\"hinge\" axis=\"0 1 0\"/>"
               "<geom type=\"capsule\" fromto=\"0 0 0 0.02 0 -0.01\" size=\"0.004\" mass=\"0.05\" contype=\"0\" "
               "conaffinity=\"0\"/>\n", i == 0 ? "0 0 0.5" : "0.02 0 -0.01");
  for (int i = 0; i < n; i++) fprintf(f, "</body>");
  fprintf(f, "</worldbody></mujoco>\n");
  fclose(f);
  load(p, path, NULL);
  unlink(path);
}

/* Articulation blocks on chains of 8 … 64 links: the iterations per step do not grow with the chain (the
   joint rows are solved within the block), and the time of one iteration per body stays flat (the tree
   factorization is linear in the bodies: 64 links cost at most 2.5× per body what 16 cost, where a dense
   factorization would cost 16×). */
Test(avbd, articulation_blocks_linear_on_a_chain, .timeout = 300) {
  static const int ns[4] = {8, 16, 32, 64};
  double its[4], per[4];
  for (int k = 0; k < 4; k++) {
    rl_pair p;
    chain_model(&p, ns[k]);
    rl_avbd_param prm = rl_avbd_default_param(p.m);
    prm.block = RL_AVBD_BLOCK_ARTICULATION;
    update_stop(&prm); /* distance test, f64: 16, 5, 1, 1 of 100 steps exhausted on chains of 8 … 64 */
    rl_data *d;
    rl_avbd *am = avbd_start(&p, &prm, &d);
    long it = 0;
    for (int s = 0; s < 100; s++) {
      cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
      it += am->stat.iterations;
    }
    its[k] = it / 100.0;
    cr_expect_eq(am->exhausted, 0, "chain %d: %ld steps exhausted", ns[k], am->exhausted);
    /* time of a fixed number of iterations (tolerance 0: the budget is always used) */
    am->prm.tol_lin = am->prm.tol_ang = 0;
    am->prm.iterations = 20;
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
      clock_t t0 = clock();
      for (int s = 0; s < 10; s++) cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
      best = fmin(best, (double)(clock() - t0) / CLOCKS_PER_SEC);
    }
    per[k] = best / (10.0 * 20.0 * ns[k]);
    printf("avbd articulation blocks (%s) chain of %d hinges: %.2f iterations/step, %.3f us per iteration per body\n",
           RL_PREC_NAME, ns[k], its[k], per[k] * 1e6);
    rl_data_free(d);
    rl_avbd_free(am);
    rl_pair_free(&p);
  }
  cr_expect_leq(its[3], 2 * its[0] + 3, "iterations/step %.2f (64 links) vs %.2f (8)", its[3], its[0]);
  cr_expect_leq(per[3], 2.5 * per[1], "per body and iteration %.3g s (64) vs %.3g s (16)", per[3], per[1]);
}

/* under the update test (update_stop), whose bounds these are; the distance test's claim is held against the
   dense reference by the false-stop tests (f32 pendulum: the distance test does not stop, its updates are
   the poses' rounding noise) */
static void dense_vs_avbd(const char *model, const char *name, int warm) {
  rl_pair p;
  rl_data *d;
  rl_avbd_param prm = avbd_load(&p, model, 0);
  update_stop(&prm);
  rl_avbd *am = avbd_start(&p, &prm, &d);
  for (int k = 0; k < warm; k++) cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK); /* a moving state */
  rl_avbd_ref ref;
  cr_assert_eq(rl_avbd_ref_solve(&ref, am, p.m, d), 0, "dense KKT solve failed (info %d)", ref.info);
  cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
  double dx, dth;
  rl_avbd_ref_distance(&ref, am, &dx, &dth);
  /* the prediction's distance to the solution: the size of the correction the step makes */
  double px = 0;
  for (int s = 0; s < am->nb; s++)
    for (int i = 0; i < 3; i++) px = fmax(px, fabs(ref.xp[3 * s + i] - ref.x[3 * s + i]));
  printf(
      "avbd dense KKT reference, %s (%s) step %d: %d rows, %d Newton iterations (last step %.1e, stationarity %.1e N "
      "/ %.1e N m, primal %.1e, %d omitted terms); AVBD %d sweeps (converged %d, tol %.0e m / %.0e rad, stationarity "
      "%.1e N / %.1e N m): distance %.3e m, %.3e rad (prediction-to-solution %.3e m)\n",
      name, RL_PREC_NAME, warm + 1, ref.nrow, ref.iterations, ref.step, ref.stationarity[0], ref.stationarity[1],
      ref.primal, ref.omitted, am->stat.iterations, am->stat.converged, (double)am->prm.tol_lin,
      (double)am->prm.tol_ang, am->stat.kkt_stationarity_force, am->stat.kkt_stationarity_torque, dx, dth, px);
  cr_expect_eq(ref.omitted, 0);
  cr_expect_leq(ref.primal, 1e-12);
  cr_expect(am->stat.converged);
  /* tolerance-consistent bound: the sweeps stop at updates and residuals ≤ tol, so the iterate is within a
     few tol of the fixed point (f32: plus the rounding of the poses, ~ε·|x| ≈ 1e-7 m) */
  cr_expect_leq(dx, TOL(1e2 * 1e-8, 1e-5));
  cr_expect_leq(dth, TOL(1e2 * 1e-8, 1e-4));
  /* force part of AVBD's stationarity against the step's correction force m/h²·(prediction-to-solution):
     measured ≤ 2.2e-4 of it (f64, chain8 step 1), ≤ 7e-2 (f32, chain8 step 101: the rounding of the poses,
     (m/h²)·ε|x|, is of the size of the correction) */
  double mmax = 0, h = p.m->opt.timestep;
  for (int s = 0; s < am->nb; s++) mmax = fmax(mmax, am->mass[s]);
  double fcorr = mmax / (h * h) * px;
  printf("  AVBD stationarity force part / correction force %.1e N = %.2e\n", fcorr,
         am->stat.kkt_stationarity_force / fcorr);
  cr_expect_leq(am->stat.kkt_stationarity_force, TOL(1e-3, 2e-1) * fcorr);
  rl_avbd_ref_free(&ref);
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

Test(avbd, dense_kkt_reference_pendulum) {
  dense_vs_avbd(SCENE("pendulum.xml"), "pendulum", 0);
  dense_vs_avbd(SCENE("pendulum.xml"), "pendulum", 100);
}
Test(avbd, dense_kkt_reference_chain8) {
  dense_vs_avbd(SCENE("chain8.xml"), "chain8", 0);
  dense_vs_avbd(SCENE("chain8.xml"), "chain8", 100);
}

/* The dense KKT reference does not rebuild the terms of ball and free joints nor the actuators on sites, ball and free
   joints and bodies; it counts them in omitted, so that no comparison takes it for the engine's problem:
   avbd_ball_drive.xml 3 joints with dof terms (two balls, the free puck) + 7 actuators through them = 10;
   avbd_ball_limit.xml 2 balls × (dof terms, friction loss, cone limit) + the ball's motor = 7 at the step start,
   + the hinge's limit and friction loss before the step (rl_avbd_ref_solve: no active set yet) = 9. */
Test(avbd, dense_reference_counts_ball_free_and_wrench_terms_omitted) {
  const struct {
    const char *model;
    int begin, solve;
  } cases[] = {{MODEL("avbd_ball_drive.xml"), 10, 10}, {MODEL("avbd_ball_limit.xml"), 7, 9}};
  for (int c = 0; c < 2; c++) {
    rl_pair p;
    rl_data *d;
    rl_avbd *am = avbd_open(&p, cases[c].model, 0, &d);
    rl_avbd_ref ref;
    cr_assert_eq(rl_avbd_ref_begin(&ref, am, p.m, d), 0);
    int nb = ref.omitted;
    rl_avbd_ref_free(&ref);
    cr_assert_eq(rl_avbd_ref_solve(&ref, am, p.m, d), 0);
    int ns = ref.omitted;
    rl_avbd_ref_free(&ref);
    printf("avbd dense reference (%s) %s: omitted %d at the step start, %d before the step (want %d, %d)\n",
           RL_PREC_NAME, strrchr(cases[c].model, '/') + 1, nb, ns, cases[c].begin, cases[c].solve);
    cr_expect_eq(nb, cases[c].begin);
    cr_expect_eq(ns, cases[c].solve);
    rl_data_free(d);
    rl_avbd_free(am);
    rl_pair_free(&p);
  }
}

/* --- (d) stacks at rest: box-box contacts from rl_collision (RL_AVBD_CONTACTS_DATA), 10 s */

static double stack_drift(const char *model, const char *name, double T, long *exhausted) {
  rl_pair p;
  rl_data *d;
  rl_avbd_param prm = avbd_load(&p, model, 0);
  prm.contacts = RL_AVBD_CONTACTS_DATA;
  rl_avbd *am = avbd_start(&p, &prm, &d);
  real x0[64 * 3];
  cr_assert_leq(am->nb, 64);
  for (int s = 0; s < am->nb; s++) memcpy(x0 + 3 * s, am->pose[s].x, sizeof(real) * 3);
  double drift = 0, pen = 0, tdrift = 0;
  long n = lround(T / p.m->opt.timestep), it = 0;
  int maxcon = 0;
  for (long k = 0; k < n; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK); /* rl_collision's contacts at the step start */
    it += am->stat.iterations;
    pen = fmax(pen, am->stat.penetration);
    if (am->stat.ncon > maxcon) maxcon = am->stat.ncon;
    for (int s = 0; s < am->nb; s++) {
      double e = 0;
      for (int i = 0; i < 3; i++)
        e += ((double)am->pose[s].x[i] - x0[3 * s + i]) * ((double)am->pose[s].x[i] - x0[3 * s + i]);
      if (sqrt(e) > drift) {
        drift = sqrt(e);
        tdrift = (double)(k + 1) * p.m->opt.timestep;
      }
    }
  }
  printf(
      "avbd %s (%s) resting %.0f s at %.0f ms, contacts from rl_collision: max box-centre drift %.3e m (first reached "
      "at t = %.3f s), max penetration %.3e m, up to %d contacts, %.1f sweeps/step, %ld of %ld steps "
      "budget-exhausted\n",
      name, RL_PREC_NAME, T, 1e3 * p.m->opt.timestep, drift, tdrift, pen, maxcon, (double)it / (double)n, am->exhausted,
      am->steps);
  *exhausted = am->exhausted;
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
  return drift;
}

/* Target: max drift < 1 mm over 10 s; measured 5.0e-4 m f64 / 2.4e-4 m f32 since body–body
   contact penalties carry at most 2× their start value into the next step (avbd_contact_warmstart). */
Test(avbd, box_stack_rests_10s, .timeout = 600) {
  long ex;
  double dr = stack_drift(SCENE("box_stack.xml"), "box_stack", 10, &ex);
  cr_expect_lt(dr, 1e-3, "box_stack drift %.3e m (target 1e-3)", dr);
}
/* box_pyramid: 2 s (10 s with RL_AVBD_FULL set in the environment).  No step may exhaust the sweep budget: with
   every penetration pushed out by 1 − α per step (no slop) 505 of 1000 did in f64 (383 sweeps/step), the
   push-outs of the boxes' independent penetrations around the loops of contacts not met by any motion; with the
   slop 0 (91 sweeps/step).  Measured 10 s: f64 5.886e-4 m (reached at
   0.01 s: the initial settling, then at rest), f32 6.050e-4 m (2 s: 3.924e-4 m).  f32 collapsed (0.956 m)
   while rl_collision (f32) reported box–box points with dist −0.0505 m from step 4: float tilts let an
   edge–edge axis take the contact of two parallel faces (see RL_BOXBOX_* in collide_box.c). */
Test(avbd, box_pyramid_rests, .timeout = 600) {
  double T = getenv("RL_AVBD_FULL") ? 10 : 2;
  long ex;
  double dr = stack_drift(SCENE("box_pyramid.xml"), "box_pyramid", T, &ex);
  cr_expect_lt(dr, 1e-3, "box_pyramid drift %.3e m (target 1e-3)", dr);
  cr_expect_eq(ex, 0, "box_pyramid: %ld steps exhausted the sweep budget", ex);
}

/* --- (e) incline: sliding at g(sin θ − μ cos θ) (μ 0.3, 20°), sticking without creep (μ 0.7) */

/* speed along the downhill direction (cos 20°, 0, −sin 20°) of slot 0 */
static double downhill_speed(const rl_avbd *am) {
  const double th = 20 * 3.14159265358979323846 / 180;
  return cos(th) * am->vel[0] - sin(th) * am->vel[2];
}

Test(avbd, incline_slides_at_coulomb_acceleration) {
  rl_pair p;
  rl_data *d;
  rl_avbd *am = avbd_open(&p, MODEL("incline_slide.xml"), 0, &d);
  const double th = 20 * 3.14159265358979323846 / 180, mu = 0.3, g = 9.81, h = p.m->opt.timestep;
  double a_exact = g * (sin(th) - mu * cos(th)), tt[400], vv[400];
  int nfit = 0;
  long exhausted = 0;
  for (int k = 0; k < 250; k++) { /* 0.5 s; fit v(t) over t ∈ [0.1, 0.5] s */
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    exhausted += !am->stat.converged;
    double t = (k + 1) * h;
    if (t > 0.1 - 1e-9 && nfit < 400) {
      tt[nfit] = t;
      vv[nfit] = downhill_speed(am);
      nfit++;
    }
  }
  double c0, c1, c00, c01, c11, ss;
  gsl_fit_linear(tt, 1, vv, 1, (size_t)nfit, &c0, &c1, &c00, &c01, &c11, &ss);
  double rel = (c1 - a_exact) / a_exact;
  printf("avbd incline slide (%s) mu 0.3, 20 deg: fitted acceleration %.6f m/s^2 vs g(sin - mu cos) %.6f (rel. error "
         "%.3e), "
         "%d contacts, final speed %.5f m/s, %ld budget-exhausted steps\n",
         RL_PREC_NAME, c1, a_exact, rel, am->stat.ncon, vv[nfit - 1], exhausted);
  cr_expect_leq(fabs(rel), 0.01);
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

Test(avbd, incline_sticks_creep_speed) {
  rl_pair p;
  rl_data *d;
  rl_avbd *am = avbd_open(&p, SCENE("incline.xml"), 0, &d);
  double x0[3] = {am->pose[0].x[0], am->pose[0].x[1], am->pose[0].x[2]}, vmax = 0, T = 2;
  long n = lround(T / p.m->opt.timestep);
  for (long k = 0; k < n; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    if (k >= n / 2) vmax = fmax(vmax, fabs(downhill_speed(am)));
  }
  double dx = 0;
  for (int i = 0; i < 3; i++) dx += ((double)am->pose[0].x[i] - x0[i]) * ((double)am->pose[0].x[i] - x0[i]);
  printf("avbd incline stick (%s) mu 0.7, 20 deg, %.0f s: max downhill speed over the last second %.3e m/s, mean creep "
         "%.3e m/s (displacement %.3e m)\n",
         RL_PREC_NAME, T, vmax, sqrt(dx) / T, sqrt(dx));
  cr_expect_lt(vmax, 1e-4);
  cr_expect_lt(sqrt(dx) / T, 1e-4);
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* ------------------------------------------- solver quality (mass ratio, collision contacts) */

/* chain50 (50 000:1) with the supported-mass penalty scale (avbd_row_scales): anchor gap ≤ 1e-6 m over
   the first 0.3 s (the full 1 s run is chain50_mass_ratio_anchor_error above; measured there 4.3e-8 m
   f64 (4.3e-9 m with alpha_joint 0.5), 1.5e-6 m f32, from 8.6e-5 m before).  Every step still exhausts the
   budget (angle-row residual ~5e-5 rad, light-link rotation updates ~3e-8 rad per sweep). */
Test(avbd, chain50_supported_mass_penalty_holds_anchors) {
  real q[128];
  double an, it;
  long ex;
  avbd_run(MODEL("avbd_chain50.xml"), 1e-3, 0.3, q, &an, &ex, &it);
  printf("avbd chain50 supported-mass penalty (%s), 300 steps: max anchor error %.3e m, %.1f sweeps/step, %ld "
         "budget-exhausted steps\n",
         RL_PREC_NAME, an, it, ex);
  cr_expect_leq(an, TOL(1e-6, 3e-6));
}

/* box_stack (5 boxes) with every contact from rl_collision (RL_AVBD_CONTACTS_DATA: manifold points,
   box–floor and box–box), 2 s at rest: every box centre within 1 mm of its start, no exploding penalty
   (box–box rows restart at ρ₀ each step, see avbd_contact_warmstart) */
Test(avbd, box_stack_collision_contacts_rest, .timeout = 300) {
  rl_pair p;
  rl_data *d;
  rl_avbd_param prm = avbd_load(&p, SCENE("box_stack.xml"), 0);
  prm.contacts = RL_AVBD_CONTACTS_DATA;
  rl_avbd *am = avbd_start(&p, &prm, &d);
  real x0[5 * 3];
  cr_assert_eq(am->nb, 5);
  for (int s = 0; s < 5; s++) memcpy(x0 + 3 * s, am->pose[s].x, sizeof(real) * 3);
  double drift = 0, pen = 0, it = 0, sign = 0, cone = 0;
  int mincon = 1000, n = 1000;
  for (int k = 0; k < n; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK); /* rl_collision's contacts at the step start */
    it += am->stat.iterations;
    pen = fmax(pen, am->stat.penetration);
    sign = fmax(sign, am->stat.kkt_normal_sign);
    cone = fmax(cone, am->stat.kkt_cone);
    if (k > 10 && am->stat.ncon < mincon) mincon = am->stat.ncon;
    for (int s = 0; s < 5; s++) {
      double e = 0;
      for (int i = 0; i < 3; i++) e += pow((double)am->pose[s].x[i] - x0[3 * s + i], 2);
      drift = fmax(drift, sqrt(e));
    }
  }
  printf("avbd box_stack collision contacts (%s), 2 s at 2 ms: max centre drift %.3e m, max penetration %.3e m, "
         ">= %d contacts after 20 ms, %.1f sweeps/step, %ld budget-exhausted steps, max lambda_n %.1e, cone "
         "violation %.1e\n",
         RL_PREC_NAME, drift, pen, mincon, it / n, am->exhausted, sign, cone);
  cr_expect_lt(drift, 1e-3);
  cr_expect_leq(sign, 0, "normal multipliers must be <= 0");
  cr_expect_leq(cone, TOL(1e-9, 1e-4), "tangent multipliers outside the Coulomb disc");
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* spin_sphere (condim 4, torsional coefficient 0.05 m, contacts from rl_collision): the spin about the
   vertical decays at the torsional bound τ = μ_spin·m g, ω̇ = τ / (2/5 m r²) = 122.6 rad/s², so 20 rad/s
   stops at t* = 0.163 s; the spin must stop within 10% of t* and stay stopped (no reversal) */
Test(avbd, spin_sphere_stops_under_torsional_friction) {
  rl_pair p;
  load(&p, MODEL("spin_sphere.xml"), NULL);
  rl_avbd_param prm = rl_avbd_default_param(p.m);
  prm.contacts = RL_AVBD_CONTACTS_DATA; /* one body: no dynamic pair, so not the default */
  rl_avbd *am = build_prm(p.m, &prm);
  rl_data *d = rl_data_alloc(p.m);
  d->qvel[5] = 20;
  rl_avbd_from_generalized(am, p.m, d);
  double h = p.m->opt.timestep, tstop = -1, wmin = 0, w_01 = 0, lam_sign = 0;
  const double mus = 0.05, r = 0.1, g = 9.81, wdot = mus * g / (0.4 * r * r), tstar = 20 / wdot;
  for (int k = 0; k < 500; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK); /* rl_collision's contacts at the step start */
    double w = am->vel[5], t = (k + 1) * h;
    if (tstop < 0 && fabs(w) < 1e-3) tstop = t;
    if (tstop >= 0) wmin = fmax(wmin, fabs(w));
    if (fabs(t - 0.1) < h / 2) w_01 = w;
    lam_sign = fmax(lam_sign, am->stat.kkt_normal_sign);
  }
  printf("avbd spin_sphere torsional friction (%s): omega(0.1 s) %.4f rad/s (exact %.4f), stopped at %.4f s (exact "
         "%.4f s), max |omega| after stop %.2e rad/s, %d contact(s)\n",
         RL_PREC_NAME, w_01, 20 - wdot * 0.1, tstop, tstar, wmin, am->stat.ncon);
  cr_expect(tstop > 0 && fabs(tstop - tstar) < 0.1 * tstar, "stop time %.4f s vs %.4f s", tstop, tstar);
  cr_expect_leq(fabs(w_01 - (20 - wdot * 0.1)), 0.05 * 20);
  cr_expect_leq(wmin, 1e-3);
  cr_expect_leq(lam_sign, 0);
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* avbd_roll (condim 6, rolling coefficient 0.01 m, contacts from rl_collision): a sphere rolling
   without slip at 1 m/s decelerates at a = μ_roll g / (1.4 r) = 0.7007 m/s² (rolling torque μ_roll·m g
   against I_contact = 1.4 m r²); v(0.5 s) = 0.6496 m/s, and it keeps rolling (v = ω r).  The
   deceleration must be within 2 % of exact.  (With the normal row on the body-fixed contact point the
   normal force acted r·ω·h behind the centre, a forward torque of 20 % of the rolling resistance at
   1 m/s: 83 % of the exact deceleration; the normal row now runs through the sphere's centre.) */
Test(avbd, rolling_friction_decelerates_sphere) {
  rl_pair p;
  load(&p, MODEL("avbd_roll.xml"), NULL);
  rl_avbd_param prm = rl_avbd_default_param(p.m);
  prm.contacts = RL_AVBD_CONTACTS_DATA; /* one body: no dynamic pair, so not the default */
  rl_avbd *am = build_prm(p.m, &prm);
  rl_data *d = rl_data_alloc(p.m);
  d->qvel[0] = 1;
  d->qvel[4] = 10;
  rl_avbd_from_generalized(am, p.m, d);
  for (int k = 0; k < 250; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK); /* rl_collision's contacts at the step start */
  }
  double v = am->vel[0], slip = v - 0.1 * am->vel[4], exact = 1 - 0.01 * 9.81 / 0.14 * 0.5;
  double ratio = (1 - v) / (1 - exact);
  printf("avbd rolling friction (%s): v(0.5 s) %.5f m/s (exact %.5f), deceleration %.4f of exact, slip v - w r "
         "%.2e m/s, %d contact(s)\n",
         RL_PREC_NAME, v, exact, ratio, slip, am->stat.ncon);
  cr_expect(ratio > 0.98 && ratio < 1.02, "deceleration %.4f of exact", ratio);
  cr_expect_leq(fabs(slip), TOL(1e-4, 1e-3));
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* avbd_ground_pairs (four cubes resting on a plane tilted 10°, see the model): the contact parameters of a
   cube–plane pair are MuJoCo's (condim, friction with priority, margin − gap, <exclude>) whether the contacts
   are AVBD's own ground contacts or rl_collision's.  After 0.5 s: the sticking cube sits where its contact row
   has its zero (centre 0.106 m from the plane) and has not moved along it; the frictionless and the priority
   cube slid ½·a·t²·(1 + 1/n) (implicit Euler's n steps at constant a) with a = g·sin 10° and
   g·(sin 10° − 0.1·cos 10°), within 1 %; the excluded cube fell through the plane. */
Test(avbd, ground_contacts_take_mujocos_pair_parameters) {
  const double th = 10 * M_PI / 180, g = 9.81, nrm[3] = {sin(th), 0, cos(th)}, tan_[3] = {cos(th), 0, -sin(th)};
  for (int data = 0; data < 2; data++) {
    rl_pair p;
    rl_data *d;
    rl_avbd_param prm = avbd_load(&p, MODEL("avbd_ground_pairs.xml"), 0);
    cr_expect_eq(prm.contacts, RL_AVBD_CONTACTS_GROUND, "the model's default contact source");
    prm.contacts = data ? RL_AVBD_CONTACTS_DATA : RL_AVBD_CONTACTS_GROUND;
    rl_avbd *am = avbd_start(&p, &prm, &d);
    double x0[5][3], t = 0.5;
    int n = (int)lround(t / p.m->opt.timestep), unconverged = 0;
    for (int b = 1; b <= 4; b++)
      for (int k = 0; k < 3; k++) x0[b][k] = am->pose[am->slot[b]].x[k];
    for (int k = 0; k < n; k++) {
      cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
      unconverged += !am->stat.converged;
    }
    double hgt[5], s[5];
    for (int b = 1; b <= 4; b++) {
      const real *x = am->pose[am->slot[b]].x;
      hgt[b] = s[b] = 0;
      for (int k = 0; k < 3; k++) {
        hgt[b] += x[k] * nrm[k];
        s[b] += (x[k] - x0[b][k]) * tan_[k];
      }
    }
    double exact_slide = 0.5 * g * sin(th) * t * t * (1 + 1.0 / n);
    double exact_prio = 0.5 * g * (sin(th) - 0.1 * cos(th)) * t * t * (1 + 1.0 / n);
    printf("avbd ground pair parameters (%s, %s contacts): stick: height %.9f m (row zero 0.106), moved %.2e m; "
           "frictionless slid %.5f m (exact %.5f); priority slid %.5f m (exact %.5f); excluded at height %.3f m; "
           "%d of %d steps unconverged\n",
           RL_PREC_NAME, data ? "rl_collision" : "own ground", hgt[1], s[1], s[2], exact_slide, s[3], exact_prio, hgt[4],
           unconverged, n);
    /* the sticking cube within the stop's claim, 1e-8 m per step (f64) over the n steps: with rl_collision's
       corner points it wanders by 2.1e-6 m at 0.5 s, 6.1e-6 at 2 s, 1.8e-6 at 5 s (articulation blocks' friction
       disc from the last normal multiplier; 5e-10 m with the trial's normal force), 5e-9 m with the own ground
       points; a sliding cube moves 0.09 m or more */
    cr_expect_leq(fabs(hgt[1] - 0.106), TOL(1e-5, 1e-5), "stick cube height %.9f", hgt[1]);
    cr_expect_leq(fabs(s[1]), TOL(1e-5, 1e-5), "stick cube moved %g m", s[1]);
    cr_expect_leq(fabs(s[2] / exact_slide - 1), 0.01, "frictionless cube slid %g m, exact %g", s[2], exact_slide);
    cr_expect_leq(fabs(s[3] / exact_prio - 1), 0.01, "priority cube slid %g m, exact %g", s[3], exact_prio);
    cr_expect_lt(hgt[4], 0, "the excluded cube stays above the plane (height %g m)", hgt[4]);
    /* rl_collision's four points per cube in f32: one step (208, the priority cube sliding) ran to the budget
       with its distance estimate unavailable, updates at 5e-8 m: counted, not hidden */
    cr_expect_leq(unconverged, data ? TOL(0, 2) : 0, "%d of %d steps unconverged", unconverged, n);
    rl_data_free(d);
    rl_avbd_free(am);
    rl_pair_free(&p);
  }
}

/* ================================================================ BAM servo model */

/* avbd_bam, BAM servo (STS3215 "M1" defaults, Coulomb friction switched off), target 0: the arm settles
   where the servo torque balances gravity, S·(0 − φ) + m g r cos φ = 0, S = kt·V_s·kp·e_g/R
   (duty unsaturated); φ solved by fixed-point iteration.  Then with the default friction the rest
   angle lies in the friction band (m g r cos φ ∓ τ_f)/S (within 1 %), and the reported loads balance:
   servo + gravity ≈ 0 (the two-sided rows carry no axial torque). */
Test(avbd, bam_servo_static_balance_under_gravity) {
  rl_pair p;
  load(&p, MODEL("avbd_bam.xml"), NULL);
  rl_avbd_param prm = rl_avbd_default_param(p.m);
  prm.servo_model = RL_AVBD_SERVO_BAM;
  rl_avbd *am = build_prm(p.m, &prm);
  const rl_avbd_bam *b = &am->prm.bam;
  double S = b->kt * b->supply * b->kp * b->error_gain / b->R, tg = 0.5 * 9.81 * 0.3, phi_x = 0;
  for (int i = 0; i < 100; i++) phi_x = tg * cos(phi_x) / S;
  double phi[2];
  for (int pass = 0; pass < 2; pass++) {
    am->prm.bam.friction = pass ? (real)0.0515 : 0; /* a parameter changed between runs */
    rl_data *d = rl_data_alloc(p.m);
    rl_avbd_from_generalized(am, p.m, d);
    d->ctrl[0] = 0;
    for (int k = 0; k < 3000; k++) cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    phi[pass] = d->qpos[0];
    const rl_avbd_load *L = am->load;
    printf("avbd BAM static (%s, friction %.4f): phi %.6f rad (friction-free balance %.6f), qvel %.2e, loads: servo "
           "%.5f, friction %.5f, axial %.2e N m (gravity %.5f N m)\n",
           RL_PREC_NAME, (double)am->prm.bam.friction, phi[pass], phi_x, d->qvel[0], L->servo, L->friction, L->axial,
           tg * cos(phi[pass]));
    if (!pass) {
      cr_expect_leq(fabs(phi[0] - phi_x), 0.01 * phi_x);
      cr_expect_leq(fabs(L->servo + tg * cos(phi[0])), 0.01 * tg);
    } else {
      double lo = (tg * cos(phi[1]) - b->friction) / S, hi = (tg * cos(phi[1]) + b->friction) / S;
      cr_expect(phi[1] >= 0.99 * lo && phi[1] <= 1.01 * hi, "phi %.6f outside friction band [%.6f, %.6f]", phi[1], lo,
                hi);
      cr_expect_leq(fabs(L->servo + L->friction + tg * cos(phi[1])), 0.01 * tg);
    }
    rl_data_free(d);
  }
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* avbd_bam without gravity, target far ahead (duty saturated at max_duty): the speed settles at the
   back-EMF limit kt(V_s d_max − kt ω)/R − b_v ω − τ_f = 0, ω = (kt V_s d_max/R − τ_f)/(kt²/R + b_v). */
Test(avbd, bam_servo_no_load_speed) {
  rl_pair p;
  load(&p, MODEL("avbd_bam.xml"), NULL);
  p.m->opt.disableflags |= RL_DSBL_GRAVITY;
  rl_avbd_param prm = rl_avbd_default_param(p.m);
  prm.servo_model = RL_AVBD_SERVO_BAM;
  rl_avbd *am = build_prm(p.m, &prm);
  const rl_avbd_bam *b = &am->prm.bam;
  double w_x = (b->kt * b->supply * b->max_duty / b->R - b->friction) / (b->kt * b->kt / b->R + b->viscous);
  rl_data *d = rl_data_alloc(p.m);
  rl_avbd_from_generalized(am, p.m, d);
  d->ctrl[0] = 1000;
  for (int k = 0; k < 1500; k++) cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
  double w = d->qvel[0];
  printf("avbd BAM no-load speed (%s): %.5f rad/s (back-EMF limit %.5f), servo torque %.5f N m, %ld exhausted\n",
         RL_PREC_NAME, w, w_x, am->load[0].servo, am->exhausted);
  cr_expect_leq(fabs(w - w_x), 0.01 * w_x);
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

static void set_bam(rl_avbd_param *prm, real v) {
  (void)v;
  prm->servo_model = RL_AVBD_SERVO_BAM;
}

/* microduck standing on BAM servos (ctrl = 0) for 2 s at h = 1 ms */
Test(avbd, microduck_stands_bam_2s, .timeout = 300) {
  rl_pair p;
  rl_data *d;
  rl_avbd *am = microduck_1ms_with(&p, &d, set_bam, 0);
  double an = 0, it = 0, smax = 0;
  for (int k = 0; k < 2000; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    an = fmax(an, am->stat.anchor_err);
    it += am->stat.iterations;
  }
  for (int j = 0; j < am->njoint; j++) smax = fmax(smax, fabs(am->load[j].servo));
  printf("avbd microduck BAM (%s) 2 s at 1 ms: trunk z %.5f, max anchor error %.3e m, %.1f sweeps/step, %ld of %ld "
         "steps budget-exhausted, max |servo torque| %.4f N m\n",
         RL_PREC_NAME, d->qpos[2], an, it / 2000, am->exhausted, am->steps, smax);
  cr_expect_leq(an, TOL(1e-6, 1e-5));
  cr_expect_eq(am->exhausted, 0);
  cr_expect_gt(d->qpos[2], 0.25, "fell");
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* --- the KKT residuals split by unit: stationarity into force (N) and torque (N m), primal into length (m)
   and angle (rad) rows; the combined primal figure is their maximum (stationarity has no combined figure).  chain8 after 3 sweeps (tolerance 0) is far
   from converged, so every part is non-zero. */
Test(avbd, kkt_residuals_split_by_unit) {
  rl_pair p;
  rl_data *d;
  rl_avbd_param prm = avbd_load(&p, SCENE("chain8.xml"), 0);
  prm.iterations = 3;
  prm.tol_lin = prm.tol_ang = 0;
  prm.block = RL_AVBD_BLOCK_BODY; /* far from converged after 3 sweeps (articulation blocks: at the rounding) */
  rl_avbd *am = avbd_start(&p, &prm, &d);
  cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
  const rl_avbd_stat *st = &am->stat;
  cr_expect_eq(st->iterations, 3);
  cr_expect(st->kkt_stationarity_force > 0 && st->kkt_stationarity_torque > 0, "stationarity parts %g N, %g N m",
            (double)st->kkt_stationarity_force, (double)st->kkt_stationarity_torque);
  cr_expect(st->kkt_primal_lin > 0 && st->kkt_primal_ang > 0, "primal parts %g m, %g rad", (double)st->kkt_primal_lin,
            (double)st->kkt_primal_ang);
  cr_expect_eq(st->kkt_primal, fmax(st->kkt_primal_lin, st->kkt_primal_ang));
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* --- the optional OpenMP sweep: the bodies of one color on several threads give bit-identical poses,
   velocities, multipliers and statistics at any thread count (box_pyramid: 21 boxes, rl_collision contacts,
   several colors with many bodies each; microduck: joints, servos, ground contacts).  Without OpenMP in
   the build the threads setting is ignored and the runs are trivially equal; the test says which. */
static void run_threads(const char *model, int data_contacts, int threads, long n, real *out, long *iters) {
  rl_pair p;
  rl_data *d;
  rl_avbd_param prm = avbd_load(&p, model, 0);
  prm.contacts = data_contacts ? RL_AVBD_CONTACTS_DATA : RL_AVBD_CONTACTS_GROUND;
  prm.threads = threads;
  prm.block = RL_AVBD_BLOCK_BODY; /* the threads split the colored body sweep */
  rl_avbd *am = avbd_start(&p, &prm, &d);
  *iters = 0;
  for (long k = 0; k < n; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    *iters += am->stat.iterations + 1000L * am->stat.guarded;
  }
  for (int s = 0; s < am->nb; s++) {
    memcpy(out + 13 * s, am->pose[s].x, sizeof(real) * 3);
    memcpy(out + 13 * s + 3, am->pose[s].q, sizeof(real) * 4);
    memcpy(out + 13 * s + 7, am->vel + 6 * s, sizeof(real) * 6);
  }
  for (int r = 0; r < am->nrow; r++) out[13 * am->nb + r] = am->row[r].lambda;
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

Test(avbd, openmp_sweep_bit_identical_at_any_thread_count, .timeout = 300) {
  const char *built = rl_avbd_openmp() ? "with OpenMP" : "without OpenMP (threads ignored)";
  static const struct {
    const char *model;
    int data;
    long n;
  } cases[] = {{SCENE("box_pyramid.xml"), 1, 60}, {SCENE("microduck.xml"), 0, 60}};
  for (int c = 0; c < 2; c++) {
    real *ref = calloc(4096, sizeof(real)), *got = calloc(4096, sizeof(real));
    long it_ref, it;
    double w[5];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    run_threads(cases[c].model, cases[c].data, 1, cases[c].n, ref, &it_ref);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    w[1] = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    for (int t = 2; t <= 4; t++) {
      memset(got, 0, 4096 * sizeof(real));
      clock_gettime(CLOCK_MONOTONIC, &t0);
      run_threads(cases[c].model, cases[c].data, t, cases[c].n, got, &it);
      clock_gettime(CLOCK_MONOTONIC, &t1);
      w[t] = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
      cr_expect_eq(memcmp(ref, got, 4096 * sizeof(real)), 0, "%s: %d threads differ from 1 thread", cases[c].model, t);
      cr_expect_eq(it, it_ref, "%s: %d threads: sweeps/guards %ld vs %ld", cases[c].model, t, it, it_ref);
    }
    printf("avbd OpenMP sweep (%s, built %s): %s, %ld steps, 1 vs 2, 3, 4 threads bit-identical (wall %.2f / %.2f / "
           "%.2f / "
           "%.2f s on %ld cores; not a benchmark)\n",
           RL_PREC_NAME, built, cases[c].model, cases[c].n, w[1], w[2], w[3], w[4], sysconf(_SC_NPROCESSORS_ONLN));
    free(ref);
    free(got);
  }
}

/* ------------------------------------------- Chebyshev acceleration of the multipliers (cheb_rho) */

/* the multipliers' extrapolation acts on body sweeps (rl_avbd_param.cheb_rho) */
static void set_cheb_rho(rl_avbd_param *prm, real rho) {
  prm->cheb_rho = rho;
  prm->block = RL_AVBD_BLOCK_BODY;
}

/* microduck standing on its servos (ctrl = 0) for 10 s at 1 ms with cheb_rho = rho: max anchor error,
   budget-exhausted steps, mean sweeps per step, final trunk height */
static void cheb_microduck(real rho, double *anchor, long *exhausted, double *sweeps, double *z) {
  rl_pair p;
  rl_data *d;
  rl_avbd *am = microduck_1ms_with(&p, &d, set_cheb_rho, rho);
  double an = 0, it = 0;
  for (int k = 0; k < 10000; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    an = fmax(an, am->stat.anchor_err);
    it += am->stat.iterations;
  }
  *anchor = an;
  *exhausted = am->exhausted;
  *sweeps = it / 10000;
  *z = d->qpos[2];
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* chain8 after `warm` steps: the step solved by the dense KKT reference; AVBD from that state (fresh
   multipliers) with cheb_rho = rho, (1) with budgets k = 1..200 and tolerance 0: the first k whose iterate
   is within 1e-6 (m and rad) of the reference, (2) at the default tolerances: sweeps, convergence and
   distance (m, rad) */
static void cheb_chain8(real rho, int warm, int *k1e6, int *sweeps, int *converged, double dist[2]) {
  rl_pair p;
  rl_data *d;
  rl_avbd *am = avbd_open(&p, SCENE("chain8.xml"), 0, &d);
  am->prm.block = RL_AVBD_BLOCK_BODY;
  for (int k = 0; k < warm; k++) cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
  rl_avbd_to_generalized(am, p.m, d);
  real q0[64], v0[64];
  cr_assert_leq(p.m->nq, 64);
  memcpy(q0, d->qpos, sizeof(real) * (size_t)p.m->nq);
  memcpy(v0, d->qvel, sizeof(real) * (size_t)p.m->nv);
  rl_avbd_from_generalized(am, p.m, d);
  rl_avbd_ref ref;
  cr_assert_eq(rl_avbd_ref_solve(&ref, am, p.m, d), 0, "dense KKT solve failed (info %d)", ref.info);
  rl_avbd_param prm = am->prm;
  prm.cheb_rho = rho;
  update_stop(&prm); /* the converged-run figures below are the update test's */
  *k1e6 = -1;
  for (int k = 1; k <= 201; k++) {
    memcpy(d->qpos, q0, sizeof(real) * (size_t)p.m->nq);
    memcpy(d->qvel, v0, sizeof(real) * (size_t)p.m->nv);
    rl_avbd_from_generalized(am, p.m, d);
    am->prm = prm;
    if (k <= 200) { /* budget k, tolerance 0 */
      am->prm.iterations = k;
      am->prm.tol_lin = am->prm.tol_ang = 0;
    }
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    double dx, dth;
    rl_avbd_ref_distance(&ref, am, &dx, &dth);
    if (k <= 200 && *k1e6 < 0 && fmax(dx, dth) <= 1e-6) *k1e6 = k;
    if (k == 201) { /* the default tolerances */
      *sweeps = am->stat.iterations;
      *converged = am->stat.converged;
      dist[0] = dx;
      dist[1] = dth;
    }
  }
  rl_avbd_ref_free(&ref);
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* cheb_rho = 0.93 against off.  Measured (f64 / f32): microduck 117.2 → 61.3 / 10.7 → 7.5 sweeps per step,
   anchor 2.0e-8 m / 9.2e-6 m, 0 exhausted; chain8 sweeps to a 1e-6 distance 68 → 29 and 77 → 41 (f64),
   70 → 31 and 109 → 56 (f32), converged runs 107 → 61 and 127 → 79 (f64, distance to the reference
   2.6e-8 → 2.0e-9 m), 21 → 13 and 33 → 19 (f32).  f32 microduck gains only 1.43× (its looser tolerances
   stop it after ~11 sweeps, before the dual mode dominates). */
Test(avbd, chebyshev_multipliers_fewer_sweeps, .timeout = 600) {
  const real rho = (real)0.93;
  double an[2], sw[2], z[2];
  long ex[2];
  cheb_microduck(0, an, ex, sw, z);
  cheb_microduck(rho, an + 1, ex + 1, sw + 1, z + 1);
  printf(
      "avbd Chebyshev multipliers (%s) rho %.2f, microduck 10 s at 1 ms: %.1f → %.1f sweeps/step (%.2fx), max anchor "
      "error %.3e → %.3e m, %ld → %ld budget-exhausted steps, trunk z %.5f → %.5f\n",
      RL_PREC_NAME, (double)rho, sw[0], sw[1], sw[0] / sw[1], an[0], an[1], ex[0], ex[1], z[0], z[1]);
  cr_expect_leq(an[1], TOL(1e-6, 1e-5));
  cr_expect_eq(ex[1], 0);
  cr_expect_gt(z[1], 0.25, "fell");
  cr_expect_geq(sw[0] / sw[1], TOL(1.5, 1.3));
  const int warm[2] = {0, 100};
  for (int w = 0; w < 2; w++) {
    int k[2], n[2], conv[2];
    double dist[2][2];
    cheb_chain8(0, warm[w], k, n, conv, dist[0]);
    cheb_chain8(rho, warm[w], k + 1, n + 1, conv + 1, dist[1]);
    printf(
        "  chain8 step %d vs the dense KKT reference: sweeps to a 1e-6 distance %d → %d; converged run %d → %d sweeps "
        "(converged %d → %d), distance %.2e m / %.2e rad → %.2e m / %.2e rad\n",
        warm[w] + 1, k[0], k[1], n[0], n[1], conv[0], conv[1], dist[0][0], dist[0][1], dist[1][0], dist[1][1]);
    cr_expect(k[1] > 0 && k[0] > 0);
    cr_expect_geq((double)k[0] / k[1], 1.5, "sweeps to 1e-6: %d off, %d on", k[0], k[1]);
    cr_expect(conv[1]);
    cr_expect_geq((double)n[0] / n[1], 1.4, "converged run: %d off, %d on", n[0], n[1]);
    /* the bounds of dense_vs_avbd: within a few tol of the fixed point (f32: plus pose rounding) */
    cr_expect_leq(dist[1][0], TOL(1e2 * 1e-8, 1e-5));
    cr_expect_leq(dist[1][1], TOL(1e2 * 1e-8, 1e-4));
  }
}

/* --opt avbd_iterations / avbd_tolerance / avbd_cheb_rho reach rl_avbd_default_param and through it the built
   parameters (tol_ang keeps its default ratio to tol_lin); unset, the defaults stay */
Test(avbd, model_options_set_the_parameters) {
  rl_pair p;
  load(&p, SCENE("pendulum.xml"), NULL);
  rl_avbd *am = build(p.m);
  rl_avbd_param def = am->prm;
  rl_avbd_free(am);
  rl_pair_free(&p);
  const char *opts[] = {"avbd_iterations=77", "avbd_tolerance=2e-7", "avbd_cheb_rho=0.93"};
  for (int k = 0; k < 3; k++) {
    load(&p, SCENE("pendulum.xml"), opts[k]);
    am = build(p.m);
    const rl_avbd_param *q = &am->prm;
    cr_expect_eq(q->iterations, k == 0 ? 77 : def.iterations, "%s", opts[k]);
    cr_expect_eq(q->tol_lin, k == 1 ? (real)2e-7 : def.tol_lin, "%s", opts[k]);
    cr_expect(fabs((double)q->tol_ang - (k == 1 ? 2e-7 * (double)(def.tol_ang / def.tol_lin) : (double)def.tol_ang)) <=
                  1e-6 * (double)q->tol_ang,
              "%s: tol_ang %g", opts[k], (double)q->tol_ang);
    cr_expect_eq(q->cheb_rho, k == 2 ? (real)0.93 : def.cheb_rho, "%s", opts[k]);
    rl_avbd_free(am);
    rl_pair_free(&p);
  }
}

/* the stopping test: the distance test by default; --opt avbd_stop=update selects the update test and
   avbd_stop=distance keeps the distance test */
Test(avbd, stop_option_default_is_distance) {
  const char *opts[] = {NULL, "avbd_stop=update", "avbd_stop=distance", "avbd_stop=certified"};
  const int want[] = {RL_AVBD_STOP_DISTANCE, RL_AVBD_STOP_UPDATE, RL_AVBD_STOP_DISTANCE, RL_AVBD_STOP_CERTIFIED};
  for (int k = 0; k < 4; k++) {
    rl_pair p;
    load(&p, SCENE("pendulum.xml"), opts[k]);
    rl_avbd *am = build(p.m);
    cr_expect_eq(am->prm.stop, want[k], "%s: stop %d", opts[k] ? opts[k] : "(no option)", am->prm.stop);
    rl_avbd_free(am);
    rl_pair_free(&p);
  }
}

/* the certified stop only refuses stops: where the contacts' linearized problem agrees with the iterate it stops where
   the distance test stops, on the same iterate (quadruped12 standing, 1 s: no stop refused, every pose bit for bit);
   built with another test it has no scratch (ncert 0) */
Test(avbd, certified_stop_refuses_nothing_on_a_settled_quadruped) {
  rl_pair pd, pc;
  load(&pd, SCENE("quadruped12.xml"), "avbd_stop=distance");
  load(&pc, SCENE("quadruped12.xml"), "avbd_stop=certified");
  rl_avbd *ad = build(pd.m), *ac = build(pc.m);
  cr_expect_eq(ad->ncert, 0);
  cr_expect(ac->ncert > 0);
  rl_data *dd = rl_data_alloc(pd.m), *dc = rl_data_alloc(pc.m);
  rl_avbd_from_generalized(ad, pd.m, dd);
  rl_avbd_from_generalized(ac, pc.m, dc);
  int refused = 0, same = 1, steps = (int)lround(1.0 / (double)pd.m->opt.timestep);
  for (int k = 0; k < steps; k++) {
    rl_avbd_step(ad, pd.m, dd);
    rl_avbd_step(ac, pc.m, dc);
    refused += ac->stat.refused;
    same &= ad->stat.iterations == ac->stat.iterations;
    for (int i = 0; i < pd.m->nq; i++) same &= dd->qpos[i] == dc->qpos[i];
  }
  cr_expect_eq(refused, 0, "%s: %d stops refused", RL_PREC_NAME, refused);
  cr_expect(same, "%s: the certified trajectory left the distance test's", RL_PREC_NAME);
  rl_data_free(dd);
  rl_data_free(dc);
  rl_avbd_free(ad);
  rl_avbd_free(ac);
  rl_pair_free(&pd);
  rl_pair_free(&pc);
}

/* rl_avbd_default_param picks the contact source by the model: rl_collision's where two geoms on different
   dynamic bodies pass the contype/conaffinity filter (box_stack), else the own ground contacts (pendulum,
   the single sphere of spin_sphere) */
Test(avbd, default_param_picks_contact_source) {
  static const struct {
    const char *model;
    int pairs;
  } cases[] = {{SCENE("box_stack.xml"), 1}, {SCENE("pendulum.xml"), 0}, {MODEL("spin_sphere.xml"), 0}};
  for (int k = 0; k < 3; k++) {
    rl_pair p;
    load(&p, cases[k].model, NULL);
    rl_avbd_param prm = rl_avbd_default_param(p.m);
    printf("avbd default contacts (%s) %s: %s\n", RL_PREC_NAME, cases[k].model,
           prm.contacts == RL_AVBD_CONTACTS_DATA ? "rl_collision" : "own ground");
    cr_expect_eq(rl_avbd_dynamic_pairs(p.m), cases[k].pairs, "%s", cases[k].model);
    cr_expect_eq(prm.contacts, cases[k].pairs ? RL_AVBD_CONTACTS_DATA : RL_AVBD_CONTACTS_GROUND, "%s", cases[k].model);
    rl_pair_free(&p);
  }
}

/* Static terrain that is not a plane (a box block, a capsule log): the default contact source is rl_collision, and
   a cube and a sphere dropped from 5 cm come to rest on top of them (centres at z = 0.25), not on the floor
   below (z = 0.05, where a solver that tests support points against planes only would put them). */
Test(avbd, rests_on_static_box_and_capsule) {
  rl_pair p;
  load(&p, MODEL("avbd_box_on_block.xml"), NULL);
  rl_avbd_param prm = rl_avbd_default_param(p.m);
  cr_assert_eq(rl_avbd_dynamic_pairs(p.m), 0);
  cr_expect_eq(prm.contacts, RL_AVBD_CONTACTS_DATA);
  rl_data *d;
  rl_avbd *am = avbd_start(&p, &prm, &d);
  double pen = 0;
  for (int k = 0; k < 1000; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    pen = fmax(pen, am->stat.penetration);
  }
  printf("avbd on static box / capsule (%s), 1 s: cube z %.6f, sphere z %.6f (0.25), max penetration %.2e m\n",
         RL_PREC_NAME, d->qpos[2], d->qpos[9], pen);
  cr_expect_leq(fabs(d->qpos[2] - 0.25), 1e-3);
  cr_expect_leq(fabs(d->qpos[9] - 0.25), 1e-3);
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* after rl_avbd_step, d holds the stepped state as rl_avbd_to_generalized writes it (nothing stale), and a
   second write-back changes no bit */
Test(avbd, step_leaves_data_current) {
  rl_pair p;
  rl_data *d;
  rl_avbd *am = avbd_open(&p, SCENE("box_stack.xml"), 0, &d);
  cr_assert_eq(am->prm.contacts, RL_AVBD_CONTACTS_DATA);
  for (int k = 0; k < 20; k++) cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
  uint64_t h = rl_state_hash(p.m, d);
  double t = d->time;
  rl_avbd_to_generalized(am, p.m, d);
  printf("avbd box_stack (%s) after 20 steps: t %.4f s, state hash %016llx, unchanged by a second write-back: %d\n",
         RL_PREC_NAME, t, (unsigned long long)h, rl_state_hash(p.m, d) == h);
  cr_expect_eq(rl_state_hash(p.m, d), h);
  cr_expect_eq(t, (double)am->time, "d->time %.17g, AVBD time %.17g", t, (double)am->time);
  cr_expect_eq(am->steps, 20);
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* --- the dense reference against AVBD solved to rounding, on the robot scenes (compound joints, limits,
   servos, contacts with the active set of AVBD's final iterate).  After WARM default steps (a loaded,
   moving state with contacts made), one step is solved with a budget of 4000 iterations and tolerance 1e-15
   (the update test: iterations until the updates are at rounding); the dense KKT solve of the same step
   (rl_avbd_ref_begin before, rl_avbd_ref_finish after) must agree to 1e-10 m / rad.  Then each ingredient
   is perturbed in the reference's input and the distance must grow past 1e-8: a servo's control by 1e-3, a
   compound coordinate's step start by 1e-6 rad; and the active contacts dropped from the engine's active set,
   which the reference's complementarity phase must find again (the same solution to 1e-10). */
#if defined(RL_REAL_F64)
static double dense_tight_distance(rl_avbd_ref *ref, rl_avbd *am, const rl_model *m, rl_data *d) {
  double dx, dth;
  cr_assert_eq(rl_avbd_ref_finish(ref, am, m, d), 0, "dense KKT solve failed (info %d)", ref->info);
  rl_avbd_ref_distance(ref, am, &dx, &dth);
  return fmax(dx, dth);
}

static void dense_tight(const char *model, const char *name, int block, int warm, int check_q) {
  rl_pair p;
  rl_data *d;
  rl_avbd_param prm = avbd_load(&p, model, 0);
  prm.block = block;
  rl_avbd *am = avbd_start(&p, &prm, &d);
  for (int k = 0; k < warm; k++) cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
  am->prm.iterations = 4000;
  am->prm.tol_lin = am->prm.tol_ang = (real)1e-15;
  am->prm.stop = RL_AVBD_STOP_UPDATE;
  /* the step rl_avbd_step takes: contacts loaded at the step start (DATA) or made in the step (GROUND) */
  if (am->prm.contacts == RL_AVBD_CONTACTS_DATA) {
    rl_avbd_to_generalized(am, p.m, d);
    rl_kinematics(p.m, d);
    rl_collision(p.m, d);
    rl_avbd_load_contacts(am, p.m, d);
  }
  rl_avbd_ref ref, ref_u, ref_q;
  cr_assert_eq(rl_avbd_ref_begin(&ref, am, p.m, d), 0);
  /* perturbed step starts: a servo's control +1e-3, a compound coordinate +1e-6 (its C⁰ then ≠ 0) */
  int has_u = p.m->nu > 0, has_q = am->ncmp > 0;
  if (has_u) {
    real u0 = d->ctrl[0];
    d->ctrl[0] += (real)1e-3;
    cr_assert_eq(rl_avbd_ref_begin(&ref_u, am, p.m, d), 0);
    d->ctrl[0] = u0;
  }
  if (has_q) {
    int adr = p.m->jnt_qposadr[am->cmp[0].jnt[am->cmp[0].n - 1]];
    real q0 = d->qpos[adr];
    d->qpos[adr] += (real)1e-6;
    cr_assert_eq(rl_avbd_ref_begin(&ref_q, am, p.m, d), 0);
    d->qpos[adr] = q0;
  }
  cr_assert_eq(rl_avbd_step_maximal(am, p.m, d), RL_OK);
  double dist = dense_tight_distance(&ref, am, p.m, d);
  printf("avbd dense reference vs AVBD to rounding, %s (%s, step %d): %d rows (%d active one-sided/dry, %d slipping, "
         "%d omitted), %d Newton iterations, primal %.1e, stationarity %.1e N / %.1e N m; AVBD %d iterations "
         "(converged %d), %d contacts, %d compound joints: distance %.2e\n",
         name, block ? "articulation" : "body", warm + 1, ref.nrow, ref.active, ref.slipping, ref.omitted,
         ref.iterations, ref.primal, ref.stationarity[0], ref.stationarity[1], am->stat.iterations, am->stat.converged,
         am->ncon, am->ncmp, dist);
  cr_expect_eq(ref.omitted, 0);
  cr_expect_leq(ref.primal, 1e-12);
  cr_expect_leq(dist, 1e-10, "%s: AVBD's converged iterate is %.2e from the dense solution", name, dist);
  if (has_u) {
    double du = dense_tight_distance(&ref_u, am, p.m, d);
    printf("  perturbed: ctrl[0] + 1e-3: distance %.2e\n", du);
    cr_expect_gt(du, 1e-8, "%s: the servo term does not reach the reference (%.2e)", name, du);
    rl_avbd_ref_free(&ref_u);
  }
  if (has_q) {
    double dq = dense_tight_distance(&ref_q, am, p.m, d);
    printf("  perturbed: compound coordinate + 1e-6: distance %.2e\n", dq);
    if (check_q) cr_expect_gt(dq, 1e-8, "%s: the compound rows do not reach the reference (%.2e)", name, dq);
    rl_avbd_ref_free(&ref_q);
  }
  /* every active contact dropped from the engine's active set (normal multipliers zeroed in the engine's state):
     the reference's first phase then solves without them, its solution penetrates, and its second phase (the
     step's complementarity conditions) must find them again — the same solution, with those rows changed */
  real lsave[256];
  int nc = am->ncon < 256 ? am->ncon : 256, nact = 0;
  for (int i = 0; i < nc; i++) {
    lsave[i] = am->con[i].lambda[0];
    nact += lsave[i] < 0;
    am->con[i].lambda[0] = 0;
  }
  if (nact > 0) {
    double dc = dense_tight_distance(&ref, am, p.m, d);
    printf("  perturbed: %d active contacts dropped from the engine's active set: distance %.2e, %d rows found in "
           "another state, basis %d\n",
           nact, dc, ref.refined, ref.basis);
    cr_expect_eq(ref.basis, RL_AVBD_REF_SOLVED, "%s: the complementarity phase did not solve the step", name);
    cr_expect_geq(ref.refined, nact, "%s: %d dropped contacts, %d rows changed state", name, nact, ref.refined);
    cr_expect_leq(dc, 1e-10, "%s: without the engine's contacts the reference lands %.2e away", name, dc);
  }
  for (int i = 0; i < nc; i++) am->con[i].lambda[0] = lsave[i];
  rl_avbd_ref_free(&ref);
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* Articulation blocks, which converge like Newton (the body sweeps are printed by hand only: at 4000
   sweeps quadruped12 and biped are still 3.6e-8 / 5e-12 from the solution, microduck's dry rows stick every
   joint and neither mode converges).  Measured: 8.5e-16 (quadruped12), 3.2e-15 (biped), 7.8e-16
   (planar_walker).  planar_walker's root (slide, slide, hinge to the world) carries no damping, armature or
   stiffness, so a start coordinate moved by 1e-6 is absorbed by the coordinate unknowns and the poses do not
   move (7.8e-16): that perturbation is not checked there. */
Test(avbd, dense_reference_robots_to_rounding) {
  dense_tight(SCENE("quadruped12.xml"), "quadruped12", RL_AVBD_BLOCK_ARTICULATION, 50, 1);
  dense_tight(SCENE("biped.xml"), "biped", RL_AVBD_BLOCK_ARTICULATION, 50, 1);
  dense_tight(SCENE("planar_walker.xml"), "planar_walker", RL_AVBD_BLOCK_ARTICULATION, 50, 0);
}
#endif
