// struct slab: a real block of 2^order pages holding `objects` objects, with the free pointer of
// each free object stored inside the object (at KmemCache::geo.offset).
//
// States (6.8-6.19, delayed freezing; slub-algorithms.md §1.1):
//   cpu slab        frozen                          owned by one CPU, objects on its cpu freelist
//   cpu partial     !frozen && !on_partial          on a CPU's partial list (slab->next chain)
//   node partial    !frozen && on_partial           on kmem_cache_node.partial, under list_lock
//   full            !frozen && !on_partial && !freelist   on no list
// <= 6.7 (eager freezing): cpu-partial slabs are frozen too.
#pragma once
#include <cstdint>
#include <cstring>

#include "models/exec.h"

namespace slubsim::slub {

struct KmemCache;

struct Slab {
  KmemCache* cache = nullptr;
  std::uint8_t* base = nullptr;
  int node = 0;
  int order = 0;
  std::uint32_t objects = 0;
  std::uint32_t inuse = 0;  // objects not on slab->freelist (users, cpu freelists)
  void* freelist = nullptr;
  bool frozen = false;
  bool on_partial = false;  // PG_workingset / SL_partial
  Slab* prev = nullptr;     // node partial list
  Slab* next_node = nullptr;
  Slab* next = nullptr;     // cpu partial list
  std::uint32_t slabs = 0;  // cpu partial list length, valid in the head
  std::uint64_t seq = 0;    // bumped by every change of (freelist, counters): cmpxchg failures
  LineId line;              // the cache line holding freelist and counters
  std::uint64_t id = 0;     // creation number
  std::size_t slot = 0;     // index in the allocator's list of live slabs of its cache

  bool contains(const void* p) const {
    auto* b = static_cast<const std::uint8_t*>(p);
    return b >= base && b < base + (std::size_t{4096} << order);
  }
};

inline void* get_freepointer(std::uint32_t offset, void* obj) {
  void* next;
  std::memcpy(&next, static_cast<std::uint8_t*>(obj) + offset, sizeof next);
  return next;
}

// Host-side only: ask the host CPU to fetch the line holding obj's free pointer, so that the next
// get_freepointer of it does not stall the simulator (the kernel's prefetch_freepointer does the
// same for the simulated machine; this one changes no simulated time).
inline void prefetch_freepointer(std::uint32_t offset, const void* obj) {
  if (obj) __builtin_prefetch(static_cast<const std::uint8_t*>(obj) + offset);
}

inline void set_freepointer(std::uint32_t offset, void* obj, void* next) {
  std::memcpy(static_cast<std::uint8_t*>(obj) + offset, &next, sizeof next);
}

}  // namespace slubsim::slub
