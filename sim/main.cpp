// slubsim command line.
//
//   slubsim                    the default main job: experiment T01, simulated vs published
//   slubsim run [OPTIONS]      a job; lkp JSON to stdout, or to --out DIR
//   slubsim validate [OPTIONS] run the experiments and score them against the published tables
//   slubsim --help
#include <boost/program_options.hpp>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <optional>
#include <fmt/format.h>
#include <iostream>
#include <string>
#include <vector>

#include "sim/config.h"
#include "sim/job.h"
#include "sim/point_store.h"
#include "sim/report.h"
#include "sim/trace_import.h"
#include "sim/validate.h"
#include "sim/why.h"

namespace po = boost::program_options;
using namespace slubsim;

namespace {

constexpr int kExitBadInput = 2;

// SIGINT / SIGTERM during `run --out`: the first asks the job to stop after the points in flight
// (they are written); a second one ends the process at once, as without a handler.
std::atomic<bool> g_stop{false};
volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_stop_signal(int sig) {
  if (g_stop.load()) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  g_signal = sig;
  g_stop.store(true);
}

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

// --seed: a whole number from 0 to 2^53, as an experiment's "seed" (program_options would wrap
// "-1" round to 2^64 - 1).
std::uint64_t parse_seed(const std::string& text) {
  constexpr std::uint64_t kMax = std::uint64_t{1} << 53;
  std::size_t used = 0;
  unsigned long long v = 0;
  try {
    if (!text.empty() && text[0] != '-' && text[0] != '+') v = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || v > kMax)
    throw ConfigError("command line", "--seed", fmt::format("'{}' is not a whole number from 0 to 2^53", text));
  return v;
}

const char* kUsage = R"(slubsim: a discrete-event simulator of the Linux SLUB allocator on NUMA machines

Usage:
  slubsim                     the main job: experiment T01 (Hao Li, mmap2 on the 4-node 192-CPU box, AMD and GNR readings),
                              simulated vs published, as a table; writes nothing
  slubsim run [OPTIONS]       run a job; lkp-format stats JSON to stdout, or files to --out DIR
  slubsim validate [OPTIONS]  run every experiment (configs/experiments) and score it against the published
                              tables: scoreboard to stdout, OUT/scoreboard.{md,json}; --calibrate fits
  slubsim --help

Examples:
  slubsim run --topology amd-epyc-2s-192c-4n --workload lock-standin --nr-task 1,96,192
  slubsim run --topology intel-gnr-2s-344t-4n --nr-task 25%,50%,100% --runs 3 --out results/x
  slubsim run --topology small-2s-8c --set costs.qspinlock.handoff_alpha=2 --table
  slubsim run --topology amd-turin-2s-512t --workload ftrace:workloads/traces/sample-ftrace.txt --nr-task 2,64,512
  slubsim validate --only t01-hao-li-mmap2 --out results/validate
  slubsim validate --calibrate --only t05-lkp-brk1-spr192
)";

// The default main job: this experiment, with its fit applied.
constexpr const char* kDefaultExperiment = "t01-hao-li-mmap2";
// Simulated window of the default job; "" = the experiment file's own (12 ms after a 150 ms
// warm-up, the window its fit was made with; about 1 min 12 s on the 2-core development host,
// 2026-12-01). A shorter one is printed in the table's header.
constexpr const char* kDefaultDuration = "";
constexpr const char* kDefaultWarmup = "";

po::options_description run_options(JobRequest& r, std::string& out, bool& resume, bool& table, bool& why,
                                    bool& quiet) {
  po::options_description d("Options of 'slubsim run'");
  d.add_options()
      ("help,h", "this text")
      ("topology", po::value(&r.topology)->default_value(r.topology),
       "machine: a preset NAME (configs/topologies/NAME.json) or a FILE; e.g. --topology small-2s-8c")
      ("workload", po::value(&r.workload)->default_value(r.workload),
       "program each task runs: NAME (workloads/NAME.json) or FILE, or a trace to replay: trace:FILE (slubsim's format) or ftrace:FILE (ftrace / trace-cmd report text of the kmem events); e.g. --workload rwsem-standin or --workload ftrace:workloads/traces/sample-ftrace.txt")
      ("trace-map", po::value(&r.trace_map)->default_value(r.trace_map),
       "how a trace's C CPUs become the tasks: replicated (task j replays trace CPU j mod C, each group of C tasks with its own objects) or mapped (trace CPU i on task i mod N; N must not exceed C); e.g. --trace-map mapped")
      ("trace-speed", po::value(&r.trace_speed)->default_value(r.trace_speed),
       "trace timestamps are divided by this factor; 0 replays events back to back; e.g. --trace-speed 10")
      ("mode", po::value(&r.mode)->default_value(r.mode),
       "process (private mm per task) or thread (one shared mm); e.g. --mode thread")
      ("nr-task", po::value(&r.nr_task)->default_value(r.nr_task),
       "task counts, one result row each: N or P% of logical CPUs; e.g. --nr-task 1,8,64 or 25%,50%,100%")
      ("kernel", po::value(&r.kernel)->default_value(r.kernel),
       "kernel preset(s) (configs/kernels/NAME.json), a list is a sweep; e.g. --kernel v6.17,v7.0")
      ("sheaf-capacity", po::value(&r.sheaf_capacity),
       "[CACHE=]N[,...]: N alone for every sheaf cache, a list of Ns is a sweep; e.g. --sheaf-capacity maple_node=64 or 32,64,128")
      ("set", po::value(&r.sets)->composing(),
       "KEY=VALUE: change any model parameter in the topology, costs, workload or kernel config; repeatable; e.g. --set costs.qspinlock.handoff_alpha=1.2 --set topology.latency_ns.llc=30 --set caches.maple_node.order=1")
      ("patch", po::value(&r.patches)->composing(),
       "+NAME or -NAME: switch a patch on or off on top of every kernel preset: spare-sheaf, remote-refill-trylock, skip-freelist; repeatable; e.g. --patch +skip-freelist --patch -spare-sheaf")
      ("costs", po::value(&r.costs)->default_value(r.costs),
       "cost model: NAME (configs/costs/NAME.json) or FILE")
      ("caches", po::value(&r.caches)->default_value(r.caches),
       "slab caches: NAME (configs/caches/NAME.json) or FILE; per-cache knobs with --set caches.maple_node.cpu_partial=104")
      ("validate", po::bool_switch(&r.validate),
       "SLUB validation mode: double frees and foreign pointers are errors, and every object is checked to be in exactly one place at the end of each run")
      ("runs", po::value(&r.runs)->default_value(r.runs), "repetitions with seeds SEED, SEED+1, ...; e.g. --runs 3")
      ("seed", po::value<std::string>()->default_value(std::to_string(r.seed))->notifier([&r](const std::string& s) {
         r.seed = parse_seed(s);
       }),
       "random seed; same inputs and seed give identical JSON; e.g. --seed 7")
      ("duration", po::value(&r.duration)->default_value(r.duration),
       "measured window in simulated time (s, ms, us, ns); the default is the experiments' steady-state window, and a window under three RCU grace periods draws a warning; e.g. --duration 24ms")
      ("warmup", po::value(&r.warmup)->default_value(r.warmup),
       "simulated warm-up before the window (0 for none); one shorter than RCU needs to settle (three grace periods) draws a warning; e.g. --warmup 40ms")
      ("interval", po::value(&r.interval),
       "also report throughput and spin share per interval of simulated time, warm-up included (interval.<N>.<i>.* keys; is the window steady?); e.g. --interval 4ms")
      ("out", po::value(&out),
       "write stats.json, matrix.json and host.json to DIR (one subdirectory per kernel/capacity variant when there are several), each finished point to DIR/points at once, and DIR/index.json; Ctrl-C stops after the points in flight; e.g. --out results/run1")
      ("resume", po::bool_switch(&resume),
       "finish the interrupted job in --out DIR: the same options and inputs, only the missing points run; e.g. --out results/run1 --resume")
      ("jobs", po::value(&r.jobs)->default_value(r.jobs), "host threads (0 = one per host CPU); e.g. --jobs 2")
      ("table", po::bool_switch(&table), "print a readable table instead of JSON on stdout")
      ("why", po::bool_switch(&why),
       "after the table, where each row's task time goes, like perf report: non-slab work, slab fast and slow path, RCU callbacks, spinning per lock and node, idle (implies --table; the why.* keys are in the JSON anyway)")
      ("quiet", po::bool_switch(&quiet), "no progress lines on stderr")
      ("home", po::value(&r.home)->default_value(r.home),
       "where configs/ and workloads/ live (default: the source tree, or $SLUBSIM_HOME)");
  return d;
}

int run(std::vector<std::string> args) {
  // "--patch -NAME" would read as an option: glue the value on.
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--patch" && !args[i + 1].empty() && args[i + 1][0] == '-') {
      args[i] = "--patch=" + args[i + 1];
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    }
  JobRequest req;
  req.home = default_home();
  std::string out;
  bool resume = false, table = false, why = false, quiet = false;
  auto desc = run_options(req, out, resume, table, why, quiet);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "slubsim: error: command line: " << e.what() << "\n(see slubsim run --help)\n";
    return kExitBadInput;
  }
  if (why) table = true;
  if (vm.count("help")) {
    std::cout << kUsage << "\n" << desc << "\n";
    return 0;
  }
  if (resume && out.empty()) throw ConfigError("command line", "--resume", "needs --out DIR: the store to finish");
  Job job = resolve_job(req);
  auto progress = [&](const std::string& line) {
    if (!quiet) std::cerr << "slubsim: " << line << "\n";
  };
  if (job.trace) progress(describe_trace(*job.trace));
  for (const auto& w : window_warnings(job)) std::cerr << "slubsim: warning: " << w << "\n";
  // With --out, every finished point goes to the store at once and each variant's files when its
  // last point is in (sim/point_store.h); SIGINT and SIGTERM stop after the points in flight.
  std::optional<PointStore> store;
  RunControl control;
  if (!out.empty()) {
    store.emplace(out, job, resume);
    if (!store->loaded().empty())
      progress(fmt::format("resuming {}: {} points on disk", out, store->loaded().size()));
    control.finished_before = [&](const PointKey& k) -> std::optional<std::pair<RunResult, double>> {
      auto it = store->loaded().find(point_id(job, k));
      if (it == store->loaded().end()) return std::nullopt;
      return it->second;
    };
    control.on_point = [&](const PointKey& k, const RunResult& r, double wall) { store->save(k, r, wall); };
    control.on_variant = [&](std::size_t v, const JobResult& partial) { write_variant_results(out, job, partial, v); };
    control.stop = &g_stop;
    install_stop_handlers();
  }
  JobResult result = run_job(job, progress, control);
  if (!result.complete) {
    std::cerr << fmt::format("slubsim: interrupted: {} of {} points are in {}; the same command with --resume "
                             "finishes the job\n",
                             result.points_done, result.points_total, out);
    return 128 + static_cast<int>(g_signal);
  }
  if (table)
    std::cout << format_table(job, result);
  else if (out.empty())
    std::cout << stdout_stats(job, result).dump(2) << "\n";
  if (why) std::cout << "\n" << format_why(job, result);
  return 0;
}

po::options_description validate_options(ValidateOptions& o) {
  po::options_description d("Options of 'slubsim validate'");
  d.add_options()
      ("help,h", "this text")
      ("experiments", po::value(&o.experiments),
       "a directory of experiment files or one FILE (default: <home>/configs/experiments; format: docs/experiment-format.md); e.g. --experiments tests/data/experiments")
      ("only", po::value(&o.only), "run only these experiments: ID[,ID...]; e.g. --only t01-hao-li-mmap2")
      ("out", po::value(&o.out)->default_value(o.out),
       "write OUT/<id>/<topology>/<variant>/{stats,matrix,host}.json, OUT/scoreboard.md and OUT/scoreboard.json; e.g. --out results/validate")
      ("fits", po::value(&o.fits),
       "where calibration fits are read and written (default: <home>/configs/fits); e.g. --fits /tmp/fits")
      ("jobs", po::value(&o.jobs)->default_value(o.jobs), "host threads (0 = one per host CPU); e.g. --jobs 2")
      ("calibrate", po::bool_switch(&o.calibrate),
       "fit each experiment's non-slab time (its 'fit': baseline variant, lowest task count) and write configs/fits/<id>.<topology>.json instead of scoring")
      ("no-write", po::bool_switch(),
       "print only: write no result, scoreboard or fit file")
      ("set", po::value(&o.sets)->composing(),
       "KEY=VALUE: a what-if for the whole scoreboard: change a model parameter in every simulation, as 'run --set' does; repeatable; needs an explicit --out, and --fits with --calibrate, so the committed results and fits stay as they are; e.g. --set costs.qspinlock.contender_rmw=true --out /tmp/whatif")
      ("warmup", po::value(&o.warmup),
       "replace every experiment's warm-up (a what-if, with the same guards as --set); e.g. --warmup 80ms")
      ("duration", po::value(&o.duration),
       "replace every experiment's measured window (a what-if, as --warmup); e.g. --duration 48ms")
      ("interval", po::value(&o.interval),
       "add the interval series to every result, as 'run --interval' does (needs an explicit --out, as --warmup); e.g. --interval 4ms")
      ("quiet", po::bool_switch(&o.quiet), "no progress lines on stderr")
      ("home", po::value(&o.home)->default_value(o.home),
       "where configs/ and workloads/ live (default: the source tree, or $SLUBSIM_HOME)");
  return d;
}

int validate(const std::vector<std::string>& args) {
  ValidateOptions o;
  o.home = default_home();
  auto desc = validate_options(o);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "slubsim: error: command line: " << e.what() << "\n(see slubsim validate --help)\n";
    return kExitBadInput;
  }
  if (vm.count("help")) {
    std::cout << kUsage << "\n" << desc << "\n";
    return 0;
  }
  o.write = !vm["no-write"].as<bool>();
  if (o.jobs < 0 || o.jobs > 1024) throw ConfigError("command line", "--jobs", "must be between 0 and 1024");
  if (!o.warmup.empty()) parse_duration(o.warmup, "--warmup");
  if (!o.duration.empty()) parse_duration(o.duration, "--duration");
  if (!o.interval.empty()) parse_duration(o.interval, "--interval");
  if ((!o.sets.empty() || !o.warmup.empty() || !o.duration.empty() || !o.interval.empty()) && o.write) {
    // A what-if must not overwrite the committed results or fits by default.
    if (o.calibrate && vm["fits"].empty())
      throw ConfigError("command line", o.sets.empty() ? "--warmup/--duration/--interval" : "--set",
                        "with --calibrate needs an explicit --fits DIR");
    if (!o.calibrate && vm["out"].defaulted())
      throw ConfigError("command line", o.sets.empty() ? "--warmup/--duration/--interval" : "--set",
                        "needs an explicit --out DIR (or --no-write)");
  }
  if (o.experiments.empty()) o.experiments = o.home + "/configs/experiments";
  if (o.fits.empty()) o.fits = o.home + "/configs/fits";
  return validate_command(o);
}

int default_job() {
  ValidateOptions o;
  o.home = default_home();
  o.fits = o.home + "/configs/fits";
  o.quiet = true;
  o.write = false;
  o.duration = kDefaultDuration;
  o.warmup = kDefaultWarmup;
  std::cerr << "slubsim: the main job: experiment " << kDefaultExperiment
            << " (T01), three kernels x three task counts on the 192-CPU 4-node box (AMD and GNR readings); writes nothing "
               "('slubsim --help' for the rest)\n";
  return experiment_table_command(o.home + "/configs/experiments/" + kDefaultExperiment + ".json", o);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.empty()) return default_job();
    if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
      std::cout << kUsage << "\nRun 'slubsim run --help' for every option.\n";
      return 0;
    }
    if (args[0] == "run") return run({args.begin() + 1, args.end()});
    if (args[0] == "validate") return validate({args.begin() + 1, args.end()});
    std::cerr << fmt::format("slubsim: error: command line: unknown command '{}'\n{}", args[0], kUsage);
    return kExitBadInput;
  } catch (const ConfigError& e) {
    std::cerr << fmt::format("slubsim: error: {}: {}{}\n", e.file(),
                             e.field().empty() ? "" : e.field() + ": ", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "slubsim: error: " << e.what() << "\n";
    return 1;
  }
}
