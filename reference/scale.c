/* scale.c — kind = scale (reference/study/scale.c): the whole step of every solver on the synthetic scenes
 * of scale_scene.h as N grows, with MuJoCo's mj_step beside (compiled per precision).
 *
 * Per N: the scene is written to a temporary file and loaded; every solver runs `steps` steps from the
 * scene's initial state (qpos0, at rest, contact-rich), timed in this thread's CPU time:
 *   newton_dense, newton_skyline, newton_sparse, newton_auto (rigidlab's choice), cg, avbd, mujoco.
 * Newton dense and mj_step (MuJoCo 2.2.2's Newton factors a dense nv×nv matrix) are skipped above their nv
 * caps; MuJoCo is loaded again (the file rewritten) with njmax = 1.25 × the most rows rigidlab's steps made (+ 64), and skipped
 * when its njmax-sized arrays (efc_J, efc_JT: njmax·nv; efc_AR: njmax²) would exceed the memory cap.  A
 * skipped or refused solver has a row with its reason and no time.
 * Columns: model,n,nv,solver,ms_per_step,nefc_max,iter_mean,arena_bytes,cholmod_bytes,qacc_rel_dense,status.
 * qacc_rel_dense: for newton_sparse, max|q̈_sparse − q̈_dense| / max|q̈_dense| at the first state (the
 * forward dynamics of qpos0 with both factorizations); NaN where dense is skipped.  arena_bytes: the data
 * arena's high-water mark after the solver's steps; cholmod_bytes: CHOLMOD's peak (sparse factorizations). */
#define _DEFAULT_SOURCE /* mkstemps */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "csv.h"
#include "pair.h"
#include "rl_avbd.h"
#include "scale_scene.h"

#define rl_cmd_scale RL_NAME(cmd_scale)

static double cpu_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}

enum { S_DENSE, S_SKYLINE, S_SPARSE, S_AUTO, S_CG, S_AVBD, S_MUJOCO, NS };
static const char *const solver_name[NS] = {"newton_dense", "newton_skyline", "newton_sparse", "newton_auto",
                                            "cg",           "avbd",           "mujoco"};
static const int solver_factor[NS] = {RL_FACTOR_DENSE, RL_FACTOR_SKYLINE, RL_FACTOR_SPARSE, RL_FACTOR_AUTO};

typedef struct scale_row {
  double ms, iter, arena, chol, qrel;
  int nefc;
  char status[160];
} scale_row;

static void row_write(rl_csv *w, const char *model, int n, int nv, int s, const scale_row *r) {
  rl_csv_str(w, model);
  rl_csv_int(w, n);
  rl_csv_int(w, nv);
  rl_csv_str(w, solver_name[s]);
  rl_csv_num(w, r->ms);
  rl_csv_int(w, r->nefc);
  rl_csv_num(w, r->iter);
  rl_csv_num(w, r->arena);
  rl_csv_num(w, r->chol);
  rl_csv_num(w, r->qrel);
  rl_csv_str(w, r->status);
  rl_csv_end_row(w);
}

/* rigidlab's solver s for `steps` steps from qpos0 at rest */
static void run_ours(const rl_pair *p, int s, long steps, scale_row *r) {
  rl_model *m = p->m;
  int solver0 = m->opt.solver, factor0 = m->opt.newton_factor;
  rl_data *d = rl_data_alloc(m);
  if (!d) {
    snprintf(r->status, sizeof r->status, "out of memory (rl_data)");
    return;
  }
  rl_avbd *am = NULL;
  if (s == S_AVBD) {
    rl_avbd_param prm = rl_avbd_default_param(m);
    char why[128];
    am = rl_avbd_build(m, &prm, why, sizeof why);
    if (!am) {
      snprintf(r->status, sizeof r->status, "avbd refused: %s", why);
      rl_data_free(d);
      return;
    }
    rl_avbd_from_generalized(am, m, d);
  } else {
    m->opt.solver = s == S_CG ? RL_SOLVER_CG : RL_SOLVER_NEWTON;
    m->opt.newton_factor = s == S_CG ? RL_FACTOR_AUTO : solver_factor[s];
  }
  double it = 0, t0 = cpu_ns();
  for (long k = 0; k < steps; k++) {
    if (am) rl_avbd_step(am, m, d);
    else rl_step(m, d);
    if (d->nefc > r->nefc) r->nefc = d->nefc;
    it += d->solver_iter;
  }
  r->ms = (cpu_ns() - t0) / 1e6 / (double)steps;
  r->iter = it / (double)steps;
  r->arena = (double)d->arena_high * sizeof(real);
  rl_sparse_info si;
  rl_sparse_stats(d, &si);
  r->chol = si.peak_bytes;
  snprintf(r->status, sizeof r->status, "ok");
  rl_avbd_free(am);
  rl_data_free(d);
  m->opt.solver = solver0;
  m->opt.newton_factor = factor0;
}

/* max|q̈_sparse − q̈_dense| / max|q̈_dense| of rl_forward at qpos0 */
static double qacc_agreement(const rl_pair *p) {
  rl_model *m = p->m;
  int solver0 = m->opt.solver, factor0 = m->opt.newton_factor, nv = m->nv;
  rl_data *d = rl_data_alloc(m);
  double *qd = malloc(sizeof(double) * (size_t)nv), e = 0, mg = 0;
  m->opt.solver = RL_SOLVER_NEWTON;
  m->opt.newton_factor = RL_FACTOR_DENSE;
  rl_forward(m, d);
  for (int i = 0; i < nv; i++) qd[i] = (double)d->qacc[i];
  rl_data_reset(m, d);
  m->opt.newton_factor = RL_FACTOR_SPARSE;
  rl_forward(m, d);
  for (int i = 0; i < nv; i++) {
    e = fmax(e, fabs((double)d->qacc[i] - qd[i]));
    mg = fmax(mg, fabs(qd[i]));
  }
  free(qd);
  rl_data_free(d);
  m->opt.solver = solver0;
  m->opt.newton_factor = factor0;
  return e / (mg > 0 ? mg : 1);
}

/* mj_step for `steps` steps from qpos0 (Newton, the same as rigidlab's), njmax from rigidlab's rows */
static void run_mujoco(const rl_scale_args *a, const char *path, const char *family, int n, int nv, int nefc,
                       long steps, scale_row *r) {
  long njmax = (long)ceil(1.25 * nefc) + 64;
  double gb = 8.0 * (2.0 * (double)njmax * nv + (double)njmax * njmax) / 1e9;
  if (nv > a->mujoco_max_nv) {
    snprintf(r->status, sizeof r->status, "not run: nv %d > %d (MuJoCo 2.2.2 factors a dense nv x nv H)", nv,
             a->mujoco_max_nv);
    return;
  }
  if (gb > a->mujoco_max_gb) {
    snprintf(r->status, sizeof r->status, "not loaded: njmax %ld needs ~%.1f GB (> %.1f GB)", njmax, gb,
             a->mujoco_max_gb);
    return;
  }
  char err[1024];
  if (rl_scale_scene_write(path, family, n, njmax, err, sizeof err)) {
    snprintf(r->status, sizeof r->status, "%.150s", err);
    return;
  }
  mjModel *mjm = mj_loadXML(path, NULL, err, sizeof err);
  mjData *mjd = mjm ? mj_makeData(mjm) : NULL;
  if (!mjd) {
    snprintf(r->status, sizeof r->status, "not loaded: %.140s", mjm ? "mj_makeData failed (memory)" : err);
    if (mjm) mj_deleteModel(mjm);
    return;
  }
  mjm->opt.solver = mjSOL_NEWTON;
  double it = 0, t0 = cpu_ns();
  for (long k = 0; k < steps; k++) {
    mj_step(mjm, mjd);
    if (mjd->nefc > r->nefc) r->nefc = mjd->nefc;
    it += mjd->solver_iter;
  }
  r->ms = (cpu_ns() - t0) / 1e6 / (double)steps;
  r->iter = it / (double)steps;
  r->arena = (double)mjd->maxuse_stack * sizeof(mjtNum); /* MuJoCo's stack high-water mark */
  snprintf(r->status, sizeof r->status, mjd->warning[mjWARN_CNSTRFULL].number ? "rows truncated (njmax %ld)" : "ok",
           njmax);
  mj_deleteData(mjd);
  mj_deleteModel(mjm);
}

/* 1 if solver s is in the comma-separated list (NULL: every solver) */
static int wanted(const char *list, int s) {
  if (!list) return 1;
  size_t l = strlen(solver_name[s]);
  for (const char *t = list; (t = strstr(t, solver_name[s])); t += l)
    if ((t == list || t[-1] == ',' || t[-1] == ' ') && (t[l] == 0 || t[l] == ',' || t[l] == ' ')) return 1;
  return 0;
}

/* −1 if the list names a solver that does not exist (the first such at *bad) */
static int solvers_valid(const char *list, char *bad, size_t n) {
  if (!list) return 0;
  char buf[512];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *t = strtok(buf, ", "); t; t = strtok(NULL, ", ")) {
    int ok = 0;
    for (int s = 0; s < NS; s++) ok |= !strcmp(t, solver_name[s]);
    if (!ok) {
      snprintf(bad, n, "%s", t);
      return -1;
    }
  }
  return 0;
}

static int scale_one(const rl_scale_args *a, const char *path, const char *family, int n, rl_csv *w) {
  char err[1024], model[64];
  if (rl_scale_scene_write(path, family, n, 1000, err, sizeof err)) { /* rigidlab's rows: nconmax */
    rl_errorf("scale: %s", err);
    return RL_EXIT_BADINPUT;
  }
  rl_pair p;
  rl_common_args c = a->c;
  c.model = path;
  snprintf(model, sizeof model, "%s%d", family, n);
  if (rl_pair_load(&p, &c, 0, err, sizeof err)) {
    /* rigidlab imports through MuJoCo's compiler: a model MuJoCo 2.2.2 cannot compile (its stack overflows
       from ~4000 spheres) runs on neither side; every solver's row says so */
    const char *why = strrchr(err, ':') ? strrchr(err, ':') + 1 : err;
    for (int s = 0; s < NS; s++) {
      if (!wanted(a->solvers, s)) continue;
      scale_row r = {.ms = NAN, .iter = NAN, .arena = NAN, .chol = NAN, .qrel = NAN};
      snprintf(r.status, sizeof r.status, "not loaded: MuJoCo's compiler:%.120s", why);
      if (!a->c.quiet) printf("%-12s %-15s %s\n", model, solver_name[s], r.status);
      if (w) row_write(w, model, n, 0, s, &r);
    }
    return RL_EXIT_OK;
  }
  int nv = p.m->nv, nefc = 0;
  long steps = a->steps > 0 ? a->steps : 5;
  if (wanted(a->solvers, S_MUJOCO)) {
    /* MuJoCo's njmax comes from the rows rigidlab's steps make: with no rigidlab solver asked for, CG's
       steps (the cheapest) count them, untimed */
    int any = 0;
    for (int s = 0; s < S_MUJOCO; s++) any |= wanted(a->solvers, s);
    if (!any) {
      scale_row r = {0};
      run_ours(&p, S_CG, steps, &r);
      nefc = r.nefc;
    }
  }
  for (int s = 0; s < NS; s++) {
    if (!wanted(a->solvers, s)) continue;
    scale_row r = {.ms = NAN, .iter = NAN, .arena = NAN, .chol = NAN, .qrel = NAN};
    if (s == S_DENSE && nv > a->dense_max_nv)
      snprintf(r.status, sizeof r.status, "not run: nv %d > %d (dense O(nv^3) factorization)", nv, a->dense_max_nv);
    else if (s == S_MUJOCO) run_mujoco(a, path, family, n, nv, nefc, steps, &r);
    else run_ours(&p, s, steps, &r);
    if (s == S_SPARSE && nv <= a->dense_max_nv) r.qrel = qacc_agreement(&p);
    if (s != S_MUJOCO && r.nefc > nefc) nefc = r.nefc;
    if (!a->c.quiet)
      printf("%-12s %-15s %10.3f ms/step  nefc %6d  iter %5.1f  arena %8.2f MB  cholmod %8.2f MB  q̈ rel %9.2e  %s\n",
             model, solver_name[s], r.ms, r.nefc, r.iter, r.arena / 1e6, r.chol / 1e6, r.qrel, r.status);
    if (w) row_write(w, model, n, nv, s, &r);
  }
  rl_pair_free(&p);
  return RL_EXIT_OK;
}

int rl_cmd_scale(const rl_scale_args *a) {
  char family[32];
  const char *colon = strchr(a->c.model, ':');
  if (!colon || colon - a->c.model >= (long)sizeof family) {
    rl_errorf("scale: '%s': expected FAMILY:N1+N2+... (spheres, boxes, links)", a->c.model);
    return RL_EXIT_BADINPUT;
  }
  char bad[128];
  if (solvers_valid(a->solvers, bad, sizeof bad)) {
    rl_errorf(
        "scale: solver '%s' (allowed: newton_dense, newton_skyline, newton_sparse, newton_auto, cg, avbd, mujoco)",
        bad);
    return RL_EXIT_BADINPUT;
  }
  memcpy(family, a->c.model, (size_t)(colon - a->c.model));
  family[colon - a->c.model] = 0;
  char path[] = "/tmp/rigidlab-scale-XXXXXX.xml";
  int fd = mkstemps(path, 4);
  if (fd < 0) {
    rl_errorf("scale: cannot create a temporary model file");
    return RL_EXIT_BADINPUT;
  }
  close(fd);
  rl_csv *w = a->c.out;
  if (w && w->rows == 0) {
    const char *hdr[] = {"model",    "n",         "nv",          "solver",        "ms_per_step",
                         "nefc_max", "iter_mean", "arena_bytes", "cholmod_bytes", "qacc_rel_dense",
                         "status"};
    for (int k = 0; k < 11; k++) rl_csv_str(w, hdr[k]);
    rl_csv_end_row(w);
  }
  int st = RL_EXIT_OK;
  for (const char *t = colon + 1; *t && st == RL_EXIT_OK;) {
    char *end;
    long n = strtol(t, &end, 10);
    if (end == t || (*end && *end != '+' && *end != ',')) {
      rl_errorf("scale: '%s': expected FAMILY:N1+N2+... with integer counts", a->c.model);
      st = RL_EXIT_BADINPUT;
      break;
    }
    st = scale_one(a, path, family, (int)n, w);
    t = *end ? end + 1 : end;
  }
  remove(path);
  return st;
}
