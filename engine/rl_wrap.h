/* rl_wrap.h — the wrap of a spatial tendon's straight segment around a sphere or cylinder as MuJoCo 2.2.2
 * computes it (side sites, the inside wrap, a cylinder's helix), header-only so that the generalized-coordinate
 * tendons (tendon.c) and the AVBD step (also compiled by nvcc in engine/cuda/) share one source. */
#ifndef RL_WRAP_H
#define RL_WRAP_H
#include "rl_engine.h"
#include "rl_math.h"

#define RL_WRAP_MINVAL ((real)1e-15) /* MuJoCo's mjMINVAL */

/* ---------------------------------------------------------------- 2D helpers of the wrap */

/* a ← a/‖a‖ in n = 2 or 3 dimensions (below mjMINVAL: e_0), returns ‖a‖ (MuJoCo's mju_normalize) */
RL_HD real rl_wrap_normalize(real *a, int n) {
  real s = 0;
  for (int i = 0; i < n; i++) s += a[i] * a[i];
  real nrm = rl_sqrt(s);
  if (nrm < RL_WRAP_MINVAL) {
    a[0] = 1;
    for (int i = 1; i < n; i++) a[i] = 0;
  } else {
    real inv = 1 / nrm;
    for (int i = 0; i < n; i++) a[i] *= inv;
  }
  return nrm;
}

/* 1 if the 2D segments p1–p2 and p3–p4 intersect: p1 + a·(p2 − p1) = p3 + b·(p4 − p3) with a, b ∈ [0, 1]
   (parallel segments, |det| < mjMINVAL, never intersect) */
RL_HD int rl_wrap_segments_cross(const real p1[2], const real p2[2], const real p3[2], const real p4[2]) {
  real det = (p4[1] - p3[1]) * (p2[0] - p1[0]) - (p4[0] - p3[0]) * (p2[1] - p1[1]);
  if (rl_fabs(det) < RL_WRAP_MINVAL) return 0;
  real a = ((p4[0] - p3[0]) * (p1[1] - p3[1]) - (p4[1] - p3[1]) * (p1[0] - p3[0])) / det;
  real b = ((p2[0] - p1[0]) * (p1[1] - p3[1]) - (p2[1] - p1[1]) * (p1[0] - p3[0])) / det;
  return a >= 0 && a <= 1 && b >= 0 && b <= 1;
}

/* arc length r·θ from tangent point p0 to p1 on the circle of radius r: θ = acos(p̂0·p̂1) ∈ [0, π] (f32:
   atan2(|p̂0 × p̂1|, p̂0·p̂1), RL_STABLE_ANGLES), taken
   the long way (2π − θ) when the turn p0 → p1 runs against the winding `ccw` chose */
RL_HD real rl_wrap_arc(const real p0[2], const real p1[2], int ccw, real r) {
  real a[2] = {p0[0], p0[1]}, b[2] = {p1[0], p1[1]};
  rl_wrap_normalize(a, 2);
  rl_wrap_normalize(b, 2);
  real c = a[0] * b[0] + a[1] * b[1], sn = rl_fabs(a[0] * b[1] - a[1] * b[0]);
  real angle = RL_STABLE_ANGLES ? rl_atan2(sn, c) : rl_acos(c > 1 ? 1 : (c < -1 ? -1 : c));
  real cross = p0[1] * p1[0] - p0[0] * p1[1];
  if ((cross > 0 && ccw) || (cross < 0 && !ccw)) angle = 2 * RL_PI - angle;
  return r * angle;
}

/* Wrap of the 2D segment d0–d1 around the circle of radius r at the origin (sd: the side point mapped
   onto the circle, or NULL).  No wrap (−1) when an end is inside the circle, the ends coincide, or the
   segment clears the circle on the side sd allows.  Otherwise the two tangent-point pairs
     t0 = (d0·r² ± r·d0⊥·√(|d0|² − r²))/|d0|²,  t1 likewise for d1 with the opposite turn,
   are scored (with sd: closeness of the pair's mid direction to sd; without: the shorter chord), a pair
   whose tangent lines cross scores −10⁴, and the better pair is kept unless its tangent lines cross.
   Returns the arc length, the tangent points in pnt[4]. */
RL_HD real rl_wrap_circle(real pnt[4], const real d[4], const real *sd, real r) {
  real sq0 = d[0] * d[0] + d[1] * d[1], sq1 = d[2] * d[2] + d[3] * d[3], sqr = r * r;
  real dif[2] = {d[2] - d[0], d[3] - d[1]};
  if (sq0 < sqr || sq1 < sqr || r < RL_WRAP_MINVAL) return -1;
  real dd = dif[0] * dif[0] + dif[1] * dif[1];
  if (dd < RL_WRAP_MINVAL) return -1;
  /* nearest point of the segment to the centre */
  real a = -(dif[0] * d[0] + dif[1] * d[1]) / dd;
  a = a < 0 ? 0 : (a > 1 ? 1 : a);
  real near[2] = {a * dif[0] + d[0], a * dif[1] + d[1]};
  if (near[0] * near[0] + near[1] * near[1] > sqr && (!sd || sd[0] * near[0] + sd[1] * near[1] >= 0)) return -1;
  real sol[2][4], good[2];
  for (int i = 0; i < 2; i++) {
    real s0 = rl_sqrt(sq0 - sqr), s1 = rl_sqrt(sq1 - sqr);
    real sg = i == 0 ? 1 : -1;
    sol[i][0] = (d[0] * sqr + sg * r * d[1] * s0) / sq0;
    sol[i][1] = (d[1] * sqr - sg * r * d[0] * s0) / sq0;
    sol[i][2] = (d[2] * sqr - sg * r * d[3] * s1) / sq1;
    sol[i][3] = (d[3] * sqr + sg * r * d[2] * s1) / sq1;
    real t[2];
    if (sd) {
      t[0] = sol[i][0] + sol[i][2];
      t[1] = sol[i][1] + sol[i][3];
      rl_wrap_normalize(t, 2);
      good[i] = t[0] * sd[0] + t[1] * sd[1];
    } else {
      t[0] = sol[i][0] - sol[i][2];
      t[1] = sol[i][1] - sol[i][3];
      good[i] = -(t[0] * t[0] + t[1] * t[1]);
    }
    if (rl_wrap_segments_cross(d, sol[i], d + 2, sol[i] + 2)) good[i] = -10000;
  }
  int i = good[0] > good[1] ? 0 : 1;
  for (int k = 0; k < 4; k++) pnt[k] = sol[i][k];
  if (rl_wrap_segments_cross(d, pnt, d + 2, pnt + 2)) return -1;
  return rl_wrap_arc(sol[i], sol[i] + 2, i, r);
}

/* asin(1 − w) = π/2 − 2·asin(√(w/2)): near 1, where the inside wrap's root lies, z = 1 − w is resolved only
   to an ulp of 1 (6·10⁻⁸ in float, and f' ≈ −√(2/w) turns that into steps in f far above the tolerance), w to an
   ulp of itself */
RL_HD real rl_wrap_asin1m(real w) { return RL_PI / 2 - 2 * rl_asin(rl_sqrt(w / 2)); }

/* Wrap with the side point inside the circle: the path d0 → t → d1 through one point t on the circle
   (both tangent points equal), the stationary point of |d0 − t| + |t − d1|.  With A = r/|d0|, B = r/|d1| and
   G the angle d0-0-d1, z = sin of the half angle solves f(z) = asin(A z) + asin(B z) − 2 asin(z) + G = 0,
   by Newton from z = 1 − 10⁻⁷ (at most 20 steps to |f| ≤ 10⁻⁶, f' = A/√(1 − A²z²) + B/√(1 − B²z²) − 2/√(1 − z²)),
   carried in w = 1 − z (rl_wrap_asin1m; 1 − z² = w(2 − w)); t is d̂ rotated by asin(z) − asin(A z)
   (d = d0, or d1 when d0 × d1 ≤ 0).  No wrap (−1) when an end is inside the circle or the segment cuts it;
   a numerical failure leaves t at the mean direction.  Returns 0 (the arc has no length). */
RL_HD real rl_wrap_inside(real pnt[4], const real d[4], real r) {
  const int maxiter = 20;
  const real winit = (real)1e-7, tol = (real)1e-6;
  real len0 = rl_sqrt(d[0] * d[0] + d[1] * d[1]), len1 = rl_sqrt(d[2] * d[2] + d[3] * d[3]);
  real dif[2] = {d[2] - d[0], d[3] - d[1]}, dd = dif[0] * dif[0] + dif[1] * dif[1];
  if (len0 <= r || len1 <= r || r < RL_WRAP_MINVAL || len0 < RL_WRAP_MINVAL || len1 < RL_WRAP_MINVAL) return -1;
  if (dd > RL_WRAP_MINVAL) {
    real a = -(dif[0] * d[0] + dif[1] * d[1]) / dd;
    if (a > 0 && a < 1) {
      real t[2] = {d[0] + a * dif[0], d[1] + a * dif[1]};
      if (rl_sqrt(t[0] * t[0] + t[1] * t[1]) <= r) return -1;
    }
  }
  pnt[0] = (real)0.5 * (d[0] + d[2]);
  pnt[1] = (real)0.5 * (d[1] + d[3]);
  rl_wrap_normalize(pnt, 2);
  pnt[0] *= r;
  pnt[1] *= r;
  pnt[2] = pnt[0];
  pnt[3] = pnt[1];
  real A = r / len0, B = r / len1;
  real cosG = (len0 * len0 + len1 * len1 - dd) / (2 * len0 * len1);
  if (cosG < -1 + RL_WRAP_MINVAL) return -1;
  if (cosG > 1 - RL_WRAP_MINVAL) return 0;
  real G = rl_acos(cosG), w = winit, z = 1 - w;
  real f = rl_asin(A * z) + rl_asin(B * z) - 2 * rl_wrap_asin1m(w) + G;
  if (f > 0) return 0;
  int iter;
  for (iter = 0; iter < maxiter && rl_fabs(f) > tol; iter++) {
    real az = A * z, bz = B * z;
    real df = A / rl_fmax(RL_WRAP_MINVAL, rl_sqrt((1 - az) * (1 + az))) +
              B / rl_fmax(RL_WRAP_MINVAL, rl_sqrt((1 - bz) * (1 + bz))) - 2 / rl_fmax(RL_WRAP_MINVAL, rl_sqrt(w * (2 - w)));
    if (df > -RL_WRAP_MINVAL) return 0;
    real w1 = w + f / df; /* z1 = z − f/df */
    if (w1 < w) return 0;
    w = w1;
    z = 1 - w;
    f = rl_asin(A * z) + rl_asin(B * z) - 2 * rl_wrap_asin1m(w) + G;
    if (f > tol) return 0;
  }
  if (iter >= maxiter) return 0;
  real v[2], ang;
  if (d[0] * d[3] - d[1] * d[2] > 0) {
    v[0] = d[0];
    v[1] = d[1];
    ang = rl_wrap_asin1m(w) - rl_asin(A * z);
  } else {
    v[0] = d[2];
    v[1] = d[3];
    ang = rl_wrap_asin1m(w) - rl_asin(B * z);
  }
  rl_wrap_normalize(v, 2);
  pnt[0] = r * (rl_cos(ang) * v[0] - rl_sin(ang) * v[1]);
  pnt[1] = r * (rl_sin(ang) * v[0] + rl_cos(ang) * v[1]);
  pnt[2] = pnt[0];
  pnt[3] = pnt[1];
  return 0;
}

/* ---------------------------------------------------------------- 3D wrap */

/* v_local = Rᵀ·(x − pos) */
RL_HD void rl_wrap_to_local(real out[3], const real x[3], const real pos[3], const real R[9]) {
  real t[3];
  rl_v3_sub(t, x, pos);
  rl_m3_tmulv(out, R, t);
}

/* ‖a − b‖ */
RL_HD real rl_wrap_dist(const real a[3], const real b[3]) {
  real t[3];
  rl_v3_sub(t, a, b);
  return rl_v3_norm(t);
}

/* The 2D frame of the wrap in the geom's local frame: for a sphere, axis0 = p̂0 and axis1 in the plane of
   p0, p1 and the centre (normal p0 × p1; for parallel p0, p1 the normal of p0 and a vector with a 0 at p0's
   largest component and 1 elsewhere); for a cylinder, the local x and y axes. */
RL_HD void rl_wrap_frame(real axis[2][3], const real p0[3], const real p1[3], int type) {
  real normal[3];
  if (type == RL_WRAP_SPHERE) {
    rl_v3_copy(axis[0], p0);
    rl_wrap_normalize(axis[0], 3);
    rl_v3_cross(normal, p0, p1);
    if (rl_wrap_normalize(normal, 3) < RL_WRAP_MINVAL) {
      int i = 0;
      const real *a = axis[0];
      if (rl_fabs(a[1]) > rl_fabs(a[0]) && rl_fabs(a[1]) > rl_fabs(a[2])) i = 1;
      if (rl_fabs(a[2]) > rl_fabs(a[0]) && rl_fabs(a[2]) > rl_fabs(a[1])) i = 2;
      axis[1][0] = axis[1][1] = axis[1][2] = 1;
      axis[1][i] = 0;
      rl_v3_cross(normal, axis[0], axis[1]);
      rl_wrap_normalize(normal, 3);
    }
    rl_v3_cross(axis[1], normal, axis[0]);
    rl_wrap_normalize(axis[1], 3);
  } else {
    for (int k = 0; k < 3; k++) axis[0][k] = axis[1][k] = 0;
    axis[0][0] = 1;
    axis[1][1] = 1;
  }
}

/* Wrap of the straight segment x0–x1 around a sphere or cylinder (pose xpos, xmat, radius r; side: the side
   site's position or NULL).  The ends go to the geom frame and onto the wrap's 2D frame; a side point inside
   the circle asks for rl_wrap_inside, else rl_wrap_circle; the tangent points come back in 3D (a cylinder's get
   heights interpolated along the developed path, z_t = z0 + (z1 − z0)·s/S, and its arc becomes the helix
   √(arc² + Δz²)) and then to the world.  Returns the wrapped arc length, the two tangent points in wpnt[6],
   or −1 for no wrap. */
RL_HD real rl_wrap_geom(real wpnt[6], const real x0[3], const real x1[3], const real xpos[3], const real xmat[9], real r,
                      int type, const real *side) {
  real p[2][3], axis[2][3], d[4], sd[2], pnt[4] = {0, 0, 0, 0}, res[6]; /* pnt: set by either wrap (GCC -O3 cannot see it) */
  rl_wrap_to_local(p[0], x0, xpos, xmat);
  rl_wrap_to_local(p[1], x1, xpos, xmat);
  if (rl_sqrt(rl_v3_dot(p[0], p[0])) < RL_WRAP_MINVAL || rl_sqrt(rl_v3_dot(p[1], p[1])) < RL_WRAP_MINVAL) return -1;
  rl_wrap_frame(axis, p[0], p[1], type);
  d[0] = rl_v3_dot(p[0], axis[0]);
  d[1] = rl_v3_dot(p[0], axis[1]);
  d[2] = rl_v3_dot(p[1], axis[0]);
  d[3] = rl_v3_dot(p[1], axis[1]);
  if (side) {
    real s[3];
    rl_wrap_to_local(s, side, xpos, xmat);
    sd[0] = rl_v3_dot(s, axis[0]);
    sd[1] = rl_v3_dot(s, axis[1]);
    if (rl_sqrt(sd[0] * sd[0] + sd[1] * sd[1]) >= r) {
      rl_wrap_normalize(sd, 2);
      sd[0] *= r;
      sd[1] *= r;
    } else {
      sd[0] = sd[1] = 0;
    }
  }
  real wlen = side && sd[0] == 0 && sd[1] == 0 ? rl_wrap_inside(pnt, d, r) : rl_wrap_circle(pnt, d, side ? sd : NULL, r);
  if (wlen < 0) return -1;
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 3; k++) res[3 * i + k] = axis[0][k] * pnt[2 * i] + axis[1][k] * pnt[2 * i + 1];
  if (type == RL_WRAP_CYLINDER) {
    real L0 = rl_sqrt((p[0][0] - res[0]) * (p[0][0] - res[0]) + (p[0][1] - res[1]) * (p[0][1] - res[1]));
    real L1 = rl_sqrt((p[1][0] - res[3]) * (p[1][0] - res[3]) + (p[1][1] - res[4]) * (p[1][1] - res[4]));
    res[2] = p[0][2] + (p[1][2] - p[0][2]) * L0 / (L0 + wlen + L1);
    res[5] = p[0][2] + (p[1][2] - p[0][2]) * (L0 + wlen) / (L0 + wlen + L1);
    real h = rl_fabs(res[5] - res[2]);
    wlen = rl_sqrt(wlen * wlen + h * h);
  }
  for (int i = 0; i < 2; i++) {
    rl_m3_mulv(wpnt + 3 * i, xmat, res + 3 * i);
    rl_v3_add(wpnt + 3 * i, wpnt + 3 * i, xpos);
  }
  return wlen;
}

#endif
