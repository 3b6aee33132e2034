// sim/run/: one job, as `slubsim run` asks for it: the allocator's parameters (slub_config.h),
// one simulation (runner.h), the settle rule (settle.h), points on disk (point_store.h), shards
// (shard.h), reports (report.h, why.h) and progress.
// This file: resolving a JobRequest into a Job and running its points.
#include "sim/run/job.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <mutex>

#include "models/slub/cache.h"
#include "models/slub/geometry.h"
#include "models/slub/page_alloc.h"
#include "sim/config/trace_import.h"
#include "sim/config/workload_json.h"
#include "sim/engine/engine.h"
#include "sim/machine/topology.h"
#include "sim/run/parallel.h"
#include "workloads/task.h"

#ifndef SLUBSIM_SOURCE_DIR
#define SLUBSIM_SOURCE_DIR "."
#endif

namespace slubsim {

namespace fs = std::filesystem;

// --interval: a bound on the series' length, so a typo (1ns over a second) is an error, not a
// million keys.
constexpr Time kMaxIntervals = 10000;

// "2%" or "2" as the fraction 0.02.
double parse_percent(const std::string& text, const std::string& field) {
  std::string t = text;
  if (!t.empty() && t.back() == '%') t.pop_back();
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (t.empty() || used != t.size() || !std::isfinite(v))
    throw ConfigError("command line", field, fmt::format("'{}' is not a percentage (e.g. 2%)", text));
  return v / 100.0;
}

std::string default_home() {
  if (const char* env = std::getenv("SLUBSIM_HOME"); env && *env) return env;
  return SLUBSIM_SOURCE_DIR;
}

std::string resolve_config(const std::string& home, const std::string& dir,
                           const std::string& name_or_file, const std::string& option) {
  if (name_or_file.empty()) throw ConfigError("command line", option, "must not be empty");
  bool is_path = name_or_file.find('/') != std::string::npos ||
                 (name_or_file.size() > 5 &&
                  name_or_file.compare(name_or_file.size() - 5, 5, ".json") == 0);
  if (is_path) {
    if (!is_file(name_or_file))
      throw ConfigError(name_or_file, option, "no such file");
    return name_or_file;
  }
  fs::path p = fs::path(home) / dir / (name_or_file + ".json");
  if (!is_file(p)) {
    std::vector<std::string> known;
    std::error_code ec;
    for (fs::directory_iterator it(fs::path(home) / dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".json") known.push_back(it->path().stem().string());
    std::sort(known.begin(), known.end());
    throw ConfigError(p.string(), option,
                      fmt::format("unknown preset '{}'{}; known: {}", name_or_file, did_you_mean(name_or_file, known),
                                  known.empty() ? "(none)" : fmt::format("{}", fmt::join(known, ", "))));
  }
  return p.string();
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    auto comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

void refuse_repeats(const std::vector<std::string>& items, const std::string& option) {
  for (std::size_t i = 0; i < items.size(); ++i)
    if (std::find(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(i), items[i]) !=
        items.begin() + static_cast<std::ptrdiff_t>(i))
      throw ConfigError("command line", option,
                        fmt::format("{} is given twice: give each once",
                                    items[i].empty() ? std::string("an empty item") : "'" + items[i] + "'"));
}

std::vector<int> parse_nr_task(const std::string& text, int nr_cpus) {
  const bool a_default = text == kDefaultNrTask || text == kAdviseDefaultNrTask;
  std::vector<int> out;
  std::vector<std::string> from;  // the item each count came from
  for (const auto& item : split_list(text)) {
    bool pct = !item.empty() && item.back() == '%';
    std::string num = pct ? item.substr(0, item.size() - 1) : item;
    if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos || num.size() > 6)
      throw ConfigError("command line", "--nr-task",
                        fmt::format("'{}' is not a task count (N or P%)", item));
    long v = std::stol(num);
    // params/nr_threads: N% is int(N * nr_cpu / 100).
    long n = pct ? v * nr_cpus / 100 : v;
    const auto seen = std::find(out.begin(), out.end(), n);
    // The default list on a small machine: 25% of 2 CPUs is 0 tasks, 25% of 4 the 1 before it.
    if (a_default && (n < 1 || seen != out.end())) continue;
    if (n < 1 || n > nr_cpus)
      throw ConfigError("command line", "--nr-task",
                        fmt::format("'{}' gives {} tasks; the machine has {} CPUs (1 to {} allowed)",
                                    item, n, nr_cpus, nr_cpus));
    // A task count is one row: twice, it is simulated twice, printed twice and added twice into
    // will-it-scale.workload.
    if (seen != out.end()) {
      const std::string& first = from[static_cast<std::size_t>(seen - out.begin())];
      throw ConfigError("command line", "--nr-task",
                        first == item ? fmt::format("'{}' is given twice: each task count is one row, give it once", item)
                                      : fmt::format("'{}' gives {} tasks, as '{}' does: each task count is one row, "
                                                    "give it once",
                                                    item, n, first));
    }
    out.push_back(static_cast<int>(n));
    from.push_back(item);
  }
  if (out.empty())  // only a default gets here: every percentage of it gave 0 tasks
    throw ConfigError("command line", "--nr-task",
                      fmt::format("the default task counts ({}) give no task on this {}-CPU machine: give "
                                  "--nr-task N",
                                  text, nr_cpus));
  return out;
}

namespace {

// The settings of --sheaf-capacity (parse_sheaf_capacity), a repeat not yet refused.
std::vector<CapacitySetting> sheaf_capacity_settings(const std::string& text) {
  // "64" or "32,64,128": every sheaf cache, one setting per value (a sweep).
  // "maple_node=64" or "maple_node=32,64,128": one cache, one setting per value (a sweep).
  // "maple_node=64,vm_area_struct=32": several caches in one setting.
  // "maple_node=16,vm_area_struct=16;maple_node=32,vm_area_struct=32": settings joined by ';',
  // each read as above (a sweep of several caches together).
  if (text.empty()) return {CapacitySetting{}};
  if (text.find(';') != std::string::npos) {
    std::vector<CapacitySetting> out;
    std::size_t start = 0;
    while (true) {
      const auto semi = text.find(';', start);
      for (auto& c : sheaf_capacity_settings(text.substr(start, semi == std::string::npos ? semi : semi - start)))
        out.push_back(std::move(c));
      if (semi == std::string::npos) return out;
      start = semi + 1;
    }
  }
  struct Item {
    std::string cache;
    int value;
  };
  std::vector<Item> items;
  std::string current;  // a plain number after CACHE=N continues that cache's sweep
  std::size_t start = 0;
  while (true) {
    auto comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    auto eq = item.find('=');
    std::string num = eq == std::string::npos ? item : item.substr(eq + 1);
    if (eq != std::string::npos) {
      current = item.substr(0, eq);
      if (current.empty())
        throw ConfigError("command line", "--sheaf-capacity", fmt::format("'{}' names no cache", item));
    }
    if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos || num.size() > 5)
      throw ConfigError("command line", "--sheaf-capacity",
                        fmt::format("'{}' is not a capacity ([CACHE=]N[,N...])", item));
    int n = std::stoi(num);
    if (n < 1 || n > 4096)
      throw ConfigError("command line", "--sheaf-capacity",
                        fmt::format("capacity {} must be between 1 and 4096", n));
    items.push_back({current, n});
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::vector<std::string> caches;
  for (const auto& it : items)
    if (std::find(caches.begin(), caches.end(), it.cache) == caches.end()) caches.push_back(it.cache);
  std::vector<CapacitySetting> out;
  if (caches.size() == 1) {
    for (const auto& it : items) {
      CapacitySetting c;
      c.text = it.cache.empty() ? fmt::format("{}", it.value) : fmt::format("{}={}", it.cache, it.value);
      c.knobs.sheaf_capacity.emplace_back(it.cache, it.value);
      out.push_back(c);
    }
    return out;
  }
  if (items.size() != caches.size() || std::find(caches.begin(), caches.end(), "") != caches.end())
    throw ConfigError("command line", "--sheaf-capacity",
                      "sweep one cache (maple_node=32,64) or all (32,64), or give several caches one "
                      "value each (maple_node=64,vm_area_struct=32)");
  CapacitySetting c;
  for (const auto& it : items) {
    if (!c.text.empty()) c.text += ",";
    c.text += fmt::format("{}={}", it.cache, it.value);
    c.knobs.sheaf_capacity.emplace_back(it.cache, it.value);
  }
  return {c};
}

// The texts of settings, for refuse_repeats.
std::vector<std::string> setting_texts(const std::vector<CapacitySetting>& settings) {
  std::vector<std::string> out;
  for (const auto& c : settings) out.push_back(c.text);
  return out;
}

}  // namespace

std::vector<CapacitySetting> parse_sheaf_capacity(const std::string& text) {
  auto out = sheaf_capacity_settings(text);
  refuse_repeats(setting_texts(out), "--sheaf-capacity");
  return out;
}

std::string CapacitySetting::label_suffix() const {
  if (text.empty()) return "";
  if (!sysfs) return "_sheaf_capacity=" + text;
  // A label names a directory: CACHE/KNOB becomes CACHE.KNOB, and '*' (every cache) "all".
  std::string t;
  for (char ch : text) t += ch == '/' ? std::string(".") : ch == '*' ? std::string("all") : std::string(1, ch);
  return "_" + t;
}

std::vector<CapacitySetting> parse_sysfs(const std::string& text) {
  if (text.empty()) return {CapacitySetting{}};
  auto bad = [](const std::string& what) { return ConfigError("command line", "--sysfs", what); };
  std::vector<CapacitySetting> out;
  std::size_t start = 0;
  while (true) {
    const auto semi = text.find(';', start);
    const std::string group = text.substr(start, semi == std::string::npos ? std::string::npos : semi - start);
    CapacitySetting c;
    c.sysfs = true;
    c.text = group;
    std::size_t at = 0;
    while (!group.empty()) {  // an empty setting is the kernel's own values
      const auto comma = group.find(',', at);
      const std::string item = group.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      const auto slash = item.find('/'), eq = item.find('=');
      if (slash == std::string::npos || eq == std::string::npos || eq < slash)
        throw bad(fmt::format("'{}' is not CACHE/KNOB=N (e.g. maple_node/sheaf_capacity=64)", item));
      std::string cache = item.substr(0, slash);
      const std::string knob = item.substr(slash + 1, eq - slash - 1), num = item.substr(eq + 1);
      if (cache.empty()) throw bad(fmt::format("'{}' names no cache ('*' is every cache with sheaves)", item));
      if (cache == "*") cache.clear();
      if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos || num.size() > 5)
        throw bad(fmt::format("'{}': '{}' is not a whole number", item, num));
      const int n = std::stoi(num);
      std::vector<std::pair<std::string, int>>* list = nullptr;
      int lo = 0;
      if (knob == "sheaf_capacity") list = &c.knobs.sheaf_capacity, lo = 1;
      else if (knob == "max_full_sheaves") list = &c.knobs.max_full_sheaves;
      else if (knob == "max_empty_sheaves") list = &c.knobs.max_empty_sheaves;
      else
        throw bad(fmt::format("'{}': unknown knob '{}' (sheaf_capacity, max_full_sheaves, max_empty_sheaves)",
                              item, knob));
      if (n < lo || n > 4096) throw bad(fmt::format("'{}': {} must be between {} and 4096", item, knob, lo));
      for (const auto& [other, value] : *list)
        if (other == cache) throw bad(fmt::format("'{}': {} of this cache is written twice in one setting", item, knob));
      list->emplace_back(cache, n);
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    out.push_back(std::move(c));
    if (semi == std::string::npos) break;
    start = semi + 1;
  }
  refuse_repeats(setting_texts(out), "--sysfs");
  return out;
}

namespace {

json load_with_overrides(const std::string& file, const std::vector<Override>& overrides,
                         const std::string& domain) {
  json doc = load_json_file(file);
  apply_overrides(doc, overrides, domain);
  return doc;
}

// configs/fits/<experiment>.<topology>.json of this workload (the experiment's "workload") on this
// topology. Unreadable files are skipped: this only feeds a note.
std::vector<std::string> fits_for(const std::string& home, const std::string& workload, const std::string& topology) {
  std::vector<std::string> out;
  std::error_code ec;
  const fs::path dir = fs::path(home) / "configs" / "fits";
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const std::string tail = "." + topology + ".json";
    if (name.size() <= tail.size() || name.compare(name.size() - tail.size(), tail.size(), tail) != 0) continue;
    const std::string experiment = name.substr(0, name.size() - tail.size());
    try {
      const json e = load_json_file((fs::path(home) / "configs" / "experiments" / (experiment + ".json")).string());
      if (e.value("workload", "") == workload) out.push_back("configs/fits/" + name);
    } catch (const std::exception&) {
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// An error a parser finds in a field that --set wrote is the --set's: it is reported as such,
// naming the file the value landed in. Field paths: "program[0].ns" is --set's "program.0.ns";
// --set caches.X addresses the caches file's "caches" object.
// Each problem of an error holding several (ConfigErrors) is blamed on its own.
[[noreturn]] void blame_set(const ConfigError& e, const std::string& file, const std::vector<Override>& overrides,
                            const std::string& domain) {
  std::vector<ConfigError::Problem> blamed;
  for (const ConfigError::Problem& p : e.problems()) {
    blamed.push_back(p);
    if (p.file != file) continue;
    std::string field;
    for (char c : p.field) {
      if (c == '[') field += '.';
      else if (c != ']') field += c;
    }
    auto under = [&](const std::string& path) {
      return field == path ||
             (field.size() > path.size() && field.compare(0, path.size(), path) == 0 && field[path.size()] == '.');
    };
    for (const auto& o : overrides)
      if (o.domain == domain && (under(o.path) || (domain == "caches" && under("caches." + o.path)))) {
        blamed.back() = {"--set", o.text, fmt::format("{} (in {}, field {})", p.message, file, p.field)};
        break;
      }
  }
  if (blamed.size() == 1) throw ConfigError(blamed[0].file, blamed[0].field, blamed[0].message);
  throw ConfigError(std::move(blamed));
}

template <class Parse>
auto parse_config(const std::string& file, const std::vector<Override>& overrides, const std::string& domain,
                  Parse parse) {
  const json doc = load_with_overrides(file, overrides, domain);
  try {
    return parse(doc);
  } catch (const ConfigError& e) {
    blame_set(e, file, overrides, domain);
  }
}

// --workload trace:FILE / ftrace:FILE: the trace, how it maps onto tasks, and a program that
// names its caches for the tasks' bindings.
void resolve_trace(Job& job, const std::vector<Override>& overrides) {
  const JobRequest& req = job.request;
  for (const auto& o : overrides)
    if (o.domain == "workload")
      throw ConfigError("--set", o.domain + "." + o.path, "a trace replay has no workload parameters");
  if (req.trace_map == "replicated") job.replay.map = TraceMap::Replicated;
  else if (req.trace_map == "mapped") job.replay.map = TraceMap::Mapped;
  else throw ConfigError("command line", "--trace-map", fmt::format("'{}' is not replicated or mapped", req.trace_map));
  std::size_t used = 0;
  double speed = -1;
  try {
    speed = std::stod(req.trace_speed, &used);
  } catch (const std::exception&) {
  }
  if (used != req.trace_speed.size() || !(speed >= 0) || speed > 1e9)
    throw ConfigError("command line", "--trace-speed",
                      fmt::format("'{}' is not a factor (0 = no waiting, 1 = the trace's own pace)", req.trace_speed));
  job.replay.speed = speed;
  job.replay.handoff_poll = job.slub_costs.trace_handoff_poll;
  auto trace = std::make_shared<Trace>(load_trace(req.workload, job.caches));
  job.program = Program{};
  job.program.name = req.workload;
  job.program.file = trace->file;
  job.program.description = "trace replay";
  job.program.caches = trace->caches;
  job.trace = std::move(trace);
}

}  // namespace

// The rule of window_warnings (job.h): RCU settles in kSettlePeriods grace periods, and a
// tick-driven period lasts at least kTicksPerPeriod ticks (TickGracePeriods: one tick notices
// it, a later one reports). Measured on amd-turin-2s-512t mmap1 v6.17 at 512 tasks, 4 ms
// periods: 76-81 M ops/s per 4 ms interval before 8 ms, 22-48 M from 12 ms on (docs/design.md).
// Callbacks given their period at the CPU's report (costs.rcu.acceleration "report") can wait
// one period more (models/rcu.h), so the first batch comes one period later.
constexpr int kSettlePeriods = 3;
constexpr int kTicksPerPeriod = 2;

int rcu_settle_periods(const SlubCostConfig& c) { return kSettlePeriods + (c.rcu_report_ticks > 0 ? 1 : 0); }

namespace {
// Quiescent states from user space only: a period not in callback overload lasts until its
// holdouts are forced, jiffies_to_sched_qs after it started (models/rcu.h). 0: not that model.
Time forced_period(const SlubCostConfig& c) {
  const bool user_only = c.rcu_grace_period_from_ticks && c.rcu_tick_user_share >= 0.0 && c.rcu_sched_qs > 0;
  return user_only ? c.rcu_sched_qs + kTicksPerPeriod * c.softirq.tick : 0;
}
}  // namespace

Time rcu_settle_time(const SlubCostConfig& c) {
  Time period = c.rcu_grace_period_from_ticks ? kTicksPerPeriod * c.softirq.tick : c.rcu_grace_period;
  if (const Time forced = forced_period(c); forced > 0) period = forced;
  return period > 0 ? rcu_settle_periods(c) * period : 0;
}

std::vector<std::string> window_warnings(const Job& job) {
  const SlubCostConfig& c = job.slub_costs;
  const Time settle = rcu_settle_time(c);
  std::vector<std::string> out;
  if (settle <= 0 || job.settle) return out;
  const char* periods = rcu_settle_periods(c) == kSettlePeriods ? "three" : "four";
  const Time forced = forced_period(c);
  const std::string how =
      c.rcu_grace_period_from_ticks
          ? (forced > 0
                 ? fmt::format("{} grace periods of up to {} ms, until holdouts are forced", periods,
                               to_us(forced) / 1000.0)
                 : fmt::format("{} grace periods of at least two {} us ticks", periods, to_us(c.softirq.tick)))
          : fmt::format("{} grace periods of {} us", periods, to_us(c.rcu_grace_period));
  if (job.warmup < settle)
    out.push_back(fmt::format("--warmup {} ms is shorter than the {} ms RCU needs to settle ({}): the throughput "
                              "is not yet steady; without --warmup and --duration the settle rule chooses the window",
                              to_us(job.warmup) / 1000.0, to_us(settle) / 1000.0, how));
  if (job.duration < settle)
    out.push_back(fmt::format("--duration {} ms spans fewer than {} grace periods ({} ms): callbacks run in "
                              "batches at period ends, and a shorter window samples that cycle unevenly",
                              to_us(job.duration) / 1000.0, periods, to_us(settle) / 1000.0));
  return out;
}

std::vector<std::string> settle_warnings(const Job& job, const JobResult& res) {
  std::vector<std::string> out;
  for (std::size_t v = 0; v < res.runs.size(); ++v)
    for (std::size_t run = 0; run < res.runs[v].size(); ++run)
      for (std::size_t row = 0; row < res.runs[v][run].size(); ++row) {
        const RunResult& r = res.runs[v][run][row];
        if (r.nr_task == 0 || r.settle.settled) continue;
        const std::string where = fmt::format("{} at {} tasks{}", job.variants[v].label, r.nr_task,
                                              job.request.runs > 1 ? fmt::format(", run {}", run + 1) : "");
        const double ms = to_us(r.window) / 1000.0, wu = to_us(r.warmup) / 1000.0;
        if (r.settle.automatic)
          out.push_back(fmt::format("{}: not settled within --settle-cap {}: {}; the figure is the mean of the last "
                                    "{} ms after {} ms, not a settled result (raise --settle-cap)",
                                    where, job.request.settle_cap, r.settle.reason, ms, wu));
        else if (!r.settle.judged)
          out.push_back(fmt::format("{}: the window {} ms after {} ms cannot be judged (its edges are not multiples "
                                    "of the settle rule's {} ms intervals); without --warmup and --duration the "
                                    "rule chooses one",
                                    where, ms, wu, to_us(kSettleStep) / 1000.0));
        else
          out.push_back(fmt::format(
              "{}: the window {} ms after {} ms is not settled: {}{}; {}without --warmup and --duration the settle "
              "rule chooses the window",
              where, ms, wu, r.settle.reason,
              r.settle.period > 0 ? fmt::format(" (the series cycles with a {} ms period)", to_us(r.settle.period) / 1000.0)
                                  : "",
              r.settle.suggest_window > 0
                  ? fmt::format("the rule would want about --warmup {}ms --duration {}ms (an estimate from this "
                                "window's spread); ",
                                to_us(r.settle.suggest_warmup) / 1000.0, to_us(r.settle.suggest_window) / 1000.0)
                  : ""));
      }
  return out;
}

// The host memory a point's fixed simulated state takes, from the machine's CPUs and nodes and
// the variant's caches (not from the host): per CPU, its task and each cache's kmem_cache_cpu and
// three sheaves (main, spare, rcu_free) full of objects; per node and cache, the barn full of
// sheaves at its limits; the page allocator's per-CPU lists of every node. Slabs beyond what
// those layers hold grow with the run and are bounded by the nodes' memory.
StateEstimate estimate_state(const Job& job, const Variant& v) {
  const Machine& m = job.machine;
  const slub::Params p = slub_params(m, v.kernel, job.caches, job.slub_costs, false, 1, v.capacity.knobs);
  // Host bytes of one object held by a layer: its free-pointer word plus a share of its slab.
  constexpr double kObjectBytes = sizeof(void*) + sizeof(void*);
  constexpr double kTaskBytes = 16384;  // a task's Cpu, frames, binding and pools (order of magnitude)
  StateEstimate e;
  const double cpus = m.nr_cpus, nodes = m.nr_nodes;
  e.cpus = cpus * kTaskBytes;
  for (const auto& c : p.caches) {
    const std::uint32_t cap = slub::effective_sheaf_capacity(
        p.features.frontend, slub::compute_geometry(c, p.features, m.nr_cpus), c.sheaf_capacity);
    const double sheaf = sizeof(slub::Sheaf) + cap * (sizeof(void*) + kObjectBytes);
    e.cpus += cpus * (sizeof(slub::KmemCacheCpu) + (cap ? 3 * sheaf : 0));
    const double barn = static_cast<double>(c.barn_max_full.value_or(v.kernel.barn_max_full)) +
                        c.barn_max_empty.value_or(v.kernel.barn_max_empty);
    e.nodes += nodes * (sizeof(slub::KmemCacheNode) + (cap ? barn * sheaf : 0));
  }
  e.pages = cpus * nodes * (slub::kPcpMaxOrder + 1) * sizeof(std::int64_t) + nodes * nodes * 3 * sizeof(Time);
  return e;
}

std::vector<SheafCapacity> sheaf_capacities(const Job& job, const Variant& v) {
  const slub::Params p = slub_params(job.machine, v.kernel, job.caches, job.slub_costs, false, 1, v.capacity.knobs);
  // The caches the program's steps use on this kernel (steps limited to others left out).
  std::vector<bool> used(job.program.caches.size(), job.trace != nullptr);
  std::function<void(const std::vector<Step>&)> mark = [&](const std::vector<Step>& steps) {
    for (const auto& s : steps) {
      if (s.cache >= 0 && static_cast<std::size_t>(s.cache) < used.size()) used[static_cast<std::size_t>(s.cache)] = true;
      mark(s.body);
    }
  };
  const Program selected = select_kernel(job.program, v.kernel.name);
  for (const auto* steps : step_lists(selected)) mark(*steps);
  std::vector<SheafCapacity> out;
  for (std::size_t i = 0; i < job.program.caches.size(); ++i)
    for (const auto& c : p.caches) {
      const std::string& name = job.program.caches[i];
      if (c.name != name || !used[i]) continue;
      SheafCapacity sc{name, 0, false};
      const slub::Geometry g = slub::compute_geometry(c, p.features, job.machine.nr_cpus);
      sc.capacity = slub::effective_sheaf_capacity(p.features.frontend, g, c.sheaf_capacity);
      sc.automatic = p.features.frontend == slub::FrontendKind::Sheaves && sc.capacity != c.sheaf_capacity;
      if (sc.capacity > 0) out.push_back(sc);
    }
  return out;
}

Job resolve_job(const JobRequest& req) {
  Job job;
  job.request = req;
  std::vector<Override> overrides;
  for (const auto& s : req.sets) overrides.push_back(parse_override(s));

  if (req.mode == "process") job.mode = Mode::Process;
  else if (req.mode == "thread") job.mode = Mode::Thread;
  else throw ConfigError("command line", "--mode", fmt::format("'{}' is not process or thread", req.mode));
  if (req.runs < 1 || req.runs > 1000)
    throw ConfigError("command line", "--runs", "must be between 1 and 1000");
  if (req.jobs < 0 || req.jobs > 1024)
    throw ConfigError("command line", "--jobs", "must be between 0 and 1024");
  job.settle = req.duration.empty() && req.warmup.empty();
  const std::string duration = req.duration.empty() ? kFixedDuration : req.duration;
  const std::string warmup = req.warmup.empty() ? kFixedWarmup : req.warmup;
  job.duration = parse_duration(duration, "--duration");
  job.warmup = warmup == "0" ? 0 : parse_duration(warmup, "--warmup");
  // The longest run a job may ask for: the event queue orders times below Engine::kMaxTime
  // (about 18.8 minutes), and tasks run a little past their stop (the iteration in progress).
  constexpr Time kLongestRun = 15 * 60 * kSec;
  static_assert(kLongestRun + kLongestRun / 4 < Engine::kMaxTime, "runs must fit the event queue's key");
  if (job.duration + job.warmup > kLongestRun)
    throw ConfigError("command line", "--duration", "warm-up plus duration must stay under 15 minutes of simulated time");
  job.settle_rule.ci_target = parse_percent(req.settle_ci, "--settle-ci");
  job.settle_rule.cap = parse_duration(req.settle_cap, "--settle-cap");
  job.settle_rule.step = kSettleStep;
  if (job.settle_rule.ci_target <= 0 || job.settle_rule.ci_target > 1)
    throw ConfigError("command line", "--settle-ci", "must be above 0% and at most 100%");
  if (job.settle_rule.cap < kSettleStep * kMinSettleIntervals || job.settle_rule.cap > kLongestRun)
    throw ConfigError("command line", "--settle-cap",
                      fmt::format("must be between {} ms and 15 minutes of simulated time",
                                  to_us(kSettleStep * kMinSettleIntervals) / 1000.0));
  const Time span = job.settle ? job.settle_rule.cap : job.warmup + job.duration;
  if (!req.interval.empty()) {
    job.interval = parse_duration(req.interval, "--interval");
    if (job.interval > span)
      throw ConfigError("command line", "--interval",
                        job.settle ? "must not exceed --settle-cap" : "must not exceed warm-up plus duration");
    if (span / job.interval > kMaxIntervals)
      throw ConfigError("command line", "--interval",
                        fmt::format("gives more than {} intervals over {}", kMaxIntervals,
                                    job.settle ? "--settle-cap" : "warm-up plus duration"));
  }

  auto topo_file = resolve_config(req.home, "configs/topologies", req.topology, "--topology");
  job.machine = parse_config(topo_file, overrides, "topology", [&](const json& d) { return parse_topology(d, topo_file); });
  job.inputs.emplace_back("topology", topo_file);
  auto costs_file = resolve_config(req.home, "configs/costs", req.costs, "--costs");
  parse_config(costs_file, overrides, "costs", [&](const json& costs_doc) {
    // Two parsers read the cost model: a field is known when either asked for it.
    auto log = std::make_shared<ReadLog>();
    job.costs = parse_costs(costs_doc, costs_file, log);
    job.slub_costs = parse_slub_costs(costs_doc, costs_file, log);
    JsonView(costs_doc, costs_file, log).check_known_fields();
    return 0;
  });
  job.inputs.emplace_back("costs", costs_file);
  job.settle_rule.min_warmup = rcu_settle_time(job.slub_costs);
  auto caches_file = resolve_config(req.home, "configs/caches", req.caches, "--caches");
  job.caches = parse_config(caches_file, overrides, "caches", [&](const json& d) { return parse_caches(d, caches_file); });
  job.inputs.emplace_back("caches", caches_file);
  if (is_trace_workload(req.workload)) {
    resolve_trace(job, overrides);
    job.inputs.emplace_back("trace", job.trace->file);
  } else {
    auto wl_file = resolve_config(req.home, "workloads", req.workload, "--workload");
    job.program = parse_config(wl_file, overrides, "workload", [&](const json& d) { return parse_workload(d, wl_file); });
    job.inputs.emplace_back("workload", wl_file);
    job.fits_here = fits_for(req.home, job.program.name, job.machine.name);
    for (std::size_t i = 0; i < job.program.caches.size(); ++i) {
      const auto& name = job.program.caches[i];
      bool known = std::any_of(job.caches.begin(), job.caches.end(),
                               [&](const slub::CacheSpec& c) { return c.name == name; });
      if (!known)
        throw ConfigError(wl_file, job.program.cache_paths[i],
                          fmt::format("cache '{}' is not in {}", name, caches_file));
    }
  }
  job.nr_tasks = parse_nr_task(req.nr_task, job.machine.nr_cpus);
  if (job.trace && job.replay.map == TraceMap::Mapped)
    for (int n : job.nr_tasks)
      if (n > static_cast<int>(job.trace->cpus.size()))
        throw ConfigError("command line", "--nr-task",
                          fmt::format("{} tasks, but the trace has {} CPUs: a mapped replay has no CPU "
                                      "for the others (use --trace-map replicated)",
                                      n, job.trace->cpus.size()));

  if (!req.sheaf_capacity.empty() && !req.sysfs.empty())
    throw ConfigError("command line", "--sysfs",
                      "give the capacities as --sysfs CACHE/sheaf_capacity=N or as --sheaf-capacity, not both");
  auto capacities = req.sysfs.empty() ? parse_sheaf_capacity(req.sheaf_capacity) : parse_sysfs(req.sysfs);
  std::vector<std::string> cache_names;
  for (const auto& c : job.caches) cache_names.push_back(c.name);
  for (const auto& cap : capacities)
    for (const auto& setting : cap.knobs.all()) {
      const std::string& cache = setting.first;  // not a structured binding: clang 14 cannot capture one
      if (!cache.empty() && std::none_of(job.caches.begin(), job.caches.end(),
                                         [&](const slub::CacheSpec& c) { return c.name == cache; }))
        throw ConfigError("command line", cap.option(),
                          fmt::format("cache '{}' is not in {}{}", cache, caches_file, did_you_mean(cache, cache_names)));
    }
  // --baseline kernel: every kernel also runs at its own settings, first among its variants,
  // unless the axis already holds them; the deltas are then taken against that variant.
  if (req.baseline != "first" && req.baseline != "kernel")
    throw ConfigError("command line", "--baseline",
                      fmt::format("'{}' is neither first (every delta against the job's first variant) nor kernel "
                                  "(each variant against the same kernel at its own settings)",
                                  req.baseline));
  const bool add_default = req.baseline == "kernel" && !capacities.empty() &&
                           std::none_of(capacities.begin(), capacities.end(),
                                        [](const CapacitySetting& c) { return c.text.empty(); });
  std::vector<CapacitySetting> axis = capacities;
  if (add_default) axis.insert(axis.begin(), CapacitySetting{});
  bool reached = false;  // some kernel has sheaves for a cache the capacity settings name
  refuse_repeats(split_list(req.kernel), "--kernel");
  for (const auto& kname : split_list(req.kernel)) {
    auto kfile = resolve_config(req.home, "configs/kernels", kname, "--kernel");
    Kernel k = parse_config(kfile, overrides, "kernel", [&](const json& d) { return parse_kernel(d, kfile); });
    job.inputs.emplace_back("kernel " + kname, kfile);
    apply_patches(k, req.patches);
    for (const auto& setting : k.sheaf_capacity) {
      const std::string& cache = setting.first;
      if (std::none_of(job.caches.begin(), job.caches.end(),
                       [&](const slub::CacheSpec& c) { return c.name == cache; }))
        throw ConfigError(kfile, "sheaf_capacity.value." + cache,
                          fmt::format("cache '{}' is not in {}{}", cache, caches_file, did_you_mean(cache, cache_names)));
    }
    // A capacity setting applies to a kernel with sheaves for one of its caches (7.0: every cache;
    // 6.18/6.19: the caches its preset lists). A kernel without runs once, at its own settings.
    auto has_sheaves = [&k](const std::string& cache) {
      if (k.frontend == FrontendKind::Sheaves) return true;
      return std::any_of(k.sheaf_capacity.begin(), k.sheaf_capacity.end(),
                         [&](const auto& s) { return cache.empty() || s.first == cache; });
    };
    bool dropped = false;
    for (const auto& given : axis) {
      CapacitySetting cap = given;
      const auto knobs = cap.knobs.all();
      const bool reaches = std::any_of(knobs.begin(), knobs.end(), [&](const auto& s) { return has_sheaves(s.first); });
      if (!cap.text.empty() && reaches) reached = true;
      if (!cap.text.empty() && !reaches) {
        if (dropped) continue;
        dropped = true;
        job.notes.push_back(fmt::format("{} has no sheaves for the caches {} names: it runs once, at its own settings",
                                        kname, given.option()));
        if (add_default) continue;  // it already runs at them, as its baseline
        cap = CapacitySetting{};
      }
      Variant v{k, cap, k.name, kname};
      if (!job.trace)
        if (const int u = unfilled_pool(select_kernel(job.program, k.name)); u >= 0)
          throw ConfigError(job.program.file, "program",
                            fmt::format("with kernel {} (steps limited to other kernels left out) a step frees from "
                                        "pool '{}', which no step allocates into: every iteration would free "
                                        "nothing, forever",
                                        k.name, job.program.pools[static_cast<std::size_t>(u)].name));
      v.label += cap.label_suffix();
      const StateEstimate st = estimate_state(job, v);
      if (st.total() > kMaxStateBytes)
        throw ConfigError(kfile, "",
                          fmt::format("variant {} on {}: the simulated state would take about {:.1f} GiB of host "
                                      "memory ({:.1f} GiB per-CPU caches and sheaves for {} CPUs, {:.1f} GiB barns "
                                      "and node lists for {} nodes, {:.1f} GiB page lists), more than the {} GiB a "
                                      "point may use: fewer CPUs or nodes, smaller sheaf capacities or barn limits",
                                      v.label, job.machine.name, st.total() / kGiB, st.cpus / kGiB,
                                      job.machine.nr_cpus, st.nodes / kGiB, job.machine.nr_nodes, st.pages / kGiB,
                                      kMaxStateBytes / kGiB));
      for (const auto& other : job.variants)
        if (other.label == v.label)
          throw ConfigError("command line", "--kernel/" + cap.option(),
                            fmt::format("variant {} is given twice", v.label));
      job.variants.push_back(v);
    }
  }
  // A setting no kernel of the job has sheaves for would change nothing: every variant would be
  // the kernel's own, labelled with a setting it ignored.
  // Without --kernel the job runs the default kernel, which the user may not know has none.
  if (!capacities.empty() && !capacities.front().text.empty() && !reached)
    throw ConfigError("command line", capacities.front().option(),
                      fmt::format("no kernel of the job ({}) has sheaves for the caches it names: the setting "
                                  "would change nothing. Sheaves are in v6.18 and v6.19 for the caches their "
                                  "presets list, and in every cache from v7.0; {}",
                                  fmt::join(split_list(req.kernel), ", "),
                                  req.kernel_defaulted
                                      ? fmt::format("--kernel defaults to {}, which has none (e.g. --kernel {},v7.0)",
                                                    req.kernel, req.kernel)
                                      : fmt::format("the {} given (--kernel {}) {} none for them (e.g. "
                                                    "--kernel {},v7.0)",
                                                    split_list(req.kernel).size() > 1 ? "kernels" : "kernel",
                                                    req.kernel, split_list(req.kernel).size() > 1 ? "have" : "has",
                                                    req.kernel)));
  job.baseline_of = baselines(job.variants, req.baseline == "kernel");
  return job;
}

std::vector<std::size_t> baselines(const std::vector<Variant>& variants, bool per_kernel) {
  std::vector<std::size_t> out(variants.size(), 0);
  if (!per_kernel) return out;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    out[v] = v;  // no variant of its kernel at the kernel's own settings: no delta
    for (std::size_t w = 0; w < variants.size(); ++w)
      if (variants[w].kernel_arg == variants[v].kernel_arg && variants[w].capacity.text.empty()) {
        out[v] = w;
        break;
      }
  }
  return out;
}

JobResult empty_result(const Job& job) {
  JobResult out;
  out.runs.assign(job.variants.size(), std::vector<std::vector<RunResult>>(
                                           job.request.runs, std::vector<RunResult>(job.nr_tasks.size())));
  out.wall_seconds.assign(job.variants.size(), 0);
  return out;
}

std::vector<PointKey> job_points(const Job& job) {
  std::vector<PointKey> units;
  for (std::size_t v = 0; v < job.variants.size(); ++v)
    for (int r = 0; r < job.request.runs; ++r)
      for (std::size_t row = 0; row < job.nr_tasks.size(); ++row)
        units.push_back({v, static_cast<std::size_t>(r), row});
  return units;
}

const std::vector<RequestField>& request_field_list() {
  using R = JobRequest;
  static const std::vector<RequestField> list = {
      {.key = "topology", .option = "--topology", .member = &R::topology, .help_place = 0, .help =
           "machine: a preset NAME (configs/topologies/NAME.json) or a FILE (a sweep takes a list, one job each); e.g. --topology small-2s-8c"},
      {.key = "workload", .option = "--workload", .member = &R::workload, .help_place = 1, .help =
           "program each task runs (a sweep takes a list, one job each): NAME (workloads/NAME.json) or FILE, or a trace to replay: trace:FILE (slubsim's format) or ftrace:FILE (ftrace / trace-cmd report text of the kmem events); e.g. --workload rwsem-standin or --workload ftrace:workloads/traces/sample-ftrace.txt"},
      {.key = "trace_map", .option = "--trace-map", .member = &R::trace_map, .help_place = 2, .help =
           "how a trace's C CPUs become the tasks: replicated (task j replays trace CPU j mod C, each group of C tasks with its own objects) or mapped (trace CPU i on task i mod N; N must not exceed C); e.g. --trace-map mapped"},
      {.key = "trace_speed", .option = "--trace-speed", .member = &R::trace_speed, .help_place = 3, .help =
           "trace timestamps are divided by this factor; 0 replays events back to back; e.g. --trace-speed 10"},
      {.key = "costs", .option = "--costs", .member = &R::costs, .help_place = 12, .help =
           "cost model: NAME (configs/costs/NAME.json) or FILE; e.g. --costs default"},
      {.key = "caches", .option = "--caches", .member = &R::caches, .help_place = 13, .help =
           "slab caches: NAME (configs/caches/NAME.json) or FILE; per-cache knobs with --set caches.maple_node.cpu_partial=104; e.g. --caches default"},
      {.key = "validate", .option = "--validate", .member = &R::validate, .help_place = 14, .help =
           "SLUB validation mode: double frees and foreign pointers are errors, and every object is checked to be in exactly one place at the end of each run; e.g. --validate"},
      {.key = "mode", .option = "--mode", .member = &R::mode, .help_place = 4, .help =
           "process (private mm per task) or thread (one shared mm); e.g. --mode thread"},
      {.key = "nr_task", .option = "--nr-task", .member = &R::nr_task, .list_join = ",", .help_place = 5, .help =
           "task counts, one result row each (each count once): N or P% of logical CPUs; the default leaves out a percentage a small machine makes 0 or a repeat; e.g. --nr-task 1,8,64 or 25%,50%,100%"},
      {.key = "kernel", .option = "--kernel", .member = &R::kernel, .list_join = ",", .help_place = 6, .help =
           "kernel preset(s) (configs/kernels/NAME.json), a list is a sweep; e.g. --kernel v6.17,v7.0"},
      {.key = "sheaf_capacity", .option = "--sheaf-capacity", .member = &R::sheaf_capacity, .list_join = ";", .help_place = 7, .help =
           "[CACHE=]N[,...]: N alone for every sheaf cache, a list of Ns is a sweep, ';' joins settings of several caches; e.g. --sheaf-capacity maple_node=64 or 32,64,128 or 'maple_node=16,vm_area_struct=16;maple_node=32,vm_area_struct=32'"},
      {.key = "sysfs", .option = "--sysfs", .member = &R::sysfs, .list_join = ";", .listed_when_default = false, .help_place = 8, .help =
           "CACHE/KNOB=N[,...]: write the sheaf knobs of the runtime-tuning RFC's /sys/kernel/slab/CACHE/ (sheaf_capacity, max_full_sheaves, max_empty_sheaves; CACHE '*' is every cache with sheaves); ';' joins settings, a sweep; e.g. --sysfs 'maple_node/sheaf_capacity=64,maple_node/max_full_sheaves=20;maple_node/sheaf_capacity=128'"},
      {.key = "baseline", .option = "--baseline", .member = &R::baseline, .listed_when_default = false, .help_place = 9, .help =
           "what each variant's delta (--uncertainty) is against: first, the job's first variant; or kernel, the same kernel at its own settings, which the job runs first among that kernel's variants when the capacity or sysfs axis lacks them: a capacity or barn-limit question answered within one kernel; e.g. --baseline kernel"},
      {.key = "set", .option = "--set", .member = &R::sets, .help_place = 10, .help =
           "KEY=VALUE: change any model parameter in the topology, costs, workload or kernel config; repeatable; e.g. --set costs.qspinlock.handoff_alpha=1.2 --set topology.latency_ns.llc=30 --set caches.maple_node.order=1"},
      {.key = "patch", .option = "--patch", .member = &R::patches, .help_place = 11, .help =
           "+NAME or -NAME: switch a patch on or off on top of every kernel preset: spare-sheaf, remote-refill-trylock, skip-freelist, refill-any-node (7.0), refill-from-partial (over cpu partial: sheaf refills from the node partial list, sheaves-for-all v4 10/22), nowait-refill (7.0-rc3: a GFP_NOWAIT allocation may refill a sheaf); repeatable; e.g. --patch +skip-freelist --patch -spare-sheaf"},
      {.key = "runs", .option = "--runs", .member = &R::runs, .help_place = 15, .help =
           "repetitions with seeds SEED, SEED+1, ...; e.g. --runs 3"},
      {.key = "seed", .option = "--seed", .member = &R::seed, .help_place = 16, .help =
           "random seed; same inputs and seed give identical JSON; e.g. --seed 7"},
      {.key = "duration", .option = "--duration", .member = &R::duration, .help_place = 17, .help =
           "a fixed measured window in simulated time (s, ms, us, ns) instead of the settle rule's (default: each point runs until the transient is over and the mean's 95% confidence interval is within --settle-ci); with it alone the warm-up is 20ms; a window that is not settled draws a warning; e.g. --duration 24ms"},
      {.key = "warmup", .option = "--warmup", .member = &R::warmup, .help_place = 18, .help =
           "a fixed simulated warm-up before the window (0 for none) instead of the settle rule's; with it alone the window is 12ms; e.g. --warmup 40ms"},
      {.key = "settle_ci", .option = "--settle-ci", .member = &R::settle_ci, .help_place = 19, .help =
           "the settle rule's target: 95% confidence half-width of the mean throughput, as a share of it; e.g. --settle-ci 1%"},
      {.key = "settle_cap", .option = "--settle-cap", .member = &R::settle_cap, .help_place = 20, .help =
           "the most simulated time the settle rule may run a point; a point that has not settled by then says so; e.g. --settle-cap 3s"},
      {.key = "interval", .option = "--interval", .member = &R::interval, .help_place = 21, .help =
           "also report throughput and spin share per interval of simulated time, warm-up included (interval.<N>.<i>.* keys); e.g. --interval 4ms"},
      {.key = "stacks", .option = nullptr, .member = &R::stacks, .listed_when_default = false, .in_sweep_files = false},
  };
  return list;
}

RunSpec point_spec(const Job& job, const PointKey& u, const std::atomic<bool>* stop) {
  RunSpec spec;
  spec.machine = &job.machine;
  spec.costs = &job.costs;
  spec.program = &job.program;
  spec.kernel = &job.variants[u.variant].kernel;
  spec.mode = job.mode;
  spec.nr_task = job.nr_tasks[u.row];
  // Each run of a job has its own seed; rows and variants of one run share it.
  spec.seed = job.request.seed + u.run;
  spec.warmup = job.warmup;
  spec.duration = job.duration;
  spec.settle = job.settle;
  spec.settle_rule = job.settle_rule;
  spec.interval = job.interval;
  spec.caches = &job.caches;
  spec.capacity = &job.variants[u.variant].capacity.knobs;
  spec.slub_costs = &job.slub_costs;
  spec.validate = job.request.validate;
  spec.trace = job.trace.get();
  spec.replay = job.replay;
  spec.stop = stop;
  spec.stacks = job.request.stacks;
  return spec;
}

RunResult simulate_point(const Job& job, const PointKey& u, const std::atomic<bool>* stop) {
  const RunSpec spec = point_spec(job, u, stop);
  try {
    return simulate(spec);
  } catch (const StalledProgram& e) {
    throw ConfigError(job.program.file.empty() ? job.program.name : job.program.file, "program", e.what());
  }
}

JobResult run_job(const Job& job, const std::function<void(const std::string&)>& progress,
                  const RunControl& control) {
  const std::vector<PointKey> units = job_points(job);

  JobResult out = empty_result(job);
  out.points_total = units.size();
  const std::size_t per_variant = static_cast<std::size_t>(job.request.runs) * job.nr_tasks.size();
  std::vector<std::size_t> variant_done(job.variants.size(), 0);
  std::mutex mu;
  // A point has its result (under mu): count it, and hand over a variant that is complete.
  auto account = [&](const PointKey& u, double wall) {
    out.wall_seconds[u.variant] += wall;
    ++out.points_done;
    if (++variant_done[u.variant] == per_variant && control.on_variant) control.on_variant(u.variant, out);
  };

  std::vector<PointKey> todo;
  for (const auto& u : units) {
    std::optional<std::pair<RunResult, double>> before;
    if (control.finished_before) before = control.finished_before(u);
    if (!before) {
      todo.push_back(u);
      continue;
    }
    out.runs[u.variant][u.run][u.row] = std::move(before->first);
    account(u, before->second);
  }

  // Largest task counts first, as validate orders its rows: the longest points start first, so
  // the host threads finish together (results go to fixed slots; only progress order changes).
  std::stable_sort(todo.begin(), todo.end(), [&](const PointKey& a, const PointKey& b) {
    return job.nr_tasks[a.row] > job.nr_tasks[b.row];
  });
  auto t0 = std::chrono::steady_clock::now();
  parallel_for(todo.size(), std::max(1, host_threads(job.request.jobs)), [&](std::size_t i) {
    const PointKey& u = todo[i];
    auto s0 = std::chrono::steady_clock::now();
    RunResult r = simulate_point(job, u, control.stop);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
    std::lock_guard<std::mutex> g(mu);
    if (control.on_point) control.on_point(u, r, wall);
    out.runs[u.variant][u.run][u.row] = std::move(r);
    account(u, wall);
    if (progress) {
      const auto& res = out.runs[u.variant][u.run][u.row];
      progress(fmt::format("[{}/{}] {} nr_task={} run={}: {} ops/s, {:.2f} s", out.points_done, units.size(),
                           job.variants[u.variant].label, job.nr_tasks[u.row], u.run + 1, res.ops_per_sec, wall));
    }
  }, control.stop);

  out.complete = out.points_done == out.points_total;
  out.wall_total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace slubsim
