// Number formatting shared by the planner's reasons, suggestions and errors and by the
// report's renderings, so a figure reads the same wherever it appears.
// Thread-safety: pure functions. Invariant: `format` holds one double conversion (%g, %.2f, ...).
#pragma once

#include <string>

#include "plan/plan_report.h"

namespace servesim {

// snprintf of one value; the result is at most 63 characters.
std::string format_number(const char* format, double value);

// A load as the target counts it: "12.5 req/s", "0.4 sessions/s" (a rate of multi-turn
// sessions started) or "64 clients".
std::string load_text(PlanLoad load, double value, bool sessions);

}  // namespace servesim
