#!/usr/bin/env python3
"""Writes hfield_terrain.bin, the elevation grid of hfield_terrain.xml, in MuJoCo's binary hfield format:
int32 nrow, int32 ncol, then nrow*ncol float32 elevations, row-major (MuJoCo's compiler rescales them to [0, 1]).
Rolling hills plus a ridge and a few bumps, 31 x 31 points.  Run: python3 tests/models/hfield_terrain.py"""
import math, os, struct

NROW = NCOL = 31


def elevation(u, v):
    # u, v in [-1, 1]: the grid's x and y over the field's half-extents
    h = 0.5 + 0.25 * math.sin(2.0 * u) * math.cos(1.5 * v)
    h += 0.12 * math.sin(5.0 * u + 3.0 * v)
    h += 0.2 * math.exp(-((u + 0.4) ** 2 + (v - 0.5) ** 2) / 0.02)  # a bump
    h += 0.1 * max(0.0, 1.0 - abs(v + 0.5) / 0.08)                   # a ridge along x
    return h


def main():
    vals = []
    for r in range(NROW):
        for c in range(NCOL):
            vals.append(elevation(-1 + 2 * c / (NCOL - 1), -1 + 2 * r / (NROW - 1)))
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hfield_terrain.bin")
    with open(out, "wb") as f:
        f.write(struct.pack("<ii", NROW, NCOL))
        f.write(struct.pack("<%df" % len(vals), *vals))


if __name__ == "__main__":
    main()
