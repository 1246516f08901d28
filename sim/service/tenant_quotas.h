// TenantQuotas: every tenant's own limits at the gateway — a requests/s bucket (with its
// burst), a tokens/min bucket (prompt + output tokens; it holds one minute's worth) and a cap
// on the tenant's requests in flight (from passing the gateway until the client has the
// answer or its error) — checked where a request meets the first station, besides the
// gateway's own rate limit.
//
// A request passes only if every limit of its tenant admits it; check() looks without taking,
// so a request refused by one limit costs the others nothing (admit() then takes from all).
// Invariant: in_flight(t) <= max_in_flight of t whenever it has one. A plain value; not
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/core/request_record.h"
#include "sim/service/tenant_spec.h"
#include "sim/service/token_bucket.h"

namespace servesim {

class TenantQuotas {
 public:
  explicit TenantQuotas(const std::vector<TenantSpec>& tenants);

  // The first of the tenant's limits (max_in_flight, requests_per_s, tokens_per_min) that
  // refuses a request of `tokens` tokens at now_s; kNone when all admit it. Takes nothing.
  RateLimitKind check(uint32_t tenant, double tokens, double now_s) const;
  // Takes the request's credits and an in-flight slot. REQUIRES: check() gave kNone at now_s.
  void admit(uint32_t tenant, double tokens, double now_s);
  // An admitted request is over: its slot is free again.
  void release(uint32_t tenant);

  int64_t in_flight(uint32_t tenant) const { return quotas_[tenant].in_flight; }
  int64_t peak_in_flight(uint32_t tenant) const { return quotas_[tenant].peak_in_flight; }

 private:
  struct Quota {
    std::optional<TokenBucket> requests;
    std::optional<TokenBucket> tokens;
    int64_t max_in_flight = 0;  // 0: no cap
    int64_t in_flight = 0;
    int64_t peak_in_flight = 0;
  };
  std::vector<Quota> quotas_;
};

}  // namespace servesim
