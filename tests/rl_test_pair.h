/* rl_test_pair.h — shared by the Criterion suites: load MODEL as a MuJoCo + rigidlab pair with one
 * optional --opt override, or fail the test with the one-line load error. */
#ifndef RL_TEST_PAIR_H
#define RL_TEST_PAIR_H

#include <criterion/criterion.h>
#include "pair.h"

static inline void load(rl_pair *p, const char *model, const char *opt) {
  rl_common_args c = {0};
  char err[1024];
  c.model = model;
  if (opt) c.opts[c.nopts++] = opt;
  cr_assert_eq(rl_pair_load(p, &c, 0, err, sizeof err), 0, "%s", err);
}

#endif
