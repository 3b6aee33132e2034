// Timing switches (functional and detailed timing, sim/engine/world.h) and the pacing of
// functional timing (Exec::pace_iteration), on which fast-forward (sim/run/fast_forward.h) rests.
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "helpers.h"
#include "models/immediate.h"
#include "sim/engine/cpu.h"
#include "sim/engine/engine.h"
#include "sim/engine/world.h"

using namespace slubsim;
using namespace slubsim::test;

namespace {

// Each iteration: think, then one global spinlock held for `cs` while writing a shared line.
Co<void> contender(Exec& e, SpinLockId l, LineId line, Time think, Time cs, Time stop, int* iterations) {
  while (e.now() < stop) {
    e.pace_iteration();
    e.spend(think);
    co_await e.lock(l);
    co_await e.write(line);
    e.spend(cs);
    co_await e.unlock(l);
    ++*iterations;
  }
}

struct Contenders {
  const Machine& m;
  Costs c = default_costs();
  Engine engine;
  World world;
  SpinLockId lock;
  LineId line;
  std::vector<std::unique_ptr<Cpu>> cpus;
  std::vector<int> iterations;
  explicit Contenders(const Machine& machine, int n) : m(machine), world(machine, c) {
    lock = world.new_spinlock("test_lock", "global", 0);
    line = world.new_line("data", 0);
    iterations.assign(static_cast<std::size_t>(n), 0);
    for (int i = 0; i < n; ++i)
      cpus.push_back(std::make_unique<Cpu>(i, m.cpu_node[i], m.cpu_node[i], engine, world));
  }
  void start(Time stop) {
    for (std::size_t i = 0; i < cpus.size(); ++i)
      cpus[i]->start(contender(*cpus[i], lock, line, 200 * kNs, 500 * kNs, stop, &iterations[i]), 0);
  }
  Time spin() const {
    Time s = 0;
    for (const auto& c : cpus) s += c->spin_total();
    return s;
  }
};

}  // namespace

TEST_CASE("timing switch: functional timing grants at once, never finds a lock held, and detailed timing resumes") {
  const Machine m = preset("small-2s-8c");
  Contenders x(m, 8);
  x.world.set_quantum(5 * kUs);
  Time spin_at_first = -1, spin_at_second = -1;
  Time first_at = 0, second_at = 0;
  std::vector<Time> clocks_at_second;
  x.world.request_switch(Timing::Functional, 100 * kUs, [&] {
    CHECK(x.world.timing() == Timing::Functional);
    spin_at_first = x.spin();
    first_at = x.engine.now();
    x.world.request_switch(Timing::Detailed, 300 * kUs, [&] {
      spin_at_second = x.spin();
      second_at = x.engine.now();
      for (const auto& c : x.cpus) clocks_at_second.push_back(c->now());
    });
  });
  x.start(500 * kUs);
  x.engine.run();
  for (const auto& c : x.cpus) REQUIRE(c->finished());
  CHECK_FALSE(x.world.switching());
  CHECK(x.world.timing() == Timing::Detailed);
  // Eight CPUs on one lock with 500 ns sections spin in detailed timing...
  CHECK(spin_at_first > 0);
  // ...not at all in functional timing...
  CHECK(spin_at_second == spin_at_first);
  // ...and again once detailed timing is back.
  CHECK(x.spin() > spin_at_second);
  // The barrier holds each CPU at its first request at or after the switch, holding no lock:
  // within one critical section of it.
  REQUIRE(clocks_at_second.size() == 8);
  for (Time t : clocks_at_second) {
    CHECK(t >= 300 * kUs);
    CHECK(t < 300 * kUs + 2 * kUs);
  }
  // The engine's clock went back to the earliest parked CPU (Engine::rewind).
  CHECK(second_at <= *std::min_element(clocks_at_second.begin(), clocks_at_second.end()));
  // Without the lock's serialisation the functional stretch runs every CPU at its own pace: more
  // iterations in 200 us than the lock allows in detailed timing (one section per 500 ns at most).
  int total = 0;
  for (int n : x.iterations) total += n;
  CHECK(total > 1000);
}

TEST_CASE("timing switch: with no switch, a run is the same as before the switch existed") {
  const Machine m = preset("small-2s-8c");
  Contenders a(m, 8), b(m, 8);
  a.start(200 * kUs);
  a.engine.run();
  b.world.set_quantum(5 * kUs);  // a quantum alone changes nothing in detailed timing
  b.start(200 * kUs);
  b.engine.run();
  CHECK(a.iterations == b.iterations);
  CHECK(a.spin() == b.spin());
  CHECK(a.engine.events() == b.engine.events());
}

TEST_CASE("pacing: functional iterations keep the mean and the spread of the gaps a detailed sample saw") {
  ImmediateShared shared;
  ImmediateExec e(shared, 0, 0);
  e.seed_pacing(7);
  // Detailed: gaps alternate 1 us and 9 us (mean 5 us); only those from 10 us on are sampled.
  e.set_pace(0, 10 * kUs);
  for (int i = 0; i < 200; ++i) {
    e.pace_iteration();
    e.spend(i % 2 ? 9 * kUs : 1 * kUs);
  }
  // Paced at 10 us per iteration: the sampled gaps scaled to that mean (2 us and 18 us), each
  // iteration's own work (100 ns) shorter than any gap.
  e.set_pace(10 * kUs);
  std::vector<Time> gaps;
  Time last = -1;
  for (int i = 0; i < 2000; ++i) {
    e.pace_iteration();
    if (last >= 0) gaps.push_back(e.now() - last);
    last = e.now();
    e.spend(100 * kNs);
  }
  double sum = 0;
  int short_gaps = 0, long_gaps = 0;
  for (Time g : gaps) {
    sum += static_cast<double>(g);
    if (g == 2 * kUs) ++short_gaps;
    if (g == 18 * kUs) ++long_gaps;
  }
  CHECK(sum / static_cast<double>(gaps.size()) == doctest::Approx(static_cast<double>(10 * kUs)).epsilon(0.08));
  CHECK(short_gaps + long_gaps == static_cast<int>(gaps.size()));
  CHECK(short_gaps > 800);
  CHECK(long_gaps > 800);
}

TEST_CASE("pacing: without a sample the pace is the gap; unpaced, the clock is the task's own") {
  ImmediateShared shared;
  ImmediateExec e(shared, 0, 0);
  e.set_pace(3 * kUs);
  e.pace_iteration();
  const Time t0 = e.now();
  e.spend(100 * kNs);
  e.pace_iteration();
  CHECK(e.now() - t0 == 3 * kUs);
  e.set_pace(0);
  const Time t1 = e.now();
  e.pace_iteration();
  CHECK(e.now() == t1);
}
