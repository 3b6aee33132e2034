#include "sim/trust/uncertainty.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>
#include <fmt/format.h>

#include "models/random.h"
#include "sim/run/report.h"

namespace slubsim {

namespace {

constexpr int kDraws = 20000;
constexpr double kZ95 = 1.959964;  // a settled mean's 95% half-width over its standard error
constexpr double kLowQuantile = 0.05, kHighQuantile = 0.95;  // the 90% interval

double delta_pct(const JobResult& r, std::size_t base_variant, std::size_t v, std::size_t row) {
  const double base = row_mean(r, base_variant, row).ops;
  return base > 0 ? 100.0 * (row_mean(r, v, row).ops / base - 1.0) : 0.0;
}

// The delta at place u in [0, 1] of a factor's range: piecewise linear through its low end, the
// nominal (at `p`) and its high end.
double along(double u, double p, double lo, double nominal, double hi) {
  if (u <= p) return p > 0 ? lo + (nominal - lo) * (u / p) : nominal;
  return p < 1 ? nominal + (hi - nominal) * ((u - p) / (1 - p)) : nominal;
}

std::string value_text(const Factor& f, double u) {
  if (f.single) return fmt::format("{:.3g}{}{}", f.lo + u * (f.hi - f.lo), f.unit.empty() ? "" : " ", f.unit);
  if (f.scale_hi > 0) return fmt::format("x{:.2f} (their range: x{:.2f} to x{:.2f})", f.scale_lo + u * (f.scale_hi - f.scale_lo), f.scale_lo, f.scale_hi);
  return fmt::format("{:.0f}% of the way from their low to their high ends", 100 * u);
}

std::string set_item(const std::string& name, double v) { return fmt::format("{}={}", name, v); }

}  // namespace

UncertaintyMode parse_uncertainty(const std::string& text) {
  if (text == "quick") return UncertaintyMode::Quick;
  if (text == "full") return UncertaintyMode::Full;
  throw ConfigError("command line", "--uncertainty", fmt::format("'{}' is not quick or full", text));
}

std::vector<Factor> uncertainty_factors(const Job& job, UncertaintyMode mode) {
  std::vector<Factor> out;
  const auto inputs = uncertain_inputs(job);
  auto ranged = [](const UncertainInput& in) { return in.range && (*in.range)[1] > (*in.range)[0]; };
  auto place = [](const UncertainInput& in) { return (in.value - (*in.range)[0]) / ((*in.range)[1] - (*in.range)[0]); };
  if (mode == UncertaintyMode::Full) {
    for (const auto& in : inputs) {
      if (!ranged(in)) continue;
      Factor f;
      f.name = in.name;
      f.what = fmt::format("{} {}-{}{}{} ({})", in.name, (*in.range)[0], (*in.range)[1], in.unit.empty() ? "" : " ",
                           in.unit, kind_name(in.kind));
      f.low = {set_item(in.name, (*in.range)[0])};
      f.high = {set_item(in.name, (*in.range)[1])};
      f.position = place(in);
      f.single = true;
      f.lo = (*in.range)[0];
      f.nominal = in.value;
      f.hi = (*in.range)[1];
      f.unit = in.unit;
      out.push_back(f);
    }
    return out;
  }
  // Quick: the two groups advise moves, each together.
  Factor lat, nonslab;
  lat.name = "latency estimates";
  nonslab.name = "non-slab placeholders";
  lat.position = nonslab.position = 0;
  std::size_t nl = 0, nn = 0;
  for (const auto& in : inputs) {
    if (!ranged(in)) continue;
    if (in.name.rfind("topology.latency_ns.", 0) == 0 && estimated(in)) {
      lat.low.push_back(set_item(in.name, (*in.range)[0]));
      lat.high.push_back(set_item(in.name, (*in.range)[1]));
      lat.position += place(in);
      ++nl;
    } else if (in.name.rfind("workload.", 0) == 0 && in.kind == UncertainInput::Kind::Placeholder) {
      nonslab.low.push_back(set_item(in.name, (*in.range)[0]));
      nonslab.high.push_back(set_item(in.name, (*in.range)[1]));
      nonslab.position += place(in);
      nonslab.what = fmt::format("{}'s {{}} placeholder non-slab times together, over {}", job.program.name,
                                 in.range_source);
      ++nn;
    }
  }
  if (nl) {
    lat.position /= static_cast<double>(nl);
    lat.what = fmt::format("the {} estimated or copied latencies of {} together, each over its range ('slubsim "
                           "inputs' says whose)",
                           nl, job.machine.name);
    out.push_back(lat);
  }
  if (nn) {
    nonslab.position /= static_cast<double>(nn);
    // The span of every fit of the workload and x1 (inputs.h), as the catalogue's ranges.
    std::tie(nonslab.scale_lo, nonslab.scale_hi) =
        fit_span(workload_fits(job.request.home, job.program.name, job.machine.name));
    nonslab.what = fmt::format(fmt::runtime(nonslab.what), nn);
    out.push_back(nonslab);
  }
  return out;
}

std::size_t extra_runs(const std::vector<Factor>& factors) {
  std::size_t n = 0;
  for (const auto& f : factors) n += (f.run_low() ? 1 : 0) + (f.run_high() ? 1 : 0);
  return n;
}

double delta_sigma(double delta, double a, double a_half_width, double b, double b_half_width) {
  if (!(a > 0) || !(b > 0)) return 0;
  const double rel = std::hypot(std::max(0.0, a_half_width) / a, std::max(0.0, b_half_width) / b) / kZ95;
  return 100.0 * (1 + delta / 100.0) * rel;
}

Spread spread_of(double delta, double sigma, const std::vector<Factor>& factors,
                 const std::vector<std::array<double, 2>>& at, std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  Spread s;
  // Draws: each factor uniform over its range, the windows' noise normal (Irwin-Hall).
  Random rng(seed, a, b);
  std::vector<double> total(kDraws);
  std::vector<double> sum(factors.size(), 0), sum2(factors.size(), 0);
  for (int i = 0; i < kDraws; ++i) {
    double t = delta;
    for (std::size_t f = 0; f < factors.size(); ++f) {
      const double c = along(rng.uniform(), factors[f].position, at[f][0], delta, at[f][1]) - delta;
      t += c;
      sum[f] += c;
      sum2[f] += c * c;
    }
    double z = -6;
    for (int k = 0; k < 12; ++k) z += rng.uniform();
    total[static_cast<std::size_t>(i)] = t + sigma * z;
  }
  std::sort(total.begin(), total.end());
  s.low = total[static_cast<std::size_t>(kLowQuantile * (kDraws - 1))];
  s.high = total[static_cast<std::size_t>(std::ceil(kHighQuantile * (kDraws - 1)))];
  // The reach: every factor at whichever end (or the nominal) moves the delta furthest, added.
  double down = 0, up = 0;
  for (std::size_t f = 0; f < factors.size(); ++f) {
    down += std::min({0.0, at[f][0] - delta, at[f][1] - delta});
    up += std::max({0.0, at[f][0] - delta, at[f][1] - delta});
  }
  s.reach_low = delta + down - kZ95 * sigma;
  s.reach_high = delta + up + kZ95 * sigma;
  double top_var = sigma * sigma;  // the noise decides unless a factor spreads the delta more
  for (std::size_t f = 0; f < factors.size(); ++f) {
    const double var = sum2[f] / kDraws - (sum[f] / kDraws) * (sum[f] / kDraws);
    if (var > top_var) top_var = var, s.top = f;
  }
  return s;
}

// What decides a delta: the top factor with its ends (and, through *flip, where the sign turns
// inside its range), or the windows' noise.
std::string deciding_input(const std::vector<Factor>& factors, const std::vector<std::array<double, 2>>& at,
                       const Spread& s, double delta, double sigma, std::string* flip) {
  if (!s.top) {
    if (factors.empty() && sigma == 0) return "";
    // Nothing known moves it as much as the windows' own noise: a longer window would.
    return fmt::format("the windows' own noise (standard error {:.1f}%)", sigma);
  }
  const Factor& f = factors[*s.top];
  const double lo = at[*s.top][0], hi = at[*s.top][1], p = f.position;
  // A flip: the line through (0, lo), (p, delta), (1, hi) crosses zero.
  auto turns = [&](double u, double toward) {
    if (flip)
      *flip = fmt::format("turns {} with {} {} about {}", toward < 0 ? "negative" : "positive", f.name,
                          u < p ? "below" : "above", value_text(f, u));
  };
  if (delta != 0 && lo * delta < 0 && p > 0) turns(p * (-lo) / (delta - lo), lo);
  else if (delta != 0 && hi * delta < 0 && p < 1) turns(p + (1 - p) * delta / (delta - hi), hi);
  return fmt::format("{}: {:+.1f}% at the low end, {:+.1f}% at the high end", f.name, lo, hi);
}

std::vector<DeltaInterval> delta_intervals(const Job& job, const JobResult& nominal, const std::vector<Factor>& factors,
                                           const std::vector<std::array<std::optional<JobResult>, 2>>& ends) {
  std::vector<DeltaInterval> out;
  for (std::size_t row = 0; row < job.nr_tasks.size(); ++row)
    for (std::size_t v = 0; v < job.variants.size(); ++v) {
      const std::size_t base = baseline_variant(job, v);
      if (base == v) continue;
      DeltaInterval d;
      d.variant = v;
      d.baseline = base;
      d.row = row;
      d.kind = comparison_between(job.variants[base], job.variants[v]);
      d.delta = delta_pct(nominal, base, v, row);
      const RowMean a = row_mean(nominal, base, row), b = row_mean(nominal, v, row);
      const double sigma = delta_sigma(d.delta, a.ops, a.half_width, b.ops, b.half_width);
      std::vector<std::array<double, 2>> at(factors.size());
      for (std::size_t f = 0; f < factors.size(); ++f)
        for (std::size_t e = 0; e < 2; ++e) at[f][e] = ends[f][e] ? delta_pct(*ends[f][e], base, v, row) : d.delta;
      const Spread s = spread_of(d.delta, sigma, factors, at, job.request.seed, 0x756e63ULL + v, row);
      d.low = s.low;
      d.high = s.high;
      d.decided_by = deciding_input(factors, at, s, d.delta, sigma, &d.flip);
      out.push_back(d);
    }
  return out;
}

void add_record(std::vector<DeltaInterval>& intervals, const std::map<ComparisonKind, RecordWidth>& widths) {
  for (auto& d : intervals) {
    const auto it = widths.find(d.kind);
    if (it == widths.end() || !it->second.found || !it->second.half_width_pp) continue;
    d.record = record_interval(d.delta, *it->second.half_width_pp, d.low, d.high);
  }
}

namespace {

// What the deltas are against, for the header.
std::string against_text(const Job& job) {
  if (job.request.baseline == "kernel") return "the same kernel at its own settings (--baseline kernel)";
  return job.variants.front().label;
}

}  // namespace

std::string format_uncertainty(const Job& job, UncertaintyMode mode, const std::vector<Factor>& factors,
                               const std::vector<DeltaInterval>& intervals,
                               const std::map<ComparisonKind, RecordWidth>& widths) {
  std::string out = fmt::format(
      "uncertainty (--uncertainty {}): each variant against {}, its delta at the nominal inputs and two 90% "
      "intervals:\n"
      "  inputs:  over the inputs' ranges and the windows' own noise (sim/trust/uncertainty.h); it assumes the "
      "model right\n"
      "  record:  the delta plus or minus the model's own error on published tables of the same kind of "
      "comparison, joined with the inputs' (sim/trust/conformal.h); the one to act on\n",
      mode == UncertaintyMode::Quick ? "quick" : "full", against_text(job));
  std::set<ComparisonKind> kinds;
  for (const auto& d : intervals) kinds.insert(d.kind);
  out += "how often each held the published delta on the scoreboard (results/scoreboard.json):\n";
  for (ComparisonKind k : kinds) {
    const auto it = widths.find(k);
    out += fmt::format("  {}\n", record_width_text(k, it == widths.end() ? RecordWidth{} : it->second));
  }
  if (factors.empty()) out += "  no uncertain input with a range: the inputs' interval is the windows' noise alone\n";
  for (const auto& f : factors) out += fmt::format("  factor {}: {}\n", f.name, f.what);
  std::size_t width = 7, against = 7;
  for (const auto& v : job.variants) width = std::max(width, v.label.size());
  for (const auto& d : intervals) against = std::max(against, job.variants[d.baseline].label.size());
  out += fmt::format("{:>8}  {:<{}} {:<{}} {:>8} {:>20} {:>20}  {}\n", "nr_task", "variant", width, "against", against,
                     "delta", "inputs 90%", "record 90%", "decided by (inputs)");
  auto interval_text = [](double low, double high) { return fmt::format("[{:+.1f}%, {:+.1f}%]", low, high); };
  auto record_text = [&](const DeltaInterval& d) {
    if (d.record) return interval_text((*d.record)[0], (*d.record)[1]);
    const auto it = widths.find(d.kind);
    return std::string(it != widths.end() && it->second.found ? "unbounded" : "no record");
  };
  bool outside = false;
  for (const auto& d : intervals) {
    outside = outside || d.delta < d.low || d.delta > d.high;
    out += fmt::format("{:>8}  {:<{}} {:<{}} {:>+7.1f}% {:>20} {:>20}  {}\n", job.nr_tasks[d.row],
                       job.variants[d.variant].label, width, job.variants[d.baseline].label, against, d.delta,
                       interval_text(d.low, d.high), record_text(d), d.decided_by.empty() ? "-" : d.decided_by);
    if (!d.flip.empty()) out += fmt::format("{:>8}  {:<{}} the delta {}\n", "", "", width, d.flip);
  }
  if (outside)
    out += "a delta outside its inputs' interval: the nominal inputs sit at or near an end of a range (the "
           "placeholder non-slab times are the top of their fits' span), so most of the range lies to one side\n";
  return out;
}

json uncertainty_json(const Job& job, UncertaintyMode mode, const std::vector<Factor>& factors,
                      const std::vector<DeltaInterval>& intervals,
                      const std::map<ComparisonKind, RecordWidth>& widths) {
  auto r2 = [](double v) { return std::round(100 * v) / 100; };
  json fs = json::array();
  for (const auto& f : factors)
    fs.push_back({{"name", f.name}, {"what", f.what}, {"low", f.low}, {"high", f.high}, {"position", f.position}});
  json ds = json::array();
  std::set<ComparisonKind> kinds;
  for (const auto& d : intervals) {
    kinds.insert(d.kind);
    json x = {{"nr_task", job.nr_tasks[d.row]},
              {"variant", job.variants[d.variant].label},
              {"against", job.variants[d.baseline].label},
              {"kind", comparison_key(d.kind)},
              {"delta_pct", r2(d.delta)},
              {"interval_90_pct", {r2(d.low), r2(d.high)}},
              {"record_interval_90_pct", d.record ? json{r2((*d.record)[0]), r2((*d.record)[1])} : json(nullptr)},
              {"decided_by", d.decided_by}};
    if (!d.flip.empty()) x["flip"] = d.flip;
    ds.push_back(x);
  }
  json record = json::object();
  for (ComparisonKind k : kinds) {
    const auto it = widths.find(k);
    const RecordWidth w = it == widths.end() ? RecordWidth{} : it->second;
    json x = {{"found", w.found}};
    if (w.found) {
      x["half_width_pp"] = w.half_width_pp ? json(r2(*w.half_width_pp)) : json(nullptr);
      x["scoreboard"] = {{"cells", w.cells}, {"covered", w.covered}, {"tables", w.tables}};
    }
    if (!w.inputs_from.empty())
      x["inputs_interval"] = {{"cells", w.inputs_cells}, {"covered", w.inputs_covered}, {"measured", w.inputs_from}};
    record[comparison_key(k)] = x;
  }
  return {{"mode", mode == UncertaintyMode::Quick ? "quick" : "full"},
          {"baseline", job.request.baseline},
          {"factors", fs},
          {"record", record},
          {"deltas", ds}};
}

}  // namespace slubsim
