// The settle rule (sim/run/settle.h) on series made to have a known answer, and on simulations:
// a settled point's window and interval, a fixed window judged, the ledger's sums.
#include <doctest/doctest.h>

#include <cmath>

#include "helpers.h"
#include "models/ledger.h"
#include "sim/run/settle.h"

using namespace slubsim;

namespace {

// A deterministic noise source (a 64-bit LCG), uniform in [-1, 1).
struct Noise {
  std::uint64_t s = 12345;
  double next() {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(s >> 11) / static_cast<double>(1ULL << 53) * 2.0 - 1.0;
  }
};

SettleRule rule() {
  SettleRule r;
  r.step = 2 * kMs;
  r.cap = kSec;
  return r;
}

std::vector<double> noise(int n, double mean, double amp, std::uint64_t seed = 1) {
  Noise z{seed};
  std::vector<double> x;
  for (int i = 0; i < n; ++i) x.push_back(mean + amp * z.next());
  return x;
}

}  // namespace

TEST_CASE("settle: Student's t quantiles") {
  CHECK(t975(1) == doctest::Approx(12.706).epsilon(0.001));
  CHECK(t975(9) == doctest::Approx(2.262).epsilon(0.003));
  CHECK(t975(19) == doctest::Approx(2.093).epsilon(0.002));
  CHECK(t975(1000) == doctest::Approx(1.962).epsilon(0.002));
}

TEST_CASE("settle: MSER-5 finds the end of a step transient, and a drift") {
  std::vector<double> x = noise(40, 300, 5);
  const auto tail = noise(200, 100, 5, 7);
  x.insert(x.end(), tail.begin(), tail.end());
  bool drifting = true;
  const int d = mser5(x, &drifting);
  CHECK(d >= 40);
  CHECK(d <= 45);
  CHECK_FALSE(drifting);

  std::vector<double> ramp;
  for (int i = 0; i < 200; ++i) ramp.push_back(100.0 + i);
  mser5(ramp, &drifting);
  CHECK(drifting);
}

TEST_CASE("settle: a cycle is found with its period, noise has none") {
  std::vector<double> x;
  Noise z;
  for (int i = 0; i < 120; ++i) x.push_back(100 + 50 * std::sin(2 * M_PI * i / 10.0) + 5 * z.next());
  double acf = 0;
  CHECK(find_period(x, &acf) == 10);
  CHECK(acf > 0.5);
  CHECK(find_period(noise(120, 100, 20), &acf) == 0);
}

TEST_CASE("settle: a stationary series settles, with the true mean inside its interval") {
  const auto x = noise(200, 1000, 100);
  const SettleVerdict v = judge_series(x, rule(), 0);
  CHECK(v.settled);
  CHECK(v.reason.empty());
  CHECK(v.to == 200);
  CHECK(v.batches >= 10);
  CHECK(std::abs(v.mean - 1000) <= v.half_width);
  CHECK(v.relative() <= 0.02);
}

TEST_CASE("settle: what keeps a series from settling is named") {
  SUBCASE("too short") {
    const SettleVerdict v = judge_series(noise(8, 1000, 10), rule(), 0);
    CHECK_FALSE(v.settled);
    CHECK(v.reason.find("too short") != std::string::npos);
  }
  SUBCASE("a ramp") {
    std::vector<double> ramp;
    for (int i = 0; i < 200; ++i) ramp.push_back(100.0 + i);
    const SettleVerdict v = judge_series(ramp, rule(), 0);
    CHECK_FALSE(v.settled);
    CHECK(v.reason.find("drifting") != std::string::npos);
  }
  SUBCASE("too noisy for the target") {
    SettleRule r = rule();
    r.ci_target = 0.001;
    const SettleVerdict v = judge_series(noise(200, 1000, 300), r, 0);
    CHECK_FALSE(v.settled);
    CHECK(v.reason.find("half-width") != std::string::npos);
  }
  SUBCASE("the RCU lower bound is past the series") {
    const SettleVerdict v = judge_series(noise(30, 1000, 10), rule(), 40);
    CHECK_FALSE(v.settled);
  }
}

TEST_CASE("settle: a slow ramp under loud noise is cut where the batch means stop trending") {
  // Like mmap2 at 192 tasks on GNR: intervals alternate between 0.3 and 1.7 times the level (a
  // 4 ms cycle) with 20% noise on top, and the level climbs from 45 to 66 over the first 500 of
  // 1000 intervals. MSER-5 cuts early in the ramp (the swings outweigh the bias there); the
  // stationarity tests then move the cut to its end.
  std::vector<double> x;
  Noise z;
  for (int i = 0; i < 1000; ++i) x.push_back((i < 500 ? 45.0 + 21.0 * i / 500 : 66.0) * (i % 2 ? 1.7 : 0.3) * (1 + 0.2 * z.next()));
  bool drifting = true;
  const int d = mser5(x, &drifting);
  CHECK_FALSE(drifting);
  CHECK(d < 250);
  const int e = trend_free_start(x, d, rule());
  CHECK(e >= 450);
  CHECK(e <= 500);
  // Before the cap the ramp keeps the run going; at the cap the moved cut settles it.
  CHECK_FALSE(judge_series(x, rule(), 0).settled);
  const SettleVerdict v = judge_series(x, rule(), 0, true);
  CHECK(v.settled);
  CHECK(v.transient == e);
  CHECK(std::abs(v.mean - 66.0) <= v.half_width);
  // A series that is stationary after MSER's cut keeps it.
  const auto flat = noise(400, 1000, 100);
  CHECK(trend_free_start(flat, mser5(flat, nullptr), rule()) == mser5(flat, nullptr));
}

TEST_CASE("settle: a cycle is measured in whole periods") {
  std::vector<double> x;
  Noise z;
  // A limit cycle like the one seen on Turin: 4 intervals high, 6 low, for 300 intervals.
  for (int i = 0; i < 300; ++i) x.push_back((i % 10 < 4 ? 32.0 : 0.5) + 0.5 * z.next());
  const SettleVerdict v = judge_series(x, rule(), 0);
  CHECK(v.period == 10);
  CHECK(v.batch % 10 == 0);
  CHECK(v.settled);
  CHECK(v.mean == doctest::Approx(0.4 * 32 + 0.6 * 0.5).epsilon(0.02));
}

TEST_CASE("settle: a fixed window is judged against the series before it") {
  std::vector<double> x = noise(30, 300, 5);
  const auto tail = noise(100, 100, 5, 3);
  x.insert(x.end(), tail.begin(), tail.end());
  // A warm-up of 10 intervals is shorter than the 30-interval transient.
  SettleVerdict v = judge_fixed_window(x, 10, rule());
  CHECK_FALSE(v.settled);
  CHECK(v.reason.find("after the 20 ms warm-up") != std::string::npos);
  CHECK(v.from == 10);
  // From interval 40 on, it is settled.
  v = judge_fixed_window(x, 40, rule());
  CHECK(v.settled);
  CHECK(v.mean == doctest::Approx(100).epsilon(0.01));
}

TEST_CASE("ledger: a grid's intervals and a window's sum") {
  const Grid g = Grid::uniform(2, 5);
  CHECK(g.of(0) == 0);
  CHECK(g.of(1) == 0);
  CHECK(g.of(2) == 1);
  CHECK(g.of(9) == 4);
  CHECK(g.of(10) == 5);
  CHECK(g.of(1000) == 5);
  CHECK(g.begin(3) == 6);
  CHECK(g.end(4) == 10);
  CHECK(g.end(5) == kForever);
  const Grid w = Grid::window(20, 32);
  CHECK(w.of(19) == 0);
  CHECK(w.of(20) == 1);
  CHECK(w.of(31) == 1);
  CHECK(w.of(32) == 2);
  Ledger<std::uint64_t> l;
  l.at(3) += 5;
  l.at(1) += 2;
  CHECK(l.sum(0, 10) == 7);
  CHECK(l.sum(2, 4) == 5);
  CHECK(l.sum(4, 9) == 0);
}

TEST_CASE("settle: a simulated point settles by default and reports its window") {
  JobRequest req = test::job_request("small-2s-8c", "mmap2", "v7.0", "8", "", "");
  req.duration.clear();
  req.warmup.clear();
  Job job = resolve_job(req);
  REQUIRE(job.settle);
  JobResult res = run_job(job, {});
  const RunResult& r = res.runs[0][0][0];
  CHECK(r.settle.automatic);
  CHECK(r.settle.judged);
  CHECK(r.settle.settled);
  CHECK(r.warmup >= job.settle_rule.min_warmup);
  CHECK(r.window >= 10 * kSettleStep);
  CHECK(r.window % kSettleStep == 0);
  CHECK(r.settle.half_width <= 0.02 * static_cast<double>(r.ops_per_sec));
  // Every task's time in the window adds up to the window.
  for (const auto& t : r.task_time) CHECK(t.total() == r.window);
  // The same inputs give the same window and result.
  JobResult again = run_job(job, {});
  CHECK(again.runs[0][0][0].ops_per_sec == r.ops_per_sec);
  CHECK(again.runs[0][0][0].warmup == r.warmup);
}
