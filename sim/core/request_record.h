// RequestRecord: the outcome of one simulated request, as the metrics and the per-request
// output (CSV/JSONL) see it. A plain value; the simulation fills it when the request leaves.
//
// Invariants for a kOk record: arrival_s <= first_scheduled_s <= first_token_s <= finish_s.
// For rejected/timed-out records the times that never happened are NaN.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

namespace servesim {

// How a request left. Named apart from the scheduler's RequestStatus (engine/sched/request.h),
// which tracks a live request's life cycle; this is the user-visible outcome.
enum class RequestOutcome : uint8_t {
  kOk,        // finished generating all its output tokens
  kRejected,  // refused (too long for max_model_len, rate limited, queue full)
  kTimedOut,  // its deadline passed before it finished
};

std::string_view to_string(RequestOutcome outcome);

// Why a request failed; kNone for an ok one. Counted apart in the error rate.
enum class FailureCause : uint8_t {
  kNone,
  kTooLong,      // prompt + output beyond max_model_len (HTTP 400)
  kRateLimited,  // refused by the gateway's rate limit (HTTP 429)
  kQueueFull,    // a station's queue was full (HTTP 503)
  kTimedOut,     // the client's or the gateway's timeout passed first (HTTP 504 at the gateway)
};
inline constexpr size_t kNumFailureCauses = 5;  // FailureCause values, kNone included

std::string_view to_string(FailureCause cause);

// Which limit refused a rate-limited request (HTTP 429): the gateway's own buckets, or the
// request's tenant's buckets and concurrency quota (service.tenants). kNone otherwise.
enum class RateLimitKind : uint8_t {
  kNone,
  kGatewayRequests,  // gateway.rate_limit.requests_per_s
  kGatewayTokens,    // gateway.rate_limit.tokens_per_min
  kTenantRequests,   // the tenant's rate_limit.requests_per_s
  kTenantTokens,     // the tenant's rate_limit.tokens_per_min
  kTenantInFlight,   // the tenant's max_in_flight
};
inline constexpr size_t kNumRateLimitKinds = 6;  // RateLimitKind values, kNone included

// "gateway.requests_per_s", "tokens_per_min", "max_in_flight", ... ("none" for kNone).
std::string_view to_string(RateLimitKind kind);

// Where an ok request's time went, seconds: the segments sum to its E2E latency, and those up
// to the first token plus first_token_stream_s to its TTFT. Without a service path the
// request reaches the engine when it is sent, so only the engine's segments are non-zero.
// A retried request's segments are those of its last attempt plus retry_s before it.
struct RequestSegments {
  double retry_s = 0;         // first send to the last attempt's: failed tries + backoff
  double network_s = 0;       // client to server, one way
  double gateway_s = 0;       // gateway queue + service (rate limit included)
  double frontend_s = 0;      // API server intake: queue, parse, template, tokenise
  double pre_model_s = 0;     // pre-model stages (retrieval, rerank, ...), in all
  double engine_queue_s = 0;  // engine arrival to first scheduled
  double prefill_s = 0;       // first scheduled to the engine's first token
  // Disaggregated deployments (DisaggregatedFlow): the prefill's end to the decode instance's
  // taking the request (hand-off, its admission wait) and its first step's start after the
  // load; then the KV transfer, its wait for the link included. With KV offload, kv_transfer
  // is the load from the host tier before the first scheduling. Zero otherwise.
  double decode_queue_s = 0;
  double kv_transfer_s = 0;
  double decode_s = 0;              // the engine's first token to its last
  double stream_s = 0;              // the engine's last token to the client (output + network)
  double first_token_stream_s = 0;  // the engine's first token to the client
  // Waiting for a connection of the tenant's client-side pool (service.pools) before the last
  // attempt's send; it comes first, before network_s.
  double pool_s = 0;

  // The engine's waits (its queue, and a disaggregated decode instance's) and its work before
  // the first token (prefill, and a disaggregated KV transfer): how agent paths count them.
  double engine_wait_s() const { return engine_queue_s + decode_queue_s; }
  double engine_prefill_s() const { return prefill_s + kv_transfer_s; }
};

struct RequestRecord {
  static constexpr double kNever = std::numeric_limits<double>::quiet_NaN();

  uint64_t id = 0;
  int replica = -1;                   // which replica served it; -1 if none
  double arrival_s = 0.0;             // seconds, simulated
  double first_scheduled_s = kNever;  // seconds; first time a step included it
  double first_token_s = kNever;      // seconds; end of the step that produced token 1
  double finish_s = kNever;           // seconds; end of the step with its last token
  int prompt_tokens = 0;              // tokens
  int output_tokens = 0;              // tokens actually generated
  int cached_prompt_tokens = 0;       // tokens served from the prefix cache
  int preemptions = 0;                // times it was preempted (recompute or swap)
  RequestOutcome status = RequestOutcome::kOk;
  FailureCause cause = FailureCause::kNone;
  int step_index = 0;   // stepped-concurrency step it arrived in; else 0
  int attempts = 1;     // attempts the client made, the first included (1 = no retry)
  uint32_t tenant = 0;  // index into service.tenants; 0 without tenants
  // The limit behind a kRateLimited cause (kNone for any other).
  RateLimitKind limit = RateLimitKind::kNone;
  RequestSegments segments;  // ok records only

  double queueing_s() const { return first_scheduled_s - arrival_s; }
  double ttft_s() const { return first_token_s - arrival_s; }
  // Mean time per output token after the first; NaN with fewer than two output tokens
  // (vLLM's benchmark leaves such requests out of TPOT too).
  double tpot_s() const {
    return output_tokens > 1 ? (finish_s - first_token_s) / (output_tokens - 1) : kNever;
  }
  double e2e_s() const { return finish_s - arrival_s; }
};

}  // namespace servesim
