// Test helper: write a pattern derived from a tag into an object's real memory, and check it is
// still there before the object is freed (the allocator must not touch memory it handed out).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace slubsim::test {

inline std::uint64_t pattern_word(std::uint64_t tag, std::size_t i) {
  return (tag * 0x9e3779b97f4a7c15ULL) ^ (i * 0xbf58476d1ce4e5b9ULL) ^ 0x5a5a5a5a5a5a5a5aULL;
}

inline void fill_pattern(void* p, std::size_t n, std::uint64_t tag) {
  auto* b = static_cast<std::uint8_t*>(p);
  for (std::size_t i = 0; i + 8 <= n; i += 8) {
    std::uint64_t w = pattern_word(tag, i);
    std::memcpy(b + i, &w, 8);
  }
  for (std::size_t i = n / 8 * 8; i < n; ++i) b[i] = static_cast<std::uint8_t>(tag + i);
}

inline bool pattern_intact(const void* p, std::size_t n, std::uint64_t tag) {
  auto* b = static_cast<const std::uint8_t*>(p);
  for (std::size_t i = 0; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, b + i, 8);
    if (w != pattern_word(tag, i)) return false;
  }
  for (std::size_t i = n / 8 * 8; i < n; ++i)
    if (b[i] != static_cast<std::uint8_t>(tag + i)) return false;
  return true;
}

}  // namespace slubsim::test
