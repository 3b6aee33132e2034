// The shared state of one simulation and the pricing of every access to it: cache lines,
// queued spinlocks and rwsems. Implements the models' Shared registry, and grants the requests
// that CPUs make (sim/engine/cpu.h), always in global simulated-time order.
#pragma once
#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "models/exec.h"
#include "sim/engine/coherence.h"
#include "sim/config/costs.h"
#include "sim/engine/locks.h"
#include "sim/machine/machine.h"

namespace slubsim {

// What happened to a request made at time t.
struct Outcome {
  bool granted = true;  // false: the CPU waits until the World hands it the lock
  Time done = 0;        // when the access completed (granted only)
  bool result = true;   // trylock success
  bool sleeps = false;  // waiting asleep (idle CPU) rather than spinning
};

struct Options {
  bool rwsem_spin_on_owner = true;
  // Grant requests for one-CPU objects (Reach::OneCpu) without global order (sim/engine/cpu.h).
  // Off only to prove the results the same (tests/test_one_cpu.cpp).
  bool one_cpu_inline = true;
};

class World : public Shared {
 public:
  World(const Machine& m, const Costs& c, Options o = {})
      : m_(m), c_(c), coh_(m, c), o_(o), drained_at_(static_cast<std::size_t>(m.nr_cpus), 0) {}

  LineId new_line(std::string_view cls, int home_node, Reach reach = Reach::Shared) override;
  SpinLockId new_spinlock(std::string_view cls, std::string_view instance, int home_node, Reach reach) override;
  RwsemId new_rwsem(std::string_view cls, std::string_view instance, int home_node, Reach reach) override;
  LineId lock_line(SpinLockId l) const override { return {locks_[l.v].line}; }
  void set_line_reach(LineId l, int cpu) override { lines_[l.v].only_cpu = cpu >= 0 ? cpu : Line::kAnyCpu; }

  // Inline: a CPU's every request passes here (mostly to a one-CPU lock); the work is out of line.
  // c: cpu's number (Cpu is incomplete here).
  Outcome process(Cpu& cpu, int c, const Request& r, Time t) {
    ++requests_;
    switch (r.kind) {
      case Req::Read: return {true, coh_.read(lines_[r.id], c, t)};
      case Req::Write: return {true, coh_.write(lines_[r.id], c, c_.posted_stores ? drained(c, t) : t)};
      case Req::Store: return {true, c_.posted_stores ? post(c, lines_[r.id], t) : coh_.write(lines_[r.id], c, t)};
      case Req::SpinLock: return spin_lock(cpu, locks_[r.id], t, false);
      case Req::SpinTrylock: return spin_lock(cpu, locks_[r.id], t, true);
      case Req::SpinUnlock: return {true, spin_unlock(cpu, locks_[r.id], t)};
      case Req::DownRead: return down(cpu, rwsems_[r.id], t, false);
      case Req::DownWrite: return down(cpu, rwsems_[r.id], t, true);
      case Req::UpRead: return {true, up(cpu, rwsems_[r.id], t, false)};
      case Req::UpWrite: return {true, up(cpu, rwsems_[r.id], t, true)};
    }
    unknown_request();
  }
  // True if r is for an object of Reach::OneCpu (models/exec.h): it may be granted out of
  // global order. Throws if a second CPU touches such an object.
  bool one_cpu(int cpu, const Request& r) {
    const int only = lines_[line_of(r)].only_cpu;
    if (only == cpu) [[likely]] return true;
    if (only == Line::kAnyCpu) return false;
    return claim_one_cpu(cpu, r);
  }
  // A CPU spun from `from` to `to` before lock request r was granted; in_slab: it waited in
  // allocator code. The waiter's call chain (e's frames) names the spin in stack_waits().
  void note_wait(const Request& r, bool in_slab, Time from, Time to, const Exec& e);

  // Spinlock waiting time per interval, per (lock class index, call chain of frame names).
  struct StackKey {
    int cls = 0;
    int depth = 0;
    std::array<const char*, Exec::kMaxFrames> frames{};
    bool operator<(const StackKey& o) const;
    std::string folded() const;  // outermost first, ';'-separated
  };
  const std::map<StackKey, Ledger<Time>>& stack_waits() const { return stack_waits_; }

  // The intervals lock statistics and waits are counted by (models/ledger.h); default: one.
  void set_grid(const Grid* g) { grid_ = g; }
  const Grid& grid() const { return *grid_; }

  const Machine& machine() const { return m_; }
  const Costs& costs() const { return c_; }
  const Options& options() const { return o_; }
  Line& line(LineId l) { return lines_[l.v]; }
  const std::vector<std::string>& lock_classes() const { return classes_; }
  // The lock class a lock request is for (index into lock_classes()); -1 for other requests.
  int class_of(const Request& r) const;
  const std::vector<QSpinLock>& spinlocks() const { return locks_; }
  const std::vector<Rwsem>& rwsems() const { return rwsems_; }
  const std::vector<Line>& lines() const { return lines_; }
  std::uint64_t requests() const { return requests_; }

 private:
  [[noreturn]] static void unknown_request();
  // The line a request touches (a lock's word).
  std::uint32_t line_of(const Request& r) const {
    switch (r.kind) {
      case Req::Read:
      case Req::Write:
      case Req::Store: return r.id;
      case Req::SpinLock:
      case Req::SpinTrylock:
      case Req::SpinUnlock: return locks_[r.id].line;
      default: return rwsems_[r.id].line;
    }
  }
  // Posted stores (Costs::posted_stores; x86-TSO): a plain store retires into the CPU's store
  // buffer and the CPU goes on; its line's transfer runs from the issue, and stores land in
  // program order, so the buffer has drained when the last of them has landed. A locked RMW
  // (cmpxchg, xchg, a lock's acquisition) waits for the drain; a releasing store lands after it.
  Time drained(int cpu, Time t) const { return std::max(t, drained_at_[static_cast<std::size_t>(cpu)]); }
  // A store of `cpu`'s that lands at `at` (no earlier than the ones before it).
  void buffered(int cpu, Time at) {
    Time& d = drained_at_[static_cast<std::size_t>(cpu)];
    d = std::max(d, at);
  }
  Time post(int cpu, Line& l, Time t) {
    buffered(cpu, coh_.write(l, cpu, t));
    return t + c_.cache_hit;
  }
  // The first touch of a one-CPU object binds it to its CPU; a second CPU is an error.
  [[gnu::noinline]] bool claim_one_cpu(int cpu, const Request& r);
  int class_index(std::string_view cls);
  Outcome spin_lock(Cpu& cpu, QSpinLock& l, Time t, bool try_only);
  Time spin_unlock(Cpu& cpu, QSpinLock& l, Time t);
  Outcome down(Cpu& cpu, Rwsem& s, Time t, bool write);
  Time up(Cpu& cpu, Rwsem& s, Time t, bool write);
  void grant_rwsem_waiters(Rwsem& s, int releaser, Time t);
  Time handoff(int from, int to, const Line& l) const;
  Time mcs_handoff(QSpinLock& l, Line& word, int holder, const LockWaiter& head, Time t);
  Line& mcs_node(int cpu);  // the CPU's qspinlock queue node (per-CPU qnodes)

  const Machine& m_;
  const Costs& c_;
  Coherence coh_;
  Options o_;
  std::vector<Line> lines_;
  std::vector<Line> mcs_nodes_;  // one per CPU, made on the first contended hand-off
  std::vector<Time> drained_at_;  // per CPU: when its store buffer has drained (posted stores)
  std::vector<QSpinLock> locks_;
  std::vector<Rwsem> rwsems_;
  std::vector<std::string> classes_;
  std::map<StackKey, Ledger<Time>> stack_waits_;
  std::vector<std::pair<StackKey, Ledger<Time>*>> stack_cache_;  // per CPU: its last wait's chain
  const Grid* grid_ = &kWholeRun;
  std::uint64_t requests_ = 0;
};

}  // namespace slubsim
