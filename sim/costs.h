// Cost parameters of the contention model (configs/costs/*.json). Every figure in the file
// carries a source; here they are plain numbers.
#pragma once
#include <string>

#include "models/time.h"
#include "sim/config.h"

namespace slubsim {

struct Costs {
  std::string name;
  Time atomic_local = 0;     // a locked RMW on a line this CPU already owns
  Time cache_hit = 0;        // a load of a line this CPU already has
  double handoff_alpha = 1;  // queued-spinlock hand-off = alpha * L(holder -> next)
  bool contender_rmw = false;  // contenders' RMWs of the lock word steal its line (opt-in)
  Time rwsem_wakeup = 0;     // wake-up of a task sleeping on an rwsem until it runs
};

Costs parse_costs(const json& doc, const std::string& file);

}  // namespace slubsim
