// Sweeps: the shard arithmetic and where K and N come from, the plan's order and ids, a sweep's
// fields surviving sweep.json, and the progress meter's time format.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "helpers.h"
#include "sim/run/progress.h"
#include "sim/sweep/sweep.h"

using namespace slubsim;

namespace {

std::function<const char*(const char*)> env_of(std::map<std::string, std::string> vars) {
  auto held = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [held](const char* name) -> const char* {
    auto it = held->find(name);
    return it == held->end() ? nullptr : it->second.c_str();
  };
}

SweepRequest small_sweep() {
  SweepRequest r;
  r.base = test::job_request("small-2s-8c", "mmap2", "v6.18,v7.0", "1,4,8", "1ms", "1ms");
  r.base.sheaf_capacity = "maple_node=16,32";
  r.base.runs = 2;
  r.topologies = {"small-2s-8c", "intel-icl-2s-64t"};
  r.workloads = {"mmap2"};
  return r;
}

}  // namespace

TEST_CASE("sweep: shard K/N, auto from a Slurm array, auto/N from an Indexed Job") {
  auto none = env_of({});
  Shard s = parse_shard("3/8", none);
  CHECK(s.k == 3);
  CHECK(s.n == 8);
  CHECK(s.contains(2));
  CHECK(s.contains(10));
  CHECK_FALSE(s.contains(3));
  // Array 10-40:10 (step 10): task 30 is the third of four.
  s = parse_shard("auto", env_of({{"SLURM_ARRAY_TASK_ID", "30"}, {"SLURM_ARRAY_TASK_MIN", "10"},
                                  {"SLURM_ARRAY_TASK_STEP", "10"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}));
  CHECK(s.text() == "3/4");
  s = parse_shard("auto", env_of({{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_MIN", "1"},
                                  {"SLURM_ARRAY_TASK_COUNT", "16"}}));
  CHECK(s.text() == "1/16");
  s = parse_shard("auto/5", env_of({{"JOB_COMPLETION_INDEX", "4"}}));
  CHECK(s.text() == "5/5");
  CHECK_THROWS_AS(parse_shard("auto/5", env_of({{"JOB_COMPLETION_INDEX", "5"}})), ConfigError);  // K = 6 > 5
  CHECK_THROWS_AS(parse_shard("auto", none), ConfigError);
  CHECK_THROWS_AS(parse_shard("auto", env_of({{"JOB_COMPLETION_INDEX", "0"}})), ConfigError);  // needs auto/N
  CHECK_THROWS_AS(parse_shard("auto/3", env_of({{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_MIN", "1"},
                                                {"SLURM_ARRAY_TASK_COUNT", "4"}})),
                  ConfigError);  // the array has 4 tasks
  for (const char* bad : {"0/4", "5/4", "1/0", "x", "1/", "/4", "-1/4", "1/4/2", "99999999999/1"})
    CHECK_THROWS_AS(parse_shard(bad, none), ConfigError);
}

TEST_CASE("sweep: the plan is every job x variant x run x row once, and N shards partition it") {
  const Sweep s = resolve_sweep(small_sweep());
  REQUIRE(s.jobs.size() == 2);
  CHECK(s.jobs[0].dir == "small-2s-8c");
  CHECK(s.jobs[1].dir == "intel-icl-2s-64t");
  // 2 kernels x 2 capacities = 4 variants, x 2 runs x 3 rows, per topology.
  REQUIRE(s.points.size() == 2 * 4 * 2 * 3);
  std::set<std::string> ids;
  for (const auto& p : s.points) ids.insert(p.id);
  CHECK(ids.size() == s.points.size());
  CHECK(s.points[0].id == "small-2s-8c/v0-t0-n1-r1");
  CHECK(s.points[1].id == "small-2s-8c/v0-t1-n4-r1");  // rows innermost: shards mix task counts
  CHECK(s.points[3].id == "small-2s-8c/v0-t0-n1-r2");
  CHECK(s.points[24].id == "intel-icl-2s-64t/v0-t0-n1-r1");
  for (std::size_t n : {1u, 3u, 7u, 48u, 100u}) {
    std::vector<int> owners(s.points.size(), 0);
    for (std::size_t k = 1; k <= n; ++k)
      for (std::size_t i = 0; i < s.points.size(); ++i) owners[i] += Shard{k, n}.contains(i) ? 1 : 0;
    CHECK(std::all_of(owners.begin(), owners.end(), [](int o) { return o == 1; }));
  }
  // Each point's run arguments name one kernel, one capacity, one task count and its seed.
  const json plan = sweep_plan(s);
  const json& p = plan["points"][29];  // intel-icl-2s-64t, v0 (v6.18, maple_node=16), run 2, row 2
  CHECK(p["id"] == "intel-icl-2s-64t/v0-t2-n8-r2");
  CHECK(p["seed"] == 2);
  const auto args = p["args"].get<std::vector<std::string>>();
  auto value_of = [&](const std::string& opt) {
    auto it = std::find(args.begin(), args.end(), opt);
    return it == args.end() || it + 1 == args.end() ? std::string("(none)") : *(it + 1);
  };
  CHECK(value_of("--topology") == "intel-icl-2s-64t");
  CHECK(value_of("--kernel") == "v6.18");
  CHECK(value_of("--sheaf-capacity") == "maple_node=16");
  CHECK(value_of("--nr-task") == "8");
  CHECK(value_of("--runs") == "1");
  CHECK(value_of("--seed") == "2");
}

TEST_CASE("sweep: the fields in sweep.json read back as the same sweep") {
  SweepRequest r = small_sweep();
  r.base.sets = {"costs.qspinlock.handoff_alpha=1.2"};
  r.base.patches = {"+skip-freelist"};
  r.base.sheaf_capacity = "maple_node=16,vm_area_struct=16;maple_node=32,vm_area_struct=32";
  const json fields = sweep_fields(r);
  SweepRequest back;
  back.base.home = r.base.home;
  read_sweep_fields(fields, "sweep.json", back);
  CHECK(sweep_fields(back) == fields);
  const Sweep s = resolve_sweep(back);
  REQUIRE(s.jobs[0].job.variants.size() == 4);  // 2 kernels x 2 multi-cache settings
  CHECK(s.jobs[0].job.variants[1].label == "v6.18_sheaf_capacity=maple_node=32,vm_area_struct=32");
  // The object form of "set" and number lists, as a person writes them.
  const json written = json::parse(R"({"topology": "small-2s-8c", "workload": ["mmap2", "brk1"],
    "nr_task": [1, "50%"], "set": {"costs.qspinlock.handoff_alpha": 1.5, "topology.latency_ns.llc": 30}})");
  SweepRequest w;
  w.base.home = r.base.home;
  read_sweep_fields(written, "w.json", w);
  CHECK(w.base.nr_task == "1,50%");
  CHECK(w.base.sets == std::vector<std::string>{"costs.qspinlock.handoff_alpha=1.5", "topology.latency_ns.llc=30"});
  CHECK(w.workloads.size() == 2);
  CHECK(resolve_sweep(w).jobs[1].dir == "small-2s-8c/brk1");
  CHECK_THROWS_AS(read_sweep_fields(json::parse(R"({"runs": 0})"), "r.json", w), ConfigError);
  CHECK_THROWS_AS(read_sweep_fields(json::parse(R"({"topolgy": "x"})"), "t.json", w), ConfigError);
}

TEST_CASE("progress: the time left as a person reads it") {
  CHECK(ProgressMeter::format_eta(0) == "0s");
  CHECK(ProgressMeter::format_eta(59.4) == "59s");
  CHECK(ProgressMeter::format_eta(61) == "1m01s");
  CHECK(ProgressMeter::format_eta(3725) == "1h02m");
  CHECK(ProgressMeter::format_eta(-1) == "?");
  CHECK(ProgressMeter::format_eta(1.0 / 0.0) == "?");
}
