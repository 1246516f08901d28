#include "serve/loadtest/server_sample.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <string_view>

namespace servesim {
namespace {

// The first of `names` the server exposes, when what it says is a load: a NaN, infinite or
// negative gauge (a broken or starting server) counts as not exposed, and value stays 0.
bool first_of(const std::vector<PromSample>& samples, std::initializer_list<std::string_view> names,
              double& value) {
  for (std::string_view name : names) {
    double sum = 0;
    if (!prom_sum(samples, name, sum)) continue;
    if (!std::isfinite(sum) || sum < 0) return false;
    value = sum;
    return true;
  }
  return false;
}

// Sequences and preemptions as the time series holds them, up to INT_MAX.
int count_of(double value) {
  return static_cast<int>(std::min(std::round(value), double{std::numeric_limits<int>::max()}));
}

}  // namespace

bool server_sample(const std::vector<PromSample>& samples, ServerSample& out) {
  out = {};
  if (!first_of(samples,
                {"vllm:num_requests_running", "sglang:num_running_reqs", "tgi_batch_current_size"},
                out.running)) {
    return false;
  }
  first_of(samples, {"vllm:num_requests_waiting", "sglang:num_queue_reqs", "tgi_queue_size"},
           out.waiting);
  first_of(samples, {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage"},
           out.kv_usage);
  first_of(samples, {"vllm:num_preemptions_total", "vllm:num_preemptions"}, out.preemptions);
  return true;
}

TimeSample to_time_sample(const ServerSample& sample, double time_s) {
  TimeSample s;
  s.time_s = time_s;
  s.running = count_of(sample.running);
  s.waiting = count_of(sample.waiting);
  s.kv_usage = sample.kv_usage;
  s.preemptions_total = count_of(sample.preemptions);
  return s;
}

}  // namespace servesim
