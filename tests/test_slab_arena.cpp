#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "models/slub/slab_arena.h"

using namespace slubsim::slub;

namespace {
Slab* tag(int i) { return reinterpret_cast<Slab*>(static_cast<std::uintptr_t>(i + 1) * 64); }
}  // namespace

TEST_CASE("slab arena: blocks are aligned, writable, and every granule maps to its slab") {
  SlabArena a;
  std::mt19937_64 rng(11);
  struct Block {
    std::uint8_t* base;
    int order;
    Slab* slab;
  };
  std::vector<Block> live;
  for (int i = 0; i < 20000; ++i) {
    if (live.empty() || rng() % 3) {
      const int order = static_cast<int>(rng() % 4);
      std::uint8_t* b = a.alloc(order);
      const std::size_t bytes = kGranuleBytes << order;
      CHECK(reinterpret_cast<std::uintptr_t>(b) % bytes == 0);
      b[0] = 1;
      b[bytes - 1] = 2;  // the whole block is usable memory
      for (const Block& o : live) REQUIRE((b + bytes <= o.base || o.base + (kGranuleBytes << o.order) <= b));
      a.set(b, order, tag(i));
      live.push_back({b, order, tag(i)});
    } else {
      const std::size_t k = rng() % live.size();
      a.set(live[k].base, live[k].order, nullptr);
      a.free(live[k].base, live[k].order);
      live[k] = live.back();
      live.pop_back();
    }
    if (live.size() > 300) {  // keep the overlap check cheap
      a.set(live.front().base, live.front().order, nullptr);
      a.free(live.front().base, live.front().order);
      live.erase(live.begin());
    }
  }
  for (const Block& b : live)
    for (std::size_t off = 0; off < (kGranuleBytes << b.order); off += 1000) CHECK(a.find(b.base + off) == b.slab);
  int local = 0;
  CHECK(a.find(&local) == nullptr);
  CHECK(a.find(nullptr) == nullptr);
}

TEST_CASE("slab arena: a freed block is the next of its order, and alignment gaps are reused") {
  SlabArena a;
  std::uint8_t* p0 = a.alloc(0);  // granule 0
  std::uint8_t* p3 = a.alloc(3);  // granules 8-15: granules 1-7 become free blocks of orders 0, 1, 2
  CHECK(p3 - p0 == static_cast<std::ptrdiff_t>(8 * kGranuleBytes));
  CHECK(a.granules_used() == 16);
  std::uint8_t* g0 = a.alloc(0);
  std::uint8_t* g1 = a.alloc(1);
  std::uint8_t* g2 = a.alloc(2);
  CHECK(g0 == p0 + kGranuleBytes);
  CHECK(g1 == p0 + 2 * kGranuleBytes);
  CHECK(g2 == p0 + 4 * kGranuleBytes);
  CHECK(a.granules_used() == 16);  // all from the gap
  a.free(p3, 3);
  CHECK(a.alloc(3) == p3);
  a.set(p3, 3, tag(3));
  CHECK(a.find(p3 + 8 * kGranuleBytes - 1) == tag(3));
  CHECK(a.find(p3 + 8 * kGranuleBytes) == nullptr);  // past the high-water mark
  CHECK(a.find(p0) == nullptr);                  // in the arena but not set
}
