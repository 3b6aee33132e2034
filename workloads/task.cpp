#include "workloads/task.h"

#include <fmt/format.h>
#include <map>

namespace slubsim {

namespace {

// The gfp an alloc step's caller passes (workloads/program.h, Step::nowait).
slub::Gfp gfp_of(const Step& s) { return s.nowait ? slub::Gfp::Nowait : slub::Gfp::Kernel; }

// Key of the instance a task uses: which node, address space or task it belongs to.
int instance_key(Scope s, Mode mode, int task, int node) {
  switch (s) {
    case Scope::Node: return node;
    case Scope::Global: return 0;
    case Scope::Mm: return mode == Mode::Thread ? 0 : task;
    case Scope::Task: return task;
  }
  return 0;
}

std::string instance_name(Scope s, int key) {
  switch (s) {
    case Scope::Node: return fmt::format("node{}", key);
    case Scope::Global: return "global";
    case Scope::Mm: return fmt::format("mm{}", key);
    case Scope::Task: return fmt::format("task{}", key);
  }
  return "";
}

// The node an instance's memory lives on: its node, node 0 for globals, otherwise the node of
// the first task that uses it (the task that created the address space).
int home_node(Scope s, int key, int first_user_node) {
  switch (s) {
    case Scope::Node: return key;
    case Scope::Global: return 0;
    default: return first_user_node;
  }
}

// A task's own objects, and its mm's in process mode, are touched by its CPU alone.
Reach reach_of(Scope s, Mode mode) {
  return s == Scope::Task || (s == Scope::Mm && mode == Mode::Process) ? Reach::OneCpu : Reach::Shared;
}

// For each task, the id of the instance of a declaration it uses; `make(name, home)` creates one.
template <class Make>
void bind_scope(Scope scope, Mode mode, const std::vector<int>& task_node,
                std::vector<TaskBinding>& out, std::vector<std::uint32_t> TaskBinding::*table,
                Make make) {
  std::map<int, std::uint32_t> made;
  for (std::size_t t = 0; t < task_node.size(); ++t) {
    int key = instance_key(scope, mode, static_cast<int>(t), task_node[t]);
    auto it = made.find(key);
    if (it == made.end())
      it = made.emplace(key, make(instance_name(scope, key), home_node(scope, key, task_node[t])))
               .first;
    (out[t].*table).push_back(it->second);
  }
}

// A plain program's loop (run_task): run_steps repeats the steps until the clock passes `stop`,
// in one coroutine frame, instead of a frame per iteration.
struct Iterations {
  const Time& stop;
  std::uint64_t ops_per_iteration;
};

Co<void> run_steps(Exec& e, const std::vector<Step>& steps, TaskBinding& b, const Iterations* loop = nullptr);

[[noreturn]] void stalled_program(int stalled, int cpu);

// After an iteration that began at `before`: the stall check and the will-it-scale counter.
// True if RCU callbacks are due in this CPU's softirq time (the caller runs rcu_tick).
bool end_iteration(Exec& e, TaskBinding& b, Time before, std::uint64_t ops, int& stalled) {
  if (e.now() != before) stalled = 0;
  else if (++stalled == kMaxStalledIterations) stalled_program(stalled, e.cpu());
  if (ops) b.counter.add(e.now(), ops);
  return b.slub && b.slub->rcu_tick_due(e);
}

// Take up to `count` of the pool's oldest objects, leaving `keep`, into objs. A shared pool is
// one access for the whole step (a batched dequeue), which the caller makes first.
void take_from_pool(const Step& s, Pool& pool, std::vector<void*>& objs, TaskBinding& b) {
  objs.clear();
  while (objs.size() < static_cast<std::size_t>(s.count) &&
         pool.objects.size() > static_cast<std::size_t>(s.keep)) {
    bool own = false;
    objs.push_back(pool.pop(b.instance, &own));
    if (own && s.count_own) ++b.own_taken;
  }
  if (s.shuffled)  // Fisher-Yates on the task's own stream: the same seed, the same order
    for (std::size_t i = objs.size(); i > 1; --i) std::swap(objs[i - 1], objs[b.rng.below(i)]);
}

// The pool instance an allocation step puts its objects into when it names one (own, next-node).
Pool& dest_pool(const Step& s, TaskBinding& b) {
  return s.to == Dest::NextNode ? *b.next_pools[s.pool] : *b.pools[s.pool];
}

// Put objs into pool: a shared pool takes the step's objects in one access (a batched enqueue).
// Objects past a full pool's limit are returned in *dropped (the caller frees them).
Co<void> put_in_pool(Exec& e, Pool& pool, void* const* objs, std::size_t n, int from_task,
                     std::size_t* dropped) {
  *dropped = 0;
  if (pool.shared && n) co_await e.write(pool.line);
  for (std::size_t i = 0; i < n; ++i) {
    if (pool.limit && pool.objects.size() >= pool.limit) {
      *dropped = n - i;
      break;
    }
    pool.push(objs[i], from_task);
  }
}

// Allocate `count` objects for each target of a hand-off step and put them in that task's
// instance: every task of the group (a packet cloned for each matching socket, starting with
// the allocating task's own), or the group's next task in turn (a message to each receiver).
Co<void> alloc_handoff(Exec& e, const Step& s, TaskBinding& b) {
  slub::KmemCache& cache = *b.caches[s.cache];
  const std::vector<Pool*>& targets = *b.task_pools[s.pool];
  const TaskGroup g = task_group(b.task, b.nr_task, b.groups);
  const int size = g.last - g.first;
  int from = b.task - g.first, n = size;
  if (s.to == Dest::RoundRobin) {
    int& next = b.round_robin[s.pool];
    from = next % size;
    next = (from + 1) % size;
    n = 1;
  }
  std::vector<void*>& got = b.scratch;
  for (int k = 0; k < n; ++k) {
    Pool& pool = *targets[static_cast<std::size_t>(g.first + (from + k) % size)];
    if (pool.limit && pool.full != PoolDecl::Full::Drop) {
      // The receiver's queue is checked before anything is allocated.
      if (pool.shared) co_await e.read(pool.line);
      if (pool.full_now()) {
        if (pool.full == PoolDecl::Full::Block) {
          b.blocked = true;
          if (s.to == Dest::RoundRobin) b.round_robin[s.pool] = from;  // the same receiver next time
        }
        continue;
      }
    }
    got.assign(static_cast<std::size_t>(s.count), nullptr);
    std::size_t made = 0;
    if (s.op == StepOp::AllocBulk) {
      made = co_await b.slub->alloc_bulk(e, cache, got.size(), got.data());
      if (made == 0) ++b.alloc_failures;
    } else {
      for (int i = 0; i < s.count; ++i) {
        void* obj = b.slub->alloc_fast(e, cache, -1);
        if (!obj) obj = co_await b.slub->alloc(e, cache, -1, gfp_of(s));
        if (obj) got[made++] = obj;
        else ++b.alloc_failures;
      }
    }
    if (s.each_ns) e.spend(s.each_ns * static_cast<Time>(made));
    b.count(e, s.cache, TaskBinding::kAlloc, made);
    std::size_t dropped = 0;
    co_await put_in_pool(e, pool, got.data(), made, b.task, &dropped);
    // A full receive queue: the clone is freed at once, on this CPU (kfree_skb in softirq).
    if (dropped) {
      b.count(e, s.cache, TaskBinding::kFree, dropped);
      b.dropped += dropped;
      for (std::size_t i = made - dropped; i < made; ++i)
        if (!b.slub->free_fast(e, cache, got[i])) co_await b.slub->free(e, cache, got[i]);
    }
  }
}

Co<void> prefilled(Exec& e, const Step& s, TaskBinding& b) {
  slub::KmemCache& cache = *b.caches[s.cache];
  slub::Sheaf*& sheaf = b.sheaves[s.cache];
  switch (s.op) {
    case StepOp::Prefill:
      if (sheaf) sheaf = co_await b.slub->refill_sheaf(e, cache, sheaf, static_cast<std::uint32_t>(s.count));
      else sheaf = co_await b.slub->prefill_sheaf(e, cache, static_cast<std::uint32_t>(s.count));
      if (!sheaf) ++b.alloc_failures;
      break;
    case StepOp::AllocFromSheaf: {
      Pool& pool = dest_pool(s, b);
      std::vector<void*>& got = b.scratch;
      got.clear();
      for (int i = 0; i < s.count && sheaf; ++i) {
        void* obj = b.slub->alloc_from_sheaf(e, cache, sheaf);
        if (!obj) {
          ++b.alloc_failures;
          break;
        }
        got.push_back(obj);
      }
      b.count(e, s.cache, TaskBinding::kAlloc, got.size());
      if (pool.shared && !got.empty()) co_await e.write(pool.line);
      for (void* obj : got) pool.push(obj, b.task);
      break;
    }
    case StepOp::ReturnSheaf:
      if (sheaf) co_await b.slub->return_sheaf(e, cache, sheaf);
      sheaf = nullptr;
      break;
    default:
      break;
  }
}

Co<void> bulk(Exec& e, const Step& s, TaskBinding& b) {
  slub::KmemCache& cache = *b.caches[s.cache];
  std::vector<void*>& objs = b.scratch;
  objs.assign(static_cast<std::size_t>(s.count), nullptr);
  if (s.op == StepOp::AllocBulk) {
    if (s.to == Dest::EveryTask || s.to == Dest::RoundRobin) {
      co_await alloc_handoff(e, s, b);
      co_return;
    }
    Pool& pool = dest_pool(s, b);
    std::size_t got = co_await b.slub->alloc_bulk(e, cache, objs.size(), objs.data());
    if (got == 0) ++b.alloc_failures;
    b.count(e, s.cache, TaskBinding::kAlloc, got);
    if (pool.shared && got) co_await e.write(pool.line);
    for (std::size_t i = 0; i < got; ++i) pool.push(objs[i], b.task);
  } else {
    Pool& pool = *b.pools[s.pool];
    if (pool.shared) co_await e.write(pool.line);
    std::size_t avail = pool.objects.size() > static_cast<std::size_t>(s.keep) ? pool.objects.size() - s.keep : 0;
    std::size_t n = std::min(objs.size(), avail);
    for (std::size_t i = 0; i < n; ++i) {
      bool own = false;
      objs[i] = pool.pop(b.task, &own);
    }
    b.count(e, s.cache, TaskBinding::kFree, n);
    if (n) co_await b.slub->free_bulk(e, cache, n, objs.data());
  }
}

// The steps run inline in one coroutine frame, lock bodies included: a lock step takes its lock
// and pushes its body on an explicit stack of levels, and the level's end releases the lock. A
// coroutine per step or per lock body would allocate a frame each time, and the steps rarely
// suspend.
Co<void> run_steps(Exec& e, const std::vector<Step>& steps, TaskBinding& b, const Iterations* loop) {
  std::vector<TaskBinding::Level>& levels = b.levels;
  const std::size_t base = levels.size();
  int stalled = 0;  // iterations in a row that took no simulated time
  Time before = e.now();
  if (loop && e.now() >= loop->stop) co_return;
  levels.push_back({steps.data(), steps.data() + steps.size(), nullptr});
  while (levels.size() > base) {
    TaskBinding::Level& level = levels.back();
    if (level.next == level.end) {
      const Step* lock = level.lock;
      levels.pop_back();
      if (!lock) {
        if (!loop) continue;
        // An iteration is over: RCU callbacks whose grace period ended run in this CPU's
        // softirq time, then the next iteration begins, unless the window is over.
        if (end_iteration(e, b, before, loop->ops_per_iteration, stalled)) co_await b.slub->rcu_tick(e);
        if (e.now() >= loop->stop) continue;
        before = e.now();
        levels.push_back({steps.data(), steps.data() + steps.size(), nullptr});
        continue;
      }
      const std::uint32_t id = b.locks[lock->object];
      if (lock->kind == LockKind::Spinlock) co_await e.unlock(SpinLockId{id});
      else if (lock->write) co_await e.up_write(RwsemId{id});
      else co_await e.up_read(RwsemId{id});
      continue;
    }
    const Step& s = *level.next++;
    switch (s.op) {
      case StepOp::Work:
        if (s.exponential)
          e.spend(static_cast<Time>(b.rng.exponential(static_cast<double>(s.ns))));
        else if (s.spread > 0)
          e.spend(static_cast<Time>(static_cast<double>(s.ns) * (1.0 + s.spread * (2.0 * b.rng.uniform() - 1.0))));
        else
          e.spend(s.ns);
        break;
      case StepOp::Touch:
        if (s.write)
          co_await e.write(LineId{b.lines[s.object]});
        else
          co_await e.read(LineId{b.lines[s.object]});
        break;
      case StepOp::Lock: {
        const std::uint32_t id = b.locks[s.object];
        if (s.kind == LockKind::Spinlock) co_await e.lock(SpinLockId{id});
        else if (s.write) co_await e.down_write(RwsemId{id});
        else co_await e.down_read(RwsemId{id});
        levels.push_back({s.body.data(), s.body.data() + s.body.size(), &s});  // `level` is stale now
        break;
      }
      case StepOp::Alloc: {
        if (s.to == Dest::EveryTask || s.to == Dest::RoundRobin) {
          co_await alloc_handoff(e, s, b);
          break;
        }
        slub::KmemCache& cache = *b.caches[s.cache];
        Pool& pool = dest_pool(s, b);
        const int node = s.node == -2 ? e.node() : s.node;
        std::vector<void*>& got = b.scratch;
        got.clear();
        for (int i = 0; i < s.count; ++i) {
          void* obj = b.slub->alloc_fast(e, cache, node);
          if (!obj) obj = co_await b.slub->alloc(e, cache, node, gfp_of(s));
          if (obj) got.push_back(obj);
          else ++b.alloc_failures;
        }
        if (s.each_ns) e.spend(s.each_ns * static_cast<Time>(got.size()));
        b.count(e, s.cache, TaskBinding::kAlloc, got.size());
        // The step's objects enter the pool in one access (a batched enqueue).
        if (pool.shared && !got.empty()) co_await e.write(pool.line);
        for (void* obj : got) pool.push(obj, b.task);
        break;
      }
      case StepOp::Free:
      case StepOp::KfreeRcu:
      case StepOp::CallRcu: {
        slub::KmemCache& cache = *b.caches[s.cache];
        Pool& pool = *b.pools[s.pool];
        std::vector<void*>& objs = b.scratch;
        if (pool.shared) co_await e.write(pool.line);
        take_from_pool(s, pool, objs, b);
        b.count(e, s.cache, s.op == StepOp::Free ? TaskBinding::kFree : TaskBinding::kKfreeRcu, objs.size());
        if (s.each_ns) e.spend(s.each_ns * static_cast<Time>(objs.size()));
        for (void* obj : objs) {
          if (s.op == StepOp::Free) {
            if (!b.slub->free_fast(e, cache, obj)) co_await b.slub->free(e, cache, obj);
          } else if (s.op == StepOp::CallRcu) {
            b.slub->call_rcu_free(e, cache, obj);
          } else if (!b.slub->kfree_rcu_fast(e, cache, obj)) {
            co_await b.slub->kfree_rcu(e, cache, obj);
          }
        }
        break;
      }
      case StepOp::AllocBulk:
      case StepOp::FreeBulk:
        co_await bulk(e, s, b);
        break;
      case StepOp::Prefill:
      case StepOp::AllocFromSheaf:
      case StepOp::ReturnSheaf:
        co_await prefilled(e, s, b);
        break;
    }
  }
}

bool steps_keep_objects(const std::vector<Step>& steps) {
  for (const Step& s : steps)
    if (s.to != Dest::Own || !steps_keep_objects(s.body)) return false;
  return true;
}

}  // namespace

bool objects_stay_on_cpu(const Program& p, Mode mode) {
  if (!p.roles.empty()) return false;
  for (const auto& decl : p.pools)
    if (decl.handoff || reach_of(decl.scope, mode) != Reach::OneCpu) return false;
  return steps_keep_objects(p.steps);
}

BoundProgram bind_program(const Program& p, Shared& shared, Mode mode,
                          const std::vector<int>& task_node, int nr_nodes, slub::Slub* slub) {
  BoundProgram bound;
  auto& out = bound.tasks;
  out.resize(task_node.size());
  // Instances are created in declaration order, then by key, so ids are deterministic.
  for (const auto& decl : p.locks)
    bind_scope(decl.scope, mode, task_node, out, &TaskBinding::locks,
               [&](const std::string& name, int home) {
                 return decl.kind == LockKind::Spinlock
                            ? shared.new_spinlock(decl.name, name, home, reach_of(decl.scope, mode)).v
                            : shared.new_rwsem(decl.name, name, home, reach_of(decl.scope, mode)).v;
               });
  for (const auto& decl : p.lines)
    bind_scope(decl.scope, mode, task_node, out, &TaskBinding::lines,
               [&](const std::string&, int home) { return shared.new_line(decl.name, home, reach_of(decl.scope, mode)).v; });
  for (const auto& decl : p.pools) {
    // One instance per key; node-scoped pools get every node's instance so that `next-node`
    // has a target even where no task runs.
    std::map<int, Pool*> made;
    auto instance = [&](int key) {
      auto it = made.find(key);
      if (it == made.end()) {
        auto pool = std::make_unique<Pool>();
        pool->tagged = decl.handoff;
        pool->limit = static_cast<std::size_t>(decl.limit);
        pool->full = decl.full;
        pool->shared = decl.handoff || reach_of(decl.scope, mode) == Reach::Shared;
        if (pool->shared)
          pool->line = shared.new_line("pool", home_node(decl.scope, key, task_node[0]));
        bound.pools.push_back(std::move(pool));
        it = made.emplace(key, bound.pools.back().get()).first;
      }
      return it->second;
    };
    for (std::size_t t = 0; t < task_node.size(); ++t) {
      int key = instance_key(decl.scope, mode, static_cast<int>(t), task_node[t]);
      out[t].pools.push_back(instance(key));
      out[t].next_pools.push_back(decl.scope == Scope::Node ? instance((task_node[t] + 1) % nr_nodes)
                                                            : instance(key));
    }
    const std::vector<Pool*>* by_task = nullptr;
    if (decl.handoff) {
      bound.by_task.push_back(std::make_unique<std::vector<Pool*>>());
      for (auto& t : out) bound.by_task.back()->push_back(t.pools.back());
      by_task = bound.by_task.back().get();
    }
    for (auto& t : out) {
      t.task_pools.push_back(by_task);
      t.round_robin.push_back(0);
    }
  }
  for (std::size_t t = 0; t < out.size(); ++t) {
    out[t].task = static_cast<int>(t);
    out[t].nr_task = static_cast<int>(out.size());
    out[t].groups = p.groups;
    out[t].instance = static_cast<int>(t);
  }
  bound.object_ops = std::make_unique<std::vector<Ledger<ObjectOps>>>(p.caches.size());
  for (auto& t : out) {
    t.slub = slub;
    t.sheaves.assign(p.caches.size(), nullptr);
    t.object_ops = bound.object_ops.get();
    for (const auto& name : p.caches) {
      slub::KmemCache* c = slub ? slub->find(name) : nullptr;
      if (!c) throw std::invalid_argument("workload uses cache '" + name + "' which is not configured");
      t.caches.push_back(c);
    }
  }
  return bound;
}

namespace {

void stalled_program(int stalled, int cpu) {
  throw StalledProgram(fmt::format(
      "an iteration of the program takes no simulated time ({} in a row on CPU {}): the run could never "
      "end. Every iteration needs work, an access or an allocator call that happens (a free from an "
      "empty pool does nothing)",
      stalled, cpu));
}

// The roles of a program time-share the task's CPU (Program::roles), for each of the CPU's
// copies (Program::tasks_per_cpu) in turn: each runs iterations until its slice is used up, it
// would wait on an empty pool or a hand-off blocks, then the next process gets the CPU. The
// CPU switches at iteration boundaries only, where a process would reach schedule() (a blocking
// recv, or the tick finding its slice used up: kernel/sched/fair.c update_curr / resched_curr).
// Where the kernel's scheduler lets a woken sleeper preempt (Kernel::wakeup_preempts: CFS, up
// to 6.5), a process woken by a push into its empty pool takes the CPU at the next boundary,
// and the CPU goes back to the process it preempted when the woken ones wait again
// (check_preempt_wakeup, then the last buddy in pick_next_entity). Under EEVDF (6.6 on,
// RUN_TO_PARITY) the woken process waits for its turn.
Co<void> run_roles(Exec& exec, const Program& p, std::vector<TaskBinding*> copies, const Time& stop,
                   bool wakeup_preempts) {
  // The CPU's processes in turn: copy k's role r is turn k * roles + r.
  const int n = static_cast<int>(p.roles.size());
  const int turns = n * static_cast<int>(copies.size());
  std::deque<int>* woken = nullptr;
  if (wakeup_preempts) {
    woken = &copies.front()->woken;
    for (int t = 0; t < turns; ++t) {
      const Role& role = p.roles[static_cast<std::size_t>(t % n)];
      if (role.wait_pool < 0) continue;
      Pool& pool = *copies[static_cast<std::size_t>(t / n)]->pools[static_cast<std::size_t>(role.wait_pool)];
      // A task's own pool has one waiter; a pool of a wider scope is not the task's socket.
      if (p.pools[static_cast<std::size_t>(role.wait_pool)].scope != Scope::Task || pool.woken) continue;
      pool.woken = woken;
      pool.wake_turn = t;
    }
  }
  int i = 0, stalled = 0;
  int preempted = -1;  // the turn a woken process took the CPU from
  Time turn_began = exec.now();
  while (exec.now() < stop) {
    const Role& role = p.roles[static_cast<std::size_t>(i % n)];
    TaskBinding& b = *copies[static_cast<std::size_t>(i / n)];
    bool waits = false;
    if (role.wait_pool >= 0) {
      Pool& pool = *b.pools[static_cast<std::size_t>(role.wait_pool)];
      if (pool.shared) co_await exec.read(pool.line);
      waits = pool.objects.empty();
    }
    if (!waits) {
      const Time before = exec.now();
      b.own_taken = 0;
      b.blocked = false;
      b.instance = (b.task + role.instance) % b.nr_task;
      co_await run_steps(exec, role.steps, b);
      const std::uint64_t ops = static_cast<std::uint64_t>(role.ops_per_iteration) + b.own_taken;
      if (end_iteration(exec, b, before, ops, stalled)) co_await b.slub->rcu_tick(exec);
    }
    // A woken process other than the one running preempts it at this boundary.
    while (woken && !woken->empty() && woken->front() == i) woken->pop_front();
    const bool wake = woken && !woken->empty();
    if (wake || waits || b.blocked || exec.now() - turn_began >= p.slice) {
      if (wake) {
        if (preempted < 0 && !waits && !b.blocked) preempted = i;
        i = woken->front();
        woken->pop_front();
      } else if (preempted >= 0) {
        i = preempted;
        preempted = -1;
      } else {
        i = (i + 1) % turns;
      }
      exec.spend(p.switch_ns);
      turn_began = exec.now();
    }
  }
}

}  // namespace

Co<void> run_task(Exec& exec, const Program& p, std::vector<TaskBinding*> copies, const Time& stop,
                  bool wakeup_preempts) {
  if (!p.roles.empty()) {
    co_await run_roles(exec, p, std::move(copies), stop, wakeup_preempts);
    co_return;
  }
  const Iterations loop{stop, static_cast<std::uint64_t>(p.ops_per_iteration)};
  co_await run_steps(exec, p.steps, *copies.front(), &loop);
}

}  // namespace slubsim
