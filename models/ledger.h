// Counting by interval of simulated time, so that a run's measurement window can be chosen after
// the fact. Every windowed counter (a task's operations and time, a lock's lock_stat, spinning per
// call chain) adds to the interval its time falls in; a report sums the intervals of the window.
// The settle rule (sim/run/settle.h) picks the window from the series of intervals; a window
// given up front is the same sum over fewer, longer intervals, and counts exactly what a
// [begin, end) test on each event's time would.
#pragma once
#include <cstdint>
#include <type_traits>
#include <vector>

#include "models/time.h"

namespace slubsim {

// The intervals of a run: interval 0 is [0, first), interval i >= 1 is
// [first + (i-1) step, first + i step); times from interval `last` on all fold into `last`.
// The default grid is one interval holding all time (a driver that measures everything).
struct Grid {
  Time first = kForever;
  Time step = kForever;
  int last = 0;

  // A grid of equal intervals of `step`, `count` of them before the last catches the rest.
  static Grid uniform(Time step, int count) { return {step, step, count}; }
  // A fixed window [begin, end): interval 0 the warm-up, 1 the window, 2 what follows.
  static Grid window(Time begin, Time end) { return {begin, end - begin, 2}; }

  int of(Time t) const noexcept {
    if (t < first) return 0;
    const Time k = 1 + (t - first) / step;
    return k < last ? static_cast<int>(k) : last;
  }
  Time begin(int i) const noexcept { return i == 0 ? 0 : first + static_cast<Time>(i - 1) * step; }
  Time end(int i) const noexcept {
    return i >= last ? kForever : first + static_cast<Time>(i) * step;
  }
};

// One T per interval. Time mostly moves forward, so the latest interval's T lives inline (on
// the owner's own host cache lines, as a plain counter would) with its bounds, and moves to the
// vector when a later interval begins; an event of an earlier interval (a wait that began
// before the edge) goes to the vector directly. T sums with `add` (or +=, for numbers).
template <class T>
class Ledger {
 public:
  // The T of interval i.
  T& at(int i) {
    if (i == cur_) return cur_val_;
    if (i > cur_) {
      move_to(i);
      return cur_val_;
    }
    return slot(i);
  }
  // The T of the interval time t falls in.
  // The hit (t in the current interval) is inline; the rest is out of line, so that the caller
  // does not pay the slow path's register saves on every call.
  T& at_time(const Grid& g, Time t) {
    if (t >= cur_begin_ && t < cur_end_) [[likely]] return cur_val_;
    return at_time_slow(g, t);
  }
  [[gnu::noinline]] T& at_time_slow(const Grid& g, Time t) {
    const int i = g.of(t);
    if (i >= cur_) {
      if (i > cur_) move_to(i);
      cur_begin_ = g.begin(i);
      cur_end_ = g.end(i);
      return cur_val_;
    }
    return slot(i);
  }
  // The grid changed: the next at_time recomputes the current interval's bounds.
  void forget_bounds() noexcept { cur_begin_ = cur_end_ = 0; }
  // The latest interval and its bounds as at_time last set them (empty until it has).
  int current() const noexcept { return cur_; }
  T& current_value() noexcept { return cur_val_; }
  Time current_begin() const noexcept { return cur_begin_; }
  Time current_end() const noexcept { return cur_end_; }

  // Intervals [from, to) summed (missing intervals count as T{}).
  T sum(int from, int to) const {
    T s{};
    for (int i = from; i < to && static_cast<std::size_t>(i) < v_.size(); ++i) add_to(s, v_[static_cast<std::size_t>(i)]);
    if (cur_ >= from && cur_ < to) add_to(s, cur_val_);
    return s;
  }

 private:
  static void add_to(T& s, const T& x) {
    if constexpr (std::is_arithmetic_v<T>) s += x;
    else s.add(x);
  }
  T& slot(int i) {
    if (static_cast<std::size_t>(i) >= v_.size()) v_.resize(static_cast<std::size_t>(i) + 1);
    return v_[static_cast<std::size_t>(i)];
  }
  void move_to(int i) {
    add_to(slot(cur_), cur_val_);
    cur_val_ = T{};
    cur_ = i;
    cur_begin_ = 0;
    cur_end_ = 0;  // bounds unknown until at_time sets them
  }
  int cur_ = 0;
  Time cur_begin_ = 0, cur_end_ = 0;
  T cur_val_{};
  std::vector<T> v_;  // intervals before cur_ (and any written late)
};

// A window as a range of intervals [from, to).
struct IntervalRange {
  int from = 0;
  int to = 1;
};

}  // namespace slubsim
