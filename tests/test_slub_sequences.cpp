// Acceptance: scripted alloc/free sequences whose SLUB_STATS counter values are known by hand
// match exactly (cpu-partial front-end, slub-algorithms.md §1.7, §2.3-2.7, §2.10).
//
// Setup used throughout: kmalloc-256 (object_size 256, no flags) on 4 CPUs of one node.
// By §1.4 ("2-7 present CPUs"): order 0, 16 objects per slab; cpu_partial 52 objects (size >= 256,
// §2.7), so cpu_partial_slabs = ceil(2 * 52 / 16) = 7; min_partial = clamp(ilog2(256)/2, 5, 10) = 5.
// Counters are compared as deltas over one step, and every other counter must stay unchanged.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/immediate.h"
#include "models/slub/slub.h"

using namespace slubsim;
using namespace slubsim::slub;

namespace {

constexpr std::uint32_t kObjs = 16;  // objects per slab of kmalloc-256 on 4 CPUs

struct Rig {
  ImmediateShared sh;
  std::unique_ptr<Slub> slub;
  std::vector<std::unique_ptr<ImmediateExec>> ex;

  explicit Rig(FrontendKind fe, int nodes = 1, int cpus = 4,
               std::optional<std::uint32_t> cpu_partial = std::nullopt,
               std::vector<std::int64_t> node_pages = {}) {
    Params p;
    CacheSpec c;
    c.name = "kmalloc-256";
    c.object_size = 256;
    c.cpu_partial = cpu_partial;
    p.caches = {c};
    CacheSpec other;
    other.name = "kmalloc-64";
    other.object_size = 64;
    p.caches.push_back(other);
    p.numa.nr_cpus = cpus;
    p.numa.nr_nodes = nodes;
    for (int i = 0; i < cpus; ++i) p.numa.cpu_node.push_back(i * nodes / cpus);
    for (int n = 0; n < nodes; ++n) {
      p.numa.node_pages.push_back(n < static_cast<int>(node_pages.size()) ? node_pages[n] : 1 << 16);
      std::vector<int> fb;
      for (int k = 0; k < nodes; ++k) fb.push_back((n + k) % nodes);
      p.numa.fallback.push_back(fb);
    }
    p.features.frontend = fe;
    p.features.freelist_random = false;
    // get_any_partial is skipped when (cycles % 1024) > ratio; 1024 never skips, so remote
    // partial slabs are always searched and the counts below are exact.
    p.features.remote_node_defrag_ratio = 1024;
    p.validate = true;
    p.seed = 1;
    slub = std::make_unique<Slub>(sh, p);
    for (int i = 0; i < cpus; ++i)
      ex.push_back(std::make_unique<ImmediateExec>(sh, i, p.numa.cpu_node[i]));
  }

  KmemCache& s() { return slub->cache(0); }
  ImmediateExec& e(int cpu) { return *ex[cpu]; }
  void* alloc(int cpu, int node = kNoNode) { return run_now(slub->alloc(e(cpu), s(), node)); }
  void free(int cpu, void* obj) { run_now(slub->free(e(cpu), s(), obj)); }
  void flush(int cpu) { run_now(slub->flush_cpu(e(cpu), s(), cpu)); }
  Slab* slab_of(void* obj) { return slub->virt_to_slab(obj); }

  // Everything back: free what the test still holds, shrink, and check the pages returned.
  void release(std::vector<void*>& held) {
    for (void* o : held)
      if (o) free(0, o);
    held.clear();
    slub->check();
    for (int i = 0; i < slub->nr_caches(); ++i) run_now(slub->shrink(e(0), slub->cache(i)));
    slub->check();
    CHECK(s().slabs_allocated == 0);
    CHECK(slub->total_slab_bytes() == 0);
    for (int n = 0; n < slub->params().numa.nr_nodes; ++n)
      CHECK(slub->pages().free_pages(n) + slub->pages().pcp_pages(n) == slub->pages().total_pages(n));
    CHECK_FALSE(sh.any_held());
  }
};

using Expect = std::map<Stat, std::uint64_t>;

// Every counter moved by exactly what `want` says (absent = unchanged).
template <class Key, std::size_t N>
void check_counters(const std::array<std::uint64_t, N>& before, const std::array<std::uint64_t, N>& after,
                    const std::map<Key, std::uint64_t>& want, const char* (*name)(Key)) {
  for (std::size_t i = 0; i < N; ++i) {
    auto k = static_cast<Key>(i);
    auto it = want.find(k);
    INFO("counter " << std::string(name(k)));
    CHECK(after[i] - before[i] == (it == want.end() ? 0 : it->second));
  }
}

// SLUB_STATS.
void check_delta(const StatCounters& before, const StatCounters& after, const Expect& want) {
  check_counters(before, after, want, stat_name);
}

// The slab-reuse counters (not SLUB_STATS).
void check_reuse(const ReuseCounters& before, const ReuseCounters& after, const std::map<Reuse, std::uint64_t>& want) {
  check_counters(before, after, want, reuse_name);
}

// Allocates n objects on cpu and returns them.
std::vector<void*> alloc_n(Rig& r, int cpu, std::uint32_t n) {
  std::vector<void*> v;
  for (std::uint32_t i = 0; i < n; ++i) {
    void* o = r.alloc(cpu);
    REQUIRE(o != nullptr);
    v.push_back(o);
  }
  return v;
}

std::string fe_name(FrontendKind fe) {
  return fe == FrontendKind::CpuPartial ? "CpuPartial (6.8+ delayed freezing)"
                                        : "CpuPartialFrozen (<= 6.7 eager freezing)";
}

}  // namespace

TEST_CASE("slub sequences: geometry of the test cache") {
  Rig r(FrontendKind::CpuPartial);
  CHECK(r.s().geo.order == 0);
  CHECK(r.s().geo.objects == kObjs);
  CHECK(r.s().geo.cpu_partial == 52);
  CHECK(r.s().geo.cpu_partial_slabs == 7);
  CHECK(r.s().geo.min_partial == 5);
}

TEST_CASE("slub sequences: first allocation is one slow path and one new slab, then fast paths") {
  for (auto fe : {FrontendKind::CpuPartial, FrontendKind::CpuPartialFrozen}) {
    INFO(fe_name(fe));
    Rig r(fe);
    std::vector<void*> held;

    // A fresh cache: no cpu slab, no partial slabs anywhere. ___slab_alloc (ALLOC_SLOWPATH)
    // finds nothing and allocates a slab (ALLOC_SLAB); nothing else happens.
    auto before = r.s().stats;
    held.push_back(r.alloc(0));
    REQUIRE(held.back() != nullptr);
    check_delta(before, r.s().stats, {{Stat::ALLOC_SLOWPATH, 1}, {Stat::ALLOC_SLAB, 1}});
    Slab* first = r.slab_of(held[0]);
    CHECK(first->frozen);
    CHECK(r.s().cpu[0].slab == first);
    CHECK(r.s().slabs_allocated == 1);

    // The other 15 objects of the slab come off the cpu freelist: one ALLOC_FASTPATH each.
    for (std::uint32_t i = 1; i < kObjs; ++i) {
      before = r.s().stats;
      held.push_back(r.alloc(0));
      check_delta(before, r.s().stats, {{Stat::ALLOC_FASTPATH, 1}});
      CHECK(r.slab_of(held.back()) == first);
      // No freelist randomisation: address order.
      CHECK(held.back() == first->object(i));
    }

    // The 17th: the cpu freelist and the slab's own freelist are empty, so the full slab is
    // dropped (DEACTIVATE_BYPASS) and a second slab is allocated.
    before = r.s().stats;
    held.push_back(r.alloc(0));
    check_delta(before, r.s().stats,
                {{Stat::ALLOC_SLOWPATH, 1}, {Stat::DEACTIVATE_BYPASS, 1}, {Stat::ALLOC_SLAB, 1}});
    CHECK(r.slab_of(held.back()) != first);
    CHECK_FALSE(first->frozen);
    CHECK_FALSE(first->on_partial);
    CHECK(first->inuse == kObjs);
    r.slub->check();
    r.release(held);
  }
}

TEST_CASE("slub sequences: refill from the node partial list moves extra slabs to the cpu partial list") {
  for (auto fe : {FrontendKind::CpuPartial, FrontendKind::CpuPartialFrozen}) {
    for (std::uint32_t listed : {6u, 3u}) {
      INFO(fe_name(fe) << ", " << listed << " slabs on the node partial list");
      Rig r(fe);
      // CPU 0 fills `listed` slabs completely; the flush deactivates the last one (full, so it
      // goes on no list). All `listed` slabs are now full and on no list.
      auto held = alloc_n(r, 0, listed * kObjs);
      r.flush(0);
      // CPU 2 frees the first object of each: full -> partial puts each on CPU 2's partial list
      // (CPU_PARTIAL_FREE; `listed` <= 7 = cpu_partial_slabs, so no drain). Flushing CPU 2 then
      // moves them all to the node partial list (__put_partials: FREE_ADD_PARTIAL each).
      auto before = r.s().stats;
      for (std::uint32_t k = 0; k < listed; ++k) {
        r.free(2, held[k * kObjs]);
        held[k * kObjs] = nullptr;
      }
      r.flush(2);
      check_delta(before, r.s().stats,
                  {{Stat::FREE_SLOWPATH, listed}, {Stat::CPU_PARTIAL_FREE, listed},
                   {Stat::FREE_ADD_PARTIAL, listed}});
      REQUIRE(r.s().node[0].nr_partial == listed);

      // CPU 3 has no cpu slab and no cpu partial slabs. get_partial_node takes the first listed
      // slab for the cpu (ALLOC_FROM_PARTIAL) and keeps taking extra slabs for the cpu partial
      // list (CPU_PARTIAL_NODE each) until extra > cpu_partial_slabs / 2 = 7 / 2 = 3, i.e. it
      // stops after the 4th extra slab: k = min(4, listed - 1). 6 listed: k = 4, 1 slab stays on
      // the node list. 3 listed: k = 2, the list is emptied. One list_lock hold.
      const std::uint32_t k = listed >= 5 ? 4 : listed - 1;
      before = r.s().stats;
      auto reuse = r.s().reuse;
      auto locks = r.sh.acquisitions;
      void* o = r.alloc(3);
      REQUIRE(o != nullptr);
      held.push_back(o);
      check_delta(before, r.s().stats,
                  {{Stat::ALLOC_SLOWPATH, 1}, {Stat::ALLOC_FROM_PARTIAL, 1}, {Stat::CPU_PARTIAL_NODE, k}});
      // The slab taken for the cpu holds 15 objects in use and one free one; the extras count
      // only when taken off the cpu partial list.
      check_reuse(reuse, r.s().reuse, {{Reuse::TAKEN_IN_USE, 1}, {Reuse::TAKEN_FREE_OBJECTS, 1}});
      CHECK(r.sh.acquisitions - locks == 1);
      CHECK(r.s().node[0].nr_partial == listed - 1 - k);
      REQUIRE(r.s().cpu[3].partial != nullptr);
      CHECK(r.s().cpu[3].partial->slabs == k);
      CHECK(r.s().cpu[3].slab == r.slab_of(o));
      CHECK(r.slab_of(o)->frozen);
      // Each partial slab had exactly one free object: the cpu freelist is now empty.
      CHECK(r.s().cpu[3].freelist == nullptr);
      // cpu partial slabs are frozen only with eager freezing.
      CHECK(r.s().cpu[3].partial->frozen == (fe == FrontendKind::CpuPartialFrozen));
      CHECK_FALSE(r.s().cpu[3].partial->on_partial);

      // The next allocation finds the cpu slab full (DEACTIVATE_BYPASS) and takes the head of the
      // cpu partial list (CPU_PARTIAL_ALLOC), without touching the node list.
      before = r.s().stats;
      reuse = r.s().reuse;
      locks = r.sh.acquisitions;
      held.push_back(r.alloc(3));
      check_delta(before, r.s().stats,
                  {{Stat::ALLOC_SLOWPATH, 1}, {Stat::DEACTIVATE_BYPASS, 1}, {Stat::CPU_PARTIAL_ALLOC, 1}});
      check_reuse(reuse, r.s().reuse, {{Reuse::TAKEN_IN_USE, 1}, {Reuse::TAKEN_FREE_OBJECTS, 1}});
      CHECK(r.sh.acquisitions == locks);
      if (k > 1) {
        REQUIRE(r.s().cpu[3].partial != nullptr);
        CHECK(r.s().cpu[3].partial->slabs == k - 1);
      }
      r.slub->check();
      r.release(held);
    }
  }
}

TEST_CASE("slub sequences: a remote free into a full slab puts it on the freeing CPU's partial list") {
  for (auto fe : {FrontendKind::CpuPartial, FrontendKind::CpuPartialFrozen}) {
    INFO(fe_name(fe));
    const bool eager = fe == FrontendKind::CpuPartialFrozen;
    Rig r(fe);
    // CPU 0 fills slab A (16 objects) and moves on with the 17th (A is dropped: DEACTIVATE_BYPASS,
    // full, unfrozen, on no list; slab B becomes CPU 0's cpu slab).
    auto held = alloc_n(r, 0, kObjs + 1);
    CHECK(r.s().stats[int(Stat::DEACTIVATE_BYPASS)] == 1);
    Slab* a = r.slab_of(held[0]);
    Slab* b = r.slab_of(held[kObjs]);
    REQUIRE(a != b);
    CHECK_FALSE(a->frozen);
    CHECK_FALSE(a->on_partial);

    // CPU 1 frees one object of A. Not its cpu slab: __slab_free (FREE_SLOWPATH). prior == NULL
    // and cpu partial is enabled, so no list_lock: put_cpu_partial (CPU_PARTIAL_FREE); CPU 1's
    // partial list was empty, so no drain.
    auto before = r.s().stats;
    auto locks = r.sh.acquisitions;
    r.free(1, held[0]);
    held[0] = nullptr;
    check_delta(before, r.s().stats, {{Stat::FREE_SLOWPATH, 1}, {Stat::CPU_PARTIAL_FREE, 1}});
    CHECK(r.sh.acquisitions == locks);
    CHECK(r.s().cpu[1].partial == a);
    CHECK(a->slabs == 1);
    CHECK(a->inuse == kObjs - 1);
    CHECK_FALSE(a->on_partial);
    // <= 6.7 freezes it in the same cmpxchg; 6.8+ leaves cpu partial slabs unfrozen.
    CHECK(a->frozen == eager);
    r.slub->check();

    // A second free into A, now a cpu partial slab with free objects: 6.8+ takes no lock and
    // counts nothing but FREE_SLOWPATH; <= 6.7 sees a frozen slab (FREE_FROZEN).
    before = r.s().stats;
    locks = r.sh.acquisitions;
    r.free(1, held[1]);
    held[1] = nullptr;
    if (eager)
      check_delta(before, r.s().stats, {{Stat::FREE_SLOWPATH, 1}, {Stat::FREE_FROZEN, 1}});
    else
      check_delta(before, r.s().stats, {{Stat::FREE_SLOWPATH, 1}});
    CHECK(r.sh.acquisitions == locks);
    CHECK(r.s().cpu[1].partial == a);

    // A remote free into CPU 0's cpu slab B: frozen in both schemes, FREE_FROZEN.
    before = r.s().stats;
    r.free(1, held[kObjs]);
    held[kObjs] = nullptr;
    check_delta(before, r.s().stats, {{Stat::FREE_SLOWPATH, 1}, {Stat::FREE_FROZEN, 1}});
    CHECK(b->freelist != nullptr);

    // CPU 0's own free of an object of its cpu slab is a fast path (B's cpu freelist still
    // holds 15 objects, so this allocation is a fast path too).
    void* o = r.alloc(0);
    CHECK(r.slab_of(o) == b);
    held.push_back(o);
    before = r.s().stats;
    r.free(0, o);
    held.back() = nullptr;
    check_delta(before, r.s().stats, {{Stat::FREE_FASTPATH, 1}});
    r.slub->check();
    r.release(held);
  }
}

TEST_CASE("slub sequences: a full cpu partial list is drained by the next full-slab free") {
  for (auto fe : {FrontendKind::CpuPartial, FrontendKind::CpuPartialFrozen}) {
    for (bool empty : {false, true}) {
      INFO(fe_name(fe) << (empty ? ", drained slabs empty" : ", drained slabs in use"));
      Rig r(fe);
      // CPU 0 fills slabs S0..S7 (8 * 16 objects) and takes one object of S8: S0..S7 are full
      // and on no list.
      auto held = alloc_n(r, 0, 8 * kObjs + 1);
      // CPU 1 frees the first object of S0..S6: 7 slabs on its partial list (= cpu_partial_slabs;
      // no drain, since put_cpu_partial drains only when the list already holds 7).
      auto before = r.s().stats;
      for (std::uint32_t k = 0; k < 7; ++k) {
        r.free(1, held[k * kObjs]);
        held[k * kObjs] = nullptr;
      }
      check_delta(before, r.s().stats, {{Stat::FREE_SLOWPATH, 7}, {Stat::CPU_PARTIAL_FREE, 7}});
      REQUIRE(r.s().cpu[1].partial != nullptr);
      REQUIRE(r.s().cpu[1].partial->slabs == 7);

      if (empty) {
        // Free the other 15 objects of S0..S6 too: they stay on CPU 1's partial list, now with
        // inuse == 0 (6.8+: the emptying free takes list_lock, sees !on_node_partial and leaves
        // the slab; <= 6.7: frozen, FREE_FROZEN).
        for (std::uint32_t k = 0; k < 7; ++k)
          for (std::uint32_t i = 1; i < kObjs; ++i) {
            r.free(1, held[k * kObjs + i]);
            held[k * kObjs + i] = nullptr;
          }
        REQUIRE(r.s().cpu[1].partial->slabs == 7);
        for (Slab* sl = r.s().cpu[1].partial; sl; sl = sl->next) CHECK(sl->inuse == 0);
        CHECK(r.s().slabs_allocated == 9);
      }

      // One more full-slab free (first object of S7): put_cpu_partial(drain) finds 7 >= 7 slabs,
      // detaches the whole list and __put_partials it (CPU_PARTIAL_DRAIN), then S7 heads a new
      // list. One list_lock hold (all slabs on node 0).
      //   In use: all 7 go to the node list tail: FREE_ADD_PARTIAL 7.
      //   Empty:  the first 5 are listed (nr_partial 0..4 < min_partial 5): FREE_ADD_PARTIAL 5;
      //           the last 2 find nr_partial == 5 >= min_partial and are discarded:
      //           DEACTIVATE_EMPTY 2, FREE_SLAB 2.
      before = r.s().stats;
      auto reuse = r.s().reuse;
      auto locks = r.sh.acquisitions;
      r.free(1, held[7 * kObjs]);
      held[7 * kObjs] = nullptr;
      check_reuse(reuse, r.s().reuse, {{empty ? Reuse::DRAINED_EMPTY : Reuse::DRAINED_IN_USE, 7}});
      if (!empty) {
        check_delta(before, r.s().stats,
                    {{Stat::FREE_SLOWPATH, 1}, {Stat::CPU_PARTIAL_FREE, 1}, {Stat::CPU_PARTIAL_DRAIN, 1},
                     {Stat::FREE_ADD_PARTIAL, 7}});
        CHECK(r.s().node[0].nr_partial == 7);
        CHECK(r.s().slabs_allocated == 9);
        CHECK(r.sh.acquisitions - locks == 1);
      } else {
        check_delta(before, r.s().stats,
                    {{Stat::FREE_SLOWPATH, 1}, {Stat::CPU_PARTIAL_FREE, 1}, {Stat::CPU_PARTIAL_DRAIN, 1},
                     {Stat::FREE_ADD_PARTIAL, 5}, {Stat::DEACTIVATE_EMPTY, 2}, {Stat::FREE_SLAB, 2}});
        CHECK(r.s().node[0].nr_partial == 5);
        CHECK(r.s().slabs_allocated == 7);
        // One list_lock hold; the discarded pages go to the pcp list without a lock
        // (the pcp list is far below its high mark).
        CHECK(r.sh.acquisitions - locks == 1);
        // CPU 2 (no cpu slab) takes the first listed slab back for the cpu: every object free.
        reuse = r.s().reuse;
        held.push_back(r.alloc(2));
        check_reuse(reuse, r.s().reuse, {{Reuse::TAKEN_EMPTY, 1}, {Reuse::TAKEN_FREE_OBJECTS, kObjs}});
      }
      REQUIRE(r.s().cpu[1].partial == r.slab_of(held[7 * kObjs + 1]));
      CHECK(r.s().cpu[1].partial->slabs == 1);
      for (Slab* sl = r.s().node[0].partial_head; sl; sl = sl->next_node) {
        CHECK_FALSE(sl->frozen);
        CHECK(sl->on_partial);
      }
      r.slub->check();
      r.release(held);
    }
  }
}

TEST_CASE("slub sequences: without a cpu partial list frees move slabs on and off the node list") {
  for (auto fe : {FrontendKind::CpuPartial, FrontendKind::CpuPartialFrozen}) {
    INFO(fe_name(fe));
    // cpu_partial = 0 (sysfs knob): cpu_partial_slabs 0, and both schemes behave alike.
    Rig r(fe, 1, 4, 0u);
    REQUIRE(r.s().geo.cpu_partial == 0);
    REQUIRE(r.s().geo.cpu_partial_slabs == 0);
    // CPU 0 fills S0..S6 and takes one object of S7: S0..S6 are full and on no list.
    auto held = alloc_n(r, 0, 7 * kObjs + 1);

    // CPU 1 frees the first object of S0..S5. Each is full -> partial with cpu partial off:
    // __slab_free takes list_lock and add_partial(TAIL): FREE_ADD_PARTIAL each.
    auto before = r.s().stats;
    auto locks = r.sh.acquisitions;
    for (std::uint32_t k = 0; k < 6; ++k) {
      r.free(1, held[k * kObjs]);
      held[k * kObjs] = nullptr;
    }
    check_delta(before, r.s().stats, {{Stat::FREE_SLOWPATH, 6}, {Stat::FREE_ADD_PARTIAL, 6}});
    CHECK(r.sh.acquisitions - locks == 6);
    CHECK(r.s().node[0].nr_partial == 6);
    CHECK(r.s().cpu[1].partial == nullptr);

    // Emptying S0: the 14 frees in between take no lock and count only FREE_SLOWPATH; the last
    // one empties it while nr_partial 6 >= min_partial 5: FREE_REMOVE_PARTIAL, FREE_SLAB.
    // S1 likewise (nr_partial 5 >= 5). S2 empties with nr_partial 4 < 5 and stays listed.
    for (std::uint32_t k = 0; k < 3; ++k) {
      before = r.s().stats;
      locks = r.sh.acquisitions;
      for (std::uint32_t i = 1; i + 1 < kObjs; ++i) {
        r.free(1, held[k * kObjs + i]);
        held[k * kObjs + i] = nullptr;
      }
      check_delta(before, r.s().stats, {{Stat::FREE_SLOWPATH, kObjs - 2}});
      CHECK(r.sh.acquisitions == locks);
      before = r.s().stats;
      r.free(1, held[k * kObjs + kObjs - 1]);
      held[k * kObjs + kObjs - 1] = nullptr;
      if (k < 2) {
        check_delta(before, r.s().stats,
                    {{Stat::FREE_SLOWPATH, 1}, {Stat::FREE_REMOVE_PARTIAL, 1}, {Stat::FREE_SLAB, 1}});
        CHECK(r.s().node[0].nr_partial == 5 - k);
      } else {
        check_delta(before, r.s().stats, {{Stat::FREE_SLOWPATH, 1}});
        CHECK(r.s().node[0].nr_partial == 4);
      }
    }
    CHECK(r.s().slabs_allocated == 6);

    // CPU 2 (no cpu slab): get_partial_node takes one slab and stops, cpu_partial_slabs == 0.
    before = r.s().stats;
    held.push_back(r.alloc(2));
    check_delta(before, r.s().stats, {{Stat::ALLOC_SLOWPATH, 1}, {Stat::ALLOC_FROM_PARTIAL, 1}});
    CHECK(r.s().node[0].nr_partial == 3);
    CHECK(r.s().cpu[2].partial == nullptr);
    r.slub->check();
    r.release(held);
  }
}

TEST_CASE("slub sequences: a node-specific allocation on the wrong node deactivates the cpu slab") {
  // Two nodes, CPUs 0-1 on node 0 and 2-3 on node 1. CPU 0's cpu slab is on node 0 with 15 free
  // objects on the cpu freelist. kmem_cache_alloc_node(node 1): slow path, ALLOC_NODE_MISMATCH,
  // deactivate_slab (the slab's own freelist is empty: DEACTIVATE_TO_HEAD), node 1 has no partial
  // slabs, new slab on node 1 (ALLOC_SLAB).
  Rig r(FrontendKind::CpuPartial, 2, 4);
  std::vector<void*> held{r.alloc(0)};
  Slab* first = r.slab_of(held[0]);
  CHECK(first->node == 0);
  auto before = r.s().stats;
  void* o = r.alloc(0, 1);
  REQUIRE(o != nullptr);
  held.push_back(o);
  check_delta(before, r.s().stats,
              {{Stat::ALLOC_SLOWPATH, 1}, {Stat::ALLOC_NODE_MISMATCH, 1}, {Stat::DEACTIVATE_TO_HEAD, 1},
               {Stat::ALLOC_SLAB, 1}});
  CHECK(r.slab_of(o)->node == 1);
  CHECK(first->on_partial);
  CHECK(first->inuse == 1);
  CHECK(r.s().node[0].nr_partial == 1);
  r.slub->check();
  r.release(held);
}

TEST_CASE("slub sequences: bulk free groups objects by slab the way build_detached_freelist does") {
  // §1.8 (mm/slub.c since 5.19): start a group with the LAST pointer, scan backwards linking
  // every object of the same slab and swapping it to the end of the array, stop at the third
  // look-ahead miss in total, and go on with the entries left in front.
  // Slabs of the array, index 0..7: S0 S0 S1 S1 S3 S1 S0 S3.
  //   Round 1 starts with S3 (index 7): S0 miss, S1 miss, S3 hit (swapped to index 6), S1 third
  //           miss: group {S3 x2}; left: S0 S0 S1 S1 S0 S1.
  //   Round 2 starts with S1 (index 5): S0 miss, S1 hit, S1 hit, S0 miss, S0 third miss:
  //           group {S1 x3}; left: S0 S0 S0.
  //   Round 3: group {S0 x3}.
  // Three groups, so three __slab_free calls (the freeing CPU has no cpu slab): FREE_SLOWPATH 3.
  // Each group is the first free into a full slab: CPU_PARTIAL_FREE 3, no list_lock.
  // (The pre-5.19 variant, which NULLs processed entries and restarts at the first skipped one,
  // makes four groups here: {S3 x2}, {S0}, {S1 x3}, {S0 x2}.)
  for (auto fe : {FrontendKind::CpuPartial, FrontendKind::CpuPartialFrozen}) {
    INFO(fe_name(fe));
    Rig r(fe);
    auto held = alloc_n(r, 0, 4 * kObjs + 1);  // S0..S3 full, one object of S4
    auto obj = [&](int slab, int i) { return held[slab * kObjs + i]; };
    void* arr[8] = {obj(0, 0), obj(0, 1), obj(1, 0), obj(1, 1), obj(3, 0), obj(1, 2), obj(0, 2), obj(3, 1)};
    auto before = r.s().stats;
    auto locks = r.sh.acquisitions;
    run_now(r.slub->free_bulk(r.e(3), r.s(), 8, arr));
    check_delta(before, r.s().stats, {{Stat::FREE_SLOWPATH, 3}, {Stat::CPU_PARTIAL_FREE, 3}});
    CHECK(r.sh.acquisitions == locks);
    CHECK(r.slab_of(obj(0, 0))->inuse == kObjs - 3);
    CHECK(r.slab_of(obj(1, 0))->inuse == kObjs - 3);
    CHECK(r.slab_of(obj(3, 0))->inuse == kObjs - 2);
    for (void* o : arr)
      for (auto& h : held)
        if (h == o) h = nullptr;
    // A bulk free of objects of the freeing CPU's own cpu slab is one fast-path group:
    // FREE_FASTPATH += cnt.
    void* mine[4];
    for (auto& m : mine) m = r.alloc(0);  // S4's cpu freelist
    before = r.s().stats;
    run_now(r.slub->free_bulk(r.e(0), r.s(), 4, mine));
    check_delta(before, r.s().stats, {{Stat::FREE_FASTPATH, 4}});
    r.slub->check();
    r.release(held);
  }
}

TEST_CASE("slub sequences: a node request on an exhausted node takes remote partial slabs before a new slab") {
  // Two nodes: CPUs 0-1 on node 0 (plenty of pages), CPUs 2-3 on node 1 (one page).
  // ___slab_alloc for kmem_cache_alloc_node(node 1) without __GFP_THISNODE (6.10+, §2.3 step 5):
  // pass 1 (GFP_NOWAIT | __GFP_THISNODE): node 1's partial list is empty and node 1 has no
  // page. Pass 2 (the caller's flags): get_partial goes on to get_any_partial, which finds node 0
  // with nr_partial 6 > min_partial 5 and takes 1 slab for the cpu (ALLOC_FROM_PARTIAL) plus
  // 4 for the cpu partial list (CPU_PARTIAL_NODE: stop once extra > 7 / 2). No new slab.
  for (auto fe : {FrontendKind::CpuPartial, FrontendKind::CpuPartialFrozen}) {
    INFO(fe_name(fe));
    Rig r(fe, 2, 4, std::nullopt, {1 << 16, 1});
    // CPU 2 takes node 1's only page.
    std::vector<void*> held{r.alloc(2)};
    REQUIRE(r.slab_of(held[0])->node == 1);
    // Six node-0 slabs, each with one free object, on node 0's partial list.
    auto more = alloc_n(r, 0, 6 * kObjs);
    r.flush(0);
    for (std::uint32_t k = 0; k < 6; ++k) {
      r.free(1, more[k * kObjs]);
      more[k * kObjs] = nullptr;
    }
    r.flush(1);
    held.insert(held.end(), more.begin(), more.end());
    REQUIRE(r.s().node[0].nr_partial == 6);
    REQUIRE(r.s().cpu[0].slab == nullptr);

    auto before = r.s().stats;
    void* o = r.alloc(0, 1);
    REQUIRE(o != nullptr);
    held.push_back(o);
    check_delta(before, r.s().stats,
                {{Stat::ALLOC_SLOWPATH, 1}, {Stat::ALLOC_FROM_PARTIAL, 1}, {Stat::CPU_PARTIAL_NODE, 4}});
    CHECK(r.slab_of(o)->node == 0);
    CHECK(r.s().node[0].nr_partial == 1);
    CHECK(r.s().slabs_allocated == 7);
    r.slub->check();
    r.release(held);
  }
}

TEST_CASE("slub sequences: double free and foreign pointers throw SlubError naming cache and object") {
  for (auto fe : {FrontendKind::CpuPartial, FrontendKind::CpuPartialFrozen}) {
    INFO(fe_name(fe));
    Rig r(fe);
    std::vector<void*> held = alloc_n(r, 0, 3);

    auto expect_error = [&](auto&& fn, void* obj, const char* what) {
      std::string msg;
      try {
        fn();
      } catch (const SlubError& err) {
        msg = err.what();
      }
      INFO("message: " << msg);
      REQUIRE_FALSE(msg.empty());
      CHECK(msg.find("kmalloc-256") != std::string::npos);
      CHECK(msg.find(fmt::format("{}", obj)) != std::string::npos);
      CHECK(msg.find(what) != std::string::npos);
    };

    // Double free, on the same CPU (the cpu slab) and on another one.
    void* a = held[0];
    r.free(0, a);
    held[0] = nullptr;
    expect_error([&] { r.free(0, a); }, a, "double free");
    expect_error([&] { r.free(2, a); }, a, "double free");
    r.slub->check();  // the bad calls changed nothing

    // A pointer no slab owns.
    std::vector<std::uint64_t> outside(64);
    void* f = outside.data() + 8;
    expect_error([&] { r.free(0, f); }, f, "foreign pointer");
    // Inside a slab, but not at the start of an object.
    void* mid = static_cast<std::uint8_t*>(held[1]) + kHostObjectBytes / 2;
    expect_error([&] { r.free(0, mid); }, mid, "not the start of an object");
    // An object of another cache.
    void* other = run_now(r.slub->alloc(r.e(0), r.slub->cache(1)));
    expect_error([&] { r.free(0, other); }, other, "belongs to cache kmalloc-64");
    r.slub->check();
    run_now(r.slub->free(r.e(0), r.slub->cache(1), other));

    // Bulk free of an already freed object.
    void* b = held[2];
    r.free(1, b);
    held[2] = nullptr;
    void* arr[1] = {b};
    expect_error([&] { run_now(r.slub->free_bulk(r.e(0), r.s(), 1, arr)); }, b, "double free");
    r.slub->check();
    // A rejected bulk free frees nothing, also when the bad pointer comes after good ones:
    // an already freed object, then the same object twice in one array.
    void* c = r.alloc(0);
    void* bad1[2] = {c, b};
    expect_error([&] { run_now(r.slub->free_bulk(r.e(0), r.s(), 2, bad1)); }, b, "double free");
    r.slub->check();
    void* bad2[3] = {c, held[1], c};
    expect_error([&] { run_now(r.slub->free_bulk(r.e(0), r.s(), 3, bad2)); }, c, "double free");
    r.slub->check();
    void* good[2] = {c, held[1]};
    run_now(r.slub->free_bulk(r.e(0), r.s(), 2, good));
    held[1] = nullptr;
    r.slub->check();
    r.release(held);
  }
}

TEST_CASE("slub sequences: counters carry the kernel's sysfs names") {
  // slub-algorithms.md §2.10: 6.8-6.17 enum order, sysfs name = lower-case item name.
  const char* names[] = {"alloc_fastpath", "alloc_slowpath", "free_fastpath", "free_slowpath",
                         "free_frozen", "free_add_partial", "free_remove_partial",
                         "alloc_from_partial", "alloc_slab", "alloc_refill", "alloc_node_mismatch",
                         "free_slab", "cpuslab_flush", "deactivate_full", "deactivate_empty",
                         "deactivate_to_head", "deactivate_to_tail", "deactivate_remote_frees",
                         "deactivate_bypass", "order_fallback", "cmpxchg_double_cpu_fail",
                         "cmpxchg_double_fail", "cpu_partial_alloc", "cpu_partial_free",
                         "cpu_partial_node", "cpu_partial_drain"};
  for (int i = 0; i < 26; ++i) CHECK(std::string(stat_name(static_cast<Stat>(i))) == names[i]);
  CHECK(std::string(stat_name(Stat::CPU_PARTIAL_DRAIN)) == "cpu_partial_drain");
  CHECK(std::string(stat_name(Stat::ALLOC_FAILED)) == "alloc_failed");
}
