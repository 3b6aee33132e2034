// struct slab: 2^order simulated pages holding `objects` objects, and the free pointer of each
// free object. The kernel keeps that pointer inside the object (at KmemCache::geo.offset), and
// it is the only part of an object the model ever reads or writes; so a slab's host memory is
// one word per object, the object's free-pointer word, and an object's address is the address
// of that word (base + index * kHostObjectBytes). The simulated layout (object size, the
// pointer's offset, which lines a walk touches) lives in KmemCache::geo and prices the paths;
// the host layout only keeps the host's caches warm, and changes no result.
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

// Host bytes per object: its free-pointer word.
constexpr std::size_t kHostObjectBytes = sizeof(void*);

struct Slab {
  KmemCache* cache = nullptr;
  std::uint8_t* base = nullptr;
  int node = 0;
  int order = 0;       // simulated pages: 2^order
  int host_order = 0;  // the host block in the slab arena (models/slub/slab_arena.h)
  bool warm = false;   // its pages came off the hot end of this CPU's pcp list (PageAllocator)
  std::uint32_t objects = 0;
  std::uint32_t inuse = 0;  // objects not on slab->freelist (users, cpu freelists)
  void* freelist = nullptr;
  bool frozen = false;
  bool on_partial = false;  // PG_workingset / SL_partial
  Slab* prev = nullptr;     // node partial list
  Slab* next_node = nullptr;
  Slab* next = nullptr;     // cpu partial list
  std::uint32_t slabs = 0;  // cpu partial list length, valid in the head
  std::uint32_t pobjects = 0;  // <= 5.15: free objects on the cpu partial list, valid in the head
  std::uint64_t seq = 0;    // bumped by every change of (freelist, counters): cmpxchg failures
  int writer = -1;          // the CPU that last linked objects onto freelist (their free pointers)
  LineId line;              // the cache line holding freelist and counters
  std::uint64_t id = 0;     // creation number
  std::size_t slot = 0;     // index in the allocator's list of live slabs of its cache

  void* object(std::uint32_t i) const { return base + static_cast<std::size_t>(i) * kHostObjectBytes; }
  // The byte offset of p in the host block; an object's index is offset / kHostObjectBytes.
  std::size_t host_offset(const void* p) const {
    return static_cast<std::size_t>(static_cast<const std::uint8_t*>(p) - base);
  }
  bool contains(const void* p) const {
    auto* b = static_cast<const std::uint8_t*>(p);
    return b >= base && b < base + static_cast<std::size_t>(objects) * kHostObjectBytes;
  }
};

inline void* get_freepointer(void* obj) {
  void* next;
  std::memcpy(&next, obj, sizeof next);
  return next;
}

// Host-side only: ask the host CPU to fetch the line holding obj's free pointer, so that the next
// get_freepointer of it does not stall the simulator (the kernel's prefetch_freepointer does the
// same for the simulated machine; this one changes no simulated time).
inline void prefetch_freepointer(const void* obj) {
  if (obj) __builtin_prefetch(obj);
}

inline void set_freepointer(void* obj, void* next) { std::memcpy(obj, &next, sizeof next); }

}  // namespace slubsim::slub
