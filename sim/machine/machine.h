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

  std::array<Time, kDistanceClasses> latency{};  // one-way transfer by class
  double smt_private_work_factor = 1.0;

  int nr_cores() const { return static_cast<int>(core_cpus.size()); }

  // Every node in the order an allocation on `node` falls back to them: by SLIT distance if the
  // topology gives one, else the same socket first; ties by node id; the node itself first.
  std::vector<int> nodes_by_distance(int node) const {
    std::vector<int> order;
    for (int b = 0; b < nr_nodes; ++b) order.push_back(b);
    auto dist = [&](int b) {
      if (b == node) return 0;
      if (!node_distance.empty()) return node_distance[node][b];
      return node_sockets[node] == node_sockets[b] ? 12 : 20;
    };
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return dist(x) < dist(y); });
    return order;
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
