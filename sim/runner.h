// One simulation: a machine, a program, N tasks, one seed. Builds the engine and the shared
// state, starts one task per CPU as lkp places them, runs warm-up and window, and measures.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/costs.h"
#include "sim/kernel.h"
#include "sim/lock_stat.h"
#include "sim/machine.h"
#include "sim/world.h"
#include "workloads/program.h"

namespace slubsim {

struct RunSpec {
  const Machine* machine = nullptr;
  const Costs* costs = nullptr;
  const Program* program = nullptr;
  const Kernel* kernel = nullptr;
  Mode mode = Mode::Process;
  int nr_task = 1;
  std::uint64_t seed = 1;
  Time warmup = 0;
  Time duration = 0;
  Options options;
};

struct LockReport {
  std::string cls;
  std::string instance;
  LockStat stat;
};

struct RunResult {
  int nr_task = 0;
  std::uint64_t ops_per_sec = 0;  // will-it-scale "average": operations per second, all tasks
  double idle_pct = 0;            // idle share of all logical CPUs in the window
  std::vector<std::uint64_t> task_ops;  // per task, in the window
  std::vector<LockReport> locks;
  std::uint64_t events = 0;    // engine events fired
  std::uint64_t requests = 0;  // shared-state requests granted (inline or by event)
  Time end_time = 0;           // simulated time when the last task stopped
};

// Throws ConfigError for inputs that cannot run, std::runtime_error if the simulation itself
// fails (a task parked forever).
RunResult simulate(const RunSpec& spec);

}  // namespace slubsim
