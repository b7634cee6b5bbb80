#!/bin/sh
# test_install.sh BUILDDIR SRCDIR — `meson install` gives another C project what it needs to link rigidlab:
# the build is installed into a scratch DESTDIR, then tests/install_probe.c (which includes only the installed
# headers) is compiled and linked with nothing but `pkg-config --cflags --libs rigidlab64` (and rigidlab32),
# PKG_CONFIG_SYSROOT_DIR mapping the installed paths into the DESTDIR, and run: it checks two engine results.
set -eu
build=$1
src=$2
tmp=$(mktemp -d /tmp/rl_install_XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
root="$tmp/root"
meson install -C "$build" --no-rebuild --destdir "$root" > "$tmp/install.log" 2>&1 || {
  echo "meson install failed:"; cat "$tmp/install.log"; exit 1; }
status=0
for prec in 64 32; do
  pc=$(find "$root" -name "rigidlab$prec.pc" | head -n 1)
  [ -n "$pc" ] || { echo "rigidlab$prec.pc not installed under $root"; exit 1; }
  lib=$(find "$root" -name "librl$prec.a" | head -n 1)
  [ -n "$lib" ] || { echo "librl$prec.a not installed under $root"; exit 1; }
  hdr=$(find "$root" -path "*/include/rigidlab/rl_engine.h" | head -n 1)
  [ -n "$hdr" ] || { echo "rigidlab/rl_engine.h not installed under $root"; exit 1; }
  flags=$(PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR="$root" pkg-config --cflags --libs "rigidlab$prec")
  echo "rigidlab$prec: $flags"
  # the probe sees no source tree: a copy in the scratch folder, and the compiler's default include path
  cp "$src/tests/install_probe.c" "$tmp/probe.c"
  # shellcheck disable=SC2086 # the flags are words
  ${CC:-cc} -std=c11 -o "$tmp/probe$prec" "$tmp/probe.c" $flags
  out=$("$tmp/probe$prec") || status=1
  echo "$out"
  case "$out" in "f$prec ok "*) ;; *) status=1 ;; esac
done
exit $status
