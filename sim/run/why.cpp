#include "sim/run/why.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <map>

#include "sim/machine/placement.h"
#include "sim/run/report.h"

namespace slubsim {

namespace fs = std::filesystem;

namespace {

// Allocator lock classes with at most this many instances (per-node locks) are reported per
// instance, as lock_stat's per-instance keys are.
constexpr std::size_t kMaxInstancesReported = 16;
// Locks named in a hottest-lock summary line before "...".
constexpr std::size_t kSummaryLocks = 4;
// Call chains of spin listed per variant under each why table.
constexpr std::size_t kSummaryStacks = 4;

double round_to(double v, double digits) {
  double s = std::pow(10.0, digits);
  return std::round(v * s) / s;
}

double percent(Time part, Time whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

double ns_per_op(Time t, std::uint64_t ops) {
  return ops ? to_ns(t) / static_cast<double>(ops) : 0.0;
}

// The line of `category`, appended (with zero time) if it is not there yet.
WhyLine& line(std::vector<WhyLine>& lines, const std::string& category, WhyLine::Kind kind,
              const std::string& lock = {}, const std::string& cls = {}, const std::string& instance = {}) {
  for (auto& l : lines)
    if (l.category == category) return l;
  lines.push_back({category, lock, kind, 0, cls, instance});
  return lines.back();
}

// The lines of one kind of wait with time, hottest first.
std::vector<const WhyLine*> hottest(const WhyProfile& p, WhyLine::Kind kind) {
  std::vector<const WhyLine*> waits;
  for (const auto& l : p.lines)
    if (l.kind == kind && l.time) waits.push_back(&l);
  std::stable_sort(waits.begin(), waits.end(), [](auto* a, auto* b) { return a->time > b->time; });
  return waits;
}

}  // namespace

WhyProfile why_profile(const RunResult& r) {
  WhyProfile p;
  p.ops = r.ops();
  TaskTime sum;
  for (const auto& t : r.task_time) {
    for (int a = 0; a < kNrAccounts; ++a) sum.busy[a] += t.busy[a];
    sum.idle += t.idle;
    p.task_time += t.total();
  }
  std::map<std::string, std::size_t> instances;  // per lock class
  for (const auto& l : r.locks) ++instances[l.cls];
  auto busy = [&](Account a) { return sum.busy[static_cast<int>(a)]; };

  std::vector<WhyLine> nonslab_waits, slab_waits;
  for (const auto& l : r.locks) {
    WhyLine::Kind kind = l.rwsem ? WhyLine::RwsemWait : WhyLine::SpinWait;
    if (l.waited.nonslab) line(nonslab_waits, "nonslab.wait." + l.cls, kind, l.cls, l.cls).time += l.waited.nonslab;
    if (l.waited.slab) {
      bool per_instance = instances[l.cls] <= kMaxInstancesReported;
      std::string category = per_instance ? "wait." + l.cls + "." + l.instance : "wait." + l.cls;
      std::string lock = per_instance ? l.cls + " " + l.instance : l.cls;
      line(slab_waits, category, kind, lock, l.cls, per_instance ? l.instance : "").time += l.waited.slab;
    }
  }
  p.lines.push_back({"nonslab", "", WhyLine::Busy, busy(Account::NonSlab)});
  p.lines.insert(p.lines.end(), nonslab_waits.begin(), nonslab_waits.end());
  p.lines.push_back({"slab.fastpath", "", WhyLine::Busy, busy(Account::SlabFast)});
  p.lines.push_back({"slab.slowpath", "", WhyLine::Busy, busy(Account::SlabSlow)});
  p.lines.push_back({"rcu.callbacks", "", WhyLine::Busy, busy(Account::Rcu)});
  p.lines.push_back({"rcu.ksoftirqd", "", WhyLine::Busy, busy(Account::Ksoftirqd)});
  p.lines.insert(p.lines.end(), slab_waits.begin(), slab_waits.end());
  p.lines.push_back({"idle", "", WhyLine::Idle, sum.idle});
  return p;
}

void add_profile(WhyProfile& into, const WhyProfile& p) {
  into.task_time += p.task_time;
  into.ops += p.ops;
  for (const auto& l : p.lines) line(into.lines, l.category, l.kind, l.lock, l.cls, l.instance).time += l.time;
}

std::string folded_stack(const StackWait& w) {
  return w.stack.empty() ? w.cls : w.stack + ";" + w.cls;
}

void put_why_keys(json& out, const std::vector<RunResult>& rows) {
  // Per row: why.<N>.<category>.* and the spin under each call chain, why.<N>.spin.<stack>.*;
  // the categories are also summed for their means over the rows.
  std::vector<std::string> order;
  std::map<std::string, std::pair<double, double>> sum;  // percent, ns per op
  std::size_t counted = 0;
  for (const auto& r : rows) {
    WhyProfile p = why_profile(r);
    if (!p.task_time) continue;
    ++counted;
    for (const auto& l : p.lines) {
      const double pct = percent(l.time, p.task_time), per_op = ns_per_op(l.time, p.ops);
      out[fmt::format("why.{}.{}.percent", r.nr_task, l.category)] = round_to(pct, 2);
      out[fmt::format("why.{}.{}.ns_per_op", r.nr_task, l.category)] = round_to(per_op, 2);
      if (!sum.count(l.category)) order.push_back(l.category);
      auto& s = sum[l.category];
      s.first += pct;
      s.second += per_op;
    }
    Time spin = 0;
    for (const auto& w : r.stack_waits) {
      const std::string stack = folded_stack(w);
      out[fmt::format("why.{}.spin.{}.percent", r.nr_task, stack)] = round_to(percent(w.time, p.task_time), 2);
      out[fmt::format("why.{}.spin.{}.ns_per_op", r.nr_task, stack)] = round_to(ns_per_op(w.time, p.ops), 2);
      spin += w.time;
    }
    // All spinning for spinlocks, whatever the chain: perf's self share of
    // native_queued_spin_lock_slowpath (a pin's observable, VALIDATION.md).
    out[fmt::format("why.{}.spin.percent", r.nr_task)] = round_to(percent(spin, p.task_time), 2);
  }
  if (!counted) return;
  const double n = static_cast<double>(counted);
  for (const auto& c : order) {
    out[fmt::format("why.{}.percent", c)] = round_to(sum[c].first / n, 2);
    out[fmt::format("why.{}.ns_per_op", c)] = round_to(sum[c].second / n, 2);
  }
}

namespace {

// "native_queued_spin_lock_slowpath 35.60% (maple_node.barn_lock node0 16.70%, ...)": the waits
// of one kind, hottest lock first.
std::string summary(const WhyProfile& p, WhyLine::Kind kind, const char* symbol) {
  const std::vector<const WhyLine*> waits = hottest(p, kind);
  Time total = 0;
  for (const WhyLine* l : waits) total += l->time;
  std::string out = fmt::format("{} {:.2f}%", symbol, percent(total, p.task_time));
  for (std::size_t i = 0; i < waits.size() && i < kSummaryLocks; ++i)
    out += fmt::format("{}{} {:.2f}%", i ? ", " : " (", waits[i]->lock, percent(waits[i]->time, p.task_time));
  if (waits.size() > kSummaryLocks) out += ", ...";
  if (!waits.empty()) out += ")";
  return out;
}

}  // namespace

double LockLoad::per_op() const {
  return ops ? static_cast<double>(acquisitions) / static_cast<double>(ops) : 0.0;
}

double LockLoad::busy() const {
  const double room = static_cast<double>(window) * static_cast<double>(instances);
  return room > 0 ? static_cast<double>(hold_total + handoff_total) / room : 0.0;
}

LockLoad lock_load(const std::vector<const RunResult*>& runs, const std::string& cls, const std::string& instance) {
  LockLoad load;
  for (const RunResult* r : runs) {
    load.ops += r->ops();
    load.window += r->window;
    std::size_t n = 0;
    for (const auto& l : r->locks) {
      if (l.cls != cls || (!instance.empty() && l.instance != instance)) continue;
      ++n;
      load.acquisitions += l.stat.acquisitions;
      load.contentions += l.stat.contentions;
      load.handoffs += l.stat.handoffs;
      load.hold_total += l.stat.hold_total;
      load.handoff_total += l.stat.handoff_total;
    }
    load.instances = std::max(load.instances, n);
  }
  return load;
}

double CallbackLoad::per_op() const {
  return ops ? static_cast<double>(callbacks) / static_cast<double>(ops) : 0.0;
}
double CallbackLoad::flood_share() const {
  return callbacks ? static_cast<double>(in_flood) / static_cast<double>(callbacks) : 0.0;
}
double CallbackLoad::ksoftirqd_share() const {
  const Time all = irq_exit + ksoftirqd;
  return all ? static_cast<double>(ksoftirqd) / static_cast<double>(all) : 0.0;
}
double CallbackLoad::runs_per_cpu_sec() const {
  return cpu_time ? static_cast<double>(ksoftirqd_runs) / to_sec(cpu_time) : 0.0;
}
Time CallbackLoad::mean_run() const {
  return ksoftirqd_runs ? ksoftirqd / static_cast<Time>(ksoftirqd_runs) : 0;
}

CallbackLoad callback_load(const std::vector<const RunResult*>& runs) {
  CallbackLoad c;
  for (const RunResult* r : runs) {
    c.ops += r->ops();
    for (const auto& t : r->task_time) {
      c.irq_exit += t.busy[static_cast<int>(Account::Rcu)];
      c.ksoftirqd += t.busy[static_cast<int>(Account::Ksoftirqd)];
    }
    c.callbacks += r->rcu_callbacks;
    c.in_flood += r->rcu_flood_callbacks;
    c.ksoftirqd_runs += r->ksoftirqd_runs;
    c.cpu_time += r->window * static_cast<Time>(r->task_time.size());
    c.floods.merge(r->rcu_floods);
    c.task_cpus += static_cast<int>(r->task_time.size());
  }
  return c;
}

namespace {

// "      callback floods: 64 of 64 task CPUs entered one, 7.7 to 7.9 ms into the run, none ended;
// longest queue 10412 (qhimark 10000)": from the runs' start, warm-up included.
std::string flood_line(const CallbackLoad& c) {
  const FloodHistory& f = c.floods;
  if (!f.qhimark) return "";
  std::string out = "      callback floods: ";
  if (!f.cpus) {
    out += "none";
  } else {
    out += fmt::format("{} of {} task CPUs entered one, {:.1f} to {:.1f} ms into the run, ", f.cpus, c.task_cpus,
                       to_us(f.first) / 1000.0, to_us(f.last) / 1000.0);
    out += f.exits ? fmt::format("{} ended", f.exits) : std::string("none ended");
  }
  return out + fmt::format("; longest queue {} (qhimark {})\n", f.queue_peak, f.qhimark);
}

// "    rcu callbacks: 1.00 per op; 83% of their time (spin apart) in ksoftirqd, 17% at tick irq exits; ksoftirqd
// got a CPU 166 times per task CPU per second, 1.65 ms a run; 0.0% invoked in a callback flood"
std::string callback_line(const std::vector<const RunResult*>& runs) {
  const CallbackLoad c = callback_load(runs);
  if (!c.callbacks) return "";
  std::string out = fmt::format("    rcu callbacks: {:.2f} per op; {:.0f}% of their time (spin apart) in ksoftirqd, {:.0f}% at tick irq exits",
                                c.per_op(), 100.0 * c.ksoftirqd_share(), 100.0 * (1.0 - c.ksoftirqd_share()));
  if (c.ksoftirqd_runs)
    out += fmt::format("; ksoftirqd got a CPU {:.{}f} times per task CPU per second, {:.2f} ms a run", c.runs_per_cpu_sec(),
                       c.runs_per_cpu_sec() < 10 ? 1 : 0, to_us(c.mean_run()) / 1000.0);
  out += fmt::format("; {:.1f}% invoked in a callback flood (queue past qhimark)\n", 100.0 * c.flood_share());
  out += flood_line(c);
  return out;
}

// "    maple_node slabs: 0.0034 new and 0.0256 taken back from partial lists per op; 98% of those held objects
// in use (30.5 of 64 free); 88% of the slabs moved off cpu partial lists held objects in use": per cache
// with slab traffic, how often its slabs are reused before they empty (slub::Reuse). A point written
// before the counters existed reads as none taken back.
std::string reuse_lines(const std::vector<const RunResult*>& runs) {
  std::string out;
  if (runs.empty()) return out;
  std::uint64_t ops = 0;
  for (const RunResult* r : runs) ops += r->ops();
  if (!ops) return out;
  for (std::size_t i = 0; i < runs.front()->caches.size(); ++i) {
    slub::ReuseCounters u{};
    std::uint64_t fresh = 0;
    for (const RunResult* r : runs) {
      if (i >= r->caches.size()) continue;
      for (int k = 0; k < slub::kNrReuse; ++k) u[k] += r->caches[i].reuse[k];
      fresh += r->caches[i].stats[static_cast<int>(slub::Stat::ALLOC_SLAB)];
    }
    auto at = [&](slub::Reuse k) { return static_cast<double>(u[static_cast<int>(k)]); };
    const double taken = at(slub::Reuse::TAKEN_IN_USE) + at(slub::Reuse::TAKEN_EMPTY);
    const double drained = at(slub::Reuse::DRAINED_IN_USE) + at(slub::Reuse::DRAINED_EMPTY);
    if (taken == 0 && fresh == 0) continue;
    const double n = static_cast<double>(ops);
    out += fmt::format("    {} slabs: {:.4f} new and {:.4f} taken back from partial lists per op", runs.front()->caches[i].name,
                       static_cast<double>(fresh) / n, taken / n);
    if (taken > 0)
      out += fmt::format("; {:.0f}% of those held objects in use ({:.1f} of {} free)", 100.0 * at(slub::Reuse::TAKEN_IN_USE) / taken,
                         at(slub::Reuse::TAKEN_FREE_OBJECTS) / taken, runs.front()->caches[i].geo.objects);
    if (drained > 0)
      out += fmt::format("; {:.0f}% of the slabs moved off cpu partial lists held objects in use",
                         100.0 * at(slub::Reuse::DRAINED_IN_USE) / drained);
    out += "\n";
  }
  return out;
}

// "      maple_node.barn_lock node0: 0.106 acquisitions per op (1.32 M/s), 99% contended; hold
// 230 ns, hand-off 426 ns; busy 86% of the window": the load on each of the hottest spinlocks.
std::string load_lines(const std::vector<const RunResult*>& runs, const WhyProfile& p) {
  const std::vector<const WhyLine*> waits = hottest(p, WhyLine::SpinWait);
  std::string out;
  for (std::size_t i = 0; i < waits.size() && i < kSummaryLocks; ++i) {
    const LockLoad ld = lock_load(runs, waits[i]->cls, waits[i]->instance);
    if (!ld.acquisitions) continue;
    const double acq = static_cast<double>(ld.acquisitions);
    const double rate = ld.window ? acq / (to_ns(ld.window) * 1e-9) : 0.0;
    out += fmt::format("      {}: {:.3f} acquisitions per op ({:.2f} M/s), {:.0f}% contended; hold {:.0f} ns", waits[i]->lock,
                       ld.per_op(), rate / 1e6, 100.0 * static_cast<double>(ld.contentions) / acq,
                       to_ns(ld.hold_total) / acq);
    if (ld.handoffs)
      out += fmt::format(", hand-off {:.0f} ns", to_ns(ld.handoff_total) / static_cast<double>(ld.handoffs));
    out += fmt::format("; busy {:.0f}% of the window{}\n", 100.0 * ld.busy(),
                       ld.instances > 1 ? fmt::format(" (mean of {} instances)", ld.instances) : "");
  }
  return out;
}

}  // namespace

std::string describe_placement(const Machine& m, int nr_task) {
  std::vector<int> per_node(static_cast<std::size_t>(m.nr_nodes), 0);
  for (int cpu : place_tasks(m, nr_task)) ++per_node[static_cast<std::size_t>(m.cpu_node[static_cast<std::size_t>(cpu)])];
  std::vector<std::string> parts;
  for (std::size_t n = 0; n < per_node.size(); ++n) parts.push_back(fmt::format("node{} {}", n, per_node[n]));
  return fmt::format("tasks per node (as lkp binds them: cores in hwloc order, then their SMT siblings): {}",
                     fmt::join(parts, ", "));
}

// One table per task count with the variants side by side: each category's share of the task
// time (runs summed) and its ns per operation; then, per variant, the window, a cycle or an
// unsettled verdict, the hottest locks and the hottest spin call chains.
std::string format_why(const Job& job, const JobResult& result, const std::string& out_dir) {
  std::string out;
  const std::size_t nv = job.variants.size();
  // Column names: the labels, or letters with a legend when the labels are long.
  std::vector<std::string> names;
  std::size_t longest = 0;
  for (const auto& v : job.variants) longest = std::max(longest, v.label.size());
  const bool letters = longest > 18;
  for (std::size_t v = 0; v < nv; ++v)
    names.push_back(letters ? std::string(1, static_cast<char>('A' + v % 26)) + (v >= 26 ? std::to_string(v / 26) : "")
                            : job.variants[v].label);
  if (letters)
    for (std::size_t v = 0; v < nv; ++v) out += fmt::format("{} = {}\n", names[v], job.variants[v].label);
  constexpr int kCell = 18;
  for (std::size_t row = 0; row < job.nr_tasks.size(); ++row) {
    const int nt = job.nr_tasks[row];
    std::vector<WhyProfile> prof(nv);
    for (std::size_t v = 0; v < nv; ++v)
      for (const auto& run : result.runs[v]) add_profile(prof[v], why_profile(run[row]));
    // Categories: every one with time in some variant, the largest (over variants) first.
    std::vector<std::pair<std::string, Time>> cats;
    for (const auto& p : prof)
      for (const auto& l : p.lines) {
        if (!l.time) continue;
        auto it = std::find_if(cats.begin(), cats.end(), [&](const auto& c) { return c.first == l.category; });
        if (it == cats.end()) cats.push_back({l.category, l.time});
        else it->second = std::max(it->second, l.time);
      }
    std::stable_sort(cats.begin(), cats.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::size_t width = 8;
    for (const auto& c : cats) width = std::max(width, c.first.size());
    out += fmt::format("why: {} tasks, where the task time goes: % of {} tasks x the window, and ns per op (runs summed)\n",
                       nt, nt);
    out += "  " + describe_placement(job.machine, nt) + "\n";
    out += fmt::format("{:<{}}", "category", width);
    for (const auto& n : names) out += fmt::format(" {:>{}}", n, kCell);
    out += "\n";
    for (const auto& entry : cats) {
      const std::string& cat = entry.first;  // not a structured binding: clang 14 cannot capture one
      out += fmt::format("{:<{}}", cat, width);
      for (const auto& p : prof) {
        const auto it = std::find_if(p.lines.begin(), p.lines.end(), [&](const WhyLine& l) { return l.category == cat; });
        const Time t = it == p.lines.end() ? 0 : it->time;
        out += fmt::format(" {:>{}}", t ? fmt::format("{:.2f}% {:.1f}", percent(t, p.task_time), ns_per_op(t, p.ops)) : "-",
                           kCell);
      }
      out += "\n";
    }
    for (std::size_t v = 0; v < nv; ++v) {
      const auto& runs = result.runs[v];
      const RunResult& first = runs.front()[row];
      const WhyProfile& p = prof[v];
      out += fmt::format("  {}: {} ms window after {} ms", names[v], to_us(first.window) / 1000.0,
                         to_us(first.warmup) / 1000.0);
      const SettleReport& st = first.settle;
      if (st.judged && st.period > 0)
        out += fmt::format("; the throughput cycles with a {} ms period (autocorrelation {:.2f}), 2 ms intervals from "
                           "{:.2f} to {:.2f} M ops/s (10th-90th percentile), the shares are its average",
                           to_us(st.period) / 1000.0, st.period_acf, st.low / 1e6, st.high / 1e6);
      if (st.judged && !st.settled) out += fmt::format("; not settled: {}", st.reason);
      out += "\n    " + summary(p, WhyLine::SpinWait, "native_queued_spin_lock_slowpath") + "\n";
      {
        std::vector<const RunResult*> rows;
        for (const auto& run : runs) rows.push_back(&run[row]);
        out += load_lines(rows, p);
        out += callback_line(rows);
        out += reuse_lines(rows);
      }
      if (std::any_of(p.lines.begin(), p.lines.end(), [](const WhyLine& l) { return l.kind == WhyLine::RwsemWait && l.time; }))
        out += "    " + summary(p, WhyLine::RwsemWait, "osq_lock") + "\n";
      // The spin under each call chain, hottest first, as perf's folded stacks.
      std::map<std::string, Time> stacks;
      for (const auto& run : runs)
        for (const auto& w : run[row].stack_waits) stacks[folded_stack(w)] += w.time;
      std::vector<std::pair<std::string, Time>> hot(stacks.begin(), stacks.end());
      std::stable_sort(hot.begin(), hot.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
      for (std::size_t i = 0; i < hot.size() && i < kSummaryStacks; ++i)
        out += fmt::format("    {:>7.2f}%  {}\n", percent(hot[i].second, p.task_time), hot[i].first);
      if (!out_dir.empty() && job.request.stacks)
        out += fmt::format("    folded stacks of all task time: {}\n",
                           (fs::path(variant_dir(out_dir, job, v)) / fmt::format("stacks.{}.folded", nt)).string());
    }
    out += "\n";
  }
  return out;
}

}  // namespace slubsim
