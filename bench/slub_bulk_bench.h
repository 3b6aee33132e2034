// slub_bulk_bench, native mode: the host time of the allocator model's own bulk paths
// (kmem_cache_alloc_bulk / kmem_cache_free_bulk), with no simulated contention. It mirrors the
// in-kernel module "slub_bulk_bench" behind the March 2026 patch "mm/slub: skip freelist
// construction for whole-slab bulk refill" (its report: Shengming Hu, "Re: [PATCH] mm/slub: skip
// freelist construction for whole-slab bulk refill", LKML, 2026-03-30, archived at
// https://lkml.iu.edu/2603.3/12647.html; slub-algorithms.md §4.4, §4.4.4).
//
// Our reading of the kernel benchmark (its source was not found; only its report is): per
// round, kmem_cache_alloc_bulk(batch) is called again and again, the objects kept, until
// Total bytes (Total / obj_size objects) are allocated; then they are all returned with
// kmem_cache_free_bulk(batch) in the same batches. "ns/object" is the alloc phase's time
// divided by the object count. Keeping everything until the end is what makes the refill path
// run: with an immediate free, a 7.0 cache serves every batch from its percpu sheaves and barn
// and never needs a new slab, so skipping freelist construction could not show. The seed's
// grid pairs each object size with a batch equal to the objects per slab on its 8-CPU machine
// (16/256 ... 512/32: 256, 128, 64, 32, 32, 32 objects), so that a batch takes whole slabs.
// The free phase is timed too (reported separately; the patch does not change it).
//
// One cache per (size, skip-freelist) kept across rounds, as a module creating its cache once
// would. One CPU runs; the machine has nr_cpus present CPUs (default 8, the seed's -smp 8)
// because slab order depends on the CPU count. Slab memory is real host memory
// (std::aligned_alloc in Slub::new_slab); simulated costs (Exec::spend) are only recorded, as
// the model's own estimate, never slept.
#pragma once
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/immediate.h"
#include "models/slub/geometry.h"
#include "models/slub/slub.h"
#include "sim/config/config.h"
#include "sim/run/job.h"
#include "sim/config/kernel.h"
#include "sim/machine/machine.h"
#include "sim/run/slub_config.h"

namespace slubsim::bench {

struct BulkConfig {
  std::uint32_t obj_size = 16;
  std::uint32_t batch = 256;
  std::size_t total_bytes = std::size_t{256} << 20;
  bool skip_freelist = false;
  bool freelist_random = true;  // CONFIG_SLAB_FREELIST_RANDOM (distro kernels: on)
  int nr_cpus = 8;              // present CPUs, for the slab order; only CPU 0 runs
  std::string home;             // configs root; empty = default_home()
  std::string kernel = "v7.0";  // configs/kernels/NAME.json; skip-freelist is switched on it
  std::string costs = "default";
};

// One round: host nanoseconds per object of each phase, and the model's simulated estimate.
struct BulkRound {
  double alloc_ns = 0, free_ns = 0;              // host steady_clock
  double model_alloc_ns = 0, model_free_ns = 0;  // simulated time (cost constants, no contention)
};

inline double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}
// Sample standard deviation (n - 1).
inline double stddev_of(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double m = mean_of(v), s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

struct BulkResult {
  BulkConfig config;
  std::size_t objects = 0;  // per round: total_bytes / obj_size
  int order = 0;
  std::uint32_t objects_per_slab = 0;
  std::uint32_t sheaf_capacity = 0;
  std::vector<BulkRound> rounds;     // timed rounds only
  slub::StatCounters stats{};        // SLUB_STATS summed over the timed rounds
  std::int64_t pages_total = 0;      // node 0
  std::int64_t pages_returned = 0;   // free + pcp after the final kmem_cache_shrink
  std::uint64_t failed_batches = 0;  // alloc_bulk calls that returned 0 (out of memory)

  std::uint64_t stat(slub::Stat s) const { return stats[static_cast<int>(s)]; }
  std::vector<double> alloc_ns() const {
    std::vector<double> v;
    for (const auto& r : rounds) v.push_back(r.alloc_ns);
    return v;
  }
  std::vector<double> free_ns() const {
    std::vector<double> v;
    for (const auto& r : rounds) v.push_back(r.free_ns);
    return v;
  }
  double model_alloc_ns() const {
    double s = 0;
    for (const auto& r : rounds) s += r.model_alloc_ns;
    return rounds.empty() ? 0 : s / static_cast<double>(rounds.size());
  }
  double model_free_ns() const {
    double s = 0;
    for (const auto& r : rounds) s += r.model_free_ns;
    return rounds.empty() ? 0 : s / static_cast<double>(rounds.size());
  }
};

// One cache of one kernel variant; round() runs and times one alloc-all/free-all round.
class BulkBench {
 public:
  explicit BulkBench(const BulkConfig& cfg) : cfg_(cfg) {
    if (cfg.obj_size < 8 || cfg.obj_size > 8192) throw std::invalid_argument("obj_size must be 8..8192");
    if (cfg.batch == 0) throw std::invalid_argument("batch must be at least 1");
    if (cfg.nr_cpus < 1) throw std::invalid_argument("nr_cpus must be at least 1");
    objects_ = cfg.total_bytes / cfg.obj_size;
    if (objects_ == 0) throw std::invalid_argument("total is smaller than one object");
    std::string home = cfg.home.empty() ? default_home() : cfg.home;

    auto kfile = resolve_config(home, "configs/kernels", cfg.kernel, "--kernel");
    Kernel k = parse_kernel(load_json_file(kfile), kfile);
    apply_patches(k, {cfg.skip_freelist ? "+skip-freelist" : "-skip-freelist"});
    k.freelist_random = cfg.freelist_random;
    auto cfile = resolve_config(home, "configs/costs", cfg.costs, "--costs");
    SlubCostConfig costs = parse_slub_costs(load_json_file(cfile), cfile);

    // One node with room for a round's slabs twice over plus slack (pages are only counted).
    Machine m;
    m.name = "bulk-bench";
    m.nr_cpus = cfg.nr_cpus;
    m.nr_sockets = 1;
    m.nr_nodes = 1;
    m.cpu_node.assign(cfg.nr_cpus, 0);
    m.cpu_socket.assign(cfg.nr_cpus, 0);
    m.node_sockets = {{0}};
    m.node_memory_bytes = {static_cast<std::int64_t>(2 * cfg.total_bytes + (std::size_t{256} << 20))};

    slub::CacheSpec spec;
    spec.name = "bench-" + std::to_string(cfg.obj_size);
    spec.object_size = cfg.obj_size;
    slub::Params p = slub_params(m, k, {spec}, costs, /*validate=*/false, /*seed=*/1);
    slub_ = std::make_unique<slub::Slub>(shared_, p);
    exec_ = std::make_unique<ImmediateExec>(shared_, 0, 0);
    objs_.assign(objects_, nullptr);
  }

  slub::Slub& slub() { return *slub_; }
  slub::KmemCache& cache() { return slub_->cache(0); }
  std::size_t objects() const { return objects_; }

  BulkRound round() {
    slub::KmemCache& s = cache();
    ImmediateExec& e = *exec_;
    const std::size_t batch = cfg_.batch;
    BulkRound r;

    Time m0 = e.now();
    auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < objects_; i += batch) {
      std::size_t n = std::min(batch, objects_ - i);
      std::size_t got = run_now(slub_->alloc_bulk(e, s, n, objs_.data() + i));
      if (got != n) {
        ++failed_;
        throw std::runtime_error("kmem_cache_alloc_bulk failed: node out of pages");
      }
    }
    auto t1 = std::chrono::steady_clock::now();
    Time m1 = e.now();
    for (std::size_t i = 0; i < objects_; i += batch) {
      std::size_t n = std::min(batch, objects_ - i);
      run_now(slub_->free_bulk(e, s, n, objs_.data() + i));
    }
    auto t2 = std::chrono::steady_clock::now();
    Time m2 = e.now();

    const double nobj = static_cast<double>(objects_);
    r.alloc_ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / nobj;
    r.free_ns = std::chrono::duration<double, std::nano>(t2 - t1).count() / nobj;
    r.model_alloc_ns = to_ns(m1 - m0) / nobj;
    r.model_free_ns = to_ns(m2 - m1) / nobj;
    return r;
  }

  // Start of the timed rounds: stats from here on are reported.
  void mark() { stats0_ = cache().stats; }

  // kmem_cache_shrink (flushes every CPU's sheaves and the barn, frees empty slabs), then the
  // result.
  BulkResult finish(const std::vector<BulkRound>& rounds) {
    slub::KmemCache& s = cache();
    BulkResult res;
    res.config = cfg_;
    res.objects = objects_;
    res.order = s.geo.order;
    res.objects_per_slab = s.geo.objects;
    res.sheaf_capacity = s.sheaf_capacity;
    res.rounds = rounds;
    for (int i = 0; i < slub::kNrStats; ++i) res.stats[i] = s.stats[i] - stats0_[i];
    run_now(slub_->shrink(*exec_, s));
    res.pages_total = slub_->pages().total_pages(0);
    res.pages_returned = slub_->pages().free_pages(0) + slub_->pages().pcp_pages(0);
    res.failed_batches = failed_;
    return res;
  }

 private:
  BulkConfig cfg_;
  ImmediateShared shared_;
  std::unique_ptr<slub::Slub> slub_;
  std::unique_ptr<ImmediateExec> exec_;
  std::vector<void*> objs_;
  std::size_t objects_ = 0;
  slub::StatCounters stats0_{};
  std::uint64_t failed_ = 0;
};

// The whole benchmark for one variant: `warmup` untimed rounds, then `rounds` timed ones.
inline BulkResult run_bulk_bench(const BulkConfig& cfg, int rounds, int warmup = 1) {
  BulkBench b(cfg);
  for (int i = 0; i < warmup; ++i) b.round();
  b.mark();
  std::vector<BulkRound> out;
  for (int i = 0; i < rounds; ++i) out.push_back(b.round());
  return b.finish(out);
}

}  // namespace slubsim::bench
