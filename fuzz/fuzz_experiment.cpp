// libFuzzer target: an experiment file (configs/experiments/*.json). Its id must be its file's
// name, so the file is named after the id the input gives.
#include "fuzz/fuzz_common.h"
#include "sim/validate/experiment.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slubsim;
  fuzz::expect_clean([&] {
    json doc = parse_json_text(fuzz::text(data, size), "fuzz.json");
    std::string id = doc.is_object() && doc.contains("id") && doc["id"].is_string() ? doc["id"].get<std::string>() : "x";
    if (id.empty() || id.find_first_of("/\\") != std::string::npos) id = "x";
    parse_experiment(doc, "experiments/" + id + ".json");
  });
  return 0;
}
