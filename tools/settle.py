#!/usr/bin/env python3
"""When does a run reach steady state? Reads the interval series of a long run and prints, per
experiment, variant and row, the settle time and the warm-up it asks for.

    slubsim validate --warmup 228ms --duration 12ms --interval 4ms --out /tmp/series
    python3 tools/settle.py /tmp/series [--tolerance 5] [--block-ms 24] [--tail-ms 60]

The rule: the steady throughput is the mean over the run's last TAIL ms; the run has settled at
the first interval edge t after which every BLOCK-ms stretch (consecutive intervals) has a mean
throughput within TOLERANCE percent of it. An experiment's warm-up is the latest settle time over
its topologies, variants and rows, rounded up to 10 ms, and never under 20 ms. A run that never
settles (an oscillation wider than the tolerance) is reported as such and counts as the whole
series.

The window: long enough that its mean throughput has a standard error of at most SE percent
(--se, 2) given the spread of the tail's intervals (taken as independent), at least 12 ms; the
experiment's window is the longest its runs ask for.
"""
import argparse
import glob
import json
import math
import os
import re
import statistics
import sys


def series(stats, n):
    out, i = [], 0
    while f"interval.{n}.{i:04d}.end_ms" in stats:
        key = f"interval.{n}.{i:04d}"
        out.append((stats[f"{key}.end_ms"], stats.get(f"{key}.ops_per_sec", 0), stats.get(f"{key}.spin_percent", 0)))
        i += 1
    return out


def settle_time(s, tolerance, block_ms, tail_ms):
    step = s[0][0]
    block = max(1, round(block_ms / step))
    tail = [x[1] for x in s if x[0] > s[-1][0] - tail_ms]
    steady = statistics.mean(tail)
    if steady <= 0:
        return 0.0, steady
    means = [statistics.mean(x[1] for x in s[j:j + block]) for j in range(len(s) - block + 1)]
    ok = [abs(m / steady - 1) * 100 <= tolerance for m in means]
    for i in range(len(ok)):
        if all(ok[i:]):
            return s[i][0] - step, steady
    return None, steady


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    ap.add_argument("--tolerance", type=float, default=5.0)
    ap.add_argument("--block-ms", type=float, default=24.0)
    ap.add_argument("--tail-ms", type=float, default=60.0)
    ap.add_argument("--se", type=float, default=2.0)
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.results, "*", "*", "*", "stats.json")))
    if not files:
        sys.exit(f"{a.results}: no <experiment>/<topology>/<variant>/stats.json (run validate --interval first)")
    worst, window = {}, {}
    for f in files:
        exp, topo, variant = f.split(os.sep)[-4:-1]
        stats = json.load(open(f))
        rows = sorted({int(m.group(1)) for k in stats for m in [re.match(r"interval\.(\d+)\.", k)] if m})
        if not rows:
            sys.exit(f"{f}: no interval.* keys (run validate --interval)")
        for n in rows:
            s = series(stats, n)
            t, steady = settle_time(s, a.tolerance, a.block_ms, a.tail_ms)
            step = s[0][0]
            tail = [x[1] for x in s if x[0] > s[-1][0] - a.tail_ms]
            rsd = statistics.pstdev(tail) / steady * 100 if steady > 0 else 0.0
            w = max(12.0, step * math.ceil((rsd / a.se) ** 2))
            shown = "never" if t is None else f"{t:.0f} ms"
            print(f"{exp} {topo} {variant} nr_task={n}: settles {shown} (steady {steady / 1e6:.2f} M ops/s, "
                  f"{rsd:.1f}% spread per {step:g} ms: window {w:.0f} ms)")
            worst[exp] = max(worst.get(exp, 0), s[-1][0] if t is None else t)
            window[exp] = max(window.get(exp, 0), w)
    print()
    for exp, t in sorted(worst.items()):
        print(f"{exp}: warm-up {max(20, 10 * math.ceil(t / 10)):.0f} ms (latest settle {t:.0f} ms), "
              f"window {window[exp]:.0f} ms")


if __name__ == "__main__":
    main()
