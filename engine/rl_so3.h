/* rl_so3.h — SO(3) exponential and logarithm maps, their Jacobians, and the
 * quaternion ⊞/⊟ operators built on them.
 *
 * Header-only, no allocation, no globals, every function RL_HD (see rl_prec.h);
 * conventions as in rl_math.h (quat = (w,x,y,z), Hamilton product, active
 * rotation, mat3 row-major).  Output arguments come first and may not alias
 * inputs unless stated.
 *
 *   Exp(w)   rotation by the angle θ = ‖w‖ about w/θ, as a unit quaternion or matrix
 *   Log(q)   its inverse, the shortest rotation vector: θ ∈ [0, π]
 *   Jr(w)    right Jacobian:  Exp(w + δ) ≈ Exp(w) ⊗ Exp(Jr(w) δ)
 *   Jl(w)    left Jacobian:   Exp(w + δ) ≈ Exp(Jl(w) δ) ⊗ Exp(w),   Jl(w) = Jr(−w) = R(w) Jr(w)
 *   Jr⁻¹, Jl⁻¹  the inverses:   Log(Exp(w) ⊗ Exp(δ)) ≈ w + Jr⁻¹(w) δ,
 *                               Log(Exp(δ) ⊗ Exp(w)) ≈ w + Jl⁻¹(w) δ   (‖w‖ < π)
 *
 * Accuracy: below RL_SMALL_ANGLE every θ-dependent coefficient is a Taylor series
 * (truncation below round-off for both precisions: the first dropped term is
 * O(θ⁴) relative, < 1e-16 in f64 and < 1e-8 in f32); above it the coefficients
 * use cancellation-free forms (1 − cosθ = 2 sin²(θ/2), cot(θ/2) instead of
 * (1 + cosθ)/sinθ).  The one remaining cancellation, θ − sinθ in the Jr/Jl
 * coefficient, only multiplies [w]×² (size θ²), so the matrix stays accurate to
 * a few ulps in absolute terms.  Log uses atan2, never acos, so it is stable at
 * both 0 and π.  The angle threshold is compared as θ² so the small-angle path
 * needs no square root.
 */
#ifndef RL_SO3_H
#define RL_SO3_H

#include "rl_math.h"

#define RL_SO3_SMALL2_ (RL_SMALL_ANGLE * RL_SMALL_ANGLE)

/* M = I + a·[w]× + b·[w]×²  (helper; [w]×² = w wᵀ − ‖w‖² I, so the diagonal is
 * written 1 − b(w_j² + w_k²), which keeps it exact for small w) */
RL_HD void rl_so3_ipoly(real M[9], const real w[3], real a, real b) {
  real xx = w[0] * w[0], yy = w[1] * w[1], zz = w[2] * w[2];
  real bxy = b * w[0] * w[1], bxz = b * w[0] * w[2], byz = b * w[1] * w[2];
  real ax = a * w[0], ay = a * w[1], az = a * w[2];
  M[0] = 1 - b * (yy + zz);
  M[1] = bxy - az;
  M[2] = bxz + ay;
  M[3] = bxy + az;
  M[4] = 1 - b * (xx + zz);
  M[5] = byz - ax;
  M[6] = bxz - ay;
  M[7] = byz + ax;
  M[8] = 1 - b * (xx + yy);
}

/* Exp(w) = (cos(θ/2), sin(θ/2)/θ · w), θ = ‖w‖;
 * θ < RL_SMALL_ANGLE: cos(θ/2) ≈ 1 − θ²/8 + θ⁴/384, sin(θ/2)/θ ≈ 1/2 − θ²/48 + θ⁴/3840 */
RL_HD void rl_so3_exp_quat(real q[4], const real w[3]) {
  real t2 = rl_v3_dot(w, w), c, k;
  if (t2 < RL_SO3_SMALL2_) {
    c = 1 - t2 * ((real)(1.0 / 8.0) - t2 * (real)(1.0 / 384.0));
    k = (real)0.5 - t2 * ((real)(1.0 / 48.0) - t2 * (real)(1.0 / 3840.0));
  } else {
    real t = rl_sqrt(t2);
    c = rl_cos(t / 2);
    k = rl_sin(t / 2) / t;
  }
  q[0] = c;
  q[1] = k * w[0];
  q[2] = k * w[1];
  q[3] = k * w[2];
}

/* Log(q) = 2·atan2(‖v‖, q₀)/‖v‖ · v  for q = (q₀, v), after q ← −q when q₀ < 0
 * (shortest rotation, θ ∈ [0, π]).  Invariant to the scale of q.
 * Small angle (x = ‖v‖/q₀ < RL_SMALL_ANGLE/2): 2·atan(x)/‖v‖ = (2/q₀)(1 − x²/3 + x⁴/5).
 * The zero quaternion (not a rotation) gives w = 0. */
RL_HD void rl_so3_log_quat(real w[3], const real q[4]) {
  real sg = q[0] < 0 ? (real)-1 : (real)1;
  real q0 = sg * q[0], v0 = sg * q[1], v1 = sg * q[2], v2 = sg * q[3];
  real s2 = v0 * v0 + v1 * v1 + v2 * v2;
  real s = rl_sqrt(s2), f;
  if (s < (RL_SMALL_ANGLE / 2) * q0) {
    real x2 = s2 / (q0 * q0);
    f = (2 / q0) * (1 - x2 * ((real)(1.0 / 3.0) - x2 * (real)(1.0 / 5.0)));
  } else if (s > 0) {
    f = 2 * rl_atan2(s, q0) / s;
  } else {
    f = 0;
  }
  w[0] = f * v0;
  w[1] = f * v1;
  w[2] = f * v2;
}

/* Rodrigues: Exp(w) = I + (sinθ/θ)[w]× + ((1 − cosθ)/θ²)[w]×², with 1 − cosθ = 2 sin²(θ/2);
 * θ < RL_SMALL_ANGLE: sinθ/θ ≈ 1 − θ²/6 + θ⁴/120, (1 − cosθ)/θ² ≈ 1/2 − θ²/24 + θ⁴/720 */
RL_HD void rl_so3_exp_mat(real R[9], const real w[3]) {
  real t2 = rl_v3_dot(w, w), a, b;
  if (t2 < RL_SO3_SMALL2_) {
    a = 1 - t2 * ((real)(1.0 / 6.0) - t2 * (real)(1.0 / 120.0));
    b = (real)0.5 - t2 * ((real)(1.0 / 24.0) - t2 * (real)(1.0 / 720.0));
  } else {
    real t = rl_sqrt(t2), sh = rl_sin(t / 2);
    a = rl_sin(t) / t;
    b = 2 * sh * sh / t2;
  }
  rl_so3_ipoly(R, w, a, b);
}

/* Shepperd's method: unit q with R(q) = R, q₀ ≥ 0.  Picks the largest of
 * 4q₀² = 1 + tr R and 4qᵢ² = 1 + 2Rᵢᵢ − tr R, takes its square root and gets the other
 * components from the off-diagonal sums/differences:
 *   4q₀qᵢ = R_kj − R_jk,  4qᵢq_j = R_ij + R_ji  ((i,j,k) cyclic).
 * The result is normalized, so R need only be close to a rotation. */
RL_HD void rl_q_from_mat(real q[4], const real R[9]) {
  real tr = R[0] + R[4] + R[8];
  real d21 = R[7] - R[5], d02 = R[2] - R[6], d10 = R[3] - R[1];
  real s01 = R[1] + R[3], s02 = R[2] + R[6], s12 = R[5] + R[7];
  if (tr >= R[0] && tr >= R[4] && tr >= R[8]) {
    real s = 2 * rl_sqrt(1 + tr); /* = 4 q0 */
    q[0] = s / 4;
    q[1] = d21 / s;
    q[2] = d02 / s;
    q[3] = d10 / s;
  } else if (R[0] >= R[4] && R[0] >= R[8]) {
    real s = 2 * rl_sqrt(1 + R[0] - R[4] - R[8]); /* = 4 q1 */
    q[0] = d21 / s;
    q[1] = s / 4;
    q[2] = s01 / s;
    q[3] = s02 / s;
  } else if (R[4] >= R[8]) {
    real s = 2 * rl_sqrt(1 - R[0] + R[4] - R[8]); /* = 4 q2 */
    q[0] = d02 / s;
    q[1] = s01 / s;
    q[2] = s / 4;
    q[3] = s12 / s;
  } else {
    real s = 2 * rl_sqrt(1 - R[0] - R[4] + R[8]); /* = 4 q3 */
    q[0] = d10 / s;
    q[1] = s02 / s;
    q[2] = s12 / s;
    q[3] = s / 4;
  }
  if (q[0] < 0) {
    q[0] = -q[0];
    q[1] = -q[1];
    q[2] = -q[2];
    q[3] = -q[3];
  }
  rl_q_normalize(q);
}

/* Log(R) = Log(q(R)): Shepperd's quaternion (stable for every angle, including
 * π where R − Rᵀ vanishes and the axis comes from the symmetric part), then the
 * atan2 quaternion log (stable near 0 and π).  θ ∈ [0, π]. */
RL_HD void rl_so3_log_mat(real w[3], const real R[9]) {
  real q[4];
  rl_q_from_mat(q, R);
  rl_so3_log_quat(w, q);
}

/* Coefficients shared by Jr and Jl (helper):
 *   a = (1 − cosθ)/θ² = 2 sin²(θ/2)/θ²   ≈ 1/2 − θ²/24 + θ⁴/720
 *   b = (θ − sinθ)/θ³                    ≈ 1/6 − θ²/120 + θ⁴/5040 */
RL_HD void rl_so3_jcoef(real *a, real *b, const real w[3]) {
  real t2 = rl_v3_dot(w, w);
  if (t2 < RL_SO3_SMALL2_) {
    *a = (real)0.5 - t2 * ((real)(1.0 / 24.0) - t2 * (real)(1.0 / 720.0));
    *b = (real)(1.0 / 6.0) - t2 * ((real)(1.0 / 120.0) - t2 * (real)(1.0 / 5040.0));
  } else {
    real t = rl_sqrt(t2), sh = rl_sin(t / 2);
    *a = 2 * sh * sh / t2;
    *b = (t - rl_sin(t)) / (t2 * t);
  }
}

/* Coefficient of [w]×² in Jr⁻¹ and Jl⁻¹ (helper):
 *   c = 1/θ² − (1 + cosθ)/(2θ sinθ) = (1 − (θ/2)·cot(θ/2))/θ²   ≈ 1/12 + θ²/720 + θ⁴/30240
 * The cot form has no 0/0 at θ = π (c(π) = 1/π²); c is singular only at θ = 2π. */
RL_HD real rl_so3_jinv_coef(const real w[3]) {
  real t2 = rl_v3_dot(w, w);
  if (t2 < RL_SO3_SMALL2_) return (real)(1.0 / 12.0) + t2 * ((real)(1.0 / 720.0) + t2 * (real)(1.0 / 30240.0));
  real t = rl_sqrt(t2);
  return (1 - (t / 2) * rl_cos(t / 2) / rl_sin(t / 2)) / t2;
}

/* Jr(w) = I − ((1 − cosθ)/θ²)[w]× + ((θ − sinθ)/θ³)[w]×²;  Exp(w + δ) ≈ Exp(w) ⊗ Exp(Jr δ) */
RL_HD void rl_so3_jr(real J[9], const real w[3]) {
  real a, b;
  rl_so3_jcoef(&a, &b, w);
  rl_so3_ipoly(J, w, -a, b);
}

/* Jl(w) = Jr(−w) = I + ((1 − cosθ)/θ²)[w]× + ((θ − sinθ)/θ³)[w]×²;  Exp(w + δ) ≈ Exp(Jl δ) ⊗ Exp(w) */
RL_HD void rl_so3_jl(real J[9], const real w[3]) {
  real a, b;
  rl_so3_jcoef(&a, &b, w);
  rl_so3_ipoly(J, w, a, b);
}

/* Jr⁻¹(w) = I + ½[w]× + (1/θ² − (1 + cosθ)/(2θ sinθ))[w]×²  (finite for θ < 2π) */
RL_HD void rl_so3_jr_inv(real J[9], const real w[3]) { rl_so3_ipoly(J, w, (real)0.5, rl_so3_jinv_coef(w)); }

/* Jl⁻¹(w) = Jr⁻¹(−w) = I − ½[w]× + (1/θ² − (1 + cosθ)/(2θ sinθ))[w]×²  (finite for θ < 2π) */
RL_HD void rl_so3_jl_inv(real J[9], const real w[3]) { rl_so3_ipoly(J, w, (real)-0.5, rl_so3_jinv_coef(w)); }

/* a ⊟ b = Log(a ⊗ b⁻¹) (world-frame difference, θ ∈ [0, π]; AVBD's θ = Log(q·q_p⁻¹)).
 * b⁻¹ is taken as b*; Log is scale-invariant, so a and b need only be near-unit. */
RL_HD void rl_q_boxminus(real w[3], const real a[4], const real b[4]) {
  real bc[4], d[4];
  rl_q_conj(bc, b);
  rl_q_mul(d, a, bc);
  rl_so3_log_quat(w, d);
}

/* w ⊞ q = Exp(w) ⊗ q, normalized  (r may alias q) */
RL_HD void rl_q_boxplus(real r[4], const real w[3], const real q[4]) {
  real e[4];
  rl_so3_exp_quat(e, w);
  rl_q_mul(r, e, q);
  rl_q_normalize(r);
}

/* q ← (q/‖q‖) ⊗ Exp(h·w): one step with body-frame angular velocity w
 * (as MuJoCo's mju_quatIntegrate: normalize q first, then multiply) */
RL_HD void rl_q_integrate_local(real q[4], const real w[3], real h) {
  real hw[3], e[4];
  rl_v3_scale(hw, w, h);
  rl_so3_exp_quat(e, hw);
  rl_q_normalize(q);
  rl_q_mul(q, q, e);
}

/* w = Log(b⁻¹ ⊗ a/‖a‖): the body-frame rotation vector from b to a (MuJoCo's mju_subQuat), the
   displacement of a ball joint from its spring reference. */
RL_HD void rl_q_sub_local(real w[3], const real a[4], const real b[4]) {
  real q[4], inv[4], dq[4];
  rl_q_copy(q, a);
  rl_q_normalize(q);
  rl_q_conj(inv, b);
  rl_q_mul(dq, inv, q);
  rl_so3_log_quat(w, dq);
}

#endif
