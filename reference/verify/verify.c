/* verify.c — `rigidlab verify`: every smooth-dynamics stage of rigidlab against MuJoCo 2.2.2 on
 * the same model and the same states.
 *
 * Per quantity and state: abs = ‖ours − mujoco‖∞, rel = abs / max(‖mujoco‖∞, tiny) with tiny a tenth
 * of the quantity's largest ‖mujoco‖∞ over the states (see finish()); the table reports the maximum of
 * each over all states.  Inputs are rounded to the working precision
 * before MuJoCo sees them, so f32 rows measure float arithmetic, not input rounding. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "csv.h"
#include "pair.h"
#include "quantities.h"
#include "states.h"
#include "tolerances.h"
#include "lapack_ref.h"
#include "float_floor.h"

/* qacc_smooth_cond: the first-order bound of a backward-stable solve, rel ≲ c·κ₁(M)·ε with c a few units (measured
   0.003–0.44 on MuJoCo's samples, up to 3.3 on well-conditioned test models where one ulp of the largest
   component is the whole error), f64 and f32 */
#define RL_COND_TOL 10
#include "verify.h"

#define rl_cmd_verify RL_NAME(cmd_verify)

typedef rl_vq quantity;

void rl_vq_record(rl_vq *q, double err, double mag) {
  q->err[q->n] = err;
  q->mag[q->n] = mag;
  q->n++;
  if (!(err <= q->max_abs)) q->max_abs = err; /* NaN propagates */
  if (mag > q->scale) q->scale = mag;
}

void rl_vq_mj_collision_on(const mjModel *mjm, mjData *dst, const double *qpos, const rl_data *d) {
  mju_copy(dst->qpos, qpos, mjm->nq);
  mj_kinematics(mjm, dst);
  for (long i = 0; i < 3L * mjm->nbody; i++) dst->xpos[i] = (double)d->xpos[i];
  for (long i = 0; i < 4L * mjm->nbody; i++) dst->xquat[i] = (double)d->xquat[i];
  for (long i = 0; i < 9L * mjm->nbody; i++) dst->xmat[i] = (double)d->xmat[i];
  for (long i = 0; i < 3L * mjm->ngeom; i++) dst->geom_xpos[i] = (double)d->geom_xpos[i];
  for (long i = 0; i < 9L * mjm->ngeom; i++) dst->geom_xmat[i] = (double)d->geom_xmat[i];
  mj_collision(mjm, dst);
}

void rl_vq_copy_contact(rl_contact *dst, const mjContact *src) {
  dst->dist = (real)src->dist;
  for (int k = 0; k < 3; k++) dst->pos[k] = (real)src->pos[k];
  for (int k = 0; k < 9; k++) dst->frame[k] = (real)src->frame[k];
  dst->includemargin = (real)src->includemargin;
  for (int k = 0; k < 5; k++) dst->friction[k] = (real)src->friction[k];
  for (int k = 0; k < mjNREF; k++) dst->solref[k] = (real)src->solref[k];
  for (int k = 0; k < mjNIMP; k++) dst->solimp[k] = (real)src->solimp[k];
  dst->mu = (real)src->friction[0];
  dst->dim = src->dim;
  dst->geom1 = src->geom1;
  dst->geom2 = src->geom2;
  dst->exclude = src->exclude;
  dst->efc_address = -1;
}

int rl_vq_contacts_for_actuation(const rl_model *m, rl_data *d, const mjData *mjd) {
  int any = 0;
  for (int u = 0; u < m->nu; u++) any |= m->actuator_trntype[u] == RL_TRN_BODY;
  if (!any) return 0;
  int ncon = mjd->ncon < m->nconmax ? mjd->ncon : m->nconmax;
  for (int i = 0; i < ncon; i++) rl_vq_copy_contact(d->contact + i, mjd->contact + i);
  d->ncon = ncon;
  return 1;
}

/* Per state: err = ‖ours − mujoco‖∞, mag = ‖mujoco‖∞, recorded for the reduction in finish(). */
void rl_vq_compare(rl_vq *q, const real *ours, const double *ref, long n) {
  double err = 0, mag = 0;
  for (long i = 0; i < n; i++) {
    double e = fabs((double)ours[i] - ref[i]);
    if (!(e <= err)) err = e; /* NaN propagates */
    if (fabs(ref[i]) > mag) mag = fabs(ref[i]);
  }
  rl_vq_record(q, err, mag);
}
#define compare rl_vq_compare

/* the stage modules after the smooth stages, in pipeline order (tendon rows after the smooth table) */
static const rl_vmodule *const modules[] = {&rl_vmod_tendon, &rl_vmod_collision, &rl_vmod_constraint, &rl_vmod_solve,
                                            &rl_vmod_step};
#define NMOD ((int)(sizeof modules / sizeof modules[0]))

/* max_rel = max over states of err / max(mag, tiny), tiny = RL_VERIFY_FLOOR · max over states of mag
   (and ≥ DBL_MIN): a state where the quantity nearly vanishes (a pendulum's gravity torque at the bottom)
   is judged against a tenth of the quantity's scale, not against zero, where any rounding is infinite
   relative error. */
#define RL_VERIFY_FLOOR 0.1
static void finish(quantity *q) {
  if (q->last) { /* a running value recorded per state: the final one is the result */
    q->max_abs = q->max_rel = q->n ? q->err[q->n - 1] : 0;
    return;
  }
  if (q->absolute) { /* a count: the relative column repeats it */
    q->max_rel = q->max_abs;
    return;
  }
  double tiny = RL_VERIFY_FLOOR * q->scale;
  if (!(tiny > DBL_MIN)) tiny = DBL_MIN;
  for (int s = 0; s < q->n; s++) {
    double rel = q->err[s] / (q->mag[s] > tiny ? q->mag[s] : tiny);
    if (!(rel <= q->max_rel)) q->max_rel = rel;
  }
}

enum {
  Q_XPOS,
  Q_XQUAT,
  Q_XMAT,
  Q_XIPOS,
  Q_XIMAT,
  Q_XANCHOR,
  Q_XAXIS,
  Q_GEOM_XPOS,
  Q_GEOM_XMAT,
  Q_SUBTREE_COM,
  Q_CINERT,
  Q_CDOF,
  Q_M,
  Q_CVEL,
  Q_CDOF_DOT,
  Q_QFRC_BIAS,
  Q_QFRC_BIAS_FLOOR,
  Q_QFRC_BIAS_FLOOR_RATIO,
  Q_QFRC_PASSIVE,
  Q_QFRC_PASSIVE_FLOOR,
  Q_QFRC_PASSIVE_FLOOR_RATIO,
  Q_ACT_LENGTH,
  Q_ACT_VELOCITY,
  Q_ACT_FORCE,
  Q_QFRC_ACTUATOR,
  Q_QFRC_SMOOTH,
  Q_QFRC_SMOOTH_FLOOR,
  Q_QFRC_SMOOTH_FLOOR_RATIO,
  Q_QACC_SMOOTH,
  Q_QACC_SMOOTH_DPOSV,
  Q_QACC_SMOOTH_COND,
  Q_QACC_SMOOTH_FLOOR,
  Q_QACC_SMOOTH_FLOOR_RATIO,
  Q_STEP_QPOS,
  Q_STEP_QPOS_FLOOR,
  Q_STEP_QPOS_FLOOR_RATIO,
  Q_STEP_QVEL,
  Q_STEP_QVEL_FLOOR,
  Q_STEP_QVEL_FLOOR_RATIO,
  Q_ACT_DOT,
  Q_STEP_ACT,
  Q_QDERIV,
  NQ
};

/* the smooth rows: each compares one field of the data registry (engine/rl_data.h) and is named after it
   (FIELD fails to compile for a name the registry lacks); M compares the registry's qM, made dense */
#define FIELD(f) (#f + 0 * sizeof(((rl_data *)0)->f))
static quantity table_init[NQ] = {
    {.stage = RL_STAGE_KINEMATICS, .name = FIELD(xpos)},
    {.stage = RL_STAGE_KINEMATICS, .name = FIELD(xquat)},
    {.stage = RL_STAGE_KINEMATICS, .name = FIELD(xmat)},
    {.stage = RL_STAGE_KINEMATICS, .name = FIELD(xipos)},
    {.stage = RL_STAGE_KINEMATICS, .name = FIELD(ximat)},
    {.stage = RL_STAGE_KINEMATICS, .name = FIELD(xanchor)},
    {.stage = RL_STAGE_KINEMATICS, .name = FIELD(xaxis)},
    {.stage = RL_STAGE_KINEMATICS, .name = FIELD(geom_xpos)},
    {.stage = RL_STAGE_KINEMATICS, .name = FIELD(geom_xmat)},
    {.stage = RL_STAGE_COM, .name = FIELD(subtree_com)},
    {.stage = RL_STAGE_COM, .name = FIELD(cinert)},
    {.stage = RL_STAGE_COM, .name = FIELD(cdof)},
    {.stage = RL_STAGE_INERTIA, .name = "M"},
    {.stage = RL_STAGE_BIAS, .name = FIELD(cvel)},
    {.stage = RL_STAGE_BIAS, .name = FIELD(cdof_dot)},
    {.stage = RL_STAGE_BIAS, .name = FIELD(qfrc_bias)},
    {.stage = RL_STAGE_BIAS, .name = "qfrc_bias_floor"},
    {.stage = RL_STAGE_BIAS, .name = "qfrc_bias_floor_ratio"},
    {.stage = RL_STAGE_PASSIVE, .name = FIELD(qfrc_passive)},
    {.stage = RL_STAGE_PASSIVE, .name = "qfrc_passive_floor"},
    {.stage = RL_STAGE_PASSIVE, .name = "qfrc_passive_floor_ratio"},
    {.stage = RL_STAGE_ACTUATION, .name = FIELD(actuator_length)},
    {.stage = RL_STAGE_ACTUATION, .name = FIELD(actuator_velocity)},
    {.stage = RL_STAGE_ACTUATION, .name = FIELD(actuator_force)},
    {.stage = RL_STAGE_ACTUATION, .name = FIELD(qfrc_actuator)},
    {.stage = RL_STAGE_SMOOTH, .name = FIELD(qfrc_smooth)},
    {.stage = RL_STAGE_SMOOTH, .name = "qfrc_smooth_floor"},
    {.stage = RL_STAGE_SMOOTH, .name = "qfrc_smooth_floor_ratio"},
    {.stage = RL_STAGE_SMOOTH, .name = FIELD(qacc_smooth)},
    {.stage = RL_STAGE_SMOOTH, .name = "qacc_smooth_dposv"},
    {.stage = RL_STAGE_SMOOTH, .name = "qacc_smooth_cond", .tol = RL_COND_TOL},
    {.stage = RL_STAGE_SMOOTH, .name = "qacc_smooth_floor"},
    {.stage = RL_STAGE_SMOOTH, .name = "qacc_smooth_floor_ratio"},
    {.stage = RL_STAGE_INTEGRATE, .name = FIELD(qpos)},
    {.stage = RL_STAGE_INTEGRATE, .name = "qpos_floor"},
    {.stage = RL_STAGE_INTEGRATE, .name = "qpos_floor_ratio"},
    {.stage = RL_STAGE_INTEGRATE, .name = FIELD(qvel)},
    {.stage = RL_STAGE_INTEGRATE, .name = "qvel_floor"},
    {.stage = RL_STAGE_INTEGRATE, .name = "qvel_floor_ratio"},
    {.stage = RL_STAGE_ACTUATION, .name = FIELD(act_dot)},
    {.stage = RL_STAGE_INTEGRATE, .name = FIELD(act)},
    {.stage = RL_STAGE_INTEGRATE, .name = "qDeriv"},
};
#undef FIELD

/* The solve of the unconstrained acceleration against an independent solve of the same inputs: x =
   M⁻¹·qfrc_smooth by LAPACK's banded Cholesky in double on our M (its dense form, the band M's tree profile
   leaves) and our qfrc_smooth (row qacc_smooth_dposv), and κ₁(M) from LAPACKE_dpbcon (rl_ref_spd_solve).  A backward-stable solve in working precision has forward error ≲ c·κ₁(M)·ε, so
   rel(ours, x)/(κ₁·ε) (row qacc_smooth_cond) is the implementation's figure with the problem's conditioning
   divided out (the inputs M and qfrc_smooth are checked against MuJoCo by their own rows).  The largest κ₁
   seen is kept for the tolerance of the rows through M⁻¹ (cond_max). */
static double cond_max;
static void smooth_acc_conditioning(const rl_model *m, const rl_data *d, const real *dense, quantity *q) {
  int nv = m->nv;
  size_t n1 = (size_t)(nv > 0 ? nv : 1);
  double *b = malloc(sizeof *b * n1), *x = malloc(sizeof *x * n1);
  double kappa = INFINITY;
  if (b && x) {
    for (int i = 0; i < nv; i++) b[i] = (double)d->qfrc_smooth[i];
    kappa = rl_ref_spd_solve(dense, b, nv, x);
  }
  if (!isfinite(kappa)) { /* M not positive definite in LAPACK's factorization (or no memory): both rows fail */
    rl_vq_record(&q[Q_QACC_SMOOTH_DPOSV], NAN, 1);
    rl_vq_record(&q[Q_QACC_SMOOTH_COND], NAN, 1);
  } else {
    compare(&q[Q_QACC_SMOOTH_DPOSV], d->qacc_smooth, x, nv);
    double err = 0, mag = 0;
    for (int i = 0; i < nv; i++) {
      double e = fabs((double)d->qacc_smooth[i] - x[i]);
      if (!(e <= err)) err = e;
      if (fabs(x[i]) > mag) mag = fabs(x[i]);
    }
    rl_vq_record(&q[Q_QACC_SMOOTH_COND], (mag > 0 ? err / mag : err) / (kappa * (double)RL_EPS), 1);
    if (kappa > cond_max) cond_max = kappa;
  }
  free(b);
  free(x);
}

/* The float floors of the f32 smooth rows that float itself holds above the tolerance (float_floor.h; absent in f64,
   where rounding to the working precision changes nothing).  From MuJoCo's own quantities at the state — computed in
   double on the float-rounded model and state, the very reference the f32 rows are compared with:
     qacc_smooth_floor   fl( fl(M)⁻¹·fl(qfrc_smooth) ), LAPACKE_dposv in double (rl_ff_solve): M and the forces held
                         in float and solved exactly, or that solve of the float-storage pipeline's M and forces
                         where it is farther (qacc_smooth_floor);
     qvel_floor          fl( qvel + h·fl(M + h·diag(b))⁻¹·fl(qfrc_smooth) ), b the dof damping (mj_Euler's implicit
                         damping), against MuJoCo's constraint-free step;
     qpos_floor          fl( qpos ⊕ h·v_F ) (mj_integratePos with the floor velocity v_F − its start qvel... the
                         step's new velocity), against the same step;
     qfrc_bias_floor, qfrc_passive_floor, qfrc_smooth_floor   MuJoCo's pipeline with float storage (rl_ff_forward: body frames rounded
                         as they are composed down the tree).
   Euler only for the step rows: RK4 and implicit have no floor here, and their floor rows are absent (the rows keep
   the tolerance).  ff: rl_ff_forward's scratch. */
static mjData *ff;

/* qacc_smooth's floor into xr: of fl(M)⁻¹·fl(qfrc_smooth) (MuJoCo's M and forces at the state, held in float) and
   the same solve of the float-storage pipeline's M and forces (ff after rl_ff_forward: M from its rounded cinert
   and cdof, mj_crb), the one farther from MuJoCo's q̈.  A float engine stores the frames, cinert and cdof its
   forces and M are made of, so it cannot do better than that pipeline: on dm_control's fish, whose fins' tiny
   inertias make q̈ 3e4 rad/s², the pipeline's floor is 4.4e-6 where the M floor is 1.1e-7 (10 states, seed 1).
   M and x: nv² and nv doubles of scratch. */
static void qacc_smooth_floor(const mjModel *mjm, const mjData *mjd, double *M, double *x, real *xr) {
  int nv = mjm->nv;
  double e1 = 0, e2 = 0;
  mj_fullM(mjm, M, mjd->qM);
  rl_ff_solve(M, mjd->qfrc_smooth, nv, x);
  for (int i = 0; i < nv; i++) {
    xr[i] = (real)x[i];
    e1 = fmax(e1, fabs(x[i] - mjd->qacc_smooth[i]));
  }
  if (nv > 0 && isnan(x[0])) return; /* LAPACK refused fl(M): the floor is not measured (NaN), as before */
  mj_crb(mjm, ff);
  mj_fullM(mjm, M, ff->qM);
  rl_ff_solve(M, ff->qfrc_smooth, nv, x);
  for (int i = 0; i < nv; i++) e2 = fmax(e2, fabs(x[i] - mjd->qacc_smooth[i]));
  if (e2 > e1)
    for (int i = 0; i < nv; i++) xr[i] = (real)x[i];
}

static void smooth_float_floor(const mjModel *mjm, const mjData *mjd, const mjData *mjstep, quantity *q) {
  int nv = mjm->nv;
  if (!RL_IS_F32 || nv < 1) return;
  if (!ff) ff = mj_makeData(mjm); /* on first use; freed by rl_cmd_verify */
  if (!ff) {
    rl_vq_record(&q[Q_QACC_SMOOTH_FLOOR], NAN, 1);
    return;
  }
  double *M = malloc(sizeof *M * (size_t)nv * (size_t)nv), *x = malloc(sizeof *x * (size_t)nv);
  double *qp = malloc(sizeof *qp * (size_t)(mjm->nq + 1));
  real *xr = malloc(sizeof *xr * (size_t)(nv > mjm->nq ? nv : mjm->nq));
  if (!M || !x || !qp || !xr) {
    rl_vq_record(&q[Q_QACC_SMOOTH_FLOOR], NAN, 1);
    goto out;
  }
  rl_ff_forward(mjm, mjd, ff);
  qacc_smooth_floor(mjm, mjd, M, x, xr);
  compare(&q[Q_QACC_SMOOTH_FLOOR], xr, mjd->qacc_smooth, nv);
  if (mjm->opt.integrator == mjINT_EULER) {
    double h = mjm->opt.timestep;
    mj_fullM(mjm, M, mjd->qM);
    for (int i = 0; i < nv; i++) M[(size_t)i * (size_t)nv + (size_t)i] += h * mjm->dof_damping[i];
    rl_ff_solve(M, mjd->qfrc_smooth, nv, x);
    for (int i = 0; i < nv; i++) x[i] = (double)(float)(mjd->qvel[i] + h * x[i]);
    for (int i = 0; i < nv; i++) xr[i] = (real)x[i];
    compare(&q[Q_STEP_QVEL_FLOOR], xr, mjstep->qvel, nv);
    mju_copy(qp, mjd->qpos, mjm->nq);
    mj_integratePos(mjm, qp, x, h);
    mj_normalizeQuat(mjm, qp);
    for (int i = 0; i < mjm->nq; i++) xr[i] = (real)qp[i];
    compare(&q[Q_STEP_QPOS_FLOOR], xr, mjstep->qpos, mjm->nq);
  }
  for (int i = 0; i < nv; i++) xr[i] = (real)ff->qfrc_bias[i];
  compare(&q[Q_QFRC_BIAS_FLOOR], xr, mjd->qfrc_bias, nv);
  for (int i = 0; i < nv; i++) xr[i] = (real)ff->qfrc_passive[i];
  compare(&q[Q_QFRC_PASSIVE_FLOOR], xr, mjd->qfrc_passive, nv);
  for (int i = 0; i < nv; i++) xr[i] = (real)ff->qfrc_smooth[i];
  compare(&q[Q_QFRC_SMOOTH_FLOOR], xr, mjd->qfrc_smooth, nv);
out:
  free(M);
  free(x);
  free(qp);
  free(xr);
}

/* After the reduction over the states, for every row X with a row X_floor (any stage: verify_tendon.c has them
   too) and X_floor_ratio: the f32 row X is held to max(tolerance, k·F), F its floor row's max_rel_err (the same
   measure over the same states, k = RL_FLOOR_K); the ratio row is X's max_rel_err over max(F, tolerance/k), so it is
   ≤ k exactly when X passes (ours/F where the floor decides, k·ours/tolerance where the plain tolerance does).  The
   floor row itself is held to the same bound: it passes when the floor was measured at every state (a NaN — LAPACK
   refusing fl(M) — fails it).  A floor row with no state recorded (f64, another integrator, no tendons) makes both
   absent. */
static int row_named(const quantity *q, int nrow, const char *name, size_t len) {
  for (int k = 0; k < nrow; k++)
    if (strlen(q[k].name) == len && !strncmp(q[k].name, name, len)) return k;
  return -1;
}
static void float_floor_judge(quantity *q, int nrow) {
  for (int f = 0; f < nrow; f++) {
    const char *name = q[f].name, *tail = "_floor";
    size_t len = strlen(name), tl = strlen(tail);
    if (len <= tl || strcmp(name + len - tl, tail)) continue;
    char rname[96];
    snprintf(rname, sizeof rname, "%s_ratio", name);
    int row = row_named(q, nrow, name, len - tl), ratio = row_named(q, nrow, rname, strlen(rname));
    if (row < 0 || ratio < 0) continue;
    if (!RL_IS_F32 || q[f].n == 0) {
      q[f].absent = q[ratio].absent = 1;
      continue;
    }
    double base = rl_verify_tolerance(q[row].stage, 1) / rl_verify_tolerance_scale(), F = q[f].max_rel;
    if (q[row].tol > 0) base = fmax(base, q[row].tol); /* a row's own tolerance, where it has one */
    double eff = isnan(F) ? NAN : fmax(F, base / RL_FLOOR_K);
    q[row].tol = q[f].tol = RL_FLOOR_K * eff;
    q[ratio].tol = RL_FLOOR_K;
    q[ratio].max_abs = q[ratio].max_rel = q[row].max_rel / eff;
  }
}

/* The tolerance of the rows that pass through M⁻¹, from κ₁max, the largest κ₁(M) over the states:
   - qacc_smooth_dposv (our solve against dposv on the same inputs) in both precisions: max(stage, κ₁max·ε), the
     first-order bound of a backward-stable solve (a float M with κ₁ = 1e4 cannot be solved closer than 1e-3);
   - f64 qacc_smooth and the one-step qvel (qvel + h·M⁻¹f, implicit damping) against MuJoCo: max(1e-12,
     κ₁max·ε).  1e-12 is a rounding-level claim only while κ₁(M)·ε is below it (κ₁ < 4500); MuJoCo's composite
     samples reach κ₁ ≈ 5e6, where no backward-stable solve, MuJoCo's included, is closer than ~κ₁·ε to the
     exact answer.  f32 keeps its measured 1e-5 against MuJoCo (tests/test_floor.c measures the float floor);
   - f64's one-step qpos = qpos ⊕ h·qvel' inherits h times qvel's error: relative to ‖qpos‖ at each state s, the
     bound times h·‖qvel'_s‖/‖qpos_s‖ (MuJoCo's flag sample, κ₁ ≈ 3e6: qpos 1.008e-12, which is h times qvel's
     1.26e-11 at ‖qvel'‖/‖qpos‖ = 40).
   qacc_smooth_cond (≤ 10 per state) keeps the claim per state, with each state's own conditioning. */
static void smooth_acc_tolerance(quantity *q, double h) {
  double bound = cond_max * (double)RL_EPS, base = rl_verify_tolerance(RL_STAGE_SMOOTH, RL_IS_F32) / rl_verify_tolerance_scale();
  if (!(bound > base)) return;
  q[Q_QACC_SMOOTH_DPOSV].tol = bound;
  if (RL_IS_F32) return;
  q[Q_QACC_SMOOTH].tol = q[Q_STEP_QVEL].tol = bound;
  const quantity *v = &q[Q_STEP_QVEL];
  quantity *x = &q[Q_STEP_QPOS];
  double ratio = 0, base_x = x->tol > 0 ? x->tol : rl_verify_tolerance(x->stage, 0);
  for (int k = 0; k < x->n && k < v->n; k++)
    if (x->mag[k] > 0) ratio = fmax(ratio, v->mag[k] / x->mag[k]);
  if (bound * h * ratio > base_x) x->tol = bound * h * ratio;
}

/* Compare one state, stage by stage. mjd holds mj_forward at the state; mjd2 (constraint-free model)
   is used for the one-step integrate comparison. */
static void compare_state(const rl_pair *p, const mjModel *mjfree, rl_data *d, mjData *mjd, mjData *mjd2,
                          const double *qpos, const double *qvel, const double *ctrl, quantity *q, real *dense,
                          double *mjdense) {
  const rl_model *m = p->m;
  const mjModel *mjm = p->mjm;
  rl_set_state(p, d, mjd, qpos, qvel, ctrl);
  mj_forward(mjm, mjd);
  rl_forward_smooth(m, d);
  /* a body transmission reads this pass's contacts, which mj_forward has: the actuation and the smooth
     acceleration again on MuJoCo's contact list (the collision stage checks the list itself) */
  if (rl_vq_contacts_for_actuation(m, d, mjd)) {
    rl_actuation(m, d);
    rl_smooth_acc(m, d);
  }
  compare(&q[Q_XPOS], d->xpos, mjd->xpos, 3L * m->nbody);
  compare(&q[Q_XQUAT], d->xquat, mjd->xquat, 4L * m->nbody);
  compare(&q[Q_XMAT], d->xmat, mjd->xmat, 9L * m->nbody);
  compare(&q[Q_XIPOS], d->xipos, mjd->xipos, 3L * m->nbody);
  compare(&q[Q_XIMAT], d->ximat, mjd->ximat, 9L * m->nbody);
  compare(&q[Q_XANCHOR], d->xanchor, mjd->xanchor, 3L * m->njnt);
  compare(&q[Q_XAXIS], d->xaxis, mjd->xaxis, 3L * m->njnt);
  compare(&q[Q_GEOM_XPOS], d->geom_xpos, mjd->geom_xpos, 3L * m->ngeom);
  compare(&q[Q_GEOM_XMAT], d->geom_xmat, mjd->geom_xmat, 9L * m->ngeom);
  compare(&q[Q_SUBTREE_COM], d->subtree_com, mjd->subtree_com, 3L * m->nbody);
  compare(&q[Q_CINERT], d->cinert, mjd->cinert, 10L * m->nbody);
  compare(&q[Q_CDOF], d->cdof, mjd->cdof, 6L * m->nv);
  rl_full_m(m, d, dense);
  mj_fullM(mjm, mjdense, mjd->qM);
  compare(&q[Q_M], dense, mjdense, (long)m->nv * m->nv);
  compare(&q[Q_CVEL], d->cvel, mjd->cvel, 6L * m->nbody);
  compare(&q[Q_CDOF_DOT], d->cdof_dot, mjd->cdof_dot, 6L * m->nv);
  compare(&q[Q_QFRC_BIAS], d->qfrc_bias, mjd->qfrc_bias, m->nv);
  compare(&q[Q_QFRC_PASSIVE], d->qfrc_passive, mjd->qfrc_passive, m->nv);
  compare(&q[Q_ACT_LENGTH], d->actuator_length, mjd->actuator_length, m->nu);
  compare(&q[Q_ACT_VELOCITY], d->actuator_velocity, mjd->actuator_velocity, m->nu);
  compare(&q[Q_ACT_FORCE], d->actuator_force, mjd->actuator_force, m->nu);
  compare(&q[Q_QFRC_ACTUATOR], d->qfrc_actuator, mjd->qfrc_actuator, m->nv);
  compare(&q[Q_ACT_DOT], d->act_dot, mjd->act_dot, m->na);
  compare(&q[Q_QFRC_SMOOTH], d->qfrc_smooth, mjd->qfrc_smooth, m->nv);
  compare(&q[Q_QACC_SMOOTH], d->qacc_smooth, mjd->qacc_smooth, m->nv);
  smooth_acc_conditioning(m, d, dense, q);
  /* the implicit integrator's derivative at this state: ours from the forward pass above, MuJoCo's the
     qDeriv its step computes (sparse, rows D_rowadr / D_colind) */
  int implicit = m->opt.integrator == RL_INT_IMPLICIT;
  if (implicit && rl_qderiv(m, d, dense)) memset(dense, 0xff, sizeof(real) * (size_t)m->nv * m->nv); /* NaN: fails */
  /* one whole step of the constraint-free dynamics with the model's integrator */
  rl_set_state(p, d, mjd2, qpos, qvel, ctrl);
  mj_step(mjfree, mjd2);
  rl_step_smooth(m, d);
  compare(&q[Q_STEP_QPOS], d->qpos, mjd2->qpos, m->nq);
  compare(&q[Q_STEP_QVEL], d->qvel, mjd2->qvel, m->nv);
  compare(&q[Q_STEP_ACT], d->act, mjd2->act, m->na);
  smooth_float_floor(mjm, mjd, mjd2, q);
  if (implicit) {
    memset(mjdense, 0, sizeof(double) * (size_t)m->nv * m->nv);
    for (int i = 0; i < m->nv; i++)
      for (int k = 0; k < mjd2->D_rownnz[i]; k++) {
        int a = mjd2->D_rowadr[i] + k;
        mjdense[(size_t)i * m->nv + mjd2->D_colind[a]] = mjd2->qDeriv[a];
      }
    /* judged against the larger of ‖D‖∞ and ‖M‖∞/h: the step factors M − h·D, so that is the scale an
       error in D is read at (an isotropic free body's D vanishes in exact arithmetic and MuJoCo's is
       rounding, 1e-19) */
    double err = 0, mag = 0, mmax = 0;
    long nn = (long)m->nv * m->nv;
    for (long i = 0; i < nn; i++) {
      double e = fabs((double)dense[i] - mjdense[i]);
      if (!(e <= err)) err = e;
      if (fabs(mjdense[i]) > mag) mag = fabs(mjdense[i]);
    }
    for (int i = 0; i < m->nv; i++) mmax = fmax(mmax, fabs(mjd->qM[mjm->dof_Madr[i]]));
    rl_vq_record(&q[Q_QDERIV], err, fmax(mag, mmax / mjm->opt.timestep));
  }
}

static const char *model_label(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

mjData *rl_vq_scratch(rl_vscratch *s, int k) {
  if (k < 0 || k >= RL_VSCRATCH) return NULL;
  if (!s->d[k]) s->d[k] = mj_makeData(s->mjm);
  return s->d[k];
}

static void scratch_free(rl_vscratch *s) {
  for (int k = 0; k < RL_VSCRATCH; k++)
    if (s->d[k]) mj_deleteData(s->d[k]);
  memset(s, 0, sizeof *s);
}

/* the most contacts MuJoCo's mj_collision (kinematics at each state's qpos and mocap poses) finds over the states
   S on model PM and its data PD; *full ← 1 when a state fills PM's contact buffer (the count is then a floor) */
static int most_contacts_on(const mjModel *pm, mjData *pd, const rl_states *S, int *full) {
  int most = 0;
  *full = 0;
  for (int s = 0; s < S->n && !*full; s++) {
    mju_copy(pd->qpos, S->qpos + (size_t)s * S->nq, pm->nq);
    mju_copy(pd->mocap_pos, S->mocap_pos + (size_t)s * 3 * S->nmocap, 3 * pm->nmocap);
    mju_copy(pd->mocap_quat, S->mocap_quat + (size_t)s * 4 * S->nmocap, 4 * pm->nmocap);
    mj_kinematics(pm, pd);
    mj_collision(pm, pd);
    if (pd->ncon > most) most = pd->ncon;
    *full = pd->ncon >= pm->nconmax;
  }
  return most;
}

/* the most contacts MuJoCo's mj_collision finds over the states S: on the model's own buffer (SCRATCH, data of
   mjm) when no state fills it, else on a copy of the model with a contact buffer large enough (doubled until no
   state fills it) */
static int mj_most_contacts(const mjModel *mjm, mjData *scratch, const rl_states *S) {
  int full, most = scratch ? most_contacts_on(mjm, scratch, S, &full) : 0;
  if (scratch && !full) return most;
  int cap = mjm->nconmax > 1000 ? 4 * mjm->nconmax : 4000;
  for (;;) {
    mjModel *pm = mj_copyModel(NULL, mjm);
    if (!pm) return 0;
    pm->nconmax = cap;
    mjData *pd = mj_makeData(pm);
    if (!pd) {
      mj_deleteModel(pm);
      return 0;
    }
    most = most_contacts_on(pm, pd, S, &full);
    mj_deleteData(pd);
    mj_deleteModel(pm);
    if (!full || cap > (1 << 22)) return most;
    cap *= 2;
  }
}

int rl_cmd_verify(const rl_verify_args *a) {
  char err[1024];
  rl_pair p;
  rl_csv *w = a->c.out;
  rl_states S = {0};
  /* MuJoCo's buffers sized so that MuJoCo itself never overflows on the drawn states (a state it overflows on
     has no reference): draw, probe the most contacts MuJoCo's collision finds, and when that is more than the
     model's nconmax reload with nconmax = most + most/4 + 16 (njmax and nstack follow, see
     rl_pair_load_capacity) and draw again, since the trajectory half of the states moves with the capacity */
  int model_nconmax = 0, model_njmax = 0, cap = 0, most = 0;
  rl_vscratch pool = {0};
  for (int pass = 0;; pass++) {
    int st = rl_pair_load_capacity(&p, &a->c, 0, cap, err, sizeof err);
    if (st) {
      rl_errorf("%s", err);
      return st;
    }
    if (pass == 0) {
      model_nconmax = p.mjm->nconmax;
      model_njmax = p.mjm->njmax;
    }
    pool.mjm = p.mjm;
    if (a->states < 1 || rl_states_draw_on(p.mjm, rl_vq_scratch(&pool, 0), a->states, a->seed, &S)) {
      rl_errorf("%s: cannot draw %d verify states (out of memory)", a->c.model, a->states);
      rl_states_free(&S);
      scratch_free(&pool);
      rl_pair_free(&p);
      return RL_EXIT_BADINPUT;
    }
    most = mj_most_contacts(p.mjm, rl_vq_scratch(&pool, 0), &S);
    if (most < p.mjm->nconmax || pass == 3) break;
    cap = most + most / 4 + 16;
    rl_states_free(&S);
    scratch_free(&pool);
    rl_pair_free(&p);
  }
  if (p.mjm->nconmax != model_nconmax && !a->c.quiet)
    printf("MuJoCo's buffers raised for verify: nconmax %d -> %d, njmax %d -> %d (its collision finds up to %d contacts "
           "on the %d states; with the model's sizes it would overflow and those states would have no reference)\n",
           model_nconmax, p.mjm->nconmax, model_njmax, p.mjm->njmax, most, S.n);
  mjModel *mjfree = mj_copyModel(NULL, p.mjm);
  mjfree->opt.disableflags |= mjDSBL_CONSTRAINT;
  mjData *mjd = mj_makeData(p.mjm), *mjd2 = rl_vq_scratch(&pool, 0); /* mjd2: the constraint-free copy's steps */
  rl_data *d = rl_pair_data(&p);
  real *dense = calloc((size_t)p.m->nv * p.m->nv + 1, sizeof(real));
  double *mjdense = calloc((size_t)p.m->nv * p.m->nv + 1, sizeof(double));
  /* rows: the smooth table, then each selected module's rows */
  int nrow = NQ, first[NMOD];
  rl_vctx ctx[NMOD];
  int on[NMOD];
  for (int i = 0; i < NMOD; i++) {
    first[i] = nrow;
    on[i] = ((a->stages >> modules[i]->stage) & 1u) && modules[i]->nq > 0; /* no rows in this precision */
    if (on[i]) nrow += modules[i]->nq;
  }
  quantity *q = calloc((size_t)nrow, sizeof *q);
  memcpy(q, table_init, sizeof table_init);
  cond_max = 0;
  ff = NULL; /* smooth_float_floor's scratch, made on first use */
  q[Q_ACT_DOT].absent = q[Q_STEP_ACT].absent = p.m->na == 0;
  q[Q_QDERIV].absent = p.m->opt.integrator != RL_INT_IMPLICIT;
  for (int i = 0; i < NMOD; i++) {
    if (!on[i]) continue;
    for (int k = 0; k < modules[i]->nq; k++) {
      quantity *r = &q[first[i] + k];
      r->stage = modules[i]->stage;
      r->name = modules[i]->names[k];
      r->tol = modules[i]->tol ? modules[i]->tol[k] : 0;
      r->absolute = modules[i]->absolute ? modules[i]->absolute[k] : 0;
      r->last = modules[i]->last ? modules[i]->last[k] : 0;
    }
  }
  double *store = calloc(2 * (size_t)nrow * (size_t)(S.n + 1), sizeof(double));
  for (int k = 0; k < nrow; k++) {
    q[k].err = store + (size_t)k * 2 * (S.n + 1);
    q[k].mag = q[k].err + S.n + 1;
  }
  int ret = RL_EXIT_OK;
  for (int k = 0; k < nrow && ret == RL_EXIT_OK; k++)
    if (!rl_vq_info_find(q[k].name)) { /* every row is described in quantities.c (its unit and kind) */
      rl_errorf("verify: quantity '%s' has no entry in reference/verify/quantities.c", q[k].name);
      ret = RL_EXIT_BADINPUT;
    }
  for (int i = 0; i < NMOD; i++) {
    memset(&ctx[i], 0, sizeof ctx[i]);
    if (ret != RL_EXIT_OK) on[i] = 0;
    ctx[i].p = &p;
    ctx[i].d = d;
    ctx[i].mjd = mjd;
    ctx[i].scratch = &pool;
    if (on[i] && modules[i]->init && modules[i]->init(&ctx[i])) {
      rl_errorf("%s: verify stage %s cannot run on this model", a->c.model, rl_stage_names[modules[i]->stage]);
      on[i] = 0;
      ret = RL_EXIT_BADINPUT;
    }
  }
  for (int s = 0; s < S.n && ret == RL_EXIT_OK; s++) {
    const double *qp = S.qpos + (size_t)s * S.nq, *qv = S.qvel + (size_t)s * S.nv, *qc = S.ctrl + (size_t)s * S.nu;
    rl_states_inputs(&S, &p, s);
    /* the smooth table only when one of its stages is asked for (it includes the dense nv×nv M) */
    /* fresh: mjd holds the smooth table's mj_forward at this state, untouched by any module yet */
    int fresh = (a->stages & ((1u << RL_STAGE_COLLISION) - 1)) != 0;
    if (fresh) compare_state(&p, mjfree, d, mjd, mjd2, qp, qv, qc, q, dense, mjdense);
    for (int i = 0; i < NMOD; i++) {
      if (!on[i]) continue;
      int reuse = fresh && modules[i]->reuse_forward;
      fresh = 0;
      if (reuse) {
        rl_set_state(&p, d, NULL, qp, qv, qc);
      } else {
        rl_set_state(&p, d, mjd, qp, qv, qc);
        mj_forward(p.mjm, mjd);
      }
      ctx[i].qpos = qp;
      ctx[i].qvel = qv;
      ctx[i].ctrl = qc;
      modules[i]->state(&ctx[i], q + first[i]);
    }
  }
  for (int i = 0; i < NMOD; i++)
    if (on[i] && modules[i]->fini) modules[i]->fini(&ctx[i]);
  for (int k = 0; k < nrow; k++) finish(&q[k]);
  smooth_acc_tolerance(q, p.mjm->opt.timestep);
  float_floor_judge(q, nrow);
  const char *label = model_label(a->c.model);
  int fails = 0;
  if (!a->c.quiet)
    printf("%-12s %-18s %-4s %12s %12s %10s %-4s %s\n", "stage", "quantity", "prec", "max_abs_err", "max_rel_err",
           "tolerance", "pass", "unit of max_abs_err");
  if (w && w->rows == 0) {
    const char *hdr[] = {"model", "precision", "stage", "quantity", "max_abs_err", "max_rel_err", "tolerance", "pass"};
    for (int k = 0; k < 8; k++) rl_csv_str(w, hdr[k]);
    rl_csv_end_row(w);
  }
  for (int k = 0; k < nrow && ret == RL_EXIT_OK; k++) {
    if (!(a->stages & (1u << q[k].stage)) || q[k].absent) continue;
    double tol = q[k].tol > 0 ? q[k].tol * rl_verify_tolerance_scale() : rl_verify_tolerance(q[k].stage, RL_IS_F32);
    int pass = q[k].absolute ? q[k].max_abs <= tol : q[k].max_rel <= tol;
    fails += !pass;
    if (!a->c.quiet)
      printf("%-12s %-18s %-4s %12.3e %12.3e %10.1e %-4s %s\n", rl_stage_names[q[k].stage], q[k].name, RL_PREC_NAME,
             q[k].max_abs, q[k].max_rel, tol, pass ? "yes" : "NO", rl_vq_unit(q[k].name));
    if (w) {
      rl_csv_str(w, label);
      rl_csv_str(w, RL_PREC_NAME);
      rl_csv_str(w, rl_stage_names[q[k].stage]);
      rl_csv_str(w, q[k].name);
      rl_csv_num(w, q[k].max_abs);
      rl_csv_num(w, q[k].max_rel);
      rl_csv_num(w, tol);
      rl_csv_int(w, pass);
      rl_csv_end_row(w);
    }
  }
  if (ret == RL_EXIT_OK && fails) ret = RL_EXIT_FAIL;
  if (!a->c.quiet && ret != RL_EXIT_BADINPUT)
    printf("%s %s: %d state(s), %d quantity row(s) failed\n", label, RL_PREC_NAME, S.n, fails);
  free(store);
  free(q);
  free(dense);
  free(mjdense);
  rl_data_free(d);
  mj_deleteData(mjd);
  scratch_free(&pool);
  if (ff) mj_deleteData(ff);
  ff = NULL;
  mj_deleteModel(mjfree);
  rl_states_free(&S);
  rl_pair_free(&p);
  return ret;
}
