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

Co<void> run_locked(Exec& e, const Step& s, TaskBinding& b) {
  std::uint32_t id = b.locks[s.object];
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
}

Co<void> run_steps(Exec& e, const std::vector<Step>& steps, TaskBinding& b) {
  for (const Step& s : steps) {
    switch (s.op) {
      case StepOp::Work:
        e.spend(s.exponential ? static_cast<Time>(b.rng.exponential(static_cast<double>(s.ns)))
                              : s.ns);
        break;
      case StepOp::Touch:
        if (s.write)
          co_await e.write(LineId{b.lines[s.object]});
        else
          co_await e.read(LineId{b.lines[s.object]});
        break;
      case StepOp::Lock:
        co_await run_locked(e, s, b);
        break;
    }
  }
}

}  // namespace

std::vector<TaskBinding> bind_program(const Program& p, Shared& shared, Mode mode,
                                      const std::vector<int>& task_node) {
  std::vector<TaskBinding> out(task_node.size());
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
  return out;
}

Co<void> run_task(Exec& exec, const Program& p, TaskBinding& b, Time stop) {
  while (exec.now() < stop) {
    co_await run_steps(exec, p.steps, b);
    b.counter.add(exec.now(), static_cast<std::uint64_t>(p.ops_per_iteration));
  }
}

}  // namespace slubsim
