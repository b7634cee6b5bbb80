/* collide_box.c — analytic narrow phase for boxes: sphere–box, capsule–box and box–box (see
 * rl_narrow.h), reproducing MuJoCo 2.2.2's engine_collision_box.c (mjc_SphereBox, mjc_CapsuleBox,
 * mjc_BoxBox) operation by operation, plus what mj_collideGeoms does to their output (box–box
 * contacts at exactly repeated positions removed; every frame completed by rl_make_frame).  In f64
 * box–box is MuJoCo's bit for bit; in f32 its separating-axis tie rules are float-sized (RL_BOXBOX_* below).
 * The normal points from g1 to g2; g1 has the lower geom type.  A non-finite pose gives no contact. */
#include "rl_narrow.h"
#include "rl_math.h"

/* MuJoCo's mjMINVAL (smallest accepted denominator; same value in both precisions, see collide_prim.c) */
/* capacity of the box–box candidate list: 4 edges × 2 axes × 2 sides + 4 + 4 corners */
#define BOX_MAXPTS 24

#if defined(RL_REAL_F64)
/* box–box tie rules, per precision.  f64: MuJoCo's own rules.  Edge pairs with |e1 × e2| < 1e-15 (mjMINVAL) are
   parallel and skipped; an edge–edge axis replaces the best axis only if its penetration is below
   best·(1 − 1e-12) − TIE_ABS·Σ half sizes (TIE_ABS = 0).  `collision=mujoco` keeps MuJoCo's edge–edge
   manifold whatever depths it reports; the default manifold mode replaces one that reports a point deeper
   than the overlap along its own axis by more than EDGE_SLACK·Σ half sizes (MuJoCo's overhang case, where
   the lateral overhang comes out as depth) with the best face axis's manifold.  The threshold is
   geometric, not a rounding size: sound edge–edge manifolds exceed the overlap by ≤ 1.5e-7 of Σ half
   sizes, the broken ones by > 1e-3 (edge_depth_exceeds_overlap below). */
#define RL_BOXBOX_PARALLEL   1e-15
#define RL_BOXBOX_TIE_REL    1e-12
#define RL_BOXBOX_TIE_ABS    0.0
#define RL_BOXBOX_EDGE_SLACK 3.4526698e-04
#else
/* box–box in float (see the f64 block).
   TIE: 1 − 1e-12 rounds to 1 in float, so MuJoCo's preference of a face axis over an edge–edge axis
   of equal penetration is lost.  Two perpendicular edges lying in two parallel faces have the face
   normal as their cross product and the same penetration, so on stacked boxes the choice fell to
   rounding (edge–edge reports the full depth, the face branch half of it: 4.8e-3 of the size in
   verify).  The preference is made absolute: ε/4 × Σ half sizes (8.9e-9 m for 0.1 m cubes, about two
   ulps of the half sizes), above the rounding of that difference in box_pyramid's verify states
   (6.6e-9).  Random near-aligned poses reach 0.6 ε·Σ half sizes, but ε·Σ already overrides choices
   MuJoCo resolves (verify box_stack: 1 pair of 5 flips), so near ties inside that band stay open.
   PARALLEL: the normalized cross product of float edge directions at angle θ carries a direction
   error ~ε/θ, i.e. a penetration error Σ size·ε/θ, while skipping the pair costs at most ~Σ size·θ
   (the face axes cover parallel edges); both are Σ size·√ε at θ = √ε.
   EDGE_SLACK (RL_COLL_MANIFOLD only): an edge–edge manifold with a point deeper than the overlap along
   its own axis plus √ε·Σ half sizes is replaced by the best face axis's manifold.  MuJoCo's edge–edge
   branch yields such points for an axis that is nearly a face normal (float tilts 4e-7–3.9e-4 rad)
   when the upper box overhangs: it reports the 0.0505 m overhang as depth (MuJoCo in double gives the
   same on those float poses; f64 poses stay aligned to rounding).  Over 4e5 random float poses
   (near-aligned stacks, general) a sound manifold exceeds the overlap by at most 1.5e-7·Σ, a faulty
   one by more than 1e-3·Σ (0.3 % of the general edge–edge manifolds).  RL_COLL_MUJOCO keeps MuJoCo's. */
#define RL_BOXBOX_PARALLEL   RL_SQRT_EPS
#define RL_BOXBOX_TIE_REL    0.0f
#define RL_BOXBOX_TIE_ABS    (0.25f * FLT_EPSILON)
#define RL_BOXBOX_EDGE_SLACK RL_SQRT_EPS
#endif

/* the frame completion mj_collideGeoms applies to each contact a pair function returns */
static int complete_frames(rl_contact *con, int n) {
  for (int i = 0; i < n; i++) rl_make_frame(con[i].frame);
  return n;
}

/* ---------------------------------------------------------------- sphere–box */

/* Sphere (c1, r) vs box (c2, R2, half sizes s), in the box frame: q = R2ᵀ(c1 − c2), q̄ = clamp(q, ±s),
 * δ = ‖q̄ − q‖, t = (q̄ − q)/δ.  No contact if δ − r > margin.
 * Outside (δ > mjMINVAL): n = R2 t, d = δ − r, pos = c2 + R2 (q̄ + q + r t)/2.
 * Center inside: the nearest face k (first of −x,+x,−y,+y,−z,+z at distance e), n = R2 (∓e_k)
 * pointing into the box, pos = c2 + R2 (q + (r − e)/2 · n_local), and d = −r (MuJoCo's value). */
static int sphere_box_contact(rl_contact *con, real margin, const real pos1[3], real r, const real pos2[3],
                              const real mat2[9], const real size2[3]) {
  real tmp[3], center[3], clamped[3], deepest[3], pos[3];
  rl_v3_sub(tmp, pos1, pos2);
  rl_m3_tmulv(center, mat2, tmp);
  rl_v3_copy(clamped, center);
  for (int i = 0; i < 3; i++)
    if (size2[i] > 0) {
      if (clamped[i] < -size2[i]) clamped[i] = -size2[i];
      else if (clamped[i] > size2[i]) clamped[i] = size2[i];
    }
  rl_v3_copy(deepest, center);
  rl_v3_sub(tmp, clamped, center);
  real dist = mj_normalize3(tmp);
  if (dist - r > margin) return 0;

  if (dist <= MJ_MINVAL) {
    real closest = (size2[0] + size2[1] + size2[2]) * 2, nearest[3] = {0, 0, 0};
    int k = 0;
    for (int i = 0; i < 6; i++) {
      real e = rl_fabs((i % 2 ? 1 : -1) * size2[i / 2] - center[i / 2]);
      if (closest > e) {
        closest = e;
        k = i;
      }
    }
    nearest[k / 2] = (k % 2) ? -1 : 1;
    rl_v3_copy(pos, center);
    rl_v3_addscl(pos, nearest, (r - closest) / 2);
    rl_m3_mulv(con->frame, mat2, nearest);
  } else {
    rl_v3_addscl(deepest, tmp, r);
    rl_v3_zero(pos);
    rl_v3_addscl(pos, clamped, (real)0.5);
    rl_v3_addscl(pos, deepest, (real)0.5);
    rl_m3_mulv(con->frame, mat2, tmp);
  }
  rl_m3_mulv(tmp, mat2, pos);
  rl_v3_add(con->pos, tmp, pos2);
  con->dist = dist - r;
  rl_v3_zero(con->frame + 3);
  return 1;
}

int rl_collide_sphere_box(RL_NARROW_ARGS) {
  (void)mode;
  (void)mpr_iterations;
  (void)mpr_tolerance;
  if (!view_finite(g1) || !view_finite(g2)) return 0;
  return complete_frames(con, sphere_box_contact(con, margin, g1->pos, g1->size[0], g2->pos, g2->mat, g2->size));
}

/* ---------------------------------------------------------------- capsule–box */

/* Closest features of the capsule segment p + x·H (H = h·a, x ∈ [−1, 1], box frame) and the box:
 * the result of mjc_CapsuleBox's search, with its classification. */
typedef struct capbox_closest {
  real bestdist; /* squared distance of the best feature found */
  real segpos;   /* x of the closest segment point */
  real boxpos;   /* position along the closest box edge, in [−1, 1] */
  int cltype;    /* −3/−1: segment end x = −1/+1 nearest a face; 0..8: 3·s_box + s_seg for an edge */
  int clface;    /* face axis for cltype < 0 (−1: the end is inside the box) */
  int clcorner;  /* edge: the corner (bits = + sides) at its lower end, or upper when s_box = 2 */
  int cledge;    /* edge axis */
} capbox_closest;

/* Segment ends against the box faces: an end with at most one coordinate outside the box is a
 * face candidate with squared distance ‖clamp(end) − end‖². */
static void capbox_faces(capbox_closest *b, const real pos[3], const real halfaxis[3], const real size2[3]) {
  real t1[3], t2[3];
  for (int i = -1; i <= 1; i += 2) {
    rl_v3_copy(t1, pos);
    rl_v3_addscl(t1, halfaxis, (real)i);
    rl_v3_copy(t2, t1);
    int c1 = 0, c2 = -1;
    for (int j = 0; j < 3; j++) {
      if (t1[j] < -size2[j]) {
        c1++;
        c2 = j;
        t1[j] = -size2[j];
      } else if (t1[j] > size2[j]) {
        c1++;
        c2 = j;
        t1[j] = size2[j];
      }
    }
    if (c1 > 1) continue;
    rl_v3_sub(t1, t1, t2);
    real dist = rl_v3_dot(t1, t1);
    if (dist < b->bestdist) {
      b->bestdist = dist;
      b->segpos = (real)i;
      b->cltype = -2 + i;
      b->clface = c2;
    }
  }
}

/* clamp x to [−1, 1], recording the side in s (0: −1, 1: inside, 2: +1) */
static real clamp_side(real x, int *s) {
  if (x > 1) {
    *s = 2;
    return 1;
  }
  if (x < -1) {
    *s = 0;
    return -1;
  }
  return x;
}

/* Segment against the 12 box edges e + y·s_j e_j: segment–segment closest points by the 2×2 normal
 * equations (a = s_j², b = −s_j H_j, c = h², u = −s_j (e − p)_j, v = H·(e − p)), clamped; an edge
 * replaces the best when its squared distance is below bestdist − mjMINVAL. */
static void capbox_edges(capbox_closest *b, const real pos[3], const real halfaxis[3], real hlen, const real size2[3]) {
  real t3[3], dif[3];
  for (int j = 0; j < 3; j++)
    for (int i = 0; i < 8; i++) {
      if (i & (1 << j)) continue;
      t3[0] = ((i & 1) ? 1 : -1) * size2[0];
      t3[1] = ((i & 2) ? 1 : -1) * size2[1];
      t3[2] = ((i & 4) ? 1 : -1) * size2[2];
      t3[j] = 0;
      rl_v3_sub(dif, t3, pos);
      real ma = size2[j] * size2[j];
      real mb = -size2[j] * halfaxis[j];
      real mc = hlen * hlen;
      real u = -size2[j] * dif[j];
      real v = rl_v3_dot(halfaxis, dif);
      real det = ma * mc - mb * mb;
      if (rl_fabs(det) < MJ_MINVAL) continue;
      real idet = 1 / det;
      real x1 = (mc * u - mb * v) * idet;
      real x2 = (ma * v - mb * u) * idet;
      int s1 = 1, s2 = 1;
      if (x1 > 1) {
        x1 = 1;
        s1 = 2;
        x2 = (v - mb) * (1 / mc);
      } else if (x1 < -1) {
        x1 = -1;
        s1 = 0;
        x2 = (v + mb) * (1 / mc);
      }
      if (x2 > 1) {
        x2 = 1;
        s2 = 2;
        x1 = clamp_side((u - mb) * (1 / ma), &s1);
      } else if (x2 < -1) {
        x2 = -1;
        s2 = 0;
        x1 = clamp_side((u + mb) * (1 / ma), &s1);
      }
      rl_v3_sub(dif, t3, pos);
      rl_v3_addscl(dif, halfaxis, -x2);
      dif[j] += size2[j] * x1;
      real d2 = rl_v3_dot(dif, dif);
      int c1 = s1 * 3 + s2;
      if (d2 < b->bestdist - MJ_MINVAL) {
        b->bestdist = d2;
        b->segpos = x2;
        b->boxpos = x1;
        b->clcorner = i + (1 << j) * (c1 / 6);
        b->cledge = j;
        b->cltype = c1;
      }
    }
}

/* Second contact along the segment when the closest box feature is a corner (mjc_CapsuleBox):
 * returns the offset from segpos (already signed), or −4 for none. */
static real capbox_second_corner(const capbox_closest *b, int axisdir, const real axis[3], const real halfaxis[3],
                                 const real size2[3]) {
  int c1 = axisdir ^ b->clcorner, ax = 0, ax1 = 1, ax2 = 2;
  real mul = 1, de = 0, dp = 0, sp;
  if (c1 == 0 || c1 == 7) return -4; /* pointing at or away from the corner */
  if (c1 == 1 || c1 == 2 || c1 == 4) {
    mul = 1;
    de = 1 - b->segpos;
    dp = 1 + b->segpos;
  } else {
    mul = -1;
    c1 = 7 - c1;
    dp = 1 - b->segpos;
    de = 1 + b->segpos;
  }
  if (c1 == 1) {
    ax = 0;
    ax1 = 1;
    ax2 = 2;
  }
  if (c1 == 2) {
    ax = 1;
    ax1 = 2;
    ax2 = 0;
  }
  if (c1 == 4) {
    ax = 2;
    ax1 = 0;
    ax2 = 1;
  }
  if (axis[ax] * axis[ax] > (real)0.5) { /* along the box edge */
    sp = de;
    real e1 = 2 * size2[ax] / rl_fabs(halfaxis[ax]);
    if (e1 < sp) sp = e1;
    return sp * mul;
  }
  sp = dp; /* along a box face */
  real e1 = 2 * size2[ax1] / rl_fabs(halfaxis[ax1]);
  if (e1 < sp) sp = e1;
  e1 = 2 * size2[ax2] / rl_fabs(halfaxis[ax2]);
  if (e1 < sp) sp = e1;
  return sp * -mul;
}

/* Second contact when the closest box feature is the middle of an edge (X configuration only). */
static real capbox_second_edge(const capbox_closest *b, int axisdir, const real axis[3], const real halfaxis[3],
                               const real size2[3]) {
  int c1 = (axisdir ^ b->clcorner) & (7 - (1 << b->cledge)), ax1 = 1, ax2 = 2, ax = b->cledge;
  real mul, sp, e1, e2;
  if (c1 != 1 && c1 != 2 && c1 != 4) return -4; /* T configuration */
  if (ax == 0) {
    ax1 = 1;
    ax2 = 2;
  }
  if (ax == 1) {
    ax1 = 2;
    ax2 = 0;
  }
  if (ax == 2) {
    ax1 = 0;
    ax2 = 1;
  }
  if (rl_fabs(axis[ax1]) > rl_fabs(axis[ax2])) ax1 = ax2;
  ax2 = 3 - ax - ax1;
  if (c1 & (1 << ax2)) {
    mul = 1;
    sp = 1 - b->segpos;
  } else {
    mul = -1;
    sp = 1 + b->segpos;
  }
  e1 = 2 * size2[ax2] / rl_fabs(halfaxis[ax2]);
  if (e1 < sp) sp = e1;
  if (((axisdir & (1 << ax)) != 0) == ((c1 & (1 << ax2)) != 0)) e2 = 1 - b->boxpos;
  else e2 = 1 + b->boxpos;
  e1 = size2[ax] * e2 / rl_fabs(halfaxis[ax]);
  if (e1 < sp) sp = e1;
  return sp * mul;
}

/* Second contact when a segment end is nearest a face: the farthest point of the segment, going
 * back from that end, that is still over the box (ratio along the segment, at most 2). */
static real capbox_second_face(const capbox_closest *b, const real pos[3], const real halfaxis[3],
                               const real size2[3]) {
  real t1[3], mul = (b->cltype == -3) ? 1 : -1, sp = 2;
  if (b->clface == -1) return -4; /* end inside the box */
  rl_v3_copy(t1, pos);
  rl_v3_addscl(t1, halfaxis, -mul);
  for (int i = 0; i < 3; i++) {
    if (i == b->clface) continue;
    real e1 = (size2[i] - t1[i]) / halfaxis[i] * mul;
    if (e1 > 0 && e1 < sp) sp = e1;
    e1 = (-size2[i] - t1[i]) / halfaxis[i] * mul;
    if (e1 > 0 && e1 < sp) sp = e1;
  }
  return sp * mul;
}

/* sphere–box test for the capsule point p + x·H (box frame) mapped back to the world */
static int capbox_sphere(rl_contact *con, real margin, const real pos[3], const real halfaxis[3], real x, real r,
                         const real pos2[3], const real mat2[9], const real size2[3]) {
  real t1[3], t2[3];
  rl_v3_copy(t1, pos);
  rl_v3_addscl(t1, halfaxis, x);
  rl_m3_mulv(t2, mat2, t1);
  rl_v3_add(t2, t2, pos2);
  return sphere_box_contact(con, margin, t2, r, pos2, mat2, size2);
}

/* Capsule vs box (mjc_CapsuleBox): find the closest box feature to the capsule segment (segment
 * ends vs faces, segment vs the 12 edges), sphere–box at the closest segment point, and a second
 * sphere–box at a point chosen from the relative orientation (corner, edge X-crossing, or face). */
int rl_collide_capsule_box(RL_NARROW_ARGS) {
  (void)mode;
  (void)mpr_iterations;
  (void)mpr_tolerance;
  if (!view_finite(g1) || !view_finite(g2)) return 0;
  const real *size1 = g1->size, *size2 = g2->size, *pos2 = g2->pos, *mat2 = g2->mat;
  real tmp[3], pos[3], axis[3], halfaxis[3];
  rl_v3_sub(tmp, g1->pos, pos2);
  rl_m3_tmulv(pos, mat2, tmp);
  tmp[0] = g1->mat[2];
  tmp[1] = g1->mat[5];
  tmp[2] = g1->mat[8];
  rl_m3_tmulv(axis, mat2, tmp);
  rl_v3_scale(halfaxis, axis, size1[1]);
  int axisdir = (halfaxis[0] > 0) + 2 * (halfaxis[1] > 0) + 4 * (halfaxis[2] > 0);

  capbox_closest b = {0, 0, 0, -4, -1, 0, 0};
  b.bestdist = margin + 2 * (size1[0] + size1[1] + size2[0] + size2[1] + size2[2]);
  capbox_faces(&b, pos, halfaxis, size2);
  capbox_edges(&b, pos, halfaxis, size1[1], size2);
  if (b.cltype == -4) return 0;

  real second = -4;
  if (b.cltype >= 0 && b.cltype / 3 != 1) second = capbox_second_corner(&b, axisdir, axis, halfaxis, size2);
  else if (b.cltype >= 0) second = capbox_second_edge(&b, axisdir, axis, halfaxis, size2);
  else second = capbox_second_face(&b, pos, halfaxis, size2);

  int n = capbox_sphere(con, margin, pos, halfaxis, b.segpos, size1[0], pos2, mat2, size2);
  if (second > -3) n += capbox_sphere(con + n, margin, pos, halfaxis, second + b.segpos, size1[0], pos2, mat2, size2);
  return complete_frames(con, n);
}

/* ---------------------------------------------------------------- box–box */

/* R = Aᵀ B (mju_mulMatTMat, 3×3) */
static void mul_mat_t_mat(real R[9], const real A[9], const real B[9]) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) R[3 * i + j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j];
}

/* R = A Bᵀ (mju_mulMatMatT, 3×3) */
static void mul_mat_mat_t(real R[9], const real A[9], const real B[9]) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      R[3 * i + j] = A[3 * i] * B[3 * j] + A[3 * i + 1] * B[3 * j + 1] + A[3 * i + 2] * B[3 * j + 2];
}

/* The face frame of mjc_BoxBox: face f (0..2: +x,+y,+z; 3..5: −x,−y,−z) becomes the +z face.
 * rotmore is the signed permutation; (i0,i1,i2) and (f0,f1,f2) apply it to a vector's coordinates. */
typedef struct face_perm {
  real rotmore[9];
  int i[3];
  real f[3];
} face_perm;

static void face_perm_make(face_perm *P, int face) {
  for (int k = 0; k < 9; k++) P->rotmore[k] = 0;
  P->i[0] = 0;
  P->i[1] = 1;
  P->i[2] = 2;
  P->f[0] = P->f[1] = P->f[2] = 1;
  real *r = P->rotmore;
  switch (face) {
  case 0:
    r[2] = -1;
    r[4] = 1;
    r[6] = 1;
    P->i[0] = 2;
    P->f[0] = -1;
    P->i[2] = 0;
    break;
  case 1:
    r[0] = 1;
    r[5] = -1;
    r[7] = 1;
    P->i[1] = 2;
    P->f[1] = -1;
    P->i[2] = 1;
    break;
  case 2:
    r[0] = 1;
    r[4] = 1;
    r[8] = 1;
    break;
  case 3:
    r[2] = 1;
    r[4] = 1;
    r[6] = -1;
    P->i[0] = 2;
    P->i[2] = 0;
    P->f[2] = -1;
    break;
  case 4:
    r[0] = 1;
    r[5] = 1;
    r[7] = -1;
    P->i[1] = 2;
    P->i[2] = 1;
    P->f[2] = -1;
    break;
  default:
    r[0] = -1;
    r[4] = 1;
    r[8] = -1;
    P->f[0] = -1;
    P->f[2] = -1;
    break;
  }
}

/* out = rotmore · v via the permutation (the rotaxis macro) */
static void face_perm_vec(const face_perm *P, real out[3], const real v[3]) {
  for (int k = 0; k < 3; k++) out[k] = v[P->i[k]] * P->f[k];
}

/* out = rotmore · M (rows permuted and signed; the rotmatx macro) */
static void face_perm_mat(const face_perm *P, real out[9], const real M[9]) {
  for (int k = 0; k < 3; k++) rl_v3_scale(out + 3 * k, M + 3 * P->i[k], P->f[k]);
}

/* Separating-axis search of mjc_BoxBox: face axes of both boxes and the 9 edge–edge cross products;
 * returns 0 if separated by more than the margin, else 1 with the axis of least penetration in *code
 * (0..5: face of box 1, 6..11: face of box 2, 12 + 3i + j: edge i of box 1 × edge j of box 2) and,
 * for edge–edge, the edge-selection bits, the axis and the side.  Per-precision rules (RL_BOXBOX_* above):
 * edge pairs closer to parallel than RL_BOXBOX_PARALLEL are skipped, an edge–edge axis must beat the
 * best by the tie margin.  Also kept: the penetration along the chosen axis and the best face axis. */
typedef struct boxbox_sat {
  real pos21[3], pos12[3], rot[9], rott[9], rotabs[9], rottabs[9];
  real clnorm[3];
  real penetration; /* overlap along the chosen axis (> 0: overlapping) */
  int code, cle1, cle2, in;
  int face_code; /* best face axis (0..11), −1 if none */
} boxbox_sat;

/* An edge–edge axis replaces the best axis so far when it is clearly shallower:
 * c3 < penetration·(1 − RL_BOXBOX_TIE_REL) − tie (tie = RL_BOXBOX_TIE_ABS·Σ half sizes).  In f64 this
 * is MuJoCo's c3 < penetration·(1 − 1e-12); see RL_BOXBOX_* above for the float rule. */
static int edge_axis_wins(real c3, real penetration, real tie) {
  return c3 < penetration * (1 - (real)RL_BOXBOX_TIE_REL) - tie;
}

static int boxbox_axes(boxbox_sat *S, const real *pos1, const real *mat1, const real *size1, const real *pos2,
                       const real *mat2, const real *size2, real margin) {
  real tmp1[3], tmp2[3], plen1[3], plen2[3], penetration = margin;
  S->code = -1;
  rl_v3_sub(tmp1, pos2, pos1);
  rl_m3_tmulv(S->pos21, mat1, tmp1);
  rl_v3_sub(tmp1, pos1, pos2);
  rl_m3_tmulv(S->pos12, mat2, tmp1);
  mul_mat_t_mat(S->rot, mat1, mat2);
  rl_m3_transpose(S->rott, S->rot);
  for (int i = 0; i < 9; i++) S->rotabs[i] = rl_fabs(S->rot[i]);
  for (int i = 0; i < 9; i++) S->rottabs[i] = rl_fabs(S->rott[i]);
  rl_m3_mulv(plen2, S->rotabs, size2);
  rl_m3_tmulv(plen1, S->rotabs, size1);
  for (int i = 0; i < 3; i++) penetration += size1[i] * 3 + size2[i] * 3;
  real tie = (real)RL_BOXBOX_TIE_ABS * (size1[0] + size1[1] + size1[2] + size2[0] + size2[1] + size2[2]);

  for (int i = 0; i < 3; i++) {
    real c1 = -rl_fabs(S->pos21[i]) + size1[i] + plen2[i];
    real c2 = -rl_fabs(S->pos12[i]) + size2[i] + plen1[i];
    if (c1 < -margin || c2 < -margin) return 0;
    if (c1 < penetration) {
      penetration = c1;
      S->code = i + 3 * (S->pos21[i] < 0);
    }
    if (c2 < penetration) {
      penetration = c2;
      S->code = i + 3 * (S->pos12[i] < 0) + 6;
    }
  }

  S->face_code = S->code;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      rl_v3_zero(tmp2);
      const real *rj = S->rott + 3 * j;
      if (i == 0) {
        tmp2[1] = -rj[2];
        tmp2[2] = rj[1];
      } else if (i == 1) {
        tmp2[0] = rj[2];
        tmp2[2] = -rj[0];
      } else {
        tmp2[0] = -rj[1];
        tmp2[1] = rj[0];
      }
      real c1 = mj_normalize3(tmp2);
      if (c1 < (real)RL_BOXBOX_PARALLEL) continue; /* parallel edges: the face axes cover them */
      real c2 = rl_v3_dot(S->pos21, tmp2);
      real c3 = 0;
      for (int k = 0; k < 3; k++)
        if (k != i) c3 += size1[k] * rl_fabs(tmp2[k]);
      for (int k = 0; k < 3; k++)
        if (k != j) c3 += size2[k] * S->rotabs[3 * i + 3 - k - j] / c1;
      c3 -= rl_fabs(c2);
      if (c3 < -margin) return 0;
      if (edge_axis_wins(c3, penetration, tie)) {
        penetration = c3;
        S->cle1 = 0;
        for (int k = 0; k < 3; k++)
          if (k != i && ((tmp2[k] > 0) ^ (c2 < 0))) S->cle1 += 1 << k;
        S->cle2 = 0;
        for (int k = 0; k < 3; k++)
          if (k != j && ((S->rot[3 * i + 3 - k - j] > 0) ^ (c2 < 0) ^ ((k - j + 3) % 3 == 1))) S->cle2 += 1 << k;
        S->code = 12 + i * 3 + j;
        rl_v3_copy(S->clnorm, tmp2);
        S->in = c2 < 0;
      }
    }
  S->penetration = penetration;
  return S->code != -1;
}

/* Face contact of mjc_BoxBox: the reference face (of box 1 if code < 6, else of box 2) is rotated
 * to +z; the incident box's nearest corner and the (up to 3) edges leaving it that are not too steep
 * (|r_z| < 1/2) span a parallelogram whose edge crossings with the face rectangle, face corners inside
 * it, and own corners inside the face are the candidates; those with height ≤ margin are contacts,
 * at half height (midway), with the face normal (pointing from box 1 to box 2). */
static int boxbox_face(const boxbox_sat *S, rl_contact *con, real margin, const real *pos1, const real *mat1,
                       const real *size1, const real *pos2, const real *mat2, const real *size2) {
  real r[9], rt[9], p[3], s[3], ss[3], lp[3], tmp1[3], tmp2[3];
  real pts[6][3] = {{0}}, lines[4][6], points[BOX_MAXPTS][3];
  int q1 = S->code % 6, q2 = S->code / 6, m = 0, k = 0, n = 0, clcorner = 0;
  face_perm P;
  face_perm_make(&P, q1);
  if (q2) {
    mul_mat_mat_t(r, P.rotmore, S->rot);
    face_perm_vec(&P, p, S->pos12);
    face_perm_vec(&P, tmp1, size2);
    rl_v3_copy(s, size1);
  } else {
    face_perm_mat(&P, r, S->rot);
    face_perm_vec(&P, p, S->pos21);
    face_perm_vec(&P, tmp1, size1);
    rl_v3_copy(s, size2);
  }
  rl_m3_transpose(rt, r);
  for (int i = 0; i < 3; i++) ss[i] = rl_fabs(tmp1[i]);
  real lx = ss[0], ly = ss[1], hz = ss[2];
  p[2] -= hz;
  rl_v3_copy(lp, p);
  for (int i = 0; i < 3; i++)
    if (r[6 + i] < 0) clcorner += 1 << i;
  rl_v3_addscl(lp, rt + 0, s[0] * ((clcorner & 1) ? 1 : -1));
  rl_v3_addscl(lp, rt + 3, s[1] * ((clcorner & 2) ? 1 : -1));
  rl_v3_addscl(lp, rt + 6, s[2] * ((clcorner & 4) ? 1 : -1));

  rl_v3_copy(pts[m++], lp);
  for (int i = 0; i < 3; i++)
    if (rl_fabs(r[6 + i]) < (real)0.5) rl_v3_scale(pts[m++], rt + 3 * i, s[i] * ((clcorner & (1 << i)) ? -2 : 2));
  rl_v3_add(pts[3], pts[0], pts[1]);
  rl_v3_add(pts[4], pts[0], pts[2]);
  rl_v3_add(pts[5], pts[3], pts[2]);
  if (m > 1) {
    rl_v3_copy(lines[k], pts[0]);
    rl_v3_copy(lines[k++] + 3, pts[1]);
  }
  if (m > 2) {
    rl_v3_copy(lines[k], pts[0]);
    rl_v3_copy(lines[k++] + 3, pts[2]);
    rl_v3_copy(lines[k], pts[3]);
    rl_v3_copy(lines[k++] + 3, pts[2]);
    rl_v3_copy(lines[k], pts[4]);
    rl_v3_copy(lines[k++] + 3, pts[1]);
  }

  /* parallelogram edges crossing the face rectangle's sides x = ±lx (q = 0) or y = ±ly (q = 1) */
  for (int i = 0; i < k; i++)
    for (int q = 0; q < 2; q++) {
      real a = lines[i][q], b = lines[i][3 + q], c = lines[i][1 - q], d = lines[i][4 - q];
      if (rl_fabs(b) <= MJ_MINVAL) continue;
      for (int j = -1; j <= 1; j += 2) {
        real l = ss[q] * j;
        real c1 = (l - a) * (1 / b);
        if (c1 < 0 || c1 > 1) continue;
        real c2 = c + d * c1;
        if (rl_fabs(c2) > ss[1 - q]) continue;
        rl_v3_copy(points[n], lines[i]);
        rl_v3_addscl(points[n++], lines[i] + 3, c1);
      }
    }

  /* face corners strictly inside the parallelogram */
  real a = pts[1][0], b = pts[2][0], c = pts[1][1], d = pts[2][1];
  real det = a * d - b * c;
  if (m > 2)
    for (int i = 0; i < 4; i++) {
      real llx = i / 2 ? lx : -lx, lly = i % 2 ? ly : -ly;
      real x = llx - pts[0][0], y = lly - pts[0][1];
      real u = (x * d - y * b) * (1 / det), v = (y * a - x * c) * (1 / det);
      if (u <= 0 || v <= 0 || u >= 1 || v >= 1) continue;
      points[n][0] = llx;
      points[n][1] = lly;
      points[n][2] = pts[0][2] + u * pts[1][2] + v * pts[2][2];
      n++;
    }

  /* parallelogram corners strictly inside the face (the first always taken) */
  for (int i = 0; i < (1 << (m - 1)); i++) {
    rl_v3_copy(tmp1, pts[i == 0 ? 0 : i + 2]);
    if (i && (tmp1[0] <= -lx || tmp1[0] >= lx)) continue;
    if (i && (tmp1[1] <= -ly || tmp1[1] >= ly)) continue;
    rl_v3_copy(points[n++], tmp1);
  }

  /* keep those within the margin, at half height (midway between the face and the corner) */
  int mm = n;
  n = 0;
  for (int i = 0; i < mm; i++) {
    if (points[i][2] > margin) continue;
    rl_v3_copy(points[n], points[i]);
    points[n][2] *= (real)0.5;
    n++;
  }

  mul_mat_mat_t(r, q2 ? mat2 : mat1, P.rotmore);
  rl_v3_copy(p, q2 ? pos2 : pos1);
  real sgn = q2 ? -1 : 1;
  tmp2[0] = sgn * r[2];
  tmp2[1] = sgn * r[5];
  tmp2[2] = sgn * r[8];
  for (int i = 0; i < n && i < BOX_MAXPTS; i++) {
    con[i].dist = points[i][2]; /* MuJoCo 2.2.2 reports the halved height as the distance */
    points[i][2] += hz;
    rl_m3_mulv(tmp1, r, points[i]);
    rl_v3_add(con[i].pos, tmp1, p);
    rl_v3_copy(con[i].frame, tmp2);
    rl_v3_zero(con[i].frame + 3);
  }
  return n;
}

/* Edge–edge contact of mjc_BoxBox: the face of box 1 adjacent to its closest edge and least tilted
 * against the separating axis is rotated to +z; box 2's closest edge and its parallel neighbour form
 * a parallelogram, projected along the axis onto the face plane; edge crossings, face corners and
 * projected corners give the points (depth measured along the axis), normal = ± the axis. */
static int boxbox_edge(const boxbox_sat *S, rl_contact *con, real margin, const real *pos1, const real *mat1,
                       const real *size1, const real *size2) {
  real p[3], rnorm[3], r[9], rt[9], s[3], tmp1[3], tmp2[3];
  real points[BOX_MAXPTS][3], pu[4][3], ppts2[4][2], axi[3][3], pts[3][3], lines[4][6], linesu[4][6];
  real depth[BOX_MAXPTS];
  real margin2 = margin * margin;
  int code = S->code - 12, q1 = code / 3, q2 = code % 3, ax1 = 1, ax2 = 2, pax1 = 1, pax2 = 2, n, k = 0;
  if (q2 == 0) {
    ax1 = 1;
    ax2 = 2;
  }
  if (q2 == 1) {
    ax1 = 0;
    ax2 = 2;
  }
  if (q2 == 2) {
    ax1 = 1;
    ax2 = 0;
  }
  if (q1 == 0) {
    pax1 = 1;
    pax2 = 2;
  }
  if (q1 == 1) {
    pax1 = 0;
    pax2 = 2;
  }
  if (q1 == 2) {
    pax1 = 1;
    pax2 = 0;
  }
  if (S->rotabs[3 * q1 + ax1] < S->rotabs[3 * q1 + ax2]) {
    ax1 = ax2;
    ax2 = 3 - q2 - ax1;
  }
  if (S->rottabs[3 * q2 + pax1] < S->rottabs[3 * q2 + pax2]) {
    pax1 = pax2;
    pax2 = 3 - q1 - pax1;
  }
  int clface = (S->cle1 & (1 << pax2)) ? pax2 : pax2 + 3;
  face_perm P;
  face_perm_make(&P, clface);
  face_perm_vec(&P, p, S->pos21);
  face_perm_vec(&P, rnorm, S->clnorm);
  face_perm_mat(&P, r, S->rot);
  rl_m3_tmulv(tmp1, P.rotmore, size1);
  for (int i = 0; i < 3; i++) s[i] = rl_fabs(tmp1[i]);
  rl_m3_transpose(rt, r);
  real lx = s[0], ly = s[1], hz = s[2];
  p[2] -= hz;

  /* box 2's closest edge (points 0, 1) and the parallel edge across the face (points 2, 3) */
  real e1 = (S->cle2 & (1 << ax1)) ? 1 : -1, e2 = (S->cle2 & (1 << ax2)) ? 1 : -1;
  for (int h = 0; h < 2; h++) {
    real *a0 = points[2 * h], *a1 = points[2 * h + 1];
    rl_v3_copy(a0, p);
    rl_v3_addscl(a0, rt + 3 * ax1, size2[ax1] * (h ? -e1 : e1));
    rl_v3_addscl(a0, rt + 3 * ax2, size2[ax2] * e2);
    rl_v3_copy(a1, a0);
    rl_v3_addscl(a0, rt + 3 * q2, size2[q2]);
    rl_v3_addscl(a1, rt + 3 * q2, -size2[q2]);
  }
  rl_v3_copy(axi[0], points[0]);
  rl_v3_sub(axi[1], points[1], points[0]);
  rl_v3_sub(axi[2], points[2], points[0]);

  if (rl_fabs(rnorm[2]) < MJ_MINVAL) return 0;
  real innorm = (1 / rnorm[2]) * (S->in ? -1 : 1);
  for (int i = 0; i < 4; i++) {
    real c1 = -points[i][2] * (1 / rnorm[2]);
    rl_v3_copy(pu[i], points[i]);
    rl_v3_addscl(points[i], rnorm, c1);
    ppts2[i][0] = points[i][0];
    ppts2[i][1] = points[i][1];
  }
  rl_v3_copy(pts[0], points[0]);
  rl_v3_sub(pts[1], points[1], points[0]);
  rl_v3_sub(pts[2], points[2], points[0]);

  rl_v3_copy(lines[k], pts[0]);
  rl_v3_copy(lines[k] + 3, pts[1]);
  rl_v3_copy(linesu[k], axi[0]);
  rl_v3_copy(linesu[k++] + 3, axi[1]);
  rl_v3_copy(lines[k], pts[0]);
  rl_v3_copy(lines[k] + 3, pts[2]);
  rl_v3_copy(linesu[k], axi[0]);
  rl_v3_copy(linesu[k++] + 3, axi[2]);
  rl_v3_add(lines[k], pts[0], pts[1]);
  rl_v3_copy(lines[k] + 3, pts[2]);
  rl_v3_add(linesu[k], axi[0], axi[1]);
  rl_v3_copy(linesu[k++] + 3, axi[2]);
  rl_v3_add(lines[k], pts[0], pts[2]);
  rl_v3_copy(lines[k] + 3, pts[1]);
  rl_v3_add(linesu[k], axi[0], axi[2]);
  rl_v3_copy(linesu[k++] + 3, axi[1]);

  /* projected parallelogram edges crossing the face rectangle's sides */
  n = 0;
  for (int i = 0; i < k; i++)
    for (int q = 0; q < 2; q++) {
      real a = lines[i][q], b = lines[i][3 + q], c = lines[i][1 - q], d = lines[i][4 - q];
      if (rl_fabs(b) <= MJ_MINVAL) continue;
      for (int j = -1; j <= 1; j += 2) {
        if (n >= BOX_MAXPTS) continue;
        real l = s[q] * j;
        real c1 = (l - a) * (1 / b);
        if (c1 < 0 || c1 > 1) continue;
        real c2 = c + d * c1;
        if (rl_fabs(c2) > s[1 - q]) continue;
        if ((linesu[i][2] + linesu[i][5] * c1) * innorm > margin) continue;
        rl_v3_scale(points[n], linesu[i], (real)0.5);
        rl_v3_addscl(points[n], linesu[i] + 3, (real)0.5 * c1);
        points[n][q] += (real)0.5 * l;
        points[n][1 - q] += (real)0.5 * c2;
        depth[n] = points[n][2] * innorm * 2;
        n++;
      }
    }
  int nl = n;

  /* face corners over the (clamped) parallelogram, u, v from the 2×2 system [pts1 pts2](u v)ᵀ = corner − pts0 */
  real a = pts[1][0], b = pts[2][0], c = pts[1][1], d = pts[2][1];
  real det = a * d - b * c;
  for (int i = 0; i < 4; i++) {
    if (n >= BOX_MAXPTS) continue;
    real llx = i / 2 ? lx : -lx, lly = i % 2 ? ly : -ly;
    real x = llx - pts[0][0], y = lly - pts[0][1];
    real u = (x * d - y * b) * (1 / det), v = (y * a - x * c) * (1 / det);
    if (nl == 0) {
      if ((u < 0 || u > 1) && (v < 0 || v > 1)) continue;
    } else if (u < 0 || u > 1 || v < 0 || v > 1) {
      continue;
    }
    if (u < 0) u = 0;
    if (u > 1) u = 1;
    if (v < 0) v = 0;
    if (v > 1) v = 1;
    rl_v3_scale(tmp1, pu[0], 1 - u - v);
    rl_v3_addscl(tmp1, pu[1], u);
    rl_v3_addscl(tmp1, pu[2], v);
    points[n][0] = llx;
    points[n][1] = lly;
    points[n][2] = 0;
    rl_v3_sub(tmp2, points[n], tmp1);
    real c1 = rl_v3_dot(tmp2, tmp2);
    /* MuJoCo keeps the determinant and this squared distance in one variable: from here on, the
       corners after this one are tested with det = c1 (reproduced, it decides which corners count) */
    det = c1;
    if (tmp1[2] > 0 && c1 > margin2) continue;
    rl_v3_add(points[n], points[n], tmp1);
    rl_v3_scale(points[n], points[n], (real)0.5);
    depth[n] = rl_sqrt(c1) * (tmp1[2] < 0 ? -1 : 1);
    n++;
  }
  int nf = n;

  /* projected corners of box 2 over the face */
  for (int i = 0; i < 4; i++) {
    if (n >= BOX_MAXPTS) continue;
    real x = ppts2[i][0], y = ppts2[i][1];
    if (nl == 0) {
      if (nf != 0 && (x < -lx || x > lx) && (y < -ly || y > ly)) continue;
    } else if (x < -lx || x > lx || y < -ly || y > ly) {
      continue;
    }
    real c1 = 0;
    for (int j = 0; j < 2; j++) {
      if (ppts2[i][j] < -s[j]) c1 += (ppts2[i][j] + s[j]) * (ppts2[i][j] + s[j]);
      else if (ppts2[i][j] > s[j]) c1 += (ppts2[i][j] - s[j]) * (ppts2[i][j] - s[j]);
    }
    c1 += pu[i][2] * innorm * pu[i][2] * innorm;
    if (pu[i][2] > 0 && c1 > margin2) continue;
    tmp1[0] = ppts2[i][0] * (real)0.5;
    tmp1[1] = ppts2[i][1] * (real)0.5;
    tmp1[2] = 0;
    for (int j = 0; j < 2; j++) {
      if (ppts2[i][j] < -s[j]) tmp1[j] = -s[j] * (real)0.5;
      else if (ppts2[i][j] > s[j]) tmp1[j] = s[j] * (real)0.5;
    }
    rl_v3_addscl(tmp1, pu[i], (real)0.5);
    rl_v3_copy(points[n], tmp1);
    depth[n] = rl_sqrt(c1) * (pu[i][2] < 0 ? -1 : 1);
    n++;
  }

  mul_mat_mat_t(r, mat1, P.rotmore);
  rl_m3_mulv(tmp1, r, rnorm);
  rl_v3_scale(tmp2, tmp1, S->in ? -1 : 1);
  for (int i = 0; i < n; i++) {
    con[i].dist = depth[i];
    points[i][2] += hz;
    rl_m3_mulv(tmp1, r, points[i]);
    rl_v3_add(con[i].pos, tmp1, pos1);
    rl_v3_copy(con[i].frame, tmp2);
    rl_v3_zero(con[i].frame + 3);
  }
  return n;
}

/* An edge–edge manifold is inconsistent when a point's depth exceeds the overlap along the axis it was
 * built for: −dist > penetration + RL_BOXBOX_EDGE_SLACK·Σ half sizes.  MuJoCo's edge–edge branch does
 * this for an axis that is nearly a face normal (two perpendicular edges in parallel faces) when the
 * other box overhangs the face: it reports the lateral overhang as depth.  Off when the slack is < 0. */
static int edge_depth_exceeds_overlap(const boxbox_sat *S, const rl_contact *c, int n, const real *size1,
                                      const real *size2) {
  if (RL_BOXBOX_EDGE_SLACK < 0 || S->face_code < 0) return 0;
  real slack = (real)RL_BOXBOX_EDGE_SLACK * (size1[0] + size1[1] + size1[2] + size2[0] + size2[1] + size2[2]);
  for (int i = 0; i < n; i++)
    if (-c[i].dist > S->penetration + slack) return 1;
  return 0;
}

/* mj_collideGeoms' box–box clean-up: a contact whose position equals (exactly) that of a later
 * contact is dropped; the order of the rest is kept. */
static int remove_repeated(rl_contact *c, int n) {
  int keep = 0;
  for (int i = 0; i < n; i++) {
    int repeated = 0;
    for (int j = i + 1; j < n && !repeated; j++)
      repeated = c[i].pos[0] == c[j].pos[0] && c[i].pos[1] == c[j].pos[1] && c[i].pos[2] == c[j].pos[2];
    if (!repeated) c[keep++] = c[i];
  }
  return keep;
}

/* Box vs box (mjc_BoxBox): separating-axis test over 15 axes, then the face or edge–edge manifold;
 * exact duplicates removed as mj_collideGeoms does.  As many contacts as the manifold has (≤ BOX_MAXPTS): two
 * boxes face on face, coincident in their plane, give 9 distinct points in MuJoCo 2.2.2 (dm_stacker, seed 2). */
int rl_collide_box_box(RL_NARROW_ARGS) {
  (void)mpr_iterations;
  (void)mpr_tolerance;
  if (!view_finite(g1) || !view_finite(g2)) return 0;
  boxbox_sat S;
  rl_contact tmp[BOX_MAXPTS];
  if (!boxbox_axes(&S, g1->pos, g1->mat, g1->size, g2->pos, g2->mat, g2->size, margin)) return 0;
  int n;
  if (S.code >= 12) n = boxbox_edge(&S, tmp, margin, g1->pos, g1->mat, g1->size, g2->size);
  if (S.code >= 12 && (mode & 0xff) != RL_COLL_MUJOCO && edge_depth_exceeds_overlap(&S, tmp, n, g1->size, g2->size))
    S.code = S.face_code; /* RL_COLL_MANIFOLD: the face manifold instead (RL_BOXBOX_EDGE_SLACK) */
  if (S.code < 12) n = boxbox_face(&S, tmp, margin, g1->pos, g1->mat, g1->size, g2->pos, g2->mat, g2->size);
  n = remove_repeated(tmp, n);
  for (int i = 0; i < n; i++) {
    con[i].dist = tmp[i].dist;
    rl_v3_copy(con[i].pos, tmp[i].pos);
    for (int j = 0; j < 9; j++) con[i].frame[j] = tmp[i].frame[j];
  }
  return complete_frames(con, n);
}
