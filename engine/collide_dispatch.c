/* collide_dispatch.c — the narrow-phase table and the broad phase of rl_collision (see collide.c
 * for the design notes). */
#include <stdlib.h>
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

static int sap_compare(const void *a, const void *b) {
  const sap_entry *x = a, *y = b;
  if (x->lo < y->lo) return -1;
  if (x->lo > y->lo) return 1;
  return (x->g > y->g) - (x->g < y->g);
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

/* one geom pair: filters, narrow phase with type(g1) ≤ type(g2), parameters; a pair the model lists
   explicitly is left to collide_explicit */
static void collide_pair(const rl_model *m, rl_data *d, int g1, int g2) {
  if (!rl_geom_pair_allowed(m, g1, g2) || (m->npair && predefined_pair(m, g1, g2))) return;
  if (m->geom_type[g1] > m->geom_type[g2] || (m->geom_type[g1] == m->geom_type[g2] && g1 > g2)) {
    int t = g1;
    g1 = g2;
    g2 = t;
  }
  rl_collide_fn fn = rl_collide_function(m->geom_type[g1], m->geom_type[g2]);
  if (!fn) return;
  real margin = rl_fmax(m->geom_margin[g1], m->geom_margin[g2]);
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
  int n = fn(&v1, &v2, margin, m->opt.collision, m->opt.mpr_iterations, m->opt.mpr_tolerance, tmp);
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
  real margin = m->pair_margin[p], dx[3];
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
  int n = fn(&v1, &v2, margin, m->opt.collision, m->opt.mpr_iterations, m->opt.mpr_tolerance, tmp);
  for (int i = 0; i < n && i < RL_MAXCONPAIR; i++) {
    rl_contact *c = &tmp[i];
    c->dim = m->pair_dim[p];
    for (int k = 0; k < 5; k++) c->friction[k] = rl_fmax((real)1e-5, m->pair_friction[5 * p + k]);
    for (int k = 0; k < RL_NREF; k++) c->solref[k] = m->pair_solref[RL_NREF * p + k];
    for (int k = 0; k < RL_NIMP; k++) c->solimp[k] = m->pair_solimp[RL_NIMP * p + k];
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
static void collide_plane(const rl_model *m, rl_data *d, int gp, const unsigned char *bad) {
  const real *R = d->geom_xmat + 9 * gp, *p0 = d->geom_xpos + 3 * gp;
  real n[3] = {R[2], R[5], R[8]};
  for (int g = 0; g < m->ngeom; g++) {
    if (g == gp || !m->geom_collide[g] || bad[g] || m->geom_type[g] == RL_GEOM_PLANE) continue;
    real dx[3];
    rl_v3_sub(dx, d->geom_xpos + 3 * g, p0);
    real margin = rl_fmax(m->geom_margin[g], m->geom_margin[gp]);
    if (rl_v3_dot(dx, n) > m->geom_rbound[g] + margin) continue;
    collide_pair(m, d, gp, g);
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

void rl_collision(const rl_model *m, rl_data *d) {
  d->ncon = 0;
  if (m->opt.disableflags & (RL_DSBL_CONSTRAINT | RL_DSBL_CONTACT) || m->ngeom < 2) return;
  size_t mark = rl_arena_mark(d);
  int ng = m->ngeom;
  real *box = rl_arena_take(d, 6 * (size_t)ng);
  sap_entry *list = (sap_entry *)rl_arena_take(d, (size_t)ng * ((sizeof(sap_entry) + sizeof(real) - 1) / sizeof(real)));
  unsigned char *bad = (unsigned char *)rl_arena_take(d, (size_t)ng / sizeof(real) + 1);
  if (!box || !list || !bad) {
    rl_arena_release(d, mark);
    return;
  }
  /* boxes (centre, half-extents + margin) and the spread of the centres per axis */
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
      box[6 * g + 3 + k] = ext[k] + m->geom_margin[g];
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
  qsort(list, (size_t)n, sizeof *list, sap_compare);
  /* sweep: every later interval that starts before this one ends overlaps on the axis */
  for (int i = 0; i < n; i++) {
    int g1 = list[i].g;
    real hi = box[6 * g1 + axis] + box[6 * g1 + 3 + axis];
    for (int j = i + 1; j < n && list[j].lo <= hi; j++) {
      int g2 = list[j].g, sep = 0;
      for (int k = 0; k < 3 && !sep; k++)
        sep = rl_fabs(box[6 * g1 + k] - box[6 * g2 + k]) > box[6 * g1 + 3 + k] + box[6 * g2 + 3 + k];
      if (!sep) collide_pair(m, d, g1, g2);
    }
  }
  for (int g = 0; g < ng; g++)
    if (m->geom_collide[g] && !bad[g] && m->geom_type[g] == RL_GEOM_PLANE) collide_plane(m, d, g, bad);
  for (int p = 0; p < m->npair; p++) collide_explicit(m, d, p, bad);
  rl_arena_release(d, mark);
}
