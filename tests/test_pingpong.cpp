// Acceptance: a CAS ping-pong inside the simulator (as core-to-core-latency measures it:
// one-way = round trip / 2) reproduces every configured latency class.
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "helpers.h"
#include "sim/engine/cpu.h"
#include "sim/engine/engine.h"
#include "sim/engine/world.h"

using namespace slubsim;
using namespace slubsim::test;

namespace {

// Each side CASes the shared line until it finds the turn is its own, then passes the turn.
Co<void> player(Exec& e, LineId line, int me, int* turn, int rounds, Time* finished) {
  for (int i = 0; i < rounds; ++i) {
    while (true) {
      co_await e.write(line);
      if (*turn == me) {
        *turn = 1 - me;
        break;
      }
    }
  }
  *finished = e.now();
}

// One-way latency between CPUs a and b for a line homed on `home_node`, in ps.
double one_way(const Machine& m, const Costs& c, int a, int b, int home_node) {
  Engine engine;
  World world(m, c);
  LineId line = world.new_line("pingpong", home_node);
  Cpu ca(a, m.cpu_node[a], m.cpu_node[a], engine, world), cb(b, m.cpu_node[b], m.cpu_node[b], engine, world);
  int turn = 0;
  const int rounds = 200;
  Time fa = 0, fb = 0;
  // Warm: a owns the line before the clock starts.
  world.line(line).owner = a;
  ca.start(player(ca, line, 0, &turn, rounds, &fa), 0);
  cb.start(player(cb, line, 1, &turn, rounds, &fb), 0);
  engine.run();
  REQUIRE(ca.finished());
  REQUIRE(cb.finished());
  // 2*rounds hops; b's last hop ends the exchange.
  return static_cast<double>(std::max(fa, fb)) / (2.0 * rounds);
}

}  // namespace

TEST_CASE("ping-pong: each latency class of the topology is reproduced") {
  auto c = default_costs();
  auto t = preset("amd-turin-2s-512t");  // SMT, CCDs, two sockets, one node each
  auto lat = [&](Distance d) { return static_cast<double>(t.latency[static_cast<int>(d)]); };
  CHECK(one_way(t, c, 0, 256, 0) == doctest::Approx(lat(Distance::Smt)).epsilon(0.02));
  CHECK(one_way(t, c, 0, 1, 0) == doctest::Approx(lat(Distance::Llc)).epsilon(0.02));
  CHECK(one_way(t, c, 0, 64, 0) == doctest::Approx(lat(Distance::SocketLocalHome)).epsilon(0.02));
  CHECK(one_way(t, c, 0, 64, 1) == doctest::Approx(lat(Distance::SocketRemoteHome)).epsilon(0.02));
  CHECK(one_way(t, c, 0, 200, 0) == doctest::Approx(lat(Distance::CrossSocket)).epsilon(0.02));

  auto s = preset("small-2s-8c");
  auto sl = [&](Distance d) { return static_cast<double>(s.latency[static_cast<int>(d)]); };
  CHECK(one_way(s, c, 0, 1, 0) == doctest::Approx(sl(Distance::Llc)).epsilon(0.02));
  CHECK(one_way(s, c, 0, 3, 1) == doctest::Approx(sl(Distance::SocketRemoteHome)).epsilon(0.02));
  CHECK(one_way(s, c, 5, 2, 0) == doctest::Approx(sl(Distance::CrossSocket)).epsilon(0.02));
}

TEST_CASE("coherence: with a cache residency, a line untouched for longer comes from memory again") {
  auto m = preset("small-2s-8c");
  auto c = default_costs();
  REQUIRE(c.line_residency == 0);  // off by default: lines stay with their last user
  c.line_residency = 1000 * kNs;
  Coherence coh(m, c);
  Line l;
  l.home_node = 1;
  l.home_socket = 1;
  coh.write(l, 0, 0);
  CHECK(coh.read(l, 1, 500 * kNs) == 500 * kNs + m.latency[static_cast<int>(Distance::Llc)]);  // still cached
  // 1.5 us later nobody has it: CPU 2 reads it from its home socket's memory (remote to CPU 2).
  const Time t = 2000 * kNs;
  CHECK(coh.read(l, 2, t) == t + m.latency[static_cast<int>(Distance::DramRemote)]);
  CHECK(l.owner == -1);
  auto off = default_costs();
  Coherence kept(m, off);
  Line k;
  kept.write(k, 0, 0);
  CHECK(kept.read(k, 1, t) == t + m.latency[static_cast<int>(Distance::Llc)]);
}

TEST_CASE("coherence: reads join the sharers; a write pays the farthest invalidation") {
  auto m = preset("small-2s-8c");
  auto c = default_costs();
  Coherence coh(m, c);
  Line l;
  l.home_node = 0;
  l.home_socket = 0;
  // First touch comes from memory.
  CHECK(coh.read(l, 0, 0) == m.latency[static_cast<int>(Distance::DramLocal)]);
  Time t = 1000 * kNs;
  CHECK(coh.read(l, 0, t) == t + c.cache_hit);  // now cached
  coh.read(l, 1, t);                               // an LLC neighbour shares it
  coh.read(l, 5, t);                               // and one on the other socket
  Time t2 = 2000 * kNs;
  Time done = coh.write(l, 0, t2);  // 0 writes: invalidates 1 (llc) and 5 (cross socket)
  CHECK(done == t2 + m.latency[static_cast<int>(Distance::CrossSocket)]);
  CHECK(l.owner == 0);
  CHECK(l.sharers.empty());
  CHECK(coh.write(l, 0, 3000 * kNs) == 3000 * kNs + c.atomic_local);  // own line: local RMW
  // A transfer waits for the one in flight: two CPUs asking at once are served in turn.
  Time x = 4000 * kNs;
  Time d1 = coh.write(l, 4, x);
  Time d2 = coh.write(l, 6, x);
  CHECK(d1 == x + m.latency[static_cast<int>(Distance::CrossSocket)]);
  CHECK(m.distance(6, 4, 0) == Distance::SocketRemoteHome);  // socket 1 CPUs, line on socket 0
  CHECK(d2 == d1 + m.transfer(4, 6, 0));
}

TEST_CASE("coherence: with parallel reads, readers of a line wait for its last write, not for each other") {
  auto m = preset("small-2s-8c");
  for (bool parallel : {false, true}) {
    INFO("parallel " << parallel);
    auto c = default_costs();
    REQUIRE_FALSE(c.parallel_reads);  // off by default: a single-server line
    c.parallel_reads = parallel;
    Coherence coh(m, c);
    Line l;
    const Time x = 1000 * kNs;
    const Time w = coh.write(l, 0, x);  // CPU 0 owns it (from memory)
    const Time hop1 = m.transfer(0, 1, 0), hop2 = m.transfer(0, 2, 0);
    // CPUs 1 and 2 read it at once, before the write has landed; both copies come from CPU 0.
    const Time r1 = coh.read(l, 1, x);
    const Time r2 = coh.read(l, 2, x);
    CHECK(r1 == w + hop1);
    CHECK(r2 == (parallel ? w + hop2 : r1 + hop2));
    // A write waits for every read in flight, either way.
    CHECK(coh.write(l, 3, x) >= r2);
  }
}

TEST_CASE("ping-pong: Exec::line_from prices a line another CPU wrote by the same latency classes, and nothing for this CPU's own") {
  auto c = default_costs();
  auto t = preset("amd-turin-2s-512t");
  auto lat = [&](Distance d) { return t.latency[static_cast<int>(d)]; };
  Engine engine;
  World world(t, c);
  Cpu c0(0, t.cpu_node[0], t.cpu_node[0], engine, world);
  const Exec& e = c0;
  CHECK(e.line_from(0, 0) == 0);    // written by this CPU
  CHECK(e.line_from(-1, 0) == 0);   // no writer known
  CHECK(e.line_from(256, 0) == lat(Distance::Smt));
  CHECK(e.line_from(1, 0) == lat(Distance::Llc));
  CHECK(e.line_from(64, 0) == lat(Distance::SocketLocalHome));
  CHECK(e.line_from(64, 1) == lat(Distance::SocketRemoteHome));
  // The one-way figure of the ping-pong above and line_from agree for each class.
  CHECK(static_cast<double>(e.line_from(1, 0)) == doctest::Approx(one_way(t, c, 0, 1, 0)).epsilon(0.02));
}

namespace {

// CPU `me` takes lock l, stores to the lines it is given, releases l; `after` is its clock then.
Co<void> store_under_lock(Exec& e, SpinLockId l, std::vector<LineId> lines, Time* after) {
  co_await e.lock(l);
  for (LineId x : lines) co_await e.store(x);
  co_await e.unlock(l);
  *after = e.now();
}

Co<void> take_lock_at(Exec& e, SpinLockId l, Time start, Time* got) {
  e.spend(start);
  co_await e.lock(l);
  *got = e.now();
  co_await e.unlock(l);
}

}  // namespace

TEST_CASE("posted stores: a plain store does not hold up its CPU; the lock's release waits for it") {
  auto m = preset("small-2s-8c");
  const Time hop = m.transfer(6, 0, 0);  // lines last written on the other socket
  for (bool posted : {false, true}) {
    INFO("posted " << posted);
    auto c = default_costs();
    REQUIRE(c.posted_stores);  // the default since 2026-12-07
    c.posted_stores = posted;
    Engine engine;
    World world(m, c);
    const SpinLockId l = world.new_spinlock("test", "l", 0, Reach::Shared);
    const LineId a = world.new_line("a", 0), b = world.new_line("b", 0);
    world.line(world.lock_line(l)).owner = 0;
    world.line(a).owner = 6;
    world.line(b).owner = 7;
    Cpu c0(0, 0, 0, engine, world), c1(1, 0, 0, engine, world);
    Time after = 0, got = 0;
    c0.start(store_under_lock(c0, l, {a, b}, &after), 0);
    c1.start(take_lock_at(c1, l, 50 * kPs, &got), 0);  // waits while CPU 0 holds it
    engine.run();
    REQUIRE(c0.finished());
    REQUIRE(c1.finished());
    if (posted) {
      // CPU 0 went on after two L1-speed stores; the two lines' transfers ran side by side...
      CHECK(after < hop);
      // ...and the lock reached CPU 1 only after both had landed.
      CHECK(got >= hop);
      CHECK(got < 2 * hop + 2 * m.transfer(0, 1, 0) + hop / 2);
    } else {
      // Each store waited for its line in turn.
      CHECK(after >= 2 * hop);
      CHECK(got >= 2 * hop);
    }
  }
}

TEST_CASE("posted stores: a locked RMW waits until the CPU's earlier stores have landed") {
  auto m = preset("small-2s-8c");
  auto c = default_costs();
  c.posted_stores = true;
  Engine engine;
  World world(m, c);
  const LineId far = world.new_line("far", 0), own = world.new_line("own", 0);
  world.line(far).owner = 6;
  world.line(own).owner = 0;
  Cpu c0(0, 0, 0, engine, world);
  Time stored = 0, rmw = 0;
  auto path = [&](Exec& e) -> Co<void> {
    co_await e.store(far);
    stored = e.now();
    co_await e.write(own);  // a cmpxchg of a line it already owns
    rmw = e.now();
  };
  c0.start(path(c0), 0);
  engine.run();
  REQUIRE(c0.finished());
  CHECK(stored == c.cache_hit);
  CHECK(rmw == m.transfer(6, 0, 0) + c.atomic_local);
}
