#include "sim/advise/choose.h"

#include <cmath>
#include <fmt/format.h>

namespace slubsim {

const char* knob_name(Knob k) {
  switch (k) {
    case Knob::SheafCapacity: return "sheaf_capacity";
    case Knob::MaxFullSheaves: return "max_full_sheaves";
    case Knob::MaxEmptySheaves: return "max_empty_sheaves";
  }
  return "";
}

std::string Setting::sysfs() const {
  std::string out;
  for (const auto& w : writes) {
    if (!out.empty()) out += ",";
    out += fmt::format("{}/{}={}", w.cache, knob_name(w.knob), w.value);
  }
  return out;
}

Setting combine(const std::vector<CacheKnobs>& caches, const std::vector<std::array<std::optional<int>, 3>>& best) {
  Setting s;
  for (std::size_t i = 0; i < caches.size() && i < best.size(); ++i)
    for (Knob k : kKnobs)
      if (const auto& v = best[i][static_cast<int>(k)]; v && *v != caches[i].get(k))
        s.writes.push_back({caches[i].cache, k, *v});
  return s;
}

bool beats(const SettingOutcome& a, const SettingOutcome& b) {
  return a.ops - b.ops > std::hypot(a.half_width, b.half_width);
}

Choice choose(const std::vector<SettingOutcome>& outcomes, double budget_kb) {
  Choice c;
  std::optional<std::size_t> fastest, fastest_any;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const SettingOutcome& o = outcomes[i];
    if (o.setting.empty()) c.defaults = i;
    if (!o.settled) continue;
    if (!fastest_any || o.ops > outcomes[*fastest_any].ops) fastest_any = i;
    if (budget_kb > 0 && o.memory_kb > budget_kb) {
      ++c.over_budget;
      continue;
    }
    if (!fastest || o.ops > outcomes[*fastest].ops) fastest = i;
  }
  if (fastest_any && fastest_any != fastest) c.fastest_unbudgeted = fastest_any;
  if (!fastest) return c;
  // Among those tied with the fastest, the cheapest; equal memory: the kernel's defaults, then
  // the faster, then plan order.
  std::size_t best = *fastest;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const SettingOutcome& o = outcomes[i];
    if (!o.settled || (budget_kb > 0 && o.memory_kb > budget_kb)) continue;
    if (beats(outcomes[*fastest], o)) continue;
    const SettingOutcome& b = outcomes[best];
    const bool cheaper = o.memory_kb < b.memory_kb;
    const bool same = o.memory_kb == b.memory_kb;
    if (cheaper || (same && o.setting.empty()) || (same && !b.setting.empty() && o.ops > b.ops)) best = i;
  }
  c.best = best;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const SettingOutcome& o = outcomes[i];
    if (i == best || !o.settled || (budget_kb > 0 && o.memory_kb > budget_kb)) continue;
    if (!c.runner_up || o.ops > outcomes[*c.runner_up].ops) c.runner_up = i;
  }
  c.gain_is_tie = c.defaults && outcomes[*c.defaults].settled && !beats(outcomes[best], outcomes[*c.defaults]);
  return c;
}

}  // namespace slubsim
