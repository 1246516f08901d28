#include "sim/service/rate_limit_spec.h"

#include <algorithm>
#include <limits>

#include "models/json_object_reader.h"

namespace servesim {
namespace {

double non_negative(JsonObjectReader& r, const std::string& key) {
  const double v = r.optional<double>(key, 0.0);
  if (!(v >= 0) || v == std::numeric_limits<double>::infinity()) {
    r.fail(key, "must be a finite number >= 0");
  }
  return v;
}

}  // namespace

RateLimitSpec RateLimitSpec::from_json(const nlohmann::json& j, const std::string& context) {
  JsonObjectReader r(j, context);
  RateLimitSpec l;
  l.requests_per_s = non_negative(r, "requests_per_s");
  l.burst = non_negative(r, "burst");
  l.tokens_per_min = non_negative(r, "tokens_per_min");
  if (l.requests_per_s == 0 && l.tokens_per_min == 0) {
    r.fail("requests_per_s", "or tokens_per_min must be > 0 (drop rate_limit for no limit)");
  }
  if (l.burst > 0 && l.requests_per_s == 0) r.fail("burst", "needs requests_per_s");
  if (l.requests_per_s > 0 && l.burst == 0) l.burst = std::max(1.0, l.requests_per_s);
  r.finish();
  return l;
}

}  // namespace servesim
