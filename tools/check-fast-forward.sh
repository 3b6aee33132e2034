#!/usr/bin/env bash
# Does fast-forward move results? Runs a job twice with the settle rule's windows: warmed up in
# detail (the default) and with --fast-forward FF, and prints per variant and row both means with
# their 95% half-widths, their difference, and each job's wall time. A row is OFF when the
# difference exceeds the larger of the two half-widths combined (sqrt(hw1^2 + hw2^2)) and TOL
# percent. Exit 1 if any row is OFF.
#   tools/check-fast-forward.sh [--ff 200ms] [--tol 2] [slubsim run options...]
# Without run options: the README's quick-start question and the 512-task points of the speed
# benchmark (mmap1 on amd-turin-2s-512t).
set -euo pipefail
cd "$(dirname "$0")/.."
ff=200ms; tol=2
while [[ "${1:-}" == --ff || "${1:-}" == --tol ]]; do
  case "$1" in
    --ff) ff=$2 ;;
    --tol) tol=$2 ;;
  esac
  shift 2
done
jobs=()
if [ $# -eq 0 ]; then
  jobs+=("--topology amd-turin-2s-512t --workload mmap1 --kernel v6.17,v7.0 --sheaf-capacity maple_node=32,64,128 --nr-task 128,384 --jobs 2")
  jobs+=("--topology amd-turin-2s-512t --workload mmap1 --kernel v6.17,v7.0 --nr-task 512 --jobs 2")
else
  jobs+=("$*")
fi
bash tools/setup.sh build >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
for i in "${!jobs[@]}"; do
  read -r -a args <<< "${jobs[$i]}"
  s0=$(date +%s.%N)
  ./build/slubsim run "${args[@]}" --quiet --out "$tmp/detailed$i" 2>/dev/null
  s1=$(date +%s.%N)
  ./build/slubsim run "${args[@]}" --quiet --fast-forward "$ff" --out "$tmp/ff$i" 2>/dev/null
  s2=$(date +%s.%N)
  python3 - "$tmp/detailed$i" "$tmp/ff$i" "$tol" "$(python3 -c "print($s1 - $s0)")" "$(python3 -c "print($s2 - $s1)")" "$ff" <<'PY' || bad=1
import json, math, os, sys
det, ffd, tol, w0, w1, ff = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
def variants(d):
    if os.path.exists(os.path.join(d, "stats.json")): return {"": d}
    return {v: os.path.join(d, v) for v in sorted(os.listdir(d)) if os.path.exists(os.path.join(d, v, "stats.json"))}
bad = 0
print(f"{'variant':36s} {'tasks':>5s} {'detailed M ops/s':>17s} {'window':>12s} {'fast-forward':>17s} {'window':>12s} {'diff':>7s}")
for v, d in variants(det).items():
    a = json.load(open(os.path.join(d, "stats.json")))
    b = json.load(open(os.path.join(ffd, v, "stats.json")))
    for k in sorted((k for k in a if k.startswith("will-it-scale.") and k.count(".") == 2 and k.split(".")[1].isdigit()
                     and k.endswith((".processes", ".threads"))), key=lambda k: int(k.split(".")[1])):
        n = k.split(".")[1]
        ha, hb = a.get(f"settle.{n}.half_width_percent", 0.0), b.get(f"settle.{n}.half_width_percent", 0.0)
        diff = 100.0 * (b[k] - a[k]) / a[k] if a[k] else 0.0
        off = abs(diff) > max(tol, math.hypot(ha, hb))
        bad += off
        un = lambda s: "!" if s.get(f"settle.{n}.unsettled", 0) == 1 else " "
        win = lambda s: f"{s.get(f'settle.{n}.warmup_ms', 0):.0f}+{s.get(f'settle.{n}.window_ms', 0):.0f}"
        print(f"{v or '-':36s} {n:>5s} {a[k] / 1e6:8.2f} ±{ha:4.1f}%{un(a)} {win(a):>12s} {b[k] / 1e6:8.2f} ±{hb:4.1f}%{un(b)} "
              f"{win(b):>12s} {diff:+6.1f}%{'  OFF' if off else ''}")
print(f"wall: detailed {w0:.1f} s, --fast-forward {ff} {w1:.1f} s ({w0 / w1:.2f}x); {bad} row(s) off by more than "
      f"max({tol}%, the half-widths combined); ! = not settled")
sys.exit(1 if bad else 0)
PY
done
exit $bad
