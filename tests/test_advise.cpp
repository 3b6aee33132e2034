// The advisor's plan and choice (sim/advise/choose.h): which settings a search evaluates, and
// how it picks among settled results with confidence intervals and a memory budget.
#include <doctest/doctest.h>

#include "sim/advise/advise.h"

using namespace slubsim;

namespace {
CacheKnobs knobs(const std::string& cache, int capacity) {
  CacheKnobs c;
  c.cache = cache;
  c.defaults[0] = capacity;
  c.defaults[1] = 10;
  c.defaults[2] = 10;
  c.values[0] = {4, 8, 16, 32, 64, 128, 256};
  c.values[1] = {1, 2, 4, 8, 16, 32, 64};
  c.values[2] = {1, 2, 4, 8, 16, 32, 64};
  return c;
}
}  // namespace

TEST_CASE("advise plan: every knob value alone, without the defaults or values that run the same") {
  const std::vector<CacheKnobs> caches = {knobs("maple_node", 32), knobs("vm_area_struct", 40)};
  const auto plan = one_at_a_time(caches);
  // maple_node: capacity 32 is its default (6 others); vm_area_struct's 40 is not a power of
  // two (all 7); each barn limit 7 values, none of them 10.
  REQUIRE(plan.size() == (6 + 7 + 7) + (7 + 7 + 7));
  CHECK(plan[0].sysfs() == "maple_node/sheaf_capacity=4");
  CHECK(plan[6].sysfs() == "maple_node/max_full_sheaves=1");
  CHECK(plan.back().sysfs() == "vm_area_struct/max_empty_sheaves=64");
  for (const auto& s : plan) CHECK(s.writes.size() == 1);
  // A barn that never held more than 3 full sheaves at a check: limits above 3 run as the
  // default 10 does, so only 1, 2 (and 3, not a candidate) are worth a run.
  const auto pruned = one_at_a_time(caches, [](const CacheKnobs&, Knob k, int v) {
    return k == Knob::MaxFullSheaves && v > 3;
  });
  CHECK(pruned.size() == plan.size() - 2 * 5);

  // The second stage writes each kept value together; a value equal to the default is not written.
  std::vector<std::array<std::optional<int>, 3>> best(2);
  best[0] = {64, std::nullopt, 10};
  best[1] = {std::nullopt, 32, std::nullopt};
  CHECK(combine(caches, best).sysfs() == "maple_node/sheaf_capacity=64,vm_area_struct/max_full_sheaves=32");
}

TEST_CASE("advise choice: ties inside the confidence intervals go to the cheaper setting") {
  // a and b are tied (|100 - 98| < hypot(2, 2)); c is clearly slower; a costs more memory.
  std::vector<SettingOutcome> o = {
      {"", 90, 1, 1000},
      {"a", 100, 2, 5000},
      {"b", 98, 2, 2000},
      {"c", 80, 1, 500},
  };
  CHECK(beats(o[1], o[0]));
  CHECK_FALSE(beats(o[1], o[2]));
  Choice c = choose(o, 0);
  REQUIRE(c.best);
  CHECK(o[*c.best].setting == "b");
  CHECK(o[*c.runner_up].setting == "a");
  CHECK(c.defaults == 0u);
  CHECK_FALSE(c.gain_is_tie);

  // A budget of 1500 kB leaves the defaults and c: the defaults are faster.
  c = choose(o, 1500);
  CHECK(o[*c.best].setting.empty());
  CHECK(c.over_budget == 2);
  REQUIRE(c.fastest_unbudgeted);
  CHECK(o[*c.fastest_unbudgeted].setting == "a");
  CHECK(o[*c.runner_up].setting == "c");

  // Nothing fits: no recommendation, and what was excluded is counted.
  c = choose(o, 100);
  CHECK_FALSE(c.best);
  CHECK(c.over_budget == 4);

  // A gain inside the intervals at the same memory keeps the defaults; an unsettled result is
  // never chosen.
  std::vector<SettingOutcome> close = {{"x", 102, 3, 1000}, {"", 100, 3, 1000}, {"y", 150, 1, 900, false}};
  c = choose(close, 0);
  CHECK(close[*c.best].setting.empty());
  CHECK(close[*c.runner_up].setting == "x");
  CHECK(c.gain_is_tie);
  // The same gain at less memory is taken, and reported as a tie in throughput.
  close[0].memory_kb = 800;
  c = choose(close, 0);
  CHECK(close[*c.best].setting == "x");
  CHECK(c.gain_is_tie);
}

TEST_CASE("advise report: a pick that an estimate bound flips is fragile, and says which bound picks what") {
  AdvisePlan plan;
  plan.kernel = "v7.0";
  plan.request.base.topology = "t";
  plan.request.base.workload = "w";
  plan.caches = {knobs("maple_node", 32)};
  plan.nr_tasks = {64, 128};
  plan.bounds = {{"estimates-low", {"topology.latency_ns.llc=20"}, "llc 20-33 ns"},
                 {"estimates-high", {"topology.latency_ns.llc=33"}, "llc 20-33 ns"}};
  const Setting defaults{}, cap64{{{"maple_node", Knob::SheafCapacity, 64}}},
      cap256{{{"maple_node", Knob::SheafCapacity, 256}}};
  StageOutcomes all;
  all.settings = {defaults, cap64, cap256};
  // Nominal: capacity 256 wins at both task counts.
  all.by_row = {{{"", 100, 1, 1000}, {cap64.sysfs(), 110, 1, 1100}, {cap256.sysfs(), 120, 1, 1300}},
                {{"", 200, 1, 2000}, {cap64.sysfs(), 220, 1, 2200}, {cap256.sysfs(), 240, 1, 2600}}};
  all.seen.assign(2, std::vector<std::vector<std::array<int, 2>>>(3, {{{5, -1}}}));
  // The low end keeps the pick; the high end turns 64 tasks around (64 beats 256), and at 128
  // tasks makes 256 and 64 a tie (64 is cheaper).
  BoundCheck low{"estimates-low", {}}, high{"estimates-high", {}};
  low.outcomes.settings = high.outcomes.settings = all.settings;
  low.outcomes.by_row = all.by_row;
  high.outcomes.by_row = {{{"", 90, 1, 1000}, {cap64.sysfs(), 115, 1, 1100}, {cap256.sysfs(), 105, 1, 1300}},
                          {{"", 180, 1, 2000}, {cap64.sysfs(), 230, 1, 2200}, {cap256.sysfs(), 231, 1, 2600}}};
  const json a = advice_json(plan, all, {{5, -1}}, {low, high});
  REQUIRE(a["rows"].size() == 2);
  for (const auto& row : a["rows"]) {
    CHECK(row["best"]["setting"] == "maple_node/sheaf_capacity=256");
    CHECK(row["robustness"] == "fragile: estimates-high picks maple_node/sheaf_capacity=64");
    REQUIRE(row["bounds"].size() == 2);
    CHECK(row["bounds"][0]["pick"] == "maple_node/sheaf_capacity=256");
  }
  // Without the flip, robust; without bounds, not checked.
  high.outcomes.by_row = all.by_row;
  CHECK(advice_json(plan, all, {{5, -1}}, {low, high})["rows"][0]["robustness"] == "robust");
  CHECK(advice_json(plan, all, {{5, -1}}, {})["rows"][0]["robustness"].get<std::string>().rfind("not checked", 0) == 0);
  // The table shows it.
  const std::string t = advice_table(plan, a);
  CHECK(t.find("fragile: estimates-high picks maple_node/sheaf_capacity=64") != std::string::npos);
}
