#!/usr/bin/env bash
# Engine benchmark: median wall time and events per second of a 512-CPU stand-in run.
#   tools/bench.sh [topology] [nr_task] [duration] [repetitions]
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh build >/dev/null
./build/slubsim_bench "${1:-amd-turin-2s-512t}" "${2:-512}" "${3:-50ms}" "${4:-7}" | tee /tmp/slubsim_bench.txt
python3 - /tmp/slubsim_bench.txt <<'PY'
import sys, statistics
rows = [dict(kv.split("=") for kv in line.split()) for line in open(sys.argv[1]) if line.startswith("rep=")]
med = lambda k: statistics.median(float(r[k]) for r in rows)
print(f"median over {len(rows)} runs: wall {med('wall_s'):.3f} s, {med('events_per_s')/1e6:.2f} M events/s, "
      f"{med('requests_per_s')/1e6:.2f} M requests/s, simulated {med('sim_ms'):.1f} ms "
      f"({med('sim_ms')/1e3/med('wall_s'):.3f} simulated s per wall s)")
PY
