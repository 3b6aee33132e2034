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
  void take_end_state();
  void settle_edge();
  void sample();

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
  // The window's edges in intervals of the grid, [wfrom_, wto_), and the allocator's counters and
  // state at them.
  int wfrom_ = 1, wto_ = 2;
  SlubSnapshot at_begin_, at_end_;
  Timer window_begin_{[this] { at_begin_ = snapshot(slub_.get()); }};
  Timer window_end_{[this] { take_end_state(); }};
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
  if (!spec.settle && on_steps_) {
    wfrom_ = static_cast<int>(spec.warmup / step_);
    wto_ = static_cast<int>((spec.warmup + spec.duration) / step_);
  }
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

void Simulation::take_end_state() {
  at_end_ = snapshot(slub_.get());
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
      wfrom_ = verdict_.from;
      wto_ = verdict_.to;
      at_begin_ = edges_[static_cast<std::size_t>(wfrom_)];
      take_end_state();
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
  const RunSpec& spec = spec_;
  RunResult& r = r_;
  const IntervalRange win{wfrom_, wto_};
  const Time wbegin = grid_.begin(wfrom_), wend = grid_.begin(wto_);
  const Time window = wend - wbegin;
  if (!spec.settle && on_steps_) {
    // A fixed window on the rule's grid: judge it from its own series.
    series_.clear();
    for (int i = 0; i < wto_; ++i) series_.push_back(interval_ops(i));
    verdict_ = judge_fixed_window(series_, wfrom_, spec.settle_rule);
  }
  SettleReport& st = r.settle;
  st.automatic = spec.settle;
  st.judged = on_steps_;
  if (st.judged) {
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
    // How far the window's intervals swing (a cycle's amplitude, shown by the why report).
    std::vector<double> w(series_.begin() + std::min<std::ptrdiff_t>(wfrom_, static_cast<std::ptrdiff_t>(series_.size())),
                          series_.begin() + std::min<std::ptrdiff_t>(wto_, static_cast<std::ptrdiff_t>(series_.size())));
    std::sort(w.begin(), w.end());
    if (!w.empty()) {
      st.low = w[w.size() / 10] * per_sec;
      st.high = w[std::min(w.size() - 1, w.size() * 9 / 10)] * per_sec;
    }
  }

  r.nr_task = spec.nr_task;
  r.window = window;
  r.warmup = wbegin;
  Time idle = static_cast<Time>(m_.nr_cpus - spec.nr_task) * window;
  std::uint64_t ops = 0;
  for (int t = 0; t < spec.nr_task; ++t) {
    if (!cpus_[t]->finished())
      throw std::runtime_error(fmt::format(
          "simulation stalled: task {} on CPU {} never finished (a lock was never released)", t,
          task_cpu_[t]));
    const TaskTime tt = cpus_[t]->times().sum(win.from, win.to);
    std::uint64_t n = 0;  // the CPU's: all its copies'
    for (int k = 0; k < copies_; ++k)
      n += copy_of(t, k).counter.ops.sum(win.from, win.to);
    idle += tt.idle;
    r.task_ops.push_back(n);
    r.task_time.push_back(tt);
    ops += n;
    r.end_time = std::max(r.end_time, cpus_[t]->now());
    for (int k = 0; k < copies_; ++k)
      r.alloc_failures += copy_of(t, k).alloc_failures;
    if (spec.trace) r.trace_skipped_frees += replay_.tasks[t].skipped_frees;
  }
  if (slub_) {
    for (int i = 0; i < slub_->nr_caches(); ++i)
      for (int k = 0; k < slub::kNrStats; ++k)
        r.caches[static_cast<std::size_t>(i)].stats[k] = at_end_.stats[static_cast<std::size_t>(i)][k] -
                                                          at_begin_.stats[static_cast<std::size_t>(i)][k];
    r.pgalloc = at_end_.pgalloc - at_begin_.pgalloc;
    r.pgfree = at_end_.pgfree - at_begin_.pgfree;
    r.ksoftirqd_runs = at_end_.ksoftirqd - at_begin_.ksoftirqd;
    r.grace_periods = at_end_.grace_periods - at_begin_.grace_periods;
  }
  for (std::size_t c = 0; c < program_.caches.size(); ++c) {
    const ObjectOps o = (*bound_.object_ops)[c].sum(win.from, win.to);
    std::array<double, 3> v{};
    for (int k = 0; k < 3; ++k) v[k] = ops ? static_cast<double>(o.n[k]) / static_cast<double>(ops) : 0.0;
    r.per_op.emplace_back(program_.caches[c], v);
  }
  // ops per second over the window; integer, as will-it-scale prints its average.
  r.ops_per_sec = window > 0 ? static_cast<std::uint64_t>(static_cast<long double>(ops) * kSec /
                                                          static_cast<long double>(window))
                             : 0;
  r.idle_pct = window > 0 ? 100.0 * static_cast<double>(idle) /
                                (static_cast<double>(m_.nr_cpus) * static_cast<double>(window))
                          : 0.0;
  for (const auto& l : world_.spinlocks())
    r.locks.push_back({world_.lock_classes()[l.cls], l.instance, l.stat.sum(win.from, win.to), false,
                       l.waited.sum(win.from, win.to)});
  for (const auto& s : world_.rwsems())
    r.locks.push_back({world_.lock_classes()[s.cls], s.instance, s.stat.sum(win.from, win.to), true,
                       s.waited.sum(win.from, win.to)});
  std::map<std::pair<int, std::string>, Time> stacks;
  for (const auto& [key, t] : world_.stack_waits()) {
    const Time w = t.sum(win.from, win.to);
    if (w > 0) stacks[{key.cls, key.folded()}] += w;
  }
  for (const auto& [key, t] : stacks)
    r.stack_waits.push_back({world_.lock_classes()[static_cast<std::size_t>(key.first)], key.second, t});
  if (time_stacks_) r.cpu_stacks = time_stacks_->folded(win, world_.lock_classes());
  r.events = engine_.events();
  r.requests = world_.requests();
  return std::move(r_);
}

}  // namespace

RunResult simulate(const RunSpec& spec) {
  Simulation sim(spec);
  sim.measure();
  return sim.collect();
}

}  // namespace slubsim
