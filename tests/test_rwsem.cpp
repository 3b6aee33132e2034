#include <doctest/doctest.h>

#include "helpers.h"

using namespace slubsim;
using namespace slubsim::test;

namespace {
Program mmap_like(Time think, Time cs) {
  Program p = lock_program(think, cs, true, Scope::Mm);
  p.locks[0].kind = LockKind::Rwsem;
  p.steps[1].kind = LockKind::Rwsem;
  return p;
}
}  // namespace

TEST_CASE("rwsem: in process mode every task has its own mm, so nothing is contended") {
  auto m = preset("small-2s-8c");
  auto c = default_costs();
  auto r = run_program(m, c, mmap_like(1 * kUs, 500 * kNs), 8, 2 * kMs, Mode::Process);
  auto st = lock_total(r, "test_lock");
  CHECK(st.acquisitions > 0);
  CHECK(st.contentions == 0);
}

TEST_CASE("rwsem: thread mode serialises on the shared mmap_lock") {
  auto m = preset("small-2s-8c");
  auto c = default_costs();
  const Time cs = 500 * kNs;
  auto proc = run_program(m, c, mmap_like(1 * kUs, cs), 8, 2 * kMs, Mode::Process);
  auto thr = run_program(m, c, mmap_like(1 * kUs, cs), 8, 2 * kMs, Mode::Thread);
  CHECK(thr.ops_per_sec < proc.ops_per_sec / 2);
  CHECK(static_cast<double>(thr.ops_per_sec) < 1e12 / static_cast<double>(cs));  // one writer at a time
  CHECK(lock_total(thr, "test_lock").contentions > 0);
}

TEST_CASE("rwsem: sleeping waiters leave their CPU idle, spinning waiters do not") {
  auto m = preset("small-2s-8c");
  auto c = default_costs();
  Options sleep;
  sleep.rwsem_spin_on_owner = false;
  auto slept = run_program(m, c, mmap_like(1 * kUs, 500 * kNs), 8, 2 * kMs, Mode::Thread, 1, sleep);
  auto spun = run_program(m, c, mmap_like(1 * kUs, 500 * kNs), 8, 2 * kMs, Mode::Thread, 1, {});
  CHECK(slept.idle_pct > 50.0);
  CHECK(spun.idle_pct < 1.0);
  // A sleeper pays the wake-up latency on every hand-off, so it is slower.
  CHECK(slept.ops_per_sec < spun.ops_per_sec);
}
