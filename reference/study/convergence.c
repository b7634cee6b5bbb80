/* convergence.c — kind = convergence (spec.h): the worker side (which files a point writes) and the metrics the parent
 * computes from those files.
 *   convergence traj_ID.conv.csv (study_kinds.h: study_convergence; NCONV = 30 iterations, `states` states
 *               `steps` apart along MuJoCo's trajectory).  Metrics, each the maximum over the states (step =
 *               the argmax state's step): per iteration k = 1..NCONV gap_it<k> (the relative objective gap
 *               (cost(a_k) − cost(a*))/|cost(a*)|), grad_it<k> (rigidlab's scaled gradient), mj_grad_it<k>
 *               (MuJoCo's); iters_to_1e-10_gap: the first iteration whose relative gap is < 1e-10 (NCONV + 1
 *               when none); final_gap: the relative gap at iteration NCONV.
 *               engine = avbd: NCONV_AVBD = 200 sweeps against the dense KKT reference of each state's step
 *               (study_kinds.h: study_convergence_avbd; metrics_convergence_avbd below); with an avbd_own_*
 *               metric also traj_ID.own.csv: AVBD's own trajectory over states × steps steps, every step
 *               judged by its dense reference (study_own_stops_avbd; metrics_own_avbd below). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "csv.h"
#include "kinds.h"
#include "runner.h"
#include "study_kinds.h"

#define NCONV      30
#define NCONV_AVBD 200

/* 1 when the study wants a metric of AVBD's own trajectory (traj_ID.own.csv) */
static int wants_own(const rl_spec *s) {
  return rl_study_wants(s, RL_MET_AVBD_OWN_FALSE_STOP_FRAC) || rl_study_wants(s, RL_MET_AVBD_OWN_CHECKED_STEPS) ||
         rl_study_wants(s, RL_MET_AVBD_OWN_REF_UNCONVERGED) || rl_study_wants(s, RL_MET_AVBD_OWN_WORST_RATIO) ||
         rl_study_wants(s, RL_MET_AVBD_OWN_NONFINITE_STEPS) || rl_study_wants(s, RL_MET_AVBD_OWN_UNCONVERGED_STEPS);
}

static int convergence_run(const char *dir, const rl_spec *s, const rl_point *q, rl_sim_args *sa) {
  char path[4096], err[1024];
  long stride = rl_study_point_steps(s, q, err, sizeof err);
  if (stride < 0) {
    rl_errorf("%s", err);
    return RL_EXIT_BADINPUT;
  }
  rl_csv w;
  sa->dt = q->dt;
  /* AVBD's own trajectory over the same span (states × steps), written before the .conv.csv that marks the
     point done */
  if (!strcmp(q->engine, "avbd") && wants_own(s)) {
    rl_study_file(path, sizeof path, dir, q, ".own");
    if (rl_study_open_csv(&w, path, 0, sa)) return RL_EXIT_BADINPUT;
    long n = (long)s->states * stride;
    int st = rl_study_finish_csv(&w, q->f32 ? rl32_study_own_stops_avbd(sa, n) : rl64_study_own_stops_avbd(sa, n));
    if (st) return st;
  }
  rl_study_file(path, sizeof path, dir, q, ".conv");
  if (rl_study_open_csv(&w, path, 0, sa)) return RL_EXIT_BADINPUT;
  int st;
  if (strcmp(q->engine, "avbd")) st = rl64_study_convergence(sa, s->states, stride, NCONV);
  else if (q->f32) st = rl32_study_convergence_avbd(sa, s->states, stride, NCONV_AVBD);
  else st = rl64_study_convergence_avbd(sa, s->states, stride, NCONV_AVBD);
  return rl_study_finish_csv(&w, st);
}

/* the maximum over the rows of iteration K of column C of T (its state's step into *AT); −INFINITY when none */
static double conv_max_at(const rl_numtable *t, int k, int c, long *at) {
  double mx = -INFINITY;
  for (int r = 0; r < t->nrow; r++)
    if ((int)RL_TV(t, r, 2) == k && (RL_TV(t, r, c) > mx || isnan(RL_TV(t, r, c)))) {
      mx = RL_TV(t, r, c);
      *at = (long)RL_TV(t, r, 1);
      if (isnan(mx)) break;
    }
  return mx;
}

/* The three rows of a stop judgement, metric FRAC and the two after it in the metric list (its base, the steps
   left out because the reference did not converge): nfalse / nbase (0 when nbase = 0; step at_f), nbase, nbad
   (step at_b) */
_Static_assert(RL_MET_AVBD_FLAGGED_STEPS == RL_MET_AVBD_FALSE_STOP_FRAC + 1 &&
                   RL_MET_AVBD_REF_UNCONVERGED == RL_MET_AVBD_FALSE_STOP_FRAC + 2 &&
                   RL_MET_AVBD_OWN_CHECKED_STEPS == RL_MET_AVBD_OWN_FALSE_STOP_FRAC + 1 &&
                   RL_MET_AVBD_OWN_REF_UNCONVERGED == RL_MET_AVBD_OWN_FALSE_STOP_FRAC + 2,
               "stop_rows reads a judgement's three metrics in this order");
static void stop_rows(rl_csv *w, const rl_spec *s, const rl_point *q, double dt, int frac, double nbase,
                      double nfalse, double nbad, long at_f, long at_b) {
  if (rl_study_wants(s, frac)) rl_study_row(w, s, q, dt, rl_metric_names[frac], nbase > 0 ? nfalse / nbase : 0, at_f);
  if (rl_study_wants(s, frac + 1)) rl_study_row(w, s, q, dt, rl_metric_names[frac + 1], nbase, 0);
  if (rl_study_wants(s, frac + 2)) rl_study_row(w, s, q, dt, rl_metric_names[frac + 2], nbad, at_b);
}

/* engine = avbd: columns state,step,iter,dist_m,dist_rad,stat_force,stat_torque,primal_m,primal_rad,sweeps
   (study_kinds.h: study_convergence_avbd).  Per sweep k (k ≤ 10 and every 10th; the .conv.csv has them all)
   the maximum over the states of each column, then
   avbd_iters_to_1e-6_dist (the first k with dist_m ≤ 1e-6 m and dist_rad ≤ 1e-6 rad, the worst state;
   NCONV_AVBD + 1 when none) and avbd_final_dist_m / _rad (k = NCONV_AVBD), and avbd_false_stop_frac: of the
   states whose step the point's own stopping test flags converged (column stop_flagged), the fraction farther
   from the dense solution than the distance the test claims (stop_false); 0 when none is flagged.  A state
   with contacts, limits or dry friction has no per-sweep rows, only one row with iter = 0 for the stop.
   avbd_flagged_steps: the fraction's base; avbd_ref_unconverged: states left out of it because the dense
   reference's Newton did not converge (column ref_unconverged).  No rows
   (not applicable) when no state's step is covered by the dense reference. */
static void metrics_convergence_avbd(rl_csv *w, const rl_spec *s, const rl_point *q, const rl_numtable *t, double dt) {
  static const char *const pre[6] = {"avbd_dist_m_it",      "avbd_dist_rad_it", "avbd_stat_force_it",
                                     "avbd_stat_torque_it", "avbd_primal_m_it", "avbd_primal_rad_it"};
  char name[64];
  for (int k = 1; k <= NCONV_AVBD; k++)
    for (int j = 0; j < 6 && (k <= 10 || k % 10 == 0); j++) {
      long at = 0;
      double mx = conv_max_at(t, k, 3 + j, &at);
      if (mx == -INFINITY) continue;
      rl_snprintf(name, sizeof name, "%s%d", pre[j], k);
      rl_study_row(w, s, q, dt, name, mx, at);
    }
  if (!t->nrow) return;
  int sweeps = 0; /* rows per sweep budget (iter ≥ 1); iter = 0 rows carry a stop verdict only */
  for (int r = 0; r < t->nrow; r++) sweeps += (int)RL_TV(t, r, 2) >= 1;
  double worst = 0;
  long at_it = 0;
  for (int r = 0; r < t->nrow; r++) {
    if ((int)RL_TV(t, r, 2) != 1) continue;
    int first = NCONV_AVBD + 1;
    for (int r2 = r; r2 < t->nrow && (int)RL_TV(t, r2, 0) == (int)RL_TV(t, r, 0) && first > NCONV_AVBD; r2++)
      if (RL_TV(t, r2, 3) <= 1e-6 && RL_TV(t, r2, 4) <= 1e-6) first = (int)RL_TV(t, r2, 2);
    if (first > worst) worst = first, at_it = (long)RL_TV(t, r, 1);
  }
  long at_m = 0, at_r = 0;
  double fm = conv_max_at(t, NCONV_AVBD, 3, &at_m), fr = conv_max_at(t, NCONV_AVBD, 4, &at_r);
  if (rl_study_wants(s, RL_MET_AVBD_ITERS_TO_1EM6_DIST) && sweeps)
    rl_study_row(w, s, q, dt, rl_metric_names[RL_MET_AVBD_ITERS_TO_1EM6_DIST], worst, at_it);
  if (rl_study_wants(s, RL_MET_AVBD_FINAL_DIST_M) && fm > -INFINITY)
    rl_study_row(w, s, q, dt, rl_metric_names[RL_MET_AVBD_FINAL_DIST_M], fm, at_m);
  if (rl_study_wants(s, RL_MET_AVBD_FINAL_DIST_RAD) && fr > -INFINITY)
    rl_study_row(w, s, q, dt, rl_metric_names[RL_MET_AVBD_FINAL_DIST_RAD], fr, at_r);
  double nflag = 0, nfalse = 0, nbad = 0;
  long at_f = 0, at_b = 0;
  for (int r = 0; r < t->nrow; r++)
    if ((int)RL_TV(t, r, 2) <= 1 && t->ncol > 11) {
      nflag += RL_TV(t, r, 10);
      nfalse += RL_TV(t, r, 11);
      if (RL_TV(t, r, 11) > 0 && !at_f) at_f = (long)RL_TV(t, r, 1);
      if (t->ncol > 12 && RL_TV(t, r, 12) > 0) {
        nbad++;
        if (!at_b) at_b = (long)RL_TV(t, r, 1);
      }
    }
  stop_rows(w, s, q, dt, RL_MET_AVBD_FALSE_STOP_FRAC, nflag, nfalse, nbad, at_f, at_b);
}

/* AVBD's own trajectory (traj_ID.own.csv, columns of rl64_study_own_stops_avbd): avbd_own_false_stop_frac = of
   the checked steps (flagged converged, reference converged and covering the step), the fraction farther from the
   reference solution than the stopping test claims (0 when none is checked; step: the first such); its base
   avbd_own_checked_steps; avbd_own_ref_unconverged: steps flagged converged but left out because the reference
   did not converge; avbd_own_worst_ratio: the largest distance / claim over the checked steps (step: where);
   avbd_own_nonfinite_steps: steps that ended non-finite (column nonfinite), undone by the step as in `sim` and not
   judged (step: the first such); avbd_own_unconverged_steps: finite steps that used the budget without meeting the
   stopping test (column converged 0; step: the first such). */
static int metrics_own_avbd(rl_csv *w, const char *dir, const rl_spec *s, const rl_point *q, double dt, char *err,
                            int errlen) {
  char path[4096];
  rl_numtable t;
  rl_study_file(path, sizeof path, dir, q, ".own");
  if (rl_numtable_read(path, &t, err, errlen)) return -1;
  if (t.ncol != 14) {
    rl_snprintf(err, (size_t)errlen, "%s: %d columns, expected 14 (step,sweeps,converged,checked,...)", path, t.ncol);
    free(t.v);
    return -1;
  }
  double nchk = 0, nfalse = 0, nbad = 0, worst = 0, nnf = 0, nunc = 0;
  long at_f = 0, at_b = 0, at_w = 0, at_n = 0, at_u = 0;
  for (int r = 0; r < t.nrow; r++) {
    long step = (long)RL_TV(&t, r, 0);
    if (RL_TV(&t, r, 13) > 0 && !nnf++) at_n = step;
    if (!(RL_TV(&t, r, 13) > 0) && !(RL_TV(&t, r, 2) > 0) && !nunc++) at_u = step;
    if (RL_TV(&t, r, 2) > 0 && RL_TV(&t, r, 6) > 0 && !nbad++) at_b = step;
    if (!(RL_TV(&t, r, 3) > 0)) continue;
    nchk++;
    if (RL_TV(&t, r, 12) > 0 && !nfalse++) at_f = step;
    if (RL_TV(&t, r, 11) > worst) worst = RL_TV(&t, r, 11), at_w = step;
  }
  free(t.v);
  stop_rows(w, s, q, dt, RL_MET_AVBD_OWN_FALSE_STOP_FRAC, nchk, nfalse, nbad, at_f, at_b);
  if (rl_study_wants(s, RL_MET_AVBD_OWN_WORST_RATIO))
    rl_study_row(w, s, q, dt, rl_metric_names[RL_MET_AVBD_OWN_WORST_RATIO], worst, at_w);
  if (rl_study_wants(s, RL_MET_AVBD_OWN_NONFINITE_STEPS))
    rl_study_row(w, s, q, dt, rl_metric_names[RL_MET_AVBD_OWN_NONFINITE_STEPS], nnf, at_n);
  if (rl_study_wants(s, RL_MET_AVBD_OWN_UNCONVERGED_STEPS))
    rl_study_row(w, s, q, dt, rl_metric_names[RL_MET_AVBD_OWN_UNCONVERGED_STEPS], nunc, at_u);
  return 0;
}

static int convergence_metrics(rl_csv *w, const char *dir, const rl_spec *s, const rl_point *pts, const rl_point *q,
                               char *err, int errlen) {
  (void)pts;
  char path[4096], name[64];
  rl_numtable t;
  rl_study_file(path, sizeof path, dir, q, ".conv");
  if (rl_numtable_read(path, &t, err, errlen)) return -1;
  double dt = rl_study_point_dt(q, err, errlen);
  if (isnan(dt)) {
    free(t.v);
    return -1;
  }
  if (!strcmp(q->engine, "avbd")) {
    metrics_convergence_avbd(w, s, q, &t, dt);
    free(t.v);
    return wants_own(s) ? metrics_own_avbd(w, dir, s, q, dt, err, errlen) : 0;
  }
  /* columns: state,step,iter,gap,rel_gap,grad,mj_grad,nefc */
  static const char *const pre[3] = {"gap_it", "grad_it", "mj_grad_it"};
  static const int col[3] = {4, 5, 6};
  for (int k = 1; k <= NCONV; k++)
    for (int j = 0; j < 3; j++) {
      double mx = -INFINITY;
      long at = 0;
      for (int r = 0; r < t.nrow; r++)
        if ((int)RL_TV(&t, r, 2) == k && (RL_TV(&t, r, col[j]) > mx || isnan(RL_TV(&t, r, col[j])))) {
          mx = RL_TV(&t, r, col[j]);
          at = (long)RL_TV(&t, r, 1);
          if (isnan(mx)) break;
        }
      if (mx == -INFINITY) continue;
      rl_snprintf(name, sizeof name, "%s%d", pre[j], k);
      rl_study_row(w, s, q, dt, name, mx, at);
    }
  double worst_it = 0, final = -INFINITY;
  long at_it = 0, at_final = 0;
  for (int r = 0; r < t.nrow; r++) {
    if ((int)RL_TV(&t, r, 2) != 1) continue;
    int first = NCONV + 1;
    for (int r2 = r; r2 < t.nrow && (int)RL_TV(&t, r2, 0) == (int)RL_TV(&t, r, 0); r2++) {
      if (first > NCONV && RL_TV(&t, r2, 4) < 1e-10) first = (int)RL_TV(&t, r2, 2);
      if ((int)RL_TV(&t, r2, 2) == NCONV && !(RL_TV(&t, r2, 4) <= final))
        final = RL_TV(&t, r2, 4), at_final = (long)RL_TV(&t, r2, 1);
    }
    if (first > worst_it) worst_it = first, at_it = (long)RL_TV(&t, r, 1);
  }
  if (rl_study_wants(s, RL_MET_ITERS_TO_1EM10_GAP))
    rl_study_row(w, s, q, dt, rl_metric_names[RL_MET_ITERS_TO_1EM10_GAP], worst_it, at_it);
  if (rl_study_wants(s, RL_MET_FINAL_GAP) && final > -INFINITY)
    rl_study_row(w, s, q, dt, rl_metric_names[RL_MET_FINAL_GAP], final, at_final);
  free(t.v);
  return 0;
}

/* states = K (1..100, default 5); newton/cg f64 only (their reference, the LAPACK optimum, is of the f64 problem);
   avbd f64 and f32 (its dense KKT reference solves the step in double from the state of either precision); newton/cg
   need lapack_optimum, avbd dense_kkt; no mujoco points */
static int convergence_check(rl_spec *s, char *err, int errlen) {
  if (!s->states) s->states = 5;
  int line = 0, a = rl_spec_axis_find(s, "precision", &line), eline = 0, e = rl_spec_axis_find(s, "engine", &eline);
  int avbd_only = e >= 0;
  for (int i = 0; e >= 0 && i < s->axis[e].nval; i++) avbd_only = avbd_only && !strcmp(s->axis[e].val[i], "avbd");
  for (int i = 0; a >= 0 && i < s->axis[a].nval; i++)
    if (strcmp(s->axis[a].val[i], "f64") && !(avbd_only && !strcmp(s->axis[a].val[i], "f32"))) {
      rl_snprintf(err, (size_t)errlen,
                  "%s:%d: [sweep] precision: '%s' is not available for kind = convergence "
                  "(allowed: f64; f32 too when every engine is avbd)",
                  s->path, line, s->axis[a].val[i]);
      return -1;
    }
  a = rl_spec_axis_find(s, "engine", &line);
  for (int i = 0; a >= 0 && i < s->axis[a].nval; i++) {
    const char *v = s->axis[a].val[i];
    int need = !strcmp(v, "avbd") ? RL_REF_DENSE_KKT : RL_REF_LAPACK_OPTIMUM;
    if (!rl_spec_uses(s, need)) {
      rl_snprintf(err, (size_t)errlen,
                  "%s:%d: [sweep] engine: '%s' needs the reference '%s' ([reference] use, line %d)", s->path, line, v,
                  rl_ref_names[need], s->refs_line);
      return -1;
    }
  }
  return rl_study_ban_engines(s, "mujoco", "newton, cg, avbd (MuJoCo's statistics come with newton and cg)", err,
                              errlen);
}

const rl_study_kind rl_kind_convergence = {
    .name = "convergence",
    .refs = 1u << RL_REF_LAPACK_OPTIMUM | 1u << RL_REF_DENSE_KKT,
    .keys = RL_KEY_STATES,
    .check = convergence_check,
    .run = convergence_run,
    .done = ".conv",
    .metrics = convergence_metrics,
};
