#include "plan/plan_text.h"

#include <cstdio>

namespace servesim {

std::string format_number(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

std::string load_text(PlanLoad load, double value, bool sessions) {
  if (load == PlanLoad::kConcurrency) return format_number("%.0f clients", value);
  return format_number(sessions ? "%.3g sessions/s" : "%.3g req/s", value);
}

}  // namespace servesim
