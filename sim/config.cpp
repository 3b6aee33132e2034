#include "sim/config.h"

#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

namespace slubsim {

ConfigError::ConfigError(std::string file, std::string field, const std::string& message)
    : std::runtime_error(message), file_(std::move(file)), field_(std::move(field)) {}

std::string JsonView::child(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

void JsonView::fail(const std::string& message) const { throw ConfigError(file_, path_, message); }

bool JsonView::has(std::string_view key) const {
  return j_->is_object() && j_->contains(std::string(key));
}

JsonView JsonView::at(std::string_view key) const {
  if (!j_->is_object()) fail("expected an object");
  auto it = j_->find(std::string(key));
  if (it == j_->end()) throw ConfigError(file_, child(key), "missing field");
  return JsonView(*it, file_, child(key));
}

std::optional<JsonView> JsonView::find(std::string_view key) const {
  if (!j_->is_object()) fail("expected an object");
  auto it = j_->find(std::string(key));
  if (it == j_->end()) return std::nullopt;
  return JsonView(*it, file_, child(key));
}

JsonView JsonView::at(std::size_t i) const {
  if (!j_->is_array()) fail("expected an array");
  if (i >= j_->size()) fail(fmt::format("index {} out of range", i));
  return JsonView((*j_)[i], file_, fmt::format("{}[{}]", path_, i));
}

std::size_t JsonView::size() const {
  if (!j_->is_array()) fail("expected an array");
  return j_->size();
}

std::vector<std::string> JsonView::keys() const {
  if (!j_->is_object()) fail("expected an object");
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

JsonView JsonView::sourced_value_any() const {
  if (!j_->is_object()) fail("expected {\"value\": ..., \"source\": \"...\"}");
  auto v = at("value");
  auto src = at("source").str();
  if (src.find_first_not_of(" \t") == std::string::npos)
    at("source").fail("must say where the figure comes from");
  return v;
}

double JsonView::sourced_value() const { return sourced_value_any().number(); }

Time JsonView::time_ns() const {
  double ns = j_->is_object() ? sourced_value() : number();
  if (ns < 0) fail(fmt::format("must not be negative, got {}", ns));
  return from_ns(ns);
}

json load_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path, "", "cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return json::parse(ss.str());
  } catch (const json::parse_error& e) {
    throw ConfigError(path, "", fmt::format("not valid JSON: {}", e.what()));
  }
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

static json parse_value(const std::string& v) {
  try {
    return json::parse(v);
  } catch (const json::parse_error&) {
    return json(v);  // a bare word is a string
  }
}

void apply_overrides(json& doc, const std::vector<Override>& overrides, const std::string& domain) {
  for (const auto& o : overrides) {
    if (o.domain != domain) continue;
    // --set caches.NAME.KNOB addresses the file's "caches" object directly.
    json* cur = domain == "caches" && doc.contains("caches") ? &doc["caches"] : &doc;
    std::stringstream ss(o.path);
    std::string part;
    while (std::getline(ss, part, '.')) {
      if (cur->is_object() && cur->contains(part)) {
        cur = &(*cur)[part];
      } else if (cur->is_array() && !part.empty() &&
                 part.find_first_not_of("0123456789") == std::string::npos &&
                 std::stoull(part) < cur->size()) {
        cur = &(*cur)[std::stoull(part)];
      } else {
        throw ConfigError("--set", o.domain + "." + o.path, "no such parameter");
      }
    }
    json v = parse_value(o.value);
    if (cur->is_object() && cur->contains("value") && cur->contains("source")) {
      (*cur)["value"] = v;
      (*cur)["source"] = fmt::format("--set {}", o.text);
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
