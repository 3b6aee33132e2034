// libFuzzer target: a sweep file (docs/sweep-format.md), read, resolved into its jobs and planned
// as `slubsim sweep --plan` does, nothing simulated; and a first line "shard: TEXT" is parsed as
// --shard TEXT with no environment.
#include "fuzz/fuzz_common.h"
#include "sim/sweep/sweep.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slubsim;
  std::string text = fuzz::text(data, size);
  fuzz::expect_clean([&] {
    if (text.rfind("shard: ", 0) == 0) {
      const auto nl = text.find('\n');
      parse_shard(text.substr(7, nl == std::string::npos ? std::string::npos : nl - 7),
                  [](const char*) -> const char* { return nullptr; });
      text = nl == std::string::npos ? "" : text.substr(nl + 1);
    }
    SweepRequest r;
    r.base.home = fuzz::home();
    r.topologies = {r.base.topology};
    r.workloads = {r.base.workload};
    read_sweep_fields(parse_json_text(text, "fuzz.json"), "fuzz.json", r);
    // Only presets of the source tree (a fuzzer must not read files elsewhere), and a bounded
    // number of jobs.
    if (r.topologies.size() * r.workloads.size() > 8) return;
    for (const auto* list : {&r.topologies, &r.workloads})
      for (const auto& s : *list)
        if (s.find('/') != std::string::npos || s.find(".json") != std::string::npos || s.find(':') != std::string::npos)
          return;
    for (const std::string* s : {&r.base.costs, &r.base.caches, &r.base.kernel})
      if (s->find('/') != std::string::npos || s->find(".json") != std::string::npos) return;
    const Sweep s = resolve_sweep(r);
    sweep_plan(s);
  });
  return 0;
}
