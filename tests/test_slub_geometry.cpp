// Acceptance: slab geometry reproduces the table of slub-algorithms.md §1.4 (order / objects per
// slab by present-CPU count, min_partial, cpu_partial objects and slabs) for 8, 64, 256 and 512
// CPUs, the notes below the table (8-15 and 2-7 present CPUs), and the per-cache knobs.
//
// Every expected number below is copied from the reference table or its notes, or derived by
// hand from the formulas the reference states (cpu_partial_slabs = ceil(2 * cpu_partial /
// objects per slab), §1.2 and §2.7; objects = (PAGE_SIZE << order) / size, §1.4).
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "models/slub/geometry.h"

using namespace slubsim::slub;

namespace {

struct OrderObjs {
  int order;
  std::uint32_t objects;
};

// One row of the §1.4 table.
struct Row {
  const char* name;
  std::uint32_t size;
  std::uint32_t align;
  OrderObjs c16;    // 16-31 present CPUs
  OrderObjs c32;    // 32-127
  OrderObjs c128;   // 128-511
  OrderObjs c512;   // 512-1023
  std::uint32_t min_partial;
  std::uint32_t cpu_partial;        // objects
  std::uint32_t cpu_partial_slabs;  // at 32-127 CPUs
};

// Transcribed from slub-algorithms.md §1.4 ("Computed table").
const std::vector<Row> kTable = {
    {"kmalloc-8", 8, 0, {0, 512}, {0, 512}, {0, 512}, {0, 512}, 5, 120, 1},
    {"kmalloc-64", 64, 0, {0, 64}, {0, 64}, {0, 64}, {0, 64}, 5, 120, 4},
    {"kmalloc-96", 96, 0, {0, 42}, {0, 42}, {0, 42}, {1, 85}, 5, 120, 6},
    {"kmalloc-128", 128, 0, {0, 32}, {0, 32}, {1, 64}, {1, 64}, 5, 120, 8},
    {"kmalloc-192", 192, 0, {1, 42}, {1, 42}, {1, 42}, {2, 85}, 5, 120, 6},
    {"kmalloc-256", 256, 0, {1, 32}, {1, 32}, {2, 64}, {2, 64}, 5, 52, 4},
    {"maple_node", 256, 256, {1, 32}, {1, 32}, {2, 64}, {2, 64}, 5, 52, 4},
    {"kmalloc-512", 512, 0, {2, 32}, {2, 32}, {3, 64}, {3, 64}, 5, 52, 4},
    {"kmalloc-1k", 1024, 0, {3, 32}, {3, 32}, {3, 32}, {3, 32}, 5, 24, 2},
    {"kmalloc-2k", 2048, 0, {3, 16}, {3, 16}, {3, 16}, {3, 16}, 5, 24, 3},
    {"kmalloc-4k", 4096, 0, {3, 8}, {3, 8}, {3, 8}, {3, 8}, 6, 6, 2},
    {"kmalloc-8k", 8192, 0, {3, 4}, {3, 4}, {3, 4}, {3, 4}, 6, 6, 3},
};

CacheSpec spec_of(const Row& r) {
  CacheSpec s;
  s.name = r.name;
  s.object_size = r.size;
  s.align = r.align;
  return s;
}

const Row& row(const std::string& name) {
  for (const auto& r : kTable)
    if (name == r.name) return r;
  throw std::logic_error("no such row");
}

// The note "8-15 present CPUs": every row equals the 16-31 column except kmalloc-192, 0 / 21.
OrderObjs col_8_15(const Row& r) {
  if (std::string(r.name) == "kmalloc-192") return {0, 21};
  return r.c16;
}

// The note "2-7 present CPUs": kmalloc-192 0 / 21, kmalloc-256 and a 256-B maple_node 0 / 16,
// kmalloc-512 1 / 16, kmalloc-1k 2 / 16; the other rows equal the 16-31 column.
OrderObjs col_2_7(const Row& r) {
  std::string n = r.name;
  if (n == "kmalloc-192") return {0, 21};
  if (n == "kmalloc-256" || n == "maple_node") return {0, 16};
  if (n == "kmalloc-512") return {1, 16};
  if (n == "kmalloc-1k") return {2, 16};
  return r.c16;
}

void check_shape(const Row& r, int cpus, OrderObjs want) {
  Features f;
  Geometry g = compute_geometry(spec_of(r), f, cpus);
  INFO(std::string(r.name) << " at " << cpus << " CPUs");
  CHECK(g.order == want.order);
  CHECK(g.objects == want.objects);
  CHECK(g.slab_bytes() == (kPageSize << want.order));
  // min_partial and cpu_partial (objects) do not depend on the CPU count.
  CHECK(g.min_partial == r.min_partial);
  CHECK(g.cpu_partial == r.cpu_partial);
}

}  // namespace

TEST_CASE("slub geometry: the reference table at 8, 64, 256 and 512 CPUs") {
  for (const auto& r : kTable) {
    check_shape(r, 8, col_8_15(r));
    check_shape(r, 64, r.c32);
    check_shape(r, 256, r.c128);
    check_shape(r, 512, r.c512);
  }
}

TEST_CASE("slub geometry: each column holds over its whole CPU range") {
  // "each column holds for its whole range" (§1.4): check both ends of every range.
  for (const auto& r : kTable) {
    for (int cpus : {8, 15}) check_shape(r, cpus, col_8_15(r));
    for (int cpus : {16, 31}) check_shape(r, cpus, r.c16);
    for (int cpus : {32, 127}) check_shape(r, cpus, r.c32);
    for (int cpus : {128, 511}) check_shape(r, cpus, r.c128);
    for (int cpus : {512, 1023}) check_shape(r, cpus, r.c512);
  }
}

TEST_CASE("slub geometry: 2-7 present CPUs follow the note below the table") {
  for (const auto& r : kTable)
    for (int cpus : {2, 3, 4, 7}) check_shape(r, cpus, col_2_7(r));
  // Spelled out: kmalloc-256 at 4 CPUs is 0 / 16.
  Geometry g = compute_geometry(spec_of(row("kmalloc-256")), Features{}, 4);
  CHECK(g.order == 0);
  CHECK(g.objects == 16);
}

TEST_CASE("slub geometry: cpu_partial_slabs of the table's 32-127 CPU column") {
  for (const auto& r : kTable) {
    INFO(std::string(r.name));
    for (int cpus : {32, 64, 127}) {
      Geometry g = compute_geometry(spec_of(r), Features{}, cpus);
      CHECK(g.cpu_partial == r.cpu_partial);
      CHECK(g.cpu_partial_slabs == r.cpu_partial_slabs);
    }
  }
}

TEST_CASE("slub geometry: cpu_partial_slabs recomputed from the objects of other columns") {
  // ceil(2 * cpu_partial / objects per slab), §1.2.
  struct Case {
    const char* name;
    int cpus;
    std::uint32_t slabs;
  };
  const Case cases[] = {
      // maple_node at 8 CPUs: 52 objects, 32 per slab (16-31 column): ceil(104 / 32) = 4.
      {"maple_node", 8, 4},
      // The reference's own example: 52 objects at 16 objects per slab (2-7 CPUs) gives 7.
      {"kmalloc-256", 4, 7},
      {"maple_node", 4, 7},
      // kmalloc-256 at 256 CPUs: 64 per slab, ceil(104 / 64) = 2.
      {"kmalloc-256", 256, 2},
      // kmalloc-128 at 256 CPUs: 120 objects, 64 per slab: ceil(240 / 64) = 4.
      {"kmalloc-128", 256, 4},
      // kmalloc-192 at 8 CPUs: 0 / 21, ceil(240 / 21) = 12.
      {"kmalloc-192", 8, 12},
      // kmalloc-96 at 512 CPUs: 1 / 85, ceil(240 / 85) = 3.
      {"kmalloc-96", 512, 3},
      // kmalloc-1k at 4 CPUs: 2 / 16, ceil(48 / 16) = 3.
      {"kmalloc-1k", 4, 3},
      // kmalloc-512 at 4 CPUs: 1 / 16, ceil(104 / 16) = 7.
      {"kmalloc-512", 4, 7},
  };
  for (const auto& c : cases) {
    INFO(std::string(c.name) << " at " << c.cpus << " CPUs");
    Geometry g = compute_geometry(spec_of(row(c.name)), Features{}, c.cpus);
    CHECK(g.cpu_partial_slabs == c.slabs);
  }
}

TEST_CASE("slub geometry: per-cache order, cpu_partial and min_partial override the defaults") {
  CacheSpec s = spec_of(row("kmalloc-256"));

  SUBCASE("order") {
    // Order 0 at 64 CPUs (the default there is 1 / 32): 4096 / 256 = 16 objects, and the
    // cpu_partial slabs follow the new object count: ceil(104 / 16) = 7.
    s.order = 0;
    Geometry g = compute_geometry(s, Features{}, 64);
    CHECK(g.order == 0);
    CHECK(g.objects == 16);
    CHECK(g.cpu_partial == 52);
    CHECK(g.cpu_partial_slabs == 7);
    CHECK(g.min_partial == 5);
    // Order 3: 32768 / 256 = 128 objects, ceil(104 / 128) = 1.
    s.order = 3;
    g = compute_geometry(s, Features{}, 64);
    CHECK(g.order == 3);
    CHECK(g.objects == 128);
    CHECK(g.cpu_partial_slabs == 1);
  }
  SUBCASE("cpu_partial") {
    // 30 objects at 32 per slab: ceil(60 / 32) = 2.
    s.cpu_partial = 30;
    Geometry g = compute_geometry(s, Features{}, 64);
    CHECK(g.cpu_partial == 30);
    CHECK(g.cpu_partial_slabs == 2);
    CHECK(g.order == 1);
    CHECK(g.objects == 32);
    // 0 turns the cpu partial list off.
    s.cpu_partial = 0;
    g = compute_geometry(s, Features{}, 64);
    CHECK(g.cpu_partial == 0);
    CHECK(g.cpu_partial_slabs == 0);
  }
  SUBCASE("min_partial") {
    s.min_partial = 9;
    Geometry g = compute_geometry(s, Features{}, 64);
    CHECK(g.min_partial == 9);
    CHECK(g.cpu_partial == 52);
    CHECK(g.cpu_partial_slabs == 4);
  }
  SUBCASE("CONFIG_SLUB_CPU_PARTIAL off") {
    // §2.7: cpu_partial is 0 when CONFIG_SLUB_CPU_PARTIAL is off.
    Features f;
    f.cpu_partial = false;
    Geometry g = compute_geometry(s, f, 64);
    CHECK(g.cpu_partial == 0);
    CHECK(g.cpu_partial_slabs == 0);
    CHECK(g.order == 1);
    CHECK(g.objects == 32);
  }
}

TEST_CASE("slub geometry: maple_node keeps its 256-byte alignment") {
  // maple_node is 256 B with align = sizeof(maple_node) (§1.4 notes): stride 256.
  Geometry g = compute_geometry(spec_of(row("maple_node")), Features{}, 64);
  CHECK(g.align == 256);
  CHECK(g.size == 256);
}
