// libFuzzer target: a cache list (configs/caches/*.json), and each cache's geometry.
#include "fuzz/fuzz_common.h"
#include "models/slub/geometry.h"
#include "sim/run/slub_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slubsim;
  fuzz::expect_clean([&] {
    auto caches = parse_caches(parse_json_text(fuzz::text(data, size), "fuzz.json"), "fuzz.json");
    for (const auto& c : caches) slub::compute_geometry(c, slub::Features{}, 64);
  });
  return 0;
}
