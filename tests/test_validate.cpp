// slubsim validate: experiment files, scoring arithmetic (VALIDATION.md), the scoreboard's
// formatting, the calibration search and fit files. Nothing is simulated here (one case resolves a
// job); tests/e2e/validate.sh runs the binary.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include "helpers.h"
#include "sim/validate/experiment.h"
#include "sim/validate/fit.h"
#include "sim/validate/score.h"
#include "sim/validate/scoreboard.h"
#include "sim/validate/validate.h"

using namespace slubsim;

namespace {

json tiny() {
  return json::parse(R"({
    "id": "x", "table": "T99", "title": "t", "source": "s", "calibration_set": true,
    "topologies": ["small-2s-8c"], "workload": "mmap2", "mode": "process", "nr_task": [2, 8],
    "duration": "1ms", "warmup": "500us", "runs": 1, "seed": 1, "set": [],
    "fit": {"parameters": ["mmap_locked_ns"], "variant": "a", "nr_task": 2,
            "metric": "will-it-scale.2.processes", "published": 1000},
    "variants": [
      {"name": "a", "label": "A", "kernel": "v6.17", "role": "baseline"},
      {"name": "b", "label": "B", "kernel": "v7.0", "patches": ["+spare-sheaf"], "sheaf_capacity": "maple_node=64"},
      {"name": "c", "label": "C", "kernel": "v6.17", "excluded": "no knob"}
    ],
    "cells": [
      {"metric": "will-it-scale.8.processes", "baseline": "a", "test": "b",
       "published_baseline": 100, "published_test": 110, "published_delta_pct": 10},
      {"metric": "will-it-scale.8.processes", "baseline": "a", "test": "c",
       "published_baseline": 100, "published_test": 120, "published_delta_pct": 20, "excluded": "no knob"}
    ]
  })");
}

// The ConfigError's field for a broken document, or "" if it parses.
std::string error_field(const json& doc) {
  try {
    parse_experiment(doc, "dir/x.json");
  } catch (const ConfigError& e) {
    CHECK(e.file() == "dir/x.json");
    return e.field();
  }
  return "";
}

ExperimentCell cell(double published, bool noise = false) {
  return ExperimentCell{.metric = "m", .baseline = "a", .test = "b", .published_delta_pct = published, .noise = noise};
}

}  // namespace

TEST_CASE("experiment: a good file parses into variants, cells and a fit") {
  auto e = parse_experiment(tiny(), "dir/x.json");
  CHECK(e.id == "x");
  REQUIRE(e.variants.size() == 3);
  CHECK(e.baseline().name == "a");
  CHECK(e.variants[1].patches == std::vector<std::string>{"+spare-sheaf"});
  CHECK(e.variants[2].excluded == "no knob");
  REQUIRE(e.fit);
  CHECK(e.fit->nr_task == 2);
  REQUIRE(e.topologies.size() == 1);
  CHECK(e.topologies[0].nr_task == std::vector<int>{2, 8});
  CHECK(e.cells[1].excluded == "no knob");
}

TEST_CASE("experiment: errors name the field") {
  auto d = tiny();
  d.erase("workload");
  CHECK(error_field(d) == "workload");

  d = tiny();
  d["cells"][0]["test"] = "nope";
  CHECK(error_field(d) == "cells[0].test");

  d = tiny();
  d["cells"][0]["test"] = "c";  // an excluded variant in a scored cell
  CHECK(error_field(d) == "cells[0].test");

  d = tiny();
  d["id"] = "y";  // not the file's name
  CHECK(error_field(d) == "id");

  d = tiny();
  d["variants"][1]["colour"] = "red";
  CHECK(error_field(d) == "variants[1].colour");

  d = tiny();
  d["variants"][1]["role"] = "baseline";  // two baselines
  CHECK(error_field(d) == "variants");

  d = tiny();
  d["variants"][1]["sheaf_capacity"] = "32,64";  // a sweep is not one variant
  CHECK(error_field(d) == "variants[1].sheaf_capacity");

  d = tiny();
  d["nr_task"] = json::array({8, 2});
  CHECK(error_field(d) == "nr_task[1]");

  d = tiny();
  d["cells"][0]["metric"] = "will-it-scale.4.processes";  // not a row
  CHECK(error_field(d) == "cells[0].metric");

  d = tiny();
  d["cells"][0]["metric"] = "will-it-scale.8.threads";  // process mode
  CHECK(error_field(d) == "cells[0].metric");

  d = tiny();
  d["set"] = json::array({"nodot=1"});
  CHECK(error_field(d) == "set[0]");

  d = tiny();
  d["duration"] = "10";
  CHECK(error_field(d) == "duration");
}

TEST_CASE("experiment: a fit on a predicted state is refused") {
  auto d = tiny();
  d["fit"]["variant"] = "b";  // not the baseline
  CHECK(error_field(d) == "fit.variant");

  d = tiny();
  d["fit"]["nr_task"] = 8;  // not the lowest task count
  d["fit"]["metric"] = "will-it-scale.8.processes";
  CHECK(error_field(d) == "fit.nr_task");

  d = tiny();  // a topology whose rows start higher
  d["topologies"] = json::parse(R"(["small-2s-8c", {"name": "other", "nr_task": [4, 8]}])");
  CHECK(error_field(d) == "fit.nr_task");
}

TEST_CASE("experiment: a pin on a profile share, only for a table with no published absolute") {
  auto deltas_only = [] {
    auto d = tiny();
    for (auto& c : d["cells"]) {
      c["published_baseline"] = nullptr;
      c["published_test"] = nullptr;
    }
    d["fit"]["nr_task"] = 8;  // where the profile was taken, not the lowest
    d["fit"]["metric"] = "why.8.spin.percent";
    d["fit"]["published"] = 61.76;
    return d;
  };
  auto d = deltas_only();
  CHECK(error_field(d) == "");
  auto e = parse_experiment(d, "dir/x.json");
  CHECK(e.fit->pin());
  CHECK(e.fit->nr_task == 8);

  d = deltas_only();  // a table with an absolute is fitted on its throughput
  d["cells"][0]["published_baseline"] = 100;
  d["cells"][0]["published_test"] = 110;
  CHECK(error_field(d) == "fit.metric");

  d = deltas_only();  // another profile key is not a pin's observable
  d["fit"]["metric"] = "why.8.nonslab.percent";
  CHECK(error_field(d) == "fit.metric");

  d = deltas_only();  // the share's task count is the fit's
  d["fit"]["metric"] = "why.2.spin.percent";
  CHECK(error_field(d) == "fit.metric");

  d = deltas_only();  // a task count with no row
  d["fit"]["nr_task"] = 4;
  d["fit"]["metric"] = "why.4.spin.percent";
  CHECK(error_field(d) == "fit.nr_task");

  d = deltas_only();  // a share is below 100
  d["fit"]["published"] = 120;
  CHECK(error_field(d) == "fit.published");

  d = deltas_only();  // still only on the baseline
  d["fit"]["variant"] = "b";
  CHECK(error_field(d) == "fit.variant");
}

TEST_CASE("fit: the scale search pins a spin share that falls as the non-slab time grows") {
  // A spin share that grows smoothly with the load on a lock, rho = 4 / (40 s + 1) (9% at s = 1),
  // and is published at s = 0.037 (about 62%).
  auto spin = [](double s) {
    const double rho = 4.0 / (s * 40.0 + 1.0);
    return 100.0 * rho / (1.0 + rho);
  };
  const double published = spin(0.037);
  REQUIRE(published > 60);
  REQUIRE(spin(1.0) < 10);
  auto found = search_scale(published, spin);
  CHECK(found.converged);
  CHECK(found.simulations <= kFitMaxSimulations);
  CHECK(found.scale == doctest::Approx(0.037).epsilon(0.02));
}

TEST_CASE("experiment: every file in configs/experiments parses") {
  auto all = load_experiments(test::source_dir() + "/configs/experiments", "");
  CHECK(all.size() >= 9);
  for (const auto& e : all) {
    CHECK(!e.cells.empty());
    if (e.fit) CHECK(e.variant(e.fit->variant)->baseline);
  }
  auto one = load_experiments(test::source_dir() + "/configs/experiments", "t01-hao-li-mmap2");
  REQUIRE(one.size() == 1);
  CHECK(one[0].cells.size() == 13);
  CHECK_THROWS_AS(load_experiments(test::source_dir() + "/configs/experiments", "t99-nothing"), ConfigError);
}

TEST_CASE("score: sign agreement, the 3% no-change band and noise") {
  auto up = cell(10);
  CHECK(score_cell(up, 100, 105).agree);
  CHECK(*score_cell(up, 100, 105).abs_error_pp == doctest::Approx(5));
  CHECK_FALSE(score_cell(up, 100, 95).agree);
  CHECK(*score_cell(up, 100, 95).abs_error_pp == doctest::Approx(15));
  CHECK_FALSE(score_cell(up, 100, 100).agree);  // no change against a published +10%
  CHECK_FALSE(score_cell(up, 100, 102.9).agree);  // +2.9% is "no change", not a +
  CHECK(score_cell(up, 100, 103).agree);
  CHECK_FALSE(score_cell(cell(-10), 100, 97.5).agree);
  CHECK(score_cell(cell(-10), 100, 96).agree);

  auto small = cell(-2.1);  // |published| < 3%: "no change"
  auto s = score_cell(small, 100, 102.5);
  CHECK(s.no_change);
  CHECK(s.agree);  // +2.5% is inside the band, whatever its sign
  CHECK_FALSE(score_cell(small, 100, 96.9).agree);
  CHECK(*score_cell(small, 100, 96.9).abs_error_pp == doctest::Approx(1.0));

  auto noise = cell(12, true);  // the author calls it noise
  CHECK(score_cell(noise, 100, 101).agree);
  CHECK_FALSE(score_cell(noise, 100, 112).agree);

  auto zero = score_cell(up, 0, 5);
  CHECK_FALSE(zero.sim_delta);
  CHECK_FALSE(zero.agree);
  CHECK_FALSE(zero.abs_error_pp);
}

TEST_CASE("score: a published time converts to a throughput change") {
  auto c = cell(-11.0);
  c.lower_is_better = true;
  c.published_baseline = 2.44;
  c.published_test = 2.16;
  CHECK(c.published_effective_delta() == doctest::Approx((2.44 / 2.16 - 1) * 100));
  auto s = score_cell(c, 100, 112);
  CHECK(s.agree);
  CHECK(*s.abs_error_pp == doctest::Approx(std::fabs(12 - (2.44 / 2.16 - 1) * 100)));
}

TEST_CASE("score: median and totals") {
  CHECK_FALSE(median({}));
  CHECK(*median({3}) == 3);
  CHECK(*median({5, 1, 3}) == 3);
  CHECK(*median({4, 1, 3, 2}) == 2.5);

  auto a = cell(10), b = cell(-10), c = cell(1), x = cell(50);
  x.excluded = "why";
  std::vector<CellScore> cells = {score_cell(a, 100, 104), score_cell(b, 100, 101), score_cell(c, 100, 100.5),
                                  excluded_cell(x)};
  auto t = totals(cells);
  CHECK(t.cells == 3);
  CHECK(t.excluded == 1);
  CHECK(t.agree == 2);  // +4 vs +10 yes; +1 (no change) vs -10 no; +0.5 vs +1 (no change) yes
  CHECK(*t.agree_pct() == doctest::Approx(66.666).epsilon(0.001));
  // errors 6, 11, 0.5: median 6
  CHECK(*t.median_abs_error_pp == doctest::Approx(6));
}

TEST_CASE("score: the best topology has the lowest median error; totals count it once") {
  auto e = parse_experiment(tiny(), "dir/x.json");
  ExperimentScore s;
  s.experiment = &e;
  TopologyScore t1, t2;
  t1.topology = "one";
  t2.topology = "two";
  t1.cells = {score_cell(e.cells[0], 100, 130), excluded_cell(e.cells[1])};  // error 20 pp
  t2.cells = {score_cell(e.cells[0], 100, 112), excluded_cell(e.cells[1])};  // error 2 pp
  s.topologies = {t1, t2};
  auto board = make_scoreboard({s});
  REQUIRE(board.experiments.size() == 1);
  CHECK(board.experiments[0].best == 1);
  CHECK(board.overall.cells == 1);
  CHECK(*board.overall.median_abs_error_pp == doctest::Approx(2));
  CHECK(board.overall_all.cells == 2);
  CHECK(board.calibration.cells == 1);
  CHECK(board.seeds.cells == 0);
}

TEST_CASE("scoreboard: formatting is deterministic and says what was fitted") {
  auto e = parse_experiment(tiny(), "dir/x.json");
  auto make = [&]() {
    ExperimentScore s;
    s.experiment = &e;
    TopologyScore t;
    t.topology = "small-2s-8c";
    t.nr_task = {2, 8};
    t.cells = {score_cell(e.cells[0], 1000, 1090), excluded_cell(e.cells[1])};
    FitPoint f;
    f.variant = "a";
    f.metric = "will-it-scale.2.processes";
    f.nr_task = 2;
    f.published = 1000;
    f.simulated = 1004;
    f.scale = 0.95;
    f.fit_file = "x.small-2s-8c.json";
    t.fit = f;
    s.topologies = {t};
    return make_scoreboard({s});
  };
  auto a = make(), b = make();
  CHECK(scoreboard_text(a) == scoreboard_text(b));
  CHECK(scoreboard_markdown(a) == scoreboard_markdown(b));
  CHECK(scoreboard_json(a).dump(2) == scoreboard_json(b).dump(2));
  auto md = scoreboard_markdown(a);
  CHECK(md.find("**Overall: sign agreement 1/1 (100.0%), median absolute error 1.00 pp**") != std::string::npos);
  CHECK(md.find("Every other delta cell is an out-of-sample prediction") != std::string::npos);
  CHECK(md.find("In-sample (fitted): a `will-it-scale.2.processes` at 2 tasks") != std::string::npos);
  CHECK(md.find("excluded: no knob") != std::string::npos);
  auto j = scoreboard_json(a);
  CHECK(j["overall"]["cells"] == 1);
  CHECK(j["experiments"][0]["topologies"][0]["cells"][0]["simulated_delta_pct"] == 9.0);
  CHECK(j["experiments"][0]["topologies"][0]["in_sample"]["error_pct"] == 0.4);
  auto text = scoreboard_text(a);
  CHECK(text.find("sign agreement 1/1 (100.0%), median abs error 1.00 pp (1 excluded)") != std::string::npos);
}

TEST_CASE("fit: the scale search converges on a throughput of 1 / (s W + B)") {
  // 64 tasks, W = 4 us of scalable time, B = 1 us of slab time per op; published at s = 0.7.
  auto throughput = [](double s) { return 64.0 / ((s * 4000 + 1000) * 1e-9); };
  double published = throughput(0.7);
  int calls = 0;
  auto found = search_scale(published, [&](double s) {
    ++calls;
    return throughput(s);
  });
  CHECK(found.converged);
  CHECK(found.simulations == calls);
  CHECK(found.simulations <= kFitMaxSimulations);
  CHECK(std::fabs(found.simulated / published - 1) * 100 <= kFitTolerancePct);
  CHECK(found.scale == doctest::Approx(0.7).epsilon(0.01));
  // Already there at s = 1: one simulation.
  calls = 0;
  CHECK(search_scale(throughput(1.0), [&](double s) { ++calls; return throughput(s); }).simulations == 1);
  // Started at the answer (an interval's end fits again from the nominal scale): one simulation,
  // and from there the same answer as from s = 1.
  CHECK(search_scale(published, throughput, kFitTolerancePct, 0.7).simulations == 1);
  CHECK(search_scale(published, throughput, kFitTolerancePct, 0.7).scale == doctest::Approx(found.scale).epsilon(0.01));
  // Unreachable (faster than zero non-slab time allows): gives up after the budget, best point kept.
  auto never = search_scale(throughput(0.0) * 2, throughput);
  CHECK_FALSE(never.converged);
  CHECK(never.simulations <= kFitMaxSimulations);
}

TEST_CASE("fit: near saturation the search stays on the branch where throughput falls with s") {
  // A lock adds C / s of contention per op: throughput peaks at s = sqrt(C / W) and falls on
  // both sides of it. W = 4 us, B = 1 us, C = 1 us: the peak is at s = 0.5.
  auto throughput = [](double s) { return 64.0 / ((s * 4000 + 1000 + 1000 / s) * 1e-9); };
  // Reachable: two solutions, one each side of the peak; the search returns the one above it.
  double published = throughput(0.9);
  auto found = search_scale(published, throughput);
  CHECK(found.converged);
  CHECK(found.scale > 0.5);
  CHECK(found.scale == doctest::Approx(0.9).epsilon(0.02));
  // Above the peak: not reachable; the search gives up before its budget and keeps its best.
  auto never = search_scale(throughput(0.5) * 1.2, throughput);
  CHECK_FALSE(never.converged);
  CHECK(never.simulations < kFitMaxSimulations);
  CHECK(never.simulated == doctest::Approx(throughput(never.scale)));
}

TEST_CASE("fit: a saturated plateau above a faster regime is probed, not taken for the peak") {
  // Two regimes, as T05's base had: above s = 0.32 a saturated lock holds throughput at a
  // plateau slightly falling as s shrinks; below it the lock keeps up and throughput is
  // 1 / (s W + B). The published point lies in the fast regime.
  auto fast = [](double s) { return 64.0 / ((s * 4000 + 1000) * 1e-9); };
  auto throughput = [&](double s) { return s > 0.32 ? fast(0.32) * 0.6 * (0.9 + 0.1 * s) : fast(s); };
  double published = fast(0.25);
  REQUIRE(throughput(1.0) < published);
  auto found = search_scale(published, throughput);
  CHECK(found.converged);
  CHECK(found.scale == doctest::Approx(0.25).epsilon(0.02));
  CHECK(found.simulations <= kFitMaxSimulations);
  // Without a faster regime below the plateau, the probe finds nothing and the search gives up.
  auto flat = [&](double s) { return fast(0.32) * 0.6 * (0.9 + 0.1 * std::min(s, 1.0)); };
  auto never = search_scale(published, flat);
  CHECK_FALSE(never.converged);
  CHECK(never.simulations < kFitMaxSimulations);
}

TEST_CASE("fit: a jagged throughput (a simulation's noise) still brackets and converges") {
  // +-1.5% deterministic jitter on 1 / (s W + B): a secant alone can wander; the bracket holds.
  auto throughput = [](double s) {
    double jitter = 0.015 * std::sin(s * 997.0);
    return 64.0 / ((s * 4000 + 1000) * 1e-9) * (1 + jitter);
  };
  for (double target : {0.3, 0.7, 1.6, 3.0}) {
    CAPTURE(target);
    auto found = search_scale(64.0 / ((target * 4000 + 1000) * 1e-9), throughput);
    CHECK(found.converged);
    CHECK(found.simulations <= kFitMaxSimulations);
  }
}

TEST_CASE("fit: scaled parameters are rounded to the engine's picoseconds") {
  auto p = scaled_parameters({{"a", 1500}, {"b", 900}}, 0.3333333);
  CHECK(p[0].second == doctest::Approx(500.0).epsilon(1e-6));
  CHECK(p[0].second * 1000 == std::round(p[0].second * 1000));
}

TEST_CASE("fit: a fit file must be the experiment's fit; a missing one says to calibrate") {
  namespace fs = std::filesystem;
  auto e = parse_experiment(tiny(), "dir/x.json");
  fs::path dir = fs::temp_directory_path() / "slubsim-test-fits";
  fs::remove_all(dir);
  fs::create_directories(dir);
  try {
    load_fit(dir.string(), e, "small-2s-8c");
    FAIL("no error for a missing fit");
  } catch (const ConfigError& err) {
    CHECK(std::string(err.what()).find("--calibrate --only x") != std::string::npos);
  }
  Fit f;
  f.experiment = "x";
  f.topology = "small-2s-8c";
  f.scale = 0.9;
  f.parameters = {{"mmap_locked_ns", 1350}};
  f.variant = "a";
  f.kernel = "v6.17";
  f.metric = "will-it-scale.2.processes";
  f.nr_task = 2;
  f.published = 1000;
  f.simulated = 1001;
  auto write = [&](const Fit& fit) {
    std::ofstream(fit_path(dir.string(), "x", "small-2s-8c")) << fit_json(fit).dump(2);
  };
  write(f);
  auto back = load_fit(dir.string(), e, "small-2s-8c");
  CHECK(back.scale == 0.9);
  CHECK(back.sets() == std::vector<std::string>{"workload.parameters.mmap_locked_ns=1350"});
  // Made on another variant (a predicted state): refused.
  Fit other = f;
  other.variant = "b";
  write(other);
  try {
    load_fit(dir.string(), e, "small-2s-8c");
    FAIL("a fit on a non-baseline variant was accepted");
  } catch (const ConfigError& err) {
    CHECK(err.field() == "fitted_on.variant");
  }
  Fit higher = f;
  higher.nr_task = 8;
  write(higher);
  CHECK_THROWS_AS(load_fit(dir.string(), e, "small-2s-8c"), ConfigError);
  fs::remove_all(dir);
}

TEST_CASE("validate: a variant's job request carries the experiment, the variant and the fit") {
  auto e = parse_experiment(tiny(), "dir/x.json");
  ValidateOptions o;
  o.home = test::source_dir();
  auto r = variant_request(e, e.topologies[0], e.variants[1], {"workload.parameters.mmap_locked_ns=1"}, o);
  CHECK(r.topology == "small-2s-8c");
  CHECK(r.nr_task == "2,8");
  CHECK(r.kernel == "v7.0");
  CHECK(r.sheaf_capacity == "maple_node=64");
  CHECK(r.patches == std::vector<std::string>{"+spare-sheaf"});
  CHECK(r.sets == std::vector<std::string>{"workload.parameters.mmap_locked_ns=1"});
  CHECK(r.duration == "1ms");
  o.duration = "2ms";
  CHECK(variant_request(e, e.topologies[0], e.variants[1], {}, o).duration == "2ms");
  // validate --set: after everything else, so that it wins.
  o.sets = {"costs.qspinlock.handoff_alpha=2", "workload.parameters.mmap_locked_ns=5"};
  CHECK(variant_request(e, e.topologies[0], e.variants[1], {"workload.parameters.mmap_locked_ns=1"}, o).sets ==
        std::vector<std::string>{"workload.parameters.mmap_locked_ns=1", "costs.qspinlock.handoff_alpha=2",
                                 "workload.parameters.mmap_locked_ns=5"});
  auto job = resolve_job(r);
  CHECK(job.variants.size() == 1);
  CHECK(job.variants[0].kernel.has("spare-sheaf"));
}

TEST_CASE("validate: every variant of every experiment resolves where its presets exist") {
  namespace fs = std::filesystem;
  ValidateOptions o;
  o.home = test::source_dir();
  auto exists = [&](const char* dir, const std::string& name) {
    return fs::is_regular_file(fs::path(o.home) / dir / (name + ".json"));
  };
  int resolved = 0;
  for (const auto& e : load_experiments(o.home + "/configs/experiments", "")) {
    std::vector<std::string> fit_sets;
    if (e.fit) fit_sets = Fit{.parameters = scaled_parameters(base_parameters(e, o.home), 1.0)}.sets();
    for (const auto& t : e.topologies) {
      if (!exists("configs/topologies", t.name)) continue;  // presets from other branches
      for (const auto& v : e.variants) {
        if (!v.excluded.empty() || !exists("configs/kernels", v.kernel)) continue;
        INFO(e.id << " " << t.name << " " << v.name);
        CHECK_NOTHROW(resolve_job(variant_request(e, t, v, fit_sets, o)));
        ++resolved;
      }
    }
  }
  CHECK(resolved >= 10);
}

TEST_CASE("experiment: source trees are given for every variant or none, and mark cells across releases") {
  auto doc = tiny();
  CHECK_FALSE(parse_experiment(doc, "dir/x.json").cells[0].across_releases);  // no trees: one tree
  doc["variants"][0]["tree"] = "v6.17-rc3";
  CHECK(error_field(doc) == "variants[1]");
  doc["variants"][1]["tree"] = "v6.19-rc5";
  CHECK(error_field(doc) == "variants[2]");
  doc["variants"][2]["tree"] = "v6.17-rc3";
  auto e = parse_experiment(doc, "dir/x.json");
  CHECK(e.variants[1].tree == "v6.19-rc5");
  CHECK(e.cells[0].across_releases);        // a (v6.17-rc3) -> b (v6.19-rc5)
  CHECK_FALSE(e.cells[1].across_releases);  // a -> c, both v6.17-rc3
  auto first_missing = tiny();
  first_missing["variants"][1]["tree"] = "v6.19-rc5";
  CHECK(error_field(first_missing) == "variants[1]");
  doc["variants"][1]["tree"] = "";
  CHECK(error_field(doc) == "variants[1].tree");
}

TEST_CASE("scoreboard: cells across releases are totalled apart from cells within one tree") {
  auto doc = tiny();
  doc["variants"][0]["tree"] = "v6.17-rc3";
  doc["variants"][1]["tree"] = "v6.19-rc5";
  doc["variants"][2]["tree"] = "v6.17-rc3";
  doc["cells"][1].erase("excluded");
  doc["variants"][2].erase("excluded");
  doc["cells"][1]["test"] = "c";
  auto e = parse_experiment(doc, "dir/x.json");
  ExperimentScore s;
  s.experiment = &e;
  TopologyScore t;
  t.topology = "small-2s-8c";
  t.cells = {score_cell(e.cells[0], 100, 95), score_cell(e.cells[1], 100, 121)};  // across: no; within: yes
  s.topologies = {t};
  auto b = make_scoreboard({s});
  CHECK(b.overall.cells == 2);
  CHECK(b.across_releases.cells == 1);
  CHECK(b.across_releases.agree == 0);
  CHECK(b.within_tree.cells == 1);
  CHECK(b.within_tree.agree == 1);
  auto md = scoreboard_markdown(b);
  CHECK(md.find("| a → b (across releases) |") != std::string::npos);
  CHECK(md.find("| a → c |") != std::string::npos);
  CHECK(md.find("tree v6.19-rc5") != std::string::npos);
  auto j = scoreboard_json(b);
  CHECK(j["across_releases"]["cells"] == 1);
  CHECK(j["within_tree"]["sign_agree"] == 1);
  CHECK(j["experiments"][0]["topologies"][0]["cells"][0]["across_releases"] == true);
}

TEST_CASE("scoreboard: cells within one tree are also totalled per set, calibration and seed") {
  auto cal_doc = tiny();
  cal_doc["cells"][1].erase("excluded");
  cal_doc["variants"][2].erase("excluded");
  cal_doc["cells"][1]["test"] = "c";
  auto seed_doc = cal_doc;
  seed_doc["id"] = "y";
  seed_doc["calibration_set"] = false;
  auto cal = parse_experiment(cal_doc, "dir/x.json");
  auto seed = parse_experiment(seed_doc, "dir/y.json");
  REQUIRE(cal.calibration_set);
  REQUIRE_FALSE(seed.calibration_set);
  auto score = [](const Experiment& e, double sim_a, double sim_b) {
    ExperimentScore s;
    s.experiment = &e;
    TopologyScore t;
    t.topology = "small-2s-8c";
    t.nr_task = e.nr_task;
    t.cells = {score_cell(e.cells[0], 100, sim_a), score_cell(e.cells[1], 100, sim_b)};
    s.topologies = {t};
    return s;
  };
  // The calibration experiment's two cells agree (+21% for +10% and +20%), the seed's do not.
  auto b = make_scoreboard({score(cal, 121, 121), score(seed, 100, 100)});
  CHECK(b.within_tree.cells == 4);
  const auto md = scoreboard_markdown(b);
  const auto j = scoreboard_json(b);
  struct Expect {
    const Totals* totals;
    int agree;
    const char* row;
    const char* key;
  };
  for (const Expect& x : {Expect{&b.within_tree_calibration, 2, "calibration set", "calibration_set"},
                          Expect{&b.within_tree_seeds, 0, "seed checks", "seed_checks"}}) {
    CAPTURE(x.row);
    CHECK(x.totals->cells == 2);
    CHECK(x.totals->agree == x.agree);
    CHECK(md.find(fmt::format("| within one source tree: {} |", x.row)) != std::string::npos);
    CHECK(j[fmt::format("within_tree_{}", x.key)]["sign_agree"] == x.agree);
    CHECK(j["sensitivity"].contains(fmt::format("within_tree_{}", x.key)));
  }
}

TEST_CASE("scoreboard: a what-if (validate --set) says so in every format") {
  auto e = parse_experiment(tiny(), "dir/x.json");
  ExperimentScore s;
  s.experiment = &e;
  TopologyScore t;
  t.topology = "small-2s-8c";
  t.cells = {score_cell(e.cells[0], 100, 110), excluded_cell(e.cells[1])};
  s.topologies = {t};
  auto plain = make_scoreboard({s});
  CHECK(scoreboard_markdown(plain).find("What-if") == std::string::npos);
  CHECK_FALSE(scoreboard_json(plain).contains("what_if_sets"));
  auto b = make_scoreboard({s});
  b.sets = {"costs.qspinlock.contender_rmw=true"};
  CHECK(scoreboard_markdown(b).find("**What-if, not the committed model:** every simulation ran with "
                                    "`--set costs.qspinlock.contender_rmw=true`.") != std::string::npos);
  CHECK(scoreboard_text(b).find("what-if: every simulation ran with `--set costs.qspinlock.contender_rmw=true`") !=
        std::string::npos);
  CHECK(scoreboard_json(b)["what_if_sets"] == json::array({"costs.qspinlock.contender_rmw=true"}));
}
