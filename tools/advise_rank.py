#!/usr/bin/env python3
"""Score `slubsim advise` against a published capacity table: does the advisor rank the
capacities the table covers as the table does?

    tools/advise_rank.py ADVICE_JSON --experiment configs/experiments/ID.json \
        --variants NAME=CAPACITY[,NAME=CAPACITY...] [--cache maple_node] [--min-gap 3] [--json OUT]

ADVICE_JSON is an advise run over exactly those capacities (`--search grid --capacities ...`, so
every capacity runs at every task count). NAME is a variant of the experiment and CAPACITY the
sheaf_capacity it runs; the published figure of each variant is its cells' published_delta_pct
against one common baseline. For each published metric:
  will-it-scale.N.processes   the advisor's ops/s at N tasks;
  will-it-scale.per_process_ops  the mean over the advise run's task counts of ops/s / N (the
                              table's own aggregate; say in the note which task counts it spans).
A table and task count is scored when its published values span more than --min-gap points
(smaller differences are inside run-to-run noise); the score is Spearman's rank correlation
between the published values and the simulated ops over the capacities. Prints one line per
metric and exits 1 when a scored Spearman is below 0.8 (the acceptance of issue 28)."""
import argparse
import json
import sys


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb) if va and vb else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("advice")
    ap.add_argument("--experiment", required=True)
    ap.add_argument("--variants", required=True, help="NAME=CAPACITY,...")
    ap.add_argument("--cache", default="maple_node")
    ap.add_argument("--min-gap", type=float, default=3.0)
    ap.add_argument("--json", help="write the scores here")
    a = ap.parse_args()
    advice = json.load(open(a.advice))
    exp = json.load(open(a.experiment))
    caps = {}
    for item in a.variants.split(","):
        name, _, cap = item.partition("=")
        if not cap.isdigit():
            sys.exit(f"advise_rank.py: --variants: '{item}' is not NAME=CAPACITY")
        caps[name] = int(cap)
    default = None
    for c in advice["caches"]:
        if c["cache"] == a.cache:
            default = c["knobs"]["sheaf_capacity"]["default"]
    if default is None:
        sys.exit(f"advise_rank.py: {a.advice}: no cache {a.cache} searched")

    def ops_by_cap(row):
        out = {}
        for s in row["settings"]:
            name = s["setting"]
            if name == "kernel defaults":
                out[default] = s["ops_per_sec"]
            elif name.startswith(f"{a.cache}/sheaf_capacity=") and "," not in name:
                out[int(name.split("=")[1])] = s["ops_per_sec"]
        return out

    rows = {r["nr_task"]: ops_by_cap(r) for r in advice["rows"]}
    published = {}  # metric -> {capacity: delta}
    for cell in exp["cells"]:
        if cell["test"] in caps and cell.get("published_delta_pct") is not None:
            published.setdefault(cell["metric"], {})[caps[cell["test"]]] = cell["published_delta_pct"]
    scores, worst = [], None
    for metric, pub in published.items():
        if metric == "will-it-scale.per_process_ops":
            counts = sorted(rows)
            sim = {c: sum(rows[n][c] / n for n in counts) / len(counts) for c in pub if all(c in rows[n] for n in counts)}
            where = f"mean over {','.join(map(str, counts))} tasks"
        else:
            n = int(metric.split(".")[1])
            if n not in rows:
                continue
            sim = {c: rows[n][c] for c in pub if c in rows[n]}
            where = f"{n} tasks"
        covered = sorted(c for c in pub if c in sim)
        if len(covered) < 2:
            continue
        p = [pub[c] for c in covered]
        s = [sim[c] for c in covered]
        gap = max(p) - min(p)
        rho = spearman(p, s)
        scored = gap > a.min_gap
        if scored:
            worst = rho if worst is None else min(worst, rho)
        rel = [100 * (x / s[0] - 1) for x in s]
        print(f"{metric} ({where}): capacities {covered}; published {p} (span {gap:.1f} points); "
              f"simulated vs {covered[0]}: {[round(x, 1) for x in rel]}%; Spearman {rho:+.2f}"
              f"{'' if scored else ' (not scored: span within ' + str(a.min_gap) + ' points)'}")
        scores.append({"metric": metric, "where": where, "capacities": covered, "published": p,
                       "simulated_ops": s, "span_points": round(gap, 3), "spearman": round(rho, 4),
                       "scored": scored})
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"advice": a.advice, "experiment": exp["id"], "scores": scores}, f, indent=1)
            f.write("\n")
    if worst is None:
        print("nothing scored")
        return 0
    print(f"lowest scored Spearman: {worst:+.2f} ({'meets' if worst >= 0.8 else 'misses'} 0.8)")
    return 0 if worst >= 0.8 else 1


if __name__ == "__main__":
    sys.exit(main())
