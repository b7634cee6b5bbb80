/* test_collision.c — the collision stage as a whole (f64): the contact cap keeps the deepest contacts
 * and counts the overflow, the list is deterministic, non-finite poses give no contacts and a counted
 * warning, manifold mode gives several points for a flat box-on-box contact where the MuJoCo mode gives
 * MuJoCo's set; geoms that can never collide take no part. */
#define _DEFAULT_SOURCE /* mkstemps */
#include <criterion/criterion.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pair.h"
#include "rl_test_pair.h"

#define SCENE(name) SRCDIR "/experiments/scenes/" name

static int cmp_real(const void *a, const void *b) {
  real x = *(const real *)a, y = *(const real *)b;
  return (x > y) - (x < y);
}

Test(collision, cap_keeps_deepest_and_counts_overflow) {
  rl_pair full, capped;
  load(&full, SCENE("box_pyramid.xml"), NULL);
  load(&capped, SCENE("box_pyramid.xml"), "max_contacts=10");
  rl_data *d = rl_data_alloc(full.m), *dc = rl_data_alloc(capped.m);
  /* a contact-rich state: the pyramid after settling */
  for (int i = 0; i < 50; i++) rl_step(full.m, d);
  memcpy(dc->qpos, d->qpos, sizeof(real) * (size_t)full.m->nq);
  rl_kinematics(full.m, d);
  rl_collision(full.m, d);
  rl_kinematics(capped.m, dc);
  rl_collision(capped.m, dc);
  cr_assert_gt(d->ncon, 10, "need more than 10 contacts, have %d", d->ncon);
  cr_expect_eq(dc->ncon, 10);
  cr_expect_eq(dc->warning[RL_WARN_CONTACTFULL], d->ncon - 10, "overflow counted %d, want %d",
               dc->warning[RL_WARN_CONTACTFULL], d->ncon - 10);
  real *all = malloc(sizeof(real) * (size_t)d->ncon), *kept = malloc(sizeof(real) * 10);
  for (int i = 0; i < d->ncon; i++) all[i] = d->contact[i].dist;
  for (int i = 0; i < 10; i++) kept[i] = dc->contact[i].dist;
  qsort(all, (size_t)d->ncon, sizeof(real), cmp_real);
  qsort(kept, 10, sizeof(real), cmp_real);
  for (int i = 0; i < 10; i++)
    cr_expect_eq(kept[i], all[i], "kept contact %d: dist %g, deepest %g", i, kept[i], all[i]);
  free(all);
  free(kept);
  rl_data_free(d);
  rl_data_free(dc);
  rl_pair_free(&full);
  rl_pair_free(&capped);
}

Test(collision, deterministic_list) {
  rl_pair p;
  load(&p, SCENE("sphere_pile.xml"), NULL);
  rl_data *a = rl_data_alloc(p.m), *b = rl_data_alloc(p.m);
  rl_kinematics(p.m, a);
  rl_collision(p.m, a);
  rl_kinematics(p.m, b);
  rl_collision(p.m, b);
  cr_assert_gt(a->ncon, 1000);
  cr_assert_eq(a->ncon, b->ncon);
  cr_expect(!memcmp(a->contact, b->contact, sizeof(rl_contact) * (size_t)a->ncon), "contact lists differ");
  rl_data_free(a);
  rl_data_free(b);
  rl_pair_free(&p);
}

Test(collision, nan_pose_gives_no_contacts_and_a_warning) {
  rl_pair p;
  load(&p, SCENE("box_stack.xml"), NULL);
  rl_data *d = rl_data_alloc(p.m);
  rl_kinematics(p.m, d);
  rl_collision(p.m, d);
  int n0 = d->ncon;
  cr_assert_gt(n0, 0);
  d->qpos[0] = NAN; /* first box */
  rl_kinematics(p.m, d);
  rl_collision(p.m, d);
  int g = p.m->body_geomadr[1];
  for (int i = 0; i < d->ncon; i++)
    cr_expect(d->contact[i].geom1 != g && d->contact[i].geom2 != g, "contact with the NaN box");
  cr_expect_gt(d->warning[RL_WARN_BADGEOM], 0);
  cr_expect_lt(d->ncon, n0);
  rl_data_free(d);
  rl_pair_free(&p);
}

/* a box resting flat on a box: MuJoCo's box-box gives its face manifold in both modes; a tilted mesh-free
   cylinder on a box (MPR) gives one point in MuJoCo mode and a manifold in the default mode */
Test(collision, manifold_mode_gives_flat_patches) {
  char path[] = "/tmp/rl_cyl_XXXXXX.xml";
  int fd = mkstemps(path, 4);
  cr_assert(fd >= 0);
  const char *xml = "<mujoco><worldbody><geom type='box' size='1 1 0.1' pos='0 0 -0.1'/>"
                    "<body pos='0 0 -0.0001'><freejoint/><geom type='cylinder' size='0.1 0.05' pos='0 0 0.05'/></body>"
                    "</worldbody></mujoco>";
  cr_assert_eq(write(fd, xml, strlen(xml)), (ssize_t)strlen(xml));
  close(fd);
  rl_pair p;
  load(&p, path, NULL);
  rl_data *d = rl_data_alloc(p.m);
  rl_kinematics(p.m, d);
  rl_collision(p.m, d);
  int manifold = d->ncon;
  p.m->opt.collision = RL_COLL_MUJOCO;
  rl_collision(p.m, d);
  int mujoco = d->ncon;
  cr_expect_eq(mujoco, 1, "MuJoCo mode: %d contacts", mujoco);
  cr_expect_geq(manifold, 3, "manifold mode: %d contacts", manifold);
  remove(path);
  rl_data_free(d);
  rl_pair_free(&p);
}

/* geoms that can never collide (the visual meshes of a robot model: contype = conaffinity = 0) are
   classified at build against the brute-force pair filter, and take no part in the collision stage: the
   contact list is the same bit for bit when their world poses are garbage, and no bad-pose warning is
   counted for them.  The mesh boxes computed at build hold every hull vertex and touch the extreme ones. */
Test(collision, visual_geoms_take_no_part) {
  rl_pair p;
  load(&p, SCENE("quadruped_visual.xml"), NULL);
  const rl_model *m = p.m;
  int nvisual = 0;
  for (int g = 0; g < m->ngeom; g++) {
    int can = 0;
    for (int h = 0; h < m->ngeom && !can; h++)
      can = h != g && ((m->geom_contype[g] & m->geom_conaffinity[h]) || (m->geom_contype[h] & m->geom_conaffinity[g]));
    cr_expect_eq(m->geom_collide[g], can, "geom %d: geom_collide %d, brute-force filter %d", g, m->geom_collide[g],
                 can);
    nvisual += !can;
    if (m->geom_type[g] != RL_GEOM_MESH) continue;
    cr_expect_eq(m->geom_collide[g], 0, "visual mesh geom %d classified as colliding", g);
    int k = m->geom_dataid[g];
    const real *v = m->mesh_vert + 3 * m->mesh_vertadr[k], *h = m->geom_hext + 3 * g;
    for (int c = 0; c < 3; c++) {
      int touched = 0;
      for (int i = 0; i < m->mesh_vertnum[k]; i++) {
        cr_assert_leq(rl_fabs(v[3 * i + c]), h[c], "mesh geom %d vertex %d outside its box on axis %d", g, i, c);
        touched |= rl_fabs(v[3 * i + c]) == h[c];
      }
      cr_expect(touched, "mesh geom %d: no vertex on its box face, axis %d", g, c);
    }
  }
  cr_assert_geq(nvisual, 13, "the model's 13 visual meshes, found %d never-colliding geoms", nvisual);
  rl_data *d = rl_data_alloc(p.m);
  for (int i = 0; i < 300; i++) rl_step(p.m, d); /* standing on its four feet */
  rl_kinematics(p.m, d);
  rl_collision(p.m, d);
  int n0 = d->ncon;
  cr_assert_gt(n0, 0);
  rl_contact *c0 = malloc(sizeof(rl_contact) * (size_t)n0);
  memcpy(c0, d->contact, sizeof(rl_contact) * (size_t)n0);
  for (int g = 0; g < m->ngeom; g++)
    if (!m->geom_collide[g])
      for (int k = 0; k < 3; k++) d->geom_xpos[3 * g + k] = NAN;
  memset(d->warning, 0, sizeof d->warning);
  rl_collision(p.m, d);
  cr_expect_eq(d->ncon, n0);
  cr_expect(!memcmp(c0, d->contact, sizeof(rl_contact) * (size_t)n0), "contact lists differ");
  cr_expect_eq(d->warning[RL_WARN_BADGEOM], 0, "bad-pose warnings for geoms that cannot collide");
  free(c0);
  rl_data_free(d);
  rl_pair_free(&p);
}

/* rl_sym3_eigvec against MuJoCo's mju_eig3 on random covariance matrices C = BᵀB/5 (B 5×3 Gaussian, some with two
   equal rows, so repeated eigenvalues occur): the same eigenvector matrix, signs and order included, to 1e-12 */
Test(collision, eigenvectors_as_mujocos_eig3) {
  srand(11);
  double worst = 0;
  for (int t = 0; t < 2000; t++) {
    double B[15], C[9] = {0}, lam[3], V[9], q[4];
    for (int i = 0; i < 15; i++) B[i] = (double)rand() / RAND_MAX - 0.5;
    if (t % 4 == 0) memcpy(B + 3, B, 3 * sizeof(double));
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        for (int k = 0; k < 5; k++) C[3 * i + j] += B[3 * k + i] * B[3 * k + j] / 5;
    mju_eig3(lam, V, q, C);
    real Cr[9], Vr[9];
    for (int i = 0; i < 9; i++) Cr[i] = (real)C[i];
    rl_sym3_eigvec(Cr, Vr);
    for (int i = 0; i < 9; i++) worst = fmax(worst, fabs((double)Vr[i] - V[i]));
  }
  cr_expect_leq(worst, 1e-12, "max |V - V_mujoco| = %.3g", worst);
}

/* MuJoCo's contact override: every contact takes o_margin, o_solref, o_solimp (limits keep their own), and MuJoCo
   2.2.2's broad phase, whose body boxes grow by the geom margins only, decides which pairs inside o_margin collide:
   two spheres 0.01 m apart along x with o_margin 0.02 make no contact with each other, only with the floor */
Test(collision, override_margin_solref_solimp_and_mujocos_broad_phase) {
  rl_pair p;
  load(&p, SRCDIR "/tests/models/override_broadphase.xml", NULL);
  rl_data *d = rl_data_alloc(p.m);
  rl_kinematics(p.m, d);
  rl_collision(p.m, d);
  cr_assert_eq(d->ncon, 2, "contacts %d, want the two sphere-floor contacts only", d->ncon);
  for (int i = 0; i < d->ncon; i++) {
    const rl_contact *c = d->contact + i;
    cr_expect_eq(p.m->geom_type[c->geom1], RL_GEOM_PLANE);
    cr_expect(fabs((double)c->includemargin - 0.02) < 1e-15, "includemargin %g, want o_margin 0.02",
              (double)c->includemargin);
    cr_expect(c->solref[0] == (real)0.03 && c->solref[1] == (real)1, "solref %g %g", (double)c->solref[0],
              (double)c->solref[1]);
    cr_expect(c->solimp[0] == (real)0.9 && c->solimp[2] == (real)0.002, "solimp %g %g", (double)c->solimp[0],
              (double)c->solimp[2]);
  }
  rl_data_free(d);
  rl_pair_free(&p);
}

/* The frames kinematics copies (body_sameframe, geom_sameframe, site_sameframe, derived at build from the local
   poses) are MuJoCo's *_sameframe, and the copies are the frames they stand for, bit for bit. */
Test(collision, sameframe_as_mujoco) {
  static const char *models[] = {SRCDIR "/tests/public/dm_manipulator.xml", SRCDIR "/tests/public/dm_quadruped.xml",
                                 SRCDIR "/tests/public/dm_fish.xml",        SRCDIR "/tests/public/dm_stacker.xml",
                                 SRCDIR "/tests/public/gym_humanoid.xml",   SCENE("microduck.xml")};
  for (size_t k = 0; k < sizeof models / sizeof *models; k++) {
    rl_pair p;
    load(&p, models[k], NULL);
    const rl_model *m = p.m;
    const mjModel *mjm = p.mjm;
    for (int b = 0; b < m->nbody; b++)
      cr_expect_eq(m->body_sameframe[b], mjm->body_sameframe[b], "%s body %d", models[k], b);
    for (int g = 0; g < m->ngeom; g++)
      cr_expect_eq(m->geom_sameframe[g], mjm->geom_sameframe[g], "%s geom %d", models[k], g);
    for (int s = 0; s < m->nsite; s++)
      cr_expect_eq(m->site_sameframe[s], mjm->site_sameframe[s], "%s site %d", models[k], s);
    rl_data *d = rl_data_alloc(p.m);
    for (int i = 0; i < 20; i++) rl_step(p.m, d);
    rl_kinematics(p.m, d);
    for (int g = 0; g < m->ngeom; g++) {
      int b = m->geom_bodyid[g], f = m->geom_sameframe[g];
      if (!f) continue;
      const real *x = f == 1 ? d->xpos + 3 * b : d->xipos + 3 * b, *R = f == 1 ? d->xmat + 9 * b : d->ximat + 9 * b;
      cr_expect(!memcmp(x, d->geom_xpos + 3 * g, 3 * sizeof(real)) &&
                    !memcmp(R, d->geom_xmat + 9 * g, 9 * sizeof(real)),
                "%s geom %d: not a copy of its sameframe %d", models[k], g, f);
    }
    rl_data_free(d);
    rl_pair_free(&p);
  }
}
