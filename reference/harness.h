/* harness.h — precision-free interface between the `rigidlab` front end and the harness
 * commands.  Each command is implemented once (reference/verify/verify.c, sim.c, bench.c) and compiled per precision
 * into rl64_cmd_… and rl32_cmd_…; the front end picks one by --precision. */
#ifndef RL_HARNESS_H
#define RL_HARNESS_H

#define RL_MAX_OPTS 64

/* exit statuses (ARCHITECTURE.md) */
enum { RL_EXIT_OK = 0, RL_EXIT_FAIL = 1, RL_EXIT_BADINPUT = 2 };

typedef struct rl_common_args {
  const char *model;             /* MJCF path */
  const char *opts[RL_MAX_OPTS]; /* --opt KEY=VALUE, in order */
  int nopts;
  const char *csv;    /* --csv FILE or NULL (for messages) */
  struct rl_csv *out; /* opened by the front end (NULL: no CSV); header written once */
  int quiet;          /* no table on stdout */
} rl_common_args;

/* verify stages, in pipeline order */
enum {
  RL_STAGE_KINEMATICS,
  RL_STAGE_COM,
  RL_STAGE_TENDON,
  RL_STAGE_INERTIA,
  RL_STAGE_BIAS,
  RL_STAGE_PASSIVE,
  RL_STAGE_ACTUATION,
  RL_STAGE_SMOOTH,
  RL_STAGE_INTEGRATE,
  RL_STAGE_COLLISION,
  RL_STAGE_CONSTRAINT,
  RL_STAGE_SOLVE,
  RL_STAGE_STEP,
  RL_NSTAGE
};
extern const char *const rl_stage_names[RL_NSTAGE];

typedef struct rl_verify_args {
  rl_common_args c;
  int states;
  unsigned long seed;
  unsigned stages; /* bit mask of RL_STAGE_* */
} rl_verify_args;

typedef struct rl_sim_args {
  rl_common_args c;
  const char *engine; /* "newton" | "mujoco" */
  double dt;          /* 0 = the model's */
  long steps;         /* −1 = from duration */
  double duration;
  const char *key; /* keyframe name or index, NULL = qpos0 */
  double perturb;  /* > 0: the start qpos moved by perturb·max(|qpos_i|, 1), − on even i, + on odd i */
  const char *device; /* batch mode: "cpu" or "cuda" (nenvs > 0) */
  int nenvs;          /* batch mode: environments (0: the single-environment run) */
  int nsubset, subset[64]; /* batch mode: the environments written */
} rl_sim_args;

typedef struct rl_bench_args {
  rl_common_args c;
  long steps;
  int reps;
  const char *engines;
  const char *stages; /* comma-separated bench stage names, NULL = all */
  const char *device; /* --device cpu (the batch backend; NULL: the single-environment stage bench) */
  int envs[32];       /* --envs N1,N2,…: environments per batch run (nenvs > 0: the batch bench) */
  int nenvs;
  int threads; /* --threads: OpenMP threads of the batch bench (0: all) */
} rl_bench_args;

/* kind = scale (reference/scale.c): c.model = FAMILY:N1+N2+… (scale_scene.h); steps per solver; the
   CSV rows go to c.out */
typedef struct rl_scale_args {
  rl_common_args c;
  long steps;
  const char *solvers;  /* comma-separated subset of newton_dense, newton_skyline, newton_sparse, newton_auto, cg,
                           avbd, mujoco; NULL: all */
  int dense_max_nv;     /* Newton with the dense factorization only up to this nv (O(nv³) per factorization) */
  int mujoco_max_nv;    /* mj_step (dense in 2.2.2) only up to this nv */
  double mujoco_max_gb; /* mj_step only when its njmax-sized arrays fit in this many GB */
} rl_scale_args;
int rl64_cmd_scale(const rl_scale_args *a);
int rl32_cmd_scale(const rl_scale_args *a);

int rl64_cmd_verify(const rl_verify_args *a);
int rl32_cmd_verify(const rl_verify_args *a);
int rl64_cmd_sim(const rl_sim_args *a);
int rl32_cmd_sim(const rl_sim_args *a);
int rl64_cmd_bench(const rl_bench_args *a);
int rl32_cmd_bench(const rl_bench_args *a);

/* the steps of a run: a->steps, else round(a->duration / TIMESTEP); −1 with err when that exceeds the cap
   of a run's steps (options.h) */
long rl_run_steps(const rl_sim_args *a, double timestep, char *err, int errlen);

/* error reporting: one line on stderr, "rigidlab: MESSAGE" */
void rl_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
