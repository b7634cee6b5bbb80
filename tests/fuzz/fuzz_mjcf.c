/* fuzz_mjcf.c — libFuzzer harness of the MJCF import path: the input is an MJCF document, compiled by
 * MuJoCo (mj_loadXML from a virtual file: no disk), imported into rigidlab's model (rl_import_mjmodel)
 * with the checks `sim` makes (every model number finite, the solver's options), then stepped a few times
 * by the Newton engine and by AVBD, in double precision.
 * The harness keeps its own cost bounded and stays off the disk: inputs that name files (include, mesh,
 * texture, height-field files) or grow models by composite are skipped, as are compiled models above a
 * few dozen bodies, geoms or dofs, and iteration budgets are capped.
 * Checked: a refusal by the import is one line; an accepted model steps without a sanitizer report. */
#include <math.h>
#include <setjmp.h>
#include <mujoco/mujoco.h>
#include "fuzz_util.h"
#include "rl_avbd.h"
#include "rl_import.h"

#define FUZZ_STEPS   5
#define FUZZ_MAXITER 50
#define FUZZ_MAXBODY 40
#define FUZZ_MAXGEOM 64
#define FUZZ_MAXDOF  60
#define FUZZ_MAXVERT 2000
#define FUZZ_MAXCON  2000
#define FUZZ_MAXEFC  20000

static jmp_buf on_mj_error;
static void mj_error(const char *msg) {
  (void)msg;
  longjmp(on_mj_error, 1);
}
static void quiet(const char *msg) { (void)msg; }

/* a byte string inside the input (case-sensitive, as MJCF attribute and element names are) */
static int contains(const uint8_t *data, size_t size, const char *word) {
  size_t n = strlen(word);
  for (size_t i = 0; i + n <= size; i++)
    if (!memcmp(data + i, word, n)) return 1;
  return 0;
}

/* 1 if the text sets attribute `name` (name="N", spaces allowed around =) to a number above `limit`: MuJoCo's own
   compiler allocates its data from njmax, nconmax and nstack before any check of ours can run (njmax = 7469 asked
   mj_makeData for 2.3 GB, the fuzzer's memory limit), so such inputs test MuJoCo's allocator, not rigidlab */
static int sets_above(const uint8_t *data, size_t size, const char *name, double limit) {
  size_t n = strlen(name);
  for (size_t i = 0; i + n < size; i++) {
    if (memcmp(data + i, name, n)) continue;
    size_t k = i + n;
    while (k < size && (data[k] == ' ' || data[k] == '\t' || data[k] == '\n' || data[k] == '\r')) k++;
    if (k >= size || data[k] != '=') continue;
    k++;
    while (k < size && (data[k] == ' ' || data[k] == '\t' || data[k] == '\n' || data[k] == '\r')) k++;
    if (k >= size || (data[k] != '"' && data[k] != '\'')) continue;
    k++;
    double v = 0;
    int digits = 0;
    while (k < size && data[k] >= '0' && data[k] <= '9' && digits < 12) {
      v = 10 * v + (data[k++] - '0');
      digits++;
    }
    if (digits == 12 || v > limit) return 1;
  }
  return 0;
}

/* a model small enough to step within the harness's time budget */
static int small(const mjModel *m) {
  return m->nbody <= FUZZ_MAXBODY && m->ngeom <= FUZZ_MAXGEOM && m->nv <= FUZZ_MAXDOF && m->nmeshvert <= FUZZ_MAXVERT &&
         m->nconmax <= FUZZ_MAXCON && m->njmax <= FUZZ_MAXEFC && m->neq <= FUZZ_MAXBODY;
}

/* every real number of the rigidlab model finite (the check `sim` makes before stepping) */
static int model_finite(const rl_model *m) {
#define RL_X_FIELD(type, name, count, width)            \
  if (sizeof(type) == sizeof(real) && (type)0.5 != 0)   \
    for (long i = 0; i < (long)m->count * (width); i++) \
      if (!isfinite((double)((const real *)(const void *)m->name)[i])) return 0;
  RL_MODEL_FIELDS(RL_X_FIELD)
#undef RL_X_FIELD
  return 1;
}

/* a few Newton steps from qpos0 */
static void run_newton(rl_model *m) {
  m->opt.solver = RL_SOLVER_NEWTON;
  char why[512] = "";
  if (rl_solver_check_options(m, why, sizeof why)) {
    FUZZ_REQUIRE(fuzz_one_line(why), "solver options refused with '%s'", why);
    return;
  }
  rl_data *d = rl_data_alloc(m);
  if (!d) return;
  for (int s = 0; s < FUZZ_STEPS; s++) rl_step(m, d);
  rl_data_free(d);
}

/* a few AVBD steps from qpos0 */
static void run_avbd(rl_model *m) {
  char why[512] = "";
  rl_avbd_param prm = rl_avbd_default_param(m);
  if (prm.iterations > FUZZ_MAXITER) prm.iterations = FUZZ_MAXITER;
  rl_avbd *am = rl_avbd_build(m, &prm, why, sizeof why);
  if (!am) {
    FUZZ_REQUIRE(fuzz_one_line(why), "AVBD refused with '%s'", why);
    return;
  }
  rl_data *d = rl_data_alloc(m);
  if (d) {
    rl_avbd_from_generalized(am, m, d);
    for (int s = 0; s < FUZZ_STEPS; s++) rl_avbd_step(am, m, d);
    rl_data_free(d);
  }
  rl_avbd_free(am);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mjVFS *vfs;
  if (size > 32768 || contains(data, size, "file") || contains(data, size, "composite")) return 0;
  if (sets_above(data, size, "njmax", 2000) || sets_above(data, size, "nconmax", 2000) ||
      sets_above(data, size, "nstack", 1e7))
    return 0;
  if (!vfs) {
    vfs = malloc(sizeof *vfs); /* ~2 MB of file names: once */
    mj_defaultVFS(vfs);
    mju_user_error = mj_error;
    mju_user_warning = quiet;
  }
  if (mj_makeEmptyFileVFS(vfs, "fuzz.xml", (int)size + 1)) return 0;
  int k = mj_findFileVFS(vfs, "fuzz.xml");
  memcpy(vfs->filedata[k], data, size);
  ((char *)vfs->filedata[k])[size] = 0;
  mjModel *volatile mjm = NULL;
  rl_model *volatile m = NULL;
  if (setjmp(on_mj_error)) goto done; /* mju_error from MuJoCo outside its compiler: not ours to test */
  char err[1024] = "";
  mjm = mj_loadXML("fuzz.xml", vfs, err, sizeof err);
  if (!mjm || !small(mjm)) goto done;
  if (mjm->opt.iterations > FUZZ_MAXITER) mjm->opt.iterations = FUZZ_MAXITER;
  if (mjm->opt.mpr_iterations > FUZZ_MAXITER) mjm->opt.mpr_iterations = FUZZ_MAXITER;
  rl_option o;
  rl_option_default(&o);
  m = rl_import_mjmodel(mjm, &o, "fuzz.xml", err, sizeof err);
  if (!m) {
    FUZZ_REQUIRE(fuzz_one_line(err), "import refused with '%s'", err);
    goto done;
  }
  if (!model_finite(m)) goto done;
  run_newton(m);
  run_avbd(m);
done:
  if (m) rl_model_free(m);
  if (mjm) mj_deleteModel(mjm);
  mj_deleteFileVFS(vfs, "fuzz.xml");
  return 0;
}
