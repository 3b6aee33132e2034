#!/usr/bin/env python3
"""A what-if home: the same configs and workloads with some machines' core-to-core transfers priced
at a multiple of their measured figures.

    tools/whatif-transfers.py OUT_HOME --scale GLOB=FACTOR [--scale GLOB=FACTOR ...] [--from HOME]

Copies HOME's configs/ and workloads/ (default: this source tree) into OUT_HOME, a directory that
must not exist yet, and in every topology whose file name matches GLOB (configs/topologies/GLOB.json,
shell-style, e.g. 'amd-*' or 'intel-gnr-2s-344t-4n') multiplies the transfer classes a contended
line moves by (smt, llc, socket_local_home, socket_remote_home, cross_socket,
cross_socket_reader_home) by FACTOR. DRAM latencies, LLC hits and every cost outside the topologies
are left as they are. A range that no longer holds the scaled value is widened to hold it, and the
class's source says it is a what-if, so a run on OUT_HOME never passes for the model. When several
--scale match one file the last wins, so 'amd-*=0.5' then 'amd-ryzen*=1' leaves the Ryzen as it is.

It answers one question the fidelity log asks (docs/fidelity-log.md, 2026-12-07, "one price per
vendor"): what the scoreboard would be if a box's contended transfers cost a different multiple of
its measured idle core-to-core latency. The latencies are class-1 hardware facts (VALIDATION.md);
a factor here is never a model input and is never fitted. Then, for example:

    slubsim validate --home OUT_HOME --calibrate --fits OUT_HOME/fits   # the class-4 fits again
    slubsim validate --home OUT_HOME --fits OUT_HOME/fits --out OUT_HOME/results

Bad input: `whatif-transfers: error: WHAT: what is wrong`, exit code 2, and OUT_HOME not created.
The output is deterministic: the same inputs give the same bytes.
"""
import argparse
import fnmatch
import json
import os
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRANSFER_CLASSES = ["smt", "llc", "socket_local_home", "socket_remote_home", "cross_socket",
                    "cross_socket_reader_home"]


class InputError(Exception):
    pass


def parse_scale(text):
    if "=" not in text:
        raise InputError(f"--scale {text!r}: expected GLOB=FACTOR")
    glob, factor_text = text.rsplit("=", 1)
    if not glob:
        raise InputError(f"--scale {text!r}: the GLOB is empty")
    try:
        factor = float(factor_text)
    except ValueError:
        raise InputError(f"--scale {text!r}: FACTOR {factor_text!r} is not a number") from None
    if not factor > 0 or factor == float("inf"):
        raise InputError(f"--scale {text!r}: FACTOR must be a positive finite number")
    return glob, factor


def scale_transfers(topology, path, factor, note):
    latency = topology.get("latency_ns")
    if not isinstance(latency, dict):
        raise InputError(f"{path}: latency_ns: missing or not an object")
    for name in TRANSFER_CLASSES:
        entry = latency.get(name)
        if entry is None:
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("value"), (int, float)):
            raise InputError(f"{path}: latency_ns.{name}.value: missing or not a number")
        value = round(entry["value"] * factor, 3)
        entry["value"] = value
        rng = entry.get("range")
        if rng is not None:
            if not (isinstance(rng, list) and len(rng) == 2 and all(isinstance(x, (int, float)) for x in rng)):
                raise InputError(f"{path}: latency_ns.{name}.range: expected [low, high]")
            entry["range"] = [min(rng[0], value), max(rng[1], value)]
        entry["source"] = f"{note} of: {entry.get('source', '')}"


def build(out_home, scales, from_home):
    topo_dir = os.path.join(from_home, "configs", "topologies")
    for sub in ("configs", "workloads"):
        if not os.path.isdir(os.path.join(from_home, sub)):
            raise InputError(f"--from {from_home}: no {sub}/ directory")
    if os.path.exists(out_home):
        raise InputError(f"{out_home}: already exists (the what-if home must be new)")
    names = sorted(f for f in os.listdir(topo_dir) if f.endswith(".json"))
    picked = {}
    for glob, factor in scales:
        hits = [n for n in names if fnmatch.fnmatchcase(n[:-len(".json")], glob)]
        if not hits:
            raise InputError(f"--scale {glob}={factor:g}: no topology in {topo_dir} matches {glob!r}")
        for n in hits:
            picked[n] = factor
    # Build beside OUT_HOME and rename at the end: a failure leaves nothing behind.
    parent = os.path.dirname(os.path.abspath(out_home))
    if not os.path.isdir(parent):
        raise InputError(f"{out_home}: its parent directory does not exist")
    work = tempfile.mkdtemp(prefix=".whatif-", dir=parent)
    try:
        for sub in ("configs", "workloads"):
            shutil.copytree(os.path.join(from_home, sub), os.path.join(work, sub))
        for n, factor in sorted(picked.items()):
            path = os.path.join(work, "configs", "topologies", n)
            with open(path) as f:
                try:
                    topology = json.load(f)
                except json.JSONDecodeError as e:
                    raise InputError(f"{os.path.join(topo_dir, n)}: not JSON ({e})") from None
            note = f"WHAT-IF (tools/whatif-transfers.py): x{factor:g}"
            scale_transfers(topology, os.path.join(topo_dir, n), factor, note)
            with open(path, "w") as f:
                json.dump(topology, f, indent=2)
                f.write("\n")
        os.makedirs(os.path.join(work, "fits"))
        os.rename(work, out_home)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return picked


def main():
    p = argparse.ArgumentParser(prog="whatif-transfers", description=__doc__.split("\n")[0])
    p.add_argument("out_home")
    p.add_argument("--scale", action="append", required=True, metavar="GLOB=FACTOR")
    p.add_argument("--from", dest="from_home", default=ROOT)
    try:
        a = p.parse_args()
    except SystemExit as e:
        sys.exit(2 if e.code else 0)
    try:
        scales = [parse_scale(s) for s in a.scale]
        picked = build(a.out_home, scales, a.from_home)
    except (InputError, OSError) as e:
        sys.stderr.write(f"whatif-transfers: error: {e}\n")
        sys.exit(2)
    for n, factor in sorted(picked.items()):
        print(f"{n[:-len('.json')]}: transfers x{factor:g}")
    print(f"wrote {a.out_home} (configs/, workloads/, an empty fits/)")


if __name__ == "__main__":
    main()
