// StepwiseMetrics: one MetricsCollector per step of a stepped-concurrency workload, so a load
// test reports latency and throughput at 1, 2, 4, ... clients side by side. Records and
// gaps are routed by RequestRecord::step_index; each step leaves out requests that arrive in
// its first step_warmup_s seconds (the ramp while the new clients' first requests fill the
// batch), and measures throughput from the end of that warm-up to its last finish.
// Memory and thread-safety as MetricsCollector.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/metrics/metrics.h"

namespace servesim {

class StepwiseMetrics {
 public:
  // options.warmup_s and warmup_requests are replaced per step. Throws ConfigError for
  // steps < 1, step_duration_s <= 0, or a step_warmup_s outside [0, step_duration_s).
  StepwiseMetrics(int steps, double step_duration_s, double step_warmup_s,
                  const MetricsOptions& options);

  // A step_index outside [0, steps) is a programming error (std::out_of_range).
  void add(const RequestRecord& record);
  void add_itl(double gap_s, uint64_t request_id, double request_arrival_s, int step_index);

  int steps() const { return static_cast<int>(collectors_.size()); }
  MetricsSummary summary(int step) const { return collectors_.at(step).summary(); }

 private:
  std::vector<MetricsCollector> collectors_;
};

}  // namespace servesim
