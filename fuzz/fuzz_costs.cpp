// libFuzzer target: a cost model (configs/costs/*.json), read by both of its parsers.
#include "fuzz/fuzz_common.h"
#include "sim/config/costs.h"
#include "sim/run/slub_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slubsim;
  fuzz::expect_clean([&] {
    json doc = parse_json_text(fuzz::text(data, size), "fuzz.json");
    auto log = std::make_shared<ReadLog>();
    parse_costs(doc, "fuzz.json", log);
    parse_slub_costs(doc, "fuzz.json", log);
    JsonView(doc, "fuzz.json", log).check_known_fields();
  });
  return 0;
}
