// The advisor's plan and choice (sim/advise/choose.h): which settings a search evaluates, and
// how it picks among settled results with confidence intervals and a memory budget.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <functional>
#include <map>

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

namespace {
AdvisePlan plan_of(std::vector<CacheKnobs> caches) {
  AdvisePlan plan;
  plan.kernel = "v7.0";
  plan.request.base.topology = "t";
  plan.request.base.workload = "w";
  for (const auto& c : caches) {
    std::map<int, int> used;
    for (int v : c.values[0]) used[v] = std::max(v, c.get(Knob::SheafCapacity) == 32 ? 28 : 0);
    used[c.get(Knob::SheafCapacity)] = c.get(Knob::SheafCapacity);
    plan.capacity_used.push_back(used);
  }
  plan.caches = std::move(caches);
  return plan;
}
}  // namespace

TEST_CASE("advise ladder: candidates the kernel runs alike are one rung, the default's is not run") {
  // maple_node: 7.0 raises a written capacity below its automatic 28 to 28 (4, 8 and 16 run
  // alike), and 32 is the default.
  const AdvisePlan plan = plan_of({knobs("maple_node", 32)});
  const auto cap = ladder(plan, 0, Knob::SheafCapacity, {-1, -1});
  REQUIRE(cap.size() == 5);  // 28 (4, 8, 16), the default 32, 64, 128, 256
  CHECK(cap[0].value == 4);
  CHECK(cap[0].same == std::vector<int>{8, 16});
  CHECK(cap[1].value == 32);
  CHECK(cap[1].is_default);
  CHECK(cap[4].value == 256);
  // A barn that never held more than 3 full sheaves at a check: the default 10 and every limit
  // above 3 run alike; 1 and 2 do not.
  const auto full = ladder(plan, 0, Knob::MaxFullSheaves, {3, -1});
  REQUIRE(full.size() == 3);
  CHECK(full[0].value == 1);
  CHECK(full[1].value == 2);
  CHECK(full[2].is_default);
  CHECK(full[2].same == std::vector<int>{4, 8, 16, 32, 64});
  // A limit never checked (-1): every value runs as the default.
  CHECK(ladder(plan, 0, Knob::MaxEmptySheaves, {3, -1}).size() == 1);
  // A limit reached (the barn held 12 > 10): every value is its own rung.
  CHECK(ladder(plan, 0, Knob::MaxEmptySheaves, {3, 12}).size() == 8);

  // The joint stage writes each kept value together; a value equal to the default is not written.
  const std::vector<CacheKnobs> caches = {knobs("maple_node", 32), knobs("vm_area_struct", 40)};
  std::vector<std::array<std::optional<int>, 3>> best(2);
  best[0] = {64, std::nullopt, 10};
  best[1] = {std::nullopt, 32, std::nullopt};
  CHECK(combine(caches, best).sysfs() == "maple_node/sheaf_capacity=64,vm_area_struct/max_full_sheaves=32");
}

namespace {
// Runs a search over a made-up throughput per (knob, value) with half-width 1 and returns the
// values run per knob, in order.
RowSearch search(const AdvisePlan& plan, const std::function<double(Knob, int)>& ops) {
  RowSearch rs;
  rs.nr_task = 8;
  rs.run.settings = {Setting{}};
  rs.run.outcomes = {{"", 100, 1, 1000}};
  rs.seen = {{20, 20}};  // both barn limits reached: every value its own rung
  start_search(plan, rs);
  for (int round = 0; round < 20; ++round) {
    const auto next = next_round(plan, rs);
    if (next.empty()) break;
    RowOutcomes got;
    got.settings = next;
    for (const auto& s : next) {
      const auto& w = s.writes.front();
      got.outcomes.push_back({s.sysfs(), ops(w.knob, w.value), 1, 1000.0 + w.value});
      got.seen.push_back({{20, 20}});
    }
    record_round(plan, rs, got);
  }
  return rs;
}
}  // namespace

TEST_CASE("advise climb: from the default, the better neighbour, then on while each beats the last") {
  AdvisePlan plan = plan_of({knobs("maple_node", 32)});
  // Capacity: throughput rises to 128 and falls after; the barn limits: flat (ties).
  auto ops = [](Knob k, int v) {
    if (k != Knob::SheafCapacity) return 100.5;
    return v == 28 ? 90.0 : v == 64 ? 110.0 : v == 128 ? 120.0 : v == 256 ? 119.0 : 100.0;
  };
  RowSearch rs = search(plan, ops);
  REQUIRE(rs.climbs.size() == 3);
  const Climb& cap = rs.climbs[0];
  CHECK(cap.path == std::vector<int>{4, 64, 128, 256});  // 4 is the rung of 4, 8, 16 (28)
  CHECK(cap.rungs[cap.at].value == 128);
  CHECK(cap.ended == "256 does not beat 128 beyond the confidence intervals");
  // A flat knob stops after its two neighbours.
  CHECK(rs.climbs[1].path == std::vector<int>{8, 16});
  CHECK(rs.climbs[1].ended == "neither neighbour beats the default beyond the confidence intervals");
  CHECK(rs.rounds == 3);
  // 1 (defaults) + 4 + 2 + 2 settings, far fewer than the grid's 1 + 4 + 7 + 7.
  CHECK(rs.run.outcomes.size() == 9);
  CHECK(joint_settings(plan, rs).empty());  // one knob moved: nothing to combine

  // Rising to the end of the range stops there; two knobs that move are then run together.
  auto rising = [](Knob k, int v) { return k == Knob::MaxEmptySheaves ? 100.0 - v / 8.0 : k == Knob::SheafCapacity ? 100.0 + v : 100.0 + v / 8.0; };
  rs = search(plan, rising);
  CHECK(rs.climbs[0].rungs[rs.climbs[0].at].value == 256);
  CHECK(rs.climbs[0].ended == "256 is the end of the range");
  CHECK(rs.climbs[1].rungs[rs.climbs[1].at].value == 64);
  CHECK(rs.climbs[2].ended == "neither neighbour beats the default beyond the confidence intervals");
  const auto joint = joint_settings(plan, rs);
  REQUIRE(joint.size() == 1);
  CHECK(joint[0].sysfs() == "maple_node/sheaf_capacity=256,maple_node/max_full_sheaves=64");

  // The grid runs every rung in one round and keeps the best that beats the default.
  plan.request.search = "grid";
  rs = search(plan, ops);
  CHECK(rs.rounds == 1);
  CHECK(rs.run.outcomes.size() == 1 + 4 + 7 + 7);
  CHECK(rs.climbs[0].rungs[rs.climbs[0].at].value == 128);
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
  // Nominal: capacity 256 wins at both task counts.
  std::vector<RowSearch> rows(2);
  rows[0].nr_task = 64;
  rows[1].nr_task = 128;
  rows[0].run.settings = rows[1].run.settings = {defaults, cap64, cap256};
  rows[0].run.outcomes = {{"", 100, 1, 1000}, {cap64.sysfs(), 110, 1, 1100}, {cap256.sysfs(), 120, 1, 1300}};
  rows[1].run.outcomes = {{"", 200, 1, 2000}, {cap64.sysfs(), 220, 1, 2200}, {cap256.sysfs(), 240, 1, 2600}};
  // The low end keeps the pick; the high end turns 64 tasks around (64 beats 256), and at 128
  // tasks makes 256 and 64 a tie (64 is cheaper).
  std::vector<std::vector<BoundCheck>> checks(2);
  for (int r = 0; r < 2; ++r) {
    BoundCheck low{"estimates-low", rows[r].run}, high{"estimates-high", rows[r].run};
    checks[r] = {low, high};
  }
  checks[0][1].outcomes.outcomes = {{"", 90, 1, 1000}, {cap64.sysfs(), 115, 1, 1100}, {cap256.sysfs(), 105, 1, 1300}};
  checks[1][1].outcomes.outcomes = {{"", 180, 1, 2000}, {cap64.sysfs(), 230, 1, 2200}, {cap256.sysfs(), 231, 1, 2600}};
  const json a = advice_json(plan, rows, checks);
  REQUIRE(a["rows"].size() == 2);
  for (const auto& row : a["rows"]) {
    CHECK(row["best"]["setting"] == "maple_node/sheaf_capacity=256");
    CHECK(row["robustness"] == "fragile: estimates-high picks maple_node/sheaf_capacity=64");
    REQUIRE(row["bounds"].size() == 2);
    CHECK(row["bounds"][0]["pick"] == "maple_node/sheaf_capacity=256");
  }
  // Without the flip, robust over the inputs; whether robust at all is the model's record's to
  // say (a knob within one kernel): no scoreboard here, so it says it could not check.
  for (int r = 0; r < 2; ++r) checks[r][1].outcomes = rows[r].run;
  CHECK(advice_json(plan, rows, checks)["rows"][0]["robustness"].get<std::string>().rfind(
            "robust over the inputs' ranges; no record", 0) == 0);
  // A record of ±25 points holds the +20% gain inside it: fragile; one of ±10 points: robust.
  const auto home = std::filesystem::temp_directory_path() / "slubsim-advise-record";
  std::filesystem::create_directories(home / "results");
  auto record = [&](double h) {
    std::ofstream(home / "results" / "scoreboard.json")
        << json{{"record", {{"kinds", {{"knob", {{"answer_half_width_pp", h}, {"cells", 31}, {"covered", 29}}}}}}}}.dump();
  };
  plan.request.base.home = home.string();
  record(25);
  CHECK(advice_json(plan, rows, checks)["rows"][0]["robustness"] ==
        "fragile: the gain (+20.0%) lies within the model's record for a knob within one kernel (±25.0 points, 90%)");
  record(10);
  CHECK(advice_json(plan, rows, checks)["rows"][0]["robustness"] == "robust");
  std::filesystem::remove_all(home);
  plan.request.base.home.clear();
  CHECK(advice_json(plan, rows, {})["rows"][0]["robustness"].get<std::string>().rfind("not checked", 0) == 0);
  plan.request.bounds = false;
  CHECK(advice_json(plan, rows, {})["rows"][0]["robustness"] == "not checked (--no-bounds)");
  plan.request.bounds = true;
  // The table shows it.
  const std::string t = advice_table(plan, a);
  CHECK(t.find("fragile: estimates-high picks maple_node/sheaf_capacity=64") != std::string::npos);
}
