// Shard K of N: which part of a fixed plan of points one host of a cluster runs (`sweep --shard`,
// `validate --shard`, `advise --shard`). Shard K runs the plan's points K, K+N, K+2N, ... (counted
// from 1), which spreads cheap and dear points over the shards.
#pragma once
#include <cstddef>
#include <functional>
#include <string>

namespace slubsim {

struct Shard {
  std::size_t k = 1, n = 1;
  bool contains(std::size_t plan_index) const { return plan_index % n == k - 1; }
  std::string text() const;
};

// "K/N"; "auto" takes K and N from a Slurm job array (SLURM_ARRAY_TASK_ID, _MIN, _STEP and
// _COUNT); "auto/N" takes K from a Kubernetes Indexed Job (JOB_COMPLETION_INDEX + 1) or, failing
// that, the Slurm array. `env` looks a variable up (getenv in main; a map in tests). Throws
// ConfigError naming --shard.
Shard parse_shard(const std::string& text, const std::function<const char*(const char*)>& env);

}  // namespace slubsim
