#include "sim/machine/placement.h"

#include <stdexcept>

namespace slubsim {

std::vector<int> place_tasks(const Machine& m, int nr_task) {
  if (nr_task < 1 || nr_task > m.nr_cpus)
    throw std::invalid_argument("nr_task must be between 1 and the number of CPUs");
  std::vector<int> out;
  std::vector<int> used(m.nr_cores(), 0);
  for (int i = 0; i < nr_task; ++i) {
    // Task i goes to core i mod n; if that core's threads are taken, the next core with a
    // free thread (only on machines whose cores have unequal thread counts).
    int n = m.nr_cores();
    int k = i % n;
    for (int tries = 0; used[m.core_order[k]] >= static_cast<int>(m.core_cpus[m.core_order[k]].size()); ++tries)
      k = (k + 1) % n;
    int core = m.core_order[k];
    out.push_back(m.core_cpus[core][used[core]++]);
  }
  return out;
}

}  // namespace slubsim
