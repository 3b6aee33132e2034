// The command line of `slubsim run`, parsed into a JobRequest and the run's own switches. Shared by
// main and the command-line fuzz target (fuzz/), so both see the same options and errors.
#pragma once
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "sim/advise/advise.h"
#include "sim/run/job.h"
#include "sim/sweep/sweep.h"

namespace slubsim {

struct RunCommand {
  JobRequest request;
  std::string out;  // --out DIR, "" = stdout
  std::string fit;  // --fit FILE: a fit file's parameters as --set before the request's own ("" = none)
  bool resume = false, table = false, why = false, quiet = false;
  std::string uncertainty;  // --uncertainty quick|full, "" = none
  bool help = false;
  std::string help_text;  // the options' descriptions, for --help
};

struct SweepCommand {
  std::string file;  // the sweep FILE, "" = options only
  SweepRequest request;
  std::string out, plan, shard;  // --out, --plan, --shard ("" = not given)
  bool quiet = false;
  bool help = false;
  std::string help_text;
};

struct AdviseCommand {
  AdviseRequest request;
  std::string out, plan, shard;
  bool quiet = false;
  bool no_bounds = false;
  bool help = false;
  std::string help_text;
};
// `slubsim fit`: the measured figure (--ops, or --from FILE) and the job it was measured on.
struct FitCommand {
  JobRequest request;  // nr_task: "" until --nr-task or the figure's file says
  std::string ops;     // --ops, as typed ("" = not given)
  std::string from;    // --from FILE
  std::string parameters;  // --parameters LIST ("" = the workload's placeholders)
  double start = 1.0;
  std::string out;
  bool quiet = false;
  bool help = false;
  std::string help_text;
};
// Parses `slubsim fit` ARGS.
FitCommand parse_fit_command(std::vector<std::string> args, const std::string& home);

struct InputsCommand {
  JobRequest request;
  bool json = false;
  bool help = false;
  std::string help_text;
};
// Parses `slubsim inputs` ARGS: the job options (one job's topology, workload, kernels, --set).
InputsCommand parse_inputs_command(std::vector<std::string> args, const std::string& home);

// Parses `slubsim advise` ARGS.
AdviseCommand parse_advise_command(std::vector<std::string> args, const std::string& home);

// Parses `slubsim sweep` ARGS: an optional sweep FILE first, then options over it.
SweepCommand parse_sweep_command(std::vector<std::string> args, const std::string& home);

// Parses `slubsim run` ARGS (without "run"); home is the default --home. Every problem is a
// ConfigError("command line", option, message).
RunCommand parse_run_command(std::vector<std::string> args, const std::string& home);

// Throws ConfigError for an argument holding "%word%": program_options (Boost 1.74) loops for ever
// filling such a value into an error message. Every command calls it before parsing.
void refuse_placeholders(const std::vector<std::string>& args);

// A command-line parse error as slubsim reports it: boost's message, a "did you mean --X?" for
// a misspelt option, and where to look ("see slubsim COMMAND --help").
std::string option_error(const boost::program_options::error& e,
                         const boost::program_options::options_description& desc, const char* command);

// --seed's value: a whole number from 0 to 2^53.
std::uint64_t parse_seed(const std::string& text);

}  // namespace slubsim
