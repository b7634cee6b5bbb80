/* verify_constraint.c — verify stage 'constraint' (see verify.h): rigidlab's constraint rows against
 * MuJoCo 2.2.2's efc_* arrays, row by row.
 *
 * Per state: MuJoCo's mjd holds mj_forward.  rigidlab runs its own position and velocity stages, takes
 * MuJoCo's contacts (so this stage checks the rows, not the collision stage), takes the run-time
 * switches from the mjModel (eq_active, jnt_range: MuJoCo 2.2.2 keeps them in the model, rigidlab in
 * rl_data), and calls rl_make_constraint.  Counts and per-row integers (type, id, contact efc_address)
 * are judged on the absolute number of mismatches; real quantities on the ∞-norm relative error over
 * the rows both sides have.  MuJoCo's efc_J is dense (nefc × nv) or sparse (CSR) as mj_isSparse says.
 * Where MuJoCo's row buffer (njmax) filled, or its contacts exceed rigidlab's contact capacity, the rows are
 * compared on the contacts before the first one that has no rows on MuJoCo's side (or does not fit ours): the
 * contacts after it are left out, and left_out_capacity counts such states (running fraction of the states;
 * above 10 % fails: the comparison then says too little). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "verify.h"

enum {
  C_NEFC,
  C_NE,
  C_NF,
  C_TYPE,
  C_ID,
  C_ADDRESS,
  C_J,
  C_POS,
  C_MARGIN,
  C_FRICTIONLOSS,
  C_DIAGAPPROX,
  C_KBIP,
  C_R,
  C_D,
  C_VEL,
  C_AREF,
  C_MU,
  C_LEFT_CAPACITY,
  C_NQ
};

static const char *const names[C_NQ] = {"nefc",           "ne",        "nf",      "efc_type",   "efc_id",
                                        "efc_address",    "efc_J",     "efc_pos", "efc_margin", "efc_frictionloss",
                                        "efc_diagApprox", "efc_KBIP",  "efc_R",   "efc_D",      "efc_vel",
                                        "efc_aref",       "contact_mu",  "left_out_capacity"};
/* Integer quantities: any mismatch (≥ 1) fails in both precisions.
   f32 only: R, D, KBIP and diagApprox (= R·d/(1−d)) go through 1 − d(x) of the solimp sigmoid at
   x = pos − margin, whose slope is up to power·(dmax − dmin)/width: with the default solimp
   (0.9, 0.95, 0.001, 0.5, 2) that is 100 per metre against 1 − d ≥ 0.05, so the float rounding of pos
   (~3e-7 m on unit-size models) alone moves R by up to 100·3e-7/0.05 = 6e-4 relative.  Measured
   (100 states, both cones, every bundled model and humanoid): up to 1.6e-4 (fourbar.xml), 5.7e-5
   (equality.xml); hence 1e-3 for these four in f32.  f64 keeps the stage tolerance (1e-10). */
#if defined(RL_REAL_F32)
#define RL_TOL_IMPEDANCE 1e-3
#else
#define RL_TOL_IMPEDANCE 0
#endif
static const double tols[C_NQ] = {[C_NEFC] = 0.5,
                                  [C_NE] = 0.5,
                                  [C_NF] = 0.5,
                                  [C_TYPE] = 0.5,
                                  [C_ID] = 0.5,
                                  [C_ADDRESS] = 0.5,
                                  [C_DIAGAPPROX] = RL_TOL_IMPEDANCE,
                                  [C_KBIP] = RL_TOL_IMPEDANCE,
                                  [C_R] = RL_TOL_IMPEDANCE,
                                  [C_D] = RL_TOL_IMPEDANCE,
                                  [C_LEFT_CAPACITY] = 0.1};
static const int absolute[C_NQ] = {[C_NEFC] = 1, [C_NE] = 1, [C_NF] = 1, [C_TYPE] = 1, [C_ID] = 1, [C_ADDRESS] = 1};
static const int last[C_NQ] = {[C_LEFT_CAPACITY] = 1};

typedef struct scratch {
  real *ours;      /* nv */
  double *ref;     /* nv */
  int states, cut; /* states seen; of them, compared on a contact list cut short by a full buffer */
} scratch;

static int init(rl_vctx *c) {
  scratch *s = calloc(1, sizeof *s);
  size_t nv = (size_t)c->p->m->nv + 1;
  if (!s) return -1;
  s->ours = calloc(nv, sizeof(real));
  s->ref = calloc(nv, sizeof(double));
  c->own = s;
  return s->ours && s->ref ? 0 : -1;
}

static void fini(rl_vctx *c) {
  scratch *s = c->own;
  if (!s) return;
  free(s->ours);
  free(s->ref);
  free(s);
  c->own = NULL;
}

/* row r of MuJoCo's Jacobian, dense */
static void mj_row(const mjModel *mjm, const mjData *mjd, int r, double *row) {
  int nv = mjm->nv;
  if (mj_isSparse(mjm)) {
    memset(row, 0, sizeof(double) * (size_t)nv);
    int adr = mjd->efc_J_rowadr[r];
    for (int k = 0; k < mjd->efc_J_rownnz[r]; k++) row[mjd->efc_J_colind[adr + k]] = mjd->efc_J[adr + k];
  } else {
    memcpy(row, mjd->efc_J + (size_t)r * nv, sizeof(double) * (size_t)nv);
  }
}

/* row r of rigidlab's CSR Jacobian, dense */
static void rl_row(const rl_model *m, const rl_data *d, int r, real *row) {
  memset(row, 0, sizeof(real) * (size_t)m->nv);
  int adr = d->efc_J_rowadr[r];
  for (int k = 0; k < d->efc_J_rownnz[r]; k++) row[d->efc_J_colind[adr + k]] = d->efc_J[adr + k];
}

/* number of rows among the first n where the two integer arrays differ */
static int count_mismatch(const int *a, const int *b, int n) {
  int c = 0;
  for (int i = 0; i < n; i++) c += a[i] != b[i];
  return c;
}

static void state(rl_vctx *c, rl_vq *q) {
  const rl_model *m = c->p->m;
  const mjModel *mjm = c->p->mjm;
  rl_data *d = c->d;
  mjData *mjd = c->mjd;
  scratch *s = c->own;
  rl_set_state(c->p, d, NULL, c->qpos, c->qvel, c->ctrl);
  rl_fwd_position(m, d);
  rl_fwd_velocity(m, d);
  /* MuJoCo stops making contact rows at the first contact that does not fit in its njmax (2.2.2:
     warning CNSTRFULL, efc_address stays −1): compare on the contacts before that one */
  int ncon = mjd->ncon < m->nconmax ? mjd->ncon : m->nconmax;
  if (!(mjm->opt.disableflags & (mjDSBL_CONSTRAINT | mjDSBL_CONTACT)))
    for (int i = 0; i < ncon; i++)
      if (!mjd->contact[i].exclude && mjd->contact[i].efc_address < 0) {
        ncon = i;
        break;
      }
  s->states++;
  s->cut += ncon < mjd->ncon;
  rl_vq_record(&q[C_LEFT_CAPACITY], (double)s->cut / s->states, 1);
  d->ncon = ncon;
  for (int i = 0; i < ncon; i++) rl_vq_copy_contact(d->contact + i, mjd->contact + i);
  for (int e = 0; e < m->neq; e++) d->eq_active[e] = mjm->eq_active[e];
  for (int k = 0; k < 2 * m->njnt; k++) d->jnt_range[k] = (real)mjm->jnt_range[k];
  rl_make_constraint(m, d);

  rl_vq_record(&q[C_NEFC], fabs((double)d->nefc - mjd->nefc), mjd->nefc);
  rl_vq_record(&q[C_NE], fabs((double)d->ne - mjd->ne), mjd->ne);
  rl_vq_record(&q[C_NF], fabs((double)d->nf - mjd->nf), mjd->nf);
  int n = d->nefc < mjd->nefc ? d->nefc : mjd->nefc;
  rl_vq_record(&q[C_TYPE], count_mismatch(d->efc_type, mjd->efc_type, n) + fabs((double)d->nefc - mjd->nefc), n);
  rl_vq_record(&q[C_ID], count_mismatch(d->efc_id, mjd->efc_id, n) + fabs((double)d->nefc - mjd->nefc), n);
  int bad_address = 0;
  for (int i = 0; i < ncon; i++) bad_address += d->contact[i].efc_address != mjd->contact[i].efc_address;
  rl_vq_record(&q[C_ADDRESS], bad_address, ncon);

  /* Jacobian, dense row by row */
  double err = 0, mag = 0;
  for (int r = 0; r < n; r++) {
    mj_row(mjm, mjd, r, s->ref);
    rl_row(m, d, r, s->ours);
    for (int k = 0; k < m->nv; k++) {
      double e = fabs((double)s->ours[k] - s->ref[k]);
      if (!(e <= err)) err = e;
      if (fabs(s->ref[k]) > mag) mag = fabs(s->ref[k]);
    }
  }
  rl_vq_record(&q[C_J], err, mag);
  rl_vq_compare(&q[C_POS], d->efc_pos, mjd->efc_pos, n);
  rl_vq_compare(&q[C_MARGIN], d->efc_margin, mjd->efc_margin, n);
  rl_vq_compare(&q[C_FRICTIONLOSS], d->efc_frictionloss, mjd->efc_frictionloss, n);
  rl_vq_compare(&q[C_DIAGAPPROX], d->efc_diagApprox, mjd->efc_diagApprox, n);
  rl_vq_compare(&q[C_KBIP], d->efc_KBIP, mjd->efc_KBIP, 4L * n);
  rl_vq_compare(&q[C_R], d->efc_R, mjd->efc_R, n);
  rl_vq_compare(&q[C_D], d->efc_D, mjd->efc_D, n);
  rl_vq_compare(&q[C_VEL], d->efc_vel, mjd->efc_vel, n);
  rl_vq_compare(&q[C_AREF], d->efc_aref, mjd->efc_aref, n);
  /* regularized cone friction of contacts that have rows */
  err = mag = 0;
  for (int i = 0; i < ncon; i++) {
    if (mjd->contact[i].efc_address < 0 || d->contact[i].efc_address < 0 || mjd->contact[i].dim < 2) continue;
    double e = fabs((double)d->contact[i].mu - mjd->contact[i].mu);
    if (!(e <= err)) err = e;
    if (fabs(mjd->contact[i].mu) > mag) mag = fabs(mjd->contact[i].mu);
  }
  rl_vq_record(&q[C_MU], err, mag);
}

const rl_vmodule rl_vmod_constraint = {.stage = RL_STAGE_CONSTRAINT,
                                       .nq = C_NQ,
                                       .names = names,
                                       .tol = tols,
                                       .absolute = absolute,
                                       .last = last,
                                       .init = init,
                                       .state = state,
                                       .fini = fini};
