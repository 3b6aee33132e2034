// Acceptance (SLUB core): a cross-CPU free workload (allocate on one node, free on another) run
// under the engine shows remote lockless frees, cpu_partial_free and list_lock contention; eager
// (<= 6.7) and delayed (6.8+) freezing differ in list_lock use the way the reference describes.
#include <doctest/doctest.h>

#include "helpers.h"
#include "sim/run/job.h"
#include "sim/run/report.h"

using namespace slubsim;

namespace {

json run_cross_free(const std::string& kernel) {
  // lkp-icl-2sp8, where lkp measured delay freezing (T16)
  JobRequest r = test::job_request("intel-icl-2s-64t", "cross-free", kernel, "64", "2ms", "1ms");
  r.jobs = 1;
  r.validate = true;
  Job job = resolve_job(r);
  return stdout_stats(job, run_job(job, {}));
}

double get(const json& s, const std::string& key) { return s.contains(key) ? s[key].get<double>() : 0.0; }

}  // namespace

TEST_CASE("cross-free: remote frees are lockless, fill cpu partial lists and contend on list_lock") {
  json s = run_cross_free("v6.17");
  const std::string st = "slub_stats.kmalloc-256.", ls = "lock_stat.kmalloc-256.list_lock.";
  double frees = get(s, st + "free_slowpath");
  REQUIRE(frees > 10000);
  // Remote frees go through __slab_free; almost all without list_lock (frozen cpu slabs, and
  // full slabs that move to the freeing CPU's partial list).
  CHECK(get(s, st + "free_frozen") > 0);
  CHECK(get(s, st + "cpu_partial_free") > 0);
  CHECK(get(s, ls + "acquisitions") < frees / 10);
  CHECK(get(s, ls + "contentions") > 0);
  CHECK(get(s, ls + "waittime-total") > 0);
  CHECK(get(s, st + "cpu_partial_drain") > 0);
}

TEST_CASE("cross-free: eager freezing holds list_lock longer, delayed freezing takes it more often") {
  json eager = run_cross_free("v6.7");
  json delayed = run_cross_free("v6.17");
  const std::string ls = "lock_stat.kmalloc-256.list_lock.";
  // <= 6.7 does a cmpxchg per slab under list_lock in get_partial_node (acquire_slab) and in
  // __unfreeze_partials; 6.8 moved them out (slub-algorithms.md §2.4, §2.7), which is what cut
  // get_partial_node's spinlock share in lkp's rawudp report (T16: 6.37% -> 3.67%).
  CHECK(get(eager, ls + "holdtime-avg") > 1.3 * get(delayed, ls + "holdtime-avg"));
  // 6.8's __slab_free takes list_lock speculatively when an unfrozen cpu-partial slab becomes
  // empty (it cannot tell it from a node-partial slab without the lock); <= 6.7's cpu-partial
  // slabs are frozen, so those frees are FREE_FROZEN and lock-free.
  CHECK(get(delayed, ls + "acquisitions") > get(eager, ls + "acquisitions"));
  CHECK(get(eager, "slub_stats.kmalloc-256.free_frozen") > get(delayed, "slub_stats.kmalloc-256.free_frozen"));
}
