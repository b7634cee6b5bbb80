/* states.c — reproducible random and trajectory states (see states.h). */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "states.h"

#define RL_PI_D 3.14159265358979323846

/* uniform unit quaternion: normalized 4-D Gaussian */
static void random_quat(gsl_rng *r, double q[4]) {
  double n = 0;
  for (int k = 0; k < 4; k++) {
    q[k] = gsl_ran_gaussian(r, 1.0);
    n += q[k] * q[k];
  }
  n = sqrt(n);
  for (int k = 0; k < 4; k++) q[k] /= n;
}

static void normalize_quats(const mjModel *m, double *qpos) {
  for (int j = 0; j < m->njnt; j++) {
    int a = m->jnt_qposadr[j];
    if (m->jnt_type[j] == mjJNT_FREE) a += 3;
    else if (m->jnt_type[j] != mjJNT_BALL) continue;
    double n =
        sqrt(qpos[a] * qpos[a] + qpos[a + 1] * qpos[a + 1] + qpos[a + 2] * qpos[a + 2] + qpos[a + 3] * qpos[a + 3]);
    for (int k = 0; k < 4; k++) qpos[a + k] /= n;
  }
}

static void random_state(const mjModel *m, gsl_rng *r, double *qpos, double *qvel, double *ctrl) {
  memcpy(qpos, m->qpos0, sizeof(double) * (size_t)m->nq);
  for (int j = 0; j < m->njnt; j++) {
    int a = m->jnt_qposadr[j];
    const double *rg = m->jnt_range + 2 * j;
    switch (m->jnt_type[j]) {
    case mjJNT_FREE:
      for (int k = 0; k < 3; k++) qpos[a + k] = m->qpos0[a + k] + gsl_ran_flat(r, -0.5, 0.5);
      random_quat(r, qpos + a + 3);
      break;
    case mjJNT_BALL: random_quat(r, qpos + a); break;
    case mjJNT_SLIDE: qpos[a] = m->jnt_limited[j] ? gsl_ran_flat(r, rg[0], rg[1]) : gsl_ran_flat(r, -0.5, 0.5); break;
    default: qpos[a] = m->jnt_limited[j] ? gsl_ran_flat(r, rg[0], rg[1]) : gsl_ran_flat(r, -RL_PI_D, RL_PI_D); break;
    }
  }
  for (int i = 0; i < m->nv; i++) qvel[i] = gsl_ran_gaussian(r, 1.0);
  for (int u = 0; u < m->nu; u++) {
    const double *cr = m->actuator_ctrlrange + 2 * u;
    ctrl[u] = m->actuator_ctrllimited[u] ? gsl_ran_flat(r, cr[0], cr[1]) : gsl_ran_gaussian(r, 1.0);
  }
}

/* activations: within actrange when limited, [0, 1] for muscles, else Gaussian */
static void random_act(const mjModel *m, gsl_rng *r, double *act) {
  for (int a = 0; a < m->na; a++) {
    int u = a + m->nu - m->na;
    const double *ar = m->actuator_actrange + 2 * u;
    act[a] = m->actuator_actlimited[u]                ? gsl_ran_flat(r, ar[0], ar[1])
             : m->actuator_dyntype[u] == mjDYN_MUSCLE ? gsl_ran_flat(r, 0, 1)
                                                      : gsl_ran_gaussian(r, 1.0);
  }
}

/* mocap poses: the model's, moved by up to 0.1 m per axis and turned by a small random rotation */
static void random_mocap(const mjModel *m, gsl_rng *r, double *pos, double *quat) {
  for (int b = 0; b < m->nbody; b++) {
    int k = m->body_mocapid[b];
    if (k < 0) continue;
    double n = 0;
    for (int c = 0; c < 3; c++) pos[3 * k + c] = m->body_pos[3 * b + c] + gsl_ran_flat(r, -0.1, 0.1);
    for (int c = 0; c < 4; c++) {
      quat[4 * k + c] = m->body_quat[4 * b + c] + gsl_ran_gaussian(r, 0.2);
      n += quat[4 * k + c] * quat[4 * k + c];
    }
    for (int c = 0; c < 4; c++) quat[4 * k + c] /= sqrt(n);
  }
}

static void random_ctrl(const mjModel *m, gsl_rng *r, double *ctrl) {
  for (int u = 0; u < m->nu; u++) {
    const double *cr = m->actuator_ctrlrange + 2 * u;
    ctrl[u] = m->actuator_ctrllimited[u] ? gsl_ran_flat(r, cr[0], cr[1]) : gsl_ran_gaussian(r, 0.5);
  }
}

static int finite_state(const mjModel *m, const mjData *d) {
  for (int i = 0; i < m->nq; i++)
    if (!isfinite(d->qpos[i])) return 0;
  for (int i = 0; i < m->nv; i++)
    if (!isfinite(d->qvel[i]) || fabs(d->qvel[i]) > 1e4) return 0;
  return 1;
}

int rl_states_draw(const mjModel *m, int n, unsigned long seed, rl_states *s) {
  return rl_states_draw_on(m, NULL, n, seed, s);
}

int rl_states_draw_on(const mjModel *m, mjData *scratch, int n, unsigned long seed, rl_states *s) {
  memset(s, 0, sizeof *s);
  s->n = n;
  s->nq = m->nq;
  s->nv = m->nv;
  s->nu = m->nu;
  s->qpos = calloc((size_t)n * m->nq + 1, sizeof(double));
  s->qvel = calloc((size_t)n * m->nv + 1, sizeof(double));
  s->ctrl = calloc((size_t)n * m->nu + 1, sizeof(double));
  s->na = m->na;
  s->nmocap = m->nmocap;
  s->act = calloc((size_t)n * m->na + 1, sizeof(double));
  s->mocap_pos = calloc((size_t)n * 3 * m->nmocap + 1, sizeof(double));
  s->mocap_quat = calloc((size_t)n * 4 * m->nmocap + 1, sizeof(double));
  if (!s->qpos || !s->qvel || !s->ctrl || !s->act || !s->mocap_pos || !s->mocap_quat) return -1;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, seed);
  int nrand = (n + 1) / 2;
  for (int k = 0; k < nrand; k++) {
    random_state(m, r, s->qpos + (size_t)k * m->nq, s->qvel + (size_t)k * m->nv, s->ctrl + (size_t)k * m->nu);
    random_act(m, r, s->act + (size_t)k * m->na);
    random_mocap(m, r, s->mocap_pos + (size_t)k * 3 * m->nmocap, s->mocap_quat + (size_t)k * 4 * m->nmocap);
  }
  /* trajectory half: 10 steps between samples, controls redrawn every 50 steps */
  mjData *d = scratch ? scratch : mj_makeData(m);
  if (!d) {
    gsl_rng_free(r);
    return -1;
  }
  mj_resetData(m, d);
  long step = 0;
  for (int k = nrand; k < n; k++) {
    for (int t = 0; t < 10; t++, step++) {
      if (step % 50 == 0) {
        random_ctrl(m, r, d->ctrl);
        random_mocap(m, r, d->mocap_pos, d->mocap_quat);
      }
      mj_step(m, d);
      if (!finite_state(m, d)) mj_resetData(m, d);
    }
    double *qp = s->qpos + (size_t)k * m->nq, *qv = s->qvel + (size_t)k * m->nv;
    memcpy(qp, d->qpos, sizeof(double) * (size_t)m->nq);
    memcpy(qv, d->qvel, sizeof(double) * (size_t)m->nv);
    memcpy(s->ctrl + (size_t)k * m->nu, d->ctrl, sizeof(double) * (size_t)m->nu);
    memcpy(s->act + (size_t)k * m->na, d->act, sizeof(double) * (size_t)m->na);
    memcpy(s->mocap_pos + (size_t)k * 3 * m->nmocap, d->mocap_pos, sizeof(double) * 3 * (size_t)m->nmocap);
    memcpy(s->mocap_quat + (size_t)k * 4 * m->nmocap, d->mocap_quat, sizeof(double) * 4 * (size_t)m->nmocap);
    for (int i = 0; i < m->nq; i++) qp[i] += gsl_ran_gaussian(r, 1e-3);
    for (int i = 0; i < m->nv; i++) qv[i] += gsl_ran_gaussian(r, 1e-2);
    normalize_quats(m, qp);
  }
  if (!scratch) mj_deleteData(d);
  gsl_rng_free(r);
  return 0;
}

void rl_states_free(rl_states *s) {
  free(s->qpos);
  free(s->qvel);
  free(s->ctrl);
  free(s->act);
  free(s->mocap_pos);
  free(s->mocap_quat);
  memset(s, 0, sizeof *s);
}

int rl_find_key(const mjModel *m, const char *key) {
  int k = mj_name2id(m, mjOBJ_KEY, key);
  if (k >= 0) return k;
  char *end;
  long i = strtol(key, &end, 10);
  if (*key && !*end && i >= 0 && i < m->nkey) return (int)i;
  return -1;
}
