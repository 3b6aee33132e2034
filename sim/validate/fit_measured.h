// `slubsim fit`: the class-4 fit (VALIDATION.md) of a figure the user measured on their own
// machine, made with the search `validate --calibrate` uses (search_scale, sim/validate/fit.h),
// written as a fit file of the configs/fits format that `slubsim run --fit FILE` applies.
// Also the readers of the measurement (an lkp stats.json, will-it-scale's runtest.py CSV or one
// will-it-scale binary's output) and what `run --fit` does with a fit file.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "sim/run/job.h"
#include "sim/validate/fit.h"

namespace slubsim {

// The will-it-scale figure a fit aims at: total ops/s of all tasks at one task count.
struct MeasuredFigure {
  double ops = 0;
  int nr_task = 0;       // 0: not known (the caller's --nr-task must say)
  std::string from;      // where it was read, for the fit file's source and the report
};

// "processes" or "threads": the lkp key's word for a will-it-scale mode (--mode process|thread).
std::string mode_word(const std::string& mode);
// will-it-scale.<N>.processes (or .threads): the metric a fit at N tasks aims at.
std::string wis_metric(int nr_task, const std::string& mode);

// The figure in FILE, whichever of these it is (detected from its text):
//  - an lkp stats.json (or matrix.json: an array is its mean): the key will-it-scale.N.<mode>,
//    else will-it-scale.workload when the file holds one task count only (lkp's sum over rows);
//  - will-it-scale's runtest.py output, the CSV `tasks,processes,processes_idle,threads,
//    threads_idle,linear`: the row of N tasks, the processes or threads column by mode;
//  - the output of one will-it-scale binary (`./mmap2_processes -t N -s 5`): its `average:` line.
// nr_task 0 = infer it where the file says (one key, or the CSV's lowest task count). Throws
// ConfigError naming the file, the key or line, and what is wrong; a figure that is not positive
// is an error.
MeasuredFigure read_measured_figure(const std::string& file, const std::string& mode, int nr_task);

// What `slubsim fit` asks for.
struct FitMeasuredRequest {
  JobRequest job;      // topology, workload, mode, kernel, settings; nr_task is the one count
  MeasuredFigure figure;
  std::vector<std::string> parameters;  // workload parameters to scale; empty = its placeholders
  double start = 1.0;  // the search's first scale
  std::string out;     // the fit file to write
};

struct FitMeasured {
  Fit fit;
  std::vector<std::pair<std::string, double>> base;  // the parameters at scale 1, ns
  double tolerance_pct = 0;
  std::string machine, workload, variant;  // the resolved job's names
  std::vector<std::string> warnings;       // about the window (window_warnings), said once
};

// Check everything (the job resolves to one variant at one task count, the parameters exist, the
// figure is positive, --out can be written) without simulating. Throws ConfigError.
Job check_fit_request(const FitMeasuredRequest& r, std::vector<std::pair<std::string, double>>& base);

// Check, then search the scale: one simulation per step, each reported to `progress` (after the
// window's warnings, each a line "warning: ...").
FitMeasured fit_measured(const FitMeasuredRequest& r, const std::function<void(const std::string&)>& progress);

// What `slubsim fit` prints: measured vs simulated, error, converged or not, the parameters.
std::string format_fit_measured(const FitMeasured& m, const FitMeasuredRequest& r);

// `run --fit FILE`: the --set items that apply the fit file's parameters to the request's
// workload (before the request's own --set, which win). The file must be a fit file
// (configs/fits format), its workload (when it names one) the request's, and every parameter
// one of the workload's. Throws ConfigError naming the fit file.
std::vector<std::string> fit_file_sets(const std::string& fit_file, const JobRequest& req);
// Notes for stderr once the job is resolved: a fit made on another machine, or one that did not
// converge.
std::vector<std::string> fit_file_notes(const std::string& fit_file, const Job& job);

}  // namespace slubsim
