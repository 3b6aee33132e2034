#!/usr/bin/env bash
# End-to-end: tools/plot.py (every subcommand) and tools/plots.sh on a small results tree.
# Skipped (exit code 77) when the Python has no matplotlib (tools/setup.sh installs Debian's).
# $1 = slubsim binary.
set -uo pipefail
bin=$1
root="$(cd "$(dirname "$0")/../.." && pwd)"
. "$(dirname "$0")/lib.sh"
if ! "$py" -c "import matplotlib" 2>/dev/null; then
  echo "SKIP: $py has no matplotlib (apt-get install python3-matplotlib, or bash tools/setup.sh)"
  exit 77
fi
plot() { "$py" "$root/tools/plot.py" "$@"; }
export ROOT="$root"
is_png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; }
expect_png() {  # expect_png OUT args...
  local out=$1
  shift
  if plot "$@" -o "$out" >"$tmp/stdout" 2>"$tmp/stderr" && is_png "$out"; then ok "$1 -> $(basename "$out")"
  else fail "plot $* : $(cat "$tmp/stderr")"; fi
}

# A results tree: a T01-like kernel comparison and a capacity sweep.
res="$tmp/results"
t01="$res/t01-test/small-2s-8c"
cap="$res/cap-test/small-2s-8c"
"$bin" run --topology small-2s-8c --workload mmap2 --nr-task 2,4,8 --kernel v6.17,v6.19,v7.0 --runs 2 \
  --duration 1ms --warmup 500us --quiet --validate --out "$t01" || { echo "FAIL: slubsim run"; exit 1; }
"$bin" run --topology small-2s-8c --workload mmap2 --nr-task 4,8 --kernel v6.18 --sheaf-capacity maple_node=16,32,64 \
  --duration 1ms --warmup 500us --quiet --validate --out "$cap" || { echo "FAIL: slubsim capacity run"; exit 1; }
"$bin" run --topology small-2s-8c --workload mmap2 --nr-task 4,8 --kernel v6.17 \
  --duration 1ms --warmup 500us --quiet --validate --out "$cap/v6.17" || { echo "FAIL: slubsim baseline run"; exit 1; }
mkdir -p "$tmp/experiments"
cat >"$tmp/experiments/t01-test.json" <<'EOF'
{"id": "t01-test",
 "variants": [{"name": "base", "label": "pre-sheaves", "kernel": "v6.17"},
              {"name": "v6.19", "label": "double caching", "kernel": "v6.19"},
              {"name": "sfa", "label": "sheaves for all", "kernel": "v7.0"}],
 "nr_task": [2, 4, 8],
 "cells": [{"metric": "will-it-scale.8.processes", "baseline": "base", "test": "v6.19",
            "published_baseline": 1500000, "published_test": 2000000, "published_delta_pct": 33.3},
           {"metric": "will-it-scale.per_process_ops", "baseline": "base", "test": "sfa",
            "published_baseline": 200000, "published_test": 190000, "published_delta_pct": -5.0},
           {"metric": "will-it-scale.4.processes", "baseline": "base", "test": "not-run",
            "published_baseline": 800000, "published_test": 700000, "published_delta_pct": -12.5}]}
EOF
echo '{"id": "t99-missing", "variants": [], "cells": []}' >"$tmp/experiments/t99-missing.json"
cat >"$res/scoreboard.json" <<'EOF'
{"cells": [
 {"experiment": "t01-test", "topology": "small-2s-8c", "metric": "will-it-scale.8.processes", "baseline": "base", "test": "v6.19",
  "published_delta_pct": 33.3, "simulated_delta_pct": 20.1, "sign_agreement": true, "abs_error": 13.2},
 {"experiment": "cap-test", "topology": "small-2s-8c", "metric": "per_process_ops", "published_delta_pct": -1.0,
  "simulated_delta_pct": 2.0, "fitted": true},
 {"experiment": "t05", "metric": "will-it-scale.192.processes", "published_delta_pct": -20.4, "simulated_delta_pct": null}]}
EOF
# why.<category>.percent keys (from the why branch) in two of the variants
"$py" - "$t01" <<'PY'
import json, sys
for v, w in (("v6.17", {"lock_wait": 20, "other": 80}), ("v7.0", {"lock_wait": 35, "barn": 5, "other": 60})):
    p = f"{sys.argv[1]}/{v}/stats.json"
    d = json.load(open(p)); d.update({f"why.{k}.percent": x for k, x in w.items()}); json.dump(d, open(p, "w"))
PY

o="$tmp/png"
mkdir -p "$o"
expect_png "$o/scaling.png" scaling "$t01/v6.17" "$t01/v6.19"
expect_png "$o/experiment.png" experiment "$t01" --published "$tmp/experiments/t01-test.json"
expect_png "$o/experiment-bare.png" experiment "$t01"
cat >"$tmp/experiments/cap-test.json" <<'EOF2'
{"variants": [{"name": "base", "kernel": "v6.17"},
              {"name": "cap16", "kernel": "v6.18", "sheaf_capacity": {"maple_node": 16}},
              {"name": "cap64", "kernel": "v6.18", "sheaf_capacity": "maple_node=64"}],
 "cells": [{"metric": "will-it-scale.per_process_ops", "baseline": {"variant": "base", "published": 2.6e5},
            "test": {"variant": "cap16", "published": 2.2e5}},
           {"metric": "will-it-scale.8.processes", "baseline": "cap16", "test": "cap64",
            "published_baseline": 1.8e6, "published_test": 2.6e6}]}
EOF2
expect_png "$o/experiment-cap.png" experiment "$cap" --published "$tmp/experiments/cap-test.json"
"$py" - "$cap" "$tmp/experiments/cap-test.json" <<'PY' && ok "capacity variants matched by kernel and sheaf_capacity" || fail "variant matching"
import os, sys
sys.path.insert(0, os.environ["ROOT"] + "/tools")
import results_io as rio
labels = [l for l, _ in rio.variant_dirs([sys.argv[1]])]
exp = rio.load_experiment(sys.argv[2])
assert [rio.match_variant(n, exp, labels) for n in ("base", "cap16", "cap64", "nope")] == \
    ["v6.17", "v6.18_sheaf_capacity=maple_node=16", "v6.18_sheaf_capacity=maple_node=64", None], labels
assert exp["cells"][0]["published_test"] == 2.2e5 and exp["cells"][0]["test"] == "cap16"
PY
expect_png "$o/capacity.png" capacity "$cap"
expect_png "$o/capacity-key.png" capacity "$cap" --key 'will-it-scale.{N}.processes'

# The capacity plot, checked on what it draws (--describe reads the figure back): a title naming
# machine, kernels, workload and task counts from the data, a y axis from 0 with its unit, the 95%
# CI of every point as an error bar of settle.<N>.half_width, and windows that did not settle hollow.
capok="$tmp/capok"
"$bin" run --topology small-2s-8c --workload mmap2 --nr-task 1,4 --kernel v6.18,v7.0 --sheaf-capacity maple_node=16,32 \
  --jobs 2 --quiet --out "$capok" || { echo "FAIL: slubsim settled capacity run"; exit 1; }
# one window marked as not settled (the settle rule settles all of them on this small box)
"$py" - "$capok/v7.0_sheaf_capacity=maple_node=32/stats.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); s["settle.4.unsettled"] = 1; json.dump(s, open(sys.argv[1], "w"))
PY
# a copy whose index.json names another machine and workload: the title must follow the data
cp -r "$capok" "$tmp/capother"
"$py" - "$tmp/capother/index.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["job"].update(topology="boxes/my-box.json", workload="brk1", mode="thread")
json.dump(d, open(sys.argv[1], "w"))
PY
# variant dirs with no index.json and no experiment: the title says what it does not know
mkdir -p "$tmp/capbare/a/v6.18_sheaf_capacity=16" "$tmp/capbare/a/v6.18_sheaf_capacity=32"
cp "$capok/v6.18_sheaf_capacity=maple_node=16/stats.json" "$tmp/capbare/a/v6.18_sheaf_capacity=16/"
cp "$capok/v6.18_sheaf_capacity=maple_node=32/stats.json" "$tmp/capbare/a/v6.18_sheaf_capacity=32/"
if plot capacity "$capok" -o "$o/capacity-ci.png" --describe "$tmp/cap-ci.json" >"$tmp/stdout" 2>"$tmp/stderr" &&
   is_png "$o/capacity-ci.png" &&
   plot capacity "$cap" -o "$o/capacity-unjudged.png" --describe "$tmp/cap-unjudged.json" >"$tmp/stdout" 2>"$tmp/stderr" &&
   plot capacity "$tmp/capother" -o "$o/capacity-other.png" --describe "$tmp/cap-other.json" >"$tmp/stdout" 2>"$tmp/stderr" &&
   plot capacity "$tmp/capbare/a" -o "$o/capacity-bare.png" --describe "$tmp/cap-bare.json" >"$tmp/stdout" 2>"$tmp/stderr"; then
  "$py" - "$capok" "$tmp" <<'PY' && ok "capacity: title from the data, y from 0 (ops/s), 95% CI bars = settle.<N>.half_width / N, unsettled hollow" || fail "capacity plot's content"
import json, os, re, sys
capok, tmp = sys.argv[1], sys.argv[2]
def axes(name):
    d = json.load(open(os.path.join(tmp, name)))
    assert len(d["axes"]) == 1, d["axes"]
    return d["axes"][0]
def near(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))

a = axes("cap-ci.json")
t = a["title"]
for want in ("small-2s-8c", "mmap2", "v6.18", "v7.0", "maple_node", "nr_task 1, 4"):
    assert want in t, (want, t)
assert a["ylim"][0] == 0, a["ylim"]
assert "ops/s" in a["ylabel"], a["ylabel"]
# every point's bar: value +- its 95% half-width, from each variant's stats.json
want = {}
for k in ("v6.18", "v7.0"):
    for cap in (16, 32):
        s = json.load(open(f"{capok}/{k}_sheaf_capacity=maple_node={cap}/stats.json"))
        for n in (1, 4):
            y, hw = s[f"will-it-scale.{n}.processes"] / n, s[f"settle.{n}.half_width"] / n
            assert hw > 0, (k, cap, n, hw)
            want[(k, f"nr_task={n}", cap)] = (y, hw)
        hw = sum((s[f"settle.{n}.half_width"] / n) ** 2 for n in (1, 4)) ** 0.5 / 2
        want[(k, "per_process_ops (mean over nr_task)", cap)] = (s["will-it-scale.per_process_ops"], hw)
got = {}
for e in a["errorbars"]:
    m = re.fullmatch(r"_ci (v[\d.]+) (.+)", e["label"])
    assert m, e["label"]
    for x, lo, hi in e["bars"]:
        got[(m.group(1), m.group(2), int(x))] = ((lo + hi) / 2, (hi - lo) / 2)
assert set(got) == set(want), (sorted(got), sorted(want))
for k, (y, hw) in want.items():
    gy, ghw = got[k]
    assert near(gy, y) and abs(ghw - hw) <= 1e-6 * hw + 1e-9, (k, got[k], want[k])
hollow = [(ln["label"], x, y) for ln in a["lines"] if ln["hollow"] for x, y in zip(ln["x"], ln["y"])]
assert [(l, x) for l, x, _ in hollow] == [("_unsettled v7.0 nr_task=4", 32.0), ("_unsettled v7.0 per_process_ops (mean over nr_task)", 32.0)], hollow
assert any("not settled" in t for t in a["legend"]) and any("95% CI" in t for t in a["legend"]), a["legend"]

# the short fixed windows: not judged, so no CI and every point hollow; the reference kernel named
a = axes("cap-unjudged.json")
for want in ("small-2s-8c", "mmap2", "v6.18", "reference v6.17", "nr_task 4, 8"):
    assert want in a["title"], (want, a["title"])
assert a["ylim"][0] == 0 and not a["errorbars"], (a["ylim"], a["errorbars"])
hollow = [ln for ln in a["lines"] if ln["hollow"]]
assert sum(len(ln["x"]) for ln in hollow) == 9, hollow   # 3 capacities x (nr_task 4, 8, per_process_ops)
assert any("not judged" in t for t in a["legend"]), a["legend"]

a = axes("cap-other.json")
for want in ("my-box", "brk1", "thread"):
    assert want in a["title"], (want, a["title"])
assert "small-2s-8c" not in a["title"] and "mmap2" not in a["title"], a["title"]
a = axes("cap-bare.json")
assert "machine unknown" in a["title"] and "workload unknown" in a["title"] and "v6.18" in a["title"], a["title"]
PY
else
  fail "plot capacity --describe: $(cat "$tmp/stderr")"
fi
expect_png "$o/sweep.png" sweep "$cap"
expect_png "$o/locks.png" locks "$t01"
expect_png "$o/locks-variants.png" locks "$t01/v6.19" "$t01/v7.0"
expect_png "$o/why.png" why "$t01"
expect_png "$o/scoreboard.png" scoreboard "$res/scoreboard.json"
# The why plot of the committed T01 run: a bar per variant and task count, each summing to 100%.
"$py" - "$root" <<'PY' && ok "why: one bar per variant x task count, each 100% +- 0.5" || fail "why bars of T01"
import sys, os
root = sys.argv[1]
sys.path.insert(0, os.path.join(root, "tools"))
import matplotlib
matplotlib.use("Agg")
import plot, results_io as rio
t01 = os.path.join(root, "results", "t01-hao-li-mmap2", "amd-epyc-2s-192c-4n")
bars, per = plot.why_bars(plot.stats_of(rio.variant_dirs([t01])))
assert len(bars) == 9, bars
for b, p in zip(bars, per):
    assert abs(sum(p.values()) - 100) <= 0.5, (b, sum(p.values()), p)
    assert not any(c.startswith("spin.") for c in p), p
PY
(umask 022 && plot why "$t01" -o "$o/why-mode.png" >/dev/null 2>&1)
[ "$(stat -c %a "$o/why-mode.png")" = 644 ] && ok "PNG mode follows the umask" || fail "PNG mode $(stat -c %a "$o/why-mode.png")"
plot locks "$t01" -o "$o/locks2.png" >/dev/null && cmp -s "$o/locks.png" "$o/locks2.png" && ok "deterministic PNG" || fail "two plots differ"

# why without why keys (results from before the why report): a message, exit 0, no file.
mkdir -p "$tmp/nowhy/v1"
"$py" - "$cap/v6.17/stats.json" "$tmp/nowhy/v1/stats.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
json.dump({k: v for k, v in s.items() if not k.startswith("why.")}, open(sys.argv[2], "w"))
PY
if plot why "$tmp/nowhy" -o "$o/why-none.png" >"$tmp/stdout" 2>&1 && [ ! -e "$o/why-none.png" ] &&
   grep -q "no why.<category>.percent keys" "$tmp/stdout"; then ok "why skips results without why keys"
else fail "why without keys: $(cat "$tmp/stdout")"; fi

echo '{"cells": [{"experiment": "x", "published_delta_pct": 5, "simulated_delta_pct": null}]}' >"$tmp/empty-score.json"
if plot scoreboard "$tmp/empty-score.json" -o "$o/score-none.png" >"$tmp/stdout" 2>&1 && [ ! -e "$o/score-none.png" ]; then
  ok "scoreboard without simulated values: $(cat "$tmp/stdout")"
else fail "scoreboard without simulated values: $(cat "$tmp/stdout")"; fi

# Bad input: exit code 2, file and field in the message, no output file.
expect_error() {  # expect_error "<message part>" args...
  local want=$1
  shift
  rm -f "$o/bad.png"
  plot "$@" -o "$o/bad.png" >"$tmp/stdout" 2>"$tmp/stderr"
  local rc=$?
  if [ $rc -ne 2 ]; then fail "($*) exit code $rc, want 2: $(cat "$tmp/stderr")"; return; fi
  if ! grep -qF -- "$want" "$tmp/stderr"; then fail "($*) message lacks '$want': $(cat "$tmp/stderr")"; return; fi
  if [ -e "$o/bad.png" ] || ls "$o"/.plot.* >/dev/null 2>&1; then fail "($*) wrote output"; return; fi
  ok "$(cat "$tmp/stderr")"
}
mkdir -p "$tmp/broken/v1"
echo '{"will-it-scale.8.processes": ' >"$tmp/broken/v1/stats.json"
expect_error "broken/v1/stats.json: not valid JSON" scaling "$tmp/broken/v1"
expect_error "no-such-dir: no such directory" experiment "$tmp/no-such-dir"
expect_error "no stats.json in it or in its subdirectories" locks "$tmp/experiments"
echo '{"cells": [{"experiment": "x", "published_delta_pct": "big", "simulated_delta_pct": 1}]}' >"$tmp/bad-score.json"
expect_error "bad-score.json: cells[0].published_delta_pct: 'big' is not a number" scoreboard "$tmp/bad-score.json"
echo '{"variants": {"a": 1}, "cells": [{"metric": "will-it-scale.8.processes", "baseline": "a", "published_baseline": "n/a"}]}' >"$tmp/bad-exp.json"
expect_error "bad-exp.json: cells[0].published_baseline: 'n/a' is not a number" experiment "$t01" --published "$tmp/bad-exp.json"
expect_error "no variant dir named <kernel>_sheaf_capacity=" capacity "$t01"
expect_error "invalid choice: 'bogus'" bogus "$t01"

# tools/plots.sh regenerates everything into RESULTS/plots and names what it skips.
if PYTHON="$py" bash "$root/tools/plots.sh" "$res" "$tmp/experiments" >"$tmp/plots.out" 2>&1; then
  for f in t01-test--small-2s-8c.png t01-test--small-2s-8c-locks.png t01-test--small-2s-8c-why.png \
           cap-test--small-2s-8c.png cap-test--small-2s-8c-capacity.png scoreboard.png; do
    is_png "$res/plots/$f" || fail "plots.sh made no $f"
  done
  grep -q "t99-missing: no results under" "$tmp/plots.out" && ok "plots.sh: $(tail -n1 "$tmp/plots.out")" ||
    fail "plots.sh does not name the experiment without results: $(cat "$tmp/plots.out")"
else
  fail "plots.sh: $(cat "$tmp/plots.out")"
fi

echo "plot: $failures failed"
[ $failures -eq 0 ]
