#include "calibration/measured_run.h"

#include <algorithm>
#include <cmath>

namespace servesim {

bool MeasuredRun::has_arrivals() const {
  return !requests.empty() && std::all_of(requests.begin(), requests.end(),
                                          [](const auto& r) { return std::isfinite(r.arrival_s); });
}

}  // namespace servesim
