// latency_stats_of(): a latency sample summarised as LatencyStats — its count, its mean from the
// caller's running sum (a sum of doubles, exact where the float samples are rounded), and
// p50/p90/p95/p99 with numpy's linear interpolation (percentile.h, as vLLM's benchmark reports
// them) and its maximum. Shared by the request metrics and the agent sessions' so both report
// the same statistics the same way. Stateless; thread-safe.
#pragma once

#include <vector>

#include "sim/metrics/metrics.h"

namespace servesim {

// NaN fields (count 0) for an empty sample.
LatencyStats latency_stats_of(const std::vector<float>& samples_s, double sum_s);

}  // namespace servesim
