#include "sim/machine/topology.h"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <fmt/format.h>
#include <stdexcept>

#include "sim/machine/cpulist.h"

namespace slubsim {

const char* distance_name(Distance d) {
  switch (d) {
    case Distance::Smt: return "smt";
    case Distance::Llc: return "llc";
    case Distance::SocketLocalHome: return "socket_local_home";
    case Distance::SocketRemoteHome: return "socket_remote_home";
    case Distance::CrossSocket: return "cross_socket";
    case Distance::CrossSocketReaderHome: return "cross_socket_reader_home";
    case Distance::DramLocal: return "dram_local";
    case Distance::DramRemote: return "dram_remote";
  }
  return "?";
}

namespace {

std::vector<int> cpus_of(const JsonView& v) {
  try {
    return parse_cpulist(v.str(), kMaxCpus - 1);
  } catch (const std::invalid_argument& e) {
    v.fail(e.what());
  }
}

// Assign every CPU of each group in `list` to that group's index in `owner` (-1 = unset).
// Fails on a CPU listed twice.
void assign(std::vector<int>& owner, const std::vector<int>& cpus, int group, const JsonView& where,
            const char* what) {
  for (int c : cpus) {
    if (c >= static_cast<int>(owner.size())) owner.resize(c + 1, -1);
    if (owner[c] != -1)
      where.fail(fmt::format("CPU {} is in {} {} and {} {}", c, what, owner[c], what, group));
    owner[c] = group;
  }
}

// Groups (sockets, nodes) with "id" fields 0..n-1 each once, and a cpus list.
void read_groups(const JsonView& arr, std::vector<int>& owner, const char* what,
                 std::vector<JsonView>* items_by_id) {
  std::size_t n = arr.size();
  if (n == 0) arr.fail(fmt::format("needs at least one {}", what));
  items_by_id->assign(n, arr);
  std::vector<bool> seen(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    auto item = arr.at(i);
    auto id = item.at("id").integer_in(0, static_cast<std::int64_t>(n) - 1);
    if (seen[id]) item.at("id").fail(fmt::format("{} id {} appears twice", what, id));
    seen[id] = true;
    (*items_by_id)[id] = item;
    assign(owner, cpus_of(item.at("cpus")), static_cast<int>(id), item.at("cpus"), what);
  }
}

void check_complete(const std::vector<int>& owner, int nr_cpus, const JsonView& where,
                    const char* what) {
  for (int c = 0; c < nr_cpus; ++c)
    if (c >= static_cast<int>(owner.size()) || owner[c] < 0)
      where.fail(fmt::format("CPU {} is in no {}", c, what));
}

}  // namespace

Machine parse_topology(const json& doc, const std::string& file) {
  JsonView root(doc, file);
  if (!doc.is_object()) root.fail("a topology is a JSON object");
  Machine m;
  m.file = file;
  m.name = root.at("name").str();
  if (m.name.empty()) root.at("name").fail("must not be empty");
  root.at("source").str();

  // Sockets define the CPU set: ids must be exactly 0..N-1.
  std::vector<JsonView> sockets, nodes;
  read_groups(root.at("sockets"), m.cpu_socket, "socket", &sockets);
  m.nr_sockets = static_cast<int>(sockets.size());
  m.nr_cpus = static_cast<int>(m.cpu_socket.size());
  if (m.nr_cpus < 1 || m.nr_cpus > kMaxCpus)
    root.at("sockets").fail(fmt::format("the machine must have 1 to {} CPUs", kMaxCpus));
  check_complete(m.cpu_socket, m.nr_cpus, root.at("sockets"), "socket (CPU ids must be 0..N-1)");

  read_groups(root.at("nodes"), m.cpu_node, "node", &nodes);
  m.nr_nodes = static_cast<int>(nodes.size());
  if (static_cast<int>(m.cpu_node.size()) > m.nr_cpus)
    root.at("nodes").fail(fmt::format("CPU {} is in a node but in no socket",
                                      static_cast<int>(m.cpu_node.size()) - 1));
  check_complete(m.cpu_node, m.nr_cpus, root.at("nodes"), "node");
  m.node_cpus.assign(m.nr_nodes, {});
  m.node_sockets.assign(m.nr_nodes, {});
  for (int c = 0; c < m.nr_cpus; ++c) {
    m.node_cpus[m.cpu_node[c]].push_back(c);
    auto& ns = m.node_sockets[m.cpu_node[c]];
    if (std::find(ns.begin(), ns.end(), m.cpu_socket[c]) == ns.end()) ns.push_back(m.cpu_socket[c]);
  }
  for (int n = 0; n < m.nr_nodes; ++n) {
    std::sort(m.node_sockets[n].begin(), m.node_sockets[n].end());
    // 0: a memoryless node (CPUs without local memory; they allocate from the nearest node with
    // memory, Machine::mem_node).
    auto mem = nodes[n].at("memory_mb");
    double mb = mem.number();
    if (mb < 0 || mb > 1e12) mem.fail(fmt::format("must be from 0 (a memoryless node) to 1e12 MB, got {}", mb));
    m.node_memory_bytes.push_back(static_cast<std::int64_t>(mb * 1024 * 1024));
  }
  if (std::none_of(m.node_memory_bytes.begin(), m.node_memory_bytes.end(), [](std::int64_t b) { return b > 0; }))
    root.at("nodes").fail("no node has memory (memory_mb > 0)");

  // Cores and their SMT threads.
  auto smt = root.at("smt");
  m.cpu_core.assign(m.nr_cpus, -1);
  if (auto cores = smt.find("cores")) {
    for (std::size_t i = 0; i < cores->size(); ++i) {
      auto item = cores->at(i);
      auto threads = cpus_of(item);
      for (int c : threads)
        if (c >= m.nr_cpus) item.fail(fmt::format("CPU {} is in no socket", c));
      assign(m.cpu_core, threads, static_cast<int>(i), item, "core");
      m.core_cpus.push_back(threads);
    }
  } else {
    auto tpc_v = smt.at("threads_per_core");
    int tpc = static_cast<int>(tpc_v.integer_in(1, 8));
    int offset = 0;
    if (tpc > 1) {
      auto off_v = smt.at("sibling_offset");
      offset = static_cast<int>(off_v.integer_in(1, kMaxCpus));
      if (m.nr_cpus % tpc != 0 || offset * tpc != m.nr_cpus)
        off_v.fail(fmt::format("{} CPUs with {} threads per core need sibling_offset {}",
                               m.nr_cpus, tpc, m.nr_cpus / tpc));
    }
    int nr_cores = m.nr_cpus / tpc;
    if (m.nr_cpus % tpc != 0) tpc_v.fail("the CPU count is not a multiple of threads_per_core");
    for (int core = 0; core < nr_cores; ++core) {
      std::vector<int> threads;
      for (int t = 0; t < tpc; ++t) threads.push_back(core + t * offset);
      for (int c : threads) m.cpu_core[c] = core;
      m.core_cpus.push_back(threads);
    }
  }
  check_complete(m.cpu_core, m.nr_cpus, smt, "core");
  for (std::size_t k = 0; k < m.core_cpus.size(); ++k) {
    const auto& t = m.core_cpus[k];
    for (int c : t)
      if (m.cpu_socket[c] != m.cpu_socket[t[0]] || m.cpu_node[c] != m.cpu_node[t[0]])
        smt.fail(fmt::format("core {} ({}) spans sockets or nodes", k, format_cpulist(t)));
  }
  // hwloc logical order: package, then NUMA node, then the core's first thread.
  for (int k = 0; k < m.nr_cores(); ++k) m.core_order.push_back(k);
  std::sort(m.core_order.begin(), m.core_order.end(), [&](int a, int b) {
    int ca = m.core_cpus[a][0], cb = m.core_cpus[b][0];
    return std::tuple(m.cpu_socket[ca], m.cpu_node[ca], ca) <
           std::tuple(m.cpu_socket[cb], m.cpu_node[cb], cb);
  });

  // LLC domains.
  auto llc = root.at("llc");
  m.cpu_llc.assign(m.nr_cpus, -1);
  if (auto domains = llc.find("domains")) {
    for (std::size_t i = 0; i < domains->size(); ++i) {
      auto item = domains->at(i);
      auto cpus = cpus_of(item);
      for (int c : cpus)
        if (c >= m.nr_cpus) item.fail(fmt::format("CPU {} is in no socket", c));
      assign(m.cpu_llc, cpus, static_cast<int>(i), item, "LLC domain");
    }
    m.nr_llcs = static_cast<int>(domains->size());
  } else {
    auto cpd_v = llc.at("cores_per_domain");
    int cpd = static_cast<int>(cpd_v.integer_in(1, kMaxCpus));
    int domain = -1, in_domain = cpd, socket = -1;
    for (int core : m.core_order) {
      int s = m.cpu_socket[m.core_cpus[core][0]];
      if (in_domain == cpd || s != socket) {
        ++domain;
        in_domain = 0;
        socket = s;
      }
      ++in_domain;
      for (int c : m.core_cpus[core]) m.cpu_llc[c] = domain;
    }
    m.nr_llcs = domain + 1;
  }
  check_complete(m.cpu_llc, m.nr_cpus, llc, "LLC domain");
  {
    std::vector<int> llc_socket(m.nr_llcs, -1);
    for (int c = 0; c < m.nr_cpus; ++c) {
      int& s = llc_socket[m.cpu_llc[c]];
      if (s == -1) s = m.cpu_socket[c];
      if (s != m.cpu_socket[c])
        llc.fail(fmt::format("LLC domain {} spans sockets {} and {}", m.cpu_llc[c], s,
                             m.cpu_socket[c]));
    }
    for (std::size_t k = 0; k < m.core_cpus.size(); ++k)
      for (int c : m.core_cpus[k])
        if (m.cpu_llc[c] != m.cpu_llc[m.core_cpus[k][0]])
          llc.fail(fmt::format("core {} is split between LLC domains", k));
  }
  // The size of one domain's last-level cache: how many bytes of lines a grace period old can
  // still be found there (models/slub/residency.h).
  {
    auto size = llc.at("size_kb");
    const double kb = size.sourced_value();
    if (!(kb >= 64 && kb <= 4.0 * 1024 * 1024))
      size.at("value").fail(fmt::format("an LLC size in KB must be from 64 to 4194304 (4 GB), got {}", kb));
    m.llc_bytes = static_cast<std::int64_t>(kb * 1024);
    auto hit = llc.at("hit_ns");  // a load that finds its line there (no other core holds it)
    const double ns = hit.sourced_value();
    if (!(ns > 0 && ns <= 200)) hit.at("value").fail(fmt::format("an LLC hit must take more than 0 and at most 200 ns, got {}", ns));
    m.llc_hit = from_ns(ns);
  }

  auto lat = root.at("latency_ns");
  for (int d = 0; d < kDistanceClasses; ++d) {
    auto v = lat.at(distance_name(static_cast<Distance>(d)));
    double ns = v.sourced_value();
    if (!(ns > 0)) v.at("value").fail(fmt::format("a latency must be positive, got {}", ns));
    m.latency[d] = from_ns(ns);
    std::string src = v.at("source").str();
    std::transform(src.begin(), src.end(), src.begin(), [](unsigned char ch) { return std::tolower(ch); });
    m.latency_estimate[d] = src.find("estimate") != std::string::npos;
    if (auto r = v.find("range")) {  // its shape and low <= value <= high: sourced_value
      const double lo = r->at(0).number(), hi = r->at(1).number();
      if (!(lo > 0)) r->fail(fmt::format("a latency's range needs 0 < low, got [{}, {}]", lo, hi));
      m.latency_range_ns[d] = {lo, hi};
    }
  }
  auto f = root.at("smt_private_work_factor");
  m.smt_private_work_factor = f.sourced_value();
  if (m.smt_private_work_factor < 1.0 || m.smt_private_work_factor > 4.0)
    f.at("value").fail("must be between 1 and 4");

  if (auto dist = root.find("node_distance")) {
    if (static_cast<int>(dist->size()) != m.nr_nodes)
      dist->fail(fmt::format("needs {} rows, one per node", m.nr_nodes));
    for (int a = 0; a < m.nr_nodes; ++a) {
      auto row = dist->at(a);
      if (static_cast<int>(row.size()) != m.nr_nodes)
        row.fail(fmt::format("needs {} entries, one per node", m.nr_nodes));
      std::vector<int> r;
      for (int b = 0; b < m.nr_nodes; ++b) {
        auto v = row.at(b);
        r.push_back(static_cast<int>(a == b ? v.integer_in(10, 10) : v.integer_in(10, 255)));
      }
      m.node_distance.push_back(r);
    }
    for (int a = 0; a < m.nr_nodes; ++a)
      for (int b = 0; b < a; ++b)
        if (m.node_distance[a][b] != m.node_distance[b][a])
          dist->at(a).at(b).fail("the matrix must be symmetric");
  }
  // slubsim probe's hand-off times: a check of the model's part-by-part hand-off, not an input.
  if (auto h = root.find("lock_handoff_ns")) {
    for (const auto& cls : h->keys()) {
      int d = 0;
      while (d < kDistanceClasses && cls != distance_name(static_cast<Distance>(d))) ++d;
      if (d == kDistanceClasses) h->at(cls).fail("not a distance class");
      auto per = h->at(cls);
      for (const auto& waiters : per.keys()) {
        const double ns = per.at(waiters).sourced_value();
        if (!(ns > 0)) per.at(waiters).at("value").fail("a hand-off time must be positive");
        if (waiters.empty() || waiters.find_first_not_of("0123456789") != std::string::npos || std::stoi(waiters) < 2)
          per.at(waiters).fail("the key is the number of waiters, 2 or more");
        m.lock_handoff_ns.push_back({static_cast<Distance>(d), std::stoi(waiters), ns});
      }
    }
  }
  root.check_known_fields();
  return m;
}

}  // namespace slubsim
