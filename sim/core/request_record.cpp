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

}  // namespace servesim
