// libFuzzer target: a trace, in slubsim's native format (first byte even) or as ftrace text (odd),
// then matched and resolved against the default caches as a replay would be.
#include "fuzz/fuzz_common.h"
#include "sim/config/config.h"
#include "sim/run/slub_config.h"
#include "sim/config/trace_import.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slubsim;
  static const auto caches = [] {
    const std::string f = fuzz::home() + "/configs/caches/default.json";
    return parse_caches(load_json_file(f), f);
  }();
  if (size == 0) return 0;
  const bool native = (data[0] & 1) == 0;
  fuzz::expect_clean([&] {
    const std::string t = fuzz::text(data + 1, size - 1);
    TraceText tt = native ? parse_native_trace(t, "fuzz.trace") : parse_ftrace(t, "fuzz.txt", caches);
    build_trace(tt, caches);
  });
  return 0;
}
