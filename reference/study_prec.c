/* study_prec.c — the per-precision pieces of the runner's study kinds (see study_kinds.h). */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "csv.h"
#include "lapack_ref.h"
#include "pair.h"
#include "study_kinds.h"
#include "tolerances.h"

#define study_onestep RL_NAME(study_onestep)
#define study_residuals RL_NAME(study_residuals)
#define study_convergence RL_NAME(study_convergence)
#define study_ode RL_NAME(study_ode)

static int load_soft(rl_pair *p, const rl_sim_args *a, int allow_mujoco, int *mujoco) {
  char err[1024], why[512];
  int newton = !strcmp(a->engine, "newton"), cg = !strcmp(a->engine, "cg");
  *mujoco = !strcmp(a->engine, "mujoco");
  if (!newton && !cg && !(allow_mujoco && *mujoco)) {
    rl_errorf("study: engine '%s' is not available here (allowed: newton, cg%s)", a->engine, allow_mujoco ? ", mujoco" : "");
    return RL_EXIT_BADINPUT;
  }
  int st = rl_pair_load(p, &a->c, a->dt, err, sizeof err);
  if (st) {
    rl_errorf("%s", err);
    return st;
  }
  if (!*mujoco) {
    p->m->opt.solver = cg ? RL_SOLVER_CG : RL_SOLVER_NEWTON;
    if (rl_solver_check_options(p->m, why, sizeof why)) {
      rl_errorf("%s: %s", a->c.model, why);
      rl_pair_free(p);
      return RL_EXIT_BADINPUT;
    }
  }
  return 0;
}

int study_onestep(const rl_sim_args *a, long nsteps, int n, int nq, int nv, const double *qpos, const double *qvel, double *qpos_out,
                  double *qvel_out) {
  rl_pair p;
  int mujoco, st = load_soft(&p, a, 0, &mujoco);
  if (st) return st;
  if (p.m->nq != nq || p.m->nv != nv) {
    rl_errorf("study: %s: nq/nv %d/%d, expected %d/%d", a->c.model, p.m->nq, p.m->nv, nq, nv);
    rl_pair_free(&p);
    return RL_EXIT_BADINPUT;
  }
  rl_data *d = rl_data_alloc(p.m);
  for (int s = 0; s < n; s++) {
    rl_set_state(&p, d, NULL, qpos + (size_t)s * (size_t)nq, qvel + (size_t)s * (size_t)nv, NULL);
    for (int i = 0; i < nv; i++) d->qacc_warmstart[i] = 0;
    for (long k = 0; k < nsteps; k++) rl_step(p.m, d);
    for (int i = 0; i < nq; i++) qpos_out[(size_t)s * (size_t)nq + (size_t)i] = (double)d->qpos[i];
    for (int i = 0; i < nv; i++) qvel_out[(size_t)s * (size_t)nv + (size_t)i] = (double)d->qvel[i];
  }
  rl_data_free(d);
  rl_pair_free(&p);
  return 0;
}

/* ---- kind = refinement: the GSL ODE reference (study_kinds.h: study_ode) ---- */
typedef struct ode_ctx {
  const rl_model *m;
  rl_data *d;
} ode_ctx;

/* y = (q, q̇) → (q̇, q̈) with q̈ = M⁻¹(q)·qfrc_smooth(q, q̇): rigidlab's own smooth dynamics (hinge-only,
   so q̇ is dq/dt) */
static int ode_rhs(double t, const double y[], double dydt[], void *params) {
  ode_ctx *c = params;
  int nv = c->m->nv;
  for (int i = 0; i < nv; i++) {
    c->d->qpos[i] = (real)y[i];
    c->d->qvel[i] = (real)y[nv + i];
  }
  c->d->time = (real)t;
  rl_forward_smooth(c->m, c->d);
  for (int i = 0; i < nv; i++) {
    dydt[i] = y[nv + i];
    dydt[nv + i] = (double)c->d->qacc[i];
  }
  return GSL_SUCCESS;
}

int study_ode(const rl_sim_args *a, double tfinal, int nq, const double *qpos0, const double *qvel0, double *qpos_out,
              char *why, int whylen) {
  rl_pair p;
  char err[1024];
  int st = rl_pair_load(&p, &a->c, a->dt, err, sizeof err);
  if (st) {
    rl_errorf("%s", err);
    return -1;
  }
  /* constraint rows (contacts, limits, equalities, friction loss) make the dynamics non-smooth: no ODE
     reference for such scenes (rl_constraint_free decides it from the model) */
  if (!rl_constraint_free(&p, why, whylen)) {
    rl_pair_free(&p);
    return 1;
  }
  if (p.m->nq != p.m->nv || p.m->nq != nq) {
    snprintf(why, (size_t)whylen, "nq %d != nv %d (not hinge/slide-only)", p.m->nq, p.m->nv);
    rl_pair_free(&p);
    return 1;
  }
  int nv = p.m->nv;
  ode_ctx c = {p.m, rl_data_alloc(p.m)};
  double *y = malloc(sizeof(double) * 2 * (size_t)nv);
  for (int i = 0; i < nv; i++) {
    y[i] = qpos0[i];
    y[nv + i] = qvel0[i];
  }
  gsl_odeiv2_system sys = {ode_rhs, NULL, 2 * (size_t)nv, &c};
  gsl_odeiv2_driver *drv = gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rk8pd, 1e-4, 1e-12, 1e-12);
  double t = 0;
  int gs = gsl_odeiv2_driver_apply(drv, &t, tfinal, y);
  gsl_odeiv2_driver_free(drv);
  if (gs != GSL_SUCCESS) {
    rl_errorf("study: %s: gsl_odeiv2 failed (%s) at t = %g", a->c.model, gsl_strerror(gs), t);
    st = -1;
  } else {
    for (int i = 0; i < nq; i++) qpos_out[i] = y[i];
    st = 0;
  }
  free(y);
  rl_data_free(c.d);
  rl_pair_free(&p);
  return st;
}

typedef struct resid {
  double signorini, coulomb, mdp, ncp, penetration;
} resid;

/* one contact: rows' forces f[] and velocities v[] (nrow of them), cone, μ's → residuals */
static void contact_resid(resid *r, int pyramidal, int dim, const double *mu, const double *f, const double *v, double dist,
                          const double *fc /* contact-frame force or NULL */) {
  double fn, vn, ft[5] = {0}, vt[5] = {0};
  if (dim == 1) {
    fn = f[0];
    vn = v[0];
  } else if (pyramidal) {
    fn = 0;
    for (int k = 0; k < 2 * (dim - 1); k++) fn += f[k];
    vn = 0.5 * (v[0] + v[1]);
    for (int j = 0; j < dim - 1; j++) {
      ft[j] = mu[j] * (f[2 * j] - f[2 * j + 1]);
      vt[j] = mu[j] > 0 ? (v[2 * j] - v[2 * j + 1]) / (2 * mu[j]) : 0;
    }
  } else {
    fn = f[0];
    vn = v[0];
    for (int j = 0; j < dim - 1; j++) {
      ft[j] = f[j + 1];
      vt[j] = v[j + 1];
    }
  }
  if (fc) { /* MuJoCo's own contact-frame force (mj_contactForce) */
    fn = fc[0];
    for (int j = 0; j < dim - 1; j++) ft[j] = fc[j + 1];
  }
  r->signorini = fmax(r->signorini, fabs(vn * fn));
  r->ncp = fmax(r->ncp, fabs(fmin(fn, vn)));
  r->penetration = fmax(r->penetration, -dist);
  if (dim == 1) return;
  /* the cone, every friction direction scaled to the first (sliding) one */
  double c = 0;
  for (int j = 0; j < dim - 1; j++) {
    double s = mu[j] > 0 ? ft[j] * mu[0] / mu[j] : 0;
    c += s * s;
  }
  r->coulomb = fmax(r->coulomb, sqrt(c) - mu[0] * fn);
  /* maximum dissipation on the sliding directions: f_t antiparallel to v_t */
  double dot = ft[0] * vt[0] + ft[1] * vt[1], nf = hypot(ft[0], ft[1]), nvt = hypot(vt[0], vt[1]);
  r->mdp = fmax(r->mdp, dot + nf * nvt);
}

static void resid_row(rl_csv *w, long step, double time, const resid *r, int ncon) {
  rl_csv_int(w, step);
  rl_csv_num(w, time);
  rl_csv_num(w, r->signorini);
  rl_csv_num(w, r->coulomb);
  rl_csv_num(w, r->mdp);
  rl_csv_num(w, r->ncp);
  rl_csv_num(w, r->penetration);
  rl_csv_int(w, ncon);
  rl_csv_end_row(w);
}

int study_residuals(const rl_sim_args *a) {
  rl_pair p;
  int mujoco, st = load_soft(&p, a, 1, &mujoco);
  if (st) return st;
  if (mujoco && RL_IS_F32) {
    rl_errorf("study: engine mujoco runs in f64 only");
    rl_pair_free(&p);
    return RL_EXIT_BADINPUT;
  }
  long steps = a->steps >= 0 ? a->steps : lround(a->duration / p.mjm->opt.timestep);
  mjData *mjd = mj_makeData(p.mjm);
  rl_data *d = rl_data_alloc(p.m);
  mj_resetData(p.mjm, mjd);
  rl_set_state(&p, d, mjd, mjd->qpos, mjd->qvel, mjd->ctrl);
  rl_csv *w = a->c.out;
  w->f32 = RL_IS_F32 && !mujoco;
  const char *cols[] = {"step", "time", "signorini", "coulomb", "mdp", "ncp", "penetration", "ncon"};
  for (int k = 0; k < 8; k++) rl_csv_str(w, cols[k]);
  rl_csv_end_row(w);
  resid zero = {0, 0, 0, 0, 0};
  resid_row(w, 0, 0, &zero, 0);
  double *v = NULL;
  int vcap = 0;
  for (long s = 1; s <= steps; s++) {
    resid r = zero;
    int ncon;
    double time;
    if (mujoco) {
      mj_step(p.mjm, mjd);
      /* efc_J, efc_force and the contacts are the step's (mj_step integrates after them) */
      if (mjd->nefc > vcap) v = realloc(v, sizeof(double) * (size_t)(vcap = mjd->nefc));
      if (mjd->nefc) mj_mulJacVec(p.mjm, mjd, v, mjd->qvel);
      int pyr = p.mjm->opt.cone == mjCONE_PYRAMIDAL;
      for (int i = 0; i < mjd->ncon; i++) {
        const mjContact *c = &mjd->contact[i];
        if (c->exclude || c->efc_address < 0) continue;
        double fc[6];
        mj_contactForce(p.mjm, mjd, i, fc);
        contact_resid(&r, pyr, c->dim, c->friction, mjd->efc_force + c->efc_address, v + c->efc_address, c->dist, fc);
      }
      ncon = mjd->ncon;
      time = mjd->time;
    } else {
      rl_step(p.m, d);
      if (d->nefc > vcap) v = realloc(v, sizeof(double) * (size_t)(vcap = d->nefc));
      for (int i = 0; i < d->nefc; i++) {
        double x = 0;
        for (int k = 0; k < d->efc_J_rownnz[i]; k++) {
          int a2 = d->efc_J_rowadr[i] + k;
          x += (double)d->efc_J[a2] * (double)d->qvel[d->efc_J_colind[a2]];
        }
        v[i] = x;
      }
      for (int i = 0; i < d->ncon; i++) {
        const rl_contact *c = &d->contact[i];
        if (c->exclude || c->efc_address < 0) continue;
        double f[12], mu[5];
        int nr = c->dim == 1 ? 1 : p.m->opt.cone == RL_CONE_PYRAMIDAL ? 2 * (c->dim - 1) : c->dim;
        for (int k = 0; k < nr; k++) f[k] = (double)d->efc_force[c->efc_address + k];
        for (int k = 0; k < 5; k++) mu[k] = (double)c->friction[k];
        contact_resid(&r, p.m->opt.cone == RL_CONE_PYRAMIDAL, c->dim, mu, f, v + c->efc_address, (double)c->dist, NULL);
      }
      ncon = d->ncon;
      time = (double)d->time;
    }
    resid_row(w, s, time, &r, ncon);
  }
  free(v);
  rl_data_free(d);
  mj_deleteData(mjd);
  rl_pair_free(&p);
  return 0;
}

/* kind = convergence (study_kinds.h) */
int study_convergence(const rl_sim_args *a, int nstates, long stride, int niter) {
  rl_pair p;
  int mujoco, st = load_soft(&p, a, 0, &mujoco);
  if (st) return st;
  int cg = p.m->opt.solver == RL_SOLVER_CG, nv = p.mjm->nv;
  mjModel *mc = mj_copyModel(NULL, p.mjm);
  mc->opt.solver = cg ? mjSOL_CG : mjSOL_NEWTON;
  mc->opt.iterations = niter;
  mc->opt.tolerance = 0;
  mc->opt.disableflags |= mjDSBL_WARMSTART;
  mjData *traj = mj_makeData(p.mjm), *dc = mj_makeData(mc);
  rl_data *d = rl_data_alloc(p.m);
  double *astar = malloc(sizeof(double) * ((size_t)nv + 1));
  double *gap = malloc(sizeof(double) * ((size_t)niter + 1));
  rl_model mm = *p.m; /* shallow copy: same arrays, own options */
  mm.opt.contact_resolution = RL_RES_CONVEX;
  mm.opt.tolerance = 0;
  mm.opt.disableflags |= RL_DSBL_WARMSTART;
  rl_csv *w = a->c.out;
  const char *cols[] = {"state", "step", "iter", "gap", "rel_gap", "grad", "mj_grad", "nefc"};
  for (int c = 0; c < 8; c++) rl_csv_str(w, cols[c]);
  rl_csv_end_row(w);
  mj_resetData(p.mjm, traj);
  for (int s = 0; s < nstates && !st; s++) {
    for (long k = 0; k < stride; k++) mj_step(p.mjm, traj);
    memcpy(dc->qpos, traj->qpos, sizeof(double) * (size_t)p.mjm->nq);
    memcpy(dc->qvel, traj->qvel, sizeof(double) * (size_t)nv);
    memcpy(dc->ctrl, traj->ctrl, sizeof(double) * (size_t)p.mjm->nu);
    mj_forward(mc, dc);
    if (rl_ref_copy_mujoco(mc, dc, p.m, d)) {
      rl_errorf("study: %s: state %d exceeds rigidlab's capacities", a->c.model, s);
      st = RL_EXIT_BADINPUT;
      break;
    }
    rl_ref_problem ref;
    if (rl_ref_problem_make(&ref, p.m, d)) {
      rl_errorf("study: %s: state %d: cannot build the reference problem", a->c.model, s);
      st = RL_EXIT_BADINPUT;
      break;
    }
    double cstar = 0;
    rl_ref_optimum(&ref, astar, &cstar, NULL);
    double scale = fmax(fabs(cstar), 1e-300);
    /* iterations = it from qacc_smooth: the iterate a_it exactly */
    for (int it = 1; it <= niter; it++) {
      mm.opt.iterations = it;
      rl_constraint_solve(&mm, d);
      gap[it] = rl_ref_gap(&ref, d->qacc, cstar);
    }
    /* the last run (iterations = niter) holds every iteration's statistics */
    int nit = d->solver_iter < RL_NSOLVER ? d->solver_iter : RL_NSOLVER;
    int mjit = dc->solver_iter < mjNSOLVER ? dc->solver_iter : mjNSOLVER;
    for (int it = 1; it <= niter; it++) {
      rl_csv_int(w, s);
      rl_csv_int(w, (long long)(s + 1) * stride);
      rl_csv_int(w, it);
      rl_csv_num(w, gap[it]);
      rl_csv_num(w, gap[it] / scale);
      rl_csv_num(w, it <= nit ? (double)d->solver[it - 1].gradient : 0.0);
      rl_csv_num(w, it <= mjit ? dc->solver[it - 1].gradient : 0.0);
      rl_csv_int(w, d->nefc);
      rl_csv_end_row(w);
    }
    rl_ref_problem_free(&ref);
  }
  free(astar);
  free(gap);
  rl_data_free(d);
  mj_deleteData(traj);
  mj_deleteData(dc);
  mj_deleteModel(mc);
  rl_pair_free(&p);
  return st;
}
