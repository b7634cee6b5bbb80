/* rl_narrow.h — the narrow-phase pair functions behind rl_collide_function (engine-internal).
 * Analytic pairs (collide_prim.c, collide_box.c) follow MuJoCo 2.2.2's routines; every other convex
 * pair goes through MPR (collide_convex.c).  All have the rl_collide_fn signature (rl_collide.h). */
#ifndef RL_NARROW_H
#define RL_NARROW_H

#include "rl_collide.h"

#define rl_collide_plane_sphere    RL_NAME(collide_plane_sphere)
#define rl_collide_plane_capsule   RL_NAME(collide_plane_capsule)
#define rl_collide_plane_cylinder  RL_NAME(collide_plane_cylinder)
#define rl_collide_plane_box       RL_NAME(collide_plane_box)
#define rl_collide_plane_convex    RL_NAME(collide_plane_convex)
#define rl_collide_sphere_sphere   RL_NAME(collide_sphere_sphere)
#define rl_collide_sphere_capsule  RL_NAME(collide_sphere_capsule)
#define rl_collide_sphere_box      RL_NAME(collide_sphere_box)
#define rl_collide_capsule_capsule RL_NAME(collide_capsule_capsule)
#define rl_collide_capsule_box     RL_NAME(collide_capsule_box)
#define rl_collide_box_box         RL_NAME(collide_box_box)
#define rl_collide_convex          RL_NAME(collide_convex)
#define rl_support                 RL_NAME(support)
#define rl_collide_hfield          RL_NAME(collide_hfield)
#define rl_mpr_prism               RL_NAME(mpr_prism)
#define rl_prism_support           RL_NAME(prism_support)
#define rl_fix_normal              RL_NAME(fix_normal)

#define RL_NARROW_ARGS                                                                                         \
  const rl_geomview *g1, const rl_geomview *g2, real margin, int mode, int mpr_iterations, real mpr_tolerance, \
      rl_contact *con

/* analytic (collide_prim.c, collide_box.c) */
int rl_collide_plane_sphere(RL_NARROW_ARGS);
int rl_collide_plane_capsule(RL_NARROW_ARGS);
int rl_collide_plane_cylinder(RL_NARROW_ARGS);
int rl_collide_plane_box(RL_NARROW_ARGS);
int rl_collide_plane_convex(RL_NARROW_ARGS); /* plane vs ellipsoid / mesh */
int rl_collide_sphere_sphere(RL_NARROW_ARGS);
int rl_collide_sphere_capsule(RL_NARROW_ARGS);
int rl_collide_sphere_box(RL_NARROW_ARGS);
int rl_collide_capsule_capsule(RL_NARROW_ARGS);
int rl_collide_capsule_box(RL_NARROW_ARGS);
int rl_collide_box_box(RL_NARROW_ARGS);

/* general convex pair by MPR, with the flat-contact manifold in RL_COLL_MANIFOLD mode (collide_convex.c) */
int rl_collide_convex(RL_NARROW_ARGS);
/* support point of geom g in world direction dir (not necessarily unit): the point of g maximizing dir·x */
void rl_support(const rl_geomview *g, const real dir[3], real out[3]);
/* mjc_fixNormal: the MPR normal (g1 → g2) replaced by the analytic one of a sphere, capsule, ellipsoid or
   cylinder wall at contact point pos (averaged when both geoms are round) */
void rl_fix_normal(const rl_geomview *g1, const rl_geomview *g2, const real pos[3], real normal[3]);

/* height field g1 against convex g2 by prism decomposition and MPR, as mjc_ConvexHField (collide_hfield.c) */
int rl_collide_hfield(RL_NARROW_ARGS);
/* support point of the triangular prism v₀..v₅ (bottom v₀..v₂, top v₃..v₅) in direction u */
void rl_prism_support(const real prism[6][3], const real u[3], real out[3]);
/* MPR of a prism (not inflated) against g2 inflated by margin/2: 1 with depth, unit dir (prism → g2) and the
   contact point, 0 when they do not intersect or the direction is undefined */
int rl_mpr_prism(const real prism[6][3], const rl_geomview *g2, real margin, int iterations, real tol, real *depth,
                 real dir[3], real pos[3]);

/* ---- helpers shared by the narrow-phase files (static inline: one definition, no link symbol) ---- */

/* MuJoCo's mjMINVAL, in both precisions so that degenerate-configuration branches are taken where MuJoCo
   takes them */
#define MJ_MINVAL ((real)1e-15)

/* mju_normalize3: v ← v·(1/‖v‖); ‖v‖ < mjMINVAL gives (1,0,0) */
static inline real mj_normalize3(real v[3]) {
  real n = rl_sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  if (n < MJ_MINVAL) {
    v[0] = 1;
    v[1] = 0;
    v[2] = 0;
  } else {
    real inv = 1 / n;
    v[0] *= inv;
    v[1] *= inv;
    v[2] *= inv;
  }
  return n;
}

/* 1 if every number of the view (pose, size, hull vertices) is finite */
static inline int view_finite(const rl_geomview *g) {
  for (int i = 0; i < 3; i++)
    if (!rl_isfinite(g->pos[i]) || !rl_isfinite(g->size[i])) return 0;
  for (int i = 0; i < 9; i++)
    if (!rl_isfinite(g->mat[i])) return 0;
  if (g->type == RL_GEOM_MESH) {
    if (!g->vert || g->nvert < 1) return 0;
    for (int i = 0; i < 3 * g->nvert; i++)
      if (!rl_isfinite(g->vert[i])) return 0;
  }
  return 1;
}

/* Hull vertex of mesh view g maximizing d·v (d in the geom frame), as MuJoCo 2.2.2's mjccd_support.
 * With a hull graph: hill climbing from hull vertex 0 (no warm start: 2.2.2 starts every call
 * there); a pass scans the neighbours of the pass's starting vertex in edge order and moves the best
 * to any neighbour strictly better than the best so far (the scan goes on over the same list); passes
 * repeat until one changes nothing.  Ties keep the vertex reached first.  On a convex hull a vertex
 * that is not a maximum has a strictly better neighbour, so the climb ends at a maximum.  Without a
 * graph: the first maximum in index order (dots must beat −1e10, as MuJoCo's).  Every loop is
 * bounded by nvert (each changing pass strictly raises the best dot).  −1 if there are no vertices. */
static inline int mesh_support_index(const rl_geomview *g, const real d[3]) {
  const real *vert = g->vert;
  int n = g->nvert, best = -1;
  if (!vert || n < 1) return -1;
  if (!g->graph) {
    real bestdot = (real)-1e10;
    for (int i = 0; i < n; i++) {
      const real *v = vert + 3 * i;
      real dot = d[0] * v[0] + d[1] * v[1] + d[2] * v[2];
      if (dot > bestdot) {
        bestdot = dot;
        best = i;
      }
    }
    return best;
  }
  const int *graph = g->graph;
  best = 0;
  real bestdot = d[0] * vert[0] + d[1] * vert[1] + d[2] * vert[2];
  for (int pass = 0; pass <= n; pass++) {
    const int *nb = graph + graph[best];
    int change = 0;
    for (int j = 0; j < n && nb[j] >= 0 && nb[j] < n; j++) {
      const real *v = vert + 3 * nb[j];
      real dot = d[0] * v[0] + d[1] * v[1] + d[2] * v[2];
      if (dot > bestdot) {
        bestdot = dot;
        best = nb[j];
        change = 1;
      }
    }
    if (!change) break;
  }
  return best;
}

#endif
