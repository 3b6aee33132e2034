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

#include "models/slub/slab_arena.h"
#include <unordered_set>
#include <vector>

#include "models/co.h"
#include "models/exec.h"
#include "models/random.h"
#include "models/rcu.h"
#include "models/slub/cache.h"
#include "models/slub/frontend.h"
#include "models/slub/page_alloc.h"
#include "models/slub/params.h"
#include "models/slub/residency.h"

namespace slubsim::slub {

// A broken invariant or API misuse (double free, foreign pointer) found by validation.
class SlubError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where free objects of a cache are, for reports (objects per layer).
struct LayerCounts {
  std::int64_t cpu_freelist = 0;      // on cpu freelists (cpu slabs)
  std::int64_t cpu_partial = 0;       // free objects on slabs off the node lists (cpu slabs' remote
                                      // frees, cpu partial slabs, slabs being refilled)
  std::int64_t node_partial = 0;      // free objects on node partial slabs
  std::int64_t sheaves = 0;           // in main and spare sheaves
  std::int64_t barn = 0;              // in the barns' full sheaves
  std::int64_t rcu = 0;               // waiting for a grace period (rcu sheaves and callbacks)
  std::int64_t prefilled = 0;         // in prefilled sheaves held by callers
  std::int64_t in_use = 0;            // held by users
  std::int64_t slabs = 0;
  std::int64_t slab_bytes = 0;
  std::int64_t sheaf_structs = 0;
  std::int64_t sheaf_bytes = 0;       // the sheaf structs themselves (kmalloc'd)
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
  const PathCosts& costs() const { return p_.costs; }
  PageAllocator& pages() { return *pages_; }
  const Softirq& softirq() const { return softirq_; }
  const PageAllocator& pages() const { return *pages_; }
  Random& rng(int cpu) { return rng_[cpu]; }
  // The CPUs that run tasks: with grace periods from ticks, only they hold a period up.
  void set_busy_cpus(const std::vector<int>& cpus) { rcu_.grace_periods().set_busy(cpus); }
  std::uint64_t grace_periods_ended() const { return rcu_.grace_periods().ended(); }
  // The workload promises that every object stays with the CPU that allocated it until that CPU
  // frees it (process mode, task-private pools, no hand-offs). Then a new slab of a cache
  // without sheaves can be reached by no other CPU until it goes on a node's partial list (or
  // is discarded): its line is bound to its CPU until then (Shared::set_line_reach), and the
  // driver grants its accesses out of global order, as for Reach::OneCpu. The driver checks the
  // promise: another CPU touching a bound line is an error.
  void set_cpu_local_objects(bool on) { cpu_local_objects_ = on; }

  // kmem_cache_alloc / kmem_cache_alloc_node: try alloc_fast, and co_await alloc() if it
  // returns nullptr (alloc() also works alone). nullptr from alloc() = out of memory.
  void* alloc_fast(Exec& e, KmemCache& s, int node = kNoNode);
  Co<void*> alloc(Exec& e, KmemCache& s, int node = kNoNode, Gfp gfp = Gfp::Kernel);
  // kmem_cache_free: try free_fast, and co_await free() if it returns false.
  bool free_fast(Exec& e, KmemCache& s, void* obj);
  Co<void> free(Exec& e, KmemCache& s, void* obj);
  Co<std::size_t> alloc_bulk(Exec& e, KmemCache& s, std::size_t n, void** p);
  Co<void> free_bulk(Exec& e, KmemCache& s, std::size_t n, void** p);
  // flush_cpu_slab(cpu) for one cache, run by e.
  Co<void> flush_cpu(Exec& e, KmemCache& s, int cpu);
  // kmem_cache_shrink: flush every CPU, then free the empty slabs on the node partial lists.
  Co<void> shrink(Exec& e, KmemCache& s);
  // kfree_rcu (kvfree_call_rcu): the object is freed after a grace period.
  Co<void> kfree_rcu(Exec& e, KmemCache& s, void* obj);
  // The same as a plain call where it needs no shared state; false: nothing was done, co_await
  // kfree_rcu.
  bool kfree_rcu_fast(Exec& e, KmemCache& s, void* obj);
  // call_rcu with a callback that does kmem_cache_free (maple tree's mt_free_rcu up to
  // 551a6e757a95): one callback per object, whatever the cache's front-end.
  void call_rcu_free(Exec& e, KmemCache& s, void* obj);
  // Run this CPU's RCU callbacks whose grace period has ended by e.now().
  Co<void> rcu_tick(Exec& e);
  // False when rcu_tick(e) would do nothing at all (no tick since the last point): the caller
  // may skip it, and the coroutine call with it.
  bool rcu_tick_due(const Exec& e) const { return !softirq_.quiet(e.cpu(), e.now()); }
  // rcu_barrier: run every pending callback now, on the CPU that queued it (tests, shutdown).
  Co<void> rcu_barrier(Exec& e);
  // Prefilled sheaves (maple tree): kmem_cache_prefill_sheaf / _alloc_from_sheaf /
  // _refill_sheaf / _return_sheaf. Only for caches with sheaves.
  Co<Sheaf*> prefill_sheaf(Exec& e, KmemCache& s, std::uint32_t n);
  void* alloc_from_sheaf(Exec& e, KmemCache& s, Sheaf* sheaf);
  Co<Sheaf*> refill_sheaf(Exec& e, KmemCache& s, Sheaf* sheaf, std::uint32_t n);
  Co<void> return_sheaf(Exec& e, KmemCache& s, Sheaf* sheaf);
  void call_rcu(Exec& e, RcuCallback cb);
  // The next callback of `cpu`, off its queue.
  RcuCallback pop_callback(int cpu);
  Co<void> run_callback(Exec& e, const RcuCallback& cb);
  const RcuQueue& rcu() const { return rcu_; }
  // The price of one line last written a grace period ago, homed on `node`, read by e's CPU.
  Time aged_line(const Exec& e, int node) const;
  // The price of loading n free pointers one after another (each load's address comes from the
  // one before: a freelist walk), written last by CPU `writer` in a slab homed on `node`
  // (params.freelist_lines_from_writer; slub-algorithms.md §6).
  Time freelist_chase(const Exec& e, int writer, int node, std::uint32_t n) const;

  // --- substrate for the front-ends ---
  Slab* virt_to_slab(const void* p) const;
  // allocate_slab: pages on `node` (kNoNode = e's node), not on any list, and unless
  // build_freelist is false (skip-freelist), its freelist built.
  Co<Slab*> new_slab(Exec& e, KmemCache& s, int node, bool this_node, bool build_freelist = true);
  // The objects of a new slab in freelist order (address order, or shuffled).
  std::vector<void*> object_order(Exec& e, KmemCache& s, Slab* slab);
  // Link objs[0..n) as the slab's freelist (n may be 0).
  void link_freelist(Exec& e, KmemCache& s, Slab* slab, void* const* objs, std::size_t n);
  // discard_slab: pages back to the page allocator.
  Co<void> discard_slab(Exec& e, KmemCache& s, Slab* slab);
  // Caller holds n.list_lock.
  Co<void> add_partial(Exec& e, KmemCacheNode& n, Slab* slab, bool tail);
  Co<void> remove_partial(Exec& e, KmemCacheNode& n, Slab* slab);
  std::uint32_t count_freelist(const KmemCache& s, void* head) const;
  // build_detached_freelist (mm/slub.c since 5.19, slub-algorithms.md §1.8): group the objects
  // of p[size-1]'s slab into one freelist, scanning backwards; each hit is swapped to the end of
  // the array, and the scan stops at the third look-ahead miss in total. Returns how many
  // entries remain to process, at the front of p.
  struct DetachedFreelist {
    Slab* slab = nullptr;
    void* head = nullptr;
    void* tail = nullptr;
    std::uint32_t cnt = 0;
  };
  std::size_t build_detached_freelist(Exec& e, KmemCache& s, std::vector<void*>& p,
                                      std::size_t size, DetachedFreelist& df) const;

  // --- validation and reports ---
  bool validating() const { return p_.validate; }
  // Full walk: every object of every slab is in exactly one place; counts agree.
  void check() const;
  LayerCounts layers(const KmemCache& s) const;
  // Cache lines for allocator structures homed on `node` (slabs, sheaf structs), recycled.
  LineId take_line(int node);
  void give_back_line(int node, LineId l) { free_lines_[node].push_back(l); }
  std::int64_t total_slab_bytes() const;

 private:
  void memcg_charge(Exec& e, const KmemCache& s, std::size_t n);
  void memcg_uncharge(Exec& e, const KmemCache& s, std::size_t n);
  void track_alloc(KmemCache& s, void* obj);
  void track_free(KmemCache& s, void* obj, Slab* slab);
  Slab* checked_slab(KmemCache& s, void* obj) const;
  void build_freelist(Exec& e, KmemCache& s, Slab* slab);

  Shared& shared_;
  Params p_;
  std::vector<std::unique_ptr<KmemCache>> caches_;
  std::unique_ptr<PageAllocator> pages_;
  std::unique_ptr<Frontend> fe_;
  std::vector<Random> rng_;
  std::vector<std::pair<Time, Time>> qs_last_;  // per CPU: last tick, its qs_blocked() then
  SlabArena arena_;  // slab pages and page -> slab
  std::vector<std::vector<LineId>> free_lines_;             // per node, reused for new slabs
  bool cpu_local_objects_ = false;
  std::vector<std::vector<Slab*>> all_slabs_;               // per cache, for validation
  std::unordered_set<const void*> in_use_;                   // validation: objects held by users
  std::unordered_set<const void*> rcu_objects_;              // kfree_rcu'd, callback pending
  RcuQueue rcu_;
  LineResidency residency_;  // lines a grace period old: in the LLC or in memory
  Softirq softirq_;
  Co<void> rcu_round(Exec& e);
  Slab* callback_slab(Exec& e, KmemCache& s, const RcuCallback& cb);
  // Per CPU and cache: 1 + the id of the slab the CPU's last callback in this softirq turn freed
  // into (0: none yet), for Params::callback_slab_line_cached.
  std::vector<std::uint64_t> callback_slab_seen_;
  std::uint64_t next_slab_id_ = 0;
};

std::unique_ptr<Frontend> make_cpu_partial_frontend(Slub& slub, bool eager_freeze);
// The 7.0 slab layer. surplus: where a refill's surplus and a failed bulk allocation's objects
// go back (do_slab_free); nullptr = its own __slab_free (7.0). any_node: refill_from_node on the
// other nodes before a new slab.
std::unique_ptr<Frontend> make_slab_layer(Slub& slub, bool remote_trylock, bool skip_freelist, bool any_node,
                                          Frontend* surplus = nullptr);
// refill: where sheaf refills come from (nullptr = below's __kmem_cache_alloc_bulk).
std::unique_ptr<Frontend> make_sheaves_frontend(Slub& slub, std::unique_ptr<Frontend> below, bool v7,
                                                std::unique_ptr<Frontend> refill = nullptr);

}  // namespace slubsim::slub
