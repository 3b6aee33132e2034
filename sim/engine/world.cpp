#include "sim/engine/world.h"

#include <algorithm>
#include <stdexcept>

#include "sim/engine/cpu.h"

namespace slubsim {

int World::class_index(std::string_view cls) {
  for (std::size_t i = 0; i < classes_.size(); ++i)
    if (classes_[i] == cls) return static_cast<int>(i);
  classes_.emplace_back(cls);
  return static_cast<int>(classes_.size() - 1);
}

LineId World::new_line(std::string_view /*cls*/, int home_node, Reach reach) {
  Line l;
  l.home_node = home_node;
  l.home_socket = m_.home_socket(home_node, static_cast<std::uint32_t>(lines_.size()));
  l.only_cpu = reach == Reach::OneCpu ? Line::kNoCpuYet : Line::kAnyCpu;
  lines_.push_back(std::move(l));
  return {static_cast<std::uint32_t>(lines_.size() - 1)};
}

SpinLockId World::new_spinlock(std::string_view cls, std::string_view instance, int home_node, Reach reach) {
  QSpinLock l;
  l.line = new_line(cls, home_node, reach).v;
  l.cls = class_index(cls);
  l.instance = std::string(instance);
  locks_.push_back(std::move(l));
  return {static_cast<std::uint32_t>(locks_.size() - 1)};
}

RwsemId World::new_rwsem(std::string_view cls, std::string_view instance, int home_node, Reach reach) {
  Rwsem s;
  s.line = new_line(cls, home_node, reach).v;
  s.cls = class_index(cls);
  s.instance = std::string(instance);
  rwsems_.push_back(std::move(s));
  return {static_cast<std::uint32_t>(rwsems_.size() - 1)};
}

bool World::claim_one_cpu(int cpu, const Request& r) {
  int& only = lines_[line_of(r)].only_cpu;
  if (only != Line::kNoCpuYet)
    throw std::logic_error("world: an object declared one-CPU (Reach::OneCpu) is touched by a second CPU");
  only = cpu;
  return true;
}

namespace {

// A contended acquisition: the lock handed from its holder to a waiter that waited `waited`,
// the hand-off itself taking `handoff`.
void count_handoff(LockStat& st, Time waited, Time handoff) {
  ++st.acquisitions;
  ++st.contentions;
  ++st.acq_bounces;
  ++st.con_bounces;
  st.waited(waited);
  ++st.handoffs;
  st.handoff_total += handoff;
}

}  // namespace

bool World::StackKey::operator<(const StackKey& o) const {
  if (cls != o.cls) return cls < o.cls;
  if (depth != o.depth) return depth < o.depth;
  for (int i = 0; i < depth; ++i)
    if (frames[static_cast<std::size_t>(i)] != o.frames[static_cast<std::size_t>(i)])
      return std::less<const char*>{}(frames[static_cast<std::size_t>(i)], o.frames[static_cast<std::size_t>(i)]);
  return false;
}

std::string World::StackKey::folded() const {
  std::string s;
  for (int i = 0; i < depth; ++i) {
    if (i) s += ';';
    s += frames[static_cast<std::size_t>(i)];
  }
  return s;
}

int World::class_of(const Request& r) const {
  switch (r.kind) {
    case Req::SpinLock:
    case Req::SpinTrylock:
    case Req::SpinUnlock: return locks_[r.id].cls;
    case Req::DownRead:
    case Req::DownWrite:
    case Req::UpRead:
    case Req::UpWrite: return rwsems_[r.id].cls;
    default: return -1;
  }
}

void World::note_wait(const Request& r, bool in_slab, Time from, Time to, const Exec& e) {
  const bool spin = r.kind == Req::SpinLock;
  Ledger<WaitTime>& w = spin ? locks_[r.id].waited : rwsems_[r.id].waited;
  Ledger<Time>* stack = nullptr;
  if (spin) {
    StackKey k;
    k.cls = locks_[r.id].cls;
    k.depth = e.depth();
    for (int i = 0; i < k.depth; ++i) k.frames[static_cast<std::size_t>(i)] = e.frame(i);
    // A CPU mostly waits under the same chain as last time: remember its last entry (map nodes
    // do not move).
    if (stack_cache_.size() <= static_cast<std::size_t>(e.cpu())) stack_cache_.resize(static_cast<std::size_t>(e.cpu()) + 1);
    auto& [last, entry] = stack_cache_[static_cast<std::size_t>(e.cpu())];
    if (!entry || last.cls != k.cls || last.depth != k.depth ||
        !std::equal(k.frames.begin(), k.frames.begin() + k.depth, last.frames.begin())) {
      last = k;
      entry = &stack_waits_[k];
    }
    stack = entry;
  }
  // The wait split at the grid's edges: each part counts in its own interval.
  while (from < to) {
    const int i = grid_->of(from);
    const Time end = std::min(grid_->end(i), to);
    WaitTime& x = w.at_time(*grid_, from);
    (in_slab ? x.slab : x.nonslab) += end - from;
    if (stack) stack->at_time(*grid_, from) += end - from;
    from = end;
  }
}

Time World::handoff(int from, int to, const Line& l) const {
  return static_cast<Time>(c_.handoff_alpha *
                           static_cast<double>(m_.transfer(from, to, l.home_socket)) + 0.5);
}

void World::unknown_request() { throw std::logic_error("world: unknown request"); }

// --- queued spinlock ---------------------------------------------------------------------

Outcome World::spin_lock(Cpu& cpu, QSpinLock& l, Time t, bool try_only) {
  Line& word = lines_[l.line];
  int c = cpu.cpu();
  if (l.holder == c) throw std::logic_error("spinlock taken twice by one CPU (self-deadlock)");
  if (c_.posted_stores) t = drained(c, t);  // the acquiring cmpxchg is a locked RMW
  if (l.holder < 0) {
    bool bounce = word.owner >= 0 && word.owner != c;
    Time done = coh_.write(word, c, t);
    l.holder = c;
    l.held_since = done;
    LockStat& st = l.stat.at_time(*grid_, t);
    ++st.acquisitions;
    if (bounce) ++st.acq_bounces;
    st.waited(0);
    return {true, done, true};
  }
  if (try_only) return {true, coh_.read(word, c, t), false};
  if (c_.contender_rmw) {
    // A contender's fast-path cmpxchg and its pending-bit or tail exchange are locked RMWs of
    // the lock word (qspinlock.c, queued_spin_lock_slowpath): the line moves to it, so the
    // holder's next touch of data on the word's line (list head, nr_partial, barn lists) and
    // its releasing store pull it back.
    coh_.steal(word, c, t);
    if (l.queue.empty()) word.spinner = c;
  } else if (l.queue.empty()) {
    word.spinner = c;  // the first waiter polls the lock word
    coh_.read(word, c, t);
  }
  l.queue.push_back({&cpu, t, true, t});
  return {false};
}

Time World::spin_unlock(Cpu& cpu, QSpinLock& l, Time t) {
  int c = cpu.cpu();
  if (l.holder != c) throw std::logic_error("spin_unlock by a CPU that does not hold the lock");
  Line& word = lines_[l.line];
  // The releasing store lands after the holder's earlier stores (posted stores); the releaser
  // goes on at t either way.
  const Time released = c_.posted_stores ? drained(c, t) : t;
  l.stat.at_time(*grid_, l.held_since).held(released - l.held_since);
  if (l.queue.empty()) {
    // The releasing store: pays for invalidating pollers, but the releaser does not wait.
    word.spinner = -1;
    coh_.write(word, c, released);
    l.holder = -1;
    return t;
  }
  LockWaiter next = l.queue.front();
  l.queue.pop_front();
  int n = next.cpu->cpu();
  const int after = l.queue.empty() ? -1 : l.queue.front().cpu->cpu();
  Time at = 0;
  if (c_.handoff == Costs::Handoff::Mcs) {
    at = mcs_handoff(l, word, c, next, released);
  } else {
    // The releasing store needs the word back if a contender took it since the holder's last
    // touch (only with contender_rmw); the head waiter then reads it: the hand-off.
    Time start = c_.contender_rmw && word.owner != c ? coh_.write(word, c, released) : released;
    at = start + handoff(c, n, word);
    word.spinner = after;
    coh_.take(word, n, at);
  }
  l.holder = n;
  l.held_since = at;
  count_handoff(l.stat.at_time(*grid_, next.since), at - next.since, at - released);
  next.cpu->grant(at, true);
  return t;
}

// The qspinlock hand-off, part by part (kernel/locking/qspinlock.c, queued_spin_lock_slowpath
// and queued_spin_unlock, 6.x): each part is an access to a line, priced and serialised by the
// coherence model, so the lock word's line also carries whatever else is queued on it.
//  1. the holder's releasing store to the locked byte invalidates the head waiter's polled copy
//     (the releaser goes on at once: a store does not stall it);
//  2. the head waiter's poll (atomic_cond_read_acquire) misses and re-reads the word, once it
//     polls at all: a head that got headship by an MCS node write polls from when that landed;
//  3. it sets the locked byte (set_locked), taking the line back from the releaser; the new
//     holder enters its critical section when this lands. With posted stores (Costs) it enters
//     at once when waiters queue behind it: set_locked (and, on the pending path,
//     clear_pending_set_locked) is a plain store that retires into its store buffer; the last
//     waiter's exchange (atomic_try_cmpxchg_relaxed when the tail is its own) is a locked RMW
//     and waits for the line as before;
//  4. with another waiter queued behind it, it passes on MCS headship
//     (arch_mcs_spin_unlock_contended) by a release store to that waiter's queue node, a line
//     last written by that waiter. The new holder does not wait for that store: it only decides
//     when the next head starts polling the word (part 2 of the next hand-off).
Time World::mcs_handoff(QSpinLock& l, Line& word, int holder, const LockWaiter& head, Time t) {
  const int h = head.cpu->cpu();
  word.spinner = -1;  // the parts below are the head's polling, priced one by one
  if (!word.has_copy(h)) word.sharers.push_back(h);  // the head has been polling the word
  const Time released = coh_.write(word, holder, t);
  const Time seen = coh_.read(word, h, std::max(released, head.polls_from));
  const Time at = coh_.write(word, h, seen);
  if (!l.queue.empty()) {
    LockWaiter& next = l.queue.front();
    const int after = next.cpu->cpu();
    if (c_.posted_stores) {
      // set_locked and the MCS node store sit in the new holder's store buffer; it goes on.
      // Stores land in program order: the node's after set_locked.
      next.polls_from = std::max(at, coh_.write(mcs_node(after), h, seen));
      buffered(h, next.polls_from);
      word.spinner = after;
      return seen + c_.cache_hit;
    }
    next.polls_from = coh_.write(mcs_node(after), h, at);
    word.spinner = after;
  }
  return at;
}

Line& World::mcs_node(int cpu) {
  if (mcs_nodes_.empty()) {
    mcs_nodes_.resize(static_cast<std::size_t>(m_.nr_cpus));
    for (int c = 0; c < m_.nr_cpus; ++c) {
      Line& q = mcs_nodes_[static_cast<std::size_t>(c)];
      q.home_node = m_.cpu_node[static_cast<std::size_t>(c)];
      q.home_socket = m_.cpu_socket[static_cast<std::size_t>(c)];
      q.owner = c;  // per-CPU qnodes: written by their CPU when it queues
    }
  }
  return mcs_nodes_[static_cast<std::size_t>(cpu)];
}

// --- rwsem -------------------------------------------------------------------------------

Outcome World::down(Cpu& cpu, Rwsem& s, Time t, bool write) {
  int c = cpu.cpu();
  if (s.writer == c) throw std::logic_error("rwsem taken twice by its writer (self-deadlock)");
  bool free = write ? (s.writer < 0 && s.readers == 0) : s.writer < 0;
  if (free && s.queue.empty()) {
    Line& word = lines_[s.line];
    bool bounce = word.owner >= 0 && word.owner != c;
    Time done = coh_.write(word, c, t);
    if (write) {
      s.writer = c;
      s.held_since = done;
    } else if (s.readers++ == 0) {
      s.held_since = done;
    }
    LockStat& st = s.stat.at_time(*grid_, t);
    ++st.acquisitions;
    if (bounce) ++st.acq_bounces;
    st.waited(0);
    return {true, done, true};
  }
  s.queue.push_back({&cpu, t, write});
  return {false, 0, true, !o_.rwsem_spin_on_owner};
}

Time World::up(Cpu& cpu, Rwsem& s, Time t, bool write) {
  int c = cpu.cpu();
  Line& word = lines_[s.line];
  if (write) {
    if (s.writer != c) throw std::logic_error("up_write by a CPU that is not the writer");
    s.writer = -1;
  } else {
    if (s.readers <= 0) throw std::logic_error("up_read without a reader");
    --s.readers;
  }
  if (s.writer < 0 && s.readers == 0) s.stat.at_time(*grid_, s.held_since).held(t - s.held_since);
  Time done = coh_.write(word, c, t);
  if (s.writer < 0 && s.readers == 0 && !s.queue.empty()) grant_rwsem_waiters(s, c, done);
  return done;
}

void World::grant_rwsem_waiters(Rwsem& s, int releaser, Time t) {
  // FIFO: one writer, or every reader at the head of the queue.
  bool first = true;
  while (!s.queue.empty()) {
    LockWaiter w = s.queue.front();
    if (!first && (w.write || s.writer >= 0)) break;
    s.queue.pop_front();
    int n = w.cpu->cpu();
    Line& word = lines_[s.line];
    Time at = o_.rwsem_spin_on_owner ? t + handoff(releaser, n, word) : t + c_.rwsem_wakeup;
    coh_.take(word, n, at);
    if (w.write) {
      s.writer = n;
      s.held_since = at;
    } else if (s.readers++ == 0) {
      s.held_since = at;
    }
    count_handoff(s.stat.at_time(*grid_, w.since), at - w.since, at - t);
    w.cpu->grant(at, true);
    first = false;
    if (w.write) break;
  }
}

}  // namespace slubsim
