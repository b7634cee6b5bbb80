/* rl_constraint.h — constraint rows of the soft-constraint model: equality, frictionloss,
 * limits, contacts (pyramidal / elliptic), impedance and reference acceleration, as MuJoCo 2.2.2.
 *
 * Row order (MuJoCo's): equality rows (connect 3, weld 6, joint coupling 1; only d->eq_active ones),
 * then dof frictionloss rows, then joint limit rows (hinge/slide lower and upper, ball one row), then
 * contact rows (frictionless 1, pyramidal 2(condim−1), elliptic condim).  d->ne counts equality rows,
 * d->nf frictionloss rows.  The Jacobian is CSR with ascending columns taken from the dof tree: a row
 * touches only the dofs on the two bodies' paths to the world.
 *
 * Differences from MuJoCo kept on purpose:
 *  - capacity: a block (one equality, one contact, ...) that would exceed m->nefcmax rows or m->njmax
 *    Jacobian entries is dropped whole and counted in d->warning[RL_WARN_CONTACTFULL]; later blocks
 *    that fit are still added (MuJoCo stops the stage at the first block that does not fit);
 *  - a non-contact block whose Jacobian is exactly zero is skipped (MuJoCo's dense-Jacobian rule). */
#ifndef RL_CONSTRAINT_H
#define RL_CONSTRAINT_H

#include "rl_data.h"

/* Build every active row into d->efc_* (needs rl_fwd_position, rl_fwd_velocity and d->contact[0..ncon)),
   then diagApprox, KBIP, R, D (rl_make_impedance) and efc_vel, efc_aref (rl_reference_constraint).
   Sets d->ne, d->nf, d->nefc, d->nnzJ, contact efc_address (−1: no rows) and contact mu (the
   regularized cone's friction, friction[0]·sqrt(R_1/R_0), as MuJoCo). */
void rl_make_constraint(const rl_model *m, rl_data *d);

/* efc_R, efc_D, efc_KBIP and the final efc_diagApprox of rows already instantiated (with their
   first-pass diagApprox), as MuJoCo's mj_makeImpedance. */
void rl_make_impedance(const rl_model *m, rl_data *d);

/* efc_vel = J·qvel and efc_aref = −B·vel − K·imp·(pos − margin) (MuJoCo's mj_referenceConstraint). */
void rl_reference_constraint(const rl_model *m, rl_data *d);

/* Impedance d(x) of solimp = (dmin, dmax, width, midpoint, power) at x = pos − margin, and its
   derivative d'(x) (the power sigmoid of MuJoCo's getimpedance; solimp as the rows use it, i.e. after
   MuJoCo's clamping: dmin, dmax, midpoint in [0.0001, 0.9999], width ≥ 0, power ≥ 1). */
void rl_solimp_impedance(const real solimp[5], real pos, real margin, real *imp, real *impP);

/* Stiffness K and damping B of solref = (timeconst, dampratio) or direct (−stiffness, −damping) for
   impedance upper bound dmax (friction rows: K = 0).  solref as the rows use it, i.e. after MuJoCo's
   rules: a mixed-sign solref becomes (0.02, 1), timeconst ≥ 2·dt unless RL_DSBL_REFSAFE. */
void rl_solref_kb(const real solref[2], real dmax, int friction, real *K, real *B);

/* arena reals rl_make_constraint may take */
size_t rl_constraint_arena(const rl_model *m);

#endif
