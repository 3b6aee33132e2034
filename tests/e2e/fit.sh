#!/usr/bin/env bash
# End-to-end: slubsim fit. A figure simulated with mmap2's non-slab time at x0.6 on small-2s-8c
# (2 tasks, short fixed windows) is fitted back from x1 with validate --calibrate's search: the
# scale comes back within the search's tolerance, the fit file is what `run --fit` takes and the
# run then gives the fit's own figure; the same figure read from the run's stats.json and as
# will-it-scale's runtest.py CSV gives the same scale. Bad input exits 2, names what is wrong and
# writes nothing. $1 = slubsim binary.
set -uo pipefail
bin=$(realpath "$1")
. "$(dirname "$0")/lib.sh"

window=(--duration 2ms --warmup 1ms)
job=(--topology small-2s-8c --workload mmap2 --nr-task 2 "${window[@]}")
scale=0.6  # the "machine's" non-slab time: mmap2's placeholders x 0.6

# --help: the command is listed, and every option of 'fit --help' has an example.
top=$("$bin" --help) && grep -q "slubsim fit \[OPTIONS\]" <<<"$top" && ok "slubsim --help lists fit" ||
  fail "slubsim --help does not list fit"
runhelp=$("$bin" run --help) && grep -q -- "--fit arg" <<<"$runhelp" && ok "run --help lists --fit" ||
  fail "run --help does not list --fit"
"$bin" fit --help >"$tmp/help.txt" || fail "fit --help"
$py - "$tmp/help.txt" <<'PY' && ok "fit --help: every option has an example" || fail "fit --help: $(cat "$tmp/help.txt")"
import re, sys
text = open(sys.argv[1]).read()
assert "Examples:" in text and "slubsim fit --topology" in text
options = text.split("Options of 'slubsim fit':", 1)[1]
blocks = re.split(r"\n(?=  -)", options.strip("\n"))
names = []
for b in blocks:
    name = re.match(r"\s*(?:-h \[ )?(--[a-z-]+)", b).group(1)
    names.append(name)
    assert name == "--help" or "e.g." in b, b
for want in ["--ops", "--from", "--nr-task", "--topology", "--workload", "--mode", "--kernel", "--parameters",
             "--start", "--out", "--set", "--seed", "--duration", "--warmup", "--quiet"]:
    assert want in names, (want, names)
PY

# The measured figure: a run at the known scale.
sets=(--set workload.parameters.mmap_locked_ns=900 --set workload.parameters.munmap_locked_ns=840
      --set workload.parameters.unlocked_ns=540)
"$bin" run "${job[@]}" "${sets[@]}" --out "$tmp/measured" --quiet >/dev/null 2>"$tmp/measured.err" ||
  fail "run at x$scale: $(cat "$tmp/measured.err")"
ops=$($py -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["will-it-scale.2.processes"]))' \
      "$tmp/measured/stats.json") || fail "no will-it-scale.2.processes"
echo "measured: $ops ops/s at x$scale"

# Fit it back from x1.
"$bin" fit "${job[@]}" --ops "$ops" --out "$tmp/fit.json" >"$tmp/fit.out" 2>"$tmp/fit.err"
rc=$?
cat "$tmp/fit.out"
[ $rc -eq 0 ] || fail "fit --ops: exit $rc: $(cat "$tmp/fit.err")"
grep -q "measured   will-it-scale.2.processes = $ops" "$tmp/fit.out" && grep -q "simulated  will-it-scale.2.processes" "$tmp/fit.out" &&
  grep -q "converged: within 0.50%" "$tmp/fit.out" || fail "fit report: $(cat "$tmp/fit.out")"
grep -q "slubsim: fit mmap2 on small-2s-8c: scale 1 -> " "$tmp/fit.err" || fail "no progress line per simulation"
$py - "$tmp/fit.json" "$ops" "$scale" <<'PY' && ok "fit recovers x$scale" || fail "fit file: $(cat "$tmp/fit.json")"
import json, sys
f = json.load(open(sys.argv[1]))
ops, want = float(sys.argv[2]), float(sys.argv[3])
on = f["fitted_on"]
assert f["workload"] == "mmap2" and f["topology"] == "small-2s-8c", f
assert set(f["parameters"]) == {"mmap_locked_ns", "munmap_locked_ns", "unlocked_ns"}, f
assert on["converged"] and on["nr_task"] == 2 and on["metric"] == "will-it-scale.2.processes", on
assert on["published"] == ops and abs(on["error_pct"]) <= 0.5, on
# Within the search's tolerance (0.5% of the figure) the throughput pins the scale to about as
# much: ops ~ 1 / (s W + slab), so ds/s = dT/T x (1 + slab / (s W)), under 2% here.
assert abs(f["scale"] / want - 1) < 0.02, (f["scale"], want)
for name, base in {"mmap_locked_ns": 1500, "munmap_locked_ns": 1400, "unlocked_ns": 900}.items():
    assert abs(f["parameters"][name] - base * f["scale"]) <= 0.0005 + 1e-9, (name, f)  # to 1 ps
assert f["source"].startswith("slubsim fit:") and "--ops" in f["source"], f
PY

# run --fit takes the file: the same job gives the fit's simulated figure, to the op.
"$bin" run "${job[@]}" --fit "$tmp/fit.json" --quiet >"$tmp/run.json" 2>"$tmp/run.err" || fail "run --fit: $(cat "$tmp/run.err")"
$py - "$tmp/fit.json" "$tmp/run.json" <<'PY' && ok "run --fit gives the fit's figure" || fail "run --fit figure"
import json, sys
f, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert r["will-it-scale.2.processes"] == f["fitted_on"]["simulated"], (r["will-it-scale.2.processes"], f["fitted_on"])
PY
grep -q "note: --fit $tmp/fit.json: the non-slab time x" "$tmp/run.err" || fail "run --fit: no note: $(cat "$tmp/run.err")"
# The table says the non-slab times are the fit's, not placeholders.
"$bin" run "${job[@]}" --fit "$tmp/fit.json" --quiet --table >"$tmp/run.table" 2>/dev/null || fail "run --fit --table"
grep -q "placeholders, not fitted" "$tmp/run.table" && fail "run --fit --table still says placeholders"
grep -q "non-slab time per op (mmap2 parameters, ns): mmap_locked_ns 9" "$tmp/run.table" &&
  grep -q " 0 non-slab times placeholders" "$tmp/run.table" || fail "run --fit --table: $(cat "$tmp/run.table")"

# The same figure from the run's stats.json (task count from its key) and as runtest.py's CSV:
# started at the scale found, each meets it at once, with the same scale.
found=$($py -c 'import json,sys; print(json.load(open(sys.argv[1]))["scale"])' "$tmp/fit.json")
"$bin" fit --topology small-2s-8c --workload mmap2 "${window[@]}" --from "$tmp/measured/stats.json" --start "$found" \
  --out "$tmp/fit-stats.json" --quiet >"$tmp/fit-stats.out" 2>&1 || fail "fit --from stats.json: $(cat "$tmp/fit-stats.out")"
printf 'tasks,processes,processes_idle,threads,threads_idle,linear\n0,0,100,0,100,0\n2,%s,75.00,1,75.00,%s\n' "$ops" "$ops" >"$tmp/mmap2.csv"
"$bin" fit --topology small-2s-8c --workload mmap2 "${window[@]}" --from "$tmp/mmap2.csv" --start "$found" \
  --out "$tmp/fit-csv.json" --quiet >"$tmp/fit-csv.out" 2>&1 || fail "fit --from CSV: $(cat "$tmp/fit-csv.out")"
$py - "$tmp/fit.json" "$tmp/fit-stats.json" "$tmp/fit-csv.json" <<'PY' && ok "--from stats.json and CSV" || fail "--from fits differ"
import json, sys
a, b, c = (json.load(open(p)) for p in sys.argv[1:])
for x in (b, c):
    assert x["scale"] == a["scale"] and x["parameters"] == a["parameters"], (a, x)
    assert x["fitted_on"]["simulations"] == 1 and x["fitted_on"]["nr_task"] == 2, x
assert "stats.json, key will-it-scale.2.processes" in b["source"], b["source"]
assert "runtest.py CSV line 3" in c["source"], c["source"]
PY
# Deterministic: the same command writes the same bytes.
"$bin" fit --topology small-2s-8c --workload mmap2 "${window[@]}" --from "$tmp/measured/stats.json" --start "$found" \
  --out "$tmp/fit-stats2.json" --quiet >/dev/null 2>&1
cmp -s "$tmp/fit-stats.json" "$tmp/fit-stats2.json" || fail "fit is not deterministic"

# A figure the model cannot reach (far above its peak): the file is written, not converged, exit 1.
"$bin" fit "${job[@]}" --ops 1e12 --out "$tmp/far.json" --quiet >"$tmp/far.out" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "unreachable figure: exit $rc, want 1: $(cat "$tmp/far.out")"
grep -q "NOT converged" "$tmp/far.out" || fail "unreachable figure: no NOT converged: $(cat "$tmp/far.out")"
$py -c 'import json,sys; assert json.load(open(sys.argv[1]))["fitted_on"]["converged"] is False' "$tmp/far.json" ||
  fail "unreachable figure: file not written with converged false"

# Bad input: exit 2, a message naming the option, file or field, and no file written.
echo '{"will-it-scale.4.processes": 1000, "will-it-scale.workload": 1000}' >"$tmp/other-row.json"
printf 'tasks,processes,processes_idle,threads,threads_idle,linear\n1,-1,87.5,10,87.5,10\n' >"$tmp/failed.csv"
bad() {  # want-in-message, args...
  local want=$1
  shift
  rm -f "$tmp/bad.json"
  "$bin" fit "$@" --out "$tmp/bad.json" >"$tmp/bad.out" 2>"$tmp/bad.err"
  local rc=$?
  if [ $rc -ne 2 ]; then fail "fit $*: exit $rc, want 2"; return; fi
  grep -qF -- "$want" "$tmp/bad.err" || fail "fit $*: message lacks '$want': $(cat "$tmp/bad.err")"
  [ -e "$tmp/bad.json" ] && fail "fit $*: wrote a file"
  ok "bad input refused: $want"
}
bad "no-such-box" --topology no-such-box --workload mmap2 --nr-task 1 --ops 1000
bad "command line: --ops: is 0" "${job[@]}" --ops 0
bad "command line: --ops: is -5" "${job[@]}" --ops -5
bad "command line: --ops: 'fast' is not a number" "${job[@]}" --ops fast
bad "command line: --nr-task: '9' gives 9 tasks; the machine has 8 CPUs" --topology small-2s-8c --nr-task 9 --ops 1000
bad "other-row.json: will-it-scale.2.processes: no such key" "${job[@]}" --from "$tmp/other-row.json"
bad "failed.csv: line 2 (1 tasks, column processes): is -1" --topology small-2s-8c --from "$tmp/failed.csv"
bad "command line: --nr-task: needed with --ops" --topology small-2s-8c --ops 1000
bad "command line: --ops: give the measured figure as --ops OPS or --from FILE" "${job[@]}"
bad "command line: --topology: needs the machine" --workload mmap2 --nr-task 1 --ops 1000
bad "command line: --parameters: workload 'mmap2' has no parameter 'mmap_lock_ns'" "${job[@]}" --ops 1000 --parameters mmap_lock_ns
bad "command line: --kernel: one kernel" "${job[@]}" --ops 1000 --kernel v6.17,v7.0
bad "nope.json: no such file" "${job[@]}" --from "$tmp/nope.json"
"$bin" fit "${job[@]}" --ops 1000 >/dev/null 2>"$tmp/bad.err"
[ $? -eq 2 ] && grep -q "command line: --out: needs the fit file" "$tmp/bad.err" || fail "fit without --out: $(cat "$tmp/bad.err")"

# run --fit with a fit of another workload, or no such file: exit 2, nothing run or written.
"$bin" run --topology small-2s-8c --workload mmap1 --nr-task 2 "${window[@]}" --fit "$tmp/fit.json" --out "$tmp/r1" \
  >/dev/null 2>"$tmp/bad.err"
[ $? -eq 2 ] && grep -qF "$tmp/fit.json: workload: is 'mmap2'" "$tmp/bad.err" && [ ! -e "$tmp/r1" ] ||
  fail "run --fit of another workload: $(cat "$tmp/bad.err")"
"$bin" run "${job[@]}" --fit "$tmp/nope.json" --out "$tmp/r2" >/dev/null 2>"$tmp/bad.err"
[ $? -eq 2 ] && grep -qF "$tmp/nope.json: no such fit file" "$tmp/bad.err" && [ ! -e "$tmp/r2" ] ||
  fail "run --fit of no file: $(cat "$tmp/bad.err")"

[ $failures -eq 0 ]
