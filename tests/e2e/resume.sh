#!/usr/bin/env bash
# End-to-end: `run --out` keeps every finished point. SIGINT after the first point is on disk
# stops the job (exit 130) with that point and the index kept and no half-written file; --resume
# runs only the missing points and gives stats.json and matrix.json byte-identical to an
# uninterrupted run; a resume with other options, or a new run over the store, is refused.
# $1 = slubsim binary.
set -uo pipefail
bin=$1
source "$(dirname "$0")/lib.sh"
args=(run --topology amd-2s-128c-2n --workload mmap2 --kernel v6.17,v7.0 --nr-task 16,32 --runs 1
      --duration 12ms --warmup 20ms --jobs 1 --validate --quiet)

"$bin" "${args[@]}" --out "$tmp/whole" 2>/dev/null || fail "uninterrupted run"

"$bin" "${args[@]}" --out "$tmp/cut" 2>"$tmp/cut.err" &
pid=$!
for _ in $(seq 1 1200); do  # up to 120 s for the first point
  compgen -G "$tmp/cut/points/v*.json" >/dev/null && break
  sleep 0.1
done
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 130 ] && ok "SIGINT: exit code 130" || fail "SIGINT: exit code $rc, want 130"
grep -q "interrupted: .* points are in .*--resume" "$tmp/cut.err" && ok "SIGINT: says how to resume" \
  || { fail "SIGINT: no resume hint"; cat "$tmp/cut.err"; }
kept=$(ls "$tmp/cut/points" | grep -c "^v.*\.json$")
[ "$kept" -ge 1 ] && [ "$kept" -lt 4 ] && ok "SIGINT: $kept of 4 points kept" || fail "SIGINT: $kept points on disk"
for p in "$tmp"/cut/points/v*.json; do
  id=$(basename "$p" .json)
  grep -q "\"$id\"" "$tmp/cut/index.json" || fail "point $id is not in index.json"
done
leftovers=$(find "$tmp/cut" -name '.*.tmp.*' | wc -l)
[ "$leftovers" -eq 0 ] && ok "no temporary files left" || fail "$leftovers temporary files left"

"$bin" "${args[@]}" --out "$tmp/cut" 2>"$tmp/again.err"
rc=$?
[ $rc -eq 2 ] && grep -q "add --resume" "$tmp/again.err" && ok "a new run over the store is refused" \
  || { fail "a new run over the store: exit $rc"; cat "$tmp/again.err"; }
"$bin" "${args[@]}" --seed 2 --out "$tmp/cut" --resume 2>"$tmp/other.err"
rc=$?
[ $rc -eq 2 ] && grep -q "resume of a different job (seed was 1, now 2)" "$tmp/other.err" \
  && ok "a resume with another seed is refused" || { fail "a resume with another seed: exit $rc"; cat "$tmp/other.err"; }

"$bin" "${args[@]}" --out "$tmp/cut" --resume 2>/dev/null || fail "resume"
[ "$(ls "$tmp/cut/points" | grep -c "^v.*\.json$")" -eq 4 ] && ok "resume: all 4 points" || fail "resume: not all points"
for v in v6.17 v7.0; do
  for f in stats.json matrix.json; do
    cmp -s "$tmp/whole/$v/$f" "$tmp/cut/$v/$f" && ok "resume: $v/$f byte-identical" || fail "resume: $v/$f differs"
  done
done
[ $failures -eq 0 ]
