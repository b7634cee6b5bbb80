/* collide_convex.c — general convex pairs by Minkowski Portal Refinement, and flat-contact manifolds
 * (see rl_narrow.h).
 *
 * MuJoCo 2.2.2's mjc_Convex hands the pair to libccd 2.1's ccdMPRPenetration with support functions
 * that inflate each geom by margin/2 along the query direction, then sets
 *     dist = margin − depth,  normal = dir (from geom1 toward geom2),  pos = midpoint of the portal's
 *     barycentric witness points on the two inflated surfaces,
 * rejects a zero direction (touching contact), and corrects the normal analytically for spheres,
 * capsules, ellipsoids and cylinder walls (mjc_fixNormal).  mj_collideGeoms finally completes the
 * frame (mju_makeFrame).  This file follows that sequence step by step, with libccd's comparison
 * rules (ccdIsZero: |x| < ε, ccdEq: relative ε) so that in double precision the branch decisions and
 * the result agree with MuJoCo's to rounding.  Every loop is bounded: the portal refinement (unbounded
 * in libccd) stops after RL_MPR_REFINE_MAX(iterations) steps with "no contact".
 *
 * RL_COLL_MANIFOLD: when both geoms have flat features (box, cylinder, mesh) and the MPR normal meets
 * a face of one and a face or edge of the other (within CVX_FLAT_SIN), the two features are projected
 * on the contact plane, one is clipped against the other, each clipped point gets its own separation
 * along the normal, points with dist < margin are kept and reduced to at most CVX_MAXMANIFOLD
 * well-spread points (deepest first).  Everything else keeps MuJoCo's single point.
 */
#include <float.h>
#include "rl_narrow.h"
#include "rl_math.h"

/* MuJoCo's mjMINVAL (a behavioural constant: degenerate-branch decisions as MuJoCo's in both precisions) */
/* portal refinement budget (libccd has none): generous multiple of the penetration budget */
#define RL_MPR_REFINE_MAX(it) (4 * (it) + 64)
/* manifold constants */
#define CVX_MAXFEAT     32 /* vertices of one contact feature */
#define CVX_MAXCLIP     (2 * CVX_MAXFEAT + 4)
#define CVX_CYL_RIM     16            /* points on a cylinder cap used as its face polygon */
#define CVX_FLAT_SIN    ((real)0.035) /* a face within ~2° of the contact plane counts as flat */
#define CVX_MAXMANIFOLD 4

/* ================================================================ small helpers */

/* mju_sign: −1, 0 or +1 */
static real sign0(real x) { return x < 0 ? (real)-1 : (x > 0 ? (real)1 : (real)0); }

/* ================================================================ support functions */

/* Support point in the geom frame for local direction d (d unit for the round shapes):
 *   sphere     s = r·d
 *   capsule    s = r·d + sign(d_z)·h·e_z
 *   ellipsoid  s = S·(S d)/‖S d‖,  S = diag(size)
 *   cylinder   s = r·(d_x, d_y)/‖(d_x, d_y)‖ + sign(d_z)·h·e_z   (radial part 0 when ‖(d_x,d_y)‖ ≤ mjMINVAL)
 *   box        s_i = sign(d_i)·size_i
 *   mesh       s = argmax_v d·v over the hull vertices (MuJoCo's hill climbing, see mesh_support_index)
 * sign(0) = 0 as MuJoCo's mju_sign. */
static void support_local(const rl_geomview *g, const real d[3], real s[3]) {
  const real *size = g->size;
  switch (g->type) {
  case RL_GEOM_SPHERE: rl_v3_scale(s, d, size[0]); break;
  case RL_GEOM_CAPSULE:
    rl_v3_scale(s, d, size[0]);
    s[2] += sign0(d[2]) * size[1];
    break;
  case RL_GEOM_ELLIPSOID:
    for (int i = 0; i < 3; i++) s[i] = d[i] * size[i];
    mj_normalize3(s);
    for (int i = 0; i < 3; i++) s[i] *= size[i];
    break;
  case RL_GEOM_CYLINDER: {
    real t = rl_sqrt(d[0] * d[0] + d[1] * d[1]);
    if (t > MJ_MINVAL) {
      s[0] = d[0] / t * size[0];
      s[1] = d[1] / t * size[0];
    } else {
      s[0] = s[1] = 0;
    }
    s[2] = sign0(d[2]) * size[1];
    break;
  }
  case RL_GEOM_BOX:
    for (int i = 0; i < 3; i++) s[i] = sign0(d[i]) * size[i];
    break;
  case RL_GEOM_MESH: {
    int best = mesh_support_index(g, d);
    if (best < 0) rl_v3_zero(s);
    else rl_v3_copy(s, g->vert + 3 * best);
    break;
  }
  default: rl_v3_zero(s);
  }
}

/* World support of g inflated by half_margin (mjccd_support):
 *   x = R·(s(Rᵀ u) + (Rᵀ u)·half_margin) + p */
static void support_inflated(const rl_geomview *g, const real dir[3], real half_margin, real out[3]) {
  real d[3], s[3];
  rl_m3_tmulv(d, g->mat, dir);
  support_local(g, d, s);
  for (int i = 0; i < 3; i++) s[i] += d[i] * half_margin;
  rl_m3_mulv(out, g->mat, s);
  rl_v3_add(out, out, g->pos);
}

/* support point of g in world direction dir: argmax_{x ∈ g} dir·x */
void rl_support(const rl_geomview *g, const real dir[3], real out[3]) { support_inflated(g, dir, 0, out); }

/* ================================================================ libccd's MPR, step by step */

/* ccdIsZero: |x| < ε */
static int ccd_is_zero(real x) { return rl_fabs(x) < RL_EPS; }
/* ccdIsZero of a dimensioned quantity (a length, a triple product, a squared cross product) whose terms have size
   mag.  f64: libccd's |x| < DBL_EPSILON, as MuJoCo.  f32: zero as MuJoCo's double has it (|x| < DBL_EPSILON), or
   below the quantity's own float rounding, 4ε·mag.  libccd's ε as an absolute float threshold (1.2e-7 m, m³ or m⁴)
   is far coarser than that for small geometry: the collinearity test |v0 × v1|² < ε of portal discovery read two
   directions 20° apart as collinear for a 1 cm capsule end inside a cylinder cap (MuJoCo's slider-crank sample),
   and float MPR stopped on the segment v0–v1 with a normal 0.16 off. */
static int ccd_zero(real x, real mag) {
#if defined(RL_REAL_F64)
  (void)mag;
  return rl_fabs(x) < RL_EPS;
#else
  return rl_fabs(x) < rl_fmax((real)DBL_EPSILON, 4 * RL_EPS * mag);
#endif
}
/* ccdEq: |a − b| < ε, or < ε·max(|a|,|b|) */
static int ccd_eq(real a, real b) {
  real ab = rl_fabs(a - b);
  if (ab < RL_EPS) return 1;
  real fa = rl_fabs(a), fb = rl_fabs(b);
  return fb > fa ? ab < RL_EPS * fb : ab < RL_EPS * fa;
}
/* ccdVec3Eq with the origin: every component ccdEq 0 */
static int ccd_is_origin(const real a[3]) { return ccd_eq(a[0], 0) && ccd_eq(a[1], 0) && ccd_eq(a[2], 0); }
/* ccdVec3Normalize: v ← v·(1/√(v·v)) (a zero vector is left as is instead of becoming NaN) */
static void ccd_normalize(real v[3]) {
  real l2 = rl_v3_dot(v, v);
  if (l2 > 0) rl_v3_scale(v, v, 1 / rl_sqrt(l2));
}
/* ‖a‖ */
static real norm3(const real a[3]) { return rl_sqrt(rl_v3_dot(a, a)); }
/* ‖a − b‖² */
static real dist2(const real a[3], const real b[3]) {
  real d[3];
  rl_v3_sub(d, a, b);
  return rl_v3_dot(d, d);
}

/* a point of the Minkowski difference: v = v1 − v2 with v1 ∈ ∂g1, v2 ∈ ∂g2 */
typedef struct {
  real v[3], v1[3], v2[3];
} mpr_point;
typedef struct {
  const rl_geomview *g1, *g2;
  const real (*prism)[3]; /* non-NULL: shape 1 is this triangular prism instead of g1 (height fields) */
  real half_margin1, half_margin2;
  mpr_point p[4]; /* portal: p[0] interior point, p[1..3] the portal triangle */
} mpr_state;

/* Support of a triangular prism with vertices v₀..v₅ (v₀..v₂ the bottom, v₃..v₅ the top triangle) in direction
   u (MuJoCo 2.2.2's prism_support): the vertex of the top triangle maximizing u·v when u_z ≥ 0, of the bottom one
   when u_z < 0; ties keep the first. */
void rl_prism_support(const real prism[6][3], const real u[3], real out[3]) {
  int start = u[2] < 0 ? 0 : 3, best = start;
  real bestdot = prism[start][0] * u[0] + prism[start][1] * u[1] + prism[start][2] * u[2];
  for (int i = start + 1; i < start + 3; i++) {
    real dot = prism[i][0] * u[0] + prism[i][1] * u[1] + prism[i][2] * u[2];
    if (dot > bestdot) {
      best = i;
      bestdot = dot;
    }
  }
  rl_v3_copy(out, prism[best]);
}

/* interior point of a prism (prism_center): the mean of its six vertices, (Σ v_i)·(1/6) */
static void prism_center(const real prism[6][3], real out[3]) {
  rl_v3_zero(out);
  for (int i = 0; i < 6; i++) rl_v3_add(out, out, prism[i]);
  rl_v3_scale(out, out, (real)(1.0 / 6.0));
}

/* Minkowski support (__ccdSupport): v1 = s₁(u), v2 = s₂(−u), v = v1 − v2 */
static void mpr_support(const mpr_state *s, const real u[3], mpr_point *out) {
  real nu[3] = {-u[0], -u[1], -u[2]};
  if (s->prism) rl_prism_support(s->prism, u, out->v1);
  else support_inflated(s->g1, u, s->half_margin1, out->v1);
  support_inflated(s->g2, nu, s->half_margin2, out->v2);
  rl_v3_sub(out->v, out->v1, out->v2);
}

/* squared distance from P to segment [x0, b] and its witness (__ccdVec3PointSegmentDist2):
   t = −(x0 − P)·d / d·d, d = b − x0, clamped to the end points with ccd's ε rules */
static real point_segment_dist2(const real P[3], const real x0[3], const real b[3], real w[3]) {
  real d[3], a[3];
  rl_v3_sub(d, b, x0);
  rl_v3_sub(a, x0, P);
  real t = -rl_v3_dot(a, d);
  t /= rl_v3_dot(d, d);
  if (t < 0 || ccd_is_zero(t)) {
    rl_v3_copy(w, x0);
    return dist2(x0, P);
  }
  if (t > 1 || ccd_eq(t, 1)) {
    rl_v3_copy(w, b);
    return dist2(b, P);
  }
  rl_v3_scale(w, d, t);
  rl_v3_add(w, w, x0);
  return dist2(w, P);
}

/* squared distance from P to triangle (x0, B, C) and its witness (ccdVec3PointTriDist2):
   minimize |x0 + s d1 + t d2 − P|², d1 = B − x0, d2 = C − x0:
   s = (q r − w p)/(w v − r²), t = (−s r − q)/w; outside the triangle: the nearest of the three edges */
static real point_tri_dist2(const real P[3], const real x0[3], const real B[3], const real C[3], real w[3]) {
  real d1[3], d2[3], a[3];
  rl_v3_sub(d1, B, x0);
  rl_v3_sub(d2, C, x0);
  rl_v3_sub(a, x0, P);
  real v = rl_v3_dot(d1, d1), ww = rl_v3_dot(d2, d2);
  real p = rl_v3_dot(a, d1), q = rl_v3_dot(a, d2), r = rl_v3_dot(d1, d2);
  real det = ww * v - r * r, s, t;
  if (ccd_zero(det, ww * v)) {
    s = t = -1;
  } else {
    s = (q * r - ww * p) / det;
    t = (-s * r - q) / ww;
  }
  if ((ccd_is_zero(s) || s > 0) && (ccd_eq(s, 1) || s < 1) && (ccd_is_zero(t) || t > 0) && (ccd_eq(t, 1) || t < 1) &&
      (ccd_eq(t + s, 1) || t + s < 1)) {
    rl_v3_scale(d1, d1, s);
    rl_v3_scale(d2, d2, t);
    rl_v3_copy(w, x0);
    rl_v3_add(w, w, d1);
    rl_v3_add(w, w, d2);
    return dist2(w, P);
  }
  real w2[3];
  real dist = point_segment_dist2(P, x0, B, w);
  real d = point_segment_dist2(P, x0, C, w2);
  if (d < dist) {
    dist = d;
    rl_v3_copy(w, w2);
  }
  d = point_segment_dist2(P, B, C, w2);
  if (d < dist) {
    dist = d;
    rl_v3_copy(w, w2);
  }
  return dist;
}

/* Phase 1, portal discovery (libccd discoverPortal).  v0 = c1 − c2 (nudged by 10ε along x if it is
 * the origin); v1 = support toward the origin; v2 = support along v0 × v1; v3 along the portal
 * face normal, swapping until the origin ray passes through (v1, v2, v3).
 * Returns −1 (no intersection), 0 (portal found), 1 (origin on v1), 2 (origin on segment v0–v1). */
static int mpr_discover_portal(mpr_state *s, int budget) {
  real dir[3], va[3], vb[3], dot;
  mpr_point *p = s->p;
  if (s->prism) prism_center(s->prism, p[0].v1);
  else rl_v3_copy(p[0].v1, s->g1->pos);
  rl_v3_copy(p[0].v2, s->g2->pos);
  rl_v3_sub(p[0].v, p[0].v1, p[0].v2);
  if (ccd_is_origin(p[0].v)) p[0].v[0] += RL_EPS * (real)10;

  rl_v3_scale(dir, p[0].v, -1);
  ccd_normalize(dir);
  mpr_support(s, dir, &p[1]);
  dot = rl_v3_dot(p[1].v, dir);
  if (ccd_zero(dot, norm3(p[1].v)) || dot < 0) return -1;

  rl_v3_cross(dir, p[0].v, p[1].v);
  real n01 = norm3(p[0].v) * norm3(p[1].v);
  if (ccd_zero(rl_v3_dot(dir, dir), 4 * RL_EPS * n01 * n01)) return ccd_is_origin(p[1].v) ? 1 : 2;

  ccd_normalize(dir);
  mpr_support(s, dir, &p[2]);
  dot = rl_v3_dot(p[2].v, dir);
  if (ccd_zero(dot, norm3(p[2].v)) || dot < 0) return -1;

  rl_v3_sub(va, p[1].v, p[0].v);
  rl_v3_sub(vb, p[2].v, p[0].v);
  rl_v3_cross(dir, va, vb);
  ccd_normalize(dir);
  if (rl_v3_dot(dir, p[0].v) > 0) { /* orient the portal face away from the origin */
    mpr_point t = p[1];
    p[1] = p[2];
    p[2] = t;
    rl_v3_scale(dir, dir, -1);
  }

  for (int it = 0; it < budget; it++) {
    mpr_support(s, dir, &p[3]);
    dot = rl_v3_dot(p[3].v, dir);
    if (ccd_zero(dot, norm3(p[3].v)) || dot < 0) return -1;
    int cont = 0;
    real n03 = norm3(p[0].v) * norm3(p[3].v);
    /* origin outside (v1, v0, v3): replace v2 by v3 */
    rl_v3_cross(va, p[1].v, p[3].v);
    dot = rl_v3_dot(va, p[0].v);
    if (dot < 0 && !ccd_zero(dot, n03 * norm3(p[1].v))) {
      p[2] = p[3];
      cont = 1;
    }
    if (!cont) { /* origin outside (v3, v0, v2): replace v1 by v3 */
      rl_v3_cross(va, p[3].v, p[2].v);
      dot = rl_v3_dot(va, p[0].v);
      if (dot < 0 && !ccd_zero(dot, n03 * norm3(p[2].v))) {
        p[1] = p[3];
        cont = 1;
      }
    }
    if (!cont) return 0;
    rl_v3_sub(va, p[1].v, p[0].v);
    rl_v3_sub(vb, p[2].v, p[0].v);
    rl_v3_cross(dir, va, vb);
    ccd_normalize(dir);
  }
  return -1;
}

/* portal direction: unit normal of (v1, v2, v3), n = (v2 − v1) × (v3 − v1)/‖·‖ */
static void mpr_portal_dir(const mpr_state *s, real dir[3]) {
  real a[3], b[3];
  rl_v3_sub(a, s->p[2].v, s->p[1].v);
  rl_v3_sub(b, s->p[3].v, s->p[1].v);
  rl_v3_cross(dir, a, b);
  ccd_normalize(dir);
}

/* tolerance test (portalReachTolerance): min_i (v4 − v_i)·dir ≤ tol (ccdEq or <) */
static int mpr_reach_tolerance(const mpr_state *s, const mpr_point *v4, const real dir[3], real tol) {
  real dv4 = rl_v3_dot(v4->v, dir);
  real d1 = dv4 - rl_v3_dot(s->p[1].v, dir);
  real d2 = dv4 - rl_v3_dot(s->p[2].v, dir);
  real d3 = dv4 - rl_v3_dot(s->p[3].v, dir);
  real m = rl_fmin(rl_fmin(d1, d2), d3);
  return ccd_eq(m, tol) || m < tol;
}

/* replace one portal vertex by v4, keeping the origin ray inside (expandPortal): with c = v4 × v0,
   v1·c > 0 → (v2·c > 0 ? v1 : v3) ← v4;  else (v3·c > 0 ? v2 : v1) ← v4 */
static void mpr_expand_portal(mpr_state *s, const mpr_point *v4) {
  real c[3];
  rl_v3_cross(c, v4->v, s->p[0].v);
  if (rl_v3_dot(s->p[1].v, c) > 0) {
    if (rl_v3_dot(s->p[2].v, c) > 0) s->p[1] = *v4;
    else s->p[3] = *v4;
  } else {
    if (rl_v3_dot(s->p[3].v, c) > 0) s->p[2] = *v4;
    else s->p[1] = *v4;
  }
}

/* Phase 2, portal refinement (refinePortal): until the origin lies behind the portal face
 * (dir·v1 ≥ 0), push the portal outward; −1 when the support cannot pass the origin or the
 * tolerance is reached first (no intersection), or after `budget` steps. */
static int mpr_refine_portal(mpr_state *s, real tol, int budget) {
  real dir[3];
  mpr_point v4;
  for (int it = 0; it < budget; it++) {
    mpr_portal_dir(s, dir);
    real dot = rl_v3_dot(dir, s->p[1].v);
    if (ccd_zero(dot, norm3(s->p[1].v)) || dot > 0) return 0;
    mpr_support(s, dir, &v4);
    dot = rl_v3_dot(v4.v, dir);
    if (!(ccd_zero(dot, norm3(v4.v)) || dot > 0) || mpr_reach_tolerance(s, &v4, dir, tol)) return -1;
    mpr_expand_portal(s, &v4);
  }
  return -1;
}

/* Contact position (findPos): barycentric weights of the origin in the tetrahedron (v0..v3),
 *   b0 = (v1×v2)·v3, b1 = (v3×v2)·v0, b2 = (v0×v1)·v3, b3 = (v2×v1)·v0,
 * (when Σb ≤ 0: b0 = 0 and the weights of its projection on the portal face along dir),
 * applied to the witnesses on both shapes; pos = (Σ b_i v1_i + Σ b_i v2_i)/(2 Σ b_i). */
static void mpr_find_pos(const mpr_state *s, real pos[3]) {
  const mpr_point *p = s->p;
  real dir[3], vec[3], b[4], sum;
  mpr_portal_dir(s, dir);
  rl_v3_cross(vec, p[1].v, p[2].v);
  b[0] = rl_v3_dot(vec, p[3].v);
  rl_v3_cross(vec, p[3].v, p[2].v);
  b[1] = rl_v3_dot(vec, p[0].v);
  rl_v3_cross(vec, p[0].v, p[1].v);
  b[2] = rl_v3_dot(vec, p[3].v);
  rl_v3_cross(vec, p[2].v, p[1].v);
  b[3] = rl_v3_dot(vec, p[0].v);
  sum = b[0] + b[1] + b[2] + b[3];
  if (ccd_zero(sum, rl_fabs(b[0]) + rl_fabs(b[1]) + rl_fabs(b[2]) + rl_fabs(b[3])) || sum < 0) {
    b[0] = 0;
    rl_v3_cross(vec, p[2].v, p[3].v);
    b[1] = rl_v3_dot(vec, dir);
    rl_v3_cross(vec, p[3].v, p[1].v);
    b[2] = rl_v3_dot(vec, dir);
    rl_v3_cross(vec, p[1].v, p[2].v);
    b[3] = rl_v3_dot(vec, dir);
    sum = b[1] + b[2] + b[3];
  }
  real inv = 1 / sum, p1[3] = {0, 0, 0}, p2[3] = {0, 0, 0};
  for (int i = 0; i < 4; i++) {
    rl_v3_addscl(p1, p[i].v1, b[i]);
    rl_v3_addscl(p2, p[i].v2, b[i]);
  }
  rl_v3_scale(p1, p1, inv);
  rl_v3_scale(p2, p2, inv);
  rl_v3_add(pos, p1, p2);
  rl_v3_scale(pos, pos, (real)0.5);
}

/* Phase 3, penetration (findPenetr): expand the portal until the tolerance or max_iterations, then
 * depth = dist(origin, portal triangle), dir = the nearest point normalized (0 when depth ≈ 0). */
static void mpr_find_penetration(mpr_state *s, real tol, int max_iterations, real *depth, real dir[3], real pos[3]) {
  real pdir[3];
  mpr_point v4;
  for (long it = 0;; it++) {
    mpr_portal_dir(s, pdir);
    mpr_support(s, pdir, &v4);
    if (mpr_reach_tolerance(s, &v4, pdir, tol) || it > max_iterations) break;
    mpr_expand_portal(s, &v4);
  }
  real origin[3] = {0, 0, 0};
  *depth = rl_sqrt(point_tri_dist2(origin, s->p[1].v, s->p[2].v, s->p[3].v, dir));
  if (ccd_zero(*depth, norm3(s->p[1].v))) rl_v3_zero(dir);
  else ccd_normalize(dir);
  mpr_find_pos(s, pos);
}

/* ccdMPRPenetration on the prepared shapes of s.  Returns 1 with depth, unit dir (shape 1 → shape 2) and
   pos when the shapes intersect with a defined direction, else 0. */
static int mpr_run(mpr_state *sp, int iterations, real tol, real *depth, real dir[3], real pos[3]) {
  mpr_state s = *sp;
  int budget = RL_MPR_REFINE_MAX(iterations > 0 ? iterations : 0);
  int res = mpr_discover_portal(&s, budget);
  if (res < 0) return 0;
  if (res == 1) return 0; /* touching on v1: depth 0, direction undefined (MuJoCo drops it) */
  if (res == 2) {         /* origin on segment v0–v1 (findPenetrSegment) */
    rl_v3_add(pos, s.p[1].v1, s.p[1].v2);
    rl_v3_scale(pos, pos, (real)0.5);
    rl_v3_copy(dir, s.p[1].v);
    *depth = rl_sqrt(rl_v3_dot(dir, dir));
    ccd_normalize(dir);
  } else {
    if (mpr_refine_portal(&s, tol, budget) < 0) return 0;
    mpr_find_penetration(&s, tol, iterations, depth, dir, pos);
  }
  if (ccd_is_origin(dir)) return 0;
  return rl_isfinite(*depth) && rl_isfinite(dir[0]) && rl_isfinite(dir[1]) && rl_isfinite(dir[2]);
}

/* ccdMPRPenetration on g1, g2 each inflated by margin/2 (mjc_Convex) */
static int mpr_penetration(const rl_geomview *g1, const rl_geomview *g2, real margin, int iterations, real tol,
                           real *depth, real dir[3], real pos[3]) {
  mpr_state s;
  s.g1 = g1;
  s.g2 = g2;
  s.prism = NULL;
  s.half_margin1 = s.half_margin2 = margin / 2;
  return mpr_run(&s, iterations, tol, depth, dir, pos);
}

/* ccdMPRPenetration of a prism (shape 1, not inflated) against g2 inflated by margin/2, as mjc_ConvexHField runs
   it for each prism of a height field */
int rl_mpr_prism(const real prism[6][3], const rl_geomview *g2, real margin, int iterations, real tol, real *depth,
                 real dir[3], real pos[3]) {
  mpr_state s;
  s.g1 = NULL;
  s.g2 = g2;
  s.prism = prism;
  s.half_margin1 = 0;
  s.half_margin2 = margin / 2;
  return mpr_run(&s, iterations, tol, depth, dir, pos);
}

/* ================================================================ MuJoCo's normal correction */

/* Point p inside the ellipsoid x²/a² + y²/b² + z²/c² ≤ 1: march along the current normal to the
 * surface (ray p + x·n, x = (−B + √(B² − A C))/A with A = nᵀS⁻²n, B = pᵀS⁻²n, C = pᵀS⁻²p − 1) and take
 * the surface normal there, n ← S⁻²(p + x n)/‖·‖, until it changes by < 1e-6 (≤ 30 steps). */
static int ellipsoid_normal_from_inside(real nrm[3], const real pos[3], const real size[3]) {
  const int maxiter = 30;
  const real tolerance = (real)1e-6;
  real S2inv[3] = {1 / (size[0] * size[0]), 1 / (size[1] * size[1]), 1 / (size[2] * size[2])};
  real C = pos[0] * pos[0] * S2inv[0] + pos[1] * pos[1] * S2inv[1] + pos[2] * pos[2] * S2inv[2] - 1;
  if (C > 0) return 0;
  mj_normalize3(nrm);
  for (int iter = 0; iter < maxiter; iter++) {
    real A = nrm[0] * nrm[0] * S2inv[0] + nrm[1] * nrm[1] * S2inv[1] + nrm[2] * nrm[2] * S2inv[2];
    real B = pos[0] * nrm[0] * S2inv[0] + pos[1] * nrm[1] * S2inv[1] + pos[2] * nrm[2] * S2inv[2];
    real det = B * B - A * C;
    if (det < MJ_MINVAL || A < MJ_MINVAL) return iter > 0;
    real x = (-B + rl_sqrt(det)) / A;
    if (x < 0) return iter > 0;
    real pnt[3], newnrm[3];
    for (int i = 0; i < 3; i++) pnt[i] = pos[i] + nrm[i] * x;
    for (int i = 0; i < 3; i++) newnrm[i] = pnt[i] * S2inv[i];
    mj_normalize3(newnrm);
    real change = rl_sqrt(dist2(nrm, newnrm));
    rl_v3_copy(nrm, newnrm);
    if (change < tolerance) break;
  }
  return 1;
}

/* Point p outside the ellipsoid: normal at its nearest surface point, n ∝ p_i/(s_i² + λ) with λ ≥ 0
 * the root of Σ p_i² s_i²/(s_i² + λ)² = 1 (Newton from λ = 0, ≤ 30 steps, step tolerance 1e-6). */
static int ellipsoid_normal_from_outside(real nrm[3], const real pos[3], const real size[3]) {
  const int maxiter = 30;
  const real tolerance = (real)1e-6;
  real S2[3] = {size[0] * size[0], size[1] * size[1], size[2] * size[2]};
  real PS2[3] = {pos[0] * pos[0] * S2[0], pos[1] * pos[1] * S2[1], pos[2] * pos[2] * S2[2]};
  real la = 0;
  for (int iter = 0; iter < maxiter; iter++) {
    real R[3] = {1 / (S2[0] + la), 1 / (S2[1] + la), 1 / (S2[2] + la)};
    real val = PS2[0] * R[0] * R[0] + PS2[1] * R[1] * R[1] + PS2[2] * R[2] * R[2] - 1;
    if (val < tolerance) break;
    real deriv = -2 * (PS2[0] * R[0] * R[0] * R[0] + PS2[1] * R[1] * R[1] * R[1] + PS2[2] * R[2] * R[2] * R[2]);
    if (deriv > -MJ_MINVAL) break;
    real delta = -val / deriv;
    if (delta < tolerance) break;
    la += delta;
  }
  nrm[0] = pos[0] / (S2[0] + la);
  nrm[1] = pos[1] / (S2[1] + la);
  nrm[2] = pos[2] / (S2[2] + la);
  mj_normalize3(nrm);
  return 1;
}

/* Analytic outward normal of a round geom at local point p (mjc_fixNormal, per geom):
 *   sphere: p;  capsule: p − clamp(p_z, ±h)·e_z;  ellipsoid: the two solvers above;
 *   cylinder: (p_x, p_y, 0) when |p_z| ≤ 0.95 h and the round wall is ≥ 4× closer than the flat one.
 * nrm holds the current local normal on entry.  Returns 1 if it was replaced. */
static int round_normal_local(int type, const real size[3], const real p[3], real nrm[3]) {
  switch (type) {
  case RL_GEOM_SPHERE: rl_v3_copy(nrm, p); return 1;
  case RL_GEOM_CAPSULE:
    if (p[2] < -size[1]) nrm[2] = p[2] + size[1];
    else if (p[2] > size[1]) nrm[2] = p[2] - size[1];
    else nrm[2] = 0;
    nrm[0] = p[0];
    nrm[1] = p[1];
    return 1;
  case RL_GEOM_ELLIPSOID: {
    if (size[0] < MJ_MINVAL || size[1] < MJ_MINVAL || size[2] < MJ_MINVAL) return 0;
    real e = p[0] * p[0] / (size[0] * size[0]) + p[1] * p[1] / (size[1] * size[1]) + p[2] * p[2] / (size[2] * size[2]);
    return e <= 1 ? ellipsoid_normal_from_inside(nrm, p, size) : ellipsoid_normal_from_outside(nrm, p, size);
  }
  case RL_GEOM_CYLINDER: {
    if (rl_fabs(p[2]) > (real)0.95 * size[1]) return 0;
    real flat = rl_fabs(size[1] - rl_fabs(p[2]));
    real round = rl_fabs(size[0] - rl_sqrt(p[0] * p[0] + p[1] * p[1]));
    if (flat < (real)0.25 * round) return 0;
    nrm[0] = p[0];
    nrm[1] = p[1];
    nrm[2] = 0;
    return 1;
  }
  default: return 0;
  }
}

/* mjc_fixNormal: replace the MPR normal n by the analytic one of each round geom at the contact
 * point (geom1: outward normal; geom2: minus its outward normal); both → (n₁ − n₂)/‖·‖. */
void rl_fix_normal(const rl_geomview *g1, const rl_geomview *g2, const real pos[3], real normal[3]) {
  const rl_geomview *g[2] = {g1, g2};
  real nrm[2][3] = {{normal[0], normal[1], normal[2]}, {-normal[0], -normal[1], -normal[2]}};
  int done[2] = {0, 0};
  for (int i = 0; i < 2; i++) {
    int t = g[i]->type;
    if (t != RL_GEOM_SPHERE && t != RL_GEOM_CAPSULE && t != RL_GEOM_ELLIPSOID && t != RL_GEOM_CYLINDER) continue;
    real dif[3], p[3], n[3];
    rl_v3_sub(dif, pos, g[i]->pos);
    rl_m3_tmulv(p, g[i]->mat, dif);
    rl_m3_tmulv(n, g[i]->mat, nrm[i]);
    done[i] = round_normal_local(t, g[i]->size, p, n);
    if (done[i]) {
      mj_normalize3(n);
      rl_m3_mulv(nrm[i], g[i]->mat, n);
    }
  }
  if (done[0] && done[1]) {
    rl_v3_sub(normal, nrm[0], nrm[1]);
    mj_normalize3(normal);
  } else if (done[0]) {
    rl_v3_copy(normal, nrm[0]);
  } else if (done[1]) {
    rl_v3_scale(normal, nrm[1], -1);
  }
}

/* ================================================================ flat-contact manifold */

/* A contact feature projected on the contact plane: 2-D coordinates x (along the tangents t1, t2,
   relative to the MPR point c) and height z = n·(p − c); n = 1 point, 2 segment, ≥ 3 CCW polygon. */
typedef struct {
  int n;
  real x[CVX_MAXFEAT][2];
  real z[CVX_MAXFEAT];
  real plane[3]; /* polygon: least-squares height z = a + b x + c y */
} cvx_feature;

/* contact-plane coordinates of world point p: (t1·(p − c), t2·(p − c), n·(p − c)) */
static void plane_coords(const real frame[9], const real c[3], const real p[3], real out[3]) {
  real d[3];
  rl_v3_sub(d, p, c);
  out[0] = rl_v3_dot(frame + 3, d);
  out[1] = rl_v3_dot(frame + 6, d);
  out[2] = rl_v3_dot(frame, d);
}

/* add a world point to a raw feature (fails past CVX_MAXFEAT) */
static int feature_add(cvx_feature *f, const real frame[9], const real c[3], const real p[3]) {
  if (f->n >= CVX_MAXFEAT) return 0;
  real q[3];
  plane_coords(frame, c, p, q);
  f->x[f->n][0] = q[0];
  f->x[f->n][1] = q[1];
  f->z[f->n] = q[2];
  f->n++;
  return 1;
}

/* Vertices of a convex hull (geom frame) that form its flat feature toward world direction u: with v*
 * the support vertex, v belongs when its drop below v* is within the flat angle of its tangential
 * offset,  u·(v* − v) ≤ CVX_FLAT_SIN·‖(v − v*) − ((v − v*)·u)u‖.   0 if more than CVX_MAXFEAT. */
static int feature_mesh(const rl_geomview *g, const real u[3], const real frame[9], const real c[3], cvx_feature *f) {
  real ul[3], smax = (real)-1e30;
  int istar = 0;
  rl_m3_tmulv(ul, g->mat, u);
  for (int i = 0; i < g->nvert; i++) {
    real s = rl_v3_dot(ul, g->vert + 3 * i);
    if (s > smax) {
      smax = s;
      istar = i;
    }
  }
  const real *vs = g->vert + 3 * istar;
  f->n = 0;
  for (int i = 0; i < g->nvert; i++) {
    real dv[3], drop = smax - rl_v3_dot(ul, g->vert + 3 * i);
    rl_v3_sub(dv, g->vert + 3 * i, vs);
    rl_v3_addscl(dv, ul, drop); /* tangential part: dv − (dv·u)u, with dv·u = −drop */
    if (i != istar && drop > CVX_FLAT_SIN * rl_v3_norm(dv)) continue;
    real w[3];
    rl_m3_mulv(w, g->mat, g->vert + 3 * i);
    rl_v3_add(w, w, g->pos);
    if (!feature_add(f, frame, c, w)) return 0;
  }
  return 1;
}

/* Box feature toward u (local ũ = Rᵀu): a face when |ũ_i| ≥ cos θ (its 4 corners), an edge along
   axis i when only |ũ_i| ≤ sin θ (2 corners), else the support corner. */
static int feature_box(const rl_geomview *g, const real u[3], const real frame[9], const real c[3], cvx_feature *f) {
  real ul[3], sgn[3];
  rl_m3_tmulv(ul, g->mat, u);
  int face = -1, nflat = 0, edge = -1;
  for (int i = 0; i < 3; i++) {
    sgn[i] = ul[i] >= 0 ? 1 : -1;
    if (1 - ul[i] * ul[i] <= CVX_FLAT_SIN * CVX_FLAT_SIN) face = i;
    if (rl_fabs(ul[i]) <= CVX_FLAT_SIN) {
      nflat++;
      edge = i;
    }
  }
  int free_axes[2], nfree = 0;
  if (face >= 0) {
    for (int i = 0; i < 3; i++)
      if (i != face) free_axes[nfree++] = i;
  } else if (nflat == 1) {
    free_axes[nfree++] = edge;
  }
  f->n = 0;
  int ncorner = 1 << nfree;
  static const int order[4] = {0, 1, 3, 2}; /* corners around the face */
  for (int k = 0; k < ncorner; k++) {
    int bits = nfree == 2 ? order[k] : k;
    real loc[3], w[3];
    for (int i = 0; i < 3; i++) loc[i] = sgn[i] * g->size[i];
    for (int j = 0; j < nfree; j++)
      loc[free_axes[j]] = ((bits >> j) & 1) ? g->size[free_axes[j]] : -g->size[free_axes[j]];
    rl_m3_mulv(w, g->mat, loc);
    rl_v3_add(w, w, g->pos);
    feature_add(f, frame, c, w);
  }
  return 1;
}

/* Cylinder feature toward u (a = axis): |u·a| ≥ cos θ → the cap rim (CVX_CYL_RIM points);
   |u·a| ≤ sin θ → the wall segment p ± h·a + r·(u − (u·a)a)/‖·‖; otherwise a single point. */
static int feature_cylinder(const rl_geomview *g, const real u[3], const real frame[9], const real c[3],
                            cvx_feature *f) {
  real ax[3] = {g->mat[2], g->mat[5], g->mat[8]}, e1[3] = {g->mat[0], g->mat[3], g->mat[6]},
       e2[3] = {g->mat[1], g->mat[4], g->mat[7]};
  real ua = rl_v3_dot(u, ax), r = g->size[0], h = g->size[1], w[3];
  f->n = 0;
  if (1 - ua * ua <= CVX_FLAT_SIN * CVX_FLAT_SIN) {
    real sgn = ua > 0 ? 1 : -1;
    for (int k = 0; k < CVX_CYL_RIM; k++) {
      real phi = 2 * RL_PI * (real)k / (real)CVX_CYL_RIM;
      rl_v3_copy(w, g->pos);
      rl_v3_addscl(w, ax, sgn * h);
      rl_v3_addscl(w, e1, r * rl_cos(phi));
      rl_v3_addscl(w, e2, r * rl_sin(phi));
      feature_add(f, frame, c, w);
    }
  } else if (rl_fabs(ua) <= CVX_FLAT_SIN) {
    real rad[3];
    rl_v3_copy(rad, u);
    rl_v3_addscl(rad, ax, -ua);
    rl_v3_normalize(rad);
    for (int s = -1; s <= 1; s += 2) {
      rl_v3_copy(w, g->pos);
      rl_v3_addscl(w, rad, r);
      rl_v3_addscl(w, ax, (real)s * h);
      feature_add(f, frame, c, w);
    }
  }
  return 1;
}

/* z-component of (b − a) × (p − a) in the plane */
static real cross2(const real a[2], const real b[2], const real p[2]) {
  return (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]);
}

/* extent of a 2-D point set: max(x range, y range), at least RL_TINY */
static real points_extent(const real x[][2], int n) {
  real lo[2] = {0, 0}, hi[2] = {0, 0};
  for (int i = 0; i < n; i++)
    for (int a = 0; a < 2; a++) {
      if (i == 0 || x[i][a] < lo[a]) lo[a] = x[i][a];
      if (i == 0 || x[i][a] > hi[a]) hi[a] = x[i][a];
    }
  return rl_fmax(rl_fmax(hi[0] - lo[0], hi[1] - lo[1]), RL_TINY);
}

/* Convex hull of the feature points in the plane (Andrew's monotone chain, CCW, collinear points
 * dropped), then its height model: polygon → least-squares plane through the hull vertices. */
static void feature_hull(cvx_feature *f) {
  real scale = points_extent(f->x, f->n);
  int n = f->n, idx[CVX_MAXFEAT], hull[2 * CVX_MAXFEAT + 1], k = 0;
  for (int i = 0; i < n; i++) idx[i] = i;
  for (int i = 1; i < n; i++) { /* insertion sort by (x, y) */
    int t = idx[i], j = i - 1;
    while (j >= 0 &&
           (f->x[idx[j]][0] > f->x[t][0] || (f->x[idx[j]][0] == f->x[t][0] && f->x[idx[j]][1] > f->x[t][1]))) {
      idx[j + 1] = idx[j];
      j--;
    }
    idx[j + 1] = t;
  }
  real eps = RL_SQRT_EPS * scale * scale;
  for (int pass = 0; pass < 2; pass++) {
    int start = k;
    for (int ii = 0; ii < n; ii++) {
      int i = pass == 0 ? idx[ii] : idx[n - 1 - ii];
      while (k >= start + 2 && cross2(f->x[hull[k - 2]], f->x[hull[k - 1]], f->x[i]) <= eps) k--;
      hull[k++] = i;
    }
    k--; /* last point of each chain is the first of the other */
  }
  if (n == 1) k = 1;
  cvx_feature g;
  g.n = 0;
  for (int i = 0; i < k && g.n < CVX_MAXFEAT; i++) {
    /* drop coincident points (a segment's chain returns both ends twice) */
    int dup = 0;
    for (int j = 0; j < g.n; j++)
      if (rl_fabs(g.x[j][0] - f->x[hull[i]][0]) + rl_fabs(g.x[j][1] - f->x[hull[i]][1]) <= RL_SQRT_EPS * scale) dup = 1;
    if (dup) continue;
    g.x[g.n][0] = f->x[hull[i]][0];
    g.x[g.n][1] = f->x[hull[i]][1];
    g.z[g.n] = f->z[hull[i]];
    g.n++;
  }
  g.plane[0] = g.plane[1] = g.plane[2] = 0;
  if (g.n >= 3) {
    /* normal equations of z = a + b x + c y over the hull vertices, solved by Cramer's rule */
    real M[9] = {0}, r[3] = {0};
    for (int i = 0; i < g.n; i++) {
      real v[3] = {1, g.x[i][0], g.x[i][1]};
      for (int a = 0; a < 3; a++) {
        r[a] += v[a] * g.z[i];
        for (int b = 0; b < 3; b++) M[3 * a + b] += v[a] * v[b];
      }
    }
    real det =
        M[0] * (M[4] * M[8] - M[5] * M[7]) - M[1] * (M[3] * M[8] - M[5] * M[6]) + M[2] * (M[3] * M[7] - M[4] * M[6]);
    if (rl_fabs(det) > RL_TINY) {
      for (int col = 0; col < 3; col++) {
        real A[9];
        for (int i = 0; i < 9; i++) A[i] = M[i];
        for (int row = 0; row < 3; row++) A[3 * row + col] = r[row];
        g.plane[col] = (A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
                        A[2] * (A[3] * A[7] - A[4] * A[6])) /
                       det;
      }
    } else {
      g.n = 2;
    }
    /* a flat feature is planar: vertices off the fitted plane (beyond float-data rounding) mean the
       selection spans several faces, and the feature is refused */
    for (int i = 0; i < g.n && g.n >= 3; i++)
      if (rl_fabs(g.plane[0] + g.plane[1] * g.x[i][0] + g.plane[2] * g.x[i][1] - g.z[i]) > (real)1e-4 * scale) g.n = 0;
  }
  *f = g;
}

/* height of a feature at plane point q: polygon → its plane; segment → linear along it */
static real feature_height(const cvx_feature *f, const real q[2]) {
  if (f->n >= 3) return f->plane[0] + f->plane[1] * q[0] + f->plane[2] * q[1];
  if (f->n == 2) {
    real d[2] = {f->x[1][0] - f->x[0][0], f->x[1][1] - f->x[0][1]};
    real l2 = d[0] * d[0] + d[1] * d[1];
    real t = l2 > RL_TINY ? ((q[0] - f->x[0][0]) * d[0] + (q[1] - f->x[0][1]) * d[1]) / l2 : 0;
    t = rl_fmin(rl_fmax(t, 0), 1);
    return f->z[0] + t * (f->z[1] - f->z[0]);
  }
  return f->z[0];
}

/* Sutherland–Hodgman: clip polygon P (n points) by the CCW convex polygon C; returns the count */
static int clip_polygon(real P[][2], int n, const cvx_feature *C) {
  real buf[CVX_MAXCLIP][2];
  for (int e = 0; e < C->n && n > 0; e++) {
    const real *a = C->x[e], *b = C->x[(e + 1) % C->n];
    int m = 0;
    for (int i = 0; i < n; i++) {
      const real *p = P[i], *q = P[(i + 1) % n];
      real sp = cross2(a, b, p), sq = cross2(a, b, q);
      if (sp >= 0 && m < CVX_MAXCLIP) {
        buf[m][0] = p[0];
        buf[m][1] = p[1];
        m++;
      }
      if ((sp >= 0) != (sq >= 0) && m < CVX_MAXCLIP) {
        real t = sp / (sp - sq);
        buf[m][0] = p[0] + t * (q[0] - p[0]);
        buf[m][1] = p[1] + t * (q[1] - p[1]);
        m++;
      }
    }
    for (int i = 0; i < m; i++) {
      P[i][0] = buf[i][0];
      P[i][1] = buf[i][1];
    }
    n = m;
  }
  return n;
}

/* Cyrus–Beck: clip segment S[0]–S[1] by the CCW convex polygon C; returns 2 or 0 */
static int clip_segment(real S[][2], const cvx_feature *C) {
  real t0 = 0, t1 = 1, d[2] = {S[1][0] - S[0][0], S[1][1] - S[0][1]};
  for (int e = 0; e < C->n; e++) {
    const real *a = C->x[e], *b = C->x[(e + 1) % C->n];
    real s0 = cross2(a, b, S[0]); /* inside ⇔ s ≥ 0 */
    real ds = (b[0] - a[0]) * d[1] - (b[1] - a[1]) * d[0];
    if (rl_fabs(ds) <= RL_TINY) {
      if (s0 < 0) return 0;
      continue;
    }
    real t = -s0 / ds;
    if (ds > 0) t0 = rl_fmax(t0, t);
    else t1 = rl_fmin(t1, t);
  }
  if (t0 > t1) return 0;
  real a[2] = {S[0][0] + t0 * d[0], S[0][1] + t0 * d[1]};
  real b[2] = {S[0][0] + t1 * d[0], S[0][1] + t1 * d[1]};
  S[0][0] = a[0];
  S[0][1] = a[1];
  S[1][0] = b[0];
  S[1][1] = b[1];
  return 2;
}

/* Pick at most CVX_MAXMANIFOLD well-spread points: the deepest; the farthest from it; the one
 * making the largest triangle with those two; the one adding the most area outside that triangle.
 * Ties go to the lower index.  Writes the chosen indices to sel, returns their count. */
static int reduce_points(const real q[][2], const real *dist, int n, int sel[CVX_MAXMANIFOLD]) {
  if (n <= 0) return 0;
  real scale = points_extent(q, n);
  int k = 0, i0 = 0;
  for (int i = 1; i < n; i++)
    if (dist[i] < dist[i0]) i0 = i;
  sel[k++] = i0;
  real tiny = RL_SQRT_EPS * scale, best = tiny * tiny;
  int i1 = -1;
  for (int i = 0; i < n; i++) {
    real dx = q[i][0] - q[i0][0], dy = q[i][1] - q[i0][1];
    if (dx * dx + dy * dy > best) {
      best = dx * dx + dy * dy;
      i1 = i;
    }
  }
  if (i1 < 0) return k;
  sel[k++] = i1;
  int i2 = -1;
  best = tiny * scale;
  for (int i = 0; i < n; i++) {
    real a = rl_fabs(cross2(q[i0], q[i1], q[i]));
    if (a > best) {
      best = a;
      i2 = i;
    }
  }
  if (i2 < 0) return k;
  sel[k++] = i2;
  /* orient the triangle CCW, then the gain of p is the largest outward area over its edges */
  int tri[3] = {i0, i1, i2};
  if (cross2(q[i0], q[i1], q[i2]) < 0) {
    tri[1] = i2;
    tri[2] = i1;
  }
  int i3 = -1;
  best = tiny * scale;
  for (int i = 0; i < n; i++) {
    real gain = 0;
    for (int e = 0; e < 3; e++) gain = rl_fmax(gain, -cross2(q[tri[e]], q[tri[(e + 1) % 3]], q[i]));
    if (gain > best) {
      best = gain;
      i3 = i;
    }
  }
  if (i3 >= 0 && CVX_MAXMANIFOLD >= 4) sel[k++] = i3;
  return k;
}

/* 1 for the geom types that have flat features */
static int has_flat_features(int type) {
  return type == RL_GEOM_BOX || type == RL_GEOM_MESH || type == RL_GEOM_CYLINDER;
}

/* Feature of g toward world direction u (see feature_polytope / feature_cylinder), as a hull. */
static int feature_of(const rl_geomview *g, const real u[3], const real frame[9], const real c[3], cvx_feature *f) {
  int ok;
  if (g->type == RL_GEOM_BOX) ok = feature_box(g, u, frame, c, f);
  else if (g->type == RL_GEOM_MESH) ok = feature_mesh(g, u, frame, c, f);
  else ok = feature_cylinder(g, u, frame, c, f);
  if (!ok || f->n == 0) return 0;
  feature_hull(f);
  return f->n > 0;
}

/* Flat-contact manifold around the MPR contact `first` (frame complete): features of g1 toward +n and
 * of g2 toward −n, one clipped by the other (a polygon is needed on at least one side), per point
 * dist = z₂(q) − z₁(q) and pos = c + q_x t1 + q_y t2 + n (z₁ + z₂)/2, kept when dist < margin, reduced.
 * Returns the number of contacts written (0: keep the single MPR point). */
static int build_manifold(const rl_geomview *g1, const rl_geomview *g2, real margin, const rl_contact *first,
                          rl_contact *con) {
  const real *n = first->frame, *c = first->pos;
  real un[3] = {-n[0], -n[1], -n[2]};
  cvx_feature f1, f2;
  if (!feature_of(g1, n, n, c, &f1) || !feature_of(g2, un, n, c, &f2)) return 0;
  if (f1.n < 2 || f2.n < 2 || (f1.n < 3 && f2.n < 3)) return 0;

  real q[CVX_MAXCLIP][2];
  int m;
  if (f1.n >= 3 && f2.n >= 3) {
    for (int i = 0; i < f2.n; i++) {
      q[i][0] = f2.x[i][0];
      q[i][1] = f2.x[i][1];
    }
    m = clip_polygon(q, f2.n, &f1);
  } else {
    const cvx_feature *seg = f1.n == 2 ? &f1 : &f2, *poly = f1.n == 2 ? &f2 : &f1;
    q[0][0] = seg->x[0][0];
    q[0][1] = seg->x[0][1];
    q[1][0] = seg->x[1][0];
    q[1][1] = seg->x[1][1];
    m = clip_segment(q, poly);
  }
  if (m < 2) return 0;

  real dist[CVX_MAXCLIP], zmid[CVX_MAXCLIP], kq[CVX_MAXCLIP][2];
  int nk = 0;
  for (int i = 0; i < m; i++) {
    real z1 = feature_height(&f1, q[i]), z2 = feature_height(&f2, q[i]);
    real d = z2 - z1;
    if (!(d < margin)) continue;
    kq[nk][0] = q[i][0];
    kq[nk][1] = q[i][1];
    dist[nk] = d;
    zmid[nk] = (z1 + z2) / 2;
    nk++;
  }
  int sel[CVX_MAXMANIFOLD];
  int k = reduce_points((const real(*)[2])kq, dist, nk, sel);
  for (int j = 0; j < k; j++) {
    int i = sel[j];
    con[j].dist = dist[i];
    for (int r = 0; r < 9; r++) con[j].frame[r] = first->frame[r];
    rl_v3_copy(con[j].pos, c);
    rl_v3_addscl(con[j].pos, first->frame + 3, kq[i][0]);
    rl_v3_addscl(con[j].pos, first->frame + 6, kq[i][1]);
    rl_v3_addscl(con[j].pos, n, zmid[i]);
  }
  return k;
}

/* ================================================================ MuJoCo's multiccd */

/* the pose (pos, mat) of a geom turned by R about the point o: mat' = R·mat, pos' = o − R·(o − pos) */
static void turn_about(const real R[9], const real o[3], const real pos[3], const real mat[9], real pos2[3],
                       real mat2[9]) {
  real rel[3], t[3];
  rl_m3_mul(mat2, R, mat);
  rl_v3_sub(rel, o, pos);
  rl_m3_mulv(t, R, rel);
  rl_v3_sub(pos2, o, t);
}

/* 1 if con[n] lies farther than tol from every contact con[0..n) */
static int distinct_point(const rl_contact *con, int n, real tol) {
  for (int i = 0; i < n; i++) {
    real d[3];
    rl_v3_sub(d, con[i].pos, con[n].pos);
    if (rl_v3_norm(d) <= tol) return 0;
  }
  return 1;
}

/* MuJoCo 2.2.2's multi-point convex collision (the multiccd flag) after the first MPR contact con[0] of a pair
   where neither geom is a sphere or an ellipsoid: for each tangent t of con[0]'s frame and each angle ±1e-3 rad,
   g1 is turned by R(t, θ) and g2 by R(t, θ)ᵀ about con[0].pos and MPR runs again; a contact farther than
   1e-3·min(rbound₁, rbound₂) from every contact found so far is kept, with con[0]'s distance.  Returns the count
   (1 to 5). */
static int multiccd_points(const rl_geomview *g1, const rl_geomview *g2, real margin, int iterations, real tol,
                           rl_contact *con) {
  const real angle = (real)1e-3, near = (real)1e-3 * rl_fmin(g1->rbound, g2->rbound);
  int n = 1;
  for (int a = 0; a < 2; a++)
    for (int s = 0; s < 2; s++) {
      real q[4], R[9], RT[9], p1[3], m1[9], p2[3], m2[9], depth, dir[3], pos[3];
      rl_q_from_axis_angle(q, con[0].frame + 3 + 3 * a, s ? angle : -angle);
      rl_q_to_mat(R, q);
      rl_m3_transpose(RT, R);
      turn_about(R, con[0].pos, g1->pos, g1->mat, p1, m1);
      turn_about(RT, con[0].pos, g2->pos, g2->mat, p2, m2);
      rl_geomview v1 = *g1, v2 = *g2;
      v1.pos = p1, v1.mat = m1, v2.pos = p2, v2.mat = m2;
      if (!mpr_penetration(&v1, &v2, margin, iterations, tol, &depth, dir, pos)) continue;
      rl_contact *c = con + n;
      rl_v3_copy(c->pos, pos);
      rl_v3_copy(c->frame, dir);
      rl_fix_normal(&v1, &v2, pos, c->frame);
      c->frame[3] = c->frame[4] = c->frame[5] = 0;
      rl_make_frame(c->frame);
      c->dist = con[0].dist;
      if (distinct_point(con, n, near)) n++;
    }
  return n;
}

/* 1 if MuJoCo's multiccd looks for more points on this pair (neither geom a sphere nor an ellipsoid) */
static int multiccd_applies(int mode, const rl_geomview *g1, const rl_geomview *g2) {
  return (mode & RL_COLL_MULTICCD) && g1->type != RL_GEOM_SPHERE && g1->type != RL_GEOM_ELLIPSOID &&
         g2->type != RL_GEOM_SPHERE && g2->type != RL_GEOM_ELLIPSOID;
}

/* ================================================================ the pair function */

/* General convex pair (mjc_Convex): MPR on the margin-inflated geoms, dist = margin − depth,
 * normal g1 → g2 corrected by mjc_fixNormal, frame completed; in RL_COLL_MANIFOLD mode flat features
 * become a clipped manifold (build_manifold); otherwise, under MuJoCo's multiccd flag, up to four more points
 * from turned copies of the pair (multiccd_points). */
int rl_collide_convex(const rl_geomview *g1, const rl_geomview *g2, real margin, int mode, int mpr_iterations,
                      real mpr_tolerance, rl_contact *con) {
  if (!view_finite(g1) || !view_finite(g2) || !rl_isfinite(margin) || !rl_isfinite(mpr_tolerance)) return 0;
  real depth, dir[3], pos[3];
  if (!mpr_penetration(g1, g2, margin, mpr_iterations, mpr_tolerance, &depth, dir, pos)) return 0;
  rl_contact first;
  first.dist = margin - depth;
  rl_v3_copy(first.pos, pos);
  rl_v3_copy(first.frame, dir);
  rl_fix_normal(g1, g2, pos, first.frame);
  first.frame[3] = first.frame[4] = first.frame[5] = 0; /* tangent undefined: mju_makeFrame's default */
  rl_make_frame(first.frame);
  if (!rl_isfinite(first.dist)) return 0;

  if ((mode & 0xff) == RL_COLL_MANIFOLD && has_flat_features(g1->type) && has_flat_features(g2->type)) {
    int k = build_manifold(g1, g2, margin, &first, con);
    if (k > 0) return k;
  }
  con[0].dist = first.dist;
  rl_v3_copy(con[0].pos, first.pos);
  for (int i = 0; i < 9; i++) con[0].frame[i] = first.frame[i];
  return multiccd_applies(mode, g1, g2) ? multiccd_points(g1, g2, margin, mpr_iterations, mpr_tolerance, con) : 1;
}
