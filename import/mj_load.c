/* mj_load.c — MuJoCo loading with a one-line error (precision-free). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "mj_load.h"

/* Fold a multi-line MuJoCo message into one line. */
static void one_line(char *s) {
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\r')) s[--n] = 0;
  for (size_t i = 0; i < n; i++)
    if (s[i] == '\n' || s[i] == '\r' || s[i] == '\t') s[i] = ' ';
}

mjModel *rl_mj_load(const char *path, char *err, int errlen) {
  struct stat sb;
  if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
    snprintf(err, (size_t)errlen, "%s: is %s, not an MJCF model file", path,
             S_ISDIR(sb.st_mode) ? "a directory" : "not a regular file");
    return NULL;
  }
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, (size_t)errlen, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  fclose(f);
  char buf[1000] = "";
  mjModel *m = mj_loadXML(path, NULL, buf, sizeof buf);
  if (!m) {
    one_line(buf);
    snprintf(err, (size_t)errlen, "%s: %s", path, buf[0] ? buf : "MuJoCo could not compile the model");
    return NULL;
  }
  return m;
}
