/* mj_load.h — precision-free MuJoCo helpers shared by the harness: loading with a one-line error;
 * the options a user can set (options.h) are applied to the mjModel before import, so MuJoCo and
 * rigidlab see the same. */
#ifndef RL_MJ_LOAD_H
#define RL_MJ_LOAD_H

#include <mujoco/mujoco.h>
#include "options.h"

/* mj_loadXML with the error folded into one line "PATH: message (line N)"; NULL on failure. */
mjModel *rl_mj_load(const char *path, char *err, int errlen);

#endif
