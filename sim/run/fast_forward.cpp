#include "sim/run/fast_forward.h"

#include <algorithm>
#include <stdexcept>

namespace slubsim {

FastForward::FastForward(const FastForwardPlan& plan, World& world, const Grid& grid, std::vector<Cpu*> cpus,
                         std::vector<const Counter*> counters, int ops_per_iteration)
    : plan_(plan), world_(world), grid_(grid), cpus_(std::move(cpus)), counters_(std::move(counters)),
      ops_per_iteration_(std::max(1, ops_per_iteration)) {
  const Time step = grid.step;
  auto aligned = [step](Time t) { return t % step == 0; };
  if (!aligned(plan.until) || !aligned(plan.pilot) || !aligned(plan.every) || !aligned(plan.sample) ||
      plan.sample % (2 * step) != 0 || plan.pilot % (2 * step) != 0 || plan.pilot >= plan.until ||
      plan.quantum <= 0 || (plan.every > 0 && plan.sample >= plan.every))
    throw std::invalid_argument("fast-forward: the plan's times must be whole, even numbers of the grid's step, "
                                "the pilot before the end, samples shorter than their spacing, and the quantum > 0");
  world_.set_quantum(plan.quantum);
}

void FastForward::start() {
  if (!plan_.on()) return;
  for (Cpu* c : cpus_) c->set_pace(0, plan_.pilot / 2);
  go_functional(plan_.pilot);
}

// Each task's iterations in [from, to) join those of the earlier samples: its pace is the time
// per iteration over all of them. A task that made fewer than two takes the tasks' mean.
void FastForward::pace_from(Time from, Time to) {
  const int a = grid_.of(from), b = grid_.of(to);
  iterations_.resize(counters_.size(), 0.0);
  measured_ += to - from;
  double all = 0;
  for (std::size_t t = 0; t < counters_.size(); ++t) {
    iterations_[t] += static_cast<double>(counters_[t]->ops.sum(a, b)) / ops_per_iteration_;
    all += iterations_[t];
  }
  const double mean = counters_.empty() ? 0 : all / static_cast<double>(counters_.size());
  for (std::size_t t = 0; t < counters_.size(); ++t) {
    const double n = iterations_[t] >= 2 ? iterations_[t] : mean;
    cpus_[t]->set_pace(n > 0 ? static_cast<Time>(static_cast<double>(measured_) / n) : measured_);
  }
}

void FastForward::go_functional(Time at) {
  world_.request_switch(Timing::Functional, at, [this, at] {
    pace_from(at - (samples_ == 0 ? plan_.pilot : plan_.sample) / 2, at);
    ++samples_;
    functional_since_ = at;
    Time next = plan_.until;
    if (plan_.every > 0) next = std::min(next, at + plan_.every - plan_.sample);
    go_detailed(next);
  });
}

void FastForward::go_detailed(Time at) {
  world_.request_switch(Timing::Detailed, at, [this, at] {
    functional_ += at - functional_since_;
    for (Cpu* c : cpus_) c->set_pace(0, at + plan_.sample / 2);
    if (at + plan_.sample < plan_.until) go_functional(at + plan_.sample);
  });
}

}  // namespace slubsim
