// The 1-socket AMD presets of measurements.md T03 (Bergamo 256 threads, Turin 128 threads),
// in NPS1 and NPS4.
#include <doctest/doctest.h>

#include "helpers.h"
#include "sim/machine/cpulist.h"

using namespace slubsim;
using slubsim::test::preset;

TEST_CASE("topology: Bergamo 1S, 16 CCXs of 8 Zen 4c cores with SMT2") {
  for (const char* name : {"amd-bergamo-1s-256t", "amd-bergamo-1s-256t-nps4"}) {
    CAPTURE(name);
    auto m = preset(name);
    CHECK(m.nr_cpus == 256);
    CHECK(m.nr_sockets == 1);
    CHECK(m.nr_cores() == 128);
    CHECK(m.nr_llcs == 16);
    CHECK(m.core_cpus[m.cpu_core[0]] == std::vector<int>{0, 128});
    CHECK(m.cpu_llc[0] == m.cpu_llc[7]);
    CHECK(m.cpu_llc[0] == m.cpu_llc[135]);
    CHECK(m.cpu_llc[7] != m.cpu_llc[8]);  // the other CCX of the same CCD
    CHECK(m.distance(0, 128, 0) == Distance::Smt);
    CHECK(m.distance(0, 7, 0) == Distance::Llc);
    CHECK(m.distance(0, 8, 0) == Distance::SocketLocalHome);
  }
  CHECK(preset("amd-bergamo-1s-256t").nr_nodes == 1);
  auto nps4 = preset("amd-bergamo-1s-256t-nps4");
  CHECK(nps4.nr_nodes == 4);
  CHECK(format_cpulist(nps4.node_cpus[1]) == "32-63,160-191");
}

TEST_CASE("topology: Turin 1S, 8 CCDs of 8 Zen 5 cores with SMT2") {
  for (const char* name : {"amd-turin-1s-128t", "amd-turin-1s-128t-nps4"}) {
    CAPTURE(name);
    auto m = preset(name);
    CHECK(m.nr_cpus == 128);
    CHECK(m.nr_sockets == 1);
    CHECK(m.nr_cores() == 64);
    CHECK(m.nr_llcs == 8);
    CHECK(m.core_cpus[m.cpu_core[63]] == std::vector<int>{63, 127});
    CHECK(m.cpu_llc[56] == m.cpu_llc[127]);
  }
  CHECK(preset("amd-turin-1s-128t").nr_nodes == 1);
  auto nps4 = preset("amd-turin-1s-128t-nps4");
  CHECK(nps4.nr_nodes == 4);
  CHECK(format_cpulist(nps4.node_cpus[3]) == "48-63,112-127");
}
