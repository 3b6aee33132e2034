// A job: everything one invocation of `slubsim run` asks for, resolved and validated before
// anything runs. Axes that multiply into separate results (kernel, sheaf capacity) make
// "variants"; task counts are rows of one result, as in one will-it-scale job; runs repeat.
#pragma once
#include <atomic>
#include <variant>
#include <cstdint>
#include <optional>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/config/config.h"
#include "sim/config/costs.h"
#include "sim/config/kernel.h"
#include "sim/machine/machine.h"
#include "sim/run/runner.h"
#include "sim/run/slub_config.h"
#include "workloads/program.h"
#include "workloads/trace.h"

namespace slubsim {

// The task counts when --nr-task is not given: run's (and a sweep's), and advise's. They are meant
// for any machine: on a small one a percentage of them gives 0 tasks or a count listed before it
// (25% of 4 CPUs is 1) and is left out. A list given as --nr-task is taken as given.
inline constexpr const char* kDefaultNrTask = "1,25%,50%,100%";
inline constexpr const char* kAdviseDefaultNrTask = "25%,50%,75%";
inline constexpr const char* kDefaultKernel = "v6.17";

// What the command line says, before files are read.
struct JobRequest {
  std::string topology = "amd-turin-2s-512t";
  bool stacks = false;  // folded stacks of all task time per point (--why)
  std::string workload = "mmap2";  // NAME, FILE, trace:FILE or ftrace:FILE (default: the seeds' will-it-scale mmap2)
  std::string trace_map = "replicated";    // replicated or mapped (trace workloads)
  std::string trace_speed = "1";           // trace timestamps divided by this; 0 = no waiting
  std::string costs = "default";
  std::string caches = "default";
  bool validate = false;
  std::string mode = "process";
  std::string nr_task = kDefaultNrTask;
  std::string kernel = kDefaultKernel;
  // --kernel was not given: the job runs the default kernel. Only messages say so; no result
  // depends on it (not a request field).
  bool kernel_defaulted = false;
  std::string sheaf_capacity;  // "" = the kernel's own
  std::string sysfs;           // --sysfs: CACHE/KNOB=N writes of the sheaf knobs ("" = none)
  // --baseline: what each variant's delta is against: "first" (the job's first variant) or
  // "kernel" (the same kernel at its own settings, added to the job when the axis lacks them).
  std::string baseline = "first";
  std::vector<std::string> sets;
  std::vector<std::string> patches;  // "+NAME" / "-NAME" on top of every kernel preset
  int runs = 1;
  std::uint64_t seed = 1;
  // "" (both): the settle rule chooses warm-up and window per point (sim/run/settle.h). Either
  // given fixes the window; the other is then kFixedDuration / kFixedWarmup.
  std::string duration;
  std::string warmup;
  std::string settle_ci = "2%";   // target 95% half-width of the mean
  std::string settle_cap = "1s";  // simulated time a point may take to settle
  std::string interval;  // "" = no interval series
  int jobs = 0;  // 0 = one per host CPU
  std::string home;  // where configs/ and workloads/ are
};

// Every JobRequest field a job's results depend on, once, in the order job descriptions list them
// (sim/run/point_store.h): its key in sweep files and descriptions, its `slubsim run` option and
// that option's --help line. The description, the sweep file reader, the sweep plan's per-point
// arguments and the job options of run, sweep, advise and inputs (sim/cli/cli.cpp) walk this
// list; a test checks that `run` takes every option named here. `jobs` and `home` are not in it:
// they do not change a result.
struct RequestField {
  using Member = std::variant<std::string JobRequest::*, bool JobRequest::*, int JobRequest::*,
                              std::uint64_t JobRequest::*, std::vector<std::string> JobRequest::*>;
  const char* key;
  const char* option;  // nullptr: no option of its own (stacks: --why with --out)
  Member member;
  const char* list_join = nullptr;  // a list in sweep files, joined by this into the option's form
  bool listed_when_default = true;  // false: in a description only when set, so older stores keep theirs
  bool in_sweep_files = true;
  // The option's place among the job options in --help (they are listed in their own order, not
  // this list's), and its help text. A string option shows its default when JobRequest has one.
  int help_place = 0;
  const char* help = nullptr;
};
const std::vector<RequestField>& request_field_list();

// A fixed window's other half when only one of --warmup / --duration is given (the window the
// experiments used before the settle rule).
inline constexpr const char* kFixedWarmup = "20ms";
inline constexpr const char* kFixedDuration = "12ms";

// One value of the --sheaf-capacity axis ("64": every sheaf cache, or "maple_node=64,...") or of
// the --sysfs axis ("maple_node/sheaf_capacity=64,maple_node/max_full_sheaves=20").
struct CapacitySetting {
  std::string text;  // as given, "" = kernel default
  SheafKnobs knobs;
  bool sysfs = false;  // given as --sysfs
  std::string option() const { return sysfs ? "--sysfs" : "--sheaf-capacity"; }
  // What the variant's label adds to the kernel's name ("" for the kernel default).
  std::string label_suffix() const;
};

struct Variant {
  Kernel kernel;
  CapacitySetting capacity;
  std::string label;  // kernel, plus the capacity when one is set
  std::string kernel_arg;  // the --kernel item it came from (a preset name or a file)
};

struct Job {
  JobRequest request;
  Machine machine;
  Costs costs;
  SlubCostConfig slub_costs;
  std::vector<slub::CacheSpec> caches;
  Program program;  // for a trace: no steps, the trace's caches
  std::shared_ptr<const Trace> trace;  // --workload trace:FILE / ftrace:FILE
  TraceReplay replay;
  Mode mode = Mode::Process;
  std::vector<int> nr_tasks;
  std::vector<Variant> variants;
  // Per variant, the variant its delta is against (--baseline); itself: it has none.
  std::vector<std::size_t> baseline_of;
  Time duration = 0, warmup = 0;  // the fixed window (settle off)
  bool settle = true;              // the settle rule chooses the window
  SettleRule settle_rule;          // its target, cap, step and RCU lower bound
  Time interval = 0;  // 0 = no interval series
  std::vector<std::pair<std::string, std::string>> inputs;  // (role, file) of every file read
  std::vector<std::string> notes;  // what the job did with its request (printed on stderr)
  // configs/fits files of this workload on this machine (their file names), for the table's note
  // when the non-slab time is a placeholder.
  std::vector<std::string> fits_here;
};

// Per variant, the variant its delta is against: the first (per_kernel false), or the variant of
// the same --kernel item at the kernel's own settings (itself when there is none).
std::vector<std::size_t> baselines(const std::vector<Variant>& variants, bool per_kernel);

// Variant v's baseline in a job (the first where the job has no baseline_of, as a job made by
// hand in a test).
inline std::size_t baseline_variant(const Job& job, std::size_t v) {
  return v < job.baseline_of.size() ? job.baseline_of[v] : 0;
}

// Read and check every input. Throws ConfigError on the first problem, and for a variant whose
// simulated state (estimate_state) would exceed kMaxStateBytes.
Job resolve_job(const JobRequest& req);

// Host bytes of a point's fixed simulated state, by part (see estimate_state in job.cpp).
struct StateEstimate {
  double cpus = 0;   // tasks, kmem_cache_cpu and per-CPU sheaves with their objects
  double nodes = 0;  // kmem_cache_node and barns at their limits
  double pages = 0;  // the page allocator's per-CPU lists, node x node tables
  double total() const { return cpus + nodes + pages; }
};
StateEstimate estimate_state(const Job& job, const Variant& v);

// The sheaf capacity of each cache the program uses that has sheaves in variant v, as the model
// sets it (models/slub/slub.cpp): the kernel's or --sheaf-capacity's explicit value, or 7.0's
// calculate_sheaf_capacity (automatic: the rule chose or raised it).
struct SheafCapacity {
  std::string cache;
  std::uint32_t capacity = 0;
  bool automatic = false;
};
std::vector<SheafCapacity> sheaf_capacities(const Job& job, const Variant& v);
// A host-side ceiling, not a model parameter: a point that needs more is refused up front.
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kMaxStateBytes = 32 * kGiB;

// Whether the warm-up and window are long enough for RCU to settle, as one line per problem
// (empty when they are). RCU settles in three grace periods: a callback queued at the start is
// invoked after at most two (call_rcu waits for the end of the next period), and the frees of
// that first batch refill the cpu and node layers over about one more. A grace period is
// grace_period_us with fixed periods, and at least two ticks when periods end from ticks (one to
// notice the period, a later one to report). The window itself should span three periods too:
// callbacks are invoked in batches at period ends, and a shorter window samples that cycle
// unevenly. A lower bound: spinning CPUs stretch tick-driven periods (tools/settle.py measures).
std::vector<std::string> window_warnings(const Job& job);
// The RCU lower bound on a warm-up: kSettlePeriods grace periods of the run's costs.
Time rcu_settle_time(const SlubCostConfig& c);

// Results of a job: [variant][run][row].
struct JobResult {
  std::vector<std::vector<std::vector<RunResult>>> runs;
  std::vector<double> wall_seconds;  // per variant, summed over its simulations
  double wall_total = 0;
  bool complete = true;        // false: stopped (RunControl::stop) before every point ran
  std::size_t points_done = 0;  // points with a result, loaded or run
  std::size_t points_total = 0;
};

// After the points ran: one line per point whose window is not settled (the rule hit its cap,
// or a fixed window drifts, cycles or is too short to judge).
std::vector<std::string> settle_warnings(const Job& job, const JobResult& res);

// A result of the job's shape ([variant][run][row]) with no point in it yet.
JobResult empty_result(const Job& job);

// Where a point (one variant x one task count x one run) sits: JobResult::runs[variant][run][row].
struct PointKey {
  std::size_t variant = 0;
  std::size_t run = 0;
  std::size_t row = 0;
};

// How a job's points may be steered (sim/run/point_store.h keeps them on disk).
struct RunControl {
  // A point finished by an earlier run (--resume): its result and host seconds; not run again.
  std::function<std::optional<std::pair<RunResult, double>>(const PointKey&)> finished_before;
  // A point's simulation ended (called on the worker's thread, one at a time).
  std::function<void(const PointKey&, const RunResult&, double wall_seconds)> on_point;
  // Every point of a variant has its result: `partial` holds them, and its wall_seconds[variant].
  std::function<void(std::size_t variant, const JobResult& partial)> on_variant;
  // Once set, no new point starts; the points in flight finish.
  const std::atomic<bool>* stop = nullptr;
};

// The job's points in their canonical order: variant, then run, then row.
std::vector<PointKey> job_points(const Job& job);
// One point's simulation. It depends on the job's inputs, the variant, the task count and the
// run's seed (request.seed + run), not on the job's other rows, variants or runs.
RunResult simulate_point(const Job& job, const PointKey& k, const std::atomic<bool>* stop = nullptr);
// What simulate_point runs: the point as a RunSpec that points into `job`.
RunSpec point_spec(const Job& job, const PointKey& k, const std::atomic<bool>* stop = nullptr);

// Run every simulation of the job on `jobs` host threads. Output is independent of `jobs`.
JobResult run_job(const Job& job, const std::function<void(const std::string&)>& progress,
                  const RunControl& control = {});

// Parsing helpers, exposed for tests.
std::vector<std::string> split_list(const std::string& text);  // "a,b" -> {"a", "b"}
// A list option's items, each once: a repeat is refused (ConfigError naming the option and the
// item). The same kernel, capacity, cache or machine twice is the same simulations twice: a second
// variant, row or job of it repeats the first, and sums over them (will-it-scale.workload) count
// it twice.
void refuse_repeats(const std::vector<std::string>& items, const std::string& option);
// --nr-task: N or P% (of nr_cpus, truncated, as lkp's params/nr_threads), each count once. A
// count given twice, also as N and P%, is refused; the defaults leave out what a small machine
// makes 0 or a repeat (kDefaultNrTask).
std::vector<int> parse_nr_task(const std::string& text, int nr_cpus);
std::vector<CapacitySetting> parse_sheaf_capacity(const std::string& text);
// --sysfs: settings joined by ';', each a comma list of CACHE/KNOB=N, KNOB one of the runtime-
// tuning RFC's sheaf_capacity (1-4096), max_full_sheaves and max_empty_sheaves (0-4096), CACHE a
// cache name or '*' (every cache with sheaves). An empty setting ("a=1;;b=2") is the kernel's own.
std::vector<CapacitySetting> parse_sysfs(const std::string& text);

// Find configs: NAME resolves to <home>/<dir>/NAME.json; anything with a '/' or ending in
// .json is a path.
std::string resolve_config(const std::string& home, const std::string& dir,
                           const std::string& name_or_file, const std::string& option);
std::string default_home();

}  // namespace slubsim
