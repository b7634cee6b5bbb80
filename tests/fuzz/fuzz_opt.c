/* fuzz_opt.c — libFuzzer harness of the option parser (import/options.c): `--opt KEY=VALUE` and the
 * [sweep] keys of a spec.  Each input line is one KEY=VALUE.  Checked for every line: a refusal is one
 * non-empty line; an accepted value lies in its row's range (REAL and VEC3 finite, INT in [lo, hi], ENUM an
 * index of its names, FLAGS bits of its names only), and storing it into MuJoCo's and rigidlab's options
 * touches nothing out of bounds. */
#include <math.h>
#include "fuzz_util.h"
#include "rl_import.h"

/* the number of comma-separated names in LIST */
static int name_count(const char *list) {
  int n = 1;
  for (const char *c = list; *c; c++) n += *c == ',';
  return n;
}

/* the row's range, as options.h defines it: each bound included unless the row excludes it */
static int within(const rl_opt_row *r, double x) {
  int above = r->range.lo_open ? x > r->range.lo : x >= r->range.lo;
  int below = r->range.hi_open ? x < r->range.hi : x <= r->range.hi;
  return above && below;
}

/* what an accepted value must satisfy */
static void check_value(const char *kv, const rl_opt_value *v) {
  FUZZ_REQUIRE(v->row >= 0 && v->row < rl_opt_count, "'%s': row %d", kv, v->row);
  const rl_opt_row *r = &rl_opt_table[v->row];
  size_t klen = strlen(r->key);
  FUZZ_REQUIRE(!strncmp(kv, r->key, klen) && kv[klen] == '=', "'%s' parsed as key %s", kv, r->key);
  switch (r->type) {
  case RL_OPT_REAL: FUZZ_REQUIRE(isfinite(v->x[0]) && within(r, v->x[0]), "'%s' accepted as %g", kv, v->x[0]); break;
  case RL_OPT_VEC3:
    for (int k = 0; k < 3; k++) FUZZ_REQUIRE(isfinite(v->x[k]), "'%s' accepted with x[%d] = %g", kv, k, v->x[k]);
    break;
  case RL_OPT_INT: FUZZ_REQUIRE(within(r, v->n), "'%s' accepted as %d", kv, v->n); break;
  case RL_OPT_ENUM:
    FUZZ_REQUIRE(v->n >= 0 && v->n < name_count(r->values), "'%s' accepted as index %d", kv, v->n);
    break;
  case RL_OPT_FLAGS:
    FUZZ_REQUIRE(v->n >= 0 && v->n < 1 << name_count(r->values), "'%s' accepted as bits %#x", kv, v->n);
    break;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096) return 0;
  char buf[4097];
  memcpy(buf, data, size);
  buf[size] = 0; /* an embedded NUL ends the input, as it ends an argv string */
  mjOption mo;
  memset(&mo, 0, sizeof mo);
  rl_option o;
  rl_option_default(&o);
  char *save = NULL;
  for (char *kv = strtok_r(buf, "\r\n", &save); kv; kv = strtok_r(NULL, "\r\n", &save)) {
    rl_opt_value v;
    char err[1024] = "";
    if (rl_opt_parse(kv, &v, err, sizeof err)) {
      FUZZ_REQUIRE(fuzz_one_line(err), "'%s': refused with '%s'", kv, err);
      continue;
    }
    check_value(kv, &v);
    rl_opt_set_mj(&mo, &v);
    rl_option_set(&o, &v);
  }
  return 0;
}
