#include "sim/validate/validate.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "sim/run/parallel.h"
#include "sim/run/point_store.h"
#include "sim/run/progress.h"
#include "sim/run/report.h"
#include "sim/validate/scoreboard.h"
#include "sim/trust/uncertainty.h"

namespace slubsim {

namespace fs = std::filesystem;

namespace {

// resolve_job, with errors that point at the experiment file where the input came from.
Job resolve_variant(const Experiment& e, const ExperimentTopology& t, const ExperimentVariant& v,
                    const JobRequest& req, const std::string& fit_file) {
  try {
    return resolve_job(req);
  } catch (const ConfigError& err) {
    std::string ctx = fmt::format("variant '{}' on topology '{}'", v.name, t.name);
    std::string field = err.field();
    if (err.file() == "--set") {
      auto in = [&](const std::vector<std::string>& sets) {
        return std::any_of(sets.begin(), sets.end(), [&](const std::string& s) { return s.rfind(field + "=", 0) == 0; });
      };
      if (in(v.sets)) throw ConfigError(e.file, v.field + ".set", fmt::format("{}: {} ({})", field, err.what(), ctx));
      if (in(e.sets)) throw ConfigError(e.file, "set", fmt::format("{}: {} ({})", field, err.what(), ctx));
      throw ConfigError(fit_file.empty() ? e.file : fit_file, "parameters",
                        fmt::format("{}: {} ({})", field, err.what(), ctx));
    }
    if (err.file() == "command line") {
      if (field == "--kernel") field = v.field + ".kernel";
      else if (field == "--patch") field = v.field + ".patches";
      else if (field == "--sheaf-capacity") field = v.field + ".sheaf_capacity";
      else if (field == "--nr-task") field = "nr_task";
      else if (field == "--topology") field = "topologies";
      else if (field.size() > 2 && field.rfind("--", 0) == 0) field = field.substr(2);
      throw ConfigError(e.file, field, fmt::format("{} ({})", err.what(), ctx));
    }
    throw ConfigError(err.file(), err.field(), fmt::format("{} (experiment {}, {})", err.what(), e.file, ctx));
  }
}

std::string join_tasks(const std::vector<int>& n) { return fmt::format("{}", fmt::join(n, ",")); }

void write_text(const fs::path& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) throw ConfigError(path.parent_path().string(), "--out", "cannot create directory: " + ec.message());
  std::ofstream out(path);
  out << text;
  if (!out) throw ConfigError(path.string(), "--out", "cannot write file");
}

Progress make_progress(const ValidateOptions& o) {
  return [quiet = o.quiet](const std::string& line) {
    if (!quiet) std::cerr << "slubsim: " << line << "\n";
  };
}

// "pass K of N" of validate --uncertainty (kUncertaintyPasses).
std::string pass_name(int k) { return fmt::format("pass {} of {}", k, kUncertaintyPasses); }

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The class-4 fit of experiment e on topology t (VALIDATION.md): its baseline at the fit's task
// count, the non-slab times scaled from `base` until the fit's metric meets the published value.
// `extra` is added to every simulation's --set items (an interval's end: the fit done again in the
// world of that end); the search starts at `start`.
Fit fit_baseline(const Experiment& e, const ExperimentTopology& t, const std::vector<std::pair<std::string, double>>& base,
                 const ValidateOptions& o, const std::vector<std::string>& extra, double start, const Progress& progress,
                 std::mutex& mu) {
  const ExperimentVariant& v = e.baseline();
  auto simulate = [&](double s) {
    Fit probe;
    probe.parameters = scaled_parameters(base, s);
    auto req = variant_request(e, t, v, probe.sets(), o);
    req.sets.insert(req.sets.end(), extra.begin(), extra.end());
    req.nr_task = fmt::format("{}", e.fit->nr_task);
    Job job = resolve_variant(e, t, v, req, "");
    double got = simulate_metric(job, e.fit->metric);
    std::lock_guard<std::mutex> g(mu);
    progress(fmt::format("{} {} on {}: scale {} -> {} = {} (published {})", extra.empty() ? "calibrate" : "fit again",
                         e.id, t.name, s, e.fit->metric, got, e.fit->published));
    return got;
  };
  ScaleSearch found =
      search_scale(e.fit->published, simulate, fit_tolerance_pct(e.fit->metric, e.fit->published), start);
  Fit f;
  f.experiment = e.id;
  f.topology = t.name;
  f.scale = found.scale;
  f.parameters = scaled_parameters(base, found.scale);
  f.variant = v.name;
  f.kernel = v.kernel;
  f.metric = e.fit->metric;
  f.nr_task = e.fit->nr_task;
  f.published = e.fit->published;
  f.simulated = found.simulated;
  f.duration = o.duration.empty() ? e.duration : o.duration;
  f.warmup = o.warmup.empty() ? e.warmup : o.warmup;
  f.seed = e.seed;
  f.simulations = found.simulations;
  f.converged = found.converged;
  f.file = fit_path(o.fits, e.id, t.name);
  return f;
}

int calibrate_command(const std::vector<Experiment>& experiments, const ValidateOptions& o) {
  struct Task {
    const Experiment* e;
    const ExperimentTopology* t;
    std::vector<std::pair<std::string, double>> base;
    Fit fit;
  };
  std::vector<Task> tasks;
  for (const auto& e : experiments) {
    if (!e.fit) continue;
    auto base = base_parameters(e, o.home);
    for (const auto& t : e.topologies) {
      Task task{&e, &t, base, {}};
      // Resolve once now so that bad input stops everything before any simulation.
      auto req = variant_request(e, t, e.baseline(), Fit{.parameters = scaled_parameters(base, 1.0)}.sets(), o);
      req.nr_task = fmt::format("{}", e.fit->nr_task);
      resolve_variant(e, t, e.baseline(), req, "");
      tasks.push_back(std::move(task));
    }
  }
  auto progress = make_progress(o);
  std::mutex mu;
  parallel_for(tasks.size(), host_threads(o.jobs), [&](std::size_t i) {
    Task& task = tasks[i];
    task.fit = fit_baseline(*task.e, *task.t, task.base, o, {}, 1.0, progress, mu);
  });
  std::string text;
  for (const auto& e : experiments)
    if (!e.fit) text += fmt::format("{}: no fit (the experiment has none)\n", e.id);
  for (const auto& task : tasks) {
    const Fit& f = task.fit;
    text += fmt::format("{} on {}: scale {} ({} at {} tasks: simulated {} vs published {}, {:+.2f}%, {} simulations{})\n",
                        f.experiment, f.topology, f.scale, f.metric, f.nr_task, f.simulated, f.published,
                        (f.simulated / f.published - 1.0) * 100.0, f.simulations,
                        f.converged ? "" : fmt::format(", NOT within {:.2f}%", fit_tolerance_pct(f.metric, f.published)));
    for (const auto& [name, value] : f.parameters) text += fmt::format("  {} = {} ns\n", name, value);
  }
  std::cout << text;
  if (o.write)
    for (const auto& task : tasks) {
      write_text(task.fit.file, fit_json(task.fit).dump(2) + "\n");
      std::cout << "wrote " << task.fit.file << "\n";
    }
  return 0;
}

}  // namespace

JobRequest variant_request(const Experiment& e, const ExperimentTopology& t, const ExperimentVariant& v,
                           const std::vector<std::string>& fit_sets, const ValidateOptions& o) {
  JobRequest r;
  r.home = o.home;
  r.topology = t.name;
  r.workload = e.workload;
  r.mode = e.mode;
  r.nr_task = join_tasks(t.nr_task);
  r.kernel = v.kernel;
  r.sheaf_capacity = v.sheaf_capacity;
  r.patches = v.patches;
  r.sets = e.sets;
  r.sets.insert(r.sets.end(), v.sets.begin(), v.sets.end());
  r.sets.insert(r.sets.end(), fit_sets.begin(), fit_sets.end());
  r.sets.insert(r.sets.end(), o.sets.begin(), o.sets.end());
  r.runs = e.runs;
  r.seed = e.seed;
  r.duration = o.duration.empty() ? e.duration : o.duration;
  r.warmup = o.warmup.empty() ? e.warmup : o.warmup;
  if (!e.settle_cap.empty()) r.settle_cap = e.settle_cap;
  r.interval = o.interval;
  r.validate = o.slub_validate;
  r.jobs = 1;
  return r;
}

std::vector<VariantRun> plan_runs(const std::vector<Experiment>& experiments, const ValidateOptions& o,
                                  std::vector<std::vector<std::optional<Fit>>>& fits) {
  std::vector<VariantRun> runs;
  fits.assign(experiments.size(), {});
  for (std::size_t ei = 0; ei < experiments.size(); ++ei) {
    const Experiment& e = experiments[ei];
    fits[ei].assign(e.topologies.size(), std::nullopt);
    for (std::size_t ti = 0; ti < e.topologies.size(); ++ti) {
      const auto& t = e.topologies[ti];
      std::vector<std::string> fit_sets;
      std::string fit_file;
      if (e.fit) {
        fits[ei][ti] = load_fit(o.fits, e, t.name);
        fit_sets = fits[ei][ti]->sets();
        fit_file = fits[ei][ti]->file;
      } else if (e.fit_from && !o.calibrate) {
        // A non-slab time derived once from the calibration set; not an in-sample point here.
        fits[ei][ti] = load_borrowed_fit(o.fits, e, o.home);
        fit_sets = fits[ei][ti]->sets();
        fit_file = fits[ei][ti]->file;
      }
      for (const auto& v : e.variants) {
        if (!v.excluded.empty()) continue;
        VariantRun run;
        run.experiment = &e;
        run.topology = ti;
        run.variant = &v;
        run.job = resolve_variant(e, t, v, variant_request(e, t, v, fit_sets, o), fit_file);
        runs.push_back(std::move(run));
      }
    }
  }
  return runs;
}

fs::path variant_dir(const VariantRun& r) {
  return fs::path(r.experiment->id) / r.experiment->topologies[r.topology].name / r.variant->name;
}

json validate_plan(const std::vector<VariantRun>& runs) {
  json points = json::array();
  for (const auto& r : runs)
    for (int n : r.job.nr_tasks)
      points.push_back({{"experiment", r.experiment->id}, {"topology", r.experiment->topologies[r.topology].name},
                        {"variant", r.variant->name}, {"nr_task", n}, {"runs", r.job.request.runs}});
  return {{"points_total", points.size()}, {"points", points}};
}

bool run_all(std::vector<VariantRun>& runs, const ValidateOptions& o, const std::optional<Shard>& shard,
             const std::string& pass) {
  // Units in plan order (variant run, then row): shard K of N runs units K, K+N, ...
  struct Unit {
    std::size_t run, row;
    int nr_task;
  };
  std::vector<Unit> units;
  for (std::size_t i = 0; i < runs.size(); ++i)
    for (std::size_t row = 0; row < runs[i].job.nr_tasks.size(); ++row)
      units.push_back({i, row, runs[i].job.nr_tasks[row]});
  // Points already on disk under the --points directories (the first to hold a point wins: every
  // copy of a point is the same bytes), and where new ones are kept: with --shard, or with one
  // --points directory, its store (which a rerun resumes).
  std::vector<std::map<std::string, std::pair<RunResult, double>>> found(runs.size());
  std::vector<std::unique_ptr<PointStore>> keep(runs.size());
  const bool keeping = shard || o.points.size() == 1;
  for (std::size_t i = 0; i < runs.size(); ++i)
    for (std::size_t d = 0; d < o.points.size(); ++d) {
      const std::string dir = (fs::path(o.points[d]) / variant_dir(runs[i])).string();
      if (d == 0 && keeping) {
        keep[i] = std::make_unique<PointStore>(dir, runs[i].job, true);
        found[i].insert(keep[i]->loaded().begin(), keep[i]->loaded().end());
      } else if (fs::exists(fs::path(dir) / "index.json")) {
        const PointStore other(dir, runs[i].job, true);
        found[i].insert(other.loaded().begin(), other.loaded().end());
      }
    }
  auto on_disk = [&](std::size_t i, std::size_t row, int run) {
    return found[i].count(point_id(runs[i].job, {0, static_cast<std::size_t>(run), row})) > 0;
  };
  std::vector<Unit> todo;
  std::size_t present = 0;
  for (std::size_t u = 0; u < units.size(); ++u) {
    const Unit& unit = units[u];
    bool all = true;
    for (int r = 0; r < runs[unit.run].job.request.runs; ++r) all = all && on_disk(unit.run, unit.row, r);
    if (all) ++present;
    else if (!shard || shard->contains(u)) todo.push_back(unit);
  }
  // Largest rows first: better packing on the host threads; results go to fixed slots.
  std::stable_sort(todo.begin(), todo.end(), [](const Unit& a, const Unit& b) { return a.nr_task > b.nr_task; });
  // The same job with one row: a row's simulation does not depend on the others.
  auto one_row = [&](const Unit& u) {
    Job one = runs[u.run].job;
    one.nr_tasks = {u.nr_task};
    one.request.jobs = 1;
    return one;
  };
  // A row that is the same simulation as another's (a variant two tables share, such as Zhao
  // Liu's 3accabda4 baseline: every result-changing request field and input file the same, as
  // a stored point is matched on resume, and the same task count) is simulated once; `first[k]`
  // is the unit that runs it.
  std::vector<std::size_t> first(todo.size());
  std::vector<std::size_t> distinct;
  {
    std::vector<json> described(runs.size());
    std::map<std::string, std::size_t> seen;
    for (std::size_t k = 0; k < todo.size(); ++k) {
      json& d = described[todo[k].run];
      if (d.is_null()) d = job_description(runs[todo[k].run].job);
      d["nr_task"] = todo[k].nr_task;
      const auto [it, fresh] = seen.emplace(d.dump(), k);
      first[k] = it->second;
      if (fresh) distinct.push_back(k);
    }
  }
  std::vector<std::vector<JobResult>> parts(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) parts[i].resize(runs[i].job.nr_tasks.size());
  auto keep_row = [&](const Unit& u) {
    if (!keep[u.run]) return;
    const auto& r = parts[u.run][u.row];
    const int nruns = runs[u.run].job.request.runs;
    for (int run = 0; run < nruns; ++run)
      keep[u.run]->save({0, static_cast<std::size_t>(run), u.row}, r.runs[0][run][0], r.wall_seconds[0] / nruns);
  };
  ProgressMeter meter(shard ? "validate shard " + shard->text() : pass.empty() ? "validate" : "validate, " + pass,
                      distinct.size(), 0, o.quiet);
  parallel_for(distinct.size(), host_threads(o.jobs), [&](std::size_t d) {
    const Unit& u = todo[distinct[d]];
    const VariantRun& vr = runs[u.run];
    parts[u.run][u.row] = run_job(one_row(u), {});
    keep_row(u);
    const auto& r = parts[u.run][u.row];
    meter.point_done(fmt::format("{} {} {} nr_task={}: {} ops/s, {:.2f} s", vr.experiment->id,
                                 vr.experiment->topologies[vr.topology].name, vr.variant->name, u.nr_task,
                                 r.runs[0][0][0].ops_per_sec, r.wall_total));
  });
  meter.finish();
  for (std::size_t k = 0; k < todo.size(); ++k)
    if (first[k] != k) {
      const Unit& u = todo[k];
      const Unit& f = todo[first[k]];
      parts[u.run][u.row] = parts[f.run][f.row];
      keep_row(u);
    }
  for (auto& store : keep)
    if (store) store->flush();
  if (shard) return present + todo.size() == units.size();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    VariantRun& vr = runs[i];
    const int nruns = vr.job.request.runs;
    vr.result = JobResult{};
    vr.result.runs.assign(1, std::vector<std::vector<RunResult>>(nruns, std::vector<RunResult>(vr.job.nr_tasks.size())));
    vr.result.wall_seconds.assign(1, 0.0);
    for (std::size_t row = 0; row < vr.job.nr_tasks.size(); ++row) {
      for (int r = 0; r < nruns; ++r) {
        const auto it = found[i].find(point_id(vr.job, {0, static_cast<std::size_t>(r), row}));
        if (it != found[i].end() && parts[i][row].runs.empty()) {
          vr.result.runs[0][r][row] = it->second.first;
          vr.result.wall_seconds[0] += it->second.second;
        } else {
          vr.result.runs[0][r][row] = std::move(parts[i][row].runs[0][r][0]);
        }
      }
      if (!parts[i][row].runs.empty()) vr.result.wall_seconds[0] += parts[i][row].wall_seconds[0];
    }
    vr.result.wall_total = vr.result.wall_seconds[0];
    vr.stats = stdout_stats(vr.job, vr.result);
  }
  return true;
}

double metric_value(const json& stats, const std::string& metric) {
  auto it = stats.find(metric);
  if (it == stats.end() || !it->is_number()) return 0.0;
  return it->get<double>();
}

double simulate_metric(const Job& job, const std::string& metric) {
  return metric_value(stdout_stats(job, run_job(job, {})), metric);
}

ExperimentScore score_experiment(const Experiment& e, const std::vector<VariantRun>& runs,
                                 const std::vector<std::optional<Fit>>& fits, std::optional<std::size_t> only) {
  ExperimentScore s;
  s.experiment = &e;
  for (std::size_t ti = 0; ti < e.topologies.size(); ++ti) {
    const auto& topo = e.topologies[ti];
    if (only && ti != *only) {
      s.topologies.emplace_back();  // not run here: left empty
      continue;
    }
    auto stats_of = [&](const std::string& name) -> const json* {
      for (const auto& r : runs)
        if (r.experiment == &e && r.topology == ti && r.variant->name == name) return &r.stats;
      return nullptr;
    };
    TopologyScore t;
    t.topology = topo.name;
    t.note = topo.note;
    t.nr_task = topo.nr_task;
    for (const auto& cell : e.cells) {
      if (!cell.excluded.empty()) {
        t.cells.push_back(excluded_cell(cell));
        continue;
      }
      const json* b = stats_of(cell.baseline);
      const json* x = stats_of(cell.test);
      if (!b || !x) throw std::logic_error("a scored cell's variant was not run");
      if (!b->contains(cell.metric) && !x->contains(cell.metric))
        throw ConfigError(e.file, cell.field + ".metric",
                          fmt::format("'{}' is in neither variant's stats.json ({}, {}) on topology '{}'", cell.metric,
                                      cell.baseline, cell.test, topo.name));
      t.cells.push_back(score_cell(cell, metric_value(*b, cell.metric), metric_value(*x, cell.metric)));
    }
    // A profiled or counted state: its stats, whether it may calibrate (seed checks are never
    // fitted on, baselines included: VALIDATION.md; the state a pin was fitted on is in-sample
    // whatever the set), whether its task count runs here.
    struct State {
      const json* stats;
      bool fitted, row_here;
    };
    auto pinned = [&](const std::string& variant, int nr_task) {
      return e.fit && e.fit->pin() && variant == e.fit->variant && nr_task == e.fit->nr_task;
    };
    auto state = [&](const std::string& variant, int nr_task) {
      const json* st = stats_of(variant);
      if (!st) throw std::logic_error("a profiled or counted variant was not run");
      return State{st, (e.variant(variant)->baseline && e.calibration_set) || pinned(variant, nr_task),
                   std::find(topo.nr_task.begin(), topo.nr_task.end(), nr_task) != topo.nr_task.end()};
    };
    for (const auto& prof : e.profiles) {
      const auto [st, fitted, row_here] = state(prof.variant, prof.nr_task);
      ProfileScore ps;
      ps.profile = &prof;
      ps.fitted = fitted;
      ps.pinned = pinned(prof.variant, prof.nr_task);
      for (const auto& r : prof.rows) {
        ProfileRowScore rs;
        rs.row = &r;
        if (row_here) rs.simulated = profile_share(*st, prof.nr_task, r);
        ps.rows.push_back(rs);
      }
      t.profiles.push_back(std::move(ps));
    }
    for (const auto& ctr : e.counters) {
      CounterScore cs;
      cs.counter = &ctr;
      cs.fitted = state(ctr.variant, ctr.nr_task.front()).fitted;
      // One row: its rate. Several (a whole-job counter, per task and second): their mean
      // weighted by task count, as runtest.py's runs of equal length add up.
      double sum = 0, weight = 0;
      bool here = true;
      for (int n : ctr.nr_task) {
        const auto [st, fitted, row_here] = state(ctr.variant, n);
        if (!row_here) {
          here = false;
          break;
        }
        // The key is one the model reports (checked when the file is read); lkp drops a key that
        // is zero in every run, so an absent key is 0.
        auto it = st->find(ctr.stats_key(n));
        if (it != st->end() && !it->is_number())
          throw std::logic_error("a counter key in stats.json is not a number: " + ctr.stats_key(n));
        const double v = it == st->end() ? 0.0 : it->get<double>();
        if (ctr.nr_task.size() == 1) {
          sum = v;  // one row: its rate as stats.json has it (v * n / n can differ in the last bit)
          weight = 1;
          break;
        }
        sum += v * n;
        weight += n;
      }
      if (here) cs.simulated = sum / weight;
      t.counters.push_back(cs);
    }
    if (e.fit_from && ti < fits.size() && fits[ti])
      t.borrowed = fmt::format("non-slab time borrowed from the calibration fit {} (scale {}, fitted on {} {} at {} tasks): {}",
                               fs::path(fits[ti]->file).filename().string(), fits[ti]->scale, fits[ti]->experiment,
                               fits[ti]->variant, fits[ti]->nr_task, e.fit_from->note);
    if (e.fit && ti < fits.size() && fits[ti]) {
      const json* b = stats_of(e.fit->variant);
      if (!b->contains(e.fit->metric))
        throw ConfigError(e.file, "fit.metric", fmt::format("'{}' is not in the stats.json of {} on topology '{}'",
                                                            e.fit->metric, e.fit->variant, topo.name));
      FitPoint f;
      f.variant = e.fit->variant;
      f.metric = e.fit->metric;
      f.nr_task = e.fit->nr_task;
      f.published = e.fit->published;
      f.simulated = metric_value(*b, e.fit->metric);
      f.scale = fits[ti]->scale;
      f.fit_file = fs::path(fits[ti]->file).filename().string();
      f.nonslab_ns = fits[ti]->nonslab_ns();
      f.cross_checks = fits[ti]->cross_checks;
      t.fit = f;
    }
    s.topologies.push_back(std::move(t));
  }
  finish(s);
  return s;
}

namespace {

// The windows' noise on a throughput cell's delta, from both variants' settle half-widths at the
// cell's row (will-it-scale.N.*); 0 for other metrics, whose noise the runs do not estimate.
double cell_sigma(const ExperimentCell& cell, const json& base, const json& test, double delta) {
  const std::string prefix = "will-it-scale.";
  if (cell.metric.rfind(prefix, 0) != 0) return 0;
  const std::size_t dot = cell.metric.find('.', prefix.size());
  if (dot == std::string::npos) return 0;
  const std::string n = cell.metric.substr(prefix.size(), dot - prefix.size());
  if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos) return 0;
  const std::string hw = "settle." + n + ".half_width";
  return delta_sigma(delta, metric_value(base, cell.metric), metric_value(base, hw), metric_value(test, cell.metric),
                     metric_value(test, hw));
}

}  // namespace

void add_intervals(const std::vector<Experiment>& experiments, const std::vector<VariantRun>& runs,
                   const std::vector<std::vector<std::optional<Fit>>>& fits, const ValidateOptions& o,
                   std::vector<ExperimentScore>& scores) {
  const UncertaintyMode mode = parse_uncertainty(o.uncertainty);
  // Per (experiment, topology): the factors, from its baseline's job (the machine's and the
  // workload's inputs, after the fit's --set), and the runs again at each factor's ends.
  struct Scenario {
    std::size_t experiment, topology, factor;
    int end;
    std::size_t first, count;  // its runs in `all`
  };
  std::map<std::pair<std::size_t, std::size_t>, std::vector<Factor>> factors;
  for (std::size_t ei = 0; ei < experiments.size(); ++ei)
    for (std::size_t ti = 0; ti < experiments[ei].topologies.size(); ++ti)
      for (const auto& r : runs)
        if (r.experiment == &experiments[ei] && r.topology == ti && r.variant->baseline)
          factors[{ei, ti}] = uncertainty_factors(r.job, mode);

  // The class-4 fit done again at every end. The non-slab time is not an input of its own: it is
  // fitted so that the baseline meets its published figure (VALIDATION.md class 4), so in a world
  // where the latencies sit at their ranges' ends the calibration would have found another one.
  // Holding the nominal fit instead would score worlds whose baseline contradicts the published
  // one. A borrowed fit is its lender's search again, when the lender ran on the same machine.
  using RefitKey = std::tuple<std::string, std::string, std::string>;  // experiment, topology, the end's --set items
  struct Refit {
    const Experiment* e;
    const ExperimentTopology* t;
    double start;
    std::vector<std::string> sets;
    Fit fit;
  };
  std::list<std::vector<Experiment>> lenders;  // lenders outside this run (--only)
  auto owner_of = [&](std::size_t ei, std::size_t ti) -> std::pair<const Experiment*, const ExperimentTopology*> {
    const Experiment& e = experiments[ei];
    if (e.fit) return {&e, &e.topologies[ti]};
    if (!e.fit_from || e.fit_from->topology != e.topologies[ti].name) return {nullptr, nullptr};
    const Experiment* lender = nullptr;
    for (const auto& x : experiments)
      if (x.id == e.fit_from->experiment) lender = &x;
    for (const auto& l : lenders)
      if (!l.empty() && l.front().id == e.fit_from->experiment) lender = &l.front();
    if (!lender) {
      lenders.push_back(load_experiments(fs::path(e.file).parent_path().string(), e.fit_from->experiment));
      if (lenders.back().empty() || !lenders.back().front().fit) return {nullptr, nullptr};
      lender = &lenders.back().front();
    }
    for (const auto& t : lender->topologies)
      if (t.name == e.fit_from->topology) return {lender, &t};
    return {nullptr, nullptr};
  };
  auto joined = [](const std::vector<std::string>& sets) { return fmt::format("{}", fmt::join(sets, " ")); };
  std::map<RefitKey, std::size_t> refit_of;
  std::vector<Refit> refits;
  for (const auto& [key, fs] : factors) {
    const auto [ei, ti] = key;
    if (!fits[ei][ti]) continue;
    const auto [owner, topo] = owner_of(ei, ti);
    if (!owner) continue;
    for (const auto& f : fs)
      for (int end = 0; end < 2; ++end) {
        if (end == 0 ? !f.run_low() : !f.run_high()) continue;
        const auto& sets = end == 0 ? f.low : f.high;
        RefitKey k{owner->id, topo->name, joined(sets)};
        if (refit_of.count(k)) continue;
        refit_of[k] = refits.size();
        refits.push_back(Refit{owner, topo, fits[ei][ti]->scale, sets, {}});
      }
  }
  {
    auto progress = make_progress(o);
    const auto t0 = std::chrono::steady_clock::now();
    progress(refits.empty() ? fmt::format("--uncertainty {}: {}: no class-4 fit to do again", o.uncertainty, pass_name(2))
                            : fmt::format("--uncertainty {}: {}: the class-4 fit again at {} end(s)", o.uncertainty,
                                          pass_name(2), refits.size()));
    std::mutex mu;
    parallel_for(refits.size(), host_threads(o.jobs), [&](std::size_t i) {
      Refit& r = refits[i];
      r.fit = fit_baseline(*r.e, *r.t, base_parameters(*r.e, o.home), o, r.sets, r.start, progress, mu);
    });
    progress(fmt::format("{}: wall time {:.2f} s", pass_name(2), seconds_since(t0)));
  }
  auto refit_at = [&](std::size_t ei, std::size_t ti, const std::vector<std::string>& sets) -> const Fit* {
    if (!fits[ei][ti]) return nullptr;
    const auto [owner, topo] = owner_of(ei, ti);
    if (!owner) return nullptr;
    const auto it = refit_of.find(RefitKey{owner->id, topo->name, joined(sets)});
    return it == refit_of.end() ? nullptr : &refits[it->second].fit;
  };

  std::vector<Scenario> scenarios;
  std::vector<VariantRun> all;
  for (const auto& [key, fs] : factors) {
    const auto [ei, ti] = key;
    for (std::size_t f = 0; f < fs.size(); ++f)
      for (int end = 0; end < 2; ++end) {
        if (end == 0 ? !fs[f].run_low() : !fs[f].run_high()) continue;
        Scenario sc{ei, ti, f, end, all.size(), 0};
        const auto& sets = end == 0 ? fs[f].low : fs[f].high;
        const Fit* refit = refit_at(ei, ti, sets);
        for (const auto& r : runs) {
          if (r.experiment != &experiments[ei] || r.topology != ti) continue;
          VariantRun at = r;
          JobRequest req = r.job.request;
          for (const auto& set : sets) req.sets.push_back(set);
          if (refit)  // after the nominal fit's items, so its values are the ones that hold
            for (const auto& set : refit->sets()) req.sets.push_back(set);
          at.job = resolve_job(req);
          at.result = JobResult{};
          at.stats = json();
          all.push_back(std::move(at));
          ++sc.count;
        }
        scenarios.push_back(sc);
      }
  }
  std::size_t points = 0;
  for (const auto& r : all) points += job_points(r.job).size();
  auto progress = make_progress(o);
  progress(fmt::format("--uncertainty {}: {}: {} more points at the ends of {} scenario(s)", o.uncertainty,
                       pass_name(3), points, scenarios.size()));
  ValidateOptions ends = o;
  ends.points.clear();  // nothing of the nominal store is reused or kept
  const auto t0 = std::chrono::steady_clock::now();
  run_all(all, ends, std::nullopt, pass_name(3));
  progress(fmt::format("{}: wall time {:.2f} s", pass_name(3), seconds_since(t0)));
  // Each scenario's cell deltas, scored as the nominal ones are.
  std::map<std::tuple<std::size_t, std::size_t, std::size_t, int>, TopologyScore> at_end;
  for (const auto& sc : scenarios) {
    std::vector<VariantRun> these(std::make_move_iterator(all.begin() + static_cast<std::ptrdiff_t>(sc.first)),
                                  std::make_move_iterator(all.begin() + static_cast<std::ptrdiff_t>(sc.first + sc.count)));
    ExperimentScore s = score_experiment(experiments[sc.experiment], these, fits[sc.experiment], sc.topology);
    at_end[{sc.experiment, sc.topology, sc.factor, sc.end}] = std::move(s.topologies[sc.topology]);
  }
  for (std::size_t ei = 0; ei < experiments.size(); ++ei)
    for (std::size_t ti = 0; ti < scores[ei].topologies.size(); ++ti) {
      const auto fit = factors.find({ei, ti});
      if (fit == factors.end()) continue;
      const std::vector<Factor>& fs = fit->second;
      auto stats_of = [&](const std::string& name) -> const json* {
        for (const auto& r : runs)
          if (r.experiment == &experiments[ei] && r.topology == ti && r.variant->name == name) return &r.stats;
        return nullptr;
      };
      TopologyScore& t = scores[ei].topologies[ti];
      for (const auto& f : fs)
        for (int end = 0; end < 2; ++end) {
          if (!fits[ei][ti] || (end == 0 ? !f.run_low() : !f.run_high())) continue;
          const Fit* refit = refit_at(ei, ti, end == 0 ? f.low : f.high);
          t.refits.push_back(
              refit ? fmt::format("{}, {} end: scale {} ({} {} against {} published, {:+.1f}%{})", f.name,
                                  end == 0 ? "low" : "high", refit->scale, refit->metric, refit->simulated,
                                  refit->published, (refit->simulated / refit->published - 1.0) * 100.0,
                                  refit->converged ? "" : ", not within the fit's tolerance")
                    : fmt::format("{}, {} end: the borrowed scale {} held (its lender ran on another machine)", f.name,
                                  end == 0 ? "low" : "high", fits[ei][ti]->scale));
        }
      for (std::size_t ci = 0; ci < t.cells.size(); ++ci) {
        CellScore& c = t.cells[ci];
        if (c.excluded || !c.sim_delta) continue;
        const double d = *c.sim_delta;
        std::vector<std::array<double, 2>> at(fs.size(), {d, d});
        for (std::size_t f = 0; f < fs.size(); ++f)
          for (int end = 0; end < 2; ++end) {
            const auto it = at_end.find({ei, ti, f, end});
            if (it != at_end.end() && it->second.cells[ci].sim_delta)
              at[f][static_cast<std::size_t>(end)] = *it->second.cells[ci].sim_delta;
          }
        const json* b = stats_of(c.cell->baseline);
        const json* x = stats_of(c.cell->test);
        const double sigma = b && x ? cell_sigma(*c.cell, *b, *x, d) : 0;
        const Spread s = spread_of(d, sigma, fs, at, experiments[ei].seed, 0x76616cULL + ti, ci);
        CellInterval iv;
        iv.low = s.low;
        iv.high = s.high;
        iv.reach_low = s.reach_low;
        iv.reach_high = s.reach_high;
        iv.decided_by = deciding_input(fs, at, s, d, sigma, nullptr);
        c.interval = iv;
      }
      finish(scores[ei]);
    }
}

int validate_command(const ValidateOptions& o) {
  auto experiments = load_experiments(o.experiments, o.only);
  if (o.calibrate) return calibrate_command(experiments, o);
  std::vector<std::vector<std::optional<Fit>>> fits;
  auto runs = plan_runs(experiments, o, fits);
  if (!o.plan.empty()) {
    const std::string text = validate_plan(runs).dump(1) + "\n";
    if (o.plan == "-") std::cout << text;
    else write_file_atomically(o.plan, text);
    return 0;
  }
  std::optional<Shard> shard;
  if (!o.shard.empty()) shard = parse_shard(o.shard, [](const char* v) { return std::getenv(v); });
  if (shard && o.points.empty())
    throw ConfigError("command line", "--shard", "a shard keeps its points: give --points DIR");
  if (shard) {
    const bool complete = run_all(runs, o, shard);
    std::cout << fmt::format("validate shard {}: its points are in {}; when every shard has ended, 'slubsim "
                             "validate --points DIR_1,...,DIR_N' scores them all{}\n",
                             shard->text(), o.points[0], complete ? " (this tree already holds every point)" : "");
    return 0;
  }
  const auto started = std::chrono::steady_clock::now();
  auto progress = make_progress(o);
  if (!o.uncertainty.empty()) progress(fmt::format("--uncertainty {}: {}: the scored points", o.uncertainty, pass_name(1)));
  run_all(runs, o, std::nullopt, o.uncertainty.empty() ? "" : pass_name(1));
  std::vector<ExperimentScore> scores;
  for (std::size_t ei = 0; ei < experiments.size(); ++ei)
    scores.push_back(score_experiment(experiments[ei], runs, fits[ei]));
  if (!o.uncertainty.empty()) {
    progress(fmt::format("{}: wall time {:.2f} s", pass_name(1), seconds_since(started)));
    add_intervals(experiments, runs, fits, o, scores);
    progress(fmt::format("wall time {:.2f} s in all, {} passes", seconds_since(started), kUncertaintyPasses));
  }
  Scoreboard board = make_scoreboard(std::move(scores));
  board.sets = o.sets;
  // Everything is serialised before anything is written.
  std::string text = scoreboard_text(board);
  std::string md = scoreboard_markdown(board);
  std::string js = scoreboard_json(board).dump(2) + "\n";
  std::cout << text;
  if (!o.write) return 0;
  for (const auto& r : runs) {
    fs::path dir = fs::path(o.out) / r.experiment->id / r.experiment->topologies[r.topology].name / r.variant->name;
    write_results(dir.string(), r.job, r.result);
  }
  // A partial run (--only) never replaces a full scoreboard: its own goes beside it.
  const std::string name = o.only.empty() ? "scoreboard" : "scoreboard.partial";
  write_text(fs::path(o.out) / (name + ".md"), md);
  write_text(fs::path(o.out) / (name + ".json"), js);
  std::cout << fmt::format("wrote {}/{}.md, {}.json and {} result directories\n", o.out, name, name, runs.size());
  return 0;
}

int experiment_table_command(const std::string& experiment_file, const ValidateOptions& o) {
  std::vector<Experiment> experiments{load_experiment(experiment_file)};
  if (!o.topology.empty()) {
    auto& ts = experiments[0].topologies;
    if (std::any_of(ts.begin(), ts.end(), [&](const auto& t) { return t.name == o.topology; }))
      ts.erase(std::remove_if(ts.begin(), ts.end(), [&](const auto& t) { return t.name != o.topology; }), ts.end());
  }
  const Experiment& e = experiments[0];
  std::vector<std::vector<std::optional<Fit>>> fits;
  auto runs = plan_runs(experiments, o, fits);
  run_all(runs, o, std::nullopt);
  ExperimentScore score = score_experiment(e, runs, fits[0]);
  TableSettings settings;
  settings.duration = o.duration.empty() ? e.duration : o.duration;
  settings.warmup = o.warmup.empty() ? e.warmup : o.warmup;
  settings.shortened = settings.duration != e.duration || settings.warmup != e.warmup;
  for (std::size_t ti = 0; ti < e.topologies.size(); ++ti) {
    std::vector<json> stats(e.variants.size(), json(nullptr));
    for (const auto& r : runs)
      if (r.topology == ti)
        for (std::size_t vi = 0; vi < e.variants.size(); ++vi)
          if (&e.variants[vi] == r.variant) stats[vi] = r.stats;
    std::cout << experiment_table(e, score.topologies[ti], stats, settings);
    if (ti + 1 < e.topologies.size()) std::cout << "\n";
  }
  return 0;
}

}  // namespace slubsim
