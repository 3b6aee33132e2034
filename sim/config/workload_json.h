// Parse a workload program (workloads/*.json) into a Program.
#pragma once
#include <string>

#include "sim/config/config.h"
#include "workloads/program.h"

namespace slubsim {

Program parse_workload(const json& doc, const std::string& file);

}  // namespace slubsim
