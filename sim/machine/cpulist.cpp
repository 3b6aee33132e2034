// sim/machine/: the machine: its topology (topology.h, machine.h), CPU lists, and where tasks are
// placed (placement.h).
// This file: CPU lists in lscpu / sysfs syntax.
#include "sim/machine/cpulist.h"

#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>

namespace slubsim {

static int parse_id(const std::string& s, const std::string& whole, int max_cpu) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 6)
    throw std::invalid_argument(fmt::format("'{}' in '{}' is not a CPU number", s, whole));
  int v = std::stoi(s);
  if (v > max_cpu)
    throw std::invalid_argument(fmt::format("CPU {} in '{}' is above {}", v, whole, max_cpu));
  return v;
}

std::vector<int> parse_cpulist(const std::string& text, int max_cpu) {
  std::vector<int> out;
  if (text.empty()) throw std::invalid_argument("empty CPU list");
  std::size_t start = 0;
  while (start <= text.size()) {
    auto comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos
                                                                    : comma - start);
    if (item.empty()) throw std::invalid_argument(fmt::format("empty item in '{}'", text));
    auto dash = item.find('-');
    if (dash == std::string::npos) {
      out.push_back(parse_id(item, text, max_cpu));
    } else {
      int lo = parse_id(item.substr(0, dash), text, max_cpu);
      int hi = parse_id(item.substr(dash + 1), text, max_cpu);
      if (hi < lo)
        throw std::invalid_argument(fmt::format("range '{}' in '{}' runs backwards", item, text));
      for (int c = lo; c <= hi; ++c) out.push_back(c);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string format_cpulist(const std::vector<int>& cpus) {
  std::string out;
  std::size_t i = 0;
  while (i < cpus.size()) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace slubsim
