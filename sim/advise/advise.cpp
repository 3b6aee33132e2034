// sim/advise/: `slubsim advise`, which sheaf capacity and barn limits to run for a machine and
// workload: the search over the knobs (choose.h picks, advise.h plans and reports), run as sweeps.
// This file: resolving a request, the search's rounds, and the advice report.
#include "sim/advise/advise.h"

#include "sim/trust/inputs.h"
#include "sim/trust/record.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "models/slub/geometry.h"
#include "sim/machine/machine.h"
#include "sim/run/point_store.h"
#include "sim/sweep/merge.h"

namespace fs = std::filesystem;

namespace slubsim {

namespace {

std::vector<int> parse_values(const std::string& text, const std::string& option, int lo, int hi) {
  if (text.empty()) throw ConfigError("command line", option, "an empty range: give at least one value");
  refuse_repeats(split_list(text), option);
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
  if (r.search != "climb" && r.search != "grid")
    throw ConfigError("command line", "--search", fmt::format("'{}' is not climb or grid", r.search));
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
  refuse_repeats(names, "--caches");
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
  // The uncertain inputs' ends, from the catalogue (sim/trust/inputs.h): the machine's estimated
  // latencies together, then the workload's placeholder non-slab times together.
  {
    const std::vector<UncertainInput> inputs = uncertain_inputs(job);
    auto input = [&](const std::string& name) -> const UncertainInput* {
      for (const auto& in : inputs)
        if (in.name == name) return &in;
      return nullptr;
    };
    Bound lo{"estimates-low", {}, ""}, hi{"estimates-high", {}, ""};
    std::string moved;
    for (int d = 0; d < kDistanceClasses; ++d) {
      const char* name = distance_name(static_cast<Distance>(d));
      const UncertainInput* in = input(fmt::format("topology.latency_ns.{}", name));
      if (!in || !estimated(*in)) continue;  // an estimate, or a copy of another machine's figure
      if (!in->range) {
        plan.fixed.push_back(fmt::format("latency_ns.{} (an estimate without a range)", name));
        continue;
      }
      const auto& r = *in->range;
      lo.sets.push_back(fmt::format("{}={}", in->name, r[0]));
      hi.sets.push_back(fmt::format("{}={}", in->name, r[1]));
      moved += fmt::format("{}{} {}-{} ns", moved.empty() ? "" : ", ", name, r[0], r[1]);
    }
    if (!lo.sets.empty()) {
      lo.what = hi.what = "the machine's estimated latencies at the ends of their ranges: " + moved;
      plan.bounds.push_back(lo);
      plan.bounds.push_back(hi);
    }
    const std::vector<WorkloadFit> fits = workload_fits(r.base.home, job.program.name, job.machine.name);
    const auto [smin, smax] = fit_span(fits);
    std::vector<std::string> from;
    for (const auto& f : fits) from.push_back(fmt::format("{} {}{}", f.name, f.scale, f.this_machine ? " (this machine's)" : ""));
    Bound nlo{"nonslab-low", {}, ""}, nhi{"nonslab-high", {}, ""};
    bool placeholders = false;
    for (const auto& in : inputs) {
      if (in.kind != UncertainInput::Kind::Placeholder || in.name.rfind("workload.", 0) != 0) continue;
      placeholders = true;
      if (!in.range) continue;
      nlo.sets.push_back(fmt::format("{}={}", in.name, (*in.range)[0]));
      nhi.sets.push_back(fmt::format("{}={}", in.name, (*in.range)[1]));
    }
    if (!nlo.sets.empty()) {
      // An end at scale 1 is the placeholders themselves, which the search already ran.
      nlo.what = nhi.what = fmt::format("the workload's placeholder non-slab times x {} to x {} (the fits of {}: "
                                        "{}; the placeholders: 1)",
                                        smin, smax, job.program.name, fmt::join(from, ", "));
      if (smin < 1) plan.bounds.push_back(nlo);
      if (smax > 1) plan.bounds.push_back(nhi);
    } else if (placeholders) {
      plan.fixed.push_back(fmt::format("the non-slab time of {} (no fit of this workload to span)",
                                       job.program.name));
    }
  }
  for (const auto& name : names) {
    if (std::none_of(job.caches.begin(), job.caches.end(), [&](const slub::CacheSpec& c) { return c.name == name; }))
      throw ConfigError("command line", "--caches",
                        fmt::format("cache '{}' is not in the caches file{}", name,
                                    did_you_mean(name, [&] {
                                      std::vector<std::string> known;
                                      for (const auto& c : job.caches) known.push_back(c.name);
                                      return known;
                                    }())));
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
    // What the kernel runs with each capacity written (7.0 raises one below its automatic value).
    std::map<int, int> used;
    for (int v : capacities) {
      Variant written = job.variants.front();
      written.capacity.knobs = SheafKnobs{};
      written.capacity.knobs.sheaf_capacity = {{name, v}};
      for (const auto& sc : sheaf_capacities(job, written))
        if (sc.cache == name) used[v] = static_cast<int>(sc.capacity);
    }
    used[c.defaults[0]] = c.defaults[0];
    plan.caches.push_back(std::move(c));
    plan.capacity_used.push_back(std::move(used));
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

std::string row_dir(int nr_task) { return fmt::format("tasks-{}", nr_task); }

std::vector<Rung> ladder(const AdvisePlan& plan, std::size_t cache, Knob k, std::array<int, 2> seen) {
  const CacheKnobs& c = plan.caches.at(cache);
  const int def = c.get(k);
  // What the kernel runs with value v written.
  auto key = [&](int v) {
    if (k == Knob::SheafCapacity) {
      const auto it = plan.capacity_used.at(cache).find(v);
      return it == plan.capacity_used.at(cache).end() ? v : it->second;
    }
    // A limit above the most sheaves the barn held at a check is never reached, as the default's.
    const int high = seen[k == Knob::MaxFullSheaves ? 0 : 1];
    return def > high && v > high ? def : v;
  };
  std::map<int, Rung> by_key;
  Rung& home = by_key[key(def)];
  home.value = def;
  home.is_default = true;
  for (int v : c.values[static_cast<int>(k)]) {
    if (v == def) continue;
    auto [it, fresh] = by_key.try_emplace(key(v));
    Rung& r = it->second;
    if (fresh) r.value = v;
    else r.same.push_back(v);  // candidates ascend: the first of a group is its smallest
  }
  std::vector<Rung> out;
  for (auto& [_, r] : by_key) out.push_back(std::move(r));
  return out;
}

namespace {

Setting single(const AdvisePlan& plan, const Climb& c, std::size_t rung) {
  return Setting{{{plan.caches[c.cache].cache, c.knob, c.rungs[rung].value}}};
}

// The outcome of `s` at this task count, when it has run.
const SettingOutcome* find_outcome(const RowOutcomes& run, const Setting& s) {
  for (std::size_t i = 0; i < run.settings.size(); ++i)
    if (run.settings[i] == s) return &run.outcomes[i];
  return nullptr;
}

const SettingOutcome& rung_outcome(const AdvisePlan& plan, const RowSearch& rs, const Climb& c, std::size_t rung) {
  if (rung == c.home) return rs.run.outcomes.front();  // the defaults
  const SettingOutcome* o = find_outcome(rs.run, single(plan, c, rung));
  if (!o) throw std::logic_error("advise: a climb's rung has no outcome");
  return *o;
}

std::string rung_text(const Climb& c, std::size_t rung) {
  return c.rungs[rung].is_default ? fmt::format("the default {}", c.rungs[rung].value)
                                  : std::to_string(c.rungs[rung].value);
}

}  // namespace

void start_search(const AdvisePlan& plan, RowSearch& rs) {
  rs.climbs.clear();
  for (std::size_t c = 0; c < plan.caches.size(); ++c)
    for (Knob k : kKnobs) {
      Climb cl;
      cl.cache = c;
      cl.knob = k;
      cl.rungs = ladder(plan, c, k, c < rs.seen.size() ? rs.seen[c] : std::array<int, 2>{-1, -1});
      for (std::size_t i = 0; i < cl.rungs.size(); ++i)
        if (cl.rungs[i].is_default) cl.home = cl.at = i;
      if (cl.rungs.size() == 1) {
        cl.done = true;
        cl.ended = "every candidate runs as the default";
      }
      rs.climbs.push_back(std::move(cl));
    }
}

std::vector<Setting> next_round(const AdvisePlan& plan, const RowSearch& rs) {
  std::vector<Setting> out;
  const bool grid = plan.request.search == "grid";
  for (const Climb& c : rs.climbs) {
    if (c.done) continue;
    if (grid || c.direction == 0) {
      for (std::size_t i = 0; i < c.rungs.size(); ++i) {
        const bool neighbour = i + 1 == c.home || i == c.home + 1;
        if (i != c.home && (grid || neighbour)) out.push_back(single(plan, c, i));
      }
    } else {
      out.push_back(single(plan, c, static_cast<std::size_t>(static_cast<long>(c.at) + c.direction)));
    }
  }
  return out;
}

void record_round(const AdvisePlan& plan, RowSearch& rs, const RowOutcomes& round) {
  rs.run.settings.insert(rs.run.settings.end(), round.settings.begin(), round.settings.end());
  rs.run.outcomes.insert(rs.run.outcomes.end(), round.outcomes.begin(), round.outcomes.end());
  rs.run.seen.insert(rs.run.seen.end(), round.seen.begin(), round.seen.end());
  ++rs.rounds;
  const bool grid = plan.request.search == "grid";
  for (Climb& c : rs.climbs) {
    if (c.done) continue;
    const SettingOutcome& here = rung_outcome(plan, rs, c, c.at);
    if (grid || c.direction == 0) {
      // The better of the rungs run that beats where the climb stands.
      std::optional<std::size_t> best;
      for (std::size_t i = 0; i < c.rungs.size(); ++i) {
        if (i == c.home || !(grid || i + 1 == c.home || i == c.home + 1)) continue;
        c.path.push_back(c.rungs[i].value);
        const SettingOutcome& o = rung_outcome(plan, rs, c, i);
        if (beats(o, here) && (!best || o.ops > rung_outcome(plan, rs, c, *best).ops)) best = i;
      }
      if (!best) {
        c.done = true;
        c.ended = grid ? "no value beats the default beyond the confidence intervals"
                       : "neither neighbour beats the default beyond the confidence intervals";
        continue;
      }
      c.direction = *best > c.at ? 1 : -1;
      c.at = *best;
      if (grid) {
        c.done = true;
        c.ended = "every value run";
        continue;
      }
    } else {
      const std::size_t next = static_cast<std::size_t>(static_cast<long>(c.at) + c.direction);
      c.path.push_back(c.rungs[next].value);
      if (!beats(rung_outcome(plan, rs, c, next), here)) {
        c.done = true;
        c.ended = fmt::format("{} does not beat {} beyond the confidence intervals", rung_text(c, next),
                              rung_text(c, c.at));
        continue;
      }
      c.at = next;
    }
    const long beyond = static_cast<long>(c.at) + c.direction;
    if (beyond < 0 || beyond >= static_cast<long>(c.rungs.size())) {
      c.done = true;
      c.ended = fmt::format("{} is the end of the range", c.rungs[c.at].value);
    }
  }
}

std::vector<Setting> joint_settings(const AdvisePlan& plan, const RowSearch& rs) {
  std::vector<std::array<std::optional<int>, 3>> best(plan.caches.size());
  for (const Climb& c : rs.climbs)
    if (c.at != c.home) best[c.cache][static_cast<int>(c.knob)] = c.rungs[c.at].value;
  const Setting joint = combine(plan.caches, best);
  if (joint.writes.size() < 2 || find_outcome(rs.run, joint)) return {};
  return {joint};
}

std::vector<Setting> settings_to_check(const AdvisePlan& plan, const RowOutcomes& run) {
  const Choice c = choose(run.outcomes, plan.request.memory_budget_mb * 1024.0);
  std::vector<std::size_t> picked;
  for (const auto& i : {c.best, c.runner_up, c.defaults})
    if (i && std::find(picked.begin(), picked.end(), *i) == picked.end()) picked.push_back(*i);
  std::sort(picked.begin(), picked.end());
  std::vector<Setting> out;
  for (std::size_t i : picked) out.push_back(run.settings[i]);
  return out;
}

SweepRequest stage_request(const AdvisePlan& plan, const std::vector<Setting>& settings, int nr_task,
                           const Bound* bound) {
  SweepRequest s;
  s.base = plan.request.base;
  s.base.sheaf_capacity.clear();
  s.base.sysfs = join_settings(settings);
  s.base.nr_task = std::to_string(nr_task);
  if (bound) s.base.sets.insert(s.base.sets.end(), bound->sets.begin(), bound->sets.end());
  s.topologies = {s.base.topology};
  s.workloads = {s.base.workload};
  return s;
}

RowOutcomes read_stage(const AdvisePlan& plan, const Sweep& s, const std::vector<Setting>& settings,
                       const std::string& dir) {
  RowOutcomes out;
  out.settings = settings;
  out.outcomes.resize(settings.size());
  out.seen.assign(settings.size(), std::vector<std::array<int, 2>>(plan.caches.size(), {kUnknownSeen, kUnknownSeen}));
  for (const auto& p : s.points) {
    const SweepJob& sj = s.jobs[p.job];
    const std::string file = (fs::path(dir) / sj.dir / "points" / (point_id(sj.job, p.key) + ".json")).string();
    const RunResult r = run_result_from_json(load_json_file(file), file);
    SettingOutcome& o = out.outcomes.at(p.key.variant);
    o.setting = settings.at(p.key.variant).sysfs();
    o.ops = static_cast<double>(r.ops_per_sec);
    o.half_width = r.settle.half_width;
    o.settled = r.settle.settled;
    double bytes = static_cast<double>(r.slab_bytes);
    for (const auto& c : r.caches) bytes += static_cast<double>(c.layers.sheaf_bytes);
    o.memory_kb = bytes / 1024.0;
    for (std::size_t c = 0; c < plan.caches.size(); ++c)
      for (const auto& cr : r.caches)
        if (cr.name == plan.caches[c].cache) out.seen.at(p.key.variant)[c] = {cr.barn_full_seen, cr.barn_empty_seen};
  }
  return out;
}

json advice_json(const AdvisePlan& plan, const std::vector<RowSearch>& searches,
                 const std::vector<std::vector<BoundCheck>>& checks) {
  const double budget_kb = plan.request.memory_budget_mb * 1024.0;
  // The model's record for a knob within one kernel (sim/trust/conformal.h): a gain it cannot
  // tell from zero is not robust, whatever the inputs' ends say.
  const RecordWidth knob = record_widths(plan.request.base.home)[ComparisonKind::Knob];
  json rows = json::array();
  std::size_t points = 0;
  for (std::size_t r = 0; r < searches.size(); ++r) {
    const RowSearch& rs = searches[r];
    const auto& o = rs.run.outcomes;
    points += o.size();
    const Choice c = choose(o, budget_kb);
    json row = {{"nr_task", rs.nr_task}, {"settings_run", o.size()}, {"rounds", rs.rounds}, {"over_budget", c.over_budget}};
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
    // A pick at an end of a knob's searched values: the answer may lie beyond what was searched.
    // Not where the end's rung also stands for values past it (they run alike: a capacity below
    // the automatic one, a barn limit never reached).
    if (c.best) {
      json edges = json::array();
      for (const auto& w : rs.run.settings.at(*c.best).writes)
        for (const CacheKnobs& ck : plan.caches) {
          if (ck.cache != w.cache) continue;
          const std::vector<int>& vals = ck.values[static_cast<int>(w.knob)];
          if (vals.size() < 2) continue;
          const bool top = w.value == vals.back(), bottom = w.value == vals.front();
          if (!top && !bottom) continue;
          bool grouped = false;
          for (const Climb& cl : rs.climbs)
            if (plan.caches[cl.cache].cache == w.cache && cl.knob == w.knob)
              for (const Rung& g : cl.rungs)
                if (g.value == w.value && !g.same.empty()) grouped = true;
          if (grouped) continue;
          edges.push_back(fmt::format("{} {} {} is the {} value searched", w.cache, knob_name(w.knob), w.value,
                                      top ? "largest" : "smallest"));
        }
      if (!edges.empty()) row["at_edge"] = edges;
    }
    // A setting whose window did not settle within the cap is never picked; when one ran faster
    // than the pick beyond the intervals, say so: a longer --settle-cap may answer for it.
    {
      std::optional<std::size_t> fast;
      for (std::size_t i = 0; i < o.size(); ++i)
        if (!o[i].settled && (!fast || o[i].ops > o[*fast].ops)) fast = i;
      if (fast && (!c.best || beats(o[*fast], o[*c.best]))) row["faster_not_settled"] = outcome_json(o[*fast]);
    }
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
    const std::vector<BoundCheck> none_checked;
    const auto& row_checks = r < checks.size() ? checks[r] : none_checked;
    for (const auto& bc : row_checks) {
      const auto& bo = bc.outcomes.outcomes;
      points += bo.size();
      const Choice cb = choose(bo, budget_kb);
      const std::string none = cb.over_budget ? "(none settled within budget)" : "(none settled)";
      const std::string pick = cb.best ? bo[*cb.best].setting : none;
      const std::string nominal =
          c.best ? o[*c.best].setting : std::string(c.over_budget ? "(none settled within budget)" : "(none settled)");
      json b = {{"bound", bc.bound}, {"pick", pick.empty() ? "kernel defaults" : pick}};
      if (cb.best) b["pick_ops_per_sec"] = bo[*cb.best].ops;
      for (const auto& x : bo)
        if (x.setting == nominal) b["nominal_pick_ops_per_sec"] = x.ops;
      at_bounds.push_back(b);
      if (pick != nominal) flips.push_back(fmt::format("{} picks {}", bc.bound, pick.empty() ? "the defaults" : pick));
    }
    row["bounds"] = at_bounds;
    // How each knob was searched: its rungs (candidates that run alike grouped), the values run
    // in order, where it ended and why.
    json climbs = json::array();
    for (const Climb& cl : rs.climbs) {
      json rungs = json::array();
      for (const Rung& g : cl.rungs) {
        json x = {{"value", g.value}};
        if (g.is_default) x["default"] = true;
        if (!g.same.empty()) x["same"] = g.same;
        rungs.push_back(x);
      }
      json cj = {{"cache", plan.caches[cl.cache].cache}, {"knob", knob_name(cl.knob)}, {"rungs", rungs},
                 {"run", cl.path}, {"best", cl.rungs[cl.at].value}, {"ended", cl.ended}};
      if (cl.knob != Knob::SheafCapacity && cl.cache < rs.seen.size())
        cj["barn_high_water"] = rs.seen[cl.cache][cl.knob == Knob::MaxFullSheaves ? 0 : 1];  // -1: never checked
      climbs.push_back(cj);
    }
    row["search"] = climbs;
    json every = json::array();
    for (const auto& x : o) every.push_back(outcome_json(x));
    row["settings"] = every;  // every setting run at this task count, in the order run
    if (!plan.request.bounds)
      row["robustness"] = "not checked (--no-bounds)";
    else if (row_checks.empty())
      row["robustness"] = "not checked (no uncertain input with a stated range)";
    else if (!flips.empty())
      row["robustness"] = fmt::format("fragile: {}", fmt::join(flips, "; "));
    else if (!row.contains("gain_pct"))
      row["robustness"] = "robust";  // the defaults won at every end: nothing to change
    else if (!knob.found)
      row["robustness"] = "robust over the inputs' ranges; no record (results/scoreboard.json) to check the gain against";
    else if (!knob.half_width_pp || std::fabs(row["gain_pct"].get<double>()) <= *knob.half_width_pp)
      row["robustness"] = fmt::format(
          "fragile: the gain ({:+.1f}%) lies within the model's record for a knob within one kernel ({}, 90%)",
          row["gain_pct"].get<double>(),
          knob.half_width_pp ? fmt::format("±{:.1f} points", *knob.half_width_pp) : std::string("unbounded"));
    else
      row["robustness"] = "robust";
    rows.push_back(row);
  }
  json caches = json::array();
  for (std::size_t i = 0; i < plan.caches.size(); ++i) {
    const CacheKnobs& c = plan.caches[i];
    json d = json::object();
    for (Knob k : kKnobs) d[knob_name(k)] = {{"default", c.get(k)}, {"values", c.values[static_cast<int>(k)]}};
    caches.push_back({{"cache", c.cache}, {"knobs", d}});
  }
  const bool grid = plan.request.search == "grid";
  return {{"format", "slubsim-advice-2"},
          {"topology", plan.request.base.topology},
          {"workload", plan.request.base.workload},
          {"kernel", plan.kernel},
          {"memory_budget_mb", plan.request.memory_budget_mb},
          {"search", plan.request.search},
          {"how",
           std::string("per task count: the kernel's defaults; then, per cache and knob, the candidates grouped "
                       "into rungs that the kernel runs alike (a capacity below the automatic one is raised to "
                       "it; a barn limit above the most sheaves the barn held at a check under the defaults is "
                       "never reached); ") +
               (grid ? "every rung alone; "
                     : "from the default's rung, both neighbours, then one rung further per round while each "
                       "beats the last beyond the confidence intervals; ") +
               "then each cache's best knobs written together; the pick is the cheapest setting tied with the "
               "fastest within the budget"},
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
    std::string best = row["over_budget"].get<std::size_t>() > 0 ? "none settled within budget" : "none settled", o = "-",
                gain = "-", mem = "-", runner = "-";
    if (!row["best"].is_null()) {
      best = row["best"]["setting"].get<std::string>();
      o = ops(row["best"]);
      mem = mb(row["best"]);
      if (row.contains("sunreclaim_delta_kb"))
        mem += fmt::format(" ({:+.1f})", row["sunreclaim_delta_kb"].get<double>() / 1024.0);
      if (row.contains("gain_pct"))
        gain = fmt::format("{:+.1f}% ± {:.1f}{}{}", row["gain_pct"].get<double>(),
                           row["gain_half_width_pct"].get<double>(), row["gain_is_tie"].get<bool>() ? " (tie)" : "",
                           // Against a window that did not settle: the gain is the means', not a result.
                           row.contains("defaults") && !row["defaults"].value("settled", true) ? " (the defaults did not settle)" : "");
    }
    if (row.contains("runner_up"))
      runner = fmt::format("{} ({:.0f})", row["runner_up"]["setting"].get<std::string>(),
                           row["runner_up"]["ops_per_sec"].get<double>());
    t += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", row["nr_task"].get<int>(), best, o, gain, mem, runner,
                     row["robustness"].get<std::string>());
    if (row.contains("at_edge"))
      t += fmt::format("|  | at the edge of the searched range: {}; a value beyond it may do better (widen "
                       "--capacities / --max-full-sheaves / --max-empty-sheaves) | | | | | |\n",
                       fmt::join(row["at_edge"].get<std::vector<std::string>>(), "; "));
    if (row.contains("faster_not_settled"))
      t += fmt::format("|  | faster, but not settled within the cap (a longer --settle-cap may settle it): {}, {} | | | | | |\n",
                       row["faster_not_settled"]["setting"].get<std::string>(), ops(row["faster_not_settled"]));
    if (row.contains("budget_cost_pct"))
      t += fmt::format("|  | the budget excluded {} setting(s); the fastest, {}, was {:.1f}% faster | | | | | |\n",
                       row["over_budget"].get<std::size_t>(), row["fastest_over_budget"]["setting"].get<std::string>(),
                       row["budget_cost_pct"].get<double>() / (1 - row["budget_cost_pct"].get<double>() / 100));
  }
  t += fmt::format("\n{} simulations ({} search); {}\n", advice["points"].get<std::size_t>(),
                   advice["search"].get<std::string>(), advice["how"].get<std::string>());
  // The kernel's defaults the gains are measured against, and what "robust" means.
  std::vector<std::string> defaults;
  for (const auto& c : advice["caches"]) {
    std::vector<std::string> knobs;
    for (const auto& [knob, d] : c["knobs"].items()) knobs.push_back(fmt::format("{} {}", knob, d["default"].get<int>()));
    defaults.push_back(fmt::format("{}: {}", c["cache"].get<std::string>(), fmt::join(knobs, ", ")));
  }
  t += fmt::format("\ndefaults ({}'s own): {}\n", plan.kernel, fmt::join(defaults, "; "));
  std::vector<std::string> ends;
  for (const auto& b : advice["bounds"]) ends.push_back(b["name"].get<std::string>());
  t += "robust: the pick, the runner-up and the defaults were run again at each end of the uncertain inputs' "
       "ranges";
  t += ends.empty() ? std::string(" (none here)") : fmt::format(" ({})", fmt::join(ends, ", "));
  t += ", the same setting won at every end, and its gain over the defaults lies outside the model's record for a "
       "knob within one kernel (the interval with the record, sim/trust/conformal.h); fragile: another setting won "
       "at some end (named), so the pick depends on inputs the model does not know for this machine, or the gain "
       "is within what the model has got wrong on published tables of that kind\n";
  t += fmt::format("robust is judged against: {}\n",
                   record_width_text(ComparisonKind::Knob,
                                     record_widths(plan.request.base.home)[ComparisonKind::Knob]));
  return t;
}

bool run_advise(const AdvisePlan& plan, const std::string& out, const Shard& shard, int jobs, bool quiet,
                const std::atomic<bool>* stop, std::string* table) {
  const fs::path root(out);
  std::vector<RowSearch> searches;
  for (std::size_t r = 0; r < plan.nr_tasks.size(); ++r)
    if (shard.contains(r)) searches.push_back(RowSearch{plan.nr_tasks[r], {}, {}, {}, 0, false});
  if (shard.n > 1) {
    // The shard's mark: `slubsim merge` joins such trees folder by folder (sim/sweep/merge.h).
    json rows = json::array();
    for (const auto& rs : searches) rows.push_back(rs.nr_task);
    fs::create_directories(root);
    write_file_atomically((root / kTreeMarker).string(),
                          json{{"format", "slubsim-advise-shard-1"}, {"shard", shard.text()}, {"nr_task", rows}}.dump(1) +
                              "\n");
  }
  // One batch: per search, a folder and the settings to run there (none: nothing this time);
  // every folder's points in one pool. False when interrupted.
  struct Stage {
    std::size_t search;
    std::string name;
    std::vector<Setting> settings;
    const Bound* bound = nullptr;
  };
  // The search's batches: how many, the climbs decide as they go; the end says the total.
  const auto started = std::chrono::steady_clock::now();
  std::size_t batches = 0, simulations = 0;
  auto say_total = [&] {
    if (!quiet)
      std::cerr << fmt::format("slubsim: advise: wall time {:.2f} s in all, {} simulations in {} batches\n",
                               std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
                               simulations, batches);
  };
  auto run_batch = [&](const std::string& what, const std::vector<Stage>& stages, std::vector<RowOutcomes>* read) {
    std::vector<Sweep> sweeps;
    std::vector<std::string> dirs;
    for (const auto& st : stages) {
      sweeps.push_back(resolve_sweep(stage_request(plan, st.settings, searches[st.search].nr_task, st.bound)));
      dirs.push_back((root / row_dir(searches[st.search].nr_task) / st.name).string());
    }
    std::vector<SweepTask> tasks;
    std::size_t points = 0;
    for (std::size_t i = 0; i < sweeps.size(); ++i) {
      tasks.push_back(SweepTask{&sweeps[i], dirs[i], Shard{}});
      points += sweeps[i].points.size();
    }
    if (tasks.empty()) return true;
    ++batches;
    simulations += points;
    if (!quiet)
      std::cerr << fmt::format("slubsim: advise: {}: {} simulations in {} folder(s) under {}\n", what, points,
                               tasks.size(), out);
    const auto outcomes = run_sweeps(tasks, jobs, quiet, stop, "advise " + what);
    for (std::size_t i = 0; i < outcomes.size(); ++i)
      if (!outcomes[i].complete) {
        std::cerr << fmt::format("slubsim: interrupted: {} is unfinished; the same command again finishes it\n",
                                 dirs[i]);
        return false;
      }
    read->clear();
    for (std::size_t i = 0; i < sweeps.size(); ++i) read->push_back(read_stage(plan, sweeps[i], stages[i].settings, dirs[i]));
    return true;
  };
  std::vector<RowOutcomes> got;
  // The defaults.
  {
    std::vector<Stage> stages;
    for (std::size_t i = 0; i < searches.size(); ++i) stages.push_back({i, "defaults", {Setting{}}});
    if (!stages.empty()) {
      const Sweep s0 = resolve_sweep(stage_request(plan, {Setting{}}, searches.front().nr_task));
      for (const auto& w : window_warnings(s0.jobs.front().job)) std::cerr << "slubsim: warning: " << w << "\n";
    }
    if (!run_batch("the defaults", stages, &got)) return false;
    for (std::size_t i = 0; i < searches.size(); ++i) {
      searches[i].run = got[i];
      searches[i].seen = got[i].seen.front();
      start_search(plan, searches[i]);
    }
  }
  // Then each task count goes its own way: its climbs' rounds, its joint setting, its bounds.
  // Each batch holds every task count's next stage, in one pool, so a task count whose climbs
  // ended early does not wait for the others (the folders are the same as stage by stage).
  enum class Phase { Rounds, Joint, Bounds, Done };
  std::vector<Phase> phase(searches.size(), Phase::Rounds);
  std::vector<std::vector<BoundCheck>> checks(searches.size());
  const std::string bounds_folder = plan.request.memory_budget_mb > 0
                                        ? fmt::format("bounds-budget-{}MB/", plan.request.memory_budget_mb)
                                        : std::string("bounds/");
  for (int batch = 1;; ++batch) {
    std::vector<Stage> stages;
    std::vector<Phase> of;  // the phase each stage belongs to
    for (std::size_t i = 0; i < searches.size(); ++i) {
      RowSearch& rs = searches[i];
      if (phase[i] == Phase::Rounds) {
        if (auto next = next_round(plan, rs); !next.empty()) {
          stages.push_back({i, plan.request.search == "grid" ? std::string("grid") : fmt::format("round-{}", rs.rounds + 1),
                            std::move(next)});
          of.push_back(Phase::Rounds);
          continue;
        }
        phase[i] = Phase::Joint;
      }
      if (phase[i] == Phase::Joint) {
        // Each cache's best knobs together.
        phase[i] = Phase::Bounds;
        if (auto joint = joint_settings(plan, rs); !joint.empty()) {
          stages.push_back({i, "joint", std::move(joint)});
          of.push_back(Phase::Joint);
          continue;
        }
      }
      if (phase[i] == Phase::Bounds) {
        // The pick, runner-up and defaults again at each end of the uncertain inputs. Which
        // settings are re-run depends on the budget: each budget has its own folder.
        phase[i] = Phase::Done;
        const auto check = settings_to_check(plan, rs.run);
        if (!plan.request.bounds || check.empty()) continue;
        for (const auto& b : plan.bounds) {
          stages.push_back({i, bounds_folder + b.name, check, &b});
          of.push_back(Phase::Bounds);
        }
      }
    }
    if (stages.empty()) break;
    if (!run_batch(fmt::format("batch {}", batch), stages, &got)) return false;
    for (std::size_t k = 0; k < stages.size(); ++k) {
      RowSearch& rs = searches[stages[k].search];
      if (of[k] == Phase::Rounds) {
        record_round(plan, rs, got[k]);
      } else if (of[k] == Phase::Joint) {
        rs.run.settings.insert(rs.run.settings.end(), got[k].settings.begin(), got[k].settings.end());
        rs.run.outcomes.insert(rs.run.outcomes.end(), got[k].outcomes.begin(), got[k].outcomes.end());
        rs.run.seen.insert(rs.run.seen.end(), got[k].seen.begin(), got[k].seen.end());
        rs.joint_done = true;
      } else {
        checks[stages[k].search].push_back(BoundCheck{stages[k].bound->name, got[k]});
      }
    }
  }
  if (shard.n > 1) {
    if (!quiet)
      std::cerr << fmt::format("slubsim: advise: shard {} searched {} of the {} task counts into {}; join the shards "
                               "with 'slubsim merge SHARD_DIR... --out DIR' and run advise --out DIR without --shard "
                               "for the report\n",
                               shard.text(), searches.size(), plan.nr_tasks.size(), out);
    say_total();
    return true;
  }
  const json advice = advice_json(plan, searches, checks);
  // The table ends with the model's record on the nearest published tables of knob comparisons.
  JobRequest base = plan.request.base;
  base.sysfs.clear();
  base.sheaf_capacity.clear();
  const std::string t = advice_table(plan, advice) + "\n" + record_lines(resolve_job(base), {ComparisonKind::Knob});
  write_file_atomically((root / "advice.json").string(), advice.dump(1) + "\n");
  write_file_atomically((root / "advice.md").string(), t);
  if (table) *table = t;
  say_total();
  return true;
}

}  // namespace slubsim
