#include "calibration/measured/measured_run.h"

#include <algorithm>
#include <cmath>

#include "sim/core/request_record.h"

namespace servesim {

bool MeasuredRun::has_arrivals() const {
  return !requests.empty() && std::all_of(requests.begin(), requests.end(),
                                          [](const auto& r) { return std::isfinite(r.arrival_s); });
}

namespace {

RequestRecord record_of(const MeasuredRequest& r, uint64_t id) {
  RequestRecord record;
  record.id = id;
  record.arrival_s = std::isfinite(r.arrival_s) ? r.arrival_s : 0.0;
  record.prompt_tokens = r.prompt_tokens;
  record.output_tokens = r.output_tokens;
  if (!r.ok) {
    record.status = RequestOutcome::kRejected;
    return record;
  }
  // Queueing is not measured; first_scheduled_s at the send keeps NaN out of its sample.
  record.first_scheduled_s = record.arrival_s;
  record.first_token_s = record.arrival_s + r.ttft_s;
  record.finish_s = record.arrival_s + r.e2e_s;
  return record;
}

}  // namespace

MetricsSummary summary_of_requests(const std::vector<MeasuredRequest>& requests) {
  MetricsCollector collector;
  for (size_t i = 0; i < requests.size(); ++i) {
    const RequestRecord record = record_of(requests[i], i);
    collector.add(record);
    if (!requests[i].ok) continue;
    for (double gap_s : requests[i].itl_s) collector.add_itl(gap_s, i, record.arrival_s);
  }
  MetricsSummary s = collector.summary();
  s.queueing = LatencyStats{};
  s.time = TimeBreakdown{};
  // The GPUs behind a measured run are the caller's to know, not the source's.
  s.output_throughput_per_gpu = MetricsSummary::kNone;
  s.total_token_throughput_per_gpu = MetricsSummary::kNone;
  return s;
}

}  // namespace servesim
