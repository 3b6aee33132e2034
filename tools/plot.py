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
        for each nr_task); variants without a capacity are dotted reference lines. Each point's
        95% confidence interval is an error bar (settle.<N>.half_width, combined over runs from
        matrix.json; / N for ops per task); a window that did not settle (settle.<N>.unsettled)
        or was not judged (settle.<N>.unjudged) is a hollow marker. The y axis starts at 0; the
        title names the workload, machine, kernels and task counts, read from the job's
        index.json (DIR/index.json of `slubsim run --out DIR`, a sweep's per-job index.json) or,
        for results/<id>/<topology>/<variant>, from configs/experiments/<id>.json
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
code 2, no output file. --describe FILE.json (any kind) also writes what the figure shows, read
back from it: per axes the title, axis labels and limits, legend texts, lines (data, hollow
markers) and error bars (x, low, high), for tests and scripts.
"""
import argparse
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results_io as rio  # noqa: E402

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker
    from matplotlib.container import ErrorbarContainer
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


DESCRIBE = None   # --describe FILE: what the plot shows, as JSON (describe())


def describe(fig):
    """What a figure shows, read back from matplotlib's objects (so a test checks what is drawn,
    not what the code meant to draw): per axes its title, labels, limits, legend texts, lines
    (label, data, marker and whether it is hollow) and error bars (each bar's x, low and high)."""
    def num(v):
        return None if v != v else float(v)

    out = {"suptitle": fig._suptitle.get_text() if fig._suptitle else "", "axes": []}
    for ax in fig.axes:
        leg = ax.get_legend()
        a = {"title": ax.get_title(), "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
             "xlim": [float(v) for v in ax.get_xlim()], "ylim": [float(v) for v in ax.get_ylim()],
             "xscale": ax.get_xscale(), "yscale": ax.get_yscale(),
             "yticklabels": [t.get_text() for t in ax.get_yticklabels()],
             "legend": [t.get_text() for t in leg.get_texts()] if leg else [], "lines": [], "errorbars": []}
        in_bars = {id(ln) for c in ax.containers if isinstance(c, ErrorbarContainer) for ln in c.lines[1]}
        for ln in ax.get_lines():
            if id(ln) in in_bars:
                continue      # the bars' caps, reported with the bars
            fc = matplotlib.colors.to_rgba(ln.get_markerfacecolor()) if ln.get_marker() not in ("None", None, "") else None
            a["lines"].append({"label": ln.get_label(), "marker": str(ln.get_marker()),
                               "hollow": fc is not None and (fc[3] == 0 or fc[:3] == (1.0, 1.0, 1.0)),
                               "x": [num(v) for v in ln.get_xdata()], "y": [num(v) for v in ln.get_ydata()]})
        for c in ax.containers:
            if isinstance(c, ErrorbarContainer):
                segs = [s for coll in c.lines[2] for s in coll.get_segments()]
                a["errorbars"].append({"label": c.get_label(),
                                       "bars": [[float(s[0][0]), float(min(s[0][1], s[1][1])),
                                                 float(max(s[0][1], s[1][1]))] for s in segs]})
        out["axes"].append(a)
    return out


def save(fig, path):
    """Write the PNG through a temporary file, so a failure leaves no partial output; with
    --describe, the figure's description too."""
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
        if DESCRIBE:
            with open(DESCRIBE, "w") as f:
                json.dump(dict(describe(fig), output=path), f, indent=1)
                f.write("\n")
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

def row_ci(s, d, n):
    """The 95% confidence half-width of will-it-scale.<n>.processes (or .threads): settle.<n>.half_width,
    combined over runs as slubsim's table does (sqrt of the summed squares / runs) when matrix.json
    holds one per run; None when the stats have none (a window too short to judge)."""
    key = f"settle.{n}.half_width"
    m = rio.load_matrix(d)
    runs = rio.key_runs(m, key)
    wis = [k for k in (f"will-it-scale.{n}.processes", f"will-it-scale.{n}.threads") if k in s]
    nruns = len(rio.key_runs(m, wis[0])) if wis else 0
    if runs and len(runs) == nruns:
        return sum(h * h for h in runs) ** 0.5 / len(runs)
    if m is not None and nruns > 1 and len(runs) != nruns:
        return None          # some run has no half-width: the mean's CI is not known
    return s.get(key)


def row_settle(s, n):
    """'settled', 'unsettled' (settle.<n>.unsettled: in any run, the window did not settle) or
    'unjudged' (settle.<n>.unjudged: a fixed window the settle rule could not judge)."""
    if s.get(f"settle.{n}.unsettled", 0) > 0:
        return "unsettled"
    if s.get(f"settle.{n}.unjudged", 0) > 0:
        return "unjudged"
    return "settled"


def key_unit(key):
    """The unit of a stats key, or None when slubsim's docs give it none."""
    if key is None:
        return "ops/s per task"
    if key.endswith("_idle") or key.endswith(".percent") or key.endswith("_percent"):
        return "%"
    if re.fullmatch(r"will-it-scale\.(\d+|\{N\})\.(processes|threads)", key) or key == "will-it-scale.workload":
        return "ops/s"
    if re.fullmatch(r"(will-it-scale\.)?per_(process|thread)_ops", key):
        return "ops/s per task"
    if key.endswith("_kB") or key == "meminfo.SUnreclaim":
        return "kB"
    if key.endswith("_ms"):
        return "ms"
    if key.endswith("waittime-total"):
        return "µs"
    return None


def key_has_ci(key):
    """Whether slubsim reports a 95% CI (settle.<N>.half_width) for the values of a stats key."""
    return bool(re.fullmatch(r"(will-it-scale\.)?(\d+|\{N\})\.(processes|threads)|"
                             r"(will-it-scale\.)?per_(process|thread)_ops", key)) and \
        (key.startswith("will-it-scale.") or key.startswith("per_"))


def join_names(xs):
    xs = [str(x) for x in xs]
    return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]


def capacity(args):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    variants = stats_of(rio.variant_dirs(args.dirs))
    metas = {d: rio.job_meta(d, root) for _, d, _ in variants}
    points, refs = {}, []         # (topology, workload, kernel) -> [(capacity, label, dir, stats)]
    cache_names = set()
    for label, d, s in variants:
        kernel, caps = rio.parse_capacity(label)
        m = metas[d]
        if caps is None:
            refs.append((label, d, s))
            continue
        if args.cache is not None:
            if args.cache not in caps:
                raise rio.InputError(f"{d}: no capacity for cache '{args.cache}' in the dir name")
            x = caps[args.cache]
            cache_names.add(args.cache)
        elif len(caps) == 1:
            cache_names.update(caps)
            x = next(iter(caps.values()))
        else:
            raise rio.InputError(f"{d}: several caches in the capacity ({label}); choose one with --cache")
        points.setdefault((m["topology"], m["workload"], kernel), []).append((x, label, d, s))
    if not points:
        raise rio.InputError(f"{' '.join(args.dirs)}: no variant dir named <kernel>_sheaf_capacity=...; "
                             f"run slubsim with --sheaf-capacity and several values")

    shown_nr = set()   # the task counts the plotted values come from

    def series(s, d):
        """[(name, value, 95% half-width or None, 'settled'|'unsettled'|'unjudged')] for one variant."""
        tp = rio.throughput(s)
        rows = sorted(tp)
        mode = "threads" if any(f"will-it-scale.{n}.threads" in s for n in rows) else "processes"
        cis = {n: row_ci(s, d, n) for n in rows}
        flags = {n: row_settle(s, n) for n in rows}

        def worst(ns):
            fs = [flags[n] for n in ns]
            return "unsettled" if "unsettled" in fs else "unjudged" if "unjudged" in fs else "settled"

        def mean_ci():
            # per_<mode>_ops is the mean over rows of ops/N: its half-width from the rows'
            if not rows or any(cis[n] is None for n in rows):
                return None
            return sum((cis[n] / n) ** 2 for n in rows) ** 0.5 / len(rows)

        ppo = "will-it-scale.per_thread_ops" if mode == "threads" and "will-it-scale.per_thread_ops" in s \
            else "will-it-scale.per_process_ops"
        if args.key and "{N}" not in args.key:
            k = rio.resolve_key(s, args.key, d)
            m = re.fullmatch(r"will-it-scale\.(\d+)\.(processes|threads)", k)
            if m and int(m.group(1)) in rows:
                n = int(m.group(1))
                shown_nr.add(n)
                return [(k, s[k], cis[n], flags[n])]
            shown_nr.update(rows)
            if re.fullmatch(r"will-it-scale\.per_(process|thread)_ops", k):
                return [(k, s[k], mean_ci(), worst(rows))]
            return [(k, s[k], None, worst(rows))]   # a key over the whole job: no CI known
        out = []
        for n in rows:
            if args.key is None:
                out.append((f"nr_task={n}", tp[n] / n, None if cis[n] is None else cis[n] / n, flags[n]))
                shown_nr.add(n)
                continue
            k = args.key.replace("{N}", str(n))
            if k in s:
                ci = cis[n] if k == f"will-it-scale.{n}.{mode}" else None
                out.append((f"nr_task={n}", s[k], ci, flags[n]))
                shown_nr.add(n)
        if not args.key:
            rio.resolve_key(s, ppo, d)
            out.append((f"{ppo.split('.', 1)[1]} (mean over nr_task)", s[ppo], mean_ci(), worst(rows)))
        return out

    fig, ax = plt.subplots(figsize=(8, 5))
    styles = ["-", "--", "-.", ":"]
    names = []
    every = [(d, s) for pts in points.values() for (_, _, d, s) in pts] + [(d, s) for _, d, s in refs]
    for d, s in every:
        for name, *_ in series(s, d):
            if name not in names:
                names.append(name)
    col = {n: ("black" if n.startswith("per_") else colour(i)) for i, n in enumerate(names)}
    tops = sorted({k[0] or "machine unknown" for k in points}, key=rio.natural_key)
    loads = sorted({k[1] or "workload unknown" for k in points}, key=rio.natural_key)
    xs_all, ys_all = set(), []
    flags_seen, bars, no_bar = set(), 0, 0
    for ki, (key, pts) in enumerate(sorted(points.items(), key=lambda x: [rio.natural_key(str(v)) for v in x[0]])):
        topo, load, kernel = key
        pts.sort(key=lambda p: p[0])
        xs_all.update(p[0] for p in pts)
        by_name = {}
        for x, _, d, s in pts:
            for name, y, ci, flag in series(s, d):
                by_name.setdefault(name, []).append((x, y, ci, flag))
        tag = " ".join(([topo or "?"] if len(tops) > 1 else []) + ([load or "?"] if len(loads) > 1 else [])
                       + ([kernel] if len(points) > 1 else []))
        for name in names:
            if name not in by_name:
                continue
            xy = by_name[name]
            c, lw = col[name], 2.2 if col[name] == "black" else 1.5
            ax.plot([p[0] for p in xy], [p[1] for p in xy], marker="o", linestyle=styles[ki % 4], color=c, lw=lw,
                    label=short(f"{tag} {name}" if tag else name, 56))
            ys_all += [p[1] + (p[2] or 0) for p in xy]
            with_ci = [p for p in xy if p[2] is not None]
            no_bar += len(xy) - len(with_ci)
            if with_ci:
                bars += len(with_ci)
                # the bars' own label starts with '_': matplotlib leaves it out of the legend
                ax.errorbar([p[0] for p in with_ci], [p[1] for p in with_ci], yerr=[p[2] for p in with_ci],
                            fmt="none", ecolor=c, elinewidth=1, capsize=3, label=f"_ci {tag} {name}".replace("  ", " "))
            loose = [p for p in xy if p[3] != "settled"]
            flags_seen.update(p[3] for p in loose)
            if loose:
                # hollow: the window did not settle (or could not be judged)
                ax.plot([p[0] for p in loose], [p[1] for p in loose], linestyle="none", marker="o", ms=7,
                        markerfacecolor="white", markeredgecolor=c, markeredgewidth=1.5,
                        label=f"_unsettled {tag} {name}".replace("  ", " "))
    ref_kernels = []
    for label, d, s in refs:
        loose = set()
        for name, y, ci, flag in series(s, d):
            ax.axhline(y, color=col[name], linestyle=":", lw=1, alpha=0.8)
            ys_all.append(y + (ci or 0))
            if ci is not None:
                ax.axhspan(y - ci, y + ci, color=col[name], alpha=0.08, lw=0)
            if flag != "settled":
                loose.add(flag)
        ref_kernels.append(os.path.basename(label))
        ax.plot([], [], color="grey", linestyle=":",
                label=short(f"{label} (no sheaf capacity), dotted", 56) + (": window not settled" if "unsettled" in loose else ": window not judged" if loose else ""))
    handles, texts = ax.get_legend_handles_labels()
    if bars:
        handles.append(Line2D([], [], color="grey", marker="|", markersize=10, linestyle="none", markeredgewidth=1.2))
        texts.append("bars: 95% CI of the mean (settle.<N>.half_width)"
                     + (f"; {no_bar} points without one have none" if no_bar else ""))
    elif no_bar:
        handles.append(Line2D([], [], linestyle="none"))
        texts.append(f"no 95% CI: slubsim gives none for {args.key}" if args.key and not key_has_ci(args.key)
                     else "no 95% CI: the stats hold none for these points")
    if "unsettled" in flags_seen:
        handles.append(Line2D([], [], linestyle="none", marker="o", markerfacecolor="white", color="grey"))
        texts.append("hollow: window not settled (settle.<N>.unsettled)")
    if "unjudged" in flags_seen:
        handles.append(Line2D([], [], linestyle="none", marker="o", markerfacecolor="white", color="grey"))
        texts.append("hollow: window not judged (settle.<N>.unjudged), no CI")
    ax.legend(handles, texts, fontsize=7)

    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(xs_all))
    ax.set_xticklabels([str(x) for x in sorted(xs_all)])
    cache = args.cache or (next(iter(cache_names)) if len(cache_names) == 1 else None)
    what_cache = f"{cache} sheaf capacity" if cache else "sheaf capacity (every sheaf cache)" \
        if cache_names == {""} else "sheaf capacity"
    ax.set_xlabel(what_cache + " (objects per sheaf)")
    unit = key_unit(args.key)
    ax.set_ylabel(f"{args.key} ({unit})" if args.key and unit else args.key or
                  "ops/s per task (will-it-scale.N.{} / N)".format(
                      "threads" if any(k.endswith(".threads") for _, _, s in variants for k in s) else "processes"))
    # From 0, room above the top for the legend: a change of a few percent looks a few percent.
    lo, hi = min([0.0] + ys_all), max([0.0] + ys_all)
    ax.set_ylim(lo, hi * 1.12 if hi > 0 else None)
    if unit and unit.startswith("ops/s"):
        ax.yaxis.set_major_formatter(matplotlib.ticker.EngFormatter(sep=""))
    ax.grid(True, alpha=0.3)

    kernels = sorted({k[2] for k in points}, key=rio.natural_key)
    nr = sorted(shown_nr)
    modes = sorted({metas[d]["mode"] for _, d, _ in variants if metas[d]["mode"]})
    shown = "ops per task" if not args.key else args.key
    title = (f"{shown} against {what_cache}\n"
             f"{join_names(loads)}{' (' + join_names(modes) + ')' if modes else ''} on {join_names(tops)}; "
             f"kernel{'s' if len(kernels) > 1 else ''} {join_names(kernels)}"
             + (f" (reference {join_names(ref_kernels)})" if ref_kernels else "")
             + f"; nr_task {', '.join(map(str, nr))}")
    ax.set_title(args.title or title, fontsize=9)
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
    ap.add_argument("--describe", default=None, metavar="FILE.json",
                    help="also write what the plot shows (titles, axis limits and labels, legend, lines, "
                         "error bars) as JSON, read back from the figure")
    args = ap.parse_args()
    global DESCRIBE
    DESCRIBE = args.describe
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
