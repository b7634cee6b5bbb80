/* rl_collide.h — collision detection: broad phase, narrow phase, contact mixing.
 *
 * rl_collision(m, d) fills d->contact[0..ncon) from the geom frames written by rl_kinematics.
 * The narrow phase works on geom views (type, size, frame, hull vertices), so tests and the
 * independent oracle can call any pair function on arbitrary poses without a model. */
#ifndef RL_COLLIDE_H
#define RL_COLLIDE_H

#include "rl_data.h"

/* most contacts one narrow-phase call may write: MuJoCo 2.2.2's mjMAXCONPAIR, reached by a height field (one
   contact per prism); box–box writes ≤ 24 (its candidate points), the manifold builders ≤ 4 */
#define RL_MAXCONPAIR 50

/* A geom as the narrow phase sees it.  mat is row-major (columns = local axes in world). */
typedef struct rl_geomview {
  int type;         /* RL_GEOM_* */
  real size[3];     /* as geom_size */
  const real *pos;  /* world position [3] */
  const real *mat;  /* world orientation [9] */
  const real *vert; /* mesh: hull vertices in the geom frame (nvert × 3); else NULL */
  int nvert;
  real rbound;       /* bounding-sphere radius (0 for planes) */
  const int *graph;  /* mesh: hull adjacency of vert (layout as mesh_graph in rl_model.h), or NULL:
                          the support vertex is then found by searching all nvert vertices */
  const real *hdata; /* height field: elevation data (nrow × ncol, row-major, in [0, 1]); else NULL */
  int nrow, ncol;
  real hsize[4]; /* height field: hfield_size (x, y, top z scale, base) */
} rl_geomview;

/* Narrow-phase function: writes up to RL_MAXCONPAIR contacts (dist, pos, frame; nothing else) for
   the pair, only those with dist < margin, and returns their count.  The normal (frame[0..2]) points
   from g1 toward g2; pos lies midway between the two surfaces.  mode: RL_COLL_MANIFOLD or
   RL_COLL_MUJOCO (one point per MPR pair, as MuJoCo 2.2.2), plus RL_COLL_MULTICCD when MuJoCo's multiccd flag is
   set (MPR pairs then look for up to four more points, as MuJoCo 2.2.2's mjc_Convex). */
typedef int (*rl_collide_fn)(const rl_geomview *g1, const rl_geomview *g2, real margin, int mode, int mpr_iterations,
                             real mpr_tolerance, rl_contact *con);

/* The dispatch table, indexed [type1][type2] with type1 ≤ type2 (NULL: no collision function). */
rl_collide_fn rl_collide_function(int type1, int type2);

/* geom g of model m at the frames in d, as a view */
void rl_geom_view(const rl_model *m, const rl_data *d, int g, rl_geomview *v);

/* Complete a contact frame from its normal (rows 2 and 3 orthonormal tangents) as MuJoCo's mju_makeFrame. */
void rl_make_frame(real frame[9]);

/* Pair filters of MuJoCo 2.2.2 (contype/conaffinity, same weld body, parent–child, static–static,
   <exclude>): 1 if geoms g1, g2 may collide. */
int rl_geom_pair_allowed(const rl_model *m, int g1, int g2);

/* MuJoCo 2.2.2's bitmask filter: (contype₁ & conaffinity₂) | (contype₂ & conaffinity₁) ≠ 0. */
RL_HD int rl_pair_bitmask(const rl_model *m, int g1, int g2) {
  return (m->geom_contype[g1] & m->geom_conaffinity[g2]) || (m->geom_contype[g2] & m->geom_conaffinity[g1]);
}

/* 1 if bodies b1, b2 are an <exclude> pair; MuJoCo's compiler stores the signatures with body ids counted
   from 1: ((min body + 1) << 16) + (max body + 1). */
RL_HD int rl_pair_excluded(const rl_model *m, int b1, int b2) {
  int sig = (((b1 < b2 ? b1 : b2) + 1) << 16) + (b1 < b2 ? b2 : b1) + 1;
  for (int e = 0; e < m->nexclude; e++)
    if (m->exclude_signature[e] == sig) return 1;
  return 0;
}

/* condim and friction (slide, spin, roll) of a geom pair as MuJoCo 2.2.2's mj_setContact: a higher-priority
   geom imposes its own; equal priorities take condim = max and friction per component max.  Returns condim. */
RL_HD int rl_pair_condim_friction(const rl_model *m, int g1, int g2, real f[3]) {
  int p1 = m->geom_priority[g1], p2 = m->geom_priority[g2];
  if (p1 != p2) {
    int g = p1 > p2 ? g1 : g2;
    for (int k = 0; k < 3; k++) f[k] = m->geom_friction[3 * g + k];
    return m->geom_condim[g];
  }
  for (int k = 0; k < 3; k++) f[k] = rl_fmax(m->geom_friction[3 * g1 + k], m->geom_friction[3 * g2 + k]);
  int c1 = m->geom_condim[g1], c2 = m->geom_condim[g2];
  return c1 > c2 ? c1 : c2;
}

/* Eigenvectors of a symmetric 3×3 matrix, A = V·diag(λ)·Vᵀ with λ decreasing, in the order and signs of MuJoCo's
   mju_eig3 (Jacobi rotations accumulated in a quaternion; V is a rotation).  Used to rebuild MuJoCo 2.2.2's
   broad-phase frame under the override flag. */
void rl_sym3_eigvec(const real A[9], real V[9]);

/* The margin a contact uses: o_margin under MuJoCo's override flag, else the model's (the larger geom margin or the
   explicit pair's). */
real rl_contact_margin(const rl_model *m, real model_margin);

/* MuJoCo's override flag on a contact: solref ← o_solref, solimp ← o_solimp (friction and gap are the model's). */
void rl_contact_override(const rl_model *m, rl_contact *con);

/* Fill contact parameters for a geom pair as MuJoCo 2.2.2's mj_setContact: condim (max), friction
   (per-component max, or the higher-priority geom's), solref/solimp (solmix-weighted), margin, gap. */
void rl_contact_params(const rl_model *m, int g1, int g2, rl_contact *con);

/* The collision stage: broad phase, filters, narrow phase, parameters; at most m->nconmax contacts
   (deepest kept, overflow counted in warning[RL_WARN_CONTACTFULL]); deterministic order. */
void rl_collision(const rl_model *m, rl_data *d);

/* arena reals rl_collision may take */
size_t rl_collision_arena(const rl_model *m);

#endif
