// Acceptance (workloads): will-it-scale mmap1, mmap2 and brk1 as lkp runs them.
#include <doctest/doctest.h>

#include <cmath>
#include <fmt/format.h>
#include <map>

#include "helpers.h"
#include "sim/run/job.h"
#include "sim/run/report.h"

using namespace slubsim;

namespace {

JobRequest wis(const std::string& workload, const std::string& kernel, const std::string& mode,
               const std::string& topology, const std::string& nr_task) {
  JobRequest r = test::job_request(topology, workload, kernel, nr_task, "2ms", "1ms");
  r.mode = mode;
  r.jobs = 2;
  return r;
}

double get(const json& s, const std::string& key) { return s.contains(key) ? s[key].get<double>() : 0.0; }

}  // namespace

TEST_CASE("will-it-scale: mmap2 on the 192-CPU box writes lkp JSON with lkp's arithmetic") {
  auto r = wis("mmap2", "v6.17", "process", "amd-epyc-2s-192c-4n", "64,128,192");
  r.runs = 2;
  Job job = resolve_job(r);
  JobResult res = run_job(job, {});
  std::vector<json> runs;
  for (const auto& rows : res.runs[0]) runs.push_back(lkp_run_stats(rows, Mode::Process));
  json matrix = lkp_matrix(runs);
  for (std::size_t k = 0; k < runs.size(); ++k) {
    double mean = 0, sum = 0;
    for (int n : {64, 128, 192}) {
      double ops = matrix[fmt::format("will-it-scale.{}.processes", n)][k].get<double>();
      CHECK(ops > 0);
      mean += ops / n;
      sum += ops;
    }
    CHECK(matrix["will-it-scale.per_process_ops"][k].get<double>() == std::floor(mean / 3));
    CHECK(matrix["will-it-scale.workload"][k].get<double>() == sum);
  }
  CHECK_FALSE(matrix.contains("will-it-scale.per_thread_ops"));
  json stats = lkp_stats(matrix);
  CHECK(get(stats, "will-it-scale.workload") ==
        doctest::Approx((matrix["will-it-scale.workload"][0].get<double>() +
                         matrix["will-it-scale.workload"][1].get<double>()) / 2));
}

TEST_CASE("will-it-scale: slab traffic per operation matches the reference for every kernel") {
  // workloads-and-lkp.md §2.3 (6.15-7.0, node-store regime) and its version deltas (6.4-6.14:
  // a vma_lock per VMA and the VMA freed through call_rcu).
  struct Expect {
    double vma_alloc, vma_free, vma_rcu, lock_alloc, lock_rcu, node_alloc, node_rcu;
  };
  const std::map<std::string, Expect> modern = {
      {"mmap1", {1, 1, 0, 0, 0, 2, 2}}, {"mmap2", {1, 1, 0, 0, 0, 2, 2}}, {"brk1", {0.5, 0.5, 0, 0, 0, 1, 1}}};
  const std::map<std::string, Expect> v67 = {
      {"mmap1", {1, 0, 1, 1, 1, 2, 2}}, {"mmap2", {1, 0, 1, 1, 1, 2, 2}}, {"brk1", {0.5, 0, 0.5, 0.5, 0.5, 1, 1}}};
  for (const std::string kernel : {"v6.7", "v6.17", "v6.18", "v6.19", "v7.0"}) {
    for (const std::string w : {"mmap1", "mmap2", "brk1"}) {
      auto r = wis(w, kernel, "process", "small-2s-8c", "8");
      r.validate = true;
      Job job = resolve_job(r);
      json s = stdout_stats(job, run_job(job, {}));
      const Expect& x = (kernel == "v6.7" ? v67 : modern).at(w);
      CAPTURE(kernel);
      CAPTURE(w);
      const double eps = 0.02;
      CHECK(get(s, "workload_ops.vm_area_struct.alloc") == doctest::Approx(x.vma_alloc).epsilon(eps));
      CHECK(get(s, "workload_ops.vm_area_struct.free") == doctest::Approx(x.vma_free).epsilon(eps));
      CHECK(get(s, "workload_ops.vm_area_struct.kfree_rcu") == doctest::Approx(x.vma_rcu).epsilon(eps));
      CHECK(get(s, "workload_ops.vma_lock.alloc") == doctest::Approx(x.lock_alloc).epsilon(eps));
      CHECK(get(s, "workload_ops.vma_lock.kfree_rcu") == doctest::Approx(x.lock_rcu).epsilon(eps));
      CHECK(get(s, "workload_ops.maple_node.alloc") == doctest::Approx(x.node_alloc).epsilon(eps));
      CHECK(get(s, "workload_ops.maple_node.kfree_rcu") == doctest::Approx(x.node_rcu).epsilon(eps));
      // The replaced maple nodes go through the rcu_free sheaves from 6.18 on.
      if (kernel == "v6.18" || kernel == "v6.19" || kernel == "v7.0")
        CHECK(get(s, "slub_stats.maple_node.free_rcu_sheaf") > 0);
      else
        CHECK(get(s, "slub_stats.maple_node.free_rcu_sheaf") == 0);
    }
  }
}

TEST_CASE("will-it-scale: thread mode is dominated by mmap_lock, far below process mode") {
  for (const std::string w : {"mmap1", "brk1"}) {
    json proc = stdout_stats(resolve_job(wis(w, "v6.17", "process", "intel-icl-2s-64t", "64")),
                             run_job(resolve_job(wis(w, "v6.17", "process", "intel-icl-2s-64t", "64")), {}));
    Job tj = resolve_job(wis(w, "v6.17", "thread", "intel-icl-2s-64t", "64"));
    json thr = stdout_stats(tj, run_job(tj, {}));
    CAPTURE(w);
    CHECK(get(thr, "will-it-scale.per_thread_ops") < get(proc, "will-it-scale.per_process_ops") / 10);
    // mmap_lock has the largest total wait of every lock class.
    double mmap_wait = get(thr, "lock_stat.mmap_lock.waittime-total");
    CHECK(mmap_wait > 0);
    for (auto it = thr.begin(); it != thr.end(); ++it) {
      const std::string& k = it.key();
      if (k.rfind("lock_stat.", 0) == 0 && k.size() > 15 && k.substr(k.size() - 15) == ".waittime-total")
        CHECK_MESSAGE(it.value().get<double>() <= mmap_wait, k);
    }
  }
}
