/* kinds.c — the table of study kinds (kinds.h) and what the kinds' files share. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "csv.h"
#include "kinds.h"
#include "mj_load.h"
#include "runner.h"

/* One row per kind: the descriptor rl_kind_NAME defined in NAME.c.  A new kind is one more row here. */
#define RL_STUDY_KIND_ROWS                                                                                 \
  ROW(trajectory)                                                                                          \
  ROW(refinement)                                                                                          \
  ROW(fp32) ROW(residuals) ROW(convergence) ROW(lockstep) ROW(device) ROW(speed) ROW(analytic) ROW(verify) \
      ROW(agreement) ROW(contact) ROW(bench)

#define ROW(k) extern const rl_study_kind rl_kind_##k;
RL_STUDY_KIND_ROWS
#undef ROW
#define ROW(k) &rl_kind_##k,
const rl_study_kind *const rl_study_kinds[] = {RL_STUDY_KIND_ROWS};
#undef ROW
const int rl_study_nkinds = (int)(sizeof rl_study_kinds / sizeof rl_study_kinds[0]);

const rl_study_kind *rl_study_kind_find(const char *name) {
  for (int k = 0; k < rl_study_nkinds; k++)
    if (!strcmp(rl_study_kinds[k]->name, name)) return rl_study_kinds[k];
  return NULL;
}

void rl_study_kind_list(char *out, size_t n) {
  out[0] = 0;
  for (int k = 0; k < rl_study_nkinds; k++)
    rl_snprintf(out + strlen(out), n - strlen(out), "%s%s", k ? ", " : "", rl_study_kinds[k]->name);
}

void rl_study_file(char *p, size_t n, const char *dir, const rl_point *q, const char *suffix) {
  rl_snprintf(p, n, "%s/traj_%s%s.csv", dir, q->id, suffix);
}

/* the one place a point's time step is worked out: the sweep's dt, else the scene's MJCF timestep */
double rl_study_point_dt(const rl_point *q, char *err, int errlen) {
  if (q->dt > 0) return q->dt;
  mjModel *m = rl_mj_load(q->scene, err, errlen);
  if (!m) return NAN;
  double dt = m->opt.timestep;
  mj_deleteModel(m);
  return dt;
}

/* steps = the spec's steps, else round(duration / dt), at least 1 */
long rl_study_point_steps(const rl_spec *s, const rl_point *q, char *err, int errlen) {
  if (s->steps >= 0) return s->steps;
  double dt = rl_study_point_dt(q, err, errlen);
  if (isnan(dt)) return -1;
  double x = s->duration / dt;
  if (!(x <= (double)RL_MAX_STEPS)) {
    rl_snprintf(err, (size_t)errlen, "%s: duration %g s at time step %g s is %g steps (allowed: at most %ld)", s->path,
                s->duration, dt, x, RL_MAX_STEPS);
    return -1;
  }
  long n = lround(x);
  return n < 1 ? 1 : n;
}

void rl_study_remove_temps(const char *dir, long pid) {
  char suf[64], p[4400];
  rl_snprintf(suf, sizeof suf, ".tmp.%ld", pid);
  size_t ls = strlen(suf);
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    size_t l = strlen(e->d_name);
    if (l > ls && !strcmp(e->d_name + l - ls, suf)) {
      rl_snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
  }
  if (d) closedir(d);
}

int rl_study_open_csv(rl_csv *w, const char *path, int f32, rl_sim_args *sa) {
  char err[1024];
  if (rl_csv_open(w, path, f32, err, sizeof err)) {
    rl_errorf("%s", err);
    return RL_EXIT_BADINPUT;
  }
  sa->c.out = w;
  sa->c.csv = path;
  return 0;
}

int rl_study_finish_csv(rl_csv *w, int st) {
  char err[1024];
  if (st) {
    rl_csv_abort(w);
    return st;
  }
  if (rl_csv_close(w, err, sizeof err)) {
    rl_errorf("%s", err);
    return RL_EXIT_BADINPUT;
  }
  return 0;
}

int rl_study_sim_to(rl_sim_args *sa, int f32, const char *path) {
  rl_csv w;
  if (rl_study_open_csv(&w, path, f32, sa)) return RL_EXIT_BADINPUT;
  int st = f32 ? rl32_cmd_sim(sa) : rl64_cmd_sim(sa);
  return rl_study_finish_csv(&w, st);
}

void rl_study_row(rl_csv *w, const rl_spec *s, const rl_point *q, double dt, const char *metric, double v, long step) {
  rl_csv_str(w, s->name);
  rl_csv_str(w, q->id);
  rl_csv_str(w, q->engine);
  rl_csv_str(w, q->f32 ? "f32" : "f64");
  rl_csv_num(w, dt);
  rl_csv_str(w, metric);
  rl_csv_num(w, v);
  rl_csv_int(w, step);
  rl_csv_int(w, q->index);
  rl_csv_end_row(w);
}

int rl_study_wants(const rl_spec *s, int m) { return s->metrics >> m & 1; }

int rl_spec_axis_find(const rl_spec *s, const char *key, int *line) {
  for (int a = 0; a < s->naxes; a++)
    if (!strcmp(s->axis[a].key, key)) {
      if (line) *line = s->axis[a].line;
      return a;
    }
  return -1;
}

int rl_in_list(const char *list, const char *item) {
  size_t l = strlen(item);
  for (const char *c = list; c; c = strchr(c, ','), c = c ? c + 1 : NULL)
    if (!strncmp(c, item, l) && (c[l] == 0 || c[l] == ',')) return 1;
  return 0;
}

int rl_study_ban_engines(const rl_spec *s, const char *banned, const char *allowed, char *err, int errlen) {
  int line = 0, e = rl_spec_axis_find(s, "engine", &line);
  for (int i = 0; e >= 0 && i < s->axis[e].nval; i++) {
    const char *v = s->axis[e].val[i];
    if (rl_in_list(banned, v)) {
      rl_snprintf(err, (size_t)errlen, "%s:%d: [sweep] engine: '%s' is not available for kind = %s (allowed: %s)",
                  s->path, line, v, s->kind->name, allowed);
      return -1;
    }
  }
  return 0;
}

int rl_numtable_read(const char *path, rl_numtable *t, char *err, int errlen) {
  return rl_numcsv_read(path, NULL, &t->nrow, &t->ncol, &t->v, err, errlen);
}

static int soft(const char *engine) { return !strcmp(engine, "newton") || !strcmp(engine, "cg"); }
int rl_study_restartable(const char *engine) { return soft(engine) || !strcmp(engine, "avbd"); }

void rl_study_states_at(const rl_traj *t, const long *row, int n, int nv, double *qpos, double *qvel) {
  for (int s = 0; s < n; s++) {
    for (int k = 0; k < t->nq; k++) qpos[(size_t)s * (size_t)t->nq + (size_t)k] = RL_QP(t, row[s], k);
    for (int k = 0; k < nv; k++) qvel[(size_t)s * (size_t)nv + (size_t)k] = RL_QP(t, row[s], t->nq + k);
  }
}

int rl_study_link(const char *from, const char *to, char *err, int errlen) {
  unlink(to);
  if (!link(from, to)) return 0;
  FILE *a = fopen(from, "rb"), *b = a ? fopen(to, "wb") : NULL;
  char buf[65536];
  size_t n;
  int bad = !a || !b;
  while (!bad && (n = fread(buf, 1, sizeof buf, a)) > 0) bad = fwrite(buf, 1, n, b) != n;
  if (a) fclose(a);
  if (b && fclose(b)) bad = 1;
  if (bad) {
    unlink(to);
    rl_snprintf(err, (size_t)errlen, "%s: cannot write from %s: %s", to, from, strerror(errno));
    return -1;
  }
  return 0;
}
