// slubsim fit (sim/validate/fit_measured.h): reading a measured will-it-scale figure from an lkp
// stats.json, runtest.py's CSV and one binary's output; the checks made before any simulation;
// a fit file written and read back; what run --fit takes. Nothing is simulated here
// (tests/e2e/fit.sh runs the search).
#include <doctest/doctest.h>

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <unistd.h>

#include "helpers.h"
#include "sim/validate/fit_measured.h"

using namespace slubsim;
namespace fs = std::filesystem;

namespace {

// A scratch file of this process, removed with its directory at the end of the test case.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / fmt::format("slubsim-test-fit-measured-{}", ::getpid());
  Scratch() { fs::create_directories(dir); }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = dir / name;
    std::ofstream(p) << text;
    return p.string();
  }
};

// The ConfigError's "FILE: FIELD: message", as main prints it.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return fmt::format("{}: {}: {}", e.file(), e.field(), e.what());
  }
  return "";
}

FitMeasuredRequest small_request(const std::string& out) {
  FitMeasuredRequest r;
  r.job.home = test::source_dir();
  r.job.topology = "small-2s-8c";
  r.job.workload = "mmap2";
  r.job.nr_task = "2";
  r.figure = {500000, 2, "--ops 500000"};
  r.out = out;
  return r;
}

}  // namespace

TEST_CASE("fit: the figure from an lkp stats.json") {
  Scratch s;
  const auto one = s.write("one.json", R"({"will-it-scale.2.processes": 812345, "will-it-scale.per_process_ops": 406172,
                                           "will-it-scale.workload": 812345})");
  auto f = read_measured_figure(one, "process", 0);
  CHECK(f.ops == 812345);
  CHECK(f.nr_task == 2);  // the one row says its task count
  CHECK(f.from.find("will-it-scale.2.processes") != std::string::npos);
  CHECK(read_measured_figure(one, "process", 2).ops == 812345);

  // matrix.json: an array per key, its mean.
  const auto matrix = s.write("matrix.json", R"({"will-it-scale.4.threads": [100, 200, 300]})");
  CHECK(read_measured_figure(matrix, "thread", 4).ops == 200);

  // Only will-it-scale.workload: the sum of a one-row job, with --nr-task saying the row.
  const auto workload = s.write("workload.json", R"({"will-it-scale.workload": 4000})");
  CHECK(read_measured_figure(workload, "process", 1).ops == 4000);
  CHECK(error_of([&] { read_measured_figure(workload, "process", 0); }).find("--nr-task: needed") != std::string::npos);

  // Several rows: --nr-task picks one, and must be one of them.
  const auto rows = s.write("rows.json", R"({"will-it-scale.1.processes": 10, "will-it-scale.8.processes": 70,
                                            "will-it-scale.workload": 80})");
  CHECK(read_measured_figure(rows, "process", 8).ops == 70);
  CHECK(error_of([&] { read_measured_figure(rows, "process", 0); }).find("several task counts") != std::string::npos);
  const auto missing = error_of([&] { read_measured_figure(rows, "process", 2); });
  CHECK(missing.find(rows + ": will-it-scale.2.processes: no such key") == 0);
  CHECK(missing.find("will-it-scale.1.processes, will-it-scale.8.processes") != std::string::npos);

  // The other mode's keys: the error says which --mode the file is.
  const auto e = error_of([&] { read_measured_figure(one, "thread", 2); });
  CHECK(e.find("will-it-scale.2.threads: no such key") != std::string::npos);
  CHECK(e.find("give --mode process") != std::string::npos);

  // Not a figure: zero, negative, a string.
  const auto zero = s.write("zero.json", R"({"will-it-scale.2.processes": 0})");
  CHECK(error_of([&] { read_measured_figure(zero, "process", 2); }).find("will-it-scale.2.processes: is 0") != std::string::npos);
  const auto neg = s.write("neg.json", R"({"will-it-scale.2.processes": -3})");
  CHECK(error_of([&] { read_measured_figure(neg, "process", 0); }).find("is -3") != std::string::npos);
  const auto text = s.write("text.json", R"({"will-it-scale.2.processes": "fast"})");
  CHECK(error_of([&] { read_measured_figure(text, "process", 2); }).find("is not a number") != std::string::npos);
  const auto broken = s.write("broken.json", "{\"will-it-scale.2.processes\": ");
  CHECK(error_of([&] { read_measured_figure(broken, "process", 2); }).find(broken) == 0);
}

TEST_CASE("fit: the figure from will-it-scale's runtest.py CSV and a binary's output") {
  Scratch s;
  const auto csv = s.write("mmap2.csv",
                           "tasks,processes,processes_idle,threads,threads_idle,linear\n"
                           "0,0,100,0,100,0\n"
                           "1,614253,87.49,601022,87.50,614253\n"
                           "2,1201874,75.01,1160000,75.00,1228506\n"
                           "3,-1,62.50,1700000,62.51,1842759\n");
  auto f = read_measured_figure(csv, "process", 0);
  CHECK(f.nr_task == 1);  // the lowest task count by default: the calibration's choice
  CHECK(f.ops == 614253);
  CHECK(f.from.find("line 3 (1 tasks, column processes)") != std::string::npos);
  CHECK(read_measured_figure(csv, "process", 2).ops == 1201874);
  CHECK(read_measured_figure(csv, "thread", 2).ops == 1160000);
  CHECK(error_of([&] { read_measured_figure(csv, "process", 5); }).find("no row of 5 tasks") != std::string::npos);
  const auto failed = error_of([&] { read_measured_figure(csv, "process", 3); });
  CHECK(failed.find("line 5 (3 tasks, column processes): is -1") != std::string::npos);
  CHECK(failed.find("printed no average") != std::string::npos);
  const auto short_row = s.write("short.csv", "tasks,processes,processes_idle,threads,threads_idle,linear\n1,2,3\n");
  CHECK(error_of([&] { read_measured_figure(short_row, "process", 1); }).find("line 2: has 3 fields, the header 6") !=
        std::string::npos);

  // ./mmap2_processes -t 4 -s 5: its last average line; the task count is the -t given.
  const auto out = s.write("run.txt",
                           "testcase:Separate file mmap/munmap of 128MB\nwarmup\nmin:1 max:2 total:3\nmeasurement\n"
                           "min:1 max:2 total:3\naverage:2401234\n");
  CHECK(read_measured_figure(out, "process", 4).ops == 2401234);
  CHECK(read_measured_figure(out, "process", 4).nr_task == 4);
  CHECK(error_of([&] { read_measured_figure(out, "process", 0); }).find("command line: --nr-task: needed") == 0);

  const auto junk = s.write("junk.txt", "hello\n");
  CHECK(error_of([&] { read_measured_figure(junk, "process", 1); }).find("not a will-it-scale result") != std::string::npos);
  CHECK(error_of([&] { read_measured_figure((s.dir / "none.json").string(), "process", 1); }).find("no such file") !=
        std::string::npos);
  CHECK(error_of([&] { read_measured_figure(csv, "both", 1); }).find("--mode") != std::string::npos);
}

TEST_CASE("fit: the request is checked before any simulation") {
  Scratch s;
  const std::string out = (s.dir / "fit.json").string();
  std::vector<std::pair<std::string, double>> base;
  auto r = small_request(out);
  check_fit_request(r, base);
  // mmap2's placeholders, not its estimated i_mmap_ns, at their workload values.
  REQUIRE(base.size() == 3);
  CHECK(base[0] == std::pair<std::string, double>{"mmap_locked_ns", 1500});
  CHECK(base[2].first == "unlocked_ns");

  auto bad = [&](auto change) {
    auto q = small_request(out);
    change(q);
    return error_of([&] { check_fit_request(q, base); });
  };
  CHECK(bad([](auto& q) { q.job.topology = "no-such-box"; }).find("no-such-box") != std::string::npos);
  CHECK(bad([](auto& q) { q.job.nr_task = "9"; }).find("--nr-task: '9' gives 9 tasks; the machine has 8 CPUs") !=
        std::string::npos);
  CHECK(bad([](auto& q) { q.figure.ops = 0; }).find("--ops: is 0") != std::string::npos);
  CHECK(bad([](auto& q) { q.figure.ops = -1; }).find("--ops: is -1") != std::string::npos);
  CHECK(bad([](auto& q) { q.job.kernel = "v6.17,v7.0"; }).find("--kernel: one kernel") != std::string::npos);
  CHECK(bad([](auto& q) { q.parameters = {"mmap_lock_ns"}; }).find("did you mean") != std::string::npos);
  CHECK(bad([](auto& q) { q.out = (fs::path("/no/such/dir") / "f.json").string(); }).find("does not exist") !=
        std::string::npos);
  CHECK(bad([](auto& q) { q.job.workload = "lock-standin"; }).find("--parameters") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("fit: a fit file with its workload reads back, and run --fit checks it") {
  Scratch s;
  Fit f;
  f.experiment = "measured-mmap2";
  f.topology = "small-2s-8c";
  f.workload = "mmap2";
  f.scale = 0.6;
  f.parameters = scaled_parameters({{"mmap_locked_ns", 1500}, {"munmap_locked_ns", 1400}, {"unlocked_ns", 900}}, 0.6);
  f.variant = f.kernel = "v6.17";
  f.nr_task = 2;
  f.metric = "will-it-scale.2.processes";
  f.published = 500000;
  f.simulated = 500100;
  f.converged = true;
  f.source = "slubsim fit: test";
  const auto file = s.write("fit.json", fit_json(f).dump(2));
  const Fit back = read_fit_file(file);
  CHECK(back.workload == "mmap2");
  CHECK(back.scale == 0.6);
  CHECK(back.parameters == f.parameters);

  JobRequest req;
  req.home = test::source_dir();
  req.workload = "mmap2";
  const auto sets = fit_file_sets(file, req);
  REQUIRE(sets.size() == 3);
  CHECK(sets[0] == "workload.parameters.mmap_locked_ns=900");
  req.workload = "mmap1";  // the same parameter names, but another workload
  CHECK(error_of([&] { fit_file_sets(file, req); }).find(file + ": workload: is 'mmap2'") == 0);
  req.workload = "brk1";
  f.workload.clear();  // a calibration fit names no workload: its parameters must be the workload's
  const auto bare = s.write("bare.json", fit_json(f).dump(2));
  CHECK(error_of([&] { fit_file_sets(bare, req); }).find(bare + ": parameters.mmap_locked_ns") == 0);
  CHECK(error_of([&] { fit_file_sets((s.dir / "none.json").string(), req); }).find("no such fit file") !=
        std::string::npos);
  const auto notfit = s.write("notfit.json", R"({"experiment": "x", "topology": "y"})");
  CHECK(error_of([&] { fit_file_sets(notfit, req); }).find(notfit + ": scale") == 0);
}
