/* oracle.c — independent signed distance of two convex shapes (see oracle.h). */
#include <math.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multimin.h>
#include <gsl/gsl_vector.h>
#include "oracle.h"

enum { O_PLANE = 0, O_SPHERE = 2, O_CAPSULE = 3, O_ELLIPSOID = 4, O_CYLINDER = 5, O_BOX = 6, O_MESH = 7 };

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static double norm3(const double a[3]) { return sqrt(dot3(a, a)); }
static double sgn(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }

/* local support of a unit local direction d: h and the point (see oracle.h for the shapes)
 *   sphere r·d;  capsule r·d + sign(d_z) h e_z;  ellipsoid S²d/‖Sd‖ (h = ‖Sd‖);
 *   cylinder r·d_xy/‖d_xy‖ + sign(d_z) h e_z (h = r‖d_xy‖ + h|d_z|);  box sign(d_i) s_i;  mesh max vertex */
static double support_local(const rl_oracle_shape *s, const double d[3], double x[3]) {
  const double *z = s->size;
  switch (s->type) {
  case O_SPHERE:
    for (int i = 0; i < 3; i++) x[i] = z[0] * d[i];
    return z[0];
  case O_CAPSULE:
    for (int i = 0; i < 3; i++) x[i] = z[0] * d[i];
    x[2] += sgn(d[2]) * z[1];
    return z[0] + z[1] * fabs(d[2]);
  case O_ELLIPSOID: {
    double sd[3] = {z[0] * d[0], z[1] * d[1], z[2] * d[2]}, n = norm3(sd);
    for (int i = 0; i < 3; i++) x[i] = n > 0 ? z[i] * sd[i] / n : 0;
    return n;
  }
  case O_CYLINDER: {
    double r = hypot(d[0], d[1]);
    x[0] = r > 0 ? z[0] * d[0] / r : 0;
    x[1] = r > 0 ? z[0] * d[1] / r : 0;
    x[2] = sgn(d[2]) * z[1];
    return z[0] * r + z[1] * fabs(d[2]);
  }
  case O_BOX:
    for (int i = 0; i < 3; i++) x[i] = sgn(d[i]) * z[i];
    return z[0] * fabs(d[0]) + z[1] * fabs(d[1]) + z[2] * fabs(d[2]);
  case O_MESH: {
    double best = -INFINITY;
    x[0] = x[1] = x[2] = NAN;
    for (int i = 0; i < s->nvert; i++) {
      double v = dot3(d, s->vert + 3 * i);
      if (v > best) {
        best = v;
        for (int k = 0; k < 3; k++) x[k] = s->vert[3 * i + k];
      }
    }
    return best;
  }
  default: x[0] = x[1] = x[2] = NAN; return NAN;
  }
}

/* world support: h(u) = ‖u‖·(û·p + h_local(Rᵀû)), point x = p + R·x_local */
double rl_oracle_support(const rl_oracle_shape *s, const double u[3], double x[3]) {
  double n = norm3(u), d[3], xl[3], xw[3];
  if (s->type == O_PLANE) return INFINITY;
  if (!(n > 0)) return NAN;
  double uh[3] = {u[0] / n, u[1] / n, u[2] / n};
  const double *R = s->mat;
  for (int i = 0; i < 3; i++) d[i] = R[i] * uh[0] + R[3 + i] * uh[1] + R[6 + i] * uh[2];
  double hl = support_local(s, d, xl);
  for (int i = 0; i < 3; i++) xw[i] = s->pos[i] + R[3 * i] * xl[0] + R[3 * i + 1] * xl[1] + R[3 * i + 2] * xl[2];
  if (x)
    for (int i = 0; i < 3; i++) x[i] = xw[i];
  return n * (dot3(uh, s->pos) + hl);
}

/* separating gap along unit u: g(u) = −h_B(−u) − h_A(u) */
static double gap(const rl_oracle_shape *a, const rl_oracle_shape *b, const double u[3]) {
  double nu[3] = {-u[0], -u[1], -u[2]};
  return -rl_oracle_support(b, nu, NULL) - rl_oracle_support(a, u, NULL);
}

/* tangent chart around u0: u(a, b) = (u0 + a e1 + b e2)/‖·‖ */
typedef struct {
  const rl_oracle_shape *a, *b;
  double u0[3], e1[3], e2[3];
} chart;

static void chart_init(chart *c, const double u0[3]) {
  double n = norm3(u0);
  for (int i = 0; i < 3; i++) c->u0[i] = u0[i] / n;
  /* e1 ⟂ u0 from the world axis least aligned with u0, e2 = u0 × e1 */
  int k = 0;
  for (int i = 1; i < 3; i++)
    if (fabs(c->u0[i]) < fabs(c->u0[k])) k = i;
  double ax[3] = {0, 0, 0};
  ax[k] = 1;
  double t = dot3(ax, c->u0);
  for (int i = 0; i < 3; i++) c->e1[i] = ax[i] - t * c->u0[i];
  n = norm3(c->e1);
  for (int i = 0; i < 3; i++) c->e1[i] /= n;
  c->e2[0] = c->u0[1] * c->e1[2] - c->u0[2] * c->e1[1];
  c->e2[1] = c->u0[2] * c->e1[0] - c->u0[0] * c->e1[2];
  c->e2[2] = c->u0[0] * c->e1[1] - c->u0[1] * c->e1[0];
}

static void chart_point(const chart *c, double a, double b, double u[3]) {
  for (int i = 0; i < 3; i++) u[i] = c->u0[i] + a * c->e1[i] + b * c->e2[i];
  double n = norm3(u);
  for (int i = 0; i < 3; i++) u[i] /= n;
}

/* objective for the minimizer: −g(u(a, b)) */
static double chart_objective(const gsl_vector *x, void *params) {
  const chart *c = params;
  double u[3];
  chart_point(c, gsl_vector_get(x, 0), gsl_vector_get(x, 1), u);
  return -gap(c->a, c->b, u);
}

/* Nelder–Mead (nmsimplex2) from the chart origin around u0 with initial step `step`, to simplex size
   `tol` or `maxit` iterations; the best direction in u, its gap returned. */
static double nm_maximize(const rl_oracle_shape *a, const rl_oracle_shape *b, const double u0[3], double step,
                          double tol, int maxit, double u[3]) {
  chart c;
  c.a = a;
  c.b = b;
  chart_init(&c, u0);
  gsl_multimin_function f = {chart_objective, 2, &c};
  gsl_vector *x = gsl_vector_calloc(2), *ss = gsl_vector_alloc(2);
  gsl_vector_set_all(ss, step);
  gsl_multimin_fminimizer *m = gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, 2);
  gsl_multimin_fminimizer_set(m, &f, x, ss);
  for (int it = 0; it < maxit; it++) {
    if (gsl_multimin_fminimizer_iterate(m)) break;
    if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(m), tol) != GSL_CONTINUE) break;
  }
  const gsl_vector *best = gsl_multimin_fminimizer_x(m);
  chart_point(&c, gsl_vector_get(best, 0), gsl_vector_get(best, 1), u);
  double g = gap(a, b, u);
  gsl_multimin_fminimizer_free(m);
  gsl_vector_free(x);
  gsl_vector_free(ss);
  return g;
}

static int shape_finite(const rl_oracle_shape *s) {
  for (int i = 0; i < 3; i++)
    if (!isfinite(s->pos[i]) || !isfinite(s->size[i])) return 0;
  for (int i = 0; i < 9; i++)
    if (!isfinite(s->mat[i])) return 0;
  if (s->type == O_MESH) {
    if (!s->vert || s->nvert < 1) return 0;
    for (int i = 0; i < 3 * s->nvert; i++)
      if (!isfinite(s->vert[i])) return 0;
  }
  return 1;
}

double rl_oracle_sd(const rl_oracle_shape *a, const rl_oracle_shape *b, double normal[3]) {
  gsl_error_handler_t *old = gsl_set_error_handler_off();
  double result = NAN;
  normal[0] = normal[1] = normal[2] = NAN;
  if (!shape_finite(a) || !shape_finite(b) || b->type == O_PLANE || b->type < O_SPHERE || b->type > O_MESH ||
      (a->type != O_PLANE && (a->type < O_SPHERE || a->type > O_MESH)))
    goto done;
  if (a->type == O_PLANE) {
    /* half-space below the plane z = 0 of a: sd = −h_B(−n) − n·p0, normal n */
    double n[3] = {a->mat[2], a->mat[5], a->mat[8]}, nn[3] = {-n[0], -n[1], -n[2]};
    result = -rl_oracle_support(b, nn, NULL) - dot3(n, a->pos);
    for (int i = 0; i < 3; i++) normal[i] = n[i];
    goto done;
  }
  /* global stage: the 26 cube directions and the centre line both ways */
  double best = -INFINITY, ubest[3] = {1, 0, 0}, u[3];
  double starts[28][3];
  int ns = 0;
  for (int x = -1; x <= 1; x++)
    for (int y = -1; y <= 1; y++)
      for (int z = -1; z <= 1; z++)
        if (x || y || z) {
          starts[ns][0] = x;
          starts[ns][1] = y;
          starts[ns][2] = z;
          ns++;
        }
  double cl[3] = {b->pos[0] - a->pos[0], b->pos[1] - a->pos[1], b->pos[2] - a->pos[2]};
  if (norm3(cl) > 0) {
    for (int i = 0; i < 3; i++) {
      starts[ns][i] = cl[i];
      starts[ns + 1][i] = -cl[i];
    }
    ns += 2;
  }
  /* coarse maxima from every start; the two best are polished */
  double cand[2][3] = {{1, 0, 0}, {1, 0, 0}}, cg[2] = {-INFINITY, -INFINITY};
  for (int k = 0; k < ns; k++) {
    double g = nm_maximize(a, b, starts[k], 0.3, 1e-5, 400, u);
    int slot = g > cg[0] ? 0 : (g > cg[1] ? 1 : -1);
    if (slot == 0) {
      cg[1] = cg[0];
      for (int i = 0; i < 3; i++) cand[1][i] = cand[0][i];
    }
    if (slot >= 0) {
      cg[slot] = g;
      for (int i = 0; i < 3; i++) cand[slot][i] = u[i];
    }
  }
  /* polish: restarts around each candidate with shrinking steps */
  static const double steps[4] = {1e-2, 1e-4, 1e-6, 1e-8};
  for (int c = 0; c < 2; c++) {
    if (!isfinite(cg[c])) continue;
    double cb = cg[c], cu[3] = {cand[c][0], cand[c][1], cand[c][2]};
    for (int k = 0; k < 4; k++) {
      double g = nm_maximize(a, b, cu, steps[k], 1e-15, 2000, u);
      if (g >= cb) {
        cb = g;
        for (int i = 0; i < 3; i++) cu[i] = u[i];
      }
    }
    if (cb > best) {
      best = cb;
      for (int i = 0; i < 3; i++) ubest[i] = cu[i];
    }
  }
  result = best;
  for (int i = 0; i < 3; i++) normal[i] = ubest[i];
done:
  gsl_set_error_handler(old);
  return result;
}
