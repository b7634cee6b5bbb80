/* analytic.c — kind = analytic (spec.h): each engine's trajectory (newton, cg, avbd, mujoco) against a
 * closed-form answer.  A scene declares its check in its MJCF file,
 *   <custom><text name="rigidlab_check" data="incline | freefall | torque_free"/></custom>,
 * and every expected value comes from the compiled model (gravity, the plane's frame, the geoms' friction,
 * the body's mass and inertia), with the point's sweep options applied.  Each scene has exactly one moving
 * body, on a free joint; the run starts from the scene's first keyframe when it has one (initial velocities).
 * Worker: traj_ID.expect.csv (the closed form's inputs from the model as run, --opt included), then traj_ID.csv
 * (as `rigidlab sim`).  Metrics (step: the argmax step, or the last step for fits):
 *   incline      the free body on the world's plane; n = the plane's normal, ĝ = g/|g|, cos θ = −n·ĝ,
 *                μ = max(μ_plane, μ_body) (MuJoCo's friction mixing), d = the downhill unit vector.
 *                tan θ > μ (slide): incline_accel_rel_err = |a − g(sin θ − μ cos θ)| / g(sin θ − μ cos θ),
 *                a = the least-squares slope (gsl_fit_linear) of v·d against t over the second half of the run;
 *                extra rows incline_accel, incline_accel_exact.  tan θ ≤ μ (stick): incline_creep = the
 *                largest tangential speed |v − (v·n)n| (m/s) over the second half.  Both: incline_tan_over_mu.
 *   freefall     freefall_err = max_n ‖x_n − x̂_n‖ / max_n ‖x̂_n − x_0‖ with x̂_n = x_0 + v_0 t + ½ g t² + ½ g t·dt,
 *                t = n·dt: the exact solution of the semi-implicit Euler step (v += g dt; x += v dt) that the
 *                euler and implicit integrators and AVBD take; RK4 is exact on constant acceleration (no dt term).
 *                Extra row freefall_err_continuous: the same against x_0 + v_0 t + ½ g t² (O(dt)).
 *   torque_free  zero gravity, no contacts: L = R I_b ω (angular momentum about the centre of mass, world
 *                frame; I_b the body-frame inertia, ω the free joint's body-frame angular velocity),
 *                T = ½ m ‖v_c‖² + ½ ωᵀ I_b ω (v_c: the centre of mass's velocity).  momentum_drift =
 *                max_n ‖L_n − L_0‖ / ‖L_0‖ (bounds the drift of |L|); kinetic_energy_drift = max_n |T_n − T_0| / T_0. */
#include <gsl/gsl_fit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "csv.h"
#include "mj_load.h"
#include "runner.h"
#include "spec.h"
#include "kinds.h"

enum { CHECK_INCLINE, CHECK_FREEFALL, CHECK_TORQUE_FREE };

/* what the checks need from the compiled model */
typedef struct amodel {
  int check;
  int qadr, vadr;  /* the free joint's qpos/qvel addresses */
  double dt, g[3]; /* time step; gravity (0 when disabled) */
  int rk4;
  double n[3], mu;      /* incline: the plane's normal (world), the mixed friction */
  double mass, ipos[3]; /* the body's mass and centre of mass (body frame) */
  double inertia[9];    /* body-frame inertia I_b = Q diag(I) Qᵀ, Q = the inertial frame's rotation */
} amodel;

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* the declared check: <custom><text name="rigidlab_check" data="…"/>; −1 when absent or unknown */
static int declared_check(const mjModel *m) {
  static const char *const names[3] = {"incline", "freefall", "torque_free"};
  for (int i = 0; i < m->ntext; i++) {
    if (strcmp(m->names + m->name_textadr[i], "rigidlab_check")) continue;
    for (int k = 0; k < 3; k++)
      if (!strcmp(m->text_data + m->text_adr[i], names[k])) return k;
  }
  return -1;
}

/* I_b = Q diag(I) Qᵀ: the body-frame inertia from the principal inertia and the inertial frame's quaternion */
static void body_inertia(const mjModel *m, int b, double *I) {
  double Q[9];
  mju_quat2Mat(Q, m->body_iquat + 4 * b);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      I[3 * i + j] = 0;
      for (int k = 0; k < 3; k++) I[3 * i + j] += Q[3 * i + k] * m->body_inertia[3 * b + k] * Q[3 * j + k];
    }
}

/* μ = max(friction[0]) over the plane and the body's geoms that can touch it (MuJoCo 2.2.2's mixing: max) */
static double mixed_friction(const mjModel *m, int plane, int body) {
  double mu = m->geom_friction[3 * plane];
  for (int g = 0; g < m->ngeom; g++)
    if (m->geom_bodyid[g] == body &&
        ((m->geom_contype[g] & m->geom_conaffinity[plane]) || (m->geom_contype[plane] & m->geom_conaffinity[g])))
      mu = fmax(mu, m->geom_friction[3 * g]);
  return mu;
}

/* load the point's scene with the worker's options (the sweep's and run --opt's, in order) and read what its
   check needs; 0 or −1 with a one-line err */
static int amodel_read(const char *scene, const char *const *opts, int nopts, double dt, const char *engine, amodel *a,
                       char *err, int errlen) {
  char e2[1024];
  memset(a, 0, sizeof *a);
  mjModel *m = rl_mj_load(scene, err, errlen);
  if (!m) return -1;
  for (int i = 0; i < nopts; i++)
    if (rl_mj_apply_opt(m, opts[i], e2, sizeof e2)) {
      rl_snprintf(err, (size_t)errlen, "%s: %s", scene, e2);
      goto bad;
    }
  a->check = declared_check(m);
  if (a->check < 0) {
    rl_snprintf(err, (size_t)errlen,
                "%s: kind = analytic needs <custom><text name=\"rigidlab_check\" "
                "data=\"incline | freefall | torque_free\"/></custom> in the scene",
                scene);
    goto bad;
  }
  if (m->njnt != 1 || m->jnt_type[0] != mjJNT_FREE) {
    rl_snprintf(err, (size_t)errlen,
                "%s: kind = analytic needs exactly one joint, a free joint (the model has %d "
                "joints)",
                scene, m->njnt);
    goto bad;
  }
  int body = m->jnt_bodyid[0];
  a->qadr = m->jnt_qposadr[0];
  a->vadr = m->jnt_dofadr[0];
  a->dt = dt > 0 ? dt : m->opt.timestep;
  a->rk4 = m->opt.integrator == mjINT_RK4 && strcmp(engine, "avbd"); /* AVBD's step ignores it */
  for (int k = 0; k < 3; k++) a->g[k] = m->opt.disableflags & mjDSBL_GRAVITY ? 0 : m->opt.gravity[k];
  a->mass = m->body_mass[body];
  for (int k = 0; k < 3; k++) a->ipos[k] = m->body_ipos[3 * body + k];
  body_inertia(m, body, a->inertia);
  double gn = sqrt(dot3(a->g, a->g));
  if (a->check == CHECK_INCLINE) {
    int plane = -1;
    for (int g = 0; g < m->ngeom && plane < 0; g++)
      if (m->geom_type[g] == mjGEOM_PLANE && m->geom_bodyid[g] == 0) plane = g;
    if (plane < 0 || !(gn > 0)) {
      rl_snprintf(err, (size_t)errlen, "%s: rigidlab_check = incline needs a plane geom in the worldbody and gravity",
                  scene);
      goto bad;
    }
    double R[9];
    mju_quat2Mat(R, m->geom_quat + 4 * plane);
    for (int k = 0; k < 3; k++) a->n[k] = R[3 * k + 2];
    a->mu = mixed_friction(m, plane, body);
    if (!(-dot3(a->n, a->g) > 0)) {
      rl_snprintf(err, (size_t)errlen, "%s: rigidlab_check = incline: the plane faces away from gravity", scene);
      goto bad;
    }
  } else if (a->check == CHECK_FREEFALL ? !(gn > 0) : gn != 0) {
    rl_snprintf(err, (size_t)errlen, "%s: rigidlab_check = %s needs %s gravity", scene,
                a->check == CHECK_FREEFALL ? "freefall" : "torque_free",
                a->check == CHECK_FREEFALL ? "non-zero" : "zero");
    goto bad;
  }
  mj_deleteModel(m);
  return 0;
bad:
  mj_deleteModel(m);
  return -1;
}

/* at load: the scene declares a closed-form check it satisfies */
static int analytic_check_scene(const rl_spec *s, const char *scene, char *err, int errlen) {
  (void)s;
  amodel a;
  return amodel_read(scene, NULL, 0, 0, "newton", &a, err, errlen);
}

/* the expected-value inputs, one row: check,qadr,vadr,dt,rk4,g0..2,n0..2,mu,mass,ipos0..2,inertia0..8 */
#define NEXPECT 25
static void amodel_pack(const amodel *a, double *x) {
  double h[8] = {a->check, a->qadr, a->vadr, a->dt, a->rk4, a->g[0], a->g[1], a->g[2]};
  memcpy(x, h, sizeof h);
  memcpy(x + 8, a->n, sizeof a->n);
  x[11] = a->mu;
  x[12] = a->mass;
  memcpy(x + 13, a->ipos, sizeof a->ipos);
  memcpy(x + 16, a->inertia, sizeof a->inertia);
}
static void amodel_unpack(const double *x, amodel *a) {
  a->check = (int)x[0];
  a->qadr = (int)x[1];
  a->vadr = (int)x[2];
  a->dt = x[3];
  a->rk4 = (int)x[4];
  memcpy(a->g, x + 5, sizeof a->g);
  memcpy(a->n, x + 8, sizeof a->n);
  a->mu = x[11];
  a->mass = x[12];
  memcpy(a->ipos, x + 13, sizeof a->ipos);
  memcpy(a->inertia, x + 16, sizeof a->inertia);
}
static const char *const expect_cols[NEXPECT] = {
    "check", "qadr",  "vadr",  "dt",  "rk4", "g0",  "g1",  "g2",  "n0",  "n1",  "n2",  "mu", "mass",
    "ipos0", "ipos1", "ipos2", "I00", "I01", "I02", "I10", "I11", "I12", "I20", "I21", "I22"};

/* traj_ID.expect.csv: the inputs of the closed form, read from the model the worker ran (its options included) */
static int write_expect(const char *dir, const rl_point *q, const amodel *a) {
  char path[4096], err[1024];
  double x[NEXPECT];
  rl_snprintf(path, sizeof path, "%s/traj_%s.expect.csv", dir, q->id);
  rl_csv w;
  if (rl_csv_open(&w, path, 0, err, sizeof err)) {
    rl_errorf("%s", err);
    return RL_EXIT_BADINPUT;
  }
  amodel_pack(a, x);
  for (int c = 0; c < NEXPECT; c++) rl_csv_str(&w, expect_cols[c]);
  rl_csv_end_row(&w);
  for (int c = 0; c < NEXPECT; c++) rl_csv_num(&w, x[c]);
  rl_csv_end_row(&w);
  return rl_study_finish_csv(&w, 0);
}

static int read_expect(const char *dir, const rl_point *q, amodel *a, char *err, int errlen) {
  char path[4096];
  int nrow, ncol;
  double *x;
  rl_snprintf(path, sizeof path, "%s/traj_%s.expect.csv", dir, q->id);
  if (rl_numcsv_read(path, NULL, &nrow, &ncol, &x, err, errlen)) return -1;
  if (nrow != 1 || ncol != NEXPECT) {
    free(x);
    rl_snprintf(err, (size_t)errlen, "%s: %d rows of %d numbers (1 row of %d expected)", path, nrow, ncol, NEXPECT);
    return -1;
  }
  memset(a, 0, sizeof *a);
  amodel_unpack(x, a);
  free(x);
  return 0;
}

static int analytic_run(const char *dir, const rl_spec *s, const rl_point *q, rl_sim_args *sa) {
  (void)s;
  char path[4096], err[1024];
  amodel am;
  if (amodel_read(q->scene, sa->c.opts, sa->c.nopts, q->dt, sa->engine, &am, err, sizeof err)) {
    rl_errorf("%s", err);
    return RL_EXIT_BADINPUT;
  }
  if (write_expect(dir, q, &am)) return RL_EXIT_BADINPUT;
  mjModel *m = rl_mj_load(q->scene, err, sizeof err);
  if (!m) {
    rl_errorf("%s", err);
    return RL_EXIT_BADINPUT;
  }
  sa->key = m->nkey ? "0" : NULL; /* the initial velocities live in the first keyframe */
  mj_deleteModel(m);
  rl_snprintf(path, sizeof path, "%s/traj_%s.csv", dir, q->id);
  rl_csv w;
  if (rl_study_open_csv(&w, path, q->f32, sa)) return RL_EXIT_BADINPUT;
  sa->dt = q->dt;
  int st = q->f32 ? rl32_cmd_sim(sa) : rl64_cmd_sim(sa);
  return rl_study_finish_csv(&w, st);
}

#define QPOS(t, r, k) ((t)->v[(size_t)(r) * (size_t)(t)->ncol + (size_t)(t)->c_qpos + (size_t)(k)])
#define QVEL(t, r, k) QPOS(t, r, (t)->nq + (k))
#define STEP(t, r)    ((long)(t)->v[(size_t)(r) * (size_t)(t)->ncol + (size_t)(t)->c_step])

/* incline: slide (a vs g(sin θ − μ cos θ)) or stick (creep), by tan θ against μ */
static void metrics_incline(rl_csv *w, const rl_spec *s, const rl_point *q, const amodel *a, const rl_traj *t) {
  double gn = sqrt(dot3(a->g, a->g)), c = -dot3(a->n, a->g) / gn, d[3];
  for (int k = 0; k < 3; k++) d[k] = a->g[k] - dot3(a->g, a->n) * a->n[k];
  double gt = sqrt(dot3(d, d)), sn = gt / gn;
  if (gt > 0)
    for (int k = 0; k < 3; k++) d[k] /= gt;
  rl_study_row(w, s, q, a->dt, "incline_tan_over_mu", sn / c / a->mu, STEP(t, t->nrow - 1));
  int r0 = t->nrow / 2, n = t->nrow - r0;
  if (sn / c > a->mu) {
    double exact = gn * (sn - a->mu * c);
    double *x = malloc(sizeof(double) * (size_t)n), *y = malloc(sizeof(double) * (size_t)n);
    for (int r = r0; r < t->nrow; r++) {
      double v[3] = {QVEL(t, r, a->vadr), QVEL(t, r, a->vadr + 1), QVEL(t, r, a->vadr + 2)};
      x[r - r0] = (double)STEP(t, r) * a->dt;
      y[r - r0] = dot3(v, d);
    }
    double c0, c1 = NAN, cov00, cov01, cov11, sumsq;
    if (n >= 2) gsl_fit_linear(x, 1, y, 1, (size_t)n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
    free(x);
    free(y);
    long last = STEP(t, t->nrow - 1);
    if (s->metrics >> RL_MET_INCLINE_ACCEL_REL_ERR & 1)
      rl_study_row(w, s, q, a->dt, "incline_accel_rel_err", fabs(c1 - exact) / exact, last);
    rl_study_row(w, s, q, a->dt, "incline_accel", c1, last);
    rl_study_row(w, s, q, a->dt, "incline_accel_exact", exact, last);
  } else if (s->metrics >> RL_MET_INCLINE_CREEP & 1) {
    double mx = -1;
    long at = 0;
    for (int r = r0; r < t->nrow; r++) {
      double v[3] = {QVEL(t, r, a->vadr), QVEL(t, r, a->vadr + 1), QVEL(t, r, a->vadr + 2)}, vn = dot3(v, a->n);
      for (int k = 0; k < 3; k++) v[k] -= vn * a->n[k];
      double sp = sqrt(dot3(v, v));
      if (sp > mx || isnan(sp)) {
        mx = sp, at = STEP(t, r);
        if (isnan(sp)) break;
      }
    }
    rl_study_row(w, s, q, a->dt, "incline_creep", mx, at);
  }
}

/* freefall: max_n ‖x_n − x̂_n‖ / max_n ‖x̂_n − x_0‖ against the integrator's exact discrete solution (and the
   continuous one) */
static void metrics_freefall(rl_csv *w, const rl_spec *s, const rl_point *q, const amodel *a, const rl_traj *t) {
  double x0[3], v0[3], e = 0, ec = 0, scale = 0;
  long at = 0, atc = 0;
  for (int k = 0; k < 3; k++) x0[k] = QPOS(t, 0, a->qadr + k), v0[k] = QVEL(t, 0, a->vadr + k);
  for (int r = 0; r < t->nrow; r++) {
    double tt = (double)STEP(t, r) * a->dt, dd = 0, dc = 0, dx = 0;
    for (int k = 0; k < 3; k++) {
      double cont = x0[k] + v0[k] * tt + 0.5 * a->g[k] * tt * tt;
      double disc = cont + (a->rk4 ? 0 : 0.5 * a->g[k] * tt * a->dt), x = QPOS(t, r, a->qadr + k);
      dd += (x - disc) * (x - disc);
      dc += (x - cont) * (x - cont);
      dx += (disc - x0[k]) * (disc - x0[k]);
    }
    if (!(sqrt(dd) <= e)) e = sqrt(dd), at = STEP(t, r);
    if (!(sqrt(dc) <= ec)) ec = sqrt(dc), atc = STEP(t, r);
    scale = fmax(scale, sqrt(dx));
  }
  if (s->metrics >> RL_MET_FREEFALL_ERR & 1) rl_study_row(w, s, q, a->dt, "freefall_err", e / scale, at);
  rl_study_row(w, s, q, a->dt, "freefall_err_continuous", ec / scale, atc);
}

/* L = R I_b ω and T = ½ m ‖v + R(ω × c)‖² + ½ ωᵀ I_b ω at row r (R from the free joint's quaternion) */
static void momentum_energy(const amodel *a, const rl_traj *t, int r, double *L, double *T) {
  double R[9], q[4], w[3], v[3], Iw[3], wc[3], Rwc[3];
  for (int k = 0; k < 4; k++) q[k] = QPOS(t, r, a->qadr + 3 + k);
  mju_normalize4(q);
  mju_quat2Mat(R, q);
  for (int k = 0; k < 3; k++) w[k] = QVEL(t, r, a->vadr + 3 + k), v[k] = QVEL(t, r, a->vadr + k);
  mju_mulMatVec(Iw, a->inertia, w, 3, 3);
  mju_mulMatVec(L, R, Iw, 3, 3);
  mju_cross(wc, w, a->ipos);
  mju_mulMatVec(Rwc, R, wc, 3, 3);
  for (int k = 0; k < 3; k++) v[k] += Rwc[k];
  *T = 0.5 * a->mass * dot3(v, v) + 0.5 * dot3(w, Iw);
}

static void metrics_torque_free(rl_csv *w, const rl_spec *s, const rl_point *q, const amodel *a, const rl_traj *t) {
  double L0[3], T0, L[3], T, dl = 0, de = 0;
  long atl = 0, ate = 0;
  momentum_energy(a, t, 0, L0, &T0);
  double l0 = sqrt(dot3(L0, L0));
  for (int r = 1; r < t->nrow; r++) {
    momentum_energy(a, t, r, L, &T);
    double d[3] = {L[0] - L0[0], L[1] - L0[1], L[2] - L0[2]}, x = sqrt(dot3(d, d)) / l0, y = fabs(T - T0) / T0;
    if (!(x <= dl)) dl = x, atl = STEP(t, r);
    if (!(y <= de)) de = y, ate = STEP(t, r);
  }
  if (s->metrics >> RL_MET_MOMENTUM_DRIFT & 1) rl_study_row(w, s, q, a->dt, "momentum_drift", dl, atl);
  if (s->metrics >> RL_MET_KINETIC_ENERGY_DRIFT & 1) rl_study_row(w, s, q, a->dt, "kinetic_energy_drift", de, ate);
}

static int analytic_metrics(rl_csv *w, const char *dir, const rl_spec *s, const rl_point *pts, const rl_point *q,
                            char *err, int errlen) {
  (void)pts;
  char path[4096];
  amodel a;
  rl_traj t;
  if (read_expect(dir, q, &a, err, errlen)) return -1;
  rl_snprintf(path, sizeof path, "%s/traj_%s.csv", dir, q->id);
  if (rl_traj_read(path, &t, err, errlen)) return -1;
  if (t.nq < a.qadr + 7 || t.nrow < 2) {
    rl_snprintf(err, (size_t)errlen, "%s: too few columns or rows for the scene's free joint", path);
    rl_traj_free(&t);
    return -1;
  }
  switch (a.check) {
  case CHECK_INCLINE: metrics_incline(w, s, q, &a, &t); break;
  case CHECK_FREEFALL: metrics_freefall(w, s, q, &a, &t); break;
  default: metrics_torque_free(w, s, q, &a, &t);
  }
  rl_traj_free(&t);
  return 0;
}

const rl_study_kind rl_kind_analytic = {
    .name = "analytic",
    .refs = 1u << RL_REF_CLOSED_FORM,
    .refs_required = 1u << RL_REF_CLOSED_FORM,
    .check_scene = analytic_check_scene,
    .run = analytic_run,
    .done = "",
    .metrics = analytic_metrics,
};
