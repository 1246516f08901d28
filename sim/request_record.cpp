#include "sim/request_record.h"

namespace servesim {

std::string_view to_string(RequestStatus status) {
  switch (status) {
    case RequestStatus::kOk:
      return "ok";
    case RequestStatus::kRejected:
      return "rejected";
    case RequestStatus::kTimedOut:
      return "timed_out";
  }
  return "unknown";
}

}  // namespace servesim
