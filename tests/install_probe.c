/* install_probe.c — a program outside the rigidlab tree, built against the installed libraries and headers
 * only (`cc probe.c $(pkg-config --cflags --libs rigidlab64)`, see test_install.sh).  It calls two engine
 * functions and checks their results:
 *   rl_solref_kb: solref = (timeconst τ, dampratio ζ), impedance bound dmax →
 *       stiffness K = 1 / (dmax² τ² ζ²), damping B = 2 / (dmax τ)          (MuJoCo's reference spring)
 *   rl_model_alloc / rl_data_alloc: a model of the world body alone, its data, freed again.
 * Exit 0 and one line "PREC ok K B" when both agree, 1 otherwise. */
#include <math.h>
#include <stdio.h>

#include "rl_constraint.h"
#include "rl_model.h"

int main(void) {
  const real solref[2] = {0.02, 1.0}, dmax = 0.9;
  real K, B;
  rl_solref_kb(solref, dmax, 0, &K, &B);
  const double Kw = 1.0 / (0.9 * 0.9 * 0.02 * 0.02), Bw = 2.0 / (0.9 * 0.02);
  const double tol = sizeof(real) == sizeof(double) ? 1e-12 : 1e-5;
  if (!(fabs(K - Kw) <= tol * Kw) || !(fabs(B - Bw) <= tol * Bw)) {
    printf("%s: solref_kb K = %.17g (want %.17g), B = %.17g (want %.17g)\n", RL_PREC_NAME, (double)K, Kw, (double)B,
           Bw);
    return 1;
  }
  rl_model sizes = {0};
  sizes.nbody = 1;
  rl_model *m = rl_model_alloc(&sizes);
  rl_data *d = m ? rl_data_alloc(m) : NULL;
  if (!m || !d || m->nbody != 1) {
    printf("%s: rl_model_alloc / rl_data_alloc of the world body failed\n", RL_PREC_NAME);
    return 1;
  }
  rl_data_free(d);
  rl_model_free(m);
  printf("%s ok %.9g %.9g\n", RL_PREC_NAME, (double)K, (double)B);
  return 0;
}
