// The host memory that slabs live in, and the model's virt_to_slab.
//
// Slab memory comes from one range of host address space reserved when the allocator is
// created, so the slab of an address is an array index into a per-granule table, as the kernel
// finds a page's struct slab in the memmap (virt_to_slab). The unit is a host granule of
// kGranuleBytes, not a simulated page: a slab's host block holds one word per object (its free
// pointer, models/slub/slab.h), so it is far smaller than the slab it stands for. Blocks of
// 2^order granules are aligned to their size, like the buddy allocator's; a freed block is reused
// by the next block of its order, and address space is committed in steps as the high-water mark
// rises. Nothing here is simulated time: which host addresses the slabs get changes no result.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/slub/params.h"

namespace slubsim::slub {

struct Slab;

// Host-side sizes, not model parameters: the arena's unit (one host cache line).
constexpr int kGranuleShift = 6;
constexpr std::size_t kGranuleBytes = std::size_t{1} << kGranuleShift;

class SlabArena {
 public:
  SlabArena();
  ~SlabArena();
  SlabArena(const SlabArena&) = delete;
  SlabArena& operator=(const SlabArena&) = delete;

  // The order of the smallest block that holds `bytes`.
  static int order_for(std::size_t bytes) noexcept {
    int order = 0;
    while ((kGranuleBytes << order) < bytes) ++order;
    return order;
  }
  // 2^order granules aligned to 2^order granules; throws SlubError when the reservation is used up.
  std::uint8_t* alloc(int order);
  void free(std::uint8_t* base, int order);
  // Every granule of the block at base maps to slab (nullptr: to no slab).
  void set(const std::uint8_t* base, int order, Slab* slab) noexcept;
  // The slab of the granule holding p; nullptr for an address that is not in a slab.
  Slab* find(const void* p) const noexcept {
    const std::uintptr_t g = (reinterpret_cast<std::uintptr_t>(p) - base_) >> kGranuleShift;
    return g < granules_used_ ? memmap_[g] : nullptr;
  }
  std::size_t granules_used() const noexcept { return granules_used_; }
  std::size_t reserved_granules() const noexcept { return reserved_granules_; }

 private:
  void commit(std::size_t granules);
  void free_range(std::size_t first, std::size_t last);

  std::uintptr_t base_ = 0;        // first byte of the slab memory
  Slab** memmap_ = nullptr;        // one entry per reserved granule
  std::size_t reserved_granules_ = 0;
  std::size_t granules_used_ = 0;  // the bump pointer, in granules
  std::size_t granules_committed_ = 0;
  std::vector<std::vector<std::size_t>> free_;  // per order: first granules of free blocks
};

}  // namespace slubsim::slub
