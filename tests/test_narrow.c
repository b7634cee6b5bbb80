/* test_narrow.c — the analytic narrow phase (engine/collide_prim.c, engine/collide_box.c) against
 * MuJoCo 2.2.2's own pair functions, in the precision this file is compiled for.
 *
 * For every analytic pair, a two-geom MJCF is loaded once; per case the geom sizes, bounding radii,
 * margins and world frames are written straight into mjModel/mjData (rounded to `real` first, so
 * both sides see identical inputs), then
 *   - mjCOLLISIONFUNC[t1][t2] gives the raw contacts (count, dist, pos, normal; box–box repeated
 *     positions removed as mj_collideGeoms does),
 *   - mj_collision gives d->contact, whose frames went through mju_makeFrame (tangents),
 *   - our pair function gives its contacts.
 * Counts must agree; contacts are matched by nearest position; dist and pos errors are relative to the
 * geom size scale L = max bounding radius; frame errors are absolute (unit vectors).
 * Poses: general, axis-aligned, near-aligned (1e-12..1e-3 rad), deep, touching (shifted by MuJoCo's
 * own distance), concentric/on-axis, parallel; margins 0 or up to L/2.
 *
 * f32: inputs are floats for both sides but MuJoCo computes in double, so errors are rounding of a
 * float pipeline, and a branch taken at a threshold (a count at dist ≈ margin, a box–box axis tie,
 * the rim point of a nearly parallel disk) can differ: the tolerances apply to the well-conditioned
 * modes; all modes are reported.  f64: every mode, identical counts, 1e-10. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <mujoco/mujoco.h>
#include "rl_import.h"
#include "rl_narrow.h"
#include "rl_math.h"

#if defined(RL_REAL_F64)
#define TOL_DIST        1e-10 /* relative to L */
#define TOL_POS         1e-10 /* relative to L */
#define TOL_FRAME       1e-10 /* absolute */
#define MAX_BRANCH_FRAC 0.0
#else
/* Float inputs, float pipeline (~50 operations) against MuJoCo's double pipeline on the same inputs:
   coordinates up to ~3 with L down to 0.1 amplify FLT_EPSILON (1.2e-7) by ~30 before the operation
   count; measured worst 8e-6 (general modes).  Normals of nearly coincident centers are divided by
   a short difference vector, measured worst 3.4e-5. */
#define TOL_DIST        1e-4
#define TOL_POS         1e-4
#define TOL_FRAME       1e-3
/* general modes: a flip needs |dist − margin| within float rounding, measured 0 of 225 per pair */
#define MAX_BRANCH_FRAC 0.01
#endif

#define NCASE 600

/* ---------------------------------------------------------------- random numbers */
static uint64_t rng_state;
static double urand(void) {
  rng_state += 0x9E3779B97F4A7C15ULL;
  uint64_t z = rng_state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return (double)(z >> 11) / 9007199254740992.0;
}
static double uni(double a, double b) { return a + (b - a) * urand(); }
/* x rounded to the working precision */
static double rnd(double x) { return (double)(real)x; }

static void rand_unit(double v[3]) {
  double n;
  do {
    for (int i = 0; i < 3; i++) v[i] = uni(-1, 1);
    n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  } while (n < 0.1 || n > 1);
  for (int i = 0; i < 3; i++) v[i] /= n;
}

/* row-major rotation matrix of unit quaternion (w,x,y,z) */
static void quat2mat(double R[9], const double q[4]) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  R[0] = w * w + x * x - y * y - z * z;
  R[1] = 2 * (x * y - w * z);
  R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z);
  R[4] = w * w - x * x + y * y - z * z;
  R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y);
  R[7] = 2 * (y * z + w * x);
  R[8] = w * w - x * x - y * y + z * z;
}
static void rand_rot(double R[9]) {
  double q[4], n = 0;
  for (int i = 0; i < 4; i++) {
    q[i] = uni(-1, 1);
    n += q[i] * q[i];
  }
  n = sqrt(n);
  for (int i = 0; i < 4; i++) q[i] /= n;
  quat2mat(R, q);
}
static void matmul(double C[9], const double A[9], const double B[9]) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) C[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}
/* one of the 24 axis-aligned rotations (exact 0/±1 entries) */
static void aligned_rot(double R[9]) {
  static const int perm[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
  int p = (int)(urand() * 6), s = (int)(urand() * 8);
  double sg[3] = {(s & 1) ? -1 : 1, (s & 2) ? -1 : 1, 1};
  double odd = (p >= 3) ? -1 : 1;
  sg[2] = odd * sg[0] * sg[1]; /* det = +1 */
  memset(R, 0, 9 * sizeof(double));
  for (int i = 0; i < 3; i++) R[3 * i + perm[p][i]] = sg[i];
}
/* small rotation by angle a about a random axis */
static void small_rot(double R[9], double a) {
  double u[3], q[4];
  rand_unit(u);
  q[0] = cos(a / 2);
  for (int i = 0; i < 3; i++) q[i + 1] = sin(a / 2) * u[i];
  quat2mat(R, q);
}

/* ---------------------------------------------------------------- the pairs */
typedef struct pair_case {
  const char *name;
  int t1, t2;
  rl_collide_fn fn;
  int nograph; /* mesh: drop MuJoCo's hull graph (both sides search all vertices) */
  int first_only;
} pair_case;

static const pair_case PAIRS[] = {
    {"plane_sphere", mjGEOM_PLANE, mjGEOM_SPHERE, rl_collide_plane_sphere, 0, 0},
    {"plane_capsule", mjGEOM_PLANE, mjGEOM_CAPSULE, rl_collide_plane_capsule, 0, 0},
    {"plane_cylinder", mjGEOM_PLANE, mjGEOM_CYLINDER, rl_collide_plane_cylinder, 0, 0},
    {"plane_box", mjGEOM_PLANE, mjGEOM_BOX, rl_collide_plane_box, 0, 0},
    {"plane_ellipsoid", mjGEOM_PLANE, mjGEOM_ELLIPSOID, rl_collide_plane_convex, 0, 0},
    {"plane_mesh", mjGEOM_PLANE, mjGEOM_MESH, rl_collide_plane_convex, 0, 0},
    {"plane_mesh_nograph", mjGEOM_PLANE, mjGEOM_MESH, rl_collide_plane_convex, 1, 0},
    {"sphere_sphere", mjGEOM_SPHERE, mjGEOM_SPHERE, rl_collide_sphere_sphere, 0, 0},
    {"sphere_capsule", mjGEOM_SPHERE, mjGEOM_CAPSULE, rl_collide_sphere_capsule, 0, 0},
    {"sphere_box", mjGEOM_SPHERE, mjGEOM_BOX, rl_collide_sphere_box, 0, 0},
    {"capsule_capsule", mjGEOM_CAPSULE, mjGEOM_CAPSULE, rl_collide_capsule_capsule, 0, 0},
    {"capsule_box", mjGEOM_CAPSULE, mjGEOM_BOX, rl_collide_capsule_box, 0, 0},
    {"box_box", mjGEOM_BOX, mjGEOM_BOX, rl_collide_box_box, 0, 0},
};
#define NPAIRS ((int)(sizeof PAIRS / sizeof PAIRS[0]))

static const char *type_name(int t) {
  static const char *n[] = {"plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh"};
  return n[t];
}

/* points on an ellipsoid: every one is a hull vertex */
static const char MESH_VERTS[] =
    "0.6 0 0  -0.6 0 0  0 0.4 0  0 -0.4 0  0 0 0.3  0 0 -0.3  "
    "0.35 0.2 0.15  -0.3 0.25 -0.12  0.25 -0.3 0.1  -0.4 -0.15 0.15  0.2 0.15 -0.22  -0.2 -0.2 -0.2";

/* MuJoCo side of one pair: model and data with geoms g1 (type t1) and g2 (type t2) */
typedef struct mj_scene {
  mjModel *m;
  mjData *d;
  int g1, g2;
} mj_scene;

static void geom_xml(char *buf, size_t len, const char *name, int t) {
  const char *size = "0.3 0.4 0.5";
  if (t == mjGEOM_PLANE) size = "5 5 0.1";
  if (t == mjGEOM_SPHERE) size = "0.3";
  if (t == mjGEOM_CAPSULE || t == mjGEOM_CYLINDER) size = "0.3 0.4";
  if (t == mjGEOM_MESH) snprintf(buf, len, "<geom name=\"%s\" type=\"mesh\" mesh=\"hull\"/>", name);
  else snprintf(buf, len, "<geom name=\"%s\" type=\"%s\" size=\"%s\"/>", name, type_name(t), size);
}

static mj_scene scene_load(int t1, int t2) {
  char xml[4096], ga[256], gb[256], path[] = "/tmp/rl_narrow_XXXXXX", err[512];
  geom_xml(ga, sizeof ga, "a", t1);
  geom_xml(gb, sizeof gb, "b", t2);
  char body_a[512];
  if (t1 == mjGEOM_PLANE) snprintf(body_a, sizeof body_a, "%s", ga);
  else snprintf(body_a, sizeof body_a, "<body pos=\"-2 0 0\"><freejoint/>%s</body>", ga);
  snprintf(xml, sizeof xml,
           "<mujoco><size nconmax=\"200\" njmax=\"2000\"/>%s%s%s<worldbody>%s"
           "<body pos=\"2 0 0\"><freejoint/>%s</body></worldbody></mujoco>",
           t2 == mjGEOM_MESH ? "<asset><mesh name=\"hull\" vertex=\"" : "", t2 == mjGEOM_MESH ? MESH_VERTS : "",
           t2 == mjGEOM_MESH ? "\"/></asset>" : "", body_a, gb);
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs(xml, f);
  fclose(f);
  mj_scene s;
  s.m = mj_loadXML(path, NULL, err, sizeof err);
  unlink(path);
  cr_assert(s.m != NULL, "mj_loadXML: %s", err);
  s.d = mj_makeData(s.m);
  s.g1 = mj_name2id(s.m, mjOBJ_GEOM, "a");
  s.g2 = mj_name2id(s.m, mjOBJ_GEOM, "b");
  return s;
}

static void scene_free(mj_scene *s) {
  mj_deleteData(s->d);
  mj_deleteModel(s->m);
}

/* geom_rbound as MuJoCo's compiler sets it */
static double rbound_of(int t, const double s[3]) {
  switch (t) {
  case mjGEOM_SPHERE: return s[0];
  case mjGEOM_CAPSULE: return s[0] + s[1];
  case mjGEOM_CYLINDER: return sqrt(s[0] * s[0] + s[1] * s[1]);
  case mjGEOM_ELLIPSOID: return fmax(fmax(s[0], s[1]), s[2]);
  case mjGEOM_BOX: return sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
  default: return 0;
  }
}

/* one geom's inputs, already rounded to the working precision */
typedef struct geom_in {
  int type;
  double size[3], pos[3], mat[9], rbound;
} geom_in;

static void random_size(geom_in *g, double scale, int thin) {
  for (int i = 0; i < 3; i++) g->size[i] = scale * uni(0.1, 1);
  if (thin) g->size[(int)(urand() * 3)] *= 0.02;
  if (g->type == mjGEOM_SPHERE) g->size[1] = g->size[2] = 0;
  if (g->type == mjGEOM_CAPSULE || g->type == mjGEOM_CYLINDER) g->size[2] = 0;
}

static void round_geom(geom_in *g) {
  for (int i = 0; i < 3; i++) g->size[i] = rnd(g->size[i]);
  for (int i = 0; i < 3; i++) g->pos[i] = rnd(g->pos[i]);
  for (int i = 0; i < 9; i++) g->mat[i] = rnd(g->mat[i]);
}

/* write the inputs into MuJoCo's model and data */
static void scene_set(mj_scene *s, const geom_in *a, const geom_in *b, double margin) {
  const geom_in *in[2] = {a, b};
  int g[2] = {s->g1, s->g2};
  for (int k = 0; k < 2; k++) {
    if (in[k]->type != mjGEOM_MESH) {
      memcpy(s->m->geom_size + 3 * g[k], in[k]->size, 3 * sizeof(double));
      s->m->geom_rbound[g[k]] = in[k]->rbound;
    }
    s->m->geom_margin[g[k]] = margin;
    s->m->geom_gap[g[k]] = 0;
    memcpy(s->d->geom_xpos + 3 * g[k], in[k]->pos, 3 * sizeof(double));
    memcpy(s->d->geom_xmat + 9 * g[k], in[k]->mat, 9 * sizeof(double));
  }
}

/* our view of a geom (arrays live in the caller) */
static void make_view(rl_geomview *v, const geom_in *g, real pos[3], real mat[9], const real *vert, int nvert,
                      const int *graph) {
  v->type = g->type;
  for (int i = 0; i < 3; i++) {
    v->size[i] = (real)g->size[i];
    pos[i] = (real)g->pos[i];
  }
  for (int i = 0; i < 9; i++) mat[i] = (real)g->mat[i];
  v->pos = pos;
  v->mat = mat;
  v->vert = vert;
  v->nvert = nvert;
  v->rbound = (real)g->rbound;
  v->graph = graph;
}

/* raw MuJoCo pair function, box–box repeated positions removed as in mj_collideGeoms */
static int mj_raw(mj_scene *s, int t1, int t2, double margin, mjContact *con) {
  int n = mjCOLLISIONFUNC[t1][t2](s->m, s->d, con, s->g1, s->g2, margin);
  if (t1 == mjGEOM_BOX && t2 == mjGEOM_BOX) {
    int keep = 0;
    for (int i = 0; i < n; i++) {
      int rep = 0;
      for (int j = i + 1; j < n && !rep; j++) rep = !memcmp(con[i].pos, con[j].pos, 3 * sizeof(double));
      if (!rep) con[keep++] = con[i];
    }
    n = keep;
  }
  return n;
}

/* ---------------------------------------------------------------- statistics */
typedef struct pair_stat {
  double dist, pos, frame; /* worst errors; frame: normal vs the raw normal and all 9 vs d->contact */
  int ncase, ncontact, nbranch, nframe_checked, maxcount;
} pair_stat;

/* modes whose geometry is well conditioned (general pose, random orientation, deep): in f32 the
   tolerance applies to these; the others (exact ties, near-parallel, touching at the margin) are
   reported but may flip a discrete choice under float rounding */
static int well_conditioned(int icase) {
  int m = icase % 8;
  return m == 0 || m == 1 || m == 4;
}

static void vec_err(double *worst, const double *a, const real *b, int n, double scale) {
  for (int i = 0; i < n; i++) {
    double e = fabs(a[i] - (double)b[i]) / scale;
    if (!(e <= *worst)) *worst = e; /* NaN propagates as the worst */
  }
}

/* Pose generator, mode by case index. */
static void random_case(int icase, geom_in *a, geom_in *b, double *margin, mj_scene *s, const pair_case *pc) {
  int mode = icase % 8;
  double scale = exp(uni(log(0.1), log(3.0)));
  a->type = pc->t1;
  b->type = pc->t2;
  random_size(a, scale, mode == 6 && urand() < 0.5);
  random_size(b, scale * exp(uni(-1, 1)), mode == 6 && urand() < 0.5);
  if (b->type == mjGEOM_MESH) {
    b->rbound = s->m->geom_rbound[s->g2];
    memset(b->size, 0, sizeof b->size);
  } else {
    b->rbound = rbound_of(b->type, b->size);
  }
  a->rbound = rbound_of(a->type, a->size);
  *margin = (urand() < 0.5) ? 0 : uni(0, 0.5) * fmax(a->rbound, b->rbound);

  /* orientations */
  double Ra[9], Rb[9], Rs[9];
  if (mode == 2 || mode == 3 || mode == 7) {
    aligned_rot(Ra);
    aligned_rot(Rb);
    if (mode == 7) memcpy(Rb, Ra, sizeof Ra);
    if (mode == 3) {
      double T[9];
      small_rot(Rs, pow(10, uni(-12, -3)));
      matmul(T, Rb, Rs);
      memcpy(Rb, T, sizeof T);
    }
  } else {
    rand_rot(Ra);
    rand_rot(Rb);
    if (mode == 6 && urand() < 0.5) memcpy(Rb, Ra, sizeof Ra);
  }
  memcpy(a->mat, Ra, sizeof Ra);
  memcpy(b->mat, Rb, sizeof Rb);

  /* positions */
  double u[3];
  for (int i = 0; i < 3; i++) a->pos[i] = uni(-1, 1);
  if (a->type == mjGEOM_PLANE) {
    double nrm[3] = {Ra[2], Ra[5], Ra[8]}, h;
    if (mode == 4) h = uni(-1, 0) * b->rbound;
    else if (mode == 6) h = 0;
    else h = uni(-1, 1.2) * b->rbound + *margin * urand();
    double t1[3] = {Ra[0], Ra[3], Ra[6]}, t2[3] = {Ra[1], Ra[4], Ra[7]};
    double o1 = uni(-2, 2), o2 = uni(-2, 2);
    for (int i = 0; i < 3; i++) b->pos[i] = a->pos[i] + h * nrm[i] + o1 * t1[i] + o2 * t2[i];
  } else {
    double f;
    if (mode == 4) f = uni(0, 0.3);
    else if (mode == 6) f = 0;
    else f = uni(0, 1.1);
    rand_unit(u);
    if (mode == 2 || mode == 7) { /* offsets along exact axes sometimes */
      if (urand() < 0.5) {
        int k = (int)(urand() * 3);
        u[0] = u[1] = u[2] = 0;
        u[k] = urand() < 0.5 ? -1 : 1;
      }
    }
    double dd = f * (a->rbound + b->rbound);
    for (int i = 0; i < 3; i++) b->pos[i] = a->pos[i] + dd * u[i];
    if (mode == 6 && urand() < 0.5) /* on the axis of geom a */
      for (int i = 0; i < 3; i++) b->pos[i] = a->pos[i] + uni(-1, 1) * a->size[1] * Ra[3 * i + 2];
  }
  round_geom(a);
  round_geom(b);
  *margin = rnd(*margin);

  /* touching: shift b along MuJoCo's own normal by its distance */
  if (mode == 5) {
    mjContact con[mjMAXCONPAIR];
    scene_set(s, a, b, 10 * (a->rbound + b->rbound));
    int n = mj_raw(s, pc->t1, pc->t2, 10 * (a->rbound + b->rbound), con);
    if (n > 0 && isfinite(con[0].dist)) {
      for (int i = 0; i < 3; i++) b->pos[i] = rnd(b->pos[i] - con[0].dist * con[0].frame[i]);
      *margin = 0;
    }
  }
}

static void describe(const pair_case *pc, int icase, const geom_in *a, const geom_in *b, double margin) {
  fprintf(stderr, "  %s case %d (mode %d) margin %.17g\n", pc->name, icase, icase % 8, margin);
  const geom_in *g[2] = {a, b};
  for (int k = 0; k < 2; k++)
    fprintf(stderr,
            "    g%d size %.17g %.17g %.17g pos %.17g %.17g %.17g mat %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g "
            "%.17g\n",
            k + 1, g[k]->size[0], g[k]->size[1], g[k]->size[2], g[k]->pos[0], g[k]->pos[1], g[k]->pos[2], g[k]->mat[0],
            g[k]->mat[1], g[k]->mat[2], g[k]->mat[3], g[k]->mat[4], g[k]->mat[5], g[k]->mat[6], g[k]->mat[7],
            g[k]->mat[8]);
}

/* run NCASE cases of one pair; returns the statistics */
static pair_stat run_pair(const pair_case *pc, int *printed, pair_stat *gen) {
  pair_stat all = {0, 0, 0, 0, 0, 0, 0, 0};
  *gen = all;
  mj_scene s = scene_load(pc->t1, pc->t2);
  /* the mesh as rigidlab's model holds it (rl_import_mjmodel): hull vertices in MuJoCo's hull order
     and the hull graph (none when MuJoCo's is dropped: then all vertices, in MuJoCo's order) */
  const real *vert = NULL;
  const int *graph = NULL;
  rl_model *rm = NULL;
  int nvert = 0, mesh = -1;
  if (pc->t2 == mjGEOM_MESH) {
    mesh = s.m->geom_dataid[s.g2];
    if (pc->nograph) s.m->mesh_graphadr[mesh] = -1;
    char err[500] = "";
    rm = rl_import_mjmodel(s.m, NULL, pc->name, err, sizeof err);
    cr_assert(rm != NULL, "import: %s", err);
    vert = rm->mesh_vert + 3 * rm->mesh_vertadr[mesh];
    nvert = rm->mesh_vertnum[mesh];
    if (rm->mesh_graphadr[mesh] >= 0) graph = rm->mesh_graph + rm->mesh_graphadr[mesh];
    cr_assert((graph != NULL) == !pc->nograph, "%s: hull graph %s", pc->name, graph ? "present" : "missing");
  }
  rng_state = 12345u + 977u * (uint64_t)(pc->t1 * 8 + pc->t2) + (uint64_t)pc->nograph;
  for (int icase = 0; icase < NCASE; icase++) {
    geom_in a, b;
    double margin;
    random_case(icase, &a, &b, &margin, &s, pc);
    pair_stat *stp = well_conditioned(icase) ? gen : &all;
#define st (*stp)
    scene_set(&s, &a, &b, margin);
    mjContact raw[mjMAXCONPAIR];
    int nraw = mj_raw(&s, pc->t1, pc->t2, margin, raw);
    mj_collision(s.m, s.d);
    int nfin = s.d->ncon;

    rl_geomview v1, v2;
    real p1[3], m1[9], p2[3], m2[9];
    make_view(&v1, &a, p1, m1, NULL, 0, NULL);
    make_view(&v2, &b, p2, m2, vert, nvert, graph);
    rl_contact con[RL_MAXCONPAIR];
    int n = pc->fn(&v1, &v2, (real)margin, RL_COLL_MUJOCO, 50, (real)1e-6, con);
    st.ncase++;
    if (n > st.maxcount) st.maxcount = n;
    if (pc->first_only) {
      if ((nraw > 0) != (n > 0)) {
        st.nbranch++;
        continue;
      }
      if (nraw > 1) nraw = 1;
      if (n > 1) n = 1;
      nfin = -1;
    }
    if (n != nraw) {
      st.nbranch++;
      if (*printed < 6 && (RL_EPS < 1e-10 || well_conditioned(icase))) {
        fprintf(stderr, "count mismatch: ours %d, MuJoCo %d\n", n, nraw);
        describe(pc, icase, &a, &b, margin);
        for (int i = 0; i < nraw; i++)
          fprintf(stderr, "    mj dist %.17g pos %.17g %.17g %.17g\n", raw[i].dist, raw[i].pos[0], raw[i].pos[1],
                  raw[i].pos[2]);
        for (int i = 0; i < n; i++)
          fprintf(stderr, "    rl dist %.17g pos %.17g %.17g %.17g\n", (double)con[i].dist, (double)con[i].pos[0],
                  (double)con[i].pos[1], (double)con[i].pos[2]);
        (*printed)++;
      }
      continue;
    }
    double L = fmax(fmax(a.rbound, b.rbound), 1e-3);
    int used[RL_MAXCONPAIR] = {0};
    int frames = (nfin == nraw);
    for (int i = 0; i < nraw; i++) {
      int best = -1;
      double bd = INFINITY;
      for (int j = 0; j < n; j++) {
        if (used[j]) continue;
        double e = 0;
        for (int k = 0; k < 3; k++) e += (raw[i].pos[k] - con[j].pos[k]) * (raw[i].pos[k] - con[j].pos[k]);
        if (e < bd || best < 0) {
          bd = e;
          best = j;
        }
      }
      used[best] = 1;
      const rl_contact *c = &con[best];
      double before[3] = {st.dist, st.pos, st.frame};
      vec_err(&st.dist, &raw[i].dist, &c->dist, 1, L);
      vec_err(&st.pos, raw[i].pos, c->pos, 3, L);
      double nr[3] = {raw[i].frame[0], raw[i].frame[1], raw[i].frame[2]};
      double nn = sqrt(nr[0] * nr[0] + nr[1] * nr[1] + nr[2] * nr[2]);
      for (int k = 0; k < 3; k++) nr[k] /= nn;
      vec_err(&st.frame, nr, c->frame, 3, 1);
      if (frames) {
        vec_err(&st.frame, s.d->contact[i].frame, c->frame, 9, 1);
        st.nframe_checked++;
      }
      st.ncontact++;
      if (*printed < 6 && (RL_EPS < 1e-10 || well_conditioned(icase)) &&
          (st.dist > TOL_DIST || st.pos > TOL_POS || st.frame > TOL_FRAME) &&
          (before[0] <= TOL_DIST && before[1] <= TOL_POS && before[2] <= TOL_FRAME)) {
        fprintf(stderr, "error above tolerance: dist %.3g pos %.3g frame %.3g\n", st.dist, st.pos, st.frame);
        describe(pc, icase, &a, &b, margin);
        fprintf(stderr, "    mj dist %.17g pos %.17g %.17g %.17g n %.17g %.17g %.17g\n", raw[i].dist, raw[i].pos[0],
                raw[i].pos[1], raw[i].pos[2], nr[0], nr[1], nr[2]);
        fprintf(stderr, "    rl dist %.17g pos %.17g %.17g %.17g n %.17g %.17g %.17g\n", (double)c->dist,
                (double)c->pos[0], (double)c->pos[1], (double)c->pos[2], (double)c->frame[0], (double)c->frame[1],
                (double)c->frame[2]);
        (*printed)++;
      }
    }
  }
#undef st
  if (rm) rl_model_free(rm);
  scene_free(&s);
  /* all = every mode: merge the well-conditioned ones in */
  all.dist = fmax(all.dist, gen->dist);
  all.pos = fmax(all.pos, gen->pos);
  all.frame = fmax(all.frame, gen->frame);
  all.ncase += gen->ncase;
  all.ncontact += gen->ncontact;
  all.nbranch += gen->nbranch;
  all.nframe_checked += gen->nframe_checked;
  all.maxcount = all.maxcount > gen->maxcount ? all.maxcount : gen->maxcount;
  return all;
}

Test(narrow, analytic_pairs_match_mujoco, .timeout = 300) {
  int printed = 0, bad = 0;
  printf("narrow phase vs MuJoCo %s, precision %s, %d cases per pair (general = modes 0,1,4)\n", mj_versionString(),
         RL_PREC_NAME, NCASE);
  printf("%-24s %6s %6s %6s %6s %4s | %9s %9s %9s | %6s %9s %9s %9s\n", "pair", "cases", "cons", "frames", "branch",
         "max", "dist/L", "pos/L", "frame", "g.brch", "g.dist/L", "g.pos/L", "g.frame");
  for (int p = 0; p < NPAIRS; p++) {
    pair_stat gen, all = run_pair(&PAIRS[p], &printed, &gen);
    printf("%-24s %6d %6d %6d %6d %4d | %9.3g %9.3g %9.3g | %6d %9.3g %9.3g %9.3g\n", PAIRS[p].name, all.ncase,
           all.ncontact, all.nframe_checked, all.nbranch, all.maxcount, all.dist, all.pos, all.frame, gen.nbranch,
           gen.dist, gen.pos, gen.frame);
    fflush(stdout);
#if defined(RL_REAL_F64)
    const pair_stat *chk = &all; /* f64: every mode, no branch may differ */
#else
    const pair_stat *chk = &gen;
#endif
    int ok = chk->dist <= TOL_DIST && chk->pos <= TOL_POS && chk->frame <= TOL_FRAME &&
             chk->nbranch <= MAX_BRANCH_FRAC * chk->ncase && all.ncontact > all.ncase / 4 &&
             all.maxcount <= RL_MAXCONPAIR;
    if (!ok) {
      bad++;
      cr_log_error("%s: dist %.3g pos %.3g frame %.3g (tol %.1g %.1g %.1g), branch %d of %d, contacts %d",
                   PAIRS[p].name, chk->dist, chk->pos, chk->frame, TOL_DIST, TOL_POS, TOL_FRAME, chk->nbranch,
                   chk->ncase, all.ncontact);
    }
  }
  cr_expect_eq(bad, 0, "%d pair types out of tolerance", bad);
}

/* the frame completion against mju_makeFrame's effect in d->contact, including the y-axis switch at
   |n_y| = 1/2 and an exactly vertical normal */
Test(narrow, make_frame_conventions) {
  real f[9] = {0, 1, 0, 0, 0, 0, 0, 0, 0};
  rl_make_frame(f);
  cr_expect(f[3] == 0 && f[4] == 0 && f[5] == 1, "n = e_y: tangent 1 must be e_z");
  cr_expect(f[6] == 1 && f[7] == 0 && f[8] == 0, "n = e_y: tangent 2 = e_y × e_z = e_x");
  real g[9] = {0, 0, 2, 0, 0, 0, 0, 0, 0};
  rl_make_frame(g);
  cr_expect(g[2] == 1 && g[4] == 1 && g[6] == -1, "n = 2e_z: normalized, tangent e_y, e_y×… = −e_x");
  real h[9] = {1, 0, 0, 0, 0, 3, 0, 0, 0}; /* a given first tangent is kept (normalized) */
  rl_make_frame(h);
  cr_expect(h[5] == 1 && h[7] == -1, "given tangent kept");
}

/* non-finite poses: no contact, no crash */
Test(narrow, nonfinite_pose_gives_no_contact) {
  for (int p = 0; p < NPAIRS; p++) {
    const pair_case *pc = &PAIRS[p];
    real vert[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, -1, -1, -1};
    real p1[3] = {0, 0, 0}, p2[3] = {0, 0, (real)0.1}, m1[9], m2[9];
    rl_m3_identity(m1);
    rl_m3_identity(m2);
    rl_geomview a = {pc->t1, {1, 1, 1}, p1, m1, NULL, 0, 2, NULL, NULL, 0, 0, {0}};
    rl_geomview b = {pc->t2, {1, 1, 1}, p2, m2, pc->t2 == mjGEOM_MESH ? vert : NULL, 4, 2, NULL, NULL, 0, 0, {0}};
    rl_contact con[RL_MAXCONPAIR];
    int n0 = pc->fn(&a, &b, 0, RL_COLL_MUJOCO, 50, (real)1e-6, con);
    cr_expect(n0 > 0, "%s: overlapping geoms must touch", pc->name);
    p2[1] = (real)NAN;
    cr_expect_eq(pc->fn(&a, &b, 0, RL_COLL_MUJOCO, 50, (real)1e-6, con), 0, "%s: NaN position", pc->name);
    p2[1] = 0;
    m1[4] = (real)NAN;
    cr_expect_eq(pc->fn(&a, &b, 0, RL_COLL_MUJOCO, 50, (real)1e-6, con), 0, "%s: NaN rotation", pc->name);
    m1[4] = 1;
    b.size[0] = (real)INFINITY;
    cr_expect_eq(pc->fn(&a, &b, 0, RL_COLL_MUJOCO, 50, (real)1e-6, con), 0, "%s: infinite size", pc->name);
  }
}

/* ---------------------------------------------------------------- box–box on stacked boxes (float poses) */

/* Geom frames of two touching 0.1 m cubes as float runs produce them (printed with %.9g: exact floats):
 * a box resting half a box off the one below with a float-sized tilt.  In float, MuJoCo's face-over-edge
 * tie rule (1 − 1e-12) rounds away, and an edge–edge axis that is a face normal in disguise (two
 * perpendicular edges in parallel faces) took the contact: verify reported dist off by 4.8e-3 of the
 * size, and the AVBD pyramid got dist −0.0505 m (the overhang reported as depth; MuJoCo's double
 * routine gives the same on the three AVBD poses, f64 reproduces it bit for bit). */
typedef struct stacked_pose {
  const char *what;
  double p1[3], m1[9], p2[3], m2[9];
  int match_mujoco; /* f32 RL_COLL_MUJOCO must agree with MuJoCo here (MuJoCo's choice is resolved) */
} stacked_pose;

static const stacked_pose STACKED[] = {
    {"avbd f32 box_pyramid step 3, geoms 8/12 (tilt 4e-7 rad)",
     {-0.101000503, 2.74932262e-07, 0.149885863},
     {1, -1.21694983e-08, -2.15922296e-06, 1.21732979e-08, 1, 1.75980426e-06, 2.15922296e-06, -1.75980426e-06, 1},
     {-0.151500821, 4.6907374e-07, 0.249885753},
     {1, -1.12314694e-07, -2.55311284e-06, 1.12319611e-07, 1, 1.92453126e-06, 2.55311284e-06, -1.92453172e-06, 1},
     0},
    {"avbd f32 box_pyramid, geoms 16/19 (tilt 1.2e-4 rad)",
     {-0.100951366, 2.69608354e-05, 0.349982679},
     {0.99999994, 0.0004968305, -0.000126004656, -0.000496813387, 0.99999994, 0.000136066126, 0.000126072235,
      -0.000136003495, 1.00000012},
     {-0.0504869148, -9.67866072e-06, 0.449990422},
     {1, 6.75345509e-05, -1.00755979e-05, -6.75335032e-05, 1, 0.000103729872, 1.00826028e-05, -0.000103729188, 1},
     0},
    {"avbd f32 box_pyramid, geoms 8/13 (tilt 3.9e-4 rad)",
     {-0.100899771, -2.77683357e-05, 0.149966478},
     {0.999999881, 0.000503298943, -0.000345515844, -0.000503289164, 0.99999994, 2.83992867e-05, 0.000345530105,
      -2.82253877e-05, 1},
     {-0.0504006781, -3.34079559e-05, 0.249987617},
     {1, 0.000159676289, 4.60806514e-05, -0.00015968176, 1, 0.000118477124, -4.60617339e-05, -0.000118484488, 1},
     0},
    {"verify f32 box_pyramid seed 1, geoms 2/7",
     {-0.150533512, -1.42069257e-06, 0.0507571436},
     {0.999991894, -0.00385352247, -0.0011526437, 0.00385213387, 0.999991894, -0.00120450568, 0.00115727587,
      0.00120005582, 0.999998569},
     {-0.202578574, -8.45944451e-05, 0.149257854},
     {0.999994874, 0.00108565635, 0.00301461807, -0.00108130451, 0.999998331, -0.00144485, -0.00301618176,
      0.00144158292, 0.999994397},
     1},
};

/* Upper bound of the true overlap depth: the least face-axis penetration,
 * min over face normals u of box a or b of  h_a(u) + h_b(u) − |u·(p_b − p_a)|,  h(u) = Σ_k s_k |u·R e_k|
 * (the true depth is the least over all directions, so it is at most this). */
static double face_axis_depth_bound(const geom_in *a, const geom_in *b) {
  const geom_in *g[2] = {a, b};
  double best = INFINITY, d[3];
  for (int k = 0; k < 3; k++) d[k] = b->pos[k] - a->pos[k];
  for (int w = 0; w < 2; w++)
    for (int k = 0; k < 3; k++) {
      double u[3] = {g[w]->mat[k], g[w]->mat[3 + k], g[w]->mat[6 + k]},
             pen = -fabs(u[0] * d[0] + u[1] * d[1] + u[2] * d[2]);
      for (int v = 0; v < 2; v++)
        for (int e = 0; e < 3; e++)
          pen += g[v]->size[e] * fabs(u[0] * g[v]->mat[e] + u[1] * g[v]->mat[3 + e] + u[2] * g[v]->mat[6 + e]);
      if (pen < best) best = pen;
    }
  return best;
}

/* The depth is held to float rounding of the size: tol = 16 ε × the box edge (1.9e-7 m in f32).
 * f32 RL_COLL_MANIFOLD: every contact within [−bound − tol, tol] (no overhang reported as depth; the
 * 3.9e-4 rad pose wins the edge axis on its float tie margin too, so only the depth check catches it).
 * f32 RL_COLL_MUJOCO, where MuJoCo's choice is resolved: MuJoCo's count, dist within tol.
 * f64 RL_COLL_MUJOCO: MuJoCo's contacts bit for bit (including its −0.0505 m on the two AVBD poses).
 * RL_COLL_MANIFOLD, both precisions: every contact within [−bound − tol, tol] (the overhang never reported as
 * depth; in f64 the manifold equals MuJoCo's wherever MuJoCo's is consistent — the verify pose). */
Test(narrow, box_box_stacked_float_poses) {
  mj_scene s = scene_load(mjGEOM_BOX, mjGEOM_BOX);
  const double edge = 0.1, tol = 16 * RL_EPS * edge;
  for (size_t p = 0; p < sizeof STACKED / sizeof STACKED[0]; p++) {
    const stacked_pose *sp = &STACKED[p];
    geom_in a = {mjGEOM_BOX, {0.05, 0.05, 0.05}, {0}, {0}, 0}, b = a;
    memcpy(a.pos, sp->p1, sizeof a.pos);
    memcpy(a.mat, sp->m1, sizeof a.mat);
    memcpy(b.pos, sp->p2, sizeof b.pos);
    memcpy(b.mat, sp->m2, sizeof b.mat);
    a.rbound = b.rbound = rbound_of(mjGEOM_BOX, a.size);
    round_geom(&a);
    round_geom(&b);
    scene_set(&s, &a, &b, 0);
    mjContact raw[mjMAXCONPAIR];
    int nraw = mj_raw(&s, mjGEOM_BOX, mjGEOM_BOX, 0, raw);
    double bound = face_axis_depth_bound(&a, &b);
    rl_geomview v1, v2;
    real p1[3], m1[9], p2[3], m2[9];
    make_view(&v1, &a, p1, m1, NULL, 0, NULL);
    make_view(&v2, &b, p2, m2, NULL, 0, NULL);
    for (int mode = 0; mode < 2; mode++) {
      int cmode = mode ? RL_COLL_MUJOCO : RL_COLL_MANIFOLD;
      rl_contact con[RL_MAXCONPAIR];
      int n = rl_collide_box_box(&v1, &v2, 0, cmode, 50, (real)1e-6, con);
      double lo = INFINITY, hi = -INFINITY, err = 0;
      for (int i = 0; i < n; i++) {
        lo = fmin(lo, (double)con[i].dist);
        hi = fmax(hi, (double)con[i].dist);
      }
      for (int i = 0; i < nraw && n == nraw; i++) { /* nearest of ours to each of MuJoCo's */
        int best = 0;
        double bd = INFINITY;
        for (int j = 0; j < n; j++) {
          double e = 0;
          for (int k = 0; k < 3; k++) e += (raw[i].pos[k] - con[j].pos[k]) * (raw[i].pos[k] - con[j].pos[k]);
          if (e < bd) {
            bd = e;
            best = j;
          }
        }
        err = fmax(err, fabs(raw[i].dist - (double)con[best].dist));
      }
      char cmp[64] = "counts differ";
      if (n == nraw) snprintf(cmp, sizeof cmp, "|dist - MuJoCo| %.3g m", err);
      printf("box-box %s, %s mode, %s: %d contacts (MuJoCo %d), dist in [%.3g, %.3g] m, depth bound %.3g m, %s "
             "(tol %.2g)\n",
             sp->what, mode ? "mujoco" : "manifold", RL_PREC_NAME, n, nraw, lo, hi, bound, cmp, tol);
      if (cmode == RL_COLL_MANIFOLD) {
        cr_expect(n > 0, "%s: touching boxes, no contact", sp->what);
        cr_expect(lo >= -bound - tol && hi <= tol, "%s: dist in [%.3g, %.3g], allowed [%.3g, %.3g]", sp->what, lo, hi,
                  -bound - tol, tol);
      }
#if defined(RL_REAL_F64)
      /* f64: MuJoCo's own contacts in mujoco mode always, in manifold mode wherever MuJoCo's are consistent */
      if (cmode == RL_COLL_MUJOCO || (nraw && raw[0].dist >= -bound - tol)) {
        cr_expect_eq(n, nraw, "%s: count", sp->what);
        for (int i = 0; i < n && i < nraw; i++)
          cr_expect(con[i].dist == raw[i].dist, "%s: contact %d dist %.17g, MuJoCo %.17g", sp->what, i, con[i].dist,
                    raw[i].dist);
      }
#else
      if (cmode == RL_COLL_MUJOCO && sp->match_mujoco) {
        cr_expect_eq(n, nraw, "%s: count", sp->what);
        cr_expect_leq(err, tol, "%s: |dist - MuJoCo| %.3g > %.3g", sp->what, err, tol);
      }
#endif
    }
  }
  scene_free(&s);
}

/* ---------------------------------------------------------------- capsule pairs at float poses of the samples */

/* One pair at given frames (exact floats) against MuJoCo's own pair function on the same inputs: MuJoCo's count,
   and per contact (nearest by position) dist and pos within 1e-4 of the size L, the normal within 1e-3.
   Returns the largest normal difference (INFINITY on a count mismatch). */
static double sample_pose(const char *what, rl_collide_fn fn, const geom_in *a, const geom_in *b) {
  mj_scene s = scene_load(a->type, b->type);
  scene_set(&s, a, b, 0);
  mjContact raw[mjMAXCONPAIR];
  int nraw = mj_raw(&s, a->type, b->type, 0, raw);
  rl_geomview v1, v2;
  real p1[3], m1[9], p2[3], m2[9];
  make_view(&v1, a, p1, m1, NULL, 0, NULL);
  make_view(&v2, b, p2, m2, NULL, 0, NULL);
  rl_contact con[RL_MAXCONPAIR];
  int n = fn(&v1, &v2, 0, RL_COLL_MUJOCO, 50, (real)1e-6, con);
  double L = fmax(a->rbound, b->rbound), worst = n == nraw ? 0 : INFINITY, dist = 0;
  for (int i = 0; i < nraw && n == nraw; i++) {
    int best = 0;
    double bd = INFINITY;
    for (int j = 0; j < n; j++) {
      double e = 0;
      for (int k = 0; k < 3; k++) e += (raw[i].pos[k] - con[j].pos[k]) * (raw[i].pos[k] - con[j].pos[k]);
      if (e < bd) bd = e, best = j;
    }
    dist = fmax(dist, fmax(fabs(raw[i].dist - (double)con[best].dist), sqrt(bd)) / L);
    for (int k = 0; k < 3; k++) worst = fmax(worst, fabs(raw[i].frame[k] - (double)con[best].frame[k]));
  }
  if (getenv("RL_TEST_REPORT") || !(worst <= 1e-3 && dist <= 1e-4))
    fprintf(stderr, "%s: %d contacts (MuJoCo %d), dist/pos %.3g of the size, normal %.3g\n", what, n, nraw, dist, worst);
  cr_expect(n == nraw, "%s: %d contacts, MuJoCo %d", what, n, nraw);
  cr_expect(dist <= 1e-4, "%s: dist/pos %.3g of the size", what, dist);
  scene_free(&s);
  return worst;
}

/* geom of the given type, size, position and row-major frame (printed from a float run with %.9g: exact floats) */
static geom_in pose_geom(int type, double s0, double s1, const double pos[3], const double mat[9]) {
  geom_in g = {type, {s0, s1, 0}, {0}, {0}, 0};
  memcpy(g.pos, pos, sizeof g.pos);
  memcpy(g.mat, mat, sizeof g.mat);
  g.rbound = rbound_of(type, g.size);
  round_geom(&g);
  return g;
}

/* Frames from f32 verify runs of panda_like and MuJoCo's slider-crank sample, and crossing capsules like those of
   the cloth sample.  Each failed in float before the rule named (both precisions pass; f64 follows MuJoCo's rules):
   - panda_like, link0 and link1 capsules on one axis (link1 turns about it): det = ‖A1‖²‖A2‖² sin²θ rounds to
     ~1e-12 in float, above mjMINVAL, and the crossing branch gave one contact where MuJoCo's parallel branch gives
     two (capsules_parallel: |det| < 8ε·a·c);
   - slider_crank, two crank capsules whose axes cross exactly in z = 0: MuJoCo's centres coincide (z1 × z2 normal),
     float's differ by 1e-9 and their direction was the normal, 1 off (centers_coincide);
   - slider_crank, a capsule end inside a cylinder's cap (MPR): |v0 × v1|² < FLT_EPSILON read two directions 20°
     apart as collinear, the normal 0.16 off (ccd_zero);
   - 20 crossing capsule pairs 2e-6 m apart, 0.6–1 m from the origin, random orientations: the difference of two
     world points carried their float rounding, normal ~1e-2 off (center_offset). */
Test(narrow, capsule_pairs_at_float_poses_of_the_samples) {
  static const double I[9] = {1, 0, 0, 0, -1, -1.22464685e-16, 0, 1.22464685e-16, -1};
  static const double panda2[9] = {0.886613965, -0.462510198, -5.6641166e-17, -0.462510198, -0.886613965,
                                    -1.08578904e-16, 0, 1.22464685e-16, -1};
  geom_in a = pose_geom(mjGEOM_CAPSULE, 0.0599999987, 0.0500000007, (const double[3]){0, 0, 0.0700000003}, I);
  geom_in b = pose_geom(mjGEOM_CAPSULE, 0.0599999987, 0.075000003, (const double[3]){0, 0, 0.208000004}, panda2);
  double w = sample_pose("panda_like coaxial capsules", rl_collide_capsule_capsule, &a, &b);
  cr_expect(w <= 1e-3, "panda_like coaxial capsules: normal %.3g off", w);

  static const double c4[9] = {-0.994490147, 0, -0.10483095, -0.10483095, 0, 0.994490147, 0, 1.00000012, 0};
  static const double c6[9] = {0, -0.198099345, 0.980181932, 0, -0.980181932, -0.198099345, 1, 0, 0};
  a = pose_geom(mjGEOM_CAPSULE, 0.00999999978, 0.075000003, (const double[3]){-0.0548817664, 0.21702683, 0}, c4);
  b = pose_geom(mjGEOM_CAPSULE, 0.00999999978, 0.075000003, (const double[3]){-0.0735136494, 0.214857459, 0}, c6);
  w = sample_pose("slider_crank crossing capsules", rl_collide_capsule_capsule, &a, &b);
  cr_expect(w <= 1e-3, "slider_crank crossing capsules: normal %.3g off", w);

  static const double c2[9] = {0, -0.999999702, 0.000906854868, 0, -0.000906854868, -0.999999702, 1.00000012, 0, 0};
  static const double c5[9] = {-0.997551858, 0.0699307993, 8.564054e-18, 0.0699307993, 0.997551858, 1.22164875e-16,
                               -4.13590306e-25, 1.22464698e-16, -1};
  a = pose_geom(mjGEOM_CAPSULE, 0.00999999978, 0.100000001, (const double[3]){-9.06735659e-05, 0.0999999717, 0}, c2);
  b = pose_geom(mjGEOM_CYLINDER, 0.00600000005, 0.0250000004, (const double[3]){0, 0.200000003, 0.0250000004}, c5);
  w = sample_pose("slider_crank capsule end in a cylinder cap", rl_collide_convex, &a, &b);
  cr_expect(w <= 1e-3, "slider_crank capsule in cylinder cap: normal %.3g off", w);

  rng_state = 4242;
  double worst = 0;
  for (int k = 0; k < 20; k++) {
    double R[9], c[3], p[3], q[3], Rb[9];
    rand_rot(R);
    for (int i = 0; i < 3; i++) c[i] = uni(0.6, 1.0);
    /* a along R's x axis, b along its y axis, b's centre 2e-6 m from a's along R's z axis (the common normal) */
    for (int i = 0; i < 3; i++) {
      p[i] = c[i] - 0.005 * R[3 * i];
      q[i] = c[i] + 2e-6 * R[3 * i + 2] + 0.007 * R[3 * i + 1];
    }
    /* capsule frames: z along the axis (a: R·[e_y e_z e_x], b: R·[e_z e_x e_y]) */
    double Ra[9];
    for (int i = 0; i < 3; i++) {
      Ra[3 * i] = R[3 * i + 1], Ra[3 * i + 1] = R[3 * i + 2], Ra[3 * i + 2] = R[3 * i];
      Rb[3 * i] = R[3 * i + 2], Rb[3 * i + 1] = R[3 * i], Rb[3 * i + 2] = R[3 * i + 1];
    }
    a = pose_geom(mjGEOM_CAPSULE, 0.015, 0.02, p, Ra);
    b = pose_geom(mjGEOM_CAPSULE, 0.015, 0.02, q, Rb);
    worst = fmax(worst, sample_pose("crossing capsules 2e-6 m apart", rl_collide_capsule_capsule, &a, &b));
  }
  cr_expect(worst <= 1e-3, "crossing capsules 2e-6 m apart: normal %.3g off", worst);
}
