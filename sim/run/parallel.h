// Host threads for independent simulations. Results go to fixed slots, so nothing a caller
// writes depends on how many threads ran or in which order they finished.
#pragma once
#include <atomic>
#include <cstddef>
#include <functional>

namespace slubsim {

// --jobs: 0 = one thread per host CPU.
int host_threads(int jobs);

// Run task(i) for i in [0, n) on `threads` host threads. The first exception stops new tasks and
// is rethrown once the running ones end. Once *stop is set, no new task starts; returns false
// then (some tasks did not run), true when every task ran. A task that throws PointAbandoned
// (sim/run/stop.h) did not run: the loop stops as if *stop were set.
bool parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& task,
                  const std::atomic<bool>* stop = nullptr);

}  // namespace slubsim
