/* oracle.h */
#ifndef RL_ORACLE_H
#define RL_ORACLE_H
#include "harness.h"
#endif
