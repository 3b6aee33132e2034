// Reading configs at the edge: JSON files into plain structs, with errors that name the file
// and the field. Models never read files.
#pragma once
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "models/time.h"

namespace slubsim {

using json = nlohmann::ordered_json;

// Edit distance between two names (insertions, deletions, substitutions, adjacent swaps).
std::size_t edit_distance(std::string_view a, std::string_view b);
// The candidate a misspelt `given` most likely meant (at most two edits and a third of the
// longer name away, or the same stem with another ending: capacity / capacities), or "" if none
// is that close: for "did you mean".
std::string closest(std::string_view given, const std::vector<std::string>& candidates);
// "; did you mean 'NAME'?" for closest()'s NAME, or "" when none is close.
std::string did_you_mean(std::string_view given, const std::vector<std::string>& candidates);

// Bad input. main() prints "slubsim: error: FILE: FIELD: MESSAGE" and exits with code 2; an
// error holding several problems (ConfigErrors) prints one such line per problem.
class ConfigError : public std::runtime_error {
 public:
  // One problem: the file, the field path inside it ("" for the whole file) and what is wrong.
  struct Problem {
    std::string file;
    std::string field;
    std::string message;
  };
  ConfigError(std::string file, std::string field, const std::string& message);
  // Several independent problems of one input, reported at once. file() and field() are the
  // first's; what() is the first's message and then one line per other problem, "FILE: FIELD:
  // MESSAGE", so that "FILE: FIELD: what()" names every problem's file and field.
  explicit ConfigError(std::vector<Problem> problems);
  const std::string& file() const { return file_; }
  const std::string& field() const { return field_; }
  // Every problem, in the order to report them (one for an ordinary error).
  const std::vector<Problem>& problems() const { return problems_; }

 private:
  std::string file_;
  std::string field_;
  std::vector<Problem> problems_;
};

// "FILE: FIELD: MESSAGE" ("FILE: MESSAGE" without a field): one problem, as main() prints it.
std::string describe(const ConfigError::Problem& p);

// The problems of one document, gathered so that one run reports every independent mistake
// rather than the first. A parser runs each check that does not depend on another through
// check(); a check that needs an earlier one's result tests what that check() returned.
class ConfigErrors {
 public:
  ConfigErrors(const json& doc, std::string file) : doc_(&doc), file_(std::move(file)) {}
  // Runs f; a ConfigError it throws is kept (its problems, each once) and the rest of f is
  // skipped. Returns whether f finished.
  template <class F>
  bool check(F&& f) {
    try {
      f();
      return true;
    } catch (const ConfigError& e) {
      add(e);
      return false;
    }
  }
  void add(const ConfigError& e);
  bool empty() const { return problems_.empty(); }
  // Throws the problems kept as one ConfigError, in document order (a missing field where its
  // object ends); returns when there are none.
  void raise() const;

 private:
  const json* doc_;
  std::string file_;
  std::vector<ConfigError::Problem> problems_;
};

// Which members of a document's objects its parsers asked for (at, find, has; keys() takes
// them all). A member nobody asked for is an unknown field: check_known_fields reports it, so a
// misspelt optional field is an error rather than a silent default. "description", "note" and
// "comment" are documentation, allowed anywhere.
class ReadLog {
 public:
  void ask(const json* object, std::string_view key);
  void take_all(const json* object) { all_.push_back(object); }
  // Throws ConfigError(file, path of the first unknown member, "unknown field ...") with the
  // nearest name asked for at that place when one is close.
  void check(const json& doc, const std::string& file) const;
  // The same for every unknown member, each kept in `errors`.
  void check(const json& doc, const std::string& file, ConfigErrors& errors) const;

 private:
  void check_node(const json& node, const std::string& file, const std::string& path,
                  std::vector<ConfigError>& out, bool first_only) const;
  std::vector<std::pair<const json*, std::string>> asked_;
  std::vector<const json*> all_;
};

// A JSON value together with the file it came from and its path inside it.
class JsonView {
 public:
  // A document's root; the view and every view taken from it share one ReadLog (a new one
  // unless given, so that several parsers of one document can share theirs).
  JsonView(const json& j, std::string file, std::shared_ptr<ReadLog> log = nullptr)
      : j_(&j), file_(std::move(file)), log_(log ? std::move(log) : std::make_shared<ReadLog>()) {}

  const json& raw() const { return *j_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }

  bool has(std::string_view key) const;
  JsonView at(std::string_view key) const;  // required member
  std::optional<JsonView> find(std::string_view key) const;
  JsonView at(std::size_t i) const;
  std::size_t size() const;  // array length (error if not an array)
  std::vector<std::string> keys() const;  // object keys in file order (error if not an object)

  std::string str() const;
  double number() const;
  double positive_number() const;  // > 0 and finite
  std::int64_t integer() const;
  std::int64_t integer_in(std::int64_t lo, std::int64_t hi) const;
  bool boolean() const;
  // {"value": x, "source": "..."}: a sourced figure; returns value, checks source is non-empty.
  double sourced_value() const;
  // The same shape with a value of any type: checks the source and returns the value's view.
  JsonView sourced_value_any() const;
  // A two-way model switch, the same shape with a string value: it must be `off` or `on`;
  // true for `on`.
  bool two_way(const char* off, const char* on) const;
  // A time given in nanoseconds: a number or a sourced figure.
  Time time_ns() const;

  // Members that are documentation (e.g. "note"), accepted and not read.
  void allow(std::initializer_list<std::string_view> keys) const;
  // Every member of every object below this view was asked for; else a ConfigError naming the
  // first that was not (call on the root once all parsing of the document is done).
  void check_known_fields() const { log_->check(*j_, file_); }
  // The same, every unknown member kept in `errors` (a parser that gathers its problems).
  void check_known_fields(ConfigErrors& errors) const { log_->check(*j_, file_, errors); }

  [[noreturn]] void fail(const std::string& message) const;

 private:
  JsonView(const json& j, std::string file, std::string path, std::shared_ptr<ReadLog> log)
      : j_(&j), file_(std::move(file)), path_(std::move(path)), log_(std::move(log)) {}
  std::string child(std::string_view key) const;
  const json* j_;
  std::string file_;
  std::string path_;
  std::shared_ptr<ReadLog> log_;
};

// Whether a path names a file / a directory / anything. Never throws: a name the system refuses
// (too long, a component that is not a directory, no permission) is simply not there, so the
// caller's own ConfigError names it rather than a filesystem_error escaping as a crash.
bool is_file(const std::filesystem::path& p);
bool is_dir(const std::filesystem::path& p);
bool path_exists(const std::filesystem::path& p);

// Parse a JSON file; a missing file, a syntax error or a number beyond a double is a
// ConfigError naming the file and the line and column.
json load_json_file(const std::string& path);
json parse_json_text(const std::string& text, const std::string& file);

// One --set KEY=VALUE (KEY like "costs.qspinlock.handoff_alpha"): the part after the first dot
// is a path into the config document named by the first part.
struct Override {
  std::string domain;  // topology, costs, workload, kernel
  std::string path;    // dotted path inside it
  std::string value;   // as typed
  std::string text;    // the whole KEY=VALUE, for messages
};
Override parse_override(const std::string& text);
// Apply the overrides for `domain` to doc. A missing path is a ConfigError naming the key.
// A target that is a sourced figure ({"value", "source"}) gets its value replaced.
void apply_overrides(json& doc, const std::vector<Override>& overrides, const std::string& domain);

// "20ms", "1.5s", "500us", "100ns", "250ps" to simulated time. Throws ConfigError(field).
Time parse_duration(const std::string& text, const std::string& field);

}  // namespace slubsim
