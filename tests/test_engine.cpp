#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/run/stop.h"

using namespace slubsim;

namespace {
struct Recorder : Process {
  explicit Recorder(std::uint32_t rank = kTimerRank) : Process(rank) {}
  std::vector<int>* log;
  int id;
  Engine* engine;
  void fire() override { log->push_back(id); }
};
}  // namespace

TEST_CASE("engine: events fire by time, timer ties in scheduling order") {
  Engine e;
  std::vector<int> log;
  Recorder a, b, c;
  a.log = b.log = c.log = &log;
  a.id = 1;
  b.id = 2;
  c.id = 3;
  e.schedule(50, &a);
  e.schedule(10, &b);
  e.schedule(50, &c);
  CHECK(e.may_act_at(9, 1));
  CHECK_FALSE(e.may_act_at(10, 1));  // a timer (rank 0) at the same time goes first
  e.run();
  CHECK(log == std::vector<int>{2, 1, 3});
  CHECK(e.now() == 50);
  CHECK(e.events() == 3);
  CHECK_THROWS(e.schedule(40, &a));  // the past
}

TEST_CASE("engine: at one time, lower ranks fire first whatever the scheduling order") {
  Engine e;
  std::vector<int> log;
  Recorder cpu5(6), cpu2(3), timer, cpu0(1);
  for (Recorder* r : {&cpu5, &cpu2, &timer, &cpu0}) r->log = &log;
  cpu5.id = 5;
  cpu2.id = 2;
  timer.id = -1;
  cpu0.id = 0;
  e.schedule(20, &cpu5);
  e.schedule(20, &cpu2);
  e.schedule(30, &timer);
  e.schedule(20, &cpu0);
  CHECK(e.next_timer() == 30);
  CHECK_FALSE(e.may_act_at(21, 1));  // later than what is queued
  CHECK(e.may_act_at(19, 7));
  CHECK_FALSE(e.may_act_at(20, 4));  // CPU 3 at 20 waits for CPUs 0 and 2
  e.run();
  CHECK(log == std::vector<int>{0, 2, 5, -1});
  CHECK(e.next_timer() == kForever);
}

TEST_CASE("engine: the watch runs every kWatchEvery events and may end the run by throwing") {
  Engine e;
  struct Repeat : Process {
    Engine& e;
    explicit Repeat(Engine& en) : Process(1), e(en) {}
    void fire() override { e.schedule(e.now() + 1, this); }  // never ends by itself
  } r(e);
  e.schedule(0, &r);
  int watched = 0;
  struct Enough {};
  CHECK_THROWS_AS(e.run([&] {
    if (++watched == 3) throw Enough{};
  }), Enough);
  CHECK(watched == 3);
  CHECK(e.events() == 3 * Engine::kWatchEvery);
}

TEST_CASE("stop: a point is abandoned only once the stop has outlasted the grace period") {
  std::atomic<bool> stop{false};
  StopWatch w(&stop, 0.05);
  CHECK_NOTHROW(w.check());  // no stop requested
  stop = true;
  CHECK_NOTHROW(w.check());  // first sight starts the grace period
  CHECK_NOTHROW(w.check());
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  CHECK_THROWS_AS(w.check(), PointAbandoned);
  StopWatch none(nullptr);
  CHECK_FALSE(none.armed());
  CHECK_NOTHROW(none.check());
}

TEST_CASE("engine: a CPU has one event queued at most; times past the key's range are refused") {
  Engine e;
  std::vector<int> log;
  Recorder cpu(1), timer;
  cpu.log = timer.log = &log;
  cpu.id = 1;
  timer.id = 0;
  e.schedule(10, &cpu);
  CHECK_THROWS_AS(e.schedule(20, &cpu), std::logic_error);  // its one event is queued
  e.schedule(10, &timer);
  e.schedule(10, &timer);  // timers may queue several
  CHECK_THROWS_AS(e.schedule(Engine::kMaxTime, &timer), std::logic_error);
  e.run();
  CHECK(log == std::vector<int>{0, 0, 1});
  e.schedule(30, &cpu);  // fired: it may be queued again
  e.run();
  CHECK(log.back() == 1);
}
