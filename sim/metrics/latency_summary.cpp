#include "sim/metrics/latency_summary.h"

#include <algorithm>

#include "sim/metrics/percentile.h"

namespace servesim {

LatencyStats latency_stats_of(const std::vector<float>& samples_s, double sum_s) {
  LatencyStats s;
  s.count = samples_s.size();
  if (samples_s.empty()) return s;
  std::vector<double> sorted(samples_s.begin(), samples_s.end());
  std::sort(sorted.begin(), sorted.end());
  s.mean_s = sum_s / static_cast<double>(sorted.size());
  s.p50_s = percentile_sorted(sorted, 50);
  s.p90_s = percentile_sorted(sorted, 90);
  s.p95_s = percentile_sorted(sorted, 95);
  s.p99_s = percentile_sorted(sorted, 99);
  s.max_s = sorted.back();
  return s;
}

}  // namespace servesim
