// Scoring simulated deltas against published ones (docs/reference/VALIDATION.md, "Scoring").
// Pure arithmetic: no simulation, no files.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "sim/config/config.h"
#include "sim/trust/conformal.h"
#include "sim/validate/experiment.h"
#include "sim/validate/fit.h"

namespace slubsim {

// VALIDATION.md: a published |delta| below this, or one the author calls noise, is "no change";
// the simulation agrees with it if its own |delta| is below it too. The band applies to the
// simulated side of every cell: a published change agrees only with a simulated change of at
// least this size in the same direction.
constexpr double kNoChangeBandPct = 3.0;

// A cell's simulated delta over the inputs the model does not know (validate --uncertainty,
// sim/trust/uncertainty.h): its 90% interval, its reach (the least and most any setting inside
// the sourced ranges gives, with the windows' noise) and the input that decides it.
struct CellInterval {
  double low = 0, high = 0;
  double reach_low = 0, reach_high = 0;
  std::string decided_by;
  // VALIDATION.md "Intervals": the interval reaches into more than one class of -, no change, +.
  bool undetermined() const;
  bool covers(double published) const { return low <= published && published <= high; }
  bool reaches(double published) const { return reach_low <= published && published <= reach_high; }
};

struct CellScore {
  const ExperimentCell* cell = nullptr;
  std::optional<CellInterval> interval;
  bool excluded = false;
  bool no_change = false;      // the published cell is "no change"
  double published_delta = 0;  // in throughput terms (ExperimentCell::published_effective_delta)
  double sim_baseline = 0, sim_test = 0;
  std::optional<double> sim_delta;  // none when the simulated baseline is 0
  bool agree = false;
  std::optional<double> abs_error_pp;
  // The comparison it makes (make_scoreboard: from the variants' kernels and trees).
  ComparisonKind kind = ComparisonKind::WithinTree;
  // The interval with the model's record (sim/trust/conformal.h): the simulated delta plus or
  // minus the half-width the other tables' cells of its kind give (joined with `interval` when
  // there is one). record: it was computed; record_half_width none: too few cells, unbounded.
  bool record = false;
  std::optional<double> record_half_width;
  // [low, high] of that interval; none when unbounded or not computed.
  std::optional<std::array<double, 2>> record_interval() const;
};

// (test - base) / base * 100; none if base is 0.
std::optional<double> delta_pct(double base, double test);
CellScore score_cell(const ExperimentCell& cell, double sim_baseline, double sim_test);
CellScore excluded_cell(const ExperimentCell& cell);

// The median of the values (the mean of the middle two for an even count); none if empty.
std::optional<double> median(std::vector<double> values);

struct Totals {
  int cells = 0;  // scored cells (excluded ones are not counted)
  int agree = 0;
  std::optional<double> median_abs_error_pp;
  int excluded = 0;
  std::optional<double> agree_pct() const;
  // Of the cells with an interval: how many cover the published delta, how many are undetermined
  // (and of those, how many agree at the nominal inputs), how many the ranges cannot reach (the
  // structural misses), and the intervals' median width in points.
  int intervals = 0, covered = 0, undetermined = 0, undetermined_agree = 0, unreached = 0;
  std::optional<double> median_width_pp;
  // The interval with the model's record, left one table out: of the cells that have it, how
  // many hold the published delta (an unbounded one always does), how many are unbounded, and
  // the bounded ones' median width in points.
  int record_cells = 0, record_covered = 0, record_unbounded = 0;
  std::optional<double> record_median_width_pp;
  std::optional<double> record_coverage_pct() const;
};
Totals totals(const std::vector<const CellScore*>& cells);
Totals totals(const std::vector<CellScore>& cells);

// The in-sample point: the fit's published absolute against the simulated one.
struct FitPoint {
  std::string variant, metric, fit_file;
  int nr_task = 0;
  double published = 0, simulated = 0;
  double scale = 1;
  double nonslab_ns = 0;                      // the fitted parameters' sum
  std::vector<CrossCheckPoint> cross_checks;  // a pin's second derivations
  std::optional<double> error_pct() const { return delta_pct(published, simulated); }
};

// A published profile row against the why report's spin under the same call chain, in points
// of CPU cycles (VALIDATION.md "Profiles").
struct ProfileRowScore {
  const ProfileRow* row = nullptr;
  std::optional<double> simulated;  // none: the task count is not a row on this topology
  std::optional<double> error_pp() const {
    if (!simulated) return std::nullopt;
    return *simulated - row->published;
  }
};
struct ProfileScore {
  const ExperimentProfile* profile = nullptr;
  bool fitted = false;  // a baseline state: its observables may calibrate class-5 constants
  bool pinned = false;  // the state and task count a pin was fitted on: in-sample by construction
  std::vector<ProfileRowScore> rows;
};
// The share of the task time that the why keys of `stats` put in spin under the row's chain at
// `nr_task` tasks: the sum of why.<N>.spin.<stack>.percent over the folded stacks that match.
double profile_share(const json& stats, int nr_task, const ProfileRow& row);
// Whether a folded stack ("a;b;c;lock.class") matches the row: row.under in order, row.in the
// innermost frame, none of row.not_under, the lock class ending with row.lock.
bool stack_matches(const std::string& folded, const ProfileRow& row);

// A published counter against the same stats key of the simulated state: the ratio
// simulated / published (VALIDATION.md: page counts and other observables of the same runs).
struct CounterScore {
  const ExperimentCounter* counter = nullptr;
  bool fitted = false;  // a baseline state of the calibration set
  std::optional<double> simulated;  // none: the task count is not a row here, or no such key
  std::optional<double> ratio() const {
    if (!simulated) return std::nullopt;
    return *simulated / counter->published;
  }
};
// Over counter rows: how many, and the median factor between simulated and published
// (2^median |log2 ratio|, 1 = exact; a simulated 0 counts as off by the largest factor).
struct CounterTotals {
  int rows = 0;
  std::optional<double> median_factor;
};
CounterTotals counter_totals(const std::vector<const CounterScore*>& rows);

// Median |error| in points over profile rows.
struct ProfileTotals {
  int rows = 0;
  std::optional<double> median_abs_error_pp;
};
ProfileTotals profile_totals(const std::vector<const ProfileRowScore*>& rows);

struct TopologyScore {
  std::string topology;
  std::string note;
  std::vector<int> nr_task;
  std::vector<CellScore> cells;
  std::optional<FitPoint> fit;
  std::string borrowed;  // Experiment::fit_from: where the non-slab time came from
  // validate --uncertainty: the class-4 fit done again at each factor's end ("latency estimates,
  // low end: scale 0.31 (-23.1%)"), or why it was not.
  std::vector<std::string> refits;
  std::vector<ProfileScore> profiles;
  std::vector<CounterScore> counters;
  Totals totals;
};

struct ExperimentScore {
  const Experiment* experiment = nullptr;
  std::vector<TopologyScore> topologies;
  std::size_t best = 0;  // the topology with the lowest median abs error
};
// Fills totals and best.
void finish(ExperimentScore& s);

// VALIDATION.md "Sensitivity": how far the simulated deltas swing against the published ones,
// over throughput cells (will-it-scale.* and ops metrics), each comparison counted once.
struct Sensitivity {
  int cells = 0;
  std::optional<double> ratio;     // median |simulated| / median |published|
  std::optional<double> slope;     // least squares of simulated on published, through the origin
  std::optional<double> spearman;  // rank correlation (ties get their mean rank)
};
// One comparison: its published and simulated delta.
struct DeltaPair {
  double published = 0, simulated = 0;
};
Sensitivity sensitivity(const std::vector<DeltaPair>& pairs);
// The comparison a throughput cell makes, or none for other metrics: "<baseline>><test>@<row>",
// where the row is N for will-it-scale.N.{processes,threads}, and per_*_ops and workload (which
// aggregate the rows) share one key, the row itself when the job has one row. Two cells with one
// key are one comparison printed twice.
std::optional<std::string> comparison_key(const ExperimentCell& cell, const std::vector<int>& nr_task);

struct Scoreboard {
  std::vector<ExperimentScore> experiments;
  // Each experiment once, on its best-fitting topology:
  Totals calibration, seeds, overall;
  // The same cells split by whether both kernels come from one source tree (the slab change
  // alone) or from two releases (plus every other change between them; ExperimentVariant::tree):
  Totals within_tree, across_releases;
  // Cells within one tree again, split by set: the calibration set's, and the seed checks', whose
  // non-slab time is borrowed rather than fitted.
  Totals within_tree_calibration, within_tree_seeds;
  // The cells of each kind of comparison (best topologies), for the record's coverage by kind.
  Totals knob, within_tree_kernels;
  // Every scored cell of each experiment's best topology, for the record interval of an answer.
  std::vector<Residual> residuals;
  Sensitivity sens_overall, sens_within_tree, sens_across_releases;
  Sensitivity sens_within_tree_calibration, sens_within_tree_seeds;
  // Profile rows on each experiment's best topology: baseline states and predicted states.
  ProfileTotals profiles_fitted, profiles_predicted;
  CounterTotals counters_fitted, counters_predicted;
  // Every topology of every experiment:
  Totals calibration_all, seeds_all, overall_all;
  std::vector<std::string> sets;  // validate --set: model changes applied to every simulation
};
Scoreboard make_scoreboard(std::vector<ExperimentScore> experiments);

}  // namespace slubsim
