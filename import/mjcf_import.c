/* mjcf_import.c — build a rigidlab model from MuJoCo's compiled mjModel.
 *
 * MuJoCo is used here only as the MJCF compiler: it resolves defaults, frames, inertias,
 * and the model constants (qpos0, invweight0, subtree masses) that MuJoCo's own runtime uses,
 * so the two engines start from bit-identical model numbers (rounded once in f32).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "rl_fluid_box.h"
#include "rl_import.h"

static const char *mjname(const mjModel *mjm, int adr) { return adr >= 0 ? mjm->names + adr : ""; }

/* one line: "PATH: KIND 'NAME' ... " */
static rl_model *refuse(char *err, int errlen, const char *path, const char *kind, const char *name, const char *why) {
  snprintf(err, (size_t)errlen, "%s: %s '%s' is not supported: %s", path, kind, name[0] ? name : "(unnamed)", why);
  return NULL;
}

/* Muscle and filter parameters the formulas cannot take (MuJoCo's compiler checks range, lmin/lmax and the
   signs of scale, vmax, fpmax, fvmax itself): 0, or 1 with what is wrong in what. */
static int bad_actuator_params(const mjModel *mjm, int u, char *what, size_t n) {
  const mjtNum *dp = mjm->actuator_dynprm + mjNDYN * u;
  if (mjm->actuator_dyntype[u] == mjDYN_MUSCLE && !(dp[0] > 0 && dp[1] > 0)) {
    snprintf(what, n, "muscle timeconst (%g, %g) must be positive (activation and deactivation times)", dp[0], dp[1]);
    return 1;
  }
  if (mjm->actuator_dyntype[u] == mjDYN_FILTER && !(dp[0] > 0)) {
    snprintf(what, n, "filter time constant dynprm[0] = %g must be positive", dp[0]);
    return 1;
  }
  int g = mjm->actuator_gaintype[u] == mjGAIN_MUSCLE, b = mjm->actuator_biastype[u] == mjBIAS_MUSCLE;
  if (!g && !b) return 0;
  const mjtNum *p = g ? mjm->actuator_gainprm + mjNGAIN * u : mjm->actuator_biasprm + mjNBIAS * u;
  const mjtNum *lr = mjm->actuator_lengthrange + 2 * u;
  if (!(p[8] >= 1)) {
    snprintf(what, n, "muscle fvmax = %g must be >= 1 (the force-velocity curve rises from 1 to fvmax)", p[8]);
    return 1;
  }
  if (!(lr[1] > lr[0])) {
    snprintf(what, n, "muscle lengthrange (%g, %g) is empty: the optimal length would be zero", lr[0], lr[1]);
    return 1;
  }
  return 0;
}

/* the first of N numbers at X that is not finite (|x| < 1e300), −1 when all are */
static int first_nonfinite(const mjtNum *x, int n) {
  for (int k = 0; k < n; k++)
    if (!(x[k] > -1e300 && x[k] < 1e300)) return k;
  return -1;
}

/* The numbers of each body and geom that the compiler takes as given or derives from sizes and density
   (frame, inertial frame, mass, principal inertia) are finite: a NaN position or a size so large that its
   mass overflows is named here, before the mass checks below would blame a massless body. */
static rl_model *check_finite_frames(const mjModel *mjm, const char *path, char *err, int errlen) {
  struct {
    const char *name;
    const mjtNum *x;
    int width;
  } body[] = {{"pos", mjm->body_pos, 3},           {"quat", mjm->body_quat, 4},
              {"inertial pos", mjm->body_ipos, 3}, {"inertial quat", mjm->body_iquat, 4},
              {"mass", mjm->body_mass, 1},         {"inertia", mjm->body_inertia, 3}},
    geom[] = {{"pos", mjm->geom_pos, 3}, {"quat", mjm->geom_quat, 4}, {"size", mjm->geom_size, 3}};
  for (int g = 0; g < mjm->ngeom; g++)
    for (size_t f = 0; f < sizeof geom / sizeof geom[0]; f++) {
      int k = first_nonfinite(geom[f].x + (size_t)geom[f].width * g, geom[f].width);
      if (k < 0) continue;
      const char *nm = mjname(mjm, mjm->name_geomadr[g]);
      snprintf(err, (size_t)errlen, "%s: geom '%s': %s[%d] = %g is not finite", path, nm[0] ? nm : "(unnamed)",
               geom[f].name, k, geom[f].x[geom[f].width * g + k]);
      return NULL;
    }
  for (int b = 1; b < mjm->nbody; b++)
    for (size_t f = 0; f < sizeof body / sizeof body[0]; f++) {
      int k = first_nonfinite(body[f].x + (size_t)body[f].width * b, body[f].width);
      if (k < 0) continue;
      const char *nm = mjname(mjm, mjm->name_bodyadr[b]);
      snprintf(err, (size_t)errlen, "%s: body '%s': %s[%d] = %g is not finite%s", path, nm[0] ? nm : "(unnamed)",
               body[f].name, k, body[f].x[body[f].width * b + k],
               f >= 4 ? " (its geoms' sizes or density too large?)" : "");
      return NULL;
    }
  return (rl_model *)1;
}

/* Tendon paths as the engine reads them: a fixed tendon of scalar joints; a spatial tendon that starts and
   ends at a site, each wrap geom a sphere or cylinder of positive radius between two sites, each pulley
   divisor positive; limits with lower ≤ upper, and no negative bound on a spatial tendon (its length is a
   sum of distances).  MuJoCo's compiler already refuses most of these; the checks keep the engine's
   assumptions in one place. */
static rl_model *check_tendons(const mjModel *mjm, const char *path, char *err, int errlen) {
  char what[160];
  for (int k = 0; k < mjm->ntendon; k++) {
    const char *nm = mjname(mjm, mjm->name_tendonadr[k]);
    int adr = mjm->tendon_adr[k], num = mjm->tendon_num[k];
    for (int j = adr; j < adr + num; j++) {
      int tp = mjm->wrap_type[j], id = mjm->wrap_objid[j];
      if (tp == mjWRAP_JOINT && mjm->jnt_type[id] != mjJNT_HINGE && mjm->jnt_type[id] != mjJNT_SLIDE) {
        snprintf(what, sizeof what, "joint '%s' is not a hinge or slide joint", mjname(mjm, mjm->name_jntadr[id]));
        return refuse(err, errlen, path, "fixed tendon", nm, what);
      }
      if (tp == mjWRAP_SPHERE || tp == mjWRAP_CYLINDER) {
        if (mjm->geom_type[id] != (tp == mjWRAP_SPHERE ? mjGEOM_SPHERE : mjGEOM_CYLINDER) ||
            !(mjm->geom_size[3 * id] > 0)) {
          snprintf(what, sizeof what, "wrap geom '%s' is not a sphere or cylinder of positive radius",
                   mjname(mjm, mjm->name_geomadr[id]));
          return refuse(err, errlen, path, "spatial tendon", nm, what);
        }
        if (j == adr || j == adr + num - 1 || mjm->wrap_type[j - 1] != mjWRAP_SITE ||
            mjm->wrap_type[j + 1] != mjWRAP_SITE) {
          snprintf(what, sizeof what, "wrap geom '%s' must lie between two sites", mjname(mjm, mjm->name_geomadr[id]));
          return refuse(err, errlen, path, "spatial tendon", nm, what);
        }
      }
      if (tp == mjWRAP_PULLEY && !(mjm->wrap_prm[j] > 0)) {
        snprintf(what, sizeof what, "pulley divisor %g must be positive (the branch length is divided by it)",
                 mjm->wrap_prm[j]);
        return refuse(err, errlen, path, "spatial tendon", nm, what);
      }
    }
    if (num > 0 && mjm->wrap_type[adr] != mjWRAP_JOINT &&
        (mjm->wrap_type[adr] != mjWRAP_SITE || mjm->wrap_type[adr + num - 1] != mjWRAP_SITE))
      return refuse(err, errlen, path, "spatial tendon", nm, "the path must start and end at a site");
    int spatial = num > 0 && mjm->wrap_type[adr] != mjWRAP_JOINT;
    if (spatial && mjm->tendon_limited[k] && (mjm->tendon_range[2 * k] < 0 || mjm->tendon_range[2 * k + 1] < 0)) {
      snprintf(what, sizeof what, "range [%g, %g] has a negative bound: a spatial tendon's length is never negative",
               mjm->tendon_range[2 * k], mjm->tendon_range[2 * k + 1]);
      return refuse(err, errlen, path, "spatial tendon", nm, what);
    }
    if (mjm->tendon_limited[k] && !(mjm->tendon_range[2 * k] <= mjm->tendon_range[2 * k + 1])) {
      snprintf(what, sizeof what, "range [%g, %g] has its lower limit above the upper", mjm->tendon_range[2 * k],
               mjm->tendon_range[2 * k + 1]);
      return refuse(err, errlen, path, "tendon", nm, what);
    }
  }
  return (rl_model *)1;
}

/* Everything the engine does not model is refused, never dropped. */
static rl_model *check_supported(const mjModel *mjm, const char *path, char *err, int errlen) {
  char what[200], e2[512];
  if (rl_opt_check_mj(&mjm->opt, e2, sizeof e2)) {
    snprintf(err, (size_t)errlen, "%s: %s", path, e2);
    return NULL;
  }
  rl_model *t = check_tendons(mjm, path, err, errlen);
  if (!t) return NULL;
  for (int g = 0; g < mjm->ngeom; g++)
  /* geom sizes the narrow phase divides by or takes roots of: sphere r; capsule/cylinder r, half-length;
     ellipsoid and box three half-sizes — all finite and positive */
  for (int g = 0; g < mjm->ngeom; g++) {
    int t = mjm->geom_type[g], n = t == mjGEOM_SPHERE                              ? 1
                                   : (t == mjGEOM_CAPSULE || t == mjGEOM_CYLINDER) ? 2
                                   : (t == mjGEOM_ELLIPSOID || t == mjGEOM_BOX)    ? 3
                                                                                   : 0;
    for (int k = 0; k < n; k++)
      if (!(mjm->geom_size[3 * g + k] > 0) || !(mjm->geom_size[3 * g + k] < 1e300)) {
        snprintf(what, sizeof what, "size[%d] = %g must be finite and positive", k, mjm->geom_size[3 * g + k]);
        return refuse(err, errlen, path, "geom", mjname(mjm, mjm->name_geomadr[g]), what);
      }
  }
  for (int e = 0; e < mjm->neq; e++)
    if (mjm->eq_type[e] != mjEQ_CONNECT && mjm->eq_type[e] != mjEQ_WELD && mjm->eq_type[e] != mjEQ_JOINT &&
        mjm->eq_type[e] != mjEQ_TENDON)
      return refuse(err, errlen, path, "equality", mjname(mjm, mjm->name_eqadr[e]),
                    "only connect, weld, joint and tendon equalities are modelled");
  for (int u = 0; u < mjm->nu; u++) {
    const char *nm = mjname(mjm, mjm->name_actuatoradr[u]);
    int trn = mjm->actuator_trntype[u];
    if (trn != mjTRN_JOINT && trn != mjTRN_JOINTINPARENT && trn != mjTRN_SLIDERCRANK && trn != mjTRN_SITE &&
        trn != mjTRN_TENDON && trn != mjTRN_BODY)
      return refuse(err, errlen, path, "actuator", nm, "unknown transmission type");
    if (mjm->actuator_dyntype[u] == mjDYN_USER || mjm->actuator_gaintype[u] == mjGAIN_USER ||
        mjm->actuator_biastype[u] == mjBIAS_USER)
      return refuse(err, errlen, path, "actuator", nm,
                    "user dynamics/gain/bias need MuJoCo callbacks, which an MJCF file cannot supply");
    if (mjm->actuator_dyntype[u] != mjDYN_NONE && u < mjm->nu - mjm->na)
      return refuse(err, errlen, path, "actuator", nm, "an actuator with dynamics must come after every one without");
    if (bad_actuator_params(mjm, u, what, sizeof what)) {
      snprintf(err, (size_t)errlen, "%s: actuator '%s': %s", path, nm[0] ? nm : "(unnamed)", what);
      return NULL;
    }
  }
  if (!check_finite_frames(mjm, path, err, errlen)) return NULL;
  /* a body that moves must have mass: zero mass with dofs makes M singular */
  for (int b = 1; b < mjm->nbody; b++) {
    if (mjm->body_dofnum[b] > 0 && mjm->body_subtreemass[b] <= 0) {
      snprintf(what, sizeof what, "has %d dof(s) but zero mass in its subtree", mjm->body_dofnum[b]);
      return refuse(err, errlen, path, "body", mjname(mjm, mjm->name_bodyadr[b]), what);
    }
  }
  for (int i = 0; i < mjm->nv; i++)
    if (!(mjm->dof_M0[i] > 0)) {
      int b = mjm->dof_bodyid[i];
      return refuse(err, errlen, path, "body", mjname(mjm, mjm->name_bodyadr[b]),
                    "a dof of this body has zero inertia (massless moving body)");
    }
  return (rl_model *)1;
}

/* number of convex-hull vertices of mesh k (all vertices when MuJoCo made no hull graph) */
static int hull_vertnum(const mjModel *mjm, int k) {
  int ga = mjm->mesh_graphadr[k];
  return ga >= 0 ? mjm->mesh_graph[ga] : mjm->mesh_vertnum[k];
}

/* Length of the neighbour lists (edge_localid) of mesh k's hull graph in MuJoCo's layout
 *   numvert, numface, vert_edgeadr[numvert], vert_globalid[numvert], edge_localid[numvert + 3 numface],
 *   face_globalid[3 numface],
 * or −1 when the mesh has no graph or it is malformed (an address or id out of range, a list without
 * its −1 terminator): the engine then searches all hull vertices. */
static int hull_graph_edgelen(const mjModel *mjm, int k) {
  int ga = mjm->mesh_graphadr[k];
  if (ga < 0) return -1;
  const int *gr = mjm->mesh_graph + ga;
  int nv = gr[0], nf = gr[1];
  if (nv < 1 || nf < 0) return -1;
  long elen = (long)nv + 3L * nf;
  if ((long)ga + 2 + 2L * nv + elen + 3L * nf > (long)mjm->nmeshgraph) return -1;
  const int *edgeadr = gr + 2, *edge = gr + 2 + 2 * nv;
  for (int v = 0; v < nv; v++) {
    long i = edgeadr[v], deg = 0;
    if (i < 0 || i >= elen) return -1;
    for (; i < elen && edge[i] >= 0; i++, deg++)
      if (edge[i] >= nv || deg >= nv) return -1;
    if (i >= elen) return -1;
  }
  return (int)elen;
}

/* Contact and constraint-row capacities (see rl_model.h): every equality/friction/limit row that can
   exist, 10 rows per contact (pyramidal condim 6), and rows at most as wide as two root paths (a tendon's rows:
   as wide as nv).  Counted in size_t, each product checked before it is formed, so none wraps; returns 0, or
   −1 with one line when the Jacobian capacity (the largest array the data holds) would not fit the engine's
   int indices. */
static int capacities(const mjModel *mjm, const rl_option *o, rl_model *sz, const char *path, char *err, int errlen) {
  size_t ncon = o->max_contacts > 0 ? (size_t)o->max_contacts
                : mjm->nconmax > 0  ? (size_t)mjm->nconmax
                                    : 8 * (size_t)mjm->ngeom;
  if (ncon < 256 && !(o->max_contacts > 0) && !(mjm->nconmax > 0)) ncon = 256;
  size_t nefc = 10 * ncon;
  for (int e = 0; e < mjm->neq; e++) nefc += mjm->eq_type[e] == mjEQ_CONNECT ? 3 : mjm->eq_type[e] == mjEQ_WELD ? 6 : 1;
  for (int i = 0; i < mjm->nv; i++) nefc += mjm->dof_frictionloss[i] > 0;
  size_t nten = 0; /* tendon rows, up to nv wide: frictionloss, two limit sides, then the tendon equalities (the
                    latter already in nefc with the equalities) */
  for (int k = 0; k < mjm->ntendon; k++)
    nten += (size_t)(mjm->tendon_frictionloss[k] > 0) + 2 * (size_t)(mjm->tendon_limited[k] != 0);
  nefc += nten;
  for (int e = 0; e < mjm->neq; e++) nten += (size_t)(mjm->eq_type[e] == mjEQ_TENDON);
  for (int j = 0; j < mjm->njnt; j++)
    if (mjm->jnt_limited[j]) nefc += mjm->jnt_type[j] == mjJNT_BALL ? 1 : 2;
  size_t chain = 0; /* most dofs on one body's path to the world */
  for (int b = 1; b < mjm->nbody; b++) {
    size_t n = 0;
    for (int a = b; a > 0; a = mjm->body_parentid[a]) n += (size_t)mjm->body_dofnum[a];
    if (n > chain) chain = n;
  }
  size_t width = 2 * chain < (size_t)mjm->nv ? 2 * chain : (size_t)mjm->nv;
  if (width < 1) width = 1;
  size_t nv = mjm->nv > 0 ? (size_t)mjm->nv : 1, rows = nefc - nten;
  if (rows > (size_t)INT_MAX / width || nten > (size_t)INT_MAX / nv || rows * width > (size_t)INT_MAX - nten * nv) {
    snprintf(err, (size_t)errlen,
             "%s: %zu contacts (%s) need %zu constraint rows of width %zu: more than an int counts", path, ncon,
             o->max_contacts > 0 ? "max_contacts" : "the model's nconmax", nefc, width);
    return -1;
  }
  sz->nconmax = (int)ncon;
  sz->nefcmax = (int)nefc;
  sz->njmax = (int)((nefc - nten) * width + nten * nv);
  return 0;
}

#define COPY(name, count, width) \
  for (long i_ = 0; i_ < (long)(count) * (width); i_++) m->name[i_] = (real)mjm->name[i_];

rl_model *rl_import_mjmodel(const mjModel *mjm, const rl_option *o, const char *path, char *err, int errlen) {
  if (!check_supported(mjm, path, err, errlen)) return NULL;
  rl_option def;
  if (!o) {
    rl_option_default(&def);
    o = &def;
  }
  rl_model sz;
  memset(&sz, 0, sizeof sz);
  sz.nq = mjm->nq;
  sz.nv = mjm->nv;
  sz.nu = mjm->nu;
  sz.nbody = mjm->nbody;
  sz.njnt = mjm->njnt;
  sz.ngeom = mjm->ngeom;
  sz.nmesh = mjm->nmesh;
  sz.neq = mjm->neq;
  sz.nM = mjm->nM;
  sz.nexclude = mjm->nexclude;
  sz.nnames = mjm->nnames;
  sz.na = mjm->na;
  sz.nmocap = mjm->nmocap;
  sz.npair = mjm->npair;
  sz.nsite = mjm->nsite;
  sz.ntendon = mjm->ntendon;
  sz.nwrap = mjm->nwrap;
  sz.nwrappnt = 2 * mjm->nwrap;
  sz.ntenJ = mjm->ntendon * mjm->nv;
  sz.nmoment = mjm->nu * mjm->nv;
  sz.nhfield = mjm->nhfield;
  sz.nhfielddata = mjm->nhfielddata;
  for (int k = 0; k < mjm->nmesh; k++) {
    sz.nmeshvert += hull_vertnum(mjm, k);
    int elen = hull_graph_edgelen(mjm, k);
    if (elen >= 0) sz.nmeshgraph += hull_vertnum(mjm, k) + elen;
  }
  if (capacities(mjm, o, &sz, path, err, errlen)) return NULL;
  rl_model *m = rl_model_alloc(&sz);
  if (!m) {
    snprintf(err, (size_t)errlen, "%s: out of memory building the model", path);
    return NULL;
  }
  /* options: rigidlab's as given, MuJoCo's from the compiled model */
  m->opt = *o;
  rl_option_from_mj(&m->opt, &mjm->opt);

  COPY(qpos0, m->nq, 1)
  COPY(qpos_spring, m->nq, 1)
  COPY(body_parentid, m->nbody, 1)
  COPY(body_rootid, m->nbody, 1)
  COPY(body_weldid, m->nbody, 1)
  COPY(body_jntnum, m->nbody, 1)
  COPY(body_jntadr, m->nbody, 1) COPY(body_dofnum, m->nbody, 1) COPY(body_dofadr, m->nbody, 1)
      COPY(body_geomnum, m->nbody, 1) COPY(body_geomadr, m->nbody, 1) COPY(body_pos, m->nbody, 3)
          COPY(body_quat, m->nbody, 4) COPY(body_ipos, m->nbody, 3) COPY(body_iquat, m->nbody, 4) COPY(
              body_mass, m->nbody, 1) COPY(body_subtreemass, m->nbody, 1) COPY(body_inertia, m->nbody, 3)
              COPY(body_invweight0, m->nbody, 2) COPY(jnt_type, m->njnt, 1) COPY(jnt_qposadr, m->njnt, 1) COPY(
                  jnt_dofadr, m->njnt, 1) COPY(jnt_bodyid, m->njnt, 1) COPY(jnt_limited, m->njnt, 1)
                  COPY(jnt_solref, m->njnt, RL_NREF) COPY(jnt_solimp, m->njnt, RL_NIMP) COPY(jnt_pos, m->njnt, 3) COPY(
                      jnt_axis, m->njnt, 3) COPY(jnt_stiffness, m->njnt,
                                                 1) COPY(jnt_range, m->njnt, 2)
                      COPY(jnt_margin, m->njnt, 1) COPY(dof_bodyid, m->nv, 1) COPY(dof_jntid, m->nv, 1)
                          COPY(dof_parentid, m->nv, 1) COPY(dof_Madr, m->nv, 1) COPY(dof_solref, m->nv, RL_NREF) COPY(
                              dof_solimp,
                              m->nv, RL_NIMP) COPY(dof_frictionloss, m->nv, 1)
                              COPY(dof_armature, m->nv, 1) COPY(dof_damping, m->nv, 1) COPY(dof_invweight0, m->nv, 1)
                                  COPY(dof_M0, m->nv, 1) COPY(dof_simplenum, m->nv, 1)
                                  COPY(geom_type, m->ngeom, 1) COPY(geom_contype, m->ngeom, 1)
                                      COPY(geom_conaffinity, m->ngeom, 1)
                                          COPY(geom_condim, m->ngeom, 1) COPY(geom_bodyid, m->ngeom, 1) COPY(
                                              geom_dataid,
                                              m->ngeom, 1) COPY(geom_priority, m->ngeom, 1)
                                              COPY(geom_solmix, m->ngeom, 1) COPY(geom_solref, m->ngeom, RL_NREF) COPY(
                                                  geom_solimp,
                                                  m->ngeom, RL_NIMP) COPY(geom_size, m->ngeom, 3)
                                                  COPY(geom_rbound, m->ngeom, 1) COPY(geom_pos, m->ngeom, 3) COPY(
                                                      geom_quat, m->ngeom,
                                                      4) COPY(geom_friction, m->ngeom, 3)
                                                      COPY(geom_margin, m->ngeom, 1) COPY(geom_gap, m->ngeom, 1) COPY(geom_fluid, m->ngeom, RL_NFLUID) COPY(
                                                          exclude_signature, m->nexclude,
                                                          1) COPY(eq_type, m->neq, 1)
                                                          COPY(eq_obj1id, m->neq, 1) COPY(eq_obj2id, m->neq, 1) COPY(
                                                              eq_active, m->neq, 1) COPY(eq_solref, m->neq, RL_NREF)
                                                              COPY(eq_solimp, m->neq,
                                                                   RL_NIMP) COPY(eq_data, m->neq, RL_NEQDATA)
                                                                  COPY(actuator_gaintype, m->nu,
                                                                       1) COPY(actuator_biastype, m->nu, 1)
                                                                      COPY(actuator_ctrllimited, m->nu,
                                                                           1) COPY(actuator_forcelimited, m->nu, 1)
                                                                          COPY(actuator_gainprm, m->nu, RL_NGAIN) COPY(
                                                                              actuator_biasprm, m->nu, RL_NBIAS)
                                                                              COPY(actuator_ctrlrange, m->nu, 2) COPY(
                                                                                  actuator_forcerange, m->nu,
                                                                                  2) COPY(name_bodyadr, m->nbody, 1)
                                                                                  COPY(name_jntadr, m->njnt, 1) COPY(
                                                                                      name_geomadr, m->ngeom,
                                                                                      1) COPY(name_eqadr, m->neq, 1)
                                                                                      COPY(name_actuatoradr, m->nu, 1)
                                                                                          memcpy(m->names, mjm->names,
                                                                                                 (size_t)mjm->nnames);
  COPY(body_mocapid, m->nbody, 1)
  COPY(actuator_trntype, m->nu, 1)
  COPY(actuator_trnid, m->nu, 2)
  COPY(actuator_dyntype, m->nu, 1)
  COPY(actuator_actlimited, m->nu, 1)
  COPY(actuator_dynprm, m->nu, RL_NDYN)
  COPY(actuator_actrange, m->nu, 2)
  COPY(actuator_cranklength, m->nu, 1)
  COPY(actuator_acc0, m->nu, 1)
  COPY(actuator_lengthrange, m->nu, 2)
  COPY(pair_dim, m->npair, 1)
  COPY(pair_geom1, m->npair, 1)
  COPY(pair_geom2, m->npair, 1)
  COPY(pair_solref, m->npair, RL_NREF)
  COPY(pair_solimp, m->npair, RL_NIMP)
  COPY(pair_margin, m->npair, 1)
  COPY(pair_gap, m->npair, 1)
  COPY(pair_friction, m->npair, 5)
  for (int u = 0; u < m->nu; u++) {
    m->actuator_gear[u] = (real)mjm->actuator_gear[6 * u];
    for (int k = 0; k < 6; k++) m->actuator_gearvec[6 * u + k] = (real)mjm->actuator_gear[6 * u + k];
  }
  COPY(site_bodyid, m->nsite, 1)
  COPY(site_pos, m->nsite, 3)
  COPY(site_quat, m->nsite, 4)
  COPY(name_siteadr, m->nsite, 1)
  COPY(tendon_adr, m->ntendon, 1)
  COPY(tendon_num, m->ntendon, 1)
  COPY(tendon_limited, m->ntendon, 1)
  COPY(tendon_solref_lim, m->ntendon, RL_NREF)
  COPY(tendon_solimp_lim, m->ntendon, RL_NIMP)
  COPY(tendon_solref_fri, m->ntendon, RL_NREF)
  COPY(tendon_solimp_fri, m->ntendon, RL_NIMP)
  COPY(tendon_range, m->ntendon, 2)
  COPY(tendon_margin, m->ntendon, 1)
  COPY(tendon_stiffness, m->ntendon, 1)
  COPY(tendon_damping, m->ntendon, 1)
  COPY(tendon_frictionloss, m->ntendon, 1)
  COPY(tendon_lengthspring, m->ntendon, 1)
  COPY(tendon_length0, m->ntendon, 1)
  COPY(tendon_invweight0, m->ntendon, 1)
  COPY(name_tendonadr, m->ntendon, 1)
  COPY(wrap_type, m->nwrap, 1)
  COPY(wrap_objid, m->nwrap, 1)
  COPY(wrap_prm, m->nwrap, 1)
  COPY(hfield_size, m->nhfield, 4)
  COPY(hfield_nrow, m->nhfield, 1)
  COPY(hfield_ncol, m->nhfield, 1)
  COPY(hfield_adr, m->nhfield, 1)
  COPY(hfield_data, m->nhfielddata, 1)
  /* convex hull vertices of each mesh, in the mesh frame */
  int va = 0;
  for (int k = 0; k < m->nmesh; k++) {
    int ga = mjm->mesh_graphadr[k], n = hull_vertnum(mjm, k), base = mjm->mesh_vertadr[k];
    m->mesh_vertadr[k] = va;
    m->mesh_vertnum[k] = n;
    for (int i = 0; i < n; i++) {
      int v = ga >= 0 ? mjm->mesh_graph[ga + 2 + n + i] : i; /* vert_globalid */
      for (int c = 0; c < 3; c++) m->mesh_vert[3 * (va + i) + c] = (real)mjm->mesh_vert[3 * (base + v) + c];
    }
    va += n;
  }
  /* hull adjacency of each mesh: MuJoCo's local ids are our hull-vertex indices (mesh_vert holds the
     hull in vert_globalid order), so the lists are copied as they are, behind per-vertex addresses
     relative to the mesh's block (see rl_model.h) */
  int gadr = 0;
  for (int k = 0; k < m->nmesh; k++) {
    int elen = hull_graph_edgelen(mjm, k), n = m->mesh_vertnum[k];
    m->mesh_graphadr[k] = elen >= 0 ? gadr : -1;
    if (elen < 0) continue;
    const int *gr = mjm->mesh_graph + mjm->mesh_graphadr[k];
    int *out = m->mesh_graph + gadr;
    for (int i = 0; i < n; i++) out[i] = n + gr[2 + i];
    memcpy(out + n, gr + 2 + 2 * n, sizeof(int) * (size_t)elen);
    gadr += n + elen;
  }
  for (int b = 0; b < m->nbody; b++) { /* in double from MuJoCo's inertia (rl_fluid_box_sides); massless: 0 */
    double box[3] = {0, 0, 0};
    if (mjm->body_mass[b] > 0) rl_fluid_box_sides(mjm->body_inertia + 3 * b, mjm->body_mass[b], box);
    for (int i = 0; i < 3; i++) m->body_fluidbox[3 * b + i] = (real)box[i];
  }
  rl_model_derive(m);
  return m;
}
