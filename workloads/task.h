// Running a Program as one task: the will-it-scale loop.
#pragma once
#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <stdexcept>
#include <vector>

#include "models/co.h"
#include "models/exec.h"
#include "models/ledger.h"
#include "models/random.h"
#include "models/slub/slub.h"
#include "workloads/program.h"

namespace slubsim {

// The per-task will-it-scale counter: iterations by the interval of the run's grid in which they
// complete (models/ledger.h), so that a window's count is the iterations completed inside it.
struct Counter {
  const Grid* grid = &kWholeRun;
  Ledger<std::uint64_t> ops;
  std::uint64_t total = 0;
  void add(Time t, std::uint64_t n) {
    total += n;
    ops.at_time(*grid, t) += n;
  }
};

// A FIFO of object pointers: a ring that doubles when full (a deque allocates a block every few
// hundred pushes, and pools turn over millions of objects per simulation). The first kInline
// slots are inside the FIFO: a task's own pools hold a handful of objects, and their ring then
// sits on the pool's own host cache lines instead of a block of its own.
class ObjectFifo {
 public:
  ObjectFifo() = default;
  ObjectFifo(const ObjectFifo&) = delete;
  ObjectFifo& operator=(const ObjectFifo&) = delete;

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  void* front() const noexcept { return ring()[head_]; }
  void pop_front() noexcept {
    head_ = (head_ + 1) & (capacity_ - 1);
    --size_;
  }
  void push_back(void* p) {
    if (size_ == capacity_) grow();
    ring()[(head_ + size_) & (capacity_ - 1)] = p;
    ++size_;
  }

 private:
  static constexpr std::uint32_t kInline = 8;  // a power of two
  void* const* ring() const noexcept { return big_ ? big_.get() : small_.data(); }
  void** ring() noexcept { return big_ ? big_.get() : small_.data(); }
  void grow() {
    const std::uint32_t n = big_ ? capacity_ * 2 : 64;
    auto bigger = std::make_unique<void*[]>(n);
    for (std::uint32_t i = 0; i < size_; ++i) bigger[i] = ring()[(head_ + i) & (capacity_ - 1)];
    big_ = std::move(bigger);
    capacity_ = n;
    head_ = 0;
  }

  std::uint32_t head_ = 0, size_ = 0;
  std::uint32_t capacity_ = kInline;  // of the ring in use, a power of two
  std::array<void*, kInline> small_{};
  std::unique_ptr<void*[]> big_;  // once the ring outgrows small_
};

// A FIFO of allocated objects. Pools shared between tasks have a cache line: every push and pop
// is a shared access, made in global time order and priced like any contended line.
struct Pool {
  ObjectFifo objects;
  LineId line;
  bool shared = false;
  // A pool that takes hand-offs remembers which task put each object in (1 + task index), so a
  // reader can count its own (stress-ng's server counts only its instance's packets).
  bool tagged = false;
  ObjectFifo senders;
  std::size_t limit = 0;  // PoolDecl::limit
  PoolDecl::Full full = PoolDecl::Full::Drop;
  // A role that waits on this pool (Kernel::wakeup_preempts): a push into the empty pool
  // queues its turn on its CPU's list of woken processes (try_to_wake_up).
  std::deque<int>* woken = nullptr;
  int wake_turn = -1;
  bool full_now() const { return limit && objects.size() >= limit; }
  void push(void* obj, int from_task) {
    if (woken && objects.empty()) woken->push_back(wake_turn);
    objects.push_back(obj);
    if (tagged) senders.push_back(reinterpret_cast<void*>(static_cast<std::uintptr_t>(from_task) + 1));
  }
  // The oldest object; *own is set if `task` put it in.
  void* pop(int task, bool* own) {
    void* obj = objects.front();
    objects.pop_front();
    if (tagged) {
      *own = reinterpret_cast<std::uintptr_t>(senders.front()) == static_cast<std::uintptr_t>(task) + 1;
      senders.pop_front();
    } else {
      *own = true;
    }
    return obj;
  }
};

// Objects allocated, freed and kfree_rcu'd (TaskBinding::ObjectOp order).
struct ObjectOps {
  std::array<std::uint64_t, 3> n{};
  void add(const ObjectOps& o) {
    for (std::size_t k = 0; k < n.size(); ++k) n[k] += o.n[k];
  }
};

// A task's view of the program's shared objects: the instance of each declared lock, line and
// pool that this task uses (chosen by scope), the caches, and its random stream.
struct TaskBinding {
  std::vector<std::uint32_t> locks;  // SpinLockId or RwsemId value, by declaration index
  std::vector<std::uint32_t> lines;
  std::vector<Pool*> pools;          // own instance
  std::vector<Pool*> next_pools;     // the next node's instance (node-scoped pools)
  // Every task's instance, by task index (task-scoped pools that take hand-offs; else null),
  // and where each such pool's round-robin hand-off goes next (an offset in the task's group).
  std::vector<const std::vector<Pool*>*> task_pools;
  std::vector<int> round_robin;
  int task = 0, nr_task = 1, groups = 1;
  std::uint64_t own_taken = 0;  // objects of count_own frees this iteration
  int instance = 0;             // the task whose objects count_own counts (Role::instance)
  std::uint64_t dropped = 0;    // objects freed at once at a full pool (PoolDecl::limit)
  bool blocked = false;         // a hand-off found its pool full (Full::Block): the turn ends
  // The CPU's woken processes, by turn, waiting to preempt (Kernel::wakeup_preempts); kept by
  // the CPU's first copy, which lives as long as the pools that point at it.
  std::deque<int> woken;
  std::vector<slub::KmemCache*> caches;  // by Program::caches index
  slub::Slub* slub = nullptr;
  std::vector<slub::Sheaf*> sheaves;     // a prefilled sheaf held per cache, or null
  // Objects allocated, freed and kfree_rcu'd, per cache and interval (slab traffic per op),
  // summed over all tasks: BoundProgram::object_ops.
  enum ObjectOp { kAlloc, kFree, kKfreeRcu, kNrObjectOps };
  std::vector<Ledger<ObjectOps>>* object_ops = nullptr;
  void count(const Exec& e, int cache, ObjectOp op, std::uint64_t n) {
    (*object_ops)[static_cast<std::size_t>(cache)].at_time(*counter.grid, e.now()).n[op] += n;
  }
  // One step's objects on their way between the pool and the allocator (steps run one at a
  // time, so one buffer serves them all; it keeps its capacity, so steps allocate nothing).
  std::vector<void*> scratch;
  // run_steps' stack of lock bodies being run (workloads/task.cpp); kept for its capacity.
  struct Level {
    const Step* next;
    const Step* end;
    const Step* lock;  // the lock step whose body this is (nullptr: the top)
  };
  std::vector<Level> levels;
  Random rng;
  Counter counter;
  std::uint64_t alloc_failures = 0;
};

// Every instance of a run's shared objects, and each task's binding to them.
struct BoundProgram {
  std::vector<std::unique_ptr<Pool>> pools;
  // Per pool declaration that takes hand-offs, its instance of each task (TaskBinding::task_pools).
  std::vector<std::unique_ptr<std::vector<Pool*>>> by_task;
  // Per cache, all tasks (TaskBinding::object_ops points here; a heap block, so the binding's
  // pointer survives moving the BoundProgram).
  std::unique_ptr<std::vector<Ledger<ObjectOps>>> object_ops;
  std::vector<TaskBinding> tasks;
};

// True if every object the program allocates stays with its CPU until that CPU frees it: no
// roles (they time-share a CPU for different instances), every pool private to its task (or its
// mm in process mode), and no step hands objects to another task's pool
// (slub::Slub::set_cpu_local_objects).
bool objects_stay_on_cpu(const Program& p, Mode mode);

// Instantiate every declared object for a run and bind each task to its instances.
// task_node[i] is the node of task i's CPU. slub may be null for programs without caches.
BoundProgram bind_program(const Program& p, Shared& shared, Mode mode,
                          const std::vector<int>& task_node, int nr_nodes, slub::Slub* slub);

// The task loop: run the program until the task's clock passes `stop`.
// `stop` may move while the task runs (the settle rule ends the window when it is satisfied).
// A program whose iterations take no simulated time would loop forever at one instant; after
// this many in a row run_task throws StalledProgram (the workload is bad input, not the model).
inline constexpr int kMaxStalledIterations = 1 << 20;
class StalledProgram : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// copies: the tasks this CPU runs (Program::tasks_per_cpu of them; one without roles).
// wakeup_preempts: the kernel's scheduler lets a role woken by a push into its empty pool take
// the CPU at once (Kernel::wakeup_preempts; see run_roles).
Co<void> run_task(Exec& exec, const Program& p, std::vector<TaskBinding*> copies, const Time& stop,
                  bool wakeup_preempts = false);

}  // namespace slubsim
