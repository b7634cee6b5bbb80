/* spec.h — experiment specs (INI files under experiments/) and their expansion into sweep points.
 *
 *   [experiment]  name = STUDY          (letters, digits, _ -)
 *                 scene = a.xml, b.xml  (relative to the spec's folder; several = an outer sweep axis; a long
 *                                        list goes on on indented lines or in further scene = lines)
 *                 steps = N | duration = T
 *                 seed = S              (recorded in meta.csv; the trajectories start from qpos0)
 *                 description = TEXT
 *                 kind = NAME           a row of the table of study kinds (kinds.h, kinds.c; default trajectory;
 *                                        each kind in the file of its name, e.g. refinement.c)
 *                 kind = speed: steps = the steps per timed repetition; engine ∈ newton, cg, avbd (mj_step
 *                   is timed beside every point); points run one at a time whatever --jobs says.
 *                 kind = analytic: each scene declares its closed-form check in its MJCF file,
 *                   <custom><text name="rigidlab_check" data="incline | freefall | torque_free"/></custom>
 *                   (analytic.c); the run starts from the scene's first keyframe when it has one.
 *                 states = K            (convergence: K states `steps` apart; 1 ≤ K ≤ 100, default 5; engine
 *                                        newton/cg: gap to the LAPACK optimum, avbd: distance to the dense KKT
 *                                        reference of the step)
 *                 levels = K            (refinement: dt0·2^-k, k = 0..K−1; 4 ≤ K ≤ 12, default 5)
 *                 rows_only = a, b      (verify: scene names whose verify covers only the collision and
 *                                        constraint rows, on 10 states, solved by CG with 1 iteration)
 *                 stages = LIST         (bench: `rigidlab bench --stages`)
 *                 engines = LIST        (bench: `rigidlab bench --engines`)
 *                 reps = R              (bench: `rigidlab bench --reps`; steps = its --steps)
 *                 scene = chain:N1+N2   (bench only: the synthetic hinge chains of `bench chain:N1,N2`)
 *   [sweep]       engine = newton, cg, avbd, mujoco
 *                 precision = f64, f32
 *                 dt = 0.002, 0.001
 *                 device = cpu, cuda    (kind = device only; device.c)
 *                 KEY = V1, V2, ...     any `--opt KEY=VALUE` option (cone, iterations, tolerance, ...)
 *   [reference]   use = R1, R2, ...     the references the study compares against (default: all the kind's own):
 *                   trajectory: mujoco_free (final_qpos_err, qpos_err_max vs the mujoco point);
 *                   refinement: richardson, gsl_ode (each optional: off skips its metrics/ODE solve);
 *                   convergence: lapack_optimum (required by newton/cg points), dense_kkt (required by avbd);
 *                   lockstep: mujoco_lockstep, mujoco_free (lockstep_* | free_* metrics);
 *                   speed: mujoco_timing (required); analytic: closed_form (required);
 *                   agreement (required), contact: mujoco_free;
 *                   fp32, device, residuals: none (their reference is the run itself: f64, cpu, the physics);
 *                   verify, bench: none (MuJoCo on the same states, in the same process)
 *   [metrics]     names = final_qpos_err, ...        (default: all of rl_metric_names)
 *   [check]       METRIC = abs T | rel T | ratio R   (bands against the baseline; default = … for the rest)
 *
 * Points are the cartesian product, scene outermost, then the [sweep] axes in file order (the last
 * axis varies fastest); mujoco × f32 is skipped (MuJoCo is f64 only).  Errors: one line naming
 * FILE:LINE, the key or value, and what is allowed; the first error of the file is the one named.
 * Numbers go through the number table (options.h); an [experiment] key given twice is refused (scene
 * excepted: its list goes on); lines up to RL_SPEC_MAXLINE characters. */
#ifndef RL_SPEC_H
#define RL_SPEC_H

#include <stddef.h>
#include "harness.h"

#define RL_SPEC_MAXAXES   16
#define RL_SPEC_MAXVALS   32
#define RL_SPEC_MAXSCENES 32
#define RL_SPEC_MAXBANDS  32
#define RL_SPEC_MAXPOINTS 100000 /* points of one sweep */
#define RL_SPEC_MAXLINE   65536  /* characters in one line of a spec */

/* abs T: |v − base| ≤ T; rel T: |v − base| ≤ T·|base|; ratio R: v/base within [1/R, R]; max T: v ≤ T
   whatever the baseline (a stated bound, e.g. iterations over MuJoCo's) */
enum { RL_BAND_ABS, RL_BAND_REL, RL_BAND_RATIO, RL_BAND_MAX };

/* metrics, computed per point from its trajectory (and the mujoco point of the same scene/dt/options) */
enum {
  RL_MET_FINAL_QPOS_ERR,
  RL_MET_QPOS_ERR_MAX,
  RL_MET_PENETRATION_MAX,
  RL_MET_ANCHOR_ERR_MAX,
  RL_MET_ENERGY_DRIFT,
  RL_MET_ITERATIONS_MEAN,
  RL_MET_CONVERGED_FRAC,
  /* kind = refinement | fp32 | residuals */
  RL_MET_ORDER,
  RL_MET_ORDER_STDERR,
  RL_MET_ORDER_FINAL,
  RL_MET_ONESTEP_REL_MAX,
  RL_MET_DIVERGE_1EM6,
  RL_MET_DIVERGE_1EM3,
  RL_MET_SIGNORINI_MAX,
  RL_MET_COULOMB_MAX,
  RL_MET_MDP_MAX,
  RL_MET_NCP_MAX,
  /* kind = convergence */
  RL_MET_ITERS_TO_1EM10_GAP,
  RL_MET_FINAL_GAP,
  /* kind = refinement: Richardson extrapolation and the GSL ODE reference */
  RL_MET_RICHARDSON_ERR,
  RL_MET_ORDER_ODE,
  RL_MET_ORDER_ODE_STDERR,
  /* kind = lockstep */
  RL_MET_LOCKSTEP_QPOS_MAX,
  RL_MET_LOCKSTEP_QVEL_MAX,
  RL_MET_LOCKSTEP_QVEL_MEDIAN,
  RL_MET_FREE_DIVERGE_1EM6,
  RL_MET_FREE_QPOS_ERR_MAX,
  RL_MET_ITERATIONS_EXCESS_MAX,
  RL_MET_UNCONVERGED_WHERE_MJ_CONVERGED,
  /* kind = speed */
  RL_MET_STEPS_PER_S,
  RL_MET_MUJOCO_STEPS_PER_S,
  RL_MET_TIME_RATIO,
  /* kind = analytic */
  RL_MET_INCLINE_ACCEL_REL_ERR,
  RL_MET_INCLINE_CREEP,
  RL_MET_FREEFALL_ERR,
  RL_MET_MOMENTUM_DRIFT,
  RL_MET_KINETIC_ENERGY_DRIFT,
  /* kind = convergence, engine = avbd: against the dense step reference (avbd_ref.h) */
  RL_MET_AVBD_ITERS_TO_1EM6_DIST,
  RL_MET_AVBD_FINAL_DIST_M,
  RL_MET_AVBD_FINAL_DIST_RAD,
  RL_MET_AVBD_FALSE_STOP_FRAC, /* the three in this order (convergence.c: stop_rows), and the own three below */
  RL_MET_AVBD_FLAGGED_STEPS,    /* states whose step the stopping test flagged converged (the fraction's base) */
  RL_MET_AVBD_REF_UNCONVERGED,  /* states left out: the dense reference's Newton did not converge */
  /* the same judgement along AVBD's own trajectory (study_own_stops_avbd) */
  RL_MET_AVBD_OWN_FALSE_STOP_FRAC,
  RL_MET_AVBD_OWN_CHECKED_STEPS,    /* own steps flagged converged with a converged reference (the base) */
  RL_MET_AVBD_OWN_REF_UNCONVERGED,  /* own steps left out: the reference did not converge */
  RL_MET_AVBD_OWN_WORST_RATIO,      /* max over the checked own steps of distance / claimed distance */
  RL_MET_AVBD_OWN_NONFINITE_STEPS,  /* own steps that ended non-finite: undone (as in `sim`), not judged */
  RL_MET_AVBD_OWN_UNCONVERGED_STEPS, /* own steps that ended finite without meeting the stopping test (the budget) */
  /* kind = verify */
  RL_MET_VERIFY_FAILED_F64,
  RL_MET_VERIFY_FAILED_F32,
  RL_MET_VERIFY_WORST_F64,
  RL_MET_VERIFY_WORST_F32,
  /* kind = agreement */
  RL_MET_TRAJ_REL_ERR_MAX,
  /* kind = bench (chain scenes) */
  RL_MET_CHAIN_EXPONENT,
  RL_MET_MUJOCO_CHAIN_EXPONENT,
  /* kind = scale */
  RL_MET_SCALE_EXPONENT_NEWTON,
  RL_MET_SCALE_EXPONENT_CG,
  RL_MET_SPARSE_DENSE_QACC_REL,
  RL_MET_SCALE_NEFC_MAX,
  RL_NMET
};

/* [reference] use = … (which kinds take which: their rows in kinds.c) */
enum {
  RL_REF_MUJOCO_LOCKSTEP,
  RL_REF_MUJOCO_FREE,
  RL_REF_LAPACK_OPTIMUM,
  RL_REF_DENSE_KKT,
  RL_REF_GSL_ODE,
  RL_REF_RICHARDSON,
  RL_REF_MUJOCO_TIMING,
  RL_REF_CLOSED_FORM,
  RL_NREF
};
extern const char *const rl_ref_names[RL_NREF];
extern const char *const rl_metric_names[RL_NMET];

typedef struct rl_spec_axis {
  char key[64];
  int nval, line;
  char *val[RL_SPEC_MAXVALS];
} rl_spec_axis;

typedef struct rl_band {
  int metric; /* RL_MET_*, or −1: the default band */
  int kind;   /* RL_BAND_* */
  double tol;
  int line;
} rl_band;

typedef struct rl_spec {
  char path[1024];
  char name[128];
  int nscene, scene_line;
  char *scene[RL_SPEC_MAXSCENES]; /* resolved paths */
  long steps;                     /* −1: from duration */
  double duration;
  unsigned long seed;
  char description[512];
  const struct rl_study_kind *kind; /* the kind's row (kinds.h) */
  int kind_line;
  int levels, levels_line;        /* refinement */
  int states, states_line;        /* convergence */
  int nrows_only, rows_only_line; /* verify */
  char *rows_only[RL_SPEC_MAXSCENES];
  char stages[256], engines[256];                 /* bench ("" = bench's default) */
  int stages_line, engines_line, reps, reps_line; /* bench (reps 0 = bench's default) */
  int naxes;
  rl_spec_axis axis[RL_SPEC_MAXAXES];
  unsigned long long metrics; /* bit mask of RL_MET_* (64 bits) */
  unsigned refs;              /* bit mask of RL_REF_*: [reference] use, else the kind's default */
  int refs_line;              /* 0: not given */
  int nband;
  rl_band band[RL_SPEC_MAXBANDS];
  char *text; /* the file's text (meta.csv, spec.ini copy) */
  /* parser state */
  int line;
  char section[64];
  char err[1024];
  int err_line; /* the line of err (the first error is the one reported) */
  int no_files;
  int continued;    /* the line being parsed is an indented continuation of the previous key */
  char *long_value; /* the value of a line longer than inih's buffer (the reader's, see spec.c) */
  char seen[16][16];
  int nseen, seen_line[16]; /* [experiment] keys given so far, and their lines */
  int metrics_line, duration_line;
} rl_spec;

typedef struct rl_point {
  int index;
  char id[512];      /* file-name-safe, unique in the study: scene.engine.precision[.dtH][.key-value]... */
  const char *scene; /* path */
  char scene_name[128];
  const char *engine;
  int f32;
  double dt;           /* 0: the model's */
  const char *dt_text; /* as written, "" when the model's */
  const char *device;  /* "cpu" | "cuda" (the device axis; "cpu" without one) */
  int nopts;
  char *opts[RL_MAX_OPTS]; /* "key=value" */
  int ref;                 /* index of the mujoco point with the same scene, dt and options (−1: none) */
} rl_point;

/* Parse PATH.  Returns 0, or RL_EXIT_BADINPUT with a one-line message "PATH:LINE: ..." in err. */
int rl_spec_load(const char *path, rl_spec *s, char *err, int errlen);
/* the same without touching the scenes (no existence check, no option check): for `check` and `merge` */
int rl_spec_load_text_only(const char *path, rl_spec *s, char *err, int errlen);
/* Expand the sweep; *pts is malloc'ed (free with rl_spec_free_points).  Returns the count, or −1 (err). */
int rl_spec_expand(const rl_spec *s, rl_point **pts, char *err, int errlen);
void rl_spec_free_points(rl_point *pts, int n);
void rl_spec_free(rl_spec *s);
/* 1 if the study compares against reference REF (RL_REF_*) */
int rl_spec_uses(const rl_spec *s, int ref);
/* the references as "a, b" (meta.csv) */
void rl_spec_refs_text(const rl_spec *s, char *out, size_t n);
/* the band of METRIC (or the default band), NULL when unchecked */
const rl_band *rl_spec_band(const rl_spec *s, int metric);
int rl_metric_find(const char *name);
/* snprintf for paths and messages whose truncation is harmless (cut at the buffer's end) */
int rl_snprintf(char *dst, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
