// RCU grace periods as the allocator sees them (models/rcu.h).
#include <doctest/doctest.h>

#include "models/rcu.h"

using namespace slubsim;

TEST_CASE("rcu: callbacks queued during one grace period become ready together at the end of the next") {
  const Time g = 1000;
  RcuQueue q;
  q.init(2, g);
  // Grace period 0 runs over [0, 1000): callbacks queued in it wait for period 1 to end.
  q.call_rcu(0, 0, {RcuCallback::FreeObject, 0, nullptr});
  q.call_rcu(0, 999, {RcuCallback::FreeObject, 0, nullptr});
  q.call_rcu(0, 1000, {RcuCallback::FreeObject, 0, nullptr});
  q.call_rcu(1, 1500, {RcuCallback::FreeObject, 0, nullptr});
  CHECK(q.pending(0)[0].ready == 2000);
  CHECK(q.pending(0)[1].ready == 2000);
  CHECK(q.pending(0)[2].ready == 3000);
  CHECK(q.pending(1)[0].ready == 3000);
  // A CPU sees its ready batch, oldest first, and nothing of another CPU's.
  CHECK_FALSE(q.ready(0, 1999));
  CHECK(q.ready(0, 2000));
  q.pop(0);
  CHECK(q.ready(0, 2000));
  q.pop(0);
  CHECK_FALSE(q.ready(0, 2999));
  CHECK_FALSE(q.ready(1, 2999));
  CHECK(q.ready(1, 3000));
}
