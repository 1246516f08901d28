#include "sim/metrics/stepwise_metrics.h"

#include <cmath>
#include <string>

#include "models/config_error.h"
#include "sim/core/csv_line.h"

namespace servesim {

StepwiseMetrics::StepwiseMetrics(int steps, double step_duration_s, double step_warmup_s,
                                 const MetricsOptions& options) {
  if (steps < 1) throw ConfigError("metrics.steps: must be >= 1, got " + std::to_string(steps));
  if (!(step_duration_s > 0.0) || !std::isfinite(step_duration_s)) {
    throw ConfigError("metrics.step_duration_s: must be > 0, got " +
                      format_number(step_duration_s));
  }
  if (!(step_warmup_s >= 0.0 && step_warmup_s < step_duration_s)) {
    throw ConfigError("metrics.step_warmup_s: must be in [0, step_duration_s = " +
                      format_number(step_duration_s) + "), got " + format_number(step_warmup_s));
  }
  collectors_.reserve(static_cast<size_t>(steps));
  for (int k = 0; k < steps; ++k) {
    MetricsOptions step_options = options;
    step_options.warmup_requests = 0;
    step_options.warmup_s = k * step_duration_s + step_warmup_s;
    collectors_.emplace_back(step_options);
  }
}

void StepwiseMetrics::add(const RequestRecord& record) {
  collectors_.at(static_cast<size_t>(record.step_index)).add(record);
}

void StepwiseMetrics::add_itl(double gap_s, uint64_t request_id, double request_arrival_s,
                              int step_index) {
  collectors_.at(static_cast<size_t>(step_index)).add_itl(gap_s, request_id, request_arrival_s);
}

}  // namespace servesim
