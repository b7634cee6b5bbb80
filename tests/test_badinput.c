/* test_badinput.c — bad input never crashes: one line on stderr naming the file/element/flag,
 * exit status 2, and no output file left behind (not even a temporary).  Also: README.md's option
 * list is the option table's own Markdown (`rigidlab --help-options --markdown`). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[256];

static void setup(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/rl_badinput_XXXXXX");
  cr_assert_not_null(mkdtemp(tmpdir));
}
static void teardown(void) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
  if (system(cmd)) {}
}

/* Run `rigidlab ARGS --csv OUT` (when with_csv), return the exit status; stderr into *msg. */
static int run(const char *args, int with_csv, char *msg, size_t msglen, int *lines) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s %s %s%s/out.csv > /dev/null 2> %s/err.txt", RIGIDLAB, args, with_csv ? "--csv " : "",
           with_csv ? tmpdir : "", tmpdir);
  if (!with_csv) snprintf(cmd, sizeof cmd, "%s %s > /dev/null 2> %s/err.txt", RIGIDLAB, args, tmpdir);
  int st = system(cmd);
  char path[512];
  snprintf(path, sizeof path, "%s/err.txt", tmpdir);
  FILE *f = fopen(path, "r");
  msg[0] = 0;
  *lines = 0;
  if (f) {
    size_t n = fread(msg, 1, msglen - 1, f);
    msg[n] = 0;
    fclose(f);
    for (size_t i = 0; i < n; i++) *lines += msg[i] == '\n';
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* nothing but err.txt may remain in tmpdir */
static int stray_files(void) {
  DIR *d = opendir(tmpdir);
  struct dirent *e;
  int n = 0;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "err.txt")) n++;
  closedir(d);
  return n;
}

static void expect_bad(const char *args, int with_csv, const char *must_contain) {
  char msg[4096];
  int lines;
  int st = run(args, with_csv, msg, sizeof msg, &lines);
  cr_expect_eq(st, 2, "'%s': exit %d (want 2), stderr: %s", args, st, msg);
  cr_expect_eq(lines, 1, "'%s': %d stderr lines (want 1): %s", args, lines, msg);
  cr_expect(strstr(msg, must_contain) != NULL, "'%s': message does not name '%s': %s", args, must_contain, msg);
  cr_expect_eq(stray_files(), 0, "'%s' left a file behind", args);
}

#define BAD   SRCDIR "/tests/models/bad/"
#define SCENE SRCDIR "/experiments/scenes/"

TestSuite(badinput, .init = setup, .fini = teardown);
TestSuite(options, .init = setup, .fini = teardown);

Test(badinput, missing_file) { expect_bad("verify /nonexistent/model.xml", 1, "/nonexistent/model.xml"); }
Test(badinput, malformed_xml) { expect_bad("verify " BAD "malformed.xml", 1, "malformed.xml"); }
Test(badinput, mocap_refused) { expect_bad("verify " BAD "mocap.xml", 1, "mocap"); }
Test(badinput, hfield_refused) { expect_bad("verify " BAD "hfield.xml", 1, "height field"); }
Test(badinput, activation_refused) { expect_bad("bench " BAD "activation.xml", 1, "activation"); }
/* degenerate geom sizes: refused naming the geom (MuJoCo's compiler refuses them; the importer checks too) */
Test(badinput, degenerate_sphere) { expect_bad("verify " BAD "degenerate_sphere.xml", 1, "ball"); }
Test(badinput, degenerate_box) { expect_bad("sim " BAD "degenerate_box.xml --engine newton", 1, "slab"); }
Test(badinput, zero_mass_refused) { expect_bad("verify " BAD "zero_mass_refused.xml", 1, "mass"); }
Test(badinput, freejoint_midtree) { expect_bad("verify " BAD "freejoint_midtree.xml", 1, "free joint"); }
Test(badinput, nan_keyframe) { expect_bad("sim " BAD "nan_key.xml --engine newton --key bad", 1, "non-finite"); }
Test(badinput, nan_option) {
  expect_bad("sim " SCENE "pendulum.xml --engine newton --opt timestep=nan", 1, "timestep");
}
Test(badinput, inf_gravity) {
  expect_bad("sim " SCENE "pendulum.xml --engine newton --opt gravity=0,0,inf", 1, "gravity");
}
Test(badinput, unknown_flag) { expect_bad("verify " SCENE "pendulum.xml --frobnicate 3", 1, "--frobnicate"); }
Test(badinput, bad_precision) { expect_bad("verify " SCENE "pendulum.xml --precision f16", 1, "f16"); }
Test(badinput, bad_states) { expect_bad("verify " SCENE "pendulum.xml --states -4", 1, "--states"); }
Test(badinput, bad_stage) { expect_bad("verify " SCENE "pendulum.xml --stages kinematics,warp", 1, "warp"); }
Test(badinput, avbd_options) {
  expect_bad("sim " SCENE "pendulum.xml --engine avbd --opt avbd_cheb_rho=1.5", 1, "avbd_cheb_rho");
  expect_bad("sim " SCENE "pendulum.xml --engine avbd --opt avbd_tolerance=-1", 1, "avbd_tolerance");
  expect_bad("sim " SCENE "pendulum.xml --engine avbd --opt avbd_iterations=0", 1, "avbd_iterations");
}
/* a value outside the option table's range: exit 2, one line naming the key, the value and what is allowed */
static void expect_bad_opt(const char *kv, const char *allowed) {
  char args[512], want[256];
  snprintf(args, sizeof args, "sim " SCENE "pendulum.xml --engine newton --steps 2 --opt %s", kv);
  const char *eq = strchr(kv, '=');
  snprintf(want, sizeof want, "--opt %.*s: bad value '%s' (allowed: %s)", (int)(eq - kv), kv, eq + 1, allowed);
  expect_bad(args, 1, want);
}
Test(badinput, option_ranges) {
  expect_bad_opt("timestep=0", "a finite number > 0");
  expect_bad_opt("timestep=1e400", "a finite number > 0");
  expect_bad_opt("gravity=0,-9.81", "three comma-separated finite numbers X,Y,Z");
  expect_bad_opt("iterations=0", "an integer from 1 to 1000000");
  expect_bad_opt("iterations=1000001", "an integer from 1 to 1000000");
  expect_bad_opt("iterations=2.5", "an integer from 1 to 1000000");
  expect_bad_opt("tolerance=-1e-9", "a finite number >= 0");
  expect_bad_opt("max_contacts=0", "an integer from 1 to 1000000");
  expect_bad_opt("max_contacts=300000000", "an integer from 1 to 1000000");
  expect_bad_opt("avbd_iterations=99999999", "an integer from 1 to 1000000");
  expect_bad_opt("avbd_tolerance=1e-16", "a finite number >= 1e-15");
  expect_bad_opt("avbd_cheb_rho=1", "a number in [0, 1)");
  expect_bad_opt("collision=exact", "manifold, mujoco");
  expect_bad_opt("disable=gravity,wind", "comma-separated: constraint,equality,frictionloss,limit,contact,passive,"
                                         "gravity,clampctrl,warmstart,filterparent,actuation,refsafe,sensor");
}
/* max_contacts within its range, but 10 rows per contact times a 240-dof chain's row width would overflow
   the Jacobian's int capacity: refused at import in one line naming the option, nothing written */
Test(badinput, contact_capacity_overflow) {
  char model[512], args[2048], msg[4096];
  int lines;
  snprintf(model, sizeof model, "%s/chain240.xml", tmpdir);
  FILE *f = fopen(model, "w");
  cr_assert_not_null(f);
  fprintf(f, "<mujoco><worldbody>");
  for (int b = 0; b < 40; b++) {
    fprintf(f, "<body pos=\"0 0 0.1\">");
    for (int j = 0; j < 6; j++) fprintf(f, "<joint type=\"hinge\" axis=\"0 1 0\"/>");
    fprintf(f, "<geom type=\"sphere\" size=\"0.01\"/>");
  }
  for (int b = 0; b < 40; b++) fprintf(f, "</body>");
  fprintf(f, "</worldbody></mujoco>\n");
  fclose(f);
  snprintf(args, sizeof args, "sim %s --engine newton --steps 2 --opt max_contacts=1000 --csv %s/ok.csv", model,
           tmpdir);
  cr_expect_eq(run(args, 0, msg, sizeof msg, &lines), 0, "a small capacity works: %s", msg);
  snprintf(args, sizeof args, "sim %s --engine newton --steps 2 --opt max_contacts=1000000 --csv %s/out.csv", model,
           tmpdir);
  int st = run(args, 0, msg, sizeof msg, &lines);
  cr_expect_eq(st, 2, "exit %d (want 2): %s", st, msg);
  cr_expect_eq(lines, 1, "%d stderr lines (want 1): %s", lines, msg);
  cr_expect(strstr(msg, "chain240.xml") && strstr(msg, "max_contacts"), "message names neither model nor option: %s",
            msg);
  snprintf(args, sizeof args, "%s/out.csv", tmpdir);
  cr_expect_neq(access(args, F_OK), 0, "output written for a refused model");
}
/* an experiment spec's [sweep] keys are the same options: a bad value names the file, line, key and value
   and nothing is written */
Test(badinput, sweep_option_range) {
  char spec[512], args[2048], out[512], msg[4096];
  int lines;
  snprintf(spec, sizeof spec, "%s/sweep.ini", tmpdir);
  FILE *f = fopen(spec, "w");
  cr_assert_not_null(f);
  fprintf(f, "[experiment]\nname = bad\nscene = %s\nsteps = 5\n[sweep]\niterations = 10, 0\n", SCENE "box_stack.xml");
  fclose(f);
  snprintf(out, sizeof out, "%s/out", tmpdir);
  snprintf(args, sizeof args, "run %s --out %s", spec, out);
  int st = run(args, 0, msg, sizeof msg, &lines);
  cr_expect_eq(st, 2, "exit %d (want 2): %s", st, msg);
  cr_expect_eq(lines, 1, "%d stderr lines (want 1): %s", lines, msg);
  const char *want = "iterations: bad value '0' (allowed: an integer from 1 to 1000000)";
  cr_expect(strstr(msg, "sweep.ini:6:") && strstr(msg, want),
            "message does not name the line, key, value and range: %s", msg);
  cr_expect_neq(access(out, F_OK), 0, "output written for a bad spec");
}
Test(badinput, unknown_opt_key) { expect_bad("sim " SCENE "pendulum.xml --engine newton --opt warp=9", 1, "warp"); }
Test(badinput, bad_engine) { expect_bad("sim " SCENE "pendulum.xml --engine warp", 1, "warp"); }
Test(badinput, missing_value) { expect_bad("sim " SCENE "pendulum.xml --engine", 0, "--engine"); }
Test(badinput, unknown_command) { expect_bad("frobnicate", 0, "frobnicate"); }
/* signorini resolution needs the elliptic cone and Newton: refused at build, naming the option */
Test(badinput, signorini_needs_elliptic_cone) {
  expect_bad("sim " SCENE "box_stack.xml --engine newton --opt contact_resolution=signorini --opt cone=pyramidal", 1,
             "elliptic");
}
Test(badinput, signorini_needs_newton) {
  expect_bad("sim " SCENE "box_stack.xml --engine cg --opt contact_resolution=signorini --opt cone=elliptic", 1,
             "newton");
}
Test(badinput, unknown_keyframe) { expect_bad("sim " SCENE "tumbling.xml --engine newton --key nope", 1, "nope"); }
Test(badinput, unwritable_csv) {
  char msg[4096];
  int lines;
  int st = run("sim " SCENE "pendulum.xml --engine newton --steps 5 --csv /nonexistent/dir/x.csv", 0, msg, sizeof msg,
               &lines);
  cr_expect_eq(st, 2, "exit %d: %s", st, msg);
  cr_expect_eq(lines, 1, "%s", msg);
}

/* and good input works, leaving exactly the output file */
Test(badinput, good_input_writes_whole_file) {
  char msg[4096], path[512];
  int lines;
  int st = run("sim " SCENE "pendulum.xml --engine newton --steps 10", 1, msg, sizeof msg, &lines);
  cr_expect_eq(st, 0, "%s", msg);
  snprintf(path, sizeof path, "%s/out.csv", tmpdir);
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f);
  int rows = 0, c;
  while ((c = fgetc(f)) != EOF) rows += c == '\n';
  fclose(f);
  cr_expect_eq(rows, 12, "header + 11 rows expected, got %d", rows);
}

/* README.md carries `rigidlab --help-options --markdown` between its option-table markers, unchanged */
Test(options, readme_table_is_generated) {
  char cmd[1024], path[512];
  snprintf(path, sizeof path, "%s/help.md", tmpdir);
  snprintf(cmd, sizeof cmd, "%s --help-options --markdown > %s", RIGIDLAB, path);
  cr_assert_eq(system(cmd), 0, "%s failed", cmd);
  FILE *g = fopen(path, "r"), *r = fopen(SRCDIR "/README.md", "r");
  cr_assert_not_null(g);
  cr_assert_not_null(r);
  static char gen[65536], doc[65536], line[4096];
  size_t ng = fread(gen, 1, sizeof gen - 1, g), nd = 0;
  gen[ng] = 0;
  int inside = 0, begins = 0, ends = 0;
  while (fgets(line, sizeof line, r)) {
    if (!strncmp(line, "<!-- options:begin", 18)) {
      inside = 1;
      begins++;
      continue;
    }
    if (!strncmp(line, "<!-- options:end", 16)) {
      inside = 0;
      ends++;
      continue;
    }
    if (inside && nd + strlen(line) < sizeof doc) nd += (size_t)snprintf(doc + nd, sizeof doc - nd, "%s", line);
  }
  fclose(g);
  fclose(r);
  cr_assert_eq(begins, 1, "README.md: want one '<!-- options:begin' marker, found %d", begins);
  cr_assert_eq(ends, 1, "README.md: want one '<!-- options:end -->' marker, found %d", ends);
  cr_expect(ng > 0 && strstr(gen, "| `timestep` |"), "the generated table lacks timestep: %s", gen);
  cr_expect_str_eq(doc, gen, "README.md's option table differs from `rigidlab --help-options --markdown`: paste it in");
}

/* ---------------------------------------------------------------- tendon inputs
   Each model names the tendon (or its wrap geom) in the one line, whether MuJoCo's compiler or rigidlab's
   importer refuses it; AVBD refuses tendons with its physical reason. */
TestSuite(badinput_tendon, .init = setup, .fini = teardown);
Test(badinput_tendon, wrap_geom_not_sphere_or_cylinder) {
  expect_bad("verify " BAD "tendon_wrap_box.xml", 1, "sphere or cylinder");
}
Test(badinput_tendon, inverted_range) { expect_bad("verify " BAD "tendon_inverted_range.xml", 1, "limits in tendon"); }
Test(badinput_tendon, negative_range) {
  expect_bad("sim " BAD "tendon_negative_range.xml --engine newton", 1, "spatial tendon 't'");
}
Test(badinput_tendon, pulley_divisor_zero) { expect_bad("verify " BAD "tendon_pulley_zero.xml", 1, "divisor 0"); }
Test(badinput_tendon, wrap_geom_not_between_sites) {
  expect_bad("verify " BAD "tendon_unbracketed_geom.xml", 1, "not bracketed by sites");
}
Test(badinput_tendon, fixed_tendon_on_ball_joint) {
  expect_bad("bench " BAD "tendon_fixed_ball.xml", 1, "joint 'j2' is not a hinge or slide joint");
}
Test(badinput_tendon, avbd_refuses_tendons) {
  expect_bad("sim " SRCDIR "/tests/models/tendon_spring.xml --engine avbd", 1, "path length");
}
