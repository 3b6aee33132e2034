// `slubsim advise`: the search over the sheaf knobs as sweeps, and its report.
//
// How it searches (decision, 2026-12-03): in stages, each one sweep (sim/sweep/sweep.h), so
// each has a plan, shards and resumes as `slubsim sweep` does.
//   stage 0  the kernel's defaults at every task count. Besides the reference, it shows how many
//            full and empty sheaves each barn held when a limit was checked: a limit above that
//            was never reached, so every value above it runs exactly the defaults' simulation
//            and is not run again (exact, not a heuristic: the model is deterministic);
//   stage 1  every other (cache, knob, value) alone on top of the defaults (one_at_a_time): it
//            shows which knobs matter at which task count;
//   stage 2  per task count, each cache's knobs at their stage-1 best (a value kept only where it
//            beat the defaults beyond both confidence intervals) written together: caches that
//            interact (vm_area_struct and maple_node in mmap) are then measured jointly.
// The recommendation at each task count is choose() over every setting run at that count.
//   bounds   per task count the pick, the runner-up and the defaults again at each end of the
//            uncertain inputs (AdvisePlan::bounds); a pick another setting beats there is fragile.
// Output: OUT/stage0/, OUT/stage1/, OUT/stage2/, OUT/bounds[-budget-<MB>MB]/<bound>/ (sweep trees),
// OUT/advice.json and OUT/advice.md.
#pragma once
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
};

// The request checked against the configs, with each cache's kernel defaults and candidates.
// Throws ConfigError("command line", option, ...) for an unknown cache, a cache without sheaves
// under the kernel, an empty or bad value list, several kernels, or a negative budget.
// One end of the uncertain inputs' ranges, as --set overrides on top of the request's.
struct Bound {
  std::string name;  // "estimates-low", "estimates-high", "nonslab-low", "nonslab-high"
  std::vector<std::string> sets;
  std::string what;  // what it moves, for the report
};
struct AdvisePlan {
  AdviseRequest request;
  std::string kernel;  // the preset's name
  std::vector<CacheKnobs> caches;
  std::vector<int> nr_tasks;
  // The picks are re-run at each: every latency the preset marks as an estimate at the low end
  // of the range its source states, then at the high end; the workload's placeholder non-slab
  // times scaled to the smallest and the largest of the calibration fits of this workload and
  // the placeholders themselves (scale 1). Inputs without a stated range are listed in `fixed`.
  std::vector<Bound> bounds;
  std::vector<std::string> fixed;
};
AdvisePlan resolve_advise(const AdviseRequest& r);

// The sweep that runs these settings (the first is the kernel's defaults when `settings` starts
// with an empty Setting) at every task count of the plan.
SweepRequest stage_request(const AdvisePlan& plan, const std::vector<Setting>& settings);

// Every setting's outcome at one task count, read from a finished stage's sweep tree.
struct StageOutcomes {
  std::vector<Setting> settings;
  std::vector<std::vector<SettingOutcome>> by_row;  // [row][setting]
  // [row][setting][plan cache]: {barn_full_seen, barn_empty_seen} (CacheReport)
  std::vector<std::vector<std::vector<std::array<int, 2>>>> seen;
};
StageOutcomes read_stage(const AdvisePlan& plan, const Sweep& s, const std::vector<Setting>& settings,
                         const std::string& dir);

// From stage 0 (the defaults): per plan cache the most full and empty sheaves a barn held at a
// limit check, over every task count; and the rule that leaves out barn limits above them.
std::vector<std::array<int, 2>> barn_seen(const StageOutcomes& stage0);
SameRun same_as_defaults(const AdvisePlan& plan, const std::vector<std::array<int, 2>>& seen);

// Stage 2's settings from stage 1's outcomes: one per task count (duplicates and settings
// already run left out).
std::vector<Setting> stage2_settings(const AdvisePlan& plan, const StageOutcomes& stage1);

// The settings whose picks the bounds re-run: per task count the pick, the runner-up and the
// defaults, without repeats, in `all`'s order.
std::vector<Setting> settings_to_check(const AdvisePlan& plan, const StageOutcomes& all);
// The sweep of `settings` at one bound.
SweepRequest bound_request(const AdvisePlan& plan, const Bound& b, const std::vector<Setting>& settings);
// Per task count, what each bound does to the pick.
struct BoundCheck {
  std::string bound;
  StageOutcomes outcomes;
};

// The report: JSON and a table to paste into a mail.
json advice_json(const AdvisePlan& plan, const StageOutcomes& all, const std::vector<std::array<int, 2>>& seen,
                 const std::vector<BoundCheck>& checks);
std::string advice_table(const AdvisePlan& plan, const json& advice);

}  // namespace slubsim
