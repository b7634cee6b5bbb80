/* float_floor.h — float floors of verify's f32 rows: the independent reference (MuJoCo 2.2.2, LAPACK) run on its
 * own quantities held in float, so that the error which holding them in float costs is measured, not assumed.
 * Precision-independent (compiled once): "float" here is always IEEE single, the precision of rigidlab's f32.
 *
 *   rl_ff_solve      x = fl(A)⁻¹·fl(b) by LAPACKE_dposv in double, then fl(x): a matrix and a right-hand side
 *                    held in float and solved exactly (the floor of M⁻¹·qfrc_smooth and of Euler's
 *                    (M + h·diag(b))⁻¹·qfrc_smooth);
 *   rl_ff_forward    MuJoCo's smooth pipeline with float storage: its forward kinematics with every body frame
 *                    rounded to float as it is stored (rl_ff_kinematics), then MuJoCo's own mj_comPos, mj_tendon,
 *                    mj_transmission, mj_fwdVelocity and mj_fwdActuation in double with their outputs rounded to
 *                    float between the stages; dst's qfrc_smooth = qfrc_passive − qfrc_bias + qfrc_actuator +
 *                    qfrc_applied.  Against MuJoCo's own values this is the floor of an engine that composes body
 *                    frames down the tree in float: the rounding of each stored frame accumulates along a chain
 *                    (MuJoCo's flag sample, 20 bodies deep: 4.3e-7 m at 1 m from the origin), and quantities formed
 *                    from differences of world positions (a 5 cm tendon segment, its spring force) read it
 *                    amplified. */
#ifndef RL_FLOAT_FLOOR_H
#define RL_FLOAT_FLOOR_H

#include <mujoco/mujoco.h>

/* x ← fl(fl(A)⁻¹·fl(b)) for a symmetric positive definite A (n × n, row-major, lower triangle read); every x_i NaN
   when fl(A) is not positive definite or memory is short */
void rl_ff_solve(const double *A, const double *b, int n, double *x);

/* MuJoCo's forward kinematics of d's qpos (and mocap poses) with every stored body frame, joint anchor and axis,
   inertial, site and geom frame rounded to float as it is stored (each body's frame composed in double from its
   parent's rounded one) */
void rl_ff_kinematics(const mjModel *m, mjData *d);

/* dst ← the state of src (qpos, qvel, act, ctrl, mocap poses, applied forces) and the float-storage pipeline above */
void rl_ff_forward(const mjModel *m, const mjData *src, mjData *dst);

#endif
