/* sim.c — `rigidlab sim`: run one engine on a model and write the trajectory CSV
 * (step,time,qpos_*,qvel_*, then the diagnostics of ARCHITECTURE.md:
 * iterations,converged,residual,penetration_max,anchor_err_max,axis_err_max,energy,ncon,bad_state).
 * Diagnostics describe the step that produced the row: solver iterations (AVBD: sweeps), whether it
 * met its tolerance, its final residual (soft engines and MuJoCo: the last scaled gradient; AVBD: the
 * last sweep's largest update), the deepest penetration, the largest equality/joint anchor gap (m) and
 * axis or rotation error (rad), and the contact count; energy is evaluated at the row's state.  For
 * the soft engines and MuJoCo the anchor/axis errors are those of the equality rows (connect and the
 * translational weld rows: anchor; the rotational weld rows: axis) at the step's start; AVBD's are
 * after its step over every joint and equality.  Row 0 has no step: iterations 0, converged 1, residual 0.
 * bad_state counts the engine's bad-state warnings up to the row (docs/reliability.md: a non-finite or
 * huge qpos, qvel, qacc or ctrl, and what the engine did about it); a run with any says so on stderr. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "csv.h"
#include "pair.h"
#include "states.h"
#include "rl_so3.h"
#include "rl_avbd.h"
#include "rl_batch.h"
#ifdef RL_HAVE_CUDA
#include "rl_batch_cuda.h"
#endif
#include "tolerances.h"

#define rl_cmd_sim RL_NAME(cmd_sim)
#define rl_energy  RL_NAME(energy)

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

/* qpos_i += eps·max(|qpos_i|, 1), − on even i and + on odd i (eps 0: unchanged): a start moved by rounding-sized
   amounts, the same for every engine, so that a run against the unmoved one measures how far the trajectory
   amplifies them (quaternions are left as moved: every engine normalizes them where it reads them) */
static void perturb_start(const mjModel *m, double *qpos, double eps) {
  if (!(eps > 0)) return;
  for (int i = 0; i < m->nq; i++) qpos[i] += (i % 2 ? eps : -eps) * fmax(fabs(qpos[i]), 1);
}

static void header(rl_csv *w, int nq, int nv) {
  char name[32];
  rl_csv_str(w, "step");
  rl_csv_str(w, "time");
  for (int i = 0; i < nq; i++) {
    snprintf(name, sizeof name, "qpos_%d", i);
    rl_csv_str(w, name);
  }
  for (int i = 0; i < nv; i++) {
    snprintf(name, sizeof name, "qvel_%d", i);
    rl_csv_str(w, name);
  }
  const char *diag[] = {"iterations",   "converged", "residual", "penetration_max", "anchor_err_max",
                        "axis_err_max", "energy",    "ncon",     "bad_state"};
  for (int k = 0; k < 9; k++) rl_csv_str(w, diag[k]);
  rl_csv_end_row(w);
}

/* the diagnostics of one step (bad_state: the engine's bad-state warnings so far, see bad_state_rl) */
typedef struct step_diag {
  int iterations, converged, ncon, bad_state;
  double residual, penetration, anchor, axis;
} step_diag;

/* anchor (m) and axis (rad) errors of the equality rows: connect rows 0–2, weld rows 0–2 | 3–5 (joint and
   tendon couplings, one scalar row each, are no anchor) */
static void equality_errors(int ne, const int *type, const int *id, const int *eqtype, const double *pos,
                            double *anchor, double *axis) {
  for (int i = 0; i < ne;) {
    if (type[i] != RL_CNSTR_EQUALITY) break;
    int t = eqtype[id[i]], n = t == RL_EQ_CONNECT ? 3 : t == RL_EQ_WELD ? 6 : 1;
    if ((t == RL_EQ_CONNECT || t == RL_EQ_WELD) && i + n <= ne) {
      *anchor = fmax(*anchor, sqrt(pos[i] * pos[i] + pos[i + 1] * pos[i + 1] + pos[i + 2] * pos[i + 2]));
      if (t == RL_EQ_WELD)
        *axis = fmax(*axis, sqrt(pos[i + 3] * pos[i + 3] + pos[i + 4] * pos[i + 4] + pos[i + 5] * pos[i + 5]));
    }
    i += n;
  }
}

static step_diag diag_rl(const rl_model *m, const rl_data *d, int stepped) {
  step_diag g = {0, 1, d->ncon, 0, 0, 0, 0, 0};
  if (!stepped) return g;
  double pos[6 * 64];
  int ne = d->ne < 6 * 64 ? d->ne : 6 * 64;
  for (int i = 0; i < ne; i++) pos[i] = d->efc_pos[i];
  equality_errors(ne, d->efc_type, d->efc_id, m->eq_type, pos, &g.anchor, &g.axis);
  g.iterations = d->solver_iter;
  g.converged = d->solver_converged;
  if (d->solver_iter > 0)
    g.residual = d->solver[(d->solver_iter < RL_NSOLVER ? d->solver_iter : RL_NSOLVER) - 1].gradient;
  for (int i = 0; i < d->ncon; i++) g.penetration = fmax(g.penetration, -(double)d->contact[i].dist);
  return g;
}

/* MuJoCo 2.2.2 has no converged flag: a step converged when it stopped before its iteration limit */
static step_diag diag_mj(const mjModel *m, const mjData *d, int stepped) {
  step_diag g = {0, 1, d->ncon, 0, 0, 0, 0, 0};
  if (!stepped) return g;
  equality_errors(d->ne, d->efc_type, d->efc_id, m->eq_type, d->efc_pos, &g.anchor, &g.axis);
  g.iterations = d->solver_iter;
  g.converged = d->nefc == 0 || d->solver_iter < m->opt.iterations;
  if (d->solver_iter > 0)
    g.residual = d->solver[(d->solver_iter < mjNSOLVER ? d->solver_iter : mjNSOLVER) - 1].gradient;
  for (int i = 0; i < d->ncon; i++) g.penetration = fmax(g.penetration, -d->contact[i].dist);
  return g;
}

/* bad-state warnings so far: bad qpos, qvel, qacc (each a reset, or for AVBD's bad qacc an undone step)
   and bad ctrl (zeroed), the engine's counters (rl_engine.h; MuJoCo's mjWARN_BADQPOS … mjWARN_BADCTRL) */
static int bad_state_rl(const rl_data *d) {
  return d->warning[RL_WARN_BADQPOS] + d->warning[RL_WARN_BADQVEL] + d->warning[RL_WARN_BADQACC] +
         d->warning[RL_WARN_BADCTRL];
}
static int bad_state_mj(const mjData *d) {
  return d->warning[mjWARN_BADQPOS].number + d->warning[mjWARN_BADQVEL].number + d->warning[mjWARN_BADQACC].number +
         d->warning[mjWARN_BADCTRL].number;
}

static void diag_cols(rl_csv *w, const step_diag *g, double energy) {
  rl_csv_int(w, g->iterations);
  rl_csv_int(w, g->converged);
  rl_csv_num(w, g->residual);
  rl_csv_num(w, g->penetration);
  rl_csv_num(w, g->anchor);
  rl_csv_num(w, g->axis);
  rl_csv_num(w, energy);
  rl_csv_int(w, g->ncon);
  rl_csv_int(w, g->bad_state);
}

/* AVBD's own statistics of its last step */
static step_diag diag_avbd(const rl_avbd *am, int stepped) {
  step_diag g = {0, 1, 0, 0, 0, 0, 0, 0};
  if (!stepped) return g;
  g.iterations = am->stat.iterations;
  g.converged = am->stat.converged;
  g.ncon = am->stat.ncon;
  g.residual = am->stat.update;
  g.penetration = am->stat.penetration;
  g.anchor = am->stat.anchor_err;
  g.axis = am->stat.axis_err;
  return g;
}

static void row_rl(rl_csv *w, long step, const rl_model *m, rl_data *d, const rl_avbd *am) {
  step_diag g = am ? diag_avbd(am, step > 0) : diag_rl(m, d, step > 0);
  g.bad_state = bad_state_rl(d);
  rl_csv_int(w, step);
  rl_csv_num(w, d->time);
  for (int i = 0; i < m->nq; i++) rl_csv_num(w, d->qpos[i]);
  for (int i = 0; i < m->nv; i++) rl_csv_num(w, d->qvel[i]);
  rl_fwd_position(m, d);
  if (step == 0 && !am) {
    rl_collision(m, d);
    g.ncon = d->ncon;
  }
  diag_cols(w, &g, rl_energy(m, d));
  rl_csv_end_row(w);
}

static void row_mj(rl_csv *w, long step, const mjModel *m, mjData *d) {
  step_diag g = diag_mj(m, d, step > 0);
  g.bad_state = bad_state_mj(d);
  rl_csv_int(w, step);
  rl_csv_num(w, d->time);
  for (int i = 0; i < m->nq; i++) rl_csv_num(w, d->qpos[i]);
  for (int i = 0; i < m->nv; i++) rl_csv_num(w, d->qvel[i]);
  /* the row's forward pass must not change the next step: MuJoCo 2.2.2's mj_forward leaves its q̈ in
     qacc_warmstart, from which the next mj_step's solver would start (PGS's iterate depends on it) */
  mjtNum *warm = malloc(sizeof(mjtNum) * (size_t)(m->nv > 0 ? m->nv : 1));
  if (warm) mju_copy(warm, d->qacc_warmstart, m->nv);
  mj_forward(m, d);
  if (warm) mju_copy(d->qacc_warmstart, warm, m->nv);
  free(warm);
  /* MuJoCo 2.2.2 computes energies only with the energy flag; it does not change the dynamics */
  int flags = m->opt.enableflags;
  ((mjModel *)m)->opt.enableflags |= mjENBL_ENERGY;
  mj_energyPos(m, d);
  mj_energyVel(m, d);
  ((mjModel *)m)->opt.enableflags = flags;
  if (step == 0) g.ncon = d->ncon;
  diag_cols(w, &g, d->energy[0] + d->energy[1]);
  rl_csv_end_row(w);
}

/* Batch mode (--device cpu|cuda --envs N): N environments of the batch API from the start state of d (the
   same for all), stepped together; every row of environment e of the subset is its step with the columns of
   the single run after a first column env.  cpu: rl_batch_step (each environment bit-identical to the
   single run); cuda: the device, states read back after every step (rl_batch_cuda_sync). */
static int sim_batch(const rl_sim_args *a, const rl_pair *p, const rl_data *d0, long steps) {
  int engine = !strcmp(a->engine, "avbd") ? RL_BATCH_AVBD : !strcmp(a->engine, "cg") ? RL_BATCH_CG : RL_BATCH_NEWTON;
  int cuda = !strcmp(a->device, "cuda");
  char err[512];
  if (!strcmp(a->engine, "mujoco") || !strcmp(a->engine, "pgs")) {
    rl_errorf("sim: --envs runs rigidlab's engines newton, cg and avbd, not %s", a->engine);
    return RL_EXIT_BADINPUT;
  }
  if (cuda) {
#ifdef RL_HAVE_CUDA
    if (!rl_cuda_devices(err, sizeof err)) {
      rl_errorf("sim: %s", err);
      return RL_EXIT_BADINPUT;
    }
#else
    rl_errorf("sim: no CUDA device (this build has no CUDA backend: nvcc not found or -Dcuda=disabled)");
    return RL_EXIT_BADINPUT;
#endif
  }
  rl_batch *b = rl_batch_create(p->m, a->nenvs, engine, NULL, err, sizeof err);
  if (!b) {
    rl_errorf("%s: %s", a->c.model, err);
    return RL_EXIT_BADINPUT;
  }
  for (int e = 0; e < b->n; e++) {
    rl_batch_set_reset_state(b, e, d0->qpos, d0->qvel);
    memcpy(b->d[e]->ctrl, d0->ctrl, sizeof(real) * (size_t)p->m->nu);
  }
  rl_batch_reset(b, NULL);
  for (int e = 0; e < b->n; e++) memcpy(b->d[e]->ctrl, d0->ctrl, sizeof(real) * (size_t)p->m->nu);
#ifdef RL_HAVE_CUDA
  if (cuda && rl_batch_cuda_attach(b, RL_CUDA_GPU, err, sizeof err)) {
    rl_errorf("%s: %s", a->c.model, err);
    rl_batch_free(b);
    return RL_EXIT_BADINPUT;
  }
#endif
  rl_csv *w = a->c.out;
  w->f32 = RL_IS_F32;
  rl_csv_str(w, "env");
  header(w, p->m->nq, p->m->nv);
  for (long s = 0; s <= steps; s++) {
    if (s > 0) {
#ifdef RL_HAVE_CUDA
      if (cuda) {
        rl_batch_cuda_step(b);
        rl_batch_cuda_sync(b);
      } else
#endif
        rl_batch_step(b, rl_batch_max_threads());
    }
    for (int k = 0; k < a->nsubset; k++) {
      int e = a->subset[k];
      rl_csv_int(w, e);
      row_rl(w, s, b->m[e], b->d[e], b->am[e]);
    }
  }
  long resets = 0;
  for (int e = 0; e < b->n; e++) resets += b->resets[e];
  if (resets) fprintf(stderr, "sim: %s: warning: %ld environment reset(s) by the divergence policy\n", a->c.model, resets);
#ifdef RL_HAVE_CUDA
  if (cuda) rl_batch_cuda_detach(b);
#endif
  rl_batch_free(b);
  return RL_EXIT_OK;
}

int rl_cmd_sim(const rl_sim_args *a) {
  char err[1024], why[512];
  rl_pair p;
  int newton = !strcmp(a->engine, "newton"), cg = !strcmp(a->engine, "cg"), mujoco = !strcmp(a->engine, "mujoco");
  int avbd = !strcmp(a->engine, "avbd"), pgs = !strcmp(a->engine, "pgs");
  rl_avbd *am = NULL;
  if (!newton && !cg && !pgs && !mujoco && !avbd) {
    rl_errorf("sim: --engine '%s' is not available (allowed: newton, cg, pgs, avbd, mujoco)", a->engine);
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
  /* the soft engines: rigidlab's solver is the engine's; the model's other options stay */
  if (newton || cg || pgs) {
    p.m->opt.solver = cg ? RL_SOLVER_CG : pgs ? RL_SOLVER_PGS : RL_SOLVER_NEWTON;
    if (rl_solver_check_options(p.m, why, sizeof why)) {
      rl_errorf("%s: %s", a->c.model, why);
      rl_pair_free(&p);
      return RL_EXIT_BADINPUT;
    }
  }
  if (avbd) {
    rl_avbd_param prm = rl_avbd_default_param(p.m); /* contacts: rl_collision's where dynamic bodies can touch */
    am = rl_avbd_build(p.m, &prm, why, sizeof why);
    if (!am) {
      rl_errorf("%s: %s", a->c.model, why);
      rl_pair_free(&p);
      return RL_EXIT_BADINPUT;
    }
  }
  long steps = rl_run_steps(a, p.mjm->opt.timestep, err, sizeof err);
  if (steps < 0) {
    rl_errorf("sim: %s", err);
    rl_avbd_free(am);
    rl_pair_free(&p);
    return RL_EXIT_BADINPUT;
  }
  mjData *mjd = mj_makeData(p.mjm);
  rl_data *d = rl_pair_data(&p);
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
  perturb_start(p.mjm, mjd->qpos, a->perturb);
  p.act = mjd->act; /* the keyframe's act, mpos and mquat (else 0 and the model's mocap poses) */
  p.mocap_pos = mjd->mocap_pos;
  p.mocap_quat = mjd->mocap_quat;
  rl_set_state(&p, d, mjd, mjd->qpos, mjd->qvel, mjd->ctrl);
  p.act = p.mocap_pos = p.mocap_quat = NULL;
  if (a->nenvs > 0) {
    st = sim_batch(a, &p, d, steps);
    goto done;
  }
  rl_csv *w = a->c.out;
  w->f32 = RL_IS_F32 && !mujoco;
  header(w, p.m->nq, p.m->nv);
  if (avbd) {
    rl_avbd_from_generalized(am, p.m, d);
    row_rl(w, 0, p.m, d, am);
    for (long s = 1; s <= steps; s++) {
      rl_avbd_step(am, p.m, d); /* a non-finite step is undone and counted in d->warning */
      row_rl(w, s, p.m, d, am);
    }
  } else if (!mujoco) {
    row_rl(w, 0, p.m, d, NULL);
    for (long s = 1; s <= steps; s++) {
      rl_step(p.m, d);
      row_rl(w, s, p.m, d, NULL);
    }
  } else {
    row_mj(w, 0, p.mjm, mjd);
    for (long s = 1; s <= steps; s++) {
      mj_step(p.mjm, mjd);
      row_mj(w, s, p.mjm, mjd);
    }
  }
  {
    int nbad = mujoco ? bad_state_mj(mjd) : bad_state_rl(d);
    if (nbad)
      fprintf(stderr,
              "sim: %s: warning: %d bad-state event(s) (non-finite or huge qpos/qvel/qacc/ctrl, or an AVBD "
              "step whose sweeps ran away; see the bad_state column)\n",
              a->c.model, nbad);
    if (!mujoco && d->warning[RL_WARN_IMPLICIT])
      fprintf(stderr, "sim: %s: warning: %d implicit step(s) fell back to Euler (zero pivot in M - h*qDeriv)\n",
              a->c.model, d->warning[RL_WARN_IMPLICIT]);
  }
done:
  rl_avbd_free(am);
  rl_data_free(d);
  mj_deleteData(mjd);
  rl_pair_free(&p);
  return st;
}
