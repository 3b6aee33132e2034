// sim/validate/: scoring the model against published tables: experiment files (experiment.h),
// class-4 fits (fit.h), per-cell scores (score.h), the scoreboard (scoreboard.h) and the
// `validate` command with its shards (validate.h).
// This file: reading experiment files.
#include "sim/validate/experiment.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <set>

#include "sim/run/job.h"
#include "sim/config/kernel.h"

namespace slubsim {

namespace fs = std::filesystem;

double ExperimentCell::published_effective_delta() const {
  if (lower_is_better && published_baseline && published_test && *published_test > 0)
    return (*published_baseline / *published_test - 1.0) * 100.0;
  return published_delta_pct;
}

const ExperimentVariant* Experiment::variant(const std::string& name) const {
  for (const auto& v : variants)
    if (v.name == name) return &v;
  return nullptr;
}

const ExperimentVariant& Experiment::baseline() const {
  for (const auto& v : variants)
    if (v.baseline) return v;
  throw ConfigError(file, "variants", "no variant has \"role\": \"baseline\"");
}

namespace {

void only_keys(const JsonView& v, std::initializer_list<const char*> allowed) {
  for (const auto& k : v.keys())
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return k == a; }))
      v.at(k).fail(fmt::format("unknown field (allowed: {})", fmt::join(allowed, ", ")));
}

std::string nonempty_str(const JsonView& v) {
  auto s = v.str();
  if (s.find_first_not_of(" \t") == std::string::npos) v.fail("must not be empty");
  return s;
}

std::vector<std::string> string_list(const JsonView& v) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(nonempty_str(v.at(i)));
  return out;
}

std::vector<int> task_list(const JsonView& v) {
  if (v.size() == 0) v.fail("must list at least one task count");
  std::vector<int> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    int n = static_cast<int>(v.at(i).integer_in(1, 100000));
    if (!out.empty() && n <= out.back())
      v.at(i).fail("task counts must be in ascending order, without repeats");
    out.push_back(n);
  }
  return out;
}

std::optional<double> optional_number(const JsonView& parent, const char* key) {
  auto f = parent.find(key);
  if (!f || f->raw().is_null()) return std::nullopt;
  return f->number();
}

std::vector<std::string> checked_sets(const JsonView& v) {
  auto sets = string_list(v);
  for (std::size_t i = 0; i < sets.size(); ++i) {
    try {
      parse_override(sets[i]);
    } catch (const ConfigError& e) {
      v.at(i).fail(e.what());
    }
  }
  return sets;
}

// will-it-scale.<N>.<what>[_idle] must be a row of every machine, in the experiment's mode.
void check_metric(const JsonView& where, const std::string& metric, const Experiment& e) {
  const std::string prefix = "will-it-scale.";
  if (metric.rfind(prefix, 0) != 0) return;
  std::string rest = metric.substr(prefix.size());
  const std::string what = e.mode == "thread" ? "threads" : "processes";
  auto dot = rest.find('.');
  std::string head = rest.substr(0, dot);
  if (!head.empty() && head.find_first_not_of("0123456789") == std::string::npos && dot != std::string::npos) {
    std::string tail = rest.substr(dot + 1);
    if (tail != what && tail != what + "_idle")
      where.fail(fmt::format("'{}': a {}-mode experiment reports will-it-scale.{}.{}", metric, e.mode, head, what));
    int n = std::stoi(head.substr(0, std::min<std::size_t>(head.size(), 7)));
    for (const auto& t : e.topologies)
      if (std::find(t.nr_task.begin(), t.nr_task.end(), n) == t.nr_task.end())
        where.fail(fmt::format("'{}': {} tasks is not a row on topology '{}'", metric, n, t.name));
  } else if (rest == "per_process_ops" || rest == "per_thread_ops") {
    if (rest != fmt::format("per_{}_ops", e.mode))
      where.fail(fmt::format("'{}': a {}-mode experiment reports will-it-scale.per_{}_ops", metric, e.mode, e.mode));
  }
}

void check_duration(const JsonView& v, const std::string& text, bool zero_ok) {
  if (zero_ok && text == "0") return;
  try {
    parse_duration(text, v.path());
  } catch (const ConfigError& err) {
    v.fail(err.what());
  }
}

ExperimentTopology parse_topology_entry(const JsonView& v, const std::vector<int>& rows) {
  ExperimentTopology t;
  if (v.raw().is_string()) {
    t.name = nonempty_str(v);
    t.nr_task = rows;
    return t;
  }
  only_keys(v, {"name", "nr_task", "note"});
  t.name = nonempty_str(v.at("name"));
  t.nr_task = v.has("nr_task") ? task_list(v.at("nr_task")) : rows;
  if (auto n = v.find("note")) t.note = n->str();
  return t;
}

ExperimentVariant parse_variant(const JsonView& v) {
  only_keys(v, {"name", "label", "kernel", "tree", "role", "patches", "sheaf_capacity", "set", "excluded"});
  ExperimentVariant out;
  out.field = v.path();
  out.name = nonempty_str(v.at("name"));
  if (out.name.find_first_of("/\\") != std::string::npos || out.name == "." || out.name == "..")
    v.at("name").fail("must not contain '/' (it names a results directory)");
  out.label = nonempty_str(v.at("label"));
  out.kernel = nonempty_str(v.at("kernel"));
  if (auto t = v.find("tree")) out.tree = nonempty_str(*t);
  if (auto r = v.find("role")) {
    if (r->str() != "baseline") r->fail("the only role is \"baseline\"");
    out.baseline = true;
  }
  if (auto p = v.find("patches")) {
    out.patches = string_list(*p);
    for (std::size_t i = 0; i < out.patches.size(); ++i) {
      const auto& s = out.patches[i];
      std::string name = s[0] == '+' || s[0] == '-' ? s.substr(1) : "";
      if (std::find(known_patches().begin(), known_patches().end(), name) == known_patches().end())
        p->at(i).fail(fmt::format("'{}' is not +NAME or -NAME of a known patch ({})", s,
                                  fmt::join(known_patches(), ", ")));
    }
  }
  if (auto c = v.find("sheaf_capacity")) {
    out.sheaf_capacity = c->str();
    std::vector<CapacitySetting> settings;
    try {
      settings = parse_sheaf_capacity(out.sheaf_capacity);
    } catch (const ConfigError& err) {
      c->fail(err.what());
    }
    if (settings.size() != 1) c->fail("a variant has one capacity setting, not a sweep");
  }
  if (auto s = v.find("set")) out.sets = checked_sets(*s);
  if (auto x = v.find("excluded")) out.excluded = nonempty_str(*x);
  if (out.baseline && !out.excluded.empty()) v.at("excluded").fail("the baseline variant cannot be excluded");
  return out;
}

ExperimentCell parse_cell(const JsonView& v) {
  only_keys(v, {"metric", "baseline", "test", "published_baseline", "published_test", "published_delta_pct",
                "noise", "lower_is_better", "excluded", "note", "source"});
  ExperimentCell c;
  c.field = v.path();
  c.metric = nonempty_str(v.at("metric"));
  c.baseline = nonempty_str(v.at("baseline"));
  c.test = nonempty_str(v.at("test"));
  c.published_baseline = optional_number(v, "published_baseline");
  c.published_test = optional_number(v, "published_test");
  c.published_delta_pct = v.at("published_delta_pct").number();
  if (auto n = v.find("noise")) c.noise = n->boolean();
  if (auto l = v.find("lower_is_better")) c.lower_is_better = l->boolean();
  if (auto x = v.find("excluded")) c.excluded = nonempty_str(*x);
  if (auto n = v.find("note")) c.note = n->str();
  if (auto s = v.find("source")) c.source = s->str();
  if (c.baseline == c.test) v.at("test").fail("a cell compares two different variants");
  if (c.lower_is_better && !(c.published_baseline > 0.0 && c.published_test > 0.0))
    v.fail("lower_is_better needs positive published_baseline and published_test (the times)");
  return c;
}

ExperimentFit parse_fit(const JsonView& v) {
  only_keys(v, {"parameters", "variant", "nr_task", "metric", "published", "note", "cross_check"});
  ExperimentFit f;
  f.parameters = string_list(v.at("parameters"));
  if (f.parameters.empty()) v.at("parameters").fail("must name at least one workload parameter");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < f.parameters.size(); ++i)
    if (!seen.insert(f.parameters[i]).second) v.at("parameters").at(i).fail("listed twice");
  f.variant = nonempty_str(v.at("variant"));
  f.nr_task = static_cast<int>(v.at("nr_task").integer_in(1, 100000));
  f.metric = nonempty_str(v.at("metric"));
  f.published = v.at("published").positive_number();
  if (auto n = v.find("note")) f.note = n->str();
  if (auto cc = v.find("cross_check")) {
    if (!f.pin()) cc->fail("belongs to a pin (a fit on why.<N>.spin.percent): a throughput fit needs no second derivation");
    for (std::size_t i = 0; i < cc->size(); ++i) {
      auto c = cc->at(i);
      only_keys(c, {"experiment", "topology", "note"});
      f.cross_check.push_back({nonempty_str(c.at("experiment")), nonempty_str(c.at("topology")), nonempty_str(c.at("note"))});
    }
  }
  return f;
}

ProfileRow parse_profile_row(const JsonView& v) {
  only_keys(v, {"row", "published", "share", "under", "in", "not_under", "lock", "note"});
  ProfileRow r;
  r.field = v.path();
  r.row = nonempty_str(v.at("row"));
  r.published = v.at("published").number();
  if (!(r.published >= 0 && r.published <= 100)) v.at("published").fail("must be a share of cycles, 0 to 100");
  r.share = v.at("share").str();
  if (r.share != "children" && r.share != "self") v.at("share").fail("must be \"children\" or \"self\"");
  for (const char* key : {"under", "not_under"}) {
    auto u = v.find(key);
    if (!u) continue;
    auto names = string_list(*u);
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i].empty() || names[i].find(';') != std::string::npos)
        u->at(i).fail("a kernel function name, without ';'");
    (std::string(key) == "under" ? r.under : r.not_under) = names;
  }
  if (auto in = v.find("in")) {
    r.in = nonempty_str(*in);
    if (r.in.find(';') != std::string::npos) in->fail("a kernel function name, without ';'");
  }
  if (auto l = v.find("lock")) r.lock = nonempty_str(*l);
  return r;
}

ExperimentCounter parse_counter(const JsonView& v) {
  only_keys(v, {"variant", "nr_task", "row", "key", "published", "source", "note"});
  ExperimentCounter c;
  c.field = v.path();
  c.variant = nonempty_str(v.at("variant"));
  c.row = nonempty_str(v.at("row"));
  c.key = nonempty_str(v.at("key"));
  // And slabinfo's shares of one cache's SLUB_STATS: slabinfo.CACHE.QUANTITY.
  static const std::vector<std::string> kSlabinfo = {"alloc_fastpath_pct", "free_slowpath_pct", "alloc_from_partial_pct",
                                                     "cpu_partial_alloc_pct", "alloc_refill_pct"};
  const auto dot = c.key.rfind('.');
  const bool slabinfo = c.key.rfind("slabinfo.", 0) == 0 && dot != std::string::npos && dot > 9 &&
                        std::find(kSlabinfo.begin(), kSlabinfo.end(), c.key.substr(dot + 1)) != kSlabinfo.end();
  const auto& keys = counter_keys();
  if (!slabinfo && std::find(keys.begin(), keys.end(), c.key) == keys.end())
    v.at("key").fail(fmt::format("not a rate the model reports (one of: {}, or slabinfo.CACHE.{{{}}})",
                                 fmt::join(keys, ", "), fmt::join(kSlabinfo, ",")));
  const JsonView n = v.at("nr_task");
  if (n.raw().is_array()) {
    if (n.size() < 2) n.fail("a list of task counts must name at least two (or give one as a number)");
    if (!counter_key_per_task(c.key))
      n.fail(fmt::format("a list of task counts is scored as their task-weighted mean, which only a rate per task "
                         "and second may be ('{}' is not one)", c.key));
    for (std::size_t i = 0; i < n.size(); ++i) {
      const int t = static_cast<int>(n.at(i).integer_in(1, 1 << 20));
      if (std::find(c.nr_task.begin(), c.nr_task.end(), t) != c.nr_task.end())
        n.at(i).fail(fmt::format("{} is listed twice", t));
      c.nr_task.push_back(t);
    }
  } else {
    c.nr_task.push_back(static_cast<int>(n.integer_in(1, 1 << 20)));
  }
  c.published = v.at("published").positive_number();
  c.source = nonempty_str(v.at("source"));
  if (auto nt = v.find("note")) c.note = nt->str();
  return c;
}

ExperimentProfile parse_profile(const JsonView& v) {
  only_keys(v, {"variant", "nr_task", "source", "note", "rows"});
  ExperimentProfile p;
  p.field = v.path();
  p.variant = nonempty_str(v.at("variant"));
  p.nr_task = static_cast<int>(v.at("nr_task").integer_in(1, 1 << 20));
  p.source = nonempty_str(v.at("source"));
  if (auto n = v.find("note")) p.note = n->str();
  auto rows = v.at("rows");
  if (rows.size() == 0) rows.fail("must list at least one row");
  for (std::size_t i = 0; i < rows.size(); ++i) p.rows.push_back(parse_profile_row(rows.at(i)));
  return p;
}

}  // namespace

std::string window_text(const std::string& duration, const std::string& warmup) {
  if (duration.empty() && warmup.empty()) return "windows chosen by the settle rule";
  return fmt::format("window {} after {} warm-up", duration.empty() ? kFixedDuration : duration,
                     warmup.empty() ? kFixedWarmup : warmup);
}

Experiment parse_experiment(const json& doc, const std::string& file) {
  JsonView root(doc, file);
  only_keys(root, {"id", "table", "title", "source", "calibration_set", "topologies", "workload", "mode",
                   "nr_task", "duration", "warmup", "settle_cap", "runs", "seed", "set", "fit", "fit_from", "variants", "cells",
                   "profiles", "counters", "notes"});
  Experiment e;
  e.file = file;
  e.id = nonempty_str(root.at("id"));
  if (e.id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_.") != std::string::npos)
    root.at("id").fail("use lower-case letters, digits, '-', '_' and '.' only");
  std::string stem = fs::path(file).stem().string();
  if (e.id != stem) root.at("id").fail(fmt::format("'{}' must be the file's name ('{}')", e.id, stem));
  e.table = nonempty_str(root.at("table"));
  e.title = nonempty_str(root.at("title"));
  e.source = nonempty_str(root.at("source"));
  e.calibration_set = root.at("calibration_set").boolean();
  e.workload = nonempty_str(root.at("workload"));
  e.mode = root.at("mode").str();
  if (e.mode != "process" && e.mode != "thread") root.at("mode").fail("must be process or thread");
  e.nr_task = task_list(root.at("nr_task"));
  auto topos = root.at("topologies");
  if (topos.size() == 0) topos.fail("must list at least one topology");
  std::set<std::string> topo_names;
  for (std::size_t i = 0; i < topos.size(); ++i) {
    e.topologies.push_back(parse_topology_entry(topos.at(i), e.nr_task));
    if (!topo_names.insert(e.topologies.back().name).second) topos.at(i).fail("topology listed twice");
  }
  if (root.has("duration") != root.has("warmup"))
    root.at(root.has("duration") ? "duration" : "warmup")
        .fail("give both duration and warmup (a fixed window), or neither (the settle rule chooses each point's)");
  if (root.has("duration")) {
    e.duration = root.at("duration").str();
    check_duration(root.at("duration"), e.duration, false);
    e.warmup = root.at("warmup").str();
    check_duration(root.at("warmup"), e.warmup, true);
  }
  if (auto c = root.find("settle_cap")) {
    e.settle_cap = c->str();
    check_duration(*c, e.settle_cap, false);
  }
  e.runs = static_cast<int>(root.at("runs").integer_in(1, 1000));
  e.seed = static_cast<std::uint64_t>(root.at("seed").integer_in(0, (std::int64_t{1} << 53)));
  if (auto s = root.find("set")) e.sets = checked_sets(*s);
  if (auto n = root.find("notes")) {
    if (n->raw().is_string()) e.notes.push_back(n->str());
    else e.notes = string_list(*n);
  }

  auto vars = root.at("variants");
  if (vars.size() == 0) vars.fail("must list at least one variant");
  std::set<std::string> names;
  int baselines = 0;
  for (std::size_t i = 0; i < vars.size(); ++i) {
    e.variants.push_back(parse_variant(vars.at(i)));
    if (!names.insert(e.variants.back().name).second) vars.at(i).at("name").fail("variant name used twice");
    if (e.variants.back().baseline) ++baselines;
  }
  if (baselines != 1)
    vars.fail(fmt::format("exactly one variant must have \"role\": \"baseline\" ({} do)", baselines));
  const bool trees = !e.variants.front().tree.empty();
  for (std::size_t i = 0; i < e.variants.size(); ++i)
    if (e.variants[i].tree.empty() == trees)
      vars.at(i).fail(trees ? std::string("has no \"tree\": when one variant names its source tree, every variant must")
                            : std::string("names a \"tree\" but the first variant does not: every variant or none"));

  auto cells = root.at("cells");
  if (cells.size() == 0) cells.fail("must list at least one cell");
  for (std::size_t i = 0; i < cells.size(); ++i) {
    auto c = parse_cell(cells.at(i));
    for (const auto* which : {"baseline", "test"}) {
      const std::string& name = std::string(which) == "baseline" ? c.baseline : c.test;
      const auto* v = e.variant(name);
      if (!v)
        cells.at(i).at(which).fail(fmt::format("no variant named '{}' (variants: {})", name,
                                               fmt::join(names, ", ")));
      if (!v->excluded.empty() && c.excluded.empty())
        cells.at(i).at(which).fail(fmt::format("variant '{}' is excluded ({}), so this cell must be too",
                                               name, v->excluded));
    }
    if (c.excluded.empty()) check_metric(cells.at(i).at("metric"), c.metric, e);
    c.across_releases = e.variant(c.baseline)->tree != e.variant(c.test)->tree;
    e.cells.push_back(std::move(c));
  }

  // A profile or a counter names one state: a variant that runs, at one of the task counts.
  auto check_state = [&](const JsonView& item, const std::string& variant, int nr_task) {
    const auto* v = e.variant(variant);
    if (!v)
      item.at("variant").fail(fmt::format("no variant named '{}' (variants: {})", variant, fmt::join(names, ", ")));
    if (!v->excluded.empty())
      item.at("variant").fail(fmt::format("variant '{}' is excluded ({})", variant, v->excluded));
    if (std::find(e.nr_task.begin(), e.nr_task.end(), nr_task) == e.nr_task.end())
      item.at("nr_task").fail(fmt::format("{} is not one of the experiment's task counts", nr_task));
  };
  if (auto ps = root.find("profiles"))
    for (std::size_t i = 0; i < ps->size(); ++i) {
      auto p = parse_profile(ps->at(i));
      check_state(ps->at(i), p.variant, p.nr_task);
      e.profiles.push_back(std::move(p));
    }
  if (auto cs = root.find("counters"))
    for (std::size_t i = 0; i < cs->size(); ++i) {
      auto c = parse_counter(cs->at(i));
      check_state(cs->at(i), c.variant, c.nr_task.front());
      const JsonView n = cs->at(i).at("nr_task");
      for (std::size_t k = 1; k < c.nr_task.size(); ++k)
        if (std::find(e.nr_task.begin(), e.nr_task.end(), c.nr_task[k]) == e.nr_task.end())
          n.at(k).fail(fmt::format("{} is not one of the experiment's task counts", c.nr_task[k]));
      e.counters.push_back(std::move(c));
    }

  if (auto ff = root.find("fit_from")) {
    only_keys(*ff, {"experiment", "topology", "note"});
    if (root.find("fit")) ff->fail("an experiment with its own \"fit\" cannot borrow one");
    BorrowedFit b;
    b.experiment = nonempty_str(ff->at("experiment"));
    if (b.experiment == e.id) ff->at("experiment").fail("must name another experiment");
    b.topology = nonempty_str(ff->at("topology"));
    b.note = nonempty_str(ff->at("note"));
    e.fit_from = b;
  }

  if (auto f = root.find("fit")) {
    e.fit = parse_fit(*f);
    const auto* v = e.variant(e.fit->variant);
    if (!v) f->at("variant").fail(fmt::format("no variant named '{}'", e.fit->variant));
    // VALIDATION.md: nothing is fitted on a state a table compares against its baseline.
    if (!v->baseline)
      f->at("variant").fail(fmt::format("'{}' is not the baseline variant ('{}'): nothing may be fitted on a "
                                        "predicted state (VALIDATION.md class 4)",
                                        v->name, e.baseline().name));
    if (e.fit->pin()) {
      // A pin (VALIDATION.md): a table that publishes no absolute value pins its class-4 time on
      // one published observable of its baseline, at the task count where it was taken.
      for (const auto& c : e.cells)
        if (c.published_baseline || c.published_test)
          f->at("metric").fail(fmt::format("'{}' pins on a profile share, but the cell of {} publishes an absolute "
                                           "value: a table with one is fitted on its throughput (VALIDATION.md)",
                                           e.fit->metric, c.metric));
      if (e.fit->metric != fmt::format("why.{}.spin.percent", e.fit->nr_task))
        f->at("metric").fail(fmt::format("a pin is on why.<nr_task>.spin.percent (all spinlock spinning, perf's "
                                         "native_queued_spin_lock_slowpath self share), here why.{}.spin.percent",
                                         e.fit->nr_task));
      for (const auto& t : e.topologies)
        if (std::find(t.nr_task.begin(), t.nr_task.end(), e.fit->nr_task) == t.nr_task.end())
          f->at("nr_task").fail(fmt::format("{} tasks is not a row on topology '{}'", e.fit->nr_task, t.name));
      if (!(e.fit->published > 0 && e.fit->published < 100)) f->at("published").fail("must be a share, above 0 and below 100");
    } else {
      for (const auto& t : e.topologies)
        if (e.fit->nr_task != t.nr_task.front())
          f->at("nr_task").fail(fmt::format("{} is not the lowest task count ({} on topology '{}'): a fit is made "
                                            "at the lowest task count only (VALIDATION.md class 4)",
                                            e.fit->nr_task, t.nr_task.front(), t.name));
      check_metric(f->at("metric"), e.fit->metric, e);
    }
  }
  root.check_known_fields();
  return e;
}

Experiment load_experiment(const std::string& file) { return parse_experiment(load_json_file(file), file); }

std::vector<Experiment> load_experiments(const std::string& dir_or_file, const std::string& only) {
  std::vector<std::string> files;
  if (is_file(dir_or_file)) {
    files.push_back(dir_or_file);
  } else if (is_dir(dir_or_file)) {
    std::error_code ec;
    for (fs::directory_iterator it(dir_or_file, ec), end; !ec && it != end; it.increment(ec))
      if (is_file(it->path()) && it->path().extension() == ".json") files.push_back(it->path().string());
    std::sort(files.begin(), files.end());
    if (files.empty()) throw ConfigError(dir_or_file, "--experiments", "no experiment files (*.json) here");
  } else {
    throw ConfigError(dir_or_file, "--experiments", "no such file or directory");
  }
  std::vector<Experiment> all;
  for (const auto& f : files) all.push_back(load_experiment(f));
  if (only.empty()) return all;
  refuse_repeats(split_list(only), "--only");
  std::vector<Experiment> out;
  std::size_t start = 0;
  while (true) {
    auto comma = only.find(',', start);
    std::string id = only.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    auto it = std::find_if(all.begin(), all.end(), [&](const Experiment& e) { return e.id == id; });
    if (it == all.end()) {
      std::vector<std::string> ids;
      for (const auto& e : all) ids.push_back(e.id);
      throw ConfigError("command line", "--only",
                        fmt::format("no experiment '{}' in {} (known: {})", id, dir_or_file, fmt::join(ids, ", ")));
    }
    out.push_back(*it);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::sort(out.begin(), out.end(), [](const Experiment& a, const Experiment& b) { return a.id < b.id; });
  return out;
}

std::string ExperimentCounter::stats_key(int nr) const {
  std::string k = key;
  const std::string n = std::to_string(nr);
  for (auto p = k.find("{N}"); p != std::string::npos; p = k.find("{N}", p + n.size())) k.replace(p, 3, n);
  return k;
}

std::string ExperimentCounter::tasks_text() const { return fmt::format("{}", fmt::join(nr_task, "+")); }

std::string ExperimentCounter::shown_key() const { return nr_task.size() == 1 ? stats_key(nr_task.front()) : key; }

namespace {
// The one rate per task and second (sim/run/report.cpp), which alone may be taken over rows.
constexpr const char* kPerTaskKey = "sched.{N}.involuntary_switches_per_task_sec";
}  // namespace

// The rates sim/run/report.cpp puts in stats.json for counters to name.
const std::vector<std::string>& counter_keys() {
  static const std::vector<std::string> keys = {"proc-vmstat.{N}.pgalloc_normal_per_op",
                                                "sched.{N}.ksoftirqd_context_switches_per_sec", kPerTaskKey};
  return keys;
}

bool counter_key_per_task(const std::string& key) { return key == kPerTaskKey; }

}  // namespace slubsim
