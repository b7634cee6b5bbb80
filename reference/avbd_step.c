/* avbd_step.c — how the harness steps AVBD (see avbd_step.h). */
#include "avbd_step.h"

int rl_avbd_dynamic_pairs(const rl_model *m) {
  for (int g1 = 0; g1 < m->ngeom; g1++)
    for (int g2 = g1 + 1; g2 < m->ngeom; g2++) {
      int b1 = m->geom_bodyid[g1], b2 = m->geom_bodyid[g2];
      if (b1 == b2 || m->body_weldid[b1] == 0 || m->body_weldid[b2] == 0) continue;
      if ((m->geom_contype[g1] & m->geom_conaffinity[g2]) || (m->geom_contype[g2] & m->geom_conaffinity[g1])) return 1;
    }
  return 0;
}

int rl_avbd_harness_contacts(rl_avbd *am, const rl_model *m) {
  am->prm.contacts = rl_avbd_dynamic_pairs(m) ? RL_AVBD_CONTACTS_DATA : RL_AVBD_CONTACTS_GROUND;
  return am->prm.contacts;
}

rl_status rl_avbd_harness_step(rl_avbd *am, const rl_model *m, rl_data *d) {
  if (am->prm.contacts == RL_AVBD_CONTACTS_DATA) {
    rl_avbd_to_generalized(am, m, d);
    rl_kinematics(m, d);
    rl_collision(m, d);
    rl_avbd_load_contacts(am, m, d);
  }
  rl_status st = rl_avbd_step(am, m, d);
  rl_avbd_to_generalized(am, m, d);
  return st;
}
