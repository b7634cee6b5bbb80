/* quantities.h — what each row of `rigidlab verify` measures (precision-independent; read by verify and by
 * `rigidlab report`).  A row either compares a registry field of rl_data (engine/rl_data.h: its unit comes
 * from there) or measures something derived (a count, a fraction of pairs or states, a scaled error).  The
 * kind says on which axis a plot may draw the row and whether the summary's error headline may name it:
 * only relative errors share the log axis of relative errors. */
#ifndef RL_VERIFY_QUANTITIES_H
#define RL_VERIFY_QUANTITIES_H

#include <stdio.h>

typedef enum {
  RL_VQK_REL,      /* relative error ‖ours − mujoco‖∞ / ‖mujoco‖∞ (dimensionless) */
  RL_VQK_COUNT,    /* an integer: a count difference, mismatches or iterations */
  RL_VQK_FRACTION, /* a fraction (0..1) of pairs, contacts or states */
  RL_VQK_SCALED    /* an error in units of a bound (κ₁(H)·ε, a float floor) */
} rl_vq_kind;

typedef struct rl_vq_info {
  const char *name; /* the row's quantity name, as verify prints and writes it */
  rl_vq_kind kind;
  const char *field;   /* the rl_data registry field compared (its unit is max_abs_err's), or NULL */
  const char *unit;    /* max_abs_err's unit when field is NULL */
  const char *meaning; /* one line */
} rl_vq_info;

/* the entry for quantity NAME, or NULL when verify has no such row */
const rl_vq_info *rl_vq_info_find(const char *name);
/* the unit of NAME's max_abs_err column ("?" for an unknown name) */
const char *rl_vq_unit(const char *name);
/* "relative error", "count", "fraction", "multiple of a bound" */
const char *rl_vq_kind_name(rl_vq_kind k);

/* the table as a Markdown section (docs/fields.md, after the fields) or aligned text */
void rl_vq_print(FILE *f, int markdown);

#endif
