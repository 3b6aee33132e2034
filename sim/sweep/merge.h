// Joining a sweep's shards: `slubsim merge DIR... --out DIR`.
//
// Every DIR must hold the same sweep (sweep.json) made from the same inputs (each job's
// index.json description, with the digest of every file read, must equal this host's): a
// shard from another sweep, or configs changed since, is refused, naming the file and the first
// difference. Each finished point is copied once into OUT's point stores (the first DIR to hold
// it wins; every copy of a point is the same bytes, as points are deterministic), and every
// variant whose points are all present gets its stats.json, matrix.json and host.json, assembled
// exactly as a local sweep assembles them. OUT may be one of the DIRs, or a tree merged before.
#pragma once
#include <string>
#include <vector>

#include "sim/sweep/sweep.h"

namespace slubsim {

struct MergeOutcome {
  std::size_t points_total = 0, points_present = 0;
  std::size_t variants_total = 0, variants_complete = 0;
  std::vector<std::string> missing;  // the first missing point ids, in plan order
};

// `home`: where configs/ and workloads/ are found to resolve the sweep again.
MergeOutcome merge_sweeps(const std::vector<std::string>& dirs, const std::string& out, const std::string& home);

// A tree of sweeps, as `slubsim advise --shard` writes (its DIR holds kTreeMarker, not a
// sweep.json): every folder holding a sweep.json under any DIR is merged by its path under OUT
// (merge_sweeps of the DIRs that hold it). A missing point id is named "<path>/<id>".
inline constexpr const char* kTreeMarker = "advise-shard.json";
bool is_sweep_tree(const std::string& dir);
MergeOutcome merge_trees(const std::vector<std::string>& dirs, const std::string& out, const std::string& home);

}  // namespace slubsim
