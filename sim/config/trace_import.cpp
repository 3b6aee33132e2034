#include "sim/config/trace_import.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "sim/config/config.h"

namespace slubsim {

namespace {

using std::string_view;

[[noreturn]] void fail(const std::string& file, int line, const std::string& message) {
  throw ConfigError(file, fmt::format("line {}", line), message);
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

string_view trim(string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// The next whitespace-separated token of s (consumed), or empty at the end.
string_view next_token(string_view& s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  std::size_t n = 0;
  while (n < s.size() && !is_space(s[n])) ++n;
  string_view tok = s.substr(0, n);
  s.remove_prefix(n);
  return tok;
}

template <class T>
std::optional<T> parse_uint(string_view s, int base = 10) {
  if (s.empty()) return std::nullopt;
  T v{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

bool all_digits(string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "SECONDS.FRACTION" or "NS.FRACTION" as a whole part and picoseconds: `unit_ps` is the value
// of one whole unit, the fraction has at most as many digits as resolve to whole picoseconds.
struct Stamp {
  std::int64_t whole = 0;
  std::int64_t frac_ps = 0;
};
std::optional<Stamp> parse_stamp(string_view s, std::int64_t unit_ps, int max_frac_digits, bool need_frac) {
  auto dot = s.find('.');
  string_view whole = s.substr(0, dot);
  string_view frac = dot == string_view::npos ? string_view{} : s.substr(dot + 1);
  if (!all_digits(whole) || whole.size() > 15) return std::nullopt;
  if (dot != string_view::npos && (!all_digits(frac) || frac.size() > static_cast<std::size_t>(max_frac_digits)))
    return std::nullopt;
  if (need_frac && dot == string_view::npos) return std::nullopt;
  Stamp st;
  st.whole = *parse_uint<std::int64_t>(whole);
  std::int64_t scale = unit_ps;
  for (char c : frac) {
    scale /= 10;
    st.frac_ps += (c - '0') * scale;
  }
  return st;
}

// Times in a file are kept relative to its first record, so that a machine's uptime (or a
// clock in ns since 1970) does not overflow picoseconds.
class Clock {
 public:
  Clock(std::int64_t unit_ps) : unit_ps_(unit_ps) {}
  std::optional<Time> relative(const Stamp& st) {
    if (!has_base_) {
      base_ = st.whole;
      has_base_ = true;
    }
    std::int64_t d = st.whole - base_;
    if (d > kLimit / unit_ps_ || d < -kLimit / unit_ps_) return std::nullopt;
    return d * unit_ps_ + st.frac_ps;
  }

 private:
  static constexpr std::int64_t kLimit = 100LL * 24 * 3600 * kSec;  // 100 days
  std::int64_t unit_ps_;
  bool has_base_ = false;
  std::int64_t base_ = 0;
};

int name_index(TraceText& t, string_view name) {
  for (std::size_t i = 0; i < t.names.size(); ++i)
    if (t.names[i] == name) return static_cast<int>(i);
  t.names.emplace_back(name);
  return static_cast<int>(t.names.size() - 1);
}

// Calls f(line_number, line) for each line of text.
template <class F>
void for_each_line(const std::string& text, F f) {
  std::size_t start = 0;
  int n = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    f(++n, string_view(text).substr(start, end - start));
    start = end + 1;
  }
}

std::string read_file(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError(file, "--workload", "cannot read file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// --- ftrace / trace-cmd report ---------------------------------------------------------------

enum class Kmem { None, Alloc, Free };

struct KmemEvent {
  const char* name;
  Kmem kind;
};
// kmem_cache_alloc_node and kmalloc_node: the same events with a node, in older kernels.
constexpr KmemEvent kKmemEvents[] = {
    {"kmem_cache_alloc", Kmem::Alloc}, {"kmem_cache_alloc_node", Kmem::Alloc},
    {"kmalloc", Kmem::Alloc},          {"kmalloc_node", Kmem::Alloc},
    {"kmem_cache_free", Kmem::Free},   {"kfree", Kmem::Free},
};

Kmem kmem_kind(string_view event) {
  for (const auto& k : kKmemEvents)
    if (event == k.name) return k.kind;
  return Kmem::None;
}

// Does the line name a kmem event as "EVENT:" (a word of its own)? Such a line must parse.
bool mentions_kmem(string_view line) {
  string_view rest = line;
  for (string_view tok = next_token(rest); !tok.empty(); tok = next_token(rest))
    if (tok.size() > 1 && tok.back() == ':' && kmem_kind(tok.substr(0, tok.size() - 1)) != Kmem::None)
      return true;
  return false;
}

// The fixed part of an event line: "TASK-PID [CPU] FLAGS TIMESTAMP: EVENT: FIELDS" (FLAGS
// optional: trace-cmd report prints none by default; a tgid column "(PID)" may precede [CPU]).
struct Prefix {
  int cpu = 0;
  Stamp stamp;
  string_view event;
  string_view fields;
};

// Returns an error message, or "" with p filled in.
std::string parse_prefix(string_view line, Prefix& p) {
  // The CPU: the first "[digits]" that starts a word (task names may contain brackets only
  // inside a word, e.g. "kworker/u8:2" has none, "<...>" none).
  std::size_t open = string_view::npos;
  for (std::size_t i = line.find('['); i != string_view::npos; i = line.find('[', i + 1)) {
    if (i > 0 && !is_space(line[i - 1])) continue;
    auto close = line.find(']', i);
    if (close != string_view::npos && all_digits(line.substr(i + 1, close - i - 1))) {
      open = i;
      break;
    }
  }
  if (open == string_view::npos) return "no [CPU] column (TASK-PID [CPU] FLAGS SECONDS: EVENT: FIELDS)";
  auto close = line.find(']', open);
  auto cpu = parse_uint<int>(line.substr(open + 1, close - open - 1));
  if (!cpu || *cpu > 65535) return "CPU number out of range";
  p.cpu = *cpu;
  string_view rest = line.substr(close + 1);
  string_view tok = next_token(rest);
  auto stamp_of = [](string_view t) -> std::optional<Stamp> {
    if (t.size() < 2 || t.back() != ':') return std::nullopt;
    return parse_stamp(t.substr(0, t.size() - 1), kSec, 12, true);
  };
  auto st = stamp_of(tok);
  if (!st) st = stamp_of(next_token(rest));  // after the flags column
  if (!st) return "no timestamp (SECONDS.FRACTION:) after the [CPU] column";
  p.stamp = *st;
  tok = next_token(rest);
  if (tok.size() < 2 || tok.back() != ':') return "no event name (EVENT:) after the timestamp";
  p.event = tok.substr(0, tok.size() - 1);
  p.fields = rest;
  return "";
}

struct Fields {
  std::vector<std::pair<string_view, string_view>> kv;
  std::optional<string_view> get(string_view key) const {
    for (const auto& [k, v] : kv)
      if (k == key) return v;
    return std::nullopt;
  }
};

// key=value words; other words (a module name "[nfs]" after a call_site) are ignored.
Fields split_fields(string_view s) {
  Fields f;
  for (string_view tok = next_token(s); !tok.empty(); tok = next_token(s)) {
    auto eq = tok.find('=');
    if (eq != string_view::npos && eq > 0) f.kv.emplace_back(tok.substr(0, eq), tok.substr(eq + 1));
  }
  return f;
}

// %p in the trace buffer: hashed ("00000000a1b2c3d4"), raw with no-hash-ptrs, "0x..." from
// trace-cmd, "(null)" for NULL.
std::optional<std::uint64_t> parse_ptr(string_view s) {
  if (s == "(null)") return 0;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty() || s.size() > 16) return std::nullopt;
  return parse_uint<std::uint64_t>(s, 16);
}

}  // namespace

TraceText parse_ftrace(const std::string& text, const std::string& file,
                       const std::vector<slub::CacheSpec>& caches) {
  TraceText t;
  t.file = file;
  Clock clock(kSec);
  struct Live {
    std::uint64_t id;
    int cache;
    std::uint32_t size;
  };
  std::unordered_map<std::uint64_t, Live> live;  // traced pointer -> the allocation it holds
  std::uint64_t next_id = 0;
  std::unordered_map<int, std::pair<Time, int>> last_on_cpu;  // time and line of each CPU's last event
  for_each_line(text, [&](int n, string_view raw) {
    ++t.stats.lines;
    string_view line = trim(raw);
    if (line.empty() || line.front() == '#') {
      ++t.stats.other_lines;
      return;
    }
    // "CPU:2 [LOST 1234 EVENTS]": the ring buffer overflowed.
    if (auto lost = line.find("[LOST "); lost != string_view::npos) {
      string_view rest = line.substr(lost + 6);
      if (auto nlost = parse_uint<std::uint64_t>(next_token(rest))) t.stats.lost_events += *nlost;
      ++t.stats.other_lines;
      return;
    }
    Prefix p;
    std::string err = parse_prefix(line, p);
    if (!err.empty()) {
      if (mentions_kmem(line)) fail(file, n, "malformed kmem event line: " + err);
      ++t.stats.other_lines;  // a header ("cpus=4", "CPU 1 is empty") or something else
      return;
    }
    Kmem kind = kmem_kind(p.event);
    if (kind == Kmem::None) {
      ++t.stats.other_lines;
      return;
    }
    auto time = clock.relative(p.stamp);
    if (!time) fail(file, n, "timestamp more than 100 days away from the trace's first event");
    auto [last, fresh] = last_on_cpu.try_emplace(p.cpu, std::pair{*time, n});
    if (!fresh && *time < last->second.first)
      fail(file, n, fmt::format("time goes back on CPU {} (its previous event is at line {})", p.cpu, last->second.second));
    last->second = {*time, n};
    Fields f = split_fields(p.fields);
    auto need = [&](string_view key) {
      auto v = f.get(key);
      if (!v) fail(file, n, fmt::format("{} event without {}=", p.event, key));
      return *v;
    };
    auto ptr_text = need("ptr");
    auto ptr = parse_ptr(ptr_text);
    if (!ptr) fail(file, n, fmt::format("ptr={} is not a pointer", ptr_text));
    TraceRecord r;
    r.cpu = p.cpu;
    r.time = *time;
    r.line = n;
    if (kind == Kmem::Alloc) {
      auto req_text = need("bytes_req");
      auto alloc_text = need("bytes_alloc");
      auto req = parse_uint<std::uint64_t>(req_text);
      auto bytes = parse_uint<std::uint64_t>(alloc_text);
      if (!req) fail(file, n, fmt::format("bytes_req={} is not a byte count", req_text));
      if (!bytes) fail(file, n, fmt::format("bytes_alloc={} is not a byte count", alloc_text));
      if (*ptr == 0 || *bytes == 0) {  // a failed allocation, or kmalloc(0)'s ZERO_SIZE_PTR
        ++t.stats.null_allocs;
        return;
      }
      if (live.count(*ptr)) ++t.stats.reused_ptrs;
      r.op = TraceOp::Alloc;
      r.size = static_cast<std::uint32_t>(std::min<std::uint64_t>(*bytes, UINT32_MAX));
      if (auto name = f.get("name")) {
        bool known = std::any_of(caches.begin(), caches.end(),
                                 [&](const slub::CacheSpec& c) { return c.name == *name; });
        if (known) r.cache = name_index(t, *name);
        else ++t.stats.unconfigured[std::string(*name)];
      }
      r.id = next_id++;
      live[*ptr] = {r.id, r.cache, r.size};
    } else {
      if (*ptr == 0) {
        ++t.stats.null_frees;
        return;
      }
      auto it = live.find(*ptr);
      if (it == live.end()) {  // allocated before the trace began (or the alloc was not traced)
        ++t.stats.unknown_frees;
        return;
      }
      r.op = TraceOp::Free;
      r.id = it->second.id;
      r.cache = it->second.cache;
      r.size = it->second.size;
      live.erase(it);
    }
    t.records.push_back(r);
  });
  return t;
}

TraceText parse_native_trace(const std::string& text, const std::string& file) {
  TraceText t;
  t.file = file;
  Clock clock(kNs);
  for_each_line(text, [&](int n, string_view raw) {
    ++t.stats.lines;
    string_view line = trim(raw);
    if (line.empty() || line.front() == '#') return;
    string_view tok[7];
    string_view rest = line;
    int k = 0;
    for (string_view w = next_token(rest); !w.empty() && k < 7; w = next_token(rest)) tok[k++] = w;
    if (k != 6)
      fail(file, n, fmt::format("expected 6 fields (cpu time_ns op cache size id), found {}",
                                k == 7 ? "more" : std::to_string(k)));
    TraceRecord r;
    r.line = n;
    auto cpu = parse_uint<int>(tok[0]);
    if (!cpu || *cpu > 65535) fail(file, n, fmt::format("cpu '{}' is not a CPU number (0 to 65535)", tok[0]));
    r.cpu = *cpu;
    auto st = parse_stamp(tok[1], kNs, 3, false);
    if (!st) fail(file, n, fmt::format("time_ns '{}' is not a time in ns (digits, at most 3 after the point)", tok[1]));
    auto time = clock.relative(*st);
    if (!time) fail(file, n, "time more than 100 days away from the trace's first event");
    r.time = *time;
    if (tok[2] == "alloc") r.op = TraceOp::Alloc;
    else if (tok[2] == "free") r.op = TraceOp::Free;
    else if (tok[2] == "kfree_rcu") r.op = TraceOp::KfreeRcu;
    else fail(file, n, fmt::format("unknown op '{}' (alloc, free, kfree_rcu)", tok[2]));
    r.cache = tok[3] == "-" ? -1 : name_index(t, tok[3]);
    auto size = parse_uint<std::uint32_t>(tok[4]);
    if (!size) fail(file, n, fmt::format("size '{}' is not a byte count", tok[4]));
    r.size = *size;
    if (r.op == TraceOp::Alloc && r.cache < 0 && r.size == 0)
      fail(file, n, "an allocation by size ('-') needs a size of at least 1 byte");
    auto id = parse_uint<std::uint64_t>(tok[5]);
    if (!id) fail(file, n, fmt::format("id '{}' is not an object id (a decimal number)", tok[5]));
    r.id = *id;
    t.records.push_back(r);
  });
  return t;
}

TraceText read_native_trace(const std::string& file) { return parse_native_trace(read_file(file), file); }

TraceText import_ftrace(const std::string& file, const std::vector<slub::CacheSpec>& caches) {
  return parse_ftrace(read_file(file), file, caches);
}

int kmalloc_cache_for(std::uint32_t size, const std::vector<slub::CacheSpec>& caches) {
  int best = -1;
  for (std::size_t i = 0; i < caches.size(); ++i) {
    const auto& c = caches[i];
    // kmalloc-cg-* hold __GFP_ACCOUNT allocations only: a kmalloc by size is a plain one.
    if (c.name.rfind("kmalloc-", 0) != 0 || c.name.rfind("kmalloc-cg-", 0) == 0 || c.object_size < size) continue;
    if (best < 0 || c.object_size < caches[static_cast<std::size_t>(best)].object_size) best = static_cast<int>(i);
  }
  return best;
}

Trace build_trace(const TraceText& text, const std::vector<slub::CacheSpec>& caches) {
  const auto& recs = text.records;
  if (recs.size() >= UINT32_MAX)
    fail(text.file, recs.back().line, "more than 4294967294 events");
  Trace t;
  t.file = text.file;
  t.stats = text.stats;

  // Named caches must be configured.
  std::vector<int> spec_of_name(text.names.size(), -1);
  for (std::size_t i = 0; i < text.names.size(); ++i)
    for (std::size_t c = 0; c < caches.size(); ++c)
      if (caches[c].name == text.names[i]) spec_of_name[i] = static_cast<int>(c);
  for (const auto& r : recs)
    if (r.cache >= 0 && spec_of_name[static_cast<std::size_t>(r.cache)] < 0) {
      std::vector<std::string> known;
      for (const auto& c : caches) known.push_back(c.name);
      fail(text.file, r.line,
           fmt::format("cache '{}' is not configured (--caches); known: {}",
                       text.names[static_cast<std::size_t>(r.cache)], fmt::join(known, ", ")));
    }

  // Each CPU's events must be in time order.
  {
    std::unordered_map<int, const TraceRecord*> last;
    for (const auto& r : recs) {
      auto& prev = last[r.cpu];
      if (prev && r.time < prev->time)
        fail(text.file, r.line,
             fmt::format("time goes back on CPU {} (its previous event is at line {})", r.cpu, prev->line));
      prev = &r;
    }
  }

  // Match frees to allocations in time order (ties: file order).
  std::vector<std::size_t> order(recs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return recs[a].time < recs[b].time; });
  struct IdState {
    long alloc = -1;     // the record of the live allocation
    int freed_line = 0;  // where the last allocation of the id was freed
  };
  std::unordered_map<std::uint64_t, IdState> ids;
  std::vector<long> match(recs.size(), -1);
  std::vector<int> spec(recs.size(), -1);  // cache per record; -1 = dropped
  for (std::size_t idx : order) {
    const TraceRecord& r = recs[idx];
    if (r.op == TraceOp::Alloc) {
      IdState& st = ids[r.id];
      if (st.alloc >= 0)
        fail(text.file, r.line,
             fmt::format("object {} is allocated again while live (allocated at line {})", r.id,
                         recs[static_cast<std::size_t>(st.alloc)].line));
      st.alloc = static_cast<long>(idx);
      st.freed_line = 0;
      if (r.cache >= 0) {
        spec[idx] = spec_of_name[static_cast<std::size_t>(r.cache)];
      } else {
        spec[idx] = kmalloc_cache_for(r.size, caches);
        if (spec[idx] < 0) ++t.stats.too_large;
        else ++t.stats.by_size;
      }
      continue;
    }
    auto it = ids.find(r.id);
    if (it == ids.end() || it->second.alloc < 0) {
      if (it != ids.end() && it->second.freed_line)
        fail(text.file, r.line, fmt::format("object {} is freed twice (first at line {})", r.id, it->second.freed_line));
      ++t.stats.unknown_frees;
      continue;
    }
    auto a = static_cast<std::size_t>(it->second.alloc);
    if (r.cache >= 0 && spec[a] >= 0 && spec_of_name[static_cast<std::size_t>(r.cache)] != spec[a])
      fail(text.file, r.line,
           fmt::format("object {} is freed to '{}' but was allocated from '{}' at line {}", r.id,
                       text.names[static_cast<std::size_t>(r.cache)],
                       caches[static_cast<std::size_t>(spec[a])].name, recs[a].line));
    it->second.alloc = -1;
    it->second.freed_line = r.line;
    match[a] = static_cast<long>(idx);
    match[idx] = static_cast<long>(a);
    spec[idx] = spec[a];
  }

  // Number what is kept: CPUs with events, caches in config order, objects in allocation order.
  std::set<int> cpu_set;
  std::set<int> spec_set;
  Time t0 = 0;
  bool any = false;
  for (std::size_t i = 0; i < recs.size(); ++i)
    if (spec[i] >= 0) {
      cpu_set.insert(recs[i].cpu);
      spec_set.insert(spec[i]);
      t0 = any ? std::min(t0, recs[i].time) : recs[i].time;
      any = true;
    }
  if (!any) throw ConfigError(text.file, "", "no allocations or frees to replay");
  std::unordered_map<int, int> cpu_index, cache_index;
  for (int c : cpu_set) {
    cpu_index[c] = static_cast<int>(t.cpu_ids.size());
    t.cpu_ids.push_back(c);
  }
  for (int s : spec_set) {
    cache_index[s] = static_cast<int>(t.caches.size());
    t.caches.push_back(caches[static_cast<std::size_t>(s)].name);
  }
  t.cpus.resize(t.cpu_ids.size());
  std::vector<std::set<int>> peers(t.cpu_ids.size());
  std::vector<std::uint32_t> object(recs.size(), 0);
  std::uint64_t nr_objects = 0, nr_events = 0;
  for (std::size_t idx : order) {
    if (spec[idx] < 0) continue;
    const TraceRecord& r = recs[idx];
    TraceEvent ev;
    ev.at = r.time - t0;
    ev.seq = static_cast<std::uint32_t>(nr_events);
    ev.op = r.op;
    ev.cache = static_cast<std::uint16_t>(cache_index[spec[idx]]);
    if (r.op == TraceOp::Alloc) {
      object[idx] = static_cast<std::uint32_t>(nr_objects++);
    } else {
      object[idx] = object[static_cast<std::size_t>(match[idx])];
    }
    ev.object = object[idx];
    ev.freed = r.op == TraceOp::Alloc && match[idx] >= 0;
    int cpu = cpu_index[r.cpu];
    if (match[idx] >= 0) {
      int other = cpu_index[recs[static_cast<std::size_t>(match[idx])].cpu];
      if (other != cpu) {
        ev.peer = other;
        peers[static_cast<std::size_t>(cpu)].insert(other);
      }
    }
    t.cpus[static_cast<std::size_t>(cpu)].push_back(ev);
    t.span = std::max(t.span, ev.at);
    ++nr_events;
  }
  t.nr_objects = static_cast<std::uint32_t>(nr_objects);
  for (const auto& p : peers) t.peers.emplace_back(p.begin(), p.end());
  // One pass lasts the trace's span plus its mean gap, so that the next pass's first event does
  // not fall on the last one.
  t.period = t.span + (nr_events > 1 ? t.span / static_cast<Time>(nr_events - 1) : 0);
  return t;
}

void write_native_trace(const TraceText& text, std::ostream& out) {
  out << "# slubsim trace (docs/trace-format.md), from " << text.file << "\n";
  out << "# cpu time_ns op cache size id\n";
  Time t0 = 0;
  for (std::size_t i = 0; i < text.records.size(); ++i)
    t0 = i ? std::min(t0, text.records[i].time) : text.records[i].time;
  for (const auto& r : text.records) {
    Time t = r.time - t0;
    std::string time = t % kNs ? fmt::format("{}.{:03}", t / kNs, t % kNs) : fmt::format("{}", t / kNs);
    const char* op = r.op == TraceOp::Alloc ? "alloc" : r.op == TraceOp::Free ? "free" : "kfree_rcu";
    out << fmt::format("{} {} {} {} {} {}\n", r.cpu, time, op,
                       r.cache < 0 ? std::string("-") : text.names[static_cast<std::size_t>(r.cache)],
                       r.size, r.id);
  }
}

bool is_trace_workload(const std::string& spec, std::string* kind, std::string* file) {
  for (const char* k : {"trace", "ftrace"}) {
    std::string prefix = std::string(k) + ":";
    if (spec.rfind(prefix, 0) == 0) {
      if (kind) *kind = k;
      if (file) *file = spec.substr(prefix.size());
      return true;
    }
  }
  return false;
}

Trace load_trace(const std::string& spec, const std::vector<slub::CacheSpec>& caches) {
  std::string kind, file;
  if (!is_trace_workload(spec, &kind, &file)) throw ConfigError("command line", "--workload", "not a trace");
  if (file.empty()) throw ConfigError("command line", "--workload", fmt::format("{}: names no file", spec));
  if (!std::filesystem::is_regular_file(file)) throw ConfigError(file, "--workload", "no such file");
  TraceText text = kind == "trace" ? read_native_trace(file) : import_ftrace(file, caches);
  return build_trace(text, caches);
}

std::string describe_trace(const Trace& t) {
  std::string out = fmt::format(
      "trace {}: {} events ({} alloc, {} free, {} kfree_rcu) on {} CPUs over {:.3f} ms; caches {}",
      t.file, t.nr_events(), t.count(TraceOp::Alloc), t.count(TraceOp::Free), t.count(TraceOp::KfreeRcu),
      t.cpus.size(), to_sec(t.span) * 1e3, fmt::join(t.caches, ", "));
  std::vector<std::string> notes;
  const auto& s = t.stats;
  if (s.by_size) notes.push_back(fmt::format("{} placed by size", s.by_size));
  if (!s.unconfigured.empty()) {
    std::vector<std::string> names;
    for (const auto& [name, n] : s.unconfigured) names.push_back(fmt::format("{} {}", name, n));
    notes.push_back(fmt::format("unconfigured caches by size: {}", fmt::join(names, ", ")));
  }
  if (s.too_large) notes.push_back(fmt::format("{} too large for any kmalloc cache (dropped)", s.too_large));
  if (s.unknown_frees) notes.push_back(fmt::format("{} frees of objects not allocated in the trace (skipped)", s.unknown_frees));
  if (s.reused_ptrs) notes.push_back(fmt::format("{} pointers allocated again without a traced free", s.reused_ptrs));
  if (s.null_allocs) notes.push_back(fmt::format("{} NULL or zero-size allocations (skipped)", s.null_allocs));
  if (s.null_frees) notes.push_back(fmt::format("{} kfree(NULL) (skipped)", s.null_frees));
  if (s.lost_events) notes.push_back(fmt::format("{} events lost by the ring buffer", s.lost_events));
  if (s.other_lines) notes.push_back(fmt::format("{} other lines", s.other_lines));
  if (!notes.empty()) out += fmt::format("; {}", fmt::join(notes, "; "));
  return out;
}

}  // namespace slubsim
