#include "sim/run/report.h"

#include "sim/run/version.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "sim/run/point_store.h"
#include "sim/run/why.h"

namespace slubsim {

namespace fs = std::filesystem;

namespace {

double round_to(double v, double digits) {
  double s = std::pow(10.0, digits);
  return std::round(v * s) / s;
}

double us(Time t) { return round_to(to_us(t), 3); }

void put_lock_stat(json& out, const std::string& prefix, const LockStat& s) {
  out[prefix + ".con-bounces"] = s.con_bounces;
  out[prefix + ".contentions"] = s.contentions;
  out[prefix + ".waittime-min"] = s.contentions ? us(s.wait_min) : 0.0;
  out[prefix + ".waittime-max"] = us(s.wait_max);
  out[prefix + ".waittime-total"] = us(s.wait_total);
  out[prefix + ".waittime-avg"] = s.contentions ? us(s.wait_total / static_cast<Time>(s.contentions)) : 0.0;
  out[prefix + ".acq-bounces"] = s.acq_bounces;
  out[prefix + ".acquisitions"] = s.acquisitions;
  out[prefix + ".holdtime-min"] = s.acquisitions ? us(s.hold_min) : 0.0;
  out[prefix + ".holdtime-max"] = us(s.hold_max);
  out[prefix + ".holdtime-total"] = us(s.hold_total);
  out[prefix + ".holdtime-avg"] =
      s.acquisitions ? us(s.hold_total / static_cast<Time>(s.acquisitions)) : 0.0;
}

bool is_zero(const json& v) {
  return (v.is_number_integer() && v.get<std::int64_t>() == 0) ||
         (v.is_number_unsigned() && v.get<std::uint64_t>() == 0) ||
         (v.is_number_float() && v.get<double>() == 0.0);
}

constexpr std::size_t kMaxInstancesReported = 16;

std::string write_text(const json& j) { return j.dump(2) + "\n"; }

}  // namespace

namespace {

// lkp_run_stats' groups of keys, in the order it writes them.

// will-it-scale's per-row figures: ops/s and idle share.
void put_will_it_scale_rows(json& out, const std::vector<RunResult>& rows, Mode mode) {
  const char* what = mode == Mode::Process ? "processes" : "threads";
  for (const auto& r : rows) {
    out[fmt::format("will-it-scale.{}.{}", r.nr_task, what)] = r.ops_per_sec;
    out[fmt::format("will-it-scale.{}.{}_idle", r.nr_task, what)] = round_to(r.idle_pct, 2);
  }
}

// How each row's window was chosen and how well its mean is known (sim/run/settle.h).
void put_settle_keys(json& out, const std::vector<RunResult>& rows) {
  for (const auto& r : rows) {
    const std::string k = fmt::format("settle.{}.", r.nr_task);
    const SettleReport& st = r.settle;
    out[k + "warmup_ms"] = round_to(to_us(r.warmup) / 1000.0, 3);
    out[k + "window_ms"] = round_to(to_us(r.window) / 1000.0, 3);
    out[k + "automatic"] = st.automatic ? 1 : 0;
    if (!st.judged) {
      out[k + "unjudged"] = 1;
      continue;
    }
    out[k + "unsettled"] = st.settled ? 0 : 1;
    if (st.half_width >= 0) {
      out[k + "half_width"] = round_to(st.half_width, 0);
      out[k + "half_width_percent"] =
          r.ops_per_sec ? round_to(100.0 * st.half_width / static_cast<double>(r.ops_per_sec), 2) : 0.0;
    }
    out[k + "transient_ms"] = round_to(to_us(st.transient) / 1000.0, 3);
    out[k + "batches"] = st.batches;
    out[k + "batch_ms"] = round_to(to_us(st.batch) / 1000.0, 3);
    out[k + "period_ms"] = round_to(to_us(st.period) / 1000.0, 3);
  }
}

// will-it-scale's figures over the rows: per_process_ops (as lkp's parse: the mean over rows of
// ops/N, printed with %d, so truncated) and the workload (ops/s summed).
void put_will_it_scale_totals(json& out, const std::vector<RunResult>& rows, Mode mode) {
  long double per_task_sum = 0;
  std::uint64_t workload = 0;
  for (const auto& r : rows) {
    per_task_sum += static_cast<long double>(r.ops_per_sec) / r.nr_task;
    workload += r.ops_per_sec;
  }
  out[fmt::format("will-it-scale.per_{}_ops", mode == Mode::Process ? "process" : "thread")] =
      static_cast<std::uint64_t>(per_task_sum / static_cast<long double>(rows.size()));
  out["will-it-scale.workload"] = workload;
}

// lock_stat over the whole job: classes in order of first appearance, each with its instances
// when it has a few.
void put_lock_stat_keys(json& out, const std::vector<RunResult>& rows) {
  std::vector<std::string> classes;
  std::map<std::string, LockStat> by_class;
  std::map<std::string, std::map<std::string, LockStat>> by_instance;
  for (const auto& r : rows)
    for (const auto& l : r.locks) {
      if (!by_class.count(l.cls)) classes.push_back(l.cls);
      by_class[l.cls].add(l.stat);
      by_instance[l.cls][l.instance].add(l.stat);
    }
  for (const auto& cls : classes) {
    put_lock_stat(out, "lock_stat." + cls, by_class[cls]);
    const auto& inst = by_instance[cls];
    if (inst.size() > 1 && inst.size() <= kMaxInstancesReported)
      for (const auto& [name, stat] : inst) put_lock_stat(out, "lock_stat." + cls + "." + name, stat);
  }
}

// SLUB_STATS over the whole job (all rows' windows), per cache in order of first appearance.
struct JobSlubStats {
  std::vector<std::string> order;
  std::map<std::string, slub::StatCounters> stats;
};

JobSlubStats sum_slub_stats(const std::vector<RunResult>& rows) {
  JobSlubStats s;
  for (const auto& r : rows)
    for (const auto& c : r.caches) {
      if (!s.stats.count(c.name)) {
        s.order.push_back(c.name);
        s.stats[c.name] = {};
      }
      for (int k = 0; k < slub::kNrStats; ++k) s.stats[c.name][k] += c.stats[k];
    }
  return s;
}

// The counters with the kernel's sysfs names.
void put_slub_stats(json& out, const JobSlubStats& s) {
  for (const auto& name : s.order)
    for (int k = 0; k < slub::kNrStats; ++k)
      out[fmt::format("slub_stats.{}.{}", name, slub::stat_name(static_cast<slub::Stat>(k)))] =
          s.stats.at(name)[k];
}

// The shares tools/mm/slabinfo.c prints from the same counters (slab_stats(): %Al and %Fr of
// total allocations and frees; "Refilled from foreign frees" as a share of deactivations).
void put_slabinfo_shares(json& out, const JobSlubStats& s) {
  for (const auto& name : s.order) {
    const auto& st = s.stats.at(name);
    auto at = [&](slub::Stat x) { return static_cast<double>(st[static_cast<int>(x)]); };
    const double allocs = at(slub::Stat::ALLOC_FASTPATH) + at(slub::Stat::ALLOC_SLOWPATH);
    const double frees = at(slub::Stat::FREE_FASTPATH) + at(slub::Stat::FREE_SLOWPATH);
    const double deact = at(slub::Stat::DEACTIVATE_FULL) + at(slub::Stat::DEACTIVATE_EMPTY) +
                         at(slub::Stat::DEACTIVATE_TO_HEAD) + at(slub::Stat::DEACTIVATE_TO_TAIL) +
                         at(slub::Stat::DEACTIVATE_BYPASS);
    auto pct = [&](const char* key, double num, double den) {
      if (den > 0) out[fmt::format("slabinfo.{}.{}", name, key)] = round_to(100.0 * num / den, 3);
    };
    pct("alloc_fastpath_pct", at(slub::Stat::ALLOC_FASTPATH), allocs);
    pct("free_slowpath_pct", at(slub::Stat::FREE_SLOWPATH), frees);
    pct("alloc_from_partial_pct", at(slub::Stat::ALLOC_FROM_PARTIAL), allocs);
    pct("cpu_partial_alloc_pct", at(slub::Stat::CPU_PARTIAL_ALLOC), allocs);
    pct("alloc_refill_pct", at(slub::Stat::ALLOC_REFILL), deact);
  }
}

// meminfo's SUnreclaim: slab pages plus the sheaf structs (kmalloc'd, so part of SUnreclaim in
// the kernel), the mean over rows of the state at the end of each row's window.
void put_meminfo(json& out, const std::vector<RunResult>& rows) {
  double sunreclaim = 0;
  for (const auto& r : rows) {
    sunreclaim += static_cast<double>(r.slab_bytes) / 1024.0;
    for (const auto& c : r.caches) sunreclaim += static_cast<double>(c.layers.sheaf_bytes) / 1024.0;
  }
  out["meminfo.SUnreclaim"] = round_to(sunreclaim / static_cast<double>(rows.size()), 1);
}

// One cache's objects, like lkp's slabinfo monitor (slabinfo.*) and per layer (slab_objects.*):
// means over rows of the state at the end of each row's window.
void put_cache_objects(json& out, const std::vector<RunResult>& rows, const std::string& name) {
  std::map<std::string, double> v;
  for (const auto& r : rows)
    for (const auto& c : r.caches)
      if (c.name == name) {
        const auto& l = c.layers;
        double size = static_cast<double>(c.geo.size);
        // /proc/slabinfo's convention (get_slabinfo, count_partial in mm/slub.c, 6.x-7.0): only
        // free objects on node partial slabs are free; objects on cpu slabs, cpu partial slabs,
        // in sheaves, barns and RCU batches count as active. in_use: what the tasks hold.
        const double num = static_cast<double>(l.in_use + l.cpu_freelist + l.cpu_partial + l.node_partial +
                                               l.sheaves + l.barn + l.rcu + l.prefilled);
        v["num_objs"] += num;
        v["active_objs"] += num - static_cast<double>(l.node_partial);
        v["in_use"] += static_cast<double>(l.in_use);
        v["num_slabs"] += static_cast<double>(l.slabs);
        v["cpu_freelist"] += static_cast<double>(l.cpu_freelist);
        v["cpu_partial_free"] += static_cast<double>(l.cpu_partial);
        v["node_partial_free"] += static_cast<double>(l.node_partial);
        v["sheaves"] += static_cast<double>(l.sheaves);
        v["barn"] += static_cast<double>(l.barn);
        v["rcu"] += static_cast<double>(l.rcu);
        v["rcu_kB"] += static_cast<double>(l.rcu) * size / 1024.0;
        v["sheaves_kB"] += static_cast<double>(l.sheaves) * size / 1024.0;
        v["barn_kB"] += static_cast<double>(l.barn) * size / 1024.0;
        v["prefilled"] += static_cast<double>(l.prefilled);
        v["sheaf_structs"] += static_cast<double>(l.sheaf_structs);
        v["sheaf_struct_kB"] += static_cast<double>(l.sheaf_bytes) / 1024.0;
      }
  const double n = static_cast<double>(rows.size());
  for (const char* k : {"active_objs", "num_objs", "num_slabs"})
    out[fmt::format("slabinfo.{}.{}", name, k)] = round_to(v[k] / n, 1);
  for (const char* k : {"in_use", "cpu_freelist", "cpu_partial_free", "node_partial_free", "sheaves", "sheaves_kB",
                        "barn", "barn_kB", "rcu", "rcu_kB", "prefilled", "sheaf_structs", "sheaf_struct_kB"})
    out[fmt::format("slab_objects.{}.{}", name, k)] = round_to(v[k] / n, 1);
}

// proc-vmstat over the whole job (all rows' windows), like SLUB_STATS. Only slab pages go
// through the model's page allocator; in brk1/mmap2 (pages never touched) they are nearly all of
// the kernel's pgalloc_normal too.
void put_vmstat(json& out, const std::vector<RunResult>& rows) {
  std::uint64_t pgalloc = 0, pgfree = 0;
  for (const auto& r : rows) {
    pgalloc += r.pgalloc;
    pgfree += r.pgfree;
  }
  out["proc-vmstat.pgalloc_normal"] = pgalloc;
  out["proc-vmstat.pgfree"] = pgfree;
}

// Per row: context switches per second, all CPUs, from ksoftirqd's runs (to it and back: the
// part of lkp's perf-stat.i.context-switches the model has), the tasks' involuntary switches
// per task and second, and ksoftirqd's time per run; the
// mean grace period from ticks in the window; pages per counted operation (lkp's pgalloc_normal
// over its run / the ops in it); RCU callbacks per operation and the share invoked in a
// callback flood (sim/run/why.h CallbackLoad).
void put_row_rates(json& out, const std::vector<RunResult>& rows) {
  for (const auto& r : rows)
    if (r.window > 0)
      out[fmt::format("sched.{}.ksoftirqd_context_switches_per_sec", r.nr_task)] =
          round_to(2.0 * static_cast<double>(r.ksoftirqd_runs) / to_sec(r.window), 0);
  // Involuntary switches of the benchmark's tasks, per task and second (lkp's
  // time.involuntary_context_switches counts the benchmark's processes only): ksoftirqd takes
  // the CPU from the task bound there once per run. The model has no other preempting thread.
  for (const auto& r : rows)
    if (r.window > 0 && r.nr_task > 0)
      out[fmt::format("sched.{}.involuntary_switches_per_task_sec", r.nr_task)] =
          round_to(static_cast<double>(r.ksoftirqd_runs) / to_sec(r.window) / r.nr_task, 2);
  for (const auto& r : rows) {
    const CallbackLoad c = callback_load({&r});
    if (c.ksoftirqd_runs) out[fmt::format("sched.{}.ksoftirqd_run_us", r.nr_task)] = round_to(to_us(c.mean_run()), 1);
    if (c.callbacks && c.ops) {
      out[fmt::format("rcu.{}.callbacks_per_op", r.nr_task)] = round_to(c.per_op(), 4);
      out[fmt::format("rcu.{}.flood_callback_percent", r.nr_task)] = round_to(100.0 * c.flood_share(), 2);
    }
  }
  for (const auto& r : rows)
    if (r.grace_periods > 0)
      out[fmt::format("rcu.{}.grace_period_us", r.nr_task)] =
          round_to(to_us(r.window) / static_cast<double>(r.grace_periods), 1);
  for (const auto& r : rows) {
    const std::uint64_t ops = r.ops();
    if (ops)
      out[fmt::format("proc-vmstat.{}.pgalloc_normal_per_op", r.nr_task)] =
          round_to(static_cast<double>(r.pgalloc) / static_cast<double>(ops), 5);
  }
}

// What went wrong quietly, over the job: allocations that found no memory, trace frees whose
// allocation had not happened yet.
void put_failures(json& out, const std::vector<RunResult>& rows) {
  std::uint64_t failures = 0;
  for (const auto& r : rows) failures += r.alloc_failures;
  out["slubsim.alloc_failures"] = failures;
  std::uint64_t skipped = 0;
  for (const auto& r : rows) skipped += r.trace_skipped_frees;
  out["slubsim.trace_skipped_frees"] = skipped;
}

// Slab traffic per counted operation (objects per op), mean over rows.
void put_workload_ops(json& out, const std::vector<RunResult>& rows) {
  std::vector<std::string> order;
  std::map<std::string, std::array<double, 3>> sum;
  for (const auto& r : rows)
    for (const auto& [cache, v] : r.per_op) {
      if (!sum.count(cache)) order.push_back(cache);
      for (int k = 0; k < 3; ++k) sum[cache][k] += v[k];
    }
  const char* names[] = {"alloc", "free", "kfree_rcu"};
  for (const auto& cache : order)
    for (int k = 0; k < 3; ++k)
      out[fmt::format("workload_ops.{}.{}", cache, names[k])] =
          round_to(sum[cache][k] / static_cast<double>(rows.size()), 3);
}

// The simulation's own figures: requests granted and simulated time. The engine's event count
// is the engine's business (host.json): events fall as the engine learns to skip syncs, and the
// model's results do not move with them.
void put_sim_keys(json& out, const std::vector<RunResult>& rows) {
  std::uint64_t requests = 0;
  Time sim_time = 0;
  for (const auto& r : rows) {
    requests += r.requests;
    sim_time += r.end_time;
  }
  out["sim.requests"] = requests;
  out["sim.simulated_time_ms"] = round_to(to_sec(sim_time) * 1e3, 6);
}

// The interval series (--interval), per row: operations per second and the tasks' spin share in
// each interval, warm-up included, and where each interval ends.
void put_interval_series(json& out, const std::vector<RunResult>& rows) {
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.samples.size(); ++i) {
      const auto& s = r.samples[i];
      auto key = [&](const char* what) { return fmt::format("interval.{}.{:04d}.{}", r.nr_task, i, what); };
      out[key("end_ms")] = round_to(to_sec(s.end) * 1e3, 3);
      out[key("ops_per_sec")] = round_to(static_cast<double>(s.ops) / to_sec(r.interval), 0);
      out[key("spin_percent")] =
          round_to(100.0 * static_cast<double>(s.spin) / (static_cast<double>(r.interval) * r.nr_task), 2);
    }
}

}  // namespace

json lkp_run_stats(const std::vector<RunResult>& rows, Mode mode) {
  json out = json::object();
  put_will_it_scale_rows(out, rows, mode);
  put_settle_keys(out, rows);
  put_will_it_scale_totals(out, rows, mode);
  put_lock_stat_keys(out, rows);
  const JobSlubStats slub = sum_slub_stats(rows);
  put_slub_stats(out, slub);
  put_slabinfo_shares(out, slub);
  // Memory, like lkp's meminfo and slabinfo monitors, and the counts that come with the
  // allocator: only when the job ran one.
  if (!slub.order.empty()) {
    put_meminfo(out, rows);
    for (const auto& name : slub.order) put_cache_objects(out, rows, name);
    put_vmstat(out, rows);
    put_row_rates(out, rows);
    put_failures(out, rows);
  }
  put_workload_ops(out, rows);
  // Where the tasks' time goes (sim/run/why.h).
  put_why_keys(out, rows);
  put_sim_keys(out, rows);
  put_interval_series(out, rows);
  return out;
}

json lkp_matrix(const std::vector<json>& runs) {
  // Keys in first-seen order; each run's values found through a hash index (a run holds
  // hundreds of keys, and an ordered json object looks a key up by linear search).
  std::vector<std::string> keys;
  std::unordered_set<std::string> seen;
  std::vector<std::unordered_map<std::string, const json*>> index(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i)
    for (auto it = runs[i].begin(); it != runs[i].end(); ++it) {
      index[i].emplace(it.key(), &it.value());
      if (seen.insert(it.key()).second) keys.push_back(it.key());
    }
  json out = json::object();
  auto& members = out.get_ref<json::object_t&>();  // keys are unique: append without a search
  for (const auto& k : keys) {
    json arr = json::array();
    bool all_zero = true;
    for (const auto& run : index) {
      const auto it = run.find(k);
      json v = it != run.end() ? *it->second : json(0);
      if (!is_zero(v)) all_zero = false;
      arr.push_back(std::move(v));
    }
    if (!all_zero) members.emplace_back(k, std::move(arr));
  }
  return out;
}

json lkp_stats(const json& matrix) {
  json out = json::object();
  for (auto it = matrix.begin(); it != matrix.end(); ++it) {
    const auto& arr = it.value();
    if (arr.size() == 1) {
      out[it.key()] = arr[0];
      continue;
    }
    double sum = 0;
    for (const auto& v : arr) sum += v.get<double>();
    out[it.key()] = round_to(sum / static_cast<double>(arr.size()), 4);
  }
  return out;
}

static json variant_matrix(const Job& job, const JobResult& result, std::size_t v) {
  std::vector<json> runs;
  for (const auto& rows : result.runs[v]) runs.push_back(lkp_run_stats(rows, job.mode));
  json m = lkp_matrix(runs);
  // What was simulated, the same in every run: each cache's sheaf capacity, and whether the
  // non-slab time is a placeholder (not fitted to any machine).
  auto constant = [&](const std::string& key, double x) {
    m[key] = json::array();
    for (std::size_t i = 0; i < runs.size(); ++i) m[key].push_back(x);
  };
  for (const auto& sc : sheaf_capacities(job, job.variants[v])) constant("sheaf_capacity." + sc.cache, sc.capacity);
  if (nonslab_placeholders(job.program) > 0) constant("nonslab.placeholder", 1);
  return m;
}

std::string variant_dir(const std::string& dir, const Job& job, std::size_t v) {
  return job.variants.size() == 1 ? dir : (fs::path(dir) / job.variants[v].label).string();
}

json stdout_stats(const Job& job, const JobResult& result) {
  if (job.variants.size() == 1) return lkp_stats(variant_matrix(job, result, 0));
  json out = json::object();
  for (std::size_t v = 0; v < job.variants.size(); ++v)
    out[job.variants[v].label] = lkp_stats(variant_matrix(job, result, v));
  return out;
}

namespace {

struct File {
  fs::path path;
  std::string text;
};

void variant_files(const std::string& dir, const Job& job, const JobResult& result, std::size_t v,
                   std::vector<File>& files) {
  fs::path d = variant_dir(dir, job, v);
  json matrix = variant_matrix(job, result, v);
  files.push_back({d / "stats.json", write_text(lkp_stats(matrix))});
  files.push_back({d / "matrix.json", write_text(matrix)});
  json host = json::object();
  std::uint64_t events = 0;
  for (const auto& run : result.runs[v])
    for (const auto& row : run) events += row.events;
  host["sim.wall_time_s"] = round_to(result.wall_seconds[v], 3);
  host["sim.engine_events"] = events;
  host["sim.version"] = fmt::format("{} ({})", kVersion, kCommit);
  host["note"] =
      "host wall time and the engine's event count: facts of the host and of the engine's implementation, not of "
      "the model, so kept out of stats.json";
  files.push_back({d / "host.json", write_text(host)});
  // Folded stacks of all task time, one file per row, summed over the runs; counts in ns.
  for (std::size_t row = 0; row < job.nr_tasks.size() && job.request.stacks; ++row) {
    std::map<std::string, Time> sum;
    for (const auto& run : result.runs[v]) {
      if (row >= run.size()) continue;
      for (const auto& f : run[row].cpu_stacks) sum[f.stack] += f.time;
    }
    std::string text;
    for (const auto& [stack, t] : sum) {
      const auto ns = static_cast<long long>(std::llround(to_ns(t)));
      if (ns > 0) text += fmt::format("{} {}\n", stack, ns);
    }
    files.push_back({d / fmt::format("stacks.{}.folded", job.nr_tasks[row]), text});
  }
}

}  // namespace

void write_variant_results(const std::string& dir, const Job& job, const JobResult& result, std::size_t v) {
  std::vector<File> files;
  variant_files(dir, job, result, v, files);
  for (const auto& f : files) write_file_atomically(f.path.string(), f.text);
}

void write_results(const std::string& dir, const Job& job, const JobResult& result) {
  // Serialise everything first, then write: a failure leaves no partial result set.
  std::vector<File> files;
  for (std::size_t v = 0; v < job.variants.size(); ++v) variant_files(dir, job, result, v, files);
  for (const auto& f : files) {
    std::error_code ec;
    fs::create_directories(f.path.parent_path(), ec);
    if (ec) throw ConfigError(f.path.parent_path().string(), "--out", "cannot create directory: " + ec.message());
    std::ofstream out(f.path);
    out << f.text;
    if (!out) throw ConfigError(f.path.string(), "--out", "cannot write file");
  }
}

int nonslab_placeholders(const Program& p) {
  int n = 0;
  for (const auto& q : p.parameters) n += q.placeholder ? 1 : 0;
  return n;
}

std::string describe_nonslab(const Job& job) {
  const Program& p = job.program;
  if (p.parameters.empty()) return "";
  std::vector<std::string> parts;
  for (const auto& q : p.parameters) parts.push_back(fmt::format("{} {:g}", q.name, to_ns(q.ns)));
  const int placeholders = nonslab_placeholders(p);
  std::string line = fmt::format("non-slab time per op ({} parameters, ns): {}", p.name, fmt::join(parts, ", "));
  if (placeholders == 0) return line + "\n";
  line += fmt::format("\n  {} of them placeholders, not fitted to {}: the slab share of the time, and so absolute "
                      "ops/s, are estimates",
                      placeholders, job.machine.name);
  if (!job.fits_here.empty())
    line += fmt::format("; fitted values for this workload on this machine: {} (apply one with --fit FILE)",
                        fmt::join(job.fits_here, ", "));
  else
    line += "; 'slubsim fit' fits them to a will-it-scale figure measured on the machine";
  return line + "\n";
}

std::string describe_sheaves(const Job& job, const Variant& v) {
  std::vector<std::string> parts;
  const auto& set = v.capacity.knobs.sheaf_capacity;
  for (const auto& sc : sheaf_capacities(job, v)) {
    // Where the capacity comes from: the rule, the user's setting, or the kernel's own default.
    const bool given = std::any_of(set.begin(), set.end(), [&](const auto& k) {
      return k.first.empty() || k.first == "*" || k.first == sc.cache;
    });
    parts.push_back(fmt::format("{} {} ({})", sc.cache, sc.capacity,
                                sc.automatic ? "automatic" : given ? v.capacity.option() : "default"));
  }
  if (parts.empty()) return ": no sheaves";
  return fmt::format(": sheaf capacity {}", fmt::join(parts, ", "));
}

RowMean row_mean(const JobResult& result, std::size_t v, std::size_t row) {
  RowMean m;
  double hw2 = 0;
  const auto& runs = result.runs.at(v);
  for (const auto& run : runs) {
    const auto& r = run.at(row);
    m.ops += static_cast<double>(r.ops_per_sec);
    m.judged = m.judged && r.settle.judged && r.settle.half_width >= 0;
    m.settled = m.settled && r.settle.settled;
    const double hw = std::max(0.0, r.settle.half_width);
    hw2 += hw * hw;
  }
  const double n = static_cast<double>(runs.size());
  m.ops /= n;
  m.half_width = std::sqrt(hw2) / n;
  return m;
}

std::string format_table(const Job& job, const JobResult& result) {
  std::string out;
  const Machine& m = job.machine;
  out += fmt::format("slubsim: {} ({} mode) on {}: {} CPUs, {} sockets, {} nodes\n",
                     job.program.name, job.mode == Mode::Process ? "process" : "thread", m.name,
                     m.nr_cpus, m.nr_sockets, m.nr_nodes);
  out += describe_nonslab(job);
  if (job.settle)
    out += fmt::format("window: chosen per point by the settle rule (transient cut by MSER-5, then batch means until "
                       "the 95% confidence half-width is within {}; at most {}), {} run(s), seed {}\n\n",
                       job.request.settle_ci, job.request.settle_cap, job.request.runs, job.request.seed);
  else
    out += fmt::format("window {} ms after {} ms warm-up (fixed), {} run(s), seed {}\n\n",
                       to_sec(job.duration) * 1e3, to_sec(job.warmup) * 1e3, job.request.runs, job.request.seed);
  bool unsettled_rows = false, across = false;
  for (std::size_t v = 0; v < job.variants.size(); ++v) {
    // Against its baseline, a kernel of another source tree differs by more than the allocator.
    const std::size_t base = baseline_variant(job, v);
    const bool other_tree = base != v && job.variants[v].kernel.tree != job.variants[base].kernel.tree;
    across = across || other_tree;
    out += fmt::format("kernel {}{}{}\n", job.variants[v].label, describe_sheaves(job, job.variants[v]),
                       other_tree ? fmt::format("  (across releases from {})", job.variants[base].label) : "");
    // With --runs N, lkp's %stddev of the runs' means beside the settle rule's ±95% of their average.
    const bool many = job.request.runs > 1;
    out += fmt::format("{:>8} {:>14} {:>9}{} {:>14} {:>7} {:>11} {:>9} {:>9}  {}\n", "nr_task", "ops/s", "±95%",
                       many ? fmt::format(" {:>9}", "%stddev") : "", "per task", "idle%", "lock wait%", "warm-up",
                       "window", "most-waited lock");
    const auto& runs = result.runs[v];
    for (std::size_t row = 0; row < job.nr_tasks.size(); ++row) {
      const RowMean m = row_mean(result, v, row);
      double ops2 = 0, idle = 0, wait_pct = 0, warmup = 0, window = 0;
      std::map<std::string, Time> waits;
      for (const auto& run : runs) {
        const auto& r = run[row];
        ops2 += static_cast<double>(r.ops_per_sec) * static_cast<double>(r.ops_per_sec);
        idle += r.idle_pct;
        double wait = 0;
        for (const auto& l : r.locks) {
          waits[l.cls] += l.stat.wait_total;
          wait += static_cast<double>(l.stat.wait_total);
        }
        if (r.window > 0) wait_pct += 100.0 * wait / (static_cast<double>(r.nr_task) * static_cast<double>(r.window));
        warmup += to_us(r.warmup) / 1000.0;
        window += to_us(r.window) / 1000.0;
      }
      double n = static_cast<double>(runs.size());
      int nt = job.nr_tasks[row];
      std::string top = "-";
      Time best = 0;
      for (const auto& [cls, w] : waits)
        if (w > best) {
          best = w;
          top = cls;
        }
      const double mean = m.ops;
      const std::string pm = !m.judged ? "?" : fmt::format("{:.1f}%", mean > 0 ? 100.0 * m.half_width / mean : 0.0);
      if (!m.settled) unsettled_rows = true;
      std::string sd;
      if (many) {
        // Sample standard deviation over the runs, as lkp's compare prints it (± x%).
        const double var = n > 1 ? std::max(0.0, (ops2 - n * mean * mean) / (n - 1)) : 0.0;
        sd = fmt::format(" {:>9}", fmt::format("±{:.1f}%", mean > 0 ? 100.0 * std::sqrt(var) / mean : 0.0));
      }
      out += fmt::format("{:>8} {:>14.0f} {:>9}{} {:>14.0f} {:>7.2f} {:>11.2f} {:>7.0f}ms {:>7.0f}ms  {}{}\n", nt,
                         mean, pm, sd, mean / nt, idle / n, wait_pct / n, warmup / n, window / n, top,
                         m.settled ? "" : "  (not settled)");
    }
    out += "\n";
  }
  out += "ops/s: the mean over the window, ±95% its 95% confidence half-width; per task: ops/s / nr_task;\n"
         "idle%: share of all the machine's CPUs idle (no task, or its task asleep), as will-it-scale reports it;\n"
         "lock wait%: share of the tasks' time spent waiting for a lock (spinning or asleep), every lock summed;\n"
         "most-waited lock: the lock class with the most waiting; (default): the kernel's own capacity\n";
  if (across)
    out += "(across releases): another source tree than the first kernel's; on the machine everything else between "
           "the trees changes too, which the model does not simulate\n";
  if (unsettled_rows)
    out += "(not settled): the window's mean is not known to the settle rule's target; stderr says why\n";
  return out;
}

}  // namespace slubsim
