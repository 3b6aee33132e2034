#!/usr/bin/env bash
# End-to-end: tools/whatif-transfers.py writes a what-if home whose chosen topologies price their
# core-to-core transfers at a multiple of the measured figures, and slubsim runs on it.
# $1 = slubsim binary, $2 = source tree.
set -uo pipefail
bin=$1
src=$2
tool="$src/tools/whatif-transfers.py"
. "$(dirname "$0")/lib.sh"

topo=amd-epyc-2s-192c-4n
home="$tmp/half"
"$py" "$tool" "$home" --scale 'amd-*=0.5' --scale 'amd-ryzen*=1' --from "$src" >"$tmp/out" ||
  { fail "the tool failed: $(cat "$tmp/out")"; exit 1; }
grep -q "^$topo: transfers x0.5$" "$tmp/out" && ok "names what it scaled" || fail "output: $(cat "$tmp/out")"

# Transfer classes halved, ranges widened to hold them; DRAM untouched; sources say what-if.
check=$("$py" - "$src/configs/topologies/$topo.json" "$home/configs/topologies/$topo.json" \
  "$src/configs/topologies/amd-ryzen7-5700-1s-16t.json" "$home/configs/topologies/amd-ryzen7-5700-1s-16t.json" <<'EOF'
import json, sys
a, b, ra, rb = (json.load(open(p)) for p in sys.argv[1:5])
bad = []
for k in ["llc", "socket_local_home", "socket_remote_home", "cross_socket"]:
    x, y = a["latency_ns"][k], b["latency_ns"][k]
    if abs(y["value"] - x["value"] / 2) > 1e-9: bad.append(f"{k} {x['value']} -> {y['value']}")
    if not y["range"][0] <= y["value"] <= y["range"][1]: bad.append(f"{k} range {y['range']}")
    if not y["source"].startswith("WHAT-IF"): bad.append(f"{k} source")
for k in ["dram_local", "dram_remote"]:
    if a["latency_ns"][k] != b["latency_ns"][k]: bad.append(f"{k} changed")
if ra["latency_ns"]["llc"]["value"] != rb["latency_ns"]["llc"]["value"]: bad.append("the last --scale did not win")
print("; ".join(bad) or "same")
EOF
)
[ "$check" = same ] && ok "transfers x0.5, ranges hold them, DRAM as it was, the last --scale wins" || fail "$check"
[ -d "$home/fits" ] && [ -z "$(ls -A "$home/fits")" ] && ok "an empty fits/" || fail "no empty fits/"

# The scaled machine runs, and a contended lock is faster on it (cheaper hand-offs).
rate() {  # rate TOPOLOGY: a stand-in lock contended by 96 tasks on node 0 and node 1
  "$bin" run --topology "$1" --workload lock-standin --nr-task 96 --duration 12ms --warmup 12ms --quiet 2>/dev/null |
    "$py" -c 'import json,sys; print(json.load(sys.stdin)["will-it-scale.96.processes"])'
}
base=$(rate "$topo") || fail "run on the preset"
half=$(rate "$home/configs/topologies/$topo.json") || fail "run on the what-if topology"
"$py" -c "import sys; sys.exit(0 if float('$half') > 1.05 * float('$base') else 1)" &&
  ok "the lock runs faster at half the transfer price ($base -> $half)" || fail "no faster: $base -> $half"

# Deterministic: the same inputs give the same bytes.
"$py" "$tool" "$tmp/again" --scale 'amd-*=0.5' --scale 'amd-ryzen*=1' --from "$src" >/dev/null &&
  diff -r "$home" "$tmp/again" >/dev/null && ok "deterministic" || fail "two homes differ"

# Bad input: exit 2, a message naming what is wrong, nothing written.
expect_error() {  # expect_error "<message part>" args...
  local want=$1; shift
  local err rc
  err=$("$py" "$tool" "$@" 2>&1 >/dev/null); rc=$?
  [ $rc -eq 2 ] && grep -q -- "$want" <<<"$err" && ok "refused: $want" || fail "rc $rc, message: $err"
}
expect_error "already exists" "$home" --scale 'amd-*=0.5' --from "$src"
expect_error "no topology" "$tmp/bad1" --scale 'zzz-*=2' --from "$src"
expect_error "positive finite" "$tmp/bad2" --scale 'amd-*=0' --from "$src"
expect_error "not a number" "$tmp/bad3" --scale 'amd-*=x' --from "$src"
expect_error "GLOB=FACTOR" "$tmp/bad4" --scale 'amd' --from "$src"
expect_error "required" "$tmp/bad5" --from "$src"
[ ! -e "$tmp/bad1" ] && [ ! -e "$tmp/bad2" ] && [ -z "$(ls -A "$tmp" | grep '^\.whatif-')" ] &&
  ok "nothing left behind" || fail "a partial home left behind"

[ $failures -eq 0 ]
