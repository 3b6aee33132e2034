#include "sim/config/kernel.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace slubsim {

const char* frontend_name(FrontendKind f) {
  switch (f) {
    case FrontendKind::CpuPartialFrozen: return "cpu-partial-frozen";
    case FrontendKind::CpuPartial: return "cpu-partial";
    case FrontendKind::SheavesOnCpuPartial: return "sheaves-on-cpu-partial";
    case FrontendKind::Sheaves: return "sheaves";
  }
  return "?";
}

Kernel parse_kernel(const json& doc, const std::string& file) {
  JsonView root(doc, file);
  if (!doc.is_object()) root.fail("a kernel preset is a JSON object");
  Kernel k;
  k.name = root.at("name").str();
  k.tree = root.has("tree") ? root.at("tree").str() : k.name;
  if (k.tree.empty()) root.at("tree").fail("must name the source tree (or be left out: the kernel's name)");
  auto fe = root.at("frontend");
  fe.sourced_value_any();
  auto name = fe.at("value").str();
  bool found = false;
  for (auto f : {FrontendKind::CpuPartialFrozen, FrontendKind::CpuPartial, FrontendKind::SheavesOnCpuPartial,
                 FrontendKind::Sheaves})
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
  for (const auto& p : k.patches)
    if (std::find(known_patches().begin(), known_patches().end(), p) == known_patches().end())
      list.fail(fmt::format("unknown patch '{}' ({})", p, fmt::join(known_patches(), ", ")));
  k.freelist_random = root.at("freelist_random").sourced_value_any().boolean();
  k.cpu_partial = root.at("cpu_partial").sourced_value_any().boolean();
  auto caps = root.at("sheaf_capacity").sourced_value_any();
  for (const auto& cache : caps.keys())
    k.sheaf_capacity.emplace_back(cache, static_cast<std::uint32_t>(caps.at(cache).integer_in(1, 4096)));
  auto count = [&](const char* name, std::int64_t lo) {
    return static_cast<std::uint32_t>(root.at(name).sourced_value_any().integer_in(lo, 100000));
  };
  // A barn limit of 0 is a barn that keeps nothing (every sheaf it is offered is flushed).
  k.barn_max_full = count("barn_max_full", 0);
  k.barn_max_empty = count("barn_max_empty", 0);
  k.pcs_batch_max = count("pcs_batch_max", 1);
  k.slub_max_order = static_cast<int>(root.at("slub_max_order").sourced_value_any().integer_in(0, 10));
  k.slub_min_objects = static_cast<int>(root.at("slub_min_objects").sourced_value_any().integer_in(0, 4096));
  // Optional (2021 kernels): how the cpu partial list is limited, and set_cpu_partial's targets.
  if (auto acc = root.find("cpu_partial_accounting")) {
    const std::string a = acc->sourced_value_any().str();
    if (a == "objects") k.cpu_partial_objects = true;
    else if (a != "slabs") acc->at("value").fail(fmt::format("unknown accounting '{}' (slabs, objects)", a));
  }
  if (auto t = root.find("cpu_partial_targets")) {
    auto v = t->sourced_value_any();
    const char* names[] = {"page", "1024", "256", "smaller"};
    std::array<std::uint32_t, 4> targets{};
    for (std::size_t i = 0; i < targets.size(); ++i)
      targets[i] = static_cast<std::uint32_t>(v.at(names[i]).integer_in(0, 100000));
    k.cpu_partial_targets = targets;
  }
  auto slice = root.at("sched_slice_us");
  k.sched_slice_us = slice.sourced_value_any().number();
  if (!(k.sched_slice_us > 0)) slice.at("value").fail("must be positive");
  k.wakeup_preempts = root.at("wakeup_preempts").sourced_value_any().boolean();
  k.place_lag = root.at("place_lag").sourced_value_any().boolean();
  k.delay_dequeue = root.at("delay_dequeue").sourced_value_any().boolean();
  root.check_known_fields();
  return k;
}

bool Kernel::has(const std::string& patch) const {
  return std::find(patches.begin(), patches.end(), patch) != patches.end();
}

const std::vector<std::string>& known_patches() {
  static const std::vector<std::string> names = {"spare-sheaf", "remote-refill-trylock", "skip-freelist", "refill-any-node",
                                                   "refill-from-partial", "nowait-refill"};
  return names;
}

void apply_patches(Kernel& k, const std::vector<std::string>& changes) {
  for (const auto& change : changes) {
    bool add = change.empty() || change[0] != '-';
    std::string name = !change.empty() && (change[0] == '+' || change[0] == '-') ? change.substr(1) : change;
    if (std::find(known_patches().begin(), known_patches().end(), name) == known_patches().end())
      throw ConfigError("command line", "--patch",
                        fmt::format("unknown patch '{}' ({})", name, fmt::join(known_patches(), ", ")));
    auto it = std::find(k.patches.begin(), k.patches.end(), name);
    if (add && it == k.patches.end()) k.patches.push_back(name);
    if (!add && it != k.patches.end()) k.patches.erase(it);
  }
}

}  // namespace slubsim
