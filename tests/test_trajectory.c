/* test_trajectory.c — constraint-free trajectories: rigidlab (f64) vs MuJoCo over 1000 steps, from the
 * same initial state, with each model's integrator (and RK4 forced), relative error ≤ 1e-9 at every step:
 * max_t ‖x_ours(t) − x_mj(t)‖∞ / max(‖x_mj(t)‖∞, 1) for qpos and qvel. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include "pair.h"
#include "rl_test_pair.h"
#include "states.h"

static double vec_err(const real *a, const double *b, int n) {
  double e = 0, mag = 1;
  for (int i = 0; i < n; i++) {
    double x = fabs((double)a[i] - b[i]);
    if (!(x <= e)) e = x;
    if (fabs(b[i]) > mag) mag = fabs(b[i]);
  }
  return e / mag;
}

/* Worst relative trajectory error over 1000 steps; rigidlab's time step is scaled by dt_scale
   (1 for the comparison, ≠ 1 to check that the comparison can fail). */
static double run_scaled(const char *model, const char *key, const char *opt, double dt_scale) {
  char err[1024];
  rl_pair p;
  load(&p, model, opt);
  cr_assert(rl_constraint_free(&p, err, sizeof err), "%s is not constraint-free: %s", model, err);
  p.m->opt.timestep *= (real)dt_scale;
  mjData *mjd = mj_makeData(p.mjm);
  rl_data *d = rl_data_alloc(p.m);
  if (key) mj_resetDataKeyframe(p.mjm, mjd, rl_find_key(p.mjm, key));
  rl_set_state(&p, d, mjd, mjd->qpos, mjd->qvel, mjd->ctrl);
  double worst = 0;
  for (int s = 0; s < 1000; s++) {
    mj_step(p.mjm, mjd);
    rl_step_smooth(p.m, d);
    double e = fmax(vec_err(d->qpos, mjd->qpos, p.m->nq), vec_err(d->qvel, mjd->qvel, p.m->nv));
    if (!(e <= worst)) worst = e;
  }
  rl_data_free(d);
  mj_deleteData(mjd);
  rl_pair_free(&p);
  printf("trajectory %-60s %-18s worst rel err %.3e\n", model, opt ? opt : "", worst);
  return worst;
}

static double run(const char *model, const char *key, const char *opt) { return run_scaled(model, key, opt, 1); }

#define SCENE(name) SRCDIR "/experiments/scenes/" name

Test(trajectory, pendulum_chain_tumbling_match_mujoco_1e9) {
  const char *opts[] = {NULL, "integrator=rk4"};
  for (int o = 0; o < 2; o++) {
    cr_expect_leq(run(SCENE("pendulum.xml"), NULL, opts[o]), 1e-9);
    cr_expect_leq(run(SCENE("double_pendulum.xml"), NULL, opts[o]), 1e-9);
    cr_expect_leq(run(SCENE("chain8.xml"), NULL, opts[o]), 1e-9);
    cr_expect_leq(run(SCENE("tumbling.xml"), "spin", opts[o]), 1e-9);
    cr_expect_leq(run(SRCDIR "/tests/models/nocontact_tree.xml", NULL, opts[o]), 1e-9);
  }
}

/* The comparison can fail: a 1e-6 change of the time step in one engine only is caught. */
Test(trajectory, detects_a_perturbed_model) {
  double worst = run_scaled(SCENE("double_pendulum.xml"), NULL, NULL, 1 + 1e-6);
  cr_expect_gt(worst, 1e-9, "perturbation not detected: %g", worst);
}

/* NaN/Inf in a state: counted warning, reset to qpos0, the step goes on finite (never a crash). */
Test(trajectory, nan_state_is_counted_and_reset) {
  rl_pair p;
  load(&p, SCENE("chain8.xml"), NULL);
  rl_data *d = rl_data_alloc(p.m);
  d->qpos[3] = NAN;
  rl_step_smooth(p.m, d);
  cr_expect_eq(d->warning[RL_WARN_BADQPOS], 1);
  d->qvel[2] = INFINITY;
  rl_step_smooth(p.m, d);
  cr_expect_eq(d->warning[RL_WARN_BADQVEL], 1);
  for (int i = 0; i < p.m->nq; i++) cr_expect(isfinite(d->qpos[i]), "qpos[%d] not finite", i);
  for (int i = 0; i < p.m->nv; i++) cr_expect(isfinite(d->qvel[i]), "qvel[%d] not finite", i);
  /* a run from the same state is bit-identical (state hash) */
  rl_data *e = rl_data_alloc(p.m);
  rl_data_reset(p.m, d);
  for (int s = 0; s < 200; s++) {
    rl_step_smooth(p.m, d);
    rl_step_smooth(p.m, e);
  }
  cr_expect_eq(rl_state_hash(p.m, d), rl_state_hash(p.m, e), "same run, different state hash");
  rl_data_free(e);
  rl_data_free(d);
  rl_pair_free(&p);
}
