#include "sim/run/parallel.h"

#include "sim/run/stop.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace slubsim {
namespace {
struct InFlight {
  InFlight() { g_points_in_flight.fetch_add(1); }
  ~InFlight() { g_points_in_flight.fetch_sub(1); }
};
}  // namespace

int host_threads(int jobs) {
  return jobs > 0 ? jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

bool parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& task,
                  const std::atomic<bool>* stop) {
  std::size_t next = 0;
  std::mutex mu;
  std::exception_ptr error;
  bool stopped = false;
  auto worker = [&]() {
    while (true) {
      std::size_t i = 0;
      {
        std::lock_guard<std::mutex> g(mu);
        if (error || stopped || next >= n) return;
        if (stop && stop->load()) {
          stopped = true;
          return;
        }
        i = next++;
      }
      try {
        InFlight counted;
        task(i);
      } catch (const PointAbandoned&) {
        std::lock_guard<std::mutex> g(mu);
        stopped = true;
        return;
      } catch (...) {
        std::lock_guard<std::mutex> g(mu);
        if (!error) error = std::current_exception();
        return;
      }
    }
  };
  const int t = std::max(1, std::min<int>(threads, static_cast<int>(std::min<std::size_t>(n, 1 << 20))));
  std::vector<std::thread> pool;
  for (int k = 1; k < t; ++k) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
  return !stopped;
}

}  // namespace slubsim
