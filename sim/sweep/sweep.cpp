#include "sim/sweep/sweep.h"

#include <type_traits>
#include <variant>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <mutex>

#include "sim/run/parallel.h"
#include "sim/run/point_store.h"
#include "sim/run/progress.h"
#include "sim/run/report.h"

namespace slubsim {

namespace fs = std::filesystem;

namespace {

constexpr int kSweepFormat = 1;  // sweep.json's layout version

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& s : items) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

// A list field: an array of strings (or, where `numbers`, whole numbers too), or one string in
// the option's own form. Returns the items; `sep` joins them for the option's form.
std::vector<std::string> list_field(const JsonView& v, bool numbers, bool may_be_empty = false) {
  std::vector<std::string> out;
  if (v.raw().is_string()) return {v.str()};
  if (numbers && v.raw().is_number()) return {std::to_string(v.integer_in(1, 1 << 20))};
  if (!v.raw().is_array() || (v.size() == 0 && !may_be_empty))
    v.fail(numbers ? "expected a string, a whole number or a non-empty array of them"
                   : "expected a string or a non-empty array of strings");
  for (std::size_t i = 0; i < v.size(); ++i) {
    const JsonView e = v.at(i);
    if (numbers && e.raw().is_number())
      out.push_back(std::to_string(e.integer_in(1, 1 << 20)));
    else
      out.push_back(e.str());
  }
  return out;
}

void read_fields(const JsonView& doc, SweepRequest& r) {
  JobRequest& b = r.base;
  if (!doc.raw().is_object()) doc.fail("expected an object: the sweep's fields (docs/sweep-format.md)");
  if (auto v = doc.find("topology")) {
    r.topologies.clear();
    for (const auto& t : list_field(*v, false))
      for (const auto& item : split_list(t)) r.topologies.push_back(item);
  }
  if (auto v = doc.find("workload")) {
    r.workloads.clear();
    for (const auto& w : list_field(*v, false))
      for (const auto& item : split_list(w)) r.workloads.push_back(item);
  }
  // Every other field as request_field_list() names it: the job's options, one key each.
  for (const RequestField& f : request_field_list()) {
    const std::string key = f.key;
    if (!f.in_sweep_files || key == "topology" || key == "workload") continue;
    auto v = doc.find(key);
    if (!v) continue;
    if (key == "set") {
      b.sets.clear();
      if (v->raw().is_object()) {
        // {"costs.qspinlock.handoff_alpha": 1.2}: KEY=VALUE with the value as written.
        for (const auto& k : v->keys()) {
          const JsonView e = v->at(k);
          b.sets.push_back(k + "=" + (e.raw().is_string() ? e.str() : e.raw().dump()));
        }
      } else {
        for (const auto& x : list_field(*v, false, true)) b.sets.push_back(x);
      }
      continue;
    }
    std::visit(
        [&](auto member) {
          auto& into = b.*member;
          using V = std::decay_t<decltype(into)>;
          if constexpr (std::is_same_v<V, std::string>) {
            if (f.list_join) into = join(list_field(*v, key == "nr_task"), f.list_join);
            else into = v->raw().is_number() ? v->raw().dump() : v->str();
          } else if constexpr (std::is_same_v<V, bool>) {
            into = v->boolean();
          } else if constexpr (std::is_same_v<V, int>) {
            into = static_cast<int>(v->integer_in(1, 1000));  // runs
          } else if constexpr (std::is_same_v<V, std::uint64_t>) {
            into = static_cast<std::uint64_t>(v->integer_in(0, std::int64_t{1} << 53));  // seed
          } else {
            into.clear();
            for (const auto& x : list_field(*v, false, true)) into.push_back(x);
          }
        },
        f.member);
  }
  doc.check_known_fields();
}

}  // namespace

void read_sweep_file(const std::string& file, SweepRequest& into) {
  const json doc = load_json_file(file);
  read_fields(JsonView(doc, file), into);
}

json sweep_fields(const SweepRequest& r) {
  // run's options as a job's description has them, with the two lists in place of one each.
  json d = request_fields(r.base);
  d["topology"] = r.topologies;
  d["workload"] = r.workloads;
  return d;
}

void read_sweep_fields(const json& fields, const std::string& file, SweepRequest& into) {
  read_fields(JsonView(fields, file), into);
}

namespace {

// A job's folder name from a topology or workload argument: a preset's name, or a file's stem.
std::string dir_name(const std::string& arg) {
  std::string s = arg;
  if (auto colon = s.find(':'); colon != std::string::npos && s.find('/') > colon) s = s.substr(colon + 1);
  fs::path p(s);
  std::string stem = p.extension() == ".json" || p.extension() == ".txt" ? p.stem().string() : p.filename().string();
  return stem.empty() ? "job" : stem;
}

}  // namespace

Sweep resolve_sweep(const SweepRequest& r) {
  if (r.topologies.empty()) throw ConfigError("command line", "--topology", "the sweep names no topology");
  if (r.workloads.empty()) throw ConfigError("command line", "--workload", "the sweep names no workload");
  refuse_repeats(r.topologies, "--topology");
  refuse_repeats(r.workloads, "--workload");
  Sweep s;
  s.request = r;
  for (const auto& topo : r.topologies)
    for (const auto& wl : r.workloads) {
      JobRequest req = r.base;
      req.topology = topo;
      req.workload = wl;
      SweepJob j;
      j.dir = dir_name(topo);
      if (r.workloads.size() > 1) j.dir += "/" + dir_name(wl);
      for (const auto& other : s.jobs)
        if (other.dir == j.dir)
          throw ConfigError("command line", r.workloads.size() > 1 ? "--topology/--workload" : "--topology",
                            fmt::format("two jobs of the sweep would share the folder '{}' (give each topology "
                                        "and workload once, with distinct file names)",
                                        j.dir));
      j.job = resolve_job(req);
      s.jobs.push_back(std::move(j));
    }
  for (std::size_t i = 0; i < s.jobs.size(); ++i)
    for (const auto& k : job_points(s.jobs[i].job))
      s.points.push_back({i, k, s.jobs[i].dir + "/" + point_id(s.jobs[i].job, k)});
  return s;
}

json sweep_plan(const Sweep& s) {
  json points = json::array();
  for (std::size_t i = 0; i < s.points.size(); ++i) {
    const SweepPoint& p = s.points[i];
    const Job& job = s.jobs[p.job].job;
    const JobRequest& r = job.request;
    const Variant& v = job.variants[p.key.variant];
    const int nr_task = job.nr_tasks[p.key.row];
    const std::uint64_t seed = r.seed + p.key.run;
    // The `slubsim run` arguments of this point alone: one kernel, one capacity, one task count,
    // one run with this run's seed (a point does not depend on the job's other points).
    std::vector<std::string> args;
    for (const RequestField& f : request_field_list()) {
      if (!f.option) continue;
      const std::string key = f.key;
      if (key == "kernel") {
        args.insert(args.end(), {f.option, v.kernel_arg});
      } else if (key == "sheaf_capacity" || key == "sysfs") {
        if (key == "sheaf_capacity" && !v.capacity.text.empty()) args.insert(args.end(), {v.capacity.option(), v.capacity.text});
      } else if (key == "nr_task") {
        args.insert(args.end(), {f.option, std::to_string(nr_task)});
      } else if (key == "runs") {
        args.insert(args.end(), {f.option, "1"});
      } else if (key == "seed") {
        args.insert(args.end(), {f.option, std::to_string(seed)});
      } else if (key == "patch") {
        for (const auto& p2 : r.patches) args.push_back(std::string(f.option) + "=" + p2);
      } else {
        std::visit(
            [&](auto member) {
              const auto& value = r.*member;
              using V = std::decay_t<decltype(value)>;
              if constexpr (std::is_same_v<V, std::string>) {
                if (!value.empty()) args.insert(args.end(), {f.option, value});
              } else if constexpr (std::is_same_v<V, bool>) {
                if (value) args.push_back(f.option);
              } else if constexpr (std::is_same_v<V, std::vector<std::string>>) {
                for (const auto& x : value) args.insert(args.end(), {f.option, x});
              }
            },
            f.member);
      }
    }
    json e = json::object();
    e["index"] = i + 1;
    e["id"] = p.id;
    e["job"] = s.jobs[p.job].dir;
    e["topology"] = r.topology;
    e["workload"] = r.workload;
    e["variant"] = v.label;
    e["nr_task"] = nr_task;
    e["run"] = p.key.run + 1;
    e["seed"] = seed;
    e["args"] = args;
    points.push_back(std::move(e));
  }
  json d = json::object();
  d["format"] = kSweepFormat;
  d["sweep"] = sweep_fields(s.request);
  d["points_total"] = s.points.size();
  d["points"] = std::move(points);
  return d;
}

json sweep_record(const Sweep& s, const std::optional<Shard>& shard) {
  json d = json::object();
  d["format"] = kSweepFormat;
  d["sweep"] = sweep_fields(s.request);
  json jobs = json::array();
  for (const auto& j : s.jobs) {
    json e = json::object();
    e["dir"] = j.dir;
    e["points"] = job_points(j.job).size();
    jobs.push_back(std::move(e));
  }
  d["jobs"] = std::move(jobs);
  d["points_total"] = s.points.size();
  if (shard && shard->n > 1) d["shard"] = shard->text();
  return d;
}

void check_same_sweep(const json& was, const json& now, const std::string& file, const std::string& what) {
  if (!was.is_object() || was.value("format", 0) != kSweepFormat || !was.contains("sweep") || !was.contains("jobs"))
    throw ConfigError(file, "", fmt::format("not a sweep record of format {}", kSweepFormat));
  for (const char* key : {"sweep", "jobs", "points_total"})
    if (was[key] != now[key])
      throw ConfigError(file, key,
                        fmt::format("{} ({}): give the same sweep, or another directory", what,
                                    was[key].is_object() && now[key].is_object()
                                        ? first_difference(was[key], now[key])
                                        : fmt::format("was {}, now {}", was[key].dump(), now[key].dump())));
}

namespace {

// One sweep's state while it runs in a pool with others.
struct Running {
  const Sweep* s = nullptr;
  fs::path root;
  std::vector<std::unique_ptr<PointStore>> stores;
  std::vector<JobResult> results;
  std::vector<std::vector<std::size_t>> missing;  // per job and variant, over the whole plan
  SweepOutcome o;
  void write_variant(std::size_t j, std::size_t v) {
    write_variant_results((root / s->jobs[j].dir).string(), s->jobs[j].job, results[j], v);
  }
  void flush() {  // every job has an index, even one with no point here
    for (auto& st : stores) st->flush();
  }
};

}  // namespace

std::vector<SweepOutcome> run_sweeps(const std::vector<SweepTask>& tasks, int jobs, bool quiet,
                                     const std::atomic<bool>* stop, const std::string& what) {
  std::vector<Running> runs(tasks.size());
  std::vector<std::pair<std::size_t, std::size_t>> todo;  // (task, plan index)
  std::size_t total = 0, loaded_total = 0;
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    const Sweep& s = *tasks[t].sweep;
    const Shard& shard = tasks[t].shard;
    Running& r = runs[t];
    r.s = &s;
    r.root = fs::path(tasks[t].out);
    const json record = sweep_record(s, shard);
    const fs::path record_file = r.root / "sweep.json";
    if (path_exists(record_file))
      check_same_sweep(load_json_file(record_file.string()), record, record_file.string(),
                       "this directory holds another sweep");
    // Each job's point store, resumed: the points on disk are not run again.
    r.results.resize(s.jobs.size());
    r.missing.resize(s.jobs.size());
    for (std::size_t j = 0; j < s.jobs.size(); ++j) {
      const Job& job = s.jobs[j].job;
      r.stores.push_back(std::make_unique<PointStore>((r.root / s.jobs[j].dir).string(), job, true));
      r.results[j] = empty_result(job);
      r.missing[j].assign(job.variants.size(), static_cast<std::size_t>(job.request.runs) * job.nr_tasks.size());
    }
    // Written once every store has been opened (a store of another job is refused first).
    write_file_atomically(record_file.string(), record.dump(1) + "\n");
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      const SweepPoint& p = s.points[i];
      const auto& loaded = r.stores[p.job]->loaded();
      auto it = loaded.find(point_id(s.jobs[p.job].job, p.key));
      if (it != loaded.end()) {
        r.results[p.job].runs[p.key.variant][p.key.run][p.key.row] = it->second.first;
        r.results[p.job].wall_seconds[p.key.variant] += it->second.second;
        --r.missing[p.job][p.key.variant];
      }
      if (!shard.contains(i)) continue;
      ++r.o.points_total;
      if (it != loaded.end()) {
        ++r.o.points_loaded;
      } else {
        todo.emplace_back(t, i);
      }
    }
    r.o.points_done = r.o.points_loaded;
    total += r.o.points_total;
    loaded_total += r.o.points_loaded;
    // Variants complete already (a rerun after the last point but before the files): write them.
    for (std::size_t j = 0; j < s.jobs.size(); ++j)
      for (std::size_t v = 0; v < r.missing[j].size(); ++v)
        if (r.missing[j][v] == 0) r.write_variant(j, v);
  }

  // Largest task counts first: they are the dearest points, and the host threads end together.
  auto nr_task = [&](const std::pair<std::size_t, std::size_t>& x) {
    const SweepPoint& p = runs[x.first].s->points[x.second];
    return runs[x.first].s->jobs[p.job].job.nr_tasks[p.key.row];
  };
  std::stable_sort(todo.begin(), todo.end(), [&](const auto& a, const auto& b) { return nr_task(a) > nr_task(b); });
  ProgressMeter meter(what, total, loaded_total, quiet);
  std::mutex mu;
  auto flush_all = [&]() {
    for (auto& r : runs) r.flush();
  };
  try {
    parallel_for(todo.size(), host_threads(jobs), [&](std::size_t t) {
      Running& run = runs[todo[t].first];
      const Sweep& s = *run.s;
      const SweepPoint& p = s.points[todo[t].second];
      const Job& job = s.jobs[p.job].job;
      const auto t0 = std::chrono::steady_clock::now();
      RunResult r = simulate_point(job, p.key, stop);
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::lock_guard<std::mutex> g(mu);
      run.stores[p.job]->save(p.key, r, wall);
      const std::string detail = fmt::format("{}{} {} nr_task={} run={}: {} ops/s, {:.2f} s",
                                             tasks.size() > 1 ? tasks[todo[t].first].out + ": " : std::string(),
                                             s.jobs[p.job].dir, job.variants[p.key.variant].label,
                                             job.nr_tasks[p.key.row], p.key.run + 1, r.ops_per_sec, wall);
      run.results[p.job].runs[p.key.variant][p.key.run][p.key.row] = std::move(r);
      run.results[p.job].wall_seconds[p.key.variant] += wall;
      ++run.o.points_done;
      if (--run.missing[p.job][p.key.variant] == 0) run.write_variant(p.job, p.key.variant);
      meter.point_done(detail);
    }, stop);
  } catch (...) {
    flush_all();
    throw;
  }
  flush_all();
  std::vector<SweepOutcome> out;
  bool all = true;
  for (auto& r : runs) {
    r.o.complete = r.o.points_done == r.o.points_total;
    all = all && r.o.complete;
    out.push_back(r.o);
  }
  if (all) meter.finish();
  return out;
}

SweepOutcome run_sweep(const Sweep& s, const std::string& out, const Shard& shard, int jobs, bool quiet,
                       const std::atomic<bool>* stop) {
  return run_sweeps({SweepTask{&s, out, shard}}, jobs, quiet, stop,
                    shard.n > 1 ? "sweep shard " + shard.text() : "sweep")
      .front();
}

}  // namespace slubsim
