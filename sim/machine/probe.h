// `slubsim probe`: measures, on the machine it runs on, what the topology's latency classes stand
// for (docs/topology-format.md, "Distance classes"):
//   transfer  the one-way cache-line transfer time between two CPUs of a class: two threads
//             pinned to them pass one line back and forth with atomic compare-and-swaps (each
//             success pulls the line in exclusive state), as published core-to-core latency tools
//             do; a round trip is two transfers. The line's page is first touched by a CPU of
//             the socket that should home it (socket_remote_home: the other socket).
//   hand-off  the time from one release of a contended queued (MCS) spinlock to the next
//             acquisition, with 2, 4, ... waiters spread over CPUs of the class, each holding the
//             lock for an increment of a counter on its own line.
// CPU pairs are sampled, not all N^2: per class up to `per_class` candidates spread evenly over
// the machine in CPU order, so a 512-CPU box takes about a minute. Each figure is the median of
// its samples with their 5th and 95th percentiles.
//
// What a ping-pong cannot tell apart: across sockets a round trip is one transfer homed on the
// owner's socket and one homed on the requester's, so cross_socket and cross_socket_reader_home
// get the same figure, the round trip's half, and say so. Memory latency (dram_*) is not a
// transfer between caches and is not measured.
#pragma once
#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "sim/machine/machine.h"

namespace slubsim {

struct ProbePair {
  int a = 0, b = 0;  // the CPUs passing the line
  int home = 0;      // the CPU that first touches the line's page (its node homes it)
};

struct ProbeClassPlan {
  Distance cls = Distance::Llc;
  std::vector<ProbePair> pairs;       // empty: not measurable here (why_none says why)
  std::vector<std::vector<int>> waiter_sets;  // CPUs for 2, 4, ... waiters, each set inside the class
  std::string why_none;
};

// Which pairs and waiter sets measure each class on `m` (every class listed, in enum order).
std::vector<ProbeClassPlan> probe_plan(const Machine& m, int per_class);

struct ProbeFigure {
  double median_ns = 0, p5_ns = 0, p95_ns = 0;
  std::size_t samples = 0;
};

struct ProbeClassResult {
  Distance cls = Distance::Llc;
  std::optional<ProbeFigure> transfer;
  int pairs = 0;
  std::vector<std::pair<int, ProbeFigure>> handoff;  // (waiters, figure)
  std::string not_measured;  // why, when transfer is absent
  std::string note;          // e.g. the cross-socket pair measured together
};

struct ProbeOptions {
  int per_class = 8;          // pairs (and waiter sets) per class at most
  int samples = 9;            // samples per pair
  int round_trips = 2000;     // per sample
  double handoff_ms = 20;     // per hand-off sample
  const std::atomic<bool>* stop = nullptr;  // set: end at the next sample, measure no more
};

// Measure the plan. Throws std::runtime_error if stopped (nothing is kept).
std::vector<ProbeClassResult> run_probe(const Machine& m, const std::vector<ProbeClassPlan>& plan,
                                        const ProbeOptions& o);

}  // namespace slubsim
