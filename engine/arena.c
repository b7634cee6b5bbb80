/* arena.c — the scratch arena of rl_data (see rl_arena.h): its size, the largest temporary of any stage,
 * and the stack discipline the stages take and release it by. */
#include "rl_engine.h"

/* Arena size: the largest temporary any stage needs (reals).  RK4 keeps 4 derivative
   copies of (qvel, qacc) plus the start state; the Euler damping solve keeps an nM copy; the local-frame
   recursions (bias forces, M⁻¹, the recursive Euler solve) take rl_local_arena. */
size_t rl_arena_reals(const rl_model *m) {
  size_t nv = (size_t)m->nv, nq = (size_t)m->nq;
  size_t rk4 = 2 * nq + 12 * nv + 64;
  size_t euler = 2 * (size_t)m->nM + 3 * nv + 64;
  size_t local = rl_local_arena(m) + nv + 64; /* rl_rne_local, rl_solve_m_local (qacc_smooth, Euler) */
  size_t n = rk4 > euler ? rk4 : euler;
  if (local > n) n = local;
  size_t mod = rl_collision_arena(m);
  if (rl_constraint_arena(m) > mod) mod = rl_constraint_arena(m);
  if (rl_solver_arena(m) > mod) mod = rl_solver_arena(m);
  if (mod > n) n = mod;
  if (rl_implicit_arena(m) > n) n = rl_implicit_arena(m);
  return n + rl_actuation_arena(m) + 6 * (size_t)m->nbody + 1024;
}

/* what the actuation and fluid stages take on top of a caller's temporaries (RK4 calls them from its
   stages): the moment rows of the non-scalar transmissions and their Jacobians, the fluid Jacobians, RK4's
   activation copies; 0 for a model without them */
size_t rl_actuation_arena(const rl_model *m) {
  size_t nv = (size_t)m->nv, rows = 0, n = 0;
  for (int u = 0; u < m->nu; u++) {
    int t = m->actuator_trntype[u], j = m->actuator_trnid[2 * u];
    rows += !((t == RL_TRN_JOINT || t == RL_TRN_JOINTINPARENT) &&
              (m->jnt_type[j] == RL_JNT_HINGE || m->jnt_type[j] == RL_JNT_SLIDE));
  }
  if (rows) n += (rows + 9) * nv + 64;
  if (m->opt.density > 0 || m->opt.viscosity > 0) n += 6 * nv + 64;
  if (m->na) n += 10 * (size_t)m->na + 64;
  return n;
}

real *rl_arena_take(rl_data *d, size_t n) {
  if (d->arena_top + n > d->arena_size) return NULL;
  real *p = d->arena + d->arena_top;
  d->arena_top += n;
  if (d->arena_top > d->arena_high) d->arena_high = d->arena_top;
  return p;
}

size_t rl_arena_mark(const rl_data *d) { return d->arena_top; }
void rl_arena_release(rl_data *d, size_t mark) { d->arena_top = mark; }
