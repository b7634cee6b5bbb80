/* rl_math.h — scalar 3-D math shared by the CPU engine and engine/cuda/.
 *
 * Header-only, no allocation, no globals: every function is RL_HD (static inline,
 * __host__ __device__ under nvcc).  Conventions (the same as MuJoCo's, so imported
 * data needs no conversion):
 *   vec3  real[3]
 *   mat3  real[9], row-major
 *   quat  real[4] = (w, x, y, z), Hamilton product, active rotation v' = q v q*
 * Output arguments come first and may not alias inputs unless stated.
 */
#ifndef RL_MATH_H
#define RL_MATH_H

#include "rl_prec.h"

/* r = a */
RL_HD void rl_v3_copy(real r[3], const real a[3]) {
  r[0] = a[0];
  r[1] = a[1];
  r[2] = a[2];
}
/* r = 0 */
RL_HD void rl_v3_zero(real r[3]) { r[0] = r[1] = r[2] = 0; }
/* r = a + b  (aliasing allowed) */
RL_HD void rl_v3_add(real r[3], const real a[3], const real b[3]) {
  r[0] = a[0] + b[0];
  r[1] = a[1] + b[1];
  r[2] = a[2] + b[2];
}
/* r = a − b  (aliasing allowed) */
RL_HD void rl_v3_sub(real r[3], const real a[3], const real b[3]) {
  r[0] = a[0] - b[0];
  r[1] = a[1] - b[1];
  r[2] = a[2] - b[2];
}
/* r = s·a  (aliasing allowed) */
RL_HD void rl_v3_scale(real r[3], const real a[3], real s) {
  r[0] = a[0] * s;
  r[1] = a[1] * s;
  r[2] = a[2] * s;
}
/* r += s·a */
RL_HD void rl_v3_addscl(real r[3], const real a[3], real s) {
  r[0] += a[0] * s;
  r[1] += a[1] * s;
  r[2] += a[2] * s;
}
/* a·b */
RL_HD real rl_v3_dot(const real a[3], const real b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
/* ‖a‖ */
RL_HD real rl_v3_norm(const real a[3]) { return rl_sqrt(rl_v3_dot(a, a)); }
/* r = a × b  (r must not alias a or b) */
RL_HD void rl_v3_cross(real r[3], const real a[3], const real b[3]) {
  r[0] = a[1] * b[2] - a[2] * b[1];
  r[1] = a[2] * b[0] - a[0] * b[2];
  r[2] = a[0] * b[1] - a[1] * b[0];
}
/* a ← a/‖a‖, returns ‖a‖; a zero vector becomes (1,0,0) */
RL_HD real rl_v3_normalize(real a[3]) {
  real n = rl_v3_norm(a);
  if (n < RL_TINY) {
    a[0] = 1;
    a[1] = a[2] = 0;
    return 0;
  }
  rl_v3_scale(a, a, 1 / n);
  return n;
}

/* r = A·v  (A row-major 3×3) */
RL_HD void rl_m3_mulv(real r[3], const real A[9], const real v[3]) {
  r[0] = A[0] * v[0] + A[1] * v[1] + A[2] * v[2];
  r[1] = A[3] * v[0] + A[4] * v[1] + A[5] * v[2];
  r[2] = A[6] * v[0] + A[7] * v[1] + A[8] * v[2];
}
/* r = Aᵀ·v */
RL_HD void rl_m3_tmulv(real r[3], const real A[9], const real v[3]) {
  r[0] = A[0] * v[0] + A[3] * v[1] + A[6] * v[2];
  r[1] = A[1] * v[0] + A[4] * v[1] + A[7] * v[2];
  r[2] = A[2] * v[0] + A[5] * v[1] + A[8] * v[2];
}
/* R = A·B */
RL_HD void rl_m3_mul(real R[9], const real A[9], const real B[9]) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) R[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}
/* R = Aᵀ */
RL_HD void rl_m3_transpose(real R[9], const real A[9]) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) R[3 * i + j] = A[3 * j + i];
}
/* R = [a]×, the cross-product (hat) matrix: [a]× v = a × v */
RL_HD void rl_m3_hat(real R[9], const real a[3]) {
  R[0] = 0;
  R[1] = -a[2];
  R[2] = a[1];
  R[3] = a[2];
  R[4] = 0;
  R[5] = -a[0];
  R[6] = -a[1];
  R[7] = a[0];
  R[8] = 0;
}
/* R = I */
RL_HD void rl_m3_identity(real R[9]) {
  for (int i = 0; i < 9; i++) R[i] = (i % 4 == 0) ? 1 : 0;
}

/* q = identity */
RL_HD void rl_q_identity(real q[4]) {
  q[0] = 1;
  q[1] = q[2] = q[3] = 0;
}
RL_HD void rl_q_copy(real r[4], const real q[4]) {
  r[0] = q[0];
  r[1] = q[1];
  r[2] = q[2];
  r[3] = q[3];
}
/* q ← q/‖q‖, returns ‖q‖; a zero quaternion becomes the identity */
RL_HD real rl_q_normalize(real q[4]) {
  real n = rl_sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (n < RL_TINY) {
    rl_q_identity(q);
    return 0;
  }
  real s = 1 / n;
  q[0] *= s;
  q[1] *= s;
  q[2] *= s;
  q[3] *= s;
  return n;
}
/* r = a ⊗ b (Hamilton product; r may alias a or b) */
RL_HD void rl_q_mul(real r[4], const real a[4], const real b[4]) {
  real t0 = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  real t1 = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  real t2 = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  real t3 = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
  r[0] = t0;
  r[1] = t1;
  r[2] = t2;
  r[3] = t3;
}
/* r = q* (conjugate = inverse for unit q) */
RL_HD void rl_q_conj(real r[4], const real q[4]) {
  r[0] = q[0];
  r[1] = -q[1];
  r[2] = -q[2];
  r[3] = -q[3];
}
/* r = R(q)·v = v + 2w(u×v) + 2u×(u×v), u = vector part  (r may not alias v) */
RL_HD void rl_q_rotate(real r[3], const real q[4], const real v[3]) {
  const real *u = q + 1;
  real t[3], s[3];
  rl_v3_cross(t, u, v);
  rl_v3_scale(t, t, 2);
  rl_v3_cross(s, u, t);
  r[0] = v[0] + q[0] * t[0] + s[0];
  r[1] = v[1] + q[0] * t[1] + s[1];
  r[2] = v[2] + q[0] * t[2] + s[2];
}
/* R = rotation matrix of unit q (row-major) */
RL_HD void rl_q_to_mat(real R[9], const real q[4]) {
  real w = q[0], x = q[1], y = q[2], z = q[3];
  real xx = x * x, yy = y * y, zz = z * z, ww = w * w;
  real xy = x * y, xz = x * z, yz = y * z, wx = w * x, wy = w * y, wz = w * z;
  R[0] = ww + xx - yy - zz;
  R[1] = 2 * (xy - wz);
  R[2] = 2 * (xz + wy);
  R[3] = 2 * (xy + wz);
  R[4] = ww - xx + yy - zz;
  R[5] = 2 * (yz - wx);
  R[6] = 2 * (xz - wy);
  R[7] = 2 * (yz + wx);
  R[8] = ww - xx - yy + zz;
}
/* Pose of a frame attached to a body (x_b, q_b, R_b) at local (pos, quat) (mj_local2Global):
   x = x_b + R_b·pos ,  R = R(q_b ⊗ quat);  R_b·pos into rel unless NULL.
   f64 does not renormalize the product of the two unit quaternions (MuJoCo does not: its frames are then MuJoCo's
   to the bit); f32 does, the float arithmetic its accuracy bars were measured with. */
RL_HD void rl_frame_to_global(real xpos[3], real xmat[9], const real bxpos[3], const real bxquat[4],
                              const real bxmat[9], const real pos[3], const real quat[4], real *rel) {
  real t[3], q[4];
  rl_m3_mulv(t, bxmat, pos);
  rl_v3_add(xpos, bxpos, t);
  if (rel) rl_v3_copy(rel, t);
  rl_q_mul(q, bxquat, quat);
  if (RL_LOCAL_FRAMES) rl_q_normalize(q);
  rl_q_to_mat(xmat, q);
}
/* q = (cos(θ/2), sin(θ/2)·axis) for a unit axis */
RL_HD void rl_q_from_axis_angle(real q[4], const real axis[3], real angle) {
  real s = rl_sin(angle / 2);
  q[0] = rl_cos(angle / 2);
  q[1] = axis[0] * s;
  q[2] = axis[1] * s;
  q[3] = axis[2] * s;
}

/* Σ a_i·b_i (n terms) by error-free transformations in the working precision (Ogita, Rump and Oishi's Dot2):
   each product split exactly as p + e (p = a·b rounded, e = fma(a, b, −p)), the p summed with Knuth's TwoSum
   (s = x + y, err = (x − (s − z)) + (y − z), z = s − x: s + err = x + y exactly) and every error term carried
   beside the sum.  The result is as accurate as the plain sum evaluated in twice the precision, then rounded once:
   relative error ≤ ε + (n·ε)²·Σ|a_i·b_i|/|Σ a_i·b_i|, where the plain sum's is n·ε·Σ|a_i·b_i|/|Σ a_i·b_i|. */
RL_HD real rl_dot2(const real *a, const real *b, int n) {
  real s = 0, c = 0;
  for (int i = 0; i < n; i++) {
    real p = a[i] * b[i], e = rl_fma(a[i], b[i], -p);
    real t = s + p, z = t - s;
    c += (s - (t - z)) + (p - z) + e;
    s = t;
  }
  return s + c;
}

#endif
