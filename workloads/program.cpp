#include "workloads/program.h"

#include <algorithm>

namespace slubsim {

namespace {
std::vector<Step> select(const std::vector<Step>& steps, const std::string& kernel) {
  std::vector<Step> out;
  for (const Step& s : steps) {
    if (!s.kernels.empty() && std::find(s.kernels.begin(), s.kernels.end(), kernel) == s.kernels.end())
      continue;
    Step t = s;
    t.body = select(s.body, kernel);
    out.push_back(std::move(t));
  }
  return out;
}
}  // namespace

Program select_kernel(const Program& p, const std::string& kernel) {
  Program out = p;
  out.steps = select(p.steps, kernel);
  for (Role& r : out.roles) r.steps = select(r.steps, kernel);
  return out;
}

std::vector<const std::vector<Step>*> step_lists(const Program& p) {
  std::vector<const std::vector<Step>*> out{&p.steps};
  for (const Role& r : p.roles) out.push_back(&r.steps);
  return out;
}

bool program_fills_pool(const Program& p, int pool) {
  for (const auto* steps : step_lists(p))
    if (fills_pool(*steps, pool)) return true;
  return false;
}

bool fills_pool(const std::vector<Step>& steps, int pool) {
  for (const Step& s : steps) {
    if ((fills_its_pool(s) && s.pool == pool) || fills_pool(s.body, pool)) return true;
  }
  return false;
}

namespace {
int unfilled_in(const std::vector<Step>& steps, const Program& p) {
  for (const Step& s : steps) {
    if (takes_from_its_pool(s) && !program_fills_pool(p, s.pool)) return s.pool;
    if (int u = unfilled_in(s.body, p); u >= 0) return u;
  }
  return -1;
}
}  // namespace

int unfilled_pool(const Program& p) {
  for (const auto* steps : step_lists(p))
    if (int u = unfilled_in(*steps, p); u >= 0) return u;
  return -1;
}

}  // namespace slubsim
