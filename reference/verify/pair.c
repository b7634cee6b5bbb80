/* pair.c — MuJoCo + rigidlab model pair (see pair.h). */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <mujoco/mjxmacro.h>
#include "pair.h"
#include "csv.h"

double rl_round(double x) { return (double)(real)x; }

/* Every real field of the model must be finite: one line naming the field and element. */
static int check_finite(const rl_model *m, const char *path, char *err, int errlen) {
#define RL_X_FIELD(type, name, count, width)                                                                       \
  if (sizeof(type) == sizeof(real) && (type)0.5 != 0)                                                              \
    for (long i = 0; i < (long)m->count * (width); i++)                                                            \
      if (!isfinite((double)((const real *)(const void *)m->name)[i])) {                                           \
        snprintf(err, (size_t)errlen, "%s: model field %s[%ld] is not finite (element %ld of %s)", path, #name, i, \
                 i / (width), #count);                                                                             \
        return -1;                                                                                                 \
      }
  RL_MODEL_FIELDS(RL_X_FIELD)
#undef RL_X_FIELD
  return 0;
}

/* In f32, MuJoCo gets the model rounded to float exactly as rigidlab's copy is, so that
   comparisons measure float arithmetic, not the rounding of the model's constants. */
static void round_model_numbers(mjModel *m) {
  if (sizeof(real) == sizeof(double)) return;
  MJMODEL_POINTERS_PREAMBLE(m)
#define X(type, name, nr, nc)                           \
  if (sizeof(type) == sizeof(mjtNum) && (type)0.5 != 0) \
    for (long i = 0; i < (long)m->nr * (nc); i++)       \
      ((mjtNum *)(void *)m->name)[i] = rl_round(((mjtNum *)(void *)m->name)[i]);
  MJMODEL_POINTERS
#undef X
  m->opt.timestep = rl_round(m->opt.timestep);
  for (int k = 0; k < 3; k++) m->opt.gravity[k] = rl_round(m->opt.gravity[k]);
}

/* MuJoCo 2.2.2's default stack size (its compiler's heuristic): 5·(njmax + neq + nv)² + 20·(nq + nv + nu + na +
   nbody + njnt + ngeom + nsite + neq + ntendon + nwrap), at least 1000 */
static long mj_default_nstack(const mjModel *m) {
  long r = (long)m->njmax + m->neq + m->nv;
  long s = 5 * r * r + 20L * (m->nq + m->nv + m->nu + m->na + m->nbody + m->njnt + m->ngeom + m->nsite + m->neq +
                               m->ntendon + m->nwrap);
  return s > 1000 ? s : 1000;
}

int rl_pair_load(rl_pair *p, const rl_common_args *c, double dt, char *err, int errlen) {
  return rl_pair_load_capacity(p, c, dt, 0, err, errlen);
}

int rl_pair_load_capacity(rl_pair *p, const rl_common_args *c, double dt, int nconmax, char *err, int errlen) {
  memset(p, 0, sizeof *p);
  rl_option opt;
  rl_option_default(&opt);
  p->path = c->model;
  p->mjm = rl_mj_load(c->model, err, errlen);
  if (!p->mjm) return RL_EXIT_BADINPUT;
  for (int i = 0; i < c->nopts; i++)
    if (rl_option_apply(p->mjm, &opt, c->opts[i], err, errlen)) {
      rl_pair_free(p);
      return RL_EXIT_BADINPUT;
    }
  if (dt > 0) p->mjm->opt.timestep = dt;
  round_model_numbers(p->mjm);
  if (nconmax > p->mjm->nconmax) p->mjm->nconmax = nconmax;
  p->m = rl_import_mjmodel(p->mjm, &opt, c->model, err, errlen);
  if (!p->m || check_finite(p->m, c->model, err, errlen)) {
    rl_pair_free(p);
    return RL_EXIT_BADINPUT;
  }
  if (nconmax > 0) { /* MuJoCo's rows: rigidlab's row capacity for these contacts, and the stack that sizes */
    if (p->m->nefcmax > p->mjm->njmax) p->mjm->njmax = p->m->nefcmax;
    long st = mj_default_nstack(p->mjm);
    if (st > p->mjm->nstack && st < 0x7fffffffL) p->mjm->nstack = (int)st;
  }
  return RL_EXIT_OK;
}

rl_data *rl_pair_data(const rl_pair *p) {
  rl_data *d = rl_data_alloc(p->m);
  if (!d) {
    rl_errorf("%s: out of memory for the simulation data (%d contacts, %d constraint rows, %d Jacobian entries; "
              "a smaller max_contacts needs less)",
              p->path ? p->path : "model", p->m->nconmax, p->m->nefcmax, p->m->njmax);
    rl_csv_abort_all();
    exit(RL_EXIT_BADINPUT);
  }
  return d;
}

void rl_pair_free(rl_pair *p) {
  if (p->m) rl_model_free(p->m);
  if (p->mjm) mj_deleteModel(p->mjm);
  p->m = NULL;
  p->mjm = NULL;
}

void rl_set_state(const rl_pair *p, rl_data *d, mjData *mjd, const double *qpos, const double *qvel,
                  const double *ctrl) {
  const rl_model *m = p->m;
  for (int i = 0; i < m->nq; i++) d->qpos[i] = (real)qpos[i];
  for (int i = 0; i < m->nv; i++) d->qvel[i] = (real)qvel[i];
  for (int i = 0; i < m->nu; i++) d->ctrl[i] = ctrl ? (real)ctrl[i] : 0;
  for (int i = 0; i < m->na; i++) d->act[i] = p->act ? (real)p->act[i] : 0;
  if (p->mocap_pos) {
    for (int i = 0; i < 3 * m->nmocap; i++) d->mocap_pos[i] = (real)p->mocap_pos[i];
    for (int i = 0; i < 4 * m->nmocap; i++) d->mocap_quat[i] = (real)p->mocap_quat[i];
  } else rl_mocap_reset(m, d);
  if (!mjd) return;
  for (int i = 0; i < m->na; i++) mjd->act[i] = (double)d->act[i];
  for (int i = 0; i < 3 * m->nmocap; i++) mjd->mocap_pos[i] = (double)d->mocap_pos[i];
  for (int i = 0; i < 4 * m->nmocap; i++) mjd->mocap_quat[i] = (double)d->mocap_quat[i];
  for (int i = 0; i < m->nq; i++) mjd->qpos[i] = rl_round(qpos[i]);
  for (int i = 0; i < m->nv; i++) mjd->qvel[i] = rl_round(qvel[i]);
  for (int i = 0; i < m->nu; i++) mjd->ctrl[i] = ctrl ? rl_round(ctrl[i]) : 0;
}

void rl_mj_copy_inputs(const mjModel *mjm, mjData *dst, const mjData *src) {
  mju_copy(dst->act, src->act, mjm->na);
  mju_copy(dst->mocap_pos, src->mocap_pos, 3 * mjm->nmocap);
  mju_copy(dst->mocap_quat, src->mocap_quat, 4 * mjm->nmocap);
}

int rl_constraint_free(const rl_pair *p, char *why, int whylen) {
  const mjModel *m = p->mjm;
  int dis = m->opt.disableflags;
  if (dis & mjDSBL_CONSTRAINT) return 1;
  const char *names = m->names;
  if (!(dis & mjDSBL_LIMIT))
    for (int j = 0; j < m->njnt; j++)
      if (m->jnt_limited[j]) {
        snprintf(why, (size_t)whylen, "joint '%s' is limited", names + m->name_jntadr[j]);
        return 0;
      }
  if (!(dis & mjDSBL_LIMIT))
    for (int k = 0; k < m->ntendon; k++)
      if (m->tendon_limited[k]) {
        snprintf(why, (size_t)whylen, "tendon '%s' is limited", names + m->name_tendonadr[k]);
        return 0;
      }
  if (!(dis & mjDSBL_FRICTIONLOSS))
    for (int k = 0; k < m->ntendon; k++)
      if (m->tendon_frictionloss[k] > 0) {
        snprintf(why, (size_t)whylen, "tendon '%s' has frictionloss", names + m->name_tendonadr[k]);
        return 0;
      }
  if (!(dis & mjDSBL_FRICTIONLOSS))
    for (int i = 0; i < m->nv; i++)
      if (m->dof_frictionloss[i] > 0) {
        snprintf(why, (size_t)whylen, "joint '%s' has frictionloss", names + m->name_jntadr[m->dof_jntid[i]]);
        return 0;
      }
  if (!(dis & mjDSBL_EQUALITY))
    for (int e = 0; e < m->neq; e++) {
      snprintf(why, (size_t)whylen, "equality '%s' exists", names + m->name_eqadr[e]);
      return 0;
    }
  if (!(dis & mjDSBL_CONTACT) && m->npair > 0) {
    snprintf(why, (size_t)whylen, "the model lists %d explicit contact pair(s)", m->npair);
    return 0;
  }
  if (!(dis & mjDSBL_CONTACT))
    for (int g1 = 0; g1 < m->ngeom; g1++)
      for (int g2 = g1 + 1; g2 < m->ngeom; g2++)
        if (rl_geom_pair_allowed(p->m, g1, g2)) {
          snprintf(why, (size_t)whylen, "geoms '%s' and '%s' can collide", names + m->name_geomadr[g1],
                   names + m->name_geomadr[g2]);
          return 0;
        }
  return 1;
}
