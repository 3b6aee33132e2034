#include "sim/config/workload_json.h"

#include <fmt/format.h>
#include <map>

namespace slubsim {

namespace {

Scope parse_scope(const JsonView& v) {
  auto s = v.str();
  if (s == "node") return Scope::Node;
  if (s == "global") return Scope::Global;
  if (s == "mm") return Scope::Mm;
  if (s == "task") return Scope::Task;
  v.fail(fmt::format("unknown scope '{}' (node, global, mm, task)", s));
}

template <class Decl>
int find_decl(const std::vector<Decl>& decls, const JsonView& name_v, const char* what) {
  auto name = name_v.str();
  for (std::size_t i = 0; i < decls.size(); ++i)
    if (decls[i].name == name) return static_cast<int>(i);
  name_v.fail(fmt::format("no {} named '{}' is declared", what, name));
}

const std::map<std::string, StepOp> kObjectOps = {
    {"alloc", StepOp::Alloc},         {"free", StepOp::Free},
    {"alloc_bulk", StepOp::AllocBulk}, {"free_bulk", StepOp::FreeBulk},
    {"kfree_rcu", StepOp::KfreeRcu},  {"call_rcu", StepOp::CallRcu},
    {"prefill", StepOp::Prefill},
    {"alloc_from_sheaf", StepOp::AllocFromSheaf}, {"return_sheaf", StepOp::ReturnSheaf}};

int cache_index(const JsonView& v, Program& p) {
  auto name = v.str();
  for (std::size_t i = 0; i < p.caches.size(); ++i)
    if (p.caches[i] == name) return static_cast<int>(i);
  p.caches.push_back(name);
  p.cache_paths.push_back(v.path());
  return static_cast<int>(p.caches.size() - 1);
}

int pool_index(const JsonView& v, const Program& p) {
  auto name = v.str();
  for (std::size_t i = 0; i < p.pools.size(); ++i)
    if (p.pools[i].name == name) return static_cast<int>(i);
  v.fail(fmt::format("no pool named '{}' is declared", name));
}

void parse_object_step(const JsonView& v, Step& s, Program& p) {
  s.cache = cache_index(v.at("cache"), p);
  if (s.op == StepOp::Prefill || s.op == StepOp::ReturnSheaf) {
    if (auto c = v.find("count")) s.count = static_cast<int>(c->integer_in(1, 4096));
    else if (s.op == StepOp::Prefill) v.at("count");
    return;
  }
  s.pool = pool_index(v.at("pool"), p);
  if (auto c = v.find("count")) s.count = static_cast<int>(c->integer_in(1, 100000));
  if (auto k = v.find("keep")) {
    if (!takes_from_its_pool(s)) k->fail("only frees keep objects back");
    s.keep = static_cast<int>(k->integer_in(0, 10000000));
  }
  const bool alloc = fills_its_pool(s);
  if (auto node = v.find("node")) {
    if (s.op != StepOp::Alloc) node->fail("only alloc takes a node");
    if (node->raw().is_string()) {
      if (node->str() != "local") node->fail("a node is a number or \"local\"");
      s.node = -2;
    } else {
      s.node = static_cast<int>(node->integer_in(0, 4095));
    }
  }
  if (auto to = v.find("to")) {
    if (!alloc) to->fail("only allocations take a destination pool");
    auto t = to->str();
    if (t == "next-node") {
      if (p.pools[s.pool].scope != Scope::Node) to->fail("next-node needs a node-scoped pool");
      s.to_next_node = true;
    } else if (t != "own") {
      to->fail(fmt::format("unknown destination '{}' (own, next-node)", t));
    }
  }
}

// Named parameters of a program ("parameters": {"mmap_locked_ns": {"value", "source"}}), used
// as "ns": "$mmap_locked_ns" so that a calibration changes one place (--set workload.parameters.X=...).
Time work_ns(const JsonView& v, const std::map<std::string, Time>& params) {
  if (v.raw().is_string()) {
    auto ref = v.str();
    if (ref.empty() || ref[0] != '$') v.fail("a time is a number of ns or \"$parameter\"");
    auto it = params.find(ref.substr(1));
    if (it == params.end()) v.fail(fmt::format("no parameter named '{}'", ref.substr(1)));
    return it->second;
  }
  return v.time_ns();
}

std::vector<Step> parse_steps(const JsonView& arr, Program& p, int depth,
                              const std::map<std::string, Time>& params) {
  if (depth > 8) arr.fail("locks nest deeper than 8");
  std::vector<Step> out;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    auto v = arr.at(i);
    Step s;
    auto op = v.at("op").str();
    if (op == "work") {
      s.op = StepOp::Work;
      s.ns = work_ns(v.at("ns"), params);
      if (auto d = v.find("distribution")) {
        auto dist = d->str();
        if (dist == "exponential") {
          s.exponential = true;
        } else if (dist == "uniform") {
          auto sp = v.at("spread");
          s.spread = sp.number();
          if (s.spread < 0 || s.spread >= 1) sp.fail("must be in [0, 1)");
        } else if (dist != "fixed") {
          d->fail(fmt::format("unknown distribution '{}' (fixed, uniform, exponential)", dist));
        }
      }
    } else if (op == "touch") {
      s.op = StepOp::Touch;
      s.object = find_decl(p.lines, v.at("line"), "line");
      auto access = v.at("access").str();
      if (access == "read") s.write = false;
      else if (access != "write") v.at("access").fail(fmt::format("unknown access '{}' (read, write)", access));
    } else if (op == "lock") {
      s.op = StepOp::Lock;
      s.object = find_decl(p.locks, v.at("lock"), "lock");
      s.kind = p.locks[s.object].kind;
      if (auto m = v.find("mode")) {
        auto mode = m->str();
        if (mode == "read") s.write = false;
        else if (mode != "write") m->fail(fmt::format("unknown mode '{}' (read, write)", mode));
        if (!s.write && s.kind == LockKind::Spinlock) m->fail("a spinlock has no read mode");
      }
      s.body = parse_steps(v.at("body"), p, depth + 1, params);
    } else if (auto it = kObjectOps.find(op); it != kObjectOps.end()) {
      s.op = it->second;
      parse_object_step(v, s, p);
    } else {
      v.at("op").fail(fmt::format(
          "unknown op '{}' (work, touch, lock, alloc, free, alloc_bulk, free_bulk, kfree_rcu, call_rcu, "
          "prefill, alloc_from_sheaf, return_sheaf)",
          op));
    }
    if (auto ks = v.find("kernels"))
      for (std::size_t k = 0; k < ks->size(); ++k) s.kernels.push_back(ks->at(k).str());
    out.push_back(std::move(s));
  }
  return out;
}

// A step that takes objects from a pool needs a step that puts them there: a free from a pool
// nothing fills would free nothing, forever (workloads/program.h, unfilled_pool).
void check_pools_filled(const JsonView& arr, const std::vector<Step>& steps, const Program& p) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    if (s.op == StepOp::Lock) check_pools_filled(arr.at(i).at("body"), s.body, p);
    if (!takes_from_its_pool(s)) continue;
    if (!fills_pool(p.steps, s.pool))
      arr.at(i).at("pool").fail(fmt::format(
          "frees from pool '{}', which no step of the program allocates into (add an alloc or alloc_bulk "
          "step with \"pool\": \"{}\")",
          p.pools[static_cast<std::size_t>(s.pool)].name, p.pools[static_cast<std::size_t>(s.pool)].name));
  }
}

}  // namespace

Program parse_workload(const json& doc, const std::string& file) {
  JsonView root(doc, file);
  if (!doc.is_object()) root.fail("a workload is a JSON object");
  Program p;
  p.file = file;
  p.name = root.at("name").str();
  p.description = root.at("description").str();
  root.at("source").str();
  p.ops_per_iteration = static_cast<int>(root.at("ops_per_iteration").integer_in(1, 1000000));
  if (auto locks = root.find("locks")) {
    for (const auto& name : locks->keys()) {
      auto v = locks->at(name);
      LockDecl d;
      d.name = name;
      auto kind = v.at("kind").str();
      if (kind == "spinlock") d.kind = LockKind::Spinlock;
      else if (kind == "rwsem") d.kind = LockKind::Rwsem;
      else v.at("kind").fail(fmt::format("unknown lock kind '{}' (spinlock, rwsem)", kind));
      d.scope = parse_scope(v.at("scope"));
      p.locks.push_back(d);
    }
  }
  if (auto pools = root.find("pools")) {
    for (const auto& name : pools->keys()) {
      PoolDecl d;
      d.name = name;
      d.scope = parse_scope(pools->at(name).at("scope"));
      p.pools.push_back(d);
    }
  }
  if (auto lines = root.find("lines")) {
    for (const auto& name : lines->keys()) {
      LineDecl d;
      d.name = name;
      d.scope = parse_scope(lines->at(name).at("scope"));
      p.lines.push_back(d);
    }
  }
  auto program = root.at("program");
  if (program.size() == 0) program.fail("a program needs at least one step");
  std::map<std::string, Time> params;
  if (auto ps = root.find("parameters"))
    for (const auto& name : ps->keys()) {
      const auto v = ps->at(name);
      params[name] = v.time_ns();
      ProgramParameter pp{name, params[name], "", false};
      if (v.raw().is_object() && v.raw().contains("source") && v.raw()["source"].is_string())
        pp.source = v.raw()["source"].get<std::string>();
      pp.placeholder = pp.source.rfind("placeholder", 0) == 0;
      p.parameters.push_back(pp);
    }
  p.steps = parse_steps(program, p, 0, params);
  check_pools_filled(program, p.steps, p);
  root.check_known_fields();
  return p;
}

}  // namespace slubsim
