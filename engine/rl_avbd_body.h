/* rl_avbd_body.h — per-body AVBD math shared by the CPU solver (avbd.c) and the CUDA port.
 *
 * Header-only, RL_HD (static inline, __host__ __device__ under nvcc), no allocation, no globals: every
 * function works on the plain structs and arrays passed in (no rl_avbd, rl_model or rl_data).
 * Contents: the row, joint and contact structs; 6×6 row accumulation (generic, angular-only, anchor) and
 * the guarded Cholesky solve; prediction and inertia term; joint rows (both sides, or one side for the
 * block sweep) and the joint coordinate; contact rows (normal, Coulomb tangents, spin/roll); one body's
 * block: rl_avbd_joint_assemble, rl_avbd_contact_assemble, rl_avbd_body_update (solve, clamp,
 * x ← x⁰ + dx, q ← Exp(δθ)·q).  avbd.c keeps the orchestration: contacts, coloring, loops, joint-space
 * terms that read the model (limits, servos), dual update, diagnostics.
 * Conventions of rl_math.h / rl_so3.h: quat (w,x,y,z), mat3 row-major, world-frame rotation
 * increments: a body's orientation is updated q ← Exp(δθ)·q, so every angular Jacobian below is
 * with respect to a world-frame δθ.  A body's 6-D increment is δz = (δx, δθ).
 *
 * Joint rows between body A (parent, or the world) and body B (child):
 *   anchor  C = x_A + R_A r_A − x_B − R_B r_B                       (3 rows, m)
 *   axis    C_k = t_k(A) · a(B),  k = 1, 2, t_k ⊥ a in A            (2 rows, ≈ rad)
 *   lateral C_k = t_k(A) · (p_B − p_A)                              (2 rows, m; slide)
 *   rotation C = Log(q_B (q_A q_rel0)⁻¹)                            (3 rows, rad; slide, weld)
 * and the joint coordinate φ (hinge angle or slide displacement) whose gradient carries the
 * joint-space terms (limits, dry friction, damping, armature, servo).
 */
#ifndef RL_AVBD_BODY_H
#define RL_AVBD_BODY_H

#include "rl_so3.h"

/* Full unrolling of the fixed-size 6×6 loops (same operations in the same order, no branches on the
 * loop counters): nvcc's device pass and clang "#pragma unroll", gcc "#pragma GCC unroll"; nothing in
 * nvcc's host pass (its front end rejects the GCC form, its host compiler the other), nor in a build with
 * AddressSanitizer: clang -O2 with ASan and UBSan spent over 35 minutes on avbd_tree.c's nested unrolled
 * loops (the fuzz build), and unrolling changes no result. */
#if defined(__SANITIZE_ADDRESS__)
#define RL_AVBD_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RL_AVBD_SANITIZED 1
#endif
#endif
#if defined(RL_AVBD_SANITIZED)
#define RL_AVBD_UNROLL
#elif defined(__CUDA_ARCH__) || (defined(__clang__) && !defined(__CUDACC__))
#define RL_AVBD_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__)
#define RL_AVBD_UNROLL
#elif defined(__GNUC__)
#define RL_AVBD_UNROLL _Pragma("GCC unroll 6")
#else
#define RL_AVBD_UNROLL
#endif

/* max(x, y) and min(x, y) exactly as the x86-64 libm fmax / fmin return them (maxsd / minsd: x > y ? x : y,
 * resp. x < y ? x : y; the other argument when one is NaN), inline: the sweep and the dual update call them
 * a few hundred times per sweep, and each libm call costs a call and spilled registers. */
RL_HD real rl_avbd_max(real x, real y) { return (x > y || y != y) ? x : y; }
RL_HD real rl_avbd_min(real x, real y) { return (x < y || y != y) ? x : y; }

/* A rigid body pose at its COM (the world is x = 0, q = 1, R = I). */
typedef struct rl_avbd_pose {
  real x[3], q[4], R[9];
} rl_avbd_pose;

/* joint kinds in maximal coordinates */
enum { RL_AVBD_HINGE = 0, RL_AVBD_SLIDE = 1, RL_AVBD_BALL = 2, RL_AVBD_WELD = 3, RL_AVBD_CONNECT = 4 };
/* a body with several joints to its parent: one joint whose rows and coordinates are those of the whole
   sequence (rl_avbd_compound, avbd_compound.c; CPU only) */
#define RL_AVBD_COMPOUND 5
/* row kinds: two-sided (lin/ang), one-sided bounds on the joint coordinate, dry friction */
enum { RL_AVBD_ROW_LIN = 0, RL_AVBD_ROW_ANG = 1, RL_AVBD_ROW_LIMLO = 2, RL_AVBD_ROW_LIMHI = 3, RL_AVBD_ROW_DRY = 4 };
#define RL_AVBD_MAXROW 9 /* 6 two-sided + limit lo + limit hi + dry friction */

/* A maximal-coordinate joint: the geometry of its rows (the multipliers live in rl_avbd_row). */
typedef struct rl_avbd_joint {
  int kind;                    /* RL_AVBD_* */
  int a, b;                    /* body slots; a = −1 is the world */
  int jnt, eq;                 /* model joint / equality id (−1 if none) */
  int row, nrow;               /* first row and number of rows (two-sided first, then limits, then dry friction) */
  int neq;                     /* two-sided rows */
  int lo_row, hi_row, dry_row; /* row index of limit lo/hi and dry friction, −1 if absent */
  int act;                     /* first actuator with this joint as transmission, −1 if none */
  int act_end;                 /* one past the last such actuator (the servo sums over act … act_end − 1) */
  int cmp;                     /* RL_AVBD_COMPOUND: index into rl_avbd.cmp, else −1 */
  real rA[3], rB[3];           /* anchors in the COM frames of A (world point if a = −1) and B */
  real axA[3], axB[3];         /* joint axis in A's and B's COM frames */
  real t1A[3], t2A[3];         /* two unit vectors ⊥ axA in A's frame */
  real qrel0[4];               /* q_A⁻¹ q_B at the zero of the joint coordinate */
  real qpos0;                  /* the joint coordinate at qrel0 */
  real range[2];
  real armature, damping, frictionloss, stiffness, spring;
  real phi;           /* current coordinate (unwrapped) */
  real phi_n, dphi_n; /* coordinate and its rate at the step start */
} rl_avbd_joint;

/* One augmented-Lagrangian row. */
typedef struct rl_avbd_row {
  int kind;    /* RL_AVBD_ROW_* */
  real lambda; /* multiplier (force or torque) */
  real rho;    /* penalty */
  real rho0;   /* lower bound and growth unit (ρ₀ = rho_init·meff/h², set each step) */
  real meff;   /* mass (kg) or moment of inertia (kg m²) that scales ρ₀ */
  real c0;     /* C at the step start */
  real c;      /* stabilized C̃ after the last dual update */
} rl_avbd_row;

/* One contact point: normal from body a to body b (a = −1: the world); rows n, t1, t2. */
typedef struct rl_avbd_contact {
  int a, b;
  int key[3];        /* cache key: geom a, geom b, support feature (−1 if none) */
  real rA[3], rB[3]; /* contact points in the COM frames (world point if the body is the world) */
  real frame[9];     /* n, t1, t2 (frozen within the step) */
  real mu;
  real lambda[3], rho[3], rho0;
  real c0[3], c[3]; /* C at the step start and C̃ after the last dual update */
  real target_n;    /* the normal row's target T (C̃_n = C_n − T, rl_avbd_one_sided_target), set at the step start */
  int stick;        /* tangent multiplier inside the disc after the last dual update */
  int touched;      /* the normal row was closed (C̃_n ≤ 0) at the step start or after a dual update of this step */
  /* torsional (about n) and rolling (about t1, t2) rows, condim 4 / 6: the relative rotation
     since the step start w = Log(Δq_B) − Log(Δq_A), C_r = frame_r·w, force bounded by the patch-radius
     coefficients: |λ_spin| ≤ μ_spin(−λ_n), ‖λ_roll‖ ≤ μ_roll(−λ_n) */
  int dim; /* 1, 3, 4, 6 (3 for own ground contacts) */
  real mu_spin, mu_roll;
  real alam[3], arho[3], arho0;
  /* normal row through the centres of curvature: a side whose surface is a sphere of radius
     rad (sphere, capsule; 0 for planes, boxes, meshes, other geoms) has its centre cA / cB (COM frame,
     world point for the world) at the contact point moved rad along its inward normal, and
     C_n = n·(c_B − c_A) − rad_A − rad_B (= n·(p_B − p_A) − includemargin at the step start: rl_collision's
     contacts put c_A includemargin = margin − gap further along n, so the row's zero is MuJoCo's).  The normal force of a
     rolling sphere then passes through its centre; at the body-fixed contact point it acts on a lever
     that turns with the sphere (r·ω·h behind the centre) and drives the rolling (−20 % of the rolling
     resistance at 1 m/s, r = 0.1 m, h = 2 ms). */
  real rad[2], cA[3], cB[3];
} rl_avbd_contact;

/* ------------------------------------------------------------------ 6×6 algebra */

/* H += k·J Jᵀ, g += f·J over the entries i, j ≥ i0 (one Gauss–Newton row: energy λC + ½ρC², force
 * f = λ + ρC̃, weight k; J[0:i0] = 0 contributes nothing).  Only the lower triangle of H (j ≤ i) is
 * accumulated: rl_avbd_chol_solve6 reads no other entry. */
RL_HD void rl_avbd_add_row_from(real H[36], real g[6], const real J[6], real f, real k, int i0) {
  RL_AVBD_UNROLL
  for (int i = i0; i < 6; i++) g[i] += f * J[i];
  if (k == 0) return;
  RL_AVBD_UNROLL
  for (int i = i0; i < 6; i++) {
    RL_AVBD_UNROLL
    for (int j = i0; j <= i; j++) H[6 * i + j] += k * J[i] * J[j];
  }
}

/* a general row */
RL_HD void rl_avbd_add_row(real H[36], real g[6], const real J[6], real f, real k) {
  rl_avbd_add_row_from(H, g, J, f, k, 0);
}

/* a purely angular row, J = [0, j] (axis, rotation, hinge coordinate rows): g[3:6] and H's δθ block only */
RL_HD void rl_avbd_add_row_ang(real H[36], real g[6], const real J[6], real f, real k) {
  rl_avbd_add_row_from(H, g, J, f, k, 3);
}

/* rl_avbd_add_row for an anchor row k, J = [±e_k, j] (rl_avbd_anchor_side): g[k], g[3:6], H[k][k],
 * H[3:6][k] and the δθ block change, the same products as rl_avbd_add_row in the same order. */
RL_HD void rl_avbd_add_row_anchor(real H[36], real g[6], const real J[6], real f, real k, int r) {
  g[r] += f * J[r];
  RL_AVBD_UNROLL
  for (int i = 3; i < 6; i++) g[i] += f * J[i];
  if (k == 0) return;
  H[7 * r] += k * J[r] * J[r];
  RL_AVBD_UNROLL
  for (int i = 3; i < 6; i++) {
    H[6 * i + r] += k * J[i] * J[r];
    RL_AVBD_UNROLL
    for (int j = 3; j <= i; j++) H[6 * i + j] += k * J[i] * J[j];
  }
}

/* Guarded Cholesky H = L Lᵀ in place (reads and writes the lower triangle only), then δ = −H⁻¹ g.
 * Guard: a pivot below eps·max diag (not positive definite to working precision) is replaced by
 * eps·max diag + tiny, so the solve never divides by ≤ 0.  Returns the number of guarded pivots. */
RL_HD int rl_avbd_chol_solve6(real H[36], const real g[6], real dz[6]) {
  real dmax = 0;
  int guarded = 0;
  RL_AVBD_UNROLL
  for (int i = 0; i < 6; i++) dmax = rl_avbd_max(dmax, rl_fabs(H[7 * i]));
  real floor_ = 64 * RL_EPS * dmax + RL_TINY;
  RL_AVBD_UNROLL
  for (int j = 0; j < 6; j++) {
    real s = H[7 * j];
    RL_AVBD_UNROLL
    for (int k = 0; k < j; k++) s -= H[6 * j + k] * H[6 * j + k];
    if (!(s > floor_)) {
      s = floor_;
      guarded++;
    }
    real l = rl_sqrt(s);
    H[7 * j] = l;
    RL_AVBD_UNROLL
    for (int i = j + 1; i < 6; i++) {
      real t = H[6 * i + j];
      RL_AVBD_UNROLL
      for (int k = 0; k < j; k++) t -= H[6 * i + k] * H[6 * j + k];
      H[6 * i + j] = t / l;
    }
  }
  real y[6];
  RL_AVBD_UNROLL
  for (int i = 0; i < 6; i++) {
    real t = -g[i];
    RL_AVBD_UNROLL
    for (int k = 0; k < i; k++) t -= H[6 * i + k] * y[k];
    y[i] = t / H[7 * i];
  }
  RL_AVBD_UNROLL
  for (int i = 5; i >= 0; i--) {
    real t = y[i];
    RL_AVBD_UNROLL
    for (int k = i + 1; k < 6; k++) t -= H[6 * k + i] * dz[k];
    dz[i] = t / H[7 * i];
  }
  return guarded;
}

/* rl_avbd_chol_solve6 on two independent systems at once, lanes l = 0, 1 (H_l, g_l → δ_l = −H_l⁻¹ g_l):
 * every lane runs the same operations in the same order as rl_avbd_chol_solve6, so each δ_l and guard
 * count is bit-identical to it; the two dependency chains (6 square roots and 27 divisions each, which
 * bound one solve by latency) are interleaved so that they overlap.  H_l is read (lower triangle), not
 * overwritten. */
RL_HD void rl_avbd_chol_solve6_x2(const real H0[36], const real g0[6], real dz0[6], const real H1[36], const real g1[6],
                                  real dz1[6], int guarded[2]) {
  real L[36][2], dmax[2] = {0, 0}, fl[2], y[6][2], z[6][2];
  const real *g[2] = {g0, g1};
  RL_AVBD_UNROLL
  for (int i = 0; i < 6; i++) {
    RL_AVBD_UNROLL
    for (int j = 0; j <= i; j++) {
      L[6 * i + j][0] = H0[6 * i + j];
      L[6 * i + j][1] = H1[6 * i + j];
    }
  }
  RL_AVBD_UNROLL
  for (int i = 0; i < 6; i++)
    for (int l = 0; l < 2; l++) dmax[l] = rl_avbd_max(dmax[l], rl_fabs(L[7 * i][l]));
  for (int l = 0; l < 2; l++) {
    fl[l] = 64 * RL_EPS * dmax[l] + RL_TINY;
    guarded[l] = 0;
  }
  RL_AVBD_UNROLL
  for (int j = 0; j < 6; j++) {
    real sj[2] = {L[7 * j][0], L[7 * j][1]}, lj[2];
    RL_AVBD_UNROLL
    for (int k = 0; k < j; k++)
      for (int l = 0; l < 2; l++) sj[l] -= L[6 * j + k][l] * L[6 * j + k][l];
    for (int l = 0; l < 2; l++) {
      if (!(sj[l] > fl[l])) {
        sj[l] = fl[l];
        guarded[l]++;
      }
      lj[l] = rl_sqrt(sj[l]);
      L[7 * j][l] = lj[l];
    }
    RL_AVBD_UNROLL
    for (int i = j + 1; i < 6; i++) {
      real t[2] = {L[6 * i + j][0], L[6 * i + j][1]};
      RL_AVBD_UNROLL
      for (int k = 0; k < j; k++)
        for (int l = 0; l < 2; l++) t[l] -= L[6 * i + k][l] * L[6 * j + k][l];
      for (int l = 0; l < 2; l++) L[6 * i + j][l] = t[l] / lj[l];
    }
  }
  RL_AVBD_UNROLL
  for (int i = 0; i < 6; i++) {
    real t[2] = {-g[0][i], -g[1][i]};
    RL_AVBD_UNROLL
    for (int k = 0; k < i; k++)
      for (int l = 0; l < 2; l++) t[l] -= L[6 * i + k][l] * y[k][l];
    for (int l = 0; l < 2; l++) y[i][l] = t[l] / L[7 * i][l];
  }
  RL_AVBD_UNROLL
  for (int i = 5; i >= 0; i--) {
    real t[2] = {y[i][0], y[i][1]};
    RL_AVBD_UNROLL
    for (int k = i + 1; k < 6; k++)
      for (int l = 0; l < 2; l++) t[l] -= L[6 * k + i][l] * z[k][l];
    for (int l = 0; l < 2; l++) z[i][l] = t[l] / L[7 * i][l];
  }
  for (int i = 0; i < 6; i++) {
    dz0[i] = z[i][0];
    dz1[i] = z[i][1];
  }
}

/* Clamp a 3-vector to length ≤ cap (keeps its direction); returns the scale applied (≤ 1). */
RL_HD real rl_avbd_clamp3(real v[3], real cap) {
  real n = rl_v3_norm(v);
  if (n > cap) {
    rl_v3_scale(v, v, cap / n);
    return cap / n;
  }
  return 1;
}

/* rl_avbd_clamp3 returning the length ‖v‖ after the clamp: the norm it computed when v is left as it
 * was (the same value rl_v3_norm gives again), recomputed only when v was scaled. */
RL_HD real rl_avbd_clamp3_norm(real v[3], real cap) {
  real n = rl_v3_norm(v);
  if (n > cap) {
    rl_v3_scale(v, v, cap / n);
    return rl_v3_norm(v);
  }
  return n;
}

/* Geometric stiffness, positive diagonal approximation: the energy term f·(Exp(δθ)u) has the
 * δθ-Hessian G = ½(f uᵀ + u fᵀ) − (f·u)I; K_i += ‖column i of G‖ (AVBD's diagonal lumping). */
RL_HD void rl_avbd_geo_diag(real K[3], const real f[3], const real u[3]) {
  /* inputs and the three column norms in locals: K may alias neither for the compiler, so the three
     square roots overlap instead of waiting on each store to K (the same operations, same order) */
  const real fl[3] = {f[0], f[1], f[2]}, ul[3] = {u[0], u[1], u[2]};
  real fu = rl_v3_dot(fl, ul), n[3];
  RL_AVBD_UNROLL
  for (int i = 0; i < 3; i++) {
    real c0 = (real)0.5 * (fl[0] * ul[i] + ul[0] * fl[i]) - (i == 0 ? fu : 0);
    real c1 = (real)0.5 * (fl[1] * ul[i] + ul[1] * fl[i]) - (i == 1 ? fu : 0);
    real c2 = (real)0.5 * (fl[2] * ul[i] + ul[2] * fl[i]) - (i == 2 ? fu : 0);
    n[i] = rl_sqrt(c0 * c0 + c1 * c1 + c2 * c2);
  }
  K[0] += n[0];
  K[1] += n[1];
  K[2] += n[2];
}

/* -------------------------------------------------------------- prediction */

/* x_p = x + h·v + h²·(g + f/m) */
RL_HD void rl_avbd_predict_lin(real xp[3], const real x[3], const real v[3], const real grav[3], const real f[3],
                               real m, real h) {
  for (int i = 0; i < 3; i++) xp[i] = x[i] + h * v[i] + h * h * (grav[i] + f[i] / m);
}

/* Rotational prediction.  Body-frame ω_b = Rᵀω, τ_b = Rᵀτ, J = diag(I_b):
 *   implicit gyroscopic step (one Newton iteration on J(ω' − ω_b) + h ω'×Jω' = hτ_b at ω' = ω_b):
 *   (J + h([ω_b]× J − [Jω_b]×)) Δ = h(τ_b − ω_b × Jω_b),  ω' = ω_b + Δ;
 *   q_p = Exp(h·R ω')·q.  Returns the predicted world angular velocity in wp. */
RL_HD void rl_avbd_predict_rot(real qp[4], real wp[3], const real q[4], const real R[9], const real w[3],
                               const real Ib[3], const real tau[3], real h) {
  real wb[3], tb[3], Jw[3], rhs[3], A[9];
  rl_m3_tmulv(wb, R, w);
  rl_m3_tmulv(tb, R, tau);
  for (int i = 0; i < 3; i++) Jw[i] = Ib[i] * wb[i];
  real c[3];
  rl_v3_cross(c, wb, Jw);
  for (int i = 0; i < 3; i++) rhs[i] = h * (tb[i] - c[i]);
  real W[9], P[9];
  rl_m3_hat(W, wb);
  rl_m3_hat(P, Jw);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) A[3 * i + j] = (i == j ? Ib[i] : 0) + h * (W[3 * i + j] * Ib[j] - P[3 * i + j]);
  /* 3×3 solve by Cramer's rule (A is I_b + O(h), well conditioned) */
  real det =
      A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) + A[2] * (A[3] * A[7] - A[4] * A[6]);
  real inv[9];
  inv[0] = (A[4] * A[8] - A[5] * A[7]) / det;
  inv[1] = (A[2] * A[7] - A[1] * A[8]) / det;
  inv[2] = (A[1] * A[5] - A[2] * A[4]) / det;
  inv[3] = (A[5] * A[6] - A[3] * A[8]) / det;
  inv[4] = (A[0] * A[8] - A[2] * A[6]) / det;
  inv[5] = (A[2] * A[3] - A[0] * A[5]) / det;
  inv[6] = (A[3] * A[7] - A[4] * A[6]) / det;
  inv[7] = (A[1] * A[6] - A[0] * A[7]) / det;
  inv[8] = (A[0] * A[4] - A[1] * A[3]) / det;
  real dw[3], wn[3], hw[3];
  rl_m3_mulv(dw, inv, rhs);
  rl_v3_add(wn, wb, dw);
  rl_m3_mulv(wp, R, wn);
  rl_v3_scale(hw, wp, h);
  rl_q_boxplus(qp, hw, q);
}

/* ------------------------------------------------------------ inertia energy */

/* E = m/(2h²)‖x − x_p‖² + 1/(2h²) θᵀ I₀ θ,  θ = Log(q q_p⁻¹);  θ(δθ) ≈ θ + Jl⁻¹(θ) δθ, so
 * g = [m/h² (x − x_p) ; Jl⁻¹ᵀ I₀ θ / h²],  H = blkdiag(m/h² I, Jl⁻¹ᵀ I₀ Jl⁻¹ / h²).
 * H and g are overwritten. */
RL_HD void rl_avbd_inertia(real H[36], real g[6], real m, const real I0[9], const rl_avbd_pose *p, const real xp[3],
                           const real qp[4], real h) {
  real ih2 = 1 / (h * h), th[3], Ji[9], It[3], IJ[9];
  for (int i = 0; i < 36; i++) H[i] = 0;
  for (int i = 0; i < 3; i++) {
    g[i] = m * ih2 * (p->x[i] - xp[i]);
    H[7 * i] = m * ih2;
  }
  rl_q_boxminus(th, p->q, qp);
  rl_so3_jl_inv(Ji, th);
  rl_m3_mulv(It, I0, th);
  real gr[3];
  rl_m3_tmulv(gr, Ji, It);
  for (int i = 0; i < 3; i++) g[3 + i] = ih2 * gr[i];
  rl_m3_mul(IJ, I0, Ji);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      real s = 0;
      for (int k = 0; k < 3; k++) s += Ji[3 * k + i] * IJ[3 * k + j];
      H[6 * (3 + i) + 3 + j] = ih2 * s;
    }
}

/* ------------------------------------------------------------------ joint rows */

/* world point of a body-fixed point r: p = x + R r (u = R r returned too) */
RL_HD void rl_avbd_point(real p[3], real u[3], const rl_avbd_pose *P, const real r[3]) {
  rl_m3_mulv(u, P->R, r);
  rl_v3_add(p, P->x, u);
}

/* Lateral rows of a slide C_k = t_k · (p_B − p_A):
 * ∂/∂x_B = t_k, ∂/∂δθ_B = (R_B r_B) × t_k, ∂/∂x_A = −t_k, ∂/∂δθ_A = t_k × (p_B − x_A). */
RL_HD void rl_avbd_lateral_rows(real C[2], real JA[][6], real JB[][6], const rl_avbd_pose *A, const rl_avbd_pose *B,
                                const rl_avbd_joint *jt) {
  real pA[3], pB[3], uA[3], uB[3], d[3], e[3], t[2][3];
  rl_avbd_point(pA, uA, A, jt->rA);
  rl_avbd_point(pB, uB, B, jt->rB);
  rl_v3_sub(d, pB, pA);
  rl_v3_sub(e, pB, A->x);
  rl_m3_mulv(t[0], A->R, jt->t1A);
  rl_m3_mulv(t[1], A->R, jt->t2A);
  for (int k = 0; k < 2; k++) {
    real cb[3], ca[3];
    C[k] = rl_v3_dot(t[k], d);
    rl_v3_cross(cb, uB, t[k]);
    rl_v3_cross(ca, t[k], e);
    for (int i = 0; i < 3; i++) {
      JA[k][i] = -t[k][i];
      JA[k][3 + i] = ca[i];
      JB[k][i] = t[k][i];
      JB[k][3 + i] = cb[i];
    }
  }
}

/* wrap an angle into (−π, π] */
RL_HD real rl_avbd_wrap(real a) {
  while (a > RL_PI) a -= 2 * RL_PI;
  while (a <= -RL_PI) a += 2 * RL_PI;
  return a;
}

/* Joint coordinate φ and its gradient (dA, dB over (δx, δθ) of A and B).
 * hinge: r = q_rel0⁻¹ q_A⁻¹ q_B = Rot(axB, φ − φ₀); φ = φ₀ + 2·atan2(r_v·axB, r_w), unwrapped to the
 *        branch nearest `near`; ∂φ/∂δθ_B = a = R_B axB, ∂φ/∂δθ_A = −a.
 * slide: φ = φ₀ + a·(p_B − p_A), a = R_A axA; gradient as the lateral rows with t = a. */
/* Hinge coordinate before unwrapping: r = q_rel0⁻¹ q_A⁻¹ q_B, φ_raw = φ₀ + 2·atan2(r_v·axB, r_w) */
RL_HD real rl_avbd_hinge_raw(const rl_avbd_joint *jt, const rl_avbd_pose *A, const rl_avbd_pose *B) {
  real c[4], t[4], r[4];
  rl_q_conj(c, jt->qrel0);
  rl_q_conj(t, A->q);
  rl_q_mul(r, c, t);
  rl_q_mul(r, r, B->q);
  real s = r[1] * jt->axB[0] + r[2] * jt->axB[1] + r[3] * jt->axB[2];
  return jt->qpos0 + 2 * rl_atan2(s, r[0]);
}

/* φ = near + wrap(φ_raw − near): the branch of φ_raw nearest `near` */
RL_HD real rl_avbd_unwrap(real raw, real near) { return near + rl_avbd_wrap(raw - near); }

RL_HD real rl_avbd_joint_coord(const rl_avbd_joint *jt, const rl_avbd_pose *A, const rl_avbd_pose *B, real near,
                               real dA[6], real dB[6]) {
  if (jt->kind == RL_AVBD_HINGE) {
    real a[3];
    real phi = rl_avbd_unwrap(rl_avbd_hinge_raw(jt, A, B), near);
    rl_m3_mulv(a, B->R, jt->axB);
    for (int i = 0; i < 3; i++) {
      dA[i] = 0;
      dB[i] = 0;
      dA[3 + i] = -a[i];
      dB[3 + i] = a[i];
    }
    return phi;
  }
  real pA[3], pB[3], uA[3], uB[3], d[3], e[3], a[3], cb[3], ca[3];
  rl_avbd_point(pA, uA, A, jt->rA);
  rl_avbd_point(pB, uB, B, jt->rB);
  rl_v3_sub(d, pB, pA);
  rl_v3_sub(e, pB, A->x);
  rl_m3_mulv(a, A->R, jt->axA);
  rl_v3_cross(cb, uB, a);
  rl_v3_cross(ca, a, e);
  for (int i = 0; i < 3; i++) {
    dA[i] = -a[i];
    dA[3 + i] = ca[i];
    dB[i] = a[i];
    dB[3 + i] = cb[i];
  }
  return jt->qpos0 + rl_v3_dot(a, d);
}

/* ------------------------------------------------------- one side of a joint (block sweep) */

/* Lever arms and axes of a joint's rows at the current poses: u_A = R_A r_A, u_B = R_B r_B,
 * t_k = R_A t_kA, a = R_B axB (hinge); what the joint rows' geometric stiffness needs. */
typedef struct rl_avbd_joint_arms {
  real uA[3], uB[3], t[2][3], a[3];
} rl_avbd_joint_arms;

/* One side's anchor-row Jacobian J_k = sg·[e_k, u × e_k] (u × e_0 = (0, u_2, −u_1), u × e_1 = (−u_2, 0, u_0),
   u × e_2 = (u_1, −u_0, 0), written out) */
RL_HD void rl_avbd_anchor_jac(real J[][6], const real u[3], real sg) {
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < 6; i++) J[k][i] = 0;
  for (int k = 0; k < 3; k++) J[k][k] = sg;
  J[0][4] = sg * u[2];
  J[0][5] = -sg * u[1];
  J[1][3] = -sg * u[2];
  J[1][5] = sg * u[0];
  J[2][3] = sg * u[1];
  J[2][4] = -sg * u[0];
}

/* Anchor rows C = p_A − p_B, p = x + R r:  J_A = [I, −[R_A r_A]×],  J_B = [−I, [R_B r_B]×]
 * (∂C_k/∂δθ_A = u_A × e_k since e_k·(δθ × u) = δθ·(u × e_k)), one side's Jacobian only
 * (side 0: J = [I, u_A × e_k]; side 1: J = [−I, −u_B × e_k]; J = NULL: values only). */
RL_HD void rl_avbd_anchor_side(real C[3], real J[][6], int side, const rl_avbd_pose *A, const rl_avbd_pose *B,
                               const real rA[3], const real rB[3], real uA[3], real uB[3]) {
  real pA[3], pB[3];
  rl_avbd_point(pA, uA, A, rA);
  rl_avbd_point(pB, uB, B, rB);
  rl_v3_sub(C, pA, pB);
  if (!J) return;
  const real *u = side ? uB : uA;
  real sg = side ? -1 : 1;
  rl_avbd_anchor_jac(J, u, sg);
}

/* Axis rows C_k = t_k · a,  t_k = R_A t_kA, a = R_B axB, one side's Jacobian (∂/∂δθ_A = t_k × a,
 * ∂/∂δθ_B = a × t_k; translations do not enter). */
RL_HD void rl_avbd_axis_side(real C[2], real J[][6], int side, const rl_avbd_pose *A, const rl_avbd_pose *B,
                             const rl_avbd_joint *jt, real t[2][3], real a[3]) {
  rl_m3_mulv(t[0], A->R, jt->t1A);
  rl_m3_mulv(t[1], A->R, jt->t2A);
  rl_m3_mulv(a, B->R, jt->axB);
  for (int k = 0; k < 2; k++) {
    real c[3];
    C[k] = rl_v3_dot(t[k], a);
    if (!J) continue;
    rl_v3_cross(c, t[k], a);
    for (int i = 0; i < 3; i++) {
      J[k][i] = 0;
      J[k][3 + i] = side ? -c[i] : c[i];
    }
  }
}

/* Rotation rows C = Log(q_B (q_A q_rel0)⁻¹), one side's Jacobian (∂C/∂δθ_A = −Jr⁻¹(C), ∂C/∂δθ_B = Jl⁻¹(C));
 * only that side's inverse Jacobian is formed. */
RL_HD void rl_avbd_rot_side(real C[3], real J[][6], int side, const rl_avbd_pose *A, const rl_avbd_pose *B,
                            const real qrel0[4]) {
  real qa[4], M[9];
  rl_q_mul(qa, A->q, qrel0);
  rl_q_boxminus(C, B->q, qa);
  if (!J) return;
  if (side) rl_so3_jl_inv(M, C);
  else rl_so3_jr_inv(M, C);
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < 3; i++) {
      J[k][i] = 0;
      J[k][3 + i] = side ? M[3 * k + i] : -M[3 * k + i];
    }
}

/* The two-sided rows of a joint seen from one body: C[0..neq)
 * and the Jacobian of side `side` (0: A, 1: B) only, or no Jacobian when J = NULL; the lever arms and
 * axes in *w (for rl_avbd_joint_arms_geo).  Returns neq. */
RL_HD int rl_avbd_joint_side_rows(const rl_avbd_joint *jt, const rl_avbd_pose *A, const rl_avbd_pose *B, int side,
                                  real C[6], real J[][6], rl_avbd_joint_arms *w) {
  switch (jt->kind) {
  case RL_AVBD_HINGE:
    rl_avbd_anchor_side(C, J, side, A, B, jt->rA, jt->rB, w->uA, w->uB);
    rl_avbd_axis_side(C + 3, J ? J + 3 : NULL, side, A, B, jt, w->t, w->a);
    return 5;
  case RL_AVBD_SLIDE: {
    real JA[2][6], JB[2][6];
    rl_avbd_lateral_rows(C, JA, JB, A, B, jt);
    if (J)
      for (int k = 0; k < 2; k++)
        for (int i = 0; i < 6; i++) J[k][i] = side ? JB[k][i] : JA[k][i];
    rl_avbd_rot_side(C + 2, J ? J + 2 : NULL, side, A, B, jt->qrel0);
    return 5;
  }
  case RL_AVBD_BALL:
  case RL_AVBD_CONNECT: rl_avbd_anchor_side(C, J, side, A, B, jt->rA, jt->rB, w->uA, w->uB); return 3;
  default: /* weld */
    rl_avbd_anchor_side(C, J, side, A, B, jt->rA, jt->rB, w->uA, w->uB);
    rl_avbd_rot_side(C + 3, J ? J + 3 : NULL, side, A, B, jt->qrel0);
    return 6;
  }
}

/* All two-sided rows of a joint with both sides' Jacobians (C[0..neq), JA, JB): rl_avbd_joint_side_rows
 * for A and for B.  hinge: 3 anchor + 2 axis;  slide: 2 lateral + 3 rotation;  ball, connect: 3 anchor;
 * weld: 3 anchor + 3 rotation. */
RL_HD int rl_avbd_joint_rows(const rl_avbd_joint *jt, const rl_avbd_pose *A, const rl_avbd_pose *B, real C[6],
                             real JA[][6], real JB[][6]) {
  rl_avbd_joint_arms w;
  rl_avbd_joint_side_rows(jt, A, B, 1, C, JB, &w);
  return rl_avbd_joint_side_rows(jt, A, B, 0, C, JA, &w);
}

/* Geometric stiffness of the joint rows on side `side` (the joint rows' K, same terms, same
 * order) from the lever arms and axes of rl_avbd_joint_side_rows:
 * K += geo_diag(f_anchor, u_side) and, for a hinge, the two axis rows' terms. */
RL_HD void rl_avbd_joint_arms_geo(const rl_avbd_joint *jt, const rl_avbd_joint_arms *w, const real *f, int side,
                                  real K[3]) {
  if (jt->kind == RL_AVBD_SLIDE) return;
  rl_avbd_geo_diag(K, f, side == 0 ? w->uA : w->uB);
  if (jt->kind != RL_AVBD_HINGE) return;
  for (int k = 0; k < 2; k++) {
    real fv[3];
    if (side == 0) {
      rl_v3_scale(fv, w->a, f[3 + k]);
      rl_avbd_geo_diag(K, fv, w->t[k]);
    } else {
      rl_v3_scale(fv, w->t[k], f[3 + k]);
      rl_avbd_geo_diag(K, fv, w->a);
    }
  }
}

/* ------------------------------------------------------------ bounded projections */

/* λ⁺ = min(t, 0) (normal rows, one-sided limits: λ ≤ 0 with C ≥ 0) */
RL_HD real rl_avbd_proj_neg(real t) { return t < 0 ? t : 0; }
/* clip(t, −b, b) (dry friction with torque budget b) */
RL_HD real rl_avbd_clip(real t, real b) { return t > b ? b : (t < -b ? -b : t); }
/* Coulomb disc: t ← t·min(1, r/‖t‖) (t = 0 stays 0); returns 1 if t was inside (sticking) */
RL_HD int rl_avbd_proj_disc(real t[2], real r) {
  real n = rl_sqrt(t[0] * t[0] + t[1] * t[1]);
  if (n <= r) return 1;
  real s = r > 0 ? r / n : 0;
  t[0] *= s;
  t[1] *= s;
  return 0;
}

/* ------------------------------------------------------------ contact rows */

/* world points and lever arms of a contact: p = x + R r (A, B: the poses of bodies a, b; the world's
 * for a side that is the world) */
RL_HD void rl_avbd_contact_points(const rl_avbd_contact *k, const rl_avbd_pose *A, const rl_avbd_pose *B, real pA[3],
                                  real uA[3], real pB[3], real uB[3]) {
  rl_avbd_point(pA, uA, A, k->rA);
  rl_avbd_point(pB, uB, B, k->rB);
}

/* world centres of curvature and their lever arms: c = x + R c_local (rl_avbd_contact.cA, cB) */
RL_HD void rl_avbd_contact_centres(const rl_avbd_contact *k, const rl_avbd_pose *A, const rl_avbd_pose *B, real cA[3],
                                   real vA[3], real cB[3], real vB[3]) {
  rl_avbd_point(cA, vA, A, k->cA);
  rl_avbd_point(cB, vB, B, k->cB);
}

/* C_n = n·(c_B − c_A) − rad_A − rad_B (centres of curvature);  C_k = t_k·(p_B − p_A), k = 1, 2
 * (body-fixed contact points: the slip of the material points), from the points and centres */
RL_HD void rl_avbd_contact_c_at(const rl_avbd_contact *k, const real pA[3], const real pB[3], const real cA[3],
                                const real cB[3], real C[3]) {
  real dd[3];
  rl_v3_sub(dd, pB, pA);
  for (int r = 1; r < 3; r++) C[r] = rl_v3_dot(k->frame + 3 * r, dd);
  rl_v3_sub(dd, cB, cA);
  C[0] = rl_v3_dot(k->frame, dd) - k->rad[0] - k->rad[1];
}

/* relative rotation of a contact's bodies since the step start, C_r = frame_r · (Log(Δq_B) − Log(Δq_A))
 * (Δq = q (q⁰)⁻¹; dqA / dqB NULL for the world, which does not rotate) for r = spin (n), roll (t1, t2) */
RL_HD void rl_avbd_contact_ang(const rl_avbd_contact *k, const real *dqA, const real *dqB, real C[3]) {
  real wa[3] = {0, 0, 0}, wb[3] = {0, 0, 0}, w[3];
  if (dqA) rl_so3_log_quat(wa, dqA);
  if (dqB) rl_so3_log_quat(wb, dqB);
  rl_v3_sub(w, wb, wa);
  for (int r = 0; r < 3; r++) C[r] = rl_v3_dot(k->frame + 3 * r, w);
}

/* Bounded spin/roll forces t = λ + ρC projected: spin clip(t₀, ±μ_spin·b), roll disc ‖(t₁,t₂)‖ ≤ μ_roll·b,
 * b = −λ_n ≥ 0 (rows off below condim 4 / 6).  Returns 1 if every active row was inside its bound. */
RL_HD int rl_avbd_contact_ang_proj(const rl_avbd_contact *k, real t[3], real b) {
  int in = 1;
  if (k->mu_spin > 0) {
    real c = rl_avbd_clip(t[0], k->mu_spin * b);
    in &= c == t[0];
    t[0] = c;
  } else t[0] = 0;
  if (k->mu_roll > 0) in &= rl_avbd_proj_disc(t + 1, k->mu_roll * b);
  else t[1] = t[2] = 0;
  return in;
}

/* Spin/roll rows of contact c on one of its bodies (side 1: B): force t = Π(λ + ρC) (rl_avbd_contact_ang_proj,
 * bound from the normal force fn of this assembly), J = ±[0, frame_r]; weight ρ while the normal is
 * active.  kkt: the multipliers themselves. */
RL_HD void rl_avbd_contact_ang_rows(const rl_avbd_contact *c, const real *dqA, const real *dqB, int side, int kkt,
                                    real fn, real H[36], real g[6]) {
  real C[3], t[3];
  rl_avbd_contact_ang(c, dqA, dqB, C);
  for (int r = 0; r < 3; r++) t[r] = kkt ? c->alam[r] : c->alam[r] + c->arho[r] * C[r];
  if (!kkt) rl_avbd_contact_ang_proj(c, t, -fn);
  for (int r = 0; r < 3; r++) {
    if ((r == 0 && !(c->mu_spin > 0)) || (r > 0 && !(c->mu_roll > 0))) continue;
    real J[6] = {0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 3; i++) J[3 + i] = side ? c->frame[3 * r + i] : -c->frame[3 * r + i];
    real wt = (kkt || !(fn < 0 || c->lambda[0] < 0)) ? 0 : c->arho[r];
    rl_avbd_add_row_ang(H, g, J, t[r], wt);
  }
}

/* A contact evaluated at one pair of poses: lever arms to the material points (u) and to the centres of
 * curvature (v), and C of its three rows (rl_avbd_contact_c_at). */
typedef struct rl_avbd_contact_val {
  real uA[3], uB[3], vA[3], vB[3], C[3];
} rl_avbd_contact_val;

/* v = contact c's lever arms and C at the poses A, B (rl_avbd_contact_points, _centres, _c_at) */
RL_HD void rl_avbd_contact_val_eval(rl_avbd_contact_val *v, const rl_avbd_contact *c, const rl_avbd_pose *A,
                                    const rl_avbd_pose *B) {
  real pA[3], pB[3], cA[3], cB[3];
  rl_avbd_contact_points(c, A, B, pA, v->uA, pB, v->uB);
  rl_avbd_contact_centres(c, A, B, cA, v->vA, cB, v->vB);
  rl_avbd_contact_c_at(c, pA, pB, cA, cB, v->C);
}

/* The target T of a one-sided row (a contact's normal row, a joint, tendon or cone limit) from its value C⁰ at
 * the step start: C̃ = C − T ≥ 0 with
 *   T = min(C⁰, 0) + (1 − α)·max(−C⁰ − s, 0),
 * i.e. a gap is not required to close (T = 0), a penetration up to the slop s (m, or rad for an angle) is kept
 * as it is (T = C⁰: the row asks only that it grow no deeper), and 1 − α of the penetration beyond s is
 * pushed out per step.  Without the slop every loaded row is asked to move: around a closed loop of such rows
 * (a box resting on two boxes that rest on the floor; a humanoid lying on the floor with a knee at its limit)
 * the push-outs of independent penetrations are met only by opening some rows by ~1e-9 and loading others, and
 * the dual ascent moves load around the loop at ρ·C̃ per sweep for hundreds of sweeps each step; with T = C⁰
 * the step-start poses meet every such row and nothing needs to move (Box2D's linear slop: E. Catto, "Iterative
 * Dynamics with Temporal Coherence", GDC 2005). */
RL_HD real rl_avbd_one_sided_target(real c0, real alpha, real slop) {
  return rl_avbd_min(c0, (real)0) + ((real)1 - alpha) * rl_avbd_max(-c0 - slop, (real)0);
}

/* Forces f and weights wt of contact c's normal and two tangent rows at v (rl_avbd_contact_assemble_val, which
 * says what they are): f_n = min(λ_n + ρ_n C̃_n, 0) with C̃_n = C_n − T (T: rl_avbd_one_sided_target),
 * f_t = λ_t + ρ_t(C_t − α C⁰_t) projected on the disc μ(−f_n);
 * wt = ρ while the normal is active (mm: or touched, for the normal), the tangents' scaled by r/‖t‖ once sliding
 * (mm) and 0 without friction; kkt = 1: f = λ, wt = 0. */
RL_HD void rl_avbd_contact_fw(const rl_avbd_contact *c, const rl_avbd_contact_val *v, real alpha, int kkt, int mm,
                              real f[3], real wt[3]) {
  real sc = 1;
  const real *C = v->C;
  real Cn = C[0] - c->target_n;
  f[0] = kkt ? c->lambda[0] : rl_avbd_proj_neg(c->lambda[0] + c->rho[0] * Cn);
  if (kkt) {
    f[1] = c->lambda[1];
    f[2] = c->lambda[2];
  } else {
    f[1] = c->lambda[1] + c->rho[1] * (C[1] - alpha * c->c0[1]);
    f[2] = c->lambda[2] + c->rho[2] * (C[2] - alpha * c->c0[2]);
    /* the disc's radius: μ(−f_n) at the trial, or (articulation blocks, mm) μ(−λ_n) once λ_n < 0 (below) */
    real fn = mm && c->lambda[0] < 0 ? c->lambda[0] : f[0];
    real rad = c->mu * -fn, tn = mm ? rl_sqrt(f[1] * f[1] + f[2] * f[2]) : 0;
    rl_avbd_proj_disc(f + 1, rad);
    if (tn > rad) sc = rad / tn;
  }
  for (int r = 0; r < 3; r++) {
    wt[r] = (kkt || !(f[0] < 0 || c->lambda[0] < 0 || (r == 0 && mm && c->touched))) ? 0 : c->rho[r];
    if (r > 0 && c->mu <= 0) wt[r] = 0;
    if (r > 0) wt[r] *= sc;
  }
}

/* Jacobian of contact c's row r (0 normal, 1, 2 tangents) on side `side` (1: B) at v: J = ±[w, x × w], w the row's
 * direction, x the lever to the centre of curvature (normal) or to the material point (tangents), + on B */
RL_HD void rl_avbd_contact_jac(const rl_avbd_contact *c, const rl_avbd_contact_val *v, int r, int side, real J[6]) {
  const real *w = c->frame + 3 * r;
  real x[3];
  /* normal row: lever to the centre of curvature; tangent rows: to the material point */
  if (r == 0) rl_v3_cross(x, side ? v->vB : v->vA, w);
  else rl_v3_cross(x, side ? v->uB : v->uA, w);
  for (int i = 0; i < 3; i++) {
    J[i] = side ? w[i] : -w[i];
    J[3 + i] = side ? x[i] : -x[i];
  }
}

/* Contact c's rows (lever arms and C from v, rl_avbd_contact_val_eval at the current poses) on the body
 * of side `side` (1: B) into H (lower triangle), g and the geometric-stiffness diagonal K:  normal
 * f_n = min(λ_n + ρ_n C̃_n, 0), C̃_n = C_n − T (rl_avbd_one_sided_target), lever to the centre of curvature;
 * tangents f_t = λ_t + ρ_t(C_t − α C⁰_t) projected on the disc μ(−f_n), lever to the material point;  J = ±[w, u × w];  weight ρ while the normal is active (tangents: and μ > 0);
 * then the spin/roll rows (dqA, dqB: Δq of the bodies, NULL for the world).  kkt = 1: the multipliers
 * themselves, no weights, no K.
 * mm = 1 (articulation blocks): weights that majorize the rows' energies, so that one Newton step of the
 * block cannot jump over a kink of them: the normal row of a contact that has been closed in this step
 * (c->touched) weighs ρ_n whether or not it is active now (its energy has curvature ρ_n or 0, so
 * ½ρ_n(C − C_k)² from the current point lies above it; with weight 0 a contact that has just opened is
 * stepped through into the ground, λ_n jumps, the foot is pushed out again and the iteration cycles; a
 * contact that has stayed open keeps weight 0, a stiffness there slows a lifted foot to the rate
 * ρ_n/(ρ_n + k) of the rest's k), and a sliding contact (tangent trial force t = λ_t + ρ_t C̃_t
 * outside the disc of radius r = μ(−f_n)) weighs its tangent rows by w = ρ_t·r/‖t‖: the tangent energy is a
 * Huber function of d = C̃_t + λ_t/ρ_t (‖t‖ = ρ_t‖d‖), its force r·d/‖d‖ is w·d, and ½w‖d‖² + const touches
 * it there and lies above it (iteratively reweighted least squares, r fixed within the step); the full ρ_t
 * makes the step of a sliding foot ‖t‖/r times too short and the iterate crawls.  With mm the disc's radius is
 * μ(−λ_n), the normal multiplier of the last dual update, once it is negative (a contact that has carried a
 * load), not μ(−f_n) of the trial point: with the trial's f_n the friction bound moves with the step's normal
 * force, a coupling the Newton step does not see (the normal and tangent rows weigh independently), and a sliding
 * contact with μ ≈ 1 went round a cycle — the normal force oscillating by ~30 % per iteration, the tangents
 * following it on the disc — to the budget (Gymnasium's humanoid lying on the floor: 28 of 334 steps in 1 s).
 * Lagged, the step minimizes a convex energy (Coulomb friction with a fixed bound, as Tresca's), the dual update
 * moves the bound, and at convergence λ_n = f_n, so the fixed point is the same. */
RL_HD void rl_avbd_contact_assemble_val(real H[36], real g[6], real K[3], const rl_avbd_contact *c,
                                        const rl_avbd_contact_val *v, const real *dqA, const real *dqB, int side,
                                        real alpha, int kkt, int mm) {
  real f[3], wt[3], fv[3] = {0, 0, 0};
  const real *uA = v->uA, *uB = v->uB, *vA = v->vA, *vB = v->vB;
  rl_avbd_contact_fw(c, v, alpha, kkt, mm, f, wt);
  for (int r = 0; r < 3; r++) {
    const real *w = c->frame + 3 * r;
    real J[6];
    rl_avbd_contact_jac(c, v, r, side, J);
    rl_avbd_add_row(H, g, J, f[r], wt[r]);
    if (r > 0 || c->rad[side] == 0) rl_v3_addscl(fv, w, f[r]);
  }
  if (!kkt) {
    if (c->rad[side] > 0) { /* the normal force acts on the lever to the centre */
      real fn[3];
      rl_v3_scale(fn, c->frame, f[0]);
      rl_avbd_geo_diag(K, fn, side ? vB : vA);
    }
    rl_avbd_geo_diag(K, fv, side ? uB : uA);
  }
  if (c->mu_spin > 0 || c->mu_roll > 0) rl_avbd_contact_ang_rows(c, dqA, dqB, side, kkt, f[0], H, g);
}

/* rl_avbd_contact_assemble_val at the poses A, B */
RL_HD void rl_avbd_contact_assemble(real H[36], real g[6], real K[3], const rl_avbd_contact *c, const rl_avbd_pose *A,
                                    const rl_avbd_pose *B, const real *dqA, const real *dqB, int side, real alpha,
                                    int kkt) {
  rl_avbd_contact_val v;
  rl_avbd_contact_val_eval(&v, c, A, B);
  rl_avbd_contact_assemble_val(H, g, K, c, &v, dqA, dqB, side, alpha, kkt, 0);
}

/* ------------------------------------------------------------ one body's block */

/* The rows C[0..n) with side `side`'s Jacobian J into H, g, K (rl_avbd_joint_assemble's sums):
 * f = λ + ρ(C − α_j C⁰), H += ρ JJᵀ, g += f J, K += the rows' geometric stiffness from the arms;
 * kkt = 1: f = λ, no weights, no K. */
RL_HD void rl_avbd_joint_add_rows(real H[36], real g[6], real K[3], const rl_avbd_joint *jt, const rl_avbd_row *rows,
                                  const real C[6], real J[][6], const rl_avbd_joint_arms *arms, int n, int side,
                                  real alpha_joint, int kkt) {
  real f[6];
  for (int r = 0; r < n; r++) {
    const rl_avbd_row *w = rows + r;
    f[r] = kkt ? w->lambda : w->lambda + w->rho * (C[r] - alpha_joint * w->c0);
    if (w->kind == RL_AVBD_ROW_ANG) rl_avbd_add_row_ang(H, g, J[r], f[r], kkt ? 0 : w->rho);
    else if (jt->kind != RL_AVBD_SLIDE) rl_avbd_add_row_anchor(H, g, J[r], f[r], kkt ? 0 : w->rho, r);
    else rl_avbd_add_row(H, g, J[r], f[r], kkt ? 0 : w->rho);
  }
  if (!kkt) rl_avbd_joint_arms_geo(jt, arms, f, side, K);
}

/* Two-sided rows of joint jt (rows: its rl_avbd_row entries) on the body of side `side` (1: B):
 * f = λ + ρ(C − α_j C⁰), H += ρ JJᵀ, g += f J, K += the rows' geometric stiffness; kkt = 1: f = λ,
 * no weights, no K. */
RL_HD void rl_avbd_joint_assemble(real H[36], real g[6], real K[3], const rl_avbd_joint *jt, const rl_avbd_row *rows,
                                  const rl_avbd_pose *A, const rl_avbd_pose *B, int side, real alpha_joint, int kkt) {
  real C[6], J[6][6];
  rl_avbd_joint_arms arms;
  int n = rl_avbd_joint_side_rows(jt, A, B, side, C, J, &arms);
  rl_avbd_joint_add_rows(H, g, K, jt, rows, C, J, &arms, n, side, alpha_joint, kkt);
}

/* ------------------------------------------------- joint and contact values at a pair of poses */

/* A joint evaluated at one pair of poses: the two-sided rows C[0..n), the lever arms and axes, and
 * (hinge) the coordinate before unwrapping.  Everything a block update of either body and the dual
 * update read from the poses, so one evaluation serves every reader until A or B moves
 * (rl_avbd_joint_val_eval; only hinge, ball and connect joints, rl_avbd_joint_val_ok). */
typedef struct rl_avbd_joint_val {
  real C[6];
  rl_avbd_joint_arms arms;
  real phi_raw; /* hinge: rl_avbd_hinge_raw */
  int n;
} rl_avbd_joint_val;

/* 1 if jt's Jacobians follow from its rl_avbd_joint_val (hinge, ball, connect: anchor and axis rows) */
RL_HD int rl_avbd_joint_val_ok(const rl_avbd_joint *jt) {
  return jt->kind == RL_AVBD_HINGE || jt->kind == RL_AVBD_BALL || jt->kind == RL_AVBD_CONNECT;
}

/* v = jt's rows (rl_avbd_joint_side_rows without a Jacobian) and hinge coordinate at the poses A, B */
RL_HD void rl_avbd_joint_val_eval(rl_avbd_joint_val *v, const rl_avbd_joint *jt, const rl_avbd_pose *A,
                                  const rl_avbd_pose *B) {
  v->n = rl_avbd_joint_side_rows(jt, A, B, 0, v->C, NULL, &v->arms);
  v->phi_raw = jt->kind == RL_AVBD_HINGE ? rl_avbd_hinge_raw(jt, A, B) : 0;
}

/* Side `side`'s Jacobian of the rows of v (rl_avbd_joint_val_ok joints), the entries of
 * rl_avbd_anchor_side and rl_avbd_axis_side:  anchor J_k = ±[e_k, u × e_k] (u = u_A, sign + for A;
 * u_B, − for B), axis J_k = [0, ±(t_k × a)]. */
RL_HD void rl_avbd_joint_val_jac(real J[][6], const rl_avbd_joint *jt, const rl_avbd_joint_val *v, int side) {
  const real *u = side ? v->arms.uB : v->arms.uA;
  real sg = side ? -1 : 1;
  rl_avbd_anchor_jac(J, u, sg);
  if (jt->kind != RL_AVBD_HINGE) return;
  for (int k = 0; k < 2; k++) {
    real c[3];
    rl_v3_cross(c, v->arms.t[k], v->arms.a);
    for (int i = 0; i < 3; i++) {
      J[3 + k][i] = 0;
      J[3 + k][3 + i] = side ? -c[i] : c[i];
    }
  }
}

/* rl_avbd_joint_assemble from the values v of the current poses (rl_avbd_joint_val_ok joints): the same
 * rows, Jacobian entries and sums. */
RL_HD void rl_avbd_joint_assemble_val(real H[36], real g[6], real K[3], const rl_avbd_joint *jt,
                                      const rl_avbd_row *rows, const rl_avbd_joint_val *v, int side, real alpha_joint,
                                      int kkt) {
  real J[6][6];
  rl_avbd_joint_val_jac(J, jt, v, side);
  rl_avbd_joint_add_rows(H, g, K, jt, rows, v->C, J, &v->arms, v->n, side, alpha_joint, kkt);
}

/* R = R(q) after normalizing q */
RL_HD void rl_avbd_pose_sync(rl_avbd_pose *p) {
  rl_q_normalize(p->q);
  rl_q_to_mat(p->R, p->q);
}

/* Move a body by (δx, δθ) relative to its step start (x⁰, q⁰): dx += δx, x = x⁰ + dx, dq ← Exp(δθ)·dq,
 * q = dq·q⁰, R = R(q) (the accumulated dx, dq keep v = dx/h, ω = Log(dq)/h free of cancellation). */
RL_HD void rl_avbd_body_move(rl_avbd_pose *P, real dx[3], real dq[4], const real x0[3], const real q0[4],
                             const real dlin[3], const real dth[3]) {
  rl_v3_add(dx, dx, dlin);
  rl_v3_add(P->x, x0, dx);
  rl_q_boxplus(dq, dth, dq);
  rl_q_mul(P->q, dq, q0);
  rl_avbd_pose_sync(P);
}

/* The part of rl_avbd_body_update after the solve: clamp the increment δz = (δx, δθ) (dz is clamped in
 * place), *ndx, *ndth its sizes, then rl_avbd_body_move. */
RL_HD void rl_avbd_body_apply(rl_avbd_pose *P, real dx[3], real dq[4], const real x0[3], const real q0[4], real dz[6],
                              real max_dx, real max_dth, real *ndx, real *ndth) {
  *ndx = rl_avbd_clamp3_norm(dz, max_dx);
  *ndth = rl_avbd_clamp3_norm(dz + 3, max_dth);
  rl_avbd_body_move(P, dx, dq, x0, q0, dz, dz + 3);
}

/* One block update from the assembled system: H δz = −g (guarded Cholesky, H overwritten), clamp
 * ‖δx‖ ≤ max_dx, ‖δθ‖ ≤ max_dθ, then rl_avbd_body_move.  Returns the guarded pivots; *ndx, *ndth the
 * sizes of the (clamped) update. */
RL_HD int rl_avbd_body_update(rl_avbd_pose *P, real dx[3], real dq[4], const real x0[3], const real q0[4], real H[36],
                              const real g[6], real max_dx, real max_dth, real *ndx, real *ndth) {
  real dz[6];
  int guarded = rl_avbd_chol_solve6(H, g, dz);
  rl_avbd_body_apply(P, dx, dq, x0, q0, dz, max_dx, max_dth, ndx, ndth);
  return guarded;
}

#endif
