// Folded stacks of all task time: every stretch a CPU spends busy, spinning or asleep, keyed by
// its account, the kernel functions it was in (Frame) and, for a wait, the lock class. Counted by
// interval of the run's grid, like every windowed counter (models/ledger.h), so a report takes
// the window's part. The text form is Brendan Gregg's folded format ("a;b;c count"), which
// flamegraph.pl, inferno and speedscope read.
#pragma once
#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "models/exec.h"
#include "models/ledger.h"

namespace slubsim {

struct FoldedStack {
  std::string stack;  // outermost first, ';'-separated
  Time time = 0;
};

class TimeStacks final : public TimeSink {
 public:
  TimeStacks(const Grid* grid, int nr_cpus) : grid_(grid), cache_(static_cast<std::size_t>(nr_cpus)) {}

  void add(const Exec& e, StackTimeKind kind, int lock_class, Time from, Time to) override;

  // The stacks' time in intervals [r.from, r.to), folded: the root is the account
  // ("nonslab", "slab.slowpath", ...), then the frames, then "<class>_[spin]" or "<class>_[sleep]"
  // for a wait. Stacks that differ only past the frames kept are merged; sorted by stack.
  std::vector<FoldedStack> folded(IntervalRange r, const std::vector<std::string>& lock_classes) const;

 private:
  struct Key {
    StackTimeKind kind = StackTimeKind::Busy;
    Account account = Account::NonSlab;
    int cls = -1;
    int depth = 0;
    std::array<const char*, Exec::kMaxFrames> frames{};
    bool operator<(const Key& o) const;
    bool operator==(const Key& o) const;
  };
  const Grid* grid_;
  std::map<Key, Ledger<Time>> stacks_;
  std::vector<std::pair<Key, Ledger<Time>*>> cache_;  // per CPU: its last stack (map nodes do not move)
};

}  // namespace slubsim
