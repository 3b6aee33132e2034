#!/usr/bin/env bash
# End-to-end: the binary's main paths. $1 = slubsim binary.
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# The embedded default job prints a table.
"$bin" --help >/dev/null
help=$("$bin" run --help)
for opt in --topology --workload --mode --nr-task --kernel --sheaf-capacity --set --runs --seed --duration --warmup --out --jobs --validate; do
  grep -q -- "$opt" <<<"$help" || fail "run --help lacks $opt"
done

args=(run --topology small-2s-8c --workload lock-standin --nr-task 1,4,8 --duration 2ms --warmup 200us --quiet --validate)
"$bin" "${args[@]}" > "$tmp/stdout.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["will-it-scale.8.processes"] > 0, d' "$tmp/stdout.json" \
  || fail "stdout is not lkp JSON"

# --out writes stats.json and matrix.json; the same seed twice gives identical bytes.
"$bin" "${args[@]}" --runs 2 --out "$tmp/a"
"$bin" "${args[@]}" --runs 2 --out "$tmp/b" --jobs 1
cmp "$tmp/a/stats.json" "$tmp/b/stats.json" || fail "stats.json differs between identical runs"
cmp "$tmp/a/matrix.json" "$tmp/b/matrix.json" || fail "matrix.json differs between identical runs"
python3 - "$tmp/a" <<'PY'
import json, sys, math
d = sys.argv[1]
stats = json.load(open(d + "/stats.json"))
matrix = json.load(open(d + "/matrix.json"))
rows = [1, 4, 8]
for k in ("will-it-scale.per_process_ops", "will-it-scale.workload"):
    assert k in stats, k
for r in range(2):
    per = [matrix[f"will-it-scale.{n}.processes"][r] / n for n in rows]
    assert matrix["will-it-scale.per_process_ops"][r] == math.floor(sum(per) / len(per))
    assert matrix["will-it-scale.workload"][r] == sum(matrix[f"will-it-scale.{n}.processes"][r] for n in rows)
assert all(len(v) == 2 for v in matrix.values())
assert "lock_stat.node_lock.acquisitions" in stats
PY

# Thread mode uses the threads keys.
thread=$("$bin" run --topology small-2s-8c --workload rwsem-standin --mode thread --nr-task 8 --duration 1ms --warmup 100us --quiet --validate)
grep -q '"will-it-scale.8.threads"' <<<"$thread" || fail "thread mode keys"

# A kernel and capacity sweep writes one directory per variant.
# A kernel without sheaves (6.17) runs once, and the job says so.
"$bin" "${args[@]}" --kernel v6.17,v7.0 --sheaf-capacity 32,64 --out "$tmp/sweep" 2>"$tmp/sweep.err"
for v in v6.17 v7.0_sheaf_capacity=32 v7.0_sheaf_capacity=64; do
  [ -f "$tmp/sweep/$v/stats.json" ] || fail "missing $v"
done
n=$(ls "$tmp/sweep" | grep -c '^v')
[ "$n" -eq 3 ] || fail "$n variant directories, want 3 (v6.17 once): $(ls "$tmp/sweep")"
grep -q "note: v6.17 has no sheaves for the caches --sheaf-capacity names: it runs once" "$tmp/sweep.err" \
  || fail "no note that v6.17 runs once: $(cat "$tmp/sweep.err")"

# A one-cache capacity sweep on a sheaves kernel, with patches switched from the command line.
"$bin" run --topology small-2s-8c --workload sheaf-burst --kernel v7.0 --nr-task 8 --duration 1ms --warmup 100us --quiet --validate \
  --sheaf-capacity maple_node=32,128 --patch -spare-sheaf --patch +skip-freelist --out "$tmp/caps"
grep -q '"slub_stats.maple_node.sheaf_refill"' "$tmp/caps/v7.0_sheaf_capacity=maple_node=32/stats.json" \
  || fail "no sheaf refills at capacity 32"
[ -f "$tmp/caps/v7.0_sheaf_capacity=maple_node=128/stats.json" ] || fail "no result for capacity 128"

# 0-day style compare of two result directories.
cmp_out=$(python3 "$(dirname "$0")/../../tools/compare.py" "$tmp/sweep/v6.17" "$tmp/sweep/v7.0_sheaf_capacity=32" --all)
grep -q "%change" <<<"$cmp_out" || fail "compare has no %change column"
grep -q "will-it-scale.per_process_ops" <<<"$cmp_out" || fail "compare lacks per_process_ops"
# A trace replay: the sample ftrace file, replicated over 8 tasks, with its summary on stderr.
sample="$(dirname "$0")/../../workloads/traces/sample-ftrace.txt"
"$bin" run --topology small-2s-8c --workload "ftrace:$sample" --nr-task 2,8 --duration 2ms --warmup 500us \
  --validate > "$tmp/trace.json" 2> "$tmp/trace.err"
grep -q "451 events (228 alloc, 223 free, 0 kfree_rcu) on 2 CPUs" "$tmp/trace.err" || fail "no trace summary: $(cat "$tmp/trace.err")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["will-it-scale.8.processes"] > 3 * d["will-it-scale.2.processes"] > 0, d; assert d["slub_stats.skbuff_head_cache.free_slowpath"] > 0, d' \
  "$tmp/trace.json" || fail "trace replay output"
# slabinfo as /proc/slabinfo counts it: objects waiting for a grace period are active.
"$bin" run --topology small-2s-8c --workload mmap1 --kernel v7.0 --nr-task 8 --duration 4ms --warmup 4ms --quiet \
  > "$tmp/slabinfo.json" || fail "mmap1 run for slabinfo"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); a=d["slabinfo.maple_node.active_objs"]; n=d["slabinfo.maple_node.num_objs"]; r=d["slab_objects.maple_node.rcu"]; f=d.get("slab_objects.maple_node.node_partial_free", 0); assert r > 0 and a >= r and abs(a - (n - f)) < 1, (a, n, r, f)' \
  "$tmp/slabinfo.json" || fail "slabinfo active_objs does not count objects waiting for RCU: $(grep -E 'maple_node.(active|num)_objs|maple_node.rcu\"' "$tmp/slabinfo.json")"
# The table names what it simulated: the non-slab time (placeholders said so), each kernel's sheaf
# capacities (7.0's automatic ones marked), and with --runs N lkp's %stddev beside the ±95%.
"$bin" run --topology small-2s-8c --workload mmap1 --kernel v6.17,v7.0 --nr-task 4 --runs 2 --table \
  > "$tmp/described.txt" 2>/dev/null || fail "run --table for the description"
grep -q "^non-slab time per op (mmap1 parameters, ns): mmap_locked_ns 1500" "$tmp/described.txt" \
  && grep -q "placeholders, not fitted to small-2s-8c" "$tmp/described.txt" \
  && grep -q "^kernel v6.17: no sheaves" "$tmp/described.txt" \
  && grep -q "^kernel v7.0: sheaf capacity vm_area_struct [0-9]* (automatic), maple_node 32" "$tmp/described.txt" \
  && grep -q "±95%   %stddev" "$tmp/described.txt" || { fail "the table does not say what it simulated"; cat "$tmp/described.txt"; }
# slubsim inputs: the catalogue of uncertain inputs, as a table and as JSON; a bad preset exits 2.
"$bin" inputs --topology amd-turin-2s-512t --workload mmap1 --kernel v7.0 >"$tmp/inputs.txt" 2>&1 \
  && grep -Eq "^topology.latency_ns.llc +27 ns +20-33 ns estimate" "$tmp/inputs.txt" \
  && grep -Eq "^workload.parameters.unlocked_ns +900 ns .* placeholder" "$tmp/inputs.txt" \
  && ! grep -q "batch_limit" "$tmp/inputs.txt" || { fail "slubsim inputs table"; cat "$tmp/inputs.txt"; }
"$bin" inputs --topology amd-turin-2s-512t --workload mmap1 --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["topology"] == "amd-turin-2s-512t" and len(d["inputs"]) > 20, d
assert all(x["range_source"] for x in d["inputs"] if "range" in x)' || fail "slubsim inputs --json"
rc=0; "$bin" inputs --topology amd-turin-2s-51 --workload mmap1 >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "inputs: a bad preset must exit 2, got $rc"
# --version, and the same in host.json.
"$bin" --version | grep -Eq '^slubsim [0-9]+\.[0-9]+\.[0-9]+ \(commit [0-9a-z.-]+\)$' || fail "--version: $("$bin" --version)"
"$bin" run --topology small-2s-8c --nr-task 2 --duration 2ms --warmup 2ms --quiet --out "$tmp/ver" 2>/dev/null || fail "run for host.json"
grep -q '"sim.version": "[0-9]' "$tmp/ver/host.json" || fail "host.json has no sim.version"
help=$("$bin" run --help)
for opt in --trace-map --trace-speed ftrace:FILE; do
  grep -q -- "$opt" <<<"$help" || fail "run --help lacks $opt"
done
echo "e2e.cli: all checks passed"
