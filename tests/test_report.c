/* test_report.c — `rigidlab report DIR` on a small fixture (tests/fixtures/report/: a few rows of
 * every CSV kind): it writes summary.md, tables.tex and the plots (.gp, .svg, .png), the summary
 * carries the fixture's worst errors; a missing or malformed CSV gives exit 2 with one stderr line
 * naming the file (and line) and leaves nothing written, not even a temporary. */
#define _GNU_SOURCE /* memmem */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[256];

static void sh(const char *fmt, const char *arg) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, fmt, arg, tmpdir);
  cr_assert_eq(system(cmd), 0, "command failed: %s", cmd);
}

static void setup(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/rl_report_XXXXXX");
  cr_assert_not_null(mkdtemp(tmpdir));
  sh("cp -r %s/tests/fixtures/report/. %s/", SRCDIR);
}
static void teardown(void) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
  if (system(cmd)) {}
}

/* run `rigidlab report tmpdir`; stderr into msg, its line count into *lines */
static int report(char *msg, size_t msglen, int *lines) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s report %s > /dev/null 2> %s.err", RIGIDLAB, tmpdir, tmpdir);
  int st = system(cmd);
  snprintf(cmd, sizeof cmd, "%s.err", tmpdir);
  FILE *f = fopen(cmd, "r");
  msg[0] = 0;
  *lines = 0;
  if (f) {
    size_t n = fread(msg, 1, msglen - 1, f);
    msg[n] = 0;
    fclose(f);
    for (size_t i = 0; i < n; i++) *lines += msg[i] == '\n';
  }
  remove(cmd);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static long file_size(const char *name) {
  char p[512];
  struct stat sb;
  snprintf(p, sizeof p, "%s/%s", tmpdir, name);
  return stat(p, &sb) ? -1 : (long)sb.st_size;
}

static char *slurp(const char *name) {
  char p[512];
  snprintf(p, sizeof p, "%s/%s", tmpdir, name);
  FILE *f = fopen(p, "rb");
  cr_assert_not_null(f, "%s missing", p);
  static char buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  fclose(f);
  return buf;
}

/* files in tmpdir that the report wrote (anything not *.csv, other than the studies/ input folder) */
static int outputs_left(char *names, size_t len) {
  DIR *d = opendir(tmpdir);
  struct dirent *e;
  int n = 0;
  names[0] = 0;
  while ((e = readdir(d))) {
    size_t k = strlen(e->d_name);
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, "studies") ||
        (k > 4 && !strcmp(e->d_name + k - 4, ".csv")))
      continue;
    n++;
    strncat(names, e->d_name, len - strlen(names) - 2);
    strncat(names, " ", len - strlen(names) - 1);
  }
  closedir(d);
  return n;
}

TestSuite(report, .init = setup, .fini = teardown, .timeout = 120);

Test(report, writes_summary_tables_and_plots) {
  char msg[4096];
  int lines;
  int st = report(msg, sizeof msg, &lines);
  cr_assert_eq(st, 0, "exit %d: %s", st, msg);
  const char *files[] = {"summary.md",
                         "tables.tex",
                         "plots/verify.gp",
                         "plots/verify.svg",
                         "plots/verify.png",
                         "plots/contact_box_stack.gp",
                         "plots/contact_box_stack.svg",
                         "plots/contact_box_stack.png",
                         "plots/bench_ratio.svg",
                         "plots/bench_ratio.png",
                         "plots/chains.svg",
                         "plots/chains.png"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++)
    cr_expect_gt(file_size(files[i]), 0, "%s not written", files[i]);
  const char *png = slurp("plots/verify.png");
  cr_expect(!memcmp(png, "\x89PNG", 4), "verify.png is not a PNG");
  cr_expect_not_null(strstr(slurp("plots/verify.svg"), "<svg"), "verify.svg is not SVG");
  const char *sum = slurp("summary.md");
  /* the fixture's worst errors: f32 collision dist 0.00481 (failed), f64 solve 3e-10 */
  cr_expect_not_null(strstr(sum, "4.810e-03"), "worst f32 error missing from summary.md:\n%s", sum);
  cr_expect_not_null(strstr(sum, "3.000e-10"), "worst f64 error missing from summary.md");
  cr_expect_not_null(strstr(sum, "verify rows failed: **1** of 9"), "failed count missing");
  /* counts and fractions never stand in for errors: iter_newton sits at its tolerance (1 of 1) and
     the step's left_out fraction at half of it, both nearer than any error row, yet the headline and the per-stage table
     name the errors; they appear in their own table */
  const char *head = strstr(sum, "## Headline"), *other = strstr(sum, "## Other figures");
  cr_assert(head && other && other > head, "summary.md has no headline followed by other figures");
  cr_expect_null(memmem(head, (size_t)(other - head), "iter_newton", 11), "a count in the error headline");
  cr_expect_null(memmem(head, (size_t)(other - head), "left_out", 8), "a fraction in the error headline");
  cr_expect_not_null(strstr(sum, "| solve | 3.000e-10 | box_stack.xml@elliptic | efc_force |"),
                     "per-stage table: solve's error row missing");
  cr_expect_not_null(strstr(sum, "| iter_newton (solve) | count | 1 |"), "the count row's own table is missing");
  cr_expect_not_null(strstr(sum, "| left_out (step) | fraction | 5.000e-02 |"),
                     "the fraction row's own table is missing");
  cr_expect_not_null(strstr(sum, "plots/verify.svg"), "summary does not link the plots");
  /* chain fixture: ours ∝ n, MuJoCo ∝ n² */
  cr_expect_not_null(strstr(sum, "rigidlab **1.00**, MuJoCo **2.00**"), "chain exponents missing");
  cr_expect_not_null(strstr(sum, "7.500e-15"), "trajectory agreement missing");
  const char *tex = slurp("tables.tex");
  cr_expect_not_null(strstr(tex, "\\toprule"), "tables.tex has no booktabs table");
  cr_expect_not_null(strstr(tex, "box\\_stack.xml@elliptic"), "tables.tex: model not escaped");
  /* the studies: one plot per study after its kind, a section each, a booktabs table each */
  cr_expect_gt(file_size("plots/study_refine.svg"), 0, "refinement study plot not written");
  cr_expect_gt(file_size("plots/study_conv.png"), 0, "convergence study plot not written");
  cr_expect_not_null(strstr(slurp("plots/study_refine.gp"), "fit slope 1.000"),
                     "the fixture's exact order 1 is not the fitted slope");
  /* the verify plot: relative errors on a log axis of their own; the count goes to the counts panel */
  const char *vgp = slurp("plots/verify.gp");
  const char *cnt = strstr(vgp, "$cnt64 << EOD\n"), *rel = strstr(vgp, "$rel64 << EOD\n");
  cr_assert(cnt && rel, "verify.gp lacks the relative-error or the count datablock");
  cr_expect(!strncmp(cnt + strlen("$cnt64 << EOD\n"), "0.8 1 ", 6),
            "iter_newton is not the counts panel's first bar:\n%.200s", cnt);
  cr_expect_null(strstr(vgp, "1e+00"), "a count on the relative-error axis");
  /* one colour per engine in every plot: newton is the same blue in the contact and refinement plots */
  cr_expect_not_null(strstr(slurp("plots/contact_box_stack.gp"), "lc rgb \"#1f77b4\" title \"newton\""),
                     "contact plot: newton's colour");
  cr_expect_not_null(
      strstr(slurp("plots/study_refine.gp"), "lc rgb \"#1f77b4\" title \"newton f64 err_seg, fit slope 1.000\""),
      "refinement plot: newton's colour or the short key");
  cr_expect_not_null(strstr(slurp("tables.tex"), "tab:study-refine"), "no LaTeX table for the refinement study");
  sum = slurp("summary.md"); /* slurp's buffer is shared */
  cr_expect_not_null(strstr(sum, "### refine (kind refinement)"), "no section for the refinement study");
  cr_expect_not_null(strstr(sum, "| box_stack.cg.f64 | 1.000e-09 |"),
                     "the convergence study's final_gap row is missing");
  /* a second run replaces the outputs and leaves no temporaries */
  st = report(msg, sizeof msg, &lines);
  cr_assert_eq(st, 0, "second run: exit %d: %s", st, msg);
  char names[2048];
  outputs_left(names, sizeof names);
  cr_expect_null(strstr(names, ".tmp."), "temporaries left: %s", names);
  cr_expect_null(strstr(names, ".old."), "old plots left: %s", names);
}

static void expect_bad(const char *must_contain) {
  char msg[4096], names[2048];
  int lines;
  int st = report(msg, sizeof msg, &lines);
  cr_expect_eq(st, 2, "exit %d (want 2), stderr: %s", st, msg);
  cr_expect_eq(lines, 1, "%d stderr lines (want 1): %s", lines, msg);
  cr_expect_not_null(strstr(msg, must_contain), "stderr does not name '%s': %s", must_contain, msg);
  cr_expect_eq(outputs_left(names, sizeof names), 0, "outputs left behind after an error: %s", names);
}

Test(report, malformed_verify_row_names_file_and_line) {
  sh("echo 'pendulum.xml@pyramidal,f64,kinematics,xpos,1e-16' >> %2$s/verify.csv%1$.0s", "");
  expect_bad("verify.csv:11");
}

Test(report, bad_number_in_contact_csv_names_file) {
  sh("sed -i '3s/,0.49,/,zero point four nine,/' %2$s/contact_box_stack_mujoco.csv%1$.0s", "");
  expect_bad("contact_box_stack_mujoco.csv:3");
}

Test(report, missing_column_names_file) {
  sh("sed -i '1s/ratio/speedup/' %2$s/bench_chains.csv%1$.0s", "");
  expect_bad("bench_chains.csv: no column 'ratio'");
}

Test(report, bad_number_in_study_metrics_names_file_and_line) {
  sh("sed -i '3s/,0.001,/,one milli,/' %2$s/studies/refine/metrics.csv%1$.0s", "");
  expect_bad("studies/refine/metrics.csv:3");
}

Test(report, missing_verify_csv) {
  sh("rm %2$s/verify.csv%1$.0s", "");
  expect_bad("verify.csv");
}

Test(report, not_a_directory) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s report %s/nowhere > /dev/null 2>&1", RIGIDLAB, tmpdir);
  int st = system(cmd);
  cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 2, "report on a missing directory: status %d (want exit 2)", st);
}

/* docs/fields.md is `rigidlab fields --markdown`, byte for byte: the field reference cannot drift from the
   registry in engine/rl_data.h */
Test(report, field_reference_matches_the_registry) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s fields --markdown > %s/fields.md && cmp -s %s/fields.md %s/docs/fields.md", RIGIDLAB,
           tmpdir, tmpdir, SRCDIR);
  int st = system(cmd);
  cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "docs/fields.md differs from `rigidlab fields --markdown` "
                                                   "(regenerate it: rigidlab fields --markdown > docs/fields.md)");
  cr_expect_not_null(strstr(slurp("fields.md"), "| `qpos` | real | nq | m or rad |"),
                     "qpos's entry missing from the field reference");
}
