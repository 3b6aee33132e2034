#include "sim/machine/hwloc_import.h"

#include <hwloc.h>

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <set>

#include "sim/machine/cpulist.h"
#include "sim/machine/machine.h"
#include "sim/machine/topology.h"

namespace slubsim {

namespace {

struct TopologyHandle {
  hwloc_topology_t t = nullptr;
  ~TopologyHandle() {
    if (t) hwloc_topology_destroy(t);
  }
};

// Key of a PU's ancestor of `type`, or -1.
int ancestor_key(hwloc_topology_t t, hwloc_obj_t pu, hwloc_obj_type_t type) {
  hwloc_obj_t a = hwloc_get_ancestor_obj_by_type(t, type, pu);
  return a ? static_cast<int>(a->logical_index) : -1;
}

// A figure copied from a preset: its value and range as the preset has them, its source marked
// ("copied from preset NAME[ (why)]: " and the preset's source: sim/trust/inputs.h kind copied),
// and its range's source naming the preset ("preset NAME's: " and the preset's range source, or
// the range the preset's source states).
json copied_figure(const json& from, const std::string& preset, const std::string& why = "") {
  json x = from;
  x["source"] = fmt::format("copied from preset {}{}: {}", preset, why.empty() ? "" : " (" + why + ")",
                            from.at("source").get<std::string>());
  if (from.contains("range"))
    x["range_source"] = fmt::format("preset {}'s: {}", preset,
                                    from.contains("range_source") ? from.at("range_source").get<std::string>()
                                                                  : std::string("the range its source states"));
  return x;
}

// Groups of CPUs with one key, in the order of each group's lowest CPU.
std::vector<std::vector<int>> groups(const std::vector<int>& key) {
  std::map<int, std::vector<int>> by;
  for (std::size_t c = 0; c < key.size(); ++c) by[key[c]].push_back(static_cast<int>(c));
  std::vector<std::vector<int>> out;
  for (auto& [k, cpus] : by) out.push_back(std::move(cpus));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  return out;
}

std::string plural(std::size_t n, const char* what) { return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s"); }

}  // namespace

HwlocLayout read_hwloc(const std::string& file) {
  const std::string where = file.empty() ? "this machine" : file;
  if (!file.empty() && !is_file(file)) throw ConfigError(file, "", "no such file");
  TopologyHandle h;
  if (hwloc_topology_init(&h.t) != 0) throw ConfigError(where, "", "hwloc could not start");
  // Every CPU the machine has, not only those this process may run on (a container's cpuset).
  hwloc_topology_set_flags(h.t, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
  if (!file.empty() && hwloc_topology_set_xml(h.t, file.c_str()) != 0)
    throw ConfigError(file, "", "not an hwloc XML topology (lstopo --of xml writes one): hwloc cannot read it");
  if (hwloc_topology_load(h.t) != 0)
    throw ConfigError(where, "", "not an hwloc XML topology (lstopo --of xml writes one): hwloc cannot load it");
  HwlocLayout out;
  out.origin = where;
  const int n = hwloc_get_nbobjs_by_type(h.t, HWLOC_OBJ_PU);
  if (n <= 0) throw ConfigError(where, "", "no processing unit (PU) in the topology");
  int max_os = -1;
  for (int i = 0; i < n; ++i) max_os = std::max(max_os, static_cast<int>(hwloc_get_obj_by_type(h.t, HWLOC_OBJ_PU, static_cast<unsigned>(i))->os_index));
  if (max_os != n - 1)
    throw ConfigError(where, "", fmt::format("CPU numbers must be 0..N-1: {} CPUs, the highest numbered {} (offline CPUs?)", n, max_os));
  out.socket.assign(static_cast<std::size_t>(n), -1);
  out.node.assign(static_cast<std::size_t>(n), -1);
  out.core.assign(static_cast<std::size_t>(n), -1);
  out.llc.assign(static_cast<std::size_t>(n), -1);
  // The last-level cache: the L3, else the L2 shared by more than one core, else the socket.
  int llc_depth = hwloc_get_cache_type_depth(h.t, 3, HWLOC_OBJ_CACHE_UNIFIED);
  out.llc_level = "L3";
  if (llc_depth < 0) {
    llc_depth = hwloc_get_cache_type_depth(h.t, 2, HWLOC_OBJ_CACHE_UNIFIED);
    out.llc_level = "L2";
  }
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t pu = hwloc_get_obj_by_type(h.t, HWLOC_OBJ_PU, static_cast<unsigned>(i));
    const auto c = static_cast<std::size_t>(pu->os_index);
    if (out.socket[c] != -1) throw ConfigError(where, "", fmt::format("CPU {} appears twice", c));
    out.socket[c] = std::max(0, ancestor_key(h.t, pu, HWLOC_OBJ_PACKAGE));
    const int core = ancestor_key(h.t, pu, HWLOC_OBJ_CORE);
    out.core[c] = core >= 0 ? core : n + static_cast<int>(c);  // no Core objects: a core per CPU
    hwloc_obj_t l = llc_depth >= 0 ? hwloc_get_ancestor_obj_by_depth(h.t, static_cast<unsigned>(llc_depth), pu) : nullptr;
    out.llc[c] = l ? static_cast<int>(l->logical_index) : -1;
    if (l && l->attr && l->attr->cache.size > 0 && (out.llc_bytes == 0 || l->attr->cache.size < out.llc_bytes))
      out.llc_bytes = l->attr->cache.size;
  }
  if (std::count(out.llc.begin(), out.llc.end(), -1) == n) {
    out.llc = out.socket;
    out.llc_level = "socket";
    out.llc_bytes = 0;
  } else if (std::count(out.llc.begin(), out.llc.end(), -1) > 0) {
    throw ConfigError(where, "", fmt::format("some CPUs are under no {} cache and others are", out.llc_level));
  }
  const int nn = hwloc_get_nbobjs_by_type(h.t, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < nn; ++i) {
    hwloc_obj_t node = hwloc_get_obj_by_type(h.t, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    HwlocLayout::Node nd;
    nd.os_index = static_cast<int>(node->os_index);
    nd.memory_bytes = node->attr ? node->attr->numanode.local_memory : 0;
    for (int c = 0; c < n; ++c)
      if (hwloc_bitmap_isset(node->cpuset, static_cast<unsigned>(c))) {
        if (out.node[static_cast<std::size_t>(c)] != -1)
          throw ConfigError(where, "", fmt::format("CPU {} is in NUMA nodes {} and {}", c, out.node[static_cast<std::size_t>(c)], nd.os_index));
        out.node[static_cast<std::size_t>(c)] = nd.os_index;
        nd.has_cpus = true;
      }
    out.nodes.push_back(nd);
  }
  for (int c = 0; c < n; ++c)
    if (out.node[static_cast<std::size_t>(c)] < 0) throw ConfigError(where, "", fmt::format("CPU {} is in no NUMA node", c));
  // The firmware's NUMA latencies (SLIT), as hwloc keeps them.
  unsigned nr = 1;
  hwloc_distances_s* d = nullptr;
  if (hwloc_distances_get_by_type(h.t, HWLOC_OBJ_NUMANODE, &nr, &d, HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) == 0 && nr >= 1) {
    for (unsigned i = 0; i < d->nbobjs; ++i) out.distance_nodes.push_back(static_cast<int>(d->objs[i]->os_index));
    out.distance.assign(d->nbobjs, std::vector<std::uint64_t>(d->nbobjs));
    for (unsigned i = 0; i < d->nbobjs; ++i)
      for (unsigned j = 0; j < d->nbobjs; ++j) out.distance[i][j] = d->values[i * d->nbobjs + j];
    hwloc_distances_release(h.t, d);
  }
  return out;
}

json topology_document(const HwlocLayout& l, const ImportRequest& r) {
  const int n = static_cast<int>(l.socket.size());
  const auto sockets = groups(l.socket);
  const auto cores = groups(l.core);
  const auto domains = groups(l.llc);
  // Nodes with CPUs, by OS index, renumbered 0..N-1 (slubsim's nodes need CPUs).
  std::vector<const HwlocLayout::Node*> nodes;
  std::vector<int> memory_only;
  for (const auto& nd : l.nodes) (nd.has_cpus ? nodes.push_back(&nd) : memory_only.push_back(nd.os_index));
  std::sort(nodes.begin(), nodes.end(), [](auto* a, auto* b) { return a->os_index < b->os_index; });
  std::map<int, int> node_id;
  for (std::size_t i = 0; i < nodes.size(); ++i) node_id[nodes[i]->os_index] = static_cast<int>(i);

  json doc = json::object();
  doc["name"] = r.name;
  std::set<std::size_t> threads;
  for (const auto& c : cores) threads.insert(c.size());
  const std::string shape =
      fmt::format("{} x {} x {} = {}, {}, {} ({})", plural(sockets.size(), "socket"),
                  plural(cores.size() / sockets.size(), "core"), plural(*threads.rbegin(), "thread"), plural(static_cast<std::size_t>(n), "CPU"),
                  plural(nodes.size(), "NUMA node"), plural(domains.size(), "LLC domain"), l.llc_level);
  doc["description"] = r.description.empty() ? fmt::format("{}; imported from hwloc ({}).", shape, l.origin) : r.description;
  std::vector<std::string> src{fmt::format("Imported by slubsim import from hwloc ({}): sockets (packages), cores, NUMA "
                                           "nodes, LLC domains ({} caches) and memory as hwloc gives them",
                                           l.origin, l.llc_level)};
  if (!memory_only.empty()) {
    std::vector<std::string> names;
    for (int k : memory_only) names.push_back(fmt::format("node{}", k));
    src.push_back(fmt::format("memory-only nodes {} left out (slubsim's nodes need CPUs)", fmt::join(names, ", ")));
  }
  src.push_back(l.distance.empty() ? "no NUMA distances in the input" : "node_distance from hwloc's NUMA latency matrix (the firmware's SLIT)");
  src.push_back(fmt::format("latency_ns and smt_private_work_factor copied from preset {} (--latencies-from): hwloc "
                            "knows no cache-line transfer times; each keeps its own source and range",
                            r.latencies_name));
  doc["source"] = fmt::format("{}.", fmt::join(src, "; "));
  json js = json::array();
  for (std::size_t s = 0; s < sockets.size(); ++s) js.push_back({{"id", s}, {"cpus", format_cpulist(sockets[s])}});
  doc["sockets"] = js;
  json jn = json::array();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    std::vector<int> cpus;
    for (int c = 0; c < n; ++c)
      if (l.node[static_cast<std::size_t>(c)] == nodes[i]->os_index) cpus.push_back(c);
    const std::uint64_t mb = nodes[i]->memory_bytes / (1024 * 1024);
    if (mb == 0) throw ConfigError(l.origin, "", fmt::format("NUMA node {} has no memory (hwloc gives {} bytes)", nodes[i]->os_index, nodes[i]->memory_bytes));
    jn.push_back({{"id", i}, {"cpus", format_cpulist(cpus)}, {"memory_mb", mb}});
  }
  doc["nodes"] = jn;
  // SMT: the compact form when it gives exactly these cores (docs/topology-format.md).
  json smt;
  const std::size_t tpc = cores.front().size();
  bool uniform = std::all_of(cores.begin(), cores.end(), [&](const auto& c) { return c.size() == tpc; });
  if (uniform && tpc == 1) {
    smt = {{"threads_per_core", 1}};
  } else if (uniform && tpc <= 8 && n % static_cast<int>(tpc) == 0) {
    const int off = n / static_cast<int>(tpc);
    bool fits = true;
    for (const auto& c : cores)
      for (std::size_t k = 0; k < c.size() && fits; ++k) fits = c[k] == c[0] + static_cast<int>(k) * off;
    if (fits) smt = {{"threads_per_core", tpc}, {"sibling_offset", off}};
  }
  if (smt.is_null()) {
    json list = json::array();
    for (const auto& c : cores) list.push_back(format_cpulist(c));
    smt = {{"cores", list}};
  }
  doc["smt"] = smt;
  json dl = json::array();
  for (const auto& d : domains) dl.push_back(format_cpulist(d));
  // The latency classes, copied from the preset with their sources and ranges, marked (copied_figure).
  const json preset = load_json_file(r.latencies_file);
  JsonView pv(preset, r.latencies_file);
  // One domain's cache size: hwloc's, else (no shared cache in the input) the preset's, marked.
  json size;
  if (l.llc_bytes > 0) {
    size = {{"value", l.llc_bytes / 1024},
            {"source", fmt::format("hwloc ({}): the {} cache's size", l.origin, l.llc_level)}};
  } else {
    size = copied_figure(pv.at("llc").at("size_kb").raw(), r.latencies_name, "the input gives no shared cache size");
  }
  const json hit = copied_figure(pv.at("llc").at("hit_ns").raw(), r.latencies_name);  // hwloc knows no latencies
  doc["llc"] = {{"domains", dl}, {"size_kb", size}, {"hit_ns", hit}};
  json lat = json::object();
  for (int c = 0; c < kDistanceClasses; ++c) {
    const char* cls = distance_name(static_cast<Distance>(c));
    lat[cls] = copied_figure(pv.at("latency_ns").at(cls).raw(), r.latencies_name);
  }
  doc["latency_ns"] = lat;
  doc["smt_private_work_factor"] = copied_figure(pv.at("smt_private_work_factor").raw(), r.latencies_name);
  if (!l.distance.empty()) {
    json rows = json::array();
    for (const auto* a : nodes) {
      json row = json::array();
      const auto ia = std::find(l.distance_nodes.begin(), l.distance_nodes.end(), a->os_index);
      for (const auto* b : nodes) {
        const auto ib = std::find(l.distance_nodes.begin(), l.distance_nodes.end(), b->os_index);
        if (ia == l.distance_nodes.end() || ib == l.distance_nodes.end())
          throw ConfigError(l.origin, "", fmt::format("the NUMA distances leave out node {}", a->os_index));
        row.push_back(l.distance[static_cast<std::size_t>(ia - l.distance_nodes.begin())][static_cast<std::size_t>(ib - l.distance_nodes.begin())]);
      }
      rows.push_back(row);
    }
    doc["node_distance"] = rows;
  }
  // What slubsim cannot simulate is said now, naming the input, not when the file is used.
  try {
    parse_topology(doc, l.origin);
  } catch (const ConfigError& e) {
    throw ConfigError(l.origin, "", fmt::format("the imported layout is not one slubsim can simulate: {}{}",
                                                e.field().empty() ? "" : e.field() + ": ", e.what()));
  }
  return doc;
}

}  // namespace slubsim
