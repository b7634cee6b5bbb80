/* rl_test_avbd.h — what the AVBD test suites share: the per-precision tolerance pick and building AVBD from a
 * loaded model (the test fails with the build error).  Include after rl_test_pair.h and rl_avbd.h. */
#ifndef RL_TEST_AVBD_H
#define RL_TEST_AVBD_H

#include <criterion/criterion.h>
#include "rl_avbd.h"

/* a bound per working precision */
#if defined(RL_REAL_F64)
#define TOL(f64, f32) (f64)
#else
#define TOL(f64, f32) (f32)
#endif

/* AVBD of m with parameters PRM (fails the test with the build error) */
static inline rl_avbd *build_prm(const rl_model *m, const rl_avbd_param *prm) {
  char err[256];
  rl_avbd *am = rl_avbd_build(m, prm, err, sizeof err);
  cr_assert_not_null(am, "%s", err);
  return am;
}

/* AVBD of m with its default parameters */
static inline rl_avbd *build(const rl_model *m) {
  rl_avbd_param prm = rl_avbd_default_param(m);
  return build_prm(m, &prm);
}

/* The update stopping test (last sweep's update and residuals ≤ tol), for tests whose subject is not the
   stop (standing, servos, mocap tracking, sweep counts, scaling) and whose bounds were set under it.  The
   default distance test exhausts the budget on their scenes, and says so: body sweeps with the coarse step
   make updates that do not shrink monotonically, so the tail estimate sees no contraction (microduck f64
   1 s at 2 ms: 496 of 501 steps unconverged, 497 sweeps/step), and in f32 the updates reach the rounding
   noise of the poses, which does not contract (pendulum f32 1 s: 843 of 1001). */
static inline void update_stop(rl_avbd_param *prm) { prm->stop = RL_AVBD_STOP_UPDATE; }

/* AVBD of m with its default parameters under the update stopping test (update_stop) */
static inline rl_avbd *build_update_stop(const rl_model *m) {
  rl_avbd_param prm = rl_avbd_default_param(m);
  update_stop(&prm);
  return build_prm(m, &prm);
}

#endif
