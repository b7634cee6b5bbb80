/* collide_hfield.c — height field against a convex geom (sphere, capsule, ellipsoid, cylinder, box, mesh),
 * as MuJoCo 2.2.2's mjc_ConvexHField.
 *
 * The height field is a grid of nrow × ncol elevations over the rectangle [−x, x] × [−y, y] of its frame; each
 * grid cell is split along its diagonal into two triangles, and each triangle with the base z = −b below it is a
 * triangular prism, a convex solid.  The convex geom is tested against every prism under its box by MPR
 * (collide_convex.c), each intersecting prism giving one contact, up to RL_MAXCONPAIR (mjMAXCONPAIR = 50).
 * Everything happens in the height field's frame; contacts are turned back into the world at the end.
 *
 * MuJoCo 2.2.2's numbers are kept as they are, margin included: the prisms' tops are raised by the margin and
 * the convex geom is inflated by margin/2, and dist = −depth (not margin − depth as for other convex pairs), so
 * a contact inside the margin reports a negative distance.  Height-field pairs take this route in both
 * collision modes: the prisms already give one contact per triangle the geom meets, so no flat-contact
 * manifold is built on top. */
#include "rl_narrow.h"
#include "rl_math.h"

/* Shift the prism's vertex window by one grid point (addVert): bottom and top triangles move down one slot,
   the new point (x, y) enters last with top z and the base kept from before. */
static void prism_add_vertex(real prism[6][3], real x, real y, real z) {
  rl_v3_copy(prism[0], prism[1]);
  rl_v3_copy(prism[1], prism[2]);
  rl_v3_copy(prism[3], prism[4]);
  rl_v3_copy(prism[4], prism[5]);
  prism[2][0] = prism[5][0] = x;
  prism[2][1] = prism[5][1] = y;
  prism[5][2] = z;
}

/* g2 in the height field's frame: p = R₁ᵀ (p₂ − p₁), R = R₁ᵀ R₂ (sums in MuJoCo's order) */
static void relative_frame(const rl_geomview *h, const rl_geomview *g, real pos[3], real mat[9]) {
  real vec[3];
  rl_v3_sub(vec, g->pos, h->pos);
  rl_m3_tmulv(pos, h->mat, vec);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      mat[3 * i + j] = h->mat[i] * g->mat[j] + h->mat[3 + i] * g->mat[3 + j] + h->mat[6 + i] * g->mat[6 + j];
}

/* Bounding-sphere test in the height field's frame: the sphere of radius r + margin about p must reach the box
   [−x, x] × [−y, y] × [−b, z_top] (z_top = size₂, the highest elevation) on every axis. */
static int sphere_reaches_box(const real size[4], const real p[3], real r, real margin) {
  for (int i = 0; i < 2; i++)
    if (size[i] < p[i] - r - margin || -size[i] > p[i] + r + margin) return 0;
  return !(size[2] < p[2] - r - margin) && !(-size[3] > p[2] + r + margin);
}

int rl_collide_hfield(RL_NARROW_ARGS) {
  const rl_geomview *h = g1;
  if (!h->hdata || h->nrow < 2 || h->ncol < 2 || !view_finite(g1) || !view_finite(g2) || !rl_isfinite(margin) ||
      !rl_isfinite(mpr_tolerance))
    return 0;
  (void)mode; /* both modes: one contact per prism (see the file comment) */
  const real *size = h->hsize;
  int nrow = h->nrow, ncol = h->ncol;
  real pos[3], mat[9];
  relative_frame(h, g2, pos, mat);
  if (!sphere_reaches_box(size, pos, g2->rbound, margin)) return 0;

  /* the geom's box in the height field's frame from its support points along ±x, ±y, ±z */
  rl_geomview rel = *g2;
  rel.pos = pos;
  rel.mat = mat;
  real lo[3], hi[3], s[3];
  for (int k = 0; k < 3; k++) {
    real dir[3] = {0, 0, 0};
    dir[k] = 1;
    rl_support(&rel, dir, s);
    hi[k] = s[k];
    dir[k] = -1;
    rl_support(&rel, dir, s);
    lo[k] = s[k];
  }
  if (lo[0] - margin > size[0] || hi[0] + margin < -size[0] || lo[1] - margin > size[1] || hi[1] + margin < -size[1] ||
      lo[2] - margin > size[2] || hi[2] + margin < -size[3])
    return 0;

  /* the sub-grid under that box: columns c ∈ [cmin, cmax], rows r ∈ [rmin, rmax] */
  int cmin = (int)rl_floor((lo[0] + size[0]) / (2 * size[0]) * (ncol - 1));
  int cmax = (int)rl_ceil((hi[0] + size[0]) / (2 * size[0]) * (ncol - 1));
  int rmin = (int)rl_floor((lo[1] + size[1]) / (2 * size[1]) * (nrow - 1));
  int rmax = (int)rl_ceil((hi[1] + size[1]) / (2 * size[1]) * (nrow - 1));
  cmin = cmin > 0 ? cmin : 0;
  cmax = cmax < ncol - 1 ? cmax : ncol - 1;
  rmin = rmin > 0 ? rmin : 0;
  rmax = rmax < nrow - 1 ? rmax : nrow - 1;

  /* the prisms of rows r..r+1, column by column: grid points (c, r+1), (c, r) alternately enter the window,
     so every three consecutive points form one triangle of the cell diagonal split */
  real dx = (2 * size[0]) / (ncol - 1), dy = (2 * size[1]) / (nrow - 1), zmin = lo[2];
  static const int dr[2] = {1, 0};
  real prism[6][3] = {{0}};
  prism[0][2] = prism[1][2] = prism[2][2] = -size[3];
  int cnt = 0;
  for (int r = rmin; r < rmax && cnt < RL_MAXCONPAIR; r++) {
    int nvert = 0;
    for (int c = cmin; c <= cmax && cnt < RL_MAXCONPAIR; c++)
      for (int i = 0; i < 2 && cnt < RL_MAXCONPAIR; i++) {
        int row = r + dr[i];
        prism_add_vertex(prism, dx * c - size[0], dy * row - size[1], h->hdata[row * ncol + c] * size[2] + margin);
        if (++nvert <= 2) continue;
        if (prism[3][2] < zmin && prism[4][2] < zmin && prism[5][2] < zmin) continue; /* all below the geom */
        real depth, dir[3], p[3];
        if (!rl_mpr_prism((const real(*)[3])prism, &rel, margin, mpr_iterations, mpr_tolerance, &depth, dir, p))
          continue;
        rl_contact *k = con + cnt++;
        k->dist = -depth;
        rl_m3_mulv(k->frame, h->mat, dir);
        rl_m3_mulv(k->pos, h->mat, p);
        rl_v3_add(k->pos, k->pos, h->pos);
      }
  }
  /* MuJoCo's normal correction for a round geom, then the frame completed */
  int n = 0;
  for (int i = 0; i < cnt; i++) {
    rl_contact *k = con + i;
    rl_fix_normal(g1, g2, k->pos, k->frame);
    k->frame[3] = k->frame[4] = k->frame[5] = 0;
    rl_make_frame(k->frame);
    if (rl_isfinite(k->dist)) con[n++] = *k;
  }
  return n;
}
