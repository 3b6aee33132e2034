#!/usr/bin/env python3
"""Score `slubsim advise` against a published capacity table: does the advisor rank the
capacities the table covers as the table does?

    tools/advise_rank.py ADVICE_JSON --experiment configs/experiments/ID.json \
        --baseline NAME --variants NAME=CAPACITY[,NAME=CAPACITY...] [--cache maple_node] [--min-gap 3] [--json OUT]

ADVICE_JSON is an advise run over exactly those capacities (`--search grid --capacities ...`, so
every capacity runs at every task count). NAME is a variant of the experiment and CAPACITY the
sheaf_capacity it runs; the published figure of each variant is the published_delta_pct of its
cell against the variant --baseline (0 for the baseline itself, when it is one of the NAMEs). For each published metric:
  will-it-scale.N.processes   the advisor's ops/s at N tasks;
  will-it-scale.per_process_ops  the mean over the advise run's task counts of ops/s / N (the
                              table's own aggregate; say in the note which task counts it spans).
A table and task count is scored when its published values span more than --min-gap points
(smaller differences are inside run-to-run noise) and every simulated point in it settled (an
unsettled window is not a result); the score is Spearman's rank correlation between the
published values and the simulated ops over the capacities, with simulated values that are tied
within their 95% confidence intervals counted as half a place each way (a pairwise rank: 1 +
the capacities it beats beyond both intervals + half those it ties with). The plain Spearman on the means is printed beside it. Prints one line
per metric and exits 1 when a scored Spearman is below 0.8 or a table row that should be scored
did not settle (the acceptance of issue 28)."""
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


def ci_ranks(values, half_widths):
    """Ranks by pairwise comparison: 1 + the values each beats beyond both intervals
    (|a - b| > hypot(hw_a, hw_b)) + half the values it ties with. Without ties, the usual ranks."""
    r = []
    for i, v in enumerate(values):
        score = 1.0
        for j, w in enumerate(values):
            if i == j:
                continue
            tied = abs(v - w) <= (half_widths[i] ** 2 + half_widths[j] ** 2) ** 0.5
            score += 0.5 if tied else (1.0 if v > w else 0.0)
        r.append(score)
    return r


def pearson(ra, rb):
    n = len(ra)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    # Rounded: ranks are small whole or half numbers, and 0.7999999999 is 0.8.
    return round(cov / (va * vb), 9) if va and vb else float("nan")


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
    ap.add_argument("--baseline", required=True, help="the variant every published delta is against")
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
                out[default] = s
            elif name.startswith(f"{a.cache}/sheaf_capacity=") and "," not in name:
                out[int(name.split("=")[1])] = s
        return out

    rows = {r["nr_task"]: ops_by_cap(r) for r in advice["rows"]}
    published = {}  # metric -> {capacity: delta}
    for cell in exp["cells"]:
        if cell["baseline"] != a.baseline or cell["test"] not in caps or cell.get("published_delta_pct") is None:
            continue
        row = published.setdefault(cell["metric"], {})
        if a.baseline in caps:
            row[caps[a.baseline]] = 0.0
        if caps[cell["test"]] in row and row[caps[cell["test"]]] != cell["published_delta_pct"]:
            sys.exit(f"advise_rank.py: {a.experiment}: two cells {a.baseline} -> {cell['test']} for {cell['metric']}")
        row[caps[cell["test"]]] = cell["published_delta_pct"]
    scores, worst = [], None
    for metric, pub in published.items():
        if metric == "will-it-scale.per_process_ops":
            counts = sorted(rows)
            sim = {}
            for c in pub:
                if all(c in rows[n] for n in counts):
                    pts = [rows[n][c] for n in counts]
                    sim[c] = {"ops_per_sec": sum(p["ops_per_sec"] / n for p, n in zip(pts, counts)) / len(counts),
                              "half_width": sum((p["half_width"] / n) ** 2 for p, n in zip(pts, counts)) ** 0.5 / len(counts),
                              "settled": all(p["settled"] for p in pts)}
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
        s = [sim[c]["ops_per_sec"] for c in covered]
        hw = [sim[c]["half_width"] for c in covered]
        unsettled = [c for c in covered if not sim[c]["settled"]]
        gap = max(p) - min(p)
        rho_means = pearson(ranks(p), ranks(s))
        rho = pearson(ranks(p), ci_ranks(s, hw))
        why = []
        if gap <= a.min_gap:
            why.append(f"published span within {a.min_gap} points")
        if unsettled:
            why.append(f"capacities {unsettled} did not settle")
        scored = not why
        if scored:
            worst = rho if worst is None else min(worst, rho)
        rel = [100 * (x / s[0] - 1) for x in s]
        relhw = [100 * h / s[0] for h in hw]
        print(f"{metric} ({where}): capacities {covered}; published {p} (span {gap:.1f} points); simulated vs "
              f"{covered[0]}: {', '.join(f'{x:+.1f}±{h:.1f}' for x, h in zip(rel, relhw))}%; Spearman {rho:+.2f} "
              f"(ties within the CIs; on the means {rho_means:+.2f})"
              f"{'' if scored else ' (not scored: ' + '; '.join(why) + ')'}")
        scores.append({"metric": metric, "where": where, "capacities": covered, "published": p,
                       "simulated_ops": s, "simulated_half_width": hw, "unsettled": unsettled,
                       "span_points": round(gap, 3), "spearman": rho, "spearman_means": rho_means,
                       "scored": scored, "not_scored_because": why})
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"advice": a.advice, "experiment": exp["id"], "scores": scores}, f, indent=1)
            f.write("\n")
    unanswered = [x["where"] for x in scores if x["span_points"] > a.min_gap and x["unsettled"]]
    if worst is None:
        print("nothing scored")
    else:
        print(f"lowest scored Spearman: {worst:+.2f} ({'meets' if worst >= 0.8 else 'misses'} 0.8)")
    if unanswered:
        print(f"not answered (published span above {a.min_gap} points, simulated points not settled): "
              f"{'; '.join(unanswered)}")
    return 0 if worst is not None and worst >= 0.8 and not unanswered else 1


if __name__ == "__main__":
    sys.exit(main())
