#!/usr/bin/env bash
# End-to-end: every run --table and advise table ends with the model's record on the nearest
# published tables (sim/trust/record.h), and a run table marks kernels of another release.
#  - small-2s-8c: no published table is close ("nothing close was validated").
#  - Turin 2-socket, mmap1, v6.17 against v7.0 at two capacities: the release comparison is
#    2-socket AMD (T01); with --baseline kernel the comparison within v7.0 is a knob on 2-socket
#    AMD (T02's patch step); on a home whose scoreboard lacks T02 it falls back to 1-socket AMD
#    (T03); Turin itself is not validated and its latencies are estimates.
#  - advise: the same record, for knob comparisons, under the table and in advice.md.
# $1 = slubsim binary.
set -uo pipefail
bin=$1
source "$(dirname "$0")/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
short=(--workload mmap1 --nr-task 4 --warmup 12ms --duration 12ms --quiet --table)

"$bin" run --topology small-2s-8c --kernel v6.17,v7.0 "${short[@]}" >"$tmp/small.txt" 2>/dev/null
grep -q "^kernel v7.0: .*(across releases from v6.17)" "$tmp/small.txt" && grep -q "^(across releases): another source tree" "$tmp/small.txt" &&
  ok "across-release variants are marked" || { fail "across-release mark"; cat "$tmp/small.txt"; }
grep -q "^record: the model on the published tables nearest to this question" "$tmp/small.txt" &&
  grep -q "^  kernels of different releases: nothing close was validated" "$tmp/small.txt" &&
  grep -q "^  small-2s-8c: not validated" "$tmp/small.txt" && ok "small-2s-8c: nothing close was validated" ||
  { fail "record on small-2s-8c"; cat "$tmp/small.txt"; }

# Each variant against the first (v6.17): comparisons across releases only; with --baseline
# kernel, v7.0's capacities against v7.0's own: a knob within one kernel only.
"$bin" run --topology amd-turin-2s-512t --kernel v6.17,v7.0 --sheaf-capacity maple_node=32,64 "${short[@]}" \
  >"$tmp/turin.txt" 2>/dev/null
"$bin" run --topology amd-turin-2s-512t --kernel v6.17,v7.0 --sheaf-capacity maple_node=32,64 --baseline kernel \
  "${short[@]}" >"$tmp/turin-own.txt" 2>/dev/null
grep -q "^  a sheaf knob within one kernel on 2-socket AMD: signs [0-9]*/[0-9]*, .*t02-hao-li-per-patch" "$tmp/turin-own.txt" &&
  ! grep -q "^  kernels of different releases" "$tmp/turin-own.txt" &&
  ! grep -q "^  a sheaf knob within one kernel" "$tmp/turin.txt" &&
  grep -q "^  kernels of different releases on 2-socket AMD: signs [0-9]*/[0-9]*, .*t01-hao-li-mmap2" "$tmp/turin.txt" &&
  grep -q "^  amd-turin-2s-512t: not validated .*; [0-9]* of its latencies estimated or copied, 3 non-slab times placeholders" "$tmp/turin.txt" &&
  ok "Turin: the nearest tables for each comparison" || { fail "record on Turin"; cat "$tmp/turin.txt"; }

# The fallback to another socket count: the same question on a home whose scoreboard has no
# 2-socket AMD knob table (T02 taken out) names the 1-socket one.
mkdir -p "$tmp/home"
cp -r "$src/configs" "$src/workloads" "$tmp/home/" && mkdir -p "$tmp/home/results"
"$py" - "$src/results/scoreboard.json" "$tmp/home/results/scoreboard.json" <<'PY' || fail "a scoreboard without T02"
import json, sys
board = json.load(open(sys.argv[1]))
board["experiments"] = [t for t in board["experiments"] if t["id"] != "t02-hao-li-per-patch"]
json.dump(board, open(sys.argv[2], "w"))
PY
"$bin" run --home "$tmp/home" --topology amd-turin-2s-512t --kernel v6.17,v7.0 --sheaf-capacity maple_node=32,64 \
  --baseline kernel "${short[@]}" >"$tmp/turin-fallback.txt" 2>/dev/null
grep -q "^  a sheaf knob within one kernel: none on a 2-socket AMD machine; on 1-socket AMD: signs [0-9]*/[0-9]*, .*t03-amd-mmap2-maple-capacity" "$tmp/turin-fallback.txt" &&
  ok "the record falls back to another socket count" || { fail "record fallback"; cat "$tmp/turin-fallback.txt"; }

# A table with an excluded cell (T12 has two) still counts: its machine was validated.
"$bin" run --topology amd-ryzen7-5700-1s-16t --kernel v6.17 "${short[@]}" \
  >"$tmp/ryzen.txt" 2>/dev/null
grep -q "^  amd-ryzen7-5700-1s-16t: validated in t12-babka-sheaves-microbench (signs [0-9]*/[0-9]*)" "$tmp/ryzen.txt" &&
  ok "a table with excluded cells is in the record" || { fail "record on the Ryzen"; cat "$tmp/ryzen.txt"; }

"$bin" advise --topology small-2s-8c --workload mmap1 --nr-task 4 --capacities 16,64 --max-full-sheaves 20 \
  --max-empty-sheaves 5 --no-bounds --jobs 2 --quiet --out "$tmp/advise" >"$tmp/advise.txt" 2>/dev/null
grep -q "^  a sheaf knob within one kernel: nothing close was validated" "$tmp/advise.txt" &&
  grep -q "^record: " "$tmp/advise/advice.md" && ok "advise: the record under the table and in advice.md" ||
  { fail "record under advise"; cat "$tmp/advise.txt"; }

[ $failures -eq 0 ] && echo "e2e.record: all checks passed"
[ $failures -eq 0 ]
