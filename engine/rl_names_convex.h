/* rl_names_convex.h — precision-carrying names of the convex module (see rl_names.h).
 * collide_convex.c exports only rl_collide_convex and rl_support, both named in rl_narrow.h;
 * everything else in it is static.  New public symbols of the module go here. */
#ifndef RL_NAMES_CONVEX_H
#define RL_NAMES_CONVEX_H

#endif
