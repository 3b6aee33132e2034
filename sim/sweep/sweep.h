// A sweep: many jobs described once, run on one host or split into shards over a cluster, with
// results byte-identical either way.
//
// A sweep is the `run` options with two more axes: every topology x every workload is one job
// (a JobRequest), and each job multiplies kernels x sheaf capacities into variants, task counts
// into rows and runs into seeds, as `run` does. Its points (one simulation each: job x variant x
// run x row) have a fixed order, the plan; shard K of N runs the plan's points K, K+N, K+2N, ...
// (counted from 1), which spreads each job's task counts, cheap and dear, over the shards.
//
// Layout of a sweep's output (each job's folder is exactly what `run --out` writes):
//   OUT/sweep.json                  {"format", "sweep": the sweep's fields, "jobs": [{"dir",
//                                   "points"}], "points_total"[, "shard": "K/N"]}
//   OUT/<job dir>/index.json        the job's point store (sim/run/point_store.h)
//   OUT/<job dir>/points/<id>.json  its finished points
//   OUT/<job dir>/[<variant>/]stats.json, matrix.json, host.json   once a variant's points are in
// A job's dir is the topology's name, and "<topology>/<workload>" when the sweep has several
// workloads. Rerunning a sweep over its OUT skips the points on disk (resume); OUT holding
// another sweep is refused, naming the first difference.
#pragma once
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/config/config.h"
#include "sim/run/job.h"
#include "sim/run/shard.h"

namespace slubsim {

// What the sweep file and the command line say. `base` holds every `run` option; its topology
// and workload are ignored for the lists below.
struct SweepRequest {
  JobRequest base;
  std::vector<std::string> topologies;
  std::vector<std::string> workloads;
};

// Reads a sweep file (docs/sweep-format.md) over the defaults in `into` (a ConfigError names
// the file and field). Lists are JSON arrays or the option's comma form.
void read_sweep_file(const std::string& file, SweepRequest& into);
// The sweep's fields as JSON, in the sweep file's format: read_sweep_file of it gives the same
// sweep. This is what sweep.json records and what merge compares.
json sweep_fields(const SweepRequest& r);
// read_sweep_file's reading of fields already in memory (sweep.json's "sweep"), `file` for errors.
void read_sweep_fields(const json& fields, const std::string& file, SweepRequest& into);

struct SweepJob {
  std::string dir;  // under OUT
  Job job;
};

struct SweepPoint {
  std::size_t job = 0;
  PointKey key;
  std::string id;  // "<job dir>/<point id>", unique in the sweep
};

struct Sweep {
  SweepRequest request;
  std::vector<SweepJob> jobs;
  std::vector<SweepPoint> points;  // the plan, in order
};

// Resolve every job (reading every input; throws ConfigError on the first problem).
Sweep resolve_sweep(const SweepRequest& r);

// The plan as JSON: each point's id, job, variant, task count, seed and the exact `slubsim run`
// arguments that simulate it alone.
json sweep_plan(const Sweep& s);

// sweep.json's content for this sweep (and shard, when it is not 1/1).
json sweep_record(const Sweep& s, const std::optional<Shard>& shard);

// Throws ConfigError(file, field, what + the first difference) unless `was` (a sweep.json read
// from `file`) records the same sweep as `now`; the shard does not count.
void check_same_sweep(const json& was, const json& now, const std::string& file, const std::string& what);

struct SweepOutcome {
  std::size_t points_total = 0;  // of this shard
  std::size_t points_done = 0;   // of this shard, found on disk or run
  std::size_t points_loaded = 0; // found on disk
  bool complete = false;
};

// Run the shard's points of the sweep into `out` (created; resumed when it holds this sweep) on
// `jobs` host threads. Stops starting points once *stop is set. Throws ConfigError when `out`
// holds another sweep.
SweepOutcome run_sweep(const Sweep& s, const std::string& out, const Shard& shard, int jobs, bool quiet,
                       const std::atomic<bool>* stop);

// Several sweeps' points in one pool of `jobs` host threads (the dearest first), each into its
// own folder as run_sweep writes it; `what` names them on the progress line.
struct SweepTask {
  const Sweep* sweep = nullptr;
  std::string out;
  Shard shard;
};
std::vector<SweepOutcome> run_sweeps(const std::vector<SweepTask>& tasks, int jobs, bool quiet,
                                     const std::atomic<bool>* stop, const std::string& what);

}  // namespace slubsim
