// lkp-tests arithmetic (workloads-and-lkp.md §3.2-3.3).
#include <doctest/doctest.h>

#include "sim/run/report.h"

using namespace slubsim;

namespace {
RunResult row(int n, std::uint64_t ops, double idle) {
  RunResult r;
  r.nr_task = n;
  r.ops_per_sec = ops;
  r.idle_pct = idle;
  return r;
}
}  // namespace

TEST_CASE("lkp: per_process_ops and workload follow parse's arithmetic (Hao Li's example)") {
  // 15645502/64, 28445014/128, 39899678/192 -> mean 224832.82 -> %d -> 224832.
  std::vector<RunResult> rows = {row(64, 15645502, 0.5), row(128, 28445014, 0.3),
                                 row(192, 39899678, 0.0)};
  json s = lkp_run_stats(rows, Mode::Process);
  CHECK(s["will-it-scale.64.processes"] == 15645502);
  CHECK(s["will-it-scale.per_process_ops"] == 224832);
  CHECK(s["will-it-scale.workload"] == 83990194);
  CHECK_FALSE(s.contains("will-it-scale.per_thread_ops"));
  // The fully busy row's idle of 0.00 is dropped, as lkp drops zero keys.
  json m = lkp_matrix({s});
  CHECK(m.contains("will-it-scale.64.processes_idle"));
  CHECK_FALSE(m.contains("will-it-scale.192.processes_idle"));
}

TEST_CASE("lkp: the fixture row 104 tasks, 1200363 ops gives per_process_ops 11541") {
  json s = lkp_run_stats({row(104, 1200363, 0.04)}, Mode::Process);
  CHECK(s["will-it-scale.per_process_ops"] == 11541);
  CHECK(s["will-it-scale.workload"] == 1200363);
}

TEST_CASE("lkp: thread mode uses the threads keys") {
  json s = lkp_run_stats({row(8, 800, 12.5)}, Mode::Thread);
  CHECK(s["will-it-scale.8.threads"] == 800);
  CHECK(s["will-it-scale.8.threads_idle"] == 12.5);
  CHECK(s["will-it-scale.per_thread_ops"] == 100);
  CHECK_FALSE(s.contains("will-it-scale.8.processes"));
}

TEST_CASE("lkp: matrix has an element per run, stats the mean; keys zero in every run vanish") {
  json a = lkp_run_stats({row(2, 100, 0.0)}, Mode::Process);
  json b = lkp_run_stats({row(2, 300, 0.0)}, Mode::Process);
  json m = lkp_matrix({a, b});
  CHECK(m["will-it-scale.2.processes"] == json::array({100, 300}));
  CHECK_FALSE(m.contains("will-it-scale.2.processes_idle"));
  json st = lkp_stats(m);
  CHECK(st["will-it-scale.2.processes"] == 200.0);
  json one = lkp_stats(lkp_matrix({a}));
  CHECK(one["will-it-scale.2.processes"] == 100);
}
