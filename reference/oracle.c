/* oracle.c — reference (see oracle.h). */
#include "oracle.h"
