// slubsim probe's plan (sim/machine/probe.h) on the 512-CPU Turin layout: every class a
// ping-pong can measure gets CPU pairs of exactly that class, at most the documented number per
// class, spread over both sockets; cross_socket_reader_home shares cross_socket's pairs; memory
// classes are said not measured; the waiter sets for the hand-off lie inside their class.
#include <doctest/doctest.h>

#include <set>

#include "sim/machine/probe.h"
#include "tests/helpers.h"

using namespace slubsim;

TEST_CASE("probe: the plan on amd-turin-2s-512t") {
  const Machine m = test::preset("amd-turin-2s-512t");
  const auto plan = probe_plan(m, 8);
  REQUIRE(plan.size() == static_cast<std::size_t>(kDistanceClasses));
  for (const auto& p : plan) {
    CAPTURE(distance_name(p.cls));
    const bool memory = p.cls == Distance::DramLocal || p.cls == Distance::DramRemote;
    if (memory) {
      CHECK(p.pairs.empty());
      CHECK(p.why_none.find("memory latency") == 0);
      continue;
    }
    CHECK(p.pairs.size() == 8);  // at most per_class, and Turin has more candidates than that
    std::set<int> sockets;
    for (const auto& pair : p.pairs) {
      const int home = m.cpu_socket[static_cast<std::size_t>(pair.home)];
      sockets.insert(m.cpu_socket[static_cast<std::size_t>(pair.a)]);
      if (p.cls == Distance::CrossSocket || p.cls == Distance::CrossSocketReaderHome) {
        CHECK(m.distance(pair.b, pair.a, home) == Distance::CrossSocket);
        CHECK(m.distance(pair.a, pair.b, home) == Distance::CrossSocketReaderHome);
      } else {
        CHECK(m.distance(pair.b, pair.a, home) == p.cls);
        CHECK(m.distance(pair.a, pair.b, home) == p.cls);
      }
    }
    if (p.cls != Distance::CrossSocket && p.cls != Distance::CrossSocketReaderHome)
      CHECK(sockets.size() == 2);  // spread over the machine, not the first socket alone
  }
  CHECK(plan[static_cast<std::size_t>(Distance::CrossSocketReaderHome)].pairs.size() ==
        plan[static_cast<std::size_t>(Distance::CrossSocket)].pairs.size());
  // Waiter sets: 2, 4, 8, 16 CPUs, each inside its class's grouping.
  const auto& llc = plan[static_cast<std::size_t>(Distance::Llc)].waiter_sets;
  REQUIRE(llc.size() == 3);  // a Turin CCD has 8 cores: 2, 4, 8
  for (const auto& set : llc)
    for (int c : set) CHECK(m.cpu_llc[static_cast<std::size_t>(c)] == m.cpu_llc[static_cast<std::size_t>(set.front())]);
  const auto& smt = plan[static_cast<std::size_t>(Distance::Smt)].waiter_sets;
  REQUIRE(smt.size() == 1);
  CHECK(m.cpu_core[static_cast<std::size_t>(smt[0][0])] == m.cpu_core[static_cast<std::size_t>(smt[0][1])]);
  CHECK(plan[static_cast<std::size_t>(Distance::CrossSocket)].waiter_sets.back().size() == 16);
}

TEST_CASE("probe: a small machine says which classes it cannot measure") {
  const Machine m = test::preset("vm-8vcpu-1n");
  const auto plan = probe_plan(m, 8);
  CHECK(plan[static_cast<std::size_t>(Distance::CrossSocket)].pairs.empty());
  CHECK(plan[static_cast<std::size_t>(Distance::CrossSocket)].why_none == "one socket");
  CHECK(plan[static_cast<std::size_t>(Distance::SocketRemoteHome)].pairs.empty());
}
