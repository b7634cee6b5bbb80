/* test_tendon.c — tendon lengths and Jacobians against themselves, independently of MuJoCo: on random states
 * of the tendon models, every column of ten_J matches the central difference (L(q + h·e_i) − L(q − h·e_i))/2h
 * of the tendon lengths (the position moved along dof i by rl_integrate_pos), wherever neither side of the
 * difference changes the path (a wrap that appears or vanishes); ten_velocity = ten_J·qvel.  The wrapped
 * states are counted, so the check cannot pass on straight paths alone. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pair.h"
#include "states.h"

#define MODEL(name) SRCDIR "/tests/models/" name

/* lengths (n) and the number of path points of every tendon at qpos */
static void lengths_at(const rl_model *m, rl_data *d, const double *qpos, double *L, int *npts) {
  for (int i = 0; i < m->nq; i++) d->qpos[i] = qpos[i];
  rl_fwd_position(m, d);
  *npts = 0;
  for (int k = 0; k < m->ntendon; k++) {
    L[k] = d->ten_length[k];
    *npts += d->ten_wrapnum[k];
  }
}

/* worst |FD − J| / max(1, |J|) over states, dofs and tendons; *wrapped: states whose path has a wrap point */
static double jacobian_fd(const char *model, int nstate, int *wrapped, int *compared) {
  rl_common_args c = {0};
  char err[1024];
  c.model = model;
  rl_pair p;
  cr_assert_eq(rl_pair_load(&p, &c, 0, err, sizeof err), 0, "%s", err);
  const rl_model *m = p.m;
  rl_data *d = rl_data_alloc(m);
  rl_states S;
  rl_states_draw(p.mjm, nstate, 3, &S);
  int nt = m->ntendon, nv = m->nv, nq = m->nq;
  double *L0 = calloc((size_t)nt, sizeof(double)), *Lp = calloc((size_t)nt, sizeof(double));
  double *Lm = calloc((size_t)nt, sizeof(double)), *J = calloc((size_t)nt * nv, sizeof(double));
  double *q = calloc((size_t)nq, sizeof(double)), *dir = calloc((size_t)nv, sizeof(double));
  real *qr = calloc((size_t)nq, sizeof(real)), *vr = calloc((size_t)nv, sizeof(real));
  int *obj0 = calloc((size_t)m->nwrappnt + 1, sizeof(int));
  const double h = 1e-6;
  double worst = 0;
  *wrapped = *compared = 0;
  for (int s = 0; s < S.n; s++) {
    const double *qs = S.qpos + (size_t)s * nq;
    int n0, np, nm;
    lengths_at(m, d, qs, L0, &n0);
    for (int i = 0; i < nt * nv; i++) J[i] = d->ten_J[i];
    int wraps = 0;
    for (int i = 0; i < n0; i++) wraps += (obj0[i] = d->wrap_obj[i]) >= 0;
    *wrapped += wraps > 0;
    /* ten_velocity = ten_J · qvel */
    for (int i = 0; i < nv; i++) d->qvel[i] = S.qvel[(size_t)s * nv + i];
    rl_fwd_velocity(m, d);
    for (int k = 0; k < nt; k++) {
      double v = 0;
      for (int i = 0; i < nv; i++) v += J[k * nv + i] * S.qvel[(size_t)s * nv + i];
      cr_expect(fabs(v - d->ten_velocity[k]) <= 1e-12 * (1 + fabs(v)), "%s: ten_velocity %d", model, k);
    }
    for (int i = 0; i < nv; i++) {
      double sgn[2] = {1, -1}, *Ls[2] = {Lp, Lm};
      int *ns[2] = {&np, &nm}, ok = 1;
      for (int t = 0; t < 2; t++) {
        for (int j = 0; j < nq; j++) qr[j] = qs[j];
        memset(vr, 0, sizeof(real) * (size_t)nv);
        vr[i] = sgn[t];
        rl_integrate_pos(m, qr, vr, h);
        for (int j = 0; j < nq; j++) q[j] = qr[j];
        lengths_at(m, d, q, Ls[t], ns[t]);
        int same = *ns[t] == n0; /* the same path: the same points with the same tags */
        for (int j = 0; j < n0 && same; j++) same = d->wrap_obj[j] == obj0[j];
        ok &= same;
      }
      if (!ok) continue;
      for (int k = 0; k < nt; k++) {
        double fd = (Lp[k] - Lm[k]) / (2 * h), e = fabs(fd - J[k * nv + i]) / fmax(1, fabs(J[k * nv + i]));
        if (e > worst) worst = e;
        (*compared)++;
      }
    }
  }
  free(L0), free(Lp), free(Lm), free(J), free(q), free(dir), free(qr), free(vr), free(obj0);
  rl_states_free(&S);
  rl_data_free(d);
  rl_pair_free(&p);
  return worst;
}

Test(tendon, jacobian_is_the_length_derivative) {
  static const char *const models[] = {MODEL("tendon_arm.xml"), MODEL("tendon_finger.xml"), MODEL("tendon_limit.xml"),
                                       MODEL("tendon_chain.xml"), NULL};
  for (int k = 0; models[k]; k++) {
    int wrapped, compared;
    double worst = jacobian_fd(models[k], 60, &wrapped, &compared);
    cr_log_info("%s: worst |dL/dq - J| = %.3g over %d entries, %d wrapped states", models[k], worst, compared, wrapped);
    cr_expect(worst < 1e-6, "%s: ten_J differs from the length derivative by %.3g", models[k], worst);
    cr_expect(compared > 0, "%s: nothing compared", models[k]);
    if (k != 1) cr_expect(wrapped >= 5, "%s: only %d of 60 states wrap", models[k], wrapped);
  }
}

/* The whole pipeline computes the tendons at the current position on both of its paths: after rl_forward_path
   at state A then state B, ten_length and ten_J equal rl_fwd_position's at B (a pass that skipped rl_tendon
   would keep A's, and every tendon actuator, spring and limit would act on a stale length). */
static void forward_tendons_current(const char *model, int path) {
  rl_common_args c = {0};
  char err[1024];
  c.model = model;
  rl_pair p;
  cr_assert_eq(rl_pair_load(&p, &c, 0, err, sizeof err), 0, "%s", err);
  const rl_model *m = p.m;
  rl_data *d = rl_data_alloc(m);
  rl_states S;
  rl_states_draw(p.mjm, 4, 11, &S);
  int nt = m->ntendon, nv = m->nv, nq = m->nq;
  cr_assert(nt > 0);
  double *L = calloc((size_t)nt, sizeof(double)), *J = calloc((size_t)nt * nv, sizeof(double));
  int npts;
  for (int s = 1; s < S.n; s++) {
    lengths_at(m, d, S.qpos + (size_t)s * nq, L, &npts); /* the reference at B */
    for (int i = 0; i < nt * nv; i++) J[i] = d->ten_J[i];
    double La[64];
    cr_assert(nt <= 64);
    lengths_at(m, d, S.qpos + (size_t)(s - 1) * nq, La, &npts); /* A's tendons left in d */
    for (int i = 0; i < nq; i++) d->qpos[i] = S.qpos[(size_t)s * nq + i];
    for (int i = 0; i < nv; i++) d->qvel[i] = S.qvel[(size_t)s * nv + i];
    rl_forward_path(m, d, path);
    for (int k = 0; k < nt; k++)
      cr_expect(fabs(d->ten_length[k] - L[k]) <= 1e-14 * (1 + fabs(L[k])),
                "%s path %d state %d: ten_length[%d] %.17g, at this position %.17g (the previous one: %.17g)", model,
                path, s, k, (double)d->ten_length[k], L[k], La[k]);
    for (int i = 0; i < nt * nv; i++)
      cr_expect(fabs(d->ten_J[i] - J[i]) <= 1e-14 * (1 + fabs(J[i])), "%s path %d: ten_J[%d]", model, path, i);
  }
  free(L);
  free(J);
  rl_states_free(&S);
  rl_data_free(d);
  rl_pair_free(&p);
}

Test(tendon, forward_computes_tendons_at_the_current_position) {
  forward_tendons_current(MODEL("tendon_arm.xml"), RL_PATH_FACTORED);
  forward_tendons_current(MODEL("tendon_arm.xml"), RL_PATH_RECURSIVE);
  forward_tendons_current(MODEL("tendon_finger.xml"), RL_PATH_FACTORED);
}
