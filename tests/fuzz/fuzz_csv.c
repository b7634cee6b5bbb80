/* fuzz_csv.c — libFuzzer harness of the CSV readers (reports/src/csv.c) as `check`, `report` and `merge`
 * use them: the table reader (rl_table_load: quotes, doubled quotes, CRLF, field counts), the cell number
 * reader (rl_table_num), the numeric matrix reader (rl_numcsv_read) and the trajectory reader with the
 * per-step metrics computed from it (rl_traj_read, rl_metric_series, rl_metric_step; runner.c).
 * Checked: a refusal is one line naming the file; an accepted table has its header's field count on every
 * row and line numbers that increase; an accepted trajectory has rows and its step column read back. */
#include "fuzz_util.h"
#include "csv.h"
#include "runner.h"
#include "spec.h"

static void check_refusal(const char *what, const char *path, const char *err) {
  FUZZ_REQUIRE(fuzz_one_line(err) && !strncmp(err, path, strlen(path)), "%s refused with '%s'", what, err);
}

/* the table reader and every cell through the number reader */
static void check_table(const char *path) {
  rl_table t;
  char err[1024] = "";
  if (rl_table_load(&t, path, err, sizeof err)) {
    check_refusal("rl_table_load", path, err);
    rl_table_free(&t);
    return;
  }
  FUZZ_REQUIRE(t.ncol >= 1 && t.nrow >= 0, "table %d x %d", t.nrow, t.ncol);
  for (int c = 0; c < t.ncol; c++) FUZZ_REQUIRE(rl_table_col(&t, t.hdr[c]) <= c, "column '%s'", t.hdr[c]);
  for (int r = 0; r < t.nrow; r++) {
    FUZZ_REQUIRE(t.line[r] >= 2 && (!r || t.line[r] > t.line[r - 1]), "row %d on line %d", r, t.line[r]);
    for (int c = 0; c < t.ncol; c++) {
      double v;
      FUZZ_REQUIRE(rl_table_cell(&t, r, c) != NULL, "cell %d,%d", r, c);
      if (rl_table_num(&t, r, c, &v, err, sizeof err)) check_refusal("rl_table_num", path, err);
    }
  }
  rl_table_free(&t);
}

/* the numeric matrix reader */
static void check_numcsv(const char *path) {
  char *hdr = NULL, err[1024] = "";
  int nrow, ncol;
  double *v = NULL;
  if (rl_numcsv_read(path, &hdr, &nrow, &ncol, &v, err, sizeof err)) {
    check_refusal("rl_numcsv_read", path, err);
    FUZZ_REQUIRE(!v && !hdr, "refused with the matrix or header still allocated");
    return;
  }
  FUZZ_REQUIRE(hdr && ncol >= 1, "matrix %d x %d", nrow, ncol);
  double sum = 0;
  for (long i = 0; i < (long)nrow * ncol; i++) sum += v[i];
  (void)sum;
  free(v);
  free(hdr);
}

/* a trajectory and the metrics `run` and `check` compute from it (against itself as the reference) */
static void check_traj(const char *path) {
  rl_traj t;
  char err[1024] = "";
  if (rl_traj_read(path, &t, err, sizeof err)) {
    check_refusal("rl_traj_read", path, err);
    return;
  }
  FUZZ_REQUIRE(t.nrow >= 1 && t.nq >= 1, "trajectory of %d rows, %d qpos", t.nrow, t.nq);
  double *r = malloc(sizeof *r * (size_t)t.nrow);
  for (int m = 0; m <= RL_MET_CONVERGED_FRAC; m++)
    if (!rl_metric_series(m, &t, &t, r)) (void)rl_metric_step(m, &t, r);
  free(r);
  rl_traj_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 65536) return 0;
  char path[1024];
  fuzz_write(path, sizeof path, "in.csv", data, size);
  check_table(path);
  check_numcsv(path);
  check_traj(path);
  return 0;
}
