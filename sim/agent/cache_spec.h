// CacheSpec: the caches an agent's steps may consult before doing their work — a tool step's
// result cache (ToolCacheSpec: entries keyed by the call's arguments, valid ttl_s after the
// run that stored them, keys drawn per call from a uniform or Zipf popularity over `keys`
// distinct arguments) and an LLM step's response cache (LlmCacheSpec: an exact or a
// "semantic" hit with fixed probabilities per call, as a hit rate measured on a real cache
// would be given). Each lookup costs lookup_s (a distribution, seconds) whether it hits or not.
// Parsed strictly from a step's "cache" object (docs/agents.md has the keys); each error is
// one line naming the step's key and the fix. Value types, immutable after parsing;
// thread-safe to share.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/core/rng.h"
#include "sim/workload/distribution.h"

namespace servesim {

enum class KeyPopularity { kUniform, kZipf };

struct ToolCacheSpec {
  bool enabled = false;
  double ttl_s = 0;  // seconds an entry stays valid after the run that stored it ended; > 0
  int keys = 1;      // distinct arguments the tool is called with, in [1, kMaxKeys]
  KeyPopularity popularity = KeyPopularity::kUniform;
  double zipf_exponent = 1;                          // zipf: P(key k) ∝ k^-s, k = 1..keys
  Distribution lookup_s = Distribution::fixed(0.0);  // seconds per lookup

  // Zipf keys keep a CDF of one double per key: the cap bounds it at 8 MB per step.
  static constexpr int kMaxKeys = 1'000'000;

  // A key in [0, keys): one uniform draw from `rng`, whatever the popularity.
  int draw_key(Rng& rng) const;
  double key_probability(int key) const;  // the popularity of `key`, for checks and tests

  // `path` names the object for messages ("...steps[2] (\"search\"): cache").
  static ToolCacheSpec from_json(const nlohmann::json& j, const std::string& path,
                                 const std::string& base_dir);

 private:
  std::vector<double> cdf_;  // zipf: P(key <= k) for k = 0..keys-1
};

enum class LlmCacheHit { kMiss, kExact, kSemantic };

struct LlmCacheSpec {
  bool enabled = false;
  double exact_hit_probability = 0;                  // per call, in [0, 1]
  double semantic_hit_probability = 0;               // per call; the two sum to at most 1
  Distribution lookup_s = Distribution::fixed(0.0);  // seconds per lookup

  // One uniform draw from `rng`.
  LlmCacheHit draw(Rng& rng) const;

  static LlmCacheSpec from_json(const nlohmann::json& j, const std::string& path,
                                const std::string& base_dir);
};

}  // namespace servesim
