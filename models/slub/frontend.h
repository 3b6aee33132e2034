// The per-CPU caching layer in front of the slabs, one implementation per kernel generation:
//   cpu_partial.cpp  cpu slab + cpu partial list (<= 6.7 eager freezing; 6.8-6.17 delayed)
//   sheaves.cpp      percpu sheaves and per-node barns, on top of one of:
//                    cpu_partial.cpp (6.18/6.19, sheaves only for caches that ask; with
//                    refill-from-partial, sheaves-for-all v4 10/22, refills from slab_layer.cpp) or
//                    slab_layer.cpp (7.0, sheaves for all, no cpu slabs)
// Paths follow the kernel's own order; each front-end file opens with its states and locks.
#pragma once
#include <cstddef>
#include <cstdint>

#include "models/co.h"
#include "models/exec.h"
#include "models/slub/cache.h"
#include "models/slub/sheaf.h"

namespace slubsim::slub {

class Slub;

// What the caller's gfp allows on an allocation: GFP_KERNEL may block (a sheaf refill may
// run), GFP_NOWAIT may not (the maple tree's first try in mas_store_gfp, mas_node_count).
enum class Gfp : std::uint8_t { Kernel, Nowait };

// Free objects held above the slabs, per layer.
struct CachedCounts {
  std::int64_t cpu_freelist = 0;  // cpu slabs' lockless freelists
  std::int64_t sheaves = 0;       // main and spare sheaves
  std::int64_t barn = 0;          // full sheaves in the barns
  std::int64_t rcu = 0;           // rcu_free sheaves, filling or waiting for a grace period
  std::int64_t prefilled = 0;     // prefilled sheaves handed to callers
  std::int64_t sheaf_structs = 0; // sheaf structs alive (kmalloc'd in the kernel)
};

class Frontend {
 public:
  virtual ~Frontend() = default;
  // CPU-private fast paths: no shared state, never suspend. nullptr / false = take the slow path.
  virtual void* alloc_fast(Exec& e, KmemCache& s, int node) = 0;
  virtual bool free_fast(Exec& e, KmemCache& s, Slab* slab, void* obj) = 0;
  virtual Co<void*> alloc_slow(Exec& e, KmemCache& s, int node, Gfp gfp) = 0;
  virtual Co<void> free_slow(Exec& e, KmemCache& s, Slab* slab, void* obj) = 0;
  // kmem_cache_alloc_bulk / kmem_cache_free_bulk. alloc_bulk returns how many it got (all or 0).
  virtual Co<std::size_t> alloc_bulk(Exec& e, KmemCache& s, std::size_t n, void** p) = 0;
  virtual Co<void> free_bulk(Exec& e, KmemCache& s, std::size_t n, void** p) = 0;
  // do_slab_free of a detached list (head..tail, cnt objects of one slab): the cpu slab's
  // lockless push where the generation has one and the slab is the cpu slab, else __slab_free.
  // How a refill from the slab layer gives its surplus back to the layer whose free path runs.
  virtual Co<void> do_slab_free(Exec& e, KmemCache& s, Slab* slab, void* head, void* tail, std::uint32_t cnt) = 0;
  // flush_cpu_slab for `cpu`, run by e (kmem_cache_shrink's flush_all, CPU hot-remove).
  virtual Co<void> flush_cpu(Exec& e, KmemCache& s, int cpu) = 0;
  // kmem_cache_shrink's per-front-end part, after every CPU was flushed (barn_shrink).
  virtual Co<void> shrink(Exec&, KmemCache&) { co_return; }
  // kfree_rcu: true if the front-end took the object (the rcu_free sheaf); false sends it down
  // the classic path (one RCU callback that frees it).
  virtual Co<bool> kfree_rcu(Exec&, KmemCache&, Slab*, void*) { co_return false; }
  // kfree_rcu's CPU-private part as a plain call: Taken and Classic as kfree_rcu's true and
  // false; Slow: it would have to touch shared state (a barn), so nothing was done and the caller
  // runs kfree_rcu.
  enum class RcuFast : std::uint8_t { Taken, Classic, Slow };
  virtual RcuFast kfree_rcu_fast(Exec&, KmemCache&, Slab*, void*) { return RcuFast::Classic; }
  // An rcu_free sheaf's grace period ended (rcu_free_sheaf / rcu_free_sheaf_nobarn).
  virtual Co<void> rcu_sheaf_done(Exec&, KmemCache&, void* /*sheaf*/, bool /*nobarn*/) { co_return; }

  // Prefilled sheaves (only front-ends with sheaves).
  virtual Co<Sheaf*> prefill_sheaf(Exec&, KmemCache& s, std::uint32_t);
  virtual void* alloc_from_sheaf(Exec&, KmemCache&, Sheaf* sheaf);
  virtual Co<Sheaf*> refill_sheaf(Exec&, KmemCache& s, Sheaf*, std::uint32_t);
  virtual Co<void> return_sheaf(Exec&, KmemCache& s, Sheaf*);

  // Every object the front-end holds (validation) and how many per layer (reports).
  virtual void cached_objects(const KmemCache& s, std::vector<void*>& out) const = 0;
  virtual CachedCounts count_cached(const KmemCache& s) const = 0;
};

}  // namespace slubsim::slub
