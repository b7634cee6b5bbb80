/* csv.c — the CSV writer (see csv.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "csv.h"

#define MAX_OPEN 64
static rl_csv *open_writers[MAX_OPEN];

static void track(rl_csv *w, int on) {
  for (int i = 0; i < MAX_OPEN; i++) {
    if (on && !open_writers[i]) { open_writers[i] = w; return; }
    if (!on && open_writers[i] == w) { open_writers[i] = NULL; return; }
  }
}

int rl_csv_open(rl_csv *w, const char *path, int f32, char *err, int errlen) {
  memset(w, 0, sizeof *w);
  w->f32 = f32;
  snprintf(w->path, sizeof w->path, "%s", path);
  if (!strcmp(path, "-")) {
    w->f = stdout;
    return 0;
  }
  snprintf(w->tmp, sizeof w->tmp, "%s.tmp.%ld", path, (long)getpid());
  w->f = fopen(w->tmp, "w");
  if (!w->f) {
    snprintf(err, (size_t)errlen, "%s: cannot write: %s", path, strerror(errno));
    return -1;
  }
  track(w, 1);
  return 0;
}

static void sep(rl_csv *w) {
  if (w->col++) fputc(',', w->f);
}

void rl_csv_str(rl_csv *w, const char *s) {
  sep(w);
  if (strpbrk(s, ",\"\n\r")) {
    fputc('"', w->f);
    for (; *s; s++) {
      if (*s == '"') fputc('"', w->f);
      fputc(*s, w->f);
    }
    fputc('"', w->f);
  } else {
    fputs(s, w->f);
  }
}

void rl_csv_num(rl_csv *w, double v) {
  sep(w);
  if (isnan(v)) fputs("nan", w->f);
  else if (isinf(v)) fputs(v > 0 ? "inf" : "-inf", w->f);
  else fprintf(w->f, w->f32 ? "%.9g" : "%.17g", v);
}

void rl_csv_int(rl_csv *w, long long v) {
  sep(w);
  fprintf(w->f, "%lld", v);
}

void rl_csv_end_row(rl_csv *w) {
  fputc('\n', w->f);
  w->col = 0;
  w->rows++;
}

int rl_csv_close(rl_csv *w, char *err, int errlen) {
  if (!w->f) return 0;
  if (w->f == stdout) {
    fflush(stdout);
    w->f = NULL;
    return 0;
  }
  int bad = ferror(w->f);
  bad |= fclose(w->f) != 0;
  w->f = NULL;
  track(w, 0);
  if (bad || rename(w->tmp, w->path) != 0) {
    snprintf(err, (size_t)errlen, "%s: write failed: %s", w->path, strerror(errno));
    remove(w->tmp);
    return -1;
  }
  return 0;
}

void rl_csv_abort(rl_csv *w) {
  if (!w->f) return;
  if (w->f != stdout) {
    fclose(w->f);
    remove(w->tmp);
    track(w, 0);
  }
  w->f = NULL;
}

void rl_csv_abort_all(void) {
  for (int i = 0; i < MAX_OPEN; i++)
    if (open_writers[i]) rl_csv_abort(open_writers[i]);
}
