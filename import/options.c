/* options.c — the option table (options.h) as data, its parser and its help text (precision-free). */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "options.h"

/* MJ rows land in mjOption.FIELD; RL rows have no MuJoCo field */
#define RL_MJ_OFFSET_MJ(field) offsetof(mjOption, field)
#define RL_MJ_OFFSET_RL(field) ((size_t)-1)
#define RL_X_ROW(key, type, owner, field, range, values, def, doc) \
  {#key, RL_OPT_##type, RL_OPT_##owner, #field, range, values, def, doc, RL_MJ_OFFSET_##owner(field)},
const rl_opt_row rl_opt_table[] = {RL_OPTION_TABLE(RL_X_ROW)};
#undef RL_X_ROW
const int rl_opt_count = (int)(sizeof rl_opt_table / sizeof rl_opt_table[0]);

#define RL_X_NUM_ROW(name, type, range, doc) {#name, RL_OPT_##type, RL_OPT_RL, #name, range, NULL, 0, doc, (size_t)-1},
const rl_opt_row rl_num_table[] = {RL_NUMBER_TABLE(RL_X_NUM_ROW)};
#undef RL_X_NUM_ROW

/* strict number parsing: the whole string is one finite number (|x| < 1e300, no over/underflow) */
int rl_parse_real(const char *s, double *v) {
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  return s[0] && !isspace((unsigned char)s[0]) && !*end && errno == 0 && *v == *v && *v < 1e300 && *v > -1e300 ? 0 : -1;
}

/* strict integer parsing: the whole string is one decimal integer (an optional sign, then digits) in [lo, hi] */
int rl_parse_long(const char *s, long lo, long hi, long *v) {
  char *end;
  const char *d = s + (*s == '-' || *s == '+');
  if (!isdigit((unsigned char)*d)) return -1;
  errno = 0;
  long x = strtol(s, &end, 10);
  if (*end || errno || x < lo || x > hi) return -1;
  *v = x;
  return 0;
}

static int parse_num(const char *s, double *v) { return !rl_parse_real(s, v); }

static int parse_int(const char *s, double lo, double hi, int *v) {
  long x;
  if (rl_parse_long(s, (long)lo, (long)hi, &x)) return 0;
  *v = (int)x;
  return 1;
}

/* x inside the row's range (each bound included unless the row excludes it) */
static int in_range(const rl_opt_row *r, double x) {
  int above = r->range.lo_open ? x > r->range.lo : x >= r->range.lo;
  int below = r->range.hi_open ? x < r->range.hi : x <= r->range.hi;
  return above && below;
}

/* three comma-separated finite numbers X,Y,Z, each a whole token (blanks around it allowed) */
static int parse_vec3(const char *s, double *g) {
  char tok[3][64];
  const char *p = s;
  for (int k = 0; k < 3; k++) {
    const char *c = k < 2 ? strchr(p, ',') : p + strlen(p);
    if (!c) return 0;
    while (p < c && isspace((unsigned char)*p)) p++; /* blanks around a number are allowed */
    const char *e = c;
    while (e > p && isspace((unsigned char)e[-1])) e--;
    if ((size_t)(e - p) >= sizeof tok[k]) return 0;
    memcpy(tok[k], p, (size_t)(e - p));
    tok[k][e - p] = 0;
    if (!parse_num(tok[k], &g[k])) return 0;
    p = c + 1;
  }
  return 1;
}

/* index of the name (a whole token) in a comma-separated list, −1 if absent */
static int name_index(const char *list, const char *name, size_t len) {
  int k = 0;
  for (const char *p = list; *p; k++) {
    const char *c = strchr(p, ',');
    size_t l = c ? (size_t)(c - p) : strlen(p);
    if (l == len && !strncmp(p, name, len)) return k;
    if (!c) break;
    p = c + 1;
  }
  return -1;
}

/* a comma-separated subset of the names: bit k for the k-th name (empty tokens are skipped) */
static int parse_flags(const char *list, const char *s, int *out) {
  int flags = 0;
  for (const char *p = s; *p;) {
    const char *c = strchr(p, ',');
    size_t l = c ? (size_t)(c - p) : strlen(p);
    if (l) {
      int k = name_index(list, p, l);
      if (k < 0) return 0;
      flags |= 1 << k;
    }
    if (!c) break;
    p = c + 1;
  }
  *out = flags;
  return 1;
}

/* a bound as the help prints it */
static void fmt_bound(char *buf, size_t n, double x) {
  if (isinf(x)) snprintf(buf, n, "%s", x > 0 ? "inf" : "-inf");
  else if (fabs(x) < 1e15 && x == (double)(long)x) snprintf(buf, n, "%ld", (long)x);
  else snprintf(buf, n, "%g", x);
}

void rl_opt_allowed(const rl_opt_row *r, char *buf, size_t n) {
  char lo[32], hi[32];
  fmt_bound(lo, sizeof lo, r->range.lo);
  fmt_bound(hi, sizeof hi, r->range.hi);
  int lo_inf = isinf(r->range.lo), hi_inf = isinf(r->range.hi);
  switch (r->type) {
  case RL_OPT_REAL:
    if (lo_inf && hi_inf) snprintf(buf, n, "a finite number");
    else if (hi_inf) snprintf(buf, n, "a finite number %s %s", r->range.lo_open ? ">" : ">=", lo);
    else snprintf(buf, n, "a number in %s%s, %s%s", r->range.lo_open ? "(" : "[", lo, hi, r->range.hi_open ? ")" : "]");
    break;
  case RL_OPT_INT: snprintf(buf, n, "an integer from %s to %s", lo, hi); break;
  case RL_OPT_VEC3: snprintf(buf, n, "three comma-separated finite numbers X,Y,Z"); break;
  case RL_OPT_ENUM: {
    size_t j = 0;
    for (const char *p = r->values; *p && j + 3 < n; p++) { /* "a,b" → "a, b" */
      buf[j++] = *p;
      if (*p == ',') buf[j++] = ' ';
    }
    buf[j] = 0;
    break;
  }
  case RL_OPT_FLAGS: snprintf(buf, n, "comma-separated: %s", r->values); break;
  }
}

/* every key, comma-separated */
static void key_list(char *buf, size_t n) {
  size_t j = 0;
  buf[0] = 0;
  for (int i = 0; i < rl_opt_count && j < n; i++)
    j += (size_t)snprintf(buf + j, n - j, "%s%s", i ? ", " : "", rl_opt_table[i].key);
}

int rl_opt_parse(const char *kv, rl_opt_value *v, char *err, int errlen) {
  char keys[1024], allowed[512];
  const char *eq = strchr(kv, '=');
  key_list(keys, sizeof keys);
  if (!eq || eq == kv) {
    snprintf(err, (size_t)errlen, "--opt '%s': expected KEY=VALUE with KEY one of: %s", kv, keys);
    return -1;
  }
  size_t klen = (size_t)(eq - kv);
  int i = 0;
  while (i < rl_opt_count && !(strlen(rl_opt_table[i].key) == klen && !strncmp(rl_opt_table[i].key, kv, klen))) i++;
  if (i == rl_opt_count) {
    snprintf(err, (size_t)errlen, "--opt: unknown key '%.*s' (allowed: %s)", (int)klen, kv, keys);
    return -1;
  }
  const rl_opt_row *r = &rl_opt_table[i];
  const char *val = eq + 1;
  memset(v, 0, sizeof *v);
  v->row = i;
  int ok = 0;
  switch (r->type) {
  case RL_OPT_REAL: ok = parse_num(val, &v->x[0]) && in_range(r, v->x[0]); break;
  case RL_OPT_INT: ok = parse_int(val, r->range.lo, r->range.hi, &v->n); break;
  case RL_OPT_VEC3: ok = parse_vec3(val, v->x); break;
  case RL_OPT_ENUM: ok = (v->n = name_index(r->values, val, strlen(val))) >= 0; break;
  case RL_OPT_FLAGS: ok = parse_flags(r->values, val, &v->n); break;
  }
  if (!ok) {
    rl_opt_allowed(r, allowed, sizeof allowed);
    snprintf(err, (size_t)errlen, "--opt %s: bad value '%s' (allowed: %s)", r->key, val, allowed);
    return -1;
  }
  return 0;
}

int rl_number_parse(int num, const char *label, const char *s, double *x, char *err, int errlen) {
  const rl_opt_row *r = &rl_num_table[num];
  long n;
  int ok = r->type == RL_OPT_INT ? !rl_parse_long(s, (long)r->range.lo, (long)r->range.hi, &n)
                                 : parse_num(s, x) && in_range(r, *x);
  if (ok && r->type == RL_OPT_INT) *x = (double)n;
  if (!ok) {
    char allowed[256];
    rl_opt_allowed(r, allowed, sizeof allowed);
    snprintf(err, (size_t)errlen, "%s: bad value '%s' (allowed: %s)", label, s, allowed);
    return -1;
  }
  return 0;
}

/* a value as the messages print it */
static void fmt_value(char *buf, size_t n, double x) { snprintf(buf, n, "%.17g", x); }

int rl_opt_check_mj(const mjOption *o, char *err, int errlen) {
  for (int i = 0; i < rl_opt_count; i++) {
    const rl_opt_row *r = &rl_opt_table[i];
    if (r->owner != RL_OPT_MJ || r->type == RL_OPT_ENUM || r->type == RL_OPT_FLAGS) continue;
    const char *f = (const char *)o + r->mj_offset;
    double x[3];
    int nx = r->type == RL_OPT_VEC3 ? 3 : 1, ok = 1;
    for (int k = 0; k < nx; k++) {
      x[k] = r->type == RL_OPT_INT ? *(const int *)(const void *)f : ((const mjtNum *)(const void *)f)[k];
      ok &= x[k] > -1e300 && x[k] < 1e300 && (r->type == RL_OPT_VEC3 || in_range(r, x[k]));
    }
    if (!ok) {
      char allowed[256], v[96], w[32];
      rl_opt_allowed(r, allowed, sizeof allowed);
      v[0] = 0;
      for (int k = 0; k < nx; k++) {
        fmt_value(w, sizeof w, x[k]);
        snprintf(v + strlen(v), sizeof v - strlen(v), "%s%s", k ? "," : "", w);
      }
      snprintf(err, (size_t)errlen, "option %s = %s is out of range (allowed: %s)", r->key, v, allowed);
      return -1;
    }
  }
  return 0;
}

void rl_opt_set_mj(mjOption *o, const rl_opt_value *v) {
  const rl_opt_row *r = &rl_opt_table[v->row];
  if (r->owner != RL_OPT_MJ) return;
  char *f = (char *)o + r->mj_offset;
  switch (r->type) {
  case RL_OPT_REAL: *(mjtNum *)(void *)f = v->x[0]; break;
  case RL_OPT_VEC3:
    for (int k = 0; k < 3; k++) ((mjtNum *)(void *)f)[k] = v->x[k];
    break;
  default: *(int *)(void *)f = v->n; break;
  }
}

int rl_mj_apply_opt(mjModel *mjm, const char *kv, char *err, int errlen) {
  rl_opt_value v;
  if (rl_opt_parse(kv, &v, err, errlen)) return -1;
  rl_opt_set_mj(&mjm->opt, &v);
  return 0;
}

/* the default as the help prints it: "model" for MJ rows, "unset" where it lies outside the range */
static void fmt_default(const rl_opt_row *r, char *buf, size_t n) {
  if (r->owner == RL_OPT_MJ) snprintf(buf, n, "model");
  else if (r->type == RL_OPT_ENUM) {
    const char *p = r->values;
    for (int k = 0; k < (int)r->def && strchr(p, ','); k++) p = strchr(p, ',') + 1;
    const char *c = strchr(p, ',');
    snprintf(buf, n, "%.*s", c ? (int)(c - p) : (int)strlen(p), p);
  } else if ((r->type == RL_OPT_REAL || r->type == RL_OPT_INT) && !in_range(r, r->def)) snprintf(buf, n, "unset");
  else fmt_bound(buf, n, r->def);
}

static const char *type_name(rl_opt_type t) {
  switch (t) {
  case RL_OPT_REAL: return "real";
  case RL_OPT_INT: return "int";
  case RL_OPT_ENUM: return "enum";
  case RL_OPT_FLAGS: return "flags";
  default: return "real×3";
  }
}

/* Markdown table cell: '|' escaped, so the allowed names of an enum stay in one cell */
static void md_cell(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '|') fputc('\\', f);
    fputc(*s, f);
  }
}

void rl_opt_print_help(FILE *f, int markdown) {
  char allowed[512], def[64], target[96];
  if (markdown) fputs("| key | type | allowed | default | sets | meaning |\n|---|---|---|---|---|---|\n", f);
  else
    fputs("Options (--opt KEY=VALUE, or a key of an experiment spec's [sweep] section).\n"
          "MJ options are written to MuJoCo's mjModel.opt before import, so MuJoCo and rigidlab run the same\n"
          "model; the others are rigidlab's own (rl_option).  default 'model': the MJCF's <option>.\n\n",
          f);
  for (int i = 0; i < rl_opt_count; i++) {
    const rl_opt_row *r = &rl_opt_table[i];
    rl_opt_allowed(r, allowed, sizeof allowed);
    fmt_default(r, def, sizeof def);
    if (r->owner == RL_OPT_MJ) snprintf(target, sizeof target, "mjOption.%s → rl_option.%s", r->field, r->field);
    else snprintf(target, sizeof target, "rl_option.%s", r->field);
    if (markdown) {
      fprintf(f, "| `%s` | %s | ", r->key, type_name(r->type));
      md_cell(f, allowed);
      fprintf(f, " | %s | `%s` | ", def, target);
      md_cell(f, r->doc);
      fputs(" |\n", f);
    } else {
      fprintf(f, "  %-19s %s; %s (default: %s)\n", r->key, type_name(r->type), allowed, def);
      fprintf(f, "  %-19s %s [%s]\n", "", r->doc, target);
    }
  }
}
