/* collide.c — the collision stage (see rl_collide.h): geom views, MuJoCo 2.2.2's pair filters and
 * contact-parameter mixing, a sweep-and-prune broad phase, and the dispatch to the narrow phase.
 *
 * Broad phase: sweep and prune over world-axis-aligned boxes of the non-plane geoms (inflated by
 * each geom's margin), along the world axis where the box centres spread most.  Chosen over a BVH
 * because scenes here are a few thousand geoms that all move every step: sorting the intervals
 * costs O(n log n) with no tree to refit, and the sorted order makes the pair list deterministic.
 * Planes (unbounded) are tested against every other geom with the plane-distance filter.
 * Geoms that can never collide (geom_collide = 0, classified at build: contype/conaffinity admit no
 * partner, e.g. visual meshes) take no part at all: no box, no sort entry, no plane test, no pose check.
 * Each surviving pair goes through the same filters as MuJoCo 2.2.2's mj_collision and then the
 * narrow-phase function for its types (lower type first, as MuJoCo calls them).
 * This file: geom views, filters, parameters; collide_dispatch.c: the table and the broad phase. */
#include "rl_engine.h"
#include "rl_math.h"
#include "rl_narrow.h"

void rl_geom_view(const rl_model *m, const rl_data *d, int g, rl_geomview *v) {
  v->type = m->geom_type[g];
  for (int k = 0; k < 3; k++) v->size[k] = m->geom_size[3 * g + k];
  v->pos = d->geom_xpos + 3 * g;
  v->mat = d->geom_xmat + 9 * g;
  v->rbound = m->geom_rbound[g];
  v->vert = NULL;
  v->nvert = 0;
  v->graph = NULL;
  v->hdata = NULL;
  v->nrow = v->ncol = 0;
  for (int k = 0; k < 4; k++) v->hsize[k] = 0;
  if (v->type == RL_GEOM_HFIELD && m->geom_dataid[g] >= 0) {
    int k = m->geom_dataid[g];
    v->hdata = m->hfield_data + m->hfield_adr[k];
    v->nrow = m->hfield_nrow[k];
    v->ncol = m->hfield_ncol[k];
    for (int j = 0; j < 4; j++) v->hsize[j] = m->hfield_size[4 * k + j];
  }
  if (v->type == RL_GEOM_MESH && m->geom_dataid[g] >= 0) {
    int k = m->geom_dataid[g];
    v->vert = m->mesh_vert + 3 * m->mesh_vertadr[k];
    v->nvert = m->mesh_vertnum[k];
    if (m->mesh_graphadr[k] >= 0) v->graph = m->mesh_graph + m->mesh_graphadr[k];
  }
}

/* ---------------------------------------------------------------- filters and parameters */

/* MuJoCo 2.2.2's filters: bitmask (contype₁ & conaffinity₂) | (contype₂ & conaffinity₁) ≠ 0; not the same
   weld body (this also drops static–static pairs: both welded to the world); parent–child: two
   non-world weld bodies where one is the weld body of the other's parent (unless filterparent is
   disabled); and the <exclude> list, whose signatures MuJoCo's compiler stores with body ids counted from 1:
   ((min body + 1) << 16) + (max body + 1). */
int rl_geom_pair_allowed(const rl_model *m, int g1, int g2) {
  if (!rl_pair_bitmask(m, g1, g2)) return 0;
  int b1 = m->geom_bodyid[g1], b2 = m->geom_bodyid[g2];
  int w1 = m->body_weldid[b1], w2 = m->body_weldid[b2];
  if (w1 == w2) return 0;
  if (!(m->opt.disableflags & RL_DSBL_FILTERPARENT) && w1 != 0 && w2 != 0) {
    int p1 = m->body_weldid[m->body_parentid[w1]], p2 = m->body_weldid[m->body_parentid[w2]];
    if (p1 == w2 || p2 == w1) return 0;
  }
  return !rl_pair_excluded(m, b1, b2);
}

/* solmix weight of geom 1: mix = s₁/(s₁+s₂); 0.5 when both are below the floor, 0 or 1 when one is */
static real solmix_weight(real s1, real s2) {
  const real floor = (real)1e-15;
  if (s1 < floor && s2 < floor) return (real)0.5;
  if (s1 < floor) return 0;
  if (s2 < floor) return 1;
  return s1 / (s1 + s2);
}

real rl_contact_margin(const rl_model *m, real model_margin) {
  return (m->opt.enableflags & RL_ENBL_OVERRIDE) ? m->opt.o_margin : model_margin;
}

void rl_contact_override(const rl_model *m, rl_contact *con) {
  if (!(m->opt.enableflags & RL_ENBL_OVERRIDE)) return;
  for (int k = 0; k < RL_NREF; k++) con->solref[k] = m->opt.o_solref[k];
  for (int k = 0; k < RL_NIMP; k++) con->solimp[k] = m->opt.o_solimp[k];
}

/* MuJoCo 2.2.2's mixing (checked against the library, see tests): a higher-priority geom imposes its
   condim, friction, solref and solimp; equal priorities take condim = max, friction per component max,
   solref = mix·solref₁ + (1−mix)·solref₂ (both standard) or the per-component min (either direct,
   i.e. negative), solimp = mix·solimp₁ + (1−mix)·solimp₂.  margin and gap are the max of the two; under the
   override flag margin, solref and solimp are o_margin, o_solref, o_solimp;
   friction[5] = (slide, slide, spin, roll, roll).  Needs con->dist: a contact in the gap
   (dist ≥ margin − gap) is kept with exclude = 1 and makes no constraint rows. */
void rl_contact_params(const rl_model *m, int g1, int g2, rl_contact *con) {
  real f[3];
  con->dim = rl_pair_condim_friction(m, g1, g2, f);
  int p1 = m->geom_priority[g1], p2 = m->geom_priority[g2];
  if (p1 != p2) {
    int g = p1 > p2 ? g1 : g2;
    for (int k = 0; k < RL_NREF; k++) con->solref[k] = m->geom_solref[RL_NREF * g + k];
    for (int k = 0; k < RL_NIMP; k++) con->solimp[k] = m->geom_solimp[RL_NIMP * g + k];
  } else {
    real mix = solmix_weight(m->geom_solmix[g1], m->geom_solmix[g2]);
    const real *r1 = m->geom_solref + RL_NREF * g1, *r2 = m->geom_solref + RL_NREF * g2;
    for (int k = 0; k < RL_NREF; k++)
      con->solref[k] = (r1[0] > 0 && r2[0] > 0) ? mix * r1[k] + (1 - mix) * r2[k] : rl_fmin(r1[k], r2[k]);
    const real *i1 = m->geom_solimp + RL_NIMP * g1, *i2 = m->geom_solimp + RL_NIMP * g2;
    for (int k = 0; k < RL_NIMP; k++) con->solimp[k] = mix * i1[k] + (1 - mix) * i2[k];
  }
  con->friction[0] = con->friction[1] = f[0];
  con->friction[2] = f[1];
  con->friction[3] = con->friction[4] = f[2];
  con->mu = f[0];
  rl_contact_override(m, con);
  real margin = rl_contact_margin(m, rl_fmax(m->geom_margin[g1], m->geom_margin[g2]));
  real gap = rl_fmax(m->geom_gap[g1], m->geom_gap[g2]);
  con->includemargin = margin - gap;
  con->geom1 = g1;
  con->geom2 = g2;
  con->exclude = con->dist >= con->includemargin; /* in the gap: reported, makes no rows (as mj_setContact) */
  con->efc_address = -1;
}

/* ---------------------------------------------------------------- broad phase */

size_t rl_collision_arena(const rl_model *m) {
  /* per geom: 3 centre + 3 half-extent reals, a sort entry and its merge buffer (a real and an int: ≤ 2 reals
     each), a bad-pose byte; per body: MuJoCo's body box (6 reals) and its pairs-with-all flag, used under the
     override flag (reserved always, since the flag can be set after the data is made) */
  size_t per = 6 + 2 + 2 + 1;
  return per * (size_t)m->ngeom + 7 * (size_t)m->nbody + 64;
}
