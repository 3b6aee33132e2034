// The model's own error as an interval: how far the published delta has been from the simulated
// one on the scoreboard's tables, turned into a half-width that a new answer's interval adds.
//
// Method (split-conformal prediction, grouped by table; docs/design.md "The interval with the
// model's record"): the conformity score of a scored cell is its absolute error |published -
// simulated| in points. For a level of 90%, the half-width is the ceil((n + 1) * 0.9)-th smallest
// of n scores, which holds a new cell's error with probability at least 90% when the new cell
// and the n are exchangeable. The scores are pooled by kind of comparison (a knob within one
// kernel, kernels of one source tree, kernels of two releases): the model errs differently on
// each. A table's cells share a machine, a fit and a workload, so cells are not exchangeable
// within a table; tables are taken to be across tables, and on the scoreboard a table's interval
// is computed from the other tables' cells only (leave one table out), so the coverage it reports
// is out of sample. An answer uses every table's cells of its kind.
//
// Assumed: the question is like a scored table (same kinds of machine, workload and kernel
// step); the errors of tables not yet published are like those of the published ones. Not
// assumed: any shape of the error (no normality, no sign).
#pragma once
#include <array>
#include <optional>
#include <string>
#include <vector>

namespace slubsim {

enum class ComparisonKind { Knob, WithinTree, AcrossReleases };
// "knob", "within_tree", "across_releases": the scoreboard's keys.
const char* comparison_key(ComparisonKind k);
// The kind a key names; none for any other text.
std::optional<ComparisonKind> comparison_of_key(const std::string& key);
// "a sheaf knob within one kernel", ...: for the reader.
const char* comparison_text(ComparisonKind k);

// The level of the interval with the model's record.
inline constexpr double kRecordLevel = 0.90;

// One scored cell's absolute error, with its table and kind.
struct Residual {
  std::string table;
  ComparisonKind kind = ComparisonKind::WithinTree;
  double abs_error_pp = 0;
};

// The ceil((n + 1) * level)-th smallest of the n values; none when that rank is above n (too few
// cells for the level: the interval is unbounded).
std::optional<double> conformal_quantile(std::vector<double> abs_errors, double level = kRecordLevel);

// The interval with the model's record of a delta: delta -+ half_width, joined with the inputs'
// interval [low, high] (pass the delta for both when there is none).
std::array<double, 2> record_interval(double delta, double half_width, double low, double high);

// The half-width for a cell of `table` and `kind` from the cells of `residuals` of that kind
// whose table is another (leave one table out); `table` "" uses them all (an answer's).
std::optional<double> record_half_width(const std::vector<Residual>& residuals, const std::string& table,
                                        ComparisonKind kind, double level = kRecordLevel);

}  // namespace slubsim
