/* avbd_contact.c — AVBD's contacts: the own ground contacts (support points of dynamic geoms against
 * static planes), contacts loaded from rl_collision, their points and gaps at the current poses, the
 * warm start from the previous step's contacts and the body → contacts lists. */
#include <string.h>
#include "avbd_internal.h"

/* ------------------------------------------------------------------- contacts */

/* world pose of geom g: a static geom's stored pose, or COM pose ⊗ (gpos, gquat) */
RL_HDFN static void avbd_geom_pose(const rl_avbd *am, const rl_model *m, int g, real x[3], real R[9]) {
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
RL_HDFN static void avbd_feature(const rl_model *m, int g, int f, real c[3], real *r) {
  const real *sz = m->geom_size + 3 * g;
  *r = 0;
  rl_v3_zero(c);
  switch (m->geom_type[g]) {
  case RL_GEOM_SPHERE: *r = sz[0]; break;
  case RL_GEOM_CAPSULE:
    *r = sz[0];
    c[2] = f ? sz[1] : -sz[1];
    break;
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

/* A contact's friction as the rows take it, from its condim: 1 frictionless, 3 sliding (mu), 4 adds the
 * torsional coefficient, 6 the rolling one. */
RL_HDFN static void avbd_contact_friction(rl_avbd_contact *k, int dim, real slide, real spin, real roll) {
  k->dim = dim;
  k->mu = dim == 1 ? 0 : slide;
  k->mu_spin = dim >= 4 ? spin : 0;
  k->mu_roll = dim >= 6 ? roll : 0;
}

/* Ground contacts at distributed support points : feature centre c (radius r) of a geom on a
 * dynamic body against a static plane (point o, normal n): dist = n·(c − o) − r.  The pair's condim, friction
 * and includemargin ι = margin − gap are MuJoCo's (rl_pair_condim_friction; the larger margin and gap of the
 * two geoms), and the row's zero is where MuJoCo's contact row has its zero, dist = ι: a contact when
 * dist − ι < margin_avbd + 2h‖v_c‖.  Body point p_B = c − r·n, ground point p_A = p_B − (dist − ι)·n, so that
 * C_n = dist − ι. */
RL_HDFN void avbd_ground_contacts(rl_avbd *am, const rl_model *m, real h) {
  am->ncon = 0;
  if (m->opt.disableflags & (RL_DSBL_CONTACT | RL_DSBL_CONSTRAINT)) return;
  for (int p = 0; p < m->ngeom; p++) {
    if (m->geom_type[p] != RL_GEOM_PLANE || am->slot[m->geom_bodyid[p]] >= 0 || avbd_mocap_of(m, m->geom_bodyid[p]) >= 0)
      continue;
    real o[3], Rp[9], n[3];
    avbd_geom_pose(am, m, p, o, Rp);
    n[0] = Rp[2];
    n[1] = Rp[5];
    n[2] = Rp[8];
    for (int g = 0; g < m->ngeom; g++) {
      int s = am->slot[m->geom_bodyid[g]];
      int nf = avbd_nfeature(m, g);
      if (s < 0 || nf == 0 || !avbd_pair_filter(m, p, g)) continue;
      real xg[3], Rg[9], fr[3];
      int dim = rl_pair_condim_friction(m, p, g, fr);
      real iota = rl_avbd_max(m->geom_margin[p], m->geom_margin[g]) - rl_avbd_max(m->geom_gap[p], m->geom_gap[g]);
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
        if (!(dist - iota < am->prm.contact_margin + 2 * h * rl_v3_norm(vc))) continue;
        rl_avbd_contact *k = am->con + am->ncon++;
        memset(k, 0, sizeof *k);
        k->a = -1;
        k->b = s;
        k->key[0] = p;
        k->key[1] = g;
        k->key[2] = f;
        real pB[3], pA[3];
        rl_v3_copy(pB, c);
        rl_v3_addscl(pB, n, -r);
        rl_v3_copy(pA, pB);
        rl_v3_addscl(pA, n, iota - dist);
        rl_v3_copy(k->rA, pA);
        avbd_to_local(k->rB, P, pB);
        rl_v3_copy(k->cA, pA);
        avbd_to_local(k->cB, P, c);
        k->rad[1] = r;
        rl_v3_copy(k->frame, n);
        avbd_perp(k->frame + 3, k->frame + 6, n);
        avbd_contact_friction(k, dim, fr[0], fr[1], fr[2]);
      }
    }
  }
}

/* radius of the spherical surface of geom g at any contact (sphere, capsule: size[0]); 0 for flat or
 * cornered surfaces and for geoms whose curvature varies (ellipsoid, cylinder: body-fixed point kept) */
RL_HDFN static real avbd_geom_radius(const rl_model *m, int g) {
  int t = m->geom_type[g];
  return (t == RL_GEOM_SPHERE || t == RL_GEOM_CAPSULE) ? m->geom_size[3 * g] : 0;
}

/* 1 if joint j moves the world point p along n to first order: hinge |n·(a × (p − x_a))|, slide |n·a|, ball
   ‖(p − x_a) × n‖ above rounding, 64ε·(1 + ‖p − x_a‖); a free joint always */
static int avbd_joint_moves_along(const rl_model *m, const rl_data *d, int j, const real p[3], const real n[3]) {
  const real *ax = d->xaxis + 3 * j;
  real r[3], t[3];
  rl_v3_sub(r, p, d->xanchor + 3 * j);
  real tol = 64 * RL_EPS * (1 + rl_v3_norm(r));
  switch (m->jnt_type[j]) {
  case RL_JNT_FREE: return 1;
  case RL_JNT_SLIDE: return rl_fabs(rl_v3_dot(n, ax)) > tol;
  case RL_JNT_BALL:
    rl_v3_cross(t, r, n);
    return rl_v3_norm(t) > tol;
  default:
    rl_v3_cross(t, ax, r);
    return rl_fabs(rl_v3_dot(n, t)) > tol;
  }
}

/* 1 if contact c (world point p, normal n) joins a body b to a body it hangs from through joints (b's chain of
   parents reaches the other body's weld body; MuJoCo's parent filter spares only a direct parent, and one welded
   to the world) and no joint on that chain moves p along n to first order (avbd_joint_moves_along): the relative
   velocity of the two sides at p is the sum of those joints' contributions, each along n zero.  Such an overlap is
   fixed by the joints, and pushing it out is infeasible. */
static int avbd_fixed_gap(const rl_model *m, const rl_data *d, const rl_contact *c) {
  for (int side = 0; side < 2; side++) {
    int b = m->geom_bodyid[side ? c->geom2 : c->geom1], o = m->geom_bodyid[side ? c->geom1 : c->geom2];
    int wo = m->body_weldid[o], moves = 0, x = b, njoint = 0;
    if (b <= 0 || m->body_weldid[b] == wo) continue;
    for (; x > 0 && m->body_weldid[x] != wo && !moves; x = m->body_parentid[x])
      for (int j = m->body_jntadr[x]; j < m->body_jntadr[x] + m->body_jntnum[x] && !moves; j++, njoint++)
        moves = avbd_joint_moves_along(m, d, j, c->pos, c->frame);
    if (!moves && njoint > 0 && m->body_weldid[x] == wo) return 1;
  }
  return 0;
}

/* The interval [t0, t1] of the line p + t·n inside the box of geom g (centre x, row-major rotation R, half
 * sizes s): per box axis e_i, |e_i·(p + t·n − x)| ≤ s_i.  When n is within 0.8° of an axis e_k (|e_k·n| > 1 − 1e-4:
 * a face contact of this box, or a face nearly parallel to the other box's), only that face pair bounds t: the
 * face planes are exact there, and a contact point at the edge of the touching region may lie a rounding (or a
 * small tilt) outside the box's side slabs.  Otherwise every slab bounds t, an interval empty by less than
 * 1e-6·max s_i still counting (a line through an edge or a corner).  0 where the line misses the box. */
static int avbd_box_line(const rl_data *d, const rl_model *m, int g, const real p[3], const real n[3], real *t0,
                         real *t1) {
  const real *x = d->geom_xpos + 3 * g, *R = d->geom_xmat + 9 * g, *s = m->geom_size + 3 * g;
  real t[3], pl[3], nl[3], tol = (real)1e-6 * rl_fmax(s[0], rl_fmax(s[1], s[2]));
  rl_v3_sub(t, p, x);
  rl_m3_tmulv(pl, R, t); /* p and n in the box's frame */
  rl_m3_tmulv(nl, R, n);
  int k = 0;
  for (int i = 1; i < 3; i++)
    if (rl_fabs(nl[i]) > rl_fabs(nl[k])) k = i;
  int face = rl_fabs(nl[k]) > 1 - (real)1e-4;
  *t0 = -(real)1e30;
  *t1 = (real)1e30;
  for (int i = 0; i < 3; i++) {
    if (face && i != k) continue;
    if (rl_fabs(nl[i]) < 64 * RL_EPS) {
      if (rl_fabs(pl[i]) > s[i] + tol) return 0;
      continue;
    }
    real a = (-s[i] - pl[i]) / nl[i], b = (s[i] - pl[i]) / nl[i];
    *t0 = rl_fmax(*t0, rl_fmin(a, b));
    *t1 = rl_fmin(*t1, rl_fmax(a, b));
  }
  return *t0 <= *t1 + tol;
}

/* The surface points of a box–box contact: on the line through its point p along its normal n (from geom1 to
 * geom2), where the line leaves box 1 (p + t₁·n, t₁ the top of its interval) and enters box 2 (p + t₂·n, t₂ the
 * bottom of its), so that C_n = t₂ − t₁.  MuJoCo 2.2.2's box–box collider, which rl_collision reproduces,
 * reports half this overlap as dist when n is a face normal of either box (two aligned boxes 1e-3 m into each
 * other: dist = −5e-4, the point midway); measured against these intervals on 11 900 contacts of random box
 * pairs: every face contact at half, every edge–edge contact equal.  A hard contact taking dist as its gap
 * removed half such an overlap per step (a box pushed by a moving paddle settled one step of the paddle's motion
 * deep).  0 (the collider's pos ∓ dist/2 kept) when the line misses a box. */
static int avbd_box_box_points(const rl_model *m, const rl_data *d, const rl_contact *c, real p1[3], real p2[3]) {
  if (m->geom_type[c->geom1] != RL_GEOM_BOX || m->geom_type[c->geom2] != RL_GEOM_BOX) return 0;
  real a0, a1, b0, b1;
  if (!avbd_box_line(d, m, c->geom1, c->pos, c->frame, &a0, &a1) ||
      !avbd_box_line(d, m, c->geom2, c->pos, c->frame, &b0, &b1))
    return 0;
  rl_v3_copy(p1, c->pos);
  rl_v3_addscl(p1, c->frame, a1);
  rl_v3_copy(p2, c->pos);
  rl_v3_addscl(p2, c->frame, b0);
  return 1;
}

/* 1 if geoms g1, g2 are a pair of one articulation that overlapped at qpos0 (rl_avbd.rest) */
static int avbd_rest_pair(const rl_avbd *am, int g1, int g2) {
  int a = g1 < g2 ? g1 : g2, b = g1 < g2 ? g2 : g1;
  for (int k = 0; k < am->nrest; k++)
    if (am->rest[k][0] == a && am->rest[k][1] == b) return 1;
  return 0;
}

void rl_avbd_load_contacts(rl_avbd *am, const rl_model *m, const rl_data *d) {
  am->ncon = 0;
  for (int i = 0; i < d->ncon && am->ncon < am->maxcon; i++) {
    const rl_contact *c = d->contact + i;
    if (c->exclude || (am->nrest > 0 && avbd_rest_pair(am, c->geom1, c->geom2))) continue;
    if (avbd_fixed_gap(m, d, c)) continue; /* no joint changes its gap: its normal force does no work */
    int s1 = am->slot[m->geom_bodyid[c->geom1]], s2 = am->slot[m->geom_bodyid[c->geom2]];
    if (s1 < 0 && s2 < 0) continue;
    rl_avbd_contact *k = am->con + am->ncon++;
    memset(k, 0, sizeof *k);
    k->a = s1;
    k->b = s2;
    k->key[0] = c->geom1;
    k->key[1] = c->geom2;
    k->key[2] = -1;
    real p1[3], p2[3];
    if (!avbd_box_box_points(m, d, c, p1, p2)) {
      rl_v3_copy(p1, c->pos);
      rl_v3_addscl(p1, c->frame, -c->dist / 2);
      rl_v3_copy(p2, c->pos);
      rl_v3_addscl(p2, c->frame, c->dist / 2);
    }
    avbd_to_local(k->rA, avbd_pose_of(am, s1), p1);
    avbd_to_local(k->rB, avbd_pose_of(am, s2), p2);
    /* centres of curvature: A's surface point is c_A + rad_A·n, B's is c_B − rad_B·n */
    k->rad[0] = avbd_geom_radius(m, c->geom1);
    k->rad[1] = avbd_geom_radius(m, c->geom2);
    rl_v3_addscl(p1, c->frame, -k->rad[0]);
    rl_v3_addscl(p2, c->frame, k->rad[1]);
    /* the row's zero where MuJoCo's contact row has its zero, dist = includemargin (margin − gap of the geoms
       or of the explicit <pair>): A's centre moves by includemargin along n, so C_n = dist − includemargin */
    if (c->includemargin != 0) rl_v3_addscl(p1, c->frame, c->includemargin);
    avbd_to_local(k->cA, avbd_pose_of(am, s1), p1);
    avbd_to_local(k->cB, avbd_pose_of(am, s2), p2);
    memcpy(k->frame, c->frame, sizeof k->frame);
    avbd_contact_friction(k, c->dim, c->mu > 0 ? c->mu : c->friction[0], c->friction[2], c->friction[3]);
  }
}

/* world points and lever arms of a contact at the current poses (rl_avbd_contact_points) */
RL_HDFN void avbd_contact_points(const rl_avbd *am, const rl_avbd_contact *k, real pA[3], real uA[3], real pB[3], real uB[3]) {
  rl_avbd_contact_points(k, avbd_pose_of(am, k->a), avbd_pose_of(am, k->b), pA, uA, pB, uB);
}

/* world centres of curvature and their lever arms at the current poses (rl_avbd_contact_centres) */
RL_HDFN void avbd_contact_centres(const rl_avbd *am, const rl_avbd_contact *k, real cA[3], real vA[3], real cB[3], real vB[3]) {
  rl_avbd_contact_centres(k, avbd_pose_of(am, k->a), avbd_pose_of(am, k->b), cA, vA, cB, vB);
}

/* contact rows' C at the current poses (rl_avbd_contact_c_at) */
RL_HDFN void avbd_contact_c(const rl_avbd *am, const rl_avbd_contact *k, real C[3]) {
  real pA[3], pB[3], uA[3], uB[3], cA[3], cB[3];
  avbd_contact_points(am, k, pA, uA, pB, uB);
  avbd_contact_centres(am, k, cA, uA, cB, uB);
  rl_avbd_contact_c_at(k, pA, pB, cA, cB, C);
}

/* Cache matching: a contact with the key of one in the previous step inherits its multipliers
 * (decayed: λ ·= αγ, ρ ·= γ) and, for a ground contact that was sticking, its static-friction
 * anchor on the ground (reset when the drift exceeds 10 mm).  C⁰ is evaluated after this.
 * A contact between two dynamic bodies carries at most ρ = AVBD_PAIR_RHO_CARRY·ρ₀ into the next step.
 * Why: in a stack (box_stack, collision-module manifolds) the carried ρ of the box–box rows ratchets up
 * step after step towards ρ_max; the block sweeps then stall (budget exhausted from ~0.3 s), the boxes
 * sink and the stack explodes (2.06 m drift in 10 s, f64).  Measured drift over 10 s (box_stack) /
 * 2 s (box_pyramid), f64, by the carry cap: 1: 5.0e-4 / 5.0e-2 m (the pyramid needs some carried ρ);
 * 2, 3: 5.0e-4 / 5.9e-4 m; 5: 1.66 m (stack) ; 10: 8.2e-4 m; 1e2–1e6: 2–8 m.  The window is narrow:
 * this is a stop-gap, not an understood fix.
 * With articulation blocks the mass a contact moves within one block solve is its articulation's, so
 * ρ₀ uses the lighter articulation's mass (avbd_tree_mass), capped at AVBD_TREE_CONTACT_MASS times the
 * lighter body's.  Measured, iterations/step over 1 s from qpos0 at the models' dt (f64, update test) with
 * the cap 1 (the body's mass) / 3 / 10: quadruped12 19.5 / 12.3 / 8.8, microduck 17.3 / 8.2 / 7.6,
 * planar_walker 17.8 / 9.1 / 5.0, biped 24.0 / 13.2 / 6.9; without a cap quadruped12 exhausts 16 steps of
 * 500 sweeps at its landing (a period-3 cycle of the contact rows). */
/* mocap id of the mocap body that contact k's static side moves with (avbd_mocap_of), −1 if none (own ground
   contacts: planes fixed to the world) */
RL_HDFN static int avbd_contact_mocap(const rl_model *m, const rl_avbd_contact *k) {
  if (k->key[2] >= 0) return -1;
  int g = k->a < 0 ? k->key[0] : k->b < 0 ? k->key[1] : -1;
  return g >= 0 ? avbd_mocap_of(m, m->geom_bodyid[g]) : -1;
}

/* C⁰ of a contact whose static side moved with mocap body j for this step: the penetration the step may leave
 * in part (C̃ = C − T(C⁰), rl_avbd_one_sided_target) is the one before the move, not the prescribed motion.
 * With the surface point p_S of the static side (its world point at the new pose T₁) displaced by
 * δ = p_S − T₀T₁⁻¹p_S since the old pose T₀, the normal row before the move read C_n + n·δ (static side A) or
 * C_n − n·δ (side B); the tangent rows keep C⁰ = 0 (the static side holds still within the step). */
RL_HDFN static void avbd_contact_c0_moved(const rl_avbd *am, int j, rl_avbd_contact *k) {
  const real *x1 = am->mocap_last + 7 * j, *x0 = am->mocap_prev + 7 * j;
  real q1[4], q0[4], R1[9], R0[9], t[3], u[3], p0[3], pA[3], uA[3], pB[3], uB[3];
  rl_q_copy(q1, x1 + 3);
  rl_q_normalize(q1);
  rl_q_copy(q0, x0 + 3);
  rl_q_normalize(q0);
  rl_q_to_mat(R1, q1);
  rl_q_to_mat(R0, q0);
  avbd_contact_points(am, k, pA, uA, pB, uB);
  const real *pS = k->a < 0 ? pA : pB;
  rl_v3_sub(t, pS, x1);
  rl_m3_tmulv(u, R1, t);
  rl_m3_mulv(p0, R0, u);
  rl_v3_add(p0, p0, x0);
  rl_v3_sub(t, pS, p0);
  real dn = rl_v3_dot(k->frame, t);
  k->c0[0] += k->a < 0 ? dn : -dn;
  k->c0[1] = k->c0[2] = 0;
}

RL_HDFN void avbd_contact_warmstart(rl_avbd *am, const rl_model *m, real h) {
  const rl_avbd_param *pr = &am->prm;
  for (int i = 0; i < am->ncon; i++) {
    rl_avbd_contact *k = am->con + i;
    real meff = pr->block == RL_AVBD_BLOCK_ARTICULATION
                    ? rl_avbd_min(rl_avbd_min(avbd_tree_mass(am, k->a), avbd_tree_mass(am, k->b)),
                                  AVBD_TREE_CONTACT_MASS * rl_avbd_min(avbd_mass(am, k->a), avbd_mass(am, k->b)))
                    : rl_avbd_min(avbd_mass(am, k->a), avbd_mass(am, k->b));
    k->rho0 = pr->rho_init * meff / (h * h);
    for (int r = 0; r < 3; r++) {
      k->lambda[r] = 0;
      k->rho[r] = k->rho0;
    }
    k->arho0 = pr->rho_init * rl_avbd_min(avbd_mean_inertia(am, m, k->a), avbd_mean_inertia(am, m, k->b)) / (h * h);
    for (int r = 0; r < 3; r++) {
      k->alam[r] = 0;
      k->arho[r] = k->arho0;
    }
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
      if (k->a < 0 && o->stick && o->lambda[0] < 0 && avbd_contact_mocap(m, k) < 0) {
        real d[3], nd;
        rl_v3_sub(d, o->rA, k->rA);
        nd = rl_v3_dot(d, k->frame);
        rl_v3_addscl(d, k->frame, -nd);
        if (rl_v3_norm(d) < (real)1e-2) {
          rl_v3_add(k->rA, k->rA, d);
          rl_v3_add(k->cA, k->cA, d);
        }
      }
      break;
    }
    avbd_contact_c(am, k, k->c0);
    int j = avbd_contact_mocap(m, k);
    if (j >= 0 && am->mocap_moved[j] == am->steps) avbd_contact_c0_moved(am, j, k);
    k->target_n = rl_avbd_one_sided_target(k->c0[0], pr->alpha, pr->slop);
    k->touched = k->c0[0] <= 0;
  }
}

/* body → contacts (CSR) */
RL_HDFN void avbd_contact_lists(rl_avbd *am) {
  for (int i = 0; i < am->nb; i++) am->cnum[i] = 0;
  for (int c = 0; c < am->ncon; c++) {
    if (am->con[c].a >= 0) am->cnum[am->con[c].a]++;
    if (am->con[c].b >= 0) am->cnum[am->con[c].b]++;
  }
  int a = 0;
  for (int i = 0; i < am->nb; i++) {
    am->cadr[i] = a;
    a += am->cnum[i];
    am->cnum[i] = 0;
  }
  for (int c = 0; c < am->ncon; c++) {
    int s1 = am->con[c].a, s2 = am->con[c].b;
    if (s1 >= 0) am->clist[am->cadr[s1] + am->cnum[s1]++] = c;
    if (s2 >= 0) am->clist[am->cadr[s2] + am->cnum[s2]++] = c;
  }
}
