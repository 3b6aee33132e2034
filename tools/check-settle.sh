#!/usr/bin/env bash
# Are settled results the long-run mean? Runs a job twice: with the settle rule's windows (the
# defaults) and with a long fixed window (LONG after LONG_WARMUP), and prints per variant and row
# the settled mean with its 95% half-width, its warm-up and window, the long run's mean, and their
# difference. Exit 1 if any settled row is unsettled or more than TOL percent off the long run.
#   tools/check-settle.sh [--long 1s] [--long-warmup 500ms] [--tol 3] [slubsim run options...]
# The long run's warm-up is long (500 ms) so that it measures the long-run mean, slow transients
# (hundreds of ms on 384-task sheaf states) included.
# Without run options: the README's quick-start question (mmap1 on amd-turin-2s-512t, v6.17 and
# v7.0 with maple_node capacity 32/64/128, 128 and 384 processes).
set -euo pipefail
cd "$(dirname "$0")/.."
long=1s; long_warmup=500ms; tol=3
while [[ "${1:-}" == --long || "${1:-}" == --long-warmup || "${1:-}" == --tol ]]; do
  case "$1" in
    --long) long=$2 ;;
    --long-warmup) long_warmup=$2 ;;
    --tol) tol=$2 ;;
  esac
  shift 2
done
args=("$@")
if [ ${#args[@]} -eq 0 ]; then
  args=(--topology amd-turin-2s-512t --workload mmap1 --kernel v6.17,v7.0 --sheaf-capacity maple_node=32,64,128
        --nr-task 128,384 --jobs 2)
fi
bash tools/setup.sh build >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s.%N)
./build/slubsim run "${args[@]}" --quiet --out "$tmp/settled" 2>"$tmp/settled.err"
end=$(date +%s.%N)
./build/slubsim run "${args[@]}" --quiet --warmup "$long_warmup" --duration "$long" --out "$tmp/long" 2>/dev/null
python3 - "$tmp" "$tol" "$(python3 -c "print($end - $start)")" "$long_warmup" "$long" <<'PY'
import json, os, sys
tmp, tol, wall, lw, ld = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
def variants(d):
    if os.path.exists(os.path.join(d, "stats.json")): return {"": d}
    return {v: os.path.join(d, v) for v in sorted(os.listdir(d)) if os.path.exists(os.path.join(d, v, "stats.json"))}
bad = 0
print(f"{'variant':40s} {'tasks':>5s} {'settled M ops/s':>16s} {'warm-up':>8s} {'window':>7s} {'long M ops/s':>13s} {'diff':>7s}")
for v, d in variants(os.path.join(tmp, "settled")).items():
    s = json.load(open(os.path.join(d, "stats.json")))
    l = json.load(open(os.path.join(tmp, "long", v, "stats.json")))
    for k in sorted((k for k in s if k.startswith("will-it-scale.") and k.count(".") == 2 and k.split(".")[1].isdigit()
                     and k.endswith((".processes", ".threads"))),
                    key=lambda k: int(k.split(".")[1])):
        n = k.split(".")[1]
        m, lm = s[k], l[k]
        hw = s.get(f"settle.{n}.half_width_percent", float("nan"))
        diff = 100.0 * (m - lm) / lm if lm else 0.0
        unsettled = s.get(f"settle.{n}.unsettled", 0) == 1
        flag = "  UNSETTLED" if unsettled else ("  OFF" if abs(diff) > tol else "")
        bad += bool(flag)
        print(f"{v or '-':40s} {n:>5s} {m / 1e6:9.2f} ±{hw:5.2f}% {s[f'settle.{n}.warmup_ms']:6.0f}ms "
              f"{s[f'settle.{n}.window_ms']:5.0f}ms {lm / 1e6:13.2f} {diff:+6.1f}%{flag}")
print(f"settled job: {wall:.1f} s wall; long runs: {ld} after {lw}; {bad} row(s) unsettled or more than {tol}% off")
sys.exit(1 if bad else 0)
PY
