// Acceptance: the automatic sheaf capacity table of 7.0 (slub-algorithms.md §4.2), and the capacity
// each front-end actually gives a cache: 7.0 every cache, the automatic capacity raised to an
// explicit minimum; 6.18/6.19 only caches created with an explicit capacity, exactly that
// capacity (§3.1); the cpu-partial front-ends none.
//
// §4.2: base = 4 if size >= PAGE_SIZE, 12 if >= 1024, 26 if >= 256, else 60; the sheaf struct
// (32-byte header + 8 bytes per pointer) is rounded up to its kmalloc bucket and the capacity
// grown to fill it: 60 -> 32 + 480 = 512 B (60); 26 -> 240 -> 256 B (28); 12 -> 128 B (12);
// 4 -> 64 B (4). The size is s->size, the slab stride, not the object size.
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "models/immediate.h"
#include "models/slub/slub.h"

using namespace slubsim;
using namespace slubsim::slub;

TEST_CASE("sheaf capacity: the automatic capacity table (§4.2) at every boundary") {
  struct Row {
    std::uint32_t size;
    std::uint32_t capacity;
  };
  // < 256 -> 60, 256..1023 -> 28, 1024..4095 -> 12, >= 4096 -> 4.
  const std::vector<Row> rows = {
      {8, 60},     {64, 60},    {192, 60},   {248, 60},   {255, 60},  {256, 28},
      {512, 28},   {1000, 28},  {1023, 28},  {1024, 12},  {2048, 12}, {4088, 12},
      {4095, 12},  {4096, 4},   {8192, 4},   {16384, 4},
  };
  for (const Row& r : rows) {
    INFO("size " << r.size);
    CHECK(sheaf_capacity_auto(r.size, 0) == r.capacity);
  }
  // The sheaf struct of each automatic capacity fills its kmalloc bucket exactly.
  CHECK(sheaf_struct_bytes(60) == 512);
  CHECK(sheaf_struct_bytes(28) == 256);
  CHECK(sheaf_struct_bytes(12) == 128);
  CHECK(sheaf_struct_bytes(4) == 64);
  // ... which the unrounded bases would not: 26 pointers need 240 bytes, in a 256-byte bucket.
  CHECK(sheaf_struct_bytes(26) == 256);
  for (std::uint32_t cap : {60u, 28u, 12u, 4u}) CHECK(32 + 8 * cap == sheaf_struct_bytes(cap));
}

TEST_CASE("sheaf capacity: an explicit capacity is a minimum over the automatic one (7.0)") {
  // maple_node: 256 bytes, explicit 32 -> max(28, 32) = 32; its 288-byte struct is kmalloc-512.
  CHECK(sheaf_capacity_auto(256, 32) == 32);
  CHECK(sheaf_struct_bytes(32) == 512);
  // vm_area_struct: 192 bytes (below 256), explicit 32 -> max(60, 32) = 60.
  CHECK(sheaf_capacity_auto(192, 32) == 60);
  // A minimum above the automatic value wins, in every row; one below it does not.
  CHECK(sheaf_capacity_auto(64, 61) == 61);
  CHECK(sheaf_capacity_auto(64, 59) == 60);
  CHECK(sheaf_capacity_auto(512, 29) == 29);
  CHECK(sheaf_capacity_auto(512, 27) == 28);
  CHECK(sheaf_capacity_auto(2048, 13) == 13);
  CHECK(sheaf_capacity_auto(4096, 5) == 5);
  CHECK(sheaf_capacity_auto(4096, 3) == 4);
  CHECK(sheaf_capacity_auto(8192, 128) == 128);
  // The explicit value is taken as is, not rounded to fill a bucket.
  CHECK(sheaf_capacity_auto(4096, 33) == 33);
}

namespace {

struct Cache {
  const char* name;
  std::uint32_t object_size;
  std::uint32_t align = 0;
  bool hwcache_align = false;
  bool freeptr_outside = false;
  std::uint32_t sheaf_capacity = 0;
};

// name, object size, flags, explicit sheaf_capacity.
const std::vector<Cache> kCaches = {
    {"kmalloc-64", 64},
    {"vm_area_struct", 192, 0, false, false, 32},
    {"maple_node", 256, 256, false, false, 32},
    {"odd-250-hwalign", 250, 0, true},         // stride 256: the 256-1023 row, not < 256
    {"rcu-248-freeptr-outside", 248, 0, false, true},  // 248 + free pointer = 256
    {"kmalloc-1k", 1024},
    {"kmalloc-4090", 4090},                    // stride 4096
    {"kmalloc-4k", 4096},
    {"kmalloc-8k", 8192},
    {"small-explicit-4", 64, 0, false, false, 4},     // 6.18: exactly 4; 7.0: max(60, 4) = 60
    {"big-explicit-100", 4096, 0, false, false, 100}, // 7.0: max(4, 100) = 100
};

std::unique_ptr<Slub> make(ImmediateShared& sh, FrontendKind fe, int cpus) {
  Params p;
  for (const Cache& c : kCaches) {
    CacheSpec s;
    s.name = c.name;
    s.object_size = c.object_size;
    s.align = c.align;
    s.hwcache_align = c.hwcache_align;
    s.freeptr_outside = c.freeptr_outside;
    s.sheaf_capacity = c.sheaf_capacity;
    p.caches.push_back(s);
  }
  p.numa.nr_cpus = cpus;
  p.numa.nr_nodes = 2;
  for (int c = 0; c < cpus; ++c) p.numa.cpu_node.push_back(c * 2 / cpus);
  p.numa.node_pages = {1 << 14, 1 << 14};
  p.numa.fallback = {{0, 1}, {1, 0}};
  p.features.frontend = fe;
  p.validate = true;
  return std::make_unique<Slub>(sh, p);
}

}  // namespace

TEST_CASE("sheaf capacity: what each front-end gives each cache") {
  const int cpus = 4;
  // Expected capacity per cache, by front-end, in kCaches order.
  const std::vector<std::uint32_t> v70 = {60, 60, 32, 28, 28, 12, 4, 4, 4, 60, 100};
  const std::vector<std::uint32_t> v618 = {0, 32, 32, 0, 0, 0, 0, 0, 0, 4, 100};
  struct Case {
    FrontendKind fe;
    const char* name;
    std::vector<std::uint32_t> want;
  };
  const std::vector<Case> cases = {
      {FrontendKind::Sheaves, "7.0 sheaves", v70},
      {FrontendKind::SheavesOnCpuPartial, "6.18 sheaves on cpu partial", v618},
      {FrontendKind::CpuPartial, "6.8+ cpu partial", std::vector<std::uint32_t>(kCaches.size(), 0)},
      {FrontendKind::CpuPartialFrozen, "<= 6.7 cpu partial", std::vector<std::uint32_t>(kCaches.size(), 0)},
  };
  for (const Case& c : cases) {
    ImmediateShared sh;
    auto slub = make(sh, c.fe, cpus);
    REQUIRE(slub->nr_caches() == static_cast<int>(kCaches.size()));
    for (int i = 0; i < slub->nr_caches(); ++i) {
      const KmemCache& s = slub->cache(i);
      INFO(c.name << ", cache " << s.name() << " (stride " << s.geo.size << ")");
      CHECK(s.sheaf_capacity == c.want[i]);
      LayerCounts l = slub->layers(s);
      if (s.sheaf_capacity) {
        // Every possible CPU starts with an empty main sheaf of that capacity, no spare, no
        // rcu_free sheaf; each node has an empty barn.
        REQUIRE(s.pcs.size() == static_cast<std::size_t>(cpus));
        for (const PercpuSheaves& pcs : s.pcs) {
          REQUIRE(pcs.main != nullptr);
          CHECK(pcs.main->capacity == s.sheaf_capacity);
          CHECK(pcs.main->empty());
          CHECK(pcs.spare == nullptr);
          CHECK(pcs.rcu_free == nullptr);
        }
        for (const KmemCacheNode& n : s.node) {
          CHECK(n.barn.nr_full() == 0);
          CHECK(n.barn.nr_empty() == 0);
        }
        CHECK(l.sheaf_structs == cpus);
        CHECK(l.sheaf_bytes == cpus * static_cast<std::int64_t>(sheaf_struct_bytes(s.sheaf_capacity)));
        // The main sheaves are not counted as SHEAF_ALLOC (they are set up with the cache).
        CHECK(s.stats[int(Stat::SHEAF_ALLOC)] == 0);
      } else {
        CHECK(s.pcs.empty());
        CHECK(l.sheaf_structs == 0);
        CHECK(l.sheaf_bytes == 0);
      }
    }
  }
  // The strides the table is applied to.
  ImmediateShared sh;
  auto slub = make(sh, FrontendKind::Sheaves, cpus);
  CHECK(slub->find("odd-250-hwalign")->geo.size == 256);
  CHECK(slub->find("rcu-248-freeptr-outside")->geo.size == 256);
  CHECK(slub->find("kmalloc-4090")->geo.size == 4096);
  CHECK(slub->find("vm_area_struct")->geo.size == 192);
}

TEST_CASE("sheaf capacity: a cache without sheaves in 6.18 uses the cpu-slab paths only") {
  ImmediateShared sh;
  auto slub = make(sh, FrontendKind::SheavesOnCpuPartial, 4);
  KmemCache& s = *slub->find("kmalloc-64");
  REQUIRE(s.sheaf_capacity == 0);
  ImmediateExec e(sh, 0, 0);
  void* o = run_now(slub->alloc(e, s));
  REQUIRE(o != nullptr);
  run_now(slub->free(e, s, o));
  // One slow path and a new slab, then the free to the cpu slab: no sheaf counter moves.
  CHECK(s.stats[int(Stat::ALLOC_SLOWPATH)] == 1);
  CHECK(s.stats[int(Stat::ALLOC_SLAB)] == 1);
  CHECK(s.stats[int(Stat::FREE_FASTPATH)] == 1);
  for (Stat st : {Stat::ALLOC_PCS, Stat::FREE_PCS, Stat::SHEAF_REFILL, Stat::SHEAF_ALLOC, Stat::BARN_GET,
                  Stat::BARN_GET_FAIL, Stat::BARN_PUT, Stat::FREE_RCU_SHEAF})
    CHECK(s.stats[int(st)] == 0);
  // The prefill API is refused for it.
  CHECK_THROWS_AS(run_now(slub->prefill_sheaf(e, s, 2)), SlubError);
  slub->check();
}
