/* quantities.c — the table of verify's rows (see quantities.h).  Every name a verify stage reports must
 * have an entry: verify refuses to run otherwise, so a new row cannot go undescribed. */
#include "quantities.h"

#include <string.h>
#include "fields.h"

#define REL      RL_VQK_REL
#define COUNT    RL_VQK_COUNT
#define FRACTION RL_VQK_FRACTION
#define SCALED   RL_VQK_SCALED

static const rl_vq_info table[] = {
    /* the smooth stages (verify.c): one registry field each */
    {"xpos", REL, "xpos", 0, "body positions"},
    {"xquat", REL, "xquat", 0, "body quaternions"},
    {"xmat", REL, "xmat", 0, "body rotation matrices"},
    {"xipos", REL, "xipos", 0, "body COM positions"},
    {"ximat", REL, "ximat", 0, "body inertia frames"},
    {"xanchor", REL, "xanchor", 0, "joint anchors"},
    {"xaxis", REL, "xaxis", 0, "joint axes"},
    {"geom_xpos", REL, "geom_xpos", 0, "geom positions"},
    {"geom_xmat", REL, "geom_xmat", 0, "geom rotation matrices"},
    {"subtree_com", REL, "subtree_com", 0, "subtree centres of mass"},
    {"cinert", REL, "cinert", 0, "com-based body inertias"},
    {"cdof", REL, "cdof", 0, "com-based dof motion axes"},
    /* tendons (verify_tendon.c) */
    {"ten_length", REL, "ten_length", 0, "tendon lengths"},
    {"ten_J", REL, "ten_J", 0, "tendon Jacobians, compared dense (ntendon × nv)"},
    {"ten_velocity", REL, "ten_velocity", 0, "tendon velocities"},
    {"ten_length_floor", REL, "ten_length", 0, "f32: the float floor — MuJoCo's pipeline with float storage (float_floor.h) against MuJoCo's ten_length; ten_length is held to max(tolerance, k·floor); pass: measured at every state"},
    {"ten_length_floor_ratio", SCALED, 0, "floors", "f32: ten_length's error over its float floor (taken as at least tolerance/k): ≤ k exactly when ten_length passes"},
    {"ten_J_floor", REL, "ten_J", 0, "f32: the float floor — MuJoCo's pipeline with float storage against MuJoCo's ten_J (dense); ten_J is held to max(tolerance, k·floor); pass: measured at every state"},
    {"ten_J_floor_ratio", SCALED, 0, "floors", "f32: ten_J's error over its float floor (taken as at least tolerance/k): ≤ k exactly when ten_J passes"},
    {"ten_velocity_floor", REL, "ten_velocity", 0, "f32: the float floor — MuJoCo's pipeline with float storage against MuJoCo's ten_velocity; ten_velocity is held to max(tolerance, k·floor); pass: measured at every state"},
    {"ten_velocity_floor_ratio", SCALED, 0, "floors", "f32: ten_velocity's error over its float floor (taken as at least tolerance/k): ≤ k exactly when ten_velocity passes"},
    {"wrap_obj", COUNT, 0, "count", "tendon path points tagged differently (site, pulley, wrap geom) or missing"},
    {"wrap_xpos", REL, "wrap_xpos", 0, "tendon path points, on the tendons whose paths agree point for point"},
    {"actuator_moment", REL, "actuator_moment", 0, "actuator moment arms, dense (nu × nv)"},
    {"M", REL, "qM", 0, "the joint-space inertia matrix, compared dense (nv × nv)"},
    {"cvel", REL, "cvel", 0, "com-based body velocities"},
    {"cdof_dot", REL, "cdof_dot", 0, "time derivatives of cdof"},
    {"qfrc_bias", REL, "qfrc_bias", 0, "bias forces"},
    {"qfrc_bias_floor", REL, "qfrc_bias", 0, "f32: the float floor — MuJoCo's pipeline with float storage (body frames rounded as they are composed down the tree, float_floor.h) against MuJoCo's qfrc_bias; qfrc_bias is held to max(tolerance, k·floor); pass: measured at every state"},
    {"qfrc_bias_floor_ratio", SCALED, 0, "floors", "f32: qfrc_bias's error over its float floor (taken as at least tolerance/k): ≤ k exactly when qfrc_bias passes"},
    {"qfrc_passive", REL, "qfrc_passive", 0, "passive forces"},
    {"qfrc_passive_floor", REL, "qfrc_passive", 0, "f32: the float floor — MuJoCo's pipeline with float storage (body frames rounded as they are composed down the tree, float_floor.h) against MuJoCo's qfrc_passive; qfrc_passive is held to max(tolerance, k·floor); pass: measured at every state"},
    {"qfrc_passive_floor_ratio", SCALED, 0, "floors", "f32: qfrc_passive's error over its float floor (taken as at least tolerance/k): ≤ k exactly when qfrc_passive passes"},
    {"actuator_length", REL, "actuator_length", 0, "actuator lengths"},
    {"actuator_velocity", REL, "actuator_velocity", 0, "actuator velocities"},
    {"actuator_force", REL, "actuator_force", 0, "actuator forces"},
    {"qfrc_actuator", REL, "qfrc_actuator", 0, "actuator forces in joint space"},
    {"qfrc_smooth", REL, "qfrc_smooth", 0, "net unconstrained forces"},
    {"qfrc_smooth_floor", REL, "qfrc_smooth", 0, "f32: the float floor — qfrc_passive − qfrc_bias + qfrc_actuator of MuJoCo's pipeline with float storage against MuJoCo's qfrc_smooth; qfrc_smooth is held to max(tolerance, k·floor); pass: measured at every state"},
    {"qfrc_smooth_floor_ratio", SCALED, 0, "floors", "f32: qfrc_smooth's error over its float floor (taken as at least tolerance/k): ≤ k exactly when qfrc_smooth passes"},
    {"qacc_smooth", REL, "qacc_smooth", 0, "unconstrained accelerations"},
    {"qacc_smooth_dposv", REL, "qacc_smooth", 0, "unconstrained accelerations against LAPACKE_dposv (double) on our own M and qfrc_smooth: the solve alone"},
    {"qacc_smooth_cond", SCALED, 0, "κ₁·ε", "qacc_smooth_dposv's error divided by κ₁(M)·ε (LAPACK dpocon): the solve's accuracy with the conditioning divided out"},
    {"qacc_smooth_floor", REL, "qacc_smooth", 0, "f32: the float floor — MuJoCo's own M and qfrc_smooth rounded to float, solved by LAPACKE_dposv in double, against MuJoCo's qacc_smooth; qacc_smooth is held to max(tolerance, k·floor); pass: measured at every state"},
    {"qacc_smooth_floor_ratio", SCALED, 0, "floors", "f32: qacc_smooth's error over its float floor (the floor taken as at least tolerance/k): ≤ k exactly when qacc_smooth passes"},
    {"qpos", REL, "qpos", 0, "positions after one step"},
    {"qpos_floor", REL, "qpos", 0, "f32, Euler: the float floor of the step's positions — qpos integrated (mj_integratePos) with qvel_floor's velocity, rounded to float, against MuJoCo's step; qpos is held to max(tolerance, k·floor); pass: measured at every state"},
    {"qpos_floor_ratio", SCALED, 0, "floors", "f32, Euler: the step's qpos error over its float floor (taken as at least tolerance/k): ≤ k exactly when qpos passes"},
    {"qvel", REL, "qvel", 0, "velocities after one step"},
    {"qvel_floor", REL, "qvel", 0, "f32, Euler: the float floor of the step — qvel + h·(M + h·diag(damping))⁻¹·qfrc_smooth with MuJoCo's M and forces rounded to float, solved in double, against MuJoCo's step; qvel is held to max(tolerance, k·floor); pass: measured at every state"},
    {"qvel_floor_ratio", SCALED, 0, "floors", "f32, Euler: the step's qvel error over its float floor (taken as at least tolerance/k): ≤ k exactly when qvel passes"},
    {"act_dot", REL, "act_dot", 0, "activation rates (models with activation dynamics)"},
    {"act", REL, "act", 0, "activations after one step (models with activation dynamics)"},
    {"qDeriv", REL, 0, "N·s/m, N·s or N·m·s",
     "∂(passive + actuator − bias)/∂qvel of the implicit integrator (MuJoCo's qDeriv), compared dense (nv × nv), "
     "relative to the larger of its own scale and max diag(M)/h (the step factors M − h·qDeriv)"},
    /* collision (verify_collision.c) */
    {"ncon", COUNT, 0, "count", "contacts in geom pairs whose contact counts differ"},
    {"pair_flips", FRACTION, 0, "1", "fraction of colliding geom pairs whose contact counts differ"},
    {"order", COUNT, 0, "count", "pairs matched with geom1 and geom2 swapped"},
    {"branch", FRACTION, 0, "1", "running fraction of matched contacts on another branch of the routine"},
    {"dist", REL, 0, "1", "contact distance of analytic pairs, relative to the pair's size"},
    {"pos", REL, 0, "1", "contact position of analytic pairs, relative to the pair's size"},
    {"normal", REL, 0, "1", "contact normal of analytic pairs"},
    {"frame", REL, 0, "1", "contact frame of analytic pairs"},
    {"dist_mpr", REL, 0, "1", "contact distance of MPR pairs, relative to the pair's size"},
    {"pos_mpr", REL, 0, "1", "contact position of MPR pairs, relative to the pair's size"},
    {"normal_mpr", REL, 0, "1", "contact normal of MPR pairs"},
    {"friction", REL, 0, "1", "mixed friction coefficients"},
    {"solref", REL, 0, "s, 1", "mixed solver reference (time constant, damping ratio)"},
    {"solimp", REL, 0, "1, 1, m, 1, 1", "mixed solver impedance"},
    {"margin", REL, 0, "m", "mixed contact margin"},
    {"contact_floor_ratio", SCALED, 0, "floors", "f32: the largest error over the contact quantities (dist, pos, normal, frame) judged against their float floor — MuJoCo's own value moving by more than tolerance/k when the geom frames move by one float rounding — in units of that floor; ≤ k"},
    /* constraint rows (verify_constraint.c) */
    {"nefc", COUNT, 0, "count", "constraint rows, |ours − MuJoCo's|"},
    {"ne", COUNT, 0, "count", "equality rows, |ours − MuJoCo's|"},
    {"nf", COUNT, 0, "count", "friction rows, |ours − MuJoCo's|"},
    {"efc_type", COUNT, 0, "count", "rows of another type"},
    {"efc_id", COUNT, 0, "count", "rows made by another element"},
    {"efc_address", COUNT, 0, "count", "contacts pointing at another first row"},
    {"efc_J", REL, "efc_J", 0, "constraint Jacobian"},
    {"efc_pos", REL, "efc_pos", 0, "constraint positions"},
    {"efc_margin", REL, "efc_margin", 0, "row margins"},
    {"efc_frictionloss", REL, "efc_frictionloss", 0, "row friction loss"},
    {"efc_diagApprox", REL, "efc_diagApprox", 0, "approximate diagonal of J M⁻¹ Jᵀ"},
    {"efc_KBIP", REL, "efc_KBIP", 0, "row stiffness, damping, impedance and its slope"},
    {"efc_R", REL, "efc_R", 0, "row regularizers"},
    {"efc_D", REL, "efc_D", 0, "row constraint masses"},
    {"efc_vel", REL, "efc_vel", 0, "constraint velocities"},
    {"efc_aref", REL, "efc_aref", 0, "reference accelerations"},
    {"contact_mu", REL, 0, "1", "the contacts' regularized-cone friction"},
    /* the constraint solve (verify_solve.c) */
    {"qacc_newton", REL, "qacc", 0, "Newton's acceleration against MuJoCo's Newton"},
    {"efc_force_newton", REL, "efc_force", 0, "Newton's row forces against MuJoCo's Newton"},
    {"iter_newton", COUNT, 0, "iterations", "|our Newton iterations − MuJoCo's|"},
    {"cost_newton_excess", REL, 0, "1", "how much our Newton's cost exceeds MuJoCo's, relative to the magnitude of the cost's terms (½aᵀMa + ½a₀ᵀMa₀ + s)"},
    {"qacc_newton_opt", REL, "qacc", 0, "Newton at tolerance 1e-15 against the LAPACK optimum"},
    {"cost_gap_newton", REL, 0, "1", "Newton's cost at tolerance 1e-15 above the optimum's, relative to the magnitude of the cost's terms"},
    {"qacc_mujoco_opt", REL, "qacc", 0, "MuJoCo's Newton at tolerance 1e-15 against the LAPACK optimum"},
    {"qacc_cg", REL, "qacc", 0, "CG's acceleration against MuJoCo's CG"},
    {"qacc_cg_opt", REL, "qacc", 0, "CG at tolerance 1e-15 against the LAPACK optimum"},
    {"qacc_pgs", REL, "qacc", 0, "PGS's acceleration against MuJoCo's PGS (models with solver=pgs)"},
    {"efc_force_pgs", REL, "efc_force", 0, "PGS's row forces against MuJoCo's PGS"},
    {"iter_pgs", COUNT, 0, "iterations", "|our PGS sweeps − MuJoCo's|"},
    {"immobile_rows_J", REL, 0, "1", "with noslip on: the largest Jacobian row (∞-norm, relative to ‖J‖∞) among the rows left out of efc_force_newton because (J·M⁻¹·Jᵀ)_ii is below MuJoCo's 1e-10 clamp; must be rounding-level"},
    {"left_out_rows_immobile", FRACTION, 0, "1",
     "with noslip on: fraction of the rows left out of efc_force_newton because they act on no dof (see immobile_rows_J)"},
    {"newton_dposv", REL, 0, "m/s² or rad/s²", "every Newton system re-solved by LAPACKE_dposv"},
    {"newton_dposv_cond", SCALED, 0, "κ₁·ε", "newton_dposv's error divided by κ₁(H)·ε"},
    /* one whole step (verify_step.c); qpos and qvel are above */
    {"qacc", REL, "qacc", 0, "the step's acceleration"},
    {"left_out", FRACTION, 0, "1", "fraction of the states left out of the step comparison, for any reason"},
    {"left_out_sensitive", FRACTION, 0, "1",
     "fraction of the states left out because they disagree where MuJoCo's own step is not reproducible"},
    {"compared_at_optimum", FRACTION, 0, "1",
     "fraction of the states whose step was compared with both solvers at the optimum (Newton, tolerance 1e-15): "
     "MuJoCo's own step with the model's solver is not reproducible there, its contacts and rows are"},
    {"compared_at_contact_tie", FRACTION, 0, "1",
     "fraction of the states compared with MuJoCo's step taken on the contacts its collision finds on rigidlab's "
     "frames: its own contact count at that state differs between frames 1e-16 apart"},
    /* the reasons a state or pair is left out (collision, solve, step) */
    {"left_out_capacity", FRACTION, 0, "1",
     "fraction of the states left out (constraint: compared on a contact list cut short) because a contact or row "
     "buffer was full"},
    {"left_out_pairs_sensitive", FRACTION, 0, "1",
     "fraction of the colliding geom pairs left out as near ties of MuJoCo's own collision"},
    {"left_out_coincident", FRACTION, 0, "1",
     "fraction of the contacts (both lists) left out because they repeat another contact of their pair to the working precision (box–box clipping can yield one corner twice)"},
};

const rl_vq_info *rl_vq_info_find(const char *name) {
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (!strcmp(table[i].name, name)) return &table[i];
  return NULL;
}

const char *rl_vq_unit(const char *name) {
  const rl_vq_info *q = rl_vq_info_find(name);
  if (!q) return "?";
  if (!q->field) return q->unit;
  const rl_field_info *f = rl_field_find(q->field);
  return f ? f->unit : "?";
}

const char *rl_vq_kind_name(rl_vq_kind k) {
  switch (k) {
  case RL_VQK_REL: return "relative error";
  case RL_VQK_COUNT: return "count";
  case RL_VQK_FRACTION: return "fraction";
  case RL_VQK_SCALED: return "multiple of a bound";
  }
  return "?";
}

void rl_vq_print(FILE *f, int markdown) {
  if (markdown)
    fprintf(
        f,
        "\n## verify quantities\n\nThe rows of `rigidlab verify` (reference/verify/quantities.c): max_abs_err is in "
        "the unit "
        "given (the compared field's, when there is one); max_rel_err is dimensionless. Only relative errors share a "
        "plot axis or the summary's error headline with each other (`rigidlab report`).\n\n"
        "| quantity | kind | compares | unit of max_abs_err | meaning |\n|---|---|---|---|---|\n");
  else fprintf(f, "\nverify quantities: the rows of rigidlab verify\n");
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    const rl_vq_info *q = &table[i];
    if (markdown)
      fprintf(f, "| `%s` | %s | %s%s%s | %s | %s |\n", q->name, rl_vq_kind_name(q->kind), q->field ? "`" : "",
              q->field ? q->field : "–", q->field ? "`" : "", rl_vq_unit(q->name), q->meaning);
    else
      fprintf(f, "  %-18s %-16s %-18s %s\n", q->name, rl_vq_kind_name(q->kind), q->field ? q->field : "-", q->meaning);
  }
}
