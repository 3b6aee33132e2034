// Acceptance: the validation mode covers sheaves, barns and RCU batches. Randomised runs of both
// sheaf front-ends (6.18 sheaves on cpu slabs, with sheaf and non-sheaf caches mixed; 7.0
// sheaves for all), with every combination of the three patches (spare-sheaf,
// remote-refill-trylock, skip-freelist), freelist randomisation on and off, 2-4 nodes, and small
// barn limits in half the runs, find nothing lost or duplicated:
//   - Slub::check every few hundred operations (every object in exactly one place: a slab
//     freelist, a cpu freelist, a main / spare / rcu_free sheaf, a barn, an RCU callback or a
//     sheaf waiting for its grace period, a prefilled sheaf, or a user);
//   - a pattern written into every object we hold is intact when we give it back;
//   - layers() agree with what we hold (in_use), and the sheaf structs with SHEAF_ALLOC/FREE;
//   - at the end (free everything, rcu_barrier, flush every CPU, shrink every cache) there are
//     no slabs, no sheaves but the mains, no pending callbacks, and every page is back.
// Operations: alloc, alloc_node, free on the allocating or another CPU (often remote), bulk
// alloc and free, kfree_rcu, clock advances with rcu_tick on various CPUs, prefill /
// alloc_from_sheaf / refill / return (oversize too), flush_cpu (on the CPU and from another),
// kmem_cache_shrink.
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

constexpr Time kGrace = 1'000'000;

struct Config {
  FrontendKind fe;
  int nodes;
  bool spare_sheaf;
  bool remote_trylock;
  bool skip_freelist;
  bool freelist_random;
  bool small_barn;
  std::uint64_t seed;
};

Numa make_numa(int nodes, int cpus) {
  Numa n;
  n.nr_cpus = cpus;
  n.nr_nodes = nodes;
  for (int c = 0; c < cpus; ++c) n.cpu_node.push_back(c * nodes / cpus);
  for (int i = 0; i < nodes; ++i) {
    n.node_pages.push_back(1 << 15);
    std::vector<int> fb;
    for (int d = 0; d < nodes; ++d) fb.push_back((i + d) % nodes);
    n.fallback.push_back(fb);
  }
  return n;
}

// 6.18 capacities (explicit; 0 = no sheaves) and what 7.0 makes of them (§4.2) in comments.
std::vector<CacheSpec> caches() {
  std::vector<CacheSpec> v;
  auto add = [&](const char* name, std::uint32_t size, std::uint32_t align, bool hw, std::uint32_t cap) {
    CacheSpec c;
    c.name = name;
    c.object_size = size;
    c.align = align;
    c.hwcache_align = hw;
    c.sheaf_capacity = cap;
    v.push_back(c);
  };
  add("kmalloc-64", 64, 0, false, 0);            // 7.0: 60
  add("vm_area_struct", 192, 0, false, 6);       // 7.0: max(60, 6) = 60
  add("maple_node", 256, 256, false, 4);         // 7.0: 28
  add("kmalloc-1k", 1024, 0, false, 0);          // 7.0: 12
  add("kmalloc-2k", 2048, 0, false, 5);          // 7.0: 12
  add("kmalloc-4k", 4096, 0, false, 3);          // 7.0: 4
  add("kmalloc-8k", 8192, 0, false, 0);          // 7.0: 4
  add("odd-100-hwalign", 100, 0, true, 0);       // 7.0: 60 (stride 128)
  add("big-min-7", 4096, 0, false, 7);           // 7.0: 7, an explicit minimum above 4
  return v;
}

struct Held {
  void* p;
  std::uint64_t tag;
  int cpu;
};

struct Prefilled {
  int cache;
  Sheaf* sheaf;
};

class Runner {
 public:
  explicit Runner(const Config& cfg) : cfg_(cfg), rng_(cfg.seed, 0x5eaf, 3) {
    cpus_ = 2 * cfg.nodes;
    Params p;
    p.caches = caches();
    p.numa = make_numa(cfg.nodes, cpus_);
    p.features.frontend = cfg.fe;
    p.features.freelist_random = cfg.freelist_random;
    p.features.spare_sheaf = cfg.spare_sheaf;
    p.features.remote_refill_trylock = cfg.remote_trylock;
    p.features.skip_freelist = cfg.skip_freelist;
    if (cfg.small_barn) {
      p.features.barn_max_full = 2;
      p.features.barn_max_empty = 2;
    }
    p.rcu_grace_period = kGrace;
    p.validate = true;
    p.seed = cfg.seed;
    slub_ = std::make_unique<Slub>(sh_, p);
    for (int c = 0; c < cpus_; ++c) ex_.push_back(std::make_unique<ImmediateExec>(sh_, c, p.numa.cpu_node[c]));
    held_.resize(static_cast<std::size_t>(slub_->nr_caches()));
    allocated_.assign(held_.size(), 0);
    oversize_filled_.assign(held_.size(), 0);
    freed_.assign(held_.size(), 0);
  }

  Slub& slub() { return *slub_; }

  void run(int ops) {
    for (int i = 0; i < ops; ++i) {
      step();
      if (i % 300 == 299) verify();
    }
    verify();
  }

  void teardown() {
    // Prefilled sheaves back, everything freed on random CPUs.
    while (!prefilled_.empty()) return_one(prefilled_.size() - 1);
    for (std::size_t c = 0; c < held_.size(); ++c)
      while (!held_[c].empty()) free_one(static_cast<int>(c), rng_.below(held_[c].size()), pick_cpu());
    verify();
    run_now(slub_->rcu_barrier(*ex_[0]));
    verify();
    // Flush every CPU on itself (submits partial rcu_free sheaves), run those callbacks, then
    // shrink (barn_shrink); a second flush + shrink collects what a 6.18 barn flush left on the
    // shrinking CPU's cpu slab layer.
    for (int c = 0; c < slub_->nr_caches(); ++c)
      for (int cpu = 0; cpu < cpus_; ++cpu) run_now(slub_->flush_cpu(*ex_[cpu], slub_->cache(c), cpu));
    run_now(slub_->rcu_barrier(*ex_[0]));
    for (int pass = 0; pass < 2; ++pass)
      for (int c = 0; c < slub_->nr_caches(); ++c) {
        run_now(slub_->shrink(*ex_[pick_cpu()], slub_->cache(c)));
        for (int cpu = 0; cpu < cpus_; ++cpu) run_now(slub_->flush_cpu(*ex_[cpu], slub_->cache(c), cpu));
      }
    slub_->check();
    for (int cpu = 0; cpu < cpus_; ++cpu) CHECK(slub_->rcu().pending(cpu).empty());
    for (int c = 0; c < slub_->nr_caches(); ++c) {
      const KmemCache& s = slub_->cache(c);
      INFO("cache " << s.name());
      CHECK(s.slabs_allocated == 0);
      for (const auto& n : s.node) {
        CHECK(n.nr_partial == 0);
        CHECK(n.nr_slabs == 0);
        CHECK(n.barn.nr_full() == 0);
        CHECK(n.barn.nr_empty() == 0);
      }
      LayerCounts l = slub_->layers(s);
      CHECK(l.sheaves == 0);
      CHECK(l.barn == 0);
      CHECK(l.rcu == 0);
      CHECK(l.prefilled == 0);
      CHECK(l.in_use == 0);
      // Only the main sheaves are left; every other sheaf struct was freed.
      CHECK(l.sheaf_structs == (s.sheaf_capacity ? cpus_ : 0));
      const auto& st = s.stats;
      CHECK(st[int(Stat::ALLOC_SLAB)] == st[int(Stat::FREE_SLAB)]);
      CHECK(st[int(Stat::SHEAF_ALLOC)] == st[int(Stat::SHEAF_FREE)]);
      if (cfg_.fe == FrontendKind::Sheaves) {
        // 7.0 (§4.11): every object a user got from kmem_cache_alloc(_bulk) was a sheaf pop or
        // a slow-path object; oversize prefilled sheaves are filled by __kmem_cache_alloc_bulk
        // (ALLOC_SLOWPATH) too. Every user free was a sheaf push, a slow-path free or a
        // kfree_rcu into an rcu_free sheaf (remote kfree_rcu objects are freed by the callback,
        // which counts a fast or slow path).
        CHECK(st[int(Stat::ALLOC_FASTPATH)] + st[int(Stat::ALLOC_SLOWPATH)] == allocated_[c] + oversize_filled_[c]);
        CHECK(st[int(Stat::FREE_FASTPATH)] + st[int(Stat::FREE_SLOWPATH)] + st[int(Stat::FREE_RCU_SHEAF)] == freed_[c]);
      }
    }
    CHECK(slub_->total_slab_bytes() == 0);
    for (int n = 0; n < cfg_.nodes; ++n) {
      INFO("node " << n);
      CHECK(slub_->pages().free_pages(n) + slub_->pages().pcp_pages(n) == slub_->pages().total_pages(n));
    }
    CHECK_FALSE(sh_.any_held());
  }

 private:
  int pick_cpu() { return static_cast<int>(rng_.below(static_cast<std::uint64_t>(cpus_))); }
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

  // A real, distinct object of this cache, aligned as promised; written with a pattern.
  void took(int c, void* p, int cpu) {
    KmemCache& s = slub_->cache(c);
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
  }

  void* release(int c, std::size_t i) {
    auto& h = held_[c];
    Held x = h[i];
    h[i] = h.back();
    h.pop_back();
    const KmemCache& s = slub_->cache(c);
    if (!intact(s, x.p, x.tag)) FAIL("object " << x.p << " of " << s.name() << " was overwritten while in use");
    live_.erase(x.p);
    ++freed_[c];
    return x.p;
  }

  void free_one(int c, std::size_t i, int cpu) {
    void* p = release(c, i);
    run_now(slub_->free(*ex_[cpu], slub_->cache(c), p));
  }

  void return_one(std::size_t i) {
    Prefilled pf = prefilled_[i];
    prefilled_[i] = prefilled_.back();
    prefilled_.pop_back();
    if (pf.sheaf->oversize) --oversize_held_;
    run_now(slub_->return_sheaf(*ex_[pick_cpu()], slub_->cache(pf.cache), pf.sheaf));
  }

  void step() {
    const std::uint64_t r = rng_.below(1000);
    const std::size_t total = held_total();
    const bool prefer_alloc = total < 300 || (total < 1200 && rng_.below(2) == 0);
    // Bias towards the small-capacity caches, where sheaves cycle through the barn quickly.
    int c = rng_.below(3) == 0 ? static_cast<int>(rng_.below(held_.size())) : 5 + static_cast<int>(rng_.below(4));
    KmemCache& s = slub_->cache(c);
    int cpu = pick_cpu();
    ImmediateExec& e = *ex_[cpu];

    if (r < 15) {
      // flush_cpu_slab: usually on the CPU itself, sometimes run by another CPU (as
      // kmem_cache_shrink's flush of every CPU is here).
      int target = rng_.below(3) == 0 ? pick_cpu() : cpu;
      run_now(slub_->flush_cpu(e, s, target));
      return;
    }
    if (r < 18) {
      run_now(slub_->shrink(e, s));
      return;
    }
    if (r < 90) {
      // Time passes on this CPU; its RCU callbacks whose grace period ended run.
      e.spend(static_cast<Time>(rng_.below(2 * kGrace)));
      run_now(slub_->rcu_tick(e));
      return;
    }
    if (r < 160) {
      // kfree_rcu of an object we hold, on its allocating CPU or another.
      auto& h = held_[c];
      if (h.empty()) return;
      std::size_t i = rng_.below(h.size());
      int fcpu = rng_.below(2) == 0 ? h[i].cpu : cpu;
      void* p = release(c, i);
      run_now(slub_->kfree_rcu(*ex_[fcpu], s, p));
      return;
    }
    if (r < 230) {
      prefill_op(c, cpu);
      return;
    }
    if (r < 330) {
      if (prefer_alloc) {
        std::size_t n = 1 + rng_.below(40);
        std::vector<void*> p(n, nullptr);
        std::size_t got = run_now(slub_->alloc_bulk(e, s, n, p.data()));
        REQUIRE(got == n);
        for (void* o : p) took(c, o, cpu);
        allocated_[c] += n;
      } else {
        auto& h = held_[c];
        if (h.empty()) return;
        std::size_t n = std::min<std::size_t>(h.size(), 1 + rng_.below(40));
        std::vector<void*> p;
        if (rng_.below(2) == 0) {
          for (std::size_t k = 0; k < n; ++k) p.push_back(release(c, h.size() - 1));
        } else {
          for (std::size_t k = 0; k < n; ++k) p.push_back(release(c, rng_.below(h.size())));
        }
        if (rng_.below(2) == 0)
          for (std::size_t k = p.size(); k > 1; --k) std::swap(p[k - 1], p[rng_.below(k)]);
        run_now(slub_->free_bulk(e, s, p.size(), p.data()));
      }
      return;
    }
    if (prefer_alloc) {
      int node = kNoNode;
      if (r < 450) node = static_cast<int>(rng_.below(static_cast<std::uint64_t>(cfg_.nodes)));
      void* o = run_now(slub_->alloc(e, s, node));
      REQUIRE(o != nullptr);
      if (node != kNoNode) CHECK(slub_->virt_to_slab(o)->node == node);
      took(c, o, cpu);
      ++allocated_[c];
    } else {
      auto& h = held_[c];
      if (h.empty()) return;
      std::size_t i = rng_.below(h.size());
      int fcpu = rng_.below(2) == 0 ? h[i].cpu : cpu;
      free_one(c, i, fcpu);
    }
  }

  // kmem_cache_prefill_sheaf / _alloc_from_sheaf / _refill_sheaf / _return_sheaf.
  void prefill_op(int c, int cpu) {
    KmemCache& s = slub_->cache(c);
    ImmediateExec& e = *ex_[cpu];
    std::uint64_t k = rng_.below(4);
    if (k == 0 || prefilled_.empty()) {
      if (!s.sheaf_capacity) {
        CHECK_THROWS_AS(run_now(slub_->prefill_sheaf(e, s, 1)), SlubError);
        return;
      }
      if (prefilled_.size() >= 6) return;
      // Usually within the capacity, sometimes oversize.
      auto n = static_cast<std::uint32_t>(1 + rng_.below(s.sheaf_capacity + 3));
      Sheaf* sh = run_now(slub_->prefill_sheaf(e, s, n));
      REQUIRE(sh != nullptr);
      CHECK(sh->size() >= n);
      if (sh->oversize) {
        CHECK(sh->size() == n);
        oversize_filled_[c] += n;
        ++oversize_held_;
      } else {
        CHECK(sh->capacity == s.sheaf_capacity);
      }
      prefilled_.push_back({c, sh});
      return;
    }
    std::size_t i = rng_.below(prefilled_.size());
    Prefilled& pf = prefilled_[i];
    KmemCache& ps = slub_->cache(pf.cache);
    if (k == 1) {
      // Take a few objects; an empty sheaf gives NULL.
      std::uint64_t want = 1 + rng_.below(4);
      for (std::uint64_t j = 0; j < want; ++j) {
        bool was_empty = pf.sheaf->empty();
        void* o = slub_->alloc_from_sheaf(e, ps, pf.sheaf);
        CHECK((o == nullptr) == was_empty);
        if (!o) break;
        took(pf.cache, o, cpu);
      }
    } else if (k == 2) {
      auto n = static_cast<std::uint32_t>(1 + rng_.below(ps.sheaf_capacity + 3));
      bool was_oversize = pf.sheaf->oversize;
      std::uint32_t before = pf.sheaf->size();
      Sheaf* sh = run_now(slub_->refill_sheaf(e, ps, pf.sheaf, n));
      REQUIRE(sh != nullptr);
      CHECK(sh->size() >= n);
      if (sh != pf.sheaf) {
        // A bigger (oversize) sheaf replaced it; the old one was returned.
        CHECK(sh->oversize);
        CHECK(sh->size() == n);
        if (was_oversize) --oversize_held_;
        ++oversize_held_;
        oversize_filled_[pf.cache] += n;
        pf.sheaf = sh;
      } else if (sh->oversize) {
        oversize_filled_[pf.cache] += sh->size() - before;
      }
    } else {
      return_one(i);
    }
  }

  void verify() {
    slub_->check();
    std::int64_t slab_pages = 0;
    for (int c = 0; c < slub_->nr_caches(); ++c) {
      const KmemCache& s = slub_->cache(c);
      INFO("cache " << s.name());
      LayerCounts l = slub_->layers(s);
      // layers() subtracts every cached layer (sheaves, barn, rcu, prefilled) from the objects
      // off the slab freelists: what is left is exactly what we hold.
      CHECK(l.in_use == static_cast<std::int64_t>(held_[c].size()));
      CHECK(l.slabs == s.slabs_allocated);
      std::int64_t total_objects = 0;
      for (const auto& n : s.node) total_objects += n.total_objects;
      CHECK(l.in_use + l.cpu_freelist + l.cpu_partial + l.node_partial + l.sheaves + l.barn + l.rcu + l.prefilled ==
            total_objects);
      CHECK(l.sheaves >= 0);
      CHECK(l.barn >= 0);
      CHECK(l.rcu >= 0);
      if (s.sheaf_capacity) {
        std::int64_t in_oversize = 0;
        for (const Prefilled& pf : prefilled_)
          if (pf.cache == c && pf.sheaf->oversize) ++in_oversize;
        // Mains (not counted as SHEAF_ALLOC) + counted sheaves + oversize prefilled sheaves.
        CHECK(l.sheaf_structs == cpus_ + static_cast<std::int64_t>(s.stats[int(Stat::SHEAF_ALLOC)] -
                                                                    s.stats[int(Stat::SHEAF_FREE)]) +
                                     in_oversize);
        for (const PercpuSheaves& pcs : s.pcs) {
          REQUIRE(pcs.main != nullptr);
          CHECK(pcs.main->size() <= pcs.main->capacity);
          if (pcs.spare) CHECK(pcs.spare->size() <= pcs.spare->capacity);
          if (pcs.rcu_free) CHECK(pcs.rcu_free->size() < pcs.rcu_free->capacity);
        }
        for (const auto& n : s.node) {
          for (const Sheaf* sh : n.barn.full) CHECK(sh->full());
          for (const Sheaf* sh : n.barn.empty) CHECK(sh->empty());
        }
      } else {
        CHECK(l.sheaves == 0);
        CHECK(l.barn == 0);
        CHECK(l.sheaf_structs == 0);
      }
      slab_pages += l.slab_bytes / static_cast<std::int64_t>(kPageSize);
    }
    std::int64_t accounted = 0;
    for (int n = 0; n < cfg_.nodes; ++n)
      accounted += slub_->pages().total_pages(n) - slub_->pages().free_pages(n) - slub_->pages().pcp_pages(n);
    CHECK(accounted == slab_pages);
    // /proc/vmstat's pgalloc and pgfree: every page handed out and not yet taken back is a
    // slab page.
    CHECK(static_cast<std::int64_t>(slub_->pages().pgalloc() - slub_->pages().pgfree()) == slab_pages);
    CHECK_FALSE(sh_.any_held());
  }

  Config cfg_;
  Random rng_;
  int cpus_ = 0;
  ImmediateShared sh_;
  std::unique_ptr<Slub> slub_;
  std::vector<std::unique_ptr<ImmediateExec>> ex_;
  std::vector<std::vector<Held>> held_;
  std::vector<Prefilled> prefilled_;
  std::vector<std::uint64_t> allocated_, oversize_filled_, freed_;
  std::int64_t oversize_held_ = 0;
  std::unordered_set<void*> live_;
  std::uint64_t next_tag_ = 1;
};

StatCounters sum_stats(Slub& slub) {
  StatCounters t{};
  for (int c = 0; c < slub.nr_caches(); ++c)
    for (int i = 0; i < kNrStats; ++i) t[i] += slub.cache(c).stats[i];
  return t;
}

void sweep(FrontendKind fe, int ops) {
  StatCounters total{}, small_barn{};
  int runs = 0;
  for (int patches = 0; patches < 8; ++patches)
    for (bool random : {false, true})
      for (int nodes = 2; nodes <= 4; ++nodes)
        for (int rep = 0; rep < 2; ++rep) {
        Config cfg{fe,
                   nodes,
                   (patches & 1) != 0,
                   (patches & 2) != 0,
                   (patches & 4) != 0,
                   random,
                   ((patches + nodes + rep) & 1) != 0,
                   static_cast<std::uint64_t>(1 + patches * 16 + random * 8 + nodes + 1000 * rep)};
        INFO((fe == FrontendKind::Sheaves ? "7.0" : "6.18") << ", " << nodes << " nodes, spare-sheaf "
             << cfg.spare_sheaf << ", remote-refill-trylock " << cfg.remote_trylock << ", skip-freelist "
             << cfg.skip_freelist << ", freelist_random " << random << ", small barn " << cfg.small_barn
             << ", seed " << cfg.seed);
        Runner r(cfg);
        r.run(ops);
        r.teardown();
        auto st = sum_stats(r.slub());
        for (int i = 0; i < kNrStats; ++i) {
          total[i] += st[i];
          if (cfg.small_barn) small_barn[i] += st[i];
        }
        ++runs;
      }
  CHECK(runs == 96);
  if (std::getenv("SLUB_RANDOM_STATS"))
    for (int i = 0; i < kNrStats; ++i) MESSAGE(std::string(stat_name(static_cast<Stat>(i))) << " " << total[i]);
  // The runs reach every sheaf path that needs no contention or memory pressure.
  std::vector<Stat> reached = {Stat::FREE_RCU_SHEAF, Stat::SHEAF_FLUSH, Stat::SHEAF_REFILL, Stat::SHEAF_ALLOC,
                               Stat::SHEAF_FREE, Stat::BARN_GET, Stat::BARN_GET_FAIL, Stat::BARN_PUT,
                               Stat::BARN_PUT_FAIL, Stat::SHEAF_PREFILL_FAST, Stat::SHEAF_PREFILL_SLOW,
                               Stat::SHEAF_PREFILL_OVERSIZE, Stat::SHEAF_RETURN_FAST, Stat::SHEAF_RETURN_SLOW,
                               Stat::ALLOC_SLOWPATH, Stat::FREE_SLOWPATH, Stat::ALLOC_SLAB, Stat::FREE_SLAB,
                               Stat::FREE_ADD_PARTIAL, Stat::FREE_REMOVE_PARTIAL, Stat::ALLOC_NODE_MISMATCH,
                               Stat::ALLOC_FASTPATH, Stat::FREE_FASTPATH};
  if (fe == FrontendKind::SheavesOnCpuPartial)
    for (Stat st : {Stat::ALLOC_PCS, Stat::FREE_PCS, Stat::CPU_PARTIAL_FREE, Stat::FREE_FROZEN, Stat::CPUSLAB_FLUSH})
      reached.push_back(st);
  for (Stat st : reached) {
    INFO(std::string(stat_name(st)));
    CHECK(total[static_cast<int>(st)] > 0);
  }
  if (fe == FrontendKind::Sheaves) {
    // 7.0 has no cpu slabs: none of their counters move.
    for (Stat st : {Stat::ALLOC_PCS, Stat::FREE_PCS, Stat::CPU_PARTIAL_FREE, Stat::CPU_PARTIAL_ALLOC,
                    Stat::FREE_FROZEN, Stat::CPUSLAB_FLUSH, Stat::DEACTIVATE_FULL, Stat::ALLOC_REFILL,
                    Stat::ALLOC_FROM_PARTIAL}) {
      INFO(std::string(stat_name(st)));
      CHECK(total[static_cast<int>(st)] == 0);
    }
  }
  CHECK(small_barn[static_cast<int>(Stat::BARN_PUT_FAIL)] > 0);
}

}  // namespace

TEST_CASE("sheaf random: 7.0 sheaves for all, every patch combination") { sweep(FrontendKind::Sheaves, 2000); }

TEST_CASE("sheaf random: 6.18 sheaves on cpu slabs, sheaf and non-sheaf caches mixed") {
  sweep(FrontendKind::SheavesOnCpuPartial, 2000);
}
