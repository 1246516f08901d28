#include "sim/core/request_record.h"

namespace servesim {

std::string_view to_string(RequestOutcome outcome) {
  switch (outcome) {
    case RequestOutcome::kOk:
      return "ok";
    case RequestOutcome::kRejected:
      return "rejected";
    case RequestOutcome::kTimedOut:
      return "timed_out";
  }
  return "unknown";
}

std::string_view to_string(FailureCause cause) {
  switch (cause) {
    case FailureCause::kNone:
      return "none";
    case FailureCause::kTooLong:
      return "too_long";
    case FailureCause::kRateLimited:
      return "rate_limited";
    case FailureCause::kQueueFull:
      return "queue_full";
    case FailureCause::kTimedOut:
      return "timed_out";
  }
  return "unknown";
}

std::string_view to_string(RateLimitKind kind) {
  switch (kind) {
    case RateLimitKind::kNone:
      return "none";
    case RateLimitKind::kGatewayRequests:
      return "gateway.requests_per_s";
    case RateLimitKind::kGatewayTokens:
      return "gateway.tokens_per_min";
    case RateLimitKind::kTenantRequests:
      return "requests_per_s";
    case RateLimitKind::kTenantTokens:
      return "tokens_per_min";
    case RateLimitKind::kTenantInFlight:
      return "max_in_flight";
  }
  return "unknown";
}

}  // namespace servesim
