/* study_run.c — the runner's study kinds other than `trajectory` (spec.h: kind = …): the worker side
 * (which files a point writes) and the metrics the parent computes from those files.
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
 *               the final time) and order_ode ± order_ode_stderr (the slope of log ode_err vs log dt).
 *   fp32        traj_ID.csv (f64), traj_ID.f32.csv (f32) free running from qpos0; traj_ID.onestep.csv:
 *               one step in f64 and in f32 from 20 f64 states along the f64 trajectory (newton, cg, avbd: each
 *               restarted from the generalized state, study_onestep).
 *               Metrics: onestep_rel_max = max over states of max(‖Δqpos‖∞/max(‖qpos‖∞,1),
 *               ‖Δqvel‖∞/max(‖qvel‖∞,1)); diverge_time_1e-06, diverge_time_0.001: the first time
 *               max |Δqpos| exceeds the threshold (the final time if never).
 *   residuals   traj_ID.res.csv (study_kinds.h: study_residuals); metrics signorini_max, coulomb_max,
 *               mdp_max, ncp_max, penetration_max: maxima over steps (step = the argmax).
 *   convergence traj_ID.conv.csv (study_kinds.h: study_convergence; NCONV = 30 iterations, `states` states
 *               `steps` apart along MuJoCo's trajectory).  Metrics, each the maximum over the states (step =
 *               the argmax state's step): per iteration k = 1..NCONV gap_it<k> (the relative objective gap
 *               (cost(a_k) − cost(a*))/|cost(a*)|), grad_it<k> (rigidlab's scaled gradient), mj_grad_it<k>
 *               (MuJoCo's); iters_to_1e-10_gap: the first iteration whose relative gap is < 1e-10 (NCONV + 1
 *               when none); final_gap: the relative gap at iteration NCONV.
 *               engine = avbd: NCONV_AVBD = 200 sweeps against the dense KKT reference of each state's step
 *               (study_kinds.h: study_convergence_avbd; metrics_convergence_avbd below). */
#include <dirent.h>
#include <errno.h>
#include <gsl/gsl_fit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "csv.h"
#include "mj_load.h"
#include "runner.h"
#include "spec.h"
#include "study_kinds.h"
#include "study_lockstep.h"
#include "study_speed.h"

#define NSEG 8
#define NONESTEP 20
#define NCONV 30
#define NCONV_AVBD 200

/* a small numeric CSV (header + numbers) */
typedef struct table {
  int nrow, ncol;
  double *v;
} table;

static int table_read(const char *path, table *t, char *err, int errlen) {
  return rl_numcsv_read(path, NULL, &t->nrow, &t->ncol, &t->v, err, errlen);
}

#define TV(t, r, c) ((t)->v[(size_t)(r) * (size_t)(t)->ncol + (size_t)(c)])
#define QP(t, r, k) ((t)->v[(size_t)(r) * (size_t)(t)->ncol + (size_t)(t)->c_qpos + (size_t)(k)])

static void file_path(char *p, size_t n, const char *dir, const rl_point *q, const char *suffix) {
  rl_snprintf(p, n, "%s/traj_%s%s.csv", dir, q->id, suffix);
}

void rl_study_done_path(char *p, size_t n, const char *dir, const rl_spec *s, const rl_point *q) {
  switch (s->kind) {
  case RL_KIND_REFINEMENT: file_path(p, n, dir, q, ".seg"); break;
  case RL_KIND_FP32: file_path(p, n, dir, q, ".onestep"); break;
  case RL_KIND_RESIDUALS: file_path(p, n, dir, q, ".res"); break;
  case RL_KIND_CONVERGENCE: file_path(p, n, dir, q, ".conv"); break;
  case RL_KIND_LOCKSTEP:
  case RL_KIND_DEVICE: rl_lockstep_done_path(p, n, dir, s, q); break;
  case RL_KIND_SPEED: file_path(p, n, dir, q, ".speed"); break;
  default: file_path(p, n, dir, q, "");
  }
}

void rl_study_remove_temps(const char *dir, long pid) {
  char suf[64], p[4400];
  rl_snprintf(suf, sizeof suf, ".tmp.%ld", pid);
  size_t ls = strlen(suf);
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    size_t l = strlen(e->d_name);
    if (l > ls && !strcmp(e->d_name + l - ls, suf)) {
      rl_snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
  }
  if (d) closedir(d);
}

/* one sim run into PATH */
/* close a study CSV: abort it (no half-written file) when the study failed, else rename it into place */
int rl_study_open_csv(rl_csv *w, const char *path, int f32, rl_sim_args *sa) {
  char err[1024];
  if (rl_csv_open(w, path, f32, err, sizeof err)) {
    rl_errorf("%s", err);
    return RL_EXIT_BADINPUT;
  }
  sa->c.out = w;
  sa->c.csv = path;
  return 0;
}

int rl_study_finish_csv(rl_csv *w, int st) {
  char err[1024];
  if (st) {
    rl_csv_abort(w);
    return st;
  }
  if (rl_csv_close(w, err, sizeof err)) {
    rl_errorf("%s", err);
    return RL_EXIT_BADINPUT;
  }
  return 0;
}

int rl_study_sim_to(rl_sim_args *sa, int f32, const char *path) {
  rl_csv w;
  if (rl_study_open_csv(&w, path, f32, sa)) return RL_EXIT_BADINPUT;
  int st = f32 ? rl32_cmd_sim(sa) : rl64_cmd_sim(sa);
  return rl_study_finish_csv(&w, st);
}

static int soft(const char *engine) { return !strcmp(engine, "newton") || !strcmp(engine, "cg"); }
/* engines study_onestep restarts from a generalized state (avbd: rl_avbd_from_generalized) */
static int restartable(const char *engine) { return soft(engine) || !strcmp(engine, "avbd"); }

/* qpos/qvel of rows ROW[0..n−1] of T */
static void states_at(const rl_traj *t, const long *row, int n, int nv, double *qpos, double *qvel) {
  for (int s = 0; s < n; s++) {
    for (int k = 0; k < t->nq; k++) qpos[(size_t)s * (size_t)t->nq + (size_t)k] = QP(t, row[s], k);
    for (int k = 0; k < nv; k++) qvel[(size_t)s * (size_t)nv + (size_t)k] = QP(t, row[s], t->nq + k);
  }
}

/* traj_ID.ode.csv: index,qpos — the GSL ODE reference's final qpos (study_kinds.h: study_ode, always in f64)
   from level 0's initial state to TFINAL; header only when the scene can make constraint rows
   (contacts, limits, …: rl_constraint_free) or is not hinge-only, where the smooth ODE is not the
   model's dynamics and there is no reference. */
static int ode_reference(const char *dir, const rl_point *q, rl_sim_args *sa, double tfinal, int use_ode) {
  char path[4096], err[1024], why[512] = "";
  rl_traj l0;
  file_path(path, sizeof path, dir, q, ".L0");
  if (rl_traj_read(path, &l0, err, sizeof err)) {
    rl_errorf("%s", err);
    return RL_EXIT_BADINPUT;
  }
  int nq = l0.nq, nv = l0.c_iter - l0.c_qpos - nq;
  double *y0 = malloc(sizeof(double) * (size_t)(nq + nv + 1)), *qf = malloc(sizeof(double) * (size_t)(nq + 1));
  for (int i = 0; i < nq + nv; i++) y0[i] = QP(&l0, 0, i);
  rl_traj_free(&l0);
  /* [reference] use without gsl_ode: no ODE solve, a header-only file (no ode metrics) */
  int r = !use_ode ? 1 : nq == nv ? rl64_study_ode(sa, tfinal, nq, y0, y0 + nq, qf, why, sizeof why) : 1;
  rl_csv w;
  file_path(path, sizeof path, dir, q, ".ode");
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

static int run_refinement(const char *dir, const rl_spec *s, const rl_point *q, rl_sim_args *sa) {
  char path[4096], err[1024];
  mjModel *m = rl_mj_load(q->scene, err, sizeof err);
  if (!m) {
    rl_errorf("%s", err);
    return RL_EXIT_BADINPUT;
  }
  double dt0 = q->dt > 0 ? q->dt : m->opt.timestep;
  int nv = m->nv;
  mj_deleteModel(m);
  long steps0 = s->steps >= 0 ? s->steps : lround(s->duration / dt0);
  int K = s->levels, st = 0;
  for (int k = 0; k < K && !st; k++) {
    char suf[16];
    rl_snprintf(suf, sizeof suf, ".L%d", k);
    file_path(path, sizeof path, dir, q, suf);
    sa->dt = ldexp(dt0, -k);
    sa->steps = steps0 << k;
    st = rl_study_sim_to(sa, q->f32, path);
  }
  if (st) return st;
  if ((st = ode_reference(dir, q, sa, dt0 * (double)steps0, rl_spec_uses(s, RL_REF_GSL_ODE)))) return st;
  /* segments from the finest trajectory's states */
  rl_csv w;
  file_path(path, sizeof path, dir, q, ".seg");
  if (rl_csv_open(&w, path, 0, err, sizeof err)) {
    rl_errorf("%s", err);
    return RL_EXIT_BADINPUT;
  }
  const char *cols[] = {"level", "dt", "segment", "err", "diff_next"};
  for (int c = 0; c < 5; c++) rl_csv_str(&w, cols[c]);
  rl_csv_end_row(&w);
  long seg0 = steps0 / NSEG;
  if (restartable(q->engine) && seg0 >= 1) {
    rl_traj fine;
    char fp[4096], suf[16];
    rl_snprintf(suf, sizeof suf, ".L%d", K - 1);
    file_path(fp, sizeof fp, dir, q, suf);
    if (rl_traj_read(fp, &fine, err, sizeof err)) {
      rl_errorf("%s", err);
      rl_csv_abort(&w);
      return RL_EXIT_BADINPUT;
    }
    int nq = fine.nq;
    long row[NSEG];
    for (int g = 0; g < NSEG; g++) row[g] = (long)g * (seg0 << (K - 1));
    double *qp = malloc(sizeof(double) * NSEG * (size_t)nq), *qv = malloc(sizeof(double) * NSEG * (size_t)nv);
    double *op = malloc(sizeof(double) * NSEG * (size_t)nq * (size_t)K), *ov = malloc(sizeof(double) * NSEG * (size_t)nv);
    states_at(&fine, row, NSEG, nv, qp, qv);
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

static int run_fp32(const char *dir, const rl_point *q, rl_sim_args *sa) {
  char path[4096], err[1024];
  file_path(path, sizeof path, dir, q, "");
  int st = rl_study_sim_to(sa, 0, path);
  if (!st) {
    char p32[4096];
    file_path(p32, sizeof p32, dir, q, ".f32");
    st = rl_study_sim_to(sa, 1, p32);
  }
  if (st) return st;
  rl_traj t;
  if (rl_traj_read(path, &t, err, sizeof err)) {
    rl_errorf("%s", err);
    return RL_EXIT_BADINPUT;
  }
  int nq = t.nq, nv = 0;
  /* qvel columns follow qpos: count them from the column layout (step,time,qpos…,qvel…,iterations…) */
  nv = t.c_iter - t.c_qpos - nq;
  rl_csv w;
  file_path(path, sizeof path, dir, q, ".onestep");
  if (rl_csv_open(&w, path, 0, err, sizeof err)) {
    rl_errorf("%s", err);
    rl_traj_free(&t);
    return RL_EXIT_BADINPUT;
  }
  const char *cols[] = {"step", "rel_qpos", "rel_qvel"};
  for (int c = 0; c < 3; c++) rl_csv_str(&w, cols[c]);
  rl_csv_end_row(&w);
  if (restartable(q->engine) && t.nrow > 1) {
    int n = NONESTEP < t.nrow - 1 ? NONESTEP : t.nrow - 1;
    long row[NONESTEP];
    for (int i = 0; i < n; i++) row[i] = (long)i * (t.nrow - 1) / n;
    size_t sq = (size_t)n * (size_t)nq, sv = (size_t)n * (size_t)nv;
    double *qp = malloc(sizeof(double) * sq), *qv = malloc(sizeof(double) * (sv + 1));
    double *p64 = malloc(sizeof(double) * sq), *v64 = malloc(sizeof(double) * (sv + 1));
    double *p32 = malloc(sizeof(double) * sq), *v32 = malloc(sizeof(double) * (sv + 1));
    states_at(&t, row, n, nv, qp, qv);
    sa->dt = q->dt;
    st = rl64_study_onestep(sa, 1, n, nq, nv, qp, qv, p64, v64);
    if (!st) st = rl32_study_onestep(sa, 1, n, nq, nv, qp, qv, p32, v32);
    for (int i = 0; i < n && !st; i++) {
      double ep = 0, mp = 1, ev = 0, mv = 1;
      for (int k = 0; k < nq; k++) {
        ep = fmax(ep, fabs(p32[(size_t)i * (size_t)nq + (size_t)k] - p64[(size_t)i * (size_t)nq + (size_t)k]));
        mp = fmax(mp, fabs(p64[(size_t)i * (size_t)nq + (size_t)k]));
      }
      for (int k = 0; k < nv; k++) {
        ev = fmax(ev, fabs(v32[(size_t)i * (size_t)nv + (size_t)k] - v64[(size_t)i * (size_t)nv + (size_t)k]));
        mv = fmax(mv, fabs(v64[(size_t)i * (size_t)nv + (size_t)k]));
      }
      rl_csv_int(&w, (long long)TV(&t, row[i], t.c_step));
      rl_csv_num(&w, ep / mp);
      rl_csv_num(&w, ev / mv);
      rl_csv_end_row(&w);
    }
    free(qp);
    free(qv);
    free(p64);
    free(v64);
    free(p32);
    free(v32);
  }
  rl_traj_free(&t);
  return rl_study_finish_csv(&w, st);
}

static int run_residuals(const char *dir, const rl_point *q, rl_sim_args *sa) {
  char path[4096];
  file_path(path, sizeof path, dir, q, ".res");
  rl_csv w;
  if (rl_study_open_csv(&w, path, q->f32, sa)) return RL_EXIT_BADINPUT;
  int st = q->f32 ? rl32_study_residuals(sa) : rl64_study_residuals(sa);
  return rl_study_finish_csv(&w, st);
}

static int run_convergence(const char *dir, const rl_spec *s, const rl_point *q, rl_sim_args *sa) {
  char path[4096], err[1024];
  long stride = s->steps;
  if (stride < 0) {
    mjModel *m = rl_mj_load(q->scene, err, sizeof err);
    if (!m) {
      rl_errorf("%s", err);
      return RL_EXIT_BADINPUT;
    }
    stride = lround(s->duration / (q->dt > 0 ? q->dt : m->opt.timestep));
    mj_deleteModel(m);
    if (stride < 1) stride = 1;
  }
  file_path(path, sizeof path, dir, q, ".conv");
  rl_csv w;
  if (rl_study_open_csv(&w, path, 0, sa)) return RL_EXIT_BADINPUT;
  sa->dt = q->dt;
  int st = !strcmp(q->engine, "avbd") ? rl64_study_convergence_avbd(sa, s->states, stride, NCONV_AVBD)
                                      : rl64_study_convergence(sa, s->states, stride, NCONV);
  return rl_study_finish_csv(&w, st);
}

int rl_study_run_point(const char *dir, const rl_spec *s, const rl_point *q, rl_sim_args *sa) {
  switch (s->kind) {
  case RL_KIND_CONVERGENCE: return run_convergence(dir, s, q, sa);
  case RL_KIND_REFINEMENT: return run_refinement(dir, s, q, sa);
  case RL_KIND_FP32: return run_fp32(dir, q, sa);
  case RL_KIND_RESIDUALS: return run_residuals(dir, q, sa);
  case RL_KIND_LOCKSTEP:
  case RL_KIND_DEVICE: return rl_lockstep_run_point(dir, s, q, sa);
  case RL_KIND_SPEED: return rl_study_speed_run(dir, s, q, sa);
  case RL_KIND_ANALYTIC: return rl_study_analytic_run(dir, s, q, sa);
  default: return RL_EXIT_BADINPUT;
  }
}

/* ---------- metrics ---------- */

void rl_study_row(rl_csv *w, const rl_spec *s, const rl_point *q, double dt, const char *metric, double v, long step) {
  rl_csv_str(w, s->name);
  rl_csv_str(w, q->id);
  rl_csv_str(w, q->engine);
  rl_csv_str(w, q->f32 ? "f32" : "f64");
  rl_csv_num(w, dt);
  rl_csv_str(w, metric);
  rl_csv_num(w, v);
  rl_csv_int(w, step);
  rl_csv_int(w, q->index);
  rl_csv_end_row(w);
}

static int want(const rl_spec *s, int m) { return s->metrics >> m & 1; }

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

static int metrics_refinement(rl_csv *w, const char *dir, const rl_spec *s, const rl_point *q, char *err, int errlen) {
  int K = s->levels;
  rl_traj lv[12];
  char path[4096], name[64];
  for (int k = 0; k < K; k++) {
    char suf[16];
    rl_snprintf(suf, sizeof suf, ".L%d", k);
    file_path(path, sizeof path, dir, q, suf);
    if (rl_traj_read(path, &lv[k], err, errlen)) {
      while (k--) rl_traj_free(&lv[k]);
      return -1;
    }
  }
  table seg;
  file_path(path, sizeof path, dir, q, ".seg");
  if (table_read(path, &seg, err, errlen)) {
    for (int k = 0; k < K; k++) rl_traj_free(&lv[k]);
    return -1;
  }
  double dt[12], ef[12], es[12], df[12], ds[12];
  const rl_traj *F = &lv[K - 1];
  double dt0 = F->nrow > 1 ? ldexp(F->v[(size_t)F->ncol + 1] - F->v[1], K - 1) : 0;
  if (q->dt > 0) dt0 = q->dt;
  for (int k = 0; k + 1 < K; k++) {
    const rl_traj *L = &lv[k];
    dt[k] = ldexp(dt0, -k);
    const rl_traj *N = &lv[k + 1];
    ef[k] = df[k] = 0;
    for (int i = 0; i < L->nq && i < F->nq; i++) {
      ef[k] = fmax(ef[k], fabs(QP(L, L->nrow - 1, i) - QP(F, F->nrow - 1, i)));
      df[k] = fmax(df[k], fabs(QP(L, L->nrow - 1, i) - QP(N, N->nrow - 1, i)));
    }
    double sum = 0, sumd = 0;
    int n = 0;
    for (int r = 0; r < seg.nrow; r++)
      if ((int)TV(&seg, r, 0) == k) {
        sum += TV(&seg, r, 3);
        sumd += TV(&seg, r, 4);
        n++;
      }
    es[k] = n ? sum / n : NAN;
    ds[k] = n ? sumd / n : NAN;
    rl_snprintf(name, sizeof name, "err_final_L%d", k);
    rl_study_row(w, s, q, dt[k], name, ef[k], (long)TV(L, L->nrow - 1, L->c_step));
    if (n) {
      rl_snprintf(name, sizeof name, "err_seg_L%d", k);
      rl_study_row(w, s, q, dt[k], name, es[k], (long)TV(L, L->nrow - 1, L->c_step));
    }
  }
  double p, se, pf, sef;
  /* the fit is on successive differences |x_k − x_{k+1}| ∝ dt_k^p (1 − 2^−p): unbiased, unlike the
     error against the finest level, which shrinks faster than dt^p near the finest */
  fit_order(dt, df, K - 1, &pf, &sef);
  if (seg.nrow) fit_order(dt, ds, K - 1, &p, &se);
  else p = pf, se = sef;
  long last = (long)TV(&lv[0], lv[0].nrow - 1, lv[0].c_step);
  if (want(s, RL_MET_ORDER)) rl_study_row(w, s, q, dt0, "order", p, last);
  if (want(s, RL_MET_ORDER_STDERR)) rl_study_row(w, s, q, dt0, "order_stderr", se, last);
  if (want(s, RL_MET_ORDER_FINAL)) rl_study_row(w, s, q, dt0, "order_final", pf, last);
  /* Richardson from the two finest levels C, F and the fitted order p: q_R = q_F + (q_F − q_C)/(2^p − 1);
     richardson_err = max |q_F − q_R| = max |q_F − q_C|/(2^p − 1), the estimated error of the finest run */
  if (want(s, RL_MET_RICHARDSON_ERR) && rl_spec_uses(s, RL_REF_RICHARDSON) && isfinite(p) && p > 0) {
    const rl_traj *C = &lv[K - 2];
    double e = 0;
    for (int i = 0; i < C->nq && i < F->nq; i++) e = fmax(e, fabs(QP(F, F->nrow - 1, i) - QP(C, C->nrow - 1, i)));
    rl_study_row(w, s, q, ldexp(dt0, -(K - 1)), "richardson_err", e / (exp2(p) - 1), (long)TV(F, F->nrow - 1, F->c_step));
  }
  /* against the GSL ODE reference (contact-free scenes only: .ode.csv has no rows otherwise) */
  table ode;
  file_path(path, sizeof path, dir, q, ".ode");
  if (table_read(path, &ode, err, errlen)) {
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
      for (int i = 0; i < L->nq && i < ode.nrow; i++) eo[k] = fmax(eo[k], fabs(QP(L, L->nrow - 1, i) - TV(&ode, i, 1)));
      rl_snprintf(name, sizeof name, "ode_err_L%d", k);
      rl_study_row(w, s, q, dto[k], name, eo[k], (long)TV(L, L->nrow - 1, L->c_step));
    }
    double po, seo;
    fit_order(dto, eo, K, &po, &seo);
    if (want(s, RL_MET_ORDER_ODE)) rl_study_row(w, s, q, dt0, "order_ode", po, last);
    if (want(s, RL_MET_ORDER_ODE_STDERR)) rl_study_row(w, s, q, dt0, "order_ode_stderr", seo, last);
  }
  free(ode.v);
  free(seg.v);
  for (int k = 0; k < K; k++) rl_traj_free(&lv[k]);
  return 0;
}

static int metrics_fp32(rl_csv *w, const char *dir, const rl_spec *s, const rl_point *q, char *err, int errlen) {
  char path[4096];
  rl_traj a, b;
  table os;
  file_path(path, sizeof path, dir, q, "");
  if (rl_traj_read(path, &a, err, errlen)) return -1;
  file_path(path, sizeof path, dir, q, ".f32");
  if (rl_traj_read(path, &b, err, errlen)) {
    rl_traj_free(&a);
    return -1;
  }
  file_path(path, sizeof path, dir, q, ".onestep");
  if (table_read(path, &os, err, errlen)) {
    rl_traj_free(&a);
    rl_traj_free(&b);
    return -1;
  }
  double dt = q->dt > 0 ? q->dt : a.nrow > 1 ? a.v[(size_t)a.ncol + 1] - a.v[1] : 0;
  if (os.nrow && want(s, RL_MET_ONESTEP_REL_MAX)) {
    double mx = -1;
    long at = 0;
    for (int r = 0; r < os.nrow; r++) {
      double x = fmax(TV(&os, r, 1), TV(&os, r, 2));
      if (x > mx) mx = x, at = (long)TV(&os, r, 0);
    }
    rl_study_row(w, s, q, dt, "onestep_rel_max", mx, at);
  }
  static const double thr[2] = {1e-6, 1e-3};
  static const int met[2] = {RL_MET_DIVERGE_1EM6, RL_MET_DIVERGE_1EM3};
  int n = a.nrow < b.nrow ? a.nrow : b.nrow;
  for (int j = 0; j < 2; j++) {
    if (!want(s, met[j])) continue;
    int r = 0;
    for (; r < n; r++) {
      double e = 0;
      for (int i = 0; i < a.nq; i++) e = fmax(e, fabs(QP(&a, r, i) - QP(&b, r, i)));
      if (!(e <= thr[j])) break;
    }
    int at = r < n ? r : n - 1;
    rl_study_row(w, s, q, dt, rl_metric_names[met[j]], TV(&a, at, 1), (long)TV(&a, at, a.c_step));
  }
  free(os.v);
  rl_traj_free(&a);
  rl_traj_free(&b);
  return 0;
}

static int metrics_residuals(rl_csv *w, const char *dir, const rl_spec *s, const rl_point *q, char *err, int errlen) {
  char path[4096];
  table t;
  file_path(path, sizeof path, dir, q, ".res");
  if (table_read(path, &t, err, errlen)) return -1;
  double dt = q->dt > 0 ? q->dt : t.nrow > 1 ? TV(&t, 1, 1) - TV(&t, 0, 1) : 0;
  static const int met[5] = {RL_MET_SIGNORINI_MAX, RL_MET_COULOMB_MAX, RL_MET_MDP_MAX, RL_MET_NCP_MAX,
                             RL_MET_PENETRATION_MAX};
  for (int j = 0; j < 5; j++) {
    if (!want(s, met[j])) continue;
    double mx = 0;
    long at = 0;
    for (int r = 0; r < t.nrow; r++)
      if (TV(&t, r, 2 + j) > mx || isnan(TV(&t, r, 2 + j))) {
        mx = TV(&t, r, 2 + j);
        at = (long)TV(&t, r, 0);
        if (isnan(mx)) break;
      }
    rl_study_row(w, s, q, dt, rl_metric_names[met[j]], mx, at);
  }
  free(t.v);
  return 0;
}

/* the maximum over the rows of iteration K of column C of T (its state's step into *AT); −INFINITY when none */
static double conv_max_at(const table *t, int k, int c, long *at) {
  double mx = -INFINITY;
  for (int r = 0; r < t->nrow; r++)
    if ((int)TV(t, r, 2) == k && (TV(t, r, c) > mx || isnan(TV(t, r, c)))) {
      mx = TV(t, r, c);
      *at = (long)TV(t, r, 1);
      if (isnan(mx)) break;
    }
  return mx;
}

/* engine = avbd: columns state,step,iter,dist_m,dist_rad,stat_force,stat_torque,primal_m,primal_rad,sweeps
   (study_kinds.h: study_convergence_avbd).  Per sweep k (k ≤ 10 and every 10th; the .conv.csv has them all)
   the maximum over the states of each column, then
   avbd_iters_to_1e-6_dist (the first k with dist_m ≤ 1e-6 m and dist_rad ≤ 1e-6 rad, the worst state;
   NCONV_AVBD + 1 when none) and avbd_final_dist_m / _rad (k = NCONV_AVBD).  No rows (not applicable) when
   no state's step is covered by the dense reference. */
static void metrics_convergence_avbd(rl_csv *w, const rl_spec *s, const rl_point *q, const table *t, double dt) {
  static const char *const pre[6] = {"avbd_dist_m_it",  "avbd_dist_rad_it",  "avbd_stat_force_it",
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
  double worst = 0;
  long at_it = 0;
  for (int r = 0; r < t->nrow; r++) {
    if ((int)TV(t, r, 2) != 1) continue;
    int first = NCONV_AVBD + 1;
    for (int r2 = r; r2 < t->nrow && (int)TV(t, r2, 0) == (int)TV(t, r, 0) && first > NCONV_AVBD; r2++)
      if (TV(t, r2, 3) <= 1e-6 && TV(t, r2, 4) <= 1e-6) first = (int)TV(t, r2, 2);
    if (first > worst) worst = first, at_it = (long)TV(t, r, 1);
  }
  long at_m = 0, at_r = 0;
  double fm = conv_max_at(t, NCONV_AVBD, 3, &at_m), fr = conv_max_at(t, NCONV_AVBD, 4, &at_r);
  if (want(s, RL_MET_AVBD_ITERS_TO_1EM6_DIST)) rl_study_row(w, s, q, dt, rl_metric_names[RL_MET_AVBD_ITERS_TO_1EM6_DIST], worst, at_it);
  if (want(s, RL_MET_AVBD_FINAL_DIST_M) && fm > -INFINITY) rl_study_row(w, s, q, dt, rl_metric_names[RL_MET_AVBD_FINAL_DIST_M], fm, at_m);
  if (want(s, RL_MET_AVBD_FINAL_DIST_RAD) && fr > -INFINITY)
    rl_study_row(w, s, q, dt, rl_metric_names[RL_MET_AVBD_FINAL_DIST_RAD], fr, at_r);
}

static int metrics_convergence(rl_csv *w, const char *dir, const rl_spec *s, const rl_point *q, char *err, int errlen) {
  char path[4096], name[64];
  table t;
  file_path(path, sizeof path, dir, q, ".conv");
  if (table_read(path, &t, err, errlen)) return -1;
  double dt = q->dt;
  if (!(dt > 0)) {
    mjModel *m = rl_mj_load(q->scene, err, errlen);
    if (!m) {
      free(t.v);
      return -1;
    }
    dt = m->opt.timestep;
    mj_deleteModel(m);
  }
  if (!strcmp(q->engine, "avbd")) {
    metrics_convergence_avbd(w, s, q, &t, dt);
    free(t.v);
    return 0;
  }
  /* columns: state,step,iter,gap,rel_gap,grad,mj_grad,nefc */
  static const char *const pre[3] = {"gap_it", "grad_it", "mj_grad_it"};
  static const int col[3] = {4, 5, 6};
  for (int k = 1; k <= NCONV; k++)
    for (int j = 0; j < 3; j++) {
      double mx = -INFINITY;
      long at = 0;
      for (int r = 0; r < t.nrow; r++)
        if ((int)TV(&t, r, 2) == k && (TV(&t, r, col[j]) > mx || isnan(TV(&t, r, col[j])))) {
          mx = TV(&t, r, col[j]);
          at = (long)TV(&t, r, 1);
          if (isnan(mx)) break;
        }
      if (mx == -INFINITY) continue;
      rl_snprintf(name, sizeof name, "%s%d", pre[j], k);
      rl_study_row(w, s, q, dt, name, mx, at);
    }
  double worst_it = 0, final = -INFINITY;
  long at_it = 0, at_final = 0;
  for (int r = 0; r < t.nrow; r++) {
    if ((int)TV(&t, r, 2) != 1) continue;
    int first = NCONV + 1;
    for (int r2 = r; r2 < t.nrow && (int)TV(&t, r2, 0) == (int)TV(&t, r, 0); r2++) {
      if (first > NCONV && TV(&t, r2, 4) < 1e-10) first = (int)TV(&t, r2, 2);
      if ((int)TV(&t, r2, 2) == NCONV && !(TV(&t, r2, 4) <= final)) final = TV(&t, r2, 4), at_final = (long)TV(&t, r2, 1);
    }
    if (first > worst_it) worst_it = first, at_it = (long)TV(&t, r, 1);
  }
  if (want(s, RL_MET_ITERS_TO_1EM10_GAP)) rl_study_row(w, s, q, dt, rl_metric_names[RL_MET_ITERS_TO_1EM10_GAP], worst_it, at_it);
  if (want(s, RL_MET_FINAL_GAP) && final > -INFINITY) rl_study_row(w, s, q, dt, rl_metric_names[RL_MET_FINAL_GAP], final, at_final);
  free(t.v);
  return 0;
}

int rl_study_metrics(rl_csv *w, const char *dir, const rl_spec *s, const rl_point *q, char *err, int errlen) {
  switch (s->kind) {
  case RL_KIND_CONVERGENCE: return metrics_convergence(w, dir, s, q, err, errlen);
  case RL_KIND_REFINEMENT: return metrics_refinement(w, dir, s, q, err, errlen);
  case RL_KIND_FP32: return metrics_fp32(w, dir, s, q, err, errlen);
  case RL_KIND_RESIDUALS: return metrics_residuals(w, dir, s, q, err, errlen);
  case RL_KIND_LOCKSTEP:
  case RL_KIND_DEVICE: return rl_lockstep_metrics(w, dir, s, q, err, errlen);
  case RL_KIND_SPEED: return rl_study_speed_metrics(w, dir, s, q, err, errlen);
  case RL_KIND_ANALYTIC: return rl_study_analytic_metrics(w, dir, s, q, err, errlen);
  default: return -1;
  }
}

/* ---------- helpers for the kinds in other files (study_kinds.h) ---------- */



