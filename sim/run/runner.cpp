#include "sim/run/runner.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>

#include "models/random.h"
#include "sim/engine/cpu.h"
#include "sim/engine/engine.h"
#include "sim/machine/placement.h"
#include "sim/run/stop.h"
#include "workloads/task.h"

namespace slubsim {

namespace {

// The cumulative counters of the allocator that a window reports as differences: taken when
// global time reaches a window edge.
struct SlubSnapshot {
  std::vector<slub::StatCounters> stats;
  std::uint64_t pgalloc = 0, pgfree = 0, ksoftirqd = 0, grace_periods = 0;
};

SlubSnapshot snapshot(const slub::Slub* slub) {
  SlubSnapshot s;
  if (!slub) return s;
  for (int i = 0; i < slub->nr_caches(); ++i) s.stats.push_back(slub->cache(i).stats);
  s.pgalloc = slub->pages().pgalloc();
  s.pgfree = slub->pages().pgfree();
  s.ksoftirqd = slub->softirq().switch_ins();
  s.grace_periods = slub->grace_periods_ended();
  return s;
}

// The grid a run counts by: equal intervals of the settle rule's step when the window's edges
// fall on them (so a fixed window can be judged), else warm-up, window and after.
// `on_steps` says which.
Grid make_grid(const RunSpec& spec, bool* on_steps) {
  const Time step = spec.settle_rule.step;
  *on_steps = true;
  if (spec.settle) return Grid::uniform(step, static_cast<int>(spec.settle_rule.cap / step));
  const Time end = spec.warmup + spec.duration;
  if (step > 0 && spec.warmup % step == 0 && spec.duration % step == 0 && end / step <= kMaxGridIntervals)
    return Grid::uniform(step, static_cast<int>(end / step));
  *on_steps = false;
  return Grid::window(spec.warmup, end);
}

}  // namespace

RunResult simulate(const RunSpec& spec) {
  const Machine& m = *spec.machine;
  Engine engine;
  World world(m, *spec.costs, spec.options);
  bool on_steps = false;
  const Grid grid = make_grid(spec, &on_steps);
  const Time step = spec.settle_rule.step;
  world.set_grid(&grid);
  // Tasks stop at their first iteration boundary after `stop`; the settle rule moves it.
  Time stop = spec.settle ? spec.settle_rule.cap : spec.warmup + spec.duration;

  auto task_cpu = place_tasks(m, spec.nr_task);
  std::vector<int> task_node;
  std::vector<int> busy(m.nr_cpus, 0);
  for (int c : task_cpu) {
    task_node.push_back(m.cpu_node[c]);
    busy[c] = 1;
  }
  std::unique_ptr<slub::Slub> slub;
  if (spec.caches && spec.slub_costs && spec.kernel)
    slub = std::make_unique<slub::Slub>(
        world, slub_params(m, *spec.kernel, *spec.caches, *spec.slub_costs, spec.validate, spec.seed,
                           spec.capacity ? *spec.capacity : SheafKnobs{}));
  if (slub) slub->set_busy_cpus(task_cpu);
  const Program program = spec.kernel ? select_kernel(*spec.program, spec.kernel->name) : *spec.program;
  // Copy k of CPU t's processes is task k * nr_task + t (Program::tasks_per_cpu).
  const int copies = program.tasks_per_cpu;
  std::vector<int> copy_node;
  for (int k = 0; k < copies; ++k) copy_node.insert(copy_node.end(), task_node.begin(), task_node.end());
  auto bound = bind_program(program, world, spec.mode, copy_node, m.nr_nodes, slub.get());
  auto& bindings = bound.tasks;
  auto copy_of = [&](int t, int k) -> TaskBinding& {
    return bindings[static_cast<std::size_t>(k * spec.nr_task + t)];
  };
  BoundTrace replay;
  if (spec.trace) replay = bind_trace(*spec.trace, spec.replay, world, task_node);

  RunResult r;
  // The window's edges in intervals of the grid, [wfrom, wto), and the allocator's counters
  // and state at them.
  int wfrom = 1, wto = 2;
  if (!spec.settle && on_steps) {
    wfrom = static_cast<int>(spec.warmup / step);
    wto = static_cast<int>((spec.warmup + spec.duration) / step);
  }
  SlubSnapshot at_begin, at_end;
  auto take_end_state = [&] {
    at_end = snapshot(slub.get());
    if (!slub) return;
    for (int i = 0; i < slub->nr_caches(); ++i) {
      const auto& c = slub->cache(i);
      CacheReport cr;
      cr.name = c.name();
      cr.geo = c.geo;
      cr.layers = slub->layers(c);
      cr.barn_full_seen = c.barn_full_seen;
      cr.barn_empty_seen = c.barn_empty_seen;
      r.caches.push_back(cr);
    }
    r.slab_bytes = slub->total_slab_bytes();
  };
  Timer window_begin([&] { at_begin = snapshot(slub.get()); });
  Timer window_end(take_end_state);

  std::optional<TimeStacks> time_stacks;
  if (spec.stacks) time_stacks.emplace(&grid, m.nr_cpus);
  std::vector<std::unique_ptr<Cpu>> cpus;
  for (int t = 0; t < spec.nr_task; ++t) {
    int c = task_cpu[t];
    auto cpu = std::make_unique<Cpu>(c, m.cpu_node[c], m.mem_node(m.cpu_node[c]), engine, world);
    cpu->set_grid(&grid);
    if (time_stacks) cpu->set_time_sink(&*time_stacks);
    bool sibling_busy = false;
    for (int s : m.core_cpus[m.cpu_core[c]])
      if (s != c && busy[s]) sibling_busy = true;
    const double work_factor = sibling_busy ? m.smt_private_work_factor : 1.0;
    cpu->set_private_work_factor(work_factor);
    std::vector<TaskBinding*> mine;
    for (int k = 0; k < copies; ++k) {
      auto& b = copy_of(t, k);
      b.rng = Random(spec.seed, static_cast<std::uint64_t>(c), 1 + static_cast<std::uint64_t>(k));
      b.counter.grid = &grid;
      mine.push_back(&b);
    }
    if (spec.trace) {
      replay.tasks[t].work_factor = work_factor;
      cpu->start(replay_trace(*cpu, replay, t, *mine.front(), stop), 0);
    } else {
      cpu->start(run_task(*cpu, program, std::move(mine), stop, spec.kernel && spec.kernel->wakeup_preempts), 0);
    }
    cpus.push_back(std::move(cpu));
  }

  // The settle rule, at each edge of the grid: the operations of the interval that just ended
  // (no task can still complete one before global time), the allocator's counters, and the
  // verdict on the series so far. Settled, or at the cap: the window ends here.
  std::vector<double> series;
  std::vector<SlubSnapshot> edges{snapshot(slub.get())};
  SettleVerdict verdict;
  const int min_from = step > 0 ? static_cast<int>((spec.settle_rule.min_warmup + step - 1) / step) : 0;
  int judged_at = 0;
  int confirm_at = 0;  // a first settled verdict at n is confirmed at 2n (or the cap)
  // Operations all tasks completed in interval i of the grid: one element of the series.
  auto interval_ops = [&](int i) {
    double ops = 0;
    for (const auto& b : bindings) ops += static_cast<double>(b.counter.ops.sum(i, i + 1));
    return ops;
  };
  Timer edge([&] {
    const int k = static_cast<int>(series.size());
    series.push_back(interval_ops(k));
    edges.push_back(snapshot(slub.get()));
    const int n = k + 1;
    const bool at_cap = n >= grid.last;
    const bool due = confirm_at > 0 ? n >= confirm_at
                                    : n >= min_from + spec.settle_rule.min_batches && n - judged_at >= std::max(1, n / 20);
    if (at_cap || due) {
      judged_at = n;
      verdict = judge_series(series, spec.settle_rule, min_from, at_cap);
      if (verdict.settled && confirm_at == 0 && !at_cap) {
        confirm_at = std::min(2 * n, grid.last);  // settled once: run as long again and judge anew
      } else if (verdict.settled || at_cap) {
        stop = engine.now();
        wfrom = verdict.from;
        wto = verdict.to;
        at_begin = edges[static_cast<std::size_t>(wfrom)];
        take_end_state();
        return;
      } else {
        confirm_at = 0;  // the doubled series is not settled: the search goes on
      }
    }
    engine.schedule(engine.now() + step, &edge);
  });
  if (spec.settle) {
    engine.schedule(step, &edge);
  } else {
    engine.schedule(spec.warmup, &window_begin);
    engine.schedule(spec.warmup + spec.duration, &window_end);
  }

  // The interval series: cumulative operations and spin of all tasks at each edge; the samples
  // are their differences.
  std::uint64_t ops_before = 0;
  Time spin_before = 0, next_edge = spec.interval;
  Timer sampler([&] {
    std::uint64_t ops_now = 0;
    Time spin_now = 0;
    for (const auto& b : bindings) ops_now += b.counter.total;
    for (const auto& cpu : cpus) spin_now += cpu->spin_total();
    r.samples.push_back({next_edge, ops_now - ops_before, spin_now - spin_before});
    ops_before = ops_now;
    spin_before = spin_now;
    next_edge += spec.interval;
    if (next_edge <= stop) engine.schedule(next_edge, &sampler);
  });
  if (spec.interval > 0 && spec.interval <= stop) engine.schedule(spec.interval, &sampler);
  r.interval = spec.interval;

  StopWatch stop_watch(spec.stop);
  engine.run(stop_watch.armed() ? std::function<void()>([&] { stop_watch.check(); }) : std::function<void()>{});
  if (slub && spec.validate) slub->check();

  // Everything below is summed over the window's intervals.
  const IntervalRange win{wfrom, wto};
  const Time wbegin = grid.begin(wfrom), wend = grid.begin(wto);
  const Time window = wend - wbegin;
  if (!spec.settle && on_steps) {
    // A fixed window on the rule's grid: judge it from its own series.
    series.clear();
    for (int i = 0; i < wto; ++i) series.push_back(interval_ops(i));
    verdict = judge_fixed_window(series, wfrom, spec.settle_rule);
  }
  SettleReport& st = r.settle;
  st.automatic = spec.settle;
  st.judged = on_steps;
  if (st.judged) {
    const double per_sec = static_cast<double>(kSec) / static_cast<double>(step);
    st.settled = verdict.settled;
    st.transient = static_cast<Time>(verdict.transient) * step;
    st.half_width = std::isfinite(verdict.half_width) ? verdict.half_width * per_sec : -1.0;
    st.batches = verdict.batches;
    st.batch = static_cast<Time>(verdict.batch) * step;
    st.period = static_cast<Time>(verdict.period) * step;
    st.period_acf = verdict.period_acf;
    st.step = step;
    st.reason = verdict.reason;
    st.suggest_warmup = static_cast<Time>(verdict.suggest_warmup) * step;
    st.suggest_window = static_cast<Time>(verdict.suggest_window) * step;
    // How far the window's intervals swing (a cycle's amplitude, shown by the why report).
    std::vector<double> w(series.begin() + std::min<std::ptrdiff_t>(wfrom, static_cast<std::ptrdiff_t>(series.size())),
                          series.begin() + std::min<std::ptrdiff_t>(wto, static_cast<std::ptrdiff_t>(series.size())));
    std::sort(w.begin(), w.end());
    if (!w.empty()) {
      st.low = w[w.size() / 10] * per_sec;
      st.high = w[std::min(w.size() - 1, w.size() * 9 / 10)] * per_sec;
    }
  }

  r.nr_task = spec.nr_task;
  r.window = window;
  r.warmup = wbegin;
  Time idle = static_cast<Time>(m.nr_cpus - spec.nr_task) * window;
  std::uint64_t ops = 0;
  for (int t = 0; t < spec.nr_task; ++t) {
    if (!cpus[t]->finished())
      throw std::runtime_error(fmt::format(
          "simulation stalled: task {} on CPU {} never finished (a lock was never released)", t,
          task_cpu[t]));
    const TaskTime tt = cpus[t]->times().sum(win.from, win.to);
    std::uint64_t n = 0;  // the CPU's: all its copies'
    for (int k = 0; k < copies; ++k)
      n += copy_of(t, k).counter.ops.sum(win.from, win.to);
    idle += tt.idle;
    r.task_ops.push_back(n);
    r.task_time.push_back(tt);
    ops += n;
    r.end_time = std::max(r.end_time, cpus[t]->now());
    for (int k = 0; k < copies; ++k)
      r.alloc_failures += copy_of(t, k).alloc_failures;
    if (spec.trace) r.trace_skipped_frees += replay.tasks[t].skipped_frees;
  }
  if (slub) {
    for (int i = 0; i < slub->nr_caches(); ++i)
      for (int k = 0; k < slub::kNrStats; ++k)
        r.caches[static_cast<std::size_t>(i)].stats[k] = at_end.stats[static_cast<std::size_t>(i)][k] -
                                                          at_begin.stats[static_cast<std::size_t>(i)][k];
    r.pgalloc = at_end.pgalloc - at_begin.pgalloc;
    r.pgfree = at_end.pgfree - at_begin.pgfree;
    r.ksoftirqd_runs = at_end.ksoftirqd - at_begin.ksoftirqd;
    r.grace_periods = at_end.grace_periods - at_begin.grace_periods;
  }
  for (std::size_t c = 0; c < program.caches.size(); ++c) {
    const ObjectOps o = (*bound.object_ops)[c].sum(win.from, win.to);
    std::array<double, 3> v{};
    for (int k = 0; k < 3; ++k) v[k] = ops ? static_cast<double>(o.n[k]) / static_cast<double>(ops) : 0.0;
    r.per_op.emplace_back(program.caches[c], v);
  }
  // ops per second over the window; integer, as will-it-scale prints its average.
  r.ops_per_sec = window > 0 ? static_cast<std::uint64_t>(static_cast<long double>(ops) * kSec /
                                                          static_cast<long double>(window))
                             : 0;
  r.idle_pct = window > 0 ? 100.0 * static_cast<double>(idle) /
                                (static_cast<double>(m.nr_cpus) * static_cast<double>(window))
                          : 0.0;
  for (const auto& l : world.spinlocks())
    r.locks.push_back({world.lock_classes()[l.cls], l.instance, l.stat.sum(win.from, win.to), false,
                       l.waited.sum(win.from, win.to)});
  for (const auto& s : world.rwsems())
    r.locks.push_back({world.lock_classes()[s.cls], s.instance, s.stat.sum(win.from, win.to), true,
                       s.waited.sum(win.from, win.to)});
  std::map<std::pair<int, std::string>, Time> stacks;
  for (const auto& [key, t] : world.stack_waits()) {
    const Time w = t.sum(win.from, win.to);
    if (w > 0) stacks[{key.cls, key.folded()}] += w;
  }
  for (const auto& [key, t] : stacks)
    r.stack_waits.push_back({world.lock_classes()[static_cast<std::size_t>(key.first)], key.second, t});
  if (time_stacks) r.cpu_stacks = time_stacks->folded(win, world.lock_classes());
  r.events = engine.events();
  r.requests = world.requests();
  return r;
}

}  // namespace slubsim
