// The simulated machine: sockets, NUMA nodes, cores with their SMT threads, LLC domains, and
// the cost of moving a cache line between two CPUs (docs/topology-format.md).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/time.h"

namespace slubsim {

// Distance classes of a cache-line transfer L(requester, owner, home).
enum class Distance : std::uint8_t {
  Smt,
  Llc,
  SocketLocalHome,
  SocketRemoteHome,
  CrossSocket,            // line homed on the owner's (writer's) socket or a third one
  CrossSocketReaderHome,  // line homed on the requester's socket (Intel's home effect)
  DramLocal,
  DramRemote,
};
constexpr int kDistanceClasses = 8;
const char* distance_name(Distance d);  // the topology JSON field name

struct Machine {
  std::string name;
  std::string file;
  int nr_cpus = 0;
  int nr_sockets = 0;
  int nr_nodes = 0;

  std::vector<int> cpu_socket, cpu_node, cpu_core, cpu_llc;
  std::vector<std::vector<int>> core_cpus;   // hardware threads of each core, ascending
  std::vector<int> core_order;               // cores in hwloc logical order (placement)
  std::vector<std::vector<int>> node_cpus;
  std::vector<std::vector<int>> node_sockets;  // sockets a node's memory lies on (NPS0: all)
  std::vector<std::int64_t> node_memory_bytes;
  std::vector<std::vector<int>> node_distance;  // empty if the topology gives none
  int nr_llcs = 0;
  std::int64_t llc_bytes = 0;  // one LLC domain's cache (llc.size_kb)
  Time llc_hit = 0;             // a load that finds its line in its domain's cache (llc.hit_ns)

  std::array<Time, kDistanceClasses> latency{};  // one-way transfer by class
  // Latencies the preset marks as estimates ("estimate" in their source), and the range its
  // source states for each ([0, 0]: none stated): slubsim advise re-runs its picks at the ends.
  std::array<bool, kDistanceClasses> latency_estimate{};
  std::array<std::array<double, 2>, kDistanceClasses> latency_range_ns{};
  double smt_private_work_factor = 1.0;
  // slubsim probe's measured hand-off of a contended queued spinlock, per class and number of
  // waiters: a check of the model's hand-off (priced part by part from the transfers), not an input.
  struct Handoff {
    Distance cls;
    int waiters;
    double ns;
  };
  std::vector<Handoff> lock_handoff_ns;

  int nr_cores() const { return static_cast<int>(core_cpus.size()); }

  // Every node in the order an allocation on `node` falls back to them: the node's zonelist as
  // the kernel builds it (mm/page_alloc.c build_zonelists / find_next_best_node, 6.x): the node
  // itself, then nodes with memory by SLIT distance (same socket first when the topology gives
  // none), a node numbered below `node` one unit farther ("prefer the next node"), a node with
  // CPUs one unit farther than a headless one, and ties within a distance broken by node_load,
  // which build_zonelists raises for the first node of each new distance group as it builds the
  // zonelists of nodes 0, 1, ... in turn: so equal-distance nodes are taken round-robin rather
  // than every node falling back to the lowest-numbered one.
  std::vector<int> nodes_by_distance(int node) const { return zonelists().at(node); }
  std::vector<std::vector<int>> zonelists() const {
    auto dist = [&](int a, int b) {
      if (a == b) return 10;
      if (!node_distance.empty()) return node_distance[a][b];
      return node_sockets[a] == node_sockets[b] ? 12 : 20;
    };
    auto has_memory = [&](int n) {
      return node_memory_bytes.empty() || node_memory_bytes[n] > 0;
    };
    auto has_cpus = [&](int n) {
      return n < static_cast<int>(node_cpus.size()) && !node_cpus[n].empty();
    };
    // MAX_NUMNODES only has to exceed any node_load, which stays below nr_nodes.
    const long max_numnodes = static_cast<long>(nr_nodes) + 1;
    std::vector<long> node_load(static_cast<std::size_t>(nr_nodes), 0);
    std::vector<std::vector<int>> lists;
    for (int local = 0; local < nr_nodes; ++local) {
      std::vector<int> order{local};
      std::vector<bool> used(static_cast<std::size_t>(nr_nodes), false);
      used[static_cast<std::size_t>(local)] = true;
      int prev = local;
      for (;;) {
        int best = -1;
        long min_val = 0;
        for (int n = 0; n < nr_nodes; ++n) {
          if (used[static_cast<std::size_t>(n)] || !has_memory(n)) continue;
          long val = dist(local, n) + (n < local ? 1 : 0) + (has_cpus(n) ? 1 : 0);
          val = val * max_numnodes + node_load[static_cast<std::size_t>(n)];
          if (best < 0 || val < min_val) {
            min_val = val;
            best = n;
          }
        }
        if (best < 0) break;
        used[static_cast<std::size_t>(best)] = true;
        if (dist(local, best) != dist(local, prev)) ++node_load[static_cast<std::size_t>(best)];
        order.push_back(best);
        prev = best;
      }
      // Memoryless nodes have no zones in any zonelist; keep them at the end so that every node
      // appears once (page allocation finds nothing there).
      for (int n = 0; n < nr_nodes; ++n)
        if (!used[static_cast<std::size_t>(n)]) order.push_back(n);
      lists.push_back(std::move(order));
    }
    return lists;
  }
  // numa_mem_id() of a CPU on `node`: the node itself, or for a memoryless node the nearest node
  // with memory (local_memory_node(): the first with memory in fallback order).
  int mem_node(int node) const {
    if (node_memory_bytes.empty() || node_memory_bytes[node] > 0) return node;
    for (int b : nodes_by_distance(node))
      if (node_memory_bytes[b] > 0) return b;
    return node;
  }

  // The socket whose memory backs a line homed on `node`. A node spanning several sockets
  // interleaves its lines over them (AMD NPS0), chosen by the line's id.
  int home_socket(int node, std::uint32_t line_id) const {
    const auto& s = node_sockets[node];
    return s.size() == 1 ? s[0] : s[line_id % s.size()];
  }

  Distance distance(int requester, int owner, int home_socket) const {
    if (cpu_core[requester] == cpu_core[owner]) return Distance::Smt;
    if (cpu_llc[requester] == cpu_llc[owner]) return Distance::Llc;
    if (cpu_socket[requester] == cpu_socket[owner])
      return cpu_socket[requester] == home_socket ? Distance::SocketLocalHome
                                                  : Distance::SocketRemoteHome;
    // A modified line pulled across sockets to the socket that homes it costs more on Intel
    // parts since Skylake (the snoop goes home first; lock-costs-measured.md §1).
    return cpu_socket[requester] == home_socket ? Distance::CrossSocketReaderHome : Distance::CrossSocket;
  }
  // One-way transfer of a line owned by `owner` to `requester`; owner == requester costs 0.
  Time transfer(int owner, int requester, int home_socket) const {
    if (owner == requester) return 0;
    return latency[static_cast<int>(distance(requester, owner, home_socket))];
  }
  // A line no cache holds, fetched from memory.
  Time from_memory(int requester, int home_socket) const {
    return latency[static_cast<int>(cpu_socket[requester] == home_socket ? Distance::DramLocal
                                                                         : Distance::DramRemote)];
  }
};

}  // namespace slubsim
