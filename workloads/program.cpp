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
  return out;
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
    if (takes_from_its_pool(s) && !fills_pool(p.steps, s.pool)) return s.pool;
    if (int u = unfilled_in(s.body, p); u >= 0) return u;
  }
  return -1;
}
}  // namespace

int unfilled_pool(const Program& p) { return unfilled_in(p.steps, p); }

}  // namespace slubsim
