// The "why" report: where the tasks' time in the measurement window goes, split like a perf
// profile into exclusive categories that sum to the tasks' time:
//
//   nonslab                    the workload's own work and shared accesses (not the allocator)
//   nonslab.wait.<class>       spinning for a workload lock (mmap_lock, ...), per lock class
//   slab.fastpath              allocator calls served by cpu freelists and percpu sheaves
//   slab.slowpath              ___slab_alloc, __slab_free, sheaf refill/flush, barns, new slabs
//                              and the page allocator, lock waiting excluded
//   rcu.callbacks              RCU callbacks in softirq time, the frees they do included
//   wait.<class>[.<instance>]  spinning for an allocator lock before acquiring it (perf's
//                              native_queued_spin_lock_slowpath), per instance (node) when the
//                              class has few instances
//   idle                       the task slept (a sleeping rwsem waiter)
//
// Keys: why.<category>.percent (share of the summed task time) and why.<category>.ns_per_op
// (summed task time per operation), each the mean over the job's rows; the same per row as
// why.<N>.<category>.*; and per row the spin under each call chain as
// why.<N>.spin.<folded stack>.*, the stack outermost kernel function first, ';'-separated, the
// lock class last ("rcu_do_batch;__slab_free;maple_node.list_lock"), as perf script's folded
// call graphs print native_queued_spin_lock_slowpath's callers.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/config.h"
#include "sim/run/job.h"
#include "sim/run/runner.h"

namespace slubsim {

struct WhyLine {
  enum Kind : std::uint8_t { Busy, SpinWait, RwsemWait, Idle };
  std::string category;  // as in the keys: "slab.slowpath", "wait.maple_node.list_lock.node0"
  std::string lock;      // waits: the lock as perf-like text, "maple_node.list_lock node0"
  Kind kind = Busy;
  Time time = 0;         // summed over the tasks, inside the window
  std::string cls;       // waits: the lock class, "maple_node.list_lock"
  std::string instance;  // waits: "node0", or "" when the line sums every instance of the class
};

struct WhyProfile {
  Time task_time = 0;          // summed over the tasks: nr_task x window
  std::uint64_t ops = 0;       // operations counted in the window
  std::vector<WhyLine> lines;  // every category, in a fixed order, zero ones included
};

// "<stack>;<lock class>", or the class alone for a wait outside any named function.
std::string folded_stack(const StackWait& w);

// One row's profile.
WhyProfile why_profile(const RunResult& r);
// Add another profile of the same row (another run); categories are matched by name.
void add_profile(WhyProfile& into, const WhyProfile& p);

// why.<category>.percent and why.<category>.ns_per_op: means over the rows (zeros included;
// lkp_matrix drops keys that are zero in every run).
void put_why_keys(json& out, const std::vector<RunResult>& rows);

// The load on one spinlock over a row's runs, as lock_stat counts it (acquisitions started in
// the window): how often it is taken, how long each acquisition occupies it (hold, plus the
// hand-off when it was contended), and the share of the window it is so occupied, its
// utilisation. Near 1 the lock is a convoy: every acquisition waits for the previous ones.
// One instance of class `cls`, or with `instance` "" all of the class's (then the busy share
// is the mean over its instances), as a why line names them.
struct LockLoad {
  std::uint64_t acquisitions = 0, contentions = 0, handoffs = 0, ops = 0;
  Time hold_total = 0, handoff_total = 0;
  Time window = 0;             // the runs' windows summed
  std::size_t instances = 0;   // lock instances counted (the most in one run)
  double per_op() const;       // acquisitions per counted operation
  double busy() const;         // (holds + hand-offs) / (window x instances), 0..~1
};
LockLoad lock_load(const std::vector<const RunResult*>& runs, const std::string& cls, const std::string& instance);

// RCU callbacks over a row's runs: how many per operation, where their time went (the softirq
// at a tick's irq exit or ksoftirqd), how often ksoftirqd got a CPU and for how long, and the
// share invoked in a callback flood (the CPU's queue past qhimark, so rcu_do_batch's limit is
// DEFAULT_MAX_RCU_BLIMIT; kernel/rcu/tree.c), with when the CPUs entered their floods and the
// longest queue against qhimark: a flood, once entered, lasts (rcu_do_batch restores blimit only
// at qlowmark), so whether a row floods is often decided in its first two grace periods. The
// regime these describe decides when frees happen, so a row's slab pages and list_lock load
// follow it.
struct CallbackLoad {
  std::uint64_t callbacks = 0, in_flood = 0, ksoftirqd_runs = 0, ops = 0;
  Time irq_exit = 0, ksoftirqd = 0;  // task time in callbacks: at tick irq exits, in ksoftirqd
  Time cpu_time = 0;                 // the runs' windows x their tasks (the CPUs that run them)
  // Floods from the runs' start to their windows' end, runs merged; of task_cpus, the CPUs that
  // run tasks, runs summed.
  FloodHistory floods;
  int task_cpus = 0;
  double per_op() const;             // callbacks per counted operation
  double flood_share() const;        // of callbacks, 0..1
  double ksoftirqd_share() const;    // of the callbacks' time, 0..1
  double runs_per_cpu_sec() const;   // ksoftirqd's runs per task CPU per second
  Time mean_run() const;             // ksoftirqd's time per run (its lock spinning apart)
};
CallbackLoad callback_load(const std::vector<const RunResult*>& runs);

// `slubsim run --why`: a perf-report-like table per variant and row, runs summed, plus the
// hottest-lock summary lines, the load on each of those locks and the RCU callbacks' line.
// out_dir: the run's --out DIR ("" = none), to say where each row's folded stacks are.
std::string format_why(const Job& job, const JobResult& result, const std::string& out_dir = "");
// Where lkp's binding puts nr_task tasks: "tasks per node (...): node0 4, node1 4".
std::string describe_placement(const Machine& m, int nr_task);

}  // namespace slubsim
