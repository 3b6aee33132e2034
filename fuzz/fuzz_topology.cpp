// libFuzzer target: a topology file (configs/topologies/*.json).
#include "fuzz/fuzz_common.h"
#include "sim/machine/topology.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slubsim;
  fuzz::expect_clean([&] { parse_topology(parse_json_text(fuzz::text(data, size), "fuzz.json"), "fuzz.json"); });
  return 0;
}
