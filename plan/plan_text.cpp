#include "plan/plan_text.h"

#include <cstdio>

namespace servesim {

std::string format_number(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

std::string load_text(PlanLoad load, double value) {
  return load == PlanLoad::kQps ? format_number("%.3g req/s", value)
                                : format_number("%.0f clients", value);
}

}  // namespace servesim
