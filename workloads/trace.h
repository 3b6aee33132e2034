// Trace replay: instead of a program, each task replays the allocations and frees one CPU made
// in a captured trace (docs/trace-format.md), at the trace's timestamps, against the slub model.
//
// A Trace is read and checked in sim/config/trace_import.cpp: frees are already matched to their
// allocations, caches resolved to configured ones, and CPUs numbered 0..C-1.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/co.h"
#include "models/exec.h"
#include "models/time.h"
#include "workloads/task.h"

namespace slubsim {

enum class TraceOp : std::uint8_t { Alloc, Free, KfreeRcu };

struct TraceEvent {
  Time at = 0;               // since the trace's first event
  std::uint32_t object = 0;  // the allocation: an alloc and the free that ends it share it
  std::int32_t peer = -1;    // cross-CPU object: the trace CPU at the other end, else -1
  std::uint32_t seq = 0;     // place in the whole trace's time order (ties: file order)
  std::uint16_t cache = 0;   // index into Trace::caches
  TraceOp op = TraceOp::Alloc;
  bool freed = false;        // alloc: the trace frees the object (else it stays allocated)
};

// What reading the file counted and left out (docs/trace-format.md, "What is skipped").
struct TraceStats {
  std::uint64_t lines = 0;           // lines read
  std::uint64_t other_lines = 0;     // ftrace: headers, comments and other events, skipped
  std::uint64_t lost_events = 0;     // ftrace: events the ring buffer dropped ("[LOST N EVENTS]")
  std::uint64_t null_allocs = 0;     // ftrace: failed allocations (ptr NULL) and kmalloc(0)
  std::uint64_t null_frees = 0;      // ftrace: kfree(NULL)
  std::uint64_t reused_ptrs = 0;     // ftrace: a live pointer allocated again (its free was not traced)
  std::uint64_t unknown_frees = 0;   // frees of objects not allocated in the trace
  std::uint64_t by_size = 0;         // allocations placed in a kmalloc cache by their size
  std::uint64_t too_large = 0;       // allocations larger than every kmalloc cache (dropped, with their frees)
  std::map<std::string, std::uint64_t> unconfigured;  // ftrace cache names placed by size
};

struct Trace {
  std::string file;
  std::vector<std::string> caches;             // configured cache names the events use
  std::vector<int> cpu_ids;                    // trace CPU i's number in the captured trace
  std::vector<std::vector<TraceEvent>> cpus;   // per trace CPU, in time order
  std::vector<std::vector<int>> peers;         // per trace CPU: CPUs it hands objects to or gets them from
  std::uint32_t nr_objects = 0;
  Time span = 0;    // time of the last event
  Time period = 0;  // one pass: span plus the trace's mean gap between events
  TraceStats stats;
  std::uint64_t nr_events() const;
  std::uint64_t count(TraceOp op) const;
};

// How the trace's C CPUs become the run's N tasks.
//   replicated: task j replays trace CPU j mod C, in replica j / C (each replica its own objects);
//               with N < C the first N CPUs are replayed.
//   mapped:     trace CPU i is replayed by task i mod N (N < C merges several CPUs onto one
//               task, in time order); N > C is refused when the job is resolved.
enum class TraceMap { Replicated, Mapped };

struct TraceReplay {
  TraceMap map = TraceMap::Replicated;
  double speed = 1.0;  // timestamps divided by this; 0 = no waiting, events back to back
  Time handoff_poll = 0;  // how often a free waiting for another task's allocation re-reads
                          // the hand-off line (configs/costs: trace.handoff_poll_ns)
};

// One task's share of a replay.
struct TraceTask {
  std::vector<int> cpus;  // trace CPUs it replays (one unless mapped with N < C)
  int replica = 0;
  double work_factor = 1.0;          // the CPU's private-work factor (SMT), so waits stay exact
  std::vector<int> peer_task;        // by peer trace CPU: the task replaying it here, or -1
  std::vector<LineId> to_line;       // by peer trace CPU: objects this task hands to the peer
  std::vector<LineId> from_line;     // by peer trace CPU: objects the peer hands to this task
  // Objects this task will free, by (pass << 32 | object), from their allocation on (null: the
  // allocation failed).
  std::unordered_map<std::uint64_t, void*> inbox;
  std::uint64_t skipped_frees = 0;   // frees whose object never came (see BoundTrace)
};

// A run's replay. An object lives in the inbox of the task that frees it between its allocation
// and its free. A free of an object another task allocates waits (polling the hand-off line)
// until that allocation has happened in simulated time; it is skipped, and counted, if no task
// replays the allocating CPU, the allocation failed, or the run ends first.
struct BoundTrace {
  const Trace* trace = nullptr;
  TraceReplay replay;
  std::vector<TraceTask> tasks;
};

// Assign trace CPUs to tasks and make the cache lines that carry cross-CPU objects (one per
// directed pair of tasks, homed on the allocating task's node).
BoundTrace bind_trace(const Trace& t, const TraceReplay& replay, Shared& shared,
                      const std::vector<int>& task_node);

// The task loop of a replay: events at their timestamps, the trace again (shifted by its
// period) until `stop`. b supplies the slub model, the caches (by Trace::caches index), the
// counter (one per event replayed) and the allocation-failure count.
Co<void> replay_trace(Exec& e, BoundTrace& bt, int task, TaskBinding& b, const Time& stop);

}  // namespace slubsim
