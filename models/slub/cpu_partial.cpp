// Front-end A: the cpu slab and the cpu partial list (mm/slub.c up to 6.19; 6.17 and 6.7 here).
//
// Per CPU (kmem_cache_cpu): a frozen cpu slab whose free objects sit on the lockless cpu
// freelist, and a singly linked cpu partial list of slabs with free objects.
//
// Slab states (delayed freezing, 6.8+; slub-algorithms.md §1.1):
//   cpu slab      frozen, owned by one CPU; remote frees land on slab->freelist (FREE_FROZEN)
//   cpu partial   !frozen, !on_partial, on some CPU's partial list
//   node partial  !frozen, on_partial, on kmem_cache_node.partial
//   full          !frozen, !on_partial, freelist empty: on no list
// Eager freezing (<= 6.7): cpu partial slabs are frozen too; taking slabs from the node list
// freezes each with a cmpxchg under list_lock (acquire_slab), and draining the cpu partial list
// unfreezes each with a cmpxchg under list_lock.
//
// Locks, in order: the cpu's local lock (free here: one task per CPU, no interrupts), then
// node->list_lock (a queued spinlock homed on the node), then the slab's freelist cmpxchg (a
// write of the slab's line). list_lock is taken by get_partial_node, __put_partials,
// deactivate_slab (to list the slab) and __slab_free (full/empty transitions only).
#include <algorithm>

#include <fmt/format.h>

#include "models/slub/slub.h"

namespace slubsim::slub {

namespace {

class CpuPartial final : public Frontend {
 public:
  CpuPartial(Slub& slub, bool eager)
      : slub_(slub), eager_(eager), objects_accounting_(slub.params().features.cpu_partial_objects), c_(slub.costs()) {}

  // slab_alloc_node fast path: pop the cpu freelist of a matching cpu slab.
  void* alloc_fast(Exec& e, KmemCache& s, int node) override {
    KmemCacheCpu& c = s.cpu[e.cpu()];
    void* obj = c.freelist;
    if (!obj || !c.slab || (node != kNoNode && c.slab->node != node)) return nullptr;
    c.freelist = get_freepointer(obj);
    popped(c);
    prefetch_freepointer(c.freelist);
    ++c.tid;
    e.spend(c_.alloc_fastpath);
    s.stat(Stat::ALLOC_FASTPATH);
    return obj;
  }

  // do_slab_free fast path: only objects of this CPU's current cpu slab.
  bool free_fast(Exec& e, KmemCache& s, Slab* slab, void* obj) override {
    return free_to_cpu_slab(e, s, slab, obj, obj, 1);
  }

  Co<void*> alloc_slow(Exec& e, KmemCache& s, int node, Gfp) override {
    co_return co_await slab_alloc(e, s, node);
  }

  Co<void> free_slow(Exec& e, KmemCache& s, Slab* slab, void* obj) override {
    set_freepointer(obj, nullptr);
    co_await slab_free(e, s, slab, obj, obj, 1);
  }

  // __kmem_cache_alloc_bulk: pop the cpu freelist, entering the slow path when it runs dry.
  Co<std::size_t> alloc_bulk(Exec& e, KmemCache& s, std::size_t n, void** p) override {
    Frame frame(e, "__kmem_cache_alloc_bulk");
    KmemCacheCpu& c = s.cpu[e.cpu()];
    e.spend(c_.slowpath_entry);  // local_lock_irqsave around the whole loop
    for (std::size_t i = 0; i < n; ++i) {
      void* obj = c.freelist;
      if (!obj) {
        ++c.tid;
        obj = co_await slab_alloc(e, s, kNoNode);
        if (!obj) {
          // Free what we got and fail the whole call, as the kernel does.
          co_await free_bulk(e, s, i, p);
          co_return 0;
        }
      } else {
        // A pop inside the loop's one local_lock_irqsave: a dependent load of the free pointer
        // and a store to p[i], no cmpxchg, no prefetch (6.17 __kmem_cache_alloc_bulk).
        e.spend(slub_.freelist_chase(e, head_writer(c, e.cpu()), c.slab->node, 1));
        c.freelist = get_freepointer(obj);
        popped(c);
        s.stat(Stat::ALLOC_FASTPATH);
      }
      p[i] = obj;
    }
    ++c.tid;
    co_return n;
  }

  // kmem_cache_free_bulk: detached freelists, one do_slab_free per group.
  Co<void> free_bulk(Exec& e, KmemCache& s, std::size_t n, void** p) override {
    Frame frame(e, "__kmem_cache_free_bulk");
    std::vector<void*> objs(p, p + n);
    std::size_t size = n;
    while (size) {
      Slub::DetachedFreelist df;
      size = slub_.build_detached_freelist(e, s, objs, size, df);
      if (!df.slab) continue;
      if (!free_to_cpu_slab(e, s, df.slab, df.head, df.tail, df.cnt))
        co_await slab_free(e, s, df.slab, df.head, df.tail, df.cnt);
    }
  }

  Co<void> do_slab_free(Exec& e, KmemCache& s, Slab* slab, void* head, void* tail, std::uint32_t cnt) override {
    if (!free_to_cpu_slab(e, s, slab, head, tail, cnt)) co_await slab_free(e, s, slab, head, tail, cnt);
  }

  // flush_cpu_slab: deactivate the cpu slab, drain the cpu partial list.
  Co<void> flush_cpu(Exec& e, KmemCache& s, int cpu) override {
    Frame frame(e, "flush_cpu_slab");
    KmemCacheCpu& c = s.cpu[cpu];
    if (c.slab) {
      Slab* slab = c.slab;
      void* freelist = c.freelist;
      const std::uint32_t local_top = c.local_top;
      c.slab = nullptr;
      c.freelist = nullptr;
      c.local_top = 0;
      ++c.tid;
      s.stat(Stat::CPUSLAB_FLUSH);
      co_await deactivate_slab(e, s, slab, freelist, local_top, c.writer);
    }
    if (c.partial) {
      Slab* list = c.partial;
      c.partial = nullptr;
      co_await put_partials(e, s, list);
    }
  }

  void cached_objects(const KmemCache& s, std::vector<void*>& out) const override {
    for (const auto& c : s.cpu)
      for (void* p = c.freelist; p; p = get_freepointer(p)) out.push_back(p);
  }
  CachedCounts count_cached(const KmemCache& s) const override {
    CachedCounts n;
    for (const auto& c : s.cpu)
      for (void* p = c.freelist; p; p = get_freepointer(p)) ++n.cpu_freelist;
    return n;
  }

 private:

  bool cpu_partial_on(const KmemCache& s) const { return s.geo.cpu_partial > 0; }

  bool free_to_cpu_slab(Exec& e, KmemCache& s, Slab* slab, void* head, void* tail,
                        std::uint32_t cnt) {
    KmemCacheCpu& c = s.cpu[e.cpu()];
    if (slab != c.slab) return false;
    set_freepointer(tail, c.freelist);
    c.freelist = head;
    c.local_top += cnt;
    ++c.tid;
    e.spend(c_.free_fastpath);  // one this_cpu_cmpxchg for a detached freelist of cnt (do_slab_free)
    s.stat(Stat::FREE_FASTPATH, cnt);
    return true;
  }


  // ___slab_alloc (6.8-6.17; <= 6.7 where eager_ says so).
  Co<void*> slab_alloc(Exec& e, KmemCache& s, int node) {
    Frame frame(e, "___slab_alloc");
    AccountScope slow(e, Account::SlabSlow);
    KmemCacheCpu& c = s.cpu[e.cpu()];
    s.stat(Stat::ALLOC_SLOWPATH);
    e.spend(c_.slowpath_entry);
    void* freelist = nullptr;
    Slab* slab = c.slab;

    if (slab) {
      if (node != kNoNode && slab->node != node) {
        s.stat(Stat::ALLOC_NODE_MISMATCH);
        void* cpu_freelist = c.freelist;
        const std::uint32_t local_top = c.local_top;
        c.slab = nullptr;
        c.freelist = nullptr;
        c.local_top = 0;
        ++c.tid;
        co_await deactivate_slab(e, s, slab, cpu_freelist, local_top, c.writer);
      } else if (c.freelist) {
        freelist = c.freelist;
        co_return load_freelist(s, c, freelist, nullptr);
      } else {
        // get_freelist: take the slab's own freelist (remote frees) in one cmpxchg.
        co_await e.write(slab->line);
        freelist = take_freelist(slab, slab->freelist != nullptr);
        if (!freelist) {
          c.slab = nullptr;
          ++c.tid;
          s.stat(Stat::DEACTIVATE_BYPASS);
        } else {
          s.stat(Stat::ALLOC_REFILL);
          co_return load_freelist(s, c, freelist, slab);
        }
      }
    }

    // new_slab: the cpu partial list first.
    while (c.partial) {
      slab = c.partial;
      c.partial = slab->next;
      if (c.partial) c.partial->slabs = slab->slabs - 1;
      slab->next = nullptr;
      s.stat(Stat::CPU_PARTIAL_ALLOC);
      if (node != kNoNode && slab->node != node) {
        slab->slabs = 1;
        co_await put_partials(e, s, slab);
        continue;
      }
      s.taken_back(slab->inuse, slab->objects);
      if (eager_) {
        // Already frozen: take its freelist.
        co_await e.write(slab->line);
        freelist = take_freelist(slab, true);
      } else {
        freelist = co_await freeze_slab(e, slab);
      }
      if (freelist) co_return install(s, c, slab, freelist);
      // An eagerly frozen slab can be empty of free objects: it becomes a full unfrozen slab.
      slab->frozen = false;
    }

    // get_partial, then a new slab. A node request without __GFP_THISNODE (6.10+) makes two
    // passes: the first with __GFP_THISNODE (that node's partial list, that node's pages), the
    // second with the caller's flags, where get_partial goes on to other nodes' partial lists
    // (get_any_partial) and new_slab may fall back to other nodes' pages.
    int search = node == kNoNode ? e.mem_node() : node;
    bool try_thisnode = node != kNoNode;
    while (true) {
      slab = co_await get_partial_node(e, s, s.node[search], &freelist);
      if (!slab && !try_thisnode) slab = co_await get_any_partial(e, s, search, &freelist);
      if (slab) {
        if (!eager_) freelist = co_await freeze_slab(e, slab);
        co_return install(s, c, slab, freelist);
      }
      slab = co_await slub_.new_slab(e, s, node, try_thisnode);
      if (slab) break;
      if (!try_thisnode) co_return nullptr;
      try_thisnode = false;
    }
    s.stat(Stat::ALLOC_SLAB);
    // Nobody else can see the slab yet: no cmpxchg.
    freelist = slab->freelist;
    slab->freelist = nullptr;
    slab->inuse = slab->objects;
    slab->frozen = true;
    ++slab->seq;
    co_return install(s, c, slab, freelist);
  }

  void* install(KmemCache& s, KmemCacheCpu& c, Slab* slab, void* freelist) {
    c.slab = slab;
    return load_freelist(s, c, freelist, slab);
  }

  // The cpu freelist becomes the rest of `freelist`: taken from slab `from` (its writer wrote
  // them), or, from == nullptr, the cpu freelist itself popped.
  void* load_freelist(KmemCache&, KmemCacheCpu& c, void* freelist, const Slab* from) {
    c.freelist = get_freepointer(freelist);
    if (from) {
      c.local_top = 0;
      c.writer = from->writer;
    } else {
      popped(c);
    }
    ++c.tid;
    return freelist;
  }

  // Who wrote the free pointer of the object at the head of c's freelist, and its pop.
  static int head_writer(const KmemCacheCpu& c, int cpu) { return c.local_top ? cpu : c.writer; }
  static void popped(KmemCacheCpu& c) {
    if (c.local_top) --c.local_top;
  }

  // The slab's whole freelist moves to the caller: inuse = objects, frozen as given.
  static void* take_freelist(Slab* slab, bool frozen) {
    void* fl = slab->freelist;
    slab->freelist = nullptr;
    slab->inuse = slab->objects;
    slab->frozen = frozen;
    ++slab->seq;
    return fl;
  }

  // A cmpxchg of the slab's freelist and counters from a snapshot (__slab_update_freelist): a
  // load of the slab's line, then the exchange, which fails if the slab changed in between.
  Co<bool> cmpxchg_slab(Exec& e, KmemCache& s, Slab* slab) {
    co_await e.read(slab->line);
    const auto seq = slab->seq;
    co_await e.write(slab->line);
    if (slab->seq == seq) co_return true;
    s.stat(Stat::CMPXCHG_DOUBLE_FAIL);
    co_return false;
  }

  // freeze_slab (6.8+): one cmpxchg outside list_lock.
  Co<void*> freeze_slab(Exec& e, Slab* slab) {
    co_await e.write(slab->line);
    co_return take_freelist(slab, true);
  }

  // get_partial_node: under list_lock, take the first slab for the cpu and more for the cpu
  // partial list, up to cpu_partial_slabs / 2 extra. <= 6.7 freezes each with a cmpxchg here
  // and hands the first slab's freelist back in *freelist.
  Co<Slab*> get_partial_node(Exec& e, KmemCache& s, KmemCacheNode& n, void** freelist) {
    Frame frame(e, "get_partial_node");
    co_await e.read(n.line);  // racy nr_partial pre-check
    if (n.nr_partial == 0) co_return nullptr;
    co_await e.lock(n.list_lock);
    Slab* first = nullptr;
    std::uint32_t extra = 0, available = 0;
    for (Slab* slab = n.partial_head; slab;) {
      Slab* next = slab->next_node;
      const std::uint32_t inuse = slab->inuse;  // before the first slab's freelist is taken
      available += slab->objects - slab->inuse;  // <= 5.15: acquire_slab's free objects
      if (eager_) {
        // acquire_slab (<= 6.7): snapshot freelist and counters, then cmpxchg them frozen. A
        // lockless free into the slab between the two fails the cmpxchg: the slab stays listed
        // and the scan stops (get_partial_node: "if (!t) break").
        if (!(co_await cmpxchg_slab(e, s, slab))) break;
        co_await slub_.remove_partial(e, n, slab);
        // The first one gives its freelist to the cpu.
        if (!first) *freelist = take_freelist(slab, true);
        else {
          slab->frozen = true;
          ++slab->seq;
        }
      } else {
        co_await slub_.remove_partial(e, n, slab);
      }
      if (!first) {
        first = slab;
        s.stat(Stat::ALLOC_FROM_PARTIAL);
        s.taken_back(inuse, slab->objects);  // the extras count when taken off the cpu partial list
        if (s.geo.cpu_partial_slabs == 0) break;
      } else {
        co_await put_cpu_partial(e, s, slab, false);
        s.stat(Stat::CPU_PARTIAL_NODE);
        ++extra;
      }
      if (!cpu_partial_on(s)) break;
      if (objects_accounting_ ? available > s.geo.cpu_partial / 2 : extra > s.geo.cpu_partial_slabs / 2) break;
      slab = next;
    }
    co_await e.unlock(n.list_lock);
    co_return first;
  }

  // get_any_partial: nodes in distance order from this CPU's node (the zonelist of
  // mempolicy_slab_node()), gated by remote_node_defrag_ratio, and only nodes holding more than
  // min_partial slabs. `searched` was just tried by get_partial and is skipped.
  Co<Slab*> get_any_partial(Exec& e, KmemCache& s, int searched, void** freelist) {
    Frame frame(e, "get_any_partial");
    int ratio = slub_.params().features.remote_node_defrag_ratio;
    if (ratio == 0 || static_cast<int>(slub_.rng(e.cpu()).below(1024)) > ratio) co_return nullptr;
    for (int n : slub_.params().numa.fallback[e.mem_node()]) {
      if (n == searched) continue;
      KmemCacheNode& kn = s.node[n];
      co_await e.read(kn.line);
      if (kn.nr_partial <= s.geo.min_partial) continue;
      Slab* slab = co_await get_partial_node(e, s, kn, freelist);
      if (slab) co_return slab;
    }
    co_return nullptr;
  }

  // put_cpu_partial: push onto this CPU's partial list; with drain, a full list is first
  // detached whole and flushed to the node lists.
  Co<void> put_cpu_partial(Exec& e, KmemCache& s, Slab* slab, bool drain) {
    Frame frame(e, "put_cpu_partial");
    KmemCacheCpu& c = s.cpu[e.cpu()];
    Slab* old = c.partial;
    Slab* to_put = nullptr;
    // <= 5.15 drains when the list's free objects exceed cpu_partial, 5.16 on its slab count.
    const bool full = old && (objects_accounting_ ? old->pobjects > s.geo.cpu_partial
                                                  : old->slabs >= s.geo.cpu_partial_slabs);
    if (drain && full) {
      to_put = old;
      old = nullptr;
    }
    slab->slabs = (old ? old->slabs : 0) + 1;
    slab->pobjects = (old ? old->pobjects : 0) + (slab->objects - slab->inuse);
    slab->next = old;
    c.partial = slab;
    if (to_put) {
      co_await put_partials(e, s, to_put);
      s.stat(Stat::CPU_PARTIAL_DRAIN);
    }
  }

  // __put_partials: each slab to its node's partial list (tail), taking list_lock per node run;
  // empty slabs beyond min_partial are discarded after the lock is dropped.
  Co<void> put_partials(Exec& e, KmemCache& s, Slab* list) {
    Frame frame(e, "__put_partials");
    KmemCacheNode* n = nullptr;
    std::vector<Slab*> discard;
    while (list) {
      Slab* slab = list;
      list = slab->next;
      slab->next = nullptr;
      KmemCacheNode* want = &s.node[slab->node];
      if (want != n) {
        if (n) co_await e.unlock(n->list_lock);
        n = want;
        co_await e.lock(n->list_lock);
      }
      if (eager_) {
        // __unfreeze_partials (<= 6.7): the unfreeze cmpxchg under list_lock, retried until no
        // lockless free got in between its snapshot and the exchange.
        while (!(co_await cmpxchg_slab(e, s, slab))) {
        }
        slab->frozen = false;
        ++slab->seq;
      }
      s.drained(slab->inuse);
      if (slab->inuse == 0 && n->nr_partial >= s.geo.min_partial) {
        discard.push_back(slab);
      } else {
        co_await slub_.add_partial(e, *n, slab, true);
        s.stat(Stat::FREE_ADD_PARTIAL);
      }
    }
    if (n) co_await e.unlock(n->list_lock);
    for (Slab* slab : discard) {
      s.stat(Stat::DEACTIVATE_EMPTY);
      co_await slub_.discard_slab(e, s, slab);
      s.stat(Stat::FREE_SLAB);
    }
  }

  // deactivate_slab: give the cpu freelist back to the slab, unfreeze it, and list it.
  // local_top and writer: who wrote the cpu freelist's free pointers (KmemCacheCpu).
  Co<void> deactivate_slab(Exec& e, KmemCache& s, Slab* slab, void* freelist, std::uint32_t local_top,
                           int writer) {
    Frame frame(e, "deactivate_slab");
    KmemCacheNode& n = s.node[slab->node];
    bool tail = false;
    if (slab->freelist) {
      s.stat(Stat::DEACTIVATE_REMOTE_FREES);
      tail = true;
    }
    // Walk the cpu freelist: count it and find its tail (outside any lock).
    std::uint32_t free_delta = 0;
    void* last = nullptr;
    for (void* p = freelist; p; p = get_freepointer(p)) {
      ++free_delta;
      last = p;
    }
    const std::uint32_t local = std::min(local_top, free_delta);
    e.spend(slub_.freelist_chase(e, e.cpu(), slab->node, local) +
            slub_.freelist_chase(e, writer, slab->node, free_delta - local));
    bool will_list = freelist || slab->freelist;
    bool locked = false;
    if (eager_ && will_list) {
      // <= 6.7 takes list_lock before the cmpxchg when the slab is going to a list.
      co_await e.lock(n.list_lock);
      locked = true;
    }
    co_await e.write(slab->line);
    if (last) set_freepointer(last, slab->freelist);
    if (freelist) {
      slab->freelist = freelist;
      slab->writer = 2 * local >= free_delta ? e.cpu() : writer;  // who wrote most of them
    }
    slab->inuse -= free_delta;
    slab->frozen = false;
    ++slab->seq;

    co_await e.read(n.line);  // nr_partial
    if (slab->inuse == 0 && n.nr_partial >= s.geo.min_partial) {
      if (locked) co_await e.unlock(n.list_lock);
      s.stat(Stat::DEACTIVATE_EMPTY);
      co_await slub_.discard_slab(e, s, slab);
      s.stat(Stat::FREE_SLAB);
    } else if (slab->freelist) {
      if (!locked) co_await e.lock(n.list_lock);
      co_await slub_.add_partial(e, n, slab, tail);
      co_await e.unlock(n.list_lock);
      s.stat(tail ? Stat::DEACTIVATE_TO_TAIL : Stat::DEACTIVATE_TO_HEAD);
    } else {
      if (locked) co_await e.unlock(n.list_lock);
      s.stat(Stat::DEACTIVATE_FULL);
    }
  }

  // __slab_free: the lockless free of cnt objects (head..tail) into a slab that is not this
  // CPU's cpu slab. A read of the slab's line snapshots (freelist, counters); list_lock is taken
  // speculatively for transitions that touch the node list; the cmpxchg fails (and the loop
  // retries) if the slab changed since the snapshot.
  Co<void> slab_free(Exec& e, KmemCache& s, Slab* slab, void* head, void* tail, std::uint32_t cnt) {
    Frame frame(e, "__slab_free");
    AccountScope slow(e, Account::SlabSlow);
    s.stat(Stat::FREE_SLOWPATH);
    e.spend(c_.free_slowpath_entry);
    KmemCacheNode* n = nullptr;
    void* prior = nullptr;
    bool was_frozen = false, on_node_partial = false, froze_it = false;
    std::uint32_t new_inuse = 0;
    while (true) {
      co_await e.read(slab->line);
      std::uint64_t seq = slab->seq;
      prior = slab->freelist;
      was_frozen = slab->frozen;
      new_inuse = slab->inuse - cnt;
      n = nullptr;
      froze_it = false;
      if ((new_inuse == 0 || !prior) && !was_frozen) {
        if (!cpu_partial_on(s) || prior) {
          n = &s.node[slab->node];
          co_await e.lock(n->list_lock);
        } else if (eager_) {
          froze_it = true;  // <= 6.7: a full slab's first free freezes it for the cpu partial list
        }
      }
      co_await e.write(slab->line);
      if (slab->seq != seq) {
        s.stat(Stat::CMPXCHG_DOUBLE_FAIL);
        if (n) co_await e.unlock(n->list_lock);
        continue;
      }
      set_freepointer(tail, prior);
      slab->freelist = head;
      slab->writer = e.cpu();
      slab->inuse = new_inuse;
      if (froze_it) slab->frozen = true;
      ++slab->seq;
      if (n) on_node_partial = slab->on_partial;
      break;
    }

    if (!n) {
      if (was_frozen) {
        s.stat(Stat::FREE_FROZEN);
      } else if (cpu_partial_on(s) && !prior) {
        co_await put_cpu_partial(e, s, slab, true);
        s.stat(Stat::CPU_PARTIAL_FREE);
      }
      co_return;
    }
    if (prior && !on_node_partial) {
      // On some CPU's partial list: leave it there.
      co_await e.unlock(n->list_lock);
      co_return;
    }
    if (new_inuse == 0 && n->nr_partial >= s.geo.min_partial) {
      if (prior) {
        co_await slub_.remove_partial(e, *n, slab);
        s.stat(Stat::FREE_REMOVE_PARTIAL);
      }
      co_await e.unlock(n->list_lock);
      s.stat(Stat::FREE_SLAB);
      co_await slub_.discard_slab(e, s, slab);
      co_return;
    }
    if (!cpu_partial_on(s) && !prior) {
      co_await slub_.add_partial(e, *n, slab, true);
      s.stat(Stat::FREE_ADD_PARTIAL);
    }
    co_await e.unlock(n->list_lock);
  }

  Slub& slub_;
  bool eager_;
  bool objects_accounting_;  // <= 5.15 (Features::cpu_partial_objects)
  const PathCosts& c_;
};

}  // namespace

std::unique_ptr<Frontend> make_cpu_partial_frontend(Slub& slub, bool eager_freeze) {
  return std::make_unique<CpuPartial>(slub, eager_freeze);
}

}  // namespace slubsim::slub
