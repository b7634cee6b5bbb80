/* harness.c — precision-free pieces shared by the front end and the tests. */
#include <stdarg.h>
#include <stdio.h>
#include "harness.h"

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
