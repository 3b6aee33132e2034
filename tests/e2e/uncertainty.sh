#!/usr/bin/env bash
# End-to-end: run --uncertainty (sim/trust/uncertainty.h). It states its cost before it runs,
# prints each delta with its 90% interval and the input that decides it, gives byte-identical
# stdout for the same seed, writes OUT/uncertainty.json with --out, and refuses a bad mode (exit 2).
# $1 = slubsim binary.
set -uo pipefail
bin=$1
source "$(dirname "$0")/lib.sh"
args=(run --topology small-2s-8c --workload mmap1 --kernel v6.17,v7.0 --nr-task 4,8 --jobs 2 --uncertainty quick)

"$bin" "${args[@]}" >"$tmp/a.txt" 2>"$tmp/a.err" || fail "run --uncertainty quick"
"$bin" "${args[@]}" --out "$tmp/out" >"$tmp/b.txt" 2>/dev/null || fail "run --uncertainty quick --out"
cmp -s "$tmp/a.txt" "$tmp/b.txt" && ok "the same seed: byte-identical output" || { fail "outputs differ"; diff "$tmp/a.txt" "$tmp/b.txt"; }
grep -q "^slubsim: --uncertainty quick: 16 points, 4 for the question and 12 at the ends of 2 factor(s) (4x the question)" "$tmp/a.err" &&
  ok "the cost is stated" || { fail "cost line"; cat "$tmp/a.err"; }
# Every pass on stderr, named with its wall time, then the total (not just the first pass's).
passes=0
for k in 1 2 3 4; do
  grep -q "^slubsim: pass $k of 4: \[4/4\] " "$tmp/a.err" && grep -Eq "^slubsim: pass $k of 4: wall time [0-9.]+ s$" "$tmp/a.err" &&
    passes=$((passes + 1))
done
grep -q "^slubsim: pass 1 of 4: the question, 4 points$" "$tmp/a.err" &&
  grep -q "^slubsim: pass 2 of 4: latency estimates at its low end, 4 points$" "$tmp/a.err" && [ $passes -eq 4 ] &&
  grep -Eq "^slubsim: wall time [0-9.]+ s in all, 4 passes$" "$tmp/a.err" &&
  ok "each pass: its name, its points' progress and wall time; then the total" || { fail "passes on stderr"; cat "$tmp/a.err"; }
iv='\[[+-][0-9.]+%, [+-][0-9.]+%\]'
grep -Eq "^ +4  v7.0 +v6.17 +[+-][0-9.]+% +$iv +$iv  (non-slab placeholders|latency estimates|the windows' own noise)" "$tmp/a.txt" &&
  grep -q "^  record:  the delta plus or minus the model's own error" "$tmp/a.txt" &&
  grep -Eq "^  kernels of different releases: with the model's record ±[0-9.]+ points \([0-9]+ of [0-9]+ published deltas held, [0-9]+%, one table left out; [0-9]+ tables\); the inputs' interval alone held [0-9]+ of [0-9]+" "$tmp/a.txt" &&
  grep -q "^  factor latency estimates: the 2 estimated or copied latencies of small-2s-8c" "$tmp/a.txt" &&
  ok "each delta: value, both 90% intervals with their coverage, deciding input" || { fail "uncertainty table"; cat "$tmp/a.txt"; }
"$py" - "$tmp/out/uncertainty.json" <<'PY' && ok "uncertainty.json" || fail "uncertainty.json"
import json, sys
u = json.load(open(sys.argv[1]))
assert u["mode"] == "quick" and [f["name"] for f in u["factors"]] == ["latency estimates", "non-slab placeholders"], u
assert len(u["deltas"]) == 2
for d in u["deltas"]:
    lo, hi = d["interval_90_pct"]
    assert lo <= hi and d["against"] == "v6.17" and d["decided_by"], d
    # The interval with the record holds the inputs' interval and the delta, and is wider.
    rlo, rhi = d["record_interval_90_pct"]
    assert d["kind"] == "across_releases" and rlo <= lo and hi <= rhi and rlo < d["delta_pct"] < rhi, d
r = u["record"]["across_releases"]
assert r["found"] and r["half_width_pp"] > 0 and r["scoreboard"]["tables"] >= 1, r
PY
# --baseline kernel: v7.0 at capacity 64 against v7.0 at its own settings, a knob within one kernel.
"$bin" run --topology small-2s-8c --workload mmap1 --kernel v7.0 --sheaf-capacity maple_node=64 --baseline kernel \
  --nr-task 4 --jobs 2 --uncertainty quick --out "$tmp/own" >"$tmp/own.txt" 2>/dev/null || fail "run --baseline kernel"
"$py" - "$tmp/own/uncertainty.json" <<'PY' && ok "--baseline kernel: capacity against the kernel's own" || { fail "--baseline kernel"; cat "$tmp/own.txt"; }
import json, sys
u = json.load(open(sys.argv[1]))
assert u["baseline"] == "kernel" and len(u["deltas"]) == 1, u
d = u["deltas"][0]
assert d["variant"] == "v7.0_sheaf_capacity=maple_node=64" and d["against"] == "v7.0" and d["kind"] == "knob", d
assert d["record_interval_90_pct"] is not None, d
PY
"$bin" run --topology small-2s-8c --nr-task 4 --uncertainty medium 2>"$tmp/bad.err" >/dev/null
rc=$?
[ $rc -eq 2 ] && grep -q -- "--uncertainty: 'medium' is not quick or full" "$tmp/bad.err" && ok "a bad mode: exit 2" ||
  { fail "bad mode: exit $rc"; cat "$tmp/bad.err"; }

[ $failures -eq 0 ] && echo "e2e.uncertainty: all checks passed"
[ $failures -eq 0 ]
