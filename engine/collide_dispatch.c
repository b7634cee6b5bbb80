/* collide_dispatch.c — the narrow-phase table and the broad phase of rl_collision (see collide.c
 * for the design notes). */
#include <string.h>
#include "rl_engine.h"
#include "rl_math.h"
#include "rl_narrow.h"

/* ---------------------------------------------------------------- dispatch */

/* MuJoCo 2.2.2's table: analytic routines where it has one, MPR (rl_collide_convex) for the rest, prisms and
   MPR for a height field against a convex geom (none against a plane or another height field, as MuJoCo).
   Indexed [type1][type2], type1 ≤ type2. */
static const rl_collide_fn collide_table[8][8] = {
    [RL_GEOM_PLANE] = {[RL_GEOM_SPHERE] = rl_collide_plane_sphere,
                       [RL_GEOM_CAPSULE] = rl_collide_plane_capsule,
                       [RL_GEOM_ELLIPSOID] = rl_collide_plane_convex,
                       [RL_GEOM_CYLINDER] = rl_collide_plane_cylinder,
                       [RL_GEOM_BOX] = rl_collide_plane_box,
                       [RL_GEOM_MESH] = rl_collide_plane_convex},
    [RL_GEOM_HFIELD] = {[RL_GEOM_SPHERE] = rl_collide_hfield,
                        [RL_GEOM_CAPSULE] = rl_collide_hfield,
                        [RL_GEOM_ELLIPSOID] = rl_collide_hfield,
                        [RL_GEOM_CYLINDER] = rl_collide_hfield,
                        [RL_GEOM_BOX] = rl_collide_hfield,
                        [RL_GEOM_MESH] = rl_collide_hfield},
    [RL_GEOM_SPHERE] = {[RL_GEOM_SPHERE] = rl_collide_sphere_sphere,
                        [RL_GEOM_CAPSULE] = rl_collide_sphere_capsule,
                        [RL_GEOM_ELLIPSOID] = rl_collide_convex,
                        [RL_GEOM_CYLINDER] = rl_collide_convex,
                        [RL_GEOM_BOX] = rl_collide_sphere_box,
                        [RL_GEOM_MESH] = rl_collide_convex},
    [RL_GEOM_CAPSULE] = {[RL_GEOM_CAPSULE] = rl_collide_capsule_capsule,
                         [RL_GEOM_ELLIPSOID] = rl_collide_convex,
                         [RL_GEOM_CYLINDER] = rl_collide_convex,
                         [RL_GEOM_BOX] = rl_collide_capsule_box,
                         [RL_GEOM_MESH] = rl_collide_convex},
    [RL_GEOM_ELLIPSOID] = {[RL_GEOM_ELLIPSOID] = rl_collide_convex,
                           [RL_GEOM_CYLINDER] = rl_collide_convex,
                           [RL_GEOM_BOX] = rl_collide_convex,
                           [RL_GEOM_MESH] = rl_collide_convex},
    [RL_GEOM_CYLINDER] =
        {[RL_GEOM_CYLINDER] = rl_collide_convex, [RL_GEOM_BOX] = rl_collide_convex, [RL_GEOM_MESH] = rl_collide_convex},
    [RL_GEOM_BOX] = {[RL_GEOM_BOX] = rl_collide_box_box, [RL_GEOM_MESH] = rl_collide_convex},
    [RL_GEOM_MESH] = {[RL_GEOM_MESH] = rl_collide_convex},
};

rl_collide_fn rl_collide_function(int type1, int type2) {
  if (type1 < 0 || type2 < 0 || type1 > 7 || type2 > 7) return NULL;
  return type1 <= type2 ? collide_table[type1][type2] : collide_table[type2][type1];
}

/* world half-extents of geom g's axis-aligned box about geom_xpos (planes: unbounded, not called):
   sphere r; capsule |a|·h + r; box Σ_j |R_ij|·s_j; cylinder r·√(1 − a_i²) + h·|a_i|; ellipsoid
   √(Σ_j (R_ij s_j)²); mesh and height field Σ_j |R_ij|·geom_hext_j (the hull's or the height field's local
   box about the geom origin). */
static void geom_half_extents(const rl_model *m, const rl_data *d, int g, real ext[3]) {
  const real *R = d->geom_xmat + 9 * g, *s = m->geom_size + 3 * g;
  switch (m->geom_type[g]) {
  case RL_GEOM_SPHERE: ext[0] = ext[1] = ext[2] = s[0]; break;
  case RL_GEOM_CAPSULE:
    for (int i = 0; i < 3; i++) ext[i] = rl_fabs(R[3 * i + 2]) * s[1] + s[0];
    break;
  case RL_GEOM_CYLINDER:
    for (int i = 0; i < 3; i++) {
      real a = R[3 * i + 2];
      ext[i] = s[0] * rl_sqrt(rl_fmax(0, 1 - a * a)) + s[1] * rl_fabs(a);
    }
    break;
  case RL_GEOM_ELLIPSOID:
    for (int i = 0; i < 3; i++) {
      real x = R[3 * i] * s[0], y = R[3 * i + 1] * s[1], z = R[3 * i + 2] * s[2];
      ext[i] = rl_sqrt(x * x + y * y + z * z);
    }
    break;
  case RL_GEOM_MESH:
  case RL_GEOM_HFIELD: {
    const real *loc = m->geom_hext + 3 * g; /* the hull's local box, computed at build */
    for (int i = 0; i < 3; i++)
      ext[i] = rl_fabs(R[3 * i]) * loc[0] + rl_fabs(R[3 * i + 1]) * loc[1] + rl_fabs(R[3 * i + 2]) * loc[2];
    break;
  }
  default: /* box */
    for (int i = 0; i < 3; i++)
      ext[i] = rl_fabs(R[3 * i]) * s[0] + rl_fabs(R[3 * i + 1]) * s[1] + rl_fabs(R[3 * i + 2]) * s[2];
    break;
  }
}

typedef struct sap_entry {
  real lo; /* interval start on the sweep axis */
  int g;
} sap_entry;

/* x before y on the sweep axis: by interval start, then by geom id — a strict total order, so the sorted list
   is the same whatever algorithm sorts it */
static int sap_before(const sap_entry *x, const sap_entry *y) {
  return x->lo < y->lo || (x->lo == y->lo && x->g < y->g);
}

#define SAP_RUN 16

/* list[0 … n−1] sorted by sap_before: runs of SAP_RUN entries by insertion, then merges of neighbouring runs of
   width w = SAP_RUN, 2·SAP_RUN, … back and forth between list and tmp (n entries), the earlier run first on ties
   (stable; ties cannot occur, the geom ids differ) */
static void sap_sort(sap_entry *list, sap_entry *tmp, int n) {
  for (int a = 0; a < n; a += SAP_RUN) {
    int b = a + SAP_RUN < n ? a + SAP_RUN : n;
    for (int i = a + 1; i < b; i++) {
      sap_entry e = list[i];
      int j = i;
      for (; j > a && sap_before(&e, &list[j - 1]); j--) list[j] = list[j - 1];
      list[j] = e;
    }
  }
  sap_entry *src = list, *dst = tmp;
  for (int w = SAP_RUN; w < n; w *= 2) {
    for (int a = 0; a < n; a += 2 * w) {
      int mid = a + w < n ? a + w : n, end = a + 2 * w < n ? a + 2 * w : n, i = a, j = mid, k = a;
      while (i < mid && j < end) dst[k++] = sap_before(&src[j], &src[i]) ? src[j++] : src[i++];
      while (i < mid) dst[k++] = src[i++];
      while (j < end) dst[k++] = src[j++];
    }
    sap_entry *t = src;
    src = dst;
    dst = t;
  }
  if (src != list) memcpy(list, src, sizeof *list * (size_t)n);
}

/* the contact list: append, or when full keep the deepest (replace the shallowest if shallower) */
static void add_contact(const rl_model *m, rl_data *d, const rl_contact *c) {
  if (d->ncon < m->nconmax) {
    d->contact[d->ncon++] = *c;
    return;
  }
  d->warning[RL_WARN_CONTACTFULL]++;
  int worst = 0;
  for (int i = 1; i < d->ncon; i++)
    if (d->contact[i].dist > d->contact[worst].dist) worst = i;
  if (d->ncon > 0 && c->dist < d->contact[worst].dist) d->contact[worst] = *c;
}

/* 1 if geoms g1, g2 (either order) form one of the model's <contact><pair> elements */
static int predefined_pair(const rl_model *m, int g1, int g2) {
  for (int p = 0; p < m->npair; p++) {
    int a = m->pair_geom1[p], b = m->pair_geom2[p];
    if ((a == g1 && b == g2) || (a == g2 && b == g1)) return 1;
  }
  return 0;
}

/* ------------------------------------------- MuJoCo 2.2.2's body boxes (under the override flag only) */

/* Eigenvectors of a symmetric 3×3 matrix A = V·diag(λ)·Vᵀ, V = R(q), by Jacobi rotations accumulated in the unit
   quaternion q: each step forms D = VᵀAV, takes its largest off-diagonal entry D_rc (k the third axis) and turns
   about axis k by θ with t = tan θ = sgn(τ)/(|τ| + √(1 + τ²)), τ = (D_cc − D_rr)/(2 D_rc), c = cos θ = 1/√(1 + t²):
   q ← q ⊗ (√(1 − s²), s·e_k), s = ∓√(½ − ½c) (sign by τ, flipped for k = 1); it stops when |D_rc| < ε or
   c > 1 − ε (ε = 1e-12, at most 500 steps); the eigenvalues are then put in decreasing order by quarter turns
   about the z axis (swap 0, 1) and the x axis (swap 1, 2).  This is the order and sign convention of MuJoCo's
   mju_eig3, whose matrix V the 2.2.2 broad phase reads row by row. */
void rl_sym3_eigvec(const real A[9], real V[9]) {
  const real eps = (real)1e-12;
  real q[4] = {1, 0, 0, 0}, lam[3];
  for (int it = 0; it < 500; it++) {
    real T[9], VT[9], D[9];
    rl_q_to_mat(V, q);
    rl_m3_transpose(VT, V);
    rl_m3_mul(T, VT, A);
    rl_m3_mul(D, T, V);
    lam[0] = D[0], lam[1] = D[4], lam[2] = D[8];
    int r = 1, c = 2, k = 0;
    if (rl_fabs(D[1]) > rl_fabs(D[2]) && rl_fabs(D[1]) > rl_fabs(D[5])) r = 0, c = 1, k = 2;
    else if (rl_fabs(D[2]) > rl_fabs(D[5])) r = 0, c = 2, k = 1;
    if (rl_fabs(D[3 * r + c]) < eps) break;
    real tau = (D[4 * c] - D[4 * r]) / (2 * D[3 * r + c]);
    real t = tau >= 0 ? 1 / (tau + rl_sqrt(1 + tau * tau)) : -1 / (-tau + rl_sqrt(1 + tau * tau));
    real cs = 1 / rl_sqrt(1 + t * t);
    if (cs > 1 - eps) break;
    real turn[4] = {0, 0, 0, 0}, sn = rl_sqrt((real)0.5 - (real)0.5 * cs);
    turn[k + 1] = (tau >= 0) == (k != 1) ? -sn : sn;
    turn[0] = rl_sqrt(1 - turn[k + 1] * turn[k + 1]);
    rl_q_normalize(turn);
    rl_q_mul(q, q, turn);
    rl_q_normalize(q);
  }
  for (int j = 0; j < 3; j++) {
    int a = j % 2;
    if (lam[a] + eps < lam[a + 1]) {
      real x = lam[a], turn[4] = {(real)0.707106781186548, 0, 0, 0};
      lam[a] = lam[a + 1], lam[a + 1] = x;
      turn[(a + 2) % 3 + 1] = turn[0];
      rl_q_mul(q, q, turn);
      rl_q_normalize(q);
    }
  }
  rl_q_to_mat(V, q);
}

/* 1 if body b holds a plane or a height field */
static int body_has_plane(const rl_model *m, int b) {
  for (int g = m->body_geomadr[b]; g < m->body_geomadr[b] + m->body_geomnum[b]; g++)
    if (m->geom_type[g] == RL_GEOM_PLANE || m->geom_type[g] == RL_GEOM_HFIELD) return 1;
  return 0;
}

/* MuJoCo 2.2.2's body boxes: F = the eigenvector matrix (rl_sym3_eigvec) of the covariance Σ (x_g − x̄)(x_g − x̄)ᵀ/n of
   the centres of the n geoms not on the world body; body b's box along axis j is the union over its geoms of
   F_j·x_g ∓ (rbound_g + margin_g), F_j the j-th row of F; box[6b + 2j], box[6b + 2j + 1] = lower, upper end.  A body
   that pairs with every other (the world with geoms, or a body welded to it holding a plane or a height field) is
   flagged with all[b] = 1. */
static void mj22_body_boxes(const rl_model *m, const rl_data *d, real *box, unsigned char *all) {
  real cen[3] = {0, 0, 0}, cov[9] = {0}, F[9];
  int n = 0;
  for (int g = 0; g < m->ngeom; g++)
    if (m->geom_bodyid[g]) rl_v3_add(cen, cen, d->geom_xpos + 3 * g), n++;
  if (n) rl_v3_scale(cen, cen, 1 / (real)n);
  for (int g = 0; g < m->ngeom; g++) {
    if (!m->geom_bodyid[g]) continue;
    real x[3];
    rl_v3_sub(x, d->geom_xpos + 3 * g, cen);
    for (int i = 0; i < 9; i++) cov[i] += x[i / 3] * x[i % 3];
  }
  for (int i = 0; i < 9 && n; i++) cov[i] /= (real)n;
  rl_sym3_eigvec(cov, F);
  for (int b = 0; b < m->nbody; b++) {
    all[b] = (unsigned char)((b == 0 && m->body_geomnum[0] > 0) || (m->body_weldid[b] == 0 && body_has_plane(m, b)));
    for (int g = m->body_geomadr[b]; g < m->body_geomadr[b] + m->body_geomnum[b]; g++)
      for (int j = 0; j < 3; j++) {
        real c = rl_v3_dot(d->geom_xpos + 3 * g, F + 3 * j), r = m->geom_rbound[g] + m->geom_margin[g];
        real *bx = box + 6 * b + 2 * j;
        bx[0] = g == m->body_geomadr[b] ? c - r : rl_fmin(bx[0], c - r);
        bx[1] = g == m->body_geomadr[b] ? c + r : rl_fmax(bx[1], c + r);
      }
  }
}

/* 1 if MuJoCo 2.2.2's broad phase pairs bodies b1 and b2: one of them pairs with all, or their boxes overlap along
   every axis, the first compared in float (the precision its sweep sorts the box ends in) */
static int mj22_bodies_paired(const real *box, const unsigned char *all, int b1, int b2) {
  if (all[b1] || all[b2]) return 1;
  const real *x = box + 6 * b1, *y = box + 6 * b2;
  if ((float)x[0] > (float)y[1] || (float)x[1] < (float)y[0]) return 0;
  for (int j = 1; j < 3; j++)
    if (x[2 * j] > y[2 * j + 1] || x[2 * j + 1] < y[2 * j]) return 0;
  return 1;
}

/* the narrow phase's mode: the collision option, with RL_COLL_MULTICCD under MuJoCo's multiccd flag */
static int narrow_mode(const rl_model *m) {
  return m->opt.collision | ((m->opt.enableflags & RL_ENBL_MULTICCD) ? RL_COLL_MULTICCD : 0);
}

/* one geom pair: filters, narrow phase with type(g1) ≤ type(g2), parameters; a pair the model lists
   explicitly is left to collide_explicit (unless only the filtered geom pairs collide).  mjbox (the override flag only, else NULL): also MuJoCo 2.2.2's body
   boxes must pair the two bodies, since under the override the contact margin o_margin can exceed the geom margins
   those boxes grow by. */
static void collide_pair(const rl_model *m, rl_data *d, int g1, int g2, const real *mjbox, const unsigned char *mjall) {
  if (!rl_geom_pair_allowed(m, g1, g2)) return;
  if (m->npair && m->opt.pair_source == RL_PAIRS_ALL && predefined_pair(m, g1, g2)) return;
  if (mjbox && !mj22_bodies_paired(mjbox, mjall, m->geom_bodyid[g1], m->geom_bodyid[g2])) return;
  if (m->geom_type[g1] > m->geom_type[g2] || (m->geom_type[g1] == m->geom_type[g2] && g1 > g2)) {
    int t = g1;
    g1 = g2;
    g2 = t;
  }
  rl_collide_fn fn = rl_collide_function(m->geom_type[g1], m->geom_type[g2]);
  if (!fn) return;
  real margin = rl_contact_margin(m, rl_fmax(m->geom_margin[g1], m->geom_margin[g2]));
  /* bounding-sphere test as MuJoCo's (neither is a plane) */
  if (m->geom_rbound[g1] > 0 && m->geom_rbound[g2] > 0) {
    real dx[3];
    rl_v3_sub(dx, d->geom_xpos + 3 * g1, d->geom_xpos + 3 * g2);
    real bound = m->geom_rbound[g1] + m->geom_rbound[g2] + margin;
    if (rl_v3_dot(dx, dx) > bound * bound) return;
  }
  rl_geomview v1, v2;
  rl_geom_view(m, d, g1, &v1);
  rl_geom_view(m, d, g2, &v2);
  rl_contact tmp[RL_MAXCONPAIR];
  int n = fn(&v1, &v2, margin, narrow_mode(m), m->opt.mpr_iterations, m->opt.mpr_tolerance, tmp);
  for (int i = 0; i < n && i < RL_MAXCONPAIR; i++) {
    rl_contact_params(m, g1, g2, &tmp[i]);
    add_contact(m, d, &tmp[i]);
  }
}

/* An explicit <contact><pair> p (MuJoCo 2.2.2's predefined pair): none of the filters (contype/conaffinity,
   weld bodies, parent, exclude), the pair's own margin; a bounding-sphere (plane: signed-distance) test with
   that margin; the narrow phase with type(g1) ≤ type(g2) (the pair's order for equal types); every contact
   takes the pair's condim, friction (clamped to 1e-5 as MuJoCo's mjMINMU), solref, solimp and
   includemargin = margin − gap. */
static void collide_explicit(const rl_model *m, rl_data *d, int p, const unsigned char *bad) {
  int g1 = m->pair_geom1[p], g2 = m->pair_geom2[p];
  if (bad[g1] || bad[g2]) return;
  if (m->geom_type[g1] > m->geom_type[g2]) {
    int t = g1;
    g1 = g2;
    g2 = t;
  }
  rl_collide_fn fn = rl_collide_function(m->geom_type[g1], m->geom_type[g2]);
  if (!fn) return;
  real margin = rl_contact_margin(m, m->pair_margin[p]), dx[3];
  rl_v3_sub(dx, d->geom_xpos + 3 * g2, d->geom_xpos + 3 * g1);
  if (m->geom_rbound[g1] > 0 && m->geom_rbound[g2] > 0) {
    real bound = m->geom_rbound[g1] + m->geom_rbound[g2] + margin;
    if (rl_v3_dot(dx, dx) > bound * bound) return;
  }
  if (m->geom_type[g1] == RL_GEOM_PLANE && m->geom_rbound[g2] > 0) {
    const real *R = d->geom_xmat + 9 * g1;
    real n[3] = {R[2], R[5], R[8]};
    if (rl_v3_dot(dx, n) > margin + m->geom_rbound[g2]) return;
  }
  rl_geomview v1, v2;
  rl_geom_view(m, d, g1, &v1);
  rl_geom_view(m, d, g2, &v2);
  rl_contact tmp[RL_MAXCONPAIR];
  int n = fn(&v1, &v2, margin, narrow_mode(m), m->opt.mpr_iterations, m->opt.mpr_tolerance, tmp);
  for (int i = 0; i < n && i < RL_MAXCONPAIR; i++) {
    rl_contact *c = &tmp[i];
    c->dim = m->pair_dim[p];
    for (int k = 0; k < 5; k++) c->friction[k] = rl_fmax((real)1e-5, m->pair_friction[5 * p + k]);
    for (int k = 0; k < RL_NREF; k++) c->solref[k] = m->pair_solref[RL_NREF * p + k];
    for (int k = 0; k < RL_NIMP; k++) c->solimp[k] = m->pair_solimp[RL_NIMP * p + k];
    rl_contact_override(m, c);
    c->mu = c->friction[0];
    c->includemargin = margin - m->pair_gap[p];
    c->geom1 = g1;
    c->geom2 = g2;
    c->exclude = c->dist >= c->includemargin;
    c->efc_address = -1;
    add_contact(m, d, c);
  }
}

/* plane g against every other geom: the signed distance of the other's centre from the plane must
   be within its bounding radius + margin */
static void collide_plane(const rl_model *m, rl_data *d, int gp, const unsigned char *bad, const real *mjbox,
                          const unsigned char *mjall) {
  const real *R = d->geom_xmat + 9 * gp, *p0 = d->geom_xpos + 3 * gp;
  real n[3] = {R[2], R[5], R[8]};
  for (int g = 0; g < m->ngeom; g++) {
    if (g == gp || !m->geom_collide[g] || bad[g] || m->geom_type[g] == RL_GEOM_PLANE) continue;
    real dx[3];
    rl_v3_sub(dx, d->geom_xpos + 3 * g, p0);
    real margin = rl_contact_margin(m, rl_fmax(m->geom_margin[g], m->geom_margin[gp]));
    if (rl_v3_dot(dx, n) > m->geom_rbound[g] + margin) continue;
    collide_pair(m, d, gp, g, mjbox, mjall);
  }
}

/* a geom whose world frame is not finite produces no contact (counted once per geom) */
static int geom_pose_bad(const rl_data *d, int g) {
  for (int k = 0; k < 3; k++)
    if (!rl_isfinite(d->geom_xpos[3 * g + k])) return 1;
  for (int k = 0; k < 9; k++)
    if (!rl_isfinite(d->geom_xmat[9 * g + k])) return 1;
  return 0;
}

/* MuJoCo 2.2.2's contact order: by body pair (lower body id, higher body id: its sorted broad-phase
   pairs), then by the lower body's geom, then the higher body's, then as the narrow phase made them.
   a precedes b when its key is smaller. */
static int mujoco_order_less(const rl_model *m, const rl_contact *a, const rl_contact *b) {
  int ka[4], kb[4];
  const rl_contact *c[2] = {a, b};
  int *k[2] = {ka, kb};
  for (int s = 0; s < 2; s++) {
    int g1 = c[s]->geom1, g2 = c[s]->geom2, b1 = m->geom_bodyid[g1], b2 = m->geom_bodyid[g2];
    int swap = b1 > b2 || (b1 == b2 && g1 > g2);
    k[s][0] = swap ? b2 : b1;
    k[s][1] = swap ? b1 : b2;
    k[s][2] = swap ? g2 : g1;
    k[s][3] = swap ? g1 : g2;
  }
  for (int j = 0; j < 4; j++)
    if (ka[j] != kb[j]) return ka[j] < kb[j];
  return 0;
}

/* Stable insertion sort of the contacts into MuJoCo's order.  Only the projected Gauss–Seidel sweeps
   (the PGS solver, the noslip post-solve) depend on the row order (the primal solvers' optimum does
   not), so only they ask for this. */
static void contacts_mujoco_order(const rl_model *m, rl_data *d) {
  for (int i = 1; i < d->ncon; i++) {
    rl_contact t = d->contact[i];
    int j = i;
    for (; j > 0 && mujoco_order_less(m, &t, &d->contact[j - 1]); j--) d->contact[j] = d->contact[j - 1];
    d->contact[j] = t;
  }
}

void rl_collision(const rl_model *m, rl_data *d) {
  d->ncon = 0;
  if (m->opt.disableflags & (RL_DSBL_CONSTRAINT | RL_DSBL_CONTACT) || m->ngeom < 2) return;
  size_t mark = rl_arena_mark(d);
  int ng = m->ngeom;
  real *box = rl_arena_take(d, 6 * (size_t)ng);
  size_t sap_reals = (size_t)ng * ((sizeof(sap_entry) + sizeof(real) - 1) / sizeof(real));
  sap_entry *list = (sap_entry *)rl_arena_take(d, sap_reals), *sorttmp = (sap_entry *)rl_arena_take(d, sap_reals);
  unsigned char *bad = (unsigned char *)rl_arena_take(d, (size_t)ng / sizeof(real) + 1);
  real *mjbox = NULL;
  unsigned char *mjall = NULL;
  if (m->opt.enableflags & RL_ENBL_OVERRIDE) {
    mjbox = rl_arena_take(d, 6 * (size_t)m->nbody);
    mjall = (unsigned char *)rl_arena_take(d, (size_t)m->nbody / sizeof(real) + 1);
    if (mjbox && mjall) mj22_body_boxes(m, d, mjbox, mjall);
  }
  if (!box || !list || !sorttmp || !bad || ((m->opt.enableflags & RL_ENBL_OVERRIDE) && (!mjbox || !mjall))) {
    rl_arena_release(d, mark);
    return;
  }
  /* boxes (centre, half-extents + margin) and the spread of the centres per axis; under the override flag each box
     grows by at least o_margin/2, so every pair within o_margin of touching is tested (MuJoCo 2.2.2's own body
     boxes grow by the geom margins only and can miss such a pair: docs/verify.md, coverage table) */
  real omargin = (m->opt.enableflags & RL_ENBL_OVERRIDE) ? (real)0.5 * m->opt.o_margin : 0;
  real mean[3] = {0, 0, 0}, sq[3] = {0, 0, 0};
  int nb = 0;
  for (int g = 0; g < ng; g++) {
    bad[g] = 0;
    if (!m->geom_collide[g]) continue; /* can never collide: no box, no pair, no pose check */
    bad[g] = (unsigned char)geom_pose_bad(d, g);
    if (bad[g]) {
      d->warning[RL_WARN_BADGEOM]++;
      continue;
    }
    if (m->geom_type[g] == RL_GEOM_PLANE) continue;
    real ext[3];
    geom_half_extents(m, d, g, ext);
    for (int k = 0; k < 3; k++) {
      real c = d->geom_xpos[3 * g + k];
      box[6 * g + k] = c;
      box[6 * g + 3 + k] = ext[k] + rl_fmax(m->geom_margin[g], omargin);
      mean[k] += c;
      sq[k] += c * c;
    }
    nb++;
  }
  int axis = 0;
  real best = -1;
  for (int k = 0; k < 3; k++) {
    real var = nb ? sq[k] / nb - (mean[k] / nb) * (mean[k] / nb) : 0;
    if (var > best) best = var, axis = k;
  }
  int n = 0;
  for (int g = 0; g < ng; g++)
    if (m->geom_collide[g] && !bad[g] && m->geom_type[g] != RL_GEOM_PLANE) {
      list[n].lo = box[6 * g + axis] - box[6 * g + 3 + axis];
      list[n].g = g;
      n++;
    }
  sap_sort(list, sorttmp, n);
  /* sweep: every later interval that starts before this one ends overlaps on the axis (no geom pairs at all
     when only the explicit pairs collide) */
  if (m->opt.pair_source == RL_PAIRS_PREDEFINED) n = 0;
  for (int i = 0; i < n; i++) {
    int g1 = list[i].g;
    real hi = box[6 * g1 + axis] + box[6 * g1 + 3 + axis];
    for (int j = i + 1; j < n && list[j].lo <= hi; j++) {
      int g2 = list[j].g, sep = 0;
      for (int k = 0; k < 3 && !sep; k++)
        sep = rl_fabs(box[6 * g1 + k] - box[6 * g2 + k]) > box[6 * g1 + 3 + k] + box[6 * g2 + 3 + k];
      if (!sep) collide_pair(m, d, g1, g2, mjbox, mjall);
    }
  }
  for (int g = 0; g < ng && m->opt.pair_source != RL_PAIRS_PREDEFINED; g++)
    if (m->geom_collide[g] && !bad[g] && m->geom_type[g] == RL_GEOM_PLANE) collide_plane(m, d, g, bad, mjbox, mjall);
  for (int p = 0; p < m->npair && m->opt.pair_source != RL_PAIRS_DYNAMIC; p++) collide_explicit(m, d, p, bad);
  if ((m->opt.solver == RL_SOLVER_PGS || m->opt.noslip_iterations > 0) && m->npair == 0) contacts_mujoco_order(m, d);
  rl_arena_release(d, mark);
}
