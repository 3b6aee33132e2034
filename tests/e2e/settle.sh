#!/usr/bin/env bash
# End-to-end: the settle rule. By default every point's window is chosen by the rule and its
# stats carry the window, warm-up and 95% half-width (within the target); a fixed window that is
# too short is honoured and warned about, naming why; a cap too short to settle says so; the
# same command gives the same bytes, and a store with a lost point resumes to the same bytes.
# $1 = slubsim binary.
set -uo pipefail
bin=$1
source "$(dirname "$0")/lib.sh"
base=(run --topology small-2s-8c --workload mmap2 --kernel v6.17,v7.0 --nr-task 4,8 --jobs 2 --validate)
key() { "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); print(d.get(sys.argv[2], 'missing'))" "$@"; }

# 1. The default: settled windows.
"$bin" "${base[@]}" --out "$tmp/a" --quiet 2>"$tmp/a.err" || fail "default run"
for v in v6.17 v7.0; do
  for n in 4 8; do
    f="$tmp/a/$v/stats.json"
    w=$(key "$f" "settle.$n.window_ms"); hw=$(key "$f" "settle.$n.half_width_percent")
    u=$(key "$f" "settle.$n.unsettled"); a=$(key "$f" "settle.$n.automatic")
    if [ "$w" != missing ] && [ "$a" = 1 ] && [ "$u" != 1 ] && "$py" -c "import sys; sys.exit(0 if float('$hw') <= 2 else 1)"; then
      ok "$v at $n tasks: settled, window $w ms, ±$hw%"
    else
      fail "$v at $n tasks: window $w, half-width $hw, unsettled $u, automatic $a"
    fi
  done
done
grep -q "not settled" "$tmp/a.err" && fail "a settled run warned: $(cat "$tmp/a.err")"

# 2. Same command, same bytes.
"$bin" "${base[@]}" --out "$tmp/b" --quiet 2>/dev/null || fail "second run"
for v in v6.17 v7.0; do
  for f in stats.json matrix.json; do
    cmp -s "$tmp/a/$v/$f" "$tmp/b/$v/$f" || fail "$v/$f differs between two identical runs"
  done
done
ok "two identical runs: identical stats.json and matrix.json"

# 3. A lost point resumes to the same bytes.
rm -f "$tmp/b/points/v1-t1-n8-r1.json" "$tmp/b/v7.0/stats.json"
"$bin" "${base[@]}" --out "$tmp/b" --resume --quiet 2>"$tmp/resume.err" || fail "resume: $(cat "$tmp/resume.err")"
for v in v6.17 v7.0; do
  cmp -s "$tmp/a/$v/stats.json" "$tmp/b/$v/stats.json" || fail "$v/stats.json differs after resume"
done
[ -f "$tmp/b/points/v1-t1-n8-r1.json" ] && ok "resume reran the lost point: identical results" || fail "the lost point was not rerun"

# 4. A fixed window that is too short: honoured, and warned about with its reason.
"$bin" run --topology small-2s-8c --workload mmap2 --kernel v7.0 --nr-task 8 --warmup 2ms --duration 4ms \
  >"$tmp/fixed.json" 2>"$tmp/fixed.err"
rc=$?
[ $rc -eq 0 ] || fail "fixed window: exit $rc"
w=$(key "$tmp/fixed.json" settle.8.window_ms); wu=$(key "$tmp/fixed.json" settle.8.warmup_ms)
[ "$w" = 4.0 ] && [ "$wu" = 2.0 ] && ok "fixed window honoured (2 + 4 ms)" || fail "fixed window: warm-up $wu, window $w"
[ "$(key "$tmp/fixed.json" settle.8.unsettled)" = 1 ] && ok "fixed window marked unsettled in stats" || fail "fixed window not marked unsettled"
grep -q "v7.0 at 8 tasks: the window 4 ms after 2 ms is not settled: too short to judge" "$tmp/fixed.err" \
  && grep -q "without --warmup and --duration the settle rule chooses the window" "$tmp/fixed.err" \
  && ok "fixed window: warned, with the reason and the way out" || { fail "fixed window: no warning"; cat "$tmp/fixed.err"; }

# 5. A fixed window long enough after the transient draws no settle warning.
"$bin" run --topology small-2s-8c --workload mmap2 --kernel v7.0 --nr-task 8 --warmup 20ms --duration 60ms \
  >"$tmp/long.json" 2>"$tmp/long.err" || fail "long fixed window"
grep -q "not settled" "$tmp/long.err" && fail "a settled fixed window warned: $(cat "$tmp/long.err")" \
  || ok "a long fixed window is judged settled"

# 6. A cap too short for the target: the point says it is not settled.
"$bin" run --topology small-2s-8c --workload mmap2 --kernel v6.17 --nr-task 8 --settle-cap 40ms --settle-ci 0.001% \
  --table >"$tmp/cap.txt" 2>"$tmp/cap.err" || fail "capped run"
grep -q "v6.17 at 8 tasks: not settled within --settle-cap 40ms" "$tmp/cap.err" && grep -q "(not settled)" "$tmp/cap.txt" \
  && ok "a point at its cap says it is not settled (stderr and table)" || { fail "capped run: no word"; cat "$tmp/cap.err" "$tmp/cap.txt"; }

# 7. Bad rule options are refused.
"$bin" run --topology small-2s-8c --settle-ci abc >/dev/null 2>"$tmp/bad.err"
[ $? -eq 2 ] && grep -q -- "--settle-ci: 'abc' is not a percentage" "$tmp/bad.err" && ok "--settle-ci abc refused" \
  || fail "--settle-ci abc: $(cat "$tmp/bad.err")"
"$bin" run --topology small-2s-8c --settle-cap 1ms >/dev/null 2>"$tmp/bad.err"
[ $? -eq 2 ] && grep -q -- "--settle-cap: must be between" "$tmp/bad.err" && ok "--settle-cap 1ms refused" \
  || fail "--settle-cap 1ms: $(cat "$tmp/bad.err")"
[ $failures -eq 0 ]
