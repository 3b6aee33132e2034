// lock_stat-like counters (kernel/locking/lockdep_proc.c field names), kept per lock instance
// and summed per class in reports. An event counts in the interval of the time it began (an
// acquisition or a wait at its request, a hold at its acquisition): lock_stat of a window counts
// the acquisitions that started inside it.
#pragma once
#include <algorithm>
#include <cstdint>

#include "models/time.h"

namespace slubsim {

struct LockStat {
  std::uint64_t acquisitions = 0;
  std::uint64_t contentions = 0;
  std::uint64_t acq_bounces = 0;  // acquisitions that pulled the lock word from another CPU
  std::uint64_t con_bounces = 0;  // contended acquisitions handed over from another CPU
  Time wait_total = 0, wait_max = 0, wait_min = kForever;
  Time hold_total = 0, hold_max = 0, hold_min = kForever;
  std::uint64_t handoffs = 0;  // contended acquisitions: the lock passed holder -> waiter
  Time handoff_total = 0;      // the time those hand-offs took

  void waited(Time w) {
    wait_total += w;
    wait_max = std::max(wait_max, w);
    wait_min = std::min(wait_min, w);
  }
  void held(Time h) {
    hold_total += h;
    hold_max = std::max(hold_max, h);
    hold_min = std::min(hold_min, h);
  }
  void add(const LockStat& o) {
    acquisitions += o.acquisitions;
    contentions += o.contentions;
    acq_bounces += o.acq_bounces;
    con_bounces += o.con_bounces;
    wait_total += o.wait_total;
    wait_max = std::max(wait_max, o.wait_max);
    wait_min = std::min(wait_min, o.wait_min);
    hold_total += o.hold_total;
    hold_max = std::max(hold_max, o.hold_max);
    hold_min = std::min(hold_min, o.hold_min);
    handoffs += o.handoffs;
    handoff_total += o.handoff_total;
  }
};

}  // namespace slubsim
