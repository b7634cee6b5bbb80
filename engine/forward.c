/* forward.c — the whole pipeline with constraints (see rl_engine.h). */
#include <string.h>
#include "rl_engine.h"

/* q̈ = argmin ½‖q̈ − q̈_smooth‖²_M + s(J q̈ − a_ref): every stage in pipeline order, the solver warm
   started from the previous step's q̈ (qacc_warmstart). */
void rl_forward(const rl_model *m, rl_data *d) {
  rl_fwd_position(m, d);
  rl_collision(m, d);
  rl_fwd_velocity(m, d);
  rl_actuation(m, d);
  rl_smooth_acc(m, d);
  rl_make_constraint(m, d);
  memcpy(d->qacc, d->qacc_warmstart, sizeof(real) * (size_t)m->nv);
  if (d->nefc == 0) {
    memcpy(d->qacc, d->qacc_smooth, sizeof(real) * (size_t)m->nv);
    memset(d->qfrc_constraint, 0, sizeof(real) * (size_t)m->nv);
    d->solver_iter = 0;
    d->solver_converged = 1;
    return;
  }
  rl_constraint_solve(m, d);
}

void rl_step(const rl_model *m, rl_data *d) {
  rl_check_state(m, d);
  rl_forward(m, d);
  if (m->opt.integrator == RL_INT_RK4)
    rl_rk4_with(m, d, rl_forward);
  else
    rl_euler(m, d);
  memcpy(d->qacc_warmstart, d->qacc, sizeof(real) * (size_t)m->nv);
}
