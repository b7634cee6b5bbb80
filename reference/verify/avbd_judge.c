/* avbd_judge.c — one AVBD step judged against its dense reference (avbd_judge.h). */
#include <math.h>
#include <string.h>
#include "avbd_judge.h"
#include "avbd_ref.h"

/* avbd_judge.h: the reference set up at the step start and solved after the step from AVBD's final iterate, then
   omitted / ref_unconverged / checked, and for a checked step dx, dth (rl_avbd_ref_distance),
   ratio = max(dx / tol_lin, dth / tol_ang), stop_false = ratio > 1 */
rl_status rl_avbd_step_judged(rl_avbd *am, const rl_model *m, rl_data *d, rl_avbd_step_judgement *j) {
  memset(j, 0, sizeof *j);
  j->dx = j->dth = j->ratio = NAN;
  rl_avbd_ref ref;
  int begun = rl_avbd_ref_begin(&ref, am, m, d) == 0;
  rl_status st = rl_avbd_step(am, m, d);
  if (st != RL_OK) {
    j->nonfinite = 1;
    rl_avbd_ref_free(&ref);
    return st;
  }
  j->solved = begun && rl_avbd_ref_finish(&ref, am, m, d) == 0;
  if (j->solved) {
    j->omitted = ref.omitted != 0;
    j->ref_unconverged = !j->omitted && !ref.converged;
    j->checked = am->stat.converged && !j->omitted && !j->ref_unconverged;
    j->basis = ref.basis;
    j->refined = ref.refined;
    j->ref_iterations = ref.iterations;
    j->ref_step = ref.step;
    j->stationarity[0] = ref.stationarity[0];
    j->stationarity[1] = ref.stationarity[1];
  }
  if (j->checked) {
    rl_avbd_ref_distance(&ref, am, &j->dx, &j->dth);
    j->ratio = fmax(j->dx / (double)am->stat.tol_lin, j->dth / (double)am->stat.tol_ang);
    j->stop_false = j->ratio > 1;
  }
  rl_avbd_ref_free(&ref);
  return st;
}
