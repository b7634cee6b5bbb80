/* rl_names_constraint.h — precision-carrying names of the constraint module (see rl_names.h). */
#ifndef RL_NAMES_CONSTRAINT_H
#define RL_NAMES_CONSTRAINT_H

#define rl_make_impedance RL_NAME(make_impedance)
#define rl_reference_constraint RL_NAME(reference_constraint)
#define rl_solimp_impedance RL_NAME(solimp_impedance)
#define rl_solref_kb RL_NAME(solref_kb)

#endif
