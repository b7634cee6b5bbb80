/* constraint.c — constraint rows of the soft model, as MuJoCo 2.2.2 (see rl_constraint.h).
 *
 * Stages, in order (rl_make_constraint):
 *   instantiate: equality → frictionloss → limits → contacts   (J, pos, margin, frictionloss, type, id)
 *   diag_approx: per row an approximation of (J M⁻¹ Jᵀ)_ii from body/dof invweight0
 *   rl_make_impedance: solref/solimp → K, B, imp, imp'; R = (1−imp)/imp·diagApprox; cone R rules; D = 1/R
 *   rl_reference_constraint: efc_vel = J·qvel, efc_aref = −B·vel − K·imp·(pos − margin)
 *
 * Jacobians are built sparse from the dof tree: the dofs that move a point of body b are b's
 * ancestor dofs (dof_parentid chain from the last dof of the first movable body at or above b), so a
 * two-body row touches the union of two such chains (merge_chain), never an nv-wide dense row. */
#include <string.h>
#include "rl_engine.h"
#include "rl_math.h"

/* MuJoCo's constants (mjMINIMP, mjMAXIMP; mjMINVAL is RL_MINVAL of rl_prec.h) and default solref */
#define RL_MINIMP            ((real)0.0001)
#define RL_MAXIMP            ((real)0.9999)
#define RL_SOLREF_DEFAULT_TC ((real)0.02)
#define RL_SOLREF_DEFAULT_DR ((real)1)

/* scratch for building rows: the merged dof chain of a body pair and a 6 × nv block of Jacobian rows */
typedef struct rowbuf {
  int *chain; /* ascending dof indices */
  int *side;  /* per chain entry: bit 0 dof moves body a, bit 1 dof moves body b */
  real *jac;  /* up to 6 rows of NV entries (row stride NV) */
  real *tmp;  /* 6 rows of NV entries */
} rowbuf;

/* arena: chain + side (ints stored in real slots), jac and tmp blocks */
size_t rl_constraint_arena(const rl_model *m) { return 14 * (size_t)(m->nv > 0 ? m->nv : 1) + 16; }

/* ---------------------------------------------------------------- dof chains and point Jacobians */

/* first body at or above b that has dofs (0: none) */
static int movable_body(const rl_model *m, int b) {
  while (b > 0 && m->body_dofnum[b] == 0) b = m->body_parentid[b];
  return b;
}

/* Union of the ancestor dof chains of bodies a and b, ascending: walk both chains from their last dof
   toward the root, always taking the larger index (dof_parentid[i] < i), then reverse.  side[k] says
   which body the dof moves (bit 0: a, bit 1: b).  Returns the chain length NV. */
static int merge_chain(const rl_model *m, int a, int b, int *chain, int *side) {
  a = movable_body(m, a);
  b = movable_body(m, b);
  int da = a > 0 ? m->body_dofadr[a] + m->body_dofnum[a] - 1 : -1;
  int db = b > 0 ? m->body_dofadr[b] + m->body_dofnum[b] - 1 : -1;
  int n = 0;
  while (da >= 0 || db >= 0) {
    int i = da > db ? da : db;
    int s = 0;
    if (da == i) {
      s |= 1;
      da = m->dof_parentid[da];
    }
    if (db == i) {
      s |= 2;
      db = m->dof_parentid[db];
    }
    chain[n] = i;
    side[n] = s;
    n++;
  }
  for (int k = 0; k < n / 2; k++) {
    int t = chain[k];
    chain[k] = chain[n - 1 - k];
    chain[n - 1 - k] = t;
    t = side[k];
    side[k] = side[n - 1 - k];
    side[n - 1 - k] = t;
  }
  return n;
}

/* Add sign·J(p, body) on the chain entries that move the body (bit `bit` of side):
   translational J_k = cdof_k,lin + cdof_k,ang × (p − subtree_com[root(body)]) into jp (3 rows),
   rotational J_k = cdof_k,ang into jr (3 rows); rows have stride NV.  With jp = 0 − j1 then + j2 the
   result is j2 − j1 with the rounding of MuJoCo's dense difference. */
static void add_point_jac(const rl_model *m, const rl_data *d, const int *chain, const int *side, int NV, int bit,
                          const real p[3], int body, real sign, real *jp, real *jr) {
  real off[3];
  rl_v3_sub(off, p, d->subtree_com + 3 * m->body_rootid[body]);
  for (int k = 0; k < NV; k++) {
    if (!(side[k] & bit)) continue;
    const real *c = d->cdof + 6 * chain[k];
    if (jr)
      for (int r = 0; r < 3; r++) jr[r * NV + k] += sign * c[r];
    if (jp) {
      real t[3];
      rl_v3_cross(t, c, off);
      for (int r = 0; r < 3; r++) jp[r * NV + k] += sign * (c[3 + r] + t[r]);
    }
  }
}

/* Jacobian difference of two body points, J(p2 on b2) − J(p1 on b1), over the merged chain:
   translational rows into jp (3 × NV), rotational into jr (3 × NV) when jr is not NULL. */
static int jac_dif_pair(const rl_model *m, const rl_data *d, rowbuf *w, int b1, int b2, const real p1[3],
                        const real p2[3], real *jp, real *jr) {
  int NV = merge_chain(m, b1, b2, w->chain, w->side);
  memset(jp, 0, sizeof(real) * 3 * (size_t)NV);
  if (jr) memset(jr, 0, sizeof(real) * 3 * (size_t)NV);
  add_point_jac(m, d, w->chain, w->side, NV, 1, p1, b1, -1, jp, jr);
  add_point_jac(m, d, w->chain, w->side, NV, 2, p2, b2, 1, jp, jr);
  return NV;
}

/* ---------------------------------------------------------------- adding rows */

/* room for `size` rows of NV entries each: else the block is dropped and counted */
static int has_room(const rl_model *m, rl_data *d, int size, int NV) {
  if (d->nefc + size > m->nefcmax || d->nnzJ + size * NV > m->njmax) {
    d->warning[RL_WARN_CONTACTFULL]++;
    return 0;
  }
  return 1;
}

/* Append `size` rows sharing the column list chain[0..NV) with values jac (size × NV), and their
   pos, margin (NULL: 0), frictionloss, type and id.  Non-contact blocks with an all-zero Jacobian
   are skipped.  Returns 1 if rows were added. */
static int add_rows(const rl_model *m, rl_data *d, const real *jac, const int *chain, int NV, const real *pos,
                    const real *margin, real frictionloss, int size, int type, int id) {
  int contact =
      type == RL_CNSTR_CONTACT_FRICTIONLESS || type == RL_CNSTR_CONTACT_PYRAMIDAL || type == RL_CNSTR_CONTACT_ELLIPTIC;
  if (!contact) {
    int nonzero = 0;
    for (int i = 0; i < size * NV && !nonzero; i++) nonzero = jac[i] != 0;
    if (!nonzero) return 0;
  }
  if (!has_room(m, d, size, NV)) return 0;
  for (int r = 0; r < size; r++) {
    int row = d->nefc + r, adr = d->nnzJ;
    d->efc_J_rowadr[row] = adr;
    d->efc_J_rownnz[row] = NV;
    memcpy(d->efc_J_colind + adr, chain, sizeof(int) * (size_t)NV);
    memcpy(d->efc_J + adr, jac + (size_t)r * NV, sizeof(real) * (size_t)NV);
    d->nnzJ += NV;
    d->efc_pos[row] = pos ? pos[r] : 0;
    d->efc_margin[row] = margin ? margin[r] : 0;
    d->efc_frictionloss[row] = frictionloss;
    d->efc_type[row] = type;
    d->efc_id[row] = id;
  }
  d->nefc += size;
  if (type == RL_CNSTR_EQUALITY) d->ne += size;
  else if (type == RL_CNSTR_FRICTION_DOF || type == RL_CNSTR_FRICTION_TENDON) d->nf += size;
  return 1;
}

/* ---------------------------------------------------------------- equality rows */

/* world point of local offset `local` on body b: x_b + R_b·local */
static void body_point(const rl_data *d, int b, const real local[3], real p[3]) {
  rl_m3_mulv(p, d->xmat + 9 * b, local);
  rl_v3_add(p, p, d->xpos + 3 * b);
}

/* connect: φ = p0 − p1 with p_j = x_j + R_j·anchor_j (eq_data[0..3) on body1, [3..6) on body2);
   J = J(p0 on body1) − J(p1 on body2), 3 rows. */
static void eq_connect(const rl_model *m, rl_data *d, rowbuf *w, int e) {
  const real *data = m->eq_data + RL_NEQDATA * e;
  int b0 = m->eq_obj1id[e], b1 = m->eq_obj2id[e];
  real p0[3], p1[3], pos[3];
  body_point(d, b0, data, p0);
  body_point(d, b1, data + 3, p1);
  rl_v3_sub(pos, p0, p1);
  int NV = jac_dif_pair(m, d, w, b1, b0, p1, p0, w->jac, NULL);
  add_rows(m, d, w->jac, w->chain, NV, pos, NULL, 0, 3, RL_CNSTR_EQUALITY, e);
}

/* weld (2.2.2 layout: eq_data[0..3) anchor on body2, [3..6) relpose position on body1, [6..10) relpose
   quaternion, [10] torquescale):
     translation φ_t = p0 − p1,  p0 = x0 + R0·relpos,  p1 = x1 + R1·anchor,  J_t = J(p0) − J(p1);
     rotation    φ_r = vec(q̄1 ⊗ q0 ⊗ q_rel),  J_r,k = ts · ½ vec(q̄1 ⊗ (0, ω_k) ⊗ q0 ⊗ q_rel)
   with ω_k the k-th column of J_rot(body1) − J_rot(body2) and ts = torquescale. */
static void eq_weld(const rl_model *m, rl_data *d, rowbuf *w, int e) {
  const real *data = m->eq_data + RL_NEQDATA * e;
  int b0 = m->eq_obj1id[e], b1 = m->eq_obj2id[e];
  real p0[3], p1[3], pos[6];
  body_point(d, b0, data + 3, p0);
  body_point(d, b1, data, p1);
  rl_v3_sub(pos, p0, p1);
  real *jt = w->jac, *jr;
  int NV = jac_dif_pair(m, d, w, b1, b0, p1, p0, w->tmp, w->tmp + 3 * (size_t)m->nv);
  /* pack: rows 0..2 translation, rows 3..5 rotation, stride NV */
  memcpy(jt, w->tmp, sizeof(real) * 3 * (size_t)NV);
  jr = jt + 3 * (size_t)NV;
  memcpy(jr, w->tmp + 3 * (size_t)m->nv, sizeof(real) * 3 * (size_t)NV);
  real q[4], q1c[4], q2[4], q3[4];
  rl_q_mul(q, d->xquat + 4 * b0, data + 6); /* q0 ⊗ q_rel */
  rl_q_conj(q1c, d->xquat + 4 * b1);        /* q̄1 */
  rl_q_mul(q2, q1c, q);
  pos[3] = q2[1];
  pos[4] = q2[2];
  pos[5] = q2[3];
  for (int k = 0; k < NV; k++) {
    real ax[4] = {0, jr[k], jr[NV + k], jr[2 * NV + k]};
    /* q̄1 ⊗ (0, ω) written out as MuJoCo's mju_mulQuatAxis */
    q2[0] = -q1c[1] * ax[1] - q1c[2] * ax[2] - q1c[3] * ax[3];
    q2[1] = q1c[0] * ax[1] + q1c[2] * ax[3] - q1c[3] * ax[2];
    q2[2] = q1c[0] * ax[2] + q1c[3] * ax[1] - q1c[1] * ax[3];
    q2[3] = q1c[0] * ax[3] + q1c[1] * ax[2] - q1c[2] * ax[1];
    rl_q_mul(q3, q2, q);
    jr[k] = (real)0.5 * q3[1];
    jr[NV + k] = (real)0.5 * q3[2];
    jr[2 * NV + k] = (real)0.5 * q3[3];
  }
  real ts = data[10];
  for (int k = 0; k < 3 * NV; k++) jr[k] *= ts;
  add_rows(m, d, w->jac, w->chain, NV, pos, NULL, 0, 6, RL_CNSTR_EQUALITY, e);
}

/* joint coupling by a quartic: with x = q_b − q0_b (second joint) and y = q_a − q0_a (first joint),
   φ = y − c0 − (c1 x + c2 x² + c3 x³ + c4 x⁴),  J = e_a − φ'(x)·e_b,  φ'(x) = c1 + 2c2 x + 3c3 x² + 4c4 x³;
   without a second joint φ = y − c0, J = e_a. */
static void eq_joint(const rl_model *m, rl_data *d, rowbuf *w, int e) {
  const real *c = m->eq_data + RL_NEQDATA * e;
  int ja = m->eq_obj1id[e], jb = m->eq_obj2id[e];
  int qa = m->jnt_qposadr[ja], va = m->jnt_dofadr[ja];
  real pos = d->qpos[qa] - m->qpos0[qa] - c[0];
  int NV = 1;
  w->chain[0] = va;
  w->jac[0] = 1;
  if (jb >= 0) {
    int qb = m->jnt_qposadr[jb], vb = m->jnt_dofadr[jb];
    real x = d->qpos[qb] - m->qpos0[qb];
    pos = d->qpos[qa] - m->qpos0[qa] - c[0] - (c[1] * x + c[2] * x * x + c[3] * x * x * x + c[4] * x * x * x * x);
    real deriv = c[1] + 2 * c[2] * x + 3 * c[3] * x * x + 4 * c[4] * x * x * x;
    if (vb == va) {
      w->jac[0] = 1 - deriv;
    } else {
      NV = 2;
      int lo = va < vb ? 0 : 1;
      w->chain[lo] = va;
      w->jac[lo] = 1;
      w->chain[1 - lo] = vb;
      w->jac[1 - lo] = -deriv;
    }
  }
  add_rows(m, d, w->jac, w->chain, NV, &pos, NULL, 0, 1, RL_CNSTR_EQUALITY, e);
}

/* the non-zero entries of dense row `row` (nv wide) scaled by s into jac, their columns into chain;
   returns their count */
static int compress_row(const rl_model *m, const real *row, real s, int *chain, real *jac) {
  int n = 0;
  for (int i = 0; i < m->nv; i++)
    if (row[i] != 0) {
      chain[n] = i;
      jac[n++] = row[i] * s;
    }
  return n;
}

/* tendon coupling by a quartic, as the joint coupling with lengths: x = L_b − L0_b, y = L_a − L0_a,
   φ = y − c0 − (c1 x + c2 x² + c3 x³ + c4 x⁴),  J = J_a − φ'(x)·J_b;  without a second tendon φ = y − c0,
   J = J_a (L0: the lengths at qpos0) */
static void eq_tendon(const rl_model *m, rl_data *d, rowbuf *w, int e) {
  const real *c = m->eq_data + RL_NEQDATA * e;
  int ta = m->eq_obj1id[e], tb = m->eq_obj2id[e], nv = m->nv;
  const real *Ja = d->ten_J + (size_t)ta * nv;
  real pos = d->ten_length[ta] - m->tendon_length0[ta] - c[0];
  int NV;
  if (tb >= 0) {
    const real *Jb = d->ten_J + (size_t)tb * nv;
    real x = d->ten_length[tb] - m->tendon_length0[tb];
    pos = d->ten_length[ta] - m->tendon_length0[ta] - c[0] -
          (c[1] * x + c[2] * x * x + c[3] * x * x * x + c[4] * x * x * x * x);
    real deriv = c[1] + 2 * c[2] * x + 3 * c[3] * x * x + 4 * c[4] * x * x * x;
    real *row = w->tmp;
    for (int i = 0; i < nv; i++) row[i] = Ja[i] + Jb[i] * -deriv;
    NV = compress_row(m, row, 1, w->chain, w->jac);
  } else {
    NV = compress_row(m, Ja, 1, w->chain, w->jac);
  }
  add_rows(m, d, w->jac, w->chain, NV, &pos, NULL, 0, 1, RL_CNSTR_EQUALITY, e);
}

/* every active equality (d->eq_active), in model order */
static void instantiate_equality(const rl_model *m, rl_data *d, rowbuf *w) {
  if (m->opt.disableflags & RL_DSBL_EQUALITY) return;
  for (int e = 0; e < m->neq; e++) {
    if (!d->eq_active[e]) continue;
    switch (m->eq_type[e]) {
    case RL_EQ_CONNECT: eq_connect(m, d, w, e); break;
    case RL_EQ_WELD: eq_weld(m, d, w, e); break;
    case RL_EQ_JOINT: eq_joint(m, d, w, e); break;
    case RL_EQ_TENDON: eq_tendon(m, d, w, e); break;
    default: break;
    }
  }
}

/* ---------------------------------------------------------------- frictionloss and limit rows */

/* one row J = e_i per dof with frictionloss > 0, then one row J = ten_J_k per tendon with frictionloss > 0
   (bounded by ±frictionloss in the solver) */
static void instantiate_friction(const rl_model *m, rl_data *d, rowbuf *w) {
  if (m->opt.disableflags & RL_DSBL_FRICTIONLOSS) return;
  real one = 1;
  for (int i = 0; i < m->nv; i++)
    if (m->dof_frictionloss[i] > 0)
      add_rows(m, d, &one, &i, 1, NULL, NULL, m->dof_frictionloss[i], 1, RL_CNSTR_FRICTION_DOF, i);
  for (int k = 0; k < m->ntendon; k++)
    if (m->tendon_frictionloss[k] > 0) {
      int NV = compress_row(m, d->ten_J + (size_t)k * m->nv, 1, w->chain, w->jac);
      add_rows(m, d, w->jac, w->chain, NV, NULL, NULL, m->tendon_frictionloss[k], 1, RL_CNSTR_FRICTION_TENDON, k);
    }
}

/* tendon k's limits: dist = side·(range_side − L) for side = −1 (lower), +1 (upper), row J = −side·ten_J_k
   when dist < margin (the model's range and margin) */
static void tendon_limit(const rl_model *m, rl_data *d, rowbuf *w, int k) {
  real margin = m->tendon_margin[k], value = d->ten_length[k];
  for (int side = -1; side <= 1; side += 2) {
    real dist = (real)side * (m->tendon_range[2 * k + (side + 1) / 2] - value);
    if (dist < margin) {
      int NV = compress_row(m, d->ten_J + (size_t)k * m->nv, -(real)side, w->chain, w->jac);
      add_rows(m, d, w->jac, w->chain, NV, &dist, &margin, 0, 1, RL_CNSTR_LIMIT_TENDON, k);
    }
  }
}

/* MuJoCo's mju_normalize3: a ← a/‖a‖ (below mjMINVAL: (1,0,0)), returns ‖a‖ */
static real normalize3(real a[3]) {
  real n = rl_sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
  if (n < RL_MINVAL) {
    a[0] = 1;
    a[1] = a[2] = 0;
  } else {
    real s = 1 / n;
    a[0] *= s;
    a[1] *= s;
    a[2] *= s;
  }
  return n;
}

/* rotation vector of a unit quaternion, angle wrapped to (−π, π] (MuJoCo's mju_quat2Vel with dt = 1) */
static void quat_to_rotvec(real r[3], const real q[4]) {
  real axis[3] = {q[1], q[2], q[3]};
  real s = normalize3(axis);
  real angle = 2 * rl_atan2(s, q[0]);
  if (angle > RL_PI) angle -= 2 * RL_PI;
  rl_v3_scale(r, axis, angle);
}

/* hinge/slide: dist = side·(range_side − q) for side = −1 (lower), +1 (upper), row J = −side·e_dof when
   dist < margin; ball: dist = max(range) − θ with θ the rotation angle, J = −axis on the 3 dofs.
   Ranges come from the run-time d->jnt_range.  Then the tendon limits (tendon_limit). */
static void instantiate_limit(const rl_model *m, rl_data *d, rowbuf *w) {
  if (m->opt.disableflags & RL_DSBL_LIMIT) return;
  for (int j = 0; j < m->njnt; j++) {
    if (!m->jnt_limited[j]) continue;
    real margin = m->jnt_margin[j];
    const real *range = d->jnt_range + 2 * j;
    int dof = m->jnt_dofadr[j];
    if (m->jnt_type[j] == RL_JNT_SLIDE || m->jnt_type[j] == RL_JNT_HINGE) {
      real value = d->qpos[m->jnt_qposadr[j]];
      for (int side = -1; side <= 1; side += 2) {
        real dist = (real)side * (range[(side + 1) / 2] - value);
        if (dist < margin) {
          real jv = -(real)side;
          add_rows(m, d, &jv, &dof, 1, &dist, &margin, 0, 1, RL_CNSTR_LIMIT_JOINT, j);
        }
      }
    } else if (m->jnt_type[j] == RL_JNT_BALL) {
      real axis[3];
      quat_to_rotvec(axis, d->qpos + m->jnt_qposadr[j]);
      real angle = normalize3(axis);
      real dist = rl_fmax(range[0], range[1]) - angle;
      if (dist < margin) {
        int cols[3] = {dof, dof + 1, dof + 2};
        real jv[3] = {-axis[0], -axis[1], -axis[2]};
        add_rows(m, d, jv, cols, 3, &dist, &margin, 0, 1, RL_CNSTR_LIMIT_JOINT, j);
      }
    }
  }
  for (int k = 0; k < m->ntendon; k++)
    if (m->tendon_limited[k]) tendon_limit(m, d, w, k);
}

/* ---------------------------------------------------------------- contact rows */

/* rows of the contact frame: jac[r] = Σ_c F[r][c]·src[c] for r < nrow (src: 3 rows of NV) */
static void rotate_to_frame(real *dst, const real *F, const real *src, int nrow, int NV) {
  for (int r = 0; r < nrow; r++) {
    real *out = dst + (size_t)r * NV;
    memset(out, 0, sizeof(real) * (size_t)NV);
    for (int c = 0; c < 3; c++) {
      real f = F[3 * r + c];
      if (f == 0) continue;
      for (int k = 0; k < NV; k++) out[k] += f * src[(size_t)c * NV + k];
    }
  }
}

/* rows one contact needs under the cone */
static int contact_rows(const rl_model *m, int dim) {
  if (dim == 1) return 1;
  return m->opt.cone == RL_CONE_PYRAMIDAL ? 2 * (dim - 1) : dim;
}

/* Contact i: J_c = frame·(J(pos on body2) − J(pos on body1)) with rows normal, tangent1, tangent2 and,
   for condim > 3, frame rows·(J_rot(body2) − J_rot(body1)) (torsion about the normal; rolling about
   the tangents).  condim 1: one frictionless row; pyramidal: edge pairs J_n ± μ_k J_k, k = 1..dim−1,
   all with pos = dist, margin = includemargin; elliptic: dim rows, pos and margin only on the normal. */
static void contact_block(const rl_model *m, rl_data *d, rowbuf *w, int i) {
  rl_contact *con = d->contact + i;
  int dim = con->dim;
  int b1 = m->geom_bodyid[con->geom1], b2 = m->geom_bodyid[con->geom2];
  con->efc_address = -1;
  if (!has_room(m, d, contact_rows(m, dim), 0)) return;
  int nv = m->nv;
  real *jp = w->tmp, *jr = w->tmp + 3 * (size_t)nv;
  int NV = jac_dif_pair(m, d, w, b1, b2, con->pos, con->pos, jp, dim > 3 ? jr : NULL);
  if (NV == 0) {
    con->exclude = 4; /* MuJoCo: no dofs */
    return;
  }
  if (d->nnzJ + contact_rows(m, dim) * NV > m->njmax) {
    d->warning[RL_WARN_CONTACTFULL]++;
    return;
  }
  /* jr is only read for dim > 3; pack it right after jp's 3 rows at stride NV */
  if (dim > 3) memmove(jp + 3 * (size_t)NV, jr, sizeof(real) * 3 * (size_t)NV);
  real *J = w->jac;
  rotate_to_frame(J, con->frame, jp, dim > 1 ? 3 : 1, NV);
  if (dim > 3) rotate_to_frame(J + 3 * (size_t)NV, con->frame, jp + 3 * (size_t)NV, dim - 3, NV);
  int first = d->nefc;
  if (dim == 1) {
    add_rows(m, d, J, w->chain, NV, &con->dist, &con->includemargin, 0, 1, RL_CNSTR_CONTACT_FRICTIONLESS, i);
  } else if (m->opt.cone == RL_CONE_PYRAMIDAL) {
    real pos[2] = {con->dist, con->dist}, mar[2] = {con->includemargin, con->includemargin};
    real *edge = w->tmp; /* jp/jr are consumed: reuse for the edge pair */
    for (int k = 1; k < dim; k++) {
      real mu = con->friction[k - 1];
      for (int c = 0; c < NV; c++) {
        edge[c] = J[c] + mu * J[(size_t)k * NV + c];
        edge[NV + c] = J[c] - mu * J[(size_t)k * NV + c];
      }
      add_rows(m, d, edge, w->chain, NV, pos, mar, 0, 2, RL_CNSTR_CONTACT_PYRAMIDAL, i);
    }
  } else {
    real pos[6] = {con->dist, 0, 0, 0, 0, 0}, mar[6] = {con->includemargin, 0, 0, 0, 0, 0};
    add_rows(m, d, J, w->chain, NV, pos, mar, 0, dim, RL_CNSTR_CONTACT_ELLIPTIC, i);
  }
  con->efc_address = first;
}

static void instantiate_contact(const rl_model *m, rl_data *d, rowbuf *w) {
  int off = m->opt.disableflags & RL_DSBL_CONTACT;
  for (int i = 0; i < d->ncon; i++) {
    d->contact[i].efc_address = -1;
    if (off || d->contact[i].exclude) continue;
    contact_block(m, d, w, i);
  }
}

/* ---------------------------------------------------------------- diagApprox */

/* First-pass approximation of A_ii = (J M⁻¹ Jᵀ)_ii (MuJoCo's mj_diagApprox), with body invweight0 =
   (translation, rotation) and dof invweight0:
     connect, weld: trans(b1) + trans(b2) on every row (MuJoCo 2.2.2's weld row counter is reset on
       every equality row, so its rotation rows also get the translational weights);
     joint coupling: w(dof_a) + w(dof_b);  tendon coupling, tendon frictionloss and limit: the tendons' w;
     frictionloss: w(dof);  joint limit: w(first dof);
     contact (T = trans(b1)+trans(b2), Q = rot(b1)+rot(b2)): frictionless T; elliptic T on rows 0..2,
       Q on rows 3..5; pyramidal edge pair k: T + μ_k²·(k < 2 ? T : Q). */
static void diag_approx(const rl_model *m, rl_data *d) {
  real *dA = d->efc_diagApprox;
  const real *bw = m->body_invweight0;
  for (int i = 0; i < d->nefc; i++) {
    int id = d->efc_id[i];
    switch (d->efc_type[i]) {
    case RL_CNSTR_EQUALITY: {
      int o1 = m->eq_obj1id[id], o2 = m->eq_obj2id[id];
      if (m->eq_type[id] == RL_EQ_JOINT) {
        dA[i] = m->dof_invweight0[m->jnt_dofadr[o1]];
        if (o2 >= 0) dA[i] += m->dof_invweight0[m->jnt_dofadr[o2]];
      } else if (m->eq_type[id] == RL_EQ_TENDON) {
        dA[i] = m->tendon_invweight0[o1];
        if (o2 >= 0) dA[i] += m->tendon_invweight0[o2];
      } else {
        dA[i] = bw[2 * o1] + bw[2 * o2];
      }
      break;
    }
    case RL_CNSTR_FRICTION_DOF: dA[i] = m->dof_invweight0[id]; break;
    case RL_CNSTR_LIMIT_JOINT: dA[i] = m->dof_invweight0[m->jnt_dofadr[id]]; break;
    case RL_CNSTR_FRICTION_TENDON:
    case RL_CNSTR_LIMIT_TENDON: dA[i] = m->tendon_invweight0[id]; break;
    case RL_CNSTR_CONTACT_FRICTIONLESS:
    case RL_CNSTR_CONTACT_PYRAMIDAL:
    case RL_CNSTR_CONTACT_ELLIPTIC: {
      const rl_contact *con = d->contact + id;
      int b1 = m->geom_bodyid[con->geom1], b2 = m->geom_bodyid[con->geom2], dim = con->dim;
      real tran = bw[2 * b1] + bw[2 * b2], rot = bw[2 * b1 + 1] + bw[2 * b2 + 1];
      if (d->efc_type[i] == RL_CNSTR_CONTACT_FRICTIONLESS) {
        dA[i] = tran;
      } else if (d->efc_type[i] == RL_CNSTR_CONTACT_ELLIPTIC) {
        for (int j = 0; j < dim; j++) dA[i + j] = j < 3 ? tran : rot;
        i += dim - 1;
      } else {
        for (int j = 0; j < dim - 1; j++) {
          real f = con->friction[j];
          dA[i + 2 * j] = dA[i + 2 * j + 1] = tran + f * f * (j < 2 ? tran : rot);
        }
        i += 2 * dim - 3;
      }
      break;
    }
    default: dA[i] = 0; break;
    }
  }
}

/* ---------------------------------------------------------------- impedance */

/* solref and solimp of row i's element, with MuJoCo's rules: a mixed-sign solref becomes the default
   (0.02, 1); timeconst ≥ 2·dt unless RL_DSBL_REFSAFE; dmin, dmax, midpoint clamped to [mjMINIMP,
   mjMAXIMP], width ≥ 0, power ≥ 1. */
static void sol_params(const rl_model *m, const rl_data *d, int i, real solref[2], real solimp[5]) {
  int id = d->efc_id[i];
  const real *ref, *imp;
  switch (d->efc_type[i]) {
  case RL_CNSTR_EQUALITY:
    ref = m->eq_solref + RL_NREF * id;
    imp = m->eq_solimp + RL_NIMP * id;
    break;
  case RL_CNSTR_LIMIT_JOINT:
    ref = m->jnt_solref + RL_NREF * id;
    imp = m->jnt_solimp + RL_NIMP * id;
    break;
  case RL_CNSTR_FRICTION_DOF:
    ref = m->dof_solref + RL_NREF * id;
    imp = m->dof_solimp + RL_NIMP * id;
    break;
  case RL_CNSTR_LIMIT_TENDON:
    ref = m->tendon_solref_lim + RL_NREF * id;
    imp = m->tendon_solimp_lim + RL_NIMP * id;
    break;
  case RL_CNSTR_FRICTION_TENDON:
    ref = m->tendon_solref_fri + RL_NREF * id;
    imp = m->tendon_solimp_fri + RL_NIMP * id;
    break;
  default:
    ref = d->contact[id].solref;
    imp = d->contact[id].solimp;
    break;
  }
  solref[0] = ref[0];
  solref[1] = ref[1];
  if ((solref[0] > 0) ^ (solref[1] > 0)) {
    solref[0] = RL_SOLREF_DEFAULT_TC;
    solref[1] = RL_SOLREF_DEFAULT_DR;
  }
  if (!(m->opt.disableflags & RL_DSBL_REFSAFE) && solref[0] > 0) solref[0] = rl_fmax(solref[0], 2 * m->opt.timestep);
  solimp[0] = rl_fmin(RL_MAXIMP, rl_fmax(RL_MINIMP, imp[0]));
  solimp[1] = rl_fmin(RL_MAXIMP, rl_fmax(RL_MINIMP, imp[1]));
  solimp[2] = rl_fmax(0, imp[2]);
  solimp[3] = rl_fmin(RL_MAXIMP, rl_fmax(RL_MINIMP, imp[3]));
  solimp[4] = rl_fmax(1, imp[4]);
}

/* The violation that drives the impedance of the block starting at row i, and the block's size:
   connect ‖φ‖ over 3 rows; weld ‖(φ_t, ts·φ_r)‖ over 6 rows; pyramidal contact 2(dim−1) rows and
   elliptic dim rows with the normal's pos; every other row alone with its own pos. */
static real block_pos(const rl_model *m, const rl_data *d, int i, int *dim) {
  int id = d->efc_id[i];
  const real *p = d->efc_pos + i;
  *dim = 1;
  switch (d->efc_type[i]) {
  case RL_CNSTR_CONTACT_ELLIPTIC: *dim = d->contact[id].dim; break;
  case RL_CNSTR_CONTACT_PYRAMIDAL: *dim = 2 * (d->contact[id].dim - 1); break;
  case RL_CNSTR_EQUALITY:
    if (m->eq_type[id] == RL_EQ_WELD) {
      real ts = m->eq_data[RL_NEQDATA * id + 10], s = 0;
      for (int k = 0; k < 6; k++) {
        real v = k < 3 ? p[k] : p[k] * ts;
        s += v * v;
      }
      *dim = 6;
      return rl_sqrt(s);
    }
    if (m->eq_type[id] == RL_EQ_CONNECT) {
      *dim = 3;
      return rl_sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
    }
    break;
  default: break;
  }
  return p[0];
}

/* x^p for the impedance's power p ≥ 1: the products x·x for the default p = 2 and x for p = 1 (exact, or
   correctly rounded, where pow may round the last bit the other way: about 1 square in 1000), pow otherwise */
static real imp_pow(real x, real p) { return p == 2 ? x * x : p == 1 ? x : rl_pow(x, p); }

/* Impedance d(x), x = |pos − margin| / width, of the power sigmoid (p = power, m = midpoint):
     y(x) = x^p / m^(p−1)                 for x ≤ m,
     y(x) = 1 − (1−x)^p / (1−m)^(p−1)      for x > m   (y = x when p = 1),
     d = dmin + y·(dmax − dmin),  d' = y'(x)·sign(pos − margin)·(dmax − dmin)/width;
   flat (dmin = dmax or width ≈ 0): d = (dmin + dmax)/2; saturated x ≥ 1: dmax. */
void rl_solimp_impedance(const real solimp[5], real pos, real margin, real *imp, real *impP) {
  if (solimp[0] == solimp[1] || solimp[2] <= RL_MINVAL) {
    *imp = (real)0.5 * (solimp[0] + solimp[1]);
    *impP = 0;
    return;
  }
  real x = (pos - margin) / solimp[2], sgn = 1;
  if (x < 0) {
    x = -x;
    sgn = -1;
  }
  if (x >= 1 || x <= 0) {
    *imp = x >= 1 ? solimp[1] : solimp[0];
    *impP = 0;
    return;
  }
  real y, yP, p = solimp[4], mid = solimp[3];
  if (p == 1) {
    y = x;
    yP = 1;
  } else if (x <= mid) {
    real a = 1 / imp_pow(mid, p - 1);
    y = a * imp_pow(x, p);
    yP = p * a * imp_pow(x, p - 1);
  } else {
    real b = 1 / imp_pow(1 - mid, p - 1);
    y = 1 - b * imp_pow(1 - x, p);
    yP = p * b * imp_pow(1 - x, p - 1);
  }
  *imp = solimp[0] + y * (solimp[1] - solimp[0]);
  *impP = yP * sgn * (solimp[1] - solimp[0]) / solimp[2];
}

/* Spring-damper of the reference acceleration a_ref = −B·v − K·d·(pos − margin):
     standard (timeconst τ > 0, dampratio ζ > 0): K = 1/(dmax²·τ²·ζ²), B = 2/(dmax·τ);
     direct (−stiffness, −damping):               K = −solref[0]/dmax², B = −solref[1]/dmax;
   friction rows (frictionloss, elliptic tangential) have K = 0.  solref as returned by sol_params. */
void rl_solref_kb(const real solref[2], real dmax, int friction, real *K, real *B) {
  if (friction) *K = 0;
  else if (solref[0] > 0) *K = 1 / rl_fmax(RL_MINVAL, dmax * dmax * solref[0] * solref[0] * solref[1] * solref[1]);
  else *K = -solref[0] / rl_fmax(RL_MINVAL, dmax * dmax);
  if (solref[1] > 0) *B = 2 / rl_fmax(RL_MINVAL, dmax * solref[0]);
  else *B = -solref[1] / rl_fmax(RL_MINVAL, dmax);
}

/* Friction rows of a contact starting at row i (MuJoCo's cone regularization):
     R_1 = R_0 / impratio;  contact mu = μ_1·sqrt(R_1/R_0);
     elliptic: R_{j+1} = R_1·μ_1²/μ_j² (j = 1..dim−2) so that R·μ² is equal on the friction rows;
     pyramidal: every edge row R = 2·mu²·R_0 (matches the elliptic model's friction impedance). */
static int cone_regularize(const rl_model *m, rl_data *d, int i) {
  real *R = d->efc_R;
  rl_contact *con = d->contact + d->efc_id[i];
  int dim = con->dim;
  const real *f = con->friction;
  R[i + 1] = R[i] / rl_fmax(RL_MINVAL, m->opt.impratio);
  con->mu = f[0] * rl_sqrt(R[i + 1] / R[i]);
  if (d->efc_type[i] == RL_CNSTR_CONTACT_ELLIPTIC) {
    for (int j = 1; j < dim - 1; j++) R[i + j + 1] = R[i + 1] * f[0] * f[0] / (f[j] * f[j]);
    return dim;
  }
  real Rpy = 2 * con->mu * con->mu * R[i];
  for (int j = 0; j < 2 * (dim - 1); j++) R[i + j] = Rpy;
  return 2 * (dim - 1);
}

/* R = max(mjMINVAL, (1−d)/d·diagApprox) per row with d the block's impedance, KBIP = (K, B, d, d'),
   the cone rules for friction rows, D = 1/R, and diagApprox ← R·d/(1−d) (MuJoCo's mj_makeImpedance). */
void rl_make_impedance(const rl_model *m, rl_data *d) {
  real *R = d->efc_R, *KBIP = d->efc_KBIP;
  for (int i = 0; i < d->nefc;) {
    real solref[2], solimp[5], imp, impP;
    int dim;
    sol_params(m, d, i, solref, solimp);
    real pos = block_pos(m, d, i, &dim);
    rl_solimp_impedance(solimp, pos, d->efc_margin[i], &imp, &impP);
    real K, B; /* the block's spring and damper (a friction row's K is 0), once for its rows */
    rl_solref_kb(solref, solimp[1], 0, &K, &B);
    for (int j = 0; j < dim; j++) {
      int r = i + j, tp = d->efc_type[r];
      R[r] = rl_fmax(RL_MINVAL, (1 - imp) * d->efc_diagApprox[r] / imp);
      int friction =
          tp == RL_CNSTR_FRICTION_DOF || tp == RL_CNSTR_FRICTION_TENDON || (tp == RL_CNSTR_CONTACT_ELLIPTIC && j > 0);
      KBIP[4 * r] = friction ? 0 : K;
      KBIP[4 * r + 1] = B;
      KBIP[4 * r + 2] = imp;
      KBIP[4 * r + 3] = impP;
    }
    i += dim;
  }
  for (int i = d->ne + d->nf; i < d->nefc; i++)
    if (d->efc_type[i] == RL_CNSTR_CONTACT_PYRAMIDAL || d->efc_type[i] == RL_CNSTR_CONTACT_ELLIPTIC)
      i += cone_regularize(m, d, i) - 1;
  for (int i = 0; i < d->nefc; i++) d->efc_D[i] = 1 / R[i];
  for (int i = 0; i < d->nefc; i++) d->efc_diagApprox[i] = R[i] * KBIP[4 * i + 2] / (1 - KBIP[4 * i + 2]);
}

/* ---------------------------------------------------------------- reference acceleration */

/* efc_vel = J·qvel (CSR, ascending columns); efc_aref = −B·vel − K·imp·(pos − margin) */
void rl_reference_constraint(const rl_model *m, rl_data *d) {
  (void)m;
  const real *KBIP = d->efc_KBIP;
  for (int i = 0; i < d->nefc; i++) {
    const real *J = d->efc_J + d->efc_J_rowadr[i];
    const int *col = d->efc_J_colind + d->efc_J_rowadr[i];
    real v = 0;
    for (int k = 0; k < d->efc_J_rownnz[i]; k++) v += J[k] * d->qvel[col[k]];
    d->efc_vel[i] = v;
    d->efc_aref[i] =
        -KBIP[4 * i + 1] * d->efc_vel[i] - KBIP[4 * i] * KBIP[4 * i + 2] * (d->efc_pos[i] - d->efc_margin[i]);
  }
}

/* ---------------------------------------------------------------- driver */

void rl_make_constraint(const rl_model *m, rl_data *d) {
  d->ne = d->nf = d->nefc = d->nnzJ = 0;
  if (m->opt.disableflags & RL_DSBL_CONSTRAINT) {
    for (int i = 0; i < d->ncon; i++) d->contact[i].efc_address = -1;
    return;
  }
  size_t mark = rl_arena_mark(d);
  size_t nv = (size_t)(m->nv > 0 ? m->nv : 1);
  rowbuf w;
  w.chain = (int *)(void *)rl_arena_take(d, nv);
  w.side = (int *)(void *)rl_arena_take(d, nv);
  w.jac = rl_arena_take(d, 6 * nv);
  w.tmp = rl_arena_take(d, 6 * nv);
  if (!w.chain || !w.side || !w.jac || !w.tmp) { /* arena sized by rl_constraint_arena: cannot happen */
    rl_arena_release(d, mark);
    return;
  }
  instantiate_equality(m, d, &w);
  instantiate_friction(m, d, &w);
  instantiate_limit(m, d, &w);
  instantiate_contact(m, d, &w);
  rl_arena_release(d, mark);
  if (!d->nefc) return;
  diag_approx(m, d);
  rl_make_impedance(m, d);
  rl_reference_constraint(m, d);
}
