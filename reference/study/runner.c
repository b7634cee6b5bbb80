/* runner.c — `rigidlab run` and `rigidlab merge` (see runner.h), and the per-point metrics.
 *
 * Determinism: every point runs single-threaded in its own worker process and writes its own CSV;
 * the metrics are computed afterwards, in point order, by the parent from those CSVs.  So
 * metrics.csv is byte-identical for any --jobs and any shard split (after merge).
 * Interruption: each CSV is written to NAME.tmp.PID and renamed when whole; on SIGINT/SIGTERM the
 * parent stops launching, ends its workers, removes their temporaries and exits 130 without writing
 * metrics.csv; --resume then skips every point whose trajectory CSV exists. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "build_info.h"
#include "csv.h"
#include "mj_load.h"
#include "runner.h"
#include "spec.h"
#include "kinds.h"

/* ---------- trajectory CSVs ---------- */

/* (the numeric CSV reader rl_numcsv_read is csv.h's) */

int rl_traj_read(const char *path, rl_traj *t, char *err, int errlen) {
  memset(t, 0, sizeof *t);
  char *hdr;
  if (rl_numcsv_read(path, &hdr, &t->nrow, &t->ncol, &t->v, err, errlen)) return -1;
  t->c_step = t->c_qpos = t->c_iter = t->c_conv = t->c_pen = t->c_anchor = t->c_energy = -1;
  int c = 0;
  for (char *save = NULL, *tok = strtok_r(hdr, ",", &save); tok; tok = strtok_r(NULL, ",", &save), c++) {
    if (!strcmp(tok, "step")) t->c_step = c;
    else if (!strncmp(tok, "qpos_", 5)) {
      if (t->c_qpos < 0) t->c_qpos = c;
      t->nq++;
    } else if (!strcmp(tok, "iterations")) t->c_iter = c;
    else if (!strcmp(tok, "converged")) t->c_conv = c;
    else if (!strcmp(tok, "penetration_max")) t->c_pen = c;
    else if (!strcmp(tok, "anchor_err_max")) t->c_anchor = c;
    else if (!strcmp(tok, "energy")) t->c_energy = c;
  }
  free(hdr);
  if (t->c_step < 0 || t->c_qpos < 0 || t->c_iter < 0 || t->c_conv < 0 || t->c_pen < 0 || t->c_anchor < 0 ||
      t->c_energy < 0) {
    rl_traj_free(t);
    rl_snprintf(err, (size_t)errlen, "%s: not a trajectory CSV (sim --csv columns)", path);
    return -1;
  }
  if (!t->nrow) {
    rl_traj_free(t);
    rl_snprintf(err, (size_t)errlen, "%s: no rows", path);
    return -1;
  }
  /* a step is a whole number from 0 to 2^53 (every such count is exact in a double and fits a long) */
  for (int r = 0; r < t->nrow; r++) {
    double x = t->v[(size_t)r * (size_t)t->ncol + (size_t)t->c_step];
    if (!(x >= 0 && x <= 9007199254740992.0 && x == floor(x))) {
      rl_traj_free(t);
      rl_snprintf(err, (size_t)errlen, "%s: data row %d: step %g is not a whole number from 0 to 2^53", path, r + 1, x);
      return -1;
    }
  }
  return 0;
}

void rl_traj_free(rl_traj *t) {
  free(t->v);
  memset(t, 0, sizeof *t);
}

#define AT(t, r, c) ((t)->v[(size_t)(r) * (size_t)(t)->ncol + (size_t)(c)])

int rl_metric_series(int metric, const rl_traj *t, const rl_traj *ref, double *r) {
  int n = t->nrow;
  double run = 0, e0 = AT(t, 0, t->c_energy);
  for (int i = 0; i < n; i++) {
    double x = 0;
    switch (metric) {
    case RL_MET_FINAL_QPOS_ERR:
    case RL_MET_QPOS_ERR_MAX:
      if (!ref || ref->nq != t->nq) return -1;
      if (i < ref->nrow)
        for (int k = 0; k < t->nq; k++) x = fmax(x, fabs(AT(t, i, t->c_qpos + k) - AT(ref, i, ref->c_qpos + k)));
      else x = NAN;
      if (metric == RL_MET_FINAL_QPOS_ERR) r[i] = x;
      else r[i] = run = i ? (x > run || isnan(x) ? x : run) : x;
      break;
    case RL_MET_PENETRATION_MAX: r[i] = run = i ? fmax(run, AT(t, i, t->c_pen)) : AT(t, i, t->c_pen); break;
    case RL_MET_ANCHOR_ERR_MAX: r[i] = run = i ? fmax(run, AT(t, i, t->c_anchor)) : AT(t, i, t->c_anchor); break;
    case RL_MET_ENERGY_DRIFT:
      x = fabs(AT(t, i, t->c_energy) - e0) / fmax(fabs(e0), 1.0);
      r[i] = run = i ? (x > run || isnan(x) ? x : run) : x;
      break;
    case RL_MET_ITERATIONS_MEAN: /* rows 1.. are steps; row 0 has none */
      if (i) run += AT(t, i, t->c_iter);
      r[i] = i ? run / i : 0;
      break;
    case RL_MET_CONVERGED_FRAC:
      if (i) run += AT(t, i, t->c_conv) != 0;
      r[i] = i ? run / i : 1;
      break;
    default: return -1;
    }
  }
  return 0;
}

long rl_metric_step(int metric, const rl_traj *t, const double *r) {
  int n = t->nrow, k = n - 1;
  if (metric == RL_MET_QPOS_ERR_MAX || metric == RL_MET_PENETRATION_MAX || metric == RL_MET_ANCHOR_ERR_MAX ||
      metric == RL_MET_ENERGY_DRIFT)
    for (k = 0; k < n - 1 && !(r[k] == r[n - 1]); k++) {}
  return (long)AT(t, k, t->c_step);
}

/* ---------- small file helpers ---------- */

int rl_mkdirs(const char *path) {
  char p[4096];
  rl_snprintf(p, sizeof p, "%s", path);
  for (char *c = p + 1; *c; c++)
    if (*c == '/') {
      *c = 0;
      if (mkdir(p, 0777) && errno != EEXIST) return -1;
      *c = '/';
    }
  return mkdir(p, 0777) && errno != EEXIST ? -1 : 0;
}

static int exists(const char *path) {
  struct stat st;
  return !stat(path, &st);
}

/* PATH's whole text (csv.h); NULL when unreadable */
static char *read_all(const char *path) {
  char err[8];
  return rl_file_read(path, NULL, err, sizeof err);
}

/* write TEXT to PATH through a temporary and rename (csv.h) */
static int write_whole(const char *path, const char *text, char *err, int errlen) {
  return rl_file_write(path, text, strlen(text), err, errlen);
}

/* ---------- meta.csv and metrics.csv ---------- */

static int write_meta(const char *dir, const rl_spec *s, const rl_run_args *a, const rl_point *pts, int nall,
                      int npoints, char *err, int errlen) {
  char path[4096];
  rl_snprintf(path, sizeof path, "%s/meta.csv", dir);
  rl_csv w;
  if (rl_csv_open(&w, path, 0, err, errlen)) return -1;
  char buf[1024];
  struct utsname u;
  time_t now = time(NULL);
#define KV(k, v)        \
  do {                  \
    rl_csv_str(&w, k);  \
    rl_csv_str(&w, v);  \
    rl_csv_end_row(&w); \
  } while (0)
  KV("key", "value");
  KV("study", s->name);
  KV("version", "rigidlab 0.1.0");
#ifdef __VERSION__
  KV("compiler", __VERSION__);
#endif
  KV("c_flags", RL_BUILD_FLAGS);
  KV("git", RL_GIT_DESCRIBE);
  KV("blas", RL_BLAS);
  rl_snprintf(buf, sizeof buf, "%d.%d.%d", mj_version() / 100, mj_version() / 10 % 10, mj_version() % 10);
  KV("mujoco_version", buf);
  /* the precisions the sweep runs (f64 when it has no precision axis; a kind that runs both says so) */
  int both = s->kind->flags & RL_KIND_BOTH_PRECISIONS;
  rl_snprintf(buf, sizeof buf, "%s", both ? "f64, f32" : "f64");
  for (int i = 0; i < s->naxes && !both; i++)
    if (!strcmp(s->axis[i].key, "precision")) {
      buf[0] = 0;
      for (int v = 0; v < s->axis[i].nval; v++)
        rl_snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", v ? ", " : "", s->axis[i].val[v]);
    }
  KV("precision", buf);
  rl_spec_refs_text(s, buf, sizeof buf);
  KV("references", buf);
  if (!uname(&u)) {
    rl_snprintf(buf, sizeof buf, "%s %s %s %ld cores", u.sysname, u.release, u.machine, sysconf(_SC_NPROCESSORS_ONLN));
    KV("machine", buf);
  }
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  KV("start_time", buf);
  rl_snprintf(buf, sizeof buf, "%lu", s->seed);
  KV("seed", buf);
  rl_snprintf(buf, sizeof buf, "%d", npoints);
  KV("points", buf);
  if (a && a->shard_n) {
    rl_snprintf(buf, sizeof buf, "%d/%d", a->shard_i, a->shard_n);
    KV("shard", buf);
  }
  buf[0] = 0;
  for (int i = 0; a && i < a->nopts; i++)
    rl_snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? " " : "", a->opts[i]);
  if (buf[0]) KV("extra_opts", buf);
  if (s->kind->meta)
    s->kind->meta(&w, s, pts, nall); /* e.g. cuda_rows,absent (the whole study's: every shard says it) */
  KV("spec_path", s->path);
  KV("spec", s->text);
#undef KV
  return rl_csv_close(&w, err, errlen);
}

static void traj_path(char *p, size_t n, const char *dir, const rl_point *q) {
  rl_snprintf(p, n, "%s/traj_%s.csv", dir, q->id);
}

/* metrics of the points in MINE (sorted indices) into DIR/metrics.csv */
static int write_metrics(const char *dir, const rl_spec *s, const rl_point *pts, const int *mine, int nmine, char *err,
                         int errlen) {
  char path[4096];
  rl_snprintf(path, sizeof path, "%s/metrics.csv", dir);
  rl_csv w;
  if (rl_csv_open(&w, path, 0, err, errlen)) return -1;
  const char *cols[] = {"study", "point", "engine", "precision", "dt", "metric", "value", "step", "index"};
  for (int c = 0; c < 9; c++) rl_csv_str(&w, cols[c]);
  rl_csv_end_row(&w);
  for (int k = 0; k < nmine; k++)
    if (s->kind->metrics(&w, dir, s, pts, &pts[mine[k]], err, errlen)) goto fail;
  return rl_csv_close(&w, err, errlen);
fail:
  rl_csv_abort(&w);
  return -1;
}

/* ---------- running points in worker processes ---------- */

static volatile sig_atomic_t interrupted;
static void on_signal(int sig) { interrupted = sig; }

/* the worker: one point's files in DIR (its kind's run) */
static int run_point(const char *dir, const rl_spec *s, const rl_point *q, const rl_run_args *a) {
  char path[4096];
  traj_path(path, sizeof path, dir, q);
  rl_sim_args sa;
  memset(&sa, 0, sizeof sa);
  sa.c.model = q->scene;
  for (int i = 0; i < q->nopts; i++) sa.c.opts[sa.c.nopts++] = q->opts[i];
  for (int i = 0; i < a->nopts && sa.c.nopts < RL_MAX_OPTS; i++) sa.c.opts[sa.c.nopts++] = a->opts[i];
  sa.c.csv = path;
  sa.c.quiet = 1;
  sa.engine = q->engine;
  sa.dt = q->dt;
  sa.steps = s->steps;
  sa.duration = s->duration;
  return s->kind->run(dir, s, q, &sa);
}

static void progress(int tty, const char *study, int done, int total, const char *id, double secs) {
  if (tty) {
    char bar[31];
    int k = total ? 30 * done / total : 30;
    for (int i = 0; i < 30; i++) bar[i] = i < k ? '#' : '.';
    bar[30] = 0;
    fprintf(stderr, "\r%s [%s] %d/%d %-60.60s", study, bar, done, total, id);
    if (done == total) fputc('\n', stderr);
  } else fprintf(stderr, "run %s [%d/%d] %s %.2f s\n", study, done, total, id, secs);
  fflush(stderr);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* run the pending points in up to JOBS workers; 0, RL_EXIT_BADINPUT (a worker failed) or 130 (interrupted) */
/* the order in which pending points start: the largest scene file first (a proxy for a point's cost), then in
   point order, so that with several jobs the long points do not come last and leave the other workers idle.
   Each point writes only its own files and the metrics are computed afterwards in point order, so the order
   changes no output. */
static const rl_point *order_pts;
static long scene_bytes(const rl_point *q) {
  struct stat sb;
  return stat(q->scene, &sb) ? 0 : (long)sb.st_size;
}
static int by_cost(const void *a, const void *b) {
  int i = *(const int *)a, j = *(const int *)b;
  long si = scene_bytes(&order_pts[i]), sj = scene_bytes(&order_pts[j]);
  return si != sj ? (si < sj ? 1 : -1) : (i > j) - (i < j);
}
static void order_by_cost(const rl_point *pts, int *pending, int n) {
  order_pts = pts;
  qsort(pending, (size_t)n, sizeof *pending, by_cost);
}

static int run_pool(const char *dir, const rl_spec *s, const rl_point *pts, const int *pending, int npending,
                    const rl_run_args *a, int jobs) {
  pid_t *pid = calloc((size_t)jobs, sizeof *pid);
  int *slot_pt = calloc((size_t)jobs, sizeof *slot_pt);
  double *t0 = calloc((size_t)jobs, sizeof *t0);
  int next = 0, running = 0, done = 0, status = 0, tty = isatty(2);
  while ((next < npending && !status && !interrupted) || running) {
    while (running < jobs && next < npending && !status && !interrupted) {
      int slot = 0;
      while (pid[slot]) slot++;
      fflush(NULL);
      pid_t p = fork();
      if (p < 0) {
        rl_errorf("run: fork: %s", strerror(errno));
        status = RL_EXIT_BADINPUT;
        break;
      }
      if (p == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        int st = run_point(dir, s, &pts[pending[next]], a);
        fflush(NULL);
        _exit(st);
      }
      pid[slot] = p;
      slot_pt[slot] = pending[next++];
      t0[slot] = now_s();
      running++;
    }
    if (!running) break;
    int ws;
    pid_t p = waitpid(-1, &ws, 0);
    if (p < 0) {
      if (errno == EINTR) {
        if (interrupted)
          for (int i = 0; i < jobs; i++)
            if (pid[i]) kill(pid[i], SIGTERM);
        continue;
      }
      break;
    }
    int slot = 0;
    while (slot < jobs && pid[slot] != p) slot++;
    if (slot == jobs) continue;
    const rl_point *q = &pts[slot_pt[slot]];
    pid[slot] = 0;
    running--;
    if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0) {
      progress(tty, s->name, ++done, npending, q->id, now_s() - t0[slot]);
      continue;
    }
    /* a worker that died by a signal leaves its temporaries: remove them */
    char path[4096], tmp[4200];
    traj_path(path, sizeof path, dir, q);
    rl_tmp_path(tmp, sizeof tmp, path, (long)p);
    unlink(tmp);
    rl_study_remove_temps(dir, (long)p);
    if (!interrupted && !status) {
      if (WIFEXITED(ws)) status = WEXITSTATUS(ws) ? WEXITSTATUS(ws) : RL_EXIT_BADINPUT;
      else {
        rl_errorf("run: %s: point %s died of signal %d", s->name, q->id, WTERMSIG(ws));
        status = RL_EXIT_BADINPUT;
      }
    }
    if (interrupted || status)
      for (int i = 0; i < jobs; i++)
        if (pid[i]) kill(pid[i], SIGTERM);
  }
  if (tty && done < npending) fputc('\n', stderr);
  free(pid);
  free(slot_pt);
  free(t0);
  if (interrupted) return 130;
  return status;
}

static int run_study(const char *path, const rl_run_args *a, int jobs) {
  char err[1024], dir[4096];
  rl_spec s;
  if (rl_spec_load(path, &s, err, sizeof err)) {
    rl_errorf("%s", err);
    return RL_EXIT_BADINPUT;
  }
  rl_point *pts;
  int n = rl_spec_expand(&s, &pts, err, sizeof err);
  if (n < 0) {
    rl_errorf("%s", err);
    rl_spec_free(&s);
    return RL_EXIT_BADINPUT;
  }
  rl_snprintf(dir, sizeof dir, "%s/%s", a->out, s.name);
  int st = 0;
  if (rl_mkdirs(dir)) {
    rl_errorf("run: %s: cannot create: %s", dir, strerror(errno));
    st = RL_EXIT_BADINPUT;
    goto out;
  }
  /* the spec's text beside the results; --resume only continues the same spec */
  char spath[4200];
  rl_snprintf(spath, sizeof spath, "%s/spec.ini", dir);
  char *old = read_all(spath);
  if (a->resume && old && strcmp(old, s.text)) {
    rl_errorf("run: --resume: %s was written by a different spec than %s (remove the folder or drop --resume)", dir,
              path);
    free(old);
    st = RL_EXIT_BADINPUT;
    goto out;
  }
  free(old);
  if (write_whole(spath, s.text, err, sizeof err)) {
    rl_errorf("%s", err);
    st = RL_EXIT_BADINPUT;
    goto out;
  }
  /* this shard's points, and the mujoco references they need */
  int *mine = malloc(sizeof(int) * (size_t)n), *need = calloc((size_t)n, sizeof(int)),
      *pending = malloc(sizeof(int) * (size_t)n);
  int nmine = 0, npending = 0, nskip = 0;
  for (int i = 0; i < n; i++)
    if (!a->shard_n || i % a->shard_n == a->shard_i - 1) {
      mine[nmine++] = i;
      need[i] = 1;
      if (pts[i].ref >= 0) need[pts[i].ref] = 1;
    }
  for (int i = 0; i < n; i++) {
    if (!need[i] || (s.kind->absent && s.kind->absent(&s, &pts[i], NULL, 0))) continue; /* meta.csv says why */
    char tp[4096];
    rl_study_file(tp, sizeof tp, dir, &pts[i], s.kind->done);
    if (a->resume && exists(tp)) nskip++;
    else pending[npending++] = i;
  }
  if (nskip) fprintf(stderr, "run %s: --resume: %d of %d points already done\n", s.name, nskip, nskip + npending);
  /* a timing kind: one point at a time, so that timed points never share the cores */
  int serial = s.kind->flags & RL_KIND_SERIAL;
  if (serial && jobs > 1)
    fprintf(stderr, "run %s: kind = %s runs one point at a time (--jobs %d not used)\n", s.name, s.kind->name, jobs);
  if (!serial) order_by_cost(pts, pending, npending);
  st = run_pool(dir, &s, pts, pending, npending, a, serial ? 1 : jobs);
  if (st == 130) rl_errorf("run: %s: interrupted; every finished trajectory is whole: continue with --resume", s.name);
  if (!st && write_metrics(dir, &s, pts, mine, nmine, err, sizeof err)) {
    rl_errorf("%s", err);
    st = RL_EXIT_BADINPUT;
  }
  if (!st && s.kind->collect && s.kind->collect(dir, &s, pts, mine, nmine, err, sizeof err)) {
    rl_errorf("%s", err);
    st = RL_EXIT_BADINPUT;
  }
  if (!st && write_meta(dir, &s, a, pts, n, nmine, err, sizeof err)) {
    rl_errorf("%s", err);
    st = RL_EXIT_BADINPUT;
  }
  if (!st) fprintf(stderr, "run %s: %d points -> %s/metrics.csv\n", s.name, nmine, dir);
  free(mine);
  free(need);
  free(pending);
out:
  rl_spec_free_points(pts, n);
  rl_spec_free(&s);
  return st;
}

int rl_run(const rl_run_args *a) {
  /* every spec parses before anything runs */
  char err[1024];
  for (int i = 0; i < a->nspec; i++) {
    rl_spec s;
    if (rl_spec_load(a->specs[i], &s, err, sizeof err)) {
      rl_errorf("%s", err);
      return RL_EXIT_BADINPUT;
    }
    rl_spec_free(&s);
  }
  int jobs = a->jobs > 0 ? a->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (jobs < 1) jobs = 1;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  int st = 0;
  for (int i = 0; i < a->nspec && !st; i++) st = run_study(a->specs[i], a, jobs);
  return st;
}

/* ---------- merge ---------- */

typedef struct mrow {
  long index;
  char *line;
} mrow;

static int cmp_row(const void *x, const void *y) {
  const mrow *a = x, *b = y;
  return a->index < b->index ? -1 : a->index > b->index;
}

static int copy_file(const char *from, const char *to) {
  char *t = read_all(from), err[256];
  if (!t) return -1;
  int r = write_whole(to, t, err, sizeof err);
  free(t);
  return r;
}

int rl_merge(const char *out, const char *const *dirs, int ndirs) {
  /* every study folder in the tree under each DIR (csv.h: rl_results_find) */
  char **sd = NULL;
  int nsd = 0;
  for (int i = 0; i < ndirs; i++) {
    char **found, err[4400];
    int nsearched, k = rl_results_find(dirs[i], &found, &nsearched, err, sizeof err);
    if (k <= 0) {
      if (k < 0) rl_errorf("merge: %s", err);
      else
        rl_errorf("merge: %s: no results: no metrics.csv in it or in the %d folder(s) below it", dirs[i],
                  nsearched - 1);
      rl_results_free(sd, nsd);
      return RL_EXIT_BADINPUT;
    }
    sd = realloc(sd, sizeof *sd * (size_t)(nsd + k));
    memcpy(sd + nsd, found, sizeof *sd * (size_t)k);
    nsd += k;
    free(found);
  }
  char *done = calloc((size_t)nsd, 1);
  int st = 0;
  for (int i = 0; i < nsd && !st; i++) {
    if (done[i]) continue;
    const char *name = strrchr(sd[i], '/') ? strrchr(sd[i], '/') + 1 : sd[i];
    char dir[4096], p[4300], err[1024];
    rl_snprintf(dir, sizeof dir, "%s/%s", out, name);
    if (rl_mkdirs(dir)) {
      rl_errorf("merge: %s: cannot create: %s", dir, strerror(errno));
      st = RL_EXIT_BADINPUT;
      break;
    }
    mrow *rows = NULL;
    int nrows = 0, caprows = 0;
    char *header = NULL, *spec = NULL;
    for (int j = i; j < nsd; j++) {
      const char *nj = strrchr(sd[j], '/') ? strrchr(sd[j], '/') + 1 : sd[j];
      if (strcmp(nj, name)) continue;
      done[j] = 1;
      rl_snprintf(p, sizeof p, "%s/spec.ini", sd[j]);
      char *sp = read_all(p);
      if (!sp || (spec && strcmp(sp, spec))) {
        rl_errorf("merge: %s: %s", sd[j], sp ? "ran a different spec than the other shards" : "no spec.ini");
        free(sp);
        st = RL_EXIT_BADINPUT;
        break;
      }
      if (!spec) spec = sp;
      else free(sp);
      rl_snprintf(p, sizeof p, "%s/metrics.csv", sd[j]);
      char *text = read_all(p);
      char *save = NULL;
      int first = 1;
      for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save), first = 0) {
        if (first) {
          if (!header) header = strdup(l);
          continue;
        }
        char *c = strrchr(l, ',');
        if (nrows == caprows) rows = realloc(rows, sizeof *rows * (size_t)(caprows = caprows ? 2 * caprows : 1024));
        rows[nrows].index = c ? strtol(c + 1, NULL, 10) : 0;
        rows[nrows++].line = strdup(l);
      }
      free(text);
      /* the trajectories come along (check reads them for the first step out of band) */
      DIR *d = opendir(sd[j]);
      struct dirent *e;
      while (d && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (strncmp(e->d_name, "traj_", 5) || l < 4 || strcmp(e->d_name + l - 4, ".csv")) continue;
        char from[4400], to[4400];
        rl_snprintf(from, sizeof from, "%s/%s", sd[j], e->d_name);
        rl_snprintf(to, sizeof to, "%s/%s", dir, e->d_name);
        if (!exists(to) && copy_file(from, to)) {
          rl_errorf("merge: %s: cannot write", to);
          st = RL_EXIT_BADINPUT;
        }
      }
      if (d) closedir(d);
      if (!exists(dir) || st) break;
      rl_snprintf(p, sizeof p, "%s/meta.csv", sd[j]);
      char to[4400];
      rl_snprintf(to, sizeof to, "%s/meta.csv", dir);
      if (exists(p)) copy_file(p, to);
    }
    if (!st) {
      if (nrows > 1) qsort(rows, (size_t)nrows, sizeof *rows, cmp_row); /* no rows: rows is NULL */
      /* the same (index, metric) twice: identical shards overlapped; keep one */
      size_t cap = strlen(header) + 2;
      for (int k = 0; k < nrows; k++) cap += strlen(rows[k].line) + 1;
      char *all = malloc(cap), *w = all;
      w += sprintf(w, "%s\n", header);
      for (int k = 0; k < nrows; k++) {
        if (k && !strcmp(rows[k].line, rows[k - 1].line)) continue;
        w += sprintf(w, "%s\n", rows[k].line);
      }
      rl_snprintf(p, sizeof p, "%s/spec.ini", dir);
      if (write_whole(p, spec, err, sizeof err)) {
        rl_errorf("%s", err);
        st = RL_EXIT_BADINPUT;
      }
      rl_snprintf(p, sizeof p, "%s/metrics.csv", dir);
      if (!st && write_whole(p, all, err, sizeof err)) {
        rl_errorf("%s", err);
        st = RL_EXIT_BADINPUT;
      }
      free(all);
      /* the merged set must be the whole sweep */
      rl_spec s;
      int n = 0;
      rl_point *pts = NULL;
      rl_snprintf(p, sizeof p, "%s/spec.ini", dir);
      if (!st && !rl_spec_load_text_only(p, &s, err, sizeof err)) {
        n = rl_spec_expand(&s, &pts, err, sizeof err);
        char *seen = calloc((size_t)(n > 0 ? n : 1), 1);
        for (int k = 0; k < nrows; k++)
          if (rows[k].index >= 0 && rows[k].index < n) seen[rows[k].index] = 1;
        int missing = 0;
        for (int k = 0; k < n; k++) missing += !seen[k];
        if (missing)
          fprintf(stderr, "merge %s: warning: %d of %d points missing (a shard not merged?)\n", name, missing, n);
        /* the kind's study-level files (verify.csv, …) from the merged points */
        int *idx = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1)), nidx = 0;
        for (int k = 0; k < n; k++)
          if (seen[k]) idx[nidx++] = k;
        if (!missing && s.kind->collect && s.kind->collect(dir, &s, pts, idx, nidx, err, sizeof err)) {
          rl_errorf("%s", err);
          st = RL_EXIT_BADINPUT;
        }
        free(idx);
        free(seen);
        if (n > 0) rl_spec_free_points(pts, n);
        rl_spec_free(&s);
      }
      if (!st) fprintf(stderr, "merge %s: %d rows -> %s/metrics.csv\n", name, nrows, dir);
    }
    for (int k = 0; k < nrows; k++) free(rows[k].line);
    free(rows);
    free(header);
    free(spec);
  }
  free(done);
  rl_results_free(sd, nsd);
  return st;
}
