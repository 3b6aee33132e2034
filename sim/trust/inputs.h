// The model's uncertain inputs: every figure a job reads that is not a fact of the kernel (the
// machine's cache-line latencies, the cost model's constants, the workload's non-slab times),
// with its value, the range it may take and where both come from. One catalogue: `slubsim
// inputs` prints it, advise re-runs its picks at its ranges' ends, and the intervals of an answer
// are taken over it.
//
// What is catalogued: every sourced figure ({"value": number, "source": "..."}) of the job's
// topology, cost model and workload files, after --set. Left out, by how their source begins:
// "kernel fact" (a constant read from the kernel source: not uncertain), "model switch" / "model
// choice" (how the model works, not a figure of the machine), "replay mechanics" and "used only
// with" (a figure the job's settings do not use), "a check" (a measurement kept to check the
// model against, as slubsim probe's lock hand-offs). Numbers only.
//
// A range is [low, high] around the value with a source of its own ("range_source"), or without
// one the range the value's source states (docs/topology-format.md). Every estimate of a preset
// has one (tests/test_inputs.cpp), and a figure copied from a preset (slubsim import and probe,
// tools/import-topology.py: its source begins "copied") keeps that preset's. A workload's
// placeholder non-slab times, which have no stated range, span every fit of that workload in
// configs/fits (the fitted scale factors of VALIDATION.md class 4, calibration set and seed checks
// alike, on the machines they were fitted on; this machine's own first) and the placeholder
// itself: the spread of the same figure on comparable parts, and on this machine where it was
// fitted. No range is widened to reach a published cell.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/config.h"
#include "sim/run/job.h"

namespace slubsim {

struct UncertainInput {
  // Fitted: a class-5 cost fitted on a published table (configs/costs: 'fitted (T12, date)').
  // Copied: a figure of another machine's preset, copied by slubsim import or probe or by
  // tools/import-topology.py (its source begins "copied from preset"), with that preset's range.
  enum class Kind { Estimate, Placeholder, Sourced, Set, Measured, Fitted, Copied };
  std::string name;  // the --set key: "topology.latency_ns.llc", "workload.parameters.unlocked_ns"
  std::string file;  // the config file it is read from
  double value = 0;
  std::string unit;  // from the key: "ns", "us", or "" (a factor, a count)
  Kind kind = Kind::Sourced;
  std::string source;
  std::optional<std::array<double, 2>> range;
  std::string range_source;  // never empty when range is set
  std::string used_by;       // which machines and workloads read it
};
const char* kind_name(UncertainInput::Kind k);

// A figure guessed for this machine rather than known of it: an estimate, or a copy of another
// machine's figure. What advise and the quick intervals move together at their ranges' ends, and
// what the record counts as estimated.
bool estimated(const UncertainInput& in);

// One fit of a workload's non-slab times (configs/fits/<experiment>.<topology>.json).
struct WorkloadFit {
  std::string name;        // the fit file's name without .json
  std::string experiment;  // the experiment it was fitted on (its "experiment")
  std::string topology;    // the machine it was fitted on (its "topology")
  double scale = 1;        // the fitted scale of the placeholder non-slab times
  bool this_machine = false;  // fitted on the machine asked about
};

// Every fit of `workload` in configs/fits (the experiment's "workload" is it; calibration set and
// seed checks alike): those fitted on `machine` first, then the others, each by name. A fit that
// cannot be read is left out (validate reports it).
std::vector<WorkloadFit> workload_fits(const std::string& home, const std::string& workload,
                                       const std::string& machine);

// The span of the non-slab time those fits and the placeholder itself (x1) give: {lowest, highest}.
std::pair<double, double> fit_span(const std::vector<WorkloadFit>& fits);

// The catalogue of a resolved job, in file order: topology, cost model, workload.
std::vector<UncertainInput> uncertain_inputs(const Job& job);

// `slubsim inputs`: a table (value, range, kind, who uses it), then each input's sources.
std::string format_inputs(const Job& job, const std::vector<UncertainInput>& inputs);
json inputs_json(const Job& job, const std::vector<UncertainInput>& inputs);

}  // namespace slubsim
