#include "sim/agent/cache_spec.h"

#include <algorithm>
#include <cmath>

#include "models/config_error.h"
#include "models/json_object_reader.h"
#include "sim/core/csv_line.h"

namespace servesim {
namespace {

constexpr double kMaxZipfExponent = 10;

Distribution lookup_seconds(JsonObjectReader& r, const std::string& base_dir) {
  if (!r.has("lookup_s")) {
    r.raw("lookup_s");
    return Distribution::fixed(0.0);
  }
  return Distribution::from_json(r.raw("lookup_s"), r.context() + ": lookup_s", base_dir, 0.0,
                                 false);
}

double probability(JsonObjectReader& r, const std::string& key) {
  const double p = r.optional<double>(key, 0.0);
  if (!(p >= 0 && p <= 1)) r.fail(key, "must be in [0, 1], got " + format_number(p));
  return p;
}

}  // namespace

int ToolCacheSpec::draw_key(Rng& rng) const {
  const double u = rng.uniform();
  if (popularity == KeyPopularity::kUniform) {
    return std::min(keys - 1, static_cast<int>(u * keys));
  }
  const auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
  return std::min(keys - 1, static_cast<int>(it - cdf_.begin()));
}

double ToolCacheSpec::key_probability(int key) const {
  if (popularity == KeyPopularity::kUniform) return 1.0 / keys;
  const auto k = static_cast<size_t>(key);
  return k == 0 ? cdf_[0] : cdf_[k] - cdf_[k - 1];
}

ToolCacheSpec ToolCacheSpec::from_json(const nlohmann::json& j, const std::string& path,
                                       const std::string& base_dir) {
  JsonObjectReader r(j, path);
  ToolCacheSpec c;
  c.enabled = true;
  c.ttl_s = r.required<double>("ttl_s");
  if (!(c.ttl_s > 0) || !std::isfinite(c.ttl_s)) {
    r.fail("ttl_s", "must be > 0 seconds (how long a stored result stays valid), got " +
                        format_number(c.ttl_s));
  }
  c.keys = r.positive_int("keys");
  if (c.keys > kMaxKeys) {
    r.fail("keys", "must be at most " + std::to_string(kMaxKeys) + " distinct arguments");
  }
  const std::string popularity = r.optional<std::string>("popularity", "uniform");
  if (popularity == "zipf") {
    c.popularity = KeyPopularity::kZipf;
    c.zipf_exponent = r.optional<double>("zipf_exponent", 1.0);
    if (!(c.zipf_exponent >= 0 && c.zipf_exponent <= kMaxZipfExponent)) {
      r.fail("zipf_exponent", "must be in [0, 10] (1 is the classic Zipf law), got " +
                                  format_number(c.zipf_exponent));
    }
    c.cdf_.resize(static_cast<size_t>(c.keys));
    double total = 0;
    for (int k = 0; k < c.keys; ++k) {
      total += std::pow(k + 1.0, -c.zipf_exponent);
      c.cdf_[static_cast<size_t>(k)] = total;
    }
    for (double& p : c.cdf_) p /= total;
  } else if (popularity == "uniform") {
    if (r.has("zipf_exponent")) r.fail("zipf_exponent", "needs \"popularity\": \"zipf\"");
    r.raw("zipf_exponent");
  } else {
    r.fail("popularity", "must be \"uniform\" or \"zipf\", got \"" + popularity + "\"");
  }
  c.lookup_s = lookup_seconds(r, base_dir);
  r.finish();
  return c;
}

LlmCacheHit LlmCacheSpec::draw(Rng& rng) const {
  const double u = rng.uniform();
  if (u < exact_hit_probability) return LlmCacheHit::kExact;
  if (u < exact_hit_probability + semantic_hit_probability) return LlmCacheHit::kSemantic;
  return LlmCacheHit::kMiss;
}

LlmCacheSpec LlmCacheSpec::from_json(const nlohmann::json& j, const std::string& path,
                                     const std::string& base_dir) {
  JsonObjectReader r(j, path);
  LlmCacheSpec c;
  c.enabled = true;
  if (!r.has("exact_hit_probability") && !r.has("semantic_hit_probability")) {
    r.fail("exact_hit_probability",
           "or semantic_hit_probability is required (the share of calls the cache answers)");
  }
  c.exact_hit_probability = probability(r, "exact_hit_probability");
  c.semantic_hit_probability = probability(r, "semantic_hit_probability");
  if (c.exact_hit_probability + c.semantic_hit_probability > 1 + 1e-9) {
    r.fail("semantic_hit_probability",
           "and exact_hit_probability sum to " +
               format_number(c.exact_hit_probability + c.semantic_hit_probability) +
               "; they must sum to at most 1 (the rest are misses)");
  }
  c.lookup_s = lookup_seconds(r, base_dir);
  r.finish();
  return c;
}

}  // namespace servesim
