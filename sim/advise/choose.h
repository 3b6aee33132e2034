// `slubsim advise`: which sheaf capacity and barn limits to write for a machine and workload,
// at what memory cost, and how sure. This room holds the advisor: the settings and how it picks
// among their settled results (the choice, here), and the search that runs them as sweeps and
// its report (advise.h).
//
// The knobs are the runtime-tuning RFC's per-cache sysfs files ("[PATCH RFC 0/8] mm/slab: enable
// runtime sheaves tuning", Harry Yoo, May 2026): sheaf_capacity, max_full_sheaves and
// max_empty_sheaves, written as `--sysfs CACHE/KNOB=N` settings (sim/run/job.h).
#pragma once
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace slubsim {

enum class Knob { SheafCapacity, MaxFullSheaves, MaxEmptySheaves };
inline constexpr Knob kKnobs[] = {Knob::SheafCapacity, Knob::MaxFullSheaves, Knob::MaxEmptySheaves};
const char* knob_name(Knob k);  // the RFC's sysfs file name

// One cache's knobs as the kernel sets them (the preset's barn limits, the cache's capacity:
// explicit or 7.0's automatic one) and the values the search may give each.
struct CacheKnobs {
  std::string cache;
  int defaults[3] = {0, 0, 0};           // by Knob
  std::vector<int> values[3];            // candidates by Knob, ascending, may include the default
  int get(Knob k) const { return defaults[static_cast<int>(k)]; }
};

// One setting: a value per (cache, knob) that differs from the kernel's; empty = the defaults.
struct Setting {
  struct Write {
    std::string cache;
    Knob knob;
    int value;
    bool operator==(const Write&) const = default;
  };
  std::vector<Write> writes;  // in cache order, then knob order
  // The --sysfs text ("" for the defaults): "maple_node/sheaf_capacity=64,...".
  std::string sysfs() const;
  bool operator==(const Setting&) const = default;
};

// The joint setting: per cache and knob the best value its search found (a value is kept only
// when it beat the default beyond both confidence intervals), all written together.
// `best[c][k]`: the chosen value of cache c's knob k, or nullopt to keep the default.
Setting combine(const std::vector<CacheKnobs>& caches, const std::vector<std::array<std::optional<int>, 3>>& best);

// A setting's settled result at one task count.
struct SettingOutcome {
  std::string setting;     // its --sysfs text, "" = the kernel's defaults
  double ops = 0;          // ops/s: the settled window's mean
  double half_width = 0;   // its 95% confidence half-width, ops/s
  double memory_kb = 0;    // SUnreclaim at the end of the window
  bool settled = true;
};

// Two outcomes differ when their means are further apart than the half-width of the
// difference (independent runs: the half-widths add in quadrature); else they are a tie.
bool beats(const SettingOutcome& a, const SettingOutcome& b);

// The advisor's pick at one task count among outcomes of the same task count.
struct Choice {
  std::optional<std::size_t> best;        // index into the outcomes; none when all are over budget
  std::optional<std::size_t> runner_up;   // the next setting by ops within budget
  std::optional<std::size_t> defaults;    // the kernel's defaults, when evaluated
  bool gain_is_tie = false;  // best does not beat the defaults: keep the kernel's settings
  std::size_t over_budget = 0;            // settings the budget excluded
  // The fastest setting ignoring the budget, when the budget excluded it.
  std::optional<std::size_t> fastest_unbudgeted;
};

// Best = the cheapest (least memory) of the settings tied with the fastest within budget
// (budget_kb <= 0: no budget), the kernel's defaults at equal memory: a setting that is not
// faster beyond the confidence intervals is not worth its memory or a sysfs write. Unsettled
// outcomes are never chosen.
Choice choose(const std::vector<SettingOutcome>& outcomes, double budget_kb);

}  // namespace slubsim
