// One simulation: a machine, a program, N tasks, one seed. Builds the engine and the shared
// state, starts one task per CPU as lkp places them, runs warm-up and window, and measures.
#pragma once
#include <atomic>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/costs.h"
#include "sim/config/kernel.h"
#include "sim/engine/lock_stat.h"
#include "sim/machine/machine.h"
#include "models/slub/params.h"
#include "models/slub/slub.h"
#include "sim/run/settle.h"
#include "sim/run/slub_config.h"
#include "sim/engine/time_stacks.h"
#include "sim/engine/world.h"
#include "workloads/program.h"
#include "workloads/trace.h"

namespace slubsim {

// The most intervals a fixed window's grid may have (beyond it: warm-up, window, after).
inline constexpr int kMaxGridIntervals = 100000;

struct RunSpec {
  const Machine* machine = nullptr;
  const Costs* costs = nullptr;
  const Program* program = nullptr;
  const Kernel* kernel = nullptr;
  Mode mode = Mode::Process;
  int nr_task = 1;
  std::uint64_t seed = 1;
  // The window: fixed at [warmup, warmup + duration) when `settle` is off; otherwise chosen by
  // the settle rule from the run's own series, up to settle_rule.cap of simulated time.
  Time warmup = 0;
  Time duration = 0;
  bool settle = false;
  SettleRule settle_rule;
  // > 0: sample throughput and spinning every `interval` of global time from 0 to the window's
  // end, warm-up included (RunResult::samples); 0: no samples.
  Time interval = 0;
  Options options;
  const std::vector<slub::CacheSpec>* caches = nullptr;
  const SlubCostConfig* slub_costs = nullptr;
  const SheafKnobs* capacity = nullptr;  // --sheaf-capacity / --sysfs setting of this variant
  bool validate = false;  // SLUB validation mode: every object in one place, checked at the end
  // A trace replay instead of the program's steps: `program` then only names the caches the
  // trace uses (in Trace::caches order) and has no steps.
  const Trace* trace = nullptr;
  TraceReplay replay;
  // Collect folded stacks of all task time (RunResult::cpu_stacks; costs a look-up per charge).
  bool stacks = false;
  // Set by a stop request (sim/run/stop.h): the run is abandoned if it goes on past the grace.
  const std::atomic<bool>* stop = nullptr;
};

// One cache's view of a run: counters over the window, objects per layer at its end.
struct CacheReport {
  std::string name;
  slub::Geometry geo;
  slub::StatCounters stats{};  // SLUB_STATS in the window
  slub::ReuseCounters reuse{};  // slabs taken back and drained in the window (zero from a point written before 2026-12-06)
  slub::LayerCounts layers;    // at the end of the window
  // KmemCache::barn_full_seen / barn_empty_seen at the end of the run (-1: no limit checked);
  // kUnknownSeen when read from a point written without them.
  int barn_full_seen = -1, barn_empty_seen = -1;
};
inline constexpr int kUnknownSeen = 1 << 30;

struct LockReport {
  std::string cls;
  std::string instance;
  LockStat stat;
  bool rwsem = false;
  WaitTime waited;  // spinning for it inside the window, in and outside allocator code
};

// Time spent spinning for one spinlock class under one call chain (folded: outermost kernel function
// first, ';'-separated; "" outside any named function), summed over the tasks, in the window.
struct StackWait {
  std::string cls;
  std::string stack;
  Time time = 0;
};

// How the window was chosen and how well the mean is known (sim/run/settle.h). For a window
// the user fixed, `judged` says whether its series could be judged (edges on the rule's grid).
struct SettleReport {
  bool automatic = false;  // the settle rule chose the window
  bool judged = false;
  bool settled = false;
  Time transient = 0;      // where MSER-5 puts the end of the transient
  double half_width = 0;   // 95% confidence half-width of ops_per_sec (ops/s)
  int batches = 0;         // batch means behind it
  Time batch = 0;          // their length
  Time period = 0;         // the series' cycle, 0 = none found
  double period_acf = 0;   // its autocorrelation at that lag
  Time step = 0;           // the series' interval
  double low = 0, high = 0;  // 10th and 90th percentile of the window's intervals (ops/s)
  Time suggest_warmup = 0, suggest_window = 0;  // a fixed window not settled: the rule's estimate
  std::string reason;      // why it is not settled ("" if it is)
};

// One interval of the series (RunSpec::interval): operations the tasks completed and time they
// spun for locks in (end - interval, end] of global time. A CPU's own clock may run a little ahead
// of global time, so an operation or a spin near an edge can land in the next interval.
struct IntervalSample {
  Time end = 0;
  std::uint64_t ops = 0;
  Time spin = 0;
};

struct RunResult {
  int nr_task = 0;
  std::uint64_t ops_per_sec = 0;  // will-it-scale "average": operations per second, all tasks
  double idle_pct = 0;            // idle share of all logical CPUs in the window
  std::vector<std::uint64_t> task_ops;  // per task, in the window
  std::uint64_t ops() const {             // all tasks' counted operations in the window
    std::uint64_t n = 0;
    for (std::uint64_t o : task_ops) n += o;
    return n;
  }
  Time window = 0;                      // the measurement window's length
  Time warmup = 0;                      // where it starts
  SettleReport settle;
  std::vector<TaskTime> task_time;      // per task, in the window
  std::vector<LockReport> locks;
  std::vector<StackWait> stack_waits;
  std::vector<FoldedStack> cpu_stacks;  // all task time by call chain in the window (RunSpec::stacks)
  std::uint64_t events = 0;    // engine events fired
  std::uint64_t requests = 0;  // shared-state requests granted (inline or by event)
  Time end_time = 0;           // simulated time when the last task stopped
  std::vector<CacheReport> caches;
  std::int64_t slab_bytes = 0;        // all slab memory at the end of the window
  std::uint64_t alloc_failures = 0;   // allocations that found no memory
  std::uint64_t pgalloc = 0;          // pages the page allocator handed out in the window
  std::uint64_t pgfree = 0;           // pages it took back in the window
  std::uint64_t ksoftirqd_runs = 0;   // times ksoftirqd got a CPU in the window, all CPUs
  std::uint64_t grace_periods = 0;    // grace periods that ended in the window (from ticks only)
  std::uint64_t rcu_callbacks = 0;        // RCU callbacks invoked in the window, all CPUs
  std::uint64_t rcu_flood_callbacks = 0;  // of them, invoked while their CPU was in a callback flood
  FloodHistory rcu_floods;                // the floods entered from the run's start to the window's end
  std::uint64_t trace_skipped_frees = 0;  // replay: frees whose allocation had not happened yet
  // Slab traffic per counted operation, per cache the program uses: alloc, free, kfree_rcu.
  std::vector<std::pair<std::string, std::array<double, 3>>> per_op;
  Time interval = 0;                      // RunSpec::interval
  std::vector<IntervalSample> samples;    // one per interval, warm-up included
};

// Throws ConfigError for inputs that cannot run, std::runtime_error if the simulation itself
// fails (a task parked forever).
RunResult simulate(const RunSpec& spec);

}  // namespace slubsim
