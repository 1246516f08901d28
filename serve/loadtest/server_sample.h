// server_sample(): the server's own view of its load — sequences running and waiting, KV-cache
// use, preemptions — read from one /metrics scrape, so a load test's timeseries.csv holds the
// same columns as the simulator's. Known names, first match wins:
//   running      vllm:num_requests_running, sglang:num_running_reqs, tgi_batch_current_size
//   waiting      vllm:num_requests_waiting, sglang:num_queue_reqs, tgi_queue_size
//   kv usage     vllm:kv_cache_usage_perc (vLLM V1), vllm:gpu_cache_usage_perc (V0),
//                sglang:token_usage — fractions in 0..1 despite the "perc"
//   preemptions  vllm:num_preemptions_total, vllm:num_preemptions (counters)
// Samples with several label sets (engines, models) are summed. A gauge whose samples sum to
// NaN, an infinity or a negative number counts as not exposed (the sample records no load
// rather than nonsense), and to_time_sample caps counts at INT_MAX. Stateless; thread-safe.
#pragma once

#include <vector>

#include "serve/loadtest/prometheus_text.h"
#include "sim/core/observer.h"

namespace servesim {

struct ServerSample {
  double running = 0;      // sequences
  double waiting = 0;      // sequences
  double kv_usage = 0;     // fraction 0..1; 0 when not exposed
  double preemptions = 0;  // since the server started; 0 when not exposed
};

// False when the scrape has no known "running" gauge (the sample then says nothing).
bool server_sample(const std::vector<PromSample>& samples, ServerSample& out);

TimeSample to_time_sample(const ServerSample& sample, double time_s);

}  // namespace servesim
