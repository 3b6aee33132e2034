#!/usr/bin/env bash
# End-to-end: tools/import-topology.py turns lscpu / sysfs samples into topologies that slubsim
# loads and runs, the preset's latencies copied with their ranges (slubsim inputs: kind copied);
# malformed input gives exit code 2, a message naming file and line, no output.
# $1 = slubsim binary, $2 = tests/data/import.
set -uo pipefail
bin=$1
data=$2
tool="$(dirname "$0")/../../tools/import-topology.py"
. "$(dirname "$0")/lib.sh"

run_sim() {  # the imported file loads and runs
  if "$bin" run --topology "$1" --workload lock-standin --nr-task 1,8 --duration 1ms --quiet --validate >"$tmp/sim.json" 2>"$tmp/sim.err" &&
     "$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["will-it-scale.8.processes"] > 0' "$tmp/sim.json"; then
    ok "slubsim runs $(basename "$1")"
  else
    fail "slubsim on $1: $(cat "$tmp/sim.err")"
  fi
}

# 1. Hao Li's box from lscpu -p=CPU,CORE,SOCKET,NODE,CACHE: the same layout as the hand-written preset.
if "$py" "$tool" --lscpu "$data/hao-li-2s-192c-4n.lscpu" --memory-gb-per-node 384 \
     --latencies-from amd-epyc-2s-192c-4n --name hao-li -o "$tmp/hao.json" >/dev/null; then
  "$py" - "$tmp/hao.json" "$(dirname "$0")/../../configs/topologies/amd-epyc-2s-192c-4n.json" <<'PY' && ok "lscpu import = amd-epyc-2s-192c-4n layout" || fail "lscpu import layout"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["name"] == "hao-li", a["name"]
for k in ("sockets", "nodes", "smt"):
    assert a[k] == b[k], (k, a[k], b[k])
# The LLC's size and hit are the preset's, marked as copied (lscpu -p gives neither).
assert {k: v for k, v in a["llc"].items() if k not in ("size_kb", "hit_ns")} == \
       {k: v for k, v in b["llc"].items() if k not in ("size_kb", "hit_ns")}, (a["llc"], b["llc"])
for k in ("size_kb", "hit_ns"):
    assert a["llc"][k]["value"] == b["llc"][k]["value"], k
    assert a["llc"][k]["source"].startswith("copied from preset amd-epyc-2s-192c-4n"), k
for c, v in b["latency_ns"].items():
    assert a["latency_ns"][c]["value"] == v["value"], c
    assert a["latency_ns"][c]["source"].endswith(v["source"]), c
# Each copy keeps the preset's range, its source naming the preset (as slubsim import writes it).
copies = [(a["latency_ns"][c], v) for c, v in b["latency_ns"].items()]
copies += [(a["smt_private_work_factor"], b["smt_private_work_factor"])]
copies += [(a["llc"][k], b["llc"][k]) for k in ("size_kb", "hit_ns")]
for x, v in copies:
    assert x["source"].startswith("copied from preset amd-epyc-2s-192c-4n"), x
    assert x.get("range") == v.get("range"), (x, v)
    if "range" in v:
        want = v.get("range_source", "the range its source states")
        assert x["range_source"] == "preset amd-epyc-2s-192c-4n's: " + want, x
    else:
        assert "range_source" not in x, x
assert "node_distance" not in a
PY
  run_sim "$tmp/hao.json"
  "$bin" inputs --topology "$tmp/hao.json" --workload mmap2 --json >"$tmp/inputs.json" 2>"$tmp/inputs.err" &&
  "$py" - "$tmp/inputs.json" <<'PY' && ok "slubsim inputs: the copies are kind copied, the preset's estimates with ranges" ||
import json, sys
d = json.load(open(sys.argv[1]))
lat = [i for i in d["inputs"] if i["name"].startswith("topology.latency_ns.")]
assert len(lat) == 8, lat
for i in lat:
    assert i["kind"] == "copied", i
    if "estimate" in i["source"]:
        assert "range" in i and i["range_source"].startswith("preset amd-epyc-2s-192c-4n's: "), i
PY
    fail "slubsim inputs on the import: $(cat "$tmp/inputs.err")"
else
  fail "lscpu import exited $?"
fi
"$py" "$tool" --lscpu "$data/hao-li-2s-192c-4n.lscpu" --memory-gb-per-node 384 \
  --latencies-from amd-epyc-2s-192c-4n --name hao-li -o "$tmp/hao2.json" >/dev/null
cmp -s "$tmp/hao.json" "$tmp/hao2.json" && ok "deterministic" || fail "two imports differ"

# 2. A sysfs copy: SMT siblings, memory from meminfo, SLIT distances, a memory-only node dropped.
if "$py" "$tool" --sysfs "$data/sysfs-small-2s-8t" --latencies-from small-2s-8c -o "$tmp/sysfs.json" >/dev/null 2>"$tmp/err"; then
  "$py" - "$tmp/sysfs.json" <<'PY' && ok "sysfs import layout" || fail "sysfs import layout"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["name"] == "sysfs"
assert [n["cpus"] for n in d["nodes"]] == ["0-1,4-5", "2-3,6-7"], d["nodes"]
assert [n["memory_mb"] for n in d["nodes"]] == [32000, 32000]
assert d["smt"] == {"threads_per_core": 2, "sibling_offset": 4}, d["smt"]
assert d["llc"]["cores_per_domain"] == 2, d["llc"]
assert d["llc"]["size_kb"]["value"] == 8192 and "copied from preset small-2s-8c" in d["llc"]["size_kb"]["source"], d["llc"]
assert d["node_distance"] == [[10, 32], [32, 10]]
assert "node2 dropped" in d["source"]
PY
  grep -q "warning: smt:" "$tmp/err" && ok "placeholder latency warned about" || fail "no warning for small-2s-8c's unused smt figure"
  run_sim "$tmp/sysfs.json"
else
  fail "sysfs import: $(cat "$tmp/err")"
fi

# tools/copy-sysfs.sh copies what the import reads (here from the sample instead of /sys).
bash "$(dirname "$0")/../../tools/copy-sysfs.sh" "$tmp/copy" "$data/sysfs-small-2s-8t" >/dev/null &&
  "$py" "$tool" --sysfs "$tmp/copy" --latencies-from small-2s-8c --name sysfs -o "$tmp/copy.json" >/dev/null 2>&1 &&
  cmp -s <(grep -v '"source"\|"description"' "$tmp/copy.json") <(grep -v '"source"\|"description"' "$tmp/sysfs.json") &&
  ok "copy-sysfs.sh round trip" || fail "copy-sysfs.sh round trip"

# 3. Plain `lscpu -p` (caches after an empty column) with the sysfs copy for memory and distances.
if "$py" "$tool" --lscpu "$data/small-2s-8t.lscpu" --sysfs "$data/sysfs-small-2s-8t" \
     --latencies-from small-2s-8c --name sysfs -o "$tmp/both.json" >/dev/null 2>&1; then
  "$py" - "$tmp/both.json" "$tmp/sysfs.json" <<'PY' && ok "lscpu -p + sysfs = sysfs alone" || fail "lscpu -p + sysfs layout"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for k in ("sockets", "nodes", "smt", "llc", "node_distance", "latency_ns"):
    assert a[k] == b[k], k
PY
  run_sim "$tmp/both.json"
else
  fail "lscpu -p + sysfs import exited $?"
fi

# 4. Malformed input: exit code 2, the message names the file and line or field, no output file.
expect_error() {  # expect_error "<message part>" args...
  local want=$1
  shift
  local out="$tmp/bad.json"
  rm -f "$out"
  "$py" "$tool" "$@" -o "$out" >"$tmp/stdout" 2>"$tmp/stderr"
  local rc=$?
  if [ $rc -ne 2 ]; then fail "($*) exit code $rc, want 2: $(cat "$tmp/stderr")"; return; fi
  if ! grep -qF -- "$want" "$tmp/stderr"; then fail "($*) message lacks '$want': $(cat "$tmp/stderr")"; return; fi
  if [ -e "$out" ] || ls "$tmp"/.import-topology.* >/dev/null 2>&1; then fail "($*) wrote output"; return; fi
  ok "$(head -n1 "$tmp/stderr")"
}
sed '25s/.*/18,18,0,x,18:18:18:2/' "$data/hao-li-2s-192c-4n.lscpu" >"$tmp/bad-node.lscpu"
expect_error "bad-node.lscpu: line 25: Node 'x' is not a number" \
  --lscpu "$tmp/bad-node.lscpu" --memory-gb-per-node 384 --latencies-from amd-epyc-2s-192c-4n
sed '25s/,[^,]*$//' "$data/hao-li-2s-192c-4n.lscpu" >"$tmp/short.lscpu"
expect_error "short.lscpu: line 25: 4 fields, the header has 5" \
  --lscpu "$tmp/short.lscpu" --memory-gb-per-node 384 --latencies-from amd-epyc-2s-192c-4n
sed '20d' "$data/hao-li-2s-192c-4n.lscpu" >"$tmp/gap.lscpu"
expect_error "CPU 13 is missing" --lscpu "$tmp/gap.lscpu" --memory-gb-per-node 384 --latencies-from amd-epyc-2s-192c-4n
printf 'hello\n' >"$tmp/not-lscpu.txt"
expect_error "not-lscpu.txt: line 1: data before the '# CPU,Core,...' header line" \
  --lscpu "$tmp/not-lscpu.txt" --latencies-from small-2s-8c
expect_error "--memory-gb-per-node: node 0 has no MemTotal" --lscpu "$data/hao-li-2s-192c-4n.lscpu" --latencies-from small-2s-8c
expect_error "--latencies-from: no preset or file 'no-such-part'" \
  --lscpu "$data/hao-li-2s-192c-4n.lscpu" --memory-gb-per-node 1 --latencies-from no-such-part
expect_error "required: --latencies-from" --lscpu "$data/hao-li-2s-192c-4n.lscpu"
cp -r "$data/sysfs-small-2s-8t" "$tmp/sysfs-bad"
echo "10 33 20" >"$tmp/sysfs-bad/node/node0/distance"
expect_error "sysfs-bad/node/node0/distance: the distance to node1 is 33 but node1's to node0 is 32" \
  --sysfs "$tmp/sysfs-bad" --latencies-from small-2s-8c
cp -r "$data/sysfs-small-2s-8t" "$tmp/sysfs-other"
echo "0-1,4" >"$tmp/sysfs-other/node/node0/cpulist"
echo "2-3,5-7" >"$tmp/sysfs-other/node/node1/cpulist"
expect_error "and --sysfs $tmp/sysfs-other: nodes differ" \
  --lscpu "$data/small-2s-8t.lscpu" --sysfs "$tmp/sysfs-other" --latencies-from small-2s-8c

echo "import_topology: $failures failed"
[ $failures -eq 0 ]
