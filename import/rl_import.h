/* rl_import.h — MJCF → rigidlab model, through MuJoCo's compiler (the one file that links MuJoCo
 * into model building), and the rl_option half of the option table (options.h).  Compiled once per
 * precision like the engine. */
#ifndef RL_IMPORT_H
#define RL_IMPORT_H

#include <mujoco/mujoco.h>
#include "rl_engine.h"
#include "mj_load.h"

#define rl_import_mjmodel RL_NAME(import_mjmodel)
#define rl_option_default RL_NAME(option_default)
#define rl_option_set     RL_NAME(option_set)
#define rl_option_apply   RL_NAME(option_apply)
#define rl_option_from_mj RL_NAME(option_from_mj)

/* rigidlab's own options at their defaults (the table's DEFAULT column); MuJoCo's fields zero until
   rl_option_from_mj fills them from a model. */
void rl_option_default(rl_option *o);
/* Write an RL row's value into o (MJ rows: nothing; their value travels in mjModel.opt). */
void rl_option_set(rl_option *o, const rl_opt_value *v);
/* Parse KEY=VALUE and apply it where it belongs: MuJoCo's options to mjm->opt, rigidlab's to o.
   Returns 0, or −1 with the one-line message of rl_opt_parse. */
int rl_option_apply(mjModel *mjm, rl_option *o, const char *kv, char *err, int errlen);
/* Copy every MJ row (and o_margin, o_solref, o_solimp and the pair source <option collision>, which are no options)
   from MuJoCo's options into o. */
void rl_option_from_mj(rl_option *o, const mjOption *mo);

/* Convert a compiled mjModel with the options o (rl_option_default, then rl_option_apply; NULL: the
   defaults); the model's opt is o with MuJoCo's fields taken from mjm->opt.  Elements the engine does
   not model are refused: returns NULL and writes one line naming the element kind and its name into
   err (no newline). */
rl_model *rl_import_mjmodel(const mjModel *mjm, const rl_option *o, const char *path, char *err, int errlen);

#endif
