/* rl_names_avbd.h — precision-carrying names of the AVBD module (see rl_names.h). */
#ifndef RL_NAMES_AVBD_H
#define RL_NAMES_AVBD_H

#endif
