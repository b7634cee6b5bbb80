/* study_lockstep_prec.c — kind = lockstep, the per-precision part: one engine step from each of MuJoCo's
 * states, compared with MuJoCo's next state (study_lockstep.h: study_lockstep). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "csv.h"
#include "pair.h"
#include "rl_avbd.h"
#include "study_lockstep.h"
#include "study_prec.h"

#define study_lockstep RL_NAME(study_lockstep)

/* rel = ‖x − x_ref‖∞ / max(‖x_ref‖∞, 1) over n entries (NaN in x gives NaN) */
static double rel_inf_error(int n, const real *x, const double *xref) {
  double e = 0, s = 1;
  for (int i = 0; i < n; i++) {
    double d = fabs((double)x[i] - xref[i]);
    if (isnan(d)) return NAN;
    e = fmax(e, d);
    s = fmax(s, fabs(xref[i]));
  }
  return e / s;
}

/* MuJoCo's state before its step → rigidlab: qpos, qvel, ctrl (rounded to real), time, and for the soft
   engines qacc_warmstart (the previous step's qacc, which MuJoCo's own step starts its solver from) */
static void load_mujoco_state(const rl_pair *p, rl_data *d, const mjData *mjd, int warm) {
  rl_set_state(p, d, NULL, mjd->qpos, mjd->qvel, mjd->ctrl);
  d->time = (real)mjd->time;
  if (warm)
    for (int i = 0; i < p->m->nv; i++) d->qacc_warmstart[i] = (real)mjd->qacc_warmstart[i];
}

/* AVBD from the generalized state with its own warm start kept: rl_avbd_from_generalized resets the row
   multipliers/penalties and empties the contact cache; the previous step's λ, ρ of every joint/equality row
   and the cache (am->prev, matched by key in rl_avbd_step) are put back afterwards */
static void avbd_enter(rl_avbd *am, const rl_model *m, rl_data *d, real *save) {
  int nprev = am->nprev;
  for (int r = 0; r < am->nrow; r++) {
    save[2 * r] = am->row[r].lambda;
    save[2 * r + 1] = am->row[r].rho;
  }
  rl_avbd_from_generalized(am, m, d);
  for (int r = 0; r < am->nrow; r++) {
    am->row[r].lambda = save[2 * r];
    am->row[r].rho = save[2 * r + 1];
  }
  am->nprev = nprev;
}

int study_lockstep(const rl_sim_args *a) {
  rl_pair p;
  rl_avbd *am;
  int mujoco, st = study_load_engine(&p, a, 0, 1, &mujoco, &am);
  if (st) return st;
  if (p.mjm->na) {
    rl_errorf("lockstep: %s: %d activation states (lockstep loads qpos, qvel, ctrl only)", a->c.model, p.mjm->na);
    rl_avbd_free(am);
    rl_pair_free(&p);
    return RL_EXIT_BADINPUT;
  }
  char serr[256];
  long steps = rl_run_steps(a, p.mjm->opt.timestep, serr, sizeof serr);
  if (steps < 0) {
    rl_errorf("%s: %s", a->c.model, serr);
    rl_avbd_free(am);
    rl_pair_free(&p);
    return RL_EXIT_BADINPUT;
  }
  mjData *mjd = mj_makeData(p.mjm);
  rl_data *d = rl_pair_data(&p);
  real *save = am ? malloc(sizeof(real) * (2 * (size_t)am->nrow + 1)) : NULL;
  mj_resetData(p.mjm, mjd);
  if (am) {
    load_mujoco_state(&p, d, mjd, 0);
    rl_avbd_from_generalized(am, p.m, d);
  }
  rl_csv *w = a->c.out;
  const char *cols[] = {"step", "time", "err_qpos", "err_qvel", "ncon", "mj_ncon", "iter", "converged", "mj_iter",
                        "mj_converged"};
  for (int k = 0; k < 10; k++) rl_csv_str(w, cols[k]);
  rl_csv_end_row(w);
  for (long s = 1; s <= steps; s++) {
    load_mujoco_state(&p, d, mjd, !am);
    int ncon;
    if (am) {
      avbd_enter(am, p.m, d, save);
      rl_avbd_step(am, p.m, d); /* a non-finite step is undone and counted in d->warning */
      ncon = am->stat.ncon;
    } else {
      rl_step(p.m, d);
      ncon = d->ncon;
    }
    mj_step(p.mjm, mjd);
    rl_csv_int(w, s);
    rl_csv_num(w, mjd->time);
    rl_csv_num(w, rel_inf_error(p.m->nq, d->qpos, mjd->qpos));
    rl_csv_num(w, rel_inf_error(p.m->nv, d->qvel, mjd->qvel));
    rl_csv_int(w, ncon);
    rl_csv_int(w, mjd->ncon);
    if (am) {
      /* AVBD has no solver iterations of MuJoCo's kind */
      for (int k = 0; k < 4; k++) rl_csv_num(w, NAN);
    } else {
      /* MuJoCo 2.2.2 has no converged flag: it converged when it stopped before its iteration limit */
      rl_csv_int(w, d->solver_iter);
      rl_csv_int(w, d->solver_converged);
      rl_csv_int(w, mjd->solver_iter);
      rl_csv_int(w, mjd->nefc == 0 || mjd->solver_iter < p.mjm->opt.iterations);
    }
    rl_csv_end_row(w);
  }
  free(save);
  rl_avbd_free(am);
  rl_data_free(d);
  mj_deleteData(mjd);
  rl_pair_free(&p);
  return 0;
}
