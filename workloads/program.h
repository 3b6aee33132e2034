// A workload program: what one task does, step by step, in every iteration of its loop.
// Programs are data (workloads/*.json, parsed in sim/config/workload_json.cpp); this is their plain form.
//
//   work   {ns, distribution: fixed | exponential}  CPU-private time (a syscall's non-slab part)
//   touch  {line, access: read | write}             a shared cache line
//   lock   {lock, mode: write | read, body: [...]}  hold a lock around the body
//   alloc  {cache, pool, count, node, to}           kmem_cache_alloc(_node) into a pool
//   free   {cache, pool, count, keep, order}        kmem_cache_free of the pool's oldest objects,
//                                                   leaving at least `keep` in the pool; order
//                                                   "shuffled" frees them in a random order
//   (alloc, free, kfree_rcu and call_rcu take `each_ns`: work per object, e.g. a recv per packet)
//   alloc_bulk / free_bulk {cache, pool, count}     kmem_cache_alloc_bulk / kmem_cache_free_bulk
//   kfree_rcu {cache, pool, count, keep}            kfree_rcu of the pool's oldest objects
//   call_rcu {cache, pool, count, keep}             call_rcu per object, whose callback does
//                                                   kmem_cache_free (mt_free_rcu before 9b60811cb3)
//   prefill {cache, count}                          kmem_cache_prefill_sheaf (or _refill_sheaf)
//   alloc_from_sheaf {cache, pool, count}           kmem_cache_alloc_from_sheaf into a pool
//   return_sheaf {cache}                            kmem_cache_return_sheaf
//
// Shared objects are declared with a scope that says who shares them:
//   node   one per NUMA node, homed there; a task uses its own node's
//   global one for the machine, homed on node 0
//   mm     one per address space: per task in process mode, one for all in thread mode
//   task   private to each task
// Object pools are FIFO queues of allocated objects with the same scopes. An allocation's `to`
// says whose instance receives the objects: its own (default), the next node's (`next-node`, so
// CPUs of another node free them), every task's of its group (`every-task`: a packet cloned to
// every socket that matches it) or the next task's of its group in turn (`round-robin`: messages
// to each receiver in turn). The last two are hand-offs between specific tasks: a task's pool
// that others put objects into is a shared cache line (a socket's receive queue).
#pragma once
#include <string>
#include <vector>

#include "models/time.h"

namespace slubsim {

enum class Scope { Node, Global, Mm, Task };
enum class LockKind { Spinlock, Rwsem };
enum class Dest { Own, NextNode, EveryTask, RoundRobin };
enum class StepOp { Work, Touch, Lock, Alloc, Free, AllocBulk, FreeBulk, KfreeRcu, CallRcu, Prefill, AllocFromSheaf, ReturnSheaf };

struct Step {
  StepOp op = StepOp::Work;
  Time ns = 0;               // work
  bool exponential = false;  // work: exponentially distributed with mean ns
  double spread = 0;         // work: uniform in ns * [1 - spread, 1 + spread]
  int object = -1;           // touch: line index; lock: lock index
  bool write = true;         // touch: store; lock: rwsem writer
  LockKind kind = LockKind::Spinlock;  // lock: copied from the declaration
  std::vector<Step> body;    // lock
  int cache = -1;            // alloc/free: index into Program::caches
  int pool = -1;             // alloc/free: pool index
  int count = 1;             // objects per step
  int keep = 0;              // free: leave at least this many objects in the pool
  int node = -1;             // alloc: kmem_cache_alloc_node target, -1 = NUMA_NO_NODE, -2 = local
  bool nowait = false;       // alloc: the caller's gfp may not block ("gfp": "nowait", GFP_NOWAIT)
  Dest to = Dest::Own;       // alloc: whose pool instance receives the objects
  Time each_ns = 0;          // alloc / free: CPU-private work per object moved (a recv per packet)
  bool count_own = false;    // free: one operation per object this task itself put in the pool
  bool shuffled = false;     // free, free_bulk, kfree_rcu, call_rcu: the step's objects in a random
                             // order (T12's shuffled frees), not oldest first
  std::vector<std::string> kernels;  // only in these kernel presets (empty: all)
};

struct PoolDecl {
  std::string name;
  Scope scope = Scope::Task;
  bool handoff = false;  // a step puts objects into other tasks' instances (every-task, round-robin)
  // The most objects an instance holds (0: no limit). A hand-off into a full instance frees its
  // objects at once on the allocating CPU: a packet dropped at a full receive queue
  // (sock_queue_rcv_skb against sk_rcvbuf, kfree_skb in the sender's softirq).
  int limit = 0;
  // What a hand-off into a full instance does: drop (allocate, then free at once: raw_v4_input
  // clones before sock_queue_rcv_skb's check in 6.6), skip (allocate nothing: packet_rcv checks
  // sk_rcvbuf before cloning), or block (allocate nothing and end the role's turn after this
  // iteration: an AF_UNIX writer over its sndbuf sleeps in sock_alloc_send_pskb).
  enum class Full { Drop, Skip, Block } full = Full::Drop;
};

// One of the processes that share a task's CPU (stress-ng's client and server, a hackbench
// sender and receiver). A program with roles runs them in turn, as the scheduler time-shares
// runnable processes on a CPU: a role runs iterations of its steps until its slice is used up or
// it would block (`wait`: its own instance of that pool is empty, a reader with nothing to read),
// and the CPU then switches to the next role (Program::switch_ns).
struct Role {
  std::string name;
  int ops_per_iteration = 0;  // counted per iteration, besides a free step's count_own objects
  int wait_pool = -1;
  // The role acts for the instance of task (task + instance) mod nr_task: its count_own frees
  // count the objects that task put in. An instance's two processes are both runnable all the
  // time, so the scheduler runs them on different CPUs; roles of one task then belong to
  // different instances.
  int instance = 0;
  std::vector<Step> steps;
};

struct LockDecl {
  std::string name;
  LockKind kind = LockKind::Spinlock;
  Scope scope = Scope::Node;
};

struct LineDecl {
  std::string name;
  Scope scope = Scope::Node;
};


// A named time of the program ("parameters"), with where its value came from.
struct ProgramParameter {
  std::string name;
  Time ns = 0;
  std::string source;
  // The source calls it a placeholder: not measured or fitted on any machine (VALIDATION.md:
  // class-4 non-slab time is fitted per machine; a run without a fit says so).
  bool placeholder = false;
};

struct Program {
  std::string name;
  std::string file;
  std::string description;
  int ops_per_iteration = 1;  // will-it-scale counter step (brk1 counts 2 per loop)
  std::vector<LockDecl> locks;
  std::vector<LineDecl> lines;
  std::vector<PoolDecl> pools;
  std::vector<std::string> caches;      // cache names the steps use
  std::vector<std::string> cache_paths; // where each is first named in the file (for errors)
  std::vector<Step> steps;       // without roles: the one loop every task runs
  std::vector<Role> roles;       // with roles: the processes each task's CPU time-shares
  Time slice = 0;                // with roles: a role's turn on the CPU (the scheduler's slice)
  Time switch_ns = 0;            // with roles: the CPU's cost of switching between them
  int groups = 1;                // every-task and round-robin hand-offs stay in the task's group
  // With roles: how many copies of the role set each CPU time-shares, each its own task for
  // pools, groups and hand-offs (hackbench -g 16 on 8 CPUs runs 40 sender/receiver pairs on
  // each). Copy k of CPU t is task k * nr_task + t, so a group of consecutive tasks spreads
  // over the CPUs as the load balancer spreads hackbench's processes.
  int tasks_per_cpu = 1;
  std::vector<ProgramParameter> parameters;
};

// Every step list of a program: its loop, or each role's.
std::vector<const std::vector<Step>*> step_lists(const Program& p);

enum class Mode { Process, Thread };

// The tasks of task `t`'s group when `nr_task` tasks form `groups` contiguous groups:
// [first, last). Group g holds tasks ceil(g * n / G) .. ceil((g + 1) * n / G) - 1.
struct TaskGroup {
  int first = 0, last = 0;
};
inline TaskGroup task_group(int t, int nr_task, int groups) {
  const int g = groups <= 1 ? 0 : static_cast<int>(static_cast<long long>(t) * groups / nr_task);
  const int G = groups <= 1 ? 1 : groups;
  auto edge = [&](int k) { return static_cast<int>((static_cast<long long>(k) * nr_task + G - 1) / G); };
  TaskGroup r{edge(g), edge(g + 1)};
  if (t < r.first || t >= r.last) r = {t, t + 1};  // more groups than tasks: alone
  return r;
}

// The program as a given kernel preset runs it: steps limited to other kernels removed.
Program select_kernel(const Program& p, const std::string& kernel);

// A step that puts objects into its pool (alloc, alloc_bulk, alloc_from_sheaf), and one that
// takes them out of it (free, free_bulk, kfree_rcu, call_rcu).
inline bool fills_its_pool(const Step& s) {
  return s.op == StepOp::Alloc || s.op == StepOp::AllocBulk || s.op == StepOp::AllocFromSheaf;
}
inline bool takes_from_its_pool(const Step& s) {
  return s.op == StepOp::Free || s.op == StepOp::FreeBulk || s.op == StepOp::KfreeRcu || s.op == StepOp::CallRcu;
}

// True if a step of `steps` (lock bodies included) allocates into pool `pool`.
bool fills_pool(const std::vector<Step>& steps, int pool);
// True if a step of any of the program's step lists does.
bool program_fills_pool(const Program& p, int pool);
// The first pool a step frees from (free, free_bulk, kfree_rcu, call_rcu) that no step fills, or
// -1. Such a free frees nothing, forever: an iteration of the program would take no time.
int unfilled_pool(const Program& p);

}  // namespace slubsim
