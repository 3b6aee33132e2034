// pfn -> slab: the model's virt_to_slab (the kernel reads the struct page; slab memory here comes
// from the host's allocator, so its pages are looked up). An open-addressing table with linear
// probing and backward-shift deletion: one multiply and usually one probe per lookup, where a
// node-based hash map costs a modulo and a pointer chase on every free.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace slubsim::slub {

struct Slab;

class PageMap {
 public:
  Slab* find(std::uintptr_t pfn) const noexcept {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = home(pfn);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (!s.slab) return nullptr;
      if (s.pfn == pfn) return s.slab;
    }
  }
  void insert(std::uintptr_t pfn, Slab* slab) {
    if ((used_ + 1) * 2 > slots_.size()) rehash(slots_.empty() ? kInitialSlots : slots_.size() * 2);
    std::size_t i = home(pfn);
    while (slots_[i].slab && slots_[i].pfn != pfn) i = (i + 1) & mask_;
    if (!slots_[i].slab) ++used_;
    slots_[i] = {pfn, slab};
  }
  void erase(std::uintptr_t pfn) noexcept {
    if (slots_.empty()) return;
    std::size_t i = home(pfn);
    while (slots_[i].slab && slots_[i].pfn != pfn) i = (i + 1) & mask_;
    if (!slots_[i].slab) return;
    // Backward shift: pull later entries of the probe run into the hole when their home allows.
    std::size_t hole = i;
    for (std::size_t j = (hole + 1) & mask_; slots_[j].slab; j = (j + 1) & mask_) {
      const std::size_t h = home(slots_[j].pfn);
      if (((j - h) & mask_) >= ((j - hole) & mask_)) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole] = {};
    --used_;
  }
  std::size_t size() const noexcept { return used_; }

 private:
  struct Slot {
    std::uintptr_t pfn = 0;
    Slab* slab = nullptr;
  };
  static constexpr std::size_t kInitialSlots = 1024;
  std::size_t home(std::uintptr_t pfn) const noexcept {
    return static_cast<std::size_t>((pfn * 0x9E3779B97F4A7C15ull) >> shift_) & mask_;
  }
  void rehash(std::size_t n) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(n, Slot{});
    mask_ = n - 1;
    shift_ = 64;
    for (std::size_t k = n; k > 1; k >>= 1) --shift_;
    used_ = 0;
    for (const Slot& s : old)
      if (s.slab) insert(s.pfn, s.slab);
  }
  std::vector<Slot> slots_;
  std::size_t mask_ = 0, used_ = 0;
  int shift_ = 64;
};

}  // namespace slubsim::slub
