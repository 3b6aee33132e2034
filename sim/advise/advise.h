// `slubsim advise`: the search over the sheaf knobs, run as sweeps, and its report.
//
// How it searches (decision, 2026-12-03): each task count on its own, since which knob matters
// changes with the load. At one task count, in rounds, each round's settings one sweep:
//   defaults  the kernel's settings. Besides the reference, it shows how many full and empty
//             sheaves each barn held when a limit was checked;
//   ladders   per (cache, knob), the candidate values that simulate differently, in order. Two
//             candidates are one rung when the kernel runs them alike (exact, not a heuristic:
//             the model is deterministic): a written capacity below the kernel's automatic one is
//             raised to it (7.0's calculate_sheaf_capacity), and a barn limit above the most
//             sheaves the barn held at a check under the defaults is never reached (when the
//             default is not reached either). A rung equal to the defaults' is not run;
//   climb     (default) per (cache, knob) a coordinate climb from the default's rung: round 1
//             runs both neighbours, and the climb moves to the better one that beats the
//             current rung beyond both confidence intervals, then one rung further per round
//             in that direction while each beats the last; a tie or a loss ends it. Unsettled
//             points may move a climb (their wider intervals count) but are never picked;
//   grid      (--search grid) every rung of every knob alone, in one round;
//   joint     each cache's knobs at their best (beyond the CIs) written together, when more
//             than one moved: caches that interact (vm_area_struct and maple_node in mmap) are
//             then measured jointly.
// The pick is choose() over every setting run at that task count; then
//   bounds    the pick, the runner-up and the defaults again at each end of the uncertain inputs
//             (AdvisePlan::bounds); a pick another setting beats there is fragile.
// Layout: OUT/tasks-<N>/{defaults,round-<K> or grid,joint,bounds[-budget-<MB>MB]/<bound>}/ (sweep trees)
// and OUT/advice.json, OUT/advice.md. Shard K of N searches the task counts K, K+N, ... (each
// search is sequential, so a task count is the unit of a cluster job); `slubsim merge` joins
// the shards' folders and advise without --shard then writes the report from disk.
#pragma once
#include <array>
#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "sim/advise/choose.h"
#include "sim/run/job.h"
#include "sim/sweep/sweep.h"

namespace slubsim {

struct AdviseRequest {
  JobRequest base;  // one topology, one workload, one kernel; its sysfs / sheaf_capacity unused
  std::string caches;  // "" = every cache the workload uses that has sheaves under the kernel
  std::string capacities = "4,8,16,32,64,128,256";
  std::string max_full = "1,2,4,8,16,32,64";
  std::string max_empty = "1,2,4,8,16,32,64";
  double memory_budget_mb = 0;  // 0 = none
  std::string search = "climb";  // "climb" or "grid"
  bool bounds = true;            // re-run the picks at the uncertain inputs' ends
};

// One end of the uncertain inputs' ranges, as --set overrides on top of the request's.
struct Bound {
  std::string name;  // "estimates-low", "estimates-high", "nonslab-low", "nonslab-high"
  std::vector<std::string> sets;
  std::string what;  // what it moves, for the report
};

// The request checked against the configs, with each cache's kernel defaults and candidates.
// Throws ConfigError("command line", option, ...) for an unknown cache, a cache without sheaves
// under the kernel, an empty or bad value list, several kernels, or a negative budget.
struct AdvisePlan {
  AdviseRequest request;
  std::string kernel;  // the preset's name
  std::vector<CacheKnobs> caches;
  // Per plan cache: each candidate capacity -> the capacity the kernel runs with it written.
  std::vector<std::map<int, int>> capacity_used;
  std::vector<int> nr_tasks;
  // The picks are re-run at each: every latency estimated for the machine (an estimate, or a
  // figure copied from another preset: sim/trust/inputs.h `estimated`) at the low end of its
  // range, then at the high end; the workload's placeholder non-slab times scaled to the smallest
  // and the largest of the fits of this workload (every configs/fits file of it, this machine's
  // among them) and the placeholders themselves (scale 1). Inputs without a range are listed in
  // `fixed`.
  std::vector<Bound> bounds;
  std::vector<std::string> fixed;
};
AdvisePlan resolve_advise(const AdviseRequest& r);

// The folder of one task count's search under OUT: "tasks-<N>".
std::string row_dir(int nr_task);

// One rung of a knob's ladder: the value run and the other candidates that run the same.
struct Rung {
  int value = 0;
  std::vector<int> same;  // candidates simulated by this rung's run (value excluded)
  bool is_default = false;
};
// The ladder of plan cache `cache`'s knob at one task count: its candidates and default grouped
// by what the kernel runs, in order. `seen`: {full, empty} most sheaves the cache's barns held
// at a limit check under the defaults at this task count (-1: never checked).
std::vector<Rung> ladder(const AdvisePlan& plan, std::size_t cache, Knob k, std::array<int, 2> seen);

// Every setting run at one task count, with its outcome, in the order run.
struct RowOutcomes {
  std::vector<Setting> settings;
  std::vector<SettingOutcome> outcomes;
  std::vector<std::vector<std::array<int, 2>>> seen;  // [setting][plan cache] {barn_full_seen, barn_empty_seen}
};

// One (cache, knob)'s climb at one task count.
struct Climb {
  std::size_t cache = 0;
  Knob knob = Knob::SheafCapacity;
  std::vector<Rung> rungs;
  std::size_t home = 0;       // the default's rung
  std::size_t at = 0;         // the rung the climb stands on (its best so far)
  int direction = 0;          // -1 down, +1 up, 0 not chosen yet
  bool done = false;
  std::vector<int> path;      // rung values run, in order
  std::string ended;          // why it stopped, for the report
};

// The search at one task count: what has been run, and the climbs' state.
struct RowSearch {
  int nr_task = 0;
  RowOutcomes run;
  std::vector<std::array<int, 2>> seen;  // per plan cache, under the defaults
  std::vector<Climb> climbs;
  int rounds = 0;
  bool joint_done = false;
};
// After the defaults (run.outcomes[0]) have run: the climbs (or the grid's one round).
void start_search(const AdvisePlan& plan, RowSearch& rs);
// The settings of the next round (none: the climbs have ended); each is new at this task count.
std::vector<Setting> next_round(const AdvisePlan& plan, const RowSearch& rs);
// Record a round's outcomes (in next_round's order) and move the climbs.
void record_round(const AdvisePlan& plan, RowSearch& rs, const RowOutcomes& round);
// The joint setting (each cache's best knobs together) when more than one knob moved and it has
// not been run; empty otherwise.
std::vector<Setting> joint_settings(const AdvisePlan& plan, const RowSearch& rs);
// The settings the bounds re-run at this task count: the pick, the runner-up and the defaults.
std::vector<Setting> settings_to_check(const AdvisePlan& plan, const RowOutcomes& run);

// The sweep of `settings` at one task count (with a bound's overrides when given).
SweepRequest stage_request(const AdvisePlan& plan, const std::vector<Setting>& settings, int nr_task,
                           const Bound* bound = nullptr);
// A finished stage's outcomes, read from its sweep tree.
RowOutcomes read_stage(const AdvisePlan& plan, const Sweep& s, const std::vector<Setting>& settings,
                       const std::string& dir);

// What each bound does at one task count.
struct BoundCheck {
  std::string bound;
  RowOutcomes outcomes;
};

// The report: JSON and a table to paste into a mail. `rows` and `checks` by plan task count
// (checks[row][bound]).
json advice_json(const AdvisePlan& plan, const std::vector<RowSearch>& rows,
                 const std::vector<std::vector<BoundCheck>>& checks);
std::string advice_table(const AdvisePlan& plan, const json& advice);

// The whole search into OUT: the task counts of `shard`, each round of every task count in one
// pool of `jobs` host threads; resumes from what OUT holds. Returns false when interrupted
// (*stop). With one shard it writes OUT/advice.json and OUT/advice.md and puts the table in
// *table.
bool run_advise(const AdvisePlan& plan, const std::string& out, const Shard& shard, int jobs, bool quiet,
                const std::atomic<bool>* stop, std::string* table);

}  // namespace slubsim
