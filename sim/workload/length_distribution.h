// LengthDistribution: a token count (prompt, output, user turn, number of turns) drawn from
// a Distribution, rounded to the nearest integer and never below 1.
// Value type; const methods are safe to share across threads.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sim/core/rng.h"
#include "sim/workload/distribution.h"

namespace servesim {

class LengthDistribution {
 public:
  static LengthDistribution fixed(int tokens);
  // See Distribution::from_json; lengths are integers >= 1. Throws ConfigError.
  static LengthDistribution from_json(const nlohmann::json& j, const std::string& path,
                                      const std::string& base_dir);

  int sample(Rng& rng) const;
  double mean() const { return dist_.mean(); }
  const Distribution& distribution() const { return dist_; }

 private:
  Distribution dist_ = Distribution::fixed(1);
};

}  // namespace servesim
