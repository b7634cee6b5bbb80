/* kinds.h — the table of study kinds.  A study kind (spec.h: [experiment] kind = NAME) is one row of
 * rl_study_kinds[] (kinds.c): its name, the references it accepts, its own [experiment] keys, its spec checks,
 * the worker that writes a point's files, the file that marks a point done, the metrics the parent computes
 * from those files, and its meta.csv notes.  The spec parser (spec.c), the runner (runner.c) and the gate
 * (check.c, through spec.c) read the table; nothing else looks at a kind's name.  Each kind lives in the file
 * of its name (trajectory.c, refinement.c, …); the per-precision halves that run the engines are compiled
 * once per precision (study_prec.c, study_lockstep_prec.c, ../bench.c: study_kinds.h, study_lockstep.h).
 * Adding a kind: docs/studies.md, "Adding a study kind". */
#ifndef RL_STUDY_KINDS_TABLE_H
#define RL_STUDY_KINDS_TABLE_H

#include <stddef.h>
#include "harness.h"
#include "spec.h"

struct rl_csv;

/* the kind's flags */
enum {
  RL_KIND_SERIAL = 1,          /* points run one at a time whatever --jobs says (timings) */
  RL_KIND_BOTH_PRECISIONS = 2, /* each point runs f64 and f32 itself (no precision axis) */
  RL_KIND_DEVICE_ID = 4,       /* the device axis is part of the point id */
  RL_KIND_NO_LENGTH = 8,       /* steps / duration are optional */
  RL_KIND_CHAIN_SCENES = 16,   /* scene = chain:N1+N2+… (synthetic hinge chains) is allowed */
  RL_KIND_SCALE_SCENES = 32,   /* scene = spheres:N1+N2+…, boxes:…, links:… (scale_scene.h) is allowed */
};

/* the kind's own [experiment] keys (spec.c parses them; a spec of another kind that gives one is an error) */
enum {
  RL_KEY_LEVELS = 1,
  RL_KEY_STATES = 2,
  RL_KEY_ROWS_ONLY = 4,
  RL_KEY_STAGES = 8,
  RL_KEY_ENGINES = 16,
  RL_KEY_REPS = 32
};

typedef struct rl_study_kind {
  const char *name;
  unsigned refs;          /* bit mask of RL_REF_*: the references it can compare against (the default of use) */
  unsigned refs_required; /* those it cannot run without */
  unsigned keys;          /* RL_KEY_*: its own [experiment] keys */
  unsigned flags;         /* RL_KIND_* */
  /* after parsing: the kind's constraints on the spec (engines, axes, references), its defaults; 0 or −1 with
     a one-line err "FILE:LINE: …".  NULL: none. */
  int (*check)(rl_spec *s, char *err, int errlen);
  /* at load, per scene (not for `check`/`merge`): 0 or −1 with a one-line err naming the scene.  NULL: none. */
  int (*check_scene)(const rl_spec *s, const char *scene, char *err, int errlen);
  /* worker: the point's files in DIR (SA: the point's sim arguments, c.out unset); 0 or an exit status */
  int (*run)(const char *dir, const rl_spec *s, const rl_point *q, rl_sim_args *sa);
  /* the file written last by the worker, traj_ID<done>.csv: its presence marks the point done (--resume) */
  const char *done;
  /* the point's metrics rows into W (PTS: all points, for a point's reference); 0 or −1 with err */
  int (*metrics)(struct rl_csv *w, const char *dir, const rl_spec *s, const rl_point *pts, const rl_point *q, char *err,
                 int errlen);
  /* 1 when point Q cannot run on this build, the reason in WHY (may be NULL).  NULL: every point runs. */
  int (*absent)(const rl_spec *s, const rl_point *q, char *why, size_t whylen);
  /* the study's extra meta.csv rows (key,value) from all its points.  NULL: none. */
  void (*meta)(struct rl_csv *w, const rl_spec *s, const rl_point *pts, int n);
  /* after the metrics: study-level files in DIR from this shard's points MINE[0..n−1] (e.g. verify.csv);
     0 or −1 with err.  NULL: none. */
  int (*collect)(const char *dir, const rl_spec *s, const rl_point *pts, const int *mine, int n, char *err, int errlen);
} rl_study_kind;

/* the table (kinds.c), in the order `kind = …` lists them in messages */
extern const rl_study_kind *const rl_study_kinds[];
extern const int rl_study_nkinds;
/* the row named NAME, NULL when none */
const rl_study_kind *rl_study_kind_find(const char *name);
/* the kinds' names as "a, b, c" (messages) */
void rl_study_kind_list(char *out, size_t n);

/* the trajectory kind's worker and metrics (trajectory.c), shared by kind = contact */
int rl_trajectory_run(const char *dir, const rl_spec *s, const rl_point *q, rl_sim_args *sa);
int rl_trajectory_metrics(struct rl_csv *w, const char *dir, const rl_spec *s, const rl_point *pts, const rl_point *q,
                          char *err, int errlen);

/* ---- what the kinds' files share (kinds.c) ---- */
/* DIR/traj_ID<SUFFIX>.csv */
void rl_study_file(char *p, size_t n, const char *dir, const rl_point *q, const char *suffix);
/* the point's time step: q->dt, else the scene's (its MJCF's timestep); NAN with err when the scene does
   not load */
double rl_study_point_dt(const rl_point *q, char *err, int errlen);
/* the point's steps: the spec's steps, else round(duration / dt) (at least 1); −1 with err */
long rl_study_point_steps(const rl_spec *s, const rl_point *q, char *err, int errlen);
/* remove DIR's temporaries of worker PID (NAME.tmp.PID) */
void rl_study_remove_temps(const char *dir, long pid);
/* open PATH (f32: floats written as such) for a worker and point SA's output at it; 0 or RL_EXIT_BADINPUT after
   one line on stderr */
int rl_study_open_csv(struct rl_csv *w, const char *path, int f32, rl_sim_args *sa);
/* close W (0) or remove it (ST != 0: a failed point leaves no half-written file); the status */
int rl_study_finish_csv(struct rl_csv *w, int st);
/* one `sim` run into the trajectory CSV PATH (renamed into place when whole) */
int rl_study_sim_to(rl_sim_args *sa, int f32, const char *path);
/* one metrics.csv row: study,point,engine,precision,dt,metric,value,step,index */
void rl_study_row(struct rl_csv *w, const rl_spec *s, const rl_point *q, double dt, const char *metric, double v,
                  long step);
/* a small numeric CSV in memory (header + numbers, rl_numcsv_read) */
typedef struct rl_numtable {
  int nrow, ncol;
  double *v;
} rl_numtable;
int rl_numtable_read(const char *path, rl_numtable *t, char *err, int errlen);
#define RL_TV(t, r, c) ((t)->v[(size_t)(r) * (size_t)(t)->ncol + (size_t)(c)])
/* qpos (then qvel) column K of row R of a trajectory (runner.h: rl_traj) */
#define RL_QP(t, r, k) ((t)->v[(size_t)(r) * (size_t)(t)->ncol + (size_t)(t)->c_qpos + (size_t)(k)])
/* qvel follows qpos in a trajectory's columns: its count */
#define RL_TRAJ_NV(t) ((t)->c_iter - (t)->c_qpos - (t)->nq)
/* engines that a per-precision study half restarts from a generalized state (newton, cg; avbd through
   rl_avbd_from_generalized) */
int rl_study_restartable(const char *engine);
/* qpos/qvel of rows ROW[0..n−1] of trajectory T into qpos[n×nq], qvel[n×nv] */
struct rl_traj;
void rl_study_states_at(const struct rl_traj *t, const long *row, int n, int nv, double *qpos, double *qvel);
/* hard-link (else copy) FROM to TO, replacing TO; 0 or −1 with err */
int rl_study_link(const char *from, const char *to, char *err, int errlen);
/* 1 when the study wants metric M ([metrics] names) */
int rl_study_wants(const rl_spec *s, int m);
/* the index of the sweep axis KEY (its line into *LINE unless NULL), −1 when none */
int rl_spec_axis_find(const rl_spec *s, const char *key, int *line);
/* 1 when ITEM is one of the comma-separated LIST */
int rl_in_list(const char *list, const char *item);
/* −1 with "FILE:LINE: [sweep] engine: 'V' is not available for kind = K (allowed: ALLOWED)" when the engine
   axis holds one of the comma-separated BANNED engines; else 0 */
int rl_study_ban_engines(const rl_spec *s, const char *banned, const char *allowed, char *err, int errlen);

#endif
