// ServeMetrics: what GET /metrics exposes, in the Prometheus text exposition format (0.0.4)
// under vLLM 0.10's metric names and labels (vllm/v1/metrics/loggers.py: model_name and
// engine="0" on every series), so dashboards built for vLLM read servesim's server unchanged:
// gauges vllm:num_requests_running / _waiting and vllm:kv_cache_usage_perc; counters
// vllm:prompt_tokens_total, vllm:generation_tokens_total, vllm:request_success_total (by
// finished_reason), vllm:num_preemptions_total, vllm:prefix_cache_queries_total / _hits_total;
// histograms vllm:time_to_first_token_seconds, vllm:time_per_output_token_seconds and
// vllm:inter_token_latency_seconds (each gap between two tokens of a request),
// vllm:request_time_per_output_token_seconds (per request), vllm:e2e_request_latency_seconds,
// vllm:request_queue_time_seconds, vllm:request_prefill_time_seconds,
// vllm:request_decode_time_seconds, vllm:request_prompt_tokens,
// vllm:request_generation_tokens, vllm:iteration_tokens_total — with vLLM's buckets. As
// Python's prometheus_client writes them, a counter's # TYPE line names it without "_total".
//
// Thread-safe: the engine thread records, HTTP threads render; one mutex.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "engine/sched/request.h"
#include "engine/sched/scheduler_output.h"

namespace servesim {

// A Prometheus histogram: cumulative counts at each upper bound, plus sum and count.
class PromHistogram {
 public:
  explicit PromHistogram(std::vector<double> upper_bounds);
  void observe(double value);
  // `name`_bucket{labels,le=...}, `name`_sum, `name`_count lines.
  void render(std::string& out, const std::string& name, const std::string& labels) const;
  uint64_t count() const { return count_; }

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative; one more for +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

// One finished request, as the metrics need it.
struct FinishedRequestTimes {
  FinishReason reason = FinishReason::kStop;
  double e2e_s = 0;      // arrival to the last token (or the abort)
  double queue_s = 0;    // arrival to the first step it was scheduled in (0 if never)
  double prefill_s = 0;  // first scheduled to the first token
  double decode_s = 0;   // first token to the last
  int prompt_tokens = 0;
  int generation_tokens = 0;
};

class ServeMetrics {
 public:
  ServeMetrics(std::string model_name, int max_model_len);

  // Engine thread.
  void observe_first_token(double ttft_s, int prompt_tokens);
  void observe_token_gap(double gap_s);
  void observe_finished(const FinishedRequestTimes& f);
  void observe_step(int tokens_computed, int tokens_generated, const SchedulerStats& stats);

  // Any thread: the exposition text.
  std::string render() const;

 private:
  std::string labels_;  // model_name="...",engine="0"
  mutable std::mutex mu_;
  SchedulerStats stats_;
  double prompt_tokens_ = 0;
  double generation_tokens_ = 0;
  double success_[3] = {0, 0, 0};  // stop, length, abort
  PromHistogram ttft_;
  PromHistogram token_gap_;
  PromHistogram request_tpot_;
  PromHistogram e2e_;
  PromHistogram queue_;
  PromHistogram prefill_;
  PromHistogram decode_;
  PromHistogram prompt_len_;
  PromHistogram generation_len_;
  PromHistogram iteration_tokens_;
};

}  // namespace servesim
