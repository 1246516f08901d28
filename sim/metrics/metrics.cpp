#include "sim/metrics/metrics.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "models/config_error.h"
#include "sim/core/csv_line.h"
#include "sim/metrics/latency_summary.h"

namespace servesim {

namespace {

void require_non_negative(double value, const char* field) {
  if (!(value >= 0.0)) {
    throw ConfigError(std::string("metrics.") + field + ": must be >= 0, got " +
                      format_number(value));
  }
}

}  // namespace

MetricsCollector::MetricsCollector(const MetricsOptions& options) : options_(options) {
  require_non_negative(options.warmup_s, "warmup_s");
  require_non_negative(options.price_per_gpu_hour, "price_per_gpu_hour");
  if (options.num_gpus < 1) {
    throw ConfigError("metrics.num_gpus: must be >= 1, got " + std::to_string(options.num_gpus));
  }
  if (options.slo.ttft_s) require_non_negative(*options.slo.ttft_s, "slo.ttft_s");
  if (options.slo.tpot_s) require_non_negative(*options.slo.tpot_s, "slo.tpot_s");
  if (options.slo.e2e_s) require_non_negative(*options.slo.e2e_s, "slo.e2e_s");
}

void MetricsCollector::add(const RequestRecord& r) {
  ++records_seen_;
  if (in_warmup(r.id, r.arrival_s)) {
    ++counts_.excluded_warmup;
    return;
  }
  ++counts_.requests;
  first_arrival_s_ = std::min(first_arrival_s_, r.arrival_s);
  last_arrival_s_ = std::max(last_arrival_s_, r.arrival_s);
  breakdown_.add(r);
  if (r.attempts > 1) {
    counts_.retries += static_cast<uint64_t>(r.attempts - 1);
    ++counts_.retried_requests;
    if (r.status == RequestOutcome::kOk) ++counts_.retried_succeeded;
  }
  if (r.status == RequestOutcome::kRejected) {
    ++counts_.rejected;
    return;
  }
  if (r.status == RequestOutcome::kTimedOut) {
    ++counts_.timed_out;
    if (std::isfinite(r.finish_s)) last_finish_s_ = std::max(last_finish_s_, r.finish_s);
    return;
  }
  ++counts_.completed;
  counts_.input_tokens += static_cast<uint64_t>(r.prompt_tokens);
  counts_.output_tokens += static_cast<uint64_t>(r.output_tokens);
  counts_.cached_prompt_tokens += static_cast<uint64_t>(r.cached_prompt_tokens);
  counts_.preemptions += static_cast<uint64_t>(r.preemptions);
  last_finish_s_ = std::max(last_finish_s_, r.finish_s);

  const double ttft = r.ttft_s();
  const double tpot = r.tpot_s();
  const double e2e = r.e2e_s();
  const double queueing = r.queueing_s();
  ttft_s_.push_back(static_cast<float>(ttft));
  e2e_s_.push_back(static_cast<float>(e2e));
  queueing_s_.push_back(static_cast<float>(queueing));
  sum_ttft_s_ += ttft;
  sum_e2e_s_ += e2e;
  sum_queueing_s_ += queueing;
  if (!std::isnan(tpot)) {
    tpot_s_.push_back(static_cast<float>(tpot));
    sum_tpot_s_ += tpot;
  }
  const SloSpec& slo = options_.slo;
  // A one-token answer has no TPOT and so cannot violate a TPOT limit.
  const bool met = (!slo.ttft_s || ttft <= *slo.ttft_s) &&
                   (!slo.tpot_s || std::isnan(tpot) || tpot <= *slo.tpot_s) &&
                   (!slo.e2e_s || e2e <= *slo.e2e_s);
  if (met) ++slo_met_;
}

void MetricsCollector::add_itl(double gap_s, uint64_t request_id, double request_arrival_s) {
  if (in_warmup(request_id, request_arrival_s)) return;
  itl_.add(gap_s);
}

MetricsSummary MetricsCollector::summary() const {
  MetricsSummary s = counts_;
  s.ttft = latency_stats_of(ttft_s_, sum_ttft_s_);
  s.tpot = latency_stats_of(tpot_s_, sum_tpot_s_);
  s.e2e = latency_stats_of(e2e_s_, sum_e2e_s_);
  s.queueing = latency_stats_of(queueing_s_, sum_queueing_s_);
  s.time = breakdown_.summary();
  s.itl.count = itl_.count();
  if (itl_.count() > 0) {
    s.itl.mean_s = itl_.mean();
    s.itl.p50_s = itl_.quantile(50);
    s.itl.p90_s = itl_.quantile(90);
    s.itl.p95_s = itl_.quantile(95);
    s.itl.p99_s = itl_.quantile(99);
    s.itl.max_s = itl_.max();
  }
  if (s.requests > 0) {
    s.error_rate = static_cast<double>(s.rejected + s.timed_out) / s.requests;
  }
  if (s.input_tokens > 0) {
    s.prefix_cache_hit_rate = static_cast<double>(s.cached_prompt_tokens) / s.input_tokens;
  }
  const bool has_slo = options_.slo.ttft_s || options_.slo.tpot_s || options_.slo.e2e_s;
  if (has_slo && s.requests > 0) {
    s.slo_attainment = static_cast<double>(slo_met_) / s.requests;
  }
  const double start_s = options_.warmup_s > 0.0 ? options_.warmup_s : first_arrival_s_;
  if (s.requests >= 2 && last_arrival_s_ > start_s) {
    s.arrival_rate = static_cast<double>(s.requests - 1) / (last_arrival_s_ - start_s);
  }
  if (s.completed == 0 || !(last_finish_s_ > start_s)) return s;

  s.duration_s = last_finish_s_ - start_s;
  const double gpus = options_.num_gpus;
  const double total_tokens = static_cast<double>(s.input_tokens + s.output_tokens);
  s.request_throughput = s.completed / s.duration_s;
  s.input_throughput = s.input_tokens / s.duration_s;
  s.output_throughput = s.output_tokens / s.duration_s;
  s.total_token_throughput = total_tokens / s.duration_s;
  s.output_throughput_per_gpu = s.output_throughput / gpus;
  s.total_token_throughput_per_gpu = s.total_token_throughput / gpus;
  if (has_slo) s.goodput = slo_met_ / s.duration_s;
  if (options_.price_per_gpu_hour > 0.0) {
    const double dollars = options_.price_per_gpu_hour * gpus * s.duration_s / 3600.0;
    if (s.output_tokens > 0) s.cost_per_million_output_tokens = dollars / s.output_tokens * 1e6;
    s.cost_per_million_tokens = dollars / total_tokens * 1e6;
  }
  return s;
}

}  // namespace servesim
