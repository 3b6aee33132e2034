#include "sim/run/runner.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <utility>

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
  std::vector<slub::ReuseCounters> reuse;
  std::uint64_t pgalloc = 0, pgfree = 0, ksoftirqd = 0, grace_periods = 0, callbacks = 0, flood_callbacks = 0;
  FloodHistory floods;
};

SlubSnapshot snapshot(const slub::Slub* slub) {
  SlubSnapshot s;
  if (!slub) return s;
  for (int i = 0; i < slub->nr_caches(); ++i) {
    s.stats.push_back(slub->cache(i).stats);
    s.reuse.push_back(slub->cache(i).reuse);
  }
  s.pgalloc = slub->pages().pgalloc();
  s.pgfree = slub->pages().pgfree();
  s.ksoftirqd = slub->softirq().switch_ins();
  s.grace_periods = slub->grace_periods_ended();
  s.callbacks = slub->rcu().invoked();
  s.flood_callbacks = slub->rcu().invoked_in_flood();
  s.floods = slub->rcu().flood_history();
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


// One simulation in three stages: build (machine, allocator, tasks bound to CPUs), measure (the
// timers that choose and mark the window, then the engine's run) and collect (the window's sums
// into a RunResult). The timers' callbacks read and move the run's state, so it lives here.
class Simulation {
 public:
  explicit Simulation(const RunSpec& spec);
  void measure();
  RunResult collect();

 private:
  // Operations all tasks completed in interval i of the grid: one element of the series.
  double interval_ops(int i) const;
  // A fixed window's edges in intervals of the grid: its own steps on the rule's grid, else
  // interval 1 of Grid::window.
  IntervalRange fixed_window() const;
  // The window ends now: `bounds` are its edges, `at_begin` the allocator's counters at the
  // first; takes the counters and each cache's state at the second. The one place the window is
  // set, for a window the user fixed (on the grid or off it, from the window_ timers) as for one
  // the settle rule chose (settle_edge).
  void close_window(IntervalRange bounds, SlubSnapshot at_begin);
  void settle_edge();
  void sample();

  // collect()'s parts, each filling its share of r_ from the window's intervals.
  void judge_fixed_window_series();
  SettleReport settle_report() const;
  std::pair<double, double> window_spread(double per_sec) const;
  struct TaskSums {
    std::uint64_t ops = 0;  // all tasks' operations
    Time idle = 0;          // idle time of all logical CPUs
  };
  TaskSums sum_tasks(IntervalRange win, Time window);
  void window_counters();
  void per_op_figures(IntervalRange win, std::uint64_t ops);
  void throughput(const TaskSums& sums, Time window);
  void lock_reports(IntervalRange win);
  void stack_reports(IntervalRange win);

  const RunSpec& spec_;
  const Machine& m_;
  Engine engine_;
  World world_;
  bool on_steps_ = false;
  const Grid grid_;
  const Time step_;
  // Tasks stop at their first iteration boundary after `stop_`; the settle rule moves it.
  Time stop_;
  std::vector<int> task_cpu_;
  std::unique_ptr<slub::Slub> slub_;
  Program program_;
  int copies_ = 1;
  BoundProgram bound_;
  BoundTrace replay_;
  std::optional<TimeStacks> time_stacks_;
  std::vector<std::unique_ptr<Cpu>> cpus_;
  RunResult r_;
  // The window's edges in intervals of the grid, [bounds.from, bounds.to), and the allocator's
  // counters at them: set by close_window alone, when the window ends.
  struct Window {
    IntervalRange bounds;
    SlubSnapshot at_begin, at_end;
  };
  Window window_;
  // A fixed window: the counters at its beginning (window_begin_), until it ends (window_end_).
  SlubSnapshot fixed_begin_;
  Timer window_begin_{[this] { fixed_begin_ = snapshot(slub_.get()); }};
  Timer window_end_{[this] { close_window(fixed_window(), std::move(fixed_begin_)); }};
  // The settle rule's series, the allocator's counters at each edge, and its verdicts.
  std::vector<double> series_;
  std::vector<SlubSnapshot> edges_;
  SettleVerdict verdict_;
  int min_from_ = 0;
  int judged_at_ = 0;
  int confirm_at_ = 0;  // a first settled verdict at n is confirmed at 2n (or the cap)
  Timer edge_{[this] { settle_edge(); }};
  // The interval series: cumulative operations and spin of all tasks at each edge; the samples
  // are their differences.
  std::uint64_t ops_before_ = 0;
  Time spin_before_ = 0, next_sample_ = 0;
  Timer sampler_{[this] { sample(); }};

  TaskBinding& copy_of(int t, int k) {
    return bound_.tasks[static_cast<std::size_t>(k * spec_.nr_task + t)];
  }
};

Simulation::Simulation(const RunSpec& spec)
    : spec_(spec),
      m_(*spec.machine),
      world_(m_, *spec.costs, spec.options),
      grid_(make_grid(spec, &on_steps_)),
      step_(spec.settle_rule.step),
      stop_(spec.settle ? spec.settle_rule.cap : spec.warmup + spec.duration) {
  world_.set_grid(&grid_);
  task_cpu_ = place_tasks(m_, spec.nr_task);
  std::vector<int> task_node;
  std::vector<int> busy(m_.nr_cpus, 0);
  for (int c : task_cpu_) {
    task_node.push_back(m_.cpu_node[c]);
    busy[c] = 1;
  }
  if (spec.caches && spec.slub_costs && spec.kernel)
    slub_ = std::make_unique<slub::Slub>(
        world_, slub_params(m_, *spec.kernel, *spec.caches, *spec.slub_costs, spec.validate, spec.seed,
                            spec.capacity ? *spec.capacity : SheafKnobs{}));
  if (slub_) slub_->set_busy_cpus(task_cpu_);
  program_ = spec.kernel ? select_kernel(*spec.program, spec.kernel->name) : *spec.program;
  // Copy k of CPU t's processes is task k * nr_task + t (Program::tasks_per_cpu).
  copies_ = program_.tasks_per_cpu;
  std::vector<int> copy_node;
  for (int k = 0; k < copies_; ++k) copy_node.insert(copy_node.end(), task_node.begin(), task_node.end());
  bound_ = bind_program(program_, world_, spec.mode, copy_node, m_.nr_nodes, slub_.get());
  if (spec.trace) replay_ = bind_trace(*spec.trace, spec.replay, world_, task_node);
  else if (slub_ && objects_stay_on_cpu(program_, spec.mode)) slub_->set_cpu_local_objects(true);
  if (spec.stacks) time_stacks_.emplace(&grid_, m_.nr_cpus);
  for (int t = 0; t < spec.nr_task; ++t) {
    const int c = task_cpu_[t];
    auto cpu = std::make_unique<Cpu>(c, m_.cpu_node[c], m_.mem_node(m_.cpu_node[c]), engine_, world_);
    cpu->set_grid(&grid_);
    if (time_stacks_) cpu->set_time_sink(&*time_stacks_);
    bool sibling_busy = false;
    for (int sib : m_.core_cpus[m_.cpu_core[c]])
      if (sib != c && busy[sib]) sibling_busy = true;
    const double work_factor = sibling_busy ? m_.smt_private_work_factor : 1.0;
    cpu->set_private_work_factor(work_factor);
    std::vector<TaskBinding*> mine;
    for (int k = 0; k < copies_; ++k) {
      auto& b = copy_of(t, k);
      b.rng = Random(spec.seed, static_cast<std::uint64_t>(c), 1 + static_cast<std::uint64_t>(k));
      b.counter.grid = &grid_;
      mine.push_back(&b);
    }
    if (spec.trace) {
      replay_.tasks[t].work_factor = work_factor;
      cpu->start(replay_trace(*cpu, replay_, t, *mine.front(), stop_), 0);
    } else {
      cpu->start(run_task(*cpu, program_, std::move(mine), stop_, spec.kernel && spec.kernel->wakeup_preempts), 0);
    }
    cpus_.push_back(std::move(cpu));
  }
}

double Simulation::interval_ops(int i) const {
  double ops = 0;
  for (const auto& b : bound_.tasks) ops += static_cast<double>(b.counter.ops.sum(i, i + 1));
  return ops;
}

IntervalRange Simulation::fixed_window() const {
  if (!on_steps_) return {1, 2};
  return {static_cast<int>(spec_.warmup / step_), static_cast<int>((spec_.warmup + spec_.duration) / step_)};
}

void Simulation::close_window(IntervalRange bounds, SlubSnapshot at_begin) {
  window_.bounds = bounds;
  window_.at_begin = std::move(at_begin);
  window_.at_end = snapshot(slub_.get());
  if (!slub_) return;
  for (int i = 0; i < slub_->nr_caches(); ++i) {
    const auto& c = slub_->cache(i);
    CacheReport cr;
    cr.name = c.name();
    cr.geo = c.geo;
    cr.layers = slub_->layers(c);
    cr.barn_full_seen = c.barn_full_seen;
    cr.barn_empty_seen = c.barn_empty_seen;
    r_.caches.push_back(cr);
  }
  r_.slab_bytes = slub_->total_slab_bytes();
}

// The settle rule, at each edge of the grid: the operations of the interval that just ended (no
// task can still complete one before global time), the allocator's counters, and the verdict on
// the series so far. Settled, or at the cap: the window ends here.
void Simulation::settle_edge() {
  const int k = static_cast<int>(series_.size());
  series_.push_back(interval_ops(k));
  edges_.push_back(snapshot(slub_.get()));
  const int n = k + 1;
  const bool at_cap = n >= grid_.last;
  const bool due = confirm_at_ > 0
                       ? n >= confirm_at_
                       : n >= min_from_ + spec_.settle_rule.min_batches && n - judged_at_ >= std::max(1, n / 20);
  if (at_cap || due) {
    judged_at_ = n;
    verdict_ = judge_series(series_, spec_.settle_rule, min_from_, at_cap);
    if (verdict_.settled && confirm_at_ == 0 && !at_cap) {
      confirm_at_ = std::min(2 * n, grid_.last);  // settled once: run as long again and judge anew
    } else if (verdict_.settled || at_cap) {
      stop_ = engine_.now();
      close_window({verdict_.from, verdict_.to}, edges_[static_cast<std::size_t>(verdict_.from)]);
      return;
    } else {
      confirm_at_ = 0;  // the doubled series is not settled: the search goes on
    }
  }
  engine_.schedule(engine_.now() + step_, &edge_);
}

void Simulation::sample() {
  std::uint64_t ops_now = 0;
  Time spin_now = 0;
  for (const auto& b : bound_.tasks) ops_now += b.counter.total;
  for (const auto& cpu : cpus_) spin_now += cpu->spin_total();
  r_.samples.push_back({next_sample_, ops_now - ops_before_, spin_now - spin_before_});
  ops_before_ = ops_now;
  spin_before_ = spin_now;
  next_sample_ += spec_.interval;
  if (next_sample_ <= stop_) engine_.schedule(next_sample_, &sampler_);
}

void Simulation::measure() {
  edges_.push_back(snapshot(slub_.get()));
  min_from_ = step_ > 0 ? static_cast<int>((spec_.settle_rule.min_warmup + step_ - 1) / step_) : 0;
  if (spec_.settle) {
    engine_.schedule(step_, &edge_);
  } else {
    engine_.schedule(spec_.warmup, &window_begin_);
    engine_.schedule(spec_.warmup + spec_.duration, &window_end_);
  }
  next_sample_ = spec_.interval;
  if (spec_.interval > 0 && spec_.interval <= stop_) engine_.schedule(spec_.interval, &sampler_);
  r_.interval = spec_.interval;
  StopWatch stop_watch(spec_.stop);
  engine_.run(stop_watch.armed() ? std::function<void()>([&] { stop_watch.check(); }) : std::function<void()>{});
  if (slub_ && spec_.validate) slub_->check();
}

// Everything below is summed over the window's intervals.
RunResult Simulation::collect() {
  const IntervalRange win = window_.bounds;
  const Time wbegin = grid_.begin(win.from);
  const Time window = grid_.begin(win.to) - wbegin;
  if (!spec_.settle && on_steps_) judge_fixed_window_series();
  r_.settle = settle_report();
  r_.nr_task = spec_.nr_task;
  r_.window = window;
  r_.warmup = wbegin;
  const TaskSums sums = sum_tasks(win, window);
  window_counters();
  per_op_figures(win, sums.ops);
  throughput(sums, window);
  lock_reports(win);
  stack_reports(win);
  r_.events = engine_.events();
  r_.requests = world_.requests();
  return std::move(r_);
}

// A fixed window on the rule's grid: judged from its own series, the intervals up to its end.
void Simulation::judge_fixed_window_series() {
  series_.clear();
  for (int i = 0; i < window_.bounds.to; ++i) series_.push_back(interval_ops(i));
  verdict_ = judge_fixed_window(series_, window_.bounds.from, spec_.settle_rule);
}

// The rule's verdict, in intervals of the grid, as times and ops/s; a window off the grid is
// not judged.
SettleReport Simulation::settle_report() const {
  SettleReport st;
  st.automatic = spec_.settle;
  st.judged = on_steps_;
  if (!st.judged) return st;
  const double per_sec = static_cast<double>(kSec) / static_cast<double>(step_);
  st.settled = verdict_.settled;
  st.transient = static_cast<Time>(verdict_.transient) * step_;
  st.half_width = std::isfinite(verdict_.half_width) ? verdict_.half_width * per_sec : -1.0;
  st.batches = verdict_.batches;
  st.batch = static_cast<Time>(verdict_.batch) * step_;
  st.period = static_cast<Time>(verdict_.period) * step_;
  st.period_acf = verdict_.period_acf;
  st.step = step_;
  st.reason = verdict_.reason;
  st.suggest_warmup = static_cast<Time>(verdict_.suggest_warmup) * step_;
  st.suggest_window = static_cast<Time>(verdict_.suggest_window) * step_;
  std::tie(st.low, st.high) = window_spread(per_sec);
  return st;
}

// How far the window's intervals swing (a cycle's amplitude, shown by the why report): the 10th
// and 90th percentile of its series in ops/s; zeros for an empty series.
std::pair<double, double> Simulation::window_spread(double per_sec) const {
  const auto size = static_cast<std::ptrdiff_t>(series_.size());
  std::vector<double> w(series_.begin() + std::min<std::ptrdiff_t>(window_.bounds.from, size),
                        series_.begin() + std::min<std::ptrdiff_t>(window_.bounds.to, size));
  if (w.empty()) return {0.0, 0.0};
  std::sort(w.begin(), w.end());
  return {w[w.size() / 10] * per_sec, w[std::min(w.size() - 1, w.size() * 9 / 10)] * per_sec};
}

// Each task's operations (all its copies') and time in the window, and what it met in the whole
// run (its end, failed allocations, skipped trace frees); throws if a task never finished.
Simulation::TaskSums Simulation::sum_tasks(IntervalRange win, Time window) {
  TaskSums sums;
  sums.idle = static_cast<Time>(m_.nr_cpus - spec_.nr_task) * window;
  for (int t = 0; t < spec_.nr_task; ++t) {
    if (!cpus_[t]->finished())
      throw std::runtime_error(fmt::format(
          "simulation stalled: task {} on CPU {} never finished (a lock was never released)", t,
          task_cpu_[t]));
    const TaskTime tt = cpus_[t]->times().sum(win.from, win.to);
    std::uint64_t n = 0;  // the CPU's: all its copies'
    for (int k = 0; k < copies_; ++k)
      n += copy_of(t, k).counter.ops.sum(win.from, win.to);
    sums.idle += tt.idle;
    r_.task_ops.push_back(n);
    r_.task_time.push_back(tt);
    sums.ops += n;
    r_.end_time = std::max(r_.end_time, cpus_[t]->now());
    for (int k = 0; k < copies_; ++k)
      r_.alloc_failures += copy_of(t, k).alloc_failures;
    if (spec_.trace) r_.trace_skipped_frees += replay_.tasks[t].skipped_frees;
  }
  return sums;
}

// The allocator's cumulative counters as differences across the window: SLUB_STATS and slab reuse per cache,
// pages, ksoftirqd's runs, grace periods, RCU callbacks invoked (and in a flood); the floods
// entered from the run's start to the window's end.
void Simulation::window_counters() {
  if (!slub_) return;
  const SlubSnapshot& begin = window_.at_begin;
  const SlubSnapshot& end = window_.at_end;
  for (std::size_t i = 0; i < static_cast<std::size_t>(slub_->nr_caches()); ++i) {
    for (int k = 0; k < slub::kNrStats; ++k) r_.caches[i].stats[k] = end.stats[i][k] - begin.stats[i][k];
    for (int k = 0; k < slub::kNrReuse; ++k) r_.caches[i].reuse[k] = end.reuse[i][k] - begin.reuse[i][k];
  }
  r_.pgalloc = end.pgalloc - begin.pgalloc;
  r_.pgfree = end.pgfree - begin.pgfree;
  r_.ksoftirqd_runs = end.ksoftirqd - begin.ksoftirqd;
  r_.grace_periods = end.grace_periods - begin.grace_periods;
  r_.rcu_callbacks = end.callbacks - begin.callbacks;
  r_.rcu_flood_callbacks = end.flood_callbacks - begin.flood_callbacks;
  r_.rcu_floods = end.floods;
}

// Slab traffic per counted operation, per cache the program uses: alloc, free, kfree_rcu.
void Simulation::per_op_figures(IntervalRange win, std::uint64_t ops) {
  for (std::size_t c = 0; c < program_.caches.size(); ++c) {
    const ObjectOps o = (*bound_.object_ops)[c].sum(win.from, win.to);
    std::array<double, 3> v{};
    for (int k = 0; k < 3; ++k) v[k] = ops ? static_cast<double>(o.n[k]) / static_cast<double>(ops) : 0.0;
    r_.per_op.emplace_back(program_.caches[c], v);
  }
}

// Operations per second over the window (an integer, as will-it-scale prints its average) and
// the idle share of all logical CPUs.
void Simulation::throughput(const TaskSums& sums, Time window) {
  r_.ops_per_sec = window > 0 ? static_cast<std::uint64_t>(static_cast<long double>(sums.ops) * kSec /
                                                           static_cast<long double>(window))
                              : 0;
  r_.idle_pct = window > 0 ? 100.0 * static_cast<double>(sums.idle) /
                                 (static_cast<double>(m_.nr_cpus) * static_cast<double>(window))
                           : 0.0;
}

// lock_stat and the time spent waiting, per lock instance: spinlocks, then rwsems.
void Simulation::lock_reports(IntervalRange win) {
  for (const auto& l : world_.spinlocks())
    r_.locks.push_back({world_.lock_classes()[l.cls], l.instance, l.stat.sum(win.from, win.to), false,
                        l.waited.sum(win.from, win.to)});
  for (const auto& s : world_.rwsems())
    r_.locks.push_back({world_.lock_classes()[s.cls], s.instance, s.stat.sum(win.from, win.to), true,
                        s.waited.sum(win.from, win.to)});
}

// Spinning per lock class and call chain (merged over tasks, the nonzero ones in order of class
// and chain), and all task time by call chain when RunSpec::stacks asked for it.
void Simulation::stack_reports(IntervalRange win) {
  std::map<std::pair<int, std::string>, Time> stacks;
  for (const auto& [key, t] : world_.stack_waits()) {
    const Time w = t.sum(win.from, win.to);
    if (w > 0) stacks[{key.cls, key.folded()}] += w;
  }
  for (const auto& [key, t] : stacks)
    r_.stack_waits.push_back({world_.lock_classes()[static_cast<std::size_t>(key.first)], key.second, t});
  if (time_stacks_) r_.cpu_stacks = time_stacks_->folded(win, world_.lock_classes());
}

}  // namespace

RunResult simulate(const RunSpec& spec) {
  Simulation sim(spec);
  sim.measure();
  return sim.collect();
}

}  // namespace slubsim
