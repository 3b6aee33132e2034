#!/usr/bin/env python3
"""Plots of slubsim results, as PNG (Debian's python3-matplotlib; run with /usr/bin/python3).

    tools/plot.py scaling DIR [DIR ...] -o out.png [--title T]
        throughput (will-it-scale.N.processes or .threads) against nr_task, one line per result
        directory (e.g. one per kernel variant of a sweep)
    tools/plot.py sweep DIR [DIR ...] -o out.png [--key KEY]
        one value per directory (default per_process_ops), e.g. a sheaf capacity sweep; the x
        labels are the directory names
    tools/plot.py locks DIR [DIR ...] -o out.png
        lock wait time per lock class (lock_stat.<class>.waittime-total), stacked per directory
    tools/plot.py why DIR [DIR ...] -o out.png
        where the tasks' time goes (why.<category>.percent), stacked per directory

Each DIR holds stats.json as `slubsim run --out` writes it.
"""
import argparse
import json
import os
import re
import sys

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot: error: matplotlib is missing: apt-get install python3-matplotlib, and run with /usr/bin/python3")


def load(d):
    path = os.path.join(d, "stats.json")
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        sys.exit(f"plot: error: {path}: {e.strerror}")
    except json.JSONDecodeError as e:
        sys.exit(f"plot: error: {path}: not valid JSON: {e}")


def label(d):
    return os.path.basename(os.path.normpath(d))


def scaling(args):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for d in args.dirs:
        s = load(d)
        rows = []
        for k, v in s.items():
            m = re.fullmatch(r"will-it-scale\.(\d+)\.(processes|threads)", k)
            if m:
                rows.append((int(m.group(1)), v))
        rows.sort()
        if not rows:
            sys.exit(f"plot: error: {d}/stats.json: no will-it-scale.<N>.processes keys")
        ax.plot([r[0] for r in rows], [r[1] / 1e6 for r in rows], marker="o", label=label(d))
    ax.set_xlabel("nr_task")
    ax.set_ylabel("operations per second (millions)")
    ax.grid(True, alpha=0.3)
    ax.legend()
    ax.set_title(args.title or "throughput against task count")
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)


def sweep(args):
    key = args.key
    vals = []
    for d in args.dirs:
        s = load(d)
        if key not in s:
            sys.exit(f"plot: error: {d}/stats.json: no key {key}")
        vals.append(s[key])
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.bar(range(len(vals)), vals)
    ax.set_xticks(range(len(vals)))
    ax.set_xticklabels([label(d) for d in args.dirs], rotation=20, ha="right", fontsize=8)
    ax.set_ylabel(key)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title(args.title or key)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)


def locks(args):
    per_dir = []
    classes = []
    for d in args.dirs:
        s = load(d)
        w = {}
        for k, v in s.items():
            m = re.fullmatch(r"lock_stat\.(.+)\.waittime-total", k)
            if m and not re.search(r"\.node\d+$|\.mm\d+$|\.task\d+$", m.group(1)):
                w[m.group(1)] = v
                if m.group(1) not in classes:
                    classes.append(m.group(1))
        per_dir.append(w)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    bottom = [0.0] * len(per_dir)
    for c in classes:
        h = [w.get(c, 0.0) / 1e3 for w in per_dir]
        ax.bar(range(len(per_dir)), h, bottom=bottom, label=c)
        bottom = [b + x for b, x in zip(bottom, h)]
    ax.set_xticks(range(len(per_dir)))
    ax.set_xticklabels([label(d) for d in args.dirs], rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("lock wait time in the windows (ms)")
    ax.legend(fontsize=8)
    ax.set_title(args.title or "lock wait by class")
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)


def why(args):
    per_dir = []
    cats = []
    for d in args.dirs:
        s = load(d)
        w = {}
        for k, v in s.items():
            m = re.fullmatch(r"why\.(.+)\.percent", k)
            if m:
                w[m.group(1)] = v
                if m.group(1) not in cats:
                    cats.append(m.group(1))
        if not w:
            sys.exit(f"plot: error: {d}/stats.json: no why.<category>.percent keys")
        per_dir.append(w)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    bottom = [0.0] * len(per_dir)
    for c in cats:
        h = [w.get(c, 0.0) for w in per_dir]
        ax.bar(range(len(per_dir)), h, bottom=bottom, label=c)
        bottom = [b + x for b, x in zip(bottom, h)]
    ax.set_xticks(range(len(per_dir)))
    ax.set_xticklabels([label(d) for d in args.dirs], rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("share of the tasks' time in the window (%)")
    ax.legend(fontsize=7)
    ax.set_title(args.title or "where the time goes")
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kind", choices=["scaling", "sweep", "locks", "why"])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--key", default="will-it-scale.per_process_ops")
    ap.add_argument("--title", default=None)
    args = ap.parse_args()
    {"scaling": scaling, "sweep": sweep, "locks": locks, "why": why}[args.kind](args)
    print(f"plot: wrote {args.output}")


if __name__ == "__main__":
    main()
