#!/usr/bin/env bash
# End-to-end: tools/compare.py on variant dirs as `slubsim run --out` writes them.
# $1 = slubsim binary.
set -uo pipefail
bin=$1
tool="$(dirname "$0")/../../tools/compare.py"
. "$(dirname "$0")/lib.sh"

# Two kernels, three runs each (lkp's changed-key test needs 3), as results/<id>/<topology>/<variant>.
top="$tmp/results/t01-test/small-2s-8c"
"$bin" run --topology small-2s-8c --workload mmap2 --nr-task 2,8 --kernel v6.17,v6.19 --runs 3 \
  --duration 1ms --warmup 500us --quiet --validate --out "$top" || { echo "FAIL: slubsim run"; exit 1; }

out=$("$py" "$tool" "$top/v6.17" "$top/v6.19" --all)
rc=$?
[ $rc -eq 0 ] && ok "compare v6.17 v6.19 --all" || fail "exit code $rc"
grep -q "%change" <<<"$out" && grep -q "%stddev" <<<"$out" || fail "no %stddev / %change header"
grep -q "will-it-scale.per_process_ops$" <<<"$out" || fail "no per_process_ops row"
grep -qE "^ +[0-9]+ .* +[0-9]+ +will-it-scale\.8\.processes$" <<<"$out" && ok "a throughput row" || fail "no will-it-scale.8.processes row"
grep -q -- "-0\.0%" <<<"$out" && fail "a -0.0% change" || ok "no -0.0%"
[ "$(grep -c 'lock_stat.maple_node.barn_lock.waittime-total$' <<<"$out")" -le 1 ] || fail "a key shown twice"
[ "$("$py" "$tool" "$top/v6.17" "$top/v6.19" --all)" = "$out" ] && ok "deterministic" || fail "two runs differ"

# Only changed keys by default; --match filters.
changed=$("$py" "$tool" "$top/v6.17" "$top/v6.19")
[ "$(wc -l <<<"$changed")" -lt "$(wc -l <<<"$out")" ] && ok "default shows fewer rows than --all" || fail "default = --all"
m=$("$py" "$tool" "$top/v6.17" "$top/v6.19" --all --match '^will-it-scale\.')
! grep -E "^ .*  (lock_stat|slub_stats|meminfo)" <<<"$m" >/dev/null && grep -q "will-it-scale.workload" <<<"$m" &&
  ok "--match" || fail "--match: $m"

# Three dirs, long variant names: columns numbered, the dirs listed with their numbers.
"$bin" run --topology small-2s-8c --workload mmap2 --nr-task 8 --kernel v6.18 --sheaf-capacity maple_node=16,64 \
  --duration 1ms --warmup 500us --quiet --validate --out "$tmp/caps" || fail "slubsim capacity run"
three=$("$py" "$tool" "$top/v6.17" "$tmp/caps/v6.18_sheaf_capacity=maple_node=16" "$tmp/caps/v6.18_sheaf_capacity=maple_node=64" --all)
grep -q "\[2\] $tmp/caps/v6.18_sheaf_capacity=maple_node=64" <<<"$three" && grep -qE "^ +\[0\] +\[1\] +\[2\]" <<<"$three" &&
  ok "numbered columns for long names" || fail "long names: $(head -8 <<<"$three")"

# Bad input: exit code 2, the file in the message.
expect_error() {  # expect_error "<message part>" dirs...
  local want=$1
  shift
  "$py" "$tool" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  local rc=$?
  if [ $rc -ne 2 ]; then fail "($*) exit code $rc, want 2"; return; fi
  grep -qF -- "$want" "$tmp/stderr" && ok "$(cat "$tmp/stderr")" || fail "($*) message lacks '$want': $(cat "$tmp/stderr")"
}
expect_error "small-2s-8c/matrix.json: no such file (not a slubsim --out result dir; its variant dirs are v6.17, v6.19" "$top" "$top/v6.19"
expect_error "no-such-dir: no such directory" "$top/v6.17" "$tmp/no-such-dir"
mkdir -p "$tmp/bad" && echo '{"will-it-scale.8.processes": [1, "x"]}' >"$tmp/bad/matrix.json"
expect_error "bad/matrix.json: will-it-scale.8.processes: 'x' is not a finite number" "$top/v6.17" "$tmp/bad"
echo '{"a": [1,' >"$tmp/bad/matrix.json"
expect_error "bad/matrix.json: not valid JSON" "$top/v6.17" "$tmp/bad"
expect_error "give a base directory and at least one" "$top/v6.17"

echo "compare: $failures failed"
[ $failures -eq 0 ]
