// Borrowed non-slab times (experiment fit_from): parsed, checked, loaded from a calibration fit.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "helpers.h"
#include "sim/validate/experiment.h"
#include "sim/validate/fit.h"

using namespace slubsim;
namespace fs = std::filesystem;

namespace {

json seed_doc() {
  return json::parse(R"({
    "id": "x", "table": "seed", "title": "t", "source": "s", "calibration_set": false,
    "topologies": ["small-2s-8c"], "workload": "mmap2", "mode": "process", "nr_task": [2, 8],
    "duration": "1ms", "warmup": "500us", "runs": 1, "seed": 1,
    "fit_from": {"experiment": "cal", "topology": "small-2s-8c", "note": "the calibration set's mmap2 fit"},
    "variants": [
      {"name": "a", "label": "A", "kernel": "v6.17", "role": "baseline"},
      {"name": "b", "label": "B", "kernel": "v7.0"}
    ],
    "cells": [{"metric": "will-it-scale.8.processes", "baseline": "a", "test": "b", "published_delta_pct": 10}]
  })");
}

void write_fit(const fs::path& dir, const json& params, bool converged) {
  fs::create_directories(dir);
  json f = {{"experiment", "cal"},
            {"topology", "small-2s-8c"},
            {"scale", 0.5},
            {"parameters", params},
            {"fitted_on",
             {{"variant", "base"}, {"kernel", "v6.17"}, {"nr_task", 2}, {"metric", "will-it-scale.2.processes"},
              {"published", 1000}, {"simulated", 1001}, {"converged", converged}}}};
  std::ofstream(dir / "cal.small-2s-8c.json") << f.dump(2);
}

}  // namespace

TEST_CASE("fit_from: an experiment without its own fit names a calibration fit, checked") {
  auto e = parse_experiment(seed_doc(), "dir/x.json");
  REQUIRE(e.fit_from);
  CHECK(e.fit_from->experiment == "cal");
  CHECK(e.fit_from->topology == "small-2s-8c");

  json d = seed_doc();
  d["fit_from"]["experiment"] = "x";
  CHECK(test::experiment_error_field(d) == "fit_from.experiment");  // not itself
  d = seed_doc();
  d["fit_from"].erase("note");
  CHECK(test::experiment_error_field(d) == "fit_from.note");  // how it was chosen is recorded
  d = seed_doc();
  d["fit_from"]["typo"] = 1;
  CHECK(test::experiment_error_field(d) == "fit_from.typo");
  d = seed_doc();
  d["fit"] = json::parse(R"({"parameters": ["mmap_locked_ns"], "variant": "a", "nr_task": 2,
                             "metric": "will-it-scale.2.processes", "published": 1000})");
  CHECK(test::experiment_error_field(d) == "fit_from");
}

TEST_CASE("fit_from: the borrowed file must exist, have converged and fit this workload's parameters") {
  auto e = parse_experiment(seed_doc(), "dir/x.json");
  const fs::path dir = fs::temp_directory_path() / "slubsim-test-fit-from";
  fs::remove_all(dir);
  CHECK_THROWS_AS(load_borrowed_fit(dir.string(), e, test::source_dir()), ConfigError);  // missing

  write_fit(dir, {{"mmap_locked_ns", 750.0}, {"unlocked_ns", 450.0}}, true);
  Fit f = load_borrowed_fit(dir.string(), e, test::source_dir());
  CHECK(f.scale == 0.5);
  CHECK(f.sets() == std::vector<std::string>{"workload.parameters.mmap_locked_ns=750",
                                             "workload.parameters.unlocked_ns=450"});

  write_fit(dir, {{"mmap_locked_ns", 750.0}}, false);
  try {
    load_borrowed_fit(dir.string(), e, test::source_dir());
    FAIL("an unconverged fit was accepted");
  } catch (const ConfigError& err) {
    CHECK(err.file() == "dir/x.json");
    CHECK(err.field() == "fit_from");
  }
  write_fit(dir, {{"brk_up_locked_ns", 600.0}}, true);  // brk1's parameter, not mmap2's
  CHECK_THROWS_AS(load_borrowed_fit(dir.string(), e, test::source_dir()), ConfigError);
  fs::remove_all(dir);
}
