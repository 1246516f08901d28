// Distribution: a real-valued random quantity read from JSON — think times in seconds, or,
// through LengthDistribution, token counts. A small value type (kind + parameters; the
// samples of an empirical one are shared, immutable).
//
// JSON forms (see docs/workloads.md): a bare number (fixed), or an object with "type":
//   fixed {value} | uniform {min, max} | normal {mean, std, [min], [max]} |
//   lognormal {mean, std | mu, sigma, [min], [max]} | exponential {mean, [min], [max]} |
//   empirical {csv, column | values}
// Clipping: normal/lognormal/exponential samples are clamped to [min, max] (not redrawn),
// so the clipped mass piles up at the bounds; lower_bound is the floor the caller allows
// (0 for times, 1 for lengths) and the default min.
// Lognormal mean/std are those of the resulting values (what users measure); mu/sigma are
// those of the underlying normal. Thread-safety: const methods are safe to share.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/core/rng.h"

namespace servesim {

class Distribution {
 public:
  enum class Kind { kFixed, kUniform, kNormal, kLognormal, kExponential, kEmpirical };

  static Distribution fixed(double value);

  // path names the field in messages ("workload.prompt_tokens"); base_dir resolves a
  // relative "csv". integer: every bound and value must be a whole number (lengths).
  // Throws ConfigError.
  static Distribution from_json(const nlohmann::json& j, const std::string& path,
                                const std::string& base_dir, double lower_bound, bool integer);

  double sample(Rng& rng) const;
  Kind kind() const { return kind_; }
  // Mean before clipping (exact for fixed/uniform/empirical).
  double mean() const;
  // The same shape with every value multiplied by factor (a time scaled by a slower or faster
  // machine). REQUIRES: factor > 0 and not an integer (length) distribution.
  Distribution scaled(double factor) const;
  double min() const { return min_; }
  double max() const { return max_; }

 private:
  Kind kind_ = Kind::kFixed;
  double a_ = 0.0;  // fixed: value; uniform: min; normal: mean; lognormal: mu; exp: mean
  double b_ = 0.0;  // uniform: max; normal: std; lognormal: sigma
  double min_ = 0.0;
  double max_ = 0.0;
  bool integer_ = false;
  std::shared_ptr<const std::vector<double>> values_;  // empirical samples
};

}  // namespace servesim
