#include "models/slub/page_alloc.h"

#include <algorithm>
#include <fmt/format.h>

namespace slubsim::slub {

PageAllocator::PageAllocator(Shared& shared, const Numa& numa, const PageAllocParams& p,
                             const PathCosts& c)
    : numa_(numa), p_(p), c_(c) {
  for (int n = 0; n < numa.nr_nodes; ++n) {
    Zone z;
    z.lock = shared.new_spinlock("zone_lock", fmt::format("node{}", n), n);
    z.total = z.free = numa.node_pages[n];
    zones_.push_back(z);
  }
  pcp_.assign(static_cast<std::size_t>(numa.nr_cpus) * zones_.size() * (kPcpMaxOrder + 1), 0);
  hot_.assign(pcp_.size(), 0);
}

std::int64_t PageAllocator::pcp_total_pages(int cpu, int node) {
  std::int64_t pages = 0;
  for (int o = 0; o <= kPcpMaxOrder; ++o) pages += pcp(cpu, node, o) << o;
  return pages;
}

std::int64_t PageAllocator::pcp_pages(int node) const {
  std::int64_t pages = 0;
  for (int cpu = 0; cpu < numa_.nr_cpus; ++cpu)
    for (int o = 0; o <= kPcpMaxOrder; ++o)
      pages += pcp_[(static_cast<std::size_t>(cpu) * zones_.size() + node) * (kPcpMaxOrder + 1) + o] << o;
  return pages;
}

// rmqueue_bulk: move a batch of blocks from the buddy lists to this CPU's pcp list.
Co<bool> PageAllocator::refill(Exec& e, int node, int order) {
  Frame frame(e, "rmqueue_bulk");
  Zone& z = zones_[node];
  std::int64_t want = std::max<std::int64_t>(1, p_.pcp_batch >> order);
  co_await e.lock(z.lock);
  std::int64_t blocks = std::min(want, z.free >> order);
  z.free -= blocks << order;
  pcp(e.cpu(), node, order) += blocks;
  e.spend(c_.zone_lock_per_block * std::max<std::int64_t>(blocks, 1));
  co_await e.unlock(z.lock);
  co_return blocks > 0;
}

// free_pcppages_bulk: return a batch of pages to the buddy lists, from each list's cold end.
Co<void> PageAllocator::drain(Exec& e, int node) {
  Frame frame(e, "free_pcppages_bulk");
  Zone& z = zones_[node];
  co_await e.lock(z.lock);
  std::int64_t to_free = p_.pcp_batch;
  std::int64_t moved_blocks = 0;
  for (int o = 0; o <= kPcpMaxOrder && to_free > 0; ++o) {
    std::int64_t& list = pcp(e.cpu(), node, o);
    while (list > 0 && to_free > 0) {
      --list;
      z.free += std::int64_t{1} << o;
      to_free -= std::int64_t{1} << o;
      ++moved_blocks;
    }
    hot(e.cpu(), node, o) = std::min(hot(e.cpu(), node, o), list);
  }
  e.spend(c_.zone_lock_per_block * moved_blocks);
  co_await e.unlock(z.lock);
}

Co<int> PageAllocator::alloc_pages(Exec& e, int order, int node, bool this_node, bool* warm) {
  Frame frame(e, "__alloc_pages");
  if (warm) *warm = false;
  const auto& order_list = numa_.fallback[node];
  for (int candidate : order_list) {
    if (this_node && candidate != node) break;
    if (order <= kPcpMaxOrder) {
      std::int64_t& list = pcp(e.cpu(), candidate, order);
      if (list == 0) {
        bool refilled = co_await refill(e, candidate, order);
        if (!refilled) continue;
      }
      --list;
      std::int64_t& h = hot(e.cpu(), candidate, order);
      if (h > 0) {
        --h;
        if (warm) *warm = true;
      }
      e.spend(c_.pcp_alloc);
      pgalloc_ += std::uint64_t{1} << order;
      co_return candidate;
    }
    // Larger orders go straight to the buddy lists.
    Zone& z = zones_[candidate];
    co_await e.lock(z.lock);
    bool ok = z.free >= (std::int64_t{1} << order);
    if (ok) z.free -= std::int64_t{1} << order;
    e.spend(c_.zone_lock_per_block);
    co_await e.unlock(z.lock);
    if (ok) {
      pgalloc_ += std::uint64_t{1} << order;
      co_return candidate;
    }
  }
  ++failures_;
  co_return -1;
}

Co<void> PageAllocator::free_pages(Exec& e, int order, int node) {
  Frame frame(e, "__free_pages");
  pgfree_ += std::uint64_t{1} << order;
  if (order > kPcpMaxOrder) {
    Zone& z = zones_[node];
    co_await e.lock(z.lock);
    z.free += std::int64_t{1} << order;
    e.spend(c_.zone_lock_per_block);
    co_await e.unlock(z.lock);
    co_return;
  }
  ++pcp(e.cpu(), node, order);
  // The block goes on at the hot end; the warm end holds about the CPU's L2 worth of pages.
  std::int64_t& h = hot(e.cpu(), node, order);
  h = std::min<std::int64_t>(h + 1, p_.pcp_warm_pages >> order);
  e.spend(c_.pcp_free);
  if (pcp_total_pages(e.cpu(), node) > p_.pcp_high) co_await drain(e, node);
}

}  // namespace slubsim::slub
