/* rl_test_pair.h — shared by the Criterion suites: load MODEL as a MuJoCo + rigidlab pair with one
 * optional --opt override, or fail the test with the one-line load error; and a fixture of a pair,
 * MuJoCo's data, rigidlab's data and N seeded states (states.h). */
#ifndef RL_TEST_PAIR_H
#define RL_TEST_PAIR_H

#include <criterion/criterion.h>
#include <string.h>
#include "pair.h"
#include "states.h"

static inline void load(rl_pair *p, const char *model, const char *opt) {
  rl_common_args c = {0};
  char err[1024];
  c.model = model;
  if (opt) c.opts[c.nopts++] = opt;
  cr_assert_eq(rl_pair_load(p, &c, 0, err, sizeof err), 0, "%s", err);
}

typedef struct fixture {
  rl_pair p;
  mjData *mjd;
  rl_data *d;
  rl_states S;
} fixture;

/* MODEL with the --opt overrides OPTS[0..NOPTS), NSTATES states drawn with SEED; fails the test on error */
static inline void fixture_open_seeded(fixture *f, const char *model, const char *const *opts, int nopts, int nstates,
                                       unsigned long seed) {
  rl_common_args a;
  memset(&a, 0, sizeof a);
  a.model = model;
  for (int i = 0; i < nopts; i++) a.opts[a.nopts++] = opts[i];
  char err[512];
  cr_assert_eq(rl_pair_load(&f->p, &a, 0, err, sizeof err), 0, "%s", err);
  f->mjd = mj_makeData(f->p.mjm);
  f->d = rl_data_alloc(f->p.m);
  cr_assert_eq(rl_states_draw(f->p.mjm, nstates, seed, &f->S), 0);
}

static inline void fixture_close(fixture *f) {
  rl_states_free(&f->S);
  rl_data_free(f->d);
  mj_deleteData(f->mjd);
  rl_pair_free(&f->p);
}

#endif
