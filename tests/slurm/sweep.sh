#!/usr/bin/env bash
# End-to-end on a real Slurm: a private single-node cluster (munged, slurmctld and slurmd started
# here, tests/slurm/cluster.sh) runs the committed example sweep as a 4-task job array with a
# dependent merge, submitted by tools/slurm/submit.sh; the merged tree must be byte-identical
# (host.json files aside) to the same sweep run locally with --jobs 2.
# As root the test must run: missing Slurm packages are a failure (tools/setup.sh installs them).
# Without root (the daemons need it) it skips with exit 77. $1 = slubsim binary, $2 = source tree.
set -uo pipefail
bin=$1
src=$2
source "$src/tests/slurm/test_lib.sh"
sweep=$src/configs/sweeps/capacity-small.json

"$bin" sweep "$sweep" --out "$tmp/local" --jobs 2 --quiet || fail "local sweep"
mkdir -p "$tmp/c"
t0=$(date +%s)
slurm_cluster_start "$tmp/c" 2 || { echo "FAIL: the cluster did not start"; exit 1; }
ok "cluster up in $(( $(date +%s) - t0 )) s: $(sinfo -h -o '%N %c CPUs %t')"

ids=$(bash "$src/tools/slurm/submit.sh" --tasks 4 --parsable --bin "$bin" --out "$tmp/cluster" "$sweep") ||
  { echo "FAIL: submit.sh"; exit 1; }
read -r array merge <<<"$ids"
ok "submitted array $array and merge $merge"
slurm_wait_jobs 600 "$array" "$merge" || fail "jobs did not end in 600 s"
slurm_job_ok "$array" && ok "array: all tasks COMPLETED 0:0" || { fail "array:"; slurm_job_state "$array"; }
slurm_job_ok "$merge" && ok "merge: COMPLETED 0:0" || { fail "merge:"; slurm_job_state "$merge"; cat "$tmp/cluster/logs/merge.out"; }
n=$(slurm_job_state "$array" | wc -l)
[ "$n" -eq 4 ] && ok "4 array tasks ran" || fail "$n array tasks"
for k in 1 2 3 4; do
  grep -q "\"shard\": \"$k/4\"" "$tmp/cluster/shards/$k/sweep.json" 2>/dev/null || fail "shards/$k is not shard $k/4"
  pts=$(find "$tmp/cluster/shards/$k" -path '*/points/v*.json' | wc -l)
  [ "$pts" -eq 9 ] || fail "shard $k ran $pts points, not 9"
done
ok "each task ran its shard of 9 points"
if diff -r -x host.json -x shards -x logs -x plan.json "$tmp/local" "$tmp/cluster" >"$tmp/diff"; then
  ok "merged tree byte-identical to the local --jobs 2 sweep ($(find "$tmp/local" -type f ! -name host.json | wc -l) files)"
else
  fail "merged tree differs:"; head -20 "$tmp/diff"
fi
ok "all in $(( $(date +%s) - t0 )) s"
[ $failures -eq 0 ]
