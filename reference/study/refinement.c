/* refinement.c — kind = refinement (spec.h): the worker side (which files a point writes) and the metrics the parent
 * computes from those files.
 *   refinement  traj_ID.L<k>.csv: the trajectory at dt0·2^−k (k = 0..K−1) to the same final time;
 *               traj_ID.seg.csv (newton, cg, avbd): level,dt,segment,err — each level advanced over S = 8
 *               segments from the finest trajectory's state at the segment's start (zero warm start)
 *               and compared with the finest level advanced the same way, so that chaos between
 *               segments cannot masquerade as discretization error.  Metrics: per level k < K−1
 *               err_final_L<k> (max |Δqpos| vs the finest at the final time) and err_seg_L<k> (the mean
 *               over segments of max |Δqpos| at the segment's end); order ± order_stderr: the slope
 *               of log d_k vs log dt_k (gsl_fit_linear), d_k = the segment-mean of max |x_k − x_{k+1}|
 *               between successive levels (final-time differences where no segments), order_final:
 *               the same on the final-time differences; richardson_err: max |q_F − q_R| with q_R =
 *               q_F + (q_F − q_C)/(2^p − 1) (C, F: the two finest levels, p = order), the estimated error
 *               of the finest run.  traj_ID.ode.csv (index,qpos): for contact-free, hinge-only scenes
 *               (rl_constraint_free; otherwise header only and no ODE metrics) the final qpos of
 *               q̈ = M⁻¹(q)·qfrc_smooth(q, q̇) integrated by gsl_odeiv2 rk8pd (tolerance 1e-12) with
 *               rigidlab's f64 smooth dynamics; metrics ode_err_L<k> (k = 0..K−1: max |q_k − q_ode| at
 *               the final time) and order_ode ± order_ode_stderr (the slope of log ode_err vs log dt). */
#include <gsl/gsl_fit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "csv.h"
#include "kinds.h"
#include "runner.h"
#include "study_kinds.h"
#include "options.h"

#define NSEG 8

/* traj_ID.ode.csv: index,qpos — the GSL ODE reference's final qpos (study_kinds.h: study_ode, always in f64)
   from level 0's initial state to TFINAL; header only when the scene can make constraint rows
   (contacts, limits, …: rl_constraint_free) or is not hinge-only, where the smooth ODE is not the
   model's dynamics and there is no reference. */
static int ode_reference(const char *dir, const rl_point *q, rl_sim_args *sa, double tfinal, int use_ode) {
  char path[4096], err[1024], why[512] = "";
  rl_traj l0;
  rl_study_file(path, sizeof path, dir, q, ".L0");
  if (rl_traj_read(path, &l0, err, sizeof err)) {
    rl_errorf("%s", err);
    return RL_EXIT_BADINPUT;
  }
  int nq = l0.nq, nv = l0.c_iter - l0.c_qpos - nq;
  double *y0 = malloc(sizeof(double) * (size_t)(nq + nv + 1)), *qf = malloc(sizeof(double) * (size_t)(nq + 1));
  for (int i = 0; i < nq + nv; i++) y0[i] = RL_QP(&l0, 0, i);
  rl_traj_free(&l0);
  /* [reference] use without gsl_ode: no ODE solve, a header-only file (no ode metrics) */
  int r = !use_ode ? 1 : nq == nv ? rl64_study_ode(sa, tfinal, nq, y0, y0 + nq, qf, why, sizeof why) : 1;
  rl_csv w;
  rl_study_file(path, sizeof path, dir, q, ".ode");
  if (r < 0 || rl_csv_open(&w, path, 0, err, sizeof err)) {
    if (r >= 0) rl_errorf("%s", err);
    free(y0);
    free(qf);
    return RL_EXIT_BADINPUT;
  }
  rl_csv_str(&w, "index");
  rl_csv_str(&w, "qpos");
  rl_csv_end_row(&w);
  for (int i = 0; i < nq && r == 0; i++) {
    rl_csv_int(&w, i);
    rl_csv_num(&w, qf[i]);
    rl_csv_end_row(&w);
  }
  free(y0);
  free(qf);
  return rl_study_finish_csv(&w, 0);
}

static int refinement_run(const char *dir, const rl_spec *s, const rl_point *q, rl_sim_args *sa) {
  char path[4096], err[1024];
  double dt0 = rl_study_point_dt(q, err, sizeof err);
  if (isnan(dt0)) {
    rl_errorf("%s", err);
    return RL_EXIT_BADINPUT;
  }
  int K = s->levels, st = 0;
  /* the finest level runs steps0 · 2^(K−1) steps: within the cap of a run's steps */
  double n0 = s->steps >= 0 ? (double)s->steps : s->duration / dt0;
  if (!(ldexp(n0, K - 1) <= (double)RL_MAX_STEPS)) {
    rl_errorf("%s: %g steps at the finest of %d levels (allowed: at most %ld)", s->path, ldexp(n0, K - 1), K,
              RL_MAX_STEPS);
    return RL_EXIT_BADINPUT;
  }
  long steps0 = s->steps >= 0 ? s->steps : lround(s->duration / dt0);
  for (int k = 0; k < K && !st; k++) {
    char suf[16];
    rl_snprintf(suf, sizeof suf, ".L%d", k);
    rl_study_file(path, sizeof path, dir, q, suf);
    sa->dt = ldexp(dt0, -k);
    sa->steps = steps0 << k;
    st = rl_study_sim_to(sa, q->f32, path);
  }
  if (st) return st;
  if ((st = ode_reference(dir, q, sa, dt0 * (double)steps0, rl_spec_uses(s, RL_REF_GSL_ODE)))) return st;
  /* segments from the finest trajectory's states */
  rl_csv w;
  rl_study_file(path, sizeof path, dir, q, ".seg");
  if (rl_csv_open(&w, path, 0, err, sizeof err)) {
    rl_errorf("%s", err);
    return RL_EXIT_BADINPUT;
  }
  const char *cols[] = {"level", "dt", "segment", "err", "diff_next"};
  for (int c = 0; c < 5; c++) rl_csv_str(&w, cols[c]);
  rl_csv_end_row(&w);
  long seg0 = steps0 / NSEG;
  if (rl_study_restartable(q->engine) && seg0 >= 1) {
    rl_traj fine;
    char fp[4096], suf[16];
    rl_snprintf(suf, sizeof suf, ".L%d", K - 1);
    rl_study_file(fp, sizeof fp, dir, q, suf);
    if (rl_traj_read(fp, &fine, err, sizeof err)) {
      rl_errorf("%s", err);
      rl_csv_abort(&w);
      return RL_EXIT_BADINPUT;
    }
    int nq = fine.nq, nv = RL_TRAJ_NV(&fine);
    long row[NSEG];
    for (int g = 0; g < NSEG; g++) row[g] = (long)g * (seg0 << (K - 1));
    double *qp = malloc(sizeof(double) * NSEG * (size_t)nq), *qv = malloc(sizeof(double) * NSEG * (size_t)nv);
    double *op = malloc(sizeof(double) * NSEG * (size_t)nq * (size_t)K),
           *ov = malloc(sizeof(double) * NSEG * (size_t)nv);
    rl_study_states_at(&fine, row, NSEG, nv, qp, qv);
    for (int k = 0; k < K && !st; k++) {
      sa->dt = ldexp(dt0, -k);
      st = q->f32 ? rl32_study_onestep(sa, seg0 << k, NSEG, nq, nv, qp, qv, op + (size_t)k * NSEG * (size_t)nq, ov)
                  : rl64_study_onestep(sa, seg0 << k, NSEG, nq, nv, qp, qv, op + (size_t)k * NSEG * (size_t)nq, ov);
    }
    for (int k = 0; k + 1 < K && !st; k++)
      for (int g = 0; g < NSEG; g++) {
        double e = 0, dn = 0;
        for (int i = 0; i < nq; i++) {
          double x = op[((size_t)k * NSEG + (size_t)g) * (size_t)nq + (size_t)i];
          e = fmax(e, fabs(x - op[((size_t)(K - 1) * NSEG + (size_t)g) * (size_t)nq + (size_t)i]));
          dn = fmax(dn, fabs(x - op[((size_t)(k + 1) * NSEG + (size_t)g) * (size_t)nq + (size_t)i]));
        }
        rl_csv_int(&w, k);
        rl_csv_num(&w, ldexp(dt0, -k));
        rl_csv_int(&w, g);
        rl_csv_num(&w, e);
        rl_csv_num(&w, dn);
        rl_csv_end_row(&w);
      }
    free(qp);
    free(qv);
    free(op);
    free(ov);
    rl_traj_free(&fine);
  }
  return rl_study_finish_csv(&w, st);
}

/* slope and its standard error of log e vs log dt over the positive errors; NaN when < 3 */
static void fit_order(const double *dt, const double *e, int n, double *p, double *se) {
  double x[16], y[16];
  int k = 0;
  for (int i = 0; i < n; i++)
    if (e[i] > 0 && isfinite(e[i])) {
      x[k] = log(dt[i]);
      y[k++] = log(e[i]);
    }
  *p = *se = NAN;
  if (k < 3) return;
  double c0, c1, cov00, cov01, cov11, sumsq;
  gsl_fit_linear(x, 1, y, 1, (size_t)k, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
  *p = c1;
  *se = sqrt(cov11);
}

static int refinement_metrics(rl_csv *w, const char *dir, const rl_spec *s, const rl_point *pts, const rl_point *q,
                              char *err, int errlen) {
  (void)pts;
  int K = s->levels;
  rl_traj lv[12];
  char path[4096], name[64];
  for (int k = 0; k < K; k++) {
    char suf[16];
    rl_snprintf(suf, sizeof suf, ".L%d", k);
    rl_study_file(path, sizeof path, dir, q, suf);
    if (rl_traj_read(path, &lv[k], err, errlen)) {
      while (k--) rl_traj_free(&lv[k]);
      return -1;
    }
  }
  rl_numtable seg;
  rl_study_file(path, sizeof path, dir, q, ".seg");
  if (rl_numtable_read(path, &seg, err, errlen)) {
    for (int k = 0; k < K; k++) rl_traj_free(&lv[k]);
    return -1;
  }
  double dt[12], ef[12], es[12], df[12], ds[12];
  const rl_traj *F = &lv[K - 1];
  double dt0 = rl_study_point_dt(q, err, errlen);
  if (isnan(dt0)) {
    for (int k = 0; k < K; k++) rl_traj_free(&lv[k]);
    return -1;
  }
  for (int k = 0; k + 1 < K; k++) {
    const rl_traj *L = &lv[k];
    dt[k] = ldexp(dt0, -k);
    const rl_traj *N = &lv[k + 1];
    ef[k] = df[k] = 0;
    for (int i = 0; i < L->nq && i < F->nq; i++) {
      ef[k] = fmax(ef[k], fabs(RL_QP(L, L->nrow - 1, i) - RL_QP(F, F->nrow - 1, i)));
      df[k] = fmax(df[k], fabs(RL_QP(L, L->nrow - 1, i) - RL_QP(N, N->nrow - 1, i)));
    }
    double sum = 0, sumd = 0;
    int n = 0;
    for (int r = 0; r < seg.nrow; r++)
      if ((int)RL_TV(&seg, r, 0) == k) {
        sum += RL_TV(&seg, r, 3);
        sumd += RL_TV(&seg, r, 4);
        n++;
      }
    es[k] = n ? sum / n : NAN;
    ds[k] = n ? sumd / n : NAN;
    rl_snprintf(name, sizeof name, "err_final_L%d", k);
    rl_study_row(w, s, q, dt[k], name, ef[k], (long)RL_TV(L, L->nrow - 1, L->c_step));
    if (n) {
      rl_snprintf(name, sizeof name, "err_seg_L%d", k);
      rl_study_row(w, s, q, dt[k], name, es[k], (long)RL_TV(L, L->nrow - 1, L->c_step));
    }
  }
  double p, se, pf, sef;
  /* the fit is on successive differences |x_k − x_{k+1}| ∝ dt_k^p (1 − 2^−p): unbiased, unlike the
     error against the finest level, which shrinks faster than dt^p near the finest */
  fit_order(dt, df, K - 1, &pf, &sef);
  if (seg.nrow) fit_order(dt, ds, K - 1, &p, &se);
  else p = pf, se = sef;
  long last = (long)RL_TV(&lv[0], lv[0].nrow - 1, lv[0].c_step);
  if (rl_study_wants(s, RL_MET_ORDER)) rl_study_row(w, s, q, dt0, "order", p, last);
  if (rl_study_wants(s, RL_MET_ORDER_STDERR)) rl_study_row(w, s, q, dt0, "order_stderr", se, last);
  if (rl_study_wants(s, RL_MET_ORDER_FINAL)) rl_study_row(w, s, q, dt0, "order_final", pf, last);
  /* Richardson from the two finest levels C, F and the fitted order p: q_R = q_F + (q_F − q_C)/(2^p − 1);
     richardson_err = max |q_F − q_R| = max |q_F − q_C|/(2^p − 1), the estimated error of the finest run */
  if (rl_study_wants(s, RL_MET_RICHARDSON_ERR) && rl_spec_uses(s, RL_REF_RICHARDSON) && isfinite(p) && p > 0) {
    const rl_traj *C = &lv[K - 2];
    double e = 0;
    for (int i = 0; i < C->nq && i < F->nq; i++) e = fmax(e, fabs(RL_QP(F, F->nrow - 1, i) - RL_QP(C, C->nrow - 1, i)));
    rl_study_row(w, s, q, ldexp(dt0, -(K - 1)), "richardson_err", e / (exp2(p) - 1),
                 (long)RL_TV(F, F->nrow - 1, F->c_step));
  }
  /* against the GSL ODE reference (contact-free scenes only: .ode.csv has no rows otherwise) */
  rl_numtable ode;
  rl_study_file(path, sizeof path, dir, q, ".ode");
  if (rl_numtable_read(path, &ode, err, errlen)) {
    free(seg.v);
    for (int k = 0; k < K; k++) rl_traj_free(&lv[k]);
    return -1;
  }
  if (ode.nrow) {
    double eo[12], dto[12];
    for (int k = 0; k < K; k++) {
      const rl_traj *L = &lv[k];
      dto[k] = ldexp(dt0, -k);
      eo[k] = 0;
      for (int i = 0; i < L->nq && i < ode.nrow; i++)
        eo[k] = fmax(eo[k], fabs(RL_QP(L, L->nrow - 1, i) - RL_TV(&ode, i, 1)));
      rl_snprintf(name, sizeof name, "ode_err_L%d", k);
      rl_study_row(w, s, q, dto[k], name, eo[k], (long)RL_TV(L, L->nrow - 1, L->c_step));
    }
    double po, seo;
    fit_order(dto, eo, K, &po, &seo);
    if (rl_study_wants(s, RL_MET_ORDER_ODE)) rl_study_row(w, s, q, dt0, "order_ode", po, last);
    if (rl_study_wants(s, RL_MET_ORDER_ODE_STDERR)) rl_study_row(w, s, q, dt0, "order_ode_stderr", seo, last);
  }
  free(ode.v);
  free(seg.v);
  for (int k = 0; k < K; k++) rl_traj_free(&lv[k]);
  return 0;
}

/* levels = K: 4..12, default 5 */
static int refinement_check(rl_spec *s, char *err, int errlen) {
  (void)err, (void)errlen;
  if (!s->levels) s->levels = 5;
  return 0;
}

const rl_study_kind rl_kind_refinement = {
    .name = "refinement",
    .refs = 1u << RL_REF_RICHARDSON | 1u << RL_REF_GSL_ODE,
    .keys = RL_KEY_LEVELS,
    .check = refinement_check,
    .run = refinement_run,
    .done = ".seg",
    .metrics = refinement_metrics,
};
