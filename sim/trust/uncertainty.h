// `run --uncertainty quick|full`: how far a table's deltas (each variant against the first, at
// each task count) move over the inputs the model does not know (inputs.h), as a 90% interval,
// with the input that moves it most and, where the delta's sign flips inside that input's range,
// about where.
//
// Design (2026-12-04):
//   factors  quick: two groups, each moved together to both ends of its members' ranges, as
//            advise does: the machine's estimated latencies, the workload's placeholder non-slab
//            times (the span of every fit of the workload). full: every catalogued input with a range,
//            alone (a one-at-a-time screening: Morris with one trajectory per input at the
//            ends). An end where the nominal value already sits is not run again.
//   runs     each end is the whole job again with the end's --set items: every variant and task
//            count at the same seed, so the variants of one run share their random numbers
//            (common random numbers) and a delta does not carry the simulation's noise twice.
//   interval per delta, a surrogate: the delta is the nominal delta plus, per factor, the change
//            its position makes, piecewise linear through (low end, nominal, high end), plus the
//            windows' own noise (normal, from both means' 95% half-widths); each factor uniform
//            over its range, the factors independent, their effects adding. 20,000 draws of a
//            seeded stream (byte-identical for a seed); the 5th and 95th percentiles.
//   decides  the factor whose draws vary the delta most; a flip is where its piecewise line
//            crosses zero with the other factors at their nominal values.
// Limits: interactions between factors are not seen (quick's groups move their members together,
// which is wider than independent members would be); a range is the source's, not a
// distribution; a factor's effect is only known at its ends.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/run/job.h"
#include "sim/trust/inputs.h"
#include "sim/trust/record.h"

namespace slubsim {

enum class UncertaintyMode { Quick, Full };
// "quick" or "full"; anything else is a ConfigError on --uncertainty.
UncertaintyMode parse_uncertainty(const std::string& text);

struct Factor {
  std::string name;  // "latency estimates", or an input's --set key
  std::string what;  // what it moves, for the report
  std::vector<std::string> low, high;  // --set items at the two ends
  double position = 0.5;               // the nominal's place in [0, 1] along the range
  bool single = false;                 // one input: lo / nominal / hi / unit below
  double lo = 0, nominal = 0, hi = 0;
  std::string unit;
  // A group of values scaled together (the non-slab placeholders): the scale at its ends.
  double scale_lo = 0, scale_hi = 0;
  bool run_low() const { return position > 0; }
  bool run_high() const { return position < 1; }
};
std::vector<Factor> uncertainty_factors(const Job& job, UncertaintyMode mode);
// The runs the factors add to the job's own: one per end not at the nominal.
std::size_t extra_runs(const std::vector<Factor>& factors);

// The spread of one delta: its 90% interval from the surrogate's draws (`at[f]`: the delta at
// factor f's low and high ends, the nominal where an end was not run; sigma: the windows' noise
// as a standard error, in points), the factor that spreads it most (none: the noise does), and
// the reach: the least and the most any setting inside the ranges gives, widened by 1.96 sigma.
struct Spread {
  double low = 0, high = 0;
  double reach_low = 0, reach_high = 0;
  std::optional<std::size_t> top;
};
Spread spread_of(double delta, double sigma, const std::vector<Factor>& factors,
                 const std::vector<std::array<double, 2>>& at, std::uint64_t seed, std::uint64_t a, std::uint64_t b);
// What decides a delta: "<factor>: x% at the low end, y% at the high end", or the windows'
// noise; *flip (if given) gets where the delta's sign turns inside that factor's range, or stays.
std::string deciding_input(const std::vector<Factor>& factors, const std::vector<std::array<double, 2>>& at,
                           const Spread& s, double delta, double sigma, std::string* flip);
// The windows' noise on a delta of `delta` percent between means a and b with 95% half-widths.
double delta_sigma(double delta, double a, double a_half_width, double b, double b_half_width);

// One delta: variant v against its baseline (--baseline) at row `row`, in percent.
struct DeltaInterval {
  std::size_t variant = 0, baseline = 0, row = 0;
  ComparisonKind kind = ComparisonKind::Knob;
  double delta = 0;          // at the nominal inputs
  double low = 0, high = 0;  // the 90% interval over the inputs
  // The 90% interval with the model's record (add_record): none when the record is unbounded
  // or missing.
  std::optional<std::array<double, 2>> record;
  std::string decided_by;    // the factor that moves it most, with its ends
  std::string flip;          // where the sign flips inside that factor's range, or ""
};

// ends[f] = {the job at factor f's low end, at its high end} (absent where not run).
std::vector<DeltaInterval> delta_intervals(const Job& job, const JobResult& nominal, const std::vector<Factor>& factors,
                                           const std::vector<std::array<std::optional<JobResult>, 2>>& ends);

// Each delta's interval with the model's record: the delta plus or minus its kind's half-width,
// joined with the inputs' interval (sim/trust/conformal.h).
void add_record(std::vector<DeltaInterval>& intervals, const std::map<ComparisonKind, RecordWidth>& widths);

std::string format_uncertainty(const Job& job, UncertaintyMode mode, const std::vector<Factor>& factors,
                               const std::vector<DeltaInterval>& intervals,
                               const std::map<ComparisonKind, RecordWidth>& widths);
json uncertainty_json(const Job& job, UncertaintyMode mode, const std::vector<Factor>& factors,
                      const std::vector<DeltaInterval>& intervals,
                      const std::map<ComparisonKind, RecordWidth>& widths);

}  // namespace slubsim
