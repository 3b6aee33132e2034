// Every document the model cites is a file of the repository (issue 52): the comments and strings
// of sim/, models/ and workloads/, and every JSON file under configs/ and workloads/ (their
// `source`, `range_source`, `note` fields), name reference notes by file, e.g.
// "contention-model.md §1.3", "measurements.json T01 (rows 0-12)",
// "docs/reference/seeds/zhao-liu-spare-sheaf-and-capacity.txt". A bare name is a file of
// docs/reference/ (docs/reference/README.md says so); a name with a folder is a path from the top
// of the source tree, and may not leave it ("../shared/..." does not resolve for a reader of the
// repository).
//
// What counts as a citation: in JSON data, every token ending in .md, .json or .txt (data names
// no output files); in C++ sources, every token ending in .md except the reports the program
// writes (scoreboard.md, advice.md), and every .json or .txt token with a folder under docs/,
// shared/ or seeds/ (a bare .json in code is an output file: stats.json, matrix.json, ...).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "helpers.h"

namespace fs = std::filesystem;

namespace {

enum class Kind { Code, Data };

// Names of files the program writes; in code they are outputs, not citations.
const std::set<std::string> kOutputs = {"scoreboard.md", "scoreboard.partial.md", "advice.md"};

bool path_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '/';
}
bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string basename_of(const std::string& t) {
  const auto slash = t.rfind('/');
  return slash == std::string::npos ? t : t.substr(slash + 1);
}

bool under_docs_or_shared(const std::string& t) {
  for (std::string_view dir : {"docs/", "shared/", "seeds/"}) {
    const auto at = t.find(dir);
    if (at != std::string::npos && (at == 0 || t[at - 1] == '/')) return true;
  }
  return false;
}

// The document names cited in `text`, repeats kept: the .md names in order, then .json, then .txt.
std::vector<std::string> cited_documents(std::string_view text, Kind kind) {
  std::vector<std::string> out;
  for (std::string_view ext : {".md", ".json", ".txt"}) {
    for (auto at = text.find(ext); at != std::string_view::npos; at = text.find(ext, at + 1)) {
      const auto end = at + ext.size();
      if (end < text.size() && word_char(text[end])) continue;   // ".mdx", ".json5", ".txt_"
      if (at == 0 || !(word_char(text[at - 1]) || text[at - 1] == '-')) continue;  // a bare ".md"
      auto begin = at;
      while (begin > 0 && path_char(text[begin - 1])) --begin;
      std::string token(text.substr(begin, end - begin));
      if (begin > 0 && text[begin - 1] == ':' && token.rfind("//", 0) == 0) continue;  // a URL: public
      while (!token.empty() && token.front() == '/') token.erase(0, 1);  // "/docs/x.md": from the top
      if (kind == Kind::Code) {
        if (ext == ".md" && kOutputs.count(basename_of(token))) continue;
        if (ext != ".md" && !under_docs_or_shared(token)) continue;
      }
      out.push_back(std::move(token));
    }
  }
  return out;
}

bool resolves(const fs::path& root, const std::string& token) {
  if (token.find("..") != std::string::npos) return false;  // outside the tree, or unclear
  if (token.find('/') == std::string::npos) return fs::is_regular_file(root / "docs" / "reference" / token);
  return fs::is_regular_file(root / token);
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Scan {
  int citations = 0;
  std::set<std::string> documents;     // resolved names, for the count
  std::vector<std::string> missing;    // "file: token"
};

Scan scan_tree(const fs::path& root) {
  Scan r;
  const std::array<std::string, 4> dirs = {"sim", "models", "workloads", "configs"};
  for (const auto& d : dirs) {
    for (const auto& e : fs::recursive_directory_iterator(root / d)) {
      if (!e.is_regular_file()) continue;
      const auto ext = e.path().extension().string();
      Kind kind;
      if (ext == ".json") kind = Kind::Data;
      else if (ext == ".h" || ext == ".cpp" || ext == ".hpp") kind = Kind::Code;
      else continue;
      const std::string text = read_all(e.path());
      for (const auto& t : cited_documents(text, kind)) {
        ++r.citations;
        const auto rel = fs::relative(e.path(), root).generic_string();
        if (resolves(root, t)) r.documents.insert(t.find('/') == std::string::npos ? "docs/reference/" + t : t);
        else r.missing.push_back(rel + ": " + t);
      }
    }
  }
  return r;
}

}  // namespace

TEST_CASE("citations: the scanner finds document names and skips output files and links") {
  using V = std::vector<std::string>;
  CHECK(cited_documents("// as contention-model.md §1.3 says; see VALIDATION.md.", Kind::Code) ==
        V{"contention-model.md", "VALIDATION.md"});
  CHECK(cited_documents("// writes OUT/advice.md and scoreboard.md, stats.json", Kind::Code).empty());
  CHECK(cited_documents("// (../shared/design/VALIDATION.md, \"Scoring\")", Kind::Code) ==
        V{"../shared/design/VALIDATION.md"});
  CHECK(cited_documents("// seed: shared/seeds/x-y.txt; out/stats.json", Kind::Code) == V{"shared/seeds/x-y.txt"});
  CHECK(cited_documents("\"source\": \"measurements.json T01 (rows 0-12); workloads-and-lkp.md \\u00a72.5\"",
                        Kind::Data) == V{"workloads-and-lkp.md", "measurements.json"});
  CHECK(cited_documents("\"source\": \"b.mdx, .md, c.json5, d.txt_\"", Kind::Data).empty());
  CHECK(cited_documents("\"source\": \"https://github.com/x/y/README.md\"", Kind::Data).empty());

  const fs::path root = slubsim::test::source_dir();
  CHECK(resolves(root, "contention-model.md"));
  CHECK(resolves(root, "docs/reference/seeds/zhao-liu-spare-sheaf-and-capacity.txt"));
  CHECK(resolves(root, "docs/design.md"));
  CHECK_FALSE(resolves(root, "no-such-note.md"));
  CHECK_FALSE(resolves(root, "design.md"));  // a bare name is a file of docs/reference/
  CHECK_FALSE(resolves(root, "../shared/reference/contention-model.md"));
  CHECK_FALSE(resolves(root, "shared/seeds/hao-li-mmap2-three-kernels.txt"));
}

TEST_CASE("citations: every document cited by sim/, models/, workloads/ and configs/ is in the repository") {
  const fs::path root = slubsim::test::source_dir();
  REQUIRE(fs::is_regular_file(root / "docs" / "reference" / "README.md"));
  const Scan s = scan_tree(root);
  std::string list;
  for (const auto& m : s.missing) list += "\n  " + m;
  INFO("citations naming no file of the repository (a bare name must be in docs/reference/):" << list);
  CHECK(s.missing.empty());
  // The scan must see the citations at all (a broken scanner would pass the check above).
  CHECK(s.citations > 300);
  CHECK(s.documents.count("docs/reference/slub-algorithms.md") == 1);
  CHECK(s.documents.count("docs/reference/measurements.json") == 1);
}
