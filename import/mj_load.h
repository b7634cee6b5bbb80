/* mj_load.h — precision-free MuJoCo helpers shared by the harness: loading with a one-line error,
 * and option overrides applied to the mjModel before import (so MuJoCo and rigidlab see the same). */
#ifndef RL_MJ_LOAD_H
#define RL_MJ_LOAD_H

#include <mujoco/mujoco.h>

/* mj_loadXML with the error folded into one line "PATH: message (line N)"; NULL on failure. */
mjModel *rl_mj_load(const char *path, char *err, int errlen);

/* Apply one KEY=VALUE override to mjm->opt (or to rigidlab-only options kept in *ext).
   Returns 0 on success, else writes a one-line message listing the allowed keys or values. */
typedef struct rl_ext_options {
  int ls_iterations;     /* rigidlab only; MuJoCo 2.2.2 hard-codes its line search */
  double ls_tolerance;
  int max_contacts;       /* contact capacity; 0 = the model's nconmax, else max(256, 8·ngeom) */
  int collision;          /* 0 manifold (default), 1 mujoco (MuJoCo 2.2.2's single MPR point) */
  int contact_resolution; /* 0 auto, 1 convex, 2 signorini */
  int newton_factor;      /* 0 auto, 1 dense, 2 skyline, 3 aba */
  int avbd_iterations;    /* AVBD sweep budget; 0 = the engine's default */
  double avbd_tolerance;  /* AVBD stopping tolerance of length rows (m); 0 = the engine's default */
  double avbd_cheb_rho;   /* AVBD Chebyshev acceleration of the joint multipliers; 0 = off */
} rl_ext_options;
void rl_ext_options_default(rl_ext_options *ext);
int rl_mj_apply_opt(mjModel *mjm, rl_ext_options *ext, const char *kv, char *err, int errlen);
/* "KEY=VALUE" list of every option the engine reads, for --help. */
const char *rl_mj_opt_help(void);

#endif
