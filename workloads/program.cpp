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

}  // namespace slubsim
