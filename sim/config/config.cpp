// sim/config/: reading configs at the edge: JSON files into plain structs (costs, kernels,
// workload programs, trace imports), every error naming the file and the field. Models never
// read files.
// This file: the JSON reader (JsonView), the read log of unknown fields, and did-you-mean suggestions.
#include "sim/config/config.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <map>
#include <sstream>

namespace slubsim {

ConfigError::ConfigError(std::string file, std::string field, const std::string& message)
    : std::runtime_error(message), file_(std::move(file)), field_(std::move(field)),
      problems_{{file_, field_, message}} {}

namespace {

std::string joined_message(const std::vector<ConfigError::Problem>& problems) {
  if (problems.empty()) return "no problem";
  std::string out = problems[0].message;
  for (std::size_t i = 1; i < problems.size(); ++i) out += "\n" + describe(problems[i]);
  return out;
}

}  // namespace

ConfigError::ConfigError(std::vector<Problem> problems)
    : std::runtime_error(joined_message(problems)),
      file_(problems.empty() ? std::string() : problems[0].file),
      field_(problems.empty() ? std::string() : problems[0].field),
      problems_(std::move(problems)) {
  if (problems_.empty()) problems_.push_back({file_, field_, what()});
}

std::string describe(const ConfigError::Problem& p) {
  return p.field.empty() ? fmt::format("{}: {}", p.file, p.message) : fmt::format("{}: {}: {}", p.file, p.field, p.message);
}

void ConfigErrors::add(const ConfigError& e) {
  for (const auto& p : e.problems()) {
    const bool seen = std::any_of(problems_.begin(), problems_.end(), [&](const ConfigError::Problem& q) {
      return q.file == p.file && q.field == p.field && q.message == p.message;
    });
    if (!seen) problems_.push_back(p);  // e.g. "expected an object" from each member asked of a non-object
  }
}

namespace {

// Where each member of a document lies: its pre-order position and the last position inside it,
// by the paths JsonView names ("a.b[2].c").
void index_paths(const json& node, const std::string& path, std::size_t& next,
                 std::map<std::string, std::pair<std::size_t, std::size_t>>& at) {
  const std::size_t pre = next++;
  if (node.is_object()) {
    for (auto it = node.begin(); it != node.end(); ++it)
      index_paths(*it, path.empty() ? it.key() : path + "." + it.key(), next, at);
  } else if (node.is_array()) {
    for (std::size_t i = 0; i < node.size(); ++i) index_paths(node[i], fmt::format("{}[{}]", path, i), next, at);
  }
  at.emplace(path, std::pair(pre, next - 1));
}

}  // namespace

void ConfigErrors::raise() const {
  if (problems_.empty()) return;
  if (problems_.size() == 1) throw ConfigError(problems_[0].file, problems_[0].field, problems_[0].message);
  std::map<std::string, std::pair<std::size_t, std::size_t>> at;
  std::size_t next = 0;
  index_paths(*doc_, "", next, at);
  // A member's position; a missing one's is the end of the nearest object that is there (where
  // it would be added); another file's problem comes last.
  auto position = [&](const ConfigError::Problem& p) -> std::pair<std::size_t, int> {
    if (p.file != file_) return {next, 2};
    std::string path = p.field;
    for (bool whole = true;; whole = false) {
      if (auto it = at.find(path); it != at.end()) return whole ? std::pair(it->second.first, 0) : std::pair(it->second.second, 1);
      if (path.empty()) return {next, 2};
      const std::size_t cut = path.find_last_of(".[");
      path.resize(cut == std::string::npos ? 0 : cut);
    }
  };
  std::vector<ConfigError::Problem> sorted = problems_;
  std::stable_sort(sorted.begin(), sorted.end(), [&](const auto& a, const auto& b) { return position(a) < position(b); });
  throw ConfigError(std::move(sorted));
}

std::string JsonView::child(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

void JsonView::fail(const std::string& message) const { throw ConfigError(file_, path_, message); }

bool JsonView::has(std::string_view key) const {
  if (!j_->is_object()) return false;
  log_->ask(j_, key);
  return j_->contains(std::string(key));
}

JsonView JsonView::at(std::string_view key) const {
  if (!j_->is_object()) fail("expected an object");
  log_->ask(j_, key);
  auto it = j_->find(std::string(key));
  if (it == j_->end()) {
    std::vector<std::string> present;
    for (auto k = j_->begin(); k != j_->end(); ++k) present.push_back(k.key());
    const std::string near = closest(key, present);
    // The member taken for a misspelling of this one is accounted for by this error: not an
    // unknown field as well (a parser that gathers its problems checks them after it).
    if (!near.empty()) log_->ask(j_, near);
    if (!near.empty())
      throw ConfigError(file_, child(key), fmt::format("missing field; \"{}\" is given: a misspelling of it?", near));
    throw ConfigError(file_, child(key), "missing field");
  }
  return JsonView(*it, file_, child(key), log_);
}

std::optional<JsonView> JsonView::find(std::string_view key) const {
  if (!j_->is_object()) fail("expected an object");
  log_->ask(j_, key);
  auto it = j_->find(std::string(key));
  if (it == j_->end()) return std::nullopt;
  return JsonView(*it, file_, child(key), log_);
}

JsonView JsonView::at(std::size_t i) const {
  if (!j_->is_array()) fail("expected an array");
  if (i >= j_->size()) fail(fmt::format("index {} out of range", i));
  return JsonView((*j_)[i], file_, fmt::format("{}[{}]", path_, i), log_);
}

void JsonView::allow(std::initializer_list<std::string_view> keys) const {
  if (!j_->is_object()) return;
  for (auto k : keys) log_->ask(j_, k);
}

void ReadLog::ask(const json* object, std::string_view key) {
  for (const auto& [o, k] : asked_)
    if (o == object && k == key) return;
  asked_.emplace_back(object, std::string(key));
}

// Edit distance with adjacent transpositions (optimal string alignment): "rnu" is one edit from
// "run", as a typist would count it. For "did you mean".
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev2(b.size() + 1), prev(b.size() + 1), row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) row[j] = std::min(row[j], prev2[j - 2] + 1);
    }
    std::swap(prev2, prev);
    std::swap(prev, row);
  }
  return prev[b.size()];
}

std::string closest(std::string_view given, const std::vector<std::string>& candidates) {
  // Close: at most two edits, and at most a third of the longer name; or the same stem with
  // another ending (capacity and capacities, sheaf and sheaves: at least four letters shared from
  // the start, and the longer name at most three letters past them); or the last words of a name
  // (capacity for sheaf-capacity, four letters at least). The fewest edits win.
  auto close = [&](const std::string& c, std::size_t d) {
    const std::size_t longer = std::max(given.size(), c.size());
    if (d <= 2 && d * 3 <= longer) return true;
    std::size_t stem = 0;
    while (stem < given.size() && stem < c.size() && given[stem] == c[stem]) ++stem;
    if (stem >= 4 && stem + 3 >= longer) return true;
    const std::size_t at = c.size() - std::min(c.size(), given.size());
    return given.size() >= 4 && c.size() > given.size() && (c[at - 1] == '-' || c[at - 1] == '_') &&
           std::string_view(c).substr(at) == given;
  };
  std::string best;
  std::size_t best_d = std::string::npos;
  for (const auto& c : candidates)
    if (const std::size_t d = edit_distance(given, c); d < best_d && close(c, d)) best_d = d, best = c;
  return best;
}

std::string did_you_mean(std::string_view given, const std::vector<std::string>& candidates) {
  const std::string near = closest(given, candidates);
  return near.empty() ? std::string() : "; did you mean '" + near + "'?";
}

// Members for readers, allowed in every object of every config: they document, nothing reads them.
constexpr std::string_view kDocumentationKeys[] = {"description", "note", "comment"};

void ReadLog::check(const json& doc, const std::string& file) const {
  std::vector<ConfigError> out;
  check_node(doc, file, "", out, true);
  if (!out.empty()) throw out.front();
}

void ReadLog::check(const json& doc, const std::string& file, ConfigErrors& errors) const {
  std::vector<ConfigError> out;
  check_node(doc, file, "", out, false);
  for (const auto& e : out) errors.add(e);
}

// The unknown members below `node` into `out`, in document order (only the first with first_only).
void ReadLog::check_node(const json& node, const std::string& file, const std::string& path,
                         std::vector<ConfigError>& out, bool first_only) const {
  if (first_only && !out.empty()) return;
  if (node.is_array()) {
    for (std::size_t i = 0; i < node.size(); ++i) check_node(node[i], file, fmt::format("{}[{}]", path, i), out, first_only);
    return;
  }
  if (!node.is_object()) return;
  const bool all = std::find(all_.begin(), all_.end(), &node) != all_.end();
  std::vector<std::string_view> known;
  for (const auto& [o, k] : asked_)
    if (o == &node) known.push_back(k);
  if (!all && known.empty()) return;  // never opened: read whole (e.g. a raw value) or not at all
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string member = path.empty() ? it.key() : fmt::format("{}.{}", path, it.key());
    const bool documentation = std::find(std::begin(kDocumentationKeys), std::end(kDocumentationKeys), it.key()) !=
                               std::end(kDocumentationKeys);
    if (!all && !documentation && std::find(known.begin(), known.end(), it.key()) == known.end()) {
      const std::string best = closest(it.key(), std::vector<std::string>(known.begin(), known.end()));
      if (!best.empty()) {
        out.emplace_back(file, member, fmt::format("unknown field; did you mean \"{}\"?", best));
      } else {
        std::vector<std::string_view> sorted = known;
        std::sort(sorted.begin(), sorted.end());
        out.emplace_back(file, member, fmt::format("unknown field (known here: {})", fmt::join(sorted, ", ")));
      }
      if (first_only) return;
      continue;
    }
    check_node(*it, file, member, out, first_only);
    if (first_only && !out.empty()) return;
  }
}

std::size_t JsonView::size() const {
  if (!j_->is_array()) fail("expected an array");
  return j_->size();
}

std::vector<std::string> JsonView::keys() const {
  if (!j_->is_object()) fail("expected an object");
  log_->take_all(j_);
  std::vector<std::string> out;
  for (auto it = j_->begin(); it != j_->end(); ++it) out.push_back(it.key());
  return out;
}

std::string JsonView::str() const {
  if (!j_->is_string()) fail("expected a string");
  return j_->get<std::string>();
}

double JsonView::number() const {
  if (!j_->is_number()) fail("expected a number");
  double v = j_->get<double>();
  if (!std::isfinite(v)) fail("expected a finite number");
  return v;
}

double JsonView::positive_number() const {
  double v = number();
  if (!(v > 0)) fail(fmt::format("must be positive, got {}", v));
  return v;
}

std::int64_t JsonView::integer() const {
  if (j_->is_number_integer()) return j_->get<std::int64_t>();
  if (j_->is_number_float()) {
    double v = j_->get<double>();
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e18)
      return static_cast<std::int64_t>(v);
  }
  fail("expected an integer");
}

std::int64_t JsonView::integer_in(std::int64_t lo, std::int64_t hi) const {
  auto v = integer();
  if (v < lo || v > hi) fail(fmt::format("must be between {} and {}, got {}", lo, hi, v));
  return v;
}

bool JsonView::boolean() const {
  if (!j_->is_boolean()) fail("expected true or false");
  return j_->get<bool>();
}

bool JsonView::two_way(const char* off, const char* on) const {
  const std::string v = sourced_value_any().str();
  if (v != off && v != on) at("value").fail(fmt::format("must be \"{}\" or \"{}\"", off, on));
  return v == on;
}

JsonView JsonView::sourced_value_any() const {
  if (!j_->is_object()) fail("expected {\"value\": ..., \"source\": \"...\"}");
  allow({"value", "source", "range", "range_source"});  // known here even when a check below stops early
  auto v = at("value");
  auto src = at("source").str();
  if (src.find_first_not_of(" \t") == std::string::npos)
    at("source").fail("must say where the figure comes from");
  // An uncertain figure's range: [low, high] around the value, from the range's own source or,
  // without one, from the range the value's source states (sim/trust/inputs.h).
  if (auto r = find("range")) {
    if (!r->raw().is_array() || r->size() != 2) r->fail("expected [low, high]");
    const double lo = r->at(0).number(), hi = r->at(1).number();
    if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi) r->fail(fmt::format("needs low <= high, got [{}, {}]", lo, hi));
    if (v.raw().is_number() && !(lo <= v.number() && v.number() <= hi))
      r->fail(fmt::format("needs low <= value ({}) <= high, got [{}, {}]", v.number(), lo, hi));
  }
  if (auto rs = find("range_source")) {
    if (!has("range")) rs->fail("a range's source without a range");
    if (rs->str().find_first_not_of(" \t") == std::string::npos) rs->fail("must say where the range comes from");
  }
  return v;
}

double JsonView::sourced_value() const { return sourced_value_any().number(); }

Time JsonView::time_ns() const {
  double ns = j_->is_object() ? sourced_value() : number();
  if (ns < 0) fail(fmt::format("must not be negative, got {}", ns));
  return from_ns(ns);
}

namespace {

// "line L, column C" of byte offset `byte` (1-based, as nlohmann counts: the byte after the
// last one read) in text.
std::string line_column(const std::string& text, std::size_t byte) {
  const std::size_t end = std::min(byte > 0 ? byte - 1 : 0, text.size());
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') ++line, column = 1;
    else ++column;
  }
  return fmt::format("line {}, column {}", line, column);
}

// The position of a number token in text (nlohmann names the token but not where it is).
std::string where_number(const std::string& text, const std::string& token) {
  if (token.empty()) return "";
  for (std::size_t at = text.find(token); at != std::string::npos; at = text.find(token, at + 1)) {
    const bool starts = at == 0 || std::string_view(",:[ \t\r\n").find(text[at - 1]) != std::string_view::npos;
    if (starts) return line_column(text, at + 1) + ": ";
  }
  return "";
}

}  // namespace

json parse_json_text(const std::string& text, const std::string& file) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 3, column 7: ..."
    std::string what = e.what();
    auto colon = what.find(": ");
    std::string detail = colon == std::string::npos ? what : what.substr(colon + 2);
    throw ConfigError(file, "", fmt::format("not valid JSON at {}: {}", line_column(text, e.byte), detail));
  } catch (const json::out_of_range& e) {
    // 406: a number the parser cannot hold ("number overflow parsing '1e99999'").
    std::string what = e.what();
    std::string token;
    if (auto q = what.find('\''); q != std::string::npos)
      if (auto q2 = what.find('\'', q + 1); q2 != std::string::npos) token = what.substr(q + 1, q2 - q - 1);
    throw ConfigError(file, "", fmt::format("{}the number {} is too large to hold (beyond a double's range)",
                                            where_number(text, token), token.empty() ? "here" : token));
  } catch (const json::exception& e) {
    throw ConfigError(file, "", fmt::format("not valid JSON: {}", e.what()));
  }
}

bool is_file(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

bool is_dir(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_directory(p, ec);
}

bool path_exists(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::exists(p, ec);
}

json load_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path, "", "cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw ConfigError(path, "", "cannot read file");
  return parse_json_text(ss.str(), path);
}

Override parse_override(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError("--set", text, "expected KEY=VALUE, e.g. costs.qspinlock.handoff_alpha=1.2");
  std::string key = text.substr(0, eq);
  auto dot = key.find('.');
  if (dot == std::string::npos || dot + 1 == key.size())
    throw ConfigError("--set", key,
                      "expected DOMAIN.PATH with DOMAIN one of topology, costs, workload, kernel, caches");
  Override o{key.substr(0, dot), key.substr(dot + 1), text.substr(eq + 1), text};
  if (o.domain != "topology" && o.domain != "costs" && o.domain != "workload" &&
      o.domain != "kernel" && o.domain != "caches")
    throw ConfigError("--set", key,
                      fmt::format("unknown domain '{}' (topology, costs, workload, kernel, caches)",
                                  o.domain));
  return o;
}

static json parse_value(const Override& o) {
  try {
    return json::parse(o.value);
  } catch (const json::parse_error&) {
    return json(o.value);  // a bare word is a string
  } catch (const json::exception&) {
    throw ConfigError("--set", o.domain + "." + o.path,
                      fmt::format("the number {} is too large to hold (beyond a double's range)", o.value));
  }
}

void apply_overrides(json& doc, const std::vector<Override>& overrides, const std::string& domain) {
  for (const auto& o : overrides) {
    if (o.domain != domain) continue;
    // --set caches.NAME.KNOB addresses the file's "caches" object directly.
    json* cur = domain == "caches" && doc.contains("caches") ? &doc["caches"] : &doc;
    std::vector<std::string> parts;
    {
      std::stringstream ss(o.path);
      std::string part;
      while (std::getline(ss, part, '.')) parts.push_back(part);
    }
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const std::string& part = parts[i];
      if (cur->is_object() && cur->contains(part)) {
        cur = &(*cur)[part];
      } else if (cur->is_array() && !part.empty() &&
                 part.find_first_not_of("0123456789") == std::string::npos &&
                 std::stoull(part) < cur->size()) {
        cur = &(*cur)[std::stoull(part)];
      } else {
        std::string hint;
        if (cur->is_object()) {
          std::vector<std::string> keys;
          for (auto k = cur->begin(); k != cur->end(); ++k) keys.push_back(k.key());
          if (const std::string near = closest(part, keys); !near.empty()) {
            std::vector<std::string> fixed = parts;
            fixed[i] = near;
            hint = fmt::format("; did you mean {}.{}?", o.domain, fmt::join(fixed, "."));
          } else if (keys.size() <= 24) {
            hint = fmt::format(" ('{}' is not one of: {})", part, fmt::join(keys, ", "));
          }
        }
        throw ConfigError("--set", o.domain + "." + o.path, "no such parameter" + hint);
      }
    }
    json v = parse_value(o);
    if (cur->is_object() && cur->contains("value") && cur->contains("source")) {
      (*cur)["value"] = v;
      (*cur)["source"] = fmt::format("--set {}", o.text);
      // The set value is the user's: the range stated for the figure it replaces is not its own.
      cur->erase("range");
      cur->erase("range_source");
    } else {
      *cur = v;
    }
  }
}

Time parse_duration(const std::string& text, const std::string& field) {
  std::size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(text, &pos);
  } catch (...) {
    throw ConfigError("command line", field,
                      fmt::format("'{}' is not a duration (e.g. 20ms, 1s, 500us)", text));
  }
  std::string unit = text.substr(pos);
  double scale = 0;
  if (unit == "s") scale = 1e12;
  else if (unit == "ms") scale = 1e9;
  else if (unit == "us") scale = 1e6;
  else if (unit == "ns") scale = 1e3;
  else if (unit == "ps") scale = 1;
  else
    throw ConfigError("command line", field,
                      fmt::format("'{}' needs a unit: s, ms, us, ns or ps", text));
  if (!std::isfinite(v) || v <= 0 || v * scale > 1e18)
    throw ConfigError("command line", field, fmt::format("'{}' must be positive", text));
  return static_cast<Time>(std::llround(v * scale));
}

}  // namespace slubsim
