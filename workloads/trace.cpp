#include "workloads/trace.h"

#include <algorithm>
#include <cmath>

namespace slubsim {

std::uint64_t Trace::nr_events() const {
  std::uint64_t n = 0;
  for (const auto& c : cpus) n += c.size();
  return n;
}

std::uint64_t Trace::count(TraceOp op) const {
  std::uint64_t n = 0;
  for (const auto& c : cpus)
    for (const auto& ev : c) n += ev.op == op;
  return n;
}

BoundTrace bind_trace(const Trace& t, const TraceReplay& replay, Shared& shared,
                      const std::vector<int>& task_node) {
  BoundTrace bt;
  bt.trace = &t;
  bt.replay = replay;
  const int n = static_cast<int>(task_node.size());
  const int c = static_cast<int>(t.cpus.size());
  bt.tasks.resize(static_cast<std::size_t>(n));
  // Which task replays trace CPU `cpu` in `replica`, or -1 if none does.
  auto task_of = [&](int cpu, int replica) {
    if (replay.map == TraceMap::Mapped) return cpu % n;
    int task = replica * c + cpu;
    return task < n ? task : -1;
  };
  for (int task = 0; task < n; ++task) {
    TraceTask& tt = bt.tasks[static_cast<std::size_t>(task)];
    if (replay.map == TraceMap::Mapped) {
      for (int cpu = task; cpu < c; cpu += n) tt.cpus.push_back(cpu);
    } else {
      tt.cpus.push_back(task % c);
      tt.replica = task / c;
    }
    tt.peer_task.assign(static_cast<std::size_t>(c), -1);
    tt.to_line.assign(static_cast<std::size_t>(c), LineId{});
    tt.from_line.assign(static_cast<std::size_t>(c), LineId{});
  }
  // One line per directed pair of tasks that hand objects over, made in task order.
  std::map<std::pair<int, int>, LineId> lines;
  auto line = [&](int from, int to) {
    auto it = lines.find({from, to});
    if (it == lines.end())
      it = lines.emplace(std::pair{from, to}, shared.new_line("trace_handoff", task_node[from])).first;
    return it->second;
  };
  for (int task = 0; task < n; ++task) {
    TraceTask& tt = bt.tasks[static_cast<std::size_t>(task)];
    for (int cpu : tt.cpus)
      for (int peer : t.peers[static_cast<std::size_t>(cpu)]) {
        int other = task_of(peer, tt.replica);
        tt.peer_task[static_cast<std::size_t>(peer)] = other;
        if (other < 0 || other == task) continue;
        tt.to_line[static_cast<std::size_t>(peer)] = line(task, other);
        tt.from_line[static_cast<std::size_t>(peer)] = line(other, task);
      }
  }
  return bt;
}

namespace {

// Busy until `until`: gaps between a CPU's events are whatever else the traced CPU did. The
// private-work factor is divided out, so that an SMT sibling does not stretch the schedule.
void wait_until(Exec& e, Time until, double work_factor) {
  if (until <= e.now()) return;
  e.spend(static_cast<Time>(static_cast<double>(until - e.now()) / work_factor));
}

Co<void> replay_event(Exec& e, BoundTrace& bt, int task, TaskBinding& b, const TraceEvent& ev,
                      std::uint32_t pass, const Time& stop) {
  TraceTask& tt = bt.tasks[static_cast<std::size_t>(task)];
  slub::KmemCache& cache = *b.caches[ev.cache];
  const std::uint64_t key = (static_cast<std::uint64_t>(pass) << 32) | ev.object;
  const auto peer = static_cast<std::size_t>(ev.peer);
  // The task that frees the object, or that allocated it.
  const int other = ev.peer >= 0 ? tt.peer_task[peer] : task;
  if (ev.op == TraceOp::Alloc) {
    void* obj = b.slub->alloc_fast(e, cache);
    if (!obj) obj = co_await b.slub->alloc(e, cache);
    if (!obj) ++b.alloc_failures;
    else b.counter.add(e.now(), 1);
    // Live at the end of the capture, or freed by a CPU no task replays: it stays allocated.
    if (!ev.freed || other < 0) co_return;
    // A cross-CPU object is handed over through a shared line: its free sees it only once this
    // store is granted, in global time order.
    if (other != task) co_await e.write(tt.to_line[peer]);
    bt.tasks[static_cast<std::size_t>(other)].inbox[key] = obj;
    co_return;
  }
  if (other < 0) {  // no task replays the allocating CPU
    ++tt.skipped_frees;
    co_return;
  }
  if (other != task) {
    co_await e.write(tt.from_line[peer]);
    // Wait for the allocation, as the traced CPU did.
    while (!tt.inbox.count(key)) {
      if (e.now() >= stop) {
        ++tt.skipped_frees;
        co_return;
      }
      e.spend(bt.replay.handoff_poll);
      co_await e.read(tt.from_line[peer]);
    }
  }
  auto it = tt.inbox.find(key);
  void* obj = it == tt.inbox.end() ? nullptr : it->second;
  if (it != tt.inbox.end()) tt.inbox.erase(it);
  if (!obj) {  // its allocation failed
    ++tt.skipped_frees;
    co_return;
  }
  if (ev.op == TraceOp::KfreeRcu) {
    co_await b.slub->kfree_rcu(e, cache, obj);
  } else {
    bool done = b.slub->free_fast(e, cache, obj);
    if (!done) co_await b.slub->free(e, cache, obj);
  }
  b.counter.add(e.now(), 1);
}

}  // namespace

Co<void> replay_trace(Exec& e, BoundTrace& bt, int task, TaskBinding& b, const Time& stop) {
  const Trace& t = *bt.trace;
  TraceTask& tt = bt.tasks[static_cast<std::size_t>(task)];
  const double speed = bt.replay.speed;
  auto scaled = [&](Time x) { return static_cast<Time>(std::llround(static_cast<double>(x) / speed)); };
  const Time period = speed > 0 ? scaled(t.period) : 0;
  std::vector<std::size_t> next(tt.cpus.size());
  for (std::uint32_t pass = 0; e.now() < stop; ++pass) {
    const Time pass_start = e.now();
    std::fill(next.begin(), next.end(), 0);
    while (true) {
      // The earliest next event of this task's trace CPUs, in the trace's order.
      const TraceEvent* ev = nullptr;
      std::size_t k = 0;
      for (std::size_t i = 0; i < tt.cpus.size(); ++i) {
        const auto& evs = t.cpus[static_cast<std::size_t>(tt.cpus[i])];
        if (next[i] < evs.size() && (!ev || evs[next[i]].seq < ev->seq)) {
          ev = &evs[next[i]];
          k = i;
        }
      }
      if (!ev) break;
      ++next[k];
      if (speed > 0) wait_until(e, std::min(stop, static_cast<Time>(pass) * period + scaled(ev->at)), tt.work_factor);
      if (e.now() >= stop) co_return;
      co_await replay_event(e, bt, task, b, *ev, pass, stop);
      // RCU callbacks whose grace period ended run in this CPU's softirq time.
      if (b.slub->rcu_tick_due(e)) co_await b.slub->rcu_tick(e);
    }
    // A pass in which every event was skipped must still move time on.
    if (e.now() == pass_start) e.spend(kUs);
  }
}

}  // namespace slubsim
