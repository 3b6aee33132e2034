// The model's record beside an answer: how it did on the published tables nearest to the
// question, from the committed scoreboard (results/scoreboard.json), so that a user need not read
// the scoreboard to know how far to trust a table.
//
// Nearest: the same kind of comparison (a sheaf knob within one kernel; kernels of one source
// tree; kernels of different releases), workloads that allocate from a cache in common (mmap1,
// mmap2 and brk1 share maple_node and vm_area_struct), and a machine of the same vendor (the
// topology preset's name up to its first '-': amd, intel, arm) and socket count; failing the
// socket count, the same vendor with any, said so. Each experiment is counted on its best
// topology (the machine its source named). Then whether this machine itself was validated, and
// how many of its inputs are estimates or placeholders (sim/trust/inputs.h).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/run/job.h"
#include "sim/trust/conformal.h"

namespace slubsim {

// The comparison variant b makes against variant a: one kernel preset (a knob), two of one
// source tree, or two trees.
ComparisonKind comparison_between(const Variant& a, const Variant& b);
// The kinds of comparison a job's table makes: each variant against its baseline (--baseline).
std::vector<ComparisonKind> comparisons_of(const Job& job);

// The model's record as an interval for one kind of comparison (sim/trust/conformal.h), from the
// committed scoreboard's "record": the half-width an answer adds (every table's cells), and how
// often the interval held the published delta there, one table left out. And how often the
// inputs' interval held it: the scoreboard's own when it was made with intervals, else the last
// measured (configs/record/inputs-interval.json, which says when).
struct RecordWidth {
  bool found = false;  // the scoreboard has this kind
  std::optional<double> half_width_pp;  // none: too few cells, unbounded
  int cells = 0, covered = 0, tables = 0;
  std::optional<double> median_width_pp;
  // The inputs' interval on the scoreboard: cells, covered, median width, and where measured.
  int inputs_cells = 0, inputs_covered = 0;
  std::optional<double> inputs_median_width_pp;
  std::string inputs_from;  // "" = no measurement
};
// Every kind's; a missing or unreadable scoreboard gives kinds not found.
std::map<ComparisonKind, RecordWidth> record_widths(const std::string& home);
// "the model's record: ±H points (C of N cells held, one table left out, T tables); the inputs'
// interval held c of n (where)": one line for a kind.
std::string record_width_text(ComparisonKind k, const RecordWidth& w);

// "record: ..." lines for a job's table. `kinds`: the comparisons the table makes (advise: Knob).
// A missing or unreadable scoreboard is said, not an error.
std::string record_lines(const Job& job, const std::vector<ComparisonKind>& kinds);

}  // namespace slubsim
