/* scale_scene.c — the synthetic scenes of the scale study (see scale_scene.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "scale_scene.h"

int rl_scale_is_scene(const char *name) {
  return !strncmp(name, "spheres:", 8) || !strncmp(name, "boxes:", 6) || !strncmp(name, "links:", 6);
}

/* uniform in [−a, a] from a 64-bit LCG (Knuth's MMIX constants) */
static double jitter(unsigned long long *s, double a) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return a * (2.0 * (double)(*s >> 11) / 9007199254740992.0 - 1.0);
}

/* N bodies on a k×k×layers lattice (k = ⌈√(N/⌈∛N⌉)⌉ … the smallest square footprint holding N in ⌈∛N⌉
   layers), spacing 0.098 m, jitter ±0.002 m; walls 0.001 m outside the outermost bodies */
static void write_pile(FILE *f, int n, int box) {
  int layers = (int)ceil(cbrt((double)n) - 1e-9);
  int k = (int)ceil(sqrt((double)n / layers) - 1e-9);
  double sp = 0.098, half = 0.5 * sp * k + 0.001;
  unsigned long long s = 7;
  fprintf(
      f,
      "  <default>\n    <geom type=\"%s\" size=\"0.05%s\" mass=\"0.1\" friction=\"0.6 0.005 0.0001\" condim=\"3\"/>\n"
      "  </default>\n  <worldbody>\n",
      box ? "box" : "sphere", box ? " 0.05 0.05" : "");
  fprintf(f, "    <geom name=\"floor\" type=\"plane\" size=\"%g %g 0.1\"/>\n", half + 1, half + 1);
  const char *wall[4] = {"pos=\"-%g 0 0\" zaxis=\"1 0 0\"", "pos=\"%g 0 0\" zaxis=\"-1 0 0\"",
                         "pos=\"0 -%g 0\" zaxis=\"0 1 0\"", "pos=\"0 %g 0\" zaxis=\"0 -1 0\""};
  for (int w = 0; w < 4; w++) {
    fprintf(f, "    <geom name=\"wall%d\" type=\"plane\" size=\"%g %g 0.1\" ", w, half + 1, half + 1);
    fprintf(f, wall[w], half);
    fputs("/>\n", f);
  }
  for (int b = 0; b < n; b++) {
    int ix = b % k, iy = (b / k) % k, iz = b / (k * k);
    double x = -0.5 * sp * (k - 1) + sp * ix + jitter(&s, 0.002);
    double y = -0.5 * sp * (k - 1) + sp * iy + jitter(&s, 0.002);
    double z = 0.0505 + sp * iz + jitter(&s, 0.001);
    fprintf(f, "    <body name=\"b%d\" pos=\"%.4f %.4f %.4f\"><freejoint/><geom/></body>\n", b, x, y, z);
  }
  fputs("  </worldbody>\n", f);
}

/* n capsules of length 0.1 m along x in rows of 20 links, each row turning back (a zigzag of straight
   runs joined by links at right angles), radius 0.01 m, resting 0.0005 m into the floor */
static void write_links(FILE *f, int n) {
  fputs("  <default>\n    <geom type=\"capsule\" size=\"0.01\" mass=\"0.05\" contype=\"1\" conaffinity=\"2\" "
        "condim=\"3\"/>\n  </default>\n  <worldbody>\n"
        "    <geom name=\"floor\" type=\"plane\" size=\"10 10 0.1\" contype=\"2\" conaffinity=\"1\"/>\n",
        f);
  double x = 0, y = 0, z = 0.0095;
  int dir = 1;
  for (int b = 0; b < n; b++) {
    /* link b runs from (x, y) along +x·dir, or along +y at a row end */
    int turn = (b % 21) == 20;
    double dx = turn ? 0 : 0.1 * dir, dy = turn ? 0.1 : 0;
    fprintf(f,
            "    <body name=\"l%d\" pos=\"%.4f %.4f %.4f\"><freejoint/><geom fromto=\"0 0 0 %.4f %.4f 0\"/></body>\n",
            b, x, y, z, dx, dy);
    x += dx;
    y += dy;
    if (turn) dir = -dir;
  }
  fputs("  </worldbody>\n  <equality>\n", f);
  /* link b's end is link b+1's origin: anchor at body1's frame of the joint point */
  x = 0;
  y = 0;
  dir = 1;
  for (int b = 0; b + 1 < n; b++) {
    int turn = (b % 21) == 20;
    double dx = turn ? 0 : 0.1 * dir, dy = turn ? 0.1 : 0;
    fprintf(f, "    <connect body1=\"l%d\" body2=\"l%d\" anchor=\"%.4f %.4f 0\"/>\n", b, b + 1, dx, dy);
    if (turn) dir = -dir;
  }
  fputs("  </equality>\n", f);
}

int rl_scale_scene_write(const char *path, const char *family, int n, long njmax, char *err, int errlen) {
  int links = !strcmp(family, "links"), box = !strcmp(family, "boxes");
  if (!links && !box && strcmp(family, "spheres")) {
    snprintf(err, (size_t)errlen, "scale scene '%s': family must be spheres, boxes or links", family);
    return -1;
  }
  if (n < 2 || n > 100000) {
    snprintf(err, (size_t)errlen, "scale scene %s:%d: N must be between 2 and 100000", family, n);
    return -1;
  }
  FILE *f = fopen(path, "w");
  if (!f) {
    snprintf(err, (size_t)errlen, "%s: cannot write the scale scene", path);
    return -1;
  }
  /* contacts: a pile body touches at most ~12 neighbours and 3 planes; a box pair's manifold has up to 8
     points (a 125-box pile filled 24 per box, the capacity, in its first steps); a link touches the floor
     with up to 2 points */
  int ncon = links ? 4 * n : box ? 64 * n : 10 * n;
  fprintf(f, "<mujoco model=\"%s%d\">\n  <option timestep=\"0.002\" gravity=\"0 0 -9.81\"/>\n", family, n);
  fprintf(f, "  <size nconmax=\"%d\" njmax=\"%ld\"/>\n", ncon, njmax);
  if (links) write_links(f, n);
  else write_pile(f, n, box);
  fputs("</mujoco>\n", f);
  if (fclose(f)) {
    snprintf(err, (size_t)errlen, "%s: cannot write the scale scene", path);
    return -1;
  }
  return 0;
}
