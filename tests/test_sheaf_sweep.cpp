// Acceptance (sheaves): a capacity sweep from the command line gives one result per capacity,
// and barn-lock contention falls as capacity grows on a contended workload; kfree_rcu traffic
// shows the objects and memory waiting for a grace period.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "helpers.h"
#include "sim/run/job.h"
#include "sim/run/report.h"

using namespace slubsim;

namespace {
double get(const json& s, const std::string& key) { return s.contains(key) ? s[key].get<double>() : 0.0; }

// The kfree-rcu workload on 8 CPUs, 2 ms grace periods: lkp-style stats of a 4 ms window.
json kfree_rcu_stats(const std::string& kernel, bool validate) {
  JobRequest r;
  r.home = test::source_dir();
  r.topology = "small-2s-8c";
  r.workload = "kfree-rcu";
  r.kernel = kernel;
  r.nr_task = "8";
  r.duration = "4ms";
  r.warmup = "1ms";
  r.jobs = 1;
  r.validate = validate;
  r.sets = {"costs.rcu.grace_period_us=2000"};
  Job job = resolve_job(r);
  return stdout_stats(job, run_job(job, {}));
}
}  // namespace

TEST_CASE("sheaf sweep: one result per capacity, barn-lock contention falls as capacity grows") {
  JobRequest r = test::job_request("amd-epyc-2s-192c-4n", "sheaf-burst", "v7.0", "192", "1ms", "500us");
  r.sheaf_capacity = "maple_node=32,64,128,256";
  r.jobs = 2;
  Job job = resolve_job(r);
  json all = stdout_stats(job, run_job(job, {}));
  const std::vector<std::string> labels = {"v7.0_sheaf_capacity=maple_node=32", "v7.0_sheaf_capacity=maple_node=64",
                                           "v7.0_sheaf_capacity=maple_node=128", "v7.0_sheaf_capacity=maple_node=256"};
  REQUIRE(all.size() == labels.size());
  std::vector<double> contention, ops;
  for (const auto& l : labels) {
    REQUIRE(all.contains(l));
    contention.push_back(get(all[l], "lock_stat.maple_node.barn_lock.contentions"));
    ops.push_back(get(all[l], "will-it-scale.192.processes"));
  }
  // Contended acquisitions of the barn lock per operation: a burst of 160 needs 3 barn exchanges
  // each way at capacity 32 (5 sheaves, 2 held per CPU), 1 at 64, none from 128 up.
  std::vector<double> per_op;
  for (std::size_t i = 0; i < labels.size(); ++i) per_op.push_back(contention[i] / ops[i]);
  CHECK(contention[0] > 1000);  // contended at the kernel's capacity
  CHECK(per_op[1] < 0.6 * per_op[0]);
  CHECK(per_op[2] <= per_op[1]);
  CHECK(per_op[3] <= per_op[2]);
  CHECK(contention[2] == 0);
  CHECK(ops[1] > ops[0]);
}

TEST_CASE("--sysfs: the barn limits of the runtime-tuning RFC, per cache, one variant per setting") {
  // sheaf-burst on 8 CPUs fills maple_node's barns: at the kernel's limit of 10 full sheaves a
  // few puts fail; with max_full_sheaves=0 every full sheaf is flushed to slabs instead (no put
  // succeeds, no barn_lock is taken for it); with 64 none fails.
  JobRequest r = test::job_request("small-2s-8c", "sheaf-burst", "v7.0", "8", "4ms", "2ms");
  r.sysfs = "*/max_full_sheaves=10;maple_node/max_full_sheaves=0;*/max_full_sheaves=64";
  r.jobs = 2;
  Job job = resolve_job(r);
  json all = stdout_stats(job, run_job(job, {}));
  const std::string ten = "v7.0_all.max_full_sheaves=10", zero = "v7.0_maple_node.max_full_sheaves=0",
                    many = "v7.0_all.max_full_sheaves=64";
  REQUIRE(all.size() == 3);
  REQUIRE(all.contains(ten));
  REQUIRE(all.contains(zero));
  REQUIRE(all.contains(many));
  const std::string st = "slub_stats.maple_node.";
  CHECK(get(all[ten], st + "barn_put") > 1000);
  CHECK(get(all[ten], st + "barn_put_fail") > 0);
  CHECK(get(all[zero], st + "barn_put") == 0);
  CHECK(get(all[zero], st + "barn_put_fail") > get(all[ten], st + "barn_put"));
  CHECK(get(all[many], st + "barn_put_fail") == 0);
  // The full sheaves kept rather than flushed serve later gets: none finds the barn without one.
  CHECK(get(all[ten], st + "barn_get_fail") > 0);
  CHECK(get(all[many], st + "barn_get_fail") == 0);
  // The kernel's default is 10: the explicit write changes nothing.
  r.sysfs.clear();
  Job plain = resolve_job(r);
  json def = stdout_stats(plain, run_job(plain, {}));
  CHECK(def.dump() == all[ten].dump());
  // A cache the caches file does not have is refused, naming the option.
  r.sysfs = "no_such_cache/max_full_sheaves=1";
  CHECK_THROWS_WITH_AS(resolve_job(r), doctest::Contains("no_such_cache"), ConfigError);
  r.sheaf_capacity = "64";
  r.sysfs = "*/max_full_sheaves=1";
  CHECK_THROWS_WITH_AS(resolve_job(r), doctest::Contains("not both"), ConfigError);
}

TEST_CASE("barn high-water: a limit above the most sheaves a barn held at a check runs the same simulation") {
  // What slubsim advise leaves out rests on this: limits are only compared at those checks, so
  // under a limit L that held (the high-water mark H < L) any limit above H makes the same run.
  JobRequest r = test::job_request("small-2s-8c", "mmap1", "v7.0", "8", "4ms", "2ms");
  r.duration.clear();  // the settle rule's window: long enough for maple_node's barn to fill
  r.warmup.clear();
  r.jobs = 2;
  r.sysfs = "maple_node/max_full_sheaves=512";
  Job roomy = resolve_job(r);
  const JobResult first = run_job(roomy, {});
  int high = -2;
  for (const auto& c : first.runs[0][0][0].caches)
    if (c.name == "maple_node") high = c.barn_full_seen;
  REQUIRE(high >= 1);
  REQUIRE(high < 511);
  r.sysfs = fmt::format(";vm_area_struct/max_full_sheaves=1;maple_node/max_full_sheaves=512;"
                        "maple_node/max_full_sheaves={};maple_node/max_full_sheaves={}",
                        high + 1, high);
  Job job = resolve_job(r);
  const JobResult res = run_job(job, {});
  json all = stdout_stats(job, res);
  // Under the defaults vm_area_struct's barn limits are never checked: any value runs the same.
  for (const auto& c : res.runs[0][0][0].caches)
    if (c.name == "vm_area_struct") CHECK(c.barn_full_seen == -1);
  CHECK(all["v7.0_vm_area_struct.max_full_sheaves=1"].dump() == all["v7.0"].dump());
  const std::string at = fmt::format("v7.0_maple_node.max_full_sheaves={}", high);
  const std::string above = fmt::format("v7.0_maple_node.max_full_sheaves={}", high + 1);
  CHECK(all[above].dump() == all["v7.0_maple_node.max_full_sheaves=512"].dump());
  CHECK(all[at].dump() != all["v7.0_maple_node.max_full_sheaves=512"].dump());
}

TEST_CASE("sheaf sweep: kfree_rcu traffic shows objects and memory waiting for a grace period") {
  for (const std::string kernel : {"v6.17", "v6.19", "v7.0"}) {
    json s = kfree_rcu_stats(kernel, true);
    CAPTURE(kernel);
    // About 2 objects per iteration wait a 2 ms grace period on each of 8 CPUs.
    CHECK(get(s, "slab_objects.maple_node.rcu") > 1000);
    CHECK(get(s, "slab_objects.maple_node.rcu_kB") == doctest::Approx(get(s, "slab_objects.maple_node.rcu") * 256 / 1024.0).epsilon(0.01));
    // /proc/slabinfo's convention: objects waiting for a grace period are active; only free
    // objects on node partial slabs are not (get_slabinfo, count_partial).
    CHECK(get(s, "slabinfo.maple_node.active_objs") >= get(s, "slab_objects.maple_node.rcu"));
    CHECK(get(s, "slabinfo.maple_node.active_objs") ==
          doctest::Approx(get(s, "slabinfo.maple_node.num_objs") - get(s, "slab_objects.maple_node.node_partial_free")));
    CHECK(get(s, "slab_objects.maple_node.in_use") < get(s, "slabinfo.maple_node.active_objs"));
    if (kernel != "v6.17") CHECK(get(s, "slub_stats.maple_node.free_rcu_sheaf") > 0);
    else CHECK(get(s, "slub_stats.maple_node.free_rcu_sheaf") == 0);
  }
}

TEST_CASE("proc-vmstat: pgalloc_normal and pgfree count the slab pages of the window") {
  for (const std::string kernel : {"v6.17", "v7.0"}) {
    json s = kfree_rcu_stats(kernel, false);
    CAPTURE(kernel);
    // Objects waiting for a grace period keep new slabs coming and old ones going: the window
    // sees pages both ways, in whole slabs (maple_node slabs are order >= 1 here).
    double pgalloc = get(s, "proc-vmstat.pgalloc_normal"), pgfree = get(s, "proc-vmstat.pgfree");
    CHECK(pgalloc > 0);
    CHECK(pgfree > 0);
    CHECK(pgalloc >= get(s, "slub_stats.maple_node.alloc_slab"));
  }
}
