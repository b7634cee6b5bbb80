/* mj_load.c — MuJoCo loading and option overrides (precision-free). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mj_load.h"

/* Fold a multi-line MuJoCo message into one line. */
static void one_line(char *s) {
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\r')) s[--n] = 0;
  for (size_t i = 0; i < n; i++)
    if (s[i] == '\n' || s[i] == '\r' || s[i] == '\t') s[i] = ' ';
}

mjModel *rl_mj_load(const char *path, char *err, int errlen) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, (size_t)errlen, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  fclose(f);
  char buf[1000] = "";
  mjModel *m = mj_loadXML(path, NULL, buf, sizeof buf);
  if (!m) {
    one_line(buf);
    snprintf(err, (size_t)errlen, "%s: %s", path, buf[0] ? buf : "MuJoCo could not compile the model");
    return NULL;
  }
  return m;
}

void rl_ext_options_default(rl_ext_options *ext) {
  ext->ls_iterations = 50;
  ext->ls_tolerance = 0.01;
  ext->max_contacts = 0;
  ext->collision = 0;
  ext->contact_resolution = 0;
  ext->newton_factor = 0;
  ext->avbd_iterations = 0;
  ext->avbd_tolerance = 0;
  ext->avbd_cheb_rho = 0;
}

static const char *const disable_names[] = {"constraint", "equality", "frictionloss", "limit", "contact",
                                            "passive", "gravity", "clampctrl", "warmstart", "filterparent",
                                            "actuation", "refsafe", "sensor", NULL};
static const char *const enable_names[] = {"override", "energy", "fwdinv", "sensornoise", "multiccd", NULL};

const char *rl_mj_opt_help(void) {
  return "timestep=H gravity=X,Y,Z integrator=euler|rk4 cone=pyramidal|elliptic solver=pgs|cg|newton "
         "iterations=N tolerance=T impratio=R noslip_iterations=N mpr_iterations=N mpr_tolerance=T "
         "ls_iterations=N ls_tolerance=T max_contacts=N collision=manifold|mujoco "
         "contact_resolution=auto|convex|signorini newton_factor=auto|dense|skyline|aba avbd_iterations=N "
         "avbd_tolerance=T avbd_cheb_rho=R disable=LIST enable=LIST (LIST: comma-separated flag names, "
         "disable: constraint,equality,frictionloss,limit,contact,passive,gravity,clampctrl,warmstart,"
         "filterparent,actuation,refsafe,sensor; enable: override,energy,fwdinv,sensornoise,multiccd)";
}

/* strict number parsing: the whole string must be one finite number */
static int parse_num(const char *s, double *v) {
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  return s[0] && !*end && errno == 0 && *v == *v && *v < 1e300 && *v > -1e300;
}
static int parse_int(const char *s, int *v) {
  char *end;
  errno = 0;
  long x = strtol(s, &end, 10);
  *v = (int)x;
  return s[0] && !*end && errno == 0 && x >= 0 && x < 1000000000;
}

static int parse_flags(const char *val, const char *const *names, int *out) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", val);
  int flags = 0;
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    int k = 0;
    while (names[k] && strcmp(names[k], tok)) k++;
    if (!names[k]) return -1;
    flags |= 1 << k;
  }
  *out = flags;
  return 0;
}

int rl_mj_apply_opt(mjModel *mjm, rl_ext_options *ext, const char *kv, char *err, int errlen) {
  char key[64];
  const char *eq = strchr(kv, '=');
  if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof key) {
    snprintf(err, (size_t)errlen, "--opt '%s': expected KEY=VALUE with KEY one of: %s", kv, rl_mj_opt_help());
    return -1;
  }
  memcpy(key, kv, (size_t)(eq - kv));
  key[eq - kv] = 0;
  const char *val = eq + 1;
  double x;
  int n;
  mjOption *o = &mjm->opt;
#define BAD(allowed)                                                                        \
  do {                                                                                      \
    snprintf(err, (size_t)errlen, "--opt %s: bad value '%s' (allowed: %s)", key, val, allowed); \
    return -1;                                                                              \
  } while (0)
  if (!strcmp(key, "timestep")) {
    if (!parse_num(val, &x) || x <= 0) BAD("a positive number");
    o->timestep = x;
  } else if (!strcmp(key, "gravity")) {
    double g[3];
    char *end;
    const char *p = val;
    for (int k = 0; k < 3; k++) {
      g[k] = strtod(p, &end);
      if (end == p || (k < 2 && *end != ',') || (k == 2 && *end) || !(g[k] > -1e300 && g[k] < 1e300))
        BAD("three comma-separated finite numbers X,Y,Z");
      p = end + 1;
    }
    for (int k = 0; k < 3; k++) o->gravity[k] = g[k];
  } else if (!strcmp(key, "integrator")) {
    if (!strcmp(val, "euler")) o->integrator = mjINT_EULER;
    else if (!strcmp(val, "rk4")) o->integrator = mjINT_RK4;
    else BAD("euler, rk4");
  } else if (!strcmp(key, "cone")) {
    if (!strcmp(val, "pyramidal")) o->cone = mjCONE_PYRAMIDAL;
    else if (!strcmp(val, "elliptic")) o->cone = mjCONE_ELLIPTIC;
    else BAD("pyramidal, elliptic");
  } else if (!strcmp(key, "solver")) {
    if (!strcmp(val, "pgs")) o->solver = mjSOL_PGS;
    else if (!strcmp(val, "cg")) o->solver = mjSOL_CG;
    else if (!strcmp(val, "newton")) o->solver = mjSOL_NEWTON;
    else BAD("pgs, cg, newton");
  } else if (!strcmp(key, "iterations")) {
    if (!parse_int(val, &n) || n < 1) BAD("a positive integer");
    o->iterations = n;
  } else if (!strcmp(key, "tolerance")) {
    if (!parse_num(val, &x) || x < 0) BAD("a non-negative number");
    o->tolerance = x;
  } else if (!strcmp(key, "impratio")) {
    if (!parse_num(val, &x) || x <= 0) BAD("a positive number");
    o->impratio = x;
  } else if (!strcmp(key, "noslip_iterations")) {
    if (!parse_int(val, &n)) BAD("a non-negative integer");
    o->noslip_iterations = n;
  } else if (!strcmp(key, "mpr_iterations")) {
    if (!parse_int(val, &n) || n < 1) BAD("a positive integer");
    o->mpr_iterations = n;
  } else if (!strcmp(key, "mpr_tolerance")) {
    if (!parse_num(val, &x) || x <= 0) BAD("a positive number");
    o->mpr_tolerance = x;
  } else if (!strcmp(key, "ls_iterations")) {
    if (!parse_int(val, &n) || n < 1) BAD("a positive integer");
    ext->ls_iterations = n;
  } else if (!strcmp(key, "ls_tolerance")) {
    if (!parse_num(val, &x) || x <= 0) BAD("a positive number");
    ext->ls_tolerance = x;
  } else if (!strcmp(key, "max_contacts")) {
    if (!parse_int(val, &n) || n < 1) BAD("a positive integer");
    ext->max_contacts = n;
  } else if (!strcmp(key, "collision")) {
    if (!strcmp(val, "manifold")) ext->collision = 0;
    else if (!strcmp(val, "mujoco")) ext->collision = 1;
    else BAD("manifold, mujoco");
  } else if (!strcmp(key, "contact_resolution")) {
    if (!strcmp(val, "auto")) ext->contact_resolution = 0;
    else if (!strcmp(val, "convex")) ext->contact_resolution = 1;
    else if (!strcmp(val, "signorini")) ext->contact_resolution = 2;
    else BAD("auto, convex, signorini");
  } else if (!strcmp(key, "newton_factor")) {
    if (!strcmp(val, "auto")) ext->newton_factor = 0;
    else if (!strcmp(val, "dense")) ext->newton_factor = 1;
    else if (!strcmp(val, "skyline")) ext->newton_factor = 2;
    else if (!strcmp(val, "aba")) ext->newton_factor = 3;
    else BAD("auto, dense, skyline, aba");
  } else if (!strcmp(key, "avbd_iterations")) {
    if (!parse_int(val, &n) || n < 1) BAD("a positive integer");
    ext->avbd_iterations = n;
  } else if (!strcmp(key, "avbd_tolerance")) {
    if (!parse_num(val, &x) || x <= 0) BAD("a positive number");
    ext->avbd_tolerance = x;
  } else if (!strcmp(key, "avbd_cheb_rho")) {
    if (!parse_num(val, &x) || x < 0 || x >= 1) BAD("a number in [0, 1)");
    ext->avbd_cheb_rho = x;
  } else if (!strcmp(key, "disable")) {
    if (parse_flags(val, disable_names, &n)) BAD("comma-separated: constraint,equality,frictionloss,limit,contact,passive,gravity,clampctrl,warmstart,filterparent,actuation,refsafe,sensor");
    o->disableflags = n;
  } else if (!strcmp(key, "enable")) {
    if (parse_flags(val, enable_names, &n)) BAD("comma-separated: override,energy,fwdinv,sensornoise,multiccd");
    o->enableflags = n;
  } else {
    snprintf(err, (size_t)errlen, "--opt: unknown key '%s' (allowed: %s)", key, rl_mj_opt_help());
    return -1;
  }
#undef BAD
  return 0;
}
