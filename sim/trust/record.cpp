#include "sim/trust/record.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <set>

#include "sim/config/workload_json.h"
#include "sim/trust/inputs.h"
#include "sim/machine/topology.h"

namespace slubsim {


namespace {

std::string vendor_of(const std::string& machine) { return machine.substr(0, machine.find('-')); }

// "amd" -> "AMD", "intel" -> "Intel": as the vendor writes its name.
std::string vendor_text(std::string v) {
  if (v.size() <= 3)
    for (auto& ch : v) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  else if (!v.empty())
    v[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(v[0])));
  return v;
}

// One scored cell, as the record needs it.
struct Scored {
  std::string experiment;
  ComparisonKind kind;
  bool agree;
  double abs_error_pp;
};

// The scored tables whose best topology is of `vendor`, with their sockets and cells; and the
// ids of experiments scored on `machine` itself. Experiments whose configs cannot be read are
// skipped (validate reports them).
struct Tables {
  std::vector<std::pair<int, Scored>> cells;  // (sockets of the table's machine, cell)
  std::vector<std::string> on_machine;        // "id (signs a/n)"
};

// A scored cell of the scoreboard: an excluded one has no "agree" (nor a simulated delta).
bool scored(const json& cell) { return cell.contains("agree") && cell["agree"].is_boolean(); }

Tables read_tables(const std::string& home, const json& board, const std::string& vendor,
                   const std::set<std::string>& caches, const std::string& machine) {
  Tables out;
  std::map<std::string, bool> family;  // workload -> shares a cache with the question's
  for (const auto& e : board.at("experiments")) {
    const std::string id = e.at("id").get<std::string>();
    const std::string workload = e.at("workload").get<std::string>();
    try {
      if (!family.count(workload)) {
        const std::string wf = home + "/workloads/" + workload + ".json";
        const Program p = parse_workload(load_json_file(wf), wf);
        family[workload] = std::any_of(p.caches.begin(), p.caches.end(), [&](const std::string& c) { return caches.count(c) > 0; });
      }
      for (const auto& t : e.at("topologies")) {
        const std::string topology = t.at("topology").get<std::string>();
        std::size_t agree = 0, n = 0;
        for (const auto& c : t.at("cells"))
          if (scored(c)) ++n, agree += c.at("agree").get<bool>() ? 1 : 0;
        if (topology == machine) out.on_machine.push_back(fmt::format("{} (signs {}/{})", id, agree, n));
        if (topology != e.at("best_topology").get<std::string>() || vendor_of(topology) != vendor || !family[workload])
          continue;
        const std::string tf = home + "/configs/topologies/" + topology + ".json";
        const int sockets = parse_topology(load_json_file(tf), tf).nr_sockets;
        for (const auto& c : t.at("cells")) {
          if (!scored(c)) continue;
          const auto k = comparison_of_key(c.value("kind", ""));  // as validate set it
          if (!k) continue;  // a scoreboard from before the kinds
          out.cells.push_back({sockets, {id, *k, c.at("agree").get<bool>(), c.at("abs_error_pp").get<double>()}});
        }
      }
    } catch (const std::exception&) {
      continue;
    }
  }
  return out;
}

std::string summary(const std::vector<const Scored*>& cells) {
  std::vector<double> err;
  std::set<std::string> ids;
  std::size_t agree = 0;
  for (const auto* c : cells) {
    err.push_back(c->abs_error_pp);
    ids.insert(c->experiment);
    agree += c->agree ? 1 : 0;
  }
  std::sort(err.begin(), err.end());
  const double median = err.size() % 2 ? err[err.size() / 2] : (err[err.size() / 2 - 1] + err[err.size() / 2]) / 2;
  return fmt::format("signs {}/{}, median error {:.1f} points ({})", agree, cells.size(), median, fmt::join(ids, ", "));
}

}  // namespace

ComparisonKind comparison_between(const Variant& a, const Variant& b) {
  return a.kernel.name == b.kernel.name   ? ComparisonKind::Knob
         : a.kernel.tree == b.kernel.tree ? ComparisonKind::WithinTree
                                          : ComparisonKind::AcrossReleases;
}

std::vector<ComparisonKind> comparisons_of(const Job& job) {
  std::set<ComparisonKind> kinds;
  for (std::size_t v = 0; v < job.variants.size(); ++v) {
    const std::size_t base = baseline_variant(job, v);
    if (base != v) kinds.insert(comparison_between(job.variants[base], job.variants[v]));
  }
  return {kinds.begin(), kinds.end()};
}

std::map<ComparisonKind, RecordWidth> record_widths(const std::string& home) {
  std::map<ComparisonKind, RecordWidth> out;
  const ComparisonKind kinds[] = {ComparisonKind::Knob, ComparisonKind::WithinTree, ComparisonKind::AcrossReleases};
  for (ComparisonKind k : kinds) out[k] = RecordWidth{};
  auto opt = [](const json& x, const char* key) -> std::optional<double> {
    if (!x.contains(key) || !x[key].is_number()) return std::nullopt;
    return x[key].get<double>();
  };
  try {
    const json board = load_json_file(home + "/results/scoreboard.json");
    const json& by_kind = board.at("record").at("kinds");
    for (ComparisonKind k : kinds) {
      if (!by_kind.contains(comparison_key(k))) continue;
      const json& x = by_kind[comparison_key(k)];
      RecordWidth& w = out[k];
      w.found = true;
      w.half_width_pp = opt(x, "answer_half_width_pp");
      w.cells = x.value("cells", 0);
      w.covered = x.value("covered", 0);
      w.tables = x.value("tables", 0);
      w.median_width_pp = opt(x, "median_width_pp");
      if (x.contains("inputs_interval")) {
        const json& i = x["inputs_interval"];
        w.inputs_cells = i.value("cells", 0);
        w.inputs_covered = i.value("covered", 0);
        w.inputs_median_width_pp = opt(i, "median_width_pp");
        w.inputs_from = "results/scoreboard.json";
      }
    }
  } catch (const std::exception&) {
    return out;  // no scoreboard, or one from before the record: said where printed
  }
  try {
    const json last = load_json_file(home + "/configs/record/inputs-interval.json");
    for (ComparisonKind k : kinds) {
      RecordWidth& w = out[k];
      if (!w.inputs_from.empty() || !last.at("kinds").contains(comparison_key(k))) continue;
      const json& i = last["kinds"][comparison_key(k)];
      w.inputs_cells = i.value("cells", 0);
      w.inputs_covered = i.value("covered", 0);
      w.inputs_median_width_pp = opt(i, "median_width_pp");
      w.inputs_from = fmt::format("the last scoreboard with intervals, at {}", last.value("commit", "?"));
    }
  } catch (const std::exception&) {
  }
  return out;
}

std::string record_width_text(ComparisonKind k, const RecordWidth& w) {
  if (!w.found) return fmt::format("{}: no record (results/scoreboard.json has none for it)", comparison_text(k));
  std::string out = fmt::format(
      "{}: with the model's record {} ({} of {} published deltas held, {:.0f}%, one table left out; {} tables)",
      comparison_text(k), w.half_width_pp ? fmt::format("±{:.1f} points", *w.half_width_pp) : "unbounded",
      w.covered, w.cells, w.cells ? 100.0 * w.covered / w.cells : 0.0, w.tables);
  if (w.inputs_from.empty())
    out += "; the inputs' interval: never measured on the scoreboard";
  else
    out += fmt::format("; the inputs' interval alone held {} of {} ({:.0f}%, {})", w.inputs_covered, w.inputs_cells,
                       w.inputs_cells ? 100.0 * w.inputs_covered / w.inputs_cells : 0.0, w.inputs_from);
  return out;
}

std::string record_lines(const Job& job, const std::vector<ComparisonKind>& kinds) {
  const std::string home = job.request.home;
  const std::string file = home + "/results/scoreboard.json";
  json board;
  try {
    board = load_json_file(file);
  } catch (const std::exception&) {
    return "record: no scoreboard (results/scoreboard.json) to say how the model did on published tables\n";
  }
  const std::string vendor = vendor_of(job.machine.name);
  const std::set<std::string> caches(job.program.caches.begin(), job.program.caches.end());
  const Tables tables = read_tables(home, board, vendor, caches, job.machine.name);
  const std::string shown = vendor_text(vendor);
  std::string out = "record: the model on the published tables nearest to this question (results/scoreboard.json)\n";
  for (ComparisonKind k : kinds) {
    std::vector<const Scored*> same, other;
    std::set<int> other_sockets;
    for (const auto& [sockets, c] : tables.cells) {
      if (c.kind != k) continue;
      if (sockets == job.machine.nr_sockets) same.push_back(&c);
      else other.push_back(&c), other_sockets.insert(sockets);
    }
    if (!same.empty())
      out += fmt::format("  {} on {}-socket {}: {}\n", comparison_text(k), job.machine.nr_sockets, shown, summary(same));
    else if (!other.empty())
      out += fmt::format("  {}: none on a {}-socket {} machine; on {}-socket {}: {}\n", comparison_text(k),
                         job.machine.nr_sockets, shown, fmt::join(other_sockets, ", "), shown, summary(other));
    else
      out += fmt::format("  {}: nothing close was validated (no scored table of this kind, of a workload that "
                         "shares a cache with this one, on a machine of this vendor)\n",
                         comparison_text(k));
  }
  if (tables.on_machine.empty())
    out += fmt::format("  {}: not validated (no published table was scored on it)", job.machine.name);
  else
    out += fmt::format("  {}: validated in {}", job.machine.name, fmt::join(tables.on_machine, ", "));
  std::size_t estimates = 0, placeholders = 0;
  for (const auto& in : uncertain_inputs(job)) {
    if (in.name.rfind("topology.latency_ns.", 0) == 0 && estimated(in)) ++estimates;
    if (in.kind == UncertainInput::Kind::Placeholder) ++placeholders;
  }
  out += fmt::format("; {} of its latencies estimated or copied, {} non-slab times placeholders ('slubsim inputs')\n", estimates,
                     placeholders);
  return out;
}

}  // namespace slubsim
