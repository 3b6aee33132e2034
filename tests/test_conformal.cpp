// The interval with the model's record (sim/trust/conformal.h) and its leave-one-table-out
// coverage on the scoreboard (sim/validate/score.cpp).
#include <doctest/doctest.h>

#include "sim/trust/conformal.h"
#include "sim/validate/score.h"

using namespace slubsim;

namespace {

json table(const std::string& id) {
  return json::parse(R"({
    "id": ")" + id + R"(", "table": "T99", "title": "t", "source": "s", "calibration_set": true,
    "topologies": ["small-2s-8c"], "workload": "mmap2", "mode": "process", "nr_task": [8],
    "runs": 1, "seed": 1, "set": [],
    "variants": [
      {"name": "a", "label": "A", "kernel": "v6.17", "role": "baseline"},
      {"name": "b", "label": "B", "kernel": "v7.0"},
      {"name": "c", "label": "C", "kernel": "v6.17", "sheaf_capacity": "maple_node=64"}
    ],
    "cells": [
      {"metric": "will-it-scale.8.processes", "baseline": "a", "test": "b", "published_delta_pct": 10},
      {"metric": "will-it-scale.8.processes", "baseline": "a", "test": "c", "published_delta_pct": 10}
    ]
  })");
}

}  // namespace

TEST_CASE("conformal: the quantile is the ceil((n+1) level)-th smallest, none when too few") {
  std::vector<double> nine = {9, 1, 8, 2, 7, 3, 6, 4, 5};
  CHECK(*conformal_quantile(nine, 0.9) == 9);  // rank ceil(10 * 0.9) = 9
  std::vector<double> eight(nine.begin(), nine.begin() + 8);
  CHECK_FALSE(conformal_quantile(eight, 0.9));  // rank ceil(9 * 0.9) = 9 > 8: unbounded
  std::vector<double> nineteen;
  for (int i = 1; i <= 19; ++i) nineteen.push_back(i);
  CHECK(*conformal_quantile(nineteen, 0.9) == 18);  // rank 18
  CHECK(*conformal_quantile(nineteen, 0.5) == 10);  // rank 10
  CHECK_FALSE(conformal_quantile({}, 0.9));
}

TEST_CASE("conformal: a table's half-width never sees its own cells, nor another kind's") {
  std::vector<Residual> r;
  for (int i = 1; i <= 9; ++i) r.push_back({"B", ComparisonKind::WithinTree, static_cast<double>(i)});
  r.push_back({"A", ComparisonKind::WithinTree, 1000});
  r.push_back({"C", ComparisonKind::AcrossReleases, 5000});
  // A's own 1000 is left out: the nine of B, rank 9 of 9.
  CHECK(*record_half_width(r, "A", ComparisonKind::WithinTree) == 9);
  // B's nine are left out: only A's one cell remains, too few for 90%.
  CHECK_FALSE(record_half_width(r, "B", ComparisonKind::WithinTree));
  // An answer uses every table: ten cells, rank ceil(11 * 0.9) = 10, A's 1000.
  CHECK(*record_half_width(r, "", ComparisonKind::WithinTree) == 1000);
  CHECK_FALSE(record_half_width(r, "", ComparisonKind::Knob));
}

TEST_CASE("scoreboard: the record interval is left one table out and its coverage counted by kind") {
  // Ten tables; in each the knob cell (a -> c) and the across-kernel cell (a -> b). Published +10
  // everywhere; table i simulates 10 - i for both, so its errors are i points.
  std::vector<Experiment> experiments;
  experiments.reserve(10);
  for (int i = 1; i <= 10; ++i) experiments.push_back(parse_experiment(table("t" + std::to_string(i)), "t" + std::to_string(i) + ".json"));
  std::vector<ExperimentScore> scores;
  for (int i = 1; i <= 10; ++i) {
    const Experiment& e = experiments[static_cast<std::size_t>(i - 1)];
    ExperimentScore s;
    s.experiment = &e;
    TopologyScore t;
    t.topology = "small-2s-8c";
    t.nr_task = {8};
    t.cells = {score_cell(e.cells[0], 100, 110 - i), score_cell(e.cells[1], 100, 110 - i)};
    s.topologies = {t};
    scores.push_back(s);
  }
  const Scoreboard b = make_scoreboard(scores);
  const auto& c1 = b.experiments[0].topologies[0].cells;
  CHECK(c1[0].kind == ComparisonKind::WithinTree);  // v6.17 -> v7.0, no trees given: one tree
  CHECK(c1[1].kind == ComparisonKind::Knob);        // v6.17 -> v6.17 with a capacity
  // Table 1 sees the other nine tables' errors 2..10: rank 9 of 9 = 10.
  REQUIRE(c1[0].record_half_width);
  CHECK(*c1[0].record_half_width == doctest::Approx(10));
  // Table 10 sees 1..9: half-width 9, its own error of 10 falls outside.
  const auto& c10 = b.experiments[9].topologies[0].cells;
  CHECK(*c10[0].record_half_width == doctest::Approx(9));
  const auto r10 = c10[0].record_interval();
  REQUIRE(r10);
  CHECK((*r10)[0] == doctest::Approx(0 - 9));
  CHECK((*r10)[1] == doctest::Approx(0 + 9));
  // Nine of ten tables hold their published delta, in each kind.
  CHECK(b.knob.record_cells == 10);
  CHECK(b.knob.record_covered == 9);
  CHECK(b.within_tree_kernels.record_covered == 9);
  CHECK(b.within_tree.record_cells == 20);
  CHECK(*b.within_tree.record_coverage_pct() == doctest::Approx(90));
  CHECK(*b.within_tree.record_median_width_pp == doctest::Approx(20));  // 2 x 10 for tables 1..9
}
