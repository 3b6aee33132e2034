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

TEST_CASE("rcu: rcu_do_batch invokes max(blimit, ready >> divisor) per round, more in a callback flood") {
  const Time g = 1000;
  RcuQueue q;
  q.init(1, g, RcuBatchLimits{.blimit = 10, .divisor = 7, .qhimark = 3000, .qlowmark = 100, .flood_blimit = 1000});
  for (int i = 0; i < 2000; ++i) q.call_rcu(0, 0, {RcuCallback::FreeObject, 0, nullptr});
  CHECK(q.batch(0, 1999) == 0);         // nothing ready before the grace period ends
  CHECK(q.batch(0, 2000) == 15);        // 2000 >> 7
  for (int i = 0; i < 1990; ++i) q.pop(0);
  CHECK(q.batch(0, 2000) == 10);        // the floor
  for (int i = 0; i < 5; ++i) q.pop(0);
  CHECK(q.batch(0, 2000) == 5);         // no more than is ready
  // Past qhimark queued callbacks the CPU is in a flood: up to flood_blimit per round, until
  // the queue is down to qlowmark.
  for (int i = 0; i < 3000; ++i) q.call_rcu(0, 2500, {RcuCallback::FreeObject, 0, nullptr});
  CHECK(q.batch(0, 4000) == 1000);
  for (int i = 0; i < 2904; ++i) q.pop(0);
  q.batch_done(0);
  CHECK(q.batch(0, 4000) == 101);       // still flooding: 101 left, all of them
  q.pop(0);
  q.batch_done(0);                      // 100 <= qlowmark: back to blimit
  CHECK(q.batch(0, 4000) == 10);
  // No limit: everything that is ready.
  RcuQueue all;
  all.init(1, g);
  for (int i = 0; i < 50; ++i) all.call_rcu(0, 0, {RcuCallback::FreeObject, 0, nullptr});
  CHECK(all.batch(0, 2000) == 50);
}
