// sim/engine/: the discrete-event engine and the pricing of shared state: the event queue
// (engine.h), simulated CPUs (cpu.h), locks and lock_stat (locks.h, world.h), cache lines
// (this file), and where task time goes (time_stacks.h).
//
// Shared cache lines: who owns each line, who shares it, where its memory lives, and what an
// access costs (contention-model.md §5.2).
//
// - A read by a CPU without a copy pays the transfer from the owner (or memory) and joins the
//   sharers.
// - A write or locked RMW pays the transfer from the owner plus the invalidation of every
//   sharer; the farthest one sets the price. The writer becomes the only owner.
// - A line moves to one CPU at a time: a transfer waits until the previous one has landed
//   (single-server line), which is what makes contended cmpxchg and hot list heads expensive.
//   With `Costs::parallel_reads`, reads of a line are served side by side: a read waits for the
//   last write (or steal, or hand-off) to land, not for other reads; a write still waits for
//   every transfer in flight.
// - A spinner (the head waiter of a queued lock, polling the lock word) re-reads the line right
//   after every write by someone else, so the holder's next write pays to pull it back.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "models/time.h"
#include "sim/config/costs.h"
#include "sim/machine/machine.h"

namespace slubsim {

struct Line {
  int home_node = 0;
  int home_socket = 0;
  int owner = -1;  // CPU holding it in M/E state; -1 = only in memory (or only shared)
  int spinner = -1;
  std::vector<int> sharers;  // CPUs with a shared copy, owner excluded
  Time busy_until = 0;       // when the last transfer lands
  Time written_at = 0;       // when the last write, steal or hand-off landed
  Time last_access = 0;      // when it was last read or written (for cache residency)
  std::uint64_t version = 0;  // bumped by every write
  std::uint64_t transfers = 0;
  // Reach::OneCpu (models/exec.h): the one CPU that touches the line (kNoCpuYet until one
  // has); kAnyCpu for a shared line. A lock's reach is its word's.
  static constexpr int kAnyCpu = -2;
  static constexpr int kNoCpuYet = -1;
  int only_cpu = kAnyCpu;

  bool has_copy(int cpu) const {
    return owner == cpu || std::find(sharers.begin(), sharers.end(), cpu) != sharers.end();
  }
};

class Coherence {
 public:
  Coherence(const Machine& m, const Costs& c) : m_(m), c_(c) {}

  // A line untouched for longer than the cache residency has been evicted everywhere: it is in
  // memory only, and the next access pays the DRAM latency from its home.
  bool ages_out(const Line& l, Time t) const {
    return c_.line_residency > 0 && t - l.last_access > c_.line_residency && l.spinner < 0;
  }
  void age(Line& l, Time t) const {
    if (ages_out(l, t)) {
      l.owner = -1;
      l.sharers.clear();
    }
    l.last_access = std::max(l.last_access, t);
  }

  // Each returns when the access completes, for a CPU that issues it at t. The line already
  // held by the CPU alone, and not aged out, is the common case: it is inline, the rest out of
  // line (read_slow, write_slow), with the same result.
  Time read(Line& l, int cpu, Time t) const {
    if (l.owner == cpu && !ages_out(l, t)) [[likely]] {
      l.last_access = std::max(l.last_access, t);
      return t + c_.cache_hit;
    }
    return read_slow(l, cpu, t);
  }
  Time write(Line& l, int cpu, Time t) const {
    if (l.owner == cpu && l.spinner < 0 && l.sharers.empty() && !ages_out(l, t)) [[likely]] {
      l.last_access = std::max(l.last_access, t);
      const Time done = std::max(t, l.busy_until) + c_.atomic_local;
      l.busy_until = done;
      l.written_at = done;
      ++l.version;
      return done;
    }
    return write_slow(l, cpu, t);
  }

  [[gnu::noinline]] Time read_slow(Line& l, int cpu, Time t) const {
    age(l, t);
    if (l.has_copy(cpu)) return t + c_.cache_hit;
    Time start = std::max(t, c_.parallel_reads ? l.written_at : l.busy_until);
    Time cost = l.owner >= 0 ? m_.transfer(l.owner, cpu, l.home_socket)
                             : m_.from_memory(cpu, l.home_socket);
    const Time done = start + cost;
    l.busy_until = std::max(l.busy_until, done);
    l.sharers.push_back(cpu);
    ++l.transfers;
    return done;
  }

  [[gnu::noinline]] Time write_slow(Line& l, int cpu, Time t) const {
    age(l, t);
    Time start = std::max(t, l.busy_until);
    Time cost = 0;
    if (l.owner != cpu) {
      cost = l.owner >= 0 ? m_.transfer(l.owner, cpu, l.home_socket)
             : l.has_copy(cpu) ? 0
                               : m_.from_memory(cpu, l.home_socket);
    }
    for (int s : l.sharers)
      if (s != cpu) cost = std::max(cost, m_.transfer(cpu, s, l.home_socket));
    // A measured transfer L is a whole CAS ping-pong hop, the RMW included; a line already
    // here costs just the local RMW.
    if (cost > 0) ++l.transfers;
    Time done = start + (cost > 0 ? cost : c_.atomic_local);
    take(l, cpu, done);
    return done;
  }

  // A contender's RMW of a lock word it then waits on: the line moves to `cpu`, so whoever
  // touches it next pays the transfer back. It holds up later accesses by its own transfer
  // only, and adds no spinner re-read (the head waiter reads the word at the hand-off).
  void steal(Line& l, int cpu, Time t) const {
    age(l, t);
    if (l.owner == cpu) return;
    Time cost = l.owner >= 0 ? m_.transfer(l.owner, cpu, l.home_socket)
                             : m_.from_memory(cpu, l.home_socket);
    l.owner = cpu;
    l.sharers.clear();
    // Served in turn like any transfer of the line: it lands after the one in flight.
    l.busy_until = std::max(l.busy_until, t) + cost;
    l.written_at = l.busy_until;
    ++l.version;
    ++l.transfers;
  }

  // The line moves to `cpu`, landing at `at`, outside of a priced access (a lock hand-off).
  void take(Line& l, int cpu, Time at) const {
    l.owner = cpu;
    l.sharers.clear();
    l.busy_until = at;
    l.written_at = at;
    ++l.version;
    if (l.spinner >= 0 && l.spinner != cpu) {
      // The spinner's next poll pulls a shared copy over.
      l.sharers.push_back(l.spinner);
      l.busy_until = at + m_.transfer(cpu, l.spinner, l.home_socket);
    }
  }

 private:
  const Machine& m_;
  const Costs& c_;
};

}  // namespace slubsim
