/* rl_names_constraint.h — precision-carrying names of the constraint module (see rl_names.h). */
#ifndef RL_NAMES_CONSTRAINT_H
#define RL_NAMES_CONSTRAINT_H

#endif
