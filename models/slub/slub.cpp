#include "models/slub/slub.h"

#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>

namespace slubsim::slub {

Slub::Slub(Shared& shared, Params params) : shared_(shared), p_(std::move(params)) {
  const Numa& numa = p_.numa;
  pages_ = std::make_unique<PageAllocator>(shared_, numa, p_.page_alloc, p_.costs);
  for (int c = 0; c < numa.nr_cpus; ++c) rng_.emplace_back(p_.seed, static_cast<std::uint64_t>(c), 7);
  free_lines_.resize(numa.nr_nodes);
  Random cache_rng(p_.seed, 0xcace, 0);
  for (const auto& spec : p_.caches) {
    auto s = std::make_unique<KmemCache>();
    s->index = static_cast<int>(caches_.size());
    s->spec = spec;
    s->geo = compute_geometry(spec, p_.features, numa.nr_cpus);
    for (int n = 0; n < numa.nr_nodes; ++n) {
      KmemCacheNode kn;
      kn.list_lock = shared_.new_spinlock(spec.name + ".list_lock", fmt::format("node{}", n), n);
      kn.line = shared_.lock_line(kn.list_lock);
      s->node.push_back(kn);
    }
    s->cpu.resize(numa.nr_cpus);
    // Which caches have sheaves, and how big (slub-algorithms.md §3.1, §4.2).
    s->sheaf_capacity = effective_sheaf_capacity(p_.features.frontend, s->geo, spec.sheaf_capacity);
    s->barn_max_full = spec.barn_max_full.value_or(p_.features.barn_max_full);
    s->barn_max_empty = spec.barn_max_empty.value_or(p_.features.barn_max_empty);
    if (s->sheaf_capacity > 0) {
      s->pcs.resize(numa.nr_cpus);
      for (int n = 0; n < numa.nr_nodes; ++n) {
        Barn& b = s->node[n].barn;
        b.lock = shared_.new_spinlock(spec.name + ".barn_lock", fmt::format("node{}", n), n);
        b.line = shared_.lock_line(b.lock);
      }
    }
    for (int c = 0; c < numa.nr_cpus; ++c) s->cpu[c].tid = static_cast<std::uint64_t>(c);
    if (p_.features.freelist_random) {
      // init_cache_random_seq: a shuffled permutation of the object indices.
      s->random_seq.resize(s->geo.objects);
      for (std::uint32_t i = 0; i < s->geo.objects; ++i) s->random_seq[i] = i;
      for (std::uint32_t i = s->geo.objects; i > 1; --i)
        std::swap(s->random_seq[i - 1], s->random_seq[cache_rng.below(i)]);
    }
    caches_.push_back(std::move(s));
  }
  all_slabs_.resize(caches_.size());
  callback_slab_seen_.assign(static_cast<std::size_t>(numa.nr_cpus) * caches_.size(), 0);
  const Features& f = p_.features;
  switch (f.frontend) {
    case FrontendKind::CpuPartialFrozen: fe_ = make_cpu_partial_frontend(*this, true); break;
    case FrontendKind::CpuPartial: fe_ = make_cpu_partial_frontend(*this, false); break;
    case FrontendKind::SheavesOnCpuPartial: {
      auto below = make_cpu_partial_frontend(*this, false);
      // v4 10/22: refills from the node partial list, their surplus back through the cpu
      // partial generation's do_slab_free.
      auto refill = f.refill_from_partial
                        ? make_slab_layer(*this, f.remote_refill_trylock, f.skip_freelist, f.refill_any_node, below.get())
                        : nullptr;
      fe_ = make_sheaves_frontend(*this, std::move(below), false, std::move(refill));
      break;
    }
    case FrontendKind::Sheaves:
      fe_ = make_sheaves_frontend(
          *this, make_slab_layer(*this, f.remote_refill_trylock, f.skip_freelist, f.refill_any_node), true);
      break;
  }
  rcu_.init(numa.nr_cpus, p_.rcu_grace_period, p_.rcu_batch, p_.rcu_grace_period_from_ticks, p_.softirq.tick,
            p_.rcu_first_fqs, p_.rcu_forcing);
  rcu_.accelerate_at_report(p_.rcu_report_ticks);
  residency_.init(numa.cpu_llc, numa.nr_llcs, numa.llc_bytes, numa.llc_hit);
  qs_last_.assign(static_cast<std::size_t>(numa.nr_cpus), {0, 0});
  // Each CPU's task is somewhere in its slice when the run starts.
  std::vector<Time> task_since(static_cast<std::size_t>(numa.nr_cpus), 0);
  if (p_.softirq.tick > 0)
    for (int c = 0; c < numa.nr_cpus; ++c)
      task_since[c] = -static_cast<Time>(rng_[c].below(static_cast<std::uint64_t>(p_.softirq.slice)));
  softirq_.init(p_.softirq, std::move(task_since));
}

Slub::~Slub() {
  fe_.reset();  // sheaves first
  for (auto& list : all_slabs_)
    for (Slab* slab : list) delete slab;
}

KmemCache* Slub::find(std::string_view name) {
  for (auto& c : caches_)
    if (c->name() == name) return c.get();
  return nullptr;
}

// --- entry points ------------------------------------------------------------------------

// memcg_slab_post_alloc_hook / memcg_slab_free_hook (6.x, mm/memcontrol.c obj_cgroup charging
// from the per-CPU stock): CPU-private work per object of a SLAB_ACCOUNT cache, whichever
// per-CPU layer served it. Sheaf refills and flushes are not charged: objects are charged when
// handed to a user and uncharged when a user frees them.
void Slub::memcg_charge(Exec& e, const KmemCache& s, std::size_t n) {
  if (s.spec.accounted && n) e.spend(p_.costs.memcg_charge * static_cast<Time>(n));
}
void Slub::memcg_uncharge(Exec& e, const KmemCache& s, std::size_t n) {
  if (s.spec.accounted && n) e.spend(p_.costs.memcg_uncharge * static_cast<Time>(n));
}

void* Slub::alloc_fast(Exec& e, KmemCache& s, int node) {
  AccountScope fast(e, Account::SlabFast);
  void* obj = fe_->alloc_fast(e, s, node);
  if (obj) memcg_charge(e, s, 1);
  if (obj && p_.validate) track_alloc(s, obj);
  return obj;
}

Co<void*> Slub::alloc(Exec& e, KmemCache& s, int node, Gfp gfp) {
  AccountScope fast(e, Account::SlabFast);
  void* obj = fe_->alloc_fast(e, s, node);
  if (!obj) {
    AccountScope slow(e, Account::SlabSlow);
    obj = co_await fe_->alloc_slow(e, s, node, gfp);
  }
  if (!obj) s.stat(Stat::ALLOC_FAILED);
  if (obj) memcg_charge(e, s, 1);
  if (obj && p_.validate) track_alloc(s, obj);
  co_return obj;
}

bool Slub::free_fast(Exec& e, KmemCache& s, void* obj) {
  AccountScope fast(e, Account::SlabFast);
  Slab* slab = checked_slab(s, obj);
  if (!fe_->free_fast(e, s, slab, obj)) return false;
  memcg_uncharge(e, s, 1);
  if (p_.validate) track_free(s, obj, slab);
  return true;
}

Co<void> Slub::free(Exec& e, KmemCache& s, void* obj) {
  AccountScope fast(e, Account::SlabFast);
  Slab* slab = checked_slab(s, obj);
  if (p_.validate) track_free(s, obj, slab);
  memcg_uncharge(e, s, 1);
  if (!fe_->free_fast(e, s, slab, obj)) {
    AccountScope slow(e, Account::SlabSlow);
    co_await fe_->free_slow(e, s, slab, obj);
  }
}

Co<std::size_t> Slub::alloc_bulk(Exec& e, KmemCache& s, std::size_t n, void** p) {
  AccountScope fast(e, Account::SlabFast);
  std::size_t got = co_await fe_->alloc_bulk(e, s, n, p);
  if (got < n) s.stat(Stat::ALLOC_FAILED);
  memcg_charge(e, s, got);
  if (p_.validate)
    for (std::size_t i = 0; i < got; ++i) track_alloc(s, p[i]);
  co_return got;
}

Co<void> Slub::free_bulk(Exec& e, KmemCache& s, std::size_t n, void** p) {
  AccountScope fast(e, Account::SlabFast);
  // Check every pointer before any is untracked, so that a rejected call changes nothing.
  for (std::size_t i = 0; i < n; ++i) checked_slab(s, p[i]);
  if (p_.validate) {
    std::unordered_set<const void*> seen;
    for (std::size_t i = 0; i < n; ++i)
      if (!in_use_.count(p[i]) || !seen.insert(p[i]).second)
        throw SlubError(fmt::format("{}: double free of object {}", s.name(), p[i]));
    for (std::size_t i = 0; i < n; ++i) track_free(s, p[i], nullptr);
  }
  memcg_uncharge(e, s, n);
  co_await fe_->free_bulk(e, s, n, p);
}

Co<void> Slub::flush_cpu(Exec& e, KmemCache& s, int cpu) {
  AccountScope slow(e, Account::SlabSlow);
  co_await fe_->flush_cpu(e, s, cpu);
}

Co<void> Slub::shrink(Exec& e, KmemCache& s) {
  Frame frame(e, "__kmem_cache_shrink");
  AccountScope slow(e, Account::SlabSlow);
  for (int c = 0; c < p_.numa.nr_cpus; ++c) co_await fe_->flush_cpu(e, s, c);
  co_await fe_->shrink(e, s);
  // __kmem_cache_do_shrink: empty slabs leave the partial lists and are freed.
  for (auto& n : s.node) {
    std::vector<Slab*> empty;
    co_await e.lock(n.list_lock);
    for (Slab* slab = n.partial_head; slab;) {
      Slab* next = slab->next_node;
      if (slab->inuse == 0) {
        co_await remove_partial(e, n, slab);
        empty.push_back(slab);
      }
      slab = next;
    }
    co_await e.unlock(n.list_lock);
    for (Slab* slab : empty) {
      s.stat(Stat::FREE_SLAB);
      co_await discard_slab(e, s, slab);
    }
  }
}

// --- RCU and prefilled sheaves ---------------------------------------------------------------

Co<void> Slub::kfree_rcu(Exec& e, KmemCache& s, void* obj) {
  AccountScope fast(e, Account::SlabFast);
  Slab* slab = checked_slab(s, obj);
  if (p_.validate) track_free(s, obj, slab);
  bool taken = co_await fe_->kfree_rcu(e, s, slab, obj);
  if (taken) co_return;
  // The classic path: one callback per object (kvfree_rcu's own batching is not modelled
  // separately).
  if (p_.validate) rcu_objects_.insert(obj);
  call_rcu(e, {RcuCallback::FreeObject, s.index, obj});
}

bool Slub::kfree_rcu_fast(Exec& e, KmemCache& s, void* obj) {
  AccountScope fast(e, Account::SlabFast);
  Slab* slab = checked_slab(s, obj);
  const Frontend::RcuFast how = fe_->kfree_rcu_fast(e, s, slab, obj);
  if (how == Frontend::RcuFast::Slow) return false;
  if (p_.validate) track_free(s, obj, slab);
  if (how == Frontend::RcuFast::Taken) return true;
  if (p_.validate) rcu_objects_.insert(obj);
  call_rcu(e, {RcuCallback::FreeObject, s.index, obj});
  return true;
}

void Slub::call_rcu_free(Exec& e, KmemCache& s, void* obj) {
  Slab* slab = checked_slab(s, obj);
  if (p_.validate) {
    track_free(s, obj, slab);
    rcu_objects_.insert(obj);
  }
  call_rcu(e, {RcuCallback::FreeObject, s.index, obj});
}

namespace {
// The bytes of lines a callback holds behind RCU: its object's, or its sheaf's objects'.
std::int64_t waiting_bytes(const KmemCache& s, const RcuCallback& cb) {
  const std::int64_t lines = (s.geo.size + kCacheLine - 1) / kCacheLine * kCacheLine;
  switch (cb.kind) {
    case RcuCallback::FreeObject: return lines;
    case RcuCallback::RcuSheaf:
    case RcuCallback::RcuSheafNobarn: return lines * static_cast<std::int64_t>(static_cast<const Sheaf*>(cb.ptr)->size());
    case RcuCallback::SlabPages: return 0;
  }
  return 0;
}
}  // namespace

void Slub::call_rcu(Exec& e, RcuCallback cb) {
  e.spend(p_.costs.call_rcu);
  if (cb.kind == RcuCallback::FreeObject) ++caches_[cb.cache]->rcu_objects;
  if (cb.cache >= 0) residency_.queued(e.cpu(), waiting_bytes(*caches_[cb.cache], cb));
  rcu_.call_rcu(e.cpu(), e.now(), cb);
}

RcuCallback Slub::pop_callback(int cpu) {
  RcuCallback cb = rcu_.pop(cpu);
  if (cb.kind == RcuCallback::FreeObject) --caches_[cb.cache]->rcu_objects;
  if (cb.cache >= 0) residency_.done(cpu, waiting_bytes(*caches_[cb.cache], cb));
  return cb;
}

Time Slub::aged_line(const Exec& e, int node) const {
  return residency_.line(e.cpu(), p_.numa.memory_latency[e.node()][node]);
}

Time Slub::freelist_chase(const Exec& e, int writer, int node, std::uint32_t n) const {
  Time per = p_.costs.freelist_walk_per_object;
  if (p_.freelist_lines_from_writer && writer >= 0 && writer != e.cpu())
    per = std::max(per, e.line_from(writer, node));
  return per * static_cast<Time>(n);
}

// A FreeObject callback up to its free: the object's slab, with the cold lines it costs.
Slab* Slub::callback_slab(Exec& e, KmemCache& s, const RcuCallback& cb) {
  if (p_.validate) rcu_objects_.erase(cb.ptr);
  Slab* slab = virt_to_slab(cb.ptr);
  if (!p_.numa.memory_latency.empty()) {
    // The rcu_head and the struct slab; and when the object goes back to its slab rather
    // than into a sheaf (no sheaves for it, or a remote object), the store of its free
    // pointer, on another line than the rcu_head at the start when the pointer sits
    // mid-object (calculate_sizes puts it at object_size / 2 for caches without a ctor or
    // SLAB_TYPESAFE_BY_RCU): the locked cmpxchg of __slab_free / the cpu freelist waits for it.
    int lines = p_.costs.rcu_callback_cold_lines;
    bool slab_cached = false;
    if (p_.callback_slab_line_cached && lines > 0) {
      // Callbacks run in the order they were queued (kernel/rcu/tree.c rcu_do_batch), so a
      // CPU's frees of objects it allocated one after the other come in runs of one slab: after
      // the run's first, its struct slab (mm/slub.c 6.17 kmem_cache_free -> virt_to_slab,
      // written by the free before) is in this CPU's cache.
      std::uint64_t& seen = callback_slab_seen_[static_cast<std::size_t>(e.cpu()) * caches_.size() +
                                                static_cast<std::size_t>(s.index)];
      slab_cached = seen == slab->id + 1;
      if (slab_cached) --lines;
      else seen = slab->id + 1;
    }
    bool to_slab = s.sheaf_capacity == 0 || slab->node != e.mem_node();
    if (to_slab && s.geo.offset >= kCacheLine) ++lines;
    // "together": every one of these addresses comes from the callback's pointer alone (the
    // rcu_head is in the object, the free pointer at a fixed offset in it, the object's struct
    // page at arithmetic distance through the vmemmap), so an out-of-order core has them in
    // flight at once (kernel/rcu/tree.c rcu_do_batch; mm/slub.c 6.17 kmem_cache_free). Only
    // virt_to_slab chains two: an object past the slab's first page finds its struct slab
    // through its own page's compound_head, a second line after the first unless the struct
    // slab is cached. So a callback waits one line, or two for such an object.
    if (p_.callback_lines_together && lines > 1) {
      const std::size_t byte = slab->host_offset(cb.ptr) / kHostObjectBytes * s.geo.size;
      lines = !slab_cached && byte >= kPageSize ? 2 : 1;
    }
    e.spend(lines * aged_line(e, slab->node));
  }
  return slab;
}

// One callback's work, on e.
Co<void> Slub::run_callback(Exec& e, const RcuCallback& cb) {
  KmemCache& s = *caches_[cb.cache];
  switch (cb.kind) {
    case RcuCallback::FreeObject: {
      Slab* slab = callback_slab(e, s, cb);
      if (!fe_->free_fast(e, s, slab, cb.ptr)) co_await fe_->free_slow(e, s, slab, cb.ptr);
      break;
    }
    case RcuCallback::RcuSheaf:
    case RcuCallback::RcuSheafNobarn:
      co_await fe_->rcu_sheaf_done(e, s, cb.ptr, cb.kind == RcuCallback::RcuSheafNobarn);
      break;
    case RcuCallback::SlabPages:
      break;
  }
}

// One rcu_do_batch: this softirq round's share of the ready callbacks (RcuBatchLimits).
Co<void> Slub::rcu_round(Exec& e) {
  Frame frame(e, "rcu_do_batch");
  AccountScope softirq(e, Account::Rcu);
  std::size_t n = rcu_.batch(e.cpu(), e.now());
  const Time deadline = rcu_.batch_deadline(n, e.now());
  for (; n > 0 && e.now() < deadline; --n) {
    RcuCallback cb = pop_callback(e.cpu());
    e.spend(p_.costs.rcu_callback);
    if (cb.kind == RcuCallback::FreeObject) {
      // run_callback's commonest case inline: most frees end on the fast path.
      KmemCache& s = *caches_[cb.cache];
      Slab* slab = callback_slab(e, s, cb);
      if (!fe_->free_fast(e, s, slab, cb.ptr)) co_await fe_->free_slow(e, s, slab, cb.ptr);
    } else {
      co_await run_callback(e, cb);
    }
  }
  rcu_.batch_done(e.cpu());
}

// A point where the running task could be interrupted (an iteration boundary of the workload):
// whatever softirq work the CPU would do here (models/softirq.h).
Co<void> Slub::rcu_tick(Exec& e) {
  const int cpu = e.cpu();
  const Softirq::Turn turn = softirq_.enter(cpu, e.now());
  const Time start = e.now();
  if (p_.callback_slab_line_cached && turn != Softirq::Turn::None) {
    // A new softirq turn: the task ran since the last one, so nothing is assumed cached.
    const auto at = callback_slab_seen_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(cpu) * caches_.size());
    std::fill(at, at + static_cast<std::ptrdiff_t>(caches_.size()), 0);
  }
  if (rcu_.from_ticks() && (turn == Softirq::Turn::IrqExit || turn == Softirq::Turn::Ksoftirqd)) {
    // The tick's quiescent-state check (rcu_sched_clock_irq): the chance that it interrupted
    // code where it can report is the share of the last tick interval spent outside such code.
    auto& [at, blocked] = qs_last_[static_cast<std::size_t>(cpu)];
    const Time span = e.now() - at;
    double p = span > 0 ? 1.0 - static_cast<double>(e.qs_blocked() - blocked) / static_cast<double>(span) : 1.0;
    // Non-preemptible RCU (rcu_flavor_sched_clock_irq without a preempt count): a tick reports
    // from user space only; the switch to ksoftirqd is a context switch, which reports.
    if (p_.rcu_tick_user_share >= 0.0) p = turn == Softirq::Turn::Ksoftirqd ? 1.0 : p_.rcu_tick_user_share;
    at = e.now();
    blocked = e.qs_blocked();
    const double draw = static_cast<double>(rng_[cpu].below(1u << 20)) / static_cast<double>(1u << 20);
    rcu_.grace_periods().tick(cpu, e.now(), std::clamp(p, 0.0, 1.0), draw);
  }
  switch (turn) {
    case Softirq::Turn::None:
      co_return;
    case Softirq::Turn::Round:
      co_await rcu_round(e);
      break;
    case Softirq::Turn::IrqExit:
      for (int r = 0; softirq_.irq_exit_more(start, e.now(), r, rcu_.ready(cpu, e.now())); ++r) co_await rcu_round(e);
      break;
    case Softirq::Turn::Ksoftirqd: {
      AccountScope ksoftirqd(e, Account::Ksoftirqd);
      while (softirq_.ksoftirqd_more(cpu, e.now(), rcu_.ready(cpu, e.now()))) co_await rcu_round(e);
      break;
    }
  }
  softirq_.leave(cpu, turn, e.now(), rcu_.ready(cpu, e.now()));
}

Co<void> Slub::rcu_barrier(Exec& e) {
  AccountScope softirq(e, Account::Rcu);
  // Run every CPU's callbacks as if their grace periods had ended, each charged to e.
  for (int c = 0; c < rcu_.nr_cpus(); ++c)
    while (!rcu_.pending(c).empty()) {
      RcuCallback cb = pop_callback(c);
      co_await run_callback(e, cb);
    }
}

Co<Sheaf*> Slub::prefill_sheaf(Exec& e, KmemCache& s, std::uint32_t n) {
  AccountScope fast(e, Account::SlabFast);
  Sheaf* sheaf = co_await fe_->prefill_sheaf(e, s, n);
  co_return sheaf;
}

void* Slub::alloc_from_sheaf(Exec& e, KmemCache& s, Sheaf* sheaf) {
  AccountScope fast(e, Account::SlabFast);
  void* obj = fe_->alloc_from_sheaf(e, s, sheaf);
  if (obj) memcg_charge(e, s, 1);
  if (obj && p_.validate) track_alloc(s, obj);
  return obj;
}

Co<Sheaf*> Slub::refill_sheaf(Exec& e, KmemCache& s, Sheaf* sheaf, std::uint32_t n) {
  AccountScope fast(e, Account::SlabFast);
  Sheaf* out = co_await fe_->refill_sheaf(e, s, sheaf, n);
  co_return out;
}

Co<void> Slub::return_sheaf(Exec& e, KmemCache& s, Sheaf* sheaf) {
  AccountScope fast(e, Account::SlabFast);
  co_await fe_->return_sheaf(e, s, sheaf);
}

// Default prefill API: a front-end without sheaves.
Co<Sheaf*> Frontend::prefill_sheaf(Exec&, KmemCache& s, std::uint32_t) {
  throw SlubError(s.name() + ": kmem_cache_prefill_sheaf on a cache without sheaves");
  co_return nullptr;
}
void* Frontend::alloc_from_sheaf(Exec&, KmemCache& s, Sheaf*) {
  throw SlubError(s.name() + ": kmem_cache_alloc_from_sheaf on a cache without sheaves");
}
Co<Sheaf*> Frontend::refill_sheaf(Exec&, KmemCache& s, Sheaf*, std::uint32_t) {
  throw SlubError(s.name() + ": kmem_cache_refill_sheaf on a cache without sheaves");
  co_return nullptr;
}
Co<void> Frontend::return_sheaf(Exec&, KmemCache& s, Sheaf*) {
  throw SlubError(s.name() + ": kmem_cache_return_sheaf on a cache without sheaves");
  co_return;
}

// --- substrate ----------------------------------------------------------------------------

Slab* Slub::virt_to_slab(const void* p) const {
  return arena_.find(p);
}

Slab* Slub::checked_slab(KmemCache& s, void* obj) const {
  Slab* slab = virt_to_slab(obj);
  if (!slab)
    throw SlubError(fmt::format("{}: free of {} which is not a slab object (foreign pointer)",
                                s.name(), obj));
  if (slab->cache != &s)
    throw SlubError(fmt::format("{}: object {} belongs to cache {}", s.name(), obj,
                                slab->cache->name()));
  const std::size_t off = slab->host_offset(obj);
  if (off % kHostObjectBytes != 0 || off / kHostObjectBytes >= slab->objects)
    throw SlubError(fmt::format("{}: {} is not the start of an object", s.name(), obj));
  return slab;
}

void Slub::track_alloc(KmemCache& s, void* obj) {
  checked_slab(s, obj);
  if (!in_use_.insert(obj).second)
    throw SlubError(fmt::format("{}: object {} handed out twice", s.name(), obj));
}

void Slub::track_free(KmemCache& s, void* obj, Slab*) {
  if (in_use_.erase(obj) == 0)
    throw SlubError(fmt::format("{}: double free of object {}", s.name(), obj));
}

LineId Slub::take_line(int node) {
  auto& pool = free_lines_[node];
  if (pool.empty()) return shared_.new_line("slab", node);
  LineId l = pool.back();
  pool.pop_back();
  return l;
}

std::vector<void*> Slub::object_order(Exec& e, KmemCache& s, Slab* slab) {
  const auto n = slab->objects;
  std::vector<void*> out;
  out.reserve(n);
  auto obj = [&](std::uint32_t i) -> void* { return slab->object(i); };
  if (p_.features.freelist_random && n > 1) {
    // shuffle_freelist: walk random_seq from a random start, skipping indices past this slab.
    std::uint32_t pos = static_cast<std::uint32_t>(rng_[e.cpu()].below(s.random_seq.size()));
    for (std::size_t k = 0; k < s.random_seq.size(); ++k) {
      std::uint32_t idx = s.random_seq[(pos + k) % s.random_seq.size()];
      if (idx < n) out.push_back(obj(idx));
    }
  } else {
    for (std::uint32_t i = 0; i < n; ++i) out.push_back(obj(i));
  }
  return out;
}

void Slub::link_freelist(Exec& e, KmemCache& s, Slab* slab, void* const* objs, std::size_t n) {
  for (std::size_t k = 0; k + 1 < n; ++k) set_freepointer(objs[k], objs[k + 1]);
  if (n) set_freepointer(objs[n - 1], nullptr);
  slab->freelist = n ? objs[0] : nullptr;
  slab->writer = e.cpu();
  // The slab is fresh from the page allocator: every line holding a free pointer is written for
  // the first time (one line per object from 64-byte objects up, shared below that), and misses
  // unless the pages came back warm from this CPU's pcp list.
  constexpr std::size_t kLine = 64;
  Time cold_lines = slab->warm ? 0 : static_cast<Time>((n * std::min<std::size_t>(s.geo.size, kLine) + kLine - 1) / kLine);
  e.spend(p_.costs.freelist_build_per_object * static_cast<Time>(n) + p_.costs.new_slab_cold_line * cold_lines);
}

void Slub::build_freelist(Exec& e, KmemCache& s, Slab* slab) {
  auto order = object_order(e, s, slab);
  link_freelist(e, s, slab, order.data(), order.size());
}

Co<Slab*> Slub::new_slab(Exec& e, KmemCache& s, int node, bool this_node, bool build) {
  Frame frame(e, "allocate_slab");
  int preferred = node == kNoNode ? e.mem_node() : node;
  int order = s.geo.order;
  bool warm = false;
  int got = co_await pages_->alloc_pages(e, order, preferred, this_node, &warm);
  int min_order = get_order(s.geo.size);
  if (got < 0 && order > min_order) {
    // allocate_slab: retry with the minimum order; ORDER_FALLBACK when that works.
    order = min_order;
    got = co_await pages_->alloc_pages(e, order, preferred, this_node, &warm);
    if (got >= 0) s.stat(Stat::ORDER_FALLBACK);
  }
  if (got < 0) co_return nullptr;

  auto* slab = new Slab;
  slab->cache = &s;
  slab->node = got;
  slab->order = order;
  slab->warm = warm;
  std::size_t bytes = kPageSize << order;
  slab->objects = static_cast<std::uint32_t>(bytes / s.geo.size);
  slab->host_order = SlabArena::order_for(slab->objects * kHostObjectBytes);
  slab->base = arena_.alloc(slab->host_order);
  slab->line = take_line(got);
  // No other CPU can find a fresh slab until it is listed, nor hold its objects (see
  // set_cpu_local_objects); sheaves and barns move objects between CPUs.
  if (cpu_local_objects_ && s.sheaf_capacity == 0) shared_.set_line_reach(slab->line, e.cpu());
  slab->id = next_slab_id_++;
  slab->slot = all_slabs_[s.index].size();
  all_slabs_[s.index].push_back(slab);
  arena_.set(slab->base, slab->host_order, slab);
  e.spend(p_.costs.new_slab);
  if (build) build_freelist(e, s, slab);
  // inc_slabs_node: two atomics on the node's line (CONFIG_SLUB_DEBUG).
  KmemCacheNode& n = s.node[got];
  co_await e.write(n.line);
  ++n.nr_slabs;
  n.total_objects += slab->objects;
  ++s.slabs_allocated;
  co_return slab;
}

Co<void> Slub::discard_slab(Exec& e, KmemCache& s, Slab* slab) {
  Frame frame(e, "discard_slab");
  KmemCacheNode& n = s.node[slab->node];
  co_await e.write(n.line);  // dec_slabs_node
  --n.nr_slabs;
  n.total_objects -= slab->objects;
  --s.slabs_allocated;
  e.spend(p_.costs.discard_slab);
  arena_.set(slab->base, slab->host_order, nullptr);
  auto& list = all_slabs_[s.index];
  list[slab->slot] = list.back();
  list[slab->slot]->slot = slab->slot;
  list.pop_back();
  shared_.set_line_reach(slab->line, -1);
  free_lines_[slab->node].push_back(slab->line);
  int node = slab->node, order = slab->order;
  arena_.free(slab->base, slab->host_order);
  delete slab;
  co_await pages_->free_pages(e, order, node);
}

Co<void> Slub::add_partial(Exec& e, KmemCacheNode& n, Slab* slab, bool tail) {
  Slab* neighbour = tail ? n.partial_tail : n.partial_head;
  shared_.set_line_reach(slab->line, -1);  // listed: any CPU on the node may take it now
  co_await e.store(n.line);  // nr_partial, list head
  co_await e.store(slab->line);
  if (neighbour) co_await e.store(neighbour->line);
  e.spend(p_.costs.list_op);
  slab->prev = slab->next_node = nullptr;
  if (!n.partial_head) {
    n.partial_head = n.partial_tail = slab;
  } else if (tail) {
    slab->prev = n.partial_tail;
    n.partial_tail->next_node = slab;
    n.partial_tail = slab;
  } else {
    slab->next_node = n.partial_head;
    n.partial_head->prev = slab;
    n.partial_head = slab;
  }
  ++n.nr_partial;
  slab->on_partial = true;
}

Co<void> Slub::remove_partial(Exec& e, KmemCacheNode& n, Slab* slab) {
  // list_del: a load of the slab's list node, then stores to it and its neighbours.
  if (e.stores_posted()) co_await e.read(slab->line);
  co_await e.store(n.line);
  co_await e.store(slab->line);
  if (slab->prev) co_await e.store(slab->prev->line);
  if (slab->next_node) co_await e.store(slab->next_node->line);
  e.spend(p_.costs.list_op);
  if (slab->prev) slab->prev->next_node = slab->next_node;
  else n.partial_head = slab->next_node;
  if (slab->next_node) slab->next_node->prev = slab->prev;
  else n.partial_tail = slab->prev;
  slab->prev = slab->next_node = nullptr;
  --n.nr_partial;
  slab->on_partial = false;
}

std::size_t Slub::build_detached_freelist(Exec& e, KmemCache&, std::vector<void*>& p,
                                         std::size_t size, DetachedFreelist& df) const {
  void* object = p[--size];
  df.slab = virt_to_slab(object);
  set_freepointer(object, nullptr);
  df.head = df.tail = object;
  df.cnt = 1;
  e.spend(p_.costs.freelist_build_per_object);
  int lookahead = 3;
  std::size_t same = size;
  while (size) {
    object = p[--size];
    if (virt_to_slab(object) == df.slab) {
      set_freepointer(object, df.head);
      df.head = object;
      ++df.cnt;
      if (size != --same) std::swap(p[size], p[same]);
      e.spend(p_.costs.freelist_build_per_object);
      continue;
    }
    if (!--lookahead) break;
  }
  return same;
}

std::uint32_t Slub::count_freelist(const KmemCache&, void* head) const {
  std::uint32_t n = 0;
  for (void* p = head; p; p = get_freepointer(p)) ++n;
  return n;
}

// --- validation ---------------------------------------------------------------------------

void Slub::check() const {
  for (const auto& sp : caches_) {
    const KmemCache& s = *sp;
    const auto& slabs = all_slabs_[s.index];
    std::unordered_map<const Slab*, std::vector<std::uint8_t>> seen;
    auto mark = [&](void* obj, const char* where) {
      Slab* slab = virt_to_slab(obj);
      if (!slab || slab->cache != &s)
        throw SlubError(fmt::format("{}: {} holds {} which is no object of this cache", s.name(), where, obj));
      const std::size_t off = slab->host_offset(obj);
      if (off % kHostObjectBytes || off / kHostObjectBytes >= slab->objects)
        throw SlubError(fmt::format("{}: {} holds a misaligned pointer {}", s.name(), where, obj));
      auto& bits = seen[slab];
      if (bits.empty()) bits.assign(slab->objects, 0);
      if (bits[off / kHostObjectBytes]++)
        throw SlubError(fmt::format("{}: object {} is in two places (second: {})", s.name(), obj, where));
    };
    std::vector<std::int64_t> nr_slabs_by_node(s.node.size(), 0);
    for (const Slab* slab : slabs) {
      std::uint32_t on_freelist = 0;
      for (void* p = slab->freelist; p; p = get_freepointer(p)) {
        if (!slab->contains(p))
          throw SlubError(fmt::format("{}: slab freelist points outside its slab", s.name()));
        mark(p, "a slab freelist");
        if (++on_freelist > slab->objects)
          throw SlubError(fmt::format("{}: slab freelist loops", s.name()));
      }
      if (slab->inuse != slab->objects - on_freelist)
        throw SlubError(fmt::format("{}: slab inuse {} but {} of {} objects are off its freelist",
                                    s.name(), slab->inuse, slab->objects - on_freelist, slab->objects));
      ++nr_slabs_by_node[slab->node];
    }
    {
      std::vector<void*> objs;
      fe_->cached_objects(s, objs);
      for (void* o : objs) mark(o, "a percpu cache, sheaf or barn");
    }
    for (const void* o : rcu_objects_) {
      Slab* slab = virt_to_slab(o);
      if (slab && slab->cache == &s) mark(const_cast<void*>(o), "an RCU callback");
    }
    for (const void* o : in_use_) {
      Slab* slab = virt_to_slab(o);
      if (slab && slab->cache == &s) mark(const_cast<void*>(o), "a user");
    }
    for (const Slab* slab : slabs) {
      auto it = seen.find(slab);
      std::size_t found = 0;
      if (it != seen.end())
        for (auto b : it->second) found += b;
      // Without validation tracking, objects held by users are unaccounted: check only with it.
      if (p_.validate && found != slab->objects)
        throw SlubError(fmt::format("{}: slab holds {} objects but {} were found (lost objects)",
                                    s.name(), slab->objects, found));
    }
    for (std::size_t n = 0; n < s.node.size(); ++n) {
      const auto& kn = s.node[n];
      std::uint32_t count = 0;
      for (const Slab* slab = kn.partial_head; slab; slab = slab->next_node) {
        if (!slab->on_partial || slab->frozen || slab->node != static_cast<int>(n))
          throw SlubError(fmt::format("{}: node {} partial list holds a slab in the wrong state", s.name(), n));
        ++count;
      }
      if (count != kn.nr_partial)
        throw SlubError(fmt::format("{}: node {} nr_partial {} but {} slabs listed", s.name(), n, kn.nr_partial, count));
      if (kn.nr_slabs != nr_slabs_by_node[n])
        throw SlubError(fmt::format("{}: node {} nr_slabs {} but {} slabs exist", s.name(), n, kn.nr_slabs, nr_slabs_by_node[n]));
    }
  }
}

LayerCounts Slub::layers(const KmemCache& s) const {
  LayerCounts l;
  std::int64_t objects = 0, on_slab_freelists = 0;
  for (const Slab* slab : all_slabs_[s.index]) {
    auto free_on_slab = static_cast<std::int64_t>(slab->objects - slab->inuse);
    objects += slab->objects;
    on_slab_freelists += free_on_slab;
    ++l.slabs;
    l.slab_bytes += static_cast<std::int64_t>(kPageSize << slab->order);
    // A slab off the node lists is a cpu slab, a cpu partial slab, or full (nothing free).
    (slab->on_partial ? l.node_partial : l.cpu_partial) += free_on_slab;
  }
  CachedCounts cc = fe_->count_cached(s);
  l.cpu_freelist = cc.cpu_freelist;
  l.sheaves = cc.sheaves;
  l.barn = cc.barn;
  l.prefilled = cc.prefilled;
  l.rcu = cc.rcu + s.rcu_objects;
  l.sheaf_structs = cc.sheaf_structs;
  l.sheaf_bytes = cc.sheaf_structs * static_cast<std::int64_t>(sheaf_struct_bytes(s.sheaf_capacity));
  l.in_use = objects - on_slab_freelists - l.cpu_freelist - l.sheaves - l.barn - l.rcu - l.prefilled;
  return l;
}

std::int64_t Slub::total_slab_bytes() const {
  std::int64_t b = 0;
  for (const auto& list : all_slabs_)
    for (const Slab* slab : list) b += static_cast<std::int64_t>(kPageSize << slab->order);
  return b;
}

}  // namespace slubsim::slub
