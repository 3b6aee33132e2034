// Costs where nothing contends: what one CPU pays on its own for each path, priced exactly
// (the immediate driver charges only spend(); shared accesses are free there). These are the
// mechanisms T12 (Vlastimil Babka's single-thread microbenchmark) is scored on: warm pages from
// the pcp list, memcg charging, bulk calls priced once per call or per group where the kernel
// does one thing for many objects, and shuffled frees.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "models/immediate.h"
#include "models/slub/slub.h"
#include "sim/config/config.h"
#include "sim/config/workload_json.h"

using namespace slubsim;
using namespace slubsim::slub;

namespace {

PathCosts test_costs() {
  PathCosts c;
  c.alloc_fastpath = from_ns(5.5);
  c.free_fastpath = from_ns(5.5);
  c.slowpath_entry = from_ns(9);
  c.free_slowpath_entry = from_ns(8);
  c.freelist_walk_per_object = from_ns(1.5);
  c.freelist_build_per_object = from_ns(2);
  c.new_slab_cold_line = from_ns(25);
  c.new_slab = from_ns(150);
  c.discard_slab = from_ns(60);
  c.pcp_alloc = from_ns(30);
  c.pcp_free = from_ns(25);
  c.memcg_charge = from_ns(2.49);
  c.memcg_uncharge = from_ns(2.51);
  return c;
}

// One kmalloc-64 cache on the cpu partial front-end, nr_cpus CPUs on one node, test_costs().
Params kmalloc64_params(int nr_cpus, bool accounted) {
  Params p;
  CacheSpec c;
  c.name = "kmalloc-64";
  c.object_size = 64;
  c.accounted = accounted;
  p.caches = {c};
  p.numa.nr_cpus = nr_cpus;
  p.numa.nr_nodes = 1;
  p.numa.cpu_node.assign(static_cast<std::size_t>(nr_cpus), 0);
  p.numa.node_pages = {1 << 16};
  p.numa.fallback = {{0}};
  p.features.frontend = FrontendKind::CpuPartial;
  p.costs = test_costs();
  p.validate = true;
  return p;
}

struct Rig {
  ImmediateShared sh;
  std::unique_ptr<Slub> slub;
  std::unique_ptr<ImmediateExec> e;

  explicit Rig(bool accounted, int warm_pages = 128) {
    Params p = kmalloc64_params(1, accounted);
    p.page_alloc.pcp_warm_pages = warm_pages;
    slub = std::make_unique<Slub>(sh, p);
    e = std::make_unique<ImmediateExec>(sh, 0, 0);
  }
  KmemCache& s() { return slub->cache(0); }
  void* alloc() { return run_now(slub->alloc(*e, s())); }
  void free(void* o) { run_now(slub->free(*e, s(), o)); }
};

}  // namespace

TEST_CASE("private costs: pcp pages freed by this CPU come back warm, LIFO, up to pcp_warm_pages") {
  ImmediateShared sh;
  Numa numa;
  numa.nr_cpus = 1;
  numa.nr_nodes = 1;
  numa.cpu_node = {0};
  numa.node_pages = {4096};
  numa.fallback = {{0}};
  PageAllocParams pp;
  pp.pcp_batch = 8;
  pp.pcp_high = 64;
  pp.pcp_warm_pages = 4;
  PathCosts c;
  PageAllocator pa(sh, numa, pp, c);
  ImmediateExec e(sh, 0, 0);
  bool warm = true;
  // A refill from the buddy lists is cold.
  int node = run_now(pa.alloc_pages(e, 0, 0, false, &warm));
  CHECK(node == 0);
  CHECK_FALSE(warm);
  // Six pages freed: only the last four fit the warm end.
  std::vector<bool> got;
  for (int i = 0; i < 6; ++i) run_now(pa.free_pages(e, 0, 0));
  for (int i = 0; i < 6; ++i) {
    run_now(pa.alloc_pages(e, 0, 0, false, &warm));
    got.push_back(warm);
  }
  CHECK(got == std::vector<bool>{true, true, true, true, false, false});
  // Order-1 blocks count against the same budget in pages: 4 pages = 2 blocks.
  for (int i = 0; i < 3; ++i) run_now(pa.free_pages(e, 1, 0));
  int warm_blocks = 0;
  for (int i = 0; i < 3; ++i) {
    run_now(pa.alloc_pages(e, 1, 0, false, &warm));
    warm_blocks += warm ? 1 : 0;
  }
  CHECK(warm_blocks == 2);
}

TEST_CASE("private costs: a slab rebuilt on a warm page pays no cold lines, on a cold one it does") {
  for (int warm_pages : {0, 128}) {
    Rig r(false, warm_pages);
    const std::uint32_t objs = r.s().geo.objects;
    std::vector<void*> held;
    for (std::uint32_t i = 0; i < objs; ++i) held.push_back(r.alloc());
    r.slub->check();
    // Free it all: the empty slab leaves through the cpu partial list only when flushed.
    for (void* o : held) r.free(o);
    run_now(r.slub->shrink(*r.e, r.s()));
    CHECK(r.s().slabs_allocated == 0);
    // The next slab is built on the page just freed.
    const Time t0 = r.e->now();
    void* o = r.alloc();
    const Time spent = r.e->now() - t0;
    const PathCosts c = test_costs();
    const Time cold = static_cast<Time>(objs) * c.new_slab_cold_line;  // 64-byte objects: a line each
    INFO("pcp_warm_pages " << warm_pages);
    if (warm_pages) CHECK(spent < cold);
    else CHECK(spent > cold);
    r.free(o);
  }
}

TEST_CASE("private costs: an accounted cache pays memcg charge and uncharge per object, on every path") {
  Rig plain(false), charged(true);
  auto pair_cost = [](Rig& r) {
    void* warm_up = r.alloc();  // the first allocation builds the slab
    r.free(warm_up);
    const Time t0 = r.e->now();
    void* o = r.alloc();
    r.free(o);
    return r.e->now() - t0;
  };
  const PathCosts c = test_costs();
  CHECK(pair_cost(charged) - pair_cost(plain) == c.memcg_charge + c.memcg_uncharge);
  // Bulk: n charges and n uncharges.
  auto bulk_cost = [](Rig& r, std::size_t n) {
    std::vector<void*> p(n);
    const Time t0 = r.e->now();
    REQUIRE(run_now(r.slub->alloc_bulk(*r.e, r.s(), n, p.data())) == n);
    run_now(r.slub->free_bulk(*r.e, r.s(), n, p.data()));
    return r.e->now() - t0;
  };
  CHECK(bulk_cost(charged, 8) - bulk_cost(plain, 8) == 8 * (c.memcg_charge + c.memcg_uncharge));
}

TEST_CASE("private costs: a bulk allocation takes its lock once and pops each object; a detached freelist is one fast free") {
  Rig r(false);
  const PathCosts c = test_costs();
  void* first = r.alloc();  // builds the cpu slab
  constexpr std::size_t n = 8;
  std::vector<void*> p(n);
  Time t0 = r.e->now();
  REQUIRE(run_now(r.slub->alloc_bulk(*r.e, r.s(), n, p.data())) == n);
  CHECK(r.e->now() - t0 == c.slowpath_entry + static_cast<Time>(n) * c.freelist_walk_per_object);
  // All eight are of the cpu slab: build_detached_freelist groups them (a store each), and
  // do_slab_free frees the group with one cmpxchg.
  t0 = r.e->now();
  run_now(r.slub->free_bulk(*r.e, r.s(), n, p.data()));
  CHECK(r.e->now() - t0 == static_cast<Time>(n) * c.freelist_build_per_object + c.free_fastpath);
  r.free(first);
}

TEST_CASE("private costs: a free step takes order fifo or shuffled, and only frees do") {
  auto doc = [](const std::string& step) {
    return nlohmann::json::parse(R"({"name": "w", "description": "d", "source": "s", "ops_per_iteration": 1,
      "pools": {"p": {"scope": "task"}},
      "program": [{"op": "alloc", "cache": "kmalloc-64", "pool": "p", "count": 4}, )" + step + "]}");
  };
  Program p = parse_workload(doc(R"({"op": "free", "cache": "kmalloc-64", "pool": "p", "count": 4, "order": "shuffled"})"), "w.json");
  CHECK(p.steps.at(1).shuffled);
  p = parse_workload(doc(R"({"op": "free", "cache": "kmalloc-64", "pool": "p", "count": 4, "order": "fifo"})"), "w.json");
  CHECK_FALSE(p.steps.at(1).shuffled);
  CHECK_THROWS_WITH_AS(parse_workload(doc(R"({"op": "free", "cache": "kmalloc-64", "pool": "p", "order": "random"})"), "w.json"),
                       doctest::Contains("unknown order 'random' (fifo, shuffled)"), ConfigError);
  CHECK_THROWS_WITH_AS(parse_workload(doc(R"({"op": "alloc", "cache": "kmalloc-64", "pool": "p", "order": "shuffled"})"), "w.json"),
                       doctest::Contains("only frees take an order"), ConfigError);
}

TEST_CASE("private costs: an alloc step takes gfp kernel or nowait, and only alloc does") {
  auto doc = [](const std::string& step) {
    return nlohmann::json::parse(R"({"name": "w", "description": "d", "source": "s", "ops_per_iteration": 1,
      "pools": {"p": {"scope": "task"}},
      "program": [)" + step + R"(, {"op": "free", "cache": "kmalloc-64", "pool": "p", "count": 4}]})");
  };
  Program p = parse_workload(doc(R"({"op": "alloc", "cache": "kmalloc-64", "pool": "p", "count": 4, "gfp": "nowait"})"), "w.json");
  CHECK(p.steps.at(0).nowait);
  p = parse_workload(doc(R"({"op": "alloc", "cache": "kmalloc-64", "pool": "p", "count": 4, "gfp": "kernel"})"), "w.json");
  CHECK_FALSE(p.steps.at(0).nowait);
  p = parse_workload(doc(R"({"op": "alloc", "cache": "kmalloc-64", "pool": "p", "count": 4})"), "w.json");
  CHECK_FALSE(p.steps.at(0).nowait);
  CHECK_THROWS_WITH_AS(parse_workload(doc(R"({"op": "alloc", "cache": "kmalloc-64", "pool": "p", "gfp": "atomic"})"), "w.json"),
                       doctest::Contains("unknown gfp 'atomic' (kernel, nowait)"), ConfigError);
  CHECK_THROWS_WITH_AS(parse_workload(doc(R"({"op": "alloc_bulk", "cache": "kmalloc-64", "pool": "p", "count": 4, "gfp": "nowait"})"), "w.json"),
                       doctest::Contains("only alloc takes a gfp"), ConfigError);
}

namespace {

// The immediate driver, with a transfer price for a line another CPU wrote last (Exec::line_from).
class TransferExec final : public Exec {
 public:
  TransferExec(ImmediateShared& sh, int cpu, Time transfer) : Exec(cpu, 0), sh_(sh), transfer_(transfer) {}
  Time line_from(int owner, int) const override { return owner >= 0 && owner != cpu() ? transfer_ : 0; }

 protected:
  bool begin(const Request& r) override {
    result_ = true;
    if (r.kind == Req::SpinLock || r.kind == Req::SpinTrylock) result_ = sh_.lock(r.id, cpu_, r.kind == Req::SpinTrylock);
    if (r.kind == Req::SpinUnlock) sh_.unlock(r.id, cpu_);
    return true;
  }
  void park(std::coroutine_handle<>) override { throw std::logic_error("transfer exec: not granted"); }

 private:
  ImmediateShared& sh_;
  Time transfer_;
};

// CPU 1 frees every object of a slab CPU 0 filled, then gives the slab to the node list; CPU 0
// then bulk-allocates the rest of its own cpu slab and `foreign` objects of that slab. Returns
// the time the bulk call took.
Time bulk_after_remote_frees(bool from_writer, std::uint32_t foreign) {
  ImmediateShared sh;
  Params p = kmalloc64_params(2, false);
  p.freelist_lines_from_writer = from_writer;
  Slub slub(sh, p);
  TransferExec e0(sh, 0, from_ns(100)), e1(sh, 1, from_ns(100));
  KmemCache& s = slub.cache(0);
  const std::uint32_t k = s.geo.objects;
  std::vector<void*> first;
  for (std::uint32_t i = 0; i < k; ++i) first.push_back(run_now(slub.alloc(e0, s)));
  void* keep = run_now(slub.alloc(e0, s));  // the second slab becomes CPU 0's cpu slab
  for (void* o : first) run_now(slub.free(e1, s, o));
  run_now(slub.flush_cpu(e1, s, 1));  // CPU 1's partial list (the first slab) to the node list
  std::vector<void*> got(k - 1 + foreign);
  const Time t0 = e0.now();
  REQUIRE(run_now(slub.alloc_bulk(e0, s, got.size(), got.data())) == got.size());
  const Time took = e0.now() - t0;
  run_now(slub.free_bulk(e0, s, got.size(), got.data()));
  run_now(slub.free(e0, s, keep));
  return took;
}

}  // namespace

TEST_CASE("private costs: a bulk allocation's freelist walk pays the transfer for free pointers another CPU wrote (costs.slub.freelist_lines)") {
  // "local": every pop costs freelist_walk_per_object, whoever wrote it.
  const Time local = bulk_after_remote_frees(false, 6);
  // "writer": the first slab's objects after the one ___slab_alloc hands over (5 pops) each cost
  // the 100 ns transfer from CPU 1 instead of 1.5 ns; CPU 0's own cpu slab's pops do not change.
  const Time writer = bulk_after_remote_frees(true, 6);
  CHECK(writer - local == 5 * (from_ns(100) - from_ns(1.5)));
  // With no foreign pops beyond the hand-over, nothing changes.
  CHECK(bulk_after_remote_frees(true, 1) == bulk_after_remote_frees(false, 1));
}
