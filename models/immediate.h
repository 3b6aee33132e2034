// The trivial driver: grants every request at once, at no cost, on one clock per Exec.
// For unit tests of model paths and for running model code natively (slub_bulk_bench).
// It still checks lock discipline: taking a held spinlock, or releasing one not held, throws.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "models/co.h"
#include "models/exec.h"

namespace slubsim {

class ImmediateShared final : public Shared {
 public:
  LineId new_line(std::string_view, int, Reach) override { return {lines_++}; }
  SpinLockId new_spinlock(std::string_view, std::string_view, int, Reach) override {
    holders_.push_back(-1);
    lock_lines_.push_back(lines_++);
    return {static_cast<std::uint32_t>(holders_.size() - 1)};
  }
  RwsemId new_rwsem(std::string_view, std::string_view, int, Reach) override {
    rw_.push_back(0);
    return {static_cast<std::uint32_t>(rw_.size() - 1)};
  }
  LineId lock_line(SpinLockId l) const override { return {lock_lines_.at(l.v)}; }
  void set_line_reach(LineId, int) override {}

  // Lock bookkeeping for the execs.
  bool lock(std::uint32_t id, int cpu, bool try_only) {
    int& h = holders_.at(id);
    if (h == cpu) throw std::logic_error("spinlock taken twice by one CPU");
    if (h >= 0) {
      if (try_only) return false;
      throw std::logic_error("spinlock held by another CPU: the immediate driver cannot wait");
    }
    h = cpu;
    ++acquisitions;
    return true;
  }
  void unlock(std::uint32_t id, int cpu) {
    int& h = holders_.at(id);
    if (h != cpu) throw std::logic_error("spin_unlock of a lock this CPU does not hold");
    h = -1;
  }
  bool any_held() const {
    for (int h : holders_)
      if (h >= 0) return true;
    return false;
  }
  std::uint64_t acquisitions = 0;
  std::uint64_t line_accesses = 0;

 private:
  std::uint32_t lines_ = 0;
  std::vector<int> holders_;
  std::vector<std::uint32_t> lock_lines_;
  std::vector<int> rw_;
};

class ImmediateExec final : public Exec {
 public:
  ImmediateExec(ImmediateShared& shared, int cpu, int node) : Exec(cpu, node), shared_(shared) {}

 protected:
  bool begin(const Request& r) override {
    result_ = true;
    switch (r.kind) {
      case Req::SpinLock: shared_.lock(r.id, cpu_, false); break;
      case Req::SpinTrylock: result_ = shared_.lock(r.id, cpu_, true); break;
      case Req::SpinUnlock: shared_.unlock(r.id, cpu_); break;
      case Req::Read:
      case Req::Write:
      case Req::Store: ++shared_.line_accesses; break;
      default: break;
    }
    return true;
  }
  void park(std::coroutine_handle<>) override {
    throw std::logic_error("immediate driver: a request was not granted");
  }

 private:
  ImmediateShared& shared_;
};

// Run a coroutine that never waits to completion and return its value.
template <class T>
T run_now(Co<T> co) {
  co.handle().resume();
  if (!co.done()) throw std::logic_error("run_now: the coroutine suspended");
  return co.await_resume();
}

}  // namespace slubsim
