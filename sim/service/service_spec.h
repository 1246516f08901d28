// ServiceSpec: the request path above the engine, read from a scenario's "service" block —
// the network between clients and the deployment, an optional gateway (with its rate limit),
// the API server frontend (request parsing and tokenisation on the way in, detokenisation and
// stream serialisation of every engine step's output on the way out), and pre-model stages
// such as retrieval or reranking. docs/service-layer.md has the schema and the source of
// every default; docs/config-reference.md lists the keys.
//
//   "service": "none"            the engine alone, as an in-process benchmark measures it
//   "service": {"network": {...}, "gateway": {...}, "frontend": {...}, "stages": [...],
//               "client": {...}, "pools": [...], "tenants": [...]}
//                                (client: timeout and retries, see client_spec.h; tenants:
//                                shares, priorities and quotas, see tenant_spec.h; pools:
//                                client-side connection pools the tenants name)
//
// A station's service time for a job is (base + per-token terms) × a variability factor
// (lognormal with mean 1 and the given coefficient of variation): CPU work varies, and a
// constant would let identical clients stay in lock-step forever.
// Parsing is strict (unknown keys name the nearest valid one; numbers range-checked) and
// throws ConfigError. Immutable after parsing; safe to share.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/service/client_spec.h"
#include "sim/service/rate_limit_spec.h"
#include "sim/service/tenant_spec.h"
#include "sim/workload/distribution.h"

namespace servesim {

struct StationSpec {
  std::string name;
  int workers = 1;             // jobs in service at once (processes × threads). >= 1
  int64_t queue_capacity = 0;  // jobs allowed to wait; 0 = unbounded
  Distribution request_s = Distribution::fixed(0.0);  // seconds per request, base term
  double per_prompt_token_s = 0;                      // seconds per prompt token
  double cv = 0;  // coefficient of variation of each job's service time (lognormal factor)
};

// vLLM's OpenAI API server: per request on the way in, per engine step on the way out.
struct FrontendSpec {
  StationSpec station;                             // intake: parse, chat template, tokenise
  Distribution step_s = Distribution::fixed(0.0);  // seconds per engine step's output batch
  double per_output_token_s = 0;                   // seconds per streamed token (detok + SSE)
};

// A client-side HTTP connection pool ("service.pools"): at most `connections` requests of the
// tenants that name it are on their way or being answered at once (one request per keep-alive
// connection, as HTTP/1.1 clients such as httpx and aiohttp pool them); the others wait for a
// free connection in first-come, first-served order. One pool per tenant is the "every agent
// keeps its own connections" setup; one pool that every tenant names is a global limit.
// A waiter gives up after wait_timeout_s (httpx's pool timeout) and fails as timed out, so a
// caller can fail fast instead of queueing into its own deadline.
struct ConnectionPoolSpec {
  std::string name;
  int connections = 0;        // >= 1
  double wait_timeout_s = 0;  // seconds a request may wait for a connection; 0 = no limit
};

struct ServiceSpec {
  bool enabled = false;  // false: "none", requests reach the engine when sent
  Distribution rtt_s = Distribution::fixed(0.0);  // client <-> server round trip, seconds
  std::optional<StationSpec> gateway;
  std::optional<RateLimitSpec> rate_limit;  // at the gateway (or the frontend without one)
  // Seconds from a request's arrival at the gateway until its first token must have left the
  // API server, else the gateway answers 504 (timed_out); 0 = no gateway timeout.
  double gateway_timeout_s = 0;
  ClientSpec client;  // the clients' timeout and retries ("service.client")
  FrontendSpec frontend;
  std::vector<StationSpec> stages;        // pre-model stages, in order
  std::vector<TenantSpec> tenants;        // empty: one anonymous tenant, no per-tenant limits
  std::vector<ConnectionPoolSpec> pools;  // each named by at least one tenant's "pool"

  // `path` prefixes messages ("scenario.json: service"). Throws ConfigError.
  static ServiceSpec from_json(const nlohmann::json& j, const std::string& path,
                               const std::string& base_dir);
};

}  // namespace servesim
