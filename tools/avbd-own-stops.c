/* avbd-own-stops — AVBD's stopping test judged along AVBD's own trajectory.
 *
 *   avbd-own-stops [--duration T] [--opt KEY=VALUE]... [--show] [--strict] MODEL.xml...      (f64)
 *   avbd-own-stops32 [--duration T] [--show] [--strict] MODEL.xml...    (f32: this file built with RL_REAL_F32;
 *                                                                        the reference still solves in double)
 *
 * Each model runs T seconds (default 1) from qpos0 under AVBD's default parameters.  Every step is
 * also solved by the dense reference of that step and judged by it (reference/verify/avbd_judge.h, the
 * judgement of the convergence study's own trajectory; reference/verify/avbd_ref.h: set up at the step start,
 * solved after the step from the active set of AVBD's final iterate to the step's complementarity
 * conditions), and a step flagged converged whose
 * poses are farther from the reference solution than the distance the test claims (stat.tol_lin m,
 * stat.tol_ang rad) is counted.  The convergence study (experiments/avbd_robots.ini) does the same on states
 * of MuJoCo's trajectory loaded into a fresh AVBD; here the states carry AVBD's own warm start (multipliers,
 * contact cache, static-friction anchors) as a simulation does.
 *
 * Per model one line: steps, unconverged steps, checked stops (flagged converged, reference converged, no
 * term the reference omits), those farther than claimed, the worst ratio distance / claim and its step, checked
 * stops whose solution has some limit, dry-friction row or contact in another state than AVBD's final iterate
 * (rl_avbd_ref.refined > 0), steps whose reference omits a term, steps whose reference did not converge, and
 * non-finite steps: as in `rigidlab sim`, such a step is undone (rl_avbd_step: the step-start poses, zero
 * velocity, its time passes), counted and not judged, and the trajectory goes on.
 * --show prints every stop farther than claimed and every non-finite step; --strict makes any such stop or
 * non-finite step fail the run (exit status 1), a gate for models where none is expected. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "avbd_judge.h"
#include "avbd_ref.h"
#include "pair.h"
#include "rl_avbd.h"

typedef struct counts {
  long steps, unconverged, checked, far, omitted, ref_unconverged, refined, nonfinite, worst_step, by[4], far_by[4];
  double worst;
} counts;

/* One step judged against its reference (avbd_judge.h); adds to *c: unconverged, checked (by basis), farther than
   claimed (ratio > 1, by basis), the worst ratio, checked steps whose solution changed the active set, omitted,
   reference unconverged, and non-finite steps (undone by the step, counted, the run goes on). */
static void step_checked(rl_avbd *am, const rl_model *m, rl_data *d, long k, int show, counts *c) {
  rl_avbd_step_judgement j;
  if (rl_avbd_step_judged(am, m, d, &j) != RL_OK) {
    c->nonfinite++;
    if (show) printf("  step %ld: not finite, undone\n", k + 1);
    return;
  }
  c->unconverged += !am->stat.converged;
  c->omitted += j.omitted;
  c->ref_unconverged += j.ref_unconverged;
  if (!j.checked) return;
  c->checked++;
  c->by[j.basis]++;
  c->refined += j.basis == RL_AVBD_REF_SOLVED && j.refined > 0;
  if (j.stop_false) {
    c->far++;
    c->far_by[j.basis]++;
    if (show)
      printf("  step %ld: %.3g m %.3g rad from the reference (claim %.3g m %.3g rad), %d sweeps, %d contacts; "
             "reference: %d Newton iterations, last step %.2g, stationarity %.2g N %.2g N m, %d changes to the "
             "active set, basis %d\n",
             k + 1, j.dx, j.dth, (double)am->stat.tol_lin, (double)am->stat.tol_ang, am->stat.iterations, am->stat.ncon,
             j.ref_iterations, j.ref_step, j.stationarity[0], j.stationarity[1], j.refined, j.basis);
  }
  if (j.ratio > c->worst) {
    c->worst = j.ratio;
    c->worst_step = k + 1;
  }
}

static int run_model(const char *path, double T, int show, int strict, char **opts, int nopts) {
  rl_common_args a;
  memset(&a, 0, sizeof a);
  a.model = path;
  for (int i = 0; i < nopts; i++) a.opts[a.nopts++] = opts[i];
  char err[1024];
  rl_pair p;
  if (rl_pair_load(&p, &a, 0, err, sizeof err)) {
    fprintf(stderr, "avbd-own-stops: %s\n", err);
    return 2;
  }
  rl_avbd_param prm = rl_avbd_default_param(p.m);
  rl_avbd *am = rl_avbd_build(p.m, &prm, err, sizeof err);
  if (!am) {
    fprintf(stderr, "avbd-own-stops: %s: %s\n", path, err);
    rl_pair_free(&p);
    return 2;
  }
  rl_data *d = rl_data_alloc(p.m);
  rl_avbd_from_generalized(am, p.m, d);
  counts c = {0};
  c.worst_step = -1;
  c.steps = lround(T / (double)p.m->opt.timestep);
  int st = 0;
  for (long k = 0; k < c.steps; k++) step_checked(am, p.m, d, k, show, &c);
  const char *base = strrchr(path, '/');
  printf("%-30s steps %5ld unconverged %4ld checked %5ld (admissible %ld solved %ld given %ld) farther-than-claimed "
         "%ld (%ld %ld %ld) worst %.3g (step %ld) state-changed %ld omitted %ld reference-unconverged %ld "
         "nonfinite %ld\n",
         base ? base + 1 : path, c.steps, c.unconverged, c.checked, c.by[1], c.by[2], c.by[3], c.far, c.far_by[1],
         c.far_by[2], c.far_by[3], c.worst, c.worst_step, c.refined, c.omitted, c.ref_unconverged, c.nonfinite);
  fflush(stdout);
  if (strict && (c.far > 0 || c.nonfinite > 0)) st = 1;
  rl_data_free(d);
  rl_avbd_free(am);
  rl_pair_free(&p);
  return st;
}

int main(int argc, char **argv) {
  openblas_set_num_threads(1); /* the reference's dense solves are small: threads only wait on each other */
  double T = 1;
  int show = 0, strict = 0, st = 0, n = 0, nopts = 0;
  char *opts[RL_MAX_OPTS];
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--duration") && i + 1 < argc) {
      char *end;
      T = strtod(argv[++i], &end);
      if (*end || !(T > 0)) {
        fprintf(stderr, "avbd-own-stops: --duration '%s': a positive number of seconds\n", argv[i]);
        return 2;
      }
    } else if (!strcmp(argv[i], "--show")) show = 1;
    else if (!strcmp(argv[i], "--strict")) strict = 1;
    else if (!strcmp(argv[i], "--opt") && i + 1 < argc) {
      if (nopts >= RL_MAX_OPTS) {
        fprintf(stderr, "avbd-own-stops: too many --opt (max %d)\n", RL_MAX_OPTS);
        return 2;
      }
      opts[nopts++] = argv[++i];
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "avbd-own-stops: unknown option '%s'\n", argv[i]);
      return 2;
    } else {
      int r = run_model(argv[i], T, show, strict, opts, nopts);
      st = r > st ? r : st;
      n++;
    }
  }
  if (!n) {
    fprintf(stderr, "usage: avbd-own-stops%s [--duration T] [--opt KEY=VALUE]... [--show] [--strict] MODEL.xml...\n",
            sizeof(real) == sizeof(float) ? "32" : "");
    return 2;
  }
  return st;
}
