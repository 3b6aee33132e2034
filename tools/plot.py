#!/usr/bin/python3
"""Plots of slubsim results, as PNG (Debian's python3-matplotlib; run with /usr/bin/python3).

    tools/plot.py scaling DIR [DIR ...] -o out.png [--title T]
        throughput (will-it-scale.N.processes or .threads) against nr_task, one line per result
        directory (e.g. one per kernel variant of a sweep)
    tools/plot.py experiment RESULTS/<id>/<topology> -o out.png [--published configs/experiments/<id>.json]
        the same for every variant dir of one experiment on one machine; with --published, the
        published absolute values of the cells (will-it-scale.N.processes metrics) as hollow
        markers in the variant's colour, and a per_process_ops panel when cells give that
    tools/plot.py capacity DIR [DIR ...] -o out.png [--key KEY] [--cache NAME]
        ops per task (will-it-scale.N.processes / N, one line per nr_task, and per_process_ops)
        against the sheaf capacity parsed from variant dir names such as
        v6.18_sheaf_capacity=maple_node=64; --key K plots stats key K instead ({N} in K stands
        for each nr_task); variants without a capacity are dotted reference lines
    tools/plot.py sweep DIR [DIR ...] -o out.png [--key KEY]
        one value per directory (default per_process_ops), bars labelled with the dir names
    tools/plot.py locks DIR [DIR ...] -o out.png
        lock wait time (lock_stat.<class>[.node<k>].waittime-total) stacked per class and node,
        one bar per variant dir
    tools/plot.py why DIR [DIR ...] -o out.png
        why.<category>.percent stacked, one bar per variant dir (says so and writes nothing when
        the results have no why keys)
    tools/plot.py advise OUT/advice.json -o out.png
        slubsim advise's settings: throughput (with its 95% CI) against SUnreclaim, one panel
        per task count (settings whose windows did not settle drawn hollow, off the front); the
        Pareto front (no other setting both faster beyond the CIs and
        cheaper) joined, the pick ringed, the kernel's defaults a square
    tools/plot.py scoreboard results/scoreboard.json -o out.png
        simulated against published delta per cell, y = x and the ±3 point band, by experiment
        (says so and writes nothing when no cell has a simulated delta yet)

Each DIR is a variant dir holding stats.json (as `slubsim run --out` writes it) or a dir of
variant dirs (results/<id>/<topology>). Bad input: `plot: error: FILE: what is wrong`, exit
code 2, no output file.
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results_io as rio  # noqa: E402

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
    from matplotlib.lines import Line2D
except ImportError:
    sys.exit("plot: error: matplotlib is missing: apt-get install python3-matplotlib, and run with /usr/bin/python3")

COLOURS = plt.rcParams["axes.prop_cycle"].by_key()["color"]


def colour(i):
    # The default cycle's ten, then the lighter shades of tab20: twenty distinct colours before
    # any repeats (a why plot can stack more than ten categories).
    if i < len(COLOURS):
        return COLOURS[i]
    j = i - len(COLOURS)
    return plt.get_cmap("tab20")((2 * j + 1) % 20) if j < 10 else COLOURS[i % len(COLOURS)]


def short(text, n=48):
    """Shortened for legends and ticks; variant names lose their '_sheaf_capacity=' spelling."""
    text = text.replace("_sheaf_capacity=", " cap ")
    return text if len(text) <= n else text[:n - 1] + "…"


def save(fig, path):
    """Write the PNG through a temporary file, so a failure leaves no partial output."""
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise rio.InputError(f"{path}: the directory does not exist")
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".plot.", suffix=".png")
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes it 0600; the file gets the usual mode
    try:
        fig.savefig(tmp, dpi=110, metadata={"Software": None})
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    plt.close(fig)


def stats_of(variants):
    return [(label, d, rio.load_stats(d)) for label, d in variants]


def runs_spread(d, key):
    """(min, max) over runs of a key from matrix.json, or None with fewer than 2 runs."""
    runs = rio.key_runs(rio.load_matrix(d), key)
    return (min(runs), max(runs)) if len(runs) > 1 else None


# ---- throughput against nr_task ------------------------------------------------------------------

def draw_throughput(ax, variants, names=None):
    """One line per variant; returns {label: colour}."""
    colours = {}
    for i, (label, d, s) in enumerate(variants):
        rows = sorted(rio.throughput(s).items())
        if not rows:
            raise rio.InputError(f"{d}/stats.json: no will-it-scale.<N>.processes keys")
        c = colour(i)
        colours[label] = c
        xs = [n for n, _ in rows]
        ys = [v / 1e6 for _, v in rows]
        ax.plot(xs, ys, marker="o", color=c, label=short((names or {}).get(label, label)))
        mode = "threads" if any(k.endswith(".threads") for k in s) else "processes"
        for n, y in zip(xs, ys):
            spread = runs_spread(d, f"will-it-scale.{n}.{mode}")
            if spread:
                ax.plot([n, n], [spread[0] / 1e6, spread[1] / 1e6], color=c, lw=1, alpha=0.6)
    ticks = sorted({n for _, _, s in variants for n in rio.throughput(s)})
    if len(ticks) <= 12:
        ax.set_xticks(ticks)
    ax.set_xlabel("nr_task")
    ax.set_ylabel("operations per second (millions)")
    ax.grid(True, alpha=0.3)
    return colours


def scaling(args):
    variants = stats_of(rio.variant_dirs(args.dirs))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    draw_throughput(ax, variants)
    ax.legend(fontsize=8)
    ax.set_title(args.title or "throughput against task count")
    fig.tight_layout()
    save(fig, args.output)


def experiment(args):
    if len(args.dirs) != 1:
        raise rio.InputError("command line: experiment takes one RESULTS/<id>/<topology> directory")
    top = args.dirs[0]
    variants = stats_of(rio.variant_dirs([top]))
    exp = rio.load_experiment(args.published) if args.published else {"variants": [], "cells": []}
    labels = [l for l, _, _ in variants]
    names = {}
    for v in exp["variants"]:
        m = rio.match_variant(v["name"], exp, labels)
        if m and v["label"]:
            names[m] = f"{m}: {v['label']}"
    ppo_cells = [c for c in exp["cells"] if c["per_process_ops"]]
    if ppo_cells:
        fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.5), gridspec_kw={"width_ratios": [3, 2]})
    else:
        fig, ax = plt.subplots(figsize=(7.5, 4.5))
    colours = draw_throughput(ax, variants, names)

    # Published absolute values, hollow markers of the variant's colour.
    seen, unmatched = set(), set()
    for c in exp["cells"]:
        if c["nr_task"] is None:
            continue
        for side in ("baseline", "test"):
            v, name = c[f"published_{side}"], c[side]
            if v is None or name is None:
                continue
            label = rio.match_variant(str(name), exp, labels)
            if (label, c["nr_task"], v) in seen:
                continue
            seen.add((label, c["nr_task"], v))
            if label is None:
                unmatched.add(str(name))
            ax.plot([c["nr_task"]], [v / 1e6], linestyle="none", marker="o", markersize=10,
                    markerfacecolor="none", markeredgewidth=1.6, color=colours.get(label, "grey"))
    handles, texts = ax.get_legend_handles_labels()
    if seen:
        handles.append(Line2D([], [], linestyle="none", marker="o", markersize=9, markerfacecolor="none", color="black"))
        texts.append("published (hollow)" + (f"; grey: no result for {', '.join(sorted(unmatched))}" if unmatched else ""))
    ax.legend(handles, [short(t, 60) for t in texts], fontsize=7)
    parts = os.path.normpath(top).split(os.sep)
    ax.set_title(args.title or f"{'/'.join(parts[-2:])}: throughput against task count", fontsize=10)

    if ppo_cells:
        key_of = lambda s: "will-it-scale.per_thread_ops" if "will-it-scale.per_thread_ops" in s else "will-it-scale.per_process_ops"
        xs = range(len(variants))
        ax2.bar(xs, [s.get(key_of(s), 0) for _, _, s in variants], color=[colours[l] for l in labels], alpha=0.7)
        for c in ppo_cells:
            for side in ("baseline", "test"):
                v, name = c[f"published_{side}"], c[side]
                label = rio.match_variant(str(name), exp, labels) if name is not None else None
                if v is None or label is None:
                    continue
                ax2.plot([labels.index(label)], [v], linestyle="none", marker="o", markersize=10,
                         markerfacecolor="none", markeredgewidth=1.6, color="black")
        ax2.set_xticks(list(xs))
        ax2.set_xticklabels([short(l, 24) for l in labels], rotation=20, ha="right", fontsize=7)
        ax2.set_ylabel("per_process_ops (bars: simulated; hollow: published)", fontsize=8)
        ax2.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    save(fig, args.output)


# ---- sheaf capacity --------------------------------------------------------------------------

def capacity(args):
    variants = stats_of(rio.variant_dirs(args.dirs))
    points, refs = {}, []         # kernel -> [(capacity, label, dir, stats)]
    for label, d, s in variants:
        kernel, caps = rio.parse_capacity(label)
        if caps is None:
            refs.append((label, d, s))
            continue
        if args.cache is not None:
            if args.cache not in caps:
                raise rio.InputError(f"{d}: no capacity for cache '{args.cache}' in the dir name")
            x = caps[args.cache]
        elif len(caps) == 1:
            x = next(iter(caps.values()))
        else:
            raise rio.InputError(f"{d}: several caches in the capacity ({label}); choose one with --cache")
        points.setdefault(kernel, []).append((x, label, d, s))
    if not points:
        raise rio.InputError(f"{' '.join(args.dirs)}: no variant dir named <kernel>_sheaf_capacity=...; "
                             f"run slubsim with --sheaf-capacity and several values")

    def series(s, d):
        """[(name, value)] for one variant."""
        if args.key and "{N}" not in args.key:
            return [(args.key, s[rio.resolve_key(s, args.key, d)])]
        out = []
        for n in sorted(rio.throughput(s)):
            k = args.key.replace("{N}", str(n)) if args.key else None
            if k is None:
                mode = "threads" if f"will-it-scale.{n}.threads" in s else "processes"
                out.append((f"nr_task={n}", s[f"will-it-scale.{n}.{mode}"] / n))
            elif k in s:
                out.append((f"nr_task={n}", s[k]))
        if not args.key:
            out.append(("per_process_ops (mean over nr_task)", s[rio.resolve_key(s, "per_process_ops", d)]))
        return out

    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    styles = ["-", "--", "-.", ":"]
    names = []
    every = [(d, s) for pts in points.values() for (_, _, d, s) in pts] + [(d, s) for _, d, s in refs]
    for d, s in every:
        for name, _ in series(s, d):
            if name not in names:
                names.append(name)
    col = {n: ("black" if n.startswith("per_process_ops") else colour(i)) for i, n in enumerate(names)}
    xs_all = set()
    for ki, (kernel, pts) in enumerate(sorted(points.items(), key=lambda x: rio.natural_key(x[0]))):
        pts.sort(key=lambda p: p[0])
        xs_all.update(p[0] for p in pts)
        by_name = {}
        for x, _, d, s in pts:
            for name, y in series(s, d):
                by_name.setdefault(name, []).append((x, y))
        for name in names:
            if name in by_name:
                xy = by_name[name]
                lbl = name if len(points) == 1 else f"{kernel} {name}"
                ax.plot([p[0] for p in xy], [p[1] for p in xy], marker="o", linestyle=styles[ki % 4],
                        color=col[name], lw=2.2 if col[name] == "black" else 1.5, label=short(lbl))
    for ri, (label, d, s) in enumerate(refs):
        for name, y in series(s, d):
            ax.axhline(y, color=col[name], linestyle=":", lw=1, alpha=0.8)
        ax.plot([], [], color="grey", linestyle=":", label=short(f"{label} (no sheaf capacity), dotted"))
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(xs_all))
    ax.set_xticklabels([str(x) for x in sorted(xs_all)])
    ax.set_xlabel("sheaf capacity" + (f" ({args.cache})" if args.cache else ""))
    ax.set_ylabel(args.key or "operations per second per task")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title(args.title or "against sheaf capacity", fontsize=10)
    fig.tight_layout()
    save(fig, args.output)


def sweep(args):
    variants = stats_of(rio.variant_dirs(args.dirs))
    vals = [s[rio.resolve_key(s, args.key, d)] for _, d, s in variants]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.bar(range(len(vals)), vals)
    ax.set_xticks(range(len(vals)))
    ax.set_xticklabels([short(l, 32) for l, _, _ in variants], rotation=20, ha="right", fontsize=8)
    ax.set_ylabel(args.key)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title(args.title or args.key)
    fig.tight_layout()
    save(fig, args.output)


# ---- stacked bars: locks and why -------------------------------------------------------------

def stacked(ax, labels, segments, seg_colour, seg_hatch=None):
    """segments: [(segment name, [value per bar])], drawn bottom-up."""
    bottom = [0.0] * len(labels)
    for name, vals in segments:
        ax.bar(range(len(labels)), vals, bottom=bottom, color=seg_colour(name), edgecolor="white",
               linewidth=0.5, hatch=seg_hatch(name) if seg_hatch else None)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels([short(l, 32) for l in labels], rotation=20, ha="right", fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    return bottom


def locks(args):
    variants = stats_of(rio.variant_dirs(args.dirs))
    waits = [rio.lock_wait(s) for _, _, s in variants]
    classes = sorted({c for w in waits for c in w}, key=lambda c: -sum(sum(w.get(c, {}).values()) for w in waits))
    if not classes:
        raise rio.InputError(f"{' '.join(args.dirs)}: no lock_stat.<class>.waittime-total keys")
    nodes = sorted({i for w in waits for c in w for i in w[c]}, key=rio.natural_key)
    segs = []
    for c in classes:
        for i in nodes:
            vals = [w.get(c, {}).get(i, 0.0) / 1e3 for w in waits]
            if any(vals):
                segs.append(((c, i), vals))
    hatches = ["", "//", "..", "xx", "\\\\", "oo", "--", "++"]
    node_only = [i for i in nodes if i]
    fig, ax = plt.subplots(figsize=(8, 4.8))
    stacked(ax, [l for l, _, _ in variants], segs,
            lambda s: colour(classes.index(s[0])),
            lambda s: hatches[node_only.index(s[1]) % len(hatches)] if s[1] else "")
    handles = [Patch(color=colour(i), label=c) for i, c in enumerate(classes)]
    handles += [Patch(facecolor="white", edgecolor="grey", hatch=hatches[k % len(hatches)], label=n)
                for k, n in enumerate(node_only)]
    ax.legend(handles=handles, fontsize=7, bbox_to_anchor=(1.01, 1), loc="upper left")
    ax.set_ylabel("lock wait time over the job (ms)")
    ax.set_title(args.title or "lock wait by class and node (lock_stat waittime-total)", fontsize=10)
    fig.tight_layout()
    save(fig, args.output)


def why_bars(variants):
    """One bar per variant x task count: ([bar label], [{category: percent}]). The categories are
    the exclusive ones of why.<N>.<category>.percent, which sum to 100% of task time: the
    spin.<call chain> keys break lock waits down further and are left out, as is spin (their
    total, why.<N>.spin.percent), and a lock's waits
    (wait.<class>.<instance>) are summed over its instances. Results with only the means over rows
    (why.<category>.percent) give one bar per variant."""
    bars, per = [], []
    for label, _, s in variants:
        rows = {}
        for k, v in rio.why_percent(s).items():
            n, _, cat = k.partition(".")
            if n.isdigit() and cat:
                rows.setdefault(int(n), {})[cat] = v
            else:
                rows.setdefault(None, {})[k] = v
        keyed = sorted(n for n in rows if n is not None)
        for n in keyed or ([None] if None in rows else []):
            cats = {}
            for cat, v in rows[n].items():
                if cat == "spin" or cat.startswith("spin."):
                    continue
                parts = cat.split(".")
                if parts[0] == "wait" and len(parts) >= 3:
                    cat = "wait: " + ".".join(parts[1:-1])
                cats[cat] = cats.get(cat, 0.0) + v
            bars.append(label if n is None else f"{label} N={n}")
            per.append(cats)
    return bars, per


def why(args):
    variants = stats_of(rio.variant_dirs(args.dirs))
    bars, per = why_bars(variants)
    cats = sorted({c for p in per for c in p}, key=lambda c: -sum(p.get(c, 0) for p in per))
    if not cats:
        print(f"plot: {' '.join(args.dirs)}: no why.<category>.percent keys; nothing to plot, {args.output} not written")
        return False
    fig, ax = plt.subplots(figsize=(max(8, 0.55 * len(bars) + 3), 5.6))
    stacked(ax, bars, [(c, [p.get(c, 0.0) for p in per]) for c in cats], lambda c: colour(cats.index(c)))
    ax.set_xticklabels([short(b, 32) for b in bars], rotation=35, ha="right", fontsize=7)
    ax.set_ylim(0, 100)
    ax.legend(handles=[Patch(color=colour(i), label=short(c, 40)) for i, c in enumerate(cats)], fontsize=7,
              loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=3, frameon=False)
    ax.set_ylabel("percent of task time")
    ax.set_title(args.title or "where the time goes, per variant and task count (why.<N>.<category>.percent)",
                 fontsize=10)
    fig.tight_layout()
    save(fig, args.output)


# ---- the validation scoreboard ---------------------------------------------------------------

def scoreboard(args):
    if len(args.dirs) != 1:
        raise rio.InputError("command line: scoreboard takes one scoreboard.json")
    cells = rio.load_scoreboard(args.dirs[0])
    have = [c for c in cells if c["published_delta_pct"] is not None and c["simulated_delta_pct"] is not None]
    if not have:
        print(f"plot: {args.dirs[0]}: no cell has both published_delta_pct and simulated_delta_pct; "
              f"nothing to plot, {args.output} not written")
        return False
    exps = sorted({c["experiment"] for c in have}, key=rio.natural_key)
    xs = [c["published_delta_pct"] for c in have] + [c["simulated_delta_pct"] for c in have]
    lim = max(10.0, max(abs(v) for v in xs) * 1.1)
    fig, ax = plt.subplots(figsize=(6.5, 6))
    ax.fill_between([-lim, lim], [-lim - 3, lim - 3], [-lim + 3, lim + 3], color="green", alpha=0.12,
                    label="within ±3 points of published")
    ax.add_patch(plt.Rectangle((-3, -3), 6, 6, fill=False, linestyle=":", edgecolor="green",
                               label="no change: both |delta| < 3%"))
    ax.plot([-lim, lim], [-lim, lim], color="green", lw=1, label="simulated = published")
    ax.axhline(0, color="grey", lw=0.6)
    ax.axvline(0, color="grey", lw=0.6)
    # Filled circles: predicted cells within one source tree; hollow diamonds: across releases
    # (the published change also holds the non-slab changes between the trees); hollow squares:
    # fitted cells.
    for i, e in enumerate(exps):
        for fitted, across in ((False, False), (False, True), (True, False), (True, True)):
            sel = [c for c in have if c["experiment"] == e and c["fitted"] == fitted
                   and c["across_releases"] == across]
            if sel:
                marker = "s" if fitted else "D" if across else "o"
                ax.scatter([c["published_delta_pct"] for c in sel], [c["simulated_delta_pct"] for c in sel],
                           color=colour(i), marker=marker, s=36,
                           facecolors="none" if fitted or across else colour(i),
                           label=e + (" (fitted)" if fitted else "") + (" (across releases)" if across else ""))
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_aspect("equal")
    ax.set_xlabel("published delta (%)")
    ax.set_ylabel("simulated delta (%)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    missing = len(cells) - len(have)
    near = sum(1 for c in have if abs(c["simulated_delta_pct"] - c["published_delta_pct"]) <= 3)
    agree = sum(1 for c in have if c["agree"])
    ax.set_title(args.title or f"scoreboard: sign agrees in {agree} of {len(have)} cells, "
                 f"{near} within ±3 points" + (f"\n({missing} cells without a simulated value)" if missing else ""),
                 fontsize=10)
    fig.tight_layout()
    save(fig, args.output)


def pareto(points):
    """Indices of the points no other point dominates: at most as much memory and faster beyond
    both confidence intervals (the advisor's notion of faster), or as fast and cheaper."""
    front = []
    for i, (m, ops, hw) in enumerate(points):
        dominated = False
        for j, (m2, ops2, hw2) in enumerate(points):
            if j == i:
                continue
            faster = ops2 - ops > (hw ** 2 + hw2 ** 2) ** 0.5
            tied = not faster and abs(ops2 - ops) <= (hw ** 2 + hw2 ** 2) ** 0.5
            if (m2 <= m and faster) or (m2 < m and tied):
                dominated = True
                break
        if not dominated:
            front.append(i)
    return sorted(front, key=lambda i: points[i][0])


def advise(args):
    if len(args.dirs) != 1:
        raise rio.InputError("command line: advise takes one advice.json")
    path = args.dirs[0]
    a = rio.read_json(path)
    try:
        rows = a["rows"]
        panels = [(r["nr_task"], r["settings"], r.get("best")) for r in rows]
    except (KeyError, TypeError) as e:
        raise rio.InputError(f"{path}: not slubsim advise's advice.json (missing {e})")
    if not panels:
        raise rio.InputError(f"{path}: no task counts")
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.4), squeeze=False)
    for ax, (n, settings, best) in zip(axes[0], panels):
        pts = [(s["sunreclaim_kb"] / 1024.0, s["ops_per_sec"], s["half_width"]) for s in settings]
        names = [s["setting"] for s in settings]
        settled = [bool(s.get("settled", True)) for s in settings]
        ok = [i for i in range(len(pts)) if settled[i]]
        loose = [i for i in range(len(pts)) if not settled[i]]
        ax.errorbar([pts[i][0] for i in ok], [pts[i][1] for i in ok], yerr=[pts[i][2] for i in ok], fmt="o", ms=4,
                    color=colour(0), alpha=0.6, label="a setting (± 95% CI)")
        if loose:
            # Not a result: shown hollow, never on the front (the advisor never picks one).
            ax.errorbar([pts[i][0] for i in loose], [pts[i][1] for i in loose], yerr=[pts[i][2] for i in loose],
                        fmt="o", ms=5, mfc="none", color="grey", alpha=0.8, label="not settled within the cap")
            for i in loose:
                ax.annotate(short(names[i].replace("maple_node/", "mn/").replace("vm_area_struct/", "vma/"), 40),
                            (pts[i][0], pts[i][1]), fontsize=6, color="grey", xytext=(3, -8),
                            textcoords="offset points")
        front = [ok[k] for k in pareto([pts[i] for i in ok])]
        ax.plot([pts[i][0] for i in front], [pts[i][1] for i in front], "-", color=colour(1), lw=1.2,
                label="Pareto front")
        for i in front:
            ax.annotate(short(names[i].replace("maple_node/", "mn/").replace("vm_area_struct/", "vma/"), 40),
                        (pts[i][0], pts[i][1]), fontsize=6, xytext=(3, 3), textcoords="offset points")
        for i, nm in enumerate(names):
            if nm == "kernel defaults":
                ax.plot([pts[i][0]], [pts[i][1]], "s", ms=8, mfc="none", color="black", label="kernel defaults")
            if best and nm == best["setting"]:
                ax.plot([pts[i][0]], [pts[i][1]], "o", ms=12, mfc="none", color=colour(3), mew=2, label="the pick")
        ax.set_title(f"{n} tasks", fontsize=10)
        ax.set_xlabel("SUnreclaim (MB)")
        ax.set_ylabel("ops/s")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    fig.suptitle(args.title or f"slubsim advise: {a.get('workload')} on {a.get('topology')}, {a.get('kernel')}",
                 fontsize=11)
    fig.tight_layout()
    save(fig, args.output)


KINDS = {"scaling": scaling, "experiment": experiment, "capacity": capacity, "sweep": sweep,
         "locks": locks, "why": why, "scoreboard": scoreboard, "advise": advise}


class Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        sys.stderr.write(f"plot: error: command line: {message}\n")
        sys.exit(2)


def main():
    ap = Parser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("kind", choices=list(KINDS))
    ap.add_argument("dirs", nargs="+", metavar="DIR_OR_FILE")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--key", default=None, help="stats key (sweep: default will-it-scale.per_process_ops)")
    ap.add_argument("--cache", default=None, help="capacity: the cache whose capacity is the x axis")
    ap.add_argument("--published", default=None, metavar="EXPERIMENT.json", help="experiment: published values")
    ap.add_argument("--title", default=None)
    args = ap.parse_args()
    if args.kind == "sweep" and args.key is None:
        args.key = "will-it-scale.per_process_ops"
    try:
        wrote = KINDS[args.kind](args)
    except rio.InputError as e:
        sys.stderr.write(f"plot: error: {e}\n")
        sys.exit(2)
    if wrote is not False:
        print(f"plot: wrote {args.output}")


if __name__ == "__main__":
    main()
