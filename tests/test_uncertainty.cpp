// The intervals of run --uncertainty (sim/trust/uncertainty.h) on made-up results: no factor and
// no noise is a point; one factor spans its ends as a uniform draw along its line would; a sign
// flip is found where the line crosses zero; the windows' noise widens the interval; the same
// inputs give the same numbers.
#include <doctest/doctest.h>

#include "sim/trust/uncertainty.h"
#include "tests/helpers.h"

using namespace slubsim;

namespace {

Job two_variants() { return resolve_job(test::job_request("small-2s-8c", "mmap1", "v6.17,v7.0", "4", "", "")); }

// One run, one row: variant 0 at `base` ops/s, variant 1 at `test`, each with half-width hw.
JobResult result(const Job& job, double base, double test, double hw = 0) {
  JobResult r = empty_result(job);
  r.runs[0][0][0].ops_per_sec = static_cast<std::uint64_t>(base);
  r.runs[1][0][0].ops_per_sec = static_cast<std::uint64_t>(test);
  r.runs[0][0][0].settle.half_width = hw;
  r.runs[1][0][0].settle.half_width = hw;
  return r;
}

Factor single(double lo, double nominal, double hi) {
  Factor f;
  f.name = "costs.x_ns";
  f.single = true;
  f.lo = lo;
  f.nominal = nominal;
  f.hi = hi;
  f.unit = "ns";
  f.position = (nominal - lo) / (hi - lo);
  return f;
}

}  // namespace

TEST_CASE("uncertainty: no factor and no noise leave the delta a point") {
  const Job job = two_variants();
  const auto d = delta_intervals(job, result(job, 1000, 1100), {}, {});
  REQUIRE(d.size() == 1);
  CHECK(d[0].delta == doctest::Approx(10));
  CHECK(d[0].low == doctest::Approx(10));
  CHECK(d[0].high == doctest::Approx(10));
  CHECK(d[0].decided_by.empty());
}

TEST_CASE("uncertainty: one factor: its uniform draw along the line through its ends, and where the sign flips") {
  const Job job = two_variants();
  // Delta +10% at the nominal (the middle of 10-30 ns), -10% at 10 ns, +30% at 30 ns: a straight
  // line, -10 + 40u for u uniform in [0, 1], so the 90% interval is about [-8, +28].
  std::vector<std::array<std::optional<JobResult>, 2>> ends(1);
  ends[0][0] = result(job, 1000, 900);
  ends[0][1] = result(job, 1000, 1300);
  const auto d = delta_intervals(job, result(job, 1000, 1100), {single(10, 20, 30)}, ends);
  REQUIRE(d.size() == 1);
  CHECK(d[0].low == doctest::Approx(-8).epsilon(0.05));
  CHECK(d[0].high == doctest::Approx(28).epsilon(0.02));
  CHECK(d[0].decided_by == "costs.x_ns: -10.0% at the low end, +30.0% at the high end");
  CHECK(d[0].flip == "turns negative with costs.x_ns below about 15 ns");  // a quarter of the way
  // Deterministic: the same inputs, the same numbers.
  const auto again = delta_intervals(job, result(job, 1000, 1100), {single(10, 20, 30)}, ends);
  CHECK(again[0].low == d[0].low);
  CHECK(again[0].high == d[0].high);
}

TEST_CASE("uncertainty: a nominal at an end is not run there, and the windows' noise widens the interval") {
  const Job job = two_variants();
  Factor f = single(10, 30, 30);  // the nominal is the high end
  CHECK(f.run_low());
  CHECK_FALSE(f.run_high());
  CHECK(extra_runs({f}) == 1);
  std::vector<std::array<std::optional<JobResult>, 2>> ends(1);
  ends[0][0] = result(job, 1000, 1000);  // 0% at the low end
  const auto quiet = delta_intervals(job, result(job, 1000, 1100), {f}, ends);
  CHECK(quiet[0].low >= 0);
  CHECK(quiet[0].high <= 10);
  // A 5% half-width on each mean: wider, and decided by the noise when it outweighs the factor.
  const auto noisy = delta_intervals(job, result(job, 1000, 1100, 50), {f}, ends);
  CHECK(noisy[0].low < quiet[0].low);
  CHECK(noisy[0].high > quiet[0].high);
  const auto noise_only = delta_intervals(job, result(job, 1000, 1100, 200), {}, {});
  CHECK(noise_only[0].decided_by.find("the windows' own noise") == 0);
}
