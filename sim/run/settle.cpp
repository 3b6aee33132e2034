#include "sim/run/settle.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace slubsim {

namespace {

// The rule's constants (settle.h). MSER's batch of five is the standard MSER-5; the thresholds
// for a period and for uncorrelated batches are the usual rules of thumb of output analysis
// (Law, Simulation Modeling and Analysis, 5th ed., §9.5; a periodogram peak is read here from the
// autocorrelation instead).
constexpr int kMserBatch = 5;
constexpr double kPeriodAcf = 0.3;
constexpr double kPeriodTrough = -0.1;
constexpr double kMaxLag1 = 0.5;  // with 20 batch means, about twice the estimate's sd under independence
constexpr int kTargetBatches = 20;
// Fewer batches than this say too little about the spread to project a window from it.
constexpr int kMinBatchesToProject = 5;

double mean_of(const std::vector<double>& x, std::size_t from, std::size_t to) {
  double s = 0;
  for (std::size_t i = from; i < to; ++i) s += x[i];
  return to > from ? s / static_cast<double>(to - from) : 0.0;
}

struct Batches {
  int b = 0, k = 0;
  double mean = 0, sd = 0, lag1 = 0;
  double trend = 0;    // least-squares change of the batch means over the window, relative to the mean
  double trend_t = 0;  // its t statistic
};

// The last k = n / b whole batches of b intervals of y.
Batches batch_means(const std::vector<double>& y, int b) {
  Batches r;
  r.b = b;
  r.k = static_cast<int>(y.size()) / b;
  if (r.k < 1) return r;
  const std::size_t start = y.size() - static_cast<std::size_t>(r.k) * static_cast<std::size_t>(b);
  std::vector<double> m;
  for (int j = 0; j < r.k; ++j)
    m.push_back(mean_of(y, start + static_cast<std::size_t>(j * b), start + static_cast<std::size_t>((j + 1) * b)));
  r.mean = mean_of(m, 0, m.size());
  double ss = 0, cross = 0;
  for (int j = 0; j < r.k; ++j) {
    const double d = m[static_cast<std::size_t>(j)] - r.mean;
    ss += d * d;
    if (j + 1 < r.k) cross += d * (m[static_cast<std::size_t>(j + 1)] - r.mean);
  }
  r.sd = r.k > 1 ? std::sqrt(ss / (r.k - 1)) : 0.0;
  r.lag1 = ss > 0 ? cross / ss : 0.0;
  // A straight line through the batch means: a slope that stands out of their scatter is a
  // drift the window still holds (a transient slower than MSER could see).
  if (r.k >= 3 && r.mean != 0) {
    const double xm = (r.k - 1) / 2.0;
    double sxx = 0, sxy = 0;
    for (int j = 0; j < r.k; ++j) {
      sxx += (j - xm) * (j - xm);
      sxy += (j - xm) * (m[static_cast<std::size_t>(j)] - r.mean);
    }
    const double slope = sxy / sxx;
    double rss = 0;
    for (int j = 0; j < r.k; ++j) {
      const double e = m[static_cast<std::size_t>(j)] - r.mean - slope * (j - xm);
      rss += e * e;
    }
    const double se = std::sqrt(rss / (r.k - 2) / sxx);
    r.trend = slope * (r.k - 1) / r.mean;
    r.trend_t = se > 0 ? slope / se : (slope != 0 ? INFINITY : 0.0);
  }
  return r;
}

}  // namespace

double t975(int df) {
  if (df < 1) return INFINITY;
  // Exact for the smallest df, where the expansion is poor.
  static const double small[] = {12.706, 4.303, 3.182, 2.776};
  if (df <= 4) return small[df - 1];
  const double z = 1.959963984540054, n = df;
  const double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z;
  return z + (z3 + z) / (4 * n) + (5 * z5 + 16 * z3 + 3 * z) / (96 * n * n) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * n * n * n);
}

int mser5(const std::vector<double>& x, bool* drifting) {
  const int k = static_cast<int>(x.size()) / kMserBatch;
  if (drifting) *drifting = false;
  if (k < 2) return 0;
  std::vector<double> z;
  for (int j = 0; j < k; ++j)
    z.push_back(mean_of(x, static_cast<std::size_t>(j * kMserBatch), static_cast<std::size_t>((j + 1) * kMserBatch)));
  const int last = k / 2;
  int best = 0;
  double best_v = INFINITY;
  for (int d = 0; d <= last; ++d) {
    const double m = mean_of(z, static_cast<std::size_t>(d), z.size());
    double ss = 0;
    for (int j = d; j < k; ++j) ss += (z[static_cast<std::size_t>(j)] - m) * (z[static_cast<std::size_t>(j)] - m);
    const double n = k - d;
    const double v = ss / (n * n);
    if (v < best_v) {
      best_v = v;
      best = d;
    }
  }
  if (drifting) *drifting = best == last && last > 0;
  return best * kMserBatch;
}

std::vector<double> autocorrelation(const std::vector<double>& x, int max_lag) {
  const std::size_t n = x.size();
  std::vector<double> r(static_cast<std::size_t>(std::max(0, max_lag)) + 1, 0.0);
  if (n < 2) return r;
  const double m = mean_of(x, 0, n);
  double c0 = 0;
  for (double v : x) c0 += (v - m) * (v - m);
  r[0] = 1;
  if (c0 <= 0) return r;
  for (int l = 1; l <= max_lag && static_cast<std::size_t>(l) < n; ++l) {
    double c = 0;
    for (std::size_t i = 0; i + static_cast<std::size_t>(l) < n; ++i) c += (x[i] - m) * (x[i + static_cast<std::size_t>(l)] - m);
    r[static_cast<std::size_t>(l)] = c / c0;
  }
  return r;
}

int find_period(const std::vector<double>& x, double* acf_at) {
  if (acf_at) *acf_at = 0;
  const int n = static_cast<int>(x.size());
  const int max_lag = n / 4;
  if (max_lag < 3) return 0;
  const auto r = autocorrelation(x, 2 * max_lag + 1);
  // Noise alone reaches about 2/sqrt(n); a period must stand well above it.
  const double need = std::max(kPeriodAcf, 3.0 / std::sqrt(static_cast<double>(n)));
  for (int l = 2; l <= max_lag; ++l) {
    const auto i = static_cast<std::size_t>(l);
    // Half a period apart the series is anti-correlated, and it repeats at twice the lag: a
    // peak without both is noise or a harmonic of a faster alternation, not a period.
    const double half = std::min(r[static_cast<std::size_t>(l / 2)], r[static_cast<std::size_t>((l + 1) / 2)]);
    if (half <= kPeriodTrough && r[i] >= need && r[i] >= r[i - 1] && r[i] >= r[i + 1] &&
        r[static_cast<std::size_t>(2 * l)] >= need) {
      if (acf_at) *acf_at = r[i];
      return l;
    }
  }
  return 0;
}

namespace {

// Batch means over y (the series after the transient), a fixed number of them (Schmeiser 1982:
// between 10 and 30 batches; kTargetBatches when the series allows, at least min_batches), each a
// whole number of periods. A fixed count rather than the smallest batch whose neighbours look
// uncorrelated: a series with an alternation faster than the interval (callbacks every other
// grace period) has near-zero lag-1 correlation at one interval yet cancels over many, and the
// smallest batches would overstate the variance of the mean several times over. The batch means'
// lag-1 correlation must still stay under kMaxLag1 (a slow swing the batches do not contain).
Batches choose_batches(const std::vector<double>& y, int period, int min_batches, bool* uncorrelated) {
  const int unit = std::max(1, period);
  const int n = static_cast<int>(y.size());
  if (n / unit < min_batches) {
    *uncorrelated = false;
    return batch_means(y, unit);
  }
  const int b = std::max(unit, n / kTargetBatches / unit * unit);
  Batches bm = batch_means(y, b);
  *uncorrelated = bm.lag1 <= kMaxLag1;
  return bm;
}

// The batch means trend beyond the target with a slope outside its 95% interval (a very quiet
// series shows significant but immaterial slopes, hence both).
bool trends(const Batches& bm, const SettleRule& rule) {
  return bm.k >= rule.min_batches && std::abs(bm.trend_t) > t975(bm.k - 2) && std::abs(bm.trend) > rule.ci_target;
}

SettleVerdict verdict_from(const std::vector<double>& y, int offset, int transient, int period, double acf,
                           const SettleRule& rule, bool drifting) {
  SettleVerdict v;
  v.transient = transient;
  v.period = period;
  v.period_acf = acf;
  bool uncorrelated = false;
  const Batches bm = choose_batches(y, period, rule.min_batches, &uncorrelated);
  const int n = static_cast<int>(y.size());
  v.batch = bm.b;
  v.batches = bm.k;
  v.to = offset + n;
  v.from = v.to - bm.b * bm.k;
  v.mean = bm.mean;
  v.half_width = bm.k >= 2 ? t975(bm.k - 1) * bm.sd / std::sqrt(static_cast<double>(bm.k)) : INFINITY;
  if (bm.k < 1) {
    v.from = offset;
    v.mean = mean_of(y, 0, y.size());
  }
  const double ms = to_us(rule.step) / 1000.0;
  if (drifting)
    v.reason = fmt::format("still drifting (MSER-5 puts the transient's end at {} ms, half the series)",
                           transient * ms);
  else if (bm.k < rule.min_batches)
    v.reason = fmt::format("too short to judge: {} intervals of {} ms after the transient make {} batches, the rule "
                           "needs {}",
                           n, ms, bm.k, rule.min_batches);
  else if (trends(bm, rule))
    v.reason = fmt::format("still drifting: the window's batch means trend by {:+.1f}% (t = {:.1f})", 100 * bm.trend,
                           bm.trend_t);
  else if (!uncorrelated)
    v.reason = fmt::format("batch means still correlated (lag-1 {:.2f} with {} batches of {} ms)", bm.lag1, bm.k,
                           bm.b * ms);
  else if (!(v.relative() <= rule.ci_target))
    v.reason = fmt::format("95% confidence half-width {:.1f}% of the mean, above {:.1f}%", 100 * v.relative(),
                           100 * rule.ci_target);
  v.settled = v.reason.empty();
  return v;
}

}  // namespace

int trend_free_start(const std::vector<double>& x, int d, const SettleRule& rule) {
  const int n = static_cast<int>(x.size());
  const int last = n / 2;
  if (d >= last) return d;
  const std::vector<double> y0(x.begin() + d, x.end());
  const int period = find_period(y0, nullptr);
  // Stationary as steps 3 and 4 judge it: batch means without a trend and without lag-1
  // correlation (a slow swing, or what is left of a ramp, the slope test alone misses).
  auto stationary = [&](const std::vector<double>& y) {
    bool uncorrelated = false;
    const Batches bm = choose_batches(y, period, rule.min_batches, &uncorrelated);
    return bm.k < rule.min_batches || (uncorrelated && !trends(bm, rule));
  };
  if (stationary(y0)) return d;
  // One MSER batch at a time: the same resolution the transient was searched at.
  for (int e = d + kMserBatch; e <= last; e += kMserBatch)
    if (stationary(std::vector<double>(x.begin() + e, x.end()))) return e;
  return d;
}

SettleVerdict judge_series(const std::vector<double>& x, const SettleRule& rule, int min_from, bool at_cap) {
  bool drifting = false;
  int d = mser5(x, &drifting);
  d = std::max(d, min_from);
  if (at_cap && !drifting) d = trend_free_start(x, d, rule);
  if (d >= static_cast<int>(x.size())) {
    SettleVerdict v;
    v.transient = d;
    v.from = v.to = static_cast<int>(x.size());
    v.half_width = INFINITY;
    v.reason = "the series ends before the RCU lower bound on the warm-up";
    return v;
  }
  const std::vector<double> y(x.begin() + d, x.end());
  double acf = 0;
  const int p = find_period(y, &acf);
  return verdict_from(y, d, d, p, acf, rule, drifting);
}

SettleVerdict judge_fixed_window(const std::vector<double>& x, int from, const SettleRule& rule) {
  bool drifting = false;
  const int d = mser5(x, &drifting);
  const std::vector<double> y(x.begin() + std::min<std::ptrdiff_t>(from, static_cast<std::ptrdiff_t>(x.size())), x.end());
  double acf = 0;
  const int p = find_period(y, &acf);
  SettleVerdict v = verdict_from(y, from, d, p, acf, rule, drifting || d > from);
  if (!drifting && d > from)
    v.reason = fmt::format("still drifting: MSER-5 puts the transient's end at {} ms, after the {} ms warm-up",
                           d * to_us(rule.step) / 1000.0, from * to_us(rule.step) / 1000.0);
  // What the rule would pick: a warm-up to the transient's end, and a window of enough batches
  // of the size found here for the half-width to reach the target (at least min_batches), from
  // this window's spread: an estimate, since the spread itself is estimated from few batches.
  if (!v.settled && !drifting && d <= from && v.batches >= kMinBatchesToProject && std::isfinite(v.half_width) &&
      v.mean > 0) {
    const double sd_rel = v.half_width / t975(v.batches - 1) * std::sqrt(static_cast<double>(v.batches)) / v.mean;
    const double k = std::ceil(std::pow(t975(rule.min_batches - 1) * sd_rel / rule.ci_target, 2));
    v.suggest_warmup = std::max(d, from);
    v.suggest_window = v.batch * static_cast<int>(std::max<double>(rule.min_batches, std::min(k, 1e6)));
  }
  // The window is the user's, whatever batches the rule would have used inside it.
  v.from = from;
  v.to = static_cast<int>(x.size());
  v.mean = mean_of(y, 0, y.size());
  return v;
}

}  // namespace slubsim
