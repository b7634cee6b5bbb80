/* options_prec.c — the rl_option half of the option table (options.h), compiled per precision:
 * defaults, stores and the copy of MuJoCo's options, each generated from RL_OPTION_TABLE. */
#include <stddef.h>
#include <string.h>
#include "rl_import.h"

/* ENUM rows store the index of the name and FLAGS rows bit k for the k-th name: the table's name order is
   the engine's enum order, and MuJoCo's where the option is MuJoCo's */
_Static_assert((int)RL_INT_EULER == (int)mjINT_EULER && (int)RL_INT_RK4 == (int)mjINT_RK4 &&
                   (int)RL_INT_IMPLICIT == (int)mjINT_IMPLICIT,
               "integrator: euler, rk4, implicit");
_Static_assert((int)RL_CONE_PYRAMIDAL == (int)mjCONE_PYRAMIDAL && (int)RL_CONE_ELLIPTIC == (int)mjCONE_ELLIPTIC,
               "cone: pyramidal, elliptic");
_Static_assert((int)RL_SOLVER_PGS == (int)mjSOL_PGS && (int)RL_SOLVER_CG == (int)mjSOL_CG &&
                   (int)RL_SOLVER_NEWTON == (int)mjSOL_NEWTON,
               "solver: pgs, cg, newton");
_Static_assert((int)RL_DSBL_CONSTRAINT == (int)mjDSBL_CONSTRAINT && (int)RL_DSBL_GRAVITY == (int)mjDSBL_GRAVITY &&
                   (int)RL_DSBL_REFSAFE == (int)mjDSBL_REFSAFE,
               "disable: MuJoCo's bit order");
_Static_assert(RL_COLL_MANIFOLD == 0 && RL_COLL_MUJOCO == 1, "collision: manifold, mujoco");
_Static_assert((int)RL_PAIRS_ALL == (int)mjCOL_ALL && (int)RL_PAIRS_PREDEFINED == (int)mjCOL_PAIR &&
                   (int)RL_PAIRS_DYNAMIC == (int)mjCOL_DYNAMIC,
               "pair_source: MuJoCo's <option collision> values");
_Static_assert(RL_RES_AUTO == 0 && RL_RES_CONVEX == 1 && RL_RES_SIGNORINI == 2,
               "contact_resolution: auto, convex, signorini");
_Static_assert(RL_FACTOR_AUTO == 0 && RL_FACTOR_DENSE == 1 && RL_FACTOR_SKYLINE == 2 && RL_FACTOR_ABA == 3 &&
                   RL_FACTOR_SPARSE == 4 && RL_FACTOR_TREE == 5,
               "newton_factor: auto, dense, skyline, aba, sparse, tree");

/* offsetof(rl_option, FIELD) of every row, in table order */
#define RL_X_OFFSET(key, type, owner, field, range, values, def, doc) offsetof(rl_option, field),
static const size_t rl_offset[] = {RL_OPTION_TABLE(RL_X_OFFSET)};
#undef RL_X_OFFSET

/* store value x (REAL, VEC3: x[0..]; else n) of a row of type t at field f of an rl_option */
static void store(char *f, rl_opt_type t, const double *x, int n) {
  switch (t) {
  case RL_OPT_REAL: *(real *)(void *)f = (real)x[0]; break;
  case RL_OPT_VEC3:
    for (int k = 0; k < 3; k++) ((real *)(void *)f)[k] = (real)x[k];
    break;
  default: *(int *)(void *)f = n; break;
  }
}

void rl_option_default(rl_option *o) {
  memset(o, 0, sizeof *o);
  for (int i = 0; i < rl_opt_count; i++) {
    const rl_opt_row *r = &rl_opt_table[i];
    double x[3] = {r->def, r->def, r->def};
    if (r->owner == RL_OPT_RL) store((char *)o + rl_offset[i], r->type, x, (int)r->def);
  }
}

void rl_option_set(rl_option *o, const rl_opt_value *v) {
  const rl_opt_row *r = &rl_opt_table[v->row];
  if (r->owner == RL_OPT_RL) store((char *)o + rl_offset[v->row], r->type, v->x, v->n);
}

int rl_option_apply(mjModel *mjm, rl_option *o, const char *kv, char *err, int errlen) {
  rl_opt_value v;
  if (rl_opt_parse(kv, &v, err, errlen)) return -1;
  rl_opt_set_mj(&mjm->opt, &v);
  rl_option_set(o, &v);
  return 0;
}

void rl_option_from_mj(rl_option *o, const mjOption *mo) {
  for (int i = 0; i < rl_opt_count; i++) {
    const rl_opt_row *r = &rl_opt_table[i];
    if (r->owner != RL_OPT_MJ) continue;
    const char *f = (const char *)mo + r->mj_offset;
    int n = r->type == RL_OPT_REAL || r->type == RL_OPT_VEC3 ? 0 : *(const int *)(const void *)f;
    store((char *)o + rl_offset[i], r->type, (const mjtNum *)(const void *)f, n);
  }
  o->o_margin = (real)mo->o_margin;
  for (int k = 0; k < 2; k++) o->o_solref[k] = (real)mo->o_solref[k];
  for (int k = 0; k < 5; k++) o->o_solimp[k] = (real)mo->o_solimp[k];
  o->pair_source = mo->collision;
}
