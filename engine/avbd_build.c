/* avbd_build.c — the AVBD model: parameters (the precision's defaults, the model's contact source and
 * overrides), the build (model → dynamic bodies at their COM, joints and equalities → augmented-Lagrangian
 * rows, row scales, components for the coarse step) and the generalized ↔ maximal mapping of the state. */
#include <stdlib.h>
#include <string.h>
#include "avbd_internal.h"

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
  p->rho_tree = (real)1e4;
#if defined(RL_REAL_F64)
  /* joints: steady gap ≈ tol/(1 − α); microduck 1 ms anchor gap 2.0e-7 → 2.5e-8 m.  f32 keeps 0.95:
     correcting half the rounding noise of the poses (~ε|x|) each step put velocity noise into chain8
     (order test 0.36 at α 0.5) */
  p->alpha_joint = (real)0.5;
  /* ≈ 10 × the stopping tolerance: the inward creep a converged step may leave stays inside the slop
     (box_pyramid 1 s at 2 ms, unconverged steps of 501: slop 0 (all pushed out) 262, 5e-8 71, 1e-7 0, 2e-7 0) */
  p->slop = (real)1e-7;
  p->adaptive_start = 1;
  p->tol_lin = (real)1e-8;
  p->tol_ang = (real)1e-8;
#else
  p->alpha_joint = (real)0.95;
  p->slop = (real)1e-6; /* 2 × the stopping tolerance (5e-6 let mocap_pusher's paddle sink 4 mm into the box) */
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
  /* a step flagged converged is within the stated distance of its exact solution (avbd_tail_distance) */
  p->stop = RL_AVBD_STOP_DISTANCE;
}

/* the model's AVBD overrides (--opt avbd_*; 0 keeps the default): sweep budget, stopping tolerance
   (tol_ang keeps its default ratio to tol_lin), Chebyshev ρ, stopping test, block, rest overlaps, slop */
static void avbd_model_param(rl_avbd_param *p, const rl_option *o) {
  if (o->avbd_iterations > 0) p->iterations = o->avbd_iterations;
  if (o->avbd_tolerance > 0) {
    p->tol_ang *= o->avbd_tolerance / p->tol_lin;
    p->tol_lin = o->avbd_tolerance;
  }
  if (o->avbd_cheb_rho > 0) p->cheb_rho = o->avbd_cheb_rho;
  if (o->avbd_stop > 0) p->stop = o->avbd_stop;
  if (o->avbd_block > 0) p->block = o->avbd_block;
  if (o->avbd_rest_overlaps > 0) p->rest_overlaps = o->avbd_rest_overlaps;
  if (o->avbd_slop > 0) p->slop = o->avbd_slop;
}

/* mocap id of the mocap body that static body b is fixed to (b itself or an ancestor: a body without dofs
   below a mocap body moves with it), −1 if b is fixed to the world */
RL_HDFN int avbd_mocap_of(const rl_model *m, int b) {
  for (; b > 0; b = m->body_parentid[b])
    if (m->body_mocapid[b] >= 0) return m->body_mocapid[b];
  return -1;
}

/* 1 if some pair of geoms g1 < g2 on two different dynamic bodies passes the contype/conaffinity filter
   (parent–child and <exclude> not applied: a dynamic–dynamic pair is possible, so rl_collision is needed) */
int rl_avbd_dynamic_pairs(const rl_model *m) {
  for (int g1 = 0; g1 < m->ngeom; g1++)
    for (int g2 = g1 + 1; g2 < m->ngeom; g2++) {
      int b1 = m->geom_bodyid[g1], b2 = m->geom_bodyid[g2];
      if (b1 == b2 || m->body_weldid[b1] == 0 || m->body_weldid[b2] == 0) continue;
      if (avbd_pair_filter(m, g1, g2)) return 1;
    }
  return 0;
}

/* 1 if a height-field geom passes the contype/conaffinity filter with a geom of another body: its contacts come
   only from rl_collision (the own ground contacts are against planes) */
static int avbd_hfield_pairs(const rl_model *m) {
  for (int h = 0; h < m->ngeom; h++) {
    if (m->geom_type[h] != RL_GEOM_HFIELD) continue;
    for (int g = 0; g < m->ngeom; g++)
      if (m->geom_bodyid[g] != m->geom_bodyid[h] && avbd_pair_filter(m, h, g)) return 1;
  }
  return 0;
}

/* 1 if a static geom that is not a plane (a box, capsule, sphere, mesh, ... fixed to the world) or any geom
   that moves with a mocap body passes the contype/conaffinity filter with a geom on a dynamic body: the own
   ground contacts test support points against planes fixed where the build found them, so such geoms are
   seen only by rl_collision (at their step-start poses) */
static int avbd_static_solid_pairs(const rl_model *m) {
  for (int s = 0; s < m->ngeom; s++) {
    int t = m->geom_type[s], b = m->geom_bodyid[s];
    if ((t == RL_GEOM_PLANE && avbd_mocap_of(m, b) < 0) || m->body_weldid[b] != 0) continue;
    for (int g = 0; g < m->ngeom; g++)
      if (m->body_weldid[m->geom_bodyid[g]] != 0 && avbd_pair_filter(m, s, g)) return 1;
  }
  return 0;
}

/* defaults of the precision, the contact source of the model (rl_collision's contacts where two dynamic
   bodies can touch, a height field can be touched, a static geom other than a plane or a geom that moves with a
   mocap body can be touched, or the model lists explicit <contact><pair> elements (their contacts bypass the
   contype/conaffinity filter and carry their own condim, friction, margin and gap: only rl_collision makes
   them), or only one kind of pair collides (<option collision>), or the contact override is on, else the own ground
   contacts), then the model's overrides */
rl_avbd_param rl_avbd_default_param(const rl_model *m) {
  rl_avbd_param p;
  memset(&p, 0, sizeof p);
  avbd_default_param(&p);
  p.contacts = rl_avbd_dynamic_pairs(m) || avbd_hfield_pairs(m) || avbd_static_solid_pairs(m) || m->npair > 0 ||
                       m->opt.pair_source != RL_PAIRS_ALL || (m->opt.enableflags & RL_ENBL_OVERRIDE)
                   ? RL_AVBD_CONTACTS_DATA
                   : RL_AVBD_CONTACTS_GROUND;
  avbd_model_param(&p, &m->opt);
  return p;
}

/* a unit vector ⊥ n and n × it (a right-handed frame n, t1, t2) */
RL_HDFN void avbd_perp(real t1[3], real t2[3], const real n[3]) {
  real e[3] = {0, 0, 0};
  int k = (rl_fabs(n[0]) < rl_fabs(n[1])) ? (rl_fabs(n[0]) < rl_fabs(n[2]) ? 0 : 2)
                                          : (rl_fabs(n[1]) < rl_fabs(n[2]) ? 1 : 2);
  e[k] = 1;
  rl_v3_cross(t1, n, e);
  rl_v3_normalize(t1);
  rl_v3_cross(t2, n, t1);
}

/* support features of geom g for ground contacts: 0 if none */
RL_HDFN int avbd_nfeature(const rl_model *m, int g) {
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

/* MuJoCo's pair filters that apply to a geom against a static or dynamic body's geom: contype/conaffinity,
   (ct1 & ca2) || (ct2 & ca1), and the <exclude> list */
RL_HDFN int avbd_pair_filter(const rl_model *m, int g1, int g2) {
  return rl_pair_bitmask(m, g1, g2) && !rl_pair_excluded(m, m->geom_bodyid[g1], m->geom_bodyid[g2]);
}

RL_HDFN static int avbd_is_static(const rl_model *m, int b) { return b == 0 || m->body_weldid[b] == 0; }

/* 1 for an equality between body poses (connect, weld: a joint of rows), 0 for one between coordinates */
RL_HDFN static int avbd_pose_equality(const rl_model *m, int e) {
  return m->eq_type[e] == RL_EQ_CONNECT || m->eq_type[e] == RL_EQ_WELD;
}

static int avbd_ground_capacity(const rl_model *m) {
  int n = 0;
  for (int p = 0; p < m->ngeom; p++) {
    if (m->geom_type[p] != RL_GEOM_PLANE || !avbd_is_static(m, m->geom_bodyid[p]) ||
        avbd_mocap_of(m, m->geom_bodyid[p]) >= 0)
      continue;
    for (int g = 0; g < m->ngeom; g++)
      if (!avbd_is_static(m, m->geom_bodyid[g]) && avbd_pair_filter(m, p, g)) n += avbd_nfeature(m, g);
  }
  return n;
}

/* Rotational scale of slot s for ρ₀: mean principal inertia + the armature of every joint at the body
 * (a joint's armature couples the body's rotation to its neighbour's as strongly as an inertia: a row
 * whose ρ is far below it converges at the rate ρ/armature per dual update). */
/* 1 if actuator u is a position servo (gain fixed, bias affine with b₁ < 0: F = kp(u − φ) − kv φ̇) */
RL_HDFN static int avbd_is_position(const rl_model *m, int u) {
  return m->actuator_biastype[u] == RL_BIAS_AFFINE && m->actuator_biasprm[RL_NBIAS * u + 1] < 0;
}

/* 1 if joint jt's actuator runs the BAM servo model (prm.servo_model = BAM and a position servo) */
RL_HDFN int avbd_bam_on(const rl_avbd *am, const rl_model *m, const rl_avbd_joint *jt) {
  return am->prm.servo_model == RL_AVBD_SERVO_BAM && jt->act >= 0 && avbd_is_position(m, jt->act);
}

/* armature of the coordinate: a = dof_armature + (BAM) g²·bam.armature */
RL_HDFN real avbd_armature(const rl_avbd *am, const rl_model *m, const rl_avbd_joint *jt) {
  if (!avbd_bam_on(am, m, jt)) return jt->armature;
  real g = m->actuator_gear[jt->act];
  return jt->armature + g * g * am->prm.bam.armature;
}

/* dry-friction budget of the coordinate: τ_f = frictionloss + (BAM) |g|·bam.friction */
RL_HDFN real avbd_dry_budget(const rl_avbd *am, const rl_model *m, const rl_avbd_joint *jt) {
  if (!avbd_bam_on(am, m, jt)) return jt->frictionloss;
  return jt->frictionloss + rl_fabs(m->actuator_gear[jt->act]) * am->prm.bam.friction;
}

RL_HDFN real avbd_mean_inertia(const rl_avbd *am, const rl_model *m, int s) {
  if (s < 0) return (real)1e30;
  const real *I = am->inertia + 3 * s;
  real r = (I[0] + I[1] + I[2]) / 3;
  for (int j = 0; j < am->njoint; j++) {
    const rl_avbd_joint *jt = am->joint + j;
    if (jt->a != s && jt->b != s) continue;
    if (jt->kind != RL_AVBD_COMPOUND) r += avbd_armature(am, m, jt);
    else
      for (int k = 0; k < am->cmp[jt->cmp].n; k++)
        if (am->cmp[jt->cmp].sub[k].kind != RL_AVBD_BALL) r += avbd_armature(am, m, am->cmp[jt->cmp].sub + k);
  }
  return r;
}

/* 1 if tendon t acts: a spring or damper, a limit, friction loss, an actuator or an equality on it (an inert
   tendon only measures a length, which AVBD has no use for) */
static int avbd_tendon_acts(const rl_model *m, int t) {
  int acts = m->tendon_stiffness[t] != 0 || m->tendon_damping[t] != 0 || m->tendon_limited[t] ||
             m->tendon_frictionloss[t] > 0;
  for (int u = 0; u < m->nu; u++) acts |= m->actuator_trntype[u] == RL_TRN_TENDON && m->actuator_trnid[2 * u] == t;
  for (int e = 0; e < m->neq; e++)
    acts |= m->eq_type[e] == RL_EQ_TENDON && (m->eq_obj1id[e] == t || m->eq_obj2id[e] == t);
  return acts;
}

/* Tendons AVBD models: inert ones, fixed tendons L = Σ cᵢφᵢ over hinge/slide joints with a spring, a damper and
   actuators (terms on each joint coordinate, avbd_tendon_terms), and spatial tendons with a spring, a damper and
   actuators (terms on each body of the path, avbd_tendon.c) unless they run over a mocap-driven body; limits and
   equalities and friction loss on either kind are coordinate rows (rl_avbd_crow).  Returns 0 and writes err. */
static int avbd_tendon_check(const rl_model *m, int t, char *err, int errlen) {
  const char *name = rl_model_name(m, m->name_tendonadr[t]);
  if (!avbd_tendon_acts(m, t)) return 1;
  int w0 = m->tendon_adr[t], spatial = m->wrap_type[w0] != RL_WRAP_JOINT;
  if (spatial) {
    for (int w = w0; w < w0 + m->tendon_num[t]; w++) {
      int ty = m->wrap_type[w], id = m->wrap_objid[w];
      int b = ty == RL_WRAP_SITE ? m->site_bodyid[id] : (ty == RL_WRAP_PULLEY ? 0 : m->geom_bodyid[id]);
      if (b > 0 && avbd_is_static(m, b) && avbd_mocap_of(m, b) >= 0) {
        snprintf(err, (size_t)errlen,
                 "avbd: tendon '%s' runs over body '%s', which moves with a mocap body: avbd evaluates a spatial "
                 "tendon's path on static bodies at their fixed pose (use --engine newton)",
                 name, rl_model_name(m, m->name_bodyadr[b]));
        return 0;
      }
    }
    return 1;
  }
  for (int w = w0; w < w0 + m->tendon_num[t]; w++) {
    int j = m->wrap_objid[w];
    if (m->jnt_type[j] != RL_JNT_HINGE && m->jnt_type[j] != RL_JNT_SLIDE) {
      snprintf(err, (size_t)errlen, "avbd: tendon '%s' runs through joint '%s', which is not a hinge or slide joint", name,
               rl_model_name(m, m->name_jntadr[j]));
      return 0;
    }
  }
  return 1;
}

/* slot s into the list l[0..n) unless already there (−1: a static body), returns the new n */
static int avbd_add_unique(int *l, int n, int s) {
  for (int i = 0; i < n; i++)
    if (l[i] == s) return n;
  l[n] = s;
  return n + 1;
}

/* ball and free joints of dynamic bodies (rl_avbd_mdof) and their rows (a cone limit, one dry-friction row per dof) */
static int avbd_mdof_count(const rl_model *m, int *nrow) {
  int n = 0;
  *nrow = 0;
  for (int j = 0; j < m->njnt; j++) {
    int t = m->jnt_type[j];
    if ((t != RL_JNT_BALL && t != RL_JNT_FREE) || avbd_is_static(m, m->jnt_bodyid[j])) continue;
    n++;
    *nrow += 1 + (t == RL_JNT_FREE ? 6 : 3);
  }
  return n;
}

/* ρ₀ scales of record f's rows: rotational dofs and the cone limit the rotational scale of the lighter side (mean
   principal inertia + armature, avbd_mean_inertia), a free joint's translational dofs the body's mass */
RL_HDFN void avbd_mdof_scales(rl_avbd *am, const rl_model *m, const rl_avbd_mdof *f) {
  real mang = rl_avbd_min(avbd_mean_inertia(am, m, f->a), avbd_mean_inertia(am, m, f->b));
  int r0 = f->type == RL_JNT_FREE ? 3 : 0;
  am->row[f->lim_row].meff = mang;
  for (int i = 0; i < f->nd; i++) am->row[f->dry_row + i].meff = i < r0 ? am->mass[f->b] : mang;
}

/* The records of the ball and free joints (after the joints: a ball's joint entry or compound component), their rows
   (rows top…: the cone limit, then nd dry-friction rows), the joint → ball and slot → free joint maps */
static void avbd_mdof_build(rl_avbd *am, const rl_model *m, int *top) {
  int n = 0;
  for (int j = 0; j < am->njoint; j++) am->jmdof[j] = -1;
  for (int s = 0; s < am->nb; s++) am->smdof[s] = -1;
  for (int j = 0; j < m->njnt; j++) {
    int t = m->jnt_type[j], b = m->jnt_bodyid[j], dof = m->jnt_dofadr[j];
    if ((t != RL_JNT_BALL && t != RL_JNT_FREE) || avbd_is_static(m, b)) continue;
    rl_avbd_mdof *f = am->mdof + n;
    memset(f, 0, sizeof *f);
    f->jnt = j;
    f->type = t;
    f->nd = t == RL_JNT_FREE ? 6 : 3;
    f->b = am->slot[b];
    f->a = t == RL_JNT_FREE ? -1 : am->slot[m->body_parentid[b]];
    f->joint = f->comp = -1;
    for (int i = 0; i < am->njoint && t == RL_JNT_BALL; i++) {
      const rl_avbd_joint *jt = am->joint + i;
      if (jt->kind == RL_AVBD_BALL && jt->jnt == j) f->joint = i;
      if (jt->kind == RL_AVBD_COMPOUND)
        for (int k = 0; k < am->cmp[jt->cmp].n; k++)
          if (am->cmp[jt->cmp].jnt[k] == j) f->joint = i, f->comp = k;
    }
    if (f->joint >= 0) am->jmdof[f->joint] = n;
    else am->smdof[f->b] = n;
    f->lim_row = (*top)++;
    f->dry_row = *top;
    *top += f->nd;
    am->row[f->lim_row].kind = RL_AVBD_ROW_LIMHI;
    for (int i = 0; i < f->nd; i++) am->row[f->dry_row + i].kind = RL_AVBD_ROW_DRY;
    int terms = m->jnt_stiffness[j] != 0 || (t == RL_JNT_BALL && m->jnt_limited[j]);
    for (int i = 0; i < f->nd; i++)
      terms |= m->dof_damping[dof + i] != 0 || m->dof_armature[dof + i] != 0 || m->dof_frictionloss[dof + i] > 0;
    f->terms = terms;
    f->used = terms;
    for (int u = 0; u < m->nu; u++) f->used |= avbd_joint_trn(m, u, j);
    n++;
  }
  am->nmdof = n;
}

/* The actuators whose transmission is a wrench on body poses (avbd_wrench_trn: site, ball or free joint, body), each
   with its joint record and its moment storage (nb × 6 reals each) */
static void avbd_wrench_build(rl_avbd *am, const rl_model *m) {
  int n = 0;
  for (int u = 0; u < m->nu; u++) {
    am->uwrench[u] = -1;
    if (!avbd_wrench_trn(m, u)) continue;
    rl_avbd_wrench *w = am->wrench + n;
    memset(w, 0, sizeof *w);
    w->u = u;
    w->mdof = -1;
    w->spat = -1;
    w->jadr = 6 * am->nb * n;
    int t = m->actuator_trntype[u];
    if (t == RL_TRN_JOINT || t == RL_TRN_JOINTINPARENT)
      for (int k = 0; k < am->nmdof; k++)
        if (am->mdof[k].jnt == m->actuator_trnid[2 * u]) w->mdof = k;
    am->uwrench[u] = n++;
  }
  am->nwrench = n;
}

/* The slots an implicit wrench actuator u may act on into l[0..k) (−1 once for a static body: the world takes the
   reaction, or there is none): a site's body; a ball joint's two bodies, a free joint's body; a body transmission's
   body and every body with a geom that may touch one of its geoms (the contype/conaffinity filter or an explicit
   pair).  Returns the new k. */
static int avbd_wrench_slots(const rl_avbd *am, const rl_model *m, int u, int *l, int k) {
  int t = m->actuator_trntype[u], id = m->actuator_trnid[2 * u];
  if (t == RL_TRN_SITE) {
    k = avbd_add_unique(l, k, am->slot[m->site_bodyid[id]]);
    return avbd_add_unique(l, k, -1);
  }
  if (t == RL_TRN_BODY) {
    k = avbd_add_unique(l, k, am->slot[id]);
    for (int g1 = 0; g1 < m->ngeom; g1++) {
      if (m->geom_bodyid[g1] != id) continue;
      for (int g2 = 0; g2 < m->ngeom; g2++)
        if (m->geom_bodyid[g2] != id && avbd_pair_filter(m, g1, g2))
          k = avbd_add_unique(l, k, am->slot[m->geom_bodyid[g2]]);
    }
    for (int p = 0; p < m->npair; p++) {
      int b1 = m->geom_bodyid[m->pair_geom1[p]], b2 = m->geom_bodyid[m->pair_geom2[p]];
      if (b1 == id) k = avbd_add_unique(l, k, am->slot[b2]);
      if (b2 == id) k = avbd_add_unique(l, k, am->slot[b1]);
    }
    return k;
  }
  int b = m->jnt_bodyid[id];
  k = avbd_add_unique(l, k, am->slot[b]);
  return avbd_add_unique(l, k, m->jnt_type[id] == RL_JNT_FREE ? -1 : am->slot[m->body_parentid[b]]);
}

/* The acting spatial tendons (avbd_tendon_check accepted them) and slider-crank transmissions, the distinct slots on
   each path (sites, wrap geoms and side sites, the crank and slider sites; −1 once for static bodies), and per slot
   the entries through it.  A free component
   (avbd_components) that a tendon joins to anything outside it loses its coarse step (−1): the rigid motion's
   system holds the contact rows with the outside only. */
static void avbd_tendon_lists(rl_avbd *am, const rl_model *m) {
  int n = 0, e = 0;
  for (int t = 0; t < m->ntendon; t++) {
    int w0 = m->tendon_adr[t];
    if (m->wrap_type[w0] == RL_WRAP_JOINT || !avbd_tendon_acts(m, t)) continue;
    am->spat[n] = t;
    am->spsadr[n] = e;
    int k = 0, *l = am->spslot + e;
    for (int w = w0; w < w0 + m->tendon_num[t]; w++) {
      int ty = m->wrap_type[w], id = m->wrap_objid[w];
      if (ty == RL_WRAP_PULLEY) continue;
      k = avbd_add_unique(l, k, am->slot[ty == RL_WRAP_SITE ? m->site_bodyid[id] : m->geom_bodyid[id]]);
      int side = ty == RL_WRAP_SITE ? -1 : (int)rl_floor(m->wrap_prm[w] + (real)0.5);
      if (side >= 0) k = avbd_add_unique(l, k, am->slot[m->site_bodyid[side]]);
    }
    e += k;
    n++;
  }
  for (int u = 0; u < m->nu; u++) {
    if (m->actuator_trntype[u] != RL_TRN_SLIDERCRANK) continue;
    am->spat[n] = -1 - u;
    am->spsadr[n] = e;
    int k = avbd_add_unique(am->spslot + e, 0, am->slot[m->site_bodyid[m->actuator_trnid[2 * u]]]);
    e += avbd_add_unique(am->spslot + e, k, am->slot[m->site_bodyid[m->actuator_trnid[2 * u + 1]]]);
    n++;
  }
  for (int u = 0; u < m->nu; u++) {
    if (!avbd_wrench_trn(m, u) || !avbd_wrench_implicit(m, u)) continue;
    am->wrench[am->uwrench[u]].spat = n;
    am->spat[n] = -1 - u;
    am->spsadr[n] = e;
    e += avbd_wrench_slots(am, m, u, am->spslot + e, 0);
    n++;
  }
  am->nspat = n;
  am->spsadr[n] = e;
  int nb = am->nb, q = 0;
  for (int s = 0; s < nb; s++) {
    am->spadr[s] = q;
    for (int i = 0; i < n; i++)
      for (int x = am->spsadr[i]; x < am->spsadr[i + 1]; x++)
        if (am->spslot[x] == s) am->splist[q++] = i;
  }
  am->spadr[nb] = q;
}

/* Coordinate rows of the model (tendon limits and friction losses, joint and tendon equalities) and a bound on their slot-list
   entries (two per path entry of a tendon, for a spatial path's sites, geoms and side sites or a fixed tendon's
   joint bodies; four per joint equality) */
static int avbd_crow_count(const rl_model *m, int *nlist) {
  int n = 0;
  *nlist = 0;
  for (int t = 0; t < m->ntendon; t++)
    if (avbd_tendon_acts(m, t) && m->tendon_limited[t]) {
      n += 2;
      *nlist += 2 * 2 * m->tendon_num[t]; /* a path's slots: its sites, wrap geoms and side sites */
    }
  for (int t = 0; t < m->ntendon; t++)
    if (m->tendon_frictionloss[t] > 0) {
      n++;
      *nlist += 2 * m->tendon_num[t];
    }
  for (int e = 0; e < m->neq; e++) {
    if (m->eq_type[e] != RL_EQ_TENDON && m->eq_type[e] != RL_EQ_JOINT) continue;
    n++;
    *nlist += 4; /* two joints, two bodies each */
    if (m->eq_type[e] == RL_EQ_TENDON)
      for (int k = 0; k < 2; k++) {
        int t = k ? m->eq_obj2id[e] : m->eq_obj1id[e];
        if (t >= 0) *nlist += 2 * m->tendon_num[t];
      }
  }
  return n;
}

/* scalar kind of tendon t (fixed or spatial) */
static int avbd_tendon_kind(const rl_model *m, int t) {
  return m->wrap_type[m->tendon_adr[t]] == RL_WRAP_JOINT ? RL_AVBD_SC_FIXED : RL_AVBD_SC_SPATIAL;
}

/* the scale of a row's scalar for ρ₀ and whether it is an angle: a joint's child-body mass (slide) or mean
   inertia (hinge); a fixed tendon L = Σ cᵢφᵢ the effective inertia along L, 1/Σ cᵢ²/mᵢ over its joints on
   dynamic bodies (L = 2φ on a hinge of inertia I: I/4 — the smallest mᵢ alone made that row's ρ₀ 4× too stiff for
   the hinge, and the softbox's volume tendon over 218 slides 218× too stiff); a spatial tendon's lightest body on
   the path (lengths) */
static real avbd_scalar_scale(const rl_avbd *am, const rl_model *m, int kind, int id, int *ang) {
  if (kind == RL_AVBD_SC_JOINT) {
    int s = am->slot[m->jnt_bodyid[id]];
    *ang = m->jnt_type[id] == RL_JNT_HINGE;
    return s < 0 ? (real)1e30 : (*ang ? avbd_mean_inertia(am, m, s) : am->mass[s]);
  }
  real me = (real)1e30, inv = 0;
  int adr = m->tendon_adr[id], a = 1;
  for (int w = adr; w < adr + m->tendon_num[id]; w++) {
    int ty = m->wrap_type[w], o = m->wrap_objid[w], ja;
    if (kind == RL_AVBD_SC_FIXED) {
      real mj = avbd_scalar_scale(am, m, RL_AVBD_SC_JOINT, o, &ja);
      if (mj < (real)1e29) inv += m->wrap_prm[w] * m->wrap_prm[w] / mj;
      a &= ja;
    } else if (ty == RL_WRAP_SITE) {
      int s = am->slot[m->site_bodyid[o]];
      if (s >= 0) me = rl_avbd_min(me, am->mass[s]);
    }
  }
  *ang = kind == RL_AVBD_SC_FIXED && a;
  return kind == RL_AVBD_SC_FIXED ? (inv > 0 ? 1 / inv : (real)1e30) : me;
}

/* The coordinate rows (rows top… of am->row): a lower and an upper row per limited acting tendon, one per tendon
   with friction loss, one per joint or tendon equality, with ρ₀'s scale the effective inertia along C from their
   scalars' (avbd_scalar_scale): 1/(1/m_a + c₁²/m_b) for C = S_a − c₀ − c₁S_b − … at the reference */
static void avbd_crow_build(rl_avbd *am, const rl_model *m, int *top) {
  int n = 0;
  for (int t = 0; t < m->ntendon; t++) {
    if (!avbd_tendon_acts(m, t) || !m->tendon_limited[t]) continue;
    for (int side = 0; side < 2; side++) {
      rl_avbd_crow *r = am->crow + n++;
      memset(r, 0, sizeof *r);
      r->type = side ? RL_AVBD_CROW_HI : RL_AVBD_CROW_LO;
      r->eq = -1;
      r->kind[0] = avbd_tendon_kind(m, t);
      r->id[0] = t;
      r->id[1] = -1;
      r->ref[0] = m->tendon_length0[t];
      /* the row's zero the tendon's margin inside the range, as MuJoCo's limit row */
      r->bound = m->tendon_range[2 * t + side] + (side ? -m->tendon_margin[t] : m->tendon_margin[t]);
    }
  }
  for (int t = 0; t < m->ntendon; t++) {
    if (!(m->tendon_frictionloss[t] > 0)) continue;
    rl_avbd_crow *r = am->crow + n++;
    memset(r, 0, sizeof *r);
    r->type = RL_AVBD_CROW_FRIC;
    r->eq = -1;
    r->kind[0] = avbd_tendon_kind(m, t);
    r->id[0] = t;
    r->id[1] = -1;
    r->ref[0] = m->tendon_length0[t];
    r->bound = m->tendon_frictionloss[t];
  }
  for (int e = 0; e < m->neq; e++) {
    if (avbd_pose_equality(m, e)) continue;
    rl_avbd_crow *r = am->crow + n++;
    memset(r, 0, sizeof *r);
    r->type = RL_AVBD_CROW_EQ;
    r->eq = e;
    int tendon = m->eq_type[e] == RL_EQ_TENDON;
    for (int k = 0; k < 2; k++) {
      int id = k ? m->eq_obj2id[e] : m->eq_obj1id[e];
      r->id[k] = id;
      if (id < 0) continue;
      r->kind[k] = tendon ? avbd_tendon_kind(m, id) : RL_AVBD_SC_JOINT;
      r->ref[k] = tendon ? m->tendon_length0[id] : m->qpos0[m->jnt_qposadr[id]];
    }
  }
  am->ncrow = n;
  for (int i = 0; i < n; i++) {
    rl_avbd_crow *r = am->crow + i;
    rl_avbd_row *w = am->row + (r->row = (*top)++);
    memset(w, 0, sizeof *w);
    real inv = 0;
    int ang = 1;
    for (int k = 0; k < 2; k++) {
      if (r->id[k] < 0) continue;
      int a;
      real mk = avbd_scalar_scale(am, m, r->kind[k], r->id[k], &a);
      real dk = k == 0 ? 1 : m->eq_data[RL_NEQDATA * r->eq + 1]; /* ∂C/∂S_k at the reference */
      if (mk < (real)1e29) inv += dk * dk / mk;
      ang &= a;
      r->joints |= r->kind[k] != RL_AVBD_SC_SPATIAL;
    }
    real me = inv > 0 ? 1 / inv : (real)1e30;
    r->ang = ang;
    w->kind = r->type == RL_AVBD_CROW_EQ     ? (ang ? RL_AVBD_ROW_ANG : RL_AVBD_ROW_LIN)
              : r->type == RL_AVBD_CROW_FRIC ? RL_AVBD_ROW_DRY
              : (r->type == RL_AVBD_CROW_LO ? RL_AVBD_ROW_LIMLO : RL_AVBD_ROW_LIMHI);
    w->meff = me < (real)1e29 ? me : 1;
    w->rho = 0;
  }
}

/* slots joint j's coordinate depends on (the bodies of the joint carrying it) into l[0..n), each once */
static int avbd_joint_slots(const rl_avbd *am, const rl_model *m, int j, int *l, int n) {
  int b = m->jnt_bodyid[j];
  n = avbd_add_unique(l, n, am->slot[b]);
  return avbd_add_unique(l, n, am->slot[m->body_parentid[b]]);
}

/* Each coordinate row's slots (crslot: its spatial tendons' path slots from avbd_tendon_lists, both bodies of
   each joint it reads, directly or through a fixed tendon), per slot the rows that depend on it, and per model
   joint the rows whose C moves with its coordinate (cjlist: ∂S/∂φ_j ≠ 0 for one of its scalars) */
static void avbd_crow_lists(rl_avbd *am, const rl_model *m) {
  int e = 0;
  for (int i = 0; i < am->ncrow; i++) {
    rl_avbd_crow *r = am->crow + i;
    int *l = am->crslot + e, k = 0;
    am->crsadr[i] = e;
    for (int q = 0; q < 2; q++) {
      int id = r->id[q];
      if (id < 0) continue;
      if (r->kind[q] == RL_AVBD_SC_JOINT) k = avbd_joint_slots(am, m, id, l, k);
      else if (r->kind[q] == RL_AVBD_SC_FIXED) {
        for (int w = m->tendon_adr[id]; w < m->tendon_adr[id] + m->tendon_num[id]; w++)
          k = avbd_joint_slots(am, m, m->wrap_objid[w], l, k);
      } else {
        r->spatial = 1;
        for (int x = 0; x < am->nspat; x++)
          if (am->spat[x] == id)
            for (int y = am->spsadr[x]; y < am->spsadr[x + 1]; y++) k = avbd_add_unique(l, k, am->spslot[y]);
      }
    }
    e += k;
  }
  am->crsadr[am->ncrow] = e;
  int q = 0;
  for (int s = 0; s < am->nb; s++) {
    am->cradr[s] = q;
    for (int i = 0; i < am->ncrow; i++) {
      int on = 0;
      for (int x = am->crsadr[i]; x < am->crsadr[i + 1]; x++) on |= am->crslot[x] == s;
      if (on) am->crlist[q++] = i;
    }
  }
  am->cradr[am->nb] = q;
  q = 0;
  for (int j = 0; j < m->njnt; j++) {
    am->cjadr[j] = q;
    for (int i = 0; i < am->ncrow; i++)
      if (avbd_scalar_dphi(m, am->crow[i].kind[0], am->crow[i].id[0], j) != 0 ||
          (am->crow[i].id[1] >= 0 && avbd_scalar_dphi(m, am->crow[i].kind[1], am->crow[i].id[1], j) != 0))
        am->cjlist[q++] = i;
  }
  am->cjadr[m->njnt] = q;
}

/* 2 if joint j and another dynamic joint than *first have been seen (*first: the first dynamic joint, −1 before), else
   1 or 0: the running count, up to two, of the distinct joint coordinates a row reads on dynamic bodies */
static int avbd_joint_seen(const rl_avbd *am, const rl_model *m, int j, int *first) {
  if (am->slot[m->jnt_bodyid[j]] < 0) return *first >= 0;
  if (*first < 0) *first = j;
  return *first == j ? 1 : 2;
}

/* the distinct dynamic joint coordinates (0, 1, or 2 for two or more) that scalar (kind, id) reads: a joint, a fixed
   tendon's joints (a spatial tendon reads none) */
static int avbd_scalar_joints(const rl_avbd *am, const rl_model *m, int kind, int id, int *first) {
  int n = *first >= 0;
  if (kind == RL_AVBD_SC_JOINT) return avbd_joint_seen(am, m, id, first);
  if (kind == RL_AVBD_SC_FIXED)
    for (int w = m->tendon_adr[id]; w < m->tendon_adr[id] + m->tendon_num[id] && n < 2; w++)
      n = avbd_joint_seen(am, m, m->wrap_objid[w], first);
  return n;
}

/* 1 if fixed tendon t exerts a joint-space force (spring, damper or an actuator on it: avbd_tendon_terms) */
static int avbd_fixed_force(const rl_model *m, int t) {
  int f = m->tendon_stiffness[t] != 0 || m->tendon_damping[t] != 0;
  for (int u = 0; u < m->nu; u++) f |= m->actuator_trntype[u] == RL_TRN_TENDON && m->actuator_trnid[2 * u] == t;
  return f;
}

/* appends loop item (kind, id, rows) with slots l[0..n) (−1 entries dropped) when at least two are dynamic */
static void avbd_litem_add(rl_avbd *am, int kind, int id, int rows, const int *l, int n) {
  int dyn = 0;
  for (int i = 0; i < n; i++) dyn += l[i] >= 0;
  if (dyn < 2) return;
  rl_avbd_litem *it = am->litem + am->nlitem;
  it->kind = kind;
  it->id = id;
  it->rows = rows;
  it->block = -1;
  int e = am->lsadr[am->nlitem];
  for (int i = 0; i < n; i++)
    if (l[i] >= 0) am->lslot[e++] = l[i];
  am->lsadr[++am->nlitem] = e;
}

/* The candidate loop items of the articulation blocks (rl_avbd_litem) with their slots, in the order the blocks take
   them (avbd_tree_build): coordinate rows over two or more joint coordinates or over a spatial path through two or
   more dynamic bodies (the rows a body-by-body view of the block cannot hold), equality joints between two dynamic
   bodies, fixed tendons with a joint-space force over two or more joints, acting spatial paths. */
static void avbd_loop_items(rl_avbd *am, const rl_model *m) {
  am->nlitem = 0;
  am->lsadr[0] = 0;
  for (int i = 0; i < am->ncrow; i++) {
    const rl_avbd_crow *r = am->crow + i;
    int first = -1, nj = 0;
    for (int k = 0; k < 2; k++)
      if (r->id[k] >= 0) nj = avbd_scalar_joints(am, m, r->kind[k], r->id[k], &first);
    if (nj >= 2 || r->spatial)
      avbd_litem_add(am, RL_AVBD_LOOP_CROW, i, 1, am->crslot + am->crsadr[i], am->crsadr[i + 1] - am->crsadr[i]);
  }
  for (int j = 0; j < am->njoint; j++) {
    const rl_avbd_joint *jt = am->joint + j;
    int l[2] = {jt->a, jt->b};
    if (jt->eq >= 0 && jt->kind != RL_AVBD_COMPOUND) avbd_litem_add(am, RL_AVBD_LOOP_EQ, j, jt->neq, l, 2);
  }
  for (int t = 0; t < m->ntendon; t++) {
    int first = -1, w0 = m->tendon_adr[t], n = 0;
    if (m->wrap_type[w0] != RL_WRAP_JOINT || !avbd_fixed_force(m, t) ||
        avbd_scalar_joints(am, m, RL_AVBD_SC_FIXED, t, &first) < 2)
      continue;
    int *l = am->lslot + am->lsadr[am->nlitem]; /* gathered in place, then kept by avbd_litem_add */
    for (int w = w0; w < w0 + m->tendon_num[t]; w++) n = avbd_joint_slots(am, m, m->wrap_objid[w], l, n);
    avbd_litem_add(am, RL_AVBD_LOOP_FIXED, t, 1, l, n);
  }
  for (int i = 0; i < am->nspat; i++)
    avbd_litem_add(am, RL_AVBD_LOOP_PATH, i, 1, am->spslot + am->spsadr[i], am->spsadr[i + 1] - am->spsadr[i]);
}

/* Count joints and rows; refuse what the solver does not model.  Returns 0 and writes err. */
static int avbd_check(const rl_model *m, int *njoint, int *nrow, char *err, int errlen) {
  int nj = 0, nr = 0;
  for (int t = 0; t < m->ntendon; t++)
    if (!avbd_tendon_check(m, t, err, errlen)) return 0;
  /* every transmission MuJoCo 2.2.2 has: a joint (hinge, slide: along its coordinate; ball, free: a wrench on its
     dofs), a tendon (avbd_tendon_check), a slider-crank (a length on the two sites' body poses, avbd_crank_length), a
     site, a body (wrenches on body poses, avbd_wrench.c); refused: a crank site on a body that moves with a mocap body */
  for (int u = 0; u < m->nu; u++) {
    const char *name = rl_model_name(m, m->name_actuatoradr[u]);
    if (m->actuator_trntype[u] == RL_TRN_SLIDERCRANK)
      for (int k = 0; k < 2; k++) {
        int b = m->site_bodyid[m->actuator_trnid[2 * u + k]];
        if (b > 0 && avbd_is_static(m, b) && avbd_mocap_of(m, b) >= 0) {
          snprintf(err, (size_t)errlen,
                   "avbd: actuator '%s' has its slider-crank site on body '%s', which moves with a mocap body: avbd "
                   "evaluates the crank on static bodies at their fixed pose (use --engine newton)",
                   name, rl_model_name(m, m->name_bodyadr[b]));
          return 0;
        }
      }
  }
  if (m->opt.density > 0 || m->opt.viscosity > 0)
    for (int b = 1; b < m->nbody; b++)
      if (!avbd_is_static(m, b) && rl_fluid_ellipsoid_body(m, b)) {
        snprintf(err, (size_t)errlen,
                 "avbd: body '%s' uses the ellipsoid fluid model (fluidshape): AVBD applies the inertia-box model "
                 "only (use --engine newton)",
                 rl_model_name(m, m->name_bodyadr[b]));
        return 0;
      }
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
    if (jn > 1) { /* one compound joint */
      int ndof, rows;
      if (!avbd_compound_check(m, b, &ndof, &rows, err, errlen)) return 0;
      nj++;
      nr += rows;
      continue;
    }
    if (jn == 0) {
      nj++;
      nr += 6;
      continue;
    } /* welded to a dynamic parent */
    int j = m->body_jntadr[b], t = m->jnt_type[j];
    if (t == RL_JNT_FREE) continue;
    nj++;
    /* a ball's cone limit and three dry-friction rows are counted with the ball and free joints (avbd_mdof_count) */
    nr += (t == RL_JNT_BALL) ? 3 : 5;
    if (t != RL_JNT_BALL) nr += 3; /* limit lo, hi, dry friction (allocated always) */
  }
  int ncrl, nmrow;
  nr += avbd_crow_count(m, &ncrl); /* coordinate rows: tendon limits and friction losses, joint and tendon equalities */
  avbd_mdof_count(m, &nmrow);
  nr += nmrow; /* ball and free joints: cone limit, dry friction per dof */
  for (int e = 0; e < m->neq; e++) {
    if (m->eq_type[e] == RL_EQ_TENDON) continue;
    if (m->eq_type[e] == RL_EQ_JOINT) {
      for (int k = 0; k < 2; k++) {
        int j = k ? m->eq_obj2id[e] : m->eq_obj1id[e];
        if (j >= 0 && m->jnt_type[j] != RL_JNT_HINGE && m->jnt_type[j] != RL_JNT_SLIDE) {
          snprintf(err, (size_t)errlen,
                   "avbd: equality '%s' couples joint '%s', which is not a hinge or slide joint: AVBD's coordinate "
                   "rows hold scalar joint coordinates",
                   rl_model_name(m, m->name_eqadr[e]), rl_model_name(m, m->name_jntadr[j]));
          return 0;
        }
      }
      continue;
    }
    if (avbd_is_static(m, m->eq_obj1id[e]) && avbd_is_static(m, m->eq_obj2id[e])) {
      snprintf(err, (size_t)errlen, "avbd: equality '%s' joins two static bodies", rl_model_name(m, m->name_eqadr[e]));
      return 0;
    }
    if (m->eq_type[e] == RL_EQ_CONNECT) {
      nj++;
      nr += 3;
    } else if (m->eq_type[e] == RL_EQ_WELD) {
      nj++;
      nr += 6;
    }
  }
  *njoint = nj;
  *nrow = nr;
  return 1;
}

/* the build allocates: compiled in the C engine only, not in engine/cuda/'s device translation unit */
#if !defined(__CUDACC__)
/* The next block of `bytes` of the buffer at base (its offset *off, 64-byte aligned, advanced past it); NULL while
   base is NULL (the measuring pass of avbd_carve) */
static void *avbd_take(char *base, size_t *off, size_t bytes) {
  void *r = base ? base + *off : NULL;
  *off += (bytes + 63) & ~(size_t)63;
  return r;
}
#endif

/* Rows of joint jt (kinds): two-sided rows first, then limit lo/hi and dry friction. */
RL_HDFN static void avbd_make_rows(rl_avbd *am, rl_avbd_joint *jt, int *rowtop) {
  static const int kinds[5][6] = {
      {RL_AVBD_ROW_LIN, RL_AVBD_ROW_LIN, RL_AVBD_ROW_LIN, RL_AVBD_ROW_ANG, RL_AVBD_ROW_ANG, 0}, /* hinge */
      {RL_AVBD_ROW_LIN, RL_AVBD_ROW_LIN, RL_AVBD_ROW_ANG, RL_AVBD_ROW_ANG, RL_AVBD_ROW_ANG, 0}, /* slide */
      {RL_AVBD_ROW_LIN, RL_AVBD_ROW_LIN, RL_AVBD_ROW_LIN, 0, 0, 0},                             /* ball */
      {RL_AVBD_ROW_LIN, RL_AVBD_ROW_LIN, RL_AVBD_ROW_LIN, RL_AVBD_ROW_ANG, RL_AVBD_ROW_ANG, RL_AVBD_ROW_ANG}, /* weld */
      {RL_AVBD_ROW_LIN, RL_AVBD_ROW_LIN, RL_AVBD_ROW_LIN, 0, 0, 0}}; /* connect */
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
RL_HDFN int avbd_in_subtree(const rl_model *m, int b, int top) {
  while (b > top) b = m->body_parentid[b];
  return b == top;
}

/* Mass of one side of a tree joint: inside = 1: the subtree of body top (M = Σ m_i over it);
 * inside = 0: the rest of top's kinematic tree. */
RL_HDFN static real avbd_side_mass(const rl_model *m, int top, int inside) {
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
RL_HDFN void avbd_row_scales(rl_avbd *am, const rl_model *m, const rl_avbd_joint *jt) {
  real mlin = rl_avbd_min(avbd_mass(am, jt->a), avbd_mass(am, jt->b));
  real mang = rl_avbd_min(avbd_mean_inertia(am, m, jt->a), avbd_mean_inertia(am, m, jt->b));
  if (jt->eq < 0) {
    int bB = am->body[jt->b], root = m->body_rootid[bB];
    int anchored = jt->a < 0 || m->body_jntnum[root] == 0 || m->jnt_type[m->body_jntadr[root]] != RL_JNT_FREE;
    real MB = avbd_side_mass(m, bB, 1), MA = anchored ? (real)1e30 : avbd_side_mass(m, bB, 0);
    real side = rl_avbd_min(MA, MB);
    if (side > AVBD_SIDE_RATIO * mlin) mlin = side;
  }
  if (jt->kind == RL_AVBD_COMPOUND) { /* two-sided rows by kind, each component's coordinate rows by its kind */
    const rl_avbd_compound *c = am->cmp + jt->cmp;
    for (int k = 0; k < jt->neq; k++) {
      rl_avbd_row *r = am->row + jt->row + k;
      r->meff = r->kind == RL_AVBD_ROW_LIN ? mlin : mang;
    }
    for (int k = 0; k < c->n; k++) {
      const rl_avbd_joint *sj = c->sub + k;
      if (sj->kind == RL_AVBD_BALL) continue;
      real me = sj->kind == RL_AVBD_HINGE ? mang : mlin + avbd_armature(am, m, sj);
      am->row[sj->lo_row].meff = am->row[sj->hi_row].meff = am->row[sj->dry_row].meff = me;
    }
    return;
  }
  for (int k = 0; k < jt->nrow; k++) {
    rl_avbd_row *r = am->row + jt->row + k;
    if (r->kind == RL_AVBD_ROW_LIN) r->meff = mlin;
    else if (r->kind == RL_AVBD_ROW_ANG) r->meff = mang;
    else r->meff = jt->kind == RL_AVBD_HINGE ? mang : mlin + avbd_armature(am, m, jt);
  }
}

/* COM-frame pose of body b from the kinematics in d: x = xipos, q = xquat ⊗ iquat */
RL_HDFN static void avbd_com_pose(const rl_model *m, const rl_data *d, int b, rl_avbd_pose *p) {
  rl_v3_copy(p->x, d->xipos + 3 * b);
  rl_q_mul(p->q, d->xquat + 4 * b, m->body_iquat + 4 * b);
  rl_avbd_pose_sync(p);
}

/* express a world point w in the COM frame of pose p (the world: w itself) */
RL_HDFN void avbd_to_local(real r[3], const rl_avbd_pose *p, const real w[3]) {
  real t[3];
  rl_v3_sub(t, w, p->x);
  rl_m3_tmulv(r, p->R, t);
}

/* Joint geometry from the reference configuration d (kinematics at qpos0):
 * anchors, axes (world → each COM frame), q_rel0 = q_A⁻¹ q_B, two ⊥ vectors in A. */
RL_HDFN static void avbd_joint_geometry(const rl_model *m, const rl_data *d, rl_avbd *am, rl_avbd_joint *jt,
                                const real anchor[3], const real axis[3]) {
  rl_avbd_pose A, B;
  if (jt->a < 0) A = avbd_world;
  else avbd_com_pose(m, d, am->body[jt->a], &A);
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
RL_HDFN static void avbd_equality_geometry(const rl_model *m, const rl_data *d, rl_avbd *am, int e, rl_avbd_joint *jt) {
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
    if (jt->a < 0) rl_q_copy(l, d->xquat + 4 * bA);
    else rl_q_conj(l, m->body_iquat + 4 * bA);
    if (swap) rl_q_copy(r, rel);
    else rl_q_conj(r, rel);
    rl_q_mul(c, l, r);
    rl_q_mul(jt->qrel0, c, m->body_iquat + 4 * bB);
    rl_q_normalize(jt->qrel0);
  }
}

/* slots of the component with root c leave the coarse step (comp = −1) */
RL_HDFN static void avbd_component_drop(rl_avbd *am, int c) {
  if (c < 0) return;
  for (int o = 0; o < am->nb; o++)
    if (am->comp[o] == c) am->comp[o] = -1;
}

/* Components for the coarse step (avbd_coarse): comp[s] = the lowest slot joined to s by joints
 * between dynamic bodies; −1 for a body alone or in a component with a joint to the world (the
 * coarse step moves free articulated assemblies only).  The rigid motion's system holds the inertia and the
 * contact rows with the outside only, so a component also loses it (−1) where an acting path (tendon, slider
 * crank, implicit wrench actuator: avbd_tendon_lists) joins it to anything outside it, and where its free joint
 * has joint-space terms (damping, spring, armature, friction loss act against the world). */
RL_HDFN void avbd_components(rl_avbd *am) {
  int nb = am->nb, *c = am->comp;
  for (int s = 0; s < nb; s++) c[s] = s;
  for (int pass = 0, changed = 1; changed && pass < nb + 1; pass++) {
    changed = 0;
    for (int j = 0; j < am->njoint; j++) {
      const rl_avbd_joint *jt = am->joint + j;
      if (jt->a < 0) continue;
      int lo = c[jt->a] < c[jt->b] ? c[jt->a] : c[jt->b];
      if (c[jt->a] != lo || c[jt->b] != lo) {
        c[jt->a] = c[jt->b] = lo;
        changed = 1;
      }
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
  for (int i = 0; i < am->nspat; i++) {
    int cs0 = -2, cross = 0;
    for (int x = am->spsadr[i]; x < am->spsadr[i + 1]; x++) {
      int s = am->spslot[x], cs = s < 0 ? -1 : c[s];
      if (cs0 == -2) cs0 = cs;
      cross |= s < 0 || cs != cs0;
    }
    if (!cross) continue;
    for (int x = am->spsadr[i]; x < am->spsadr[i + 1]; x++)
      if (am->spslot[x] >= 0) avbd_component_drop(am, c[am->spslot[x]]);
  }
  for (int k = 0; k < am->nmdof; k++)
    if (am->mdof[k].type == RL_JNT_FREE && am->mdof[k].terms) avbd_component_drop(am, c[am->mdof[k].b]);
}

#if !defined(__CUDACC__)
/* The static body on the world side of tree joint of body b (its parent) or of equality e (the static one of
   its two bodies): the body whose mocap ancestor (avbd_mocap_of) makes the side move.  Static bodies are those
   fixed to the world or to a mocap body (body_weldid = 0). */
static int avbd_static_side_tree(const rl_model *m, int b) { return m->body_parentid[b]; }
static int avbd_static_side_eq(const rl_model *m, int e) {
  return avbd_is_static(m, m->eq_obj1id[e]) ? m->eq_obj1id[e] : m->eq_obj2id[e];
}

/* joints (tree joints of dynamic bodies, not free) and equalities whose static side moves with a mocap body */
static int avbd_count_moving(const rl_model *m) {
  int n = 0;
  for (int b = 1; b < m->nbody; b++) {
    if (avbd_is_static(m, b) || (m->body_jntnum[b] == 1 && m->jnt_type[m->body_jntadr[b]] == RL_JNT_FREE)) continue;
    int p = avbd_static_side_tree(m, b);
    n += avbd_is_static(m, p) && avbd_mocap_of(m, p) >= 0;
  }
  for (int e = 0; e < m->neq; e++)
    n += avbd_pose_equality(m, e) && avbd_mocap_of(m, avbd_static_side_eq(m, e)) >= 0;
  return n;
}

/* Express the world-side geometry of joint j (built against the world at the reference configuration d)
   in the frame M of the mocap body it moves with (rl_avbd_moving):
     r̂_A = R_Mᵀ(r_A − x_M),  â = R_Mᵀ a,  t̂_k = R_Mᵀ t_k,  q̂_rel0 = q_M⁻¹ ⊗ q_rel0,  F0 likewise */
static void avbd_moving_local(rl_avbd *am, const rl_model *m, const rl_data *d, int j, int mocap, rl_avbd_moving *mv) {
  const rl_avbd_joint *jt = am->joint + j;
  int kb = -1;
  for (int b = 1; b < m->nbody; b++)
    if (m->body_mocapid[b] == mocap) kb = b;
  const real *xM = d->xpos + 3 * kb, *RM = d->xmat + 9 * kb;
  real c[4], t[3];
  rl_q_conj(c, d->xquat + 4 * kb);
  mv->joint = j;
  mv->mocap = mocap;
  rl_v3_sub(t, jt->rA, xM);
  rl_m3_tmulv(mv->rA, RM, t);
  rl_m3_tmulv(mv->axA, RM, jt->axA);
  rl_m3_tmulv(mv->t1A, RM, jt->t1A);
  rl_m3_tmulv(mv->t2A, RM, jt->t2A);
  rl_q_mul(mv->qrel0, c, jt->qrel0);
  if (jt->kind == RL_AVBD_COMPOUND) {
    const rl_avbd_compound *cp = am->cmp + jt->cmp;
    rl_v3_sub(t, cp->xp, xM);
    rl_m3_tmulv(mv->xp, RM, t);
    rl_q_mul(mv->xq, c, cp->xq);
  }
}

/* the joints of avbd_count_moving with their geometry in the mocap frames (avbd_moving_local) */
static void avbd_moving_build(rl_avbd *am, const rl_model *m, const rl_data *d) {
  int n = 0;
  for (int j = 0; j < am->njoint; j++) {
    const rl_avbd_joint *jt = am->joint + j;
    if (jt->a >= 0) continue;
    int sb = jt->eq >= 0 ? avbd_static_side_eq(m, jt->eq) : avbd_static_side_tree(m, am->body[jt->b]);
    int k = avbd_mocap_of(m, sb);
    if (k >= 0) avbd_moving_local(am, m, d, j, k, am->moving + n++);
  }
  am->nmoving = n;
  /* slots hanging from a mocap body through tree joints: the first mocap body up the parent chain */
  for (int s = 0; s < am->nb; s++) {
    am->ride[s] = -1;
    for (int b = am->body[s]; b > 0 && am->ride[s] < 0; b = m->body_parentid[b])
      if (m->body_mocapid[b] >= 0) am->ride[s] = m->body_mocapid[b];
  }
}

/* the counts the arrays of rl_avbd are sized by */
typedef struct avbd_sizes {
  int nb, nj, nr, maxcon, ncmp, nmov, ncr, ncrl, nloop, nmdof, nwr, nbt, ncert;
  size_t nlit; /* loop items of the articulation blocks (avbd_loop_items) */
} avbd_sizes;

/* Every array of am carved out of one buffer at base, each 64-byte aligned; returns the bytes they take.  Run once
   with base = NULL to size the buffer (nothing is written), then on the buffer: the size is the carving's own, not a
   sum kept by hand beside it. */
static size_t avbd_carve(rl_avbd *am, const rl_model *m, const avbd_sizes *z, char *base) {
  size_t R = sizeof(real), nbs = (size_t)z->nb + 1, off = 0;
  am->body = avbd_take(base, &off, sizeof(int) * nbs);
  am->slot = avbd_take(base, &off, sizeof(int) * (size_t)m->nbody);
  am->mass = avbd_take(base, &off, R * nbs);
  am->inertia = avbd_take(base, &off, R * 3 * nbs);
  am->iquat = avbd_take(base, &off, R * 4 * nbs);
  am->ipos = avbd_take(base, &off, R * 3 * nbs);
  am->pose = avbd_take(base, &off, sizeof(rl_avbd_pose) * nbs);
  am->vel = avbd_take(base, &off, R * 6 * nbs);
  am->x0 = avbd_take(base, &off, R * 3 * nbs);
  am->q0 = avbd_take(base, &off, R * 4 * nbs);
  am->xp = avbd_take(base, &off, R * 3 * nbs);
  am->qp = avbd_take(base, &off, R * 4 * nbs);
  am->dx = avbd_take(base, &off, R * 3 * nbs);
  am->dq = avbd_take(base, &off, R * 4 * nbs);
  am->I0 = avbd_take(base, &off, R * 9 * nbs);
  am->xfrc = avbd_take(base, &off, R * 6 * nbs);
  am->joint = avbd_take(base, &off, sizeof(rl_avbd_joint) * ((size_t)z->nj + 1));
  am->row = avbd_take(base, &off, sizeof(rl_avbd_row) * ((size_t)z->nr + 1));
  am->load = avbd_take(base, &off, sizeof(rl_avbd_load) * ((size_t)z->nj + 1));
  am->jadr = avbd_take(base, &off, sizeof(int) * nbs);
  am->jnum = avbd_take(base, &off, sizeof(int) * nbs);
  am->jlist = avbd_take(base, &off, sizeof(int) * (2 * (size_t)z->nj + 1));
  am->con = avbd_take(base, &off, sizeof(rl_avbd_contact) * ((size_t)z->maxcon + 1));
  am->prev = avbd_take(base, &off, sizeof(rl_avbd_contact) * ((size_t)z->maxcon + 1));
  am->cadr = avbd_take(base, &off, sizeof(int) * nbs);
  am->cnum = avbd_take(base, &off, sizeof(int) * nbs);
  am->clist = avbd_take(base, &off, sizeof(int) * (2 * (size_t)z->maxcon + 1));
  am->gpos = avbd_take(base, &off, R * 3 * ((size_t)m->ngeom + 1));
  am->gquat = avbd_take(base, &off, R * 4 * ((size_t)m->ngeom + 1));
  am->color = avbd_take(base, &off, sizeof(int) * nbs);
  am->order = avbd_take(base, &off, sizeof(int) * nbs);
  am->vprev = avbd_take(base, &off, R * 3 * nbs);
  am->comp = avbd_take(base, &off, sizeof(int) * nbs);
  am->cwork = avbd_take(base, &off, R * 46 * nbs);
  am->upd = avbd_take(base, &off, R * 2 * nbs);
  am->guard = avbd_take(base, &off, sizeof(int) * nbs);
  am->ver = avbd_take(base, &off, sizeof(unsigned long long) * nbs);
  am->jval = avbd_take(base, &off, sizeof(rl_avbd_joint_val) * ((size_t)z->nj + 1));
  am->jver = avbd_take(base, &off, sizeof(unsigned long long) * 2 * ((size_t)z->nj + 1));
  am->cval = avbd_take(base, &off, sizeof(rl_avbd_contact_val) * ((size_t)z->maxcon + 1));
  am->cver = avbd_take(base, &off, sizeof(unsigned long long) * 2 * ((size_t)z->maxcon + 1));
  am->chl = avbd_take(base, &off, R * 2 * ((size_t)z->nr + 1));
  am->cmp = avbd_take(base, &off, sizeof(rl_avbd_compound) * ((size_t)z->ncmp + 1));
  am->cmpval = avbd_take(base, &off, sizeof(rl_avbd_compound_val) * ((size_t)z->ncmp + 1));
  am->cmpver = avbd_take(base, &off, sizeof(unsigned long long) * 2 * ((size_t)z->ncmp + 1));
  am->tparent = avbd_take(base, &off, sizeof(int) * nbs);
  am->tjoint = avbd_take(base, &off, sizeof(int) * nbs);
  am->tsj = avbd_take(base, &off, sizeof(int) * nbs);
  am->tadr = avbd_take(base, &off, sizeof(int) * (nbs + 1));
  am->tlist = avbd_take(base, &off, sizeof(int) * nbs);
  am->twork = avbd_take(base, &off, sizeof(double) * AVBD_TW * nbs);
  am->tvec = avbd_take(base, &off, sizeof(double) * 6 * nbs);
  am->tfac = avbd_take(base, &off, sizeof(int) * nbs);
  am->cdual = avbd_take(base, &off, sizeof(double) * (size_t)z->ncert * (3 * (size_t)z->ncert + 9));
  am->cdrow = avbd_take(base, &off, sizeof(int) * ((size_t)z->ncert + 1));
  am->clam = avbd_take(base, &off, R * 3 * (z->ncert ? (size_t)z->maxcon + 1 : 1));
  am->tmass = avbd_take(base, &off, R * nbs);
  am->tblock = avbd_take(base, &off, sizeof(int) * nbs);
  am->tloop = avbd_take(base, &off, R * ((size_t)z->nloop * (12 * nbs + (size_t)z->nloop + 2)));
  am->moving = avbd_take(base, &off, sizeof(rl_avbd_moving) * ((size_t)z->nmov + 1));
  am->ride = avbd_take(base, &off, sizeof(int) * nbs);
  am->mocap_last = avbd_take(base, &off, R * 7 * ((size_t)m->nmocap + 1));
  am->mocap_prev = avbd_take(base, &off, R * 7 * ((size_t)m->nmocap + 1));
  am->mocap_moved = avbd_take(base, &off, sizeof(long) * ((size_t)m->nmocap + 1));
  am->spos = avbd_take(base, &off, R * 3 * ((size_t)m->nsite + 1));
  am->szax = avbd_take(base, &off, R * 3 * ((size_t)m->nsite + 1));
  am->spat = avbd_take(base, &off, sizeof(int) * ((size_t)m->ntendon + (size_t)m->nu + 1));
  am->spat_n = avbd_take(base, &off, R * 2 * ((size_t)m->ntendon + (size_t)m->nu + 1));
  am->spsadr = avbd_take(base, &off, sizeof(int) * ((size_t)m->ntendon + (size_t)m->nu + 2));
  /* path slots: two per wrap or actuator, a body transmission's body and the bodies it may touch (≤ nb + 1) */
  size_t npath = 2 * ((size_t)m->nwrap + (size_t)m->nu + 1) + (size_t)z->nbt * (nbs + 1);
  am->spslot = avbd_take(base, &off, sizeof(int) * npath);
  am->spadr = avbd_take(base, &off, sizeof(int) * (nbs + 1));
  am->splist = avbd_take(base, &off, sizeof(int) * npath);
  am->crow = avbd_take(base, &off, sizeof(rl_avbd_crow) * ((size_t)z->ncr + 1));
  am->crsadr = avbd_take(base, &off, sizeof(int) * ((size_t)z->ncr + 2));
  am->crslot = avbd_take(base, &off, sizeof(int) * ((size_t)z->ncrl + 1));
  am->cradr = avbd_take(base, &off, sizeof(int) * (nbs + 1));
  am->crlist = avbd_take(base, &off, sizeof(int) * ((size_t)z->ncrl + 1));
  am->cjadr = avbd_take(base, &off, sizeof(int) * ((size_t)m->njnt + 1));
  am->cjlist = avbd_take(base, &off, sizeof(int) * ((size_t)z->ncrl + 1)); /* a row reads ≤ its slots/2 joints */
  am->mdof = avbd_take(base, &off, sizeof(rl_avbd_mdof) * ((size_t)z->nmdof + 1));
  am->jmdof = avbd_take(base, &off, sizeof(int) * ((size_t)z->nj + 1));
  am->smdof = avbd_take(base, &off, sizeof(int) * nbs);
  am->wrench = avbd_take(base, &off, sizeof(rl_avbd_wrench) * ((size_t)z->nwr + 1));
  am->uwrench = avbd_take(base, &off, sizeof(int) * ((size_t)m->nu + 1));
  am->wj = avbd_take(base, &off, R * 6 * nbs * ((size_t)z->nwr + 1));
  am->fext = avbd_take(base, &off, R * 6 * nbs);
  am->squat = avbd_take(base, &off, R * 4 * ((size_t)m->nsite + 1));
  /* loop items and their slots: an equality joint's two, a fixed tendon's ≤ 2 per joint, a coordinate row's, a
     path's */
  size_t nlsl = 2 * (size_t)m->neq + 2 * (size_t)m->nwrap + (size_t)z->ncrl + npath + 1;
  am->litem = avbd_take(base, &off, sizeof(rl_avbd_litem) * z->nlit);
  am->lsadr = avbd_take(base, &off, sizeof(int) * (z->nlit + 1));
  am->lslot = avbd_take(base, &off, sizeof(int) * nlsl);
  am->ftloop = avbd_take(base, &off, sizeof(int) * ((size_t)m->ntendon + 1));
  return off;
}

/* The geom pairs of one articulation (dynamic bodies with the same root body) that overlap at qpos0 (d: its
   kinematics), from rl_collision's contacts with dist < 0: rl_avbd.rest, the lower geom id first, each once; beyond
   RL_AVBD_MAXREST counted in nrest_kept.  Such an overlap between neighbouring links (a hip link inside the pelvis, a
   knee's two capsules) is a modelling one: the joints between the two bodies move the gap little or not at all,
   and a hard contact asked to open it needs forces without bound (MuJoCo keeps it as a soft contact at a constant
   penetration). */
static void avbd_rest_overlaps(rl_avbd *am, const rl_model *m, rl_data *d) {
  rl_collision(m, d);
  for (int i = 0; i < d->ncon; i++) {
    const rl_contact *c = d->contact + i;
    int b1 = m->geom_bodyid[c->geom1], b2 = m->geom_bodyid[c->geom2];
    if (c->exclude || !(c->dist < 0) || avbd_is_static(m, b1) || avbd_is_static(m, b2) ||
        m->body_rootid[b1] != m->body_rootid[b2])
      continue;
    int g1 = c->geom1 < c->geom2 ? c->geom1 : c->geom2, g2 = c->geom1 < c->geom2 ? c->geom2 : c->geom1, seen = 0;
    for (int k = 0; k < am->nrest && !seen; k++) seen = am->rest[k][0] == g1 && am->rest[k][1] == g2;
    if (seen) continue;
    if (am->nrest == RL_AVBD_MAXREST) {
      am->nrest_kept++;
      continue;
    }
    am->rest[am->nrest][0] = g1;
    am->rest[am->nrest][1] = g2;
    am->nrest++;
  }
}

rl_avbd *rl_avbd_build(const rl_model *m, const rl_avbd_param *prm, char *err, int errlen) {
  int nj, nr;
  if (!avbd_check(m, &nj, &nr, err, errlen)) return NULL;
  int nb = 0, ncmp = 0;
  for (int b = 1; b < m->nbody; b++) {
    nb += !avbd_is_static(m, b);
    ncmp += !avbd_is_static(m, b) && m->body_jntnum[b] > 1;
  }
  int maxcon = avbd_ground_capacity(m), nmov = avbd_count_moving(m), ncrl, ncr = avbd_crow_count(m, &ncrl);
  /* loop-row capacity of the articulation blocks: equality rows, spatial paths (tendons, slider cranks), coordinate
     rows and fixed tendons; the loop items (avbd_loop_items) */
  int nloop = 6 * m->neq + 2 * m->ntendon + m->nu + ncr, chain = 0;
  for (int b = 1; b < m->nbody; b++) chain |= !avbd_is_static(m, b) && !avbd_is_static(m, m->body_parentid[b]);
  if (chain && rl_avbd_dynamic_pairs(m)) nloop = AVBD_LOOP_MAX; /* room for contacts inside a block */
  if (nloop > AVBD_LOOP_MAX) nloop = AVBD_LOOP_MAX;
  size_t nlit = (size_t)m->neq + 2 * (size_t)m->ntendon + (size_t)m->nu + (size_t)ncr + 1;
  int nmrow, nmdof = avbd_mdof_count(m, &nmrow), nwr = 0, nbt = 0;
  for (int u = 0; u < m->nu; u++) {
    nwr += avbd_wrench_trn(m, u);
    nbt += m->actuator_trntype[u] == RL_TRN_BODY;
  }
  if (m->nconmax > maxcon) maxcon = m->nconmax;
  /* the certified stop's dense scratch (58 KB) only where that stop is chosen */
  int ncert = prm->stop == RL_AVBD_STOP_CERTIFIED ? AVBD_CERT_MAX : 0;
  avbd_sizes z = {nb, nj, nr, maxcon, ncmp, nmov, ncr, ncrl, nloop, nmdof, nwr, nbt, ncert, nlit};
  rl_avbd probe;
  size_t bytes = avbd_carve(&probe, m, &z, NULL) + 64;
  rl_avbd *am = calloc(1, sizeof *am);
  char *buf = calloc(1, bytes);
  if (!am || !buf) {
    free(am);
    free(buf);
    snprintf(err, (size_t)errlen, "avbd: out of memory");
    return NULL;
  }
  am->buffer = buf;
  am->prm = *prm;
  am->nb = nb;
  am->maxcon = maxcon;
  am->nloop = nloop;
  am->ncert = ncert;
  am->nmocap = m->nmocap;
  avbd_carve(am, m, &z, (char *)(((uintptr_t)buf + 63) & ~(uintptr_t)63));

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
  if (am->prm.contacts == RL_AVBD_CONTACTS_DATA && am->prm.rest_overlaps == RL_AVBD_REST_OVERLAPS_DROP)
    avbd_rest_overlaps(am, m, d);

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

  /* sites and their z axes: relative to the COM frame (dynamic) or in the world (static), as the geoms */
  for (int i = 0; i < m->nsite; i++) {
    int b = m->site_bodyid[i];
    const real *X = d->site_xmat + 9 * i;
    if (avbd_is_static(m, b)) {
      rl_v3_copy(am->spos + 3 * i, d->site_xpos + 3 * i);
      am->szax[3 * i] = X[2], am->szax[3 * i + 1] = X[5], am->szax[3 * i + 2] = X[8];
    } else {
      real t[3], R[9], Rs[9], z[3];
      rl_v3_sub(t, m->site_pos + 3 * i, m->body_ipos + 3 * b);
      rl_q_to_mat(R, m->body_iquat + 4 * b);
      rl_m3_tmulv(am->spos + 3 * i, R, t);
      rl_q_to_mat(Rs, m->site_quat + 4 * i);
      z[0] = Rs[2], z[1] = Rs[5], z[2] = Rs[8];
      rl_m3_tmulv(am->szax + 3 * i, R, z);
      real c[4];
      rl_q_conj(c, m->body_iquat + 4 * b);
      rl_q_mul(am->squat + 4 * i, c, m->site_quat + 4 * i);
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
    jt->cmp = -1;
    if (jn > 1) { /* several joints: one compound joint (avbd_compound.c) */
      jt->kind = RL_AVBD_COMPOUND;
      jt->jnt = -1;
      jt->cmp = am->ncmp++;
      avbd_compound_init(am, m, d, jt, am->cmp + jt->cmp, b, &top);
      continue;
    }
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
        if (avbd_joint_trn(m, u, j)) {
          if (jt->act < 0) jt->act = u;
          jt->act_end = u + 1;
        }
      avbd_joint_geometry(m, d, am, jt, d->xanchor + 3 * j, d->xaxis + 3 * j);
      jt->phi = jt->qpos0;
    }
    avbd_make_rows(am, jt, &top);
  }
  for (int e = 0; e < m->neq; e++) {
    if (!avbd_pose_equality(m, e)) continue;
    rl_avbd_joint *jt = am->joint + k++;
    memset(jt, 0, sizeof *jt);
    jt->cmp = -1;
    avbd_equality_geometry(m, d, am, e, jt);
    avbd_make_rows(am, jt, &top);
  }
  am->njoint = k;
  avbd_crow_build(am, m, &top);
  avbd_mdof_build(am, m, &top);
  am->nrow = top;
  avbd_moving_build(am, m, d);
  rl_data_free(d);
  for (int j = 0; j < am->njoint; j++) avbd_row_scales(am, m, am->joint + j);
  for (int i = 0; i < am->nmdof; i++) avbd_mdof_scales(am, m, am->mdof + i);
  avbd_wrench_build(am, m);
  avbd_tendon_lists(am, m);
  avbd_components(am);
  avbd_crow_lists(am, m);
  am->servo_scaled = am->prm.servo_model;

  /* body → joints (CSR) */
  for (int i = 0; i < nb; i++) am->jnum[i] = 0;
  for (int j = 0; j < am->njoint; j++) {
    if (am->joint[j].a >= 0) am->jnum[am->joint[j].a]++;
    am->jnum[am->joint[j].b]++;
  }
  int a = 0;
  for (int i = 0; i < nb; i++) {
    am->jadr[i] = a;
    a += am->jnum[i];
    am->jnum[i] = 0;
  }
  for (int j = 0; j < am->njoint; j++) {
    int ba = am->joint[j].a, bb = am->joint[j].b;
    if (ba >= 0) am->jlist[am->jadr[ba] + am->jnum[ba]++] = j;
    am->jlist[am->jadr[bb] + am->jnum[bb]++] = j;
  }
  avbd_loop_items(am, m);
  for (int t = 0; t < m->ntendon; t++) am->ftloop[t] = 0;
  avbd_tree_build(am);
  for (int i = 0; i < am->nlitem; i++)
    if (am->litem[i].kind == RL_AVBD_LOOP_FIXED && am->litem[i].block >= 0) am->ftloop[am->litem[i].id] = 1;
  return am;
}

void rl_avbd_free(rl_avbd *am) {
  if (!am) return;
  free(am->buffer);
  free(am);
}
#endif

/* ------------------------------------------------------- generalized ↔ maximal */

/* Joint coordinate rate from the body velocities: hinge φ̇ = a·(ω_B − ω_A); slide
 * ṡ = (ω_A × a)·(p_B − p_A) + a·(v_B + ω_B × R_B r_B − v_A − ω_A × R_A r_A). */
RL_HDFN real avbd_coord_rate(const rl_avbd *am, const rl_avbd_joint *jt) {
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

/* The rigid displacement of mocap body k from its last pose (x₀, q₀) to (x₁, q₁) = (mocap_pos, mocap_quat/‖·‖)
   carried by every slot s that hangs from it:  Δq = q₁ q₀⁻¹,  x_s ← x₁ + R(Δq)(x_s − x₀),  q_s ← Δq q_s,
   v_s ← R(Δq) v_s,  ω_s ← R(Δq) ω_s (its joint coordinates and relative velocities unchanged). */
RL_HDFN static void avbd_mocap_carry(rl_avbd *am, int k, const real x1[3], const real q1[4]) {
  real q0[4], c[4], dq[4], R[9], t[3];
  rl_q_copy(q0, am->mocap_last + 7 * k + 3);
  rl_q_normalize(q0);
  rl_q_conj(c, q0);
  rl_q_mul(dq, q1, c);
  rl_q_normalize(dq);
  rl_q_to_mat(R, dq);
  for (int s = 0; s < am->nb; s++) {
    if (am->ride[s] != k) continue;
    rl_avbd_pose *P = am->pose + s;
    rl_v3_sub(t, P->x, am->mocap_last + 7 * k);
    rl_m3_mulv(P->x, R, t);
    rl_v3_add(P->x, P->x, x1);
    rl_q_mul(c, dq, P->q);
    rl_q_normalize(c);
    rl_q_copy(P->q, c);
    rl_avbd_pose_sync(P);
    real *v = am->vel + 6 * s;
    rl_m3_mulv(t, R, v);
    rl_v3_copy(v, t);
    rl_m3_mulv(t, R, v + 3);
    rl_v3_copy(v + 3, t);
    rl_m3_mulv(t, R, am->vprev + 3 * s);
    rl_v3_copy(am->vprev + 3 * s, t);
    am->ver[s]++; /* moved: its cached joint and contact values are stale */
  }
}

/* The mocap bodies moved since the last call carry the bodies that hang from them (avbd_mocap_carry); the
   world-side geometry of the joints that move with a mocap body from M = (mocap_pos, mocap_quat/‖·‖):
     r_A = x_M + R_M r̂_A,  a = R_M â,  t_k = R_M t̂_k,  q_rel0 = q_M ⊗ q̂_rel0,  F0 likewise;
   their cached values are stale (the world side moved without a pose version). */
RL_HDFN void rl_avbd_mocap_frames(rl_avbd *am, const rl_data *d) {
  for (int k = 0; k < am->nmocap; k++) {
    const real *x = d->mocap_pos + 3 * k, *qg = d->mocap_quat + 4 * k;
    real *last = am->mocap_last + 7 * k;
    if (x[0] == last[0] && x[1] == last[1] && x[2] == last[2] && qg[0] == last[3] && qg[1] == last[4] &&
        qg[2] == last[5] && qg[3] == last[6])
      continue;
    real q[4];
    rl_q_copy(q, qg);
    rl_q_normalize(q);
    avbd_mocap_carry(am, k, x, q);
    for (int i = 0; i < 7; i++) am->mocap_prev[7 * k + i] = last[i];
    rl_v3_copy(last, x);
    rl_q_copy(last + 3, qg);
    am->mocap_moved[k] = am->steps;
  }
  for (int i = 0; i < am->nmoving; i++) {
    const rl_avbd_moving *mv = am->moving + i;
    rl_avbd_joint *jt = am->joint + mv->joint;
    real q[4], R[9];
    const real *x = d->mocap_pos + 3 * mv->mocap;
    rl_q_copy(q, d->mocap_quat + 4 * mv->mocap);
    rl_q_normalize(q);
    rl_q_to_mat(R, q);
    rl_m3_mulv(jt->rA, R, mv->rA);
    rl_v3_add(jt->rA, jt->rA, x);
    rl_m3_mulv(jt->axA, R, mv->axA);
    rl_m3_mulv(jt->t1A, R, mv->t1A);
    rl_m3_mulv(jt->t2A, R, mv->t2A);
    rl_q_mul(jt->qrel0, q, mv->qrel0);
    am->jver[2 * mv->joint] = am->jver[2 * mv->joint + 1] = ~0ull;
    if (jt->kind == RL_AVBD_COMPOUND) {
      rl_avbd_compound *c = am->cmp + jt->cmp;
      rl_m3_mulv(c->xp, R, mv->xp);
      rl_v3_add(c->xp, c->xp, x);
      rl_q_mul(c->xq, q, mv->xq);
      am->cmpver[2 * jt->cmp] = am->cmpver[2 * jt->cmp + 1] = ~0ull;
    }
  }
}

/* the mocap poses of d as the ones the AVBD state stands at (no displacement to carry) */
static void avbd_mocap_mark(rl_avbd *am, const rl_data *d) {
  for (int k = 0; k < am->nmocap; k++) {
    rl_v3_copy(am->mocap_last + 7 * k, d->mocap_pos + 3 * k);
    rl_q_copy(am->mocap_last + 7 * k + 3, d->mocap_quat + 4 * k);
    am->mocap_moved[k] = -1;
  }
}

void rl_avbd_from_generalized(rl_avbd *am, const rl_model *m, rl_data *d) {
  /* a bad qpos/qvel is reset to qpos0 (rl_engine.h) before it becomes poses and joint coordinates (a
     huge hinge angle would also make the angle unwrapping loop for ever) */
  rl_check_state(m, d);
  avbd_mocap_mark(am, d);
  rl_avbd_mocap_frames(am, d);
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
    if (jt->kind == RL_AVBD_COMPOUND) avbd_compound_from_qpos(am->cmp + jt->cmp, m, d);
  }
  for (int c = 0; c < am->ncmp; c++) am->cmpver[2 * c] = am->cmpver[2 * c + 1] = ~0ull;
  for (int r = 0; r < am->nrow; r++) am->row[r].lambda = am->row[r].rho = 0;
  am->ncon = am->nprev = 0;
  am->step0 = am->steps;
  am->time = d->time;
}

/* q ← −q if that is closer to ref (quaternion sign continuity) */
RL_HDFN static void avbd_q_continuous(real q[4], const real ref[4]) {
  if (q[0] * ref[0] + q[1] * ref[1] + q[2] * ref[2] + q[3] * ref[3] < 0)
    for (int i = 0; i < 4; i++) q[i] = -q[i];
}

/* body-frame quaternion of slot s: q_body = q_com ⊗ iquat⁻¹ (normalized) */
RL_HDFN void avbd_body_quat(const rl_avbd *am, int s, real q[4]) {
  real c[4];
  rl_q_conj(c, am->iquat + 4 * s);
  rl_q_mul(q, am->pose[s].q, c);
  rl_q_normalize(q);
}

/* MuJoCo's qpos of ball joint jt (B's rotation relative to its zero in A, in B's body frame) at the current poses:
   q_ball = iquat_B ⊗ (q_rel0⁻¹ q_A⁻¹ q_B) ⊗ iquat_B⁻¹ (not normalized) */
RL_HDFN void avbd_ball_quat(const rl_avbd *am, const rl_avbd_joint *jt, real r[4]) {
  const rl_avbd_pose *A = avbd_pose_of(am, jt->a), *P = am->pose + jt->b;
  real c[4], x[4];
  rl_q_conj(c, jt->qrel0);
  rl_q_conj(x, A->q);
  rl_q_mul(r, c, x);
  rl_q_mul(r, r, P->q);
  rl_q_mul(r, am->iquat + 4 * jt->b, r);
  rl_q_conj(c, am->iquat + 4 * jt->b);
  rl_q_mul(r, r, c);
}

RL_HDFN void rl_avbd_to_generalized(const rl_avbd *am, const rl_model *m, rl_data *d) {
  for (int s = 0; s < am->nb; s++) {
    int b = am->body[s];
    if (m->body_jntnum[b] > 1) {
      for (int k = am->jadr[s]; k < am->jadr[s] + am->jnum[s]; k++) {
        const rl_avbd_joint *jt = am->joint + am->jlist[k];
        if (jt->kind == RL_AVBD_COMPOUND && jt->b == s) avbd_compound_to_generalized(am, m, d, jt);
      }
      continue;
    }
    if (m->body_jntnum[b] != 1) continue;
    int j = m->body_jntadr[b], qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
    const rl_avbd_pose *P = am->pose + s;
    const real *v = am->vel + 6 * s;
    real qb[4], Rb[9];
    avbd_body_quat(am, s, qb);
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
      real r[4], dw[3];
      avbd_ball_quat(am, jt, r);
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
