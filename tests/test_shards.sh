#!/usr/bin/env bash
# test_shards.sh RIGIDLAB SRCDIR — a study split into shards that run as separate processes gives, after
# `rigidlab merge`, the bytes of the unsharded run: metrics.csv, spec.ini and every per-point CSV identical,
# meta.csv different only in the fields that say when and which shard ran (start_time, points, shard).
# Two small studies (a trajectory kind and a lock-step kind, f64 and f32) in 3 shards, through
#   tools/run-shards   with GNU parallel (when installed) and with plain background processes;
#   tools/slurm-run    with an emulated sbatch (array tasks run at once, the merge job only after all of
#                      them succeeded, as --dependency=afterok says), so the Slurm scripts run as written;
# then `rigidlab check` of the merged tree (every study found in it) against a baseline made from the
# unsharded run.
set -euo pipefail
rl=$1
src=$2
tmp=$(mktemp -d /tmp/rl_shards_XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0
bad() { echo "FAIL: $*"; fail=1; }

sc="$src/experiments/scenes"
cat > "$tmp/traj.ini" << EOF2
[experiment]
name = shardtraj
scene = $sc/box_stack.xml, $sc/pendulum.xml
steps = 50
seed = 1
description = shard test: trajectories against MuJoCo
[sweep]
engine = newton, cg, mujoco
precision = f64
cone = pyramidal, elliptic
[reference]
use = mujoco_free
[metrics]
names = final_qpos_err, qpos_err_max, penetration_max, iterations_mean
[check]
final_qpos_err = abs 0
qpos_err_max = abs 0
penetration_max = abs 0
iterations_mean = abs 0
EOF2
cat > "$tmp/lock.ini" << EOF2
[experiment]
name = shardlock
kind = lockstep
scene = $sc/pendulum.xml, $sc/box_stack.xml
steps = 40
seed = 1
description = shard test: lock-step against MuJoCo
[sweep]
engine = newton, avbd
precision = f64, f32
[reference]
use = mujoco_lockstep, mujoco_free
[metrics]
names = lockstep_qpos_max, lockstep_qvel_max, free_qpos_err_max
[check]
lockstep_qpos_max = abs 0
lockstep_qvel_max = abs 0
free_qpos_err_max = abs 0
EOF2
specs=("$tmp/traj.ini" "$tmp/lock.ini")

"$rl" run "${specs[@]}" --out "$tmp/full" --jobs 2 > "$tmp/full.log" 2>&1 || { cat "$tmp/full.log"; exit 1; }
# the unsharded run is the baseline (bands abs 0: any bit that moves fails the gate)
"$rl" check "$tmp/full" --baseline "$tmp/base" --update-baseline > /dev/null 2>&1 || bad "check --update-baseline"

# MERGED/STUDY against full/STUDY, file by file
same_as_full() {
  local merged=$1 how=$2
  for s in shardtraj shardlock; do
    local a="$tmp/full/$s" b="$merged/$s"
    [ -d "$b" ] || { bad "$how: no $b"; continue; }
    if ! diff <(cd "$a" && ls) <(cd "$b" && ls) > "$tmp/ls.diff"; then
      bad "$how: $s: the merged folder holds other files:"; cat "$tmp/ls.diff"; continue
    fi
    local n=0
    for f in "$a"/*; do
      local name=${f##*/}
      if [ "$name" = meta.csv ]; then
        diff <(grep -v -E '^(start_time|points|shard),' "$f") <(grep -v -E '^(start_time|points|shard),' "$b/$name") \
          > /dev/null || bad "$how: $s/meta.csv differs beyond start_time, points, shard"
      else
        cmp -s "$f" "$b/$name" || bad "$how: $s/$name differs from the unsharded run's"
      fi
      n=$((n + 1))
    done
    echo "$how: $s: $n files match the unsharded run"
  done
}

# one machine: GNU parallel, then background processes
if command -v parallel > /dev/null 2>&1; then
  RIGIDLAB="$rl" "$src/tools/run-shards" --baseline "$tmp/base" 3 "$tmp/par" "${specs[@]}" > "$tmp/par.log" 2>&1 ||
    { cat "$tmp/par.log"; bad "tools/run-shards (GNU parallel) exit status"; }
  same_as_full "$tmp/par/merged" "run-shards (GNU parallel)"
else
  echo "GNU parallel not installed: tools/run-shards runs background processes only"
fi
RIGIDLAB="$rl" RL_NO_PARALLEL=1 "$src/tools/run-shards" --baseline "$tmp/base" 3 "$tmp/bg" "${specs[@]}" > "$tmp/bg.log" 2>&1 ||
  { cat "$tmp/bg.log"; bad "tools/run-shards (background processes) exit status"; }
same_as_full "$tmp/bg/merged" "run-shards (processes)"

# a cluster: tools/slurm-run against an emulated sbatch
mkdir -p "$tmp/slurm"
cat > "$tmp/sbatch" << 'EOF2'
#!/usr/bin/env bash
# sbatch as tools/slurm-run uses it: --parsable, --array=1-N, --dependency=afterok:ID, --output (%a, %A, %j),
# --job-name; the job runs at once (array tasks concurrently), its status kept for the dependency
set -u
state=$FAKE_SLURM
array="" dep="" output="slurm-%j.out"
while [ $# -gt 0 ]; do
  case "$1" in
    --parsable|--job-name=*) ;;
    --array=1-*) array=${1#--array=1-} ;;
    --dependency=afterok:*) dep=${1#--dependency=afterok:} ;;
    --output=*) output=${1#--output=} ;;
    -*) echo "sbatch (emulated): unexpected option $1" >&2; exit 1 ;;
    *) break ;;
  esac
  shift
done
id=$(( $(cat "$state/last" 2>/dev/null || echo 100) + 1 ))
echo $id > "$state/last"
script=$1
shift
if [ -n "$dep" ] && [ "$(cat "$state/$dep.status")" != 0 ]; then
  echo never > "$state/$id.status"   # DependencyNeverSatisfied
  echo $id
  exit 0
fi
out=${output//%j/$id}
out=${out//%A/$id}
if [ -n "$array" ]; then
  pids=()
  for i in $(seq 1 "$array"); do
    SLURM_JOB_ID=$id SLURM_ARRAY_JOB_ID=$id SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=$array SLURM_CPUS_PER_TASK=1 \
      bash "$script" "$@" > "${out//%a/$i}" 2>&1 &
    pids+=($!)
  done
  st=0
  for p in "${pids[@]}"; do wait "$p" || st=1; done
else
  SLURM_JOB_ID=$id bash "$script" "$@" > "$out" 2>&1
  st=$?
fi
echo $st > "$state/$id.status"
echo $id
EOF2
chmod +x "$tmp/sbatch"
FAKE_SLURM="$tmp/slurm" SBATCH="$tmp/sbatch" RIGIDLAB="$rl" \
  "$src/tools/slurm-run" --baseline "$tmp/base" 3 "$tmp/cluster" "${specs[@]}" > "$tmp/cluster.log" 2>&1 ||
  { cat "$tmp/cluster.log"; bad "tools/slurm-run exit status"; }
cat "$tmp/cluster.log"
for j in 101 102; do
  st=$(cat "$tmp/slurm/$j.status" 2>/dev/null || echo none)
  [ "$st" = 0 ] || { bad "Slurm job $j (101 the shard array, 102 merge + check) ended with '$st'"; cat "$tmp/cluster/slurm/"*.log; }
done
grep -q "0 outside their bands" "$tmp/cluster/slurm/merge.log" || { bad "the merge job did not pass the gate"; cat "$tmp/cluster/slurm/merge.log"; }
same_as_full "$tmp/cluster/merged" "slurm-run"

exit $fail
