#include "sim/run/slub_config.h"

#include <algorithm>
#include <fmt/format.h>

namespace slubsim {

namespace {

// A number, or a sourced figure.
double figure(const JsonView& v) { return v.raw().is_object() ? v.sourced_value() : v.number(); }
bool flag(const JsonView& v) {
  return v.raw().is_object() ? v.sourced_value_any().boolean() : v.boolean();
}
std::optional<std::uint32_t> knob(const JsonView& c, const char* name, std::int64_t lo, std::int64_t hi) {
  auto v = c.find(name);
  if (!v || v->raw().is_null()) return std::nullopt;
  return static_cast<std::uint32_t>(v->integer_in(lo, hi));
}

}  // namespace

std::vector<slub::CacheSpec> parse_caches(const json& doc, const std::string& file) {
  JsonView root(doc, file);
  if (!doc.is_object()) root.fail("a cache list is a JSON object");
  if (auto name = root.find("name")) name->str();
  root.at("source").str();
  auto caches = root.at("caches");
  std::vector<slub::CacheSpec> out;
  for (const auto& name : caches.keys()) {
    auto c = caches.at(name);
    slub::CacheSpec s;
    s.name = name;
    auto size = c.at("object_size");
    double sz = figure(size);
    // kmalloc caches stop at KMALLOC_MAX_CACHE_SIZE (two pages; larger kmallocs go to the page
    // allocator); a named cache may be as large as a slab of MAX_PAGE_ORDER holds (kvm_vcpu and,
    // on some configs, task_struct are over 8 KiB; calculate_order then takes get_order(size)).
    const bool kmalloc = name.rfind("kmalloc-", 0) == 0;
    const double most = kmalloc ? 2.0 * slub::kPageSize : static_cast<double>(slub::kPageSize << slub::kMaxPageOrder);
    if (sz < 8 || sz > most || sz != static_cast<double>(static_cast<std::uint32_t>(sz)))
      size.fail(kmalloc ? fmt::format("must be a whole number of bytes from 8 to {} (larger kmallocs bypass slab)", most)
                        : fmt::format("must be a whole number of bytes from 8 to {} (a slab of order {})", most,
                                      slub::kMaxPageOrder));
    s.object_size = static_cast<std::uint32_t>(sz);
    auto align = c.at("align");
    s.align = static_cast<std::uint32_t>(align.integer_in(0, 4096));
    if (s.align & (s.align - 1)) align.fail("must be 0 or a power of two");
    s.hwcache_align = flag(c.at("hwcache_align"));
    s.typesafe_by_rcu = flag(c.at("typesafe_by_rcu"));
    s.freeptr_outside = flag(c.at("freeptr_outside"));
    if (auto a = c.find("accounted")) s.accounted = flag(*a);
    s.cpu_partial = knob(c, "cpu_partial", 0, 100000);
    s.min_partial = knob(c, "min_partial", 0, 100000);
    if (auto o = knob(c, "order", 0, slub::kMaxPageOrder)) s.order = static_cast<int>(*o);
    if (s.order && (std::size_t{4096} << *s.order) < s.object_size)
      c.at("order").fail("the slab would hold no object");
    out.push_back(s);
  }
  if (out.empty()) caches.fail("needs at least one cache");
  root.check_known_fields();
  return out;
}

SlubCostConfig parse_slub_costs(const json& doc, const std::string& file, std::shared_ptr<ReadLog> log) {
  JsonView root(doc, file, log);
  SlubCostConfig c;
  auto s = root.at("slub");
  c.costs.alloc_fastpath = s.at("alloc_fastpath_ns").time_ns();
  c.costs.free_fastpath = s.at("free_fastpath_ns").time_ns();
  c.costs.slowpath_entry = s.at("slowpath_entry_ns").time_ns();
  c.costs.free_slowpath_entry = s.at("free_slowpath_entry_ns").time_ns();
  c.costs.freelist_walk_per_object = s.at("freelist_walk_per_object_ns").time_ns();
  c.costs.freelist_build_per_object = s.at("freelist_build_per_object_ns").time_ns();
  c.costs.new_slab_cold_line = s.at("new_slab_cold_line_ns").time_ns();
  c.costs.list_op = s.at("list_op_ns").time_ns();
  c.costs.new_slab = s.at("new_slab_ns").time_ns();
  c.costs.discard_slab = s.at("discard_slab_ns").time_ns();
  c.costs.sheaf_alloc = s.at("sheaf_alloc_ns").time_ns();
  c.costs.sheaf_free = s.at("sheaf_free_ns").time_ns();
  c.costs.sheaf_array_store_per_object = s.at("sheaf_array_store_per_object_ns").time_ns();
  c.costs.sheaf_struct_alloc = s.at("sheaf_struct_alloc_ns").time_ns();
  c.costs.barn_op = s.at("barn_op_ns").time_ns();
  c.costs.aged_store_overlap = static_cast<int>(s.at("aged_store_overlap").sourced_value_any().integer_in(1, 64));
  c.freelist_lines_from_writer = s.at("freelist_lines").two_way("local", "writer");
  c.gfp_nowait_refills = s.at("gfp_nowait").two_way("stops", "refills");
  auto rcu = root.at("rcu");
  c.rcu_grace_period = from_ns(figure(rcu.at("grace_period_us")) * 1000.0);
  if (c.rcu_grace_period <= 0) rcu.at("grace_period_us").fail("must be positive");
  c.rcu_grace_period_from_ticks = rcu.at("grace_period_model").two_way("fixed", "ticks");
  c.aged_lines_in_llc = rcu.at("aged_lines").two_way("memory", "llc");
  c.callback_slab_line_cached = rcu.at("callback_slab_line").two_way("every", "cached");
  c.callback_lines_together = rcu.at("callback_line_fetch").two_way("serial", "together");
  c.costs.call_rcu = rcu.at("call_rcu_ns").time_ns();
  c.costs.rcu_callback = rcu.at("callback_ns").time_ns();
  c.costs.rcu_callback_cold_lines =
      static_cast<int>(rcu.at("callback_cold_lines").sourced_value_any().integer_in(0, 16));
  auto count = [&](const char* key, std::int64_t lo, std::int64_t hi) {
    return static_cast<std::size_t>(rcu.at(key).sourced_value_any().integer_in(lo, hi));
  };
  c.rcu_batch.blimit = count("batch_limit", 0, 1000000);
  c.rcu_batch.divisor = static_cast<int>(count("batch_divisor", 0, 62));
  c.rcu_batch.qhimark = count("flood_mark", 1, 100000000);
  c.rcu_batch.qlowmark = count("flood_end_mark", 0, 100000000);
  c.rcu_batch.flood_blimit = count("flood_batch_limit", 1, 100000000);
  c.rcu_batch.time_limit_above = count("batch_time_limit_above", 0, 100000000);
  {
    double us = figure(rcu.at("batch_time_limit_us"));
    if (us < 0) rcu.at("batch_time_limit_us").fail("must not be negative");
    c.rcu_batch.time_limit = from_ns(us * 1000.0);
  }
  if (c.rcu_batch.qlowmark >= c.rcu_batch.qhimark) rcu.at("flood_end_mark").fail("must be below flood_mark");
  auto micros = [&](const char* key) {
    double us = figure(rcu.at(key));
    if (us < 0) rcu.at(key).fail("must not be negative");
    return from_ns(us * 1000.0);
  };
  c.softirq.tick = micros("tick_us");
  c.rcu_fqs_jiffies = static_cast<int>(count("fqs_jiffies", 1, 1000));
  c.rcu_fqs_cpus_per_jiffy = static_cast<int>(count("fqs_cpus_per_jiffy", 1, 1000000));
  {
    const double share = figure(rcu.at("tick_user_share"));
    if (share < 0.0 || share > 1.0) rcu.at("tick_user_share").fail("must be a share between 0 and 1");
    if (rcu.at("quiescent_states").two_way("preemptible", "user")) c.rcu_tick_user_share = share;
  }
  c.rcu_sched_qs = micros("sched_qs_ms") * 1000;
  c.rcu_overload_mark = count("overload_mark", 0, 100000000);
  c.softirq.restarts = static_cast<int>(count("softirq_restarts", 1, 1000000));
  {
    const int ticks = static_cast<int>(count("report_ticks", 1, 1000));
    auto acc = rcu.at("acceleration");
    if (acc.two_way("queue", "report")) {
      if (c.softirq.tick <= 0) acc.at("value").fail("\"report\" needs ticks: tick_us must not be 0");
      c.rcu_report_ticks = ticks;
    }
  }
  c.softirq.max_time = micros("softirq_time_us");
  if (c.softirq.tick > 0 && c.softirq.max_time <= 0) rcu.at("softirq_time_us").fail("must be positive when tick_us is not 0");
  auto trace = root.at("trace").at("handoff_poll_ns");
  c.trace_handoff_poll = trace.time_ns();
  if (c.trace_handoff_poll <= 0) trace.fail("must be positive");
  auto memcg = root.at("memcg");
  c.costs.memcg_charge = memcg.at("charge_ns").time_ns();
  c.costs.memcg_uncharge = memcg.at("uncharge_ns").time_ns();
  auto p = root.at("page_alloc");
  c.costs.pcp_alloc = p.at("pcp_alloc_ns").time_ns();
  c.costs.pcp_free = p.at("pcp_free_ns").time_ns();
  c.costs.zone_lock_per_block = p.at("zone_lock_per_block_ns").time_ns();
  auto batch = p.at("pcp_batch_pages");
  c.page_alloc.pcp_batch = static_cast<int>(figure(batch));
  if (c.page_alloc.pcp_batch < 1) batch.fail("must be at least 1");
  auto high = p.at("pcp_high_pages");
  c.page_alloc.pcp_high = static_cast<int>(figure(high));
  if (c.page_alloc.pcp_high < c.page_alloc.pcp_batch) high.fail("must be at least pcp_batch_pages");
  auto warm = p.at("pcp_warm_pages");
  const double warm_pages = figure(warm);
  if (warm_pages < 0 || warm_pages > 1e6 || warm_pages != static_cast<double>(static_cast<int>(warm_pages)))
    warm.fail("must be a whole number of pages from 0 to 1000000");
  c.page_alloc.pcp_warm_pages = static_cast<int>(warm_pages);
  return c;
}

slub::Numa numa_of(const Machine& m) {
  slub::Numa n;
  n.nr_cpus = m.nr_cpus;
  n.nr_nodes = m.nr_nodes;
  n.cpu_node = m.cpu_node;
  for (auto b : m.node_memory_bytes) n.node_pages.push_back(b >> slub::kPageShift);
  n.fallback = m.zonelists();
  n.cpu_llc = m.cpu_llc;
  n.nr_llcs = m.nr_llcs;
  n.llc_bytes = m.llc_bytes;
  n.llc_hit = m.llc_hit;
  // A CPU of node a loading memory of node b: local when b's memory is on a's socket (a node
  // interleaved over sockets, NPS0, counts as local: half its lines are).
  n.memory_latency.assign(m.nr_nodes, std::vector<Time>(m.nr_nodes, 0));
  for (int a = 0; a < m.nr_nodes; ++a) {
    int cpu = -1;
    for (int c = 0; c < m.nr_cpus && cpu < 0; ++c)
      if (m.cpu_node[c] == a) cpu = c;
    if (cpu < 0) continue;  // a memory-only node runs no task
    for (int b = 0; b < m.nr_nodes; ++b) {
      const auto& socks = m.node_sockets[b];
      bool local = socks.empty() ||
                   std::find(socks.begin(), socks.end(), m.cpu_socket[cpu]) != socks.end();
      n.memory_latency[a][b] = m.from_memory(cpu, local ? m.cpu_socket[cpu] : socks.front());
    }
  }
  return n;
}

std::vector<std::pair<std::string, int>> SheafKnobs::all() const {
  auto out = sheaf_capacity;
  out.insert(out.end(), max_full_sheaves.begin(), max_full_sheaves.end());
  out.insert(out.end(), max_empty_sheaves.begin(), max_empty_sheaves.end());
  return out;
}

slub::Params slub_params(const Machine& m, const Kernel& k, const std::vector<slub::CacheSpec>& caches,
                         const SlubCostConfig& costs, bool validate, std::uint64_t seed,
                         const SheafKnobs& knobs) {
  slub::Params p;
  p.caches = caches;
  // Sheaf capacities: the kernel's explicit ones, then the command line's. A plain value
  // applies to every cache that has sheaves in this kernel (6.18/6.19: those with an explicit
  // capacity; 7.0: every cache, as a minimum).
  for (auto& c : p.caches) {
    c.sheaf_capacity = 0;
    for (const auto& [name, cap] : k.sheaf_capacity)
      if (name == c.name) c.sheaf_capacity = cap;
  }
  auto applies = [&k](const std::string& name, const slub::CacheSpec& c) {
    return name == c.name || (name.empty() && (c.sheaf_capacity > 0 || k.frontend == FrontendKind::Sheaves));
  };
  for (const auto& [name, cap] : knobs.sheaf_capacity)
    for (auto& c : p.caches)
      if (applies(name, c)) c.sheaf_capacity = static_cast<std::uint32_t>(cap);
  // The barn limits (after the capacities, which decide which caches have sheaves).
  for (const auto& [name, n] : knobs.max_full_sheaves)
    for (auto& c : p.caches)
      if (applies(name, c)) c.barn_max_full = static_cast<std::uint32_t>(n);
  for (const auto& [name, n] : knobs.max_empty_sheaves)
    for (auto& c : p.caches)
      if (applies(name, c)) c.barn_max_empty = static_cast<std::uint32_t>(n);
  p.features.barn_max_full = k.barn_max_full;
  p.features.barn_max_empty = k.barn_max_empty;
  p.features.pcs_batch_max = k.pcs_batch_max;
  p.features.slub_max_order = k.slub_max_order;
  p.features.slub_min_objects = k.slub_min_objects;
  p.features.spare_sheaf = k.has("spare-sheaf");
  p.features.remote_refill_trylock = k.has("remote-refill-trylock");
  p.features.skip_freelist = k.has("skip-freelist");
  p.features.refill_any_node = k.has("refill-any-node");
  p.features.refill_from_partial = k.has("refill-from-partial");
  // The cost model's "refills" treats every allocation as blocking: the patch's behaviour.
  p.features.nowait_refill = k.has("nowait-refill") || costs.gfp_nowait_refills;
  p.rcu_grace_period = costs.rcu_grace_period;
  p.rcu_grace_period_from_ticks = costs.rcu_grace_period_from_ticks;
  // jiffies_till_first_fqs as rcu_init_geometry sets it, for this machine's nr_cpu_ids.
  p.rcu_first_fqs = costs.softirq.tick * (costs.rcu_fqs_jiffies + m.nr_cpus / costs.rcu_fqs_cpus_per_jiffy);
  // jiffies_to_sched_qs as adjust_jiffies_till_sched_qs sets it: the first scan plus two more
  // (jiffies_till_next_fqs is the same), at least HZ/10 jiffies plus one per 256 CPUs.
  if (costs.softirq.tick > 0)
    p.rcu_forcing.sched_qs = std::max(3 * p.rcu_first_fqs,
                                      costs.rcu_sched_qs + costs.softirq.tick * (m.nr_cpus / costs.rcu_fqs_cpus_per_jiffy));
  p.rcu_forcing.overload_mark = costs.rcu_overload_mark;
  p.rcu_tick_user_share = costs.rcu_tick_user_share;
  p.rcu_report_ticks = costs.rcu_report_ticks;
  p.aged_lines_in_llc = costs.aged_lines_in_llc;
  p.callback_slab_line_cached = costs.callback_slab_line_cached;
  p.callback_lines_together = costs.callback_lines_together;
  p.freelist_lines_from_writer = costs.freelist_lines_from_writer;
  p.rcu_batch = costs.rcu_batch;
  p.softirq = costs.softirq;
  p.softirq.slice = from_ns(k.sched_slice_us * 1000.0);
  p.softirq.wakeup_preempts = k.wakeup_preempts;
  p.softirq.place_lag = k.place_lag;
  p.softirq.delay_dequeue = k.delay_dequeue;
  p.features.frontend = k.frontend;
  p.features.freelist_random = k.freelist_random;
  p.features.cpu_partial = k.cpu_partial;
  p.features.cpu_partial_objects = k.cpu_partial_objects;
  if (k.cpu_partial_targets) p.features.cpu_partial_targets = *k.cpu_partial_targets;
  p.costs = costs.costs;
  p.page_alloc = costs.page_alloc;
  p.numa = numa_of(m);
  // Lines a grace period old always in memory unless costs.rcu.aged_lines says "llc"; how many
  // of a flush's stores to them are in flight is costs.slub.aged_store_overlap either way.
  if (!p.aged_lines_in_llc) p.numa.llc_bytes = 0;
  p.validate = validate;
  p.seed = seed;
  return p;
}

}  // namespace slubsim
