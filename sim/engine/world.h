// The shared state of one simulation and the pricing of every access to it: cache lines,
// queued spinlocks and rwsems. Implements the models' Shared registry, and grants the requests
// that CPUs make (sim/engine/cpu.h), always in global simulated-time order.
#pragma once
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
};

class World : public Shared {
 public:
  World(const Machine& m, const Costs& c, Options o = {}) : m_(m), c_(c), coh_(m, c), o_(o) {}

  LineId new_line(std::string_view cls, int home_node) override;
  SpinLockId new_spinlock(std::string_view cls, std::string_view instance, int home_node) override;
  RwsemId new_rwsem(std::string_view cls, std::string_view instance, int home_node) override;
  LineId lock_line(SpinLockId l) const override { return {locks_[l.v].line}; }

  Outcome process(Cpu& cpu, const Request& r, Time t);
  // A CPU spun for `waited` (inside the window) before lock request r was granted; in_slab: it
  // waited in allocator code.
  // `stack` is the waiter's call chain, folded (outermost first, ';'-separated).
  void note_wait(const Request& r, bool in_slab, Time waited, const std::string& stack) {
    const bool spin = r.kind == Req::SpinLock;
    WaitTime& w = spin ? locks_[r.id].waited : rwsems_[r.id].waited;
    (in_slab ? w.slab : w.nonslab) += waited;
    if (spin && waited > 0) stack_waits_[{locks_[r.id].cls, stack}] += waited;
  }
  // Spinlock waiting time inside the window per (lock class index, folded call chain).
  const std::map<std::pair<int, std::string>, Time>& stack_waits() const { return stack_waits_; }

  // Lock statistics count only what happens inside [begin, end).
  void set_window(Time begin, Time end) {
    win_begin_ = begin;
    win_end_ = end;
  }
  bool in_window(Time t) const { return t >= win_begin_ && t < win_end_; }

  const Machine& machine() const { return m_; }
  const Costs& costs() const { return c_; }
  Line& line(LineId l) { return lines_[l.v]; }
  const std::vector<std::string>& lock_classes() const { return classes_; }
  const std::vector<QSpinLock>& spinlocks() const { return locks_; }
  const std::vector<Rwsem>& rwsems() const { return rwsems_; }
  const std::vector<Line>& lines() const { return lines_; }
  std::uint64_t requests() const { return requests_; }

 private:
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
  std::vector<QSpinLock> locks_;
  std::vector<Rwsem> rwsems_;
  std::vector<std::string> classes_;
  std::map<std::pair<int, std::string>, Time> stack_waits_;
  Time win_begin_ = 0, win_end_ = kForever;
  std::uint64_t requests_ = 0;
};

}  // namespace slubsim
