/* fuzz_spec.c — libFuzzer harness of experiment specs (reference/study/spec.c): the INI parser, the
 * checks of each section and key, and the expansion of the sweep into points.  The input is written as
 * spec.ini in a scratch folder that also holds a.xml, b.xml and sub/a.xml (small models of tests/models),
 * so specs naming them pass the file checks and reach the option checks against a loaded scene.
 * Checked: a refusal is one line that starts with the spec's path; an accepted spec expands (or refuses
 * with one line); each point's reference is a mujoco point of the same scene, dt and options, and a point
 * without one has no such mujoco point; point ids are unique. */
#include <mujoco/mujoco.h>
#include "fuzz_util.h"
#include "spec.h"

#ifndef SRCDIR
#error "SRCDIR: the source root (for the models the specs may name)"
#endif

static void quiet(const char *msg) { (void)msg; }

/* the scratch folder's models: links to small scenes of the suite */
static void setup(void) {
  static int done;
  if (done) return;
  done = 1;
  mju_user_warning = quiet;
  char cmd[2048];
  const char *d = fuzz_dir();
  snprintf(cmd, sizeof cmd,
           "mkdir -p '%s/sub' && ln -sf '%s/tests/models/slide_cube.xml' '%s/a.xml' && "
           "ln -sf '%s/tests/models/roll_ball.xml' '%s/b.xml' && ln -sf '%s/tests/models/avbd_box.xml' '%s/sub/a.xml'",
           d, SRCDIR, d, SRCDIR, d, SRCDIR, d);
  if (system(cmd)) {
    fprintf(stderr, "fuzz: cannot link the models into %s\n", d);
    exit(1);
  }
}

/* a point and its reference share the scene, the time step as written and every option */
static int same_setting(const rl_point *a, const rl_point *b) {
  if (a->scene != b->scene || strcmp(a->dt_text, b->dt_text) || a->nopts != b->nopts) return 0;
  for (int k = 0; k < a->nopts; k++)
    if (strcmp(a->opts[k], b->opts[k])) return 0;
  return 1;
}

static int by_id(const void *a, const void *b) { return strcmp(((const rl_point *)a)->id, ((const rl_point *)b)->id); }

/* the expansion of an accepted spec; ids are checked unique when the spec passed every check (FULL) */
static void check_expand(const rl_spec *s, int full) {
  rl_point *pts = NULL;
  char err[1024] = "";
  int n = rl_spec_expand(s, &pts, err, sizeof err);
  if (n < 0) {
    FUZZ_REQUIRE(fuzz_one_line(err), "expand refused with '%s'", err);
    return;
  }
  for (int i = 0; i < n; i++) {
    const rl_point *q = &pts[i];
    FUZZ_REQUIRE(q->index == i && q->id[0] && q->scene, "point %d: index %d id '%s'", i, q->index, q->id);
    if (q->ref >= 0) {
      FUZZ_REQUIRE(q->ref < n && !strcmp(pts[q->ref].engine, "mujoco") && same_setting(&pts[q->ref], q),
                   "point %s: reference %d", q->id, q->ref);
    }
    /* no reference: no mujoco point of the same setting (checked pairwise on small sweeps) */
    for (int j = 0; q->ref < 0 && n <= 256 && j < n; j++)
      FUZZ_REQUIRE(strcmp(pts[j].engine, "mujoco") || !same_setting(&pts[j], q), "point %s: reference %s missed", q->id,
                   pts[j].id);
    (void)rl_spec_band(s, i % RL_NMET);
  }
  if (full && n > 1) {
    qsort(pts, (size_t)n, sizeof *pts, by_id);
    for (int i = 1; i < n; i++) FUZZ_REQUIRE(strcmp(pts[i - 1].id, pts[i].id), "two points with id '%s'", pts[i].id);
  }
  rl_spec_free_points(pts, n);
}

/* one load (text only: no scene or option check; full: every check) */
static int check_load(const char *path, int full) {
  rl_spec s;
  char err[1024] = "";
  int st = full ? rl_spec_load(path, &s, err, sizeof err) : rl_spec_load_text_only(path, &s, err, sizeof err);
  if (st) {
    FUZZ_REQUIRE(st == 2, "status %d", st);
    FUZZ_REQUIRE(fuzz_one_line(err) && !strncmp(err, path, strlen(path)), "refused with '%s'", err);
    return -1;
  }
  FUZZ_REQUIRE(s.name[0] && s.nscene > 0 && s.kind, "accepted without name/scene/kind");
  char refs[256];
  rl_spec_refs_text(&s, refs, sizeof refs);
  check_expand(&s, full);
  rl_spec_free(&s);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 16384) return 0;
  setup();
  char path[1024];
  fuzz_write(path, sizeof path, "spec.ini", data, size);
  if (!check_load(path, 0)) check_load(path, 1);
  return 0;
}
