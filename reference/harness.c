/* harness.c — precision-free pieces shared by the front end and the tests. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include "harness.h"
#include "options.h"

const char *const rl_stage_names[RL_NSTAGE] = {"kinematics", "com",       "tendon", "inertia",   "bias",
                                               "passive",    "actuation", "smooth", "integrate", "collision",
                                               "constraint", "solve",     "step"};

/* one line on stderr: "rigidlab: MESSAGE" (newlines folded) */
void rl_errorf(const char *fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  for (char *c = buf; *c; c++)
    if (*c == '\n' || *c == '\r') *c = ' ';
  fprintf(stderr, "rigidlab: %s\n", buf);
}

/* steps = --steps, else round(duration / h), checked against the number table's cap before any rounding */
long rl_run_steps(const rl_sim_args *a, double timestep, char *err, int errlen) {
  if (a->steps >= 0) return a->steps;
  double n = a->duration / timestep;
  if (!(n <= (double)RL_MAX_STEPS)) {
    snprintf(err, (size_t)errlen, "duration %g s at time step %g s is %g steps (allowed: at most %ld)", a->duration,
             timestep, n, RL_MAX_STEPS);
    return -1;
  }
  return lround(n);
}
