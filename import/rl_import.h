/* rl_import.h — MJCF → rigidlab model, through MuJoCo's compiler (the one file that links MuJoCo
 * into model building).  Compiled once per precision like the engine. */
#ifndef RL_IMPORT_H
#define RL_IMPORT_H

#include <mujoco/mujoco.h>
#include "rl_engine.h"
#include "mj_load.h"

#define rl_import_mjmodel RL_NAME(import_mjmodel)

/* Convert a compiled mjModel.  Elements the engine does not model are refused: returns NULL and
   writes one line naming the element kind and its name into err (no newline). */
rl_model *rl_import_mjmodel(const mjModel *mjm, const rl_ext_options *ext, const char *path, char *err, int errlen);

#endif
