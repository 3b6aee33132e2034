// RCU, as far as freeing memory needs it: callbacks queued by call_rcu run after a grace period
// on the CPU that queued them, in its softirq time, and cost that CPU's time. The grace period
// is a fixed length from the config. A CPU runs its ready callbacks when it next reaches a point
// where the kernel would (the workload loop calls run_ready at each iteration boundary).
#pragma once
#include <cstdint>
#include <deque>
#include <vector>

#include "models/time.h"

namespace slubsim {

// What a callback does, as data (a coroutine lambda's captures would not outlive the queue).
struct RcuCallback {
  enum Kind : std::uint8_t {
    FreeObject,      // mt_free_rcu / classic kfree_rcu of one object: kmem_cache_free after the GP
    RcuSheaf,        // rcu_free_sheaf: the sheaf goes to the barn as a full sheaf, or is flushed
    RcuSheafNobarn,  // rcu_free_sheaf_nobarn: flushed to slabs and freed (flush paths)
    SlabPages,       // SLAB_TYPESAFE_BY_RCU: an empty slab's pages are freed after the GP
  };
  Kind kind = FreeObject;
  int cache = -1;
  void* ptr = nullptr;  // the object, the Sheaf*, or the Slab*
  Time ready = 0;
};

class RcuQueue {
 public:
  void init(int nr_cpus, Time grace_period) {
    per_cpu_.assign(static_cast<std::size_t>(nr_cpus), {});
    grace_ = grace_period;
  }
  Time grace_period() const { return grace_; }
  // Grace periods run back to back, each `grace_` long, for the whole machine: a callback
  // queued while grace period k is in progress waits for the next one to end, so the
  // callbacks of one period become ready together at a period boundary and a CPU invokes them
  // as one batch (kernel/rcu/tree.c: callbacks advance segment by segment with the gp_seq, and
  // rcu_do_batch invokes the ready segment).
  void call_rcu(int cpu, Time now, RcuCallback cb) {
    cb.ready = grace_ > 0 ? (now / grace_ + 2) * grace_ : now;
    per_cpu_[cpu].push_back(cb);
  }
  // Callbacks of `cpu` whose grace period ended by `now`, oldest first.
  bool ready(int cpu, Time now) const {
    const auto& q = per_cpu_[cpu];
    return !q.empty() && q.front().ready <= now;
  }
  RcuCallback pop(int cpu) {
    RcuCallback cb = per_cpu_[cpu].front();
    per_cpu_[cpu].pop_front();
    return cb;
  }
  const std::deque<RcuCallback>& pending(int cpu) const { return per_cpu_[cpu]; }
  int nr_cpus() const { return static_cast<int>(per_cpu_.size()); }

 private:
  std::vector<std::deque<RcuCallback>> per_cpu_;
  Time grace_ = 0;
};

}  // namespace slubsim
