/* rl_prec.h — the one place that fixes the working precision.
 *
 * Every engine source is compiled twice: once with -DRL_REAL_F64 and once with
 * -DRL_REAL_F32.  `real` is the scalar type, and every public symbol is renamed
 * through RL_NAME() so that the two builds carry their precision in their names
 * (rl64_… / rl32_…).  A harness that links both libraries therefore cannot mix a
 * float model with a double routine: the types and the symbols differ.
 *
 * Per-precision constants live in this header and nowhere else.
 */
#ifndef RL_PREC_H
#define RL_PREC_H

#include <float.h>

#if defined(RL_REAL_F64) && defined(RL_REAL_F32)
#error "define exactly one of RL_REAL_F64 and RL_REAL_F32"
#elif defined(RL_REAL_F64)
typedef double real;
#define RL_NAME(x) rl64_##x
#define RL_PREC_NAME "f64"
#define RL_EPS DBL_EPSILON       /* unit round-off ×2 */
#define RL_TINY 1e-300           /* guard against division by exact zero */
#define RL_SQRT_EPS 1.4901161193847656e-08
#define RL_SMALL_ANGLE 1e-4      /* below this angle SO(3) maps switch to Taylor series */
#define RL_FMT "%.17g"           /* round-trip exact printing */
#elif defined(RL_REAL_F32)
typedef float real;
#define RL_NAME(x) rl32_##x
#define RL_PREC_NAME "f32"
#define RL_EPS FLT_EPSILON
#define RL_TINY 1e-30f
#define RL_SQRT_EPS 3.4526698e-04f
#define RL_SMALL_ANGLE 1e-2f
#define RL_FMT "%.9g"
#else
#error "compile the engine with -DRL_REAL_F64 or -DRL_REAL_F32"
#endif

/* Host/device qualifier: the scalar math headers are shared with engine/cuda/. */
#if defined(__CUDACC__)
#define RL_HD __host__ __device__ static inline
#else
#define RL_HD static inline
#endif

/* Real-typed libm calls (C11 <tgmath.h> is avoided on purpose: it breaks with nvcc). */
#include <math.h>
#if defined(RL_REAL_F64)
#define rl_sqrt sqrt
#define rl_sin sin
#define rl_cos cos
#define rl_atan2 atan2
#define rl_fabs fabs
#define rl_acos acos
#define rl_asin asin
#define rl_tan tan
#define rl_exp exp
#define rl_log log
#define rl_pow pow
#define rl_floor floor
#define rl_fmax fmax
#define rl_fmin fmin
#define rl_isfinite isfinite
#else
#define rl_sqrt sqrtf
#define rl_sin sinf
#define rl_cos cosf
#define rl_atan2 atan2f
#define rl_fabs fabsf
#define rl_acos acosf
#define rl_asin asinf
#define rl_tan tanf
#define rl_exp expf
#define rl_log logf
#define rl_pow powf
#define rl_floor floorf
#define rl_fmax fmaxf
#define rl_fmin fminf
#define rl_isfinite isfinite
#endif

#define RL_PI ((real)3.14159265358979323846)

#endif
