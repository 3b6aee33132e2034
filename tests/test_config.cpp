// The config reader: unknown fields, documentation fields, and numbers the parser cannot hold.
#include <doctest/doctest.h>

#include <string>

#include "sim/config/config.h"

using namespace slubsim;

namespace {

// The ConfigError's "field: message" of f(), or "" if it did not throw.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.field() + ": " + e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("config: a member nobody asked for is an unknown field, with the nearest name") {
  json doc = json::parse(R"({"name": "x", "latency_nss": 3, "list": [{"a": 1}, {"a": 2, "b": 3}]})");
  JsonView root(doc, "f.json");
  root.at("name").str();
  (void)root.find("latency_ns");  // optional, absent: still a known name here
  auto list = root.at("list");
  for (std::size_t i = 0; i < list.size(); ++i) list.at(i).at("a").integer();
  CHECK(error_of([&] { root.check_known_fields(); }) == "latency_nss: unknown field; did you mean \"latency_ns\"?");

  doc.erase("latency_nss");
  JsonView again(doc, "f.json");
  again.at("name").str();
  auto l2 = again.at("list");
  for (std::size_t i = 0; i < l2.size(); ++i) l2.at(i).at("a").integer();
  CHECK(error_of([&] { again.check_known_fields(); }) == "list[1].b: unknown field (known here: a)");
}

TEST_CASE("config: documentation fields, keys() and unopened objects are not unknown") {
  json doc = json::parse(R"({"description": "d", "note": "n", "map": {"p": 1, "q": 2}, "raw": {"z": 1}})");
  JsonView root(doc, "f.json");
  for (const auto& k : root.at("map").keys()) root.at("map").at(k).integer();
  (void)root.at("raw").raw();  // read whole, not member by member
  CHECK(error_of([&] { root.check_known_fields(); }).empty());
}

TEST_CASE("config: two parsers of one document share a log") {
  json doc = json::parse(R"({"a": 1, "b": 2})");
  auto log = std::make_shared<ReadLog>();
  JsonView(doc, "f.json", log).at("a").integer();
  CHECK_FALSE(error_of([&] { JsonView(doc, "f.json", log).check_known_fields(); }).empty());
  JsonView(doc, "f.json", log).at("b").integer();
  CHECK(error_of([&] { JsonView(doc, "f.json", log).check_known_fields(); }).empty());
}

TEST_CASE("config: a number beyond a double names line and column; a syntax error too") {
  CHECK(error_of([] { parse_json_text("{\n  \"a\": 1,\n  \"b\": -2e400\n}", "f.json"); }) ==
        ": line 3, column 8: the number -2e400 is too large to hold (beyond a double's range)");
  std::string syntax = error_of([] { parse_json_text("{\n  \"a\": [1,,2]\n}", "f.json"); });
  CHECK(syntax.find("line 2, column 11") != std::string::npos);
  std::vector<Override> o{parse_override("costs.x=1e999")};
  json doc = json::parse(R"({"x": 1})");
  CHECK(error_of([&] { apply_overrides(doc, o, "costs"); }) ==
        "costs.x: the number 1e999 is too large to hold (beyond a double's range)");
}

TEST_CASE("did you mean: edit distance counts a swap of neighbours as one edit") {
  CHECK(edit_distance("run", "run") == 0);
  CHECK(edit_distance("rnu", "run") == 1);
  CHECK(edit_distance("topolgy", "topology") == 1);
  CHECK(edit_distance("memroy_mb", "memory_mb") == 1);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(closest("topolgoy", {"topology", "workload", "kernel"}) == "topology");
  CHECK(closest("zzz", {"topology", "workload"}).empty());
  CHECK(closest("ab", {"xy"}).empty());  // two edits in two letters is not close
}

TEST_CASE("did you mean: the same stem with another ending, and the last words of a name") {
  const std::vector<std::string> options{"sheaf-capacity", "sysfs", "settle-ci", "settle-cap", "set", "out"};
  CHECK(closest("sheaf-capacities", options) == "sheaf-capacity");  // three edits, all in the ending
  CHECK(closest("capacity", options) == "sheaf-capacity");
  CHECK(closest("sheaves", {"sheaf", "shell"}) == "sheaf");
  CHECK(closest("topologies", {"topology", "workload"}) == "topology");
  CHECK(closest("capacity", {"capacities", "sheaf-capacity"}) == "capacities");  // the fewest edits
  CHECK(closest("settings", options).empty());  // "set" shares three letters only
  CHECK(closest("output", options).empty());
  CHECK(closest("ci", options).empty());  // a last word of two letters is not enough
}
