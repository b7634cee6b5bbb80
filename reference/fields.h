/* fields.h — the data registry (engine/rl_data.h) as a table a program can read: every rl_data array with
 * its element type, size (a model size times a width), unit and meaning, in the registry's order.  Printed
 * by `rigidlab fields` (plain text) and `rigidlab fields --markdown` (docs/fields.md); verify takes the
 * units of the quantities that compare a registry field from here. */
#ifndef RL_FIELDS_H
#define RL_FIELDS_H

#include <stdio.h>

typedef struct rl_field_info {
  const char *group;   /* state, derived, efc or runtime (which registry list) */
  const char *type;    /* real or int */
  const char *name;    /* the rl_data member */
  const char *count;   /* the rl_model size that counts the items (nq, nbody, …) */
  int width;           /* elements per item */
  const char *unit;    /* unit of one element */
  const char *meaning; /* one line */
} rl_field_info;

extern const rl_field_info rl_fields[];
extern const int rl_nfields;

/* the entry named NAME, or NULL */
const rl_field_info *rl_field_find(const char *name);
/* the field reference, then verify's quantities (quantities.h): a Markdown page (MARKDOWN = 1,
   docs/fields.md) or aligned text tables */
void rl_fields_print(FILE *f, int markdown);

#endif
