/* fuzz_util.h — what the libFuzzer harnesses share: the input as a file (the readers under test take a
 * path, as the commands do), a failed-check abort that libFuzzer reports as a crash, and the one-line
 * rule of error messages. */
#ifndef RL_FUZZ_UTIL_H
#define RL_FUZZ_UTIL_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* a property the code under test promises and broke: print it and abort (libFuzzer saves the input) */
#define FUZZ_REQUIRE(cond, ...)                                        \
  do {                                                                 \
    if (!(cond)) {                                                     \
      fprintf(stderr, "fuzz: %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                    \
      fputc('\n', stderr);                                             \
      abort();                                                         \
    }                                                                  \
  } while (0)

/* a per-process scratch folder ($TMPDIR or /tmp), made once and removed at exit */
static char fuzz_dir_path[512];
static inline void fuzz_dir_remove(void) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", fuzz_dir_path);
  if (system(cmd)) {}
}
static inline const char *fuzz_dir(void) {
  if (!fuzz_dir_path[0]) {
    const char *t = getenv("TMPDIR");
    snprintf(fuzz_dir_path, sizeof fuzz_dir_path, "%s/rl_fuzz.%ld", t && *t ? t : "/tmp", (long)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", fuzz_dir_path);
    if (system(cmd)) {
      fprintf(stderr, "fuzz: cannot create %s\n", fuzz_dir_path);
      exit(1);
    }
    atexit(fuzz_dir_remove);
  }
  return fuzz_dir_path;
}

/* write the N bytes at DATA to NAME in the scratch folder; the path in PATH */
static inline void fuzz_write(char *path, size_t n, const char *name, const uint8_t *data, size_t size) {
  snprintf(path, n, "%s/%s", fuzz_dir(), name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f)) {
    fprintf(stderr, "fuzz: cannot write %s\n", path);
    exit(1);
  }
}

/* an error message: non-empty and one line (no newline; a carriage return the input itself holds may be
   quoted back) */
static inline int fuzz_one_line(const char *msg) { return msg[0] && !strchr(msg, '\n'); }
#endif
