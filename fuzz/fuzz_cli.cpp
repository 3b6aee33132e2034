// libFuzzer target: the command line of `slubsim run` (one argument per line of the input),
// parsed and resolved into a job as `run` does before it simulates; nothing is simulated.
#include <sstream>

#include "fuzz/fuzz_common.h"
#include "sim/cli/cli.h"
#include "sim/run/job.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slubsim;
  std::vector<std::string> args;
  std::istringstream in(fuzz::text(data, size));
  for (std::string line; std::getline(in, line);) args.push_back(line);
  fuzz::expect_clean([&] {
    RunCommand c = parse_run_command(args, fuzz::home());
    if (c.help) return;
    // Only configs of the source tree: a fuzzer must not read or write files elsewhere.
    if (c.request.home != fuzz::home() || !c.out.empty()) return;
    for (const std::string* s : {&c.request.topology, &c.request.workload, &c.request.costs, &c.request.caches,
                                 &c.request.kernel})
      if (s->find('/') != std::string::npos || s->find(".json") != std::string::npos || s->find(':') != std::string::npos)
        return;
    resolve_job(c.request);
  });
  return 0;
}
