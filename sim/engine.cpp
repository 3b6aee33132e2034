#include "sim/engine.h"

#include <algorithm>
#include <stdexcept>

namespace slubsim {

void Engine::schedule(Time t, Process* p) {
  if (t < now_) throw std::logic_error("engine: event scheduled in the past");
  heap_.push_back({t, seq_++, p});
  std::push_heap(heap_.begin(), heap_.end(), later);
}

bool Engine::step() {
  if (heap_.empty()) return false;
  std::pop_heap(heap_.begin(), heap_.end(), later);
  Event e = heap_.back();
  heap_.pop_back();
  now_ = e.t;
  ++events_;
  e.p->fire();
  return true;
}

}  // namespace slubsim
