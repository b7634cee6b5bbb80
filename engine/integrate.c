/* integrate.c — time integration of the generalized state (MuJoCo 2.2.2's integrators). */
#include <string.h>
#include "rl_engine.h"
#include "rl_so3.h"

/* q ← q ⊕ h·v: hinge/slide q += h·v; ball q ← q ⊗ Exp(h·ω) (ω in the body frame);
   free: position += h·v, then as ball. */
void rl_integrate_pos(const rl_model *m, real *qpos, const real *qvel, real h) {
  for (int j = 0; j < m->njnt; j++) {
    int pa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
    switch (m->jnt_type[j]) {
    case RL_JNT_FREE:
      for (int c = 0; c < 3; c++) qpos[pa + c] += h * qvel[da + c];
      pa += 3;
      da += 3;
      /* fall through */
    case RL_JNT_BALL: rl_q_integrate_local(qpos + pa, qvel + da, h); break;
    default: qpos[pa] += h * qvel[da]; break;
    }
  }
}

/* act ← act + h·act_dot (clamped to actrange); q̇ ← q̇ + h·q̈ ; q ← q ⊕ h·q̇ (semi-implicit: the new
   velocity moves the position);  t += h */
void rl_advance(const rl_model *m, rl_data *d, const real *qacc) {
  real h = m->opt.timestep;
  if (m->na) rl_act_advance(m, d, d->act_dot, h);
  for (int i = 0; i < m->nv; i++) d->qvel[i] += h * qacc[i];
  rl_integrate_pos(m, d->qpos, d->qvel, h);
  d->time += h;
}

/* 1 if any dof has damping b > 0 (Euler's implicit damping applies) */
static int has_damping(const rl_model *m) {
  for (int i = 0; i < m->nv; i++)
    if (m->dof_damping[i] > 0) return 1;
  return 0;
}

/* Semi-implicit Euler with implicit dof damping (MuJoCo's mj_Euler):
   with any damping b > 0, q̈' solves (M + h·diag(b))·q̈' = qfrc_smooth + qfrc_constraint, else q̈' = q̈.
   f64: the LᵀDL of qM + h·diag(b), as MuJoCo; f32 (RL_LOCAL_FRAMES): the local-frame recursion. */
void rl_euler(const rl_model *m, rl_data *d) {
  if (RL_LOCAL_FRAMES && rl_euler_recursive(m, d) == 0) return;
  if (!has_damping(m)) {
    rl_advance(m, d, d->qacc);
    return;
  }
  size_t mark = rl_arena_mark(d);
  real *H = rl_arena_take(d, (size_t)m->nM);
  real *hdiag = rl_arena_take(d, (size_t)m->nv);
  real *acc = rl_arena_take(d, (size_t)m->nv);
  for (int i = 0; i < m->nv; i++) acc[i] = d->qfrc_smooth[i] + d->qfrc_constraint[i];
  memcpy(H, d->qM, sizeof(real) * (size_t)m->nM);
  for (int i = 0; i < m->nv; i++) H[m->dof_Madr[i]] += m->opt.timestep * m->dof_damping[i];
  /* factor and solve in the arena, leaving qLD (the factor of M) untouched */
  rl_factor_ld(m, H, hdiag);
  rl_solve_ld(m, H, hdiag, acc);
  rl_advance(m, d, acc);
  rl_arena_release(d, mark);
}

/* rl_euler without qM: (M + h·diag(b))·q̈' = qfrc_smooth + qfrc_constraint by the articulated-body
   recursion at each body's COM (rl_solve_m_local) with armature + h·b, O(nv).  −1 (nothing advanced) when
   the arena is too small. */
int rl_euler_recursive(const rl_model *m, rl_data *d) {
  if (!has_damping(m)) {
    rl_advance(m, d, d->qacc);
    return 0;
  }
  size_t mark = rl_arena_mark(d);
  real *acc = rl_arena_take(d, (size_t)m->nv);
  int ok = acc != NULL;
  if (ok) {
    for (int i = 0; i < m->nv; i++) acc[i] = d->qfrc_smooth[i] + d->qfrc_constraint[i];
    ok = rl_solve_m_local(m, d, acc, m->opt.timestep, m->dof_damping) == 0;
  }
  if (ok) rl_advance(m, d, acc);
  rl_arena_release(d, mark);
  return ok ? 0 : -1;
}

/* Classic RK4 (MuJoCo's mj_RungeKutta with N = 4): stages X_i = X_0 ⊕ h·Σ_j A_ij F_j with
   A = [½; 0 ½; 0 0 1], c = (½, ½, 1), F = (q̇, q̈); final X = X_0 ⊕ h·Σ b_j F_j, b = (⅙, ⅓, ⅓, ⅙).
   The activations are part of X (rate act_dot), clamped to actrange once at the end.
   Expects d to hold a forward pass at X_0 (qacc valid); forward evaluates F at each stage. */
void rl_rk4_with(const rl_model *m, rl_data *d, void (*forward)(const rl_model *, rl_data *)) {
  static const real A[9] = {0.5, 0, 0, 0, 0.5, 0, 0, 0, 1};
  static const real B[4] = {(real)(1.0 / 6.0), (real)(1.0 / 3.0), (real)(1.0 / 3.0), (real)(1.0 / 6.0)};
  static const real C[3] = {0.5, 0.5, 1};
  int nq = m->nq, nv = m->nv;
  real h = m->opt.timestep, t0 = d->time;
  size_t mark = rl_arena_mark(d);
  real *qpos0 = rl_arena_take(d, (size_t)nq);
  real *qvel0 = rl_arena_take(d, (size_t)nv);
  real *F = rl_arena_take(d, 8 * (size_t)nv); /* F_j = (q̇_j, q̈_j), j = 0..3 */
  real *dX = rl_arena_take(d, 2 * (size_t)nv);
  int na = m->na;
  real *act0 = na ? rl_arena_take(d, (size_t)na) : NULL;
  real *Fa = na ? rl_arena_take(d, 4 * (size_t)na) : NULL; /* act_dot at each stage */
  real *dA = na ? rl_arena_take(d, (size_t)na) : NULL;
  if (na) {
    memcpy(act0, d->act, sizeof(real) * (size_t)na);
    memcpy(Fa, d->act_dot, sizeof(real) * (size_t)na);
  }
  memcpy(qpos0, d->qpos, sizeof(real) * (size_t)nq);
  memcpy(qvel0, d->qvel, sizeof(real) * (size_t)nv);
  memcpy(F, d->qvel, sizeof(real) * (size_t)nv);
  memcpy(F + nv, d->qacc, sizeof(real) * (size_t)nv);
  for (int i = 1; i < 4; i++) {
    for (int k = 0; k < 2 * nv; k++) dX[k] = F[k] * A[(i - 1) * 3];
    for (int j = 1; j < i; j++)
      for (int k = 0; k < 2 * nv; k++) dX[k] += F[2 * nv * j + k] * A[(i - 1) * 3 + j];
    memcpy(d->qpos, qpos0, sizeof(real) * (size_t)nq);
    rl_integrate_pos(m, d->qpos, dX, h);
    for (int k = 0; k < nv; k++) d->qvel[k] = qvel0[k] + h * dX[nv + k];
    for (int k = 0; k < na; k++) {
      dA[k] = Fa[k] * A[(i - 1) * 3];
      for (int j = 1; j < i; j++) dA[k] += Fa[na * j + k] * A[(i - 1) * 3 + j];
      d->act[k] = act0[k] + h * dA[k];
    }
    d->time = t0 + C[i - 1] * h;
    /* MuJoCo 2.2.2 saves every forward pass's q̈ as the next one's warm start, so each stage starts from
       the previous stage's q̈.  Newton and CG reach the same optimum from either start; the projected
       Gauss–Seidel iterate (PGS, noslip) depends on it, so there the stages chain their warm starts as
       MuJoCo's. */
    if (m->opt.solver == RL_SOLVER_PGS || m->opt.noslip_iterations > 0) memcpy(d->qacc_warmstart, d->qacc, sizeof(real) * (size_t)nv);
    forward(m, d);
    memcpy(F + 2 * nv * i, d->qvel, sizeof(real) * (size_t)nv);
    memcpy(F + 2 * nv * i + nv, d->qacc, sizeof(real) * (size_t)nv);
    if (na) memcpy(Fa + na * i, d->act_dot, sizeof(real) * (size_t)na);
  }
  for (int k = 0; k < 2 * nv; k++) dX[k] = F[k] * B[0];
  for (int j = 1; j < 4; j++)
    for (int k = 0; k < 2 * nv; k++) dX[k] += F[2 * nv * j + k] * B[j];
  memcpy(d->qpos, qpos0, sizeof(real) * (size_t)nq);
  memcpy(d->qvel, qvel0, sizeof(real) * (size_t)nv);
  rl_integrate_pos(m, d->qpos, dX, h);
  for (int k = 0; k < nv; k++) d->qvel[k] += h * dX[nv + k];
  if (na) {
    for (int k = 0; k < na; k++) {
      dA[k] = Fa[k] * B[0];
      for (int j = 1; j < 4; j++) dA[k] += Fa[na * j + k] * B[j];
    }
    memcpy(d->act, act0, sizeof(real) * (size_t)na);
    rl_act_advance(m, d, dA, h);
  }
  d->time = t0 + h;
  rl_arena_release(d, mark);
}

void rl_rk4(const rl_model *m, rl_data *d) { rl_rk4_with(m, d, rl_forward_smooth); }

void rl_step_smooth(const rl_model *m, rl_data *d) {
  rl_check_state(m, d);
  rl_forward_smooth(m, d);
  /* the bad-state policy (rl_engine.h): a bad qacc resets; still bad after it, the step is not integrated */
  if (!rl_check_acc(m, d)) {
    rl_forward_smooth(m, d);
    if (!rl_state_ok(d->qacc, m->nv)) {
      memset(d->qacc, 0, sizeof(real) * (size_t)m->nv);
      d->time += m->opt.timestep;
      return;
    }
  }
  if (m->opt.integrator == RL_INT_RK4) rl_rk4(m, d);
  else if (m->opt.integrator != RL_INT_IMPLICIT) rl_euler(m, d);
  else if (rl_implicit(m, d)) {
    d->warning[RL_WARN_IMPLICIT]++;
    rl_euler(m, d);
  }
}
