#include "sim/run/shard.h"

#include <fmt/format.h>
#include <optional>
#include <stdexcept>

#include "sim/config/config.h"

namespace slubsim {

std::string Shard::text() const { return fmt::format("{}/{}", k, n); }

namespace {

std::size_t whole(const std::string& text, const std::string& what, std::size_t lo) {
  std::size_t used = 0;
  unsigned long long v = 0;
  try {
    if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) v = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || v < lo || v > (1ull << 31))
    throw ConfigError("command line", "--shard", fmt::format("{} is '{}': not a whole number from {}", what, text, lo));
  return static_cast<std::size_t>(v);
}

}  // namespace

Shard parse_shard(const std::string& text, const std::function<const char*(const char*)>& env) {
  Shard s;
  auto var = [&](const char* name) -> std::optional<std::string> {
    const char* v = env(name);
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  };
  auto from_slurm = [&]() -> bool {
    auto id = var("SLURM_ARRAY_TASK_ID"), lo = var("SLURM_ARRAY_TASK_MIN"), count = var("SLURM_ARRAY_TASK_COUNT");
    if (!id || !lo || !count) return false;
    const std::size_t step = var("SLURM_ARRAY_TASK_STEP") ? whole(*var("SLURM_ARRAY_TASK_STEP"), "SLURM_ARRAY_TASK_STEP", 1) : 1;
    const std::size_t i = whole(*id, "SLURM_ARRAY_TASK_ID", 0), m = whole(*lo, "SLURM_ARRAY_TASK_MIN", 0);
    if (i < m || (i - m) % step != 0)
      throw ConfigError("command line", "--shard",
                        fmt::format("SLURM_ARRAY_TASK_ID {} is not MIN {} plus a multiple of STEP {}", i, m, step));
    s.k = (i - m) / step + 1;
    s.n = whole(*count, "SLURM_ARRAY_TASK_COUNT", 1);
    return true;
  };
  if (text == "auto") {
    if (!from_slurm())
      throw ConfigError("command line", "--shard",
                        "'auto' needs a Slurm job array (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN and "
                        "SLURM_ARRAY_TASK_COUNT); a Kubernetes Indexed Job gives only its index: use auto/N");
  } else if (text.rfind("auto/", 0) == 0) {
    const std::size_t n = whole(text.substr(5), "N", 1);
    if (auto index = var("JOB_COMPLETION_INDEX")) {
      s.k = whole(*index, "JOB_COMPLETION_INDEX", 0) + 1;
      s.n = n;
    } else if (from_slurm()) {
      if (s.n != n)
        throw ConfigError("command line", "--shard",
                          fmt::format("auto/{} but the Slurm array has {} tasks", n, s.n));
    } else {
      throw ConfigError("command line", "--shard",
                        "'auto/N' needs JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) or a Slurm job array");
    }
  } else {
    const auto slash = text.find('/');
    if (slash == std::string::npos)
      throw ConfigError("command line", "--shard", fmt::format("'{}': expected K/N, auto or auto/N", text));
    s.k = whole(text.substr(0, slash), "K", 1);
    s.n = whole(text.substr(slash + 1), "N", 1);
  }
  if (s.k > s.n) throw ConfigError("command line", "--shard", fmt::format("shard {} of {}: K must be 1 to N", s.k, s.n));
  return s;
}

}  // namespace slubsim
