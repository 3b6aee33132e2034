// Where a cache line last written a grace period ago is found: still in the last-level cache of
// the CPU's domain, or in memory. The objects an LLC domain has put behind RCU since that write
// are lines nobody reuses until their grace period ends, so their bytes are (at least) the reuse
// distance of the oldest one: with B such bytes waiting in a domain whose cache holds C, a line
// survives with probability exp(-B / C) (random replacement; no other traffic counted). One task
// on a large LLC keeps nearly every such line (a few MB behind RCU against hundreds); a full
// socket of tasks sharing one CCD's 32 MB loses most of them.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "models/time.h"

namespace slubsim::slub {

class LineResidency {
 public:
  // cpu_llc: each CPU's LLC domain; llc_bytes: one domain's cache (0: nothing survives, every
  // such line comes from memory); llc_hit: a line found in the domain's cache.
  void init(std::vector<int> cpu_llc, int nr_llcs, std::int64_t llc_bytes, Time llc_hit) {
    cpu_llc_ = std::move(cpu_llc);
    waiting_.assign(static_cast<std::size_t>(nr_llcs > 0 ? nr_llcs : 1), 0);
    llc_bytes_ = llc_bytes;
    llc_hit_ = llc_hit;
  }
  // Bytes of objects `cpu` queued behind RCU, and their end (callbacks run on the queuing CPU).
  void queued(int cpu, std::int64_t bytes) { waiting_[domain(cpu)] += bytes; }
  void done(int cpu, std::int64_t bytes) { waiting_[domain(cpu)] -= bytes; }
  std::int64_t waiting(int cpu) const { return waiting_[domain(cpu)]; }
  // The share of lines a grace period old still in cpu's LLC.
  double share_in_llc(int cpu) const {
    if (llc_bytes_ <= 0) return 0.0;
    const auto b = static_cast<double>(std::max<std::int64_t>(0, waiting_[domain(cpu)]));
    return std::exp(-b / static_cast<double>(llc_bytes_));
  }
  // The expected price of one such line whose memory costs `memory` to load from cpu.
  Time line(int cpu, Time memory) const {
    if (memory <= llc_hit_) return memory;
    const double h = share_in_llc(cpu);
    return static_cast<Time>(std::llround(h * static_cast<double>(llc_hit_) + (1.0 - h) * static_cast<double>(memory)));
  }

 private:
  std::size_t domain(int cpu) const {
    return cpu_llc_.empty() ? 0 : static_cast<std::size_t>(cpu_llc_[static_cast<std::size_t>(cpu)]);
  }
  std::vector<int> cpu_llc_;
  std::vector<std::int64_t> waiting_;
  std::int64_t llc_bytes_ = 0;
  Time llc_hit_ = 0;
};

}  // namespace slubsim::slub
