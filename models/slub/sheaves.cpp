// Front-ends B and C: percpu sheaves and per-node barns (slub-algorithms.md §3, §4).
//
//   B  sheaves-on-cpu-partial (6.18/6.19): only caches created with a sheaf capacity have
//      sheaves; refills and flushes go through the cpu-slab layer below (objects cached twice).
//   C  sheaves (7.0): every cache has sheaves; the layer below has no per-CPU state
//      (slab_layer.cpp: refill_objects, one-object ___slab_alloc, 7.0 __slab_free).
//
// Per CPU and cache: main (never NULL), spare (NULL, empty or full), rcu_free. Per node: a barn
// of full and empty sheaves. Allocation: main -> swap with a non-empty spare -> barn full sheaf
// (barn_replace_empty_sheaf) -> refill (the spare, an empty barn sheaf, or a new sheaf) -> the
// layer below. Free: main -> swap with a non-full spare -> barn empty sheaf
// (barn_replace_full_sheaf) -> flush to slabs when the barn is full. Remote-node objects
// bypass the sheaves on free.
//
// Locks, in order: the CPU's local trylock (free here), barn->lock, list_lock, slab cmpxchg.
// The barn's racy pre-checks read its line without the lock.
#include <algorithm>
#include <fmt/format.h>

#include "models/slub/slub.h"

namespace slubsim::slub {

namespace {

class Sheaves final : public Frontend {
 public:
  Sheaves(Slub& slub, std::unique_ptr<Frontend> below, bool v7, std::unique_ptr<Frontend> refill)
      : slub_(slub), below_(std::move(below)), refill_(std::move(refill)), v7_(v7), f_(slub.params().features),
        c_(slub.costs()) {
    for (int i = 0; i < slub.nr_caches(); ++i) {
      KmemCache& s = slub.cache(i);
      if (!s.sheaf_capacity) continue;
      for (std::size_t c = 0; c < s.pcs.size(); ++c)  // every possible CPU starts with one
        s.pcs[c].main = new_sheaf(s, false, slub_.params().numa.cpu_node[c]);
    }
  }

  ~Sheaves() override {
    for (Sheaf* sh : all_sheaves_) delete sh;
  }

  // --- allocation ------------------------------------------------------------------------

  // alloc_from_pcs, the part without shared state: main, or main swapped with a full spare.
  void* alloc_fast(Exec& e, KmemCache& s, int node) override {
    if (!s.sheaf_capacity) return below_->alloc_fast(e, s, node);
    if (node != kNoNode && node != e.mem_node()) return nullptr;  // slow path counts the mismatch
    PercpuSheaves& pcs = s.pcs[e.cpu()];
    if (pcs.main->empty()) {
      if (!pcs.spare || pcs.spare->empty()) return nullptr;
      std::swap(pcs.main, pcs.spare);
    }
    void* obj = pcs.main->objects.back();
    if (node != kNoNode && slub_.virt_to_slab(obj)->node != node) return nullptr;
    pcs.main->pop();
    e.spend(c_.sheaf_alloc);
    s.stat(v7_ ? Stat::ALLOC_FASTPATH : Stat::ALLOC_PCS);
    return obj;
  }

  Co<void*> alloc_slow(Exec& e, KmemCache& s, int node, Gfp gfp) override {
    if (s.sheaf_capacity) {
      PercpuSheaves& pcs = s.pcs[e.cpu()];
      bool node_ok = node == kNoNode || node == e.mem_node();
      bool replaced = false;
      if (node_ok && pcs.main->empty()) replaced = co_await replace_empty_main(e, s, gfp);
      if (replaced) {
        void* obj = pcs.main->objects.back();
        if (node == kNoNode || slub_.virt_to_slab(obj)->node == node) {
          pcs.main->pop();
          e.spend(c_.sheaf_alloc);
          s.stat(v7_ ? Stat::ALLOC_FASTPATH : Stat::ALLOC_PCS);
          co_return obj;
        }
        node_ok = false;
      }
      // 7.0 counts the bypass (a remote node asked for, or main's top object on another node).
      if (v7_ && (!node_ok || !pcs.main->empty())) s.stat(Stat::ALLOC_NODE_MISMATCH);
    }
    // The layer below: 6.18 the whole cpu-slab path (fast path first), 7.0 ___slab_alloc.
    void* obj = below_->alloc_fast(e, s, node);
    if (!obj) obj = co_await below_->alloc_slow(e, s, node, gfp);
    co_return obj;
  }

  // __pcs_replace_empty_main, with main empty and no non-empty spare.
  Co<bool> replace_empty_main(Exec& e, KmemCache& s, Gfp gfp) {
    Frame frame(e, "__pcs_replace_empty_main");
    PercpuSheaves& pcs = s.pcs[e.cpu()];
    Barn& barn = s.node[e.mem_node()].barn;
    Sheaf* full = co_await barn_replace_empty_sheaf(e, barn, pcs.main);
    if (full) {
      s.stat(Stat::BARN_GET);
      pcs.main = full;
      co_return true;
    }
    s.stat(Stat::BARN_GET_FAIL);
    // can_alloc = gfpflags_allow_blocking(gfp): a GFP_NOWAIT allocation stops here and the
    // caller goes to the layer below (6.18, 6.19, 7.0-rc1/rc2), unless the kernel has
    // fb1091febd66 "mm/slab: allow sheaf refill if blocking is not allowed" (7.0-rc3, which
    // asks gfpflags_allow_spinning instead: GFP_NOWAIT may spin).
    if (gfp == Gfp::Nowait && !f_.nowait_refill) co_return false;
    // Refill a vessel.
    Sheaf* vessel = nullptr;
    if (pcs.spare) {
      vessel = pcs.spare;
      pcs.spare = nullptr;
    } else {
      vessel = co_await barn_get_empty_sheaf(e, barn);
    }
    if (!vessel) vessel = new_sheaf(s, true, e.mem_node());
    bool filled = co_await refill(e, s, vessel);
    if (!filled) {
      // A partial refill is a failure: give back what it got, free the vessel.
      co_await flush_sheaf(e, s, vessel);
      free_sheaf(s, vessel);
      co_return false;
    }
    // Install the full sheaf.
    if (pcs.main->empty()) {
      if (f_.spare_sheaf && !pcs.spare) {
        pcs.spare = pcs.main;  // Jan 2026: keep the empty main as the spare
      } else {
        co_await barn_put_empty_sheaf(e, barn, pcs.main);
      }
      pcs.main = vessel;
    } else if (!pcs.spare) {
      pcs.spare = vessel;
    } else if (pcs.spare->empty()) {
      co_await barn_put_empty_sheaf(e, barn, pcs.spare);
      pcs.spare = vessel;
    } else {
      co_await barn_put_full_sheaf(e, barn, vessel);
      s.stat(Stat::BARN_PUT);
    }
    co_return true;
  }

  // refill_sheaf: top the sheaf up to its capacity from the layer below. An oversize prefilled
  // sheaf is filled by __kmem_cache_alloc_bulk instead (§4.7): no SHEAF_REFILL, and 7.0 counts
  // the objects as ALLOC_SLOWPATH (§4.11); below_->alloc_bulk is all or nothing, like it.
  Co<bool> refill(Exec& e, KmemCache& s, Sheaf* sheaf) {
    Frame frame(e, "refill_sheaf");
    AccountScope slow(e, Account::SlabSlow);
    std::size_t to_fill = sheaf->capacity - sheaf->size();
    if (to_fill == 0) co_return true;
    std::vector<void*> got(to_fill);
    // v4 10/22: __refill_objects from the node partial list; an oversize prefill still takes
    // __kmem_cache_alloc_bulk through the cpu slab.
    Frontend& from = refill_ && !sheaf->oversize ? *refill_ : *below_;
    std::size_t filled = co_await from.alloc_bulk(e, s, to_fill, got.data());
    sheaf->objects.insert(sheaf->objects.end(), got.begin(), got.begin() + static_cast<std::ptrdiff_t>(filled));
    e.spend(c_.sheaf_array_store_per_object * static_cast<Time>(filled));
    if (!sheaf->oversize) s.stat(Stat::SHEAF_REFILL, filled);
    else if (v7_) s.stat(Stat::ALLOC_SLOWPATH, filled);
    co_return filled == to_fill;
  }

  // --- free ------------------------------------------------------------------------------

  // free_to_pcs, the part without shared state: local objects to main, or main swapped with a
  // spare that has room.
  bool free_fast(Exec& e, KmemCache& s, Slab* slab, void* obj) override {
    if (!s.sheaf_capacity || slab->node != e.mem_node()) return below_->free_fast(e, s, slab, obj);
    PercpuSheaves& pcs = s.pcs[e.cpu()];
    if (pcs.main->full()) {
      if (!pcs.spare || pcs.spare->full()) return false;
      std::swap(pcs.main, pcs.spare);
    }
    push_main(e, s, pcs, obj);
    return true;
  }

  Co<void> free_slow(Exec& e, KmemCache& s, Slab* slab, void* obj) override {
    bool room = false;
    if (s.sheaf_capacity && slab->node == e.mem_node()) room = co_await replace_full_main(e, s);
    if (room) {
      push_main(e, s, s.pcs[e.cpu()], obj);
      co_return;
    }
    // Remote object, or no room: straight to the slab.
    if (v7_) s.stat(Stat::FREE_SLOWPATH);
    if (!below_->free_fast(e, s, slab, obj)) co_await below_->free_slow(e, s, slab, obj);
  }

  void push_main(Exec& e, KmemCache& s, PercpuSheaves& pcs, void* obj) {
    pcs.main->objects.push_back(obj);
    // From an RCU callback (rcu_tick's scope): rcu_do_batch read the rcu_head, at the start of
    // the object; a free pointer mid-object is on a line untouched for a grace period.
    if (e.account() >= Account::Rcu && s.geo.offset >= kCacheLine) ++pcs.main->aged;
    e.spend(c_.sheaf_free);
    s.stat(v7_ ? Stat::FREE_FASTPATH : Stat::FREE_PCS);
  }

  // __pcs_replace_full_main, with main full and the spare full or absent.
  Co<bool> replace_full_main(Exec& e, KmemCache& s) {
    Frame frame(e, "__pcs_replace_full_main");
    PercpuSheaves& pcs = s.pcs[e.cpu()];
    Barn& barn = s.node[e.mem_node()].barn;
    Sheaf* empty = nullptr;
    if (!pcs.spare) {
      empty = co_await barn_get_empty_sheaf(e, barn);
      if (empty) {
        pcs.spare = pcs.main;
        pcs.main = empty;
        co_return true;
      }
    } else {
      int r = co_await barn_replace_full_sheaf(e, s, barn, pcs.main, &empty);
      if (r == 0) {
        s.stat(Stat::BARN_PUT);
        pcs.main = empty;
        co_return true;
      }
      if (r == kE2Big) {
        // The barn holds its limit of full sheaves: flush the spare to slabs and use it.
        s.stat(Stat::BARN_PUT_FAIL);
        Sheaf* spare = pcs.spare;
        pcs.spare = nullptr;
        co_await flush_sheaf(e, s, spare);
        co_await install_empty(e, s, pcs, spare);
        co_return true;
      }
    }
    // No empty sheaf anywhere: allocate one (GFP_NOWAIT; succeeds here).
    empty = new_sheaf(s, true, e.mem_node());
    co_await install_empty(e, s, pcs, empty);
    co_return true;
  }

  // __pcs_install_empty_sheaf.
  Co<void> install_empty(Exec& e, KmemCache& s, PercpuSheaves& pcs, Sheaf* empty) {
    Barn& barn = s.node[e.mem_node()].barn;
    if (!pcs.spare) {
      pcs.spare = pcs.main;  // the expected case
      pcs.main = empty;
    } else if (!pcs.main->full()) {
      co_await barn_put_empty_sheaf(e, barn, empty);
    } else if (!pcs.spare->full()) {
      std::swap(pcs.main, pcs.spare);
      co_await barn_put_empty_sheaf(e, barn, empty);
    } else {
      // Both full: main goes to the barn whatever its limit.
      co_await barn_put_full_sheaf(e, barn, pcs.main);
      s.stat(Stat::BARN_PUT);
      pcs.main = empty;
    }
  }

  // --- bulk --------------------------------------------------------------------------------

  Co<void> do_slab_free(Exec& e, KmemCache& s, Slab* slab, void* head, void* tail, std::uint32_t cnt) override {
    co_await below_->do_slab_free(e, s, slab, head, tail, cnt);
  }

  Co<std::size_t> alloc_bulk(Exec& e, KmemCache& s, std::size_t n, void** p) override {
    Frame frame(e, "kmem_cache_alloc_bulk");
    if (!s.sheaf_capacity) co_return co_await below_->alloc_bulk(e, s, n, p);
    // alloc_from_pcs_bulk: main, then a non-empty spare or a barn full sheaf; no refill.
    PercpuSheaves& pcs = s.pcs[e.cpu()];
    std::size_t i = 0;
    while (i < n) {
      if (pcs.main->empty()) {
        if (pcs.spare && !pcs.spare->empty()) {
          std::swap(pcs.main, pcs.spare);
        } else {
          Sheaf* full = co_await barn_replace_empty_sheaf(e, s.node[e.mem_node()].barn, pcs.main);
          s.stat(full ? Stat::BARN_GET : Stat::BARN_GET_FAIL);
          if (!full) break;
          pcs.main = full;
        }
      }
      std::size_t batch = std::min<std::size_t>(n - i, pcs.main->size());
      for (std::size_t k = 0; k < batch; ++k) {
        p[i++] = pcs.main->pop();
      }
      e.spend(c_.sheaf_array_store_per_object * static_cast<Time>(batch));
      s.stat(v7_ ? Stat::ALLOC_FASTPATH : Stat::ALLOC_PCS, batch);
    }
    if (i == n) co_return n;
    // The rest from the layer below.
    std::size_t rest = n - i;
    std::size_t got = co_await below_->alloc_bulk(e, s, rest, p + i);
    if (got < rest) {
      // Out of memory: what came from the sheaves goes straight to the slabs
      // (__kmem_cache_free_bulk), not back to the sheaves.
      co_await below_->free_bulk(e, s, i, p);
      co_return 0;
    }
    if (v7_) s.stat(Stat::ALLOC_SLOWPATH, rest);  // counted by __kmem_cache_alloc_bulk on success
    co_return n;
  }

  Co<void> free_bulk(Exec& e, KmemCache& s, std::size_t n, void** p) override {
    Frame frame(e, "kmem_cache_free_bulk");
    if (!s.sheaf_capacity) {
      co_await below_->free_bulk(e, s, n, p);
      co_return;
    }
    // free_to_pcs_bulk: remote objects in batches of 32 straight to slabs; local ones to main.
    PercpuSheaves& pcs = s.pcs[e.cpu()];
    std::vector<void*> remote, local;
    for (std::size_t i = 0; i < n; ++i) {
      if (slub_.virt_to_slab(p[i])->node != e.mem_node()) {
        remote.push_back(p[i]);
        if (remote.size() == f_.pcs_batch_max) {
          if (v7_) s.stat(Stat::FREE_SLOWPATH, remote.size());
          co_await below_->free_bulk(e, s, remote.size(), remote.data());
          remote.clear();
        }
      } else {
        local.push_back(p[i]);
      }
    }
    std::size_t i = 0;
    while (i < local.size()) {
      if (pcs.main->full()) {
        bool ok = true;
        if (!pcs.spare) {
          Sheaf* empty = co_await barn_get_empty_sheaf(e, s.node[e.mem_node()].barn);
          if (empty) {
            pcs.spare = pcs.main;
            pcs.main = empty;
          } else {
            ok = false;
          }
        } else if (!pcs.spare->full()) {
          std::swap(pcs.main, pcs.spare);
        } else {
          Sheaf* empty = nullptr;
          int r = co_await barn_replace_full_sheaf(e, s, s.node[e.mem_node()].barn, pcs.main, &empty);
          s.stat(r == 0 ? Stat::BARN_PUT : Stat::BARN_PUT_FAIL);
          if (r == 0) pcs.main = empty;
          else ok = false;
        }
        if (!ok) break;  // bulk free never allocates sheaves: the rest goes to slabs
      }
      std::size_t batch = std::min<std::size_t>(local.size() - i, pcs.main->capacity - pcs.main->size());
      pcs.main->objects.insert(pcs.main->objects.end(), local.begin() + static_cast<std::ptrdiff_t>(i),
                               local.begin() + static_cast<std::ptrdiff_t>(i + batch));
      i += batch;
      e.spend(c_.sheaf_array_store_per_object * static_cast<Time>(batch));
      s.stat(v7_ ? Stat::FREE_FASTPATH : Stat::FREE_PCS, batch);
    }
    for (; i < local.size(); ++i) remote.push_back(local[i]);
    if (!remote.empty()) {
      if (v7_) s.stat(Stat::FREE_SLOWPATH, remote.size());
      co_await below_->free_bulk(e, s, remote.size(), remote.data());
    }
  }

  // --- flushing ------------------------------------------------------------------------------

  // pcs_flush_all for one CPU: the spare flushed and freed, the rcu_free sheaf submitted to RCU
  // (nobarn), main flushed in batches; then the layer below's per-CPU caches.
  Co<void> flush_cpu(Exec& e, KmemCache& s, int cpu) override {
    Frame frame(e, "pcs_flush_all");
    if (s.sheaf_capacity) {
      PercpuSheaves& pcs = s.pcs[cpu];
      if (Sheaf* spare = pcs.spare) {
        pcs.spare = nullptr;
        co_await flush_sheaf(e, s, spare);
        free_sheaf(s, spare);
      }
      if (Sheaf* rcu = pcs.rcu_free) {
        pcs.rcu_free = nullptr;
        rcu_in_flight_.insert(rcu);
        slub_.call_rcu(e, {RcuCallback::RcuSheafNobarn, s.index, rcu});
      }
      co_await flush_sheaf(e, s, pcs.main);
    }
    co_await below_->flush_cpu(e, s, cpu);
  }

  // barn_shrink on every node.
  Co<void> shrink(Exec& e, KmemCache& s) override {
    Frame frame(e, "__kmem_cache_shrink");
    if (s.sheaf_capacity) {
      for (auto& n : s.node) {
        Barn& barn = n.barn;
        co_await e.lock(barn.lock);
        std::deque<Sheaf*> full, empty;
        full.swap(barn.full);
        empty.swap(barn.empty);
        co_await e.store(barn.line);
        co_await e.unlock(barn.lock);
        for (Sheaf* sh : full) {
          co_await flush_sheaf(e, s, sh);
          free_sheaf(s, sh);
        }
        for (Sheaf* sh : empty) free_sheaf(s, sh);
      }
    }
    co_await below_->shrink(e, s);
  }

  // Objects of a sheaf back to their slabs (sheaf_flush_unused / sheaf_flush_main), in batches
  // of PCS_BATCH_MAX through the layer below's bulk free.
  Co<void> flush_sheaf(Exec& e, KmemCache& s, Sheaf* sheaf) {
    Frame frame(e, "sheaf_flush_unused");
    AccountScope slow(e, Account::SlabSlow);
    // build_detached_freelist stores each object's free pointer: a memory access for the aged
    // ones, as in the per-object RCU callback that frees to a slab (Slub::run_callback).
    if (sheaf->aged > 0 && !slub_.params().numa.memory_latency.empty())
      e.spend(static_cast<Time>(sheaf->aged) * slub_.aged_line(e, e.mem_node()) / c_.aged_store_overlap);
    sheaf->aged = 0;
    while (!sheaf->empty()) {
      std::size_t batch = std::min<std::size_t>(sheaf->size(), f_.pcs_batch_max);
      std::vector<void*> objs(sheaf->objects.end() - static_cast<std::ptrdiff_t>(batch), sheaf->objects.end());
      sheaf->objects.resize(sheaf->size() - batch);
      s.stat(Stat::SHEAF_FLUSH, batch);
      co_await below_->free_bulk(e, s, objs.size(), objs.data());
    }
  }

  // --- kfree_rcu ----------------------------------------------------------------------------

  // __kfree_rcu_sheaf: local objects of sheaf caches gather in the rcu_free sheaf; a full one
  // waits a grace period (one RCU callback per capacity objects).
  Co<bool> kfree_rcu(Exec& e, KmemCache& s, Slab* slab, void* obj) override {
    Frame frame(e, "__kfree_rcu_sheaf");
    if (!s.sheaf_capacity || slab->node != e.mem_node()) co_return false;
    PercpuSheaves& pcs = s.pcs[e.cpu()];
    if (!pcs.rcu_free) {
      if (pcs.spare && pcs.spare->empty()) {
        pcs.rcu_free = pcs.spare;
        pcs.spare = nullptr;
      } else {
        Sheaf* empty = co_await barn_get_empty_sheaf(e, s.node[e.mem_node()].barn);
        pcs.rcu_free = empty ? empty : new_sheaf(s, true, e.mem_node());
      }
    }
    rcu_sheaf_add(e, s, pcs, obj);
    co_return true;
  }

  RcuFast kfree_rcu_fast(Exec& e, KmemCache& s, Slab* slab, void* obj) override {
    Frame frame(e, "__kfree_rcu_sheaf");
    if (!s.sheaf_capacity || slab->node != e.mem_node()) return RcuFast::Classic;
    PercpuSheaves& pcs = s.pcs[e.cpu()];
    if (!pcs.rcu_free) {
      if (!pcs.spare || !pcs.spare->empty()) return RcuFast::Slow;  // the barn's empty sheaves
      pcs.rcu_free = pcs.spare;
      pcs.spare = nullptr;
    }
    rcu_sheaf_add(e, s, pcs, obj);
    return RcuFast::Taken;
  }

  // The object joins this CPU's rcu_free sheaf; a full one is submitted for a grace period.
  void rcu_sheaf_add(Exec& e, KmemCache& s, PercpuSheaves& pcs, void* obj) {
    pcs.rcu_free->objects.push_back(obj);
    ++pcs.rcu_free->aged;  // nothing touches it again before rcu_free_sheaf, a grace period later
    e.spend(c_.sheaf_free);
    if (pcs.rcu_free->full()) {
      Sheaf* sheaf = pcs.rcu_free;
      pcs.rcu_free = nullptr;
      sheaf->node = e.mem_node();
      rcu_in_flight_.insert(sheaf);
      slub_.call_rcu(e, {RcuCallback::RcuSheaf, s.index, sheaf});
    }
    s.stat(Stat::FREE_RCU_SHEAF);
  }

  // rcu_free_sheaf: after the grace period the whole sheaf goes to the barn of the node that
  // submitted it as a full sheaf, unless the barn already holds its limit: then it is flushed.
  Co<void> rcu_sheaf_done(Exec& e, KmemCache& s, void* ptr, bool nobarn) override {
    Frame frame(e, "rcu_free_sheaf");
    auto* sheaf = static_cast<Sheaf*>(ptr);
    rcu_in_flight_.erase(sheaf);
    if (nobarn) {
      co_await flush_sheaf(e, s, sheaf);
      free_sheaf(s, sheaf);
      co_return;
    }
    Barn& barn = s.node[sheaf->node].barn;
    if (!sheaf->empty()) {
      co_await e.read(barn.line);  // racy nr_full
      s.saw_full(barn.nr_full());
      if (barn.nr_full() < s.barn_max_full) {
        co_await barn_put_full_sheaf(e, barn, sheaf);
        s.stat(Stat::BARN_PUT);
        co_return;
      }
      s.stat(Stat::BARN_PUT_FAIL);
      co_await flush_sheaf(e, s, sheaf);
    }
    co_await e.read(barn.line);  // racy nr_empty
    s.saw_empty(barn.nr_empty());
    if (barn.nr_empty() < s.barn_max_empty) co_await barn_put_empty_sheaf(e, barn, sheaf);
    else free_sheaf(s, sheaf);
  }

  // --- prefilled sheaves (maple tree) --------------------------------------------------------

  Co<Sheaf*> prefill_sheaf(Exec& e, KmemCache& s, std::uint32_t n) override {
    Frame frame(e, "kmem_cache_prefill_sheaf");
    if (!s.sheaf_capacity) co_return co_await Frontend::prefill_sheaf(e, s, n);
    if (n == 0) co_return nullptr;
    Sheaf* sheaf = nullptr;
    if (n > s.sheaf_capacity) {
      s.stat(Stat::SHEAF_PREFILL_OVERSIZE);
      sheaf = new_sheaf(s, false, e.mem_node());
      sheaf->capacity = n;
      sheaf->oversize = true;
      e.spend(c_.sheaf_struct_alloc);
    } else {
      PercpuSheaves& pcs = s.pcs[e.cpu()];
      if (pcs.spare) {
        sheaf = pcs.spare;
        pcs.spare = nullptr;
        s.stat(Stat::SHEAF_PREFILL_FAST);
      } else {
        s.stat(Stat::SHEAF_PREFILL_SLOW);
        sheaf = co_await barn_get_full_or_empty_sheaf(e, s.node[e.mem_node()].barn);
        // BARN_GET only for a sheaf with objects; an empty one or none is BARN_GET_FAIL.
        s.stat(sheaf && !sheaf->empty() ? Stat::BARN_GET : Stat::BARN_GET_FAIL);
        if (!sheaf) sheaf = new_sheaf(s, true, e.mem_node());
      }
    }
    prefilled_.insert(sheaf);
    bool ok = true;
    if (sheaf->size() < n) ok = co_await refill(e, s, sheaf);
    if (!ok) {
      prefilled_.erase(sheaf);
      co_await flush_sheaf(e, s, sheaf);
      free_sheaf(s, sheaf, !sheaf->oversize);  // an oversize sheaf is a plain kfree
      co_return nullptr;
    }
    co_return sheaf;
  }

  void* alloc_from_sheaf(Exec& e, KmemCache&, Sheaf* sheaf) override {
    if (sheaf->empty()) return nullptr;  // no fallback to the cache
    void* obj = sheaf->pop();
    e.spend(c_.sheaf_alloc);
    return obj;
  }

  Co<Sheaf*> refill_sheaf(Exec& e, KmemCache& s, Sheaf* sheaf, std::uint32_t n) override {
    Frame frame(e, "kmem_cache_refill_sheaf");
    if (sheaf->size() >= n) co_return sheaf;
    if (sheaf->capacity >= n) {
      bool ok = co_await refill(e, s, sheaf);
      co_return ok ? sheaf : nullptr;
    }
    Sheaf* bigger = co_await prefill_sheaf(e, s, n);
    if (!bigger) co_return nullptr;
    co_await return_sheaf(e, s, sheaf);
    co_return bigger;
  }

  Co<void> return_sheaf(Exec& e, KmemCache& s, Sheaf* sheaf) override {
    Frame frame(e, "kmem_cache_return_sheaf");
    prefilled_.erase(sheaf);
    if (sheaf->oversize) {
      co_await flush_sheaf(e, s, sheaf);
      free_sheaf(s, sheaf, false);
      co_return;
    }
    PercpuSheaves& pcs = s.pcs[e.cpu()];
    if (!pcs.spare) {
      pcs.spare = sheaf;  // as it is, partly filled or not
      s.stat(Stat::SHEAF_RETURN_FAST);
      co_return;
    }
    s.stat(Stat::SHEAF_RETURN_SLOW);
    AccountScope slow(e, Account::SlabSlow);
    Barn& barn = s.node[e.mem_node()].barn;
    co_await e.read(barn.line);
    bool refilled = false;
    s.saw_full(barn.nr_full());
    if (barn.nr_full() < s.barn_max_full) refilled = co_await refill(e, s, sheaf);
    if (refilled) {
      co_await barn_put_full_sheaf(e, barn, sheaf);
      s.stat(Stat::BARN_PUT);
      co_return;
    }
    co_await flush_sheaf(e, s, sheaf);
    free_sheaf(s, sheaf);
  }

  // --- what the front-end holds ----------------------------------------------------------------

  void cached_objects(const KmemCache& s, std::vector<void*>& out) const override {
    below_->cached_objects(s, out);
    if (!s.sheaf_capacity) return;
    auto add = [&](const Sheaf* sh) {
      if (sh) out.insert(out.end(), sh->objects.begin(), sh->objects.end());
    };
    for (const auto& pcs : s.pcs) {
      add(pcs.main);
      add(pcs.spare);
      add(pcs.rcu_free);
    }
    for (const auto& n : s.node)
      for (const Sheaf* sh : n.barn.full) add(sh);
    for (const Sheaf* sh : rcu_in_flight_)
      if (sh->cache_index == s.index) add(sh);
    for (const Sheaf* sh : prefilled_)
      if (sh->cache_index == s.index) add(sh);
  }

  CachedCounts count_cached(const KmemCache& s) const override {
    CachedCounts c = below_->count_cached(s);
    if (!s.sheaf_capacity) return c;
    for (const auto& pcs : s.pcs) {
      c.sheaves += pcs.main->size() + (pcs.spare ? pcs.spare->size() : 0);
      if (pcs.rcu_free) c.rcu += pcs.rcu_free->size();
    }
    for (const auto& n : s.node)
      for (const Sheaf* sh : n.barn.full) c.barn += sh->size();
    for (const Sheaf* sh : rcu_in_flight_)
      if (sh->cache_index == s.index) c.rcu += sh->size();
    for (const Sheaf* sh : prefilled_)
      if (sh->cache_index == s.index) c.prefilled += sh->size();
    c.sheaf_structs = sheaf_structs_[s.index];
    return c;
  }

 private:
  static constexpr int kE2Big = 1, kENoMem = 2;

  Sheaf* new_sheaf(KmemCache& s, bool counted, int node) {
    auto* sh = new Sheaf;
    sh->home = node;
    sh->line = slub_.take_line(node);
    sh->capacity = s.sheaf_capacity;
    sh->cache_index = s.index;
    sh->objects.reserve(sh->capacity);
    all_sheaves_.insert(sh);
    if (sheaf_structs_.size() <= static_cast<std::size_t>(s.index)) sheaf_structs_.resize(s.index + 1, 0);
    ++sheaf_structs_[s.index];
    if (counted) s.stat(Stat::SHEAF_ALLOC);
    return sh;
  }

  void free_sheaf(KmemCache& s, Sheaf* sh, bool counted = true) {
    if (counted) s.stat(Stat::SHEAF_FREE);
    --sheaf_structs_[s.index];
    slub_.give_back_line(sh->home, sh->line);
    all_sheaves_.erase(sh);
    delete sh;
  }

  // list_del of a barn list's first sheaf: its list node and the next sheaf's.
  Co<Sheaf*> take_front(Exec& e, std::deque<Sheaf*>& list) {
    Sheaf* sh = list.front();
    list.pop_front();
    // list_del: a load of the entry's neighbours, then stores to the entry and the next one.
    if (e.stores_posted()) co_await e.read(sh->line);
    co_await e.store(sh->line);
    if (!list.empty()) co_await e.store(list.front()->line);
    co_return sh;
  }

  // list_add at the head, as every barn put does (6.18 barn_put_empty_sheaf, barn_put_full_sheaf,
  // barn_replace_*_sheaf): the sheaf's list node and the old first sheaf's. With take_front the
  // barn's lists are last in, first out.
  Co<void> put_front(Exec& e, std::deque<Sheaf*>& list, Sheaf* sh) {
    if (!list.empty()) co_await e.store(list.front()->line);
    co_await e.store(sh->line);
    list.push_front(sh);
  }

  // barn_replace_empty_sheaf: a full sheaf for our empty one.
  Co<Sheaf*> barn_replace_empty_sheaf(Exec& e, Barn& barn, Sheaf* empty) {
    Frame frame(e, "barn_replace_empty_sheaf");
    AccountScope slow(e, Account::SlabSlow);
    co_await e.read(barn.line);  // racy nr_full
    if (barn.full.empty()) co_return nullptr;
    co_await e.lock(barn.lock);
    Sheaf* full = nullptr;
    if (!barn.full.empty()) {
      full = co_await take_front(e, barn.full);
      co_await put_front(e, barn.empty, empty);
      co_await e.store(barn.line);
      e.spend(c_.barn_op);
    }
    co_await e.unlock(barn.lock);
    co_return full;
  }

  Co<Sheaf*> barn_get_empty_sheaf(Exec& e, Barn& barn) {
    Frame frame(e, "barn_get_empty_sheaf");
    AccountScope slow(e, Account::SlabSlow);
    co_await e.read(barn.line);  // racy nr_empty
    if (barn.empty.empty()) co_return nullptr;
    co_await e.lock(barn.lock);
    Sheaf* sh = nullptr;
    if (!barn.empty.empty()) {
      sh = co_await take_front(e, barn.empty);
      co_await e.store(barn.line);
      e.spend(c_.barn_op);
    }
    co_await e.unlock(barn.lock);
    co_return sh;
  }

  Co<Sheaf*> barn_get_full_or_empty_sheaf(Exec& e, Barn& barn) {
    Frame frame(e, "barn_get_full_or_empty_sheaf");
    AccountScope slow(e, Account::SlabSlow);
    co_await e.read(barn.line);
    if (barn.full.empty() && barn.empty.empty()) co_return nullptr;
    co_await e.lock(barn.lock);
    Sheaf* sh = nullptr;
    if (!barn.full.empty()) {
      sh = co_await take_front(e, barn.full);
    } else if (!barn.empty.empty()) {
      sh = co_await take_front(e, barn.empty);
    }
    if (sh) {
      co_await e.store(barn.line);
      e.spend(c_.barn_op);
    }
    co_await e.unlock(barn.lock);
    co_return sh;
  }

  // barn_replace_full_sheaf: our full sheaf for an empty one. 0, kE2Big or kENoMem.
  Co<int> barn_replace_full_sheaf(Exec& e, KmemCache& s, Barn& barn, Sheaf* full, Sheaf** empty) {
    Frame frame(e, "barn_replace_full_sheaf");
    AccountScope slow(e, Account::SlabSlow);
    co_await e.read(barn.line);  // racy pre-checks
    s.saw_full(barn.nr_full());
    if (barn.nr_full() >= s.barn_max_full) co_return kE2Big;
    if (barn.empty.empty()) co_return kENoMem;
    co_await e.lock(barn.lock);
    int r = kENoMem;
    if (!barn.empty.empty()) {
      *empty = co_await take_front(e, barn.empty);
      co_await put_front(e, barn.full, full);
      co_await e.store(barn.line);
      e.spend(c_.barn_op);
      r = 0;
    }
    co_await e.unlock(barn.lock);
    co_return r;
  }

  Co<void> barn_put_empty_sheaf(Exec& e, Barn& barn, Sheaf* sh) {
    Frame frame(e, "barn_put_empty_sheaf");
    AccountScope slow(e, Account::SlabSlow);
    co_await e.lock(barn.lock);
    co_await put_front(e, barn.empty, sh);
    co_await e.store(barn.line);
    e.spend(c_.barn_op);
    co_await e.unlock(barn.lock);
  }

  Co<void> barn_put_full_sheaf(Exec& e, Barn& barn, Sheaf* sh) {
    Frame frame(e, "barn_put_full_sheaf");
    AccountScope slow(e, Account::SlabSlow);
    co_await e.lock(barn.lock);
    co_await put_front(e, barn.full, sh);
    co_await e.store(barn.line);
    e.spend(c_.barn_op);
    co_await e.unlock(barn.lock);
  }

  Slub& slub_;
  std::unique_ptr<Frontend> below_;
  // Where refill_sheaf gets its objects when not from below_ (v4 10/22 over cpu partial).
  std::unique_ptr<Frontend> refill_;
  bool v7_;
  const Features& f_;
  const PathCosts& c_;
  SheafSet<&Sheaf::slot_all> all_sheaves_;
  SheafSet<&Sheaf::slot_rcu> rcu_in_flight_;  // submitted to call_rcu, not back yet
  SheafSet<&Sheaf::slot_prefilled> prefilled_;  // handed out by kmem_cache_prefill_sheaf
  std::vector<std::int64_t> sheaf_structs_;
};

}  // namespace

std::unique_ptr<Frontend> make_sheaves_frontend(Slub& slub, std::unique_ptr<Frontend> below, bool v7,
                                                std::unique_ptr<Frontend> refill) {
  return std::make_unique<Sheaves>(slub, std::move(below), v7, std::move(refill));
}

}  // namespace slubsim::slub
