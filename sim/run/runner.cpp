#include "sim/run/runner.h"

#include <fmt/format.h>
#include <memory>
#include <stdexcept>

#include "models/random.h"
#include "sim/engine/cpu.h"
#include "sim/engine/engine.h"
#include "sim/machine/placement.h"
#include "workloads/task.h"

namespace slubsim {

RunResult simulate(const RunSpec& spec) {
  const Machine& m = *spec.machine;
  Engine engine;
  World world(m, *spec.costs, spec.options);
  const Time begin = spec.warmup, end = spec.warmup + spec.duration;
  world.set_window(begin, end);

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
                           spec.capacity ? *spec.capacity : CapacityOverride{}));
  if (slub) slub->set_busy_cpus(task_cpu);
  const Program program = spec.kernel ? select_kernel(*spec.program, spec.kernel->name) : *spec.program;
  auto bound = bind_program(program, world, spec.mode, task_node, m.nr_nodes, slub.get());
  auto& bindings = bound.tasks;
  BoundTrace replay;
  if (spec.trace) replay = bind_trace(*spec.trace, spec.replay, world, task_node);

  // SLUB counters over the window: snapshots when global time reaches its edges.
  std::vector<slub::StatCounters> at_begin;
  std::uint64_t pgalloc_begin = 0, pgfree_begin = 0, ksoftirqd_begin = 0, gp_begin = 0;
  RunResult r;
  Timer window_begin([&] {
    if (!slub) return;
    for (int i = 0; i < slub->nr_caches(); ++i) at_begin.push_back(slub->cache(i).stats);
    pgalloc_begin = slub->pages().pgalloc();
    pgfree_begin = slub->pages().pgfree();
    ksoftirqd_begin = slub->softirq().switch_ins();
    gp_begin = slub->grace_periods_ended();
  });
  Timer window_end([&] {
    if (!slub) return;
    for (int i = 0; i < slub->nr_caches(); ++i) {
      const auto& c = slub->cache(i);
      CacheReport cr;
      cr.name = c.name();
      cr.geo = c.geo;
      for (int k = 0; k < slub::kNrStats; ++k) cr.stats[k] = c.stats[k] - at_begin[i][k];
      cr.layers = slub->layers(c);
      r.caches.push_back(cr);
    }
    r.slab_bytes = slub->total_slab_bytes();
    r.pgalloc = slub->pages().pgalloc() - pgalloc_begin;
    r.pgfree = slub->pages().pgfree() - pgfree_begin;
    r.ksoftirqd_runs = slub->softirq().switch_ins() - ksoftirqd_begin;
    r.grace_periods = slub->grace_periods_ended() - gp_begin;
  });
  engine.schedule(begin, &window_begin);
  engine.schedule(end, &window_end);

  std::vector<std::unique_ptr<Cpu>> cpus;
  for (int t = 0; t < spec.nr_task; ++t) {
    int c = task_cpu[t];
    auto cpu = std::make_unique<Cpu>(c, m.cpu_node[c], m.mem_node(m.cpu_node[c]), engine, world);
    cpu->set_window(begin, end);
    bool sibling_busy = false;
    for (int s : m.core_cpus[m.cpu_core[c]])
      if (s != c && busy[s]) sibling_busy = true;
    const double work_factor = sibling_busy ? m.smt_private_work_factor : 1.0;
    cpu->set_private_work_factor(work_factor);
    auto& b = bindings[t];
    b.rng = Random(spec.seed, static_cast<std::uint64_t>(c), 1);
    b.counter.begin = begin;
    b.counter.end = end;
    if (spec.trace) {
      replay.tasks[t].work_factor = work_factor;
      cpu->start(replay_trace(*cpu, replay, t, b, end), 0);
    } else {
      cpu->start(run_task(*cpu, program, b, end), 0);
    }
    cpus.push_back(std::move(cpu));
  }

  // The interval series: cumulative operations and spin of all tasks at each edge; the samples
  // are their differences.
  std::uint64_t ops_before = 0;
  Time spin_before = 0, next_edge = spec.interval;
  Timer sampler([&] {
    std::uint64_t ops_now = 0;
    Time spin_now = 0;
    for (int t = 0; t < spec.nr_task; ++t) {
      ops_now += bindings[t].counter.total;
      spin_now += cpus[t]->spin_total();
    }
    r.samples.push_back({next_edge, ops_now - ops_before, spin_now - spin_before});
    ops_before = ops_now;
    spin_before = spin_now;
    next_edge += spec.interval;
    if (next_edge <= end) engine.schedule(next_edge, &sampler);
  });
  if (spec.interval > 0 && spec.interval <= end) engine.schedule(spec.interval, &sampler);
  r.interval = spec.interval;

  engine.run();
  if (slub && spec.validate) slub->check();

  r.nr_task = spec.nr_task;
  r.window = spec.duration;
  Time idle = static_cast<Time>(m.nr_cpus - spec.nr_task) * spec.duration;
  std::uint64_t ops = 0;
  for (int t = 0; t < spec.nr_task; ++t) {
    if (!cpus[t]->finished())
      throw std::runtime_error(fmt::format(
          "simulation stalled: task {} on CPU {} never finished (a lock was never released)", t,
          task_cpu[t]));
    idle += cpus[t]->idle();
    r.task_ops.push_back(bindings[t].counter.in_window);
    TaskTime tt;
    for (int a = 0; a < kNrAccounts; ++a) tt.busy[a] = cpus[t]->accounted(static_cast<Account>(a));
    tt.lock_wait = cpus[t]->lock_wait();
    tt.idle = cpus[t]->idle();
    r.task_time.push_back(tt);
    ops += bindings[t].counter.in_window;
    r.end_time = std::max(r.end_time, cpus[t]->now());
    r.alloc_failures += bindings[t].alloc_failures;
    if (spec.trace) r.trace_skipped_frees += replay.tasks[t].skipped_frees;
  }
  for (std::size_t c = 0; c < program.caches.size(); ++c) {
    std::array<double, 3> v{};
    for (const auto& b : bindings)
      for (int k = 0; k < 3; ++k) v[k] += static_cast<double>(b.object_ops[c][k]);
    for (auto& x : v) x = ops ? x / static_cast<double>(ops) : 0.0;
    r.per_op.emplace_back(program.caches[c], v);
  }
  // ops per second over the window; integer, as will-it-scale prints its average.
  r.ops_per_sec = static_cast<std::uint64_t>(
      static_cast<long double>(ops) * kSec / static_cast<long double>(spec.duration));
  r.idle_pct = 100.0 * static_cast<double>(idle) /
               (static_cast<double>(m.nr_cpus) * static_cast<double>(spec.duration));
  for (const auto& l : world.spinlocks())
    r.locks.push_back({world.lock_classes()[l.cls], l.instance, l.stat, false, l.waited});
  for (const auto& s : world.rwsems())
    r.locks.push_back({world.lock_classes()[s.cls], s.instance, s.stat, true, s.waited});
  for (const auto& [key, t] : world.stack_waits())
    r.stack_waits.push_back({world.lock_classes()[static_cast<std::size_t>(key.first)], key.second, t});
  r.events = engine.events();
  r.requests = world.requests();
  return r;
}

}  // namespace slubsim
