#include "serve/loadtest/call_result.h"

namespace servesim {

std::string_view to_string(ErrorCause cause) {
  switch (cause) {
    case ErrorCause::kNone:
      return "ok";
    case ErrorCause::kRefused:
      return "refused";
    case ErrorCause::kNetwork:
      return "network";
    case ErrorCause::kReset:
      return "reset";
    case ErrorCause::kTimeout:
      return "timeout";
    case ErrorCause::kHttpStatus:
      return "http_status";
    case ErrorCause::kMalformed:
      return "malformed";
    case ErrorCause::kStreamError:
      return "stream_error";
    case ErrorCause::kCancelled:
      return "cancelled";
  }
  return "?";
}

RequestRecord to_record(const CallResult& call) {
  RequestRecord r;
  r.id = call.spec.id;
  r.arrival_s = call.spec.arrival_s;
  r.step_index = call.spec.step_index;
  r.prompt_tokens = call.prompt_tokens();
  r.first_scheduled_s = call.sent_s;
  if (call.ok()) {
    r.replica = 0;
    r.status = RequestOutcome::kOk;
    r.first_token_s = call.first_token_s;
    r.finish_s = call.last_token_s;
    r.output_tokens = call.output_tokens();
  } else {
    r.status =
        call.cause == ErrorCause::kTimeout ? RequestOutcome::kTimedOut : RequestOutcome::kRejected;
  }
  return r;
}

}  // namespace servesim
