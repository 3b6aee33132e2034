// sim/trust/: how far to trust an answer: the inputs the model does not know, with their ranges
// and sources (inputs.h, `slubsim inputs`), the intervals they give an answer (uncertainty.h),
// and the model's record on the published tables nearest to a question (record.h), also as an
// interval (conformal.h). This file: the catalogue of uncertain inputs.
#include "sim/trust/inputs.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fmt/format.h>

namespace slubsim {

namespace fs = std::filesystem;

namespace {

bool begins(const std::string& lower, std::string_view prefix) { return lower.rfind(prefix, 0) == 0; }

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Not an uncertain input of this job: a fact, a switch of the model, or a figure not used.
bool left_out(const std::string& source) {
  const std::string s = lowercase(source);
  for (std::string_view p : {"kernel fact", "model switch", "model choice", "replay mechanics", "used only with", "a check"})
    if (begins(s, p)) return true;
  return false;
}

UncertainInput::Kind kind_of(const std::string& source) {
  const std::string s = lowercase(source);
  if (begins(s, "--set ")) return UncertainInput::Kind::Set;
  if (begins(s, "measured by slubsim probe")) return UncertainInput::Kind::Measured;
  if (begins(s, "fitted")) return UncertainInput::Kind::Fitted;
  if (begins(s, "copied")) return UncertainInput::Kind::Copied;  // "copied from preset NAME: ..."
  if (s.find("placeholder") != std::string::npos) return UncertainInput::Kind::Placeholder;
  if (s.find("estimate") != std::string::npos) return UncertainInput::Kind::Estimate;
  return UncertainInput::Kind::Sourced;
}

std::string unit_of(const std::string& key) {
  for (std::string_view u : {"ns", "us", "ms", "kb"})
    if (key.size() > u.size() + 1 && key.compare(key.size() - u.size() - 1, u.size() + 1, "_" + std::string(u)) == 0)
      return std::string(u);
  return "";
}

// Every sourced number below `node`, in file order; `path` is its --set key so far.
void walk(const json& node, const std::string& path, const std::string& file, const std::string& used_by,
          std::vector<UncertainInput>& out) {
  if (node.is_object() && node.contains("value") && node.contains("source")) {
    const json& v = node["value"];
    if (!v.is_number() || !node["source"].is_string()) return;
    const std::string source = node["source"].get<std::string>();
    if (left_out(source)) return;
    UncertainInput in;
    in.name = path;
    in.file = file;
    in.value = v.get<double>();
    // The unit is in the figure's key ("list_op_ns") or its group's ("latency_ns.llc").
    const std::size_t dot = path.rfind('.');
    in.unit = unit_of(path.substr(dot + 1));
    if (in.unit.empty() && dot != std::string::npos) {
      const std::string parent = path.substr(0, dot);
      in.unit = unit_of(parent.substr(parent.rfind('.') + 1));
    }
    in.kind = kind_of(source);
    in.source = source;
    in.used_by = used_by;
    if (node.contains("range")) {
      in.range = std::array<double, 2>{node["range"][0].get<double>(), node["range"][1].get<double>()};
      in.range_source = node.contains("range_source") ? node["range_source"].get<std::string>()
                                                      : "the range its source states";
    }
    out.push_back(std::move(in));
    return;
  }
  if (node.is_object()) {
    for (auto it = node.begin(); it != node.end(); ++it) walk(it.value(), path + "." + it.key(), file, used_by, out);
  }
}

std::string number(double v) { return fmt::format("{:g}", v); }

}  // namespace

const char* kind_name(UncertainInput::Kind k) {
  switch (k) {
    case UncertainInput::Kind::Estimate: return "estimate";
    case UncertainInput::Kind::Placeholder: return "placeholder";
    case UncertainInput::Kind::Sourced: return "sourced";
    case UncertainInput::Kind::Set: return "set";
    case UncertainInput::Kind::Measured: return "measured";
    case UncertainInput::Kind::Fitted: return "fitted";
    case UncertainInput::Kind::Copied: return "copied";
  }
  return "?";
}

bool estimated(const UncertainInput& in) {
  return in.kind == UncertainInput::Kind::Estimate || in.kind == UncertainInput::Kind::Copied;
}

std::vector<WorkloadFit> workload_fits(const std::string& home, const std::string& workload,
                                       const std::string& machine) {
  std::vector<WorkloadFit> out;
  std::error_code ec;
  const fs::path dir = fs::path(home) / "configs" / "fits";
  if (!fs::is_directory(dir, ec)) return out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    try {
      const json fit = load_json_file(f.string());
      WorkloadFit w;
      w.name = f.stem().string();
      w.experiment = fit.at("experiment").get<std::string>();
      w.topology = fit.value("topology", "");
      w.scale = fit.at("scale").get<double>();
      const json e = load_json_file((fs::path(home) / "configs" / "experiments" / (w.experiment + ".json")).string());
      if (e.value("workload", "") != workload) continue;
      w.this_machine = !machine.empty() && w.topology == machine;
      out.push_back(std::move(w));
    } catch (const std::exception&) {
      // A fit that cannot be read does not widen the range; validate reports it.
    }
  }
  std::stable_partition(out.begin(), out.end(), [](const WorkloadFit& w) { return w.this_machine; });
  return out;
}

std::pair<double, double> fit_span(const std::vector<WorkloadFit>& fits) {
  double lo = 1, hi = 1;  // the placeholder itself
  for (const auto& f : fits) {
    lo = std::min(lo, f.scale);
    hi = std::max(hi, f.scale);
  }
  return {lo, hi};
}

std::vector<UncertainInput> uncertain_inputs(const Job& job) {
  std::vector<Override> overrides;
  for (const auto& s : job.request.sets) overrides.push_back(parse_override(s));
  std::vector<UncertainInput> out;
  for (const auto& [role, file] : job.inputs) {
    std::string domain, used_by;
    if (role == "topology") {
      domain = "topology";
      used_by = job.machine.name + ", every workload";
    } else if (role == "costs") {
      domain = "costs";
      used_by = "every machine and workload (one cost model)";
    } else if (role == "workload") {
      domain = "workload";
      used_by = job.program.name + ", every machine";
    } else {
      continue;  // kernels and caches: facts of the kernel; a trace: its own events
    }
    json doc = load_json_file(file);
    const std::string shown = fs::path(file).lexically_relative(job.request.home).string();
    const std::string& where = shown.empty() || shown.rfind("..", 0) == 0 ? file : shown;
    apply_overrides(doc, overrides, domain);
    const std::size_t first = out.size();
    for (auto it = doc.begin(); doc.is_object() && it != doc.end(); ++it)
      walk(it.value(), domain + "." + it.key(), where, used_by, out);
    if (domain != "workload") continue;
    // Placeholder non-slab times: the span of every fit of this workload (and x1), this machine's
    // fits named first.
    const std::vector<WorkloadFit> all = workload_fits(job.request.home, job.program.name, job.machine.name);
    const auto [lo, hi] = fit_span(all);
    if (lo == hi) continue;
    std::vector<std::string> here, elsewhere;
    for (const auto& f : all) (f.this_machine ? here : elsewhere).push_back(fmt::format("{} x{:g}", f.name, f.scale));
    std::string fits = here.empty() ? fmt::format("none on {}", job.machine.name)
                                    : fmt::format("this machine's: {}", fmt::join(here, ", "));
    if (!elsewhere.empty()) fits += fmt::format("; on other machines: {}", fmt::join(elsewhere, ", "));
    for (std::size_t i = first; i < out.size(); ++i) {
      UncertainInput& in = out[i];
      if (in.kind != UncertainInput::Kind::Placeholder || in.range) continue;
      in.range = std::array<double, 2>{in.value * lo, in.value * hi};
      in.range_source = fmt::format("the fits of {} (configs/fits) scale its non-slab times by x{:g} to x{:g} ({}); "
                                    "the placeholder itself is x1",
                                    job.program.name, lo, hi, fits);
    }
  }
  return out;
}

std::string format_inputs(const Job& job, const std::vector<UncertainInput>& inputs) {
  std::size_t ranged = 0;
  for (const auto& in : inputs) ranged += in.range ? 1 : 0;
  std::string out = fmt::format(
      "slubsim inputs: {} on {}: {} inputs that are not facts of the kernel, {} with a range\n"
      "kind: estimate (the source's guess), placeholder (not fitted to any machine), sourced (a published or\n"
      "measured figure, often of another part), set (--set on this command line), measured (slubsim probe on\n"
      "this machine), fitted (a cost fitted on a published table, its range what the table's other cells allow),\n"
      "copied (another machine's preset figure, copied by slubsim import or probe, with that preset's range)\n\n",
      job.program.name.empty() ? job.request.workload : job.program.name, job.machine.name, inputs.size(), ranged);
  std::size_t width = 4;
  for (const auto& in : inputs) width = std::max(width, in.name.size());
  out += fmt::format("{:<{}} {:>10} {:>19} {:<12} {}\n", "name", width, "value", "range", "kind", "used by");
  for (const auto& in : inputs) {
    const std::string unit = in.unit.empty() ? "" : " " + in.unit;
    const std::string range = in.range ? fmt::format("{}-{}{}", number((*in.range)[0]), number((*in.range)[1]), unit)
                                       : std::string("none stated");
    out += fmt::format("{:<{}} {:>10} {:>19} {:<12} {}\n", in.name, width, number(in.value) + unit, range,
                       kind_name(in.kind), in.used_by);
  }
  out += "\nsources\n";
  for (const auto& in : inputs) {
    out += fmt::format("{}: {}\n", in.name, in.source);
    if (in.range) out += fmt::format("  range: {}\n", in.range_source);
  }
  return out;
}

json inputs_json(const Job& job, const std::vector<UncertainInput>& inputs) {
  json list = json::array();
  for (const auto& in : inputs) {
    json x = {{"name", in.name},     {"value", in.value},   {"unit", in.unit},
              {"kind", kind_name(in.kind)}, {"source", in.source}, {"file", in.file},
              {"used_by", in.used_by}};
    if (in.range) {
      x["range"] = {(*in.range)[0], (*in.range)[1]};
      x["range_source"] = in.range_source;
    }
    list.push_back(x);
  }
  return {{"topology", job.machine.name},
          {"workload", job.program.name.empty() ? job.request.workload : job.program.name},
          {"inputs", list}};
}

}  // namespace slubsim
