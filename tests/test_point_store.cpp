// The point store: a RunResult survives JSON losslessly, a resumed job skips the points on disk
// and assembles the same stats, and a store of another job is refused.
#include <doctest/doctest.h>

#include <filesystem>

#include "helpers.h"
#include "sim/run/point_store.h"
#include "sim/run/report.h"
#include "sim/run/why.h"

using namespace slubsim;
namespace fs = std::filesystem;

namespace {
JobRequest store_request() {
  auto r = test::job_request("small-2s-8c", "mmap2", "v6.17,v7.0", "2,8", "2ms", "2ms");
  r.runs = 2;
  r.interval = "1ms";  // the samples too
  r.jobs = 1;
  return r;
}
}  // namespace

TEST_CASE("point store: every RunResult field round-trips through JSON") {
  Job job = resolve_job(store_request());
  JobResult whole = run_job(job, {});
  JobResult copy = whole;
  for (auto& runs : copy.runs)
    for (auto& rows : runs)
      for (auto& r : rows) {
        json j = run_result_json(r);
        RunResult back = run_result_from_json(json::parse(j.dump()), "point.json");
        CHECK(run_result_json(back) == j);
        r = back;
      }
  CHECK(stdout_stats(job, copy).dump() == stdout_stats(job, whole).dump());
  CHECK(format_table(job, copy) == format_table(job, whole));
  CHECK(format_why(job, copy) == format_why(job, whole));  // the callback floods' record among it
}

TEST_CASE("point store: a damaged slab_reuse list is refused, naming the field") {
  Job job = resolve_job(store_request());
  JobResult whole = run_job(job, {});
  json j = run_result_json(whole.runs.front().front().front());
  REQUIRE(j.contains("slab_reuse"));
  json bad = j;
  bad["slab_reuse"][0][2] = "x";
  CHECK_THROWS_WITH_AS(run_result_from_json(bad, "point.json"), doctest::Contains("in slab_reuse"), ConfigError);
  bad = j;
  bad["slab_reuse"][0] = json::array({1, 2});
  CHECK_THROWS_WITH_AS(run_result_from_json(bad, "point.json"), doctest::Contains("slab_reuse"), ConfigError);
  // A damaged value inside a struct is named by its path.
  bad = j;
  bad["rcu_floods"]["cpus"] = "x";
  CHECK_THROWS_WITH_AS(run_result_from_json(bad, "point.json"), doctest::Contains("expected an integer"), ConfigError);
  try {
    run_result_from_json(bad, "point.json");
  } catch (const ConfigError& e) {
    CHECK(e.file() == "point.json");
    CHECK(e.field() == "rcu_floods.cpus");
  }
  // A point written before the counters existed reads as none.
  bad = j;
  bad.erase("slab_reuse");
  RunResult old = run_result_from_json(bad, "point.json");
  for (const auto& c : old.caches)
    for (auto n : c.reuse) CHECK(n == 0);
}

TEST_CASE("point store: a resumed job runs only the missing points, with the same stats") {
  const fs::path dir = fs::temp_directory_path() / "slubsim-test-point-store";
  fs::remove_all(dir);
  Job job = resolve_job(store_request());
  JobResult whole = run_job(job, {});

  // Run until two points are in, then stop (as SIGINT does).
  std::atomic<bool> stop{false};
  std::size_t saved = 0;
  {
    PointStore store(dir.string(), job, false);
    RunControl c;
    c.on_point = [&](const PointKey& k, const RunResult& r, double wall) {
      store.save(k, r, wall);
      if (++saved == 2) stop = true;
    };
    c.stop = &stop;
    JobResult part = run_job(job, {}, c);
    CHECK_FALSE(part.complete);
    CHECK(part.points_done == 2);
    CHECK(part.points_total == 8);
  }
  CHECK_THROWS_AS(PointStore(dir.string(), job, false), ConfigError);  // would lose them

  PointStore store(dir.string(), job, true);
  CHECK(store.loaded().size() == 2);
  std::size_t ran = 0, variants = 0;
  RunControl c;
  c.finished_before = [&](const PointKey& k) -> std::optional<std::pair<RunResult, double>> {
    auto it = store.loaded().find(point_id(job, k));
    if (it == store.loaded().end()) return std::nullopt;
    return it->second;
  };
  c.on_point = [&](const PointKey& k, const RunResult& r, double wall) {
    store.save(k, r, wall);
    ++ran;
  };
  c.on_variant = [&](std::size_t, const JobResult&) { ++variants; };
  JobResult resumed = run_job(job, {}, c);
  CHECK(resumed.complete);
  CHECK(ran == 6);
  CHECK(variants == 2);
  CHECK(stdout_stats(job, resumed).dump() == stdout_stats(job, whole).dump());

  auto other = store_request();
  other.duration = "3ms";
  CHECK_THROWS_WITH_AS(PointStore(dir.string(), resolve_job(other), true),
                       doctest::Contains("duration was \"2ms\", now \"3ms\""), ConfigError);
  fs::remove_all(dir);
}
