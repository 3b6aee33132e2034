#include "workloads/task.h"

#include <fmt/format.h>
#include <map>

namespace slubsim {

namespace {

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

Co<void> run_steps(Exec& e, const std::vector<Step>& steps, TaskBinding& b);

// Take up to `count` of the pool's oldest objects, leaving `keep`, into objs. A shared pool is
// one access for the whole step (a batched dequeue), which the caller makes first.
void take_from_pool(const Step& s, Pool& pool, std::vector<void*>& objs) {
  objs.clear();
  while (objs.size() < static_cast<std::size_t>(s.count) &&
         pool.objects.size() > static_cast<std::size_t>(s.keep)) {
    objs.push_back(pool.objects.front());
    pool.objects.pop_front();
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
      Pool& pool = s.to_next_node ? *b.next_pools[s.pool] : *b.pools[s.pool];
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
      for (void* obj : got) pool.objects.push_back(obj);
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
    Pool& pool = s.to_next_node ? *b.next_pools[s.pool] : *b.pools[s.pool];
    std::size_t got = co_await b.slub->alloc_bulk(e, cache, objs.size(), objs.data());
    if (got == 0) ++b.alloc_failures;
    b.count(e, s.cache, TaskBinding::kAlloc, got);
    if (pool.shared && got) co_await e.write(pool.line);
    for (std::size_t i = 0; i < got; ++i) pool.objects.push_back(objs[i]);
  } else {
    Pool& pool = *b.pools[s.pool];
    if (pool.shared) co_await e.write(pool.line);
    std::size_t avail = pool.objects.size() > static_cast<std::size_t>(s.keep) ? pool.objects.size() - s.keep : 0;
    std::size_t n = std::min(objs.size(), avail);
    for (std::size_t i = 0; i < n; ++i) {
      objs[i] = pool.objects.front();
      pool.objects.pop_front();
    }
    b.count(e, s.cache, TaskBinding::kFree, n);
    if (n) co_await b.slub->free_bulk(e, cache, n, objs.data());
  }
}

// The steps run inline in one coroutine frame, lock bodies one level down: a call per step
// would allocate a frame per step, and the steps rarely suspend.
Co<void> run_steps(Exec& e, const std::vector<Step>& steps, TaskBinding& b) {
  for (const Step& s : steps) {
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
        if (s.kind == LockKind::Spinlock) {
          co_await e.lock(SpinLockId{id});
          co_await run_steps(e, s.body, b);
          co_await e.unlock(SpinLockId{id});
        } else if (s.write) {
          co_await e.down_write(RwsemId{id});
          co_await run_steps(e, s.body, b);
          co_await e.up_write(RwsemId{id});
        } else {
          co_await e.down_read(RwsemId{id});
          co_await run_steps(e, s.body, b);
          co_await e.up_read(RwsemId{id});
        }
        break;
      }
      case StepOp::Alloc: {
        slub::KmemCache& cache = *b.caches[s.cache];
        Pool& pool = s.to_next_node ? *b.next_pools[s.pool] : *b.pools[s.pool];
        const int node = s.node == -2 ? e.node() : s.node;
        std::vector<void*>& got = b.scratch;
        got.clear();
        for (int i = 0; i < s.count; ++i) {
          void* obj = b.slub->alloc_fast(e, cache, node);
          if (!obj) obj = co_await b.slub->alloc(e, cache, node);
          if (obj) got.push_back(obj);
          else ++b.alloc_failures;
        }
        b.count(e, s.cache, TaskBinding::kAlloc, got.size());
        // The step's objects enter the pool in one access (a batched enqueue).
        if (pool.shared && !got.empty()) co_await e.write(pool.line);
        for (void* obj : got) pool.objects.push_back(obj);
        break;
      }
      case StepOp::Free:
      case StepOp::KfreeRcu:
      case StepOp::CallRcu: {
        slub::KmemCache& cache = *b.caches[s.cache];
        Pool& pool = *b.pools[s.pool];
        std::vector<void*>& objs = b.scratch;
        if (pool.shared) co_await e.write(pool.line);
        take_from_pool(s, pool, objs);
        b.count(e, s.cache, s.op == StepOp::Free ? TaskBinding::kFree : TaskBinding::kKfreeRcu, objs.size());
        for (void* obj : objs) {
          if (s.op == StepOp::Free) {
            if (!b.slub->free_fast(e, cache, obj)) co_await b.slub->free(e, cache, obj);
          } else if (s.op == StepOp::CallRcu) {
            b.slub->call_rcu_free(e, cache, obj);
          } else {
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

}  // namespace

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
                            ? shared.new_spinlock(decl.name, name, home).v
                            : shared.new_rwsem(decl.name, name, home).v;
               });
  for (const auto& decl : p.lines)
    bind_scope(decl.scope, mode, task_node, out, &TaskBinding::lines,
               [&](const std::string&, int home) { return shared.new_line(decl.name, home).v; });
  for (const auto& decl : p.pools) {
    // One instance per key; node-scoped pools get every node's instance so that `next-node`
    // has a target even where no task runs.
    std::map<int, Pool*> made;
    auto instance = [&](int key) {
      auto it = made.find(key);
      if (it == made.end()) {
        auto pool = std::make_unique<Pool>();
        pool->shared = decl.scope != Scope::Task && !(decl.scope == Scope::Mm && mode == Mode::Process);
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

Co<void> run_task(Exec& exec, const Program& p, TaskBinding& b, const Time& stop) {
  int stalled = 0;  // iterations in a row that took no simulated time
  while (exec.now() < stop) {
    const Time before = exec.now();
    co_await run_steps(exec, p.steps, b);
    if (exec.now() != before) {
      stalled = 0;
    } else if (++stalled == kMaxStalledIterations) {
      throw StalledProgram(fmt::format(
          "an iteration of the program takes no simulated time ({} in a row on CPU {}): the run could never "
          "end. Every iteration needs work, an access or an allocator call that happens (a free from an "
          "empty pool does nothing)",
          stalled, exec.cpu()));
    }
    b.counter.add(exec.now(), static_cast<std::uint64_t>(p.ops_per_iteration));
    // RCU callbacks whose grace period ended run in this CPU's softirq time.
    if (b.slub && b.slub->rcu_tick_due(exec)) co_await b.slub->rcu_tick(exec);
  }
}

}  // namespace slubsim
