// slubsim import --hwloc (sim/machine/hwloc_import.h): lstopo XMLs of two large machines, made
// from the published layouts of the presets (tests/data/hwloc/make.py), import to topologies that
// agree with the presets on sockets, nodes, LLC domains, SMT siblings, CPU numbering, memory and
// NUMA distances; this host's own lstopo XML imports; bad XML is refused naming the file.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "sim/machine/hwloc_import.h"
#include "tests/helpers.h"

using namespace slubsim;

namespace {

std::string data(const std::string& name) { return test::source_dir() + "/tests/data/hwloc/" + name; }

// A partition of the CPUs, as the lists of each group's CPUs in the order of their lowest CPU.
std::vector<std::vector<int>> partition(const std::vector<int>& key) {
  std::map<int, std::vector<int>> by;
  for (std::size_t c = 0; c < key.size(); ++c) by[key[c]].push_back(static_cast<int>(c));
  std::vector<std::vector<int>> out;
  for (auto& [k, v] : by) out.push_back(v);
  std::sort(out.begin(), out.end());
  return out;
}

Machine imported(const std::string& xml, const std::string& preset) {
  ImportRequest r;
  r.name = "imported";
  r.latencies_name = preset;
  r.latencies_file = test::source_dir() + "/configs/topologies/" + preset + ".json";
  return parse_topology(topology_document(read_hwloc(data(xml)), r), "imported");
}

}  // namespace

TEST_CASE("import --hwloc: the large machines' lstopo XMLs agree with their presets") {
  for (const std::string name : {"amd-epyc-2s-192c-4n", "intel-gnr-2s-344t-4n"}) {
    CAPTURE(name);
    const Machine m = imported(name + ".xml", name);
    const Machine p = test::preset(name);
    REQUIRE(m.nr_cpus == p.nr_cpus);
    CHECK(m.nr_sockets == p.nr_sockets);
    CHECK(m.nr_nodes == p.nr_nodes);
    CHECK(m.cpu_socket == p.cpu_socket);
    CHECK(m.cpu_node == p.cpu_node);
    CHECK(partition(m.cpu_core) == partition(p.cpu_core));
    CHECK(partition(m.cpu_llc) == partition(p.cpu_llc));
    CHECK(m.node_memory_bytes == p.node_memory_bytes);
    CHECK(m.node_distance == p.node_distance);
    CHECK(m.latency == p.latency);  // copied from the preset itself here
  }
}

TEST_CASE("import --hwloc: copied latencies are marked, with their ranges and the ranges' source") {
  ImportRequest r;
  r.name = "epyc";
  r.latencies_name = "amd-turin-2s-512t";
  r.latencies_file = test::source_dir() + "/configs/topologies/amd-turin-2s-512t.json";
  const json doc = topology_document(read_hwloc(data("amd-epyc-2s-192c-4n.xml")), r);
  const json& llc = doc.at("latency_ns").at("llc");
  CHECK(llc.at("source").get<std::string>().rfind("copied from preset amd-turin-2s-512t: ", 0) == 0);
  CHECK(llc.at("range") == json::array({20, 33}));
  CHECK(llc.at("range_source").get<std::string>().find("amd-turin-2s-512t") != std::string::npos);
  CHECK(doc.at("smt") == json{{"threads_per_core", 1}});
  // The cache size is hwloc's (this synthetic XML gives 16 MB L3s); hwloc knows no hit latency.
  CHECK(doc.at("llc").at("size_kb").at("value") == 16384);
  CHECK(doc.at("llc").at("size_kb").at("source").get<std::string>().rfind("hwloc (", 0) == 0);
  CHECK(doc.at("llc").at("hit_ns").at("source").get<std::string>().rfind("copied from preset amd-turin-2s-512t: ", 0) == 0);
}

TEST_CASE("import --hwloc: this host's lstopo XML") {
  const HwlocLayout l = read_hwloc(data("this-host-2cpu.xml"));
  CHECK(l.socket.size() == 2);
  ImportRequest r;
  r.name = "host";
  r.latencies_name = "small-2s-8c";
  r.latencies_file = test::source_dir() + "/configs/topologies/small-2s-8c.json";
  const Machine m = parse_topology(topology_document(l, r), "host");
  CHECK(m.nr_cpus == 2);
  CHECK(m.nr_nodes == 1);
}

TEST_CASE("import --hwloc: bad XML is refused, naming the file") {
  const std::string bad = (std::filesystem::temp_directory_path() / "slubsim-bad-hwloc.xml").string();
  std::ofstream(bad) << "<topology><object type=\"Machine\">";  // cut short
  CHECK_THROWS_WITH_AS(read_hwloc(bad), doctest::Contains("not an hwloc XML topology"), ConfigError);
  CHECK_THROWS_WITH_AS(read_hwloc(bad + ".none"), doctest::Contains("no such file"), ConfigError);
  std::filesystem::remove(bad);
}
