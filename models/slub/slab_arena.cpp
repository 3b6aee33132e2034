#include "models/slub/slab_arena.h"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include "models/slub/slub.h"

namespace slubsim::slub {

namespace {

// Host-side sizes, not model parameters: the most address space asked for (halved until the
// host grants it), and how much of it is made usable at a time.
constexpr std::size_t kMaxReserveBytes = std::size_t{16} << 30;
constexpr std::size_t kMinReserveBytes = std::size_t{1} << 28;
constexpr std::size_t kCommitGranules = std::size_t{1} << 18;  // 16 MiB of slab memory

void* reserve(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

std::size_t round_up(std::size_t x, std::size_t to) { return (x + to - 1) / to * to; }

// mprotect's unit.
std::size_t host_page() {
  static const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

}  // namespace

SlabArena::SlabArena() {
  for (std::size_t bytes = kMaxReserveBytes; bytes >= kMinReserveBytes; bytes /= 2) {
    const std::size_t granules = bytes >> kGranuleShift;
    void* mem = reserve(bytes);
    if (!mem) continue;
    void* map = reserve(round_up(granules * sizeof(Slab*), host_page()));
    if (!map) {
      munmap(mem, bytes);
      continue;
    }
    base_ = reinterpret_cast<std::uintptr_t>(mem);
    memmap_ = static_cast<Slab**>(map);
    reserved_granules_ = granules;
    return;
  }
  throw SlubError(fmt::format("slab arena: the host refused to reserve even {} MiB of address space for slabs",
                              kMinReserveBytes >> 20));
}

SlabArena::~SlabArena() {
  munmap(reinterpret_cast<void*>(base_), reserved_granules_ << kGranuleShift);
  munmap(memmap_, round_up(reserved_granules_ * sizeof(Slab*), host_page()));
}

void SlabArena::commit(std::size_t granules) {
  if (granules <= granules_committed_) return;
  if (granules > reserved_granules_)
    throw SlubError(fmt::format("slab arena: the run needs more than the {} MiB of host memory reserved for slabs",
                                reserved_granules_ >> (20 - kGranuleShift)));
  const std::size_t to = std::min(round_up(granules, kCommitGranules), reserved_granules_);
  auto* mem = reinterpret_cast<std::uint8_t*>(base_);
  auto* map = reinterpret_cast<std::uint8_t*>(memmap_);
  const std::size_t map_from = granules_committed_ * sizeof(Slab*) / host_page() * host_page();
  const std::size_t map_to = round_up(to * sizeof(Slab*), host_page());
  if (mprotect(mem + (granules_committed_ << kGranuleShift), (to - granules_committed_) << kGranuleShift,
               PROT_READ | PROT_WRITE) != 0 ||
      mprotect(map + map_from, map_to - map_from, PROT_READ | PROT_WRITE) != 0)
    throw SlubError(fmt::format("slab arena: the host refused {} MiB more memory for slabs",
                                (to - granules_committed_) >> (20 - kGranuleShift)));
  granules_committed_ = to;
}

void SlabArena::free_range(std::size_t first, std::size_t last) {
  // Split [first, last) into the largest aligned blocks it holds, each onto its order's list.
  while (first < last) {
    int order = 0;
    while (first % (std::size_t{2} << order) == 0 && first + (std::size_t{2} << order) <= last) ++order;
    free(reinterpret_cast<std::uint8_t*>(base_) + (first << kGranuleShift), order);
    first += std::size_t{1} << order;
  }
}

std::uint8_t* SlabArena::alloc(int order) {
  const auto o = static_cast<std::size_t>(order);
  if (o < free_.size() && !free_[o].empty()) {
    const std::size_t first = free_[o].back();
    free_[o].pop_back();
    return reinterpret_cast<std::uint8_t*>(base_) + (first << kGranuleShift);
  }
  const std::size_t n = std::size_t{1} << order;
  const std::size_t first = round_up(granules_used_, n);
  commit(first + n);
  const std::size_t gap_from = granules_used_;
  granules_used_ = first + n;
  free_range(gap_from, first);
  return reinterpret_cast<std::uint8_t*>(base_) + (first << kGranuleShift);
}

void SlabArena::free(std::uint8_t* base, int order) {
  const auto o = static_cast<std::size_t>(order);
  if (free_.size() <= o) free_.resize(o + 1);
  free_[o].push_back((reinterpret_cast<std::uintptr_t>(base) - base_) >> kGranuleShift);
}

void SlabArena::set(const std::uint8_t* base, int order, Slab* slab) noexcept {
  const std::size_t first = (reinterpret_cast<std::uintptr_t>(base) - base_) >> kGranuleShift;
  for (std::size_t g = 0; g < (std::size_t{1} << order); ++g) memmap_[first + g] = slab;
}

}  // namespace slubsim::slub
