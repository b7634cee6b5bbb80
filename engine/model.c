/* model.c — allocation of the const model and the mutable data (one buffer each; the data's scratch
 * arena sized by rl_arena_reals, arena.c). */
#include <stdlib.h>
#include <string.h>
#include "rl_engine.h"
#include "rl_math.h"

/* round a byte count up to 64 so every array starts cache-line aligned */
static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

rl_model *rl_model_alloc(const rl_model *sizes) {
  rl_model *m = calloc(1, sizeof *m);
  if (!m) return NULL;
#define RL_X_SIZE(n) m->n = sizes->n;
  RL_MODEL_SIZES(RL_X_SIZE)
#undef RL_X_SIZE
  size_t bytes = 0;
#define RL_X_FIELD(type, name, count, width) bytes += align64(sizeof(type) * (size_t)m->count * (width));
  RL_MODEL_FIELDS(RL_X_FIELD)
#undef RL_X_FIELD
  char *p = calloc(1, bytes + 64);
  if (!p) {
    free(m);
    return NULL;
  }
  m->buffer = p;
  p = (char *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
#define RL_X_FIELD(type, name, count, width) \
  m->name = (type *)p;                       \
  p += align64(sizeof(type) * (size_t)m->count * (width));
  RL_MODEL_FIELDS(RL_X_FIELD)
#undef RL_X_FIELD
  return m;
}

void rl_model_free(rl_model *m) {
  if (!m) return;
  free(m->buffer);
  free(m);
}

/* geom_collide: geom g can collide with some geom h iff (contype_g & conaffinity_h) | (contype_h &
   conaffinity_g) ≠ 0 for some h, i.e. iff (contype_g & A) | (conaffinity_g & T) ≠ 0 with A, T the OR of
   every geom's conaffinity, contype (h = g included: conservative, a geom alone never collides anyway);
   and every geom an explicit <contact><pair> names (a pair bypasses the bitmask). */
static void derive_geom_collide(rl_model *m) {
  int T = 0, A = 0;
  for (int g = 0; g < m->ngeom; g++) {
    T |= m->geom_contype[g];
    A |= m->geom_conaffinity[g];
  }
  for (int g = 0; g < m->ngeom; g++)
    m->geom_collide[g] = ((m->geom_contype[g] & A) | (m->geom_conaffinity[g] & T)) != 0;
  for (int p = 0; p < m->npair; p++) m->geom_collide[m->pair_geom1[p]] = m->geom_collide[m->pair_geom2[p]] = 1;
}

/* geom_hext of a mesh geom: max_i |v_i,c| over its hull vertices, per geom-frame axis c; of a height-field
   geom: (size₀, size₁, max(size₂, size₃)) of its hfield, the half-extents of the box [−size₀, size₀] ×
   [−size₁, size₁] × [−size₃, size₂] made symmetric about the geom origin */
static void derive_geom_hext(rl_model *m) {
  for (int g = 0; g < m->ngeom; g++) {
    real *loc = m->geom_hext + 3 * g;
    loc[0] = loc[1] = loc[2] = 0;
    int k = m->geom_dataid[g];
    if (m->geom_type[g] == RL_GEOM_HFIELD && k >= 0 && k < m->nhfield) {
      const real *hs = m->hfield_size + 4 * k;
      loc[0] = hs[0];
      loc[1] = hs[1];
      loc[2] = rl_fmax(hs[2], hs[3]);
      continue;
    }
    if (m->geom_type[g] != RL_GEOM_MESH || k < 0) continue;
    const real *v = m->mesh_vert + 3 * m->mesh_vertadr[k];
    for (int i = 0; i < m->mesh_vertnum[k]; i++)
      for (int c = 0; c < 3; c++) loc[c] = rl_fmax(loc[c], rl_fabs(v[3 * i + c]));
  }
}

/* M_colind: row i of qM (from dof_Madr[i]) holds the columns i, parent(i), parent(parent(i)), … */
static void derive_m_colind(rl_model *m) {
  for (int i = 0; i < m->nv; i++) {
    int a = m->dof_Madr[i];
    for (int j = i; j >= 0; j = m->dof_parentid[j]) m->M_colind[a++] = j;
  }
}

/* a local pose (pos, quat) equal to (pos0, quat0), entry for entry */
static int same_pose(const real pos[3], const real quat[4], const real pos0[3], const real quat0[4]) {
  return pos[0] == pos0[0] && pos[1] == pos0[1] && pos[2] == pos0[2] && quat[0] == quat0[0] && quat[1] == quat0[1] &&
         quat[2] == quat0[2] && quat[3] == quat0[3];
}

/* sameframe of a frame at (pos, quat) on body b: 1 the body frame (pos = 0, quat = 1), 2 its inertial frame
   (pos = ipos_b, quat = iquat_b), else 0 */
static int frame_sameframe(const rl_model *m, int b, const real pos[3], const real quat[4]) {
  static const real zero[3] = {0, 0, 0}, unit[4] = {1, 0, 0, 0};
  if (same_pose(pos, quat, zero, unit)) return 1;
  return same_pose(pos, quat, m->body_ipos + 3 * b, m->body_iquat + 4 * b) ? 2 : 0;
}

/* body_sameframe, geom_sameframe, site_sameframe (see rl_model.h) */
static void derive_sameframe(rl_model *m) {
  for (int b = 0; b < m->nbody; b++)
    m->body_sameframe[b] = frame_sameframe(m, b, m->body_ipos + 3 * b, m->body_iquat + 4 * b) == 1;
  for (int g = 0; g < m->ngeom; g++)
    m->geom_sameframe[g] = frame_sameframe(m, m->geom_bodyid[g], m->geom_pos + 3 * g, m->geom_quat + 4 * g);
  for (int s = 0; s < m->nsite; s++)
    m->site_sameframe[s] = frame_sameframe(m, m->site_bodyid[s], m->site_pos + 3 * s, m->site_quat + 4 * s);
}

/* geom_xpos0, geom_xmat0: a world-body geom's frame on the world's x = 0, q = 1, R = I (as rl_kinematics) */
static void derive_world_frames(rl_model *m) {
  static const real x0[3] = {0, 0, 0}, q0[4] = {1, 0, 0, 0}, R0[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  for (int g = 0; g < m->ngeom; g++) {
    real *x = m->geom_xpos0 + 3 * g, *R = m->geom_xmat0 + 9 * g;
    memset(x, 0, 3 * sizeof(real));
    memset(R, 0, 9 * sizeof(real));
    if (m->geom_bodyid[g] == 0) rl_frame_to_global(x, R, x0, q0, R0, m->geom_pos + 3 * g, m->geom_quat + 4 * g, NULL);
  }
}

/* dof_depth, and dof_treeend where every dof's subtree is the range that follows it (see rl_model.h) */
static void derive_dof_tree(rl_model *m) {
  int nv = m->nv, contiguous = 1;
  for (int i = 0; i < nv; i++) {
    int p = m->dof_parentid[i];
    m->dof_depth[i] = p < 0 ? 0 : m->dof_depth[p] + 1;
    m->dof_treeend[i] = i;
    if (p >= i) contiguous = 0; /* parents first, or no ranges */
  }
  for (int i = nv - 1; i >= 0; i--) {
    int p = m->dof_parentid[i];
    if (p >= 0 && m->dof_treeend[i] > m->dof_treeend[p]) m->dof_treeend[p] = m->dof_treeend[i];
  }
  /* with parents first, the range i … end[i] is i's subtree iff each dof after i in it has its parent in it */
  for (int i = 0; i < nv && contiguous; i++)
    for (int k = i + 1; k <= m->dof_treeend[i] && contiguous; k++)
      contiguous = m->dof_parentid[k] >= i && m->dof_parentid[k] < k;
  if (!contiguous)
    for (int i = 0; i < nv; i++) m->dof_treeend[i] = -1;
}

void rl_model_derive(rl_model *m) {
  derive_geom_collide(m);
  derive_geom_hext(m);
  derive_m_colind(m);
  derive_dof_tree(m);
  derive_sameframe(m);
  derive_world_frames(m);
}

const char *rl_model_name(const rl_model *m, int adr) {
  if (adr < 0 || adr >= m->nnames) return "";
  return m->names + adr;
}

rl_data *rl_data_alloc(const rl_model *m) {
  rl_data *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  size_t bytes = 0;
#define RL_X_DATA(name, count, width, ...) bytes += align64(sizeof(real) * (size_t)m->count * (width));
  RL_DATA_STATE(RL_X_DATA)
  RL_DATA_DERIVED(RL_X_DATA)
#undef RL_X_DATA
#define RL_X_EFC(type, name, count, width, ...) bytes += align64(sizeof(type) * (size_t)m->count * (width));
  RL_DATA_EFC(RL_X_EFC)
  RL_DATA_RUNTIME(RL_X_EFC)
  RL_DATA_PATH(RL_X_EFC)
#undef RL_X_EFC
  bytes += align64(sizeof(rl_contact) * (size_t)m->nconmax);
  d->arena_size = rl_arena_reals(m);
  bytes += align64(sizeof(real) * d->arena_size);
  char *p = calloc(1, bytes + 64);
  if (!p) {
    free(d);
    return NULL;
  }
  d->buffer = p;
  p = (char *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
#define RL_X_DATA(name, count, width, ...) \
  d->name = (real *)p;                     \
  p += align64(sizeof(real) * (size_t)m->count * (width));
  RL_DATA_STATE(RL_X_DATA)
  RL_DATA_DERIVED(RL_X_DATA)
#undef RL_X_DATA
#define RL_X_EFC(type, name, count, width, ...) \
  d->name = (type *)p;                          \
  p += align64(sizeof(type) * (size_t)m->count * (width));
  RL_DATA_EFC(RL_X_EFC)
  RL_DATA_RUNTIME(RL_X_EFC)
  RL_DATA_PATH(RL_X_EFC)
#undef RL_X_EFC
  d->contact = (rl_contact *)p;
  p += align64(sizeof(rl_contact) * (size_t)m->nconmax);
  d->arena = (real *)p;
  rl_data_reset(m, d);
  return d;
}

void rl_data_free(rl_data *d) {
  if (!d) return;
  rl_sparse_free(d);
  free(d->buffer);
  free(d);
}

/* mocap poses as the model places the mocap bodies (MuJoCo's mj_resetData): body_pos, body_quat */
void rl_mocap_reset(const rl_model *m, rl_data *d) {
  for (int b = 0; b < m->nbody; b++) {
    int k = m->body_mocapid[b];
    if (k < 0) continue;
    memcpy(d->mocap_pos + 3 * k, m->body_pos + 3 * b, 3 * sizeof(real));
    memcpy(d->mocap_quat + 4 * k, m->body_quat + 4 * b, 4 * sizeof(real));
  }
}

void rl_data_reset(const rl_model *m, rl_data *d) {
  d->time = 0;
  memset(d->warning, 0, sizeof d->warning);
  memcpy(d->qpos, m->qpos0, sizeof(real) * (size_t)m->nq);
  memset(d->qvel, 0, sizeof(real) * (size_t)m->nv);
  memset(d->ctrl, 0, sizeof(real) * (size_t)m->nu);
  memset(d->qfrc_applied, 0, sizeof(real) * (size_t)m->nv);
  memset(d->act, 0, sizeof(real) * (size_t)m->na);
  memset(d->act_dot, 0, sizeof(real) * (size_t)m->na);
  rl_mocap_reset(m, d);
  memset(d->qacc, 0, sizeof(real) * (size_t)m->nv);
  memset(d->qacc_warmstart, 0, sizeof(real) * (size_t)m->nv);
  for (int e = 0; e < m->neq; e++) d->eq_active[e] = m->eq_active[e];
  memcpy(d->jnt_range, m->jnt_range, sizeof(real) * 2 * (size_t)m->njnt);
  d->ncon = d->ne = d->nf = d->nefc = d->nnzJ = 0;
  d->solver_iter = 0;
  d->solver_converged = 1;
  d->arena_top = 0;
}

/* FNV-1a over the bit patterns of time and every state field, in registry order. */
uint64_t rl_state_hash(const rl_model *m, const rl_data *d) {
  uint64_t h = 1469598103934665603ULL;
  const unsigned char *b = (const unsigned char *)&d->time;
  for (size_t i = 0; i < sizeof d->time; i++) h = (h ^ b[i]) * 1099511628211ULL;
#define RL_X_DATA(name, count, width, ...) \
  b = (const unsigned char *)d->name;      \
  for (size_t i = 0; i < sizeof(real) * (size_t)m->count * (width); i++) h = (h ^ b[i]) * 1099511628211ULL;
  RL_DATA_STATE(RL_X_DATA)
#undef RL_X_DATA
  return h;
}
