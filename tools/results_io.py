"""Reading slubsim result trees for tools/plot.py (no plotting here).

Layout (docs/usage.md, "Reading results"):
    results/<experiment-id>/<topology>/<variant>/{stats.json,matrix.json}   one dir per variant
    results/scoreboard.json                                                 published vs simulated
    configs/experiments/<experiment-id>.json                               variants, nr_task, cells

Errors raise InputError("FILE: what is wrong"); the CLI prints it and exits with code 2.
"""
import json
import math
import os
import re


class InputError(Exception):
    pass


def natural_key(s):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file")
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}")
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: not valid JSON: {e}")


def load_stats(d):
    path = os.path.join(d, "stats.json")
    s = read_json(path)
    if not isinstance(s, dict):
        raise InputError(f"{path}: expected an object of key: value")
    out = {}
    for k, v in s.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise InputError(f"{path}: {k}: '{v}' is not a finite number")
        out[k] = float(v)
    return out


def load_matrix(d):
    """matrix.json of a variant dir, or None when there is none."""
    path = os.path.join(d, "matrix.json")
    if not os.path.exists(path):
        return None
    m = read_json(path)
    if not isinstance(m, dict) or not all(isinstance(v, list) for v in m.values()):
        raise InputError(f"{path}: expected an object of arrays")
    return m


def variant_dirs(paths):
    """Each path is a variant dir (holds stats.json) or a dir of variant dirs (e.g.
    results/<id>/<topology>); returns (label, dir) pairs, labels unique, in natural order
    within each path."""
    out = []
    for p in paths:
        if os.path.isfile(os.path.join(p, "stats.json")):
            out.append((os.path.basename(os.path.normpath(p)), p))
            continue
        if not os.path.isdir(p):
            raise InputError(f"{p}: no such directory")
        found = []
        for root, dirs, files in os.walk(p):
            dirs[:] = [x for x in dirs if not x.startswith(".")]
            if "stats.json" in files:
                found.append((os.path.relpath(root, p), root))
                dirs[:] = []
        if not found:
            raise InputError(f"{p}: no stats.json in it or in its subdirectories (not a slubsim --out dir)")
        out += sorted(found, key=lambda x: natural_key(x[0]))
    labels = [l for l, _ in out]
    if len(set(labels)) != len(labels):   # same variant name under two topology dirs
        out = [(os.path.normpath(d), d) for _, d in out]
    return out


def _short_input(name):
    """A topology or workload as the title names it: a preset NAME as it is, a FILE by its base
    name without .json (trace:FILE and ftrace:FILE keep their prefix)."""
    name = str(name)
    prefix, sep, rest = name.partition(":")
    if sep and prefix in ("trace", "ftrace"):
        return f"{prefix}:{os.path.basename(rest)}"
    base = os.path.basename(name)
    return base[:-5] if base.endswith(".json") else base


def job_meta(d, root=None):
    """What a variant dir's numbers were run on, read from the data: {'topology', 'workload',
    'mode', 'kernels', 'from'}, any of them None when nothing says. First the job's index.json
    (`slubsim run --out DIR` writes DIR/index.json, its variants in DIR or DIR/<variant>/; a sweep
    writes one per job dir, DIR/<topology>[/<workload>]/index.json); else, for a committed tree
    results/<id>/<topology>/<variant>, the experiment's configs/experiments/<id>.json (under root,
    the source tree) and the <topology> dir's name when the experiment lists that machine."""
    meta = {"topology": None, "workload": None, "mode": None, "kernels": None, "from": None}
    d = os.path.normpath(os.path.abspath(d))
    for p in (d, os.path.dirname(d)):
        path = os.path.join(p, "index.json")
        if not os.path.isfile(path):
            continue
        doc = read_json(path)
        job = doc.get("job") if isinstance(doc, dict) else None
        if not isinstance(job, dict):
            raise InputError(f"{path}: not slubsim's index.json (no job)")
        for k in ("topology", "workload"):
            if job.get(k):
                meta[k] = _short_input(job[k])
        meta["mode"] = job.get("mode") or None
        if job.get("kernel"):
            meta["kernels"] = [k for k in str(job["kernel"]).split(",") if k]
        meta["from"] = path
        return meta
    if root is not None:
        top = os.path.dirname(d)
        exp_id = os.path.basename(os.path.dirname(top))
        path = os.path.join(root, "configs", "experiments", exp_id + ".json")
        if exp_id and os.path.isfile(path):
            doc = read_json(path)
            if isinstance(doc, dict):
                if doc.get("workload"):
                    meta["workload"] = _short_input(doc["workload"])
                meta["mode"] = doc.get("mode") or None
                names = [t.get("name") if isinstance(t, dict) else t for t in doc.get("topologies") or []]
                if doc.get("topology"):
                    names.append(doc["topology"])
                if os.path.basename(top) in [_short_input(n) for n in names if n]:
                    meta["topology"] = os.path.basename(top)
                meta["from"] = path
    return meta


# ---- keys --------------------------------------------------------------------------------------

WIS = re.compile(r"will-it-scale\.(\d+)\.(processes|threads)")


def throughput(stats):
    """{nr_task: ops/s} from will-it-scale.<N>.processes (or .threads)."""
    return {int(m.group(1)): v for k, v in stats.items() if (m := WIS.fullmatch(k))}


def key_runs(matrix, key):
    if matrix is None or key not in matrix:
        return []
    return [float(x) for x in matrix[key] if isinstance(x, (int, float)) and not isinstance(x, bool)]


def resolve_key(stats, key, where):
    """A stats key, allowing the short form per_process_ops for will-it-scale.per_process_ops."""
    if key in stats:
        return key
    if "will-it-scale." + key in stats:
        return "will-it-scale." + key
    raise InputError(f"{where}/stats.json: no key {key}")


CAPACITY = re.compile(r"_sheaf_capacity=(.+)$")


def parse_capacity(label):
    """'v6.18_sheaf_capacity=maple_node=64' -> ('v6.18', {'maple_node': 64}); '..=64' -> {'': 64};
    no capacity in the name -> (label, None). Names as sim/run/job.cpp gives variant dirs."""
    base = os.path.basename(label)
    m = CAPACITY.search(base)
    if not m:
        return base, None
    caps = {}
    for item in m.group(1).split(","):
        cache, _, n = item.rpartition("=")
        if not n.isdigit():
            return base, None
        caps[cache] = int(n)
    return base[:m.start()], caps


def lock_wait(stats):
    """{class: {instance: µs}}: lock_stat.<class>.node<k>.waittime-total per node when the class
    has them, else {'': total}. Other instances (mm<k>, task<k>) count in the class total."""
    total, per = {}, {}
    for k, v in stats.items():
        m = re.fullmatch(r"lock_stat\.(.+)\.waittime-total", k)
        if not m:
            continue
        name = m.group(1)
        inst = re.fullmatch(r"(.+)\.(node\d+)", name)
        if inst:
            per.setdefault(inst.group(1), {})[inst.group(2)] = v
        elif not re.search(r"\.(mm|task)\d+$", name):
            total[name] = v
    out = {}
    for c in set(total) | set(per):
        out[c] = per[c] if c in per else {"": total[c]}
    return out


def why_percent(stats):
    """{category: percent} from why.<category>.percent."""
    return {m.group(1): v for k, v in stats.items() if (m := re.fullmatch(r"why\.(.+)\.percent", k))}


# ---- experiment definitions and the scoreboard -------------------------------------------------

def _first(d, *names):
    for n in names:
        if n in d and d[n] is not None:
            return d[n]
    return None


def load_experiment(path):
    """{'variants': [{'name', 'label', 'kernel'}...], 'cells': [{'metric', 'nr_task' or None,
    'baseline', 'test', 'published_baseline', 'published_test'}...]}; tolerant of the field names
    the experiment files may use, strict about types."""
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise InputError(f"{path}: an experiment is a JSON object")
    variants = []
    raw = doc.get("variants", [])
    if isinstance(raw, dict):
        raw = [dict(v, name=k) if isinstance(v, dict) else {"name": k, "kernel": v} for k, v in raw.items()]
    if not isinstance(raw, list):
        raise InputError(f"{path}: variants: expected a list")
    for i, v in enumerate(raw):
        if isinstance(v, str):
            v = {"name": v}
        if not isinstance(v, dict) or not isinstance(v.get("name"), str):
            raise InputError(f"{path}: variants[{i}].name: missing or not a string")
        cap = _first(v, "sheaf_capacity", "capacity")
        if isinstance(cap, dict):
            cap = ",".join(f"{k}={n}" for k, n in cap.items())
        variants.append({"name": v["name"], "label": str(v.get("label") or ""), "kernel": v.get("kernel"),
                         "capacity": None if cap is None else str(cap)})
    cells = []
    raw = doc.get("cells", [])
    if not isinstance(raw, list):
        raise InputError(f"{path}: cells: expected a list")
    for i, c in enumerate(raw):
        if not isinstance(c, dict):
            raise InputError(f"{path}: cells[{i}]: expected an object")
        metric = str(_first(c, "metric", "key") or "")
        m = re.match(r"will-it-scale\.(\d+)\.(processes|threads)\b", metric)
        cell = {"metric": metric, "nr_task": int(m.group(1)) if m else None,
                "per_process_ops": bool(re.match(r"(will-it-scale\.)?per_(process|thread)_ops\b", metric)),
                "baseline": _first(c, "baseline", "baseline_variant", "base"),
                "test": _first(c, "test", "test_variant")}
        for side in ("baseline", "test"):
            v = _first(c, f"published_{side}", f"published_{side}_value", f"{side}_value")
            if v is None and isinstance(cell[side], dict):
                v = _first(cell[side], "published", "published_value", "value")
            if isinstance(v, dict):
                v = _first(v, "value")
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise InputError(f"{path}: cells[{i}].published_{side}: '{v}' is not a number")
            cell[f"published_{side}"] = v
            if isinstance(cell[side], dict):
                cell[side] = _first(cell[side], "name", "variant")
        cells.append(cell)
    return {"id": doc.get("id") or os.path.splitext(os.path.basename(path))[0],
            "variants": variants, "cells": cells}


def match_variant(name, experiment, labels):
    """The result-dir label a variant name of an experiment refers to, or None: the dir of that
    name, else the dir slubsim names after the variant's kernel (and sheaf capacity)."""
    if name in labels:
        return name
    for v in experiment["variants"]:
        if v["name"] != name or not v.get("kernel"):
            continue
        k = str(v["kernel"])
        if v.get("capacity") is not None:
            for cand in (f"{k}_sheaf_capacity={v['capacity']}",):
                if cand in labels:
                    return cand
            continue
        if k in labels:
            return k
    return None


def load_scoreboard(path):
    doc = read_json(path)
    cells = doc
    if isinstance(doc, dict) and isinstance(doc.get("experiments"), list):
        # slubsim validate's scoreboard.json: experiments -> topologies -> cells; the best-fitting
        # topology of each experiment, as the scoreboard's headline totals count them.
        cells = []
        for e in doc["experiments"]:
            for t in e.get("topologies", []):
                if e.get("best_topology") not in (None, t.get("topology")):
                    continue
                for c in t.get("cells", []):
                    if c.get("excluded"):
                        continue
                    cells.append(dict(c, experiment=e.get("id", "?")))
    elif isinstance(doc, dict):
        cells = _first(doc, "cells", "scoreboard", "rows")
        if cells is None:
            lists = [v for v in doc.values() if isinstance(v, list) and v and isinstance(v[0], dict)]
            cells = lists[0] if len(lists) == 1 else None
    if not isinstance(cells, list):
        raise InputError(f"{path}: expected a list of cells (or an object with 'cells')")
    out = []
    for i, c in enumerate(cells):
        if not isinstance(c, dict):
            raise InputError(f"{path}: cells[{i}]: expected an object")
        row = {"experiment": str(_first(c, "experiment", "experiment_id", "table_id", "table") or "?")}
        for k in ("published_delta_pct", "simulated_delta_pct"):
            v = c.get(k)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)):
                raise InputError(f"{path}: cells[{i}].{k}: '{v}' is not a number")
            row[k] = v
        agree = _first(c, "sign_agreement", "sign_agree", "agree", "agrees")
        if agree is None and row["published_delta_pct"] is not None and row["simulated_delta_pct"] is not None:
            # VALIDATION.md: |published| < 3% is "no change", met by |simulated| < 3%
            p, q = row["published_delta_pct"], row["simulated_delta_pct"]
            agree = abs(q) < 3 if abs(p) < 3 else (p > 0) == (q > 0) and abs(q) >= 3
        row["agree"] = bool(agree)
        row["across_releases"] = bool(c.get("across_releases", False))
        fitted = _first(c, "fitted", "in_sample")
        kind = str(_first(c, "class", "kind", "split") or "")
        row["fitted"] = bool(fitted) or kind.lower() in ("fitted", "in-sample", "in_sample", "calibration")
        out.append(row)
    return out
