// docs/paths.md, replayed: small one-CPU sequences on every kernel preset (configs/kernels), and
// for each step the exact SLUB_STATS deltas of the cache and the exact spinlocks taken, by lock
// class and by the kernel function (Frame) the model takes them in. Each check names the row of
// docs/paths.md it checks (A1..A12 cpu slab + cpu partial, S1..S17 sheaves, L1..L3 the 7.0 slab
// layer, P1..P2 the page allocator); where the model is known to differ from the kernel the check
// pins the model's value and names the difference (D1..) of docs/paths.md.
//
// Setup throughout: one CPU (node 0; some tests add a node 1 without CPUs), the preset's
// front-end, patches, cpu partial accounting and targets, and sheaf capacities; no freelist
// randomisation (objects in address order), remote_node_defrag_ratio 1024 (the any-node passes
// always run). The cache is maple_node: 256 bytes, aligned 256. On one CPU calculate_order's
// min_objects is 4 * (fls(1) + 1) = 8: order 0, 16 objects per slab; min_partial
// clamp(ilog2(256) / 2, 5, 10) = 5; cpu_partial 52 (13 before 5.16) -> cpu_partial_slabs
// ceil(2 * 52 / 16) = 7 (ceil(26 / 16) = 2); sheaf capacity 32 where the preset gives it one
// (6.18/6.19 exactly, 7.0 max(28, 32)).
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "models/immediate.h"
#include "models/slub/slub.h"
#include "sim/config/config.h"
#include "sim/config/kernel.h"

using namespace slubsim;
using namespace slubsim::slub;

namespace {

constexpr std::uint32_t kObjs = 16;  // objects per maple_node slab on one CPU
constexpr std::uint32_t kCap = 32;   // maple_node's sheaf capacity (6.18+)

// "maple_node.list_lock" -> "list_lock"; "zone_lock" stays.
std::string lock_kind(std::string_view cls) {
  const auto dot = cls.rfind('.');
  return std::string(dot == std::string_view::npos ? cls : cls.substr(dot + 1));
}

// The registry: every spinlock keeps its class, and every acquisition is counted as
// "<class>@<innermost Frame>" (a trylock as "<class>?@<Frame>").
class PathShared final : public Shared {
 public:
  LineId new_line(std::string_view, int, Reach) override { return {lines_++}; }
  SpinLockId new_spinlock(std::string_view cls, std::string_view, int, Reach) override {
    kinds_.push_back(lock_kind(cls));
    holders_.push_back(-1);
    lock_lines_.push_back(lines_++);
    return {static_cast<std::uint32_t>(kinds_.size() - 1)};
  }
  RwsemId new_rwsem(std::string_view, std::string_view, int, Reach) override { return {rwsems_++}; }
  LineId lock_line(SpinLockId l) const override { return {lock_lines_.at(l.v)}; }
  void set_line_reach(LineId, int) override {}

  bool lock(std::uint32_t id, int cpu, bool try_only, const std::string& where) {
    int& h = holders_.at(id);
    if (h == cpu) throw std::logic_error("spinlock taken twice by one CPU");
    if (h >= 0) {
      if (try_only) return false;
      throw std::logic_error("spinlock held by another CPU");
    }
    h = cpu;
    ++taken[kinds_.at(id) + (try_only ? "?@" : "@") + where];
    return true;
  }
  void unlock(std::uint32_t id, int cpu) {
    int& h = holders_.at(id);
    if (h != cpu) throw std::logic_error("unlock of a spinlock not held");
    h = -1;
  }
  bool any_held() const {
    for (int h : holders_)
      if (h >= 0) return true;
    return false;
  }
  std::map<std::string, std::uint64_t> taken;

 private:
  std::uint32_t lines_ = 0, rwsems_ = 0;
  std::vector<std::string> kinds_;
  std::vector<int> holders_;
  std::vector<std::uint32_t> lock_lines_;
};

// Grants everything at once; spinlocks go through PathShared with the current kernel function.
class PathExec final : public Exec {
 public:
  PathExec(PathShared& sh, int cpu, int node) : Exec(cpu, node), sh_(sh) {}

 protected:
  bool begin(const Request& r) override {
    result_ = true;
    const std::string where = depth() > 0 ? frame(depth() - 1) : "?";
    switch (r.kind) {
      case Req::SpinLock: sh_.lock(r.id, cpu_, false, where); break;
      case Req::SpinTrylock: result_ = sh_.lock(r.id, cpu_, true, where); break;
      case Req::SpinUnlock: sh_.unlock(r.id, cpu_); break;
      default: break;
    }
    return true;
  }
  void park(std::coroutine_handle<>) override { throw std::logic_error("path exec: request not granted"); }

 private:
  PathShared& sh_;
};

Kernel load_kernel(const std::string& name, const std::vector<std::string>& patches = {}) {
  const std::string file = std::string(SLUBSIM_SOURCE_DIR) + "/configs/kernels/" + name + ".json";
  Kernel k = parse_kernel(load_json_file(file), file);
  if (!patches.empty()) apply_patches(k, patches);
  return k;
}

struct Setup {
  int nodes = 1;
  std::optional<std::uint32_t> min_partial;
  std::optional<std::uint32_t> barn_max_full;
  int pcp_batch = 63, pcp_high = 378;
  std::vector<std::string> patches;  // apply_patches changes, e.g. "-spare-sheaf"
};

// The preset's switches as sim/run/slub_config.cpp slub_params maps them, on one CPU.
Params params_of(const Kernel& k, const Setup& su) {
  Params p;
  CacheSpec maple;
  maple.name = "maple_node";
  maple.object_size = 256;
  maple.align = 256;
  maple.min_partial = su.min_partial;
  CacheSpec km;
  km.name = "kmalloc-256";
  km.object_size = 256;
  for (CacheSpec* c : {&maple, &km})
    for (const auto& [name, cap] : k.sheaf_capacity)
      if (name == c->name) c->sheaf_capacity = cap;
  p.caches = {maple, km};
  Features& f = p.features;
  f.frontend = k.frontend;
  f.cpu_partial = k.cpu_partial;
  f.cpu_partial_objects = k.cpu_partial_objects;
  if (k.cpu_partial_targets) f.cpu_partial_targets = *k.cpu_partial_targets;
  f.barn_max_full = su.barn_max_full.value_or(k.barn_max_full);
  f.barn_max_empty = k.barn_max_empty;
  f.pcs_batch_max = k.pcs_batch_max;
  f.slub_max_order = k.slub_max_order;
  f.slub_min_objects = k.slub_min_objects;
  f.spare_sheaf = k.has("spare-sheaf");
  f.remote_refill_trylock = k.has("remote-refill-trylock");
  f.skip_freelist = k.has("skip-freelist");
  f.refill_any_node = k.has("refill-any-node");
  f.refill_from_partial = k.has("refill-from-partial");
  f.freelist_random = false;
  f.remote_node_defrag_ratio = 1024;
  p.page_alloc.pcp_batch = su.pcp_batch;
  p.page_alloc.pcp_high = su.pcp_high;
  p.numa.nr_cpus = 1;
  p.numa.nr_nodes = su.nodes;
  p.numa.cpu_node = {0};
  for (int n = 0; n < su.nodes; ++n) {
    p.numa.node_pages.push_back(1 << 16);
    std::vector<int> fb;
    for (int i = 0; i < su.nodes; ++i) fb.push_back((n + i) % su.nodes);
    p.numa.fallback.push_back(fb);
  }
  p.rcu_grace_period = 1000;
  p.validate = true;
  return p;
}

struct Rig {
  PathShared sh;
  Kernel k;
  std::unique_ptr<Slub> slub;
  std::unique_ptr<PathExec> ex;

  explicit Rig(const std::string& preset, const Setup& su = {}) : k(load_kernel(preset, su.patches)) {
    slub = std::make_unique<Slub>(sh, params_of(k, su));
    ex = std::make_unique<PathExec>(sh, 0, 0);
  }
  bool v7() const { return k.frontend == FrontendKind::Sheaves; }
  bool eager() const { return k.frontend == FrontendKind::CpuPartialFrozen; }
  KmemCache& s() { return slub->cache(0); }
  PathExec& e() { return *ex; }
  PercpuSheaves& pcs() { return s().pcs[0]; }
  Barn& barn() { return s().node[0].barn; }
  Slab* slab_of(void* o) { return slub->virt_to_slab(o); }
  void* alloc(int node = kNoNode) {
    void* o = run_now(slub->alloc(e(), s(), node));
    REQUIRE(o != nullptr);
    return o;
  }
  void free(void* o) { run_now(slub->free(e(), s(), o)); }
  std::vector<void*> alloc_n(std::uint32_t n) {
    std::vector<void*> v;
    for (std::uint32_t i = 0; i < n; ++i) v.push_back(alloc());
    return v;
  }
  void flush() { run_now(slub->flush_cpu(e(), s(), 0)); }
  void kfree_rcu(void* o) { run_now(slub->kfree_rcu(e(), s(), o)); }
  void rcu_barrier() { run_now(slub->rcu_barrier(e())); }
  // The sheaf pop / push counters: ALLOC_PCS / FREE_PCS in 6.18/6.19, the fastpath ones in 7.0.
  Stat pop() const { return v7() ? Stat::ALLOC_FASTPATH : Stat::ALLOC_PCS; }
  Stat push() const { return v7() ? Stat::FREE_FASTPATH : Stat::FREE_PCS; }
};

using Stats = std::map<Stat, std::uint64_t>;
using Locks = std::map<std::string, std::uint64_t>;

std::string show(const Locks& l) {
  std::string out;
  for (const auto& [site, n] : l) out += site + " x" + std::to_string(n) + "; ";
  return out.empty() ? "none" : out;
}

// One step: f, then every counter moved by exactly `stats` (absent = 0) and exactly the locks in
// `locks` were taken (absent = none), nothing is still held, and every object is in one place.
template <class F>
void step(Rig& r, const char* row, F&& f, const Stats& stats, const Locks& locks) {
  INFO("row " << std::string(row) << " on " << r.k.name);
  const StatCounters before = r.s().stats;
  const Locks taken_before = r.sh.taken;
  f();
  for (int i = 0; i < kNrStats; ++i) {
    const auto st = static_cast<Stat>(i);
    const auto it = stats.find(st);
    INFO("counter " << std::string(stat_name(st)));
    CHECK(r.s().stats[i] - before[i] == (it == stats.end() ? 0 : it->second));
  }
  Locks delta;
  for (const auto& [site, n] : r.sh.taken) {
    const auto b = taken_before.find(site);
    const std::uint64_t d = n - (b == taken_before.end() ? 0 : b->second);
    if (d) delta[site] = d;
  }
  INFO("locks taken: " << show(delta) << " expected: " << show(locks));
  CHECK(delta == locks);
  CHECK_FALSE(r.sh.any_held());
  r.slub->check();
}

// The presets by front-end (docs/paths.md, "Kernels").
const std::vector<std::string> kCpuPartialPresets = {"v5.15", "v5.15-pages", "v5.16", "v6.5", "v6.7", "v6.17"};
// 6.18/6.19 presets that give maple_node sheaves (v6.18-vma-sheaves gives only vm_area_struct).
const std::vector<std::string> kSheafOnCpuPresets = {"v6.18-maple-call-rcu", "v6.18", "v6.19", "v6.18-sheaves-bench"};
// Every preset whose maple_node has sheaves.
std::vector<std::string> sheaf_presets() {
  std::vector<std::string> v = kSheafOnCpuPresets;
  v.push_back("v7.0");
  return v;
}

std::string list_lock(const char* fn) { return std::string("list_lock@") + fn; }
std::string barn_lock(const char* fn) { return std::string("barn_lock@") + fn; }
std::string zone_lock(const char* fn) { return std::string("zone_lock@") + fn; }

}  // namespace

TEST_CASE("paths: every preset maps to its front-end, patches and per-cache switches") {
  // docs/paths.md "Kernels": front-end group, patches, cpu partial target/accounting, sheaf capacity.
  struct Want {
    const char* preset;
    FrontendKind fe;
    std::vector<std::string> patches;
    std::uint32_t cpu_partial, cpu_partial_slabs;
    bool objects_accounting;
    std::uint32_t maple_cap, kmalloc256_cap;
  };
  const std::vector<Want> wants = {
      {"v5.15", FrontendKind::CpuPartialFrozen, {}, 13, 2, true, 0, 0},
      {"v5.15-pages", FrontendKind::CpuPartialFrozen, {}, 13, 2, false, 0, 0},
      {"v5.16", FrontendKind::CpuPartialFrozen, {}, 52, 7, false, 0, 0},
      {"v6.5", FrontendKind::CpuPartialFrozen, {}, 52, 7, false, 0, 0},
      {"v6.7", FrontendKind::CpuPartialFrozen, {}, 52, 7, false, 0, 0},
      {"v6.17", FrontendKind::CpuPartial, {}, 52, 7, false, 0, 0},
      {"v6.18-vma-sheaves", FrontendKind::SheavesOnCpuPartial, {}, 52, 7, false, 0, 0},
      {"v6.18-maple-call-rcu", FrontendKind::SheavesOnCpuPartial, {}, 52, 7, false, kCap, 0},
      {"v6.18", FrontendKind::SheavesOnCpuPartial, {}, 52, 7, false, kCap, 0},
      {"v6.19", FrontendKind::SheavesOnCpuPartial, {}, 52, 7, false, kCap, 0},
      {"v6.18-sheaves-bench", FrontendKind::SheavesOnCpuPartial, {}, 52, 7, false, kCap, 0},
      // 7.0: no cpu partial at all; every cache has sheaves: 28 automatic, maple_node's 32 a minimum.
      {"v7.0", FrontendKind::Sheaves, {"spare-sheaf", "refill-any-node", "remote-refill-trylock", "nowait-refill"}, 0, 0, false, kCap, 28},
  };
  for (const Want& w : wants) {
    INFO(std::string(w.preset));
    Rig r(w.preset);
    CHECK(r.k.frontend == w.fe);
    CHECK(r.k.patches == w.patches);
    CHECK(r.k.cpu_partial_objects == w.objects_accounting);
    CHECK(r.s().geo.order == 0);
    CHECK(r.s().geo.objects == kObjs);
    CHECK(r.s().geo.min_partial == 5);
    CHECK(r.s().geo.cpu_partial == w.cpu_partial);
    CHECK(r.s().geo.cpu_partial_slabs == w.cpu_partial_slabs);
    CHECK(r.s().sheaf_capacity == w.maple_cap);
    CHECK(r.slub->cache(1).sheaf_capacity == w.kmalloc256_cap);
    // D6: every CPU's first main sheaf is created without SHEAF_ALLOC (the kernel's
    // init_percpu_sheaves counts one per possible CPU: 1 here where maple_node has sheaves).
    CHECK(r.s().stats[static_cast<int>(Stat::SHEAF_ALLOC)] == 0);
  }
}

TEST_CASE("paths: cpu slab alloc fast, alloc slow and new slab") {
  // Also v6.18-vma-sheaves: its maple_node has no sheaves, so it takes Table A.
  std::vector<std::string> presets = kCpuPartialPresets;
  presets.push_back("v6.18-vma-sheaves");
  for (const auto& preset : presets) {
    Rig r(preset);
    std::vector<void*> held;
    // A5 + P1: a fresh cache: ___slab_alloc finds no cpu slab, no cpu partial and no node partial
    // slab (get_partial_node's racy nr_partial check takes no lock) and calls new_slab; the first
    // order-0 page comes from an empty pcp list: rmqueue_bulk under zone->lock.
    step(r, "A5 alloc slow: new slab / P1 new slab", [&] { held.push_back(r.alloc()); },
         {{Stat::ALLOC_SLOWPATH, 1}, {Stat::ALLOC_SLAB, 1}}, {{zone_lock("rmqueue_bulk"), 1}});
    // A1: the other 15 objects of the slab come off the lockless cpu freelist.
    step(r, "A1 alloc fast", [&] { for (int i = 0; i < 15; ++i) held.push_back(r.alloc()); },
         {{Stat::ALLOC_FASTPATH, 15}}, {});
    // A2 + A5: the 17th: the cpu slab's own freelist is empty too (get_freelist: DEACTIVATE_BYPASS),
    // then a new slab; its page comes off the pcp list without the zone lock.
    step(r, "A2 alloc slow: bypass, A5 new slab", [&] { held.push_back(r.alloc()); },
         {{Stat::ALLOC_SLOWPATH, 1}, {Stat::DEACTIVATE_BYPASS, 1}, {Stat::ALLOC_SLAB, 1}}, {});
    CHECK(r.slab_of(held[0]) != r.slab_of(held[16]));
  }
}

TEST_CASE("paths: cpu slab free fast, free slow into a full slab, alloc from the cpu partial list") {
  for (const auto& preset : kCpuPartialPresets) {
    Rig r(preset);
    std::vector<void*> held = r.alloc_n(kObjs + 1);  // S1 full, S2 the cpu slab with one in use
    Slab* s1 = r.slab_of(held[0]);
    // A6: an object of the cpu slab goes back onto the cpu freelist.
    step(r, "A6 free fast", [&] { r.free(held[kObjs]); }, {{Stat::FREE_FASTPATH, 1}}, {});
    // A7: the first free into the full S1: __slab_free, no list_lock (full -> partial with cpu
    // partial on), put_cpu_partial; <= 6.7 freezes S1 in the same cmpxchg.
    step(r, "A7 free slow (full slab -> cpu partial)", [&] { r.free(held[0]); },
         {{Stat::FREE_SLOWPATH, 1}, {Stat::CPU_PARTIAL_FREE, 1}}, {});
    CHECK(s1->frozen == r.eager());
    // A7: the second: 6.8+ S1 is unfrozen, still partial: nothing to do; <= 6.7 it is frozen:
    // FREE_FROZEN.
    Stats second = {{Stat::FREE_SLOWPATH, 1}};
    if (r.eager()) second[Stat::FREE_FROZEN] = 1;
    step(r, "A7 free slow (cpu partial slab)", [&] { r.free(held[1]); }, second, {});
    // A1: the cpu slab S2 holds 16 free objects again.
    step(r, "A1 alloc fast", [&] { for (std::uint32_t i = 0; i < kObjs; ++i) r.alloc(); },
         {{Stat::ALLOC_FASTPATH, kObjs}}, {});
    // A2 + A3: S2 is used up (DEACTIVATE_BYPASS); S1 comes off the cpu partial list
    // (CPU_PARTIAL_ALLOC) with one cmpxchg of its freelist, no lock. The <= 6.7 kernel goes back
    // to redo and also counts ALLOC_REFILL there; the model does not (D1).
    step(r, "A3 alloc slow: from the cpu partial list", [&] { r.alloc(); },
         {{Stat::ALLOC_SLOWPATH, 1}, {Stat::DEACTIVATE_BYPASS, 1}, {Stat::CPU_PARTIAL_ALLOC, 1}}, {});
    CHECK(r.s().cpu[0].slab == s1);
  }
}

TEST_CASE("paths: cpu partial drain, by each preset's limit") {
  // A8: frees into full slabs push them onto the cpu partial list until it is full: then the
  // whole list goes to the node list under one list_lock (__put_partials), and the new slab
  // starts a new list. The limit: 5.15 free objects (pobjects > 13; each slab counted with its one
  // free object: the 15th free drains 14), 5.15-pages 2 slabs (the 3rd free drains 2), 5.16+ 7
  // slabs (the 8th free drains 7).
  struct Want {
    const char* preset;
    std::uint32_t drain_at;
  };
  for (const Want& w : std::vector<Want>{{"v5.15", 15}, {"v5.15-pages", 3}, {"v5.16", 8}, {"v6.5", 8},
                                         {"v6.7", 8}, {"v6.17", 8}}) {
    Rig r(w.preset);
    std::vector<void*> held = r.alloc_n(kObjs * 16);  // 16 full slabs; the last is the cpu slab
    for (std::uint32_t i = 1; i < w.drain_at; ++i)
      step(r, "A7 free slow (full slab -> cpu partial)", [&] { r.free(held[(i - 1) * kObjs]); },
           {{Stat::FREE_SLOWPATH, 1}, {Stat::CPU_PARTIAL_FREE, 1}}, {});
    step(r, "A8 cpu partial drain", [&] { r.free(held[(w.drain_at - 1) * kObjs]); },
         {{Stat::FREE_SLOWPATH, 1}, {Stat::CPU_PARTIAL_FREE, 1}, {Stat::CPU_PARTIAL_DRAIN, 1},
          {Stat::FREE_ADD_PARTIAL, w.drain_at - 1}},
         {{list_lock("__put_partials"), 1}});
    CHECK(r.s().node[0].nr_partial == w.drain_at - 1);
  }
}

TEST_CASE("paths: get_partial_node takes several slabs per list_lock hold") {
  // A4: eight node partial slabs with one free object each. One list_lock hold takes the first
  // for the cpu (ALLOC_FROM_PARTIAL) and more for the cpu partial list (CPU_PARTIAL_NODE) until
  // 5.15: the free objects taken exceed cpu_partial / 2 = 6 (7 slabs); 5.15-pages: more than
  // cpu_partial_slabs / 2 = 1 extra (3 slabs); 5.16+: more than 7 / 2 = 3 extras (5 slabs).
  // <= 6.7 freezes each with a cmpxchg under the lock (acquire_slab), 6.8+ freezes only the
  // first, after the lock (freeze_slab): no lock either way.
  struct Want {
    const char* preset;
    std::uint64_t extra;
  };
  for (const Want& w : std::vector<Want>{{"v5.15", 6}, {"v5.15-pages", 2}, {"v5.16", 4}, {"v6.5", 4},
                                         {"v6.7", 4}, {"v6.17", 4}}) {
    Rig r(w.preset);
    std::vector<void*> held = r.alloc_n(kObjs * 8);
    for (std::uint32_t i = 0; i < 8; ++i) r.free(held[i * kObjs]);
    r.flush();  // A11: the cpu slab and the cpu partial list go to the node list
    REQUIRE(r.s().node[0].nr_partial == 8);
    step(r, "A4 alloc slow: get_partial_node", [&] { r.alloc(); },
         {{Stat::ALLOC_SLOWPATH, 1}, {Stat::ALLOC_FROM_PARTIAL, 1}, {Stat::CPU_PARTIAL_NODE, w.extra}},
         {{list_lock("get_partial_node"), 1}});
    CHECK(r.s().node[0].nr_partial == 8 - 1 - w.extra);
  }
}

TEST_CASE("paths: deactivate_slab on flush, and an empty slab discarded") {
  for (const auto& preset : kCpuPartialPresets) {
    {
      Rig r(preset);
      r.alloc();
      // A11: flush_cpu_slab: the cpu slab (15 objects on the cpu freelist, no remote frees) goes
      // to the head of the node list under one list_lock.
      step(r, "A11 deactivate / flush", [&] { r.flush(); },
           {{Stat::CPUSLAB_FLUSH, 1}, {Stat::DEACTIVATE_TO_HEAD, 1}}, {{list_lock("deactivate_slab"), 1}});
      CHECK(r.s().node[0].nr_partial == 1);
    }
    {
      // A11 + P2: min_partial 0, the cpu slab empty: deactivate_slab discards it. 6.8+ takes no
      // list_lock; the <= 6.7 kernel takes it only for a slab going to the partial list (M_PARTIAL),
      // the model also for this one (D2). discard_slab -> __free_pages: pcp list (1 page of the
      // 63-page batch back; under pcp_high), no zone lock.
      Rig r(preset, Setup{.min_partial = 0});
      r.free(r.alloc());
      Locks locks;
      if (r.eager()) locks[list_lock("deactivate_slab")] = 1;
      step(r, "A11 deactivate (empty) / P2 discard slab", [&] { r.flush(); },
           {{Stat::CPUSLAB_FLUSH, 1}, {Stat::DEACTIVATE_EMPTY, 1}, {Stat::FREE_SLAB, 1}}, locks);
      CHECK(r.s().slabs_allocated == 0);
    }
  }
}

TEST_CASE("paths: cpu slab bulk alloc and bulk free") {
  for (const auto& preset : kCpuPartialPresets) {
    Rig r(preset);
    std::vector<void*> p(20);
    // A9: one loop: slow path for the first object (new slab), 15 pops, slow path again
    // (bypass + new slab), 3 pops. All-or-nothing.
    step(r, "A9 bulk alloc", [&] { CHECK(run_now(r.slub->alloc_bulk(r.e(), r.s(), 20, p.data())) == 20); },
         {{Stat::ALLOC_SLOWPATH, 2}, {Stat::ALLOC_SLAB, 2}, {Stat::DEACTIVATE_BYPASS, 1},
          {Stat::ALLOC_FASTPATH, 18}},
         {{zone_lock("rmqueue_bulk"), 1}});
    // A10: build_detached_freelist from the end: S2's 4 objects (the cpu slab: one
    // this_cpu_cmpxchg, FREE_FASTPATH += 4), then S1's 16 in one __slab_free (FREE_SLOWPATH 1):
    // S1 was full, so it goes onto the cpu partial list (no list_lock) although it is empty now.
    step(r, "A10 bulk free", [&] { run_now(r.slub->free_bulk(r.e(), r.s(), 20, p.data())); },
         {{Stat::FREE_FASTPATH, 4}, {Stat::FREE_SLOWPATH, 1}, {Stat::CPU_PARTIAL_FREE, 1}}, {});
  }
}

TEST_CASE("paths: classic kfree_rcu, one callback per object") {
  // A12 (and S15's fallback for caches without sheaves): the model queues one RCU callback per
  // object and frees it with kmem_cache_free after the grace period; the kernel batches them
  // (kfree_rcu_cpu) and frees with kfree_bulk (D10).
  std::vector<std::string> presets = kCpuPartialPresets;
  presets.push_back("v6.18-vma-sheaves");
  for (const auto& preset : presets) {
    Rig r(preset);
    void* a = r.alloc();
    void* b = r.alloc();
    step(r, "A12 kfree_rcu (classic)", [&] { r.kfree_rcu(a); r.kfree_rcu(b); }, {}, {});
    CHECK(r.slub->rcu().pending(0).size() == 2);
    step(r, "A12 kfree_rcu callbacks: kmem_cache_free each", [&] { r.rcu_barrier(); },
         {{Stat::FREE_FASTPATH, 2}}, {});
  }
}

TEST_CASE("paths: sheaf alloc: the first allocation refills, 31 pops, the 33rd exchanges or refills") {
  for (const auto& preset : sheaf_presets()) {
    Rig r(preset);
    // S2 + S9 (+ S7, S8): main empty, no spare: barn_replace_empty_sheaf sees nr_full 0 (racy,
    // no lock): BARN_GET_FAIL; barn_get_empty_sheaf sees nr_empty 0: a new sheaf (SHEAF_ALLOC)
    // refilled with 32 objects (SHEAF_REFILL). 6.18/6.19 refill through the cpu slab layer
    // (__kmem_cache_alloc_bulk: two slow paths, two new slabs, 30 pops) and put the empty main
    // into the barn (barn_put_empty_sheaf); 7.0 refills from two new slabs (refill_objects, no
    // list_lock: both slabs used up) and keeps the empty main as the spare (spare-sheaf).
    Stats first = {{Stat::BARN_GET_FAIL, 1}, {Stat::SHEAF_ALLOC, 1}, {Stat::SHEAF_REFILL, kCap},
                   {Stat::ALLOC_SLAB, 2}, {r.pop(), 1}};
    Locks first_locks = {{zone_lock("rmqueue_bulk"), 1}};
    if (!r.v7()) {
      first[Stat::ALLOC_SLOWPATH] = 2;
      first[Stat::DEACTIVATE_BYPASS] = 1;
      first[Stat::ALLOC_FASTPATH] = kCap - 2;
      first_locks[barn_lock("barn_put_empty_sheaf")] = 1;
    }
    step(r, "S2 alloc slow / S9 sheaf refill", [&] { r.alloc(); }, first, first_locks);
    CHECK(r.pcs().main->size() == kCap - 1);
    CHECK(r.barn().nr_empty() == (r.v7() ? 0u : 1u));
    // S1: 31 pops from main, no lock, no atomic.
    step(r, "S1 alloc fast", [&] { for (std::uint32_t i = 1; i < kCap; ++i) r.alloc(); },
         {{r.pop(), kCap - 1}}, {});
    // S2 + S9: the 33rd: BARN_GET_FAIL again (no full sheaf). 6.18/6.19: the vessel is the
    // barn's empty sheaf (barn_get_empty_sheaf), refilled through the cpu slabs (the exhausted cpu
    // slab is bypassed twice), and the empty main goes back to the barn. 7.0: the vessel is the
    // empty spare; no barn lock at all.
    Stats third = {{Stat::BARN_GET_FAIL, 1}, {Stat::SHEAF_REFILL, kCap}, {Stat::ALLOC_SLAB, 2}, {r.pop(), 1}};
    Locks third_locks;
    if (!r.v7()) {
      third[Stat::ALLOC_SLOWPATH] = 2;
      third[Stat::DEACTIVATE_BYPASS] = 2;
      third[Stat::ALLOC_FASTPATH] = kCap - 2;
      third_locks = {{barn_lock("barn_get_empty_sheaf"), 1}, {barn_lock("barn_put_empty_sheaf"), 1}};
    }
    step(r, "S2 alloc slow / S9 sheaf refill (33rd)", [&] { r.alloc(); }, third, third_locks);
  }
  {
    // The spare-sheaf patch: 7.0 without it puts the empty main into the barn after a refill,
    // and takes it back from there as the next vessel, as 6.18 does.
    Rig r("v7.0", Setup{.patches = {"-spare-sheaf"}});
    step(r, "S2 alloc slow without spare-sheaf", [&] { r.alloc(); },
         {{Stat::BARN_GET_FAIL, 1}, {Stat::SHEAF_ALLOC, 1}, {Stat::SHEAF_REFILL, kCap}, {Stat::ALLOC_SLAB, 2},
          {Stat::ALLOC_FASTPATH, 1}},
         {{zone_lock("rmqueue_bulk"), 1}, {barn_lock("barn_put_empty_sheaf"), 1}});
    for (std::uint32_t i = 1; i < kCap; ++i) r.alloc();
    step(r, "S2 alloc slow without spare-sheaf (33rd)", [&] { r.alloc(); },
         {{Stat::BARN_GET_FAIL, 1}, {Stat::SHEAF_REFILL, kCap}, {Stat::ALLOC_SLAB, 2}, {Stat::ALLOC_FASTPATH, 1}},
         {{barn_lock("barn_get_empty_sheaf"), 1}, {barn_lock("barn_put_empty_sheaf"), 1}});
  }
}

TEST_CASE("paths: sheaf free and the barn exchanges") {
  for (const auto& preset : sheaf_presets()) {
    Rig r(preset);
    std::vector<void*> held = r.alloc_n(3 * kCap);  // three refills; main and spare end empty
    REQUIRE(r.pcs().main->empty());
    // S3: 32 frees fill main; S3/S4: the 33rd swaps main with the spare when there is a non-full
    // one (7.0: the empty old main), or (6.18/6.19: no spare) takes an empty sheaf from the barn
    // (S7 barn_get_empty_sheaf) and makes the full main the spare; 31 more fill it.
    Locks fill_locks;
    if (!r.v7()) fill_locks[barn_lock("barn_get_empty_sheaf")] = 1;
    step(r, "S3 free fast / S4 + S7 get empty", [&] { for (std::uint32_t i = 0; i < 2 * kCap; ++i) r.free(held[i]); },
         {{r.push(), 2 * kCap}}, fill_locks);
    REQUIRE(r.pcs().main->full());
    REQUIRE(r.pcs().spare->full());
    // S4 + S6: main and spare full: barn_replace_full_sheaf sees nr_empty 0 (-ENOMEM, racy, no
    // lock); an empty sheaf is allocated and __pcs_install_empty_sheaf puts the full main into the
    // barn whatever its limit (barn_put_full_sheaf, BARN_PUT).
    step(r, "S4 free slow / S6 put full", [&] { r.free(held[2 * kCap]); },
         {{Stat::SHEAF_ALLOC, 1}, {Stat::BARN_PUT, 1}, {r.push(), 1}}, {{barn_lock("barn_put_full_sheaf"), 1}});
    for (std::uint32_t i = 2 * kCap + 1; i < 3 * kCap; ++i) r.free(held[i]);
    CHECK(r.barn().nr_full() == 1);
    held.clear();
    // S1 then S5: 64 pops from main and the full spare (swapped, no lock); the 65th exchanges the
    // empty main for the barn's full sheaf (barn_replace_empty_sheaf, BARN_GET).
    step(r, "S1 alloc fast / S5 get full", [&] { held = r.alloc_n(2 * kCap + 1); },
         {{r.pop(), 2 * kCap + 1}, {Stat::BARN_GET, 1}}, {{barn_lock("barn_replace_empty_sheaf"), 1}});
    CHECK(r.barn().nr_full() == 0);
    CHECK(r.barn().nr_empty() == 1);
    // S3 then S6: main fills, the empty spare is swapped in and fills; then both are full and the
    // barn has an empty sheaf: barn_replace_full_sheaf trades the full main for it (BARN_PUT).
    step(r, "S3 free fast / S6 put full (replace)", [&] { for (void* o : held) r.free(o); },
         {{r.push(), 2 * kCap + 1}, {Stat::BARN_PUT, 1}}, {{barn_lock("barn_replace_full_sheaf"), 1}});
    CHECK(r.barn().nr_full() == 1);
    CHECK(r.barn().nr_empty() == 0);
  }
}

TEST_CASE("paths: sheaf flush when the barn refuses a full sheaf") {
  // S4 + S10: barn limit 0 full sheaves: with main and spare full, barn_replace_full_sheaf says
  // -E2BIG (racy, no lock): BARN_PUT_FAIL, the spare is flushed to its slabs (SHEAF_FLUSH 32)
  // and becomes the new main. The spare holds the 32 objects of the last refill: slabs S5 and S6,
  // both full. 7.0: two __slab_free groups, each full -> partial under list_lock (FREE_ADD_PARTIAL;
  // a flush counts no FREE_SLOWPATH). 6.18/6.19: through the cpu slab layer: S6 is the cpu slab
  // (FREE_FASTPATH 16), S5 full -> this CPU's partial list without a lock (FREE_SLOWPATH,
  // CPU_PARTIAL_FREE).
  for (const auto& preset : sheaf_presets()) {
    Rig r(preset, Setup{.barn_max_full = 0});
    std::vector<void*> held = r.alloc_n(2 * kCap + 1);
    // Free in reverse: the last one tops main up to the refill's 32; then the other sheaf fills.
    for (std::uint32_t i = 0; i < kCap + 1; ++i) r.free(held[held.size() - 1 - i]);
    REQUIRE(r.pcs().main->full());
    REQUIRE(r.pcs().spare->full());
    Stats want = {{Stat::BARN_PUT_FAIL, 1}, {Stat::SHEAF_FLUSH, kCap}, {r.push(), 1}};
    Locks locks;
    if (r.v7()) {
      want[Stat::FREE_ADD_PARTIAL] = 2;
      locks[list_lock("__slab_free")] = 2;
    } else {
      want[Stat::FREE_FASTPATH] = kObjs;
      want[Stat::FREE_SLOWPATH] = 1;
      want[Stat::CPU_PARTIAL_FREE] = 1;
    }
    step(r, "S4 free slow / S10 sheaf flush", [&] { r.free(held[held.size() - 2 - kCap]); }, want, locks);
    CHECK(r.barn().nr_full() == 0);
  }
}

TEST_CASE("paths: kfree_rcu into the rcu_free sheaf, and the sheaf after the grace period") {
  for (bool barn_full : {false, true}) {
    for (const auto& preset : sheaf_presets()) {
      INFO("barn limit " << (barn_full ? 0 : 10));
      Setup su;
      if (barn_full) su.barn_max_full = 0;
      Rig r(preset, su);
      std::vector<void*> held = r.alloc_n(kCap);  // main empty; 7.0: the empty spare
      // S15: the first object needs an rcu_free sheaf: 7.0 takes the empty spare; 6.18/6.19
      // have none and take the barn's empty sheaf (barn_get_empty_sheaf).
      Locks first;
      if (!r.v7()) first[barn_lock("barn_get_empty_sheaf")] = 1;
      step(r, "S15 kfree_rcu (first)", [&] { r.kfree_rcu(held[0]); }, {{Stat::FREE_RCU_SHEAF, 1}}, first);
      // S15: 31 more; the 32nd fills the sheaf, which is handed to call_rcu: one callback per 32.
      step(r, "S15 kfree_rcu", [&] { for (std::uint32_t i = 1; i < kCap; ++i) r.kfree_rcu(held[i]); },
           {{Stat::FREE_RCU_SHEAF, kCap - 1}}, {});
      CHECK(r.slub->rcu().pending(0).size() == 1);
      if (!barn_full) {
        // S16: rcu_free_sheaf: nr_full 0 < 10 (racy): the whole sheaf into the barn (BARN_PUT).
        step(r, "S16 rcu_free sheaf after the GP", [&] { r.rcu_barrier(); }, {{Stat::BARN_PUT, 1}},
             {{barn_lock("barn_put_full_sheaf"), 1}});
        // S5: the next allocation gets it back whole (BARN_GET): main -> rcu_free -> barn -> main.
        step(r, "S5 get full (the kfree_rcu'd objects)", [&] { r.alloc(); }, {{Stat::BARN_GET, 1}, {r.pop(), 1}},
             {{barn_lock("barn_replace_empty_sheaf"), 1}});
      } else {
        // S16: the barn is at its limit: BARN_PUT_FAIL, the 32 objects flushed to their two full
        // slabs (SHEAF_FLUSH; per slab as in S10), the empty sheaf into the barn (nr_empty < 10).
        Stats want = {{Stat::BARN_PUT_FAIL, 1}, {Stat::SHEAF_FLUSH, kCap}};
        Locks locks = {{barn_lock("barn_put_empty_sheaf"), 1}};
        if (r.v7()) {
          want[Stat::FREE_ADD_PARTIAL] = 2;
          locks[list_lock("__slab_free")] = 2;
        } else {
          want[Stat::FREE_FASTPATH] = kObjs;
          want[Stat::FREE_SLOWPATH] = 1;
          want[Stat::CPU_PARTIAL_FREE] = 1;
        }
        step(r, "S16 rcu_free sheaf after the GP (barn full)", [&] { r.rcu_barrier(); }, want, locks);
        CHECK(r.barn().nr_empty() == 1);
      }
    }
  }
}

TEST_CASE("paths: prefilled sheaves, get and return") {
  for (const auto& preset : sheaf_presets()) {
    Rig r(preset);
    auto prefill = [&](std::uint32_t n) { return run_now(r.slub->prefill_sheaf(r.e(), r.s(), n)); };
    auto give_back = [&](Sheaf* sh) { run_now(r.slub->return_sheaf(r.e(), r.s(), sh)); };
    // S13: no spare: SHEAF_PREFILL_SLOW; barn_get_full_or_empty_sheaf finds nothing (racy, no
    // lock): BARN_GET_FAIL; a new sheaf refilled to full capacity (SHEAF_REFILL 32).
    Stats slow = {{Stat::SHEAF_PREFILL_SLOW, 1}, {Stat::BARN_GET_FAIL, 1}, {Stat::SHEAF_ALLOC, 1},
                  {Stat::SHEAF_REFILL, kCap}, {Stat::ALLOC_SLAB, 2}};
    if (!r.v7()) {
      slow[Stat::ALLOC_SLOWPATH] = 2;
      slow[Stat::DEACTIVATE_BYPASS] = 1;
      slow[Stat::ALLOC_FASTPATH] = kCap - 2;
    }
    Sheaf* a = nullptr;
    step(r, "S13 prefill (slow)", [&] { a = prefill(10); }, slow, {{zone_lock("rmqueue_bulk"), 1}});
    REQUIRE(a != nullptr);
    // S13: kmem_cache_alloc_from_sheaf: pops, no lock, no counter.
    step(r, "S13 alloc from a prefilled sheaf", [&] { for (int i = 0; i < 10; ++i) CHECK(r.slub->alloc_from_sheaf(r.e(), r.s(), a)); },
         {}, {});
    // S14: no spare: the sheaf becomes the spare as it is (22 objects).
    step(r, "S14 return (fast)", [&] { give_back(a); }, {{Stat::SHEAF_RETURN_FAST, 1}}, {});
    // S13: the spare has >= 10 objects: taken as it is, no refill.
    step(r, "S13 prefill (fast)", [&] { a = prefill(10); }, {{Stat::SHEAF_PREFILL_FAST, 1}}, {});
    CHECK(a->size() == kCap - 10);
    Sheaf* b = nullptr;
    slow.erase(Stat::ALLOC_FASTPATH);
    if (!r.v7()) {  // the exhausted cpu slab is bypassed twice now
      slow[Stat::DEACTIVATE_BYPASS] = 2;
      slow[Stat::ALLOC_FASTPATH] = kCap - 2;
    }
    step(r, "S13 prefill (slow, second)", [&] { b = prefill(10); }, slow, {});
    step(r, "S14 return (fast, second)", [&] { give_back(a); }, {{Stat::SHEAF_RETURN_FAST, 1}}, {});
    // S14: a spare exists: SHEAF_RETURN_SLOW; nr_full 0 < 10: refilled to capacity (already
    // full: nothing to refill) and put into the barn (BARN_PUT).
    step(r, "S14 return (slow)", [&] { give_back(b); }, {{Stat::SHEAF_RETURN_SLOW, 1}, {Stat::BARN_PUT, 1}},
         {{barn_lock("barn_put_full_sheaf"), 1}});
    // S13: oversize (40 > 32): SHEAF_PREFILL_OVERSIZE, a plain kzalloc (no SHEAF_ALLOC), filled by
    // __kmem_cache_alloc_bulk: 7.0 refill_objects from three new slabs, the third's 8 leftover
    // objects to the node list under list_lock (ALLOC_SLOWPATH += 40, no SHEAF_REFILL); 6.18/6.19
    // the cpu slab loop (three slow paths, 37 pops).
    Stats over = {{Stat::SHEAF_PREFILL_OVERSIZE, 1}, {Stat::ALLOC_SLAB, 3}};
    Locks over_locks;
    if (r.v7()) {
      over[Stat::ALLOC_SLOWPATH] = 40;
      over_locks[list_lock("refill_objects")] = 1;
    } else {
      over[Stat::ALLOC_SLOWPATH] = 3;
      over[Stat::DEACTIVATE_BYPASS] = 3;
      over[Stat::ALLOC_FASTPATH] = 37;
    }
    Sheaf* big = nullptr;
    step(r, "S13 prefill (oversize)", [&] { big = prefill(40); }, over, over_locks);
    REQUIRE(big != nullptr);
    // S14 + S10: an oversize sheaf is flushed and kfreed (no SHEAF_FREE). The kernel's
    // sheaf_flush_unused frees all 40 in one bulk: 3 detached groups (S7 8, S6 16, S5 16); the
    // model flushes in batches of 32 (D4): groups S7 8, S6 16, S5 8 | S5 8. 7.0: 4 __slab_free
    // with list_lock (kernel 3): S7 -> empty stays (nr_partial < 5), S6 and S5 full -> partial
    // (FREE_ADD_PARTIAL 2), S5 -> empty. 6.18/6.19: S7 is the cpu slab (FREE_FASTPATH 8); S6 and
    // S5 full -> cpu partial (CPU_PARTIAL_FREE 2); S5's second group finds it on a cpu partial
    // list and takes the list_lock for nothing (kernel: 2 FREE_SLOWPATH, no lock).
    Stats flush = {{Stat::SHEAF_FLUSH, 40}};
    Locks flush_locks;
    if (r.v7()) {
      flush[Stat::FREE_ADD_PARTIAL] = 2;
      flush_locks[list_lock("__slab_free")] = 4;
    } else {
      flush[Stat::FREE_FASTPATH] = 8;
      flush[Stat::FREE_SLOWPATH] = 3;
      flush[Stat::CPU_PARTIAL_FREE] = 2;
      flush_locks[list_lock("__slab_free")] = 1;
    }
    step(r, "S14 return (oversize) / S10 flush", [&] { give_back(big); }, flush, flush_locks);
  }
}

TEST_CASE("paths: sheaf bulk alloc and bulk free") {
  for (const auto& preset : sheaf_presets()) {
    Rig r(preset);
    std::vector<void*> p(40);
    // S11: main and spare empty, no full sheaf in the barn: BARN_GET_FAIL, no refill; all 40 from
    // the layer below: 7.0 refill_objects (three new slabs, 8 leftover to the node list,
    // ALLOC_SLOWPATH += 40); 6.18/6.19 the cpu slab loop.
    Stats alloc = {{Stat::BARN_GET_FAIL, 1}, {Stat::ALLOC_SLAB, 3}};
    Locks alloc_locks = {{zone_lock("rmqueue_bulk"), 1}};
    if (r.v7()) {
      alloc[Stat::ALLOC_SLOWPATH] = 40;
      alloc_locks[list_lock("refill_objects")] = 1;
    } else {
      alloc[Stat::ALLOC_SLOWPATH] = 3;
      alloc[Stat::DEACTIVATE_BYPASS] = 2;
      alloc[Stat::ALLOC_FASTPATH] = 37;
    }
    step(r, "S11 bulk alloc", [&] { CHECK(run_now(r.slub->alloc_bulk(r.e(), r.s(), 40, p.data())) == 40); },
         alloc, alloc_locks);
    // S12: 32 local objects copied into main (FREE_PCS / FREE_FASTPATH += 32); main full, no
    // spare, no empty sheaf in the barn: the other 8 (slab S3's) go straight to the slabs
    // (7.0: FREE_SLOWPATH += 8; S3 becomes empty on the node list: one list_lock; 6.18/6.19: S3 is
    // the cpu slab: FREE_FASTPATH += 8).
    Stats fr = {{r.push(), kCap}};
    Locks fr_locks;
    if (r.v7()) {
      fr[Stat::FREE_SLOWPATH] = 8;
      fr_locks[list_lock("__slab_free")] = 1;
    } else {
      fr[Stat::FREE_FASTPATH] += 8;
    }
    step(r, "S12 bulk free", [&] { run_now(r.slub->free_bulk(r.e(), r.s(), 40, p.data())); }, fr, fr_locks);
  }
}

TEST_CASE("paths: node-restricted allocation on a remote node") {
  // One CPU on node 0, a node 1 with memory and no CPU.
  {
    // L1: 7.0: alloc_from_pcs refuses a remote node (ALLOC_NODE_MISMATCH); ___slab_alloc takes
    // ONE object per call: the first from a new node-1 slab whose 15 other objects go to node 1's
    // partial list (list_lock), each later one from that list under its list_lock.
    Rig r("v7.0", Setup{.nodes = 2});
    std::vector<void*> held;
    step(r, "L1 ___slab_alloc (new slab)", [&] { held.push_back(r.alloc(1)); },
         {{Stat::ALLOC_NODE_MISMATCH, 1}, {Stat::ALLOC_SLOWPATH, 1}, {Stat::ALLOC_SLAB, 1}},
         {{zone_lock("rmqueue_bulk"), 1}, {list_lock("___slab_alloc"), 1}});
    for (int i = 0; i < 2; ++i)
      step(r, "L1 ___slab_alloc (partial)", [&] { held.push_back(r.alloc(1)); },
           {{Stat::ALLOC_NODE_MISMATCH, 1}, {Stat::ALLOC_SLOWPATH, 1}}, {{list_lock("get_partial_node"), 1}});
    CHECK(r.slab_of(held[0])->node == 1);
    // S3 / L3: a remote object bypasses the sheaves: __slab_free (FREE_SLOWPATH), no lock (the
    // slab stays partial).
    step(r, "S3 free of a remote object / L3 __slab_free", [&] { r.free(held[0]); }, {{Stat::FREE_SLOWPATH, 1}}, {});
  }
  {
    // 6.18/6.19: the sheaves are bypassed for a remote node without a counter; the cpu slab layer
    // (A5) installs a node-1 cpu slab, and the next node-1 allocation is a cpu freelist pop (A1).
    Rig r("v6.18", Setup{.nodes = 2});
    step(r, "A5 node request below the sheaves", [&] { r.alloc(1); },
         {{Stat::ALLOC_SLOWPATH, 1}, {Stat::ALLOC_SLAB, 1}}, {{zone_lock("rmqueue_bulk"), 1}});
    step(r, "A1 node request below the sheaves", [&] { r.alloc(1); }, {{Stat::ALLOC_FASTPATH, 1}}, {});
  }
}

TEST_CASE("paths: 7.0 refill from a remote node's partial list with the remote-refill-trylock patch") {
  // L2: six node-1 slabs with one free object each (nr_partial 6 > min_partial 5). A local
  // refill finds node 0 empty; __refill_objects_any takes all six slabs of node 1 in one hold
  // (spin_trylock with remote-refill-trylock, 40fd0acc45d0; spin_lock without), 6 objects, then
  // two new local slabs (16 + 10, the 6 leftover to node 0's list under its list_lock).
  for (bool trylock : {true, false}) {
    Setup su{.nodes = 2};
    if (!trylock) su.patches = {"-remote-refill-trylock"};
    Rig r("v7.0", su);
    std::vector<void*> held;
    for (std::uint32_t i = 0; i < 6 * kObjs; ++i) held.push_back(r.alloc(1));
    for (std::uint32_t i = 0; i < 6; ++i) r.free(held[i * kObjs]);
    REQUIRE(r.s().node[1].nr_partial == 6);
    Locks locks = {{zone_lock("rmqueue_bulk"), 1}, {list_lock("refill_objects"), 1}};
    locks[trylock ? "list_lock?@__refill_objects_node" : "list_lock@__refill_objects_node"] = 1;
    step(r, "S9 / L2 refill_objects from a remote node", [&] { r.alloc(); },
         {{Stat::BARN_GET_FAIL, 1}, {Stat::SHEAF_ALLOC, 1}, {Stat::SHEAF_REFILL, kCap}, {Stat::ALLOC_SLAB, 2},
          {Stat::ALLOC_FASTPATH, 1}},
         locks);
    CHECK(r.s().node[1].nr_partial == 0);
  }
}

TEST_CASE("paths: sheaves-for-all v4 10/22 over cpu partial: sheaf refills from the node partial list") {
  // S9 with refill-from-partial on 6.19 (L2 without the any-node pass): refill_sheaf calls
  // __refill_objects on the local node, never the cpu slab. The first refill finds no partial
  // slab: two new slabs, wholly taken (no ALLOC_SLOWPATH, no DEACTIVATE_BYPASS, no cpu slab).
  Rig r("v6.19", Setup{.nodes = 2, .patches = {"+refill-from-partial"}});
  step(r, "S9 / L2 refill from new slabs (v4 10/22)", [&] { r.alloc(); },
       {{Stat::BARN_GET_FAIL, 1}, {Stat::SHEAF_ALLOC, 1}, {Stat::SHEAF_REFILL, kCap}, {Stat::ALLOC_SLAB, 2},
        {Stat::ALLOC_PCS, 1}},
       {{zone_lock("rmqueue_bulk"), 1}, {barn_lock("barn_put_empty_sheaf"), 1}});
  CHECK(r.s().cpu[0].slab == nullptr);
  // Three slabs on node 0's partial list with 15, 16 and 16 free objects (flush_cpu puts the
  // sheaves' objects back; the cpu partial list is drained to the node list), and node 1 gets
  // two partial slabs the refill must not touch (no any-node pass before 46dea1744498).
  std::vector<void*> node1;
  for (std::uint32_t i = 0; i < 2 * kObjs; ++i) node1.push_back(r.alloc(1));
  for (std::uint32_t i = 0; i < 2; ++i) r.free(node1[i * kObjs]);
  for (std::uint32_t i = 1; i < kCap; ++i) r.alloc();
  r.alloc();  // the 33rd: a second refill from two more new slabs, one object of it used
  r.flush();
  const std::uint32_t node1_partial = r.s().node[1].nr_partial;
  REQUIRE(node1_partial == 2);
  REQUIRE(r.s().node[0].nr_partial == 2);  // the 33rd's slabs: 15 and 16 free
  // The refill of the next allocation: one list_lock hold takes both (31 < 32), then a new
  // slab for the last object (its 15 leftover to node 0's list under list_lock): node 1's
  // partial slabs stay where they are.
  step(r, "S9 / L2 refill from the local partial list (v4 10/22)", [&] { r.alloc(); },
       {{Stat::BARN_GET_FAIL, 1}, {Stat::SHEAF_REFILL, kCap}, {Stat::ALLOC_SLAB, 1}, {Stat::ALLOC_PCS, 1}},
       {{list_lock("__refill_objects_node"), 1}, {list_lock("refill_objects"), 1},
        {barn_lock("barn_get_empty_sheaf"), 1}, {barn_lock("barn_put_empty_sheaf"), 1}});
  CHECK(r.s().node[1].nr_partial == node1_partial);
  CHECK(r.s().node[0].nr_partial == 1);
  CHECK(r.s().cpu[0].slab == nullptr);
}

TEST_CASE("paths: v4 10/22 gives a refill's surplus back to the cpu partial list, not the node list") {
  // L2's overshoot: get_partial_node_bulk takes slabs until min is reached, even past max; the
  // objects beyond max go back by do_slab_free. 7.0 (v4 12/22 on): __slab_free of a full slab
  // takes the node's list_lock and puts it at the tail (FREE_ADD_PARTIAL). 6.19 + 10/22: the
  // slab is full after get_freelist_nofreeze, so its first free puts it on this CPU's cpu
  // partial list (CPU_PARTIAL_FREE) without the lock: "we did put the previously full slabs
  // there, avoiding the lock" (Vlastimil Babka on T02).
  for (bool v4_10 : {true, false}) {
    Rig r(v4_10 ? "v6.19" : "v7.0", Setup{.patches = v4_10 ? std::vector<std::string>{"+refill-from-partial"}
                                                             : std::vector<std::string>{"-refill-any-node"}});
    // Three slabs with 12 free objects each and one with 16 on node 0's list, in some order:
    // whichever two come first hold 24 to 28 < 32, so the third is taken too and overshoots.
    std::vector<void*> held = r.alloc_n(48);
    std::map<Slab*, std::vector<void*>> by_slab;
    for (void* o : held) by_slab[r.slab_of(o)].push_back(o);
    int freed_slabs = 0;
    for (auto& [slab, objs] : by_slab) {
      if (objs.size() != kObjs || freed_slabs == 3) continue;
      for (std::uint32_t i = 0; i < 12; ++i) r.free(objs[i]);
      ++freed_slabs;
    }
    REQUIRE(freed_slabs == 3);
    r.flush();
    REQUIRE(r.s().node[0].nr_partial == 4);
    // flush_cpu freed the sheaves: a new one (SHEAF_ALLOC) is the vessel, as on the first
    // allocation (6.19 puts the old empty main into the barn, 7.0 keeps it as the spare).
    Stats want = {{Stat::BARN_GET_FAIL, 1}, {Stat::SHEAF_ALLOC, 1}, {Stat::SHEAF_REFILL, kCap}, {r.pop(), 1}};
    Locks locks = {{list_lock("__refill_objects_node"), 1}};
    if (v4_10) {
      want[Stat::CPU_PARTIAL_FREE] = 1;
      want[Stat::FREE_SLOWPATH] = 1;  // __slab_free counts itself in 6.x
      locks[barn_lock("barn_put_empty_sheaf")] = 1;
    } else {
      want[Stat::FREE_ADD_PARTIAL] = 1;
      locks[list_lock("__slab_free")] = 1;
    }
    step(r, "S9 / L2 refill overshoot, surplus by do_slab_free", [&] { r.alloc(); }, want, locks);
    CHECK(r.s().node[0].nr_partial == (v4_10 ? 1u : 2u));
  }
}

TEST_CASE("paths: page allocator under new slab and discard slab") {
  // P1/P2 with a 2-page pcp batch and pcp_high 1: the first new slab refills the pcp list under
  // zone->lock (rmqueue_bulk); a discarded slab's page goes to the pcp list, which is then over
  // its high mark and drains under zone->lock (free_pcppages_bulk).
  {
    Rig r("v6.17", Setup{.min_partial = 0, .pcp_batch = 2, .pcp_high = 1});
    step(r, "A5 / P1 new slab (pcp refill)", [&] { r.free(r.alloc()); },
         {{Stat::ALLOC_SLOWPATH, 1}, {Stat::ALLOC_SLAB, 1}, {Stat::FREE_FASTPATH, 1}}, {{zone_lock("rmqueue_bulk"), 1}});
    step(r, "A11 / P2 discard slab (pcp drain)", [&] { r.flush(); },
         {{Stat::CPUSLAB_FLUSH, 1}, {Stat::DEACTIVATE_EMPTY, 1}, {Stat::FREE_SLAB, 1}},
         {{zone_lock("free_pcppages_bulk"), 1}});
    CHECK(r.slub->pages().free_pages(0) == r.slub->pages().total_pages(0));
  }
  {
    // 7.0: the refill's two new slabs take one pcp refill (2 pages). flush_cpu (S17): the empty
    // spare is freed (SHEAF_FREE), main's 31 objects flushed (SHEAF_FLUSH): S2's 15 make it
    // partial (list_lock, FREE_ADD_PARTIAL), S1's 16 empty it: min_partial 0, so it is discarded
    // (list_lock; P2, the page to the pcp list: 1 page, not over pcp_high 1).
    Rig r("v7.0", Setup{.min_partial = 0, .pcp_batch = 2, .pcp_high = 1});
    void* o = r.alloc();
    step(r, "S17 flush_cpu / L3 / P2", [&] { r.flush(); },
         {{Stat::SHEAF_FREE, 1}, {Stat::SHEAF_FLUSH, kCap - 1}, {Stat::FREE_ADD_PARTIAL, 1}, {Stat::FREE_SLAB, 1}},
         {{list_lock("__slab_free"), 2}});
    // The user's object goes into the (now empty) main; the next flush empties S2: removed from
    // the node list (FREE_REMOVE_PARTIAL) and discarded; now the pcp list is over its mark.
    r.free(o);
    step(r, "S17 flush_cpu / L3 / P2 (pcp drain)", [&] { r.flush(); },
         {{Stat::SHEAF_FLUSH, 1}, {Stat::FREE_REMOVE_PARTIAL, 1}, {Stat::FREE_SLAB, 1}},
         {{list_lock("__slab_free"), 1}, {zone_lock("free_pcppages_bulk"), 1}});
    CHECK(r.s().slabs_allocated == 0);
  }
}

TEST_CASE("paths: the barn hands out the sheaf put in last") {
  // The kernel's barn lists are LIFO (list_add at the head, list_first_entry), and so are the
  // model's (D3 until 2026-12-07: FIFO). Two full sheaves go into the barn (S14 slow returns: S6
  // barn_put_full_sheaf); a prefill without a spare then takes one (S13
  // barn_get_full_or_empty_sheaf, BARN_GET): the one put in last.
  for (const auto& preset : sheaf_presets()) {
    Rig r(preset);
    auto prefill = [&](std::uint32_t n) { return run_now(r.slub->prefill_sheaf(r.e(), r.s(), n)); };
    auto give_back = [&](Sheaf* sh) { run_now(r.slub->return_sheaf(r.e(), r.s(), sh)); };
    Sheaf* a = prefill(kCap);
    Sheaf* b = prefill(kCap);
    Sheaf* c = prefill(kCap);
    give_back(a);  // the spare
    step(r, "S14 return (slow) / S6 put full", [&] { give_back(b); give_back(c); },
         {{Stat::SHEAF_RETURN_SLOW, 2}, {Stat::BARN_PUT, 2}}, {{barn_lock("barn_put_full_sheaf"), 2}});
    REQUIRE(r.barn().nr_full() == 2);
    CHECK(prefill(1) == a);  // S13: the spare first (SHEAF_PREFILL_FAST)
    Sheaf* got = nullptr;
    step(r, "S13 prefill (slow) from the barn", [&] { got = prefill(1); },
         {{Stat::SHEAF_PREFILL_SLOW, 1}, {Stat::BARN_GET, 1}}, {{barn_lock("barn_get_full_or_empty_sheaf"), 1}});
    CHECK(got == c);
    CHECK(got->size() == kCap);
  }
}
