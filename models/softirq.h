// When a CPU runs its ready RCU callbacks (kernel/softirq.c, kernel/rcu/tree.c,
// kernel/sched/fair.c, 6.6 onward):
//
// - The scheduler tick (every `tick`) raises RCU_SOFTIRQ on a CPU with ready callbacks; at the
//   tick's irq exit __do_softirq runs rcu_do_batch rounds, restarting while callbacks stay
//   ready, at most `restarts` times and for at most `max_time`, and if callbacks remain it
//   wakes ksoftirqd. (Since 6.5 the irq exit runs softirqs even while ksoftirqd is runnable.)
// - ksoftirqd is a nice-0 task like the benchmark's: it gets the CPU at the first tick after the
//   running task's slice (`slice`) ends (or at once, `wakeup_preempts`), runs rounds until
//   nothing is ready (it sleeps) or the first tick after its own slice ends, and gives the CPU
//   back. Slice ends take effect at ticks because a CPU-bound task is only rescheduled when
//   the tick sets need_resched; with aligned ticks, CPUs switch to ksoftirqd in step.
//
// tick 0 keeps the simple model: one round at every point the workload offers (its iteration
// boundaries), no ksoftirqd. The caller runs the rounds; this class only decides.
#pragma once
#include <vector>

#include "models/time.h"

namespace slubsim {

struct SoftirqLimits {
  Time tick = 0;
  int restarts = 10;
  Time max_time = 0;
  Time slice = 0;
  bool wakeup_preempts = false;  // ksoftirqd takes the CPU at the task's next preemption point
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

  // At a point where the running task could be interrupted, at `now`.
  Turn enter(int cpu, Time now) {
    if (l_.tick <= 0) return Turn::Round;
    State& s = cpu_[cpu];
    if (s.ksoftirqd && s.preempt_pending) {
      s.preempt_pending = false;
      ++switch_ins_;
      return Turn::Ksoftirqd;  // the wakeup preempted the task: at its next preemption point
    }
    if (now < s.next_tick) return Turn::None;
    // A CPU-bound task reaches schedule() only when the tick has found its slice used up
    // (task_tick_fair → update_curr → resched_curr), so ksoftirqd gets the CPU at the first
    // tick at or after the slice's end: ticks are aligned across CPUs (skew_tick=0).
    const Time tick = now / l_.tick * l_.tick;  // the tick this point follows
    s.next_tick = next_tick(now);
    if (s.ksoftirqd && tick >= s.task_since + l_.slice) {
      ++switch_ins_;
      return Turn::Ksoftirqd;
    }
    return Turn::IrqExit;
  }
  // __do_softirq's restart test after `rounds` rounds that began at `start`.
  bool irq_exit_more(Time start, Time now, int rounds, bool ready) const {
    return ready && rounds < l_.restarts && now - start < l_.max_time;
  }
  // ksoftirqd's own slice ends, like the task's, at the first tick at or after start + slice.
  bool ksoftirqd_more(Time start, Time now, bool ready) const {
    return ready && now < (start + l_.slice + l_.tick - 1) / l_.tick * l_.tick;
  }

  // After the turn, at `now`, with callbacks still ready or not.
  void leave(int cpu, Turn turn, Time now, bool ready) {
    if (l_.tick <= 0) return;
    State& s = cpu_[cpu];
    if (turn == Turn::Ksoftirqd) {
      s.ksoftirqd = ready;  // nothing ready: it sleeps
      s.task_since = now;   // the task has the CPU again, for a new slice
      s.next_tick = next_tick(now);
    } else if (turn == Turn::IrqExit && ready && !s.ksoftirqd) {
      // wakeup_softirqd. The task keeps the CPU to the end of its current slice (EEVDF with
      // RUN_TO_PARITY); its slices have run back to back since it last got the CPU. Or, if the
      // wakeup preempts it, only to its next preemption point.
      s.ksoftirqd = true;
      if (l_.wakeup_preempts) s.preempt_pending = true;
      else s.task_since += (now - s.task_since) / l_.slice * l_.slice;
    }
  }

  bool ksoftirqd_runnable(int cpu) const { return l_.tick > 0 && cpu_[cpu].ksoftirqd; }
  // Times ksoftirqd got a CPU, all CPUs: each is two context switches (to it and back).
  std::uint64_t switch_ins() const { return switch_ins_; }

 private:
  struct State {
    Time next_tick = 0;
    bool ksoftirqd = false;
    bool preempt_pending = false;  // wakeup_preempts: ksoftirqd runs at the next point
    Time task_since = 0;
  };
  Time next_tick(Time now) const { return (now / l_.tick + 1) * l_.tick; }

  SoftirqLimits l_;
  std::vector<State> cpu_;
  std::uint64_t switch_ins_ = 0;
};

}  // namespace slubsim
