// struct kmem_cache and what hangs off it: the per-node state (kmem_cache_node) and, for the
// cpu-partial front-ends, the per-CPU state (kmem_cache_cpu).
//
// Lock order (mm/slub.c, 6.8+): cpu_slab->lock (a local lock, free in this model: one task per
// CPU) -> node->list_lock -> slab freelist cmpxchg. kmem_cache_node puts list_lock, nr_partial
// and the partial list head on one cache line, with the CONFIG_SLUB_DEBUG slab counters next to
// them; the model prices all of them as that one line (Shared::lock_line of list_lock).
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "models/exec.h"
#include "models/random.h"
#include "models/slub/geometry.h"
#include "models/slub/params.h"
#include "models/slub/sheaf.h"
#include "models/slub/slab.h"
#include "models/slub/stats.h"

namespace slubsim::slub {

struct KmemCacheNode {
  SpinLockId list_lock;
  LineId line;  // list_lock's line: nr_partial, the list head, nr_slabs, total_objects
  Slab* partial_head = nullptr;
  Slab* partial_tail = nullptr;
  std::uint32_t nr_partial = 0;
  std::int64_t nr_slabs = 0;
  std::int64_t total_objects = 0;
  Barn barn;  // used when the cache has sheaves
};

struct KmemCacheCpu {
  void* freelist = nullptr;  // lockless freelist of the cpu slab
  Slab* slab = nullptr;      // the active (frozen) cpu slab
  Slab* partial = nullptr;   // cpu partial list, linked by Slab::next
  std::uint64_t tid = 0;
  // Who wrote the free pointers on freelist: the top local_top objects this CPU (its frees to
  // the cpu slab), the rest `writer` (the slab's writer when its freelist was taken).
  std::uint32_t local_top = 0;
  int writer = -1;
};

struct KmemCache {
  int index = 0;
  CacheSpec spec;
  Geometry geo;
  std::vector<KmemCacheNode> node;
  std::vector<KmemCacheCpu> cpu;
  std::uint32_t sheaf_capacity = 0;  // 0: no sheaves
  // The barn's limits on this cache's sheaves per node (MAX_FULL_SHEAVES / MAX_EMPTY_SHEAVES,
  // or the runtime-tuning RFC's per-cache max_full_sheaves / max_empty_sheaves).
  std::uint32_t barn_max_full = 0, barn_max_empty = 0;
  // The most full / empty sheaves a barn held when one of these limits was checked, over the
  // whole run (-1: never checked). A limit above it was never reached, so any other limit above
  // it runs the same simulation (slubsim advise leaves such values out).
  int barn_full_seen = -1, barn_empty_seen = -1;
  void saw_full(std::size_t n) { barn_full_seen = std::max(barn_full_seen, static_cast<int>(n)); }
  void saw_empty(std::size_t n) { barn_empty_seen = std::max(barn_empty_seen, static_cast<int>(n)); }
  std::vector<PercpuSheaves> pcs;    // per CPU, when sheaf_capacity > 0
  std::vector<std::uint32_t> random_seq;  // CONFIG_SLAB_FREELIST_RANDOM object order
  StatCounters stats{};
  ReuseCounters reuse{};
  std::int64_t slabs_allocated = 0;  // slabs alive now, all nodes
  std::int64_t rcu_objects = 0;      // objects in FreeObject callbacks still queued, all CPUs

  const std::string& name() const { return spec.name; }
  void stat(Stat s, std::uint64_t n = 1) { stats[static_cast<int>(s)] += n; }
  // An allocator takes a slab back from a partial list; `inuse` before it takes the freelist.
  void taken_back(std::uint32_t inuse, std::uint32_t objects) {
    ++reuse[static_cast<int>(inuse ? Reuse::TAKEN_IN_USE : Reuse::TAKEN_EMPTY)];
    reuse[static_cast<int>(Reuse::TAKEN_FREE_OBJECTS)] += objects - inuse;
  }
  // __put_partials moves a slab off a cpu partial list.
  void drained(std::uint32_t inuse) { ++reuse[static_cast<int>(inuse ? Reuse::DRAINED_IN_USE : Reuse::DRAINED_EMPTY)]; }
  std::size_t slab_bytes() const { return geo.slab_bytes(); }
};

}  // namespace slubsim::slub
