// Sheaves and barns (mm/slub.c 6.18+; slub-algorithms.md §3.1, §4).
//
// A sheaf is an array of object pointers with a capacity. Each CPU has, per cache with sheaves,
// a main sheaf (never NULL), an optional spare (empty or full) and an rcu_free sheaf collecting
// kfree_rcu objects. Each node has a barn: lists of full and empty sheaves under barn->lock (a
// queued spinlock homed on the node); the lock, both list heads and nr_full/nr_empty share one
// cache line, read racily by the pre-checks; moving a sheaf on or off a list also writes its own
// list node and its neighbour's, lines that travel between the CPUs of the node. Barn limits are soft (checked racily, and only by
// some paths).
//
// Lock order: the CPU's local trylock (free here), then barn->lock, then list_lock, then the
// slab cmpxchg.
#pragma once
#include <cstdint>
#include <deque>
#include <vector>

#include "models/exec.h"

namespace slubsim::slub {

struct Sheaf {
  std::vector<void*> objects;  // size() is the fill; objects.back() is popped first (LIFO)
  std::uint32_t capacity = 0;
  int cache_index = -1;
  int node = -1;          // rcu_free sheaf: the node of the CPU that submitted it
  bool oversize = false;  // a prefilled sheaf larger than the cache's capacity
  // The struct's first line: its barn list node, written by barn list moves (the neighbours'
  // too, as list_add/list_del do). Homed on the node whose CPU allocated the sheaf.
  LineId line;
  int home = 0;
  // How many of its objects came back a grace period after their last use with the line that
  // holds their free pointer untouched since (kfree_rcu; an RCU callback's kmem_cache_free when
  // the pointer is not on the rcu_head's line): flushing them to their slabs stores that pointer
  // into a cold line. A count, not a per-object mark: pops (LIFO) are taken to remove the others
  // first, so it only ever shrinks to the fill.
  std::uint32_t aged = 0;
  // Its places in the front-end's bookkeeping sets (SheafSet), -1 when not in one.
  int slot_all = -1, slot_rcu = -1, slot_prefilled = -1;
  std::uint32_t size() const { return static_cast<std::uint32_t>(objects.size()); }
  void* pop() {
    void* obj = objects.back();
    objects.pop_back();
    if (aged > objects.size()) aged = size();
    return obj;
  }
  bool empty() const { return objects.empty(); }
  bool full() const { return objects.size() >= capacity; }
};

// A set of sheaves with constant-time insert and erase: each sheaf keeps its index in the set
// (Slot). Iterated in insertion order, except that an erase moves the last sheaf into the gap.
template <int Sheaf::*Slot>
class SheafSet {
 public:
  void insert(Sheaf* sh) {
    if (sh->*Slot >= 0) return;
    sh->*Slot = static_cast<int>(items_.size());
    items_.push_back(sh);
  }
  void erase(Sheaf* sh) {
    const int i = sh->*Slot;
    if (i < 0) return;
    Sheaf* last = items_.back();
    items_[static_cast<std::size_t>(i)] = last;
    last->*Slot = i;
    items_.pop_back();
    sh->*Slot = -1;
  }
  std::vector<Sheaf*>::const_iterator begin() const { return items_.begin(); }
  std::vector<Sheaf*>::const_iterator end() const { return items_.end(); }

 private:
  std::vector<Sheaf*> items_;
};

struct PercpuSheaves {
  Sheaf* main = nullptr;
  Sheaf* spare = nullptr;
  Sheaf* rcu_free = nullptr;
};

struct Barn {
  SpinLockId lock;
  LineId line;  // the lock's line: list heads and counters
  std::deque<Sheaf*> full;
  std::deque<Sheaf*> empty;
  std::uint32_t nr_full() const { return static_cast<std::uint32_t>(full.size()); }
  std::uint32_t nr_empty() const { return static_cast<std::uint32_t>(empty.size()); }
};

}  // namespace slubsim::slub
