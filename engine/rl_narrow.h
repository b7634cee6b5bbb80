/* rl_narrow.h — the narrow-phase pair functions behind rl_collide_function (engine-internal).
 * Analytic pairs (collide_prim.c, collide_box.c) follow MuJoCo 2.2.2's routines; every other convex
 * pair goes through MPR (collide_convex.c).  All have the rl_collide_fn signature (rl_collide.h). */
#ifndef RL_NARROW_H
#define RL_NARROW_H

#include "rl_collide.h"

#define rl_collide_plane_sphere RL_NAME(collide_plane_sphere)
#define rl_collide_plane_capsule RL_NAME(collide_plane_capsule)
#define rl_collide_plane_cylinder RL_NAME(collide_plane_cylinder)
#define rl_collide_plane_box RL_NAME(collide_plane_box)
#define rl_collide_plane_convex RL_NAME(collide_plane_convex)
#define rl_collide_sphere_sphere RL_NAME(collide_sphere_sphere)
#define rl_collide_sphere_capsule RL_NAME(collide_sphere_capsule)
#define rl_collide_sphere_box RL_NAME(collide_sphere_box)
#define rl_collide_capsule_capsule RL_NAME(collide_capsule_capsule)
#define rl_collide_capsule_box RL_NAME(collide_capsule_box)
#define rl_collide_box_box RL_NAME(collide_box_box)
#define rl_collide_convex RL_NAME(collide_convex)
#define rl_support RL_NAME(support)

#define RL_NARROW_ARGS const rl_geomview *g1, const rl_geomview *g2, real margin, int mode, \
                       int mpr_iterations, real mpr_tolerance, rl_contact *con

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

#endif
