// When a CPU runs its ready RCU callbacks (kernel/softirq.c, kernel/rcu/tree.c,
// kernel/sched/fair.c, 6.6 onward):
//
// - The scheduler tick (every `tick`) raises RCU_SOFTIRQ on a CPU with ready callbacks; at the
//   tick's irq exit __do_softirq runs rcu_do_batch rounds, restarting while callbacks stay
//   ready, at most `restarts` times and for at most `max_time`, and if callbacks remain it
//   wakes ksoftirqd. (Since 6.5 the irq exit runs softirqs even while ksoftirqd is runnable.)
// - ksoftirqd is a nice-0 task like the benchmark's: it gets the CPU at the first tick after the
//   running task's slice (`slice`) ends, runs rounds until nothing is ready (it sleeps) or the
//   first tick after its run ends, and gives the CPU back. Its run is one slice, or twice its
//   EEVDF lag if longer: it gains lag while it waits for the CPU. Slice ends take effect at
//   ticks because a CPU-bound task is only rescheduled when the tick sets need_resched; with
//   aligned ticks, CPUs switch to ksoftirqd in step.
// - Its wakeup: under CFS (`wakeup_preempts`) it takes the CPU at the task's next preemption
//   point. Under EEVDF with PLACE_LAG (`place_lag`) it keeps the lag it slept with: woken with
//   positive lag it makes the task ineligible and preempts at the next point too; woken with
//   none it waits for the slice's end. So a ksoftirqd that waited, then finished early, comes
//   back at once and able to run up to four slices. Without PLACE_LAG it wakes with no lag.
//   Negative lag is a debt: ksoftirqd gets the CPU only at a slice end where it is eligible
//   again, and one that blocks in debt stays queued (DELAY_DEQUEUE, `delay_dequeue`) earning it
//   back at half the wall-clock rate; woken before it is paid, it keeps the rest. Without
//   DELAY_DEQUEUE (before 6.12) it keeps the whole debt while it sleeps.
//   (CFS keeps the lag as the model's stand-in for its sleeper credit.)
//
// tick 0 keeps the simple model: one round at every point the workload offers (its iteration
// boundaries), no ksoftirqd. The caller runs the rounds; this class only decides.
#pragma once
#include <algorithm>
#include <vector>

#include "models/time.h"

namespace slubsim {

struct SoftirqLimits {
  Time tick = 0;
  int restarts = 10;
  Time max_time = 0;
  Time slice = 0;
  bool wakeup_preempts = false;  // CFS: a woken ksoftirqd takes the CPU at the next point
  bool place_lag = false;        // EEVDF's PLACE_LAG: it wakes with the lag it slept with
  bool delay_dequeue = false;    // EEVDF's DELAY_DEQUEUE: it earns a debt back while it sleeps
};

class Softirq {
 public:
  enum class Turn {
    None,       // the task goes on
    Round,      // tick 0: one round
    IrqExit,    // __do_softirq at a tick's irq exit: rounds while irq_exit_more()
    Ksoftirqd,  // ksoftirqd's slice: rounds while ksoftirqd_more()
  };

  // task_since[cpu]: where each CPU's task is in its slice when the run starts (≤ 0).
  void init(const SoftirqLimits& l, std::vector<Time> task_since) {
    l_ = l;
    cpu_.assign(task_since.size(), {});
    for (std::size_t c = 0; c < task_since.size(); ++c) cpu_[c].task_since = task_since[c];
  }

  // True when enter(cpu, now) would return None and change nothing: no tick since the last
  // point and no ksoftirqd preemption pending.
  bool quiet(int cpu, Time now) const {
    if (l_.tick <= 0) return false;
    const State& s = cpu_[cpu];
    return !(s.ksoftirqd && s.preempt_pending) && now < s.next_tick;
  }
  // At a point where the running task could be interrupted, at `now`.
  Turn enter(int cpu, Time now) {
    if (l_.tick <= 0) return Turn::Round;
    State& s = cpu_[cpu];
    if (s.ksoftirqd && s.preempt_pending) {
      s.preempt_pending = false;
      begin_run(s, now);
      return Turn::Ksoftirqd;  // the wakeup preempted the task: at its next preemption point
    }
    if (now < s.next_tick) return Turn::None;
    // A CPU-bound task reaches schedule() only when the tick has found its slice used up
    // (task_tick_fair → update_curr → resched_curr), so ksoftirqd gets the CPU at the first
    // tick at or after the slice's end: ticks are aligned across CPUs (skew_tick=0).
    const Time tick = now / l_.tick * l_.tick;  // the tick this point follows
    s.next_tick = next_tick(now);
    if (s.ksoftirqd && tick >= s.task_since + l_.slice) {
      if (!l_.wakeup_preempts && s.lag + (now - s.waiting_since) / 2 < 0) {
        // Not eligible yet (EEVDF): pick_eevdf keeps the task, whose new deadline
        // (update_deadline) starts a new slice at this tick.
        s.task_since = tick;
        return Turn::IrqExit;
      }
      begin_run(s, now);
      return Turn::Ksoftirqd;
    }
    return Turn::IrqExit;
  }
  // __do_softirq's restart test after `rounds` rounds that began at `start`.
  bool irq_exit_more(Time start, Time now, int rounds, bool ready) const {
    return ready && rounds < l_.restarts && now - start < l_.max_time;
  }
  // ksoftirqd runs while callbacks are ready, to the first tick at or after the end of its run
  // (begin_run): one slice, or longer when it brought positive lag.
  bool ksoftirqd_more(int cpu, Time now, bool ready) const { return ready && now < cpu_[cpu].run_end; }
  // ksoftirqd's lag on `cpu` (EEVDF's V - v_i, in the time of one nice-0 entity).
  Time ksoftirqd_lag(int cpu) const { return cpu_[cpu].lag; }

  // After the turn, at `now`, with callbacks still ready or not.
  void leave(int cpu, Turn turn, Time now, bool ready) {
    if (l_.tick <= 0) return;
    State& s = cpu_[cpu];
    if (turn == Turn::Ksoftirqd) {
      // Running, its lag fell at half the rate of its runtime (two nice-0 entities).
      s.lag = clamp_lag(s.lag - (now - s.run_start) / 2);
      s.ksoftirqd = ready;  // nothing ready: it sleeps
      if (ready) {
        s.waiting_since = now;  // preempted: it waits, gaining lag, while the task runs
      } else if (s.lag < 0 && !l_.wakeup_preempts) {
        // It blocks while not eligible. With DELAY_DEQUEUE (6.12 on) its dequeue is delayed:
        // it stays queued, earning its lag back at half the wall-clock rate, until a pick
        // dequeues it with none (DELAY_ZERO); woken before, it is requeued with what is left
        // (requeue_delayed_entity). Before 6.12 it keeps the whole debt while it sleeps.
        // Blocking while eligible keeps its positive lag.
        s.slept_at = now;
      } else if (s.lag < 0) {
        s.lag = 0;  // CFS: the stand-in for its sleeper credit keeps no debt
      }
      s.task_since = now;   // the task has the CPU again, for a new slice
      s.next_tick = next_tick(now);
    } else if (turn == Turn::IrqExit) {
      // Ticks that fired while __do_softirq ran (interrupts are on in it) found in_interrupt()
      // and ran no softirqs at their irq exit (kernel/softirq.c irq_exit_rcu): the next chance
      // is the first tick after this one ended.
      s.next_tick = next_tick(now);
      if (ready && !s.ksoftirqd) {
        // wakeup_softirqd → check_preempt_wakeup_fair. Placed with positive lag (place_entity,
        // PLACE_LAG), ksoftirqd pulls the average vruntime below the task's, pick_eevdf drops
        // the no longer eligible task and the wakeup preempts it: at its next preemption
        // point, as under CFS. Placed with none or less, the task is eligible with the earlier
        // deadline and keeps the CPU to the end of its current slice (and, while ksoftirqd's
        // debt lasts, to the end of later ones: enter); its slices have run back to back since
        // it last got the CPU.
        s.ksoftirqd = true;
        s.waiting_since = now;
        place(s, now);
        if (l_.wakeup_preempts || s.lag > 0) s.preempt_pending = true;
        else s.task_since += (now - s.task_since) / l_.slice * l_.slice;
      }
    }
  }

  bool ksoftirqd_runnable(int cpu) const { return l_.tick > 0 && cpu_[cpu].ksoftirqd; }
  // Times ksoftirqd got a CPU, all CPUs: each is two context switches (to it and back).
  std::uint64_t switch_ins() const { return switch_ins_; }

 private:
  struct State {
    Time next_tick = 0;
    bool ksoftirqd = false;
    bool preempt_pending = false;  // its wakeup preempted: ksoftirqd runs at the next point
    Time task_since = 0;
    Time lag = 0;            // ksoftirqd's EEVDF lag, kept while it sleeps (PLACE_LAG)
    Time waiting_since = 0;  // runnable, not running, since
    Time slept_at = 0;       // blocked with negative lag (a delayed dequeue) at
    Time run_start = 0, run_end = 0;
  };
  Time next_tick(Time now) const { return (now / l_.tick + 1) * l_.tick; }
  Time tick_at_or_after(Time t) const { return (t + l_.tick - 1) / l_.tick * l_.tick; }
  // The lag a woken ksoftirqd comes back with (EEVDF: place_entity, requeue_delayed_entity).
  // Still delayed, it keeps the debt it has not earned back; dequeued, it is placed with its
  // kept lag (PLACE_LAG) or at the average, with none. Under CFS the kept lag stands for the
  // sleeper credit place_entity gives (GENTLE_FAIR_SLEEPERS).
  void place(State& s, Time now) const {
    if (l_.wakeup_preempts) return;
    if (s.lag < 0 && l_.delay_dequeue) s.lag = std::min<Time>(0, s.lag + (now - s.slept_at) / 2);
    else if (!l_.place_lag) s.lag = 0;
  }
  // update_entity_lag clamps lag to two slices either way.
  Time clamp_lag(Time lag) const { return std::clamp(lag, -2 * l_.slice, 2 * l_.slice); }
  // ksoftirqd gets the CPU at `now` (kernel/sched/fair.c, EEVDF, 6.6 onward): waiting, it gained
  // lag at half the wall-clock rate (the running task's vruntime moved V at half speed). It is
  // protected for its slice (RUN_TO_PARITY); then it stays the only eligible entity until its
  // lag is spent, which running at rate 1/2 takes 2 × lag. The end takes effect at a tick.
  void begin_run(State& s, Time now) {
    ++switch_ins_;
    s.lag = clamp_lag(s.lag + (now - s.waiting_since) / 2);
    s.run_start = now;
    s.run_end = tick_at_or_after(now + std::max(l_.slice, 2 * s.lag));
  }

  SoftirqLimits l_;
  std::vector<State> cpu_;
  std::uint64_t switch_ins_ = 0;
};

}  // namespace slubsim
