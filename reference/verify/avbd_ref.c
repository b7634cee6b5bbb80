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

typedef struct prob {
  const rl_avbd *am;
  const rl_model *m;
  const rl_data *d;
  double h, alpha;
  int nb, nrow;
  dpose *P;             /* iterate */
  double *I0;           /* [nb×9] */
  int *on;              /* joint j two-sided rows enforced */
  double *c0;           /* [nrow] */
  double *phin, *dphin; /* per joint */
} prob;

static void dpose_sync(dpose *p) {
  dqnorm(p->q);
  dqmat(p->R, p->q);
}

static const dpose world = {{0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0, 1, 0, 0, 0, 1}};
static const dpose *pose_of(const prob *pb, int s) { return s < 0 ? &world : pb->P + s; }
static void v3d(double r[3], const real *v) {
  r[0] = v[0];
  r[1] = v[1];
  r[2] = v[2];
}

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

/* smooth joint-space energy on φ: gradient G and curvature k (damping, stiffness, armature) */
static void coord_energy(const prob *pb, int j, double phi, double *G, double *k) {
  const rl_avbd_joint *jt = pb->am->joint + j;
  double h = pb->h;
  *G = *k = 0;
  if (!(pb->m->opt.disableflags & RL_DSBL_PASSIVE)) {
    *G += jt->damping * (phi - pb->phin[j]) / h + jt->stiffness * (phi - jt->spring);
    *k += jt->damping / h + jt->stiffness;
  }
  *G += jt->armature * (phi - pb->phin[j] - h * pb->dphin[j]) / (h * h);
  *k += jt->armature / (h * h);
}

/* assemble the KKT matrix K (N×N, N = 6nb + nrow, row-major) and right-hand side; returns max |C − αC⁰| and,
   through gmax, ‖g + Jᵀλ‖∞ for the multipliers lam (NULL: not computed), split by unit: gmax[0] over the
   force rows δx (N), gmax[1] over the torque rows δθ (N m) */
static double assemble(const prob *pb, const rl_avbd_ref *ref, double *K, double *rhs, const double *lam,
                       double *gmax) {
  int nb = pb->nb, N = 6 * nb + pb->nrow;
  const rl_avbd *am = pb->am;
  double h = pb->h, ih2 = 1 / (h * h), primal = 0;
  memset(K, 0, sizeof(double) * (size_t)N * (size_t)N);
  memset(rhs, 0, sizeof(double) * (size_t)N);
  double *g = rhs; /* gradient first, negated at the end */
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
  int row = 6 * nb, r0 = 0;
  for (int j = 0; j < am->njoint; j++) {
    const rl_avbd_joint *jt = am->joint + j;
    const dpose *A = pose_of(pb, jt->a), *B = pose_of(pb, jt->b);
    if (pb->on[j]) {
      double C[6], JA[6][6], JB[6][6];
      int n = joint_rows(jt, A, B, C, JA, JB);
      for (int r = 0; r < n; r++, r0++) {
        int R = row + r0;
        double cr = C[r] - pb->alpha * pb->c0[r0];
        rhs[R] = cr; /* negated below */
        primal = fmax(primal, fabs(cr));
        for (int side = 0; side < 2; side++) {
          int s = side ? jt->b : jt->a;
          if (s < 0) continue;
          const double *Jr = side ? JB[r] : JA[r];
          for (int i = 0; i < 6; i++) {
            K[(size_t)R * N + 6 * s + i] += Jr[i];
            K[(size_t)(6 * s + i) * N + R] += Jr[i];
          }
        }
      }
    }
    if (has_coord(jt)) {
      double dA[6], dB[6], G, k;
      double phi = joint_coord(jt, A, B, pb->phin[j], dA, dB);
      coord_energy(pb, j, phi, &G, &k);
      if (G == 0 && k == 0) continue;
      for (int sa = 0; sa < 2; sa++) {
        int s = sa ? jt->b : jt->a;
        if (s < 0) continue;
        const double *da = sa ? dB : dA;
        for (int i = 0; i < 6; i++) g[6 * s + i] += G * da[i];
        for (int sb = 0; sb < 2; sb++) {
          int t = sb ? jt->b : jt->a;
          if (t < 0) continue;
          const double *db = sb ? dB : dA;
          for (int i = 0; i < 6; i++)
            for (int l = 0; l < 6; l++) K[(size_t)(6 * s + i) * N + 6 * t + l] += k * da[i] * db[l];
        }
      }
    }
  }
  if (gmax) {
    gmax[0] = gmax[1] = 0;
    for (int i = 0; i < 6 * nb; i++) {
      double v = g[i];
      for (int r = 0; r < pb->nrow && lam; r++) v += K[(size_t)(6 * nb + r) * N + i] * lam[r];
      gmax[i % 6 >= 3] = fmax(gmax[i % 6 >= 3], fabs(v));
    }
  }
  for (int i = 0; i < N; i++) rhs[i] = -rhs[i];
  return primal;
}

int rl_avbd_ref_solve(rl_avbd_ref *ref, const rl_avbd *am, const rl_model *m, const rl_data *d) {
  memset(ref, 0, sizeof *ref);
  if (am->ncmp > 0) { /* compound joints' rows are not rebuilt here */
    ref->info = -2;
    return -1;
  }
  prob pb = {am,   m,    d,   (double)m->opt.timestep, (double)am->prm.alpha_joint, am->nb, 0, NULL, NULL, NULL,
             NULL, NULL, NULL};
  int dis = m->opt.disableflags;
  pb.on = calloc((size_t)am->njoint + 1, sizeof(int));
  for (int j = 0; j < am->njoint; j++) {
    const rl_avbd_joint *jt = am->joint + j;
    int on = jt->eq < 0 ? !((dis & RL_DSBL_CONSTRAINT) && jt->eq >= 0)
                        : !(dis & (RL_DSBL_CONSTRAINT | RL_DSBL_EQUALITY)) && d->eq_active[jt->eq];
    pb.on[j] = on;
    if (on) pb.nrow += jt->neq;
    if (jt->jnt >= 0 && has_coord(jt)) {
      if (m->jnt_limited[jt->jnt] && !(dis & (RL_DSBL_LIMIT | RL_DSBL_CONSTRAINT))) ref->omitted++;
      if (jt->frictionloss > 0 && !(dis & (RL_DSBL_FRICTIONLOSS | RL_DSBL_CONSTRAINT))) ref->omitted++;
      if (jt->act >= 0 && !(dis & RL_DSBL_ACTUATION)) ref->omitted++;
    }
  }
  if (am->prm.contacts != RL_AVBD_CONTACTS_NONE) ref->omitted += am->ncon;
  int nb = am->nb, N = 6 * nb + pb.nrow;
  ref->nb = nb;
  ref->nrow = pb.nrow;
  ref->x = calloc((size_t)nb * 3 + 1, sizeof(double));
  ref->q = calloc((size_t)nb * 4 + 1, sizeof(double));
  ref->xp = calloc((size_t)nb * 3 + 1, sizeof(double));
  ref->qp = calloc((size_t)nb * 4 + 1, sizeof(double));
  ref->lambda = calloc((size_t)pb.nrow + 1, sizeof(double));
  pb.P = calloc((size_t)nb + 1, sizeof(dpose));
  pb.I0 = calloc((size_t)nb * 9 + 1, sizeof(double));
  pb.c0 = calloc((size_t)pb.nrow + 1, sizeof(double));
  pb.phin = calloc((size_t)am->njoint + 1, sizeof(double));
  pb.dphin = calloc((size_t)am->njoint + 1, sizeof(double));
  double *K = malloc(sizeof(double) * (size_t)N * (size_t)N), *rhs = malloc(sizeof(double) * (size_t)N);
  lapack_int *ipiv = malloc(sizeof(lapack_int) * (size_t)N);
  int st = 0;
  if (!ref->x || !ref->q || !ref->xp || !ref->qp || !ref->lambda || !pb.P || !pb.I0 || !pb.c0 || !pb.phin ||
      !pb.dphin || !K || !rhs || !ipiv) {
    st = -1;
    goto done;
  }
  /* step start, frozen inertia, prediction */
  double h = pb.h, grav[3] = {0, 0, 0};
  if (!(dis & RL_DSBL_GRAVITY)) v3d(grav, m->opt.gravity);
  for (int s = 0; s < nb; s++) {
    dpose *P = pb.P + s;
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
        pb.I0[9 * s + 3 * i + j] = P->R[3 * i] * Ib[0] * P->R[3 * j] + P->R[3 * i + 1] * Ib[1] * P->R[3 * j + 1] +
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
    if (LAPACKE_dgesv(LAPACK_ROW_MAJOR, 3, 1, A, 3, ip3, rhs3, 1)) {
      st = -1;
      goto done;
    }
    double wn[3], wp[3], hw[3], e[4];
    for (int i = 0; i < 3; i++) wn[i] = wb[i] + rhs3[i];
    dmv(wp, P->R, wn);
    for (int i = 0; i < 3; i++) hw[i] = h * wp[i];
    dexp(e, hw);
    dqmul(ref->qp + 4 * s, e, P->q);
    dqnorm(ref->qp + 4 * s);
  }
  /* C⁰, φⁿ, φ̇ⁿ at the step start */
  for (int j = 0, r0 = 0; j < am->njoint; j++) {
    const rl_avbd_joint *jt = am->joint + j;
    const dpose *A = pose_of(&pb, jt->a), *B = pose_of(&pb, jt->b);
    if (pb.on[j]) {
      double C[6], JA[6][6], JB[6][6];
      int n = joint_rows(jt, A, B, C, JA, JB);
      for (int r = 0; r < n; r++) pb.c0[r0++] = C[r];
    }
    if (has_coord(jt)) {
      double dA[6], dB[6], vA[6] = {0, 0, 0, 0, 0, 0}, vB[6];
      pb.phin[j] = joint_coord(jt, A, B, (double)jt->phi, dA, dB);
      if (jt->a >= 0)
        for (int i = 0; i < 6; i++) vA[i] = am->vel[6 * jt->a + i];
      for (int i = 0; i < 6; i++) vB[i] = am->vel[6 * jt->b + i];
      /* φ̇ = ∂φ/∂z · twist; for the hinge a·(ω_B − ω_A); for the slide the gradient rows applied to (v, ω)
         (avbd.c's rate formula, which is this product) */
      double rate = 0;
      for (int i = 0; i < 6; i++) rate += dA[i] * vA[i] + dB[i] * vB[i];
      pb.dphin[j] = rate;
    }
  }
  /* Newton on the KKT system from the prediction */
  for (int s = 0; s < nb; s++) {
    for (int i = 0; i < 3; i++) pb.P[s].x[i] = ref->xp[3 * s + i];
    for (int i = 0; i < 4; i++) pb.P[s].q[i] = ref->qp[4 * s + i];
    dpose_sync(pb.P + s);
  }
  for (ref->iterations = 0; ref->iterations < 100; ref->iterations++) {
    assemble(&pb, ref, K, rhs, NULL, NULL);
    ref->info = (int)LAPACKE_dsysv(LAPACK_ROW_MAJOR, 'L', N, 1, K, N, ipiv, rhs, 1);
    if (ref->info) {
      st = -1;
      goto done;
    }
    double step = 0;
    for (int s = 0; s < nb; s++) {
      dpose *P = pb.P + s;
      double e[4];
      for (int i = 0; i < 3; i++) P->x[i] += rhs[6 * s + i];
      dexp(e, rhs + 6 * s + 3);
      dqmul(P->q, e, P->q);
      dpose_sync(P);
      for (int i = 0; i < 6; i++) step = fmax(step, fabs(rhs[6 * s + i]));
    }
    memcpy(ref->lambda, rhs + 6 * nb, sizeof(double) * (size_t)pb.nrow);
    ref->step = step;
    if (step <= 1e-14) {
      ref->iterations++;
      break;
    }
  }
  ref->primal = assemble(&pb, ref, K, rhs, ref->lambda, ref->stationarity);
  for (int s = 0; s < nb; s++) {
    memcpy(ref->x + 3 * s, pb.P[s].x, sizeof(double) * 3);
    memcpy(ref->q + 4 * s, pb.P[s].q, sizeof(double) * 4);
  }
done:
  free(pb.on);
  free(pb.P);
  free(pb.I0);
  free(pb.c0);
  free(pb.phin);
  free(pb.dphin);
  free(K);
  free(rhs);
  free(ipiv);
  return st;
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
  free(ref->x);
  free(ref->q);
  free(ref->xp);
  free(ref->qp);
  free(ref->lambda);
  memset(ref, 0, sizeof *ref);
}
