#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <unordered_map>

#include "models/slub/page_map.h"

using namespace slubsim::slub;

TEST_CASE("page map: random inserts and erases agree with a std::unordered_map") {
  PageMap m;
  std::unordered_map<std::uintptr_t, Slab*> ref;
  std::mt19937_64 rng(7);
  // Clustered pfns (slabs of neighbouring pages) and a few far ones, as the host allocator gives.
  auto pfn = [&] { return (rng() % 8 == 0 ? rng() % (1u << 30) : 0x7f0000 + rng() % 20000); };
  for (int i = 0; i < 200000; ++i) {
    std::uintptr_t p = pfn();
    auto* slab = reinterpret_cast<Slab*>(static_cast<std::uintptr_t>(i + 1) * 64);
    if (rng() % 3) {
      m.insert(p, slab);
      ref[p] = slab;
    } else {
      m.erase(p);
      ref.erase(p);
    }
    if (i % 997 == 0) {
      CHECK(m.size() == ref.size());
      for (int k = 0; k < 50; ++k) {
        std::uintptr_t q = pfn();
        auto it = ref.find(q);
        CHECK(m.find(q) == (it == ref.end() ? nullptr : it->second));
      }
    }
  }
  for (const auto& [p, slab] : ref) CHECK(m.find(p) == slab);
  for (const auto& [p, slab] : ref) m.erase(p);
  CHECK(m.size() == 0);
}
