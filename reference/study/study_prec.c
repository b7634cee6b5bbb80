/* study_prec.c — the per-precision pieces of the runner's study kinds (see study_kinds.h). */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "csv.h"
#include "lapack_ref.h"
#include "avbd_ref.h"
#include "avbd_judge.h"
#include "study_prec.h"
#include "pair.h"
#include "study_kinds.h"
#include "tolerances.h"

#define study_onestep          RL_NAME(study_onestep)
#define study_residuals        RL_NAME(study_residuals)
#define study_convergence      RL_NAME(study_convergence)
#define study_convergence_avbd RL_NAME(study_convergence_avbd)
#define study_own_stops_avbd   RL_NAME(study_own_stops_avbd)
#define study_ode              RL_NAME(study_ode)

/* study_prec.h */
int study_load_engine(rl_pair *p, const rl_sim_args *a, int allow_mujoco, int allow_avbd, int *mujoco, rl_avbd **am) {
  char err[1024], why[512];
  int newton = !strcmp(a->engine, "newton"), cg = !strcmp(a->engine, "cg"), avbd = !strcmp(a->engine, "avbd");
  *mujoco = !strcmp(a->engine, "mujoco");
  *am = NULL;
  if (!newton && !cg && !(allow_mujoco && *mujoco) && !(allow_avbd && avbd)) {
    rl_errorf("study: engine '%s' is not available here (allowed: newton, cg%s%s)", a->engine,
              allow_mujoco ? ", mujoco" : "", allow_avbd ? ", avbd" : "");
    return RL_EXIT_BADINPUT;
  }
  int st = rl_pair_load(p, &a->c, a->dt, err, sizeof err);
  if (st) {
    rl_errorf("%s", err);
    return st;
  }
  if (avbd) {
    rl_avbd_param prm = rl_avbd_default_param(p->m); /* as `sim` runs it */
    if (!(*am = rl_avbd_build(p->m, &prm, why, sizeof why))) {
      rl_errorf("%s: %s", a->c.model, why);
      rl_pair_free(p);
      return RL_EXIT_BADINPUT;
    }
  } else if (!*mujoco) {
    p->m->opt.solver = cg ? RL_SOLVER_CG : RL_SOLVER_NEWTON;
    if (rl_solver_check_options(p->m, why, sizeof why)) {
      rl_errorf("%s: %s", a->c.model, why);
      rl_pair_free(p);
      return RL_EXIT_BADINPUT;
    }
  }
  return 0;
}

static int load_soft(rl_pair *p, const rl_sim_args *a, int allow_mujoco, int *mujoco) {
  rl_avbd *am;
  return study_load_engine(p, a, allow_mujoco, 0, mujoco, &am);
}

int study_onestep(const rl_sim_args *a, long nsteps, int n, int nq, int nv, const double *qpos, const double *qvel,
                  double *qpos_out, double *qvel_out) {
  rl_pair p;
  rl_avbd *am;
  int mujoco, st = study_load_engine(&p, a, 0, 1, &mujoco, &am);
  if (st) return st;
  if (p.m->nq != nq || p.m->nv != nv) {
    rl_errorf("study: %s: nq/nv %d/%d, expected %d/%d", a->c.model, p.m->nq, p.m->nv, nq, nv);
    rl_avbd_free(am);
    rl_pair_free(&p);
    return RL_EXIT_BADINPUT;
  }
  rl_data *d = rl_pair_data(&p);
  for (int s = 0; s < n; s++) {
    rl_set_state(&p, d, NULL, qpos + (size_t)s * (size_t)nq, qvel + (size_t)s * (size_t)nv, NULL);
    for (int i = 0; i < nv; i++) d->qacc_warmstart[i] = 0;
    if (am) { /* AVBD restarted from the generalized state: fresh multipliers and contact cache */
      rl_avbd_from_generalized(am, p.m, d);
      for (long k = 0; k < nsteps; k++) rl_avbd_step(am, p.m, d); /* a non-finite step is undone (`sim`) */
    } else
      for (long k = 0; k < nsteps; k++) rl_step(p.m, d);
    for (int i = 0; i < nq; i++) qpos_out[(size_t)s * (size_t)nq + (size_t)i] = (double)d->qpos[i];
    for (int i = 0; i < nv; i++) qvel_out[(size_t)s * (size_t)nv + (size_t)i] = (double)d->qvel[i];
  }
  rl_data_free(d);
  rl_avbd_free(am);
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
  ode_ctx c = {p.m, rl_pair_data(&p)};
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
static void contact_resid(resid *r, int pyramidal, int dim, const double *mu, const double *f, const double *v,
                          double dist, const double *fc /* contact-frame force or NULL */) {
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

/* one AVBD contact after its step, frame (n, t1, t2) frozen in the step, normal from body a to b:
 *   force on b   f = −λ  (λ_n ≤ 0, so f_n = −λ_n ≥ 0; λ in N: the step energy is in J and C in m),
 *   velocity     v = (v_b + ω_b × R_b r_b) − (v_a + ω_a × R_a r_a)   (the recovered post-step velocities),
 *   gap          dist = C_n = n·(p_b − p_a) at the step's end (the poses AVBD solved the forces at).
 * The sliding part only (dim 3; a dim-1 contact has its normal row alone). */
static void avbd_contact_resid(resid *r, const rl_avbd *am, const rl_avbd_contact *c) {
  double vr[3] = {0, 0, 0}, p[2][3] = {{0, 0, 0}, {0, 0, 0}};
  for (int side = 0; side < 2; side++) {
    int s = side ? c->b : c->a;
    const real *rl = side ? c->rB : c->rA;
    if (s < 0) { /* the world: r is the world point, at rest */
      for (int i = 0; i < 3; i++) p[side][i] = (double)rl[i];
      continue;
    }
    const rl_avbd_pose *P = am->pose + s;
    const real *v = am->vel + 6 * s;
    double u[3], w[3] = {(double)v[3], (double)v[4], (double)v[5]};
    for (int i = 0; i < 3; i++)
      u[i] = (double)P->R[3 * i] * (double)rl[0] + (double)P->R[3 * i + 1] * (double)rl[1] +
             (double)P->R[3 * i + 2] * (double)rl[2];
    double wu[3] = {w[1] * u[2] - w[2] * u[1], w[2] * u[0] - w[0] * u[2], w[0] * u[1] - w[1] * u[0]};
    for (int i = 0; i < 3; i++) {
      p[side][i] = (double)P->x[i] + u[i];
      vr[i] += (side ? 1 : -1) * ((double)v[i] + wu[i]);
    }
  }
  double f[3], v[3], mu[5] = {c->mu, c->mu, 0, 0, 0}, dist = 0;
  for (int k = 0; k < 3; k++) {
    const real *e = c->frame + 3 * k;
    f[k] = -(double)c->lambda[k];
    v[k] = (double)e[0] * vr[0] + (double)e[1] * vr[1] + (double)e[2] * vr[2];
  }
  for (int i = 0; i < 3; i++) dist += (double)c->frame[i] * (p[1][i] - p[0][i]);
  contact_resid(r, 0, c->dim == 1 ? 1 : 3, mu, f, v, dist, NULL);
}

int study_residuals(const rl_sim_args *a) {
  rl_pair p;
  rl_avbd *am;
  int mujoco, st = study_load_engine(&p, a, 1, 1, &mujoco, &am);
  if (st) return st;
  if (mujoco && RL_IS_F32) {
    rl_errorf("study: engine mujoco runs in f64 only");
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
  mj_resetData(p.mjm, mjd);
  rl_set_state(&p, d, mjd, mjd->qpos, mjd->qvel, mjd->ctrl);
  if (am) rl_avbd_from_generalized(am, p.m, d);
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
    } else if (am) {
      /* AVBD as `sim` runs it (its own contacts); the step's contacts and multipliers stay in am */
      if (rl_avbd_step(am, p.m, d) != RL_OK) /* a non-finite step, undone: no forces to judge */
        r.signorini = r.coulomb = r.mdp = r.ncp = r.penetration = NAN;
      for (int i = 0; i < am->ncon; i++) avbd_contact_resid(&r, am, am->con + i);
      ncon = am->ncon;
      time = (double)d->time;
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
  rl_avbd_free(am);
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
  rl_data *d = rl_pair_data(&p);
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

/* kind = convergence, engine = avbd (study_kinds.h): one state's rows, buffered until the state is known to be
   applicable (the dense reference covers every term of its step) */
enum { AVBD_CONV_NCOL = 13 };

/* AVBD's step-start state from d's generalized state (d->time = T0), with the contacts rl_avbd_step would take
   (rl_collision's at this state for RL_AVBD_CONTACTS_DATA; own ground contacts are made in the step) */
static void avbd_conv_start(rl_avbd *am, const rl_model *m, rl_data *d, double t0) {
  d->time = (real)t0;
  rl_avbd_from_generalized(am, m, d); /* runs rl_kinematics on d's state */
  if (am->prm.contacts == RL_AVBD_CONTACTS_DATA) {
    rl_collision(m, d);
    rl_avbd_load_contacts(am, m, d);
  }
}

/* AVBD from the generalized state with a budget of IT sweeps and tolerance 0 (set here for each run):
   the step's iterate after exactly IT sweeps (fewer only if an update is exactly zero); the row
   iter,dist_m,dist_rad,stat_force,stat_torque,primal_m,primal_rad,sweeps into ROW[2..9] (the caller sets
   state, step) */
static int avbd_conv_iterate(rl_avbd *am, const rl_model *m, rl_data *d, const rl_avbd_ref *ref, double t0, int it,
                             double *row) {
  avbd_conv_start(am, m, d, t0);
  am->prm.iterations = it;
  am->prm.tol_lin = am->prm.tol_ang = 0;
  if (rl_avbd_step_maximal(am, m, d) != RL_OK) return -1; /* the contacts loaded at this start */
  const rl_avbd_stat *st = &am->stat;
  row[2] = it;
  rl_avbd_ref_distance(ref, am, &row[3], &row[4]);
  row[5] = (double)st->kkt_stationarity_force;
  row[6] = (double)st->kkt_stationarity_torque;
  row[7] = (double)st->kkt_primal_lin;
  row[8] = (double)st->kkt_primal_ang;
  row[9] = st->iterations;
  return 0;
}

/* the pair and AVBD for kind = convergence, engine = avbd (any other engine refused) */
static int load_avbd(rl_pair *p, const rl_sim_args *a, rl_avbd **am) {
  int mujoco, st = study_load_engine(p, a, 0, 1, &mujoco, am);
  if (st) return st;
  if (!*am) {
    rl_errorf("study: convergence (avbd): engine '%s' is not avbd", a->engine);
    rl_pair_free(p);
    return RL_EXIT_BADINPUT;
  }
  return 0;
}

int study_convergence_avbd(const rl_sim_args *a, int nstates, long stride, int niter) {
  rl_pair p;
  rl_avbd *am;
  int st = load_avbd(&p, a, &am);
  if (st) return st;
  mjData *traj = mj_makeData(p.mjm);
  rl_data *d = rl_pair_data(&p);
  double *rows = malloc(sizeof(double) * AVBD_CONV_NCOL * ((size_t)niter + 1));
  rl_csv *w = a->c.out;
  const char *cols[AVBD_CONV_NCOL] = {"state",      "step",        "iter",       "dist_m",
                                      "dist_rad",   "stat_force",  "stat_torque", "primal_m",
                                      "primal_rad", "sweeps",      "stop_flagged", "stop_false", "ref_unconverged"};
  const rl_avbd_param prm0 = am->prm; /* the point's parameters: its stopping test, tolerance and budget */
  for (int c = 0; c < AVBD_CONV_NCOL; c++) rl_csv_str(w, cols[c]);
  rl_csv_end_row(w);
  mj_resetData(p.mjm, traj);
  for (int s = 0; s < nstates && !st; s++) {
    for (long k = 0; k < stride; k++) mj_step(p.mjm, traj);
    rl_set_state(&p, d, NULL, traj->qpos, traj->qvel, traj->ctrl);
    avbd_conv_start(am, p.m, d, traj->time);
    rl_avbd_ref ref;
    if (rl_avbd_ref_solve(&ref, am, p.m, d)) {
      rl_errorf("study: %s: state %d: the dense AVBD reference failed (LAPACKE_dsysv info %d)", a->c.model, s,
                ref.info);
      rl_avbd_ref_free(&ref);
      st = RL_EXIT_BADINPUT;
      break;
    }
    /* not applicable (no rows): the reference leaves out limits, dry friction, servos and contacts (loaded ones
       are counted in ref.omitted, own ground contacts show in the step's stat.ncon) */
    int applicable = ref.omitted == 0;
    for (int it = 1; it <= niter && applicable && !st; it++) {
      double *row = rows + (size_t)AVBD_CONV_NCOL * (size_t)it;
      row[0] = s;
      row[1] = (double)((long long)(s + 1) * stride);
      if (avbd_conv_iterate(am, p.m, d, &ref, traj->time, it, row)) {
        rl_errorf("study: %s: state %d: the AVBD step is not finite after %d sweeps", a->c.model, s, it);
        st = RL_EXIT_BADINPUT;
      }
      applicable = am->stat.ncon == 0; /* contacts made in the step are not in the reference */
    }
    /* the same step under the point's own stopping test: flagged converged, and farther from the dense solution
       than the distance the test claims (am->stat.tol_lin m, tol_ang rad): a false stop.  The dense problem of
       this step is set up at its start (rl_avbd_ref_begin) and solved after it (rl_avbd_ref_finish: from the
       active set of AVBD's final iterate to the step's complementarity conditions, or given that active set and
       its slipping forces where the second phase does not converge), so states with contacts and limits count
       too; a state whose step has terms the reference does not rebuild (ref2.omitted) is left out. */
    int flagged = 0, false_stop = 0, stop_ok = 0, ref_bad = 0;
    double dx = NAN, dth = NAN;
    if (!st) {
      rl_avbd_ref ref2;
      avbd_conv_start(am, p.m, d, traj->time);
      am->prm = prm0;
      if (rl_avbd_ref_begin(&ref2, am, p.m, d) == 0 && rl_avbd_step_maximal(am, p.m, d) == RL_OK &&
          rl_avbd_ref_finish(&ref2, am, p.m, d) == 0 && ref2.omitted == 0) {
        stop_ok = 1;
        ref_bad = !ref2.converged; /* left out of the fraction, counted */
        if (am->stat.converged && !ref_bad) {
          rl_avbd_ref_distance(&ref2, am, &dx, &dth);
          flagged = 1;
          false_stop = dx > (double)am->stat.tol_lin || dth > (double)am->stat.tol_ang;
        }
      }
      rl_avbd_ref_free(&ref2);
      applicable = applicable && am->stat.ncon == 0;
    }
    for (int it = 1; it <= niter && applicable && !st; it++) {
      double *row = rows + (size_t)AVBD_CONV_NCOL * (size_t)it;
      row[10] = flagged;
      row[11] = false_stop;
      row[12] = ref_bad;
      for (int c = 0; c < AVBD_CONV_NCOL; c++)
        if (c < 3 || c >= 9) rl_csv_int(w, (long long)row[c]);
        else rl_csv_num(w, row[c]);
      rl_csv_end_row(w);
    }
    /* a state without per-sweep rows (its step has contacts, limits, dry friction): one row with iter = 0 that
       carries the stopping test's verdict and the stop's distance to the dense solution */
    if (!applicable && stop_ok && !st) {
      double row[AVBD_CONV_NCOL] = {s, (double)((long long)(s + 1) * stride), 0, dx, dth, NAN, NAN, NAN, NAN,
                                    am->stat.iterations, flagged, false_stop, ref_bad};
      for (int c = 0; c < AVBD_CONV_NCOL; c++)
        if (c < 3 || c >= 9) rl_csv_int(w, (long long)row[c]);
        else rl_csv_num(w, row[c]);
      rl_csv_end_row(w);
    }
    rl_avbd_ref_free(&ref);
  }
  free(rows);
  rl_data_free(d);
  mj_deleteData(traj);
  rl_avbd_free(am);
  rl_pair_free(&p);
  return st;
}

/* kind = convergence, engine = avbd (study_kinds.h): AVBD along its own trajectory, judged step by step */
int study_own_stops_avbd(const rl_sim_args *a, long nsteps) {
  rl_pair p;
  rl_avbd *am;
  int st = load_avbd(&p, a, &am);
  if (st) return st;
  /* the start of MuJoCo's trajectory in the states' half of the study (mj_resetData: qpos0, at rest) */
  mjData *start = mj_makeData(p.mjm);
  rl_data *d = rl_pair_data(&p);
  rl_set_state(&p, d, NULL, start->qpos, start->qvel, start->ctrl);
  d->time = 0;
  rl_avbd_from_generalized(am, p.m, d);
  rl_csv *w = a->c.out;
  const char *cols[] = {"step",   "sweeps",   "converged", "checked", "basis", "omitted",    "ref_unconverged",
                        "dist_m", "dist_rad", "claim_m",   "claim_rad", "ratio", "stop_false", "nonfinite"};
  enum { NC = sizeof cols / sizeof cols[0] };
  for (int c = 0; c < NC; c++) rl_csv_str(w, cols[c]);
  rl_csv_end_row(w);
  for (long k = 0; k < nsteps; k++) {
    /* a non-finite step is undone by the step (as in `sim`): its row says so, the trajectory goes on */
    rl_avbd_step_judgement j;
    rl_avbd_step_judged(am, p.m, d, &j);
    const rl_avbd_stat *sa = &am->stat;
    double row[NC] = {(double)(k + 1), sa->iterations, sa->converged, j.checked, j.basis,
                      !j.nonfinite && (!j.solved || j.omitted), j.ref_unconverged, j.dx, j.dth, (double)sa->tol_lin,
                      (double)sa->tol_ang, j.ratio, j.stop_false, j.nonfinite};
    for (int c = 0; c < NC; c++)
      if (c < 7 || c >= NC - 2) rl_csv_int(w, (long long)row[c]);
      else rl_csv_num(w, row[c]);
    rl_csv_end_row(w);
  }
  rl_data_free(d);
  mj_deleteData(start);
  rl_avbd_free(am);
  rl_pair_free(&p);
  return st;
}
