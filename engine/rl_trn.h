/* rl_trn.h — MuJoCo 2.2.2's rules for the transmissions that act on the several dofs of a ball or free joint
 * and on contacts (adhesion), header-only so that the generalized-coordinate actuation (actuation.c) and the
 * AVBD step (also compiled by nvcc in engine/cuda/) share one source. */
#ifndef RL_TRN_H
#define RL_TRN_H
#include "rl_engine.h"
#include "rl_math.h"
#include "rl_so3.h"

/* Moment of a joint transmission on the dofs of a ball or free joint, and its length, for the joint's
 * quaternion q (normalized here) and the actuator's gear g[6]:
 *   ball (3 dofs)  g' = g[0:3] (joint) or q⁻¹·g[0:3] (jointinparent: g given in the parent frame);
 *                  moment g',  length Log(q)·g'
 *   free (6 dofs)  moment (g[0:3], g') with g' = g[3:6] or q⁻¹·g[3:6];  length 0
 * (the translational dofs of a free joint are world velocities already).  Fills mom[0..3) or [0..6). */
RL_HD real rl_trn_joint_moment(int free_joint, int inparent, const real *g, const real qin[4], real *mom) {
  real q[4], r[3];
  rl_q_copy(q, qin);
  rl_q_normalize(q);
  const real *gr = free_joint ? g + 3 : g;
  if (inparent) {
    real qi[4];
    rl_q_conj(qi, q);
    rl_q_rotate(r, qi, gr);
  } else rl_v3_copy(r, gr);
  if (free_joint) {
    rl_v3_copy(mom, g);
    rl_v3_copy(mom + 3, r);
    return 0;
  }
  real axis[3];
  rl_so3_log_quat(axis, q);
  rl_v3_copy(mom, r);
  return rl_v3_dot(axis, r);
}

/* 1 if body b or one of its ancestors has a dof (a point on it can move) */
RL_HD int rl_trn_body_moves(const rl_model *m, int b) {
  for (; b > 0; b = m->body_parentid[b])
    if (m->body_dofnum[b] > 0) return 1;
  return 0;
}

/* 1 if contact con counts toward the adhesion (body transmission) of body b: one of its geoms is on b, it is
   active or in the margin gap (exclude 0 or 1) and one of its two bodies can move (MuJoCo drops a contact
   without dofs before the transmission) */
RL_HD int rl_trn_adhesion_contact(const rl_model *m, const rl_contact *con, int b) {
  int b1 = m->geom_bodyid[con->geom1], b2 = m->geom_bodyid[con->geom2];
  return (b1 == b || b2 == b) && con->exclude <= 1 && (rl_trn_body_moves(m, b1) || rl_trn_body_moves(m, b2));
}

#endif
