// Cost parameters of the contention model (configs/costs/*.json). Every figure in the file
// carries a source; here they are plain numbers.
#pragma once
#include <string>

#include "models/time.h"
#include "sim/config/config.h"

namespace slubsim {

struct Costs {
  std::string name;
  Time atomic_local = 0;     // a locked RMW on a line this CPU already owns
  Time cache_hit = 0;        // a load of a line this CPU already has
  // A line nobody has touched for longer than this has left every cache: the next access is
  // served by memory at its home (0 = lines stay cached at their last user forever).
  Time line_residency = 0;
  // The queued-spinlock hand-off: Mcs prices its parts on the lines they move (the releasing
  // store, the head waiter's poll and set_locked on the lock word, the MCS node write to the next
  // waiter); Alpha charges alpha * L(holder -> next) in one piece.
  enum class Handoff : std::uint8_t { Mcs, Alpha };
  Handoff handoff = Handoff::Mcs;
  double handoff_alpha = 1;  // Handoff::Alpha only
  bool contender_rmw = false;  // contenders' RMWs of the lock word steal its line (opt-in)
  bool parallel_reads = false; // reads of a line wait for its last write, not for each other
  // Plain stores (Exec::store) retire into the store buffer: the CPU goes on; its locked RMWs
  // and its releasing stores wait until every earlier store has landed (x86-TSO).
  bool posted_stores = false;
  Time rwsem_wakeup = 0;     // wake-up of a task sleeping on an rwsem until it runs
};

// log: as parse_slub_costs (sim/run/slub_config.h); the caller checks the fields both parsers asked for.
Costs parse_costs(const json& doc, const std::string& file, std::shared_ptr<ReadLog> log = nullptr);

}  // namespace slubsim
