/* verify_tendon.c — verify stage 'tendon' (see verify.h): rigidlab's tendon lengths, Jacobians, velocities,
 * path points and actuator moment arms against MuJoCo 2.2.2's ten_length, ten_J, ten_velocity, wrap_xpos /
 * wrap_obj and actuator_moment.
 *
 * Per state: MuJoCo's mjd holds mj_forward (the smooth table's, reused: see rl_vmodule.reuse_forward); rigidlab runs its position and velocity stages and the
 * actuation.  The path points are compared where both paths have the same points: wrap_obj counts the
 * points whose tag (site, pulley, wrap geom) differs plus the difference in point counts (a wrap one side
 * makes and the other does not), judged on the absolute count; wrap_xpos is the ∞-norm over the points of
 * the tendons whose tags agree.  MuJoCo's ten_J is dense (ntendon × nv) or sparse (CSR) as mj_isSparse
 * says; it is compared dense.  On a model without tendons the tendon rows compare empty arrays (0), and
 * actuator_moment still checks the joint transmissions' moment arms.
 * f32, models with tendons: ten_length, ten_J and ten_velocity each have a float floor row (X_floor, X_floor_ratio;
 * verify.c judges X against max(tolerance, k·floor)): MuJoCo's own pipeline with float storage (float_floor.h,
 * body frames rounded as they are composed down the tree) against MuJoCo's values.  A tendon between two points
 * 5 cm apart a metre from the origin reads the rounding of their frames amplified twentyfold. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "float_floor.h"
#include "tolerances.h"
#include "verify.h"

enum {
  T_LENGTH,
  T_LENGTH_FLOOR,
  T_LENGTH_FLOOR_RATIO,
  T_J,
  T_J_FLOOR,
  T_J_FLOOR_RATIO,
  T_VELOCITY,
  T_VELOCITY_FLOOR,
  T_VELOCITY_FLOOR_RATIO,
  T_WRAP_OBJ,
  T_WRAP_XPOS,
  T_MOMENT,
  T_NQ
};

static const char *const names[T_NQ] = {"ten_length",         "ten_length_floor", "ten_length_floor_ratio",
                                        "ten_J",              "ten_J_floor",      "ten_J_floor_ratio",
                                        "ten_velocity",       "ten_velocity_floor", "ten_velocity_floor_ratio",
                                        "wrap_obj",           "wrap_xpos",        "actuator_moment"};
static const double tols[T_NQ] = {[T_WRAP_OBJ] = 0.5};
static const int absolute[T_NQ] = {[T_WRAP_OBJ] = 1};

typedef struct scratch {
  double *ref, *flr; /* one dense row of MuJoCo's ten_J, and of the float-storage pipeline's */
  mjData *ff;        /* f32 with tendons: the float-storage pipeline (rl_ff_forward) */
} scratch;

/* the stage runs on models with tendons */
static int init(rl_vctx *c) {
  scratch *s = calloc(1, sizeof *s);
  if (!s) return 1;
  s->ref = calloc((size_t)c->p->m->nv + 1, sizeof(double));
  s->flr = calloc((size_t)c->p->m->nv + 1, sizeof(double));
  c->own = s;
  return s->ref && s->flr ? 0 : 1;
}

static void fini(rl_vctx *c) {
  scratch *s = c->own;
  if (!s) return;
  free(s->ref);
  free(s->flr);
  if (s->ff) mj_deleteData(s->ff);
  free(s);
  c->own = NULL;
}

/* row k of MuJoCo's tendon Jacobian, dense */
static void mj_ten_row(const mjModel *mjm, const mjData *mjd, int k, double *row) {
  int nv = mjm->nv;
  if (mj_isSparse(mjm)) {
    memset(row, 0, sizeof(double) * (size_t)nv);
    int adr = mjd->ten_J_rowadr[k];
    for (int j = 0; j < mjd->ten_J_rownnz[k]; j++) row[mjd->ten_J_colind[adr + j]] = mjd->ten_J[adr + j];
  } else {
    memcpy(row, mjd->ten_J + (size_t)k * nv, sizeof(double) * (size_t)nv);
  }
}

/* path points: tag mismatches + point-count differences, and the largest point error over the tendons
   whose paths agree point for point */
static void compare_paths(const rl_model *m, const rl_data *d, const mjData *mjd, rl_vq *qobj, rl_vq *qpos) {
  double bad = 0, err = 0, mag = 0;
  int npts = 0;
  for (int k = 0; k < m->ntendon; k++) {
    int n = d->ten_wrapnum[k], nm = mjd->ten_wrapnum[k], a = d->ten_wrapadr[k], am = mjd->ten_wrapadr[k];
    int same = n == nm;
    bad += fabs((double)n - nm);
    for (int i = 0; i < (n < nm ? n : nm); i++)
      if (d->wrap_obj[a + i] != mjd->wrap_obj[am + i]) {
        bad++;
        same = 0;
      }
    npts += nm;
    if (!same) continue;
    for (int i = 0; i < 3 * n; i++) {
      double e = fabs((double)d->wrap_xpos[3 * a + i] - mjd->wrap_xpos[3 * am + i]);
      if (!(e <= err)) err = e;
      if (fabs(mjd->wrap_xpos[3 * am + i]) > mag) mag = fabs(mjd->wrap_xpos[3 * am + i]);
    }
  }
  rl_vq_record(qobj, bad, npts);
  rl_vq_record(qpos, err, mag);
}

/* record ‖x − ref‖∞ and ‖ref‖∞ (n values in double) */
static void floor_compare(rl_vq *q, const double *x, const double *ref, int n) {
  double err = 0, mag = 0;
  for (int i = 0; i < n; i++) {
    if (!(fabs(x[i] - ref[i]) <= err)) err = fabs(x[i] - ref[i]);
    mag = fmax(mag, fabs(ref[i]));
  }
  rl_vq_record(q, err, mag);
}

static void state(rl_vctx *c, rl_vq *q) {
  const rl_model *m = c->p->m;
  const mjModel *mjm = c->p->mjm;
  rl_data *d = c->d;
  mjData *mjd = c->mjd;
  scratch *s = c->own;
  rl_set_state(c->p, d, NULL, c->qpos, c->qvel, c->ctrl);
  rl_fwd_position(m, d);
  rl_fwd_velocity(m, d);
  rl_vq_contacts_for_actuation(m, d, mjd);
  rl_actuation(m, d);
  rl_vq_compare(&q[T_LENGTH], d->ten_length, mjd->ten_length, m->ntendon);
  if (RL_IS_F32 && m->ntendon > 0 && !s->ff) s->ff = mj_makeData(mjm); /* on first use (hundreds of MB on large models) */
  if (s->ff) rl_ff_forward(mjm, mjd, s->ff);
  double err = 0, mag = 0, ferr = 0;
  for (int k = 0; k < m->ntendon; k++) {
    mj_ten_row(mjm, mjd, k, s->ref);
    if (s->ff) mj_ten_row(mjm, s->ff, k, s->flr);
    const real *ours = d->ten_J + (size_t)k * m->nv;
    for (int i = 0; i < m->nv; i++) {
      double e = fabs((double)ours[i] - s->ref[i]);
      if (!(e <= err)) err = e;
      if (fabs(s->ref[i]) > mag) mag = fabs(s->ref[i]);
      if (s->ff && !(fabs(s->flr[i] - s->ref[i]) <= ferr)) ferr = fabs(s->flr[i] - s->ref[i]);
    }
  }
  rl_vq_record(&q[T_J], err, mag);
  rl_vq_compare(&q[T_VELOCITY], d->ten_velocity, mjd->ten_velocity, m->ntendon);
  if (s->ff) { /* the float floors (see the file comment) */
    rl_vq_record(&q[T_J_FLOOR], ferr, mag);
    floor_compare(&q[T_LENGTH_FLOOR], s->ff->ten_length, mjd->ten_length, m->ntendon);
    floor_compare(&q[T_VELOCITY_FLOOR], s->ff->ten_velocity, mjd->ten_velocity, m->ntendon);
  }
  compare_paths(m, d, mjd, &q[T_WRAP_OBJ], &q[T_WRAP_XPOS]);
  rl_vq_compare(&q[T_MOMENT], d->actuator_moment, mjd->actuator_moment, (long)m->nu * m->nv);
}

const rl_vmodule rl_vmod_tendon = {.stage = RL_STAGE_TENDON,
                                   .nq = T_NQ,
                                   .names = names,
                                   .tol = tols,
                                   .absolute = absolute,
                                   .init = init,
                                   .state = state,
                                   .fini = fini,
                                   .reuse_forward = 1};
