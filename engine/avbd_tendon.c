/* avbd_tendon.c — spatial tendons in maximal coordinates.  A spatial tendon's length L runs along a path of
 * sites (straight segments, wraps around spheres and cylinders with MuJoCo's side sites, pulleys that start a
 * branch counted 1/divisor), evaluated here at the AVBD body poses.  Its spring, damper and actuators are an
 * energy of L whose gradient with respect to body s's displacement (δx, δθ: x ← x + δx, R ← Exp(δθ)R) is
 *   ∂L/∂z_s = Σ_segments (1/divisor)·(±u_k, ±(p − x_s) × u_k),   u_k = (p_{k+1} − p_k)/‖p_{k+1} − p_k‖,
 * + at the segment end p_{k+1} on s, − at its start p_k on s (tangent points move with the wrap geom's body;
 * the arc between two of them adds nothing to first order).  Each body's local solve takes the force
 * F_L·∂L/∂z_s and the Gauss–Newton curvature k_L·(∂L/∂z_s)(∂L/∂z_s)ᵀ with the other bodies at their current
 * poses, as a joint's coordinate terms see the other joints of a fixed tendon. */
#include "avbd_internal.h"
#include "rl_wrap.h"
#include "rl_crank.h"

/* world position p of site i at the current poses: x_s + R_s·r_i on a dynamic body (r_i in its COM frame), the
   fixed world position on a static one; *slot the body's slot (−1 static) */
RL_HDFN static void avbd_site_x(const rl_avbd *am, const rl_model *m, int i, real p[3], int *slot) {
  int s = am->slot[m->site_bodyid[i]];
  const real *r = am->spos + 3 * i;
  *slot = s;
  if (s < 0) {
    rl_v3_copy(p, r);
    return;
  }
  const rl_avbd_pose *P = am->pose + s;
  rl_m3_mulv(p, P->R, r);
  rl_v3_add(p, p, P->x);
}

/* world frame (x, R) of wrap geom g: the COM-frame view (gpos, gquat) composed with its body's pose, or the
   geom's fixed world pose on a static body */
RL_HDFN static void avbd_geom_frame(const rl_avbd *am, const rl_model *m, int g, real x[3], real R[9]) {
  int s = am->slot[m->geom_bodyid[g]];
  real Rg[9];
  rl_q_to_mat(Rg, am->gquat + 4 * g);
  if (s < 0) {
    rl_v3_copy(x, am->gpos + 3 * g);
    for (int i = 0; i < 9; i++) R[i] = Rg[i];
    return;
  }
  const rl_avbd_pose *P = am->pose + s;
  rl_m3_mulv(x, P->R, am->gpos + 3 * g);
  rl_v3_add(x, x, P->x);
  rl_m3_mul(R, P->R, Rg);
}

/* velocity of the material point p of slot s: v_s + ω_s × (p − x_s), zero on a static body */
RL_HDFN static void avbd_point_vel(const rl_avbd *am, int s, const real p[3], real v[3]) {
  if (s < 0) {
    rl_v3_zero(v);
    return;
  }
  real r[3];
  rl_v3_sub(r, p, am->pose[s].x);
  rl_v3_cross(v, am->vel + 6 * s + 3, r);
  rl_v3_add(v, v, am->vel + 6 * s);
}

/* One straight segment p0 (slot s0) → p1 (slot s1) of a branch counted 1/div: J += ∂‖p1 − p0‖/∂z_s / div for
   slot s (J non-NULL), *rate += u·(v(p1) − v(p0))/div (rate non-NULL); nothing when both ends are on one body */
RL_HDFN static void avbd_segment_terms(const rl_avbd *am, int s, const real p0[3], int s0, const real p1[3], int s1,
                                       real div, real J[6], real *rate) {
  if (s0 == s1) return;
  real u[3], r[3], w[3];
  rl_v3_sub(u, p1, p0);
  rl_wrap_normalize(u, 3);
  for (int end = 0; end < 2; end++) {
    int se = end ? s1 : s0;
    real sg = (end ? 1 : -1) / div;
    const real *p = end ? p1 : p0;
    if (J && se == s && s >= 0) {
      rl_v3_sub(r, p, am->pose[s].x);
      rl_v3_cross(w, r, u);
      for (int i = 0; i < 3; i++) {
        J[i] += sg * u[i];
        J[3 + i] += sg * w[i];
      }
    }
    if (rate) {
      avbd_point_vel(am, se, p, w);
      *rate += sg * rl_v3_dot(u, w);
    }
  }
}

/* Length of spatial tendon t at the current poses (the walk of MuJoCo's spatial tendon: site → [wrap geom →]
   site …, a pulley setting the divisor of what follows), with ∂L/∂z_s added into J (J non-NULL) and the rate
   L̇ = Σ u·Δv/div added into *rate (rate non-NULL) */
RL_HDFN real avbd_tendon_path(const rl_avbd *am, const rl_model *m, int t, int s, real J[6], real *rate) {
  int adr = m->tendon_adr[t], num = m->tendon_num[t];
  const int *type = m->wrap_type + adr, *id = m->wrap_objid + adr;
  const real *prm = m->wrap_prm + adr;
  real div = 1, L = 0;
  int j = 0;
  while (j < num - 1) {
    if (type[j] == RL_WRAP_PULLEY || type[j + 1] == RL_WRAP_PULLEY) {
      if (type[j] == RL_WRAP_PULLEY) div = prm[j];
      j++;
      continue;
    }
    int geom = -1, sl[4];
    real pnt[12], wlen = -1;
    avbd_site_x(am, m, id[j], pnt, sl);
    if (type[j + 1] == RL_WRAP_SPHERE || type[j + 1] == RL_WRAP_CYLINDER) {
      geom = id[j + 1];
      int side = (int)rl_floor(prm[j + 1] + (real)0.5), tmp;
      real x1[3], gx[3], gR[9], sx[3];
      avbd_site_x(am, m, id[j + 2], x1, &tmp);
      avbd_geom_frame(am, m, geom, gx, gR);
      if (side >= 0) avbd_site_x(am, m, side, sx, &tmp);
      wlen = rl_wrap_geom(pnt + 3, pnt, x1, gx, gR, m->geom_size[3 * geom], type[j + 1], side >= 0 ? sx : NULL);
    }
    int nseg = 1, s1 = geom >= 0 ? id[j + 2] : id[j + 1];
    if (wlen < 0) {
      avbd_site_x(am, m, s1, pnt + 3, sl + 1);
      L += rl_wrap_dist(pnt, pnt + 3) / div;
    } else {
      avbd_site_x(am, m, s1, pnt + 9, sl + 3);
      sl[1] = sl[2] = am->slot[m->geom_bodyid[geom]];
      L += (rl_wrap_dist(pnt, pnt + 3) + wlen + rl_wrap_dist(pnt + 6, pnt + 9)) / div;
      nseg = 3;
    }
    for (int k = 0; k < nseg; k++) avbd_segment_terms(am, s, pnt + 3 * k, sl[k], pnt + 3 * k + 3, sl[k + 1], div, J, rate);
    j += geom >= 0 ? 2 : 1;
  }
  return L;
}

/* Slider-crank transmission of actuator u at the current poses: crank pin c (cranksite), slider site s0 with axis
   a (its z), rod length ρ, v = c − s0, l and ∂l/∂v, ∂l/∂a from rl_crank_length (MuJoCo's crank length).
   Into J (slot s): the crank body's (∂l/∂v, (c − x_s) × ∂l/∂v), the slider body's −(∂l/∂v, (s0 − x_s) × ∂l/∂v)
   and, from δa = δθ × a, the slider body's angular a × ∂l/∂a; *rate += ∂l/∂v·(v_c − v_s0) + ∂l/∂a·(ω × a). */
RL_HDFN static real avbd_crank_length(const rl_avbd *am, const rl_model *m, int u, int s, real J[6], real *rate) {
  int ic = m->actuator_trnid[2 * u], is = m->actuator_trnid[2 * u + 1], sc, ss;
  real c[3], p[3], a[3], v[3], dldv[3], dlda[3], l, rod = m->actuator_cranklength[u];
  avbd_site_x(am, m, ic, c, &sc);
  avbd_site_x(am, m, is, p, &ss);
  const real *R = avbd_pose_of(am, ss)->R, *az = am->szax + 3 * is;
  rl_m3_mulv(a, R, az);
  rl_v3_sub(v, c, p);
  l = rl_crank_length(a, v, rod, dldv, dlda);
  if (J && s >= 0) {
    real r[3], w[3];
    for (int end = 0; end < 2; end++) {
      if ((end ? ss : sc) != s) continue;
      real sg = end ? -1 : 1;
      rl_v3_sub(r, end ? p : c, am->pose[s].x);
      rl_v3_cross(w, r, dldv);
      for (int i = 0; i < 3; i++) {
        J[i] += sg * dldv[i];
        J[3 + i] += sg * w[i];
      }
    }
    if (ss == s) {
      rl_v3_cross(w, a, dlda);
      for (int i = 0; i < 3; i++) J[3 + i] += w[i];
    }
  }
  if (rate) {
    real vc[3], vs[3], da[3];
    avbd_point_vel(am, sc, c, vc);
    avbd_point_vel(am, ss, p, vs);
    rl_v3_sub(vc, vc, vs);
    *rate += rl_v3_dot(dldv, vc);
    if (ss >= 0) {
      rl_v3_cross(da, am->vel + 6 * ss + 3, a);
      *rate += rl_v3_dot(dlda, da);
    }
  }
  return l;
}

/* The length behind entry id of the acting path list: spatial tendon id's path length (avbd_tendon_path), or for
   id = −1 − u actuator u's slider-crank length (avbd_crank_length) or its wrench displacement over the step
   (avbd_wrench_length); J and rate as there */
RL_HDFN real avbd_spat_length(const rl_avbd *am, const rl_model *m, int id, int s, real J[6], real *rate) {
  if (id < 0 && m->actuator_trntype[-1 - id] == RL_TRN_SLIDERCRANK)
    return avbd_crank_length(am, m, -1 - id, s, J, rate);
  if (id < 0) return avbd_wrench_length(am, -1 - id, s, J, rate);
  return avbd_tendon_path(am, m, id, s, J, rate);
}

/* Step start: each acting spatial tendon's length Lⁿ and rate L̇ⁿ at the step-start poses and velocities (a wrench
   actuator's displacement starts at 0, its rate is Vⁿ of avbd_wrench_begin) */
RL_HDFN void avbd_tendon_begin(rl_avbd *am, const rl_model *m) {
  for (int i = 0; i < am->nspat; i++) {
    int id = am->spat[i];
    if (id < 0 && m->actuator_trntype[-1 - id] != RL_TRN_SLIDERCRANK) {
      am->spat_n[2 * i] = 0;
      am->spat_n[2 * i + 1] = am->wrench[am->uwrench[-1 - id]].Vn;
      continue;
    }
    real rate = 0;
    am->spat_n[2 * i] = avbd_spat_length(am, m, am->spat[i], -1, NULL, &rate);
    am->spat_n[2 * i + 1] = rate;
  }
}

RL_HDFN static void avbd_crow_assemble(const rl_avbd *am, const rl_model *m, const rl_data *d, int s, int kkt, real H[36],
                                       real g[6]);

/* Terms of the spatial tendons through slot s in its local system: for each, J = ∂L/∂z_s at the current poses,
   F_L and k_L from avbd_tendon_force (spring, damper, actuators on the tendon), g += F_L·J and, unless kkt,
   H += k_L·JJᵀ (lower triangle; Gauss–Newton: the path's own curvature F_L·∂²L is left out, which changes
   the iteration, not its fixed point); then the coordinate rows on those tendons (avbd_crow_assemble) */
RL_HDFN void avbd_tendon_assemble(const rl_avbd *am, const rl_model *m, const rl_data *d, int s, real h, int kkt,
                                  real H[36], real g[6]) {
  for (int q = am->spadr[s]; q < am->spadr[s + 1]; q++) {
    int i = am->splist[q];
    real J[6] = {0, 0, 0, 0, 0, 0}, kL;
    real L = avbd_spat_length(am, m, am->spat[i], s, J, NULL);
    real F = avbd_tendon_force(am, m, d, am->spat[i], L, am->spat_n[2 * i], am->spat_n[2 * i + 1], h, &kL);
    rl_avbd_add_row(H, g, J, F, kkt ? 0 : kL);
  }
  avbd_crow_assemble(am, m, d, s, kkt, H, g);
}

/* ------------------------------------------------------------ rows on scalar coordinates */

/* value of joint j's coordinate: φ when j is jt's own joint (the local solve's argument); else that of the joint
   carrying it at the current poses (a hinge or slide of its own: Gauss–Seidel across the bodies, which a stiff
   row coupling two coordinates needs — with the values of the last dual update, the two local solves of
   j2 = 1.5·j3 chased each other and diverged), the last dual update's φ for a compound joint's component, qpos0
   for a joint of a static body */
RL_HDFN static real avbd_joint_scalar(const rl_avbd *am, const rl_model *m, int j, const rl_avbd_joint *jt, real phi) {
  if (jt && jt->jnt == j) return phi;
  const rl_avbd_joint *o = avbd_joint_of(am, j);
  if (!o) return m->qpos0[m->jnt_qposadr[j]];
  if (o->b >= 0 && am->joint <= o && o < am->joint + am->njoint &&
      (o->kind == RL_AVBD_HINGE || o->kind == RL_AVBD_SLIDE)) {
    real dA[6], dB[6];
    return rl_avbd_joint_coord(o, avbd_pose_of(am, o->a), avbd_pose_of(am, o->b), o->phi, dA, dB);
  }
  return o->phi;
}

/* value of a row's scalar (kind, id): a joint coordinate, a fixed tendon's Σ cᵢφᵢ, a spatial tendon's path length
   at the current poses (jt, φ: as avbd_joint_scalar) */
RL_HDFN static real avbd_scalar(const rl_avbd *am, const rl_model *m, int kind, int id, const rl_avbd_joint *jt, real phi) {
  if (kind == RL_AVBD_SC_JOINT) return avbd_joint_scalar(am, m, id, jt, phi);
  if (kind == RL_AVBD_SC_SPATIAL) return avbd_tendon_path(am, m, id, -1, NULL, NULL);
  real L = 0;
  for (int w = m->tendon_adr[id]; w < m->tendon_adr[id] + m->tendon_num[id]; w++)
    L += m->wrap_prm[w] * avbd_joint_scalar(am, m, m->wrap_objid[w], jt, phi);
  return L;
}

/* ∂S/∂φ_j of a row's scalar along joint j's coordinate: 1 for the joint itself, the sum of its coefficients in a
   fixed tendon, 0 for a spatial tendon (which depends on body poses, not on coordinates) */
RL_HDFN real avbd_scalar_dphi(const rl_model *m, int kind, int id, int j) {
  if (kind == RL_AVBD_SC_JOINT) return id == j ? 1 : 0;
  if (kind == RL_AVBD_SC_SPATIAL) return 0;
  real c = 0;
  for (int w = m->tendon_adr[id]; w < m->tendon_adr[id] + m->tendon_num[id]; w++)
    if (m->wrap_objid[w] == j) c += m->wrap_prm[w];
  return c;
}

/* The row's C and its slopes wgt = (∂C/∂S_a, ∂C/∂S_b) at the current state (jt, φ: as avbd_joint_scalar):
 *   equality  C = (S_a − S_a⁰) − c₀ − (c₁x + c₂x² + c₃x³ + c₄x⁴),  x = S_b − S_b⁰  (no S_b: C = S_a − S_a⁰ − c₀),
 *             wgt = (1, −(c₁ + 2c₂x + 3c₃x² + 4c₄x³))   (MuJoCo's joint and tendon equalities)
 *   lower limit  C = S_a − lo ≥ 0,  wgt = (1, 0);   upper limit  C = hi − S_a ≥ 0,  wgt = (−1, 0)
 *   friction loss  C = S_a (its row acts on C − C⁰, the change since the step start),  wgt = (1, 0) */
RL_HDFN static real avbd_crow_c(const rl_avbd *am, const rl_model *m, const rl_avbd_crow *r, const rl_avbd_joint *jt, real phi,
                                real wgt[2]) {
  real Sa = avbd_scalar(am, m, r->kind[0], r->id[0], jt, phi);
  wgt[1] = 0;
  if (r->type == RL_AVBD_CROW_LO) {
    wgt[0] = 1;
    return Sa - r->bound;
  }
  if (r->type == RL_AVBD_CROW_HI) {
    wgt[0] = -1;
    return r->bound - Sa;
  }
  if (r->type == RL_AVBD_CROW_FRIC) {
    wgt[0] = 1;
    return Sa;
  }
  const real *c = m->eq_data + RL_NEQDATA * r->eq;
  wgt[0] = 1;
  real C = Sa - r->ref[0] - c[0];
  if (r->id[1] >= 0) {
    real x = avbd_scalar(am, m, r->kind[1], r->id[1], jt, phi) - r->ref[1];
    C -= c[1] * x + c[2] * x * x + c[3] * x * x * x + c[4] * x * x * x * x;
    wgt[1] = -(c[1] + 2 * c[2] * x + 3 * c[3] * x * x + 4 * c[4] * x * x * x);
  }
  return C;
}

/* 1 if row r is enforced: an equality that is active and not disabled, a limit with limits enabled, a friction
   loss with friction loss enabled */
RL_HDFN static int avbd_crow_on(const rl_model *m, const rl_data *d, const rl_avbd_crow *r) {
  int dis = m->opt.disableflags;
  if (dis & RL_DSBL_CONSTRAINT) return 0;
  if (r->type == RL_AVBD_CROW_EQ) return !(dis & RL_DSBL_EQUALITY) && d->eq_active[r->eq];
  if (r->type == RL_AVBD_CROW_FRIC) return !(dis & RL_DSBL_FRICTIONLOSS);
  return !(dis & RL_DSBL_LIMIT);
}

/* The row's force along C at the iterate and its curvature *k:
 *   equality  f = λ + ρ(C − α_j C⁰),            k = ρ
 *   limit     f = min(λ + ρ(C − T(C⁰)), 0),  k = ρ while f < 0 or λ < 0, else 0 (T: rl_avbd_one_sided_target)
 *   friction loss  t = λ + ρ(C − C⁰),  f = clip(t, ±F),  k = ρ (articulation blocks: the secant ρF/|t| once
 *             |t| > F, as a joint's dry friction; F the tendon's frictionloss)
 * (kkt: f = λ, for the stationarity residual); 0 when the row is off. */
RL_HDFN static real avbd_crow_force(const rl_avbd *am, const rl_model *m, const rl_data *d, const rl_avbd_crow *r, real C,
                                    int kkt, real *k) {
  const rl_avbd_row *w = am->row + r->row;
  *k = 0;
  if (!avbd_crow_on(m, d, r)) return 0;
  if (r->type == RL_AVBD_CROW_EQ) {
    *k = w->rho;
    return kkt ? w->lambda : w->lambda + w->rho * (C - am->prm.alpha_joint * w->c0);
  }
  if (r->type == RL_AVBD_CROW_FRIC) {
    real t = w->lambda + w->rho * (C - w->c0);
    *k = am->prm.block == RL_AVBD_BLOCK_ARTICULATION && rl_fabs(t) > r->bound ? w->rho * r->bound / rl_fabs(t) : w->rho;
    return kkt ? w->lambda : rl_avbd_clip(t, r->bound);
  }
  real Ct = C - rl_avbd_one_sided_target(w->c0, am->prm.alpha, am->prm.slop);
  real f = kkt ? w->lambda : rl_avbd_proj_neg(w->lambda + w->rho * Ct);
  if (f < 0 || w->lambda < 0) *k = w->rho;
  return f;
}

/* Terms of the coordinate rows on joint jt's coordinate φ (the rows that read it, cjlist): G = Σ f·∂C/∂φ,
   *k = Σ k_r·(∂C/∂φ)²,
   ∂C/∂φ = wgt_a·∂S_a/∂φ + wgt_b·∂S_b/∂φ (rows whose scalars are joints or fixed tendons; the curvature of a row
   an articulation block solves as a loop row is left to the block, avbd_crow_loop) */
RL_HDFN real avbd_crow_coord_terms(const rl_avbd *am, const rl_model *m, const rl_data *d, const rl_avbd_joint *jt, real phi,
                                   int kkt, real *k) {
  real G = 0;
  *k = 0;
  if (jt->jnt < 0) return 0;
  for (int e = am->cjadr[jt->jnt]; e < am->cjadr[jt->jnt + 1]; e++) {
    const rl_avbd_crow *r = am->crow + am->cjlist[e];
    real da = avbd_scalar_dphi(m, r->kind[0], r->id[0], jt->jnt);
    real db = r->id[1] >= 0 ? avbd_scalar_dphi(m, r->kind[1], r->id[1], jt->jnt) : 0;
    if (da == 0 && db == 0) continue;
    real wgt[2], kr, C = avbd_crow_c(am, m, r, jt, phi, wgt);
    real dC = wgt[0] * da + wgt[1] * db;
    real f = avbd_crow_force(am, m, d, r, C, kkt, &kr);
    G += f * dC;
    if (!avbd_loop_row(am, r->loop)) *k += kr * dC * dC;
  }
  return G;
}

/* Terms of the coordinate rows with a spatial tendon through slot s: J = wgt_a·∂S_a/∂z_s + wgt_b·∂S_b/∂z_s over
   the spatial scalars, g += f·J, H += k_r·JJᵀ (unless kkt or the row is a loop row of an articulation block) */
RL_HDFN static void avbd_crow_assemble(const rl_avbd *am, const rl_model *m, const rl_data *d, int s, int kkt, real H[36],
                                       real g[6]) {
  for (int q = am->cradr[s]; q < am->cradr[s + 1]; q++) {
    const rl_avbd_crow *r = am->crow + am->crlist[q];
    if (!r->spatial) continue; /* joint coordinates only: their terms come through avbd_coord_terms */
    real wgt[2], kr, J[6] = {0, 0, 0, 0, 0, 0};
    real C = avbd_crow_c(am, m, r, NULL, 0, wgt);
    real f = avbd_crow_force(am, m, d, r, C, kkt, &kr);
    if (f == 0 && kr == 0) continue;
    for (int k = 0; k < 2; k++) {
      if (r->id[k] < 0 || r->kind[k] != RL_AVBD_SC_SPATIAL) continue;
      real Jk[6] = {0, 0, 0, 0, 0, 0};
      avbd_tendon_path(am, m, r->id[k], s, Jk, NULL);
      for (int i = 0; i < 6; i++) J[i] += wgt[k] * Jk[i];
    }
    rl_avbd_add_row(H, g, J, f, kkt || avbd_loop_row(am, r->loop) ? 0 : kr);
  }
}

/* Length of fixed tendon t, L = Σ cᵢφᵢ, with jt's φ the argument (jt may be NULL) and the other joints' φᵢ their
   last dual update's (now = 0: a Gauss–Seidel lag of at most one sweep) or at the current poses (now = 1,
   avbd_joint_scalar); *Ln = Σ cᵢφᵢⁿ, *dLn = Σ cᵢφ̇ᵢⁿ at the step start (a joint of a static body: qpos0, rate 0) */
RL_HDFN real avbd_fixed_length(const rl_avbd *am, const rl_model *m, int t, const rl_avbd_joint *jt, real phi, int now,
                               real *Ln, real *dLn) {
  real L = 0;
  *Ln = *dLn = 0;
  for (int w = m->tendon_adr[t]; w < m->tendon_adr[t] + m->tendon_num[t]; w++) {
    int j = m->wrap_objid[w];
    real ci = m->wrap_prm[w];
    const rl_avbd_joint *o = jt && jt->jnt == j ? jt : avbd_joint_of(am, j);
    if (!o) { /* a joint of a static body: its coordinate stays at qpos0 */
      real q0 = m->qpos0[m->jnt_qposadr[j]];
      L += ci * q0;
      *Ln += ci * q0;
      continue;
    }
    L += ci * (o == jt ? phi : now ? avbd_joint_scalar(am, m, j, NULL, 0) : o->phi);
    *Ln += ci * o->phi_n;
    *dLn += ci * o->dphi_n;
  }
  return L;
}

/* Adds c·∂φ_j/∂z to u (six reals per slot) at the two bodies of model joint j: a hinge's or slide's gradient
   (rl_avbd_joint_coord: hinge ∂φ/∂δθ_B = a = −∂φ/∂δθ_A; slide ∂φ/∂δx_B = a, …), a compound joint's component's
   coordinate gradient (avbd_compound_jac); nothing for a joint of a static body */
RL_HDFN void avbd_coord_jac(rl_avbd *am, int j, real c, real *u) {
  const rl_avbd_joint *o = avbd_joint_of(am, j);
  if (!o) return;
  real dA[6], dB[6];
  if (o >= am->joint && o < am->joint + am->njoint)
    rl_avbd_joint_coord(o, avbd_pose_of(am, o->a), avbd_pose_of(am, o->b), o->phi, dA, dB);
  else {
    const rl_avbd_joint *jt = am->joint;
    while (jt->kind != RL_AVBD_COMPOUND || jt->b != o->b) jt++;
    const rl_avbd_compound *cp = am->cmp + jt->cmp;
    const rl_avbd_compound_val *v = avbd_compound_value(am, jt);
    int k = (int)(o - cp->sub);
    avbd_compound_jac(v, v->pg[cp->dof[k]], 0, dA);
    avbd_compound_jac(v, v->pg[cp->dof[k]], 1, dB);
  }
  for (int i = 0; i < 6; i++) {
    if (o->a >= 0) u[6 * o->a + i] += c * dA[i];
    u[6 * o->b + i] += c * dB[i];
  }
}

/* Coordinate row i as a loop row of an articulation block (avbd_tree_loops): its weight, the curvature k_r of
   avbd_crow_force at the current state (0 when the row is off or an inactive limit: nothing added), and its
   Jacobian added to u (six reals per slot): ∂C/∂z = Σ_k wgt_k·∂S_k/∂z with ∂S/∂z a joint coordinate's gradient
   (avbd_coord_jac), a fixed tendon's Σ cᵢ·∂φᵢ/∂z, a spatial path's ∂L/∂z_s (avbd_tendon_path) */
RL_HDFN real avbd_crow_loop(rl_avbd *am, const rl_model *m, const rl_data *d, int i, real *u) {
  const rl_avbd_crow *r = am->crow + i;
  real wgt[2], k, C = avbd_crow_c(am, m, r, NULL, 0, wgt);
  avbd_crow_force(am, m, d, r, C, 0, &k);
  if (!(k > 0)) return 0;
  for (int q = 0; q < 2; q++) {
    int id = r->id[q];
    if (id < 0 || wgt[q] == 0) continue;
    if (r->kind[q] == RL_AVBD_SC_JOINT) avbd_coord_jac(am, id, wgt[q], u);
    else if (r->kind[q] == RL_AVBD_SC_FIXED) {
      for (int w = m->tendon_adr[id]; w < m->tendon_adr[id] + m->tendon_num[id]; w++)
        avbd_coord_jac(am, m->wrap_objid[w], wgt[q] * m->wrap_prm[w], u);
    } else
      for (int e = am->crsadr[i]; e < am->crsadr[i + 1]; e++) {
        int s = am->crslot[e];
        real J[6] = {0, 0, 0, 0, 0, 0};
        if (s < 0) continue;
        avbd_tendon_path(am, m, id, s, J, NULL);
        for (int c = 0; c < 6; c++) u[6 * s + c] += wgt[q] * J[c];
      }
  }
  return k;
}

/* Fixed tendon t's spring, damper and actuators as a loop row of an articulation block (avbd_tree_loops): L = Σ cᵢφᵢ
   at the current poses (avbd_fixed_length), the weight k_L of avbd_tendon_force returned (0: no force curvature,
   nothing added) and the Jacobian ∂L/∂z = Σ cᵢ·∂φᵢ/∂z added to u (avbd_coord_jac) */
RL_HDFN real avbd_fixed_loop(rl_avbd *am, const rl_model *m, const rl_data *d, int t, real h, real *u) {
  real Ln, dLn, kL, L = avbd_fixed_length(am, m, t, NULL, 0, 1, &Ln, &dLn);
  avbd_tendon_force(am, m, d, t, L, Ln, dLn, h, &kL);
  if (!(kL > 0)) return 0;
  for (int w = m->tendon_adr[t]; w < m->tendon_adr[t] + m->tendon_num[t]; w++)
    avbd_coord_jac(am, m->wrap_objid[w], m->wrap_prm[w], u);
  return kL;
}

/* Step start: C⁰ of every coordinate row (the joints' φ are their step-start values) */
RL_HDFN void avbd_crow_begin(rl_avbd *am, const rl_model *m, const rl_data *d) {
  (void)d;
  for (int i = 0; i < am->ncrow; i++) {
    real wgt[2];
    am->row[am->crow[i].row].c0 = avbd_crow_c(am, m, am->crow + i, NULL, 0, wgt);
  }
}

/* Dual update of the coordinate rows after a sweep (the joints' φ already updated): equality λ ← λ + ρC̃, limit
   λ ← min(λ + ρC̃, 0), friction loss λ ← clip(λ + ρ(C − C⁰), ±F), ρ grows (limits: while active; friction: while
   sticking); residual |λ − λ_new|/ρ into res (lengths or angles: a row
   whose scalars are all hinge coordinates or fixed tendons of hinges, r->ang, counts as an angle).  Off rows: λ = 0. */
RL_HDFN void avbd_crow_dual(rl_avbd *am, const rl_model *m, const rl_data *d, real res[2]) {
  const rl_avbd_param *pr = &am->prm;
  for (int i = 0; i < am->ncrow; i++) {
    const rl_avbd_crow *r = am->crow + i;
    rl_avbd_row *w = am->row + r->row;
    if (!avbd_crow_on(m, d, r)) {
      w->lambda = 0;
      continue;
    }
    real wgt[2], C = avbd_crow_c(am, m, r, NULL, 0, wgt);
    int ang = r->ang;
    real ell = ang ? AVBD_ANG_SCALE : AVBD_LIN_SCALE;
    if (r->type == RL_AVBD_CROW_EQ) {
      w->c = C - pr->alpha_joint * w->c0;
      w->lambda += w->rho * w->c;
      res[ang] = rl_avbd_max(res[ang], rl_fabs(w->c));
      w->rho = avbd_grow(pr, w->rho, w->rho0, w->c, ell);
    } else if (r->type == RL_AVBD_CROW_FRIC) {
      w->c = C - w->c0;
      real t = w->lambda + w->rho * w->c, nl = rl_avbd_clip(t, r->bound);
      real rf = rl_fabs(w->lambda - nl) / w->rho;
      res[ang] = rl_avbd_max(res[ang], rf);
      am->stat.dry_residual = rl_avbd_max(am->stat.dry_residual, rf);
      w->lambda = nl;
      if (rl_fabs(t) < r->bound) w->rho = avbd_grow(pr, w->rho, w->rho0, w->c, ell);
    } else {
      real Ct = C - rl_avbd_one_sided_target(w->c0, pr->alpha, pr->slop);
      res[ang] = rl_avbd_max(res[ang], avbd_one_sided_dual(pr, w, Ct, ell));
    }
  }
}
