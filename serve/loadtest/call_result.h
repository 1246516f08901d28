// CallResult: what the client saw of one request it sent — when it was due, when its bytes
// went out, when each token chunk came back, the usage block, the HTTP status, and, for a
// failed request, why (ErrorCause). to_record() turns it into the RequestRecord the metrics,
// requests.csv and summary.json share with `servesim simulate`.
//
// Times are wall-clock seconds (steady clock) since the load test started. A request's
// latency counts from when it was due (RequestSpec::arrival_s), not from when it was sent, so
// a server that stalls cannot hide the requests it held back (no coordinated omission, as in
// wrk2). A plain value; thread-safety: none.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/request_record.h"
#include "sim/workload/request_source.h"

namespace servesim {

enum class ErrorCause {
  kNone,
  kRefused,      // connect: connection refused (nothing listens)
  kNetwork,      // connect or I/O failed otherwise (unreachable, name not resolved)
  kReset,        // the connection was reset or closed before the response ended
  kTimeout,      // --timeout-s passed (from the due time) before the response ended
  kHttpStatus,   // the server answered with a status other than 200
  kMalformed,    // not a valid HTTP response, event stream or chunk; no [DONE]; no tokens
  kStreamError,  // the stream carried the server's {"error": ...} object
  kCancelled,    // the load test stopped (Ctrl-C, --max-duration-s) while it was in flight
};
inline constexpr int kNumErrorCauses = 9;

std::string_view to_string(ErrorCause cause);

struct CallResult {
  RequestSpec spec;                              // arrival_s: when it was due
  double sent_s = RequestRecord::kNever;         // seconds; its request fully written
  double first_token_s = RequestRecord::kNever;  // seconds; first chunk with output
  double last_token_s = RequestRecord::kNever;   // seconds; last chunk with output
  std::vector<double> gaps_s;                    // seconds between consecutive output chunks (ITL)
  int token_chunks = 0;                          // chunks that carried output
  std::optional<int> usage_prompt_tokens;        // tokens, the server's usage block
  std::optional<int> usage_completion_tokens;    // tokens, the server's usage block
  int http_status = 0;                           // 0 when no response arrived
  ErrorCause cause = ErrorCause::kNone;
  std::string detail;  // for a failure: what happened, one line
  bool reused_connection = false;

  bool ok() const { return cause == ErrorCause::kNone; }
  // Output tokens: the usage block's count when the server sent one, else the chunk count.
  int output_tokens() const { return usage_completion_tokens.value_or(token_chunks); }
  // Prompt tokens: the usage block's when sent, else what was asked for.
  int prompt_tokens() const { return usage_prompt_tokens.value_or(spec.prompt_tokens); }
};

// kOk for a success; kTimedOut for kTimeout; kRejected for every other cause (the server or
// the network refused the request). first_scheduled_s is when the request went out, so the
// record's queueing_s is the client-side delay between due and sent. REQUIRES: not
// kCancelled.
RequestRecord to_record(const CallResult& call);

}  // namespace servesim
