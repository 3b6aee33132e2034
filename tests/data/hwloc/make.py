#!/usr/bin/env python3
"""Writes an hwloc XML (as `lstopo --of xml` would on the machine) for a topology preset whose
layout is regular: sockets x nodes per socket x LLC domains per node x cores per domain x
threads, the CPU numbers as the preset has them, memory per node and the SLIT as distances.
Made with hwloc's own tools (a synthetic description through lstopo, the distances through
hwloc-annotate), so the files are what hwloc writes. Test data for `slubsim import --hwloc`:

    tests/data/hwloc/make.py configs/topologies/amd-epyc-2s-192c-4n.json tests/data/hwloc/amd-epyc-2s-192c-4n.xml
"""
import json
import subprocess
import sys
import tempfile


def cpus(text):
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out += list(range(int(a), int(b or a) + 1))
    return out


def main(preset, out):
    d = json.load(open(preset))
    sockets = [cpus(s["cpus"]) for s in sorted(d["sockets"], key=lambda s: s["id"])]
    nodes = [(cpus(n["cpus"]), n["memory_mb"]) for n in sorted(d["nodes"], key=lambda n: n["id"])]
    n = sum(len(s) for s in sockets)
    smt = d["smt"]
    if "cores" in smt:
        cores = [cpus(c) for c in smt["cores"]]
    else:
        t, off = smt["threads_per_core"], smt.get("sibling_offset", 0)
        firsts = range(n // t) if t > 1 else range(n)
        cores = [[c + k * off for k in range(t)] for c in firsts]
    llc = d["llc"]
    if "domains" in llc:
        domains = [set(cpus(x)) for x in llc["domains"]]
    else:
        per = llc["cores_per_domain"]
        domains = []
        for s in sockets:
            mine = [c for c in cores if c[0] in set(s)]
            for i in range(0, len(mine), per):
                domains.append(set(x for c in mine[i:i + per] for x in c))
    # The regular shape and the PUs in hwloc's logical order (socket, node, domain, core, thread).
    per_socket = len(nodes) // len(sockets)
    order, shape = [], None
    for s in sockets:
        for cpus_of_node, _ in [x for x in nodes if x[0][0] in set(s)]:
            doms = [dd for dd in domains if min(dd) in set(cpus_of_node)]
            for dd in sorted(doms, key=min):
                cs = sorted([c for c in cores if c[0] in dd], key=lambda c: c[0])
                this = (per_socket, len(doms), len(cs), len(cs[0]))
                assert shape in (None, this), (shape, this)
                shape = this
                for c in cs:
                    order += c
    assert sorted(order) == list(range(n))
    mem = nodes[0][1]
    synthetic = (f"pack:{len(sockets)} numa:{shape[0]}(memory={mem}MiB) l3:{shape[1]} core:{shape[2]} "
                 f"pu:{shape[3]}(indexes={','.join(map(str, order))})")
    with tempfile.TemporaryDirectory() as tmp:
        raw = f"{tmp}/raw.xml"
        subprocess.run(["lstopo-no-graphics", "--input", synthetic, "--of", "xml", raw], check=True)
        dist = d.get("node_distance")
        if dist:
            with open(f"{tmp}/dist", "w") as f:
                f.write("name=NUMALatency\n5\n%d\n" % len(dist))
                for i in range(len(dist)):
                    f.write(f"NUMANode:{i}\n")
                for row in dist:
                    for v in row:
                        f.write(f"{v}\n")
            subprocess.run(["hwloc-annotate", raw, out, "--", "root", "--", "distances", f"{tmp}/dist"], check=True)
        else:
            subprocess.run(["cp", raw, out], check=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
