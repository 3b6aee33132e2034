// libFuzzer target: a kernel preset (configs/kernels/*.json).
#include "fuzz/fuzz_common.h"
#include "sim/config/kernel.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slubsim;
  fuzz::expect_clean([&] { parse_kernel(parse_json_text(fuzz::text(data, size), "fuzz.json"), "fuzz.json"); });
  return 0;
}
