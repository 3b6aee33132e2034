// SLUB_STATS counters with the kernel's sysfs names (/sys/kernel/slab/<cache>/<stat>), and the
// model's own slab-reuse counters beside them.
// 6.8-6.17 enum order (slub-algorithms.md §2.10); sheaf items are added by the sheaves issue.
#pragma once
#include <array>
#include <cstdint>

namespace slubsim::slub {

enum class Stat : int {
  ALLOC_FASTPATH,
  ALLOC_SLOWPATH,
  FREE_FASTPATH,
  FREE_SLOWPATH,
  FREE_FROZEN,
  FREE_ADD_PARTIAL,
  FREE_REMOVE_PARTIAL,
  ALLOC_FROM_PARTIAL,
  ALLOC_SLAB,
  ALLOC_REFILL,
  ALLOC_NODE_MISMATCH,
  FREE_SLAB,
  CPUSLAB_FLUSH,
  DEACTIVATE_FULL,
  DEACTIVATE_EMPTY,
  DEACTIVATE_TO_HEAD,
  DEACTIVATE_TO_TAIL,
  DEACTIVATE_REMOTE_FREES,
  DEACTIVATE_BYPASS,
  ORDER_FALLBACK,
  CMPXCHG_DOUBLE_CPU_FAIL,
  CMPXCHG_DOUBLE_FAIL,
  CPU_PARTIAL_ALLOC,
  CPU_PARTIAL_FREE,
  CPU_PARTIAL_NODE,
  CPU_PARTIAL_DRAIN,
  // Sheaves (6.18+). 6.18/6.19 count sheaf pops and pushes as ALLOC_PCS / FREE_PCS (sysfs
  // alloc_cpu_sheaf / free_cpu_sheaf); 7.0 counts them as ALLOC_FASTPATH / FREE_FASTPATH.
  ALLOC_PCS,
  FREE_PCS,
  FREE_RCU_SHEAF,
  FREE_RCU_SHEAF_FAIL,
  SHEAF_FLUSH,
  SHEAF_REFILL,
  SHEAF_ALLOC,
  SHEAF_FREE,
  BARN_GET,
  BARN_GET_FAIL,
  BARN_PUT,
  BARN_PUT_FAIL,
  SHEAF_PREFILL_FAST,
  SHEAF_PREFILL_SLOW,
  SHEAF_PREFILL_OVERSIZE,
  SHEAF_RETURN_FAST,
  SHEAF_RETURN_SLOW,
  // Not SLUB_STATS, but counted the same way: allocations that failed (no memory).
  ALLOC_FAILED,
  kCount
};

constexpr int kNrStats = static_cast<int>(Stat::kCount);

inline const char* stat_name(Stat s) {
  static constexpr std::array<const char*, kNrStats> names = {
      "alloc_fastpath", "alloc_slowpath", "free_fastpath", "free_slowpath", "free_frozen",
      "free_add_partial", "free_remove_partial", "alloc_from_partial", "alloc_slab",
      "alloc_refill", "alloc_node_mismatch", "free_slab", "cpuslab_flush", "deactivate_full",
      "deactivate_empty", "deactivate_to_head", "deactivate_to_tail", "deactivate_remote_frees",
      "deactivate_bypass", "order_fallback", "cmpxchg_double_cpu_fail", "cmpxchg_double_fail",
      "cpu_partial_alloc", "cpu_partial_free", "cpu_partial_node", "cpu_partial_drain",
      "alloc_cpu_sheaf", "free_cpu_sheaf", "free_rcu_sheaf", "free_rcu_sheaf_fail", "sheaf_flush",
      "sheaf_refill", "sheaf_alloc", "sheaf_free", "barn_get", "barn_get_fail", "barn_put",
      "barn_put_fail", "sheaf_prefill_fast", "sheaf_prefill_slow", "sheaf_prefill_oversize",
      "sheaf_return_fast", "sheaf_return_slow", "alloc_failed"};
  return names[static_cast<int>(s)];
}

using StatCounters = std::array<std::uint64_t, kNrStats>;

// Not SLUB_STATS (the kernel counts nothing like them): the slabs an allocator takes back from a
// partial list (its cpu partial list, a node's partial list, 7.0's refill from a node) and the
// slabs __put_partials moves off a cpu partial list, split by whether objects of theirs were
// still in use (allocated: live, in a sheaf or waiting for a grace period). A slab taken back
// while it holds objects in use gets objects of another batch beside them and cannot be emptied
// by one batch of frees: with TAKEN_FREE_OBJECTS, how mixed the slabs run and why few of them
// are freed (`run --why`; docs/design.md, its `--why` bullet).
enum class Reuse : int {
  TAKEN_IN_USE,        // taken back holding objects in use
  TAKEN_EMPTY,         // taken back with every object free
  TAKEN_FREE_OBJECTS,  // the free objects those slabs held, summed
  DRAINED_IN_USE,      // moved off a cpu partial list holding objects in use
  DRAINED_EMPTY,       // moved off a cpu partial list empty (listed or discarded)
  kCount
};

constexpr int kNrReuse = static_cast<int>(Reuse::kCount);

inline const char* reuse_name(Reuse r) {
  static constexpr std::array<const char*, kNrReuse> names = {"taken_in_use", "taken_empty", "taken_free_objects",
                                                              "drained_in_use", "drained_empty"};
  return names[static_cast<int>(r)];
}

using ReuseCounters = std::array<std::uint64_t, kNrReuse>;

}  // namespace slubsim::slub
