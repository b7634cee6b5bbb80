/* test_avbd_cover.c — model elements the AVBD engine accepts beyond bodies, joints and geom-filtered
 * contacts, each against rigidlab's Newton engine (the soft engine verified against MuJoCo 2.2.2) on the
 * same model and inputs, in the precision this file is compiled for (-DRL_REAL_F64 / -DRL_REAL_F32):
 *   mocap bodies (static bodies whose pose the caller sets each step in d->mocap_pos/mocap_quat), joints
 *   and equalities to them, contacts with their geoms; explicit <contact><pair> elements.
 * Every test prints the figures it checks:  build/tests/test_avbd_cover_f64 --verbose */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "pair.h"
#include "rl_test_pair.h"
#include "rl_avbd.h"
#include "rl_test_avbd.h"

#define MODEL(name) SRCDIR "/tests/models/" name


/* a prescribed mocap motion: body k of the model's mocap bodies at its model pose plus
     x(t) = A_x sin(2π f t),  z(t) = A_z (1 − cos(2π f t)),  turned by θ(t) = A_θ sin(2π f t) about z
   (smooth, starting at rest at the model pose) */
typedef struct mocap_motion {
  real ax, az, ath, f;
} mocap_motion;

static void mocap_set(const rl_model *m, rl_data *d, int k, const mocap_motion *mo, double t) {
  int b = -1;
  for (int i = 0; i < m->nbody; i++)
    if (m->body_mocapid[i] == k) b = i;
  double w = 6.283185307179586 * mo->f * t, th = mo->ath * sin(w);
  d->mocap_pos[3 * k] = m->body_pos[3 * b] + (real)(mo->ax * sin(w));
  d->mocap_pos[3 * k + 1] = m->body_pos[3 * b + 1];
  d->mocap_pos[3 * k + 2] = m->body_pos[3 * b + 2] + (real)(mo->az * (1 - cos(w)));
  real qz[4] = {(real)cos(th / 2), 0, 0, (real)sin(th / 2)};
  rl_q_mul(d->mocap_quat + 4 * k, qz, m->body_quat + 4 * b);
}

/* max |qpos_a − qpos_b| over the coordinates (quaternions compared up to sign) */
static double qpos_diff(const rl_model *m, const real *a, const real *b) {
  double mx = 0;
  for (int j = 0; j < m->njnt; j++) {
    int q = m->jnt_qposadr[j], t = m->jnt_type[j];
    int n = t == RL_JNT_FREE ? 7 : t == RL_JNT_BALL ? 4 : 1, q0 = t == RL_JNT_FREE ? q + 3 : t == RL_JNT_BALL ? q : -1;
    double sg = 1;
    if (q0 >= 0) {
      double dot = 0;
      for (int i = 0; i < 4; i++) dot += (double)a[q0 + i] * (double)b[q0 + i];
      sg = dot < 0 ? -1 : 1;
    }
    for (int i = 0; i < n; i++) {
      double s = (q0 >= 0 && q + i >= q0) ? sg : 1;
      mx = fmax(mx, fabs((double)a[q + i] - s * (double)b[q + i]));
    }
  }
  return mx;
}

/* max |a_i − b_i| over qpos[i0 .. i1) */
static double range_diff(const real *a, const real *b, int i0, int i1) {
  double mx = 0;
  for (int i = i0; i < i1; i++) mx = fmax(mx, fabs((double)a[i] - (double)b[i]));
  return mx;
}

/* One run of mocap_pendulum.xml at time step h for T seconds with the hand shaken, raised and turned
 * (mocap_motion), AVBD and Newton fed the same mocap poses before each step: max |Δqpos| of the pendulums'
 * joints (hinge, ball, the two gimbal hinges: qpos 0–6) and of the welded box (qpos 7–13), AVBD steps that
 * failed the stopping test, the hinge's largest swing, the largest anchor gap after a step. */
typedef struct shaken_run {
  double djoint, dbox, swing, anchor;
  long unconverged, steps;
} shaken_run;

static shaken_run shaken_pendulums(double h, double T) {
  rl_pair p;
  load(&p, MODEL("mocap_pendulum.xml"), NULL);
  p.m->opt.timestep = (real)h;
  rl_avbd *am = build_update_stop(p.m);
  cr_assert_eq(am->nmoving, 4, "hinge, ball, gimbal and weld move with the hand: %d", am->nmoving);
  rl_data *da = rl_data_alloc(p.m), *dn = rl_data_alloc(p.m);
  rl_avbd_from_generalized(am, p.m, da);
  mocap_motion mo = {0.05, 0.03, 0.3, 2};
  shaken_run r = {0, 0, 0, 0, 0, 0};
  long n = lround(T / h);
  for (long s = 0; s < n; s++) {
    mocap_set(p.m, da, 0, &mo, s * h);
    mocap_set(p.m, dn, 0, &mo, s * h);
    cr_assert_eq(rl_avbd_step(am, p.m, da), RL_OK);
    rl_step(p.m, dn);
    r.unconverged += !am->stat.converged;
    r.anchor = fmax(r.anchor, am->stat.anchor_err);
    r.djoint = fmax(r.djoint, range_diff(da->qpos, dn->qpos, 0, 7));
    r.dbox = fmax(r.dbox, qpos_diff(p.m, da->qpos, dn->qpos) > r.djoint ? range_diff(da->qpos, dn->qpos, 7, 14) : 0);
    r.swing = fmax(r.swing, fabs((double)dn->qpos[0]));
  }
  r.steps = n;
  rl_data_free(da);
  rl_data_free(dn);
  rl_avbd_free(am);
  rl_pair_free(&p);
  return r;
}

/* Joints (hinge, ball, two hinges on a child of the mocap body without dofs) and a weld to a mocap body
 * moved, raised and turned every step.  MuJoCo's semantics: a body hanging from a mocap body through joints
 * keeps its joint coordinates and velocities when the mocap body is placed anew (no inertial forces from the
 * mocap motion); AVBD carries such bodies rigidly with the mocap body.  The joints then follow Newton with an
 * error that shrinks with h (both engines first order); the welded box follows the hand hard in AVBD and
 * through MuJoCo's soft weld (solref 0.004 1) in Newton, an offset of the weld's lag that does not shrink with
 * h; every AVBD step passes the update stopping test (update_stop). */
Test(avbd_cover, mocap_joints_follow_the_moving_body) {
  double hs[3] = {2e-3, 1e-3, 5e-4};
  shaken_run r[3];
  for (int i = 0; i < 3; i++) {
    r[i] = shaken_pendulums(hs[i], 1.0);
    printf("mocap_pendulum h %.1e: joints max |dqpos| vs newton %.3e, welded box %.3e, unconverged %ld/%ld, "
           "hinge swing %.3f rad, anchor gap max %.2e m\n",
           hs[i], r[i].djoint, r[i].dbox, r[i].unconverged, r[i].steps, r[i].swing, r[i].anchor);
    cr_expect_eq(r[i].unconverged, 0);
    /* the hard weld to the moved hand: the step's gap within the stopping tolerance, measured 1.9e-9 m f64 */
    cr_expect_lt(r[i].anchor, TOL(1e-7, 1e-4));
    /* MuJoCo's soft weld lags the hand (2 Hz, 0.3 rad): measured 8.3e-3 .. 1.4e-2 f64 */
    cr_expect_lt(r[i].dbox, 3e-2);
  }
  cr_expect_gt(r[0].swing, 0.05, "the hinge pendulum did not swing");
  /* first order: halving h at least 1.6× smaller (2.0 ideal) */
  cr_expect_gt(r[0].djoint / r[1].djoint, 1.6, "ratio 2 ms / 1 ms %.3f", r[0].djoint / r[1].djoint);
  cr_expect_gt(r[1].djoint / r[2].djoint, 1.6, "ratio 1 ms / 0.5 ms %.3f", r[1].djoint / r[2].djoint);
}

/* A mocap paddle pushing a box along the floor at 0.1 m/s (from t = 0.1 s, 0.06 m away at the start): the
 * contact between the paddle's geom and the box comes from rl_collision at the step-start paddle pose and
 * the paddle's motion since the last step is not left as penetration (C⁰ from the pose before the move):
 * AVBD's box moves with the paddle at the contact's zero (hard); Newton's the same up to MuJoCo's soft-contact
 * penetration under the push, which it reports itself. */
/* C_n of AVBD's contacts between geoms g1 and g2 against the collider's dist, for the contacts whose normal is
   (face = 1) or is not (face = 0) a face normal of either box; returns the largest |C_n − want(dist)|, want =
   2·dist for face contacts (the whole overlap), dist for edge–edge ones; *n counts the contacts compared */
static double box_contact_gap_err(const rl_avbd *am, const rl_model *m, const rl_data *d, int face, int *n) {
  rl_avbd_pose world = {{0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0, 1, 0, 0, 0, 1}};
  double err = 0;
  *n = 0;
  /* rl_avbd_load_contacts keeps d's contacts in order, less the excluded ones and those between static bodies */
  for (int j = 0, i = 0; j < d->ncon && i < am->ncon; j++) {
    const rl_contact *c = d->contact + j;
    if (c->exclude || (am->slot[m->geom_bodyid[c->geom1]] < 0 && am->slot[m->geom_bodyid[c->geom2]] < 0)) continue;
    const rl_avbd_contact *k = am->con + i++;
    cr_assert(k->key[0] == c->geom1 && k->key[1] == c->geom2);
    if (m->geom_type[c->geom1] != RL_GEOM_BOX || m->geom_type[c->geom2] != RL_GEOM_BOX) continue;
    double along = 0;
    for (int g = 0; g < 2; g++)
      for (int a = 0; a < 3; a++) {
        const real *R = d->geom_xmat + 9 * (g ? c->geom2 : c->geom1);
        double u = 0;
        for (int q = 0; q < 3; q++) u += (double)R[3 * q + a] * (double)c->frame[q];
        along = fmax(along, fabs(u));
      }
    if ((along > 1 - TOL(1e-9, 1e-5)) != face) continue;
    rl_avbd_contact_val v;
    rl_avbd_contact_val_eval(&v, k, k->a < 0 ? &world : am->pose + k->a, k->b < 0 ? &world : am->pose + k->b);
    err = fmax(err, fabs((double)v.C[0] - (face ? 2 : 1) * (double)c->dist));
    (*n)++;
  }
  return err;
}

/* Box–box contacts carry the whole overlap: MuJoCo 2.2.2's box–box collider (rl_collision reproduces it)
 * reports half the overlap as dist when the normal is a face normal of either box; AVBD's contact rows measure
 * it along the normal through the contact point.  The paddle 4e-4 m into the box (faces aligned): dist
 * −2e-4, C_n −4e-4; tilted so that the paddle's edge meets the box's edge: C_n = dist. */
Test(avbd_cover, box_box_contacts_carry_the_whole_overlap) {
  rl_pair p;
  load(&p, MODEL("mocap_pusher.xml"), NULL);
  rl_avbd *am = build_update_stop(p.m);
  rl_data *d = rl_data_alloc(p.m);
  for (int tilt = 0; tilt < 2; tilt++) {
    rl_data_reset(p.m, d);
    d->mocap_pos[0] = (real)0.01;
    if (tilt) { /* paddle turned −45° about y, box 45° about z: the paddle's edge (along y) crosses the box's vertical
                   edge, 2e-4 m into it */
      double c8 = cos(0.125 * 3.14159265358979323846), s8 = sin(0.125 * 3.14159265358979323846);
      d->mocap_quat[0] = (real)c8;
      d->mocap_quat[2] = (real)-s8;
      d->qpos[3] = (real)c8;
      d->qpos[6] = (real)s8;
      d->qpos[0] = (real)(0.01 + 0.05 * sqrt(0.5) + 0.03 * sqrt(2.0) - 2e-4);
    } else d->qpos[0] = (real)(0.01 + 0.01 + 0.03 - 4e-4);
    rl_avbd_from_generalized(am, p.m, d);
    rl_kinematics(p.m, d);
    rl_collision(p.m, d);
    rl_avbd_load_contacts(am, p.m, d);
    int nf, ne;
    double ef = box_contact_gap_err(am, p.m, d, 1, &nf), ee = box_contact_gap_err(am, p.m, d, 0, &ne);
    printf("box-box contacts, %s: %d face contacts |C_n - 2 dist| %.2e, %d edge contacts |C_n - dist| %.2e\n",
           tilt ? "tilted" : "aligned", nf, ef, ne, ee);
    if (!tilt) cr_expect_geq(nf, 1, "aligned faces make face contacts");
    if (tilt) cr_expect_geq(ne, 1, "the tilted paddle's edge touches the box's edge");
    cr_expect_lt(ef, TOL(1e-12, 2e-7));
    cr_expect_lt(ee, TOL(1e-12, 2e-7));
  }
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

Test(avbd_cover, mocap_paddle_pushes_a_box) {
  for (int blk = 0; blk < 2; blk++) {
    rl_pair p;
    load(&p, MODEL("mocap_pusher.xml"), NULL);
    rl_avbd_param prm = rl_avbd_default_param(p.m);
    update_stop(&prm);
    prm.block = blk ? RL_AVBD_BLOCK_ARTICULATION : RL_AVBD_BLOCK_BODY;
    rl_avbd *am = build_prm(p.m, &prm);
    cr_expect_eq(am->prm.contacts, RL_AVBD_CONTACTS_DATA, "a mocap geom that can touch needs rl_collision");
    rl_data *da = rl_data_alloc(p.m), *dn = rl_data_alloc(p.m);
    rl_avbd_from_generalized(am, p.m, da);
    double h = p.m->opt.timestep, v = 0.1, gap_a = 0, gap_n = 0, dx = 0;
    long n = lround(2.0 / h), unconverged = 0;
    for (long s = 0; s < n; s++) {
      double t = s * h, x = -0.1 + (t < 0.1 ? 0 : v * (t - 0.1));
      da->mocap_pos[0] = dn->mocap_pos[0] = (real)x;
      cr_assert_eq(rl_avbd_step(am, p.m, da), RL_OK);
      rl_step(p.m, dn);
      unconverged += !am->stat.converged;
      if (t > 0.8) { /* pushing: box face x − 0.03 against paddle face x + 0.01 */
        gap_a = fmax(gap_a, fabs((double)da->qpos[0] - 0.04 - x));
        gap_n = fmax(gap_n, fabs((double)dn->qpos[0] - 0.04 - x));
        dx = fmax(dx, fabs((double)da->qpos[0] - (double)dn->qpos[0]));
      }
    }
    printf("mocap_pusher 2 s at %.0e s, %s blocks: unconverged %ld/%ld, box %.5f m (newton %.5f), |gap| while "
           "pushing: avbd %.2e m, newton %.2e m; |dx| vs newton %.2e m\n",
           h, blk ? "articulation" : "body", unconverged, n, (double)da->qpos[0], (double)dn->qpos[0], gap_a, gap_n,
           dx);
    /* none (f32 measured 8/1000 at the sweep budget, gap 1.9e-4 m, while box–box contacts carried half the
       overlap) */
    cr_expect_leq(unconverged, 0);
    cr_expect_gt((double)da->qpos[0], 0.1, "the paddle did not push the box");
    /* hard contact: measured f64 3.3e-7 m body blocks, 1.3e-5 m articulation (2.0e-4 = one step of the paddle's
       motion before the box–box contacts carried the whole overlap), f32 1.3e-5 m.  1.3e-5 m is the exact step's:
       the update stop at 1e-4 of its tolerance with 20 000 sweeps gives 1.30e-5 m in both block modes; the
       1.7e-7 m articulation blocks measured before their friction disc took the last normal multiplier was an
       early stop of the update test */
    cr_expect_lt(gap_a, TOL(2e-5, 5e-5));
    /* the difference is Newton's own soft penetration (measured 3.7e-3 m) within 1 mm */
    cr_expect_lt(fabs(dx - gap_n), 1e-3);
    rl_data_free(da);
    rl_data_free(dn);
    rl_avbd_free(am);
    rl_pair_free(&p);
  }
}

/* The mocap gripper (a palm on a free joint welded to a mocap target, position-servo fingers): the target
 * raised, swayed and turned for 1 s; every AVBD step passes the update stopping test and the palm follows Newton's
 * up to MuJoCo's soft weld (solref 0.01 1) lag. */
Test(avbd_cover, mocap_gripper_tracks_the_target) {
  rl_pair p;
  load(&p, MODEL("mocap_gripper.xml"), NULL);
  rl_avbd *am = build_update_stop(p.m);
  rl_data *da = rl_data_alloc(p.m), *dn = rl_data_alloc(p.m);
  for (int u = 0; u < p.m->nu; u++) da->ctrl[u] = dn->ctrl[u] = (real)0.01;
  rl_avbd_from_generalized(am, p.m, da);
  mocap_motion target = {0.02, 0.05, 0.2, 1};
  double h = p.m->opt.timestep, palm = 0, track = 0;
  long n = lround(1.0 / h), unconverged = 0;
  for (long s = 0; s < n; s++) {
    mocap_set(p.m, da, 0, &target, s * h);
    mocap_set(p.m, dn, 0, &target, s * h);
    cr_assert_eq(rl_avbd_step(am, p.m, da), RL_OK);
    rl_step(p.m, dn);
    unconverged += !am->stat.converged;
    for (int i = 0; i < 3; i++) {
      palm = fmax(palm, fabs((double)da->qpos[i] - (double)dn->qpos[i]));
      track = fmax(track, fabs((double)da->qpos[i] - (double)da->mocap_pos[i]));
    }
  }
  printf("mocap_gripper 1 s at %.0e s: unconverged %ld/%ld, palm max |x - target| %.2e m, palm max |dx| vs "
         "newton %.3e m, fingers %.5f %.5f (newton %.5f %.5f)\n",
         h, unconverged, n, track, palm, (double)da->qpos[7], (double)da->qpos[8], (double)dn->qpos[7],
         (double)dn->qpos[8]);
  cr_expect_eq(unconverged, 0);
  cr_expect_lt(track, TOL(1e-6, 1e-4), "the hard weld does not hold the palm at the target");
  /* MuJoCo's weld is soft (solref 0.01 1): the palm lags the accelerating target and sags, measured 5.7e-3 m f64 */
  cr_expect_lt(palm, 1e-2);
  cr_expect_lt(fabs((double)da->qpos[7] - (double)dn->qpos[7]), 1e-3);
  rl_data_free(da);
  rl_data_free(dn);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* index of geom NAME (fails the test if absent) */
static int geom_id(const rl_model *m, const char *name) {
  for (int g = 0; g < m->ngeom; g++)
    if (!strcmp(rl_model_name(m, m->name_geomadr[g]), name)) return g;
  cr_assert_fail("no geom %s", name);
  return -1;
}

/* Explicit <contact><pair> contacts (every geom has contype = conaffinity = 0): AVBD takes them from
 * rl_collision with each pair's condim and friction, and the box comes to rest where MuJoCo's contact row has its zero, dist = margin − gap = 3 mm. */
Test(avbd_cover, explicit_pairs_with_their_parameters) {
  rl_pair p;
  load(&p, MODEL("contact_pair.xml"), NULL);
  rl_avbd *am = build(p.m);
  cr_expect_eq(am->prm.contacts, RL_AVBD_CONTACTS_DATA);
  rl_data *da = rl_data_alloc(p.m), *dn = rl_data_alloc(p.m);
  rl_avbd_from_generalized(am, p.m, da);
  double h = p.m->opt.timestep;
  long n = lround(1.0 / h), unconverged = 0;
  for (long s = 0; s < n; s++) {
    cr_assert_eq(rl_avbd_step(am, p.m, da), RL_OK);
    rl_step(p.m, dn);
    unconverged += !am->stat.converged;
  }
  int floor = geom_id(p.m, "floor"), box = geom_id(p.m, "box"), ball = geom_id(p.m, "ball"), arm = geom_id(p.m, "arm");
  int seen[4] = {0, 0, 0, 0};
  for (int i = 0; i < am->ncon; i++) {
    const rl_avbd_contact *k = am->con + i;
    int g1 = k->key[0] < k->key[1] ? k->key[0] : k->key[1], g2 = k->key[0] ^ k->key[1] ^ g1;
    if (g1 == floor && g2 == box) {
      seen[0] = 1;
      cr_expect(k->dim == 4 && fabs((double)k->mu - 0.8) < 1e-6 && fabs((double)k->mu_spin - 0.01) < 1e-6,
                "box-floor: dim %d mu %g spin %g", k->dim, (double)k->mu, (double)k->mu_spin);
    }
    if (g1 == floor && g2 == ball) {
      seen[1] = 1;
      cr_expect(k->dim == 6 && fabs((double)k->mu - 0.6) < 1e-6 && fabs((double)k->mu_roll - 0.003) < 1e-6,
                "ball-floor: dim %d mu %g roll %g", k->dim, (double)k->mu, (double)k->mu_roll);
    }
    if (g1 == box && g2 == arm) {
      seen[2] = 1;
      cr_expect(k->dim == 1 && k->mu == 0, "arm-box: dim %d mu %g", k->dim, (double)k->mu);
    }
  }
  double zb = (double)da->qpos[2], zn = (double)dn->qpos[2], rest = 0.05 + 0.005 - 0.002;
  printf("contact_pair 1 s at %.0e s: unconverged %ld/%ld, %d contacts (box-floor %d, ball-floor %d, arm-box %d); "
         "box z %.9f (rest at margin - gap %.6f; newton %.6f)\n",
         h, unconverged, n, am->ncon, seen[0], seen[1], seen[2], zb, rest, zn);
  cr_expect(seen[0] && seen[1], "a pair's contact is missing");
  /* the box's landing (steps 21–22 at 2 ms) is the one impact that exhausts the sweep budget, measured 2 */
  cr_expect_leq(unconverged, 2);
  /* hard contact at the zero within the slop (a penetration up to 1e-7 m (f64) / 1e-6 m (f32) is kept, not pushed
     out) vs MuJoCo's soft sag below it: measured 1.5e-5 m */
  cr_expect_lt(fabs(zb - rest), TOL(2e-7, 1e-5));
  cr_expect_lt(fabs(zb - zn), 5e-5);
  rl_data_free(da);
  rl_data_free(dn);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* ------------------------------------------------------------------ adhesion (body transmissions) */

/* MuJoCo's active_adhesion sample for T seconds from qpos0 with the controls u (conveyor, arm, adhere_arm, winch,
   adhere_winch) in AVBD (block mode `block`) and Newton side by side: the hanging sphere's final height in each (*za,
   *zn), AVBD's unconverged steps and sweeps per step */
static void adhesion_sample(const double u[5], int block, double T, double *za, double *zn, long *unconverged,
                            double *sweeps) {
  rl_pair p;
  load(&p, "/usr/share/mujoco/model/adhesion/active_adhesion.xml", NULL);
  rl_avbd_param prm = rl_avbd_default_param(p.m);
  prm.block = block;
  rl_avbd *am = build_prm(p.m, &prm);
  rl_data *d = rl_data_alloc(p.m), *e = rl_data_alloc(p.m);
  for (int i = 0; i < 5; i++) d->ctrl[i] = e->ctrl[i] = (real)u[i];
  rl_avbd_from_generalized(am, p.m, d);
  int sph = -1;
  for (int b = 0; b < p.m->nbody; b++)
    if (!strcmp(rl_model_name(p.m, p.m->name_bodyadr[b]), "sphere")) sph = b;
  cr_assert_geq(sph, 0);
  int qz = p.m->jnt_qposadr[p.m->body_jntadr[sph]] + 2;
  long n = lround(T / (double)p.m->opt.timestep), it = 0;
  *unconverged = 0;
  for (long k = 0; k < n; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    rl_step(p.m, e);
    *unconverged += !am->stat.converged;
    it += am->stat.iterations;
  }
  *za = (double)d->qpos[qz];
  *zn = (double)e->qpos[qz];
  *sweeps = (double)it / (double)n;
  rl_data_free(d);
  rl_data_free(e);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* MuJoCo's active_adhesion sample with its adhesion actuators on (adhesion through the margin-gap contacts of the arm's
   pad and of the hanging sphere, body transmissions): the sphere's adhesion pulls it down into the particles in
   AVBD as in Newton — lower than with the adhesion off — and ends within 1.5 cm of Newton's, whose particle
   contacts are soft (solref 0.005) where AVBD's are hard. */
Test(avbd_cover, adhesion_sample_pulls_the_sphere_down, .timeout = 300) {
  static const double on[5] = {0, 1, 1, 0, 1}, off[5] = {0, 1, 0, 0, 0};
  for (int block = 0; block < 2; block++) {
    double za, zn, zoff, znoff, sw, swoff;
    long unc, uncoff;
    int bm = block ? RL_AVBD_BLOCK_ARTICULATION : RL_AVBD_BLOCK_BODY;
    adhesion_sample(on, bm, 0.5, &za, &zn, &unc, &sw);
    adhesion_sample(off, bm, 0.5, &zoff, &znoff, &uncoff, &swoff);
    printf("avbd active_adhesion (%s, %s blocks), 0.5 s: adhesion on: sphere z %.4f m (Newton %.4f), %ld/250 unconverged, "
           "%.1f sweeps/step; off: %.4f m (Newton %.4f), %ld/250, %.1f sweeps/step\n",
           RL_PREC_NAME, block ? "articulation" : "body", za, zn, unc, sw, zoff, znoff, uncoff, swoff);
    cr_expect_lt(za, zoff - 2e-3, "the adhesion should pull the sphere down");
    cr_expect_lt(zn, znoff - 2e-3);
    cr_expect_leq(fabs(za - zn), 1.5e-2);
  }
}

/* ------------------------------------------------------------------ a step whose sweeps run away */

/* MuJoCo's hammock sample: a humanoid falls onto a flat grid of inextensible tendons pinned at its four corners,
   which cannot carry the load without stretching (MuJoCo's soft equalities stretch; AVBD's are hard).  From the
   sixth step on (f32: the eighth) the sweeps run up to the one-update clamp (0.5 m) on most steps; such a step used to be
   returned as it was (f64: 230 m/s and 4e6 J after the fifth step, f32 1e53 J later).  Now it is undone as a
   non-finite step is (the step-start poses, zero velocity, multipliers cleared), returns RL_ERR_NUMERIC and is
   counted in RL_WARN_BADQACC: the state stays finite and slow, and every undone step is counted. */
Test(avbd_cover, hammock_runaway_steps_are_undone_and_counted, .timeout = 300) {
  rl_pair p;
  load(&p, "/usr/share/mujoco/model/hammock/hammock.xml", NULL);
  rl_avbd *am = build(p.m);
  rl_data *d = rl_data_alloc(p.m);
  rl_avbd_from_generalized(am, p.m, d);
  real *prev = malloc(sizeof(real) * (size_t)p.m->nq);
  int undone = 0;
  double vmax = 0, restore = 0;
  for (int k = 0; k < 12; k++) {
    memcpy(prev, d->qpos, sizeof(real) * (size_t)p.m->nq);
    int before = d->warning[RL_WARN_BADQACC];
    rl_status st = rl_avbd_step(am, p.m, d);
    cr_assert(st == RL_OK || st == RL_ERR_NUMERIC, "step %d returned %d", k, (int)st);
    if (st == RL_ERR_NUMERIC) {
      undone++;
      cr_expect_eq(d->warning[RL_WARN_BADQACC], before + 1, "an undone step is counted once");
      restore = fmax(restore, qpos_diff(p.m, prev, d->qpos));
    } else cr_expect_eq(d->warning[RL_WARN_BADQACC], before);
    for (int i = 0; i < p.m->nv; i++) {
      cr_assert(isfinite((double)d->qvel[i]));
      vmax = fmax(vmax, fabs((double)d->qvel[i]));
    }
  }
  printf("avbd hammock (%s), 12 steps of 5 ms: %d undone (sweeps ran away), largest |qvel| %.3g, qpos of an undone "
         "step from its start %.2g\n", RL_PREC_NAME, undone, vmax, restore);
  cr_expect_geq(undone, 4, "most steps from the sixth (f32: the eighth) on run away");
  cr_expect_lt(vmax, 1.0, "no runaway step is returned: the humanoid falls at g·t");
  cr_expect_leq(restore, TOL(1e-12, 1e-5));
  free(prev);
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* ------------------------------------------------------------------ rows a block holds on its diagonal */

/* MuJoCo's cloth sample: 81 small bodies (28 g) in one tree of hinge pairs, the grid closed by 64 inextensible
   distance tendons (tendon equalities); 24 of them are the articulation block's loop rows, the other 40 stay on the
   bodies' diagonal blocks, where each body saw ρ JJᵀ as if the other end stood still while the block moved both.
   That under-weighs the row up to twofold along the motion that closes it, and the block step overshot it: in f32
   the sweeps of a free-fall step grew from rounding noise by ×1.4 per sweep to the clamp (step 22 on, every third
   step undone), in f64 the cloth's first ground contact (step 202) seeded the same growth.  Each side now weighs
   such a row by the number of its bodies in the block (a majorizer of its energy, avbd_split_put), and no step
   runs away. */
Test(avbd_cover, cloth_rows_beyond_the_loop_capacity_do_not_diverge, .timeout = 300) {
  rl_pair p;
  load(&p, "/usr/share/mujoco/model/composite/cloth.xml", NULL);
  rl_avbd *am = build(p.m);
  rl_data *d = rl_data_alloc(p.m);
  rl_avbd_from_generalized(am, p.m, d);
  int undone = 0, fall_unconverged = 0, maxit = 0;
  for (int k = 0; k < 215; k++) {
    rl_status st = rl_avbd_step(am, p.m, d);
    cr_assert(st == RL_OK || st == RL_ERR_NUMERIC, "step %d returned %d", k, (int)st);
    undone += st == RL_ERR_NUMERIC;
    if (k < 200) {
      fall_unconverged += !am->stat.converged;
      maxit = am->stat.iterations > maxit ? am->stat.iterations : maxit;
    }
  }
  printf("avbd cloth (%s), 215 steps of 2 ms (ground contact from step 202): %d undone, %d of the 200 free-fall steps "
         "unconverged (at most %d sweeps), bad-state count %d\n",
         RL_PREC_NAME, undone, fall_unconverged, maxit, d->warning[RL_WARN_BADQACC]);
  cr_expect_eq(undone, 0, "no step runs away");
  cr_expect_eq(fall_unconverged, 0, "a free fall converges");
  cr_expect_eq(d->warning[RL_WARN_BADQACC], 0);
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* ------------------------------------------------------------------ limits reached with a large penalty */

/* MuJoCo's humanoid, 2 s from qpos0 at its 5 ms step (falls; shoulder limits at −90° reached on the way down): a
   limit row the primal step left off and overshot keeps λ = 0 until a primal step has taken it (avbd_one_sided_dual).
   With λ = ρc̃ there instead, ρ ≫ the system's stiffness S along the row sent the shoulders round a 3-cycle (off and
   past the limit by v = 2.3e-4 rad, λ = −ρv = −92 N m, back inside by ≈ v, λ ≈ −2Sv, off again) to the budget:
   78 of 401 steps unconverged in f64 at 120 sweeps/step, 38 in f32; with the rule 27 / 23 (the rest: sliding
   hand contacts with a small normal force, not limits), and with the friction disc from the last normal multiplier
   too 0 / 0 (24 / 5.4 sweeps/step). */
/* T seconds of AVBD (default parameters) on MODEL from qpos0: *unconverged steps of *n, returns the mean sweeps/step */
static double avbd_run_counts(const char *model, double T, long *unconverged, long *n) {
  rl_pair p;
  load(&p, model, NULL);
  rl_avbd *am = build(p.m);
  rl_data *d = rl_data_alloc(p.m);
  rl_avbd_from_generalized(am, p.m, d);
  long it = 0;
  *unconverged = 0;
  *n = lround(T / (double)p.m->opt.timestep);
  for (long k = 0; k < *n; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    *unconverged += !am->stat.converged;
    it += am->stat.iterations;
  }
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
  return (double)it / (double)*n;
}

Test(avbd_cover, humanoid_limits_reached_with_a_large_penalty_do_not_cycle, .timeout = 300) {
  long unconverged, n;
  double sweeps = avbd_run_counts("/usr/share/mujoco/model/humanoid/humanoid.xml", 2.0, &unconverged, &n);
  printf("avbd humanoid (%s), 2 s: %ld of %ld steps unconverged, %.1f sweeps/step\n", RL_PREC_NAME, unconverged, n,
         sweeps);
  cr_expect_leq(unconverged, TOL(3, 3), "%ld of %ld steps unconverged", unconverged, n);
}

/* MuJoCo's loop sample: a ring of 20 capsules joined by hinge pairs (compound joints only), closed by a connect,
   falling freely.  From its 15th step a step starts at its own fixed point (updates 1e-16 m, 2e-15 rad: rounding)
   and the tail estimate never sees a contraction; the rounding rule (an update the poses cannot resolve is the
   distance) took its angle bound 4ε·max(1, X/ℓ) with ℓ the shortest lever of the tree joints, and compound joints were
   not counted, so ℓ was unbounded and the bound 8.9e-16 rad: 66 of 250 steps ran to the 500-sweep budget.  Their
   levers (4 cm here) now count in double (in float the bound would exceed the claimed tolerance on such small
   bodies, and is left as it was). */
Test(avbd_cover, loop_compound_levers_let_the_rounding_rule_stop, .timeout = 120) {
  long unconverged, n;
  double sweeps = avbd_run_counts("/usr/share/mujoco/model/composite/loop.xml", 0.12, &unconverged, &n);
  printf("avbd loop (%s), %ld steps of 2 ms in free fall: %ld unconverged, %.1f sweeps/step\n", RL_PREC_NAME, n,
         unconverged, sweeps);
  cr_expect_eq(n, 60);
#if defined(RL_REAL_F64)
  cr_expect_eq(unconverged, 0, "a step at its fixed point stops");
#endif
}

/* ------------------------------------------------------------------ modelling overlaps at qpos0 */

/* MuJoCo's own contact list at qpos0 (mj_forward): the geom pairs of one articulation (bodies with the same root,
   neither welded to the world) with dist < 0, the lower geom id first, each once; returns their count */
static int mujoco_rest_pairs(const rl_pair *p, int pairs[][2], int cap) {
  mjData *md = mj_makeData(p->mjm);
  mj_forward(p->mjm, md);
  int n = 0;
  for (int i = 0; i < md->ncon; i++) {
    const mjContact *c = md->contact + i;
    int b1 = p->mjm->geom_bodyid[c->geom1], b2 = p->mjm->geom_bodyid[c->geom2];
    if (!(c->dist < 0) || p->mjm->body_weldid[b1] == 0 || p->mjm->body_weldid[b2] == 0 ||
        p->mjm->body_rootid[b1] != p->mjm->body_rootid[b2])
      continue;
    int g1 = c->geom1 < c->geom2 ? c->geom1 : c->geom2, g2 = c->geom1 < c->geom2 ? c->geom2 : c->geom1, seen = 0;
    for (int k = 0; k < n; k++) seen |= pairs[k][0] == g1 && pairs[k][1] == g2;
    if (!seen && n < cap) {
      pairs[n][0] = g1;
      pairs[n][1] = g2;
      n++;
    }
  }
  mj_deleteData(md);
  return n;
}

/* T seconds of AVBD on MODEL with rest_overlaps = mode: unconverged steps, mean sweeps per step; *nrest the pairs
   left out; *loaded 1 if any contact of a left-out pair was ever loaded */
static void rest_overlap_run(const char *model, int mode, double T, long *unconverged, double *sweeps, int *nrest,
                             int *loaded, int pairs[][2], int *npairs) {
  rl_pair p;
  load(&p, model, NULL);
  *npairs = mujoco_rest_pairs(&p, pairs, 64);
  rl_avbd_param prm = rl_avbd_default_param(p.m);
  prm.rest_overlaps = mode;
  rl_avbd *am = build_prm(p.m, &prm);
  rl_data *d = rl_data_alloc(p.m);
  rl_avbd_from_generalized(am, p.m, d);
  long n = lround(T / (double)p.m->opt.timestep), it = 0;
  *unconverged = 0;
  *loaded = 0;
  for (long k = 0; k < n; k++) {
    cr_assert_eq(rl_avbd_step(am, p.m, d), RL_OK);
    *unconverged += !am->stat.converged;
    it += am->stat.iterations;
    for (int i = 0; i < am->ncon; i++)
      for (int r = 0; r < am->nrest; r++) {
        int g1 = am->con[i].key[0], g2 = am->con[i].key[1];
        *loaded |= (g1 == am->rest[r][0] && g2 == am->rest[r][1]) || (g2 == am->rest[r][0] && g1 == am->rest[r][1]);
      }
  }
  *sweeps = (double)it / (double)n;
  *nrest = am->nrest;
  for (int r = 0; r < am->nrest; r++) {
    int found = 0;
    for (int k = 0; k < *npairs; k++) found |= pairs[k][0] == am->rest[r][0] && pairs[k][1] == am->rest[r][1];
    cr_expect(found, "%s: pair %d–%d left out but not overlapping in MuJoCo at qpos0", model, am->rest[r][0],
              am->rest[r][1]);
  }
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
}

/* Geom pairs of one articulation overlapping at qpos0 are modelling overlaps (a hip link inside the pelvis, a
   knee's two capsules 9 mm into each other) whose gap the joints move little or not at all: a hard contact asked to
   open one needs forces without bound.  AVBD leaves them out by default (avbd_rest_overlaps = drop): the pairs are
   MuJoCo's own overlapping pairs at qpos0 (5 on biped_visual, 1 on panda_like: link5–hand), none is loaded, and the
   steps converge where keeping them did not.  Measured over 1 s: biped_visual f32 500 → 0 of 501 unconverged
   (f64 500 → 298: the hip links' contacts that open during the motion remained, 0 once contacts whose gap no joint
   changes were left out as well), panda_like f64 49.9 → 15.7
   sweeps/step, f32 4.2 → 2.1.  Here 0.3 s. */
Test(avbd_cover, rest_overlaps_of_one_articulation_left_out, .timeout = 300) {
  static const struct {
    const char *model;
    int npairs;
  } cases[] = {{SRCDIR "/experiments/scenes/biped_visual.xml", 5}, {SRCDIR "/tests/public/panda_like.xml", 1}};
  for (int k = 0; k < 2; k++) {
    int pairs[64][2], npairs, nrest, loaded, nrest_keep, loaded_keep;
    long unc, unc_keep;
    double sw, sw_keep;
    rest_overlap_run(cases[k].model, RL_AVBD_REST_OVERLAPS_DROP, 0.3, &unc, &sw, &nrest, &loaded, pairs, &npairs);
    rest_overlap_run(cases[k].model, RL_AVBD_REST_OVERLAPS_KEEP, 0.3, &unc_keep, &sw_keep, &nrest_keep, &loaded_keep,
                     pairs, &npairs);
    printf("avbd rest overlaps (%s) %s: %d pairs left out (MuJoCo's overlapping pairs at qpos0: %d), 0.3 s: %ld "
           "unconverged, %.1f sweeps/step; kept: %ld, %.1f sweeps/step\n",
           RL_PREC_NAME, strrchr(cases[k].model, '/') + 1, nrest, npairs, unc, sw, unc_keep, sw_keep);
    cr_expect_eq(npairs, cases[k].npairs);
    cr_expect_eq(nrest, npairs, "every overlapping pair left out");
    cr_expect_eq(nrest_keep, 0);
    cr_expect_not(loaded, "a left-out pair's contact was loaded");
    cr_expect_lt(sw, sw_keep, "leaving the overlaps out should take fewer sweeps");
  }
}

/* ------------------------------------------------------------------ gaps no joint changes */

/* biped_visual's hip: the roll link's capsule ends where the pitch link's capsule begins, both end spheres centred on
   the yaw and pitch axes between them, so no joint of that chain changes their gap (avbd_fixed_gap follows the chain
   of parents, not only a direct parent): the contact's normal force does no work and AVBD leaves it out.  Held as a
   hard row, asked to remove 5 % of its start overlap per step or dragged along by the step's frozen normal while the
   leg turned, its force grew by ρC̃ per sweep without end: 44 of 150 steps (0.3 s) at the budget, f64, 169 sweeps/step
   (1 s: 306 of 501).  Now 0 and 9.0 sweeps/step (f32 3.9 both). */
Test(avbd_cover, contacts_whose_gap_no_joint_changes_are_left_out, .timeout = 300) {
  long unconverged, n;
  double sweeps = avbd_run_counts(SRCDIR "/experiments/scenes/biped_visual.xml", 0.3, &unconverged, &n);
  printf("avbd biped_visual (%s), 0.3 s: %ld of %ld steps unconverged, %.1f sweeps/step\n", RL_PREC_NAME, unconverged,
         n, sweeps);
  cr_expect_eq(unconverged, 0, "%ld of %ld steps unconverged", unconverged, n);
  cr_expect_leq(sweeps, TOL(20, 10));
}
