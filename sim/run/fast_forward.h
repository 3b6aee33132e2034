// Fast-forward: a point's long transient run under functional timing (sim/engine/world.h), the
// allocator's state evolving as in detailed timing at a fraction of the cost, then detailed
// timing for the settle rule's warm-up and window (docs/design.md, Fast-forward).
//
// The schedule, in simulated time from 0:
//   [0, pilot)                      detailed: the first slabs, the first grace periods; its second
//                                   half gives each task's iteration rate
//   [pilot, until)                  functional, each task paced at its detailed rate, except
//     [s, s + sample) every `every` detailed samples that add to the rates' measure; the rate
//                                   is over all samples so far (one sample can fall in a stall of
//                                   a limit cycle), and each gap between iteration starts is drawn
//                                   from those the samples saw (Exec::pace_iteration)
//   [until, ...)                    detailed; the settle rule's window starts no sooner than
//                                   `until` plus its own minimum warm-up
// As SMARTS and gem5's fast-forward do for architecture simulation: functional warming keeps
// the state that outlives a transient (slabs, partial lists, sheaves, barns, RCU queues) and
// skips what the detailed warm-up rebuilds in a few grace periods (line ownership, lock queues).
#pragma once
#include <vector>

#include "models/time.h"
#include "sim/engine/cpu.h"
#include "sim/engine/world.h"
#include "workloads/task.h"

namespace slubsim {

// The plan's run-control constants (not model figures): a pilot of five default grace periods
// and more (20 ms of 4 ms periods, the RCU lower bound of the settle rule) for the first rates;
// a detailed sample of 8 ms (two periods, rates from its second half) every 40 ms, as the rate
// drifts on a ~100 ms scale; turns of 50 us, well under a grace period and a tick.
inline constexpr Time kFastForwardPilot = 20 * kMs;
inline constexpr Time kFastForwardEvery = 40 * kMs;
inline constexpr Time kFastForwardSample = 8 * kMs;
inline constexpr Time kFastForwardQuantum = 50 * kUs;

struct FastForwardPlan {
  Time until = 0;    // 0: no fast-forward
  Time pilot = 0;    // detailed from 0; multiples of the grid's step throughout
  Time every = 0;    // a detailed sample starts every `every` (0: none after the pilot)
  Time sample = 0;   // its length; its second half gives the rates
  Time quantum = 0;  // a functional turn of one CPU
  bool on() const { return until > 0; }
};

class FastForward {
 public:
  // counters[t]: task t's operation counter, on the uniform grid `grid`; cpus[t] runs it.
  FastForward(const FastForwardPlan& plan, World& world, const Grid& grid, std::vector<Cpu*> cpus,
              std::vector<const Counter*> counters, int ops_per_iteration);
  void start();  // from time 0, before the engine runs
  // Functional stretches and detailed samples so far, as simulated time.
  Time functional_time() const { return functional_; }
  int samples() const { return samples_; }

 private:
  void pace_from(Time from, Time to);  // rates of [from, to) → paces
  void go_functional(Time at);
  void go_detailed(Time at);

  FastForwardPlan plan_;
  World& world_;
  const Grid& grid_;
  std::vector<Cpu*> cpus_;
  std::vector<const Counter*> counters_;
  int ops_per_iteration_;
  Time functional_ = 0;
  Time functional_since_ = 0;
  int samples_ = 0;
  std::vector<double> iterations_;  // per task, in every measured half so far
  Time measured_ = 0;               // their total length
};

}  // namespace slubsim
