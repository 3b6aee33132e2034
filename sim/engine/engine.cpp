#include "sim/engine/engine.h"

#include <algorithm>
#include <stdexcept>

namespace slubsim {

void Engine::sift_up(std::size_t i, Event e) noexcept {
  while (i > 0) {
    const std::size_t parent = (i - 1) / kArity;
    if (!(e.key < heap_[parent].key)) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void Engine::sift_down(std::size_t i, Event e) noexcept {
  const std::size_t n = heap_.size();
  for (;;) {
    const std::size_t first = i * kArity + 1;
    if (first >= n) break;
    const std::size_t last = std::min(first + kArity, n);
    std::size_t best = first;
    Key best_key = heap_[first].key;
    for (std::size_t c = first + 1; c < last; ++c) {
      const Key k = heap_[c].key;
      const bool lt = k < best_key;  // selects, not branches
      best = lt ? c : best;
      best_key = lt ? k : best_key;
    }
    if (!(best_key < e.key)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = e;
}

void Engine::schedule(Time t, Process* p) {
  if (t < now_) throw std::logic_error("engine: event scheduled in the past");
  if (t >= kMaxTime) throw std::logic_error("engine: event later than the queue's key can order");
  if (p->rank() == Process::kTimerRank) {
    const auto later = std::upper_bound(timers_.begin(), timers_.end(), t,
                                        [](Time x, const TimerEvent& e) { return x < e.t; });
    timers_.insert(later, {t, p});
    return;
  }
  if (p->rank() > kMaxRank) throw std::logic_error("engine: process rank out of range");
  if (p->queued_) throw std::logic_error("engine: a process of rank 1 or more scheduled twice");
  p->queued_ = true;
  const Event e{key_of(t, p->rank()), p};
  if (hole_) {
    hole_ = false;
    sift_down(0, e);
    return;
  }
  heap_.emplace_back();
  sift_up(heap_.size() - 1, e);
}

void Engine::open_hole() noexcept {
  hole_ = true;
  next_key_ = kNoKey;
  const std::size_t last = std::min<std::size_t>(kArity + 1, heap_.size());
  for (std::size_t c = 1; c < last; ++c) next_key_ = std::min(next_key_, heap_[c].key);
}

void Engine::fill_hole() noexcept {
  hole_ = false;
  const Event last = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0, last);
}

bool Engine::fire_timer() {
  const TimerEvent t = timers_.front();
  timers_.erase(timers_.begin());
  now_ = t.t;
  ++events_;
  t.p->fire();
  return true;
}

bool Engine::step() {
  if (heap_.empty()) return !timers_.empty() && fire_timer();
  // A timer goes first at its time (rank 0).
  if (!timers_.empty() && timers_.front().t <= time_of(heap_[0].key)) return fire_timer();
  const Event e = heap_.front();
  open_hole();
  now_ = time_of(e.key);
  e.p->queued_ = false;
  ++events_;
  try {
    e.p->fire();
  } catch (...) {
    if (hole_) fill_hole();
    throw;
  }
  if (hole_) fill_hole();
  return true;
}

void Engine::run(const std::function<void()>& watch) {
  if (!watch) {
    while (step()) {
    }
    return;
  }
  while (step())
    if ((events_ & (kWatchEvery - 1)) == 0) watch();
}

}  // namespace slubsim
