// Acceptance: randomised alloc / free / bulk / cross-CPU free sequences over many seeds, several
// NUMA layouts, both cpu-partial front-ends and freelist randomisation on and off, with
// validation on. Nothing is lost or duplicated (Slub::check, and a pattern written into every
// object is intact when it is freed), the counts agree (objects in use, SLUB_STATS identities,
// pages), and after everything is freed, every CPU flushed and every cache shrunk, all memory is
// back with the page allocator. Memory-limited runs must fail allocations cleanly (nullptr,
// ALLOC_FAILED), never crash.
#include <doctest/doctest.h>

#include "object_pattern.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "models/immediate.h"
#include "models/random.h"
#include "models/slub/slub.h"

using namespace slubsim;
using namespace slubsim::slub;

namespace {

struct Layout {
  int nodes;
  int cpus;
};

Numa make_numa(Layout l, std::int64_t pages_per_node) {
  Numa n;
  n.nr_cpus = l.cpus;
  n.nr_nodes = l.nodes;
  for (int c = 0; c < l.cpus; ++c) n.cpu_node.push_back(c * l.nodes / l.cpus);
  for (int i = 0; i < l.nodes; ++i) {
    n.node_pages.push_back(pages_per_node);
    std::vector<int> fb;
    // Distance order: itself, then the others by index distance (a ring).
    fb.push_back(i);
    for (int d = 1; d < l.nodes; ++d) {
      int up = (i + d) % l.nodes;
      if (std::find(fb.begin(), fb.end(), up) == fb.end()) fb.push_back(up);
    }
    n.fallback.push_back(fb);
  }
  return n;
}

std::vector<CacheSpec> test_caches() {
  std::vector<CacheSpec> v;
  auto add = [&](const char* name, std::uint32_t size, std::uint32_t align, bool hw) {
    CacheSpec c;
    c.name = name;
    c.object_size = size;
    c.align = align;
    c.hwcache_align = hw;
    v.push_back(c);
  };
  add("kmalloc-64", 64, 0, false);
  add("kmalloc-192", 192, 0, false);
  add("maple_node", 256, 256, false);
  add("kmalloc-1k", 1024, 0, false);
  add("kmalloc-4k", 4096, 0, false);
  add("odd-100-hwalign", 100, 0, true);  // stride 128, object 100: bytes past it are not ours
  // Per-cache knobs: no cpu partial list (frees list full slabs on the node under list_lock),
  // and a forced order with a small min_partial.
  add("kmalloc-512-nocpupartial", 512, 0, false);
  v.back().cpu_partial = 0;
  add("kmalloc-128-order2", 128, 0, false);
  v.back().order = 2;
  v.back().min_partial = 1;
  return v;
}

struct Held {
  void* p;
  std::uint64_t tag;
  int cpu;  // the allocating CPU
};

struct Totals {
  std::uint64_t allocated = 0;       // objects handed to us
  std::uint64_t freed_single = 0;    // kmem_cache_free calls
  std::uint64_t freed_bulk = 0;      // objects freed through kmem_cache_free_bulk
  std::uint64_t bulk_free_calls = 0;
  std::uint64_t failures = 0;        // nullptr from alloc, short alloc_bulk
};

class Runner {
 public:
  Runner(Layout layout, FrontendKind fe, bool random, std::uint64_t seed, std::int64_t pages,
         bool limited)
      : layout_(layout), limited_(limited), eager_(fe == FrontendKind::CpuPartialFrozen), rng_(seed, 0x7e57) {
    Params p;
    p.caches = test_caches();
    p.numa = make_numa(layout, pages);
    p.features.frontend = fe;
    p.features.freelist_random = random;
    p.validate = true;
    p.seed = seed;
    if (limited) {
      // Small pcp batches so that tiny nodes are not swallowed whole by one CPU's pcp list.
      p.page_alloc.pcp_batch = 2;
      p.page_alloc.pcp_high = 4;
    }
    slub_ = std::make_unique<Slub>(sh_, p);
    for (int c = 0; c < layout.cpus; ++c)
      ex_.push_back(std::make_unique<ImmediateExec>(sh_, c, p.numa.cpu_node[c]));
    held_.resize(static_cast<std::size_t>(slub_->nr_caches()));
    totals_.resize(held_.size());
  }

  Slub& slub() { return *slub_; }

  void run(int ops) {
    for (int i = 0; i < ops; ++i) {
      step();
      if (i % 400 == 399) verify();
    }
    verify();
  }

  // Free everything (in random order, on random CPUs), flush, shrink; all memory back.
  void teardown() {
    for (std::size_t c = 0; c < held_.size(); ++c) {
      auto& h = held_[c];
      while (!h.empty()) free_one(static_cast<int>(c), rng_.below(h.size()), pick_cpu());
    }
    verify();
    for (int c = 0; c < slub_->nr_caches(); ++c)
      for (int cpu = 0; cpu < layout_.cpus; ++cpu)
        run_now(slub_->flush_cpu(*ex_[cpu], slub_->cache(c), cpu));
    slub_->check();
    for (int c = 0; c < slub_->nr_caches(); ++c) run_now(slub_->shrink(*ex_[pick_cpu()], slub_->cache(c)));
    slub_->check();
    for (int c = 0; c < slub_->nr_caches(); ++c) {
      const KmemCache& s = slub_->cache(c);
      INFO("cache " << s.name());
      CHECK(s.slabs_allocated == 0);
      for (const auto& n : s.node) {
        CHECK(n.nr_partial == 0);
        CHECK(n.nr_slabs == 0);
        CHECK(n.total_objects == 0);
      }
      CHECK(s.stats[int(Stat::ALLOC_SLAB)] == s.stats[int(Stat::FREE_SLAB)]);
    }
    CHECK(slub_->total_slab_bytes() == 0);
    for (int n = 0; n < layout_.nodes; ++n) {
      INFO("node " << n);
      CHECK(slub_->pages().free_pages(n) + slub_->pages().pcp_pages(n) == slub_->pages().total_pages(n));
    }
    CHECK_FALSE(sh_.any_held());
  }

  std::uint64_t failures() const {
    std::uint64_t f = 0;
    for (const auto& t : totals_) f += t.failures;
    return f;
  }
  std::uint64_t allocated() const {
    std::uint64_t a = 0;
    for (const auto& t : totals_) a += t.allocated;
    return a;
  }

 private:
  int pick_cpu() { return static_cast<int>(rng_.below(static_cast<std::uint64_t>(layout_.cpus))); }
  int pick_cache() { return static_cast<int>(rng_.below(held_.size())); }
  std::size_t held_total() const {
    std::size_t n = 0;
    for (const auto& h : held_) n += h.size();
    return n;
  }

  // An object's host memory is its free-pointer word (models/slub/slab.h), the only part of it
  // the allocator writes: a pattern there catches any write to a live object.
  void fill(const KmemCache&, void* p, std::uint64_t tag) { test::fill_pattern(p, kHostObjectBytes, tag); }
  bool intact(const KmemCache&, const void* p, std::uint64_t tag) const {
    return test::pattern_intact(p, kHostObjectBytes, tag);
  }

  void took(int c, void* p, int cpu) {
    KmemCache& s = slub_->cache(c);
    // A real, distinct object of this cache, aligned as the cache promises.
    REQUIRE(p != nullptr);
    Slab* slab = slub_->virt_to_slab(p);
    REQUIRE(slab != nullptr);
    REQUIRE(slab->cache == &s);
    // At an object's start; its simulated address (page-aligned slab + index * stride) is aligned
    // as the cache promises when the stride is.
    REQUIRE(slab->host_offset(p) % kHostObjectBytes == 0);
    REQUIRE(s.geo.size % s.geo.align == 0);
    REQUIRE(live_.insert(p).second);
    std::uint64_t tag = next_tag_++;
    fill(s, p, tag);
    held_[c].push_back({p, tag, cpu});
    ++totals_[c].allocated;
  }

  // Removes held_[c][i] from our books after checking its pattern; returns the pointer.
  void* release(int c, std::size_t i) {
    auto& h = held_[c];
    Held x = h[i];
    h[i] = h.back();
    h.pop_back();
    const KmemCache& s = slub_->cache(c);
    if (!intact(s, x.p, x.tag)) FAIL("object " << x.p << " of " << s.name() << " was overwritten while in use");
    live_.erase(x.p);
    return x.p;
  }

  void free_one(int c, std::size_t i, int cpu) {
    void* p = release(c, i);
    run_now(slub_->free(*ex_[cpu], slub_->cache(c), p));
    ++totals_[c].freed_single;
  }

  void step() {
    std::uint64_t r = rng_.below(1000);
    const std::size_t total = held_total();
    // Keep the population between roughly 0 and 1500 objects: allocate more when low.
    const bool prefer_alloc = total < 300 || (total < 1500 && rng_.below(2) == 0);
    int c = pick_cache();
    KmemCache& s = slub_->cache(c);
    int cpu = pick_cpu();
    ImmediateExec& e = *ex_[cpu];

    if (r < 20) {
      // flush_cpu_slab, run on that CPU.
      run_now(slub_->flush_cpu(e, s, cpu));
      return;
    }
    if (r < 25) {
      run_now(slub_->shrink(e, s));
      return;
    }
    if (r < 150) {
      // Bulk.
      if (prefer_alloc) {
        std::size_t n = 1 + rng_.below(48);
        std::vector<void*> p(n, nullptr);
        std::size_t got = run_now(slub_->alloc_bulk(e, s, n, p.data()));
        if (got == 0) {
          ++totals_[c].failures;
          REQUIRE(limited_);
          return;
        }
        REQUIRE(got == n);
        for (void* o : p) took(c, o, cpu);
      } else {
        auto& h = held_[c];
        if (h.empty()) return;
        std::size_t n = std::min<std::size_t>(h.size(), 1 + rng_.below(48));
        std::vector<void*> p;
        if (rng_.below(2) == 0) {
          // The most recently allocated: long runs of one slab.
          for (std::size_t k = 0; k < n; ++k) p.push_back(release(c, h.size() - 1));
        } else {
          for (std::size_t k = 0; k < n; ++k) p.push_back(release(c, rng_.below(h.size())));
        }
        // Shuffle (fully, or only a little).
        if (rng_.below(2) == 0) {
          for (std::size_t k = p.size(); k > 1; --k) std::swap(p[k - 1], p[rng_.below(k)]);
        } else if (p.size() > 1) {
          std::swap(p[rng_.below(p.size())], p[rng_.below(p.size())]);
        }
        run_now(slub_->free_bulk(e, s, p.size(), p.data()));
        totals_[c].freed_bulk += p.size();
        ++totals_[c].bulk_free_calls;
      }
      return;
    }
    if (prefer_alloc) {
      int node = kNoNode;
      if (r < 300) node = static_cast<int>(rng_.below(static_cast<std::uint64_t>(layout_.nodes)));
      void* o = run_now(slub_->alloc(e, s, node));
      if (!o) {
        ++totals_[c].failures;
        REQUIRE(limited_);
        return;
      }
      // With memory to spare a node request is served from that node.
      if (node != kNoNode && !limited_) CHECK(slub_->virt_to_slab(o)->node == node);
      took(c, o, cpu);
    } else {
      auto& h = held_[c];
      if (h.empty()) return;
      std::size_t i = rng_.below(h.size());
      // Half the frees on the allocating CPU, half on a random one (often remote).
      int fcpu = rng_.below(2) == 0 ? h[i].cpu : cpu;
      free_one(c, i, fcpu);
    }
  }

  // Every live slab is in exactly one state (slab.h, §1.1) and reachable: the cpu slab of one
  // CPU (frozen), on one CPU's partial list (frozen only with eager freezing), on its node's
  // partial list (unfrozen, with free objects), or full (unfrozen, on no list, no free object,
  // so some user holds one of its objects). A slab with free objects on no list would be lost.
  void verify_states(int c) {
    const KmemCache& s = slub_->cache(c);
    INFO("cache " << s.name());
    std::unordered_set<const Slab*> seen;
    for (int cpu = 0; cpu < layout_.cpus; ++cpu) {
      const KmemCacheCpu& kc = s.cpu[cpu];
      if (kc.slab) {
        CHECK(kc.slab->frozen);
        CHECK_FALSE(kc.slab->on_partial);
        CHECK(seen.insert(kc.slab).second);
      } else {
        CHECK(kc.freelist == nullptr);
      }
      for (void* p = kc.freelist; p; p = get_freepointer(p)) CHECK(kc.slab->contains(p));
      std::uint32_t len = 0;
      for (const Slab* sl = kc.partial; sl; sl = sl->next) {
        ++len;
        CHECK(sl->frozen == eager_);
        CHECK_FALSE(sl->on_partial);
        CHECK(sl->freelist != nullptr);
        CHECK(seen.insert(sl).second);
      }
      if (kc.partial) CHECK(kc.partial->slabs == len);
    }
    for (std::size_t n = 0; n < s.node.size(); ++n)
      for (const Slab* sl = s.node[n].partial_head; sl; sl = sl->next_node) {
        CHECK(sl->freelist != nullptr);
        CHECK(seen.insert(sl).second);
      }
    for (const Held& h : held_[c]) {
      const Slab* sl = slub_->virt_to_slab(h.p);
      if (seen.count(sl)) continue;
      // Not on any list and not a cpu slab: must be full.
      CHECK(sl->freelist == nullptr);
      CHECK_FALSE(sl->frozen);
      CHECK(sl->inuse == sl->objects);
      seen.insert(sl);
    }
    CHECK(static_cast<std::int64_t>(seen.size()) == s.slabs_allocated);
  }

  void verify() {
    slub_->check();
    for (int c = 0; c < slub_->nr_caches(); ++c) verify_states(c);
    std::int64_t slab_pages = 0;
    for (int c = 0; c < slub_->nr_caches(); ++c) {
      const KmemCache& s = slub_->cache(c);
      const Totals& t = totals_[c];
      INFO("cache " << s.name());
      LayerCounts l = slub_->layers(s);
      CHECK(l.in_use == static_cast<std::int64_t>(held_[c].size()));
      CHECK(l.slabs == s.slabs_allocated);
      CHECK(t.allocated - t.freed_single - t.freed_bulk == held_[c].size());
      const auto& st = s.stats;
      // Every slab created is counted once, every slab freed once.
      CHECK(st[int(Stat::ALLOC_SLAB)] - st[int(Stat::FREE_SLAB)] == static_cast<std::uint64_t>(s.slabs_allocated));
      std::int64_t nr_slabs = 0, total_objects = 0;
      for (const auto& n : s.node) {
        nr_slabs += n.nr_slabs;
        total_objects += n.total_objects;
      }
      CHECK(nr_slabs == s.slabs_allocated);
      CHECK(l.in_use + l.cpu_freelist + l.cpu_partial + l.node_partial == total_objects);
      CHECK(st[int(Stat::ALLOC_FAILED)] == t.failures);
      if (!limited_) {
        // Each allocated object was either a fast path pop or the result of one slow path.
        CHECK(st[int(Stat::ALLOC_FASTPATH)] + st[int(Stat::ALLOC_SLOWPATH)] == t.allocated);
        CHECK(st[int(Stat::ORDER_FALLBACK)] == 0);
      }
      // A single free counts exactly one of FREE_FASTPATH / FREE_SLOWPATH; a bulk group counts
      // cnt fast path frees or one slow path: at least one per bulk call, at most one per object.
      std::uint64_t frees = st[int(Stat::FREE_FASTPATH)] + st[int(Stat::FREE_SLOWPATH)];
      if (!limited_) {
        CHECK(frees <= t.freed_single + t.freed_bulk);
        CHECK(frees >= t.freed_single + t.bulk_free_calls);
      }
      slab_pages += l.slab_bytes / static_cast<std::int64_t>(kPageSize);
    }
    CHECK(slab_pages * static_cast<std::int64_t>(kPageSize) == slub_->total_slab_bytes());
    std::int64_t accounted = 0;
    for (int n = 0; n < layout_.nodes; ++n)
      accounted += slub_->pages().total_pages(n) - slub_->pages().free_pages(n) - slub_->pages().pcp_pages(n);
    CHECK(accounted == slab_pages);
    // /proc/vmstat's pgalloc and pgfree: every page handed out and not yet taken back is a
    // slab page.
    CHECK(static_cast<std::int64_t>(slub_->pages().pgalloc() - slub_->pages().pgfree()) == slab_pages);
    CHECK_FALSE(sh_.any_held());
  }

  ImmediateShared sh_;
  Layout layout_;
  bool limited_;
  bool eager_;
  Random rng_;
  std::unique_ptr<Slub> slub_;
  std::vector<std::unique_ptr<ImmediateExec>> ex_;
  std::vector<std::vector<Held>> held_;
  std::vector<Totals> totals_;
  std::unordered_set<void*> live_;
  std::uint64_t next_tag_ = 1;
};

std::string fe_name(FrontendKind fe) {
  return fe == FrontendKind::CpuPartial ? "CpuPartial" : "CpuPartialFrozen";
}

// Counters summed over a sweep, to show which paths the random runs reached.
StatCounters sum_stats(Slub& slub) {
  StatCounters t{};
  for (int c = 0; c < slub.nr_caches(); ++c)
    for (int i = 0; i < kNrStats; ++i) t[i] += slub.cache(c).stats[i];
  return t;
}

void sweep(Layout layout, int seeds, int ops) {
  StatCounters total{};
  for (auto fe : {FrontendKind::CpuPartial, FrontendKind::CpuPartialFrozen})
    for (bool random : {false, true})
      for (int seed = 1; seed <= seeds; ++seed) {
        INFO(layout.nodes << " nodes, " << layout.cpus << " CPUs, " << fe_name(fe)
                          << ", freelist_random " << random << ", seed " << seed);
        Runner r(layout, fe, random, static_cast<std::uint64_t>(seed), 1 << 16, false);
        r.run(ops);
        r.teardown();
        CHECK(r.failures() == 0);
        auto st = sum_stats(r.slub());
        for (int i = 0; i < kNrStats; ++i) total[i] += st[i];
      }
  if (std::getenv("SLUB_RANDOM_STATS"))
    for (int i = 0; i < kNrStats; ++i) MESSAGE(std::string(stat_name(static_cast<Stat>(i))) << " " << total[i]);
  // The sweep reaches every path of the cpu-partial front-end that needs no contention or
  // memory pressure (the cmpxchg failures need concurrency, ORDER_FALLBACK a full node).
  for (Stat st : {Stat::ALLOC_FASTPATH, Stat::ALLOC_SLOWPATH, Stat::FREE_FASTPATH, Stat::FREE_SLOWPATH,
                  Stat::FREE_FROZEN, Stat::FREE_ADD_PARTIAL, Stat::FREE_REMOVE_PARTIAL,
                  Stat::ALLOC_FROM_PARTIAL, Stat::ALLOC_SLAB, Stat::ALLOC_REFILL, Stat::FREE_SLAB,
                  Stat::CPUSLAB_FLUSH, Stat::DEACTIVATE_FULL, Stat::DEACTIVATE_EMPTY,
                  Stat::DEACTIVATE_TO_HEAD, Stat::DEACTIVATE_TO_TAIL, Stat::DEACTIVATE_REMOTE_FREES,
                  Stat::DEACTIVATE_BYPASS, Stat::CPU_PARTIAL_ALLOC, Stat::CPU_PARTIAL_FREE,
                  Stat::CPU_PARTIAL_NODE, Stat::CPU_PARTIAL_DRAIN}) {
    INFO(std::string(stat_name(st)));
    CHECK(total[static_cast<int>(st)] > 0);
  }
  if (layout.nodes > 1) CHECK(total[static_cast<int>(Stat::ALLOC_NODE_MISMATCH)] > 0);
}

}  // namespace

TEST_CASE("slub random: 1 node, 2 CPUs") { sweep({1, 2}, 20, 3000); }

TEST_CASE("slub random: 2 nodes, 8 CPUs") { sweep({2, 8}, 20, 3000); }

TEST_CASE("slub random: 4 nodes, 16 CPUs") { sweep({4, 16}, 20, 3000); }

TEST_CASE("slub random: memory-limited runs fail allocations cleanly and give all memory back") {
  StatCounters total{};
  for (Layout layout : {Layout{2, 2}, Layout{2, 8}, Layout{4, 16}})
    for (auto fe : {FrontendKind::CpuPartial, FrontendKind::CpuPartialFrozen})
      for (int seed = 1; seed <= 6; ++seed) {
        INFO(layout.nodes << " nodes, " << layout.cpus << " CPUs, " << fe_name(fe) << ", seed " << seed);
        // 48 pages (192 KiB) per node: far less than the workload wants.
        Runner r(layout, fe, seed % 2 == 0, static_cast<std::uint64_t>(seed), 48, true);
        r.run(1500);
        CHECK(r.failures() > 0);
        CHECK(r.allocated() > 0);
        r.teardown();
        auto st = sum_stats(r.slub());
        for (int i = 0; i < kNrStats; ++i) total[i] += st[i];
      }
  if (std::getenv("SLUB_RANDOM_STATS"))
    for (int i = 0; i < kNrStats; ++i) MESSAGE(std::string(stat_name(static_cast<Stat>(i))) << " " << total[i]);
  // A failed order-3 slab retried at the minimum order: kmalloc-4k falls back to order 0.
  CHECK(total[static_cast<int>(Stat::ORDER_FALLBACK)] > 0);
  CHECK(total[static_cast<int>(Stat::ALLOC_FAILED)] > 0);
}

TEST_CASE("slub random: a tiny node falls back to the other node, then allocation fails with ALLOC_FAILED") {
  for (auto fe : {FrontendKind::CpuPartial, FrontendKind::CpuPartialFrozen}) {
    INFO(fe_name(fe));
    ImmediateShared sh;
    Params p;
    CacheSpec c;
    c.name = "kmalloc-256";
    c.object_size = 256;
    p.caches = {c};
    // Two nodes of 4 pages, CPU 0 on node 0, CPU 1 on node 1. kmalloc-256 on 2 CPUs: order 0,
    // 16 objects per slab (§1.4, 2-7 CPUs), so each node holds 4 slabs = 64 objects.
    p.numa = make_numa({2, 2}, 4);
    p.page_alloc.pcp_batch = 1;  // one page per pcp refill: no page sits idle on a pcp list
    p.page_alloc.pcp_high = 1;
    p.features.frontend = fe;
    p.validate = true;
    Slub slub(sh, p);
    KmemCache& s = slub.cache(0);
    REQUIRE(s.geo.order == 0);
    REQUIRE(s.geo.objects == 16);
    ImmediateExec e0(sh, 0, 0), e1(sh, 1, 1);
    std::vector<void*> held;

    // 64 objects: the 4 pages of node 0.
    for (int i = 0; i < 64; ++i) {
      void* o = run_now(slub.alloc(e0, s));
      REQUIRE(o != nullptr);
      CHECK(slub.virt_to_slab(o)->node == 0);
      held.push_back(o);
    }
    // A node-0 request: node 0 is exhausted, the second pass falls back to node 1.
    void* o = run_now(slub.alloc(e0, s, 0));
    REQUIRE(o != nullptr);
    CHECK(slub.virt_to_slab(o)->node == 1);
    held.push_back(o);
    // The rest of node 1: 15 more objects of that slab and 3 more slabs.
    for (int i = 0; i < 63; ++i) {
      void* x = run_now(slub.alloc(e0, s));
      REQUIRE(x != nullptr);
      CHECK(slub.virt_to_slab(x)->node == 1);
      held.push_back(x);
    }
    CHECK(s.slabs_allocated == 8);
    CHECK(s.stats[int(Stat::ALLOC_FAILED)] == 0);

    // Both nodes exhausted: every kind of allocation fails cleanly.
    CHECK(run_now(slub.alloc(e0, s)) == nullptr);
    CHECK(s.stats[int(Stat::ALLOC_FAILED)] == 1);
    CHECK(run_now(slub.alloc(e1, s)) == nullptr);
    CHECK(run_now(slub.alloc(e1, s, 1)) == nullptr);
    CHECK(run_now(slub.alloc(e0, s, 0)) == nullptr);
    void* bulk[5] = {};
    CHECK(run_now(slub.alloc_bulk(e1, s, 5, bulk)) == 0);
    CHECK(s.stats[int(Stat::ALLOC_FAILED)] == 5);
    CHECK(s.stats[int(Stat::ALLOC_SLAB)] == 8);
    CHECK(slub.pages().failures() > 0);
    slub.check();

    // A free makes room again: the freeing CPU gets the slab on its cpu partial list.
    run_now(slub.free(e1, s, held[3]));
    void* again = run_now(slub.alloc(e1, s));
    CHECK(again == held[3]);
    // Half-filled bulk request with one free object: fails and gives back what it took.
    run_now(slub.free(e1, s, again));
    CHECK(run_now(slub.alloc_bulk(e1, s, 2, bulk)) == 0);
    CHECK(s.stats[int(Stat::ALLOC_FAILED)] == 6);
    slub.check();

    held.erase(held.begin() + 3);
    for (std::size_t i = 0; i < held.size(); ++i) run_now(slub.free(i % 2 ? e1 : e0, s, held[i]));
    run_now(slub.shrink(e0, s));
    slub.check();
    CHECK(s.slabs_allocated == 0);
    CHECK(slub.total_slab_bytes() == 0);
    for (int n = 0; n < 2; ++n)
      CHECK(slub.pages().free_pages(n) + slub.pages().pcp_pages(n) == slub.pages().total_pages(n));
  }
}
