// Experiment files (configs/experiments/<id>.json, docs/experiment-format.md): one published
// table that slubsim can model, as variants to simulate and published cells to score. Parsed
// and checked here, before anything runs; every error names the file and the field.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/config.h"

namespace slubsim {

// A machine an experiment runs on. Rows other than the experiment's (nr_task) when the preset has
// fewer CPUs than the published task counts; the scoreboard shows the note.
struct ExperimentTopology {
  std::string name;
  std::vector<int> nr_task;  // the rows on this machine
  std::string note;
};

struct ExperimentVariant {
  std::string name;
  std::string label;
  std::string kernel;
  // The source tree the measured kernel was built from ("v6.17-rc3", "v6.19-rc5"): given for
  // every variant or none. A cell across two trees also carries every non-slab change between
  // them, which the model does not simulate (it keeps the baseline's non-slab time).
  std::string tree;
  bool baseline = false;  // "role": "baseline": the state a fit may be made on
  std::vector<std::string> patches;
  std::string sheaf_capacity;  // one --sheaf-capacity setting, "" = the kernel's own
  std::vector<std::string> sets;
  std::string excluded;  // non-empty: not simulated (why); only excluded cells may name it
  std::string field;     // "variants[i]", for messages
};

// VALIDATION.md class 4: the workload's non-slab time, scaled by one factor, fitted on the
// baseline variant at the lowest task count only.
// Whether a fit's metric makes it a pin (a profile share, why.<N>.spin.percent) rather than a fit
// on throughput: the one test every part of validate uses.
inline bool is_pin_metric(const std::string& metric) { return metric.rfind("why.", 0) == 0; }

// A second derivation printed beside a pin (VALIDATION.md): another experiment's calibration fit
// of the same workload parameters on a machine whose hardware stands in for this one's.
struct FitCrossCheck {
  std::string experiment, topology;
  std::string note;  // why that fit is a derivation from hardware facts, and what it is not
};

struct ExperimentFit {
  std::vector<std::string> parameters;  // workload $parameters scaled together
  std::string variant;
  int nr_task = 0;
  std::string metric;
  double published = 0;
  std::string note;
  std::vector<FitCrossCheck> cross_check;  // pins only
  // A pin (VALIDATION.md): fitted on a profile share of the baseline (why.<N>.spin.percent) at the
  // task count where it was published, for a table that publishes no absolute value.
  bool pin() const { return is_pin_metric(metric); }
};

// For an experiment with no published absolute (seed checks, delta-only tables): the non-slab
// time of a class-4 fit of another experiment of the calibration set, on one of its topologies,
// derived once without this experiment's numbers (VALIDATION.md: "a non-slab time they need is
// derived once without them and recorded"). Only the workload parameters are borrowed.
struct BorrowedFit {
  std::string experiment;
  std::string topology;
  std::string note;  // how it was chosen
};

// One published comparison: test variant against baseline variant on one metric.
struct ExperimentCell {
  std::string metric;  // a key of stats.json
  std::string baseline, test;
  std::optional<double> published_baseline, published_test;
  double published_delta_pct = 0;  // as published: of the published metric (a time if lower_is_better)
  bool noise = false;              // the author calls it noise: "no change"
  bool lower_is_better = false;    // the published metric is a time; ops/s ~ 1 / time
  std::string excluded;            // non-empty: listed, not scored (why)
  bool across_releases = false;    // its two variants name different source trees
  std::string note;
  std::string source;
  std::string field;  // "cells[i]", for messages
  // The published change in throughput terms, comparable with the simulated delta of `metric`:
  // the printed delta, or (baseline / test - 1) * 100 for a time.
  double published_effective_delta() const;
};

// One row of a published perf profile that the why report can name: the share of CPU cycles
// spent in native_queued_spin_lock_slowpath under a call chain (VALIDATION.md, "Profiles").
struct ProfileRow {
  std::string row;     // the published row, as text
  double published = 0;  // % of cycles
  std::string share;   // "children" or "self", as published (spin is a leaf: both are its time)
  // The kernel functions the spin must be under, outermost first (a subsequence of the folded
  // stack; empty with no `in` = all spin); `in` (optional) the function that took the lock (the
  // innermost frame); `not_under` functions that must not be on the stack (perf's direct caller
  // chains: "__slab_free <- kmem_cache_free <- rcu_do_batch" excludes the sheaf flushes'
  // __kmem_cache_free_bulk); `lock` (optional) a suffix the lock class must end with.
  std::vector<std::string> under;
  std::string in;
  std::vector<std::string> not_under;
  std::string lock;
  std::string field;
};

// A published profile of one state at one task count.
struct ExperimentProfile {
  std::string variant;
  int nr_task = 0;
  std::string source;
  std::string note;
  std::vector<ProfileRow> rows;
  std::string field;
};

// A published counter of one state at one task count (lkp's proc-vmstat or perf-stat rows,
// derived to a rate the model reports): compared as a ratio, simulated / published.
struct ExperimentCounter {
  std::string variant;
  // The rows the published figure covers: one task count, or several for a whole-job counter
  // (lkp's time.* over runtest.py's runs of equal length), scored as their task-weighted mean.
  std::vector<int> nr_task;
  std::string row;   // what was published, as text
  std::string key;   // the stats.json key with "{N}" for the task count
  double published = 0;
  std::string source;
  std::string note;
  std::string field;
  std::string stats_key(int n) const;  // key with {N} replaced by n
  std::string tasks_text() const;      // "64" or "64+128+192"
  std::string shown_key() const;       // the stats key of one row, or the key with {N} for several
};

// The stats.json rates a counter may name, {N} for the task count; the ones that are per task
// and second, which alone may be taken over several rows.
const std::vector<std::string>& counter_keys();
bool counter_key_per_task(const std::string& key);

// How a window reads in reports: "window 12ms after 150ms warm-up", or the settle rule's.
std::string window_text(const std::string& duration, const std::string& warmup);

struct Experiment {
  std::string file;
  std::string id, table, title, source;
  bool calibration_set = true;
  std::vector<ExperimentTopology> topologies;
  std::string workload, mode;
  std::vector<int> nr_task;
  std::string duration, warmup;  // both "" = the settle rule chooses each point's window
  std::string settle_cap;        // "" = run's default
  int runs = 1;
  std::uint64_t seed = 1;
  std::vector<std::string> sets;
  std::optional<ExperimentFit> fit;
  std::optional<BorrowedFit> fit_from;
  std::vector<ExperimentVariant> variants;
  std::vector<ExperimentCell> cells;
  std::vector<ExperimentProfile> profiles;
  std::vector<ExperimentCounter> counters;
  std::vector<std::string> notes;

  const ExperimentVariant* variant(const std::string& name) const;
  const ExperimentVariant& baseline() const;  // the one variant with role baseline
};

// Parse and check one experiment. `file` names it in errors; its stem must be the id.
Experiment parse_experiment(const json& doc, const std::string& file);
Experiment load_experiment(const std::string& file);
// Every *.json in dir (sorted by name), or the one FILE; `only` = "" or "ID[,ID]" selects.
// Every file found is parsed and checked, selected or not.
std::vector<Experiment> load_experiments(const std::string& dir_or_file, const std::string& only);

}  // namespace slubsim
