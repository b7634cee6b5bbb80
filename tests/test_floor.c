/* test_floor.c — rigidlab's f32 qacc_smooth against the floor of any float engine.
 *
 * The foundation issue asks f32 qacc_smooth ≤ 1e-5 relative to MuJoCo.  A float engine receives the state
 * (qpos, qvel, ctrl) in float: MuJoCo in double on the float-rounded state already moves qacc_smooth by the
 * "state floor" below, whatever a float engine does after.  Beside it, the "M floor": MuJoCo's own double M
 * and qfrc_smooth rounded to float once and solved exactly (LAPACK dposv) — the floor of any engine that
 * forms M in float and factors it.  rigidlab does not form M for qacc_smooth: its bias forces and M⁻¹ are
 * evaluated at each body's own COM (engine/smooth_local.c), so it can and does go below the M floor on the
 * humanoids.  Over the states `rigidlab verify` uses (100, seed 7), with verify's error measure
 * (max_s ‖Δ‖∞ / max(‖qacc‖∞, 0.1·max_s ‖qacc‖∞)), printed per model beside `rigidlab verify --precision f32
 * --stages smooth`'s qacc_smooth row.  Held: ≤ 1e-5 (the bar) and ≤ 30 × the state floor, also for the
 * humanoid moved 50 m from the origin (the lever arms come from link-sized terms, not world positions). */
#include <criterion/criterion.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "states.h"

#define NSTATE 100
#define SEED   7

/* state s into d, each value rounded to float when `round` */
static void put_state(const mjModel *m, mjData *d, const rl_states *S, int s, int round) {
  memcpy(d->qpos, S->qpos + (size_t)s * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
  memcpy(d->qvel, S->qvel + (size_t)s * (size_t)m->nv, sizeof(double) * (size_t)m->nv);
  if (m->nu) memcpy(d->ctrl, S->ctrl + (size_t)s * (size_t)m->nu, sizeof(double) * (size_t)m->nu);
  if (!round) return;
  for (int i = 0; i < m->nq; i++) d->qpos[i] = (float)d->qpos[i];
  for (int i = 0; i < m->nv; i++) d->qvel[i] = (float)d->qvel[i];
  for (int i = 0; i < m->nu; i++) d->ctrl[i] = (float)d->ctrl[i];
}

/* verify's measure of x against ref over the states (n values per state) */
static double rel_measure(const double *x, const double *ref, int nstate, int n) {
  double magmax = 0, worst = 0;
  for (int i = 0; i < nstate * n; i++) magmax = fmax(magmax, fabs(ref[i]));
  for (int s = 0; s < nstate; s++) {
    double e = 0, g = 0;
    for (int i = 0; i < n; i++) {
      e = fmax(e, fabs(x[s * n + i] - ref[s * n + i]));
      g = fmax(g, fabs(ref[s * n + i]));
    }
    worst = fmax(worst, e / fmax(g, 0.1 * magmax));
  }
  return worst;
}

/* the state floor and the M floor of qacc_smooth on `path` */
/* f_floor: MuJoCo's exact M with qfrc_smooth rounded to float, solved exactly — what holding the
   generalized forces in float alone costs */
static void floors_of(const char *path, double *state_floor, double *m_floor, double *f_floor) {
  char err[1000];
  mjModel *m = mj_loadXML(path, NULL, err, sizeof err);
  cr_assert_not_null(m, "%s: %s", path, err);
  mjData *d = mj_makeData(m);
  rl_states S;
  cr_assert_eq(rl_states_draw(m, NSTATE, SEED, &S), 0);
  int nv = m->nv;
  size_t nn = (size_t)NSTATE * (size_t)nv;
  double *ref = malloc(sizeof(double) * nn), *rounded = malloc(sizeof(double) * nn);
  double *msolve = malloc(sizeof(double) * nn), *M = malloc(sizeof(double) * (size_t)(nv * nv));
  double *fsolve = malloc(sizeof(double) * nn);
  for (int s = 0; s < NSTATE; s++) {
    double *x = msolve + (size_t)s * (size_t)nv, *y = fsolve + (size_t)s * (size_t)nv;
    put_state(m, d, &S, s, 1);
    mj_forward(m, d);
    memcpy(rounded + (size_t)s * (size_t)nv, d->qacc_smooth, sizeof(double) * (size_t)nv);
    put_state(m, d, &S, s, 0);
    mj_forward(m, d);
    memcpy(ref + (size_t)s * (size_t)nv, d->qacc_smooth, sizeof(double) * (size_t)nv);
    mj_fullM(m, M, d->qM);
    for (int i = 0; i < nv; i++) y[i] = (double)(float)d->qfrc_smooth[i];
    cr_assert_eq(LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', nv, 1, M, nv, y, 1), 0, "%s: state %d: dposv", path, s);
    mj_fullM(m, M, d->qM);
    for (int i = 0; i < nv * nv; i++) M[i] = (double)(float)M[i];
    for (int i = 0; i < nv; i++) x[i] = (double)(float)d->qfrc_smooth[i];
    cr_assert_eq(LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', nv, 1, M, nv, x, 1), 0, "%s: state %d: dposv", path, s);
  }
  *state_floor = rel_measure(rounded, ref, NSTATE, nv);
  *m_floor = rel_measure(msolve, ref, NSTATE, nv);
  *f_floor = rel_measure(fsolve, ref, NSTATE, nv);
  free(fsolve);
  free(ref);
  free(rounded);
  free(msolve);
  free(M);
  rl_states_free(&S);
  mj_deleteData(d);
  mj_deleteModel(m);
}

/* rigidlab's f32 qacc_smooth max_rel_err on the same states, from `rigidlab verify` (its CSV) */
static double ours_of(const char *path) {
  char cmd[2048], csv[256];
  snprintf(csv, sizeof csv, "/tmp/rl_floor_%ld.csv", (long)getpid());
  snprintf(cmd, sizeof cmd, "%s verify %s --precision f32 --states %d --seed %d --stages smooth --csv %s > /dev/null",
           RIGIDLAB, path, NSTATE, SEED, csv);
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

/* below_m_floor: also expect rigidlab under the M floor (models whose M floor is conditioning-bound) */
static void check(const char *path, int below_m_floor) {
  double sf, mf, ff, ours = ours_of(path);
  floors_of(path, &sf, &mf, &ff);
  printf("%-52s state floor %.2e  M floor %.2e  force floor %.2e  rigidlab f32 %.2e (%.1f x state floor)\n", path, sf,
         mf, ff, ours, ours / sf);
  fflush(stdout);
  cr_expect(sf > 0 && ours >= 0.5 * sf, "%s: f32 %.3e below half the state floor %.3e: the measure is broken", path,
            ours, sf);
  cr_expect(ours <= 1e-5, "%s: f32 qacc_smooth %.3e above the issue's 1e-5 (state floor %.3e)", path, ours, sf);
  cr_expect(ours <= 30 * sf, "%s: f32 qacc_smooth %.3e above 30x the state floor %.3e", path, ours, sf);
  if (below_m_floor) cr_expect(ours < mf, "%s: f32 qacc_smooth %.3e not below the M floor %.3e", path, ours, mf);
}

/* A 20-link hinge chain (0.1 kg, 0.1 m links, free to swing): the limit of any float engine.  Rounding
   MuJoCo's exact qfrc_smooth to float alone (exact M) moves qacc_smooth by ~6e-4 (the force floor), 60x the
   issue's 1e-5, so no engine that holds generalized forces in float meets 1e-5 there; rigidlab is held to
   3x the force floor. */
static void check_chain20(void) {
  char path[256];
  snprintf(path, sizeof path, "/tmp/rl_floor_chain20_%ld.xml", (long)getpid());
  FILE *g = fopen(path, "w");
  cr_assert_not_null(g, "%s: cannot write", path);
  fputs("<mujoco model=\"chain20\"><option timestep=\"0.001\"/><worldbody><body name=\"base\" pos=\"0 0 2\">", g);
  for (int i = 0; i < 20; i++)
    fprintf(g,
            "<body name=\"l%d\" pos=\"%g 0 0\"><joint type=\"hinge\" axis=\"0 1 0\" damping=\"0.01\"/>"
            "<geom type=\"capsule\" fromto=\"0 0 0 0.1 0 0\" size=\"0.01\" mass=\"0.1\"/>",
            i, i ? 0.1 : 0.0);
  for (int i = 0; i < 21; i++) fputs("</body>", g);
  fputs("</worldbody></mujoco>\n", g);
  fclose(g);
  double sf, mf, ff, ours = ours_of(path);
  floors_of(path, &sf, &mf, &ff);
  printf("%-52s state floor %.2e  M floor %.2e  force floor %.2e  rigidlab f32 %.2e (%.1f x force floor)\n",
         "chain20 (generated)", sf, mf, ff, ours, ours / ff);
  cr_expect(ff > 1e-4, "chain20: force floor %.3e: the limit case is no longer one", ff);
  cr_expect(ours <= 3 * ff, "chain20: f32 qacc_smooth %.3e above 3x the force floor %.3e", ours, ff);
  remove(path);
}

/* humanoid.xml with its torso moved to (40, −30, 1.5): the same dynamics 50 m from the origin, where world
   positions carry 50·ε of rounding; written next to the original (same assets) under a temporary name.
   "" when the sample model is not installed. */
static const char *far_humanoid(char *path, size_t n) {
  const char *src = "/usr/share/mujoco/model/humanoid/humanoid.xml", *from = "<body name=\"torso\" pos=\"0 0 1.5\"";
  FILE *f = fopen(src, "r");
  if (!f) return "";
  static char text[1 << 16];
  size_t len = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[len] = 0;
  char *at = strstr(text, from);
  cr_assert_not_null(at, "%s: no torso body at 0 0 1.5", src);
  snprintf(path, n, "/tmp/rl_floor_far_%ld.xml", (long)getpid());
  FILE *g = fopen(path, "w");
  cr_assert_not_null(g, "%s: cannot write", path);
  fwrite(text, 1, (size_t)(at - text), g);
  fputs("<body name=\"torso\" pos=\"40 -30 1.5\"", g);
  fputs(at + strlen(from), g);
  fclose(g);
  return path;
}

Test(floor, qacc_smooth_against_the_float_floor, .timeout = 300) {
  check(SRCDIR "/experiments/scenes/chain8.xml", 0);
  check(SRCDIR "/experiments/scenes/microduck.xml", 0);
  check(SRCDIR "/tests/models/slider_ball.xml", 0);
  check(SRCDIR "/tests/models/nocontact_tree.xml", 0);
  const char *hum = "/usr/share/mujoco/model/humanoid/humanoid.xml",
             *hum100 = "/usr/share/mujoco/model/humanoid100/humanoid100.xml";
  if (!access(hum, R_OK)) check(hum, 1);
  if (!access(hum100, R_OK)) check(hum100, 1);
  char far[256];
  if (*far_humanoid(far, sizeof far)) {
    check(far, 1);
    remove(far);
  }
  check_chain20();
}

/* Public-style models whose f32 qacc_smooth is above 1e-5, each against the floor that explains it (100
   states, seed 7, as above; measured 2026-12-02):
     dm_swimmer6  force floor 1.07e-5 (exact M, only qfrc_smooth in float: 0.01 kg links, armature 1e-6),
                  M floor 3.15e-5; rigidlab 6.04e-5 — held to ≤ 2× the M floor (1.9× measured).
   Each also fails if its floor stops being the reason (a floor under 1e-5 where the bar says above).
   cassie_like (check_m_floor): M floor 2.35e-5 (an engine forming M in float and factoring it), state floor
   9.1e-8; rigidlab 8.39e-6 (1.27e-5 before M's factor was eliminated on IA's 21 distinct numbers) — held to
   the 1e-5 and below the M floor, and the M floor must stay above 1e-5 (it is why the state-floor
   bar of check, ~92× here, does not apply). */
static void check_public(const char *path, char floor_kind, double factor) {
  double sf, mf, ff, ours = ours_of(path);
  floors_of(path, &sf, &mf, &ff);
  printf("%-52s state floor %.2e  M floor %.2e  force floor %.2e  rigidlab f32 %.2e\n", path, sf, mf, ff, ours);
  fflush(stdout);
  double fl = floor_kind == 's' ? sf : floor_kind == 'm' ? mf : ff;
  cr_expect(ours > 1e-5, "%s: f32 qacc_smooth %.3e now meets 1e-5: move it to the plain check", path, ours);
  cr_expect(fl > 1e-5 || floor_kind == 'm', "%s: the %c floor %.3e no longer exceeds 1e-5", path, floor_kind, fl);
  if (floor_kind == 'm') cr_expect(ff > 1e-5 || ours < mf, "%s: neither force floor above 1e-5 nor below M", path);
  cr_expect(ours <= factor * fl, "%s: f32 qacc_smooth %.3e above %g x the %c floor %.3e", path, ours, factor,
            floor_kind, fl);
}

/* a model whose M floor is above 1e-5: rigidlab at or below 1e-5 and below that floor */
static void check_m_floor(const char *path) {
  double sf, mf, ff, ours = ours_of(path);
  floors_of(path, &sf, &mf, &ff);
  printf("%-52s state floor %.2e  M floor %.2e  force floor %.2e  rigidlab f32 %.2e\n", path, sf, mf, ff, ours);
  fflush(stdout);
  cr_expect(sf > 0 && ours >= 0.5 * sf, "%s: f32 %.3e below half the state floor %.3e: the measure is broken", path,
            ours, sf);
  cr_expect(mf > 1e-5, "%s: the M floor %.3e no longer exceeds 1e-5: move it to the plain check", path, mf);
  cr_expect(ours <= 1e-5, "%s: f32 qacc_smooth %.3e above the issue's 1e-5", path, ours);
  cr_expect(ours < mf, "%s: f32 qacc_smooth %.3e not below the M floor %.3e", path, ours, mf);
}

Test(floor, public_models_against_their_float_floor, .timeout = 300) {
  check_m_floor(SRCDIR "/tests/public/cassie_like.xml");
  check_public(SRCDIR "/tests/public/dm_swimmer6.xml", 'm', 2);
}

/* ---------------------------------------------------------------- verify's own floor rows */

/* one row of a verify CSV */
typedef struct vrow {
  char q[64];
  double rel, tol;
  int pass;
} vrow;

/* `rigidlab verify PATH --precision f32 --states STATES --seed 1` into rows; returns the count */
static int verify_rows_at(const char *path, int states, vrow *rows, int max) {
  char cmd[2048], csv[256], line[1024];
  snprintf(csv, sizeof csv, "/tmp/rl_floor_rows_%ld.csv", (long)getpid());
  snprintf(cmd, sizeof cmd, "%s verify %s --precision f32 --states %d --seed 1 --csv %s > /dev/null 2>&1", RIGIDLAB, path,
           states, csv);
  if (system(cmd)) {} /* exit 1 when a row fails: the rows are what is judged here */
  FILE *f = fopen(csv, "r");
  cr_assert_not_null(f, "%s: no CSV from rigidlab verify", path);
  int n = 0;
  while (fgets(line, sizeof line, f) && n < max) {
    char *fld[8];
    int k = 0;
    for (char *t = strtok(line, ",\n"); t && k < 8; t = strtok(NULL, ",\n")) fld[k++] = t;
    if (k < 8 || strcmp(fld[1], "f32")) continue;
    snprintf(rows[n].q, sizeof rows[n].q, "%s", fld[3]);
    rows[n].rel = atof(fld[5]);
    rows[n].tol = atof(fld[6]);
    rows[n].pass = atoi(fld[7]);
    n++;
  }
  fclose(f);
  remove(csv);
  return n;
}

/* verify_rows_at tools/acceptance's 50 states */
static int verify_rows(const char *path, vrow *rows, int max) { return verify_rows_at(path, 50, rows, max); }

static const vrow *row_of(const vrow *rows, int n, const char *q) {
  for (int i = 0; i < n; i++)
    if (!strcmp(rows[i].q, q)) return &rows[i];
  return NULL;
}

/* verify judges an f32 row X with a float floor row X_floor against max(1e-5, k·F) (k = 4, reference/verify/
   tolerances.h).  On the models whose f32 rows failed under tools/acceptance (50 states, seed 1): every row passes;
   every row above 1e-5 has a floor that decides (F > 1e-5/k) and is within k·F (printed: ours / F).  panda_like's
   qacc_smooth failed at 2.6e-5 with a floor of 7.3e-7 — rigidlab worse than float forces — and its floor is still
   tiny, so its bar stays 1e-5 (a summation that loses the servo forces again fails there, 36 floors). */
Test(floor, verify_judges_f32_rows_against_their_floors, .timeout = 300) {
  static const char *const models[] = {SRCDIR "/tests/public/cassie_like.xml", SRCDIR "/tests/public/dm_swimmer6.xml",
                                       "/usr/share/mujoco/model/composite/cloth.xml",
                                       "/usr/share/mujoco/model/composite/loop.xml",
                                       "/usr/share/mujoco/model/composite/rope.xml", "/usr/share/mujoco/model/flag/flag.xml",
                                       NULL};
  static vrow rows[512];
  double worst = 0;
  for (int k = 0; models[k]; k++) {
    if (access(models[k], R_OK)) continue;
    int n = verify_rows(models[k], rows, 512), decided = 0;
    cr_assert(n > 50, "%s: %d f32 rows", models[k], n);
    for (int i = 0; i < n; i++) {
      cr_expect(rows[i].pass, "%s: %s %.3e over its tolerance %.3e", models[k], rows[i].q, rows[i].rel, rows[i].tol);
      char fq[80];
      snprintf(fq, sizeof fq, "%.63s_floor", rows[i].q);
      const vrow *f = row_of(rows, n, fq);
      if (!f || rows[i].rel <= 1e-5) continue;
      decided++;
      printf("%-48s %-14s f32 %.2e  floor %.2e  %.2f floors\n", models[k], rows[i].q, rows[i].rel, f->rel,
             rows[i].rel / f->rel);
      worst = fmax(worst, rows[i].rel / f->rel);
      cr_expect(f->rel > 1e-5 / 4, "%s: %s %.3e above 1e-5 with a floor %.3e that does not decide", models[k], rows[i].q,
                rows[i].rel, f->rel);
      cr_expect(rows[i].rel <= 4 * f->rel, "%s: %s %.3e above 4 floors (%.3e)", models[k], rows[i].q, rows[i].rel,
                f->rel);
    }
    cr_expect(decided > 0, "%s: no row above 1e-5 any more: the floor no longer decides there", models[k]);
  }
  printf("largest ratio where a floor decides: %.2f floors (k = 4)\n", worst);
  /* where rigidlab beats its floor by computing from link-sized terms, hold it there: cloth's site tendons, summed
     from xpos_rel along the tree with link-sized lever arms (RL_SEGMENT_OFFSETS), ten_J 1.8e-6 and ten_velocity
     2.9e-6 (from two world positions and metre-long lever arms: 9.9e-6 and 1.32e-5, which the floor alone would
     have excused) */
  const char *cloth = "/usr/share/mujoco/model/composite/cloth.xml";
  if (!access(cloth, R_OK)) {
    int nc = verify_rows(cloth, rows, 512);
    const vrow *tj = row_of(rows, nc, "ten_J"), *tv = row_of(rows, nc, "ten_velocity");
    cr_assert(tj && tv, "cloth: no ten_J or ten_velocity row");
    printf("%-48s ten_J %.2e  ten_velocity %.2e (held to 5e-6)\n", cloth, tj->rel, tv->rel);
    cr_expect(tj->rel <= 5e-6 && tv->rel <= 5e-6, "cloth: ten_J %.3e, ten_velocity %.3e above 5e-6", tj->rel, tv->rel);
  }
  int n = verify_rows(SRCDIR "/tests/public/panda_like.xml", rows, 512);
  const vrow *x = row_of(rows, n, "qacc_smooth"), *f = row_of(rows, n, "qacc_smooth_floor");
  cr_assert(x && f, "panda_like: no qacc_smooth or qacc_smooth_floor row");
  printf("%-48s %-14s f32 %.2e  floor %.2e  tolerance %.1e\n", "tests/public/panda_like.xml", "qacc_smooth", x->rel,
         f->rel, x->tol);
  cr_expect(f->rel < 1e-5 / 4, "panda_like: qacc_smooth floor %.3e no longer tiny", f->rel);
  cr_expect(fabs(x->tol - 1e-5) < 1e-12, "panda_like: qacc_smooth held to %.3e, not 1e-5", x->tol);
  cr_expect(x->pass && x->rel <= 1e-5, "panda_like: qacc_smooth %.3e", x->rel);
}

/* MuJoCo's cloth sample (81 bodies, 162 hinges under a free root) at the few states a user checks first (seed 1,
   5 and 20 states): f32 qacc_smooth within 4 floors.  With M⁻¹'s leaves-to-root sums added in float it was 8.8
   and 3.1 floors (3.28e-4, 2.43e-4; the floor the larger of the M floor and the float-storage pipeline's): the
   sums at the root over the whole tree cancel; gathered in double (RL_GATHERED_SOLVE) 1.42 and 1.24. */
Test(floor, cloth_qacc_smooth_at_few_states, .timeout = 120) {
  const char *cloth = "/usr/share/mujoco/model/composite/cloth.xml";
  if (access(cloth, R_OK)) cr_skip_test("no %s", cloth);
  static vrow rows[512];
  static const int states[] = {5, 20};
  for (int k = 0; k < 2; k++) {
    int n = verify_rows_at(cloth, states[k], rows, 512);
    const vrow *x = row_of(rows, n, "qacc_smooth"), *f = row_of(rows, n, "qacc_smooth_floor");
    cr_assert(x && f, "cloth: no qacc_smooth or qacc_smooth_floor row at %d states", states[k]);
    printf("%-48s %2d states qacc_smooth f32 %.2e  floor %.2e  %.2f floors\n", cloth, states[k], x->rel, f->rel,
           x->rel / f->rel);
    cr_expect(x->pass && x->rel <= 4 * f->rel, "cloth, %d states: qacc_smooth %.3e above 4 floors (%.3e)", states[k],
              x->rel, f->rel);
  }
}

/* The collision stage's per-contact floor (contact_floor_ratio): on hfield_terrain (50 states, seed 2) MPR contacts
   on the field's prisms whose MuJoCo normal or depth moves by more than tolerance/4 when the geom frames move by one
   float rounding are judged against 4 × that move instead of being counted on another branch; measured 15 such
   quantities, the largest 3.6 floors.  Held: the row is exercised (> 0) and passes (≤ 4), every collision row
   passes. */
Test(floor, contact_floor_on_a_height_field, .timeout = 120) {
  char cmd[2048], csv[256], line[1024];
  snprintf(csv, sizeof csv, "/tmp/rl_floor_hfield_%ld.csv", (long)getpid());
  snprintf(cmd, sizeof cmd,
           "%s verify %s/tests/models/hfield_terrain.xml --precision f32 --states 50 --seed 2 --stages collision "
           "--csv %s > /dev/null 2>&1",
           RIGIDLAB, SRCDIR, csv);
  if (system(cmd)) {} /* the rows are judged below */
  FILE *f = fopen(csv, "r");
  cr_assert_not_null(f, "hfield_terrain: no CSV from rigidlab verify");
  double ratio = -1;
  int failed = 0;
  while (fgets(line, sizeof line, f)) {
    char q[64];
    double a, r, t;
    int pass;
    if (sscanf(line, "%*[^,],f32,collision,%63[^,],%lf,%lf,%lf,%d", q, &a, &r, &t, &pass) != 5) continue;
    if (!strcmp(q, "contact_floor_ratio")) ratio = r;
    if (!pass) printf("hfield_terrain: collision %s %.3e over %.3e\n", q, r, t);
    failed += !pass;
  }
  fclose(f);
  remove(csv);
  printf("hfield_terrain (seed 2) contact_floor_ratio %.2f floors\n", ratio);
  cr_expect(ratio > 0 && ratio <= 4, "hfield_terrain: contact_floor_ratio %.3f (exercised and ≤ 4 expected)", ratio);
  cr_expect_eq(failed, 0, "hfield_terrain: %d collision rows failed", failed);
}
