#include "sim/validate/score.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

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

std::optional<double> Totals::record_coverage_pct() const {
  if (record_cells == 0) return std::nullopt;
  return 100.0 * record_covered / record_cells;
}

std::optional<std::array<double, 2>> CellScore::record_interval() const {
  if (!record || !record_half_width || !sim_delta) return std::nullopt;
  return slubsim::record_interval(*sim_delta, *record_half_width, interval ? interval->low : *sim_delta,
                                  interval ? interval->high : *sim_delta);
}

bool CellInterval::undetermined() const {
  auto cls = [](double d) { return d <= -kNoChangeBandPct ? -1 : d >= kNoChangeBandPct ? 1 : 0; };
  return cls(low) != cls(high);
}

Totals totals(const std::vector<const CellScore*>& cells) {
  Totals t;
  std::vector<double> errors, widths, record_widths;
  for (const auto* c : cells) {
    if (c->excluded) {
      ++t.excluded;
      continue;
    }
    ++t.cells;
    if (c->agree) ++t.agree;
    if (c->abs_error_pp) errors.push_back(*c->abs_error_pp);
    if (c->record && c->sim_delta) {
      ++t.record_cells;
      if (const auto r = c->record_interval()) {
        if ((*r)[0] <= c->published_delta && c->published_delta <= (*r)[1]) ++t.record_covered;
        record_widths.push_back((*r)[1] - (*r)[0]);
      } else {
        ++t.record_unbounded;
        ++t.record_covered;
      }
    }
    if (!c->interval) continue;
    ++t.intervals;
    if (c->interval->covers(c->published_delta)) ++t.covered;
    if (c->interval->undetermined()) {
      ++t.undetermined;
      if (c->agree) ++t.undetermined_agree;
    }
    if (!c->interval->reaches(c->published_delta)) ++t.unreached;
    widths.push_back(c->interval->high - c->interval->low);
  }
  t.median_abs_error_pp = median(errors);
  t.median_width_pp = median(widths);
  t.record_median_width_pp = median(record_widths);
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

Sensitivity sensitivity(const std::vector<DeltaPair>& pairs) {
  Sensitivity s;
  s.cells = static_cast<int>(pairs.size());
  if (pairs.empty()) return s;
  std::vector<double> pub, sim, x, y;
  double xy = 0, xx = 0;
  for (const auto& p : pairs) {
    x.push_back(p.published);
    y.push_back(p.simulated);
    pub.push_back(std::fabs(p.published));
    sim.push_back(std::fabs(p.simulated));
    xy += p.published * p.simulated;
    xx += p.published * p.published;
  }
  double mp = *median(pub);
  if (mp > 0) s.ratio = *median(sim) / mp;
  if (xx > 0) s.slope = xy / xx;
  auto ranks = [](std::vector<double> v) {
    std::vector<std::size_t> order(v.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
    std::vector<double> r(v.size());
    for (std::size_t i = 0; i < order.size();) {
      std::size_t j = i;
      while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
      for (std::size_t k = i; k <= j; ++k) r[order[k]] = (static_cast<double>(i + j) / 2.0) + 1.0;
      i = j + 1;
    }
    return r;
  };
  std::vector<double> rx = ranks(x), ry = ranks(y);
  const double n = static_cast<double>(rx.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < rx.size(); ++i) {
    mx += rx[i] / n;
    my += ry[i] / n;
  }
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  if (sxx > 0 && syy > 0) s.spearman = sxy / std::sqrt(sxx * syy);
  return s;
}

std::optional<std::string> comparison_key(const ExperimentCell& cell, const std::vector<int>& nr_task) {
  const std::string& m = cell.metric;
  const std::string prefix = "will-it-scale.";
  std::string row;
  if (m.rfind(prefix, 0) == 0) {
    std::string rest = m.substr(prefix.size());
    auto dot = rest.find('.');
    bool numbered = dot != std::string::npos && dot > 0 &&
                    std::all_of(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(dot),
                                [](char ch) { return ch >= '0' && ch <= '9'; });
    if (numbered) {
      std::string kind = rest.substr(dot + 1);
      if (kind != "processes" && kind != "threads") return std::nullopt;  // processes_idle
      row = rest.substr(0, dot);
    } else if (rest == "per_process_ops" || rest == "per_thread_ops" || rest == "workload") {
      row = nr_task.size() == 1 ? std::to_string(nr_task[0]) : "rows";
    } else {
      return std::nullopt;
    }
  } else if (m.find("ops") != std::string::npos) {
    row = m;  // another benchmark's ops metric: a comparison of its own
  } else {
    return std::nullopt;
  }
  return cell.baseline + ">" + cell.test + "@" + row;
}

bool stack_matches(const std::string& folded, const ProfileRow& row) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    auto semi = folded.find(';', start);
    parts.push_back(folded.substr(start, semi == std::string::npos ? std::string::npos : semi - start));
    if (semi == std::string::npos) break;
    start = semi + 1;
  }
  const std::string& cls = parts.back();
  if (!row.lock.empty() &&
      (cls.size() < row.lock.size() || cls.compare(cls.size() - row.lock.size(), row.lock.size(), row.lock) != 0))
    return false;
  const std::size_t frames = parts.size() - 1;  // the lock class is last
  if (!row.in.empty() && (frames == 0 || parts[frames - 1] != row.in)) return false;
  for (std::size_t i = 0; i < frames; ++i)
    if (std::find(row.not_under.begin(), row.not_under.end(), parts[i]) != row.not_under.end()) return false;
  std::size_t k = 0;
  for (std::size_t i = 0; i < frames && k < row.under.size(); ++i)
    if (parts[i] == row.under[k]) ++k;
  return k == row.under.size();
}

double profile_share(const json& stats, int nr_task, const ProfileRow& row) {
  const std::string prefix = "why." + std::to_string(nr_task) + ".spin.";
  const std::string suffix = ".percent";
  double sum = 0;
  for (auto it = stats.begin(); it != stats.end(); ++it) {
    const std::string& k = it.key();
    if (k.size() <= prefix.size() + suffix.size() || k.rfind(prefix, 0) != 0 ||
        k.compare(k.size() - suffix.size(), suffix.size(), suffix) != 0 || !it->is_number())
      continue;
    std::string folded = k.substr(prefix.size(), k.size() - prefix.size() - suffix.size());
    if (stack_matches(folded, row)) sum += it->get<double>();
  }
  return sum;
}

ProfileTotals profile_totals(const std::vector<const ProfileRowScore*>& rows) {
  ProfileTotals t;
  std::vector<double> errors;
  for (const auto* r : rows)
    if (auto e = r->error_pp()) {
      ++t.rows;
      errors.push_back(std::fabs(*e));
    }
  t.median_abs_error_pp = median(errors);
  return t;
}

CounterTotals counter_totals(const std::vector<const CounterScore*>& rows) {
  // A reporting floor, not a model figure: a simulated zero is a factor of 1000 off.
  constexpr double kFloor = 1e-3;
  CounterTotals t;
  std::vector<double> factors;
  for (const auto* r : rows)
    if (auto q = r->ratio()) {
      ++t.rows;
      const double x = std::max(*q, kFloor);
      factors.push_back(std::max(x, 1.0 / x));
    }
  t.median_factor = median(factors);
  return t;
}

// The kind of comparison of every cell, from its variants' kernels (the same preset name: a knob
// within one kernel) and trees; then each cell's record half-width, left one table out, from the
// scored cells of every experiment's best topology (sim/trust/conformal.h); then each topology's
// totals again, with the record.
static void assign_record(Scoreboard& b) {
  for (auto& e : b.experiments) {
    std::map<std::string, std::string> kernel_of;
    for (const auto& v : e.experiment->variants) kernel_of[v.name] = v.kernel;
    for (auto& t : e.topologies)
      for (auto& c : t.cells)
        c.kind = c.cell->across_releases                                   ? ComparisonKind::AcrossReleases
                 : kernel_of[c.cell->baseline] == kernel_of[c.cell->test] ? ComparisonKind::Knob
                                                                           : ComparisonKind::WithinTree;
  }
  b.residuals.clear();
  for (const auto& e : b.experiments) {
    if (e.topologies.empty()) continue;
    for (const auto& c : e.topologies[e.best].cells)
      if (!c.excluded && c.abs_error_pp) b.residuals.push_back({e.experiment->id, c.kind, *c.abs_error_pp});
  }
  for (auto& e : b.experiments)
    for (auto& t : e.topologies)
      for (auto& c : t.cells) {
        if (c.excluded || !c.sim_delta) continue;
        c.record = true;
        c.record_half_width = record_half_width(b.residuals, e.experiment->id, c.kind);
      }
  for (auto& e : b.experiments)
    for (auto& t : e.topologies) t.totals = totals(t.cells);
}

Scoreboard make_scoreboard(std::vector<ExperimentScore> experiments) {
  Scoreboard b;
  b.experiments = std::move(experiments);
  for (auto& e : b.experiments) finish(e);  // the best topology, whose cells the record is made of
  assign_record(b);
  std::vector<const CellScore*> cal, seed, cal_all, seed_all;
  for (auto& e : b.experiments) {
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
  auto within_only = [](const std::vector<const CellScore*>& cells) {
    std::vector<const CellScore*> out;
    for (const CellScore* c : cells)
      if (!c->cell->across_releases) out.push_back(c);
    return out;
  };
  std::vector<const CellScore*> knob, kernels;
  for (const CellScore* c : within) (c->kind == ComparisonKind::Knob ? knob : kernels).push_back(c);
  b.knob = totals(knob);
  b.within_tree_kernels = totals(kernels);
  b.within_tree_calibration = totals(within_only(cal));
  b.within_tree_seeds = totals(within_only(seed));
  // Sensitivity over throughput comparisons, each once, on each experiment's best topology.
  std::vector<DeltaPair> sens_all, sens_within, sens_across, sens_within_cal, sens_within_seed;
  for (const auto& e : b.experiments) {
    if (e.topologies.empty()) continue;
    const auto& t = e.topologies[e.best];
    std::vector<std::string> seen;
    for (const auto& c : t.cells) {
      if (c.excluded || !c.sim_delta) continue;
      auto key = comparison_key(*c.cell, t.nr_task);
      if (!key || std::find(seen.begin(), seen.end(), *key) != seen.end()) continue;
      seen.push_back(*key);
      DeltaPair p{c.published_delta, *c.sim_delta};
      sens_all.push_back(p);
      (c.cell->across_releases ? sens_across : sens_within).push_back(p);
      if (!c.cell->across_releases)
        (e.experiment->calibration_set ? sens_within_cal : sens_within_seed).push_back(p);
    }
  }
  std::vector<const ProfileRowScore*> fitted, predicted;
  for (const auto& e : b.experiments) {
    if (e.topologies.empty()) continue;
    for (const auto& p : e.topologies[e.best].profiles)
      for (const auto& r : p.rows) (p.fitted ? fitted : predicted).push_back(&r);
  }
  b.profiles_fitted = profile_totals(fitted);
  b.profiles_predicted = profile_totals(predicted);
  std::vector<const CounterScore*> c_fitted, c_predicted;
  for (const auto& e : b.experiments) {
    if (e.topologies.empty()) continue;
    for (const auto& c : e.topologies[e.best].counters) (c.fitted ? c_fitted : c_predicted).push_back(&c);
  }
  b.counters_fitted = counter_totals(c_fitted);
  b.counters_predicted = counter_totals(c_predicted);
  b.sens_overall = sensitivity(sens_all);
  b.sens_within_tree = sensitivity(sens_within);
  b.sens_across_releases = sensitivity(sens_across);
  b.sens_within_tree_calibration = sensitivity(sens_within_cal);
  b.sens_within_tree_seeds = sensitivity(sens_within_seed);
  b.calibration_all = totals(cal_all);
  b.seeds_all = totals(seed_all);
  b.overall_all = totals(join(cal_all, seed_all));
  return b;
}

}  // namespace slubsim
