/* test_floor.c — the float representation floor of qacc_smooth = M⁻¹·qfrc_smooth, and rigidlab's f32 error
 * against it.
 *
 * The foundation issue asks f32 qacc_smooth ≤ 1e-5 relative to MuJoCo.  A float engine receives M and
 * qfrc_smooth (or the quantities they are built from) in float: rounding MuJoCo's own double M and
 * qfrc_smooth to float and solving that system exactly (LAPACK dposv in double) already moves qacc_smooth
 * by the "floor" below, whatever algorithm follows.  Over the states `rigidlab verify` uses (100, seed 7),
 * with verify's error measure (max_s ‖Δ‖∞ / max(‖qacc‖∞, 0.1·max_s ‖qacc‖∞)), printed per model beside
 * rigidlab's f32 qacc_smooth row (`rigidlab verify --precision f32 --stages smooth`).  Measured (seed 7):
 * humanoid floor 6.4e-6, rigidlab 1.8e-5 (2.9×); chain8 1.8e-6 / 4.8e-6; microduck 8.1e-8 / 4.6e-7.  Beside it,
 * the same rounded system factored and solved in float by a textbook Cholesky: humanoid 1.6e-5, i.e. a float
 * factorization of exactly rounded inputs already misses 1e-5 there, and rigidlab's whole float pipeline is
 * within 1.2× of it (chain8 1.7×; held to 2×).  The
 * floor counts one rounding of the finished M and qfrc_smooth only: a float engine also rounds while it
 * builds them (RNEA, CRB), so the floor is a lower bound, not a target.  Regression guard: rigidlab stays
 * within max(4 × floor, 1e-6) on the models whose error comes from the solve.  slider_ball is different:
 * floor 1.6e-7 but rigidlab 3.3e-5, because its qfrc_bias (slides + ball on one body, offset and rotated
 * inertial frames) carries a float cancellation of 3e-6 of ‖qfrc‖∞ that M⁻¹ amplifies; it is held to the
 * f32 tolerance of the M⁻¹ stages (5e-5) here. */
#include <criterion/criterion.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "states.h"

#define NSTATE 100
#define SEED 7

/* the same rounded system factored and solved in float (dense Cholesky LLᵀ, float arithmetic throughout):
   what a textbook float solve adds to the input rounding */
static void float_cholesky_solve(int n, const double *A, const double *b, double *x) {
  float *L = calloc((size_t)(n * n), sizeof(float)), *y = malloc(sizeof(float) * (size_t)n);
  for (int j = 0; j < n; j++) {
    float d = (float)A[j * n + j];
    for (int k = 0; k < j; k++) d -= L[j * n + k] * L[j * n + k];
    L[j * n + j] = sqrtf(d);
    for (int i = j + 1; i < n; i++) {
      float v = (float)A[i * n + j];
      for (int k = 0; k < j; k++) v -= L[i * n + k] * L[j * n + k];
      L[i * n + j] = v / L[j * n + j];
    }
  }
  for (int i = 0; i < n; i++) { /* L y = b */
    float v = (float)b[i];
    for (int k = 0; k < i; k++) v -= L[i * n + k] * y[k];
    y[i] = v / L[i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) { /* Lᵀ x = y */
    float v = y[i];
    for (int k = i + 1; k < n; k++) v -= L[k * n + i] * y[k];
    y[i] = v / L[i * n + i];
  }
  for (int i = 0; i < n; i++) x[i] = y[i];
  free(L);
  free(y);
}

static double floor_of(const char *path, double *float_solve) {
  char err[1000];
  mjModel *m = mj_loadXML(path, NULL, err, sizeof err);
  cr_assert_not_null(m, "%s: %s", path, err);
  mjData *d = mj_makeData(m);
  rl_states S;
  cr_assert_eq(rl_states_draw(m, NSTATE, SEED, &S), 0);
  int nv = m->nv;
  double *M = malloc(sizeof(double) * (size_t)(nv * nv)), *x = malloc(sizeof(double) * (size_t)nv);
  double *Mf = malloc(sizeof(double) * (size_t)(nv * nv)), *xf = malloc(sizeof(double) * (size_t)nv);
  double *err_s = malloc(sizeof(double) * NSTATE), *mag_s = malloc(sizeof(double) * NSTATE), magmax = 0;
  double *errf_s = malloc(sizeof(double) * NSTATE);
  for (int s = 0; s < NSTATE; s++) {
    memcpy(d->qpos, S.qpos + (size_t)s * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
    memcpy(d->qvel, S.qvel + (size_t)s * (size_t)nv, sizeof(double) * (size_t)nv);
    if (m->nu) memcpy(d->ctrl, S.ctrl + (size_t)s * (size_t)m->nu, sizeof(double) * (size_t)m->nu);
    mj_forward(m, d);
    mj_fullM(m, M, d->qM);
    /* the system as a float engine holds it, solved exactly */
    for (int i = 0; i < nv * nv; i++) M[i] = (double)(float)M[i];
    for (int i = 0; i < nv; i++) x[i] = (double)(float)d->qfrc_smooth[i];
    memcpy(Mf, M, sizeof(double) * (size_t)(nv * nv));
    float_cholesky_solve(nv, Mf, x, xf);
    cr_assert_eq(LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', nv, 1, M, nv, x, 1), 0, "%s: state %d: dposv", path, s);
    double e = 0, g = 0, ef = 0;
    for (int i = 0; i < nv; i++) {
      ef = fmax(ef, fabs(xf[i] - d->qacc_smooth[i]));
      e = fmax(e, fabs(x[i] - d->qacc_smooth[i]));
      g = fmax(g, fabs(d->qacc_smooth[i]));
    }
    err_s[s] = e;
    errf_s[s] = ef;
    mag_s[s] = g;
    magmax = fmax(magmax, g);
  }
  double fl = 0, fs = 0;
  for (int s = 0; s < NSTATE; s++) {
    fl = fmax(fl, err_s[s] / fmax(mag_s[s], 0.1 * magmax));
    fs = fmax(fs, errf_s[s] / fmax(mag_s[s], 0.1 * magmax));
  }
  *float_solve = fs;
  free(Mf);
  free(xf);
  free(errf_s);
  free(M);
  free(x);
  free(err_s);
  free(mag_s);
  rl_states_free(&S);
  mj_deleteData(d);
  mj_deleteModel(m);
  return fl;
}

/* rigidlab's f32 qacc_smooth max_rel_err on the same states, from `rigidlab verify` (its CSV) */
static double ours_of(const char *path) {
  char cmd[2048], csv[256];
  snprintf(csv, sizeof csv, "/tmp/rl_floor_%ld.csv", (long)getpid());
  snprintf(cmd, sizeof cmd, "%s verify %s --precision f32 --states %d --seed %d --stages smooth --csv %s > /dev/null", RIGIDLAB,
           path, NSTATE, SEED, csv);
  if (system(cmd)) {} /* exit 1 when a row is outside its tolerance: the value is what is judged here */
  FILE *f = fopen(csv, "r");
  cr_assert_not_null(f, "%s: no CSV from rigidlab verify", path);
  char line[1024];
  double v = NAN;
  while (fgets(line, sizeof line, f)) {
    char *q = strstr(line, ",smooth,qacc_smooth,");
    if (q) {
      double abs_err, rel;
      if (sscanf(q + strlen(",smooth,qacc_smooth,"), "%lf,%lf", &abs_err, &rel) == 2) v = rel;
    }
  }
  fclose(f);
  remove(csv);
  return v;
}

/* BOUND: the largest f32 error allowed (NAN: max(4 × floor, 1e-6)) */
static void check(const char *path, double bound) {
  double fs, fl = floor_of(path, &fs), ours = ours_of(path);
  if (isnan(bound)) bound = fmax(4 * fl, 1e-6);
  printf("%-52s floor %.2e  float Cholesky %.2e  rigidlab f32 %.2e (%.1f x floor, bound %.1e)\n", path, fl, fs, ours,
         ours / fl, bound);
  fflush(stdout);
  cr_expect(fl > 0 && ours >= 0.5 * fl, "%s: f32 %.3e below half the float floor %.3e: the measure is broken", path, ours, fl);
  cr_expect(ours <= bound, "%s: f32 qacc_smooth %.3e above %.1e (float floor %.3e)", path, ours, bound, fl);
  if (bound < 5e-5)
    cr_expect(ours <= 2 * fmax(fs, 1e-7), "%s: f32 qacc_smooth %.3e above 2x a textbook float Cholesky's %.3e", path,
              ours, fs);
}

Test(floor, qacc_smooth_against_the_float_floor, .timeout = 300) {
  check(SRCDIR "/experiments/scenes/chain8.xml", NAN);
  check(SRCDIR "/experiments/scenes/microduck.xml", NAN);
  check(SRCDIR "/tests/models/slider_ball.xml", 5e-5);
  const char *hum = "/usr/share/mujoco/model/humanoid/humanoid.xml";
  if (!access(hum, R_OK)) check(hum, NAN);
}
