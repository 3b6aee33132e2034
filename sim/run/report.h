// Results as lkp-tests writes them (workloads-and-lkp.md §3.2-3.3), plus slubsim's own keys.
//
// Per run, one flat object: will-it-scale.<N>.processes / .processes_idle (or .threads /
// .threads_idle in thread mode) per row, per_process_ops = floor(mean over rows of ops/N),
// workload = sum over rows; lock_stat.<class>.<field> over the whole job (as lkp's lock_stat
// monitor covers the whole run), per instance where a class has few; sim.* bookkeeping.
// Keys whose values are zero in every run are dropped, as lkp does.
#pragma once
#include <string>
#include <vector>

#include "sim/config/config.h"
#include "sim/run/job.h"

namespace slubsim {

// Keys of one run (all rows of it). Zero values are kept here; dropping happens across runs.
json lkp_run_stats(const std::vector<RunResult>& rows, Mode mode);

// matrix.json: one array per key, an element per run; keys zero in every run dropped.
json lkp_matrix(const std::vector<json>& runs);
// stats.json: one value per key: the value itself for one run, the mean over runs otherwise.
json lkp_stats(const json& matrix);

// A readable table of a job's results (the main job's output).
std::string format_table(const Job& job, const JobResult& result);
// One row of one variant over its runs: the mean throughput, the 95% half-width of that mean
// (the runs' means are independent; a half-width not judged counts as 0), and whether every run's
// window was judged and settled. The run table and the intervals of run --uncertainty read it.
struct RowMean {
  double ops = 0, half_width = 0;
  bool judged = true, settled = true;
};
RowMean row_mean(const JobResult& result, std::size_t v, std::size_t row);

// What was simulated, for table headers: the program's non-slab time per op, saying when its
// values are placeholders (with the fits that exist for this machine), and one variant's sheaf
// capacities (": sheaf capacity maple_node 32 (automatic), ..." or ": no sheaves").
int nonslab_placeholders(const Program& p);
std::string describe_nonslab(const Job& job);
std::string describe_sheaves(const Job& job, const Variant& v);

// Write DIR/stats.json, DIR/matrix.json (deterministic) and DIR/host.json (wall time) for every
// variant; several variants go to DIR/<label>/. Nothing is written if anything fails to serialise.
void write_results(const std::string& dir, const Job& job, const JobResult& result);
// The same for variant v alone, each file written whole (temporary name, then rename): as a
// run with --out finishes each variant.
void write_variant_results(const std::string& dir, const Job& job, const JobResult& result, std::size_t v);
// Where variant v's files go under --out DIR: DIR itself for a job of one variant, else DIR/<label>.
std::string variant_dir(const std::string& dir, const Job& job, std::size_t v);
// The stats of every variant: one object, or an object keyed by variant label.
json stdout_stats(const Job& job, const JobResult& result);

}  // namespace slubsim
