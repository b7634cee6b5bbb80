/* oracle.h — an independent signed-distance oracle for pairs of convex geoms (double precision, GSL).
 *
 * Not MPR, not GJK, and no engine code: the signed distance of convex A and B is the best separating
 * gap over unit directions u,
 *     sd(A, B) = max_{‖u‖=1} g(u),   g(u) = −h_B(−u) − h_A(u),
 * with h the support function (h_X(u) = max_{x∈X} u·x).  sd > 0 is the distance, sd < 0 minus the
 * penetration depth (the shortest translation that separates them), and the maximizer u is the
 * contact normal from A to B.  g is maximized by Nelder–Mead (gsl_multimin nmsimplex2) in the tangent
 * chart u = (u0 + a e1 + b e2)/‖·‖ around many starting directions u0 (the 26 cube directions, the
 * centre line and its opposite), then polished by restarts with shrinking simplex steps around the
 * best u.  A plane (as A) is handled analytically: sd = −h_B(−n) − n·p0.  Support functions are the
 * oracle's own.
 *
 * Compiled per precision into the harness libraries, but every computation is in double; the names
 * carry the precision only so that both harness libraries can be linked together. */
#ifndef RL_ORACLE_H
#define RL_ORACLE_H

#include "harness.h"
#include "rl_prec.h"

#define rl_oracle_shape   RL_NAME(oracle_shape)
#define rl_oracle_support RL_NAME(oracle_support)
#define rl_oracle_sd      RL_NAME(oracle_sd)

/* a convex shape in world coordinates (types as mjtGeom: 0 plane, 2 sphere … 7 mesh) */
typedef struct rl_oracle_shape {
  int type;
  double size[3];     /* as geom_size */
  double pos[3];      /* world position */
  double mat[9];      /* world orientation, row-major (columns = local axes) */
  const double *vert; /* mesh: vertices in the shape frame (nvert × 3) */
  int nvert;
} rl_oracle_shape;

/* h(u) = max_{x∈s} u·x for any u (not necessarily unit); the maximizing point in x (may be NULL).
   Planes have no bounded support: returns +inf. */
double rl_oracle_support(const rl_oracle_shape *s, const double u[3], double x[3]);

/* Signed distance of a and b (a may be a plane; b may not) and the unit normal from a to b.
   Returns NAN for unsupported input (b a plane, unknown type, non-finite numbers). */
double rl_oracle_sd(const rl_oracle_shape *a, const rl_oracle_shape *b, double normal[3]);

#endif
