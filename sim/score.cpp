#include "sim/score.h"

#include <algorithm>
#include <cmath>

namespace slubsim {

std::optional<double> delta_pct(double base, double test) {
  if (base == 0) return std::nullopt;
  return (test - base) / base * 100.0;
}

CellScore score_cell(const ExperimentCell& cell, double sim_baseline, double sim_test) {
  CellScore s;
  s.cell = &cell;
  s.published_delta = cell.published_effective_delta();
  s.no_change = cell.noise || std::fabs(s.published_delta) < kNoChangeBandPct;
  s.sim_baseline = sim_baseline;
  s.sim_test = sim_test;
  s.sim_delta = delta_pct(sim_baseline, sim_test);
  if (s.sim_delta) {
    double d = *s.sim_delta;
    // The sign is ternary: -, "no change" (inside the band) or +, on both sides. A simulated
    // +0.5% against a published +30% is "no change" against a change: no agreement.
    bool sim_no_change = std::fabs(d) < kNoChangeBandPct;
    s.agree = s.no_change ? sim_no_change : !sim_no_change && d * s.published_delta > 0;
    s.abs_error_pp = std::fabs(d - s.published_delta);
  }
  return s;
}

CellScore excluded_cell(const ExperimentCell& cell) {
  CellScore s;
  s.cell = &cell;
  s.excluded = true;
  s.published_delta = cell.published_effective_delta();
  s.no_change = cell.noise || std::fabs(s.published_delta) < kNoChangeBandPct;
  return s;
}

std::optional<double> median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

std::optional<double> Totals::agree_pct() const {
  if (cells == 0) return std::nullopt;
  return 100.0 * agree / cells;
}

Totals totals(const std::vector<const CellScore*>& cells) {
  Totals t;
  std::vector<double> errors;
  for (const auto* c : cells) {
    if (c->excluded) {
      ++t.excluded;
      continue;
    }
    ++t.cells;
    if (c->agree) ++t.agree;
    if (c->abs_error_pp) errors.push_back(*c->abs_error_pp);
  }
  t.median_abs_error_pp = median(errors);
  return t;
}

Totals totals(const std::vector<CellScore>& cells) {
  std::vector<const CellScore*> p;
  for (const auto& c : cells) p.push_back(&c);
  return totals(p);
}

void finish(ExperimentScore& s) {
  s.best = 0;
  for (std::size_t i = 0; i < s.topologies.size(); ++i) {
    auto& t = s.topologies[i];
    t.totals = totals(t.cells);
    const auto& best = s.topologies[s.best].totals.median_abs_error_pp;
    const auto& mine = t.totals.median_abs_error_pp;
    // Lowest median abs error; a topology with no scorable cell never wins; ties: the first listed.
    if (mine && (!best || *mine < *best)) s.best = i;
  }
}

Scoreboard make_scoreboard(std::vector<ExperimentScore> experiments) {
  Scoreboard b;
  b.experiments = std::move(experiments);
  std::vector<const CellScore*> cal, seed, cal_all, seed_all;
  for (auto& e : b.experiments) {
    finish(e);
    bool c = e.experiment->calibration_set;
    for (std::size_t i = 0; i < e.topologies.size(); ++i)
      for (const auto& cell : e.topologies[i].cells) {
        (c ? cal_all : seed_all).push_back(&cell);
        if (i == e.best) (c ? cal : seed).push_back(&cell);
      }
  }
  auto join = [](std::vector<const CellScore*> a, const std::vector<const CellScore*>& b2) {
    a.insert(a.end(), b2.begin(), b2.end());
    return a;
  };
  b.calibration = totals(cal);
  b.seeds = totals(seed);
  b.overall = totals(join(cal, seed));
  std::vector<const CellScore*> within, across;
  for (const CellScore* c : join(cal, seed)) (c->cell->across_releases ? across : within).push_back(c);
  b.within_tree = totals(within);
  b.across_releases = totals(across);
  b.calibration_all = totals(cal_all);
  b.seeds_all = totals(seed_all);
  b.overall_all = totals(join(cal_all, seed_all));
  return b;
}

}  // namespace slubsim
