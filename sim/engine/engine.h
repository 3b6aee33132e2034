// The discrete-event engine: a clock and a queue of events, each a (time, process) pair.
//
// Few concepts, as in SimPy: the Engine owns time; a Process is anything that can be woken at
// a time. Order is total and stable: earlier time first, then lower rank (timers are rank 0,
// CPU c is rank c + 1), then, among timers at one time, earlier scheduling. A process of rank
// 1 or more (a CPU) has at most one event queued (schedule throws otherwise), so events at one
// time fire in an order fixed by the model, not by the host's order of scheduling them.
// CPUs run ahead on their own clocks and only enter the queue when they touch shared state
// (sim/engine/cpu.h), so the queue holds at most one event per CPU plus timers.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "models/time.h"

namespace slubsim {

class Process {
 public:
  static constexpr std::uint32_t kTimerRank = 0;
  explicit Process(std::uint32_t rank = kTimerRank) noexcept : rank_(rank) {}
  virtual ~Process() = default;
  virtual void fire() = 0;
  // Among events at one time, lower ranks fire first.
  std::uint32_t rank() const noexcept { return rank_; }

 private:
  friend class Engine;
  std::uint32_t rank_;
  bool queued_ = false;  // rank 1 or more: its one event is queued
};

// A callback at a time (measurement snapshots, settle edges, samples). Rank 0: at a time a CPU
// also acts, the timer sees the state before it.
class Timer final : public Process {
 public:
  explicit Timer(std::function<void()> f) : Process(kTimerRank), f_(std::move(f)) {}
  void fire() override { f_(); }

 private:
  std::function<void()> f_;
};

class Engine {
 public:
  Time now() const noexcept { return now_; }
  std::uint64_t events() const noexcept { return events_; }

  void schedule(Time t, Process* p);
  // True if a process of `rank` whose clock reads t may act now: nothing queued comes before
  // (t, rank) (the process itself is not queued).
  bool may_act_at(Time t, std::uint32_t rank) const noexcept { return key_of(t, rank) < front_key(); }
  // The time of the earliest queued timer (kForever: none). A process may act on state no one
  // else can see before it (sim/engine/cpu.h, one-CPU objects) while its clock is before this:
  // timers read the whole model and move the tasks' stop time.
  Time next_timer() const noexcept { return timers_.empty() ? kForever : timers_.front().t; }
  // Move the clock to t (t >= now) for an access made without queueing.
  void advance(Time t) noexcept { now_ = t; }
  bool empty() const noexcept { return timers_.empty() && heap_.size() == (hole_ ? 1u : 0u); }

  // Fire the next event. False if there is none.
  bool step();
  // Fire events until none is left. `watch`, when set, is called every kWatchEvery events: a
  // check from outside the model (a stop request), which may throw to abandon the run.
  static constexpr std::uint64_t kWatchEvery = 1 << 14;
  void run(const std::function<void()>& watch = {});

  // What the queue's key can hold: ranks for sim/machine's kMaxCpus CPUs, and simulated times
  // below 2^50 ps (about 19 minutes).
  static constexpr int kRankBits = 13;
  static constexpr std::uint32_t kMaxRank = (1u << kRankBits) - 1;
  static constexpr Time kMaxTime = Time{1} << (63 - kRankBits);

 private:
  // Processes of rank 1 or more wait in a heap ordered by one 64-bit key: the time in the high
  // bits, the rank in the low ones. A CPU has one event at most, so (time, rank) is a total
  // order and the firing order is the same for any correct priority queue. Timers (rank 0, a
  // handful) wait apart, in a vector sorted by time and then scheduling order; a timer fires
  // before the heap's front when its time is not later.
  using Key = std::uint64_t;
  struct Event {
    Key key;
    Process* p;
  };
  struct TimerEvent {
    Time t;
    Process* p;
  };
  static Key key_of(Time t, std::uint32_t rank) noexcept {
    return (static_cast<Key>(t) << kRankBits) | rank;
  }
  static Time time_of(Key k) noexcept { return static_cast<Time>(k >> kRankBits); }
  // A 4-ary min-heap: half the levels of a binary one, and a node's four children (16 bytes
  // each) on one host cache line.
  static constexpr std::size_t kArity = 4;
  void sift_up(std::size_t i, Event e) noexcept;
  void sift_down(std::size_t i, Event e) noexcept;
  // The event being fired leaves a hole at the root: the first event scheduled while it fires
  // (mostly the same CPU's next sync) fills it with one sift down, instead of a pop's sift down
  // and a push's sift up. While the hole is open, the heap's next event is the least of the
  // root's children (next_key_).
  void open_hole() noexcept;
  void fill_hole() noexcept;
  static constexpr Key kNoKey = ~Key{0};
  Key heap_front_key() const noexcept { return hole_ ? next_key_ : heap_.empty() ? kNoKey : heap_[0].key; }
  Key front_key() const noexcept {
    const Key h = heap_front_key();
    return timers_.empty() ? h : std::min(h, key_of(timers_.front().t, Process::kTimerRank));
  }
  bool fire_timer();
  std::vector<Event> heap_;
  bool hole_ = false;
  Key next_key_ = kNoKey;
  std::vector<TimerEvent> timers_;  // by time, then scheduling order
  Time now_ = 0;
  std::uint64_t events_ = 0;
};

}  // namespace slubsim
