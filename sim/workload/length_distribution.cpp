#include "sim/workload/length_distribution.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "models/config_error.h"
#include "sim/core/csv_line.h"

namespace servesim {

LengthDistribution LengthDistribution::fixed(int tokens) {
  LengthDistribution d;
  d.dist_ = Distribution::fixed(tokens);
  return d;
}

LengthDistribution LengthDistribution::from_json(const nlohmann::json& j, const std::string& path,
                                                 const std::string& base_dir) {
  LengthDistribution d;
  d.dist_ = Distribution::from_json(j, path, base_dir, 1.0, true);
  const Distribution& dist = d.dist_;
  const double largest = std::isfinite(dist.max()) ? dist.max() : dist.min();
  if (largest > kMaxLengthTokens || dist.mean() > kMaxLengthTokens) {
    throw ConfigError(path + ": lengths must be at most " + std::to_string(kMaxLengthTokens) +
                      " tokens (beyond any model's context), got " +
                      (largest > kMaxLengthTokens ? "a bound of " + format_number(largest)
                                                  : "a mean of " + format_number(dist.mean())));
  }
  return d;
}

int LengthDistribution::sample(Rng& rng) const {
  // Clamp before converting: an unbounded distribution's tail stops at the longest length.
  const double v = std::clamp(std::round(dist_.sample(rng)), 1.0, double{kMaxLengthTokens});
  return static_cast<int>(v);
}

}  // namespace servesim
