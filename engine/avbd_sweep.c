/* avbd_sweep.c — the AVBD step: the evaluation cache, graph coloring, the colored 6×6 block sweeps
 * (optionally on OpenMP threads within a color), the coarse rigid-motion step, the Chebyshev
 * acceleration of the multipliers, the dual update, and the step that runs them (rl_avbd_step_maximal)
 * and the whole step with its contacts and write-back (rl_avbd_step).  The per-body math is in
 * rl_avbd_body.h, shared with CUDA; these files keep the orchestration. */
#include <string.h>
#include "avbd_internal.h"
#include "rl_fluid_box.h"

/* ------------------------------------------------------------ evaluation cache */

/* slot s moved (block update, coarse step, prediction): its cached joint and contact values are stale */
RL_HDFN static void avbd_moved(rl_avbd *am, int s) { am->ver[s]++; }

/* Values of contact i at the current poses, cached as avbd_joint_value. */
RL_HDFN static const rl_avbd_contact_val *avbd_contact_val(rl_avbd *am, int i) {
  const rl_avbd_contact *c = am->con + i;
  if (avbd_stale(am, c->a, c->b, am->cver + 2 * i))
    rl_avbd_contact_val_eval(am->cval + i, c, avbd_pose_of(am, c->a), avbd_pose_of(am, c->b));
  return am->cval + i;
}

/* avbd_contact_val for the other AVBD sources (the articulation blocks' loop rows read the same values) */
RL_HDFN const rl_avbd_contact_val *avbd_contact_value(rl_avbd *am, int i) { return avbd_contact_val(am, i); }

/* Values of compound joint jt at the current poses, cached as avbd_joint_value (the coordinates found are
   the next guess once the dual update accepts them). */
RL_HDFN const rl_avbd_compound_val *avbd_compound_value(rl_avbd *am, const rl_avbd_joint *jt) {
  if (avbd_stale(am, jt->a, jt->b, am->cmpver + 2 * jt->cmp))
    avbd_compound_eval(am->cmp + jt->cmp, avbd_pose_of(am, jt->a), avbd_pose_of(am, jt->b), am->cmpval + jt->cmp);
  return am->cmpval + jt->cmp;
}

/* Compound joint jt on the body of side `side`: its two-sided rows f = λ + ρ(C − α_j C⁰) (kkt: λ) with
 * the geometric stiffness of their forces at B's body origin (rows = 0: the geometric stiffness of f = λ alone,
 * the rows being constraints of the articulation block), then each hinge/slide component's
 * joint-space terms (avbd_coord_terms) along its coordinate gradient. */
RL_HDFN static void avbd_compound_assemble(rl_avbd *am, const rl_model *m, const rl_data *d, const rl_avbd_joint *jt, int side,
                                   real h, int kkt, int rows, real H[36], real g[6], real K[3]) {
  const rl_avbd_compound_val *v = avbd_compound_value(am, jt);
  const rl_avbd_compound *c = am->cmp + jt->cmp;
  real J[6];
  if (avbd_joint_on(m, d, jt)) {
    real F[3] = {0, 0, 0};
    for (int r = 0; r < jt->neq; r++) {
      const rl_avbd_row *w = am->row + jt->row + r;
      real f = kkt || !rows ? w->lambda : w->lambda + w->rho * (v->C[r] - am->prm.alpha_joint * w->c0);
      if (rows) {
        avbd_compound_jac(v, v->w[r], side, J);
        rl_avbd_add_row(H, g, J, f, kkt ? 0 : w->rho);
      }
      rl_v3_addscl(F, v->w[r], f);
    }
    if (!kkt) rl_avbd_geo_diag(K, F, side ? v->rB : v->rA);
  }
  for (int k = 0; k < c->n; k++) {
    const rl_avbd_joint *sj = c->sub + k;
    if (sj->kind == RL_AVBD_BALL) continue;
    real G, kk;
    avbd_coord_terms(am, m, d, sj, v->q[k][0], h, kkt, &G, &kk);
    avbd_compound_jac(v, v->pg[c->dof[k]], side, J);
    rl_avbd_add_row(H, g, J, G, kkt ? 0 : kk);
  }
}

/* ------------------------------------------------------------------- coloring */

/* Greedy coloring of the body graph (edges: joints, contacts, spatial tendons and coordinate rows between two
 * dynamic bodies), the world excluded; a body whose neighbors use all AVBD_MAXCOLOR colors goes to the overflow color
 * (solved serially after the others).  The sweep order lists bodies color by color. */
RL_HDFN static void avbd_color(rl_avbd *am) {
  int nb = am->nb, used = 0;
  for (int i = 0; i < nb; i++) am->color[i] = -1;
  for (int i = 0; i < nb; i++) {
    unsigned long long mask = 0;
    for (int k = am->jadr[i]; k < am->jadr[i] + am->jnum[i]; k++) {
      const rl_avbd_joint *jt = am->joint + am->jlist[k];
      int o = jt->a == i ? jt->b : jt->a;
      if (o >= 0 && am->color[o] >= 0 && am->color[o] < AVBD_MAXCOLOR) mask |= 1ull << am->color[o];
    }
    for (int k = am->cadr[i]; k < am->cadr[i] + am->cnum[i]; k++) {
      const rl_avbd_contact *c = am->con + am->clist[k];
      int o = c->a == i ? c->b : c->a;
      if (o >= 0 && am->color[o] >= 0 && am->color[o] < AVBD_MAXCOLOR) mask |= 1ull << am->color[o];
    }
    for (int k = am->cradr[i]; k < am->cradr[i + 1]; k++) {
      int r = am->crlist[k];
      for (int e = am->crsadr[r]; e < am->crsadr[r + 1]; e++) {
        int o = am->crslot[e];
        if (o >= 0 && o != i && am->color[o] >= 0 && am->color[o] < AVBD_MAXCOLOR) mask |= 1ull << am->color[o];
      }
    }
    for (int k = am->spadr[i]; k < am->spadr[i + 1]; k++) {
      int t = am->splist[k];
      for (int e = am->spsadr[t]; e < am->spsadr[t + 1]; e++) {
        int o = am->spslot[e];
        if (o >= 0 && o != i && am->color[o] >= 0 && am->color[o] < AVBD_MAXCOLOR) mask |= 1ull << am->color[o];
      }
    }
    int c = 0;
    while (c < AVBD_MAXCOLOR && (mask >> c & 1)) c++;
    if (am->prm.force_overflow) c = AVBD_MAXCOLOR;
    am->color[i] = c;
    if (c < AVBD_MAXCOLOR && c + 1 > used) used = c + 1;
  }
  am->ncolor = used;
  int n = 0, over = 0;
  for (int c = 0; c <= AVBD_MAXCOLOR; c++)
    for (int i = 0; i < nb; i++)
      if (am->color[i] == c) {
        am->order[n++] = i;
        over += c == AVBD_MAXCOLOR;
      }
  am->stat.ncolor = used;
  am->stat.noverflow = over;
}

/* ------------------------------------------------------------------ local solve */

/* The geometric stiffness alone of joint jt's n two-sided rows on side `side`, rows the articulation block
 * solves as constraints: K += the terms of their forces λ at the arms, as rl_avbd_joint_add_rows adds them. */
RL_HDFN static void avbd_joint_geo_only(const rl_avbd *am, const rl_avbd_joint *jt, const rl_avbd_joint_arms *arms,
                                        int n, int side, real K[3]) {
  real f[6];
  for (int r = 0; r < n; r++) f[r] = am->row[jt->row + r].lambda;
  rl_avbd_joint_arms_geo(jt, arms, f, side, K);
}

/* Local system of body s: H = inertia + Σ ρ JJᵀ + diag geometric stiffness (lower triangle), g = ∇E + Σ J f.
 * kkt = 1: forces are the multipliers λ themselves (H unused).  tw (articulation blocks, kkt = 0): the
 * block's work array, whose slot of a tree hinge's child holds that hinge's coordinate terms G, k at the
 * current poses (avbd_tree_block), read instead of evaluated again; NULL: evaluated.  With tw, the
 * two-sided rows of the joints the block solves as constraints (rl_avbd.tsj: the tree joints and the roots'
 * joints to the world) are left out of H and g; the geometric stiffness of their forces λ stays.  H, g
 * filled. */
RL_HDFN void avbd_assemble(rl_avbd *am, const rl_model *m, const rl_data *d, int s, real h, int kkt, const double *tw,
                           real H[36], real g[6]) {
  const rl_avbd_param *pr = &am->prm;
  const rl_avbd_pose *P = am->pose + s;
  real K[3] = {0, 0, 0};
  rl_avbd_inertia(H, g, am->mass[s], am->I0 + 9 * s, P, am->xp + 3 * s, am->qp + 4 * s, h);
  if (am->smdof[s] >= 0) avbd_mdof_assemble(am, m, d, am->smdof[s], 1, h, kkt, H, g); /* its free joint's terms */
  for (int q = am->jadr[s]; q < am->jadr[s] + am->jnum[s]; q++) {
    const rl_avbd_joint *jt = am->joint + am->jlist[q];
    const rl_avbd_pose *A = avbd_pose_of(am, jt->a), *B = avbd_pose_of(am, jt->b);
    int side = jt->b == s, rows = !(tw && am->tsj[jt->b] == am->jlist[q]);
    if (am->jmdof[am->jlist[q]] >= 0) avbd_mdof_assemble(am, m, d, am->jmdof[am->jlist[q]], side, h, kkt, H, g);
    if (jt->kind == RL_AVBD_COMPOUND) {
      avbd_compound_assemble(am, m, d, jt, side, h, kkt, rows, H, g, K);
      continue;
    }
    if (rl_avbd_joint_val_ok(jt)) { /* rows and hinge coordinate from the cached values */
      const rl_avbd_joint_val *v = avbd_joint_value(am, am->jlist[q]);
      if (avbd_joint_on(m, d, jt)) {
        if (rows) rl_avbd_joint_assemble_val(H, g, K, jt, am->row + jt->row, v, side, pr->alpha_joint, kkt);
        else avbd_joint_geo_only(am, jt, &v->arms, v->n, side, K);
      }
      if (jt->kind == RL_AVBD_HINGE) {
        /* ∂φ/∂δθ_B = a = R_B axB, ∂φ/∂δθ_A = −a (rl_avbd_joint_coord) */
        real dphi[6] = {0, 0, 0, 0, 0, 0}, G, k;
        for (int i = 0; i < 3; i++) dphi[3 + i] = side ? v->arms.a[i] : -v->arms.a[i];
        if (tw && am->tjoint[jt->b] == am->jlist[q]) {
          G = (real)tw[AVBD_TW * jt->b + AVBD_TW_GK];
          k = (real)tw[AVBD_TW * jt->b + AVBD_TW_GK + 1];
        } else avbd_coord_terms(am, m, d, jt, rl_avbd_unwrap(v->phi_raw, jt->phi), h, kkt, &G, &k);
        rl_avbd_add_row_ang(H, g, dphi, G, kkt ? 0 : k);
      }
      continue;
    }
    if (avbd_joint_on(m, d, jt)) {
      if (rows) rl_avbd_joint_assemble(H, g, K, jt, am->row + jt->row, A, B, side, pr->alpha_joint, kkt);
      else if (jt->kind != RL_AVBD_SLIDE) {
        real C[6];
        rl_avbd_joint_arms arms;
        int n = rl_avbd_joint_side_rows(jt, A, B, side, C, NULL, &arms);
        avbd_joint_geo_only(am, jt, &arms, n, side, K);
      }
    }
    if (jt->kind == RL_AVBD_HINGE || jt->kind == RL_AVBD_SLIDE) {
      real dA[6], dB[6], G, k;
      real phi = rl_avbd_joint_coord(jt, A, B, jt->phi, dA, dB);
      avbd_coord_terms(am, m, d, jt, phi, h, kkt, &G, &k);
      if (jt->kind == RL_AVBD_HINGE) rl_avbd_add_row_ang(H, g, side ? dB : dA, G, kkt ? 0 : k);
      else rl_avbd_add_row(H, g, side ? dB : dA, G, kkt ? 0 : k);
    }
  }
  for (int q = am->cadr[s]; q < am->cadr[s] + am->cnum[s]; q++) {
    const rl_avbd_contact *c = am->con + am->clist[q];
    rl_avbd_contact_assemble_val(H, g, K, c, avbd_contact_val(am, am->clist[q]), avbd_dq_of(am, c->a),
                                 avbd_dq_of(am, c->b), c->b == s, pr->alpha, kkt,
                                 pr->block == RL_AVBD_BLOCK_ARTICULATION);
  }
  if (am->nspat > 0) avbd_tendon_assemble(am, m, d, s, h, kkt, H, g);
  for (int i = 0; i < 3; i++) H[7 * (3 + i)] += K[i];
}

/* One block update: H δz = −g (guarded Cholesky), clamp ‖δx‖ ≤ max_dx, ‖δθ‖ ≤ max_dθ,
 * x ← x + δx, q ← Exp(δθ)·q.  Returns the update sizes. */
RL_HDFN void avbd_block_update(rl_avbd *am, const rl_model *m, const rl_data *d, int s, real h) {
  real H[36], g[6];
  avbd_assemble(am, m, d, s, h, 0, NULL, H, g);
  am->guard[s] = rl_avbd_body_update(am->pose + s, am->dx + 3 * s, am->dq + 4 * s, am->x0 + 3 * s, am->q0 + 4 * s, H, g,
                                     am->prm.max_dx, am->prm.max_dtheta, am->upd + 2 * s, am->upd + 2 * s + 1);
  avbd_moved(am, s);
}

/* Two block updates of the same color, s0 and s1: both systems assembled (neither reads the other's pose
 * or rows: bodies of one color share no joint, contact or tendon), solved together (rl_avbd_chol_solve6_x2, the
 * same operations per body as rl_avbd_chol_solve6), then both bodies moved.  Bit-identical to
 * avbd_block_update(s0) followed by avbd_block_update(s1); the two solves' latency chains overlap. */
RL_HDFN static void avbd_block_update2(rl_avbd *am, const rl_model *m, const rl_data *d, int s0, int s1, real h) {
  real H0[36], g0[6], H1[36], g1[6], dz0[6], dz1[6];
  int gd[2];
  avbd_assemble(am, m, d, s0, h, 0, NULL, H0, g0);
  avbd_assemble(am, m, d, s1, h, 0, NULL, H1, g1);
  rl_avbd_chol_solve6_x2(H0, g0, dz0, H1, g1, dz1, gd);
  const int sl[2] = {s0, s1};
  real *dz[2] = {dz0, dz1};
  for (int l = 0; l < 2; l++) {
    int s = sl[l];
    am->guard[s] = gd[l];
    rl_avbd_body_apply(am->pose + s, am->dx + 3 * s, am->dq + 4 * s, am->x0 + 3 * s, am->q0 + 4 * s, dz[l],
                       am->prm.max_dx, am->prm.max_dtheta, am->upd + 2 * s, am->upd + 2 * s + 1);
    avbd_moved(am, s);
  }
}

int rl_avbd_openmp(void) {
#if defined(_OPENMP)
  return 1;
#else
  return 0;
#endif
}

/* One colored sweep: the bodies color by color in am->order.  A block update writes only its own
 * body (pose, dx, dq, upd, guard) and reads its neighbours, which never share its color, so the bodies
 * of one color may run in any order or at once: with prm.threads > 1 (and OpenMP) they are split over
 * threads; the overflow color, whose bodies may be neighbours, stays serial.  The update sizes and guard
 * counts are gathered per body and reduced afterwards in sweep order, so every result is bit-identical at
 * any thread count.  Returns max ‖δx‖, max ‖δθ‖ of the sweep. */
RL_HDFN static void avbd_sweep(rl_avbd *am, const rl_model *m, const rl_data *d, real h, real *ux, real *uth) {
  int nb = am->nb;
  for (int k0 = 0; k0 < nb;) {
    int c = am->color[am->order[k0]], k1 = k0;
    while (k1 < nb && am->color[am->order[k1]] == c) k1++;
#if defined(_OPENMP)
    if (am->prm.threads > 1 && c < AVBD_MAXCOLOR && k1 - k0 > 1) {
#pragma omp parallel for num_threads(am->prm.threads) schedule(static)
      for (int k = k0; k < k1; k++) avbd_block_update(am, m, d, am->order[k], h);
    } else
#endif
        if (c < AVBD_MAXCOLOR) { /* a proper color: its bodies in pairs (avbd_block_update2) */
      int k = k0;
      for (; k + 1 < k1; k += 2) avbd_block_update2(am, m, d, am->order[k], am->order[k + 1], h);
      if (k < k1) avbd_block_update(am, m, d, am->order[k], h);
    } else /* the overflow color: its bodies may be neighbours, one after the other */
      for (int k = k0; k < k1; k++) avbd_block_update(am, m, d, am->order[k], h);
    k0 = k1;
  }
  *ux = *uth = 0;
  for (int k = 0; k < nb; k++) {
    int s = am->order[k];
    *ux = rl_avbd_max(*ux, am->upd[2 * s]);
    *uth = rl_avbd_max(*uth, am->upd[2 * s + 1]);
    am->stat.guarded += am->guard[s];
  }
}

/* --------------------------------------------------------------- coarse step */

/* External contact rows of body s in component c (the other body is the world or outside c): forces and
 * weights as in avbd_assemble (normal, Coulomb-projected tangents; spin/roll rows left out). */
RL_HDFN static void avbd_coarse_contacts(const rl_avbd *am, int s, int c, real H[36], real g[6]) {
  const rl_avbd_param *pr = &am->prm;
  for (int q = am->cadr[s]; q < am->cadr[s] + am->cnum[s]; q++) {
    const rl_avbd_contact *k = am->con + am->clist[q];
    int side = k->b == s, o = side ? k->a : k->b;
    if (o >= 0 && am->comp[o] == c) continue;
    real pA[3], pB[3], uA[3], uB[3], dd[3], C[3], f[3];
    avbd_contact_points(am, k, pA, uA, pB, uB);
    rl_v3_sub(dd, pB, pA);
    for (int r = 0; r < 3; r++) C[r] = rl_v3_dot(k->frame + 3 * r, dd);
    f[0] = rl_avbd_proj_neg(k->lambda[0] + k->rho[0] * (C[0] - k->target_n));
    f[1] = k->lambda[1] + k->rho[1] * (C[1] - pr->alpha * k->c0[1]);
    f[2] = k->lambda[2] + k->rho[2] * (C[2] - pr->alpha * k->c0[2]);
    rl_avbd_proj_disc(f + 1, k->mu * -f[0]);
    for (int r = 0; r < 3; r++) {
      const real *w = k->frame + 3 * r;
      real J[6], x[3];
      rl_v3_cross(x, side ? uB : uA, w);
      for (int i = 0; i < 3; i++) {
        J[i] = side ? w[i] : -w[i];
        J[3 + i] = side ? x[i] : -x[i];
      }
      real wt = !(f[0] < 0 || k->lambda[0] < 0) ? 0 : k->rho[r];
      if (r > 0 && k->mu <= 0) wt = 0;
      rl_avbd_add_row(H, g, J, f[r], wt);
    }
  }
}

/* H_c += Tᵀ H T, g_c += Tᵀ g with T = [I, −[r]×; 0, I] (H full symmetric, lower triangle of H_c).
 * Column 3+a of T has its nonzeros at rows b < c (the two indices other than a: T[b][3+a], T[c][3+a]
 * from −[r]×) and 3+a (1); the products skip T's zeros and keep the order of the dense sums. */
RL_HDFN static void avbd_coarse_add(real Hc[36], real gc[6], const real H[36], const real g[6], const real r[3]) {
  real T[9] = {0, r[2], -r[1], -r[2], 0, r[0], r[1], -r[0], 0}; /* T[k][3+a] = T[3k + a], k, a < 3 */
  real HT[36];
  for (int i = 0; i < 6; i++) {
    for (int j = 0; j < 3; j++) HT[6 * i + j] = H[6 * i + j];
    for (int a = 0; a < 3; a++) {
      int b = a == 0 ? 1 : 0, c = a == 2 ? 1 : 2;
      HT[6 * i + 3 + a] = H[6 * i + b] * T[3 * b + a] + H[6 * i + c] * T[3 * c + a] + H[6 * i + 3 + a];
    }
  }
  for (int i = 0; i < 6; i++) {
    int a = i - 3, b = a == 0 ? 1 : 0, c = a == 2 ? 1 : 2;
    gc[i] += i < 3 ? g[i] : T[3 * b + a] * g[b] + T[3 * c + a] * g[c] + g[i];
    for (int j = 0; j <= i; j++)
      Hc[6 * i + j] +=
          i < 3 ? HT[6 * i + j] : T[3 * b + a] * HT[6 * b + j] + T[3 * c + a] * HT[6 * c + j] + HT[6 * i + j];
  }
}

/* Coarse step on each free articulated component (a rigid motion of all its bodies together): block
 * Gauss–Seidel moves a whole assembly only through its local rows, so a global mode (microduck tipping
 * on its feet: every body turning ~2e-10 … 5e-7 rad per sweep in lockstep) converges at ~0.5 % per
 * sweep.  The joint rows, coordinate terms and servos depend on relative poses only and drop out of a
 * rigid motion δ = (δX, δΘ) about the component's COM x_c; the rest is summed per body with
 * T_s = [I, −[r_s]×; 0, I], r_s = x_s − x_c:  H_c = Σ T_sᵀ H_s T_s,  g_c = Σ T_sᵀ g_s  (H_s, g_s: inertia
 * term and the contact rows with bodies outside the component), H_c δ = −g_c, and every body moves by
 * T_s δ (δx_s = δX + δΘ × r_s, δθ_s = δΘ).  *ux, *uth: the largest ‖δx_s‖, ‖δθ_s‖ it moved a body by. */
RL_HDFN static void avbd_coarse(rl_avbd *am, real h, real *ux, real *uth) {
  int nb = am->nb;
  *ux = 0;
  *uth = 0;
  real *W = am->cwork; /* per component root c: H [36], g [6], x_c [3], M [1] */
  for (int s = 0; s < nb; s++)
    for (int i = 0; i < 46; i++) W[46 * s + i] = 0;
  for (int s = 0; s < nb; s++) {
    int c = am->comp[s];
    if (c < 0) continue;
    rl_v3_addscl(W + 46 * c + 42, am->pose[s].x, am->mass[s]);
    W[46 * c + 45] += am->mass[s];
  }
  for (int s = 0; s < nb; s++) {
    int c = am->comp[s];
    if (c < 0) continue;
    real *Hc = W + 46 * c, *gc = Hc + 36, xc[3], r[3], H[36], g[6];
    rl_v3_scale(xc, Hc + 42, 1 / Hc[45]);
    rl_v3_sub(r, am->pose[s].x, xc);
    rl_avbd_inertia(H, g, am->mass[s], am->I0 + 9 * s, am->pose + s, am->xp + 3 * s, am->qp + 4 * s, h);
    avbd_coarse_contacts(am, s, c, H, g);
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < i; j++) H[6 * j + i] = H[6 * i + j]; /* full symmetric */
    avbd_coarse_add(Hc, gc, H, g, r);
  }
  for (int c = 0; c < nb; c++) {
    if (!(W[46 * c + 45] > 0)) continue;
    real dz[6];
    am->stat.guarded += rl_avbd_chol_solve6(W + 46 * c, W + 46 * c + 36, dz);
    rl_avbd_clamp3(dz, am->prm.max_dx);
    rl_avbd_clamp3(dz + 3, am->prm.max_dtheta);
    for (int i = 0; i < 6; i++) W[46 * c + 36 + i] = dz[i]; /* the step, read below */
  }
  for (int s = 0; s < nb; s++) {
    int c = am->comp[s];
    if (c < 0) continue;
    const real *dz = W + 46 * c + 36;
    real xc[3], r[3], w[3];
    rl_v3_scale(xc, W + 46 * c + 42, 1 / W[46 * c + 45]);
    rl_v3_sub(r, am->pose[s].x, xc);
    rl_v3_cross(w, dz + 3, r);
    rl_v3_add(w, w, dz);
    *ux = rl_avbd_max(*ux, rl_sqrt(rl_v3_dot(w, w)));
    *uth = rl_avbd_max(*uth, rl_sqrt(rl_v3_dot(dz + 3, dz + 3)));
    rl_avbd_body_move(am->pose + s, am->dx + 3 * s, am->dq + 4 * s, am->x0 + 3 * s, am->q0 + 4 * s, w, dz + 3);
    avbd_moved(am, s);
  }
}

/* ------------------------------------------ Chebyshev acceleration of the multipliers */

/* Chebyshev semi-iterative weights (Wang 2015, used on the primal sweeps by VBD): ω₁ = 1,
 * ω₂ = 2/(2 − ρ²), ω_k = 4/(4 − ρ²·ω_{k−1}), ρ the spectral radius of one iteration; k counts the
 * accelerated iterations since the last (re)start. */
RL_HDFN static real avbd_cheb_omega(int k, real rho, real prev) {
  if (k <= 1) return 1;
  if (k == 2) return 2 / (2 - rho * rho);
  return 4 / (4 - rho * rho * prev);
}

/* history shift: λ_{k−2} ← λ_{k−1}, λ_{k−1} ← λ (every row) */
RL_HDFN static void avbd_cheb_shift(rl_avbd *am) {
  real *l1 = am->chl, *l2 = am->chl + am->nrow;
  for (int r = 0; r < am->nrow; r++) {
    l2[r] = l1[r];
    l1[r] = am->row[r].lambda;
  }
}

/* λ_k = ω(λ̂_k − λ_{k−2}) + λ_{k−2} on the two-sided rows (joints, equalities: no projection), λ̂_k the
 * dual update's multiplier.  On the multipliers, not the poses: extrapolating the poses (x and the
 * rotation increments, VBD's form) diverged on chain8 at every ρ ≥ 0.9 and gained nothing at 0.8
 * (sweeps to a 1e-6 m distance from the dense KKT solution 68 → 71), alone or together with the
 * multipliers, before or after the dual update; the slow mode is the dual ascent λ ← λ + ρC.  The
 * contact rows are left alone: extrapolating them too (λ_n projected on ≤ 0, λ_t on the Coulomb disc)
 * took box_pyramid (2 ms) from 176 to 165 sweeps/step at ρ 0.93 but to 259 at 0.97, and microduck from
 * 61 to 67. */
RL_HDFN static void avbd_cheb_extrapolate(rl_avbd *am, real omega) {
  const real *l2 = am->chl + am->nrow;
  for (int r = 0; r < am->nrow; r++) {
    rl_avbd_row *w = am->row + r;
    if (w->kind == RL_AVBD_ROW_LIN || w->kind == RL_AVBD_ROW_ANG) w->lambda = omega * (w->lambda - l2[r]) + l2[r];
  }
}

/* After the dual update of sweep it (prm.cheb_rho > 0; not after the last sweep of a step): from sweep
 * cheb_start on, the next weight and the extrapolation; a sweep whose update u (in tolerances) grew over
 * the last one's restarts the sequence at ω₁ = 1 (without the restart chain8 needs 38/67 sweeps to 1e-6
 * instead of 29/41).  Tried and dropped: restarting on growth of the row residual instead (chain8
 * diverges), rolling λ back on a restart (diverges), switching off for the step at the first growth
 * (chain8 gains 3 %).  Known limit: chain50 at 50 000:1 (every step exhausts the budget) keeps its anchors
 * at ρ ≤ 0.8 (1.6e-9 m) but not at 0.9 (2.8e-4 m) or 0.93 (2.0e-3 m, from 2.6e-9 m off). */
RL_HDFN static void avbd_cheb_dual(rl_avbd *am, int it, real u, int *kc, real *omega, real *uprev) {
  const rl_avbd_param *pr = &am->prm;
  if (it >= pr->cheb_start) {
    *kc = (*kc > 0 && u > *uprev) ? 1 : *kc + 1;
    *omega = avbd_cheb_omega(*kc, pr->cheb_rho, *omega);
    if (*kc >= 2) avbd_cheb_extrapolate(am, *omega);
  }
  *uprev = u;
  avbd_cheb_shift(am);
}

/* --------------------------------------------------------------- dual update */


/* Dual update of the coordinate rows of a hinge or slide jt at its coordinate jt->phi: limits
 * λ ← min(λ + ρC̃, 0), dry friction λ ← clip(λ + ρΔφ, ±τ_f) (residuals into res[ang]). */
RL_HDFN static void avbd_coord_dual(rl_avbd *am, const rl_model *m, const rl_data *d, const rl_avbd_joint *jt, real res[2]) {
  const rl_avbd_param *pr = &am->prm;
  int dis = m->opt.disableflags;
  int ang = jt->kind == RL_AVBD_HINGE;
  real ell = ang ? AVBD_ANG_SCALE : AVBD_LIN_SCALE;
  if (m->jnt_limited[jt->jnt] && !(dis & (RL_DSBL_LIMIT | RL_DSBL_CONSTRAINT))) {
    for (int side = 0; side < 2; side++) {
      rl_avbd_row *w = am->row + (side ? jt->hi_row : jt->lo_row);
      real C = avbd_limit_c(m, d, jt->jnt, side, jt->phi);
      real Ct = C - rl_avbd_one_sided_target(w->c0, pr->alpha, pr->slop);
      res[ang] = rl_avbd_max(res[ang], avbd_one_sided_dual(pr, w, Ct, ell));
    }
  }
  real tf = avbd_dry_budget(am, m, jt);
  if (tf > 0 && !(dis & (RL_DSBL_FRICTIONLOSS | RL_DSBL_CONSTRAINT))) {
    rl_avbd_row *w = am->row + jt->dry_row;
    w->c = jt->phi - jt->phi_n;
    real t = w->lambda + w->rho * w->c, nl = rl_avbd_clip(t, tf);
    real rf = rl_fabs(w->lambda - nl) / w->rho;
    res[ang] = rl_avbd_max(res[ang], rf);
    am->stat.dry_residual = rl_avbd_max(am->stat.dry_residual, rf);
    w->lambda = nl;
    if (rl_fabs(t) < tf) w->rho = avbd_grow(pr, w->rho, w->rho0, w->c, ell);
  }
}

/* The multipliers of the two-sided rows of joint jt from the articulation block's Newton step (avbd_tree_subst),
 * where the block solves them as constraints; NULL otherwise.  They are the rows' forces of that step's KKT
 * system; λ ← λ + ρC̃ has nothing to add after a step that solved C̃ + Jδ = 0 (with the stiff ρ of these rows it
 * turned the rounding of the poses into force noise ρ·ε|x|: single precision, chain8's stationarity residual
 * 2.4e2 N against a 0.9 N correction). */
RL_HDFN static const double *avbd_newton_multipliers(const rl_avbd *am, const rl_avbd_joint *jt) {
  if (am->prm.block != RL_AVBD_BLOCK_ARTICULATION || jt->b < 0 || am->tsj[jt->b] != jt - am->joint) return NULL;
  return am->twork + AVBD_TW * jt->b + AVBD_TW_NU;
}

/* Dual update of compound joint jt: its two-sided rows as avbd_dual_update's, the coordinates found
 * accepted as the next guess, then each hinge/slide component's limit and dry rows. */
RL_HDFN static void avbd_compound_dual(rl_avbd *am, const rl_model *m, const rl_data *d, rl_avbd_joint *jt, real res[2]) {
  const rl_avbd_param *pr = &am->prm;
  const rl_avbd_compound_val *v = avbd_compound_value(am, jt);
  rl_avbd_compound *c = am->cmp + jt->cmp;
  const double *nu = avbd_newton_multipliers(am, jt);
  if (avbd_joint_on(m, d, jt))
    for (int r = 0; r < jt->neq; r++) {
      rl_avbd_row *w = am->row + jt->row + r;
      w->c = v->C[r] - pr->alpha_joint * w->c0;
      w->lambda = nu ? (real)nu[r] : w->lambda + w->rho * w->c;
      int ang = w->kind == RL_AVBD_ROW_ANG;
      res[ang] = rl_avbd_max(res[ang], rl_fabs(w->c));
      w->rho = avbd_grow(pr, w->rho, w->rho0, w->c, ang ? AVBD_ANG_SCALE : AVBD_LIN_SCALE);
    }
  memcpy(c->q, v->q, sizeof c->q);
  for (int k = 0; k < c->n; k++) {
    rl_avbd_joint *sj = c->sub + k;
    if (sj->kind == RL_AVBD_BALL) continue;
    sj->phi = c->q[k][0];
    avbd_coord_dual(am, m, d, sj, res);
  }
}

/* The two tangent rows of a contact share one penalty ρ_t, grown as the slower of the two rows would grow:
 * ρ_t ← grow(ρ_t, min(|C̃_t1|, |C̃_t2|)), no stiffer than either row's own rule would make it.  The disc
 * projection λ_t ← Π(λ_t + ρ_t C̃_t) then has its sliding fixed point at λ_t ∥ C̃_t, the force against the slip
 * (Coulomb's maximal dissipation).  With a penalty per row, each grown by its own |C̃|, the fixed point is
 * λ_t ∥ diag(ρ)C̃_t: the force leans toward the stiffer row (Gymnasium's humanoid sliding on one foot:
 * ρ_t1 ≈ 2.3 ρ_t2, the force 20° off the slip, the step's poses 1e-4 rad from the isotropic solution). */
RL_HDFN static void avbd_grow_tangents(const rl_avbd_param *pr, rl_avbd_contact *c) {
  real ct = rl_avbd_min(rl_fabs(c->c[1]), rl_fabs(c->c[2]));
  c->rho[1] = c->rho[2] = avbd_grow(pr, rl_avbd_max(c->rho[1], c->rho[2]), c->rho0, ct, AVBD_LIN_SCALE);
}

/* After a sweep: two-sided rows λ ← λ + ρC̃ (ρ grows); one-sided rows λ ← min(λ + ρC̃, 0) (ρ grows
 * only while active); dry friction λ ← clip(λ + ρΔφ, ±τ_f) (ρ grows only inside the budget);
 * contact normals as limits and tangents projected on the Coulomb disc μ(−λ_n⁺) (ρ grows only when
 * sticking).  Residuals r = |λ − Π(λ + ρC̃)|/ρ (= |C̃| for two-sided rows) go to res[0] (lengths) and
 * res[1] (angles). */
RL_HDFN static void avbd_dual_update(rl_avbd *am, const rl_model *m, const rl_data *d, real res[2]) {
  const rl_avbd_param *pr = &am->prm;
  res[0] = res[1] = 0;
  for (int j = 0; j < am->njoint; j++) {
    rl_avbd_joint *jt = am->joint + j;
    if (jt->kind == RL_AVBD_COMPOUND) {
      avbd_compound_dual(am, m, d, jt, res);
      continue;
    }
    const rl_avbd_pose *A = avbd_pose_of(am, jt->a), *B = avbd_pose_of(am, jt->b);
    const rl_avbd_joint_val *v = rl_avbd_joint_val_ok(jt) ? avbd_joint_value(am, j) : NULL;
    if (avbd_joint_on(m, d, jt)) {
      real Cs[6];
      const real *C = Cs;
      rl_avbd_joint_arms arms;
      int n;
      if (v) {
        C = v->C;
        n = v->n;
      } else n = rl_avbd_joint_side_rows(jt, A, B, 0, Cs, NULL, &arms);
      const double *nu = avbd_newton_multipliers(am, jt);
      for (int r = 0; r < n; r++) {
        rl_avbd_row *w = am->row + jt->row + r;
        w->c = C[r] - pr->alpha_joint * w->c0;
        w->lambda = nu ? (real)nu[r] : w->lambda + w->rho * w->c;
        int ang = w->kind == RL_AVBD_ROW_ANG;
        res[ang] = rl_avbd_max(res[ang], rl_fabs(w->c));
        w->rho = avbd_grow(pr, w->rho, w->rho0, w->c, ang ? AVBD_ANG_SCALE : AVBD_LIN_SCALE);
      }
    }
    if (jt->kind != RL_AVBD_HINGE && jt->kind != RL_AVBD_SLIDE) continue;
    real dA[6], dB[6];
    jt->phi = v ? rl_avbd_unwrap(v->phi_raw, jt->phi) : rl_avbd_joint_coord(jt, A, B, jt->phi, dA, dB);
    avbd_coord_dual(am, m, d, jt, res);
  }
  if (am->ncrow > 0) avbd_crow_dual(am, m, d, res);
  if (am->nmdof > 0) avbd_mdof_dual(am, m, d, res);
  int keep = pr->stop == RL_AVBD_STOP_CERTIFIED && am->ncert > 0; /* the certificate reads the multipliers before */
  for (int i = 0; i < am->ncon; i++) {
    rl_avbd_contact *c = am->con + i;
    const real *C = avbd_contact_val(am, i)->C;
    if (keep)
      for (int r = 0; r < 3; r++) am->clam[3 * i + r] = c->lambda[r];
    c->c[0] = C[0] - c->target_n;
    if (c->c[0] <= 0) c->touched = 1;
    real nl = rl_avbd_proj_neg(c->lambda[0] + c->rho[0] * c->c[0]);
    res[0] = rl_avbd_max(res[0], rl_fabs(c->lambda[0] - nl) / c->rho[0]);
    c->lambda[0] = nl;
    if (nl < 0) c->rho[0] = avbd_grow(pr, c->rho[0], c->rho0, c->c[0], AVBD_LIN_SCALE);
    real t[2];
    for (int r = 1; r < 3; r++) {
      c->c[r] = C[r] - pr->alpha * c->c0[r];
      t[r - 1] = c->lambda[r] + c->rho[r] * c->c[r];
    }
    c->stick = rl_avbd_proj_disc(t, c->mu * -nl);
    real e0 = (c->lambda[1] - t[0]) / c->rho[1], e1 = (c->lambda[2] - t[1]) / c->rho[2];
    res[0] = rl_avbd_max(res[0], rl_sqrt(e0 * e0 + e1 * e1));
    c->lambda[1] = t[0];
    c->lambda[2] = t[1];
    if (c->stick && nl < 0) avbd_grow_tangents(pr, c);
    if (c->mu_spin > 0 || c->mu_roll > 0) {
      real Ca[3], ta[3];
      rl_avbd_contact_ang(c, avbd_dq_of(am, c->a), avbd_dq_of(am, c->b), Ca);
      for (int r = 0; r < 3; r++) ta[r] = c->alam[r] + c->arho[r] * Ca[r];
      int in = rl_avbd_contact_ang_proj(c, ta, -nl);
      for (int r = 0; r < 3; r++) {
        res[1] = rl_avbd_max(res[1], rl_fabs(c->alam[r] - ta[r]) / c->arho[r]);
        c->alam[r] = ta[r];
        if (in && nl < 0) c->arho[r] = avbd_grow(pr, c->arho[r], c->arho0, Ca[r], AVBD_ANG_SCALE);
      }
    }
  }
}

/* ------------------------------------------------------------------------ step */

/* Step start of compound joint jt: C⁰ of its rows, each component's φⁿ, φ̇ⁿ and its limit rows' C⁰ */
RL_HDFN static void avbd_compound_begin(rl_avbd *am, const rl_model *m, const rl_data *d, rl_avbd_joint *jt, real h) {
  rl_avbd_compound *c = am->cmp + jt->cmp;
  rl_avbd_compound_val v;
  avbd_compound_eval(c, avbd_pose_of(am, jt->a), avbd_pose_of(am, jt->b), &v);
  for (int r = 0; r < jt->neq; r++) am->row[jt->row + r].c0 = v.C[r];
  memcpy(c->q, v.q, sizeof c->q);
  for (int k = 0; k < c->n; k++) {
    rl_avbd_joint *sj = c->sub + k;
    if (sj->kind == RL_AVBD_BALL) continue;
    /* φ̇ⁿ: the coordinate's own difference quotient over the last step, the velocity the armature energy
       a/(2h²)(φ − φⁿ − hφ̇ⁿ)² implies; the rate S⁺ω of the recovered body velocities differs from it by
       O(h) where S depends on the configuration (Euler-angle hinges), an error injected every step that
       does not shrink with h (three hinges with armature: 0.13 rad at 0.5 s at every h).  After
       rl_avbd_from_generalized: the rate of the given velocities. */
    real rate = avbd_compound_rate(am, jt, &v, v.pg[c->dof[k]]);
    if (am->steps > am->step0) rate = (v.q[k][0] - sj->phi_n) / h;
    sj->phi = sj->phi_n = v.q[k][0];
    sj->dphi_n = rate;
    am->row[sj->lo_row].c0 = avbd_limit_c(m, d, sj->jnt, 0, sj->phi_n);
    am->row[sj->hi_row].c0 = avbd_limit_c(m, d, sj->jnt, 1, sj->phi_n);
  }
}

/* Articulation blocks solve the loop rows of their loop items (equality joints, equality coordinate rows)
 * exactly within the block (avbd_tree_loop_step), so their penalty need not stay near the scale m/h² at which a
 * body-by-body sweep converges: they start each step at ρ ≥ rho_tree·ρ₀ (≤ ρ_max), and the dual update
 * λ ← λ + ρC̃ then leaves a residual of the order 1/(1 + rho_tree) of the last one instead of a slow ascent
 * (robotiq_like, f64, 0.2 s: 40 sweeps/step with them, 495 and every step unconverged without).  The tree
 * joints' rows are constraints of the block (avbd_tree_factor) and their penalty plays no part; when they
 * were stiffened penalty rows, microduck at 1 ms (f64, 0.5 s) took 131.9 iterations/step at rho_tree 1, 19 at
 * 100, 18 at 1e4.  The one-sided and bounded rows (limits, dry friction) keep their ρ: stiffened as well they
 * took standing microduck to 3.0 iterations/step, but a stiff limit flips active/inactive every iteration
 * (quadruped12 at the bench state: a period-3 cycle, every step exhausted) and a stiff dry-friction row that
 * slides keeps its full curvature (avbd_coord_terms) and crawls (microduck at the bench state: 500 sweeps). */
RL_HDFN static void avbd_tree_stiffen(rl_avbd *am) {
  const rl_avbd_param *pr = &am->prm;
  for (int i = 0; i < am->nlitem; i++) { /* the loop rows solved exactly in their block */
    const rl_avbd_litem *it = am->litem + i;
    if (it->block < 0) continue;
    int r0 = -1, nr = 0;
    if (it->kind == RL_AVBD_LOOP_EQ) r0 = am->joint[it->id].row, nr = am->joint[it->id].neq;
    else if (it->kind == RL_AVBD_LOOP_CROW && am->crow[it->id].type == RL_AVBD_CROW_EQ)
      r0 = am->crow[it->id].row, nr = 1;
    for (int r = 0; r < nr; r++) {
      rl_avbd_row *w = am->row + r0 + r;
      w->rho = rl_avbd_min(rl_avbd_max(w->rho, pr->rho_tree * w->rho0), pr->rho_max * w->rho0);
    }
  }
}

/* Step start: save x⁰, q⁰, frozen world inertia I₀ = R diag(I) Rᵀ, joint coordinates φⁿ
 * and rates φ̇ⁿ; multipliers decay λ ·= αγ, ρ ← clamp(γρ, ρ₀, ρ_max) with ρ₀ = rho_init·meff/h²;
 * C⁰ of every row.  A dry-friction row keeps its λ: its row Δφ = φ − φⁿ starts each step at zero, with no
 * start error for the α of the decay to scale, and its λ is the torque that holds a sticking joint, the same
 * from one step to the next; decayed, the dual ascent rebuilt 6 % of it every step (microduck standing at
 * 2 ms, double: 29.8 → 11.3 sweeps/step). */
RL_HDFN static void avbd_begin(rl_avbd *am, const rl_model *m, const rl_data *d, real h) {
  const rl_avbd_param *pr = &am->prm;
  for (int s = 0; s < am->nb; s++) {
    const rl_avbd_pose *P = am->pose + s;
    const real *J = am->inertia + 3 * s;
    rl_v3_copy(am->x0 + 3 * s, P->x);
    rl_q_copy(am->q0 + 4 * s, P->q);
    real *I0 = am->I0 + 9 * s;
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        I0[3 * i + j] = P->R[3 * i] * J[0] * P->R[3 * j] + P->R[3 * i + 1] * J[1] * P->R[3 * j + 1] +
                        P->R[3 * i + 2] * J[2] * P->R[3 * j + 2];
  }
  for (int r = 0; r < am->nrow; r++) {
    rl_avbd_row *w = am->row + r;
    w->rho0 = pr->rho_init * w->meff / (h * h);
    if (w->kind != RL_AVBD_ROW_DRY) w->lambda *= pr->alpha * pr->gamma;
    w->rho = rl_avbd_min(rl_avbd_max(w->rho * pr->gamma, w->rho0), pr->rho_max * w->rho0);
    w->c0 = 0;
  }
  if (pr->block == RL_AVBD_BLOCK_ARTICULATION) avbd_tree_stiffen(am);
  for (int j = 0; j < am->njoint; j++) {
    rl_avbd_joint *jt = am->joint + j;
    const rl_avbd_pose *A = avbd_pose_of(am, jt->a), *B = avbd_pose_of(am, jt->b);
    if (jt->kind == RL_AVBD_COMPOUND) {
      avbd_compound_begin(am, m, d, jt, h);
      continue;
    }
    real C[6], JA[6][6], JB[6][6];
    int n = rl_avbd_joint_rows(jt, A, B, C, JA, JB);
    for (int r = 0; r < n; r++) am->row[jt->row + r].c0 = C[r];
    if (jt->kind != RL_AVBD_HINGE && jt->kind != RL_AVBD_SLIDE) continue;
    real dA[6], dB[6];
    jt->phi = jt->phi_n = rl_avbd_joint_coord(jt, A, B, jt->phi, dA, dB);
    jt->dphi_n = avbd_coord_rate(am, jt);
    am->row[jt->lo_row].c0 = avbd_limit_c(m, d, jt->jnt, 0, jt->phi_n);
    am->row[jt->hi_row].c0 = avbd_limit_c(m, d, jt->jnt, 1, jt->phi_n);
  }
  /* an equality to a mocap-driven body: its gap at the step start is the prescribed motion since the last
     step (the body it holds is not carried along, rl_avbd_mocap_frames), corrected in full: C⁰ = 0 */
  for (int i = 0; i < am->nmoving; i++) {
    const rl_avbd_joint *jt = am->joint + am->moving[i].joint;
    if (jt->eq < 0) continue;
    for (int r = 0; r < jt->neq; r++) am->row[jt->row + r].c0 = 0;
  }
  if (am->nmdof > 0) avbd_mdof_begin(am, m, d, h);
  if (am->nwrench > 0) avbd_wrench_begin(am, m, d);
  avbd_tendon_begin(am, m);
  avbd_crow_begin(am, m, d);
}

/* Acceleration of the initial iterate (AVBD's adaptive initialization, in the extrapolating form): the
 * previous step's acceleration ã = (v − v_prev)/h, clamped to ‖ã‖ ≤ ‖g‖.  The iterate starts at
 * x + hv + h²(ã + f/m) instead of the prediction x_p = x + hv + h²(g + f/m): a supported body (ã ≈ 0) at
 * rest, a falling one at x_p, a sliding one along its slide.  Only for bodies in contact (a free
 * flier starts at x_p exactly, so its one sweep moves nothing: f32 loses ε|x| per step in x − x_p
 * otherwise, free fall 8e-5 m off in 1 s) and without joints:
 * box_stack 54 → 26 sweeps/step, box_pyramid f64 443 → 361 (0.5 s), but the gravity-share form of it
 * raised microduck (articulated) from 33 to 41 sweeps/step at 1 ms and from 19 to 52 at 2 ms. */
RL_HDFN static void avbd_start_accel(real ga[3], const real v[3], const real vprev[3], const real g[3], real h) {
  real gn = rl_v3_norm(g);
  rl_v3_sub(ga, v, vprev);
  rl_v3_scale(ga, ga, 1 / h);
  rl_avbd_clamp3(ga, gn);
}

/* External wrench fw = (f, τ) of slot s for the step (world, at the COM): the user's xfrc, the explicit actuator
 * wrenches on body poses (fext, avbd_wrench_begin) plus, with a fluid
 * (density or viscosity), the inertia-box force of MuJoCo's passive stage at the step-start velocity relative
 * to the wind (explicit, as MuJoCo's passive forces in its Euler step; rl_fluid_box.h):
 *   w = Rᵀω, v = Rᵀ(v_c − wind), (τ_box, f_box) = box forces(w, v), f += R·f_box, τ += R·τ_box
 * (R the COM frame, the body's inertia frame; the box sides from the model, rl_model.body_fluidbox). */
RL_HDFN static void avbd_external_wrench(const rl_avbd *am, const rl_model *m, int s, real fw[6]) {
  for (int i = 0; i < 6; i++) fw[i] = am->xfrc[6 * s + i];
  if (am->nwrench > 0)
    for (int i = 0; i < 6; i++) fw[i] += am->fext[6 * s + i];
  if (!(m->opt.density > 0 || m->opt.viscosity > 0) || (m->opt.disableflags & RL_DSBL_PASSIVE)) return;
  const real *R = am->pose[s].R, *vel = am->vel + 6 * s;
  real box[3], w[3], v[3], rel[3], tau[3], f[3], t[3];
  for (int i = 0; i < 3; i++) box[i] = m->body_fluidbox[3 * am->body[s] + i];
  rl_m3_tmulv(w, R, vel + 3);
  rl_v3_sub(rel, vel, m->opt.wind);
  rl_m3_tmulv(v, R, rel);
  rl_fluid_box_forces(m->opt.density, m->opt.viscosity, box, w, v, tau, f);
  rl_m3_mulv(t, R, f);
  rl_v3_add(fw, fw, t);
  rl_m3_mulv(t, R, tau);
  rl_v3_add(fw + 3, fw + 3, t);
}

/* Prediction: x_p = x + hv + h²(g + f/m) (f, τ: avbd_external_wrench); q_p from the gyroscopic ω prediction; the iterate
 * starts at the prediction, a body without joints at x + hv + h²(ã + f/m) (avbd_start_accel).  The displacement dx = x − x⁰ is kept separately (starting at
 * hv + h²(g + f/m)) so that the velocity recovery needs no difference of nearly equal positions
 * (in f32 that difference loses ε|x|/h per step). */
RL_HDFN static void avbd_predict(rl_avbd *am, const rl_model *m, real h) {
  real grav[3] = {0, 0, 0};
  if (!(m->opt.disableflags & RL_DSBL_GRAVITY)) rl_v3_copy(grav, m->opt.gravity);
  for (int s = 0; s < am->nb; s++) {
    rl_avbd_pose *P = am->pose + s;
    real wp[3], ga[3], fw[6];
    real zero[3] = {0, 0, 0};
    avbd_external_wrench(am, m, s, fw);
    rl_avbd_predict_lin(am->dx + 3 * s, zero, am->vel + 6 * s, grav, fw, am->mass[s], h);
    rl_v3_add(am->xp + 3 * s, P->x, am->dx + 3 * s);
    if (am->prm.adaptive_start && am->jnum[s] == 0 && am->cnum[s] > 0 && am->steps > am->step0) {
      avbd_start_accel(ga, am->vel + 6 * s, am->vprev + 3 * s, grav, h);
      rl_avbd_predict_lin(am->dx + 3 * s, zero, am->vel + 6 * s, ga, fw, am->mass[s], h);
    }
    rl_v3_copy(am->vprev + 3 * s, am->vel + 6 * s);
    rl_avbd_predict_rot(am->qp + 4 * s, wp, P->q, P->R, am->vel + 6 * s + 3, am->inertia + 3 * s, fw + 3, h);
    /* dq = Exp(h ω'), q_p = dq ⊗ q⁰ */
    real hw[3];
    rl_v3_scale(hw, wp, h);
    rl_so3_exp_quat(am->dq + 4 * s, hw);
    rl_q_mul(am->qp + 4 * s, am->dq + 4 * s, P->q);
    rl_q_normalize(am->qp + 4 * s);
    rl_v3_add(P->x, am->x0 + 3 * s, am->dx + 3 * s);
    rl_q_copy(P->q, am->qp + 4 * s);
    rl_avbd_pose_sync(P);
    avbd_moved(am, s);
  }
}

/* Velocity recovery: v = (x − x⁰)/h (= dx/h, accumulated), ω = Log(q (q⁰)⁻¹)/h (= Log(dq)/h). */
RL_HDFN static void avbd_recover_velocity(rl_avbd *am, real h) {
  for (int s = 0; s < am->nb; s++) {
    real *v = am->vel + 6 * s, w[3];
    rl_v3_scale(v, am->dx + 3 * s, 1 / h);
    rl_so3_log_quat(w, am->dq + 4 * s);
    rl_v3_scale(v + 3, w, 1 / h);
  }
}

/* Row scales follow the servo model (the BAM armature enters ρ₀): recomputed when it changes. */
RL_HDFN static void avbd_sync_scales(rl_avbd *am, const rl_model *m) {
  if (am->servo_scaled == am->prm.servo_model) return;
  for (int j = 0; j < am->njoint; j++) avbd_row_scales(am, m, am->joint + j);
  for (int i = 0; i < am->nmdof; i++) avbd_mdof_scales(am, m, am->mdof + i);
  avbd_components(am);
  am->servo_scaled = am->prm.servo_model;
}

/* the body poses (x, q) and velocities of the AVBD state pass the bad-state test (rl_state_ok: finite,
   |x| ≤ RL_MAXVAL); *which says the first that does not (RL_WARN_BADQPOS or RL_WARN_BADQVEL) */
RL_HDFN static int avbd_state_ok(const rl_avbd *am, int *which) {
  for (int s = 0; s < am->nb; s++)
    if (!rl_state_ok_hd(am->pose[s].x, 3) || !rl_state_ok_hd(am->pose[s].q, 4)) {
      *which = RL_WARN_BADQPOS;
      return 0;
    }
  for (int s = 0; s < am->nb; s++)
    if (!rl_state_ok_hd(am->vel + 6 * s, 6)) {
      *which = RL_WARN_BADQVEL;
      return 0;
    }
  return 1;
}
RL_HDFN static int avbd_state_finite(const rl_avbd *am) {
  int which;
  return avbd_state_ok(am, &which);
}

/* Tolerances of the step's residual and update test (f64): tol·max(1, (h/h₀)²), h₀ = 1 ms.  A sweep's
 * update and a row's residual are displacements, whose scale within a step grows as h² (h²g, h·v); at
 * a fixed tol a 2 ms step solved its problem to a 4× smaller acceleration error tol/h² than a 1 ms one.
 * Above 1 ms the test holds the acceleration error at tol/h₀² instead; at or below 1 ms it is tol.
 * f32 keeps tol at every h: its tolerances sit near the rounding floor of the poses, and the chain8 f32
 * order fit (noise-dominated below 1 ms already) fell to 0.06 with the scaled ones. */
RL_HDFN static void avbd_step_tolerance(const rl_avbd_param *pr, real h, real *tl, real *ta) {
#if defined(RL_REAL_F64)
  real sc = h > AVBD_TOL_H ? (h / AVBD_TOL_H) * (h / AVBD_TOL_H) : 1;
#else
  real sc = 1;
  (void)h;
#endif
  *tl = pr->tol_lin * sc;
  *ta = pr->tol_ang * sc;
}

/* Tolerances of the distance test (RL_AVBD_STOP_DISTANCE): tol·(h/h₀)² at every h, h₀ = 1 ms.  A solve
 * error δ in the positions of one step is a velocity error δ/h, and over T/h steps a position error of
 * about T·δ/h²·h = Tδ/h; first-order convergence (global error ∝ h) needs δ ∝ h², i.e. a fixed
 * acceleration error tol/h₀².  With tol given at h₀ the test means the same at 10 µs and at 10 ms. */
RL_HDFN static void avbd_distance_tolerance(const rl_avbd_param *pr, real h, real *tl, real *ta) {
  real sc = (h / AVBD_TOL_H) * (h / AVBD_TOL_H);
  *tl = pr->tol_lin * sc;
  *ta = pr->tol_ang * sc;
}

/* Estimated distance of the iterate to the step's exact solution from the sweep updates u_k (sizes of
 * the last sweeps, newest first in u[0..n), n ≤ AVBD_STOP_HIST): with a contraction rate r = the largest
 * of the last ratios u_k/u_{k−1} (up to AVBD_STOP_HIST − 1 of them: the slow modes of the dual ascent
 * appear late), the remaining motion is Σ_{j≥1} u_k r^j = u_k·r/(1 − r) for a geometric tail, and the
 * estimate is AVBD_STOP_SAFETY times that: the rate still rises as the fast modes die out (measured
 * against the dense KKT solution: the plain tail estimate was exceeded up to 3.8× on chain8).  Returns a
 * huge value while fewer than 4 sweeps are known or the updates are not contracting (r ≥ 0.999); 0 when
 * the last update is 0. */
#define AVBD_STOP_HIST   8
#define AVBD_STOP_SAFETY ((real)4)
RL_HDFN static real avbd_tail_distance(const real *u, int n) {
  if (u[0] == 0) return 0;
  if (n < 4) return (real)1e30;
  if (n > AVBD_STOP_HIST) n = AVBD_STOP_HIST;
  real r = 0;
  for (int i = 0; i + 1 < n; i++) r = rl_avbd_max(r, u[i + 1] > 0 ? u[i] / u[i + 1] : (real)1e30);
  if (!(r < (real)0.999)) return (real)1e30;
  return AVBD_STOP_SAFETY * u[0] * r / (1 - r);
}

/* The distance the test can claim is never below the rounding of the poses: 16ε·max(max_i ‖x_i‖∞, 1 m)
 * (m) and 16ε (rad).  Below it an update can round to zero while the iterate is still that far from the
 * exact step (f32 pendulum at h = 10 µs: the claim tol·(h/1 ms)² = 5e-11 m, the distance 1.9e-8 m). */
RL_HDFN static void avbd_rounding_floor(const rl_avbd *am, real *tl, real *ta) {
  real xm = 1;
  for (int s = 0; s < am->nb; s++)
    for (int i = 0; i < 3; i++) xm = rl_avbd_max(xm, rl_fabs(am->pose[s].x[i]));
  *tl = rl_avbd_max(*tl, 16 * RL_EPS * xm);
  *ta = rl_avbd_max(*ta, 16 * RL_EPS);
}

/* Articulation blocks converge like Newton on a tree without contacts (chain8 at 10 ms: updates 1e-2, 1e-6,
 * 1e-13, then rounding), so the update reaches the rounding of the poses before the tail estimate has its
 * four contracting sweeps, and the rounding noise after that does not contract (ratios ≈ 1): the estimate
 * stays infinite and the step used its whole budget while its iterate was 1e-15 m from the dense KKT
 * solution.  An update within 4ε·X (m), X = max(max_i ‖x_i‖∞, 1 m), and 4ε·max(1, X/ℓ) (rad) is a move the
 * poses cannot resolve: the iterate is at the fixed point of the iteration in this precision, and the distance
 * is taken as that update.  ℓ (rl_avbd.tlever, at least 1 cm) is the shortest lever of the block's joints: a
 * joint's rows hold its anchors to the rounding of the positions, ε·X, which a rotation about a point ℓ away
 * resolves as ε·X/ℓ rad (chain8, f64, step 131: updates 8e-16 m and 2.5e-15 rad for 500 sweeps at the fixed
 * point, above 4ε = 8.9e-16 rad).  Body sweeps keep the plain tail estimate: their slow dual ascent can make
 * tiny updates far from the solution. */
RL_HDFN static void avbd_tail_at_rounding(const rl_avbd *am, real ux, real uth, real *dl, real *da) {
  real xm = 1;
  for (int s = 0; s < am->nb; s++)
    for (int i = 0; i < 3; i++) xm = rl_avbd_max(xm, rl_fabs(am->pose[s].x[i]));
  real arm = rl_avbd_max(am->tlever, (real)0.01);
  if (ux <= 4 * RL_EPS * xm && uth <= 4 * RL_EPS * rl_avbd_max(1, xm / arm)) {
    *dl = ux;
    *da = uth;
  }
}

/* A step whose sweeps run away: it ends unconverged with its last sweep still moving some body by the clamp of
 * one update (max_dx or max_dθ, 0.5 m or 0.5 rad), where a converging step's updates shrink to its tolerance.
 * Hard constraints that no motion can satisfy do this: MuJoCo's hammock (a flat grid of inextensible tendons
 * pinned at its four corners, a humanoid falling onto it; the grid cannot carry a load without stretching)
 * ran its fifth step's sweeps up to the clamp within 200 sweeps, and the state it returned had 230 m/s and
 * 4e6 J (f32: 1e53 J a few steps later).  Such a step is undone as a non-finite one. */
RL_HDFN static int avbd_runaway(const rl_avbd_param *pr, int converged, real ux, real uth) {
  return !converged && (ux >= (real)0.99 * pr->max_dx || uth >= (real)0.99 * pr->max_dtheta);
}

/* push the newest update size into a history of AVBD_STOP_HIST, newest first */
RL_HDFN static void avbd_push_update(real *u, real x) {
  for (int i = AVBD_STOP_HIST - 1; i > 0; i--) u[i] = u[i - 1];
  u[0] = x;
}

RL_HDFN rl_status rl_avbd_step_maximal(rl_avbd *am, const rl_model *m, rl_data *d) {
  real h = m->opt.timestep;
  rl_avbd_stat *st = &am->stat;
  memset(st, 0, sizeof *st);
  rl_avbd_mocap_frames(am, d); /* static bodies that move with a mocap body: at the step-start mocap poses */
  /* contacts at the step-start poses (normal frozen within the step) */
  avbd_sync_scales(am, m);
  if (am->prm.contacts == RL_AVBD_CONTACTS_GROUND) avbd_ground_contacts(am, m, h);
  else if (am->prm.contacts == RL_AVBD_CONTACTS_NONE) am->ncon = 0;
  avbd_contact_warmstart(am, m, h);
  avbd_contact_lists(am);
  avbd_color(am);
  st->ncon = am->ncon;
  avbd_begin(am, m, d, h);
  avbd_predict(am, m, h);
  /* colored block sweeps + dual update until the residual test or the budget */
  const rl_avbd_param *pr = &am->prm;
  real tl, ta, hx[AVBD_STOP_HIST] = {0}, hth[AVBD_STOP_HIST] = {0}, hpx[AVBD_STOP_HIST] = {0}, hpth[AVBD_STOP_HIST] = {0};
  int distance = pr->stop == RL_AVBD_STOP_DISTANCE || pr->stop == RL_AVBD_STOP_CERTIFIED;
  int certify = pr->stop == RL_AVBD_STOP_CERTIFIED && pr->block == RL_AVBD_BLOCK_ARTICULATION && am->ncert > 0;
  if (distance) {
    avbd_distance_tolerance(pr, h, &tl, &ta);
    avbd_rounding_floor(am, &tl, &ta);
  } else avbd_step_tolerance(pr, h, &tl, &ta);
  st->tol_lin = tl;
  st->tol_ang = ta;
  int it, kc = 0, nper = 0;
  real omega = 1, uprev = 0, px = 0, pth = 0, ux = 0, uth = 0;
  if (pr->cheb_rho > 0) avbd_cheb_shift(am);
  for (it = 0; it < pr->iterations; it++) {
    real res[2];
    if (pr->block == RL_AVBD_BLOCK_ARTICULATION) avbd_tree_sweep(am, m, d, h, &ux, &uth);
    else avbd_sweep(am, m, d, h, &ux, &uth);
    /* the coarse rigid-motion step serves the body sweep only: an articulation block's Newton step already
       moves each articulation along its rigid modes, with every contact row on its bodies' blocks */
    int period = pr->block != RL_AVBD_BLOCK_ARTICULATION && pr->coarse > 0 ? pr->coarse : 1;
    int period_end = (it + 1) % period == 0;
    if (period > 1 && period_end) {
      real cx, cth;
      avbd_coarse(am, h, &cx, &cth);
      px += cx;
      pth += cth;
    }
    st->dry_residual = 0;
    avbd_dual_update(am, m, d, res);
    st->update = ux;
    if (distance) {
      /* with a coarse step every `period` sweeps the updates are not monotone within a period, and the
         per-sweep ratios may never show a contraction: the contraction is also measured between periods,
         each period's motion the sum of its sweeps' and its coarse step's updates (a bound on any body's
         displacement over the period), evaluated at period ends; the step stops when either estimate is
         within the tolerances */
      avbd_push_update(hx, ux);
      avbd_push_update(hth, uth);
      real dl = avbd_tail_distance(hx, it + 1), da = avbd_tail_distance(hth, it + 1);
      if (pr->block == RL_AVBD_BLOCK_ARTICULATION) avbd_tail_at_rounding(am, hx[0], hth[0], &dl, &da);
      px += ux;
      pth += uth;
      if (period > 1 && period_end) {
        avbd_push_update(hpx, px);
        avbd_push_update(hpth, pth);
        px = pth = 0;
        nper++;
        real pl = avbd_tail_distance(hpx, nper), pa = avbd_tail_distance(hpth, nper);
        if (!(dl <= tl && da <= ta) && pl <= tl && pa <= ta) {
          dl = pl;
          da = pa;
        }
      }
      st->dist_lin = dl;
      st->dist_ang = da;
      if (dl <= tl && da <= ta && res[0] <= tl && res[1] <= ta) {
        /* the certificate: the contacts' linearized problem must not move the poses farther than claimed (where
           it does, the sweeps go on, and the tail estimate starts afresh); after a refusal a block whose linear
           model gives no answer refuses too */
        real mv[2] = {0, 0};
        int undecided = certify ? avbd_tree_contact_certify(am, mv) : 0;
        st->cert_lin = rl_avbd_max(st->cert_lin, mv[0]);
        st->cert_ang = rl_avbd_max(st->cert_ang, mv[1]);
        if (mv[0] <= tl && mv[1] <= ta && !(undecided && st->refused > 0)) {
          st->converged = 1;
          it++;
          break;
        }
        st->refused++;
        for (int i = 0; i < AVBD_STOP_HIST; i++) hx[i] = hth[i] = hpx[i] = hpth[i] = 0;
      }
    } else if (ux <= tl && uth <= ta && res[0] <= tl && res[1] <= ta) {
      st->converged = 1;
      it++;
      break;
    }
    /* the extrapolated multipliers only where another sweep follows (the step ends on a dual update) */
    if (pr->cheb_rho > 0 && it + 1 < pr->iterations)
      avbd_cheb_dual(am, it, rl_avbd_max(ux / (tl > 0 ? tl : 1), uth / (ta > 0 ? ta : 1)), &kc, &omega, &uprev);
  }
  st->iterations = it;
  avbd_recover_velocity(am, h);
  if (!avbd_state_finite(am) || avbd_runaway(pr, st->converged, ux, uth)) {
    for (int s = 0; s < am->nb; s++) {
      rl_v3_copy(am->pose[s].x, am->x0 + 3 * s);
      rl_q_copy(am->pose[s].q, am->q0 + 4 * s);
      rl_avbd_pose_sync(am->pose + s);
      for (int i = 0; i < 6; i++) am->vel[6 * s + i] = 0;
    }
    for (int r = 0; r < am->nrow; r++) am->row[r].lambda = 0;
    am->ncon = 0;
    am->nprev = 0;
    am->step0 = am->steps; /* no step history: the next step takes its rates from these (zero) velocities */
    d->warning[RL_WARN_BADQACC]++;
    am->time += h; /* the step is undone, its time still passes (as a held step of the soft engines) */
    d->time = am->time;
    return RL_ERR_NUMERIC;
  }
  avbd_diagnostics(am, m, d, h);
  avbd_loads(am, m, d, h);
  avbd_act_advance(am, m, d, h); /* after the forces that used the step-start activations */
  /* contact cache for the next step */
  memcpy(am->prev, am->con, sizeof(rl_avbd_contact) * (size_t)am->ncon);
  am->nprev = am->ncon;
  am->steps++;
  am->sweeps += st->iterations;
  am->exhausted += !st->converged;
  am->time += h;
  d->time = am->time;
  return RL_OK;
}

/* The whole step: rl_collision's contacts at the step-start poses when prm.contacts says so (qpos from
   the AVBD state, kinematics, collision, load), the step of the AVBD state, qpos/qvel written back. */
rl_status rl_avbd_step(rl_avbd *am, const rl_model *m, rl_data *d) {
  /* the bad-state policy at the step's start (rl_engine.h): after a bad ctrl the servos see zero; a bad pose or velocity
     resets d to qpos0 and the AVBD state from it */
  am->ctrl_zero = !rl_check_ctrl(m, d);
  int which;
  if (!avbd_state_ok(am, &which)) {
    rl_reset_bad(m, d, which);
    rl_avbd_from_generalized(am, m, d);
  }
  /* before the coordinates are read: a joint to a mocap-driven body measures from its step-start pose, so the
     kinematics below puts every body where the AVBD poses hold it */
  rl_avbd_mocap_frames(am, d);
  int adhesion = 0; /* a body transmission's moment is a mean over rl_collision's contacts of the step start */
  for (int u = 0; u < m->nu; u++) adhesion |= m->actuator_trntype[u] == RL_TRN_BODY;
  if (am->prm.contacts == RL_AVBD_CONTACTS_DATA || adhesion) {
    rl_avbd_to_generalized(am, m, d);
    rl_kinematics(m, d);
    rl_collision(m, d);
    if (am->prm.contacts == RL_AVBD_CONTACTS_DATA) rl_avbd_load_contacts(am, m, d);
  }
  rl_status st = rl_avbd_step_maximal(am, m, d);
  rl_avbd_to_generalized(am, m, d);
  return st;
}
