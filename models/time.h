// Simulated time: an integer count of picoseconds (no rounding drift; 106 days of range).
#pragma once
#include <cmath>
#include <cstdint>

namespace slubsim {

using Time = std::int64_t;  // picoseconds

constexpr Time kPs = 1;
constexpr Time kNs = 1000;
constexpr Time kUs = 1000 * kNs;
constexpr Time kMs = 1000 * kUs;
constexpr Time kSec = 1000 * kMs;
constexpr Time kForever = INT64_MAX;

// Nanoseconds as they appear in configs (fractional allowed) to simulated time.
inline Time from_ns(double ns) { return static_cast<Time>(std::llround(ns * 1000.0)); }
inline double to_ns(Time t) { return static_cast<double>(t) / 1000.0; }
inline double to_us(Time t) { return static_cast<double>(t) / 1e6; }
inline double to_sec(Time t) { return static_cast<double>(t) / 1e12; }

}  // namespace slubsim
