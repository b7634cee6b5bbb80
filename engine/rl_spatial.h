/* rl_spatial.h — 6-D spatial algebra in MuJoCo's "com" convention.
 *
 * Motion vectors are [ω; v] (v = velocity of the reference point), force vectors
 * are [n; f] (n = torque about the reference point).  A body's spatial inertia about
 * the reference point is stored in 10 numbers:
 *   [Ixx Iyy Izz Ixy Ixz Iyz | h = m·p (3) | m],  p = COM − reference point,
 * with I the rotational inertia about the reference point.  Shared with engine/cuda/.
 */
#ifndef RL_SPATIAL_H
#define RL_SPATIAL_H

#include "rl_math.h"

/* res = v ×ₘ u = [ω×ω_u ; ω×v_u + v×ω_u]   (motion cross motion) */
RL_HD void rl_sp_cross_motion(real res[6], const real v[6], const real u[6]) {
  real a[3], b[3];
  rl_v3_cross(res, v, u);
  rl_v3_cross(a, v, u + 3);
  rl_v3_cross(b, v + 3, u);
  rl_v3_add(res + 3, a, b);
}

/* res = v ×* f = [ω×n + v×f ; ω×f]   (motion cross force) */
RL_HD void rl_sp_cross_force(real res[6], const real v[6], const real f[6]) {
  real a[3], b[3];
  rl_v3_cross(a, v, f);
  rl_v3_cross(b, v + 3, f + 3);
  rl_v3_add(res, a, b);
  rl_v3_cross(res + 3, v, f + 3);
}

/* res = I·v:  n = I_rot·ω + h×v_lin ,  f = m·v_lin − h×ω */
RL_HD void rl_sp_inert_mul(real res[6], const real I[10], const real v[6]) {
  const real *w = v, *u = v + 3, *h = I + 6;
  real m = I[9];
  res[0] = I[0] * w[0] + I[3] * w[1] + I[4] * w[2] + h[1] * u[2] - h[2] * u[1];
  res[1] = I[3] * w[0] + I[1] * w[1] + I[5] * w[2] + h[2] * u[0] - h[0] * u[2];
  res[2] = I[4] * w[0] + I[5] * w[1] + I[2] * w[2] + h[0] * u[1] - h[1] * u[0];
  res[3] = m * u[0] - (h[1] * w[2] - h[2] * w[1]);
  res[4] = m * u[1] - (h[2] * w[0] - h[0] * w[2]);
  res[5] = m * u[2] - (h[0] * w[1] - h[1] * w[0]);
}

/* res = v ×* (I·v), the velocity-product (gyroscopic) force, with I·v = (n, f), f = m·u − h×ω:
   [ω×n + u×f ; ω×f] = [ω×n − u×(h×ω) ; m·(ω×u) − ω×(h×ω)].
   u×f = u×(m·u − h×ω) = −u×(h×ω) is evaluated without the m·u×u term (exactly zero, but not in rounding:
   for a body spinning at its own COM it would dominate the result), and ω×f as m·(ω×u) − ω×(h×ω), the
   mass applied after the cross product as in I·a (f = m·a − h×α): for a free body (h = 0) the m·(v×ω)
   of its bias acceleration and this m·(ω×v) then cancel exactly in rounding. */
RL_HD void rl_sp_inert_cross(real res[6], const real I[10], const real v[6]) {
  real f[6], hw[3], a[3], b[3], wu[3], whw[3];
  real m = I[9];
  rl_sp_inert_mul(f, I, v);
  rl_v3_cross(hw, I + 6, v); /* h×ω */
  rl_v3_cross(a, v, f);      /* ω×n */
  rl_v3_cross(b, v + 3, hw); /* u×(h×ω) */
  rl_v3_sub(res, a, b);
  rl_v3_cross(wu, v, v + 3); /* ω×u */
  rl_v3_cross(whw, v, hw);   /* ω×(h×ω) */
  for (int k = 0; k < 3; k++) res[3 + k] = m * wu[k] - whw[k];
}

/* A body's rotational inertia about its own COM in world axes, R·diag(J)·Rᵀ, as 6 numbers (xx yy zz xy xz yz) */
RL_HD void rl_sp_inert_rot(real res[6], const real J[3], const real R[9]) {
  real T[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) T[3 * i + j] = R[3 * i + j] * J[j]; /* R·diag(J) */
  real I[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      I[3 * i + j] = T[3 * i] * R[3 * j] + T[3 * i + 1] * R[3 * j + 1] + T[3 * i + 2] * R[3 * j + 2];
  res[0] = I[0];
  res[1] = I[4];
  res[2] = I[8];
  res[3] = I[1];
  res[4] = I[2];
  res[5] = I[5];
}

/* The 10-number inertia about a point at offset −d from the COM (d = COM − point) from the rotational
   inertia about the COM (rl_sp_inert_rot):  I_rot = Ic + m(‖d‖²E − d dᵀ),  h = m·d */
RL_HD void rl_sp_inert_offset(real res[10], const real Ic[6], const real d[3], real m) {
  real dd = rl_v3_dot(d, d);
  res[0] = Ic[0] + m * (dd - d[0] * d[0]);
  res[1] = Ic[1] + m * (dd - d[1] * d[1]);
  res[2] = Ic[2] + m * (dd - d[2] * d[2]);
  res[3] = Ic[3] - m * d[0] * d[1];
  res[4] = Ic[4] - m * d[0] * d[2];
  res[5] = Ic[5] - m * d[1] * d[2];
  res[6] = m * d[0];
  res[7] = m * d[1];
  res[8] = m * d[2];
  res[9] = m;
}

/* Spatial inertia about a point at offset −d from the COM (d = COM − point):
   I_rot = R·diag(J)·Rᵀ + m(‖d‖²E − d dᵀ),  h = m·d */
RL_HD void rl_sp_inert_com(real res[10], const real J[3], const real R[9], const real d[3], real m) {
  real Ic[6];
  rl_sp_inert_rot(Ic, J, R);
  rl_sp_inert_offset(res, Ic, d, m);
}

/* Motion subspace of a dof: rotation about `axis` through a point at `offset` = ref − anchor
   gives [axis ; axis × offset]; translation (offset NULL) gives [0 ; axis]. */
RL_HD void rl_sp_dof(real res[6], const real axis[3], const real *offset) {
  if (offset) {
    rl_v3_copy(res, axis);
    rl_v3_cross(res + 3, axis, offset);
  } else {
    rl_v3_zero(res);
    rl_v3_copy(res + 3, axis);
  }
}

/* res = Σ_k cdof_k·x_k for n consecutive dofs (6×n columns stored as n rows of 6). */
RL_HD void rl_sp_mul_dof(real res[6], const real *cdof, const real *x, int n) {
  for (int i = 0; i < 6; i++) res[i] = 0;
  for (int k = 0; k < n; k++)
    for (int i = 0; i < 6; i++) res[i] += cdof[6 * k + i] * x[k];
}

/* a·b for 6-vectors */
RL_HD real rl_sp_dot(const real a[6], const real b[6]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

/* I6 += the 6×6 of a 10-number inertia: [[I_rot, [h]×], [[h]×ᵀ, m·E]] (row-major) */
RL_HD void rl_sp_inert_add6(real *I6, const real c[10]) {
  const real *h = c + 6;
  real R[9] = {c[0], c[3], c[4], c[3], c[1], c[5], c[4], c[5], c[2]};
  real X[9] = {0, -h[2], h[1], h[2], 0, -h[0], -h[1], h[0], 0}; /* [h]× */
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      I6[6 * i + j] += R[3 * i + j];
      I6[6 * i + 3 + j] += X[3 * i + j];
      I6[6 * (3 + i) + j] += X[3 * j + i];
    }
  for (int i = 3; i < 6; i++) I6[7 * i] += c[9];
}

/* I6 += w·u·vᵀ (6×6, row-major) */
RL_HD void rl_sp_outer_add(real *I6, real w, const real u[6], const real v[6]) {
  for (int i = 0; i < 6; i++) {
    real wu = w * u[i];
    for (int j = 0; j < 6; j++) I6[6 * i + j] += wu * v[j];
  }
}

#endif
