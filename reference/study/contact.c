/* contact.c — kind = contact (spec.h): the contact scenes' trajectories per engine (scene × engine newton, cg,
 * avbd, mujoco), run and measured as kind = trajectory (trajectory.c: traj_ID.csv, its metrics against the
 * mujoco point), and linked under the names `rigidlab report` plots, contact_<scene>_<engine>.csv, in the
 * study folder.  So that those names are unique, the sweep has the engine axis only. */
#include <stdio.h>
#include <string.h>
#include "csv.h"
#include "kinds.h"

/* engine is the only axis */
static int contact_check(rl_spec *s, char *err, int errlen) {
  for (int a = 0; a < s->naxes; a++)
    if (strcmp(s->axis[a].key, "engine")) {
      rl_snprintf(err, (size_t)errlen,
                  "%s:%d: [sweep] %s: kind = contact sweeps the engine only (its files are "
                  "contact_<scene>_<engine>.csv)",
                  s->path, s->axis[a].line, s->axis[a].key);
      return -1;
    }
  return 0;
}

/* DIR/contact_<scene>_<engine>.csv → traj_ID.csv */
static int contact_collect(const char *dir, const rl_spec *s, const rl_point *pts, const int *mine, int n, char *err,
                           int errlen) {
  (void)s;
  for (int k = 0; k < n; k++) {
    const rl_point *q = &pts[mine[k]];
    char from[4096], to[4096];
    rl_study_file(from, sizeof from, dir, q, "");
    rl_snprintf(to, sizeof to, "%s/contact_%s_%s.csv", dir, q->scene_name, q->engine);
    if (rl_study_link(from, to, err, errlen)) return -1;
  }
  return 0;
}

const rl_study_kind rl_kind_contact = {
    .name = "contact",
    .refs = 1u << RL_REF_MUJOCO_FREE,
    .check = contact_check,
    .run = rl_trajectory_run,
    .done = "",
    .metrics = rl_trajectory_metrics,
    .collect = contact_collect,
};
