#!/usr/bin/env bash
# End-to-end on a real Slurm: a private single-node cluster (tests/slurm/cluster.sh) runs a small
# validate (tests/data/experiments, its fit made first) as a 4-task job array and its score job,
# submitted by tools/slurm/validate.sh; OUT/results must be byte-identical to the same validate
# run locally (host.json aside). As root the test must run (missing Slurm packages are a
# failure); without root it skips with exit 77. $1 = slubsim binary, $2 = source tree.
set -uo pipefail
bin=$1
src=$2
source "$src/tests/slurm/test_lib.sh"
args=(--experiments "$src/tests/data/experiments" --fits "$tmp/fits")

"$bin" validate "${args[@]}" --calibrate --quiet >/dev/null || fail "calibrate"
"$bin" validate "${args[@]}" --out "$tmp/local" --jobs 2 --quiet >/dev/null || fail "local validate"
slurm_submit_pair "score job" "$tmp/cluster/logs/score.out" "$src/tools/slurm/validate.sh" --tasks 4 --cpus 1 \
  --bin "$bin" --out "$tmp/cluster" "${args[@]}"
n=$(find "$tmp/cluster/shards" -path '*/points/v*.json' | wc -l)
[ "$n" -eq 4 ] && ok "the 4 shards simulated the plan's 4 points" || fail "$n points in the shards, want 4"
if diff -r -x host.json "$tmp/local" "$tmp/cluster/results" >"$tmp/diff"; then
  ok "4 Slurm shards + score job: results and scoreboard byte-identical to the local validate"
else
  fail "results differ: $(head -10 "$tmp/diff")"
fi
bash "$src/tools/slurm/validate.sh" --bin "$bin" --out "$tmp/bad" --shard 1/2 >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "is the script's to set" "$tmp/err" && ok "--shard given to the script: exit 2" || fail "--shard to the script: $(cat "$tmp/err")"
ok "all in $(( $(date +%s) - t0 )) s"
[ $failures -eq 0 ]
