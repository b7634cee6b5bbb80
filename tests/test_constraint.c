/* test_constraint.c — constraint rows (engine/constraint.c) against MuJoCo 2.2.2, through the verify stage
 * module (reference/verify/verify_constraint.c), plus run-time switches, capacities, disable flags, the CSR
 * layout and the impedance formula.  Compiled per precision (-DRL_REAL_F64 / -DRL_REAL_F32); every
 * numerical assertion has an f64 and an f32 tolerance (RL_TOL_SCALE scales the verify ones). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rl_test_pair.h"
#include "states.h"
#include "tolerances.h"
#include "verify.h"

#define SCENE(name)  SRCDIR "/experiments/scenes/" name
#define TMODEL(name) SRCDIR "/tests/models/" name
#define HUMANOID     "/usr/share/mujoco/model/humanoid/humanoid.xml"
#define HUMANOID100  "/usr/share/mujoco/model/humanoid100/humanoid100.xml"

#if defined(RL_REAL_F32)
#define TOL(f64, f32) (f32)
#define cmd_verify    rl32_cmd_verify
#else
#define TOL(f64, f32) (f64)
#define cmd_verify    rl64_cmd_verify
#endif

/* ------------------------------------------------------------------ through `rigidlab verify` */

/* verify --stages constraint MODEL [--opt …]: 0 when every row quantity is within tolerance */
static int verify(const char *model, const char *const *opts, int nopts, int nstates) {
  rl_verify_args a;
  memset(&a, 0, sizeof a);
  a.c.model = model;
  for (int i = 0; i < nopts; i++) a.c.opts[a.c.nopts++] = opts[i];
  a.states = nstates;
  a.seed = 5;
  a.stages = 1u << RL_STAGE_CONSTRAINT;
  fflush(stdout);
  return cmd_verify(&a);
}

static const char *const pyr[] = {"cone=pyramidal"};
static const char *const ell[] = {"cone=elliptic"};

static const char *const row_models[] = {
    TMODEL("equality.xml"),       TMODEL("slider_ball.xml"), TMODEL("weld_torquescale.xml"),
    TMODEL("contact_condim.xml"), SCENE("pendulum.xml"),     SCENE("double_pendulum.xml"),
    SCENE("chain8.xml"),          SCENE("tumbling.xml"),     SCENE("incline.xml"),
    SCENE("box_stack.xml"),       SCENE("microduck.xml"),    NULL};

Test(constraint_verify, models_pyramidal) {
  for (int k = 0; row_models[k]; k++)
    cr_expect_eq(verify(row_models[k], pyr, 1, 30), 0, "pyramidal: %s", row_models[k]);
}

Test(constraint_verify, models_elliptic) {
  for (int k = 0; row_models[k]; k++) cr_expect_eq(verify(row_models[k], ell, 1, 30), 0, "elliptic: %s", row_models[k]);
}

Test(constraint_verify, humanoid_both_cones, .timeout = 300) {
  if (access(HUMANOID, R_OK)) cr_skip_test("libmujoco-samples not installed");
  cr_expect_eq(verify(HUMANOID, pyr, 1, 30), 0);
  cr_expect_eq(verify(HUMANOID, ell, 1, 30), 0);
  /* humanoid100: nv ≥ 60, so MuJoCo's Jacobian is sparse */
  cr_expect_eq(verify(HUMANOID100, pyr, 1, 10), 0);
  cr_expect_eq(verify(HUMANOID100, ell, 1, 10), 0);
}

/* impratio ≠ 1 under both cones, refsafe off, and the per-kind disable switches (applied to both sides) */
Test(constraint_verify, options) {
  static const char *const o1[] = {"cone=elliptic", "impratio=7"};
  static const char *const o2[] = {"cone=pyramidal", "impratio=0.25"};
  static const char *const o3[] = {"disable=refsafe"};
  static const char *const o4[] = {"cone=elliptic", "disable=refsafe"};
  static const char *const o5[] = {"disable=equality,frictionloss"};
  static const char *const o6[] = {"disable=limit,contact"};
  static const char *const o7[] = {"disable=constraint"};
  cr_expect_eq(verify(TMODEL("contact_condim.xml"), o1, 2, 30), 0);
  cr_expect_eq(verify(TMODEL("contact_condim.xml"), o2, 2, 30), 0);
  cr_expect_eq(verify(TMODEL("weld_torquescale.xml"), o3, 1, 30), 0);
  cr_expect_eq(verify(TMODEL("contact_condim.xml"), o4, 2, 30), 0);
  cr_expect_eq(verify(TMODEL("contact_condim.xml"), o5, 1, 30), 0);
  cr_expect_eq(verify(TMODEL("weld_torquescale.xml"), o5, 1, 30), 0);
  cr_expect_eq(verify(TMODEL("contact_condim.xml"), o6, 1, 30), 0);
  cr_expect_eq(verify(TMODEL("contact_condim.xml"), o7, 1, 30), 0);
}

/* ------------------------------------------------------------------ module-level fixture */

/* the fixture with this suite's seed (rl_test_pair.h) */
static void fixture_open(fixture *f, const char *model, const char *const *opts, int nopts, int nstates) {
  fixture_open_seeded(f, model, opts, nopts, nstates, 3);
}

/* one comparison table row per module quantity, storage for n states */
typedef struct table {
  rl_vq q[32];
  double store[32][2][256];
} table;

static void table_init(table *t) {
  memset(t, 0, sizeof *t);
  cr_assert_leq(rl_vmod_constraint.nq, 32);
  for (int k = 0; k < rl_vmod_constraint.nq; k++) {
    t->q[k].name = rl_vmod_constraint.names[k];
    t->q[k].err = t->store[k][0];
    t->q[k].mag = t->store[k][1];
  }
}

/* run the constraint module on state s: MuJoCo's forward, then ours (the module copies MuJoCo's
   contacts and the mjModel's eq_active / jnt_range into rl_data) */
static void module_state(fixture *f, rl_vctx *c, table *t, int s) {
  const rl_states *S = &f->S;
  c->qpos = S->qpos + (size_t)s * S->nq;
  c->qvel = S->qvel + (size_t)s * S->nv;
  c->ctrl = S->ctrl + (size_t)s * S->nu;
  rl_set_state(&f->p, f->d, f->mjd, c->qpos, c->qvel, c->ctrl);
  mj_forward(f->p.mjm, f->mjd);
  rl_vmod_constraint.state(c, t->q);
}

/* every quantity of the table within its tolerance (relative ∞-norm; integers absolute) */
static void expect_table_ok(table *t, const char *what) {
  for (int k = 0; k < rl_vmod_constraint.nq; k++) {
    rl_vq *q = &t->q[k];
    double tol = rl_vmod_constraint.tol[k] > 0 ? rl_vmod_constraint.tol[k] * rl_verify_tolerance_scale()
                                               : rl_verify_tolerance(RL_STAGE_CONSTRAINT, RL_IS_F32);
    int absolute = rl_vmod_constraint.absolute[k];
    for (int s = 0; s < q->n; s++) {
      double e = q->err[s];
      if (absolute) {
        cr_expect_eq(e, 0, "%s: %s differs in %g rows (state %d)", what, q->name, e, s);
      } else {
        double rel = e / (q->mag[s] > 0.1 * q->scale ? q->mag[s] : fmax(0.1 * q->scale, 1e-300));
        cr_expect_leq(rel, tol, "%s: %s rel err %.3e > %.1e (state %d)", what, q->name, rel, tol, s);
      }
    }
  }
}

static void vctx_open(fixture *f, rl_vctx *c) {
  memset(c, 0, sizeof *c);
  c->p = &f->p;
  c->d = f->d;
  c->mjd = f->mjd;
  cr_assert_eq(rl_vmod_constraint.init(c), 0);
}

/* every constraint row kind occurs on the test models (so the comparisons above are not vacuous) */
Test(constraint_rows, every_row_kind_occurs) {
  /* kinds: connect, weld, joint, frictionloss, hinge/slide limit, ball limit, frictionless,
     pyramidal condim 3/4/6, elliptic condim 3/4/6 */
  enum { K_CONNECT, K_WELD, K_JOINT, K_FRIC, K_LIM1, K_LIMBALL, K_C1, K_P3, K_P4, K_P6, K_E3, K_E4, K_E6, K_N };
  static const char *const kname[K_N] = {
      "connect",     "weld",        "joint",       "frictionloss", "hinge/slide limit", "ball limit", "frictionless",
      "pyramidal 3", "pyramidal 4", "pyramidal 6", "elliptic 3",   "elliptic 4",        "elliptic 6"};
  int seen[K_N] = {0};
  const char *models[] = {TMODEL("weld_torquescale.xml"), TMODEL("contact_condim.xml"), TMODEL("contact_condim.xml")};
  const char *cones[] = {"cone=pyramidal", "cone=pyramidal", "cone=elliptic"};
  for (int mi = 0; mi < 3; mi++) {
    fixture f;
    rl_vctx c;
    table t;
    fixture_open(&f, models[mi], &cones[mi], 1, 40);
    vctx_open(&f, &c);
    table_init(&t);
    for (int s = 0; s < f.S.n; s++) {
      module_state(&f, &c, &t, s);
      const rl_model *m = f.p.m;
      const rl_data *d = f.d;
      for (int i = 0; i < d->nefc; i++) {
        int id = d->efc_id[i], tp = d->efc_type[i];
        if (tp == RL_CNSTR_EQUALITY)
          seen[m->eq_type[id] == RL_EQ_CONNECT ? K_CONNECT : m->eq_type[id] == RL_EQ_WELD ? K_WELD : K_JOINT]++;
        if (tp == RL_CNSTR_FRICTION_DOF) seen[K_FRIC]++;
        if (tp == RL_CNSTR_LIMIT_JOINT) seen[m->jnt_type[id] == RL_JNT_BALL ? K_LIMBALL : K_LIM1]++;
        if (tp == RL_CNSTR_CONTACT_FRICTIONLESS) seen[K_C1]++;
        int dim = tp >= RL_CNSTR_CONTACT_PYRAMIDAL ? d->contact[id].dim : 0;
        if (tp == RL_CNSTR_CONTACT_PYRAMIDAL) seen[dim == 3 ? K_P3 : dim == 4 ? K_P4 : K_P6]++;
        if (tp == RL_CNSTR_CONTACT_ELLIPTIC) seen[dim == 3 ? K_E3 : dim == 4 ? K_E4 : K_E6]++;
      }
    }
    expect_table_ok(&t, models[mi]);
    rl_vmod_constraint.fini(&c);
    fixture_close(&f);
  }
  for (int k = 0; k < K_N; k++) cr_expect_gt(seen[k], 0, "no %s row in any state", kname[k]);
}

/* d->eq_active[e] = 0 at run time (the model keeps eq_active = 1): the equality's rows disappear and
   the rest still match MuJoCo with eq_active[e] = 0; switching it back on restores them */
Test(constraint_rows, equality_switched_off_at_run_time) {
  fixture f;
  rl_vctx c;
  table t;
  fixture_open(&f, TMODEL("weld_torquescale.xml"), NULL, 0, 20);
  vctx_open(&f, &c);
  table_init(&t);
  int weld = mj_name2id(f.p.mjm, mjOBJ_EQUALITY, "weld_ts");
  cr_assert_geq(weld, 0);
  f.p.mjm->eq_active[weld] = 0;
  int ne_off = -1, ne_on = -1;
  for (int s = 0; s < f.S.n; s++) {
    module_state(&f, &c, &t, s);
    cr_expect_eq(f.p.m->eq_active[weld], 1, "the model's switch must stay untouched");
    cr_expect_eq(f.d->eq_active[weld], 0);
    for (int i = 0; i < f.d->ne; i++) cr_expect(f.d->efc_id[i] != weld, "row %d belongs to the disabled weld", i);
    ne_off = f.d->ne;
  }
  expect_table_ok(&t, "weld off");
  f.p.mjm->eq_active[weld] = 1;
  table_init(&t);
  module_state(&f, &c, &t, 0);
  ne_on = f.d->ne;
  expect_table_ok(&t, "weld back on");
  cr_expect_eq(ne_on, ne_off + 6, "weld adds 6 rows: %d vs %d", ne_on, ne_off);
  rl_vmod_constraint.fini(&c);
  fixture_close(&f);
}

/* a joint range changed at run time (d->jnt_range; MuJoCo gets the same range in its model) */
Test(constraint_rows, joint_range_changed_at_run_time) {
  fixture f;
  rl_vctx c;
  table t;
  fixture_open(&f, TMODEL("contact_condim.xml"), NULL, 0, 20);
  vctx_open(&f, &c);
  table_init(&t);
  int sh = mj_name2id(f.p.mjm, mjOBJ_JOINT, "shoulder");
  int wr = mj_name2id(f.p.mjm, mjOBJ_JOINT, "wrist");
  cr_assert(sh >= 0 && wr >= 0);
  /* a range every state violates: both hinge sides active (lower > upper is allowed at run time) */
  f.p.mjm->jnt_range[2 * sh] = 3;
  f.p.mjm->jnt_range[2 * sh + 1] = -3;
  f.p.mjm->jnt_range[2 * wr + 1] = 0.01;
  for (int s = 0; s < f.S.n; s++) {
    module_state(&f, &c, &t, s);
    int nsh = 0;
    for (int i = 0; i < f.d->nefc; i++) nsh += f.d->efc_type[i] == RL_CNSTR_LIMIT_JOINT && f.d->efc_id[i] == sh;
    cr_expect_eq(nsh, 2, "state %d: both shoulder limits active with the changed range", s);
    cr_expect_float_eq(f.p.m->jnt_range[2 * sh], (real)-0.5, 1e-6, "model range untouched");
  }
  expect_table_ok(&t, "changed range");
  rl_vmod_constraint.fini(&c);
  fixture_close(&f);
}

/* CSR layout: rows contiguous, columns strictly ascending and inside [0, nv), every column a dof that
   moves one of the row's bodies (checked against a dense point Jacobian for contact rows) */
Test(constraint_rows, csr_layout) {
  static const char *const models[] = {TMODEL("contact_condim.xml"), TMODEL("weld_torquescale.xml"), HUMANOID, NULL};
  for (int mi = 0; models[mi]; mi++) {
    if (access(models[mi], R_OK)) continue;
    fixture f;
    rl_vctx c;
    table t;
    fixture_open(&f, models[mi], NULL, 0, 10);
    vctx_open(&f, &c);
    table_init(&t);
    const rl_model *m = f.p.m;
    real *jacp = calloc(3 * (size_t)m->nv, sizeof(real));
    for (int s = 0; s < f.S.n; s++) {
      module_state(&f, &c, &t, s);
      const rl_data *d = f.d;
      int adr = 0;
      for (int i = 0; i < d->nefc; i++) {
        cr_expect_eq(d->efc_J_rowadr[i], adr, "row %d not contiguous", i);
        for (int k = 0; k < d->efc_J_rownnz[i]; k++) {
          int col = d->efc_J_colind[adr + k];
          cr_expect(col >= 0 && col < m->nv);
          if (k) cr_expect_gt(col, d->efc_J_colind[adr + k - 1], "row %d columns not ascending", i);
        }
        if (d->efc_type[i] >= RL_CNSTR_CONTACT_FRICTIONLESS) {
          /* columns = union of the two bodies' dof chains: a dense Jacobian is zero elsewhere */
          const rl_contact *con = d->contact + d->efc_id[i];
          int bodies[2] = {m->geom_bodyid[con->geom1], m->geom_bodyid[con->geom2]};
          for (int b = 0; b < 2; b++) {
            rl_jac_point(m, d, jacp, NULL, con->pos, bodies[b]);
            for (int v = 0; v < m->nv; v++) {
              int in = 0;
              for (int k = 0; k < d->efc_J_rownnz[i]; k++) in |= d->efc_J_colind[adr + k] == v;
              if (jacp[v] != 0 || jacp[m->nv + v] != 0 || jacp[2 * m->nv + v] != 0)
                cr_expect(in, "row %d misses dof %d of body %d", i, v, bodies[b]);
            }
          }
        }
        adr += d->efc_J_rownnz[i];
      }
      cr_expect_eq(d->nnzJ, adr);
    }
    free(jacp);
    rl_vmod_constraint.fini(&c);
    fixture_close(&f);
  }
}

/* capacities: with room for only a few rows, rows are dropped whole, counted, and never overflow;
   the rows that are kept are exactly the ones made with room to spare */
Test(constraint_rows, capacity_drops_and_counts) {
  fixture f;
  rl_vctx c;
  table t;
  fixture_open(&f, TMODEL("contact_condim.xml"), pyr, 1, 20);
  vctx_open(&f, &c);
  table_init(&t);
  int s_rich = -1, nefc_full = 0;
  for (int s = 0; s < f.S.n; s++) {
    module_state(&f, &c, &t, s);
    if (f.d->nefc > nefc_full) {
      nefc_full = f.d->nefc;
      s_rich = s;
    }
  }
  cr_assert_gt(nefc_full, 8);
  module_state(&f, &c, &t, s_rich);
  int type_full[512], nnz_full = f.d->nnzJ;
  cr_assert_leq(nefc_full, 512);
  memcpy(type_full, f.d->efc_type, sizeof(int) * (size_t)nefc_full);
  rl_model *m = f.p.m;
  int keep_nefc = m->nefcmax, keep_njmax = m->njmax;
  m->nefcmax = nefc_full / 2; /* smaller than what the arrays hold: safe */
  int w0 = f.d->warning[RL_WARN_CONTACTFULL];
  rl_make_constraint(m, f.d);
  cr_expect_leq(f.d->nefc, m->nefcmax);
  cr_expect_gt(f.d->warning[RL_WARN_CONTACTFULL], w0, "dropped rows must be counted");
  for (int i = 0; i < f.d->nefc; i++) cr_expect(rl_isfinite(f.d->efc_R[i]) && f.d->efc_R[i] > 0);
  for (int i = 0; i < f.d->ne + f.d->nf; i++) cr_expect_eq(f.d->efc_type[i], type_full[i]);
  m->nefcmax = keep_nefc;
  m->njmax = nnz_full / 3;
  rl_make_constraint(m, f.d);
  cr_expect_leq(f.d->nnzJ, m->njmax);
  cr_expect_lt(f.d->nefc, nefc_full);
  for (int i = 0; i < f.d->ncon; i++)
    if (f.d->contact[i].efc_address >= 0) cr_expect_lt(f.d->contact[i].efc_address, f.d->nefc);
  m->njmax = keep_njmax;
  rl_make_constraint(m, f.d);
  cr_expect_eq(f.d->nefc, nefc_full, "full capacity restores every row");
  rl_vmod_constraint.fini(&c);
  fixture_close(&f);
}

/* ------------------------------------------------------------------ formulas */

/* power sigmoid d(x) of solimp (dmin, dmax, width, mid, power) against values worked out by hand,
   and d'(x) against a central difference */
Test(constraint_formula, impedance_sigmoid) {
  const real si[5] = {(real)0.5, (real)0.9, (real)0.2, (real)0.25, 3};
  real imp, impP;
  /* x = 0.1/0.2 = 0.5 > mid: y = 1 − (0.5)³/(0.75)² = 1 − 0.125/0.5625 = 0.7777…, d = 0.5 + 0.4·y */
  rl_solimp_impedance(si, (real)0.1, 0, &imp, &impP);
  cr_expect_float_eq(imp, (real)(0.5 + 0.4 * (1 - 0.125 / 0.5625)), TOL(1e-14, 1e-6));
  /* x = 0.04/0.2 = 0.2 ≤ mid: y = 0.2³/0.25² = 0.128; pos < margin gives the same d */
  rl_solimp_impedance(si, (real)-0.03, (real)0.01, &imp, &impP);
  cr_expect_float_eq(imp, (real)(0.5 + 0.4 * 0.128), TOL(1e-14, 1e-6));
  cr_expect_lt(impP, 0, "d' carries the sign of pos − margin");
  /* saturated and flat */
  rl_solimp_impedance(si, (real)0.5, 0, &imp, &impP);
  cr_expect_eq(imp, si[1]);
  cr_expect_eq(impP, 0);
  const real flat[5] = {(real)0.9, (real)0.9, (real)0.2, (real)0.5, 2};
  rl_solimp_impedance(flat, (real)0.05, 0, &imp, &impP);
  cr_expect_float_eq(imp, (real)0.9, TOL(1e-15, 1e-7));
  /* derivative */
  for (real x = (real)0.01; x < (real)0.19; x += (real)0.03) {
    real h = TOL(1e-6, 1e-3), ip, im, dummy;
    rl_solimp_impedance(si, x + h, 0, &ip, &dummy);
    rl_solimp_impedance(si, x - h, 0, &im, &dummy);
    rl_solimp_impedance(si, x, 0, &imp, &impP);
    cr_expect_float_eq(impP, (ip - im) / (2 * h), TOL(1e-6, 2e-2), "x = %g", (double)x);
  }
}

/* solref → K, B: standard (τ, ζ) and direct (−k, −b) forms, friction rows K = 0 */
Test(constraint_formula, solref_stiffness_damping) {
  real K, B;
  const real std_ref[2] = {(real)0.02, (real)0.5};
  rl_solref_kb(std_ref, (real)0.9, 0, &K, &B);
  cr_expect_float_eq(K, (real)(1 / (0.81 * 0.0004 * 0.25)), TOL(1e-9, 1e-1));
  cr_expect_float_eq(B, (real)(2 / (0.9 * 0.02)), TOL(1e-11, 1e-4));
  const real direct[2] = {-1000, -30};
  rl_solref_kb(direct, (real)0.8, 0, &K, &B);
  cr_expect_float_eq(K, (real)(1000 / 0.64), TOL(1e-10, 1e-3));
  cr_expect_float_eq(B, (real)(30 / 0.8), TOL(1e-12, 1e-5));
  rl_solref_kb(direct, (real)0.8, 1, &K, &B);
  cr_expect_eq(K, 0);
}
