// TokenBucket: the rate limiter gateways put in front of an LLM API — a bucket of
// `capacity` credits refilled continuously at `rate_per_s`; a request passes when the bucket
// holds what it costs (1 per request for a requests/s limit, its tokens for a tokens/min
// limit) and is refused otherwise (HTTP 429), without taking anything.
//
// Conformance: over any interval of length T starting full, at most capacity + rate × T
// credits pass. A plain value; not thread-safe.
#pragma once

namespace servesim {

class TokenBucket {
 public:
  // REQUIRES: rate_per_s > 0, capacity > 0. Starts full.
  TokenBucket(double rate_per_s, double capacity);

  // Takes `cost` credits at now_s if the bucket holds them; false (nothing taken) otherwise.
  // REQUIRES: now_s never decreases between calls.
  bool try_take(double now_s, double cost);
  double level(double now_s) const;  // credits available at now_s

 private:
  double rate_per_s_;
  double capacity_;
  double level_;
  double last_s_ = 0;  // seconds; when level_ was computed
};

}  // namespace servesim
