/* avbd_tendon.c — spatial tendons in maximal coordinates.  A spatial tendon's length L runs along a path of
 * sites (straight segments, wraps around spheres and cylinders with MuJoCo's side sites, pulleys that start a
 * branch counted 1/divisor), evaluated here at the AVBD body poses.  Its spring, damper and actuators are an
 * energy of L whose gradient with respect to body s's displacement (δx, δθ: x ← x + δx, R ← Exp(δθ)R) is
 *   ∂L/∂z_s = Σ_segments (1/divisor)·(±u_k, ±(p − x_s) × u_k),   u_k = (p_{k+1} − p_k)/‖p_{k+1} − p_k‖,
 * + at the segment end p_{k+1} on s, − at its start p_k on s (tangent points move with the wrap geom's body;
 * the arc between two of them adds nothing to first order).  Each body's local solve takes the force
 * F_L·∂L/∂z_s and the Gauss–Newton curvature k_L·(∂L/∂z_s)(∂L/∂z_s)ᵀ with the other bodies at their current
 * poses, as a joint's coordinate terms see the other joints of a fixed tendon. */
#include "avbd_internal.h"
#include "rl_wrap.h"

/* world position p of site i at the current poses: x_s + R_s·r_i on a dynamic body (r_i in its COM frame), the
   fixed world position on a static one; *slot the body's slot (−1 static) */
RL_HDFN static void avbd_site_x(const rl_avbd *am, const rl_model *m, int i, real p[3], int *slot) {
  int s = am->slot[m->site_bodyid[i]];
  const real *r = am->spos + 3 * i;
  *slot = s;
  if (s < 0) {
    rl_v3_copy(p, r);
    return;
  }
  const rl_avbd_pose *P = am->pose + s;
  rl_m3_mulv(p, P->R, r);
  rl_v3_add(p, p, P->x);
}

/* world frame (x, R) of wrap geom g: the COM-frame view (gpos, gquat) composed with its body's pose, or the
   geom's fixed world pose on a static body */
RL_HDFN static void avbd_geom_frame(const rl_avbd *am, const rl_model *m, int g, real x[3], real R[9]) {
  int s = am->slot[m->geom_bodyid[g]];
  real Rg[9];
  rl_q_to_mat(Rg, am->gquat + 4 * g);
  if (s < 0) {
    rl_v3_copy(x, am->gpos + 3 * g);
    for (int i = 0; i < 9; i++) R[i] = Rg[i];
    return;
  }
  const rl_avbd_pose *P = am->pose + s;
  rl_m3_mulv(x, P->R, am->gpos + 3 * g);
  rl_v3_add(x, x, P->x);
  rl_m3_mul(R, P->R, Rg);
}

/* velocity of the material point p of slot s: v_s + ω_s × (p − x_s), zero on a static body */
RL_HDFN static void avbd_point_vel(const rl_avbd *am, int s, const real p[3], real v[3]) {
  if (s < 0) {
    rl_v3_zero(v);
    return;
  }
  real r[3];
  rl_v3_sub(r, p, am->pose[s].x);
  rl_v3_cross(v, am->vel + 6 * s + 3, r);
  rl_v3_add(v, v, am->vel + 6 * s);
}

/* One straight segment p0 (slot s0) → p1 (slot s1) of a branch counted 1/div: J += ∂‖p1 − p0‖/∂z_s / div for
   slot s (J non-NULL), *rate += u·(v(p1) − v(p0))/div (rate non-NULL); nothing when both ends are on one body */
RL_HDFN static void avbd_segment_terms(const rl_avbd *am, int s, const real p0[3], int s0, const real p1[3], int s1,
                                       real div, real J[6], real *rate) {
  if (s0 == s1) return;
  real u[3], r[3], w[3];
  rl_v3_sub(u, p1, p0);
  rl_wrap_normalize(u, 3);
  for (int end = 0; end < 2; end++) {
    int se = end ? s1 : s0;
    real sg = (end ? 1 : -1) / div;
    const real *p = end ? p1 : p0;
    if (J && se == s && s >= 0) {
      rl_v3_sub(r, p, am->pose[s].x);
      rl_v3_cross(w, r, u);
      for (int i = 0; i < 3; i++) {
        J[i] += sg * u[i];
        J[3 + i] += sg * w[i];
      }
    }
    if (rate) {
      avbd_point_vel(am, se, p, w);
      *rate += sg * rl_v3_dot(u, w);
    }
  }
}

/* Length of spatial tendon t at the current poses (the walk of MuJoCo's spatial tendon: site → [wrap geom →]
   site …, a pulley setting the divisor of what follows), with ∂L/∂z_s added into J (J non-NULL) and the rate
   L̇ = Σ u·Δv/div added into *rate (rate non-NULL) */
RL_HDFN real avbd_tendon_path(const rl_avbd *am, const rl_model *m, int t, int s, real J[6], real *rate) {
  int adr = m->tendon_adr[t], num = m->tendon_num[t];
  const int *type = m->wrap_type + adr, *id = m->wrap_objid + adr;
  const real *prm = m->wrap_prm + adr;
  real div = 1, L = 0;
  int j = 0;
  while (j < num - 1) {
    if (type[j] == RL_WRAP_PULLEY || type[j + 1] == RL_WRAP_PULLEY) {
      if (type[j] == RL_WRAP_PULLEY) div = prm[j];
      j++;
      continue;
    }
    int geom = -1, sl[4];
    real pnt[12], wlen = -1;
    avbd_site_x(am, m, id[j], pnt, sl);
    if (type[j + 1] == RL_WRAP_SPHERE || type[j + 1] == RL_WRAP_CYLINDER) {
      geom = id[j + 1];
      int side = (int)rl_floor(prm[j + 1] + (real)0.5), tmp;
      real x1[3], gx[3], gR[9], sx[3];
      avbd_site_x(am, m, id[j + 2], x1, &tmp);
      avbd_geom_frame(am, m, geom, gx, gR);
      if (side >= 0) avbd_site_x(am, m, side, sx, &tmp);
      wlen = rl_wrap_geom(pnt + 3, pnt, x1, gx, gR, m->geom_size[3 * geom], type[j + 1], side >= 0 ? sx : NULL);
    }
    int nseg = 1, s1 = geom >= 0 ? id[j + 2] : id[j + 1];
    if (wlen < 0) {
      avbd_site_x(am, m, s1, pnt + 3, sl + 1);
      L += rl_wrap_dist(pnt, pnt + 3) / div;
    } else {
      avbd_site_x(am, m, s1, pnt + 9, sl + 3);
      sl[1] = sl[2] = am->slot[m->geom_bodyid[geom]];
      L += (rl_wrap_dist(pnt, pnt + 3) + wlen + rl_wrap_dist(pnt + 6, pnt + 9)) / div;
      nseg = 3;
    }
    for (int k = 0; k < nseg; k++) avbd_segment_terms(am, s, pnt + 3 * k, sl[k], pnt + 3 * k + 3, sl[k + 1], div, J, rate);
    j += geom >= 0 ? 2 : 1;
  }
  return L;
}

/* Step start: each acting spatial tendon's length Lⁿ and rate L̇ⁿ at the step-start poses and velocities */
RL_HDFN void avbd_tendon_begin(rl_avbd *am, const rl_model *m) {
  for (int i = 0; i < am->nspat; i++) {
    real rate = 0;
    am->spat_n[2 * i] = avbd_tendon_path(am, m, am->spat[i], -1, NULL, &rate);
    am->spat_n[2 * i + 1] = rate;
  }
}

/* Terms of the spatial tendons through slot s in its local system: for each, J = ∂L/∂z_s at the current poses,
   F_L and k_L from avbd_tendon_force (spring, damper, actuators on the tendon), g += F_L·J and, unless kkt,
   H += k_L·JJᵀ (lower triangle; Gauss–Newton: the path's own curvature F_L·∂²L is left out, which changes
   the iteration, not its fixed point) */
RL_HDFN void avbd_tendon_assemble(const rl_avbd *am, const rl_model *m, const rl_data *d, int s, real h, int kkt,
                                  real H[36], real g[6]) {
  for (int q = am->spadr[s]; q < am->spadr[s + 1]; q++) {
    int i = am->splist[q];
    real J[6] = {0, 0, 0, 0, 0, 0}, kL;
    real L = avbd_tendon_path(am, m, am->spat[i], s, J, NULL);
    real F = avbd_tendon_force(am, m, d, am->spat[i], L, am->spat_n[2 * i], am->spat_n[2 * i + 1], h, &kL);
    rl_avbd_add_row(H, g, J, F, kkt ? 0 : kL);
  }
}
