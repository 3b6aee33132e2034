#!/usr/bin/env bash
# End-to-end: malformed inputs give exit code 2, a message naming the file and field, and no
# output files. $1 = slubsim binary, $2 = tests/data.
set -uo pipefail
bin=$1
data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
n=0

# expect_error "<what the message must contain>" args...
expect_error() {
  local want=$1
  shift
  n=$((n + 1))
  local out="$tmp/out$n"
  "$bin" run --quiet --duration 1ms --warmup 100us --out "$out" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  local rc=$?
  if [ $rc -ne 2 ]; then
    echo "FAIL ($*): exit code $rc, want 2"; cat "$tmp/stderr"; failures=$((failures + 1)); return
  fi
  if ! grep -qF -- "$want" "$tmp/stderr"; then
    echo "FAIL ($*): message lacks '$want':"; cat "$tmp/stderr"; failures=$((failures + 1)); return
  fi
  if [ -e "$out" ]; then
    echo "FAIL ($*): wrote $out"; failures=$((failures + 1)); return
  fi
  echo "ok: $* -> $(head -n1 "$tmp/stderr")"
}

expect_error "missing-field.json: nodes: missing field" --topology "$data/missing-field.json"
expect_error "cpu-in-two-nodes.json: nodes" --topology "$data/cpu-in-two-nodes.json"
expect_error "negative-latency.json: latency_ns.llc.value" --topology "$data/negative-latency.json"
expect_error "bad-cpulist.json: nodes[1].cpus" --topology "$data/bad-cpulist.json"
expect_error "not-json.json: not valid JSON" --topology "$data/not-json.json"
expect_error "unknown preset 'no-such-machine'" --topology no-such-machine
expect_error "--nr-task: '9' gives 9 tasks; the machine has 8 CPUs" --topology small-2s-8c --nr-task 9
expect_error "--nr-task" --topology small-2s-8c --nr-task 4,x
expect_error "unrecognised option '--bogus'" --bogus 1
expect_error "--mode: 'both' is not process or thread" --topology small-2s-8c --mode both
expect_error "--kernel: unknown preset 'v5.0'" --topology small-2s-8c --kernel v5.0
expect_error "--sheaf-capacity" --topology small-2s-8c --sheaf-capacity 0
expect_error "--duration" --topology small-2s-8c --duration 10
expect_error "--interval: must not exceed warm-up plus duration" --topology small-2s-8c --interval 5ms
expect_error 'qspinlock.handoff.value: must be "mcs" or "alpha"' --topology small-2s-8c --set costs.qspinlock.handoff=fast
expect_error "line_residency_us.value: must not be negative" --topology small-2s-8c --set costs.line_residency_us=-1
expect_error "costs.qspinlock.nope: no such parameter" --topology small-2s-8c --set costs.qspinlock.nope=1
expect_error "sched_slice_us.value: must be positive" --topology small-2s-8c --workload mmap2 --kernel v6.17 --set kernel.sched_slice_us.value=0
expect_error "rcu.tick_us: must not be negative" --topology small-2s-8c --workload mmap2 --kernel v6.17 --set costs.rcu.tick_us=-1
expect_error 'rcu.grace_period_model.value: must be "fixed" or "ticks"' --topology small-2s-8c --workload mmap2 --kernel v6.17 --set costs.rcu.grace_period_model=sometimes
expect_error "rcu.batch_time_limit_us: must not be negative" --topology small-2s-8c --workload mmap2 --kernel v6.17 --set costs.rcu.batch_time_limit_us=-1
expect_error "unknown-op.json: program[1].op: unknown op 'sleep'" --topology small-2s-8c --workload "$data/unknown-op.json"
expect_error "undeclared-lock.json: program[0].lock: no lock named 'zone_lock'" --topology small-2s-8c --workload "$data/undeclared-lock.json"
expect_error "no such file" --topology "$data/does-not-exist.json"
expect_error "--patch: unknown patch 'bogus'" --topology small-2s-8c --patch +bogus
expect_error "--sheaf-capacity: cache 'no_such_cache'" --topology small-2s-8c --sheaf-capacity no_such_cache=64
expect_error "caches.maple_node.nope: no such parameter" --topology small-2s-8c --set caches.maple_node.nope=3
expect_error "malformed-ftrace.txt: line 18: kmalloc event without bytes_alloc=" --topology small-2s-8c --workload "ftrace:$data/malformed-ftrace.txt"
expect_error "no-such-trace.txt: --workload: no such file" --topology small-2s-8c --workload "trace:$data/no-such-trace.txt"
expect_error "--trace-map: 'both' is not replicated or mapped" --topology small-2s-8c --workload "ftrace:$data/../../workloads/traces/sample-ftrace.txt" --trace-map both
expect_error "--nr-task: 4 tasks, but the trace has 2 CPUs" --topology small-2s-8c --workload "ftrace:$data/../../workloads/traces/sample-ftrace.txt" --trace-map mapped --nr-task 4

echo "$((n - failures)) passed, $failures failed"
[ $failures -eq 0 ]
