// slubsim command line.
//
//   slubsim                    the default main job: experiment T01, simulated vs published
//   slubsim run [OPTIONS]      a job; lkp JSON to stdout, or to --out DIR
//   slubsim validate [OPTIONS] run the experiments and score them against the published tables
//   slubsim sweep [FILE] [OPTIONS]  many jobs, on one host or in shards (a Slurm job array)
//   slubsim merge DIR... --out DIR  join a sweep's shards
//   slubsim advise [OPTIONS]   which sheaf capacity and barn limits for a machine and workload
//   slubsim inputs [OPTIONS]   the job's uncertain inputs, with their ranges and sources
//   slubsim fit [OPTIONS]      fit the non-slab time to a will-it-scale figure measured on a machine
//   slubsim import --hwloc FILE.xml | --this-machine ...   a topology from hwloc
//   slubsim probe [OPTIONS]    measure this machine's cache-line transfers into a topology
//   slubsim --help
#include <boost/program_options.hpp>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <csignal>
#include <cstdio>
#include <optional>
#include <fmt/format.h>
#include <iostream>
#include <string>
#include <vector>

#include "sim/cli/cli.h"
#include <cstdlib>
#include "sim/config/config.h"
#include "sim/run/job.h"
#include "sim/run/point_store.h"
#include "sim/run/report.h"
#include "sim/run/stop.h"
#include "sim/run/version.h"
#include <unistd.h>
#include "sim/config/trace_import.h"
#include "sim/sweep/merge.h"
#include "sim/sweep/sweep.h"
#include "sim/validate/fit_measured.h"
#include "sim/validate/validate.h"
#include "sim/run/why.h"
#include "sim/trust/inputs.h"
#include "sim/trust/record.h"
#include "sim/trust/uncertainty.h"
#include "sim/machine/hwloc_import.h"
#include "sim/machine/probe.h"
#include "sim/machine/topology.h"
#include <cmath>
#include <ctime>

namespace po = boost::program_options;
using namespace slubsim;

namespace {

constexpr int kExitBadInput = 2;

// SIGINT / SIGTERM during `run --out` or a sweep: the first asks the job to stop after the points
// in flight (they are written; one still running after the grace period is abandoned, see
// sim/run/stop.h) and says so at once; a second one ends the process at once, as without a
// handler. Only async-signal-safe calls here: write(2), no formatting library.
std::atomic<bool> g_stop{false};
volatile std::sig_atomic_t g_signal = 0;

char g_ack_tail[192] = "\n";  // filled before the handler is installed
char g_quit_message[160] = "\n";

void say(const char* s) {
  std::size_t n = 0;
  while (s[n]) ++n;
  [[maybe_unused]] ssize_t w = ::write(2, s, n);
}

extern "C" void on_stop_signal(int sig) {
  if (g_stop.load()) {
    say(g_quit_message);
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  g_signal = sig;
  g_stop.store(true);
  char digits[16];
  int v = g_points_in_flight.load(), k = 0;
  if (v < 0) v = 0;
  do {
    digits[k++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0 && k < 15);
  char count[16];
  for (int i = 0; i < k; ++i) count[i] = digits[k - 1 - i];
  count[k] = 0;
  say("slubsim: stopping after the ");
  say(count);
  say(g_ack_tail);
}

// `finish`: how the user finishes the job afterwards ("the same command with --resume" for run;
// "the same command again" for sweep and advise, which resume by themselves and take no --resume).
void install_stop_handlers(const char* finish) {
  const auto r = fmt::format_to_n(g_ack_tail, sizeof g_ack_tail - 1,
                                  " point(s) in flight (each gets at most {:g} s more, then is abandoned; {} "
                                  "reruns it); a second signal quits now\n",
                                  kStopGraceSeconds, finish);
  *r.out = 0;
  const auto q = fmt::format_to_n(g_quit_message, sizeof g_quit_message - 1,
                                  "slubsim: second signal: quitting now (points in flight are lost; {} reruns "
                                  "them)\n",
                                  finish);
  *q.out = 0;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}


const char* kUsage = R"(slubsim: a discrete-event simulator of the Linux SLUB allocator on NUMA machines

Usage:
  slubsim [--jobs N] [--quiet]  the main job: experiment T01 (Hao Li, mmap2 on the 4-node 192-CPU AMD box he
                              named), simulated vs published, as a table; writes nothing
  slubsim run [OPTIONS]       run a job; lkp-format stats JSON to stdout, or files to --out DIR
  slubsim validate [OPTIONS]  run every experiment (configs/experiments) and score it against the published
                              tables: scoreboard to stdout, OUT/scoreboard.{md,json}; --calibrate fits
  slubsim sweep [FILE] [OPTIONS]  a sweep: topologies x workloads x kernels x capacities x task counts x runs,
                              on this host or as shard K/N of a cluster job array ('slubsim sweep --help')
  slubsim merge DIR... --out DIR  join a sweep's shards into one tree, identical to a local sweep's
  slubsim advise [OPTIONS]    which sheaf capacity and barn limits (the runtime-tuning RFC's knobs) for a
                              machine and workload, at what memory cost ('slubsim advise --help')
  slubsim inputs [OPTIONS]    the job's inputs that are not facts of the kernel: value, range, sources
  slubsim fit [OPTIONS]       fit the workload's non-slab time to a will-it-scale figure measured on your
                              machine; writes a fit file for 'slubsim run --fit FILE' ('slubsim fit --help')
  slubsim import [OPTIONS]    a topology from hwloc: an lstopo XML of any box, or this machine
  slubsim probe [OPTIONS]     this machine measured: cache-line transfers and lock hand-offs per class
  slubsim --help
  slubsim --version           the version and the commit it was built from

Examples:
  slubsim run --topology amd-epyc-2s-192c-4n --workload lock-standin --nr-task 1,96,192
  slubsim run --topology intel-gnr-2s-344t-4n --nr-task 25%,50%,100% --runs 3 --out results/x
  slubsim run --topology small-2s-8c --set costs.qspinlock.handoff_alpha=2 --table
  slubsim run --topology amd-turin-2s-512t --workload ftrace:workloads/traces/sample-ftrace.txt --nr-task 2,64,512
  slubsim validate --only t01-hao-li-mmap2 --out results/validate
  slubsim validate --calibrate --only t05-lkp-brk1-spr192
  slubsim sweep configs/sweeps/capacity-small.json --out results/capsweep --jobs 2
  slubsim fit --topology my-box.json --workload mmap2 --nr-task 1 --ops 1243517 --out my-box.mmap2.fit.json
  slubsim run --topology my-box.json --workload mmap2 --fit my-box.mmap2.fit.json --nr-task 1,64 --table
)";

const char* kFitUsage = R"(slubsim fit: fit the workload's non-slab time to a will-it-scale figure measured on your machine

Usage:
  slubsim fit --topology T --workload W [--mode process|thread] [--kernel K] --nr-task N --ops OPS --out FILE
  slubsim fit --topology T --workload W [--mode process|thread] [--kernel K] --from FILE [--nr-task N] --out FILE

The figure is will-it-scale's total ops/s of all tasks at one task count (lkp's will-it-scale.N.processes),
measured on the machine --topology describes, running --kernel. The fit scales the workload's non-slab
parameters (its placeholders, or --parameters) by one factor until the simulated figure is within 0.5% of the
measured one: the search 'slubsim validate --calibrate' makes (VALIDATION.md class 4), from --start, at most
12 simulations. It prints measured against simulated, the error and whether it converged, and writes FILE in
the configs/fits format; 'slubsim run --fit FILE' applies it. Measure at a low task count (1, or a few) where
little contends: the fit sets the non-slab time only, and cannot fix the slab costs or the contention.
Exit 0: converged; 1: the file is written with "converged": false (the closest scale); 2: bad input,
nothing written. How to measure: docs/usage.md, "Your machine's non-slab time".

Examples:
  slubsim fit --topology my-box.json --workload mmap2 --nr-task 1 --ops 1243517 --out my-box.mmap2.fit.json
  slubsim fit --topology amd-turin-2s-512t --workload mmap1 --mode thread --from mmap1.csv --out turin.mmap1.json
  slubsim fit --topology my-box.json --workload mmap2 --kernel v6.19 --from /lkp/result/.../stats.json --out fit.json
  slubsim run --topology my-box.json --workload mmap2 --fit my-box.mmap2.fit.json --kernel v6.19,v7.0 --table
)";

const char* kAdviseUsage = R"(slubsim advise: which sheaf capacity and barn limits for this machine and workload

Usage:
  slubsim advise --topology T --workload W [--kernel v7.0] [--nr-task LIST] [--caches LIST]
                 [--capacities LIST] [--max-full-sheaves LIST] [--max-empty-sheaves LIST]
                 [--search climb|grid] [--memory-budget MB] [--no-bounds] --out DIR

It searches the knobs of the runtime-tuning RFC (/sys/kernel/slab/CACHE/sheaf_capacity, max_full_sheaves,
max_empty_sheaves) at each task count on its own: the kernel's defaults, then per cache and knob a climb from
the default (both neighbours, then one value further while each beats the last beyond the confidence
intervals; --search grid runs every value), then each cache's best knobs together. Values the kernel runs
alike (a capacity below the automatic one, a barn limit the barn never reached) are run once. Per task count it
recommends the cheapest setting whose throughput is not beaten beyond the settled windows' 95% confidence
intervals (a gain inside them is a tie, and the kernel's defaults win a tie at equal memory), within
--memory-budget, and re-runs the pick, the runner-up and the defaults at the uncertain inputs' ends: a pick
that changes there is fragile. Each round is a sweep (rerunning resumes). On a cluster, shard K of N
(--shard) searches the task counts K, K+N, ...; join the shards with 'slubsim merge' and run advise again
without --shard for the report (tools/slurm/advise.sh does all of it).

Examples:
  slubsim advise --topology small-2s-8c --workload mmap1 --nr-task 4,8 --out results/advise
  slubsim advise --topology amd-turin-2s-512t --workload mmap1 --nr-task 128,256,384 \
      --caches maple_node,vm_area_struct --memory-budget 4096 --out results/advise-turin
)";

const char* kSweepUsage = R"(slubsim sweep: many jobs described once, run here or split into shards over a cluster

Usage:
  slubsim sweep [FILE] [OPTIONS] --out DIR     run the sweep (the points not already in DIR)
  slubsim sweep [FILE] [OPTIONS] --plan FILE   list its points and run nothing (with --out too: list, then run)
  slubsim sweep [FILE] [OPTIONS] --shard K/N --out DIR_K   run shard K of N; then 'slubsim merge DIR_1 ... --out DIR'

A sweep is the 'run' options with lists for --topology and --workload: every topology x workload is a job, and
each job multiplies kernels x sheaf capacities (variants) x task counts x runs, as 'run' does. FILE holds the same
fields as JSON (docs/sweep-format.md); an option on the command line replaces the file's field. The points have
a fixed order (--plan); shard K of N runs points K, K+N, K+2N, ... A point's result does not depend on which
host, shard or thread ran it, so a merged tree is byte-identical to a local sweep's (host.json files aside).
SIGINT or SIGTERM (Slurm's time limit, scancel) stops after the points in flight; the same command again
finishes the rest.

Examples:
  slubsim sweep configs/sweeps/capacity-small.json --out results/capsweep --jobs 2
  slubsim sweep --topology small-2s-8c,amd-epyc-2s-192c-4n --workload mmap2 --kernel v6.18,v7.0 \
      --sheaf-capacity maple_node=16,32,64 --nr-task 1,50%,100% --runs 3 --out results/maple
  slubsim sweep configs/sweeps/capacity-small.json --plan - | head
  slubsim sweep configs/sweeps/capacity-small.json --shard auto --out $OUT/shards/$SLURM_ARRAY_TASK_ID
  sbatch tools/slurm/sweep.sbatch ...   (tools/slurm/submit.sh submits the array and the merge)
)";

const char* kMergeUsage = R"(slubsim merge: join a sweep's shard directories into one tree

Usage:
  slubsim merge DIR... --out DIR [--home DIR] [--quiet]

Every DIR must hold the same sweep made from the same inputs (checked against this host's configs). Each
finished point is copied once; every variant whose points are all present gets its stats.json, matrix.json and
host.json. Shards of 'slubsim advise --shard' (trees of sweeps, one folder per task count) merge folder by folder.
Exit 0 when the merged sweep is complete, 1 when points are missing (they are listed; rerun their shards and
merge again), 2 for bad input.

Examples:
  slubsim merge results/capsweep/shards/* --out results/capsweep
  slubsim merge shard-a shard-b --out merged --home /opt/slubsim
)";

// The default main job: this experiment, with its fit applied.
constexpr const char* kDefaultExperiment = "t01-hao-li-mmap2";
constexpr const char* kDefaultTopology = "amd-epyc-2s-192c-4n";
// Simulated window of the default job; "" = the experiment file's own (each point's window
// chosen by the settle rule, as its fit was made). A fixed one is printed in the table's header.
constexpr const char* kDefaultDuration = "";
constexpr const char* kDefaultWarmup = "";


int run(std::vector<std::string> args) {
  RunCommand cmd = parse_run_command(std::move(args), default_home());
  if (cmd.help) {
    std::cout << kUsage << "\n" << cmd.help_text << "\n";
    return 0;
  }
  // --fit FILE: the fit's parameters as --set items before the command line's own.
  if (!cmd.fit.empty()) {
    const auto sets = fit_file_sets(cmd.fit, cmd.request);
    cmd.request.sets.insert(cmd.request.sets.begin(), sets.begin(), sets.end());
  }
  const JobRequest& req = cmd.request;
  const std::string& out = cmd.out;
  const bool resume = cmd.resume, table = cmd.table, why = cmd.why, quiet = cmd.quiet;
  if (resume && out.empty()) throw ConfigError("command line", "--resume", "needs --out DIR: the store to finish");
  Job job = resolve_job(req);
  if (!cmd.fit.empty())
    for (auto& n : fit_file_notes(cmd.fit, job)) job.notes.push_back(std::move(n));
  auto progress = [&](const std::string& line) {
    if (!quiet) std::cerr << "slubsim: " << line << "\n";
  };
  // --uncertainty: the factors and what they cost, said before anything runs.
  std::optional<UncertaintyMode> uncertainty;
  std::vector<Factor> factors;
  if (!cmd.uncertainty.empty()) {
    uncertainty = parse_uncertainty(cmd.uncertainty);
    factors = uncertainty_factors(job, *uncertainty);
    const std::size_t points = job_points(job).size(), extra = extra_runs(factors);
    std::cerr << fmt::format("slubsim: --uncertainty {}: {} points, {} for the question and {} at the ends of {} "
                             "factor(s) ({}x the question)\n",
                             cmd.uncertainty, points * (1 + extra), points, points * extra, factors.size(), 1 + extra);
  }
  if (job.trace) progress(describe_trace(*job.trace));
  for (const auto& w : window_warnings(job)) std::cerr << "slubsim: warning: " << w << "\n";
  for (const auto& n : job.notes) std::cerr << "slubsim: note: " << n << "\n";
  // With --out, every finished point goes to the store at once and each variant's files when its
  // last point is in (sim/run/point_store.h); SIGINT and SIGTERM stop after the points in flight.
  std::optional<PointStore> store;
  RunControl control;
  // A store this command creates is removed again if the job turns out to be bad input (a program
  // found to stall when it runs): no partial result files.
  const bool fresh_store = !out.empty() && !std::filesystem::exists(out);
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
    install_stop_handlers("the same command with --resume");
  }
  // With --uncertainty the job runs again at each factor's ends: pass 1 is the question, then a
  // pass per end. Each pass says which it is and its wall time, and the last the total.
  const std::size_t passes = 1 + extra_runs(factors);
  auto pass_progress = [&progress, passes](std::size_t k) {
    return [&progress, passes, k](const std::string& line) {
      progress(passes > 1 ? fmt::format("pass {} of {}: {}", k, passes, line) : line);
    };
  };
  const auto started = std::chrono::steady_clock::now();
  if (passes > 1) pass_progress(1)(fmt::format("the question, {} points", job_points(job).size()));
  JobResult result;
  try {
    result = run_job(job, pass_progress(1), control);
  } catch (const ConfigError&) {
    if (fresh_store) {
      store.reset();
      std::error_code ec;
      std::filesystem::remove_all(out, ec);
    } else if (store) {
      store->flush();
    }
    throw;
  } catch (...) {
    if (store) store->flush();  // the points that did finish stay listed
    throw;
  }
  if (store) store->flush();
  if (!result.complete) {
    std::cerr << fmt::format("slubsim: interrupted: {} of {} points are in {}; the same command with --resume "
                             "finishes the job\n",
                             result.points_done, result.points_total, out);
    return 128 + static_cast<int>(g_signal);
  }
  for (const auto& w : settle_warnings(job, result)) std::cerr << "slubsim: warning: " << w << "\n";
  // Host seconds are not part of the answer: stdout stays a function of the inputs and the seed.
  pass_progress(1)(fmt::format("wall time {:.2f} s", result.wall_total));
  // The same job at each factor's ends: every variant and task count at the same seed.
  std::vector<std::array<std::optional<JobResult>, 2>> ends(factors.size());
  std::size_t pass = 1;
  for (std::size_t f = 0; f < factors.size(); ++f)
    for (int e = 0; e < 2; ++e) {
      if (e == 0 ? !factors[f].run_low() : !factors[f].run_high()) continue;
      JobRequest at = req;
      for (const auto& set : e == 0 ? factors[f].low : factors[f].high) at.sets.push_back(set);
      const auto say = pass_progress(++pass);
      const Job end_job = resolve_job(at);
      say(fmt::format("{} at its {} end, {} points", factors[f].name, e == 0 ? "low" : "high",
                      job_points(end_job).size()));
      RunControl end_control;  // the ends are not stored: a stop ends the command
      end_control.stop = &g_stop;
      JobResult r = run_job(end_job, say, end_control);
      if (!r.complete) {
        std::cerr << "slubsim: interrupted: the --uncertainty runs are not finished (they are not stored: run the "
                     "command again)\n";
        return 128 + static_cast<int>(g_signal);
      }
      say(fmt::format("wall time {:.2f} s", r.wall_total));
      ends[f][static_cast<std::size_t>(e)] = std::move(r);
    }
  if (passes > 1)
    progress(fmt::format("wall time {:.2f} s in all, {} passes",
                         std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), passes));
  if (table)
    std::cout << format_table(job, result) << record_lines(job, comparisons_of(job));
  else if (out.empty())
    std::cout << stdout_stats(job, result).dump(2) << "\n";
  if (uncertainty) {
    auto intervals = delta_intervals(job, result, factors, ends);
    const auto widths = record_widths(job.request.home);
    add_record(intervals, widths);
    std::cout << "\n" << format_uncertainty(job, *uncertainty, factors, intervals, widths);
    if (!out.empty())
      write_file_atomically((std::filesystem::path(out) / "uncertainty.json").string(),
                            uncertainty_json(job, *uncertainty, factors, intervals, widths).dump(1) + "\n");
  }
  if (why) std::cout << "\n" << format_why(job, result, out);
  return 0;
}

// --plan FILE: a sweep's points to FILE, or to stdout for "-".
void write_plan(const Sweep& s, const std::string& file) {
  const std::string text = sweep_plan(s).dump(1) + "\n";
  if (file == "-")
    std::cout << text;
  else
    write_file_atomically(file, text);
}

int sweep(std::vector<std::string> args) {
  SweepCommand cmd = parse_sweep_command(std::move(args), default_home());
  if (cmd.help) {
    std::cout << kSweepUsage << "\n" << cmd.help_text << "\n";
    return 0;
  }
  if (cmd.out.empty() && cmd.plan.empty())
    throw ConfigError("command line", "--out", "a sweep needs --out DIR to run (or --plan FILE to list its points)");
  const int jobs = cmd.request.base.jobs;
  if (jobs < 0 || jobs > 1024) throw ConfigError("command line", "--jobs", "must be between 0 and 1024");
  Shard shard;
  if (!cmd.shard.empty()) shard = parse_shard(cmd.shard, [](const char* name) { return std::getenv(name); });
  const Sweep s = resolve_sweep(cmd.request);
  std::vector<std::string> warned;
  for (const auto& j : s.jobs) {
    for (const auto& w : window_warnings(j.job))
      if (std::find(warned.begin(), warned.end(), w) == warned.end()) {
        std::cerr << "slubsim: warning: " << w << "\n";
        warned.push_back(w);
      }
    for (const auto& n : j.job.notes)
      if (std::find(warned.begin(), warned.end(), n) == warned.end()) {
        std::cerr << "slubsim: note: " << n << "\n";
        warned.push_back(n);
      }
  }
  if (!cmd.plan.empty()) {
    write_plan(s, cmd.plan);
    if (!cmd.quiet && cmd.plan != "-")
      std::cerr << fmt::format("slubsim: {} points in {} jobs: plan in {}\n", s.points.size(), s.jobs.size(), cmd.plan);
    if (cmd.out.empty()) return 0;
  }
  install_stop_handlers("the same command again");
  const SweepOutcome o = run_sweep(s, cmd.out, shard, jobs, cmd.quiet, &g_stop);
  const std::string which = shard.n > 1 ? fmt::format("shard {}", shard.text()) : std::string("sweep");
  if (!o.complete) {
    std::cerr << fmt::format("slubsim: interrupted: {} of the {}'s {} points are in {}; the same command again "
                             "finishes it\n",
                             o.points_done, which, o.points_total, cmd.out);
    return 128 + static_cast<int>(g_signal);
  }
  if (!cmd.quiet) {
    std::cerr << fmt::format("slubsim: {}: {} points in {} ({} were on disk)\n", which, o.points_total, cmd.out,
                             o.points_loaded);
    if (shard.n > 1) std::cerr << "slubsim: join the shards with: slubsim merge SHARD_DIR... --out DIR\n";
  }
  return 0;
}

int advise(std::vector<std::string> args) {
  AdviseCommand cmd = parse_advise_command(std::move(args), default_home());
  if (cmd.help) {
    std::cout << kAdviseUsage << "\n" << cmd.help_text << "\n";
    return 0;
  }
  if (cmd.out.empty())
    throw ConfigError("command line", "--out",
                      "advise needs --out DIR: the search's folders and the advice are written there");
  const int jobs = cmd.request.base.jobs;
  if (jobs < 0 || jobs > 1024) throw ConfigError("command line", "--jobs", "must be between 0 and 1024");
  Shard shard;
  if (!cmd.shard.empty()) shard = parse_shard(cmd.shard, [](const char* name) { return std::getenv(name); });
  const AdvisePlan plan = resolve_advise(cmd.request);
  if (!cmd.plan.empty()) {
    // Which shard searches which task count: a task count's search runs in rounds, so it is the
    // unit of a cluster job; as many shards as task counts keeps each busy.
    json rows = json::array();
    for (std::size_t r = 0; r < plan.nr_tasks.size(); ++r)
      rows.push_back({{"nr_task", plan.nr_tasks[r]}, {"folder", row_dir(plan.nr_tasks[r])}, {"shard_of_n", r + 1}});
    const json p = {{"format", "slubsim-advise-plan-1"}, {"task_counts", plan.nr_tasks.size()},
                    {"note", "shard K of N searches the task counts K, K+N, ... (shard_of_n is K when N is the "
                             "number of task counts); merge the shards' OUT folders and run advise without --shard"},
                    {"rows", rows}};
    if (cmd.plan == "-") std::cout << p.dump(1) << "\n";
    else write_file_atomically(cmd.plan, p.dump(1) + "\n");
    return 0;
  }
  install_stop_handlers("the same command again");
  std::string table;
  if (!run_advise(plan, cmd.out, shard, jobs, cmd.quiet, &g_stop, &table)) return 128 + static_cast<int>(g_signal);
  std::cout << table;
  return 0;
}

int merge(std::vector<std::string> args) {
  refuse_placeholders(args);
  std::vector<std::string> dirs;
  std::string out, home = default_home();
  bool quiet = false;
  po::options_description d("Options of 'slubsim merge'");
  d.add_options()
      ("help,h", "this text")
      ("dir", po::value(&dirs)->composing(), "a shard's output directory (positional, repeatable); e.g. shards/1 shards/2")
      ("out", po::value(&out), "the merged tree (may be one of the DIRs); e.g. --out results/capsweep")
      ("home", po::value(&home)->default_value(home),
       "where configs/ and workloads/ live, to resolve the sweep again and check its inputs; e.g. --home /opt/slubsim")
      ("quiet", po::bool_switch(&quiet), "no summary on stderr; e.g. --quiet");
  po::positional_options_description pos;
  pos.add("dir", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(d).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw ConfigError("command line", "", option_error(e, d, "merge"));
  }
  if (vm.count("help")) {
    std::cout << kMergeUsage << "\n" << d << "\n";
    return 0;
  }
  if (out.empty()) throw ConfigError("command line", "--out", "merge needs --out DIR");
  if (dirs.empty()) throw ConfigError("command line", "DIR", "merge needs at least one shard directory");
  const bool tree = std::all_of(dirs.begin(), dirs.end(), [](const std::string& d) { return is_sweep_tree(d); });
  const MergeOutcome o = tree ? merge_trees(dirs, out, home) : merge_sweeps(dirs, out, home);
  if (!o.missing.empty()) {
    std::string ids;
    for (const auto& id : o.missing) ids += "\n  " + id;
    std::cerr << fmt::format("slubsim: merge: {} of {} points are missing ({} of {} variants complete); the first:{}\n"
                             "rerun the shards that hold them (the same 'slubsim sweep ... --shard K/N --out DIR') "
                             "and merge again\n",
                             o.points_total - o.points_present, o.points_total, o.variants_complete,
                             o.variants_total, ids);
    return 1;
  }
  if (!quiet)
    std::cerr << fmt::format("slubsim: merge: {} points, {} variants, from {} directories into {}\n", o.points_total,
                             o.variants_total, dirs.size(), out);
  return 0;
}

po::options_description validate_options(ValidateOptions& o) {
  po::options_description d("Options of 'slubsim validate'");
  d.add_options()
      ("help,h", "this text")
      ("experiments", po::value(&o.experiments),
       "a directory of experiment files or one FILE (default: <home>/configs/experiments; format: docs/experiment-format.md); e.g. --experiments tests/data/experiments")
      ("only", po::value(&o.only), "run only these experiments: ID[,ID...] (a partial run: into results/partial unless --out is given, and its scoreboard is OUT/scoreboard.partial.{md,json}, so a full scoreboard is never replaced); e.g. --only t01-hao-li-mmap2")
      ("out", po::value(&o.out)->default_value(o.out),
       "write OUT/<id>/<topology>/<variant>/{stats,matrix,host}.json, OUT/scoreboard.md and OUT/scoreboard.json (the committed results by default; with --only: results/partial and scoreboard.partial.*); e.g. --out results/validate")
      ("fits", po::value(&o.fits),
       "where calibration fits are read and written (default: <home>/configs/fits); e.g. --fits /tmp/fits")
      ("jobs", po::value(&o.jobs)->default_value(o.jobs), "host threads (0 = one per host CPU); e.g. --jobs 2")
      ("calibrate", po::bool_switch(&o.calibrate),
       "fit each experiment's non-slab time (its 'fit': baseline variant, lowest task count) and write configs/fits/<id>.<topology>.json instead of scoring")
      ("validate", po::bool_switch(&o.slub_validate),
       "SLUB validation mode in every simulation, as 'run --validate': double frees and foreign pointers are errors and every object is checked to be in one place; results are the same")
      ("no-write", po::bool_switch(),
       "print only: write no result, scoreboard or fit file")
      ("set", po::value(&o.sets)->composing(),
       "KEY=VALUE: a what-if for the whole scoreboard: change a model parameter in every simulation, as 'run --set' does; repeatable; needs an explicit --out, and --fits with --calibrate, so the committed results and fits stay as they are; e.g. --set costs.qspinlock.contender_rmw=true --out /tmp/whatif")
      ("warmup", po::value(&o.warmup),
       "replace every experiment's warm-up (a what-if, with the same guards as --set); e.g. --warmup 80ms")
      ("duration", po::value(&o.duration),
       "replace every experiment's measured window (a what-if, as --warmup); e.g. --duration 48ms")
      ("uncertainty", po::value(&o.uncertainty),
       "quick|full: every scored cell also gets its 90% interval over the inputs the model does not know, from the "
       "same runs at each factor's ends ('slubsim run --help'); the scoreboard adds coverage, median width, "
       "undetermined cells and the structural misses; e.g. --uncertainty quick")
      ("interval", po::value(&o.interval),
       "add the interval series to every result, as 'run --interval' does (needs an explicit --out, as --warmup); e.g. --interval 4ms")
      ("shard", po::value(&o.shard),
       "K/N, auto or auto/N: run only shard K of N of the plan's points (each variant's task counts in order; points K, K+N, ...) into --points DIR, and score nothing; 'auto' takes K and N from a Slurm job array, as 'sweep --shard' does; e.g. --shard 2/4 --points $OUT/shards/2")
      ("points", po::value<std::string>(),
       "DIR[,DIR...]: points already simulated (by shards, or an earlier run) are read from each DIR and not run again; the first DIR also keeps new ones when it is the only one or with --shard. Scoring the shards' DIRs gives the same results and scoreboard as one local validate; e.g. --points $OUT/shards/1,$OUT/shards/2")
      ("plan", po::value(&o.plan),
       "FILE or -: list the plan's points (each variant's task counts, in the order shards take them) as JSON and run nothing; e.g. --plan -")
      ("quiet", po::bool_switch(&o.quiet), "no progress lines on stderr")
      ("home", po::value(&o.home)->default_value(o.home),
       "where configs/ and workloads/ live (default: the source tree, or $SLUBSIM_HOME)");
  return d;
}

// ARGS against DESC into VM; false (the error printed as the command's) for a bad command line.
bool parse_command_line(const std::vector<std::string>& args, const po::options_description& desc,
                        po::variables_map& vm, const char* command) {
  try {
    po::store(po::command_line_parser(args).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "slubsim: error: command line: " << option_error(e, desc, command) << "\n";
    return false;
  }
  return true;
}

int validate(const std::vector<std::string>& args) {
  refuse_placeholders(args);
  ValidateOptions o;
  o.home = default_home();
  auto desc = validate_options(o);
  po::variables_map vm;
  if (!parse_command_line(args, desc, vm, "validate")) return kExitBadInput;
  if (vm.count("help")) {
    std::cout << kUsage << "\n" << desc << "\n";
    return 0;
  }
  o.write = !vm["no-write"].as<bool>();
  if (vm.count("points")) {
    std::string list = vm["points"].as<std::string>();
    for (std::size_t at = 0; at <= list.size();) {
      const std::size_t comma = std::min(list.find(',', at), list.size());
      if (comma == at) throw ConfigError("command line", "--points", "an empty directory name in '" + list + "'");
      o.points.push_back(list.substr(at, comma - at));
      at = comma + 1;
    }
    refuse_repeats(o.points, "--points");
  }
  if (!o.uncertainty.empty()) {
    parse_uncertainty(o.uncertainty);  // a bad mode is refused before anything runs
    if (o.calibrate) throw ConfigError("command line", "--uncertainty", "scores intervals; --calibrate fits");
    if (!o.shard.empty()) throw ConfigError("command line", "--uncertainty", "runs on one host, not as a shard");
  }
  if (!o.shard.empty() && o.calibrate)
    throw ConfigError("command line", "--shard", "shards run validate's points; --calibrate runs on one host");
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
  // The committed results are written only on purpose: a partial run goes to results/partial
  // unless --out says otherwise, and never writes OUT/scoreboard.{md,json} (scoreboard.partial.*).
  if (!o.only.empty() && vm["out"].defaulted()) o.out = "results/partial";
  if (o.experiments.empty()) o.experiments = o.home + "/configs/experiments";
  if (o.fits.empty()) o.fits = o.home + "/configs/fits";
  return validate_command(o);
}

// `slubsim fit`: read the figure, check everything, search, then write the fit file whole.
int fit(std::vector<std::string> args) {
  FitCommand cmd = parse_fit_command(std::move(args), default_home());
  if (cmd.help) {
    std::cout << kFitUsage << "\n" << cmd.help_text << "\n";
    return 0;
  }
  FitMeasuredRequest r;
  r.job = cmd.request;
  r.start = cmd.start;
  r.out = cmd.out;
  r.parameters = cmd.parameters.empty() ? std::vector<std::string>{} : split_list(cmd.parameters);
  if (r.job.topology.empty())
    throw ConfigError("command line", "--topology",
                      "needs the machine the figure was measured on: a preset NAME or a FILE (slubsim import, probe)");
  if (cmd.out.empty()) throw ConfigError("command line", "--out", "needs the fit file to write; e.g. --out box.mmap2.fit.json");
  if (cmd.ops.empty() == cmd.from.empty())
    throw ConfigError("command line", cmd.ops.empty() ? "--ops" : "--from",
                      "give the measured figure as --ops OPS or --from FILE (one of them)");
  int nr_task = 0;
  if (!r.job.nr_task.empty()) {
    const std::string& n = r.job.nr_task;
    if (n.size() > 6 || n.find_first_not_of("0123456789") != std::string::npos || std::stoi(n) < 1)
      throw ConfigError("command line", "--nr-task",
                        fmt::format("'{}' is not one task count: the fit is made at the one the figure was measured "
                                    "at (the binary's -t N)",
                                    n));
    nr_task = std::stoi(n);
  }
  if (!cmd.ops.empty()) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(cmd.ops, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != cmd.ops.size())
      throw ConfigError("command line", "--ops", fmt::format("'{}' is not a number of ops/s", cmd.ops));
    if (!(v > 0) || !std::isfinite(v))
      throw ConfigError("command line", "--ops",
                        fmt::format("is {}: the measured figure is a positive number of ops/s (will-it-scale.N."
                                    "processes, the total over the tasks)",
                                    cmd.ops));
    if (nr_task == 0)
      throw ConfigError("command line", "--nr-task", "needed with --ops: the task count the figure was measured at");
    r.figure = {v, nr_task, fmt::format("--ops {} at {} task{}", cmd.ops, nr_task, nr_task == 1 ? "" : "s")};
  } else {
    r.figure = read_measured_figure(cmd.from, r.job.mode, nr_task);
    if (nr_task == 0)
      std::cerr << fmt::format("slubsim: fit: {} tasks, as {} says\n", r.figure.nr_task, cmd.from);
  }
  r.job.nr_task = std::to_string(r.figure.nr_task);
  const bool quiet = cmd.quiet;
  const FitMeasured m = fit_measured(r, [quiet](const std::string& line) {
    if (!quiet || line.rfind("warning: ", 0) == 0) std::cerr << "slubsim: " << line << "\n";  // warnings always
  });
  std::cout << format_fit_measured(m, r);
  write_file_atomically(r.out, fit_json(m.fit).dump(2) + "\n");
  std::cout << fmt::format("wrote {}\napply it: slubsim run --topology {} --workload {}{} --fit {} ...\n", r.out,
                           r.job.topology, r.job.workload, r.job.mode == "process" ? "" : " --mode " + r.job.mode,
                           r.out);
  return m.fit.converged ? 0 : 1;
}

const char* kInputsUsage = R"(slubsim inputs: the inputs of a job that are not facts of the kernel

Usage:
  slubsim inputs --topology T --workload W [--kernel K] [--set KEY=VALUE ...] [--json]

Every figure the job reads from its topology, cost model and workload that is not a fact of the
kernel: the machine's cache-line latencies, the cost model's constants, the workload's non-slab
times. Each with its value, its range where one is stated (or, for a placeholder non-slab time,
the span of every fit of the workload in configs/fits, this machine's first), its kind
(estimate, placeholder, sourced, set, measured, fitted, copied) and the sources of both. advise re-runs its picks at the ranges' ends; --set KEY=VALUE (the names
printed) replaces one.

Examples:
  slubsim inputs --topology amd-turin-2s-512t --workload mmap1 --kernel v7.0
  slubsim inputs --topology intel-gnr-2s-344t-4n --workload mmap2 --json
)";

int inputs(std::vector<std::string> args) {
  InputsCommand cmd = parse_inputs_command(std::move(args), default_home());
  if (cmd.help) {
    std::cout << kInputsUsage << "\n" << cmd.help_text << "\n";
    return 0;
  }
  const Job job = resolve_job(cmd.request);
  const auto list = uncertain_inputs(job);
  if (cmd.json) std::cout << inputs_json(job, list).dump(2) << "\n";
  else std::cout << format_inputs(job, list);
  return 0;
}

const char* kImportUsage = R"(slubsim import: a topology (docs/topology-format.md) from hwloc

Usage:
  slubsim import --hwloc FILE.xml --latencies-from PRESET --name NAME --out FILE.json
  slubsim import --this-machine --latencies-from PRESET --name NAME --out FILE.json

The layout (sockets, NUMA nodes with their memory, cores and SMT siblings, last-level-cache
domains, CPU numbers, the firmware's NUMA distances) comes from hwloc: an lstopo XML taken on any
box ('lstopo --of xml > box.xml', no slubsim needed there), or this machine through libhwloc.
hwloc knows no cache-line transfer times: the latency classes are copied from PRESET, the
closest measured part, each marked as copied with its source and range ('slubsim inputs' lists
them). The file is checked as --topology would check it before it is written.

Examples:
  slubsim import --hwloc box.xml --latencies-from amd-turin-2s-512t --name my-turin --out my-turin.json
  slubsim import --this-machine --latencies-from small-2s-8c --name here --out here.json
)";

int import_topology(std::vector<std::string> args) {
  refuse_placeholders(args);
  std::string hwloc_file, latencies, name, out, description;
  bool this_machine = false;
  po::options_description d("Options of 'slubsim import'");
  d.add_options()("help,h", "this text")
      ("hwloc", po::value(&hwloc_file), "an lstopo XML (lstopo --of xml); e.g. --hwloc box.xml")
      ("this-machine", po::bool_switch(&this_machine), "read this machine through libhwloc instead")
      ("latencies-from", po::value(&latencies), "the preset (or topology file) whose latency classes are copied; e.g. --latencies-from amd-turin-2s-512t")
      ("name", po::value(&name), "the topology's name; e.g. --name my-turin")
      ("description", po::value(&description), "free text (default: the shape, said)")
      ("out", po::value(&out), "the topology JSON to write; e.g. --out my-turin.json");
  po::variables_map vm;
  if (!parse_command_line(args, d, vm, "import")) return kExitBadInput;
  if (vm.count("help")) {
    std::cout << kImportUsage << "\n" << d << "\n";
    return 0;
  }
  if (this_machine == !hwloc_file.empty())
    throw ConfigError("command line", "--hwloc", "give an lstopo XML with --hwloc FILE, or --this-machine (one of them)");
  if (latencies.empty()) throw ConfigError("command line", "--latencies-from", "needs a preset to copy the latency classes from");
  if (name.empty()) throw ConfigError("command line", "--name", "needs the topology's name");
  if (out.empty()) throw ConfigError("command line", "--out", "needs the file to write");
  ImportRequest r;
  r.name = name;
  r.description = description;
  r.latencies_name = latencies;
  r.latencies_file = resolve_config(default_home(), "configs/topologies", latencies, "--latencies-from");
  const json doc = topology_document(read_hwloc(hwloc_file), r);
  write_file_atomically(out, doc.dump(2) + "\n");
  std::cerr << fmt::format("slubsim: wrote {} ({})\n", out, doc.at("description").get<std::string>());
  return 0;
}

const char* kProbeUsage = R"(slubsim probe: measure this machine's cache-line transfers and lock hand-offs

Usage:
  slubsim probe --latencies-from PRESET --name NAME --out FILE.json [--pairs-per-class K]

Reads this machine's layout through hwloc (as 'slubsim import --this-machine'), then measures, for
each distance class the layout has, the one-way cache-line transfer time (two pinned threads
passing a line by compare-and-swap) on up to K CPU pairs spread over the machine, and the hand-off
time of a contended queued (MCS) spinlock with 2, 4, 8, 16 waiters of the class. Each measured
class is written as measured (the median, its 5th-95th percentiles as its range, the host, date
and sample count); the classes it cannot measure here keep PRESET's figures, marked as copied,
and are listed with the reason. Hand-offs go to lock_handoff_ns, a check of the model, not an
input. SIGINT or SIGTERM stops it at the next sample and writes nothing. How:
docs/topology-format.md, "Measured by slubsim probe".

Examples:
  slubsim probe --latencies-from amd-turin-2s-512t --name my-turin --out my-turin.json
)";

volatile std::sig_atomic_t g_probe_signal = 0;
extern "C" void on_probe_signal(int sig) {
  g_probe_signal = sig;
  g_stop.store(true);
  std::signal(sig, SIG_DFL);  // a second signal ends it at once
}

int probe(std::vector<std::string> args) {
  refuse_placeholders(args);
  std::string latencies, name, out;
  int per_class = 8, samples = 9;
  po::options_description d("Options of 'slubsim probe'");
  d.add_options()("help,h", "this text")
      ("latencies-from", po::value(&latencies), "the preset whose figures the classes not measured here keep; e.g. --latencies-from amd-turin-2s-512t")
      ("name", po::value(&name), "the topology's name; e.g. --name my-turin")
      ("out", po::value(&out), "the topology JSON to write; e.g. --out my-turin.json")
      ("pairs-per-class", po::value(&per_class)->default_value(per_class), "CPU pairs (and waiter sets) per class at most; e.g. --pairs-per-class 16")
      ("samples", po::value(&samples)->default_value(samples), "samples per pair (each 2000 round trips); e.g. --samples 21");
  po::variables_map vm;
  if (!parse_command_line(args, d, vm, "probe")) return kExitBadInput;
  if (vm.count("help")) {
    std::cout << kProbeUsage << "\n" << d << "\n";
    return 0;
  }
  if (latencies.empty()) throw ConfigError("command line", "--latencies-from", "needs a preset for the classes not measured here");
  if (name.empty()) throw ConfigError("command line", "--name", "needs the topology's name");
  if (out.empty()) throw ConfigError("command line", "--out", "needs the file to write");
  if (per_class < 1 || per_class > 1024) throw ConfigError("command line", "--pairs-per-class", "must be between 1 and 1024");
  if (samples < 1 || samples > 1000000) throw ConfigError("command line", "--samples", "must be between 1 and 1000000");
  ImportRequest r;
  r.name = name;
  r.latencies_name = latencies;
  r.latencies_file = resolve_config(default_home(), "configs/topologies", latencies, "--latencies-from");
  json doc = topology_document(read_hwloc(""), r);
  const Machine m = parse_topology(doc, "this machine");
  std::signal(SIGINT, on_probe_signal);
  std::signal(SIGTERM, on_probe_signal);
  ProbeOptions o;
  o.per_class = per_class;
  o.samples = samples;
  o.stop = &g_stop;
  std::vector<ProbeClassResult> results;
  try {
    results = run_probe(m, probe_plan(m, per_class), o);
  } catch (const std::runtime_error&) {
    if (!g_stop.load()) throw;
    std::cerr << "slubsim: probe: stopped; nothing written\n";
    return 128 + static_cast<int>(g_probe_signal);
  }
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  const auto round1 = [](double v) { return std::round(10 * v) / 10; };
  json handoffs = json::object();
  std::cout << fmt::format("slubsim probe on {} ({}), {} CPUs:\n", host, date, m.nr_cpus);
  for (const auto& res : results) {
    const char* cls = distance_name(res.cls);
    if (!res.transfer) {
      std::cout << fmt::format("  {:<26} not measured: {}; keeps {}'s figure, marked copied\n", cls, res.not_measured, latencies);
      continue;
    }
    const ProbeFigure& f = *res.transfer;
    const double lo = std::max(0.1, round1(f.p5_ns)), value = std::max(lo, round1(f.median_ns)), hi = std::max(value, round1(f.p95_ns));
    doc["latency_ns"][cls] = {
        {"value", value},
        {"source", fmt::format("measured by slubsim probe on {}, {}, {} samples over {} CPU pairs: one-way transfer, "
                               "half a compare-and-swap round trip between two pinned threads{}",
                               host, date, f.samples, res.pairs, res.note.empty() ? "" : "; " + res.note)},
        {"range", {lo, hi}},
        {"range_source", "5th to 95th percentile of the probe's samples"}};
    std::cout << fmt::format("  {:<26} {:>7.1f} ns  [{:.1f}, {:.1f}]  {} samples, {} pairs\n", cls, value, lo, hi, f.samples, res.pairs);
    json per = json::object();
    for (const auto& [waiters, h] : res.handoff) {
      per[std::to_string(waiters)] = {
          {"value", std::max(0.1, round1(h.median_ns))},
          {"source", fmt::format("a check, not a model input: measured by slubsim probe on {}, {}, {} samples: ns per "
                                 "acquisition of an MCS lock taken in a loop by {} pinned threads, an increment "
                                 "under it", host, date, h.samples, waiters)}};
      std::cout << fmt::format("  {:<26} hand-off with {:>2} waiters: {:.1f} ns\n", "", waiters, h.median_ns);
    }
    if (!per.empty()) handoffs[cls] = per;
  }
  if (!handoffs.empty()) doc["lock_handoff_ns"] = handoffs;
  doc["source"] = doc["source"].get<std::string>() + " Then measured by slubsim probe: each class it measured says so.";
  parse_topology(doc, out);  // what is written loads
  write_file_atomically(out, doc.dump(2) + "\n");
  std::cerr << fmt::format("slubsim: wrote {}\n", out);
  return 0;
}

// The main job takes the options that change how it runs, not what: host threads and quiet.
int default_job(const std::vector<std::string>& args) {
  refuse_placeholders(args);
  ValidateOptions o;
  o.home = default_home();
  o.fits = o.home + "/configs/fits";
  bool quiet = false;
  po::options_description desc("The main job's options (slubsim [--jobs N] [--quiet])");
  desc.add_options()
      ("jobs,j", po::value(&o.jobs)->default_value(0),
       "host threads simulating points at once (0 = one per host CPU); e.g. --jobs 2")
      ("quiet,q", po::bool_switch(&quiet), "no progress meter");
  po::variables_map vm;
  if (!parse_command_line(args, desc, vm, "")) return kExitBadInput;
  if (o.jobs < 0 || o.jobs > 1024) throw ConfigError("command line", "--jobs", "must be between 0 and 1024");
  o.quiet = quiet || !isatty(STDERR_FILENO);  // progress on a terminal only
  o.write = false;
  o.duration = kDefaultDuration;
  o.warmup = kDefaultWarmup;
  o.topology = kDefaultTopology;
  std::cerr << "slubsim: the main job: experiment " << kDefaultExperiment << " (T01), three kernels x three task counts "
            << "on " << kDefaultTopology << ", the 2-socket 4-node 192-CPU AMD box its author named; writes nothing "
               "(the experiment's other reading: slubsim validate --only t01-hao-li-mmap2; 'slubsim --help' for the rest)\n";
  return experiment_table_command(o.home + "/configs/experiments/" + kDefaultExperiment + ".json", o);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.empty()) return default_job(args);
    if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
      std::cout << kUsage << "\nRun 'slubsim run --help' for every option.\n";
      return 0;
    }
    if (args[0] == "--version" || args[0] == "-V" || args[0] == "version") {
      std::cout << fmt::format("slubsim {} (commit {})\n", kVersion, kCommit);
      return 0;
    }
    if (args[0].size() > 1 && args[0][0] == '-') return default_job(args);  // options of the main job
    if (args[0] == "run") return run({args.begin() + 1, args.end()});
    if (args[0] == "validate") return validate({args.begin() + 1, args.end()});
    if (args[0] == "sweep") return sweep({args.begin() + 1, args.end()});
    if (args[0] == "merge") return merge({args.begin() + 1, args.end()});
    if (args[0] == "advise") return advise({args.begin() + 1, args.end()});
    if (args[0] == "inputs") return inputs({args.begin() + 1, args.end()});
    if (args[0] == "fit") return fit({args.begin() + 1, args.end()});
    if (args[0] == "import") return import_topology({args.begin() + 1, args.end()});
    if (args[0] == "probe") return probe({args.begin() + 1, args.end()});
    std::cerr << fmt::format("slubsim: error: command line: unknown command '{}'{}\n{}", args[0],
                             did_you_mean(args[0], {"run", "validate", "sweep", "merge", "advise", "inputs", "fit", "import", "probe", "help", "version"}),
                             kUsage);
    return kExitBadInput;
  } catch (const ConfigError& e) {
    // One line per problem: a document's independent mistakes come together (ConfigErrors).
    for (const auto& p : e.problems()) std::cerr << "slubsim: error: " << describe(p) << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "slubsim: error: " << e.what() << "\n";
    return 1;
  }
}
