// MetricsCollector: turns RequestRecords and per-token gaps into the aggregates vLLM's
// benchmark reports (MetricsSummary): mean/p50/p90/p95/p99/max of TTFT, TPOT, ITL, E2E and
// queueing; request and token throughput (also per GPU); goodput under SLOs; error rate;
// cost per million tokens. A warm-up window (by arrival time and/or by the first N request
// ids) is left out of every aggregate.
//
// Memory: per-request metrics are exact — one float per counted request per metric (20
// bytes a request; 20 MB for a million). ITL uses a QuantileSketch (fixed ~21 KiB,
// <= 0.5% relative error), so nothing is stored per token.
// Percentiles: numpy.percentile linear interpolation (see sim/metrics/percentile.h).
// Latency statistics cover kOk requests only; rejected and timed-out ones count in the
// error rate. Thread-safety: none; one collector per run (merge() is not offered: feed
// records from one thread).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "sim/core/request_record.h"
#include "sim/metrics/quantile_sketch.h"
#include "sim/metrics/time_breakdown.h"

namespace servesim {

struct LatencyStats {
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

  uint64_t count = 0;  // samples behind the numbers; NaN fields when 0
  double mean_s = kNone;
  double p50_s = kNone;
  double p90_s = kNone;
  double p95_s = kNone;
  double p99_s = kNone;
  double max_s = kNone;
};

// A request meets the SLOs when every limit that is set holds.
struct SloSpec {
  std::optional<double> ttft_s;  // seconds
  std::optional<double> tpot_s;  // seconds per output token
  std::optional<double> e2e_s;   // seconds
};

struct MetricsOptions {
  double warmup_s = 0.0;            // seconds; requests arriving earlier are left out
  uint64_t warmup_requests = 0;     // requests with id < this are left out
  int num_gpus = 1;                 // GPUs in the deployment, for per-GPU throughput and cost
  double price_per_gpu_hour = 0.0;  // dollars; 0 leaves cost NaN
  SloSpec slo;                      // goodput counts requests meeting these; none set -> NaN
};

struct MetricsSummary {
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

  uint64_t requests = 0;   // counted (after warm-up), any status
  uint64_t completed = 0;  // kOk
  uint64_t rejected = 0;
  uint64_t timed_out = 0;
  uint64_t excluded_warmup = 0;
  uint64_t input_tokens = 0;   // prompt tokens of completed requests
  uint64_t output_tokens = 0;  // output tokens of completed requests
  uint64_t cached_prompt_tokens = 0;
  uint64_t preemptions = 0;
  uint64_t retries = 0;            // attempts beyond each request's first, in all
  uint64_t retried_requests = 0;   // requests sent more than once
  uint64_t retried_succeeded = 0;  // of those, the ones that completed

  // From the first counted arrival (or warmup_s, if set) to the last counted finish.
  double duration_s = kNone;
  double request_throughput = kNone;  // completed requests per second
  // Counted arrivals per second from the first counted arrival (or warmup_s) to the last:
  // the rate the run's arrivals had, which a finite sample of a random process puts off the
  // rate asked for. kNone with fewer than two counted arrivals.
  double arrival_rate = kNone;
  double input_throughput = kNone;   // prompt tokens per second
  double output_throughput = kNone;  // output tokens per second
  double total_token_throughput = kNone;
  double output_throughput_per_gpu = kNone;
  double total_token_throughput_per_gpu = kNone;
  double goodput = kNone;                // requests per second meeting every SLO
  double slo_attainment = kNone;         // fraction of counted requests meeting every SLO
  double error_rate = kNone;             // (rejected + timed out) / requests, after retries
  double prefix_cache_hit_rate = kNone;  // cached / prompt tokens of completed requests
  double cost_per_million_output_tokens = kNone;  // dollars
  double cost_per_million_tokens = kNone;         // dollars, input + output

  LatencyStats ttft;
  LatencyStats tpot;
  LatencyStats itl;
  LatencyStats e2e;
  LatencyStats queueing;
  TimeBreakdown time;  // where the time of ok requests went; failures by cause
};

class MetricsCollector {
 public:
  // Throws ConfigError for a negative warm-up, num_gpus < 1, a negative price or SLO.
  explicit MetricsCollector(const MetricsOptions& options = {});

  bool in_warmup(uint64_t request_id, double arrival_s) const {
    return arrival_s < options_.warmup_s || request_id < options_.warmup_requests;
  }

  void add(const RequestRecord& record);
  // One inter-token gap of a request (seconds between consecutive output tokens); gaps of
  // warm-up requests are dropped, so pass the request's id and arrival.
  void add_itl(double gap_s, uint64_t request_id, double request_arrival_s);

  uint64_t records_seen() const { return records_seen_; }
  // Sorts copies of the stored samples: O(n log n); call once at the end (or sparingly for
  // live updates).
  MetricsSummary summary() const;

 private:
  MetricsOptions options_;
  uint64_t records_seen_ = 0;
  MetricsSummary counts_;  // counters only; the statistics are filled by summary()
  double first_arrival_s_ = std::numeric_limits<double>::infinity();
  double last_finish_s_ = -std::numeric_limits<double>::infinity();
  double last_arrival_s_ = -std::numeric_limits<double>::infinity();
  uint64_t slo_met_ = 0;
  // Means come from double sums; the stored samples are floats to halve their memory.
  double sum_ttft_s_ = 0.0;
  double sum_tpot_s_ = 0.0;
  double sum_e2e_s_ = 0.0;
  double sum_queueing_s_ = 0.0;
  std::vector<float> ttft_s_;
  std::vector<float> tpot_s_;
  std::vector<float> e2e_s_;
  std::vector<float> queueing_s_;
  QuantileSketch itl_;
  TimeBreakdownCollector breakdown_;
};

}  // namespace servesim
