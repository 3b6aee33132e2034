// The output directory's store of finished points.
//
// A point is one simulation: one variant (kernel, capacity, patches, --set values) x one task
// count x one run (seed). As soon as a point's simulation ends it is written to
// OUT/points/<id>.json, whole (a temporary name, then rename), and OUT/index.json is rewritten
// the same way, at most once a second and when the job ends or stops: the job's description and
// the points on disk. `run --resume` reads them
// back, refuses a store made by another job, and runs only the points that are missing; the
// results it assembles are byte-identical to an uninterrupted run's, because a point's JSON holds
// its RunResult losslessly (integers as integers, doubles with round-trip precision).
//
// Layout:
//   OUT/index.json             {"format", "job": description, "points": {id: {"variant", "row",
//                              "run"}}}: a function of the job and which points are done
//   OUT/points/<id>.json       one RunResult
//   OUT/points/host.json       each point's host wall seconds (not deterministic)
//   OUT/[<variant>/]stats.json, matrix.json, host.json   a variant's lkp files, written when its
//                              last point is on disk
#pragma once
#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "sim/config/config.h"
#include "sim/run/job.h"
#include "sim/run/runner.h"

namespace slubsim {

// "v<variant>-t<row>-n<nr_task>-r<run>" (variant, row and run counted from 0, 0 and 1): stable for
// one job description.
std::string point_id(const Job& job, const PointKey& k);

// Everything that decides a job's results: the request's options (not --jobs, --out or where
// configs live) and a digest of every input file's bytes. Two runs with equal descriptions give
// byte-identical stats.json and matrix.json.
json job_description(const Job& job);
// The request's options of that description, without the inputs.
json request_fields(const JobRequest& r);

// A RunResult as JSON and back, losslessly.
json run_result_json(const RunResult& r);
RunResult run_result_from_json(const json& j, const std::string& file);

// The longest the index lags behind the point files (a host-side choice, not a model figure).
inline constexpr std::chrono::milliseconds kIndexGap{1000};

class PointStore {
 public:
  // Opens DIR's store for `job`. resume = false: DIR must not hold a store already (its points
  // would be lost); resume = true: DIR's store, if any, must have been made by an equal job
  // description, and its points are loaded. Throws ConfigError naming the file and what differs.
  PointStore(std::string dir, const Job& job, bool resume);

  const std::string& dir() const { return dir_; }
  // The points already on disk (resume), with their host wall seconds.
  const std::map<std::string, std::pair<RunResult, double>>& loaded() const { return loaded_; }
  const json& description() const { return description_; }
  // Whether the point is on disk (loaded or saved since).
  bool has(const std::string& id) const;
  // Writes the point, then (write_index) the index if it was last written over kIndexGap ago;
  // safe to call from several threads. Call flush() when the job ends or stops. A point's file is
  // its record: a store read back finds every point file even when the index lags behind.
  void save(const PointKey& k, const RunResult& r, double wall_seconds, bool write_index = true);
  // Writes the index if a point was saved without it (or the store has none yet).
  void flush();

 private:
  void write_index_locked();
  std::string dir_;
  const Job& job_;
  json description_;
  std::map<std::string, json> points_;  // id -> {variant, row, run}
  std::map<std::string, double> wall_;  // id -> host seconds
  std::map<std::string, std::pair<RunResult, double>> loaded_;
  mutable std::mutex mu_;
  bool dirty_ = false;
  std::chrono::steady_clock::time_point last_index_{};
};

// The first difference between two job descriptions, e.g. "seed was 1, now 2".
std::string first_difference(const json& was, const json& now);

// Write `text` to `path` whole: a temporary file beside it, then rename. Throws ConfigError.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace slubsim
