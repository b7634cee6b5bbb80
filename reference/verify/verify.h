/* verify.h — the pieces of `rigidlab verify` that stage modules share (compiled per precision).
 *
 * The smooth stages live in verify.c; each later stage (collision, constraint, solve, step) is a
 * module in its own file (verify_<stage>.c) exporting an rl_vmodule: per state it compares
 * rigidlab with MuJoCo and records one error per quantity with rl_vq_compare / rl_vq_record.
 * verify.c reduces, prints and writes the CSV rows. */
#ifndef RL_VERIFY_H
#define RL_VERIFY_H

#include "pair.h"

#define rl_vq                 RL_NAME(vq)
#define rl_vq_compare         RL_NAME(vq_compare)
#define rl_vq_record          RL_NAME(vq_record)
#define rl_vq_mj_collision_on RL_NAME(vq_mj_collision_on)
#define rl_vq_contacts_for_actuation RL_NAME(vq_contacts_for_actuation)
#define rl_vq_copy_contact    RL_NAME(vq_copy_contact)
#define rl_vctx               RL_NAME(vctx)
#define rl_vscratch           RL_NAME(vscratch)
#define rl_vq_scratch         RL_NAME(vq_scratch)
#define rl_vmodule            RL_NAME(vmodule)
#define rl_vmod_collision     RL_NAME(vmod_collision)
#define rl_vmod_constraint    RL_NAME(vmod_constraint)
#define rl_vmod_solve         RL_NAME(vmod_solve)
#define rl_vmod_step          RL_NAME(vmod_step)
#define rl_vmod_tendon        RL_NAME(vmod_tendon)

/* one row of the verify table */
typedef struct rl_vq {
  int stage;
  const char *name;
  double max_abs, max_rel;
  double scale;      /* max over states of ‖mujoco‖∞ */
  double *err, *mag; /* per state */
  int n;
  double tol;   /* 0: the stage's tolerance (tolerances.h); else this quantity's own */
  int absolute; /* 1: judged on max_abs (e.g. a count mismatch), not max_rel */
  int last;     /* 1: a running value: the table reports the last state's, not the max */
  int absent;   /* 1: the model has nothing this row compares (no activations): no row is printed */
} rl_vq;

/* record err = ‖ours − ref‖∞ and mag = ‖ref‖∞ for the current state */
void rl_vq_compare(rl_vq *q, const real *ours, const double *ref, long n);
/* record an error and a magnitude computed by the module */
void rl_vq_record(rl_vq *q, double err, double mag);
/* MuJoCo's collision of qpos on rigidlab's frames: DST's kinematics at QPOS with its body and geom poses replaced
   by d's (from rl_kinematics at the same qpos), then mj_collision: the same collision code as rigidlab's on
   inputs equal to about 1e-16 */
void rl_vq_mj_collision_on(const mjModel *mjm, mjData *dst, const double *qpos, const rl_data *d);

/* MuJoCo's contact → rigidlab's (geometry, mixed parameters, exclude flag; efc_address −1) */
void rl_vq_copy_contact(rl_contact *dst, const mjContact *src);
/* When the model has a body (adhesion) transmission, whose moment reads the contact list: d's contacts become
   MuJoCo's from mjd (its mj_forward on the same state), so the transmission is compared on identical inputs.
   rigidlab's own list can differ from that one at exact geometric ties (a capsule whose axis lies in a box
   face: the 1e-16 differences between the two kinematics pick the face normal or the side normal, both at
   the same depth); the collision stage compares the lists on identical frames.  1 if done, 0 without one. */
int rl_vq_contacts_for_actuation(const rl_model *m, rl_data *d, const mjData *mjd);

/* MuJoCo data that verify's stages share within one state.  Every mjData is as large as the model's buffers say
   (MuJoCo's composite/particle.xml asks for a 400 MB stack, and making one touches all of it: seconds on a busy
   machine), so verify makes each of these once, on first use, and every stage borrows them for the duration of
   one state: nothing in them survives from one stage's state to the next.  Any copy of the pair's mjModel that
   differs only in its options (a solver, a disable flag) may run on them: mjData depends on the sizes alone. */
#define RL_VSCRATCH 3
typedef struct rl_vscratch {
  const mjModel *mjm;           /* the pair's model (sizes) */
  mjData *d[RL_VSCRATCH];       /* made on first use by rl_vq_scratch, freed by verify */
} rl_vscratch;
/* scratch data K (0 ≤ K < RL_VSCRATCH) of the pool, made on first use; NULL when out of memory */
mjData *rl_vq_scratch(rl_vscratch *s, int k);

/* what a module sees for one state: MuJoCo's mjd holds mj_forward at the state; rigidlab's d holds
   the same state (rl_set_state), nothing computed yet */
typedef struct rl_vctx {
  const rl_pair *p;
  rl_data *d;
  mjData *mjd;
  const double *qpos, *qvel, *ctrl;
  rl_vscratch *scratch; /* MuJoCo data the module may use within one state (see rl_vscratch) */
  void *own;            /* the module's scratch, made by init, freed by fini */
} rl_vctx;

typedef struct rl_vmodule {
  int stage;                           /* RL_STAGE_* */
  int nq;                              /* quantities (rows) */
  const char *const *names;            /* nq names */
  const double *tol;                   /* nq tolerances or NULL (stage tolerance); a 0 entry means stage tolerance */
  const int *absolute;                 /* nq flags or NULL */
  const int *last;                     /* nq flags or NULL (running values, see rl_vq.last) */
  int (*init)(rl_vctx *c);             /* 0 on success; may be NULL */
  void (*state)(rl_vctx *c, rl_vq *q); /* q: this module's nq rows */
  void (*fini)(rl_vctx *c);            /* may be NULL */
  int reuse_forward;                   /* 1: when the smooth table ran, the module reads MuJoCo's mjd as that
                                          table left it (mj_forward at the state) and verify runs no forward
                                          of its own: every mj_forward moves MuJoCo's solver warm start, so an
                                          extra one would change what the later modules compare */
} rl_vmodule;

extern const rl_vmodule rl_vmod_collision;
extern const rl_vmodule rl_vmod_constraint;
extern const rl_vmodule rl_vmod_solve;
extern const rl_vmodule rl_vmod_step;
extern const rl_vmodule rl_vmod_tendon;

#endif
