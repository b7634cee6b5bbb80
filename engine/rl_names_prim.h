/* rl_names_prim.h — precision-carrying names of the prim module (see rl_names.h). */
#ifndef RL_NAMES_PRIM_H
#define RL_NAMES_PRIM_H

#endif
