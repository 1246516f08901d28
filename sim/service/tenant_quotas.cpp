#include "sim/service/tenant_quotas.h"

#include <algorithm>
#include <stdexcept>

namespace servesim {

TenantQuotas::TenantQuotas(const std::vector<TenantSpec>& tenants) {
  for (const TenantSpec& t : tenants) {
    Quota q;
    q.max_in_flight = t.max_in_flight;
    if (t.rate_limit && t.rate_limit->requests_per_s > 0) {
      q.requests.emplace(t.rate_limit->requests_per_s, t.rate_limit->burst);
    }
    if (t.rate_limit && t.rate_limit->tokens_per_min > 0) {
      q.tokens.emplace(t.rate_limit->tokens_per_min / 60.0, t.rate_limit->tokens_per_min);
    }
    quotas_.push_back(std::move(q));
  }
}

RateLimitKind TenantQuotas::check(uint32_t tenant, double tokens, double now_s) const {
  const Quota& q = quotas_.at(tenant);
  if (q.max_in_flight > 0 && q.in_flight >= q.max_in_flight) return RateLimitKind::kTenantInFlight;
  if (q.requests && q.requests->level(now_s) < 1.0) return RateLimitKind::kTenantRequests;
  if (q.tokens && q.tokens->level(now_s) < tokens) return RateLimitKind::kTenantTokens;
  return RateLimitKind::kNone;
}

void TenantQuotas::admit(uint32_t tenant, double tokens, double now_s) {
  Quota& q = quotas_.at(tenant);
  const bool took = (!q.requests || q.requests->try_take(now_s, 1.0)) &&
                    (!q.tokens || q.tokens->try_take(now_s, tokens));
  if (!took) throw std::logic_error("TenantQuotas: admit() without a passing check()");
  q.peak_in_flight = std::max(q.peak_in_flight, ++q.in_flight);
}

void TenantQuotas::release(uint32_t tenant) {
  Quota& q = quotas_.at(tenant);
  if (q.in_flight == 0) throw std::logic_error("TenantQuotas: release() without admit()");
  --q.in_flight;
}

}  // namespace servesim
