// Acceptance: the queued-spinlock model against the single-server bounds of
// contention-model.md §2.1-2.2.
#include <doctest/doctest.h>

#include "helpers.h"

using namespace slubsim;
using namespace slubsim::test;

TEST_CASE("qspinlock: at saturation throughput is 1/(s + hand-off) with the one-piece alpha hand-off") {
  auto m = preset("small-2s-8c");
  auto c = default_costs();
  c.handoff = Costs::Handoff::Alpha;
  c.contender_rmw = false;
  // Two CPUs of one LLC (0 and 1), no think time: the lock is never free.
  const Time s = 500 * kNs;
  auto r = run_program(m, c, lock_program(0, s, false), 2, 2 * kMs);
  Time handoff = static_cast<Time>(c.handoff_alpha * m.latency[static_cast<int>(Distance::Llc)] + 0.5);
  double expected = 1e12 / static_cast<double>(s + handoff);
  CHECK(static_cast<double>(r.ops_per_sec) == doctest::Approx(expected).epsilon(0.05));
  auto st = lock_total(r, "test_lock");
  REQUIRE(st.handoffs > 0);
  CHECK(st.handoff_total / static_cast<Time>(st.handoffs) == handoff);
}

TEST_CASE("qspinlock: at saturation across sockets, throughput is 1/(s + mean hand-off)") {
  auto m = preset("amd-epyc-2s-192c-4n");
  auto c = default_costs();
  c.handoff = Costs::Handoff::Alpha;
  const Time s = 300 * kNs;
  auto r = run_program(m, c, lock_program(200 * kNs, s, true), 192, 2 * kMs);
  auto st = lock_total(r, "test_lock");
  REQUIRE(st.handoffs > 1000);
  double mean_handoff = static_cast<double>(st.handoff_total) / static_cast<double>(st.handoffs);
  double expected = 1e12 / (static_cast<double>(s) + mean_handoff);
  CHECK(static_cast<double>(r.ops_per_sec) == doctest::Approx(expected).epsilon(0.05));
  // Contenders on both sockets: the mean hand-off lies between the LLC and cross-socket prices.
  CHECK(mean_handoff > c.handoff_alpha * static_cast<double>(m.latency[static_cast<int>(Distance::SocketLocalHome)]));
}

TEST_CASE("qspinlock: far below saturation throughput is N/(s + t)") {
  auto m = preset("small-2s-8c");
  auto c = default_costs();
  const Time s = 100 * kNs, t = 100 * kUs;
  auto r = run_program(m, c, lock_program(t, s, true), 8, 50 * kMs);
  double expected = 8 * 1e12 / static_cast<double>(s + t);
  CHECK(static_cast<double>(r.ops_per_sec) == doctest::Approx(expected).epsilon(0.05));
  auto st = lock_total(r, "test_lock");
  CHECK(st.contentions < st.acquisitions / 40);  // almost never contended
}

TEST_CASE("qspinlock: hand-offs across sockets cost measurably more than within one LLC") {
  auto m = preset("small-2s-8c");
  auto c = default_costs();
  c.handoff = Costs::Handoff::Alpha;
  const Time s = 200 * kNs;
  // Two tasks: CPUs 0 and 1 share an LLC. Eight tasks span both sockets.
  auto near = run_program(m, c, lock_program(0, s, false), 2, 2 * kMs);
  auto far = run_program(m, c, lock_program(0, s, false), 8, 2 * kMs);
  auto sn = lock_total(near, "test_lock"), sf = lock_total(far, "test_lock");
  double hn = static_cast<double>(sn.handoff_total) / static_cast<double>(sn.handoffs);
  double hf = static_cast<double>(sf.handoff_total) / static_cast<double>(sf.handoffs);
  CHECK(hf > 2.0 * hn);
  CHECK(far.ops_per_sec < near.ops_per_sec);
}

TEST_CASE("qspinlock: waiters spin, so a contended CPU is busy, not idle") {
  auto m = preset("small-2s-8c");
  auto c = default_costs();
  auto r = run_program(m, c, lock_program(0, 500 * kNs, false), 8, 1 * kMs);
  CHECK(r.idle_pct == doctest::Approx(0.0));
  auto st = lock_total(r, "test_lock");
  CHECK(st.contentions > 0);
  CHECK(st.wait_total > 0);
  CHECK(st.wait_max >= st.wait_total / static_cast<Time>(st.contentions));
}

TEST_CASE("qspinlock: the default hand-off is priced part by part (mcs)") {
  CHECK(default_costs().handoff == Costs::Handoff::Mcs);
}

TEST_CASE("qspinlock (mcs): two CPUs of one LLC hand off in three transfers of the lock word") {
  auto m = preset("small-2s-8c");
  auto c = mcs_costs_without_contender_rmw();
  const Time s = 500 * kNs;
  // The releasing store invalidates the waiter's polled copy, the waiter's poll misses, and its
  // set_locked takes the line back: 3 L; no third waiter, so no MCS node write.
  auto r = run_program(m, c, lock_program(0, s, false), 2, 2 * kMs);
  const Time llc = m.latency[static_cast<int>(Distance::Llc)];
  auto st = lock_total(r, "test_lock");
  REQUIRE(st.handoffs > 100);
  CHECK(st.handoff_total / static_cast<Time>(st.handoffs) == 3 * llc);
  double expected = 1e12 / static_cast<double>(s + 3 * llc);
  CHECK(static_cast<double>(r.ops_per_sec) == doctest::Approx(expected).epsilon(0.05));
}

TEST_CASE("qspinlock (mcs): passing MCS headship is off the new holder's path") {
  // Four CPUs of one LLC (SPR: one LLC per socket, CPUs 0-3 distinct cores), never thinking:
  // two waiters are queued at every hand-off.
  auto m = preset("intel-spr-2s-192t");
  auto c = mcs_costs_without_contender_rmw();
  const Time llc = m.latency[static_cast<int>(Distance::Llc)];
  auto mean_handoff = [&](const Costs& costs, Time s) {
    auto r = run_program(m, costs, lock_program(0, s, false), 4, 2 * kMs);
    auto st = lock_total(r, "test_lock");
    REQUIRE(st.handoffs > 100);
    return static_cast<double>(st.handoff_total) / static_cast<double>(st.handoffs);
  };
  // With stalling stores the hand-off is the three transfers of the word, as with no waiter
  // behind the head: the MCS release store to the next head's node does not hold up the holder
  // that makes it. (It paces when that head starts polling, but the release's invalidation of
  // the head's copy is a transfer between the same two CPUs, so here the pacing does not bind.)
  auto stall = c;
  stall.posted_stores = false;
  CHECK(mean_handoff(stall, 500 * kNs) == doctest::Approx(3.0 * static_cast<double>(llc)));
  CHECK(mean_handoff(stall, 0) == doctest::Approx(3.0 * static_cast<double>(llc)));
  // With posted stores (the default) a head with waiters behind it enters its section once it
  // has seen the word free: set_locked is a plain store, so the hand-off is two transfers.
  REQUIRE(c.posted_stores);
  CHECK(mean_handoff(c, 500 * kNs) == doctest::Approx(2.0 * static_cast<double>(llc)).epsilon(0.02));
  CHECK(mean_handoff(c, 0) == doctest::Approx(2.0 * static_cast<double>(llc)).epsilon(0.02));
  // Against the one-piece model at its suggested factor (1.5 L), the lock passes fewer times.
  auto a = c;
  a.handoff = Costs::Handoff::Alpha;
  auto r = run_program(m, c, lock_program(0, 500 * kNs, false), 4, 2 * kMs);
  auto ra = run_program(m, a, lock_program(0, 500 * kNs, false), 4, 2 * kMs);
  CHECK(r.ops_per_sec < ra.ops_per_sec);
}

TEST_CASE("qspinlock: with contender_rmw the releasing store pulls the word back from contenders") {
  auto m = preset("small-2s-8c");
  auto off = default_costs();
  off.handoff = Costs::Handoff::Alpha;
  off.contender_rmw = false;
  auto on = off;
  on.contender_rmw = true;
  // Saturated, all eight CPUs of both sockets: contenders keep arriving while the lock is held.
  const Time s = 200 * kNs;
  auto r_off = run_program(m, off, lock_program(100 * kNs, s, true), 8, 2 * kMs);
  auto r_on = run_program(m, on, lock_program(100 * kNs, s, true), 8, 2 * kMs);
  auto st_off = lock_total(r_off, "test_lock"), st_on = lock_total(r_on, "test_lock");
  REQUIRE(st_off.handoffs > 100);
  REQUIRE(st_on.handoffs > 100);
  double h_off = static_cast<double>(st_off.handoff_total) / static_cast<double>(st_off.handoffs);
  double h_on = static_cast<double>(st_on.handoff_total) / static_cast<double>(st_on.handoffs);
  // Off: the hand-off is alpha * L alone, at least the cheapest (LLC) price and at most the
  // cross-socket one. On: the holder first re-fetches the word, at least one more LLC transfer.
  const double llc = static_cast<double>(m.latency[static_cast<int>(Distance::Llc)]);
  CHECK(h_off >= off.handoff_alpha * llc - 1);
  CHECK(h_on >= h_off + llc * 0.5);
  CHECK(r_on.ops_per_sec < r_off.ops_per_sec);
}
