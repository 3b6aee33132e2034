// The catalogue of uncertain inputs (sim/trust/inputs.h): every range has a source, every
// estimate of a preset has a range, a copy of a preset's figure keeps the preset's, the non-slab
// placeholders span every fit of the workload (this machine's first), facts of the kernel and
// model switches stay out, --set replaces an input with one of no range, and everything advise
// varies is in it.
#include <algorithm>
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "sim/advise/advise.h"
#include "sim/machine/hwloc_import.h"
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
  REQUIRE(nonslab->range);  // the span of mmap1's fits and the placeholder
  CHECK((*nonslab->range)[1] == nonslab->value);
  CHECK(nonslab->range_source.find("the fits of mmap1") != std::string::npos);
  CHECK(nonslab->range_source.find("none on amd-turin-2s-512t") != std::string::npos);
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

TEST_CASE("inputs: every estimate of every preset has a range with a source") {
  // The topology's figures: the latency classes, the LLC's size and hit, the SMT factor. An
  // estimate (the source's guess) or a copy of another preset's figure is never without one.
  for (const auto& topology : stems("configs/topologies")) {
    CAPTURE(topology);
    const Job job = resolve_job(request(topology, "mmap2"));
    std::size_t estimates = 0;
    for (const auto& in : uncertain_inputs(job)) {
      if (in.name.rfind("topology.", 0) != 0 || !estimated(in)) continue;
      CAPTURE(in.name);
      ++estimates;
      REQUIRE(in.range);
      CHECK(in.range_source.find_first_not_of(" \t") != std::string::npos);
      CHECK((*in.range)[0] <= in.value);
      CHECK(in.value <= (*in.range)[1]);
    }
    CHECK(estimates > 0);  // every preset has some
  }
}

TEST_CASE("inputs: every latency a preset uses has a range, so a copy of it keeps one") {
  // slubsim import and probe copy a preset's latency classes with their ranges: a used class
  // without one would give an imported machine a copied latency that never moves.
  // small-2s-8c is the tests' synthetic machine: its figures are fixtures the topology tests
  // break one at a time, and no one imports a box's latencies from it.
  for (const auto& topology : stems("configs/topologies")) {
    if (topology == "small-2s-8c") continue;
    CAPTURE(topology);
    const json doc = load_json_file(test::source_dir() + "/configs/topologies/" + topology + ".json");
    for (const auto& [name, figure] : doc.at("latency_ns").items()) {
      CAPTURE(name);
      if (figure.at("source").get<std::string>().rfind("unused", 0) == 0) continue;
      CHECK(figure.contains("range"));  // without range_source: the range its source states
    }
  }
}

TEST_CASE("inputs: GNR mmap2's non-slab span reaches the machine's own fit, named first") {
  const std::string gnr = "intel-gnr-2s-344t-4n";
  const std::string own = "seed-zhao-liu-spare-sheaf-gnr." + gnr;
  auto scale_of = [](const std::string& fit) {
    return load_json_file(test::source_dir() + "/configs/fits/" + fit + ".json").at("scale").get<double>();
  };
  const double own_scale = scale_of(own);
  // The lowest of mmap2's fits, read here from their files: the span's low end.
  const double scale = std::min({own_scale, scale_of("t01-hao-li-mmap2.amd-epyc-2s-192c-4n"),
                                 scale_of("t06-lkp-mmap2-srf192.intel-srf-2s-192c")});
  const auto fits = workload_fits(test::source_dir(), "mmap2", gnr);
  REQUIRE(fits.size() == 3);
  REQUIRE(fits.size() >= 2);
  CHECK(fits.front().name == own);  // this machine's first, though the calibration set's sort before it
  CHECK(fits.front().this_machine);
  CHECK(fits.front().topology == gnr);
  CHECK(fits.front().experiment == "seed-zhao-liu-spare-sheaf-gnr");
  for (std::size_t i = 1; i < fits.size(); ++i) CHECK_FALSE(fits[i].this_machine);
  CHECK(fit_span(fits).first == scale);  // the lowest mmap2 fit
  CHECK(fit_span(fits).second == 1);     // the placeholder itself
  CHECK(own_scale >= fit_span(fits).first);  // the span reaches the machine's own fit

  const auto list = uncertain_inputs(resolve_job(request(gnr, "mmap2")));
  std::size_t placeholders = 0;
  for (const auto& in : list) {
    if (in.kind != UncertainInput::Kind::Placeholder || in.name.rfind("workload.", 0) != 0) continue;
    CAPTURE(in.name);
    ++placeholders;
    REQUIRE(in.range);
    CHECK((*in.range)[0] == doctest::Approx(in.value * scale));
    CHECK((*in.range)[1] == in.value);
    const std::size_t here = in.range_source.find("this machine's: " + own);
    const std::size_t t01 = in.range_source.find("t01-hao-li-mmap2.amd-epyc-2s-192c-4n");
    CHECK(here != std::string::npos);
    CHECK(t01 != std::string::npos);
    CHECK(here < t01);
  }
  CHECK(placeholders == 3);
  // The uncertainty factor's span is the same: every fit of the workload, not only the
  // calibration set's.
  CHECK(fit_span(workload_fits(test::source_dir(), "mmap2", "")).first == scale);
}

TEST_CASE("inputs: an imported topology's copied figures show as copied, with the preset's ranges") {
  const std::string preset = "intel-gnr-2s-344t-4n";
  const std::string preset_file = test::source_dir() + "/configs/topologies/" + preset + ".json";
  ImportRequest r;
  r.name = "imported";
  r.latencies_name = preset;
  r.latencies_file = preset_file;
  const json doc = topology_document(read_hwloc(test::source_dir() + "/tests/data/hwloc/amd-epyc-2s-192c-4n.xml"), r);
  const std::string file = (fs::temp_directory_path() / "slubsim-imported-topology.json").string();
  std::ofstream(file) << doc.dump(2);
  const auto list = uncertain_inputs(resolve_job(request(file, "mmap2")));
  fs::remove(file);
  const json from = load_json_file(preset_file);
  auto check = [&](const std::string& name, const json& figure) {
    CAPTURE(name);
    const UncertainInput* in = find(list, name);
    REQUIRE(in);
    CHECK(in->kind == UncertainInput::Kind::Copied);
    CHECK(std::string(kind_name(in->kind)) == "copied");
    CHECK(estimated(*in));
    CHECK(in->source.rfind("copied from preset " + preset + ": ", 0) == 0);
    CHECK(in->value == figure.at("value").get<double>());
    REQUIRE(in->range.has_value() == figure.contains("range"));
    if (!in->range) return;
    CHECK((*in->range)[0] == figure.at("range")[0].get<double>());
    CHECK((*in->range)[1] == figure.at("range")[1].get<double>());
    CHECK(in->range_source.rfind("preset " + preset + "'s: ", 0) == 0);
    if (figure.contains("range_source"))
      CHECK(in->range_source.find(figure.at("range_source").get<std::string>()) != std::string::npos);
  };
  std::size_t ranged = 0;
  for (const auto& [cls, figure] : from.at("latency_ns").items()) {
    check("topology.latency_ns." + cls, figure);
    ranged += figure.contains("range") ? 1 : 0;
  }
  CHECK(ranged == from.at("latency_ns").size());  // every GNR latency is an estimate, so ranged
  check("topology.llc.hit_ns", from.at("llc").at("hit_ns"));
  check("topology.smt_private_work_factor", from.at("smt_private_work_factor"));
  // hwloc gave this XML's cache size: a figure of the machine, not copied.
  const UncertainInput* size = find(list, "topology.llc.size_kb");
  REQUIRE(size);
  CHECK(size->kind == UncertainInput::Kind::Sourced);
}
