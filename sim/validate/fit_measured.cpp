// `slubsim fit`: a figure measured on the user's machine, read, and the workload's non-slab time
// fitted to it by validate --calibrate's search (search_scale); and `run --fit FILE`.
#include "sim/validate/fit_measured.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "sim/validate/validate.h"

namespace slubsim {

namespace fs = std::filesystem;

namespace {

const char* kFitSource =
    "slubsim fit: VALIDATION.md class 4, the workload's non-slab time scaled by one factor until the simulated "
    "figure meets one measured on the machine";
// runtest.py's header (will-it-scale): the first column is the task count.
const char* kCsvTasks = "tasks";
// lkp's key of the sum over a job's rows (programs/will-it-scale/parse; sim/run/report.cpp).
const char* kWorkloadKey = "will-it-scale.workload";

std::string read_text(const std::string& file) {
  if (!is_file(file))
    throw ConfigError(file, "", "no such file (--from takes an lkp stats.json, runtest.py's CSV or a will-it-scale "
                                "binary's output)");
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in && !in.eof()) throw ConfigError(file, "", "cannot read the file");
  return ss.str();
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, sep)) out.push_back(trim(part));
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

// A whole text as a number, or nullopt.
std::optional<double> to_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    double v = std::stod(text, &used);
    if (used != text.size()) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// A measured figure must be positive ops/s.
double check_figure(double v, const std::string& file, const std::string& where, const std::string& extra = "") {
  if (!(v > 0) || !std::isfinite(v))
    throw ConfigError(file, where,
                      fmt::format("is {}: a will-it-scale figure is a positive number of ops/s{}", v, extra));
  return v;
}

// The task count N of "will-it-scale.N.<word>", or 0.
int row_of(const std::string& key, const std::string& word) {
  const std::string head = "will-it-scale.", tail = "." + word;
  if (key.size() <= head.size() + tail.size() || key.rfind(head, 0) != 0 ||
      key.compare(key.size() - tail.size(), tail.size(), tail) != 0)
    return 0;
  const std::string n = key.substr(head.size(), key.size() - head.size() - tail.size());
  if (n.empty() || n.size() > 6 || n.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::stoi(n);
}

MeasuredFigure from_stats(const std::string& file, const std::string& mode, int nr_task) {
  const json doc = load_json_file(file);
  if (!doc.is_object()) throw ConfigError(file, "", "an lkp stats.json is a JSON object of keys");
  const std::string word = mode_word(mode), other = mode_word(mode == "thread" ? "process" : "thread");
  std::map<int, std::string> rows, other_rows;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (int n = row_of(it.key(), word)) rows[n] = it.key();
    if (int n = row_of(it.key(), other)) other_rows[n] = it.key();
  }
  auto value = [&](const std::string& key) {
    const json& v = doc.at(key);
    double x = 0;
    if (v.is_number()) {
      x = v.get<double>();
    } else if (v.is_array() && !v.empty() &&
               std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_number(); })) {
      for (const auto& e : v) x += e.get<double>();  // matrix.json: one element per run, their mean
      x /= static_cast<double>(v.size());
    } else {
      throw ConfigError(file, key, "is not a number (nor an array of numbers, as matrix.json holds)");
    }
    return check_figure(x, file, key);
  };
  auto listed = [&](const std::map<int, std::string>& m) {
    std::vector<std::string> keys;
    for (const auto& [n, k] : m) keys.push_back(k);
    return fmt::format("{}", fmt::join(keys, ", "));
  };
  auto wrong_mode = [&]() -> std::string {
    if (!rows.empty() || other_rows.empty()) return "";
    return fmt::format(" (the file has {}: a {} job; give --mode {})", listed(other_rows),
                       mode == "thread" ? "process" : "thread", mode == "thread" ? "process" : "thread");
  };
  MeasuredFigure f;
  if (nr_task > 0) {
    const std::string key = wis_metric(nr_task, mode);
    f.nr_task = nr_task;
    if (doc.contains(key)) {
      f.ops = value(key);
      f.from = fmt::format("{}, key {}", file, key);
      return f;
    }
    if (rows.empty() && doc.contains(kWorkloadKey) && wrong_mode().empty()) {
      // lkp's sum over the job's rows: the figure of the one task count a one-row job ran.
      f.ops = value(kWorkloadKey);
      f.from = fmt::format("{}, key {} (a one-row job's sum: {} tasks, as --nr-task says)", file, kWorkloadKey, nr_task);
      return f;
    }
    throw ConfigError(file, key,
                      fmt::format("no such key{}", !rows.empty() ? fmt::format(" (the file has {}: give one of "
                                                                               "their task counts as --nr-task)",
                                                                               listed(rows))
                                                                 : wrong_mode().empty()
                                                                       ? " (nor will-it-scale.workload): not a will-it-scale result"
                                                                       : wrong_mode()));
  }
  if (rows.size() == 1) {
    f.nr_task = rows.begin()->first;
    f.ops = value(rows.begin()->second);
    f.from = fmt::format("{}, key {}", file, rows.begin()->second);
    return f;
  }
  if (rows.size() > 1)
    throw ConfigError("command line", "--nr-task",
                      fmt::format("needed: {} holds several task counts ({}); choose one, the lowest for the least "
                                  "contention",
                                  file, listed(rows)));
  if (doc.contains(kWorkloadKey) && wrong_mode().empty())
    throw ConfigError("command line", "--nr-task",
                      fmt::format("needed: {} has {} but no will-it-scale.N.{} key to say its task count", file,
                                  kWorkloadKey, word));
  throw ConfigError(file, fmt::format("will-it-scale.N.{}", word),
                    fmt::format("no such key{}", wrong_mode().empty()
                                                     ? std::string(" (nor will-it-scale.workload): not a will-it-scale result")
                                                     : wrong_mode()));
}

MeasuredFigure from_csv(const std::string& file, const std::vector<std::string>& lines, std::size_t header,
                        const std::string& mode, int nr_task) {
  const std::vector<std::string> names = split(trim(lines[header]), ',');
  const std::string word = mode_word(mode);
  const auto col = std::find(names.begin(), names.end(), word);
  if (col == names.end())
    throw ConfigError(file, fmt::format("line {}", header + 1),
                      fmt::format("the header has no '{}' column (runtest.py's is tasks,processes,processes_idle,"
                                  "threads,threads_idle,linear)",
                                  word));
  const std::size_t c = static_cast<std::size_t>(col - names.begin());
  struct Row {
    int tasks;
    std::string value;
    std::size_t line;
  };
  std::vector<Row> rows;
  for (std::size_t i = header + 1; i < lines.size(); ++i) {
    const std::string line = trim(lines[i]);
    if (line.empty()) continue;
    const auto fields = split(line, ',');
    if (fields.size() != names.size())
      throw ConfigError(file, fmt::format("line {}", i + 1),
                        fmt::format("has {} fields, the header {}", fields.size(), names.size()));
    const auto tasks = to_number(fields[0]);
    if (!tasks || *tasks < 0 || *tasks != std::floor(*tasks) || *tasks > 1e6)
      throw ConfigError(file, fmt::format("line {}", i + 1), fmt::format("'{}' is not a task count", fields[0]));
    if (*tasks == 0) continue;  // runtest.py's first row: 0 tasks, 100% idle
    rows.push_back({static_cast<int>(*tasks), fields[c], i + 1});
  }
  if (rows.empty()) throw ConfigError(file, "", "runtest.py's CSV has no row of 1 task or more");
  const Row* pick = nullptr;
  if (nr_task > 0) {
    for (const auto& r : rows)
      if (r.tasks == nr_task) pick = &r;
    if (!pick) {
      std::vector<int> have;
      for (const auto& r : rows) have.push_back(r.tasks);
      throw ConfigError(file, "",
                        fmt::format("no row of {} tasks (--nr-task); its rows: {}", nr_task, fmt::join(have, ",")));
    }
  } else {
    pick = &*std::min_element(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.tasks < b.tasks; });
  }
  const std::string where = fmt::format("line {} ({} tasks, column {})", pick->line, pick->tasks, word);
  const auto v = to_number(pick->value);
  if (!v) throw ConfigError(file, where, fmt::format("'{}' is not a number", pick->value));
  MeasuredFigure f;
  f.nr_task = pick->tasks;
  f.ops = check_figure(*v, file, where,
                       *v < 0 ? " (runtest.py writes -1 when the binary printed no average: did it run?)" : "");
  f.from = fmt::format("{}, runtest.py CSV {}", file, where);
  return f;
}

MeasuredFigure from_binary_output(const std::string& file, const std::vector<std::string>& lines,
                                  std::size_t average, int nr_task) {
  const std::string where = fmt::format("line {}", average + 1);
  const std::string text = trim(lines[average]).substr(std::string("average:").size());
  const auto v = to_number(trim(text));
  if (!v) throw ConfigError(file, where, fmt::format("'{}' is not a number after 'average:'", trim(text)));
  if (nr_task <= 0)
    throw ConfigError("command line", "--nr-task",
                      fmt::format("needed: {} is one will-it-scale binary's output, which does not print its task "
                                  "count (give the -t it ran with)",
                                  file));
  MeasuredFigure f;
  f.nr_task = nr_task;
  f.ops = check_figure(*v, file, where);
  f.from = fmt::format("{}, a will-it-scale binary's average at {} tasks", file, nr_task);
  return f;
}

// Every setting the fit was made under beyond the topology, workload, kernel and task count:
// `run` must be given the same for the fit to hold.
std::string settings_text(const JobRequest& r) {
  std::vector<std::string> parts;
  if (r.mode != "process") parts.push_back("--mode " + r.mode);
  if (!r.sheaf_capacity.empty()) parts.push_back("--sheaf-capacity " + r.sheaf_capacity);
  if (!r.sysfs.empty()) parts.push_back("--sysfs " + r.sysfs);
  for (const auto& p : r.patches) parts.push_back("--patch " + p);
  for (const auto& s : r.sets) parts.push_back("--set " + s);
  if (r.costs != JobRequest{}.costs) parts.push_back("--costs " + r.costs);
  if (r.caches != JobRequest{}.caches) parts.push_back("--caches " + r.caches);
  if (parts.empty()) return "";
  return fmt::format("; made with {}", fmt::join(parts, " "));
}

}  // namespace

std::string mode_word(const std::string& mode) {
  if (mode == "process") return "processes";
  if (mode == "thread") return "threads";
  throw ConfigError("command line", "--mode", fmt::format("'{}' is not process or thread", mode));
}

std::string wis_metric(int nr_task, const std::string& mode) {
  return fmt::format("will-it-scale.{}.{}", nr_task, mode_word(mode));
}

MeasuredFigure read_measured_figure(const std::string& file, const std::string& mode, int nr_task) {
  mode_word(mode);  // a bad --mode first
  const std::string text = read_text(file);
  const std::string body = trim(text);
  if (!body.empty() && body.front() == '{') return from_stats(file, mode, nr_task);
  const std::vector<std::string> lines = split(text, '\n');
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string line = trim(lines[i]);
    if (line.rfind(std::string(kCsvTasks) + ",", 0) == 0) return from_csv(file, lines, i, mode, nr_task);
  }
  for (std::size_t i = lines.size(); i-- > 0;)
    if (trim(lines[i]).rfind("average:", 0) == 0) return from_binary_output(file, lines, i, nr_task);
  throw ConfigError(file, "",
                    "not a will-it-scale result: expected an lkp stats.json (a JSON object), runtest.py's CSV (a "
                    "'tasks,processes,...' header) or a will-it-scale binary's output (an 'average:N' line)");
}

Job check_fit_request(const FitMeasuredRequest& r, std::vector<std::pair<std::string, double>>& base) {
  if (!(r.figure.ops > 0) || !std::isfinite(r.figure.ops))
    throw ConfigError("command line", "--ops", fmt::format("is {}: the measured figure is a positive number of ops/s", r.figure.ops));
  if (!(r.start > 0) || !std::isfinite(r.start))
    throw ConfigError("command line", "--start", fmt::format("is {}: the first scale must be positive", r.start));
  if (r.out.empty()) throw ConfigError("command line", "--out", "needs the fit file to write; e.g. --out box.mmap2.fit.json");
  if (is_dir(r.out)) throw ConfigError("command line", "--out", fmt::format("'{}' is a directory: give a file name", r.out));
  const fs::path dir = fs::path(r.out).parent_path();
  if (!dir.empty() && !is_dir(dir))
    throw ConfigError("command line", "--out", fmt::format("directory '{}' does not exist", dir.string()));
  Job job = resolve_job(r.job);
  if (job.trace)
    throw ConfigError("command line", "--workload", "a trace replays its own timestamps: it has no non-slab time to fit");
  if (job.nr_tasks.size() != 1)
    throw ConfigError("command line", "--nr-task", "one task count: the fit is made at the measured figure's");
  if (job.variants.size() != 1)
    throw ConfigError("command line", job.request.kernel.find(',') != std::string::npos ? "--kernel" : "--sheaf-capacity",
                      "one kernel and one setting: the fit is made on what the figure was measured on");
  std::vector<std::string> all;
  for (const auto& p : job.program.parameters) all.push_back(p.name);
  std::vector<std::string> names = r.parameters;
  if (names.empty()) {
    for (const auto& p : job.program.parameters)
      if (p.placeholder) names.push_back(p.name);
    if (names.empty())
      throw ConfigError("command line", "--parameters",
                        all.empty() ? fmt::format("workload '{}' has no parameters: nothing to fit", job.program.name)
                                    : fmt::format("workload '{}' has no placeholder parameter ({}): name the ones to "
                                                  "scale",
                                                  job.program.name, fmt::join(all, ", ")));
  }
  refuse_repeats(names, "--parameters");
  base.clear();
  for (const auto& name : names) {
    const auto it = std::find_if(job.program.parameters.begin(), job.program.parameters.end(),
                                 [&](const ProgramParameter& p) { return p.name == name; });
    if (it == job.program.parameters.end())
      throw ConfigError("command line", "--parameters",
                        fmt::format("workload '{}' has no parameter '{}'{} (it has: {})", job.program.name, name,
                                    did_you_mean(name, all), fmt::join(all, ", ")));
    base.emplace_back(name, to_ns(it->ns));
  }
  return job;
}

FitMeasured fit_measured(const FitMeasuredRequest& r, const std::function<void(const std::string&)>& progress) {
  FitMeasured m;
  const Job job = check_fit_request(r, m.base);
  const int nr_task = job.nr_tasks.front();
  const std::string metric = wis_metric(nr_task, r.job.mode);
  m.tolerance_pct = fit_tolerance_pct(metric, r.figure.ops);
  m.machine = job.machine.name;
  m.workload = job.program.name;
  m.variant = job.variants.front().label;
  m.warnings = window_warnings(job);
  for (const auto& w : m.warnings) progress("warning: " + w);
  auto simulate = [&](double s) {
    JobRequest req = r.job;
    const auto sets = Fit{.parameters = scaled_parameters(m.base, s)}.sets();
    req.sets.insert(req.sets.end(), sets.begin(), sets.end());
    const double got = simulate_metric(resolve_job(req), metric);
    progress(fmt::format("fit {} on {}: scale {} -> {} = {} (measured {})", m.workload, m.machine, s, metric, got,
                         r.figure.ops));
    return got;
  };
  const ScaleSearch found = search_scale(r.figure.ops, simulate, m.tolerance_pct, r.start);
  Fit& f = m.fit;
  f.file = r.out;
  f.experiment = "measured-" + m.workload;
  f.topology = m.machine;
  f.workload = m.workload;
  f.scale = found.scale;
  f.parameters = scaled_parameters(m.base, found.scale);
  f.variant = m.variant;
  f.kernel = job.variants.front().kernel_arg;
  f.nr_task = nr_task;
  f.metric = metric;
  f.published = r.figure.ops;
  f.simulated = found.simulated;
  f.duration = r.job.duration;
  f.warmup = r.job.warmup;
  f.seed = r.job.seed;
  f.simulations = found.simulations;
  f.converged = found.converged;
  f.source = fmt::format("{} ({}){}", kFitSource, r.figure.from, settings_text(r.job));
  return m;
}

std::string format_fit_measured(const FitMeasured& m, const FitMeasuredRequest& r) {
  const Fit& f = m.fit;
  const double err = (f.simulated / f.published - 1.0) * 100.0;
  std::string out = fmt::format("slubsim fit: {} ({} mode) on {}, kernel {}, at {} task{}\n", m.workload, r.job.mode,
                                m.machine, m.variant, f.nr_task, f.nr_task == 1 ? "" : "s");
  out += fmt::format("  measured   {} = {:.0f} ({})\n", f.metric, f.published, r.figure.from);
  out += fmt::format("  simulated  {} = {:.0f} at scale {} ({:+.2f}%)\n", f.metric, f.simulated, f.scale, err);
  if (f.converged) {
    out += fmt::format("  converged: within {:.2f}% of the measured figure in {} simulations\n", m.tolerance_pct,
                       f.simulations);
  } else {
    out += fmt::format("  NOT converged: the closest of {} simulations is {:.2f}% off (tolerance {:.2f}%): {}\n",
                       f.simulations, std::fabs(err), m.tolerance_pct,
                       f.simulated < f.published
                           ? "the model does not reach the figure at any non-slab time, its slab costs or "
                             "contention hold it below (a fit of the non-slab time cannot change those)"
                           : "the search ran out of steps; try --start near the scale above");
  }
  out += "  non-slab parameters, ns (fitted = base x scale):\n";
  for (std::size_t i = 0; i < f.parameters.size(); ++i)
    out += fmt::format("    {:<20} {:>12} = {} x {}\n", f.parameters[i].first, f.parameters[i].second,
                       m.base[i].second, f.scale);
  return out;
}

std::vector<std::string> fit_file_sets(const std::string& fit_file, const JobRequest& req) {
  const Fit f = read_fit_file(fit_file);
  if (req.workload.rfind("trace:", 0) == 0 || req.workload.rfind("ftrace:", 0) == 0)
    throw ConfigError(fit_file, "", "--fit applies non-slab parameters to a program; a trace workload has none");
  const std::string wfile = resolve_config(req.home, "workloads", req.workload, "--workload");
  const json w = load_json_file(wfile);
  const std::string name = w.is_object() && w.contains("name") && w["name"].is_string() ? w["name"].get<std::string>() : "";
  if (!f.workload.empty() && !name.empty() && f.workload != name)
    throw ConfigError(fit_file, "workload",
                      fmt::format("is '{}': the fit is of another workload than --workload '{}'", f.workload, name));
  for (const auto& [param, value] : f.parameters)
    if (!w.is_object() || !w.contains("parameters") || !w["parameters"].is_object() || !w["parameters"].contains(param))
      throw ConfigError(fit_file, "parameters." + param,
                        fmt::format("workload '{}' ({}) has no such parameter: the fit is of another workload",
                                    name.empty() ? req.workload : name, wfile));
  return f.sets();
}

std::vector<std::string> fit_file_notes(const std::string& fit_file, const Job& job) {
  const Fit f = read_fit_file(fit_file);
  std::vector<std::string> out;
  out.push_back(fmt::format("--fit {}: the non-slab time x {} ({} parameters), fitted on {} at {} tasks to {} = {}",
                            fit_file, f.scale, f.parameters.size(), f.topology, f.nr_task, f.metric, f.published));
  if (f.topology != job.machine.name)
    out.push_back(fmt::format("--fit {} was fitted on '{}', not on this job's machine '{}': its non-slab time is that "
                              "machine's",
                              fit_file, f.topology, job.machine.name));
  if (!f.converged)
    out.push_back(fmt::format("--fit {} did not converge (simulated {} vs {}): its non-slab time is the closest the "
                              "search found",
                              fit_file, f.simulated, f.published));
  return out;
}

}  // namespace slubsim
