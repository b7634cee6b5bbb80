/* bench.c — `rigidlab bench`: smooth-dynamics stages, rigidlab vs MuJoCo's equivalents, timed
 * alternately in one process (ours, MuJoCo, ours, …) on the same state; per stage the median
 * over repetitions of ns per call, and ratio = ours / MuJoCo (below 1 is faster). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "csv.h"
#include "pair.h"
#include "states.h"
#include "tolerances.h"

#define rl_cmd_bench RL_NAME(cmd_bench)

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

enum { B_KIN, B_COM, B_INERTIA, B_BIAS, B_PASSIVE, B_ACT, B_SMOOTH, B_STEP, NB };
static const char *const bench_stage[NB] = {"kinematics", "com", "inertia", "bias", "passive", "actuation", "smooth", "step"};

typedef struct ctx {
  const rl_pair *p;
  const mjModel *mjfree;
  rl_data *d;
  mjData *mjd;
  const double *qpos, *qvel, *ctrl;
} ctx;

static void run_ours(ctx *c, int stage, long n) {
  const rl_model *m = c->p->m;
  rl_data *d = c->d;
  for (long i = 0; i < n; i++) switch (stage) {
      case B_KIN: rl_kinematics(m, d); break;
      case B_COM: rl_com_pos(m, d); break;
      case B_INERTIA: rl_crb(m, d); rl_factor_m(m, d); break;
      case B_BIAS: rl_com_vel(m, d); rl_rne(m, d); break;
      case B_PASSIVE: rl_passive(m, d); break;
      case B_ACT: rl_actuation(m, d); break;
      case B_SMOOTH: rl_smooth_acc(m, d); break;
      default: rl_step_smooth(m, d); break;
    }
}

static void run_mujoco(ctx *c, int stage, long n) {
  const mjModel *m = c->mjfree;
  mjData *d = c->mjd;
  for (long i = 0; i < n; i++) switch (stage) {
      case B_KIN: mj_kinematics(m, d); break;
      case B_COM: mj_comPos(m, d); break;
      case B_INERTIA: mj_crb(m, d); mj_factorM(m, d); break;
      case B_BIAS: mj_comVel(m, d); mj_rne(m, d, 0, d->qfrc_bias); break;
      case B_PASSIVE: mj_passive(m, d); break;
      case B_ACT: mj_transmission(m, d); mj_fwdActuation(m, d); break;
      case B_SMOOTH: mj_fwdAcceleration(m, d); break;
      default: mj_step(m, d); break;
    }
}

int rl_cmd_bench(const rl_bench_args *a) {
  char err[1024];
  rl_pair p;
  int st = rl_pair_load(&p, &a->c, 0, err, sizeof err);
  if (st) {
    rl_errorf("%s", err);
    return st;
  }
  rl_csv *w = a->c.out;
  /* Both engines run the constraint-free model: the smooth pipeline is what is compared here. */
  mjModel *mjfree = mj_copyModel(NULL, p.mjm);
  mjfree->opt.disableflags |= mjDSBL_CONSTRAINT;
  rl_states S;
  rl_states_draw(p.mjm, 2, 12345, &S);
  ctx c = {&p, mjfree, rl_data_alloc(p.m), mj_makeData(mjfree), S.qpos + S.nq, S.qvel + S.nv, S.ctrl + S.nu};
  int reps = a->reps > 0 ? a->reps : 15;
  long n = a->steps > 0 ? a->steps : 200;
  double *tr = malloc(sizeof(double) * (size_t)reps), *tm = malloc(sizeof(double) * (size_t)reps);
  const char *label = strrchr(a->c.model, '/') ? strrchr(a->c.model, '/') + 1 : a->c.model;
  if (!a->c.quiet) printf("%-12s %-4s %14s %14s %8s\n", "stage", "prec", "ns/call ours", "ns/call mujoco", "ratio");
  if (w && w->rows == 0) {
    const char *hdr[] = {"model", "engine", "precision", "stage", "ns_per_step", "mujoco_ns_per_step", "ratio"};
    for (int k = 0; k < 7; k++) rl_csv_str(w, hdr[k]);
    rl_csv_end_row(w);
  }
  for (int stage = 0; stage < NB; stage++) {
    for (int r = 0; r < reps; r++) {
      /* same state for both, full forward first so every stage has its inputs */
      rl_set_state(&p, c.d, c.mjd, c.qpos, c.qvel, c.ctrl);
      rl_forward_smooth(p.m, c.d);
      mj_forward(mjfree, c.mjd);
      double t0 = now_ns();
      run_ours(&c, stage, n);
      double t1 = now_ns();
      run_mujoco(&c, stage, n);
      double t2 = now_ns();
      tr[r] = (t1 - t0) / (double)n;
      tm[r] = (t2 - t1) / (double)n;
    }
    qsort(tr, (size_t)reps, sizeof(double), cmp_double);
    qsort(tm, (size_t)reps, sizeof(double), cmp_double);
    double ours = tr[reps / 2], theirs = tm[reps / 2];
    if (!a->c.quiet) printf("%-12s %-4s %14.1f %14.1f %8.3f\n", bench_stage[stage], RL_PREC_NAME, ours, theirs, ours / theirs);
    if (w) {
      rl_csv_str(w, label);
      rl_csv_str(w, "newton");
      rl_csv_str(w, RL_PREC_NAME);
      rl_csv_str(w, bench_stage[stage]);
      rl_csv_num(w, ours);
      rl_csv_num(w, theirs);
      rl_csv_num(w, ours / theirs);
      rl_csv_end_row(w);
    }
  }
  free(tr);
  free(tm);
  rl_data_free(c.d);
  mj_deleteData(c.mjd);
  mj_deleteModel(mjfree);
  rl_states_free(&S);
  rl_pair_free(&p);
  return st;
}
