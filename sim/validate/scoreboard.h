// The scoreboard as text (stdout), markdown (scoreboard.md) and JSON (scoreboard.json), and the
// default main job's table of one experiment. Output bytes depend only on the scores.
#pragma once
#include <string>
#include <vector>

#include "sim/config/config.h"
#include "sim/validate/score.h"

namespace slubsim {

std::string scoreboard_text(const Scoreboard& b);
std::string scoreboard_markdown(const Scoreboard& b);
json scoreboard_json(const Scoreboard& b);

// Simulated vs published of one experiment on one topology: per row, every variant's
// throughput and each variant's change against the baseline variant, published beside.
// stats[i] is the stats.json of e.variants[i] (null for an excluded variant).
struct TableSettings {
  std::string duration, warmup;  // as run
  bool shortened = false;        // shorter than the experiment file's, for the default job
};
std::string experiment_table(const Experiment& e, const TopologyScore& t, const std::vector<json>& stats,
                             const TableSettings& s);

}  // namespace slubsim
