// A machine's layout from hwloc: an lstopo XML taken on any box (`lstopo --of xml`), or this
// machine through libhwloc; then a topology document (docs/topology-format.md) of that layout,
// its latency classes copied, marked, from a named preset (hwloc knows no cache-line transfer
// times; `slubsim probe` measures them).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/config.h"

namespace slubsim {

// By CPU (the OS's number, 0..N-1): which socket, NUMA node, core and last-level-cache domain it
// is in, as hwloc's keys (a socket's and a domain's logical index, a node's OS index).
struct HwlocLayout {
  std::string origin;  // the XML file, or "this machine"
  std::vector<int> socket, node, core, llc;
  std::string llc_level;  // "L3", "L2", or "socket" when hwloc shows no shared cache
  std::uint64_t llc_bytes = 0;  // the smallest LLC's size as hwloc gives it; 0: none given
  struct Node {
    int os_index = 0;
    std::uint64_t memory_bytes = 0;
    bool has_cpus = false;
  };
  std::vector<Node> nodes;  // by OS index, memory-only ones included
  // NUMA latencies as the firmware gives them (SLIT), by the nodes' OS index; empty when none.
  std::vector<int> distance_nodes;
  std::vector<std::vector<std::uint64_t>> distance;
};

// Reads an lstopo XML (file), or this machine when file is "". Bad input: ConfigError(file, "",
// what is wrong).
HwlocLayout read_hwloc(const std::string& file);

struct ImportRequest {
  std::string name;            // the topology's name
  std::string description;     // "" = the shape, said
  std::string latencies_name;  // the preset whose latency classes are copied, as given
  std::string latencies_file;  // its file (resolved by the caller)
};
// The topology document of a layout; checked by the topology parser before it is returned
// (ConfigError naming the origin for a layout slubsim cannot simulate).
json topology_document(const HwlocLayout& layout, const ImportRequest& r);

}  // namespace slubsim
