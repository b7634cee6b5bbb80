/* test_verify.c — stage-by-stage agreement with MuJoCo 2.2.2 (100 states per model, both precisions),
 * through the same code path as `rigidlab verify`.  Fails with the verify table in the log. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "csv.h"
#include "harness.h"

static int verify_opt(const char *model, int f32, const char *opt) {
  rl_verify_args a = {0};
  a.c.model = model;
  if (opt) a.c.opts[a.c.nopts++] = opt;
  a.c.quiet = 0;
  a.states = 100;
  a.seed = 7;
  a.stages = (1u << RL_NSTAGE) - 1;
  fflush(stdout);
  return f32 ? rl32_cmd_verify(&a) : rl64_cmd_verify(&a);
}

static int verify(const char *model, int f32) { return verify_opt(model, f32, NULL); }

/* f64, every stage, default state sampling (seed 1), n states */
static int verify_seed1_n(const char *model, int n) {
  rl_verify_args a = {0};
  a.c.model = model;
  a.states = n;
  a.seed = 1;
  a.stages = (1u << RL_NSTAGE) - 1;
  fflush(stdout);
  return rl64_cmd_verify(&a);
}
static int verify_seed1(const char *model) { return verify_seed1_n(model, 100); }

#define SCENE(name)  SRCDIR "/experiments/scenes/" name
#define TMODEL(name) SRCDIR "/tests/models/" name
#define HUMANOID     "/usr/share/mujoco/model/humanoid/humanoid.xml"
#define HUMANOID100  "/usr/share/mujoco/model/humanoid100/humanoid100.xml"

static const char *const all_models[] = {SCENE("pendulum.xml"),
                                         SCENE("double_pendulum.xml"),
                                         SCENE("chain8.xml"),
                                         SCENE("tumbling.xml"),
                                         SCENE("incline.xml"),
                                         SCENE("box_stack.xml"),
                                         SCENE("microduck.xml"),
                                         TMODEL("slider_ball.xml"),
                                         TMODEL("gears.xml"),
                                         TMODEL("nocontact_tree.xml"),
                                         TMODEL("equality.xml"),
                                         SCENE("box_pyramid.xml"),
                                         TMODEL("contact_condim.xml"),
                                         TMODEL("weld_torquescale.xml"),
                                         TMODEL("mesh_pile.xml"),
                                         TMODEL("fourbar.xml"),
                                         TMODEL("tumbling_mass.xml"),
                                         TMODEL("exclude_walker.xml"),
                                         TMODEL("swimmer_fluid.xml"),
                                         TMODEL("muscle_arm.xml"),
                                         TMODEL("mocap_gripper.xml"),
                                         TMODEL("transmissions.xml"),
                                         TMODEL("contact_pair.xml"),
                                         TMODEL("light_arm.xml"),
                                         TMODEL("implicit_arm.xml"),
                                         TMODEL("adhesion_gripper.xml"),
                                         TMODEL("fluid_ellipsoid.xml"),
                                         TMODEL("hfield_terrain.xml"),
                                         TMODEL("override_contacts.xml"),
                                         TMODEL("override_broadphase.xml"),
                                         TMODEL("multiccd.xml"),
                                         TMODEL("pairs_predefined.xml"),
                                         TMODEL("pairs_dynamic.xml"),
                                         NULL};

/* the contact models again with the elliptic cone (every stage: rows, solve, step) */
Test(verify_f64, elliptic_cone) {
  static const char *const models[] = {
      SCENE("incline.xml"),         SCENE("box_stack.xml"),  SCENE("box_pyramid.xml"),     SCENE("microduck.xml"),
      TMODEL("contact_condim.xml"), TMODEL("mesh_pile.xml"), TMODEL("exclude_walker.xml"),
      TMODEL("hfield_terrain.xml"), NULL};
  for (int k = 0; models[k]; k++)
    cr_expect_eq(verify_opt(models[k], 0, "cone=elliptic"), 0, "f64 elliptic verify failed on %s", models[k]);
  if (!access(HUMANOID, R_OK)) cr_expect_eq(verify_opt(HUMANOID, 0, "cone=elliptic"), 0, "f64 elliptic humanoid");
}

Test(verify_f64, every_model_every_stage_1e12) {
  for (int k = 0; all_models[k]; k++)
    cr_expect_eq(verify(all_models[k], 0), 0, "f64 verify failed on %s", all_models[k]);
}

/* activations, fluid forces and mocap poses through RK4's stages (the Euler list above covers Euler) */
Test(verify_f64, rk4_activation_fluid_mocap) {
  static const char *const models[] = {TMODEL("swimmer_fluid.xml"),    TMODEL("muscle_arm.xml"),
                                       TMODEL("mocap_gripper.xml"),    TMODEL("transmissions.xml"),
                                       TMODEL("fluid_ellipsoid.xml"), NULL};
  for (int k = 0; models[k]; k++)
    cr_expect_eq(verify_opt(models[k], 0, "integrator=rk4"), 0, "f64 rk4 verify failed on %s", models[k]);
}

/* MuJoCo 2.2.2's implicit integrator on models built for the others: muscles (the muscle gain's velocity
   derivative), fluid forces (inertia box and ellipsoid), tendons, and a walker with free and ball joints in contact (qDeriv row, step) */
Test(verify_f64, implicit_on_other_models) {
  static const char *const models[] = {TMODEL("muscle_arm.xml"), TMODEL("swimmer_fluid.xml"),
                                       TMODEL("tendon_finger.xml"), TMODEL("exclude_walker.xml"),
                                       TMODEL("adhesion_gripper.xml"), TMODEL("fluid_ellipsoid.xml"), NULL};
  for (int k = 0; models[k]; k++) {
    cr_expect_eq(verify_opt(models[k], 0, "integrator=implicit"), 0, "f64 implicit verify failed on %s", models[k]);
    cr_expect_eq(verify_opt(models[k], 1, "integrator=implicit"), 0, "f32 implicit verify failed on %s", models[k]);
  }
}

/* MuJoCo's samples with mocap bodies (composites), a slider-crank and muscles on tendons */
Test(verify_f64, mocap_crank_muscle_samples) {
  static const char *const models[] = {"/usr/share/mujoco/model/composite/rope.xml",
                                       "/usr/share/mujoco/model/slider_crank/slider_crank.xml",
                                       "/usr/share/mujoco/model/tendon_arm/arm26.xml", NULL};
  if (access(models[0], R_OK)) cr_skip_test("libmujoco-samples not installed");
  for (int k = 0; models[k]; k++) cr_expect_eq(verify(models[k], 0), 0, "f64 verify failed on %s", models[k]);
}

/* MuJoCo's adhesion sample: capsule fingers across the margin/gap pads of a box gripper.  Seed 1 holds a state
   where the capsule-pad contacts are an exact tie (same depth along two normals) that MuJoCo's own kinematics
   and rigidlab's, 1e-16 apart, break differently; the body transmission is compared on MuJoCo's contact list,
   so actuator_moment, actuator_velocity, qfrc_actuator and qacc_smooth agree to 1e-12 on it too. */
Test(verify_f64, adhesion_sample) {
  static const char *const model = "/usr/share/mujoco/model/adhesion/active_adhesion.xml";
  if (access(model, R_OK)) cr_skip_test("libmujoco-samples not installed");
  cr_expect_eq(verify_seed1(model), 0, "f64 verify failed on active_adhesion");
}

/* MuJoCo's mug sample: its nconmax (100) is below the 136 contacts MuJoCo finds on the drawn states; verify sizes
   MuJoCo's buffers from a probe of those states, so no state is left out for capacity (it was 42 %, a failure) */
Test(verify_f64, mug_sample_capacity) {
  static const char *const model = "/usr/share/mujoco/model/mug/mug.xml";
  if (access(model, R_OK)) cr_skip_test("libmujoco-samples not installed");
  cr_expect_eq(verify_seed1(model), 0, "f64 verify failed on mug");
}

/* panda_like over 50 states (seed 1): 2 states where MuJoCo's own box-box contact count differs between its frames
   and rigidlab's (5.6e-16 apart) are left out as sensitive, not failed; every other step agrees */

Test(verify_f64, panda_like_50_states) {
  cr_expect_eq(verify_seed1_n(SRCDIR "/tests/public/panda_like.xml", 50), 0, "f64 verify failed on panda_like");
}

Test(verify_f64, humanoid_models) {
  if (access(HUMANOID, R_OK)) cr_skip_test("libmujoco-samples not installed");
  cr_expect_eq(verify(HUMANOID, 0), 0, "f64 verify failed on humanoid");
  cr_expect_eq(verify(HUMANOID100, 0), 0, "f64 verify failed on humanoid100");
}

/* f32: the tolerance table of reference/verify/tolerances.h (1e-5 on every smooth stage, M⁻¹ included), on every
   model of the f64 list. */
Test(verify_f32, bundled_scenes_and_humanoid) {
  for (int k = 0; all_models[k]; k++)
    cr_expect_eq(verify(all_models[k], 1), 0, "f32 verify failed on %s", all_models[k]);
  if (!access(HUMANOID, R_OK)) {
    cr_expect_eq(verify(HUMANOID, 1), 0, "f32 verify failed on humanoid");
    cr_expect_eq(verify(HUMANOID100, 1), 0, "f32 verify failed on humanoid100");
  }
}

/* tendon models (fixed and spatial tendons, wraps, pulleys, tendon actuators, limits, frictionloss and
   equalities), every stage, both precisions */
static const char *const tendon_models[] = {TMODEL("tendon_arm.xml"),   TMODEL("tendon_finger.xml"),
                                            TMODEL("tendon_limit.xml"), TMODEL("tendon_spring.xml"),
                                            TMODEL("tendon_chain.xml"), NULL};
Test(verify_f64, tendon_models) {
  for (int k = 0; tendon_models[k]; k++)
    cr_expect_eq(verify(tendon_models[k], 0), 0, "f64 verify failed on %s", tendon_models[k]);
  cr_expect_eq(verify_opt(TMODEL("tendon_limit.xml"), 0, "cone=elliptic"), 0, "f64 elliptic tendon_limit");
  /* a tendon-driven gripper under RK4: the step stage fails if a forward pass keeps a stale tendon */
  cr_expect_eq(verify(TMODEL("tendon_gripper_arm.xml"), 0), 0, "f64 verify failed on tendon_gripper_arm");
}
Test(verify_f32, tendon_models) {
  for (int k = 0; tendon_models[k]; k++)
    cr_expect_eq(verify(tendon_models[k], 1), 0, "f32 verify failed on %s", tendon_models[k]);
}

/* MuJoCo 2.2.2's projected Gauss–Seidel (solver="PGS", as Gymnasium's humanoids use it): the solve stage's
   qacc_pgs / efc_force_pgs / iter_pgs rows and the step, pyramidal and elliptic cones */
static const char *const pgs_models[] = {TMODEL("pgs_humanoid.xml"), TMODEL("pgs_box_stack.xml"), NULL};
Test(verify_f64, pgs_models) {
  for (int k = 0; pgs_models[k]; k++) {
    cr_expect_eq(verify(pgs_models[k], 0), 0, "f64 verify failed on %s", pgs_models[k]);
    cr_expect_eq(verify_opt(pgs_models[k], 0, "cone=elliptic"), 0, "f64 elliptic verify failed on %s", pgs_models[k]);
  }
}
/* f32 elliptic: the humanoid only — pgs_box_stack's f32 trajectory states (seed 7) reach a box–box pair whose
   float contact count differs from MuJoCo's (collision pair_flips, not the solver) */
Test(verify_f32, pgs_models) {
  for (int k = 0; pgs_models[k]; k++) cr_expect_eq(verify(pgs_models[k], 1), 0, "f32 verify failed on %s", pgs_models[k]);
  cr_expect_eq(verify_opt(TMODEL("pgs_humanoid.xml"), 1, "cone=elliptic"), 0, "f32 elliptic verify failed on pgs_humanoid");
}

/* the noslip post-solve (noslip_iterations > 0) after Newton and after PGS, both cones */
Test(verify_f64, noslip) {
  cr_expect_eq(verify(TMODEL("noslip_box.xml"), 0), 0, "f64 verify failed on noslip_box");
  cr_expect_eq(verify_opt(TMODEL("noslip_box.xml"), 0, "cone=pyramidal"), 0, "f64 pyramidal noslip_box");
  cr_expect_eq(verify_opt(TMODEL("pgs_box_stack.xml"), 0, "noslip_iterations=10"), 0, "f64 noslip after PGS");
  cr_expect_eq(verify_opt(SCENE("box_stack.xml"), 0, "noslip_iterations=10"), 0, "f64 noslip box_stack");
}
Test(verify_f32, noslip) {
  cr_expect_eq(verify(TMODEL("noslip_box.xml"), 1), 0, "f32 verify failed on noslip_box");
  cr_expect_eq(verify_opt(TMODEL("noslip_box.xml"), 1, "cone=pyramidal"), 0, "f32 pyramidal noslip_box");
}

/* f64 verify of MODEL over N states (seed 1), the stages in STAGES (bit mask), one --opt OPT (or NULL), its CSV
   written to CSVPATH; the exit status */
static int verify_csv(const char *model, int n, unsigned stages, const char *opt, const char *csvpath) {
  rl_verify_args a = {0};
  rl_csv w;
  char err[512];
  a.c.model = model;
  if (opt) a.c.opts[a.c.nopts++] = opt;
  a.states = n;
  a.seed = 1;
  a.stages = stages;
  cr_assert_eq(rl_csv_open(&w, csvpath, 0, err, sizeof err), 0, "%s", err);
  a.c.out = &w;
  fflush(stdout);
  int st = rl64_cmd_verify(&a);
  cr_assert_eq(rl_csv_close(&w, err, sizeof err), 0, "%s", err);
  return st;
}

/* the max_rel_err of row STAGE/QUANTITY in a verify CSV (*pass ← its pass column); NAN when the row is absent */
static double csv_row(const char *path, const char *stage, const char *quantity, int *pass) {
  char line[1024], key[256];
  double v = NAN;
  FILE *f = fopen(path, "r");
  if (!f) return v;
  snprintf(key, sizeof key, ",f64,%s,%s,", stage, quantity);
  while (fgets(line, sizeof line, f)) {
    char *k = strstr(line, key);
    if (!k) continue;
    double abs_err, rel_err, tol;
    int ok;
    if (sscanf(k + strlen(key), "%lf,%lf,%lf,%d", &abs_err, &rel_err, &tol, &ok) == 4) {
      v = rel_err;
      if (pass) *pass = ok;
    }
  }
  fclose(f);
  return v;
}

#define STAGE_BIT(s) (1u << (s))

/* tests/models/cg_softbox.xml (CG, tolerance 1e-6): at 8 of 50 states (seed 1) MuJoCo's own CG step moves by more
   than 1e-10 under a 1e-13 change of the state while its contacts and rows do not.  Those states were left out as
   sensitive (16 %, the step stage failed); now both sides step them again with Newton at tolerance 1e-15 and they
   are compared there (compared_at_optimum 0.18 with the qacc check: 9 states), none left out, every row passing. */
Test(verify_f64, cg_stopping_point_compared_at_the_optimum) {
  char path[] = "/tmp/rl_verify_cg_XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  close(fd);
  int st = verify_csv(TMODEL("cg_softbox.xml"), 50, STAGE_BIT(RL_STAGE_STEP), NULL, path);
  int pass = 0;
  double at_opt = csv_row(path, "step", "compared_at_optimum", &pass);
  double left = csv_row(path, "step", "left_out", NULL), sens = csv_row(path, "step", "left_out_sensitive", NULL);
  double qvel = csv_row(path, "step", "qvel", NULL);
  unlink(path);
  cr_expect_eq(st, 0, "verify --stages step failed on cg_softbox");
  cr_expect(at_opt >= 0.1, "compared_at_optimum %g (want at least 5 of 50 states)", at_opt);
  cr_expect(left == 0 && sens == 0, "left_out %g, left_out_sensitive %g (want 0)", left, sens);
  cr_expect(qvel <= 1e-8, "step qvel %g", qvel);
}

/* tests/public/robotiq_like.xml, 50 states (seed 1): at 5 of them (random poses where the two spring-link boxes
   overlap) MuJoCo's box-box count differed between its own frames and rigidlab's, 1e-16 apart (2 vs 3 contacts):
   a contact tie.  Those states were left out as sensitive (0.10 of the states, 0.15 and 0.20 at 20 and 10 states:
   the step stage failed); then they were compared with MuJoCo's step taken on the contacts its collision finds on
   rigidlab's frames (compared_at_contact_tie 0.10).  Since the body frames are normalized in mj_kinematics' order
   and the geom frames that are a body's frame copy it (sameframe), rigidlab's geom frames are MuJoCo's to the bit
   here, so the ties are gone (compared_at_contact_tie 0, as on panda_like, which had 2 of 50): none left out,
   every row passing. */
Test(verify_f64, contact_tie_compared_on_mujocos_contacts) {
  char path[] = "/tmp/rl_verify_tie_XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  close(fd);
  int st = verify_csv(SRCDIR "/tests/public/robotiq_like.xml", 50, STAGE_BIT(RL_STAGE_STEP), NULL, path);
  int tpass = 0;
  double tie = csv_row(path, "step", "compared_at_contact_tie", &tpass);
  double left = csv_row(path, "step", "left_out", NULL), qvel = csv_row(path, "step", "qvel", NULL);
  unlink(path);
  cr_expect_eq(st, 0, "verify --stages step failed on robotiq_like");
  cr_expect(tpass && tie >= 0, "compared_at_contact_tie row missing or failing (%g)", tie);
  cr_expect(left == 0, "left_out %g (want 0)", left);
  cr_expect(qvel <= 1e-8, "step qvel %g", qvel);
}

/* tests/models/njmax_full.xml: MuJoCo's row buffer (njmax 30) fills at 30 of 50 states (seed 1) and MuJoCo drops
   the rows of the contacts that do not fit.  Those states have no reference: the constraint stage compared them on
   the contacts before the cut without a word (it passed), the step stage failed them as mismatches (nefc 164,
   qvel 3.6 rel).  Now each is counted in its stage's left_out_capacity (0.6), which fails above 10 %, and the
   states that are compared agree. */
Test(verify_f64, states_left_out_for_capacity_are_counted_and_fail_above_10_percent) {
  char path[] = "/tmp/rl_verify_njmax_XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  close(fd);
  int st = verify_csv(TMODEL("njmax_full.xml"), 50, STAGE_BIT(RL_STAGE_CONSTRAINT) | STAGE_BIT(RL_STAGE_STEP), NULL,
                      path);
  int cpass = 1, spass = 1, npass = 0, qpass = 0;
  double ccap = csv_row(path, "constraint", "left_out_capacity", &cpass);
  double scap = csv_row(path, "step", "left_out_capacity", &spass);
  csv_row(path, "step", "nefc", &npass);
  csv_row(path, "step", "qvel", &qpass);
  unlink(path);
  cr_expect_eq(st, 1, "verify should fail: most states have no reference (exit %d)", st);
  cr_expect(ccap > 0.1 && !cpass, "constraint left_out_capacity %g, pass %d (want > 0.1, failing)", ccap, cpass);
  cr_expect(scap > 0.1 && !spass, "step left_out_capacity %g, pass %d (want > 0.1, failing)", scap, spass);
  cr_expect(npass && qpass, "the states compared agree (step nefc pass %d, qvel pass %d)", npass, qpass);
}

/* dm_stacker_noslip over 50 states (seed 1): the noslip forces on the planar model's out-of-plane friction rows
   (J row ≈ 4e-17) are rounding noise amplified by MuJoCo's 1e-10 clamp; they are left out of efc_force_newton and
   immobile_rows_J checks they act on no dof (efc_force_newton was 1.0e-8 against 1e-9 with them).  The rows left
   out are counted in a row of their own, left_out_rows_immobile (one tangent of each contact: about a third). */
Test(verify_f64, stacker_noslip_50_states) {
  char path[] = "/tmp/rl_verify_noslip_XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  close(fd);
  int st = verify_csv(SRCDIR "/tests/public/dm_stacker_noslip.xml", 50, (1u << RL_NSTAGE) - 1, NULL, path);
  double left = csv_row(path, "solve", "left_out_rows_immobile", NULL);
  unlink(path);
  cr_expect_eq(st, 0, "f64 verify failed on dm_stacker_noslip");
  cr_expect(left > 0.2 && left < 0.5, "solve left_out_rows_immobile %g (want the tangent rows counted: 0.2..0.5)", left);
}

/* f32, every stage, seed 1 (tools/acceptance's), n states; opt may be NULL */
static int verify_f32_seed1(const char *model, int n, const char *opt) {
  rl_verify_args a = {0};
  a.c.model = model;
  if (opt) a.c.opts[a.c.nopts++] = opt;
  a.states = n;
  a.seed = 1;
  a.stages = (1u << RL_NSTAGE) - 1;
  fflush(stdout);
  return rl32_cmd_verify(&a);
}

/* panda_like in f32 over tools/acceptance's 50 states (seed 1): every row passes.  Before: qacc_smooth 2.6e-5
   (its float floor 7.3e-7: the servos' gain·ctrl and b₁·q, ~1e4 N each, summed term by term; rl_dot2 since),
   collision pair_flips 1 (coaxial capsules: float's parallel test; capsules_parallel), solve qacc_cg and
   qacc_cg_opt 3.4e-2 (CG read the difference of two 2e10 costs as no improvement; ls_change). */
Test(verify_f32, panda_like_50_states) {
  cr_expect_eq(verify_f32_seed1(SRCDIR "/tests/public/panda_like.xml", 50, NULL), 0, "f32 verify failed on panda_like");
}

/* every stage of MODEL at n states of seed s, in f32 or f64 */
static int verify_at(const char *model, int f32, int n, unsigned long seed) {
  rl_verify_args a = {0};
  a.c.model = model;
  a.states = n;
  a.seed = seed;
  a.stages = (1u << RL_NSTAGE) - 1;
  fflush(stdout);
  return f32 ? rl32_cmd_verify(&a) : rl64_cmd_verify(&a);
}

/* Failures a sweep of every model (MuJoCo's samples, tests/public, experiments/scenes) over few states and other
   seeds found, each fixed: box–box cut at 8 points where MuJoCo gives 9 (dm_stacker f64, two boxes face on face);
   f64's one-step qpos held to a flat 1e-12 below h times qvel's conditioning bound (flag); f32 qvel at 4.3 float
   floors from float sums at the root of Euler's local-frame solve (rope); a capsule pair touching by construction
   judged a flip (biped_visual, pair_flips); qfrc_bias without its float floor (Gymnasium's pusher, 1.71e-5). */
Test(verify_sweep, few_states_other_seeds, .timeout = 300) {
  static const struct {
    const char *model;
    int f32, states;
    unsigned long seed;
  } cases[] = {{SRCDIR "/tests/public/dm_stacker.xml", 0, 10, 2},
               {"/usr/share/mujoco/model/flag/flag.xml", 0, 10, 4},
               {"/usr/share/mujoco/model/composite/rope.xml", 1, 5, 3},
               {SCENE("biped_visual.xml"), 1, 5, 2},
               {SRCDIR "/tests/public/gym_pusher.xml", 1, 10, 1}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    if (access(cases[k].model, R_OK)) continue;
    cr_expect_eq(verify_at(cases[k].model, cases[k].f32, cases[k].states, cases[k].seed), 0,
                 "%s verify failed on %s (%d states, seed %lu)", cases[k].f32 ? "f32" : "f64", cases[k].model,
                 cases[k].states, cases[k].seed);
  }
}

/* hfield_terrain at the default verify study's seed 1, both cones: float CG stopped early (qacc_cg 2.7e-2 pyramidal,
   8.5e-2 elliptic: the quadruped's nearly dependent contact rows and a cost-difference stopping test) */
Test(verify_f32, hfield_terrain_cg_seed1) {
  static const char *const cones[] = {"cone=pyramidal", "cone=elliptic"};
  for (int k = 0; k < 2; k++) {
    rl_verify_args a = {0};
    a.c.model = TMODEL("hfield_terrain.xml");
    a.c.opts[a.c.nopts++] = cones[k];
    a.states = 100;
    a.seed = 1;
    a.stages = 1u << RL_STAGE_SOLVE;
    fflush(stdout);
    cr_expect_eq(rl32_cmd_verify(&a), 0, "f32 verify (solve) failed on hfield_terrain, %s", cones[k]);
  }
}

/* MuJoCo's samples and the public-style models whose f32 rows failed under tools/acceptance (50 states, seed 1):
   every row passes, the rows through M⁻¹ and the tendon and passive rows judged against their float floors
   (tests/test_floor.c checks that the floors are what decide there).  Before: cloth qacc_smooth 8.6e-5, qvel
   1.3e-5, ten_velocity 1.3e-5, collision normal 6.9e-3; loop, rope qacc_smooth 2.0e-5, 4.1e-5; flag qfrc_passive
   and qfrc_smooth 1.6e-5, qacc_smooth 1.4e-4, qvel 1.1e-4, ten_J 1.6e-5, ten_velocity 2.1e-5; slider_crank
   collision branch 0.5; cassie_like qacc_smooth 1.45e-5, qvel 1.07e-5; dm_swimmer6 qacc_smooth 1.9e-5, qvel
   1.8e-5. */
Test(verify_f32, acceptance_models_float_floors, .timeout = 300) {
  static const char *const samples[] = {"composite/cloth.xml", "composite/loop.xml", "composite/rope.xml",
                                        "flag/flag.xml", "slider_crank/slider_crank.xml", NULL};
  char path[512];
  if (!access("/usr/share/mujoco/model/flag/flag.xml", R_OK))
    for (int k = 0; samples[k]; k++) {
      snprintf(path, sizeof path, "/usr/share/mujoco/model/%s", samples[k]);
      cr_expect_eq(verify_f32_seed1(path, 50, NULL), 0, "f32 verify failed on %s", path);
    }
  cr_expect_eq(verify_f32_seed1(SRCDIR "/tests/public/cassie_like.xml", 50, NULL), 0, "f32 verify failed on cassie_like");
  cr_expect_eq(verify_f32_seed1(SRCDIR "/tests/public/dm_swimmer6.xml", 50, NULL), 0, "f32 verify failed on dm_swimmer6");
}
