/* rl_test_cli.h — what the end-to-end tests of the `rigidlab` command share: a scratch folder per test
 * (rl_cli_setup / rl_cli_teardown as Criterion .init / .fini), running the command with its output
 * captured, reading a metric back from a study's metrics.csv.  Needs RIGIDLAB (the command's path). */
#ifndef RL_TEST_CLI_H
#define RL_TEST_CLI_H

#include <criterion/criterion.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[256];

/* a fresh /tmp/rl_<NAME>_XXXXXX into tmpdir */
static inline void rl_cli_mkdtemp(const char *name) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/rl_%s_XXXXXX", name);
  cr_assert_not_null(mkdtemp(tmpdir));
}
static inline void rl_cli_teardown(void) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
  if (system(cmd)) {}
}

/* run `rigidlab ARGS`, stdout and stderr into OUT (OUTLEN bytes); the exit status */
/* write tmpdir/NAME from a printf FMT; path ← its path */
__attribute__((format(printf, 4, 5))) static inline void rl_cli_write(char *path, size_t n, const char *name,
                                                                      const char *fmt, ...) {
  snprintf(path, n, "%s/%s", tmpdir, name);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "%s: cannot write", path);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
  fclose(f);
}

static inline int rl_cli_run(const char *args, char *out, size_t outlen) {
  char cmd[8192], path[512];
  snprintf(path, sizeof path, "%s/log.txt", tmpdir);
  snprintf(cmd, sizeof cmd, "%s %s > %s 2>&1", RIGIDLAB, args, path);
  int st = system(cmd);
  out[0] = 0;
  FILE *f = fopen(path, "r");
  if (f) {
    size_t n = fread(out, 1, outlen - 1, f);
    out[n] = 0;
    fclose(f);
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* the value of METRIC of POINT in the metrics.csv at PATH; NAN when absent */
static inline double rl_cli_metric(const char *path, const char *point, const char *metric) {
  char line[1024], key[640], m[80];
  double v = NAN;
  FILE *f = fopen(path, "r");
  if (!f) return v;
  snprintf(key, sizeof key, ",%s,", point);
  snprintf(m, sizeof m, ",%s,", metric);
  while (fgets(line, sizeof line, f)) {
    char *q;
    if (strstr(line, key) && (q = strstr(line, m))) v = strtod(q + strlen(m), NULL);
  }
  fclose(f);
  return v;
}

#endif
