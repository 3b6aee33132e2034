// Stopping a job early (SIGINT, SIGTERM: Slurm's time limit, scancel, timeout(1)).
//
// The command's signal handler sets a flag. From then on no point starts; a point in flight
// finishes if it can within kStopGraceSeconds of wall time after the request, and is abandoned
// otherwise (PointAbandoned: nothing of it is stored, and --resume runs it again). So a job ends
// in bounded time after the first signal, even on a point that would never end. A second signal
// ends the process at once.
#pragma once
#include <atomic>
#include <chrono>
#include <stdexcept>

namespace slubsim {

inline constexpr double kStopGraceSeconds = 10.0;

// Points being simulated now, for the handler's acknowledgement ("N points in flight").
extern std::atomic<int> g_points_in_flight;

class PointAbandoned : public std::runtime_error {
 public:
  PointAbandoned() : std::runtime_error("point abandoned: stop requested and the grace period ran out") {}
};

// The engine's watch for one point (sim/engine/engine.h): throws PointAbandoned once `stop` has
// been set for longer than the grace period.
class StopWatch {
 public:
  explicit StopWatch(const std::atomic<bool>* stop, double grace_seconds = kStopGraceSeconds)
      : stop_(stop), grace_(grace_seconds) {}
  bool armed() const { return stop_ != nullptr; }
  void check();

 private:
  const std::atomic<bool>* stop_;
  double grace_;
  bool seen_ = false;
  std::chrono::steady_clock::time_point since_{};
};

}  // namespace slubsim
