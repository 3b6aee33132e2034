#!/usr/bin/env bash
# End-to-end: a run ends in bounded time whatever the program does.
#  - A program that frees from a pool nothing fills (slub-bulk-bench without its alloc_bulk) is
#    refused when it is read, naming the step's field; one whose filling step is limited to
#    another kernel is refused for that kernel; a program whose iterations take no simulated time
#    stops with an error. Each exits 2 under `timeout` and leaves no result directory.
#  - SIGTERM during a long point is acknowledged at once on stderr; the point is abandoned once
#    the grace period (sim/run/stop.h, 10 s) has run out, and the job exits 143 saying how to
#    resume, with no point stored.
# $1 = slubsim binary, $2 = the source tree.
set -uo pipefail
bin=$1
src=$2
source "$(dirname "$0")/lib.sh"
cd "$src"

python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
w = json.load(open("workloads/slub-bulk-bench.json"))
free_only = dict(w, program=[w["program"][1]])
json.dump(free_only, open(f"{tmp}/free-only.json", "w"))
other = json.loads(json.dumps(w))
other["program"][0]["kernels"] = ["v7.0"]
json.dump(other, open(f"{tmp}/fill-on-v7.0.json", "w"))
json.dump({"name": "zero", "description": "an iteration of no time", "source": "test", "ops_per_iteration": 1,
           "program": [{"op": "work", "ns": 0}]}, open(f"{tmp}/zero.json", "w"))
PY

expect_refused() {  # name, grep pattern, args...
  local name=$1 pattern=$2
  shift 2
  timeout 60 "$bin" run --topology small-2s-8c --nr-task 2 --out "$tmp/out-$name" "$@" 2>"$tmp/$name.err"
  local rc=$?
  [ $rc -eq 2 ] && ok "$name: exit 2" || { fail "$name: exit $rc, want 2 (124: it hung)"; cat "$tmp/$name.err"; }
  grep -q -- "$pattern" "$tmp/$name.err" && ok "$name: says why" || { fail "$name: message"; cat "$tmp/$name.err"; }
  [ ! -e "$tmp/out-$name" ] && ok "$name: no result directory" || fail "$name: $tmp/out-$name was left"
}
for k in v6.17 v7.0; do
  expect_refused "free-only-$k" "program\[0\].pool: frees from pool 'batch', which no step of the program allocates into" \
    --workload "$tmp/free-only.json" --kernel $k
done
expect_refused fill-on-other-kernel "with kernel v6.17 .* frees from pool 'batch'" \
  --workload "$tmp/fill-on-v7.0.json" --kernel v6.17
expect_refused zero-time "an iteration of the program takes no simulated time" --workload "$tmp/zero.json"

# A point far longer than the grace period (512 tasks, settled: tens of seconds).
"$bin" run --topology amd-turin-2s-512t --workload mmap1 --kernel v6.17 --nr-task 512 --jobs 1 \
  --out "$tmp/long" 2>"$tmp/long.err" &
pid=$!
sleep 3  # the job is read and the handlers installed in well under a second, even under ASan
start=$(date +%s.%N)
kill -TERM $pid
sleep 1
grep -q "stopping after the 1 point(s) in flight" "$tmp/long.err" && ok "SIGTERM: acknowledged at once" \
  || { fail "SIGTERM: no acknowledgement within 1 s"; cat "$tmp/long.err"; }
for _ in $(seq 1 300); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
if kill -0 $pid 2>/dev/null; then
  fail "SIGTERM: still running 31 s after the signal"
  kill -KILL $pid
fi
wait $pid
rc=$?
took=$(python3 -c "import time; print(round(time.time() - $start, 1))")
[ $rc -eq 143 ] && ok "SIGTERM: exit 143 after ${took} s" || { fail "SIGTERM: exit $rc after ${took} s"; cat "$tmp/long.err"; }
grep -q "interrupted: 0 of 1 points .*--resume" "$tmp/long.err" && ok "SIGTERM: the point was abandoned, resume hint" \
  || { fail "SIGTERM: no resume hint"; cat "$tmp/long.err"; }
[ "$(ls "$tmp/long/points" | grep -c '^v.*\.json$')" -eq 0 ] && ok "SIGTERM: no abandoned point stored" \
  || fail "SIGTERM: a point was stored"
[ $failures -eq 0 ]
