// The request protocol between simulated code paths and whoever drives them.
//
// Allocator and workload paths never see the engine. Where kernel code would take a lock, touch
// a cache line another CPU can touch, or spend CPU time, a path calls its Exec:
//
//   exec.spend(t)                 CPU-private work: advances this CPU's clock, never suspends
//   co_await exec.read(line)      a load of a shared line
//   co_await exec.write(line)     a locked RMW of a shared line (cmpxchg, atomic add), or a store
//                                 that must land before the path goes on
//   co_await exec.store(line)     a plain store (list pointers, counters under a lock): with the
//                                 driver's posted stores it retires into the store buffer and
//                                 the path goes on; otherwise as write()
//   co_await exec.lock(l)         queued spinlock (spin_lock / spin_lock_irqsave)
//   co_await exec.trylock(l)      -> bool
//   co_await exec.unlock(l)
//   co_await exec.down_write(s)   sleeping read-write lock (mmap_lock); down_read/up_*
//   AccountScope scope(exec, a)   what the time until the end of the scope is spent on
//
// The driver decides when each request is granted and what it costs: sim::Cpu prices it under
// the contention model in global simulated-time order; a trivial driver grants everything at
// once (tests, native benchmarks). Shared objects are registered with a Shared registry when
// the model builds its structures (a node's list_lock is homed on that node).
#pragma once
#include <array>
#include <coroutine>
#include <cstdint>
#include <string_view>

#include "models/ledger.h"
#include "models/time.h"

namespace slubsim {

struct LineId {
  std::uint32_t v = UINT32_MAX;
};
struct SpinLockId {
  std::uint32_t v = UINT32_MAX;
};
struct RwsemId {
  std::uint32_t v = UINT32_MAX;
};

enum class Req : std::uint8_t {
  Read,
  Write,
  Store,
  SpinLock,
  SpinTrylock,
  SpinUnlock,
  DownRead,
  DownWrite,
  UpRead,
  UpWrite,
};

struct Request {
  Req kind;
  std::uint32_t id;
};

// Who can touch an object. OneCpu: only the CPU its task runs on (a task's own object, or its
// mm's in process mode), so its requests need no global order: nothing another CPU does can see
// or change it. The driver may check the claim (sim::World throws on a second CPU).
enum class Reach : std::uint8_t { Shared, OneCpu };

// Registry of shared objects, implemented by the driver.
class Shared {
 public:
  virtual ~Shared() = default;
  // A cache line whose memory lives on home_node; cls names it in reports.
  virtual LineId new_line(std::string_view cls, int home_node, Reach reach = Reach::Shared) = 0;
  // A queued spinlock homed on home_node. lock_stat reports it as <cls>.<instance>.
  virtual SpinLockId new_spinlock(std::string_view cls, std::string_view instance, int home_node,
                                  Reach reach = Reach::Shared) = 0;
  virtual RwsemId new_rwsem(std::string_view cls, std::string_view instance, int home_node,
                            Reach reach = Reach::Shared) = 0;
  // The line holding the lock word: data placed on it (nr_partial, the list head in
  // kmem_cache_node; the barn counters) moves together with the lock.
  virtual LineId lock_line(SpinLockId l) const = 0;
  // For a while, only `cpu` can reach line l (Reach::OneCpu until further notice: a slab no
  // other CPU can find, Slub::set_cpu_local_objects); cpu < 0: any CPU again.
  virtual void set_line_reach(LineId l, int cpu) = 0;
};

// What a CPU's time is spent on, for the "why" report (a perf-profile-like split of each task's
// time). Paths mark it with AccountScope at a few boundaries; the driver charges every spend()
// and every priced access to the current account, and time spent waiting for a lock to that lock.
// The order matters: a scope only makes the account more specific (a larger value), so a slow
// path inside an RCU callback stays RCU and a fast-path entry inside a slow path stays slow.
enum class Account : std::uint8_t {
  NonSlab,   // everything outside the allocator: the workload's own work and shared accesses
  SlabFast,  // the allocator's entry points: cpu freelist and percpu sheaf hits
  SlabSlow,  // ___slab_alloc, __slab_free, sheaf refill and flush, barns, new slabs, page allocator
  Rcu,       // RCU callbacks in softirq time (rcu_tick), the frees they do included
  Ksoftirqd, // the same, run by ksoftirqd in its own scheduler slices (models/softirq.h)
};
inline constexpr int kNrAccounts = 5;

// Where one CPU's time went in an interval: busy time per account, spinning for locks, sleeping.
// Over the measurement window the parts of a task's CPU sum to the window.
struct TaskTime {
  std::array<Time, kNrAccounts> busy{};
  Time lock_wait = 0;
  Time idle = 0;
  Time total() const {
    Time t = lock_wait + idle;
    for (Time b : busy) t += b;
    return t;
  }
  void add(const TaskTime& o) {
    for (int a = 0; a < kNrAccounts; ++a) busy[static_cast<std::size_t>(a)] += o.busy[static_cast<std::size_t>(a)];
    lock_wait += o.lock_wait;
    idle += o.idle;
  }
};
inline const Grid kWholeRun{};

class Exec;
// Receives every stretch of a CPU's time with the call chain it was spent under, for folded
// stacks of all task time (--why). Set only when asked: it costs a look-up per charge.
enum class StackTimeKind : std::uint8_t { Busy, Spin, Sleep };
class TimeSink {
 public:
  virtual ~TimeSink() = default;
  // [from, to) of e's clock; lock_class: the lock class waited for (Spin, Sleep), else -1.
  virtual void add(const Exec& e, StackTimeKind kind, int lock_class, Time from, Time to) = 0;
};

class Exec {
 public:
  virtual ~Exec() = default;

  int cpu() const noexcept { return cpu_; }
  int node() const noexcept { return node_; }  // numa_node_id(): where the CPU is (latencies)
  // numa_mem_id(): the node whose lists, barn and pages are this CPU's local ones; the nearest
  // node with memory when the CPU's own node has none (a memoryless node).
  int mem_node() const noexcept { return mem_node_; }
  Time now() const noexcept { return now_; }

  // CPU-private work. Scaled by the driver's private-work factor (an SMT sibling busy too).
  [[gnu::always_inline]] void spend(Time t) {
    const Time d = private_scale_permille_ == 1000 ? t : t * private_scale_permille_ / 1000;
    charge(now_, now_ + d);
    now_ += d;
  }

  Account account() const noexcept { return account_; }
  // The price of one load, with nothing racing for the line, of a line `owner` wrote last and
  // may still hold modified, homed on `home_node`: the machine's transfer between the two CPUs
  // (0 when owner is this CPU or unknown, and under drivers that price no sharing). For data
  // only one CPU reaches at a time, such as a free pointer on a slab's freelist, so it needs no
  // ordering against other CPUs (unlike read()).
  // True when the driver posts plain stores (store() does not wait for its line). A path that
  // must load a line before storing to it (list_del reads the entry's neighbours) then loads it
  // first; with stalling stores the store's own transfer stands for that load.
  virtual bool stores_posted() const { return false; }
  virtual Time line_from(int owner, int home_node) const {
    (void)owner;
    (void)home_node;
    return 0;
  }
  // All time so far (window or not) in which a scheduling-clock tick could not report an RCU
  // quiescent state: allocator slow paths (irqs or preemption off), softirq and ksoftirqd
  // callback work, and spinning for a lock (RcuQueue's tick-driven grace periods).
  Time qs_blocked() const noexcept { return qs_blocked_; }

  // The kernel functions the path is in, outermost first (Frame below): the call chain a lock
  // wait is reported under, as perf's call graph shows native_queued_spin_lock_slowpath.
  static constexpr int kMaxFrames = 16;
  int depth() const noexcept { return depth_ < kMaxFrames ? depth_ : kMaxFrames; }
  const char* frame(int i) const noexcept { return frames_[static_cast<std::size_t>(i)]; }
  // Where this CPU's time went, per interval of the grid (models/ledger.h).
  const Ledger<TaskTime>& times() const noexcept { return times_; }
  // Time charged to account a in intervals [r.from, r.to) (everything by default).
  Time accounted(Account a, IntervalRange r = {0, INT32_MAX}) const {
    return times_.sum(r.from, r.to).busy[static_cast<int>(a)];
  }
  // Where every stretch of time also goes, with its call chain (nullptr: nowhere).
  void set_time_sink(TimeSink* s) noexcept { sink_ = s; }
  TimeSink* time_sink() const noexcept { return sink_; }
  // The intervals time is counted by (the default: one interval, all time).
  void set_grid(const Grid* g) noexcept {
    grid_ = g;
    times_.forget_bounds();
  }
  // Adds [from, to) of this CPU's clock to the field `f` of each interval it spans.
  template <class F>
  void add_time(Time from, Time to, F f) {
    if (from >= times_.current_begin() && to <= times_.current_end()) {
      f(times_.current_value()) += to - from;
      return;
    }
    while (from < to) {
      const Time end = grid_->end(grid_->of(from));
      const Time e = end < to ? end : to;
      f(times_.at_time(*grid_, from)) += e - from;
      from = e;
    }
  }

  struct Awaiter {
    Exec* exec;
    Request req;
    bool await_ready() { return exec->begin(req); }
    void await_suspend(std::coroutine_handle<> h) { exec->park(h); }
    bool await_resume() const noexcept { return exec->result_; }
  };

  Awaiter read(LineId l) { return {this, {Req::Read, l.v}}; }
  Awaiter write(LineId l) { return {this, {Req::Write, l.v}}; }
  Awaiter store(LineId l) { return {this, {Req::Store, l.v}}; }
  Awaiter lock(SpinLockId l) { return {this, {Req::SpinLock, l.v}}; }
  Awaiter trylock(SpinLockId l) { return {this, {Req::SpinTrylock, l.v}}; }
  Awaiter unlock(SpinLockId l) { return {this, {Req::SpinUnlock, l.v}}; }
  Awaiter down_read(RwsemId s) { return {this, {Req::DownRead, s.v}}; }
  Awaiter down_write(RwsemId s) { return {this, {Req::DownWrite, s.v}}; }
  Awaiter up_read(RwsemId s) { return {this, {Req::UpRead, s.v}}; }
  Awaiter up_write(RwsemId s) { return {this, {Req::UpWrite, s.v}}; }

 protected:
  friend class AccountScope;
  friend class Frame;
  // mem_node: numa_mem_id(), the node whose memory this CPU allocates from (-1: node itself).
  Exec(int cpu, int node, int mem_node = -1) : cpu_(cpu), node_(node), mem_node_(mem_node < 0 ? node : mem_node) {}
  // [from, to) of this CPU's clock was spent on the current account.
  // The common case (inside the current interval, no time sink) is inline; the rest is out of
  // line (charge_slow), so that the caller does not pay its register saves on every call.
  void charge(Time from, Time to) {
    if (from >= times_.current_begin() && to <= times_.current_end() && !sink_) [[likely]] {
      times_.current_value().busy[static_cast<std::size_t>(account_)] += to - from;
      if (account_ >= Account::SlabSlow) qs_blocked_ += to - from;
      return;
    }
    charge_slow(from, to);
  }
  [[gnu::noinline]] void charge_slow(Time from, Time to) {
    const int a = static_cast<int>(account_);
    add_time(from, to, [a](TaskTime& x) -> Time& { return x.busy[a]; });
    if (account_ >= Account::SlabSlow) qs_blocked_ += to - from;
    if (sink_ && to > from) sink_->add(*this, StackTimeKind::Busy, -1, from, to);
  }
  // Try to grant req now. True: granted inline (now_ and result_ updated); the path goes on.
  virtual bool begin(const Request& req) = 0;
  // begin() returned false: the path is suspended at h until the driver resumes it.
  virtual void park(std::coroutine_handle<> h) = 0;

  int cpu_;
  int node_;
  int mem_node_;
  Time now_ = 0;
  std::int64_t private_scale_permille_ = 1000;
  bool result_ = true;
  Account account_ = Account::NonSlab;
  const Grid* grid_ = &kWholeRun;
  Ledger<TaskTime> times_;
  std::array<const char*, kMaxFrames> frames_{};
  int depth_ = 0;  // may exceed kMaxFrames; frames past it are not recorded
  Time qs_blocked_ = 0;
  TimeSink* sink_ = nullptr;
};

// Marks the time until the end of the enclosing scope (a function, a block) as spent on `a`,
// unless the CPU is already on a more specific account. Safe across co_await: one task runs on
// an Exec, and nothing else runs there while it waits.
class AccountScope {
 public:
  AccountScope(Exec& e, Account a) noexcept : e_(e), saved_(e.account_) {
    if (a > saved_) e.account_ = a;
  }
  ~AccountScope() { e_.account_ = saved_; }
  AccountScope(const AccountScope&) = delete;
  AccountScope& operator=(const AccountScope&) = delete;

 private:
  Exec& e_;
  Account saved_;
};

// Names the enclosing scope after the kernel function it models ("__slab_free",
// "barn_replace_empty_sheaf"), for the call chains of lock waits. `name` must outlive the run (a
// string literal). Safe across co_await for the same reason as AccountScope.
class Frame {
 public:
  Frame(Exec& e, const char* name) noexcept : e_(e) {
    if (e.depth_ < Exec::kMaxFrames) e.frames_[static_cast<std::size_t>(e.depth_)] = name;
    ++e.depth_;
  }
  ~Frame() { --e_.depth_; }
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;

 private:
  Exec& e_;
};

}  // namespace slubsim
