/* test_math.c — Criterion tests for rl_math.h / rl_so3.h, compiled once per precision
 * (-DRL_REAL_F64 or -DRL_REAL_F32, -Iengine).
 *
 * Inputs are drawn from GSL's mt19937 with a fixed seed, in three angle classes:
 *   near0   θ = 10^U(−9, −3)
 *   nearpi  θ = π − 10^U(−6, −3)
 *   generic θ = U(0, π)
 * with a uniform random axis; N_PER_CLASS samples per class and check.
 *
 * References are either independent formulas evaluated in long double from the
 * exact (rounded-to-`real`) input, or identities between engine functions.
 * Finite differences can only use the engine's own precision, so they use a
 * per-precision step FD_H (central differences, error ≈ h²·|f'''|/6 + ~2ε·|f|/h):
 *   f64: h = 1e-5  → truncation ~1e-11, round-off ~1e-10 (Log of angles near π); measured ≤ 1.1e-10, tol 2e-9
 *   f32: h = 1e-2  → truncation ~2e-5,  round-off ~3e-5;                           measured ≤ 3.4e-5,  tol 3e-4
 * the quotient is formed in double from the engine's outputs, with the actual (rounded) step.
 * Jr⁻¹/Jl⁻¹ are the derivatives of Log, which jumps at θ = π; near π the FD unwraps it.
 *
 * Environment:
 *   RL_TOL_SCALE=x   multiply every tolerance by x (e.g. 0.01 to see what fails)
 *   RL_TEST_REPORT=1 print the worst error of every check to stderr
 */
#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_so3.h"
#include "rl_spatial.h"

/* ------------------------------------------------------------------ tolerances */
#if defined(RL_REAL_F64)
#define PREC(d, f) (d)
#define SUITE      math_f64
#else
#define PREC(d, f) (f)
#define SUITE      math_f32
#endif
#define TOL(d, f) (PREC(d, f) * tol_scale())

/* Error measures are in the comments; round-off-level checks get ~11 ε (ε = 2.2e-16 / 1.2e-7),
 * and measured worst cases (RL_TEST_REPORT=1, gcc/clang -O0…-O3, with and without FMA) are
 * 1–5 ε.  Exact properties (Log(I) = 0, q₀ ≥ 0 from rl_q_from_mat) are asserted exactly.
 *  check                              f64      f32       error measure */
#define TOL_QMUL_ASSOC       TOL(2.5e-15, 1.5e-6) /* max|Δq|                           */
#define TOL_ROTATE_MAT       TOL(2.5e-15, 1.5e-6) /* ‖Δv‖/‖v‖                          */
#define TOL_MAT_COMPOSE      TOL(2.5e-15, 1.5e-6) /* max|ΔR|                           */
#define TOL_CONVENTION       TOL(2.5e-15, 1.5e-6) /* max|Δv|, Exp(π/2 ẑ) x̂ = ŷ          */
#define TOL_ROTATE_RODRIGUES TOL(2.5e-15, 1.5e-6) /* ‖Δv‖/‖v‖ vs long double           */
#define TOL_EXPQ_REF         TOL(2.5e-15, 1.5e-6) /* max(|Δq₀|, ‖Δv‖/‖v‖) vs long dbl  */
#define TOL_EXP_LOG_Q        TOL(2.5e-15, 1.5e-6) /* min‖Exp(Log q) ∓ q‖               */
#define TOL_LOG_SHORTEST     TOL(1e-15, 5e-7)     /* (‖Log q‖ − π)/π ≤ tol              */
#define TOL_EXP_LOG_QV       TOL(2.5e-15, 1.5e-6) /* same, vector part, relative       */
#define TOL_LOG_EXP_Q        TOL(2.5e-15, 1.5e-6) /* ‖Δw‖/‖w‖                          */
#define TOL_EXPM_EXPQ        TOL(2.5e-15, 1.5e-6) /* max|ΔR|                           */
#define TOL_EXPM_SKEW        TOL(2.5e-15, 1.5e-6) /* ‖vee(skew ΔR)‖/θ vs long double   */
#define TOL_EXPM_REF         TOL(2.5e-15, 1.5e-6) /* max|ΔR| vs long double            */
#define TOL_LOGM_LOGQ        TOL(2.5e-15, 1.5e-6) /* ‖Δw‖/‖w‖                          */
#define TOL_LOG_EXP_M        TOL(2.5e-15, 1.5e-6) /* ‖Δw‖/‖w‖                          */
#define TOL_QFROMM           TOL(2.5e-15, 1.5e-6) /* min‖q(R(q)) ∓ q‖                  */
#define TOL_LOGM_PI          TOL(2.5e-15, 1.5e-6) /* exact half turns: ‖Δw‖            */
#define TOL_JAC_FD           TOL(2e-9, 3e-4)      /* max|ΔJ| vs central FD (see FD_H)  */
#define TOL_JAC_REF          TOL(2.5e-15, 1.5e-6) /* max|ΔJ| vs long double            */
#define TOL_JAC_REF_SKEW     TOL(2.5e-15, 1.5e-6) /* ‖vee(skew ΔJ)‖/θ vs long double   */
#define TOL_JAC_COEF         TOL(2.5e-15, 1.5e-6) /* |Δc|/c (series), |Δc|·θ² (above)  */
#define TOL_JAC_INV          TOL(2.5e-15, 1.5e-6) /* max|Jr·Jr⁻¹ − I|                  */
#define TOL_JL_IDENT         TOL(2.5e-15, 1.5e-6) /* max|ΔJ|                           */
#define TOL_BOX_ROUNDTRIP    TOL(2.5e-15, 1.5e-6) /* ‖Δw‖ (absolute: w ⊞ q is O(1))    */
#define TOL_BOX_ROUNDTRIP_Q  TOL(2.5e-15, 1.5e-6) /* min‖Δq‖ up to sign                */
#define TOL_BOX_UNIT         TOL(1e-15, 6e-7)     /* |‖q‖ − 1|                         */
#define TOL_INTEG_REF        TOL(2.5e-15, 1.5e-6) /* max|Δq| vs long double            */
#define TOL_INTEG_WORLD      TOL(2.5e-15, 1.5e-6) /* max|Δq| vs Exp(h R w) ⊗ q         */

#define FD_H        ((real)PREC(1e-5, 1e-2))
#define N_PER_CLASS 300
#define SEED        20240607UL

static double tol_scale(void) {
  static double s = -1;
  if (s < 0) {
    const char *e = getenv("RL_TOL_SCALE");
    double v = e ? strtod(e, NULL) : 1.0;
    s = (v > 0 && isfinite(v)) ? v : 1.0;
  }
  return s;
}

/* ------------------------------------------------------------ error reporting */
typedef long double ld;
#define PI_LD 3.141592653589793238462643383279502884L

typedef struct {
  const char *name;
  double tol, worst;
} meter;

static meter meter_make(const char *name, double tol) {
  meter m;
  m.name = name;
  m.tol = tol;
  m.worst = 0;
  return m;
}

static void meter_report(const meter *m) {
  if (getenv("RL_TEST_REPORT"))
    fprintf(stderr, "[%s] %-26s worst %.3e  tol %.1e\n", RL_PREC_NAME, m->name, m->worst, m->tol);
}

static void fmt_arr(char *buf, size_t cap, const double *a, int n) {
  size_t k = 0;
  buf[0] = 0;
  for (int i = 0; i < n && k + 1 < cap; i++) {
    int r = snprintf(buf + k, cap - k, "%s%.17g", i ? ", " : "(", a[i]);
    if (r < 0) break;
    k += (size_t)r;
  }
  if (k + 2 < cap) strcat(buf, ")");
}

/* Records err and fails the test (printing actual, expected, input) if err > tol or NaN. */
static void check(meter *m, double err, const double *act, const double *exp, int n, const real *in, int nin,
                  const char *ctx) {
  if (err > m->worst || err != err) m->worst = err;
  if (!(err <= m->tol)) {
    char a[640], e[640], x[640];
    double ind[12];
    for (int i = 0; i < nin; i++) ind[i] = (double)in[i];
    fmt_arr(a, sizeof a, act, n);
    fmt_arr(e, sizeof e, exp, n);
    fmt_arr(x, sizeof x, ind, nin);
    cr_assert(err <= m->tol, "%s [%s, %s]: error %.3e > tol %.3e\n  actual   %s\n  expected %s\n  input    %s", m->name,
              RL_PREC_NAME, ctx, err, m->tol, a, e, x);
  }
}

static void r2d(double *d, const real *r, int n) {
  for (int i = 0; i < n; i++) d[i] = (double)r[i];
}
static void l2d(double *d, const ld *r, int n) {
  for (int i = 0; i < n; i++) d[i] = (double)r[i];
}
static double dnorm(const double *a, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * a[i];
  return sqrt(s);
}
static double ddiff(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += (a[i] - b[i]) * (a[i] - b[i]);
  return sqrt(s);
}
static double dmaxdiff(const double *a, const double *b, int n) {
  double m = 0;
  for (int i = 0; i < n; i++) m = fmax(m, fabs(a[i] - b[i]));
  return m;
}
/* min(‖a − b‖, ‖a + b‖): quaternions equal up to sign */
static double qdiff_pm(const double a[4], const double b[4]) {
  double p = 0, m = 0;
  for (int i = 0; i < 4; i++) {
    p += (a[i] - b[i]) * (a[i] - b[i]);
    m += (a[i] + b[i]) * (a[i] + b[i]);
  }
  return sqrt(fmin(p, m));
}

/* ------------------------------------------------------------------- sampling */
enum { NEAR0, NEARPI, GENERIC, NCLASS };
static const char *const cls_name[NCLASS] = {"near0", "nearpi", "generic"};

static gsl_rng *rng_new(void) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, SEED);
  return r;
}

static double draw_angle(gsl_rng *r, int cls) {
  switch (cls) {
  case NEAR0: return pow(10.0, gsl_ran_flat(r, -9, -3));
  case NEARPI: return (double)PI_LD - pow(10.0, gsl_ran_flat(r, -6, -3));
  default: return gsl_ran_flat(r, 0, (double)PI_LD);
  }
}
static void draw_rotvec(gsl_rng *r, int cls, real w[3]) {
  double t = draw_angle(r, cls), n[3];
  gsl_ran_dir_3d(r, &n[0], &n[1], &n[2]);
  for (int i = 0; i < 3; i++) w[i] = (real)(t * n[i]);
}
static void draw_vec(gsl_rng *r, real v[3], double scale) {
  for (int i = 0; i < 3; i++) v[i] = (real)gsl_ran_gaussian(r, scale);
}
/* unit quaternion: Exp of a class sample (rounded from long double), random sign */
static void ref_exp_quat(ld q[4], const real w[3]);
static void draw_quat(gsl_rng *r, int cls, real q[4]) {
  real w[3];
  ld ql[4];
  draw_rotvec(r, cls, w);
  ref_exp_quat(ql, w);
  double sg = gsl_rng_uniform(r) < 0.5 ? -1 : 1;
  for (int i = 0; i < 4; i++) q[i] = (real)(sg * ql[i]);
}

/* --------------------------------------------- long-double reference formulas */
static ld ref_t2(const real w[3]) { return (ld)w[0] * w[0] + (ld)w[1] * w[1] + (ld)w[2] * w[2]; }

/* Exp(w) = (cos(θ/2), sin(θ/2) w/θ) */
static void ref_exp_quat(ld q[4], const real w[3]) {
  ld t = sqrtl(ref_t2(w));
  ld k = t > 0 ? sinl(t / 2) / t : 0.5L;
  q[0] = cosl(t / 2);
  for (int i = 0; i < 3; i++) q[i + 1] = k * w[i];
}
static void ref_quat_mul(ld r[4], const ld a[4], const ld b[4]) {
  r[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  r[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  r[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  r[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}
/* matrix of a unit quaternion (independent of Rodrigues) */
static void ref_quat_mat(ld R[9], const ld q[4]) {
  ld w = q[0], x = q[1], y = q[2], z = q[3];
  R[0] = 1 - 2 * (y * y + z * z);
  R[1] = 2 * (x * y - w * z);
  R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z);
  R[4] = 1 - 2 * (x * x + z * z);
  R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y);
  R[7] = 2 * (y * z + w * x);
  R[8] = 1 - 2 * (x * x + y * y);
}
/* (1 − cosθ)/θ² */
static ld ref_a(ld t) {
  if (t == 0) return 0.5L;
  ld s = sinl(t / 2);
  return 2 * s * s / (t * t);
}
/* (θ − sinθ)/θ³ = Σ (−1)ⁿ θ²ⁿ/(2n+3)! */
static ld ref_b(ld t) {
  if (t >= 0.5L) return (t - sinl(t)) / (t * t * t);
  ld sum = 0, term = 1.0L / 6, t2 = t * t;
  for (int n = 0; n < 12; n++) {
    sum += term;
    term *= -t2 / ((2 * n + 4) * (2 * n + 5));
  }
  return sum;
}
/* 1/θ² − (1+cosθ)/(2θ sinθ) = Σ_{n≥1} |B₂ₙ| θ²ⁿ⁻²/(2n)! */
static ld ref_c(ld t) {
  if (t >= 0.5L) return (1 - (t / 2) * cosl(t / 2) / sinl(t / 2)) / (t * t);
  static const ld B[] = {1.0L / 6,      1.0L / 30, 1.0L / 42,     1.0L / 30,      5.0L / 66,
                         691.0L / 2730, 7.0L / 6,  3617.0L / 510, 43867.0L / 798, 174611.0L / 330};
  ld sum = 0, pw = 1, fact = 1, t2 = t * t;
  for (int n = 1; n <= 10; n++) {
    fact *= (2 * n - 1) * (2 * n);
    sum += B[n - 1] * pw / fact;
    pw *= t2;
  }
  return sum;
}
/* M = I + a[w]× + b(w wᵀ − θ² I) */
static void ref_ipoly(ld M[9], const real w[3], ld a, ld b) {
  ld t2 = ref_t2(w);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) M[3 * i + j] = (i == j) + b * ((ld)w[i] * w[j] - (i == j) * t2);
  M[1] -= a * w[2];
  M[2] += a * w[1];
  M[3] += a * w[2];
  M[5] -= a * w[0];
  M[6] -= a * w[1];
  M[7] += a * w[0];
}
/* ‖vee((A − B) − (A − B)ᵀ)/2‖ */
static double skew_diff(const double A[9], const double B[9]) {
  double v[3];
  v[0] = ((A[7] - B[7]) - (A[5] - B[5])) / 2;
  v[1] = ((A[2] - B[2]) - (A[6] - B[6])) / 2;
  v[2] = ((A[3] - B[3]) - (A[1] - B[1])) / 2;
  return dnorm(v, 3);
}
static double rnorm3(const real w[3]) {
  double d[3];
  r2d(d, w, 3);
  return dnorm(d, 3);
}

/* ------------------------------------------------------ finite-difference Jacobians */
enum { K_JR, K_JL, K_JR_INV, K_JL_INV };

/* value whose derivative in δ (at δ = 0) is the Jacobian of the given kind:
 *   Jr:   Log(Exp(w)⁻¹ ⊗ Exp(w + δ))     Jl:   Log(Exp(w + δ) ⊗ Exp(w)⁻¹)
 *   Jr⁻¹: Log(Exp(w) ⊗ Exp(δ))          Jl⁻¹: Log(Exp(δ) ⊗ Exp(w))
 * The last two are unwrapped across θ = π (Log returns the shortest vector), in double. */
static void fd_eval(double out[3], int kind, const real w[3], int k, real h, double *step) {
  real q0[4], q1[4], p[4], d[3], r[3];
  if (kind == K_JR || kind == K_JL) {
    real wp[3] = {w[0], w[1], w[2]};
    wp[k] = w[k] + h;
    *step = (double)wp[k] - (double)w[k]; /* actual (rounded) step */
    rl_so3_exp_quat(q0, w);
    rl_q_conj(q0, q0);
    rl_so3_exp_quat(q1, wp);
    if (kind == K_JR) rl_q_mul(p, q0, q1);
    else rl_q_mul(p, q1, q0);
  } else {
    d[0] = d[1] = d[2] = 0;
    d[k] = h;
    *step = (double)h;
    rl_so3_exp_quat(q0, w);
    rl_so3_exp_quat(q1, d);
    if (kind == K_JR_INV) rl_q_mul(p, q0, q1);
    else rl_q_mul(p, q1, q0);
  }
  rl_so3_log_quat(r, p);
  r2d(out, r, 3);
  if (kind == K_JR_INV || kind == K_JL_INV) {
    double wd[3], nr = dnorm(out, 3);
    r2d(wd, w, 3);
    if (dnorm(wd, 3) > 2 && out[0] * wd[0] + out[1] * wd[1] + out[2] * wd[2] < 0)
      for (int i = 0; i < 3; i++) out[i] -= 2 * (double)PI_LD * out[i] / nr;
  }
}
static void fd_jac(double J[9], int kind, const real w[3], real h) {
  for (int k = 0; k < 3; k++) {
    double fp[3], fm[3], sp, sm;
    fd_eval(fp, kind, w, k, h, &sp);
    fd_eval(fm, kind, w, k, (real)-h, &sm);
    for (int i = 0; i < 3; i++) J[3 * i + k] = (fp[i] - fm[i]) / (sp - sm);
  }
}
static void engine_jac(real J[9], int kind, const real w[3]) {
  switch (kind) {
  case K_JR: rl_so3_jr(J, w); break;
  case K_JL: rl_so3_jl(J, w); break;
  case K_JR_INV: rl_so3_jr_inv(J, w); break;
  default: rl_so3_jl_inv(J, w); break;
  }
}

/* ======================================================================= tests */

Test(SUITE, quat_mul_assoc) {
  gsl_rng *r = rng_new();
  meter m = meter_make("quat_mul_assoc", TOL_QMUL_ASSOC);
  for (int c = 0; c < NCLASS; c++)
    for (int s = 0; s < N_PER_CLASS; s++) {
      real a[4], b[4], d[4], ab[4], bd[4], x[4], y[4], in[12];
      draw_quat(r, c, a);
      draw_quat(r, c, b);
      draw_quat(r, GENERIC, d);
      rl_q_mul(ab, a, b);
      rl_q_mul(x, ab, d);
      rl_q_mul(bd, b, d);
      rl_q_mul(y, a, bd);
      double xd[4], yd[4];
      r2d(xd, x, 4);
      r2d(yd, y, 4);
      memcpy(in, a, sizeof a);
      memcpy(in + 4, b, sizeof b);
      memcpy(in + 8, d, sizeof d);
      check(&m, dmaxdiff(xd, yd, 4), xd, yd, 4, in, 12, cls_name[c]);
    }
  meter_report(&m);
  gsl_rng_free(r);
}

Test(SUITE, quat_rotate_vs_to_mat) {
  gsl_rng *r = rng_new();
  meter m1 = meter_make("rotate_vs_to_mat", TOL_ROTATE_MAT);
  meter m2 = meter_make("to_mat_compose", TOL_MAT_COMPOSE);
  meter m3 = meter_make("rotate_vs_rodrigues_ld", TOL_ROTATE_RODRIGUES);
  for (int c = 0; c < NCLASS; c++)
    for (int s = 0; s < N_PER_CLASS; s++) {
      real w[3], q[4], b[4], v[3], R[9], Rb[9], RRb[9], qb[4], Rqb[9], x[3], y[3];
      draw_rotvec(r, c, w);
      ld ql[4];
      ref_exp_quat(ql, w);
      for (int i = 0; i < 4; i++) q[i] = (real)ql[i];
      draw_vec(r, v, 3.0);
      double xd[3], yd[3];
      /* rotate == to_mat · v */
      rl_q_rotate(x, q, v);
      rl_q_to_mat(R, q);
      rl_m3_mulv(y, R, v);
      r2d(xd, x, 3);
      r2d(yd, y, 3);
      check(&m1, ddiff(xd, yd, 3) / rnorm3(v), xd, yd, 3, q, 4, cls_name[c]);
      /* inverse rotation: rotate(q*, v) == to_mat(q)ᵀ v == transpose(to_mat(q)) v */
      {
        real qc[4], Rt[9], z[3];
        double zd[3];
        rl_q_conj(qc, q);
        rl_q_rotate(x, qc, v);
        rl_m3_tmulv(y, R, v);
        rl_m3_transpose(Rt, R);
        rl_m3_mulv(z, Rt, v);
        r2d(xd, x, 3);
        r2d(yd, y, 3);
        r2d(zd, z, 3);
        check(&m1, ddiff(xd, yd, 3) / rnorm3(v), xd, yd, 3, q, 4, cls_name[c]);
        check(&m1, ddiff(zd, yd, 3) / rnorm3(v), zd, yd, 3, q, 4, cls_name[c]);
        rl_q_rotate(x, q, v);
        r2d(xd, x, 3);
      }
      /* to_mat(q ⊗ b) == to_mat(q) · to_mat(b) */
      draw_quat(r, GENERIC, b);
      rl_q_mul(qb, q, b);
      rl_q_to_mat(Rqb, qb);
      rl_q_to_mat(Rb, b);
      rl_m3_mul(RRb, R, Rb);
      double A[9], B[9];
      r2d(A, Rqb, 9);
      r2d(B, RRb, 9);
      check(&m2, dmaxdiff(A, B, 9), A, B, 9, q, 4, cls_name[c]);
      /* active rotation by Exp(w): v' = v cosθ + (n×v) sinθ + n(n·v)(1 − cosθ), in long double */
      ld t = sqrtl(ref_t2(w)), n[3], nv = 0, ref[3];
      for (int i = 0; i < 3; i++) {
        n[i] = w[i] / t;
        nv += n[i] * v[i];
      }
      ld nxv[3] = {n[1] * v[2] - n[2] * v[1], n[2] * v[0] - n[0] * v[2], n[0] * v[1] - n[1] * v[0]};
      for (int i = 0; i < 3; i++) ref[i] = v[i] * cosl(t) + nxv[i] * sinl(t) + n[i] * nv * (1 - cosl(t));
      l2d(yd, ref, 3);
      check(&m3, ddiff(xd, yd, 3) / rnorm3(v), xd, yd, 3, w, 3, cls_name[c]);
    }
  /* the convention, spelled out: Exp(π/2 ẑ) takes x̂ to ŷ (active rotation) */
  {
    meter mc = meter_make("convention_exp_z_x_is_y", TOL_CONVENTION);
    real w[3] = {0, 0, RL_PI / 2}, q[4], ex[3] = {1, 0, 0}, y[3];
    double a[3], e[3] = {0, 1, 0};
    rl_so3_exp_quat(q, w);
    rl_q_rotate(y, q, ex);
    r2d(a, y, 3);
    check(&mc, dmaxdiff(a, e, 3), a, e, 3, w, 3, "exact");
    meter_report(&mc);
  }
  meter_report(&m1);
  meter_report(&m2);
  meter_report(&m3);
  gsl_rng_free(r);
}

Test(SUITE, exp_quat_vs_reference) {
  gsl_rng *r = rng_new();
  meter m = meter_make("exp_quat_vs_ld", TOL_EXPQ_REF);
  meter ma = meter_make("from_axis_angle_vs_ld", TOL_EXPQ_REF);
  for (int c = 0; c < NCLASS; c++)
    for (int s = 0; s < N_PER_CLASS; s++) {
      real w[3], q[4];
      ld ql[4];
      double a[4], e[4];
      draw_rotvec(r, c, w);
      rl_so3_exp_quat(q, w);
      ref_exp_quat(ql, w);
      r2d(a, q, 4);
      l2d(e, ql, 4);
      double err = fmax(fabs(a[0] - e[0]), ddiff(a + 1, e + 1, 3) / dnorm(e + 1, 3));
      check(&m, err, a, e, 4, w, 3, cls_name[c]);
      /* rl_math.h's rl_q_from_axis_angle(w/θ, θ): same quaternion */
      real n[3], t = rl_v3_norm(w);
      rl_v3_scale(n, w, 1 / t);
      rl_q_from_axis_angle(q, n, t);
      r2d(a, q, 4);
      err = fmax(fabs(a[0] - e[0]), ddiff(a + 1, e + 1, 3) / dnorm(e + 1, 3));
      check(&ma, err, a, e, 4, w, 3, cls_name[c]);
    }
  meter_report(&m);
  meter_report(&ma);
  gsl_rng_free(r);
}

Test(SUITE, exp_log_quat) {
  gsl_rng *r = rng_new();
  meter m = meter_make("exp_log_quat", TOL_EXP_LOG_Q);
  meter mv = meter_make("exp_log_quat_vec_rel", TOL_EXP_LOG_QV);
  for (int c = 0; c <= NCLASS; c++)
    for (int s = 0; s < N_PER_CLASS; s++) {
      real q[4], w[3], p[4];
      if (c < NCLASS) {
        draw_quat(r, c, q);
      } else { /* arbitrary unit quaternion, q0 of either sign */
        double g[4], n;
        for (int i = 0; i < 4; i++) g[i] = gsl_ran_gaussian(r, 1);
        n = dnorm(g, 4);
        for (int i = 0; i < 4; i++) q[i] = (real)(g[i] / n);
      }
      rl_so3_log_quat(w, q);
      rl_so3_exp_quat(p, w);
      double a[4], e[4];
      r2d(a, p, 4);
      r2d(e, q, 4);
      const char *ctx = c < NCLASS ? cls_name[c] : "gaussian";
      check(&m, qdiff_pm(a, e), a, e, 4, q, 4, ctx);
      /* vector part relative (the small-angle series must keep it to round-off) */
      double sg = (a[0] * e[0] + a[1] * e[1] + a[2] * e[2] + a[3] * e[3]) < 0 ? -1 : 1;
      double ev[3] = {sg * e[1], sg * e[2], sg * e[3]};
      check(&mv, ddiff(a + 1, ev, 3) / dnorm(ev, 3), a, e, 4, q, 4, ctx);
      /* shortest: θ ≤ π */
      cr_assert(rnorm3(w) <= (double)PI_LD * (1 + TOL_LOG_SHORTEST),
                "Log(q) not shortest: |w| = %.17g > pi by %.3e (tol %.3e; q = %.17g %.17g %.17g %.17g)", rnorm3(w),
                rnorm3(w) / (double)PI_LD - 1, TOL_LOG_SHORTEST, (double)q[0], (double)q[1], (double)q[2],
                (double)q[3]);
    }
  meter_report(&m);
  meter_report(&mv);
  gsl_rng_free(r);
}

Test(SUITE, log_exp_quat) {
  gsl_rng *r = rng_new();
  meter m = meter_make("log_exp_quat", TOL_LOG_EXP_Q);
  for (int c = 0; c < NCLASS; c++)
    for (int s = 0; s < N_PER_CLASS; s++) {
      real w[3], q[4], v[3];
      draw_rotvec(r, c, w);
      rl_so3_exp_quat(q, w);
      rl_so3_log_quat(v, q);
      double a[3], e[3];
      r2d(a, v, 3);
      r2d(e, w, 3);
      check(&m, ddiff(a, e, 3) / dnorm(e, 3), a, e, 3, w, 3, cls_name[c]);
    }
  meter_report(&m);
  gsl_rng_free(r);
}

Test(SUITE, exp_mat_vs_exp_quat) {
  gsl_rng *r = rng_new();
  meter m1 = meter_make("exp_mat_vs_exp_quat", TOL_EXPM_EXPQ);
  meter m2 = meter_make("exp_mat_skew_rel", TOL_EXPM_SKEW);
  meter m3 = meter_make("exp_mat_vs_ld", TOL_EXPM_REF);
  for (int c = 0; c < NCLASS; c++)
    for (int s = 0; s < N_PER_CLASS; s++) {
      real w[3], q[4], R[9], Rq[9];
      ld ql[4], Rl[9];
      double A[9], B[9], L[9];
      draw_rotvec(r, c, w);
      rl_so3_exp_mat(R, w);
      rl_so3_exp_quat(q, w);
      rl_q_to_mat(Rq, q);
      ref_exp_quat(ql, w);
      ref_quat_mat(Rl, ql);
      r2d(A, R, 9);
      r2d(B, Rq, 9);
      l2d(L, Rl, 9);
      check(&m1, dmaxdiff(A, B, 9), A, B, 9, w, 3, cls_name[c]);
      check(&m3, dmaxdiff(A, L, 9), A, L, 9, w, 3, cls_name[c]);
      /* the rotation part (R − Rᵀ)/2 = sinθ [n]× must be accurate relative to θ
       * (this is what the small-angle series is for; near π it is an absolute check) */
      double t = rnorm3(w);
      check(&m2, skew_diff(A, L) / t, A, L, 9, w, 3, cls_name[c]);
    }
  meter_report(&m1);
  meter_report(&m2);
  meter_report(&m3);
  gsl_rng_free(r);
}

Test(SUITE, log_mat_vs_log_quat) {
  gsl_rng *r = rng_new();
  meter m1 = meter_make("log_mat_vs_log_quat", TOL_LOGM_LOGQ);
  meter m2 = meter_make("log_mat_exp_mat", TOL_LOG_EXP_M);
  meter m3 = meter_make("q_from_mat_roundtrip", TOL_QFROMM);
  for (int c = 0; c < NCLASS; c++)
    for (int s = 0; s < N_PER_CLASS; s++) {
      real w[3], q[4], R[9], v1[3], v2[3], v3[3], p[4];
      double a[4], e[4];
      draw_rotvec(r, c, w);
      rl_so3_exp_quat(q, w);
      rl_q_to_mat(R, q);
      rl_so3_log_mat(v1, R);
      rl_so3_log_quat(v2, q);
      r2d(a, v1, 3);
      r2d(e, v2, 3);
      check(&m1, ddiff(a, e, 3) / dnorm(e, 3), a, e, 3, w, 3, cls_name[c]);
      rl_so3_exp_mat(R, w);
      rl_so3_log_mat(v3, R);
      r2d(a, v3, 3);
      r2d(e, w, 3);
      check(&m2, ddiff(a, e, 3) / dnorm(e, 3), a, e, 3, w, 3, cls_name[c]);
      /* Shepperd: q(R(q)) = ±q, for q of either sign */
      draw_quat(r, c, q);
      rl_q_to_mat(R, q);
      rl_q_from_mat(p, R);
      r2d(a, p, 4);
      r2d(e, q, 4);
      check(&m3, qdiff_pm(a, e), a, e, 4, q, 4, cls_name[c]);
      cr_assert(p[0] >= 0, "q_from_mat returned q0 = %g < 0", (double)p[0]);
    }
  /* exact half turns, where R − Rᵀ = 0: about the axes and the diagonals */
  {
    meter mp = meter_make("log_mat_exact_pi", TOL_LOGM_PI);
    static const double axes[][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1},  {1, 1, 0},  {1, 0, 1},
                                     {0, 1, 1}, {1, 1, 1}, {1, -1, 0}, {-1, 2, 3}, {3, -2, 1e-3}};
    for (size_t k = 0; k < sizeof axes / sizeof axes[0]; k++) {
      double n = dnorm(axes[k], 3), u[3], e[3], a[3];
      real R[9], v[3];
      for (int i = 0; i < 3; i++) u[i] = axes[k][i] / n;
      for (int i = 0; i < 3; i++) /* R = 2 u uᵀ − I */
        for (int j = 0; j < 3; j++) R[3 * i + j] = (real)(2 * u[i] * u[j] - (i == j));
      rl_so3_log_mat(v, R);
      r2d(a, v, 3);
      double sg = (a[0] * u[0] + a[1] * u[1] + a[2] * u[2]) < 0 ? -1 : 1; /* ±π u both correct */
      for (int i = 0; i < 3; i++) e[i] = sg * (double)PI_LD * u[i];
      real in[3] = {(real)u[0], (real)u[1], (real)u[2]};
      check(&mp, ddiff(a, e, 3), a, e, 3, in, 3, "half-turn");
    }
    meter_report(&mp);
  }
  /* identity */
  {
    real I[9], v[3];
    rl_m3_identity(I);
    rl_so3_log_mat(v, I);
    cr_assert(v[0] == 0 && v[1] == 0 && v[2] == 0, "Log(I) = (%g, %g, %g)", (double)v[0], (double)v[1], (double)v[2]);
  }
  meter_report(&m1);
  meter_report(&m2);
  meter_report(&m3);
  gsl_rng_free(r);
}

static void jac_fd_test(int kind, const char *name) {
  gsl_rng *r = rng_new();
  meter m = meter_make(name, TOL_JAC_FD);
  for (int c = 0; c < NCLASS; c++)
    for (int s = 0; s < N_PER_CLASS; s++) {
      real w[3], J[9];
      double A[9], F[9];
      draw_rotvec(r, c, w);
      engine_jac(J, kind, w);
      fd_jac(F, kind, w, FD_H);
      r2d(A, J, 9);
      check(&m, dmaxdiff(A, F, 9), A, F, 9, w, 3, cls_name[c]);
    }
  meter_report(&m);
  gsl_rng_free(r);
}
Test(SUITE, jr_fd) { jac_fd_test(K_JR, "jr_vs_fd"); }
Test(SUITE, jl_fd) { jac_fd_test(K_JL, "jl_vs_fd"); }
Test(SUITE, jr_inv_fd) { jac_fd_test(K_JR_INV, "jr_inv_vs_fd"); }
Test(SUITE, jl_inv_fd) { jac_fd_test(K_JL_INV, "jl_inv_vs_fd"); }

/* all four Jacobians against I ± a[w]× + b[w]×² with the coefficients in long double
 * (series below θ = 0.5): checks the engine's series/closed-form switch to round-off */
Test(SUITE, jacobians_vs_reference) {
  gsl_rng *r = rng_new();
  meter m1 = meter_make("jac_vs_ld", TOL_JAC_REF);
  meter m2 = meter_make("jac_vs_ld_skew_rel", TOL_JAC_REF_SKEW);
  static const char *const kn[4] = {"jr", "jl", "jr_inv", "jl_inv"};
  for (int c = 0; c < NCLASS; c++)
    for (int s = 0; s < N_PER_CLASS; s++) {
      real w[3], J[9];
      ld M[9];
      double A[9], L[9];
      char ctx[64];
      draw_rotvec(r, c, w);
      ld t = sqrtl(ref_t2(w));
      for (int k = 0; k < 4; k++) {
        engine_jac(J, k, w);
        switch (k) {
        case K_JR: ref_ipoly(M, w, -ref_a(t), ref_b(t)); break;
        case K_JL: ref_ipoly(M, w, ref_a(t), ref_b(t)); break;
        case K_JR_INV: ref_ipoly(M, w, 0.5L, ref_c(t)); break;
        default: ref_ipoly(M, w, -0.5L, ref_c(t)); break;
        }
        r2d(A, J, 9);
        l2d(L, M, 9);
        snprintf(ctx, sizeof ctx, "%s, %s", cls_name[c], kn[k]);
        check(&m1, dmaxdiff(A, L, 9), A, L, 9, w, 3, ctx);
        check(&m2, skew_diff(A, L) / (double)t, A, L, 9, w, 3, ctx);
      }
    }
  meter_report(&m1);
  meter_report(&m2);
  gsl_rng_free(r);
}

/* the coefficient helpers themselves, relative to long double.  Below RL_SMALL_ANGLE (series)
 * they must be accurate to round-off; above it (θ − sinθ)/θ³ and 1/θ² − cot(θ/2)/(2θ) cancel
 * like ε/θ², which only costs ~ε in the matrix (they multiply [w]×², of size θ²), so there the
 * absolute error is weighted by θ².  (1 − cosθ)/θ² is cancellation-free and checked unweighted. */
Test(SUITE, jacobian_coefficients) {
  gsl_rng *r = rng_new();
  meter m = meter_make("jac_coef_vs_ld", TOL_JAC_COEF);
  for (int c = 0; c < NCLASS; c++)
    for (int s = 0; s < N_PER_CLASS; s++) {
      real w[3], a, b, ci;
      draw_rotvec(r, c, w);
      ld t = sqrtl(ref_t2(w));
      int series = rl_v3_dot(w, w) < RL_SMALL_ANGLE * RL_SMALL_ANGLE;
      /* closed form: |Δb|·θ², |Δc|·θ² = their size in the matrix (entries ~1) */
      double wgt[3] = {1, series ? 1 / (double)ref_b(t) : (double)(t * t),
                       series ? 1 / (double)ref_c(t) : (double)(t * t)};
      rl_so3_jcoef(&a, &b, w);
      ci = rl_so3_jinv_coef(w);
      double act[3] = {(double)a, (double)b, (double)ci};
      double exp[3] = {(double)ref_a(t), (double)ref_b(t), (double)ref_c(t)};
      double err =
          fmax(fabs(act[0] - exp[0]) / exp[0], fmax(fabs(act[1] - exp[1]) * wgt[1], fabs(act[2] - exp[2]) * wgt[2]));
      check(&m, err, act, exp, 3, w, 3, series ? "series" : "closed form");
    }
  meter_report(&m);
  gsl_rng_free(r);
}

Test(SUITE, jac_times_inverse) {
  gsl_rng *r = rng_new();
  meter m = meter_make("jac_times_inv_is_I", TOL_JAC_INV);
  for (int c = 0; c < NCLASS; c++)
    for (int s = 0; s < N_PER_CLASS; s++) {
      real w[3], J[9], Ji[9], P[9], I[9];
      double A[9], E[9];
      draw_rotvec(r, c, w);
      rl_m3_identity(I);
      r2d(E, I, 9);
      rl_so3_jr(J, w);
      rl_so3_jr_inv(Ji, w);
      rl_m3_mul(P, J, Ji);
      r2d(A, P, 9);
      check(&m, dmaxdiff(A, E, 9), A, E, 9, w, 3, cls_name[c]);
      rl_m3_mul(P, Ji, J);
      r2d(A, P, 9);
      check(&m, dmaxdiff(A, E, 9), A, E, 9, w, 3, cls_name[c]);
      rl_so3_jl(J, w);
      rl_so3_jl_inv(Ji, w);
      rl_m3_mul(P, J, Ji);
      r2d(A, P, 9);
      check(&m, dmaxdiff(A, E, 9), A, E, 9, w, 3, cls_name[c]);
    }
  meter_report(&m);
  gsl_rng_free(r);
}

Test(SUITE, jl_identities) {
  gsl_rng *r = rng_new();
  meter m1 = meter_make("jl_eq_jr_minus_w", TOL_JL_IDENT);
  meter m2 = meter_make("jl_eq_R_jr", TOL_JL_IDENT);
  meter m3 = meter_make("jl_inv_eq_jr_inv_minus_w", TOL_JL_IDENT);
  for (int c = 0; c < NCLASS; c++)
    for (int s = 0; s < N_PER_CLASS; s++) {
      real w[3], mw[3], Jl[9], Jr[9], Jrm[9], R[9], RJ[9];
      double A[9], B[9];
      draw_rotvec(r, c, w);
      rl_v3_scale(mw, w, -1);
      rl_so3_jl(Jl, w);
      rl_so3_jr(Jrm, mw);
      r2d(A, Jl, 9);
      r2d(B, Jrm, 9);
      check(&m1, dmaxdiff(A, B, 9), A, B, 9, w, 3, cls_name[c]);
      rl_so3_jr(Jr, w);
      rl_so3_exp_mat(R, w);
      rl_m3_mul(RJ, R, Jr);
      r2d(B, RJ, 9);
      check(&m2, dmaxdiff(A, B, 9), A, B, 9, w, 3, cls_name[c]);
      rl_so3_jl_inv(Jl, w);
      rl_so3_jr_inv(Jrm, mw);
      r2d(A, Jl, 9);
      r2d(B, Jrm, 9);
      check(&m3, dmaxdiff(A, B, 9), A, B, 9, w, 3, cls_name[c]);
    }
  meter_report(&m1);
  meter_report(&m2);
  meter_report(&m3);
  gsl_rng_free(r);
}

Test(SUITE, boxplus_boxminus) {
  gsl_rng *r = rng_new();
  meter m1 = meter_make("boxminus_boxplus", TOL_BOX_ROUNDTRIP);
  meter m2 = meter_make("boxplus_boxminus", TOL_BOX_ROUNDTRIP_Q);
  meter m3 = meter_make("boxplus_unit", TOL_BOX_UNIT);
  meter m4 = meter_make("boxminus_world_frame", TOL_BOX_ROUNDTRIP);
  for (int c = 0; c < NCLASS; c++)
    for (int s = 0; s < N_PER_CLASS; s++) {
      real w[3], q[4], p[4], v[3], a[4], b[4], in[7];
      double A[4], E[4];
      draw_rotvec(r, c, w);
      draw_quat(r, GENERIC, q);
      memcpy(in, w, sizeof w);
      memcpy(in + 3, q, sizeof q);
      /* (w ⊞ q) ⊟ q = w  for ‖w‖ < π */
      rl_q_boxplus(p, w, q);
      rl_q_boxminus(v, p, q);
      r2d(A, v, 3);
      r2d(E, w, 3);
      check(&m1, ddiff(A, E, 3), A, E, 3, in, 7, cls_name[c]);
      r2d(A, p, 4);
      double un = fabs(dnorm(A, 4) - 1);
      check(&m3, un, A, A, 4, in, 7, cls_name[c]);
      /* world frame: Exp(w) ⊗ q ⊟ q = w, with the product formed independently in long double */
      {
        ld el[4], ql[4], pl[4];
        real pr[4];
        ref_exp_quat(el, w);
        for (int i = 0; i < 4; i++) ql[i] = q[i];
        ref_quat_mul(pl, el, ql);
        for (int i = 0; i < 4; i++) pr[i] = (real)pl[i];
        rl_q_boxminus(v, pr, q);
        r2d(A, v, 3);
        check(&m4, ddiff(A, E, 3), A, E, 3, in, 7, cls_name[c]);
      }
      /* (a ⊟ b) ⊞ b = ±a */
      draw_quat(r, GENERIC, b);
      {
        ld el[4], bl[4], al[4];
        ref_exp_quat(el, w);
        for (int i = 0; i < 4; i++) bl[i] = b[i];
        ref_quat_mul(al, el, bl);
        for (int i = 0; i < 4; i++) a[i] = (real)al[i];
      }
      rl_q_boxminus(v, a, b);
      rl_q_boxplus(p, v, b);
      r2d(A, p, 4);
      r2d(E, a, 4);
      check(&m2, qdiff_pm(A, E), A, E, 4, a, 4, cls_name[c]);
      /* aliasing r = q is allowed */
      rl_q_copy(p, b);
      rl_q_boxplus(p, v, p);
      r2d(A, p, 4);
      check(&m2, qdiff_pm(A, E), A, E, 4, a, 4, cls_name[c]);
    }
  meter_report(&m1);
  meter_report(&m2);
  meter_report(&m3);
  meter_report(&m4);
  gsl_rng_free(r);
}

Test(SUITE, quat_integrate_local) {
  gsl_rng *r = rng_new();
  meter m1 = meter_make("integrate_vs_ld", TOL_INTEG_REF);
  meter m2 = meter_make("integrate_vs_world", TOL_INTEG_WORLD);
  for (int c = 0; c < NCLASS; c++)
    for (int s = 0; s < N_PER_CLASS; s++) {
      real w[3], q[4], p[4], hw[3], wv[3], e[4], R[9], y[4], in[8];
      double A[4], E[4];
      draw_rotvec(r, c, hw); /* h·w in the class */
      real h = (real)gsl_ran_flat(r, 1e-3, 1e-1);
      rl_v3_scale(w, hw, 1 / h);
      draw_quat(r, GENERIC, q);
      double sc = gsl_ran_flat(r, 0.5, 2); /* integrate must normalize its input */
      for (int i = 0; i < 4; i++) q[i] = (real)(sc * q[i]);
      memcpy(in, q, sizeof q);
      memcpy(in + 4, w, sizeof w);
      in[7] = h;
      rl_q_copy(p, q);
      rl_q_integrate_local(p, w, h);
      r2d(A, p, 4);
      /* reference: (q/‖q‖) ⊗ Exp(h w) in long double */
      {
        ld ql[4], el[4], pl[4], n = 0, hwl[3];
        real hwr[3];
        for (int i = 0; i < 4; i++) {
          ql[i] = q[i];
          n += ql[i] * ql[i];
        }
        n = sqrtl(n);
        for (int i = 0; i < 4; i++) ql[i] /= n;
        for (int i = 0; i < 3; i++) {
          hwl[i] = (ld)h * w[i];
          hwr[i] = (real)hwl[i];
        }
        ref_exp_quat(el, hwr);
        ref_quat_mul(pl, ql, el);
        l2d(E, pl, 4);
        check(&m1, dmaxdiff(A, E, 4), A, E, 4, in, 8, cls_name[c]);
      }
      /* body-frame w is world-frame R(q) w: the same step is Exp(h R(q) w) ⊗ q */
      rl_q_copy(y, q);
      rl_q_normalize(y);
      rl_q_to_mat(R, y);
      rl_m3_mulv(wv, R, w);
      rl_v3_scale(wv, wv, h);
      rl_so3_exp_quat(e, wv);
      rl_q_mul(y, e, y);
      r2d(E, y, 4);
      check(&m2, dmaxdiff(A, E, 4), A, E, 4, in, 8, cls_name[c]);
    }
  meter_report(&m1);
  meter_report(&m2);
  gsl_rng_free(r);
}

/* Free body whose reference point is its COM (h = 0, as on tumbling.xml), any mass m:
   the bias force m·(v×ω) of its acceleration I·([0; v] ×ₘ [ω; 0]) and the velocity-product force
   m·(ω×v) of rl_sp_inert_cross must cancel exactly in rounding (smooth.c rl_rne relies on it;
   with ω×(m·v) instead they differ by ~ε·m|v||ω|). */
Test(SUITE, free_body_bias_force_cancels) {
  gsl_rng *r = rng_new();
  for (int s = 0; s < 3 * N_PER_CLASS; s++) {
    real I[10] = {0}, cv[6], vb[6] = {0}, sj[6] = {0}, acc[6], fa[6], fv[6];
    for (int k = 0; k < 3; k++) I[k] = (real)gsl_ran_flat(r, 0.01, 1);
    I[9] = (real)gsl_ran_flat(r, 0.1, 10);
    draw_vec(r, sj, 5);     /* ω */
    draw_vec(r, vb + 3, 3); /* v */
    for (int k = 0; k < 3; k++) {
      cv[k] = sj[k];
      cv[3 + k] = vb[3 + k];
    }
    rl_sp_cross_motion(acc, vb, sj);
    rl_sp_inert_mul(fa, I, acc);
    rl_sp_inert_cross(fv, I, cv);
    for (int k = 3; k < 6; k++)
      cr_assert(fa[k] + fv[k] == 0, "sample %d: m(v×ω) + m(ω×v) = %g (m %g)", s, (double)(fa[k] + fv[k]), (double)I[9]);
  }
  gsl_rng_free(r);
}

/* rl_dot2 (compensated Σ a_i·b_i) against the sum in long double of the same (rounded) inputs, on position-servo
   sums gain·ctrl + b₀ + b₁·q + b₂·q̇ with b₁ = −gain, gain 1e3–1e4, ctrl and q within 2e-3 of each other: the
   two products (~1e4) cancel to a force of ~10.  Held to one rounding of the result plus (4ε)²·Σ|a_i·b_i| (the
   compensated bound) plus long double's own rounding of the reference (4·LDBL_EPSILON·Σ|a_i·b_i|, a third of the
   bound in f64).  The plain term-by-term sum of the same inputs must miss that bound by 10× somewhere, or
   the test would not tell the two apart. */
Test(SUITE, dot2_servo_cancellation) {
  gsl_rng *r = rng_new();
  double worst = 0, worst_plain = 0;
  for (int s = 0; s < 3000; s++) {
    real g = (real)(1e3 + 9e3 * gsl_rng_uniform(r)), q = (real)(-2.9 + 5.8 * gsl_rng_uniform(r));
    real c = (real)(q + 2e-3 * (2 * gsl_rng_uniform(r) - 1)), v = (real)(-10 + 20 * gsl_rng_uniform(r));
    real a[4] = {g, (real)0.5, -g, (real)(-0.1 * g)}, x[4] = {c, 1, q, v};
    long double exact = 0, mag = 0;
    for (int i = 0; i < 4; i++) {
      exact += (long double)a[i] * (long double)x[i];
      mag += fabsl((long double)a[i] * (long double)x[i]);
    }
    real plain = a[0] * x[0] + (a[1] * x[1] + a[2] * x[2] + a[3] * x[3]);
    double bound = (double)(RL_EPS * fabsl(exact) + 16 * RL_EPS * RL_EPS * mag + 4 * LDBL_EPSILON * mag);
    worst = fmax(worst, (double)fabsl((long double)rl_dot2(a, x, 4) - exact) / bound);
    worst_plain = fmax(worst_plain, (double)fabsl((long double)plain - exact) / bound);
  }
  if (getenv("RL_TEST_REPORT")) fprintf(stderr, "dot2_servo_cancellation: worst %.3g of the bound (plain sum %.3g)\n", worst, worst_plain);
  cr_expect(worst <= 1, "rl_dot2 error %.3g × its bound", worst);
  cr_expect(worst_plain > 10, "the plain sum is within %.3g × the bound: the inputs do not cancel", worst_plain);
  gsl_rng_free(r);
}
