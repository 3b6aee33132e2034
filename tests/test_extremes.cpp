// Faults and extremes that are valid inputs and must run correctly (in validation mode, which
// checks at the end of each run that every object is in exactly one place): a node out of
// memory, a memoryless node, sheaf capacities 1 and 1024, barn limits 0, one CPU, 4096 CPUs, a
// named cache over 8 KiB; and a state too large refused up front with its estimate.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "helpers.h"
#include "sim/config/config.h"
#include "sim/run/job.h"

using namespace slubsim;
namespace fs = std::filesystem;

namespace {

JobRequest request(const std::string& topology, const std::string& kernel, const std::string& nr_task) {
  auto r = test::job_request(topology, "mmap2", kernel, nr_task, "2ms", "2ms");
  r.validate = true;
  r.jobs = 1;
  return r;
}

RunResult run_one(const JobRequest& r) {
  Job job = resolve_job(r);
  JobResult res = run_job(job, {});
  REQUIRE(res.complete);
  return res.runs[0][0][0];
}

std::uint64_t stat(const RunResult& r, const std::string& cache, slub::Stat s) {
  for (const auto& c : r.caches)
    if (c.name == cache) return c.stats[static_cast<int>(s)];
  FAIL("no cache " << cache);
  return 0;
}

std::uint64_t acquisitions(const RunResult& r, const std::string& cls, const std::string& instance) {
  std::uint64_t n = 0;
  for (const auto& l : r.locks)
    if (l.cls == cls && l.instance == instance) n += l.stat.acquisitions;
  return n;
}

// A topology file derived from small-2s-8c by `edit`, in the temp dir.
std::string derived_topology(const std::string& name, const std::function<void(json&)>& edit) {
  json d = load_json_file(test::source_dir() + "/configs/topologies/small-2s-8c.json");
  d["name"] = name;
  edit(d);
  const fs::path p = fs::temp_directory_path() / ("slubsim-test-" + name + ".json");
  std::ofstream(p) << d.dump(1);
  return p.string();
}

}  // namespace

TEST_CASE("extremes: a machine out of memory fails allocations, counts them and runs on") {
  for (const char* k : {"v6.17", "v7.0"}) {
    INFO(k);
    auto r = request("small-2s-8c", k, "8");
    r.sets = {"topology.nodes.0.memory_mb=0.05", "topology.nodes.1.memory_mb=0.05"};  // 12 pages each
    RunResult res = run_one(r);
    CHECK(res.alloc_failures > 0);
    CHECK(stat(res, "maple_node", slub::Stat::ALLOC_FAILED) + stat(res, "vm_area_struct", slub::Stat::ALLOC_FAILED) > 0);
    CHECK(res.ops_per_sec > 0);  // iterations that got their objects still count
    CHECK(res.slab_bytes <= 2 * 12 * 4096);
  }
}

TEST_CASE("extremes: CPUs of a memoryless node use the nearest node's lists, barn and pages") {
  for (const char* k : {"v6.17", "v7.0"}) {
    INFO(k);
    auto r = request("small-2s-8c", k, "8");
    r.workload = "cross-free";  // remote frees: node lists and barns busy on every node
    RunResult both = run_one(r);
    CHECK(acquisitions(both, "kmalloc-256.list_lock", "node1") > 0);  // the test can fail
    r.sets = {"topology.nodes.1.memory_mb=0"};
    RunResult less = run_one(r);
    CHECK(less.alloc_failures == 0);
    CHECK(less.ops_per_sec > 0);
    CHECK(acquisitions(less, "zone_lock", "node1") == 0);
    CHECK(acquisitions(less, "kmalloc-256.list_lock", "node1") == 0);
    CHECK(acquisitions(less, "kmalloc-256.barn_lock", "node1") == 0);
    CHECK(acquisitions(less, "kmalloc-256.list_lock", "node0") > 0);
  }
}

TEST_CASE("extremes: sheaf capacities 1 and 1024, and barns that keep nothing") {
  for (const char* cap : {"1", "1024"}) {
    INFO("capacity " << cap);
    auto r = request("small-2s-8c", "v7.0", "8");
    r.sheaf_capacity = cap;
    RunResult res = run_one(r);
    CHECK(res.ops_per_sec > 0);
    CHECK(stat(res, "maple_node", slub::Stat::ALLOC_PCS) + stat(res, "maple_node", slub::Stat::ALLOC_FASTPATH) > 0);
  }
  auto r = request("small-2s-8c", "v7.0", "8");
  r.sets = {"kernel.barn_max_full=0", "kernel.barn_max_empty=0"};
  RunResult res = run_one(r);
  CHECK(res.ops_per_sec > 0);
  CHECK(stat(res, "maple_node", slub::Stat::BARN_PUT) == 0);
  CHECK(stat(res, "maple_node", slub::Stat::BARN_GET) == 0);
}

TEST_CASE("extremes: one CPU, and 4096 CPUs") {
  const std::string one = derived_topology("one-cpu", [](json& d) {
    d["sockets"] = json::parse(R"([{"id": 0, "cpus": "0"}])");
    d["nodes"] = json::parse(R"([{"id": 0, "cpus": "0", "memory_mb": 4096}])");
    d["llc"]["domains"] = json::parse(R"(["0"])");
    d.erase("node_distance");
  });
  for (const char* k : {"v6.17", "v7.0"}) {
    RunResult res = run_one(request(one, k, "1"));
    CHECK(res.nr_task == 1);
    CHECK(res.ops_per_sec > 0);
  }
  const std::string big = derived_topology("cpus-4096", [](json& d) {
    d["sockets"] = json::parse(R"([{"id": 0, "cpus": "0-2047"}, {"id": 1, "cpus": "2048-4095"}])");
    d["nodes"] = json::parse(
        R"([{"id": 0, "cpus": "0-2047", "memory_mb": 65536}, {"id": 1, "cpus": "2048-4095", "memory_mb": 65536}])");
    d["llc"].erase("domains");
    d["llc"]["cores_per_domain"] = 8;
  });
  auto r = request(big, "v7.0", "4096");
  r.duration = "200us";
  r.warmup = "200us";
  RunResult res = run_one(r);
  CHECK(res.nr_task == 4096);
  CHECK(res.ops_per_sec > 0);
}

TEST_CASE("extremes: a named cache over 8 KiB is a cache; a kmalloc size over 8 KiB is not") {
  json caches = load_json_file(test::source_dir() + "/configs/caches/default.json");
  caches["caches"]["maple_node"]["object_size"]["value"] = 10880;  // a kvm_vcpu-sized object
  caches["caches"]["maple_node"]["align"] = 64;
  const fs::path file = fs::temp_directory_path() / "slubsim-test-big-caches.json";
  std::ofstream(file) << caches.dump(1);
  for (const char* k : {"v6.17", "v7.0"}) {
    INFO(k);
    auto r = request("small-2s-8c", k, "8");
    r.caches = file.string();
    RunResult res = run_one(r);
    CHECK(res.ops_per_sec > 0);
    for (const auto& c : res.caches)
      if (c.name == "maple_node") {
        CHECK(c.geo.size == 10880);
        CHECK(c.geo.order == 3);  // slub_max_order: 32 KiB holds 3
        CHECK(c.geo.objects == 3);
      }
  }
  caches["caches"]["kmalloc-16k"] = caches["caches"]["maple_node"];
  caches["caches"]["kmalloc-16k"]["object_size"]["value"] = 16384;
  std::ofstream(file) << caches.dump(1);
  auto r = request("small-2s-8c", "v7.0", "8");
  r.caches = file.string();
  CHECK_THROWS_WITH_AS(resolve_job(r), doctest::Contains("larger kmallocs bypass slab"), ConfigError);
}

TEST_CASE("extremes: a state too large is refused up front, with its estimate") {
  auto r = request("small-2s-8c", "v7.0", "8");
  r.sheaf_capacity = "4096";
  r.sets = {"kernel.barn_max_full=100000"};
  CHECK_THROWS_WITH_AS(resolve_job(r), doctest::Contains("GiB barns and node lists for 2 nodes"), ConfigError);
  r.sets = {};
  Job job = resolve_job(r);  // the same capacity with the preset's barns fits
  CHECK(estimate_state(job, job.variants[0]).total() < kMaxStateBytes);
}
