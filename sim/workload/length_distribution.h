// LengthDistribution: a token count (prompt, output, user turn, number of turns) drawn from
// a Distribution, rounded to the nearest integer, never below 1 and never above
// kMaxLengthTokens.
// Value type; const methods are safe to share across threads.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sim/core/rng.h"
#include "sim/workload/distribution.h"

namespace servesim {

// The longest length a distribution may give (tokens): 1e8, as for a shared prefix. It is far
// beyond any model's context (the longest are about 1e7 tokens), so no real workload meets
// it, and a prompt made of a shared prefix, a history and new tokens stays well inside an int.
inline constexpr int kMaxLengthTokens = 100'000'000;

class LengthDistribution {
 public:
  static LengthDistribution fixed(int tokens);
  // See Distribution::from_json; lengths are integers in [1, kMaxLengthTokens]: a value,
  // bound or mean beyond that is a ConfigError naming the field. Samples of an unbounded
  // distribution are clamped to it.
  static LengthDistribution from_json(const nlohmann::json& j, const std::string& path,
                                      const std::string& base_dir);

  int sample(Rng& rng) const;
  double mean() const { return dist_.mean(); }
  const Distribution& distribution() const { return dist_; }

 private:
  Distribution dist_ = Distribution::fixed(1);
};

}  // namespace servesim
