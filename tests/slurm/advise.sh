#!/usr/bin/env bash
# End-to-end on a real Slurm: a private single-node cluster (tests/slurm/cluster.sh) runs a small
# advise search (3 task counts) as a 4-task job array and its report job, submitted by
# tools/slurm/advise.sh; the advice.json must be byte-identical to the same search run locally
# with --jobs 2, and the array's 4th task (no task count of its own) must succeed with nothing to
# do. As root the test must run (missing Slurm packages are a failure); without root it skips with
# exit 77. $1 = slubsim binary, $2 = source tree.
set -uo pipefail
bin=$1
src=$2
source "$src/tests/slurm/test_lib.sh"
args=(--topology small-2s-8c --workload mmap1 --nr-task 2,4,8 --capacities 16,64,256 --max-full-sheaves 2,20
      --max-empty-sheaves 5)

"$bin" advise "${args[@]}" --out "$tmp/local" --jobs 2 --quiet >/dev/null || fail "local advise"
slurm_submit_pair report "$tmp/cluster/logs/report.out" "$src/tools/slurm/advise.sh" --tasks 4 --cpus 1 \
  --bin "$bin" --out "$tmp/cluster" "${args[@]}"
n=$(slurm_job_state "$array" | wc -l)
[ "$n" -eq 4 ] && ok "4 array tasks ran" || fail "$n array tasks"
for k in 1 2 3; do
  [ -d "$tmp/cluster/shards/$k/tasks-$(echo 2 4 8 | cut -d' ' -f$k)" ] || fail "shards/$k did not search its task count"
done
[ -z "$(ls "$tmp/cluster/shards/4" | grep tasks-)" ] && ok "shard 4 of 4 had no task count and ran nothing" ||
  fail "shard 4 searched something"
if cmp -s "$tmp/local/advice.json" "$tmp/cluster/advice.json"; then
  ok "4 Slurm shards + merge: advice.json byte-identical to the local --jobs 2 run"
else
  fail "advice.json differs: $(diff "$tmp/local/advice.json" "$tmp/cluster/advice.json" | head -10)"
fi
ok "all in $(( $(date +%s) - t0 )) s"
[ $failures -eq 0 ]
