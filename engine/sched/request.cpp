#include "engine/sched/request.h"

namespace servesim {

std::string_view finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::kNone:
      return "none";
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kAbort:
      return "abort";
    case FinishReason::kRejected:
      return "rejected";
  }
  return "none";
}

}  // namespace servesim
