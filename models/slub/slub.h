// The SLUB allocator model: caches, their nodes, slabs in real memory, the page allocator, and
// one front-end (frontend.h). Entry points mirror the kernel API: kmem_cache_alloc(_node),
// kmem_cache_free, the bulk calls, flushing and kmem_cache_shrink.
//
// Substrate shared by all front-ends lives here: new_slab/discard_slab, the node partial list
// primitives, virt_to_slab, and the validation mode (every object in exactly one place).
#pragma once
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "models/co.h"
#include "models/exec.h"
#include "models/random.h"
#include "models/slub/cache.h"
#include "models/slub/frontend.h"
#include "models/slub/page_alloc.h"
#include "models/slub/params.h"

namespace slubsim::slub {

// A broken invariant or API misuse (double free, foreign pointer) found by validation.
class SlubError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where free objects of a cache are, for reports (objects per layer).
struct LayerCounts {
  std::int64_t cpu_freelist = 0;      // on cpu freelists (cpu slabs)
  std::int64_t cpu_partial = 0;       // free objects on cpu partial slabs
  std::int64_t node_partial = 0;      // free objects on node partial slabs
  std::int64_t in_use = 0;            // handed out (objects minus every free object)
  std::int64_t slabs = 0;
  std::int64_t slab_bytes = 0;
};

class Slub {
 public:
  Slub(Shared& shared, Params params);
  ~Slub();
  Slub(const Slub&) = delete;
  Slub& operator=(const Slub&) = delete;

  int nr_caches() const { return static_cast<int>(caches_.size()); }
  KmemCache& cache(int i) { return *caches_[i]; }
  const KmemCache& cache(int i) const { return *caches_[i]; }
  KmemCache* find(std::string_view name);
  const Params& params() const { return p_; }
  const Costs& costs() const { return p_.costs; }
  PageAllocator& pages() { return *pages_; }
  const PageAllocator& pages() const { return *pages_; }
  Random& rng(int cpu) { return rng_[cpu]; }

  // kmem_cache_alloc / kmem_cache_alloc_node: try alloc_fast, and co_await alloc() if it
  // returns nullptr (alloc() also works alone). nullptr from alloc() = out of memory.
  void* alloc_fast(Exec& e, KmemCache& s, int node = kNoNode);
  Co<void*> alloc(Exec& e, KmemCache& s, int node = kNoNode);
  // kmem_cache_free: try free_fast, and co_await free() if it returns false.
  bool free_fast(Exec& e, KmemCache& s, void* obj);
  Co<void> free(Exec& e, KmemCache& s, void* obj);
  Co<std::size_t> alloc_bulk(Exec& e, KmemCache& s, std::size_t n, void** p);
  Co<void> free_bulk(Exec& e, KmemCache& s, std::size_t n, void** p);
  // flush_cpu_slab(cpu) for one cache, run by e.
  Co<void> flush_cpu(Exec& e, KmemCache& s, int cpu);
  // kmem_cache_shrink: flush every CPU, then free the empty slabs on the node partial lists.
  Co<void> shrink(Exec& e, KmemCache& s);

  // --- substrate for the front-ends ---
  Slab* virt_to_slab(const void* p) const;
  // allocate_slab: pages on `node` (kNoNode = e's node), the freelist built, not on any list.
  Co<Slab*> new_slab(Exec& e, KmemCache& s, int node, bool this_node);
  // discard_slab: pages back to the page allocator.
  Co<void> discard_slab(Exec& e, KmemCache& s, Slab* slab);
  // Caller holds n.list_lock.
  Co<void> add_partial(Exec& e, KmemCacheNode& n, Slab* slab, bool tail);
  Co<void> remove_partial(Exec& e, KmemCacheNode& n, Slab* slab);
  std::uint32_t count_freelist(const KmemCache& s, void* head) const;

  // --- validation and reports ---
  bool validating() const { return p_.validate; }
  // Full walk: every object of every slab is in exactly one place; counts agree.
  void check() const;
  LayerCounts layers(const KmemCache& s) const;
  std::int64_t total_slab_bytes() const;

 private:
  void track_alloc(KmemCache& s, void* obj);
  void track_free(KmemCache& s, void* obj, Slab* slab);
  Slab* checked_slab(KmemCache& s, void* obj) const;
  void build_freelist(Exec& e, KmemCache& s, Slab* slab);
  LineId take_line(int node);

  Shared& shared_;
  Params p_;
  std::vector<std::unique_ptr<KmemCache>> caches_;
  std::unique_ptr<PageAllocator> pages_;
  std::unique_ptr<Frontend> fe_;
  std::vector<Random> rng_;
  std::unordered_map<std::uintptr_t, Slab*> page_to_slab_;  // pfn -> slab
  std::vector<std::vector<LineId>> free_lines_;             // per node, reused for new slabs
  std::vector<std::vector<Slab*>> all_slabs_;               // per cache, for validation
  std::unordered_set<const void*> in_use_;                   // validation: objects held by users
  std::uint64_t next_slab_id_ = 0;
};

std::unique_ptr<Frontend> make_cpu_partial_frontend(Slub& slub, bool eager_freeze);

}  // namespace slubsim::slub
