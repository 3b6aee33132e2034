// Shared test helpers: load presets from the source tree, run small simulations.
#pragma once
#include <string>

#include "sim/config/config.h"
#include "sim/config/costs.h"
#include "sim/validate/experiment.h"
#include "sim/machine/machine.h"
#include "sim/machine/topology.h"

namespace slubsim::test {

inline std::string source_dir() { return SLUBSIM_SOURCE_DIR; }

inline Machine preset(const std::string& name) {
  auto file = source_dir() + "/configs/topologies/" + name + ".json";
  return parse_topology(load_json_file(file), file);
}

inline Costs default_costs() {
  auto file = source_dir() + "/configs/costs/default.json";
  return parse_costs(load_json_file(file), file);
}

}  // namespace slubsim::test

#include "sim/run/runner.h"
#include "workloads/program.h"

namespace slubsim::test {

// think (private), then the node's spinlock held for cs. lock scope: node or global.
inline Program lock_program(Time think, Time cs, bool exponential, Scope scope = Scope::Global) {
  Program p;
  p.name = "test-lock";
  p.locks.push_back({"test_lock", LockKind::Spinlock, scope});
  Step work;
  work.op = StepOp::Work;
  work.ns = think;
  work.exponential = exponential;
  Step hold;
  hold.op = StepOp::Work;
  hold.ns = cs;
  Step lock;
  lock.op = StepOp::Lock;
  lock.object = 0;
  lock.body = {hold};
  p.steps = {work, lock};
  return p;
}

inline RunResult run_program(const Machine& m, const Costs& c, const Program& p, int nr_task,
                             Time duration, Mode mode = Mode::Process, std::uint64_t seed = 1,
                             Options opt = {}) {
  RunSpec s;
  s.machine = &m;
  s.costs = &c;
  s.program = &p;
  s.mode = mode;
  s.nr_task = nr_task;
  s.seed = seed;
  s.warmup = duration / 10;
  s.duration = duration;
  s.options = opt;
  return simulate(s);
}

inline LockStat lock_total(const RunResult& r, const std::string& cls) {
  LockStat s;
  for (const auto& l : r.locks)
    if (l.cls == cls) s.add(l.stat);
  return s;
}

// The field a ConfigError names for a broken experiment document, or "" if it parses.
inline std::string experiment_error_field(const json& doc) {
  try {
    parse_experiment(doc, "dir/x.json");
  } catch (const ConfigError& e) {
    return e.field();
  }
  return "";
}

}  // namespace slubsim::test

#include "sim/run/job.h"

namespace slubsim::test {

// A job of the source tree's configs: one workload on one topology and kernel.
inline JobRequest job_request(const std::string& topology, const std::string& workload, const std::string& kernel,
                              const std::string& nr_task, const std::string& duration, const std::string& warmup) {
  JobRequest r;
  r.home = source_dir();
  r.topology = topology;
  r.workload = workload;
  r.kernel = kernel;
  r.nr_task = nr_task;
  r.duration = duration;
  r.warmup = warmup;
  return r;
}

// Default costs with the part-by-part hand-off and no contender RMWs: the hand-off tests' base.
inline Costs mcs_costs_without_contender_rmw() {
  Costs c = default_costs();
  c.handoff = Costs::Handoff::Mcs;
  c.contender_rmw = false;
  return c;
}

}  // namespace slubsim::test
