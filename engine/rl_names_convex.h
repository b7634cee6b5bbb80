/* rl_names_convex.h — precision-carrying names of the convex module (see rl_names.h). */
#ifndef RL_NAMES_CONVEX_H
#define RL_NAMES_CONVEX_H

#endif
