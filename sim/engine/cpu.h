// A simulated CPU: the Exec that the paths of the task running on it call, and the Process the
// engine wakes.
//
// Run ahead, sync at sharing: spend() only moves this CPU's clock. A request for shared state
// is granted inline when nothing in the event queue comes before this CPU's (clock, rank);
// otherwise the CPU queues itself at its clock and the request is granted when that event
// fires, so shared accesses happen in global (time, CPU) order. A request for an object only
// this CPU touches (Reach::OneCpu: its task's own mmap_lock in process mode) is granted inline
// whenever the CPU's clock is before the next timer: no other CPU can see it, so its order
// against them cannot matter, and the timers (window edges, the stop time) still see every CPU
// where they would. A CPU waiting for a lock is parked until the World hands the lock over.
//
// Accounting ("why" report, models/exec.h): spend() and every granted access are charged to the
// path's current account; the time from a lock request to its hand-over is charged to that lock
// (World::note_wait) and to this CPU's lock-wait total, or to idle when the waiter sleeps. Only
// time is counted by interval of
// the run's grid (models/ledger.h), and a report sums the intervals of its window.
#pragma once
#include <coroutine>
#include <optional>

#include "models/co.h"
#include "models/exec.h"
#include "sim/engine/engine.h"
#include "sim/engine/world.h"

namespace slubsim {

class Cpu final : public Exec, public Process {
 public:
  // mem_node: numa_mem_id() of the CPU (its node, or the nearest with memory).
  Cpu(int cpu, int node, int mem_node, Engine& engine, World& world)
      : Exec(cpu, node, mem_node), Process(static_cast<std::uint32_t>(cpu) + 1), engine_(engine), world_(world) {}

  // Private work runs slower by `factor` (an SMT sibling also runs a task).
  void set_private_work_factor(double factor) {
    private_scale_permille_ = static_cast<std::int64_t>(factor * 1000.0 + 0.5);
  }

  // Start the task at time t (its root coroutine).
  void start(Co<void> root, Time t);
  bool finished() const { return root_ && root_->done(); }
  bool parked_on_lock() const { return state_ == State::Waiting; }

  // Called by the World when it hands a lock to this CPU at `at`.
  void grant(Time at, bool result);

  // Time this CPU spun waiting for locks since it started (the interval series).
  Time spin_total() const { return spin_total_; }

  void fire() override;

  Time line_from(int owner, int home_node) const override;
  bool stores_posted() const override { return world_.costs().posted_stores; }

 protected:
  bool begin(const Request& req) override;
  void park(std::coroutine_handle<> h) override;

 private:
  enum class State { Running, Syncing, Waiting, Granted, Starting };
  bool process(const Request& req);
  void resume();

  Engine& engine_;
  World& world_;
  std::optional<Co<void>> root_;
  std::coroutine_handle<> handle_;
  Request pending_{Req::Read, 0};
  Request waiting_for_{Req::Read, 0};  // the lock request a Waiting CPU waits on
  State state_ = State::Running;
  bool sleeping_ = false;
  Time wait_since_ = 0;
  Time spin_total_ = 0;
  bool one_cpu_inline_ = world_.options().one_cpu_inline;
};

}  // namespace slubsim
