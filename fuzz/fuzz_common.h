// Shared by the libFuzzer targets: run one parser on the input, where a ConfigError (bad input,
// reported with file and field) is the right answer and anything else — another exception, a
// crash, a sanitizer report, a hang — is a finding.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "sim/config/config.h"

namespace slubsim::fuzz {

template <class F>
void expect_clean(F&& f) {
  try {
    f();
  } catch (const ConfigError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: an exception other than ConfigError: %s\n", e.what());
    std::abort();
  }
}

inline std::string text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// The source tree (configs/, workloads/), for targets that resolve names.
inline std::string home() { return SLUBSIM_SOURCE_DIR; }

}  // namespace slubsim::fuzz
