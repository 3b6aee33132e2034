#include "sim/engine/time_stacks.h"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <tuple>

namespace slubsim {

namespace {
const char* account_name(Account a) {
  switch (a) {
    case Account::NonSlab: return "nonslab";
    case Account::SlabFast: return "slab.fastpath";
    case Account::SlabSlow: return "slab.slowpath";
    case Account::Rcu: return "rcu.callbacks";
    case Account::Ksoftirqd: return "rcu.ksoftirqd";
  }
  return "?";
}
}  // namespace

bool TimeStacks::Key::operator<(const Key& o) const {
  if (std::tie(kind, account, cls, depth) != std::tie(o.kind, o.account, o.cls, o.depth))
    return std::tie(kind, account, cls, depth) < std::tie(o.kind, o.account, o.cls, o.depth);
  // Frame names are string literals: compared by text, so the order (and the output) does not
  // depend on where the linker put them.
  for (int i = 0; i < depth; ++i) {
    const int c = std::strcmp(frames[static_cast<std::size_t>(i)], o.frames[static_cast<std::size_t>(i)]);
    if (c != 0) return c < 0;
  }
  return false;
}

bool TimeStacks::Key::operator==(const Key& o) const {
  return kind == o.kind && account == o.account && cls == o.cls && depth == o.depth &&
         std::equal(frames.begin(), frames.begin() + depth, o.frames.begin());
}

void TimeStacks::add(const Exec& e, StackTimeKind kind, int lock_class, Time from, Time to) {
  Key k;
  k.kind = kind;
  k.account = e.account();
  k.cls = lock_class;
  k.depth = e.depth();
  for (int i = 0; i < k.depth; ++i) k.frames[static_cast<std::size_t>(i)] = e.frame(i);
  const auto c = static_cast<std::size_t>(e.cpu());
  if (c >= cache_.size()) cache_.resize(c + 1);
  auto& [last, entry] = cache_[c];
  if (!entry || !(last == k)) {
    last = k;
    entry = &stacks_[k];
  }
  while (from < to) {
    const Time end = std::min(grid_->end(grid_->of(from)), to);
    entry->at_time(*grid_, from) += end - from;
    from = end;
  }
}

std::vector<FoldedStack> TimeStacks::folded(IntervalRange r, const std::vector<std::string>& lock_classes) const {
  std::map<std::string, Time> merged;
  for (const auto& [k, ledger] : stacks_) {
    const Time t = ledger.sum(r.from, r.to);
    if (t <= 0) continue;
    std::string s = account_name(k.account);
    for (int i = 0; i < k.depth; ++i) {
      s += ';';
      s += k.frames[static_cast<std::size_t>(i)];
    }
    if (k.kind != StackTimeKind::Busy) {
      const std::string cls = k.cls >= 0 && static_cast<std::size_t>(k.cls) < lock_classes.size()
                                  ? lock_classes[static_cast<std::size_t>(k.cls)]
                                  : std::string("lock");
      s += fmt::format(";{}_[{}]", cls, k.kind == StackTimeKind::Spin ? "spin" : "sleep");  // no spaces: "_[k]" style
    }
    merged[s] += t;
  }
  std::vector<FoldedStack> out;
  for (auto& [s, t] : merged) out.push_back({s, t});
  return out;
}

}  // namespace slubsim
