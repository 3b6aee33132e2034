#include <doctest/doctest.h>

#include "helpers.h"
#include "sim/run/job.h"
#include "sim/run/report.h"
#include "sim/run/slub_config.h"
#include "sim/trust/record.h"

using namespace slubsim;

TEST_CASE("job: nr_task accepts counts and percentages of logical CPUs") {
  CHECK(parse_nr_task("1,8,64", 192) == std::vector<int>{1, 8, 64});
  CHECK(parse_nr_task("25%,50%,100%", 344) == std::vector<int>{86, 172, 344});
  CHECK_THROWS_AS(parse_nr_task("193", 192), ConfigError);
  CHECK_THROWS_AS(parse_nr_task("0", 192), ConfigError);
  CHECK_THROWS_AS(parse_nr_task("1,,2", 192), ConfigError);
  CHECK_THROWS_AS(parse_nr_task("x", 192), ConfigError);
}

TEST_CASE("job: sheaf capacity is a sweep of plain values or one per-cache setting") {
  auto sweep = parse_sheaf_capacity("32,64,128,256");
  REQUIRE(sweep.size() == 4);
  CHECK(sweep[1].knobs.sheaf_capacity[0].second == 64);
  auto named = parse_sheaf_capacity("maple_node=64,vm_area_struct=32");
  REQUIRE(named.size() == 1);
  CHECK(named[0].knobs.sheaf_capacity.size() == 2);
  CHECK(parse_sheaf_capacity("").size() == 1);
  CHECK_THROWS_AS(parse_sheaf_capacity("0"), ConfigError);
  CHECK_THROWS_AS(parse_sheaf_capacity("=5"), ConfigError);
  CHECK_THROWS_AS(parse_sheaf_capacity("32,maple_node=64"), ConfigError);
  auto one_cache = parse_sheaf_capacity("maple_node=32,64,128");
  REQUIRE(one_cache.size() == 3);
  CHECK(one_cache[2].text == "maple_node=128");
  CHECK(one_cache[2].knobs.sheaf_capacity[0].first == "maple_node");
  CHECK_THROWS_AS(parse_sheaf_capacity("maple_node=32,64,vm_area_struct=32"), ConfigError);
}

TEST_CASE("job: --sysfs writes the runtime-tuning RFC's sheaf knobs, one setting per ';'") {
  auto two = parse_sysfs("maple_node/sheaf_capacity=64,maple_node/max_full_sheaves=20;*/max_empty_sheaves=0");
  REQUIRE(two.size() == 2);
  CHECK(two[0].sysfs);
  CHECK(two[0].knobs.sheaf_capacity == std::vector<std::pair<std::string, int>>{{"maple_node", 64}});
  CHECK(two[0].knobs.max_full_sheaves == std::vector<std::pair<std::string, int>>{{"maple_node", 20}});
  CHECK(two[0].knobs.max_empty_sheaves.empty());
  CHECK(two[1].knobs.max_empty_sheaves == std::vector<std::pair<std::string, int>>{{"", 0}});
  // A label names a directory: no '/' in it.
  CHECK(two[0].label_suffix() == "_maple_node.sheaf_capacity=64,maple_node.max_full_sheaves=20");
  CHECK(parse_sheaf_capacity("64")[0].label_suffix() == "_sheaf_capacity=64");
  CHECK(two[1].label_suffix() == "_all.max_empty_sheaves=0");
  CHECK(parse_sysfs("").size() == 1);
  const auto with_defaults = parse_sysfs(";maple_node/max_full_sheaves=2");
  REQUIRE(with_defaults.size() == 2);
  CHECK(with_defaults[0].knobs.empty());
  CHECK(with_defaults[0].label_suffix().empty());
  // What each refusal says.
  auto error_of = [](const std::string& text) {
    try {
      parse_sysfs(text);
    } catch (const ConfigError& e) {
      CHECK(e.field() == "--sysfs");
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error_of("maple_node=64").find("CACHE/KNOB=N") != std::string::npos);
  CHECK(error_of("maple_node/capacity=64").find("unknown knob 'capacity'") != std::string::npos);
  CHECK(error_of("maple_node/sheaf_capacity=0").find("between 1 and 4096") != std::string::npos);
  CHECK(error_of("maple_node/max_full_sheaves=5000").find("between 0 and 4096") != std::string::npos);
  CHECK(error_of("/max_full_sheaves=5").find("names no cache") != std::string::npos);
  CHECK(error_of("maple_node/max_full_sheaves=x").find("not a whole number") != std::string::npos);
  CHECK(error_of("a/max_full_sheaves=1,a/max_full_sheaves=2").find("twice") != std::string::npos);
}

TEST_CASE("job: durations need units") {
  CHECK(parse_duration("20ms", "--duration") == 20 * kMs);
  CHECK(parse_duration("1.5us", "--duration") == 1500 * kNs);
  CHECK_THROWS_AS(parse_duration("20", "--duration"), ConfigError);
  CHECK_THROWS_AS(parse_duration("-1ms", "--duration"), ConfigError);
}

namespace {
JobRequest small_request() {
  JobRequest r;
  r.home = test::source_dir();
  r.topology = "small-2s-8c";
  r.nr_task = "1,4,8";
  r.duration = "1ms";
  r.warmup = "100us";
  r.jobs = 2;
  return r;
}
}  // namespace

TEST_CASE("job: same inputs and seed give byte-identical stats, whatever the thread count") {
  auto req = small_request();
  req.runs = 2;
  auto a = stdout_stats(resolve_job(req), run_job(resolve_job(req), {})).dump(2);
  req.jobs = 1;
  auto b = stdout_stats(resolve_job(req), run_job(resolve_job(req), {})).dump(2);
  CHECK(a == b);
  req.seed = 99;
  auto c = stdout_stats(resolve_job(req), run_job(resolve_job(req), {})).dump(2);
  CHECK(a != c);
}

TEST_CASE("job: the interval series covers warm-up and window and leaves the results as they are") {
  auto req = small_request();
  req.nr_task = "8";
  req.workload = "mmap2";
  req.jobs = 1;
  auto plain = stdout_stats(resolve_job(req), run_job(resolve_job(req), {}));
  req.interval = "100us";
  auto job = resolve_job(req);
  auto result = run_job(job, {});
  const auto& row = result.runs[0][0][0];
  REQUIRE(row.samples.size() == 11);  // 100 us warm-up + 1 ms window
  CHECK(row.samples.back().end == 1100 * kUs);
  std::uint64_t ops = 0, in_window = 0;
  for (const auto& s : row.samples) {
    ops += s.ops;
    if (s.end > 100 * kUs) in_window += s.ops;
  }
  CHECK(ops > 0);
  // The window's operations, up to the few a CPU's clock carries across an edge.
  std::uint64_t counted = 0;
  for (auto o : row.task_ops) counted += o;
  CHECK(static_cast<double>(in_window) == doctest::Approx(static_cast<double>(counted)).epsilon(0.02));
  auto series = stdout_stats(job, result);
  CHECK(series.contains("interval.8.0010.ops_per_sec"));
  CHECK(series["interval.8.0010.end_ms"] == 1.1);
  // Only the series keys differ (the sampler's events are the engine's, kept out of stats).
  CHECK_FALSE(plain.contains("sim.events"));
  for (auto& [k, v] : plain.items()) CHECK_MESSAGE(series[k] == v, k);
  req.interval = "2ms";
  CHECK_THROWS_AS(resolve_job(req), ConfigError);
  req.interval = "10ns";
  CHECK_THROWS_AS(resolve_job(req), ConfigError);
}

TEST_CASE("job: --set changes any config parameter and rejects unknown ones") {
  auto req = small_request();
  req.sets = {"costs.qspinlock.handoff_alpha=3", "topology.latency_ns.llc=40"};
  Job j = resolve_job(req);
  CHECK(j.costs.handoff_alpha == 3.0);
  CHECK(j.machine.latency[static_cast<int>(Distance::Llc)] == 40 * kNs);
  req.sets = {"costs.qspinlock.no_such_knob=1"};
  CHECK_THROWS_AS(resolve_job(req), ConfigError);
  req.sets = {"costs.qspinlock.handoff_alpha=-1"};
  CHECK_THROWS_AS(resolve_job(req), ConfigError);
  req.sets = {"nonsense=1"};
  CHECK_THROWS_AS(resolve_job(req), ConfigError);
}

TEST_CASE("job: kernels and capacities multiply into variants") {
  auto req = small_request();
  req.kernel = "v6.18,v7.0";
  req.sheaf_capacity = "32,64";
  Job j = resolve_job(req);
  REQUIRE(j.variants.size() == 4);
  CHECK(j.variants[0].label == "v6.18_sheaf_capacity=32");
  CHECK(j.variants[3].label == "v7.0_sheaf_capacity=64");
  CHECK(j.notes.empty());
  // Kernels without sheaves run once each, at their own settings, and the job says so.
  req.kernel = "v6.7,v6.17,v7.0";
  j = resolve_job(req);
  REQUIRE(j.variants.size() == 4);
  CHECK(j.variants[0].label == "v6.7");
  CHECK(j.variants[1].label == "v6.17");
  CHECK(j.variants[1].capacity.text.empty());
  CHECK(j.variants[2].label == "v7.0_sheaf_capacity=32");
  REQUIRE(j.notes.size() == 2);
  CHECK(j.notes[1].find("v6.17 has no sheaves") == 0);
  // A capacity for a cache 6.18 has no sheaves for, and no other kernel: the setting would change
  // nothing, so it is refused rather than run as the kernel's own under the setting's label.
  req.kernel = "v6.18";
  req.sheaf_capacity = "kmalloc-256=16,32";
  CHECK_THROWS_WITH_AS(resolve_job(req), doctest::Contains("no kernel of the job (v6.18) has sheaves"), ConfigError);
  // One capacity, one kernel without sheaves among others: it runs once, under its own name.
  req.kernel = "v6.17,v7.0";
  req.sheaf_capacity = "maple_node=64";
  j = resolve_job(req);
  REQUIRE(j.variants.size() == 2);
  CHECK(j.variants[0].label == "v6.17");
  CHECK(j.variants[0].capacity.text.empty());
  CHECK(j.variants[1].label == "v7.0_sheaf_capacity=maple_node=64");
  req.sheaf_capacity = "32,64";
  req.kernel = "v9.9";
  CHECK_THROWS_AS(resolve_job(req), ConfigError);
}

TEST_CASE("job: a warm-up or window shorter than three grace periods draws a warning") {
  JobRequest r;
  r.home = test::source_dir();
  r.topology = "small-2s-8c";
  CHECK(window_warnings(resolve_job(r)).empty());  // the defaults are the steady-state window
  // Default costs: fixed 4 ms grace periods, so RCU settles in 12 ms.
  r.warmup = "11ms";
  auto w = window_warnings(resolve_job(r));
  REQUIRE(w.size() == 1);
  CHECK(w[0].find("--warmup 11 ms is shorter than the 12 ms") != std::string::npos);
  r.warmup = "12ms";
  r.duration = "8ms";
  w = window_warnings(resolve_job(r));
  REQUIRE(w.size() == 1);
  CHECK(w[0].find("--duration 8 ms") != std::string::npos);
  // Tick-driven periods at HZ=1000: at least two 1 ms ticks each, so 6 ms.
  r.sets = {"costs.rcu.grace_period_model=ticks"};
  r.warmup = "6ms";
  r.duration = "6ms";
  CHECK(window_warnings(resolve_job(r)).empty());
  r.warmup = "5ms";
  w = window_warnings(resolve_job(r));
  REQUIRE(w.size() == 1);
  CHECK(w[0].find("two 1000 us ticks") != std::string::npos);
  // Callbacks given their period at the report can wait one period more: four periods.
  r.sets = {"costs.rcu.acceleration=report"};
  r.warmup = "12ms";
  r.duration = "16ms";
  w = window_warnings(resolve_job(r));
  REQUIRE(w.size() == 1);
  CHECK(w[0].find("shorter than the 16 ms RCU needs to settle (four grace periods of 4000 us)") != std::string::npos);
  // It needs ticks to report at.
  r.sets = {"costs.rcu.acceleration=report", "costs.rcu.tick_us=0"};
  CHECK_THROWS_WITH_AS(resolve_job(r), doctest::Contains("acceleration"), ConfigError);
  r.sets = {"costs.rcu.acceleration=whenever"};
  CHECK_THROWS_WITH_AS(resolve_job(r), doctest::Contains("must be \"queue\" or \"report\""), ConfigError);
}

TEST_CASE("job: a GFP_NOWAIT allocation refills a sheaf only with the nowait-refill patch or the \"refills\" model") {
  auto req = small_request();
  req.kernel = "v6.19,v7.0";
  auto refills = [](const Job& j, std::size_t v) {
    return slub_params(j.machine, j.variants.at(v).kernel, j.caches, j.slub_costs, false, 1).features.nowait_refill;
  };
  req.sets = {"costs.slub.gfp_nowait=stops"};
  Job j = resolve_job(req);
  CHECK_FALSE(refills(j, 0));  // v6.19: gfpflags_allow_blocking
  CHECK(refills(j, 1));        // v7.0 has fb1091febd66
  req.patches = {"-nowait-refill"};
  j = resolve_job(req);
  CHECK_FALSE(refills(j, 1));  // 7.0-rc1/rc2, the sheaves-for-all series as posted
  req.patches = {};
  req.sets = {"costs.slub.gfp_nowait=refills"};
  j = resolve_job(req);
  CHECK(refills(j, 0));
  req.sets = {"costs.slub.gfp_nowait=sometimes"};
  CHECK_THROWS_WITH_AS(resolve_job(req), doctest::Contains("must be \"stops\" or \"refills\""), ConfigError);
}

TEST_CASE("job: a run longer than the event queue can order is refused as input") {
  auto req = small_request();
  req.duration = "1000s";  // under an hour, over the queue's key (sim/engine/engine.h)
  CHECK_THROWS_WITH_AS(resolve_job(req), doctest::Contains("under 15 minutes"), ConfigError);
  req.warmup = "";
  req.duration = "";
  req.settle_cap = "1200s";
  CHECK_THROWS_WITH_AS(resolve_job(req), doctest::Contains("15 minutes"), ConfigError);
  req.settle_cap = "900s";
  CHECK_NOTHROW(resolve_job(req));
}

TEST_CASE("job: --baseline kernel compares each variant with its own kernel at the kernel's settings") {
  auto req = small_request();
  req.kernel = "v6.17,v7.0";
  req.sheaf_capacity = "maple_node=64,128";
  // first (the default): every delta against the first variant, v6.17, across releases.
  Job first = resolve_job(req);
  REQUIRE(first.variants.size() == 3);  // v6.17 once (no sheaves), v7.0 at 64 and 128
  CHECK(first.baseline_of == std::vector<std::size_t>{0, 0, 0});
  CHECK(comparisons_of(first) == std::vector<ComparisonKind>{ComparisonKind::AcrossReleases});
  // kernel: v7.0 also runs at its own settings, first among its variants; 64 and 128 are
  // compared with it, v6.17 has no baseline of its kind and no delta.
  req.baseline = "kernel";
  Job own = resolve_job(req);
  REQUIRE(own.variants.size() == 4);
  CHECK(own.variants[0].label == "v6.17");
  CHECK(own.variants[1].label == "v7.0");
  CHECK(own.variants[1].capacity.text.empty());
  CHECK(own.variants[2].label == "v7.0_sheaf_capacity=maple_node=64");
  CHECK(own.baseline_of == std::vector<std::size_t>{0, 1, 1, 1});
  CHECK(comparisons_of(own) == std::vector<ComparisonKind>{ComparisonKind::Knob});
  // Nothing is added when the kernel's own settings are already a variant (no capacity axis).
  req.sheaf_capacity.clear();
  Job plain = resolve_job(req);
  CHECK(plain.variants.size() == 2);
  CHECK(plain.baseline_of == std::vector<std::size_t>{0, 1});
  CHECK(comparisons_of(plain).empty());
  req.baseline = "own";
  std::string refused;  // the field the refusal names
  try {
    resolve_job(req);
  } catch (const ConfigError& e) {
    refused = e.field();
  }
  CHECK(refused == "--baseline");
}
