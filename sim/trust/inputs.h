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
// one the range the value's source states (docs/topology-format.md). A workload's placeholder
// non-slab times, which have no stated range, span the calibration fits of that workload (the
// fitted scale factors of VALIDATION.md class 4, on the machines they were fitted on) and the
// placeholder itself: the spread of the same figure on comparable parts. No range is widened to
// reach a published cell.
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
  enum class Kind { Estimate, Placeholder, Sourced, Set, Measured, Fitted };
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

// The calibration fits of `workload` (configs/fits of experiments in the calibration set whose
// workload it is): (fit file name without .json, fitted scale of the non-slab times), by name.
std::vector<std::pair<std::string, double>> calibration_scales(const std::string& home, const std::string& workload);

// The catalogue of a resolved job, in file order: topology, cost model, workload.
std::vector<UncertainInput> uncertain_inputs(const Job& job);

// `slubsim inputs`: a table (value, range, kind, who uses it), then each input's sources.
std::string format_inputs(const Job& job, const std::vector<UncertainInput>& inputs);
json inputs_json(const Job& job, const std::vector<UncertainInput>& inputs);

}  // namespace slubsim
