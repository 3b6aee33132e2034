// The slab layer under the 7.0 sheaves (slub-algorithms.md §1.7 7.0, §4.3, §4.4): no per-CPU
// slabs at all. It is a Frontend whose fast paths always miss:
//   alloc_slow  ___slab_alloc: ONE object from a node partial slab (one list_lock hold per
//               object) or from a new slab whose rest goes to the partial list
//   alloc_bulk  refill_objects: whole slab freelists from the local node's partial list (one
//               list_lock hold takes several slabs), then remote nodes (refill-any-node;
//               trylock with the remote-refill-trylock patch), then new local slabs
//   free_slow   __slab_free (7.0): list_lock only on full->partial and ->empty transitions
//   free_bulk   detached freelists, one __slab_free each
//
// It is also the refill engine of sheaves-for-all v4 10/22 over the cpu partial front-end
// (refill-from-partial): then only alloc_bulk is used, and what it gives back goes through the
// cpu partial front-end's do_slab_free (`give_back_`).
//
// Slab states (7.0): node partial = on_partial; taken off the list by a refill = !on_partial
// and not full; full = !on_partial and no freelist. frozen is unused.
#include <algorithm>

#include "models/slub/slub.h"

namespace slubsim::slub {

namespace {

class SlabLayer final : public Frontend {
 public:
  SlabLayer(Slub& slub, bool remote_trylock, bool skip_freelist, bool any_node, Frontend* surplus)
      : slub_(slub),
        c_(slub.costs()),
        remote_trylock_(remote_trylock),
        skip_freelist_(skip_freelist),
        any_node_(any_node),
        give_back_(surplus ? surplus : this) {}

  void* alloc_fast(Exec&, KmemCache&, int) override { return nullptr; }
  bool free_fast(Exec&, KmemCache&, Slab*, void*) override { return false; }

  Co<void*> alloc_slow(Exec& e, KmemCache& s, int node, Gfp) override {
    co_return co_await slab_alloc_one(e, s, node);
  }

  Co<void> free_slow(Exec& e, KmemCache& s, Slab* slab, void* obj) override {
    set_freepointer(obj, nullptr);
    co_await slab_free(e, s, slab, obj, obj, 1);
  }

  // __kmem_cache_alloc_bulk (7.0): refill_objects(n, n); all or nothing.
  Co<std::size_t> alloc_bulk(Exec& e, KmemCache& s, std::size_t n, void** p) override {
    Frame frame(e, "__kmem_cache_alloc_bulk");
    AccountScope slow(e, Account::SlabSlow);
    std::size_t got = co_await refill_objects(e, s, p, n, n);
    if (got < n) {
      co_await free_bulk(e, s, got, p);
      co_return 0;
    }
    co_return n;
  }

  // __kmem_cache_free_bulk: detached freelists, one __slab_free per group.
  Co<void> free_bulk(Exec& e, KmemCache& s, std::size_t n, void** p) override {
    Frame frame(e, "__kmem_cache_free_bulk");
    AccountScope slow(e, Account::SlabSlow);
    std::vector<void*> objs(p, p + n);
    std::size_t size = n;
    while (size) {
      Slub::DetachedFreelist df;
      size = slub_.build_detached_freelist(e, s, objs, size, df);
      co_await give_back_->do_slab_free(e, s, df.slab, df.head, df.tail, df.cnt);
    }
  }

  Co<void> do_slab_free(Exec& e, KmemCache& s, Slab* slab, void* head, void* tail, std::uint32_t cnt) override {
    co_await slab_free(e, s, slab, head, tail, cnt);
  }

  Co<void> flush_cpu(Exec&, KmemCache&, int) override { co_return; }
  void cached_objects(const KmemCache&, std::vector<void*>&) const override {}
  CachedCounts count_cached(const KmemCache&) const override { return {}; }

 private:
  // refill_objects: fill p[] with between min and max objects.
  Co<std::size_t> refill_objects(Exec& e, KmemCache& s, void** p, std::size_t min, std::size_t max) {
    Frame frame(e, "refill_objects");
    int local = e.mem_node();
    std::size_t r = co_await refill_from_node(e, s, s.node[local], p, min, max, true);
    if (r >= min) co_return r;
    // __refill_objects_any (46dea1744498): other nodes by distance, gated by
    // remote_node_defrag_ratio. Before it (v4 10/22) only the local node, then new slabs.
    int ratio = slub_.params().features.remote_node_defrag_ratio;
    if (any_node_ && ratio != 0 && static_cast<int>(slub_.rng(e.cpu()).below(1024)) <= ratio) {
      for (int n : slub_.params().numa.fallback[local]) {
        KmemCacheNode& kn = s.node[n];
        co_await e.read(kn.line);
        if (kn.nr_partial <= s.geo.min_partial) continue;
        r += co_await refill_from_node(e, s, kn, p + r, min > r ? min - r : 0, max - r, !remote_trylock_);
        if (r >= min) co_return r;
      }
    }
    // New slabs on the local node.
    while (r < min) {
      Slab* slab = co_await slub_.new_slab(e, s, local, false, !skip_freelist_);
      if (!slab) co_return r;
      s.stat(Stat::ALLOC_SLAB);
      r += co_await alloc_from_new_slab(e, s, slab, p + r, max - r);
    }
    co_return r;
  }

  // __refill_objects_node: get_partial_node_bulk under one list_lock hold, then each slab's
  // whole freelist taken by one cmpxchg outside the lock; an overshoot goes back by __slab_free.
  Co<std::size_t> refill_from_node(Exec& e, KmemCache& s, KmemCacheNode& n, void** p,
                                   std::size_t min, std::size_t max, bool allow_spin) {
    Frame frame(e, "__refill_objects_node");
    co_await e.read(n.line);  // racy nr_partial == 0 pre-check
    if (n.nr_partial == 0 || max == 0) co_return 0;
    bool locked = true;
    if (allow_spin) co_await e.lock(n.list_lock);
    else locked = co_await e.trylock(n.list_lock);
    if (!locked) co_return 0;
    std::vector<Slab*> taken;
    std::size_t total = 0;
    for (Slab* slab = n.partial_head; slab;) {
      Slab* next = slab->next_node;
      std::size_t free = slab->objects - slab->inuse;
      if (total >= min && total + free > max) break;
      co_await slub_.remove_partial(e, n, slab);
      taken.push_back(slab);
      total += free;
      if (total >= max) break;
      slab = next;
    }
    co_await e.unlock(n.list_lock);

    std::size_t r = 0;
    std::size_t i = 0;
    for (; i < taken.size() && r < max; ++i) {
      Slab* slab = taken[i];
      // get_freelist_nofreeze
      co_await e.write(slab->line);
      s.taken_back(slab->inuse, slab->objects);
      const int writer = slab->writer;
      void* fl = slab->freelist;
      slab->freelist = nullptr;
      slab->inuse = slab->objects;
      ++slab->seq;
      std::uint32_t walked = 0;
      while (fl && r < max) {
        p[r++] = fl;
        fl = get_freepointer(fl);
        ++walked;
      }
      e.spend(slub_.freelist_chase(e, writer, slab->node, walked));
      if (fl) {
        // The remainder goes back: walk to its tail, then __slab_free (full -> partial, tail).
        void* head = fl;
        void* tail = fl;
        std::uint32_t cnt = 1;
        while (void* nx = get_freepointer(tail)) {
          tail = nx;
          ++cnt;
        }
        e.spend(slub_.freelist_chase(e, writer, slab->node, cnt));
        co_await give_back_->do_slab_free(e, s, slab, head, tail, cnt);
      }
    }
    if (i < taken.size()) {
      // Slabs not needed after all: back to the head, empty ones beyond min_partial freed.
      std::vector<Slab*> discard;
      co_await e.lock(n.list_lock);
      for (; i < taken.size(); ++i) {
        Slab* slab = taken[i];
        if (slab->inuse == 0 && n.nr_partial >= s.geo.min_partial) discard.push_back(slab);
        else co_await slub_.add_partial(e, n, slab, false);
      }
      co_await e.unlock(n.list_lock);
      for (Slab* slab : discard) {
        s.stat(Stat::FREE_SLAB);
        co_await slub_.discard_slab(e, s, slab);
      }
    }
    co_return r;
  }

  // alloc_from_new_slab: hand out up to `count` objects; the rest stays on the slab, which goes
  // to the node partial list at the head. Without skip-freelist the freelist was built by
  // new_slab and is walked here; with it, objects go straight into p[] and only the leftover
  // is linked.
  Co<std::size_t> alloc_from_new_slab(Exec& e, KmemCache& s, Slab* slab, void** p, std::size_t count) {
    std::size_t n = std::min<std::size_t>(count, slab->objects);
    if (skip_freelist_) {
      std::vector<void*> order = slub_.object_order(e, s, slab);
      for (std::size_t i = 0; i < n; ++i) p[i] = order[i];
      e.spend(c_.sheaf_array_store_per_object * static_cast<Time>(n));
      slub_.link_freelist(e, s, slab, order.data() + n, order.size() - n);
    } else {
      void* fl = slab->freelist;
      for (std::size_t i = 0; i < n; ++i) {
        p[i] = fl;
        fl = get_freepointer(fl);
      }
      slab->freelist = fl;
      e.spend(slub_.freelist_chase(e, slab->writer, slab->node, static_cast<std::uint32_t>(n)));
    }
    slab->inuse = static_cast<std::uint32_t>(n);
    ++slab->seq;
    if (slab->freelist) {
      KmemCacheNode& kn = s.node[slab->node];
      co_await e.lock(kn.list_lock);
      co_await slub_.add_partial(e, kn, slab, false);
      co_await e.unlock(kn.list_lock);
    }
    co_return n;
  }

  // ___slab_alloc (7.0): one object per call.
  Co<void*> slab_alloc_one(Exec& e, KmemCache& s, int node) {
    Frame frame(e, "___slab_alloc");
    s.stat(Stat::ALLOC_SLOWPATH);
    e.spend(c_.slowpath_entry);
    int search = node == kNoNode ? e.mem_node() : node;
    bool try_thisnode = node != kNoNode;
    while (true) {
      void* obj = co_await get_from_partial_node(e, s, s.node[search]);
      if (!obj && !try_thisnode) {
        int ratio = slub_.params().features.remote_node_defrag_ratio;
        if (ratio != 0 && static_cast<int>(slub_.rng(e.cpu()).below(1024)) <= ratio)
          for (int n : slub_.params().numa.fallback[e.mem_node()]) {
            if (n == search) continue;
            KmemCacheNode& kn = s.node[n];
            co_await e.read(kn.line);
            if (kn.nr_partial <= s.geo.min_partial) continue;
            obj = co_await get_from_partial_node(e, s, kn);
            if (obj) break;
          }
      }
      if (obj) co_return obj;
      Slab* slab = co_await slub_.new_slab(e, s, node, try_thisnode, !skip_freelist_);
      if (slab) {
        s.stat(Stat::ALLOC_SLAB);
        void* one = nullptr;
        co_await alloc_from_new_slab(e, s, slab, &one, 1);
        co_return one;
      }
      if (!try_thisnode) co_return nullptr;
      try_thisnode = false;
    }
  }

  // get_from_partial_node: pop one object of the first partial slab under list_lock.
  Co<void*> get_from_partial_node(Exec& e, KmemCache&, KmemCacheNode& n) {
    Frame frame(e, "get_partial_node");
    co_await e.read(n.line);
    if (n.nr_partial == 0) co_return nullptr;
    co_await e.lock(n.list_lock);
    Slab* slab = n.partial_head;
    void* obj = nullptr;
    if (slab) {
      // Plain loads and stores of the slab's freelist and inuse under list_lock.
      if (e.stores_posted()) co_await e.read(slab->line);
      co_await e.store(slab->line);
      obj = slab->freelist;
      // The popped object's free pointer, under list_lock: priced only as the writer's line
      // (under "local" it is part of the lock hold's price, as before the switch).
      if (slub_.params().freelist_lines_from_writer) e.spend(slub_.freelist_chase(e, slab->writer, slab->node, 1));
      slab->freelist = get_freepointer(obj);
      ++slab->inuse;
      ++slab->seq;
      if (!slab->freelist) co_await slub_.remove_partial(e, n, slab);
    }
    co_await e.unlock(n.list_lock);
    co_return obj;
  }

  // __slab_free (7.0): no frozen slabs, no cpu partial lists.
  Co<void> slab_free(Exec& e, KmemCache& s, Slab* slab, void* head, void* tail, std::uint32_t cnt) {
    Frame frame(e, "__slab_free");
    e.spend(c_.free_slowpath_entry);
    KmemCacheNode& n = s.node[slab->node];
    bool locked = false, was_full = false, on_node_partial = false;
    std::uint32_t new_inuse = 0;
    while (true) {
      co_await e.read(slab->line);
      std::uint64_t seq = slab->seq;
      was_full = slab->freelist == nullptr;
      new_inuse = slab->inuse - cnt;
      locked = false;
      if (new_inuse == 0 || was_full) {
        co_await e.lock(n.list_lock);
        locked = true;
      }
      co_await e.write(slab->line);
      if (slab->seq != seq) {
        s.stat(Stat::CMPXCHG_DOUBLE_FAIL);
        if (locked) co_await e.unlock(n.list_lock);
        continue;
      }
      set_freepointer(tail, slab->freelist);
      slab->freelist = head;
      slab->writer = e.cpu();
      slab->inuse = new_inuse;
      ++slab->seq;
      if (locked) on_node_partial = slab->on_partial;
      break;
    }
    if (!locked) co_return;
    if (!was_full && !on_node_partial) {
      // Detached by a refill in progress: it will deal with the slab.
      co_await e.unlock(n.list_lock);
      co_return;
    }
    if (new_inuse == 0 && n.nr_partial >= s.geo.min_partial) {
      if (!was_full) {
        co_await slub_.remove_partial(e, n, slab);
        s.stat(Stat::FREE_REMOVE_PARTIAL);
      }
      co_await e.unlock(n.list_lock);
      s.stat(Stat::FREE_SLAB);
      co_await slub_.discard_slab(e, s, slab);
      co_return;
    }
    if (was_full) {
      co_await slub_.add_partial(e, n, slab, true);
      s.stat(Stat::FREE_ADD_PARTIAL);
    }
    co_await e.unlock(n.list_lock);
  }

  Slub& slub_;
  const PathCosts& c_;
  bool remote_trylock_;
  bool skip_freelist_;
  bool any_node_;
  // Where objects this layer took and does not keep go: itself (7.0's __slab_free), or the
  // front-end whose free path runs (v4 10/22 over cpu partial: a refill's surplus slab, full
  // after get_freelist_nofreeze, goes to this CPU's cpu partial list without list_lock). Not owned.
  Frontend* give_back_;
};

}  // namespace

std::unique_ptr<Frontend> make_slab_layer(Slub& slub, bool remote_trylock, bool skip_freelist, bool any_node,
                                          Frontend* surplus) {
  return std::make_unique<SlabLayer>(slub, remote_trylock, skip_freelist, any_node, surplus);
}

}  // namespace slubsim::slub
