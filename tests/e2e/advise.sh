#!/usr/bin/env bash
# End-to-end: `slubsim advise`. A small search (2 caches, 2 task counts) run locally is the
# reference: candidates the kernel runs alike are grouped and run once, and each pick is re-run
# at the uncertain inputs' bounds; its advice.json must equal, byte for byte, the same search run
# as 2 shards (one task count each), merged and finished by advise without --shard. A budget no setting fits leaves
# no recommendation and says how many it excluded. Bad input (an unknown cache, a cache without
# sheaves on that kernel, an empty range, a negative budget) exits 2 and writes nothing.
# $1 = slubsim binary.
set -uo pipefail
bin=$1
source "$(dirname "$0")/lib.sh"
loud=(--topology small-2s-8c --workload mmap1 --nr-task 4,8 --capacities 16,64 --max-full-sheaves 2,20
      --max-empty-sheaves 5 --jobs 2)
args=("${loud[@]}" --quiet)

"$bin" advise "${args[@]}" --out "$tmp/local" >"$tmp/local.out" || fail "local advise"
# Again, with progress (every simulation is on disk): its batches, then the total wall time.
"$bin" advise "${loud[@]}" --out "$tmp/local" >"$tmp/again.out" 2>"$tmp/again.err" || fail "advise again"
grep -q "^slubsim: advise: the defaults: " "$tmp/again.err" && grep -q "^slubsim: advise: batch 1: " "$tmp/again.err" &&
  grep -Eq "^slubsim: advise: wall time [0-9.]+ s in all, [0-9]+ simulations in [0-9]+ batches$" "$tmp/again.err" &&
  ok "advise names its batches and ends with the total wall time" || { fail "advise batches / total"; cat "$tmp/again.err"; }
[ -f "$tmp/local/advice.json" ] && [ -f "$tmp/local/advice.md" ] && ok "advice.json and advice.md written" ||
  fail "advice files missing"
grep -q "| 8 |" "$tmp/local.out" && ok "the table has a row per task count" || fail "no row for 8 tasks"
# The report says what the gains are measured against and what robust means.
grep -q "^defaults (v7.0.s own): .*maple_node: sheaf_capacity 32, max_full_sheaves" "$tmp/local.out" &&
  grep -q "^robust: the pick, the runner-up and the defaults were run again at each end" "$tmp/local.out" &&
  grep -Eq "^robust is judged against: a sheaf knob within one kernel: with the model's record ±[0-9.]+ points" "$tmp/local.out" &&
  ok "the report names the defaults, defines robust and gives the record it is judged on" || { fail "defaults / robust / record lines"; cat "$tmp/local.out"; }
# A pick at an end of a knob's searched values is flagged (unless that end's rung also stands for
# the values past it), in advice.json and in the table.
"$py" - "$tmp/local/advice.json" "$tmp/local.out" <<'PY' && ok "a pick at the edge of the searched range is flagged" || fail "at_edge"
import json, sys
a = json.load(open(sys.argv[1]))
table = open(sys.argv[2]).read()
values = {(c["cache"], k): v["values"] for c in a["caches"] for k, v in c["knobs"].items()}
flagged = 0
for r in a["rows"]:
    want = []
    setting = r["best"]["setting"]
    for w in ([] if setting == "kernel defaults" else setting.split(",")):
        cache, rest = w.split("/")
        knob, value = rest.split("=")
        vals = values[(cache, knob)]
        grouped = any(g["value"] == int(value) and g.get("same") for c in r["search"]
                      if c["cache"] == cache and c["knob"] == knob for g in c["rungs"])
        if len(vals) > 1 and int(value) in (vals[0], vals[-1]) and not grouped:
            want.append(f"{cache} {knob} {value} is the {'largest' if int(value) == vals[-1] else 'smallest'} value searched")
    assert r.get("at_edge", []) == want, (r.get("at_edge"), want, setting)
    flagged += len(want)
assert table.count("at the edge of the searched range") == sum(1 for r in a["rows"] if r.get("at_edge")), table
print("picks at an edge:", flagged)
PY
"$py" - "$tmp/local/advice.json" <<'PY' && ok "advice.json: a settled pick with its CI at each task count" || fail "advice.json content"
import json, sys
a = json.load(open(sys.argv[1]))
assert [r["nr_task"] for r in a["rows"]] == [4, 8], a["rows"]
for r in a["rows"]:
    assert r["best"]["settled"] and r["best"]["half_width"] > 0, r
    assert r["defaults"]["setting"] == "kernel defaults", r
    assert "gain_pct" in r and "gain_half_width_pct" in r, r
# Per task count, each knob's candidates are grouped into rungs the kernel runs alike: a barn
# limit above the most sheaves the barn held at a check under the defaults is the default's
# rung (a limit never checked, -1, puts every value there). The climb runs only rungs that are
# not the default's, and never more than the grid would.
for r in a["rows"]:
    run = 0
    for c in r["search"]:
        values = set(v for g in c["rungs"] for v in [g["value"]] + g.get("same", []))
        home = [g for g in c["rungs"] if g.get("default")]
        assert len(home) == 1, c
        if c["knob"] != "sheaf_capacity":
            high = c["barn_high_water"]
            d = home[0]["value"]
            expect = sorted(v for v in values if v != d and d > high and v > high)
            assert sorted(home[0].get("same", [])) == expect, (r["nr_task"], c)
        assert not (set(c["run"]) & set([home[0]["value"]] + home[0].get("same", []))), c
        run += len(c["run"])
    # the defaults, the climbs' settings and at most one joint setting
    assert 1 + run <= r["settings_run"] <= 2 + run, (r["settings_run"], run)
# Then at each bound of the uncertain inputs the pick, runner-up and defaults (at most 3 each).
searched = sum(r["settings_run"] for r in a["rows"])
nb = len(a["bounds"])
assert nb >= 2, a["bounds"]  # small-2s-8c's DRAM estimates state ranges
assert searched + nb * 2 <= a["points"] <= searched + nb * 2 * 3, (a["points"], searched, nb)
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

# The search in two shards (shard 1 searches 4 tasks, shard 2 searches 8), merged, then the
# report written by advise without --shard from what is on disk.
for k in 1 2; do
  "$bin" advise "${args[@]}" --shard "$k/2" --out "$tmp/shard$k" >/dev/null 2>&1 || fail "shard $k/2"
done
[ ! -f "$tmp/shard1/advice.json" ] && [ -d "$tmp/shard1/tasks-4" ] && [ ! -d "$tmp/shard1/tasks-8" ] &&
  ok "a shard searches its task count and writes no advice" || fail "shard 1's folders: $(ls "$tmp/shard1")"
"$bin" merge "$tmp/shard1" "$tmp/shard2" --out "$tmp/merged" 2>/dev/null || fail "merge the shards"
"$bin" advise "${args[@]}" --out "$tmp/merged" >/dev/null 2>"$tmp/merged.err" || fail "advise after the merge"
grep -q "points/s\|points/min" "$tmp/merged.err" && fail "advise after the merge ran simulations" ||
  ok "advise after the merge found every simulation on disk"
cmp -s "$tmp/local/advice.json" "$tmp/merged/advice.json" && ok "2 shards + merge: the same advice.json, byte for byte" ||
  fail "sharded advice differs: $(diff "$tmp/local/advice.json" "$tmp/merged/advice.json" | head -5)"
# The grid runs every rung: at least as many settings, and the same defaults.
"$bin" advise "${args[@]}" --search grid --no-bounds --out "$tmp/grid" >/dev/null || fail "advise --search grid"
"$py" - "$tmp/local/advice.json" "$tmp/grid/advice.json" <<'PY' && ok "--search grid: every rung, no bounds" || fail "grid"
import json, sys
climb, grid = (json.load(open(f)) for f in sys.argv[1:])
for c, g in zip(climb["rows"], grid["rows"]):
    assert g["settings_run"] >= c["settings_run"] - 1, (c["settings_run"], g["settings_run"])
    assert g["defaults"] == c["defaults"], g
    assert g["bounds"] == [] and g["robustness"] == "not checked (--no-bounds)", g
    assert g["rounds"] == 1, g
PY

# A budget between the defaults' memory and the pick's at 8 tasks: the pick there changes to a
# setting within it, and the row and table say what the budget cost.
"$py" - "$tmp/local/advice.json" >"$tmp/budget_mb" <<'PY' || fail "choose a budget"
import json, sys
a = json.load(open(sys.argv[1]))
r = a["rows"][1]
lo, hi = r["defaults"]["sunreclaim_kb"], r["best"]["sunreclaim_kb"]
assert lo < hi, (lo, hi)
print(f"{(lo + hi) / 2 / 1024:.3f}")
PY
"$bin" advise "${args[@]}" --memory-budget "$(cat "$tmp/budget_mb")" --out "$tmp/local" >"$tmp/budget.out" ||
  fail "advise with a budget"
"$py" - "$tmp/local/advice.json" "$(cat "$tmp/budget_mb")" <<'PY' && ok "a budget excludes every setting over it and states its cost" || fail "budget"
import json, sys
a = json.load(open(sys.argv[1]))
budget_kb = float(sys.argv[2]) * 1024
r = a["rows"][1]
assert r["best"]["sunreclaim_kb"] <= budget_kb, r["best"]
assert r["over_budget"] >= 1 and r["budget_cost_pct"] > 0, r
over = [s for s in r["settings"] if s["settled"] and s["sunreclaim_kb"] > budget_kb]
assert len(over) == r["over_budget"], (len(over), r["over_budget"])
assert r["fastest_over_budget"]["sunreclaim_kb"] > budget_kb, r
PY
grep -q "the budget excluded" "$tmp/budget.out" && ok "the table says what the budget excluded" ||
  fail "no budget line: $(cat "$tmp/budget.out")"

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
bad "an unknown search" "--search" --topology small-2s-8c --workload mmap1 --search random
bad "a cache given twice" "--caches: 'maple_node' is given twice" --topology small-2s-8c --workload mmap1 --caches maple_node,maple_node
bad "a capacity given twice" "--capacities: '16' is given twice" --topology small-2s-8c --workload mmap1 --capacities 16,32,16
bad "a task count given twice" "--nr-task: '4' is given twice" --topology small-2s-8c --workload mmap1 --nr-task 4,4
[ $failures -eq 0 ]
