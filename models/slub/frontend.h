// The per-CPU caching layer in front of the slabs, one implementation per kernel generation:
//   cpu_partial.cpp  cpu slab + cpu partial list (<= 6.7 eager freezing; 6.8-6.17 delayed)
// Paths follow the kernel's own order; each front-end file opens with its states and locks.
#pragma once
#include <cstddef>

#include "models/co.h"
#include "models/exec.h"
#include "models/slub/cache.h"

namespace slubsim::slub {

class Slub;

class Frontend {
 public:
  virtual ~Frontend() = default;
  // CPU-private fast paths: no shared state, never suspend. nullptr / false = take the slow path.
  virtual void* alloc_fast(Exec& e, KmemCache& s, int node) = 0;
  virtual bool free_fast(Exec& e, KmemCache& s, Slab* slab, void* obj) = 0;
  virtual Co<void*> alloc_slow(Exec& e, KmemCache& s, int node) = 0;
  virtual Co<void> free_slow(Exec& e, KmemCache& s, Slab* slab, void* obj) = 0;
  // kmem_cache_alloc_bulk / kmem_cache_free_bulk. alloc_bulk returns how many it got (all or 0).
  virtual Co<std::size_t> alloc_bulk(Exec& e, KmemCache& s, std::size_t n, void** p) = 0;
  virtual Co<void> free_bulk(Exec& e, KmemCache& s, std::size_t n, void** p) = 0;
  // flush_cpu_slab for `cpu`, run by e (kmem_cache_shrink's flush_all, CPU hot-remove).
  virtual Co<void> flush_cpu(Exec& e, KmemCache& s, int cpu) = 0;
  // Objects this front-end holds for `cpu` (for validation and per-layer reports).
  virtual void cpu_objects(const KmemCache& s, int cpu, std::vector<void*>& out) const = 0;
};

}  // namespace slubsim::slub
