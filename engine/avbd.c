/* avbd.c — AVBD solver in maximal coordinates (issue 5). */
#include "rl_engine.h"
