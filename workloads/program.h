// A workload program: what one task does, step by step, in every iteration of its loop.
// Programs are data (workloads/*.json, parsed in sim/config/workload_json.cpp); this is their plain form.
//
//   work   {ns, distribution: fixed | exponential}  CPU-private time (a syscall's non-slab part)
//   touch  {line, access: read | write}             a shared cache line
//   lock   {lock, mode: write | read, body: [...]}  hold a lock around the body
//   alloc  {cache, pool, count, node, to}           kmem_cache_alloc(_node) into a pool
//   free   {cache, pool, count, keep}               kmem_cache_free of the pool's oldest objects,
//                                                   leaving at least `keep` in the pool
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
// Object pools are FIFO queues of allocated objects with the same scopes; `to: next-node` puts
// objects into the pool of the next node, so they are freed by CPUs of another node.
#pragma once
#include <string>
#include <vector>

#include "models/time.h"

namespace slubsim {

enum class Scope { Node, Global, Mm, Task };
enum class LockKind { Spinlock, Rwsem };
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
  bool to_next_node = false; // alloc: into the next node's pool instance
  std::vector<std::string> kernels;  // only in these kernel presets (empty: all)
};

struct PoolDecl {
  std::string name;
  Scope scope = Scope::Task;
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
  std::vector<Step> steps;
  std::vector<ProgramParameter> parameters;
};

enum class Mode { Process, Thread };

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
// The first pool a step frees from (free, free_bulk, kfree_rcu, call_rcu) that no step fills, or
// -1. Such a free frees nothing, forever: an iteration of the program would take no time.
int unfilled_pool(const Program& p);

}  // namespace slubsim
