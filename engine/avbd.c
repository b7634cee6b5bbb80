/* avbd.c — AVBD solver in maximal coordinates, CPU (issue 5; seed 001, A1–A18, A20).
 *
 * Build (model → bodies at their COM, joints → rows), generalized ↔ maximal mapping, and the step:
 *   servo targets → contacts + cache → coloring → save/decay/predict → colored 6×6 block sweeps +
 *   dual update → residual test or budget → velocity recovery → diagnostics.
 * The per-body math (joint and contact rows, inertia term, 6×6 assembly, guarded Cholesky, the body
 * update) is in rl_avbd_body.h, shared with CUDA; this file keeps the orchestration.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rl_avbd.h"

#define AVBD_MAXCOLOR 32
#define AVBD_LIN_SCALE ((real)1e-3) /* ℓ of the penalty growth: 1 mm */
#define AVBD_ANG_SCALE ((real)1e-3) /* 1 mrad */
#define AVBD_PAIR_RHO_CARRY ((real)2) /* most ρ/ρ₀ a body–body contact carries to the next step */
#define AVBD_SIDE_RATIO ((real)100)
#define AVBD_TOL_H ((real)1e-3) /* step at which tol_lin/tol_ang apply as given (avbd_step_tolerance) */ /* supported-side mass / lighter body above which ρ₀ uses the side */

static const rl_avbd_pose avbd_world = {{0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0, 1, 0, 0, 0, 1}};

/* pose of slot s, the world for s < 0 */
static const rl_avbd_pose *avbd_pose_of(const rl_avbd *am, int s) { return s < 0 ? &avbd_world : am->pose + s; }

/* ------------------------------------------------------------------------ build */

/* the precision's defaults (documented at rl_avbd_param); contacts: see rl_avbd_default_param */
static void avbd_default_param(rl_avbd_param *p) {
  p->iterations = 500;
  p->contacts = RL_AVBD_CONTACTS_GROUND;
  p->force_overflow = 0;
  p->threads = 1;
  p->alpha = (real)0.95;
  /* every 3rd sweep; measured on microduck f64 (sweeps/step: standing 1 ms / standing 2 ms / the bench's
     moving state at 2 ms): off 91.3 / 36.0 / 496.5 (27 of 30 steps exhausted), every sweep 95.7 / 49.0 /
     131.1, every 3rd 90.6 / 34.9 / 132.0, every 10th 434.7 / 404.0 / 138.7 (the standing robot stalls) */
  p->coarse = 3;
  p->gamma = (real)0.99;
  p->beta = (real)1;
  p->rho_init = (real)1;
  p->rho_max = (real)1e6;
#if defined(RL_REAL_F64)
  /* joints: steady gap ≈ tol/(1 − α); microduck 1 ms anchor gap 2.0e-7 → 2.5e-8 m.  f32 keeps 0.95:
     correcting half the rounding noise of the poses (~ε|x|) each step put velocity noise into chain8
     (order test 0.36 at α 0.5) */
  p->alpha_joint = (real)0.5;
  p->adaptive_start = 1;
  p->tol_lin = (real)1e-8;
  p->tol_ang = (real)1e-8;
#else
  p->alpha_joint = (real)0.95;
  p->adaptive_start = 0; /* spin_sphere f32: |ω| after the stop 1.6e-4 → 1.1e-3 rad/s with it */
  p->tol_lin = (real)5e-7;
  p->tol_ang = (real)5e-6;
#endif
  p->max_dx = (real)0.5;
  p->max_dtheta = (real)0.5;
  p->contact_margin = (real)2e-3;
  p->servo_model = RL_AVBD_SERVO_PD;
  /* Feetech STS3215 "M1" fit (BAM) */
  p->bam.kt = (real)1.178;
  p->bam.R = (real)2.479;
  p->bam.armature = (real)0.0261;
  p->bam.friction = (real)0.0515;
  p->bam.viscous = (real)0.0599;
  p->bam.supply = (real)7.4;
  p->bam.kp = (real)32;
  p->bam.error_gain = (real)0.166;
  p->bam.max_duty = (real)0.97;
  p->cheb_rho = 0;
  p->cheb_start = 3;
}

/* the model's AVBD overrides (--opt avbd_*; 0 keeps the default): sweep budget, stopping tolerance
   (tol_ang keeps its default ratio to tol_lin), Chebyshev ρ */
static void avbd_model_param(rl_avbd_param *p, const rl_option *o) {
  if (o->avbd_iterations > 0) p->iterations = o->avbd_iterations;
  if (o->avbd_tolerance > 0) {
    p->tol_ang *= o->avbd_tolerance / p->tol_lin;
    p->tol_lin = o->avbd_tolerance;
  }
  if (o->avbd_cheb_rho > 0) p->cheb_rho = o->avbd_cheb_rho;
}

int rl_avbd_dynamic_pairs(const rl_model *m) {
  for (int g1 = 0; g1 < m->ngeom; g1++)
    for (int g2 = g1 + 1; g2 < m->ngeom; g2++) {
      int b1 = m->geom_bodyid[g1], b2 = m->geom_bodyid[g2];
      if (b1 == b2 || m->body_weldid[b1] == 0 || m->body_weldid[b2] == 0) continue;
      if ((m->geom_contype[g1] & m->geom_conaffinity[g2]) || (m->geom_contype[g2] & m->geom_conaffinity[g1])) return 1;
    }
  return 0;
}

/* defaults of the precision, the contact source of the model (rl_collision's contacts where two dynamic
   bodies can touch, else the own ground contacts), then the model's overrides */
rl_avbd_param rl_avbd_default_param(const rl_model *m) {
  rl_avbd_param p;
  memset(&p, 0, sizeof p);
  avbd_default_param(&p);
  p.contacts = rl_avbd_dynamic_pairs(m) ? RL_AVBD_CONTACTS_DATA : RL_AVBD_CONTACTS_GROUND;
  avbd_model_param(&p, &m->opt);
  return p;
}

/* a unit vector ⊥ n and n × it (a right-handed frame n, t1, t2) */
static void avbd_perp(real t1[3], real t2[3], const real n[3]) {
  real e[3] = {0, 0, 0};
  int k = (rl_fabs(n[0]) < rl_fabs(n[1])) ? (rl_fabs(n[0]) < rl_fabs(n[2]) ? 0 : 2) : (rl_fabs(n[1]) < rl_fabs(n[2]) ? 1 : 2);
  e[k] = 1;
  rl_v3_cross(t1, n, e);
  rl_v3_normalize(t1);
  rl_v3_cross(t2, n, t1);
}

/* support features of geom g for ground contacts: 0 if none */
static int avbd_nfeature(const rl_model *m, int g) {
  switch (m->geom_type[g]) {
    case RL_GEOM_SPHERE: return 1;
    case RL_GEOM_CAPSULE: return 2;
    case RL_GEOM_BOX: return 8;
    case RL_GEOM_MESH: {
      int id = m->geom_dataid[g];
      return id >= 0 ? m->mesh_vertnum[id] : 0;
    }
    default: return 0;
  }
}

/* contype/conaffinity filter of MuJoCo: (ct1 & ca2) || (ct2 & ca1) */
static int avbd_pair_filter(const rl_model *m, int g1, int g2) {
  return (m->geom_contype[g1] & m->geom_conaffinity[g2]) || (m->geom_contype[g2] & m->geom_conaffinity[g1]);
}

static int avbd_is_static(const rl_model *m, int b) { return b == 0 || m->body_weldid[b] == 0; }

static int avbd_ground_capacity(const rl_model *m) {
  int n = 0;
  for (int p = 0; p < m->ngeom; p++) {
    if (m->geom_type[p] != RL_GEOM_PLANE || !avbd_is_static(m, m->geom_bodyid[p])) continue;
    for (int g = 0; g < m->ngeom; g++)
      if (!avbd_is_static(m, m->geom_bodyid[g]) && avbd_pair_filter(m, p, g)) n += avbd_nfeature(m, g);
  }
  return n;
}

/* Rotational scale of slot s for ρ₀: mean principal inertia + the armature of every joint at the body
 * (a joint's armature couples the body's rotation to its neighbour's as strongly as an inertia: a row
 * whose ρ is far below it converges at the rate ρ/armature per dual update). */
/* 1 if actuator u is a position servo (gain fixed, bias affine with b₁ < 0: F = kp(u − φ) − kv φ̇) */
static int avbd_is_position(const rl_model *m, int u) {
  return m->actuator_biastype[u] == RL_BIAS_AFFINE && m->actuator_biasprm[RL_NBIAS * u + 1] < 0;
}

/* 1 if joint jt's actuator runs the BAM servo model (prm.servo_model = BAM and a position servo) */
static int avbd_bam_on(const rl_avbd *am, const rl_model *m, const rl_avbd_joint *jt) {
  return am->prm.servo_model == RL_AVBD_SERVO_BAM && jt->act >= 0 && avbd_is_position(m, jt->act);
}

/* armature of the coordinate: a = dof_armature + (BAM) g²·bam.armature */
static real avbd_armature(const rl_avbd *am, const rl_model *m, const rl_avbd_joint *jt) {
  if (!avbd_bam_on(am, m, jt)) return jt->armature;
  real g = m->actuator_gear[jt->act];
  return jt->armature + g * g * am->prm.bam.armature;
}

/* dry-friction budget of the coordinate: τ_f = frictionloss + (BAM) |g|·bam.friction */
static real avbd_dry_budget(const rl_avbd *am, const rl_model *m, const rl_avbd_joint *jt) {
  if (!avbd_bam_on(am, m, jt)) return jt->frictionloss;
  return jt->frictionloss + rl_fabs(m->actuator_gear[jt->act]) * am->prm.bam.friction;
}

static real avbd_mean_inertia(const rl_avbd *am, const rl_model *m, int s) {
  if (s < 0) return (real)1e30;
  const real *I = am->inertia + 3 * s;
  real r = (I[0] + I[1] + I[2]) / 3;
  for (int j = 0; j < am->njoint; j++)
    if (am->joint[j].a == s || am->joint[j].b == s) r += avbd_armature(am, m, am->joint + j);
  return r;
}
static real avbd_mass(const rl_avbd *am, int s) { return s < 0 ? (real)1e30 : am->mass[s]; }

/* Count joints and rows; refuse what the solver does not model.  Returns 0 and writes err. */
static int avbd_check(const rl_model *m, int *njoint, int *nrow, char *err, int errlen) {
  int nj = 0, nr = 0;
  for (int b = 1; b < m->nbody; b++) {
    if (avbd_is_static(m, b)) continue;
    const char *name = rl_model_name(m, m->name_bodyadr[b]);
    const real *I = m->body_inertia + 3 * b;
    if (!(m->body_mass[b] > 0)) {
      snprintf(err, (size_t)errlen, "avbd: body '%s' is dynamic but has zero mass", name);
      return 0;
    }
    if (!(I[0] > 0 && I[1] > 0 && I[2] > 0)) {
      snprintf(err, (size_t)errlen, "avbd: body '%s' has a non-positive principal inertia", name);
      return 0;
    }
    int jn = m->body_jntnum[b];
    if (jn > 1) {
      snprintf(err, (size_t)errlen, "avbd: body '%s' has %d joints (one per body is supported)", name, jn);
      return 0;
    }
    if (jn == 0) { nj++; nr += 6; continue; } /* welded to a dynamic parent */
    int j = m->body_jntadr[b], t = m->jnt_type[j];
    if (t == RL_JNT_FREE) continue;
    nj++;
    nr += (t == RL_JNT_BALL) ? 3 : 5;
    if (t != RL_JNT_BALL) nr += 3; /* limit lo, hi, dry friction (allocated always) */
  }
  for (int e = 0; e < m->neq; e++) {
    if (avbd_is_static(m, m->eq_obj1id[e]) && avbd_is_static(m, m->eq_obj2id[e])) {
      snprintf(err, (size_t)errlen, "avbd: equality '%s' joins two static bodies", rl_model_name(m, m->name_eqadr[e]));
      return 0;
    }
    if (m->eq_type[e] == RL_EQ_CONNECT) { nj++; nr += 3; }
    else if (m->eq_type[e] == RL_EQ_WELD) { nj++; nr += 6; }
    else {
      snprintf(err, (size_t)errlen, "avbd: equality '%s' is a joint coupling (unsupported by avbd)",
               rl_model_name(m, m->name_eqadr[e]));
      return 0;
    }
  }
  *njoint = nj;
  *nrow = nr;
  return 1;
}

/* carve one aligned block out of the buffer */
static void *avbd_take(char **p, size_t bytes) {
  void *r = *p;
  *p += (bytes + 63) & ~(size_t)63;
  return r;
}

/* Rows of joint jt (kinds): two-sided rows first, then limit lo/hi and dry friction. */
static void avbd_make_rows(rl_avbd *am, rl_avbd_joint *jt, int *rowtop) {
  static const int kinds[5][6] = {
    {RL_AVBD_ROW_LIN, RL_AVBD_ROW_LIN, RL_AVBD_ROW_LIN, RL_AVBD_ROW_ANG, RL_AVBD_ROW_ANG, 0},   /* hinge */
    {RL_AVBD_ROW_LIN, RL_AVBD_ROW_LIN, RL_AVBD_ROW_ANG, RL_AVBD_ROW_ANG, RL_AVBD_ROW_ANG, 0},   /* slide */
    {RL_AVBD_ROW_LIN, RL_AVBD_ROW_LIN, RL_AVBD_ROW_LIN, 0, 0, 0},                               /* ball */
    {RL_AVBD_ROW_LIN, RL_AVBD_ROW_LIN, RL_AVBD_ROW_LIN, RL_AVBD_ROW_ANG, RL_AVBD_ROW_ANG, RL_AVBD_ROW_ANG}, /* weld */
    {RL_AVBD_ROW_LIN, RL_AVBD_ROW_LIN, RL_AVBD_ROW_LIN, 0, 0, 0}};                              /* connect */
  static const int neq[5] = {5, 5, 3, 6, 3};
  jt->row = *rowtop;
  jt->neq = neq[jt->kind];
  jt->lo_row = jt->hi_row = jt->dry_row = -1;
  int n = jt->neq;
  for (int k = 0; k < n; k++) am->row[jt->row + k].kind = kinds[jt->kind][k];
  if (jt->kind == RL_AVBD_HINGE || jt->kind == RL_AVBD_SLIDE) {
    jt->lo_row = jt->row + n;
    jt->hi_row = jt->row + n + 1;
    jt->dry_row = jt->row + n + 2;
    am->row[jt->lo_row].kind = RL_AVBD_ROW_LIMLO;
    am->row[jt->hi_row].kind = RL_AVBD_ROW_LIMHI;
    am->row[jt->dry_row].kind = RL_AVBD_ROW_DRY;
    n += 3;
  }
  jt->nrow = n;
  *rowtop += n;
}

/* 1 if body b lies in the subtree of body top (parents precede children in the body order) */
static int avbd_in_subtree(const rl_model *m, int b, int top) {
  while (b > top) b = m->body_parentid[b];
  return b == top;
}

/* Mass of one side of a tree joint: inside = 1: the subtree of body top (M = Σ m_i over it);
 * inside = 0: the rest of top's kinematic tree. */
static real avbd_side_mass(const rl_model *m, int top, int inside) {
  int root = m->body_rootid[top];
  real M = 0;
  for (int b = root; b < m->nbody; b++)
    if (avbd_in_subtree(m, b, root) && avbd_in_subtree(m, b, top) == inside) M += m->body_mass[b];
  return M;
}

/* meff of the rows of joint jt: length rows the mass, angle rows (hinge coordinate rows too) the
 * rotational scale (mean principal inertia + armature), a slide's coordinate rows mass + armature.
 * The mass is the larger of (a) the lighter of the two bodies and (b) for a joint of the kinematic
 * tree, the lighter of the two sides it separates: the subtree below it and the rest of the tree
 * (infinite when the tree hangs from the world), M = min(M_rest, M_sub), when M > AVBD_SIDE_RATIO·(a).
 * Why (b): a joint between light links that carries a heavy load (avbd_chain50: 1 g links holding
 * 50 kg, 50 000:1) needs a penalty on the scale of the load, not of the links.  With ρ₀ = m_link/h²
 * the penalty has to grow ~10⁵× through the dual updates while the block sweeps creep along the
 * chain: 968/1000 steps exhausted 500 sweeps, anchor gap 8.6e-5 m.  Scaled by the supported mass
 * the gap is 4e-8 m.  (Tried and dropped: over-relaxed sweeps (diverge with the per-sweep dual
 * update), no warm-start decay (no gain), the same side scaling for angle rows (no gain on the
 * exhausted steps, 1e-6 m gap at full scale).)  Only for large ratios: in a uniform chain (chain8,
 * M/m ≤ 7) the stiffer rows make the f32 update test stop early (order test fails), so (b) is kept
 * for mass-ratio joints. */
static void avbd_row_scales(rl_avbd *am, const rl_model *m, const rl_avbd_joint *jt) {
  real mlin = rl_avbd_min(avbd_mass(am, jt->a), avbd_mass(am, jt->b));
  real mang = rl_avbd_min(avbd_mean_inertia(am, m, jt->a), avbd_mean_inertia(am, m, jt->b));
  if (jt->eq < 0) {
    int bB = am->body[jt->b], root = m->body_rootid[bB];
    int anchored = jt->a < 0 || m->body_jntnum[root] == 0 || m->jnt_type[m->body_jntadr[root]] != RL_JNT_FREE;
    real MB = avbd_side_mass(m, bB, 1), MA = anchored ? (real)1e30 : avbd_side_mass(m, bB, 0);
    real side = rl_avbd_min(MA, MB);
    if (side > AVBD_SIDE_RATIO * mlin) mlin = side;
  }
  for (int k = 0; k < jt->nrow; k++) {
    rl_avbd_row *r = am->row + jt->row + k;
    if (r->kind == RL_AVBD_ROW_LIN) r->meff = mlin;
    else if (r->kind == RL_AVBD_ROW_ANG) r->meff = mang;
    else r->meff = jt->kind == RL_AVBD_HINGE ? mang : mlin + avbd_armature(am, m, jt);
  }
}

/* COM-frame pose of body b from the kinematics in d: x = xipos, q = xquat ⊗ iquat */
static void avbd_com_pose(const rl_model *m, const rl_data *d, int b, rl_avbd_pose *p) {
  rl_v3_copy(p->x, d->xipos + 3 * b);
  rl_q_mul(p->q, d->xquat + 4 * b, m->body_iquat + 4 * b);
  rl_avbd_pose_sync(p);
}

/* express a world point w in the COM frame of pose p (the world: w itself) */
static void avbd_to_local(real r[3], const rl_avbd_pose *p, const real w[3]) {
  real t[3];
  rl_v3_sub(t, w, p->x);
  rl_m3_tmulv(r, p->R, t);
}

/* Joint geometry from the reference configuration d (kinematics at qpos0):
 * anchors, axes (world → each COM frame), q_rel0 = q_A⁻¹ q_B, two ⊥ vectors in A. */
static void avbd_joint_geometry(const rl_model *m, const rl_data *d, rl_avbd *am, rl_avbd_joint *jt,
                                const real anchor[3], const real axis[3]) {
  rl_avbd_pose A, B;
  if (jt->a < 0) A = avbd_world; else avbd_com_pose(m, d, am->body[jt->a], &A);
  avbd_com_pose(m, d, am->body[jt->b], &B);
  avbd_to_local(jt->rA, &A, anchor);
  avbd_to_local(jt->rB, &B, anchor);
  rl_m3_tmulv(jt->axA, A.R, axis);
  rl_m3_tmulv(jt->axB, B.R, axis);
  rl_v3_normalize(jt->axA);
  rl_v3_normalize(jt->axB);
  avbd_perp(jt->t1A, jt->t2A, jt->axA);
  real c[4];
  rl_q_conj(c, A.q);
  rl_q_mul(jt->qrel0, c, B.q);
  rl_q_normalize(jt->qrel0);
}

/* Equality geometry (MuJoCo's body semantic, eq_data):
 *   connect: p₁ = x₁ + R₁·data[0:3] on body1, p₂ = x₂ + R₂·data[3:6] on body2;
 *   weld:    p₁ = x₁ + R₁·data[3:6] (relpos), p₂ = x₂ + R₂·data[0:3] (anchor), and at rest
 *            q₂ = q₁ ⊗ rel (rel = data[6:10]; a zero rel means the qpos0 relative pose).
 * Rows are p_A − p_B with B = body1 when it is dynamic (A = body2, possibly static), else B = body2.
 * torquescale is not modeled (rotation rows are plain radians). */
static void avbd_equality_geometry(const rl_model *m, const rl_data *d, rl_avbd *am, int e, rl_avbd_joint *jt) {
  int b1 = m->eq_obj1id[e], b2 = m->eq_obj2id[e];
  const real *dat = m->eq_data + RL_NEQDATA * e;
  int weld = m->eq_type[e] == RL_EQ_WELD;
  jt->kind = weld ? RL_AVBD_WELD : RL_AVBD_CONNECT;
  jt->jnt = -1;
  jt->eq = e;
  jt->act = -1;
  real p1[3], p2[3], t[3], rel[4];
  const real *o1 = weld ? dat + 3 : dat, *o2 = weld ? dat : dat + 3;
  rl_m3_mulv(t, d->xmat + 9 * b1, o1);
  rl_v3_add(p1, d->xpos + 3 * b1, t);
  rl_m3_mulv(t, d->xmat + 9 * b2, o2);
  rl_v3_add(p2, d->xpos + 3 * b2, t);
  rl_q_copy(rel, dat + 6);
  if (weld && rl_q_normalize(rel) < (real)0.5) { /* no relpose: the qpos0 relative pose */
    real c[4];
    rl_q_conj(c, d->xquat + 4 * b1);
    rl_q_mul(rel, c, d->xquat + 4 * b2);
  }
  int swap = am->slot[b1] < 0; /* body1 static: B = body2 */
  int bA = swap ? b1 : b2, bB = swap ? b2 : b1;
  const real *pA = swap ? p1 : p2, *pB = swap ? p2 : p1;
  jt->a = am->slot[bA];
  jt->b = am->slot[bB];
  rl_avbd_pose A = avbd_world, B;
  if (jt->a >= 0) avbd_com_pose(m, d, bA, &A);
  avbd_com_pose(m, d, bB, &B);
  avbd_to_local(jt->rA, &A, pA);
  avbd_to_local(jt->rB, &B, pB);
  real ax[3] = {0, 0, 1};
  rl_m3_tmulv(jt->axA, A.R, ax);
  rl_m3_tmulv(jt->axB, B.R, ax);
  avbd_perp(jt->t1A, jt->t2A, jt->axA);
  if (weld) {
    /* q_B = q_A ⊗ q_rel0 with q = q_body ⊗ iquat (COM frames; a static A has the world pose):
       B = body1: q₁ = q₂ ⊗ rel⁻¹  →  q_rel0 = (A static ? xquat₂ : iquat₂⁻¹) ⊗ rel⁻¹ ⊗ iquat₁
       B = body2: q₂ = q₁ ⊗ rel    →  q_rel0 = (A static ? xquat₁ : iquat₁⁻¹) ⊗ rel ⊗ iquat₂ */
    real l[4], r[4], c[4];
    if (jt->a < 0) rl_q_copy(l, d->xquat + 4 * bA); else rl_q_conj(l, m->body_iquat + 4 * bA);
    if (swap) rl_q_copy(r, rel); else rl_q_conj(r, rel);
    rl_q_mul(c, l, r);
    rl_q_mul(jt->qrel0, c, m->body_iquat + 4 * bB);
    rl_q_normalize(jt->qrel0);
  }
}

/* Components for the coarse step (avbd_coarse): comp[s] = the lowest slot joined to s by joints
 * between dynamic bodies; −1 for a body alone or in a component with a joint to the world (the
 * coarse step moves free articulated assemblies only). */
static void avbd_components(rl_avbd *am) {
  int nb = am->nb, *c = am->comp;
  for (int s = 0; s < nb; s++) c[s] = s;
  for (int pass = 0, changed = 1; changed && pass < nb + 1; pass++) {
    changed = 0;
    for (int j = 0; j < am->njoint; j++) {
      const rl_avbd_joint *jt = am->joint + j;
      if (jt->a < 0) continue;
      int lo = c[jt->a] < c[jt->b] ? c[jt->a] : c[jt->b];
      if (c[jt->a] != lo || c[jt->b] != lo) { c[jt->a] = c[jt->b] = lo; changed = 1; }
    }
  }
  int *n = am->order; /* scratch: bodies per component, world-anchored components marked −1 */
  for (int s = 0; s < nb; s++) n[s] = 0;
  for (int s = 0; s < nb; s++) n[c[s]]++;
  for (int j = 0; j < am->njoint; j++)
    if (am->joint[j].a < 0) n[c[am->joint[j].b]] = -1;
  for (int s = 0; s < nb; s++)
    if (n[c[s]] < 2) c[s] = -1;
  for (int s = 0; s < nb; s++)
    if (c[s] >= 0 && n[c[s]] < 2) c[s] = -1;
}

rl_avbd *rl_avbd_build(const rl_model *m, const rl_avbd_param *prm, char *err, int errlen) {
  int nj, nr;
  if (!avbd_check(m, &nj, &nr, err, errlen)) return NULL;
  int nb = 0;
  for (int b = 1; b < m->nbody; b++) nb += !avbd_is_static(m, b);
  int maxcon = avbd_ground_capacity(m);
  if (m->nconmax > maxcon) maxcon = m->nconmax;
  size_t R = sizeof(real), nbs = (size_t)nb + 1;
  size_t bytes = 64 * 45 + sizeof(rl_avbd_joint_val) * ((size_t)nj + 1) + sizeof(rl_avbd_contact_val) * ((size_t)maxcon + 1) +
                 sizeof(unsigned long long) * (nbs + 2 * ((size_t)nj + 1) + 2 * ((size_t)maxcon + 1)) + sizeof(int) * (2 * nbs + (size_t)m->nbody + 3 * nbs + 2 * (size_t)nj + 3 * nbs + 4 * (size_t)maxcon + 2 * nbs) +
                 R * nbs * (1 + 3 + 4 + 3 + 6 + 3 + 4 + 3 + 4 + 9 + 6 + 3 + 4) + sizeof(rl_avbd_pose) * nbs +
                 sizeof(rl_avbd_joint) * ((size_t)nj + 1) + sizeof(rl_avbd_row) * ((size_t)nr + 1) +
                 2 * sizeof(rl_avbd_contact) * ((size_t)maxcon + 1) + R * 7 * (size_t)m->ngeom +
                 64 + sizeof(rl_avbd_load) * ((size_t)nj + 1) + R * 3 * nbs + (sizeof(int) + R * 46) * nbs + 2 * 64 +
                 R * 2 * ((size_t)nr + 1) + 64;
  rl_avbd *am = calloc(1, sizeof *am);
  char *buf = calloc(1, bytes);
  if (!am || !buf) {
    free(am); free(buf);
    snprintf(err, (size_t)errlen, "avbd: out of memory");
    return NULL;
  }
  am->buffer = buf;
  char *p = (char *)(((uintptr_t)buf + 63) & ~(uintptr_t)63);
  am->prm = *prm;
  am->nb = nb;
  am->body = avbd_take(&p, sizeof(int) * nbs);
  am->slot = avbd_take(&p, sizeof(int) * (size_t)m->nbody);
  am->mass = avbd_take(&p, R * nbs);
  am->inertia = avbd_take(&p, R * 3 * nbs);
  am->iquat = avbd_take(&p, R * 4 * nbs);
  am->ipos = avbd_take(&p, R * 3 * nbs);
  am->pose = avbd_take(&p, sizeof(rl_avbd_pose) * nbs);
  am->vel = avbd_take(&p, R * 6 * nbs);
  am->x0 = avbd_take(&p, R * 3 * nbs);
  am->q0 = avbd_take(&p, R * 4 * nbs);
  am->xp = avbd_take(&p, R * 3 * nbs);
  am->qp = avbd_take(&p, R * 4 * nbs);
  am->dx = avbd_take(&p, R * 3 * nbs);
  am->dq = avbd_take(&p, R * 4 * nbs);
  am->I0 = avbd_take(&p, R * 9 * nbs);
  am->xfrc = avbd_take(&p, R * 6 * nbs);
  am->joint = avbd_take(&p, sizeof(rl_avbd_joint) * ((size_t)nj + 1));
  am->row = avbd_take(&p, sizeof(rl_avbd_row) * ((size_t)nr + 1));
  am->load = avbd_take(&p, sizeof(rl_avbd_load) * ((size_t)nj + 1));
  am->jadr = avbd_take(&p, sizeof(int) * nbs);
  am->jnum = avbd_take(&p, sizeof(int) * nbs);
  am->jlist = avbd_take(&p, sizeof(int) * (2 * (size_t)nj + 1));
  am->maxcon = maxcon;
  am->con = avbd_take(&p, sizeof(rl_avbd_contact) * ((size_t)maxcon + 1));
  am->prev = avbd_take(&p, sizeof(rl_avbd_contact) * ((size_t)maxcon + 1));
  am->cadr = avbd_take(&p, sizeof(int) * nbs);
  am->cnum = avbd_take(&p, sizeof(int) * nbs);
  am->clist = avbd_take(&p, sizeof(int) * (2 * (size_t)maxcon + 1));
  am->gpos = avbd_take(&p, R * 3 * ((size_t)m->ngeom + 1));
  am->gquat = avbd_take(&p, R * 4 * ((size_t)m->ngeom + 1));
  am->color = avbd_take(&p, sizeof(int) * nbs);
  am->order = avbd_take(&p, sizeof(int) * nbs);
  am->vprev = avbd_take(&p, R * 3 * nbs);
  am->comp = avbd_take(&p, sizeof(int) * nbs);
  am->cwork = avbd_take(&p, R * 46 * nbs);
  am->upd = avbd_take(&p, R * 2 * nbs);
  am->guard = avbd_take(&p, sizeof(int) * nbs);
  am->ver = avbd_take(&p, sizeof(unsigned long long) * nbs);
  am->jval = avbd_take(&p, sizeof(rl_avbd_joint_val) * ((size_t)nj + 1));
  am->jver = avbd_take(&p, sizeof(unsigned long long) * 2 * ((size_t)nj + 1));
  am->cval = avbd_take(&p, sizeof(rl_avbd_contact_val) * ((size_t)maxcon + 1));
  am->cver = avbd_take(&p, sizeof(unsigned long long) * 2 * ((size_t)maxcon + 1));
  am->chl = avbd_take(&p, R * 2 * ((size_t)nr + 1));

  /* bodies */
  int s = 0;
  for (int b = 0; b < m->nbody; b++) {
    am->slot[b] = -1;
    if (b == 0 || avbd_is_static(m, b)) continue;
    am->slot[b] = s;
    am->body[s] = b;
    am->mass[s] = m->body_mass[b];
    rl_v3_copy(am->inertia + 3 * s, m->body_inertia + 3 * b);
    rl_q_copy(am->iquat + 4 * s, m->body_iquat + 4 * b);
    rl_v3_copy(am->ipos + 3 * s, m->body_ipos + 3 * b);
    s++;
  }

  /* reference configuration: kinematics at qpos0 */
  rl_data *d = rl_data_alloc(m);
  if (!d) {
    rl_avbd_free(am);
    snprintf(err, (size_t)errlen, "avbd: out of memory");
    return NULL;
  }
  rl_kinematics(m, d);

  /* geoms: relative to the COM frame (dynamic) or world pose (static) */
  for (int g = 0; g < m->ngeom; g++) {
    int b = m->geom_bodyid[g];
    if (avbd_is_static(m, b)) {
      rl_v3_copy(am->gpos + 3 * g, d->geom_xpos + 3 * g);
      rl_q_from_mat(am->gquat + 4 * g, d->geom_xmat + 9 * g);
    } else {
      real t[3], c[4], R[9];
      rl_v3_sub(t, m->geom_pos + 3 * g, m->body_ipos + 3 * b);
      rl_q_to_mat(R, m->body_iquat + 4 * b);
      rl_m3_tmulv(am->gpos + 3 * g, R, t);
      rl_q_conj(c, m->body_iquat + 4 * b);
      rl_q_mul(am->gquat + 4 * g, c, m->geom_quat + 4 * g);
    }
  }

  /* joints */
  int top = 0, k = 0;
  for (int b = 1; b < m->nbody; b++) {
    if (avbd_is_static(m, b)) continue;
    int jn = m->body_jntnum[b], j = m->body_jntadr[b];
    if (jn == 1 && m->jnt_type[j] == RL_JNT_FREE) continue;
    rl_avbd_joint *jt = am->joint + k++;
    memset(jt, 0, sizeof *jt);
    jt->a = am->slot[m->body_parentid[b]];
    jt->b = am->slot[b];
    jt->eq = -1;
    jt->act = -1;
    if (jn == 0) {
      jt->kind = RL_AVBD_WELD;
      jt->jnt = -1;
      real ax[3] = {0, 0, 1};
      avbd_joint_geometry(m, d, am, jt, d->xipos + 3 * b, ax);
    } else {
      int t = m->jnt_type[j], dof = m->jnt_dofadr[j];
      jt->kind = t == RL_JNT_HINGE ? RL_AVBD_HINGE : (t == RL_JNT_SLIDE ? RL_AVBD_SLIDE : RL_AVBD_BALL);
      jt->jnt = j;
      jt->qpos0 = m->qpos0[m->jnt_qposadr[j]];
      jt->range[0] = m->jnt_range[2 * j];
      jt->range[1] = m->jnt_range[2 * j + 1];
      jt->armature = m->dof_armature[dof];
      jt->damping = m->dof_damping[dof];
      jt->frictionloss = m->dof_frictionloss[dof];
      jt->stiffness = m->jnt_stiffness[j];
      jt->spring = m->qpos_spring[m->jnt_qposadr[j]];
      for (int u = 0; u < m->nu; u++)
        if (m->actuator_jntid[u] == j) jt->act = u;
      avbd_joint_geometry(m, d, am, jt, d->xanchor + 3 * j, d->xaxis + 3 * j);
      jt->phi = jt->qpos0;
    }
    avbd_make_rows(am, jt, &top);
  }
  for (int e = 0; e < m->neq; e++) {
    rl_avbd_joint *jt = am->joint + k++;
    memset(jt, 0, sizeof *jt);
    avbd_equality_geometry(m, d, am, e, jt);
    avbd_make_rows(am, jt, &top);
  }
  am->njoint = k;
  am->nrow = top;
  rl_data_free(d);
  for (int j = 0; j < am->njoint; j++) avbd_row_scales(am, m, am->joint + j);
  avbd_components(am);
  am->servo_scaled = am->prm.servo_model;

  /* body → joints (CSR) */
  for (int i = 0; i < nb; i++) am->jnum[i] = 0;
  for (int j = 0; j < am->njoint; j++) {
    if (am->joint[j].a >= 0) am->jnum[am->joint[j].a]++;
    am->jnum[am->joint[j].b]++;
  }
  int a = 0;
  for (int i = 0; i < nb; i++) { am->jadr[i] = a; a += am->jnum[i]; am->jnum[i] = 0; }
  for (int j = 0; j < am->njoint; j++) {
    int ba = am->joint[j].a, bb = am->joint[j].b;
    if (ba >= 0) am->jlist[am->jadr[ba] + am->jnum[ba]++] = j;
    am->jlist[am->jadr[bb] + am->jnum[bb]++] = j;
  }
  return am;
}

void rl_avbd_free(rl_avbd *am) {
  if (!am) return;
  free(am->buffer);
  free(am);
}

/* ------------------------------------------------------- generalized ↔ maximal */

/* Joint coordinate rate from the body velocities: hinge φ̇ = a·(ω_B − ω_A); slide
 * ṡ = (ω_A × a)·(p_B − p_A) + a·(v_B + ω_B × R_B r_B − v_A − ω_A × R_A r_A). */
static real avbd_coord_rate(const rl_avbd *am, const rl_avbd_joint *jt) {
  static const real zero6[6] = {0, 0, 0, 0, 0, 0};
  const rl_avbd_pose *A = avbd_pose_of(am, jt->a), *B = avbd_pose_of(am, jt->b);
  const real *vA = jt->a < 0 ? zero6 : am->vel + 6 * jt->a, *vB = am->vel + 6 * jt->b;
  if (jt->kind == RL_AVBD_HINGE) {
    real a[3], dw[3];
    rl_m3_mulv(a, B->R, jt->axB);
    rl_v3_sub(dw, vB + 3, vA + 3);
    return rl_v3_dot(a, dw);
  }
  real a[3], pA[3], pB[3], uA[3], uB[3], d[3], c[3], wa[3], vpA[3], vpB[3];
  rl_m3_mulv(a, A->R, jt->axA);
  rl_avbd_point(pA, uA, A, jt->rA);
  rl_avbd_point(pB, uB, B, jt->rB);
  rl_v3_sub(d, pB, pA);
  rl_v3_cross(wa, vA + 3, a);
  rl_v3_cross(c, vB + 3, uB);
  rl_v3_add(vpB, vB, c);
  rl_v3_cross(c, vA + 3, uA);
  rl_v3_add(vpA, vA, c);
  rl_v3_sub(vpB, vpB, vpA);
  return rl_v3_dot(wa, d) + rl_v3_dot(a, vpB);
}

void rl_avbd_from_generalized(rl_avbd *am, const rl_model *m, rl_data *d) {
  rl_kinematics(m, d);
  rl_com_pos(m, d);
  rl_com_vel(m, d);
  for (int s = 0; s < am->nb; s++) {
    int b = am->body[s];
    avbd_com_pose(m, d, b, am->pose + s);
    const real *cv = d->cvel + 6 * b;
    real off[3], c[3];
    rl_v3_sub(off, d->xipos + 3 * b, d->subtree_com + 3 * m->body_rootid[b]);
    rl_v3_cross(c, cv, off);
    rl_v3_add(am->vel + 6 * s, cv + 3, c); /* v_com = v_ref + ω × (x_com − ref) */
    rl_v3_copy(am->vel + 6 * s + 3, cv);
    rl_v3_copy(am->vprev + 3 * s, am->vel + 6 * s);
  }
  for (int j = 0; j < am->njoint; j++) {
    rl_avbd_joint *jt = am->joint + j;
    if (jt->jnt >= 0 && jt->kind != RL_AVBD_BALL) jt->phi = d->qpos[m->jnt_qposadr[jt->jnt]];
  }
  for (int r = 0; r < am->nrow; r++) am->row[r].lambda = am->row[r].rho = 0;
  am->ncon = am->nprev = 0;
  am->step0 = am->steps;
  am->time = d->time;
}

/* q ← −q if that is closer to ref (quaternion sign continuity) */
static void avbd_q_continuous(real q[4], const real ref[4]) {
  if (q[0] * ref[0] + q[1] * ref[1] + q[2] * ref[2] + q[3] * ref[3] < 0)
    for (int i = 0; i < 4; i++) q[i] = -q[i];
}

void rl_avbd_to_generalized(const rl_avbd *am, const rl_model *m, rl_data *d) {
  for (int s = 0; s < am->nb; s++) {
    int b = am->body[s];
    if (m->body_jntnum[b] != 1) continue;
    int j = m->body_jntadr[b], qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
    const rl_avbd_pose *P = am->pose + s;
    const real *v = am->vel + 6 * s;
    real qb[4], c[4], Rb[9];
    rl_q_conj(c, am->iquat + 4 * s);
    rl_q_mul(qb, P->q, c); /* body frame q_body = q_com ⊗ iquat⁻¹ */
    rl_q_normalize(qb);
    rl_q_to_mat(Rb, qb);
    switch (m->jnt_type[j]) {
      case RL_JNT_FREE: {
        /* x_body = x_com − R_body·ipos;  v_origin = v_com + ω × (x_body − x_com);  ω_local = R_bodyᵀ ω */
        real xb[3], off[3], wc[3];
        rl_m3_mulv(off, Rb, am->ipos + 3 * s);
        rl_v3_sub(xb, P->x, off);
        rl_v3_copy(d->qpos + qa, xb);
        avbd_q_continuous(qb, d->qpos + qa + 3);
        rl_q_copy(d->qpos + qa + 3, qb);
        rl_v3_scale(off, off, -1);
        rl_v3_cross(wc, v + 3, off);
        rl_v3_add(d->qvel + da, v, wc);
        rl_m3_tmulv(d->qvel + da + 3, Rb, v + 3);
        break;
      }
      case RL_JNT_BALL: {
        /* q_ball = iquat_B ⊗ (q_rel0⁻¹ q_A⁻¹ q_B) ⊗ iquat_B⁻¹;  ω_local = R_bodyᵀ(ω_B − ω_A) */
        const rl_avbd_joint *jt = NULL;
        for (int k = am->jadr[s]; k < am->jadr[s] + am->jnum[s]; k++)
          if (am->joint[am->jlist[k]].jnt == j) jt = am->joint + am->jlist[k];
        if (!jt) break;
        const rl_avbd_pose *A = avbd_pose_of(am, jt->a);
        real r[4], x[4], dw[3];
        rl_q_conj(c, jt->qrel0);
        rl_q_conj(x, A->q);
        rl_q_mul(r, c, x);
        rl_q_mul(r, r, P->q);
        rl_q_mul(r, am->iquat + 4 * s, r);
        rl_q_conj(c, am->iquat + 4 * s);
        rl_q_mul(r, r, c);
        rl_q_normalize(r);
        avbd_q_continuous(r, d->qpos + qa);
        rl_q_copy(d->qpos + qa, r);
        rl_v3_copy(dw, v + 3);
        if (jt->a >= 0) rl_v3_sub(dw, dw, am->vel + 6 * jt->a + 3);
        rl_m3_tmulv(d->qvel + da, Rb, dw);
        break;
      }
      default: {
        const rl_avbd_joint *jt = NULL;
        for (int k = am->jadr[s]; k < am->jadr[s] + am->jnum[s]; k++)
          if (am->joint[am->jlist[k]].jnt == j) jt = am->joint + am->jlist[k];
        if (!jt) break;
        real dA[6], dB[6];
        d->qpos[qa] = rl_avbd_joint_coord(jt, avbd_pose_of(am, jt->a), P, d->qpos[qa], dA, dB);
        d->qvel[da] = avbd_coord_rate(am, jt);
        break;
      }
    }
  }
  d->time = am->time;
}

/* ------------------------------------------------------------------- contacts */

/* world pose of geom g: a static geom's stored pose, or COM pose ⊗ (gpos, gquat) */
static void avbd_geom_pose(const rl_avbd *am, const rl_model *m, int g, real x[3], real R[9]) {
  int s = am->slot[m->geom_bodyid[g]];
  if (s < 0) {
    rl_v3_copy(x, am->gpos + 3 * g);
    rl_q_to_mat(R, am->gquat + 4 * g);
    return;
  }
  const rl_avbd_pose *P = am->pose + s;
  real t[3], q[4];
  rl_m3_mulv(t, P->R, am->gpos + 3 * g);
  rl_v3_add(x, P->x, t);
  rl_q_mul(q, P->q, am->gquat + 4 * g);
  rl_q_normalize(q);
  rl_q_to_mat(R, q);
}

/* support feature f of geom g in its own frame: centre c and radius r */
static void avbd_feature(const rl_model *m, int g, int f, real c[3], real *r) {
  const real *sz = m->geom_size + 3 * g;
  *r = 0;
  rl_v3_zero(c);
  switch (m->geom_type[g]) {
    case RL_GEOM_SPHERE: *r = sz[0]; break;
    case RL_GEOM_CAPSULE: *r = sz[0]; c[2] = f ? sz[1] : -sz[1]; break;
    case RL_GEOM_BOX:
      c[0] = (f & 1) ? sz[0] : -sz[0];
      c[1] = (f & 2) ? sz[1] : -sz[1];
      c[2] = (f & 4) ? sz[2] : -sz[2];
      break;
    default: { /* mesh hull vertex */
      int id = m->geom_dataid[g];
      rl_v3_copy(c, m->mesh_vert + 3 * ((size_t)m->mesh_vertadr[id] + (size_t)f));
      break;
    }
  }
}

/* Ground contacts at distributed support points (A12): feature centre c (radius r) of a geom on a
 * dynamic body against a static plane (point o, normal n): dist = n·(c − o) − r; a contact when
 * dist < margin + 2h‖v_c‖.  Body point p_B = c − r·n, ground point p_A = p_B − dist·n. */
static void avbd_ground_contacts(rl_avbd *am, const rl_model *m, real h) {
  am->ncon = 0;
  if (m->opt.disableflags & (RL_DSBL_CONTACT | RL_DSBL_CONSTRAINT)) return;
  for (int p = 0; p < m->ngeom; p++) {
    if (m->geom_type[p] != RL_GEOM_PLANE || am->slot[m->geom_bodyid[p]] >= 0) continue;
    real o[3], Rp[9], n[3];
    avbd_geom_pose(am, m, p, o, Rp);
    n[0] = Rp[2]; n[1] = Rp[5]; n[2] = Rp[8];
    for (int g = 0; g < m->ngeom; g++) {
      int s = am->slot[m->geom_bodyid[g]];
      int nf = avbd_nfeature(m, g);
      if (s < 0 || nf == 0 || !avbd_pair_filter(m, p, g)) continue;
      real xg[3], Rg[9];
      avbd_geom_pose(am, m, g, xg, Rg);
      const rl_avbd_pose *P = am->pose + s;
      const real *v = am->vel + 6 * s;
      for (int f = 0; f < nf && am->ncon < am->maxcon; f++) {
        real cl[3], c[3], r, t[3];
        avbd_feature(m, g, f, cl, &r);
        rl_m3_mulv(t, Rg, cl);
        rl_v3_add(c, xg, t);
        rl_v3_sub(t, c, o);
        real dist = rl_v3_dot(n, t) - r;
        real lever[3], vc[3];
        rl_v3_sub(lever, c, P->x);
        rl_v3_cross(vc, v + 3, lever);
        rl_v3_add(vc, vc, v);
        if (!(dist < am->prm.contact_margin + 2 * h * rl_v3_norm(vc))) continue;
        rl_avbd_contact *k = am->con + am->ncon++;
        memset(k, 0, sizeof *k);
        k->a = -1;
        k->b = s;
        k->key[0] = p; k->key[1] = g; k->key[2] = f;
        real pB[3], pA[3];
        rl_v3_copy(pB, c);
        rl_v3_addscl(pB, n, -r);
        rl_v3_copy(pA, pB);
        rl_v3_addscl(pA, n, -dist);
        rl_v3_copy(k->rA, pA);
        avbd_to_local(k->rB, P, pB);
        rl_v3_copy(k->cA, pA);
        avbd_to_local(k->cB, P, c);
        k->rad[1] = r;
        rl_v3_copy(k->frame, n);
        avbd_perp(k->frame + 3, k->frame + 6, n);
        k->mu = rl_avbd_max(m->geom_friction[3 * p], m->geom_friction[3 * g]);
        k->dim = 3;
      }
    }
  }
}

/* radius of the spherical surface of geom g at any contact (sphere, capsule: size[0]); 0 for flat or
 * cornered surfaces and for geoms whose curvature varies (ellipsoid, cylinder: body-fixed point kept) */
static real avbd_geom_radius(const rl_model *m, int g) {
  int t = m->geom_type[g];
  return (t == RL_GEOM_SPHERE || t == RL_GEOM_CAPSULE) ? m->geom_size[3 * g] : 0;
}

void rl_avbd_load_contacts(rl_avbd *am, const rl_model *m, const rl_data *d) {
  am->ncon = 0;
  for (int i = 0; i < d->ncon && am->ncon < am->maxcon; i++) {
    const rl_contact *c = d->contact + i;
    if (c->exclude) continue;
    int s1 = am->slot[m->geom_bodyid[c->geom1]], s2 = am->slot[m->geom_bodyid[c->geom2]];
    if (s1 < 0 && s2 < 0) continue;
    rl_avbd_contact *k = am->con + am->ncon++;
    memset(k, 0, sizeof *k);
    k->a = s1;
    k->b = s2;
    k->key[0] = c->geom1; k->key[1] = c->geom2; k->key[2] = -1;
    real p1[3], p2[3];
    rl_v3_copy(p1, c->pos);
    rl_v3_addscl(p1, c->frame, -c->dist / 2);
    rl_v3_copy(p2, c->pos);
    rl_v3_addscl(p2, c->frame, c->dist / 2);
    avbd_to_local(k->rA, avbd_pose_of(am, s1), p1);
    avbd_to_local(k->rB, avbd_pose_of(am, s2), p2);
    /* centres of curvature: A's surface point is c_A + rad_A·n, B's is c_B − rad_B·n */
    k->rad[0] = avbd_geom_radius(m, c->geom1);
    k->rad[1] = avbd_geom_radius(m, c->geom2);
    rl_v3_addscl(p1, c->frame, -k->rad[0]);
    rl_v3_addscl(p2, c->frame, k->rad[1]);
    avbd_to_local(k->cA, avbd_pose_of(am, s1), p1);
    avbd_to_local(k->cB, avbd_pose_of(am, s2), p2);
    memcpy(k->frame, c->frame, sizeof k->frame);
    k->mu = c->mu > 0 ? c->mu : c->friction[0];
    if (c->dim == 1) k->mu = 0;
    k->dim = c->dim;
    k->mu_spin = c->dim >= 4 ? c->friction[2] : 0;
    k->mu_roll = c->dim >= 6 ? c->friction[3] : 0;
  }
}

/* world points and lever arms of a contact at the current poses (rl_avbd_contact_points) */
static void avbd_contact_points(const rl_avbd *am, const rl_avbd_contact *k, real pA[3], real uA[3], real pB[3],
                                real uB[3]) {
  rl_avbd_contact_points(k, avbd_pose_of(am, k->a), avbd_pose_of(am, k->b), pA, uA, pB, uB);
}

/* world centres of curvature and their lever arms at the current poses (rl_avbd_contact_centres) */
static void avbd_contact_centres(const rl_avbd *am, const rl_avbd_contact *k, real cA[3], real vA[3], real cB[3],
                                 real vB[3]) {
  rl_avbd_contact_centres(k, avbd_pose_of(am, k->a), avbd_pose_of(am, k->b), cA, vA, cB, vB);
}

/* contact rows' C at the current poses (rl_avbd_contact_c_at) */
static void avbd_contact_c(const rl_avbd *am, const rl_avbd_contact *k, real C[3]) {
  real pA[3], pB[3], uA[3], uB[3], cA[3], cB[3];
  avbd_contact_points(am, k, pA, uA, pB, uB);
  avbd_contact_centres(am, k, cA, uA, cB, uB);
  rl_avbd_contact_c_at(k, pA, pB, cA, cB, C);
}

/* Δq = q (q⁰)⁻¹ of slot s, NULL for the world */
static const real *avbd_dq_of(const rl_avbd *am, int s) { return s < 0 ? NULL : am->dq + 4 * s; }

/* ------------------------------------------------------------ evaluation cache */

/* pose version of slot s (the world never moves: 0).  Versions start at 1 with the first prediction
   and rise on every move (avbd_moved), so a cached value taken at versions (v_a, v_b) is the value at
   the current poses exactly while both still hold. */
static unsigned long long avbd_ver(const rl_avbd *am, int s) { return s < 0 ? 0 : am->ver[s]; }

/* slot s moved (block update, coarse step, prediction): its cached joint and contact values are stale */
static void avbd_moved(rl_avbd *am, int s) { am->ver[s]++; }

/* 1 (and v ← the current versions) when a value cached at pose versions v of slots a, b is stale */
static int avbd_stale(const rl_avbd *am, int a, int b, unsigned long long v[2]) {
  unsigned long long va = avbd_ver(am, a), vb = avbd_ver(am, b);
  if (v[0] == va && v[1] == vb) return 0;
  v[0] = va;
  v[1] = vb;
  return 1;
}

/* Values of joint j (rl_avbd_joint_val_ok) at the current poses: the cached ones while neither body has
   moved since they were taken, else evaluated now.  A block update reads the joints of its own body
   only, and no two bodies of one color share a joint, so the bodies of one color never touch the same
   entry (the OpenMP sweep stays race-free and bit-identical). */
static const rl_avbd_joint_val *avbd_joint_val(rl_avbd *am, int j) {
  const rl_avbd_joint *jt = am->joint + j;
  if (avbd_stale(am, jt->a, jt->b, am->jver + 2 * j))
    rl_avbd_joint_val_eval(am->jval + j, jt, avbd_pose_of(am, jt->a), avbd_pose_of(am, jt->b));
  return am->jval + j;
}

/* Values of contact i at the current poses, cached as avbd_joint_val. */
static const rl_avbd_contact_val *avbd_contact_val(rl_avbd *am, int i) {
  const rl_avbd_contact *c = am->con + i;
  if (avbd_stale(am, c->a, c->b, am->cver + 2 * i))
    rl_avbd_contact_val_eval(am->cval + i, c, avbd_pose_of(am, c->a), avbd_pose_of(am, c->b));
  return am->cval + i;
}

/* Cache matching (A16): a contact with the key of one in the previous step inherits its multipliers
 * (decayed: λ ·= αγ, ρ ·= γ) and, for a ground contact that was sticking, its static-friction
 * anchor on the ground (reset when the drift exceeds 10 mm).  C⁰ is evaluated after this.
 * A contact between two dynamic bodies carries at most ρ = AVBD_PAIR_RHO_CARRY·ρ₀ into the next step.
 * Why: in a stack (box_stack, collision-module manifolds) the carried ρ of the box–box rows ratchets up
 * step after step towards ρ_max; the block sweeps then stall (budget exhausted from ~0.3 s), the boxes
 * sink and the stack explodes (2.06 m drift in 10 s, f64).  Measured drift over 10 s (box_stack) /
 * 2 s (box_pyramid), f64, by the carry cap: 1: 5.0e-4 / 5.0e-2 m (the pyramid needs some carried ρ);
 * 2, 3: 5.0e-4 / 5.9e-4 m; 5: 1.66 m (stack) ; 10: 8.2e-4 m; 1e2–1e6: 2–8 m.  The window is narrow:
 * this is a stop-gap, not an understood fix. */
static void avbd_contact_warmstart(rl_avbd *am, const rl_model *m, real h) {
  const rl_avbd_param *pr = &am->prm;
  for (int i = 0; i < am->ncon; i++) {
    rl_avbd_contact *k = am->con + i;
    real meff = rl_avbd_min(avbd_mass(am, k->a), avbd_mass(am, k->b));
    k->rho0 = pr->rho_init * meff / (h * h);
    for (int r = 0; r < 3; r++) { k->lambda[r] = 0; k->rho[r] = k->rho0; }
    k->arho0 = pr->rho_init * rl_avbd_min(avbd_mean_inertia(am, m, k->a), avbd_mean_inertia(am, m, k->b)) / (h * h);
    for (int r = 0; r < 3; r++) { k->alam[r] = 0; k->arho[r] = k->arho0; }
    for (int j = 0; j < am->nprev; j++) {
      const rl_avbd_contact *o = am->prev + j;
      if (o->key[0] != k->key[0] || o->key[1] != k->key[1] || o->key[2] != k->key[2]) continue;
      if (k->key[2] < 0) {
        real pa[3], pb[3], ua[3], ub[3], qa[3], qb[3];
        avbd_contact_points(am, k, pa, ua, pb, ub);
        avbd_contact_points(am, o, qa, ua, qb, ub);
        rl_v3_sub(qa, qa, pa);
        if (rl_v3_dot(o->frame, k->frame) < (real)0.99 || rl_v3_norm(qa) > (real)2e-3) continue;
      }
      for (int r = 0; r < 3; r++) {
        k->lambda[r] = o->lambda[r] * pr->alpha * pr->gamma;
        real cap = k->a >= 0 ? AVBD_PAIR_RHO_CARRY : pr->rho_max;
        k->rho[r] = rl_avbd_min(rl_avbd_max(o->rho[r] * pr->gamma, k->rho0), cap * k->rho0);
      }
      for (int r = 0; r < 3; r++) k->alam[r] = o->alam[r] * pr->alpha * pr->gamma;
      if (k->a < 0 && o->stick && o->lambda[0] < 0) {
        real d[3], nd;
        rl_v3_sub(d, o->rA, k->rA);
        nd = rl_v3_dot(d, k->frame);
        rl_v3_addscl(d, k->frame, -nd);
        if (rl_v3_norm(d) < (real)1e-2) { rl_v3_add(k->rA, k->rA, d); rl_v3_add(k->cA, k->cA, d); }
      }
      break;
    }
    avbd_contact_c(am, k, k->c0);
  }
}

/* body → contacts (CSR) */
static void avbd_contact_lists(rl_avbd *am) {
  for (int i = 0; i < am->nb; i++) am->cnum[i] = 0;
  for (int c = 0; c < am->ncon; c++) {
    if (am->con[c].a >= 0) am->cnum[am->con[c].a]++;
    if (am->con[c].b >= 0) am->cnum[am->con[c].b]++;
  }
  int a = 0;
  for (int i = 0; i < am->nb; i++) { am->cadr[i] = a; a += am->cnum[i]; am->cnum[i] = 0; }
  for (int c = 0; c < am->ncon; c++) {
    int s1 = am->con[c].a, s2 = am->con[c].b;
    if (s1 >= 0) am->clist[am->cadr[s1] + am->cnum[s1]++] = c;
    if (s2 >= 0) am->clist[am->cadr[s2] + am->cnum[s2]++] = c;
  }
}

/* ------------------------------------------------------------------- coloring */

/* Greedy coloring of the body graph (edges: joints and contacts between two dynamic bodies), the
 * world excluded; a body whose neighbors use all AVBD_MAXCOLOR colors goes to the overflow color
 * (solved serially after the others).  The sweep order lists bodies color by color. */
static void avbd_color(rl_avbd *am) {
  int nb = am->nb, used = 0;
  for (int i = 0; i < nb; i++) am->color[i] = -1;
  for (int i = 0; i < nb; i++) {
    unsigned long long mask = 0;
    for (int k = am->jadr[i]; k < am->jadr[i] + am->jnum[i]; k++) {
      const rl_avbd_joint *jt = am->joint + am->jlist[k];
      int o = jt->a == i ? jt->b : jt->a;
      if (o >= 0 && am->color[o] >= 0 && am->color[o] < AVBD_MAXCOLOR) mask |= 1ull << am->color[o];
    }
    for (int k = am->cadr[i]; k < am->cadr[i] + am->cnum[i]; k++) {
      const rl_avbd_contact *c = am->con + am->clist[k];
      int o = c->a == i ? c->b : c->a;
      if (o >= 0 && am->color[o] >= 0 && am->color[o] < AVBD_MAXCOLOR) mask |= 1ull << am->color[o];
    }
    int c = 0;
    while (c < AVBD_MAXCOLOR && (mask >> c & 1)) c++;
    if (am->prm.force_overflow) c = AVBD_MAXCOLOR;
    am->color[i] = c;
    if (c < AVBD_MAXCOLOR && c + 1 > used) used = c + 1;
  }
  am->ncolor = used;
  int n = 0, over = 0;
  for (int c = 0; c <= AVBD_MAXCOLOR; c++)
    for (int i = 0; i < nb; i++)
      if (am->color[i] == c) { am->order[n++] = i; over += c == AVBD_MAXCOLOR; }
  am->stat.ncolor = used;
  am->stat.noverflow = over;
}

/* ------------------------------------------------------------- local solve (A7) */

/* 1 if the two-sided rows of joint jt are enforced (equalities can be switched off) */
static int avbd_joint_on(const rl_model *m, const rl_data *d, const rl_avbd_joint *jt) {
  if (m->opt.disableflags & RL_DSBL_CONSTRAINT) return jt->eq < 0; /* joints are structure, not constraints */
  if (jt->eq < 0) return 1;
  return !(m->opt.disableflags & RL_DSBL_EQUALITY) && d->eq_active[jt->eq];
}

/* PD position servo (MuJoCo's): F = g·u + b₀ + b₁·gφ + b₂·g(φ − φⁿ)/h, clamped to forcerange; joint
 * force τ = g·F; curvature −∂τ/∂φ = −g²(b₁ + b₂/h) when unclamped (≥ 0), else 0. */
static real avbd_servo_pd(const rl_model *m, const rl_avbd_joint *jt, int u, real c, real phi, real h, real *k) {
  real g = m->actuator_gear[u];
  const real *fr = m->actuator_forcerange + 2 * u;
  const real *gp = m->actuator_gainprm + RL_NGAIN * u, *bp = m->actuator_biasprm + RL_NBIAS * u;
  real L = g * phi, V = g * (phi - jt->phi_n) / h;
  real gain = gp[0];
  if (m->actuator_gaintype[u] == RL_GAIN_AFFINE) gain += gp[1] * g * jt->phi_n + gp[2] * g * jt->dphi_n;
  real b1 = 0, b2 = 0, F = gain * c;
  if (m->actuator_biastype[u] == RL_BIAS_AFFINE) { b1 = bp[1]; b2 = bp[2]; F += bp[0] + b1 * L + b2 * V; }
  int clamped = 0;
  if (m->actuator_forcelimited[u]) {
    if (F < fr[0]) { F = fr[0]; clamped = 1; }
    if (F > fr[1]) { F = fr[1]; clamped = 1; }
  }
  *k = clamped ? 0 : rl_avbd_max(-g * g * (b1 + b2 / h), 0);
  return g * F;
}

/* BAM servo (rl_avbd_bam, A11), implicit in q̇ = g(φ − φⁿ)/h and in the error e = u − gφ:
 *   duty = clip(kp·e_g·e, ±d_max),  τ_m = kt(duty·V_s − kt·q̇)/R − b_v·q̇,  joint force τ = g·τ_m
 *   curvature −∂τ/∂φ = g²(kt·V_s·kp·e_g/R [duty unsaturated] + (kt²/R + b_v)/h)
 * (Coulomb friction and armature enter through avbd_dry_budget and avbd_armature.) */
static real avbd_servo_bam(const rl_avbd_bam *b, const rl_model *m, const rl_avbd_joint *jt, int u, real c, real phi,
                           real h, real *k) {
  real g = m->actuator_gear[u];
  real qd = g * (phi - jt->phi_n) / h;
  real slope = b->kp * b->error_gain, duty = slope * (c - g * phi);
  int sat = 0;
  if (duty > b->max_duty) { duty = b->max_duty; sat = 1; }
  if (duty < -b->max_duty) { duty = -b->max_duty; sat = 1; }
  real damp = b->kt * b->kt / b->R + b->viscous;
  real tau = b->kt * duty * b->supply / b->R - damp * qd;
  *k = g * g * ((sat ? 0 : b->kt * b->supply * slope / b->R) + damp / h);
  return g * tau;
}

/* Joint force of jt's actuator at coordinate φ (0 without one or with actuation disabled): the control
 * u = ctrl clamped to ctrlrange, then the PD or the BAM model; *k its curvature −∂τ/∂φ. */
static real avbd_servo(const rl_avbd *am, const rl_model *m, const rl_data *d, const rl_avbd_joint *jt, real phi,
                       real h, real *k) {
  int u = jt->act, dis = m->opt.disableflags;
  *k = 0;
  if (u < 0 || (dis & RL_DSBL_ACTUATION)) return 0;
  const real *cr = m->actuator_ctrlrange + 2 * u;
  real c = d->ctrl[u];
  if (m->actuator_ctrllimited[u] && !(dis & RL_DSBL_CLAMPCTRL)) c = c < cr[0] ? cr[0] : (c > cr[1] ? cr[1] : c);
  if (avbd_bam_on(am, m, jt)) return avbd_servo_bam(&am->prm.bam, m, jt, u, c, phi, h, k);
  return avbd_servo_pd(m, jt, u, c, phi, h, k);
}

/* Joint-space terms on the coordinate φ of joint jt (A5, A10): energy gradient G = ∂E/∂φ, curvature k.
 *   limit lo   C = φ − lo ≥ 0:  f = min(λ + ρ C̃, 0),  C̃ = C − α·min(C⁰, 0);  G += f
 *   limit hi   C = hi − φ ≥ 0:  same, G −= f
 *   dry        Δφ = φ − φⁿ:     f = clip(λ + ρΔφ, ±τ_f);  G += f  (k = ρ inside the budget)
 *   damping    G += b(φ − φⁿ)/h            k += b/h
 *   stiffness  G += k_s(φ − φ_spring)      k += k_s
 *   armature   G += a(φ − φⁿ − hφ̇ⁿ)/h²     k += a/h²
 *   servo      τ = avbd_servo (PD: g·F, F = g·u + b₀ + b₁·gφ + b₂·g(φ − φⁿ)/h clamped to forcerange;
 *              BAM: avbd_servo_bam),  G −= τ,  k += −∂τ/∂φ
 * (armature and the dry budget τ_f include the BAM rotor armature and Coulomb friction)
 * Curvature of the bounded rows is conservative (never below the true one): ρ while the row is
 * active or its multiplier is still nonzero, and ρ for dry friction even when clipped.  A single
 * Newton step on the exact piecewise-quadratic curvature overshoots the kink and can cycle
 * between the two sides (observed: a limit hit at 8 rad/s settling into a period-2 cycle).
 * With kkt set, the bounded rows contribute their multipliers λ (for the stationarity residual). */
static void avbd_coord_terms(const rl_avbd *am, const rl_model *m, const rl_data *d, const rl_avbd_joint *jt,
                             real phi, real h, int kkt, real *G, real *k) {
  const rl_avbd_param *pr = &am->prm;
  int dis = m->opt.disableflags;
  *G = 0;
  *k = 0;
  if (m->jnt_limited[jt->jnt] && !(dis & (RL_DSBL_LIMIT | RL_DSBL_CONSTRAINT))) {
    for (int side = 0; side < 2; side++) {
      const rl_avbd_row *r = am->row + (side ? jt->hi_row : jt->lo_row);
      real C = side ? d->jnt_range[2 * jt->jnt + 1] - phi : phi - d->jnt_range[2 * jt->jnt];
      real Ct = C - pr->alpha * rl_avbd_min(r->c0, 0);
      real f = kkt ? r->lambda : rl_avbd_proj_neg(r->lambda + r->rho * Ct);
      *G += side ? -f : f;
      if (f < 0 || r->lambda < 0) *k += r->rho;
    }
  }
  real tf = avbd_dry_budget(am, m, jt);
  if (tf > 0 && !(dis & (RL_DSBL_FRICTIONLOSS | RL_DSBL_CONSTRAINT))) {
    const rl_avbd_row *r = am->row + jt->dry_row;
    real t = r->lambda + r->rho * (phi - jt->phi_n);
    *G += kkt ? r->lambda : rl_avbd_clip(t, tf);
    *k += r->rho;
  }
  if (!(dis & RL_DSBL_PASSIVE)) {
    *G += jt->damping * (phi - jt->phi_n) / h + jt->stiffness * (phi - jt->spring);
    *k += jt->damping / h + jt->stiffness;
  }
  real arm = avbd_armature(am, m, jt), ks;
  *G += arm * (phi - jt->phi_n - h * jt->dphi_n) / (h * h);
  *k += arm / (h * h);
  *G -= avbd_servo(am, m, d, jt, phi, h, &ks);
  *k += ks;
}

/* Local system of body s: H = inertia + Σ ρ JJᵀ + diag geometric stiffness (lower triangle), g = ∇E + Σ J f.
 * kkt = 1: forces are the multipliers λ themselves (H unused).  Returns nothing; H, g filled. */
static void avbd_assemble(rl_avbd *am, const rl_model *m, const rl_data *d, int s, real h, int kkt, real H[36],
                          real g[6]) {
  const rl_avbd_param *pr = &am->prm;
  const rl_avbd_pose *P = am->pose + s;
  real K[3] = {0, 0, 0};
  rl_avbd_inertia(H, g, am->mass[s], am->I0 + 9 * s, P, am->xp + 3 * s, am->qp + 4 * s, h);
  for (int q = am->jadr[s]; q < am->jadr[s] + am->jnum[s]; q++) {
    const rl_avbd_joint *jt = am->joint + am->jlist[q];
    const rl_avbd_pose *A = avbd_pose_of(am, jt->a), *B = avbd_pose_of(am, jt->b);
    int side = jt->b == s;
    if (rl_avbd_joint_val_ok(jt)) { /* rows and hinge coordinate from the cached values */
      const rl_avbd_joint_val *v = avbd_joint_val(am, am->jlist[q]);
      if (avbd_joint_on(m, d, jt)) rl_avbd_joint_assemble_val(H, g, K, jt, am->row + jt->row, v, side, pr->alpha_joint, kkt);
      if (jt->kind == RL_AVBD_HINGE) {
        /* ∂φ/∂δθ_B = a = R_B axB, ∂φ/∂δθ_A = −a (rl_avbd_joint_coord) */
        real dphi[6] = {0, 0, 0, 0, 0, 0}, G, k;
        for (int i = 0; i < 3; i++) dphi[3 + i] = side ? v->arms.a[i] : -v->arms.a[i];
        avbd_coord_terms(am, m, d, jt, rl_avbd_unwrap(v->phi_raw, jt->phi), h, kkt, &G, &k);
        rl_avbd_add_row_ang(H, g, dphi, G, kkt ? 0 : k);
      }
      continue;
    }
    if (avbd_joint_on(m, d, jt)) rl_avbd_joint_assemble(H, g, K, jt, am->row + jt->row, A, B, side, pr->alpha_joint, kkt);
    if (jt->kind == RL_AVBD_HINGE || jt->kind == RL_AVBD_SLIDE) {
      real dA[6], dB[6], G, k;
      real phi = rl_avbd_joint_coord(jt, A, B, jt->phi, dA, dB);
      avbd_coord_terms(am, m, d, jt, phi, h, kkt, &G, &k);
      if (jt->kind == RL_AVBD_HINGE) rl_avbd_add_row_ang(H, g, side ? dB : dA, G, kkt ? 0 : k);
      else rl_avbd_add_row(H, g, side ? dB : dA, G, kkt ? 0 : k);
    }
  }
  for (int q = am->cadr[s]; q < am->cadr[s] + am->cnum[s]; q++) {
    const rl_avbd_contact *c = am->con + am->clist[q];
    rl_avbd_contact_assemble_val(H, g, K, c, avbd_contact_val(am, am->clist[q]), avbd_dq_of(am, c->a),
                                 avbd_dq_of(am, c->b), c->b == s, pr->alpha, kkt);
  }
  for (int i = 0; i < 3; i++) H[7 * (3 + i)] += K[i];
}

/* One block update (A7): H δz = −g (guarded Cholesky), clamp ‖δx‖ ≤ max_dx, ‖δθ‖ ≤ max_dθ,
 * x ← x + δx, q ← Exp(δθ)·q.  Returns the update sizes. */
static void avbd_block_update(rl_avbd *am, const rl_model *m, const rl_data *d, int s, real h) {
  real H[36], g[6];
  avbd_assemble(am, m, d, s, h, 0, H, g);
  am->guard[s] = rl_avbd_body_update(am->pose + s, am->dx + 3 * s, am->dq + 4 * s, am->x0 + 3 * s, am->q0 + 4 * s, H, g,
                                     am->prm.max_dx, am->prm.max_dtheta, am->upd + 2 * s, am->upd + 2 * s + 1);
  avbd_moved(am, s);
}

/* Two block updates of the same color, s0 and s1: both systems assembled (neither reads the other's pose
 * or rows: bodies of one color share no joint or contact), solved together (rl_avbd_chol_solve6_x2, the
 * same operations per body as rl_avbd_chol_solve6), then both bodies moved.  Bit-identical to
 * avbd_block_update(s0) followed by avbd_block_update(s1); the two solves' latency chains overlap. */
static void avbd_block_update2(rl_avbd *am, const rl_model *m, const rl_data *d, int s0, int s1, real h) {
  real H0[36], g0[6], H1[36], g1[6], dz0[6], dz1[6];
  int gd[2];
  avbd_assemble(am, m, d, s0, h, 0, H0, g0);
  avbd_assemble(am, m, d, s1, h, 0, H1, g1);
  rl_avbd_chol_solve6_x2(H0, g0, dz0, H1, g1, dz1, gd);
  const int sl[2] = {s0, s1};
  real *dz[2] = {dz0, dz1};
  for (int l = 0; l < 2; l++) {
    int s = sl[l];
    am->guard[s] = gd[l];
    rl_avbd_body_apply(am->pose + s, am->dx + 3 * s, am->dq + 4 * s, am->x0 + 3 * s, am->q0 + 4 * s, dz[l], am->prm.max_dx,
                       am->prm.max_dtheta, am->upd + 2 * s, am->upd + 2 * s + 1);
    avbd_moved(am, s);
  }
}

int rl_avbd_openmp(void) {
#if defined(_OPENMP)
  return 1;
#else
  return 0;
#endif
}

/* One colored sweep (A17): the bodies color by color in am->order.  A block update writes only its own
 * body (pose, dx, dq, upd, guard) and reads its neighbours, which never share its color, so the bodies
 * of one color may run in any order or at once: with prm.threads > 1 (and OpenMP) they are split over
 * threads; the overflow color, whose bodies may be neighbours, stays serial.  The update sizes and guard
 * counts are gathered per body and reduced afterwards in sweep order, so every result is bit-identical at
 * any thread count.  Returns max ‖δx‖, max ‖δθ‖ of the sweep. */
static void avbd_sweep(rl_avbd *am, const rl_model *m, const rl_data *d, real h, real *ux, real *uth) {
  int nb = am->nb;
  for (int k0 = 0; k0 < nb;) {
    int c = am->color[am->order[k0]], k1 = k0;
    while (k1 < nb && am->color[am->order[k1]] == c) k1++;
#if defined(_OPENMP)
    if (am->prm.threads > 1 && c < AVBD_MAXCOLOR && k1 - k0 > 1) {
#pragma omp parallel for num_threads(am->prm.threads) schedule(static)
      for (int k = k0; k < k1; k++) avbd_block_update(am, m, d, am->order[k], h);
    } else
#endif
    if (c < AVBD_MAXCOLOR) { /* a proper color: its bodies in pairs (avbd_block_update2) */
      int k = k0;
      for (; k + 1 < k1; k += 2) avbd_block_update2(am, m, d, am->order[k], am->order[k + 1], h);
      if (k < k1) avbd_block_update(am, m, d, am->order[k], h);
    } else /* the overflow color: its bodies may be neighbours, one after the other */
      for (int k = k0; k < k1; k++) avbd_block_update(am, m, d, am->order[k], h);
    k0 = k1;
  }
  *ux = *uth = 0;
  for (int k = 0; k < nb; k++) {
    int s = am->order[k];
    *ux = rl_avbd_max(*ux, am->upd[2 * s]);
    *uth = rl_avbd_max(*uth, am->upd[2 * s + 1]);
    am->stat.guarded += am->guard[s];
  }
}

/* --------------------------------------------------------------- coarse step */

/* External contact rows of body s in component c (the other body is the world or outside c): forces and
 * weights as in avbd_assemble (normal, Coulomb-projected tangents; spin/roll rows left out). */
static void avbd_coarse_contacts(const rl_avbd *am, int s, int c, real H[36], real g[6]) {
  const rl_avbd_param *pr = &am->prm;
  for (int q = am->cadr[s]; q < am->cadr[s] + am->cnum[s]; q++) {
    const rl_avbd_contact *k = am->con + am->clist[q];
    int side = k->b == s, o = side ? k->a : k->b;
    if (o >= 0 && am->comp[o] == c) continue;
    real pA[3], pB[3], uA[3], uB[3], dd[3], C[3], f[3];
    avbd_contact_points(am, k, pA, uA, pB, uB);
    rl_v3_sub(dd, pB, pA);
    for (int r = 0; r < 3; r++) C[r] = rl_v3_dot(k->frame + 3 * r, dd);
    f[0] = rl_avbd_proj_neg(k->lambda[0] + k->rho[0] * (C[0] - pr->alpha * rl_avbd_min(k->c0[0], 0)));
    f[1] = k->lambda[1] + k->rho[1] * (C[1] - pr->alpha * k->c0[1]);
    f[2] = k->lambda[2] + k->rho[2] * (C[2] - pr->alpha * k->c0[2]);
    rl_avbd_proj_disc(f + 1, k->mu * -f[0]);
    for (int r = 0; r < 3; r++) {
      const real *w = k->frame + 3 * r;
      real J[6], x[3];
      rl_v3_cross(x, side ? uB : uA, w);
      for (int i = 0; i < 3; i++) { J[i] = side ? w[i] : -w[i]; J[3 + i] = side ? x[i] : -x[i]; }
      real wt = !(f[0] < 0 || k->lambda[0] < 0) ? 0 : k->rho[r];
      if (r > 0 && k->mu <= 0) wt = 0;
      rl_avbd_add_row(H, g, J, f[r], wt);
    }
  }
}

/* H_c += Tᵀ H T, g_c += Tᵀ g with T = [I, −[r]×; 0, I] (H full symmetric, lower triangle of H_c).
 * Column 3+a of T has its nonzeros at rows b < c (the two indices other than a: T[b][3+a], T[c][3+a]
 * from −[r]×) and 3+a (1); the products skip T's zeros and keep the order of the dense sums. */
static void avbd_coarse_add(real Hc[36], real gc[6], const real H[36], const real g[6], const real r[3]) {
  real T[9] = {0, r[2], -r[1], -r[2], 0, r[0], r[1], -r[0], 0}; /* T[k][3+a] = T[3k + a], k, a < 3 */
  real HT[36];
  for (int i = 0; i < 6; i++) {
    for (int j = 0; j < 3; j++) HT[6 * i + j] = H[6 * i + j];
    for (int a = 0; a < 3; a++) {
      int b = a == 0 ? 1 : 0, c = a == 2 ? 1 : 2;
      HT[6 * i + 3 + a] = H[6 * i + b] * T[3 * b + a] + H[6 * i + c] * T[3 * c + a] + H[6 * i + 3 + a];
    }
  }
  for (int i = 0; i < 6; i++) {
    int a = i - 3, b = a == 0 ? 1 : 0, c = a == 2 ? 1 : 2;
    gc[i] += i < 3 ? g[i] : T[3 * b + a] * g[b] + T[3 * c + a] * g[c] + g[i];
    for (int j = 0; j <= i; j++)
      Hc[6 * i + j] += i < 3 ? HT[6 * i + j]
                             : T[3 * b + a] * HT[6 * b + j] + T[3 * c + a] * HT[6 * c + j] + HT[6 * i + j];
  }
}

/* Coarse step on each free articulated component (a rigid motion of all its bodies together): block
 * Gauss–Seidel moves a whole assembly only through its local rows, so a global mode (microduck tipping
 * on its feet: every body turning ~2e-10 … 5e-7 rad per sweep in lockstep) converges at ~0.5 % per
 * sweep.  The joint rows, coordinate terms and servos depend on relative poses only and drop out of a
 * rigid motion δ = (δX, δΘ) about the component's COM x_c; the rest is summed per body with
 * T_s = [I, −[r_s]×; 0, I], r_s = x_s − x_c:  H_c = Σ T_sᵀ H_s T_s,  g_c = Σ T_sᵀ g_s  (H_s, g_s: inertia
 * term and the contact rows with bodies outside the component), H_c δ = −g_c, and every body moves by
 * T_s δ (δx_s = δX + δΘ × r_s, δθ_s = δΘ). */
static void avbd_coarse(rl_avbd *am, real h) {
  int nb = am->nb;
  real *W = am->cwork; /* per component root c: H [36], g [6], x_c [3], M [1] */
  for (int s = 0; s < nb; s++)
    for (int i = 0; i < 46; i++) W[46 * s + i] = 0;
  for (int s = 0; s < nb; s++) {
    int c = am->comp[s];
    if (c < 0) continue;
    rl_v3_addscl(W + 46 * c + 42, am->pose[s].x, am->mass[s]);
    W[46 * c + 45] += am->mass[s];
  }
  for (int s = 0; s < nb; s++) {
    int c = am->comp[s];
    if (c < 0) continue;
    real *Hc = W + 46 * c, *gc = Hc + 36, xc[3], r[3], H[36], g[6];
    rl_v3_scale(xc, Hc + 42, 1 / Hc[45]);
    rl_v3_sub(r, am->pose[s].x, xc);
    rl_avbd_inertia(H, g, am->mass[s], am->I0 + 9 * s, am->pose + s, am->xp + 3 * s, am->qp + 4 * s, h);
    avbd_coarse_contacts(am, s, c, H, g);
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < i; j++) H[6 * j + i] = H[6 * i + j]; /* full symmetric */
    avbd_coarse_add(Hc, gc, H, g, r);
  }
  for (int c = 0; c < nb; c++) {
    if (!(W[46 * c + 45] > 0)) continue;
    real dz[6];
    am->stat.guarded += rl_avbd_chol_solve6(W + 46 * c, W + 46 * c + 36, dz);
    rl_avbd_clamp3(dz, am->prm.max_dx);
    rl_avbd_clamp3(dz + 3, am->prm.max_dtheta);
    for (int i = 0; i < 6; i++) W[46 * c + 36 + i] = dz[i]; /* the step, read below */
  }
  for (int s = 0; s < nb; s++) {
    int c = am->comp[s];
    if (c < 0) continue;
    const real *dz = W + 46 * c + 36;
    real xc[3], r[3], w[3];
    rl_v3_scale(xc, W + 46 * c + 42, 1 / W[46 * c + 45]);
    rl_v3_sub(r, am->pose[s].x, xc);
    rl_v3_cross(w, dz + 3, r);
    rl_v3_add(w, w, dz);
    rl_avbd_body_move(am->pose + s, am->dx + 3 * s, am->dq + 4 * s, am->x0 + 3 * s, am->q0 + 4 * s, w, dz + 3);
    avbd_moved(am, s);
  }
}

/* ------------------------------------------ Chebyshev acceleration of the multipliers */

/* Chebyshev semi-iterative weights (Wang 2015, used on the primal sweeps by VBD): ω₁ = 1,
 * ω₂ = 2/(2 − ρ²), ω_k = 4/(4 − ρ²·ω_{k−1}), ρ the spectral radius of one iteration; k counts the
 * accelerated iterations since the last (re)start. */
static real avbd_cheb_omega(int k, real rho, real prev) {
  if (k <= 1) return 1;
  if (k == 2) return 2 / (2 - rho * rho);
  return 4 / (4 - rho * rho * prev);
}

/* history shift: λ_{k−2} ← λ_{k−1}, λ_{k−1} ← λ (every row) */
static void avbd_cheb_shift(rl_avbd *am) {
  real *l1 = am->chl, *l2 = am->chl + am->nrow;
  for (int r = 0; r < am->nrow; r++) {
    l2[r] = l1[r];
    l1[r] = am->row[r].lambda;
  }
}

/* λ_k = ω(λ̂_k − λ_{k−2}) + λ_{k−2} on the two-sided rows (joints, equalities: no projection), λ̂_k the
 * dual update's multiplier.  On the multipliers, not the poses: extrapolating the poses (x and the
 * rotation increments, VBD's form) diverged on chain8 at every ρ ≥ 0.9 and gained nothing at 0.8
 * (sweeps to a 1e-6 m distance from the dense KKT solution 68 → 71), alone or together with the
 * multipliers, before or after the dual update; the slow mode is the dual ascent λ ← λ + ρC.  The
 * contact rows are left alone: extrapolating them too (λ_n projected on ≤ 0, λ_t on the Coulomb disc)
 * took box_pyramid (2 ms) from 176 to 165 sweeps/step at ρ 0.93 but to 259 at 0.97, and microduck from
 * 61 to 67. */
static void avbd_cheb_extrapolate(rl_avbd *am, real omega) {
  const real *l2 = am->chl + am->nrow;
  for (int r = 0; r < am->nrow; r++) {
    rl_avbd_row *w = am->row + r;
    if (w->kind == RL_AVBD_ROW_LIN || w->kind == RL_AVBD_ROW_ANG) w->lambda = omega * (w->lambda - l2[r]) + l2[r];
  }
}

/* After the dual update of sweep it (prm.cheb_rho > 0; not after the last sweep of a step): from sweep
 * cheb_start on, the next weight and the extrapolation; a sweep whose update u (in tolerances) grew over
 * the last one's restarts the sequence at ω₁ = 1 (without the restart chain8 needs 38/67 sweeps to 1e-6
 * instead of 29/41).  Tried and dropped: restarting on growth of the row residual instead (chain8
 * diverges), rolling λ back on a restart (diverges), switching off for the step at the first growth
 * (chain8 gains 3 %).  Known limit: chain50 at 50 000:1 (every step exhausts the budget) keeps its anchors
 * at ρ ≤ 0.8 (1.6e-9 m) but not at 0.9 (2.8e-4 m) or 0.93 (2.0e-3 m, from 2.6e-9 m off). */
static void avbd_cheb_dual(rl_avbd *am, int it, real u, int *kc, real *omega, real *uprev) {
  const rl_avbd_param *pr = &am->prm;
  if (it >= pr->cheb_start) {
    *kc = (*kc > 0 && u > *uprev) ? 1 : *kc + 1;
    *omega = avbd_cheb_omega(*kc, pr->cheb_rho, *omega);
    if (*kc >= 2) avbd_cheb_extrapolate(am, *omega);
  }
  *uprev = u;
  avbd_cheb_shift(am);
}

/* --------------------------------------------------------------- dual update (A8) */

/* penalty growth ρ ← min(ρ + β·ρ₀·|C̃|/ℓ, ρ_max) */
static real avbd_grow(const rl_avbd_param *pr, real rho, real rho0, real c, real ell) {
  return rl_avbd_min(rho + pr->beta * rho0 * rl_fabs(c) / ell, pr->rho_max * rho0);
}

/* After a sweep: two-sided rows λ ← λ + ρC̃ (ρ grows); one-sided rows λ ← min(λ + ρC̃, 0) (ρ grows
 * only while active); dry friction λ ← clip(λ + ρΔφ, ±τ_f) (ρ grows only inside the budget);
 * contact normals as limits and tangents projected on the Coulomb disc μ(−λ_n⁺) (ρ grows only when
 * sticking).  Residuals r = |λ − Π(λ + ρC̃)|/ρ (= |C̃| for two-sided rows) go to res[0] (lengths) and
 * res[1] (angles). */
static void avbd_dual_update(rl_avbd *am, const rl_model *m, const rl_data *d, real res[2]) {
  const rl_avbd_param *pr = &am->prm;
  int dis = m->opt.disableflags;
  res[0] = res[1] = 0;
  for (int j = 0; j < am->njoint; j++) {
    rl_avbd_joint *jt = am->joint + j;
    const rl_avbd_pose *A = avbd_pose_of(am, jt->a), *B = avbd_pose_of(am, jt->b);
    const rl_avbd_joint_val *v = rl_avbd_joint_val_ok(jt) ? avbd_joint_val(am, j) : NULL;
    if (avbd_joint_on(m, d, jt)) {
      real Cs[6];
      const real *C = Cs;
      rl_avbd_joint_arms arms;
      int n;
      if (v) { C = v->C; n = v->n; }
      else n = rl_avbd_joint_side_rows(jt, A, B, 0, Cs, NULL, &arms);
      for (int r = 0; r < n; r++) {
        rl_avbd_row *w = am->row + jt->row + r;
        w->c = C[r] - pr->alpha_joint * w->c0;
        w->lambda += w->rho * w->c;
        int ang = w->kind == RL_AVBD_ROW_ANG;
        res[ang] = rl_avbd_max(res[ang], rl_fabs(w->c));
        w->rho = avbd_grow(pr, w->rho, w->rho0, w->c, ang ? AVBD_ANG_SCALE : AVBD_LIN_SCALE);
      }
    }
    if (jt->kind != RL_AVBD_HINGE && jt->kind != RL_AVBD_SLIDE) continue;
    real dA[6], dB[6];
    int ang = jt->kind == RL_AVBD_HINGE;
    real ell = ang ? AVBD_ANG_SCALE : AVBD_LIN_SCALE;
    jt->phi = v ? rl_avbd_unwrap(v->phi_raw, jt->phi) : rl_avbd_joint_coord(jt, A, B, jt->phi, dA, dB);
    if (m->jnt_limited[jt->jnt] && !(dis & (RL_DSBL_LIMIT | RL_DSBL_CONSTRAINT))) {
      for (int side = 0; side < 2; side++) {
        rl_avbd_row *w = am->row + (side ? jt->hi_row : jt->lo_row);
        real C = side ? d->jnt_range[2 * jt->jnt + 1] - jt->phi : jt->phi - d->jnt_range[2 * jt->jnt];
        w->c = C - pr->alpha * rl_avbd_min(w->c0, 0);
        real nl = rl_avbd_proj_neg(w->lambda + w->rho * w->c);
        res[ang] = rl_avbd_max(res[ang], rl_fabs(w->lambda - nl) / w->rho);
        w->lambda = nl;
        if (nl < 0) w->rho = avbd_grow(pr, w->rho, w->rho0, w->c, ell);
      }
    }
    real tf = avbd_dry_budget(am, m, jt);
    if (tf > 0 && !(dis & (RL_DSBL_FRICTIONLOSS | RL_DSBL_CONSTRAINT))) {
      rl_avbd_row *w = am->row + jt->dry_row;
      w->c = jt->phi - jt->phi_n;
      real t = w->lambda + w->rho * w->c, nl = rl_avbd_clip(t, tf);
      real rf = rl_fabs(w->lambda - nl) / w->rho;
      res[ang] = rl_avbd_max(res[ang], rf);
      am->stat.dry_residual = rl_avbd_max(am->stat.dry_residual, rf);
      w->lambda = nl;
      if (rl_fabs(t) < tf) w->rho = avbd_grow(pr, w->rho, w->rho0, w->c, ell);
    }
  }
  for (int i = 0; i < am->ncon; i++) {
    rl_avbd_contact *c = am->con + i;
    const real *C = avbd_contact_val(am, i)->C;
    c->c[0] = C[0] - pr->alpha * rl_avbd_min(c->c0[0], 0);
    real nl = rl_avbd_proj_neg(c->lambda[0] + c->rho[0] * c->c[0]);
    res[0] = rl_avbd_max(res[0], rl_fabs(c->lambda[0] - nl) / c->rho[0]);
    c->lambda[0] = nl;
    if (nl < 0) c->rho[0] = avbd_grow(pr, c->rho[0], c->rho0, c->c[0], AVBD_LIN_SCALE);
    real t[2];
    for (int r = 1; r < 3; r++) {
      c->c[r] = C[r] - pr->alpha * c->c0[r];
      t[r - 1] = c->lambda[r] + c->rho[r] * c->c[r];
    }
    c->stick = rl_avbd_proj_disc(t, c->mu * -nl);
    real e0 = (c->lambda[1] - t[0]) / c->rho[1], e1 = (c->lambda[2] - t[1]) / c->rho[2];
    res[0] = rl_avbd_max(res[0], rl_sqrt(e0 * e0 + e1 * e1));
    c->lambda[1] = t[0];
    c->lambda[2] = t[1];
    if (c->stick && nl < 0)
      for (int r = 1; r < 3; r++) c->rho[r] = avbd_grow(pr, c->rho[r], c->rho0, c->c[r], AVBD_LIN_SCALE);
    if (c->mu_spin > 0 || c->mu_roll > 0) {
      real Ca[3], ta[3];
      rl_avbd_contact_ang(c, avbd_dq_of(am, c->a), avbd_dq_of(am, c->b), Ca);
      for (int r = 0; r < 3; r++) ta[r] = c->alam[r] + c->arho[r] * Ca[r];
      int in = rl_avbd_contact_ang_proj(c, ta, -nl);
      for (int r = 0; r < 3; r++) {
        res[1] = rl_avbd_max(res[1], rl_fabs(c->alam[r] - ta[r]) / c->arho[r]);
        c->alam[r] = ta[r];
        if (in && nl < 0) c->arho[r] = avbd_grow(pr, c->arho[r], c->arho0, Ca[r], AVBD_ANG_SCALE);
      }
    }
  }
}

/* ------------------------------------------------------------------------ step */

/* Step start (A17 3.): save x⁰, q⁰, frozen world inertia I₀ = R diag(I) Rᵀ, joint coordinates φⁿ
 * and rates φ̇ⁿ; multipliers decay λ ·= αγ, ρ ← clamp(γρ, ρ₀, ρ_max) with ρ₀ = rho_init·meff/h²;
 * C⁰ of every row. */
static void avbd_begin(rl_avbd *am, const rl_model *m, const rl_data *d, real h) {
  const rl_avbd_param *pr = &am->prm;
  for (int s = 0; s < am->nb; s++) {
    const rl_avbd_pose *P = am->pose + s;
    const real *J = am->inertia + 3 * s;
    rl_v3_copy(am->x0 + 3 * s, P->x);
    rl_q_copy(am->q0 + 4 * s, P->q);
    real *I0 = am->I0 + 9 * s;
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        I0[3 * i + j] = P->R[3 * i] * J[0] * P->R[3 * j] + P->R[3 * i + 1] * J[1] * P->R[3 * j + 1] +
                        P->R[3 * i + 2] * J[2] * P->R[3 * j + 2];
  }
  for (int r = 0; r < am->nrow; r++) {
    rl_avbd_row *w = am->row + r;
    w->rho0 = pr->rho_init * w->meff / (h * h);
    w->lambda *= pr->alpha * pr->gamma;
    w->rho = rl_avbd_min(rl_avbd_max(w->rho * pr->gamma, w->rho0), pr->rho_max * w->rho0);
    w->c0 = 0;
  }
  for (int j = 0; j < am->njoint; j++) {
    rl_avbd_joint *jt = am->joint + j;
    const rl_avbd_pose *A = avbd_pose_of(am, jt->a), *B = avbd_pose_of(am, jt->b);
    real C[6], JA[6][6], JB[6][6];
    int n = rl_avbd_joint_rows(jt, A, B, C, JA, JB);
    for (int r = 0; r < n; r++) am->row[jt->row + r].c0 = C[r];
    if (jt->kind != RL_AVBD_HINGE && jt->kind != RL_AVBD_SLIDE) continue;
    real dA[6], dB[6];
    jt->phi = jt->phi_n = rl_avbd_joint_coord(jt, A, B, jt->phi, dA, dB);
    jt->dphi_n = avbd_coord_rate(am, jt);
    am->row[jt->lo_row].c0 = jt->phi_n - d->jnt_range[2 * jt->jnt];
    am->row[jt->hi_row].c0 = d->jnt_range[2 * jt->jnt + 1] - jt->phi_n;
  }
}

/* Acceleration of the initial iterate (AVBD's adaptive initialization, in the extrapolating form): the
 * previous step's acceleration ã = (v − v_prev)/h, clamped to ‖ã‖ ≤ ‖g‖.  The iterate starts at
 * x + hv + h²(ã + f/m) instead of the prediction x_p = x + hv + h²(g + f/m): a supported body (ã ≈ 0) at
 * rest, a falling one at x_p, a sliding one along its slide.  Only for bodies in contact (a free
 * flier starts at x_p exactly, so its one sweep moves nothing: f32 loses ε|x| per step in x − x_p
 * otherwise, free fall 8e-5 m off in 1 s) and without joints:
 * box_stack 54 → 26 sweeps/step, box_pyramid f64 443 → 361 (0.5 s), but the gravity-share form of it
 * raised microduck (articulated) from 33 to 41 sweeps/step at 1 ms and from 19 to 52 at 2 ms. */
static void avbd_start_accel(real ga[3], const real v[3], const real vprev[3], const real g[3], real h) {
  real gn = rl_v3_norm(g);
  rl_v3_sub(ga, v, vprev);
  rl_v3_scale(ga, ga, 1 / h);
  rl_avbd_clamp3(ga, gn);
}

/* Prediction (A3): x_p = x + hv + h²(g + f/m); q_p from the gyroscopic ω prediction; the iterate
 * starts at the prediction, a body without joints at x + hv + h²(ã + f/m) (avbd_start_accel).  The displacement dx = x − x⁰ is kept separately (starting at
 * hv + h²(g + f/m)) so that the velocity recovery needs no difference of nearly equal positions
 * (in f32 that difference loses ε|x|/h per step). */
static void avbd_predict(rl_avbd *am, const rl_model *m, real h) {
  real grav[3] = {0, 0, 0};
  if (!(m->opt.disableflags & RL_DSBL_GRAVITY)) rl_v3_copy(grav, m->opt.gravity);
  for (int s = 0; s < am->nb; s++) {
    rl_avbd_pose *P = am->pose + s;
    real wp[3], ga[3];
    real zero[3] = {0, 0, 0};
    rl_avbd_predict_lin(am->dx + 3 * s, zero, am->vel + 6 * s, grav, am->xfrc + 6 * s, am->mass[s], h);
    rl_v3_add(am->xp + 3 * s, P->x, am->dx + 3 * s);
    if (am->prm.adaptive_start && am->jnum[s] == 0 && am->cnum[s] > 0 && am->steps > am->step0) {
      avbd_start_accel(ga, am->vel + 6 * s, am->vprev + 3 * s, grav, h);
      rl_avbd_predict_lin(am->dx + 3 * s, zero, am->vel + 6 * s, ga, am->xfrc + 6 * s, am->mass[s], h);
    }
    rl_v3_copy(am->vprev + 3 * s, am->vel + 6 * s);
    rl_avbd_predict_rot(am->qp + 4 * s, wp, P->q, P->R, am->vel + 6 * s + 3, am->inertia + 3 * s, am->xfrc + 6 * s + 3, h);
    /* dq = Exp(h ω'), q_p = dq ⊗ q⁰ */
    real hw[3];
    rl_v3_scale(hw, wp, h);
    rl_so3_exp_quat(am->dq + 4 * s, hw);
    rl_q_mul(am->qp + 4 * s, am->dq + 4 * s, P->q);
    rl_q_normalize(am->qp + 4 * s);
    rl_v3_add(P->x, am->x0 + 3 * s, am->dx + 3 * s);
    rl_q_copy(P->q, am->qp + 4 * s);
    rl_avbd_pose_sync(P);
    avbd_moved(am, s);
  }
}

/* Velocity recovery (A18): v = (x − x⁰)/h (= dx/h, accumulated), ω = Log(q (q⁰)⁻¹)/h (= Log(dq)/h). */
static void avbd_recover_velocity(rl_avbd *am, real h) {
  for (int s = 0; s < am->nb; s++) {
    real *v = am->vel + 6 * s, w[3];
    rl_v3_scale(v, am->dx + 3 * s, 1 / h);
    rl_so3_log_quat(w, am->dq + 4 * s);
    rl_v3_scale(v + 3, w, 1 / h);
  }
}

/* primal residual r of one row into kkt_primal and its length (m) or angle (rad) part:
 * kkt_primal = max(kkt_primal_lin, kkt_primal_ang) */
static void avbd_primal_add(rl_avbd_stat *st, int angular, real r) {
  if (angular) st->kkt_primal_ang = rl_avbd_max(st->kkt_primal_ang, r);
  else st->kkt_primal_lin = rl_avbd_max(st->kkt_primal_lin, r);
  st->kkt_primal = rl_avbd_max(st->kkt_primal, r);
}

/* Diagnostics after the step (A20): anchor/axis errors from the raw rows, penetration, and the KKT
 * residuals of the step problem with the final multipliers. */
static void avbd_diagnostics(rl_avbd *am, const rl_model *m, const rl_data *d, real h) {
  rl_avbd_stat *st = &am->stat;
  st->anchor_err = st->axis_err = st->penetration = 0;
  st->kkt_stationarity_force = st->kkt_stationarity_torque = 0;
  st->kkt_primal = st->kkt_normal_sign = st->kkt_cone = st->kkt_complementarity = 0;
  st->kkt_primal_lin = st->kkt_primal_ang = 0;
  for (int j = 0; j < am->njoint; j++) {
    const rl_avbd_joint *jt = am->joint + j;
    if (!avbd_joint_on(m, d, jt)) continue;
    real C[6], JA[6][6], JB[6][6];
    int n = rl_avbd_joint_rows(jt, avbd_pose_of(am, jt->a), avbd_pose_of(am, jt->b), C, JA, JB);
    real lin = 0, ang = 0;
    for (int r = 0; r < n; r++) {
      const rl_avbd_row *w = am->row + jt->row + r;
      if (w->kind == RL_AVBD_ROW_ANG) ang += C[r] * C[r]; else lin += C[r] * C[r];
      avbd_primal_add(st, w->kind == RL_AVBD_ROW_ANG, rl_fabs(w->c));
    }
    st->anchor_err = rl_avbd_max(st->anchor_err, rl_sqrt(lin));
    st->axis_err = rl_avbd_max(st->axis_err, rl_sqrt(ang));
    if ((jt->kind == RL_AVBD_HINGE || jt->kind == RL_AVBD_SLIDE) && m->jnt_limited[jt->jnt])
      for (int side = 0; side < 2; side++) {
        const rl_avbd_row *w = am->row + (side ? jt->hi_row : jt->lo_row);
        avbd_primal_add(st, jt->kind == RL_AVBD_HINGE, -w->c);
        st->kkt_normal_sign = rl_avbd_max(st->kkt_normal_sign, w->lambda);
        st->kkt_complementarity = rl_avbd_max(st->kkt_complementarity, rl_fabs(w->lambda * w->c));
      }
  }
  for (int i = 0; i < am->ncon; i++) {
    const rl_avbd_contact *c = am->con + i;
    real C[3];
    avbd_contact_c(am, c, C);
    st->penetration = rl_avbd_max(st->penetration, -C[0]);
    avbd_primal_add(st, 0, -c->c[0]);
    st->kkt_normal_sign = rl_avbd_max(st->kkt_normal_sign, c->lambda[0]);
    st->kkt_cone = rl_avbd_max(st->kkt_cone, rl_sqrt(c->lambda[1] * c->lambda[1] + c->lambda[2] * c->lambda[2]) + c->mu * c->lambda[0]);
    st->kkt_complementarity = rl_avbd_max(st->kkt_complementarity, rl_fabs(c->lambda[0] * c->c[0]));
  }
  for (int s = 0; s < am->nb; s++) {
    real H[36], g[6];
    avbd_assemble(am, m, d, s, h, 1, H, g);
    for (int i = 0; i < 3; i++) {
      st->kkt_stationarity_force = rl_avbd_max(st->kkt_stationarity_force, rl_fabs(g[i]));
      st->kkt_stationarity_torque = rl_avbd_max(st->kkt_stationarity_torque, rl_fabs(g[3 + i]));
    }
  }
}

/* Wrench of contact c on its body on side `side` (0: A, 1: B) with the final multipliers, world, at the
 * body's COM: −Σ λ_r J_r over the rows of avbd_assemble, J_r = ±[w_r, l_r × w_r] (w = n, t1, t2; lever
 * l to the centre of curvature for n, to the material point for t) and the spin/roll rows ±[0, frame_k]:
 *   F = ∓Σ_r λ_r w_r,   τ = ∓(Σ_r λ_r l_r × w_r + Σ_k λ_k^ang frame_k)   (upper sign: B). */
static void avbd_contact_wrench(const rl_avbd *am, const rl_avbd_contact *c, int side, real F[3], real tau[3]) {
  real pA[3], pB[3], uA[3], uB[3], vA[3], vB[3], x[3];
  avbd_contact_points(am, c, pA, uA, pB, uB);
  avbd_contact_centres(am, c, pA, vA, pB, vB);
  real sg = side ? -1 : 1;
  rl_v3_zero(F);
  rl_v3_zero(tau);
  for (int r = 0; r < 3; r++) {
    const real *w = c->frame + 3 * r;
    rl_v3_cross(x, r == 0 ? (side ? vB : vA) : (side ? uB : uA), w);
    rl_v3_addscl(F, w, sg * c->lambda[r]);
    rl_v3_addscl(tau, x, sg * c->lambda[r]);
    rl_v3_addscl(tau, w, sg * c->alam[r]);
  }
}

/* Contact load on tree joint jt (rl_avbd_load.contact): with a the world axis and p the anchor,
 *   hinge τ = a·Σ ((x_s − p) × F_s + τ_s),  slide τ = a·Σ F_s,
 * over every contact side s on a body of the subtree below jt (F_s, τ_s: avbd_contact_wrench at the COM x_s). */
static real avbd_contact_load(const rl_avbd *am, const rl_model *m, const rl_avbd_joint *jt, const real a[3],
                              const real p[3]) {
  if (jt->eq >= 0 || jt->jnt < 0) return 0;
  int top = am->body[jt->b];
  real tot = 0;
  for (int i = 0; i < am->ncon; i++) {
    const rl_avbd_contact *c = am->con + i;
    for (int side = 0; side < 2; side++) {
      int s = side ? c->b : c->a;
      if (s < 0 || !avbd_in_subtree(m, am->body[s], top)) continue;
      real F[3], tau[3], arm[3], t[3];
      avbd_contact_wrench(am, c, side, F, tau);
      if (jt->kind == RL_AVBD_SLIDE) { tot += rl_v3_dot(a, F); continue; }
      rl_v3_sub(arm, am->pose[s].x, p);
      rl_v3_cross(t, arm, F);
      rl_v3_add(t, t, tau);
      tot += rl_v3_dot(a, t);
    }
  }
  return tot;
}

/* Joint-space loads (A11, rl_avbd_load) with the final multipliers and coordinate:
 *   servo = avbd_servo(φ),  limit = −(λ_lo − λ_hi),  friction = −λ_f,
 *   reaction on B: F = −Σ λ_r J_B,r[0:3],  τ_p = −Σ λ_r J_B,r[3:6] + (x_B − p) × F,  p = x_B + R_B r_B,
 *   axial = a·τ_p (hinge) or a·F (slide), a the joint axis in the world,
 *   contact = avbd_contact_load (tree joints). */
static void avbd_loads(rl_avbd *am, const rl_model *m, const rl_data *d, real h) {
  int dis = m->opt.disableflags;
  for (int j = 0; j < am->njoint; j++) {
    const rl_avbd_joint *jt = am->joint + j;
    rl_avbd_load *L = am->load + j;
    memset(L, 0, sizeof *L);
    const rl_avbd_pose *A = avbd_pose_of(am, jt->a), *B = avbd_pose_of(am, jt->b);
    if (avbd_joint_on(m, d, jt)) {
      real C[6], JA[6][6], JB[6][6], t[3], arm[3];
      int n = rl_avbd_joint_rows(jt, A, B, C, JA, JB);
      for (int r = 0; r < n; r++)
        for (int i = 0; i < 6; i++) L->reaction[i] -= am->row[jt->row + r].lambda * JB[r][i];
      rl_m3_mulv(arm, B->R, jt->rB);
      rl_v3_scale(arm, arm, -1);
      rl_v3_cross(t, arm, L->reaction);
      rl_v3_add(L->reaction + 3, L->reaction + 3, t);
    }
    if (jt->kind != RL_AVBD_HINGE && jt->kind != RL_AVBD_SLIDE) continue;
    real a[3], k, p[3], u[3];
    rl_m3_mulv(a, A->R, jt->axA);
    L->axial = rl_v3_dot(a, L->reaction + (jt->kind == RL_AVBD_HINGE ? 3 : 0));
    rl_avbd_point(p, u, B, jt->rB);
    L->contact = avbd_contact_load(am, m, jt, a, p);
    L->servo = avbd_servo(am, m, d, jt, jt->phi, h, &k);
    if (m->jnt_limited[jt->jnt] && !(dis & (RL_DSBL_LIMIT | RL_DSBL_CONSTRAINT)))
      L->limit = -(am->row[jt->lo_row].lambda - am->row[jt->hi_row].lambda);
    if (avbd_dry_budget(am, m, jt) > 0 && !(dis & (RL_DSBL_FRICTIONLOSS | RL_DSBL_CONSTRAINT)))
      L->friction = -am->row[jt->dry_row].lambda;
  }
}

/* Row scales follow the servo model (the BAM armature enters ρ₀): recomputed when it changes. */
static void avbd_sync_scales(rl_avbd *am, const rl_model *m) {
  if (am->servo_scaled == am->prm.servo_model) return;
  for (int j = 0; j < am->njoint; j++) avbd_row_scales(am, m, am->joint + j);
  avbd_components(am);
  am->servo_scaled = am->prm.servo_model;
}

static int avbd_state_finite(const rl_avbd *am) {
  for (int s = 0; s < am->nb; s++)
    for (int i = 0; i < 3; i++)
      if (!rl_isfinite(am->pose[s].x[i]) || !rl_isfinite(am->pose[s].q[i + 1]) || !rl_isfinite(am->vel[6 * s + i]) ||
          !rl_isfinite(am->vel[6 * s + 3 + i]))
        return 0;
  return 1;
}

/* Tolerances of the step's residual and update test (f64): tol·max(1, (h/h₀)²), h₀ = 1 ms.  A sweep's
 * update and a row's residual are displacements, whose scale within a step grows as h² (h²g, h·v); at
 * a fixed tol a 2 ms step solved its problem to a 4× smaller acceleration error tol/h² than a 1 ms one.
 * Above 1 ms the test holds the acceleration error at tol/h₀² instead; at or below 1 ms it is tol.
 * f32 keeps tol at every h: its tolerances sit near the rounding floor of the poses, and the chain8 f32
 * order fit (noise-dominated below 1 ms already) fell to 0.06 with the scaled ones. */
static void avbd_step_tolerance(const rl_avbd_param *pr, real h, real *tl, real *ta) {
#if defined(RL_REAL_F64)
  real sc = h > AVBD_TOL_H ? (h / AVBD_TOL_H) * (h / AVBD_TOL_H) : 1;
#else
  real sc = 1;
  (void)h;
#endif
  *tl = pr->tol_lin * sc;
  *ta = pr->tol_ang * sc;
}

rl_status rl_avbd_step_maximal(rl_avbd *am, const rl_model *m, rl_data *d) {
  real h = m->opt.timestep;
  rl_avbd_stat *st = &am->stat;
  memset(st, 0, sizeof *st);
  /* contacts at the step-start poses (normal frozen within the step) */
  avbd_sync_scales(am, m);
  if (am->prm.contacts == RL_AVBD_CONTACTS_GROUND) avbd_ground_contacts(am, m, h);
  else if (am->prm.contacts == RL_AVBD_CONTACTS_NONE) am->ncon = 0;
  avbd_contact_warmstart(am, m, h);
  avbd_contact_lists(am);
  avbd_color(am);
  st->ncon = am->ncon;
  avbd_begin(am, m, d, h);
  avbd_predict(am, m, h);
  /* colored block sweeps + dual update until the residual test or the budget */
  const rl_avbd_param *pr = &am->prm;
  real tl, ta;
  avbd_step_tolerance(pr, h, &tl, &ta);
  int it, kc = 0;
  real omega = 1, uprev = 0;
  if (pr->cheb_rho > 0) avbd_cheb_shift(am);
  for (it = 0; it < pr->iterations; it++) {
    real ux, uth, res[2];
    avbd_sweep(am, m, d, h, &ux, &uth);
    if (pr->coarse > 0 && (it + 1) % pr->coarse == 0) avbd_coarse(am, h);
    st->dry_residual = 0;
    avbd_dual_update(am, m, d, res);
    st->update = ux;
    if (ux <= tl && uth <= ta && res[0] <= tl && res[1] <= ta) {
      st->converged = 1;
      it++;
      break;
    }
    /* the extrapolated multipliers only where another sweep follows (the step ends on a dual update) */
    if (pr->cheb_rho > 0 && it + 1 < pr->iterations)
      avbd_cheb_dual(am, it, rl_avbd_max(ux / (tl > 0 ? tl : 1), uth / (ta > 0 ? ta : 1)), &kc, &omega, &uprev);
  }
  st->iterations = it;
  avbd_recover_velocity(am, h);
  if (!avbd_state_finite(am)) {
    for (int s = 0; s < am->nb; s++) {
      rl_v3_copy(am->pose[s].x, am->x0 + 3 * s);
      rl_q_copy(am->pose[s].q, am->q0 + 4 * s);
      rl_avbd_pose_sync(am->pose + s);
      for (int i = 0; i < 6; i++) am->vel[6 * s + i] = 0;
    }
    for (int r = 0; r < am->nrow; r++) am->row[r].lambda = 0;
    am->ncon = 0;
    am->nprev = 0;
    d->warning[RL_WARN_BADQACC]++;
    return RL_ERR_NUMERIC;
  }
  avbd_diagnostics(am, m, d, h);
  avbd_loads(am, m, d, h);
  /* contact cache for the next step */
  memcpy(am->prev, am->con, sizeof(rl_avbd_contact) * (size_t)am->ncon);
  am->nprev = am->ncon;
  am->steps++;
  am->sweeps += st->iterations;
  am->exhausted += !st->converged;
  am->time += h;
  d->time = am->time;
  return RL_OK;
}

/* The whole step: rl_collision's contacts at the step-start poses when prm.contacts says so (qpos from
   the AVBD state, kinematics, collision, load), the step of the AVBD state, qpos/qvel written back. */
rl_status rl_avbd_step(rl_avbd *am, const rl_model *m, rl_data *d) {
  if (am->prm.contacts == RL_AVBD_CONTACTS_DATA) {
    rl_avbd_to_generalized(am, m, d);
    rl_kinematics(m, d);
    rl_collision(m, d);
    rl_avbd_load_contacts(am, m, d);
  }
  rl_status st = rl_avbd_step_maximal(am, m, d);
  rl_avbd_to_generalized(am, m, d);
  return st;
}
