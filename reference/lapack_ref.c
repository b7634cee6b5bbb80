/* lapack_ref.c — reference (see lapack_ref.h). */
#include "lapack_ref.h"
