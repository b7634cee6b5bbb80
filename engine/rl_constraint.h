/* rl_constraint.h — constraint rows of the soft-constraint model (issue 4): equality, frictionloss,
 * limits, contacts (pyramidal / elliptic), impedance and reference acceleration, as MuJoCo 2.2.2. */
#ifndef RL_CONSTRAINT_H
#define RL_CONSTRAINT_H

#include "rl_data.h"

/* Build every active row into d->efc_* (needs position and velocity stages and rl_collision). */
void rl_make_constraint(const rl_model *m, rl_data *d);

/* arena reals rl_make_constraint may take */
size_t rl_constraint_arena(const rl_model *m);

#endif
