#include "sim/validate/scoreboard.h"

#include <algorithm>
#include <cctype>

#include <cmath>
#include <set>
#include <fmt/format.h>

namespace slubsim {

namespace {

const char* kPredictionNote =
    "Fitted figures: each experiment's class-4 non-slab time, fitted on its baseline variant at its lowest "
    "task count, or, for a table with no published absolute, pinned on its baseline's published spin share "
    "(VALIDATION.md), shown as in-sample; and the class-5 costs marked 'fitted' in configs/costs, fitted on "
    "T12's no-sheaves (baseline) states, but for the sheaf fast path, which only a sheaves state shows: it was "
    "fitted on one T12 cell, excluded as in-sample with the growth cell the __slab_free entry was fitted on. "
    "Every other delta cell is an out-of-sample prediction.";

const char* kNoChangeRule =
    "A published |delta| below 3% or one the author calls noise is \"no change\" and agrees if the simulated "
    "|delta| is below 3% too; any other cell agrees when the simulated delta is at least 3% in the same "
    "direction (the sign is -, no change or +, with the same band on both sides). Error = |simulated - "
    "published| in percentage points.";

const char* kAcrossReleasesNote =
    "A cell marked \"across releases\" compares kernels built from different source trees (each variant's "
    "tree is listed with it): besides the slab change it measures every other change between the two "
    "releases, while the model gives both kernels the baseline's non-slab time. Cells within one tree "
    "isolate the slab change.";

double rounded(double v, int digits) {
  double s = std::pow(10.0, digits);
  return std::round(v * s) / s;
}

json num_or_null(const std::optional<double>& v, int digits) {
  if (!v || !std::isfinite(*v)) return nullptr;
  return rounded(*v, digits);
}

std::string pct(const std::optional<double>& v) { return v ? fmt::format("{:+.2f}%", *v) : "n/a"; }
std::string pp(const std::optional<double>& v) { return v ? fmt::format("{:.2f}", *v) : "n/a"; }

// Of a set's cells with an interval (validate --uncertainty): coverage, width, undetermined.
std::string intervals_text(const Totals& t) {
  return fmt::format("the 90% interval covers the published delta in {}/{} ({:.1f}%), median width {} points, {} "
                     "undetermined ({} of them agreeing at the nominal inputs), {} out of the ranges' reach",
                     t.covered, t.intervals, 100.0 * t.covered / t.intervals, pp(t.median_width_pp), t.undetermined,
                     t.undetermined_agree, t.unreached);
}

// Of a set's cells: how the interval with the model's record fares, one table left out.
std::string record_text(const Totals& t) {
  if (!t.record_cells) return "no cell with the model's record";
  return fmt::format("the interval with the model's record (90%, one table left out) holds the published delta in "
                     "{}/{} ({:.1f}%), median width {} points{}",
                     t.record_covered, t.record_cells, *t.record_coverage_pct(), pp(t.record_median_width_pp),
                     t.record_unbounded ? fmt::format(", {} unbounded (too few other cells)", t.record_unbounded) : "");
}

std::string totals_line(const Totals& t) {
  if (t.cells == 0) return fmt::format("no scored cell ({} excluded)", t.excluded);
  std::string line = fmt::format("sign agreement {}/{} ({:.1f}%), median abs error {} pp ({} excluded)", t.agree,
                                 t.cells, *t.agree_pct(), pp(t.median_abs_error_pp), t.excluded);
  if (t.intervals) line += "; " + intervals_text(t);
  return line;
}

// Whole numbers and anything of 1000 or more without decimals; small figures (seconds) with some.
std::string value(double v) {
  if (v == std::floor(v) || std::fabs(v) >= 1000) return fmt::format("{:.0f}", v);
  return fmt::format("{:.4g}", v);
}

std::string opt_value(const std::optional<double>& v) { return v ? value(*v) : "-"; }

std::string agree_word(const CellScore& c) {
  if (c.excluded) return "excluded";
  if (!c.sim_delta) return "no (base 0)";
  return c.agree ? "yes" : "no";
}

std::string published_text(const CellScore& c) {
  const auto& cell = *c.cell;
  std::string s = pct(c.published_delta);
  if (cell.lower_is_better) s += fmt::format(" (time {:+.2f}%)", cell.published_delta_pct);
  if (c.no_change) s += cell.noise ? " (noise)" : " (no change)";
  return s;
}

json totals_json(const Totals& t) {
  json j = json::object();
  j["cells"] = t.cells;
  j["sign_agree"] = t.agree;
  j["sign_agree_pct"] = num_or_null(t.agree_pct(), 2);
  j["median_abs_error_pp"] = num_or_null(t.median_abs_error_pp, 2);
  j["excluded"] = t.excluded;
  if (t.intervals)
    j["intervals"] = {{"cells", t.intervals},
                      {"covered", t.covered},
                      {"coverage_pct", rounded(100.0 * t.covered / t.intervals, 2)},
                      {"median_width_pp", num_or_null(t.median_width_pp, 2)},
                      {"undetermined", t.undetermined},
                      {"undetermined_agree", t.undetermined_agree},
                      {"out_of_reach", t.unreached}};
  if (t.record_cells)
    j["record_interval"] = {{"cells", t.record_cells},
                            {"covered", t.record_covered},
                            {"coverage_pct", num_or_null(t.record_coverage_pct(), 2)},
                            {"unbounded", t.record_unbounded},
                            {"median_width_pp", num_or_null(t.record_median_width_pp, 2)}};
  return j;
}

std::string md_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += "\\|";
    else if (ch == '\n') out += ' ';
    else out += ch;
  }
  return out;
}

std::string totals_md_row(const std::string& what, const Totals& t) {
  return fmt::format("| {} | {} | {} | {} | {} | {} |\n", what, t.cells, t.agree,
                     t.agree_pct() ? fmt::format("{:.1f}%", *t.agree_pct()) : "n/a", pp(t.median_abs_error_pp),
                     t.excluded);
}

const char* kSensitivityNote =
    "Sensitivity (VALIDATION.md): over throughput cells (will-it-scale.* and ops metrics) on each "
    "experiment's best topology, a comparison printed under two metrics (N.processes and per_process_ops of "
    "a one-row job; per_process_ops and workload of one pair) counted once; |sim|/|pub| = median |simulated "
    "delta| / median |published delta|; slope = least squares of simulated on published delta through the "
    "origin; Spearman = rank correlation. 1, 1 and 1 would be a model that swings as far as the machines, in "
    "the same order. The within-tree comparisons are also given per set: the seed checks' authors published "
    "deltas only, so their non-slab time is pinned on a published profile of a baseline (or borrowed from such a "
    "pin), and their swing depends on that pin.";

std::string num(const std::optional<double>& v, int digits) {
  return v ? fmt::format("{:.{}f}", *v, digits) : "n/a";
}

std::string sensitivity_line(const Sensitivity& s) {
  return fmt::format("{} comparisons, |sim|/|pub| {}, slope {}, Spearman {}", s.cells, num(s.ratio, 2),
                     num(s.slope, 2), num(s.spearman, 2));
}

std::string sensitivity_md_row(const std::string& what, const Sensitivity& s) {
  return fmt::format("| {} | {} | {} | {} | {} |\n", what, s.cells, num(s.ratio, 2), num(s.slope, 2),
                     num(s.spearman, 2));
}

json sensitivity_json(const Sensitivity& s) {
  json j = json::object();
  j["comparisons"] = s.cells;
  j["median_abs_ratio"] = num_or_null(s.ratio, 3);
  j["slope"] = num_or_null(s.slope, 3);
  j["spearman"] = num_or_null(s.spearman, 3);
  return j;
}

const char* kProfileNote =
    "Profiles (VALIDATION.md): each published perf row the why report can name, the share of CPU cycles in "
    "native_queued_spin_lock_slowpath under that call chain, against the share of the tasks' time the model "
    "spends spinning under the same chain at the same task count (why.<N>.spin.<folded stack>). Spin is a "
    "leaf, so a self share and a children share both measure it. Rows of baseline states are observables "
    "that may calibrate class-5 constants (\"fitted\" states); rows of test states are predictions.";

std::string profile_totals_line(const ProfileTotals& t) {
  return fmt::format("{} rows, median |error| {} points", t.rows, pp(t.median_abs_error_pp));
}

std::string signed_pp(const std::optional<double>& v) { return v ? fmt::format("{:+.2f}", *v) : "n/a"; }

std::string profile_md(const ProfileScore& p) {
  const auto& pr = *p.profile;
  std::string out = fmt::format("Profile of **{}** at {} tasks ({}). Source: {}{}\n\n", pr.variant, pr.nr_task,
                                p.pinned   ? "baseline state: the pin's, in-sample"
                                : p.fitted ? "baseline state: may calibrate"
                                           : "test state: predicted",
                                md_escape(pr.source), pr.note.empty() ? "" : ". " + md_escape(pr.note));
  out += "| published row | share | under | published % | simulated % | error (points) |\n|---|---|---|---|---|---|\n";
  for (const auto& r : p.rows) {
    std::string under = r.row->under.empty() ? "all spin" : fmt::format("{}", fmt::join(r.row->under, " → "));
    if (!r.row->lock.empty()) under += " (" + r.row->lock + ")";
    out += fmt::format("| {} | {} | {} | {:.2f} | {} | {} |\n", md_escape(r.row->row), r.row->share, under,
                       r.row->published, r.simulated ? fmt::format("{:.2f}", *r.simulated) : "n/a",
                       signed_pp(r.error_pp()));
  }
  return out;
}

json profile_json(const ProfileScore& p) {
  json j = json::object();
  j["variant"] = p.profile->variant;
  j["nr_task"] = p.profile->nr_task;
  j["fitted"] = p.fitted;
  if (p.pinned) j["pinned"] = true;
  j["source"] = p.profile->source;
  json rows = json::array();
  for (const auto& r : p.rows) {
    json rj = json::object();
    rj["row"] = r.row->row;
    rj["share"] = r.row->share;
    rj["under"] = r.row->under;
    if (!r.row->lock.empty()) rj["lock"] = r.row->lock;
    rj["published_pct"] = r.row->published;
    rj["simulated_pct"] = num_or_null(r.simulated, 2);
    rj["error_points"] = num_or_null(r.error_pp(), 2);
    rows.push_back(rj);
  }
  j["rows"] = rows;
  return j;
}

// {"rows": n, <figure>: v}: the summary of profile or counter rows.
json rows_summary_json(int rows, const char* figure, const std::optional<double>& v) {
  json j = json::object();
  j["rows"] = rows;
  j[figure] = num_or_null(v, 2);
  return j;
}

json profile_totals_json(const ProfileTotals& t) {
  return rows_summary_json(t.rows, "median_abs_error_points", t.median_abs_error_pp);
}

const char* kCounterNote =
    "Counters (VALIDATION.md: page counts and other observables of the same published runs): a published "
    "lkp row, derived to the rate the model reports (per operation or per second, as each row says), against "
    "the same rate of the simulated state; ratio = simulated / published. Factor = 2^median |log2 ratio| (1 is "
    "exact). Baseline states may calibrate class-5 constants; test states are predictions.";

std::string counter_totals_line(const CounterTotals& t) {
  return fmt::format("{} rows, median factor {}", t.rows, t.median_factor ? fmt::format("{:.2f}", *t.median_factor) : "n/a");
}

std::string counters_md(const std::vector<CounterScore>& cs) {
  std::string out = "| counter | state | tasks | published | simulated | ratio | source |\n|---|---|---|---|---|---|---|\n";
  for (const auto& c : cs) {
    const auto& k = *c.counter;
    out += fmt::format("| {} (`{}`) | {} ({}) | {} | {:.4g} | {} | {} | {} |\n", md_escape(k.row),
                       k.shown_key(), k.variant,
                       c.fitted ? "baseline: may calibrate" : "predicted", k.tasks_text(), k.published,
                       c.simulated ? fmt::format("{:.4g}", *c.simulated) : "n/a",
                       c.ratio() ? fmt::format("{:.2f}", *c.ratio()) : "n/a",
                       md_escape(k.source) + (k.note.empty() ? "" : ". " + md_escape(k.note)));
  }
  return out;
}

json counter_json(const CounterScore& c) {
  json j = json::object();
  j["row"] = c.counter->row;
  const auto& k = *c.counter;
  j["key"] = k.shown_key();
  j["variant"] = k.variant;
  j["nr_task"] = k.nr_task.size() == 1 ? json(k.nr_task.front()) : json(k.nr_task);
  j["fitted"] = c.fitted;
  j["published"] = c.counter->published;
  j["simulated"] = c.simulated ? json(*c.simulated) : json(nullptr);
  j["ratio"] = num_or_null(c.ratio(), 3);
  j["source"] = c.counter->source;
  return j;
}

json counter_totals_json(const CounterTotals& t) { return rows_summary_json(t.rows, "median_factor", t.median_factor); }

std::string what_if(const std::vector<std::string>& sets) {
  std::string out;
  for (std::size_t i = 0; i < sets.size(); ++i) out += fmt::format("{}`--set {}`", i ? " " : "", sets[i]);
  return out;
}

// VALIDATION.md: a pin is printed with a second derivation from hardware facts beside it, and
// when the two are more than 2x apart the scoreboard says what that implies.
constexpr double kCrossCheckApart = 2.0;
std::string cross_check_text(const FitPoint& f) {
  std::string out = fmt::format("Second derivation from hardware facts: the pin gives {:.0f} ns of non-slab time per "
                                "operation;",
                                f.nonslab_ns);
  bool apart = false;
  for (std::size_t i = 0; i < f.cross_checks.size(); ++i) {
    const auto& c = f.cross_checks[i];
    out += fmt::format("{} `{}` gives {:.0f} ns ({:.2f}x the pin's: {})", i ? ";" : "", c.file, c.nonslab_ns, c.ratio,
                       md_escape(c.note));
    if (c.ratio > kCrossCheckApart || c.ratio < 1 / kCrossCheckApart) apart = true;
  }
  out += ".";
  if (apart)
    out += " More than 2x apart from at least one of them: with the model's slab and lock costs, this machine must run "
           "the workload's non-slab part that much faster or slower than that fit's machine to show the pinned "
           "observable, or the model prices the slab side of one of the two machines wrongly.";
  return out + "\n\n";
}

std::string fit_text(const FitPoint& f) {
  return fmt::format("in-sample ({}): {} {} at {} tasks: published {}, simulated {} ({}), scale {}",
                     is_pin_metric(f.metric) ? "pinned" : "fitted", f.variant, f.metric, f.nr_task,
                     value(f.published), value(f.simulated), pct(f.error_pct()), f.scale);
}

}  // namespace

std::string scoreboard_text(const Scoreboard& b) {
  std::string out;
  out += fmt::format("slubsim validate: {} experiment(s)\n", b.experiments.size());
  if (!b.sets.empty()) out += fmt::format("what-if: every simulation ran with {}\n", what_if(b.sets));
  out += fmt::format("overall (each experiment on its best-fitting topology): {}\n", totals_line(b.overall));
  out += fmt::format("  calibration set: {}\n", totals_line(b.calibration));
  out += fmt::format("  seed checks:     {}\n", totals_line(b.seeds));
  out += fmt::format("  within one source tree: {}\n", totals_line(b.within_tree));
  out += fmt::format("  across releases:        {}\n", totals_line(b.across_releases));
  out += fmt::format("every topology:    {}\n", totals_line(b.overall_all));
  out += "the model's record as an interval (sim/trust/conformal.h):\n";
  out += fmt::format("  within one source tree: {}\n", record_text(b.within_tree));
  out += fmt::format("  across releases:        {}\n", record_text(b.across_releases));
  out += fmt::format("sensitivity within one source tree: {}\n", sensitivity_line(b.sens_within_tree));
  out += fmt::format("            across releases:        {}\n", sensitivity_line(b.sens_across_releases));
  out += fmt::format("            all:                    {}\n", sensitivity_line(b.sens_overall));
  out += fmt::format("  within one tree, calibration set: {}\n", sensitivity_line(b.sens_within_tree_calibration));
  out += fmt::format("  within one tree, seed checks:     {}\n", sensitivity_line(b.sens_within_tree_seeds));
  out += fmt::format("profiles: baseline states {}; test states (predicted) {}\n",
                     profile_totals_line(b.profiles_fitted), profile_totals_line(b.profiles_predicted));
  out += fmt::format("counters: baseline states {}; test states (predicted) {}\n",
                     counter_totals_line(b.counters_fitted), counter_totals_line(b.counters_predicted));
  out += fmt::format("{}\n", kPredictionNote);
  for (const auto& es : b.experiments) {
    const Experiment& e = *es.experiment;
    out += fmt::format("\n{} ({}, {}): {}\n", e.id, e.table, e.calibration_set ? "calibration set" : "seed check",
                       e.title);
    out += fmt::format("  {} ({} mode), {}, {} run(s), seed {}\n", e.workload, e.mode,
                       window_text(e.duration, e.warmup), e.runs, e.seed);
    for (std::size_t ti = 0; ti < es.topologies.size(); ++ti) {
      const auto& t = es.topologies[ti];
      std::string best = es.topologies.size() > 1 && ti == es.best ? " [best fit]" : "";
      out += fmt::format("  topology {}{}: {}\n", t.topology, best, totals_line(t.totals));
      if (!t.note.empty()) out += fmt::format("    note: {}\n", t.note);
      if (t.fit) out += fmt::format("    {}\n", fit_text(*t.fit));
      else if (e.fit) out += "    in-sample (fitted): none\n";
      if (!t.borrowed.empty()) out += fmt::format("    {}\n", t.borrowed);
      out += fmt::format("    {:<34} {:<24} {:>20} {:>10} {:>8}  {}\n", "metric", "baseline -> test", "published",
                         "simulated", "err pp", "agree");
      for (const auto& c : t.cells) {
        const auto& cell = *c.cell;
        std::string pair = cell.baseline + " -> " + cell.test;
        if (c.excluded) {
          out += fmt::format("    {:<34} {:<24} {:>20} {:>10} {:>8}  excluded: {}\n", cell.metric, pair,
                             published_text(c), "-", "-", cell.excluded);
          continue;
        }
        out += fmt::format("    {:<34} {:<24} {:>20} {:>10} {:>8}  {}\n", cell.metric, pair, published_text(c),
                           pct(c.sim_delta), pp(c.abs_error_pp), agree_word(c));
      }
      for (const auto& p : t.profiles) {
        out += fmt::format("    profile {} at {} tasks ({}): published -> simulated %, error points\n",
                           p.profile->variant, p.profile->nr_task,
                           p.pinned ? "baseline, pinned" : p.fitted ? "baseline" : "predicted");
        for (const auto& r : p.rows)
          out += fmt::format("      {:<60} {:>6.2f} -> {:>6}  {}\n", r.row->row, r.row->published,
                             r.simulated ? fmt::format("{:.2f}", *r.simulated) : "n/a", signed_pp(r.error_pp()));
      }
    }
  }
  return out;
}

// validate --uncertainty: per set, how the intervals fare, and the cells no setting inside the
// sourced ranges reaches (VALIDATION.md "Intervals"): the structural misses.
std::string intervals_md(const Scoreboard& b) {
  std::string out =
      "\n| intervals (90%, over the inputs' ranges and the windows' noise) | cells | covers published | "
      "median width (points) | undetermined | of them agreeing | out of reach |\n|---|---|---|---|---|---|---|\n";
  auto row = [&](const std::string& what, const Totals& t) {
    if (!t.intervals) return;
    out += fmt::format("| {} | {} | {} ({:.1f}%) | {} | {} | {} | {} |\n", what, t.intervals, t.covered,
                       100.0 * t.covered / t.intervals, pp(t.median_width_pp), t.undetermined, t.undetermined_agree,
                       t.unreached);
  };
  row("calibration set", b.calibration);
  row("seed checks", b.seeds);
  row("all (best topology per experiment)", b.overall);
  row("within one source tree (best topology)", b.within_tree);
  row("across releases (best topology)", b.across_releases);
  row("within one source tree: calibration set", b.within_tree_calibration);
  row("within one source tree: seed checks", b.within_tree_seeds);
  out += "\nStructural misses (the published delta outside what any setting inside the sourced ranges gives, "
         "noise included; each experiment on its best topology; docs/fidelity-log.md says what each suggests the "
         "model lacks):\n\n";
  int n = 0;
  for (const auto& e : b.experiments) {
    const auto& t = e.topologies[e.best];
    for (const auto& c : t.cells)
      if (c.interval && !c.excluded && !c.interval->reaches(c.published_delta)) {
        out += fmt::format("- {} on {}: `{}` {} → {}: published {}, reach [{:+.1f}%, {:+.1f}%]\n", e.experiment->id,
                           t.topology, c.cell->metric, c.cell->baseline, c.cell->test, pct(c.published_delta),
                           c.interval->reach_low, c.interval->reach_high);
        ++n;
      }
  }
  if (!n) out += "- none\n";
  return out;
}

// What an answer's half-width is for each kind of comparison: from every table's cells.
std::optional<double> answer_half_width(const Scoreboard& b, ComparisonKind k) {
  return record_half_width(b.residuals, "", k);
}

const char* kRecordNote =
    "The interval with the model's record (sim/trust/conformal.h, docs/design.md \"The interval with the model's "
    "record\"): the simulated delta plus or minus the 90% split-conformal quantile of the model's absolute errors "
    "on the scored cells of the same kind of comparison, joined with the inputs' interval where there is one. On "
    "the scoreboard a table's half-width comes from the other tables' cells only (leave one table out), so the "
    "coverage it reports is out of sample; an answer's (run --uncertainty, advise) comes from every table's. Each "
    "experiment on its best topology.";

std::string record_md(const Scoreboard& b) {
  std::string out = fmt::format(
      "\n| interval with the model's record (90%, one table left out) | cells | holds published | median width "
      "(points) | an answer's half-width (points) |\n|---|---|---|---|---|\n");
  auto row = [&](const std::string& what, const Totals& t, std::optional<ComparisonKind> k) {
    if (!t.record_cells) return;
    const auto hw = k ? answer_half_width(b, *k) : std::nullopt;
    out += fmt::format("| {} | {} | {} ({:.1f}%) | {} | {} |\n", what, t.record_cells, t.record_covered,
                       *t.record_coverage_pct(), pp(t.record_median_width_pp),
                       k ? (hw ? fmt::format("±{:.1f}", *hw) : std::string("unbounded")) : std::string("-"));
  };
  row("a sheaf knob within one kernel", b.knob, ComparisonKind::Knob);
  row("kernels of one source tree", b.within_tree_kernels, ComparisonKind::WithinTree);
  row("within one source tree (both of the above)", b.within_tree, std::nullopt);
  row("across releases", b.across_releases, ComparisonKind::AcrossReleases);
  row("all", b.overall, std::nullopt);
  out += fmt::format("\n{}\n", kRecordNote);
  return out;
}

std::string scoreboard_markdown(const Scoreboard& b) {
  std::string out;
  out += "# slubsim validation scoreboard\n\n";
  out += fmt::format("**Overall: sign agreement {}, median absolute error {} pp** (each experiment on its "
                     "best-fitting topology; {} scored cells, {} excluded). Every topology counted: {}.\n\n",
                     b.overall.cells ? fmt::format("{}/{} ({:.1f}%)", b.overall.agree, b.overall.cells,
                                                   *b.overall.agree_pct())
                                     : std::string("n/a"),
                     pp(b.overall.median_abs_error_pp), b.overall.cells, b.overall.excluded,
                     totals_line(b.overall_all));
  if (!b.sets.empty())
    out += fmt::format("**What-if, not the committed model:** every simulation ran with {}.\n\n", what_if(b.sets));
  out += fmt::format("{}\n\n{}\n\n", kPredictionNote, kNoChangeRule);
  out += "Generated by `slubsim validate` from the experiment files (docs/experiment-format.md); the calibration "
         "set is the published tables of measurements.json, seed checks are numbers outside it, scored but never "
         "fitted on.\n\n";
  out += "| set | cells | sign agree | % | median abs error (pp) | excluded |\n|---|---|---|---|---|---|\n";
  out += totals_md_row("calibration set", b.calibration);
  out += totals_md_row("seed checks", b.seeds);
  out += totals_md_row("all (best topology per experiment)", b.overall);
  out += totals_md_row("all (every topology)", b.overall_all);
  out += totals_md_row("within one source tree (best topology)", b.within_tree);
  out += totals_md_row("across releases (best topology)", b.across_releases);
  out += totals_md_row("within one source tree: calibration set", b.within_tree_calibration);
  out += totals_md_row("within one source tree: seed checks", b.within_tree_seeds);
  out += fmt::format("\n{}\n", kAcrossReleasesNote);
  out += record_md(b);
  if (b.overall_all.intervals) out += intervals_md(b);
  out += "\n| sensitivity (best topology) | comparisons | median \\|sim\\| / median \\|pub\\| | slope | Spearman |\n"
         "|---|---|---|---|---|\n";
  out += sensitivity_md_row("within one source tree", b.sens_within_tree);
  out += sensitivity_md_row("across releases", b.sens_across_releases);
  out += sensitivity_md_row("all", b.sens_overall);
  out += sensitivity_md_row("within one source tree: calibration set", b.sens_within_tree_calibration);
  out += sensitivity_md_row("within one source tree: seed checks", b.sens_within_tree_seeds);
  out += fmt::format("\n{}\n", kSensitivityNote);
  out += fmt::format("\n| profiles (best topology) | rows | median \\|error\\| (points) |\n|---|---|---|\n"
                     "| baseline states (may calibrate) | {} | {} |\n| test states (predicted) | {} | {} |\n",
                     b.profiles_fitted.rows, pp(b.profiles_fitted.median_abs_error_pp), b.profiles_predicted.rows,
                     pp(b.profiles_predicted.median_abs_error_pp));
  out += fmt::format("\n{}\n", kProfileNote);
  out += fmt::format("\n| counters (best topology) | rows | median factor |\n|---|---|---|\n"
                     "| baseline states (may calibrate) | {} | {} |\n| test states (predicted) | {} | {} |\n",
                     b.counters_fitted.rows,
                     b.counters_fitted.median_factor ? fmt::format("{:.2f}", *b.counters_fitted.median_factor) : "n/a",
                     b.counters_predicted.rows,
                     b.counters_predicted.median_factor ? fmt::format("{:.2f}", *b.counters_predicted.median_factor) : "n/a");
  out += fmt::format("\n{}\n", kCounterNote);
  out += "\n| experiment | table | set | topology | cells | sign agree | median abs error (pp) | fit point error "
         "|\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& es : b.experiments) {
    const Experiment& e = *es.experiment;
    for (std::size_t ti = 0; ti < es.topologies.size(); ++ti) {
      const auto& t = es.topologies[ti];
      std::string topo = t.topology + (es.topologies.size() > 1 && ti == es.best ? " (best)" : "");
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", e.id, e.table,
                         e.calibration_set ? "calibration" : "seed", topo, t.totals.cells,
                         t.totals.cells ? fmt::format("{}/{} ({:.1f}%)", t.totals.agree, t.totals.cells,
                                                      *t.totals.agree_pct())
                                        : std::string("n/a"),
                         pp(t.totals.median_abs_error_pp), t.fit ? pct(t.fit->error_pct()) : "no fit");
    }
  }
  for (const auto& es : b.experiments) {
    const Experiment& e = *es.experiment;
    out += fmt::format("\n## {} — {} ({})\n\n", e.table, md_escape(e.title), e.id);
    out += fmt::format("{}; {} ({} mode), {}, {} run(s), seed {}. Source: {}\n",
                       e.calibration_set ? "Calibration set" : "Seed check (not in measurements.json)", e.workload,
                       e.mode, window_text(e.duration, e.warmup), e.runs, e.seed, md_escape(e.source));
    for (const auto& n : e.notes) out += fmt::format("\n- {}", md_escape(n));
    if (!e.notes.empty()) out += "\n";
    out += "\nVariants: ";
    for (std::size_t i = 0; i < e.variants.size(); ++i) {
      const auto& v = e.variants[i];
      out += fmt::format("{}**{}** = {} (`{}`{}{}{}{}){}", i ? "; " : "", v.name, md_escape(v.label), v.kernel,
                         v.tree.empty() ? "" : ", tree " + md_escape(v.tree),
                         v.patches.empty() ? "" : fmt::format(" {}", fmt::join(v.patches, " ")),
                         v.sheaf_capacity.empty() ? "" : " capacity " + v.sheaf_capacity,
                         v.sets.empty() ? "" : fmt::format(" {}", fmt::join(v.sets, " ")),
                         v.excluded.empty() ? "" : " — not simulated: " + md_escape(v.excluded));
    }
    out += "\n";
    for (std::size_t ti = 0; ti < es.topologies.size(); ++ti) {
      const auto& t = es.topologies[ti];
      out += fmt::format("\n### {} on {}{}\n\n", e.id, t.topology,
                         es.topologies.size() > 1 ? (ti == es.best ? " (best fit)" : " (not the best fit)") : "");
      if (!t.note.empty()) out += fmt::format("Note: {}\n\n", md_escape(t.note));
      out += fmt::format("Tasks: {}. {}\n\n", fmt::join(t.nr_task, ", "), totals_line(t.totals));
      if (t.fit) {
        out += fmt::format("In-sample ({}): {} `{}` at {} tasks — published {}, simulated {} ({}); scale {} "
                           "(`{}`).\n\n",
                           is_pin_metric(t.fit->metric) ? "pinned" : "fitted", t.fit->variant, t.fit->metric, t.fit->nr_task, value(t.fit->published),
                           value(t.fit->simulated), pct(t.fit->error_pct()), t.fit->scale, t.fit->fit_file);
        if (!t.fit->cross_checks.empty()) out += cross_check_text(*t.fit);
      } else if (!t.borrowed.empty()) {
        out += fmt::format("In-sample (fitted): none — {}.\n\n", md_escape(t.borrowed));
      } else {
        out += "In-sample (fitted): none — no class-4 fit (see the experiment's notes).\n\n";
      }
      const bool with_intervals = std::any_of(t.cells.begin(), t.cells.end(), [](const CellScore& c) { return c.interval.has_value(); });
      if (with_intervals && !t.refits.empty())
        out += fmt::format("At each end of the intervals' factors the non-slab time is fitted again, as it was at the "
                           "nominal inputs: {}.\n\n", md_escape(fmt::format("{}", fmt::join(t.refits, "; "))));
      out += with_intervals
                 ? "| metric | baseline → test | published | published Δ | simulated | simulated Δ | error (pp) | agree | "
                   "90% interval | decided by |\n|---|---|---|---|---|---|---|---|---|---|\n"
                 : "| metric | baseline → test | published | published Δ | simulated | simulated Δ | error (pp) | agree |\n"
                   "|---|---|---|---|---|---|---|---|\n";
      for (const auto& c : t.cells) {
        const auto& cell = *c.cell;
        std::string pub = fmt::format("{} → {}", opt_value(cell.published_baseline), opt_value(cell.published_test));
        std::string sim = c.excluded ? "-" : fmt::format("{} → {}", value(c.sim_baseline), value(c.sim_test));
        std::string agree = c.excluded ? "excluded: " + md_escape(cell.excluded) : agree_word(c);
        std::string metric = "`" + cell.metric + "`";
        if (!cell.note.empty()) metric += " — " + md_escape(cell.note);
        out += fmt::format("| {} | {} → {}{} | {} | {} | {} | {} | {} | {} |", metric, cell.baseline, cell.test,
                           cell.across_releases ? " (across releases)" : "", pub,
                           published_text(c), sim, c.excluded ? "-" : pct(c.sim_delta),
                           c.excluded ? "-" : pp(c.abs_error_pp), agree);
        if (with_intervals)
          out += c.interval ? fmt::format(" [{:+.1f}%, {:+.1f}%]{}{} | {} |", c.interval->low, c.interval->high,
                                          c.interval->undetermined() ? " undetermined" : "",
                                          c.interval->reaches(c.published_delta) ? "" : " out of reach",
                                          md_escape(c.interval->decided_by))
                            : " - | - |";
        out += "\n";
      }
      for (const auto& p : t.profiles) out += "\n" + profile_md(p);
      if (!t.counters.empty()) out += "\nCounters:\n\n" + counters_md(t.counters);
    }
  }
  return out;
}

json scoreboard_json(const Scoreboard& b) {
  json j = json::object();
  j["note"] = kPredictionNote;
  if (!b.sets.empty()) j["what_if_sets"] = b.sets;
  j["scoring"] = kNoChangeRule;
  j["overall"] = totals_json(b.overall);
  j["calibration_set"] = totals_json(b.calibration);
  j["seed_checks"] = totals_json(b.seeds);
  j["within_tree"] = totals_json(b.within_tree);
  j["across_releases"] = totals_json(b.across_releases);
  j["within_tree_calibration_set"] = totals_json(b.within_tree_calibration);
  j["within_tree_seed_checks"] = totals_json(b.within_tree_seeds);
  j["across_releases_note"] = kAcrossReleasesNote;
  {
    json kinds = json::object();
    const std::pair<ComparisonKind, const Totals*> by_kind[] = {{ComparisonKind::Knob, &b.knob},
                                                                {ComparisonKind::WithinTree, &b.within_tree_kernels},
                                                                {ComparisonKind::AcrossReleases, &b.across_releases}};
    for (const auto& [k, t] : by_kind) {
      std::set<std::string> tables;
      for (const auto& r : b.residuals)
        if (r.kind == k) tables.insert(r.table);
      const json tj = totals_json(*t);
      json x = tj.value("record_interval", json::object());
      if (tj.contains("intervals")) x["inputs_interval"] = tj["intervals"];
      x["tables"] = tables.size();
      x["answer_half_width_pp"] = num_or_null(answer_half_width(b, k), 2);
      kinds[comparison_key(k)] = x;
    }
    j["record"] = {{"level_pct", rounded(100 * kRecordLevel, 0)}, {"kinds", kinds}, {"note", kRecordNote}};
  }
  j["sensitivity"] = {{"within_tree", sensitivity_json(b.sens_within_tree)},
                      {"across_releases", sensitivity_json(b.sens_across_releases)},
                      {"all", sensitivity_json(b.sens_overall)},
                      {"within_tree_calibration_set", sensitivity_json(b.sens_within_tree_calibration)},
                      {"within_tree_seed_checks", sensitivity_json(b.sens_within_tree_seeds)},
                      {"note", kSensitivityNote}};
  j["profiles"] = {{"baseline_states", profile_totals_json(b.profiles_fitted)},
                   {"test_states", profile_totals_json(b.profiles_predicted)},
                   {"note", kProfileNote}};
  j["counters"] = {{"baseline_states", counter_totals_json(b.counters_fitted)},
                   {"test_states", counter_totals_json(b.counters_predicted)},
                   {"note", kCounterNote}};
  j["every_topology"] = {{"overall", totals_json(b.overall_all)},
                         {"calibration_set", totals_json(b.calibration_all)},
                         {"seed_checks", totals_json(b.seeds_all)}};
  json exps = json::array();
  for (const auto& es : b.experiments) {
    const Experiment& e = *es.experiment;
    json x = json::object();
    x["id"] = e.id;
    x["table"] = e.table;
    x["title"] = e.title;
    x["calibration_set"] = e.calibration_set;
    x["workload"] = e.workload;
    x["mode"] = e.mode;
    x["duration"] = e.duration;
    x["warmup"] = e.warmup;
    x["runs"] = e.runs;
    x["seed"] = e.seed;
    x["best_topology"] = es.topologies.empty() ? json(nullptr) : json(es.topologies[es.best].topology);
    json topos = json::array();
    for (const auto& t : es.topologies) {
      json tj = json::object();
      tj["topology"] = t.topology;
      tj["nr_task"] = t.nr_task;
      if (!t.note.empty()) tj["note"] = t.note;
      tj["totals"] = totals_json(t.totals);
      if (t.fit) {
        json f = json::object();
        f["variant"] = t.fit->variant;
        f["metric"] = t.fit->metric;
        f["nr_task"] = t.fit->nr_task;
        f["published"] = t.fit->published;
        f["simulated"] = t.fit->simulated;
        f["error_pct"] = num_or_null(t.fit->error_pct(), 3);
        f["scale"] = t.fit->scale;
        f["file"] = t.fit->fit_file;
        if (!t.fit->cross_checks.empty()) {
          f["nonslab_ns"] = num_or_null(t.fit->nonslab_ns, 1);
          json cc = json::array();
          for (const auto& c : t.fit->cross_checks)
            cc.push_back({{"file", c.file}, {"nonslab_ns", num_or_null(c.nonslab_ns, 1)}, {"ratio", num_or_null(c.ratio, 2)},
                          {"note", c.note}});
          f["cross_checks"] = cc;
        }
        tj["in_sample"] = f;
      } else {
        tj["in_sample"] = nullptr;
      }
      if (!t.borrowed.empty()) tj["non_slab_time"] = t.borrowed;
      if (!t.refits.empty()) tj["refits_at_interval_ends"] = t.refits;
      json cells = json::array();
      for (const auto& c : t.cells) {
        const auto& cell = *c.cell;
        json cj = json::object();
        cj["metric"] = cell.metric;
        cj["baseline"] = cell.baseline;
        cj["test"] = cell.test;
        cj["published_baseline"] = cell.published_baseline ? json(*cell.published_baseline) : json(nullptr);
        cj["published_test"] = cell.published_test ? json(*cell.published_test) : json(nullptr);
        cj["published_delta_pct"] = cell.published_delta_pct;
        if (cell.lower_is_better) cj["published_throughput_delta_pct"] = rounded(c.published_delta, 2);
        cj["no_change"] = c.no_change;
        cj["across_releases"] = cell.across_releases;
        cj["kind"] = comparison_key(c.kind);
        if (c.excluded) {
          cj["excluded"] = cell.excluded;
        } else {
          cj["simulated_baseline"] = c.sim_baseline;
          cj["simulated_test"] = c.sim_test;
          cj["simulated_delta_pct"] = num_or_null(c.sim_delta, 2);
          cj["abs_error_pp"] = num_or_null(c.abs_error_pp, 2);
          cj["agree"] = c.agree;
          if (c.record) {
            const auto r = c.record_interval();
            cj["record_interval_pct"] = r ? json{rounded((*r)[0], 2), rounded((*r)[1], 2)} : json(nullptr);
          }
          if (c.interval) {
            cj["interval_90_pct"] = {rounded(c.interval->low, 2), rounded(c.interval->high, 2)};
            cj["reach_pct"] = {rounded(c.interval->reach_low, 2), rounded(c.interval->reach_high, 2)};
            cj["undetermined"] = c.interval->undetermined();
            cj["decided_by"] = c.interval->decided_by;
          }
        }
        cells.push_back(cj);
      }
      tj["cells"] = cells;
      if (!t.profiles.empty()) {
        json profs = json::array();
        for (const auto& p : t.profiles) profs.push_back(profile_json(p));
        tj["profiles"] = profs;
      }
      if (!t.counters.empty()) {
        json cs = json::array();
        for (const auto& c : t.counters) cs.push_back(counter_json(c));
        tj["counters"] = cs;
      }
      topos.push_back(tj);
    }
    x["topologies"] = topos;
    exps.push_back(x);
  }
  j["experiments"] = exps;
  return j;
}

std::string experiment_table(const Experiment& e, const TopologyScore& t, const std::vector<json>& stats,
                             const TableSettings& s) {
  const std::string what = e.mode == "thread" ? "threads" : "processes";
  const ExperimentVariant& base = e.baseline();
  std::vector<std::size_t> shown;
  for (std::size_t i = 0; i < e.variants.size(); ++i)
    if (e.variants[i].excluded.empty()) shown.push_back(i);

  // Published absolute of variant v on metric m, from any cell that names it.
  auto published = [&](const std::string& v, const std::string& m) -> std::optional<double> {
    if (e.fit && e.fit->variant == v && e.fit->metric == m) return e.fit->published;
    for (const auto& c : e.cells)
      if (c.metric == m) {
        if (c.baseline == v && c.published_baseline) return c.published_baseline;
        if (c.test == v && c.published_test) return c.published_test;
      }
    return std::nullopt;
  };
  auto published_delta = [&](const std::string& b, const std::string& v,
                             const std::string& m) -> std::optional<double> {
    for (const auto& c : e.cells)
      if (c.metric == m && c.baseline == b && c.test == v) return c.published_effective_delta();
    return std::nullopt;
  };
  auto simulated = [&](std::size_t i, const std::string& m) -> double {
    auto it = stats[i].find(m);
    return it == stats[i].end() ? 0.0 : it->get<double>();
  };
  std::vector<std::pair<std::string, std::string>> rows;  // label, metric
  for (int n : t.nr_task) rows.emplace_back(fmt::format("{}", n), fmt::format("will-it-scale.{}.{}", n, what));
  rows.emplace_back(fmt::format("per_{}_ops", e.mode), fmt::format("will-it-scale.per_{}_ops", e.mode));
  rows.emplace_back("workload", "will-it-scale.workload");

  std::string out;
  out += fmt::format("slubsim: {} — {}\n", e.table, e.title);
  out += fmt::format("{} ({} mode) on {}; {}, {} run(s), seed {}{}\n", e.workload, e.mode, t.topology,
                     window_text(s.duration, s.warmup), e.runs, e.seed,
                     s.shortened ? fmt::format(" (the experiment's: {})", window_text(e.duration, e.warmup)) : "");
  if (t.fit)
    out += fmt::format("non-slab time fitted on {} at {} tasks: scale {} ({}); simulated there {} vs published {} ({})\n",
                       t.fit->variant, t.fit->nr_task, t.fit->scale, t.fit->fit_file, value(t.fit->simulated),
                       value(t.fit->published), pct(t.fit->error_pct()));
  for (std::size_t i : shown) {
    const auto& v = e.variants[i];
    out += fmt::format("  {} = {} [{}{}{}{}{}]\n", v.name, v.label, v.kernel,
                       v.tree.empty() ? "" : ", tree " + v.tree,
                       v.patches.empty() ? "" : fmt::format(" {}", fmt::join(v.patches, " ")),
                       v.sheaf_capacity.empty() ? "" : " " + v.sheaf_capacity,
                       v.sets.empty() ? "" : fmt::format(" {}", fmt::join(v.sets, " ")));
  }
  out += "\n";

  // A row's settled mean carries its 95% half-width (settle.<N>.half_width_percent); "!" marks a
  // row that is not settled.
  auto spread = [&](std::size_t i, const std::string& label) -> std::string {
    if (label.empty() || !std::isdigit(static_cast<unsigned char>(label[0]))) return "";
    auto hw = stats[i].find("settle." + label + ".half_width_percent");
    auto un = stats[i].find("settle." + label + ".unsettled");
    const bool unsettled = un != stats[i].end() && un->get<double>() == 1;
    if (hw == stats[i].end()) return unsettled ? " !" : "";
    return fmt::format(" ±{:.1f}%{}", hw->get<double>(), unsettled ? "!" : "");
  };
  out += fmt::format("will-it-scale ops/s: simulated (±95%) | published\n{:>16}", "nr_task");
  for (std::size_t i : shown) out += fmt::format(" {:>32}", e.variants[i].name);
  out += "\n";
  bool any_unsettled = false;
  for (const auto& [label, metric] : rows) {
    out += fmt::format("{:>16}", label);
    for (std::size_t i : shown) {
      auto p = published(e.variants[i].name, metric);
      const std::string sp = spread(i, label);
      any_unsettled = any_unsettled || sp.find('!') != std::string::npos;
      out += fmt::format(" {:>19} | {:>10}", value(simulated(i, metric)) + sp, p ? value(*p) : "-");
    }
    out += "\n";
  }
  if (any_unsettled) out += "! not settled within the settle rule's cap: the mean is not known to its target\n";
  // The compared pairs: every pair a cell scores, first the ones against the baseline.
  std::vector<std::pair<std::size_t, std::size_t>> pairs;  // indices into e.variants
  auto index_of = [&](const std::string& name) {
    for (std::size_t i = 0; i < e.variants.size(); ++i)
      if (e.variants[i].name == name) return i;
    return e.variants.size();
  };
  for (int against_base = 1; against_base >= 0; --against_base)
    for (const auto& c : e.cells) {
      if (!c.excluded.empty() || (c.baseline == base.name) != static_cast<bool>(against_base)) continue;
      std::pair<std::size_t, std::size_t> p{index_of(c.baseline), index_of(c.test)};
      if (std::find(pairs.begin(), pairs.end(), p) == pairs.end()) pairs.push_back(p);
    }
  bool any_across = false;
  out += fmt::format("\nchange: simulated | published\n{:>16}", "nr_task");
  for (const auto& [b, x] : pairs) {
    bool across = e.variants[b].tree != e.variants[x].tree;
    any_across = any_across || across;
    out += fmt::format(" {:>21}", e.variants[x].name + " vs " + e.variants[b].name + (across ? "*" : ""));
  }
  out += "\n";
  for (const auto& [label, metric] : rows) {
    out += fmt::format("{:>16}", label);
    for (const auto& [b, x] : pairs) {
      auto d = delta_pct(simulated(b, metric), simulated(x, metric));
      auto p = published_delta(e.variants[b].name, e.variants[x].name, metric);
      out += fmt::format(" {:>9} | {:>9}", pct(d), p ? pct(p) : "-");
    }
    out += "\n";
  }
  if (any_across)
    out += "* across releases: the two kernels come from different source trees, so the published change also "
           "holds every non-slab change between them; the model keeps the baseline's non-slab time for both\n";
  out += fmt::format("\nscore on this topology: {}\n", totals_line(t.totals));
  return out;
}

}  // namespace slubsim
