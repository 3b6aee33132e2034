// The command line as a new user met it: lists given twice, the defaults on a small machine, a
// misspelt option, the message of a capacity no kernel reaches.
#include <doctest/doctest.h>

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <unistd.h>

#include "helpers.h"
#include "sim/advise/advise.h"
#include "sim/cli/cli.h"
#include "sim/run/job.h"
#include "sim/sweep/sweep.h"
#include "sim/trust/inputs.h"

using namespace slubsim;
namespace fs = std::filesystem;

namespace {

// The message of the ConfigError `f` throws, as main prints it after "FILE: " ("" if none).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return (e.field().empty() ? "" : e.field() + ": ") + e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

JobRequest small(const std::string& nr_task) {
  JobRequest r;
  r.home = test::source_dir();
  r.topology = "small-2s-8c";
  r.nr_task = nr_task;
  return r;
}

}  // namespace

TEST_CASE("cli: a task count given twice is refused, naming --nr-task and the count") {
  // Twice, a row ran twice and will-it-scale.workload added it twice.
  CHECK(error_of([] { parse_nr_task("64,64", 192); }) ==
        "--nr-task: '64' is given twice: each task count is one row, give it once");
  CHECK(error_of([] { parse_nr_task("1,25%,2", 8); }) ==
        "--nr-task: '2' gives 2 tasks, as '25%' does: each task count is one row, give it once");
  CHECK(error_of([] { resolve_job(small("4,8,4")); }) ==
        "--nr-task: '4' is given twice: each task count is one row, give it once");
  CHECK(parse_nr_task("1,2,4,8", 8) == std::vector<int>{1, 2, 4, 8});
}

TEST_CASE("cli: the default task counts hold on any machine, each count once") {
  CHECK(parse_nr_task(kDefaultNrTask, 1) == std::vector<int>{1});
  CHECK(parse_nr_task(kDefaultNrTask, 2) == std::vector<int>{1, 2});
  CHECK(parse_nr_task(kDefaultNrTask, 4) == std::vector<int>{1, 2, 4});  // 25% of 4 is the 1 before it
  CHECK(parse_nr_task(kDefaultNrTask, 8) == std::vector<int>{1, 2, 4, 8});
  CHECK(parse_nr_task(kAdviseDefaultNrTask, 2) == std::vector<int>{1});
  CHECK(has(error_of([] { parse_nr_task(kAdviseDefaultNrTask, 1); }), "give no task on this 1-CPU machine"));
  // Given, the same percentages are taken as given.
  CHECK(has(error_of([] { parse_nr_task("25%,50%", 2); }), "'25%' gives 0 tasks"));
}

TEST_CASE("cli: inputs on a 2-CPU machine does not trip over the default task counts") {
  const std::string two = test::source_dir() + "/tests/data/two-cpus.json";
  const InputsCommand cmd = parse_inputs_command({"--topology", two, "--workload", "mmap2"}, test::source_dir());
  const Job job = resolve_job(cmd.request);
  CHECK(job.machine.nr_cpus == 2);
  CHECK(job.nr_tasks == std::vector<int>{1, 2});
  CHECK(!uncertain_inputs(job).empty());
  // run with no --nr-task on it: the same rows.
  const RunCommand run = parse_run_command({"--topology", two}, test::source_dir());
  CHECK(resolve_job(run.request).nr_tasks == std::vector<int>{1, 2});
}

TEST_CASE("cli: other lists refuse a repeat the same way") {
  CHECK(error_of([] { parse_sheaf_capacity("32,64,32"); }) ==
        "--sheaf-capacity: '32' is given twice: give each once");
  CHECK(has(error_of([] { parse_sheaf_capacity("maple_node=16;maple_node=16"); }),
            "--sheaf-capacity: 'maple_node=16' is given twice"));
  CHECK(has(error_of([] { parse_sysfs("maple_node/sheaf_capacity=64;maple_node/sheaf_capacity=64"); }),
            "--sysfs: 'maple_node/sheaf_capacity=64' is given twice"));
  JobRequest k = small("4");
  k.kernel = "v6.17,v7.0,v6.17";
  CHECK(has(error_of([&] { resolve_job(k); }), "--kernel: 'v6.17' is given twice"));
  SweepRequest s;
  s.base = small("4");
  s.topologies = {"small-2s-8c", "small-2s-8c"};
  s.workloads = {"mmap2"};
  CHECK(has(error_of([&] { resolve_sweep(s); }), "--topology: 'small-2s-8c' is given twice"));
  s.topologies = {"small-2s-8c"};
  s.workloads = {"mmap1", "mmap2", "mmap1"};
  CHECK(has(error_of([&] { resolve_sweep(s); }), "--workload: 'mmap1' is given twice"));
  const auto advise = [](std::vector<std::string> extra) {
    std::vector<std::string> args{"--topology", "small-2s-8c", "--workload", "mmap1"};
    if (std::find(extra.begin(), extra.end(), "--nr-task") == extra.end())
      extra.insert(extra.end(), {"--nr-task", "4"});
    args.insert(args.end(), extra.begin(), extra.end());
    return error_of([&] { resolve_advise(parse_advise_command(args, test::source_dir()).request); });
  };
  CHECK(has(advise({"--caches", "maple_node,maple_node"}), "--caches: 'maple_node' is given twice"));
  CHECK(has(advise({"--capacities", "16,32,16"}), "--capacities: '16' is given twice"));
  CHECK(has(advise({"--max-full-sheaves", "5,5"}), "--max-full-sheaves: '5' is given twice"));
  CHECK(has(advise({"--nr-task", "4,4"}), "--nr-task: '4' is given twice"));
  CHECK(advise({}).empty());
}

TEST_CASE("cli: every unknown option gets the nearest one, when one is near") {
  const auto run = [](std::vector<std::string> args) {
    return error_of([&] { parse_run_command(args, test::source_dir()); });
  };
  CHECK(has(run({"--sheaf-capacities", "64"}),
            "unrecognised option '--sheaf-capacities'; did you mean --sheaf-capacity?"));
  CHECK(has(run({"--sheaf-capacities=64"}), "did you mean --sheaf-capacity?"));
  CHECK(has(run({"--capacity", "64"}), "did you mean --sheaf-capacity?"));
  CHECK(has(run({"-topology", "small-2s-8c"}), "did you mean --topology?"));
  CHECK(has(run({"--nr-tasks", "4"}), "did you mean --nr-task?"));
  CHECK(has(run({"--topologies", "small-2s-8c"}), "did you mean --topology?"));
  CHECK(!has(run({"--bogus", "1"}), "did you mean"));
  CHECK(has(error_of([] { parse_sweep_command({"--sheaf-capacities", "64"}, test::source_dir()); }),
            "did you mean --sheaf-capacity?"));
  CHECK(has(error_of([] { parse_advise_command({"--capacity", "64"}, test::source_dir()); }),
            "did you mean --capacities?"));
  CHECK(has(error_of([] { parse_advise_command({"--max-full-sheaf", "4"}, test::source_dir()); }),
            "did you mean --max-full-sheaves?"));
  CHECK(has(error_of([] { parse_inputs_command({"--workloads", "mmap2"}, test::source_dir()); }),
            "did you mean --workload?"));
}

TEST_CASE("cli: a capacity no kernel reaches names the default kernel only when --kernel was not given") {
  const auto message = [](std::vector<std::string> args) {
    args.insert(args.end(), {"--topology", "small-2s-8c", "--nr-task", "4"});
    return error_of([&] { resolve_job(parse_run_command(args, test::source_dir()).request); });
  };
  const std::string defaulted = message({"--sheaf-capacity", "maple_node=64"});
  CHECK(has(defaulted, "--sheaf-capacity: no kernel of the job (v6.17) has sheaves"));
  CHECK(has(defaulted, "--kernel defaults to v6.17, which has none"));
  for (const auto& [kernel, capacity] : std::vector<std::pair<std::string, std::string>>{
           {"v6.19", "kmalloc-64=64"}, {"v6.18", "kmalloc-64=32"}, {"v6.17", "maple_node=64"}, {"v6.5,v6.17", "64"}}) {
    CAPTURE(kernel);
    const std::string given = message({"--kernel", kernel, "--sheaf-capacity", capacity});
    CHECK(has(given, "no kernel of the job"));
    CHECK(!has(given, "defaults to"));
    CHECK(has(given, kernel.find(',') == std::string::npos ? "the kernel given (--kernel " + kernel + ") has none"
                                                           : "the kernels given (--kernel " + kernel + ") have none"));
  }
  // A sweep: --kernel, or a sweep file that names its kernels, gave them.
  const std::vector<std::string> options{"--topology", "small-2s-8c", "--nr-task", "4", "--sheaf-capacity", "64"};
  CHECK(parse_sweep_command(options, test::source_dir()).request.base.kernel_defaulted);
  std::vector<std::string> with_kernel = options;
  with_kernel.insert(with_kernel.end(), {"--kernel", "v6.18"});
  CHECK(!parse_sweep_command(with_kernel, test::source_dir()).request.base.kernel_defaulted);
  const fs::path dir = fs::temp_directory_path() / fmt::format("slubsim-test-cli-{}", ::getpid());
  fs::create_directories(dir);
  for (const bool named : {false, true}) {
    const std::string file = (dir / (named ? "named.json" : "unnamed.json")).string();
    std::ofstream(file) << (named ? R"({"topology": "small-2s-8c", "kernel": "v6.17"})"
                                  : R"({"topology": "small-2s-8c"})");
    std::vector<std::string> args{file};
    args.insert(args.end(), options.begin() + 2, options.end());
    CAPTURE(named);
    CHECK(parse_sweep_command(args, test::source_dir()).request.base.kernel_defaulted == !named);
  }
  fs::remove_all(dir);
}
