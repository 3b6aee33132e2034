// Load and validate a topology JSON into a Machine (docs/topology-format.md).
#pragma once
#include <string>
#include <vector>

#include "sim/config/config.h"
#include "sim/machine/machine.h"

namespace slubsim {

constexpr int kMaxCpus = 4096;

// Build from a parsed document; `file` is used in error messages.
Machine parse_topology(const json& doc, const std::string& file);

}  // namespace slubsim
