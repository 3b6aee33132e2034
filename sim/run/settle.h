// The settle rule: from a run's series of operations per interval, where the transient ends and
// whether the mean after it is known well enough. A result is the long-run mean with its 95%
// confidence interval, measured over a window the rule chooses (docs/design.md, Settled windows):
//
//  1. Transient: MSER-5 (White 1997; Hoad, Robinson & Davies 2010). The series is cut into
//     batches of five intervals; the truncation point d (a batch edge in the first half, and no
//     earlier than the RCU lower bound) minimises the squared standard error of the mean of what
//     follows, sum((z_j - mean)^2) / (k - d)^2. An optimum at the end of the allowed half says
//     the series still drifts. At the cap only, where the batch means after d still trend or
//     correlate (step 3/4's tests), the cut moves on, one MSER batch at a time up to n/2, to the
//     first edge after which they do not: a slow transient under loud swings, which MSER's
//     statistic cannot tell from noise (trend_free_start). Before the cap such a series runs on:
//     a cut moved early makes a short window look settled before a later fall shows.
//  2. Cycles: the autocorrelation of the series after d, up to lag n/4. Its first local maximum
//     at lag p >= 2 that reaches kPeriodAcf, again at 2p, while the autocorrelation half a period
//     apart is at most kPeriodTrough, is a period of p intervals (an oscillation, e.g. list_lock
//     storms after each grace period's frees).
//  3. Batch means with a fixed number of batches (Schmeiser 1982): 20 when the series allows, at
//     least min_batches, each a whole number of periods when there is one, and their lag-1
//     autocorrelation under kMaxLag1; the window is the last k whole batches. Half-width =
//     t(0.975, k-1) * sd(batch means) / sqrt(k).
//  4. Settled when the batch means show no trend (no line through them that changes by more
//     than ci_target across the window with a slope outside its 95% interval: a transient
//     slower than MSER could see), the half-width is within ci_target of the mean, and both
//     still hold when the run has doubled (the runner's confirmation: a transient slower than
//     the run so far shows as a drift or a wider interval on the doubled series).
#pragma once
#include <string>
#include <vector>

#include "models/time.h"

namespace slubsim {

// The series' interval: half the default grace period (configs/costs/default.json
// rcu.grace_period_us, 4 ms), so a cycle driven by grace periods (8 ms and longer) is resolved;
// and the fewest intervals a cap may hold (a judgement needs min_batches of them after the
// RCU lower bound).
inline constexpr Time kSettleStep = 2 * kMs;
inline constexpr int kMinSettleIntervals = 20;

struct SettleRule {
  double ci_target = 0.02;  // 95% half-width / mean
  Time step = 0;            // length of one interval of the series
  Time cap = 0;             // at most this much simulated time; then the point is unsettled
  Time min_warmup = 0;      // the window starts no earlier (the RCU lower bound)
  int min_batches = 10;
};

struct SettleVerdict {
  bool settled = false;
  int from = 0, to = 0;      // the window, in intervals [from, to)
  double mean = 0;           // operations per interval over the window
  double half_width = 0;     // 95% confidence half-width of the mean, same unit
  int batch = 0;             // intervals per batch
  int batches = 0;
  int transient = 0;         // MSER truncation, in intervals
  int period = 0;            // intervals; 0 = no cycle found
  double period_acf = 0;     // autocorrelation at that lag
  std::string reason;        // why not settled ("" when settled)
  // A fixed window that is not settled: the warm-up and window (intervals) the rule would want,
  // estimated from this window's series (0: no estimate).
  int suggest_warmup = 0, suggest_window = 0;
  double relative() const { return mean > 0 ? half_width / mean : (half_width > 0 ? 1e9 : 0); }
};

// Judge a series x (operations per interval, interval i = [i step, (i+1) step)); min_from is the
// first interval the window may start at. at_cap: the run can go no further, so the cut may move
// past a slow ramp (step 1, trend_free_start); before the cap a ramp keeps the run going.
SettleVerdict judge_series(const std::vector<double>& x, const SettleRule& rule, int min_from, bool at_cap = false);

// Judge a window fixed by the user: x is the whole series up to the window's end, the window
// starts at interval `from`. Says whether the transient outlasts the warm-up, whether the
// window cycles, is too short to tell, or too noisy, and the half-width it has.
SettleVerdict judge_fixed_window(const std::vector<double>& x, int from, const SettleRule& rule);

// Student's t quantile at 0.975 with df degrees of freedom (a Cornish-Fisher expansion, within
// 0.2% for df >= 5).
double t975(int df);

// MSER-5 truncation point (in intervals) of x, searched over batch edges in [0, n/2];
// `drifting` is set when the optimum is at the end of that range.
int mser5(const std::vector<double>& x, bool* drifting);

// A transient slower than MSER-5 could see under the series' noise: from d, the first MSER batch
// edge in [d, n/2] after which the batch means no longer trend (step 4's test), as a bias test
// applied after successive truncations does (Schruben, Singh & Tierney 1983; N-Skart, Tafazzoli
// & Steiger 2011). d itself when the series after it does not trend or no such edge exists.
int trend_free_start(const std::vector<double>& x, int d, const SettleRule& rule);

// Autocorrelation of x at lags 1..max_lag (index 0 is lag 0 = 1).
std::vector<double> autocorrelation(const std::vector<double>& x, int max_lag);

// The period of x in intervals (0: none), and the autocorrelation at it.
int find_period(const std::vector<double>& x, double* acf_at);

}  // namespace slubsim
