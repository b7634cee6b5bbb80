/* test_badinput.c — bad input never crashes: one line on stderr naming the file/element/flag,
 * exit status 2, and no output file left behind (not even a temporary).  Also: README.md's option
 * list is the option table's own Markdown (`rigidlab --help-options --markdown`).
 *
 * The cases are tables, one per category (the test of the category runs them all; badinput.case_count
 * prints the count of each and asserts the total):
 *   verify_cli, sim_cli, bench_cli, run_cli, merge_cli, check_cli, report_cli, other_cli  the flags
 *     and arguments of each subcommand, --help-options and fields
 *   numbers   edge values of every numeric flag: 0, negative, NaN, inf, 2^31, 2^63, 1e308, not a number
 *   options   --opt KEY=VALUE against the option table (ranges, types, names, syntax)
 *   models    MJCF input: what the engine refuses, non-finite numbers and options in the file, truncated,
 *             binary and empty files, a directory or a device for the model
 *   specs     experiment specs (run SPEC): every [section], key and value check, duplicates, the first
 *             of two errors, long and binary lines, sweep sizes
 *   resources memory that is not there (ulimit -v): the checked data allocation
 * Inputs are written to TMP/in (not an output); outputs would land in TMP: nothing but err.txt may. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256], indir[300];

/* TMP/in/NAME ← N bytes of DATA (N < 0: a string); "@S/" in a string becomes the scenes folder */
static void put(const char *name, const char *data, long n);

/* the MJCF and INI inputs of the cases (TMP/in) */
static void write_inputs(void);

static void setup(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/rl_badinput_XXXXXX");
  cr_assert_not_null(mkdtemp(tmpdir));
  snprintf(indir, sizeof indir, "%s/in", tmpdir);
  cr_assert_eq(mkdir(indir, 0755), 0);
  write_inputs();
}
static void teardown(void) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
  if (system(cmd)) {}
}

/* ARGS with its substitution tokens replaced: @I/ the inputs folder, @S/ the scenes, @B/ the bad models, @O an output
   folder TMP/out; a leading "ulimit …;" stays in front of the command */
static void expand(char *out, size_t n, const char *args) {
  size_t j = 0;
  for (const char *c = args; *c && j + 1 < n; c++) {
    const char *rep = NULL;
    if (!strncmp(c, "@I/", 3)) rep = indir, c += 2;
    else if (!strncmp(c, "@S/", 3)) rep = SRCDIR "/experiments/scenes", c += 2;
    else if (!strncmp(c, "@B/", 3)) rep = SRCDIR "/tests/models/bad", c += 2;
    else if (!strncmp(c, "@O", 2)) rep = tmpdir, c += 1;
    if (rep) j += (size_t)snprintf(out + j, n - j, "%s%s", rep, c[0] == 'O' ? "/out" : "/");
    else out[j++] = *c;
  }
  out[j < n ? j : n - 1] = 0;
}

/* Run `rigidlab ARGS --csv OUT` (when with_csv), return the exit status; stderr into *msg.  ARGS may start
   with "ulimit -v KB;" (a shell prefix) */
static int run(const char *args_in, int with_csv, char *msg, size_t msglen, int *lines) {
  char cmd[16384], args[8192], prefix[128] = "";
  expand(args, sizeof args, args_in);
  const char *a = args;
  if (!strncmp(args, "ulimit ", 7) && strchr(args, ';')) {
    snprintf(prefix, sizeof prefix, "%.*s ", (int)(strchr(args, ';') - args + 1), args);
    a = strchr(args, ';') + 1;
  }
  /* a command that hangs is stopped after 60 s (exit 124: a failed case, not a stuck suite) */
  snprintf(cmd, sizeof cmd, "%stimeout 60 %s %s %s%s/out.csv < /dev/null > /dev/null 2> %s/err.txt", prefix, RIGIDLAB,
           a, with_csv ? "--csv " : "", with_csv ? tmpdir : "", tmpdir);
  if (!with_csv)
    snprintf(cmd, sizeof cmd, "%stimeout 60 %s %s < /dev/null > /dev/null 2> %s/err.txt", prefix, RIGIDLAB, a, tmpdir);
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

/* nothing but err.txt (and the inputs folder) may remain in tmpdir: the count, the first name in *name */
static int stray_files(char *name, size_t n) {
  DIR *d = opendir(tmpdir);
  struct dirent *e;
  int k = 0;
  name[0] = 0;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "err.txt") && strcmp(e->d_name, "in")) {
      if (!k++) snprintf(name, n, "%s", e->d_name);
    }
  closedir(d);
  return k;
}

static void expect_bad(const char *args, int with_csv, const char *must_contain) {
  char msg[4096];
  int lines;
  int st = run(args, with_csv, msg, sizeof msg, &lines);
  cr_expect_eq(st, 2, "'%s': exit %d (want 2), stderr: %s", args, st, msg);
  cr_expect_eq(lines, 1, "'%s': %d stderr lines (want 1): %s", args, lines, msg);
  cr_expect(strstr(msg, must_contain) != NULL, "'%s': message does not name '%s': %s", args, must_contain, msg);
  char stray[256];
  cr_expect_eq(stray_files(stray, sizeof stray), 0, "'%s' left a file behind: %s (stderr: %s)", args, stray, msg);
}

#define BAD   SRCDIR "/tests/models/bad/"
#define SCENE SRCDIR "/experiments/scenes/"

/* one bad input: the command (tokens @I/, @S/, @B/, @O as expand() replaces them), whether it gets --csv TMP/out.csv, and what
   its one line must contain */
typedef struct bad_case {
  const char *args;
  int csv;
  const char *want;
} bad_case;
#define NCASE(t) ((int)(sizeof t / sizeof t[0]))

static void run_cases(const bad_case *c, int n) {
  for (int i = 0; i < n; i++) expect_bad(c[i].args, c[i].csv, c[i].want);
}

TestSuite(badinput, .init = setup, .fini = teardown);
TestSuite(options, .init = setup, .fini = teardown);

#define MINI_SPEC "[experiment]\nname = bad\nscene = @S/pendulum.xml\nsteps = 5\n"

static void put(const char *name, const char *data, long n) {
  char path[512], text[1 << 17];
  snprintf(path, sizeof path, "%s/%s", indir, name);
  if (n < 0) { /* a string: its @-tokens replaced by expand() */
    expand(text, sizeof text, data);
    data = text;
    n = (long)strlen(text);
  }
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f, "cannot write %s", path);
  cr_assert_eq(fwrite(data, 1, (size_t)n, f), (size_t)n);
  fclose(f);
}

/* a spec of NVAL·… values: 32 scenes and 11 option axes of 32 values (32^12 points: past a 64-bit count) */
static void put_huge_sweep(void) {
  static char t[1 << 16];
  size_t j = (size_t)snprintf(t, sizeof t, "[experiment]\nname = huge\nscene = ");
  for (int i = 0; i < 32; i++) j += (size_t)snprintf(t + j, sizeof t - j, "%s@I/p%d.xml", i ? ", " : "", i);
  j += (size_t)snprintf(t + j, sizeof t - j, "\nsteps = 5\n[sweep]\n");
  const char *keys[] = {"iterations",      "ls_iterations", "mpr_iterations", "noslip_iterations",
                        "avbd_iterations", "max_contacts",  "tolerance",      "ls_tolerance",
                        "impratio",        "mpr_tolerance", "avbd_tolerance"};
  for (int k = 0; k < 11; k++) {
    j += (size_t)snprintf(t + j, sizeof t - j, "%s = ", keys[k]);
    for (int v = 1; v <= 32; v++)
      j += (size_t)snprintf(t + j, sizeof t - j, k < 6 ? "%s%d" : "%s%d.5e-3", v > 1 ? ", " : "", v);
    j += (size_t)snprintf(t + j, sizeof t - j, "\n");
  }
  put("huge_sweep.ini", t, -1);
  for (int i = 0; i < 32; i++) { /* 32 distinct scene files */
    char nm[32];
    snprintf(nm, sizeof nm, "p%d.xml", i);
    put(nm, "<mujoco><worldbody><body><joint type=\"hinge\"/><geom size=\"0.1\"/></body></worldbody></mujoco>", -1);
  }
}

/* a spec whose scene line lists 33 scenes (p0.xml … p32.xml: a line of about 2 000 characters) */
static void put_many_scenes(void) {
  static char t[1 << 16];
  size_t j = (size_t)snprintf(t, sizeof t, "[experiment]\nname = many\nscene = ");
  for (int i = 0; i < 33; i++) j += (size_t)snprintf(t + j, sizeof t - j, "%s@I/p%d.xml", i ? ", " : "", i);
  snprintf(t + j, sizeof t - j, "\nsteps = 5\n");
  put("many_scenes.ini", t, -1);
  put("p32.xml", "<mujoco><worldbody><body><joint type=\"hinge\"/><geom size=\"0.1\"/></body></worldbody></mujoco>",
      -1);
}

static void write_inputs(void) {
  static const char hinge[] = "<mujoco>%s<worldbody><body name=\"b\" pos=\"%s\"><joint type=\"hinge\"/>"
                              "<geom name=\"g\" type=\"sphere\" pos=\"%s\" size=\"%s\"/></body></worldbody></mujoco>";
  char t[4096];
  struct {
    const char *name, *option, *bpos, *gpos, *size;
  } m[] = {{"nan_body_pos.xml", "", "0 nan 1", "0 0 0", "0.1"},
           {"nan_geom_pos.xml", "", "0 0 1", "nan 0 0", "0.1"},
           {"inf_body_pos.xml", "", "0 0 1e400", "0 0 0", "0.1"},
           {"huge_size.xml", "", "0 0 1", "0 0 0", "1e200"},
           {"timestep_zero.xml", "<option timestep=\"0\"/>", "0 0 1", "0 0 0", "0.1"},
           {"timestep_negative.xml", "<option timestep=\"-0.01\"/>", "0 0 1", "0 0 0", "0.1"},
           {"timestep_nan.xml", "<option timestep=\"nan\"/>", "0 0 1", "0 0 0", "0.1"},
           {"timestep_huge.xml", "<option timestep=\"1e9\"/>", "0 0 1", "0 0 0", "0.1"},
           {"gravity_inf.xml", "<option gravity=\"0 0 inf\"/>", "0 0 1", "0 0 0", "0.1"},
           {"iterations_zero.xml", "<option iterations=\"0\"/>", "0 0 1", "0 0 0", "0.1"},
           {"impratio_negative.xml", "<option impratio=\"-1\"/>", "0 0 1", "0 0 0", "0.1"}};
  for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
    snprintf(t, sizeof t, hinge, m[i].option, m[i].bpos, m[i].gpos, m[i].size);
    put(m[i].name, t, -1);
  }
  put("truncated.xml", "<mujoco><worldbody><body><joint type=\"hinge\"/><geom size=\"0.1\"/></bo", -1);
  put("empty.xml", "", 0);
  static const unsigned char bin[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0xff, 0xfe, 0x80, 0x00, 0x3c, 0x01};
  put("binary.xml", (const char *)bin, sizeof bin);
  char d[512];
  snprintf(d, sizeof d, "%s/dir.xml", indir);
  cr_assert_eq(mkdir(d, 0755), 0);
  snprintf(d, sizeof d, "%s/dir.ini", indir);
  cr_assert_eq(mkdir(d, 0755), 0);
  snprintf(d, sizeof d, "%s/emptydir", indir);
  cr_assert_eq(mkdir(d, 0755), 0);
  put("mini.ini", MINI_SPEC, -1);
  snprintf(d, sizeof d, "%s/fifo.xml", indir); /* special files: named pipes (reading one would block) */
  cr_assert_eq(mkfifo(d, 0644), 0);
  snprintf(d, sizeof d, "%s/fifo.ini", indir);
  cr_assert_eq(mkfifo(d, 0644), 0);
  put("binary.ini", (const char *)bin, sizeof bin);
  /* results trees for check, merge, report: a study folder without spec.ini, one with a binary metrics.csv */
  snprintf(d, sizeof d, "%s/nospec", indir);
  cr_assert_eq(mkdir(d, 0755), 0);
  put("nospec/metrics.csv", "study,point,engine,precision,dt,metric,value,step,index\n", -1);
  snprintf(d, sizeof d, "%s/binres", indir);
  cr_assert_eq(mkdir(d, 0755), 0);
  put("binres/metrics.csv", (const char *)bin, sizeof bin);
  put("binres/spec.ini", MINI_SPEC, -1);
  put_huge_sweep();
  put_many_scenes();
}

/* ---------------------------------------------------------------- the subcommands' flags */

static const bad_case verify_cli[] = {
    {"verify", 0, "verify: missing MODEL.xml"},
    {"verify @S/pendulum.xml @S/box_stack.xml", 1, "unexpected argument"},
    {"verify @S/pendulum.xml --frobnicate 3", 1, "unknown option '--frobnicate'"},
    {"verify @S/pendulum.xml --precision f16", 1, "f16"},
    {"verify @S/pendulum.xml --stages kinematics,warp", 1, "unknown name 'warp'"},
    {"verify @S/pendulum.xml --stages ,", 1, "--stages ',': an empty name"},
    {"verify @S/pendulum.xml --stages kinematics,,com", 1, "an empty name"},
    {"verify @S/pendulum.xml --stages ''", 1, "an empty name"},
    {"verify @S/pendulum.xml --states", 0, "option --states needs a value"},
    {"verify @S/pendulum.xml --opt", 0, "option --opt needs a value"},
    {"verify @S/pendulum.xml --engine newton", 1, "unknown option '--engine'"},
    {"verify @S/pendulum.xml --steps 5", 1, "unknown option '--steps'"},
};
Test(badinput, verify_cli) { run_cases(verify_cli, NCASE(verify_cli)); }

static const bad_case sim_cli[] = {
    {"sim @S/pendulum.xml", 1, "missing --engine"},
    {"sim @S/pendulum.xml --engine warp", 1, "--engine 'warp'"},
    {"sim @S/pendulum.xml --engine", 0, "--engine needs a value"},
    {"sim @S/pendulum.xml --engine mujoco --precision f32", 1, "f64 only"},
    {"sim @S/pendulum.xml --engine newton --precision both", 1, "--precision 'both'"},
    {"sim @S/pendulum.xml --engine newton --steps 5 --duration 1", 1, "not both"},
    {"sim @S/tumbling.xml --engine newton --key nope", 1, "no keyframe 'nope'"},
    {"sim @S/pendulum.xml --engine newton --key 99999999999999999999", 1, "no keyframe '99999999999999999999'"},
    {"sim @S/pendulum.xml --engine newton --bogus", 1, "unknown option '--bogus'"},
    {"sim @S/pendulum.xml --engine newton --states 3", 1, "unknown option '--states'"},
    {"sim @S/box_stack.xml --engine newton --opt contact_resolution=signorini --opt cone=pyramidal", 1, "elliptic"},
    {"sim @S/box_stack.xml --engine cg --opt contact_resolution=signorini --opt cone=elliptic", 1, "newton"},
    {"sim @S/pendulum.xml --engine newton --duration 100001 --opt timestep=0.0001", 1,
     "is 1.00001e+09 steps (allowed: at most 100000000)"},
};
Test(badinput, sim_cli) { run_cases(sim_cli, NCASE(sim_cli)); }

static const bad_case bench_cli[] = {
    {"bench", 0, "bench: missing MODEL.xml"},
    {"bench @B/activation.xml", 1, "activation"},
    {"bench @S/pendulum.xml --engines warp", 1, "--engines 'warp': unknown name 'warp'"},
    {"bench @S/pendulum.xml --engines ,", 1, "--engines ',': an empty name"},
    {"bench @S/pendulum.xml --stages collision,,step", 1, "an empty name"},
    {"bench @S/pendulum.xml --stages solve", 1, "unknown name 'solve'"},
    {"bench @S/pendulum.xml --precision f16", 1, "f16"},
    {"bench @S/pendulum.xml --bogus", 1, "unknown option '--bogus'"},
    {"bench chain:5,x", 1, "chain:LIST"},
    {"bench chain:1,2", 1, "between 2 and 95"},
    {"bench chain:5", 1, "at least two link counts"},
    {"bench @S/pendulum.xml --reps", 0, "--reps needs a value"},
    {"bench @S/pendulum.xml --device cpu --envs 4 --threads 0", 1,
     "--threads: bad value '0' (allowed: an integer from 1 to 4096)"},
    {"bench @S/pendulum.xml --device cpu --envs 1,,2", 1, "--envs '1,,2': an empty count"},
    {"bench @S/pendulum.xml --device cpu --envs 99999999999", 1, "--envs '99999999999'"},
    {"bench @S/pendulum.xml --device gpu --envs 4", 1, "--device 'gpu'"},
};
Test(badinput, bench_cli) { run_cases(bench_cli, NCASE(bench_cli)); }

static const bad_case run_cli[] = {
    {"run --bogus", 0, "run: unknown option '--bogus'"},
    {"run @I/mini.ini --out @O --bogus 3", 0, "unknown option '--bogus'"},
    {"run @I/mini.ini --out", 0, "--out needs a value"},
    {"run @I/mini.ini --out @O --jobs", 0, "--jobs needs a value"},
    {"run @I/dir.ini --out @O", 0, "dir.ini: is a directory, not an experiment spec"},
    {"run /nonexistent/spec.ini --out @O", 0, "/nonexistent/spec.ini: cannot read"},
    {"run @I/fifo.ini --out @O", 0, "fifo.ini: is not a regular file"},
    {"run @I/binary.ini --out @O", 0, "binary.ini:1: a NUL byte"},
    {"run @I/mini.ini --out @O --shard 0/3", 0, "--shard '0/3'"},
    {"run @I/mini.ini --out @O --shard 4/3", 0, "--shard '4/3'"},
    {"run @I/mini.ini --out @O --shard 1/0", 0, "--shard N: bad value '0'"},
    {"run @I/mini.ini --out @O --shard 1/99999999999", 0, "--shard N: bad value '99999999999'"},
    {"run @I/mini.ini --out @O --shard 1/2/3", 0, "--shard N: bad value '2/3'"},
    {"run @I/mini.ini --out @O --shard x", 0, "--shard 'x'"},
    {"run @I/mini.ini --out @O --opt iterations=0", 0, "--opt iterations: bad value '0'"},
};
Test(badinput, run_cli) { run_cases(run_cli, NCASE(run_cli)); }

static const bad_case merge_cli[] = {
    {"merge", 0, "merge: missing DIR"},
    {"merge @I/emptydir", 0, "missing --out OUT"},
    {"merge @I/emptydir --out", 0, "--out needs a value"},
    {"merge --bogus", 0, "unknown option '--bogus'"},
    {"merge /nonexistent --out @O", 0, "/nonexistent: cannot read"},
    {"merge @I/emptydir --out @O", 0, "no results"},
};
Test(badinput, merge_cli) { run_cases(merge_cli, NCASE(merge_cli)); }

static const bad_case check_cli[] = {
    {"check", 0, "check: missing RESULTS"},
    {"check /nonexistent", 0, "/nonexistent: cannot read"},
    {"check @I/mini.ini", 0, "mini.ini: not a folder"},
    {"check @I/emptydir", 0, "no results"},
    {"check --bogus", 0, "unknown option '--bogus'"},
    {"check @I/emptydir --baseline", 0, "--baseline needs a value"},
    {"check @I/emptydir @I/nospec", 0, "unexpected argument"},
    {"check @I/nospec", 0, "nospec/spec.ini: cannot read"},
    {"check @I/binres --baseline @I/emptydir", 0, "binres/metrics.csv"},
};
Test(badinput, check_cli) { run_cases(check_cli, NCASE(check_cli)); }

static const bad_case report_cli[] = {
    {"report", 0, "report: expected exactly one RESULTS_DIR"},
    {"report @I/emptydir @I/nospec", 0, "expected exactly one RESULTS_DIR"},
    {"report --bogus", 0, "report: unknown option '--bogus'"},
    {"report /nonexistent", 0, "/nonexistent: not a results directory"},
    {"report @I/mini.ini", 0, "mini.ini: not a results directory"},
    {"report @I/emptydir", 0, "no results"},
    {"report @I/binres", 0, "binres/metrics.csv: binary data"},
};
Test(badinput, report_cli) { run_cases(report_cli, NCASE(report_cli)); }

static const bad_case other_cli[] = {
    {"frobnicate", 0, "unknown command 'frobnicate'"},
    {"fields --bogus", 0, "fields: unknown argument '--bogus'"},
    {"fields rl_data", 0, "fields: unknown argument 'rl_data'"},
    {"--help-options --bogus", 0, "--help-options: unexpected argument '--bogus'"},
    {"--help-options --markdown --markdown", 0, "--help-options: unexpected argument '--markdown'"},
};
Test(badinput, other_cli) { run_cases(other_cli, NCASE(other_cli)); }

/* ---------------------------------------------------------------- numeric edge values of the flags */

static const bad_case numbers[] = {
    {"sim @S/pendulum.xml --engine newton --steps 0", 1,
     "--steps: bad value '0' (allowed: an integer from 1 to 100000000)"},
    {"sim @S/pendulum.xml --engine newton --steps -1", 1, "--steps: bad value '-1'"},
    {"sim @S/pendulum.xml --engine newton --steps 1.5", 1, "--steps: bad value '1.5'"},
    {"sim @S/pendulum.xml --engine newton --steps nan", 1, "--steps: bad value 'nan'"},
    {"sim @S/pendulum.xml --engine newton --steps ' 5'", 1, "--steps: bad value ' 5'"},
    {"sim @S/pendulum.xml --engine newton --steps 2147483648", 1, "--steps: bad value '2147483648'"},
    {"sim @S/pendulum.xml --engine newton --steps 9223372036854775808", 1, "--steps: bad value '9223372036854775808'"},
    {"sim @S/pendulum.xml --engine newton --steps 99999999999999999999999", 1, "bad value '99999999999999999999999'"},
    {"sim @S/pendulum.xml --engine newton --duration 0", 1,
     "--duration: bad value '0' (allowed: a number in (0, 1000000])"},
    {"sim @S/pendulum.xml --engine newton --duration -1", 1, "--duration: bad value '-1'"},
    {"sim @S/pendulum.xml --engine newton --duration nan", 1, "--duration: bad value 'nan'"},
    {"sim @S/pendulum.xml --engine newton --duration inf", 1, "--duration: bad value 'inf'"},
    {"sim @S/pendulum.xml --engine newton --duration 1e30", 1, "--duration: bad value '1e30'"},
    {"sim @S/pendulum.xml --engine newton --duration 1e308", 1, "--duration: bad value '1e308'"},
    {"sim @S/pendulum.xml --engine newton --duration 1s", 1, "--duration: bad value '1s'"},
    {"sim @S/pendulum.xml --engine newton --dt 0", 1, "--dt: bad value '0' (allowed: a number in (0, 1])"},
    {"sim @S/pendulum.xml --engine newton --dt -0.001", 1, "--dt: bad value '-0.001'"},
    {"sim @S/pendulum.xml --engine newton --dt 1e9", 1, "--dt: bad value '1e9'"},
    {"sim @S/pendulum.xml --engine newton --dt nan", 1, "--dt: bad value 'nan'"},
    {"sim @S/pendulum.xml --engine newton --dt 1e-400", 1, "--dt: bad value '1e-400'"},
    {"sim @S/pendulum.xml --engine mujoco --perturb 0", 1, "--perturb: bad value '0' (allowed: a number in (0, 1])"},
    {"sim @S/pendulum.xml --engine mujoco --perturb -1e-15", 1, "--perturb: bad value '-1e-15'"},
    {"sim @S/pendulum.xml --engine mujoco --perturb 2", 1, "--perturb: bad value '2'"},
    {"sim @S/pendulum.xml --engine mujoco --perturb nan", 1, "--perturb: bad value 'nan'"},
    {"sim @S/pendulum.xml --engine mujoco --perturb 1e-15x", 1, "--perturb: bad value '1e-15x'"},
    {"verify @S/pendulum.xml --perturb 1e-15", 1, "verify: unknown option '--perturb'"},
    {"verify @S/pendulum.xml --states 0", 1, "--states: bad value '0' (allowed: an integer from 1 to 100000)"},
    {"verify @S/pendulum.xml --states -4", 1, "--states: bad value '-4'"},
    {"verify @S/pendulum.xml --states 4294967296", 1, "--states: bad value '4294967296'"},
    {"verify @S/pendulum.xml --states 1e12", 1, "--states: bad value '1e12'"},
    {"verify @S/pendulum.xml --states 2147483648", 1, "--states: bad value '2147483648'"},
    {"verify @S/pendulum.xml --seed -1", 1, "--seed: bad value '-1' (allowed: an integer from 0 to 4294967295)"},
    {"verify @S/pendulum.xml --seed 9223372036854775808", 1, "--seed: bad value '9223372036854775808'"},
    {"verify @S/pendulum.xml --seed 0x10", 1, "--seed: bad value '0x10'"},
    {"bench @S/pendulum.xml --steps 0", 1, "--steps: bad value '0'"},
    {"bench @S/pendulum.xml --reps 0", 1, "--reps: bad value '0' (allowed: an integer from 1 to 1000)"},
    {"bench @S/pendulum.xml --reps 1e308", 1, "--reps: bad value '1e308'"},
    {"run @I/mini.ini --out @O --jobs 0", 0, "--jobs: bad value '0' (allowed: an integer from 1 to 1024)"},
    {"run @I/mini.ini --out @O --jobs -1", 0, "--jobs: bad value '-1'"},
    {"run @I/mini.ini --out @O --jobs 2147483648", 0, "--jobs: bad value '2147483648'"},
    {"run @I/mini.ini --out @O --jobs inf", 0, "--jobs: bad value 'inf'"},
};
Test(badinput, numbers) { run_cases(numbers, NCASE(numbers)); }

/* ---------------------------------------------------------------- --opt against the option table */

#define OPT(kv, allowed) \
  { "sim @S/pendulum.xml --engine newton --steps 2 --opt " kv, 1, "--opt " allowed }
static const bad_case options[] = {
    OPT("timestep=0", "timestep: bad value '0' (allowed: a number in (0, 1])"),
    OPT("timestep=1e400", "timestep: bad value '1e400' (allowed: a number in (0, 1])"),
    OPT("timestep=nan", "timestep: bad value 'nan'"),
    OPT("timestep=-0.001", "timestep: bad value '-0.001'"),
    OPT("timestep=2", "timestep: bad value '2'"),
    OPT("gravity=0,-9.81", "gravity: bad value '0,-9.81' (allowed: three comma-separated finite numbers X,Y,Z)"),
    OPT("gravity=0,0,inf", "gravity: bad value '0,0,inf'"),
    OPT("gravity=0,0,-9.81,1", "gravity: bad value '0,0,-9.81,1'"),
    OPT("gravity=0,0,1x", "gravity: bad value '0,0,1x'"),
    OPT("gravity=a,b,c", "gravity: bad value 'a,b,c'"),
    OPT("iterations=0", "iterations: bad value '0' (allowed: an integer from 1 to 1000000)"),
    OPT("iterations=1000001", "iterations: bad value '1000001' (allowed: an integer from 1 to 1000000)"),
    OPT("iterations=2.5", "iterations: bad value '2.5' (allowed: an integer from 1 to 1000000)"),
    OPT("iterations=2147483648", "iterations: bad value '2147483648'"),
    OPT("iterations=9223372036854775808", "iterations: bad value '9223372036854775808'"),
    OPT("iterations=", "iterations: bad value ''"),
    OPT("'iterations= 5'", "iterations: bad value ' 5'"),
    OPT("tolerance=-1e-9", "tolerance: bad value '-1e-9' (allowed: a finite number >= 0)"),
    OPT("tolerance=1e308", "tolerance: bad value '1e308'"),
    OPT("impratio=0", "impratio: bad value '0' (allowed: a finite number > 0)"),
    OPT("impratio=inf", "impratio: bad value 'inf'"),
    OPT("noslip_iterations=-1", "noslip_iterations: bad value '-1'"),
    OPT("mpr_tolerance=-1", "mpr_tolerance: bad value '-1'"),
    OPT("ls_tolerance=nan", "ls_tolerance: bad value 'nan'"),
    OPT("ls_iterations=0", "ls_iterations: bad value '0'"),
    OPT("max_contacts=0", "max_contacts: bad value '0' (allowed: an integer from 1 to 1000000)"),
    OPT("max_contacts=300000000", "max_contacts: bad value '300000000' (allowed: an integer from 1 to 1000000)"),
    OPT("max_contacts=999999999", "max_contacts: bad value '999999999'"),
    OPT("avbd_iterations=99999999", "avbd_iterations: bad value '99999999' (allowed: an integer from 1 to 1000000)"),
    OPT("avbd_iterations=0", "avbd_iterations: bad value '0'"),
    OPT("avbd_tolerance=1e-16", "avbd_tolerance: bad value '1e-16' (allowed: a finite number >= 1e-15)"),
    OPT("avbd_tolerance=1e-300", "avbd_tolerance: bad value '1e-300'"),
    OPT("avbd_tolerance=-1", "avbd_tolerance: bad value '-1'"),
    OPT("avbd_cheb_rho=1", "avbd_cheb_rho: bad value '1' (allowed: a number in [0, 1))"),
    OPT("avbd_cheb_rho=1.5", "avbd_cheb_rho: bad value '1.5'"),
    OPT("collision=exact", "collision: bad value 'exact' (allowed: manifold, mujoco)"),
    OPT("cone=round", "cone: bad value 'round' (allowed: pyramidal, elliptic)"),
    OPT("integrator=implicitfast", "integrator: bad value 'implicitfast' (allowed: euler, rk4, implicit)"),
    OPT("newton_factor=LU", "newton_factor: bad value 'LU'"),
    OPT("disable=gravity,wind", "disable: bad value 'gravity,wind' (allowed: comma-separated: constraint,equality,"
                                "frictionloss,limit,contact,passive,gravity,clampctrl,warmstart,filterparent,"
                                "actuation,refsafe,sensor)"),
    OPT("enable=warp", "enable: bad value 'warp'"),
    {"sim @S/pendulum.xml --engine newton --opt warp=9", 1, "--opt: unknown key 'warp' (allowed: timestep,"},
    OPT("=5", "'=5': expected KEY=VALUE"),
    OPT("iterations", "'iterations': expected KEY=VALUE"),
};
Test(badinput, options) { run_cases(options, NCASE(options)); }

/* ---------------------------------------------------------------- MJCF input */

static const bad_case models[] = {
    {"verify /nonexistent/model.xml", 1, "/nonexistent/model.xml"},
    {"verify @B/malformed.xml", 1, "malformed.xml"},
    {"verify @B/hfield_missing_file.xml", 1, "could not open hfield file"},
    {"verify @B/degenerate_sphere.xml", 1, "ball"},
    {"sim @B/degenerate_box.xml --engine newton", 1, "slab"},
    {"verify @B/zero_mass_refused.xml", 1, "mass"},
    {"verify @B/freejoint_midtree.xml", 1, "free joint"},
    {"sim @B/nan_key.xml --engine newton --key bad", 1, "non-finite"},
    {"sim @I/nan_body_pos.xml --engine newton --steps 2", 1, "body 'b': pos[1] = nan is not finite"},
    {"sim @I/nan_geom_pos.xml --engine newton --steps 2", 1, "geom 'g': pos[0] = nan is not finite"},
    {"sim @I/inf_body_pos.xml --engine newton --steps 2", 1,
     "inf_body_pos.xml: XML Error: problem reading attribute 'pos'"},
    {"sim @I/huge_size.xml --engine newton --steps 2", 1, "body 'b': mass[0] = inf is not finite"},
    {"sim @I/timestep_zero.xml --engine newton --steps 2", 1, "option timestep = 0 is out of range"},
    {"sim @I/timestep_negative.xml --engine avbd --steps 2", 1, "option timestep = -0.01 is out of range"},
    {"sim @I/timestep_nan.xml --engine newton --steps 2", 1, "option timestep = nan is out of range"},
    {"verify @I/timestep_huge.xml", 1, "option timestep = 1000000000 is out of range"},
    {"sim @I/gravity_inf.xml --engine cg --steps 2", 1, "option gravity = 0,0,inf is out of range"},
    {"bench @I/iterations_zero.xml", 1, "option iterations = 0 is out of range"},
    {"sim @I/impratio_negative.xml --engine newton --steps 2", 1, "option impratio = -1 is out of range"},
    {"sim @I/truncated.xml --engine newton --steps 2", 1, "truncated.xml: XML"},
    {"sim @I/empty.xml --engine newton --steps 2", 1, "empty.xml: XML"},
    {"verify @I/binary.xml", 1, "binary.xml: XML"},
    {"sim @I/dir.xml --engine newton --steps 2", 1, "dir.xml: is a directory, not an MJCF model file"},
    {"verify @I/fifo.xml", 1, "fifo.xml: is not a regular file"},
};
Test(badinput, models) { run_cases(models, NCASE(models)); }

/* ---- activation, muscle and fluid parameters: models MuJoCo 2.2.2 loads whose numbers the formulas cannot
   take: one line naming the actuator or geom, exit 2 ---- */
static const bad_case actuators[] = {
    {"verify @B/muscle_timeconst.xml", 1, "actuator 'flexor': muscle timeconst"},
    {"sim @B/muscle_fvmax.xml --engine newton", 1, "actuator 'flexor': muscle fvmax"},
    {"bench @B/filter_tau.xml", 1, "actuator 'lag': filter time constant"},
};
Test(badinput, actuators) { run_cases(actuators, NCASE(actuators)); }
/* ---- end of the activation, muscle and fluid section ---- */

/* ---------------------------------------------------------------- experiment specs */

/* one spec: its text (tokens @I/, @S/, @B/, @O as expand() replaces them) and what the one line must contain */
typedef struct bad_spec {
  const char *text, *want;
} bad_spec;

static const bad_spec specs[] = {
    {"[experiment]\nname = a\nscene = @S/pendulum.xml\nsteps = 99999999999999999999999\n",
     "s.ini:4: [experiment] steps: bad value '99999999999999999999999' (allowed: an integer from 1 to 100000000)"},
    {"[experiment]\nname = a\nscene = @S/pendulum.xml\nsteps = 0\n", "s.ini:4: [experiment] steps: bad value '0'"},
    {"[experiment]\nname = a\nscene = @S/pendulum.xml\nsteps = 2.5\n", "[experiment] steps: bad value '2.5'"},
    {"[experiment]\nname = a\nscene = @S/pendulum.xml\nsteps = -5\n", "[experiment] steps: bad value '-5'"},
    {"[experiment]\nname = a\nscene = @S/pendulum.xml\nsteps = 2147483648\n",
     "[experiment] steps: bad value '2147483648'"},
    {"[experiment]\nname = a\nscene = @S/pendulum.xml\nduration = 1e30\n",
     "[experiment] duration: bad value '1e30' (allowed: a number in (0, 1000000])"},
    {"[experiment]\nname = a\nscene = @S/pendulum.xml\nduration = nan\n", "[experiment] duration: bad value 'nan'"},
    {"[experiment]\nname = a\nscene = @S/pendulum.xml\nduration = inf\n", "[experiment] duration: bad value 'inf'"},
    {"[experiment]\nname = a\nscene = @S/pendulum.xml\nduration = 1000\n[sweep]\ndt = 0.000001\n",
     "duration 1000 s at time step 1e-06 s is 1e+09 steps (allowed: at most 100000000)"},
    {MINI_SPEC "seed = -1\n", "s.ini:5: [experiment] seed: bad value '-1'"},
    {MINI_SPEC "seed = 9223372036854775808\n", "[experiment] seed: bad value '9223372036854775808'"},
    {"[experiment]\nname = a\nname = b\nscene = @S/pendulum.xml\nsteps = 5\n",
     "s.ini:3: [experiment] name given twice (first on line 2)"},
    {MINI_SPEC "steps = 7\n", "s.ini:5: [experiment] steps given twice (first on line 4)"},
    {MINI_SPEC "seed = 1\nseed = 2\n", "s.ini:6: [experiment] seed given twice (first on line 5)"},
    {MINI_SPEC "description = one\n  two\n", "s.ini:6: [experiment] description: an indented line continues it"},
    {MINI_SPEC "frobnicate = 1\n", "s.ini:5: [experiment] unknown key 'frobnicate'"},
    {MINI_SPEC "[warp]\nx = 1\n", "s.ini:6: unknown section [warp]"},
    {"[experiment]\nname = a\nthis is no ini line\nscene = @S/pendulum.xml\nsteps = 5\n", "s.ini:3: syntax error"},
    /* of two errors the first is named */
    {"[experiment]\nname = a\nno equals sign here\nfrobnicate = 1\nscene = @S/pendulum.xml\nsteps = 5\n",
     "s.ini:3: syntax error"},
    {"[experiment]\nname = a\nfrobnicate = 1\nno equals sign here\nscene = @S/pendulum.xml\nsteps = 5\n",
     "s.ini:3: [experiment] unknown key 'frobnicate'"},
    {"[experiment]\nname = a\nsteps = 0\nseed = -1\nscene = @S/pendulum.xml\n",
     "s.ini:3: [experiment] steps: bad value '0'"},
    {"[experiment]\nname = a/b\nscene = @S/pendulum.xml\nsteps = 5\n", "s.ini:2: name 'a/b'"},
    {"[experiment]\nscene = @S/pendulum.xml\nsteps = 5\n", "s.ini: [experiment] is missing 'name'"},
    {"[experiment]\nname = a\nscene = @S/pendulum.xml\n", "s.ini: [experiment] is missing 'steps or duration'"},
    {"", "s.ini: [experiment] is missing 'name'"},
    {"[experiment]\nname = a\nscene = @S/nonexistent.xml\nsteps = 5\n",
     "s.ini:3: scene '@S/nonexistent.xml': cannot read"},
    {"[experiment]\nname = a\nscene = @S/pendulum.xml, @S/pendulum.xml\nsteps = 5\n", "s.ini:3: scene '"},
    {"[experiment]\nname = a\nscene = @S/pendulum.xml,\nsteps = 5\n", "s.ini:3: scene '"},
    {"[experiment]\nname = a\nscene = @I/dir.xml\nsteps = 5\n[sweep]\niterations = 3\n",
     "dir.xml: is a directory, not an MJCF model file"},
    {"[experiment]\nname = a\nkind = warp\nscene = @S/pendulum.xml\nsteps = 5\n", "s.ini:3: kind 'warp': bad value"},
    {"[experiment]\nname = a\nkind = refinement\nlevels = 3\nscene = @S/pendulum.xml\nsteps = 5\n",
     "s.ini:4: [experiment] levels: bad value '3' (allowed: an integer from 4 to 12)"},
    {"[experiment]\nname = a\nkind = convergence\nstates = 0\nscene = @S/pendulum.xml\nsteps = 5\n",
     "s.ini:4: [experiment] states: bad value '0' (allowed: an integer from 1 to 100)"},
    {"[experiment]\nname = a\nkind = bench\nreps = 0\nscene = @S/pendulum.xml\nsteps = 5\n",
     "s.ini:4: [experiment] reps: bad value '0' (allowed: an integer from 1 to 1000)"},
    {MINI_SPEC "levels = 5\n", "levels is for kind = refinement only"},
    {MINI_SPEC "[sweep]\niterations = 10, 0\n",
     "s.ini:6: [sweep] iterations: bad value '0' (allowed: an integer from 1 to 1000000)"},
    {MINI_SPEC "[sweep]\nmax_contacts = 999999999\n", "s.ini:6: [sweep] max_contacts: bad value '999999999'"},
    {MINI_SPEC "[sweep]\ngravity = inf\n", "s.ini:6: [sweep] gravity: bad value 'inf'"},
    {MINI_SPEC "[sweep]\ndt = 1e9\n", "s.ini:6: [sweep] dt: bad value '1e9' (allowed: a number in (0, 1])"},
    {MINI_SPEC "[sweep]\ndt = 0\n", "s.ini:6: [sweep] dt: bad value '0'"},
    {MINI_SPEC "[sweep]\ndt = 0.001, nan\n", "s.ini:6: [sweep] dt: bad value 'nan'"},
    {MINI_SPEC "[sweep]\nengine = newton, warp\n", "s.ini:6: [sweep] engine: bad value 'warp'"},
    {MINI_SPEC "[sweep]\nprecision = f16\n", "s.ini:6: [sweep] precision: bad value 'f16'"},
    {MINI_SPEC "[sweep]\niterations = 1,,2\n", "s.ini:6: [sweep] iterations = '1,,2': expected a comma-separated"},
    {MINI_SPEC "[sweep]\ntimestep = 0.001\n", "s.ini:6: [sweep] use 'dt'"},
    {MINI_SPEC "[sweep]\niterations = 5\niterations = 6\n", "s.ini:7: [sweep] 'iterations' given twice"},
    {MINI_SPEC "[sweep]\nwarp = 1\n", "s.ini:6: [sweep] unknown key 'warp'"},
    {MINI_SPEC "[sweep]\niterations = 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,"
               "30,31,32,33\n",
     "s.ini:6: [sweep] iterations: more than 32 values"},
    {MINI_SPEC "[metrics]\nnames = warp\n", "s.ini:6: [metrics] unknown metric 'warp'"},
    {MINI_SPEC "[metrics]\nnames = final_qpos_err\nnames = energy_drift\n",
     "s.ini:7: [metrics] names given twice (first on line 6)"},
    {MINI_SPEC "[check]\nfinal_qpos_err = abs -1\n", "s.ini:6: [check] final_qpos_err = 'abs -1'"},
    {MINI_SPEC "[check]\nfinal_qpos_err = abs nan\n", "s.ini:6: [check] final_qpos_err = 'abs nan'"},
    {MINI_SPEC "[check]\nfinal_qpos_err = ratio 0.5\n", "s.ini:6: [check] final_qpos_err: ratio 0.5 is below 1"},
    {MINI_SPEC "[check]\nfinal_qpos_err = band 1\n", "s.ini:6: [check] final_qpos_err: bad band kind 'band'"},
    {MINI_SPEC "[check]\nwarp = abs 1\n", "s.ini:6: [check] unknown metric 'warp'"},
    {MINI_SPEC "[reference]\nuse = warp\n", "s.ini:6: [reference] use: unknown reference 'warp'"},
    {MINI_SPEC "[reference]\nuse = mujoco_free\nuse = mujoco_free\n", "s.ini:7: [reference] use given twice"},
    {"[experiment]\nname = a\nscene = @S/pendulum.xml\nsteps = 5\n[experiment\n", "s.ini:5: syntax error"},
};

/* the specs built by write_inputs(): their file and the line */
static const bad_case spec_files[] = {
    {"run @I/huge_sweep.ini --out @O", 0,
     "huge_sweep.ini: the sweep has 1152921504606846976 points (allowed: 1 to 100000)"},
    {"run @I/many_scenes.ini --out @O", 0, "many_scenes.ini:3: scene: more than 32 scenes"},
};

/* each spec as TMP/in/s.ini, run with --out TMP/out: exit 2, one line, nothing written */
Test(badinput, specs) {
  for (int i = 0; i < NCASE(specs); i++) {
    put("s.ini", specs[i].text, -1);
    char want[4096];
    expand(want, sizeof want, specs[i].want);
    expect_bad("run @I/s.ini --out @O", 0, want);
  }
  run_cases(spec_files, NCASE(spec_files));
}

/* lines longer than the system inih's 200-character buffer: a long valid line (a key's value, an indented
   scene list) is read whole (the error below it names its own line), an over-long one (past 65536
   characters) and a long key are refused naming the line */
Test(badinput, spec_long_lines) {
  static char t[80000];
  size_t j = (size_t)snprintf(t, sizeof t, "[experiment]\nname = a\ndescription = ");
  for (int k = 0; k < 60; k++) j += (size_t)snprintf(t + j, sizeof t - j, "word%d ", k);
  snprintf(t + j, sizeof t - j, " ; a comment\nscene = @S/pendulum.xml\nsteps = x\n");
  put("s.ini", t, -1);
  expect_bad("run @I/s.ini --out @O", 0, "s.ini:5: [experiment] steps: bad value 'x'");
  /* a scene list going on on an indented line of about 700 characters */
  j = (size_t)snprintf(t, sizeof t, "[experiment]\nname = a\nscene = @I/p0.xml\n   ");
  for (int k = 1; k <= 20; k++) j += (size_t)snprintf(t + j, sizeof t - j, "%s@I/p%d.xml", k > 1 ? ", " : " ", k);
  snprintf(t + j, sizeof t - j, "\nsteps = x\n");
  put("s.ini", t, -1);
  expect_bad("run @I/s.ini --out @O", 0, "s.ini:5: [experiment] steps: bad value 'x'");
  j = (size_t)snprintf(t, sizeof t, "[experiment]\nname = a\ndescription = ");
  memset(t + j, 'x', 70000);
  snprintf(t + j + 70000, sizeof t - j - 70000, "\nscene = @S/pendulum.xml\nsteps = 5\n");
  put("s.ini", t, -1);
  expect_bad("run @I/s.ini --out @O", 0, "s.ini:3: line too long (70015 characters; at most 65536)");
  j = (size_t)snprintf(t, sizeof t, "[experiment]\nname = a\n");
  memset(t + j, 'k', 300);
  snprintf(t + j + 300, sizeof t - j - 300, " = 1\nscene = @S/pendulum.xml\nsteps = 5\n");
  put("s.ini", t, -1);
  expect_bad("run @I/s.ini --out @O", 0, "s.ini:3: line too long for a section or key");
}

/* ---------------------------------------------------------------- memory that is not there */

/* 10⁶ contacts need about 4 GB of simulation data: under a 1.5 GB address-space limit the checked allocation
   names the model and its capacities instead of a crash */
#define LOWMEM "ulimit -v 1500000; "
static const bad_case resources[] = {
    {LOWMEM "sim @S/pendulum.xml --engine newton --steps 2 --opt max_contacts=1000000", 1,
     "pendulum.xml: out of memory for the simulation data (1000000 contacts"},
    {LOWMEM "sim @S/pendulum.xml --engine avbd --steps 2 --opt max_contacts=1000000", 1, "out of memory"},
    {LOWMEM "verify @S/pendulum.xml --states 2 --opt max_contacts=1000000", 1, "out of memory"},
    {LOWMEM "bench @S/pendulum.xml --steps 2 --reps 1 --opt max_contacts=1000000", 1, "out of memory"},
};
Test(badinput, resources) { run_cases(resources, NCASE(resources)); }

/* the count of each table, printed for the record; at least 100 cases in all */
Test(badinput, case_count) {
  struct {
    const char *name;
    int n;
  } cat[] = {{"verify_cli", NCASE(verify_cli)},
             {"sim_cli", NCASE(sim_cli)},
             {"bench_cli", NCASE(bench_cli)},
             {"run_cli", NCASE(run_cli)},
             {"merge_cli", NCASE(merge_cli)},
             {"check_cli", NCASE(check_cli)},
             {"report_cli", NCASE(report_cli)},
             {"other_cli", NCASE(other_cli)},
             {"numbers", NCASE(numbers)},
             {"options", NCASE(options)},
             {"models", NCASE(models)},
             {"actuators", NCASE(actuators)},
             {"specs", NCASE(specs) + NCASE(spec_files) + 4},
             {"resources", NCASE(resources)},
             {"single tests", 3} /* contact_capacity_overflow, sweep_option_range, unwritable_csv */,
             {"tendons", 7} /* the badinput_tendon suite below */};
  int total = 0;
  for (size_t i = 0; i < sizeof cat / sizeof cat[0]; i++) {
    printf("bad-input cases: %-12s %3d\n", cat[i].name, cat[i].n);
    total += cat[i].n;
  }
  printf("bad-input cases: %-12s %3d\n", "total", total);
  cr_expect_geq(total, 100, "%d bad-input cases (want at least 100)", total);
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
/* AVBD runs every transmission MuJoCo 2.2.2 has (sites, ball and free joints, bodies: wrenches on body poses); what it
   still refuses it refuses with the physical reason: a slider-crank whose site rides on a mocap body (AVBD holds
   static bodies at their fixed pose while the crank is evaluated on the body poses). */
Test(badinput_tendon, avbd_runs_every_transmission) {
  const char *models[] = {SRCDIR "/tests/models/transmissions.xml",
                          "/usr/share/mujoco/model/adhesion/active_adhesion.xml"};
  for (int i = 0; i < 2; i++) {
    char args[1024], msg[4096];
    int lines;
    snprintf(args, sizeof args, "sim %s --engine avbd --steps 3", models[i]);
    int st = run(args, 0, msg, sizeof msg, &lines);
    cr_expect_eq(st, 0, "'%s': exit %d, stderr: %s", args, st, msg);
  }
}
Test(badinput_tendon, avbd_refuses_crank_site_on_mocap_body) {
  expect_bad("sim " BAD "avbd_crank_mocap.xml --engine avbd --steps 2", 1,
             "actuator 'drive' has its slider-crank site on body 'carriage', which moves with a mocap body");
}
Test(badinput_tendon, avbd_refuses_ellipsoid_fluid) {
  expect_bad("sim " SRCDIR "/tests/models/fluid_ellipsoid.xml --engine avbd", 1,
             "body 'torso' uses the ellipsoid fluid model (fluidshape): AVBD applies the inertia-box model only");
}
