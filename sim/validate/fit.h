// Calibration fits (configs/fits/<id>.<topology>.json): VALIDATION.md class 4, the non-slab
// time of one workload operation on one machine, as one factor over the workload parameters an
// experiment's "fit" lists, fitted on the baseline variant at the lowest task count only.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/config.h"
#include "sim/validate/experiment.h"

namespace slubsim {

// A pin's second derivation: another machine's fit of the same parameters, its non-slab time per
// operation (the parameters' sum) and its ratio to the pin's.
struct CrossCheckPoint {
  std::string file;  // the other fit's file name
  double nonslab_ns = 0;
  double ratio = 0;  // nonslab_ns / the pin's
  std::string note;
};

struct Fit {
  std::string file;
  std::string experiment, topology;
  // The workload the parameters belong to: written by `slubsim fit` (sim/validate/fit_measured.h),
  // whose fit has no experiment file to name it; "" in a calibration fit (its experiment says).
  std::string workload;
  // The file's "source"; "" = validate --calibrate's own (a fit or a pin, by the metric).
  std::string source;
  double scale = 1;
  std::vector<std::pair<std::string, double>> parameters;  // scaled values, ns
  // fitted_on
  std::string variant, kernel, metric;
  int nr_task = 0;
  double published = 0, simulated = 0;
  std::string duration, warmup;
  std::uint64_t seed = 1;
  int simulations = 0;
  bool converged = false;

  std::vector<CrossCheckPoint> cross_checks;  // a pin's, from its experiment's fit.cross_check

  // --set workload.parameters.NAME=VALUE for every parameter.
  std::vector<std::string> sets() const;
  double nonslab_ns() const;  // the parameters' sum: the non-slab time of one operation
};

std::string fit_path(const std::string& fits_dir, const std::string& id, const std::string& topology);
// Read the fit of (experiment, topology) and check that it is the fit the experiment asks for.
// A missing file is an error that says to run --calibrate.
Fit load_fit(const std::string& fits_dir, const Experiment& e, const std::string& topology);
json fit_json(const Fit& f);
// Any fit file, checked for the fields every fit has (not against an experiment): what
// `slubsim run --fit FILE` reads.
Fit read_fit_file(const std::string& file);
// The fit an experiment borrows (Experiment::fit_from): the other experiment's fit file, which
// must have converged and list exactly the workload parameters this experiment's workload has.
Fit load_borrowed_fit(const std::string& fits_dir, const Experiment& e, const std::string& home);

// The workload parameters' values as the experiment's baseline variant sees them (workload file
// plus the experiment's and the variant's --set), in the fit's order.
std::vector<std::pair<std::string, double>> base_parameters(const Experiment& e, const std::string& home);
// Parameters scaled by s, rounded to the engine's resolution (1 ps) so that the file's values
// are exactly what was simulated.
std::vector<std::pair<std::string, double>> scaled_parameters(
    const std::vector<std::pair<std::string, double>>& base, double s);

// The factor search: throughput ~ 1 / (s * W + slab), so 1 / throughput is linear in s where
// the locks do not saturate. From s = `start` (1 for a calibration; the nominal fit's scale when
// an interval's end fits again): a ratio step, then false position inside a bracket on
// the branch where throughput falls with s (secant steps until there is one), at most
// kFitMaxSimulations, until within kFitTolerancePct of `published`; it gives up early when a smaller s
// is no faster (the published figure is above the model's peak). simulate(s) returns the
// simulated metric.
// 12: a base near the edge of lock saturation spends several simulations on the saturated plateau
// before a bracket forms (T05's fit had not closed its bracket after 8; docs/fidelity-log.md).
constexpr int kFitMaxSimulations = 12;
constexpr double kFitTolerancePct = 0.5;
// A pin's tolerance, in points of the published share: a perf share is read to 0.01 but a
// simulated one moves by about half a point between neighbouring scales near saturation (the
// first pin, Zhao Liu's 61.76%, plateaued at 61.4).
constexpr double kPinTolerancePoints = 0.5;
// The search's tolerance for an experiment's fit, in percent of the published value.
inline double fit_tolerance_pct(const std::string& metric, double published) {
  return is_pin_metric(metric) && published > 0 ? 100.0 * kPinTolerancePoints / published : kFitTolerancePct;
}
struct ScaleSearch {
  double scale = 1, simulated = 0;
  int simulations = 0;
  bool converged = false;
};
ScaleSearch search_scale(double published, const std::function<double(double)>& simulate,
                         double tolerance_pct = kFitTolerancePct, double start = 1.0);

}  // namespace slubsim
