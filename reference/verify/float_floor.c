/* float_floor.c — see float_floor.h */
#include "float_floor.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* x_i ← fl(x_i), i < n */
static void round_float(double *x, long n) {
  for (long i = 0; i < n; i++) x[i] = (double)(float)x[i];
}

void rl_ff_solve(const double *A, const double *b, int n, double *x) {
  if (n < 1) return;
  double *F = malloc(sizeof *F * (size_t)n * (size_t)n);
  int ok = F != NULL;
  if (ok) {
    memcpy(F, A, sizeof *F * (size_t)n * (size_t)n);
    memcpy(x, b, sizeof *x * (size_t)n);
    round_float(F, (long)n * n);
    round_float(x, n);
    ok = LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', n, 1, F, n, x, 1) == 0;
  }
  if (ok) round_float(x, n);
  else
    for (int i = 0; i < n; i++) x[i] = NAN;
  free(F);
}

/* A joint's rotation of the body frame under construction (MuJoCo's mj_kinematics): axis and anchor from the
   joint's local axis and position, then a slide translates along the axis by q − q0; a hinge (axis angle q − q0)
   or ball (unit quaternion) rotates the frame about the anchor: xquat ← xquat·q_joint, xpos ← anchor −
   R(xquat)·p_joint.  Anchor and axis are stored rounded. */
static void joint_motion(const mjModel *m, mjData *d, int j, double xpos[3], double xquat[4]) {
  int q = m->jnt_qposadr[j];
  double *axis = d->xaxis + 3 * j, *anchor = d->xanchor + 3 * j, qj[4], r[3];
  mju_rotVecQuat(axis, m->jnt_axis + 3 * j, xquat);
  mju_rotVecQuat(anchor, m->jnt_pos + 3 * j, xquat);
  mju_addTo3(anchor, xpos);
  round_float(axis, 3);
  round_float(anchor, 3);
  if (m->jnt_type[j] == mjJNT_SLIDE) {
    mju_addToScl3(xpos, axis, d->qpos[q] - m->qpos0[q]);
    return;
  }
  if (m->jnt_type[j] == mjJNT_BALL) {
    mju_copy4(qj, d->qpos + q);
    mju_normalize4(qj);
  } else {
    mju_axisAngle2Quat(qj, m->jnt_axis + 3 * j, d->qpos[q] - m->qpos0[q]);
  }
  double t[4];
  mju_mulQuat(t, xquat, qj);
  mju_copy4(xquat, t);
  mju_rotVecQuat(r, m->jnt_pos + 3 * j, xquat);
  mju_sub3(xpos, anchor, r);
}

void rl_ff_kinematics(const mjModel *m, mjData *d) {
  mju_zero3(d->xpos);
  mju_unit4(d->xquat);
  mju_zero(d->xmat, 9);
  d->xmat[0] = d->xmat[4] = d->xmat[8] = 1;
  for (int i = 1; i < m->nbody; i++) {
    int pid = m->body_parentid[i], ja = m->body_jntadr[i], jn = m->body_jntnum[i], mocap = m->body_mocapid[i];
    double xpos[3], xquat[4];
    if (mocap >= 0) { /* placed by its mocap pose */
      mju_copy3(xpos, d->mocap_pos + 3 * mocap);
      mju_copy4(xquat, d->mocap_quat + 4 * mocap);
    } else if (jn == 1 && m->jnt_type[ja] == mjJNT_FREE) { /* the state is the frame */
      int q = m->jnt_qposadr[ja];
      mju_copy3(xpos, d->qpos + q);
      mju_copy4(xquat, d->qpos + q + 3);
      mju_copy3(d->xanchor + 3 * ja, xpos);
      mju_copy3(d->xaxis + 3 * ja, m->jnt_axis + 3 * ja);
    } else { /* the parent's rounded frame, the body's offset, then its joints */
      mju_rotVecMat(xpos, m->body_pos + 3 * i, d->xmat + 9 * pid);
      mju_addTo3(xpos, d->xpos + 3 * pid);
      mju_mulQuat(xquat, d->xquat + 4 * pid, m->body_quat + 4 * i);
      for (int j = ja; j < ja + jn; j++) joint_motion(m, d, j, xpos, xquat);
    }
    mju_normalize4(xquat);
    round_float(xpos, 3);
    round_float(xquat, 4);
    mju_copy3(d->xpos + 3 * i, xpos);
    mju_copy4(d->xquat + 4 * i, xquat);
    mju_quat2Mat(d->xmat + 9 * i, xquat);
    round_float(d->xmat + 9 * i, 9);
  }
  for (int i = 1; i < m->nbody; i++)
    mj_local2Global(d, d->xipos + 3 * i, d->ximat + 9 * i, m->body_ipos + 3 * i, m->body_iquat + 4 * i, i, 0);
  for (int i = 0; i < m->ngeom; i++)
    mj_local2Global(d, d->geom_xpos + 3 * i, d->geom_xmat + 9 * i, m->geom_pos + 3 * i, m->geom_quat + 4 * i,
                    m->geom_bodyid[i], 0);
  for (int i = 0; i < m->nsite; i++)
    mj_local2Global(d, d->site_xpos + 3 * i, d->site_xmat + 9 * i, m->site_pos + 3 * i, m->site_quat + 4 * i,
                    m->site_bodyid[i], 0);
  round_float(d->xipos, 3L * m->nbody);
  round_float(d->ximat, 9L * m->nbody);
  round_float(d->geom_xpos, 3L * m->ngeom);
  round_float(d->geom_xmat, 9L * m->ngeom);
  round_float(d->site_xpos, 3L * m->nsite);
  round_float(d->site_xmat, 9L * m->nsite);
}

void rl_ff_forward(const mjModel *m, const mjData *src, mjData *dst) {
  int nv = m->nv;
  mju_copy(dst->qpos, src->qpos, m->nq);
  mju_copy(dst->qvel, src->qvel, nv);
  mju_copy(dst->act, src->act, m->na);
  mju_copy(dst->ctrl, src->ctrl, m->nu);
  mju_copy(dst->mocap_pos, src->mocap_pos, 3 * m->nmocap);
  mju_copy(dst->mocap_quat, src->mocap_quat, 4 * m->nmocap);
  mju_copy(dst->qfrc_applied, src->qfrc_applied, nv);
  mju_copy(dst->xfrc_applied, src->xfrc_applied, 6 * m->nbody);
  rl_ff_kinematics(m, dst);
  mj_comPos(m, dst);
  round_float(dst->subtree_com, 3L * m->nbody);
  round_float(dst->cinert, 10L * m->nbody);
  round_float(dst->cdof, 6L * nv);
  mj_tendon(m, dst);
  round_float(dst->ten_length, m->ntendon);
  round_float(dst->ten_J, (long)m->ntendon * nv);
  mj_transmission(m, dst);
  round_float(dst->actuator_length, m->nu);
  round_float(dst->actuator_moment, (long)m->nu * nv);
  mj_fwdVelocity(m, dst);
  round_float(dst->qfrc_passive, nv);
  round_float(dst->qfrc_bias, nv);
  mj_fwdActuation(m, dst);
  round_float(dst->qfrc_actuator, nv);
  for (int i = 0; i < nv; i++)
    dst->qfrc_smooth[i] = (double)(float)(dst->qfrc_passive[i] - dst->qfrc_bias[i] + dst->qfrc_actuator[i] +
                                          dst->qfrc_applied[i]);
}
