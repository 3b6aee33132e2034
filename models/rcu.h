// RCU, as far as freeing memory needs it: callbacks queued by call_rcu run after a grace period
// on the CPU that queued them, in its softirq time, and cost that CPU's time. The grace period
// is a fixed length from the config. A CPU runs its ready callbacks when it next reaches a point
// where the kernel would (the workload loop calls run_ready at each iteration boundary).
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

#include "models/time.h"

namespace slubsim {

// What a callback does, as data (a coroutine lambda's captures would not outlive the queue).
// 16 bytes: when it becomes ready is kept once per segment of the queue (RcuQueue), not per
// callback, so a round reads each callback once, and a grace period later that read is cold.
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
};
static_assert(sizeof(void*) != 8 || sizeof(RcuCallback) == 16, "a callback is two words");

// How many ready callbacks a CPU invokes at one softirq point (kernel/rcu/tree.c rcu_do_batch):
// at most max(blimit, ready >> divisor) when the CPU has other work; a CPU whose queue grew past
// qhimark is in a callback flood and invokes up to flood_blimit until it is down to qlowmark.
// blimit 0: no limit (every ready callback at once).
struct RcuBatchLimits {
  std::size_t blimit = 0;
  int divisor = 7;
  std::size_t qhimark = 10000;
  std::size_t qlowmark = 100;
  std::size_t flood_blimit = 10000;
  // A round whose limit exceeds time_limit_above stops after time_limit (rcu_resched_ns); 0: none.
  Time time_limit = 0;
  std::size_t time_limit_above = 100;
};

// Callback floods over a run (RcuQueue::flood_history): CPUs that entered one, the first and the
// last entry, floods that ended, the longest queue a CPU held, and qhimark to read it against.
struct FloodHistory {
  int cpus = 0;
  Time first = 0, last = 0;
  std::uint64_t exits = 0;
  std::size_t queue_peak = 0, qhimark = 0;
  // Another CPU's or run's record beside this one: entries counted, the earliest and latest kept.
  void merge(const FloodHistory& o) {
    if (o.cpus > 0) {
      first = cpus ? std::min(first, o.first) : o.first;
      last = cpus ? std::max(last, o.last) : o.last;
      cpus += o.cpus;
    }
    exits += o.exits;
    queue_peak = std::max(queue_peak, o.queue_peak);
    qhimark = std::max(qhimark, o.qhimark);
  }
};

// Grace periods from ticks (kernel/rcu/tree.c with PREEMPT_RCU, rcu_flavor_sched_clock_irq):
// a grace period ends when every CPU that runs a task has reported a quiescent state. A CPU
// first notices a new grace period at a tick, and reports at a later tick that finds it outside
// code where a tick cannot report (the caller gives the chance it was, from the share of the
// last tick interval the CPU spent there). Callbacks queued while grace period k runs wait for
// k + 1, as with fixed periods.
// The grace-period kthread (rcu_gp_kthread) starts each period (rcu_gp_init) and ends it
// (rcu_gp_cleanup), then starts the next at once while callbacks wait. Idle CPUs are in
// dyntick-idle and report nothing themselves: the kthread's first quiescent-state forcing scan
// (rcu_gp_fqs, first_time), `first_fqs` after the period started rounded to the jiffy, reports
// them. So on a machine with idle CPUs a period lasts at least until that scan; on a full one it
// ends with the last busy CPU's report. The kthread itself is not scheduled here: woken on an
// idle CPU it runs at once, and on a busy one it keeps EEVDF's positive lag from its waits
// (PLACE_LAG) and so preempts at the next point; the model takes both as no delay.
// Busy CPUs that hold a period up are forced (rcu_implicit_dynticks_qs, run by the forcing
// scans): once the period is jiffies_to_sched_qs old, or from its first scan when the period
// started in callback overload (rcu_state.cbovld: a CPU held qovld callbacks or more), the CPU's
// rcu_urgent_qs is set, its next tick asks for a reschedule (rcu_sched_clock_irq), and the task's
// next return to user space or cond_resched passes a quiescent state: a report at that tick.
struct GracePeriodForcing {
  Time sched_qs = 0;              // jiffies_to_sched_qs after the start (0: never forced)
  std::size_t overload_mark = 0;  // qovld: callbacks one CPU holds for overload (0: none)
};

class TickGracePeriods {
 public:
  // `tick` and `first_fqs` 0: no forcing scan (idle CPUs never hold a period up).
  void init(int nr_cpus, Time tick = 0, Time first_fqs = 0, GracePeriodForcing forcing = {}) {
    required_.assign(static_cast<std::size_t>(nr_cpus), true);
    cpu_.assign(static_cast<std::size_t>(nr_cpus), {});
    nr_busy_ = nr_cpus;
    tick_ = tick;
    first_fqs_ = first_fqs;
    forcing_ = forcing;
    overloaded_cpus_ = 0;
    idle_ = false;
    start(0);
  }
  // A CPU's callback queue reached the overload mark (+1) or fell below it (-1): check_cb_ovld.
  void overload(int delta) { overloaded_cpus_ += delta; }
  // Periods that started in callback overload, of those ended.
  std::uint64_t ended_overloaded() const { return ended_overloaded_; }
  // Only these CPUs run tasks; the others are idle: the forcing scan reports them.
  void set_busy(const std::vector<int>& cpus) {
    std::fill(required_.begin(), required_.end(), false);
    for (int c : cpus) required_[static_cast<std::size_t>(c)] = true;
    nr_busy_ = static_cast<int>(std::count(required_.begin(), required_.end(), true));
    idle_ = static_cast<std::size_t>(nr_busy_) < required_.size();
    start(start_);
  }
  // The grace period in progress at `now`, and the last one completed by then.
  std::uint64_t current(Time now) const { return gp_ + (end_at_ <= now ? 1 : 0); }
  std::uint64_t completed(Time now) const { return current(now) - 1; }
  // Whether `cpu` has reported a quiescent state for the grace period in progress at `now`.
  bool reported(int cpu, Time now) const {
    const auto& c = cpu_[static_cast<std::size_t>(cpu)];
    return end_at_ > now && c.noted == gp_ && c.reported;
  }
  // A tick on `cpu` at `now` whose interrupted context could report with probability `p`; draw
  // is uniform in [0, 1). Returns whether this report was the last one the period waited for
  // from busy CPUs (it ends then, or at the forcing scan if that is later).
  bool tick(int cpu, Time now, double p, double draw) {
    advance(now);
    auto& c = cpu_[static_cast<std::size_t>(cpu)];
    if (!required_[static_cast<std::size_t>(cpu)] || end_at_ != kForever) return false;
    if (c.noted != gp_) {
      c.noted = gp_;  // note_gp_changes: this tick only notices the new grace period
      return false;
    }
    if (now >= force_at_) p = 1.0;  // rcu_urgent_qs: this tick forces a quiescent state
    if (c.reported || draw >= p) return false;
    c.reported = true;
    if (--remaining_ > 0) return false;
    end_at_ = std::max(now, fqs_at_);  // rcu_report_qs_rsp wakes the kthread; or its first scan
    advance(now);
    return true;
  }
  std::uint64_t ended() const { return ended_; }

 private:
  struct Cpu {
    std::uint64_t noted = 0;
    bool reported = false;
  };
  // rcu_gp_init at `at`: every busy CPU owes a report; idle ones wait for the first scan.
  void start(Time at) {
    start_ = at;
    end_at_ = kForever;
    remaining_ = nr_busy_;
    for (auto& x : cpu_) x.reported = false;
    const Time jiffy = tick_ > 0 ? (at / tick_) * tick_ : at;
    fqs_at_ = idle_ && tick_ > 0 ? jiffy + first_fqs_ : 0;
    // rcu_gp_init: rcu_state.cbovld from the overload seen as the previous period ended.
    overloaded_ = forcing_.overload_mark > 0 && overloaded_cpus_ > 0;
    force_at_ = kForever;
    if (overloaded_ && tick_ > 0) force_at_ = jiffy + first_fqs_;
    else if (forcing_.sched_qs > 0) force_at_ = jiffy + forcing_.sched_qs;
  }
  // rcu_gp_cleanup of a period whose end time has come, and the next period's rcu_gp_init.
  void advance(Time now) {
    if (end_at_ > now) return;
    ++gp_;
    ++ended_;
    if (overloaded_) ++ended_overloaded_;
    start(end_at_);
  }
  std::vector<bool> required_;
  std::vector<Cpu> cpu_;
  int nr_busy_ = 0;    // CPUs that owe each period a report
  int remaining_ = 0;  // of them, those that have not reported yet
  std::uint64_t gp_ = 1;  // the grace period in progress (until end_at_)
  std::uint64_t ended_ = 0;
  Time start_ = 0;
  Time end_at_ = kForever;  // when the period in progress ends, once every busy CPU reported
  Time fqs_at_ = 0;         // its first forcing scan (0: none, no idle CPUs)
  Time force_at_ = kForever;  // from then on a busy CPU's tick reports (GracePeriodForcing)
  Time tick_ = 0, first_fqs_ = 0;
  GracePeriodForcing forcing_;
  int overloaded_cpus_ = 0;  // CPUs holding forcing_.overload_mark callbacks or more
  bool overloaded_ = false;  // the period in progress started in overload
  std::uint64_t ended_overloaded_ = 0;
  bool idle_ = false;
};

// Each CPU's callbacks in queue order, cut into segments by the grace period they wait for
// (kernel/rcu/rcu_segcblist.c keeps one list cut at gp_seq boundaries): the callbacks of one
// segment become ready together, so readiness is decided per segment and no callback is read
// before it is invoked.
class RcuQueue {
 public:
  // tick and first_fqs: the grace-period kthread's first forcing scan (TickGracePeriods).
  void init(int nr_cpus, Time grace_period, RcuBatchLimits limits = {}, bool from_ticks = false, Time tick = 0,
            Time first_fqs = 0, GracePeriodForcing forcing = {}) {
    per_cpu_.assign(static_cast<std::size_t>(nr_cpus), {});
    grace_ = grace_period;
    limits_ = limits;
    from_ticks_ = from_ticks;
    tick_ = tick;
    ticks_.init(nr_cpus, tick, first_fqs, forcing);
    overload_mark_ = from_ticks ? forcing.overload_mark : 0;
  }
  // Callbacks are given their grace period when the CPU reports a quiescent state, not as they
  // are queued (kernel/rcu/tree.c, rcu_report_qs_rdp -> rcu_accelerate_cbs). With fixed periods a
  // CPU reports at its `report_ticks`-th tick of each period (none without ticks: no effect).
  void accelerate_at_report(int report_ticks) { report_ticks_ = report_ticks; }
  bool from_ticks() const { return from_ticks_; }
  TickGracePeriods& grace_periods() { return ticks_; }
  const TickGracePeriods& grace_periods() const { return ticks_; }
  Time grace_period() const { return grace_; }
  // Grace periods run back to back, each `grace_` long, for the whole machine: a callback
  // queued while grace period k is in progress waits for the next one to end, so the
  // callbacks of one period become ready together at a period boundary and a CPU invokes them
  // as one batch (kernel/rcu/tree.c: callbacks advance segment by segment with the gp_seq, and
  // rcu_do_batch invokes the ready segment).
  //
  // With acceleration at the report (accelerate_at_report), a callback queued after its CPU
  // reported for period k was not given a period then: the CPU gives it one when it notices k's
  // end (note_gp_changes -> rcu_advance_cbs), and k + 1 has already started, so it waits for
  // k + 2 (rcu_seq_snap). Only callbacks queued before the report wait for k + 1.
  void call_rcu(int cpu, Time now, RcuCallback cb) {
    CpuQueue& q = per_cpu_[static_cast<std::size_t>(cpu)];
    Time ready = grace_ > 0 ? (now / grace_ + 2) * grace_ : now;
    std::uint64_t gp = ticks_.current(now) + 1;
    if (report_ticks_ > 0) {
      if (from_ticks_) {
        if (ticks_.reported(cpu, now)) ++gp;
      } else if (grace_ > 0 && tick_ > 0) {
        // The period's first tick after its start notices it; the report_ticks-th reports.
        const Time start = now / grace_ * grace_;
        const Time report = (start / tick_ + report_ticks_) * tick_;
        if (now >= report && report < start + grace_) ready += grace_;
      }
    }
    if (q.segs.empty() || q.segs.back().ready != ready || q.segs.back().gp != gp) q.segs.push_back({ready, gp, 0});
    ++q.segs.back().count;
    q.cbs.push_back(cb);
    if (q.cbs.size() > q.peak) q.peak = q.cbs.size();
    if (!q.flood && q.cbs.size() > limits_.qhimark) {  // __call_rcu_core
      q.flood = true;
      if (q.first_flood < 0) q.first_flood = now;
    }
    if (overload_mark_ > 0 && q.cbs.size() == overload_mark_) ticks_.overload(+1);
  }
  // How many of `cpu`'s callbacks to invoke at a softirq point at `now` (rcu_do_batch's bl,
  // capped by what is ready); call batch_done after invoking them.
  // The ready callbacks are a prefix of the queue: a CPU queues them in time order, and what is
  // ready stays ready. So the count of the prefix found ready so far only moves on.
  std::size_t batch(int cpu, Time now) const {
    const CpuQueue& q = per_cpu_[static_cast<std::size_t>(cpu)];
    while (q.ready_segs < q.segs.size() && is_ready(q.segs[q.ready_segs], now)) q.ready += q.segs[q.ready_segs++].count;
    if (limits_.blimit == 0) return q.ready;
    std::size_t bl = q.flood ? limits_.flood_blimit : std::max(limits_.blimit, q.ready >> limits_.divisor);
    return std::min(q.ready, bl);
  }
  // When a round of `n` callbacks that starts at `start` must stop, whatever is left.
  Time batch_deadline(std::size_t n, Time start) const {
    return limits_.time_limit > 0 && n > limits_.time_limit_above ? start + limits_.time_limit : kForever;
  }
  void batch_done(int cpu) {
    CpuQueue& q = per_cpu_[static_cast<std::size_t>(cpu)];
    if (q.flood && q.cbs.size() <= limits_.qlowmark) {
      q.flood = false;
      ++flood_exits_;
    }
  }
  // Callbacks of `cpu` whose grace period ended by `now`, oldest first.
  bool ready(int cpu, Time now) const {
    const CpuQueue& q = per_cpu_[static_cast<std::size_t>(cpu)];
    return !q.segs.empty() && is_ready(q.segs.front(), now);
  }
  RcuCallback pop(int cpu) {
    CpuQueue& q = per_cpu_[static_cast<std::size_t>(cpu)];
    ++invoked_;
    if (q.flood) ++invoked_in_flood_;
    RcuCallback cb = q.cbs.front();
    if (overload_mark_ > 0 && q.cbs.size() == overload_mark_) ticks_.overload(-1);
    q.cbs.pop_front();
    if (--q.segs.front().count == 0) {
      q.segs.pop_front();
      if (q.ready_segs > 0) --q.ready_segs;
    }
    if (q.ready > 0) --q.ready;
    return cb;
  }
  const std::deque<RcuCallback>& pending(int cpu) const { return per_cpu_[static_cast<std::size_t>(cpu)].cbs; }
  // When pending(cpu)[i] becomes ready (fixed grace periods).
  Time ready_time(int cpu, std::size_t i) const {
    for (const Segment& g : per_cpu_[static_cast<std::size_t>(cpu)].segs) {
      if (i < g.count) return g.ready;
      i -= g.count;
    }
    return kForever;
  }
  int nr_cpus() const { return static_cast<int>(per_cpu_.size()); }
  // Callbacks invoked so far, all CPUs, and those of them invoked while their CPU was in a
  // callback flood (queue past qhimark, so rcu_do_batch's limit was DEFAULT_MAX_RCU_BLIMIT).
  std::uint64_t invoked() const { return invoked_; }
  std::uint64_t invoked_in_flood() const { return invoked_in_flood_; }
  // Over the whole run, warm-up included (a flood is entered once and, under a steady stream of
  // callbacks, lasts: rcu_do_batch restores blimit only at qlowmark): how many CPUs entered one,
  // the first and last of those entries, how many floods ended, and the longest queue any CPU held.
  FloodHistory flood_history() const {
    FloodHistory h;
    h.qhimark = limits_.qhimark;
    h.exits = flood_exits_;
    for (const CpuQueue& q : per_cpu_) {
      const bool entered = q.first_flood >= 0;
      h.merge({entered ? 1 : 0, entered ? q.first_flood : 0, entered ? q.first_flood : 0, 0, q.peak, 0});
    }
    return h;
  }

 private:
  // Consecutive callbacks of one CPU that wait for the same grace period.
  struct Segment {
    Time ready = 0;         // fixed grace periods: when its grace period has ended
    std::uint64_t gp = 0;   // grace periods from ticks: the grace period it waits for
    std::size_t count = 0;  // its callbacks still queued
  };
  struct CpuQueue {
    std::deque<RcuCallback> cbs;
    std::deque<Segment> segs;
    mutable std::size_t ready_segs = 0;  // a prefix of segs known ready
    mutable std::size_t ready = 0;       // their callbacks still queued
    bool flood = false;
    Time first_flood = -1;  // when its queue first passed qhimark (-1: never)
    std::size_t peak = 0;   // its longest queue
  };
  bool is_ready(const Segment& g, Time now) const {
    return from_ticks_ ? g.gp <= ticks_.completed(now) : g.ready <= now;
  }
  std::vector<CpuQueue> per_cpu_;
  std::uint64_t invoked_ = 0, invoked_in_flood_ = 0, flood_exits_ = 0;
  bool from_ticks_ = false;
  Time tick_ = 0;
  int report_ticks_ = 0;  // 0: callbacks get their period as they are queued
  std::size_t overload_mark_ = 0;  // from ticks: qovld, tracked for the forcing (0: not tracked)
  TickGracePeriods ticks_;
  Time grace_ = 0;
  RcuBatchLimits limits_;
};

}  // namespace slubsim
