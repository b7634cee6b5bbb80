/* collide_convex.c — narrow phase (see rl_narrow.h). */
#include "rl_narrow.h"
