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
#include <string>
#include <vector>

#include "sim/run/job.h"

namespace slubsim {

enum class ComparisonKind { Knob, WithinTree, AcrossReleases };

// The kinds of comparison a job's table makes: each variant against the first.
std::vector<ComparisonKind> comparisons_of(const Job& job);

// "record: ..." lines for a job's table. `kinds`: the comparisons the table makes (advise: Knob).
// A missing or unreadable scoreboard is said, not an error.
std::string record_lines(const Job& job, const std::vector<ComparisonKind>& kinds);

}  // namespace slubsim
