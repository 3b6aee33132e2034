// Lines a grace period old: found in the LLC while the domain's RCU backlog leaves room
// (models/slub/residency.h).
#include <doctest/doctest.h>

#include <cmath>

#include "models/slub/residency.h"

using namespace slubsim;
using slubsim::slub::LineResidency;

TEST_CASE("residency: the share in the LLC falls as exp(-waiting bytes / LLC bytes), per domain") {
  LineResidency r;
  // CPUs 0, 1 in domain 0; CPUs 2, 3 in domain 1; 8 MB each; a hit 10 ns.
  r.init({0, 0, 1, 1}, 2, 8 << 20, 10 * kNs);
  CHECK(r.share_in_llc(0) == 1.0);
  CHECK(r.line(0, 100 * kNs) == 10 * kNs);
  r.queued(0, 4 << 20);
  r.queued(1, 4 << 20);  // the domain's other CPU: the same cache
  CHECK(r.waiting(1) == (8 << 20));
  CHECK(r.share_in_llc(1) == doctest::Approx(std::exp(-1.0)));
  CHECK(r.share_in_llc(2) == 1.0);  // the other domain is untouched
  const double h = std::exp(-1.0);
  CHECK(r.line(0, 100 * kNs) == static_cast<Time>(std::llround(h * 10000 + (1 - h) * 100000)));
  r.done(0, 4 << 20);
  r.done(1, 4 << 20);
  CHECK(r.waiting(0) == 0);
  CHECK(r.share_in_llc(0) == 1.0);
}

TEST_CASE("residency: no LLC size means memory; memory no dearer than the hit stays as it is") {
  LineResidency none;
  none.init({0}, 1, 0, 10 * kNs);
  CHECK(none.share_in_llc(0) == 0.0);
  CHECK(none.line(0, 100 * kNs) == 100 * kNs);
  LineResidency r;
  r.init({0}, 1, 1 << 20, 10 * kNs);
  CHECK(r.line(0, 5 * kNs) == 5 * kNs);
}
