/* device.c — kind = device (spec.h): CPU vs CUDA at equal precision.
 *   device    CPU vs CUDA at equal precision, per scene × engine × precision × device = cpu | cuda: cpu points
 *             write traj_ID.csv (the reference of the cuda twin); no metrics, a cpu point has nothing to be
 *             compared with.  The study has no CUDA worker yet (the CUDA backend, engine/cuda/, is compared
 *             with the CPU by tests/cuda_compare.c and tools/device-check on a GPU), so cuda points are not
 *             run, no rows are written for them, and meta.csv says cuda_rows,absent and cuda_reason,… .
 *             A CUDA worker must replace device_absent's reason by a device check (rl_cuda_devices), write
 *             the cuda point's trajectory with its engine and compare it with the cpu twin as kind = fp32
 *             compares f32 with f64. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "csv.h"
#include "kinds.h"
#include "runner.h"
#include "study_lockstep.h"

#ifdef RL_HAVE_CUDA
#error "a CUDA worker needs its device check in device_absent and its run in device_run"
#endif

static const char *const no_cuda_reason =
    "rigidlab's device study has no CUDA worker yet (engine/cuda/ is compared with the CPU by tests/cuda_compare "
    "and tools/device-check on a GPU)";

/* the device axis is exactly cpu, cuda; no mujoco points (MuJoCo has no CUDA build) */
static int device_check(rl_spec *s, char *err, int errlen) {
  int line = 0, dev = rl_spec_axis_find(s, "device", &line), cpu = 0, cuda = 0;
  for (int i = 0; dev >= 0 && i < s->axis[dev].nval; i++) {
    cpu |= !strcmp(s->axis[dev].val[i], "cpu");
    cuda |= !strcmp(s->axis[dev].val[i], "cuda");
  }
  if (!cpu || !cuda || s->axis[dev].nval != 2) {
    if (dev < 0)
      rl_snprintf(err, (size_t)errlen, "%s:%d: [experiment] kind = device needs the sweep axis 'device = cpu, cuda'",
                  s->path, s->kind_line);
    else
      rl_snprintf(err, (size_t)errlen,
                  "%s:%d: [sweep] device: kind = device compares cpu with cuda (allowed: "
                  "device = cpu, cuda, each once)",
                  s->path, line);
    return -1;
  }
  return rl_study_ban_engines(s, "mujoco", "newton, cg, avbd; MuJoCo has no CUDA build", err, errlen);
}

static int device_absent(const rl_spec *s, const rl_point *q, char *why, size_t whylen) {
  (void)s;
  if (strcmp(q->device, "cuda")) return 0;
  if (why) rl_snprintf(why, whylen, "%s", no_cuda_reason);
  return 1;
}

/* cuda_rows,absent, cuda_reason,"…" and cuda_points_not_run,N when the study has points this build cannot run
   (every shard writes the same) */
static void device_meta(rl_csv *w, const rl_spec *s, const rl_point *pts, int n) {
  char why[512] = "", buf[32];
  int absent = 0;
  for (int k = 0; k < n; k++) absent += device_absent(s, &pts[k], why, sizeof why);
  if (!absent) return;
  rl_csv_str(w, "cuda_rows");
  rl_csv_str(w, "absent");
  rl_csv_end_row(w);
  rl_csv_str(w, "cuda_reason");
  rl_csv_str(w, why);
  rl_csv_end_row(w);
  rl_snprintf(buf, sizeof buf, "%d", absent);
  rl_csv_str(w, "cuda_points_not_run");
  rl_csv_str(w, buf);
  rl_csv_end_row(w);
}

/* the next CSV field of *P (quoted fields with "" escapes); its end of record in *eor; NULL at the end */
static char *csv_field(char **p, int *eor) {
  char *s = *p, *o = s, *start = s;
  if (!*s) return NULL;
  if (*s == '"') {
    start = o = ++s;
    while (*s) {
      if (*s == '"' && s[1] == '"') *o++ = '"', s += 2;
      else if (*s == '"') {
        s++;
        break;
      } else *o++ = *s++;
    }
  } else
    while (*s && *s != ',' && *s != '\n') *o++ = *s++;
  *eor = *s != ',';
  if (*s) s++;
  *o = 0;
  *p = s;
  return start;
}

int rl_study_absent_note(const char *dir, char *note, size_t n) {
  char path[4200];
  rl_snprintf(path, sizeof path, "%s/meta.csv", dir);
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *t = malloc((size_t)(len > 0 ? len : 0) + 1), *p = t;
  size_t r = fread(t, 1, (size_t)(len > 0 ? len : 0), f);
  t[r] = 0;
  fclose(f);
  int absent = 0, eor;
  char reason[1024] = "unknown reason";
  for (;;) {
    char *key = csv_field(&p, &eor);
    if (!key || eor) break;
    char *val = csv_field(&p, &eor);
    if (!val) break;
    if (!strcmp(key, "cuda_rows")) absent = !strcmp(val, "absent");
    if (!strcmp(key, "cuda_reason")) rl_snprintf(reason, sizeof reason, "%s", val);
    while (!eor && csv_field(&p, &eor)) {}
  }
  free(t);
  if (absent) rl_snprintf(note, n, "cuda rows absent: %s", reason);
  return absent;
}

/* a cpu point's trajectory (the reference of its cuda twin) */
static int device_run(const char *dir, const rl_spec *s, const rl_point *q, rl_sim_args *sa) {
  char path[4096], why[512];
  if (device_absent(s, q, why, sizeof why)) { /* the runner does not launch these */
    rl_errorf("run: %s: %s", q->id, why);
    return RL_EXIT_BADINPUT;
  }
  rl_study_file(path, sizeof path, dir, q, "");
  return rl_study_sim_to(sa, q->f32, path);
}

/* a cpu point has nothing to be compared with; cuda points are absent on this build */
static int device_metrics(rl_csv *w, const char *dir, const rl_spec *s, const rl_point *pts, const rl_point *q,
                          char *err, int errlen) {
  (void)w, (void)dir, (void)s, (void)pts, (void)q, (void)err, (void)errlen;
  return 0;
}

const rl_study_kind rl_kind_device = {
    .name = "device",
    .flags = RL_KIND_DEVICE_ID,
    .check = device_check,
    .run = device_run,
    .done = "",
    .metrics = device_metrics,
    .absent = device_absent,
    .meta = device_meta,
};
