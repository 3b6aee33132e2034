// A workload program: what one task does, step by step, in every iteration of its loop.
// Programs are data (workloads/*.json, parsed in sim/workload_json.cpp); this is their plain form.
//
//   work   {ns, distribution: fixed | exponential}  CPU-private time (a syscall's non-slab part)
//   touch  {line, access: read | write}             a shared cache line
//   lock   {lock, mode: write | read, body: [...]}  hold a lock around the body
//
// Shared objects are declared with a scope that says who shares them:
//   node   one per NUMA node, homed there; a task uses its own node's
//   global one for the machine, homed on node 0
//   mm     one per address space: per task in process mode, one for all in thread mode
//   task   private to each task
#pragma once
#include <string>
#include <vector>

#include "models/time.h"

namespace slubsim {

enum class Scope { Node, Global, Mm, Task };
enum class LockKind { Spinlock, Rwsem };
enum class StepOp { Work, Touch, Lock };

struct Step {
  StepOp op = StepOp::Work;
  Time ns = 0;               // work
  bool exponential = false;  // work: exponentially distributed with mean ns
  int object = -1;           // touch: line index; lock: lock index
  bool write = true;         // touch: store; lock: rwsem writer
  LockKind kind = LockKind::Spinlock;  // lock: copied from the declaration
  std::vector<Step> body;    // lock
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

struct Program {
  std::string name;
  std::string file;
  std::string description;
  int ops_per_iteration = 1;  // will-it-scale counter step (brk1 counts 2 per loop)
  std::vector<LockDecl> locks;
  std::vector<LineDecl> lines;
  std::vector<Step> steps;
};

enum class Mode { Process, Thread };

}  // namespace slubsim
