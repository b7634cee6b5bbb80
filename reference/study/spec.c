/* spec.c — the experiment-spec parser (inih) and the sweep expansion (see spec.h). */
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include "mj_load.h"
#include "spec.h"
#include "scale_scene.h"
#include "kinds.h"

const char *const rl_metric_names[RL_NMET] = {"final_qpos_err",
                                              "qpos_err_max",
                                              "penetration_max",
                                              "anchor_err_max",
                                              "energy_drift",
                                              "iterations_mean",
                                              "converged_frac",
                                              "order",
                                              "order_stderr",
                                              "order_final",
                                              "onestep_rel_max",
                                              "diverge_time_1e-06",
                                              "diverge_time_0.001",
                                              "signorini_max",
                                              "coulomb_max",
                                              "mdp_max",
                                              "ncp_max",
                                              "iters_to_1e-10_gap",
                                              "final_gap",
                                              "richardson_err",
                                              "order_ode",
                                              "order_ode_stderr",
                                              "lockstep_qpos_max",
                                              "lockstep_qvel_max",
                                              "lockstep_qvel_median",
                                              "free_diverge_time_1e-06",
                                              "free_qpos_err_max",
                                              "iterations_excess_max",
                                              "unconverged_where_mujoco_converged",
                                              "steps_per_s",
                                              "mujoco_steps_per_s",
                                              "time_ratio",
                                              "incline_accel_rel_err",
                                              "incline_creep",
                                              "freefall_err",
                                              "momentum_drift",
                                              "kinetic_energy_drift",
                                              "avbd_iters_to_1e-6_dist",
                                              "avbd_final_dist_m",
                                              "avbd_final_dist_rad",
                                              "avbd_false_stop_frac",
                                              "avbd_flagged_steps",
                                              "avbd_ref_unconverged",
                                              "avbd_own_false_stop_frac",
                                              "avbd_own_checked_steps",
                                              "avbd_own_ref_unconverged",
                                              "avbd_own_worst_ratio",
                                              "avbd_own_nonfinite_steps",
                                              "avbd_own_unconverged_steps",
                                              "verify_failed_rows_f64",
                                              "verify_failed_rows_f32",
                                              "verify_worst_ratio_f64",
                                              "verify_worst_ratio_f32",
                                              "traj_rel_err_max",
                                              "chain_exponent",
                                              "mujoco_chain_exponent",
                                              "scale_exponent_newton",
                                              "scale_exponent_cg",
                                              "sparse_dense_qacc_rel",
                                              "scale_nefc_max"};

_Static_assert(RL_NMET < 64, "rl_spec.metrics is a 64-bit mask");

const char *const rl_ref_names[RL_NREF] = {"mujoco_lockstep", "mujoco_free", "lapack_optimum", "dense_kkt",
                                           "gsl_ode",         "richardson",  "mujoco_timing",  "closed_form"};

int rl_spec_uses(const rl_spec *s, int ref) { return s->refs >> ref & 1; }

void rl_spec_refs_text(const rl_spec *s, char *out, size_t n) {
  out[0] = 0;
  for (int r = 0; r < RL_NREF; r++)
    if (rl_spec_uses(s, r))
      rl_snprintf(out + strlen(out), n - strlen(out), "%s%s", out[0] ? ", " : "", rl_ref_names[r]);
  if (!out[0]) rl_snprintf(out, n, "none");
}

/* the kind's references as "a, b" for messages */
static void refs_list(unsigned mask, char *out, size_t n) {
  out[0] = 0;
  for (int r = 0; r < RL_NREF; r++)
    if (mask >> r & 1) rl_snprintf(out + strlen(out), n - strlen(out), "%s%s", out[0] ? ", " : "", rl_ref_names[r]);
  if (!out[0]) rl_snprintf(out, n, "none");
}

int rl_snprintf(char *dst, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = vsnprintf(dst, n, fmt, ap);
  va_end(ap);
  return r;
}

int rl_metric_find(const char *name) {
  for (int k = 0; k < RL_NMET; k++)
    if (!strcmp(rl_metric_names[k], name)) return k;
  return -1;
}

static const char *metric_list =
    "final_qpos_err, qpos_err_max, penetration_max, anchor_err_max, energy_drift, iterations_mean, converged_frac, "
    "order, order_stderr, order_final, onestep_rel_max, diverge_time_1e-06, diverge_time_0.001, signorini_max, "
    "coulomb_max, mdp_max, ncp_max, iters_to_1e-10_gap, final_gap, richardson_err, order_ode, order_ode_stderr, "
    "lockstep_qpos_max, lockstep_qvel_max, lockstep_qvel_median, free_diverge_time_1e-06, free_qpos_err_max, "
    "iterations_excess_max, unconverged_where_mujoco_converged, "
    "steps_per_s, mujoco_steps_per_s, time_ratio, incline_accel_rel_err, incline_creep, freefall_err, momentum_drift, "
    "kinetic_energy_drift, avbd_iters_to_1e-6_dist, avbd_final_dist_m, avbd_final_dist_rad, avbd_false_stop_frac, avbd_flagged_steps, avbd_ref_unconverged, "
    "avbd_own_false_stop_frac, avbd_own_checked_steps, avbd_own_ref_unconverged, avbd_own_worst_ratio, "
    "avbd_own_nonfinite_steps, avbd_own_unconverged_steps, "
    "verify_failed_rows_f64, "
    "verify_failed_rows_f32, verify_worst_ratio_f64, verify_worst_ratio_f32, traj_rel_err_max, chain_exponent, "
    "mujoco_chain_exponent, scale_exponent_newton, scale_exponent_cg, sparse_dense_qacc_rel, scale_nefc_max";

/* The reader counts lines so that the handler knows where it is, and carries lines longer than inih's
 * own buffer (the system library's, INI_MAX_LINE: 200 characters): such a line reaches inih as
 * "KEY = \x01" and its value, prepared as inih prepares one (inline "; comment" cut, blanks trimmed), waits
 * in s->long_value for the handler.  A line over RL_SPEC_MAXLINE characters, a long key or section, and a
 * NUL byte (a binary file) end the parse with one line naming the line. */
typedef struct reader {
  FILE *f;
  int *line;
  rl_spec *s;
} reader;

#define LONG_VALUE "\x01"

/* inih's inline comment: ';' after a blank */
static void cut_inline_comment(char *v) {
  for (char *c = v; *c; c++)
    if (*c == ';' && c > v && isspace((unsigned char)c[-1])) {
      *c = 0;
      return;
    }
}

static char *trim(char *s);

/* stop the parse at the current line with MSG (the handler and load() report s->err) */
static char *reader_fail(reader *r, char *buf, const char *msg) {
  rl_spec *s = r->s;
  if (!s->err[0]) {
    rl_snprintf(s->err, sizeof s->err, "%s:%d: %s", s->path, *r->line, msg);
    s->err_line = *r->line;
  }
  free(buf);
  return NULL;
}

static char *read_line(char *str, int num, void *stream) {
  reader *r = stream;
  rl_spec *s = r->s;
  char *buf = NULL;
  size_t cap = 0;
  ssize_t n = getline(&buf, &cap, r->f);
  if (n < 0 || s->err[0]) {
    free(buf);
    return NULL;
  }
  ++*r->line;
  if (memchr(buf, 0, (size_t)n)) return reader_fail(r, buf, "a NUL byte (not a text file)");
  if (n > RL_SPEC_MAXLINE) {
    char msg[96];
    rl_snprintf(msg, sizeof msg, "line too long (%zd characters; at most %d)", n, RL_SPEC_MAXLINE);
    return reader_fail(r, buf, msg);
  }
  const char *start = buf;
  while (isspace((unsigned char)*start)) start++;
  s->continued = start > buf && *start && *start != ';' && *start != '#';
  if (n < num) {
    memcpy(str, buf, (size_t)n + 1);
    free(buf);
    return str;
  }
  /* a long line: a comment is dropped, a continuation or KEY = VALUE carries its value aside */
  if (*start == ';' || *start == '#') {
    free(buf);
    return strcpy(str, ";\n");
  }
  char *value;
  if (s->continued) {
    rl_snprintf(str, (size_t)num, " " LONG_VALUE "\n");
    value = (char *)start;
  } else {
    char *eq = strpbrk(buf, "=:");
    if (*start == '[' || !eq || eq - buf > num - 8) return reader_fail(r, buf, "line too long for a section or key");
    rl_snprintf(str, (size_t)num, "%.*s= " LONG_VALUE "\n", (int)(eq - buf), buf);
    value = eq + 1;
  }
  cut_inline_comment(value);
  free(s->long_value);
  s->long_value = strdup(trim(value));
  free(buf);
  return s->long_value ? str : reader_fail(r, NULL, "out of memory");
}

static char *trim(char *s) {
  while (isspace((unsigned char)*s)) s++;
  char *e = s + strlen(s);
  while (e > s && isspace((unsigned char)e[-1])) *--e = 0;
  return s;
}

/* file-name-safe copy: '/' and odd characters become '_' */
static void safe(char *dst, size_t n, const char *src) {
  rl_snprintf(dst, n, "%s", src);
  for (char *c = dst; *c; c++)
    if (!isalnum((unsigned char)*c) && *c != '.' && *c != '-' && *c != '_' && *c != '=' && *c != '+') *c = '_';
}

/* a scene's name in point ids and result files: the file name without folder and ".xml" */
static void scene_name(char *dst, size_t n, const char *scene) {
  const char *base = strrchr(scene, '/');
  rl_snprintf(dst, n, "%s", base ? base + 1 : scene);
  char *dot = strstr(dst, ".xml");
  if (dot) *dot = 0;
}

/* two scenes whose names are the same once file-name-safe would give their points one id (and one set of
   result files); 0, or −1 with the line naming both */
static int scenes_distinct(const rl_spec *s, char *err, int errlen) {
  for (int i = 0; i < s->nscene; i++)
    for (int j = 0; j < i; j++) {
      char a[128], b[128], sa[128], sb[128];
      scene_name(a, sizeof a, s->scene[i]);
      scene_name(b, sizeof b, s->scene[j]);
      safe(sa, sizeof sa, a);
      safe(sb, sizeof sb, b);
      if (!strcmp(sa, sb)) {
        rl_snprintf(err, (size_t)errlen,
                    "%s:%d: scenes '%s' and '%s' have the same name '%s' (their points would share ids and files)",
                    s->path, s->scene_line, s->scene[j], s->scene[i], sa);
        return -1;
      }
    }
  return 0;
}

/* the first error of a spec is the one reported: a later one leaves s->err as it is */
#define FAIL(...)                                                               \
  do {                                                                          \
    if (!s->err[0]) {                                                           \
      int n_ = rl_snprintf(s->err, sizeof s->err, "%s:%d: ", s->path, s->line); \
      rl_snprintf(s->err + n_, sizeof s->err - (size_t)n_, __VA_ARGS__);        \
      s->err_line = s->line;                                                    \
    }                                                                           \
    return 0;                                                                   \
  } while (0)

/* split a comma-separated list into malloc'ed trimmed items; −1 on an empty item, −2 on more than MAX
   items (nothing is left allocated on either: *n is 0) */
static int split(const char *value, char **out, int max, int *n) {
  char *buf = strdup(value);
  *n = 0;
  if (!buf) return -1;
  int r = 0;
  char *p = buf;
  for (;;) {
    char *c = strchr(p, ',');
    if (c) *c = 0;
    char *t = trim(p);
    if (!*t) r = -1;
    else if (*n >= max) r = -2;
    else if (!(out[*n] = strdup(t))) r = -1;
    else ++*n;
    if (r || !c) break;
    p = c + 1;
  }
  free(buf);
  if (r) {
    for (int i = 0; i < *n; i++) free(out[i]);
    *n = 0;
  }
  return r;
}

static int parse_num(const char *v, double *x) { return !rl_parse_real(v, x); }

/* VALUE as row NUM of the number table (options.h): 0, or −1 with s->err "PATH:LINE: [experiment] KEY: …" */
static int spec_number(rl_spec *s, int num, const char *key, const char *value, double *x) {
  char label[1200], err[2048];
  rl_snprintf(label, sizeof label, "%s:%d: [experiment] %s", s->path, s->line, key);
  if (!rl_number_parse(num, label, value, x, err, sizeof err)) return 0;
  if (!s->err[0]) {
    rl_snprintf(s->err, sizeof s->err, "%s", err);
    s->err_line = s->line;
  }
  return -1;
}

/* [experiment] KEY given before (scene excepted: its list goes on): 1 with s->err, else 0 and KEY noted */
static int given_twice(rl_spec *s, const char *key) {
  if (!strcmp(key, "scene")) return 0;
  for (int i = 0; i < s->nseen; i++)
    if (!strcmp(s->seen[i], key)) {
      if (!s->err[0]) {
        rl_snprintf(s->err, sizeof s->err, "%s:%d: [experiment] %s given twice (first on line %d)", s->path, s->line,
                    key, s->seen_line[i]);
        s->err_line = s->line;
      }
      return 1;
    }
  if (s->nseen < 16 && strlen(key) < sizeof s->seen[0]) {
    rl_snprintf(s->seen[s->nseen], sizeof s->seen[0], "%s", key);
    s->seen_line[s->nseen++] = s->line;
  }
  return 0;
}

static int handler(void *user, const char *section, const char *name, const char *value) {
  rl_spec *s = user;
  if (s->err[0]) return 0; /* the first error stands */
  if (!strcmp(value, LONG_VALUE) && s->long_value) value = s->long_value;
  if (strcmp(section, "experiment") && strcmp(section, "sweep") && strcmp(section, "reference") &&
      strcmp(section, "metrics") && strcmp(section, "check"))
    FAIL("unknown section [%s] (allowed: experiment, sweep, reference, metrics, check)", section);
  if (!strcmp(section, "reference")) {
    if (strcmp(name, "use")) FAIL("[reference] unknown key '%s' (allowed: use)", name);
    if (s->refs_line) FAIL("[reference] use given twice (first on line %d)", s->refs_line);
    char *items[RL_NREF + 1];
    int n, r = split(value, items, RL_NREF + 1, &n), bad = -1;
    s->refs = 0;
    for (int i = 0; i < n && bad < 0; i++) {
      int k = 0;
      while (k < RL_NREF && strcmp(items[i], rl_ref_names[k])) k++;
      if (k == RL_NREF) bad = i;
      else s->refs |= 1u << k;
    }
    if (bad >= 0) {
      rl_snprintf(s->err, sizeof s->err,
                  "%s:%d: [reference] use: unknown reference '%s' (allowed: mujoco_lockstep, "
                  "mujoco_free, lapack_optimum, dense_kkt, gsl_ode, richardson, mujoco_timing, closed_form)",
                  s->path, s->line, items[bad]);
      for (int j = 0; j < n; j++) free(items[j]);
      return 0;
    }
    for (int j = 0; j < n; j++) free(items[j]);
    if (r || !n) FAIL("[reference] use = '%s': expected a comma-separated list of references", value);
    s->refs_line = s->line;
    return 1;
  }
  if (!strcmp(section, "experiment")) {
    double x;
    if (s->continued && strcmp(name, "scene"))
      FAIL("[experiment] %s: an indented line continues it (only a scene list goes on)", name);
    if (given_twice(s, name)) return 0;
    if (!strcmp(name, "name")) {
      if (!*value || strlen(value) >= sizeof s->name) FAIL("name '%s': expected 1-127 characters", value);
      for (const char *c = value; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-')
          FAIL("name '%s': allowed characters are letters, digits, _ and -", value);
      rl_snprintf(s->name, sizeof s->name, "%s", value);
    } else if (!strcmp(name, "scene")) {
      char *items[RL_SPEC_MAXSCENES];
      int n, r = split(value, items, RL_SPEC_MAXSCENES, &n);
      if (r == -2) FAIL("scene: more than %d scenes", RL_SPEC_MAXSCENES);
      if (r || !n) FAIL("scene '%s': expected a comma-separated list of MJCF files", value);
      char dir[1024];
      rl_snprintf(dir, sizeof dir, "%s", s->path);
      char *slash = strrchr(dir, '/');
      if (slash) slash[1] = 0;
      else dir[0] = 0;
      for (int i = 0; i < n && !s->no_files; i++) {
        char p[2048];
        if (!strncmp(items[i], "chain:", 6) || rl_scale_is_scene(items[i]))
          continue; /* a synthetic chain (kind = bench) or scale scene (kind = scale), not a file */
        rl_snprintf(p, sizeof p, "%s%s", items[i][0] == '/' ? "" : dir, items[i]);
        FILE *f = fopen(p, "r");
        if (!f) {
          rl_snprintf(s->err, sizeof s->err, "%s:%d: scene '%s': cannot read %s: %s", s->path, s->line, items[i], p,
                      strerror(errno));
          for (int j = 0; j < n; j++) free(items[j]);
          return 0;
        }
        fclose(f);
        free(items[i]);
        items[i] = strdup(p);
      }
      /* a scene twice would give two points one id (one trajectory file) */
      for (int i = 0; i < n; i++)
        for (int j = 0; j < s->nscene + i; j++)
          if (!strcmp(items[i], j < s->nscene ? s->scene[j] : items[j - s->nscene])) {
            char dup[1200];
            rl_snprintf(dup, sizeof dup, "%s", items[i]);
            for (int k = 0; k < n; k++) free(items[k]);
            FAIL("scene '%s' given twice", dup);
          }
      /* scene given again (or continued on an indented line): the list goes on */
      if (s->nscene + n > RL_SPEC_MAXSCENES) {
        for (int j = 0; j < n; j++) free(items[j]);
        FAIL("scene: more than %d scenes", RL_SPEC_MAXSCENES);
      }
      memcpy(s->scene + s->nscene, items, sizeof(char *) * (size_t)n);
      s->nscene += n;
      s->scene_line = s->line; /* the latest scene line (messages about a scene name it) */
    } else if (!strcmp(name, "steps")) {
      if (spec_number(s, RL_NUM_steps, name, value, &x)) return 0;
      s->steps = (long)x;
      s->duration = 0;
    } else if (!strcmp(name, "duration")) {
      if (spec_number(s, RL_NUM_duration, name, value, &x)) return 0;
      s->duration = x;
      s->duration_line = s->line;
      s->steps = -1;
    } else if (!strcmp(name, "seed")) {
      if (spec_number(s, RL_NUM_seed, name, value, &x)) return 0;
      s->seed = (unsigned long)x;
    } else if (!strcmp(name, "description")) {
      rl_snprintf(s->description, sizeof s->description, "%s", value);
    } else if (!strcmp(name, "kind")) {
      const rl_study_kind *k = rl_study_kind_find(value);
      char all[512];
      rl_study_kind_list(all, sizeof all);
      if (!k) FAIL("kind '%s': bad value (allowed: %s)", value, all);
      s->kind = k;
      s->kind_line = s->line;
    } else if (!strcmp(name, "levels")) {
      if (spec_number(s, RL_NUM_levels, name, value, &x)) return 0;
      s->levels = (int)x;
      s->levels_line = s->line;
    } else if (!strcmp(name, "states")) {
      if (spec_number(s, RL_NUM_conv_states, name, value, &x)) return 0;
      s->states = (int)x;
      s->states_line = s->line;
    } else if (!strcmp(name, "rows_only")) {
      int r = split(value, s->rows_only, RL_SPEC_MAXSCENES, &s->nrows_only);
      if (r || !s->nrows_only) FAIL("rows_only '%s': expected a comma-separated list of scene names", value);
      s->rows_only_line = s->line;
    } else if (!strcmp(name, "stages") || !strcmp(name, "engines")) {
      static const char *const stages =
          "kinematics,com,inertia,bias,passive,actuation,smooth,step_smooth,collision,step";
      static const char *const engines =
          "newton,cg,avbd,newton_dense,newton_skyline,newton_sparse,newton_auto,mujoco"; /* the last five: scale */
      int st = !strcmp(name, "stages");
      const char *allowed = st ? stages : engines;
      char *items[32];
      int n, r = split(value, items, 32, &n), bad = -1;
      for (int i = 0; i < n && bad < 0; i++)
        if (!rl_in_list(allowed, items[i])) bad = i;
      char bv[128] = "";
      if (bad >= 0) rl_snprintf(bv, sizeof bv, "%s", items[bad]);
      for (int j = 0; j < n; j++) free(items[j]);
      if (bad >= 0) FAIL("%s: bad value '%s' (allowed: %s)", name, bv, allowed);
      if (r || !n || strlen(value) >= sizeof s->stages)
        FAIL("%s '%s': expected a comma-separated list of: %s", name, value, allowed);
      char *dst = st ? s->stages : s->engines;
      size_t k = 0;
      for (const char *c = value; *c; c++)
        if (!isspace((unsigned char)*c)) dst[k++] = *c;
      dst[k] = 0;
      *(st ? &s->stages_line : &s->engines_line) = s->line;
    } else if (!strcmp(name, "reps")) {
      if (spec_number(s, RL_NUM_reps, name, value, &x)) return 0;
      s->reps = (int)x;
      s->reps_line = s->line;
    } else
      FAIL("[experiment] unknown key '%s' (allowed: name, scene, steps, duration, seed, description, kind, levels, "
           "states, rows_only, stages, engines, reps)",
           name);
    return 1;
  }
  if (!strcmp(section, "sweep")) {
    for (int a = 0; a < s->naxes; a++)
      if (!strcmp(s->axis[a].key, name)) FAIL("[sweep] '%s' given twice (first on line %d)", name, s->axis[a].line);
    if (s->naxes >= RL_SPEC_MAXAXES) FAIL("[sweep] more than %d axes", RL_SPEC_MAXAXES);
    if (strlen(name) >= sizeof s->axis[0].key) FAIL("[sweep] key '%s' too long", name);
    rl_spec_axis *ax = &s->axis[s->naxes];
    int r = split(value, ax->val, RL_SPEC_MAXVALS, &ax->nval);
    if (r == -2) FAIL("[sweep] %s: more than %d values", name, RL_SPEC_MAXVALS);
    if (r || !ax->nval) FAIL("[sweep] %s = '%s': expected a comma-separated list of values", name, value);
    rl_snprintf(ax->key, sizeof ax->key, "%s", name);
    ax->line = s->line;
    s->naxes++;
    for (int i = 0; i < ax->nval; i++) /* a value twice: two points with one id */
      for (int j = 0; j < i; j++)
        if (!strcmp(ax->val[i], ax->val[j])) FAIL("[sweep] %s: value '%s' given twice", name, ax->val[i]);
    for (int i = 0; i < ax->nval; i++) {
      const char *v = ax->val[i];
      if (!strcmp(name, "engine")) {
        if (strcmp(v, "newton") && strcmp(v, "cg") && strcmp(v, "avbd") && strcmp(v, "mujoco"))
          FAIL("[sweep] engine: bad value '%s' (allowed: newton, cg, avbd, mujoco)", v);
      } else if (!strcmp(name, "precision")) {
        if (strcmp(v, "f64") && strcmp(v, "f32")) FAIL("[sweep] precision: bad value '%s' (allowed: f64, f32)", v);
      } else if (!strcmp(name, "dt")) {
        double x;
        char label[64], e2[512];
        rl_snprintf(label, sizeof label, "[sweep] dt");
        if (rl_number_parse(RL_NUM_dt, label, v, &x, e2, sizeof e2)) FAIL("%s", e2);
      } else if (!strcmp(name, "device")) {
        if (strcmp(v, "cpu") && strcmp(v, "cuda")) FAIL("[sweep] device: bad value '%s' (allowed: cpu, cuda)", v);
      } else if (!strcmp(name, "timestep")) FAIL("[sweep] use 'dt' for the time step, not '%s'", name);
      /* the other keys are model/solver options, checked against a loaded scene after parsing */
    }
    return 1;
  }
  if (!strcmp(section, "metrics")) {
    if (strcmp(name, "names")) FAIL("[metrics] unknown key '%s' (allowed: names)", name);
    if (s->metrics_line) FAIL("[metrics] names given twice (first on line %d)", s->metrics_line);
    s->metrics_line = s->line;
    char *items[RL_NMET + 1];
    int n, r = split(value, items, RL_NMET + 1, &n);
    s->metrics = 0;
    for (int i = 0; i < n; i++) {
      int k = rl_metric_find(items[i]);
      if (k < 0) {
        rl_snprintf(s->err, sizeof s->err, "%s:%d: [metrics] unknown metric '%s' (allowed: %s)", s->path, s->line,
                    items[i], metric_list);
        for (int j = 0; j < n; j++) free(items[j]);
        return 0;
      }
      s->metrics |= 1ull << k;
    }
    for (int j = 0; j < n; j++) free(items[j]);
    if (r || !n) FAIL("[metrics] names = '%s': expected a comma-separated list of: %s", value, metric_list);
    return 1;
  }
  /* [check] METRIC = KIND TOL */
  int k = -1;
  if (strcmp(name, "default") && (k = rl_metric_find(name)) < 0)
    FAIL("[check] unknown metric '%s' (allowed: default, %s)", name, metric_list);
  if (s->nband >= RL_SPEC_MAXBANDS) FAIL("[check] too many bands");
  char kind[32], tol[64], extra[8];
  int n = sscanf(value, "%31s %63s %7s", kind, tol, extra);
  double x;
  rl_band *b = &s->band[s->nband];
  if (n != 2 || !parse_num(tol, &x) || x < 0)
    FAIL("[check] %s = '%s': expected 'abs T', 'rel T', 'ratio R' or 'max T' with T >= 0, R >= 1", name, value);
  if (!strcmp(kind, "abs")) b->kind = RL_BAND_ABS;
  else if (!strcmp(kind, "rel")) b->kind = RL_BAND_REL;
  else if (!strcmp(kind, "ratio")) b->kind = RL_BAND_RATIO;
  else if (!strcmp(kind, "max")) b->kind = RL_BAND_MAX;
  else FAIL("[check] %s: bad band kind '%s' (allowed: abs, rel, ratio, max)", name, kind);
  if (b->kind == RL_BAND_RATIO && x < 1) FAIL("[check] %s: ratio %s is below 1 (allowed: R >= 1)", name, tol);
  for (int i = 0; i < s->nband; i++)
    if (s->band[i].metric == k) FAIL("[check] '%s' given twice (first on line %d)", name, s->band[i].line);
  b->metric = k;
  b->tol = x;
  b->line = s->line;
  s->nband++;
  return 1;
}

const rl_band *rl_spec_band(const rl_spec *s, int metric) {
  const rl_band *def = NULL;
  for (int i = 0; i < s->nband; i++) {
    if (s->band[i].metric == metric) return &s->band[i];
    if (s->band[i].metric < 0) def = &s->band[i];
  }
  return def;
}

void rl_spec_free(rl_spec *s) {
  for (int i = 0; i < s->nscene; i++) free(s->scene[i]);
  for (int i = 0; i < s->nrows_only; i++) free(s->rows_only[i]);
  for (int a = 0; a < s->naxes; a++)
    for (int i = 0; i < s->axis[a].nval; i++) free(s->axis[a].val[i]);
  free(s->text);
  memset(s, 0, sizeof *s);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char *t = malloc(cap);
  size_t r;
  while (t && (r = fread(t + n, 1, cap - n - 1, f)) > 0) {
    n += r;
    if (n + 1 == cap) t = realloc(t, cap *= 2);
  }
  fclose(f);
  if (t) t[n] = 0;
  return t;
}

/* the kinds (table rows) that take the [experiment] key KEY (RL_KEY_*) or have flag FLAG, as "a, b" */
static void kinds_with(unsigned key, unsigned flag, char *out, size_t n) {
  out[0] = 0;
  for (int k = 0; k < rl_study_nkinds; k++)
    if ((rl_study_kinds[k]->keys & key) || (rl_study_kinds[k]->flags & flag))
      rl_snprintf(out + strlen(out), n - strlen(out), "%s%s", out[0] ? ", " : "", rl_study_kinds[k]->name);
}

/* a kind's own [experiment] key given in a spec of another kind; 0 or −1 with err */
static int foreign_key(const rl_spec *s, unsigned key, const char *name, int line, char *err, int errlen) {
  if (!line || (s->kind->keys & key)) return 0;
  char who[256];
  kinds_with(key, 0, who, sizeof who);
  rl_snprintf(err, (size_t)errlen, "%s:%d: [experiment] %s is for kind = %s only (kind is %s)", s->path, line, name,
              who, s->kind->name);
  return -1;
}

/* what every kind shares: its references ([reference] use: only the kind's own, the required ones present,
   default all of them), its own [experiment] keys and the device axis; then the kind's own checks (its row) */
static int kind_check(rl_spec *s, char *err, int errlen) {
  const rl_study_kind *k = s->kind;
  char have[256];
  refs_list(k->refs, have, sizeof have);
  if (!s->refs_line) s->refs = k->refs;
  for (int r = 0; r < RL_NREF; r++) {
    if (rl_spec_uses(s, r) && !(k->refs >> r & 1)) {
      rl_snprintf(err, (size_t)errlen, "%s:%d: [reference] use: '%s' is not a reference of kind = %s (allowed: %s)",
                  s->path, s->refs_line, rl_ref_names[r], k->name, have);
      return -1;
    }
  }
  for (int r = 0; r < RL_NREF; r++) {
    if ((k->refs_required >> r & 1) && !rl_spec_uses(s, r)) {
      rl_snprintf(err, (size_t)errlen, "%s:%d: [reference] use: kind = %s needs '%s'", s->path, s->refs_line, k->name,
                  rl_ref_names[r]);
      return -1;
    }
  }
  int line = 0;
  if (rl_spec_axis_find(s, "device", &line) >= 0 && !(k->flags & RL_KIND_DEVICE_ID)) {
    char who[256];
    kinds_with(0, RL_KIND_DEVICE_ID, who, sizeof who);
    rl_snprintf(err, (size_t)errlen, "%s:%d: [sweep] device is for kind = %s only (kind is %s)", s->path, line, who,
                k->name);
    return -1;
  }
  if (foreign_key(s, RL_KEY_STATES, "states", s->states_line, err, errlen) ||
      foreign_key(s, RL_KEY_LEVELS, "levels", s->levels_line, err, errlen) ||
      foreign_key(s, RL_KEY_ROWS_ONLY, "rows_only", s->rows_only_line, err, errlen) ||
      foreign_key(s, RL_KEY_STAGES, "stages", s->stages_line, err, errlen) ||
      foreign_key(s, RL_KEY_ENGINES, "engines", s->engines_line, err, errlen) ||
      foreign_key(s, RL_KEY_REPS, "reps", s->reps_line, err, errlen))
    return -1;
  for (int i = 0; i < s->nscene; i++)
    if (!strncmp(s->scene[i], "chain:", 6) && !(k->flags & RL_KIND_CHAIN_SCENES)) {
      char who[256];
      kinds_with(0, RL_KIND_CHAIN_SCENES, who, sizeof who);
      rl_snprintf(err, (size_t)errlen, "%s:%d: scene '%s': synthetic chains are for kind = %s only (kind is %s)",
                  s->path, s->scene_line, s->scene[i], who, k->name);
      return -1;
    }
  for (int i = 0; i < s->nscene; i++)
    if (rl_scale_is_scene(s->scene[i]) && !(k->flags & RL_KIND_SCALE_SCENES)) {
      rl_snprintf(err, (size_t)errlen,
                  "%s:%d: scene '%s': synthetic scale scenes are for kind = scale only (kind is %s)", s->path,
                  s->scene_line, s->scene[i], k->name);
      return -1;
    }
  return k->check ? k->check(s, err, errlen) : 0;
}

/* duration / dt within the cap of a run's steps for every point: the dt axis when there is one (it sets
   every point's step), else each scene's own time step.  0, or −1 with err naming the duration's line */
static int duration_steps_check(const rl_spec *s, char *err, int errlen) {
  if (!(s->duration > 0)) return 0;
  int line = 0, a = rl_spec_axis_find(s, "dt", &line);
  for (int i = 0; i < (a >= 0 ? s->axis[a].nval : s->nscene); i++) {
    double dt;
    if (a >= 0) dt = strtod(s->axis[a].val[i], NULL);
    else {
      if (!strncmp(s->scene[i], "chain:", 6)) continue;
      char e2[1024];
      mjModel *m = rl_mj_load(s->scene[i], e2, sizeof e2);
      if (!m) {
        rl_snprintf(err, (size_t)errlen, "%s:%d: %s", s->path, s->scene_line, e2);
        return -1;
      }
      dt = m->opt.timestep;
      mj_deleteModel(m);
    }
    if (!(s->duration / dt <= (double)RL_MAX_STEPS)) {
      rl_snprintf(err, (size_t)errlen, "%s:%d: duration %g s at time step %g s is %g steps (allowed: at most %ld)",
                  s->path, s->duration_line, s->duration, dt, s->duration / dt, RL_MAX_STEPS);
      return -1;
    }
  }
  return 0;
}

static int load(const char *path, rl_spec *s, int no_files, char *err, int errlen) {
  memset(s, 0, sizeof *s);
  s->no_files = no_files;
  rl_snprintf(s->path, sizeof s->path, "%s", path);
  s->steps = -1;
  s->seed = 1;
  s->metrics = (1ull << RL_NMET) - 1;
  s->kind = rl_study_kinds[0]; /* trajectory */
  struct stat sb;
  if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
    rl_snprintf(err, (size_t)errlen, "%s: is %s, not an experiment spec (an .ini file)", path,
                S_ISDIR(sb.st_mode) ? "a directory" : "not a regular file");
    return RL_EXIT_BADINPUT;
  }
  FILE *f = fopen(path, "r");
  if (!f) {
    rl_snprintf(err, (size_t)errlen, "%s: cannot read: %s", path, strerror(errno));
    return RL_EXIT_BADINPUT;
  }
  reader rd = {f, &s->line, s};
  int r = ini_parse_stream(read_line, &rd, handler, s);
  int read_err = ferror(f);
  fclose(f);
  free(s->long_value);
  s->long_value = NULL;
  if (r || s->err[0] || read_err) {
    /* the first error of the file: a syntax error (inih's line r) before the handler's or the reader's */
    if (r > 0 && (!s->err[0] || r < s->err_line))
      rl_snprintf(err, (size_t)errlen, "%s:%d: syntax error (expected [section] or key = value)", path, r);
    else if (s->err[0]) rl_snprintf(err, (size_t)errlen, "%s", s->err);
    else rl_snprintf(err, (size_t)errlen, "%s: cannot read: %s", path, read_err ? "read error" : "out of memory");
    rl_spec_free(s);
    return RL_EXIT_BADINPUT;
  }
  const char *miss = !s->name[0]                                                                   ? "name"
                     : !s->nscene                                                                  ? "scene"
                     : s->steps < 0 && !(s->duration > 0) && !(s->kind->flags & RL_KIND_NO_LENGTH) ? "steps or duration"
                                                                                                   : NULL;
  if (miss) {
    rl_snprintf(err, (size_t)errlen, "%s: [experiment] is missing '%s'", path, miss);
    rl_spec_free(s);
    return RL_EXIT_BADINPUT;
  }
  if (scenes_distinct(s, err, errlen) || kind_check(s, err, errlen)) {
    rl_spec_free(s);
    return RL_EXIT_BADINPUT;
  }
  /* the kind's checks of each scene (e.g. analytic: the closed-form check the scene declares) */
  for (int i = 0; s->kind->check_scene && !no_files && i < s->nscene; i++) {
    char e2[1024];
    if (s->kind->check_scene(s, s->scene[i], e2, sizeof e2)) {
      rl_snprintf(err, (size_t)errlen, "%s:%d: %s", path, s->scene_line, e2);
      rl_spec_free(s);
      return RL_EXIT_BADINPUT;
    }
  }
  /* option axes: apply every value to the first scene, as `--opt` would */
  int nopt = 0;
  for (int a = 0; a < s->naxes; a++)
    nopt += strcmp(s->axis[a].key, "engine") && strcmp(s->axis[a].key, "precision") && strcmp(s->axis[a].key, "dt") &&
            strcmp(s->axis[a].key, "device");
  if (nopt && !no_files) {
    char e2[1024];
    mjModel *m = rl_mj_load(s->scene[0], e2, sizeof e2);
    if (!m) {
      rl_snprintf(err, (size_t)errlen, "%s:%d: %s", path, s->scene_line, e2);
      rl_spec_free(s);
      return RL_EXIT_BADINPUT;
    }
    for (int a = 0; a < s->naxes; a++) {
      const rl_spec_axis *ax = &s->axis[a];
      if (!strcmp(ax->key, "engine") || !strcmp(ax->key, "precision") || !strcmp(ax->key, "dt") ||
          !strcmp(ax->key, "device"))
        continue;
      for (int i = 0; i < ax->nval; i++) {
        char kv[512];
        rl_snprintf(kv, sizeof kv, "%s=%s", ax->key, ax->val[i]);
        if (rl_mj_apply_opt(m, kv, e2, sizeof e2)) {
          const char *msg = !strncmp(e2, "--opt: ", 7) ? e2 + 7 : !strncmp(e2, "--opt ", 6) ? e2 + 6 : e2;
          rl_snprintf(err, (size_t)errlen, "%s:%d: [sweep] %s%s", path, ax->line, msg,
                      !strncmp(msg, "unknown key", 11) ? " or engine, precision, dt, device" : "");
          mj_deleteModel(m);
          rl_spec_free(s);
          return RL_EXIT_BADINPUT;
        }
      }
    }
    mj_deleteModel(m);
  }
  if (!no_files && duration_steps_check(s, err, errlen)) {
    rl_spec_free(s);
    return RL_EXIT_BADINPUT;
  }
  s->text = slurp(path);
  if (!s->text) s->text = strdup("");
  return 0;
}

int rl_spec_load(const char *path, rl_spec *s, char *err, int errlen) { return load(path, s, 0, err, errlen); }
int rl_spec_load_text_only(const char *path, rl_spec *s, char *err, int errlen) {
  return load(path, s, 1, err, errlen);
}

static void append_id(char *id, size_t n, const char *part) {
  size_t l = strlen(id);
  rl_snprintf(id + l, n - l, "%s%s", l ? "." : "", part);
}

/* the key a point's reference is matched by: scene (the spec's entry), dt as written, options in order */
static int ref_key_cmp(const rl_point *a, const rl_point *b) {
  if (a->scene != b->scene) return (uintptr_t)a->scene < (uintptr_t)b->scene ? -1 : 1;
  int c = strcmp(a->dt_text, b->dt_text);
  if (c) return c;
  if (a->nopts != b->nopts) return a->nopts < b->nopts ? -1 : 1;
  for (int k = 0; k < a->nopts; k++)
    if ((c = strcmp(a->opts[k], b->opts[k]))) return c;
  return 0;
}
/* by key, then by index (the first of equal keys first) */
static int ref_order(const void *x, const void *y) {
  const rl_point *a = *(const rl_point *const *)x, *b = *(const rl_point *const *)y;
  int c = ref_key_cmp(a, b);
  return c ? c : (a->index > b->index) - (a->index < b->index);
}

int rl_spec_expand(const rl_spec *s, rl_point **pts, char *err, int errlen) {
  /* the product of the axis lengths, checked before each multiplication (it cannot wrap) */
  long total = s->nscene;
  double all = s->nscene;
  for (int a = 0; a < s->naxes; a++) all *= s->axis[a].nval;
  for (int a = 0; a < s->naxes && total <= RL_SPEC_MAXPOINTS; a++)
    total = total > RL_SPEC_MAXPOINTS / s->axis[a].nval ? RL_SPEC_MAXPOINTS + 1 : total * s->axis[a].nval;
  if (total > RL_SPEC_MAXPOINTS || total < 1) {
    rl_snprintf(err, (size_t)errlen, "%s: the sweep has %.0f points (allowed: 1 to %d)", s->path, all,
                RL_SPEC_MAXPOINTS);
    return -1;
  }
  rl_point *p = calloc((size_t)total, sizeof *p);
  if (!p) {
    rl_snprintf(err, (size_t)errlen, "%s: out of memory for %ld points", s->path, total);
    return -1;
  }
  int n = 0, idx[RL_SPEC_MAXAXES + 1] = {0};
  for (long c = 0; c < total; c++) {
    /* mixed-radix counter: scene outermost, last axis fastest */
    long r = c;
    for (int a = s->naxes - 1; a >= 0; a--) {
      idx[a + 1] = (int)(r % s->axis[a].nval);
      r /= s->axis[a].nval;
    }
    idx[0] = (int)r;
    rl_point *q = &p[n];
    memset(q, 0, sizeof *q);
    q->scene = s->scene[idx[0]];
    scene_name(q->scene_name, sizeof q->scene_name, q->scene);
    q->engine = "newton";
    q->dt_text = "";
    q->device = "cpu";
    for (int a = 0; a < s->naxes; a++) {
      const char *k = s->axis[a].key, *v = s->axis[a].val[idx[a + 1]];
      if (!strcmp(k, "engine")) q->engine = v;
      else if (!strcmp(k, "precision")) q->f32 = !strcmp(v, "f32");
      else if (!strcmp(k, "dt")) {
        q->dt = strtod(v, NULL);
        q->dt_text = v;
      } else if (!strcmp(k, "device")) q->device = v;
      else if (q->nopts < RL_MAX_OPTS) {
        size_t l = strlen(k) + strlen(v) + 2;
        q->opts[q->nopts] = malloc(l);
        rl_snprintf(q->opts[q->nopts++], l, "%s=%s", k, v);
      }
    }
    if (!strcmp(q->engine, "mujoco") && q->f32) {
      for (int i = 0; i < q->nopts; i++) free(q->opts[i]);
      continue;
    }
    char part[256];
    q->id[0] = 0;
    safe(part, sizeof part, q->scene_name);
    append_id(q->id, sizeof q->id, part);
    append_id(q->id, sizeof q->id, q->engine);
    append_id(q->id, sizeof q->id, q->f32 ? "f32" : "f64");
    if (q->dt_text[0]) {
      char dtp[96];
      rl_snprintf(dtp, sizeof dtp, "dt%s", q->dt_text);
      safe(part, sizeof part, dtp);
      append_id(q->id, sizeof q->id, part);
    }
    if (s->kind->flags & RL_KIND_DEVICE_ID) append_id(q->id, sizeof q->id, q->device);
    for (int i = 0; i < q->nopts; i++) {
      safe(part, sizeof part, q->opts[i]);
      append_id(q->id, sizeof q->id, part);
    }
    q->index = n++;
  }
  /* the reference of each point: the first mujoco point with the same scene, dt and options, found by binary
     search among the mujoco points sorted by that key (n log n: a sweep of 100 000 points takes no time) */
  const rl_point **mj = malloc(sizeof *mj * ((size_t)n + 1));
  if (!mj) {
    rl_spec_free_points(p, n);
    rl_snprintf(err, (size_t)errlen, "%s: out of memory for %d points", s->path, n);
    return -1;
  }
  int nmj = 0;
  for (int i = 0; i < n; i++)
    if (!strcmp(p[i].engine, "mujoco")) mj[nmj++] = &p[i];
  qsort(mj, (size_t)nmj, sizeof *mj, ref_order);
  for (int i = 0; i < n; i++) {
    int lo = 0, hi = nmj; /* the first mujoco point whose key is not below p[i]'s */
    while (lo < hi) {
      int mid = lo + (hi - lo) / 2;
      if (ref_key_cmp(mj[mid], &p[i]) < 0) lo = mid + 1;
      else hi = mid;
    }
    p[i].ref = lo < nmj && !ref_key_cmp(mj[lo], &p[i]) ? mj[lo]->index : -1;
  }
  free(mj);
  *pts = p;
  return n;
}

void rl_spec_free_points(rl_point *pts, int n) {
  for (int i = 0; i < n; i++)
    for (int k = 0; k < pts[i].nopts; k++) free(pts[i].opts[k]);
  free(pts);
}
