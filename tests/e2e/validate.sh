#!/usr/bin/env bash
# End-to-end: slubsim validate on a tiny experiment (small-2s-8c, 1 ms windows): calibrate, score,
# write the scoreboard; a rerun gives byte-identical files; bad experiment files exit 2 and
# write nothing. $1 = slubsim binary, $2 = tests/data.
set -uo pipefail
bin=$(realpath "$1")
data=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

help=$("$bin" validate --help) || fail "validate --help"
for opt in --experiments --only --out --fits --jobs --calibrate --no-write; do
  grep -q -- "$opt" <<<"$help" || fail "validate --help lacks $opt"
done

# No fit yet: an error that says how to make one, and nothing written.
"$bin" validate --experiments "$data/experiments" --fits "$tmp/fits" --out "$tmp/nofit" --quiet >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] || fail "missing fit: exit code $rc, want 2"
grep -q "tiny-mmap2.small-2s-8c.json: no fit for experiment 'tiny-mmap2'.*--calibrate" "$tmp/err" || fail "missing fit message: $(cat "$tmp/err")"
[ -e "$tmp/nofit" ] && fail "missing fit: wrote $tmp/nofit"

# Calibrate: one fit file, on the baseline at the lowest task count.
"$bin" validate --experiments "$data/experiments" --fits "$tmp/fits" --calibrate --quiet --validate >"$tmp/cal.out" || fail "calibrate"
fit="$tmp/fits/tiny-mmap2.small-2s-8c.json"
[ -f "$fit" ] || fail "no fit file: $(cat "$tmp/cal.out")"
python3 - "$fit" <<'PY' || fail "fit file contents"
import json, sys
f = json.load(open(sys.argv[1]))
on = f["fitted_on"]
assert on["variant"] == "base" and on["nr_task"] == 2 and on["kernel"] == "v6.17", on
assert on["simulations"] <= 6, on
assert abs(on["simulated"] / on["published"] - 1) < 0.05, on
assert set(f["parameters"]) == {"mmap_locked_ns", "munmap_locked_ns", "unlocked_ns"}, f
assert f["scale"] > 0 and "VALIDATION.md" in f["source"], f
PY

# Validate: raw results as `slubsim run --out` writes them, and the scoreboard.
"$bin" validate --experiments "$data/experiments" --fits "$tmp/fits" --out "$tmp/a" --quiet --validate >"$tmp/a.out" || fail "validate: $(cat "$tmp/a.out")"
for f in scoreboard.md scoreboard.json tiny-mmap2/small-2s-8c/base/stats.json tiny-mmap2/small-2s-8c/base/matrix.json \
         tiny-mmap2/small-2s-8c/base/host.json tiny-mmap2/small-2s-8c/sheaves/stats.json; do
  [ -f "$tmp/a/$f" ] || fail "missing $f"
done
[ -e "$tmp/a/tiny-mmap2/small-2s-8c/big-order" ] && fail "an excluded variant was run"
grep -q "Overall: sign agreement" "$tmp/a/scoreboard.md" || fail "scoreboard.md header"
grep -q "Every other delta cell is an out-of-sample prediction" "$tmp/a/scoreboard.md" || fail "scoreboard.md note"
grep -q "^| within one source tree (best topology) |" "$tmp/a/scoreboard.md" &&
  grep -q "^| across releases (best topology) |" "$tmp/a/scoreboard.md" || fail "scoreboard.md: no within-tree / across-releases totals"
grep -q "sign agreement" "$tmp/a.out" || fail "no scoreboard on stdout"

# --uncertainty quick: the same results (the runs at the factors' ends are not written), and every
# scored cell with its interval; the scoreboard counts coverage and lists the structural misses.
"$bin" validate --experiments "$data/experiments" --fits "$tmp/fits" --out "$tmp/u" --uncertainty quick \
  >"$tmp/u.out" 2>"$tmp/u.err" || fail "validate --uncertainty quick: $(cat "$tmp/u.out" "$tmp/u.err")"
# Its three passes on stderr, each with its wall time, then the total.
for k in 1 2 3; do
  grep -Eq "^slubsim: pass $k of 3: wall time [0-9.]+ s$" "$tmp/u.err" || fail "pass $k of 3 has no wall time: $(cat "$tmp/u.err")"
done
grep -q "^slubsim: --uncertainty quick: pass 2 of 3: the class-4 fit again at 2 end(s)$" "$tmp/u.err" &&
  grep -q "^slubsim: validate, pass 3 of 3 \[" "$tmp/u.err" &&
  grep -Eq "^slubsim: wall time [0-9.]+ s in all, 3 passes$" "$tmp/u.err" || fail "validate passes: $(cat "$tmp/u.err")"
cmp -s "$tmp/a/tiny-mmap2/small-2s-8c/base/stats.json" "$tmp/u/tiny-mmap2/small-2s-8c/base/stats.json" ||
  fail "validate --uncertainty changed a result"
grep -q "^| intervals (90%, over the inputs' ranges and the windows' noise) |" "$tmp/u/scoreboard.md" &&
  grep -q "^Structural misses" "$tmp/u/scoreboard.md" || fail "scoreboard.md: no intervals table or structural misses"
grep -q "the 90% interval covers the published delta in" "$tmp/u.out" || fail "no coverage on stdout"
grep -q "^| intervals" "$tmp/a/scoreboard.md" && fail "a plain validate printed intervals"
python3 - "$tmp/u/scoreboard.json" <<'PY' || fail "scoreboard.json intervals"
import json, sys
b = json.load(open(sys.argv[1]))
n = 0
for e in b["experiments"]:
    for t in e["topologies"]:
        for c in t["cells"]:
            if "excluded" in c or c["simulated_delta_pct"] is None:
                continue
            lo, hi = c["interval_90_pct"]
            rlo, rhi = c["reach_pct"]
            assert lo <= hi and rlo <= lo + 1e-9 and hi <= rhi + 1e-9 and c["decided_by"], c
            n += 1
assert n > 0 and b["overall"]["intervals"]["cells"] == b["overall"]["cells"], b["overall"]
# The class-4 fit is done again at each end of the latency estimates (small-2s-8c's DRAM ranges).
refits = b["experiments"][0]["topologies"][0]["refits_at_interval_ends"]
assert len(refits) == 2 and all("latency estimates" in r and "scale" in r for r in refits), refits
PY
grep -q "the non-slab time is fitted again" "$tmp/u/scoreboard.md" || fail "scoreboard.md: the refits at the ends are not listed"
for bad in "--uncertainty medium" "--uncertainty quick --calibrate"; do
  "$bin" validate --experiments "$data/experiments" --fits "$tmp/fits" --out "$tmp/bad" --quiet $bad >/dev/null 2>"$tmp/err"
  [ $? -eq 2 ] && [ ! -e "$tmp/bad" ] || fail "validate $bad: want exit 2 and nothing written: $(cat "$tmp/err")"
done

# A partial run (--only) never replaces a full scoreboard: by default it goes to results/partial,
# and even with --out pointing at the full one its scoreboard is scoreboard.partial.*.
mkdir -p "$tmp/work/results"
cp "$tmp/a/scoreboard.md" "$tmp/a/scoreboard.json" "$tmp/work/results/"
(cd "$tmp/work" && "$bin" validate --experiments "$data/experiments" --fits "$tmp/fits" --only tiny-mmap2 --quiet >/dev/null) \
  || fail "validate --only with the default --out"
[ -f "$tmp/work/results/partial/scoreboard.partial.md" ] && [ -f "$tmp/work/results/partial/tiny-mmap2/small-2s-8c/base/stats.json" ] \
  || fail "validate --only: nothing in results/partial"
(cd "$tmp/work" && "$bin" validate --experiments "$data/experiments" --fits "$tmp/fits" --only tiny-mmap2 --out results --quiet >/dev/null) \
  || fail "validate --only --out results"
[ -f "$tmp/work/results/scoreboard.partial.json" ] || fail "validate --only --out results: no scoreboard.partial.json"
for f in scoreboard.md scoreboard.json; do
  cmp -s "$tmp/a/$f" "$tmp/work/results/$f" || fail "validate --only replaced the full $f"
done

# A what-if: --set needs an explicit --out (and --fits to calibrate), then says so at the top.
(cd "$tmp" && "$bin" validate --experiments "$data/experiments" --fits "$tmp/fits" --set costs.qspinlock.contender_rmw=true \
   --quiet >/dev/null 2>"$tmp/err"); rc=$?
[ $rc -eq 2 ] && grep -q -- "--set: needs an explicit --out" "$tmp/err" || fail "validate --set without --out: rc $rc, $(cat "$tmp/err")"
[ -e "$tmp/results" ] && fail "validate --set without --out wrote $tmp/results"
"$bin" validate --experiments "$data/experiments" --calibrate --set costs.qspinlock.contender_rmw=true --quiet >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q -- "--set: with --calibrate needs an explicit --fits" "$tmp/err" || fail "calibrate --set without --fits: $(cat "$tmp/err")"
"$bin" validate --experiments "$data/experiments" --fits "$tmp/fits" --out "$tmp/whatif" --set costs.qspinlock.contender_rmw=true \
  --quiet >/dev/null || fail "validate --set --out"
grep -q "What-if, not the committed model" "$tmp/whatif/scoreboard.md" || fail "the what-if scoreboard does not say so"
# --warmup/--duration/--interval are what-ifs too: guarded like --set, and a bad duration is an error.
(cd "$tmp" && "$bin" validate --experiments "$data/experiments" --fits "$tmp/fits" --warmup 2ms --quiet >/dev/null 2>"$tmp/err"); rc=$?
[ $rc -eq 2 ] && grep -q -- "--warmup/--duration/--interval: needs an explicit --out" "$tmp/err" || fail "validate --warmup without --out: rc $rc, $(cat "$tmp/err")"
"$bin" validate --experiments "$data/experiments" --fits "$tmp/fits" --out "$tmp/w2" --duration 5 --quiet >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q -- "--duration: '5' needs a unit" "$tmp/err" || fail "validate --duration 5: $(cat "$tmp/err")"
[ -e "$tmp/w2" ] && fail "validate --duration 5 wrote $tmp/w2"
(cd "$tmp" && "$bin" validate --experiments "$data/experiments" --fits "$tmp/fits" --interval 1ms --quiet >/dev/null 2>"$tmp/err"); rc=$?
[ $rc -eq 2 ] && grep -q -- "needs an explicit --out" "$tmp/err" || fail "validate --interval without --out: rc $rc, $(cat "$tmp/err")"
python3 - "$tmp/a/scoreboard.json" <<'PY' || fail "scoreboard.json contents"
import json, sys
b = json.load(open(sys.argv[1]))
t = b["experiments"][0]["topologies"][0]
assert t["totals"]["cells"] == 3 and t["totals"]["excluded"] == 1, t["totals"]
assert set(b["sensitivity"]) >= {"within_tree", "across_releases", "all"}, b["sensitivity"]
assert b["sensitivity"]["all"]["comparisons"] >= 1, b["sensitivity"]
assert t["in_sample"]["variant"] == "base" and t["in_sample"]["nr_task"] == 2, t["in_sample"]
ex = [c for c in t["cells"] if "excluded" in c]
assert len(ex) == 1 and "simulated_delta_pct" not in ex[0], ex
for c in t["cells"]:
    if "excluded" in c: continue
    d = (c["simulated_test"] - c["simulated_baseline"]) / c["simulated_baseline"] * 100
    assert abs(d - c["simulated_delta_pct"]) < 0.01, c
assert b["overall"]["cells"] == 3, b["overall"]
PY
# The variant's results are those of the same job run by hand.
python3 - "$fit" > "$tmp/sets" <<'PY'
import json, sys
for k, v in json.load(open(sys.argv[1]))["parameters"].items(): print(f"--set=workload.parameters.{k}={v}")
PY
mapfile -t sets < "$tmp/sets"
"$bin" run --quiet --topology small-2s-8c --workload mmap2 --nr-task 2,8 --duration 1ms --warmup 500us \
  --kernel v7.0 --sheaf-capacity maple_node=32 "${sets[@]}" --out "$tmp/byhand" || fail "run by hand"
cmp "$tmp/byhand/stats.json" "$tmp/a/tiny-mmap2/small-2s-8c/sheaves/stats.json" || fail "validate's stats.json differs from slubsim run's"

# A rerun (other thread count) gives identical bytes.
"$bin" validate --experiments "$data/experiments" --fits "$tmp/fits" --out "$tmp/b" --quiet --jobs 1 >/dev/null || fail "rerun"
cmp "$tmp/a/scoreboard.json" "$tmp/b/scoreboard.json" || fail "scoreboard.json differs between identical runs"
cmp "$tmp/a/scoreboard.md" "$tmp/b/scoreboard.md" || fail "scoreboard.md differs between identical runs"

# --plan lists the points in the order shards take them, and runs nothing.
"$bin" validate --experiments "$data/experiments" --fits "$tmp/fits" --plan "$tmp/plan.json" --out "$tmp/planned" --quiet \
  || fail "--plan"
python3 -c "import json,sys; p=json.load(open(sys.argv[1])); assert p['points_total']==4 and [x['nr_task'] for x in p['points']]==[2,8,2,8], p" \
  "$tmp/plan.json" || fail "--plan contents"
[ -e "$tmp/planned" ] && fail "--plan ran the validate"

# Shards: three shards each keep their points; scoring the three point trees runs nothing and
# writes the same results and scoreboard as one local validate (host.json aside). A shard's
# points already on disk are not run again, and a lost shard's points are run by the scorer.
for k in 1 2 3; do
  "$bin" validate --experiments "$data/experiments" --fits "$tmp/fits" --shard "$k/3" --points "$tmp/sh/$k" \
    --quiet >"$tmp/sh$k.out" || fail "shard $k/3: $(cat "$tmp/sh$k.out")"
  grep -q "validate shard $k/3: its points are in" "$tmp/sh$k.out" || fail "shard $k/3 output: $(cat "$tmp/sh$k.out")"
done
[ -e "$tmp/sh/1/scoreboard.md" ] && fail "a shard wrote a scoreboard"
n1=$(find "$tmp/sh/1" -path '*/points/v*.json' | wc -l); n2=$(find "$tmp/sh/2" -path '*/points/v*.json' | wc -l)
n3=$(find "$tmp/sh/3" -path '*/points/v*.json' | wc -l)
[ "$n1" -ge 1 ] && [ "$n2" -ge 1 ] && [ $((n1 + n2 + n3)) -eq 4 ] || fail "shards hold $n1 + $n2 + $n3 points, want 4 in all"
"$bin" validate --experiments "$data/experiments" --fits "$tmp/fits" --points "$tmp/sh/1,$tmp/sh/2,$tmp/sh/3" \
  --out "$tmp/m" >/dev/null 2>"$tmp/m.err" || fail "scoring the shards: $(cat "$tmp/m.err")"
grep -q "nr_task=" "$tmp/m.err" && fail "scoring the shards ran points: $(cat "$tmp/m.err")"
diff -r -x host.json "$tmp/a" "$tmp/m" >"$tmp/diff" || fail "shards scored differ from a local validate: $(head "$tmp/diff")"
"$bin" validate --experiments "$data/experiments" --fits "$tmp/fits" --shard 1/3 --points "$tmp/sh/1" >/dev/null 2>"$tmp/again.err" \
  || fail "shard 1/3 again"
grep -q "nr_task=" "$tmp/again.err" && fail "a shard rerun ran points it had: $(cat "$tmp/again.err")"
"$bin" validate --experiments "$data/experiments" --fits "$tmp/fits" --points "$tmp/sh/1,$tmp/sh/3" --out "$tmp/m2" \
  --quiet >/dev/null || fail "scoring with a shard missing"
diff -r -x host.json "$tmp/a" "$tmp/m2" >/dev/null || fail "scoring with a shard missing differs from a local validate"
"$bin" validate --experiments "$data/experiments" --fits "$tmp/fits" --shard 1/3 --quiet >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q -- "--shard: a shard keeps its points: give --points DIR" "$tmp/err" || fail "--shard without --points: $(cat "$tmp/err")"
"$bin" validate --experiments "$data/experiments" --fits "$tmp/fits" --shard 4/3 --points "$tmp/sh/x" --quiet >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q -- "--shard: shard 4 of 3" "$tmp/err" || fail "--shard 4/3: $(cat "$tmp/err")"
[ -e "$tmp/sh/x" ] && fail "a bad --shard wrote $tmp/sh/x"

# --no-write prints only.
"$bin" validate --experiments "$data/experiments" --fits "$tmp/fits" --out "$tmp/nw" --quiet --no-write >/dev/null || fail "--no-write"
[ -e "$tmp/nw" ] && fail "--no-write wrote $tmp/nw"

# Bad experiment files: exit 2, the file and field named, nothing written.
expect_error() {
  local file=$1 want=$2
  "$bin" validate --experiments "$data/bad-experiments/$file" --fits "$tmp/fits" --out "$tmp/bad" --quiet >/dev/null 2>"$tmp/err"
  local rc=$?
  [ $rc -eq 2 ] || fail "$file: exit code $rc, want 2"
  grep -qF -- "$want" "$tmp/err" || fail "$file: message lacks '$want': $(cat "$tmp/err")"
  [ -e "$tmp/bad" ] && fail "$file: wrote $tmp/bad"
  echo "ok: $file -> $(head -n1 "$tmp/err")"
}
expect_error fit-not-baseline.json "fit-not-baseline.json: fit.variant: 'sheaves' is not the baseline variant"
expect_error fit-not-lowest.json "fit-not-lowest.json: fit.nr_task: 8 is not the lowest task count"
expect_error unknown-variant.json "unknown-variant.json: cells[0].test: no variant named 'sheaves-v2'"
expect_error missing-workload.json "missing-workload.json: workload: missing field"
expect_error bad-patch.json "bad-patch.json: variants[1].patches[0]"
expect_error unknown-counter-key.json "unknown-counter-key.json: counters[0].key: not a rate the model reports"
expect_error half-window.json "half-window.json: duration: give both duration and warmup (a fixed window), or neither"
# A whole directory with one bad file is refused too.
"$bin" validate --experiments "$data/bad-experiments" --out "$tmp/bad" --quiet >/dev/null 2>&1
[ $? -eq 2 ] || fail "a directory with bad files must exit 2"
[ -e "$tmp/bad" ] && fail "wrote $tmp/bad"
"$bin" validate --experiments "$data/experiments" --only no-such-id --out "$tmp/bad" --quiet >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q -- "--only: no experiment 'no-such-id'" "$tmp/err" || fail "--only with an unknown id: $(cat "$tmp/err")"

# The default main job (no arguments) from an installed layout ($SLUBSIM_HOME), with a quick
# stand-in for T01 under T01's name: it prints simulated vs published and writes nothing.
home="$tmp/home"
mkdir -p "$home/configs/experiments"
src="$data/../.."
cp -r "$src/configs/topologies" "$src/configs/costs" "$src/configs/kernels" "$src/configs/caches" "$home/configs/"
cp -r "$src/workloads" "$home/"
sed 's/"id": "tiny-mmap2"/"id": "t01-hao-li-mmap2"/' "$data/experiments/tiny-mmap2.json" > "$home/configs/experiments/t01-hao-li-mmap2.json"
(cd "$tmp" && SLUBSIM_HOME="$home" "$bin" 2>"$tmp/err") && fail "the default job ran without a fit"
grep -q -- "--calibrate" "$tmp/err" || fail "the default job's missing-fit message: $(cat "$tmp/err")"
SLUBSIM_HOME="$home" "$bin" validate --calibrate --quiet >/dev/null || fail "calibrate in the home layout"
[ -f "$home/configs/fits/t01-hao-li-mmap2.small-2s-8c.json" ] || fail "no fit in the home layout"
before=$(find "$tmp" | sort)
(cd "$tmp" && SLUBSIM_HOME="$home" "$bin" >"$tmp/default.out" 2>/dev/null) || fail "the default job: $(cat "$tmp/default.out")"
grep -q "will-it-scale ops/s: simulated (±95%) | published" "$tmp/default.out" || fail "default job table: $(cat "$tmp/default.out")"
grep -q "sheaves vs base" "$tmp/default.out" || fail "default job deltas: $(cat "$tmp/default.out")"
grep -q "1800000" "$tmp/default.out" || fail "default job lacks the published values"
[ "$before" = "$(find "$tmp" -not -name default.out | sort)" ] || fail "the default job wrote files"

# A pin (VALIDATION.md): a deltas-only table fits its non-slab time on its baseline's published
# spin share at the profile's task count; the fit file says it is a pin, and the scoreboard counts
# that profile row as in-sample, not as a prediction.
"$bin" validate --experiments "$data/experiments-pin" --fits "$tmp/pinfits" --calibrate --quiet >"$tmp/pin.out" \
  || fail "calibrate a pin: $(cat "$tmp/pin.out")"
"$bin" validate --experiments "$data/experiments-pin" --fits "$tmp/pinfits" --out "$tmp/pin" --quiet >/dev/null \
  || fail "validate with a pin"
python3 - "$tmp/pinfits/tiny-pin.small-2s-8c.json" "$tmp/pin/scoreboard.json" <<'PY' || fail "pin: fit file or scoreboard"
import json, sys
f = json.load(open(sys.argv[1]))
on = f["fitted_on"]
assert on["metric"] == "why.8.spin.percent" and on["nr_task"] == 8 and on["variant"] == "base", on
assert on["converged"] and abs(on["simulated"] - on["published"]) <= 0.5, on
assert "pinned" in f["source"], f["source"]
b = json.load(open(sys.argv[2]))
p = b["experiments"][0]["topologies"][0]["profiles"][0]
assert p["pinned"] and p["fitted"], p
assert b["profiles"]["baseline_states"]["rows"] == 1 and b["profiles"]["test_states"]["rows"] == 0, b["profiles"]
PY
grep -q "^In-sample (pinned): base .why.8.spin.percent. at 8 tasks" "$tmp/pin/scoreboard.md" || fail "pin: in-sample line"
grep -q "(baseline state: the pin's, in-sample)" "$tmp/pin/scoreboard.md" || fail "pin: profile label"

# The pin's second derivation (VALIDATION.md): another machine's fit of the same parameters is
# printed beside it with its ratio, and more than 2x apart says so. A cross-check whose fit file
# is missing is bad input (exit 2, the field named), and a throughput fit may not have one.
mkdir -p "$tmp/ccexp"
python3 - "$tmp/pinfits/tiny-pin.small-2s-8c.json" "$data/experiments-pin/tiny-pin.json" "$tmp" <<'PY' || fail "cross-check set-up"
import json, sys
fit = json.load(open(sys.argv[1]))
fit["experiment"] = "other-box"
fit["parameters"] = {k: v * 3 for k, v in fit["parameters"].items()}
json.dump(fit, open(sys.argv[3] + "/pinfits/other-box.small-2s-8c.json", "w"))
e = json.load(open(sys.argv[2]))
e["fit"]["cross_check"] = [{"experiment": "other-box", "topology": "small-2s-8c", "note": "a made-up slower machine"}]
json.dump(e, open(sys.argv[3] + "/ccexp/tiny-pin.json", "w"))
e["fit"]["cross_check"][0]["experiment"] = "no-such-fit"
json.dump(e, open(sys.argv[3] + "/ccexp-missing.json", "w"))
e["fit"]["metric"] = "will-it-scale.8.processes"
json.dump(e, open(sys.argv[3] + "/ccexp-notpin.json", "w"))
PY
"$bin" validate --experiments "$tmp/ccexp" --fits "$tmp/pinfits" --out "$tmp/cc" --quiet >/dev/null \
  || fail "validate with a cross-check"
grep -q "^Second derivation from hardware facts: the pin gives .* ns of non-slab time per operation; .other-box.small-2s-8c.json. gives .* (3.00x the pin's: a made-up slower machine). More than 2x apart" \
  "$tmp/cc/scoreboard.md" || fail "cross-check line: $(grep -i 'second derivation' "$tmp/cc/scoreboard.md")"
python3 - "$tmp/cc/scoreboard.json" <<'PY' || fail "cross-check in scoreboard.json"
import json, sys
f = json.load(open(sys.argv[1]))["experiments"][0]["topologies"][0]["in_sample"]
c = f["cross_checks"][0]
assert c["file"] == "other-box.small-2s-8c.json" and c["ratio"] == 3.0, c
assert abs(c["nonslab_ns"] - 3 * f["nonslab_ns"]) < 1, (c, f["nonslab_ns"])
PY
for bad in missing notpin; do
  rm -rf "$tmp/ccbad" && mkdir -p "$tmp/ccbad" && cp "$tmp/ccexp-$bad.json" "$tmp/ccbad/tiny-pin.json"
  "$bin" validate --experiments "$tmp/ccbad" --fits "$tmp/pinfits" --out "$tmp/ccbad-out" --quiet >/dev/null 2>"$tmp/ccbad.err"
  rc=$?
  [ "$rc" = 2 ] || fail "cross-check $bad: exit $rc, want 2"
  grep -q "cross_check" "$tmp/ccbad.err" || fail "cross-check $bad: message does not name the field: $(cat "$tmp/ccbad.err")"
  [ ! -e "$tmp/ccbad-out/scoreboard.md" ] || fail "cross-check $bad: wrote a scoreboard"
done

# A row two tables share is simulated once: Zhao Liu's two GNR tables both have the 3accabda4
# baseline (the same request fields and inputs), 6 of their 54 rows; both tables get its result.
"$bin" validate --only seed-zhao-liu-maple-capacity-gnr,seed-zhao-liu-spare-sheaf-gnr --jobs 2 \
  --warmup 1ms --duration 1ms --out "$tmp/shared" >/dev/null 2>"$tmp/shared.err" || fail "shared rows: $(tail -3 "$tmp/shared.err")"
grep -q "validate \[48/48\]" "$tmp/shared.err" || fail "shared rows: not 48 simulations: $(grep -o 'validate \[[0-9]*/[0-9]*\]' "$tmp/shared.err" | tail -1)"
g="$tmp/shared/seed-zhao-liu-%s-gnr/intel-gnr-2s-344t-4n/3accabda4/stats.json"
cmp -s "$(printf "$g" maple-capacity)" "$(printf "$g" spare-sheaf)" || fail "shared rows: the two tables' 3accabda4 differ"

echo "e2e.validate: all checks passed"
