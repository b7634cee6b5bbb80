/* csv.c — the CSV writer and reader, whole-file writes and the results-tree walk (see csv.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "csv.h"

/* realloc that ends the process on exhaustion (the callers have no better recovery) */
static void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) {
    fputs("rigidlab: out of memory\n", stderr);
    exit(2);
  }
  return q;
}

/* ---------- temporaries removed on every exit path ---------- */

/* The registry of this process's temporaries (files, and flat folders such as a merge being built):
 * changed only with SIGINT/SIGTERM/SIGHUP blocked, so the handler always sees a whole list.  Each entry
 * remembers the process that made it, so a forked worker never removes its parent's files. */
typedef struct tmp_entry {
  char *path;
  int dir;
  long pid;
} tmp_entry;
static tmp_entry *tmps;
static int ntmps, captmps;

static void block_signals(sigset_t *old) {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  sigaddset(&s, SIGTERM);
  sigaddset(&s, SIGHUP);
  sigprocmask(SIG_BLOCK, &s, old);
}
static void restore_signals(const sigset_t *old) { sigprocmask(SIG_SETMASK, old, NULL); }

/* the entries of a flat folder, then the folder: open + getdents64 + unlinkat, every call async-signal-safe
   (readdir may allocate) */
void rl_dir_remove_flat(const char *dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    static char buf[8192];
    long n;
    while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
      for (long off = 0; off < n;) {
        struct linux_dirent64 {
          unsigned long long ino;
          long long off;
          unsigned short reclen;
          unsigned char type;
          char name[];
        } *e = (struct linux_dirent64 *)(buf + off);
        if (strcmp(e->name, ".") && strcmp(e->name, "..")) unlinkat(fd, e->name, 0);
        off += e->reclen;
      }
    close(fd);
  }
  rmdir(dir);
}

void rl_tmp_remove_all(void) {
  long me = (long)getpid();
  for (int i = ntmps - 1; i >= 0; i--) {
    if (tmps[i].pid != me) continue;
    if (tmps[i].dir) rl_dir_remove_flat(tmps[i].path);
    else unlink(tmps[i].path);
  }
}

void rl_tmp_register(const char *path, int dir) {
  static int at_exit;
  sigset_t old;
  block_signals(&old);
  if (!at_exit) at_exit = !atexit(rl_tmp_remove_all);
  if (ntmps == captmps) tmps = xrealloc(tmps, sizeof *tmps * (size_t)(captmps = captmps ? 2 * captmps : 16));
  size_t k = strlen(path) + 1;
  tmps[ntmps].path = memcpy(xrealloc(NULL, k), path, k);
  tmps[ntmps].dir = dir;
  tmps[ntmps].pid = (long)getpid();
  ntmps++;
  restore_signals(&old);
}

void rl_tmp_forget(const char *path) {
  sigset_t old;
  block_signals(&old);
  for (int i = ntmps - 1; i >= 0; i--)
    if (!strcmp(tmps[i].path, path)) {
      free(tmps[i].path);
      tmps[i] = tmps[--ntmps];
      break;
    }
  restore_signals(&old);
}

/* SIGINT/SIGTERM/SIGHUP: remove this process's temporaries, then die of the same signal (the shell's 128+N) */
static void on_fatal_signal(int sig) {
  rl_tmp_remove_all();
  signal(sig, SIG_DFL);
  raise(sig);
}

void rl_tmp_catch_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGTERM);
  sigaddset(&sa.sa_mask, SIGHUP);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
}

/* ---------- whole files: PATH.tmp.PID, renamed onto PATH ---------- */

void rl_tmp_path(char *out, size_t n, const char *path, long pid) { snprintf(out, n, "%s.tmp.%ld", path, pid); }

/* what PATH is when it exists and is not a regular file ("a directory", …); NULL when it is one or is absent */
static const char *not_regular(const char *path) {
  struct stat sb;
  if (lstat(path, &sb)) return NULL;
  if (S_ISREG(sb.st_mode)) return NULL;
  if (S_ISLNK(sb.st_mode)) return "a symbolic link";
  if (S_ISDIR(sb.st_mode)) return "a directory";
  if (S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode)) return "a device";
  if (S_ISFIFO(sb.st_mode)) return "a named pipe";
  return "not a regular file";
}

int rl_file_target_ok(const char *path, char *err, int errlen) {
  const char *what = not_regular(path);
  if (!what) return 0;
  snprintf(err, (size_t)errlen, "%s: is %s: refusing to replace it (outputs are regular files; give a new path)", path,
           what);
  return -1;
}

int rl_file_open(rl_file *o, const char *path, char *err, int errlen) {
  memset(o, 0, sizeof *o);
  if (rl_file_target_ok(path, err, errlen)) return -1;
  if (snprintf(o->path, sizeof o->path, "%s", path) >= (int)sizeof o->path) {
    snprintf(err, (size_t)errlen, "%.200s...: path longer than %d characters", path, (int)sizeof o->path - 1);
    return -1;
  }
  rl_tmp_path(o->tmp, sizeof o->tmp, path, (long)getpid());
  /* the temporary is this process's own name: a stale one (a reused PID) is replaced, never followed */
  unlink(o->tmp);
  rl_tmp_register(o->tmp, 0);
  int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  o->f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!o->f) {
    snprintf(err, (size_t)errlen, "%s: cannot write: %s", path, strerror(errno));
    if (fd >= 0) close(fd);
    rl_tmp_forget(o->tmp);
    unlink(o->tmp);
    o->tmp[0] = 0;
    return -1;
  }
  return 0;
}

/* remove the temporary and drop it from the registry */
static void tmp_discard(rl_file *o) {
  if (!o->tmp[0]) return;
  remove(o->tmp);
  rl_tmp_forget(o->tmp);
  o->tmp[0] = 0;
}

int rl_file_close(rl_file *o, char *err, int errlen) {
  if (!o->f) return 0;
  int bad = ferror(o->f);
  bad |= fclose(o->f) != 0;
  o->f = NULL;
  if (!bad) return 0;
  snprintf(err, (size_t)errlen, "%s: write failed: %s", o->path, strerror(errno));
  tmp_discard(o);
  return -1;
}

int rl_file_commit(rl_file *o, char *err, int errlen) {
  if (!o->tmp[0]) return 0;
  /* the target may have changed since the open: the same rule again, just before the rename */
  if (rl_file_target_ok(o->path, err, errlen)) {
    tmp_discard(o);
    return -1;
  }
  if (rename(o->tmp, o->path)) {
    snprintf(err, (size_t)errlen, "%s: cannot rename into place: %s", o->path, strerror(errno));
    tmp_discard(o);
    return -1;
  }
  rl_tmp_forget(o->tmp);
  o->tmp[0] = 0;
  return 0;
}

void rl_file_drop(rl_file *o) {
  if (o->f) fclose(o->f);
  o->f = NULL;
  tmp_discard(o);
}

int rl_file_write(const char *path, const void *data, size_t n, char *err, int errlen) {
  rl_file o;
  if (rl_file_open(&o, path, err, errlen)) return -1;
  if (n && fwrite(data, 1, n, o.f) != n) {
    snprintf(err, (size_t)errlen, "%s: write failed: %s", path, strerror(errno));
    rl_file_drop(&o);
    return -1;
  }
  if (rl_file_close(&o, err, errlen)) return -1;
  return rl_file_commit(&o, err, errlen);
}

char *rl_file_read(const char *path, size_t *len, char *err, int errlen) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, (size_t)errlen, "%s: cannot read: %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, n = 0, k;
  char *t = xrealloc(NULL, cap);
  while ((k = fread(t + n, 1, cap - n - 1, f)) > 0)
    if ((n += k) + 1 == cap) t = xrealloc(t, cap *= 2);
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(t);
    snprintf(err, (size_t)errlen, "%s: read error", path);
    return NULL;
  }
  t[n] = 0;
  if (len) *len = n;
  return t;
}

/* ---------- the CSV writer ---------- */

#define MAX_OPEN 64
static rl_csv *open_writers[MAX_OPEN];

static void track(rl_csv *w, int on) {
  for (int i = 0; i < MAX_OPEN; i++) {
    if (on && !open_writers[i]) {
      open_writers[i] = w;
      return;
    }
    if (!on && open_writers[i] == w) {
      open_writers[i] = NULL;
      return;
    }
  }
}

int rl_csv_open(rl_csv *w, const char *path, int f32, char *err, int errlen) {
  memset(w, 0, sizeof *w);
  w->f32 = f32;
  if (!strcmp(path, "-")) {
    snprintf(w->out.path, sizeof w->out.path, "%s", path);
    w->out.f = stdout;
    return 0;
  }
  if (rl_file_open(&w->out, path, err, errlen)) return -1;
  track(w, 1);
  return 0;
}

static void sep(rl_csv *w) {
  if (w->col++) fputc(',', w->out.f);
}

void rl_csv_str(rl_csv *w, const char *s) {
  sep(w);
  FILE *f = w->out.f;
  if (strpbrk(s, ",\"\n\r")) {
    fputc('"', f);
    for (; *s; s++) {
      if (*s == '"') fputc('"', f);
      fputc(*s, f);
    }
    fputc('"', f);
  } else {
    fputs(s, f);
  }
}

void rl_csv_num(rl_csv *w, double v) {
  sep(w);
  FILE *f = w->out.f;
  if (isnan(v)) fputs("nan", f);
  else if (isinf(v)) fputs(v > 0 ? "inf" : "-inf", f);
  else fprintf(f, w->f32 ? "%.9g" : "%.17g", v);
}

void rl_csv_int(rl_csv *w, long long v) {
  sep(w);
  fprintf(w->out.f, "%lld", v);
}

void rl_csv_end_row(rl_csv *w) {
  fputc('\n', w->out.f);
  w->col = 0;
  w->rows++;
}

int rl_csv_close(rl_csv *w, char *err, int errlen) {
  if (!w->out.f) return 0;
  if (w->out.f == stdout) {
    fflush(stdout);
    w->out.f = NULL;
    return 0;
  }
  track(w, 0);
  if (rl_file_close(&w->out, err, errlen)) return -1;
  return rl_file_commit(&w->out, err, errlen);
}

void rl_csv_abort(rl_csv *w) {
  if (!w->out.f) return;
  if (w->out.f != stdout) {
    rl_file_drop(&w->out);
    track(w, 0);
  }
  w->out.f = NULL;
}

void rl_csv_abort_all(void) {
  for (int i = 0; i < MAX_OPEN; i++)
    if (open_writers[i]) rl_csv_abort(open_writers[i]);
}

/* ---------- the CSV reader (RFC 4180: quotes, doubled quotes, CRLF) ---------- */

void rl_table_free(rl_table *t) {
  free(t->buf);
  free(t->hdr);
  free(t->cell);
  free(t->line);
  memset(t, 0, sizeof *t);
}

/* the error line (newlines in it become spaces, so it stays one line), the table emptied; −1 */
__attribute__((format(printf, 5, 6))) static int table_fail(rl_table *t, char **fields, char *err, int errlen,
                                                            const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, (size_t)errlen, fmt, ap);
  va_end(ap);
  for (char *c = err; *c; c++)
    if (*c == '\n' || *c == '\r') *c = ' ';
  free(fields);
  rl_table_free(t);
  return -1;
}

int rl_table_load(rl_table *t, const char *path, char *err, int errlen) {
  memset(t, 0, sizeof *t);
  snprintf(t->path, sizeof t->path, "%s", path);
  size_t n;
  t->buf = rl_file_read(path, &n, err, errlen);
  if (!t->buf) return -1;
  if (memchr(t->buf, 0, n)) return table_fail(t, NULL, err, errlen, "%s: binary data (NUL byte)", path);

  /* tokenize in place: unquoted text is copied down over the quotes */
  char *r = t->buf, *w = t->buf;
  int line = 1;
  char **fields = NULL;
  int nf = 0, fcap = 0, rcap = 0;
  while (*r) {
    int rowline = line;
    nf = 0;
    for (;;) { /* one field */
      if (nf == fcap) fields = xrealloc(fields, sizeof *fields * (size_t)(fcap = fcap ? 2 * fcap : 32));
      fields[nf++] = w;
      if (*r == '"') {
        r++;
        for (;;) {
          if (!*r) return table_fail(t, fields, err, errlen, "%s:%d: unterminated quoted field", path, rowline);
          if (*r == '"' && r[1] == '"') {
            *w++ = '"';
            r += 2;
            continue;
          }
          if (*r == '"') {
            r++;
            break;
          }
          if (*r == '\n') line++;
          *w++ = *r++;
        }
        if (*r && *r != ',' && *r != '\n' && *r != '\r')
          return table_fail(t, fields, err, errlen, "%s:%d: text after a closing quote", path, rowline);
      } else {
        while (*r && *r != ',' && *r != '\n' && *r != '\r') {
          if (*r == '"')
            return table_fail(t, fields, err, errlen, "%s:%d: quote inside an unquoted field", path, rowline);
          *w++ = *r++;
        }
      }
      char c = *r;
      *w++ = 0;
      if (c == ',') {
        r++;
        continue;
      }
      /* c was overwritten by the terminator when w == r: test the saved copy */
      if (c == '\r') {
        r++;
        if (*r == '\n') r++;
        line++;
      } else if (c == '\n') {
        r++;
        line++;
      }
      break;
    }
    if (nf == 1 && !fields[0][0]) continue; /* blank line */
    if (!t->hdr) {
      t->ncol = nf;
      t->hdr = xrealloc(NULL, sizeof *t->hdr * (size_t)nf);
      memcpy(t->hdr, fields, sizeof *fields * (size_t)nf);
      continue;
    }
    if (nf != t->ncol)
      return table_fail(t, fields, err, errlen, "%s:%d: %d fields, the header has %d", path, rowline, nf, t->ncol);
    if (t->nrow == rcap) {
      rcap = rcap ? 2 * rcap : 256;
      t->cell = xrealloc(t->cell, sizeof *t->cell * (size_t)rcap * (size_t)t->ncol);
      t->line = xrealloc(t->line, sizeof *t->line * (size_t)rcap);
    }
    memcpy(t->cell + (size_t)t->nrow * (size_t)t->ncol, fields, sizeof *fields * (size_t)nf);
    t->line[t->nrow++] = rowline;
  }
  free(fields);
  if (!t->hdr) return table_fail(t, NULL, err, errlen, "%s: empty file (no header row)", path);
  return 0;
}

const char *rl_table_cell(const rl_table *t, int r, int c) { return t->cell[(size_t)r * (size_t)t->ncol + (size_t)c]; }

int rl_table_col(const rl_table *t, const char *name) {
  for (int c = 0; c < t->ncol; c++)
    if (!strcmp(t->hdr[c], name)) return c;
  return -1;
}

/* a number, nan or [-]inf: strtod must take the whole cell */
int rl_table_num(const rl_table *t, int r, int c, double *v, char *err, int errlen) {
  const char *s = rl_table_cell(t, r, c);
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  if (!*s || *end || end == s) {
    snprintf(err, (size_t)errlen, "%s:%d: column '%s': not a number: '%s'", t->path, t->line[r], t->hdr[c], s);
    for (char *k = err; *k; k++)
      if (*k == '\n' || *k == '\r') *k = ' ';
    return -1;
  }
  return 0;
}

int rl_numcsv_read(const char *path, char **header, int *nrow, int *ncol, double **v, char *err, int errlen) {
  *nrow = *ncol = 0;
  *v = NULL;
  if (header) *header = NULL;
  rl_table t;
  if (rl_table_load(&t, path, err, errlen)) return -1;
  double *x = xrealloc(NULL, sizeof(double) * (size_t)t.nrow * (size_t)t.ncol);
  for (int r = 0; r < t.nrow; r++)
    for (int c = 0; c < t.ncol; c++)
      if (rl_table_num(&t, r, c, &x[(size_t)r * (size_t)t.ncol + (size_t)c], err, errlen)) {
        free(x);
        rl_table_free(&t);
        return -1;
      }
  if (header) {
    size_t len = 1;
    for (int c = 0; c < t.ncol; c++) len += strlen(t.hdr[c]) + 1;
    char *h = xrealloc(NULL, len), *o = h;
    for (int c = 0; c < t.ncol; c++) o += sprintf(o, "%s%s", c ? "," : "", t.hdr[c]);
    *header = h;
  }
  *nrow = t.nrow;
  *ncol = t.ncol;
  *v = x;
  rl_table_free(&t);
  return 0;
}

/* ---------- the studies in a results tree ---------- */

typedef struct {
  char **dir;
  int n, cap, searched;
  char bad[4300]; /* the first folder whose metrics.csv is not a regular file */
} found;

static int cmp_path(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* a folder the walk never enters: hidden, the report's plots, a temporary (NAME.tmp.PID, plots.old.PID) */
static int skipped(const char *name) {
  return name[0] == '.' || !strcmp(name, "plots") || strstr(name, ".tmp.") || strstr(name, ".old.");
}

/* DIR is a study folder (holds metrics.csv) or is searched folder by folder, DEPTH levels at most */
static void walk(const char *dir, int depth, found *F) {
  char p[4200];
  struct stat sb;
  F->searched++;
  snprintf(p, sizeof p, "%s/metrics.csv", dir);
  if (!stat(p, &sb) && !S_ISREG(sb.st_mode)) {
    if (!F->bad[0])
      snprintf(F->bad, sizeof F->bad, "%s: is %s, not a metrics file", p,
               S_ISDIR(sb.st_mode) ? "a directory" : "not a regular file");
    return;
  }
  if (!stat(p, &sb) && S_ISREG(sb.st_mode)) {
    if (F->n == F->cap) F->dir = xrealloc(F->dir, sizeof *F->dir * (size_t)(F->cap = F->cap ? 2 * F->cap : 16));
    size_t k = strlen(dir) + 1;
    F->dir[F->n++] = memcpy(xrealloc(NULL, k), dir, k);
    return;
  }
  if (depth <= 0) return;
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (skipped(e->d_name)) continue;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    if (!lstat(p, &sb) && S_ISDIR(sb.st_mode)) walk(p, depth - 1, F);
  }
  closedir(d);
}

int rl_results_find(const char *root, char ***dirs, int *nsearched, char *err, int errlen) {
  *dirs = NULL;
  *nsearched = 0;
  struct stat sb;
  if (stat(root, &sb)) {
    snprintf(err, (size_t)errlen, "%s: cannot read: %s", root, strerror(errno));
    return -1;
  }
  if (!S_ISDIR(sb.st_mode)) {
    snprintf(err, (size_t)errlen, "%s: not a folder (give the top of a results tree, or a study folder)", root);
    return -1;
  }
  char top[4096];
  snprintf(top, sizeof top, "%s", root);
  for (size_t k = strlen(top); k > 1 && top[k - 1] == '/'; k--) top[k - 1] = 0; /* results/ → results */
  found F = {0};
  walk(top, 16, &F);
  if (F.bad[0]) {
    snprintf(err, (size_t)errlen, "%s", F.bad);
    rl_results_free(F.dir, F.n);
    return -1;
  }
  if (F.n > 1) qsort(F.dir, (size_t)F.n, sizeof *F.dir, cmp_path); /* none found: F.dir is NULL */
  *dirs = F.dir;
  *nsearched = F.searched;
  return F.n;
}

void rl_results_free(char **dirs, int n) {
  for (int i = 0; i < n; i++) free(dirs[i]);
  free(dirs);
}
