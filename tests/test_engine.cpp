#include <doctest/doctest.h>

#include <vector>

#include "sim/engine/engine.h"

using namespace slubsim;

namespace {
struct Recorder : Process {
  std::vector<int>* log;
  int id;
  Engine* engine;
  void fire() override { log->push_back(id); }
};
}  // namespace

TEST_CASE("engine: events fire by time, ties in scheduling order") {
  Engine e;
  std::vector<int> log;
  Recorder a{}, b{}, c{};
  a.log = b.log = c.log = &log;
  a.id = 1;
  b.id = 2;
  c.id = 3;
  e.schedule(50, &a);
  e.schedule(10, &b);
  e.schedule(50, &c);
  CHECK(e.may_act_at(9));
  CHECK_FALSE(e.may_act_at(10));  // a tie goes to what was queued first
  e.run();
  CHECK(log == std::vector<int>{2, 1, 3});
  CHECK(e.now() == 50);
  CHECK(e.events() == 3);
  CHECK_THROWS(e.schedule(40, &a));  // the past
}
