// From configs to the allocator model's plain parameters (models/slub/params.h): the caches
// (configs/caches/NAME.json), the allocator and page-allocator costs (configs/costs), the kernel's
// switches (configs/kernels) and the machine's NUMA layout.
#pragma once
#include <string>
#include <vector>

#include "models/slub/params.h"
#include "sim/config/config.h"
#include "sim/config/kernel.h"
#include "sim/machine/machine.h"

namespace slubsim {

std::vector<slub::CacheSpec> parse_caches(const json& doc, const std::string& file);
struct SlubCostConfig {
  slub::PathCosts costs;
  slub::PageAllocParams page_alloc;
  Time rcu_grace_period = 0;
  bool rcu_grace_period_from_ticks = false;  // costs.rcu.grace_period_model "ticks"
  int rcu_fqs_jiffies = 0;                   // costs.rcu.fqs_jiffies
  int rcu_fqs_cpus_per_jiffy = 1;            // costs.rcu.fqs_cpus_per_jiffy
  double rcu_tick_user_share = -1.0;         // costs.rcu.quiescent_states "user": tick_user_share; else -1
  Time rcu_sched_qs = 0;                     // costs.rcu.sched_qs_ms
  std::size_t rcu_overload_mark = 0;         // costs.rcu.overload_mark
  int rcu_report_ticks = 0;                  // costs.rcu.acceleration "report": report_ticks; 0: "queue"
  bool aged_lines_in_llc = false;            // costs.rcu.aged_lines "llc"
  bool callback_slab_line_cached = false;    // costs.rcu.callback_slab_line "cached"
  bool callback_lines_together = false;      // costs.rcu.callback_line_fetch "together"
  bool freelist_lines_from_writer = false;   // costs.slub.freelist_lines "writer"
  bool gfp_nowait_refills = false;           // costs.slub.gfp_nowait "refills"
  RcuBatchLimits rcu_batch;
  SoftirqLimits softirq;
  Time trace_handoff_poll = 0;
};
// Per-cache writes of the sheaf knobs, named as the runtime-tuning RFC's sysfs files
// (/sys/kernel/slab/CACHE/sheaf_capacity, max_full_sheaves, max_empty_sheaves; Harry Yoo, May
// 2026): one --sheaf-capacity or --sysfs setting. Cache "" = every cache that has sheaves in that
// kernel; unset = the kernel's own value.
struct SheafKnobs {
  std::vector<std::pair<std::string, int>> sheaf_capacity, max_full_sheaves, max_empty_sheaves;
  bool empty() const { return sheaf_capacity.empty() && max_full_sheaves.empty() && max_empty_sheaves.empty(); }
  // Every (cache, value) of the three knobs.
  std::vector<std::pair<std::string, int>> all() const;
};
// log: the ReadLog shared by every parser of the cost model (the caller checks its fields), or
// nullptr when nothing checks them.
SlubCostConfig parse_slub_costs(const json& costs_doc, const std::string& file, std::shared_ptr<ReadLog> log = nullptr);
slub::Numa numa_of(const Machine& m);
slub::Params slub_params(const Machine& m, const Kernel& k, const std::vector<slub::CacheSpec>& caches,
                         const SlubCostConfig& costs, bool validate, std::uint64_t seed,
                         const SheafKnobs& knobs = {});

}  // namespace slubsim
