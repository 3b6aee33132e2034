#include "sim/config/costs.h"

namespace slubsim {

Costs parse_costs(const json& doc, const std::string& file, std::shared_ptr<ReadLog> log) {
  JsonView root(doc, file, std::move(log));
  if (!doc.is_object()) root.fail("a cost model is a JSON object");
  Costs c;
  c.name = root.at("name").str();
  root.at("source").str();
  c.atomic_local = root.at("atomic_local_ns").time_ns();
  c.cache_hit = root.at("cache_hit_ns").time_ns();
  c.line_residency = from_ns(root.at("line_residency_us").sourced_value() * 1000.0);
  if (c.line_residency < 0) root.at("line_residency_us").at("value").fail("must not be negative");
  c.parallel_reads = root.at("line_reads").two_way("serial", "parallel");
  c.posted_stores = root.at("stores").two_way("stall", "posted");
  auto q = root.at("qspinlock");
  auto model = q.at("handoff");
  model.at("source").str();
  const std::string h = model.at("value").str();
  if (h == "mcs") c.handoff = Costs::Handoff::Mcs;
  else if (h == "alpha") c.handoff = Costs::Handoff::Alpha;
  else model.at("value").fail("must be \"mcs\" or \"alpha\"");
  auto alpha = q.at("handoff_alpha");
  c.handoff_alpha = alpha.sourced_value();
  if (c.handoff_alpha < 0 || c.handoff_alpha > 10) alpha.at("value").fail("must be between 0 and 10");
  auto rmw = q.at("contender_rmw");
  rmw.at("source").str();
  c.contender_rmw = rmw.at("value").boolean();
  c.rwsem_wakeup = root.at("rwsem").at("wakeup_ns").time_ns();
  return c;
}

}  // namespace slubsim
