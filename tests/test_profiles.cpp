// Spin by call chain (Frame, why.<N>.spin.* keys), published profiles in experiment files and
// their scoring, and the scoreboard's sensitivity figures (VALIDATION.md "Profiles",
// "Sensitivity").
#include <doctest/doctest.h>

#include "helpers.h"
#include "models/immediate.h"
#include "sim/validate/experiment.h"
#include "sim/run/job.h"
#include "sim/run/report.h"
#include "sim/validate/score.h"
#include "sim/validate/validate.h"
#include "sim/run/why.h"

using namespace slubsim;
using namespace slubsim::test;

namespace {

json with_profiles(const json& profiles) {
  json d = json::parse(R"({
    "id": "x", "table": "T99", "title": "t", "source": "s", "calibration_set": true,
    "topologies": ["small-2s-8c"], "workload": "mmap2", "mode": "process", "nr_task": [2, 8],
    "duration": "1ms", "warmup": "500us", "runs": 1, "seed": 1,
    "variants": [
      {"name": "a", "label": "A", "kernel": "v6.17", "role": "baseline"},
      {"name": "b", "label": "B", "kernel": "v7.0"}
    ],
    "cells": [{"metric": "will-it-scale.8.processes", "baseline": "a", "test": "b", "published_delta_pct": 10}]
  })");
  d["profiles"] = profiles;
  return d;
}

// One variant's run of experiment e, with the stats.json it scored.
VariantRun variant_run(const Experiment& e, const std::string& name, json stats) {
  VariantRun r;
  r.experiment = &e;
  r.variant = e.variant(name);
  r.stats = std::move(stats);
  return r;
}

ProfileRow row(std::vector<std::string> under, std::string in = "", std::vector<std::string> not_under = {},
               std::string lock = "") {
  ProfileRow r;
  r.under = std::move(under);
  r.in = std::move(in);
  r.not_under = std::move(not_under);
  r.lock = std::move(lock);
  return r;
}

}  // namespace

TEST_CASE("frame: the stack names the enclosing kernel functions, outermost first, and unwinds") {
  ImmediateShared shared;
  ImmediateExec e(shared, 0, 0);
  CHECK(e.depth() == 0);
  {
    Frame a(e, "rcu_do_batch");
    {
      Frame b(e, "__slab_free");
      REQUIRE(e.depth() == 2);
      CHECK(std::string(e.frame(0)) == "rcu_do_batch");
      CHECK(std::string(e.frame(1)) == "__slab_free");
    }
    CHECK(e.depth() == 1);
  }
  CHECK(e.depth() == 0);
}

TEST_CASE("why: lock waits are reported per call chain and per row, summing to the waits") {
  auto m = preset("small-2s-8c");
  auto c = default_costs();
  // A global lock taken outside any named function: its stack is the class alone.
  auto r = run_program(m, c, lock_program(1 * kUs, 1 * kUs, false, Scope::Global), 8, 2 * kMs);
  REQUIRE(r.stack_waits.size() == 1);
  CHECK(r.stack_waits[0].stack.empty());
  CHECK(folded_stack(r.stack_waits[0]) == "test_lock");
  Time waits = 0;
  for (const auto& l : r.locks) waits += l.waited.slab + l.waited.nonslab;
  CHECK(r.stack_waits[0].time == waits);
  json s = lkp_run_stats({r}, Mode::Process);
  REQUIRE(s.contains("why.8.spin.test_lock.percent"));
  CHECK(s["why.8.spin.test_lock.percent"].get<double>() ==
        doctest::Approx(s["why.8.nonslab.wait.test_lock.percent"].get<double>()).epsilon(0.001));
  CHECK(s["why.8.nonslab.percent"] == s["why.nonslab.percent"]);  // one row: the mean is the row
}

TEST_CASE("why: an allocator's lock waits name the kernel path that took the lock") {
  auto m = preset("small-2s-8c");
  auto c = default_costs();
  // v7.0 sheaf bursts on every CPU: barn waits under the sheaf paths.
  (void)m;
  (void)c;
  JobRequest req = job_request("small-2s-8c", "sheaf-burst", "v7.0", "8", "2ms", "2ms");
  Job job = resolve_job(req);
  JobResult res = run_job(job, {});
  const RunResult& r = res.runs[0][0][0];
  bool barn = false;
  for (const auto& w : r.stack_waits) {
    CHECK_FALSE(w.stack.empty());
    if (w.cls == "maple_node.barn_lock") {
      barn = true;
      CHECK(w.stack.find("barn_") != std::string::npos);
    }
  }
  CHECK(barn);
}

TEST_CASE("profiles: a folded stack matches a row by order, innermost function, exclusions and lock") {
  const std::string direct = "rcu_do_batch;__slab_free;maple_node.list_lock";
  const std::string flush = "rcu_do_batch;__pcs_replace_full_main;sheaf_flush_unused;__kmem_cache_free_bulk;"
                            "__slab_free;maple_node.list_lock";
  CHECK(stack_matches(direct, row({})));
  CHECK(stack_matches(direct, row({"rcu_do_batch"}, "__slab_free")));
  CHECK(stack_matches(flush, row({"rcu_do_batch"}, "__slab_free")));
  CHECK_FALSE(stack_matches(flush, row({"rcu_do_batch"}, "__slab_free", {"__kmem_cache_free_bulk"})));
  CHECK(stack_matches(flush, row({"__pcs_replace_full_main", "__kmem_cache_free_bulk"}, "__slab_free")));
  CHECK_FALSE(stack_matches(flush, row({"__kmem_cache_free_bulk", "__pcs_replace_full_main"})));  // order
  CHECK_FALSE(stack_matches(direct, row({}, "rcu_do_batch")));  // not the innermost frame
  CHECK(stack_matches(direct, row({}, "", {}, "list_lock")));
  CHECK_FALSE(stack_matches(direct, row({}, "", {}, "barn_lock")));
  CHECK_FALSE(stack_matches("test_lock", row({}, "__slab_free")));  // no frames at all
}

TEST_CASE("profiles: the simulated share sums the matching why.<N>.spin keys of that row only") {
  json s = json::object();
  s["why.192.spin.rcu_do_batch;__slab_free;maple_node.list_lock.percent"] = 10.0;
  s["why.192.spin.___slab_alloc;get_partial_node;maple_node.list_lock.percent"] = 2.5;
  s["why.192.spin.___slab_alloc;get_partial_node;maple_node.list_lock.ns_per_op"] = 99.0;
  s["why.64.spin.rcu_do_batch;__slab_free;maple_node.list_lock.percent"] = 7.0;
  s["why.192.wait.maple_node.list_lock.node0.percent"] = 12.5;
  CHECK(profile_share(s, 192, row({})) == doctest::Approx(12.5));
  CHECK(profile_share(s, 192, row({"rcu_do_batch"}, "__slab_free")) == doctest::Approx(10.0));
  CHECK(profile_share(s, 64, row({})) == doctest::Approx(7.0));
  CHECK(profile_share(s, 8, row({})) == 0.0);
}

TEST_CASE("profiles: experiment files give them per variant and task count, checked") {
  json good = json::parse(R"([{"variant": "a", "nr_task": 8, "source": "lkp", "rows": [
      {"row": "children: native_queued_spin_lock_slowpath", "published": 29.4, "share": "children"},
      {"row": "spin <- __slab_free <- rcu_do_batch", "published": 10.6, "share": "children",
       "under": ["rcu_do_batch"], "in": "__slab_free", "not_under": ["__kmem_cache_free_bulk"], "lock": "list_lock"}]}])");
  auto e = parse_experiment(with_profiles(good), "dir/x.json");
  REQUIRE(e.profiles.size() == 1);
  CHECK(e.profiles[0].rows.size() == 2);
  CHECK(e.profiles[0].rows[1].in == "__slab_free");
  CHECK(e.profiles[0].rows[1].not_under == std::vector<std::string>{"__kmem_cache_free_bulk"});

  auto bad = [&](const char* path, json value) {
    json p = good;
    p[0] = p[0];
    json* cur = &p;
    std::string s = path;
    std::size_t start = 0;
    while (true) {
      auto dot = s.find('.', start);
      std::string part = s.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      cur = part.find_first_not_of("0123456789") == std::string::npos ? &(*cur)[std::stoul(part)] : &(*cur)[part];
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    *cur = std::move(value);
    return test::experiment_error_field(with_profiles(p));
  };
  CHECK(bad("0.variant", "zz") == "profiles[0].variant");
  CHECK(bad("0.nr_task", 16) == "profiles[0].nr_task");
  CHECK(bad("0.rows.0.share", "total") == "profiles[0].rows[0].share");
  CHECK(bad("0.rows.0.published", 130) == "profiles[0].rows[0].published");
  CHECK(bad("0.rows.1.in", "a;b") == "profiles[0].rows[1].in");
  CHECK(bad("0.rows.1.under", json::array({""})) == "profiles[0].rows[1].under[0]");
  CHECK(bad("0.rows.0.typo", 1) == "profiles[0].rows[0].typo");
  CHECK(bad("0.rows", json::array()) == "profiles[0].rows");
}

TEST_CASE("counters: experiment files give them per variant and task count, checked, scored as ratios") {
  json d = with_profiles(json::array());
  d.erase("profiles");
  d["counters"] = json::parse(R"([{"variant": "a", "nr_task": 8, "row": "pgalloc per op",
      "key": "proc-vmstat.{N}.pgalloc_normal_per_op", "published": 0.05, "source": "lkp"}])");
  auto e = parse_experiment(d, "dir/x.json");
  REQUIRE(e.counters.size() == 1);
  CHECK(e.counters[0].stats_key(8) == "proc-vmstat.8.pgalloc_normal_per_op");
  auto bad = [&](const char* key, json value) {
    json x = d;
    x["counters"][0][key] = std::move(value);
    return test::experiment_error_field(x);
  };
  CHECK(bad("variant", "zz") == "counters[0].variant");
  CHECK(bad("nr_task", 16) == "counters[0].nr_task");
  CHECK(bad("published", 0) == "counters[0].published");
  CHECK(bad("key", "") == "counters[0].key");
  CHECK(bad("key", "proc-vmstat.{N}.pgalloc_normal") == "counters[0].key");
  CHECK(bad("key", "slabinfo.skbuff_head_cache.alloc_fastpath") == "counters[0].key");
  CHECK(bad("key", "slabinfo..alloc_fastpath_pct") == "counters[0].key");
  CHECK(bad("key", "slabinfo.skbuff_head_cache.alloc_refill_pct") == "");
  CHECK(bad("typo", 1) == "counters[0].typo");

  // Factor = 2^median |log2 ratio|: 0.5 and 2 are both off by 2; a zero by the floor, 1000.
  ExperimentCounter c;
  c.published = 0.04;
  CounterScore half{&c, true, 0.02}, twice{&c, true, 0.08}, exact{&c, false, 0.04}, none{&c, false, std::nullopt},
      zero{&c, false, 0.0};
  CHECK(*half.ratio() == doctest::Approx(0.5));
  CHECK_FALSE(none.ratio());
  auto t = counter_totals({&half, &twice, &exact, &none});
  CHECK(t.rows == 3);
  CHECK(*t.median_factor == doctest::Approx(2.0));
  CHECK(*counter_totals({&zero}).median_factor == doctest::Approx(1000.0));
  CHECK_FALSE(counter_totals({&none}).median_factor);

  // A one-row counter is scored by the row's figure as stats.json has it, bit for bit
  // (0.00152 x 6 / 6 is not 0.00152 in binary floating point).
  json d6 = d;
  d6["nr_task"] = {2, 6};
  d6["cells"][0]["metric"] = "will-it-scale.6.processes";
  d6["counters"][0]["nr_task"] = 6;
  auto e6 = parse_experiment(d6, "dir/x.json");
  const double v = 0.00152;
  REQUIRE(v * 6 / 6 != v);
  auto run = [&](const std::string& name, json stats) { return variant_run(e6, name, std::move(stats)); };
  json a = {{"will-it-scale.6.processes", 1000}, {"proc-vmstat.6.pgalloc_normal_per_op", v}};
  std::vector<VariantRun> runs = {run("a", a), run("b", {{"will-it-scale.6.processes", 1000}})};
  const std::vector<std::optional<Fit>> fits(1);
  auto sc = score_experiment(e6, runs, fits);
  REQUIRE(sc.topologies.size() == 1);
  REQUIRE(sc.topologies[0].counters.size() == 1);
  CHECK(*sc.topologies[0].counters[0].simulated == v);
}

TEST_CASE("counters: a whole-job counter over several task counts is their task-weighted mean") {
  json d = with_profiles(json::array());
  d.erase("profiles");
  d["counters"] = json::parse(R"([{"variant": "a", "nr_task": [2, 8], "row": "involuntary switches over the job",
      "key": "sched.{N}.involuntary_switches_per_task_sec", "published": 30, "source": "lkp"}])");
  auto e = parse_experiment(d, "dir/x.json");
  REQUIRE(e.counters.size() == 1);
  CHECK(e.counters[0].nr_task == std::vector<int>{2, 8});
  CHECK(e.counters[0].tasks_text() == "2+8");
  auto bad = [&](json value, const char* key = "nr_task") {
    json x = d;
    x["counters"][0][key] = std::move(value);
    return test::experiment_error_field(x);
  };
  CHECK(bad(json::array({2})) == "counters[0].nr_task");                 // a list names at least two
  CHECK(bad(json::array({2, 2})) == "counters[0].nr_task[1]");           // each once
  CHECK(bad(json::array({2, 16})) == "counters[0].nr_task[1]");          // each a row of the experiment
  CHECK(bad(json::array({16, 2})) == "counters[0].nr_task");
  CHECK(bad("proc-vmstat.{N}.pgalloc_normal_per_op", "key") == "counters[0].nr_task");  // per op: not averaged
  CHECK(bad(8) == "");

  // Scored from the variant's stats: (2 x 10 + 8 x 40) / 10 = 34; a key absent from a row counts 0.
  auto run = [&](const std::string& name, json stats) { return variant_run(e, name, std::move(stats)); };
  const json cell = {{"will-it-scale.8.processes", 1000}};
  json a = cell;
  a["sched.2.involuntary_switches_per_task_sec"] = 10;
  a["sched.8.involuntary_switches_per_task_sec"] = 40;
  std::vector<VariantRun> runs = {run("a", a), run("b", cell)};
  const std::vector<std::optional<Fit>> fits(1);
  auto sc = score_experiment(e, runs, fits);
  REQUIRE(sc.topologies.size() == 1);
  REQUIRE(sc.topologies[0].counters.size() == 1);
  CHECK(*sc.topologies[0].counters[0].simulated == doctest::Approx(34.0));
  CHECK(sc.topologies[0].counters[0].fitted);  // a baseline of the calibration set
  a.erase("sched.2.involuntary_switches_per_task_sec");  // lkp drops a key that is zero
  runs = {run("a", a), run("b", cell)};
  CHECK(*score_experiment(e, runs, fits).topologies[0].counters[0].simulated == doctest::Approx(32.0));
}

TEST_CASE("sensitivity: ratio of medians, slope through the origin and rank correlation") {
  // Simulated = half the published, same order: ratio 0.5, slope 0.5, Spearman 1.
  auto s = sensitivity({{10, 5}, {-20, -10}, {40, 20}, {-4, -2}});
  CHECK(s.cells == 4);
  CHECK(*s.ratio == doctest::Approx(0.5));
  CHECK(*s.slope == doctest::Approx(0.5));
  CHECK(*s.spearman == doctest::Approx(1.0));
  // Reversed order: Spearman -1; a flat model: slope 0, no rank correlation (all ties).
  auto r = sensitivity({{1, 3}, {2, 2}, {3, 1}});
  CHECK(*r.spearman == doctest::Approx(-1.0));
  auto flat = sensitivity({{10, 0}, {20, 0}, {-5, 0}});
  CHECK(*flat.slope == doctest::Approx(0.0));
  CHECK(*flat.ratio == doctest::Approx(0.0));
  CHECK_FALSE(flat.spearman);
  CHECK(sensitivity({}).cells == 0);
  CHECK_FALSE(sensitivity({}).ratio);
}

TEST_CASE("sensitivity: a comparison printed under two metrics is one comparison") {
  ExperimentCell c;
  c.baseline = "a";
  c.test = "b";
  c.metric = "will-it-scale.192.processes";
  auto k1 = comparison_key(c, {192});
  c.metric = "will-it-scale.per_process_ops";
  auto k2 = comparison_key(c, {192});
  REQUIRE(k1);
  CHECK(k1 == k2);  // one row: the per-task figure is the same comparison
  CHECK(comparison_key(c, {64, 128}) != comparison_key(ExperimentCell{.metric = "will-it-scale.64.processes",
                                                                      .baseline = "a", .test = "b"},
                                                        {64, 128}));
  c.metric = "will-it-scale.workload";
  CHECK(comparison_key(c, {64, 128}) == comparison_key(ExperimentCell{.metric = "will-it-scale.per_process_ops",
                                                                      .baseline = "a", .test = "b"},
                                                        {64, 128}));
  c.metric = "will-it-scale.192.processes_idle";
  CHECK_FALSE(comparison_key(c, {192}));
  c.metric = "meminfo.SUnreclaim";
  CHECK_FALSE(comparison_key(c, {192}));
}
