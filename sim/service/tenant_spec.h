// TenantSpec: one tenant of the service ("service.tenants"): a share of the traffic, a
// request priority, and the quotas an API gateway keeps per API key — token buckets
// (requests/s with a burst, tokens/min) and a concurrency cap — as LiteLLM's per-key
// rpm / tpm / max_parallel_requests and Kong's or Envoy's per-consumer rate limits do.
//
//   "tenants": [{"name": "interactive", "share": 0.3, "priority": 0,
//                "rate_limit": {"requests_per_s": 5, "burst": 10, "tokens_per_min": 200000},
//                "max_in_flight": 16, "pool": "shared"},
//               {"name": "batch", "share": 0.7, "priority": 1,
//                "rate_limit": {"tokens_per_min": 600000}}]
//
// "pool" names one of service.pools: the client-side connection pool the tenant's requests
// take a connection from before they are sent (ServiceSpec resolves it to `pool_index`).
// The priority becomes the request's vLLM priority (smaller is served first); it orders the
// engine's queue only under engine.scheduling_policy "priority", as in vLLM. Parsing is strict:
// shares > 0 that sum to 1 (within 1e-9), unique non-empty names, integer priorities, limits
// > 0, unknown keys named with the nearest valid one; ConfigError otherwise. Immutable after
// parsing; safe to share.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/metrics/tenant_metrics.h"
#include "sim/service/rate_limit_spec.h"

namespace servesim {

struct TenantSpec {
  std::string name;
  double share = 0;  // fraction of the arrivals (open loop) or of the clients (closed loop)
  int priority = 0;  // vLLM request priority: smaller goes first under the priority policy
  std::optional<RateLimitSpec> rate_limit;  // the tenant's own buckets, besides the gateway's
  int64_t max_in_flight = 0;  // requests of the tenant past the gateway at once; 0 = no cap
  std::string pool;           // a service.pools name; "" = no client-side connection limit
  int pool_index = -1;        // index into ServiceSpec::pools; -1 without a pool

  // `path` names the list ("scenario.json: service.tenants"). Throws ConfigError.
  static std::vector<TenantSpec> list_from_json(const nlohmann::json& j, const std::string& path);
};

// Names and priorities, as the per-tenant metrics label them.
std::vector<TenantLabel> tenant_labels(const std::vector<TenantSpec>& tenants);

// The one-line warning to print when tenants differ in priority but the engine schedules
// first come, first served (priorities then change nothing); empty when there is none to give.
std::string tenant_priority_warning(const std::vector<TenantSpec>& tenants, bool priority_policy);

}  // namespace servesim
