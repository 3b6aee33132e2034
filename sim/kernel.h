// Kernel presets (configs/kernels/NAME.json): which SLUB front-end and which patches.
#pragma once
#include <string>
#include <vector>

#include "sim/config.h"

namespace slubsim {

enum class Frontend { CpuPartialFrozen, CpuPartial, SheavesOnCpuPartial, Sheaves };

struct Kernel {
  std::string name;
  Frontend frontend = Frontend::CpuPartial;
  std::vector<std::string> patches;
  bool freelist_random = true;  // CONFIG_SLAB_FREELIST_RANDOM
  bool cpu_partial = true;      // CONFIG_SLUB_CPU_PARTIAL
};

Kernel parse_kernel(const json& doc, const std::string& file);
const char* frontend_name(Frontend f);

}  // namespace slubsim
