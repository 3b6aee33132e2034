// The host memory that slabs live in, and the model's virt_to_slab.
//
// Slab pages come from one range of host address space reserved when the allocator is created,
// so the slab of an address is an array index into a per-page table, as the kernel finds a
// page's struct slab in the memmap (virt_to_slab). Blocks of 2^order pages are aligned to their
// size, like the buddy allocator's; a freed block is reused by the next slab of its order, and
// address space is committed in steps as the high-water mark rises. Nothing here is simulated
// time: which host addresses the slabs get changes no result.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/slub/params.h"

namespace slubsim::slub {

struct Slab;

class SlabArena {
 public:
  SlabArena();
  ~SlabArena();
  SlabArena(const SlabArena&) = delete;
  SlabArena& operator=(const SlabArena&) = delete;

  // 2^order pages aligned to 2^order pages; throws SlubError when the reservation is used up.
  std::uint8_t* alloc(int order);
  void free(std::uint8_t* base, int order);
  // Every page of the block at base maps to slab (nullptr: to no slab).
  void set(const std::uint8_t* base, int order, Slab* slab) noexcept;
  // The slab of the page holding p; nullptr for an address that is not in a slab.
  Slab* find(const void* p) const noexcept {
    const std::uintptr_t page = (reinterpret_cast<std::uintptr_t>(p) - base_) >> kPageShift;
    return page < pages_used_ ? memmap_[page] : nullptr;
  }
  std::size_t pages_used() const noexcept { return pages_used_; }
  std::size_t reserved_pages() const noexcept { return reserved_pages_; }

 private:
  void commit(std::size_t pages);
  void free_range(std::size_t first, std::size_t last);

  std::uintptr_t base_ = 0;        // first byte of the slab pages
  Slab** memmap_ = nullptr;        // one entry per reserved page
  std::size_t reserved_pages_ = 0;
  std::size_t pages_used_ = 0;     // the bump pointer, in pages
  std::size_t pages_committed_ = 0;
  std::vector<std::vector<std::size_t>> free_;  // per order: first pages of free blocks
};

}  // namespace slubsim::slub
