#!/usr/bin/env bash
# End-to-end: what a new user meets in the first hour (README only), each as a tester found it.
#  - A sheaf capacity that no kernel of the job has sheaves for is refused (exit 2, nothing
#    written), not run as the kernel's own and labelled with the setting; the refusal blames the
#    default kernel only when --kernel was not given.
#  - A task count given twice is refused (exit 2, nothing written), not run and summed twice.
#  - The default task counts hold on a 2-CPU machine: inputs and run need no --nr-task there.
#  - The main job takes --jobs (and says the rest of its options on a typo).
#  - A stopped sweep says "the same command again", not --resume (which sweep refuses).
#  - Did-you-mean for preset and cache names.
#  - The run table defines its columns and labels a kernel's own capacity as the default.
#  - --why says where tasks were placed (tasks per node), and with --out where each row's folded
#    stacks are; the file is there.
# $1 = slubsim binary.
set -uo pipefail
bin=$1
source "$(dirname "$0")/lib.sh"
short=(--topology small-2s-8c --workload mmap1 --nr-task 4 --warmup 12ms --duration 12ms --quiet)

# A capacity for a kernel without sheaves (v6.17, the default kernel).
"$bin" run "${short[@]}" --sheaf-capacity maple_node=64 --out "$tmp/nosheaves" 2>"$tmp/nosheaves.err"
rc=$?
[ $rc -eq 2 ] && grep -q -- "--sheaf-capacity: no kernel of the job (v6.17) has sheaves" "$tmp/nosheaves.err" &&
  [ ! -e "$tmp/nosheaves" ] && ok "a capacity no kernel reaches is refused" ||
  { fail "capacity without sheaves: exit $rc"; cat "$tmp/nosheaves.err"; }
# With --kernel given, the refusal names those kernels, not the default.
for given in "v6.19 kmalloc-64=64" "v6.18 kmalloc-64=32"; do
  read -r kernel capacity <<<"$given"
  "$bin" run "${short[@]}" --kernel "$kernel" --sheaf-capacity "$capacity" --out "$tmp/given" 2>"$tmp/given.err"
  rc=$?
  msg=$(cat "$tmp/given.err")
  [ $rc -eq 2 ] && [ ! -e "$tmp/given" ] && grep -qF -- "no kernel of the job ($kernel) has sheaves" <<<"$msg" &&
    grep -qF -- "the kernel given (--kernel $kernel) has none" <<<"$msg" && ! grep -q "defaults to" <<<"$msg" &&
    ok "--kernel $kernel: the refusal names the kernel given" || { fail "--kernel $kernel --sheaf-capacity $capacity: exit $rc"; echo "$msg"; }
done
grep -qF -- "--kernel defaults to v6.17, which has none" "$tmp/nosheaves.err" &&
  ok "without --kernel: the refusal says the default has none" || { fail "default kernel's refusal"; cat "$tmp/nosheaves.err"; }
# With a kernel it reaches, the other runs once, under its own name.
"$bin" run "${short[@]}" --kernel v6.17,v7.0 --sheaf-capacity maple_node=64 --table >"$tmp/mixed.txt" 2>"$tmp/mixed.err"
grep -q "^kernel v6.17: no sheaves" "$tmp/mixed.txt" && grep -q "^kernel v7.0_sheaf_capacity=maple_node=64:" "$tmp/mixed.txt" &&
  grep -q "v6.17 has no sheaves for the caches --sheaf-capacity names: it runs once" "$tmp/mixed.err" &&
  ok "with v6.17,v7.0 the capacity labels v7.0 only" || { fail "mixed kernels"; cat "$tmp/mixed.txt" "$tmp/mixed.err"; }

# A task count twice: refused before anything runs, nothing on stdout or disk.
"$bin" run --topology small-2s-8c --workload mmap1 --nr-task 4,4 --quiet --out "$tmp/twice" >"$tmp/twice.out" 2>"$tmp/twice.err"
rc=$?
msg=$(cat "$tmp/twice.err")
[ $rc -eq 2 ] && [ ! -e "$tmp/twice" ] && [ ! -s "$tmp/twice.out" ] &&
  grep -qF -- "--nr-task: '4' is given twice" <<<"$msg" && ok "a task count given twice is refused" ||
  { fail "--nr-task 4,4: exit $rc"; echo "$msg"; cat "$tmp/twice.out"; }

# A 2-CPU machine: inputs lists its inputs, and run takes the default task counts (1 and 2 there).
two="$(dirname "$0")/../data/two-cpus.json"
"$bin" inputs --topology "$two" --workload mmap2 >"$tmp/two.out" 2>"$tmp/two.err"
rc=$?
out=$(cat "$tmp/two.out")
[ $rc -eq 0 ] && grep -q "^slubsim inputs: mmap2 on two-cpus: " <<<"$out" && ok "inputs on a 2-CPU machine" ||
  { fail "inputs on a 2-CPU machine: exit $rc"; cat "$tmp/two.err"; }
"$bin" run --topology "$two" --workload mmap2 --warmup 1ms --duration 1ms --quiet --table >"$tmp/two.txt" 2>"$tmp/two.err"
rc=$?
rows=$(awk '/^ nr_task/ {on = 1; next} on && NF == 0 {exit} on {print $1}' "$tmp/two.txt" | tr '\n' ' ')
[ $rc -eq 0 ] && [ "$rows" = "1 2 " ] && ok "run on a 2-CPU machine without --nr-task: rows 1 and 2" ||
  { fail "run on a 2-CPU machine: exit $rc, rows '$rows'"; cat "$tmp/two.err" "$tmp/two.txt"; }

# The main job's options: --jobs starts it (stopped after a few seconds: the job takes a minute);
# a misspelt option is named with the right one.
timeout 5 "$bin" --jobs 1 >/dev/null 2>"$tmp/main.err"
grep -q "the main job: experiment t01-hao-li-mmap2" "$tmp/main.err" && ! grep -q "unknown command" "$tmp/main.err" &&
  ok "the main job takes --jobs" || { fail "slubsim --jobs 1"; cat "$tmp/main.err"; }
"$bin" --jbos 2 2>"$tmp/jbos.err"
rc=$?
[ $rc -eq 2 ] && grep -q "did you mean --jobs?" "$tmp/jbos.err" && ok "a misspelt main-job option: exit 2, did you mean" ||
  { fail "slubsim --jbos: exit $rc"; cat "$tmp/jbos.err"; }

# A sweep stopped by a signal: its messages point to the same command again. A point far longer
# than the test (512 tasks, settled); the second signal ends it at once.
"$bin" sweep --topology amd-turin-2s-512t --workload mmap1 --kernel v6.17 --nr-task 512 --jobs 1 --quiet \
  --out "$tmp/sweep" 2>"$tmp/sweep.err" &
pid=$!
sleep 3
kill -TERM $pid
sleep 1
kill -TERM $pid
wait $pid 2>/dev/null
grep -q "stopping after the 1 point(s) in flight" "$tmp/sweep.err" && grep -q "the same command again" "$tmp/sweep.err" &&
  ! grep -q -- "--resume" "$tmp/sweep.err" && ok "a stopped sweep says: the same command again" ||
  { fail "sweep stop messages"; cat "$tmp/sweep.err"; }

# Did you mean, for presets and caches.
"$bin" run --topology amd-turin-2s-512 --nr-task 2 2>"$tmp/preset.err"
rc=$?
[ $rc -eq 2 ] && grep -q "unknown preset 'amd-turin-2s-512'; did you mean 'amd-turin-2s-512t'?" "$tmp/preset.err" &&
  ok "a misspelt preset: did you mean" || { fail "misspelt preset: exit $rc"; cat "$tmp/preset.err"; }
"$bin" run "${short[@]}" --kernel v7.0 --sheaf-capacity maple_nod=64 2>"$tmp/cache.err"
rc=$?
[ $rc -eq 2 ] && grep -q "cache 'maple_nod' is not in .*; did you mean 'maple_node'?" "$tmp/cache.err" &&
  ok "a misspelt cache: did you mean" || { fail "misspelt cache: exit $rc"; cat "$tmp/cache.err"; }

# The table: a kernel's own capacity is labelled, and the columns are defined under it.
"$bin" run "${short[@]}" --kernel v7.0 --table >"$tmp/table.txt" 2>/dev/null
grep -q "^kernel v7.0: sheaf capacity .*maple_node 32 (default)" "$tmp/table.txt" && grep -q "^idle%: " "$tmp/table.txt" &&
  grep -q "^lock wait%: " "$tmp/table.txt" && ok "the table labels the default capacity and defines its columns" ||
  { fail "table legend"; cat "$tmp/table.txt"; }

# --why: placement, and where the folded stacks went (one variant: beside stats.json in DIR).
"$bin" run "${short[@]}" --kernel v7.0 --why --out "$tmp/why" >"$tmp/why.txt" 2>/dev/null
grep -q "tasks per node (as lkp binds them.*): node0 4, node1 0" "$tmp/why.txt" && ok "--why says where tasks were placed" ||
  { fail "--why placement"; cat "$tmp/why.txt"; }
stacks=$(sed -n 's/^ *folded stacks of all task time: //p' "$tmp/why.txt")
[ "$stacks" = "$tmp/why/stacks.4.folded" ] && [ -s "$stacks" ] && ok "--why --out names its folded stacks file" ||
  { fail "--why --out stacks path '$stacks'"; ls -R "$tmp/why"; }

[ $failures -eq 0 ] && echo "e2e.first_hour: all checks passed"
[ $failures -eq 0 ]
