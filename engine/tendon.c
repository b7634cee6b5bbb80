/* tendon.c — tendons as MuJoCo 2.2.2 defines them: lengths, Jacobians, velocities, paths and passive forces.
 *
 * A fixed tendon is a linear combination of scalar joints, L = Σ_k c_k·q_k, J = Σ_k c_k·e_dof(k).
 * A spatial tendon is a path through sites; between two sites the path may wrap around a sphere or an
 * (infinite) cylinder, touching it along a great circle / helix between two tangent points, and a pulley
 * element starts a new branch whose length counts 1/divisor.  With path points p_0 … p_n (sites and tangent
 * points) on bodies b_0 … b_n:
 *   L = Σ_branches (1/divisor)·(Σ_k ‖p_{k+1} − p_k‖ + arc lengths),
 *   J = Σ_branches (1/divisor)·Σ_{k: b_k ≠ b_{k+1}} u_kᵀ·(J_p(p_{k+1}, b_{k+1}) − J_p(p_k, b_k)),
 *   u_k = (p_{k+1} − p_k)/‖p_{k+1} − p_k‖,
 * the tangent points moving with the wrap geom's body (the arc's own length depends on the geometry only
 * through the tangent points, whose sliding along the surface does not change L to first order).
 * The Jacobian is dense, ntendon rows of nv, as MuJoCo's when its Jacobians are dense. */
#include <string.h>
#include "rl_engine.h"
#include "rl_math.h"
#include "rl_wrap.h"

/* ---------------------------------------------------------------- lengths and Jacobians */

/* J_row += (1/divisor)·uᵀ·(J_p(p1, b1) − J_p(p0, b0)), u = (p1 − p0)/‖p1 − p0‖ (jac: 6·nv scratch) */
static void add_segment_jac(const rl_model *m, const rl_data *d, real *Jrow, const real p0[3], int b0, const real p1[3],
                            int b1, real divisor, real *jac) {
  int nv = m->nv;
  real u[3], *j0 = jac, *j1 = jac + 3 * nv;
  rl_v3_sub(u, p1, p0);
  rl_wrap_normalize(u, 3);
  rl_jac_point(m, d, j0, NULL, p0, b0);
  rl_jac_point(m, d, j1, NULL, p1, b1);
  real s = 1 / divisor;
  for (int i = 0; i < nv; i++) {
    real t = (j1[i] - j0[i]) * u[0];
    t += (j1[nv + i] - j0[nv + i]) * u[1];
    t += (j1[2 * nv + i] - j0[2 * nv + i]) * u[2];
    Jrow[i] += t * s;
  }
}

/* one path point into the tendon's list: position (NULL: the origin, a pulley) and its tag */
static void push_point(rl_data *d, int *count, const real *x, int obj) {
  if (x) rl_v3_copy(d->wrap_xpos + 3 * *count, x);
  else rl_v3_zero(d->wrap_xpos + 3 * *count);
  d->wrap_obj[*count] = obj;
  (*count)++;
}

/* fixed tendon k: L = Σ c·q, J(dof) = c (an entry per joint, a repeated joint's last coefficient) */
static void fixed_tendon(const rl_model *m, rl_data *d, int k) {
  int adr = m->tendon_adr[k];
  real *J = d->ten_J + (size_t)k * m->nv;
  for (int j = adr; j < adr + m->tendon_num[k]; j++) {
    int jnt = m->wrap_objid[j];
    d->ten_length[k] += m->wrap_prm[j] * d->qpos[m->jnt_qposadr[jnt]];
    J[m->jnt_dofadr[jnt]] = m->wrap_prm[j];
  }
}

/* spatial tendon k: walk the path site → [geom →] site …, a pulley setting the divisor of what follows
   (see the file comment); points and tags into wrap_xpos / wrap_obj from *count on */
static void spatial_tendon(const rl_model *m, rl_data *d, int k, int *count, real *jac) {
  int adr = m->tendon_adr[k], num = m->tendon_num[k];
  real divisor = 1, *J = d->ten_J + (size_t)k * m->nv;
  const int *type = m->wrap_type + adr, *id = m->wrap_objid + adr;
  const real *prm = m->wrap_prm + adr;
  int j = 0;
  while (j < num - 1) {
    if (type[j] == RL_WRAP_PULLEY || type[j + 1] == RL_WRAP_PULLEY) {
      if (type[j] == RL_WRAP_PULLEY) {
        divisor = prm[j];
        push_point(d, count, NULL, -2);
      }
      j++;
      continue;
    }
    int s0 = id[j], s1 = id[j + 1], geom = -1;
    real pnt[12], wlen = -1;
    int body[4];
    rl_v3_copy(pnt, d->site_xpos + 3 * s0);
    body[0] = m->site_bodyid[s0];
    if (type[j + 1] == RL_WRAP_SPHERE || type[j + 1] == RL_WRAP_CYLINDER) {
      geom = id[j + 1];
      s1 = id[j + 2];
      int side = (int)rl_floor(prm[j + 1] + (real)0.5);
      wlen = rl_wrap_geom(pnt + 3, d->site_xpos + 3 * s0, d->site_xpos + 3 * s1, d->geom_xpos + 3 * geom,
                       d->geom_xmat + 9 * geom, m->geom_size[3 * geom], type[j + 1],
                       side >= 0 ? d->site_xpos + 3 * side : NULL);
    }
    int nseg = 1;
    if (wlen < 0) {
      rl_v3_copy(pnt + 3, d->site_xpos + 3 * s1);
      body[1] = m->site_bodyid[s1];
      d->ten_length[k] += rl_wrap_dist(pnt, pnt + 3) / divisor;
    } else {
      rl_v3_copy(pnt + 9, d->site_xpos + 3 * s1);
      body[1] = body[2] = m->geom_bodyid[geom];
      body[3] = m->site_bodyid[s1];
      d->ten_length[k] += (rl_wrap_dist(pnt, pnt + 3) + wlen + rl_wrap_dist(pnt + 6, pnt + 9)) / divisor;
      nseg = 3;
    }
    for (int s = 0; s < nseg; s++)
      if (body[s] != body[s + 1])
        add_segment_jac(m, d, J, pnt + 3 * s, body[s], pnt + 3 * s + 3, body[s + 1], divisor, jac);
    push_point(d, count, pnt, -1);
    if (wlen >= 0) {
      push_point(d, count, pnt + 3, geom);
      push_point(d, count, pnt + 6, geom);
    }
    j += geom >= 0 ? 2 : 1;
    if (j == num - 1 || type[j + 1] == RL_WRAP_PULLEY) push_point(d, count, d->site_xpos + 3 * s1, -1);
  }
}

void rl_tendon(const rl_model *m, rl_data *d) {
  if (m->ntendon == 0) return;
  size_t mark = rl_arena_mark(d);
  real *jac = rl_arena_take(d, 6 * (size_t)(m->nv > 0 ? m->nv : 1));
  memset(d->ten_length, 0, sizeof(real) * (size_t)m->ntendon);
  memset(d->ten_J, 0, sizeof(real) * (size_t)m->ntenJ);
  int count = 0;
  for (int k = 0; k < m->ntendon; k++) {
    d->ten_wrapadr[k] = count;
    if (m->tendon_num[k] > 0 && m->wrap_type[m->tendon_adr[k]] == RL_WRAP_JOINT) fixed_tendon(m, d, k);
    else if (jac) spatial_tendon(m, d, k, &count, jac);
    d->ten_wrapnum[k] = count - d->ten_wrapadr[k];
  }
  rl_arena_release(d, mark);
}

/* ten_velocity = ten_J · qvel */
void rl_tendon_velocity(const rl_model *m, rl_data *d) {
  for (int k = 0; k < m->ntendon; k++) {
    const real *J = d->ten_J + (size_t)k * m->nv;
    real v = 0;
    for (int i = 0; i < m->nv; i++) v += J[i] * d->qvel[i];
    d->ten_velocity[k] = v;
  }
}

/* tendon spring-dampers: f = −k·(L − L_spring) − b·L̇ along the tendon, qfrc_passive += f·J */
void rl_tendon_passive(const rl_model *m, rl_data *d) {
  for (int k = 0; k < m->ntendon; k++) {
    real ks = m->tendon_stiffness[k], kd = m->tendon_damping[k];
    if (ks == 0 && kd == 0) continue;
    real f = -ks * (d->ten_length[k] - m->tendon_lengthspring[k]) - kd * d->ten_velocity[k];
    const real *J = d->ten_J + (size_t)k * m->nv;
    for (int i = 0; i < m->nv; i++) d->qfrc_passive[i] += J[i] * f;
  }
}
