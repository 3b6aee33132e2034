// sim/sweep/: many jobs described once (sweep.h), run on one host or split into shards, and the
// shards joined again (merge.h).
// This file: `slubsim merge`.
#include "sim/sweep/merge.h"

#include <filesystem>
#include <fmt/format.h>
#include <map>

#include "sim/run/point_store.h"
#include "sim/run/report.h"

namespace slubsim {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMissingListed = 8;

bool same_dir(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return path_exists(a) && path_exists(b) && fs::equivalent(a, b, ec);
}

// A shard's job index, checked against this sweep's description, and its points' host seconds.
struct ShardIndex {
  bool found = false;
  json wall = json::object();
};

ShardIndex read_shard_index(const fs::path& job_dir, const json& description) {
  ShardIndex ix;
  const fs::path index = job_dir / "index.json";
  if (!path_exists(index)) return ix;  // the shard ran none of this job's points
  const json doc = load_json_file(index.string());
  if (!doc.is_object() || !doc.contains("job") || !doc.contains("points") || !doc["points"].is_object())
    throw ConfigError(index.string(), "", "not a point store index (a damaged shard)");
  if (doc["job"] != description)
    throw ConfigError(index.string(), "job",
                      fmt::format("the shard was made from other inputs ({}): rerun it with this host's configs, "
                                  "or merge on the host that ran it",
                                  first_difference(doc["job"], description)));
  ix.found = true;
  const fs::path host = job_dir / "points" / "host.json";
  if (path_exists(host)) {
    try {
      const json h = load_json_file(host.string());
      if (h.is_object() && h.contains("wall_s") && h["wall_s"].is_object()) ix.wall = h["wall_s"];
    } catch (const ConfigError&) {
      // host seconds only: a damaged host file costs them, not the points
    }
  }
  return ix;
}

}  // namespace

MergeOutcome merge_sweeps(const std::vector<std::string>& dirs, const std::string& out, const std::string& home) {
  if (dirs.empty()) throw ConfigError("command line", "merge", "give the shard directories to merge");
  // One sweep: every DIR's record equal to the first's.
  const fs::path first_record = fs::path(dirs[0]) / "sweep.json";
  if (!path_exists(first_record))
    throw ConfigError(first_record.string(), "", "not a sweep's output (no sweep.json)");
  const json record = load_json_file(first_record.string());
  if (!record.is_object() || !record.contains("sweep"))
    throw ConfigError(first_record.string(), "", "not a sweep record");
  for (std::size_t i = 1; i < dirs.size(); ++i) {
    const fs::path f = fs::path(dirs[i]) / "sweep.json";
    if (!path_exists(f)) throw ConfigError(f.string(), "", "not a sweep's output (no sweep.json)");
    // Named "was" the first DIR's, "now" this one's.
    json mine = load_json_file(f.string());
    if (!mine.is_object() || mine.value("format", 0) != record.value("format", 0) || !mine.contains("sweep") ||
        !mine.contains("jobs") || !mine.contains("points_total"))
      throw ConfigError(f.string(), "", "not a sweep record of this version");
    for (const char* key : {"sweep", "jobs", "points_total"})
      if (mine[key] != record[key])
        throw ConfigError(f.string(), key,
                          fmt::format("a shard of another sweep than {} ({}): merge the shards of one sweep",
                                      dirs[0],
                                      record[key].is_object() ? first_difference(record[key], mine[key])
                                                              : fmt::format("{} there, {} here", record[key].dump(),
                                                                            mine[key].dump())));
  }
  // The sweep again, from this host's inputs.
  SweepRequest req;
  req.base.home = home;
  read_sweep_fields(record["sweep"], first_record.string() + ": sweep", req);
  const Sweep sweep = resolve_sweep(req);
  const json merged_record = sweep_record(sweep, std::nullopt);
  check_same_sweep(record, merged_record, first_record.string(), "the sweep resolves differently here");
  const fs::path root(out);
  const fs::path out_record = root / "sweep.json";
  if (path_exists(out_record) && !same_dir(root, dirs[0]))
    check_same_sweep(load_json_file(out_record.string()), merged_record, out_record.string(),
                     "--out holds another sweep");

  MergeOutcome o;
  o.points_total = sweep.points.size();
  // Job by job, so that only one job's results are in memory at a time.
  std::map<std::string, std::size_t> plan_index;  // point id -> index in the plan
  for (std::size_t i = 0; i < sweep.points.size(); ++i) plan_index[sweep.points[i].id] = i;
  std::vector<bool> present(sweep.points.size(), false);
  for (std::size_t j = 0; j < sweep.jobs.size(); ++j) {
    const SweepJob& sj = sweep.jobs[j];
    const Job& job = sj.job;
    PointStore store((root / sj.dir).string(), job, true);
    JobResult result = empty_result(job);
    std::vector<std::size_t> have(job.variants.size(), 0);
    std::map<std::string, PointKey> keys;
    for (const auto& k : job_points(job)) keys[point_id(job, k)] = k;
    auto take = [&](const std::string& id, const PointKey& k, RunResult r, double wall) {
      result.runs[k.variant][k.run][k.row] = std::move(r);
      result.wall_seconds[k.variant] += wall;
      ++have[k.variant];
      present[plan_index.at(sj.dir + "/" + id)] = true;
    };
    for (const auto& [id, point] : store.loaded()) {
      auto k = keys.find(id);
      if (k != keys.end()) take(id, k->second, point.first, point.second);
    }
    for (const auto& d : dirs) {
      const fs::path job_dir = fs::path(d) / sj.dir;
      if (same_dir(job_dir, root / sj.dir)) continue;
      const ShardIndex ix = read_shard_index(job_dir, store.description());
      // Without an index a shard's inputs cannot be checked: its points count as missing.
      if (!ix.found) continue;
      // The point files are the record (an index may lag behind them by PointStore's kIndexGap).
      for (const auto& [id, key] : keys) {
        if (store.has(id)) continue;  // an earlier DIR (or OUT) has it
        const fs::path pf = job_dir / "points" / (id + ".json");
        if (!path_exists(pf)) continue;
        RunResult r = run_result_from_json(load_json_file(pf.string()), pf.string());
        const auto w = ix.wall.find(id);
        const double wall = w != ix.wall.end() && w->is_number() ? w->get<double>() : 0.0;
        store.save(key, r, wall, false);
        take(id, key, std::move(r), wall);
      }
    }
    store.flush();
    const std::size_t per_variant = static_cast<std::size_t>(job.request.runs) * job.nr_tasks.size();
    for (std::size_t v = 0; v < job.variants.size(); ++v) {
      ++o.variants_total;
      o.points_present += have[v];
      if (have[v] != per_variant) continue;
      ++o.variants_complete;
      write_variant_results((root / sj.dir).string(), job, result, v);
    }
  }
  for (std::size_t i = 0; i < sweep.points.size() && o.missing.size() < kMissingListed; ++i)
    if (!present[i]) o.missing.push_back(sweep.points[i].id);
  write_file_atomically(out_record.string(), merged_record.dump(1) + "\n");
  return o;
}

bool is_sweep_tree(const std::string& dir) {
  return !path_exists(fs::path(dir) / "sweep.json") && path_exists(fs::path(dir) / kTreeMarker);
}

MergeOutcome merge_trees(const std::vector<std::string>& dirs, const std::string& out, const std::string& home) {
  std::map<std::string, std::vector<std::string>> by_path;  // sweep folder under a DIR -> the DIRs' copies
  for (const auto& d : dirs) {
    if (!is_sweep_tree(d))
      throw ConfigError(d, "", fmt::format("not a shard of a tree of sweeps (no {}): merge shards of one kind", kTreeMarker));
    std::error_code ec;
    for (fs::recursive_directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->is_regular_file() || it->path().filename() != "sweep.json") continue;
      const std::string rel = fs::relative(it->path().parent_path(), d).generic_string();
      by_path[rel].push_back((fs::path(d) / rel).string());
    }
    if (ec) throw ConfigError(d, "", "cannot be read: " + ec.message());
  }
  MergeOutcome o;
  for (const auto& [rel, copies] : by_path) {
    const MergeOutcome m = merge_sweeps(copies, (fs::path(out) / rel).string(), home);
    o.points_total += m.points_total;
    o.points_present += m.points_present;
    o.variants_total += m.variants_total;
    o.variants_complete += m.variants_complete;
    for (const auto& id : m.missing) o.missing.push_back(rel + "/" + id);
  }
  return o;
}

}  // namespace slubsim
