// Lock objects of the contention model.
//
// QSpinLock — a queued spinlock (qspinlock, kernel/locking/qspinlock.c): FIFO hand-off; waiters
// spin, so their CPU stays busy; the hand-off to the next waiter costs alpha * L(holder, next)
// (contention-model.md §2.2); an uncontended acquire is a locked RMW of the lock word, paying the
// word's transfer from wherever it last was. The head waiter polls the lock word.
//
// Rwsem — a read-write semaphore (mmap_lock). FIFO queue; consecutive readers at the head are
// granted together. With spin_on_owner the waiters spin while the owner runs (rwsem optimistic
// spinning; the CPU stays busy and hand-off is a line transfer); otherwise they sleep (their CPU
// is idle) and a release wakes them after the wake-up latency.
#pragma once
#include <cstdint>
#include <deque>
#include <string>

#include "models/ledger.h"
#include "models/time.h"
#include "sim/engine/lock_stat.h"

namespace slubsim {

class Cpu;

// Time CPUs spent waiting for one lock in an interval, split by whether they waited in
// allocator code or outside it (the "why" report; sleeping waiters are idle and not counted here).
struct WaitTime {
  Time slab = 0;
  Time nonslab = 0;
  void add(const WaitTime& o) {
    slab += o.slab;
    nonslab += o.nonslab;
  }
};

struct LockWaiter {
  Cpu* cpu;
  Time since;
  bool write = true;  // rwsem: writer or reader
  // qspinlock (mcs): when this waiter starts polling the lock word: at once if it queued as the
  // head, else when the previous head's write to its MCS node lands.
  Time polls_from = 0;
};

struct QSpinLock {
  std::uint32_t line = 0;  // the lock word's cache line
  int holder = -1;
  Time held_since = 0;
  std::deque<LockWaiter> queue;
  int cls = 0;  // index into the lock class names
  std::string instance;
  Ledger<LockStat> stat;  // per interval of the run's grid
  Ledger<WaitTime> waited;
};

struct Rwsem {
  std::uint32_t line = 0;
  int writer = -1;
  int readers = 0;
  Time held_since = 0;
  std::deque<LockWaiter> queue;
  int cls = 0;
  std::string instance;
  Ledger<LockStat> stat;  // per interval of the run's grid
  Ledger<WaitTime> waited;
};

}  // namespace slubsim
