#!/usr/bin/env bash
# End-to-end: `slubsim sweep` and `slubsim merge`. The committed example sweep (36 points, two
# topologies) run locally with --jobs 2 is the reference; it must equal, byte for byte with host.json
# files aside, (a) four shards K/N merged, (b) shards whose K and N come from a Slurm array's or a
# Kubernetes Indexed Job's environment, and (c) a sweep killed after its first points and run
# again, which must run only the missing points. A plan's per-point arguments must reproduce that
# point with `slubsim run`. Incomplete merges, shards of another sweep and bad input are refused.
# $1 = slubsim binary, $2 = the source tree.
set -uo pipefail
bin=$1
src=$2
source "$(dirname "$0")/lib.sh"
sweep=$src/configs/sweeps/capacity-small.json
same_tree() {  # same_tree A B WHAT
  if diff -r -x host.json "$1" "$2" >"$tmp/diff" 2>&1; then ok "$3: identical to the local sweep"
  else fail "$3 differs from the local sweep:"; head -5 "$tmp/diff"; fi
}

"$bin" sweep "$sweep" --out "$tmp/local" --jobs 2 --quiet || fail "local sweep"
n=$(find "$tmp/local" -path '*/points/v*.json' | wc -l)
[ "$n" -eq 36 ] && ok "local sweep: 36 points" || fail "local sweep: $n points"
[ -f "$tmp/local/small-2s-8c/v7.0_sheaf_capacity=maple_node=64/stats.json" ] &&
  [ -f "$tmp/local/intel-icl-2s-64t/v6.18_sheaf_capacity=maple_node=16/matrix.json" ] &&
  ok "local sweep: every variant's files" || fail "local sweep: variant files missing"

# (a) four shards, merged.
for k in 1 2 3 4; do
  "$bin" sweep "$sweep" --shard "$k/4" --out "$tmp/shards/$k" --jobs 1 --quiet || fail "shard $k/4"
done
n1=$(find "$tmp/shards/1" -path '*/points/v*.json' | wc -l)
[ "$n1" -eq 9 ] && ok "shard 1/4 ran 9 points" || fail "shard 1/4 ran $n1 points"
"$bin" merge "$tmp"/shards/* --out "$tmp/merged" 2>"$tmp/merge.err" || { fail "merge"; cat "$tmp/merge.err"; }
same_tree "$tmp/local" "$tmp/merged" "4 shards merged"
# Merging again into the same tree changes nothing.
"$bin" merge "$tmp"/shards/* --out "$tmp/merged" 2>/dev/null || fail "merge again"
same_tree "$tmp/local" "$tmp/merged" "merged twice"

# (b) K and N from the environment: a Slurm array 5-8 (task 6 = shard 2 of 4) and an Indexed Job.
SLURM_ARRAY_TASK_ID=6 SLURM_ARRAY_TASK_MIN=5 SLURM_ARRAY_TASK_COUNT=4 \
  "$bin" sweep "$sweep" --shard auto --out "$tmp/slurm2" --jobs 1 --quiet || fail "--shard auto"
JOB_COMPLETION_INDEX=1 "$bin" sweep "$sweep" --shard auto/4 --out "$tmp/k8s2" --jobs 1 --quiet || fail "--shard auto/4"
for d in slurm2 k8s2; do
  if diff -r -x host.json -x sweep.json "$tmp/shards/2" "$tmp/$d" >/dev/null; then ok "$d: the same points as shard 2/4"
  else fail "$d: not the points of shard 2/4"; fi
done
grep -q '"shard": "2/4"' "$tmp/slurm2/sweep.json" && ok "sweep.json records the shard" || fail "no shard in sweep.json"

# (c) killed midway (SIGTERM, as Slurm's time limit sends), then the same command again.
"$bin" sweep "$sweep" --out "$tmp/cut" --jobs 1 2>"$tmp/cut.err" &
pid=$!
for _ in $(seq 1 2400); do  # up to 240 s for two points (an ASan build is slow)
  [ "$(find "$tmp/cut" -path '*/points/v*.json' 2>/dev/null | wc -l)" -ge 2 ] && break
  sleep 0.1
done
kill -TERM "$pid"
wait "$pid"
rc=$?
[ $rc -eq 143 ] && ok "SIGTERM: exit 143" || fail "SIGTERM: exit $rc"
kept=$(find "$tmp/cut" -path '*/points/v*.json' | wc -l)
[ "$kept" -ge 2 ] && [ "$kept" -lt 36 ] && ok "SIGTERM: $kept of 36 points kept" || fail "SIGTERM: $kept points kept"
grep -q "the same command again finishes it" "$tmp/cut.err" && ok "SIGTERM: says how to finish" || fail "no hint"
"$bin" sweep "$sweep" --out "$tmp/cut" --jobs 2 2>"$tmp/rerun.err" || fail "rerun"
grep -q "36 points in .* ($kept were on disk)" "$tmp/rerun.err" && ok "rerun: the $kept points on disk were not run again" ||
  { fail "rerun did not reuse the $kept points:"; tail -2 "$tmp/rerun.err"; }
same_tree "$tmp/local" "$tmp/cut" "killed and rerun"

# A plan point's arguments reproduce it alone with `slubsim run`.
"$bin" sweep "$sweep" --plan "$tmp/plan.json" --quiet || fail "--plan"
"$py" - "$tmp/plan.json" "$bin" "$tmp" <<'PY' && ok "plan: ids unique, point 23 reproduced by its run arguments" || fail "plan"
import json, subprocess, sys
plan, bin, tmp = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
ids = [p["id"] for p in plan["points"]]
assert plan["points_total"] == 36 == len(set(ids)), "ids"
p = plan["points"][22]
subprocess.run([bin, "run", *p["args"], "--out", tmp + "/one", "--quiet"], check=True)
one = [l for l in open(tmp + "/one/index.json").read().split('"') if l.startswith("v0-t0-")][0]
a = open(f"{tmp}/one/points/{one}.json").read()
b = open(f"{tmp}/local/{p['id']}.json".replace(p["job"] + "/", p["job"] + "/points/", 1)).read()
assert a == b, "the point differs"
PY

# Refusals: a merge with a shard missing (exit 1, lists the missing points), a shard of another
# sweep, a rerun over another sweep, bad shards and sweep files (exit 2, nothing written).
"$bin" merge "$tmp/shards/1" "$tmp/shards/2" "$tmp/shards/3" --out "$tmp/part" 2>"$tmp/part.err"
rc=$?
[ $rc -eq 1 ] && grep -q "9 of 36 points are missing" "$tmp/part.err" && ok "merge of 3 of 4 shards: exit 1, 9 missing" ||
  { fail "incomplete merge: exit $rc"; cat "$tmp/part.err"; }
"$bin" sweep "$sweep" --seed 2 --shard 1/4 --out "$tmp/other" --jobs 1 --quiet || fail "other sweep"
"$bin" merge "$tmp/shards/1" "$tmp/other" --out "$tmp/mixed" 2>"$tmp/mixed.err"
rc=$?
[ $rc -eq 2 ] && grep -q "other/sweep.json: sweep: a shard of another sweep .*seed was 1, now 2" "$tmp/mixed.err" &&
  ok "merge of two sweeps refused" || { fail "merge of two sweeps: exit $rc"; cat "$tmp/mixed.err"; }
"$bin" sweep "$sweep" --seed 2 --out "$tmp/local" --quiet 2>"$tmp/over.err"
rc=$?
[ $rc -eq 2 ] && grep -q "holds another sweep" "$tmp/over.err" && ok "a sweep over another sweep refused" ||
  { fail "sweep over another: exit $rc"; cat "$tmp/over.err"; }
expect_refusal() {  # expect_refusal WANT ARGS...
  local want=$1
  shift
  rm -rf "$tmp/bad"
  env -u SLURM_ARRAY_TASK_ID -u JOB_COMPLETION_INDEX "$bin" sweep "$@" --out "$tmp/bad" --quiet >/dev/null 2>"$tmp/bad.err"
  local rc=$?
  if [ $rc -eq 2 ] && grep -qF -- "$want" "$tmp/bad.err" && [ ! -e "$tmp/bad" ]; then ok "refused: $(head -1 "$tmp/bad.err")"
  else fail "sweep $* (exit $rc, want 2 with '$want', no output):"; cat "$tmp/bad.err"; fi
}
echo '{"topology": "small-2s-8c", "workload": "mmap2", "kernal": "v7.0"}' >"$tmp/typo.json"
echo '{"topology": [], "workload": "mmap2"}' >"$tmp/empty.json"
expect_refusal 'typo.json: kernal: unknown field; did you mean "kernel"?' "$tmp/typo.json"
expect_refusal 'empty.json: topology: expected a string or a non-empty array' "$tmp/empty.json"
expect_refusal "shard 5 of 4" "$sweep" --shard 5/4
expect_refusal "--shard: 'auto' needs a Slurm job array" "$sweep" --shard auto
expect_refusal "--shard: 'x': expected K/N" "$sweep" --shard x
expect_refusal "--topology: 'small-2s-8c' is given twice" "$sweep" --topology small-2s-8c,small-2s-8c
expect_refusal "share the folder 'small-2s-8c'" "$sweep" --topology "small-2s-8c,$src/configs/topologies/small-2s-8c.json"
expect_refusal "--kernel: 'v7.0' is given twice" "$sweep" --kernel v7.0,v7.0
expect_refusal "--workload: 'mmap2' is given twice" "$sweep" --workload mmap2,mmap1,mmap2
[ $failures -eq 0 ]
