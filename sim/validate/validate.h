// `slubsim validate`: run every experiment's variants on every topology, write their lkp
// results, and score the published cells (VALIDATION.md); `--calibrate` fits instead.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/validate/experiment.h"
#include "sim/validate/fit.h"
#include "sim/run/job.h"
#include "sim/run/shard.h"
#include "sim/validate/score.h"

namespace slubsim {

struct ValidateOptions {
  std::string experiments;  // DIR or FILE
  std::string only;
  std::string out = "results";
  std::string fits;  // configs/fits
  std::string home;
  int jobs = 0;  // host threads, 0 = one per host CPU
  bool calibrate = false;
  bool write = true;
  bool quiet = false;
  // SLUB validation mode in every simulation (run --validate): checks only, results unchanged.
  bool slub_validate = false;
  // Replace every experiment's duration / warmup (the default main job's short form); "" = keep.
  std::string duration, warmup;
  // The interval series in every run (run --interval); "" = none.
  std::string interval;
  // --set KEY=VALUE for every simulation, after the experiment's and variant's own sets and the
  // fit (a what-if on the whole scoreboard); the scoreboard says so at its top.
  std::vector<std::string> sets;
  // Shard K of N (sim/run/shard.h; "" = all): run only the plan's units K, K+N, ... into the
  // first --points directory, and score nothing.
  std::string shard;
  // Directories of points (each variant's store at DIR/<id>/<topology>/<variant>/, as a shard
  // writes them): a point found in any is not run again. The first also keeps new points when it
  // is the only one, or with --shard.
  std::vector<std::string> points;
  // --plan FILE ("-": stdout): list the plan's units (validate_plan) and run nothing.
  std::string plan;
  // --uncertainty quick|full ("" = none): every scored cell also gets its 90% interval over the
  // inputs the model does not know, from the same runs at each factor's ends (sim/trust/).
  std::string uncertainty;
  // experiment_table_command only: keep just this topology of the experiment ("" or absent from
  // it: all of them; the main job names T01's AMD reading, a test layout has its own machine).
  std::string topology;
};

using Progress = std::function<void(const std::string&)>;

// One simulated variant of an experiment on one topology.
struct VariantRun {
  const Experiment* experiment = nullptr;
  std::size_t topology = 0;  // index into experiment->topologies
  const ExperimentVariant* variant = nullptr;
  Job job;
  JobResult result;
  json stats;  // what stats.json holds
};

// The job request of a variant: the experiment's workload, rows and settings, the variant's
// kernel, patches, capacity and sets, then the fit's parameters.
JobRequest variant_request(const Experiment& e, const ExperimentTopology& t, const ExperimentVariant& v,
                           const std::vector<std::string>& fit_sets, const ValidateOptions& o);

// Resolve every non-excluded variant of every experiment on every topology (reading fits unless
// calibrating). Throws ConfigError naming the experiment file on bad input; runs nothing.
std::vector<VariantRun> plan_runs(const std::vector<Experiment>& experiments, const ValidateOptions& o,
                                  std::vector<std::vector<std::optional<Fit>>>& fits);

// Run the jobs: every (job, row) is one unit on o.jobs host threads, the units in plan order
// (variant run, then row). Units whose points are under o.points are not run; with a shard, only
// its units are run (into o.points[0]) and nothing is assembled. Output is independent of the
// thread count, the shards and which points were found on disk. Returns whether every unit's
// points are now present (always, without a shard). `pass`: which pass of several this is, for
// the progress line ("" = the only one).
bool run_all(std::vector<VariantRun>& runs, const ValidateOptions& o, const std::optional<Shard>& shard,
             const std::string& pass = "");

// The units run_all runs, in plan order (shard K of N runs units K, K+N, ...): each variant's
// task counts, with its experiment, topology and runs.
json validate_plan(const std::vector<VariantRun>& runs);

// Score one experiment from its runs (those of `runs` whose experiment is e).
// only: score that topology alone (the others' scores are left empty).
ExperimentScore score_experiment(const Experiment& e, const std::vector<VariantRun>& runs,
                                 const std::vector<std::optional<Fit>>& fits,
                                 std::optional<std::size_t> only = std::nullopt);

// The metric of a variant's stats: a missing key is 0 (lkp drops keys that are 0 in every run).
double metric_value(const json& stats, const std::string& metric);
// One simulation of a class-4 fit's search (validate --calibrate, slubsim fit): run the job (its
// one variant at the fit's task count) and read the metric from its stats.
double simulate_metric(const Job& job, const std::string& metric);

// validate --uncertainty: run every experiment's variants again at each uncertainty factor's
// ends (sim/trust/uncertainty.h, factors from each topology's baseline job) and give every
// scored cell its interval; the experiments' totals are recomputed. Passes 2 and 3 of
// kUncertaintyPasses: the class-4 fits again at the ends, then the points there.
// validate --uncertainty runs in passes: the scored points, the class-4 fits again at the factors'
// ends, the points at the ends. Each names itself ("pass 2 of 3") on stderr with its wall time.
inline constexpr int kUncertaintyPasses = 3;
void add_intervals(const std::vector<Experiment>& experiments, const std::vector<VariantRun>& runs,
                   const std::vector<std::vector<std::optional<Fit>>>& fits, const ValidateOptions& o,
                   std::vector<ExperimentScore>& scores);

// `slubsim validate` and `slubsim validate --calibrate`: the whole command; returns the exit code.
int validate_command(const ValidateOptions& o);

// The default main job: one experiment (its fit applied), printed as simulated vs published.
int experiment_table_command(const std::string& experiment_file, const ValidateOptions& o);

}  // namespace slubsim
