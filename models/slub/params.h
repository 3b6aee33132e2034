// What the allocator model is told at construction: the caches, the kernel's behaviour
// switches, the cost constants and the NUMA layout. Plain data; sim/ fills it from configs/.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/rcu.h"
#include "models/softirq.h"
#include "models/time.h"

namespace slubsim::slub {

constexpr int kPageShift = 12;
constexpr std::size_t kPageSize = std::size_t{1} << kPageShift;
constexpr int kNoNode = -1;  // NUMA_NO_NODE
constexpr int kMaxPageOrder = 10;  // MAX_PAGE_ORDER (x86-64, arm64 with 4 KiB pages): the largest buddy block

// A cache as kmem_cache_create is asked for it (configs/caches.json).
struct CacheSpec {
  std::string name;
  std::uint32_t object_size = 0;
  std::uint32_t align = 0;        // explicit alignment, 0 = none
  bool hwcache_align = false;     // SLAB_HWCACHE_ALIGN
  bool typesafe_by_rcu = false;   // SLAB_TYPESAFE_BY_RCU: empty slabs are freed after a grace period
  bool freeptr_outside = false;   // free pointer stored after the object (RCU/ctor without freeptr_offset)
  bool accounted = false;         // SLAB_ACCOUNT, and the users are in a memcg that charges it
  std::uint32_t sheaf_capacity = 0;  // explicit args.sheaf_capacity (6.18+; a minimum in 7.0)
  // Per-cache knobs (sysfs cpu_partial, min_partial, order; the runtime-tuning RFC's
  // max_full_sheaves and max_empty_sheaves), unset = the kernel's own choice.
  std::optional<std::uint32_t> barn_max_full, barn_max_empty;
  std::optional<std::uint32_t> cpu_partial;
  std::optional<std::uint32_t> min_partial;
  std::optional<int> order;
};

// The per-CPU layer above the slabs: cpu slab + cpu partial with eager freezing (6.7) or delayed
// (6.8-6.17); sheaves stacked on cpu slabs for some caches (6.18, 6.19); sheaves for all (7.0).
enum class FrontendKind { CpuPartialFrozen, CpuPartial, SheavesOnCpuPartial, Sheaves };

struct Features {
  FrontendKind frontend = FrontendKind::CpuPartial;
  bool freelist_random = false;       // CONFIG_SLAB_FREELIST_RANDOM
  bool cpu_partial = true;            // CONFIG_SLUB_CPU_PARTIAL
  int slub_min_objects = 0;           // boot parameter, 0 = from the CPU count
  int slub_max_order = 3;             // PAGE_ALLOC_COSTLY_ORDER
  int remote_node_defrag_ratio = 1000;
  // The cpu partial list's limit: <= 5.15 counted free objects (page->pobjects against
  // s->cpu_partial), 5.16 on slabs (b47291ef02b0: cpu_partial_slabs from cpu_partial).
  bool cpu_partial_objects = false;
  // s->cpu_partial by object size (set_cpu_partial): >= PAGE_SIZE, >= 1024, >= 256, smaller.
  // 6 / 24 / 52 / 120 since 23e98ad1ce89 (5.16); 2 / 6 / 13 / 30 before.
  std::array<std::uint32_t, 4> cpu_partial_targets{6, 24, 52, 120};
  // Sheaves (6.18+).
  std::uint32_t barn_max_full = 10;   // MAX_FULL_SHEAVES
  std::uint32_t barn_max_empty = 10;  // MAX_EMPTY_SHEAVES
  std::uint32_t pcs_batch_max = 32;   // PCS_BATCH_MAX: main-sheaf flush batch
  // Patches, as the kernel community names them.
  bool spare_sheaf = false;           // keep an empty main as the spare (Jan 2026)
  bool remote_refill_trylock = false; // trylock remote list_locks in __refill_objects_any
  bool skip_freelist = false;         // no freelist for whole-slab bulk refill (Mar 2026)
  // A non-blocking allocation (Gfp::Nowait) may refill a sheaf, not only take a barn's full
  // one (fb1091febd66 "mm/slab: allow sheaf refill if blocking is not allowed", 7.0-rc3).
  bool nowait_refill = false;
  // Sheaves over cpu partial (6.18/6.19) refilled from the node partial list, not through the
  // cpu slab ("slab: add optimized sheaf refill from partial list", sheaves-for-all v4 10/22).
  bool refill_from_partial = false;
  // A refill short of objects on the local node tries the other nodes' partial lists before a
  // new slab (46dea1744498 "slab: refill sheaves from all nodes", 7.0).
  bool refill_any_node = true;
};

// CPU time of allocator work that touches no shared state (global cost constants,
// VALIDATION.md class 5). Shared accesses are priced by the driver, not here.
struct PathCosts {
  Time alloc_fastpath = 0;        // cpu freelist pop
  Time free_fastpath = 0;         // cpu freelist push
  Time slowpath_entry = 0;        // ___slab_alloc entry: local_lock_irqsave and checks
  Time free_slowpath_entry = 0;   // __slab_free entry
  Time freelist_walk_per_object = 0;  // one dependent load per object (deactivate, counting)
  Time freelist_build_per_object = 0; // one store per object when a new slab is set up
  Time new_slab_cold_line = 0;    // first write to a cache line of a slab fresh from the page allocator
  Time list_op = 0;               // add_partial / remove_partial pointer work under list_lock
  Time new_slab = 0;              // allocate_slab bookkeeping besides the freelist build
  Time discard_slab = 0;          // free_slab bookkeeping
  Time pcp_alloc = 0;             // page from the per-CPU page list
  Time pcp_free = 0;              // page to the per-CPU page list
  Time zone_lock_per_block = 0;   // moving one block between buddy lists and pcp under zone->lock
  Time sheaf_alloc = 0;           // pop from a percpu sheaf (local trylock, no atomics)
  Time sheaf_free = 0;            // push to a percpu sheaf
  Time sheaf_array_store_per_object = 0;  // copying object pointers into a sheaf
  Time sheaf_struct_alloc = 0;    // kzalloc/kfree of a sheaf struct
  Time barn_op = 0;               // list work inside barn->lock
  Time memcg_charge = 0;          // memcg_slab_post_alloc_hook per object of an accounted cache
  Time memcg_uncharge = 0;        // memcg_slab_free_hook per object
  Time call_rcu = 0;              // queueing an RCU callback
  Time rcu_callback = 0;          // running one RCU callback (softirq entry share, bookkeeping)
  // Cache lines a per-object RCU callback reads one after the other (rcu_do_batch follows the
  // rcu_head inside the object; kmem_cache_free looks up its struct slab), written a grace
  // period before: priced as models/slub/residency.h says (the LLC, or memory).
  int rcu_callback_cold_lines = 0;
  // How many of the independent free-pointer stores to such lines a sheaf flush keeps in
  // flight at once (build_detached_freelist): each costs a line's price divided by this.
  int aged_store_overlap = 1;
};

struct PageAllocParams {
  int pcp_batch = 63;   // pages moved per refill/drain
  int pcp_high = 378;   // pages a pcp list may hold before it drains
  // Pages at the hot end of a CPU's pcp list whose lines are still in that CPU's caches: the
  // most recently freed ones (pcp lists are LIFO), up to about its L2. 0: every page is cold.
  int pcp_warm_pages = 0;
};

struct Numa {
  int nr_cpus = 1;
  int nr_nodes = 1;
  std::vector<int> cpu_node;
  std::vector<std::int64_t> node_pages;       // memory per node, in pages
  std::vector<std::vector<int>> fallback;     // per node: nodes in distance order, itself first
  // Latency of a load that misses every cache: [node of the CPU][node of the memory]
  // (the topology's dram_local / dram_remote). Empty: free (tests, native drivers).
  std::vector<std::vector<Time>> memory_latency;
  // Last-level cache domains (models/slub/residency.h): each CPU's, one domain's size in bytes
  // (0: lines a grace period old always come from memory), and a line found there.
  std::vector<int> cpu_llc;
  int nr_llcs = 1;
  std::int64_t llc_bytes = 0;
  Time llc_hit = 0;
};

struct Params {
  std::vector<CacheSpec> caches;
  Features features;
  PathCosts costs;
  PageAllocParams page_alloc;
  Numa numa;
  bool validate = false;
  std::uint64_t seed = 1;
  Time rcu_grace_period = 0;
  bool rcu_grace_period_from_ticks = false;  // models/rcu.h TickGracePeriods instead of a fixed period
  Time rcu_first_fqs = 0;  // from ticks: the grace-period kthread's first forcing scan after a start
  GracePeriodForcing rcu_forcing;  // from ticks: when holdout CPUs are forced (models/rcu.h)
  // From ticks, costs.rcu.quiescent_states "user" (non-preemptible RCU, no preempt count): a
  // busy CPU's tick reports only when it lands in user space, with this chance, and a context
  // switch (to ksoftirqd) reports; negative: "preemptible", a tick reports outside the code
  // where it cannot (Exec::qs_blocked).
  double rcu_tick_user_share = -1.0;
  // costs.rcu.acceleration "report": callbacks get their grace period when their CPU reports, at
  // its rcu_report_ticks-th tick of a fixed period (models/rcu.h); 0 = as they are queued.
  int rcu_report_ticks = 0;
  // costs.rcu.aged_lines: "llc" = models/slub/residency.h with the topology's LLC; "memory"
  // (false) = DRAM. A flush's stores overlap by costs.slub.aged_store_overlap in both.
  bool aged_lines_in_llc = false;
  // costs.rcu.callback_slab_line "cached": a callback whose object lies in the slab the CPU's
  // previous callback of the same cache freed into, within one softirq turn, finds that struct
  // slab in its cache and pays one cold line fewer; "every" (false): every callback pays it.
  bool callback_slab_line_cached = false;
  // costs.rcu.callback_line_fetch "together": a per-object callback's cold lines (the rcu_head,
  // the struct slab, the free pointer's line) are fetched side by side, one line's price for
  // all of them, two for an object past its slab's first page (virt_to_slab's compound_head;
  // Slub::callback_slab); "serial" (false): each is a full access in turn.
  bool callback_lines_together = false;
  // costs.slub.freelist_lines: "writer" = a free pointer another CPU wrote last costs a walk the
  // transfer from that CPU (Slub::freelist_chase); "local" (false) = freelist_walk_per_object.
  bool freelist_lines_from_writer = false;
  RcuBatchLimits rcu_batch;  // default: every ready callback at once
  SoftirqLimits softirq;     // default: one round at every softirq point the workload offers
};

}  // namespace slubsim::slub
