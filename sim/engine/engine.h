// The discrete-event engine: a clock and a queue of (time, sequence, process) events.
//
// Few concepts, as in SimPy: the Engine owns time; a Process is anything that can be woken at
// a time. Order is total and stable: earlier time first, then earlier scheduling. CPUs run
// ahead on their own clocks and only enter the queue when they touch shared state
// (sim/engine/cpu.h), so the queue holds at most one event per CPU plus timers.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "models/time.h"

namespace slubsim {

class Process {
 public:
  virtual ~Process() = default;
  virtual void fire() = 0;
};

// A callback at a time (measurement snapshots, grace periods).
class Timer final : public Process {
 public:
  explicit Timer(std::function<void()> f) : f_(std::move(f)) {}
  void fire() override { f_(); }

 private:
  std::function<void()> f_;
};

class Engine {
 public:
  Time now() const noexcept { return now_; }
  std::uint64_t events() const noexcept { return events_; }

  void schedule(Time t, Process* p);
  // True if a process whose clock reads t may act now: nothing queued is due before or at t
  // (a tie goes to what was queued first).
  bool may_act_at(Time t) const noexcept { return heap_.empty() || t < time_of(heap_.front().key); }
  // Move the clock to t (t >= now) for an access made without queueing.
  void advance(Time t) noexcept { now_ = t; }
  bool empty() const noexcept { return heap_.empty(); }

  // Fire the next event. False if there is none.
  bool step();
  // Fire events until none is left. `watch`, when set, is called every kWatchEvery events: a
  // check from outside the model (a stop request), which may throw to abandon the run.
  static constexpr std::uint64_t kWatchEvery = 1 << 14;
  void run(const std::function<void()>& watch = {});

 private:
  // One key orders the queue: the time in the high half, the sequence number in the low half
  // (t >= 0). (t, seq) is a total order, so the firing order is the same for any correct
  // priority queue; a single 128-bit compare lets the child choice below be branch-free.
  using Key = unsigned __int128;
  struct Event {
    Key key;
    Process* p;
  };
  static Key key_of(Time t, std::uint64_t seq) noexcept {
    return (static_cast<Key>(static_cast<std::uint64_t>(t)) << 64) | seq;
  }
  static Time time_of(Key k) noexcept { return static_cast<Time>(static_cast<std::uint64_t>(k >> 64)); }
  // A 4-ary min-heap: half the levels of a binary one, and a node's four children on two host
  // cache lines.
  static constexpr std::size_t kArity = 4;
  void sift_up(std::size_t i, Event e) noexcept;
  void sift_down(std::size_t i, Event e) noexcept;
  std::vector<Event> heap_;
  Time now_ = 0;
  std::uint64_t seq_ = 0;
  std::uint64_t events_ = 0;
};

}  // namespace slubsim
