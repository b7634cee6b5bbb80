/* verify_collision.c — verify stage 'collision': rigidlab's contact list against MuJoCo 2.2.2's
 * mj_collision on the same state.
 *
 * rigidlab runs in its MuJoCo-compatibility mode (opt.collision = mujoco: one MPR point per convex
 * pair), so the two lists describe the same contacts.  The stage is checked on identical inputs, as
 * every stage is: MuJoCo's mj_collision runs on rigidlab's own body and geom frames (the kinematics
 * stage checks those against MuJoCo's separately), so a difference here is the collision code's; in
 * f64 the 1e-16 differences between the two kinematics would otherwise send MPR on deep polytope
 * overlaps to another portal.  Contacts are grouped by unordered geom pair;
 * in a pair where both sides have the same number of contacts, MuJoCo's are matched to ours by
 * nearest position and compared.  Rows:
 *   ncon          per state: contacts in pairs whose counts differ, and contacts left without a partner
 *                 (absolute)
 *   pair_flips    per state: fraction of the colliding geom pairs whose counts differ
 *                 A pair whose counts differ is left out (and counted, left_out_pairs_sensitive) only when
 *                 MuJoCo's own result for it jumps under a rounding-sized perturbation of the state (1e-12 in
 *                 f64, 1e-5 in f32; see ill_conditioned(): near ties such as stacked boxes with coincident
 *                 edges, where any evaluation may take either branch), or when some contact of it lies at the
 *                 pair's margin to the working precision (at_margin_tie: two capsules that touch by construction
 *                 at the joint between them, a tie no perturbation of the state breaks); a near-tie pair whose counts agree is
 *                 compared, and a contact of it beyond its row's tolerance counts as on another branch.  f64: both rows
 *                 must be 0.  f32: of the rest, up to one flipped box-box pair (8 contacts) and 5 % of the pairs per state may
 *                 still flip, because MuJoCo's box-box branches on thresholds made for double.
 *   order         pairs matched with geom1/geom2 swapped (absolute; must be 0)
 *   branch        running fraction of matched contacts whose dist, pos or normal differ by more than
 *                 BRANCH of the pair's size (1e-3 in f64, 1e-2 in f32): the routine took another branch (MPR ended on another
 *                 portal, box-box clipped another feature).  f64 must be 0; f32 ≤ 15 %: float rounding
 *                 steers the decision at near ties (measured 10.9 % on humanoid100's MPR capsule pairs)
 *   dist, pos, normal, frame              analytic pairs on the same branch
 *   dist_mpr, pos_mpr, normal_mpr         MPR pairs (convex pairs and height-field prisms) on the same branch,
 *                                         judged against mpr_tolerance
 *   friction, solref, solimp, margin      mixed parameters, every pair
 *   left_out_capacity          running fraction of states left out because a contact buffer overflowed (no
 *                              reference list: ours keeps the deepest contacts, MuJoCo the first found)
 *   left_out_pairs_sensitive   running fraction of colliding pairs left out as near ties (see pair_flips)
 *   left_out_coincident        running fraction of the contacts (both lists) left out because they repeat another
 *                              contact of their pair to the working precision (see coincident()): box–box clipping
 *                              can yield one corner twice, 1e-17 apart in MuJoCo's double (kept: it removes exact
 *                              repeats only) and exactly equal in float (removed), so the pair's count would differ
 *                              by a point that is not there
 *   Any of the three above 10 % fails: the comparison would then say too little.
 * Errors are ∞-norms; dist/pos are scaled by the pair's size (rbound₁ + rbound₂, or the non-plane
 * geom's rbound) so that the figure is a relative error of the geometry. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tolerances.h"
#include "verify.h"

enum {
  C_NCON,
  C_FLIPS,
  C_ORDER,
  C_BRANCH,
  C_DIST,
  C_POS,
  C_NORMAL,
  C_FRAME,
  C_DIST_MPR,
  C_POS_MPR,
  C_NORMAL_MPR,
  C_FRICTION,
  C_SOLREF,
  C_SOLIMP,
  C_MARGIN,
  C_LEFT_CAPACITY,
  C_LEFT_PAIRS,
  C_LEFT_COINCIDENT,
  C_FLOOR_RATIO,
  NC
};
static const char *const names[NC] = {"ncon",
                                      "pair_flips",
                                      "order",
                                      "branch",
                                      "dist",
                                      "pos",
                                      "normal",
                                      "frame",
                                      "dist_mpr",
                                      "pos_mpr",
                                      "normal_mpr",
                                      "friction",
                                      "solref",
                                      "solimp",
                                      "margin",
                                      "left_out_capacity",
                                      "left_out_pairs_sensitive",
                                      "left_out_coincident",
                                      "contact_floor_ratio"};
/* MPR rows (same branch): MuJoCo stops MPR when the portal moves less than mpr_tolerance (1e-6 by default), so two
   correct implementations agree to about that, relative to the geometry */
#if !defined(RL_REAL_F32)
static const double tol_f64[NC] = {
    [C_NCON] = 0.5,     [C_FLIPS] = 1e-300,    [C_ORDER] = 0.5,         [C_BRANCH] = 1e-300, [C_DIST_MPR] = 1e-6,
    [C_POS_MPR] = 1e-6, [C_NORMAL_MPR] = 1e-6, [C_LEFT_CAPACITY] = 0.1, [C_LEFT_PAIRS] = 0.1,
    [C_LEFT_COINCIDENT] = 0.1, [C_FLOOR_RATIO] = RL_FLOOR_K};
#endif
static const int absolute[NC] = {[C_NCON] = 1, [C_ORDER] = 1};
static const int last[NC] = {[C_BRANCH] = 1, [C_LEFT_CAPACITY] = 1, [C_LEFT_PAIRS] = 1, [C_LEFT_COINCIDENT] = 1};

/* size of the state perturbation that tells ill-conditioned pairs (see ill_conditioned()): about the
   rounding each precision's kinematics accumulate */
#if defined(RL_REAL_F32)
#define PERTURB 1e-5
#define BRANCH  1e-2
#else
#define PERTURB 1e-12
#define BRANCH  1e-3
#endif

typedef struct own {
  unsigned char *used;               /* per rigidlab contact: 1 matched, 2 in a flipped or ill-conditioned pair */
  mjData *pert;                      /* MuJoCo at a rounding-sized perturbation of the state (verify's scratch) */
  mjData *ref;                       /* MuJoCo's collision on rigidlab's frames (verify's scratch) */
  mjData *flr[2];                    /* f32: the same on those frames moved by one float rounding (contact_floors;
                                        made on first use, ensure_rounded) */
  long floor_judged;                 /* contact quantities judged against their float floor, over all states */
  int flr_ready;                     /* flr holds this state's rounded collisions */
  int compared, overflow;            /* states compared / skipped because a contact buffer overflowed */
  long mpr_total, mpr_branch;        /* contacts compared / on another branch, over all states so far */
  long pairs_total, pairs_sensitive; /* colliding geom pairs seen / left out as near ties, over all states so far */
  long contacts_total, coincident;   /* contacts in both lists / left out as repeats (coincident()), so far */
  unsigned char *rep;                /* per contact: a repeat (mark_repeats), MuJoCo's list then ours */
  double *cpos, *cdist;              /* one list's positions and distances in double, for mark_repeats */
  int *cg1, *cg2, nmax;              /* its geom ids; the larger of the two contact capacities */
} own;

static int init(rl_vctx *c) {
  own *o = calloc(1, sizeof *o);
  if (!o) return -1;
  o->used = calloc(2 * (size_t)c->p->m->nconmax + 2 + (size_t)c->p->mjm->nconmax + 1024, 1);
  if (!o->used) {
    free(o);
    return -1;
  }
  o->pert = rl_vq_scratch(c->scratch, 0);
  o->ref = rl_vq_scratch(c->scratch, 1);
  c->own = o;
  o->nmax = c->p->m->nconmax > c->p->mjm->nconmax ? c->p->m->nconmax : c->p->mjm->nconmax;
  size_t n = (size_t)o->nmax + 1;
  o->rep = calloc(2 * n, 1);
  o->cpos = calloc(3 * n, sizeof(double));
  o->cdist = calloc(n, sizeof(double));
  o->cg1 = calloc(n, sizeof(int));
  o->cg2 = calloc(n, sizeof(int));
  return o->ref && o->rep && o->cpos && o->cdist && o->cg1 && o->cg2 ? 0 : -1;
}

static void fini(rl_vctx *c) {
  own *o = c->own;
  if (!o) return;
  if (o->floor_judged)
    fprintf(stderr, "verify collision: %ld contact quantities judged against their float floor (contact_floor_ratio): "
                    "MuJoCo's own value moves by more than tolerance/%d when the geom frames move by one float rounding\n",
            o->floor_judged, RL_FLOOR_K);
  if (o->overflow)
    fprintf(stderr, "verify collision: %d of %d states skipped: a contact buffer overflowed (MuJoCo nconmax %d)\n",
            o->overflow, o->overflow + o->compared, c->p->mjm->nconmax);
  free(o->used);
  free(o->rep);
  free(o->cpos);
  free(o->cdist);
  free(o->cg1);
  free(o->cg2);
  for (int k = 0; k < 2; k++)
    if (o->flr[k]) mj_deleteData(o->flr[k]);
  free(o);
  c->own = NULL;
}

/* the running fractions left out: states whose contact buffer overflowed (no reference list), and colliding
   pairs at a near tie of MuJoCo's own result (ill_conditioned()) */
static void record_left_out(const own *o, rl_vq *q) {
  long pairs = o->pairs_total + o->pairs_sensitive;
  rl_vq_record(&q[C_LEFT_CAPACITY], (double)o->overflow / (o->overflow + o->compared), 1);
  rl_vq_record(&q[C_LEFT_PAIRS], pairs ? (double)o->pairs_sensitive / (double)pairs : 0, 1);
  rl_vq_record(&q[C_LEFT_COINCIDENT], o->contacts_total ? (double)o->coincident / (double)o->contacts_total : 0, 1);
}

static int same_pair(int x, int y, int a, int b) { return (x == a && y == b) || (x == b && y == a); }
static double pair_scale(const mjModel *mjm, int g1, int g2);

/* 1 if MuJoCo's own contacts for pair (a, b) change under a rounding-sized perturbation of the state
   (qpos_i += PERTURB·max(|qpos_i|, 1), alternating signs; PERTURB 1e-5 in f32, 1e-12 in f64): a different
   count, or a point that moves by more than 1e-3 of the pair's size (a jump, not a drift).  Such a pair
   is at a near tie (coincident edges of stacked boxes, a contact at the margin boundary, a deep
   polytope overlap where MPR's portal path branches), where any evaluation may take either branch. */
static int ill_conditioned(const mjModel *mjm, const mjData *mjd, const mjData *pert, int a, int b, double scale) {
  int n1 = 0, n2 = 0;
  for (int k = 0; k < mjd->ncon; k++) n1 += same_pair(mjd->contact[k].geom1, mjd->contact[k].geom2, a, b);
  for (int k = 0; k < pert->ncon; k++) n2 += same_pair(pert->contact[k].geom1, pert->contact[k].geom2, a, b);
  if (n1 != n2) return 1;
  for (int k = 0; k < mjd->ncon; k++) {
    const mjContact *c = mjd->contact + k;
    if (!same_pair(c->geom1, c->geom2, a, b)) continue;
    double best = INFINITY;
    for (int j = 0; j < pert->ncon; j++) {
      const mjContact *e = pert->contact + j;
      if (!same_pair(e->geom1, e->geom2, a, b)) continue;
      double dd = fabs(c->dist - e->dist);
      for (int i = 0; i < 3; i++) dd = fmax(dd, fabs(c->pos[i] - e->pos[i]));
      best = fmin(best, dd);
    }
    if (!(best <= 1e-3 * scale)) return 1;
  }
  (void)mjm;
  return 0;
}

/* the narrow phase's inclusion threshold of pair (a, b): an explicit <pair>'s margin, else the larger geom margin
   (MuJoCo 2.2.2's mixing) */
static double pair_margin(const mjModel *mjm, int a, int b) {
  for (int i = 0; i < mjm->npair; i++)
    if (same_pair(mjm->pair_geom1[i], mjm->pair_geom2[i], a, b)) return mjm->pair_margin[i];
  return fmax(mjm->geom_margin[a], mjm->geom_margin[b]);
}

/* 1 if some contact of pair (a, b), MuJoCo's or ours, lies at the pair's inclusion threshold to the working
   precision: |dist − margin| ≤ 4ε·(‖pos‖∞ + size) (as coincident()).  Whether such a contact is in the list is
   decided by rounding, and no perturbation of the state need break the tie: two capsules that touch by
   construction, meeting at the joint between them, are 0 apart at every joint angle (float computes ±4e-9 m). */
static int at_margin_tie(const mjModel *mjm, const mjData *mjd, const rl_data *d, int a, int b, double scale) {
  double eps = 4 * (double)RL_EPS, margin = pair_margin(mjm, a, b);
  for (int k = 0; k < mjd->ncon; k++) {
    const mjContact *c = mjd->contact + k;
    double pm = fmax(fabs(c->pos[0]), fmax(fabs(c->pos[1]), fabs(c->pos[2])));
    if (same_pair(c->geom1, c->geom2, a, b) && fabs(c->dist - margin) <= eps * (pm + scale)) return 1;
  }
  for (int k = 0; k < d->ncon; k++) {
    const rl_contact *c = d->contact + k;
    double pm = fmax(fabs((double)c->pos[0]), fmax(fabs((double)c->pos[1]), fabs((double)c->pos[2])));
    if (same_pair(c->geom1, c->geom2, a, b) && fabs((double)c->dist - margin) <= eps * (pm + scale)) return 1;
  }
  return 0;
}

/* 1 if two contacts of one pair are the same point to the working precision: positions within 4ε·(‖pos‖∞ + size)
   and distances within 4ε·size (ε the working precision's, size the pair's scale).  The working precision cannot
   tell them apart, so a list that holds both counts the point twice where an exact-repeat removal in that
   precision would keep one. */
static int coincident(const double *p1, double d1, const double *p2, double d2, double scale) {
  double eps = 4 * (double)RL_EPS, pm = 0, dp = 0;
  for (int i = 0; i < 3; i++) {
    pm = fmax(pm, fmax(fabs(p1[i]), fabs(p2[i])));
    dp = fmax(dp, fabs(p1[i] - p2[i]));
  }
  return dp <= eps * (pm + scale) && fabs(d1 - d2) <= eps * scale;
}

/* per contact of a list: 1 where it is coincident() with an earlier contact of the same pair (pos: 3 per
   contact, dist, geom ids); returns how many */
static int mark_repeats(unsigned char *rep, int n, const double *pos, const double *dist, const int *g1, const int *g2,
                        const mjModel *mjm) {
  int count = 0;
  for (int k = 0; k < n; k++) {
    rep[k] = 0;
    for (int j = 0; j < k && !rep[k]; j++)
      rep[k] = same_pair(g1[j], g2[j], g1[k], g2[k]) &&
               coincident(pos + 3 * k, dist[k], pos + 3 * j, dist[j], pair_scale(mjm, g1[k], g2[k]));
    count += rep[k];
  }
  return count;
}

static double maxabs_diff(const real *a, const double *b, int n, double sign) {
  double e = 0;
  for (int i = 0; i < n; i++) {
    double x = fabs((double)a[i] - sign * b[i]);
    if (!(x <= e)) e = x;
  }
  return e;
}

/* a pair MuJoCo collides by MPR: mjc_Convex's, or a height field's (mjc_ConvexHField: one MPR per prism) */
static int is_mpr_pair(const mjModel *mjm, int g1, int g2) {
  int t1 = mjm->geom_type[g1], t2 = mjm->geom_type[g2];
  if (t1 > t2) {
    int t = t1;
    t1 = t2;
    t2 = t;
  }
  return t1 == mjGEOM_HFIELD || mjCOLLISIONFUNC[t1][t2] == mjCOLLISIONFUNC[mjGEOM_ELLIPSOID][mjGEOM_ELLIPSOID];
}

/* size scale of a pair: the sum of the bounding radii (planes contribute 0) */
static double pair_scale(const mjModel *mjm, int g1, int g2) {
  double s = mjm->geom_rbound[g1] + mjm->geom_rbound[g2];
  return s > 0 ? s : 1;
}

static double row_tol(int k);

/* f32: MuJoCo's collision on rigidlab's frames with every geom position and rotation entry moved by one float
   rounding, x → x·(1 + s·ε_f32), s = ±1 alternating over the entries (pattern `sign` = ±1 flips them all).  src
   holds the frames (rl_vq_mj_collision_on) */
static void mj_collision_rounded(const mjModel *mjm, mjData *dst, const mjData *src, int sign) {
  mju_copy(dst->qpos, src->qpos, mjm->nq);
  mj_kinematics(mjm, dst);
  mju_copy(dst->xpos, src->xpos, 3 * mjm->nbody);
  mju_copy(dst->xquat, src->xquat, 4 * mjm->nbody);
  mju_copy(dst->xmat, src->xmat, 9 * mjm->nbody);
  double e = (double)FLT_EPSILON * sign;
  for (int g = 0; g < mjm->ngeom; g++) {
    const double *p = src->geom_xpos + 3 * g;
    double mag = fmax(fmax(fabs(p[0]), fabs(p[1])), fmax(fabs(p[2]), mjm->geom_rbound[g]));
    for (int i = 0; i < 3; i++) dst->geom_xpos[3 * g + i] = p[i] + ((3 * g + i) % 2 ? e : -e) * mag;
    for (int i = 0; i < 9; i++) dst->geom_xmat[9 * g + i] = src->geom_xmat[9 * g + i] + ((9 * g + i) % 2 ? -e : e);
  }
  mj_collision(mjm, dst);
}

/* The float floor of one MuJoCo contact mc: how far its dist and pos (relative to the pair's size), normal and
   frame move when the frames it was computed from move by one float rounding (the two patterns of
   mj_collision_rounded, the larger), matched by nearest position within the pair.  A float engine holds those
   frames in float, so it cannot determine the contact closer than that: the direction of two capsule axes' closest
   points 4e-8 m apart at 1.2 m from the origin, say, where float resolves 7e-8 m.  F[0..3] = dist, pos, normal,
   frame; 1 (nothing determined) when a pattern has no contact for the pair. */
static void contact_floors(const own *o, const mjModel *mjm, const mjContact *mc, double *F) {
  double scale = pair_scale(mjm, mc->geom1, mc->geom2);
  F[0] = F[1] = F[2] = F[3] = 0;
  for (int k = 0; k < 2; k++) {
    const mjData *f = o->flr[k];
    int best = -1;
    double bd = INFINITY;
    for (int j = 0; j < f->ncon; j++) {
      const mjContact *e = f->contact + j;
      if (e->geom1 != mc->geom1 || e->geom2 != mc->geom2) continue;
      double dd = 0;
      for (int i = 0; i < 3; i++) dd += (e->pos[i] - mc->pos[i]) * (e->pos[i] - mc->pos[i]);
      if (dd < bd) bd = dd, best = j;
    }
    if (best < 0) {
      F[0] = F[1] = F[2] = F[3] = 1;
      return;
    }
    const mjContact *e = f->contact + best;
    double dp = 0, dn = 0, df = 0;
    for (int i = 0; i < 3; i++) dp = fmax(dp, fabs(e->pos[i] - mc->pos[i]));
    for (int i = 0; i < 3; i++) dn = fmax(dn, fabs(e->frame[i] - mc->frame[i]));
    for (int i = 0; i < 9; i++) df = fmax(df, fabs(e->frame[i] - mc->frame[i]));
    F[0] = fmax(F[0], fabs(e->dist - mc->dist) / scale);
    F[1] = fmax(F[1], dp / scale);
    F[2] = fmax(F[2], dn);
    F[3] = fmax(F[3], df);
  }
}

/* a contact quantity with error e, float floor F and row k: into its row (*row raised to e) when it is within the
   row's tolerance or the row's tolerance is above RL_FLOOR_K·F (float resolves it to that tolerance); else judged
   against the floor, e/F into the contact_floor_ratio row (*ratio), and counted */
static void judge_quantity(own *o, double e, double F, int k, double *row, double *ratio) {
  if (e <= row_tol(k) || RL_FLOOR_K * F <= row_tol(k)) {
    if (!(e <= *row)) *row = e;
    return;
  }
  o->floor_judged++;
  if (!(e / F <= *ratio)) *ratio = e / F;
}

/* f32: the two rounded collisions of this state (mj_collision_rounded), made the first time a contact of the state
   is beyond a row's tolerance (only those are judged against their floor) */
static void ensure_rounded(own *o, const mjModel *mjm, const mjData *mjd) {
  if (o->flr_ready) return;
  for (int k = 0; k < 2; k++) /* allocated on first use: an mjData of a large model is hundreds of MB */
    if (!o->flr[k]) o->flr[k] = mj_makeData(mjm);
  if (!o->flr[0] || !o->flr[1]) return;
  mj_collision_rounded(mjm, o->flr[0], mjd, 1);
  mj_collision_rounded(mjm, o->flr[1], mjd, -1);
  o->flr_ready = 1;
}

static void state(rl_vctx *c, rl_vq *q) {
  const rl_model *m = c->p->m;
  const mjModel *mjm = c->p->mjm;
  rl_data *d = c->d;
  own *o = c->own;
  /* rigidlab in MuJoCo-compatibility mode for this comparison (restored below) */
  rl_model *mw = (rl_model *)m;
  int saved = mw->opt.collision;
  mw->opt.collision = RL_COLL_MUJOCO;
  rl_kinematics(m, d);
  rl_collision(m, d);
  mw->opt.collision = saved;
  /* the reference: MuJoCo's collision on our frames */
  mjData *mjd = o->ref;
  rl_vq_mj_collision_on(mjm, mjd, c->mjd->qpos, d);

  /* a state where MuJoCo's contact buffer overflowed has no reference list: ours keeps the deepest,
     MuJoCo the first found (counted, reported by fini) */
  if (mjd->ncon >= mjm->nconmax || d->warning[RL_WARN_CONTACTFULL]) {
    d->warning[RL_WARN_CONTACTFULL] = 0;
    o->overflow++;
    record_left_out(o, q);
    return;
  }
  o->compared++;
  memset(o->used, 0, (size_t)d->ncon);
  o->flr_ready = 0;
  if (o->pert) {
    for (int i = 0; i < mjm->nq; i++)
      o->pert->qpos[i] = mjd->qpos[i] + (i % 2 ? 1.0 : -1.0) * PERTURB * fmax(fabs(mjd->qpos[i]), 1.0);
    mj_kinematics(mjm, o->pert);
    mj_collision(mjm, o->pert);
  }
  double err[NC], mag[NC];
  for (int k = 0; k < NC; k++) err[k] = mag[k] = 0;
  int unmatched = 0, swapped = 0, pairs = 0, flips = 0, flipped_contacts = 0, unstable = 0;
  /* MuJoCo contacts of near-tie pairs: 1 left out (the counts differ), 2 compared (see other_branch) */
  unsigned char *skip_mj = o->used + m->nconmax + 1;
  memset(skip_mj, 0, (size_t)mjd->ncon);
  /* contacts that repeat another of their pair to the working precision: left out of the counts and the
     matching, on both sides (counted in left_out_coincident) */
  unsigned char *rep_mj = o->rep, *rep_rl = o->rep + o->nmax + 1;
  for (int k = 0; k < mjd->ncon; k++) {
    memcpy(o->cpos + 3 * k, mjd->contact[k].pos, 3 * sizeof(double));
    o->cdist[k] = mjd->contact[k].dist;
    o->cg1[k] = mjd->contact[k].geom1;
    o->cg2[k] = mjd->contact[k].geom2;
  }
  int nrep = mark_repeats(rep_mj, mjd->ncon, o->cpos, o->cdist, o->cg1, o->cg2, mjm);
  for (int k = 0; k < d->ncon; k++) {
    for (int i = 0; i < 3; i++) o->cpos[3 * k + i] = (double)d->contact[k].pos[i];
    o->cdist[k] = (double)d->contact[k].dist;
    o->cg1[k] = d->contact[k].geom1;
    o->cg2[k] = d->contact[k].geom2;
  }
  nrep += mark_repeats(rep_rl, d->ncon, o->cpos, o->cdist, o->cg1, o->cg2, mjm);
  o->contacts_total += mjd->ncon + d->ncon;
  o->coincident += nrep;
  for (int k = 0; k < mjd->ncon; k++) skip_mj[k] = rep_mj[k];
  for (int k = 0; k < d->ncon; k++) o->used[k] = rep_rl[k] ? 2 : 0;
  /* per geom pair (first occurrence on either side): equal counts or a flip */
  for (int side = 0; side < 2; side++) {
    int n = side ? d->ncon : mjd->ncon;
    for (int i = 0; i < n; i++) {
      int a = side ? d->contact[i].geom1 : mjd->contact[i].geom1,
          b = side ? d->contact[i].geom2 : mjd->contact[i].geom2;
      int seen = 0, nmj = 0, nrl = 0;
      for (int k = 0; k < mjd->ncon; k++) {
        int x = mjd->contact[k].geom1, y = mjd->contact[k].geom2;
        if ((x == a && y == b) || (x == b && y == a)) {
          nmj += !rep_mj[k];
          if (!side && k < i) seen = 1;
        }
      }
      for (int k = 0; k < d->ncon; k++) {
        int x = d->contact[k].geom1, y = d->contact[k].geom2;
        if ((x == a && y == b) || (x == b && y == a)) {
          nrl += !rep_rl[k];
          if (side && k < i) seen = 1;
        }
      }
      if (side && nmj > 0) seen = 1; /* counted from MuJoCo's side */
      if (seen) continue;
      int tie = o->pert && ill_conditioned(mjm, mjd, o->pert, a, b, pair_scale(mjm, a, b));
      if (!tie && nmj != nrl) tie = at_margin_tie(mjm, mjd, d, a, b, pair_scale(mjm, a, b));
      if (tie && nmj == nrl) /* compared; beyond tolerance it took the other branch of the tie */
        for (int k = 0; k < mjd->ncon; k++)
          if (same_pair(mjd->contact[k].geom1, mjd->contact[k].geom2, a, b) && !skip_mj[k]) skip_mj[k] = 2;
      if (tie && nmj != nrl) {
        unstable++;
        o->pairs_sensitive++;
        for (int k = 0; k < d->ncon; k++)
          if (same_pair(d->contact[k].geom1, d->contact[k].geom2, a, b)) o->used[k] = 2;
        for (int k = 0; k < mjd->ncon; k++)
          if (same_pair(mjd->contact[k].geom1, mjd->contact[k].geom2, a, b)) skip_mj[k] = 1;
        continue;
      }
      pairs++;
      o->pairs_total++;
      if (nmj != nrl) {
        flips++;
        flipped_contacts += nmj > nrl ? nmj : nrl;
        for (int k = 0; k < d->ncon; k++) { /* keep them out of the matching */
          int x = d->contact[k].geom1, y = d->contact[k].geom2;
          if ((x == a && y == b) || (x == b && y == a)) o->used[k] = 2;
        }
      }
    }
  }
  for (int i = 0; i < mjd->ncon; i++) {
    const mjContact *mc = mjd->contact + i;
    if (skip_mj[i] == 1) continue;
    int flipped = 0;
    for (int k = 0; k < d->ncon && !flipped; k++) {
      const rl_contact *rc = d->contact + k;
      flipped = o->used[k] == 2 && ((rc->geom1 == mc->geom1 && rc->geom2 == mc->geom2) ||
                                    (rc->geom1 == mc->geom2 && rc->geom2 == mc->geom1));
    }
    int nmj = 0, nrl = 0;
    if (!flipped) { /* a pair only MuJoCo has */
      for (int k = 0; k < d->ncon; k++)
        nrl += (d->contact[k].geom1 == mc->geom1 && d->contact[k].geom2 == mc->geom2) ||
               (d->contact[k].geom1 == mc->geom2 && d->contact[k].geom2 == mc->geom1);
      nmj = 1;
    }
    if (flipped || (nmj && !nrl)) continue;
    int best = -1;
    double bestd = INFINITY;
    for (int j = 0; j < d->ncon; j++) {
      const rl_contact *rc = d->contact + j;
      if (o->used[j]) continue;
      if (!((rc->geom1 == mc->geom1 && rc->geom2 == mc->geom2) || (rc->geom1 == mc->geom2 && rc->geom2 == mc->geom1)))
        continue;
      double dd = 0;
      for (int k = 0; k < 3; k++) dd += ((double)rc->pos[k] - mc->pos[k]) * ((double)rc->pos[k] - mc->pos[k]);
      if (dd < bestd) bestd = dd, best = j;
    }
    if (best < 0) {
      unmatched++;
      continue;
    }
    o->used[best] = 1;
    const rl_contact *rc = d->contact + best;
    int swap = rc->geom1 != mc->geom1;
    swapped += swap;
    double sign = swap ? -1 : 1, scale = pair_scale(mjm, mc->geom1, mc->geom2);
    int mpr = is_mpr_pair(mjm, mc->geom1, mc->geom2);
    double e_dist = fabs((double)rc->dist - mc->dist) / scale;
    double e_pos = maxabs_diff(rc->pos, mc->pos, 3, 1) / scale;
    double e_nrm = maxabs_diff(rc->frame, mc->frame, 3, sign);
    int kd = mpr ? C_DIST_MPR : C_DIST, kp = mpr ? C_POS_MPR : C_POS, kn = mpr ? C_NORMAL_MPR : C_NORMAL;
    o->mpr_total++;
    /* f32: the float floor (contact_floors) of a contact beyond a row's tolerance; a branch is a difference beyond
       the branch threshold and beyond RL_FLOOR_K floors; f64, or within the tolerances: no floor (0) */
    double F[4] = {0, 0, 0, 0}, e_frame = !mpr && !swap ? maxabs_diff(rc->frame, mc->frame, 9, 1) : 0;
    if (RL_IS_F32 &&
        (e_dist > row_tol(kd) || e_pos > row_tol(kp) || e_nrm > row_tol(kn) || e_frame > row_tol(C_FRAME))) {
      ensure_rounded(o, mjm, mjd);
      if (o->flr_ready) contact_floors(o, mjm, mc, F);
    }
    int other_branch = !(e_dist <= fmax(BRANCH, RL_FLOOR_K * F[0]) && e_pos <= fmax(BRANCH, RL_FLOOR_K * F[1]) &&
                         e_nrm <= fmax(BRANCH, RL_FLOOR_K * F[2])) ||
                       (skip_mj[i] == 2 && !(e_dist <= fmax(row_tol(kd), RL_FLOOR_K * F[0]) &&
                                             e_pos <= fmax(row_tol(kp), RL_FLOOR_K * F[1]) &&
                                             e_nrm <= fmax(row_tol(kn), RL_FLOOR_K * F[2])));
    if (other_branch) { /* another branch: counted, not compared */
      o->mpr_branch++;
      e_dist = e_pos = e_nrm = 0;
    }
    judge_quantity(o, e_dist, F[0], kd, &err[kd], &err[C_FLOOR_RATIO]);
    judge_quantity(o, e_pos, F[1], kp, &err[kp], &err[C_FLOOR_RATIO]);
    judge_quantity(o, e_nrm, F[2], kn, &err[kn], &err[C_FLOOR_RATIO]);
    mag[kd] = mag[kp] = mag[kn] = mag[C_FLOOR_RATIO] = 1; /* already relative */
    if (!mpr && !swap && !other_branch) {
      judge_quantity(o, e_frame, F[3], C_FRAME, &err[C_FRAME], &err[C_FLOOR_RATIO]);
      mag[C_FRAME] = 1;
    }
    double e = maxabs_diff(rc->friction, mc->friction, 5, 1);
    if (!(e <= err[C_FRICTION])) err[C_FRICTION] = e;
    for (int k = 0; k < 5; k++) mag[C_FRICTION] = fmax(mag[C_FRICTION], fabs(mc->friction[k]));
    e = maxabs_diff(rc->solref, mc->solref, mjNREF, 1);
    if (!(e <= err[C_SOLREF])) err[C_SOLREF] = e;
    for (int k = 0; k < mjNREF; k++) mag[C_SOLREF] = fmax(mag[C_SOLREF], fabs(mc->solref[k]));
    e = maxabs_diff(rc->solimp, mc->solimp, mjNIMP, 1);
    if (!(e <= err[C_SOLIMP])) err[C_SOLIMP] = e;
    for (int k = 0; k < mjNIMP; k++) mag[C_SOLIMP] = fmax(mag[C_SOLIMP], fabs(mc->solimp[k]));
    e = fabs((double)rc->includemargin - mc->includemargin) + fabs((double)rc->dim - mc->dim);
    if (!(e <= err[C_MARGIN])) err[C_MARGIN] = e;
    mag[C_MARGIN] = fmax(mag[C_MARGIN], fabs(mc->includemargin));
  }
  if (flips && getenv("RL_VERIFY_DEBUG")) {
    fprintf(stderr, "collision mismatch: ncon ours %d mujoco %d\n", d->ncon, mjd->ncon);
    for (int i = 0; i < mjd->ncon; i++)
      fprintf(stderr, "  mj  g%d-g%d dist %.17g pos %.6g %.6g %.6g\n", mjd->contact[i].geom1, mjd->contact[i].geom2,
              mjd->contact[i].dist, mjd->contact[i].pos[0], mjd->contact[i].pos[1], mjd->contact[i].pos[2]);
    for (int j = 0; j < d->ncon; j++)
      fprintf(stderr, "  %s g%d-g%d dist %.17g pos %.6g %.6g %.6g\n", o->used[j] == 1 ? "ok " : "OUR",
              d->contact[j].geom1, d->contact[j].geom2, (double)d->contact[j].dist, (double)d->contact[j].pos[0],
              (double)d->contact[j].pos[1], (double)d->contact[j].pos[2]);
  }
  /* every remaining MuJoCo contact should have a partner (the pair counts agree); one that has none is counted
     with the flipped pairs' contacts rather than assumed away */
  rl_vq_record(&q[C_NCON], (double)(flipped_contacts + unmatched), 0);
  rl_vq_record(&q[C_FLIPS], pairs ? (double)flips / pairs : 0, 1);
  (void)unstable;
  record_left_out(o, q);
  rl_vq_record(&q[C_BRANCH], o->mpr_total ? (double)o->mpr_branch / (double)o->mpr_total : 0, 1);
  rl_vq_record(&q[C_ORDER], (double)swapped, 0);
  for (int k = C_DIST; k <= C_MARGIN; k++) rl_vq_record(&q[k], err[k], mag[k]);
  rl_vq_record(&q[C_FLOOR_RATIO], err[C_FLOOR_RATIO], 1);
}

#if defined(RL_REAL_F32)
/* f32: inputs rounded to float on both sides; MuJoCo computes in double, rigidlab in float.  Analytic
   rows 1e-3: box-box face clipping on stacked boxes loses up to 3.7e-4 of the size in float (box_pyramid).
   MPR rows 1e-2: float MPR stops on a portal about 1e-7·size wide, then the depth and normal come from
   that portal's plane; measured 9.8e-3 (humanoid100's capsule-ellipsoid pairs).  With the f32 branch
   threshold also 1e-2, in f32 the MPR rows are bounded by the split and the branch row (the fraction
   of MPR and analytic contacts beyond 1e-2, ≤ 15 %) carries the check. */
static const double tol_f32[NC] = {
    [C_DIST] = 1e-3,       [C_POS] = 1e-3,          [C_NORMAL] = 1e-3,   [C_FRAME] = 1e-3,    [C_NCON] = 8.5,
    [C_FLIPS] = 0.05,      [C_ORDER] = 0.5,         [C_BRANCH] = 0.15,   [C_DIST_MPR] = 1e-2, [C_POS_MPR] = 1e-2,
    [C_NORMAL_MPR] = 1e-2, [C_LEFT_CAPACITY] = 0.1, [C_LEFT_PAIRS] = 0.1, [C_LEFT_COINCIDENT] = 0.1,
    [C_FLOOR_RATIO] = RL_FLOOR_K};
#define TOL tol_f32
#else
#define TOL tol_f64
#endif

/* row K's tolerance (0 in the table: the stage's), scaled by RL_TOL_SCALE as verify.c scales it */
static double row_tol(int k) {
  return TOL[k] > 0 ? TOL[k] * rl_verify_tolerance_scale() : rl_verify_tolerance(RL_STAGE_COLLISION, RL_IS_F32);
}

const rl_vmodule rl_vmod_collision = {.stage = RL_STAGE_COLLISION,
                                      .nq = NC,
                                      .names = names,
                                      .tol = TOL,
                                      .absolute = absolute,
                                      .last = last,
                                      .init = init,
                                      .state = state,
                                      .fini = fini};
