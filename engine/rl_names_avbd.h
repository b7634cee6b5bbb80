/* rl_names_avbd.h — precision-carrying names of the AVBD module (see rl_names.h). */
#ifndef RL_NAMES_AVBD_H
#define RL_NAMES_AVBD_H

/* types */
#define rl_avbd RL_NAME(avbd)
#define rl_avbd_param RL_NAME(avbd_param)
#define rl_avbd_row RL_NAME(avbd_row)
#define rl_avbd_contact RL_NAME(avbd_contact)
#define rl_avbd_stat RL_NAME(avbd_stat)
#define rl_avbd_pose RL_NAME(avbd_pose)
#define rl_avbd_joint RL_NAME(avbd_joint)
#define rl_avbd_bam RL_NAME(avbd_bam)
#define rl_avbd_load RL_NAME(avbd_load)

/* functions (engine/avbd.c) */
#define rl_avbd_build RL_NAME(avbd_build)
#define rl_avbd_free RL_NAME(avbd_free)
#define rl_avbd_from_generalized RL_NAME(avbd_from_generalized)
#define rl_avbd_to_generalized RL_NAME(avbd_to_generalized)
#define rl_avbd_load_contacts RL_NAME(avbd_load_contacts)
#define rl_avbd_step RL_NAME(avbd_step)
#define rl_avbd_openmp RL_NAME(avbd_openmp)

#endif
