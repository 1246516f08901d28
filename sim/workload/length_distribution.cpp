#include "sim/workload/length_distribution.h"

#include <algorithm>
#include <cmath>

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
  return d;
}

int LengthDistribution::sample(Rng& rng) const {
  // Clamp before converting so an unbounded max cannot overflow the int.
  const double v = std::clamp(std::round(dist_.sample(rng)), 1.0, 2147483647.0);
  return static_cast<int>(v);
}

}  // namespace servesim
