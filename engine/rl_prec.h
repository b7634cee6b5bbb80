/* rl_prec.h — the one place that fixes the working precision.
 *
 * Every engine source is compiled twice: once with -DRL_REAL_F64 and once with
 * -DRL_REAL_F32.  `real` is the scalar type, and every public symbol is renamed
 * through RL_NAME() so that the two builds carry their precision in their names
 * (rl64_… / rl32_…).  A harness that links both libraries therefore cannot mix a
 * float model with a double routine: the types and the symbols differ.
 *
 * The precision's own constants (round-off, tiny, printing) live here; tuning of one algorithm to a
 * precision lives beside that algorithm (e.g. the box–box tie rules in collide_box.c).
 */
#ifndef RL_PREC_H
#define RL_PREC_H

#include <float.h>

#if defined(RL_REAL_F64) && defined(RL_REAL_F32)
#error "define exactly one of RL_REAL_F64 and RL_REAL_F32"
#elif defined(RL_REAL_F64)
typedef double real;
#define RL_NAME(x)       rl64_##x
#define RL_PREC_NAME     "f64"
#define RL_EPS           DBL_EPSILON /* unit round-off ×2 */
#define RL_TINY          1e-300      /* guard against division by exact zero */
#define RL_SQRT_EPS      1.4901161193847656e-08
#define RL_SMALL_ANGLE   1e-4    /* below this angle SO(3) maps switch to Taylor series */
#define RL_FMT           "%.17g" /* round-trip exact printing */
/* bias forces and M⁻¹ (qacc_smooth, Euler's damping solve) in MuJoCo's com frame with its LᵀDL: the f64
   engine follows MuJoCo's algorithms (see RL_LOCAL_FRAMES in the f32 block) */
#define RL_LOCAL_FRAMES  0
/* the angle between two unit vectors as MuJoCo takes it, acos(a·b) (see RL_STABLE_ANGLES in the f32 block) */
#define RL_STABLE_ANGLES 0
/* sums of products whose terms cancel evaluated as MuJoCo does, term by term (see RL_COMPENSATED_SUMS in the f32
   block) */
#define RL_COMPENSATED_SUMS 0
/* M⁻¹'s leaves-to-root pass summed term by term in the working precision, as MuJoCo (see RL_GATHERED_SOLVE in the
   f32 block) */
#define RL_GATHERED_SOLVE 0
/* the constraint solver's line search and CG's stopping test on differences of whole costs, as MuJoCo (see
   RL_LINE_COST_CHANGE in the f32 block) */
#define RL_LINE_COST_CHANGE 0
/* the vector between two contact centres as the difference of the two world points, as MuJoCo (see
   RL_CONTACT_OFFSETS in the f32 block) */
#define RL_CONTACT_OFFSETS 0
/* a tendon segment from the difference of its two world points and its Jacobian from the difference of two point
   Jacobians, as MuJoCo (see RL_SEGMENT_OFFSETS in the f32 block) */
#define RL_SEGMENT_OFFSETS 0
#elif defined(RL_REAL_F32)
typedef float real;
#define RL_NAME(x)       rl32_##x
#define RL_PREC_NAME     "f32"
#define RL_EPS           FLT_EPSILON
#define RL_TINY          1e-30f
#define RL_SQRT_EPS      3.4526698e-04f
#define RL_SMALL_ANGLE   1e-2f
#define RL_FMT           "%.9g"
/* LOCAL_FRAMES: bias forces and M⁻¹ (qacc_smooth, Euler's damping solve) with every body's quantities at
   its own COM (engine/smooth_local.c) instead of MuJoCo's com frame.  In the com frame a light body far
   from its root's subtree COM carries its own inertia as a difference of m·‖x − c‖² terms and its joint
   torques as differences of large moments; in float that lost 2e-5 of qacc_smooth on the humanoid (the
   state rounded to float moves it by 2e-7), now 2e-6.  M's LᵀDL factor qLD is read off that recursion's
   elimination once per step (rl_factor_m_step), so every M⁻¹ after it is the same sparse substitution as
   f64's; Euler's damping solve runs the recursion with h·b. */
#define RL_LOCAL_FRAMES  1
/* STABLE_ANGLES: the angle between two unit vectors as atan2(|a × b|, a·b) instead of MuJoCo's acos(a·b), whose
   error near 0 and π is √(2·ulp): 3.5e-4 rad in float (a tendon's wrap arc over a radius of 6 cm then misses
   MuJoCo's length by 2e-5 relative), 2e-8 rad in double, where f64 keeps MuJoCo's formula to agree with it. */
#define RL_STABLE_ANGLES 1
/* COMPENSATED_SUMS: an actuator's gain·input + b₀ + b₁·length + b₂·velocity as one compensated dot product
   (rl_dot2) instead of term by term.  A position servo's two large terms cancel (4500·ctrl against −4500·q, ~1e4 N
   each, for a force clamped to ±87 N): rounding each in float cost 6e-4 N, which M⁻¹ turned into 2.6e-5 of
   qacc_smooth on a Panda-class arm whose float floor is 7e-7.  f64 keeps MuJoCo's term-by-term sum to agree
   with it bit for bit. */
#define RL_COMPENSATED_SUMS 1
/* GATHERED_SOLVE: the leaves-to-root pass of every M⁻¹ by the LᵀDL factor (rl_solve_ld) gathers each dof's sum over
   its subtree in double, rounded to float once (the products of two floats are exact there), instead of adding
   float terms one at a time.  A free root's sums run over the whole tree and cancel: MuJoCo's cloth sample (81
   bodies, 162 hinges, κ(M) ≈ 5e6) had f32 qacc_smooth at 6–11× the error of M and the forces rounded to float once
   (verify's float floor; 8.8 floors at 5 states), all of it from that pass's float additions (the factor's own
   float inputs and storage cost ≤ 0.6 of the floor).  Storage and the factor stay float; the local-frame
   substitution (smooth_local.c, pk_substitute) gathers its leaves-to-root forces in double the same way.  f64 keeps
   MuJoCo's order to agree with it bit for bit. */
#define RL_GATHERED_SOLVE 1
/* LINE_COST_CHANGE: the line search (Newton and CG) compares, and CG's stopping test reads, the cost change along the
   line formed term by term (solver.c, ls_change) instead of the difference of two whole costs; CG also stops on a
   step below the rounding of q̈ or a gradient at its own rounding level.  A row far outside its constraint makes the
   cost ~2e10 (Panda-class arm at a random state), which float resolves to 2048: the difference of whole costs was
   noise 400× the stopping scale, CG read it as no improvement and stopped after one iteration 3.4e-2 from the
   optimum (Newton's first step lands at it; its stopping test stays MuJoCo's, see solver.c). */
#define RL_LINE_COST_CHANGE 1
/* CONTACT_OFFSETS: sphere/capsule pairs form the vector between their two centres from the geoms' offset and the
   segment terms (collide_prim.c, center_offset) instead of subtracting two world points, each rounded at the
   size of its coordinates (cloth: capsules crossing 2e-6 m apart at 0.6 m from the origin, normal 7e-3 off) */
#define RL_CONTACT_OFFSETS 1
/* SEGMENT_OFFSETS: a spatial tendon's site-to-site segment p₁ − p₀ summed from link-sized offsets along the tree
   (tendon.c, site_segment) instead of subtracting two world positions, and its Jacobian taking the dofs that move
   both end bodies as ω × (p₁ − p₀) (add_segment_jac).  MuJoCo's flag sample: 5 cm segments ~1 m from the origin
   read their direction 9e-6 off, ten_J 1.6e-5 and qfrc_passive 1.6e-5 relative. */
#define RL_SEGMENT_OFFSETS 1
#else
#error "compile the engine with -DRL_REAL_F64 or -DRL_REAL_F32"
#endif

/* MuJoCo's mjMINVAL: below it a norm is taken as zero (mju_normalize3 returns (1, 0, 0)) */
#define RL_MINVAL ((real)1e-15)

/* Host/device qualifier: the scalar math headers are shared with engine/cuda/. */
/* RL_HDFN: a function of the AVBD step compiled for the host and, under nvcc (engine/cuda/), also for the
   device (an ordinary C function in the C engine) */
#if defined(__CUDACC__)
#define RL_HDFN __host__ __device__
#else
#define RL_HDFN
#endif
#if defined(__CUDACC__)
#define RL_HD __host__ __device__ static inline
#else
#define RL_HD static inline
#endif

/* Real-typed libm calls (C11 <tgmath.h> is avoided on purpose: it breaks with nvcc). */
#include <math.h>
#if defined(RL_REAL_F64)
#define rl_sqrt     sqrt
#define rl_sin      sin
#define rl_cos      cos
#define rl_atan2    atan2
#define rl_fabs     fabs
#define rl_acos     acos
#define rl_asin     asin
#define rl_tan      tan
#define rl_exp      exp
#define rl_log      log
#define rl_pow      pow
#define rl_floor    floor
#define rl_ceil     ceil
#define rl_isfinite isfinite
#define rl_fma      fma
#else
#define rl_sqrt     sqrtf
#define rl_sin      sinf
#define rl_cos      cosf
#define rl_atan2    atan2f
#define rl_fabs     fabsf
#define rl_acos     acosf
#define rl_asin     asinf
#define rl_tan      tanf
#define rl_exp      expf
#define rl_log      logf
#define rl_pow      powf
#define rl_floor    floorf
#define rl_ceil     ceilf
#define rl_isfinite isfinite
#define rl_fma      fmaf
#endif

/* max(a, b) and min(a, b) with fmax/fmin's answer where an operand is a NaN (the other operand), else the second
   operand unless the first is larger (smaller): glibc's x86-64 fmax/fmin (maxsd/minsd), inline instead of a
   libm call per use.  nvcc keeps CUDA's own fmax/fmin. */
#if defined(__CUDACC__)
#if defined(RL_REAL_F64)
#define rl_fmax fmax
#define rl_fmin fmin
#else
#define rl_fmax fmaxf
#define rl_fmin fminf
#endif
#else
static inline real rl_fmax(real a, real b) { return a > b || b != b ? a : b; }
static inline real rl_fmin(real a, real b) { return a < b || b != b ? a : b; }
#endif

#define RL_PI ((real)3.14159265358979323846)

#endif
