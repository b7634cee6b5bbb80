/* lapack_ref.h */
#ifndef RL_LAPACK_REF_H
#define RL_LAPACK_REF_H
#include "harness.h"
#endif
