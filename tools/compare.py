#!/usr/bin/env python3
"""0-day-style comparison of slubsim result directories (like `lkp compare`).

    tools/compare.py BASE_DIR NEW_DIR [NEW_DIR2 ...] [--all] [--match REGEX]

Each directory holds matrix.json (one array per key, an element per run), as `slubsim run --out`
writes it. Columns follow lkp-tests' lib/compare.rb (workloads-and-lkp.md §3.5): the average over
runs, ±relative population stddev when it is above 2%, %change against the first directory
(absolute change for keys ending in % or starting with perf-profile, and for the why.*.percent
shares), then the key.

By default a row is shown when it changed the way lkp's changed_perf_stat? decides: the two sides'
sample ranges do not overlap around the medians and the ratio of medians is above 1.01 (1.05 for
keys outside the perf-metric prefixes); with fewer than 3 runs on both sides lkp shows nothing, so
this tool then falls back to |%change| >= 1. --all shows every key.
"""
import argparse
import json
import math
import os
import re
import sys

ABS_WIDTH = 10
REL_WIDTH = 10
PERF_METRIC_PREFIXES = ("perf-stat.", "proc-vmstat.", "turbostat.", "vmstat.cpu.", "lock_stat.", "slub_stats.", "why.")


def load(d):
    path = os.path.join(d, "matrix.json")
    try:
        with open(path) as f:
            m = json.load(f)
    except OSError as e:
        sys.exit(f"compare: error: {path}: {e.strerror}")
    except json.JSONDecodeError as e:
        sys.exit(f"compare: error: {path}: not valid JSON: {e}")
    if not isinstance(m, dict):
        sys.exit(f"compare: error: {path}: expected an object of arrays")
    return m


def mean(v):
    return sum(v) / len(v)


def pstddev(v):
    m = mean(v)
    return math.sqrt(sum((x - m) ** 2 for x in v) / len(v))


def median(v):
    s = sorted(v)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def trimmed(v):
    s = sorted(v)
    k = min(3, len(s) >> 5)
    return s[k:len(s) - k] if k else s


def fmt_avg(a):
    if abs(a) < 1000:
        return f"{a:{ABS_WIDTH}.2f}"
    if abs(a) > 1e8:
        return f"{a:{ABS_WIDTH}.4g}"
    return f"{int(round(a)):{ABS_WIDTH}d}"


def fmt_err(v):
    a = mean(v)
    if a == 0 or len(v) < 2:
        return "      "
    e = 100 * pstddev(v) / abs(a)
    return f" ±{int(round(e)):3d}%" if e > 2 else "      "


def absolute_key(k):
    return k.endswith("%") or k.startswith("perf-profile") or (k.startswith("why.") and k.endswith(".percent"))


def fmt_change(k, a, b):
    if absolute_key(k):
        return f"{b - a:+{REL_WIDTH}.1f}"
    if a == 0:
        return f"{'':>{REL_WIDTH - 1}}- "
    p = 100 * (b - a) / abs(a)
    return f"{p:+{REL_WIDTH}.2g}%" if abs(p) >= 1e5 else f"{p:+{REL_WIDTH}.1f}%"


def changed(k, va, vb):
    if len(va) < 3 and len(vb) < 3:
        a, b = mean(va), mean(vb)
        if absolute_key(k):
            return abs(b - a) >= 1
        return a != b and (a == 0 or abs(100 * (b - a) / a) >= 1)
    ta, tb = trimmed(va), trimmed(vb)
    ma, mb = median(ta), median(tb)
    if not ((min(tb) > ma and mb > max(ta)) or (max(tb) < ma and mb < min(ta))):
        return False
    lo, hi = sorted([abs(ma), abs(mb)])
    if lo == 0:
        return True
    limit = 1.01 if k.startswith(PERF_METRIC_PREFIXES) else 1.05
    return hi / lo > limit


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+", help="result directories; the first is the base")
    ap.add_argument("--all", action="store_true", help="show every key, changed or not")
    ap.add_argument("--match", default=None, help="only keys matching this regular expression")
    args = ap.parse_args()
    if len(args.dirs) < 2:
        ap.error("give a base directory and at least one to compare with it")
    mats = [load(d) for d in args.dirs]
    keys = [k for k in mats[0] if all(k in m for m in mats[1:])]
    keys += [k for m in mats[1:] for k in m if k not in mats[0] and k not in keys]
    if args.match:
        rx = re.compile(args.match)
        keys = [k for k in keys if rx.search(k)]

    names = [os.path.basename(os.path.normpath(d)) for d in args.dirs]
    print("=" * 120)
    print("result dirs:")
    for d in args.dirs:
        print(f"  {d}")
    print()
    head = "".join(f"{n[:ABS_WIDTH + 6]:>{ABS_WIDTH + 6}} " + (" " * (REL_WIDTH + 2) if i else "")
                   for i, n in enumerate(names))
    print(head)
    print("".join(f"{'-' * (ABS_WIDTH + 6):>{ABS_WIDTH + 6}} " + (" " * (REL_WIDTH + 2) if i else "")
                  for i in range(len(names))))
    print(f"{'%stddev':>{ABS_WIDTH + 6}}" + "".join(f"{'%change':>{REL_WIDTH + 2}} {'%stddev':>{ABS_WIDTH + 6}}" for _ in names[1:]))
    bs = "\\"
    print(f"{bs:>{ABS_WIDTH}}      " + "".join(f"{'|':>{REL_WIDTH}}   {bs:>{ABS_WIDTH}}      " for _ in names[1:]))
    shown = 0
    for k in keys:
        vals = [[float(x) for x in m.get(k, [0])] for m in mats]
        if not args.all and not any(changed(k, vals[0], v) for v in vals[1:]):
            continue
        base = mean(vals[0])
        line = fmt_avg(base) + fmt_err(vals[0])
        for v in vals[1:]:
            line += " " + fmt_change(k, base, mean(v)) + " " + fmt_avg(mean(v)) + fmt_err(v)
        print(f"{line}  {k}")
        shown += 1
    if shown == 0:
        print("(no key changed; --all shows them all)")


if __name__ == "__main__":
    main()
