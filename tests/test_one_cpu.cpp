// One-CPU objects (Reach::OneCpu, models/exec.h) are granted without global order: the same
// point with and without that shortcut gives the same result, and the claim is checked.
#include <doctest/doctest.h>

#include "helpers.h"
#include "sim/engine/cpu.h"
#include "sim/engine/engine.h"
#include "sim/run/job.h"

using namespace slubsim;

namespace {

// Everything a point reports that the model decides (not the engine's event count).
void check_same(const RunResult& a, const RunResult& b) {
  CHECK(a.ops_per_sec == b.ops_per_sec);
  CHECK(a.task_ops == b.task_ops);
  CHECK(a.end_time == b.end_time);
  CHECK(a.requests == b.requests);
  CHECK(a.warmup == b.warmup);
  CHECK(a.window == b.window);
  REQUIRE(a.locks.size() == b.locks.size());
  for (std::size_t i = 0; i < a.locks.size(); ++i) {
    CHECK(a.locks[i].stat.acquisitions == b.locks[i].stat.acquisitions);
    CHECK(a.locks[i].stat.contentions == b.locks[i].stat.contentions);
    CHECK(a.locks[i].stat.wait_total == b.locks[i].stat.wait_total);
    CHECK(a.locks[i].stat.hold_total == b.locks[i].stat.hold_total);
  }
  REQUIRE(a.caches.size() == b.caches.size());
  for (std::size_t i = 0; i < a.caches.size(); ++i)
    for (int k = 0; k < slub::kNrStats; ++k) CHECK(a.caches[i].stats[k] == b.caches[i].stats[k]);
}

// A short point of `workload` on small-2s-8c, 8 tasks, 200 us + 1 ms.
JobRequest point_request(const char* workload, const char* kernel, const char* mode) {
  JobRequest req;
  req.home = test::source_dir();
  req.topology = "small-2s-8c";
  req.workload = workload;
  req.kernel = kernel;
  req.mode = mode;
  req.nr_task = "8";
  req.warmup = "200us";
  req.duration = "1ms";
  return req;
}

}  // namespace

TEST_CASE("one-CPU objects: the same results with and without granting them out of order") {
  // mmap1 and brk1 in process mode also bind new slabs of caches without sheaves to their CPU
  // (Slub::set_cpu_local_objects) until they are listed.
  for (const char* workload : {"mmap1", "brk1"})
  for (const char* kernel : {"v6.5", "v6.17", "v7.0"})
    for (const char* mode : {"process", "thread"}) {
      CAPTURE(workload);
      CAPTURE(kernel);
      CAPTURE(mode);
      const Job job = resolve_job(point_request(workload, kernel, mode));
      RunSpec spec = point_spec(job, {0, 0, 0});
      const RunResult inline_granted = simulate(spec);
      spec.options.one_cpu_inline = false;
      const RunResult in_order = simulate(spec);
      check_same(inline_granted, in_order);
      // Process mode: each task's mmap_lock is its own, so most syncs go; thread mode shares it.
      if (std::string(mode) == "process") CHECK(inline_granted.events < in_order.events);
      else CHECK(inline_granted.events == in_order.events);
    }
}

TEST_CASE("one-CPU objects: a second CPU touching one is an error") {
  const Machine m = test::preset("small-2s-8c");
  const Costs c = test::default_costs();
  Engine engine;
  World world(m, c);
  const LineId own = world.new_line("own", 0, Reach::OneCpu);
  Cpu a(0, 0, 0, engine, world), b(1, 0, 0, engine, world);
  CHECK(world.one_cpu(a.cpu(), {Req::Write, own.v}));
  CHECK(world.one_cpu(a.cpu(), {Req::Read, own.v}));
  CHECK_THROWS_AS(world.one_cpu(b.cpu(), {Req::Read, own.v}), std::logic_error);
  const LineId shared = world.new_line("shared", 0);
  CHECK_FALSE(world.one_cpu(a.cpu(), {Req::Write, shared.v}));
  CHECK_FALSE(world.one_cpu(b.cpu(), {Req::Write, shared.v}));
  // A line bound for a while (a slab no other CPU can find) until it is released.
  world.set_line_reach(shared, a.cpu());
  CHECK(world.one_cpu(a.cpu(), {Req::Write, shared.v}));
  CHECK_THROWS_AS(world.one_cpu(b.cpu(), {Req::Read, shared.v}), std::logic_error);
  world.set_line_reach(shared, -1);
  CHECK_FALSE(world.one_cpu(b.cpu(), {Req::Write, shared.v}));
}

TEST_CASE("one-CPU objects: new slabs are bound to their CPU only when objects stay with their CPU") {
  auto run = [](const char* workload, const char* mode, bool inline_granted) {
    const Job job = resolve_job(point_request(workload, "v6.17", mode));
    RunSpec spec = point_spec(job, {0, 0, 0});
    spec.options.one_cpu_inline = inline_granted;
    return simulate(spec);
  };
  // Objects handed between tasks (cross-free's node pools): no slab is bound, so nothing
  // throws, and the results are the same.
  const RunResult a = run("cross-free", "process", true), b = run("cross-free", "process", false);
  check_same(a, b);
  CHECK(a.events == b.events);
  // Which programs keep their objects on the allocating CPU.
  auto stays = [](const char* workload, Mode mode) {
    return objects_stay_on_cpu(resolve_job(point_request(workload, "v6.17", "process")).program, mode);
  };
  CHECK(stays("mmap1", Mode::Process));
  CHECK(stays("brk1", Mode::Process));
  CHECK(stays("mmap1", Mode::Thread));  // the mm's lock is shared, its objects' pools are the task's
  CHECK_FALSE(stays("cross-free", Mode::Process));     // node pools
  CHECK_FALSE(stays("sched-messaging", Mode::Process)); // roles and hand-offs
}
