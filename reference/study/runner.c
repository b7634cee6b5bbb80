/* runner.c — `rigidlab run` and `rigidlab merge` (see runner.h), and the per-point metrics.
 *
 * Determinism: every point runs single-threaded in its own worker process and writes its own CSV;
 * the metrics are computed afterwards, in point order, by the parent from those CSVs.  So
 * metrics.csv is byte-identical for any --jobs and any shard split (after merge).
 * Interruption: each CSV is written to NAME.tmp.PID and renamed when whole; on SIGINT/SIGTERM the
 * parent stops launching, ends its workers, removes their temporaries and exits 130 without writing
 * metrics.csv; --resume then skips every point whose trajectory CSV exists. */
#include <cblas.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
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
  /* every named column must lie inside the data rows (a header with more fields than the data, or a quoted
     field holding commas, would otherwise index past them) */
  int need = t->c_qpos + t->nq;
  const int named[] = {t->c_step, t->c_iter, t->c_conv, t->c_pen, t->c_anchor, t->c_energy};
  for (int k = 0; k < 6; k++)
    if (named[k] + 1 > need) need = named[k] + 1;
  if (need > t->ncol) {
    rl_snprintf(err, (size_t)errlen, "%s: the header names %d columns, the data rows have %d", path, need, t->ncol);
    rl_traj_free(t);
    return -1;
  }
  /* the step column becomes a long: a whole number in 0..2^53 (inf, nan and huge values would not convert) */
  for (int r = 0; r < t->nrow; r++) {
    double x = t->v[(size_t)r * (size_t)t->ncol + (size_t)t->c_step];
    if (!(x >= 0 && x <= 9007199254740992.0) || x != floor(x)) {
      rl_snprintf(err, (size_t)errlen, "%s: data row %d: step '%.17g' is not a whole number in 0..2^53", path, r + 1,
                  x);
      rl_traj_free(t);
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

/* write TEXT to PATH through a temporary and rename (csv.h) */
static int write_whole(const char *path, const char *text, char *err, int errlen) {
  return rl_file_write(path, text, strlen(text), err, errlen);
}

/* ---------- meta.csv and metrics.csv ---------- */

/* The configuration a study folder's numbers depend on: the build (version, compiler, flags, git, BLAS,
 * MuJoCo) and the run (every --opt, in order, and the spec's text).  meta.csv records each under these
 * keys; --resume and merge refuse a folder whose recorded configuration differs in any of them. */
enum { CFG_VERSION, CFG_COMPILER, CFG_FLAGS, CFG_GIT, CFG_BLAS, CFG_MUJOCO, CFG_OPTS, CFG_SPEC, NCFG };
static const char *const cfg_key[NCFG] = {"version", "compiler",       "c_flags",    "git",
                                          "blas",    "mujoco_version", "extra_opts", "spec"};
typedef struct rl_config {
  char buf[NCFG - 1][1024];
  const char *v[NCFG];
} rl_config;

static void config_of(rl_config *c, const rl_spec *s, const rl_run_args *a) {
  for (int k = 0; k < NCFG - 1; k++) {
    c->buf[k][0] = 0;
    c->v[k] = c->buf[k];
  }
  rl_snprintf(c->buf[CFG_VERSION], sizeof c->buf[0], "%s", "rigidlab 0.1.0");
#ifdef __VERSION__
  rl_snprintf(c->buf[CFG_COMPILER], sizeof c->buf[0], "%s", __VERSION__);
#endif
  rl_snprintf(c->buf[CFG_FLAGS], sizeof c->buf[0], "%s", RL_BUILD_FLAGS);
  rl_snprintf(c->buf[CFG_GIT], sizeof c->buf[0], "%s", RL_GIT_DESCRIBE);
  rl_snprintf(c->buf[CFG_BLAS], sizeof c->buf[0], "%s", RL_BLAS);
  rl_snprintf(c->buf[CFG_MUJOCO], sizeof c->buf[0], "%d.%d.%d", mj_version() / 100, mj_version() / 10 % 10,
              mj_version() % 10);
  char *o = c->buf[CFG_OPTS];
  for (int i = 0; a && i < a->nopts; i++)
    rl_snprintf(o + strlen(o), sizeof c->buf[0] - strlen(o), "%s%s", i ? " " : "", a->opts[i]);
  c->v[CFG_SPEC] = s->text;
}

/* meta.csv's value under KEY ("" when absent) */
static const char *meta_get(const rl_table *t, const char *key) {
  for (int r = 0; r < t->nrow; r++)
    if (!strcmp(rl_table_cell(t, r, 0), key)) return rl_table_cell(t, r, 1);
  return "";
}

/* DIR/meta.csv → T (a key,value table); −1 with err */
static int meta_load(const char *dir, rl_table *t, char *err, int errlen) {
  char p[4200];
  rl_snprintf(p, sizeof p, "%s/meta.csv", dir);
  if (rl_table_load(t, p, err, errlen)) return -1;
  if (t->ncol != 2 || strcmp(t->hdr[0], "key") || strcmp(t->hdr[1], "value")) {
    rl_table_free(t);
    rl_snprintf(err, (size_t)errlen, "%s:1: not a meta.csv (key,value)", p);
    return -1;
  }
  return 0;
}

/* one line naming the first configuration key on which the folder's meta.csv T differs from C; 0 if none */
static int config_differs(const rl_table *t, const rl_config *c, char *err, int errlen) {
  for (int k = 0; k < NCFG; k++) {
    const char *old = meta_get(t, cfg_key[k]);
    if (!strcmp(old, c->v[k])) continue;
    if (k == CFG_SPEC) rl_snprintf(err, (size_t)errlen, "%s: written by a different spec", t->path);
    else {
      rl_snprintf(err, (size_t)errlen, "%s: %s was '%.300s', here it is '%.300s'", t->path, cfg_key[k], old, c->v[k]);
      for (char *e = err; *e; e++)
        if (*e == '\n' || *e == '\r') *e = ' ';
    }
    return 1;
  }
  return 0;
}

static int write_meta(const char *dir, const rl_spec *s, const rl_run_args *a, const rl_point *pts, int nall,
                      int npoints, char *err, int errlen) {
  char path[4096];
  rl_snprintf(path, sizeof path, "%s/meta.csv", dir);
  rl_csv w;
  if (rl_csv_open(&w, path, 0, err, errlen)) return -1;
  char buf[1024];
  struct utsname u;
  time_t now = time(NULL);
  rl_config cfg;
  config_of(&cfg, s, a);
#define KV(k, v)        \
  do {                  \
    rl_csv_str(&w, k);  \
    rl_csv_str(&w, v);  \
    rl_csv_end_row(&w); \
  } while (0)
  KV("key", "value");
  KV("study", s->name);
  for (int k = CFG_VERSION; k <= CFG_MUJOCO; k++)
    if (k != CFG_COMPILER || cfg.v[k][0]) KV(cfg_key[k], cfg.v[k]);
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
  if (cfg.v[CFG_OPTS][0]) KV(cfg_key[CFG_OPTS], cfg.v[CFG_OPTS]);
  if (s->kind->meta)
    s->kind->meta(&w, s, pts, nall); /* e.g. cuda_rows,absent (the whole study's: every shard says it) */
  KV("spec_path", s->path);
  KV(cfg_key[CFG_SPEC], cfg.v[CFG_SPEC]);
#undef KV
  return rl_csv_close(&w, err, errlen);
}

/* Temporaries NAME.tmp.PID in DIR left by a process that no longer runs (killed, or its folder became
 * unwritable): removed; returns how many */
static int remove_stale_temps(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  struct dirent *e;
  int n = 0;
  char p[4400];
  while ((e = readdir(d))) {
    const char *t = strstr(e->d_name, ".tmp."), *q;
    if (!t) continue;
    for (q = t + 5; *q >= '0' && *q <= '9'; q++) {}
    if (q == t + 5 || *q || q - (t + 5) > 9) continue;
    long pid = strtol(t + 5, NULL, 10);
    if (pid == (long)getpid() || !(kill((pid_t)pid, 0) && errno == ESRCH)) continue;
    rl_snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    struct stat sb;
    if (!lstat(p, &sb) && S_ISREG(sb.st_mode) && !unlink(p)) n++;
  }
  closedir(d);
  return n;
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
        rl_tmp_catch_signals(); /* the worker's own temporaries go with it */
        /* one BLAS thread per worker: the workers already fill the cores, and the references' dense solves are
           small (OpenBLAS's own threads on a loaded 2-core host made the AVBD reference 10× slower) */
        openblas_set_num_threads(1);
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
  char tp0[4200];
  int st = 0;
  if (rl_mkdirs(dir)) {
    rl_errorf("run: %s: cannot create: %s", dir, strerror(errno));
    st = RL_EXIT_BADINPUT;
    goto out;
  }
  /* --resume continues only a folder whose meta.csv records this very configuration */
  char spath[4200];
  rl_snprintf(spath, sizeof spath, "%s/spec.ini", dir);
  if (a->resume) {
    rl_snprintf(tp0, sizeof tp0, "%s/meta.csv", dir);
    if (exists(tp0)) {
      rl_table old;
      rl_config cfg;
      config_of(&cfg, &s, a);
      if (meta_load(dir, &old, err, sizeof err)) {
        rl_errorf("run: --resume: %s", err);
        st = RL_EXIT_BADINPUT;
        goto out;
      }
      int differs = config_differs(&old, &cfg, err, sizeof err);
      rl_table_free(&old);
      if (differs) {
        rl_errorf("run: --resume: %s (the points would mix two configurations: remove %s or drop --resume)", err, dir);
        st = RL_EXIT_BADINPUT;
        goto out;
      }
    } else if (exists(spath)) {
      rl_errorf("run: --resume: %s has no meta.csv: the configuration of its points is unknown (remove it or drop "
                "--resume)",
                dir);
      st = RL_EXIT_BADINPUT;
      goto out;
    }
  }
  int nstale = remove_stale_temps(dir);
  if (nstale) fprintf(stderr, "run %s: removed %d stale temporary file(s) in %s\n", s.name, nstale, dir);
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
  /* the configuration is on record before the first point runs (an interrupted folder says what it ran) */
  if (write_meta(dir, &s, a, pts, n, nmine, err, sizeof err)) {
    rl_errorf("%s", err);
    st = RL_EXIT_BADINPUT;
    goto done;
  }
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
  if (!st) fprintf(stderr, "run %s: %d points -> %s/metrics.csv\n", s.name, nmine, dir);
done:
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

/* One metrics row of a shard: its cells as read (written back verbatim), where it came from, and its
 * place: point index, shard, row order within the shard. */
typedef struct mrow {
  long index;
  int shard, seq, line;
  char *cell[9];
} mrow;

static const char *const metrics_cols[9] = {"study",  "point", "engine", "precision", "dt",
                                            "metric", "value", "step",   "index"};

static int cmp_row(const void *x, const void *y) {
  const mrow *a = x, *b = y;
  if (a->index != b->index) return a->index < b->index ? -1 : 1;
  if (a->shard != b->shard) return a->shard < b->shard ? -1 : 1;
  return (a->seq > b->seq) - (a->seq < b->seq);
}

static void rows_free(mrow *rows, int n) {
  for (int k = 0; k < n; k++)
    for (int c = 0; c < 9; c++) free(rows[k].cell[c]);
  free(rows);
}

/* a whole-token integer in LO..HI */
static int strict_long(const char *t, long lo, long hi, long *v) {
  char *end;
  errno = 0;
  long x = strtol(t, &end, 10);
  if (!*t || *end || errno || x < lo || x > hi) return -1;
  *v = x;
  return 0;
}

/* SHARD/metrics.csv's rows appended to *ROWS, each checked against the sweep (PTS, N points of study
 * NAME): the nine columns, index a point of the sweep whose id is the point column, value a number, step a
 * whole number, no (point, metric) twice; −1 with "PATH:LINE: why" */
static int merge_read_rows(const char *shard_dir, int shard, const char *name, const rl_point *pts, int n, mrow **rows,
                           int *nrows, int *cap, char *err, int errlen) {
  char p[4300];
  rl_snprintf(p, sizeof p, "%s/metrics.csv", shard_dir);
  rl_table t;
  if (rl_table_load(&t, p, err, errlen)) return -1;
  int bad = t.ncol != 9;
  for (int c = 0; c < 9 && !bad; c++) bad = strcmp(t.hdr[c], metrics_cols[c]) != 0;
  if (bad) {
    rl_snprintf(err, (size_t)errlen,
                "%s:1: not a metrics.csv (study,point,engine,precision,dt,metric,value,step,index)", p);
    rl_table_free(&t);
    return -1;
  }
  int first = *nrows;
  for (int r = 0; r < t.nrow; r++) {
    const char *const *c = (const char *const *)t.cell + (size_t)r * 9;
    long index, step;
    double v;
    const char *why = NULL;
    if (strcmp(c[0], name)) why = "study is not the spec's name";
    else if (strict_long(c[8], 0, (long)n - 1, &index)) why = "index is not a point of the sweep";
    else if (strcmp(c[1], pts[index].id)) why = "point is not the id of the sweep's point at that index";
    else if (!c[5][0]) why = "empty metric";
    else if (rl_table_num(&t, r, 6, &v, err, errlen)) why = "value is not a number";
    else if (strict_long(c[7], 0, LONG_MAX, &step)) why = "step is not a whole number";
    if (why) {
      rl_snprintf(err, (size_t)errlen, "%s:%d: %s (row '%.40s,%.80s,...,%.40s,%.30s,...')", p, t.line[r], why, c[0],
                  c[1], c[5], c[6]);
      for (char *e = err; *e; e++)
        if (*e == '\n' || *e == '\r') *e = ' ';
      rl_table_free(&t);
      return -1;
    }
    /* a (point, metric) pair once per shard */
    for (int k = first; k < *nrows; k++)
      if ((*rows)[k].index == index && !strcmp((*rows)[k].cell[5], c[5])) {
        rl_snprintf(err, (size_t)errlen, "%s:%d: point %s, metric %s a second time (first at line %d)", p, t.line[r],
                    c[1], c[5], (*rows)[k].line);
        rl_table_free(&t);
        return -1;
      }
    if (*nrows == *cap) *rows = realloc(*rows, sizeof **rows * (size_t)(*cap = *cap ? 2 * *cap : 1024));
    mrow *m = &(*rows)[(*nrows)++];
    m->index = index;
    m->shard = shard;
    m->seq = r;
    m->line = t.line[r];
    for (int k = 0; k < 9; k++) m->cell[k] = strdup(c[k]);
  }
  rl_table_free(&t);
  return 0;
}

/* sorted ROWS with the rows of a later shard that repeat an earlier shard's (point, metric) dropped when
 * identical; −1 with err naming both shards when they differ */
static int merge_dedup(mrow *rows, int *nrows, char *const *shards, char *err, int errlen) {
  int w = 0;
  for (int g = 0; g < *nrows;) {
    int e = g;
    while (e < *nrows && rows[e].index == rows[g].index) e++;
    int g0 = w;
    for (int k = g; k < e; k++) {
      int dup = -1;
      for (int j = g0; j < w && dup < 0; j++)
        if (!strcmp(rows[j].cell[5], rows[k].cell[5])) dup = j;
      if (dup < 0) {
        rows[w++] = rows[k];
        continue;
      }
      int same = 1;
      for (int c = 0; c < 9; c++) same &= !strcmp(rows[dup].cell[c], rows[k].cell[c]);
      if (!same) {
        rl_snprintf(err, (size_t)errlen,
                    "point %s, metric %s: %s/metrics.csv:%d says %s (step %s), %s/metrics.csv:%d says %s (step %s)",
                    rows[k].cell[1], rows[k].cell[5], shards[rows[dup].shard], rows[dup].line, rows[dup].cell[6],
                    rows[dup].cell[7], shards[rows[k].shard], rows[k].line, rows[k].cell[6], rows[k].cell[7]);
        /* rows[0, w) and rows[k, n) are still owned: close the gap so the caller frees each once */
        memmove(rows + w, rows + k, sizeof *rows * (size_t)(*nrows - k));
        *nrows = w + (*nrows - k);
        return -1;
      }
      for (int c = 0; c < 9; c++) free(rows[k].cell[c]);
    }
    g = e;
  }
  *nrows = w;
  return 0;
}

/* FROM → TO, whole (csv.h: through a temporary) */
static int copy_file(const char *from, const char *to, char *err, int errlen) {
  size_t n;
  char *t = rl_file_read(from, &n, err, errlen);
  if (!t) return -1;
  int r = rl_file_write(to, t, n, err, errlen);
  free(t);
  return r;
}

/* every traj_*.csv of the shard SD into DIR (a trajectory already there from an earlier shard is kept) */
static int merge_copy_trajs(const char *sd, const char *dir, char *err, int errlen) {
  DIR *d = opendir(sd);
  if (!d) {
    rl_snprintf(err, (size_t)errlen, "%s: cannot read: %s", sd, strerror(errno));
    return -1;
  }
  struct dirent *e;
  int st = 0;
  while (!st && (e = readdir(d))) {
    size_t l = strlen(e->d_name);
    if (strncmp(e->d_name, "traj_", 5) || l < 4 || strcmp(e->d_name + l - 4, ".csv")) continue;
    char from[4400], to[4400];
    rl_snprintf(from, sizeof from, "%s/%s", sd, e->d_name);
    rl_snprintf(to, sizeof to, "%s/%s", dir, e->d_name);
    if (!exists(to)) st = copy_file(from, to, err, errlen);
  }
  closedir(d);
  return st;
}

/* One study's shards SD[0..NS) merged into the new folder TMP (the caller renames it into place): the
 * same spec and configuration (meta.csv) in every shard, rows checked and merged in point order,
 * trajectories alongside, the kind's study-level files when no point is missing.  −1 with err. */
static int merge_study(const char *name, char *const *sd, int ns, const char *tmp, int *nrows_out, char *err,
                       int errlen) {
  char p[4400];
  rl_snprintf(p, sizeof p, "%s/spec.ini", sd[0]);
  rl_spec s;
  if (rl_spec_load_text_only(p, &s, err, errlen)) return -1;
  rl_point *pts = NULL;
  int n = rl_spec_expand(&s, &pts, err, errlen), st = 0, nrows = 0, cap = 0;
  mrow *rows = NULL;
  rl_table meta0;
  int have_meta0 = 0;
  if (n < 0) goto fail;
  if (strcmp(s.name, name)) {
    rl_snprintf(err, (size_t)errlen, "%s: the spec's name is '%s', the folder's '%s'", p, s.name, name);
    goto fail;
  }
  if (meta_load(sd[0], &meta0, err, errlen)) goto fail;
  have_meta0 = 1;
  /* the configuration the first shard ran, as the reference for the others */
  rl_config cfg;
  for (int k = 0; k < NCFG; k++) { cfg.v[k] = meta_get(&meta0, cfg_key[k]); }
  for (int j = 0; j < ns; j++) {
    rl_snprintf(p, sizeof p, "%s/spec.ini", sd[j]);
    char *sp = rl_file_read(p, NULL, err, errlen);
    if (!sp) goto fail;
    int same = !strcmp(sp, s.text);
    free(sp);
    if (!same) {
      rl_snprintf(err, (size_t)errlen, "%s: ran a different spec than %s", p, sd[0]);
      goto fail;
    }
    if (j) {
      rl_table mj;
      if (meta_load(sd[j], &mj, err, errlen)) goto fail;
      char why[1200];
      int differs = config_differs(&mj, &cfg, why, sizeof why);
      rl_table_free(&mj);
      if (differs) {
        rl_snprintf(err, (size_t)errlen, "%s (%s/meta.csv has the other)", why, sd[0]);
        goto fail;
      }
    }
    if (merge_read_rows(sd[j], j, name, pts, n, &rows, &nrows, &cap, err, errlen)) goto fail;
  }
  qsort(rows, (size_t)nrows, sizeof *rows, cmp_row);
  if (merge_dedup(rows, &nrows, sd, err, errlen)) goto fail;
  for (int j = 0; j < ns; j++)
    if (merge_copy_trajs(sd[j], tmp, err, errlen)) goto fail;
  /* the last shard's meta.csv (the study's configuration, the same in every shard) */
  char to[4400];
  rl_snprintf(p, sizeof p, "%s/meta.csv", sd[ns - 1]);
  rl_snprintf(to, sizeof to, "%s/meta.csv", tmp);
  if (copy_file(p, to, err, errlen)) goto fail;
  rl_snprintf(to, sizeof to, "%s/spec.ini", tmp);
  if (write_whole(to, s.text, err, errlen)) goto fail;
  rl_snprintf(to, sizeof to, "%s/metrics.csv", tmp);
  rl_csv w;
  if (rl_csv_open(&w, to, 0, err, errlen)) goto fail;
  for (int c = 0; c < 9; c++) rl_csv_str(&w, metrics_cols[c]);
  rl_csv_end_row(&w);
  for (int k = 0; k < nrows; k++) {
    for (int c = 0; c < 9; c++) rl_csv_str(&w, rows[k].cell[c]);
    rl_csv_end_row(&w);
  }
  if (rl_csv_close(&w, err, errlen)) goto fail;
  /* the merged set must be the whole sweep */
  char *seen = calloc((size_t)(n > 0 ? n : 1), 1);
  for (int k = 0; k < nrows; k++) seen[rows[k].index] = 1;
  int missing = 0;
  for (int k = 0; k < n; k++) missing += !seen[k];
  if (missing) fprintf(stderr, "merge %s: warning: %d of %d points missing (a shard not merged?)\n", name, missing, n);
  /* the kind's study-level files (verify.csv, …) from the merged points */
  int *idx = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1)), nidx = 0;
  for (int k = 0; k < n; k++)
    if (seen[k]) idx[nidx++] = k;
  if (!missing && s.kind->collect && s.kind->collect(tmp, &s, pts, idx, nidx, err, errlen)) st = -1;
  free(idx);
  free(seen);
  goto done;
fail:
  st = -1;
done:
  *nrows_out = nrows;
  rows_free(rows, nrows);
  if (have_meta0) rl_table_free(&meta0);
  if (n > 0) rl_spec_free_points(pts, n);
  rl_spec_free(&s);
  return st;
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
  /* each study is built in OUT/.STUDY.tmp.PID (removed on any failure or signal); only when every study
     is whole are they renamed onto OUT/STUDY, so a refused merge leaves nothing behind */
  int made_out = !exists(out), st = 0, nstudy = 0;
  if (rl_mkdirs(out)) {
    rl_errorf("merge: %s: cannot create: %s", out, strerror(errno));
    rl_results_free(sd, nsd);
    return RL_EXIT_BADINPUT;
  }
  char *done = calloc((size_t)nsd, 1), **group = malloc(sizeof *group * (size_t)nsd);
  char(*tmp)[4200] = malloc(sizeof *tmp * (size_t)nsd);
  const char **names = malloc(sizeof *names * (size_t)nsd);
  for (int i = 0; i < nsd && !st; i++) {
    if (done[i]) continue;
    const char *name = strrchr(sd[i], '/') ? strrchr(sd[i], '/') + 1 : sd[i];
    int ng = 0;
    for (int j = i; j < nsd; j++) {
      const char *nj = strrchr(sd[j], '/') ? strrchr(sd[j], '/') + 1 : sd[j];
      if (!strcmp(nj, name)) {
        done[j] = 1;
        group[ng++] = sd[j];
      }
    }
    char err[4400];
    rl_snprintf(tmp[nstudy], sizeof tmp[0], "%s/.%s.tmp.%ld", out, name, (long)getpid());
    rl_dir_remove_flat(tmp[nstudy]);
    rl_tmp_register(tmp[nstudy], 1);
    if (mkdir(tmp[nstudy], 0777)) {
      rl_errorf("merge: %s: cannot create: %s", tmp[nstudy], strerror(errno));
      rl_tmp_forget(tmp[nstudy]);
      st = RL_EXIT_BADINPUT;
      break;
    }
    names[nstudy++] = name;
    int nrows = 0;
    if (merge_study(name, group, ng, tmp[nstudy - 1], &nrows, err, sizeof err)) {
      rl_errorf("merge: %s", err);
      st = RL_EXIT_BADINPUT;
      break;
    }
    fprintf(stderr, "merge %s: %d rows -> %s/%s/metrics.csv\n", name, nrows, out, name);
  }
  /* commit: an existing OUT/STUDY is set aside, the new one renamed in, the old one removed */
  for (int k = 0; k < nstudy && !st; k++) {
    char final[4400], old[4400];
    rl_snprintf(final, sizeof final, "%s/%s", out, names[k]);
    rl_snprintf(old, sizeof old, "%s/.%s.old.%ld", out, names[k], (long)getpid());
    struct stat sb;
    int had = !lstat(final, &sb);
    if (had && !S_ISDIR(sb.st_mode)) {
      rl_errorf("merge: %s: exists and is not a folder: refusing to replace it", final);
      st = RL_EXIT_BADINPUT;
    } else if (had && rename(final, old)) {
      rl_errorf("merge: %s: cannot replace: %s", final, strerror(errno));
      st = RL_EXIT_BADINPUT;
    } else if (rename(tmp[k], final)) {
      rl_errorf("merge: %s: cannot rename into place: %s", final, strerror(errno));
      if (had) rename(old, final);
      st = RL_EXIT_BADINPUT;
    } else {
      rl_tmp_forget(tmp[k]);
      if (had) rl_dir_remove_flat(old);
      if (had && exists(old)) fprintf(stderr, "merge: warning: %s (the replaced folder) holds folders: left\n", old);
    }
  }
  for (int k = 0; k < nstudy; k++)
    if (st) {
      rl_dir_remove_flat(tmp[k]);
      rl_tmp_forget(tmp[k]);
    }
  if (st && made_out) rmdir(out);
  free(done);
  free(group);
  free(tmp);
  free(names);
  rl_results_free(sd, nsd);
  return st;
}
