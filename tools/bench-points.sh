#!/usr/bin/env bash
# Point benchmark: the 512-CPU will-it-scale points of the speed targets, one process each.
#   tools/bench-points.sh [--validate] [--sweep] [--settled] [--against REV] [repetitions] [task counts] [kernels]
#   e.g. tools/bench-points.sh 3 8,64,128,256,512 v6.17,v7.0
# For amd-turin-2s-512t mmap1 at the steady-state window (20 ms warm-up + 12 ms): wall ms per
# simulated ms (the headline), wall s per point, engine events and slab operations per wall s, peak RSS, and the
# bare engine's events/s in the same process (engine_share = the point's events/s over it).
# Medians over the repetitions. With --validate, also the wall time of a full `slubsim validate`
# (into a scratch directory; the committed results are not touched). With --sweep, per kernel, a
# sweep of 8 equal points (512 tasks, seeds 1-8) with --jobs 1 and --jobs 2, alternated as many
# times as the repetitions, and the median speed-up. With --settled, the settled cases instead:
# the 512-task points (v6.17, v7.0) with the window the settle rule chooses, and the question of
# the README's quick start (mmap1 on amd-turin-2s-512t, v6.17 and v7.0 with maple_node capacity
# 32/64/128, 128 and 384 processes, --jobs 2), each wall time also scaled to a sitting whose bare
# heap runs 20 M events/s (wall x bare / 20 M; the bare heap measured before and after).
# With --against REV, side by side: builds REV's point benchmark in build-against/REV (a git
# worktree), then runs the speed cases of the acceptance list, this build and REV's alternated
# (repetitions pairs each): Turin mmap1 512 tasks at the fixed 20 + 12 ms window and settled
# (v6.17, v7.0), and GNR mmap2 256 tasks at the fixed window (v6.17, v7.0). Per case: wall ms per
# simulated ms (the headline: it does not fall when events are removed), wall s, engine events
# per wall s, peak RSS, the median of the pairs' speed-up, and whether the two gave the same
# ops/s (a speed change must not change a result).
set -euo pipefail
cd "$(dirname "$0")/.."
validate=0
sweep=0
settled=0
against=""
while [[ "${1:-}" == --* ]]; do
  case "$1" in
    --validate) validate=1 ;;
    --sweep) sweep=1 ;;
    --settled) settled=1 ;;
    --against) against=${2:?--against needs a revision}; shift ;;
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
# The two builds of a pair run on the same host CPU: on a virtual machine the CPUs can differ by
# a third in speed for long stretches (measured 2026-12-04: 1.40 against 1.95 s for one point),
# far more than the steps being compared. SLUBSIM_BENCH_CPU picks it (default: the first one we may use).
pin=""
if command -v taskset >/dev/null; then
  cpu=${SLUBSIM_BENCH_CPU:-$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')}
  pin="taskset -c $cpu"
fi
if [[ -n "$against" ]]; then
  rev=$(git rev-parse --short=12 "$against")
  wt=build-against/$rev
  [ -d "$wt" ] || git worktree add --detach "$wt" "$rev" >/dev/null
  # setup.sh works from its own tree: the build directory is given absolute.
  SLUBSIM_TARGET=slubsim_point_bench bash "$wt/tools/setup.sh" "$PWD/$wt/build" >/dev/null
  cases=("v7.0 512 amd-turin-2s-512t mmap1" "v6.17 512 amd-turin-2s-512t mmap1"
         "v7.0 512 amd-turin-2s-512t mmap1 settle" "v6.17 512 amd-turin-2s-512t mmap1 settle"
         "v7.0 256 intel-gnr-2s-344t-4n mmap2" "v6.17 256 intel-gnr-2s-344t-4n mmap2")
  for ((i = 0; i < reps; i++)); do
    for c in "${cases[@]}"; do
      # shellcheck disable=SC2086
      { echo -n "build=this case=${c// /_} "; $pin ./build/slubsim_point_bench $c; } >> "$out"
      # shellcheck disable=SC2086
      { echo -n "build=$rev case=${c// /_} "; $pin "$wt/build/slubsim_point_bench" $c; } >> "$out"
    done
  done
  PIN_CPU=${cpu:-} python3 - "$out" "$rev" <<'PY'
import os, sys, statistics
rev = sys.argv[2]
rows = [dict(kv.split("=", 1) for kv in l.split()) for l in open(sys.argv[1]) if l.startswith("build=")]
med = statistics.median
cases = list(dict.fromkeys(r["case"] for r in rows))
print(f"{'case':44s} {'build':12s} {'ms/sim ms':>9s} {'wall s':>7s} {'M ev/s':>7s} {'RSS MB':>6s} {'speed-up':>9s} same ops/s")
for c in cases:
    this = [r for r in rows if r["case"] == c and r["build"] == "this"]
    base = [r for r in rows if r["case"] == c and r["build"] == rev]
    for name, rs in (("this", this), (rev, base)):
        print(f"{c.replace('_', ' '):44s} {name:12s} {med(float(r['wall_s_per_sim_ms']) for r in rs) * 1e3:9.2f} "
              f"{med(float(r['wall_s']) for r in rs):7.3f} {med(float(r['events_per_s']) for r in rs) / 1e6:7.2f} "
              f"{med(float(r['peak_rss_mb']) for r in rs):6.0f}", end="")
        if name == "this":
            ratios = [float(b["wall_s_per_sim_ms"]) / float(a["wall_s_per_sim_ms"]) for a, b in zip(this, base)]
            same = all(a["ops_per_sec"] == b["ops_per_sec"] for a, b in zip(this, base))
            print(f" {med(ratios):8.2f}x {'yes' if same else 'no (a model change)'}")
        else:
            print()
# Each build's own bare heap: a change to the engine changes it, so host speed is read off REV's.
bare = {b: med(float(r["bare_engine_events_per_s"]) for r in rows if r["build"] == b) for b in ("this", rev)}
print(f"{len(rows) // (2 * len(cases))} alternated pairs per case; speed-up = the median over pairs of "
      f"{rev}'s wall per simulated ms over this build's; bare heap in this sitting {bare[rev] / 1e6:.1f} M "
      f"events/s by {rev}'s engine, {bare['this'] / 1e6:.1f} M by this one's"
      + (f"; both builds on host CPU {os.environ['PIN_CPU']}" if os.environ.get("PIN_CPU") else ""))
PY
  exit 0
fi
if ((settled)); then
  bare() { ./build/slubsim_point_bench --bare 512 | sed 's/.*=//'; }
  for ((i = 0; i < reps; i++)); do
    for k in ${kernels//,/ }; do ./build/slubsim_point_bench "$k" 512 amd-turin-2s-512t mmap1 settle >> "$out"; done
    b0=$(bare)
    scratch=$(mktemp -d)
    start=$(date +%s.%N)
    ./build/slubsim run --topology amd-turin-2s-512t --workload mmap1 --kernel v6.17,v7.0 \
      --sheaf-capacity maple_node=32,64,128 --nr-task 128,384 --jobs 2 --quiet --out "$scratch" 2>/dev/null
    end=$(date +%s.%N)
    rm -rf "$scratch"
    b1=$(bare)
    echo "question wall_s=$(python3 -c "print($end - $start)") bare=$(python3 -c "print(($b0 + $b1) / 2)")" >> "$out"
  done
  python3 - "$out" <<'PY'
import sys, statistics
lines = open(sys.argv[1]).read().splitlines()
rows = [dict(kv.split("=", 1) for kv in l.split()) for l in lines if l.startswith("kernel=")]
med = lambda xs: statistics.median(xs)
print(f"{'settled point':24s} {'wall s':>7s} {'sim ms':>7s} {'window':>7s} {'±%':>5s} {'M ev/s':>7s} {'bare M ev/s':>11s} {'share':>6s} {'wall at 20M':>11s}")
for k in sorted({r["kernel"] for r in rows}):
    rs = [r for r in rows if r["kernel"] == k]
    w = med([float(r["wall_s"]) for r in rs]); b = med([float(r["bare_engine_events_per_s"]) for r in rs])
    print(f"{k + ' 512 tasks':24s} {w:7.2f} {med([float(r['sim_ms']) for r in rs]):7.0f} "
          f"{med([float(r['window_ms']) for r in rs]):6.0f}ms {med([float(r['half_width_pct']) for r in rs]):5.2f} "
          f"{med([float(r['events_per_s']) for r in rs]) / 1e6:7.2f} {b / 1e6:11.2f} {med([float(r['engine_share']) for r in rs]):6.3f} "
          f"{w * b / 20e6:10.2f}s")
q = [dict(kv.split("=", 1) for kv in l.split()[1:]) for l in lines if l.startswith("question ")]
w = med([float(x["wall_s"]) for x in q]); b = med([float(x["bare"]) for x in q])
print(f"{'the question (8 points)':24s} {w:7.2f} {'':7s} {'':7s} {'':5s} {'':7s} {b / 1e6:11.2f} {'':6s} {w * b / 20e6:10.2f}s")
print(f"medians of {len(q)} sittings; 'wall at 20M' = wall x bare / 20 M events/s")
PY
  exit 0
fi
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
print(f"{'kernel':8s} {'tasks':>5s} {'ms/sim ms':>9s} {'wall s':>7s} {'us/task/sim ms':>14s} {'M ev/s':>7s} "
      f"{'M slab ops/s':>12s} {'RSS MB':>7s} {'bare M ev/s':>11s} {'engine share':>12s}")
for (k, n), rs in sorted(groups.items()):
    per_ms = med(rs, "wall_s_per_sim_ms")
    print(f"{k:8s} {n:5d} {per_ms*1e3:9.2f} {med(rs,'wall_s'):7.3f} {per_ms/n*1e6:14.2f} {med(rs,'events_per_s')/1e6:7.2f} "
          f"{med(rs,'slab_ops_per_s')/1e6:12.2f} {med(rs,'peak_rss_mb'):7.0f} {med(rs,'bare_engine_events_per_s')/1e6:11.2f} "
          f"{med(rs,'engine_share'):12.3f}")
print(f"medians of {len(rows) // max(1, len(groups))} runs per point; ms/sim ms = wall milliseconds per simulated "
      f"millisecond (the headline: engine events per second fall whenever the engine learns to skip a sync)")
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
