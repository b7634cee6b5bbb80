/* avbd_step.h — how the harness steps AVBD (sim, bench, the study kinds), compiled per precision.
 *
 * Contacts: a model whose geoms can collide between two dynamic bodies (contype/conaffinity, e.g. the
 * boxes of box_stack) takes every contact from rigidlab's collision (RL_AVBD_CONTACTS_DATA: before each
 * step rl_avbd_to_generalized, rl_kinematics, rl_collision, rl_avbd_load_contacts, so they describe the
 * AVBD poses); any other model uses AVBD's own ground contacts (RL_AVBD_CONTACTS_GROUND, the default),
 * which cannot see a dynamic–dynamic pair. */
#ifndef RL_AVBD_STEP_H
#define RL_AVBD_STEP_H

#include "rl_avbd.h"

#define rl_avbd_dynamic_pairs RL_NAME(avbd_dynamic_pairs)
#define rl_avbd_harness_contacts RL_NAME(avbd_harness_contacts)
#define rl_avbd_harness_step RL_NAME(avbd_harness_step)

/* 1 if two geoms on different dynamic bodies pass the contype/conaffinity filter */
int rl_avbd_dynamic_pairs(const rl_model *m);
/* am->prm.contacts by the rule above; returns it */
int rl_avbd_harness_contacts(rl_avbd *am, const rl_model *m);
/* one step (contacts per am->prm.contacts, then rl_avbd_step) and qpos/qvel written back
   (rl_avbd_to_generalized); the status of rl_avbd_step */
rl_status rl_avbd_harness_step(rl_avbd *am, const rl_model *m, rl_data *d);

#endif
