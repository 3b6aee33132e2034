#!/usr/bin/env bash
# End-to-end: `slubsim advise`. A small search (2 caches, 2 task counts) run locally is the
# reference, barn limits never reached under the defaults are left out and listed, and each pick
# is re-run at the uncertain inputs' bounds; its advice.json must equal, byte for byte, the same search run as 2 shards of stage 1,
# merged into one stage1 and finished by advise without --shard. A budget no setting fits leaves
# no recommendation and says how many it excluded. Bad input (an unknown cache, a cache without
# sheaves on that kernel, an empty range, a negative budget) exits 2 and writes nothing.
# $1 = slubsim binary.
set -uo pipefail
bin=$1
source "$(dirname "$0")/lib.sh"
args=(--topology small-2s-8c --workload mmap1 --nr-task 4,8 --capacities 16,64 --max-full-sheaves 2,20
      --max-empty-sheaves 5 --jobs 2 --quiet)

"$bin" advise "${args[@]}" --out "$tmp/local" >"$tmp/local.out" || fail "local advise"
[ -f "$tmp/local/advice.json" ] && [ -f "$tmp/local/advice.md" ] && ok "advice.json and advice.md written" ||
  fail "advice files missing"
grep -q "| 8 |" "$tmp/local.out" && ok "the table has a row per task count" || fail "no row for 8 tasks"
"$py" - "$tmp/local/advice.json" <<'PY' && ok "advice.json: a settled pick with its CI at each task count" || fail "advice.json content"
import json, sys
a = json.load(open(sys.argv[1]))
assert [r["nr_task"] for r in a["rows"]] == [4, 8], a["rows"]
for r in a["rows"]:
    assert r["best"]["settled"] and r["best"]["half_width"] > 0, r
    assert r["defaults"]["setting"] == "kernel defaults", r
    assert "gain_pct" in r and "gain_half_width_pct" in r, r
# Barn limits above the most sheaves a barn held at a check under the defaults run as the
# defaults do: left out, and listed. A limit never checked (-1) leaves every value out.
left_out = 0
for c in a["caches"]:
    for name in ("max_full_sheaves", "max_empty_sheaves"):
        k = c["knobs"][name]
        high, d = k["barn_high_water"], k["default"]
        expect = [v for v in k["values"] if v != d and d > high and v > high]
        assert k["same_as_default"] == expect, (c["cache"], name, k)
        left_out += len(expect)
# 2 caches x 5 values, the defaults, and at most one joint setting, at 2 task counts; then at
# each bound of the uncertain inputs the picks, runners-up and defaults (at most 3 each).
searched = 2 * (1 + 10 - left_out)
nb = len(a["bounds"])
assert nb >= 2, a["bounds"]  # small-2s-8c's DRAM estimates state ranges
assert searched <= a["points"] <= searched + 2 + nb * 2 * 3, (a["points"], left_out, nb)
for r in a["rows"]:
    assert len(r["bounds"]) == nb, r
    assert r["robustness"] == "robust" or r["robustness"].startswith("fragile: "), r
PY

# The plot of throughput against memory, when matplotlib is there (tools/setup.sh installs it).
if "$py" -c "import matplotlib" 2>/dev/null; then
  src=$(cd "$(dirname "$0")/../.." && pwd)
  "$py" "$src/tools/plot.py" advise "$tmp/local/advice.json" -o "$tmp/advice.png" >/dev/null &&
    [ -s "$tmp/advice.png" ] && ok "tools/plot.py advise: a PNG" || fail "tools/plot.py advise"
fi

# Stage 1 in two shards, merged, then finished without --shard.
for k in 1 2; do
  "$bin" advise "${args[@]}" --shard "$k/2" --out "$tmp/shard$k" >/dev/null 2>&1 || fail "shard $k/2"
done
[ ! -f "$tmp/shard1/advice.json" ] && ok "a shard writes no advice" || fail "a shard wrote advice"
"$bin" merge "$tmp/shard1/stage1" "$tmp/shard2/stage1" --out "$tmp/merged/stage1" 2>/dev/null || fail "merge stage 1"
"$bin" advise "${args[@]}" --out "$tmp/merged" >/dev/null || fail "advise after the merge"
cmp -s "$tmp/local/advice.json" "$tmp/merged/advice.json" && ok "2 shards + merge: the same advice.json, byte for byte" ||
  fail "sharded advice differs: $(diff "$tmp/local/advice.json" "$tmp/merged/advice.json" | head -5)"

# A budget below every setting's memory (above the minimum state: sheaf structs of 8 CPUs).
"$bin" advise "${args[@]}" --memory-budget 1 --out "$tmp/local" >"$tmp/budget.out" || fail "advise with a budget"
"$py" - "$tmp/local/advice.json" <<'PY' && ok "a 1 MB budget: no pick, every setting counted as over it" || fail "budget"
import json, sys
a = json.load(open(sys.argv[1]))
for r in a["rows"]:
    assert r["best"] is None and r["over_budget"] == r["settings_run"], r
PY

# Bad input: exit 2, a message naming the option, nothing written.
bad() {  # bad WHAT OPTION-IN-MESSAGE ARGS...
  local what=$1 option=$2
  shift 2
  "$bin" advise "$@" --out "$tmp/bad" >/dev/null 2>"$tmp/bad.err"
  local rc=$?
  if [ $rc -eq 2 ] && grep -q -- "$option" "$tmp/bad.err" && [ ! -e "$tmp/bad" ]; then ok "refused: $what"
  else fail "$what: exit $rc, $(cat "$tmp/bad.err")"; fi
}
bad "an unknown cache" "--caches" --topology small-2s-8c --workload mmap1 --caches no_such_cache
bad "a cache without sheaves on v6.17" "--caches" --topology small-2s-8c --workload mmap1 --kernel v6.17 --caches maple_node
bad "a kernel without sheaves for the workload" "--kernel" --topology small-2s-8c --workload mmap1 --kernel v6.17
bad "an empty range" "--capacities: an empty range" --topology small-2s-8c --workload mmap1 --capacities ''
bad "a capacity of 0" "--capacities" --topology small-2s-8c --workload mmap1 --capacities 0,8
bad "a negative budget" "--memory-budget" --topology small-2s-8c --workload mmap1 --memory-budget -5
bad "a budget below the minimum state" "--memory-budget: 0.0001 MB is below the minimum state" --topology small-2s-8c --workload mmap1 --memory-budget 0.0001
bad "two kernels" "--kernel" --topology small-2s-8c --workload mmap1 --kernel v6.18,v7.0
[ $failures -eq 0 ]
