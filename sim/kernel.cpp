#include "sim/kernel.h"

#include <fmt/format.h>

namespace slubsim {

const char* frontend_name(Frontend f) {
  switch (f) {
    case Frontend::CpuPartialFrozen: return "cpu-partial-frozen";
    case Frontend::CpuPartial: return "cpu-partial";
    case Frontend::SheavesOnCpuPartial: return "sheaves-on-cpu-partial";
    case Frontend::Sheaves: return "sheaves";
  }
  return "?";
}

Kernel parse_kernel(const json& doc, const std::string& file) {
  JsonView root(doc, file);
  if (!doc.is_object()) root.fail("a kernel preset is a JSON object");
  Kernel k;
  k.name = root.at("name").str();
  auto fe = root.at("frontend");
  fe.sourced_value_any();
  auto name = fe.at("value").str();
  bool found = false;
  for (auto f : {Frontend::CpuPartialFrozen, Frontend::CpuPartial, Frontend::SheavesOnCpuPartial,
                 Frontend::Sheaves})
    if (name == frontend_name(f)) {
      k.frontend = f;
      found = true;
    }
  if (!found)
    fe.at("value").fail(fmt::format(
        "unknown front-end '{}' (cpu-partial-frozen, cpu-partial, sheaves-on-cpu-partial, sheaves)",
        name));
  auto patches = root.at("patches");
  patches.sourced_value_any();
  auto list = patches.at("value");
  for (std::size_t i = 0; i < list.size(); ++i) k.patches.push_back(list.at(i).str());
  k.freelist_random = root.at("freelist_random").sourced_value_any().boolean();
  k.cpu_partial = root.at("cpu_partial").sourced_value_any().boolean();
  return k;
}

}  // namespace slubsim
