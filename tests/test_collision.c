/* test_collision.c — the collision stage as a whole (f64): the contact cap keeps the deepest contacts
 * and counts the overflow, the list is deterministic, non-finite poses give no contacts and a counted
 * warning, manifold mode gives several points for a flat box-on-box contact where the MuJoCo mode gives
 * MuJoCo's set. */
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
