// The "why" report (sim/run/why.h): where each task's time in the window goes.
#include <doctest/doctest.h>

#include <cmath>
#include <regex>
#include <string>

#include "helpers.h"
#include "models/immediate.h"
#include "sim/run/job.h"
#include "sim/run/report.h"
#include "sim/run/why.h"

using namespace slubsim;
using namespace slubsim::test;

namespace {

JobRequest small(const std::string& workload, const std::string& kernel, const std::string& nr_task) {
  // Warm-up past the 10 ms grace period: RCU callbacks run inside the window.
  JobRequest r = job_request("small-2s-8c", workload, kernel, nr_task, "2ms", "12ms");
  r.jobs = 2;
  return r;
}

double get(const json& s, const std::string& key) { return s.contains(key) ? s[key].get<double>() : 0.0; }

// Every task's categories add up to the window, exactly; lock lines add up to the tasks' waits.
void check_accounting(const RunResult& r) {
  REQUIRE(r.task_time.size() == static_cast<std::size_t>(r.nr_task));
  Time waits = 0, locks = 0;
  for (const auto& t : r.task_time) {
    CHECK(t.total() == r.window);
    waits += t.lock_wait;
  }
  for (const auto& l : r.locks) locks += l.waited.slab + l.waited.nonslab;
  CHECK(locks == waits);
  WhyProfile p = why_profile(r);
  Time sum = 0;
  for (const auto& l : p.lines) sum += l.time;
  CHECK(sum == p.task_time);
  CHECK(p.task_time == r.window * r.nr_task);
}

// The why.*.percent keys of a result sum to 100 within their rounding (0.005 each).
void check_percent_keys(const json& s) {
  double sum = 0;
  int n = 0;
  for (auto it = s.begin(); it != s.end(); ++it) {
    const std::string& k = it.key();
    // The means over rows: why.<category>.percent, not the per-row why.<N>.* keys.
    const bool per_row = k.size() > 4 && k[4] >= '0' && k[4] <= '9';
    if (k.rfind("why.", 0) == 0 && !per_row && k.size() > 8 && k.substr(k.size() - 8) == ".percent") {
      sum += it.value().get<double>();
      ++n;
    }
  }
  CHECK(n >= 2);
  CHECK(std::abs(sum - 100.0) <= 0.005 * n + 1e-9);
}

}  // namespace

TEST_CASE("why: an account scope only makes the account more specific, and restores it") {
  ImmediateShared shared;
  ImmediateExec e(shared, 0, 0);
  e.spend(10);
  {
    AccountScope fast(e, Account::SlabFast);
    e.spend(20);
    {
      AccountScope slow(e, Account::SlabSlow);
      e.spend(30);
      AccountScope fast_again(e, Account::SlabFast);  // inside a slow path: still slow
      e.spend(5);
    }
    e.spend(1);
  }
  {
    AccountScope rcu(e, Account::Rcu);
    AccountScope slow(e, Account::SlabSlow);  // a free done by an RCU callback stays RCU
    e.spend(7);
  }
  CHECK(e.account() == Account::NonSlab);
  CHECK(e.accounted(Account::NonSlab) == 10);
  CHECK(e.accounted(Account::SlabFast) == 21);
  CHECK(e.accounted(Account::SlabSlow) == 35);
  CHECK(e.accounted(Account::Rcu) == 7);
  // Time is counted by interval of the grid; a window is the sum of its intervals.
  const Grid g = Grid::window(e.now() + 2, e.now() + 5);
  e.set_grid(&g);
  e.spend(4);  // 2 inside
  e.spend(4);  // 1 inside
  CHECK(e.accounted(Account::NonSlab, {1, 2}) == 3);
  CHECK(e.accounted(Account::NonSlab, {2, 3}) == 3);
  CHECK(e.accounted(Account::NonSlab) == 18);
}

TEST_CASE("why: every kernel's categories sum to each task's time in the window") {
  for (const std::string kernel : {"v6.7", "v6.17", "v6.19", "v7.0"}) {
    for (const std::string w : {"mmap2", "kfree-rcu", "cross-free"}) {
      CAPTURE(kernel);
      CAPTURE(w);
      Job job = resolve_job(small(w, kernel, "2,8"));
      JobResult res = run_job(job, {});
      for (const auto& r : res.runs[0][0]) check_accounting(r);
      json s = stdout_stats(job, res);
      check_percent_keys(s);
      CHECK(get(s, "why.nonslab.percent") > 0);
      CHECK(get(s, "why.slab.fastpath.ns_per_op") > 0);
      CHECK(get(s, "why.slab.slowpath.ns_per_op") > 0);
    }
  }
}

TEST_CASE("why: deferred frees show up as RCU callback time") {
  JobRequest r = small("kfree-rcu", "v6.17", "8");
  // Grace periods of 1 ms: the batches of several periods come back inside the window.
  r.sets.push_back("costs.rcu.grace_period_us=1000");
  Job job = resolve_job(r);
  json s = stdout_stats(job, run_job(job, {}));
  CHECK(get(s, "why.rcu.callbacks.percent") > 0);
}

TEST_CASE("why: a grace period's batch too big for the tick's irq exits goes to ksoftirqd") {
  // About 2 callbacks per mmap2 operation over a 4 ms grace period: thousands per CPU per
  // batch, far more than 10 rounds of max(10, ready >> 7) at each 1 ms tick, so ksoftirqd runs
  // the rest in its slices; with the tick model off (tick_us 0) every callback runs at the
  // iteration boundaries and ksoftirqd never runs.
  for (bool ticks : {true, false}) {
    CAPTURE(ticks);
    JobRequest r = small("mmap2", "v6.17", "8");
    r.duration = "12ms";
    r.warmup = "20ms";
    if (!ticks) r.sets.push_back("costs.rcu.tick_us=0");
    Job job = resolve_job(r);
    JobResult res = run_job(job, {});
    for (const auto& run : res.runs[0][0]) check_accounting(run);
    json s = stdout_stats(job, res);
    CHECK(get(s, "why.rcu.callbacks.percent") > 0);
    if (ticks) CHECK(get(s, "why.rcu.ksoftirqd.percent") > get(s, "why.rcu.callbacks.percent"));
    else CHECK(get(s, "why.rcu.ksoftirqd.percent") == 0);
    // Each ksoftirqd run is two context switches; at most one run per CPU per tick.
    const auto& row = res.runs[0][0][0];
    const double cs = get(s, "sched.8.ksoftirqd_context_switches_per_sec");
    CHECK(cs == doctest::Approx(2.0 * static_cast<double>(row.ksoftirqd_runs) / to_sec(row.window)).epsilon(0.001));
    if (ticks) {
      CHECK(row.ksoftirqd_runs > 0);
      CHECK(cs <= 2.0 * 8 * 1000);
    } else {
      CHECK(cs == 0);
    }
  }
}

TEST_CASE("why: grace periods from ticks end, free the callbacks and report their length") {
  JobRequest r = small("mmap2", "v6.17", "8");
  r.duration = "12ms";
  r.warmup = "20ms";
  r.sets.push_back("costs.rcu.grace_period_model=ticks");
  Job job = resolve_job(r);
  JobResult res = run_job(job, {});
  json s = stdout_stats(job, res);
  const auto& row = res.runs[0][0][0];
  CHECK(row.grace_periods > 0);
  // At least two ticks per grace period per CPU (notice, then report).
  CHECK(get(s, "rcu.8.grace_period_us") >= 2000);
  CHECK(get(s, "rcu.8.grace_period_us") == doctest::Approx(to_us(row.window) / static_cast<double>(row.grace_periods)).epsilon(0.01));
  CHECK(get(s, "why.rcu.callbacks.percent") + get(s, "why.rcu.ksoftirqd.percent") > 0);
}

TEST_CASE("why: a lock-heavy stand-in spends its time waiting for the lock, by lock class") {
  auto m = preset("small-2s-8c");
  auto c = default_costs();
  // 8 tasks on one global lock held 1 us after 1 us of their own: mostly waiting.
  auto r = run_program(m, c, lock_program(1 * kUs, 1 * kUs, false, Scope::Global), 8, 2 * kMs);
  check_accounting(r);
  json s = lkp_run_stats({r}, Mode::Process);
  check_percent_keys(s);
  CHECK(get(s, "why.nonslab.wait.test_lock.percent") > 50);
  CHECK(get(s, "why.nonslab.wait.test_lock.percent") > get(s, "why.nonslab.percent"));
  // Waits outside the allocator are per class, never per instance, and never slab lines.
  for (auto it = s.begin(); it != s.end(); ++it) CHECK(it.key().rfind("why.wait.", 0) != 0);
  // Close to lock_stat's wait total (which counts whole waits that start in the window).
  Time stat_wait = lock_total(r, "test_lock").wait_total;
  Time why_wait = 0;
  for (const auto& l : r.locks) why_wait += l.waited.nonslab;
  CHECK(static_cast<double>(why_wait) == doctest::Approx(static_cast<double>(stat_wait)).epsilon(0.05));
}

TEST_CASE("why: a sleeping rwsem waiter is idle, not waiting") {
  auto m = preset("small-2s-8c");
  auto c = default_costs();
  Program p = lock_program(1 * kUs, 500 * kNs, true, Scope::Mm);
  p.locks[0].kind = LockKind::Rwsem;
  p.steps[1].kind = LockKind::Rwsem;
  Options sleep;
  sleep.rwsem_spin_on_owner = false;
  auto r = run_program(m, c, p, 8, 2 * kMs, Mode::Thread, 1, sleep);
  check_accounting(r);
  json s = lkp_run_stats({r}, Mode::Thread);
  CHECK(get(s, "why.idle.percent") > 50);
  CHECK(get(s, "why.idle.percent") == doctest::Approx(r.idle_pct).epsilon(0.01));
  CHECK(get(s, "why.nonslab.wait.test_lock.percent") == 0);
  auto spun = run_program(m, c, p, 8, 2 * kMs, Mode::Thread, 1, {});
  json t = lkp_run_stats({spun}, Mode::Thread);
  CHECK(get(t, "why.idle.percent") == 0);
  CHECK(get(t, "why.nonslab.wait.test_lock.percent") > 50);
}

TEST_CASE("why: a sheaves kernel shows barn_lock lines per node; the table names the hottest") {
  JobRequest req = small("sheaf-burst", "v7.0", "8");
  req.sheaf_capacity = "32";  // bursts bigger than main + spare: every iteration visits the barn
  Job job = resolve_job(req);
  JobResult res = run_job(job, {});
  check_accounting(res.runs[0][0][0]);
  json s = stdout_stats(job, res);
  CHECK(get(s, "why.wait.maple_node.barn_lock.node0.percent") > 0);
  CHECK(get(s, "why.wait.maple_node.barn_lock.node1.percent") > 0);
  CHECK(get(s, "why.slab.slowpath.percent") > 0);
  std::string table = format_why(job, res);
  // One table per task count, the variants side by side (a letter and a legend for a long label).
  CHECK(table.find("A = v7.0_sheaf_capacity=32") != std::string::npos);
  CHECK(table.find("why: 8 tasks") != std::string::npos);
  CHECK(table.find("wait.maple_node.barn_lock.node0") != std::string::npos);
  CHECK(table.find("native_queued_spin_lock_slowpath") != std::string::npos);
  CHECK(table.find("(maple_node.barn_lock node") != std::string::npos);
}

TEST_CASE("why: a 6.17 cpu-partial kernel shows no barn lines") {
  Job job = resolve_job(small("sheaf-burst", "v6.17", "8"));
  json s = stdout_stats(job, run_job(job, {}));
  for (auto it = s.begin(); it != s.end(); ++it) CHECK(it.key().find("barn_lock") == std::string::npos);
}

TEST_CASE("why: the load on a lock, per instance and per class, over a row's runs") {
  // Two runs of 1 ms windows; the class has two instances, node0 busy, node1 quiet.
  auto run = [](std::uint64_t ops, std::uint64_t acq0, Time hold0, Time handoff0) {
    RunResult r;
    r.window = 1000 * kUs;
    r.task_ops = {ops / 2, ops - ops / 2};
    LockReport a;
    a.cls = "c.list_lock";
    a.instance = "node0";
    a.stat.acquisitions = acq0;
    a.stat.contentions = acq0 / 2;
    a.stat.handoffs = acq0 / 2;
    a.stat.hold_total = hold0;
    a.stat.handoff_total = handoff0;
    LockReport b = a;
    b.instance = "node1";
    b.stat = LockStat{};
    b.stat.acquisitions = 10;
    b.stat.hold_total = 10 * kUs;
    r.locks = {a, b};
    return r;
  };
  const RunResult r1 = run(1000, 100, 300 * kUs, 200 * kUs);
  const RunResult r2 = run(3000, 300, 500 * kUs, 400 * kUs);
  const std::vector<const RunResult*> rows = {&r1, &r2};

  const LockLoad one = lock_load(rows, "c.list_lock", "node0");
  CHECK(one.instances == 1);
  CHECK(one.acquisitions == 400);
  CHECK(one.ops == 4000);
  CHECK(one.per_op() == doctest::Approx(0.1));
  CHECK(one.handoffs == 200);
  // (300 + 200 + 500 + 400) us busy over two 1 ms windows.
  CHECK(one.busy() == doctest::Approx(0.7));

  const LockLoad all = lock_load(rows, "c.list_lock", "");
  CHECK(all.instances == 2);
  CHECK(all.acquisitions == 420);
  // The class: the busy share is the mean over its two instances.
  CHECK(all.busy() == doctest::Approx((1400.0 + 20.0) / (2 * 2000.0)));

  const LockLoad none = lock_load(rows, "other.lock", "node0");
  CHECK(none.acquisitions == 0);
  CHECK(none.busy() == 0.0);
}

TEST_CASE("why: the RCU callbacks' line, over a row's runs") {
  // Two runs of 1 ms windows with 4 tasks each.
  auto run = [](std::uint64_t ops, std::uint64_t callbacks, std::uint64_t flood, std::uint64_t runs, Time irq, Time ksoft) {
    RunResult r;
    r.window = 1000 * kUs;
    r.task_ops = {ops, 0, 0, 0};
    r.task_time.resize(4);
    r.task_time[0].busy[static_cast<int>(Account::Rcu)] = irq;
    r.task_time[1].busy[static_cast<int>(Account::Ksoftirqd)] = ksoft;
    r.rcu_callbacks = callbacks;
    r.rcu_flood_callbacks = flood;
    r.ksoftirqd_runs = runs;
    return r;
  };
  const RunResult r1 = run(1000, 1000, 0, 2, 100 * kUs, 300 * kUs);
  const RunResult r2 = run(3000, 3000, 1000, 6, 100 * kUs, 500 * kUs);
  const CallbackLoad c = callback_load({&r1, &r2});
  CHECK(c.per_op() == doctest::Approx(1.0));
  CHECK(c.flood_share() == doctest::Approx(0.25));
  CHECK(c.ksoftirqd_share() == doctest::Approx(0.8));     // 800 of 1000 us
  CHECK(c.runs_per_cpu_sec() == doctest::Approx(1000.0));  // 8 runs over 8 task-CPU ms
  CHECK(c.mean_run() == 100 * kUs);
  CHECK(callback_load({}).per_op() == 0.0);
  CHECK(callback_load({}).mean_run() == 0);

  // A real run: every callback the window invoked is counted once; mmap2 on 6.17 queues one
  // call_rcu per maple node it frees, so over a window the counts agree to the queue's drift.
  JobRequest req = small("mmap2", "v6.17", "8");
  req.duration = "12ms";
  req.warmup = "20ms";
  Job job = resolve_job(req);
  JobResult res = run_job(job, {});
  json s = stdout_stats(job, res);
  CHECK(get(s, "rcu.8.callbacks_per_op") > 0);
  CHECK(get(s, "rcu.8.callbacks_per_op") == doctest::Approx(get(s, "workload_ops.maple_node.kfree_rcu")).epsilon(0.25));
  CHECK(get(s, "rcu.8.flood_callback_percent") >= 0);
  const RunResult& row = res.runs[0][0][0];
  CHECK(row.rcu_flood_callbacks <= row.rcu_callbacks);
  CHECK(get(s, "sched.8.ksoftirqd_run_us") > 0);
  const std::string why = format_why(job, res);
  CHECK(std::regex_search(why, std::regex("\n    rcu callbacks: [0-9.]+ per op; [0-9]+% of their time \\(spin apart\\) in "
                                          "ksoftirqd, [0-9]+% at tick irq exits; ksoftirqd got a CPU [0-9.]+ times per task "
                                          "CPU per second, [0-9.]+ ms a run; [0-9.]+% invoked in a callback flood \\(queue "
                                          "past qhimark\\)\n      callback floods: (none|[0-9]+ of 8 task CPUs entered one, "
                                          "[0-9.]+ to [0-9.]+ ms into the run, (none|[0-9]+) ended); longest queue [0-9]+ \\(qhimark "
                                          "10000\\)\n")));
  // The floods' record runs from the start to the window's end, warm-up included.
  CHECK(row.rcu_floods.cpus <= 8);
  CHECK(row.rcu_floods.qhimark == 10000);
  CHECK(row.rcu_floods.queue_peak > 0);
  if (row.rcu_floods.cpus > 0) CHECK(row.rcu_floods.last <= row.end_time);
}
