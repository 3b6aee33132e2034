// RCU grace periods as the allocator sees them (models/rcu.h).
#include <doctest/doctest.h>

#include <random>

#include "models/rcu.h"
#include "models/softirq.h"

using namespace slubsim;

TEST_CASE("rcu: callbacks queued during one grace period become ready together at the end of the next") {
  const Time g = 1000;
  RcuQueue q;
  q.init(2, g);
  // Grace period 0 runs over [0, 1000): callbacks queued in it wait for period 1 to end.
  q.call_rcu(0, 0, {RcuCallback::FreeObject, 0, nullptr});
  q.call_rcu(0, 999, {RcuCallback::FreeObject, 0, nullptr});
  q.call_rcu(0, 1000, {RcuCallback::FreeObject, 0, nullptr});
  q.call_rcu(1, 1500, {RcuCallback::FreeObject, 0, nullptr});
  CHECK(q.ready_time(0, 0) == 2000);
  CHECK(q.ready_time(0, 1) == 2000);
  CHECK(q.ready_time(0, 2) == 3000);
  CHECK(q.ready_time(1, 0) == 3000);
  // A CPU sees its ready batch, oldest first, and nothing of another CPU's.
  CHECK_FALSE(q.ready(0, 1999));
  CHECK(q.ready(0, 2000));
  q.pop(0);
  CHECK(q.ready(0, 2000));
  q.pop(0);
  CHECK_FALSE(q.ready(0, 2999));
  CHECK_FALSE(q.ready(1, 2999));
  CHECK(q.ready(1, 3000));
}

TEST_CASE("rcu: with acceleration at the report, callbacks queued after a CPU reported wait one period more") {
  // Fixed periods of 4000 with ticks every 1000: a CPU reports at its second tick of a period.
  RcuQueue q;
  q.init(2, 4000, RcuBatchLimits{}, false, 1000);
  q.accelerate_at_report(2);
  q.call_rcu(0, 4100, {RcuCallback::FreeObject, 0, nullptr});  // before the report at 6000
  q.call_rcu(0, 5999, {RcuCallback::FreeObject, 0, nullptr});
  q.call_rcu(0, 6000, {RcuCallback::FreeObject, 0, nullptr});  // reported: k + 2
  q.call_rcu(0, 7999, {RcuCallback::FreeObject, 0, nullptr});
  q.call_rcu(0, 8000, {RcuCallback::FreeObject, 0, nullptr});  // next period, before its report
  CHECK(q.ready_time(0, 0) == 12000);
  CHECK(q.ready_time(0, 1) == 12000);
  CHECK(q.ready_time(0, 2) == 16000);
  CHECK(q.ready_time(0, 3) == 16000);
  CHECK(q.ready_time(0, 4) == 16000);
  // Without it, every callback of a period waits for the next one only.
  RcuQueue plain;
  plain.init(1, 4000, RcuBatchLimits{}, false, 1000);
  plain.call_rcu(0, 6000, {RcuCallback::FreeObject, 0, nullptr});
  CHECK(plain.ready_time(0, 0) == 12000);
  // A report tick past the period's end never comes: nothing waits longer.
  RcuQueue short_periods;
  short_periods.init(1, 1500, RcuBatchLimits{}, false, 1000);
  short_periods.accelerate_at_report(2);
  short_periods.call_rcu(0, 1400, {RcuCallback::FreeObject, 0, nullptr});
  CHECK(short_periods.ready_time(0, 0) == 3000);

  // Periods from ticks: the report is the modelled one.
  RcuQueue t;
  t.init(2, 1000, RcuBatchLimits{}, true);
  t.accelerate_at_report(2);
  auto& gp = t.grace_periods();
  t.call_rcu(0, 10, {RcuCallback::FreeObject, 0, nullptr});  // before CPU 0 reports: period 2
  CHECK_FALSE(gp.reported(0, 10));
  CHECK_FALSE(gp.tick(0, 1000, 1.0, 0.0));  // notices period 1
  CHECK_FALSE(gp.tick(0, 2000, 1.0, 0.0));  // reports it
  CHECK(gp.reported(0, 2100));
  CHECK_FALSE(gp.reported(1, 2100));
  t.call_rcu(0, 2100, {RcuCallback::FreeObject, 0, nullptr});  // after the report: period 3
  t.call_rcu(1, 2100, {RcuCallback::FreeObject, 0, nullptr});  // CPU 1 has not reported: 2
  for (int c : {1}) CHECK_FALSE(gp.tick(c, 3000, 1.0, 0.0));
  CHECK(gp.tick(1, 4000, 1.0, 0.0));  // period 1 ends
  CHECK_FALSE(gp.reported(0, 4000));  // a new period: nothing reported yet
  for (int c : {0, 1}) CHECK_FALSE(gp.tick(c, 5000, 1.0, 0.0));  // notice 2
  CHECK_FALSE(gp.tick(0, 6000, 1.0, 0.0));
  CHECK(gp.tick(1, 6000, 1.0, 0.0));  // period 2 ends
  CHECK(t.ready(1, 6000));
  CHECK(t.batch(0, 6000) == 1);  // the callback queued before the report, not the one after
  t.pop(0);
  CHECK_FALSE(t.ready(0, 6000));
  for (int c : {0, 1}) CHECK_FALSE(gp.tick(c, 7000, 1.0, 0.0));  // notice 3
  CHECK_FALSE(gp.tick(0, 8000, 1.0, 0.0));
  CHECK(gp.tick(1, 8000, 1.0, 0.0));  // period 3 ends
  CHECK(t.ready(0, 8000));
}

TEST_CASE("rcu: flood_history says when each CPU entered its flood, how many ended and the longest queue") {
  const Time g = 1000;
  RcuQueue q;
  q.init(3, g, RcuBatchLimits{.blimit = 10, .divisor = 7, .qhimark = 300, .qlowmark = 10, .flood_blimit = 1000});
  FloodHistory none = q.flood_history();
  CHECK(none.cpus == 0);
  CHECK(none.queue_peak == 0);
  CHECK(none.qhimark == 300);
  // CPU 0 passes qhimark with its 301st callback at t = 500, CPU 1 at t = 700; CPU 2 holds 50.
  for (int i = 0; i < 301; ++i) q.call_rcu(0, i < 300 ? 100 : 500, {RcuCallback::FreeObject, 0, nullptr});
  for (int i = 0; i < 320; ++i) q.call_rcu(1, i < 300 ? 100 : 700, {RcuCallback::FreeObject, 0, nullptr});
  for (int i = 0; i < 50; ++i) q.call_rcu(2, 100, {RcuCallback::FreeObject, 0, nullptr});
  FloodHistory h = q.flood_history();
  CHECK(h.cpus == 2);
  CHECK(h.first == 500);
  CHECK(h.last == 700);
  CHECK(h.exits == 0);
  CHECK(h.queue_peak == 320);
  // CPU 0 works its queue down to qlowmark: its flood ends; a second flood later does not move
  // the time of its first.
  CHECK(q.batch(0, 2000) == 301);
  for (int i = 0; i < 290; ++i) q.pop(0);
  q.batch_done(0);
  CHECK(q.flood_history().exits == 0);  // 11 left, above qlowmark
  q.pop(0);
  q.batch_done(0);
  CHECK(q.flood_history().exits == 1);
  for (int i = 0; i < 400; ++i) q.call_rcu(0, 2500, {RcuCallback::FreeObject, 0, nullptr});
  h = q.flood_history();
  CHECK(h.cpus == 2);
  CHECK(h.first == 500);
  CHECK(h.exits == 1);
  CHECK(h.queue_peak == 410);  // 10 left and 400 more
}

TEST_CASE("rcu: rcu_do_batch invokes max(blimit, ready >> divisor) per round, more in a callback flood") {
  const Time g = 1000;
  RcuQueue q;
  q.init(1, g, RcuBatchLimits{.blimit = 10, .divisor = 7, .qhimark = 3000, .qlowmark = 100, .flood_blimit = 1000});
  for (int i = 0; i < 2000; ++i) q.call_rcu(0, 0, {RcuCallback::FreeObject, 0, nullptr});
  CHECK(q.batch(0, 1999) == 0);         // nothing ready before the grace period ends
  CHECK(q.batch(0, 2000) == 15);        // 2000 >> 7
  for (int i = 0; i < 1990; ++i) q.pop(0);
  CHECK(q.batch(0, 2000) == 10);        // the floor
  for (int i = 0; i < 5; ++i) q.pop(0);
  CHECK(q.batch(0, 2000) == 5);         // no more than is ready
  // Past qhimark queued callbacks the CPU is in a flood: up to flood_blimit per round, until
  // the queue is down to qlowmark.
  for (int i = 0; i < 3000; ++i) q.call_rcu(0, 2500, {RcuCallback::FreeObject, 0, nullptr});
  CHECK(q.batch(0, 4000) == 1000);
  CHECK(q.invoked() == 1995);
  CHECK(q.invoked_in_flood() == 0);     // the first 1995 left before the queue passed qhimark
  for (int i = 0; i < 2904; ++i) q.pop(0);
  q.batch_done(0);
  CHECK(q.batch(0, 4000) == 101);       // still flooding: 101 left, all of them
  q.pop(0);
  q.batch_done(0);                      // 100 <= qlowmark: back to blimit
  CHECK(q.batch(0, 4000) == 10);
  CHECK(q.invoked() == 1995 + 2905);
  CHECK(q.invoked_in_flood() == 2905);  // every pop while the flood lasted, the last included
  q.pop(0);
  CHECK(q.invoked_in_flood() == 2905);  // out of the flood
  // rcu_resched_ns: a round of more than time_limit_above callbacks has a deadline.
  RcuQueue timed;
  timed.init(1, g, RcuBatchLimits{.blimit = 10, .time_limit = 3000, .time_limit_above = 100});
  CHECK(timed.batch_deadline(101, 500) == 3500);
  CHECK(timed.batch_deadline(100, 500) == kForever);
  CHECK(q.batch_deadline(5000, 500) == kForever);  // time_limit 0: none
  // No limit: everything that is ready.
  RcuQueue all;
  all.init(1, g);
  for (int i = 0; i < 50; ++i) all.call_rcu(0, 0, {RcuCallback::FreeObject, 0, nullptr});
  CHECK(all.batch(0, 2000) == 50);
}

TEST_CASE("softirq: ticks run rounds at irq exit, the rest waits for ksoftirqd after the task's slice") {
  const Time tick = 1000, slice = 3000;
  Softirq s;
  s.init(SoftirqLimits{.tick = tick, .restarts = 10, .max_time = 2000, .slice = slice, .place_lag = true, .delay_dequeue = true}, {0, -2500});
  using T = Softirq::Turn;
  // Between ticks the task goes on; the first point at or after a tick is the irq exit.
  CHECK(s.enter(0, 0) == T::IrqExit);
  s.leave(0, T::IrqExit, 10, false);
  CHECK(s.enter(0, 500) == T::None);
  CHECK(s.enter(0, 999) == T::None);
  CHECK(s.enter(0, 1000) == T::IrqExit);
  CHECK(s.enter(0, 1001) == T::None);  // one irq exit per tick
  // __do_softirq restarts while callbacks stay ready: at most 10 rounds, at most 2 ms.
  CHECK(s.irq_exit_more(1000, 1000, 0, true));
  CHECK(s.irq_exit_more(1000, 1500, 9, true));
  CHECK_FALSE(s.irq_exit_more(1000, 1500, 10, true));
  CHECK_FALSE(s.irq_exit_more(1000, 3000, 3, true));
  CHECK_FALSE(s.irq_exit_more(1000, 1500, 3, false));
  // Callbacks left: ksoftirqd wakes, and gets the CPU when the task's slice ends (slices from
  // 0 on CPU 0: at 3000), not before; ticks still run their irq exits meanwhile.
  s.leave(0, T::IrqExit, 1200, true);
  CHECK(s.ksoftirqd_runnable(0));
  CHECK(s.enter(0, 2000) == T::IrqExit);
  s.leave(0, T::IrqExit, 2100, true);
  CHECK(s.enter(0, 2999) == T::None);
  CHECK(s.enter(0, 3000) == T::Ksoftirqd);
  // ksoftirqd waited 1200..3000 (lag +900): less than half a slice, so it runs one slice,
  // then the task has a new slice.
  CHECK(s.ksoftirqd_lag(0) == 900);
  CHECK(s.ksoftirqd_more(0, 5999, true));
  CHECK_FALSE(s.ksoftirqd_more(0, 6000, true));
  CHECK_FALSE(s.ksoftirqd_more(0, 4000, false));
  s.leave(0, T::Ksoftirqd, 6000, true);  // still callbacks: it stays runnable
  CHECK(s.ksoftirqd_lag(0) == -600);     // ran 3000: lag fell by 1500
  CHECK(s.ksoftirqd_runnable(0));
  CHECK(s.enter(0, 6500) == T::None);
  CHECK(s.enter(0, 7000) == T::IrqExit);
  s.leave(0, T::IrqExit, 7100, true);
  CHECK(s.enter(0, 7999) == T::None);
  CHECK(s.enter(0, 8000) == T::IrqExit);
  s.leave(0, T::IrqExit, 8100, true);
  CHECK(s.enter(0, 8999) == T::None);
  CHECK(s.enter(0, 9000) == T::Ksoftirqd);
  CHECK(s.ksoftirqd_lag(0) == 900);       // -600 + 3000 / 2
  s.leave(0, T::Ksoftirqd, 9400, false);  // drained: it sleeps, eligible, keeping its lag
  CHECK_FALSE(s.ksoftirqd_runnable(0));
  CHECK(s.ksoftirqd_lag(0) == 700);
  CHECK(s.enter(0, 12000) == T::IrqExit);
  // Woken again (12100) with that lag (PLACE_LAG), it makes the task ineligible and preempts
  // it at its next point, inside the task's slice (from 9400, to 12400).
  s.leave(0, T::IrqExit, 12100, true);
  CHECK(s.enter(0, 12100) == T::Ksoftirqd);
  CHECK(s.ksoftirqd_lag(0) == 700);
  s.leave(0, T::Ksoftirqd, 12300, false);
  CHECK(s.ksoftirqd_lag(0) == 600);
  CHECK(s.enter(0, 13000) == T::IrqExit);
  s.leave(0, T::IrqExit, 13100, true);
  CHECK(s.enter(0, 13100) == T::Ksoftirqd);  // lag 600 left: at once again
  s.leave(0, T::Ksoftirqd, 14400, false);    // ran 1300: lag -50, a debt (DELAY_DEQUEUE)
  CHECK(s.ksoftirqd_lag(0) == -50);
  // Woken at 15100 it has earned the debt back (700 / 2) and no more (DELAY_ZERO), so it waits
  // for the task's slice (from 14400) to end at the 18000 tick.
  CHECK(s.enter(0, 15000) == T::IrqExit);
  s.leave(0, T::IrqExit, 15100, true);
  CHECK(s.ksoftirqd_lag(0) == 0);
  CHECK(s.enter(0, 15101) == T::None);
  CHECK(s.enter(0, 16000) == T::IrqExit);
  s.leave(0, T::IrqExit, 16100, true);
  CHECK(s.enter(0, 17000) == T::IrqExit);
  s.leave(0, T::IrqExit, 17100, true);
  CHECK(s.enter(0, 18000) == T::Ksoftirqd);
  CHECK(s.ksoftirqd_lag(0) == 1450);  // waited 15100..18000
  // It sleeps at 18400 with lag 1250, so its next wakeup preempts at once; its run is one slice
  // (longer than 2 x 1250): from 19100 to the first tick after 22100.
  s.leave(0, T::Ksoftirqd, 18400, false);
  CHECK(s.enter(0, 19000) == T::IrqExit);
  s.leave(0, T::IrqExit, 19100, true);
  CHECK(s.enter(0, 19100) == T::Ksoftirqd);
  CHECK(s.ksoftirqd_more(0, 22000, true));
  CHECK_FALSE(s.ksoftirqd_more(0, 23000, true));
  s.leave(0, T::Ksoftirqd, 23000, true);
  CHECK(s.ksoftirqd_lag(0) == -700);  // 1250 - 3900 / 2
  // A debt outlasts a slice end: ksoftirqd runs at the first slice end where it is eligible.
  Softirq debt;
  debt.init(SoftirqLimits{.tick = tick, .restarts = 10, .max_time = 2000, .slice = 2000, .place_lag = true, .delay_dequeue = true}, {0});
  CHECK(debt.enter(0, 0) == T::IrqExit);
  debt.leave(0, T::IrqExit, 1900, true);
  CHECK(debt.enter(0, 2001) == T::Ksoftirqd);  // lag 50: one slice, to the tick at 5000
  CHECK(debt.ksoftirqd_more(0, 4999, true));
  debt.leave(0, T::Ksoftirqd, 5000, false);    // drained: it blocks with lag 50 - 2999 / 2
  CHECK(debt.ksoftirqd_lag(0) == -1449);
  CHECK(debt.enter(0, 6000) == T::IrqExit);
  debt.leave(0, T::IrqExit, 6100, true);       // woken with -1449 + 1100 / 2 left
  CHECK(debt.ksoftirqd_lag(0) == -899);
  CHECK(debt.enter(0, 7000) == T::IrqExit);    // the task's slice ends, ksoftirqd still owes 449
  CHECK(debt.enter(0, 8000) == T::IrqExit);    // the task's new slice runs from 7000
  CHECK(debt.enter(0, 9000) == T::Ksoftirqd);
  CHECK(debt.ksoftirqd_lag(0) == 551);
  // Before 6.12 (no DELAY_DEQUEUE) the debt is kept whole while it sleeps.
  Softirq kept;
  kept.init(SoftirqLimits{.tick = tick, .restarts = 10, .max_time = 2000, .slice = 2000, .place_lag = true}, {0});
  CHECK(kept.enter(0, 0) == T::IrqExit);
  kept.leave(0, T::IrqExit, 1900, true);
  CHECK(kept.enter(0, 2001) == T::Ksoftirqd);
  kept.leave(0, T::Ksoftirqd, 5000, false);
  CHECK(kept.enter(0, 20000) == T::IrqExit);
  kept.leave(0, T::IrqExit, 20100, true);
  CHECK(kept.ksoftirqd_lag(0) == -1449);
  // Without PLACE_LAG (sched_features NO_PLACE_LAG) it wakes at the average, with no lag, and
  // waits for the task's slice to end however much lag it slept with.
  Softirq nolag;
  nolag.init(SoftirqLimits{.tick = tick, .restarts = 10, .max_time = 2000, .slice = slice}, {0});
  CHECK(nolag.enter(0, 1000) == T::IrqExit);
  nolag.leave(0, T::IrqExit, 1200, true);
  CHECK(nolag.enter(0, 3000) == T::Ksoftirqd);  // lag 900
  nolag.leave(0, T::Ksoftirqd, 3200, false);    // sleeps with 800
  CHECK(nolag.ksoftirqd_lag(0) == 800);
  CHECK(nolag.enter(0, 4000) == T::IrqExit);
  nolag.leave(0, T::IrqExit, 4100, true);
  CHECK(nolag.ksoftirqd_lag(0) == 0);
  CHECK(nolag.enter(0, 4101) == T::None);
  CHECK(nolag.enter(0, 5000) == T::IrqExit);
  nolag.leave(0, T::IrqExit, 5100, true);
  CHECK(nolag.enter(0, 6000) == T::IrqExit);  // the task's slice from 3200 ends at 6200
  nolag.leave(0, T::IrqExit, 6100, true);
  CHECK(nolag.enter(0, 7000) == T::Ksoftirqd);
  // Lag is clamped to two slices either way (update_entity_lag).
  Softirq w;
  w.init(SoftirqLimits{.tick = tick, .restarts = 10, .max_time = 2000, .slice = slice}, {0});
  w.leave(0, T::IrqExit, 0, true);
  // Switched to at every tick from 3000 on, it never gives the CPU back: the credit for its
  // wait since 0 is counted at each switch and stops at the clamp.
  for (Time t = 1000; t < 40000; t += 1000) w.enter(0, t);
  CHECK(w.ksoftirqd_lag(0) == 2 * slice);
  // CPU 1's task started its slice at -2500: its slice ends at 500, but the switch waits for
  // the tick that finds it used up (1000), in step with every other CPU's ticks.
  CHECK(s.enter(1, 0) == T::IrqExit);
  s.leave(1, T::IrqExit, 100, true);
  CHECK(s.enter(1, 450) == T::None);
  CHECK(s.enter(1, 500) == T::None);
  CHECK(s.enter(1, 1000) == T::Ksoftirqd);
  // ksoftirqd (woken at 100, lag 450) gets the CPU at 1000; its slice ends at the first tick
  // after 4000.
  CHECK(s.ksoftirqd_lag(1) == 450);
  CHECK(s.ksoftirqd_more(1, 3999, true));
  CHECK_FALSE(s.ksoftirqd_more(1, 4000, true));
  // If the wakeup preempts the task, ksoftirqd runs at its next preemption point.
  Softirq eager;
  eager.init(SoftirqLimits{.tick = tick, .restarts = 10, .max_time = 2000, .slice = slice, .wakeup_preempts = true}, {0});
  CHECK(eager.enter(0, 1000) == T::IrqExit);
  eager.leave(0, T::IrqExit, 1200, true);
  CHECK(eager.enter(0, 1201) == T::Ksoftirqd);
  eager.leave(0, T::Ksoftirqd, 1500, false);
  CHECK(eager.enter(0, 1600) == T::None);
  // An irq exit that runs past the next ticks (a callback flood's 3 ms rcu_do_batch): those
  // ticks ran no softirqs (in_interrupt), so the task goes on to the first tick after it ended.
  Softirq longexit;
  longexit.init(SoftirqLimits{.tick = tick, .restarts = 10, .max_time = 2000, .slice = slice}, {0});
  CHECK(longexit.enter(0, 1000) == T::IrqExit);
  longexit.leave(0, T::IrqExit, 3500, false);
  CHECK(longexit.enter(0, 3501) == T::None);
  CHECK(longexit.enter(0, 3999) == T::None);
  CHECK(longexit.enter(0, 4000) == T::IrqExit);
  // tick 0: one round at every point, no ksoftirqd.
  Softirq plain;
  plain.init(SoftirqLimits{}, {0});
  CHECK(plain.enter(0, 0) == T::Round);
  CHECK(plain.enter(0, 1) == T::Round);
  plain.leave(0, T::Round, 2, true);
  CHECK_FALSE(plain.ksoftirqd_runnable(0));
}

TEST_CASE("rcu: grace periods from ticks end when every busy CPU has noticed and then reported") {
  RcuQueue q;
  q.init(3, 1000, RcuBatchLimits{}, true);
  auto& gp = q.grace_periods();
  gp.set_busy({0, 1});  // CPU 2 is idle: it never holds a grace period up
  q.call_rcu(0, 10, {RcuCallback::FreeObject, 0, nullptr});  // waits for grace period 2
  CHECK(gp.current(10) == 1);
  // A tick first notices the grace period; only a later tick can report, and only with the
  // draw under the chance of being outside slow paths, callbacks and spinning.
  CHECK_FALSE(gp.tick(0, 1000, 1.0, 0.0));
  CHECK_FALSE(gp.tick(0, 2000, 0.3, 0.5));  // in a slow path at the tick
  CHECK_FALSE(gp.tick(0, 3000, 0.3, 0.2));  // reported
  CHECK_FALSE(gp.tick(0, 4000, 1.0, 0.0));  // once per grace period
  CHECK_FALSE(gp.tick(2, 4000, 1.0, 0.0));  // idle CPUs do not count
  CHECK_FALSE(gp.tick(1, 4000, 1.0, 0.0));  // notices
  CHECK_FALSE(q.ready(0, 4500));
  CHECK(gp.tick(1, 5000, 1.0, 0.0));        // the last busy CPU: grace period 1 ends
  CHECK(gp.completed(5000) == 1);
  CHECK(gp.ended() == 1);
  CHECK_FALSE(q.ready(0, 5000));            // queued during 1, it waits for 2
  for (int c : {0, 1}) CHECK_FALSE(gp.tick(c, 6000, 1.0, 0.0));  // notice 2
  CHECK_FALSE(gp.tick(0, 7000, 1.0, 0.0));
  CHECK(gp.tick(1, 7000, 1.0, 0.0));
  CHECK(q.ready(0, 7000));                  // time does not matter, grace periods do
  CHECK(q.batch(0, 0) == 1);
  // With fixed grace periods the ticks change nothing.
  RcuQueue f;
  f.init(1, 1000);
  f.call_rcu(0, 10, {RcuCallback::FreeObject, 0, nullptr});
  CHECK_FALSE(f.ready(0, 1999));
  CHECK(f.ready(0, 2000));
}

TEST_CASE("rcu: with idle CPUs a grace period from ticks lasts until the kthread's first forcing scan") {
  // 1 ms ticks, first scan 3 jiffies after the start (jiffies_till_first_fqs at HZ=1000).
  RcuQueue q;
  q.init(3, 1000, RcuBatchLimits{}, true, 1000, 3000);
  auto& gp = q.grace_periods();
  gp.set_busy({0, 1});  // CPU 2 is idle: only the scan at 3000 reports it
  q.call_rcu(0, 10, {RcuCallback::FreeObject, 0, nullptr});  // waits for grace period 2
  for (int c : {0, 1}) CHECK_FALSE(gp.tick(c, 1000, 1.0, 0.0));  // notice 1
  CHECK_FALSE(gp.tick(0, 2000, 1.0, 0.0));
  CHECK(gp.tick(1, 2000, 1.0, 0.0));  // the busy CPUs have all reported...
  CHECK(gp.completed(2999) == 0);     // ...but the idle one is reported by the scan
  CHECK(gp.current(2999) == 1);
  CHECK(gp.completed(3000) == 1);     // rcu_gp_cleanup, and grace period 2 starts at 3000
  CHECK(gp.current(3000) == 2);
  CHECK_FALSE(gp.tick(0, 2500, 1.0, 0.0));  // a tick while the scan is awaited changes nothing
  // Queued after period 2 started: it waits for 3, not 2.
  q.call_rcu(1, 3100, {RcuCallback::FreeObject, 0, nullptr});
  // Period 2 started at 3000: its scan comes at 6000; the busy CPUs report by 5000.
  for (int c : {0, 1}) CHECK_FALSE(gp.tick(c, 4000, 1.0, 0.0));  // notice 2
  CHECK_FALSE(gp.tick(0, 5000, 1.0, 0.0));
  CHECK(gp.tick(1, 5000, 1.0, 0.0));
  CHECK_FALSE(q.ready(0, 5999));
  CHECK(q.ready(0, 6000));
  CHECK_FALSE(q.ready(1, 6000));
  CHECK(gp.ended() == 1);  // counted when the next tick sees the end
  // A busy CPU that reports after the scan ends the period itself: period 3 starts at 6000, its
  // scan is at 9000, and CPU 1 reports late, at 11000.
  for (int c : {0, 1}) CHECK_FALSE(gp.tick(c, 7000, 1.0, 0.0));
  CHECK(gp.ended() == 2);
  CHECK_FALSE(gp.tick(0, 8000, 1.0, 0.0));
  CHECK_FALSE(gp.tick(1, 9000, 0.5, 0.9));  // in a slow path at the tick
  CHECK_FALSE(gp.tick(1, 10000, 0.5, 0.9));
  CHECK_FALSE(q.ready(1, 10999));
  CHECK(gp.tick(1, 11000, 0.5, 0.1));
  CHECK(q.ready(1, 11000));
  // No idle CPU: the period ends at the last report, as without a scan.
  RcuQueue full;
  full.init(2, 1000, RcuBatchLimits{}, true, 1000, 3000);
  full.grace_periods().set_busy({0, 1});
  for (int c : {0, 1}) CHECK_FALSE(full.grace_periods().tick(c, 1000, 1.0, 0.0));
  CHECK_FALSE(full.grace_periods().tick(0, 2000, 1.0, 0.0));
  CHECK(full.grace_periods().tick(1, 2000, 1.0, 0.0));
  CHECK(full.grace_periods().completed(2000) == 1);
}

TEST_CASE("rcu: holdouts are forced at jiffies_to_sched_qs, or from the first scan in callback overload") {
  // 1 ms ticks, first scan 3 jiffies after the start, forced after 10 ms; overload at 3 callbacks.
  RcuQueue q;
  q.init(2, 1000, RcuBatchLimits{}, true, 1000, 3000, GracePeriodForcing{10000, 3});
  auto& gp = q.grace_periods();
  gp.set_busy({0, 1});
  // Non-preemptible RCU in the kernel: a tick almost never lands in user space (chance 0 here).
  for (int c : {0, 1}) CHECK_FALSE(gp.tick(c, 1000, 0.0, 0.5));  // notice 1
  for (int t = 2000; t < 10000; t += 1000)
    for (int c : {0, 1}) CHECK_FALSE(gp.tick(c, t, 0.0, 0.5));   // nobody reports
  CHECK(gp.completed(9999) == 0);
  CHECK_FALSE(gp.tick(0, 10000, 0.0, 0.5));  // rcu_urgent_qs: forced at the first tick from 10000
  CHECK(gp.tick(1, 10000, 0.0, 0.5));
  CHECK(gp.completed(10000) == 1);
  CHECK(gp.ended_overloaded() == 0);
  // A CPU holding the overload mark at the next start: that period is forced from its first scan.
  for (int i = 0; i < 3; ++i) q.call_rcu(0, 10100, {RcuCallback::FreeObject, 0, nullptr});
  for (int c : {0, 1}) CHECK_FALSE(gp.tick(c, 11000, 0.0, 0.5));  // notice 2 (started at 10000, not overloaded)
  for (int c : {0, 1}) CHECK_FALSE(gp.tick(c, 19000, 0.0, 0.5));
  CHECK_FALSE(gp.tick(0, 20000, 0.0, 0.5));
  CHECK(gp.tick(1, 20000, 0.0, 0.5));        // period 2 forced at 10 ms; period 3 starts overloaded
  for (int c : {0, 1}) CHECK_FALSE(gp.tick(c, 21000, 0.0, 0.5));  // notice 3
  CHECK_FALSE(gp.tick(0, 22000, 0.0, 0.5));  // before the first scan (23000): not forced
  CHECK_FALSE(gp.tick(0, 23000, 0.0, 0.5));
  CHECK(gp.tick(1, 23000, 0.0, 0.5));        // from the scan on, every holdout's tick reports
  CHECK(gp.completed(23000) == 3);
  // Period 4 started (rcu_gp_init) before the three callbacks were invoked: overloaded too, as
  // rcu_state.cbovld is taken from the marks at the previous period's cleanup.
  CHECK(q.ready(0, 23000));
  for (int i = 0; i < 3; ++i) q.pop(0);
  for (int c : {0, 1}) CHECK_FALSE(gp.tick(c, 24000, 0.0, 0.5));  // notice 4; 3 is counted
  CHECK(gp.ended_overloaded() == 1);
  CHECK_FALSE(gp.tick(0, 26000, 0.0, 0.5));
  CHECK(gp.tick(1, 26000, 0.0, 0.5));        // forced from its first scan at 26000
  // Period 5 starts with no CPU at the mark: forced only at 26000 + 10000.
  for (int c : {0, 1}) CHECK_FALSE(gp.tick(c, 27000, 0.0, 0.5));
  CHECK_FALSE(gp.tick(0, 29000, 0.0, 0.5));
  CHECK_FALSE(gp.tick(1, 29000, 0.0, 0.5));
  CHECK_FALSE(gp.tick(0, 36000, 0.0, 0.5));
  CHECK(gp.tick(1, 36000, 0.0, 0.5));
  CHECK(gp.completed(36000) == 5);
  CHECK(gp.ended_overloaded() == 2);
}

TEST_CASE("rcu: the ready count follows queueing, pops and time like a scan of the whole queue") {
  const Time g = 1000;
  RcuQueue q;
  q.init(2, g);  // blimit 0: batch() is the number ready
  std::mt19937_64 rng(5);
  Time now[2] = {0, 0};
  for (int step = 0; step < 20000; ++step) {
    const int cpu = static_cast<int>(rng() % 2);
    now[cpu] += static_cast<Time>(rng() % 300);
    switch (rng() % 3) {
      case 0: q.call_rcu(cpu, now[cpu], {RcuCallback::FreeObject, 0, nullptr}); break;
      case 1: if (!q.pending(cpu).empty()) q.pop(cpu); break;
      default: {
        std::size_t scan = 0;
        for (std::size_t i = 0; i < q.pending(cpu).size(); ++i) scan += q.ready_time(cpu, i) <= now[cpu];
        REQUIRE(q.batch(cpu, now[cpu]) == scan);
      }
    }
  }
}
