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

/* the last dof of body b's chain (its weld body's last dof), −1 when nothing moves it */
static int chain_top(const rl_model *m, int b) {
  int w = m->body_weldid[b];
  return w > 0 ? m->body_dofadr[w] + m->body_dofnum[w] - 1 : -1;
}

/* the highest-index dof moving both bodies b0 and b1 (their chains' first common dof; every ancestor of it is
   common too), −1 if none.  A parent dof's index is below its child's. */
static int shared_dof(const rl_model *m, int b0, int b1) {
  int i = chain_top(m, b0), k = chain_top(m, b1);
  while (i >= 0 && k >= 0 && i != k) {
    if (i > k) i = m->dof_parentid[i];
    else k = m->dof_parentid[k];
  }
  return i >= 0 && i == k ? i : -1;
}

/* The point Jacobian (3 × nv) of p = x_b + off on body b with every lever arm formed from link-sized terms
   (RL_SEGMENT_OFFSETS): a rotational dof i about its joint's anchor a_i gives ω_i × (p − a_i), with
   p − a_i = off + Σ xpos_rel over the bodies from b up to the joint's (exclusive) − xanchor_rel; a translational
   dof (slide, a free joint's first three) gives its axis.  The same columns as rl_jac_point's
   cdof_lin + ω × (p − c_root), without their metre-sized terms. */
static void jac_point_local(const rl_model *m, const rl_data *d, real *jacp, const real off[3], int b) {
  int nv = m->nv;
  real o[3];
  memset(jacp, 0, sizeof(real) * 3 * (size_t)nv);
  rl_v3_copy(o, off);
  for (int cur = b; cur > 0; cur = m->body_parentid[cur]) {
    for (int j = m->body_jntadr[cur]; j < m->body_jntadr[cur] + m->body_jntnum[cur]; j++) {
      int type = m->jnt_type[j], adr = m->jnt_dofadr[j];
      int ndof = type == RL_JNT_FREE ? 6 : type == RL_JNT_BALL ? 3 : 1;
      real lever[3];
      rl_v3_sub(lever, o, d->xanchor_rel + 3 * j);
      for (int k = 0; k < ndof; k++) {
        const real *c = d->cdof + 6 * (adr + k);
        real col[3];
        if (type == RL_JNT_SLIDE || (type == RL_JNT_FREE && k < 3)) rl_v3_copy(col, c + 3);
        else rl_v3_cross(col, c, lever);
        jacp[adr + k] = col[0];
        jacp[nv + adr + k] = col[1];
        jacp[2 * nv + adr + k] = col[2];
      }
    }
    rl_v3_add(o, o, d->xpos_rel + 3 * cur);
  }
}

/* J_row += (1/divisor)·uᵀ·(J_p(p1, b1) − J_p(p0, b0)), u = dp/‖dp‖ with dp = p1 − p0 given by the caller and
   off_k = p_k − x_{b_k} (jac: 6·nv scratch).  f64: rl_jac_point at the world points, as MuJoCo.  f32
   (RL_SEGMENT_OFFSETS): jac_point_local from the offsets, and a dof that moves both bodies as the exact difference
   of its two columns, ω_i × dp (its translation cancels) — on MuJoCo's flag sample the world-point Jacobians'
   lever arms about the root's subtree COM reach a metre, and their float rounding survived the subtraction. */
static void add_segment_jac(const rl_model *m, const rl_data *d, real *Jrow, const real dp[3], const real p0[3],
                            const real off0[3], int b0, const real p1[3], const real off1[3], int b1, real divisor,
                            real *jac) {
  int nv = m->nv;
  real u[3], *j0 = jac, *j1 = jac + 3 * nv;
  rl_v3_copy(u, dp);
  rl_wrap_normalize(u, 3);
  if (RL_SEGMENT_OFFSETS) {
    jac_point_local(m, d, j0, off0, b0);
    jac_point_local(m, d, j1, off1, b1);
    for (int i = shared_dof(m, b0, b1); i >= 0; i = m->dof_parentid[i]) {
      real w[3];
      rl_v3_cross(w, d->cdof + 6 * i, dp);
      j0[i] = j0[nv + i] = j0[2 * nv + i] = 0;
      j1[i] = w[0];
      j1[nv + i] = w[1];
      j1[2 * nv + i] = w[2];
    }
  } else {
    rl_jac_point(m, d, j0, NULL, p0, b0);
    rl_jac_point(m, d, j1, NULL, p1, b1);
  }
  real s = 1 / divisor;
  for (int i = 0; i < nv; i++) {
    real t = (j1[i] - j0[i]) * u[0];
    t += (j1[nv + i] - j0[nv + i]) * u[1];
    t += (j1[2 * nv + i] - j0[2 * nv + i]) * u[2];
    Jrow[i] += t * s;
  }
}

/* x_b − x_c for body b below body c: Σ xpos_rel over the bodies from b up to c (link-sized terms) */
static void path_offset(const rl_model *m, const rl_data *d, int b, int c, real off[3]) {
  rl_v3_zero(off);
  for (; b != c && b > 0; b = m->body_parentid[b]) rl_v3_add(off, off, d->xpos_rel + 3 * b);
}

/* a site's position relative to its body, R_b·p_site */
static void site_offset(const rl_model *m, const rl_data *d, int s, real off[3]) {
  rl_m3_mulv(off, d->xmat + 9 * m->site_bodyid[s], m->site_pos + 3 * s);
}

/* The vector from site s0 to site s1.  f64: site_xpos[s1] − site_xpos[s0], as MuJoCo.  f32 (RL_SEGMENT_OFFSETS):
   (R_b1·p_s1 + x_b1 − x_c) − (R_b0·p_s0 + x_b0 − x_c), c the bodies' lowest common ancestor, x_b − x_c summed
   from xpos_rel (path_offset) and p_s the site's position in its body: link-sized terms only.  The difference of
   the world positions carries their rounding, ~6 ulps of a metre at the end of the flag's 20-body chains, and a
   5 cm segment's direction read 9e-6 off: the tendon Jacobian 1.6e-5 relative, its spring force through
   qfrc_passive 1.6e-5. */
static void site_segment(const rl_model *m, const rl_data *d, int s0, int s1, real dp[3]) {
  if (!RL_SEGMENT_OFFSETS) {
    rl_v3_sub(dp, d->site_xpos + 3 * s1, d->site_xpos + 3 * s0);
    return;
  }
  int b0 = m->site_bodyid[s0], b1 = m->site_bodyid[s1], a = b0, c = b1;
  while (a != c) {
    if (a > c) a = m->body_parentid[a];
    else c = m->body_parentid[c];
  }
  real o0[3], o1[3], r0[3], r1[3];
  path_offset(m, d, b0, a, o0);
  path_offset(m, d, b1, a, o1);
  site_offset(m, d, s0, r0);
  site_offset(m, d, s1, r1);
  for (int i = 0; i < 3; i++) dp[i] = (r1[i] + o1[i]) - (r0[i] + o0[i]);
}

/* off = p − x_b for a path point p on body b: a site's R_b·p_site (link-sized, f32) or the world difference */
static void point_offset(const rl_model *m, const rl_data *d, const real p[3], int b, int site, real off[3]) {
  if (RL_SEGMENT_OFFSETS && site >= 0) site_offset(m, d, site, off);
  else rl_v3_sub(off, p, d->xpos + 3 * b);
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
    real seg[9];
    if (wlen < 0) {
      rl_v3_copy(pnt + 3, d->site_xpos + 3 * s1);
      body[1] = m->site_bodyid[s1];
      site_segment(m, d, s0, s1, seg);
      d->ten_length[k] += rl_sqrt(rl_v3_dot(seg, seg)) / divisor;
    } else {
      rl_v3_copy(pnt + 9, d->site_xpos + 3 * s1);
      body[1] = body[2] = m->geom_bodyid[geom];
      body[3] = m->site_bodyid[s1];
      d->ten_length[k] += (rl_wrap_dist(pnt, pnt + 3) + wlen + rl_wrap_dist(pnt + 6, pnt + 9)) / divisor;
      nseg = 3;
      for (int s = 0; s < nseg; s++) rl_v3_sub(seg + 3 * s, pnt + 3 * s + 3, pnt + 3 * s);
    }
    /* each point's offset from its body: the sites' from their local positions (f32), tangent points' as world
       differences */
    real offs[12];
    for (int s = 0; s <= nseg; s++)
      point_offset(m, d, pnt + 3 * s, body[s], s == 0 ? s0 : s == nseg ? s1 : -1, offs + 3 * s);
    for (int s = 0; s < nseg; s++)
      if (body[s] != body[s + 1])
        add_segment_jac(m, d, J, seg + 3 * s, pnt + 3 * s, offs + 3 * s, body[s], pnt + 3 * s + 3, offs + 3 * s + 3,
                        body[s + 1], divisor, jac);
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
