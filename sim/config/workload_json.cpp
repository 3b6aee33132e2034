#include "sim/config/workload_json.h"

#include <fmt/format.h>
#include <functional>
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

Time work_ns(const JsonView& v, const std::map<std::string, Time>& params);

void parse_object_step(const JsonView& v, Step& s, Program& p, const std::map<std::string, Time>& params) {
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
  if (auto g = v.find("gfp")) {
    if (s.op != StepOp::Alloc) g->fail("only alloc takes a gfp");
    auto gfp = g->str();
    if (gfp == "nowait") s.nowait = true;
    else if (gfp != "kernel") g->fail(fmt::format("unknown gfp '{}' (kernel, nowait)", gfp));
  }
  if (auto to = v.find("to")) {
    if (!alloc) to->fail("only allocations take a destination pool");
    auto t = to->str();
    if (t == "next-node") {
      if (p.pools[s.pool].scope != Scope::Node) to->fail("next-node needs a node-scoped pool");
      s.to = Dest::NextNode;
    } else if (t == "every-task" || t == "round-robin") {
      if (p.pools[s.pool].scope != Scope::Task) to->fail(fmt::format("{} needs a task-scoped pool", t));
      if (s.op == StepOp::AllocFromSheaf) to->fail(fmt::format("{} takes alloc or alloc_bulk", t));
      s.to = t == "every-task" ? Dest::EveryTask : Dest::RoundRobin;
      p.pools[s.pool].handoff = true;
    } else if (t != "own") {
      to->fail(fmt::format("unknown destination '{}' (own, next-node, every-task, round-robin)", t));
    }
  }
  if (auto e = v.find("each_ns")) {
    if (s.op != StepOp::Alloc && s.op != StepOp::Free && s.op != StepOp::KfreeRcu && s.op != StepOp::CallRcu)
      e->fail("only alloc, free, kfree_rcu and call_rcu take each_ns");
    s.each_ns = work_ns(*e, params);
  }
  if (auto o = v.find("order")) {
    if (!takes_from_its_pool(s)) o->fail("only frees take an order");
    auto order = o->str();
    if (order == "shuffled") s.shuffled = true;
    else if (order != "fifo") o->fail(fmt::format("unknown order '{}' (fifo, shuffled)", order));
  }
  if (auto c = v.find("count_own")) {
    if (s.op != StepOp::Free) c->fail("only free counts operations");
    s.count_own = c->raw().is_boolean() && c->raw().get<bool>();
    if (!c->raw().is_boolean()) c->fail("must be true or false");
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
      parse_object_step(v, s, p, params);
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
    if (!program_fills_pool(p, s.pool))
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
      if (auto l = pools->at(name).find("limit")) d.limit = static_cast<int>(l->integer_in(1, 10000000));
      if (auto f = pools->at(name).find("full")) {
        if (!d.limit) f->fail("only a pool with a limit is ever full");
        const std::string m = f->str();
        if (m == "drop") d.full = PoolDecl::Full::Drop;
        else if (m == "skip") d.full = PoolDecl::Full::Skip;
        else if (m == "block") d.full = PoolDecl::Full::Block;
        else f->fail(fmt::format("unknown mode '{}' (drop, skip, block)", m));
      }
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
  if (auto g = root.find("groups")) p.groups = static_cast<int>(g->integer_in(1, 1000000));
  if (auto k = root.find("tasks_per_cpu")) {
    if (!root.find("roles")) k->fail("only roles time-share a CPU: a program without roles runs one task per CPU");
    p.tasks_per_cpu = static_cast<int>(k->integer_in(1, 4096));
  }
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
  if (auto roles = root.find("roles")) {
    if (root.find("program")) root.at("program").fail("a workload has a program or roles, not both");
    if (roles->keys().empty()) roles->fail("roles need at least one role");
    p.ops_per_iteration = 0;
    int counting = 0;
    std::vector<JsonView> role_steps;
    for (const auto& name : roles->keys()) {
      auto v = roles->at(name);
      Role r;
      r.name = name;
      r.ops_per_iteration = static_cast<int>(v.at("ops_per_iteration").integer_in(0, 1000000));
      if (auto w = v.find("wait")) {
        r.wait_pool = pool_index(*w, p);
        if (p.pools[static_cast<std::size_t>(r.wait_pool)].scope != Scope::Task)
          w->fail("a role waits on its own instance of a task-scoped pool");
      }
      if (auto in = v.find("instance")) r.instance = static_cast<int>(in->integer_in(0, 1000000));
      auto steps = v.at("program");
      if (steps.size() == 0) steps.fail("a role needs at least one step");
      r.steps = parse_steps(steps, p, 0, params);
      role_steps.push_back(steps);
      for (const Step& st : r.steps) counting += st.count_own ? 1 : 0;
      counting += r.ops_per_iteration > 0 ? 1 : 0;
      p.roles.push_back(std::move(r));
    }
    if (counting == 0)
      roles->fail("no role counts operations (ops_per_iteration > 0 or a free step with count_own)");
    p.slice = work_ns(root.at("slice"), params);
    if (p.slice <= 0) root.at("slice").fail("must be positive");
    p.switch_ns = work_ns(root.at("switch_ns"), params);
    if (p.switch_ns <= 0) root.at("switch_ns").fail("must be positive: a CPU whose roles all wait would switch forever at one instant");
    for (std::size_t i = 0; i < p.roles.size(); ++i) check_pools_filled(role_steps[i], p.roles[i].steps, p);
  } else {
    p.ops_per_iteration = static_cast<int>(root.at("ops_per_iteration").integer_in(1, 1000000));
    auto program = root.at("program");
    if (program.size() == 0) program.fail("a program needs at least one step");
    p.steps = parse_steps(program, p, 0, params);
    check_pools_filled(program, p.steps, p);
  }
  // count_own counts the objects a task put into its own instance: a pool others put objects into.
  std::function<void(const JsonView&, const std::vector<Step>&)> check_own = [&](const JsonView& arr,
                                                                                 const std::vector<Step>& steps) {
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].op == StepOp::Lock) check_own(arr.at(i).at("body"), steps[i].body);
      if (steps[i].count_own && !p.pools[static_cast<std::size_t>(steps[i].pool)].handoff)
        arr.at(i).at("count_own").fail(fmt::format(
            "pool '{}' takes no hand-offs (every-task, round-robin): every object in it is the task's own",
            p.pools[static_cast<std::size_t>(steps[i].pool)].name));
    }
  };
  if (p.roles.empty()) check_own(root.at("program"), p.steps);
  for (const auto& r : p.roles) check_own(root.at("roles").at(r.name).at("program"), r.steps);
  for (const auto& pd : p.pools)
    if (pd.full == PoolDecl::Full::Block && p.roles.empty())
      root.at("pools").at(pd.name).at("full").fail("block ends a role's turn: only a program with roles blocks");
  for (const auto& pd : p.pools)
    if (pd.limit && !pd.handoff)
      root.at("pools").at(pd.name).at("limit").fail("only a pool that takes hand-offs (every-task, round-robin) has a limit");
  root.check_known_fields();
  return p;
}

}  // namespace slubsim
