#!/usr/bin/env bash
# End-to-end: slubsim import (sim/machine/hwloc_import.h).
#  - An lstopo XML of a large machine imports to a topology `run --topology FILE` accepts, its
#    latency classes marked as copied from the named preset, with the preset's ranges (slubsim
#    inputs: kind copied).
#  - This machine through libhwloc and through tools/import-topology.py (lscpu, the fallback)
#    give the same layout: sockets, nodes, cores, LLC domains.
#  - Bad XML, a missing file or a missing option: FILE: what is wrong, exit 2, no output file.
# $1 = slubsim binary, $2 = the source tree.
set -uo pipefail
bin=$1
src=$2
source "$(dirname "$0")/lib.sh"
data="$src/tests/data/hwloc"

"$bin" import --hwloc "$data/amd-epyc-2s-192c-4n.xml" --latencies-from amd-epyc-2s-192c-4n --name epyc \
  --out "$tmp/epyc.json" 2>"$tmp/epyc.err" && ok "import --hwloc: written" || { fail "import --hwloc"; cat "$tmp/epyc.err"; }
"$bin" run --topology "$tmp/epyc.json" --workload mmap1 --nr-task 2 --warmup 12ms --duration 12ms --quiet >/dev/null 2>&1 &&
  ok "run --topology accepts the imported file" || fail "run on the imported topology"
grep -q '"source": "copied from preset amd-epyc-2s-192c-4n: ' "$tmp/epyc.json" && ok "latencies marked as copied" ||
  fail "latencies not marked"
"$bin" inputs --topology "$tmp/epyc.json" --workload mmap2 --json >"$tmp/inputs.json" 2>"$tmp/inputs.err" &&
  "$py" - "$tmp/inputs.json" "$src/configs/topologies/amd-epyc-2s-192c-4n.json" <<'PY' &&
import json, sys
d = json.load(open(sys.argv[1]))
preset = json.load(open(sys.argv[2]))
got = {i["name"]: i for i in d["inputs"]}
for c, v in preset["latency_ns"].items():
    i = got["topology.latency_ns." + c]
    assert i["kind"] == "copied" and i["value"] == v["value"], i
    assert i.get("range") == v.get("range"), (i, v)
    if "range" in v:
        assert i["range_source"] == "preset amd-epyc-2s-192c-4n's: " + v.get("range_source", "the range its source states"), i
PY
  ok "slubsim inputs: copied latencies, the preset's ranges" || { fail "inputs on the import"; cat "$tmp/inputs.err"; }

# This machine: libhwloc against the lscpu importer.
if lscpu -p=CPU,CORE,SOCKET,NODE,CACHE >"$tmp/host.lscpu" 2>/dev/null; then
  "$bin" import --this-machine --latencies-from small-2s-8c --name here --out "$tmp/hwloc.json" 2>/dev/null ||
    fail "import --this-machine"
  # A VM's lscpu may print no cache column: then the LLC domains are not compared.
  llc=L3
  grep -q "^# CPU,Core,Socket,Node,Cache" "$tmp/host.lscpu" || llc=socket
  "$py" "$src/tools/import-topology.py" --lscpu "$tmp/host.lscpu" --latencies-from small-2s-8c --name here \
    --memory-gb-per-node 1 --llc $llc -o "$tmp/lscpu.json" 2>/dev/null || fail "tools/import-topology.py on this machine"
  LLC=$llc "$py" - "$tmp/hwloc.json" "$tmp/lscpu.json" <<'PY' && ok "this machine: hwloc and lscpu agree on the layout" || fail "hwloc and lscpu differ"
import json, sys
def cpus(t):
    out = []
    for p in t.split(","):
        a, _, b = p.partition("-")
        out += range(int(a), int(b or a) + 1)
    return out
def layout(f):
    d = json.load(open(f))
    n = sum(len(cpus(s["cpus"])) for s in d["sockets"])
    smt = d["smt"]
    if "cores" in smt:
        cores = sorted(tuple(cpus(c)) for c in smt["cores"])
    else:
        t, off = smt["threads_per_core"], smt.get("sibling_offset", 0)
        cores = sorted(tuple(c + k * off for k in range(t)) for c in range(n // t))
    llc = d["llc"]
    if "domains" in llc:
        doms = sorted(tuple(cpus(x)) for x in llc["domains"])
    else:
        per, doms, cur = llc["cores_per_domain"], [], []
        for c in cores:
            cur += c
            if len(cur) == per * len(c):
                doms.append(tuple(sorted(cur))); cur = []
        doms = sorted(doms)
    return (sorted(tuple(cpus(s["cpus"])) for s in d["sockets"]), sorted(tuple(cpus(x["cpus"])) for x in d["nodes"]), cores, doms)
import os
a, b = layout(sys.argv[1]), layout(sys.argv[2])
keep = 4 if os.environ["LLC"] == "L3" else 3
assert a[:keep] == b[:keep], (a, b)
PY
fi

# Bad input.
printf '<topology><object type="Machine">' >"$tmp/bad.xml"
"$bin" import --hwloc "$tmp/bad.xml" --latencies-from small-2s-8c --name bad --out "$tmp/bad.json" 2>"$tmp/bad.err"
rc=$?
[ $rc -eq 2 ] && grep -q "bad.xml: not an hwloc XML topology" "$tmp/bad.err" && [ ! -e "$tmp/bad.json" ] &&
  ok "bad XML: exit 2, named, nothing written" || { fail "bad XML: exit $rc"; cat "$tmp/bad.err"; }
"$bin" import --hwloc "$data/amd-epyc-2s-192c-4n.xml" --name x --out "$tmp/x.json" 2>"$tmp/nolat.err"
[ $? -eq 2 ] && grep -q -- "--latencies-from" "$tmp/nolat.err" && [ ! -e "$tmp/x.json" ] &&
  ok "no --latencies-from: exit 2" || fail "missing --latencies-from"

[ $failures -eq 0 ] && echo "e2e.import_hwloc: all checks passed"
[ $failures -eq 0 ]
