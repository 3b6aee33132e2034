#include "sim/machine/topology.h"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <fmt/format.h>
#include <optional>
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

// Groups (sockets, nodes) with "id" fields 0..n-1 each once, and a cpus list. Each item's
// problems go to `errors`; `ids` gets each item's id (-1 where it has none). Returns whether
// every item is sound: then `owner` maps each CPU listed to its group.
bool read_groups(const JsonView& arr, std::vector<int>& owner, const char* what, std::vector<std::int64_t>& ids,
                 ConfigErrors& errors) {
  std::size_t n = 0;
  if (!errors.check([&] {
        n = arr.size();
        if (n == 0) arr.fail(fmt::format("needs at least one {}", what));
      }))
    return false;
  ids.assign(n, -1);
  std::vector<bool> seen(n, false);
  bool ok = true;
  for (std::size_t i = 0; i < n; ++i) {
    auto item = arr.at(i);
    ok &= errors.check([&] {
      auto id = item.at("id").integer_in(0, static_cast<std::int64_t>(n) - 1);
      if (seen[id]) item.at("id").fail(fmt::format("{} id {} appears twice", what, id));
      seen[id] = true;
      ids[i] = id;
    });
    std::vector<int> cpus;
    const bool cpus_ok = errors.check([&] { cpus = cpus_of(item.at("cpus")); });
    ok &= cpus_ok;
    if (cpus_ok && ids[i] >= 0)
      ok &= errors.check([&] { assign(owner, cpus, static_cast<int>(ids[i]), item.at("cpus"), what); });
  }
  return ok;
}

void check_complete(const std::vector<int>& owner, int nr_cpus, const JsonView& where,
                    const char* what) {
  for (int c = 0; c < nr_cpus; ++c)
    if (c >= static_cast<int>(owner.size()) || owner[c] < 0)
      where.fail(fmt::format("CPU {} is in no {}", c, what));
}

// The CPU lists of `arr`'s items (each item's problem kept); whether all parsed.
bool cpu_lists(const JsonView& arr, std::vector<std::vector<int>>& lists, ConfigErrors& errors) {
  std::size_t n = 0;
  if (!errors.check([&] { n = arr.size(); })) return false;
  lists.assign(n, {});
  bool ok = true;
  for (std::size_t i = 0; i < n; ++i) ok &= errors.check([&] { lists[i] = cpus_of(arr.at(i)); });
  return ok;
}

// Each cpulist of `arr` gives its CPUs the list's index in `of_cpu` (smt cores, LLC domains);
// false when a list does not parse (kept in `errors`) or the sockets it is checked against are
// broken (`sockets_ok`).
bool index_cpu_lists(const JsonView& arr, int nr_cpus, bool sockets_ok, const char* what, ConfigErrors& errors,
                     std::vector<int>& of_cpu, std::vector<std::vector<int>>& lists) {
  if (!cpu_lists(arr, lists, errors) || !sockets_ok) return false;
  of_cpu.assign(nr_cpus, -1);
  for (std::size_t i = 0; i < lists.size(); ++i) {
    for (int c : lists[i])
      if (c >= nr_cpus) arr.at(i).fail(fmt::format("CPU {} is in no socket", c));
    assign(of_cpu, lists[i], static_cast<int>(i), arr.at(i), what);
  }
  return true;
}

}  // namespace

// Every check whose input is there runs, and all their problems are reported together
// (ConfigErrors): a check that needs the CPU layout (sockets, then nodes, cores and LLC domains)
// is skipped when that layout has a problem of its own.
Machine parse_topology(const json& doc, const std::string& file) {
  JsonView root(doc, file);
  if (!doc.is_object()) root.fail("a topology is a JSON object");
  ConfigErrors errors(doc, file);
  Machine m;
  m.file = file;
  errors.check([&] {
    m.name = root.at("name").str();
    if (m.name.empty()) root.at("name").fail("must not be empty");
  });
  errors.check([&] { root.at("source").str(); });

  // Sockets define the CPU set: ids must be exactly 0..N-1.
  bool sockets_ok = false;
  errors.check([&] {
    auto sockets = root.at("sockets");
    std::vector<std::int64_t> ids;
    if (!read_groups(sockets, m.cpu_socket, "socket", ids, errors)) return;
    m.nr_sockets = static_cast<int>(ids.size());
    m.nr_cpus = static_cast<int>(m.cpu_socket.size());
    if (m.nr_cpus < 1 || m.nr_cpus > kMaxCpus)
      sockets.fail(fmt::format("the machine must have 1 to {} CPUs", kMaxCpus));
    check_complete(m.cpu_socket, m.nr_cpus, sockets, "socket (CPU ids must be 0..N-1)");
    sockets_ok = true;
  });

  bool nodes_ok = false;
  int nr_node_items = -1;  // the length of "nodes" when it is a list of some
  errors.check([&] {
    auto nodes = root.at("nodes");
    std::vector<std::int64_t> ids;
    const bool groups_ok = read_groups(nodes, m.cpu_node, "node", ids, errors);
    if (!nodes.raw().is_array()) return;
    if (nodes.size() > 0) nr_node_items = static_cast<int>(nodes.size());
    // 0: a memoryless node (CPUs without local memory; they allocate from the nearest node with
    // memory, Machine::mem_node).
    std::vector<std::int64_t> memory(nodes.size(), 0);
    bool memory_ok = true;
    for (std::size_t i = 0; i < nodes.size(); ++i)
      memory_ok &= errors.check([&] {
        auto mem = nodes.at(i).at("memory_mb");
        double mb = mem.number();
        if (mb < 0 || mb > 1e12) mem.fail(fmt::format("must be from 0 (a memoryless node) to 1e12 MB, got {}", mb));
        if (ids[i] >= 0) memory[ids[i]] = static_cast<std::int64_t>(mb * 1024 * 1024);
      });
    if (memory_ok && !memory.empty() && std::none_of(memory.begin(), memory.end(), [](std::int64_t b) { return b > 0; }))
      errors.check([&] { nodes.fail("no node has memory (memory_mb > 0)"); });
    if (!groups_ok || !sockets_ok) return;
    m.nr_nodes = static_cast<int>(ids.size());
    if (static_cast<int>(m.cpu_node.size()) > m.nr_cpus)
      nodes.fail(fmt::format("CPU {} is in a node but in no socket", static_cast<int>(m.cpu_node.size()) - 1));
    check_complete(m.cpu_node, m.nr_cpus, nodes, "node");
    m.node_memory_bytes = memory;
    m.node_cpus.assign(m.nr_nodes, {});
    m.node_sockets.assign(m.nr_nodes, {});
    for (int c = 0; c < m.nr_cpus; ++c) {
      m.node_cpus[m.cpu_node[c]].push_back(c);
      auto& ns = m.node_sockets[m.cpu_node[c]];
      if (std::find(ns.begin(), ns.end(), m.cpu_socket[c]) == ns.end()) ns.push_back(m.cpu_socket[c]);
    }
    for (int n = 0; n < m.nr_nodes; ++n) std::sort(m.node_sockets[n].begin(), m.node_sockets[n].end());
    nodes_ok = true;
  });

  // Cores and their SMT threads.
  bool cores_ok = false;
  errors.check([&] {
    auto smt = root.at("smt");
    if (auto cores = smt.find("cores")) {
      std::vector<std::vector<int>> threads;
      if (!index_cpu_lists(*cores, m.nr_cpus, sockets_ok, "core", errors, m.cpu_core, threads)) return;
      m.core_cpus = threads;
    } else {
      int tpc = 0, offset = 0;
      std::optional<JsonView> tpc_v, off_v;
      const bool tpc_ok = errors.check([&] {
        tpc_v = smt.at("threads_per_core");
        tpc = static_cast<int>(tpc_v->integer_in(1, 8));
      });
      // Without a valid thread count a sibling_offset given is checked alone.
      bool offset_ok = true;
      if (!tpc_ok || tpc > 1)
        offset_ok = errors.check([&] {
          off_v = tpc_ok ? smt.at("sibling_offset") : smt.find("sibling_offset");
          if (off_v) offset = static_cast<int>(off_v->integer_in(1, kMaxCpus));
        });
      if (!tpc_ok || !offset_ok || !sockets_ok) return;
      if (tpc > 1 && (m.nr_cpus % tpc != 0 || offset * tpc != m.nr_cpus))
        off_v->fail(fmt::format("{} CPUs with {} threads per core need sibling_offset {}", m.nr_cpus, tpc,
                                m.nr_cpus / tpc));
      int nr_cores = m.nr_cpus / tpc;
      if (m.nr_cpus % tpc != 0) tpc_v->fail("the CPU count is not a multiple of threads_per_core");
      m.cpu_core.assign(m.nr_cpus, -1);
      for (int core = 0; core < nr_cores; ++core) {
        std::vector<int> threads;
        for (int t = 0; t < tpc; ++t) threads.push_back(core + t * offset);
        for (int c : threads) m.cpu_core[c] = core;
        m.core_cpus.push_back(threads);
      }
    }
    check_complete(m.cpu_core, m.nr_cpus, smt, "core");
    if (!nodes_ok) return;
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
      return std::tuple(m.cpu_socket[ca], m.cpu_node[ca], ca) < std::tuple(m.cpu_socket[cb], m.cpu_node[cb], cb);
    });
    cores_ok = true;
  });

  // LLC domains.
  errors.check([&] {
    auto llc = root.at("llc");
    errors.check([&] {
      if (auto domains = llc.find("domains")) {
        std::vector<std::vector<int>> lists;
        if (!index_cpu_lists(*domains, m.nr_cpus, sockets_ok, "LLC domain", errors, m.cpu_llc, lists)) return;
        m.nr_llcs = static_cast<int>(lists.size());
      } else {
        auto cpd_v = llc.at("cores_per_domain");
        int cpd = static_cast<int>(cpd_v.integer_in(1, kMaxCpus));
        if (!cores_ok) return;
        m.cpu_llc.assign(m.nr_cpus, -1);
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
      std::vector<int> llc_socket(m.nr_llcs, -1);
      for (int c = 0; c < m.nr_cpus; ++c) {
        int& s = llc_socket[m.cpu_llc[c]];
        if (s == -1) s = m.cpu_socket[c];
        if (s != m.cpu_socket[c])
          llc.fail(fmt::format("LLC domain {} spans sockets {} and {}", m.cpu_llc[c], s, m.cpu_socket[c]));
      }
      if (!cores_ok) return;
      for (std::size_t k = 0; k < m.core_cpus.size(); ++k)
        for (int c : m.core_cpus[k])
          if (m.cpu_llc[c] != m.cpu_llc[m.core_cpus[k][0]])
            llc.fail(fmt::format("core {} is split between LLC domains", k));
    });
    // The size of one domain's last-level cache: how many bytes of lines a grace period old can
    // still be found there (models/slub/residency.h).
    errors.check([&] {
      auto size = llc.at("size_kb");
      const double kb = size.sourced_value();
      if (!(kb >= 64 && kb <= 4.0 * 1024 * 1024))
        size.at("value").fail(fmt::format("an LLC size in KB must be from 64 to 4194304 (4 GB), got {}", kb));
      m.llc_bytes = static_cast<std::int64_t>(kb * 1024);
    });
    errors.check([&] {
      auto hit = llc.at("hit_ns");  // a load that finds its line there (no other core holds it)
      const double ns = hit.sourced_value();
      if (!(ns > 0 && ns <= 200)) hit.at("value").fail(fmt::format("an LLC hit must take more than 0 and at most 200 ns, got {}", ns));
      m.llc_hit = from_ns(ns);
    });
  });

  errors.check([&] {
    auto lat = root.at("latency_ns");
    if (!lat.raw().is_object()) lat.fail("expected an object");
    for (int d = 0; d < kDistanceClasses; ++d)
      errors.check([&] {
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
      });
  });
  errors.check([&] {
    auto f = root.at("smt_private_work_factor");
    m.smt_private_work_factor = f.sourced_value();
    if (m.smt_private_work_factor < 1.0 || m.smt_private_work_factor > 4.0)
      f.at("value").fail("must be between 1 and 4");
  });

  errors.check([&] {
    auto dist = root.find("node_distance");
    if (!dist) return;
    const int n = nr_node_items;  // the rows and columns needed, when "nodes" is a list
    if (n >= 0 && static_cast<int>(dist->size()) != n) dist->fail(fmt::format("needs {} rows, one per node", n));
    bool entries_ok = n >= 0;
    for (std::size_t a = 0; a < dist->size(); ++a) {
      auto row = dist->at(a);
      if (!errors.check([&] {
            if (n >= 0 && static_cast<int>(row.size()) != n) row.fail(fmt::format("needs {} entries, one per node", n));
          })) {
        entries_ok = false;
        continue;
      }
      for (std::size_t b = 0; b < row.size(); ++b)
        entries_ok &= errors.check([&] { a == b ? row.at(b).integer_in(10, 10) : row.at(b).integer_in(10, 255); });
    }
    if (!entries_ok) return;
    for (int a = 0; a < n; ++a) {
      std::vector<int> r;
      for (int b = 0; b < n; ++b) r.push_back(static_cast<int>(dist->at(a).at(b).integer()));
      m.node_distance.push_back(r);
    }
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < a; ++b)
        if (m.node_distance[a][b] != m.node_distance[b][a]) dist->at(a).at(b).fail("the matrix must be symmetric");
  });
  // slubsim probe's hand-off times: a check of the model's part-by-part hand-off, not an input.
  errors.check([&] {
    auto h = root.find("lock_handoff_ns");
    if (!h) return;
    for (const auto& cls : h->keys())
      errors.check([&] {
        int d = 0;
        while (d < kDistanceClasses && cls != distance_name(static_cast<Distance>(d))) ++d;
        if (d == kDistanceClasses) h->at(cls).fail("not a distance class");
        auto per = h->at(cls);
        for (const auto& waiters : per.keys())
          errors.check([&] {
            const double ns = per.at(waiters).sourced_value();
            if (!(ns > 0)) per.at(waiters).at("value").fail("a hand-off time must be positive");
            if (waiters.empty() || waiters.size() > 6 || waiters.find_first_not_of("0123456789") != std::string::npos ||
                std::stoi(waiters) < 2)
              per.at(waiters).fail("the key is the number of waiters, 2 or more");
            m.lock_handoff_ns.push_back({static_cast<Distance>(d), std::stoi(waiters), ns});
          });
      });
  });
  root.check_known_fields(errors);
  errors.raise();
  return m;
}

}  // namespace slubsim
