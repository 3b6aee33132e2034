#!/usr/bin/env bash
# The sweep machinery's own cost: a 4,800-point sweep of tiny points (1 ms windows on the 8-CPU
# box), where the point store, index and progress dominate the simulation. Prints, as medians over
# REPS (default 3) sittings: the sweep's wall seconds, the points' own simulation seconds (their
# host.json), the overhead per point, and the seconds to resume (every point on disk) and to
# merge the tree into a new one.
#   tools/bench-sweep.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}/slubsim
reps=${REPS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=(sweep --topology small-2s-8c --workload mmap2 --kernel v6.18,v7.0 --sheaf-capacity maple_node=16,32,64
      --nr-task 1,2,3,4,5,6,7,8 --runs 100 --duration 1ms --warmup 1ms --jobs 1 --quiet)
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); python3 -c "print(round($t1 - $t0, 3))"; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for r in $(seq 1 "$reps"); do
  rm -rf "$tmp/s" "$tmp/m"
  w=$(secs "$bin" "${args[@]}" --out "$tmp/s")
  sim=$(python3 -c "import json;print(sum(json.load(open('$tmp/s/small-2s-8c/points/host.json'))['wall_s'].values()))")
  res=$(secs "$bin" "${args[@]}" --out "$tmp/s")
  mer=$(secs "$bin" merge "$tmp/s" --out "$tmp/m" --quiet)
  echo "$w $sim $res $mer" >>"$tmp/rows"
  echo "sitting $r: sweep $w s (points $sim s), resume $res s, merge $mer s"
done
col() { awk -v c="$1" '{print $c}' "$tmp/rows" | median; }
w=$(col 1); sim=$(col 2); res=$(col 3); mer=$(col 4)
printf 'median of %d: sweep %.2f s for 4800 points, of which simulation %.2f s; overhead %.2f ms per point; resume %.2f s; merge %.2f s\n' \
  "$reps" "$w" "$sim" "$(python3 -c "print(($w - $sim) * 1000 / 4800)")" "$res" "$mer"
