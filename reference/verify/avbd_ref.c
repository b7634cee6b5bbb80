/* avbd_ref.c — dense global reference of one AVBD step (see avbd_ref.h).  All math in double, written
 * independently of rl_so3.h / rl_avbd_body.h (only the joint geometry and the state are read from rl_avbd). */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "avbd_ref.h"

/* ------------------------------------------------------------ double SO(3) */

static void dcross(double c[3], const double a[3], const double b[3]) {
  double t[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
  memcpy(c, t, sizeof t);
}
static double ddot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static void dqmul(double r[4], const double a[4], const double b[4]) {
  double t[4] = {
      a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3], a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
      a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1], a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]};
  memcpy(r, t, sizeof t);
}
static void dqconj(double r[4], const double a[4]) {
  r[0] = a[0];
  r[1] = -a[1];
  r[2] = -a[2];
  r[3] = -a[3];
}
static void dqnorm(double q[4]) {
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (int i = 0; i < 4; i++) q[i] /= n;
}
static void dqmat(double R[9], const double q[4]) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
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
static void dmv(double r[3], const double R[9], const double v[3]) {
  double t[3] = {R[0] * v[0] + R[1] * v[1] + R[2] * v[2], R[3] * v[0] + R[4] * v[1] + R[5] * v[2],
                 R[6] * v[0] + R[7] * v[1] + R[8] * v[2]};
  memcpy(r, t, sizeof t);
}
static void dmtv(double r[3], const double R[9], const double v[3]) {
  double t[3] = {R[0] * v[0] + R[3] * v[1] + R[6] * v[2], R[1] * v[0] + R[4] * v[1] + R[7] * v[2],
                 R[2] * v[0] + R[5] * v[1] + R[8] * v[2]};
  memcpy(r, t, sizeof t);
}
/* Exp: rotation vector → unit quaternion */
static void dexp(double q[4], const double w[3]) {
  double t = sqrt(ddot(w, w)), s = t < 1e-8 ? 0.5 - t * t / 48 : sin(0.5 * t) / t;
  q[0] = cos(0.5 * t);
  q[1] = s * w[0];
  q[2] = s * w[1];
  q[3] = s * w[2];
}
/* Log: unit quaternion → rotation vector (shortest, |θ| ≤ π) */
static void dlog(double w[3], const double qin[4]) {
  double q[4] = {qin[0], qin[1], qin[2], qin[3]};
  if (q[0] < 0)
    for (int i = 0; i < 4; i++) q[i] = -q[i];
  double s = sqrt(q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  double k = s < 1e-12 ? 2 / q[0] : 2 * atan2(s, q[0]) / s;
  w[0] = k * q[1];
  w[1] = k * q[2];
  w[2] = k * q[3];
}
/* inverse left Jacobian: Log(Exp(δ)Exp(θ)) ≈ θ + Jl⁻¹(θ)δ;  Jr⁻¹(θ) = Jl⁻¹(−θ) */
static void djl_inv(double J[9], const double th[3]) {
  double t2 = ddot(th, th), t = sqrt(t2), c;
  c = t < 1e-4 ? 1.0 / 12 + t2 / 720 : (1 / t2 - (1 + cos(t)) / (2 * t * sin(t)));
  double W[9] = {0, -th[2], th[1], th[2], 0, -th[0], -th[1], th[0], 0};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double W2 = 0;
      for (int k = 0; k < 3; k++) W2 += W[3 * i + k] * W[3 * k + j];
      J[3 * i + j] = (i == j) - 0.5 * W[3 * i + j] + c * W2;
    }
}

/* ------------------------------------------------------------ problem */

typedef struct dpose {
  double x[3], q[4], R[9];
} dpose;

static void dpose_sync(dpose *p) {
  dqnorm(p->q);
  dqmat(p->R, p->q);
}

static const dpose world = {{0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0, 1, 0, 0, 0, 1}};
static void v3d(double r[3], const real *v) {
  r[0] = v[0];
  r[1] = v[1];
  r[2] = v[2];
}

/* A joint coordinate that carries joint-space terms: a hinge or slide joint of its own (joint j, φ from the
   poses) or a hinge/slide component k of compound joint c (φ is an unknown of the problem, column zcol). */
typedef struct dcoord {
  const rl_avbd_joint *jt; /* parameters, rows, actuator */
  int joint;               /* simple joint index, −1 for a compound component */
  int cmp, k, zcol;        /* compound, component, column of φ in z */
  double phin, dphin;      /* coordinate and rate at the step start */
  int lo, hi, dry;         /* active-set state (rl_avbd_ref_finish): 1 = the row is an equality */
  double fdry;             /* slipping dry friction: the constant force λ_f on φ (0 when sticking/absent) */
} dcoord;

/* rows of the problem, re-evaluated at every Newton iterate */
enum { R_JOINT, R_CMP, R_LIMLO, R_LIMHI, R_DRY, R_CN, R_CT };
typedef struct drow {
  int kind, i, r; /* kind, owner (joint, compound, coordinate, contact), sub-row */
  double target;  /* C = target at the solution */
} drow;

typedef struct prob {
  const rl_avbd *am;
  const rl_model *m;
  double h, alpha, alpha_joint, slop;
  int nb, nz, nq;       /* bodies, unknowns (6 nb + nq), compound coordinate columns */
  dpose *P, *P0;        /* iterate, step start */
  double *I0;           /* [nb×9] */
  int *on;              /* joint j two-sided rows enforced */
  double *phin_j;       /* simple joints: φⁿ (also the unwrap reference) */
  int *zc;              /* compound c: first column of its coordinates in z */
  double (*cq)[4];      /* compound coordinates, iterate [Σ n_c][4] (hinge/slide [0], ball quaternion) */
  double (*cq0)[4];     /* at the step start */
  int *cqa;             /* compound c: first entry in cq */
  int ncoord;
  dcoord *co;
  int nrow, maxrow;
  drow *row;
  int ncon;             /* contacts taken from AVBD's final iterate */
  const rl_avbd_contact *con;
  double (*fslip)[2];   /* contact i: constant tangent forces of a slipping contact */
  int *con_on;          /* contact i: normal row active */
  int *con_stick;       /* contact i: tangent rows are equalities */
  const double *ctrl;   /* [nu] clamped controls (servos) */
  int hist;             /* the step follows another (compound φ̇ⁿ: the engine's difference quotient) */
  double eps;           /* compliance of the rows in the Newton matrix (m/N), see rl_avbd_ref_finish */
  int pre;              /* 1: solved before the step (no active set known: limits, dry friction, contacts out) */
} prob;

static const dpose *pose_of(const prob *pb, int s) { return s < 0 ? &world : pb->P + s; }

/* rows of joint jt at the iterate: C[0..n), JA, JB (6 columns each: δx, δθ); returns n */
static int joint_rows(const rl_avbd_joint *jt, const dpose *A, const dpose *B, double C[6], double JA[6][6],
                      double JB[6][6]) {
  double rA[3], rB[3], uA[3], uB[3], pA[3], pB[3];
  v3d(rA, jt->rA);
  v3d(rB, jt->rB);
  dmv(uA, A->R, rA);
  dmv(uB, B->R, rB);
  for (int i = 0; i < 3; i++) {
    pA[i] = A->x[i] + uA[i];
    pB[i] = B->x[i] + uB[i];
  }
  int n = 0;
  memset(JA, 0, sizeof(double) * 36);
  memset(JB, 0, sizeof(double) * 36);
  if (jt->kind != RL_AVBD_SLIDE) { /* anchor rows C = p_A − p_B */
    for (int k = 0; k < 3; k++) {
      double e[3] = {0, 0, 0}, c[3];
      e[k] = 1;
      C[k] = pA[k] - pB[k];
      dcross(c, uA, e);
      for (int i = 0; i < 3; i++) {
        JA[k][i] = e[i];
        JA[k][3 + i] = c[i];
      }
      dcross(c, uB, e);
      for (int i = 0; i < 3; i++) {
        JB[k][i] = -e[i];
        JB[k][3 + i] = -c[i];
      }
    }
    n = 3;
  }
  if (jt->kind == RL_AVBD_HINGE) { /* axis rows C_k = (R_A t_k)·(R_B ax_B) */
    double t[2][3], tl[3], a[3], ab[3];
    v3d(tl, jt->t1A);
    dmv(t[0], A->R, tl);
    v3d(tl, jt->t2A);
    dmv(t[1], A->R, tl);
    v3d(ab, jt->axB);
    dmv(a, B->R, ab);
    for (int k = 0; k < 2; k++) {
      double c[3];
      C[n] = ddot(t[k], a);
      dcross(c, t[k], a);
      for (int i = 0; i < 3; i++) {
        JA[n][3 + i] = c[i];
        JB[n][3 + i] = -c[i];
      }
      n++;
    }
  }
  if (jt->kind == RL_AVBD_SLIDE) { /* lateral rows C_k = t_k·(p_B − p_A) */
    double t[2][3], tl[3], dd[3], e[3];
    v3d(tl, jt->t1A);
    dmv(t[0], A->R, tl);
    v3d(tl, jt->t2A);
    dmv(t[1], A->R, tl);
    for (int i = 0; i < 3; i++) {
      dd[i] = pB[i] - pA[i];
      e[i] = pB[i] - A->x[i];
    }
    for (int k = 0; k < 2; k++) {
      double cb[3], ca[3];
      C[n] = ddot(t[k], dd);
      dcross(cb, uB, t[k]);
      dcross(ca, t[k], e);
      for (int i = 0; i < 3; i++) {
        JA[n][i] = -t[k][i];
        JA[n][3 + i] = ca[i];
        JB[n][i] = t[k][i];
        JB[n][3 + i] = cb[i];
      }
      n++;
    }
  }
  if (jt->kind == RL_AVBD_SLIDE || jt->kind == RL_AVBD_WELD) { /* C = Log(q_B (q_A q_rel0)⁻¹) */
    double qr[4] = {jt->qrel0[0], jt->qrel0[1], jt->qrel0[2], jt->qrel0[3]}, qa[4], c[4], e[4], th[3], Jl[9], Jr[9],
           mth[3];
    dqmul(qa, A->q, qr);
    dqconj(c, qa);
    dqmul(e, B->q, c);
    dlog(th, e);
    djl_inv(Jl, th);
    for (int i = 0; i < 3; i++) mth[i] = -th[i];
    djl_inv(Jr, mth);
    for (int k = 0; k < 3; k++) {
      C[n + k] = th[k];
      for (int i = 0; i < 3; i++) {
        JA[n + k][3 + i] = -Jr[3 * k + i];
        JB[n + k][3 + i] = Jl[3 * k + i];
      }
    }
    n += 3;
  }
  return n;
}

/* hinge/slide coordinate φ and its gradient (as avbd.c's rl_avbd_joint_coord) */
static double joint_coord(const rl_avbd_joint *jt, const dpose *A, const dpose *B, double near, double dA[6],
                          double dB[6]) {
  memset(dA, 0, sizeof(double) * 6);
  memset(dB, 0, sizeof(double) * 6);
  if (jt->kind == RL_AVBD_HINGE) {
    double q0[4] = {jt->qrel0[0], jt->qrel0[1], jt->qrel0[2], jt->qrel0[3]}, c[4], t[4], r[4], ab[3], a[3];
    dqconj(c, q0);
    dqconj(t, A->q);
    dqmul(r, c, t);
    dqmul(r, r, B->q);
    v3d(ab, jt->axB);
    double phi = jt->qpos0 + 2 * atan2(r[1] * ab[0] + r[2] * ab[1] + r[3] * ab[2], r[0]);
    phi = near + remainder(phi - near, 2 * 3.14159265358979323846);
    dmv(a, B->R, ab);
    for (int i = 0; i < 3; i++) {
      dA[3 + i] = -a[i];
      dB[3 + i] = a[i];
    }
    return phi;
  }
  double rA[3], rB[3], uA[3], uB[3], pA[3], pB[3], d[3], e[3], al[3], a[3], cb[3], ca[3];
  v3d(rA, jt->rA);
  v3d(rB, jt->rB);
  v3d(al, jt->axA);
  dmv(uA, A->R, rA);
  dmv(uB, B->R, rB);
  dmv(a, A->R, al);
  for (int i = 0; i < 3; i++) {
    pA[i] = A->x[i] + uA[i];
    pB[i] = B->x[i] + uB[i];
    d[i] = pB[i] - pA[i];
    e[i] = pB[i] - A->x[i];
  }
  dcross(cb, uB, a);
  dcross(ca, a, e);
  for (int i = 0; i < 3; i++) {
    dA[i] = -a[i];
    dA[3 + i] = ca[i];
    dB[i] = a[i];
    dB[3 + i] = cb[i];
  }
  return jt->qpos0 + ddot(a, d);
}

static int has_coord(const rl_avbd_joint *jt) { return jt->kind == RL_AVBD_HINGE || jt->kind == RL_AVBD_SLIDE; }

/* rigid frame (rotation quaternion Q, origin o) composed: (Q₁, o₁)∘(Q₂, o₂) = (Q₁Q₂, o₁ + R₁o₂) */
static void dframe_mul(double Q[4], double o[3], const double Q1[4], const double o1[3], const double Q2[4],
                       const double o2[3]) {
  double R1[9], t[3], q[4];
  dqmat(R1, Q1);
  dmv(t, R1, o2);
  dqmul(q, Q1, Q2);
  dqnorm(q);
  for (int i = 0; i < 3; i++) o[i] = o1[i] + t[i];
  memcpy(Q, q, sizeof q);
}

/* Compound joint c (bodies A → B through components 1..n) written with its coordinates q as unknowns:
 * the target COM frame of B is  T_B(A, q) = A ∘ X ∘ T_1(q_1) ∘ … ∘ T_n(q_n) ∘ Y⁻¹  (X: the zero frame in A's
 * COM frame, Y: B's body frame in B's COM frame; slide T_k = Trans(a_k(q_k − q0_k)), hinge
 * T_k = Trans(p_k) Rot(a_k, q_k − q0_k) Trans(−p_k), ball T_k = Trans(p_k) Rot(q_k) Trans(−p_k)), and the six
 * rows are  C_lin = x_B − x_T (m),  C_ang = Log(q_B q_T⁻¹) (rad).  Their Jacobians (world twists):
 *   B: [I, 0; 0, Jl⁻¹(C_ang)];  A: [−I, [x_T − x_A]×; 0, −Jr⁻¹(C_ang)];
 *   dof of component k with the frame G before it (rotation R_G, origin o_G), axis w = R_G a_k, centre
 *   c = o_G + R_G p_k:  hinge (ω, v) = (w, w × (x_T − c)), slide (0, w), ball ω = R_G e_i (q_k ← Exp(δ)q_k in
 *   G's frame), v = ω × (x_T − c); column (−v, −Jr⁻¹ω).
 * The same manifold as the engine's 6 − dof rows (which eliminate q), so the same constrained minimum. */
static void cmp_rows(const prob *pb, int ci, double C[6], double JA[6][6], double JB[6][6], double Jq[6][6],
                     double Sw[6][6], double oF[3]) {
  const rl_avbd_compound *c = pb->am->cmp + ci;
  const rl_avbd_joint *jt = NULL;
  for (int j = 0; j < pb->am->njoint; j++)
    if (pb->am->joint[j].kind == RL_AVBD_COMPOUND && pb->am->joint[j].cmp == ci) jt = pb->am->joint + j;
  const dpose *A = pose_of(pb, jt->a), *B = pose_of(pb, jt->b);
  const double(*q)[4] = (const double(*)[4])pb->cq + pb->cqa[ci];
  double Q[4], o[3], Qx[4], ox[3], cen[6][3], om[6][3], isl[6];
  for (int i = 0; i < 4; i++) Qx[i] = c->xq[i];
  v3d(ox, c->xp);
  dframe_mul(Q, o, A->q, A->x, Qx, ox);
  int nd = 0;
  for (int k = 0; k < c->n; k++) {
    double R[9], a[3], w[3], pk[3], t[3];
    dqmat(R, Q);
    v3d(a, c->axis[k]);
    v3d(pk, c->pos[k]);
    dmv(w, R, a);
    dmv(t, R, pk);
    double cc[3] = {o[0] + t[0], o[1] + t[1], o[2] + t[2]};
    if (c->type[k] == RL_JNT_SLIDE) {
      memcpy(om[nd], w, sizeof w);
      isl[nd++] = 1;
      for (int i = 0; i < 3; i++) o[i] += w[i] * (q[k][0] - c->qpos0[k]);
      continue;
    }
    if (c->type[k] == RL_JNT_HINGE) {
      memcpy(om[nd], w, sizeof w);
      memcpy(cen[nd], cc, sizeof cc);
      isl[nd++] = 0;
    } else
      for (int e = 0; e < 3; e++) {
        for (int i = 0; i < 3; i++) om[nd][i] = R[3 * i + e];
        memcpy(cen[nd], cc, sizeof cc);
        isl[nd++] = 0;
      }
    double ql[4], mp[3], Rl[9], Qn[4], on[3];
    if (c->type[k] == RL_JNT_BALL) memcpy(ql, q[k], sizeof ql);
    else {
      double th[3] = {a[0] * (q[k][0] - c->qpos0[k]), a[1] * (q[k][0] - c->qpos0[k]), a[2] * (q[k][0] - c->qpos0[k])};
      dexp(ql, th);
    }
    dqnorm(ql);
    dqmat(Rl, ql);
    dmv(mp, Rl, pk); /* Rot ∘ Trans(−p_k) = the frame (ql, −R_l p_k) */
    for (int i = 0; i < 3; i++) mp[i] = -mp[i];
    double id[4] = {1, 0, 0, 0};
    dframe_mul(Qn, on, Q, o, id, pk);   /* Trans(p_k) */
    dframe_mul(Qn, on, Qn, on, ql, mp); /* Rot, Trans(−p_k) */
    memcpy(Q, Qn, sizeof Qn);
    memcpy(o, on, sizeof on);
  }
  /* the motion subspace at B's body origin o_F (world): hinge/ball (ω × (o_F − c), ω), slide (w, 0) */
  if (Sw) {
    for (int dd = 0; dd < nd; dd++) {
      double r[3] = {o[0] - cen[dd][0], o[1] - cen[dd][1], o[2] - cen[dd][2]}, v[3];
      if (isl[dd]) {
        memcpy(Sw[dd], om[dd], sizeof v);
        memset(Sw[dd] + 3, 0, sizeof v);
      } else {
        dcross(v, om[dd], r);
        memcpy(Sw[dd], v, sizeof v);
        memcpy(Sw[dd] + 3, om[dd], sizeof v);
      }
    }
    memcpy(oF, o, sizeof(double) * 3);
  }
  /* Y⁻¹ = (Qy⁻¹, −Ry⁻¹ y) */
  double Qy[4], Qyi[4], yo[3], Ryi[9], yi[3];
  for (int i = 0; i < 4; i++) Qy[i] = c->yq[i];
  dqconj(Qyi, Qy);
  dqmat(Ryi, Qyi);
  v3d(yo, c->yp);
  dmv(yi, Ryi, yo);
  for (int i = 0; i < 3; i++) yi[i] = -yi[i];
  double QT[4], xT[3], e[4], cj[4], th[3], Jl[9], Jr[9], mth[3];
  dframe_mul(QT, xT, Q, o, Qyi, yi);
  dqconj(cj, QT);
  dqmul(e, B->q, cj);
  dlog(th, e);
  djl_inv(Jl, th);
  for (int i = 0; i < 3; i++) mth[i] = -th[i];
  djl_inv(Jr, mth);
  memset(JA, 0, sizeof(double) * 36);
  memset(JB, 0, sizeof(double) * 36);
  memset(Jq, 0, sizeof(double) * 36);
  double rA[3] = {xT[0] - A->x[0], xT[1] - A->x[1], xT[2] - A->x[2]};
  for (int k = 0; k < 3; k++) {
    C[k] = B->x[k] - xT[k];
    C[3 + k] = th[k];
    JB[k][k] = 1;
    JA[k][k] = -1;
    for (int i = 0; i < 3; i++) {
      JB[3 + k][3 + i] = Jl[3 * k + i];
      JA[3 + k][3 + i] = -Jr[3 * k + i];
    }
  }
  /* [r]× δθ rows of JA's linear part: C_lin gains r × δθ_A → −(δθ × r) */
  JA[0][4] = -rA[2], JA[0][5] = rA[1];
  JA[1][3] = rA[2], JA[1][5] = -rA[0];
  JA[2][3] = -rA[1], JA[2][4] = rA[0];
  for (int dd = 0; dd < nd; dd++) {
    double v[3], w[3] = {0, 0, 0};
    if (isl[dd]) memcpy(v, om[dd], sizeof v);
    else {
      double r[3] = {xT[0] - cen[dd][0], xT[1] - cen[dd][1], xT[2] - cen[dd][2]};
      memcpy(w, om[dd], sizeof w);
      dcross(v, w, r);
    }
    for (int k = 0; k < 3; k++) {
      Jq[k][dd] = -v[k];
      Jq[3 + k][dd] = -(Jr[3 * k] * w[0] + Jr[3 * k + 1] * w[1] + Jr[3 * k + 2] * w[2]);
    }
  }
}

/* Rates of compound c's coordinates at the step start from the body velocities: the least-squares solution
 * of S q̇ = ξ, ξ = (v_B(o_F) − v_A(o_F), ω_B − ω_A) the relative twist at B's body origin (world; the
 * normal equations SᵀS q̇ = Sᵀξ).  Exact when ξ lies in the motion subspace; the least squares is the rate the
 * engine defines for a twist off it (its velocities carry the step's constraint residual). */
static int cmp_rate(const prob *pb, const rl_avbd_joint *jt, int ci, double *qd) {
  const rl_avbd *am = pb->am;
  double C[6], JA[6][6], JB[6][6], Jq[6][6], S[6][6], oF[3], xi[6] = {0, 0, 0, 0, 0, 0};
  cmp_rows(pb, ci, C, JA, JB, Jq, S, oF);
  for (int side = 0; side < 2; side++) {
    int b = side ? jt->b : jt->a;
    if (b < 0) continue;
    double v[3], w[3], r[3], c[3];
    v3d(v, am->vel + 6 * b);
    v3d(w, am->vel + 6 * b + 3);
    for (int i = 0; i < 3; i++) r[i] = oF[i] - pb->P[b].x[i];
    dcross(c, w, r);
    for (int i = 0; i < 3; i++) {
      xi[i] += (side ? 1 : -1) * (v[i] + c[i]);
      xi[3 + i] += (side ? 1 : -1) * w[i];
    }
  }
  int nd = am->cmp[ci].ndof;
  double M[36], rhs[6];
  for (int a = 0; a < nd; a++) {
    rhs[a] = 0;
    for (int i = 0; i < 6; i++) rhs[a] += S[a][i] * xi[i];
    for (int b = 0; b < nd; b++) {
      M[nd * a + b] = 0;
      for (int i = 0; i < 6; i++) M[nd * a + b] += S[a][i] * S[b][i];
    }
  }
  lapack_int ip[6];
  if (LAPACKE_dgesv(LAPACK_ROW_MAJOR, nd, 1, M, nd, ip, rhs, 1)) return -1;
  memcpy(qd, rhs, sizeof(double) * (size_t)nd);
  return 0;
}

/* coordinate o's value φ and its gradient grad[nz] at the iterate */
static double coord_eval(const prob *pb, const dcoord *o, double *grad) {
  memset(grad, 0, sizeof(double) * (size_t)pb->nz);
  if (o->joint < 0) {
    grad[o->zcol] = 1;
    return pb->cq[pb->cqa[o->cmp] + o->k][0];
  }
  const rl_avbd_joint *jt = o->jt;
  double dA[6], dB[6];
  double phi = joint_coord(jt, pose_of(pb, jt->a), pose_of(pb, jt->b), o->phin, dA, dB);
  for (int i = 0; i < 6; i++) {
    if (jt->a >= 0) grad[6 * jt->a + i] += dA[i];
    grad[6 * jt->b + i] += dB[i];
  }
  return phi;
}

/* MuJoCo's PD position servo as the engine applies it on φ (implicit in φ̇ = (φ − φⁿ)/h):
 * F = gain·u + b₀ + b₁·gφ + b₂·g(φ − φⁿ)/h (gain affine: + g₁·gφⁿ + g₂·gφ̇ⁿ), clamped to forcerange; joint
 * force τ = g·F; curvature −∂τ/∂φ = −g²(b₁ + b₂/h) unclamped, else 0 */
static double servo_pd(const prob *pb, const dcoord *o, double phi, double *k) {
  const rl_model *m = pb->m;
  int u = o->jt->act;
  *k = 0;
  if (u < 0 || (m->opt.disableflags & RL_DSBL_ACTUATION)) return 0;
  double g = m->actuator_gear[u], h = pb->h;
  const real *gp = m->actuator_gainprm + RL_NGAIN * u, *bp = m->actuator_biasprm + RL_NBIAS * u;
  double gain = gp[0], b1 = 0, b2 = 0;
  if (m->actuator_gaintype[u] == RL_GAIN_AFFINE) gain += gp[1] * g * o->phin + gp[2] * g * o->dphin;
  double F = gain * pb->ctrl[u];
  if (m->actuator_biastype[u] == RL_BIAS_AFFINE) {
    b1 = bp[1];
    b2 = bp[2];
    F += bp[0] + b1 * g * phi + b2 * g * (phi - o->phin) / h;
  }
  int clamped = 0;
  if (m->actuator_forcelimited[u]) {
    const real *fr = m->actuator_forcerange + 2 * u;
    if (F < fr[0]) F = fr[0], clamped = 1;
    if (F > fr[1]) F = fr[1], clamped = 1;
  }
  *k = clamped ? 0 : fmax(-g * g * (b1 + b2 / h), 0);
  return g * F;
}

/* smooth joint-space energy on φ: gradient G and curvature k (damping, stiffness, armature, servo, and a
   slipping dry-friction row's constant force) */
static void coord_energy(const prob *pb, const dcoord *o, double phi, double *G, double *k) {
  const rl_avbd_joint *jt = o->jt;
  double h = pb->h, ks;
  *G = *k = 0;
  if (!(pb->m->opt.disableflags & RL_DSBL_PASSIVE)) {
    *G += jt->damping * (phi - o->phin) / h + jt->stiffness * (phi - jt->spring);
    *k += jt->damping / h + jt->stiffness;
  }
  *G += jt->armature * (phi - o->phin - h * o->dphin) / (h * h);
  *k += jt->armature / (h * h);
  *G -= servo_pd(pb, o, phi, &ks);
  *k += ks;
  *G += o->fdry;
}

/* contact i's rows at the iterate: C (normal through the centres of curvature, tangents at the material
   points, rl_avbd_contact's definitions) and the Jacobians on A and B */
static void contact_rows(const prob *pb, int i, double C[3], double JA[3][6], double JB[3][6]) {
  const rl_avbd_contact *k = pb->con + i;
  const dpose *A = pose_of(pb, k->a), *B = pose_of(pb, k->b);
  double pA[3], pB[3], cA[3], cB[3], l[3], uA[3], uB[3], vA[3], vB[3];
  v3d(l, k->rA), dmv(uA, A->R, l);
  v3d(l, k->rB), dmv(uB, B->R, l);
  v3d(l, k->cA), dmv(vA, A->R, l);
  v3d(l, k->cB), dmv(vB, B->R, l);
  for (int j = 0; j < 3; j++) {
    pA[j] = A->x[j] + uA[j];
    pB[j] = B->x[j] + uB[j];
    cA[j] = A->x[j] + vA[j];
    cB[j] = B->x[j] + vB[j];
  }
  for (int r = 0; r < 3; r++) {
    double w[3], dd[3], xa[3], xb[3];
    v3d(w, k->frame + 3 * r);
    for (int j = 0; j < 3; j++) dd[j] = r == 0 ? cB[j] - cA[j] : pB[j] - pA[j];
    C[r] = ddot(w, dd) - (r == 0 ? (double)k->rad[0] + (double)k->rad[1] : 0);
    dcross(xa, r == 0 ? vA : uA, w);
    dcross(xb, r == 0 ? vB : uB, w);
    for (int j = 0; j < 3; j++) {
      JA[r][j] = -w[j];
      JA[r][3 + j] = -xa[j];
      JB[r][j] = w[j];
      JB[r][3 + j] = xb[j];
    }
  }
}

/* one row's C and its gradient jr[nz] at the iterate */
static double row_eval(const prob *pb, const drow *rw, double *jr) {
  const rl_avbd *am = pb->am;
  memset(jr, 0, sizeof(double) * (size_t)pb->nz);
  double C[6], JA[6][6], JB[6][6], Jq[6][6];
  int a = -1, b = -1;
  switch (rw->kind) {
  case R_JOINT: {
    const rl_avbd_joint *jt = am->joint + rw->i;
    joint_rows(jt, pose_of(pb, jt->a), pose_of(pb, jt->b), C, JA, JB);
    a = jt->a, b = jt->b;
    break;
  }
  case R_CMP: {
    cmp_rows(pb, rw->i, C, JA, JB, Jq, NULL, NULL);
    const rl_avbd_joint *jt = NULL;
    for (int j = 0; j < am->njoint; j++)
      if (am->joint[j].kind == RL_AVBD_COMPOUND && am->joint[j].cmp == rw->i) jt = am->joint + j;
    a = jt->a, b = jt->b;
    for (int d = 0; d < am->cmp[rw->i].ndof; d++) jr[6 * pb->nb + pb->zc[rw->i] + d] = Jq[rw->r][d];
    break;
  }
  case R_LIMLO:
  case R_LIMHI:
  case R_DRY: {
    const dcoord *o = pb->co + rw->i;
    double phi = coord_eval(pb, o, jr);
    if (rw->kind == R_LIMHI)
      for (int z = 0; z < pb->nz; z++) jr[z] = -jr[z];
    return rw->kind == R_LIMLO ? phi : rw->kind == R_LIMHI ? -phi : phi - o->phin;
  }
  default: { /* contact rows */
    double Cc[3], A3[3][6], B3[3][6];
    contact_rows(pb, rw->i, Cc, A3, B3);
    a = pb->con[rw->i].a, b = pb->con[rw->i].b;
    C[rw->r] = Cc[rw->r];
    memcpy(JA[rw->r], A3[rw->r], sizeof A3[0]);
    memcpy(JB[rw->r], B3[rw->r], sizeof B3[0]);
    break;
  }
  }
  for (int i = 0; i < 6; i++) {
    if (a >= 0) jr[6 * a + i] += JA[rw->r][i];
    if (b >= 0) jr[6 * b + i] += JB[rw->r][i];
  }
  return C[rw->r];
}

/* The target of a one-sided row (joint limit, contact normal) from its value c0 at the step start: no closing of a
   gap (0), a penetration within the slop s kept (c0), 1 − α of the penetration beyond s pushed out:
   min(c0, 0) + (1 − α)·max(−c0 − s, 0) */
static double one_sided_target(const prob *pb, double c0) {
  return fmin(c0, 0) + (1 - pb->alpha) * fmax(-c0 - pb->slop, 0);
}

/* the bound of joint j's limit row on side hi (0 lower, 1 upper): the joint's margin inside the range, where
   MuJoCo's limit row has its zero */
static double limit_bound(const rl_model *m, const rl_data *d, int j, int hi) {
  return hi ? (double)d->jnt_range[2 * j + 1] - (double)m->jnt_margin[j] : (double)d->jnt_range[2 * j] + (double)m->jnt_margin[j];
}

/* row value minus its target; limit rows are written on φ with C = φ − lo, hi − φ (lo, hi: limit_bound):
   row_eval returns ±φ */
static double row_residual(const prob *pb, const drow *rw, double *jr, const rl_data *d) {
  double v = row_eval(pb, rw, jr);
  if (rw->kind == R_LIMLO) v -= limit_bound(pb->m, d, pb->co[rw->i].jt->jnt, 0);
  if (rw->kind == R_LIMHI) v += limit_bound(pb->m, d, pb->co[rw->i].jt->jnt, 1);
  return v - rw->target;
}

/* assemble the KKT matrix K (N×N, N = nz + nrow, row-major) and right-hand side at the iterate; returns
   max |C − target| and, through gmax, ‖g + Jᵀλ‖∞ for the multipliers lam (NULL: not computed), split by unit:
   gmax[0] over the force rows δx (N), gmax[1] over the torque rows δθ (N m) */
static double assemble(const prob *pb, const rl_avbd_ref *ref, const rl_data *d, double *K, double *rhs,
                       const double *lam, double *gmax) {
  int nb = pb->nb, nz = pb->nz, N = nz + pb->nrow;
  const rl_avbd *am = pb->am;
  double h = pb->h, ih2 = 1 / (h * h), primal = 0;
  memset(K, 0, sizeof(double) * (size_t)N * (size_t)N);
  memset(rhs, 0, sizeof(double) * (size_t)N);
  double *g = rhs, *jr = malloc(sizeof(double) * (size_t)nz); /* gradient first, negated at the end */
  for (int s = 0; s < nb; s++) {
    const dpose *P = pb->P + s;
    double m = am->mass[s], th[3], Ji[9], It[3], c[4], e[4];
    for (int i = 0; i < 3; i++) {
      g[6 * s + i] = m * ih2 * (P->x[i] - ref->xp[3 * s + i]);
      K[(size_t)(6 * s + i) * N + 6 * s + i] = m * ih2;
    }
    dqconj(c, ref->qp + 4 * s);
    dqmul(e, P->q, c);
    dlog(th, e);
    djl_inv(Ji, th);
    const double *I0 = pb->I0 + 9 * s;
    dmv(It, I0, th);
    double gr[3];
    dmtv(gr, Ji, It);
    for (int i = 0; i < 3; i++) g[6 * s + 3 + i] = ih2 * gr[i];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        double v = 0;
        for (int k = 0; k < 3; k++)
          for (int l = 0; l < 3; l++) v += Ji[3 * k + i] * I0[3 * k + l] * Ji[3 * l + j];
        K[(size_t)(6 * s + 3 + i) * N + 6 * s + 3 + j] = ih2 * v;
      }
  }
  /* joint-space energies on the coordinates (Gauss–Newton: k ∇φ∇φᵀ) */
  for (int c = 0; c < pb->ncoord; c++) {
    const dcoord *o = pb->co + c;
    double G, k, phi = coord_eval(pb, o, jr);
    coord_energy(pb, o, phi, &G, &k);
    for (int i = 0; i < nz; i++) {
      if (jr[i] == 0) continue;
      g[i] += G * jr[i];
      for (int l = 0; l < nz; l++) K[(size_t)i * N + l] += k * jr[i] * jr[l];
    }
  }
  /* slipping contacts: their tangent forces, constant */
  for (int i = 0; i < pb->ncon; i++) {
    if (pb->fslip[i][0] == 0 && pb->fslip[i][1] == 0) continue;
    double Cc[3], A3[3][6], B3[3][6];
    contact_rows(pb, i, Cc, A3, B3);
    for (int r = 1; r < 3; r++)
      for (int j = 0; j < 6; j++) {
        if (pb->con[i].a >= 0) g[6 * pb->con[i].a + j] += pb->fslip[i][r - 1] * A3[r][j];
        if (pb->con[i].b >= 0) g[6 * pb->con[i].b + j] += pb->fslip[i][r - 1] * B3[r][j];
      }
  }
  for (int r = 0; r < pb->nrow; r++) {
    int R = nz + r;
    double cr = row_residual(pb, pb->row + r, jr, d);
    rhs[R] = cr; /* negated below */
    primal = fmax(primal, fabs(cr));
    for (int i = 0; i < nz; i++) {
      K[(size_t)R * N + i] = jr[i];
      K[(size_t)i * N + R] = jr[i];
    }
    K[(size_t)R * N + R] = -pb->eps;
  }
  if (gmax) {
    gmax[0] = gmax[1] = 0;
    for (int i = 0; i < nz; i++) {
      double v = g[i];
      for (int r = 0; r < pb->nrow && lam; r++) v += K[(size_t)(nz + r) * N + i] * lam[r];
      if (i < 6 * nb) gmax[i % 6 >= 3] = fmax(gmax[i % 6 >= 3], fabs(v));
      else gmax[1] = fmax(gmax[1], fabs(v)); /* a compound coordinate's generalized force (N or N m) */
    }
  }
  for (int i = 0; i < N; i++) rhs[i] = -rhs[i];
  free(jr);
  return primal;
}

static int add_row(prob *pb, int kind, int i, int r, double target) {
  if (pb->nrow == pb->maxrow) {
    int mx = pb->maxrow ? 2 * pb->maxrow : 64;
    drow *n = realloc(pb->row, sizeof(drow) * (size_t)mx);
    if (!n) return -1;
    pb->row = n;
    pb->maxrow = mx;
  }
  pb->row[pb->nrow++] = (drow){kind, i, r, target};
  return 0;
}

static void prob_free(prob *pb) {
  if (!pb) return;
  free(pb->P);
  free(pb->P0);
  free(pb->I0);
  free(pb->on);
  free(pb->phin_j);
  free(pb->zc);
  free(pb->cq);
  free(pb->cq0);
  free(pb->cqa);
  free(pb->co);
  free(pb->row);
  free(pb->fslip);
  free(pb->con_on);
  free(pb->con_stick);
  free((void *)pb->ctrl);
  free(pb);
}

/* Terms of the engine's step this reference does not rebuild, counted into rl_avbd_ref.omitted: tendons that
   exert a force (springs, dampers, actuators on them), actuators other than the one PD servo per joint that
   servo_pd models (an actuator that is not its coordinate's first, activation dynamics, muscle gain or bias, and
   every actuator on a site, a ball or free joint or a body, which no hinge/slide coordinate carries), fluid forces,
   the rows on scalar coordinates (tendon limits, joint and tendon equalities: rl_avbd_crow), and per ball or free
   joint (rl_avbd_mdof) its dof terms (damping, spring, armature), its friction loss and a ball's cone limit. */
static int unmodelled_terms(const prob *pb, const rl_avbd *am, const rl_model *m) {
  int n = 0, dis = m->opt.disableflags;
  for (int k = 0; k < am->nmdof; k++) {
    const rl_avbd_mdof *f = am->mdof + k;
    int dof = m->jnt_dofadr[f->jnt], dofterms = !(dis & RL_DSBL_PASSIVE) && m->jnt_stiffness[f->jnt] != 0, fric = 0;
    for (int i = 0; i < f->nd; i++) {
      dofterms |= m->dof_armature[dof + i] != 0 || (!(dis & RL_DSBL_PASSIVE) && m->dof_damping[dof + i] != 0);
      fric |= m->dof_frictionloss[dof + i] > 0 && !(dis & (RL_DSBL_FRICTIONLOSS | RL_DSBL_CONSTRAINT));
    }
    n += dofterms + fric +
         (f->type == RL_JNT_BALL && m->jnt_limited[f->jnt] && !(dis & (RL_DSBL_LIMIT | RL_DSBL_CONSTRAINT)));
  }
  for (int t = 0; t < m->ntendon && !(dis & RL_DSBL_PASSIVE); t++)
    n += m->tendon_stiffness[t] != 0 || m->tendon_damping[t] != 0;
  for (int u = 0; u < m->nu && !(dis & RL_DSBL_ACTUATION); u++) {
    int first = 0;
    for (int c = 0; c < pb->ncoord; c++) first |= pb->co[c].jt->act == u; /* every hinge/slide coordinate */
    n += m->actuator_trntype[u] == RL_TRN_TENDON || m->actuator_dyntype[u] != RL_DYN_NONE ||
         m->actuator_gaintype[u] == RL_GAIN_MUSCLE || m->actuator_biastype[u] == RL_BIAS_MUSCLE || !first;
  }
  if (m->opt.density > 0 || m->opt.viscosity > 0) n++;
  return n + am->ncrow; /* tendon limits, joint and tendon equalities */
}

int rl_avbd_ref_begin(rl_avbd_ref *ref, const rl_avbd *am, const rl_model *m, const rl_data *d) {
  memset(ref, 0, sizeof *ref);
  prob *pb = calloc(1, sizeof(prob));
  if (!pb) return -1;
  ref->pb = pb;
  int dis = m->opt.disableflags, nb = am->nb;
  pb->am = am;
  pb->m = m;
  pb->h = (double)m->opt.timestep;
  pb->alpha = (double)am->prm.alpha;
  pb->alpha_joint = (double)am->prm.alpha_joint;
  pb->slop = (double)am->prm.slop;
  pb->nb = nb;
  pb->hist = am->steps > am->step0;
  ref->nb = nb;
  pb->on = calloc((size_t)am->njoint + 1, sizeof(int));
  pb->phin_j = calloc((size_t)am->njoint + 1, sizeof(double));
  pb->zc = calloc((size_t)am->ncmp + 1, sizeof(int));
  pb->cqa = calloc((size_t)am->ncmp + 1, sizeof(int));
  pb->cq = calloc((size_t)am->ncmp * RL_AVBD_MAXCOMP + 1, sizeof(double[4]));
  pb->cq0 = calloc((size_t)am->ncmp * RL_AVBD_MAXCOMP + 1, sizeof(double[4]));
  pb->co = calloc((size_t)am->njoint * RL_AVBD_MAXCOMP + 1, sizeof(dcoord));
  pb->P = calloc((size_t)nb + 1, sizeof(dpose));
  pb->P0 = calloc((size_t)nb + 1, sizeof(dpose));
  pb->I0 = calloc((size_t)nb * 9 + 1, sizeof(double));
  double *ctrl = calloc((size_t)m->nu + 1, sizeof(double));
  pb->ctrl = ctrl;
  ref->x = calloc((size_t)nb * 3 + 1, sizeof(double));
  ref->q = calloc((size_t)nb * 4 + 1, sizeof(double));
  ref->xp = calloc((size_t)nb * 3 + 1, sizeof(double));
  ref->qp = calloc((size_t)nb * 4 + 1, sizeof(double));
  if (!pb->on || !pb->phin_j || !pb->zc || !pb->cqa || !pb->cq || !pb->cq0 || !pb->co || !pb->P || !pb->P0 ||
      !pb->I0 || !ctrl || !ref->x || !ref->q || !ref->xp || !ref->qp)
    return -1;
  int ctrl_ok = 1; /* the engine's servos act on zero controls after a bad (non-finite or huge) one */
  for (int u = 0; u < m->nu; u++) ctrl_ok &= isfinite((double)d->ctrl[u]) && fabs((double)d->ctrl[u]) <= RL_MAXVAL;
  for (int u = 0; u < m->nu; u++) ctrl[u] = ctrl_ok ? (double)rl_ctrl_clamp(m, d, u) : 0;
  /* step start, frozen inertia, prediction */
  double h = pb->h, grav[3] = {0, 0, 0};
  if (!(dis & RL_DSBL_GRAVITY)) v3d(grav, m->opt.gravity);
  for (int s = 0; s < nb; s++) {
    dpose *P = pb->P0 + s;
    v3d(P->x, am->pose[s].x);
    for (int i = 0; i < 4; i++) P->q[i] = am->pose[s].q[i];
    dpose_sync(P);
    double Ib[3], v[3], w[3], f[3], tau[3];
    v3d(Ib, am->inertia + 3 * s);
    v3d(v, am->vel + 6 * s);
    v3d(w, am->vel + 6 * s + 3);
    v3d(f, am->xfrc + 6 * s);
    v3d(tau, am->xfrc + 6 * s + 3);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        pb->I0[9 * s + 3 * i + j] = P->R[3 * i] * Ib[0] * P->R[3 * j] + P->R[3 * i + 1] * Ib[1] * P->R[3 * j + 1] +
                                    P->R[3 * i + 2] * Ib[2] * P->R[3 * j + 2];
    for (int i = 0; i < 3; i++) ref->xp[3 * s + i] = P->x[i] + h * v[i] + h * h * (grav[i] + f[i] / am->mass[s]);
    /* implicit gyroscopic step in the body frame: (J + h([ω]×J − [Jω]×)) Δ = h(τ − ω × Jω) */
    double wb[3], tb[3], Jw[3], c[3], A[9], rhs3[3];
    dmtv(wb, P->R, w);
    dmtv(tb, P->R, tau);
    for (int i = 0; i < 3; i++) Jw[i] = Ib[i] * wb[i];
    dcross(c, wb, Jw);
    for (int i = 0; i < 3; i++) rhs3[i] = h * (tb[i] - c[i]);
    double W[9] = {0, -wb[2], wb[1], wb[2], 0, -wb[0], -wb[1], wb[0], 0};
    double Pm[9] = {0, -Jw[2], Jw[1], Jw[2], 0, -Jw[0], -Jw[1], Jw[0], 0};
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) A[3 * i + j] = (i == j ? Ib[i] : 0) + h * (W[3 * i + j] * Ib[j] - Pm[3 * i + j]);
    lapack_int ip3[3];
    if (LAPACKE_dgesv(LAPACK_ROW_MAJOR, 3, 1, A, 3, ip3, rhs3, 1)) return -1;
    double wn[3], wp[3], hw[3], e[4];
    for (int i = 0; i < 3; i++) wn[i] = wb[i] + rhs3[i];
    dmv(wp, P->R, wn);
    for (int i = 0; i < 3; i++) hw[i] = h * wp[i];
    dexp(e, hw);
    dqmul(ref->qp + 4 * s, e, P->q);
    dqnorm(ref->qp + 4 * s);
  }
  memcpy(pb->P, pb->P0, sizeof(dpose) * (size_t)nb);
  /* compound coordinates at the step start: MuJoCo's qpos of the components (d holds the step-start state) */
  int nq = 0, ncq = 0;
  for (int c = 0; c < am->ncmp; c++) {
    const rl_avbd_compound *cp = am->cmp + c;
    pb->zc[c] = nq;
    pb->cqa[c] = ncq;
    for (int k = 0; k < cp->n; k++) {
      int adr = m->jnt_qposadr[cp->jnt[k]];
      double *q = pb->cq0[ncq + k];
      if (cp->type[k] == RL_JNT_BALL) {
        for (int i = 0; i < 4; i++) q[i] = d->qpos[adr + i];
        dqnorm(q);
      } else q[0] = d->qpos[adr];
    }
    ncq += cp->n;
    nq += cp->ndof;
  }
  memcpy(pb->cq, pb->cq0, sizeof(double[4]) * (size_t)ncq);
  pb->nq = nq;
  pb->nz = 6 * nb + nq;
  /* coordinates with joint-space terms; φⁿ, φ̇ⁿ at the step start */
  for (int j = 0; j < am->njoint; j++) {
    const rl_avbd_joint *jt = am->joint + j;
    pb->on[j] = jt->eq < 0 ? 1 : !(dis & (RL_DSBL_CONSTRAINT | RL_DSBL_EQUALITY)) && d->eq_active[jt->eq];
    if (jt->kind == RL_AVBD_COMPOUND) {
      const rl_avbd_compound *cp = am->cmp + jt->cmp;
      double qd[6];
      if (cmp_rate(pb, jt, jt->cmp, qd)) return -1;
      for (int k = 0; k < cp->n; k++) {
        if (cp->type[k] == RL_JNT_BALL) continue;
        dcoord *o = pb->co + pb->ncoord++;
        *o = (dcoord){cp->sub + k, -1, jt->cmp, k, 6 * nb + pb->zc[jt->cmp] + cp->dof[k], 0, 0, 0, 0, 0, 0};
        o->phin = pb->cq0[pb->cqa[jt->cmp] + k][0];
        /* after a step the engine defines φ̇ⁿ of a compound coordinate as its difference quotient over the last
           step (φⁿ − φⁿ⁻¹)/h, history the step-start state does not hold: taken from the engine then; from a
           loaded state (rl_avbd_from_generalized) the rate of the velocities, computed here */
        o->dphin = qd[cp->dof[k]]; /* replaced by the engine's in rl_avbd_ref_finish after a step (pb->hist) */
      }
      continue;
    }
    if (jt->jnt < 0 || !has_coord(jt)) continue;
    const dpose *A = pose_of(pb, jt->a), *B = pose_of(pb, jt->b);
    double dA[6], dB[6], vA[6] = {0, 0, 0, 0, 0, 0}, vB[6], rate = 0;
    double phin = joint_coord(jt, A, B, (double)jt->phi, dA, dB);
    if (jt->a >= 0)
      for (int i = 0; i < 6; i++) vA[i] = am->vel[6 * jt->a + i];
    for (int i = 0; i < 6; i++) vB[i] = am->vel[6 * jt->b + i];
    /* φ̇ = ∂φ/∂z · twist (hinge: a·(ω_B − ω_A); slide: the gradient rows applied to (v, ω)) */
    for (int i = 0; i < 6; i++) rate += dA[i] * vA[i] + dB[i] * vB[i];
    dcoord *o = pb->co + pb->ncoord++;
    *o = (dcoord){jt, j, -1, 0, -1, phin, rate, 0, 0, 0, 0};
  }
  for (int c = 0; c < pb->ncoord; c++) {
    const rl_avbd_joint *jt = pb->co[c].jt;
    if (jt->act >= 0 && !(dis & RL_DSBL_ACTUATION) && am->prm.servo_model == RL_AVBD_SERVO_BAM) ref->omitted++;
  }
  ref->omitted += unmodelled_terms(pb, am, m);
  return 0;
}

/* whether coordinate o's joint limit and dry friction are rows of the step (not disabled) */
static int coord_limited(const prob *pb, const dcoord *o) {
  int dis = pb->m->opt.disableflags;
  return pb->m->jnt_limited[o->jt->jnt] && !(dis & (RL_DSBL_LIMIT | RL_DSBL_CONSTRAINT));
}
static int coord_has_dry(const prob *pb, const dcoord *o) {
  int dis = pb->m->opt.disableflags;
  return o->jt->frictionloss > 0 && o->jt->dry_row >= 0 && !(dis & (RL_DSBL_FRICTIONLOSS | RL_DSBL_CONSTRAINT));
}

/* Dry friction on a coordinate held by an active limit: the limit fixes φ at its target, so the dry row slips at
   its budget in the direction of that motion, λ_f = τ_f·sign(φ_limit − φⁿ) (sticking would be a second,
   conflicting equality on φ). */
static void dry_at_limit(prob *pb, dcoord *o, const rl_data *d) {
  double tf = o->jt->frictionloss, lim = limit_bound(pb->m, d, o->jt->jnt, !o->lo);
  double c0 = o->lo ? o->phin - lim : lim - o->phin;
  double target = o->lo ? lim + one_sided_target(pb, c0) : lim - one_sided_target(pb, c0);
  o->dry = 0;
  o->fdry = target > o->phin ? tf : target < o->phin ? -tf : 0;
}

/* The rows of the active set held in the flags (joint rows always; active limits, sticking dry friction, active
   contact normals and sticking contact tangents), with targets 0 until rows_set_targets; counts
   ref->active and ref->slipping. */
static int rows_from_flags(rl_avbd_ref *ref, prob *pb) {
  const rl_avbd *am = pb->am;
  pb->nrow = 0;
  ref->active = ref->slipping = 0;
  for (int j = 0; j < am->njoint; j++) {
    const rl_avbd_joint *jt = am->joint + j;
    if (!pb->on[j]) continue;
    int n = jt->kind == RL_AVBD_COMPOUND ? 6 : jt->neq;
    for (int r = 0; r < n; r++)
      if (add_row(pb, jt->kind == RL_AVBD_COMPOUND ? R_CMP : R_JOINT, jt->kind == RL_AVBD_COMPOUND ? jt->cmp : j, r, 0))
        return -1;
  }
  for (int c = 0; c < pb->ncoord && !pb->pre; c++) {
    const dcoord *o = pb->co + c;
    if (o->lo && add_row(pb, R_LIMLO, c, 0, 0)) return -1;
    if (o->hi && add_row(pb, R_LIMHI, c, 0, 0)) return -1;
    ref->active += o->lo + o->hi;
    if (!coord_has_dry(pb, o)) continue;
    if (o->dry) {
      if (add_row(pb, R_DRY, c, 0, 0)) return -1;
      ref->active++;
    } else ref->slipping++;
  }
  for (int i = 0; i < pb->ncon; i++) {
    const rl_avbd_contact *k = pb->con + i;
    if (!pb->con_on[i]) continue;
    ref->active++;
    if (add_row(pb, R_CN, i, 0, 0)) return -1;
    if (k->dim >= 3 && k->mu > 0) {
      if (pb->con_stick[i]) {
        if (add_row(pb, R_CT, i, 1, 0) || add_row(pb, R_CT, i, 2, 0)) return -1;
      } else ref->slipping++;
    }
  }
  return 0;
}

/* the value C⁰ − 0 of row rw at the step-start poses (the iterate is kept) */
static double row_start_value(prob *pb, const drow *rw, const rl_data *d, double *jr) {
  dpose *P = pb->P;
  double(*cq)[4] = pb->cq;
  pb->P = pb->P0;
  pb->cq = pb->cq0;
  drow r0 = *rw;
  r0.target = 0;
  double c0 = row_residual(pb, &r0, jr, d);
  pb->P = P;
  pb->cq = cq;
  return c0;
}

/* A row's target from its value C⁰ at the step start: α_joint C⁰ (two-sided joint rows), one_sided_target
   (limits, contact normals), α C⁰ (contact tangents), 0 (a sticking dry-friction row: φ = φⁿ) */
static double row_target(const prob *pb, int kind, double c0) {
  switch (kind) {
  case R_JOINT:
  case R_CMP: return pb->alpha_joint * c0;
  case R_LIMLO:
  case R_LIMHI:
  case R_CN: return one_sided_target(pb, c0);
  case R_CT: return pb->alpha * c0;
  default: return 0;
  }
}

static void rows_set_targets(prob *pb, const rl_data *d, double *jr) {
  for (int r = 0; r < pb->nrow; r++) {
    drow *rw = pb->row + r;
    rw->target = row_target(pb, rw->kind, row_start_value(pb, rw, d, jr));
  }
}

/* the active set from am (the engine's final iterate of the step), into the flags of pb */
static int take_active_set(rl_avbd_ref *ref, prob *pb, const rl_avbd *am, const rl_data *d) {
  for (int c = 0; c < pb->ncoord && !pb->pre; c++) {
    dcoord *o = pb->co + c;
    const rl_avbd_joint *jt = o->jt;
    if (o->joint < 0 && pb->hist) o->dphin = (double)jt->dphi_n; /* set by the engine at this step's start */
    o->lo = o->hi = o->dry = 0;
    o->fdry = 0;
    if (coord_limited(pb, o)) {
      o->lo = am->row[jt->lo_row].lambda < 0;
      o->hi = am->row[jt->hi_row].lambda < 0;
    }
    if (!coord_has_dry(pb, o)) continue;
    double lam = am->row[jt->dry_row].lambda;
    if (o->lo || o->hi) dry_at_limit(pb, o, d);
    else if (fabs(lam) < jt->frictionloss * (1 - 1e-9)) o->dry = 1;
    else o->fdry = lam;
  }
  pb->ncon = am->prm.contacts == RL_AVBD_CONTACTS_NONE || pb->pre ? 0 : am->ncon;
  pb->con = am->con;
  free(pb->fslip);
  free(pb->con_on);
  free(pb->con_stick);
  pb->fslip = calloc((size_t)pb->ncon + 1, sizeof(double[2]));
  pb->con_on = calloc((size_t)pb->ncon + 1, sizeof(int));
  pb->con_stick = calloc((size_t)pb->ncon + 1, sizeof(int));
  if (!pb->fslip || !pb->con_on || !pb->con_stick) return -1;
  for (int i = 0; i < pb->ncon; i++) {
    const rl_avbd_contact *k = pb->con + i;
    if (!(k->lambda[0] < 0)) continue;
    pb->con_on[i] = 1;
    if (k->dim >= 3 && k->mu > 0) {
      if (k->stick) pb->con_stick[i] = 1;
      else {
        pb->fslip[i][0] = k->lambda[1];
        pb->fslip[i][1] = k->lambda[2];
      }
    }
    if (k->dim > 3 && (k->mu_spin > 0 || k->mu_roll > 0)) ref->omitted++; /* spin/roll rows not rebuilt */
  }
  return rows_from_flags(ref, pb);
}

/* the iterate's poses into the solution (ref->x, ref->q) */
static void ref_take_poses(rl_avbd_ref *ref, const prob *pb) {
  for (int s = 0; s < pb->nb; s++) {
    memcpy(ref->x + 3 * s, pb->P[s].x, sizeof(double) * 3);
    memcpy(ref->q + 4 * s, pb->P[s].q, sizeof(double) * 4);
  }
}

/* Apply a Newton step (δz, δλ) in rhs: x += δx, q ← Exp(δθ)·q, compound coordinates likewise, λ += δλ.
   Returns ‖δz‖∞. */
static double kkt_update(rl_avbd_ref *ref, prob *pb, const rl_avbd *am, const double *rhs) {
  int nb = pb->nb, nz = pb->nz;
  double step = 0;
  for (int s = 0; s < nb; s++) {
    dpose *P = pb->P + s;
    double e[4];
    for (int i = 0; i < 3; i++) P->x[i] += rhs[6 * s + i];
    dexp(e, rhs + 6 * s + 3);
    dqmul(P->q, e, P->q);
    dpose_sync(P);
    for (int i = 0; i < 6; i++) step = fmax(step, fabs(rhs[6 * s + i]));
  }
  for (int c = 0; c < am->ncmp; c++) {
    const rl_avbd_compound *cp = am->cmp + c;
    for (int k = 0; k < cp->n; k++) {
      const double *dz = rhs + 6 * nb + pb->zc[c] + cp->dof[k];
      double *q = pb->cq[pb->cqa[c] + k];
      if (cp->type[k] == RL_JNT_BALL) {
        double e[4];
        dexp(e, dz);
        dqmul(q, e, q);
        dqnorm(q);
        for (int i = 0; i < 3; i++) step = fmax(step, fabs(dz[i]));
      } else {
        q[0] += dz[0];
        step = fmax(step, fabs(dz[0]));
      }
    }
  }
  for (int r = 0; r < pb->nrow; r++) ref->lambda[r] += rhs[nz + r];
  return step;
}

/* Newton on the KKT system from the current iterate (poses, compound coordinates, ref->lambda).  The rows can be
   dependent (a sticking contact's tangent along an axis a planar root already holds; two end caps of a capsule
   foot on one line; every joint stuck by dry friction with the feet on the ground): the multipliers are then not
   unique and the saddle matrix is singular, while the poses are.  The Newton matrix carries a compliance −ε on
   the rows' diagonal (pb->eps), a row-space regularization of the step direction only: the right-hand side and
   the convergence test are the exact residuals g + Jᵀλ and C − target, so the fixed point is the exact one. */
static int kkt_newton(rl_avbd_ref *ref, prob *pb, const rl_avbd *am, const rl_data *d) {
  int nz = pb->nz, N = nz + pb->nrow, st = 0;
  double *K = malloc(sizeof(double) * (size_t)N * (size_t)N), *rhs = malloc(sizeof(double) * (size_t)N);
  lapack_int *ipiv = malloc(sizeof(lapack_int) * (size_t)N);
  if (!K || !rhs || !ipiv) {
    st = -1;
    goto done;
  }
  for (ref->iterations = 0; ref->iterations < RL_AVBD_REF_NEWTON_CAP; ref->iterations++) {
    assemble(pb, ref, d, K, rhs, NULL, NULL);
    for (int i = 0; i < nz; i++) /* the incremental form: −(g + Jᵀλ) for the step (δz, δλ) */
      for (int r = 0; r < pb->nrow; r++) rhs[i] -= K[(size_t)(nz + r) * N + i] * ref->lambda[r];
    ref->info = (int)LAPACKE_dsysv(LAPACK_ROW_MAJOR, 'L', N, 1, K, N, ipiv, rhs, 1);
    if (ref->info) {
      st = -1;
      goto done;
    }
    double step = kkt_update(ref, pb, am, rhs);
    ref->step = step;
    if (step <= 1e-14) {
      ref->iterations++;
      break;
    }
  }
  ref->primal = assemble(pb, ref, d, K, rhs, ref->lambda, ref->stationarity);
  ref->converged = ref->step <= 1e-12 && ref->primal <= 1e-10;
  ref_take_poses(ref, pb);
done:
  free(K);
  free(rhs);
  free(ipiv);
  return st;
}

/* ---------------------------------------------- the step's complementarity problem */

/* Every row the step's one-sided and bounded terms can have, each with a multiplier: the joints' two-sided
   rows; per limited coordinate both limit sides, per coordinate with friction loss its dry row; per contact
   its normal and (with friction) both tangent rows, in that order.  Multipliers carried over from the rows of
   the engine's active set, a slipping contact's tangent rows and a slipping dry row at their constant forces,
   which are then taken off (they are unknowns now); every other new row starts at 0. */
static int rows_complementarity(rl_avbd_ref *ref, prob *pb) {
  const rl_avbd *am = pb->am;
  int n0 = pb->nrow;
  drow *old = malloc(sizeof(drow) * (size_t)(n0 + 1));
  double *lam0 = ref->lambda;
  if (!old) return -1;
  if (n0) memcpy(old, pb->row, sizeof(drow) * (size_t)n0); /* no rows (no joints): pb->row may be NULL */
  pb->nrow = 0;
  int st = 0;
  for (int j = 0; j < am->njoint && !st; j++) {
    const rl_avbd_joint *jt = am->joint + j;
    if (!pb->on[j]) continue;
    int n = jt->kind == RL_AVBD_COMPOUND ? 6 : jt->neq;
    for (int r = 0; r < n && !st; r++)
      st =
          add_row(pb, jt->kind == RL_AVBD_COMPOUND ? R_CMP : R_JOINT, jt->kind == RL_AVBD_COMPOUND ? jt->cmp : j, r, 0);
  }
  for (int c = 0; c < pb->ncoord && !st; c++) {
    const dcoord *o = pb->co + c;
    if (coord_limited(pb, o)) st = add_row(pb, R_LIMLO, c, 0, 0) || add_row(pb, R_LIMHI, c, 0, 0);
    if (!st && coord_has_dry(pb, o)) st = add_row(pb, R_DRY, c, 0, 0);
  }
  for (int i = 0; i < pb->ncon && !st; i++) {
    st = add_row(pb, R_CN, i, 0, 0);
    if (!st && pb->con[i].dim >= 3 && pb->con[i].mu > 0) st = add_row(pb, R_CT, i, 1, 0) || add_row(pb, R_CT, i, 2, 0);
  }
  ref->lambda = st ? NULL : calloc((size_t)pb->nrow + 1, sizeof(double));
  if (!ref->lambda) st = -1;
  for (int r = 0; r < pb->nrow && !st; r++) {
    drow *rw = pb->row + r;
    for (int o = 0; o < n0; o++)
      if (old[o].kind == rw->kind && old[o].i == rw->i && old[o].r == rw->r) {
        ref->lambda[r] = lam0[o];
        break;
      }
    if (rw->kind == R_CT && pb->con_on[rw->i] && !pb->con_stick[rw->i]) ref->lambda[r] = pb->fslip[rw->i][rw->r - 1];
    if (rw->kind == R_DRY && !pb->co[rw->i].dry) ref->lambda[r] = pb->co[rw->i].fdry;
  }
  free(old);
  free(lam0);
  if (st) return st;
  for (int i = 0; i < pb->ncon; i++) pb->fslip[i][0] = pb->fslip[i][1] = 0;
  for (int c = 0; c < pb->ncoord; c++) pb->co[c].fdry = 0;
  ref->nrow = pb->nrow;
  return 0;
}

/* How a row's equation reads in the semismooth Newton step (Alart–Curnier: λ = Π(λ + r·C̃), C̃ = C − target,
   Π the projection on the row's admissible set):
     EQ    C̃ = 0                  two-sided rows; a normal or limit with λ + rC̃ < 0 (pressing); a sticking tangent
                                   pair, ‖λ_t + rC̃_t‖ ≤ μ|λ_n|; a dry row inside its budget, |λ_f + rC̃_f| ≤ τ_f;
     ZERO  λ = 0                  a normal or limit with λ + rC̃ ≥ 0 (open), the tangents of a contact whose normal
                                   carries no load;
     SLIP  λ_t = μ|λ_n|·u/‖u‖     a tangent pair outside the disc, u = λ_t + rC̃_t;
     BOUND λ_f = τ_f·sign(u)      a dry row past its budget, u = λ_f + rC̃_f.
   The fixed point is independent of r > 0; r_row = 1/Σ_i J_i²/H_ii (the row's inverse effective mass in the
   diagonal of H) keeps both terms of u on one scale.  Signs as the engine: λ ≤ 0 presses. */
enum { MODE_EQ, MODE_ZERO, MODE_SLIP, MODE_BOUND };

static void row_scales(const prob *pb, const double *K, int N, double *rsc) {
  int nz = pb->nz;
  for (int r = 0; r < pb->nrow; r++) {
    double w = 0;
    for (int i = 0; i < nz; i++) {
      double j = K[(size_t)(nz + r) * N + i], hii = K[(size_t)i * N + i];
      if (j != 0 && hii > 0) w += j * j / hii;
    }
    rsc[r] = w > 0 ? 1 / w : 1;
  }
}

/* the rows' modes at (z, λ) from their residuals Ct (C̃ per row); a tangent pair takes one scale r, the larger
   of its two rows' */
static void row_modes(const prob *pb, const double *lam, const double *Ct, double *rsc, int *mode) {
  for (int r = 0; r < pb->nrow; r++) {
    const drow *rw = pb->row + r;
    double u = lam[r] + rsc[r] * Ct[r];
    switch (rw->kind) {
    case R_CN:
    case R_LIMLO:
    case R_LIMHI: mode[r] = u < 0 ? MODE_EQ : MODE_ZERO; break;
    case R_DRY: mode[r] = fabs(u) <= pb->co[rw->i].jt->frictionloss ? MODE_EQ : MODE_BOUND; break;
    case R_CT:
      if (rw->r == 1) {
        double R = pb->con[rw->i].mu * fmax(-lam[r - 1], 0), rs = fmax(rsc[r], rsc[r + 1]);
        rsc[r] = rsc[r + 1] = rs;
        double u1 = lam[r] + rs * Ct[r], u2 = lam[r + 1] + rs * Ct[r + 1], un = hypot(u1, u2);
        mode[r] = mode[r + 1] = R == 0 ? MODE_ZERO : un <= R ? MODE_EQ : MODE_SLIP;
      }
      break;
    default: mode[r] = MODE_EQ;
    }
  }
}

/* the mode the engine's active set gives row rw (take_active_set's flags) */
static int engine_mode(const prob *pb, const drow *rw) {
  const dcoord *o = rw->kind == R_LIMLO || rw->kind == R_LIMHI || rw->kind == R_DRY ? pb->co + rw->i : NULL;
  switch (rw->kind) {
  case R_CN: return pb->con_on[rw->i] ? MODE_EQ : MODE_ZERO;
  case R_CT: return !pb->con_on[rw->i] ? MODE_ZERO : pb->con_stick[rw->i] ? MODE_EQ : MODE_SLIP;
  case R_LIMLO: return o->lo ? MODE_EQ : MODE_ZERO;
  case R_LIMHI: return o->hi ? MODE_EQ : MODE_ZERO;
  case R_DRY: return o->dry ? MODE_EQ : MODE_BOUND;
  default: return MODE_EQ;
  }
}

/* Π_r(λ + rC̃) of row r: min(u, 0) for normals and limits, the clip to ±τ_f for dry friction, the Coulomb disc of
   radius μ·max(−λ_n, 0) for a tangent pair (both rows together), u itself for two-sided rows */
static double row_projection(const prob *pb, const double *lam, const double *Ct, const double *rsc, int r) {
  const drow *rw = pb->row + r;
  double u = lam[r] + rsc[r] * Ct[r];
  switch (rw->kind) {
  case R_CN:
  case R_LIMLO:
  case R_LIMHI: return fmin(u, 0);
  case R_DRY: {
    double tf = pb->co[rw->i].jt->frictionloss;
    return fmax(-tf, fmin(tf, u));
  }
  case R_CT: {
    int t1 = rw->r == 1 ? r : r - 1;
    double R = pb->con[rw->i].mu * fmax(-lam[t1 - 1], 0);
    double u1 = lam[t1] + rsc[t1] * Ct[t1], u2 = lam[t1 + 1] + rsc[t1] * Ct[t1 + 1], un = hypot(u1, u2);
    return un <= R ? u : u * R / un;
  }
  default: return u;
  }
}

/* the natural residual max_r |λ_r − Π_r(λ + rC̃)|/r_r of the complementarity conditions (m or rad) */
static double natural_residual(const prob *pb, const double *lam, const double *Ct, const double *rsc) {
  double worst = 0;
  for (int r = 0; r < pb->nrow; r++) worst = fmax(worst, fabs(lam[r] - row_projection(pb, lam, Ct, rsc, r)) / rsc[r]);
  return worst;
}

/* The merit of an iterate for the line search, in force units: ‖g + Jᵀλ‖² + Σ_r (λ_r − Π_r(λ + rC̃))², from an
   assembled right-hand side (rhs[0..nz) = −g) and K's rows (J), with the scales r of the step's start */
static double kkt_merit(const prob *pb, const double *K, const double *rhs, int N, const double *lam, double *Ct,
                        const double *rsc) {
  int nz = pb->nz, nr = pb->nrow;
  double f = 0;
  for (int r = 0; r < nr; r++) Ct[r] = -rhs[nz + r];
  for (int i = 0; i < nz; i++) {
    double v = -rhs[i];
    for (int r = 0; r < nr; r++) v += K[(size_t)(nz + r) * N + i] * lam[r];
    f += v * v;
  }
  for (int r = 0; r < nr; r++) {
    double e = lam[r] - row_projection(pb, lam, Ct, rsc, r);
    f += e * e;
  }
  return f;
}

/* The rows of K (assembled with every row as an equality) and of the right-hand side rewritten per mode:
   ZERO δλ_r = −λ_r; BOUND δλ_f = −(λ_f − τ_f sign u); SLIP, with G = λ_t − R û, R = μ|λ_n|, û = u/‖u‖,
   P = R(I − ûûᵀ)/‖u‖:  δλ_t − P(δλ_t + r J_t δz) + μ û δλ_n = −G  (the last term where λ_n < 0). */
static void rows_by_mode(const prob *pb, const double *lam, const double *Ct, const double *rsc, const int *mode,
                         double *K, double *rhs, int N) {
  int nz = pb->nz;
  for (int r = 0; r < pb->nrow; r++) {
    const drow *rw = pb->row + r;
    double *Kr = K + (size_t)(nz + r) * N;
    if (mode[r] == MODE_ZERO || mode[r] == MODE_BOUND) {
      double target = 0;
      if (mode[r] == MODE_BOUND) target = copysign(pb->co[rw->i].jt->frictionloss, lam[r] + rsc[r] * Ct[r]);
      memset(Kr, 0, sizeof(double) * (size_t)N);
      Kr[nz + r] = 1;
      rhs[nz + r] = -(lam[r] - target);
    }
    if (mode[r] == MODE_SLIP && rw->r == 1) {
      int n = r - 1;
      double mu = pb->con[rw->i].mu, R = mu * fmax(-lam[n], 0), rs = rsc[r];
      double u[2] = {lam[r] + rs * Ct[r], lam[r + 1] + rs * Ct[r + 1]}, un = hypot(u[0], u[1]);
      double uh[2] = {u[0] / un, u[1] / un}, P[2][2];
      for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++) P[a][b] = R * ((a == b) - uh[a] * uh[b]) / un;
      /* the tangent rows' gradients, still in K's rows r and r + 1 */
      double *K1 = Kr, *K2 = Kr + N;
      double *g1 = malloc(sizeof(double) * 2 * (size_t)nz);
      if (!g1) return; /* the step then uses the equality rows: no worse than before */
      memcpy(g1, K1, sizeof(double) * (size_t)nz);
      memcpy(g1 + nz, K2, sizeof(double) * (size_t)nz);
      for (int a = 0; a < 2; a++) {
        double *Ka = a ? K2 : K1;
        memset(Ka, 0, sizeof(double) * (size_t)N);
        for (int i = 0; i < nz; i++) Ka[i] = -rs * (P[a][0] * g1[i] + P[a][1] * g1[nz + i]);
        for (int b = 0; b < 2; b++) Ka[nz + r + b] = (a == b) - P[a][b];
        if (lam[n] < 0) Ka[nz + n] = mu * uh[a];
        rhs[nz + r + a] = -(lam[r + a] - R * uh[a]);
      }
      free(g1);
    }
  }
}

/* Semismooth Newton on the step's complementarity problem from the current iterate, with every row of
   rows_complementarity: each iteration assembles the KKT matrix, sets the rows' modes from (z, λ), rewrites
   the rows by mode and solves the (now unsymmetric) system with LAPACKE_dgesv, the step backtracked on the
   merit (kkt_merit).  Stops when the full step has ‖δz‖∞ ≤ 1e-14 and ‖δλ‖∞ ≤ 1e-13·max(1, ‖λ‖∞), or at once where the first phase
   converged to a point that meets the conditions already (natural residual ≤ accept, m or rad: a force
   inconsistency F in a row moves the poses by about F/r, so the natural residual is the pose error the
   inconsistency leaves); converged: natural residual ≤ accept and a last step ≤ 1e-12. */
static int complementarity_newton(rl_avbd_ref *ref, prob *pb, const rl_avbd *am, const rl_data *d, double accept,
                                  int *took) {
  int nz = pb->nz, N = nz + pb->nrow, st = 0, nr = pb->nrow;
  double *K = malloc(sizeof(double) * (size_t)N * (size_t)N), *rhs = malloc(sizeof(double) * (size_t)N);
  double *Ct = malloc(sizeof(double) * (size_t)(nr + 1)), *rsc = malloc(sizeof(double) * (size_t)(nr + 1));
  int *mode = malloc(sizeof(int) * (size_t)(nr + 1));
  lapack_int *ipiv = malloc(sizeof(lapack_int) * (size_t)N);
  int ncq = am->ncmp ? pb->cqa[am->ncmp - 1] + am->cmp[am->ncmp - 1].n : 0;
  double *dz = malloc(sizeof(double) * (size_t)N), *lam0 = malloc(sizeof(double) * (size_t)(nr + 1));
  dpose *P0 = malloc(sizeof(dpose) * (size_t)(pb->nb + 1));
  double(*cq0)[4] = malloc(sizeof(double[4]) * (size_t)(ncq + 1));
  if (!K || !rhs || !Ct || !rsc || !mode || !ipiv || !dz || !lam0 || !P0 || !cq0) {
    st = -1;
    goto done;
  }
  int it, phase1 = ref->converged;
  *took = 0;
  for (it = 0; it < RL_AVBD_REF_COMPLEMENTARITY_CAP; it++) {
    assemble(pb, ref, d, K, rhs, NULL, NULL);
    for (int r = 0; r < nr; r++) Ct[r] = -rhs[nz + r];
    for (int i = 0; i < nz; i++) /* −(g + Jᵀλ) */
      for (int r = 0; r < nr; r++) rhs[i] -= K[(size_t)(nz + r) * N + i] * ref->lambda[r];
    row_scales(pb, K, N, rsc);
    row_modes(pb, ref->lambda, Ct, rsc, mode);
    /* the first phase's solution, where it converged and already meets the conditions to within the accuracy
       asked (natural residual ≤ accept), is taken */
    if (it == 0 && phase1 && natural_residual(pb, ref->lambda, Ct, rsc) <= accept) {
      *took = 1;
      break;
    }
    if (it == 0 && N > RL_AVBD_REF_COMPLEMENTARITY_MAX) { /* a dense unsymmetric solve per iteration: too large */
      *took = 2;
      break;
    }
    double f0 = 0;
    for (int i = 0; i < nz; i++) f0 += rhs[i] * rhs[i];
    for (int r = 0; r < nr; r++) {
      double e = ref->lambda[r] - row_projection(pb, ref->lambda, Ct, rsc, r);
      f0 += e * e;
    }
    rows_by_mode(pb, ref->lambda, Ct, rsc, mode, K, rhs, N);
    ref->info = (int)LAPACKE_dgesv(LAPACK_ROW_MAJOR, N, 1, K, N, ipiv, rhs, 1);
    if (ref->info) {
      st = -1;
      goto done;
    }
    /* backtracking on the merit: the full step where it lowers the merit enough (Armijo, 1e-4), else halved */
    memcpy(dz, rhs, sizeof(double) * (size_t)N);
    memcpy(P0, pb->P, sizeof(dpose) * (size_t)pb->nb);
    memcpy(cq0, pb->cq, sizeof(double[4]) * (size_t)ncq);
    memcpy(lam0, ref->lambda, sizeof(double) * (size_t)nr);
    double alpha = 1, f;
    for (;;) {
      for (int i = 0; i < N; i++) rhs[i] = alpha * dz[i];
      ref->step = kkt_update(ref, pb, am, rhs);
      assemble(pb, ref, d, K, rhs, NULL, NULL);
      f = kkt_merit(pb, K, rhs, N, ref->lambda, Ct, rsc);
      if (f <= (1 - 1e-4 * alpha) * f0 || alpha < 1e-3) break;
      alpha /= 2;
      memcpy(pb->P, P0, sizeof(dpose) * (size_t)pb->nb);
      memcpy(pb->cq, cq0, sizeof(double[4]) * (size_t)ncq);
      memcpy(ref->lambda, lam0, sizeof(double) * (size_t)nr);
    }
    /* the full Newton step's size decides: a point where it vanishes is a fixed point of the Newton map (a
       degenerate row, λ = 0 with C̃ = 0, may change its mode at every iteration there without moving anything) */
    double sz = 0, dlam = 0, lmax = 1;
    for (int i = 0; i < nz; i++) sz = fmax(sz, fabs(dz[i]));
    for (int r = 0; r < nr; r++) {
      dlam = fmax(dlam, fabs(dz[nz + r]));
      lmax = fmax(lmax, fabs(ref->lambda[r]));
    }
    ref->step = sz;
    if (sz <= 1e-14 && dlam <= 1e-13 * lmax) {
      it++;
      break;
    }
  }
  ref->iterations += it;
  assemble(pb, ref, d, K, rhs, ref->lambda, ref->stationarity);
  for (int r = 0; r < nr; r++) Ct[r] = -rhs[nz + r];
  row_scales(pb, K, N, rsc);
  row_modes(pb, ref->lambda, Ct, rsc, mode); /* the tangent pairs' common scale */
  ref->primal = natural_residual(pb, ref->lambda, Ct, rsc);
  ref->converged = ref->step <= 1e-12 && ref->primal <= accept;
  ref->active = ref->slipping = ref->refined = 0;
  for (int r = 0; r < nr; r++) {
    int k = pb->row[r].kind;
    ref->refined += (k != R_CT || pb->row[r].r == 1) && mode[r] != engine_mode(pb, pb->row + r);
    if ((k == R_CN || k == R_LIMLO || k == R_LIMHI || k == R_DRY) && mode[r] == MODE_EQ) ref->active++;
    if ((k == R_CT && pb->row[r].r == 1 && mode[r] == MODE_SLIP) || mode[r] == MODE_BOUND) ref->slipping++;
  }
  ref_take_poses(ref, pb);
done:
  free(K);
  free(rhs);
  free(Ct);
  free(rsc);
  free(mode);
  free(ipiv);
  free(dz);
  free(lam0);
  free(P0);
  free(cq0);
  return st;
}

int rl_avbd_ref_finish(rl_avbd_ref *ref, const rl_avbd *am, const rl_model *m, const rl_data *d) {
  (void)m;
  prob *pb = ref->pb;
  if (!pb) return -1;
  pb->am = am;
  ref->active = ref->slipping = ref->refined = 0;
  if (take_active_set(ref, pb, am, d)) return -1;
  int nb = pb->nb;
  ref->nrow = pb->nrow;
  free(ref->lambda);
  ref->lambda = calloc((size_t)pb->nrow + 1, sizeof(double));
  double *jr = malloc(sizeof(double) * (size_t)pb->nz + 1);
  int st = 0;
  if (!ref->lambda || !jr) {
    free(jr);
    return -1;
  }
  int ncq = am->ncmp ? pb->cqa[am->ncmp - 1] + am->cmp[am->ncmp - 1].n : 0;
  memcpy(pb->P, pb->P0, sizeof(dpose) * (size_t)nb);
  memcpy(pb->cq, pb->cq0, sizeof(double[4]) * (size_t)ncq);
  rows_set_targets(pb, d, jr);
  /* the rows' compliance in the Newton matrix: ε = 1e-10·h²/m_max */
  double mmax = 0;
  for (int s = 0; s < nb; s++) mmax = fmax(mmax, (double)am->mass[s]);
  pb->eps = 1e-10 * pb->h * pb->h / (mmax > 0 ? mmax : 1);
  for (int s = 0; s < nb; s++) { /* Newton from the prediction */
    for (int i = 0; i < 3; i++) pb->P[s].x[i] = ref->xp[3 * s + i];
    for (int i = 0; i < 4; i++) pb->P[s].q[i] = ref->qp[4 * s + i];
    dpose_sync(pb->P + s);
  }
  st = kkt_newton(ref, pb, am, d);
  ref->basis = ref->converged ? RL_AVBD_REF_GIVEN : 0;
  if (st || pb->pre) {
    if (ref->converged) ref->basis = RL_AVBD_REF_ADMISSIBLE; /* no one-sided or bounded rows */
    free(jr);
    return st;
  }
  /* then the step's own complementarity conditions, from that solution: the engine's active set is where the
     reference starts, not what it assumes */
  rl_avbd_ref one = *ref;
  double *x1 = malloc(sizeof(double) * 3 * (size_t)nb + 1), *q1 = malloc(sizeof(double) * 4 * (size_t)nb + 1);
  if (!x1 || !q1) st = -1;
  else {
    memcpy(x1, ref->x, sizeof(double) * 3 * (size_t)nb);
    memcpy(q1, ref->q, sizeof(double) * 4 * (size_t)nb);
    st = rows_complementarity(ref, pb);
  }
  int took = 0;
  if (!st) {
    rows_set_targets(pb, d, jr);
    /* the accuracy asked of the solution: natural residual ≤ max(1e-10, 1e-2·claim) (m, rad), the claim being
       the distance the engine's stop states (a pose error of about that size) */
    double claim = fmin((double)am->stat.tol_lin, (double)am->stat.tol_ang);
    st = complementarity_newton(ref, pb, am, d, fmax(1e-10, 1e-2 * claim), &took);
  }
  if (!st && took == 1) ref->basis = RL_AVBD_REF_ADMISSIBLE;
  else if (!st && took == 0 && ref->converged) ref->basis = RL_AVBD_REF_SOLVED;
  else if (!st) { /* the first phase's solution, given the engine's active set and forces */
    memcpy(ref->x, x1, sizeof(double) * 3 * (size_t)nb);
    memcpy(ref->q, q1, sizeof(double) * 4 * (size_t)nb);
    ref->converged = one.converged;
    ref->step = one.step;
    ref->primal = one.primal;
    ref->stationarity[0] = one.stationarity[0];
    ref->stationarity[1] = one.stationarity[1];
    ref->active = one.active;
    ref->slipping = one.slipping;
    ref->refined = 0;
    ref->basis = one.converged ? RL_AVBD_REF_GIVEN : 0;
  }
  free(x1);
  free(q1);
  free(jr);
  return st;
}

int rl_avbd_ref_solve(rl_avbd_ref *ref, const rl_avbd *am, const rl_model *m, const rl_data *d) {
  int st = rl_avbd_ref_begin(ref, am, m, d);
  if (st) return st;
  /* before the step the active set is not known: limits, dry friction and contacts are left out and counted */
  int dis = m->opt.disableflags;
  prob *pb = ref->pb;
  for (int c = 0; c < pb->ncoord; c++) {
    const rl_avbd_joint *jt = pb->co[c].jt;
    if (m->jnt_limited[jt->jnt] && !(dis & (RL_DSBL_LIMIT | RL_DSBL_CONSTRAINT))) ref->omitted++;
    if (jt->frictionloss > 0 && !(dis & (RL_DSBL_FRICTIONLOSS | RL_DSBL_CONSTRAINT))) ref->omitted++;
  }
  if (am->prm.contacts != RL_AVBD_CONTACTS_NONE) ref->omitted += am->ncon;
  pb->pre = 1; /* the multipliers of the pre-step state say nothing: no row of theirs is taken as active */
  return rl_avbd_ref_finish(ref, am, m, d);
}

void rl_avbd_ref_distance(const rl_avbd_ref *ref, const rl_avbd *am, double *dx, double *dtheta) {
  double ex = 0, eq = 0;
  for (int s = 0; s < ref->nb && s < am->nb; s++) {
    double q[4], c[4], e[4], th[3], d2 = 0;
    for (int i = 0; i < 3; i++)
      d2 += ((double)am->pose[s].x[i] - ref->x[3 * s + i]) * ((double)am->pose[s].x[i] - ref->x[3 * s + i]);
    for (int i = 0; i < 4; i++) q[i] = am->pose[s].q[i];
    dqnorm(q);
    dqconj(c, ref->q + 4 * s);
    dqmul(e, q, c);
    dlog(th, e);
    ex = fmax(ex, sqrt(d2));
    eq = fmax(eq, sqrt(ddot(th, th)));
  }
  *dx = ex;
  *dtheta = eq;
}

void rl_avbd_ref_free(rl_avbd_ref *ref) {
  prob_free(ref->pb);
  free(ref->x);
  free(ref->q);
  free(ref->xp);
  free(ref->qp);
  free(ref->lambda);
  memset(ref, 0, sizeof *ref);
}
