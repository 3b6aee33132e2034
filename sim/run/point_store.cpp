#include "sim/run/point_store.h"

#include <type_traits>
#include <variant>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace slubsim {

namespace fs = std::filesystem;

namespace {

constexpr int kFormat = 5;  // the store's layout version (4: RCU callbacks invoked, and in a flood; 5: the floods entered): a store of another version is refused
// 3: a point's window and settle report
// 2 (2026-12-01): host seconds left the index for points/host.json, so that an index is a
// deterministic function of the job and its finished points

// --- the RunResult codec ---------------------------------------------------------------------
// One list of (name, member) per struct, walked both ways, so that writing and reading cannot
// disagree about a field.

// Writing: every value to JSON.
struct Writer {
  json& out;
  template <class V>
  void operator()(const char* name, const V& v) const {
    out[name] = encode(v);
  }
  static json encode(std::int64_t v) { return v; }
  static json encode(std::uint64_t v) { return v; }
  static json encode(std::uint32_t v) { return v; }
  static json encode(int v) { return v; }
  static json encode(double v) { return v; }
  static json encode(bool v) { return v; }
  static json encode(const std::string& v) { return v; }
  template <class V, std::size_t N>
  static json encode(const std::array<V, N>& a) {
    json j = json::array();
    for (const auto& v : a) j.push_back(encode(v));
    return j;
  }
  template <class V>
  static json encode(const std::vector<V>& a) {
    json j = json::array();
    for (const auto& v : a) j.push_back(encode(v));
    return j;
  }
  template <class A, class B>
  static json encode(const std::pair<A, B>& p) {
    return json::array({encode(p.first), encode(p.second)});
  }
  template <class S>
  static auto encode(const S& s) -> decltype(visit(const_cast<S&>(s), std::declval<Writer&>()), json()) {
    json j = json::object();
    Writer w{j};
    visit(const_cast<S&>(s), w);
    return j;
  }
};

// Reading: every value from JSON, with the file named in any error.
struct Reader {
  const json& in;
  const std::string& file;
  template <class V>
  void operator()(const char* name, V& v) const {
    auto it = in.find(name);
    if (it == in.end()) throw ConfigError(file, name, "missing field (a damaged point file)");
    try {
      decode(*it, v, file);
    } catch (const ConfigError& e) {
      // Name the field, its path within the struct that holds it first: "rcu_floods.cpus".
      throw ConfigError(file, e.field().empty() ? name : fmt::format("{}.{}", name, e.field()), e.problems().front().message);
    }
  }
  [[noreturn]] static void bad(const std::string& file, const char* what) {
    throw ConfigError(file, "", fmt::format("expected {} (a damaged point file)", what));
  }
  static void decode(const json& j, std::int64_t& v, const std::string& f) {
    if (!j.is_number_integer()) bad(f, "an integer");
    v = j.get<std::int64_t>();
  }
  static void decode(const json& j, std::uint64_t& v, const std::string& f) {
    if (!j.is_number_unsigned() && !(j.is_number_integer() && j.get<std::int64_t>() >= 0)) bad(f, "a count");
    v = j.get<std::uint64_t>();
  }
  static void decode(const json& j, std::uint32_t& v, const std::string& f) {
    std::uint64_t w = 0;
    decode(j, w, f);
    v = static_cast<std::uint32_t>(w);
  }
  static void decode(const json& j, int& v, const std::string& f) {
    std::int64_t w = 0;
    decode(j, w, f);
    v = static_cast<int>(w);
  }
  static void decode(const json& j, double& v, const std::string& f) {
    if (!j.is_number()) bad(f, "a number");
    v = j.get<double>();
  }
  static void decode(const json& j, bool& v, const std::string& f) {
    if (!j.is_boolean()) bad(f, "true or false");
    v = j.get<bool>();
  }
  static void decode(const json& j, std::string& v, const std::string& f) {
    if (!j.is_string()) bad(f, "a string");
    v = j.get<std::string>();
  }
  template <class V, std::size_t N>
  static void decode(const json& j, std::array<V, N>& a, const std::string& f) {
    if (!j.is_array() || j.size() != N) bad(f, "an array of the right length");
    for (std::size_t i = 0; i < N; ++i) decode(j[i], a[i], f);
  }
  template <class V>
  static void decode(const json& j, std::vector<V>& a, const std::string& f) {
    if (!j.is_array()) bad(f, "an array");
    a.resize(j.size());
    for (std::size_t i = 0; i < j.size(); ++i) decode(j[i], a[i], f);
  }
  template <class A, class B>
  static void decode(const json& j, std::pair<A, B>& p, const std::string& f) {
    if (!j.is_array() || j.size() != 2) bad(f, "a pair");
    decode(j[0], p.first, f);
    decode(j[1], p.second, f);
  }
  template <class S>
  static auto decode(const json& j, S& s, const std::string& f)
      -> decltype(visit(s, std::declval<Reader&>()), void()) {
    if (!j.is_object()) bad(f, "an object");
    Reader r{j, f};
    visit(s, r);
  }
};

}  // namespace

// The field lists (found by argument-dependent lookup from Writer and Reader).
template <class F>
void visit(TaskTime& x, F& f) {
  f("busy", x.busy);
  f("lock_wait", x.lock_wait);
  f("idle", x.idle);
}
template <class F>
void visit(LockStat& x, F& f) {
  f("acquisitions", x.acquisitions);
  f("contentions", x.contentions);
  f("acq_bounces", x.acq_bounces);
  f("con_bounces", x.con_bounces);
  f("wait_total", x.wait_total);
  f("wait_max", x.wait_max);
  f("wait_min", x.wait_min);
  f("hold_total", x.hold_total);
  f("hold_max", x.hold_max);
  f("hold_min", x.hold_min);
  f("handoffs", x.handoffs);
  f("handoff_total", x.handoff_total);
}
template <class F>
void visit(WaitTime& x, F& f) {
  f("slab", x.slab);
  f("nonslab", x.nonslab);
}
template <class F>
void visit(LockReport& x, F& f) {
  f("cls", x.cls);
  f("instance", x.instance);
  f("stat", x.stat);
  f("rwsem", x.rwsem);
  f("waited", x.waited);
}
template <class F>
void visit(StackWait& x, F& f) {
  f("cls", x.cls);
  f("stack", x.stack);
  f("time", x.time);
}
template <class F>
void visit(IntervalSample& x, F& f) {
  f("end", x.end);
  f("ops", x.ops);
  f("spin", x.spin);
}
template <class F>
void visit(SettleReport& x, F& f) {
  f("automatic", x.automatic);
  f("judged", x.judged);
  f("settled", x.settled);
  f("transient", x.transient);
  f("half_width", x.half_width);
  f("batches", x.batches);
  f("batch", x.batch);
  f("period", x.period);
  f("period_acf", x.period_acf);
  f("step", x.step);
  f("low", x.low);
  f("high", x.high);
  f("suggest_warmup", x.suggest_warmup);
  f("suggest_window", x.suggest_window);
  f("reason", x.reason);
}
template <class F>
void visit(FloodHistory& x, F& f) {
  f("cpus", x.cpus);
  f("first", x.first);
  f("last", x.last);
  f("exits", x.exits);
  f("queue_peak", x.queue_peak);
  f("qhimark", x.qhimark);
}
template <class F>
void visit(CacheReport& x, F& f);
template <class F>
void visit(RunResult& x, F& f) {
  f("nr_task", x.nr_task);
  f("ops_per_sec", x.ops_per_sec);
  f("idle_pct", x.idle_pct);
  f("task_ops", x.task_ops);
  f("window", x.window);
  f("warmup", x.warmup);
  f("settle", x.settle);
  f("task_time", x.task_time);
  f("locks", x.locks);
  f("stack_waits", x.stack_waits);
  f("events", x.events);
  f("requests", x.requests);
  f("end_time", x.end_time);
  f("caches", x.caches);
  f("slab_bytes", x.slab_bytes);
  f("alloc_failures", x.alloc_failures);
  f("pgalloc", x.pgalloc);
  f("pgfree", x.pgfree);
  f("ksoftirqd_runs", x.ksoftirqd_runs);
  f("grace_periods", x.grace_periods);
  f("rcu_callbacks", x.rcu_callbacks);
  f("rcu_flood_callbacks", x.rcu_flood_callbacks);
  f("rcu_floods", x.rcu_floods);
  f("trace_skipped_frees", x.trace_skipped_frees);
  f("per_op", x.per_op);
  f("interval", x.interval);
  f("samples", x.samples);
}

}  // namespace slubsim

namespace slubsim::slub {
template <class F>
void visit(Geometry& x, F& f) {
  f("size", x.size);
  f("offset", x.offset);
  f("align", x.align);
  f("order", x.order);
  f("objects", x.objects);
  f("min_partial", x.min_partial);
  f("cpu_partial", x.cpu_partial);
  f("cpu_partial_slabs", x.cpu_partial_slabs);
}
template <class F>
void visit(LayerCounts& x, F& f) {
  f("cpu_freelist", x.cpu_freelist);
  f("cpu_partial", x.cpu_partial);
  f("node_partial", x.node_partial);
  f("sheaves", x.sheaves);
  f("barn", x.barn);
  f("rcu", x.rcu);
  f("prefilled", x.prefilled);
  f("in_use", x.in_use);
  f("slabs", x.slabs);
  f("slab_bytes", x.slab_bytes);
  f("sheaf_structs", x.sheaf_structs);
  f("sheaf_bytes", x.sheaf_bytes);
}
}  // namespace slubsim::slub

namespace slubsim {

template <class F>
void visit(CacheReport& x, F& f) {
  f("name", x.name);
  f("geo", x.geo);
  f("stats", x.stats);
  f("layers", x.layers);
}

// Folded stacks of all task time (--why) are written only when collected, so a point without
// them reads as before.
json run_result_json(const RunResult& r) {
  json j = Writer::encode(r);
  if (!r.cpu_stacks.empty()) {
    json s = json::array();
    for (const auto& f : r.cpu_stacks) s.push_back(json::array({f.stack, f.time}));
    j["cpu_stacks"] = s;
  }
  // The barns' high-water marks at limit checks: [full, empty] per cache, in caches order (points
  // written before 2026-12-03 have none: read as unknown).
  json seen = json::array();
  for (const auto& c : r.caches) seen.push_back(json::array({c.barn_full_seen, c.barn_empty_seen}));
  if (!r.caches.empty()) j["barn_seen"] = seen;
  // Slab reuse per cache, in caches order (points written before 2026-12-06 have none: zeros).
  json reuse = json::array();
  for (const auto& c : r.caches) reuse.push_back(c.reuse);
  if (!r.caches.empty()) j["slab_reuse"] = reuse;
  return j;
}

RunResult run_result_from_json(const json& j, const std::string& file) {
  RunResult r;
  Reader::decode(j, r, file);
  if (auto it = j.find("cpu_stacks"); it != j.end()) {
    if (!it->is_array()) Reader::bad(file, "cpu_stacks as a list");
    for (const auto& e : *it) {
      if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number_integer())
        Reader::bad(file, "a [stack, time] pair in cpu_stacks");
      r.cpu_stacks.push_back({e[0].get<std::string>(), e[1].get<Time>()});
    }
  }
  if (auto it = j.find("barn_seen"); it != j.end()) {
    if (!it->is_array() || it->size() != r.caches.size()) Reader::bad(file, "barn_seen as one pair per cache");
    for (std::size_t i = 0; i < r.caches.size(); ++i) {
      const json& e = (*it)[i];
      if (!e.is_array() || e.size() != 2 || !e[0].is_number_integer() || !e[1].is_number_integer())
        Reader::bad(file, "a [full, empty] pair in barn_seen");
      r.caches[i].barn_full_seen = e[0].get<int>();
      r.caches[i].barn_empty_seen = e[1].get<int>();
    }
  } else {
    for (auto& c : r.caches) c.barn_full_seen = c.barn_empty_seen = kUnknownSeen;
  }
  if (auto it = j.find("slab_reuse"); it != j.end()) {
    if (!it->is_array() || it->size() != r.caches.size()) Reader::bad(file, "slab_reuse as one list per cache");
    for (std::size_t i = 0; i < r.caches.size(); ++i) {
      const json& e = (*it)[i];
      if (!e.is_array() || e.size() != static_cast<std::size_t>(slub::kNrReuse))
        Reader::bad(file, "one count per slab-reuse counter in slab_reuse");
      for (int k = 0; k < slub::kNrReuse; ++k) {
        if (!e[k].is_number_unsigned()) Reader::bad(file, "a count (an integer >= 0) in slab_reuse");
        r.caches[i].reuse[k] = e[k].get<std::uint64_t>();
      }
    }
  }
  return r;
}

// --- the job's description -------------------------------------------------------------------

namespace {

// FNV-1a, 64 bits: a digest of a file's bytes, to notice an input edited between runs.
std::string digest_of_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, "", "cannot read file (an input of the job)");
  std::uint64_t h = 1469598103934665603ull;
  char buf[1 << 14];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      h ^= static_cast<unsigned char>(buf[i]);
      h *= 1099511628211ull;
    }
  }
  return fmt::format("{:016x}", h);
}

}  // namespace

json request_fields(const JobRequest& r) {
  json d = json::object();
  for (const RequestField& f : request_field_list())
    std::visit(
        [&](auto member) {
          const auto& value = r.*member;
          using V = std::decay_t<decltype(value)>;
          bool is_default = false;
          if constexpr (std::is_same_v<V, std::string>) is_default = value.empty();
          else if constexpr (std::is_same_v<V, bool>) is_default = !value;
          if (f.listed_when_default || !is_default) d[f.key] = value;
        },
        f.member);
  return d;
}

json job_description(const Job& job) {
  json d = request_fields(job.request);
  json inputs = json::object();
  for (const auto& [role, file] : job.inputs) inputs[role] = digest_of_file(file);
  d["inputs"] = inputs;
  return d;
}

std::string point_id(const Job& job, const PointKey& k) {
  return fmt::format("v{}-t{}-n{}-r{}", k.variant, k.row, job.nr_tasks[k.row], k.run + 1);
}

// --- files -----------------------------------------------------------------------------------

void write_file_atomically(const std::string& path, const std::string& text) {
  const fs::path p(path);
  std::error_code ec;
  // A bare file name is in the current directory, which exists.
  if (!p.parent_path().empty()) fs::create_directories(p.parent_path(), ec);
  if (ec) throw ConfigError(p.parent_path().string(), "--out", "cannot create directory: " + ec.message());
  // Unique per process and thread, so that concurrent writers never share a temporary.
  static std::atomic<std::uint64_t> serial{0};
  const fs::path tmp = p.parent_path() / fmt::format(".{}.tmp.{}.{}", p.filename().string(), getpid(), ++serial);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      throw ConfigError(path, "--out", "cannot write file");
    }
  }
  fs::rename(tmp, p, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw ConfigError(path, "--out", "cannot write file: " + ec.message());
  }
}

// The first difference between two descriptions, for the refusal message.
std::string first_difference(const json& was, const json& now) {
  for (auto it = now.begin(); it != now.end(); ++it) {
    auto w = was.find(it.key());
    if (w == was.end()) return fmt::format("'{}' is new", it.key());
    if (*w != *it) {
      if (it->is_object() && w->is_object()) return it.key() + "." + first_difference(*w, *it);
      return fmt::format("{} was {}, now {}", it.key(), w->dump(), it->dump());
    }
  }
  for (auto it = was.begin(); it != was.end(); ++it)
    if (!now.contains(it.key())) return fmt::format("'{}' is gone", it.key());
  return "";
}


namespace {

json index_entry(const PointKey& k) {
  json entry = json::object();
  entry["variant"] = k.variant;
  entry["row"] = k.row;
  entry["run"] = k.run;
  return entry;
}

json read_json(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_json_text(ss.str(), p.string());
}

}  // namespace

PointStore::PointStore(std::string dir, const Job& job, bool resume)
    : dir_(std::move(dir)), job_(job), description_(job_description(job)) {
  const fs::path index = fs::path(dir_) / "index.json";
  if (!path_exists(index)) return;  // a fresh store (resume or not: nothing to resume)
  if (!resume)
    throw ConfigError(index.string(), "--out",
                      "this directory holds the points of an earlier job: add --resume to finish it, or "
                      "give another --out");
  const json doc = read_json(index);
  const std::string file = index.string();
  if (!doc.is_object() || !doc.contains("format") || doc["format"] != kFormat || !doc.contains("job") ||
      !doc.contains("points") || !doc["points"].is_object())
    throw ConfigError(file, "", fmt::format("not a store index of format {} (remove the directory to start over)",
                                            kFormat));
  if (doc["job"] != description_)
    throw ConfigError(file, "job",
                      fmt::format("--resume of a different job ({}): give the same options and inputs, or "
                                  "another --out",
                                  first_difference(doc["job"], description_)));
  // Host seconds are for reports only: a missing or damaged host file costs them, not the points.
  json host = json::object();
  const fs::path hf = fs::path(dir_) / "points" / "host.json";
  if (path_exists(hf)) {
    try {
      host = read_json(hf);
    } catch (const ConfigError&) {
    }
    if (!host.is_object() || !host.contains("wall_s") || !host["wall_s"].is_object()) host = json::object();
    else host = host["wall_s"];
  }
  // A point's file is its record (written whole, then renamed); the index may lag behind it by
  // up to kIndexGap, so the files are what is read.
  for (const auto& k : job_points(job)) {
    const std::string id = point_id(job, k);
    const fs::path pf = fs::path(dir_) / "points" / (id + ".json");
    if (!path_exists(pf)) continue;
    RunResult r = run_result_from_json(read_json(pf), pf.string());
    const auto w = host.find(id);
    const double wall = w != host.end() && w->is_number() ? w->get<double>() : 0.0;
    loaded_.emplace(id, std::make_pair(std::move(r), wall));
    points_[id] = index_entry(k);
    wall_[id] = wall;
  }
}

bool PointStore::has(const std::string& id) const {
  std::lock_guard<std::mutex> g(mu_);
  return points_.contains(id);
}

void PointStore::save(const PointKey& k, const RunResult& r, double wall_seconds, bool write_index) {
  const std::string id = point_id(job_, k);
  const std::string text = run_result_json(r).dump() + "\n";
  write_file_atomically((fs::path(dir_) / "points" / (id + ".json")).string(), text);
  std::lock_guard<std::mutex> g(mu_);
  // Sorted by id, so that the index does not depend on the order the points finished in.
  points_[id] = index_entry(k);
  wall_[id] = wall_seconds;
  dirty_ = true;
  // Rewriting the whole index after every point costs O(points) each time: at most once per
  // kIndexGap, and at flush().
  if (write_index && std::chrono::steady_clock::now() - last_index_ >= kIndexGap) write_index_locked();
}

void PointStore::flush() {
  std::lock_guard<std::mutex> g(mu_);
  if (dirty_ || !path_exists(fs::path(dir_) / "index.json")) write_index_locked();
}

void PointStore::write_index_locked() {
  json doc = json::object();
  doc["format"] = kFormat;
  doc["job"] = description_;
  json points = json::object();
  for (const auto& [id, entry] : points_) points[id] = entry;
  doc["points"] = std::move(points);
  json host = json::object();
  host["note"] = "host wall seconds of each point's simulation; not deterministic, so kept out of index.json";
  json wall = json::object();
  for (const auto& [id, w] : wall_) wall[id] = w;
  host["wall_s"] = std::move(wall);
  // The points' host file first: the index is what a reader trusts, so it goes last.
  write_file_atomically((fs::path(dir_) / "points" / "host.json").string(), host.dump(1) + "\n");
  write_file_atomically((fs::path(dir_) / "index.json").string(), doc.dump(1) + "\n");
  dirty_ = false;
  last_index_ = std::chrono::steady_clock::now();
}

}  // namespace slubsim
