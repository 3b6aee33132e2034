// Acceptance: hand-checked sequences on the sheaf front-ends. With capacity 4, the SLUB_STATS
// counters after the first allocations on an empty CPU match what slub-algorithms.md says
// (§4.3 7.0 allocation, §4.4 refill, §4.5 free, §4.6 kfree_rcu, §4.7 prefill, §4.11 stats; §3.2,
// §3.3 for 6.18), and the spare-sheaf patch
// (docs/reference/seeds/zhao-liu-spare-sheaf-and-capacity.txt) removes the barn round trip it was
// written to remove.
//
// Setup, 2 nodes and 4 CPUs (CPUs 0, 1 on node 0; 2, 3 on node 1), no freelist randomisation,
// remote_node_defrag_ratio 1024 (the any-node passes always run, so counts do not depend on it):
//   7.0  (Sheaves)             kmalloc-4k, object 4096: capacity 4 (§4.2 row >= PAGE_SIZE).
//        calculate_order on 4 CPUs: min_objects 4 * (fls(4) + 1) = 16, capped at the 8 objects
//        an order-3 slab holds: order 3, 8 objects per slab; min_partial ilog2(4096)/2 = 6.
//   6.18 (SheavesOnCpuPartial) sheaf-256, object 256, sheaf_capacity 4 (used exactly, §3.1):
//        order 0, 16 objects per slab, min_partial 5, cpu_partial 52 -> 7 slabs.
// Counters are compared as deltas over one step; every counter not named must stay unchanged.
// Barn and list_lock acquisitions are counted per lock by the test's Exec.
#include <functional>
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/immediate.h"
#include "models/slub/slub.h"

using namespace slubsim;
using namespace slubsim::slub;

namespace {

constexpr Time kGrace = 1'000'000;  // 1 us grace period

// ImmediateExec, plus a count of acquisitions per spinlock.
class CountingExec final : public Exec {
 public:
  CountingExec(ImmediateShared& sh, int cpu, int node) : Exec(cpu, node), sh_(sh) {}
  std::map<std::uint32_t, std::uint64_t> acquired;

 protected:
  bool begin(const Request& r) override {
    result_ = true;
    switch (r.kind) {
      case Req::SpinLock:
        sh_.lock(r.id, cpu_, false);
        ++acquired[r.id];
        break;
      case Req::SpinTrylock:
        result_ = sh_.lock(r.id, cpu_, true);
        if (result_) ++acquired[r.id];
        break;
      case Req::SpinUnlock: sh_.unlock(r.id, cpu_); break;
      default: break;
    }
    return true;
  }
  void park(std::coroutine_handle<>) override { throw std::logic_error("counting exec: request not granted"); }

 private:
  ImmediateShared& sh_;
};

struct Rig {
  ImmediateShared sh;
  std::unique_ptr<Slub> slub;
  std::vector<std::unique_ptr<CountingExec>> ex;
  FrontendKind fe;

  // Sheaves: kmalloc-4k. SheavesOnCpuPartial / CpuPartial: sheaf-256 with sheaf_capacity 4.
  Rig(FrontendKind f, bool spare_sheaf, std::uint32_t barn_max_full = 10,
      std::int64_t node_pages = 1 << 14, std::uint32_t barn_max_empty = 10, Time dram = 0,
      const std::function<void(Params&)>& adjust = {})
      : fe(f) {
    Params p;
    CacheSpec c;
    if (f == FrontendKind::Sheaves) {
      c.name = "kmalloc-4k";
      c.object_size = 4096;
    } else {
      c.name = "sheaf-256";
      c.object_size = 256;
      c.sheaf_capacity = 4;
    }
    p.caches = {c};
    p.numa.nr_cpus = 4;
    p.numa.nr_nodes = 2;
    p.numa.cpu_node = {0, 0, 1, 1};
    p.numa.node_pages = {node_pages, node_pages};
    p.numa.fallback = {{0, 1}, {1, 0}};
    p.features.frontend = f;
    p.features.freelist_random = false;
    p.features.remote_node_defrag_ratio = 1024;
    p.features.spare_sheaf = spare_sheaf;
    p.features.barn_max_full = barn_max_full;
    p.features.barn_max_empty = barn_max_empty;
    if (node_pages < (1 << 14)) {
      p.page_alloc.pcp_batch = 1;
      p.page_alloc.pcp_high = 1;
    }
    p.rcu_grace_period = kGrace;
    if (dram > 0) p.numa.memory_latency = {{dram, dram}, {dram, dram}};
    p.validate = true;
    if (adjust) adjust(p);
    slub = std::make_unique<Slub>(sh, p);
    for (int i = 0; i < 4; ++i) ex.push_back(std::make_unique<CountingExec>(sh, i, p.numa.cpu_node[i]));
  }

  KmemCache& s() { return slub->cache(0); }
  CountingExec& e(int cpu) { return *ex[cpu]; }
  PercpuSheaves& pcs(int cpu) { return s().pcs[cpu]; }
  Barn& barn(int node) { return s().node[node].barn; }
  Slab* slab_of(void* o) { return slub->virt_to_slab(o); }
  void* alloc(int cpu, int node = kNoNode) { return run_now(slub->alloc(e(cpu), s(), node)); }
  void free(int cpu, void* o) { run_now(slub->free(e(cpu), s(), o)); }
  void flush(int cpu) { run_now(slub->flush_cpu(e(cpu), s(), cpu)); }
  void kfree_rcu(int cpu, void* o) { run_now(slub->kfree_rcu(e(cpu), s(), o)); }
  void tick(int cpu) { run_now(slub->rcu_tick(e(cpu))); }
  // Move CPU cpu's clock to `delta` before the moment its newest callback becomes ready.
  void until_ready(int cpu, Time delta = 0) {
    Time ready = slub->rcu().ready_time(cpu, slub->rcu().pending(cpu).size() - 1);
    e(cpu).spend(ready - delta - e(cpu).now());
  }
  // Move CPU cpu's clock to its newest callback's readiness, run one tick there, and return the
  // time the tick took (the callbacks it ran).
  Time tick_when_ready(int cpu) {
    until_ready(cpu);
    const Time before = e(cpu).now();
    tick(cpu);
    return e(cpu).now() - before;
  }

  std::uint64_t locks_of(SpinLockId id) {
    std::uint64_t n = 0;
    for (auto& x : ex) {
      auto it = x->acquired.find(id.v);
      if (it != x->acquired.end()) n += it->second;
    }
    return n;
  }
  std::uint64_t barn_locks(int node = 0) { return locks_of(s().node[node].barn.lock); }
  std::uint64_t list_locks(int node = 0) { return locks_of(s().node[node].list_lock); }

  // Everything back: free what the test still holds, run the pending RCU callbacks, flush
  // every CPU on itself, shrink (barn_shrink), flush and shrink again (a 6.18 barn flush can
  // leave slabs on the shrinking CPU's partial list), and check that all pages are back.
  void release(std::vector<void*>& held) {
    for (void* o : held)
      if (o) free(0, o);
    held.clear();
    run_now(slub->rcu_barrier(e(0)));
    slub->check();
    for (int pass = 0; pass < 2; ++pass) {
      for (int c = 0; c < 4; ++c) flush(c);
      run_now(slub->shrink(e(0), s()));
    }
    slub->check();
    CHECK(s().slabs_allocated == 0);
    CHECK(slub->total_slab_bytes() == 0);
    LayerCounts l = slub->layers(s());
    CHECK(l.sheaves == 0);
    CHECK(l.barn == 0);
    CHECK(l.rcu == 0);
    CHECK(s().stats[int(Stat::ALLOC_SLAB)] == s().stats[int(Stat::FREE_SLAB)]);
    for (int n = 0; n < 2; ++n) {
      CHECK(barn(n).nr_full() == 0);
      CHECK(barn(n).nr_empty() == 0);
      CHECK(slub->pages().free_pages(n) + slub->pages().pcp_pages(n) == slub->pages().total_pages(n));
    }
    CHECK_FALSE(sh.any_held());
  }
};

using Expect = std::map<Stat, std::uint64_t>;

// Every counter moved by exactly what `want` says (absent = unchanged).
void check_delta(const StatCounters& before, const StatCounters& after, const Expect& want) {
  for (int i = 0; i < kNrStats; ++i) {
    auto st = static_cast<Stat>(i);
    auto it = want.find(st);
    std::uint64_t expected = it == want.end() ? 0 : it->second;
    INFO("counter " << std::string(stat_name(st)));
    CHECK(after[i] - before[i] == expected);
  }
}

// One step: run f, then compare counter deltas and barn / list_lock acquisitions on node 0.
template <class F>
void step(Rig& r, const char* what, F&& f, const Expect& want, std::uint64_t barn_locks,
          std::uint64_t list_locks) {
  INFO(std::string(what));
  auto before = r.s().stats;
  auto b0 = r.barn_locks(0), l0 = r.list_locks(0);
  f();
  check_delta(before, r.s().stats, want);
  CHECK(r.barn_locks(0) - b0 == barn_locks);
  CHECK(r.list_locks(0) - l0 == list_locks);
}

// Object i of the slab (address order, as no freelist randomisation is configured).
void* obj(Slab* slab, std::uint32_t i) { return slab->object(i); }

}  // namespace

TEST_CASE("sheaf sequences: geometry of the test caches") {
  {
    Rig r(FrontendKind::Sheaves, true);
    CHECK(r.s().sheaf_capacity == 4);
    CHECK(r.s().geo.order == 3);
    CHECK(r.s().geo.objects == 8);
    CHECK(r.s().geo.min_partial == 6);
  }
  {
    Rig r(FrontendKind::SheavesOnCpuPartial, false);
    CHECK(r.s().sheaf_capacity == 4);
    CHECK(r.s().geo.order == 0);
    CHECK(r.s().geo.objects == 16);
    CHECK(r.s().geo.min_partial == 5);
    CHECK(r.s().geo.cpu_partial_slabs == 7);
  }
}

TEST_CASE("sheaf sequences: 7.0 first allocations on an empty CPU, then frees through spare and barn") {
  // 7.0 has the spare-sheaf patch (configs/kernels/v7.0.json).
  Rig r(FrontendKind::Sheaves, true);
  std::vector<void*> held;
  Sheaf* const main0 = r.pcs(0).main;

  // Alloc 1. alloc_from_pcs: main empty, no spare -> __pcs_replace_empty_main (§4.3):
  //  step 4 barn_replace_empty_sheaf: racy nr_full == 0, no lock             BARN_GET_FAIL 1
  //  step 6 vessel: no spare; barn_get_empty_sheaf: racy nr_empty == 0, no lock
  //  step 7 alloc_full_sheaf: kzalloc a sheaf                                SHEAF_ALLOC 1
  //         refill_objects(4, 4) (§4.4): node 0 has no partial slab (racy pre-check, no lock);
  //         __refill_objects_any skips nodes with nr_partial <= min_partial; a new local slab
  //         S1 (ALLOC_SLAB 1); alloc_from_new_slab hands out objects 0..3 and puts S1 with the
  //         other 4 on node 0's partial list at the head (list_lock once)   SHEAF_REFILL 4
  //         (a sheaf refill counts no ALLOC_SLOWPATH: that is __kmem_cache_alloc_bulk's, §4.11)
  //  step 8 main is empty and there is no spare: the empty main becomes the spare (no barn).
  //  Pop the top of the new main: object 3 (LIFO)                            ALLOC_FASTPATH 1
  step(r, "alloc 1", [&] { held.push_back(r.alloc(0)); },
       {{Stat::BARN_GET_FAIL, 1}, {Stat::SHEAF_ALLOC, 1}, {Stat::ALLOC_SLAB, 1},
        {Stat::SHEAF_REFILL, 4}, {Stat::ALLOC_FASTPATH, 1}},
       0, 1);
  Slab* s1 = r.slab_of(held[0]);
  CHECK(held[0] == obj(s1, 3));
  CHECK(r.pcs(0).spare == main0);
  CHECK(r.pcs(0).spare->empty());
  CHECK(r.pcs(0).main->size() == 3);
  CHECK(s1->on_partial);
  CHECK(s1->inuse == 4);
  {
    LayerCounts l = r.slub->layers(r.s());
    CHECK(l.sheaves == 3);
    CHECK(l.node_partial == 4);
    CHECK(l.in_use == 1);
    CHECK(l.sheaf_structs == 5);  // 4 mains + the new one
  }

  // Allocs 2-4: pops from main, objects 2, 1, 0.
  for (std::uint32_t i = 2; i <= 4; ++i) {
    step(r, "allocs 2-4", [&] { held.push_back(r.alloc(0)); }, {{Stat::ALLOC_FASTPATH, 1}}, 0, 0);
    CHECK(held.back() == obj(s1, 4 - i));
  }
  CHECK(r.pcs(0).main->empty());

  // Alloc 5. main and spare empty: no swap. BARN_GET_FAIL again (nr_full 0). The vessel is the
  // (empty) spare. refill_objects: get_partial_node_bulk takes S1 (4 free >= 4) under one
  // list_lock hold; get_freelist_nofreeze takes all 4, nothing to give back. The emptied main
  // becomes the spare again: no barn lock anywhere.
  const ReuseCounters reuse = r.s().reuse;
  step(r, "alloc 5", [&] { held.push_back(r.alloc(0)); },
       {{Stat::BARN_GET_FAIL, 1}, {Stat::SHEAF_REFILL, 4}, {Stat::ALLOC_FASTPATH, 1}}, 0, 1);
  CHECK(held.back() == obj(s1, 7));  // S1's freelist was 4, 5, 6, 7
  // Slab reuse: S1 was taken back from the partial list with 4 of its 8 objects in use.
  CHECK(r.s().reuse[int(Reuse::TAKEN_IN_USE)] - reuse[int(Reuse::TAKEN_IN_USE)] == 1);
  CHECK(r.s().reuse[int(Reuse::TAKEN_EMPTY)] == reuse[int(Reuse::TAKEN_EMPTY)]);
  CHECK(r.s().reuse[int(Reuse::TAKEN_FREE_OBJECTS)] - reuse[int(Reuse::TAKEN_FREE_OBJECTS)] == 4);
  CHECK(r.pcs(0).main == main0);
  CHECK(r.pcs(0).spare != nullptr);
  CHECK(r.pcs(0).spare->empty());
  CHECK_FALSE(s1->on_partial);
  CHECK(s1->inuse == 8);

  // Allocs 6-16: the same cycle. Every 4th allocation refills: 9 from a new slab S2 (list_lock
  // for its add_partial), 13 from S2 on the partial list (list_lock for the bulk grab).
  for (int i = 6; i <= 16; ++i) {
    if (i == 9)
      step(r, "alloc 9", [&] { held.push_back(r.alloc(0)); },
           {{Stat::BARN_GET_FAIL, 1}, {Stat::ALLOC_SLAB, 1}, {Stat::SHEAF_REFILL, 4}, {Stat::ALLOC_FASTPATH, 1}},
           0, 1);
    else if (i == 13)
      step(r, "alloc 13", [&] { held.push_back(r.alloc(0)); },
           {{Stat::BARN_GET_FAIL, 1}, {Stat::SHEAF_REFILL, 4}, {Stat::ALLOC_FASTPATH, 1}}, 0, 1);
    else
      step(r, "fast allocs", [&] { held.push_back(r.alloc(0)); }, {{Stat::ALLOC_FASTPATH, 1}}, 0, 0);
  }
  CHECK(r.s().slabs_allocated == 2);
  CHECK(r.s().stats[int(Stat::SHEAF_ALLOC)] == 1);
  CHECK(r.barn(0).nr_full() == 0);
  CHECK(r.barn(0).nr_empty() == 0);
  r.slub->check();

  // Frees, in allocation order, on CPU 0 (all local). free_to_pcs (§4.5):
  //  1-4   into main                                                        FREE_FASTPATH 1 each
  //  5     main full, spare empty: swap, no lock                            FREE_FASTPATH 1
  //  6-8   into the new main; now main and spare are both full.
  //  9     __pcs_replace_full_main: barn_replace_full_sheaf pre-checks: nr_full 0 < 10, but
  //        nr_empty == 0 -> -ENOMEM (no lock); alloc_empty_sheaf (SHEAF_ALLOC 1); then
  //        __pcs_install_empty_sheaf with main and spare full: barn_put_full_sheaf(main) with the
  //        limit ignored (barn lock, BARN_PUT 1), main = the new sheaf       FREE_FASTPATH 1
  //  10-12 into main; 13 as 9 (a second full sheaf in the barn); 14-16 into main.
  const std::vector<void*> freed = held;  // in free order
  for (int i = 1; i <= 16; ++i) {
    void* o = held[i - 1];
    held[i - 1] = nullptr;
    if (i == 9 || i == 13)
      step(r, "free 9 / 13", [&] { r.free(0, o); },
           {{Stat::SHEAF_ALLOC, 1}, {Stat::BARN_PUT, 1}, {Stat::FREE_FASTPATH, 1}}, 1, 0);
    else
      step(r, "frees to main / spare", [&] { r.free(0, o); }, {{Stat::FREE_FASTPATH, 1}}, 0, 0);
  }
  held.clear();
  CHECK(r.barn(0).nr_full() == 2);
  CHECK(r.barn(0).nr_empty() == 0);
  CHECK(r.pcs(0).main->full());
  CHECK(r.pcs(0).spare->full());
  {
    LayerCounts l = r.slub->layers(r.s());
    CHECK(l.sheaves == 8);
    CHECK(l.barn == 8);
    CHECK(l.in_use == 0);
    CHECK(l.node_partial == 0);  // both slabs are "full": every object is in a sheaf
    CHECK(l.sheaf_structs == 7);
  }
  r.slub->check();

  // Allocate 9 again: 1-4 from main, 5 swaps in the full spare (no lock), 6-8 from it; 9 finds
  // both empty and takes a full sheaf from the barn for the empty main (barn lock, BARN_GET).
  for (int i = 1; i <= 9; ++i) {
    if (i == 9)
      step(r, "alloc from the barn", [&] { held.push_back(r.alloc(0)); },
           {{Stat::BARN_GET, 1}, {Stat::ALLOC_FASTPATH, 1}}, 1, 0);
    else
      step(r, "allocs from main and spare", [&] { held.push_back(r.alloc(0)); }, {{Stat::ALLOC_FASTPATH, 1}}, 0, 0);
  }
  // The barn's lists are last in, first out (list_add at the head, list_first_entry): the sheaf
  // taken is the one free 13 put (frees 9-12), not free 9's (frees 5-8); its top is free 12's.
  CHECK(held[8] == freed[11]);
  CHECK(r.barn(0).nr_full() == 1);
  CHECK(r.barn(0).nr_empty() == 1);
  // Free them: 1 fills main (3 + 1), 2 swaps with the empty spare, 3-5 fill it; 6 finds both
  // full and exchanges main for the barn's empty sheaf (barn_replace_full_sheaf: barn lock,
  // BARN_PUT); 7-9 into the new main.
  for (int i = 1; i <= 9; ++i) {
    void* o = held[i - 1];
    held[i - 1] = nullptr;
    if (i == 6)
      step(r, "free 6: barn exchange", [&] { r.free(0, o); }, {{Stat::BARN_PUT, 1}, {Stat::FREE_FASTPATH, 1}}, 1, 0);
    else
      step(r, "frees", [&] { r.free(0, o); }, {{Stat::FREE_FASTPATH, 1}}, 0, 0);
  }
  held.clear();
  CHECK(r.barn(0).nr_full() == 2);
  CHECK(r.barn(0).nr_empty() == 0);
  CHECK(r.s().stats[int(Stat::SHEAF_ALLOC)] == 3);

  // Flush CPU 0 (§4.9 pcs_flush_all): the spare is flushed (4) and freed, main flushed (4).
  // Sheaf flushes are not FREE_SLOWPATH in 7.0 (§4.11); the barn keeps its 8.
  auto before = r.s().stats;
  r.flush(0);
  CHECK(r.s().stats[int(Stat::SHEAF_FLUSH)] - before[int(Stat::SHEAF_FLUSH)] == 8);
  CHECK(r.s().stats[int(Stat::SHEAF_FREE)] - before[int(Stat::SHEAF_FREE)] == 1);
  CHECK(r.s().stats[int(Stat::FREE_SLOWPATH)] == before[int(Stat::FREE_SLOWPATH)]);
  CHECK(r.pcs(0).spare == nullptr);
  CHECK(r.pcs(0).main->empty());
  CHECK(r.slub->layers(r.s()).barn == 8);
  r.release(held);
  // Every sheaf struct allocated is either freed or still a main or sitting empty... all gone
  // but the 4 mains after the shrink.
  CHECK(r.slub->layers(r.s()).sheaf_structs == 4);
  CHECK(r.s().stats[int(Stat::SHEAF_ALLOC)] - r.s().stats[int(Stat::SHEAF_FREE)] == 0);
}

TEST_CASE("sheaf sequences: 7.0 a full barn refuses the sheaf: BARN_PUT_FAIL and the spare is flushed") {
  // barn_max_full = 1. Allocate 16 (two slabs, as above): objects o1..o4 = S1 3,2,1,0;
  // o5..o8 = S1 7,6,5,4; o9..o16 the same of S2. Free them in that order on CPU 0.
  Rig r(FrontendKind::Sheaves, true, 1);
  std::vector<void*> held;
  for (int i = 0; i < 16; ++i) held.push_back(r.alloc(0));
  Slab* s1 = r.slab_of(held[0]);
  REQUIRE(r.s().slabs_allocated == 2);
  for (int i = 1; i <= 16; ++i) {
    void* o = held[i - 1];
    held[i - 1] = nullptr;
    if (i == 9) {
      // As before: no empty sheaf in the barn (-ENOMEM; the -E2BIG pre-check sees nr_full 0 < 1),
      // a new sheaf, and install_empty puts the full main (o5..o8) into the barn, limit ignored.
      step(r, "free 9", [&] { r.free(0, o); }, {{Stat::SHEAF_ALLOC, 1}, {Stat::BARN_PUT, 1}, {Stat::FREE_FASTPATH, 1}}, 1, 0);
    } else if (i == 13) {
      // main (o9..o12) and spare (o1..o4) full; racy nr_full 1 >= 1 -> -E2BIG, no lock:
      // BARN_PUT_FAIL, the spare is flushed (SHEAF_FLUSH 4): o1..o4 are one detached freelist
      // of S1, which was full, so __slab_free takes node 0's list_lock and adds S1 at the tail
      // (FREE_ADD_PARTIAL; no FREE_SLOWPATH for a flush). The flushed sheaf is installed as
      // main (spare = the full main), and o13 goes into it.
      step(r, "free 13", [&] { r.free(0, o); },
           {{Stat::BARN_PUT_FAIL, 1}, {Stat::SHEAF_FLUSH, 4}, {Stat::FREE_ADD_PARTIAL, 1}, {Stat::FREE_FASTPATH, 1}},
           0, 1);
    } else {
      step(r, "frees", [&] { r.free(0, o); }, {{Stat::FREE_FASTPATH, 1}}, 0, 0);
    }
  }
  held.clear();
  CHECK(r.barn(0).nr_full() == 1);
  CHECK(s1->on_partial);
  CHECK(s1->inuse == 4);
  LayerCounts l = r.slub->layers(r.s());
  CHECK(l.sheaves == 8);
  CHECK(l.barn == 4);
  CHECK(l.node_partial == 4);
  CHECK(l.in_use == 0);
  r.slub->check();
  r.release(held);
}

TEST_CASE("sheaf sequences: 7.0 remote frees and remote node requests bypass the sheaves") {
  Rig r(FrontendKind::Sheaves, true);
  std::vector<void*> held;
  // CPU 0 allocates 5: S1 is full (4 handed out by the first refill, 4 by the second); CPU 0's
  // main holds 3 of them.
  for (int i = 0; i < 5; ++i) held.push_back(r.alloc(0));
  Slab* s1 = r.slab_of(held[0]);
  REQUIRE(s1->inuse == 8);
  REQUIRE_FALSE(s1->on_partial);

  // CPU 2 (node 1) frees o1 of node 0: slab_free sees slab_nid != numa_mem_id and skips
  // free_to_pcs: __slab_free + FREE_SLOWPATH (§4.5). S1 was full: node 0's list_lock, add at
  // the tail (FREE_ADD_PARTIAL). CPU 2's sheaves are untouched.
  step(r, "remote free into a full slab", [&] { r.free(2, held[0]); },
       {{Stat::FREE_SLOWPATH, 1}, {Stat::FREE_ADD_PARTIAL, 1}}, 0, 1);
  held[0] = nullptr;
  CHECK(s1->on_partial);
  CHECK(r.pcs(2).main->empty());
  CHECK(r.pcs(2).spare == nullptr);
  // o2: S1 is partial now: a lockless __slab_free.
  step(r, "remote free into a partial slab", [&] { r.free(2, held[1]); }, {{Stat::FREE_SLOWPATH, 1}}, 0, 0);
  held[1] = nullptr;
  CHECK(r.pcs(2).main->empty());

  // CPU 0 asks for node 1: alloc_from_pcs counts ALLOC_NODE_MISMATCH before the trylock and
  // returns NULL; ___slab_alloc (ALLOC_SLOWPATH) with __GFP_THISNODE on the first pass: node 1
  // has no partial slab, a new node-1 slab T (ALLOC_SLAB), one object handed out, T goes on
  // node 1's partial list. CPU 0's sheaves are untouched (main still holds 3).
  auto b1 = r.barn_locks(1), l1 = r.list_locks(1);
  void* t1 = nullptr;
  step(r, "node 1 requested from node 0", [&] { t1 = r.alloc(0, 1); },
       {{Stat::ALLOC_NODE_MISMATCH, 1}, {Stat::ALLOC_SLOWPATH, 1}, {Stat::ALLOC_SLAB, 1}}, 0, 0);
  CHECK(r.slab_of(t1)->node == 1);
  CHECK(r.list_locks(1) - l1 == 1);
  CHECK(r.pcs(0).main->size() == 3);
  // Again: one object from T on node 1's partial list, one list_lock hold per object (§4.3).
  void* t2 = nullptr;
  step(r, "node 1 again", [&] { t2 = r.alloc(0, 1); }, {{Stat::ALLOC_NODE_MISMATCH, 1}, {Stat::ALLOC_SLOWPATH, 1}}, 0, 0);
  CHECK(r.slab_of(t2) == r.slab_of(t1));
  CHECK(r.list_locks(1) - l1 == 2);
  CHECK(r.barn_locks(1) == b1);
  // A request for the local node uses the sheaves when main's top object is on it.
  void* local = nullptr;
  step(r, "node 0 requested from node 0", [&] { local = r.alloc(0, 0); }, {{Stat::ALLOC_FASTPATH, 1}}, 0, 0);
  CHECK(r.slab_of(local)->node == 0);
  held.push_back(local);
  // CPU 0 frees the node-1 objects: remote, FREE_SLOWPATH, lockless (T stays partial).
  step(r, "remote free of a node-1 object", [&] { r.free(0, t1); }, {{Stat::FREE_SLOWPATH, 1}}, 0, 0);
  CHECK(r.pcs(0).main->size() == 2);
  // CPU 2 frees the other: local to node 1, into CPU 2's main sheaf.
  step(r, "local free on node 1", [&] { r.free(2, t2); }, {{Stat::FREE_FASTPATH, 1}}, 0, 0);
  CHECK(r.pcs(2).main->size() == 1);
  r.slub->check();
  r.release(held);
}

TEST_CASE("sheaf sequences: 6.18 first allocations refill through the cpu slab; alloc_cpu_sheaf, free_cpu_sheaf") {
  // 6.18 has no spare-sheaf patch: the emptied main always goes to the barn (§3.2).
  Rig r(FrontendKind::SheavesOnCpuPartial, false);
  std::vector<void*> held;

  // Alloc 1. alloc_from_pcs: main empty, no spare; barn_replace_empty_sheaf: nr_full 0
  // (BARN_GET_FAIL); no empty sheaf in the barn; a new sheaf (SHEAF_ALLOC). refill_sheaf ->
  // __kmem_cache_alloc_bulk of the cpu-slab layer (§3.2): the cpu freelist is empty, so
  // ___slab_alloc (ALLOC_SLOWPATH) gets a new slab S1 (ALLOC_SLAB) as CPU 0's cpu slab and
  // returns object 0; objects 1-3 come off the cpu freelist (ALLOC_FASTPATH 3). SHEAF_REFILL 4.
  // The empty main goes into the barn (barn lock). The pop counts ALLOC_PCS (alloc_cpu_sheaf).
  step(r, "alloc 1", [&] { held.push_back(r.alloc(0)); },
       {{Stat::BARN_GET_FAIL, 1}, {Stat::SHEAF_ALLOC, 1}, {Stat::ALLOC_SLOWPATH, 1}, {Stat::ALLOC_SLAB, 1},
        {Stat::ALLOC_FASTPATH, 3}, {Stat::SHEAF_REFILL, 4}, {Stat::ALLOC_PCS, 1}},
       1, 0);
  Slab* s1 = r.slab_of(held[0]);
  CHECK(held[0] == obj(s1, 3));
  CHECK(r.s().cpu[0].slab == s1);
  CHECK(s1->frozen);
  CHECK(r.pcs(0).spare == nullptr);
  CHECK(r.barn(0).nr_empty() == 1);
  {
    LayerCounts l = r.slub->layers(r.s());
    CHECK(l.sheaves == 3);
    CHECK(l.cpu_freelist == 12);  // double caching: 12 more on the cpu freelist
    CHECK(l.in_use == 1);
  }
  for (int i = 2; i <= 4; ++i)
    step(r, "allocs 2-4", [&] { held.push_back(r.alloc(0)); }, {{Stat::ALLOC_PCS, 1}}, 0, 0);

  // Allocs 5, 9, 13: the vessel is the barn's empty sheaf (barn lock), filled from the cpu
  // freelist (ALLOC_FASTPATH 4), and the emptied main goes back to the barn (barn lock).
  for (int i = 5; i <= 16; ++i) {
    if (i % 4 == 1)
      step(r, "refill from the cpu freelist", [&] { held.push_back(r.alloc(0)); },
           {{Stat::BARN_GET_FAIL, 1}, {Stat::ALLOC_FASTPATH, 4}, {Stat::SHEAF_REFILL, 4}, {Stat::ALLOC_PCS, 1}}, 2, 0);
    else
      step(r, "pops", [&] { held.push_back(r.alloc(0)); }, {{Stat::ALLOC_PCS, 1}}, 0, 0);
  }
  CHECK(held[4] == obj(s1, 7));
  CHECK(r.s().cpu[0].freelist == nullptr);
  // Alloc 17: the cpu freelist is empty and S1 has no free object: ___slab_alloc drops it
  // (DEACTIVATE_BYPASS) and takes a new slab S2 (ALLOC_SLAB); 3 more from its freelist.
  step(r, "alloc 17", [&] { held.push_back(r.alloc(0)); },
       {{Stat::BARN_GET_FAIL, 1}, {Stat::ALLOC_SLOWPATH, 1}, {Stat::DEACTIVATE_BYPASS, 1}, {Stat::ALLOC_SLAB, 1},
        {Stat::ALLOC_FASTPATH, 3}, {Stat::SHEAF_REFILL, 4}, {Stat::ALLOC_PCS, 1}},
       2, 0);
  Slab* s2 = r.slab_of(held[16]);
  CHECK(s2 != s1);
  CHECK(held[16] == obj(s2, 3));
  CHECK_FALSE(s1->frozen);
  CHECK(r.pcs(0).main->size() == 3);  // S2 objects 0, 1, 2

  // Frees (o1 = S1 obj 3, o2..o4 = S1 2, 1, 0, o5 = S1 7) on CPU 0, all local:
  //  o1 fills main (FREE_PCS = free_cpu_sheaf); o2: main full, no spare: barn_get_empty_sheaf
  //  (barn lock), spare = main; o3..o5 fill the new main.
  step(r, "free o1", [&] { r.free(0, held[0]); }, {{Stat::FREE_PCS, 1}}, 0, 0);
  step(r, "free o2", [&] { r.free(0, held[1]); }, {{Stat::FREE_PCS, 1}}, 1, 0);
  for (int i = 2; i < 5; ++i) step(r, "free o3..o5", [&] { r.free(0, held[i]); }, {{Stat::FREE_PCS, 1}}, 0, 0);
  for (int i = 0; i < 5; ++i) held[i] = nullptr;

  // Flush CPU 0: the flush goes through the cpu-slab layer too (§3.3).
  //  spare = [S2 0, S2 1, S2 2, S1 3]: SHEAF_FLUSH 4. build_detached_freelist from the end:
  //    S1 3 alone (three look-ahead misses): not the cpu slab -> __slab_free (FREE_SLOWPATH);
  //    S1 was full and unfrozen: put_cpu_partial on CPU 0 (CPU_PARTIAL_FREE), no lock;
  //    S2 0..2: CPU 0's cpu slab -> pushed on the cpu freelist (FREE_FASTPATH 3).
  //    The spare is freed (SHEAF_FREE).
  //  main = [S1 2, S1 1, S1 0, S1 7]: SHEAF_FLUSH 4, one group: __slab_free into the cpu
  //    partial slab S1 (FREE_SLOWPATH), no lock.
  //  flush_cpu_slab: deactivate S2 (CPUSLAB_FLUSH; 15 free, 1 in use: to the head,
  //    DEACTIVATE_TO_HEAD, list_lock), then the cpu partial list: S1 to the node list
  //    (FREE_ADD_PARTIAL, list_lock).
  step(r, "flush", [&] { r.flush(0); },
       {{Stat::SHEAF_FLUSH, 8}, {Stat::SHEAF_FREE, 1}, {Stat::FREE_SLOWPATH, 2}, {Stat::CPU_PARTIAL_FREE, 1},
        {Stat::FREE_FASTPATH, 3}, {Stat::CPUSLAB_FLUSH, 1}, {Stat::DEACTIVATE_TO_HEAD, 1},
        {Stat::FREE_ADD_PARTIAL, 1}},
       0, 2);
  CHECK(s1->on_partial);
  CHECK(s2->on_partial);
  CHECK(s1->inuse == 11);
  CHECK(s2->inuse == 1);
  r.slub->check();
  r.release(held);
}

TEST_CASE("sheaf sequences: 6.18 remote frees and node mismatches go to the cpu-slab layer") {
  Rig r(FrontendKind::SheavesOnCpuPartial, false);
  std::vector<void*> held;
  held.push_back(r.alloc(0));  // S1 = CPU 0's cpu slab; main holds 3, the cpu freelist 12
  Slab* s1 = r.slab_of(held[0]);

  // CPU 2 (node 1) frees it: remote, so no free_to_pcs (§3.3); do_slab_free: not CPU 2's cpu
  // slab -> __slab_free (FREE_SLOWPATH) into a frozen slab (FREE_FROZEN). No FREE_PCS.
  step(r, "remote free", [&] { r.free(2, held[0]); }, {{Stat::FREE_SLOWPATH, 1}, {Stat::FREE_FROZEN, 1}}, 0, 0);
  held[0] = nullptr;
  CHECK(r.pcs(2).main->empty());
  CHECK(s1->freelist != nullptr);

  // CPU 0 asks for node 1: alloc_from_pcs returns NULL for a remote node (no stat in 6.18);
  // the cpu slab is on node 0: ___slab_alloc (ALLOC_SLOWPATH) deactivates it
  // (ALLOC_NODE_MISMATCH): S1 has a remote free on its own freelist (DEACTIVATE_REMOTE_FREES,
  // so to the tail: DEACTIVATE_TO_TAIL, list_lock); then a new node-1 slab (ALLOC_SLAB).
  void* t = nullptr;
  step(r, "node 1 requested", [&] { t = r.alloc(0, 1); },
       {{Stat::ALLOC_SLOWPATH, 1}, {Stat::ALLOC_NODE_MISMATCH, 1}, {Stat::DEACTIVATE_REMOTE_FREES, 1},
        {Stat::DEACTIVATE_TO_TAIL, 1}, {Stat::ALLOC_SLAB, 1}},
       0, 1);
  CHECK(r.slab_of(t)->node == 1);
  CHECK(s1->on_partial);
  CHECK(s1->inuse == 3);  // the three in CPU 0's main sheaf
  CHECK(r.pcs(0).main->size() == 3);
  // A request for node 0 uses the sheaf: main's top object is on node 0.
  step(r, "node 0 requested", [&] { held.push_back(r.alloc(0, 0)); }, {{Stat::ALLOC_PCS, 1}}, 0, 0);
  // CPU 0 frees the node-1 object: it bypasses the sheaves, and it is an object of CPU 0's
  // (node-1) cpu slab: the cpu-slab fast path (FREE_FASTPATH).
  step(r, "remote free to the cpu slab", [&] { r.free(0, t); }, {{Stat::FREE_FASTPATH, 1}}, 0, 0);
  CHECK(r.pcs(0).main->size() == 2);
  r.slub->check();
  r.release(held);
}

TEST_CASE("sheaf sequences: the spare-sheaf patch removes the barn round trip") {
  // docs/reference/seeds/zhao-liu-spare-sheaf-and-capacity.txt: "pre-cached spare sheaf reduces
  // spinlock race: reduce barn_put_empty_sheaf() & barn_get_empty_sheaf()". An alloc burst then
  // a free burst on one CPU, capacity 4, cold start.
  struct Burst {
    int allocs;
    int frees;
    std::uint64_t locks_off;  // barn lock acquisitions, patch off
    std::uint64_t locks_on;   // patch on
  };
  // Burst 4 / 5. Off: refill 1 puts the emptied main into the barn (lock); free 5 finds main
  // full and no spare and fetches it back (lock): one round trip. On: the emptied main is kept
  // as the spare, and free 5 swaps it in: no lock.
  // Burst 8 / 8. Off: alloc 1 put (1), alloc 5 get vessel + put main (2), free 5 get (1) = 4.
  // Burst 12 / 12. Off: 1 + 2 + 2 for the refills, free 5 get (1), free 9 finds main and spare
  // full and no empty sheaf: a new sheaf, the full main to the barn (1) = 7. On: only the last
  // (1). The barn now holds one full sheaf; the next round of 12 exchanges it (BARN_GET: 1) and
  // puts one back (BARN_PUT: 1) with the patch on or off: 2 each.
  const std::vector<Burst> bursts = {{4, 5, 2, 0}, {8, 8, 4, 0}, {12, 12, 7, 1}};
  for (auto fe : {FrontendKind::Sheaves, FrontendKind::SheavesOnCpuPartial}) {
    for (const Burst& b : bursts) {
      StatCounters st[2];
      for (bool spare : {false, true}) {
        INFO((fe == FrontendKind::Sheaves ? "7.0" : "6.18") << ", burst " << b.allocs << "/" << b.frees
                                                             << ", spare-sheaf " << spare);
        Rig r(fe, spare);
        std::vector<void*> held;
        auto l0 = r.barn_locks(0);
        for (int i = 0; i < b.allocs; ++i) held.push_back(r.alloc(0));
        auto after_allocs = r.barn_locks(0) - l0;
        // After the alloc burst: off, the emptied main waits in the barn and there is no spare;
        // on, it is the spare and the barn is untouched.
        if (spare) {
          CHECK(r.pcs(0).spare != nullptr);
          CHECK(r.pcs(0).spare->empty());
          CHECK(r.barn(0).nr_empty() == 0);
          CHECK(after_allocs == 0);
        } else {
          CHECK(r.pcs(0).spare == nullptr);
          CHECK(r.barn(0).nr_empty() == 1);
          CHECK(after_allocs == 2 * static_cast<std::uint64_t>(b.allocs / 4) - 1);
        }
        // One more node-0 object for the 5th free, not from CPU 0's sheaves or node 0's barn:
        // CPU 2 asks for node 0, which bypasses its sheaves (§4.3, §3.2).
        if (b.frees > b.allocs) held.push_back(r.alloc(2, 0));
        for (int i = 0; i < b.frees; ++i) r.free(0, held[static_cast<std::size_t>(i)]);
        for (int i = 0; i < b.frees; ++i) held[static_cast<std::size_t>(i)] = nullptr;
        CHECK(r.barn_locks(0) - l0 == (spare ? b.locks_on : b.locks_off));
        st[spare] = r.s().stats;
        if (b.allocs == 12) {
          // Second round: the same with the patch on or off.
          auto l1 = r.barn_locks(0);
          std::vector<void*> again;
          for (int i = 0; i < 12; ++i) again.push_back(r.alloc(0));
          for (void* o : again) r.free(0, o);
          CHECK(r.barn_locks(0) - l1 == 2);
        }
        r.slub->check();
        r.release(held);
      }
      // The barn counters cannot see the difference: the patch saves barn_put_empty_sheaf and
      // barn_get_empty_sheaf, which count nothing. Both runs count the same BARN_* and
      // SHEAF_ALLOC (one sheaf for the first refill's vessel, one more at free 9 of 12).
      for (Stat s : {Stat::BARN_GET, Stat::BARN_GET_FAIL, Stat::BARN_PUT, Stat::BARN_PUT_FAIL, Stat::SHEAF_ALLOC,
                     Stat::SHEAF_REFILL}) {
        INFO(std::string(stat_name(s)));
        CHECK(st[0][int(s)] == st[1][int(s)]);
      }
      CHECK(st[0][int(Stat::SHEAF_ALLOC)] == (b.allocs == 12 ? 2u : 1u));
    }
  }
}

TEST_CASE("sheaf sequences: kfree_rcu'd objects are in layers().rcu until their grace period ends") {
  // Classic front-end: each object is its own RCU callback.
  {
    Rig r(FrontendKind::CpuPartial, false);
    REQUIRE(r.s().sheaf_capacity == 0);
    std::vector<void*> held;
    for (int i = 0; i < 5; ++i) held.push_back(r.alloc(0));
    auto before = r.s().stats;
    for (void* o : held) r.kfree_rcu(0, o);
    held.clear();
    LayerCounts l = r.slub->layers(r.s());
    CHECK(l.rcu == 5);
    CHECK(l.in_use == 0);
    CHECK(r.slub->rcu().pending(0).size() == 5);
    r.slub->check();
    // Not yet: one picosecond short of the end of the next grace period.
    r.until_ready(0, 1);
    r.tick(0);
    CHECK(r.slub->layers(r.s()).rcu == 5);
    r.e(0).spend(1);
    r.tick(0);
    CHECK(r.slub->layers(r.s()).rcu == 0);
    // The callbacks free to CPU 0's cpu slab, where the objects came from.
    check_delta(before, r.s().stats, {{Stat::FREE_FASTPATH, 5}});
    r.slub->check();
    r.release(held);
  }
  // Sheaf front-ends: local objects collect in the rcu_free sheaf (§4.6), one callback per
  // full sheaf; a remote object takes the classic path.
  for (auto fe : {FrontendKind::Sheaves, FrontendKind::SheavesOnCpuPartial}) {
    const bool v7 = fe == FrontendKind::Sheaves;
    INFO((v7 ? "7.0" : "6.18"));
    Rig r(fe, v7);
    std::vector<void*> held;
    for (int i = 0; i < 5; ++i) held.push_back(r.alloc(0));
    void* remote = r.alloc(2);  // a node-1 object
    auto before = r.s().stats;
    // 1: no rcu_free sheaf: take the spare if it is empty (7.0: the kept main), else an empty
    // sheaf from the barn (6.18: the main emptied by the first refill). 1-4 fill it: it is
    // submitted (call_rcu), node 0 recorded. 5: no spare, no empty barn sheaf: a new sheaf.
    for (void* o : held) r.kfree_rcu(0, o);
    held.clear();
    r.kfree_rcu(0, remote);  // remote: the classic callback
    check_delta(before, r.s().stats, {{Stat::FREE_RCU_SHEAF, 5}, {Stat::SHEAF_ALLOC, 1}});
    LayerCounts l = r.slub->layers(r.s());
    CHECK(l.rcu == 6);
    CHECK(l.in_use == 0);
    CHECK(r.pcs(0).rcu_free != nullptr);
    CHECK(r.pcs(0).rcu_free->size() == 1);
    CHECK(r.slub->rcu().pending(0).size() == 2);  // the full sheaf and the remote object
    r.slub->check();
    r.until_ready(0, 1);
    r.tick(0);
    CHECK(r.slub->layers(r.s()).rcu == 6);
    // After the grace period: rcu_free_sheaf puts the full sheaf into node 0's barn as is
    // (BARN_PUT); the remote object's callback frees it on CPU 0, bypassing the sheaves
    // (7.0: __slab_free, FREE_SLOWPATH; 6.18: not CPU 0's cpu slab, so __slab_free into CPU 2's
    // frozen cpu slab: FREE_SLOWPATH + FREE_FROZEN).
    before = r.s().stats;
    r.e(0).spend(1);
    r.tick(0);
    l = r.slub->layers(r.s());
    CHECK(l.rcu == 1);
    CHECK(l.barn == 4);
    CHECK(r.barn(0).nr_full() == 1);
    if (v7)
      check_delta(before, r.s().stats, {{Stat::BARN_PUT, 1}, {Stat::FREE_SLOWPATH, 1}});
    else
      check_delta(before, r.s().stats, {{Stat::BARN_PUT, 1}, {Stat::FREE_SLOWPATH, 1}, {Stat::FREE_FROZEN, 1}});
    // A flush submits the partial rcu_free sheaf with the nobarn callback: still waiting.
    r.flush(0);
    CHECK(r.pcs(0).rcu_free == nullptr);
    CHECK(r.slub->layers(r.s()).rcu == 1);
    r.until_ready(0);
    before = r.s().stats;
    r.tick(0);
    CHECK(r.slub->layers(r.s()).rcu == 0);
    CHECK(r.s().stats[int(Stat::SHEAF_FLUSH)] - before[int(Stat::SHEAF_FLUSH)] == 1);
    CHECK(r.s().stats[int(Stat::SHEAF_FREE)] - before[int(Stat::SHEAF_FREE)] == 1);
    r.slub->check();
    r.release(held);
  }
}

TEST_CASE("sheaf sequences: 7.0 rcu_free sheaves after the grace period: to the barn, or flushed when it is full") {
  // barn_max_full = barn_max_empty = 1. CPU 0 allocates 13 (refills at 1, 5, 9, 13: o1..o8 are
  // S1 3..0, 7..4; o9..o12 S2 3..0; o13 S2 7; main keeps S2 4..6; the spare is empty).
  Rig r(FrontendKind::Sheaves, true, 1, 1 << 14, 1);
  std::vector<void*> held;
  for (int i = 0; i < 13; ++i) held.push_back(r.alloc(0));
  Slab* s1 = r.slab_of(held[0]);
  Slab* s2 = r.slab_of(held[8]);
  REQUIRE(r.pcs(0).spare != nullptr);
  // kfree_rcu o1..o12 (§4.6): the first rcu_free sheaf is the empty spare, the next two are new
  // (no empty sheaf in the barn: SHEAF_ALLOC 2); each is submitted when it holds 4.
  step(r, "kfree_rcu x12", [&] {
    for (int i = 0; i < 12; ++i) r.kfree_rcu(0, held[i]);
  }, {{Stat::FREE_RCU_SHEAF, 12}, {Stat::SHEAF_ALLOC, 2}}, 0, 0);
  for (int i = 0; i < 12; ++i) held[i] = nullptr;
  CHECK(r.slub->layers(r.s()).rcu == 12);
  CHECK(r.pcs(0).rcu_free == nullptr);
  CHECK(r.slub->rcu().pending(0).size() == 3);
  // After the grace period, rcu_free_sheaf for each, in order:
  //  1st: racy nr_full 0 < 1: barn_put_full as is (barn lock)                    BARN_PUT 1
  //  2nd: nr_full 1 >= 1: BARN_PUT_FAIL, flushed (SHEAF_FLUSH 4: S1 7..4, S1 was full:
  //       list_lock, FREE_ADD_PARTIAL); the empty sheaf: nr_empty 0 < 1, barn_put_empty (lock)
  //  3rd: BARN_PUT_FAIL, flushed (S2 3..0, S2 was full: FREE_ADD_PARTIAL); nr_empty 1 >= 1:
  //       kfree'd (SHEAF_FREE).
  r.until_ready(0);
  step(r, "grace period", [&] { r.tick(0); },
       {{Stat::BARN_PUT, 1}, {Stat::BARN_PUT_FAIL, 2}, {Stat::SHEAF_FLUSH, 8}, {Stat::FREE_ADD_PARTIAL, 2},
        {Stat::SHEAF_FREE, 1}},
       2, 2);
  CHECK(r.barn(0).nr_full() == 1);
  CHECK(r.barn(0).nr_empty() == 1);
  CHECK(s1->on_partial);
  CHECK(s2->on_partial);
  CHECK(s1->inuse == 4);
  CHECK(s2->inuse == 4);
  LayerCounts l = r.slub->layers(r.s());
  CHECK(l.rcu == 0);
  CHECK(l.barn == 4);
  CHECK(l.in_use == 1);
  r.slub->check();
  // The barn is that of the submitting CPU's node, whichever CPU runs the callback: CPU 0
  // submits a sheaf and CPU 2 (node 1) runs rcu_barrier.
  // Four allocations on CPU 0: main's 3, then main and spare are empty and the barn's full
  // sheaf replaces main (BARN_GET): node 0's barn has no full sheaf left.
  std::vector<void*> more;
  for (int i = 0; i < 4; ++i) more.push_back(r.alloc(0));
  CHECK(r.barn(0).nr_full() == 0);
  CHECK(r.barn(0).nr_empty() == 2);
  // kfree_rcu of the four: the rcu_free sheaf comes from node 0's barn; it is submitted full.
  for (void* o : more) r.kfree_rcu(0, o);
  CHECK(r.barn(0).nr_empty() == 1);
  run_now(r.slub->rcu_barrier(r.e(2)));
  CHECK(r.barn(0).nr_full() == 1);
  CHECK(r.barn(1).nr_full() == 0);
  CHECK(r.barn(1).nr_empty() == 0);
  CHECK(r.barn_locks(1) == 0);
  r.slub->check();
  r.release(held);
}

TEST_CASE("sheaf sequences: 7.0 prefilled sheaves (§4.7)") {
  Rig r(FrontendKind::Sheaves, true);
  auto& s = r.s();
  std::vector<void*> held;
  Sheaf* a = nullptr;

  // prefill(3) on a fresh CPU: no spare -> SHEAF_PREFILL_SLOW; barn_get_full_or_empty_sheaf
  // finds nothing: BARN_GET_FAIL (the kernel counts it unless the sheaf it got has objects);
  // alloc_empty_sheaf (SHEAF_ALLOC); refill to full capacity (SHEAF_REFILL 4) from a new slab.
  step(r, "prefill 3", [&] { a = run_now(r.slub->prefill_sheaf(r.e(0), s, 3)); },
       {{Stat::SHEAF_PREFILL_SLOW, 1}, {Stat::BARN_GET_FAIL, 1}, {Stat::SHEAF_ALLOC, 1}, {Stat::SHEAF_REFILL, 4},
        {Stat::ALLOC_SLAB, 1}},
       0, 1);
  REQUIRE(a != nullptr);
  CHECK(a->size() == 4);
  CHECK(r.slub->layers(s).prefilled == 4);
  // alloc_from_sheaf: pops, no counter, no lock; an empty sheaf gives NULL (no fallback).
  step(r, "alloc_from_sheaf x4", [&] {
    for (int i = 0; i < 4; ++i) held.push_back(r.slub->alloc_from_sheaf(r.e(0), s, a));
  }, {}, 0, 0);
  CHECK(r.slub->alloc_from_sheaf(r.e(0), s, a) == nullptr);
  CHECK(r.slub->layers(s).prefilled == 0);
  CHECK(r.slub->layers(s).in_use == 4);
  // refill_sheaf(2): capacity 4 >= 2: refill_sheaf to full (the 4 left on S1).
  Sheaf* same = nullptr;
  step(r, "refill 2", [&] { same = run_now(r.slub->refill_sheaf(r.e(0), s, a, 2)); }, {{Stat::SHEAF_REFILL, 4}}, 0, 1);
  CHECK(same == a);
  CHECK(a->size() == 4);
  // refill_sheaf(6) > capacity: a new oversize sheaf of 6 (SHEAF_PREFILL_OVERSIZE, a plain
  // kzalloc: no SHEAF_ALLOC), filled by __kmem_cache_alloc_bulk = refill_objects(6, 6): S1 is
  // used up, a new slab S2 (ALLOC_SLAB), 6 of its 8; 7.0 counts those as ALLOC_SLOWPATH, not
  // SHEAF_REFILL (§4.11). Then the old sheaf is returned: no spare -> it becomes the spare as
  // it is (SHEAF_RETURN_FAST).
  Sheaf* big = nullptr;
  step(r, "refill 6 (oversize)", [&] { big = run_now(r.slub->refill_sheaf(r.e(0), s, a, 6)); },
       {{Stat::SHEAF_PREFILL_OVERSIZE, 1}, {Stat::ALLOC_SLAB, 1}, {Stat::ALLOC_SLOWPATH, 6}, {Stat::SHEAF_RETURN_FAST, 1}},
       0, 1);
  REQUIRE(big != nullptr);
  CHECK(big != a);
  CHECK(big->oversize);
  CHECK(big->size() == 6);
  CHECK(r.pcs(0).spare == a);
  CHECK(r.slub->layers(s).sheaves == 4);
  CHECK(r.slub->layers(s).prefilled == 6);
  held.push_back(r.slub->alloc_from_sheaf(r.e(0), s, big));
  held.push_back(r.slub->alloc_from_sheaf(r.e(0), s, big));
  // Returning the oversize sheaf flushes its 4 (one group of S2, lockless) and kfrees it
  // without SHEAF_FREE.
  step(r, "return oversize", [&] { run_now(r.slub->return_sheaf(r.e(0), s, big)); }, {{Stat::SHEAF_FLUSH, 4}}, 0, 0);
  CHECK(r.slub->layers(s).prefilled == 0);
  // prefill(2): the spare (4 objects) is taken as is (SHEAF_PREFILL_FAST), no refill.
  Sheaf* b = nullptr;
  step(r, "prefill 2 from the spare", [&] { b = run_now(r.slub->prefill_sheaf(r.e(0), s, 2)); },
       {{Stat::SHEAF_PREFILL_FAST, 1}}, 0, 0);
  CHECK(b == a);
  CHECK(r.pcs(0).spare == nullptr);
  held.push_back(r.slub->alloc_from_sheaf(r.e(0), s, b));
  // A normal allocation now: main empty, no spare: refill as in the first-allocation sequence.
  // S2 (6 free, partial) is taken whole: 4 into the sheaf, 2 given back (S2 is full after the
  // grab, so list_lock again and to the tail, FREE_ADD_PARTIAL). The emptied main is the spare.
  step(r, "alloc", [&] { held.push_back(r.alloc(0)); },
       {{Stat::BARN_GET_FAIL, 1}, {Stat::SHEAF_ALLOC, 1}, {Stat::SHEAF_REFILL, 4}, {Stat::FREE_ADD_PARTIAL, 1},
        {Stat::ALLOC_FASTPATH, 1}},
       0, 2);
  REQUIRE(r.pcs(0).spare != nullptr);
  // Return b (3 objects) with a spare present: SHEAF_RETURN_SLOW; the barn has < 10 full
  // sheaves: refill to full (1 object: S2's 2 free, 1 taken and 1 given back, FREE_ADD_PARTIAL)
  // and barn_put_full_sheaf (BARN_PUT).
  step(r, "return slow", [&] { run_now(r.slub->return_sheaf(r.e(0), s, b)); },
       {{Stat::SHEAF_RETURN_SLOW, 1}, {Stat::SHEAF_REFILL, 1}, {Stat::FREE_ADD_PARTIAL, 1}, {Stat::BARN_PUT, 1}}, 1, 2);
  CHECK(r.barn(0).nr_full() == 1);
  CHECK(r.slub->layers(s).barn == 4);
  // prefill(4): the (empty) spare, refilled: S2's last free object, then a new slab S3.
  Sheaf* c = nullptr;
  step(r, "prefill 4 from the empty spare", [&] { c = run_now(r.slub->prefill_sheaf(r.e(0), s, 4)); },
       {{Stat::SHEAF_PREFILL_FAST, 1}, {Stat::SHEAF_REFILL, 4}, {Stat::ALLOC_SLAB, 1}}, 0, 2);
  CHECK(c->size() == 4);
  // prefill(4) with no spare: the barn's full sheaf (BARN_GET), no refill needed.
  Sheaf* d = nullptr;
  step(r, "prefill 4 from the barn", [&] { d = run_now(r.slub->prefill_sheaf(r.e(0), s, 4)); },
       {{Stat::SHEAF_PREFILL_SLOW, 1}, {Stat::BARN_GET, 1}}, 1, 0);
  CHECK(d == b);
  CHECK(d->size() == 4);
  CHECK(r.slub->layers(s).prefilled == 8);
  r.slub->check();
  // Give both back: c becomes the spare, d (full) goes to the barn.
  step(r, "return c", [&] { run_now(r.slub->return_sheaf(r.e(0), s, c)); }, {{Stat::SHEAF_RETURN_FAST, 1}}, 0, 0);
  step(r, "return d", [&] { run_now(r.slub->return_sheaf(r.e(0), s, d)); },
       {{Stat::SHEAF_RETURN_SLOW, 1}, {Stat::BARN_PUT, 1}}, 1, 0);
  CHECK(r.slub->layers(s).prefilled == 0);
  r.slub->check();
  r.release(held);
}

TEST_CASE("sheaf sequences: 7.0 a failed bulk allocation gives the sheaf objects straight back to the slabs") {
  // 16 pages per node: two order-3 slabs each. kmem_cache_alloc_bulk (§4.8): alloc_from_pcs_bulk
  // takes main's objects, then __kmem_cache_alloc_bulk for the rest; when that fails, the
  // kernel frees what came from the sheaves with __kmem_cache_free_bulk ("don't bother with
  // freeing back to the percpu sheaves") and counts no ALLOC_SLOWPATH.
  Rig r(FrontendKind::Sheaves, true, 10, 16);
  std::vector<void*> held;
  held.push_back(r.alloc(0));  // main holds 3
  REQUIRE(r.pcs(0).main->size() == 3);
  auto before = r.s().stats;
  std::vector<void*> p(40, nullptr);
  std::size_t got = run_now(r.slub->alloc_bulk(r.e(0), r.s(), p.size(), p.data()));
  CHECK(got == 0);
  CHECK(r.s().stats[int(Stat::ALLOC_FASTPATH)] - before[int(Stat::ALLOC_FASTPATH)] == 3);
  CHECK(r.s().stats[int(Stat::ALLOC_SLOWPATH)] == before[int(Stat::ALLOC_SLOWPATH)]);
  CHECK(r.s().stats[int(Stat::FREE_FASTPATH)] == before[int(Stat::FREE_FASTPATH)]);
  CHECK(r.s().stats[int(Stat::ALLOC_FAILED)] - before[int(Stat::ALLOC_FAILED)] == 1);
  CHECK(r.pcs(0).main->empty());
  LayerCounts l = r.slub->layers(r.s());
  CHECK(l.sheaves == 0);
  CHECK(l.in_use == 1);
  r.slub->check();
  r.release(held);
}

TEST_CASE("sheaf sequences: sheaf counters carry the kernel's sysfs names") {
  // §3.5: ALLOC_PCS / FREE_PCS are alloc_cpu_sheaf / free_cpu_sheaf; the rest lower case (§4.11).
  CHECK(std::string(stat_name(Stat::ALLOC_PCS)) == "alloc_cpu_sheaf");
  CHECK(std::string(stat_name(Stat::FREE_PCS)) == "free_cpu_sheaf");
  const std::vector<std::pair<Stat, const char*>> names = {
      {Stat::FREE_RCU_SHEAF, "free_rcu_sheaf"},       {Stat::FREE_RCU_SHEAF_FAIL, "free_rcu_sheaf_fail"},
      {Stat::SHEAF_FLUSH, "sheaf_flush"},             {Stat::SHEAF_REFILL, "sheaf_refill"},
      {Stat::SHEAF_ALLOC, "sheaf_alloc"},             {Stat::SHEAF_FREE, "sheaf_free"},
      {Stat::BARN_GET, "barn_get"},                   {Stat::BARN_GET_FAIL, "barn_get_fail"},
      {Stat::BARN_PUT, "barn_put"},                   {Stat::BARN_PUT_FAIL, "barn_put_fail"},
      {Stat::SHEAF_PREFILL_FAST, "sheaf_prefill_fast"}, {Stat::SHEAF_PREFILL_SLOW, "sheaf_prefill_slow"},
      {Stat::SHEAF_PREFILL_OVERSIZE, "sheaf_prefill_oversize"}, {Stat::SHEAF_RETURN_FAST, "sheaf_return_fast"},
      {Stat::SHEAF_RETURN_SLOW, "sheaf_return_slow"},
  };
  for (const auto& [st, name] : names) CHECK(std::string(stat_name(st)) == name);
}

TEST_CASE("sheaf sequences: flushing kfree_rcu'd objects stores their free pointers into cold lines") {
  // 6.18, capacity 4, barn limits 1/1. CPU 0 allocates 8 and kfree_rcu's them: two rcu_free
  // sheaves of 4. After the grace period the first goes to the barn as it is; the second finds
  // the barn full and is flushed to slabs: its 4 objects were not touched for a grace period, so
  // each free-pointer store is a memory access (here 100 ns); nothing else on this path reads
  // memory_latency, so that is the whole difference from a run without it.
  const Time dram = 100 * kNs;
  auto grace_period_time = [&](Time latency) {
    Rig r(FrontendKind::SheavesOnCpuPartial, false, 1, 1 << 14, 1, latency);
    std::vector<void*> held;
    for (int i = 0; i < 8; ++i) held.push_back(r.alloc(0));
    for (void* o : held) r.kfree_rcu(0, o);
    REQUIRE(r.slub->rcu().pending(0).size() == 2);
    CHECK(r.pcs(0).rcu_free == nullptr);
    r.until_ready(0);
    Time before = r.e(0).now();
    auto stats = r.s().stats;
    r.tick(0);
    check_delta(stats, r.s().stats, {{Stat::BARN_PUT, 1}, {Stat::BARN_PUT_FAIL, 1}, {Stat::SHEAF_FLUSH, 4}, {Stat::FREE_FASTPATH, 4}});
    r.slub->check();
    return r.e(0).now() - before;
  };
  CHECK(grace_period_time(dram) - grace_period_time(0) == 4 * dram);
}

TEST_CASE("sheaf sequences: a flush finds lines a grace period old in the LLC while its domain's RCU backlog leaves room") {
  // The same sequence as above, with every CPU in one LLC domain (models/slub/residency.h).
  // When the second sheaf is flushed, both callbacks are off the queue: nothing waits behind
  // RCU, so every line is still in the LLC and each of the 4 stores costs the LLC hit instead of
  // memory, divided by how many stores the flush keeps in flight.
  const Time dram = 100 * kNs, hit = 10 * kNs;
  auto flush_time = [&](Time latency, std::int64_t llc_bytes, int overlap) {
    Rig r(FrontendKind::SheavesOnCpuPartial, false, 1, 1 << 14, 1, latency, [&](Params& p) {
      p.numa.cpu_llc = {0, 0, 0, 0};
      p.numa.nr_llcs = 1;
      p.numa.llc_bytes = llc_bytes;
      p.numa.llc_hit = hit;
      p.costs.aged_store_overlap = overlap;
    });
    std::vector<void*> held;
    for (int i = 0; i < 8; ++i) held.push_back(r.alloc(0));
    for (void* o : held) r.kfree_rcu(0, o);
    return r.tick_when_ready(0);
  };
  CHECK(flush_time(dram, 0, 1) - flush_time(0, 0, 1) == 4 * dram);             // no LLC: memory
  CHECK(flush_time(dram, 64 << 20, 1) - flush_time(0, 64 << 20, 1) == 4 * hit);  // all in the LLC
  CHECK(flush_time(dram, 64 << 20, 4) - flush_time(0, 64 << 20, 4) == hit);      // 4 in flight
}

TEST_CASE("sheaf sequences: a run of callbacks into one slab looks its struct slab up cold once per softirq turn") {
  // cpu partial (no sheaves): each kfree_rcu'd object is one callback, which pays
  // callback_cold_lines (here 2: the rcu_head and the struct slab) plus the free pointer's line
  // (mid-object in a 256-byte object) as memory accesses, here 100 ns each; nothing else on
  // this path reads memory_latency. With costs.rcu.callback_slab_line "cached", a callback into
  // the slab the CPU's previous callback freed into, in the same softirq turn, skips the struct
  // slab. Each tick here (tick 0: one round per call) is a turn of its own.
  const Time dram = 100 * kNs;
  auto callback_time = [&](Time latency, bool cached, const std::vector<int>& per_turn) {
    Rig r(FrontendKind::CpuPartial, false, 10, 1 << 14, 10, latency, [&](Params& p) {
      p.costs.rcu_callback_cold_lines = 2;
      p.callback_slab_line_cached = cached;
    });
    REQUIRE(r.s().geo.objects == 16);
    REQUIRE(r.s().sheaf_capacity == 0);
    std::vector<void*> held;
    for (int i = 0; i < 32; ++i) held.push_back(r.alloc(0));  // two slabs, in address order
    REQUIRE(r.slab_of(held[0]) == r.slab_of(held[15]));
    REQUIRE(r.slab_of(held[16]) != r.slab_of(held[15]));
    Time spent = 0;
    std::size_t next = 0;
    for (int n : per_turn) {
      for (int i = 0; i < n; ++i) r.kfree_rcu(0, held[next++]);
      spent += r.tick_when_ready(0);
      REQUIRE(r.slub->rcu().pending(0).empty());
    }
    held.erase(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(next));
    r.release(held);
    return spent;
  };
  auto cold = [&](bool cached, const std::vector<int>& per_turn) {
    return callback_time(dram, cached, per_turn) - callback_time(0, cached, per_turn);
  };
  // One turn over both slabs: 32 callbacks x 3 lines; cached, the struct slab twice, not 32 times.
  CHECK(cold(false, {32}) == 96 * dram);
  CHECK(cold(true, {32}) == (96 - 30) * dram);
  // The same slab over two turns: the second turn looks it up cold again.
  CHECK(cold(false, {4, 4}) == 24 * dram);
  CHECK(cold(true, {4, 4}) == (24 - 6) * dram);
}

TEST_CASE("sheaf sequences: a callback's cold lines fetched together cost one line, two past a slab's first page") {
  // 32 kfree_rcu'd objects of a cache without sheaves, each one callback that pays
  // callback_cold_lines (2: the rcu_head and the struct slab) and, going back to its slab, the
  // free pointer's line mid-object: 3 memory accesses in turn ("serial"). With
  // costs.rcu.callback_line_fetch "together" their addresses all come from the callback's pointer
  // and are in flight at once: one access, or two for an object past its slab's first page, whose
  // struct slab is found through its own page's compound_head. A cache whose free pointer shares
  // the rcu_head's line pays 2 in turn.
  const Time dram = 100 * kNs;
  auto cold = [&](bool together, std::uint32_t size, int order) {
    auto callback_time = [&](Time latency) {
      Rig r(FrontendKind::CpuPartial, false, 10, 1 << 14, 10, latency, [&](Params& p) {
        p.caches[0].object_size = size;
        p.caches[0].order = order;
        p.costs.rcu_callback_cold_lines = 2;
        p.callback_lines_together = together;
      });
      REQUIRE(r.s().sheaf_capacity == 0);
      REQUIRE((r.s().geo.offset >= kCacheLine) == (size > 128));
      REQUIRE(r.s().geo.order == order);
      std::vector<void*> held;
      for (int i = 0; i < 32; ++i) held.push_back(r.alloc(0));
      for (void* p : held) r.kfree_rcu(0, p);
      const Time spent = r.tick_when_ready(0);
      REQUIRE(r.slub->rcu().pending(0).empty());
      return spent;
    };
    return callback_time(dram) - callback_time(0);
  };
  // Order 0: every object in its slab's first page.
  CHECK(cold(false, 256, 0) == 32 * 3 * dram);
  CHECK(cold(true, 256, 0) == 32 * dram);
  CHECK(cold(false, 64, 0) == 32 * 2 * dram);
  CHECK(cold(true, 64, 0) == 32 * dram);
  // Order 1, 256-byte objects: one slab of 32, 16 to a page, so half lie past its first page.
  CHECK(cold(false, 256, 1) == 32 * 3 * dram);
  CHECK(cold(true, 256, 1) == (16 * 1 + 16 * 2) * dram);
}

TEST_CASE("sheaf sequences: a GFP_NOWAIT allocation never refills a sheaf without the nowait-refill patch") {
  // __pcs_replace_empty_main, can_alloc = gfpflags_allow_blocking(gfp) (6.18, 6.19, 7.0-rc1/rc2;
  // slub-algorithms.md §4.3 step 5): with main and spare empty and no full sheaf in the barn, a
  // GFP_NOWAIT allocation returns NULL from the sheaves and the caller takes the layer below.
  // fb1091febd66 (7.0-rc3) lets it refill as a blocking one does.
  auto nowait = [](Rig& r, int cpu) {
    return run_now(r.slub->alloc(r.e(cpu), r.s(), kNoNode, Gfp::Nowait));
  };
  SUBCASE("6.18: the cpu slab serves it; main stays empty") {
    Rig r(FrontendKind::SheavesOnCpuPartial, false);
    std::vector<void*> held;
    // Racy nr_full == 0: no barn lock (BARN_GET_FAIL). ___slab_alloc: a new slab S1 as CPU 0's
    // cpu slab (ALLOC_SLOWPATH, ALLOC_SLAB); no sheaf allocated, none refilled.
    step(r, "nowait 1", [&] { held.push_back(nowait(r, 0)); },
         {{Stat::BARN_GET_FAIL, 1}, {Stat::ALLOC_SLOWPATH, 1}, {Stat::ALLOC_SLAB, 1}}, 0, 0);
    Slab* s1 = r.slab_of(held[0]);
    CHECK(r.s().cpu[0].slab == s1);
    CHECK(r.pcs(0).main->empty());
    CHECK(r.pcs(0).spare == nullptr);
    // The next one tries the barn again (BARN_GET_FAIL) and pops the cpu freelist.
    step(r, "nowait 2", [&] { held.push_back(nowait(r, 0)); },
         {{Stat::BARN_GET_FAIL, 1}, {Stat::ALLOC_FASTPATH, 1}}, 0, 0);
    CHECK(r.slab_of(held[1]) == s1);
    CHECK(r.pcs(0).main->empty());
    // A blocking allocation refills as before: a new sheaf from the cpu freelist (14 left).
    step(r, "kernel", [&] { held.push_back(r.alloc(0)); },
         {{Stat::BARN_GET_FAIL, 1}, {Stat::SHEAF_ALLOC, 1}, {Stat::ALLOC_FASTPATH, 4}, {Stat::SHEAF_REFILL, 4},
          {Stat::ALLOC_PCS, 1}},
         1, 0);
    CHECK(r.pcs(0).main->size() == 3);
    r.release(held);
  }
  SUBCASE("7.0-rc1/rc2: ___slab_alloc, one object per list_lock hold") {
    Rig r(FrontendKind::Sheaves, true);
    std::vector<void*> held;
    // No partial slab: a new slab S1; one object out, S1 onto node 0's partial list (one
    // list_lock hold).
    step(r, "nowait 1", [&] { held.push_back(nowait(r, 0)); },
         {{Stat::BARN_GET_FAIL, 1}, {Stat::ALLOC_SLOWPATH, 1}, {Stat::ALLOC_SLAB, 1}}, 0, 1);
    Slab* s1 = r.slab_of(held[0]);
    CHECK(s1->on_partial);
    CHECK(r.pcs(0).main->empty());
    // The next one takes one object from S1 under list_lock.
    step(r, "nowait 2", [&] { held.push_back(nowait(r, 0)); },
         {{Stat::BARN_GET_FAIL, 1}, {Stat::ALLOC_SLOWPATH, 1}}, 0, 1);
    CHECK(r.slab_of(held[1]) == s1);
    CHECK(r.pcs(0).main->empty());
    r.release(held);
  }
  SUBCASE("with nowait-refill it refills as a blocking allocation") {
    Rig r(FrontendKind::SheavesOnCpuPartial, false, 10, 1 << 14, 10, 0,
          [](Params& p) { p.features.nowait_refill = true; });
    std::vector<void*> held;
    step(r, "nowait 1", [&] { held.push_back(nowait(r, 0)); },
         {{Stat::BARN_GET_FAIL, 1}, {Stat::SHEAF_ALLOC, 1}, {Stat::ALLOC_SLOWPATH, 1}, {Stat::ALLOC_SLAB, 1},
          {Stat::ALLOC_FASTPATH, 3}, {Stat::SHEAF_REFILL, 4}, {Stat::ALLOC_PCS, 1}},
         1, 0);
    CHECK(r.pcs(0).main->size() == 3);
    r.release(held);
  }
}
