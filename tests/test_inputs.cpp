// The catalogue of uncertain inputs (sim/trust/inputs.h): every range has a source, facts of
// the kernel and model switches stay out, --set replaces an input with one of no range, and
// everything advise varies is in it.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "sim/advise/advise.h"
#include "sim/trust/inputs.h"
#include "tests/helpers.h"

using namespace slubsim;
namespace fs = std::filesystem;

namespace {

JobRequest request(const std::string& topology, const std::string& workload, const std::string& kernel = "v7.0") {
  return test::job_request(topology, workload, kernel, "1", "", "");
}

const UncertainInput* find(const std::vector<UncertainInput>& list, const std::string& name) {
  for (const auto& in : list)
    if (in.name == name) return &in;
  return nullptr;
}

std::vector<std::string> stems(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(test::source_dir() + "/" + dir))
    if (e.path().extension() == ".json") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("inputs: every range of every preset and workload has a source and holds its value") {
  for (const auto& topology : stems("configs/topologies"))
    for (const std::string workload : {"mmap1", "mmap2", "brk1", "rawudp", "sched-messaging"}) {
      CAPTURE(topology);
      CAPTURE(workload);
      const Job job = resolve_job(request(topology, workload));
      for (const auto& in : uncertain_inputs(job)) {
        CAPTURE(in.name);
        CHECK(!in.source.empty());
        CHECK(!in.used_by.empty());
        if (!in.range) continue;
        CHECK(in.range_source.find_first_not_of(" \t") != std::string::npos);
        CHECK((*in.range)[0] <= in.value);
        CHECK(in.value <= (*in.range)[1]);
      }
    }
}

TEST_CASE("inputs: a range's source may not be blank, nor stand without a range") {
  json costs = load_json_file(test::source_dir() + "/configs/costs/default.json");
  costs["cache_hit_ns"]["range_source"] = " ";
  CHECK_THROWS_WITH_AS(parse_costs(costs, "c.json"), doctest::Contains("must say where the range comes from"),
                       ConfigError);
  costs["cache_hit_ns"].erase("range");
  costs["cache_hit_ns"]["range_source"] = "somewhere";
  CHECK_THROWS_WITH_AS(parse_costs(costs, "c.json"), doctest::Contains("a range's source without a range"),
                       ConfigError);
  costs = load_json_file(test::source_dir() + "/configs/costs/default.json");
  costs["cache_hit_ns"]["range"] = json::array({1.5, 2.0});  // not around the value (1.0)
  CHECK_THROWS_WITH_AS(parse_costs(costs, "c.json"), doctest::Contains("needs low <= value (1) <= high"), ConfigError);
}

TEST_CASE("inputs: Turin mmap1 lists the estimated latencies, the placeholders and the costs, not the facts") {
  const Job job = resolve_job(request("amd-turin-2s-512t", "mmap1"));
  const auto list = uncertain_inputs(job);
  const UncertainInput* llc = find(list, "topology.latency_ns.llc");
  REQUIRE(llc);
  CHECK(llc->kind == UncertainInput::Kind::Estimate);
  CHECK(llc->unit == "ns");
  REQUIRE(llc->range);
  CHECK((*llc->range)[0] == 20);
  CHECK((*llc->range)[1] == 33);
  const UncertainInput* nonslab = find(list, "workload.parameters.unlocked_ns");
  REQUIRE(nonslab);
  CHECK(nonslab->kind == UncertainInput::Kind::Placeholder);
  REQUIRE(nonslab->range);  // the span of mmap1's calibration fits and the placeholder
  CHECK((*nonslab->range)[1] == nonslab->value);
  CHECK(nonslab->range_source.find("calibration fits of mmap1") != std::string::npos);
  CHECK(find(list, "costs.slub.list_op_ns"));
  CHECK(find(list, "costs.rwsem.wakeup_ns"));
  CHECK_FALSE(find(list, "costs.rcu.batch_limit"));        // a kernel fact
  CHECK_FALSE(find(list, "costs.line_residency_us"));      // a model switch
  CHECK_FALSE(find(list, "costs.qspinlock.handoff_alpha"));  // used only with the alpha hand-off
}

TEST_CASE("inputs: every cost of the cost model has a range; those fitted on T12 show as fitted") {
  const Job job = resolve_job(request("amd-turin-2s-512t", "mmap1"));
  const auto list = uncertain_inputs(job);
  int costs = 0;
  for (const auto& in : list) {
    if (in.name.rfind("costs.", 0) != 0) continue;
    ++costs;
    INFO(in.name);
    CHECK(in.range);
  }
  CHECK(costs >= 25);
  const UncertainInput* sheaf = find(list, "costs.slub.sheaf_alloc_ns");
  REQUIRE(sheaf);
  CHECK(sheaf->kind == UncertainInput::Kind::Fitted);
  REQUIRE(sheaf->range);
  CHECK((*sheaf->range)[0] <= sheaf->value);
  CHECK(sheaf->value <= (*sheaf->range)[1]);
  const UncertainInput* memcg = find(list, "costs.memcg.charge_ns");
  REQUIRE(memcg);
  CHECK(memcg->kind == UncertainInput::Kind::Fitted);
}

TEST_CASE("inputs: --set replaces an input with the user's value, without the range it had") {
  JobRequest r = request("amd-turin-2s-512t", "mmap1");
  r.sets = {"topology.latency_ns.llc=40", "costs.slub.list_op_ns=30"};
  const auto list = uncertain_inputs(resolve_job(r));
  const UncertainInput* llc = find(list, "topology.latency_ns.llc");
  REQUIRE(llc);
  CHECK(llc->value == 40);  // outside the preset's 20-33 ns: a what-if, allowed
  CHECK(llc->kind == UncertainInput::Kind::Set);
  CHECK_FALSE(llc->range);
  const UncertainInput* list_op = find(list, "costs.slub.list_op_ns");
  REQUIRE(list_op);
  CHECK(list_op->kind == UncertainInput::Kind::Set);
  CHECK_FALSE(list_op->range);
}

TEST_CASE("inputs: everything advise varies is in the catalogue, at the catalogue's range ends") {
  for (const std::string topology : {"amd-turin-2s-512t", "intel-gnr-2s-344t-4n", "small-2s-8c"}) {
    CAPTURE(topology);
    AdviseRequest a;
    a.base = request(topology, "mmap1");
    a.base.nr_task = "4";
    const AdvisePlan plan = resolve_advise(a);
    const auto list = uncertain_inputs(resolve_job(a.base));
    std::size_t checked = 0;
    for (const auto& b : plan.bounds)
      for (const auto& set : b.sets) {
        CAPTURE(set);
        const std::string key = set.substr(0, set.find('='));
        const double v = std::stod(set.substr(set.find('=') + 1));
        const UncertainInput* in = find(list, key);
        REQUIRE(in);
        REQUIRE(in->range);
        CHECK((v == doctest::Approx((*in->range)[0]) || v == doctest::Approx((*in->range)[1])));
        ++checked;
      }
    CHECK(checked > 0);
  }
}

TEST_CASE("inputs: a latency measured by slubsim probe shows as measured, with its measured range") {
  json topo = load_json_file(test::source_dir() + "/configs/topologies/small-2s-8c.json");
  topo["latency_ns"]["llc"] = {{"value", 31.5},
                               {"source", "measured by slubsim probe on box, 2026-12-04, 72 samples over 8 CPU pairs"},
                               {"range", {29.0, 36.2}},
                               {"range_source", "5th to 95th percentile of the probe's samples"}};
  const std::string file = (std::filesystem::temp_directory_path() / "slubsim-measured-topology.json").string();
  std::ofstream(file) << topo.dump(2);
  const auto list = uncertain_inputs(resolve_job(request(file, "mmap1")));
  std::filesystem::remove(file);
  const UncertainInput* llc = find(list, "topology.latency_ns.llc");
  REQUIRE(llc);
  CHECK(llc->kind == UncertainInput::Kind::Measured);
  REQUIRE(llc->range);
  CHECK((*llc->range)[0] == 29.0);
  CHECK(llc->range_source == "5th to 95th percentile of the probe's samples");
}
