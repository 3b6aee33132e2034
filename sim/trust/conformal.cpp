#include "sim/trust/conformal.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace slubsim {

namespace {

// Each kind's scoreboard key and its words for the reader, in the enum's order.
struct KindNames {
  const char* key;
  const char* text;
};
constexpr KindNames kKindNames[] = {{"knob", "a sheaf knob within one kernel"},
                                    {"within_tree", "kernels of one source tree"},
                                    {"across_releases", "kernels of different releases"}};

}  // namespace

const char* comparison_key(ComparisonKind k) { return kKindNames[static_cast<int>(k)].key; }
std::optional<ComparisonKind> comparison_of_key(const std::string& key) {
  for (std::size_t k = 0; k < std::size(kKindNames); ++k)
    if (key == kKindNames[k].key) return static_cast<ComparisonKind>(k);
  return std::nullopt;
}

const char* comparison_text(ComparisonKind k) { return kKindNames[static_cast<int>(k)].text; }

std::optional<double> conformal_quantile(std::vector<double> abs_errors, double level) {
  const std::size_t n = abs_errors.size();
  // The rank, computed in integers where the level is a whole percent (0.9 * 11 must be 9.9, not
  // 9.900000000000002 rounded up to 11).
  const double exact = (static_cast<double>(n) + 1) * level;
  const auto rank = static_cast<std::size_t>(std::ceil(exact - 1e-9));
  if (n == 0 || rank > n) return std::nullopt;
  std::nth_element(abs_errors.begin(), abs_errors.begin() + static_cast<std::ptrdiff_t>(rank - 1), abs_errors.end());
  return abs_errors[rank - 1];
}

std::array<double, 2> record_interval(double delta, double half_width, double low, double high) {
  return {std::min(low, delta - half_width), std::max(high, delta + half_width)};
}

std::optional<double> record_half_width(const std::vector<Residual>& residuals, const std::string& table,
                                        ComparisonKind kind, double level) {
  std::vector<double> pool;
  for (const auto& r : residuals)
    if (r.kind == kind && (table.empty() || r.table != table)) pool.push_back(r.abs_error_pp);
  return conformal_quantile(std::move(pool), level);
}

}  // namespace slubsim
