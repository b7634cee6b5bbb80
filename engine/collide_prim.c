/* collide_prim.c — analytic narrow phase for planes, spheres, capsules, cylinders and plane–convex
 * (see rl_narrow.h), reproducing MuJoCo 2.2.2's engine_collision_primitive.c and mjc_PlaneConvex
 * operation by operation, so that in double precision the contacts agree to rounding.
 *
 * Conventions shared by every pair function here:
 *   - g1 has the lower type (MuJoCo always calls with type1 ≤ type2); the normal points g1 → g2;
 *   - a pair function writes dist, pos and the normal, then completes the frame with rl_make_frame,
 *     which is what MuJoCo's mj_collideGeoms does to every contact before storing it in d->contact;
 *   - a pose or size that is not finite gives no contact (MuJoCo would report NaN contacts).
 * The comparisons (≤ or <, > or ≥) against the margin are MuJoCo's, pair by pair. */
#include "rl_narrow.h"
#include "rl_math.h"

/* MuJoCo's mjMINVAL: the smallest denominator it accepts (a behavioural constant, kept equal in
   both precisions so that degenerate-configuration branches are taken where MuJoCo takes them). */

/* ‖a − b‖ (mju_dist3) */
static real dist3(const real a[3], const real b[3]) {
  real d0 = a[0] - b[0], d1 = a[1] - b[1], d2 = a[2] - b[2];
  return rl_sqrt(d0 * d0 + d1 * d1 + d2 * d2);
}

/* z axis of a row-major frame: column 2 = (R02, R12, R22) */
static void zaxis(real z[3], const real mat[9]) {
  z[0] = mat[2];
  z[1] = mat[5];
  z[2] = mat[8];
}

/* Contact frame from its normal x = frame[0..2] (and optional first tangent y = frame[3..5]),
 * as mju_makeFrame:  x ← x/‖x‖;  if ‖y‖² < 1/4: y = e_y when |x_y| < 1/2, else e_z;
 *                    y ← (y − (x·y) x)/‖·‖;  z = x × y. */
void rl_make_frame(real frame[9]) {
  real *x = frame, *y = frame + 3, t[3];
  mj_normalize3(x);
  if (rl_v3_dot(y, y) < (real)0.25) {
    rl_v3_zero(y);
    if (x[1] < (real)0.5 && x[1] > (real)-0.5) y[1] = 1;
    else y[2] = 1;
  }
  rl_v3_scale(t, x, rl_v3_dot(x, y));
  rl_v3_sub(y, y, t);
  mj_normalize3(y);
  rl_v3_cross(frame + 6, x, y);
}

/* the frame completion mj_collideGeoms applies to each contact a pair function returns */
static int complete_frames(rl_contact *con, int n) {
  for (int i = 0; i < n; i++) rl_make_frame(con[i].frame);
  return n;
}

/* ---------------------------------------------------------------- plane pairs */

/* Plane (pos1, normal n = z of mat1) vs sphere (center c, radius r):
 *   d = (c − p1)·n − r;  contact iff d + r ≤ margin + r;  pos = c − (r + d/2) n. */
static int plane_sphere_contact(rl_contact *con, real margin, const real pos1[3], const real mat1[9], const real c[3],
                                real r) {
  real tmp[3];
  zaxis(con->frame, mat1);
  rl_v3_sub(tmp, c, pos1);
  real cdist = rl_v3_dot(tmp, con->frame);
  if (cdist > margin + r) return 0;
  con->dist = cdist - r;
  rl_v3_scale(tmp, con->frame, -con->dist / 2 - r);
  rl_v3_add(con->pos, c, tmp);
  rl_v3_zero(con->frame + 3);
  return 1;
}

int rl_collide_plane_sphere(RL_NARROW_ARGS) {
  (void)mode;
  (void)mpr_iterations;
  (void)mpr_tolerance;
  if (!view_finite(g1) || !view_finite(g2)) return 0;
  return complete_frames(con, plane_sphere_contact(con, margin, g1->pos, g1->mat, g2->pos, g2->size[0]));
}

/* Plane vs capsule: the two end spheres c ± h·a (a = capsule axis), each a plane–sphere test;
 * each contact's first tangent is the capsule axis. */
int rl_collide_plane_capsule(RL_NARROW_ARGS) {
  (void)mode;
  (void)mpr_iterations;
  (void)mpr_tolerance;
  if (!view_finite(g1) || !view_finite(g2)) return 0;
  real axis[3], seg[3], p[3];
  zaxis(axis, g2->mat);
  rl_v3_scale(seg, axis, g2->size[1]);
  rl_v3_add(p, g2->pos, seg);
  int n1 = plane_sphere_contact(con, margin, g1->pos, g1->mat, p, g2->size[0]);
  rl_v3_sub(p, g2->pos, seg);
  int n2 = plane_sphere_contact(con + n1, margin, g1->pos, g1->mat, p, g2->size[0]);
  if (n1) rl_v3_copy(con[0].frame + 3, axis);
  if (n2) rl_v3_copy(con[n1].frame + 3, axis);
  return complete_frames(con, n1 + n2);
}

/* one plane–cylinder contact: dist d, pos = base + s1·v1 + s2·v2 − (d/2) n */
static void cylinder_point(rl_contact *c, real d, const real base[3], const real v1[3], real s1, const real v2[3],
                           real s2, const real n[3]) {
  c->dist = d;
  rl_v3_copy(c->pos, base);
  rl_v3_addscl(c->pos, v1, s1);
  rl_v3_addscl(c->pos, v2, s2);
  rl_v3_addscl(c->pos, n, -d * (real)0.5);
  rl_v3_copy(c->frame, n);
  rl_v3_zero(c->frame + 3);
}

/* Plane vs cylinder (mjc_PlaneCylinder): axis a flipped so a·n ≤ 0; v = radius vector of the rim
 * toward the plane, v ∝ (a·n) a − n (or the cylinder x axis when the disk is parallel);
 * d0 = (c − p1)·n.  Points: rim of the near disk  d0 + h a·n + v·n  (must be ≤ margin, else none);
 * rim of the far disk  d0 − h a·n + v·n;  and, if d0 + h a·n − v·n/2 ≤ margin, two more near-disk
 * points at ±(√3/2) r (v × a)/‖v × a‖ − v/2 (an inscribed triangle with the first). */
int rl_collide_plane_cylinder(RL_NARROW_ARGS) {
  (void)mode;
  (void)mpr_iterations;
  (void)mpr_tolerance;
  if (!view_finite(g1) || !view_finite(g2)) return 0;
  const real *pos1 = g1->pos, *mat2 = g2->mat, *pos2 = g2->pos, *size2 = g2->size;
  real normal[3], axis[3], vec[3], vec1[3];
  zaxis(normal, g1->mat);
  zaxis(axis, mat2);
  int cnt = 0;

  real prjaxis = rl_v3_dot(normal, axis);
  if (prjaxis > 0) {
    rl_v3_scale(axis, axis, -1);
    prjaxis = -prjaxis;
  }
  rl_v3_sub(vec, pos2, pos1);
  real dist0 = rl_v3_dot(vec, normal);

  rl_v3_scale(vec, axis, prjaxis);
  rl_v3_sub(vec, vec, normal);
  real len = rl_sqrt(rl_v3_dot(vec, vec));
  if (len >= MJ_MINVAL) {
    real scl = size2[0] / len;
    vec[0] *= scl;
    vec[1] *= scl;
    vec[2] *= scl;
  } else {
    vec[0] = mat2[0] * size2[0];
    vec[1] = mat2[3] * size2[0];
    vec[2] = mat2[6] * size2[0];
  }
  real prjvec = rl_v3_dot(vec, normal);

  rl_v3_scale(axis, axis, size2[1]);
  prjaxis *= size2[1];

  if (dist0 + prjaxis + prjvec <= margin) {
    real base[3];
    rl_v3_add(base, pos2, vec);
    cylinder_point(&con[cnt++], dist0 + prjaxis + prjvec, base, axis, 1, axis, 0, normal);
  } else {
    return 0;
  }
  if (dist0 - prjaxis + prjvec <= margin) {
    real base[3];
    rl_v3_add(base, pos2, vec);
    cylinder_point(&con[cnt++], dist0 - prjaxis + prjvec, base, axis, -1, axis, 0, normal);
  }
  real prjvec1 = -prjvec * (real)0.5;
  if (dist0 + prjaxis + prjvec1 <= margin) {
    rl_v3_cross(vec1, vec, axis);
    mj_normalize3(vec1);
    rl_v3_scale(vec1, vec1, size2[0] * rl_sqrt((real)3.0) / 2);
    real base[3];
    rl_v3_add(base, pos2, vec1);
    cylinder_point(&con[cnt++], dist0 + prjaxis + prjvec1, base, axis, 1, vec, (real)-0.5, normal);
    rl_v3_sub(base, pos2, vec1);
    cylinder_point(&con[cnt++], dist0 + prjaxis + prjvec1, base, axis, 1, vec, (real)-0.5, normal);
  }
  return complete_frames(con, cnt);
}

/* Plane vs box (mjc_PlaneBox): corners k = R2 (±s) in index order (x fastest); a corner is a contact
 * if d = (c2 − p1)·n + k·n ≤ margin and k·n ≤ 0; pos = c2 + k − (d/2) n; at most 4. */
int rl_collide_plane_box(RL_NARROW_ARGS) {
  (void)mode;
  (void)mpr_iterations;
  (void)mpr_tolerance;
  if (!view_finite(g1) || !view_finite(g2)) return 0;
  const real *size2 = g2->size;
  real norm[3], dif[3], vec[3], corner[3];
  int cnt = 0;
  zaxis(norm, g1->mat);
  rl_v3_sub(dif, g2->pos, g1->pos);
  real dist = rl_v3_dot(dif, norm);
  for (int i = 0; i < 8; i++) {
    vec[0] = (i & 1) ? size2[0] : -size2[0];
    vec[1] = (i & 2) ? size2[1] : -size2[1];
    vec[2] = (i & 4) ? size2[2] : -size2[2];
    rl_m3_mulv(corner, g2->mat, vec);
    real ldist = rl_v3_dot(norm, corner);
    if (dist + ldist > margin || ldist > 0) continue;
    rl_contact *c = &con[cnt];
    c->dist = dist + ldist;
    rl_v3_copy(c->frame, norm);
    rl_v3_zero(c->frame + 3);
    rl_v3_add(corner, corner, g2->pos);
    rl_v3_scale(vec, norm, -c->dist / 2);
    rl_v3_add(c->pos, corner, vec);
    if (++cnt >= 4) break;
  }
  return complete_frames(con, cnt);
}

/* support point of an ellipsoid with semi-axes s in local direction u: s∘(s∘u)/‖s∘u‖ */
static void ellipsoid_support(real res[3], const real u[3], const real s[3]) {
  for (int i = 0; i < 3; i++) res[i] = u[i] * s[i];
  mj_normalize3(res);
  for (int i = 0; i < 3; i++) res[i] *= s[i];
}

/* extra plane–mesh contact at vertex v (local): w = c2 + R2 v; skipped when ‖w − first‖ < 0.3 rbound;
 * d = (w − p1)·n;  pos = w − (d/2) n.  Returns 1 if added. */
static int plane_mesh_extra(rl_contact *c, const real v[3], const real pos1[3], const real n[3], const rl_geomview *g2,
                            const real first[3]) {
  real w[3], dif[3];
  rl_m3_mulv(w, g2->mat, v);
  rl_v3_add(w, w, g2->pos);
  if (dist3(w, first) < (real)0.3 * g2->rbound) return 0;
  rl_v3_sub(dif, w, pos1);
  c->dist = rl_v3_dot(n, dif);
  rl_v3_copy(c->pos, w);
  rl_v3_addscl(c->pos, n, (real)-0.5 * c->dist);
  rl_v3_copy(c->frame, n);
  rl_v3_zero(c->frame + 3);
  return 1;
}

/* Plane vs ellipsoid or mesh (mjc_PlaneConvex): the support point w of g2 in direction −n;
 * d = (w − p1)·n, contact iff d ≤ margin, pos = w − (d/2) n.  Mesh: up to two more hull vertices v
 * with −n·R2 v > (c2 − p1)·n − margin, i.e. within the margin, each farther than 0.3·rbound from the
 * first point, taken as MuJoCo does: with a hull graph from the support vertex's neighbours in edge
 * order; without one from all vertices in index order, the support vertex skipped. */
int rl_collide_plane_convex(RL_NARROW_ARGS) {
  (void)mode;
  (void)mpr_iterations;
  (void)mpr_tolerance;
  if (!view_finite(g1) || !view_finite(g2)) return 0;
  const real *pos1 = g1->pos, *pos2 = g2->pos, *mat2 = g2->mat;
  real normal[3], dir[3], u[3], res[3], w[3], dif[3];
  int ibest = -1;
  zaxis(normal, g1->mat);
  rl_v3_scale(dir, normal, -1);
  rl_m3_tmulv(u, mat2, dir);
  if (g2->type == RL_GEOM_MESH) {
    if (!g2->vert || g2->nvert <= 0) return 0;
    for (int i = 0; i < 3 * g2->nvert; i++)
      if (!rl_isfinite(g2->vert[i])) return 0;
    ibest = mesh_support_index(g2, u);
    if (ibest < 0) return 0;
    rl_v3_copy(res, g2->vert + 3 * ibest);
  } else {
    ellipsoid_support(res, u, g2->size);
  }
  rl_m3_mulv(w, mat2, res);
  rl_v3_add(w, w, pos2);

  rl_v3_sub(dif, w, pos1);
  real dist = rl_v3_dot(normal, dif);
  if (dist > margin) return 0;
  con[0].dist = dist;
  rl_v3_copy(con[0].pos, w);
  rl_v3_addscl(con[0].pos, normal, (real)-0.5 * dist);
  rl_v3_copy(con[0].frame, normal);
  rl_v3_zero(con[0].frame + 3);
  int count = 1;
  if (g2->type != RL_GEOM_MESH) return complete_frames(con, count);

  rl_v3_sub(dif, pos2, pos1);
  real threshold = rl_v3_dot(normal, dif) - margin;
  const real *vert = g2->vert;
  if (g2->graph) {
    const int *nb = g2->graph + g2->graph[ibest];
    for (int j = 0; j < g2->nvert && nb[j] >= 0 && nb[j] < g2->nvert && count < 3; j++) {
      const real *v = vert + 3 * nb[j];
      real vdot = u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
      if (vdot > threshold) count += plane_mesh_extra(&con[count], v, pos1, normal, g2, con[0].pos);
    }
    return complete_frames(con, count);
  }
  for (int i = 0; i < g2->nvert && count < 3; i++) {
    real vdot = u[0] * vert[3 * i] + u[1] * vert[3 * i + 1] + u[2] * vert[3 * i + 2];
    if (vdot > threshold && i != ibest)
      count += plane_mesh_extra(&con[count], vert + 3 * i, pos1, normal, g2, con[0].pos);
  }
  return complete_frames(con, count);
}

/* ---------------------------------------------------------------- sphere and capsule pairs */

/* point c + x·a */
static void seg_point(real p[3], const real c[3], const real a[3], real x) {
  rl_v3_scale(p, a, x);
  rl_v3_add(p, p, c);
}

/* The vector between two centres c1 = p1 + s1·a1 and c2 = p2 + s2·a2 (a point on each geom's segment; s = 0 for
   a sphere's centre): c1 and off = c2 − c1, and *mag the size of the terms off is formed from.
   f64: the difference of the two world points, as MuJoCo.  f32 (RL_CONTACT_OFFSETS): (p2 − p1) + s2·a2 − s1·a1 —
   p2 − p1 of two nearby float positions is exact (Sterbenz), the rest are link-sized; the world points carry
   ε·‖p‖ of rounding each, which for crossing capsules 2e-6 m apart at 0.6 m from the origin turned the normal
   by 7e-3 (MuJoCo's cloth sample). */
static void center_offset(real c1[3], real off[3], real *mag, const real p1[3], const real a1[3], real s1,
                          const real p2[3], const real a2[3], real s2) {
  real c2[3], t1[3], t2[3];
  seg_point(c1, p1, a1, s1);
  if (!RL_CONTACT_OFFSETS) {
    seg_point(c2, p2, a2, s2);
    rl_v3_sub(off, c2, c1);
    *mag = 0;
    return;
  }
  rl_v3_scale(t1, a1, s1);
  rl_v3_scale(t2, a2, s2);
  rl_v3_sub(off, p2, p1);
  *mag = 0;
  for (int i = 0; i < 3; i++) {
    *mag = rl_fmax(*mag, rl_fabs(off[i]) + rl_fabs(t1[i]) + rl_fabs(t2[i]));
    off[i] += t2[i] - t1[i];
  }
}

/* Centres that coincide for the normal: f64 MuJoCo's ‖c2 − c1‖ < mjMINVAL; f32 also below 8ε·mag, the rounding
   of off's terms (two exactly crossing capsule axes of a planar slider-crank: 1e-9 in float where MuJoCo's double
   difference is below 1e-15 and it takes z1 × z2; the float difference's direction is rounding noise). */
static int centers_coincide(real len, real mag) { return len < rl_fmax(MJ_MINVAL, 8 * RL_EPS * mag); }

/* Sphere (c1, r1) vs sphere (c2 = c1 + off, r2): ‖off‖ ≤ margin + r1 + r2;  d = ‖off‖ − r1 − r2;
 * n = off/‖off‖, or z1 × z2 (normalized) for coincident centres (centers_coincide);  pos = c1 + (r1 + d/2) n. */
static int sphere_sphere_contact(rl_contact *con, real margin, const real c1[3], const real off[3], real mag,
                                 const real mat1[9], real r1, const real mat2[9], real r2) {
  real cdist = rl_sqrt(off[0] * off[0] + off[1] * off[1] + off[2] * off[2]);
  if (cdist > margin + r1 + r2) return 0;
  con->dist = cdist - r1 - r2;
  rl_v3_copy(con->frame, off);
  real len = mj_normalize3(con->frame);
  if (centers_coincide(len, mag)) {
    real a1[3], a2[3];
    zaxis(a1, mat1);
    zaxis(a2, mat2);
    rl_v3_cross(con->frame, a1, a2);
    mj_normalize3(con->frame);
  }
  rl_v3_scale(con->pos, con->frame, r1 + con->dist / 2);
  rl_v3_add(con->pos, con->pos, c1);
  rl_v3_zero(con->frame + 3);
  return 1;
}

/* Two capsule axes whose closest points are interior to both segments (neither clamped): c2 − c1 is then
   perpendicular to both axes, along n = z1 × z2 (normalized), with length |off·n| — what MuJoCo's normalized
   difference is in exact arithmetic.  f32 (RL_CONTACT_OFFSETS) takes n, flipped to off's side, and |off·n|: off's
   rounding (ε of its link-sized terms) turned a difference of 1.4e-8 m by 3.5e-3 (MuJoCo's cloth sample), but
   only its component along n enters |off·n|.  Centres that coincide (centers_coincide) keep MuJoCo's unflipped
   z1 × z2.  Otherwise, and in f64, sphere_sphere_contact. */
static int crossing_contact(rl_contact *con, real margin, const real c1[3], const real off[3], real mag,
                            const real mat1[9], real r1, const real mat2[9], real r2) {
  real a1[3], a2[3], n[3];
  zaxis(a1, mat1);
  zaxis(a2, mat2);
  rl_v3_cross(n, a1, a2);
  if (!RL_CONTACT_OFFSETS || mj_normalize3(n) < MJ_MINVAL) return sphere_sphere_contact(con, margin, c1, off, mag, mat1, r1, mat2, r2);
  real s = rl_v3_dot(off, n), cdist = rl_fabs(s);
  if (cdist > margin + r1 + r2) return 0;
  if (s < 0 && !centers_coincide(cdist, mag)) rl_v3_scale(n, n, -1);
  con->dist = cdist - r1 - r2;
  rl_v3_copy(con->frame, n);
  rl_v3_scale(con->pos, con->frame, r1 + con->dist / 2);
  rl_v3_add(con->pos, con->pos, c1);
  rl_v3_zero(con->frame + 3);
  return 1;
}

/* the contact of two centres p1 + s1·a1 and p2 + s2·a2 with radii r1, r2 (center_offset, sphere_sphere_contact) */
static int centers_contact(rl_contact *con, real margin, const real p1[3], const real a1[3], real s1,
                           const real mat1[9], real r1, const real p2[3], const real a2[3], real s2,
                           const real mat2[9], real r2) {
  real c1[3], off[3], mag;
  center_offset(c1, off, &mag, p1, a1, s1, p2, a2, s2);
  return sphere_sphere_contact(con, margin, c1, off, mag, mat1, r1, mat2, r2);
}

int rl_collide_sphere_sphere(RL_NARROW_ARGS) {
  (void)mode;
  (void)mpr_iterations;
  (void)mpr_tolerance;
  if (!view_finite(g1) || !view_finite(g2)) return 0;
  const real none[3] = {0, 0, 0};
  return complete_frames(con, centers_contact(con, margin, g1->pos, none, 0, g1->mat, g1->size[0], g2->pos, none, 0,
                                              g2->mat, g2->size[0]));
}

/* clamp x to [−1, 1] */
static real clamp_unit(real x) { return x > 1 ? 1 : (x < -1 ? -1 : x); }

/* Sphere vs capsule: nearest segment point c2 + x·h a2 with x = clamp(((c1 − c2)·h a2)/‖h a2‖²),
 * then sphere–sphere against it. */
int rl_collide_sphere_capsule(RL_NARROW_ARGS) {
  (void)mode;
  (void)mpr_iterations;
  (void)mpr_tolerance;
  if (!view_finite(g1) || !view_finite(g2)) return 0;
  real axis[3], vec[3];
  zaxis(axis, g2->mat);
  rl_v3_scale(axis, axis, g2->size[1]);
  rl_v3_sub(vec, g1->pos, g2->pos);
  real x = clamp_unit(rl_v3_dot(axis, vec) / rl_v3_dot(axis, axis));
  const real none[3] = {0, 0, 0};
  return complete_frames(con, centers_contact(con, margin, g1->pos, none, 0, g1->mat, g1->size[0], g2->pos, axis, x,
                                              g2->mat, g2->size[0]));
}

/* The parallel test of capsule–capsule on det = a·c − b² = ‖A1‖²‖A2‖²·sin²θ.  f64: MuJoCo's |det| < mjMINVAL.
   f32: det is a difference of two products of dot products, each rounded, and carries up to ~7ε·a·c of
   rounding: two exactly parallel axes (a capsule on a joint that turns about its own axis, against a coaxial
   one) give |det| ~ 1e-12, far above 1e-15, so float took the crossing-segments branch (one contact) where
   MuJoCo takes the parallel one (two); the test is |det| < 8ε·a·c there (sin²θ below float's resolution of
   it, θ ≲ 1e-3 rad). */
static int capsules_parallel(real det, real a, real c) {
#if defined(RL_REAL_F64)
  (void)a;
  (void)c;
  return rl_fabs(det) < MJ_MINVAL;
#else
  return rl_fabs(det) < rl_fmax(MJ_MINVAL, 8 * RL_EPS * a * c);
#endif
}

/* Capsule vs capsule (mjc_CapsuleCapsule).  Segments c1 + x1 A1, c2 + x2 A2 (A = h·axis), x ∈ [−1, 1].
 * Normal equations with a = A1·A1, b = −A1·A2, c = A2·A2, u = −A1·(c1 − c2), v = A2·(c1 − c2),
 * det = ac − b²:  x1 = (cu − bv)/det, x2 = (av − bu)/det, clamped one segment at a time; then a
 * sphere–sphere test.  Parallel axes (capsules_parallel): each end of segment 1 against its clamped
 * projection on segment 2, then (while fewer than 2 contacts) each end of segment 2. */
int rl_collide_capsule_capsule(RL_NARROW_ARGS) {
  (void)mode;
  (void)mpr_iterations;
  (void)mpr_tolerance;
  if (!view_finite(g1) || !view_finite(g2)) return 0;
  const real *pos1 = g1->pos, *pos2 = g2->pos, *mat1 = g1->mat, *mat2 = g2->mat;
  real r1 = g1->size[0], r2 = g2->size[0];
  real axis1[3], axis2[3], dif[3];
  zaxis(axis1, mat1);
  rl_v3_scale(axis1, axis1, g1->size[1]);
  zaxis(axis2, mat2);
  rl_v3_scale(axis2, axis2, g2->size[1]);
  rl_v3_sub(dif, pos1, pos2);

  real ma = rl_v3_dot(axis1, axis1);
  real mb = -rl_v3_dot(axis1, axis2);
  real mc = rl_v3_dot(axis2, axis2);
  real u = -rl_v3_dot(axis1, dif);
  real v = rl_v3_dot(axis2, dif);
  real det = ma * mc - mb * mb;

  if (!capsules_parallel(det, ma, mc)) {
    real x1 = (mc * u - mb * v) / det;
    real x2 = (ma * v - mb * u) / det;
    int interior = x1 > -1 && x1 < 1 && x2 > -1 && x2 < 1;
    if (x1 > 1) {
      x1 = 1;
      x2 = (v - mb) / mc;
    } else if (x1 < -1) {
      x1 = -1;
      x2 = (v + mb) / mc;
    }
    if (x2 > 1) {
      x2 = 1;
      x1 = clamp_unit((u - mb) / ma);
    } else if (x2 < -1) {
      x2 = -1;
      x1 = clamp_unit((u + mb) / ma);
    }
    if (!interior)
      return complete_frames(con, centers_contact(con, margin, pos1, axis1, x1, mat1, r1, pos2, axis2, x2, mat2, r2));
    real c1[3], off[3], mag;
    center_offset(c1, off, &mag, pos1, axis1, x1, pos2, axis2, x2);
    return complete_frames(con, crossing_contact(con, margin, c1, off, mag, mat1, r1, mat2, r2));
  }

  /* parallel axes */
  int n = centers_contact(con, margin, pos1, axis1, 1, mat1, r1, pos2, axis2, clamp_unit((v - mb) / mc), mat2, r2);
  n += centers_contact(con + n, margin, pos1, axis1, -1, mat1, r1, pos2, axis2, clamp_unit((v + mb) / mc), mat2, r2);
  if (n >= 2) return complete_frames(con, n);
  n += centers_contact(con + n, margin, pos1, axis1, clamp_unit((u - mb) / ma), mat1, r1, pos2, axis2, 1, mat2, r2);
  if (n >= 2) return complete_frames(con, n);
  n += centers_contact(con + n, margin, pos1, axis1, clamp_unit((u + mb) / ma), mat1, r1, pos2, axis2, -1, mat2, r2);
  return complete_frames(con, n);
}
