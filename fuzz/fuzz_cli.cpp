// libFuzzer target: the command line of `slubsim run` (one argument per line of the input),
// parsed and resolved into a job as `run` does before it simulates; nothing is simulated. An
// input whose first line is "advise" is `slubsim advise`'s command line, resolved into its plan.
#include <sstream>

#include "fuzz/fuzz_common.h"
#include "sim/advise/advise.h"
#include "sim/cli/cli.h"
#include "sim/run/job.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slubsim;
  std::vector<std::string> args;
  std::istringstream in(fuzz::text(data, size));
  for (std::string line; std::getline(in, line);) args.push_back(line);
  auto local = [](const JobRequest& r) {
    for (const std::string* s : {&r.topology, &r.workload, &r.costs, &r.caches, &r.kernel})
      if (s->find('/') != std::string::npos || s->find(".json") != std::string::npos || s->find(':') != std::string::npos)
        return false;
    return true;
  };
  if (!args.empty() && args.front() == "advise") {
    args.erase(args.begin());
    fuzz::expect_clean([&] {
      AdviseCommand c = parse_advise_command(args, fuzz::home());
      if (c.help || c.request.base.home != fuzz::home() || !local(c.request.base)) return;
      resolve_advise(c.request);
    });
    return 0;
  }
  fuzz::expect_clean([&] {
    RunCommand c = parse_run_command(args, fuzz::home());
    if (c.help) return;
    // Only configs of the source tree: a fuzzer must not read or write files elsewhere.
    if (c.request.home != fuzz::home() || !c.out.empty()) return;
    if (!local(c.request)) return;
    resolve_job(c.request);
  });
  return 0;
}
