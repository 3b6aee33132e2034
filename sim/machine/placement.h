// Where tasks run, as lkp runs will-it-scale (workloads-and-lkp.md §1.5): task i is bound to
// core (i mod #cores) in hwloc logical order, with all its SMT siblings allowed; the scheduler
// puts the tasks that share a core on different hardware threads. So cores fill first, then
// their siblings.
#pragma once
#include <vector>

#include "sim/machine/machine.h"

namespace slubsim {

// CPU of each task. nr_task must be between 1 and the number of logical CPUs.
std::vector<int> place_tasks(const Machine& m, int nr_task);

}  // namespace slubsim
