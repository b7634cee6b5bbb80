/* tolerances.h — the one table of verify tolerances (relative, ∞-norm), per stage and precision.
 * RL_TOL_SCALE in the environment multiplies every entry (e.g. to tighten a regression run).
 *
 * f32: 1e-5 on every smooth stage, including those through M⁻¹ (smooth: qacc_smooth; integrate: qvel
 * after one step).  They meet it because the bias forces and M⁻¹ are evaluated at each body's own COM
 * (engine/smooth_local.c): in MuJoCo's com frame a float M⁻¹ stage reached 2e-5 on the humanoid.
 * tests/test_floor.c measures the f32 error against the floor of any float engine (the state rounded
 * to float, MuJoCo in double), see docs/verify.md. */
#ifndef RL_TOLERANCES_H
#define RL_TOLERANCES_H

#include <stdlib.h>
#include "harness.h"

#if defined(RL_REAL_F32)
#define RL_IS_F32 1
#else
#define RL_IS_F32 0
#endif

/* RL_TOL_SCALE from the environment (1 when unset or not positive) */
static inline double rl_verify_tolerance_scale(void) {
  const char *s = getenv("RL_TOL_SCALE");
  double scale = s ? atof(s) : 1.0;
  return scale > 0 ? scale : 1.0;
}

/* k of the float floors (f32): a row (or a contact's quantity) whose float floor F — the error of the independent
   reference itself when its inputs are held in float — exceeds tolerance/k is judged against k·F instead of the
   tolerance.  F is one realization of float rounding; an engine computing in float adds a few roundings of its
   own per quantity, and the measured ratios (docs/verify.md, "Float floors") reach 1.5 on the composite samples. */
#define RL_FLOOR_K 4

static inline double rl_verify_tolerance(int stage, int f32) {
  /*                             f64     f32 */
  static const double tol[RL_NSTAGE][2] = {
      [RL_STAGE_KINEMATICS] = {1e-12, 1e-5},
      [RL_STAGE_COM] = {1e-12, 1e-5},
      [RL_STAGE_TENDON] = {1e-12, 1e-5},
      [RL_STAGE_INERTIA] = {1e-12, 1e-5},
      [RL_STAGE_BIAS] = {1e-12, 1e-5},
      [RL_STAGE_PASSIVE] = {1e-12, 1e-5},
      [RL_STAGE_ACTUATION] = {1e-12, 1e-5},
      [RL_STAGE_SMOOTH] = {1e-12, 1e-5},
      [RL_STAGE_INTEGRATE] = {1e-12, 1e-5},
      /* collision: analytic pairs ≤ 1e-10 in f64; MPR pairs carry their own per-quantity tolerance */
      [RL_STAGE_COLLISION] = {1e-10, 1e-4},
      /* constraints: rows 1e-10, solve 1e-9, one full step 1e-8 (f64).  f32 step: one step through stiff
         soft contacts amplifies float rounding of the contact forces; measured worst qvel 3.7e-2
         (box_pyramid, elliptic), 2.5e-3 (humanoid100): 5e-2 is the measured scale, not an accuracy claim */
      [RL_STAGE_CONSTRAINT] = {1e-10, 1e-4},
      [RL_STAGE_SOLVE] = {1e-9, 1e-3},
      [RL_STAGE_STEP] = {1e-8, 5e-2},
  };
  return tol[stage][f32 ? 1 : 0] * rl_verify_tolerance_scale();
}

#endif
