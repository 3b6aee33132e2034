// The page allocator, per NUMA node, as far as slabs see it (slub-algorithms.md §1.5):
// orders <= 3 come from and go back to per-CPU page lists (pcp) without a lock; a pcp list is
// refilled from, and drained to, the node's buddy lists in batches under zone->lock. Memory per
// node is finite: an exhausted node makes allocation fall back to the next node by distance, or
// fail for __GFP_THISNODE requests. Pages are counted, not laid out (no buddy splitting).
#pragma once
#include <cstdint>
#include <vector>

#include "models/co.h"
#include "models/exec.h"
#include "models/slub/params.h"

namespace slubsim::slub {

constexpr int kPcpMaxOrder = 3;  // PAGE_ALLOC_COSTLY_ORDER

class PageAllocator {
 public:
  PageAllocator(Shared& shared, const Numa& numa, const PageAllocParams& p, const PathCosts& c);

  // 2^order pages, preferring `node`; falls back by distance unless this_node.
  // Returns the node the pages came from, or -1 if none had them. *warm (if given) says whether
  // they came off the hot end of this CPU's pcp list: freed by this CPU so recently that their
  // lines are still in its caches.
  Co<int> alloc_pages(Exec& e, int order, int node, bool this_node, bool* warm = nullptr);
  Co<void> free_pages(Exec& e, int order, int node);

  std::int64_t free_pages(int node) const { return zones_[node].free; }  // in buddy lists
  std::int64_t pcp_pages(int node) const;                                 // on pcp lists
  std::int64_t total_pages(int node) const { return zones_[node].total; }
  std::uint64_t failures() const { return failures_; }
  // Pages handed out and taken back, all orders and nodes (/proc/vmstat pgalloc_*, pgfree).
  std::uint64_t pgalloc() const { return pgalloc_; }
  std::uint64_t pgfree() const { return pgfree_; }

 private:
  struct Zone {
    SpinLockId lock;
    std::int64_t total = 0;
    std::int64_t free = 0;
  };
  // Blocks of each order on cpu's pcp list for node.
  std::int64_t& pcp(int cpu, int node, int order) {
    return pcp_[(static_cast<std::size_t>(cpu) * zones_.size() + node) * (kPcpMaxOrder + 1) + order];
  }
  // Of those, how many sit at the list's hot end (freed last, allocated first; LIFO as
  // free_unref_page_commit adds at the head and rmqueue_pcplist takes from it).
  std::int64_t& hot(int cpu, int node, int order) {
    return hot_[(static_cast<std::size_t>(cpu) * zones_.size() + node) * (kPcpMaxOrder + 1) + order];
  }
  std::int64_t pcp_total_pages(int cpu, int node);
  Co<bool> refill(Exec& e, int node, int order);
  Co<void> drain(Exec& e, int node);

  const Numa& numa_;
  PageAllocParams p_;
  PathCosts c_;
  std::vector<Zone> zones_;
  std::vector<std::int64_t> pcp_;
  std::vector<std::int64_t> hot_;
  std::uint64_t failures_ = 0;
  std::uint64_t pgalloc_ = 0;
  std::uint64_t pgfree_ = 0;
};

}  // namespace slubsim::slub
