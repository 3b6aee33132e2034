#include "sim/run/stop.h"

namespace slubsim {

std::atomic<int> g_points_in_flight{0};

void StopWatch::check() {
  if (!stop_ || !stop_->load(std::memory_order_relaxed)) return;
  const auto now = std::chrono::steady_clock::now();
  if (!seen_) {
    seen_ = true;
    since_ = now;
    return;
  }
  if (std::chrono::duration<double>(now - since_).count() > grace_) throw PointAbandoned();
}

}  // namespace slubsim
