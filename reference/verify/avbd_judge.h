/* avbd_judge.h — one AVBD step judged against its dense reference (avbd_ref.h), compiled per precision.
 *
 * The step is taken by rl_avbd_step between rl_avbd_ref_begin and rl_avbd_ref_finish, and the stop it made is
 * classified: the reference omits a term of the step (omitted), the reference's Newton did not converge
 * (ref_unconverged), or, flagged converged by the stopping test with a converged reference covering every term,
 * checked: the iterate's distance to the reference solution dx (m), dth (rad) against the distance the test claims
 * (stat.tol_lin, stat.tol_ang), ratio = max(dx / tol_lin, dth / tol_ang), a false stop when ratio > 1.
 * A step that ends non-finite is undone by rl_avbd_step (rl_avbd.h: the step-start poses, zero velocity, its time
 * passes) and is not judged (nonfinite).  The one judgement of tools/avbd-own-stops and of the convergence study
 * along AVBD's own trajectory (study_prec.c: study_own_stops_avbd). */
#ifndef RL_AVBD_JUDGE_H
#define RL_AVBD_JUDGE_H

#include "rl_avbd.h"

#define rl_avbd_step_judgement RL_NAME(avbd_step_judgement)
#define rl_avbd_step_judged    RL_NAME(avbd_step_judged)

typedef struct rl_avbd_step_judgement {
  int nonfinite;          /* rl_avbd_step returned RL_ERR_NUMERIC: the step undone, nothing below judged */
  int solved;             /* the reference was set up and solved (rl_avbd_ref_begin and _finish returned 0) */
  int omitted;            /* solved, and the reference omits a term of the step (rl_avbd_ref.omitted) */
  int ref_unconverged;    /* solved, no term omitted, the reference's Newton did not converge */
  int checked;            /* flagged converged, solved, no term omitted, the reference converged */
  int basis;              /* rl_avbd_ref.basis when solved, else 0 */
  int refined;            /* rl_avbd_ref.refined when solved, else 0 */
  int ref_iterations;     /* the reference's Newton iterations when solved, else 0 */
  double ref_step;        /* ‖δz‖∞ of its last Newton step when solved, else 0 */
  double stationarity[2]; /* its ‖g + Jᵀλ‖∞, force rows (N) and torque rows (N m), when solved, else 0 */
  double dx, dth;         /* the iterate's distance to the reference solution (m, rad); NaN unless checked */
  double ratio;           /* max(dx / stat.tol_lin, dth / stat.tol_ang); NaN unless checked */
  int stop_false;         /* checked and ratio > 1: the iterate farther from the solution than the test claims */
} rl_avbd_step_judgement;

/* One step of am on (m, d) (rl_avbd_step, d: the step-start generalized state) judged against its dense
   reference into *j (see above).  Returns rl_avbd_step's status: RL_OK, or RL_ERR_NUMERIC for a non-finite step
   (undone, j->nonfinite = 1). */
rl_status rl_avbd_step_judged(rl_avbd *am, const rl_model *m, rl_data *d, rl_avbd_step_judgement *j);

#endif
