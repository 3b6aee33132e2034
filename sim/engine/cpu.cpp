#include "sim/engine/cpu.h"

#include <stdexcept>
#include <string>

#include "sim/machine/topology.h"

namespace slubsim {

// CPU c is rank c + 1 in the event queue, whose key holds ranks up to Engine::kMaxRank.
static_assert(kMaxCpus + 1 <= static_cast<int>(Engine::kMaxRank), "the event queue's key must hold every CPU's rank");

void Cpu::start(Co<void> root, Time t) {
  root_.emplace(std::move(root));
  handle_ = root_->handle();
  now_ = t;
  state_ = State::Starting;
  engine_.schedule(t, this);
}

// Inline in begin, the path of every request.
inline bool Cpu::process(const Request& req) {
  Outcome o = world_.process(*this, cpu(), req, now_);
  if (o.granted) {
    charge(now_, o.done);
    now_ = o.done;
    result_ = o.result;
    state_ = State::Running;
    return true;
  }
  state_ = State::Waiting;
  waiting_for_ = req;
  sleeping_ = o.sleeps;
  wait_since_ = now_;
  return false;
}

Time Cpu::line_from(int owner, int home_node) const {
  const Machine& m = world_.machine();
  if (owner < 0 || owner >= m.nr_cpus || owner == cpu()) return 0;
  return m.transfer(owner, cpu(), m.home_socket(home_node, 0));
}

bool Cpu::begin(const Request& req) {
  if (one_cpu_inline_ && now_ < engine_.next_timer() && world_.one_cpu(cpu(), req)) {
    if (!process(req)) throw std::logic_error("cpu: a one-CPU object's request had to wait");
    return true;
  }
  if (!engine_.may_act_at(now_, rank())) {
    pending_ = req;
    state_ = State::Syncing;
    return false;
  }
  engine_.advance(now_);
  return process(req);
}

void Cpu::park(std::coroutine_handle<> h) {
  handle_ = h;
  if (state_ == State::Syncing) engine_.schedule(now_, this);
}

void Cpu::grant(Time at, bool result) {
  if (sink_ && at > wait_since_)
    sink_->add(*this, sleeping_ ? StackTimeKind::Sleep : StackTimeKind::Spin, world_.class_of(waiting_for_),
               wait_since_, at);
  if (sleeping_) {
    add_time(wait_since_, at, [](TaskTime& x) -> Time& { return x.idle; });
    sleeping_ = false;
  } else if (at > wait_since_) {
    add_time(wait_since_, at, [](TaskTime& x) -> Time& { return x.lock_wait; });
    spin_total_ += at - wait_since_;
    qs_blocked_ += at - wait_since_;  // spinning: no quiescent state at a tick
    world_.note_wait(waiting_for_, account_ != Account::NonSlab, wait_since_, at, *this);
  }
  now_ = at;
  result_ = result;
  state_ = State::Granted;
  engine_.schedule(at, this);
}

void Cpu::fire() {
  switch (state_) {
    case State::Syncing:
      if (process(pending_)) resume();
      break;
    case State::Granted:
    case State::Starting:
      state_ = State::Running;
      resume();
      break;
    default:
      break;
  }
}

void Cpu::resume() {
  handle_.resume();
  if (root_->done()) root_->rethrow_if_failed();
}

}  // namespace slubsim
