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


cfg="$data/../../configs"
wl="$data/../../workloads"
# mutated SRC NAME PY: $tmp/NAME.json, SRC's JSON with the Python statement PY applied to it (d).
mutated() {
  python3 - "$1" "$tmp/$2.json" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
open(sys.argv[2], "w").write(json.dumps(d, indent=1))
PY
  echo "$tmp/$2.json"
}
# overflowed SRC NAME: $tmp/NAME.json, SRC with its first number after '"value": ' made 1e99999.
overflowed() {
  sed '0,/"value": [0-9][0-9.]*/s//"value": 1e99999/' "$1" > "$tmp/$2.json"
  echo "$tmp/$2.json"
}
# expect_validate_error "<message part>" args...: as expect_error, for 'slubsim validate'.
expect_validate_error() {
  local want=$1
  shift
  n=$((n + 1))
  local out="$tmp/out$n"
  "$bin" validate --quiet --out "$out" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  local rc=$?
  if [ $rc -ne 2 ] || ! grep -qF -- "$want" "$tmp/stderr" || [ -e "$out" ]; then
    echo "FAIL (validate $*): exit code $rc (want 2), message or files:"; cat "$tmp/stderr"
    failures=$((failures + 1)); return
  fi
  echo "ok: validate $* -> $(head -n1 "$tmp/stderr")"
}

expect_error "missing-field.json: nodes: missing field" --topology "$data/missing-field.json"
expect_error "cpu-in-two-nodes.json: nodes" --topology "$data/cpu-in-two-nodes.json"
expect_error "negative-latency.json: latency_ns.llc.value" --topology "$data/negative-latency.json"
expect_error "bad-cpulist.json: nodes[1].cpus" --topology "$data/bad-cpulist.json"
expect_error "latency-range-outside.json: latency_ns.dram_local.range: needs low <= value (110) <= high" --topology "$data/latency-range-outside.json"
expect_error "not-json.json: not valid JSON" --topology "$data/not-json.json"
# A topology with several independent mistakes: one run names every one, each on its own line
# with the file and the field, in the file's order; exit code 2 and nothing written.
n=$((n + 1))
"$bin" run --quiet --duration 1ms --warmup 100us --out "$tmp/out$n" --topology "$data/several-mistakes.json" \
  >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
want="slubsim: error: $data/several-mistakes.json: nodes[0].memory_mb: must be from 0 (a memoryless node) to 1e12 MB, got -1
slubsim: error: $data/several-mistakes.json: smt.threads: unknown field (known here: cores, sibling_offset, threads_per_core)
slubsim: error: $data/several-mistakes.json: smt.threads_per_core: missing field
slubsim: error: $data/several-mistakes.json: llc.size_kb: missing field
slubsim: error: $data/several-mistakes.json: latency_ns.llc.value: a latency must be positive, got -5"
if [ $rc -ne 2 ] || [ "$(cat "$tmp/stderr")" != "$want" ] || [ -s "$tmp/stdout" ] || [ -e "$tmp/out$n" ]; then
  echo "FAIL (several mistakes): exit code $rc (want 2), output or files; stderr:"; cat "$tmp/stderr"
  failures=$((failures + 1))
else
  echo "ok: --topology several-mistakes.json -> $(wc -l <"$tmp/stderr") errors"
fi
expect_error "unknown preset 'no-such-machine'" --topology no-such-machine
expect_error "--nr-task: '9' gives 9 tasks; the machine has 8 CPUs" --topology small-2s-8c --nr-task 9
expect_error "--nr-task" --topology small-2s-8c --nr-task 4,x
# A list given twice the same item: the same points again (a task count twice was two rows and
# twice its ops in will-it-scale.workload). Refused, naming the option and the item.
expect_error "--nr-task: '64' is given twice: each task count is one row, give it once" --nr-task 64,64
expect_error "--nr-task: '2' gives 2 tasks, as '25%' does" --topology small-2s-8c --nr-task 25%,2
expect_error "--kernel: 'v7.0' is given twice" --topology small-2s-8c --kernel v6.17,v7.0,v7.0
expect_error "--sheaf-capacity: '64' is given twice" --topology small-2s-8c --kernel v7.0 --sheaf-capacity 32,64,64
expect_error "--sysfs: 'maple_node/sheaf_capacity=64' is given twice" --topology small-2s-8c --kernel v7.0 --sysfs "maple_node/sheaf_capacity=64;maple_node/sheaf_capacity=64"
expect_error "unrecognised option '--bogus'" --bogus 1
expect_error "--mode: 'both' is not process or thread" --topology small-2s-8c --mode both
expect_error "--kernel: unknown preset 'v5.0'" --topology small-2s-8c --kernel v5.0
expect_error "--sheaf-capacity" --topology small-2s-8c --sheaf-capacity 0
expect_error "--duration" --topology small-2s-8c --duration 10
expect_error "--interval: must not exceed warm-up plus duration" --topology small-2s-8c --interval 5ms
expect_error '--set: costs.qspinlock.handoff=fast: must be "mcs" or "alpha" (in ' --topology small-2s-8c --set costs.qspinlock.handoff=fast
expect_error "--set: costs.line_residency_us=-1: must not be negative" --topology small-2s-8c --set costs.line_residency_us=-1
expect_error "costs.qspinlock.nope: no such parameter" --topology small-2s-8c --set costs.qspinlock.nope=1
expect_error "--set: kernel.sched_slice_us.value=0: must be positive" --topology small-2s-8c --workload mmap2 --kernel v6.17 --set kernel.sched_slice_us.value=0
expect_error "--set: costs.rcu.tick_us=-1: must not be negative" --topology small-2s-8c --workload mmap2 --kernel v6.17 --set costs.rcu.tick_us=-1
expect_error '--set: costs.rcu.grace_period_model=sometimes: must be "fixed" or "ticks"' --topology small-2s-8c --workload mmap2 --kernel v6.17 --set costs.rcu.grace_period_model=sometimes
expect_error "--set: costs.rcu.batch_time_limit_us=-1: must not be negative" --topology small-2s-8c --workload mmap2 --kernel v6.17 --set costs.rcu.batch_time_limit_us=-1
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

# Unknown fields: a misspelt optional field is an error naming file and JSON path, with the
# nearest known name when one is close; numbers beyond a double name the file, line and column.
small="$cfg/topologies/small-2s-8c.json"
expect_error 'node_distanse: unknown field; did you mean "node_distance"?' --topology "$(mutated "$small" t-typo "d['node_distanse'] = d.get('node_distance', [[10, 20], [20, 10]])")"
expect_error 'smt.threads_per_cores: unknown field; did you mean "threads_per_core"?' --topology "$(mutated "$small" t-typo2 "d['smt']['threads_per_cores'] = 1")"
expect_error "zzz_knob: unknown field (known here: " --topology "$(mutated "$small" t-unknown "d['zzz_knob'] = 1")"
expect_error "t-overflow.json: line " --topology "$(overflowed "$small" t-overflow)"
expect_error "the number 1e99999 is too large to hold" --topology "$(overflowed "$small" t-overflow2)"
costs="$cfg/costs/default.json"
expect_error 'slub.list_op_nss: unknown field; did you mean "list_op_ns"?' --topology small-2s-8c --costs "$(mutated "$costs" c-typo "d['slub']['list_op_nss'] = 5")"
expect_error 'qspinlock.handof_alpha: unknown field; did you mean "handoff_alpha"?' --topology small-2s-8c --costs "$(mutated "$costs" c-typo2 "d['qspinlock']['handof_alpha'] = d['qspinlock']['handoff_alpha']")"
expect_error "c-overflow.json: line " --topology small-2s-8c --costs "$(overflowed "$costs" c-overflow)"
expect_error "--set: costs.slub.list_op_ns: the number 1e400 is too large to hold" --topology small-2s-8c --set costs.slub.list_op_ns=1e400
expect_error "--set: costs.slub.list_op_ns=NaN: expected a number" --topology small-2s-8c --set costs.slub.list_op_ns=NaN
kernel="$cfg/kernels/v7.0.json"
expect_error 'barn_max_ful: unknown field; did you mean "barn_max_full"?' --topology small-2s-8c --kernel "$(mutated "$kernel" k-typo "d['barn_max_ful'] = d['barn_max_full']")"
expect_error "k-overflow.json: line " --topology small-2s-8c --kernel "$(overflowed "$kernel" k-overflow)"
expect_error "--set: kernel.barn_max_full=-1: must be between 0 and 100000, got -1" --topology small-2s-8c --kernel v7.0 --set kernel.barn_max_full=-1
caches="$cfg/caches/default.json"
expect_error 'caches.maple_node.min_partail: unknown field; did you mean "min_partial"?' --topology small-2s-8c --caches "$(mutated "$caches" ca-typo "d['caches']['maple_node']['min_partail'] = 5")"
expect_error "ca-overflow.json: line " --topology small-2s-8c --caches "$(overflowed "$caches" ca-overflow)"
expect_error "--set: caches.maple_node.align=3: must be 0 or a power of two" --topology small-2s-8c --set caches.maple_node.align=3
mmap2="$wl/mmap2.json"
expect_error 'paramters: unknown field; did you mean "parameters"?' --topology small-2s-8c --workload "$(mutated "$mmap2" w-typo "d['paramters'] = {}")"
expect_error "w-overflow.json: line " --topology small-2s-8c --workload "$(overflowed "$mmap2" w-overflow)"
expect_error "--set: workload.ops_per_iteration=-1: must be between 1 and 1000000, got -1" --topology small-2s-8c --workload mmap2 --set workload.ops_per_iteration=-1
expect_error "--set: topology.nodes.0.memory_mb=-1: must be from 0 (a memoryless node) to 1e12 MB, got -1 (in " --topology small-2s-8c --set topology.nodes.0.memory_mb=-1
# Did you mean: a misspelt --set path, a misspelt option, a misspelt required field.
expect_error "--set: costs.qspinlock.handof_alpha: no such parameter; did you mean costs.qspinlock.handoff_alpha?" --topology small-2s-8c --set costs.qspinlock.handof_alpha=2
expect_error "unrecognised option '--topolgy'; did you mean --topology?" --topolgy small-2s-8c
expect_error "unrecognised option '--sheaf-capacities'; did you mean --sheaf-capacity?" --topology small-2s-8c --sheaf-capacities 64
expect_error "unrecognised option '--capacity'; did you mean --sheaf-capacity?" --topology small-2s-8c --capacity 64
mutated "$cfg/topologies/small-2s-8c.json" memroy "d['nodes'][0]['memroy_mb'] = d['nodes'][0].pop('memory_mb')"
expect_error 'nodes[0].memory_mb: missing field; "memroy_mb" is given: a misspelling of it?' --topology "$tmp/memroy.json"
expect_error "nodes: no node has memory" --topology small-2s-8c --set topology.nodes.0.memory_mb=0 --set topology.nodes.1.memory_mb=0
expect_error "--seed: '-1' is not a whole number" --topology small-2s-8c --seed -1
expect_error "--interval: '-1ms' must be positive" --topology small-2s-8c --interval=-1ms
expect_error "--runs: must be between 1 and 1000" --topology small-2s-8c --runs 0
expect_error "--jobs: must be between 0 and 1024" --topology small-2s-8c --jobs 5000
expect_error "'%value%' cannot appear in an argument" --topology small-2s-8c --runs "6e%value%x"  # once a hang (fuzz_cli)
# A name the file system refuses (ENAMETOOLONG) is an unknown preset, not a filesystem_error (fuzz_sweep).
long=$(printf 'w%.0s' $(seq 1 300))
expect_error "unknown preset '$long'" --topology small-2s-8c --workload "$long"
expect_error "no such file" --topology "$tmp/$long/x.json"
exp="$cfg/experiments/t15-delay-freezing-amd128.json"
sed 's/"runs": 1,/"runs": 1e99999,/' "$exp" > "$tmp/t15-delay-freezing-amd128.json"
expect_validate_error "t15-delay-freezing-amd128.json: line " --experiments "$tmp/t15-delay-freezing-amd128.json"
mkdir -p "$tmp/exp"
python3 -c "
import json, sys
d = json.load(open('$exp'))
d['variants'][0]['kernal'] = d['variants'][0]['kernel']
open('$tmp/exp/t15-delay-freezing-amd128.json', 'w').write(json.dumps(d))"
expect_validate_error "variants[0].kernal: unknown field" --experiments "$tmp/exp/t15-delay-freezing-amd128.json"

echo "$((n - failures)) passed, $failures failed"
[ $failures -eq 0 ]
