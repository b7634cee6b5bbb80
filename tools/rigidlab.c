/* rigidlab.c — the `rigidlab` command: parses arguments, picks the precision, calls the harness.
 * No solver logic lives here. */
#include <dirent.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "csv.h"
#include "harness.h"
#include "runner.h"
#include "mj_load.h"
#include "report.h"
#include "scale_scene.h"
#include "fields.h"
#include "kinds.h"

/* MuJoCo's fatal errors would call exit(1): turn them into our one-line bad-input exit. */
static void mujoco_error(const char *msg) {
  rl_errorf("MuJoCo: %s", msg);
  rl_csv_abort_all();
  exit(RL_EXIT_BADINPUT);
}
static void mujoco_warning(const char *msg) { (void)msg; }

static const char *usage_main =
    "usage: rigidlab COMMAND [ARGS]\n"
    "commands:\n"
    "  verify MODEL.xml [--precision f64|f32|both] [--states N] [--seed S] [--stages LIST] [--csv FILE] [--opt "
    "K=V]...\n"
    "  sim    MODEL.xml --engine newton|cg|pgs|avbd|mujoco [--precision f64|f32] [--dt H] [--steps N | --duration T]\n"
    "                   [--key NAME|INDEX] [--perturb EPS] [--csv FILE] [--opt K=V]...\n"
    "  bench  MODEL.xml|chain:N1,N2,... [--precision f64|f32|both] [--stages LIST] [--engines LIST] [--steps N]\n"
    "                   [--reps R] [--csv FILE] [--opt K=V]... [--device cpu --envs N1,N2,... [--threads T]]\n"
    "  run    [SPEC.ini ...] [--out DIR] [--jobs N] [--shard I/N] [--resume] [--opt K=V]...\n"
    "  merge  DIR... --out OUT\n"
    "  check  RESULTS [--baseline DIR] [--update-baseline]\n"
    "  report RESULTS_DIR   plots (gnuplot SVG + PNG), summary.md and tables.tex from the CSVs\n"
    "  --help-options [--markdown]   every --opt KEY=VALUE (and spec [sweep] key): type, range, default, effect\n"
    "  fields [--markdown]  the rl_data field reference (type, size, unit, meaning) from the registry\n"
    "exit status: 0 success, 1 a check failed, 2 bad input\n"
    "run 'rigidlab COMMAND --help' for details\n";

static const char *usage_verify =
    "usage: rigidlab verify MODEL.xml [options]\n"
    "Runs every pipeline stage of rigidlab and of MuJoCo 2.2.2 on N states of MODEL and\n"
    "reports the worst error per stage and quantity (exit 1 if any exceeds its tolerance).\n"
    "  --precision f64|f32|both   working precision (default f64)\n"
    "  --states N                 number of states (default 100; half random, half along a trajectory)\n"
    "  --seed S                   RNG seed (default 1)\n"
    "  --stages LIST              comma-separated subset of: "
    "kinematics,com,tendon,inertia,bias,passive,actuation,smooth,integrate,\n"
    "                             collision,constraint,solve,step (default: all)\n"
    "  --csv FILE                 model,precision,stage,quantity,max_abs_err,max_rel_err,tolerance,pass\n"
    "  --opt KEY=VALUE            override a model/solver option (repeatable; see rigidlab --help-options)\n"
    "  --quiet                    no table on stdout\n";

static const char *usage_sim =
    "usage: rigidlab sim MODEL.xml --engine newton|cg|pgs|avbd|mujoco [options]\n"
    "Simulates MODEL from qpos0 (or a keyframe) and writes step,time,qpos_*,qvel_*, then\n"
    "iterations,converged,residual,penetration_max,energy,ncon,bad_state as CSV (to stdout without --csv).\n"
    "  --engine newton|cg|pgs|avbd|mujoco  rigidlab soft-constraint Newton, CG or PGS (MuJoCo's\n"
    "                             projected Gauss-Seidel on the dual), rigidlab AVBD (maximal\n"
    "                             coordinates), or MuJoCo 2.2.2 (the model's own solver unless --opt solver=)\n"
    "  --precision f64|f32        rigidlab's working precision (default f64; mujoco is f64 only)\n"
    "  --dt H                     time step (default: the model's)\n"
    "  --steps N | --duration T   length (default 1000 steps)\n"
    "  --key NAME|INDEX           start from a keyframe\n"
    "  --perturb EPS              move the start qpos by EPS·max(|qpos_i|, 1), − on even i, + on odd i, in (0, 1]\n"
    "                             (the same start for every engine: e.g. MuJoCo against itself at 1e-15)\n"
    "  --csv FILE                 output file\n"
    "  --opt KEY=VALUE            override a model/solver option (repeatable; see rigidlab --help-options)\n"
    "  --device cpu|cuda --envs N the batch API instead: N environments from the same start stepped together\n"
    "                             (cpu: rl_batch_step; cuda: engine/cuda/, AVBD only); the CSV gets a first\n"
    "                             column env, then the same columns, one row per chosen environment and step\n"
    "  --env-subset E1,E2,...     the environments written (default: 0)\n";

static const char *usage_bench =
    "usage: rigidlab bench MODEL.xml [options]\n"
    "Times each smooth-dynamics stage of rigidlab against MuJoCo's equivalent, alternating in one\n"
    "process; prints medians and ratio = ours/MuJoCo (below 1 is faster).  Under each whole-step row (newton,\n"
    "cg) a profiled pass shows where the step goes: position, collision, velocity, actuation, smooth,\n"
    "constraint (rows), solve, integrate, other: ns per step and share, ours beside MuJoCo's timers.\n"
    "  --precision f64|f32|both   (default both)\n"
    "  --steps N                  calls per timed block (default 200)\n"
    "  --reps R                   alternating repetitions (default 15)\n"
    "  --stages LIST              subset of kinematics,com,inertia,bias,passive,actuation,smooth,step_smooth,\n"
    "                             collision,step (default: all)\n"
    "  --engines LIST             engines for the whole constrained step: newton,cg,avbd (default newton; on the scale\n"
    "                             scenes spheres:N, boxes:N, links:N the scale study's solver names;\n"
    "                             MuJoCo, with the same solver, is always timed beside)\n"
    "  --csv FILE                 model,engine,precision,stage,ns_per_step,mujoco_ns_per_step,ratio,share,\n"
    "                             mujoco_share (the profile as stage step/<part>; share: of the whole step)\n"
    "  --device cpu --envs LIST   the batch API instead: N environments stepped together for each N of\n"
    "                             LIST (engine: the first of --engines, default avbd; --steps timed steps,\n"
    "                             default 50; --threads T OpenMP threads, default all); prints env-steps/s,\n"
    "                             the largest anchor error, unconverged env-steps and resets; CSV columns\n"
    "                             model,engine,precision,device,envs,threads,steps,env_steps_per_s,\n"
    "                             max_anchor_err,unconverged,resets\n"
    "  --opt KEY=VALUE            override a model/solver option (repeatable; see rigidlab --help-options)\n";

static int bad(const char *cmd, const char *fmt, const char *arg) {
  char msg[512];
  snprintf(msg, sizeof msg, fmt, arg);
  rl_errorf("%s: %s (see 'rigidlab %s --help')", cmd, msg, cmd);
  return RL_EXIT_BADINPUT;
}

/* FLAG's value V as row NUM of the number table (options.h): 0, or the bad-input exit after one line
   "CMD: FLAG: bad value 'V' (allowed: …)" */
static int num_flag(const char *cmd, int num, const char *flag, const char *v, double *x) {
  char label[128], err[512];
  snprintf(label, sizeof label, "%s: %s", cmd, flag);
  if (!rl_number_parse(num, label, v, x, err, sizeof err)) return 0;
  rl_errorf("%s (see 'rigidlab %s --help')", err, cmd);
  return RL_EXIT_BADINPUT;
}
static int long_flag(const char *cmd, int num, const char *flag, const char *v, long *x) {
  double d;
  int st = num_flag(cmd, num, flag, v, &d);
  if (!st) *x = (long)d;
  return st;
}

/* precision: 1 = f64, 2 = f32, 3 = both */
static int parse_precision(const char *s) {
  if (!strcmp(s, "f64")) return 1;
  if (!strcmp(s, "f32")) return 2;
  if (!strcmp(s, "both")) return 3;
  return 0;
}

typedef struct parsed {
  rl_common_args c;
  int precision;
  long states, steps, reps, seed;
  double dt, duration, perturb;
  const char *engine, *key, *stages, *engines, *device, *envs, *subset;
  long threads;
} parsed;

static int parse_args(const char *cmd, int argc, char **argv, parsed *p, const char *usage) {
  int st;
  /* the options of CMD that take a value */
  const char *valued = !strcmp(cmd, "verify") ? "--opt,--csv,--precision,--states,--seed,--stages"
                       : !strcmp(cmd, "sim")  ? "--opt,--csv,--precision,--engine,--key,--dt,--duration,--steps,"
                                                "--perturb,--device,--envs,--env-subset"
                                              : "--opt,--csv,--precision,--stages,--engines,--steps,--reps,--device,"
                                                "--envs,--threads";
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(usage, stdout);
      exit(0);
    }
    if (a[0] != '-') {
      if (p->c.model) return bad(cmd, "unexpected argument '%s' (one model only)", a);
      p->c.model = a;
      continue;
    }
    if (!strcmp(a, "--quiet")) {
      p->c.quiet = 1;
      continue;
    }
    if (!rl_in_list(valued, a)) return bad(cmd, "unknown option '%s'", a);
    if (!v) return bad(cmd, "option %s needs a value", a);
    i++;
    if (!strcmp(a, "--opt")) {
      if (p->c.nopts >= RL_MAX_OPTS) return bad(cmd, "too many --opt (max %s)", "64");
      p->c.opts[p->c.nopts++] = v;
    } else if (!strcmp(a, "--csv")) p->c.csv = v;
    else if (!strcmp(a, "--precision")) {
      if (!(p->precision = parse_precision(v)) || (p->precision == 3 && !strcmp(cmd, "sim")))
        return bad(cmd, "--precision '%s' (allowed: f64, f32, both; sim: f64, f32)", v);
    } else if (!strcmp(a, "--states") && !strcmp(cmd, "verify")) {
      if ((st = long_flag(cmd, RL_NUM_states, a, v, &p->states))) return st;
    } else if (!strcmp(a, "--seed") && !strcmp(cmd, "verify")) {
      if ((st = long_flag(cmd, RL_NUM_seed, a, v, &p->seed))) return st;
    } else if (!strcmp(a, "--stages") && (!strcmp(cmd, "verify") || !strcmp(cmd, "bench"))) p->stages = v;
    else if (!strcmp(a, "--engine") && !strcmp(cmd, "sim")) p->engine = v;
    else if (!strcmp(a, "--engines") && !strcmp(cmd, "bench")) p->engines = v;
    else if (!strcmp(a, "--key") && !strcmp(cmd, "sim")) p->key = v;
    else if (!strcmp(a, "--dt") && !strcmp(cmd, "sim")) {
      if ((st = num_flag(cmd, RL_NUM_dt, a, v, &p->dt))) return st;
    } else if (!strcmp(a, "--perturb") && !strcmp(cmd, "sim")) {
      if ((st = num_flag(cmd, RL_NUM_perturb, a, v, &p->perturb))) return st;
    } else if (!strcmp(a, "--duration") && !strcmp(cmd, "sim")) {
      if ((st = num_flag(cmd, RL_NUM_duration, a, v, &p->duration))) return st;
    } else if (!strcmp(a, "--steps") && (!strcmp(cmd, "sim") || !strcmp(cmd, "bench"))) {
      if ((st = long_flag(cmd, RL_NUM_steps, a, v, &p->steps))) return st;
    } else if (!strcmp(a, "--device")) p->device = v;
    else if (!strcmp(a, "--envs")) p->envs = v;
    else if (!strcmp(a, "--env-subset") && !strcmp(cmd, "sim")) p->subset = v;
    else if (!strcmp(a, "--threads") && !strcmp(cmd, "bench")) {
      if ((st = long_flag(cmd, RL_NUM_threads, a, v, &p->threads))) return st;
    } else if (!strcmp(a, "--reps") && !strcmp(cmd, "bench")) {
      if ((st = long_flag(cmd, RL_NUM_reps, a, v, &p->reps))) return st;
    } else return bad(cmd, "unknown option '%s'", a);
  }
  if (!p->c.model) return bad(cmd, "missing MODEL.xml%s", "");
  return 0;
}

/* V is a comma-separated list of names from ALLOWED (comma-separated), at least one, no empty item:
   0, or the bad-input exit after one line naming the flag and the first bad item */
static int list_flag(const char *cmd, const char *flag, const char *v, const char *allowed) {
  char item[128];
  const char *p = v;
  do {
    const char *c = strchr(p, ',');
    size_t l = c ? (size_t)(c - p) : strlen(p);
    snprintf(item, sizeof item, "%.*s", (int)(l < sizeof item ? l : sizeof item - 1), p);
    if (!l || l >= sizeof item || !rl_in_list(allowed, item)) {
      rl_errorf("%s: %s '%s': %s%s%s (allowed: %s) (see 'rigidlab %s --help')", cmd, flag, v,
                l ? "unknown name '" : "an empty name", l ? item : "", l ? "'" : "", allowed, cmd);
      return RL_EXIT_BADINPUT;
    }
    p = c ? c + 1 : NULL;
  } while (p);
  return 0;
}

static unsigned parse_stages(const char *list, int *ok) {
  unsigned mask = 0;
  char buf[512];
  *ok = 1;
  if (!list) return (1u << RL_NSTAGE) - 1;
  snprintf(buf, sizeof buf, "%s", list);
  for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
    int k = 0;
    while (k < RL_NSTAGE && strcmp(rl_stage_names[k], t)) k++;
    if (k == RL_NSTAGE) {
      *ok = 0;
      return 0;
    }
    mask |= 1u << k;
  }
  return mask;
}

/* open the CSV (or stdout for sim), run, close or abort */
static int open_out(parsed *p, rl_csv *w, int to_stdout) {
  char err[1024];
  const char *path = p->c.csv ? p->c.csv : (to_stdout ? "-" : NULL);
  if (!path) return 0;
  if (rl_csv_open(w, path, 0, err, sizeof err)) {
    rl_errorf("%s", err);
    return RL_EXIT_BADINPUT;
  }
  p->c.out = w;
  return 0;
}
static int close_out(parsed *p, rl_csv *w, int status) {
  char err[1024];
  if (!p->c.out) return status;
  if (status == RL_EXIT_BADINPUT) {
    rl_csv_abort(w);
    return status;
  }
  if (rl_csv_close(w, err, sizeof err)) {
    rl_errorf("%s", err);
    return RL_EXIT_BADINPUT;
  }
  return status;
}

static int cmd_verify(int argc, char **argv) {
  parsed p = {0};
  p.precision = 1;
  p.states = 100;
  p.seed = 1;
  int st = parse_args("verify", argc, argv, &p, usage_verify);
  if (st) return st;
  if (p.stages &&
      (st =
           list_flag("verify", "--stages", p.stages,
                     "kinematics,com,inertia,bias,passive,actuation,smooth,integrate,collision,constraint,solve,step")))
    return st;
  int ok;
  rl_verify_args a = {
      .c = p.c, .states = (int)p.states, .seed = (unsigned long)p.seed, .stages = parse_stages(p.stages, &ok)};
  if (!ok)
    return bad("verify",
               "--stages '%s' (allowed: "
               "kinematics,com,tendon,inertia,bias,passive,actuation,smooth,integrate,collision,constraint,solve,step)",
               p.stages);
  rl_csv w;
  if ((st = open_out(&p, &w, 0))) return st;
  a.c.out = p.c.out;
  int r = 0;
  if (p.precision & 1) r = rl64_cmd_verify(&a);
  if ((p.precision & 2) && r != RL_EXIT_BADINPUT) {
    int r2 = rl32_cmd_verify(&a);
    if (r2 > r) r = r2;
  }
  return close_out(&p, &w, r);
}

static int cmd_sim(int argc, char **argv) {
  parsed p = {0};
  p.precision = 1;
  p.steps = -1;
  int st = parse_args("sim", argc, argv, &p, usage_sim);
  if (st) return st;
  if (!p.engine) return bad("sim", "missing --engine (allowed: newton, cg, pgs, avbd, mujoco)%s", "");
  if (p.steps > 0 && p.duration > 0) return bad("sim", "give --steps or --duration, not both%s", "");
  rl_sim_args a = {.c = p.c, .engine = p.engine, .dt = p.dt, .steps = p.steps, .duration = p.duration, .key = p.key,
                   .perturb = p.perturb, .device = p.device};
  if ((p.device || p.subset) && !p.envs) return bad("sim", "--device and --env-subset need --envs N%s", "");
  if (p.envs) {
    char *end;
    long n = strtol(p.envs, &end, 10);
    if (*end || n < 1 || n > 1000000) return bad("sim", "--envs '%s': one integer from 1 to 1000000", p.envs);
    if (!p.device) return bad("sim", "--envs needs --device cpu|cuda%s", "");
    if (strcmp(p.device, "cpu") && strcmp(p.device, "cuda"))
      return bad("sim", "--device '%s' (allowed: cpu, cuda)", p.device);
    a.nenvs = (int)n;
    const char *q = p.subset ? p.subset : "0";
    do {
      long e = strtol(q, &end, 10);
      if (end == q || (*end && *end != ',') || e < 0 || e >= n)
        return bad("sim", "--env-subset '%s': environment indices from 0 to N-1, comma-separated", q);
      if (a.nsubset >= 64) return bad("sim", "--env-subset: at most 64 environments%s", "");
      a.subset[a.nsubset++] = (int)e;
      q = *end ? end + 1 : end;
    } while (*q);
  }
  if (a.steps < 0 && !(a.duration > 0)) a.steps = 1000;
  rl_csv w;
  if ((st = open_out(&p, &w, 1))) return st;
  a.c.out = p.c.out;
  int r = p.precision == 2 ? rl32_cmd_sim(&a) : rl64_cmd_sim(&a);
  return close_out(&p, &w, r);
}

/* --envs N1,N2,…: up to 32 environment counts, each an integer from 1 to 1000000 */
static int parse_envs(const char *list, int *envs, int *n) {
  char buf[512];
  if (strlen(list) >= sizeof buf) return bad("bench", "--envs list too long (%s)", "at most 511 characters");
  snprintf(buf, sizeof buf, "%s", list);
  *n = 0;
  size_t l = strlen(list);
  if (!l || list[0] == ',' || list[l - 1] == ',' || strstr(list, ",,"))
    return bad("bench", "--envs '%s': an empty count (expected N1,N2,...)", list);
  for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
    long v;
    if (*n >= 32) return bad("bench", "--envs '%s': at most 32 counts", list);
    if (rl_parse_long(t, 1, 1000000, &v))
      return bad("bench", "--envs '%s': each count must be an integer from 1 to 1000000", list);
    envs[(*n)++] = (int)v;
  }
  if (!*n) return bad("bench", "--envs '%s' lists no count", list);
  return 0;
}

static int cmd_bench(int argc, char **argv) {
  parsed p = {0};
  p.precision = 3;
  int st = parse_args("bench", argc, argv, &p, usage_bench);
  if (st) return st;
  if (p.stages && (st = list_flag("bench", "--stages", p.stages,
                                  "kinematics,com,inertia,bias,passive,actuation,smooth,step_smooth,collision,step")))
    return st;
  /* the scale scenes (spheres:N, boxes:N, links:N) take the scale study's solver names */
  const char *engines_allowed = rl_scale_is_scene(p.c.model)
                                  ? "newton_dense,newton_skyline,newton_sparse,newton_auto,cg,avbd,mujoco"
                                  : "newton,cg,avbd";
  if (p.engines && (st = list_flag("bench", "--engines", p.engines, engines_allowed))) return st;
  rl_bench_args a = {.c = p.c,
                     .steps = p.steps,
                     .reps = (int)p.reps,
                     .engines = p.engines,
                     .stages = p.stages,
                     .device = p.device,
                     .threads = (int)p.threads};
  if (p.envs && (st = parse_envs(p.envs, a.envs, &a.nenvs))) return st;
  if (p.device && strcmp(p.device, "cpu") && strcmp(p.device, "cuda"))
    return bad("bench", "--device '%s' (allowed: cpu, cuda)", p.device);
  if (p.device && !p.envs) return bad("bench", "--device needs --envs N1,N2,...%s", "");
  rl_csv w;
  if ((st = open_out(&p, &w, 0))) return st;
  a.c.out = p.c.out;
  int r = 0;
  if (p.precision & 1) r = rl64_cmd_bench(&a);
  if ((p.precision & 2) && !r) r = rl32_cmd_bench(&a);
  return close_out(&p, &w, r);
}

/* `rigidlab --help-options [--markdown]`: the option table (import/options.h) as text, or as the Markdown
   table that README.md carries between its option-table markers */
static int cmd_help_options(int argc, char **argv) {
  int markdown = 0;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--markdown") || markdown) {
      rl_errorf("--help-options: unexpected argument '%s' (allowed: --markdown, once)", argv[i]);
      return RL_EXIT_BADINPUT;
    }
    markdown = 1;
  }
  rl_opt_print_help(stdout, markdown);
  return RL_EXIT_OK;
}

/* `rigidlab report DIR`: plots and tables from the CSVs alone (reports/src/report.c). */
static const char *usage_report =
    "usage: rigidlab report RESULTS_DIR\n"
    "Plots and tables from a results tree's CSVs alone (no simulation):\n"
    "  reads    verify.csv, traj_compare.csv, bench_*.csv, contact_<scene>_<engine>.csv and meta.csv, each in\n"
    "           RESULTS_DIR or its study folders (./tools/run's layout), and every study below RESULTS_DIR\n"
    "           (each folder holding metrics.csv: studies/NAME/, a run --out or merge --out folder, one study)\n"
    "  writes   RESULTS_DIR/plots/*.gp with their .svg and .png (gnuplot), RESULTS_DIR/summary.md\n"
    "           (headline figures, linking the plots) and RESULTS_DIR/tables.tex (booktabs tables)\n"
    "Outputs are written under temporary names and renamed at the end. A missing or malformed CSV:\n"
    "one line naming the file (and line), exit 2, nothing written.\n";

static int cmd_report(int argc, char **argv) {
  if (argc >= 1 && (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h"))) {
    fputs(usage_report, stdout);
    return RL_EXIT_OK;
  }
  for (int i = 0; i < argc; i++)
    if (argv[i][0] == '-') return bad("report", "unknown option '%s'", argv[i]);
  if (argc != 1) {
    rl_errorf("report: expected exactly one RESULTS_DIR (see 'rigidlab report --help')");
    return RL_EXIT_BADINPUT;
  }
  char err[2048];
  int st = rl_report(argv[0], stdout, err, sizeof err);
  if (st) rl_errorf("%s", err);
  return st ? RL_EXIT_BADINPUT : RL_EXIT_OK;
}

/* `rigidlab run | merge | check`: argument parsing only; the work is in reference/study/runner.c, check.c. */
static const char *usage_run =
    "usage: rigidlab run [SPEC.ini ...] [--out DIR] [--jobs N] [--shard I/N] [--resume] [--opt K=V]...\n"
    "Expands each experiment spec's sweep (experiments/*.ini; default: every experiments/*.ini) into points,\n"
    "runs each point's trajectory in a worker process and writes DIR/STUDY/: traj_<point>.csv, metrics.csv\n"
    "(study,point,engine,precision,dt,metric,value,step,index), meta.csv and spec.ini.\n"
    "  --out DIR       results root (default results)\n"
    "  --jobs N        worker processes (default: all cores); results are byte-identical for any N\n"
    "  --shard I/N     run only the points with index % N == I-1 (combine with 'rigidlab merge')\n"
    "  --resume        skip points whose trajectory CSV is already whole (after Ctrl-C)\n"
    "  --opt KEY=VALUE override an option in every point, after the sweep's (repeatable; see rigidlab "
    "--help-options)\n";
static const char *usage_merge = "usage: rigidlab merge DIR... --out OUT\n"
                                 "Combines the results of 'rigidlab run --shard' (every study below each DIR: an --out "
                                 "folder or a study folder) into\n"
                                 "OUT/STUDY/, metrics in point order, trajectories alongside.\n";
static const char *usage_check =
    "usage: rigidlab check RESULTS [--baseline DIR] [--update-baseline]\n"
    "Compares every metric of every study below RESULTS (each folder holding metrics.csv: reports/latest,\n"
    "an --out folder, one study folder) with DIR/STUDY/metrics.csv\n"
    "(default DIR: reports/baselines) within the bands of the spec's [check] section (abs T, rel T, ratio R, max T).\n"
    "Exit 1 with one line per metric outside its band: study, point, metric, value, band, first step out.\n"
    "  --update-baseline  rewrite DIR/STUDY/metrics.csv from RESULTS (on purpose)\n";

static int wants_help(int argc, char **argv, const char *usage) {
  for (int i = 0; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(usage, stdout);
      return 1;
    }
  return 0;
}

static int cmd_run(int argc, char **argv) {
  if (wants_help(argc, argv, usage_run)) return RL_EXIT_OK;
  rl_run_args a;
  memset(&a, 0, sizeof a);
  a.out = "results";
  for (int i = 0; i < argc; i++) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (o[0] != '-') {
      if (a.nspec >= RL_RUN_MAXSPECS) return bad("run", "too many specs (max %s)", "64");
      a.specs[a.nspec++] = o;
      continue;
    }
    if (!strcmp(o, "--resume")) {
      a.resume = 1;
      continue;
    }
    if (!rl_in_list("--out,--jobs,--shard,--opt", o)) return bad("run", "unknown option '%s'", o);
    if (!v) return bad("run", "option %s needs a value", o);
    i++;
    long x;
    int st;
    if (!strcmp(o, "--out")) a.out = v;
    else if (!strcmp(o, "--jobs")) {
      if ((st = long_flag("run", RL_NUM_jobs, o, v, &x))) return st;
      a.jobs = (int)x;
    } else if (!strcmp(o, "--shard")) {
      /* I/N: N from the number table, 1 <= I <= N */
      char num[64];
      const char *slash = strchr(v, '/');
      long si, sn;
      if (!slash || (size_t)(slash - v) >= sizeof num)
        return bad("run", "--shard '%s' (expected I/N with 1 <= I <= N)", v);
      snprintf(num, sizeof num, "%.*s", (int)(slash - v), v);
      if ((st = long_flag("run", RL_NUM_shards, "--shard N", slash + 1, &sn))) return st;
      if (rl_parse_long(num, 1, sn, &si)) return bad("run", "--shard '%s' (expected I/N with 1 <= I <= N)", v);
      a.shard_i = (int)si;
      a.shard_n = (int)sn;
    } else if (!strcmp(o, "--opt")) {
      if (a.nopts >= RL_MAX_OPTS) return bad("run", "too many --opt (max %s)", "64");
      a.opts[a.nopts++] = v;
    } else return bad("run", "unknown option '%s'", o);
  }
  static char found[RL_RUN_MAXSPECS][512];
  if (!a.nspec) { /* the bundled studies */
    DIR *d = opendir("experiments");
    struct dirent *e;
    while (d && (e = readdir(d)) && a.nspec < RL_RUN_MAXSPECS) {
      size_t l = strlen(e->d_name);
      if (l > 4 && !strcmp(e->d_name + l - 4, ".ini")) {
        snprintf(found[a.nspec], sizeof found[0], "experiments/%s", e->d_name);
        a.specs[a.nspec] = found[a.nspec];
        a.nspec++;
      }
    }
    if (d) closedir(d);
    if (!a.nspec) return bad("run", "no SPEC.ini given and no experiments/*.ini here%s", "");
    qsort(found, (size_t)a.nspec, sizeof found[0], (int (*)(const void *, const void *))strcmp);
    for (int i = 0; i < a.nspec; i++) a.specs[i] = found[i];
  }
  /* every --opt checked against the option table before anything is created */
  for (int i = 0; i < a.nopts; i++) {
    rl_opt_value ov;
    char err[2048];
    if (rl_opt_parse(a.opts[i], &ov, err, sizeof err)) {
      rl_errorf("%s", err);
      return RL_EXIT_BADINPUT;
    }
  }
  /* MuJoCo's warnings stay quiet; its errors end the worker with exit 2 (mujoco_error) */
  return rl_run(&a);
}

static int cmd_merge(int argc, char **argv) {
  if (wants_help(argc, argv, usage_merge)) return RL_EXIT_OK;
  const char *out = NULL;
  const char **dirs = calloc((size_t)argc + 1, sizeof *dirs);
  int n = 0;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--out")) {
      if (i + 1 >= argc) {
        free(dirs);
        return bad("merge", "option %s needs a value", "--out");
      }
      out = argv[++i];
    } else if (argv[i][0] == '-') {
      free(dirs);
      return bad("merge", "unknown option '%s'", argv[i]);
    } else dirs[n++] = argv[i];
  }
  int st = !n     ? bad("merge", "missing DIR%s", "")
           : !out ? bad("merge", "missing --out OUT%s", "")
                  : rl_merge(out, dirs, n);
  free(dirs);
  return st;
}

static int cmd_check(int argc, char **argv) {
  if (wants_help(argc, argv, usage_check)) return RL_EXIT_OK;
  rl_check_args a = {NULL, "reports/baselines", 0};
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--update-baseline")) a.update = 1;
    else if (!strcmp(argv[i], "--baseline")) {
      if (i + 1 >= argc) return bad("check", "option %s needs a value", "--baseline");
      a.baseline = argv[++i];
    } else if (argv[i][0] == '-') return bad("check", "unknown option '%s'", argv[i]);
    else if (a.results) return bad("check", "unexpected argument '%s' (one RESULTS folder)", argv[i]);
    else a.results = argv[i];
  }
  if (!a.results) return bad("check", "missing RESULTS%s", "");
  return rl_check(&a);
}

/* `rigidlab fields [--markdown]`: the data registry's reference (docs/fields.md is its Markdown form) */
static int cmd_fields(int argc, char **argv) {
  int markdown = 0;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--markdown")) markdown = 1;
    else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs("usage: rigidlab fields [--markdown]\n", stdout);
      return 0;
    } else return bad("fields", "unknown argument '%s' (allowed: --markdown)", argv[i]);
  }
  rl_fields_print(stdout, markdown);
  return fflush(stdout) ? RL_EXIT_BADINPUT : 0;
}

int main(int argc, char **argv) {
  /* every subcommand: temporaries removed on exit and on SIGINT/SIGTERM/SIGHUP (csv.h) */
  rl_tmp_catch_signals();
  mju_user_error = mujoco_error;
  mju_user_warning = mujoco_warning;
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    fputs(usage_main, argc < 2 ? stderr : stdout);
    return argc < 2 ? RL_EXIT_BADINPUT : 0;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "--help-options")) return cmd_help_options(argc - 2, argv + 2);
  if (!strcmp(cmd, "verify")) return cmd_verify(argc - 2, argv + 2);
  if (!strcmp(cmd, "sim")) return cmd_sim(argc - 2, argv + 2);
  if (!strcmp(cmd, "bench")) return cmd_bench(argc - 2, argv + 2);
  if (!strcmp(cmd, "run")) return cmd_run(argc - 2, argv + 2);
  if (!strcmp(cmd, "merge")) return cmd_merge(argc - 2, argv + 2);
  if (!strcmp(cmd, "check")) return cmd_check(argc - 2, argv + 2);
  if (!strcmp(cmd, "report")) return cmd_report(argc - 2, argv + 2);
  if (!strcmp(cmd, "fields")) return cmd_fields(argc - 2, argv + 2);
  rl_errorf(
      "unknown command '%s' (commands: verify, sim, bench, run, merge, check, report, fields; see 'rigidlab --help')",
      cmd);
  return RL_EXIT_BADINPUT;
}
