// RateLimitSpec: one set of token-bucket limits as a scenario states them — requests per
// second with a burst, and tokens (prompt + output) per minute — for the gateway
// ("service.gateway.rate_limit") and for each tenant ("service.tenants[i].rate_limit").
// TokenBucket (token_bucket.h) enforces each. Immutable after parsing; safe to share.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace servesim {

struct RateLimitSpec {
  double requests_per_s = 0;  // 0: no request limit
  double burst = 0;           // requests the bucket holds; default max(1, requests_per_s)
  double tokens_per_min = 0;  // prompt + output tokens per minute; 0: no token limit

  // `context` prefixes messages ("scenario.json: service.gateway.rate_limit"). At least one
  // limit must be set; unknown keys name the nearest valid one. Throws ConfigError.
  static RateLimitSpec from_json(const nlohmann::json& j, const std::string& context);
};

}  // namespace servesim
