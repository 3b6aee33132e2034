#include "sim/cli/cli.h"

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <sstream>

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

namespace {

po::options_description run_options(JobRequest& r, std::string& out, bool& resume, bool& table, bool& why,
                                    bool& quiet) {
  po::options_description d("Options of 'slubsim run'");
  d.add_options()
      ("help,h", "this text")
      ("topology", po::value(&r.topology)->default_value(r.topology),
       "machine: a preset NAME (configs/topologies/NAME.json) or a FILE; e.g. --topology small-2s-8c")
      ("workload", po::value(&r.workload)->default_value(r.workload),
       "program each task runs: NAME (workloads/NAME.json) or FILE, or a trace to replay: trace:FILE (slubsim's format) or ftrace:FILE (ftrace / trace-cmd report text of the kmem events); e.g. --workload rwsem-standin or --workload ftrace:workloads/traces/sample-ftrace.txt")
      ("trace-map", po::value(&r.trace_map)->default_value(r.trace_map),
       "how a trace's C CPUs become the tasks: replicated (task j replays trace CPU j mod C, each group of C tasks with its own objects) or mapped (trace CPU i on task i mod N; N must not exceed C); e.g. --trace-map mapped")
      ("trace-speed", po::value(&r.trace_speed)->default_value(r.trace_speed),
       "trace timestamps are divided by this factor; 0 replays events back to back; e.g. --trace-speed 10")
      ("mode", po::value(&r.mode)->default_value(r.mode),
       "process (private mm per task) or thread (one shared mm); e.g. --mode thread")
      ("nr-task", po::value(&r.nr_task)->default_value(r.nr_task),
       "task counts, one result row each: N or P% of logical CPUs; e.g. --nr-task 1,8,64 or 25%,50%,100%")
      ("kernel", po::value(&r.kernel)->default_value(r.kernel),
       "kernel preset(s) (configs/kernels/NAME.json), a list is a sweep; e.g. --kernel v6.17,v7.0")
      ("sheaf-capacity", po::value(&r.sheaf_capacity),
       "[CACHE=]N[,...]: N alone for every sheaf cache, a list of Ns is a sweep; e.g. --sheaf-capacity maple_node=64 or 32,64,128")
      ("set", po::value(&r.sets)->composing(),
       "KEY=VALUE: change any model parameter in the topology, costs, workload or kernel config; repeatable; e.g. --set costs.qspinlock.handoff_alpha=1.2 --set topology.latency_ns.llc=30 --set caches.maple_node.order=1")
      ("patch", po::value(&r.patches)->composing(),
       "+NAME or -NAME: switch a patch on or off on top of every kernel preset: spare-sheaf, remote-refill-trylock, skip-freelist; repeatable; e.g. --patch +skip-freelist --patch -spare-sheaf")
      ("costs", po::value(&r.costs)->default_value(r.costs),
       "cost model: NAME (configs/costs/NAME.json) or FILE")
      ("caches", po::value(&r.caches)->default_value(r.caches),
       "slab caches: NAME (configs/caches/NAME.json) or FILE; per-cache knobs with --set caches.maple_node.cpu_partial=104")
      ("validate", po::bool_switch(&r.validate),
       "SLUB validation mode: double frees and foreign pointers are errors, and every object is checked to be in exactly one place at the end of each run")
      ("runs", po::value(&r.runs)->default_value(r.runs), "repetitions with seeds SEED, SEED+1, ...; e.g. --runs 3")
      ("seed", po::value<std::string>()->default_value(std::to_string(r.seed))->notifier([&r](const std::string& s) {
         r.seed = parse_seed(s);
       }),
       "random seed; same inputs and seed give identical JSON; e.g. --seed 7")
      ("duration", po::value(&r.duration)->default_value(r.duration),
       "measured window in simulated time (s, ms, us, ns); the default is the experiments' steady-state window, and a window under three RCU grace periods draws a warning; e.g. --duration 24ms")
      ("warmup", po::value(&r.warmup)->default_value(r.warmup),
       "simulated warm-up before the window (0 for none); one shorter than RCU needs to settle (three grace periods) draws a warning; e.g. --warmup 40ms")
      ("interval", po::value(&r.interval),
       "also report throughput and spin share per interval of simulated time, warm-up included (interval.<N>.<i>.* keys; is the window steady?); e.g. --interval 4ms")
      ("out", po::value(&out),
       "write stats.json, matrix.json and host.json to DIR (one subdirectory per kernel/capacity variant when there are several), each finished point to DIR/points at once, and DIR/index.json; Ctrl-C stops after the points in flight; e.g. --out results/run1")
      ("resume", po::bool_switch(&resume),
       "finish the interrupted job in --out DIR: the same options and inputs, only the missing points run; e.g. --out results/run1 --resume")
      ("jobs", po::value(&r.jobs)->default_value(r.jobs), "host threads (0 = one per host CPU); e.g. --jobs 2")
      ("table", po::bool_switch(&table), "print a readable table instead of JSON on stdout")
      ("why", po::bool_switch(&why),
       "after the table, where each row's task time goes, like perf report: non-slab work, slab fast and slow path, RCU callbacks, spinning per lock and node, idle (implies --table; the why.* keys are in the JSON anyway)")
      ("quiet", po::bool_switch(&quiet), "no progress lines on stderr")
      ("home", po::value(&r.home)->default_value(r.home),
       "where configs/ and workloads/ live (default: the source tree, or $SLUBSIM_HOME)");
  return d;
}

}  // namespace

RunCommand parse_run_command(std::vector<std::string> args, const std::string& home) {
  // "--patch -NAME" would read as an option: glue the value on.
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--patch" && !args[i + 1].empty() && args[i + 1][0] == '-') {
      args[i] = "--patch=" + args[i + 1];
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    }
  refuse_placeholders(args);
  RunCommand c;
  c.request.home = home;
  auto desc = run_options(c.request, c.out, c.resume, c.table, c.why, c.quiet);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw ConfigError("command line", "", fmt::format("{}\n(see slubsim run --help)", e.what()));
  }
  if (c.why) c.table = true;
  c.help = vm.count("help") > 0;
  if (c.help) {
    std::ostringstream os;
    os << desc;
    c.help_text = os.str();
  }
  return c;
}

}  // namespace slubsim
