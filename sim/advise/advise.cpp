#include "sim/advise/advise.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <set>

#include "models/slub/geometry.h"
#include "sim/machine/machine.h"
#include "sim/run/point_store.h"

namespace fs = std::filesystem;

namespace slubsim {

namespace {

std::vector<int> parse_values(const std::string& text, const std::string& option, int lo, int hi) {
  if (text.empty()) throw ConfigError("command line", option, "an empty range: give at least one value");
  std::set<int> out;
  for (const auto& item : split_list(text)) {
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos || item.size() > 5)
      throw ConfigError("command line", option, fmt::format("'{}' is not a whole number", item));
    const int v = std::stoi(item);
    if (v < lo || v > hi) throw ConfigError("command line", option, fmt::format("{} must be between {} and {}", v, lo, hi));
    out.insert(v);
  }
  if (out.empty()) throw ConfigError("command line", option, "an empty range: give at least one value");
  return {out.begin(), out.end()};
}

std::string join_settings(const std::vector<Setting>& settings) {
  std::string out;
  for (std::size_t i = 0; i < settings.size(); ++i) out += (i ? ";" : "") + settings[i].sysfs();
  return out;
}

// (fit file, scale) of every calibration-set fit of this workload (configs/fits/<experiment>.
// <topology>.json whose experiment runs it and is in the calibration set).
std::vector<std::pair<std::string, double>> fits_of_workload(const std::string& home, const std::string& workload) {
  std::vector<std::pair<std::string, double>> out;
  std::error_code ec;
  const fs::path dir = fs::path(home) / "configs" / "fits";
  if (!fs::is_directory(dir, ec)) return out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    try {
      const json fit = load_json_file(f.string());
      const std::string id = fit.at("experiment").get<std::string>();
      const json e = load_json_file((fs::path(home) / "configs" / "experiments" / (id + ".json")).string());
      if (e.value("workload", "") != workload || !e.value("calibration_set", false)) continue;
      out.emplace_back(f.stem().string(), fit.at("scale").get<double>());
    } catch (const std::exception&) {
      // A fit that cannot be read does not widen the range; validate reports it.
    }
  }
  return out;
}

json outcome_json(const SettingOutcome& o) {
  return {{"setting", o.setting.empty() ? "kernel defaults" : o.setting},
          {"ops_per_sec", o.ops},
          {"half_width", o.half_width},
          {"sunreclaim_kb", std::round(o.memory_kb * 10) / 10},
          {"settled", o.settled}};
}

}  // namespace

AdvisePlan resolve_advise(const AdviseRequest& r) {
  AdvisePlan plan;
  plan.request = r;
  if (split_list(r.base.kernel).size() != 1)
    throw ConfigError("command line", "--kernel", "advise searches one kernel's knobs: give one preset");
  if (split_list(r.base.topology).size() != 1)
    throw ConfigError("command line", "--topology", "advise answers for one machine: give one topology");
  if (split_list(r.base.workload).size() != 1)
    throw ConfigError("command line", "--workload", "advise answers for one workload: give one");
  if (r.memory_budget_mb < 0 || !std::isfinite(r.memory_budget_mb))
    throw ConfigError("command line", "--memory-budget", "must be a positive number of MB (0: no budget)");
  JobRequest jr = r.base;
  jr.sysfs.clear();
  jr.sheaf_capacity.clear();
  const Job job = resolve_job(jr);
  plan.kernel = job.variants.front().kernel.name;
  plan.nr_tasks = job.nr_tasks;
  const auto sheaves = sheaf_capacities(job, job.variants.front());
  std::vector<std::string> names = r.caches.empty() ? std::vector<std::string>{} : split_list(r.caches);
  if (names.empty()) {
    for (const auto& s : sheaves) names.push_back(s.cache);
    if (names.empty())
      throw ConfigError("command line", "--kernel",
                        fmt::format("{} has no sheaves for the caches {} uses: there is nothing to tune", plan.kernel,
                                    job.program.name));
  }
  const auto capacities = parse_values(r.capacities, "--capacities", 1, 4096);
  const auto full = parse_values(r.max_full, "--max-full-sheaves", 0, 4096);
  const auto empty = parse_values(r.max_empty, "--max-empty-sheaves", 0, 4096);
  const Kernel& k = job.variants.front().kernel;
  // The uncertain inputs' ends.
  {
    Bound lo{"estimates-low", {}, ""}, hi{"estimates-high", {}, ""};
    std::string moved;
    for (int d = 0; d < kDistanceClasses; ++d) {
      const char* name = distance_name(static_cast<Distance>(d));
      if (!job.machine.latency_estimate[d]) continue;
      const auto& r = job.machine.latency_range_ns[d];
      if (r[1] <= 0) {
        plan.fixed.push_back(fmt::format("latency_ns.{} (an estimate without a stated range)", name));
        continue;
      }
      lo.sets.push_back(fmt::format("topology.latency_ns.{}={}", name, r[0]));
      hi.sets.push_back(fmt::format("topology.latency_ns.{}={}", name, r[1]));
      moved += fmt::format("{}{} {}-{} ns", moved.empty() ? "" : ", ", name, r[0], r[1]);
    }
    if (!lo.sets.empty()) {
      lo.what = hi.what = "the preset's estimated latencies at the ends of their stated ranges: " + moved;
      plan.bounds.push_back(lo);
      plan.bounds.push_back(hi);
    }
    double smin = 1, smax = 1;
    std::vector<std::string> from;
    for (const auto& f : fits_of_workload(r.base.home, job.program.name)) {
      smin = std::min(smin, f.second);
      smax = std::max(smax, f.second);
      from.push_back(fmt::format("{} {}", f.first, f.second));
    }
    std::vector<const ProgramParameter*> placeholders;
    for (const auto& p : job.program.parameters)
      if (p.placeholder) placeholders.push_back(&p);
    if (!placeholders.empty() && smin < smax) {
      // An end at scale 1 is the placeholders themselves, which the search already ran.
      Bound nlo{"nonslab-low", {}, ""}, nhi{"nonslab-high", {}, ""};
      for (const auto* p : placeholders) {
        const double ns = to_ns(p->ns);
        nlo.sets.push_back(fmt::format("workload.parameters.{}={}", p->name, ns * smin));
        nhi.sets.push_back(fmt::format("workload.parameters.{}={}", p->name, ns * smax));
      }
      nlo.what = nhi.what = fmt::format("the workload's placeholder non-slab times x {} to x {} (the calibration "
                                        "fits of {}: {}; the placeholders: 1)",
                                        smin, smax, job.program.name, fmt::join(from, ", "));
      if (smin < 1) plan.bounds.push_back(nlo);
      if (smax > 1) plan.bounds.push_back(nhi);
    } else if (!placeholders.empty()) {
      plan.fixed.push_back(fmt::format("the non-slab time of {} (no calibration fit of this workload to span)",
                                       job.program.name));
    }
  }
  for (const auto& name : names) {
    if (std::none_of(job.caches.begin(), job.caches.end(), [&](const slub::CacheSpec& c) { return c.name == name; }))
      throw ConfigError("command line", "--caches", fmt::format("cache '{}' is not in the caches file", name));
    auto it = std::find_if(sheaves.begin(), sheaves.end(), [&](const SheafCapacity& s) { return s.cache == name; });
    if (it == sheaves.end())
      throw ConfigError("command line", "--caches",
                        fmt::format("cache '{}' has no sheaves under {} in {} (or the workload does not use it)",
                                    name, plan.kernel, job.program.name));
    CacheKnobs c;
    c.cache = name;
    c.defaults[0] = static_cast<int>(it->capacity);
    c.defaults[1] = static_cast<int>(k.barn_max_full);
    c.defaults[2] = static_cast<int>(k.barn_max_empty);
    c.values[0] = capacities;
    c.values[1] = full;
    c.values[2] = empty;
    plan.caches.push_back(std::move(c));
  }
  // The least SUnreclaim any setting can have: every CPU holds a main sheaf of each cache with
  // sheaves from the cache's creation (its struct is kmalloc'd), at the smallest capacity searched.
  if (r.memory_budget_mb > 0) {
    double floor = 0;
    for (const auto& s : sheaves) {
      std::uint32_t cap = s.capacity;
      for (const auto& c : plan.caches)
        if (c.cache == s.cache) cap = static_cast<std::uint32_t>(c.values[0].front());
      floor += static_cast<double>(job.machine.nr_cpus) * static_cast<double>(slub::sheaf_struct_bytes(cap));
    }
    if (r.memory_budget_mb * 1024.0 * 1024.0 < floor)
      throw ConfigError("command line", "--memory-budget",
                        fmt::format("{} MB is below the minimum state: the main sheaves of {} CPUs alone take "
                                    "{:.4g} MB at the smallest capacities searched",
                                    r.memory_budget_mb, job.machine.nr_cpus, floor / (1024.0 * 1024.0)));
  }
  return plan;
}

SweepRequest stage_request(const AdvisePlan& plan, const std::vector<Setting>& settings) {
  SweepRequest s;
  s.base = plan.request.base;
  s.base.sheaf_capacity.clear();
  s.base.sysfs = join_settings(settings);
  s.topologies = {s.base.topology};
  s.workloads = {s.base.workload};
  return s;
}

StageOutcomes read_stage(const AdvisePlan& plan, const Sweep& s, const std::vector<Setting>& settings,
                         const std::string& dir) {
  StageOutcomes out;
  out.settings = settings;
  out.by_row.assign(plan.nr_tasks.size(), std::vector<SettingOutcome>(settings.size()));
  out.seen.assign(plan.nr_tasks.size(),
                  std::vector<std::vector<std::array<int, 2>>>(
                      settings.size(), std::vector<std::array<int, 2>>(plan.caches.size(), {kUnknownSeen, kUnknownSeen})));
  for (const auto& p : s.points) {
    const SweepJob& sj = s.jobs[p.job];
    const std::string file = (fs::path(dir) / sj.dir / "points" / (point_id(sj.job, p.key) + ".json")).string();
    const RunResult r = run_result_from_json(load_json_file(file), file);
    SettingOutcome& o = out.by_row.at(p.key.row).at(p.key.variant);
    o.setting = settings.at(p.key.variant).sysfs();
    o.ops = static_cast<double>(r.ops_per_sec);
    o.half_width = r.settle.half_width;
    o.settled = r.settle.settled;
    double bytes = static_cast<double>(r.slab_bytes);
    for (const auto& c : r.caches) bytes += static_cast<double>(c.layers.sheaf_bytes);
    o.memory_kb = bytes / 1024.0;
    for (std::size_t c = 0; c < plan.caches.size(); ++c)
      for (const auto& cr : r.caches)
        if (cr.name == plan.caches[c].cache)
          out.seen.at(p.key.row).at(p.key.variant)[c] = {cr.barn_full_seen, cr.barn_empty_seen};
  }
  return out;
}

std::vector<std::array<int, 2>> barn_seen(const StageOutcomes& stage0) {
  std::vector<std::array<int, 2>> out;
  for (const auto& row : stage0.seen)
    for (const auto& setting : row) {
      if (out.empty()) out.assign(setting.size(), {-1, -1});
      for (std::size_t c = 0; c < setting.size(); ++c)
        for (int k = 0; k < 2; ++k) out[c][k] = std::max(out[c][k], setting[c][k]);
    }
  return out;
}

SameRun same_as_defaults(const AdvisePlan& plan, const std::vector<std::array<int, 2>>& seen) {
  std::map<std::string, std::array<int, 2>> by_cache;
  for (std::size_t c = 0; c < plan.caches.size() && c < seen.size(); ++c) by_cache[plan.caches[c].cache] = seen[c];
  return [by_cache](const CacheKnobs& c, Knob k, int v) {
    if (k == Knob::SheafCapacity) return false;
    const auto it = by_cache.find(c.cache);
    if (it == by_cache.end()) return false;
    // The default limit was never reached (every check passed), and v would not be either.
    const int high = it->second[k == Knob::MaxFullSheaves ? 0 : 1];
    return c.get(k) > high && v > high;
  };
}

std::vector<Setting> stage2_settings(const AdvisePlan& plan, const StageOutcomes& stage1) {
  std::vector<Setting> out;
  for (const auto& row : stage1.by_row) {
    const auto def = std::find_if(row.begin(), row.end(), [](const SettingOutcome& o) { return o.setting.empty(); });
    if (def == row.end()) continue;
    std::vector<std::array<std::optional<int>, 3>> best(plan.caches.size());
    std::vector<std::array<double, 3>> best_ops(plan.caches.size(), {0, 0, 0});
    for (std::size_t i = 0; i < stage1.settings.size(); ++i) {
      const Setting& s = stage1.settings[i];
      const SettingOutcome& o = row[i];
      if (s.writes.size() != 1 || !o.settled || !beats(o, *def)) continue;
      const auto& w = s.writes.front();
      for (std::size_t c = 0; c < plan.caches.size(); ++c)
        if (plan.caches[c].cache == w.cache) {
          const int k = static_cast<int>(w.knob);
          if (!best[c][k] || o.ops > best_ops[c][k]) {
            best[c][k] = w.value;
            best_ops[c][k] = o.ops;
          }
        }
    }
    Setting joint = combine(plan.caches, best);
    if (joint.writes.size() < 2) continue;  // one write or none: already run in stage 1
    if (std::find(out.begin(), out.end(), joint) == out.end()) out.push_back(joint);
  }
  return out;
}

std::vector<Setting> settings_to_check(const AdvisePlan& plan, const StageOutcomes& all) {
  std::vector<std::size_t> picked;
  for (const auto& row : all.by_row) {
    const Choice c = choose(row, plan.request.memory_budget_mb * 1024.0);
    for (const auto& i : {c.best, c.runner_up, c.defaults})
      if (i && std::find(picked.begin(), picked.end(), *i) == picked.end()) picked.push_back(*i);
  }
  std::sort(picked.begin(), picked.end());
  std::vector<Setting> out;
  for (std::size_t i : picked) out.push_back(all.settings[i]);
  return out;
}

SweepRequest bound_request(const AdvisePlan& plan, const Bound& b, const std::vector<Setting>& settings) {
  SweepRequest s = stage_request(plan, settings);
  s.base.sets.insert(s.base.sets.end(), b.sets.begin(), b.sets.end());
  return s;
}

json advice_json(const AdvisePlan& plan, const StageOutcomes& all, const std::vector<std::array<int, 2>>& seen,
                 const std::vector<BoundCheck>& checks) {
  const double budget_kb = plan.request.memory_budget_mb * 1024.0;
  json rows = json::array();
  std::size_t points = 0;
  for (std::size_t r = 0; r < plan.nr_tasks.size(); ++r) {
    const auto& o = all.by_row[r];
    points += o.size();
    const Choice c = choose(o, budget_kb);
    json row = {{"nr_task", plan.nr_tasks[r]}, {"settings_run", o.size()}, {"over_budget", c.over_budget}};
    if (c.defaults) row["defaults"] = outcome_json(o[*c.defaults]);
    if (c.best) {
      row["best"] = outcome_json(o[*c.best]);
      if (c.defaults && o[*c.defaults].ops > 0) {
        const SettingOutcome& d = o[*c.defaults];
        const SettingOutcome& b = o[*c.best];
        row["gain_pct"] = std::round(1e4 * (b.ops / d.ops - 1)) / 100;
        row["gain_half_width_pct"] = std::round(1e4 * std::hypot(b.half_width, d.half_width) / d.ops) / 100;
        row["gain_is_tie"] = c.gain_is_tie;
        row["sunreclaim_delta_kb"] = std::round(10 * (b.memory_kb - d.memory_kb)) / 10;
      }
    } else {
      row["best"] = nullptr;
    }
    if (c.runner_up) row["runner_up"] = outcome_json(o[*c.runner_up]);
    if (c.fastest_unbudgeted) {
      row["fastest_over_budget"] = outcome_json(o[*c.fastest_unbudgeted]);
      if (c.best) {
        const double lost = 1 - o[*c.best].ops / o[*c.fastest_unbudgeted].ops;
        row["budget_cost_pct"] = std::round(1e4 * lost) / 100;
      }
    }
    // At each bound, the same choice among the settings re-run there.
    json at_bounds = json::array();
    std::vector<std::string> flips;
    for (const auto& bc : checks) {
      const auto& bo = bc.outcomes.by_row[r];
      const Choice cb = choose(bo, budget_kb);
      const std::string none = cb.over_budget ? "(none settled within budget)" : "(none settled)";
      const std::string pick = cb.best ? bo[*cb.best].setting : none;
      const std::string nominal = c.best ? o[*c.best].setting : std::string("(none within budget)");
      json b = {{"bound", bc.bound}, {"pick", pick.empty() ? "kernel defaults" : pick}};
      if (cb.best) b["pick_ops_per_sec"] = bo[*cb.best].ops;
      for (const auto& x : bo)
        if (x.setting == nominal) b["nominal_pick_ops_per_sec"] = x.ops;
      at_bounds.push_back(b);
      if (pick != nominal) flips.push_back(fmt::format("{} picks {}", bc.bound, pick.empty() ? "the defaults" : pick));
    }
    row["bounds"] = at_bounds;
    json every = json::array();
    for (const auto& x : o) every.push_back(outcome_json(x));
    row["settings"] = every;  // every setting run at this task count, in the order run
    if (checks.empty())
      row["robustness"] = "not checked (no uncertain input with a stated range)";
    else if (flips.empty())
      row["robustness"] = "robust";
    else
      row["robustness"] = fmt::format("fragile: {}", fmt::join(flips, "; "));
    rows.push_back(row);
  }
  for (const auto& bc : checks)
    for (const auto& row : bc.outcomes.by_row) points += row.size();
  json caches = json::array();
  const SameRun same = same_as_defaults(plan, seen);
  for (std::size_t i = 0; i < plan.caches.size(); ++i) {
    const CacheKnobs& c = plan.caches[i];
    json d = json::object();
    for (Knob k : kKnobs) {
      json kd = {{"default", c.get(k)}, {"values", c.values[static_cast<int>(k)]}};
      if (k != Knob::SheafCapacity && i < seen.size()) {
        const int high = seen[i][k == Knob::MaxFullSheaves ? 0 : 1];
        json skipped = json::array();
        for (int v : c.values[static_cast<int>(k)])
          if (v != c.get(k) && same(c, k, v)) skipped.push_back(v);
        kd["barn_high_water"] = high;  // -1: the limit was never checked
        kd["same_as_default"] = skipped;
      }
      d[knob_name(k)] = kd;
    }
    caches.push_back({{"cache", c.cache}, {"knobs", d}});
  }
  return {{"format", "slubsim-advice-1"},
          {"topology", plan.request.base.topology},
          {"workload", plan.request.base.workload},
          {"kernel", plan.kernel},
          {"memory_budget_mb", plan.request.memory_budget_mb},
          {"search",
           "the kernel's defaults; each (cache, knob, value) alone, except barn limits above the most sheaves "
           "the barn held at a limit check under the defaults (the same simulation); then per task count each "
           "cache's knobs at their best beyond the confidence intervals, written together; the pick is the "
           "cheapest setting tied with the fastest within the budget"},
          {"points", points},
          {"bounds", [&] {
             json b = json::array();
             for (const auto& x : plan.bounds) b.push_back({{"name", x.name}, {"moves", x.what}, {"sets", x.sets}});
             return b;
           }()},
          {"fixed", plan.fixed},
          {"caches", caches},
          {"rows", rows}};
}

std::string advice_table(const AdvisePlan& plan, const json& advice) {
  auto mb = [](const json& o) { return fmt::format("{:.1f}", o["sunreclaim_kb"].get<double>() / 1024.0); };
  auto ops = [](const json& o) {
    return fmt::format("{:.0f} ± {:.0f}{}", o["ops_per_sec"].get<double>(), o["half_width"].get<double>(),
                       o["settled"].get<bool>() ? "" : " (not settled)");
  };
  std::string t = fmt::format("slubsim advise: {} on {}, kernel {}{}\n\n", plan.request.base.workload,
                              plan.request.base.topology, plan.kernel,
                              plan.request.memory_budget_mb > 0
                                  ? fmt::format(", memory budget {:.0f} MB", plan.request.memory_budget_mb)
                                  : std::string());
  t += "| tasks | setting | ops/s ± 95% CI | gain vs defaults | SUnreclaim MB (vs defaults) | runner-up (ops/s) | "
       "robust? |\n";
  t += "|---|---|---|---|---|---|---|\n";
  for (const auto& row : advice["rows"]) {
    std::string best = "none within budget", o = "-", gain = "-", mem = "-", runner = "-";
    if (!row["best"].is_null()) {
      best = row["best"]["setting"].get<std::string>();
      o = ops(row["best"]);
      mem = mb(row["best"]);
      if (row.contains("sunreclaim_delta_kb"))
        mem += fmt::format(" ({:+.1f})", row["sunreclaim_delta_kb"].get<double>() / 1024.0);
      if (row.contains("gain_pct"))
        gain = fmt::format("{:+.1f}% ± {:.1f}{}", row["gain_pct"].get<double>(), row["gain_half_width_pct"].get<double>(),
                           row["gain_is_tie"].get<bool>() ? " (tie)" : "");
    }
    if (row.contains("runner_up"))
      runner = fmt::format("{} ({:.0f})", row["runner_up"]["setting"].get<std::string>(),
                           row["runner_up"]["ops_per_sec"].get<double>());
    t += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", row["nr_task"].get<int>(), best, o, gain, mem, runner,
                     row["robustness"].get<std::string>());
    if (row.contains("budget_cost_pct"))
      t += fmt::format("|  | the budget excluded {} setting(s); the fastest, {}, was {:.1f}% faster | | | | | |\n",
                       row["over_budget"].get<std::size_t>(), row["fastest_over_budget"]["setting"].get<std::string>(),
                       row["budget_cost_pct"].get<double>() / (1 - row["budget_cost_pct"].get<double>() / 100));
  }
  t += fmt::format("\n{} simulations; {}\n", advice["points"].get<std::size_t>(), advice["search"].get<std::string>());
  return t;
}

}  // namespace slubsim
