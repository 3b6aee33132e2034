#!/usr/bin/env python3
"""Turn a real machine's lscpu / sysfs description into a slubsim topology JSON.

    tools/import-topology.py --lscpu FILE [--sysfs DIR] --latencies-from PRESET_OR_FILE
                             [--name NAME] [--memory-gb-per-node G] [--llc L3|L2|socket|node]
                             [--description TEXT] -o OUT.json

--lscpu FILE   output of `lscpu -p=CPU,CORE,SOCKET,NODE,CACHE` (caches as L1d:L1i:L2:L3 ids) or of
               plain `lscpu -p` (caches as separate columns after an empty one); the last `# `
               comment line before the data names the columns, in any order.
--sysfs DIR    a copy of /sys/devices/system (DIR/cpu, DIR/node): per CPU
               topology/{physical_package_id,core_id,thread_siblings_list} and the shared_cpu_list
               of the level-3 cache; per node cpulist, distance (SLIT) and meminfo (MemTotal).
               With --lscpu as well, the two must agree on the layout; sysfs adds memory and
               distances, and may then hold node/ only.
--latencies-from   the latency classes and smt_private_work_factor (with their sources and ranges)
               are measured data that lscpu cannot give: they are copied from this preset
               (configs/topologies/NAME.json) or topology file, the closest measured part, each
               source beginning "copied from preset NAME: ", each range's source naming NAME.
--memory-gb-per-node   memory per node when the input has none (lscpu only), or to override it.
--llc          which cache is the LLC domain (default L3); socket or node when the machine has
               no shared L3 in the input.

Bad input: `import-topology: error: FILE: FIELD/line: what is wrong`, exit code 2, and no output
file. The output is deterministic: the same inputs give the same bytes.
"""
import argparse
import json
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_CPUS = 4096
CLASSES = ["smt", "llc", "socket_local_home", "socket_remote_home", "cross_socket",
           "cross_socket_reader_home", "dram_local", "dram_remote"]


class InputError(Exception):
    pass


def fail(where, what):
    raise InputError(f"{where}: {what}")


# ---- CPU lists -------------------------------------------------------------------------------

def parse_cpulist(text, where):
    out = set()
    text = text.strip()
    if not text:
        return []
    for item in text.split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", item.strip())
        if not m:
            fail(where, f"'{item}' in '{text}' is not a CPU number or range")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            fail(where, f"range '{item}' runs backwards")
        if hi >= MAX_CPUS:
            fail(where, f"CPU {hi} is above {MAX_CPUS - 1}")
        out.update(range(lo, hi + 1))
    return sorted(out)


def format_cpulist(cpus):
    cpus = sorted(cpus)
    parts = []
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        parts.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(parts)


# ---- a layout: per CPU, the key of its socket, core, node and LLC ----------------------------

class Layout:
    def __init__(self, origin):
        self.origin = origin          # what the layout was read from, for messages
        self.socket = {}              # cpu -> socket key
        self.core = {}                # cpu -> core key
        self.node = {}                # cpu -> node id (the machine's own number)
        self.llc = {}                 # cpu -> LLC key
        self.memory_kb = {}           # node id -> MemTotal kB
        self.distance = {}            # node id -> {node id: distance}
        self.mem_nodes = []           # nodes with memory but no CPU (dropped)
        self.node_dir = "node"        # where node*/ were read, for messages

    def groups(self, attr):
        g = {}
        for cpu in sorted(getattr(self, attr)):
            g.setdefault(getattr(self, attr)[cpu], []).append(cpu)
        return g

    def partition(self, attr):
        return sorted(tuple(v) for v in self.groups(attr).values())


# ---- lscpu -p ----------------------------------------------------------------------------------

def read_lscpu(path, llc_level):
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        fail(path, e.strerror.lower())
    except UnicodeDecodeError:
        fail(path, "not a text file")
    header, header_line = None, 0
    rows = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if line.startswith("#"):
            if rows:
                fail(f"{path}: line {i}", "a comment line after the data")
            header, header_line = line[1:].strip(), i
            continue
        if header is None:
            fail(f"{path}: line {i}", "data before the '# CPU,Core,...' header line")
        rows.append((i, line))
    if header is None:
        fail(path, "no '# CPU,Core,Socket,Node,...' header line: not `lscpu -p` output")
    if not rows:
        fail(path, "no CPU lines")
    # Column names; a name with ':' (lscpu -p=...,CACHE) is several caches in one column.
    cols = [c.strip() for c in header.split(",")]
    names = [[n.lower() for n in c.split(":")] for c in cols]
    flat = [n for ns in names for n in ns]
    hw = f"{path}: line {header_line}"
    for need in ("cpu", "core", "socket", "node"):
        if need not in flat:
            fail(hw, f"no {need.upper() if need == 'cpu' else need.capitalize()} column "
                     f"(use lscpu -p=CPU,CORE,SOCKET,NODE,CACHE)")
    llc_col = llc_level.lower()
    if llc_col in ("l3", "l2") and llc_col not in flat:
        caches = [n for n in flat if re.fullmatch(r"l\d[di]?", n)]
        fail(hw, f"no {llc_level} cache column (caches: {', '.join(caches) or 'none'}); "
                 f"run lscpu -p=CPU,CORE,SOCKET,NODE,CACHE on the machine, or give --llc socket|node")
    lay = Layout(f"--lscpu {path}")
    for i, line in rows:
        where = f"{path}: line {i}"
        vals = [v.strip() for v in line.split(",")]
        if len(vals) != len(cols):
            fail(where, f"{len(vals)} fields, the header has {len(cols)}")
        rec = {}
        for ns, v in zip(names, vals):
            parts = v.split(":") if len(ns) > 1 else [v]
            if len(ns) > 1 and len(parts) != len(ns):
                fail(where, f"'{v}' has {len(parts)} cache ids, the header names {len(ns)}")
            for n, p in zip(ns, parts):
                rec[n] = p

        def num(field):
            v = rec.get(field, "")
            if not re.fullmatch(r"\d+", v):
                fail(where, f"{field.upper() if field == 'cpu' else field.capitalize()} "
                            f"'{v}' is not a number")
            return int(v)
        if rec.get("online", "Y").upper() == "N":
            continue
        cpu = num("cpu")
        if cpu >= MAX_CPUS:
            fail(where, f"CPU {cpu} is above {MAX_CPUS - 1}")
        if cpu in lay.socket:
            fail(where, f"CPU {cpu} appears twice")
        lay.socket[cpu] = num("socket")
        lay.core[cpu] = num("core")
        lay.node[cpu] = num("node")
        lay.llc[cpu] = num(llc_col) if llc_col in ("l3", "l2") else None
    return lay


# ---- sysfs -----------------------------------------------------------------------------------

def read_text(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError as e:
        fail(path, e.strerror.lower())


def read_int(path):
    v = read_text(path)
    if not re.fullmatch(r"-?\d+", v):
        fail(path, f"'{v}' is not an integer")
    return int(v)


def numbered(dirpath, prefix):
    out = []
    for e in os.listdir(dirpath):
        m = re.fullmatch(prefix + r"(\d+)", e)
        if m and os.path.isdir(os.path.join(dirpath, e)):
            out.append(int(m.group(1)))
    return sorted(out)


def sysfs_root(d):
    for cand in (d, os.path.join(d, "devices", "system"), os.path.join(d, "sys", "devices", "system")):
        if os.path.isdir(os.path.join(cand, "cpu")) or os.path.isdir(os.path.join(cand, "node")):
            return cand
    if not os.path.isdir(d):
        fail(d, "no such directory")
    fail(d, "neither cpu/ nor node/ in it: give a copy of /sys/devices/system")


def llc_index(cdir, cpu_dir, llc_level):
    """The cache/indexN directory of the wanted level (index3 when no level files)."""
    level = int(llc_level[1])
    if not os.path.isdir(cdir):
        fail(cpu_dir, f"no cache/ directory; give --llc socket|node")
    found = None
    for idx in numbered(cdir, "index"):
        lp = os.path.join(cdir, f"index{idx}", "level")
        if os.path.exists(lp) and read_int(lp) == level:
            tp = os.path.join(cdir, f"index{idx}", "type")
            if not os.path.exists(tp) or read_text(tp) in ("Unified", "Data"):
                found = idx
    if found is None and level == 3 and os.path.isdir(os.path.join(cdir, "index3")):
        found = 3
    if found is None:
        fail(cdir, f"no level-{level} cache index; give --llc socket|node")
    return os.path.join(cdir, f"index{found}", "shared_cpu_list")


def read_sysfs(d, llc_level, need_cpus):
    root = sysfs_root(d)
    lay = Layout(f"--sysfs {d}")
    cpu_dir = os.path.join(root, "cpu")
    if os.path.isdir(cpu_dir):
        online = None
        op = os.path.join(cpu_dir, "online")
        if os.path.exists(op):
            online = set(parse_cpulist(read_text(op), op))
        cpus = [c for c in numbered(cpu_dir, "cpu") if online is None or c in online]
        if not cpus:
            fail(cpu_dir, "no cpuN directories")
        siblings = {}
        for c in cpus:
            cd = os.path.join(cpu_dir, f"cpu{c}")
            td = os.path.join(cd, "topology")
            if not os.path.isdir(td):
                fail(cd, "no topology/ directory (an offline CPU?)")
            lay.socket[c] = read_int(os.path.join(td, "physical_package_id"))
            core_id = read_int(os.path.join(td, "core_id"))
            sp = os.path.join(td, "thread_siblings_list")
            sib = tuple(parse_cpulist(read_text(sp), sp)) if os.path.exists(sp) else None
            if sib is not None and c not in sib:
                fail(sp, f"'{format_cpulist(sib)}' does not include CPU {c} itself")
            siblings[c] = sib
            lay.core[c] = sib if sib is not None else (lay.socket[c], core_id)
            if llc_level in ("L3", "L2"):
                lp = llc_index(os.path.join(cd, "cache"), cd, llc_level)
                lay.llc[c] = tuple(parse_cpulist(read_text(lp), lp))
                if c not in lay.llc[c]:
                    fail(lp, f"'{format_cpulist(lay.llc[c])}' does not include CPU {c} itself")
            else:
                lay.llc[c] = None
        for c, sib in siblings.items():
            for s in sib or ():
                if s in siblings and siblings[s] != sib:   # an offline sibling is reported later
                    fail(os.path.join(cpu_dir, f"cpu{s}", "topology", "thread_siblings_list"),
                         f"CPU {s}'s siblings differ from CPU {c}'s ({format_cpulist(sib)})")
    elif need_cpus:
        fail(root, "no cpu/ directory (give --lscpu too, or copy /sys/devices/system/cpu)")

    node_dir = os.path.join(root, "node")
    if not os.path.isdir(node_dir):
        if need_cpus:
            fail(root, "no node/ directory (copy /sys/devices/system/node)")
        return lay, False
    nodes = numbered(node_dir, "node")
    if not nodes:
        fail(node_dir, "no nodeN directories")
    node_cpus = {}
    lay.node_dir = node_dir
    for n in nodes:
        nd = os.path.join(node_dir, f"node{n}")
        cp = os.path.join(nd, "cpulist")
        node_cpus[n] = parse_cpulist(read_text(cp), cp)
        mp = os.path.join(nd, "meminfo")
        if os.path.exists(mp):
            m = re.search(r"^Node\s+\d+\s+MemTotal:\s+(\d+)\s*kB", read_text(mp), re.M)
            if not m:
                fail(mp, "no 'Node N MemTotal: X kB' line")
            lay.memory_kb[n] = int(m.group(1))
        dp = os.path.join(nd, "distance")
        if os.path.exists(dp):
            row = read_text(dp).split()
            if len(row) != len(nodes) or not all(re.fullmatch(r"\d+", x) for x in row):
                fail(dp, f"'{' '.join(row)}' is not {len(nodes)} distances, one per node")
            lay.distance[n] = dict(zip(nodes, (int(x) for x in row)))
    if lay.distance and len(lay.distance) != len(nodes):
        missing = [n for n in nodes if n not in lay.distance]
        fail(os.path.join(node_dir, f"node{missing[0]}", "distance"), "missing (other nodes have one)")
    for n, cl in node_cpus.items():
        if not cl:
            lay.mem_nodes.append(n)
        for c in cl:
            if c in lay.node:
                fail(os.path.join(node_dir, f"node{n}", "cpulist"),
                     f"CPU {c} is also in node{lay.node[c]}")
            lay.node[c] = n
    return lay, True


# ---- the preset the latencies come from ------------------------------------------------------

def load_preset(arg):
    path = arg if (os.sep in arg or arg.endswith(".json")) else os.path.join(ROOT, "configs", "topologies", arg + ".json")
    if not os.path.exists(path):
        known = sorted(f[:-5] for f in os.listdir(os.path.join(ROOT, "configs", "topologies")) if f.endswith(".json"))
        fail("command line: --latencies-from", f"no preset or file '{arg}' (presets: {', '.join(known)})")
    try:
        with open(path) as f:
            doc = json.load(f)
    except json.JSONDecodeError as e:
        fail(path, f"not valid JSON: {e}")
    lat = doc.get("latency_ns") if isinstance(doc, dict) else None
    if not isinstance(lat, dict):
        fail(path, "latency_ns: missing field")
    for c in CLASSES:
        v = lat.get(c)
        if not isinstance(v, dict) or "value" not in v or not str(v.get("source", "")).strip():
            fail(path, f"latency_ns.{c}: needs a value and a source")
        if not isinstance(v["value"], (int, float)) or not v["value"] > 0:
            fail(path, f"latency_ns.{c}.value: must be a positive number")
    f = doc.get("smt_private_work_factor")
    if not isinstance(f, dict) or not isinstance(f.get("value"), (int, float)) or not str(f.get("source", "")).strip():
        fail(path, "smt_private_work_factor: needs a value and a source")
    size = (doc.get("llc") or {}).get("size_kb") if isinstance(doc.get("llc"), dict) else None
    if not isinstance(size, dict) or not isinstance(size.get("value"), (int, float)) or not str(size.get("source", "")).strip():
        fail(path, "llc.size_kb: needs a value and a source")
    hit = doc["llc"].get("hit_ns")
    if not isinstance(hit, dict) or not isinstance(hit.get("value"), (int, float)) or not str(hit.get("source", "")).strip():
        fail(path, "llc.hit_ns: needs a value and a source")
    # A range is copied with its figure: the loader's rules (docs/topology-format.md).
    for where, v in [(f"latency_ns.{c}", lat[c]) for c in CLASSES] + [
            ("smt_private_work_factor", f), ("llc.size_kb", size), ("llc.hit_ns", hit)]:
        if "range" in v:
            r = v["range"]
            if (not isinstance(r, list) or len(r) != 2 or not all(isinstance(x, (int, float)) for x in r)
                    or not r[0] <= v["value"] <= r[1]):
                fail(path, f"{where}.range: needs [low, high] with low <= value ({v['value']}) <= high")
        if "range_source" in v and ("range" not in v or not str(v["range_source"]).strip()):
            fail(path, f"{where}.range_source: a range's source needs a range and must not be blank")
    return doc.get("name", arg), path, lat, f, (size, hit)


def copied(fig, pname, why=""):
    """A preset's figure copied: its value and range as the preset has them, its source marked
    "copied from preset NAME: ..." (`slubsim inputs` shows it as kind copied), the range's source
    naming the preset. As slubsim import writes it (sim/machine/hwloc_import.cpp copied_figure)."""
    out = {"value": fig["value"],
           "source": f"copied from preset {pname}{f' ({why})' if why else ''}: {fig['source']}"}
    if "range" in fig:
        out["range"] = fig["range"]
        out["range_source"] = f"preset {pname}'s: {fig.get('range_source') or 'the range its source states'}"
    return out


# ---- building the topology -------------------------------------------------------------------

def merge(lscpu, sysfs, sysfs_has_nodes):
    """Layout from lscpu and/or sysfs; both present must agree."""
    if lscpu is None:
        return sysfs
    if sysfs is None:
        return lscpu
    for attr, what in (("socket", "sockets"), ("core", "cores"), ("llc", "LLC domains"), ("node", "nodes")):
        if attr == "node" and not sysfs_has_nodes:
            continue
        if attr != "node" and not sysfs.socket:
            continue   # sysfs copy has node/ only
        if attr == "llc" and None in lscpu.llc.values():
            continue
        a, b = lscpu.partition(attr), sysfs.partition(attr)
        if a != b:
            diff = next((x for x in a if x not in b), None) or next(x for x in b if x not in a)
            fail(f"{lscpu.origin} and {sysfs.origin}",
                 f"{what} differ (e.g. {format_cpulist(diff)} is a group in one but not the other)")
    lscpu.memory_kb, lscpu.distance, lscpu.mem_nodes = sysfs.memory_kb, sysfs.distance, sysfs.mem_nodes
    lscpu.node_dir = sysfs.node_dir
    if sysfs_has_nodes:
        # keep the machine's node numbers from sysfs (they key memory and distances)
        lscpu.node = dict(sysfs.node)
    return lscpu


def renumber(groups):
    """Group keys -> 0..n-1 in the order of each group's lowest CPU."""
    order = sorted(groups, key=lambda k: min(groups[k]))
    return {k: i for i, k in enumerate(order)}


def compact_smt(cores, nr_cpus):
    """{"threads_per_core": T[, "sibling_offset": K]} when it gives exactly these cores."""
    tpc = len(cores[0])
    if any(len(c) != tpc for c in cores) or tpc > 8 or nr_cpus % tpc:
        return None
    if tpc == 1:
        return {"threads_per_core": 1}
    off = nr_cpus // tpc
    implied = sorted(tuple(k + t * off for t in range(tpc)) for k in range(off))
    return {"threads_per_core": tpc, "sibling_offset": off} if implied == sorted(cores) else None


def compact_llc(domains, cores, cpu_socket, cpu_node):
    """{"cores_per_domain": C} when the loader's rule (consecutive cores in hwloc order, per
    socket) gives exactly these domains."""
    order = sorted(cores, key=lambda c: (cpu_socket[c[0]], cpu_node[c[0]], c[0]))
    sizes = {len([c for c in cores if c[0] in d]) for d in domains}
    if len(sizes) != 1:
        return None
    cpd = sizes.pop()
    implied, cur, n, sock = [], [], cpd, None
    for core in order:
        s = cpu_socket[core[0]]
        if n == cpd or s != sock:
            if cur:
                implied.append(tuple(sorted(cur)))
            cur, n, sock = [], 0, s
        cur += core
        n += 1
    implied.append(tuple(sorted(cur)))
    return {"cores_per_domain": cpd} if sorted(implied) == sorted(tuple(d) for d in domains) else None


def build(lay, args, preset):
    cpus = sorted(lay.socket)
    n = len(cpus)
    if not cpus:
        fail(lay.origin, "no CPUs")
    if cpus != list(range(n)):
        missing = next(c for c in range(n) if c not in lay.socket)
        fail(lay.origin, f"CPU ids must be 0..N-1: CPU {missing} is missing (offline?) while CPU {cpus[-1]} is present")
    missing_node = [c for c in cpus if c not in lay.node]
    if missing_node:
        fail(lay.origin, f"CPU {missing_node[0]} is in no NUMA node")
    if args.llc == "socket":
        lay.llc = dict(lay.socket)
    elif args.llc == "node":
        lay.llc = dict(lay.node)

    sockets = lay.groups("socket")
    sid = renumber(sockets)
    cpu_socket = {c: sid[lay.socket[c]] for c in cpus}
    nodes = lay.groups("node")
    node_ids = sorted(nodes)                     # the machine's numbers, CPU nodes only
    nid = {k: i for i, k in enumerate(node_ids)}
    cpu_node = {c: nid[lay.node[c]] for c in cpus}
    cores = sorted(tuple(v) for v in lay.groups("core").values())
    for core in cores:
        if len({cpu_socket[c] for c in core}) > 1 or len({cpu_node[c] for c in core}) > 1:
            fail(lay.origin, f"core {format_cpulist(core)} spans sockets or nodes")
        if len(core) > 8:
            fail(lay.origin, f"core {format_cpulist(core)} has {len(core)} threads (at most 8)")
    domains = sorted(tuple(v) for v in lay.groups("llc").values())
    cpu_llc = {c: i for i, d in enumerate(domains) for c in d}
    for d in domains:
        if len({cpu_socket[c] for c in d}) > 1:
            fail(lay.origin, f"LLC domain {format_cpulist(d)} spans sockets")
    for core in cores:
        if len({cpu_llc[c] for c in core}) > 1:
            fail(lay.origin, f"core {format_cpulist(core)} is split between LLC domains")

    # memory
    memory_mb = {}
    mem_note = ""
    if args.memory_gb_per_node is not None:
        memory_mb = {k: int(round(args.memory_gb_per_node * 1024)) for k in node_ids}
        mem_note = f"memory_mb = {args.memory_gb_per_node:g} GB per node, given on the command line (--memory-gb-per-node)"
    else:
        absent = [k for k in node_ids if k not in lay.memory_kb]
        if absent:
            fail("command line: --memory-gb-per-node",
                 f"node {absent[0]} has no MemTotal in the input (lscpu gives none): give --memory-gb-per-node")
        for k in node_ids:
            if lay.memory_kb[k] < 1024:
                fail(os.path.join(lay.node_dir, f"node{k}", "meminfo"), f"MemTotal {lay.memory_kb[k]} kB is below 1 MB")
            memory_mb[k] = lay.memory_kb[k] // 1024
        mem_note = "memory_mb = node*/meminfo MemTotal (kB / 1024, rounded down)"

    # distances (sysfs only), restricted to the nodes with CPUs
    distance = None
    if lay.distance:
        distance = [[lay.distance[a][b] for b in node_ids] for a in node_ids]
        for i, a in enumerate(node_ids):
            for j, b in enumerate(node_ids):
                v = distance[i][j]
                where = os.path.join(lay.node_dir, f"node{a}", "distance")
                if i == j and v != 10:
                    fail(where, f"the distance to itself is {v}, not 10")
                if i != j and not 10 <= v <= 255:
                    fail(where, f"the distance to node{b} is {v}, not in 10..255")
                if distance[j][i] != v:
                    fail(where, f"the distance to node{b} is {v} but node{b}'s to node{a} is {distance[j][i]}")

    pname, ppath, lat, smt_factor, (llc_size, llc_hit) = preset
    smt = compact_smt(cores, n) or {"cores": [format_cpulist(c) for c in sorted(cores)]}
    llc = compact_llc(domains, cores, cpu_socket, cpu_node) or {"domains": [format_cpulist(d) for d in domains]}
    # lscpu -p gives no cache sizes: one domain's size comes from the preset, marked.
    llc["size_kb"] = copied(llc_size, pname, "lscpu -p gives no cache size")
    llc["hit_ns"] = copied(llc_hit, pname)
    tpc = sorted({len(c) for c in cores})
    per_socket = sorted({len([c for c in cores if cpu_socket[c[0]] == s]) for s in range(len(sockets))})
    def count(k, what):
        return f"{k} {what}" + ("" if k == 1 or k == "1" else "s")
    shape = (f"{count(len(sockets), 'socket')} x {count('/'.join(map(str, per_socket)), 'core')} x "
             f"{count('/'.join(map(str, tpc)), 'thread')} = {count(n, 'CPU')}, "
             f"{count(len(node_ids), 'NUMA node')}, {count(len(domains), 'LLC domain')}")
    inputs = " and ".join(x for x in (args.lscpu and f"lscpu -p output {args.lscpu}",
                                      args.sysfs and f"a sysfs copy {args.sysfs}") if x)
    src = [f"Imported by tools/import-topology.py from {inputs}: sockets, cores, NUMA nodes and LLC "
           f"domains ({args.llc}) as the input gives them"]
    if lay.mem_nodes:
        src.append(f"memory-only nodes {', '.join(f'node{k}' for k in lay.mem_nodes)} dropped (slubsim nodes need CPUs)")
    if [nid[k] for k in node_ids] != node_ids:
        src.append("nodes renumbered " + ", ".join(f"node{k} -> {nid[k]}" for k in node_ids if nid[k] != k))
    src.append(mem_note)
    src.append("node_distance from node*/distance" if distance else "no node_distance in the input")
    src.append(f"latency_ns and smt_private_work_factor copied from preset {pname} "
               f"(--latencies-from), the closest measured part; their own sources and ranges follow each value")
    doc = {
        "name": args.name,
        "description": args.description or f"{shape}; imported from {inputs}.",
        "source": "; ".join(src) + ".",
        "sockets": [{"id": i, "cpus": format_cpulist(sockets[k])} for k, i in sorted(sid.items(), key=lambda x: x[1])],
        "nodes": [{"id": nid[k], "cpus": format_cpulist(nodes[k]), "memory_mb": memory_mb[k]} for k in node_ids],
        "smt": smt,
        "llc": llc,
        "latency_ns": {c: copied(lat[c], pname) for c in CLASSES},
        "smt_private_work_factor": copied(smt_factor, pname),
    }
    if distance:
        doc["node_distance"] = distance

    # Placeholders of the preset for classes this machine has.
    occurs = {"smt": tpc != [1], "llc": True,
              "socket_local_home": any(len({cpu_llc[c] for c in sockets[k]}) > 1 for k in sockets),
              "socket_remote_home": len(sockets) > 1, "cross_socket": len(sockets) > 1,
              "cross_socket_reader_home": len(sockets) > 1,
              "dram_local": True, "dram_remote": len(sockets) > 1}
    warnings = [c for c in CLASSES if occurs[c] and "unused" in lat[c]["source"].lower()]
    if occurs["smt"] and "unused" in smt_factor["source"].lower():
        warnings.append("smt_private_work_factor")
    return doc, warnings


def dump(doc):
    """The presets' style: one line per socket, node, latency class and distance row."""
    one = lambda x: json.dumps(x, ensure_ascii=False)
    out = ["{"]
    for k in ("name", "description", "source"):
        out.append(f"  {one(k)}: {one(doc[k])},")
    for k in ("sockets", "nodes"):
        out.append(f'  "{k}": [\n' + ",\n".join("    " + one(x) for x in doc[k]) + "\n  ],")
    for k in ("smt", "llc"):
        v = doc[k]
        lst = v.get("cores") or v.get("domains")
        if lst is not None:
            key = "cores" if "cores" in v else "domains"
            rest = "".join(f", {one(x)}: {one(y)}" for x, y in v.items() if x != key)
            out.append(f'  "{k}": {{"{key}": [\n' + ",\n".join("    " + one(x) for x in lst) + f"\n  ]{rest}}},")
        else:
            out.append(f"  {one(k)}: {one(v)},")
    out.append('  "latency_ns": {\n' + ",\n".join(f"    {one(c)}: {one(v)}" for c, v in doc["latency_ns"].items()) + "\n  },")
    tail = f'  "smt_private_work_factor": {one(doc["smt_private_work_factor"])}'
    if "node_distance" in doc:
        tail += ',\n  "node_distance": [\n' + ",\n".join("    " + one(r) for r in doc["node_distance"]) + "\n  ]"
    out.append(tail)
    out.append("}")
    return "\n".join(out) + "\n"


def write_atomically(path, text):
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        fail(f"command line: -o {path}", "the directory does not exist")
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".import-topology.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        sys.stderr.write(f"import-topology: error: command line: {message}\n")
        sys.exit(2)


def main():
    ap = Parser(description=__doc__.split("\n\n")[0],
                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 2)[2])
    ap.add_argument("--lscpu", metavar="FILE", help="lscpu -p[=CPU,CORE,SOCKET,NODE,CACHE] output")
    ap.add_argument("--sysfs", metavar="DIR", help="a copy of /sys/devices/system")
    ap.add_argument("--latencies-from", required=True, metavar="PRESET_OR_FILE",
                    help="topology preset whose latency classes (measured data) are copied")
    ap.add_argument("--name", help="preset name (default: the output file's name without .json)")
    ap.add_argument("--memory-gb-per-node", type=float, metavar="G",
                    help="memory per NUMA node in GB when the input has none (or to override it)")
    ap.add_argument("--llc", default="L3", choices=["L3", "L2", "socket", "node"],
                    help="what one LLC domain is (default: the L3 cache)")
    ap.add_argument("--description", help="free text (default: the shape of the machine)")
    ap.add_argument("-o", "--output", required=True, metavar="OUT.json")
    args = ap.parse_args()
    if not args.lscpu and not args.sysfs:
        ap.error("give --lscpu FILE and/or --sysfs DIR")
    if args.memory_gb_per_node is not None and not args.memory_gb_per_node > 0:
        ap.error("--memory-gb-per-node: must be above 0")
    if args.name is None:
        args.name = os.path.basename(args.output)
        args.name = args.name[:-5] if args.name.endswith(".json") else args.name
    if not args.name:
        ap.error("--name: must not be empty")
    try:
        preset = load_preset(args.latencies_from)
        lscpu = read_lscpu(args.lscpu, args.llc) if args.lscpu else None
        sysfs, has_nodes = read_sysfs(args.sysfs, args.llc, need_cpus=lscpu is None) if args.sysfs else (None, False)
        doc, warnings = build(merge(lscpu, sysfs, has_nodes), args, preset)
        write_atomically(args.output, dump(doc))
    except InputError as e:
        sys.stderr.write(f"import-topology: error: {e}\n")
        sys.exit(2)
    for w in warnings:
        sys.stderr.write(f"import-topology: warning: {w}: the figure copied from {preset[0]} is a "
                         f"placeholder there (its source says unused), but this machine has it: check the value\n")
    print(f"import-topology: wrote {args.output} ({doc['description'].split(';')[0]})")


if __name__ == "__main__":
    main()
