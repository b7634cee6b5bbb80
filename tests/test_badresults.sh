#!/usr/bin/env bash
# test_badresults.sh RIGIDLAB SRCDIR — bad results and bad output targets: every case must end with the
# expected exit status (2 for bad input; `check` on a non-finite result: 1), exactly one error line on
# stderr ("rigidlab: ...") naming the culprit (file, line, value or key), and no file left behind (no
# temporary NAME.tmp.PID or .STUDY.tmp.PID anywhere, and the named outputs absent or untouched).
# Categories: merge (shards that do not fit together, malformed rows), resume (another configuration),
# check (corrupt or non-finite values), traj (a trajectory CSV whose step column is not a step),
# files (special files, symbolic links and folders as outputs, signals, stale temporaries).
# A summary line gives the count per category; any failure makes the exit status 1.
set -uo pipefail
rl=$1
src=$2
tmp=$(mktemp -d /tmp/rl_badres_XXXXXX)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0
declare -A count
bad() {
  echo "FAIL: $*"
  fail=1
}

# no temporary of ours anywhere below $tmp (the fixtures' own files excepted)
no_temps() {
  local left
  left=$(find "$tmp" \( -name '*.tmp.[0-9]*' -o -name '.*.old.[0-9]*' \) -print 2> /dev/null)
  [ -z "$left" ] || {
    echo "$left"
    return 1
  }
}

# expect CATEGORY NAME RC CULPRIT CMD... — RC, one "rigidlab:" line on stderr holding CULPRIT, no temporaries
expect() {
  local cat=$1 name=$2 want=$3 culprit=$4
  shift 4
  count[$cat]=$((${count[$cat]:-0} + 1))
  "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$? nerr
  nerr=$(grep -c '^rigidlab: ' "$tmp/err")
  if [ "$rc" != "$want" ]; then
    bad "$cat/$name: exit $rc, expected $want"
    sed 's/^/    /' "$tmp/err" | head -5
  elif [ "$want" = 2 ] && [ "$nerr" != 1 ]; then
    bad "$cat/$name: $nerr error lines on stderr, expected 1"
    sed 's/^/    /' "$tmp/err" | head -5
  elif [ "$want" = 2 ] && ! grep '^rigidlab: ' "$tmp/err" | grep -qF -- "$culprit"; then
    bad "$cat/$name: the error line does not name '$culprit':"
    sed 's/^/    /' "$tmp/err" | head -5
  elif [ "$want" = 1 ] && ! grep -qF -- "$culprit" "$tmp/out"; then
    bad "$cat/$name: the violation does not name '$culprit':"
    sed 's/^/    /' "$tmp/out" | head -5
  elif ! no_temps > "$tmp/left"; then
    bad "$cat/$name: temporaries left behind:"
    sed 's/^/    /' "$tmp/left"
  fi
}
absent() { [ ! -e "$2" ] && [ ! -L "$2" ] || bad "$1: $2 was left behind"; }

sc="$src/experiments/scenes"
cat > "$tmp/tiny.ini" << EOF
[experiment]
name = tiny
scene = $sc/pendulum.xml
steps = 20
seed = 1
description = bad-results test: a small trajectory study
[sweep]
engine = newton, mujoco
precision = f64
cone = pyramidal, elliptic
[reference]
use = mujoco_free
[metrics]
names = final_qpos_err, qpos_err_max
[check]
final_qpos_err = abs 1e-9
qpos_err_max = abs 1e-9
EOF
sed 's/steps = 20/steps = 21/' "$tmp/tiny.ini" > "$tmp/tiny21.ini"
# a second study, for merges of several studies at once
sed -e 's/name = tiny/name = tinyb/' "$tmp/tiny.ini" > "$tmp/tinyb.ini"

"$rl" run "$tmp/tiny.ini" --out "$tmp/full" --jobs 2 > /dev/null 2>&1 || {
  echo "setup: run failed"
  exit 1
}
for i in 1 2; do
  "$rl" run "$tmp/tiny.ini" "$tmp/tinyb.ini" --out "$tmp/sh$i" --shard $i/2 --jobs 2 > /dev/null 2>&1 ||
    bad "setup: shard $i"
done
"$rl" run "$tmp/tiny.ini" --out "$tmp/opt2" --shard 2/2 --opt iterations=2 --jobs 2 > /dev/null 2>&1 || bad "setup: opt"
"$rl" check "$tmp/full" --baseline "$tmp/base" --update-baseline > /dev/null 2>&1 || bad "setup: baseline"
# the shards merge (sanity: the checks below do not refuse a good merge, identical overlaps included)
"$rl" merge "$tmp/sh1" "$tmp/sh2" "$tmp/sh2" --out "$tmp/good" > /dev/null 2>&1 || bad "a good merge was refused"
cmp -s "$tmp/good/tiny/metrics.csv" "$tmp/full/tiny/metrics.csv" || bad "the good merge differs from the full run"

# fresh copies of the two shards (A, B) to corrupt
shards() {
  rm -rf "$tmp/A" "$tmp/B" "$tmp/M"
  cp -r "$tmp/sh1" "$tmp/A"
  cp -r "$tmp/sh2" "$tmp/B"
}
M="$tmp/M"
mA="$tmp/A/tiny/metrics.csv"

# ---------- merge ----------
shards
: > "$mA"
expect merge empty_metrics 2 "$mA" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
absent merge/empty_metrics "$M"
shards
rm "$mA"
mkdir "$mA"
expect merge metrics_is_a_folder 2 "$mA: is a directory" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
absent merge/metrics_is_a_folder "$M"
shards
rm "$tmp/B/tiny/spec.ini"
expect merge missing_spec 2 "$tmp/B/tiny/spec.ini" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
absent merge/missing_spec "$M"
shards
echo "# edited" >> "$tmp/B/tiny/spec.ini"
expect merge other_spec 2 "$tmp/B/tiny/spec.ini" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
absent merge/other_spec "$M"
shards
expect merge other_opt 2 "extra_opts" "$rl" merge "$tmp/A" "$tmp/opt2" --out "$M"
absent merge/other_opt "$M"
shards
sed -i 's/^git,.*/git,0000000deadbeef/' "$tmp/B/tiny/meta.csv"
expect merge other_build 2 "git was '0000000deadbeef'" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
absent merge/other_build "$M"
shards
sed -i 's/^c_flags,.*/c_flags,-O0/' "$tmp/B/tiny/meta.csv"
expect merge other_flags 2 "c_flags" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
shards
rm "$tmp/B/tiny/meta.csv"
expect merge missing_meta 2 "$tmp/B/tiny/meta.csv" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
absent merge/missing_meta "$M"
shards
printf 'key,value\nstudy,tiny\n"broken\n' > "$tmp/B/tiny/meta.csv"
expect merge corrupt_meta 2 "$tmp/B/tiny/meta.csv" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
shards
echo "garbage" >> "$mA"
expect merge garbage_row 2 "$mA:" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
absent merge/garbage_row "$M"
shards
sed -i '2s/,[0-9]*$/,zero/' "$mA"
expect merge index_not_a_number 2 "$mA:2: index" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
shards
sed -i '2s/,[0-9]*$/,99/' "$mA"
expect merge index_outside_sweep 2 "$mA:2: index" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
shards
sed -i '2s/,[0-9]*$/,-1/' "$mA"
expect merge index_negative 2 "$mA:2: index" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
shards
sed -i '2s/,[0-9]*$/,4294967296/' "$mA"
expect merge index_2p32 2 "$mA:2: index" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
shards
sed -i '2s/,[0-9]*$/,0x0/' "$mA"
expect merge index_hex 2 "$mA:2: index" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
shards
sed -i '2s/pendulum\.newton/pendulum.avbd/' "$mA"
expect merge point_not_at_index 2 "$mA:2: point" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
shards
sed -i '2s/^tiny,/other,/' "$mA"
expect merge other_study_column 2 "$mA:2: study" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
shards
awk -F, 'BEGIN{OFS=","} NR==2{$7="CORRUPT@@"} {print}' "$mA" > "$mA.x" && mv "$mA.x" "$mA"
expect merge value_not_a_number 2 "$mA:2: value" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
shards
awk -F, 'BEGIN{OFS=","} NR==2{$8="inf"} {print}' "$mA" > "$mA.x" && mv "$mA.x" "$mA"
expect merge step_inf 2 "$mA:2: step" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
shards
awk -F, 'BEGIN{OFS=","} NR==2{$8="1e300"} {print}' "$mA" > "$mA.x" && mv "$mA.x" "$mA"
expect merge step_huge 2 "$mA:2: step" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
shards
sed -i '2s/$/,extra/' "$mA"
expect merge extra_field 2 "$mA:2:" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
shards
sed -i '1s/value/valeur/' "$mA"
expect merge wrong_header 2 "$mA:1:" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
shards
sed -n 2p "$mA" >> "$mA"
expect merge duplicate_row_in_shard 2 "a second time" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
absent merge/duplicate_row_in_shard "$M"
shards
cp -r "$tmp/sh1" "$tmp/C"
awk -F, 'BEGIN{OFS=","} NR==2{$7="0.5"} {print}' "$tmp/C/tiny/metrics.csv" > "$tmp/x" && mv "$tmp/x" "$tmp/C/tiny/metrics.csv"
expect merge duplicate_other_value 2 "says 0.5" "$rl" merge "$tmp/A" "$tmp/C" "$tmp/B" --out "$M"
absent merge/duplicate_other_value "$M"
rm -rf "$tmp/C"
shards
printf 'study,point\0binary\n' > "$mA"
expect merge binary_metrics 2 "$mA" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
shards
printf 'study,point,engine,precision,dt,metric,value,step,index\ntiny,"unterminated\n' > "$mA"
expect merge truncated_metrics 2 "$mA" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
# the second study is bad: the first (good) one is not written either
shards
echo "garbage" >> "$tmp/A/tinyb/metrics.csv"
expect merge second_study_bad 2 "$tmp/A/tinyb/metrics.csv" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
absent merge/second_study_bad "$M/tiny"
absent merge/second_study_bad "$M"
# OUT/STUDY exists and is a regular file: refused and kept
shards
mkdir -p "$M"
echo keep > "$M/tiny"
expect merge out_study_is_a_file 2 "$M/tiny" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
[ "$(cat "$M/tiny" 2> /dev/null)" = keep ] || bad "merge/out_study_is_a_file: $M/tiny changed"
absent merge/out_study_is_a_file "$M/tinyb"
rm -rf "$M"
# a spec.ini that is a folder
shards
rm "$tmp/B/tiny/spec.ini"
mkdir "$tmp/B/tiny/spec.ini"
expect merge spec_is_a_folder 2 "$tmp/B/tiny/spec.ini" "$rl" merge "$tmp/A" "$tmp/B" --out "$M"
absent merge/spec_is_a_folder "$M"

# ---------- resume: another configuration ----------
R="$tmp/R"
fresh_r() {
  rm -rf "$R"
  cp -r "$tmp/full" "$R"
}
fresh_r
expect resume added_opt 2 "extra_opts was ''" "$rl" run "$tmp/tiny.ini" --out "$R" --resume --opt iterations=2
"$rl" run "$tmp/tiny.ini" --out "$tmp/Ropt" --opt iterations=2 > /dev/null 2>&1 || bad "setup: run with --opt"
expect resume dropped_opt 2 "extra_opts was 'iterations=2'" "$rl" run "$tmp/tiny.ini" --out "$tmp/Ropt" --resume
expect resume other_opt_value 2 "extra_opts was 'iterations=2'" "$rl" run "$tmp/tiny.ini" --out "$tmp/Ropt" --resume --opt iterations=3
expect resume other_opt_order 2 "extra_opts" "$rl" run "$tmp/tiny.ini" --out "$tmp/Ropt" --resume --opt cone=pyramidal --opt iterations=2
fresh_r
cp "$tmp/tiny21.ini" "$tmp/tiny.ini.edited"
sed -i 's/name = tiny/name = tiny/' "$tmp/tiny.ini.edited"
expect resume other_spec 2 "different spec" "$rl" run "$tmp/tiny.ini.edited" --out "$R" --resume
fresh_r
sed -i 's/^git,.*/git,0000000deadbeef/' "$R/tiny/meta.csv"
expect resume other_build 2 "git was '0000000deadbeef'" "$rl" run "$tmp/tiny.ini" --out "$R" --resume
fresh_r
sed -i 's/^mujoco_version,.*/mujoco_version,9.9.9/' "$R/tiny/meta.csv"
expect resume other_mujoco 2 "mujoco_version was '9.9.9'" "$rl" run "$tmp/tiny.ini" --out "$R" --resume
fresh_r
rm "$R/tiny/meta.csv"
expect resume no_meta 2 "has no meta.csv" "$rl" run "$tmp/tiny.ini" --out "$R" --resume
fresh_r
printf 'this is not a meta file\n' > "$R/tiny/meta.csv"
expect resume corrupt_meta 2 "$R/tiny/meta.csv:1" "$rl" run "$tmp/tiny.ini" --out "$R" --resume
fresh_r
rm "$R/tiny/meta.csv"
mkdir "$R/tiny/meta.csv"
expect resume meta_is_a_folder 2 "$R/tiny/meta.csv" "$rl" run "$tmp/tiny.ini" --out "$R" --resume

# ---------- traj: the step column of a trajectory (read when --resume computes the metrics) ----------
for v in inf nan 1e300 -1 2.5 -inf 9007199254740993e10; do
  fresh_r
  t="$R/tiny/traj_pendulum.newton.f64.cone=pyramidal.csv"
  awk -F, -v v="$v" 'BEGIN{OFS=","} NR==3{$1=v} {print}' "$t" > "$t.x" && mv "$t.x" "$t"
  expect traj "step_$v" 2 "step" "$rl" run "$tmp/tiny.ini" --out "$R" --resume
done

# ---------- check: corrupt and non-finite values ----------
C="$tmp/Cr"
fresh_c() {
  rm -rf "$C" "$tmp/B2"
  cp -r "$tmp/full" "$C"
  cp -r "$tmp/base" "$tmp/B2"
}
mC="$C/tiny/metrics.csv"
mB="$tmp/B2/tiny/metrics.csv"
setval() { # FILE ROW VALUE
  awk -F, -v r="$2" -v v="$3" 'BEGIN{OFS=","} NR==r{$7=v} {print}' "$1" > "$1.x" && mv "$1.x" "$1"
}
for v in CORRUPT@@ "" 1x 0x1p3z; do
  fresh_c
  setval "$mC" 2 "$v"
  expect check "result_$v" 2 "$mC:2" "$rl" check "$C" --baseline "$tmp/B2"
done
for v in nan inf -inf 1e999; do
  fresh_c
  setval "$mC" 3 "$v"
  expect check "result_$v" 1 "$mC:3" "$rl" check "$C" --baseline "$tmp/B2"
done
for v in CORRUPT@@ nan inf; do
  fresh_c
  setval "$mB" 2 "$v"
  expect check "baseline_$v" 2 "$mB:2" "$rl" check "$C" --baseline "$tmp/B2"
done
for v in CORRUPT@@ nan -inf 1e999; do
  fresh_c
  setval "$mC" 2 "$v"
  rm -rf "$tmp/B3"
  expect check "update_baseline_$v" 2 "$mC:2" "$rl" check "$C" --baseline "$tmp/B3" --update-baseline
  absent "check/update_baseline_$v" "$tmp/B3"
  # an existing baseline is kept as it was
  expect check "update_existing_baseline_$v" 2 "$mC:2" "$rl" check "$C" --baseline "$tmp/B2" --update-baseline
  cmp -s "$mB" "$tmp/base/tiny/metrics.csv" || bad "check/update_existing_baseline_$v: the baseline changed"
done

# ---------- files: outputs that are not regular files; signals; stale temporaries ----------
F="$tmp/F"
mkdir -p "$F"
ln -s "$F/elsewhere.csv" "$F/link.csv"
mkdir "$F/dir.csv"
mkfifo "$F/fifo.csv"
echo x > "$F/file"
pend="$sc/pendulum.xml"
expect files sim_symlink 2 "$F/link.csv: is a symbolic link" "$rl" sim "$pend" --engine newton --steps 5 --csv "$F/link.csv"
[ -L "$F/link.csv" ] || bad "files/sim_symlink: the link was replaced"
absent files/sim_symlink "$F/elsewhere.csv"
expect files sim_folder 2 "$F/dir.csv: is a directory" "$rl" sim "$pend" --engine newton --steps 5 --csv "$F/dir.csv"
expect files sim_fifo 2 "$F/fifo.csv: is a named pipe" timeout 20 "$rl" sim "$pend" --engine newton --steps 5 --csv "$F/fifo.csv"
[ -p "$F/fifo.csv" ] || bad "files/sim_fifo: the fifo was replaced"
# a device node of our own (a null device in $tmp, never the system's: a binary that replaced its target
# would replace only this copy); without the right to make one the case is left out
if mknod "$F/null" c 1 3 2> /dev/null; then
  expect files sim_device 2 "$F/null: is a device" "$rl" sim "$pend" --engine newton --steps 5 --csv "$F/null"
  [ -c "$F/null" ] || bad "files/sim_device: the device node was replaced"
fi
expect files sim_under_a_file 2 "$F/file/out.csv" "$rl" sim "$pend" --engine newton --steps 5 --csv "$F/file/out.csv"
expect files verify_symlink 2 "$F/link.csv: is a symbolic link" "$rl" verify "$pend" --states 2 --csv "$F/link.csv"
expect files verify_folder 2 "$F/dir.csv: is a directory" "$rl" verify "$pend" --states 2 --csv "$F/dir.csv"
expect files bench_symlink 2 "$F/link.csv: is a symbolic link" "$rl" bench "$pend" --steps 2 --reps 1 --csv "$F/link.csv"
absent files/bench_symlink "$F/elsewhere.csv"
rm -rf "$tmp/Rl"
mkdir -p "$tmp/Rl/tiny"
ln -s "$F/elsewhere.csv" "$tmp/Rl/tiny/meta.csv"
expect files run_meta_symlink 2 "$tmp/Rl/tiny/meta.csv: is a symbolic link" "$rl" run "$tmp/tiny.ini" --out "$tmp/Rl"
absent files/run_meta_symlink "$F/elsewhere.csv"
rm -rf "$tmp/B4"
mkdir -p "$tmp/B4/tiny"
ln -s "$F/elsewhere.csv" "$tmp/B4/tiny/metrics.csv"
expect files baseline_symlink 2 "$tmp/B4/tiny/metrics.csv: is a symbolic link" "$rl" check "$tmp/full" --baseline "$tmp/B4" --update-baseline
absent files/baseline_symlink "$F/elsewhere.csv"
mkdir -p "$tmp/Rep"
cp -r "$tmp/full/tiny" "$tmp/Rep/"
mkdir "$tmp/Rep/summary.md"
expect files report_summary_folder 2 "summary.md: is a directory" "$rl" report "$tmp/Rep"
absent files/report_summary_folder "$tmp/Rep/plots"

# a signal ends the command; its temporary goes with it (SIGINT: 130, SIGTERM: 143)
signal_case() { # NAME SIGNAL WANT-RC OUTFILE CMD...
  local name=$1 sig=$2 want=$3 out=$4
  shift 4
  count[files]=$((${count[files]:-0} + 1))
  "$@" > /dev/null 2>&1 &
  local pid=$! k
  for k in $(seq 100); do
    compgen -G "$out.tmp.*" > /dev/null && break
    sleep 0.1
  done
  compgen -G "$out.tmp.*" > /dev/null || bad "files/$name: no temporary appeared (the case tests nothing)"
  kill -"$sig" $pid
  wait $pid 2> /dev/null
  local rc=$?
  [ "$rc" = "$want" ] || bad "files/$name: exit $rc after SIG$sig, expected $want"
  no_temps > "$tmp/left" || {
    bad "files/$name: temporaries left after SIG$sig:"
    cat "$tmp/left"
  }
  absent "files/$name" "$out"
}
box="$sc/box_stack.xml"
signal_case sim_sigint INT 130 "$F/s.csv" "$rl" sim "$box" --engine newton --steps 100000000 --csv "$F/s.csv"
signal_case sim_sigterm TERM 143 "$F/s.csv" "$rl" sim "$box" --engine avbd --steps 100000000 --csv "$F/s.csv"
signal_case sim_sighup HUP 129 "$F/s.csv" "$rl" sim "$box" --engine cg --precision f32 --steps 100000000 --csv "$F/s.csv"
signal_case verify_sigterm TERM 143 "$F/v.csv" "$rl" verify "$box" --states 100000 --csv "$F/v.csv"
cat > "$tmp/long.ini" << EOF
[experiment]
name = long
scene = $box
steps = 100000000
seed = 1
description = bad-results test: a study long enough to interrupt
[sweep]
engine = newton, avbd
precision = f64
[metrics]
names = penetration_max
EOF
signal_case run_sigint INT 130 "$tmp/RS/long/traj_box_stack.newton.f64.csv" "$rl" run "$tmp/long.ini" --out "$tmp/RS" --jobs 2
absent files/run_sigint "$tmp/RS/long/metrics.csv"
# stale temporaries (a process that no longer runs) are removed by the next run of the folder
fresh_r
dead=$(sh -c 'echo $$') # a process that has ended
touch "$R/tiny/traj_pendulum.newton.f64.cone=pyramidal.csv.tmp.$dead" "$R/tiny/metrics.csv.tmp.$dead"
count[files]=$((${count[files]:-0} + 1))
"$rl" run "$tmp/tiny.ini" --out "$R" --resume > /dev/null 2> "$tmp/err" || bad "files/stale_temps: the resume failed"
grep -q "removed 2 stale temporary" "$tmp/err" || bad "files/stale_temps: no note of the removal"
no_temps > "$tmp/left" || bad "files/stale_temps: stale temporaries kept"

total=0
line="test_badresults:"
for c in merge resume traj check files; do
  line="$line $c ${count[$c]:-0},"
  total=$((total + ${count[$c]:-0}))
done
echo "$line total $total cases"
exit $fail
