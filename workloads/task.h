// Running a Program as one task: the will-it-scale loop.
#pragma once
#include <cstdint>
#include <vector>

#include "models/co.h"
#include "models/exec.h"
#include "models/random.h"
#include "workloads/program.h"

namespace slubsim {

// The per-task will-it-scale counter. The parent samples it at the edges of the measurement
// window; with CPUs running ahead on their own clocks that is the same as counting the
// iterations that complete inside [begin, end).
struct Counter {
  Time begin = 0, end = 0;
  std::uint64_t in_window = 0;
  std::uint64_t total = 0;
  void add(Time t, std::uint64_t n) {
    total += n;
    if (t >= begin && t < end) in_window += n;
  }
};

// A task's view of the program's shared objects: the instance of each declared lock and line
// that this task uses (chosen by scope), and its random stream.
struct TaskBinding {
  std::vector<std::uint32_t> locks;  // SpinLockId or RwsemId value, by declaration index
  std::vector<std::uint32_t> lines;
  Random rng;
  Counter counter;
};

// Instantiate every declared object for a run and bind each task to its instances.
// task_node[i] is the node of task i's CPU.
std::vector<TaskBinding> bind_program(const Program& p, Shared& shared, Mode mode,
                                      const std::vector<int>& task_node);

// The task loop: run the program until the task's clock passes `stop`.
Co<void> run_task(Exec& exec, const Program& p, TaskBinding& b, Time stop);

}  // namespace slubsim
