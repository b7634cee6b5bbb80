/* sim.c — `rigidlab sim`: run one engine on a model and write the trajectory CSV
 * (step,time,qpos_*,qvel_*, then diagnostics: energy,ncon). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "csv.h"
#include "pair.h"
#include "states.h"
#include "rl_so3.h"
#include "tolerances.h"

#define rl_cmd_sim RL_NAME(cmd_sim)
#define rl_energy RL_NAME(energy)

/* E = ½ q̇ᵀMq̇ − Σ m_b g·xipos_b + ½ Σ k (q − q_spring)²  (ball/free rotation: ½k‖Log‖²),
   the potential/kinetic split MuJoCo's mj_energyPos/mj_energyVel use.  Needs a forward pass. */
static double rl_energy(const rl_model *m, rl_data *d) {
  double e = 0;
  if (!(m->opt.disableflags & RL_DSBL_GRAVITY))
    for (int b = 1; b < m->nbody; b++) e -= m->body_mass[b] * rl_v3_dot(m->opt.gravity, d->xipos + 3 * b);
  if (!(m->opt.disableflags & RL_DSBL_PASSIVE))
    for (int j = 0; j < m->njnt; j++) {
      double k = m->jnt_stiffness[j];
      if (k == 0) continue;
      int pa = m->jnt_qposadr[j];
      if (m->jnt_type[j] == RL_JNT_SLIDE || m->jnt_type[j] == RL_JNT_HINGE) {
        double x = d->qpos[pa] - m->qpos_spring[pa];
        e += 0.5 * k * x * x;
      } else {
        if (m->jnt_type[j] == RL_JNT_FREE) {
          for (int c = 0; c < 3; c++) {
            double x = d->qpos[pa + c] - m->qpos_spring[pa + c];
            e += 0.5 * k * x * x;
          }
          pa += 3;
        }
        real w[3];
        rl_q_sub_local(w, d->qpos + pa, m->qpos_spring + pa);
        e += 0.5 * k * rl_v3_dot(w, w);
      }
    }
  size_t mark = rl_arena_mark(d);
  real *mv = rl_arena_take(d, (size_t)m->nv);
  rl_mul_m(m, d, mv, d->qvel);
  for (int i = 0; i < m->nv; i++) e += 0.5 * (double)d->qvel[i] * mv[i];
  rl_arena_release(d, mark);
  return e;
}

static void header(rl_csv *w, int nq, int nv) {
  char name[32];
  rl_csv_str(w, "step");
  rl_csv_str(w, "time");
  for (int i = 0; i < nq; i++) { snprintf(name, sizeof name, "qpos_%d", i); rl_csv_str(w, name); }
  for (int i = 0; i < nv; i++) { snprintf(name, sizeof name, "qvel_%d", i); rl_csv_str(w, name); }
  rl_csv_str(w, "energy");
  rl_csv_str(w, "ncon");
  rl_csv_end_row(w);
}

static void row_rl(rl_csv *w, long step, const rl_model *m, rl_data *d) {
  rl_csv_int(w, step);
  rl_csv_num(w, d->time);
  for (int i = 0; i < m->nq; i++) rl_csv_num(w, d->qpos[i]);
  for (int i = 0; i < m->nv; i++) rl_csv_num(w, d->qvel[i]);
  rl_fwd_position(m, d);
  rl_csv_num(w, rl_energy(m, d));
  rl_csv_int(w, 0);
  rl_csv_end_row(w);
}

static void row_mj(rl_csv *w, long step, const mjModel *m, mjData *d) {
  rl_csv_int(w, step);
  rl_csv_num(w, d->time);
  for (int i = 0; i < m->nq; i++) rl_csv_num(w, d->qpos[i]);
  for (int i = 0; i < m->nv; i++) rl_csv_num(w, d->qvel[i]);
  mj_forward(m, d);
  mj_energyPos(m, d);
  mj_energyVel(m, d);
  rl_csv_num(w, d->energy[0] + d->energy[1]);
  rl_csv_int(w, d->ncon);
  rl_csv_end_row(w);
}

int rl_cmd_sim(const rl_sim_args *a) {
  char err[1024], why[512];
  rl_pair p;
  int newton = !strcmp(a->engine, "newton"), mujoco = !strcmp(a->engine, "mujoco");
  if (!newton && !mujoco) {
    rl_errorf("sim: --engine '%s' is not available (allowed: newton, mujoco; cg and avbd come with the solver issues)", a->engine);
    return RL_EXIT_BADINPUT;
  }
  if (mujoco && RL_IS_F32) {
    rl_errorf("sim: --engine mujoco runs in f64 only (MuJoCo's mjtNum is double)");
    return RL_EXIT_BADINPUT;
  }
  int st = rl_pair_load(&p, &a->c, a->dt, err, sizeof err);
  if (st) {
    rl_errorf("%s", err);
    return st;
  }
  if (newton && !rl_constraint_free(&p, why, sizeof why)) {
    rl_errorf("%s: the newton engine runs constraint-free models only until the constraint solver lands: %s "
              "(use --engine mujoco, or --opt disable=constraint)", a->c.model, why);
    rl_pair_free(&p);
    return RL_EXIT_BADINPUT;
  }
  long steps = a->steps >= 0 ? a->steps : lround(a->duration / p.mjm->opt.timestep);
  mjData *mjd = mj_makeData(p.mjm);
  rl_data *d = rl_data_alloc(p.m);
  mj_resetData(p.mjm, mjd);
  if (a->key) {
    int k = rl_find_key(p.mjm, a->key);
    if (k < 0) {
      rl_errorf("%s: no keyframe '%s' (the model has %d)", a->c.model, a->key, p.mjm->nkey);
      st = RL_EXIT_BADINPUT;
      goto done;
    }
    mj_resetDataKeyframe(p.mjm, mjd, k);
    for (int i = 0; i < p.mjm->nq; i++)
      if (!isfinite(mjd->qpos[i])) {
        rl_errorf("%s: keyframe '%s' has a non-finite qpos[%d]", a->c.model, a->key, i);
        st = RL_EXIT_BADINPUT;
        goto done;
      }
    for (int i = 0; i < p.mjm->nv; i++)
      if (!isfinite(mjd->qvel[i])) {
        rl_errorf("%s: keyframe '%s' has a non-finite qvel[%d]", a->c.model, a->key, i);
        st = RL_EXIT_BADINPUT;
        goto done;
      }
  }
  rl_set_state(&p, d, mjd, mjd->qpos, mjd->qvel, mjd->ctrl);
  rl_csv *w = a->c.out;
  w->f32 = RL_IS_F32 && newton;
  header(w, p.m->nq, p.m->nv);
  if (newton) {
    row_rl(w, 0, p.m, d);
    for (long s = 1; s <= steps; s++) {
      rl_step_smooth(p.m, d);
      row_rl(w, s, p.m, d);
    }
  } else {
    row_mj(w, 0, p.mjm, mjd);
    for (long s = 1; s <= steps; s++) {
      mj_step(p.mjm, mjd);
      row_mj(w, s, p.mjm, mjd);
    }
  }
done:
  rl_data_free(d);
  mj_deleteData(mjd);
  rl_pair_free(&p);
  return st;
}
