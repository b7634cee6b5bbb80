/* options.h — every option a user can set, one row each: `--opt KEY=VALUE` on the command line and a
 * key of an experiment spec's [sweep] section are the same thing.  The parser, the one-line error on a
 * bad value, `rigidlab --help-options` (and its Markdown form pasted into README.md), rl_option's defaults
 * and the import's copy of MuJoCo's options into rl_option are all generated from RL_OPTION_TABLE.
 *
 * Where a value goes (the OWNER column):
 *   MJ  MuJoCo's own option: written to mjModel.opt.FIELD before import, so MuJoCo and rigidlab run the
 *       same model; the import copies it into rl_option.FIELD.
 *   RL  rigidlab's own option (MuJoCo 2.2.2 has none): written to rl_option.FIELD, which the import puts
 *       into the model as it is.
 * This header is precision-free; the rl_option half (per precision) is declared in rl_import.h. */
#ifndef RL_OPTIONS_H
#define RL_OPTIONS_H

#include <math.h>
#include <stdio.h>
#include <mujoco/mujoco.h>

/* Accepted ranges of REAL and INT rows: {lo, hi, lo excluded, hi excluded}.  Every REAL value is also
   finite (below 1e300 in magnitude); INT ranges are closed. */
#define RL_OPT_FINITE \
  { -INFINITY, INFINITY, 0, 0 }
#define RL_OPT_GT(lo) \
  { lo, INFINITY, 1, 0 }
#define RL_OPT_GE(lo) \
  { lo, INFINITY, 0, 0 }
#define RL_OPT_IN(lo, hi) \
  { lo, hi, 0, 0 }
#define RL_OPT_IN_HALFOPEN(lo, hi) \
  { lo, hi, 0, 1 } /* [lo, hi) */
#define RL_OPT_IN_LOOPEN(lo, hi) \
  { lo, hi, 1, 0 } /* (lo, hi] */
#define RL_OPT_NAMED \
  { 0, 0, 0, 0 } /* ENUM and FLAGS rows: the VALUES list says what is allowed */
/* the DEFAULT of an MJ row: whatever the model's <option> says */
#define RL_OPT_MODEL NAN
/* cap of every iteration budget: far above any useful value, far below int overflow */
#define RL_OPT_MAXITER 1000000
/* cap of max_contacts: 10 constraint rows per contact stay far below INT_MAX */
#define RL_OPT_MAXCONTACTS 1000000
/* cap of the time step (s): a larger step is no simulation of a rigid body */
#define RL_OPT_MAXTIMESTEP 1
/* cap of a run's step count (sim --steps, a spec's steps, duration / dt): far above any study, far below a run
   that never ends */
#define RL_MAX_STEPS 100000000L

/* X(KEY, TYPE, OWNER, FIELD, RANGE, VALUES, DEFAULT, DOC)
   TYPE     REAL a number; INT an integer; ENUM one name of VALUES (comma-separated), stored as its index;
            FLAGS a comma-separated subset of VALUES, stored as bits (bit k for the k-th name); VEC3 three
            comma-separated numbers X,Y,Z
   FIELD    the field of rl_option (and of mjOption for MJ rows) that receives the value
   DEFAULT  rl_option's default of an RL row (ENUM: the index; outside RANGE: the option is unset and DOC
            says what the engine then does); RL_OPT_MODEL for MJ rows */
#define RL_OPTION_TABLE(X)                                                                                          \
  X(timestep, REAL, MJ, timestep, RL_OPT_IN_LOOPEN(0, RL_OPT_MAXTIMESTEP), NULL, RL_OPT_MODEL, "time step h (s)")   \
  X(gravity, VEC3, MJ, gravity, RL_OPT_FINITE, NULL, RL_OPT_MODEL, "gravitational acceleration (m/s²)")             \
  X(integrator, ENUM, MJ, integrator, RL_OPT_NAMED, "euler,rk4,implicit", RL_OPT_MODEL, "time integrator (AVBD ignores it)") \
  X(cone, ENUM, MJ, cone, RL_OPT_NAMED, "pyramidal,elliptic", RL_OPT_MODEL, "friction cone")                        \
  X(solver, ENUM, MJ, solver, RL_OPT_NAMED, "pgs,cg,newton", RL_OPT_MODEL,                                          \
    "constraint solver: pgs (MuJoCo's projected Gauss-Seidel on the dual), cg, newton (sim/bench --engine and a study's engine axis set it)")       \
  X(iterations, INT, MJ, iterations, RL_OPT_IN(1, RL_OPT_MAXITER), NULL, RL_OPT_MODEL,                              \
    "iteration budget of the constraint solver")                                                                    \
  X(tolerance, REAL, MJ, tolerance, RL_OPT_GE(0), NULL, RL_OPT_MODEL,                                               \
    "constraint solver's stopping tolerance (relative cost improvement; 0: run the whole budget)")                  \
  X(impratio, REAL, MJ, impratio, RL_OPT_GT(0), NULL, RL_OPT_MODEL,                                                 \
    "ratio of frictional to normal constraint impedance (elliptic cones)")                                          \
  X(noslip_iterations, INT, MJ, noslip_iterations, RL_OPT_IN(0, RL_OPT_MAXITER), NULL, RL_OPT_MODEL,                \
    "noslip post-solve sweeps over the friction rows after the main solve (MuJoCo 2.2.2's mj_solNoSlip; 0: none)")  \
  X(noslip_tolerance, REAL, MJ, noslip_tolerance, RL_OPT_GE(0), NULL, RL_OPT_MODEL,                                 \
    "noslip post-solve's stopping tolerance (relative cost improvement)")                                           \
  X(mpr_iterations, INT, MJ, mpr_iterations, RL_OPT_IN(1, RL_OPT_MAXITER), NULL, RL_OPT_MODEL,                      \
    "iteration budget of the MPR convex–convex collision test")                                                     \
  X(mpr_tolerance, REAL, MJ, mpr_tolerance, RL_OPT_GT(0), NULL, RL_OPT_MODEL,                                       \
    "stopping tolerance of the MPR collision test (m)")                                                             \
  X(ls_iterations, INT, RL, ls_iterations, RL_OPT_IN(1, RL_OPT_MAXITER), NULL, 50,                                  \
    "iteration budget of the Newton/CG line search (MuJoCo 2.2.2 hard-codes 50)")                                   \
  X(ls_tolerance, REAL, RL, ls_tolerance, RL_OPT_GT(0), NULL, 0.01,                                                 \
    "line-search tolerance, relative to tolerance (MuJoCo 2.2.2 hard-codes 0.01)")                                  \
  X(max_contacts, INT, RL, max_contacts, RL_OPT_IN(1, RL_OPT_MAXCONTACTS), NULL, 0,                                 \
    "contact capacity; unset: the model's nconmax, else max(256, 8·ngeom); the deepest contacts are kept")          \
  X(collision, ENUM, RL, collision, RL_OPT_NAMED, "manifold,mujoco", 0,                                             \
    "contact generation: manifolds, or MuJoCo 2.2.2's single MPR point per convex pair")                            \
  X(contact_resolution, ENUM, RL, contact_resolution, RL_OPT_NAMED, "auto,convex,signorini", 0,                     \
    "contact model: MuJoCo's convex soft model or exact Signorini (elliptic cone, Newton); auto: by cone/solver")   \
  X(newton_factor, ENUM, RL, newton_factor, RL_OPT_NAMED, "auto,dense,skyline,aba,sparse,tree", 0,                  \
    "Newton's factorization of the Hessian (sparse: CHOLMOD; tree: M's pattern, rows on one dof chain); auto: by "  \
    "rows, tree shape and cost")                                                                                    \
  X(avbd_iterations, INT, RL, avbd_iterations, RL_OPT_IN(1, RL_OPT_MAXITER), NULL, 0,                               \
    "AVBD sweep budget per step; unset: the engine's default")                                                      \
  X(avbd_tolerance, REAL, RL, avbd_tolerance, RL_OPT_GE(1e-15), NULL, 0,                                            \
    "AVBD stopping tolerance of the length rows (m; the angle rows keep their default ratio); unset: default")      \
  X(avbd_cheb_rho, REAL, RL, avbd_cheb_rho, RL_OPT_IN_HALFOPEN(0, 1), NULL, 0,                                      \
    "AVBD Chebyshev acceleration ρ of the joint multipliers; 0: off")                                               \
  X(avbd_stop, ENUM, RL, avbd_stop, RL_OPT_NAMED, "distance,update,certified", 0,                                   \
    "AVBD stopping test: the estimated distance to the step's exact solution ≤ tol·(h/1 ms)² at every h, or "       \
    "the last sweep's update and row residuals ≤ tol, or (articulation blocks) the distance test certified by the " \
    "contacts' linearized problem: its step must move the poses by ≤ the same tolerance")                          \
  X(avbd_block, ENUM, RL, avbd_block, RL_OPT_NAMED, "articulation,body", 0,                                        \
    "AVBD block of one iteration: each articulation's tree of bodies solved together (sparse block factorization " \
    "along the tree, leaves first, joints in constraint space), or each body's 6×6 system (colored sweep)")       \
  X(avbd_rest_overlaps, ENUM, RL, avbd_rest_overlaps, RL_OPT_NAMED, "drop,keep", 0,                               \
    "AVBD contacts between two geoms of one articulation that overlap at qpos0: left out (a modelling overlap "   \
    "the joints hold; the count is in bench's AVBD line) or kept as MuJoCo keeps them")                           \
  X(avbd_slop, REAL, RL, avbd_slop, RL_OPT_GE(0), NULL, 0,                                                         \
    "AVBD slop: the penetration (m, or rad for an angle limit) a contact or limit keeps; 1 − α of the part "      \
    "beyond it is pushed out per step; unset or 0: the default (1e-7 in double, 1e-6 in float)")                   \
  X(disable, FLAGS, MJ, disableflags, RL_OPT_NAMED,                                                                 \
    "constraint,equality,frictionloss,limit,contact,passive,gravity,clampctrl,warmstart,filterparent,actuation,"    \
    "refsafe,sensor",                                                                                               \
    RL_OPT_MODEL, "MuJoCo's disable flags (the given set replaces the model's)")                                    \
  X(enable, FLAGS, MJ, enableflags, RL_OPT_NAMED, "override,energy,fwdinv,sensornoise,multiccd", RL_OPT_MODEL,      \
    "MuJoCo's enable flags (the given set replaces the model's)")                                                   \
  X(density, REAL, MJ, density, RL_OPT_GE(0), NULL, RL_OPT_MODEL,                                                   \
    "fluid density (kg/m³) of the inertia-box lift/drag model; 0: none")                                            \
  X(viscosity, REAL, MJ, viscosity, RL_OPT_GE(0), NULL, RL_OPT_MODEL,                                               \
    "fluid viscosity (Pa·s) of the inertia-box viscous model; 0: none")                                             \
  X(wind, VEC3, MJ, wind, RL_OPT_FINITE, NULL, RL_OPT_MODEL, "fluid velocity (m/s) the fluid forces act against")

typedef enum { RL_OPT_REAL, RL_OPT_INT, RL_OPT_ENUM, RL_OPT_FLAGS, RL_OPT_VEC3 } rl_opt_type;
typedef enum { RL_OPT_MJ, RL_OPT_RL } rl_opt_owner;

/* one row of RL_OPTION_TABLE */
typedef struct rl_opt_row {
  const char *key;
  rl_opt_type type;
  rl_opt_owner owner;
  const char *field;
  struct {
    double lo, hi;
    int lo_open, hi_open;
  } range;
  const char *values; /* ENUM, FLAGS: the names, comma-separated; else NULL */
  double def;
  const char *doc;
  size_t mj_offset; /* MJ rows: offsetof(mjOption, FIELD) */
} rl_opt_row;

extern const rl_opt_row rl_opt_table[];
extern const int rl_opt_count;

/* one parsed KEY=VALUE: the row and its value (REAL: x[0]; VEC3: x[0..2]; INT, ENUM, FLAGS: n) */
typedef struct rl_opt_value {
  int row;
  int n;
  double x[3];
} rl_opt_value;

/* Parse "KEY=VALUE" against the table.  Returns 0, or −1 with one line in err naming the key, the bad
   value and what is allowed ("--opt KEY: bad value 'V' (allowed: …)", "--opt: unknown key 'K' (allowed: …)"). */
int rl_opt_parse(const char *kv, rl_opt_value *v, char *err, int errlen);
/* Write an MJ row's value into mjModel.opt (RL rows: nothing). */
void rl_opt_set_mj(mjOption *o, const rl_opt_value *v);
/* Parse KEY=VALUE and apply MuJoCo's share to mjm->opt: rigidlab's own keys are checked, not stored
   (a caller that builds the rigidlab model uses rl_option_apply, rl_import.h). */
int rl_mj_apply_opt(mjModel *mjm, const char *kv, char *err, int errlen);
/* "what is allowed" of row r, as the error message and the help say it */
void rl_opt_allowed(const rl_opt_row *r, char *buf, size_t n);
/* The table for `rigidlab --help-options`: plain text, or a Markdown table (README.md's option list). */
void rl_opt_print_help(FILE *f, int markdown);
/* MuJoCo's share of a compiled model's options (the MJ rows of the table: what its <option> says, after any
   --opt) inside the table's ranges.  Returns 0, or −1 with "option KEY = V is out of range (allowed: …)". */
int rl_opt_check_mj(const mjOption *o, char *err, int errlen);

/* ---------- strict numbers: every number read from a command line, a spec or a CSV ---------- */

/* S is one finite number, the whole string (strtod's syntax, no leading blank), |x| < 1e300, no over- or
   underflow.  Returns 0, or −1. */
int rl_parse_real(const char *s, double *x);
/* S is one decimal integer, the whole string (an optional sign, then digits), in [lo, hi].  Returns 0, or −1. */
int rl_parse_long(const char *s, long lo, long hi, long *x);

/* The numbers of the command line (verify, sim, bench and run flags) and of a spec's [experiment] section,
   one row each, with ranges written as the option table's: X(NAME, TYPE, RANGE, DOC), TYPE REAL or INT. */
#define RL_NUMBER_TABLE(X)                                                                      \
  X(steps, INT, RL_OPT_IN(1, RL_MAX_STEPS), "time steps of a run (sim, bench, a spec's steps)") \
  X(duration, REAL, RL_OPT_IN_LOOPEN(0, 1e6), "simulated time (s)")                             \
  X(dt, REAL, RL_OPT_IN_LOOPEN(0, RL_OPT_MAXTIMESTEP), "time step (s), as the option timestep") \
  X(perturb, REAL, RL_OPT_IN_LOOPEN(0, 1), "relative change of sim's start qpos (sim --perturb)")      \
  X(states, INT, RL_OPT_IN(1, 100000), "states verify compares")                                \
  X(seed, INT, RL_OPT_IN(0, 4294967295L), "random seed")                                        \
  X(reps, INT, RL_OPT_IN(1, 1000), "bench's alternating repetitions")                           \
  X(jobs, INT, RL_OPT_IN(1, 1024), "worker processes of run")                                   \
  X(threads, INT, RL_OPT_IN(1, 4096), "threads of bench --device cpu --envs")                   \
  X(shards, INT, RL_OPT_IN(1, 100000), "N of run --shard I/N")                                  \
  X(levels, INT, RL_OPT_IN(4, 12), "refinement levels (a spec's levels)")                       \
  X(conv_states, INT, RL_OPT_IN(1, 100), "convergence states (a spec's states)")

#define RL_X_NUM_ENUM(name, type, range, doc) RL_NUM_##name,
enum { RL_NUMBER_TABLE(RL_X_NUM_ENUM) RL_NNUM };
#undef RL_X_NUM_ENUM
extern const rl_opt_row rl_num_table[];

/* S as the number of row NUM (RL_NUM_*): 0, or −1 with "LABEL: bad value 'S' (allowed: …)" */
int rl_number_parse(int num, const char *label, const char *s, double *x, char *err, int errlen);

#endif
