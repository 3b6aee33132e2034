// Seeded random streams: one per CPU (and per purpose), so results do not depend on the order
// in which CPUs happen to be simulated. xoshiro256** seeded through splitmix64.
#pragma once
#include <cmath>
#include <cstdint>

namespace slubsim {

class Random {
 public:
  explicit Random(std::uint64_t seed = 1) { reseed(seed); }
  // Independent stream for (seed, a, b): e.g. (run seed, cpu, purpose).
  Random(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0) {
    reseed(seed ^ mix(a + 0x9e3779b97f4a7c15ULL) ^ mix(b + 0x632be59bd9b4e019ULL));
  }

  void reseed(std::uint64_t seed) {
    std::uint64_t x = seed;
    for (auto& w : s_) w = splitmix(x);
  }

  std::uint64_t next() {
    std::uint64_t r = rotl(s_[1] * 5, 7) * 9;
    std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return r;
  }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n).
  std::uint64_t below(std::uint64_t n) { return n ? next() % n : 0; }
  // Exponential with the given mean.
  double exponential(double mean) { return -mean * std::log1p(-uniform()); }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static std::uint64_t splitmix(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  static std::uint64_t mix(std::uint64_t x) { return splitmix(x); }
  std::uint64_t s_[4];
};

}  // namespace slubsim
