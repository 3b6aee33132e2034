#!/usr/bin/env bash
# Point benchmark: the 512-CPU will-it-scale points of the speed targets, one process each.
#   tools/bench-points.sh [--validate] [--sweep] [repetitions] [task counts] [kernels]
#   e.g. tools/bench-points.sh 3 8,64,128,256,512 v6.17,v7.0
# For amd-turin-2s-512t mmap1 at the steady-state window (20 ms warm-up + 12 ms): wall s per
# point, wall s per simulated ms, engine events and slab operations per wall s, peak RSS, and the
# bare engine's events/s in the same process (engine_share = the point's events/s over it).
# Medians over the repetitions. With --validate, also the wall time of a full `slubsim validate`
# (into a scratch directory; the committed results are not touched). With --sweep, per kernel, a
# sweep of 8 equal points (512 tasks, seeds 1-8) with --jobs 1 and --jobs 2, alternated as many
# times as the repetitions, and the median speed-up.
set -euo pipefail
cd "$(dirname "$0")/.."
validate=0
sweep=0
while [[ "${1:-}" == --* ]]; do
  case "$1" in
    --validate) validate=1 ;;
    --sweep) sweep=1 ;;
    *) echo "bench-points.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
reps=${1:-3}
tasks=${2:-8,64,128,256,512}
kernels=${3:-v6.17,v7.0}
bash tools/setup.sh build >/dev/null
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for k in ${kernels//,/ }; do
  for n in ${tasks//,/ }; do
    for ((i = 0; i < reps; i++)); do ./build/slubsim_point_bench "$k" "$n" >> "$out"; done
  done
done
python3 - "$out" <<'PY'
import sys, statistics
rows = [dict(kv.split("=", 1) for kv in line.split()) for line in open(sys.argv[1]) if line.startswith("kernel=")]
groups = {}
for r in rows: groups.setdefault((r["kernel"], int(r["nr_task"])), []).append(r)
med = lambda rs, k: statistics.median(float(r[k]) for r in rs)
print(f"{'kernel':8s} {'tasks':>5s} {'wall s':>7s} {'s/sim ms':>9s} {'s/task/sim ms':>13s} {'M ev/s':>7s} "
      f"{'M slab ops/s':>12s} {'RSS MB':>7s} {'bare M ev/s':>11s} {'engine share':>12s}")
for (k, n), rs in sorted(groups.items()):
    per_ms = med(rs, "wall_s_per_sim_ms")
    print(f"{k:8s} {n:5d} {med(rs,'wall_s'):7.3f} {per_ms:9.4f} {per_ms/n*1e3:12.3f}m {med(rs,'events_per_s')/1e6:7.2f} "
          f"{med(rs,'slab_ops_per_s')/1e6:12.2f} {med(rs,'peak_rss_mb'):7.0f} {med(rs,'bare_engine_events_per_s')/1e6:11.2f} "
          f"{med(rs,'engine_share'):12.3f}")
print(f"medians of {len(rows) // max(1, len(groups))} runs per point; s/task/sim ms in milliseconds")
PY
if ((sweep)); then
  for k in ${kernels//,/ }; do
    times=()
    for ((i = 0; i < reps; i++)); do
      for j in 1 2; do
        start=$(date +%s.%N)
        ./build/slubsim run --topology amd-turin-2s-512t --workload mmap1 --kernel "$k" --nr-task 512 \
          --runs 8 --jobs $j --quiet > "$out.j$j"
        end=$(date +%s.%N)
        times+=("$j:$(python3 -c "print($end - $start)")")
      done
      cmp -s "$out.j1" "$out.j2" || { echo "sweep: --jobs 1 and --jobs 2 differ" >&2; exit 1; }
    done
    rm -f "$out.j1" "$out.j2"
    python3 - "$k" "${times[@]}" <<'PY'
import sys, statistics
k, runs = sys.argv[1], [a.split(":") for a in sys.argv[2:]]
one = [float(t) for j, t in runs if j == "1"]
two = [float(t) for j, t in runs if j == "2"]
ratios = [a / b for a, b in zip(one, two)]
print(f"sweep {k} 512 tasks x 8 seeds: --jobs 1 {statistics.median(one):.1f} s, --jobs 2 {statistics.median(two):.1f} s, "
      f"speed-up {statistics.median(ratios):.2f}x (median of {len(ratios)} pairs, {min(ratios):.2f}-{max(ratios):.2f})")
PY
  done
fi
if ((validate)); then
  scratch=$(mktemp -d)
  start=$(date +%s.%N)
  ./build/slubsim validate --out "$scratch" --quiet >/dev/null
  end=$(date +%s.%N)
  rm -rf "$scratch"
  python3 -c "print(f'full validate: {$end - $start:.1f} s wall')"
fi
