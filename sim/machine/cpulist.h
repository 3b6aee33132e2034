// CPU lists in lscpu / sysfs syntax: "0-42,172-214", "3", "0,4".
#pragma once
#include <string>
#include <vector>

namespace slubsim {

// Parse into ascending, de-duplicated CPU ids. Throws std::invalid_argument with a message
// saying what is wrong (empty item, reversed range, not a number, id above max_cpu).
std::vector<int> parse_cpulist(const std::string& text, int max_cpu = 65535);

// Print in the same syntax, ranges folded.
std::string format_cpulist(const std::vector<int>& cpus);

}  // namespace slubsim
