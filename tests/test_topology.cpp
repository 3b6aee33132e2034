#include <doctest/doctest.h>

#include <filesystem>

#include "helpers.h"
#include "sim/machine/cpulist.h"
#include "sim/machine/placement.h"

using namespace slubsim;
using slubsim::test::preset;

TEST_CASE("topology: every preset loads and validates") {
  int count = 0;
  for (const auto& e : std::filesystem::directory_iterator(test::source_dir() + "/configs/topologies")) {
    auto m = parse_topology(load_json_file(e.path().string()), e.path().string());
    CHECK(m.nr_cpus >= 1);
    CHECK(m.name == e.path().stem().string());
    ++count;
  }
  CHECK(count >= 12);
}

TEST_CASE("topology: the presets have the layouts the issue gives") {
  auto gnr = preset("intel-gnr-2s-344t-4n");
  CHECK(gnr.nr_cpus == 344);
  CHECK(gnr.nr_nodes == 4);
  CHECK(gnr.nr_sockets == 2);
  CHECK(format_cpulist(gnr.node_cpus[0]) == "0-42,172-214");
  CHECK(format_cpulist(gnr.node_cpus[3]) == "129-171,301-343");
  CHECK(gnr.core_cpus[gnr.cpu_core[5]] == std::vector<int>{5, 177});

  auto turin = preset("amd-turin-2s-512t");
  CHECK(turin.nr_cpus == 512);
  CHECK(turin.nr_cores() == 256);
  CHECK(turin.nr_llcs == 32);
  CHECK(turin.llc_bytes == 32 << 20);  // 32 MB per CCD
  CHECK(turin.llc_hit == 11 * kNs);
  CHECK(turin.cpu_socket[127] == 0);
  CHECK(turin.cpu_socket[128] == 1);
  CHECK(turin.cpu_socket[300] == 0);
  CHECK(turin.cpu_llc[0] == turin.cpu_llc[7]);
  CHECK(turin.cpu_llc[0] == turin.cpu_llc[263]);
  CHECK(turin.cpu_llc[0] != turin.cpu_llc[8]);
  CHECK(preset("amd-turin-2s-512t-nps4").nr_nodes == 8);
  auto nps0 = preset("amd-turin-2s-512t-nps0");
  CHECK(nps0.nr_nodes == 1);
  CHECK(nps0.node_sockets[0] == std::vector<int>{0, 1});
  // NPS0 interleaves a node's lines over both sockets.
  CHECK(nps0.home_socket(0, 0) != nps0.home_socket(0, 1));

  auto epyc = preset("amd-epyc-2s-192c-4n");
  CHECK(epyc.nr_cpus == 192);
  CHECK(format_cpulist(epyc.node_cpus[2]) == "96-143");
}

TEST_CASE("topology: zonelists follow build_zonelists, equal distances taken round-robin") {
  // mm/page_alloc.c find_next_best_node (6.x): by distance, a lower-numbered node one unit
  // farther, ties broken by node_load as the zonelists of nodes 0..N-1 are built in turn.
  auto epyc = preset("amd-epyc-2s-192c-4n");  // SLIT 10/12 inside a socket, 32 across
  CHECK(epyc.nodes_by_distance(0) == std::vector<int>{0, 1, 2, 3});
  CHECK(epyc.nodes_by_distance(1) == std::vector<int>{1, 0, 3, 2});
  CHECK(epyc.nodes_by_distance(2) == std::vector<int>{2, 3, 0, 1});
  // Node 3 falls back across the socket to node 1 first, not to node 0 as well: a plain sort
  // by distance, ties by id, sent every node's overflow to node 0.
  CHECK(epyc.nodes_by_distance(3) == std::vector<int>{3, 2, 1, 0});
  auto two = preset("small-2s-8c");
  CHECK(two.nodes_by_distance(0) == std::vector<int>{0, 1});
  CHECK(two.nodes_by_distance(1) == std::vector<int>{1, 0});
}

TEST_CASE("topology: distance classes follow sockets, LLCs, SMT and the line's home") {
  auto m = preset("small-2s-8c");  // LLCs 0-1, 2-3 | 4-5, 6-7
  CHECK(m.distance(0, 1, 0) == Distance::Llc);
  CHECK(m.distance(0, 2, 0) == Distance::SocketLocalHome);
  CHECK(m.distance(0, 2, 1) == Distance::SocketRemoteHome);
  // distance(requester, owner, home): across sockets, a line homed at the requester's socket is
  // the reader-homed class; homed at the owner's, the plain cross-socket one.
  CHECK(m.distance(0, 4, 0) == Distance::CrossSocketReaderHome);
  CHECK(m.distance(0, 4, 1) == Distance::CrossSocket);
  CHECK(m.transfer(3, 3, 0) == 0);
  auto spr = preset("intel-spr-2s-192t");  // Intel's home effect: about 1.5x
  CHECK(spr.transfer(48, 0, 0) > spr.transfer(48, 0, 1));
  CHECK(spr.transfer(48, 0, 0) == spr.latency[static_cast<int>(Distance::CrossSocketReaderHome)]);
  auto t = preset("amd-turin-2s-512t");
  CHECK(t.distance(0, 256, 0) == Distance::Smt);
  CHECK(t.transfer(0, 256, 0) == t.latency[static_cast<int>(Distance::Smt)]);
  CHECK(t.transfer(0, 200, 0) > t.transfer(0, 5, 0));
}

TEST_CASE("placement: cores first in hwloc order, then their SMT siblings") {
  auto gnr = preset("intel-gnr-2s-344t-4n");
  auto cpus = place_tasks(gnr, 344);
  CHECK(cpus[0] == 0);
  CHECK(cpus[42] == 42);
  CHECK(cpus[43] == 43);    // node 1 follows node 0 on socket 0
  CHECK(cpus[171] == 171);
  CHECK(cpus[172] == 172);  // then the siblings of core 0, 1, ...
  std::vector<int> sorted = cpus;
  std::sort(sorted.begin(), sorted.end());
  CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
  CHECK_THROWS(place_tasks(gnr, 345));
  CHECK_THROWS(place_tasks(gnr, 0));
}

namespace {

json small_doc() { return load_json_file(test::source_dir() + "/configs/topologies/small-2s-8c.json"); }

// The topology with one change must be rejected with an error naming `field`.
void check_rejected(const std::function<void(json&)>& change, const std::string& field_part) {
  json doc = small_doc();
  change(doc);
  try {
    parse_topology(doc, "test.json");
    FAIL("accepted a malformed topology; expected an error on " << field_part);
  } catch (const ConfigError& e) {
    CHECK(e.file() == "test.json");
    CHECK_MESSAGE(e.field().find(field_part) != std::string::npos,
                  "field '" << e.field() << "' should mention '" << field_part << "': " << e.what());
  }
}

}  // namespace

TEST_CASE("topology: malformed machines are rejected naming the field") {
  check_rejected([](json& d) { d.erase("nodes"); }, "nodes");
  check_rejected([](json& d) { d["nodes"][1]["cpus"] = "3-7"; }, "nodes");  // CPU 3 in two nodes
  check_rejected([](json& d) { d["nodes"][1]["cpus"] = "5-7"; }, "nodes");  // CPU 4 in none
  check_rejected([](json& d) { d["nodes"][0]["cpus"] = "0-3x"; }, "nodes[0].cpus");
  check_rejected([](json& d) { d["latency_ns"]["llc"]["value"] = -5; }, "latency_ns.llc.value");
  check_rejected([](json& d) { d["latency_ns"]["llc"]["source"] = ""; }, "latency_ns.llc.source");
  check_rejected([](json& d) { d["latency_ns"].erase("cross_socket"); }, "latency_ns.cross_socket");
  check_rejected([](json& d) { d["sockets"][1]["id"] = 0; }, "sockets[1].id");
  check_rejected([](json& d) { d["sockets"][1]["cpus"] = "4-7,9"; }, "sockets");  // ids not 0..N-1
  check_rejected([](json& d) { d["llc"]["domains"] = json::array({"0-4", "5-7"}); }, "llc");  // spans sockets
  check_rejected([](json& d) { d["smt"] = json{{"threads_per_core", 2}, {"sibling_offset", 3}}; }, "smt.sibling_offset");
  check_rejected([](json& d) { d["nodes"][0]["memory_mb"] = -1; /* 0: memoryless */ }, "nodes[0].memory_mb");
  check_rejected([](json& d) { d["node_distance"][0][1] = 20; }, "node_distance");
  check_rejected([](json& d) { d["smt_private_work_factor"]["value"] = 0.5; }, "smt_private_work_factor");
  check_rejected([](json& d) { d["llc"].erase("size_kb"); }, "llc.size_kb");
  check_rejected([](json& d) { d["llc"]["size_kb"]["value"] = 0; }, "llc.size_kb.value");
  check_rejected([](json& d) { d["llc"]["hit_ns"]["value"] = 500; }, "llc.hit_ns.value");
  check_rejected([](json& d) { d["llc"]["hit_ns"].erase("source"); }, "llc.hit_ns");
}

namespace {

// The problems of a rejected topology, each as "FIELD: MESSAGE" (all must name `file`).
std::vector<std::string> problems_of(const json& doc, const std::string& file) {
  try {
    parse_topology(doc, file);
  } catch (const ConfigError& e) {
    std::vector<std::string> out;
    for (const auto& p : e.problems()) {
      CHECK(p.file == file);
      out.push_back(p.field + ": " + p.message);
    }
    return out;
  }
  FAIL("accepted a malformed topology");
  return {};
}

}  // namespace

TEST_CASE("topology: every independent mistake of a document is reported at once, in document order") {
  // A minimal hand-written file with four mistakes: each is named, with its field, in one error.
  const std::string file = test::source_dir() + "/tests/data/several-mistakes.json";
  const auto problems = problems_of(load_json_file(file), file);
  const std::vector<std::string> want = {
      "nodes[0].memory_mb: must be from 0 (a memoryless node) to 1e12 MB, got -1",
      "smt.threads: unknown field (known here: cores, sibling_offset, threads_per_core)",  // the unknown smt form
      "smt.threads_per_core: missing field",
      "llc.size_kb: missing field",
      "latency_ns.llc.value: a latency must be positive, got -5",
  };
  CHECK(problems == want);
  // One ConfigError: file and field are the first problem's; its text names every other one's.
  try {
    parse_topology(load_json_file(file), file);
  } catch (const ConfigError& e) {
    CHECK(e.field() == "nodes[0].memory_mb");
    const std::string what = e.what();
    for (const char* field : {"smt.threads:", "smt.threads_per_core:", "llc.size_kb:", "latency_ns.llc.value:"})
      CHECK_MESSAGE(what.find(file + ": " + field) != std::string::npos, what);
  }

  // The same kinds of mistakes in a full preset, one per section, reported in the document's
  // order whatever order they are checked in.
  json doc = small_doc();
  doc["latency_ns"]["socket_local_home"]["value"] = 0;
  doc["latency_ns"]["llc"].erase("source");
  doc["smt_private_work_factor"]["value"] = 9;
  doc["smt_private_work_factor"].erase("range");  // the preset's [1, 2] would be a second mistake in the section
  doc["smt_private_work_factor"].erase("range_source");
  doc["llc"]["hit_ns"]["value"] = 500;
  doc["nodes"][1]["memory_mb"] = "lots";
  doc["node_distance"][1][1] = 20;
  doc["zzz_knob"] = 1;
  const auto several = problems_of(doc, "test.json");
  CHECK(several == std::vector<std::string>{
                                              "nodes[1].memory_mb: expected a number",
                                              "llc.hit_ns.value: an LLC hit must take more than 0 and at most 200 ns, got 500",
                                              "latency_ns.llc.source: missing field",
                                              "latency_ns.socket_local_home.value: a latency must be positive, got 0",
                                              "smt_private_work_factor.value: must be between 1 and 4",
                                              "node_distance[1][1]: must be between 10 and 10, got 20",
                                              "zzz_knob: unknown field (known here: latency_ns, llc, lock_handoff_ns, name, node_distance, nodes, smt, smt_private_work_factor, sockets, source)",
                                          });
}

TEST_CASE("topology: a broken CPU layout skips the checks that need it, not the others") {
  // Sockets unparsable: nodes, cores and LLC domains cannot be checked against them (no "CPU N is
  // in no node" after it), but a latency can.
  json doc = small_doc();
  doc["sockets"][0]["cpus"] = "0-3x";
  doc["latency_ns"]["smt"]["value"] = -1;
  const auto problems = problems_of(doc, "test.json");
  REQUIRE(problems.size() == 2);
  CHECK(problems[0].rfind("sockets[0].cpus: ", 0) == 0);
  CHECK(problems[1] == "latency_ns.smt.value: a latency must be positive, got -1");
  // A single problem is the error it always was.
  json one = small_doc();
  one["nodes"][0]["memory_mb"] = -1;
  CHECK(problems_of(one, "test.json") ==
        std::vector<std::string>{"nodes[0].memory_mb: must be from 0 (a memoryless node) to 1e12 MB, got -1"});
}
