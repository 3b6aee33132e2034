// sim/cli/: the command line, the top layer: `run`'s and `sweep`'s options (cli.h, shared with the
// fuzz targets) and every command (main.cpp).
// This file: the options of `run`, `sweep`, `advise`, `fit` and `inputs`, parsed into their requests.
#include "sim/cli/cli.h"

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <sstream>
#include <type_traits>
#include <variant>

#include "sim/config/config.h"

namespace slubsim {

namespace po = boost::program_options;

// --seed: a whole number from 0 to 2^53, as an experiment's "seed" (program_options would wrap
// "-1" round to 2^64 - 1).
std::uint64_t parse_seed(const std::string& text) {
  constexpr std::uint64_t kMax = std::uint64_t{1} << 53;
  std::size_t used = 0;
  unsigned long long v = 0;
  try {
    if (!text.empty() && text[0] != '-' && text[0] != '+') v = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || v > kMax)
    throw ConfigError("command line", "--seed", fmt::format("'{}' is not a whole number from 0 to 2^53", text));
  return v;
}

void refuse_placeholders(const std::vector<std::string>& args) {
  // program_options fills "%name%" placeholders into its messages and loops for ever when the
  // filled-in value holds the placeholder itself (Boost 1.74): no option value needs "%word%".
  for (const auto& a : args)
    for (std::size_t at = a.find('%'); at != std::string::npos; at = a.find('%', at + 1)) {
      const std::size_t end = a.find('%', at + 1);
      if (end == std::string::npos) break;
      const std::string word = a.substr(at + 1, end - at - 1);
      if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == std::string::npos)
        throw ConfigError("command line", "", fmt::format("'{}': '%{}%' cannot appear in an argument", a, word));
    }
}

std::string option_error(const po::error& e, const po::options_description& desc, const char* command) {
  std::string hint;
  if (const auto* u = dynamic_cast<const po::unknown_option*>(&e)) {
    std::string given = u->get_option_name();
    const std::size_t dashes = given.find_first_not_of('-');
    given = dashes == std::string::npos ? std::string() : given.substr(dashes);
    if (const auto eq = given.find('='); eq != std::string::npos) given.resize(eq);
    std::vector<std::string> names;
    for (const auto& o : desc.options())
      if (!o->long_name().empty()) names.push_back(o->long_name());
    if (const std::string near = closest(given, names); !near.empty()) hint = fmt::format("; did you mean --{}?", near);
  }
  return fmt::format("{}{}\n(see slubsim {}{}--help)", e.what(), hint, command, *command ? " " : "");
}

namespace {

// The options that describe a job, shared by run, sweep, advise and inputs (a sweep takes lists
// for --topology and --workload): one walk of request_field_list (sim/run/job.h), which declares
// each field's option and its help, in the help's order; then the two that change no result.
// `caches_option`: the name of the caches-file option (advise's --caches is a list of caches).
// A command that takes only some of a job's fields (fit: one machine, one kernel) names them in
// `only`, each option with that command's help; it gets --home but not --jobs.
struct JobOptionsFor {
  const char* caches_option = "caches";
  std::vector<std::pair<std::string, std::string>> only;  // option name (no "--"), help
};

void add_job_options(po::options_description& d, JobRequest& r, const JobOptionsFor& how = {}) {
  static const JobRequest defaults;
  const char* caches_option = how.caches_option;
  auto chosen = [&](const RequestField& f) -> const char* {
    if (how.only.empty()) return f.help;
    for (const auto& [name, help] : how.only)
      if (name == f.option + 2) return help.c_str();
    return nullptr;
  };
  std::vector<const RequestField*> fields;
  for (const RequestField& f : request_field_list())
    if (f.option && chosen(f)) fields.push_back(&f);
  std::stable_sort(fields.begin(), fields.end(),
                   [](const RequestField* a, const RequestField* b) { return a->help_place < b->help_place; });
  auto add = d.add_options();
  for (const RequestField* f : fields) {
    const std::string name = std::string(f->key) == "caches" ? caches_option : f->option + 2;  // without "--"
    const char* help = chosen(*f);
    std::visit(
        [&](auto member) {
          auto& value = r.*member;
          using V = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<V, std::string>) {
            auto* semantic = po::value(&value);
            if (!(defaults.*member).empty() && !value.empty()) semantic->default_value(value);
            add(name.c_str(), semantic, help);
          } else if constexpr (std::is_same_v<V, bool>) {
            add(name.c_str(), po::bool_switch(&value), help);
          } else if constexpr (std::is_same_v<V, int>) {
            add(name.c_str(), po::value(&value)->default_value(value), help);
          } else if constexpr (std::is_same_v<V, std::uint64_t>) {  // the seed: read as parse_seed checks it
            add(name.c_str(),
                po::value<std::string>()->default_value(std::to_string(value))->notifier([&value](const std::string& s) {
                  value = parse_seed(s);
                }),
                help);
          } else {  // a repeatable option
            add(name.c_str(), po::value(&value)->composing(), help);
          }
        },
        f->member);
  }
  if (how.only.empty()) add("jobs", po::value(&r.jobs)->default_value(r.jobs), "host threads (0 = one per host CPU); e.g. --jobs 2");
  add("home", po::value(&r.home)->default_value(r.home),
      "where configs/ and workloads/ live (default: the source tree, or $SLUBSIM_HOME); e.g. --home /opt/slubsim");
}

po::options_description run_options(JobRequest& r, std::string& out, bool& resume, bool& table, bool& why,
                                    bool& quiet, std::string& uncertainty, std::string& fit) {
  po::options_description d("Options of 'slubsim run'");
  d.add_options()("help,h", "this text");
  add_job_options(d, r);
  d.add_options()
      ("fit", po::value(&fit),
       "FILE: a fit file ('slubsim fit --out FILE', or configs/fits/*.json): its non-slab parameters replace the workload's, as --set workload.parameters.NAME=VALUE before the other --set (which win); the file must fit this workload's parameters; e.g. --fit box.mmap2.fit.json")
      ("out", po::value(&out),
       "write stats.json, matrix.json and host.json to DIR (one subdirectory per kernel/capacity variant when there are several), each finished point to DIR/points at once, and DIR/index.json; Ctrl-C stops after the points in flight; e.g. --out results/run1")
      ("resume", po::bool_switch(&resume),
       "finish the interrupted job in --out DIR: the same options and inputs, only the missing points run; e.g. --out results/run1 --resume")
      ("table", po::bool_switch(&table), "print a readable table instead of JSON on stdout")
      ("uncertainty", po::value(&uncertainty),
       "quick|full: after the table, each variant's delta against the first with a 90% interval over the inputs the model does not know ('slubsim inputs'), the input that decides it and where its sign flips; quick moves the estimated latencies and the placeholder non-slab times, each group together, to both ends (up to 5x the runs); full moves every input with a range alone (2 runs per input); implies --table; e.g. --uncertainty quick")
      ("why", po::bool_switch(&why),
       "after the table, where each row's task time goes, like perf report: non-slab work, slab fast and slow path, RCU callbacks, spinning per lock and node, idle (implies --table; the why.* keys are in the JSON anyway); with --out, also folded stacks of all task time per row, OUT/<variant>/stacks.<N>.folded ('account;function;... ns', as flamegraph.pl, inferno and speedscope read them)")
      ("quiet", po::bool_switch(&quiet), "no progress lines on stderr");
  return d;
}

po::options_description sweep_options(JobRequest& r, SweepCommand& c) {
  po::options_description d("Options of 'slubsim sweep' (after an optional sweep FILE; an option given here replaces the file's field, and --set and --patch add to the file's)");
  d.add_options()("help,h", "this text");
  add_job_options(d, r);
  d.add_options()
      ("out", po::value(&c.out),
       "where this process writes: DIR/sweep.json and one folder per topology (per topology/workload with several workloads) holding what 'run --out' writes; rerunning the same sweep over DIR runs only the points not on disk; e.g. --out results/capsweep")
      ("plan", po::value(&c.plan),
       "write the sweep's points (stable ids, in order, each with the 'slubsim run' arguments that simulate it alone) to FILE ('-' for stdout) and run nothing; e.g. --plan plan.json")
      ("shard", po::value(&c.shard),
       "run only shard K of N: the plan's points K, K+N, K+2N, ...; 'auto' takes K and N from a Slurm job array (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN + 1, SLURM_ARRAY_TASK_COUNT), 'auto/N' takes K from a Kubernetes Indexed Job (JOB_COMPLETION_INDEX + 1); each shard needs its own --out, joined by 'slubsim merge'; e.g. --shard 3/16 or --shard auto")
      ("quiet", po::bool_switch(&c.quiet), "no progress line on stderr; e.g. --quiet");
  return d;
}

po::options_description advise_options(AdviseCommand& c) {
  AdviseRequest& a = c.request;
  po::options_description d("Options of 'slubsim advise'");
  d.add_options()("help,h", "this text");
  add_job_options(d, a.base, {"caches-file", {}});
  d.add_options()
      ("caches", po::value(&a.caches),
       "the caches whose knobs to search (default: every cache the workload uses that has sheaves under the kernel); e.g. --caches maple_node,vm_area_struct")
      ("capacities", po::value(&a.capacities)->default_value(a.capacities),
       "sheaf_capacity values to try; e.g. --capacities 16,32,64,128")
      ("max-full-sheaves", po::value(&a.max_full)->default_value(a.max_full),
       "the barn's max_full_sheaves values to try; e.g. --max-full-sheaves 5,10,20")
      ("max-empty-sheaves", po::value(&a.max_empty)->default_value(a.max_empty),
       "the barn's max_empty_sheaves values to try; e.g. --max-empty-sheaves 5,10,20")
      ("memory-budget", po::value(&a.memory_budget_mb)->default_value(a.memory_budget_mb),
       "SUnreclaim in MB no recommendation may exceed (0: none); e.g. --memory-budget 512")
      ("search", po::value(&a.search)->default_value(a.search),
       "climb: per cache and knob, from the default, the neighbours and then one value further while each beats the last beyond the confidence intervals; grid: every value alone (a table of them all, dearer); e.g. --search grid")
      ("no-bounds", po::bool_switch(&c.no_bounds),
       "do not re-run the picks at the uncertain inputs' ends (robustness is then 'not checked'); e.g. --no-bounds")
      ("out", po::value(&c.out),
       "DIR: OUT/tasks-<N>/{defaults,round-<K>,joint,bounds/<bound>} (sweep trees: rerunning resumes), OUT/advice.json and OUT/advice.md; e.g. --out results/advise")
      ("plan", po::value(&c.plan),
       "check the request and write which shard searches which task count (a task count is one cluster job: its search runs in rounds) to FILE ('-' for stdout), run nothing; e.g. --plan plan.json")
      ("shard", po::value(&c.shard),
       "search only shard K of N's task counts (the K-th, K+N-th, ...) into OUT; join the shards' OUT folders with 'slubsim merge', then run advise again without --shard for the report; e.g. --shard 2/4 or --shard auto")
      ("quiet", po::bool_switch(&c.quiet), "no progress lines on stderr");
  return d;
}

// "--patch -NAME" would read as an option: glue the value on.
void glue_patch_values(std::vector<std::string>& args) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--patch" && !args[i + 1].empty() && args[i + 1][0] == '-') {
      args[i] = "--patch=" + args[i + 1];
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    }
}

// Parse ARGS against DESC; `help` says whether --help was given (and help_text holds the options).
po::variables_map parse_options(const std::vector<std::string>& args, const po::options_description& desc,
                                const char* command, bool& help, std::string& help_text) {
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw ConfigError("command line", "", option_error(e, desc, command));
  }
  help = vm.count("help") > 0;
  if (help) {
    std::ostringstream os;
    os << desc;
    help_text = os.str();
  }
  return vm;
}

}  // namespace

RunCommand parse_run_command(std::vector<std::string> args, const std::string& home) {
  glue_patch_values(args);
  refuse_placeholders(args);
  RunCommand c;
  c.request.home = home;
  auto desc = run_options(c.request, c.out, c.resume, c.table, c.why, c.quiet, c.uncertainty, c.fit);
  c.request.kernel_defaulted = parse_options(args, desc, "run", c.help, c.help_text)["kernel"].defaulted();
  if (c.why || !c.uncertainty.empty()) c.table = true;
  c.request.stacks = c.why && !c.out.empty();  // written as files: only with --out
  return c;
}

SweepCommand parse_sweep_command(std::vector<std::string> args, const std::string& home) {
  glue_patch_values(args);
  refuse_placeholders(args);
  SweepCommand c;
  JobRequest& r = c.request.base;
  r.home = home;
  c.request.topologies = {r.topology};
  c.request.workloads = {r.workload};
  // The sweep file first (its fields are the options' defaults), then the options.
  bool file_kernel = false;  // the sweep file names its kernels
  if (!args.empty() && !args[0].empty() && args[0][0] != '-') {
    c.file = args[0];
    args.erase(args.begin());
    read_sweep_file(c.file, c.request);
    const json doc = load_json_file(c.file);
    file_kernel = doc.is_object() && doc.contains("kernel");
  }
  r.topology = fmt::format("{}", fmt::join(c.request.topologies, ","));
  r.workload = fmt::format("{}", fmt::join(c.request.workloads, ","));
  const std::vector<std::string> file_sets = std::move(r.sets), file_patches = std::move(r.patches);
  r.sets.clear();
  r.patches.clear();
  auto desc = sweep_options(r, c);
  r.kernel_defaulted = parse_options(args, desc, "sweep", c.help, c.help_text)["kernel"].defaulted() && !file_kernel;
  r.sets.insert(r.sets.begin(), file_sets.begin(), file_sets.end());
  r.patches.insert(r.patches.begin(), file_patches.begin(), file_patches.end());
  c.request.topologies = split_list(r.topology);
  c.request.workloads = split_list(r.workload);
  return c;
}

AdviseCommand parse_advise_command(std::vector<std::string> args, const std::string& home) {
  glue_patch_values(args);
  refuse_placeholders(args);
  AdviseCommand c;
  c.request.base.home = home;
  c.request.base.kernel = "v7.0";  // sheaves for all: every cache has the knobs
  c.request.base.nr_task = kAdviseDefaultNrTask;
  auto desc = advise_options(c);
  c.request.base.kernel_defaulted = parse_options(args, desc, "advise", c.help, c.help_text)["kernel"].defaulted();
  c.request.bounds = !c.no_bounds;
  return c;
}

FitCommand parse_fit_command(std::vector<std::string> args, const std::string& home) {
  glue_patch_values(args);
  // "--ops -5" would read as an option: glue the value on, so that it is refused as a figure.
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--ops" && !args[i + 1].empty() && args[i + 1][0] == '-') {
      args[i] = "--ops=" + args[i + 1];
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    }
  refuse_placeholders(args);
  FitCommand c;
  JobRequest& r = c.request;
  r.home = home;
  r.topology.clear();  // the machine the figure was measured on: no default
  r.nr_task.clear();
  r.jobs = 1;
  po::options_description d("Options of 'slubsim fit'");
  d.add_options()("help,h", "this text")
      ("ops", po::value(&c.ops),
       "the measured figure: total ops/s of all tasks at --nr-task, will-it-scale.N.processes (.threads with --mode thread), the 'average:' a will-it-scale binary prints; e.g. --ops 1243517")
      ("from", po::value(&c.from),
       "FILE holding the figure instead of --ops: an lkp stats.json (key will-it-scale.N.processes, or will-it-scale.workload of a one-row job), will-it-scale's runtest.py output (the CSV tasks,processes,processes_idle,threads,threads_idle,linear: the row of --nr-task, default the lowest; the column by --mode) or one binary's output (its 'average:' line); e.g. --from mmap2.csv")
      ("parameters", po::value(&c.parameters),
       "the workload parameters scaled by the one factor (default: its placeholder non-slab times, as 'slubsim inputs' lists them); e.g. --parameters mmap_locked_ns,munmap_locked_ns,unlocked_ns")
      ("start", po::value(&c.start)->default_value(c.start),
       "the search's first scale (validate --calibrate starts at 1); e.g. --start 0.5")
      ("out", po::value(&c.out),
       "the fit file to write (the configs/fits format, plus its workload), for 'slubsim run --fit FILE'; written whole, and not at all on bad input; e.g. --out my-box.mmap2.fit.json");
  // The job's fields a fit takes, from the one list of job options, each with fit's meaning.
  add_job_options(d, r, {"caches", {
      {"nr-task", "the one task count the figure was measured at (-t N of the binary); needed with --ops; use a low one, 1 or a few, where little contends; e.g. --nr-task 1"},
      {"topology", "the machine the figure was measured on: a preset NAME (configs/topologies) or a FILE (slubsim import / probe); e.g. --topology my-box.json"},
      {"workload", "the will-it-scale test measured: NAME (workloads/NAME.json) or FILE; e.g. --workload mmap1"},
      {"mode", "process (the *_processes binary) or thread (*_threads): the key and CSV column read and the mode simulated; e.g. --mode thread"},
      {"kernel", "the one kernel the machine ran (configs/kernels/NAME.json); e.g. --kernel v6.19"},
      {"sheaf-capacity", "[CACHE=]N: one setting the machine ran with; e.g. --sheaf-capacity maple_node=64"},
      {"sysfs", "CACHE/KNOB=N[,...]: one setting of the runtime-tuning RFC's sheaf knobs the machine ran with; e.g. --sysfs maple_node/sheaf_capacity=64"},
      {"set", "KEY=VALUE: change a model parameter in every simulation of the search, as 'run --set' does (give run the same); repeatable; e.g. --set topology.latency_ns.llc=30"},
      {"patch", "+NAME or -NAME on top of the kernel preset; repeatable; e.g. --patch +skip-freelist"},
      {"costs", "cost model: NAME or FILE; e.g. --costs default"},
      {"caches", "slab caches: NAME or FILE; e.g. --caches default"},
      {"runs", "runs per simulation, their mean compared; e.g. --runs 3"},
      {"seed", "random seed of every simulation; e.g. --seed 7"},
      {"duration", "a fixed simulated window instead of the settle rule's (as 'run --duration'); e.g. --duration 24ms"},
      {"warmup", "a fixed simulated warm-up instead of the settle rule's; e.g. --warmup 40ms"},
      {"settle-ci", "the settle rule's target half-width; e.g. --settle-ci 1%"},
      {"settle-cap", "the most simulated time a point may take to settle; e.g. --settle-cap 2s"}}});
  d.add_options()
      ("quiet", po::bool_switch(&c.quiet), "no progress lines (one per simulation) on stderr; e.g. --quiet");
  r.kernel_defaulted = parse_options(args, d, "fit", c.help, c.help_text)["kernel"].defaulted();
  return c;
}

InputsCommand parse_inputs_command(std::vector<std::string> args, const std::string& home) {
  glue_patch_values(args);
  refuse_placeholders(args);
  InputsCommand c;
  c.request.home = home;
  po::options_description d("Options of 'slubsim inputs'");
  d.add_options()("help,h", "this text");
  add_job_options(d, c.request);
  d.add_options()("json", po::bool_switch(&c.json), "the catalogue as JSON on stdout instead of the table");
  c.request.kernel_defaulted = parse_options(args, d, "inputs", c.help, c.help_text)["kernel"].defaulted();
  return c;
}

}  // namespace slubsim
