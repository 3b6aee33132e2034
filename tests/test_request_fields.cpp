// JobRequest's fields have one home (request_field_list, sim/run/job.h): `run` takes every
// option it names, a sweep file takes every key, and a sweep point's `run` arguments give back
// the point's own request.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>

#include "helpers.h"
#include "sim/cli/cli.h"
#include "sim/run/point_store.h"
#include "sim/sweep/sweep.h"

using namespace slubsim;

TEST_CASE("request fields: `slubsim run` takes every option the list names") {
  const RunCommand help = parse_run_command({"--help"}, test::source_dir());
  for (const RequestField& f : request_field_list()) {
    if (!f.option) continue;
    CAPTURE(f.option);
    CHECK(help.help_text.find(std::string("  ") + f.option + " ") != std::string::npos);
  }
}

TEST_CASE("request fields: the list declares each job option's help, in the help's own order") {
  // add_job_options (sim/cli/cli.cpp) binds the options by walking the list: each option's help
  // is the list's text, and the options appear in the order of their help_place.
  const RunCommand help = parse_run_command({"--help"}, test::source_dir());
  std::vector<std::pair<int, std::size_t>> places;  // (help_place, where the option is in the help)
  for (const RequestField& f : request_field_list()) {
    if (!f.option) continue;
    CAPTURE(f.option);
    REQUIRE(f.help != nullptr);
    const std::size_t at = help.help_text.find(std::string("  ") + f.option + " ");
    REQUIRE(at != std::string::npos);
    // The option's paragraph holds the list's text whole (program_options wraps it over lines,
    // inside words too): compared without white space.
    auto words = [](const std::string& text) {
      std::string out;
      for (char c : text)
        if (!std::isspace(static_cast<unsigned char>(c))) out += c;
      return out;
    };
    const std::string paragraph = help.help_text.substr(at, help.help_text.find("\n  -", at + 1) - at);
    CHECK_MESSAGE(words(paragraph).find(words(f.help)) != std::string::npos, paragraph);
    places.emplace_back(f.help_place, at);
  }
  std::sort(places.begin(), places.end());
  for (std::size_t i = 1; i < places.size(); ++i) {
    CHECK(places[i - 1].first != places[i].first);  // each place once
    CHECK(places[i - 1].second < places[i].second);
  }
}

TEST_CASE("request fields: a sweep point's run arguments describe the same job as the point") {
  SweepRequest req;
  req.base.home = test::source_dir();
  req.topologies = {"small-2s-8c"};
  req.workloads = {"mmap2"};
  req.base.kernel = "v6.17,v7.0";
  req.base.sheaf_capacity = "maple_node=32";
  req.base.nr_task = "2,4";
  req.base.patches = {"+spare-sheaf"};
  req.base.sets = {"costs.qspinlock.handoff_alpha=1.5"};
  req.base.warmup = "1ms";
  req.base.duration = "2ms";
  req.base.interval = "500us";
  req.base.validate = true;
  req.base.seed = 7;
  const Sweep s = resolve_sweep(req);
  const json plan = sweep_plan(s);
  REQUIRE(plan["points"].size() == s.points.size());
  for (std::size_t i = 0; i < s.points.size(); ++i) {
    std::vector<std::string> args = plan["points"][i]["args"].get<std::vector<std::string>>();
    const RunCommand cmd = parse_run_command(args, test::source_dir());
    const JobRequest& point = cmd.request;
    const Job& job = s.jobs[s.points[i].job].job;
    CAPTURE(i);
    // Every field but those a point narrows to itself (kernel, capacity, task count, runs, seed).
    json want = request_fields(job.request), got = request_fields(point);
    for (const char* narrowed : {"kernel", "sheaf_capacity", "nr_task", "runs", "seed"}) {
      want.erase(narrowed);
      got.erase(narrowed);
    }
    CHECK(want.dump() == got.dump());
    CHECK(point.runs == 1);
    CHECK(point.seed == job.request.seed + s.points[i].key.run);
  }
}
